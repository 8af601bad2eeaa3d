#!/usr/bin/perl
# Gradient buckets (minigpt --bucket-mb): the bucketed all-reduce passes
# --verify, trains to the same losses as one all-reduce per tensor, is
# refused where it means nothing, and reports the data axis's time; the
# run script's figure data and sentences, where `make` has written them,
# and its sentences chosen by the data, replayed on made-up runs.
#
# Structure, never speed: no timing is compared with a threshold.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
# Two blocks of width 128: a gradient of about 1.6 MiB, so that 1 MiB
# makes two buckets and 64 MiB one.
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @model = (qw(--layers 2 --hidden 128 --heads 4 --seq 16 --vocab 24
                --batch 8 --dp 2), '--machine', "$root/build/machine.json");

# ------------------------------------------------------------ verify ----
for my $case (['1'], ['1', '--micro-batches', 2], ['64'], ['0']) {
    my ($mb, @flags) = @$case;
    my $name = join ' ', 'verify, --bucket-mb', $mb, @flags;
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, @model, '--verify',
                                           '--bucket-mb', $mb, @flags));
    is($status, 0, "$name: exit 0") or diag $err;
    verify_ok($name, $out, grad => 1);
}

# ------------------------------------------------- the same losses ----
# On two ranks every element of the sum is a + b however the gradient is
# grouped, so the losses should agree exactly; the tolerance, 1e-6 of the
# loss, leaves room for an MPI that reduces in another order.
my $dir = tempdir(CLEANUP => 1);
my %loss;
my %report;
for my $how (['tensor', '--bucket-mb', 0], ['one-mib', '--bucket-mb', 1],
             ['one-bucket', '--bucket-mb', 64], ['blocking', '--no-overlap'],
             ['compute', '--no-allreduce']) {
    my ($name, @flags) = @$how;
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, @model, @flags,
        qw(--steps 12 --eval-every 1000 --quiet --json --log),
        "$dir/$name.csv"));
    is($status, 0, "$name: two ranks train") or diag $err;
    $report{$name} = decode_json($out);
    open(my $fh, '<', "$dir/$name.csv") or die "$dir/$name.csv: $!";
    my @lines = <$fh>;
    my @header = split /,/, shift(@lines) =~ s/\s+$//r;
    my ($column) = grep { $header[$_] eq 'train_loss' } 0 .. $#header;
    die "no train_loss column in $dir/$name.csv" unless defined $column;
    $loss{$name} = [map { (split /,/)[$column] } @lines];
}
is(scalar @{ $loss{tensor} }, 12, 'the log holds a loss per step');
for my $name (qw(one-mib one-bucket blocking)) {
    my @want = @{ $loss{tensor} };
    my @far = grep { abs($loss{$name}[$_] - $want[$_]) > 1e-6 * abs $want[$_] }
              0 .. $#want;
    is("@far", '', "$name: every step's loss as with one all-reduce per "
                   . 'tensor, to 1e-6') or diag "@{ $loss{$name} }";
}
is($report{'one-mib'}{buckets}, 2,
   '1 MiB cuts this gradient into two buckets');
is($report{'one-bucket'}{buckets}, 1, '64 MiB holds it in one');
is($report{tensor}{buckets}, 0, '--bucket-mb 0: no buckets');
is($report{'one-mib'}{allreduce}, 'mpi, overlapped, in buckets',
   'the report names the bucketed all-reduce');
is($report{tensor}{allreduce}, 'mpi, overlapped',
   '--bucket-mb 0 keeps the overlapped all-reduce');
for my $name (sort keys %report) {
    is($report{$name}{weights_identical}, 1, "$name: identical weights")
        unless $name eq 'compute';          # no all-reduce: they drift
    my $dp = $report{$name}{dp_exposed_s};
    ok(defined $dp && $dp >= 0, "$name: the data axis's time is reported");
}
cmp_ok($report{blocking}{dp_exposed_s}, '>', 0,
       'the blocking all-reduce puts time on the data axis');

# ---------------------------------------------------------- refusals ----
for my $case (['--zero 1', qr/--zero 1/, '--zero', 1],
              ['--no-overlap', qr/overlapped MPI/, '--no-overlap'],
              ['--allreduce ring', qr/overlapped MPI/, '--allreduce', 'ring'],
              ['--no-allreduce', qr/overlapped MPI/, '--no-allreduce']) {
    my ($name, $must, @flags) = @$case;
    refused("--bucket-mb with $name", $must,
            mpiexec(2, $minigpt, @model, '--bucket-mb', 1, @flags));
}
refused('--bucket-mb on one rank', qr/--dp 2/, $minigpt,
        qw(--layers 2 --hidden 128 --heads 4 --bucket-mb 1));
refused('--bucket-mb 1.5', qr/whole number/,
        mpiexec(2, $minigpt, @model, '--bucket-mb', '1.5'));

