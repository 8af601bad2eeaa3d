#!/usr/bin/perl
# Chapter 10, "What the bubble costs here": the runs' figures, macros and
# sentences, after `make`.
#
# Structure, never speed: every figure was drawn; every \Pipe macro the
# chapter uses is defined; the Gantt charts' CSV hold one step of the
# schedule's shape (P x the operations of a stage, each operation of each
# micro-batch once per stage), measured and simulated alike; every measured
# bubble lies in (0, 1) and falls from the fewest micro-batches to 16; and
# the run script's sentence checks hold: replayed from the recorded runs it
# writes the same macros, and it stops, saying why, when a recorded run
# contradicts the text (a bubble that rises with M, a stage that held more
# than its schedule keeps).
#
# Run after `make`:  prove -v tests/10-figures.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use Test::More;

my $root = root();
my $data = "$root/build/data";
my $numbers = "$root/build/numbers/10-measured.tex";
plan skip_all => 'the chapter\'s runs have not been made (run make)'
    unless -s $numbers && -s "$data/10-bubble.csv";

# ---------------------------------------------------- figures and macros --
for my $figure (qw(10-bubble 10-memory 10-gantt-gpipe 10-gantt-1f1b
                   10-gantt-interleaved 10-gantt-zb-h1)) {
    ok(-s "$root/build/figures/$figure.tex", "figure $figure was drawn");
}
my $macros = read_macros($numbers);
my %defined = %$macros;
for my $file (grep { $_ ne $numbers } glob("$root/build/numbers/*.tex")) {
    my $other = read_macros($file);
    my @twice = grep { exists $macros->{$_} } sort keys %$other;
    is("@twice", '', "no macro of 10-measured.tex is also defined in $file");
    %defined = (%defined, %$other);
}
my %used;
for my $chapter (glob("$root/chapters/10*.nw")) {
    my $text = slurp($chapter);
    $used{$1} = 1 while $text =~ /\\(Pipe[A-Za-z]+)/g;
}
ok(scalar keys %used > 20, 'the chapter uses the runs\' macros');
for my $name (sort keys %used) {
    ok(exists $defined{$name}, "\\$name is defined by a run");
}
for my $name (grep { /^PipeVerdict/ } sort keys %$macros) {
    like($macros->{$name}, qr/\S/, "the sentence \\$name was written");
}

