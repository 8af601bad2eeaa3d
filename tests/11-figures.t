#!/usr/bin/perl
# Chapter 11, "The breakdown, measured and predicted": the mesh's runs,
# table, figures and sentences, after `make`.
#
# Structure, never speed: both figures were drawn; the run's CSV has a row
# for every layout the planner predicts, every layout with no more ranks
# than the machine's cores among them, timed; the planner's prediction is
# positive for each, and every part of it at least zero; every measured
# step is positive; every \Mesh macro the chapter uses is defined. And the
# sentences are chosen by the data: the run script, replayed on made-up
# runs, names exactly the layouts that miss by more than 25 %, each with
# the part that differs most.
#
# Run after `make`:  prove -v tests/11-figures.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $data = "$root/build/data";
my $numbers = "$root/build/numbers/11-mesh.tex";
plan skip_all => 'the chapter\'s runs have not been made (run make)'
    unless -s $numbers && -s "$data/11-mesh.csv";

# Rows of a CSV with a header, as hashes.
sub rows_of {
    my ($file) = @_;
    my ($header, @lines) = split /\n/, slurp($file) // '';
    my @names = split /,/, $header // '';
    return map { my @v = split /,/, $_, -1; my %row;
                 @row{@names} = @v; \%row } @lines;
}

# ---------------------------------------------------- figures and macros --
for my $figure (qw(11-predicted 11-breakdown)) {
    ok(-s "$root/build/figures/$figure.tex", "figure $figure was drawn");
}
my $macros = read_macros($numbers);
my %used;
my $text = slurp("$root/chapters/11f-measured.nw");
$used{$1} = 1 while $text =~ /\\(Mesh[A-Za-z]+)/g;
ok(scalar keys %used > 10, 'the section uses the runs\' macros');
ok(exists $macros->{$_}, "\\$_ is defined by the run") for sort keys %used;
like($macros->{MeshVerdictMisses}, qr/\S/,
     'the misses\' sentence was written');

# ------------------------------------------------------------ the table --
my $machine = slurp("$root/build/machine.json");
my ($cores) = $machine =~ /"cores":\s*(\d+)/;
my @rows = rows_of("$data/11-mesh.csv");
my @planned = rows_of("$data/11-mesh-predicted.csv");
is(scalar @rows, scalar @planned,
   'the table has a row for every layout the planner predicts');
is(scalar @rows, 1 + 3 + 6 + 10,
   'the planner predicts every factorisation of 1, 2, 4 and 8 ranks');
my @parts = qw(compute_s exposed_comm_s_tp exposed_comm_s_pp
               exposed_comm_s_dp bubble_s optimizer_s other_s);
for my $row (@rows) {
    my $layout = $row->{layout};
    is($row->{tp} * $row->{pp} * $row->{dp}, $row->{ranks},
       "$layout: t x p x d is its ranks");
    is($row->{timed}, $row->{ranks} <= $cores ? 1 : 0,
       "$layout: timed exactly when its $row->{ranks} ranks fit on "
       . "$cores cores");
    ok($row->{predicted_step_s} > 0, "$layout: the prediction is positive");
    ok(!grep({ !($row->{"predicted_$_"} >= 0) } @parts),
       "$layout: every predicted part is at least zero");
    next unless $row->{timed};
    ok($row->{measured_step_s} > 0 && $row->{measured_step_median_s} > 0,
       "$layout: the measured step is positive");
    my $sum = 0;
    $sum += $row->{"measured_$_"} for @parts;
    close_to($sum, $row->{measured_step_s}, 1e-6,
             "$layout: the measured parts add up to its step");
}
ok((grep { $_->{timed} } @rows) >= 1, 'at least one layout was timed');

# Sections 11.5 and 11.6 print one prediction per layout, not two: the
# planner's macros of 11.5 (three significant figures) are the table's.
my $predicted_macros = read_macros("$root/build/numbers/11-predicted.tex");
my @words = qw(Zero One Two Three Four Five Six Seven Eight);
for my $row (@rows) {
    my $name = sprintf 'PredTp%sPp%sDp%sStepS', @words[@$row{qw(tp pp dp)}];
    next unless exists $predicted_macros->{$name};
    close_to($predicted_macros->{$name}, $row->{predicted_step_s}, 5e-3,
             "$row->{layout}: 11.5 and 11.6 print the same prediction");
}
ok((grep { exists $predicted_macros->{sprintf 'PredTp%sPp%sDp%sStepS',
                                      @words[@$_{qw(tp pp dp)}]} } @rows)
   == @rows, '11.5 prints a prediction for every layout of the table');