# ---------------------------------------------- the run's figure data ----
my $data = "$root/build/data";
my $numbers = "$root/build/numbers/11-buckets.tex";
SKIP: {
    skip 'the section\'s runs have not been made (run make)', 5
        unless -s $numbers && -s "$data/11-buckets.csv";
    open(my $fh, '<', "$data/11-buckets.csv") or die;
    chomp(my $header = <$fh>);
    my @names = split /,/, $header;
    my @rows = map { chomp; my %r; @r{@names} = split /,/; \%r } <$fh>;
    is(join(' ', map { $_->{mb} } @rows), '0 1 2 4 8 64',
       'the figure has a row per bucket size');
    is(join(' ', map { $_->{buckets} } @rows[0, -1]), '0 1',
       '... from none (per tensor) to one bucket');
    my @counts = map { $_->{buckets} } @rows[1 .. $#rows];
    ok(!grep({ $counts[$_] > $counts[$_ - 1] } 1 .. $#counts),
       '... fewer buckets as they grow');
    ok(!grep({ !($_->{step_ms} > 0 && $_->{dp_ms} >= 0
                 && $_->{step_lo} <= $_->{step_ms}
                 && $_->{step_ms} <= $_->{step_hi}) } @rows),
       'every step positive, every median within its range');
    my $macros = read_macros($numbers);
    my $text = slurp("$root/chapters/11c-buckets.nw");
    my %used;
    $used{$1} = 1 while $text =~ /\\(Bucket[A-Za-z]+)/g;
    is(join(' ', grep { !exists $macros->{$_} } sort keys %used), '',
       'every \\Bucket macro the section uses is written by the run');
}

# ------------------------------------------- the sentences are chosen ----
# Replay the run script on made-up runs: a stand-in minigpt writes each
# run's report from a table of step seconds (the data axis's a tenth of
# them), and mpiexec runs it once. The three repeats differ by 0, 1 and
# 2 ms: the noise.
my $tmp = tempdir(CLEANUP => 1);
my %buckets = (0 => 0, 1 => 13, 2 => 7, 4 => 4, 8 => 2, 64 => 1,
               blocking => 0, compute => 0);
my $stand_in = <<'END';
#!/bin/sh
verify=0
while [ $# -gt 0 ]; do
    case "$1" in --output) out=$2; shift ;; --verify) verify=1 ;; esac
    shift
done
if [ $verify = 1 ]; then echo verify: OK > "$out"; exit 0; fi
run=$(basename "$out" .json | sed 's/^11-buckets-//')
k=${run##*-} config=${run%-*}
awk -v config="$config" -v k="$k" '$1 == config {
    printf "{\n  \"params\": 3192320,\n"
    printf "  \"gradient_bytes_held\": 12769280,\n"
    printf "  \"step_seconds_median\": %.6f,\n", $2 + (k - 1) * 0.001
    printf "  \"dp_exposed_s\": %.6f,\n", $2 / 10
    printf "  \"buckets\": %d\n}\n", $3
}' "$(dirname "$0")/../../values" > "$out"
END
sub write_executable {    # FleetTest's write_file, then the mode
    my ($path, $text, $mode) = @_;
    write_file($path, $text);
    chmod $mode, $path if $mode;
}
sub sentences {
    my ($name, %step) = @_;
    my $dir = "$tmp/$name" =~ s/ /-/gr;
    mkdir $_ for $dir, "$dir/build", "$dir/build/bin", "$dir/build/data",
                 "$dir/build/numbers", "$dir/build/transcripts", "$dir/path";
    write_file("$dir/values", join '', map { "$_ $step{$_} $buckets{$_}\n" }
                                       sort keys %step);
    write_file("$dir/build/machine.json",
               qq({\n  "cores": 2,\n  "memcpy_bytes_per_second": 1e10\n}\n));
    write_executable("$dir/build/bin/minigpt", $stand_in, 0755);
    mpiexec_stand_in("$dir/path/mpiexec");
    local $ENV{PATH} = "$dir/path:$ENV{PATH}";
    chdir $root or die;
    my ($status, $out, $err) = run('sh', 'code/runs/11-buckets.sh',
                                   "$dir/build");
    is($status, 0, "$name: the run script succeeds on made-up runs")
        or diag $err;
    return read_macros("$dir/build/numbers/11-buckets.tex");
}
# Each case: a name, the made-up step seconds, and what the sentences
# must say, macro by macro.
my %flat = map { $_ => 0.1 } keys %buckets;
for my $case (
    ['flat', \%flat,
     BucketVerdictStep => qr/does not show in the step time/,
     BucketVerdictEnds => qr/within the spread of each other/,
     BucketVerdictHidden => qr/cannot say how much/],
    ['one wins', { 0 => 0.15, 1 => 0.14, 2 => 0.13, 4 => 0.12, 8 => 0.11,
                   64 => 0.10, blocking => 0.10, compute => 0.05 },
     BucketVerdictStep =>
         qr/fastest step, 101~ms, came with one bucket.*slowest, 151~ms,/,
     BucketVerdictEnds => qr/fewer and\s+larger all-reduces won/,
     BucketVerdictHidden => qr/no bucket size hid/],
    ['middle wins', { 0 => 0.15, 1 => 0.12, 2 => 0.10, 4 => 0.11,
                      8 => 0.13, 64 => 0.15, blocking => 0.16,
                      compute => 0.09 },
     BucketVerdictEnds =>
         qr/between the ends won: buckets of 2~MiB \(7 of them\)/,
     BucketVerdictHidden => qr/hid 60~ms of it, 86/],
    ['early wins', { 0 => 0.10, 1 => 0.11, 2 => 0.12, 4 => 0.13,
                     8 => 0.14, 64 => 0.15, blocking => 0.09,
                     compute => 0.05 },
     BucketVerdictEnds => qr/starting early\s+won/,
     BucketVerdictHidden => qr/cost more than it hid/]) {
    my ($name, $step, @says) = @$case;
    my $macros = sentences($name, %$step);
    while (my ($macro, $pattern) = splice @says, 0, 2) {
        like($macros->{$macro}, $pattern, "$name: \\$macro says $pattern");
    }
}

done_testing();