# What the text says was run is what the runs' reports say they ran.
{
    my $run = eval { JSON::PP::decode_json(slurp("$data/10-bubble-1f1b-4.json") // '') } // {};
    is($macros->{PipeTimedStages}, $run->{pp}, '\\PipeTimedStages: the stages of the timed runs');
    is($macros->{PipeLayers}, $run->{layers}, '\\PipeLayers: their layers');
    is($macros->{PipeSequences}, $run->{micro_batch},
       '\\PipeSequences: the sequences of a micro-batch');
}

# W's share of the backward pass, measured, and what the text says of it:
# below half (B also runs what has no weights), about half, or more.
{
    my $zb = eval { JSON::PP::decode_json(slurp("$data/10-bubble-zb-h1-4.json") // '') } // {};
    my $share = $zb->{weight_share};
    ok(defined $share && $share > 0 && $share < 1,
       'zb-h1 with 4 micro-batches measured W\'s share of the backward pass ('
       . ($share // 'none') . ')');
    my $want = !defined $share ? qr/^$/ : $share < 0.45 ? qr/^, not half of it: /
             : $share <= 0.55 ? qr/^, about half of it: / : qr/^, more than half of it/;
    like($macros->{PipeWeightShareVerdict} // '', $want,
         '\\PipeWeightShareVerdict says what the measured share shows');
}

# ------------------------------------------------------ the schedules' shape --
my %runs;                 # schedule => { m => [measured, replayed, theory] }
for my $row (grep { /\S/ && !/^schedule,/ } split /\n/,
             slurp("$data/10-bubble.csv")) {
    my ($schedule, $m, @bubble) = split /,/, $row;
    $runs{$schedule}{$m} = \@bubble;
}
is_deeply([sort keys %runs], [qw(1f1b gpipe interleaved zb-h1)],
          'the bubble was measured for the four schedules');

# Rows of one step: [stage, kind, micro_batch, chunk].
sub rows_of {
    my ($file) = @_;
    my @lines = split /\n/, slurp($file) // '';
    my $header = shift @lines // '';
    is($header, 'step,stage,kind,micro_batch,chunk,start_s,end_s',
       "$file: the trace's columns");
    return map { [split /,/] } @lines;
}

my ($P, $M, $V) = (4, 8, 2);
for my $schedule (sort keys %runs) {
    my $v = $schedule eq 'interleaved' ? $V : 1;
    my @kinds = $schedule eq 'zb-h1' ? qw(B F W) : qw(B F);
    my $per_stage = @kinds * $M * $v;
    for my $file ("$data/10-gantt-$schedule.csv",
                  "$data/10-gantt-$schedule-sim.csv") {
        my @rows = rows_of($file);
        my %steps = map { $_->[0] => 1 } @rows;
        is(scalar keys %steps, 1, "$file: one step");
        is(scalar @rows, $P * $per_stage,
           "$file: P x $per_stage operations");
        my %seen;
        $seen{"$_->[1] $_->[2] $_->[3] $_->[4]"}++ for @rows;
        my @want;
        for my $stage (0 .. $P - 1) {
            for my $kind (@kinds) {
                for my $mb (0 .. $M - 1) {
                    push @want, "$stage $kind $mb $_" for 0 .. $v - 1;
                }
            }
        }
        is_deeply([sort keys %seen], [sort @want],
                  "$file: every stage runs each operation of each "
                  . 'micro-batch');
        ok(!grep({ $_ != 1 } values %seen), "$file: ... once");
        ok(!grep({ $_->[6] < $_->[5] || $_->[5] < 0 } @rows),
           "$file: no operation ends before it starts");
    }
    # The whole trace of the four-stage run: P x the stage's operations
    # in every step.
    my %count;
    $count{$_->[0]}++ for rows_of("$data/10-drawn-$schedule.csv");
    ok(keys %count >= 2 && !grep({ $_ != $P * $per_stage } values %count),
       "10-drawn-$schedule.csv: every step has P x $per_stage rows");
}

# ------------------------------------------------------------ the bubble --
for my $schedule (sort keys %runs) {
    my @m = sort { $a <=> $b } keys %{ $runs{$schedule} };
    for my $m (@m) {
        my ($measured, $replayed, $theory) = @{ $runs{$schedule}{$m} };
        ok($measured > 0 && $measured < 1,
           "$schedule, M = $m: the measured bubble $measured is in (0, 1)");
        ok($replayed > 0 && $replayed < 1,
           "$schedule, M = $m: the replayed bubble is in (0, 1)");
    }
    is($m[-1], 16, "$schedule: measured up to M = 16");
    cmp_ok($runs{$schedule}{16}[0], '<', $runs{$schedule}{$m[0]}[0],
           "$schedule: the measured bubble falls from M = $m[0] to 16");
}
# The formula's curves are fleet's closed forms: where a run was measured,
# the curve holds the trainer's bubble_theory.
my %curve;
my @formula = split /\n/, slurp("$data/10-bubble-formula.csv");
shift @formula;
for (@formula) {
    my ($m, $gpipe, $interleaved, $zb) = split /,/, $_, -1;
    $curve{gpipe}{$m} = $curve{'1f1b'}{$m} = $gpipe;
    $curve{interleaved}{$m} = $interleaved;
    $curve{'zb-h1'}{$m} = $zb if $zb ne '';
}
for my $schedule (qw(gpipe 1f1b interleaved)) {
    for my $m (sort { $a <=> $b } keys %{ $runs{$schedule} }) {
        close_to($curve{$schedule}{$m}, $runs{$schedule}{$m}[2], 1e-9,
                 "$schedule, M = $m: the curve is the trainer's formula");
    }
}

# ------------------------------------------- the sentences are checked --
# Replay the run script on the recorded runs: a stand-in minigpt copies each
# run's report and trace where the script asks for them, and mpiexec runs
# it once.
my $tmp = tempdir(CLEANUP => 1);
sub replay {
    my ($name, $doctor) = @_;
    my $dir = "$tmp/$name";
    mkdir $_ for $dir, "$dir/build", "$dir/build/bin", "$dir/build/data",
                 "$dir/build/numbers", "$dir/recorded", "$dir/path";
    copy($_, "$dir/recorded/") for glob("$data/10-bubble-*.*"),
                                  glob("$data/10-drawn-*.*");
    $doctor->("$dir/recorded") if $doctor;
    copy("$root/build/machine.json", "$dir/build/machine.json");
    symlink("$root/build/bin/fleet", "$dir/build/bin/fleet");
    open(my $fh, '>', "$dir/build/bin/minigpt") or die;
    print $fh <<"EOF";
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in --output) out=\$2; shift ;; --trace) trace=\$2; shift ;; esac
    shift
done
name=\$(basename "\$out" .json)
cp "$dir/recorded/\$name.json" "\$out" && cp "$dir/recorded/\$name.csv" "\$trace"
EOF
    close $fh;
    mpiexec_stand_in("$dir/path/mpiexec");
    chmod 0755, "$dir/build/bin/minigpt";
    local $ENV{PATH} = "$dir/path:$ENV{PATH}";
    chdir $root or die;
    my ($status, $out, $err) = run('sh', 'code/runs/10-pipeline.sh',
                                   "$dir/build");
    return ($status, $err, "$dir/build/numbers/10-measured.tex");
}
sub edit {
    my ($file, $from, $to) = @_;
    my $text = slurp($file);
    $text =~ s/$from/$to/ or die "$file: no $from";
    open(my $fh, '>', $file) or die;
    print $fh $text;
    close $fh;
}

{
    my ($status, $err, $tex) = replay('same');
    is($status, 0, 'the run script, replayed on the recorded runs, succeeds')
        or diag $err;
    is(slurp($tex), slurp($numbers), '... and writes the same macros');
}
{
    my ($status, $err) = replay('rises', sub {
        edit("$_[0]/10-bubble-1f1b-16.json",
             qr/"bubble_measured": [^,]*,/, '"bubble_measured": 0.99,');
    });
    isnt($status, 0, 'a bubble that rises from M = 1 to 16 stops the build');
    like($err, qr/1f1b did not fall.*the text would be wrong/,
         '... saying why');
}
{
    my ($status, $err) = replay('held', sub {
        edit("$_[0]/10-drawn-1f1b.json",
             qr/"peak_inflight_per_stage": "[^"]*"/,
             '"peak_inflight_per_stage": "4 3 2 2"');
    });
    isnt($status, 0, 'a stage that held more than 1F1B keeps stops the build');
    like($err, qr/1F1B held 2 micro-batches on stage 3, not 1/,
         '... saying why');
}
done_testing();