# ------------------------------------------- the sentences are checked --
# Replay the run script on made-up runs: a stand-in minigpt reports, for a
# layout, the planner's own prediction with some parts changed, and
# mpiexec runs it once. The machine file is the build's with its cores
# set, so that the same layouts are timed on any machine.
my $tmp = tempdir(CLEANUP => 1);
my %predicted = map { ("$_->{tp}-$_->{pp}-$_->{dp}" => $_) } @planned;
sub replay {
    my ($name, $cores_here, %change) = @_;     # "t-p-d" => { part => s }
    my $dir = "$tmp/$name";
    mkdir $_ for $dir, "$dir/build", "$dir/build/bin", "$dir/build/data",
                 "$dir/build/numbers", "$dir/made-up", "$dir/path";
    (my $file = $machine) =~ s/"cores":\s*\d+/"cores": $cores_here/;
    open(my $fh, '>', "$dir/build/machine.json") or die;
    print $fh $file;
    close $fh;
    for my $layout (keys %predicted) {
        my %part = map { ($_ => $predicted{$layout}{"step_breakdown_$_"}) }
                   @parts;
        %part = (%part, %{ $change{$layout} // {} });
        my $step = 0;
        $step += $part{$_} for @parts;
        # minigpt's JSON: step_ms, and the parts in step_breakdown with
        # the exposed communication an object of its own
        my @axes = map { "      \"$_\": $part{\"exposed_comm_s_$_\"}" }
                   qw(tp pp dp);
        my @top = map { "    \"$_\": $part{$_}" }
                  qw(compute_s bubble_s optimizer_s other_s);
        write_file("$dir/made-up/$layout.json",
                   "{\n  \"step_ms\": " . 1e3 * $step . ",\n"
                   . "  \"step_breakdown\": {\n$top[0],\n"
                   . "    \"exposed_comm_s\": {\n" . join(",\n", @axes)
                   . "\n    },\n" . join(",\n", @top[1 .. 3],
                                         "    \"step_s\": $step")
                   . "\n  }\n}\n");
    }
    symlink("$root/build/bin/fleet", "$dir/build/bin/fleet");
    open($fh, '>', "$dir/build/bin/minigpt") or die;
    print $fh <<"EOF";
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in
    --output) out=\$2; shift ;; --tp) t=\$2; shift ;;
    --pp) p=\$2; shift ;; --dp) d=\$2; shift ;;
    esac
    shift
done
cp "$dir/made-up/\$t-\$p-\$d.json" "\$out"
EOF
    close $fh;
    mpiexec_stand_in("$dir/path/mpiexec");
    chmod 0755, "$dir/build/bin/minigpt";
    local $ENV{PATH} = "$dir/path:$ENV{PATH}";
    chdir $root or die;
    my ($status, $out, $err) = run('sh', 'code/runs/11-mesh.sh',
                                   "$dir/build");
    is($status, 0, "$name: the run script, replayed, succeeds") or diag $err;
    return read_macros("$dir/build/numbers/11-mesh.tex");
}

{
    my $m = replay('exact', 2);
    like($m->{MeshVerdictMisses},
         qr/^Every one of the four timed layouts lies within 25/,
         'runs as predicted: no layout misses');
    like($m->{MeshVerdictOther}, qr/^Other was at most/,
         '... and other is small');
}
{
    my ($tp, $pp, $dp) = @predicted{qw(2-1-1 1-2-1 1-1-2)};
    my $m = replay('misses', 2,
        '2-1-1' => { exposed_comm_s_tp => $tp->{step_breakdown_step_s}
                         + $tp->{step_breakdown_exposed_comm_s_tp} },
        '1-2-1' => { bubble_s => 0,
                     compute_s => 0.5 * $pp->{step_breakdown_compute_s} },
        '1-1-2' => { other_s => 0.1 * $dp->{step_breakdown_step_s} });
    my $said = $m->{MeshVerdictMisses};
    like($said, qr/^Two of the four timed layouts miss their predictions/,
         'two layouts miss: the sentence counts them');
    like($said, qr/\$2 \\times 1 \\times 1\$ took [^(]*\(2 times\)/,
         '... names 2x1x1, twice as slow as predicted');
    like($said, qr/In \$2 \\times 1 \\times 1\$ the part that differs most is the tensor-parallel all-reduces, [^:]*: the planner costs each all-reduce as a ring/,
         '... whose largest difference is the tensor-parallel all-reduces, '
         . 'longer');
    like($said, qr/In \$1 \\times 2 \\times 1\$ the part that differs most is compute, [^:]*: the products ran faster/,
         '... and 1x2x1\'s is compute, shorter');
    unlike($said, qr/1 \\times 1 \\times 2/, '... and not 1x1x2, within 25 %');
    unlike($said, qr/1 \\times 1 \\times 1/, '... nor 1x1x1, as predicted');
    like($m->{MeshVerdictOther}, qr/^Other reached 9\.\d+\\,\\% of a step on \$1 \\times 1 \\times 2\$/,
         'other of a tenth of the predicted step is said to be large');
}
{
    my $m = replay('four-cores', 4);
    like($m->{MeshUntimed}, qr/^The other ten layouts need more ranks/,
         'on four cores the ten layouts of 1, 2 and 4 ranks are timed');
}
done_testing();
