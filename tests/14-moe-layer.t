#!/usr/bin/perl
# build/bin/moe, the expert-parallel layer: --verify agrees with the
# one-rank reference on 1, 2 and 4 ranks, with and without drops, forward
# and backward; --gradcheck passes on the reference's backward pass; the
# report's counts keep their invariants (the slots per expert sum to kNR,
# each expert keeps min(slots, capacity), the rest are the drops) and agree
# with a count made here; the bytes obey their arithmetic; a hand-made
# case drops all but one token; bad layers are refused once, exit 2, on
# every rank, without a hang.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use POSIX qw(ceil);
use List::Util qw(sum0);
use Test::More;

my $moe = root() . '/build/bin/moe';
ok(-x $moe, 'build/bin/moe exists') or BAIL_OUT('run make first');
local $FleetTest::MPI_SECONDS = 60;
my @small = qw(--experts 4 --tokens 64 --hidden 16 --repeats 1);

# The verdict: printed once, OK, every difference within the tolerance.
sub verified {
    my ($name, $out) = @_;
    my ($diff) = $out =~ /^verify: max \|doutput\| = (\S+)$/m;
    my ($atol, $rtol, $verdict) =
        $out =~ /^verify: tolerance (\S+) \+ (\S+)·\|reference\|: (\w+)$/m;
    is($verdict, 'OK', "$name: the verdict is OK") or diag $out;
    is(scalar(() = $out =~ /^verify: max/mg), 1, "$name: printed once");
    like($out, qr/^verify: tokens per expert and drops equal: yes$/m,
         "$name: the same routing as the reference");
    ok(defined $diff && $diff <= $atol,
       "$name: max |doutput| = " . ($diff // 'none') . ' within atol');
    return unless $name =~ /--backward/;
    my ($ddx) = $out =~ /^verify: backward, max \|ddx\| = (\S+),/m;
    my ($dgrad) = $out =~ /^verify: backward, .* max \|dgrad\| = (\S+) /m;
    ok(defined $ddx && $ddx <= $atol, "$name: max |ddx| within atol");
    ok(defined $dgrad, "$name: the weights' gradients compared");
}

for my $case ([1], [2], [4], [2, qw(--skew 1 --capacity-factor 0.75)],
              [4, qw(--skew 2 --capacity-factor 0.5 --top-k 3)],
              [1, qw(--backward --skew 1 --capacity-factor 0.75)],
              [2, qw(--backward --skew 1 --capacity-factor 0.75)],
              [4, qw(--backward --capacity-factor 1)]) {
    my ($n, @flags) = @$case;
    my $name = "verify on $n ranks @flags";
    my ($status, $out, $err) = run(mpiexec($n, $moe, @small, @flags,
                                           '--verify'));
    is($status, 0, "$name: exit 0") or diag $err;
    verified($name, $out);
}

# The counts, from the JSON, against a count made here from the routing it
# reports: the capacity is ceil(F k N R / E), each expert keeps at most
# that many of the slots routed to it, and the drops are the rest.
my $dir = tempdir(CLEANUP => 1);
for my $case ([2, 1, 0.75], [4, 2, 1], [4, 0, 1.25], [2, 3, 0.3]) {
    my ($n, $skew, $factor) = @$case;
    my @skew = $skew ? ('--skew', $skew) : ();
    my $name = "$n ranks, skew $skew, factor $factor";
    my $csv = "$dir/tokens-$n-$skew.csv";
    my $r = json_of(mpiexec($n, $moe, @small, @skew, '--capacity-factor',
                            $factor, '--tokens-csv', $csv));
    my ($E, $k, $N) = (4, 2, 64);
    my $slots = $k * $N * $n;
    is($r->{slots}, $slots, "$name: k N R slots");
    is($r->{capacity}, round_up($factor * $slots / $E),
       "$name: capacity is ceil(F k N R / E)");
    my @routed = map { at_path($r, "tokens_per_expert.e$_") } 0 .. $E - 1;
    my $sum = 0;
    $sum += $_ for @routed;
    is($sum, $slots, "$name: the slots per expert sum to k N R");
    my $dropped = 0;
    $dropped += $_ > $r->{capacity} ? $_ - $r->{capacity} : 0 for @routed;
    is($r->{dropped_tokens}, $dropped,
       "$name: the drops are the slots above each expert's capacity");
    close_to($r->{drop_fraction}, $dropped / $slots, 1e-9,
             "$name: drop_fraction") if $dropped;
    my $busiest = (sort { $b <=> $a } @routed)[0];
    close_to($r->{load_imbalance}, $busiest / ($slots / $E), 1e-9,
             "$name: load imbalance is the busiest over the mean");
    my @rows = split /\n/, slurp($csv) // '';
    is(shift @rows, 'expert,rank,routed,kept,dropped,capacity',
       "$name: the tokens CSV's header");
    is_deeply([map { [split /,/] } @rows],
              [map { my $kept = $routed[$_] < $r->{capacity}
                                ? $routed[$_] : $r->{capacity};
                     [$_, int($_ / ($E / $n)), $routed[$_], $kept,
                      $routed[$_] - $kept, $r->{capacity}] } 0 .. $E - 1],
              "$name: the CSV's rows agree with the JSON");
    # The bytes: each row that leaves its rank carries C numbers and an
    # int on the way out and C numbers back.
    my $C = 16;
    close_to($r->{alltoall_bytes_per_token_even},
             2 * $k * $C * 4 * ($n - 1) / $n, 1e-9,
             "$name: the even arithmetic, 2 k C 4 (R - 1) / R") if $n > 1;
    my $rows = $r->{alltoall_bytes_per_token} * $N * $n / (2 * $C * 4);
    close_to($r->{alltoall_bytes_per_rank} * $n, $rows * (8 * $C + 4),
             1e-9, "$name: the bytes sent are the rows' both ways");
    cmp_ok($rows, '<=', $slots - $dropped,
           "$name: no more rows cross than slots are kept");
}

# One rank sends nothing to other ranks.
my $one = json_of(mpiexec(1, $moe, @small));
is($one->{alltoall_bytes_per_rank}, 0, 'one rank: no bytes across');

# A hand-made case: a skew so strong that every token's one choice is
# expert 0, and a capacity of one slot: all tokens but one are dropped.
{
    my ($n, $N, $E) = (2, 8, 4);
    my $factor = $E / ($N * $n);              # ceil(F N R / E) = 1
    my ($status, $out, $err) = run(mpiexec($n, $moe, '--experts', $E,
        '--tokens', $N, '--hidden', 8, '--top-k', 1, '--skew', 100,
        '--capacity-factor', $factor, '--repeats', 1, '--verify', '--json'));
    is($status, 0, 'capacity one: exit 0') or diag $err;
    my $r = JSON::PP::decode_json($out);
    is($r->{capacity}, 1, 'capacity one: one slot per expert');
    is(at_path($r, 'tokens_per_expert.e0'), $N * $n,
       'capacity one: every token chose expert 0');
    is($r->{dropped_tokens}, $N * $n - 1, 'capacity one: all but one dropped');
    is($r->{tokens_unserved}, $N * $n - 1,
       'capacity one: ... and those tokens lost their only expert');
    is($r->{load_imbalance}, $E, 'capacity one: imbalance E');
    is($r->{result}, 'OK', 'capacity one: the reference agrees');
}

# --gradcheck: the reference's backward pass against central differences,
# with drops (skew and a small capacity) and without.
for my $flags ([], [qw(--skew 1 --capacity-factor 0.7)], [qw(--top-k 1)]) {
    my ($status, $out, $err) = run($moe, qw(--gradcheck --experts 4
        --tokens 16 --hidden 8), @$flags);
    is($status, 0, "gradcheck @$flags: exit 0") or diag $err;
    my ($checked, $worst) =
        $out =~ /^gradcheck: (\d+) entries, \d+ skipped .* = (\S+): OK$/m;
    ok(defined $checked && $checked >= 50,
       "gradcheck @$flags: OK on enough entries") or diag $out;
}

# Refusals: one line, exit 2, from every rank, no hang.
refused('experts not divisible by the ranks', qr/--experts 6 .* 4 ranks/,
        mpiexec(4, $moe, qw(--experts 6)));
refused('top-k above the experts', qr/--top-k 5 .* 4 experts/,
        mpiexec(2, $moe, qw(--experts 4 --top-k 5)));
refused('capacity factor 0', '--capacity-factor',
        mpiexec(2, $moe, qw(--capacity-factor 0)));
refused('capacity factor negative', '--capacity-factor',
        mpiexec(2, $moe, qw(--capacity-factor -1)));
refused('counts past MPI int', qr/MPI's counts/,
        mpiexec(2, $moe, qw(--tokens 1048576 --hidden 4096)));
refused('gradcheck on two ranks', '--gradcheck',
        mpiexec(2, $moe, qw(--gradcheck)));
refused('an unknown flag', '--expert',
        mpiexec(2, $moe, qw(--expert 4)));

# After make: the section's numbers are the runs' (each macro from the JSON
# it names), and the figure's data hold every slot and the capacities.
SKIP: {
    my $root = root();
    my $numbers = "$root/build/numbers/14-moe-layer.tex";
    skip 'make has not run the section yet', 13 unless -e $numbers;
    my $m = read_macros($numbers);
    my %run = map { $_ => JSON::PP::decode_json(
                        slurp("$root/build/data/14-moe-layer-$_.json")) }
              qw(balanced-low balanced-high skewed-low skewed-high);
    for my $case (['BalancedDropLow', 'balanced-low'],
                  ['BalancedDropHigh', 'balanced-high'],
                  ['SkewedDropLow', 'skewed-low'],
                  ['SkewedDropHigh', 'skewed-high']) {
        my ($name, $run) = @$case;
        is($m->{"MoeLayer$name"},
           sprintf('%.3g\,\%%', 100 * $run{$run}{drop_fraction}),
           "\\MoeLayer$name is the $run run's drop fraction");
    }
    is($m->{MoeLayerSkewedImbalance},
       sprintf('%.3g', $run{'skewed-high'}{load_imbalance}),
       '\MoeLayerSkewedImbalance is the run\'s');
    my $csv = slurp("$root/build/data/14-experts.csv") // '';
    my @rows = map { [split /,/] } grep { /^\d/ } split /\n/, $csv;
    my ($balanced, $skewed) = (0, 0);
    for (@rows) { $balanced += $_->[1]; $skewed += $_->[2] }
    is($balanced, $run{'balanced-low'}{slots}, 'figure: balanced slots sum');
    is($skewed, $run{'skewed-low'}{slots}, 'figure: skewed slots sum');
    # The section's "three measured facts", as its text states them: the
    # random router is not perfectly even (its busiest expert above the
    # mean, some slots dropped at a factor of 1); the skewed one still drops
    # a tenth or more at the higher factor, far more than the balanced one;
    # and its tokens mostly go to rank 0's experts (the first E/R).
    cmp_ok($run{'balanced-low'}{load_imbalance}, '>', 1,
           'the random router is not perfectly even');
    cmp_ok($run{'balanced-low'}{drop_fraction}, '>', 0,
           '... and drops slots at capacity factor 1');
    cmp_ok($run{'skewed-high'}{drop_fraction}, '>=', 0.1,
           'the skewed router still drops a tenth at the higher factor');
    cmp_ok($run{'skewed-high'}{drop_fraction}, '>',
           $run{'balanced-high'}{drop_fraction},
           '... more than the balanced one');
    my $per_rank = @rows / ($run{'skewed-low'}{ranks} || 2);
    my $first = sum0(map { $_->[2] } @rows[0 .. $per_rank - 1]);
    cmp_ok($first, '>', $skewed / 2,
           "the skewed router's tokens mostly go to rank 0's experts "
           . "($first of $skewed slots)");
    is_deeply([map { "$_->[3] $_->[4]" } @rows],
              [("$run{'balanced-low'}{capacity} "
                . "$run{'balanced-high'}{capacity}") x @rows],
              'figure: the capacity lines are the runs\'');
}

my ($status, $help) = run($moe, '--help');
is($status, 0, '--help: exit 0');
like($help, qr/--capacity-factor/, '--help names --capacity-factor');

done_testing();
