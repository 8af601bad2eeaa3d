#!/usr/bin/perl
# Chapter 13, the arithmetic of failures and checkpoints: fleet checkpoint's
# closed forms against arithmetic done here, independently (the fleet's mean
# time between interruptions from each source, the checkpoint and its
# write, Young's and Daly's intervals, Daly's expected time of an interval,
# the best interval by a search of this file's own); its Monte Carlo
# simulation against the closed form, in standard errors, with fixed seeds
# (so that it cannot flake), and against a wrong closed form (so that the
# comparison can fail); the refusals; and, after `make`, the book's macros
# against fleet's output.
#
# Run after `make build/bin/fleet`:  prove -v tests/13-checkpoint.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
ok(-x $fleet, 'fleet is built') or BAIL_OUT('run make build/bin/fleet');

sub checkpoint { return fleet_json('checkpoint', @_) }

# ------------------------------------------------ the arithmetic, here --
# Daly's model, written out again: E(tau) = M e^(R/M) (e^((tau+d)/M) - 1).
sub interval_wall {
    my ($tau, $d, $R, $M) = @_;
    return $M * exp($R / $M) * (exp(($tau + $d) / $M) - 1);
}
sub fraction { my ($tau, @rest) = @_; return $tau / interval_wall($tau, @rest) }
sub young { my ($d, $M) = @_; return sqrt(2 * $d * $M) }
sub daly {
    my ($d, $M) = @_;
    return $M if $d >= 2 * $M;
    my $x = $d / (2 * $M);
    return sqrt(2 * $d * $M) * (1 + sqrt($x) / 3 + $x / 9) - $d;
}
# The best interval by golden-section search on log(tau) over (M/1e9, M):
# no formula of the planner's, only f itself.
sub best_interval {
    my ($d, $R, $M) = @_;
    my ($lo, $hi) = (log($M) - log(1e9), log($M));
    my $g = (sqrt(5) - 1) / 2;
    my $f = sub { fraction(exp($_[0]), $d, $R, $M) };
    my ($a, $b) = ($hi - $g * ($hi - $lo), $lo + $g * ($hi - $lo));
    my ($fa, $fb) = ($f->($a), $f->($b));
    for (1 .. 200) {
        if ($fa < $fb) { ($lo, $a, $fa) = ($a, $b, $fb);
                         $b = $lo + $g * ($hi - $lo); $fb = $f->($b) }
        else           { ($hi, $b, $fb) = ($b, $a, $fa);
                         $a = $hi - $g * ($hi - $lo); $fa = $f->($a) }
    }
    return exp(($lo + $hi) / 2);
}

# Each case: the flags, and M and delta worked out here from them.
my @cases = (
    ['per GPU', [qw(--gpus 1024 --mtbf-hours 50000 --params 70e9
                    --bytes-per-param 12 --write-gbs 100)],
     50000 * 3600 / 1024, 70e9 * 12 / 100e9],
    ['per node', [qw(--gpus 4096 --gpus-per-node 8 --node-mtbf-hours 3000
                     --params 405e9 --write-seconds 90)],
     3000 * 3600 / (4096 / 8), 90],
    ['observed', [qw(--gpus 2048 --interruptions 30 --window-days 20
                     --params 8e9 --write-gbs 5)],
     20 * 86400 / 30, 8e9 * 16 / 5e9],
    ['published, scaled to the fleet', [qw(--gpus 4096 --params 100e9)],
     16384 * 54 * 86400 / 419 / 4096, 100e9 * 16 / 2000e9],
    ['a long write', [qw(--gpus 16384 --mtbf-hours 20000 --write-seconds 900
                         --restart-minutes 3 --train-days 10)],
     20000 * 3600 / 16384, 900],
);
for my $case (@cases) {
    my ($name, $flags, $M, $d) = @$case;
    my %flag = @$flags;
    my $R = 60 * ($flag{'--restart-minutes'} // 10);
    my $W = 86400 * ($flag{'--train-days'} // 30);
    my $j = checkpoint(@$flags);
    close_to($j->{fleet_mtbi_s}, $M, 1e-12, "$name: M");
    close_to($j->{gpu_mtbf_s}, $M * $j->{gpus}, 1e-12,
             "$name: a GPU's share, n M");
    close_to($j->{checkpoint_bytes}, ($flag{'--params'} // 405e9)
             * ($flag{'--bytes-per-param'} // 16), 1e-12,
             "$name: the checkpoint, parameters x bytes");
    close_to($j->{write_s}, $d, 1e-12, "$name: delta");
    close_to($j->{young_interval_s}, young($d, $M), 1e-12,
             "$name: Young's interval");
    close_to($j->{daly_interval_s}, daly($d, $M), 1e-12,
             "$name: Daly's interval");
    is($j->{interval_from}, 'daly', "$name: the interval is Daly's");
    close_to($j->{interval_s}, $j->{daly_interval_s}, 1e-15,
             "$name: ... and used");
    my $tau = $j->{interval_s};
    close_to($j->{interval_wall_s}, interval_wall($tau, $d, $R, $M), 1e-12,
             "$name: E(tau)");
    close_to($j->{effective_fraction}, fraction($tau, $d, $R, $M), 1e-12,
             "$name: f = tau / E");
    close_to($j->{wall_clock_s}, $W / fraction($tau, $d, $R, $M), 1e-12,
             "$name: the wall clock, W / f");
    close_to($j->{expected_interruptions}, $j->{wall_clock_s} / $M, 1e-12,
             "$name: interruptions in the run");
    close_to($j->{write_loss_fraction}, $d / $tau, 1e-12,
             "$name: first order, writes");
    close_to($j->{rework_loss_fraction}, ($tau + $d) / (2 * $M), 1e-12,
             "$name: first order, rework");
    close_to($j->{restart_loss_fraction}, $R / $M, 1e-12,
             "$name: first order, restarts");
    my $best = best_interval($d, $R, $M);
    close_to($j->{optimum_interval_s}, $best, 1e-6,
             "$name: the best interval, against a search of f");
    my $top = $j->{optimum_effective_fraction} * (1 + 1e-12);
    ok($top >= $j->{effective_fraction}
       && $top >= fraction($best * 1.01, $d, $R, $M)
       && $top >= fraction($best / 1.01, $d, $R, $M),
       "$name: f is no higher 1 % either side of the best interval");
    # Daly's interval is the best one's series: near it when delta << M.
    if ($d / $M < 0.01) {
        ok(abs($j->{daly_interval_s} / $best - 1) < $d / $M,
           "$name: Daly's interval within delta/M of the best")
            or diag("Daly $j->{daly_interval_s}, best $best");
    }
}

# A given interval replaces Daly's; nothing else moves.
{
    my $j = checkpoint(qw(--mtbf-hours 40000 --interval-minutes 30));
    is($j->{interval_from}, 'given', 'a given interval is used');
    close_to($j->{interval_s}, 1800, 1e-15, '... in seconds');
    my ($M, $d) = (40000 * 3600 / 16384, 405e9 * 16 / 2e12);
    close_to($j->{effective_fraction}, fraction(1800, $d, 600, $M), 1e-12,
             '... and f is at that interval');
    close_to($j->{young_effective_fraction},
             fraction(young($d, $M), $d, 600, $M), 1e-12,
             "... beside f at Young's");
}

# Daly against Young: equal in the limit delta << M, apart by about
# (2/3) sqrt(delta / 2M), and M itself once delta >= 2M.
{
    my $M = 3600;
    my @gap;
    for my $d (0.036, 3.6) {
        my $j = checkpoint('--gpus', 1, '--mtbf-hours', 1,
                           '--write-seconds', $d);
        push @gap, 1 - $j->{daly_interval_s} / $j->{young_interval_s};
        close_to($gap[-1], 2 / 3 * sqrt($d / (2 * $M)), 0.05,
                 "delta/M = " . $d / $M . ": Daly below Young by about "
                 . "(2/3) sqrt(delta/2M)");
    }
    close_to($gap[0] / $gap[1], 0.1, 0.05,
             'a write 100 times shorter: Daly and Young 10 times closer');
    my $j = checkpoint(qw(--gpus 1 --mtbf-hours 1 --write-seconds 7200));
    is($j->{daly_interval_s}, 3600, 'delta = 2M: Daly\'s interval is M');
}

# The restart scales f by e^(-R/M) and does not move the best interval.
{
    my @f = map { checkpoint('--mtbf-hours', 40000, '--restart-minutes', $_) }
            (1, 31);
    close_to($f[1]{optimum_interval_s}, $f[0]{optimum_interval_s}, 1e-12,
             'the restart does not move the best interval');
    close_to($f[1]{effective_fraction} / $f[0]{effective_fraction},
             exp(-1800 / $f[0]{fleet_mtbi_s}), 1e-12,
             'thirty more minutes of restart: f times e^(-30 min / M)');
}

# ------------------------------------------------------ the simulation --
# At intervals from a tenth of the best to ten times it, with a write and
# a restart that matter, each with its own fixed seed: the simulated f
# lies within four standard errors of the closed form, and the mean count
# of interruptions within five of the closed form's (about Poisson).
my @sim = qw(--gpus 1024 --mtbf-hours 2000 --write-seconds 60
             --restart-minutes 5 --train-days 5 --simulate 300);
my $base = checkpoint(grep { $_ ne '--simulate' && $_ ne '300' } @sim);
my $seed = 11;
for my $k (0.1, 0.5, 1, 2, 10) {
    my $minutes = $k * $base->{optimum_interval_s} / 60;
    my $j = checkpoint(@sim, '--interval-minutes', $minutes, '--seed',
                       $seed++);
    my $z = ($j->{simulated_effective_fraction} - $j->{effective_fraction})
          / $j->{simulated_standard_error};
    ok(abs($z) < 4, sprintf('%g x the best interval: simulated f within '
                            . '4 standard errors (%.2f)', $k, $z))
        or diag("simulated $j->{simulated_effective_fraction}, "
                . "closed $j->{effective_fraction}");
    close_to($j->{simulated_deviation}, $z, 1e-9,
             '... and simulated_deviation says so');
    my $n = $j->{expected_interruptions};
    ok(abs($j->{simulated_interruptions} - $n) < 5 * sqrt($n / 300),
       "... interruptions a run: $j->{simulated_interruptions} against $n");
    close_to($j->{simulated_effective_fraction},
             $j->{train_s} / $j->{simulated_wall_clock_s}, 1e-12,
             '... f = W / the mean wall clock');
}

# The comparison can fail: Young's first-order f is wrong at a long
# interval, and the simulation says so by many standard errors.
{
    my $j = checkpoint(@sim, '--interval-minutes', 240, '--seed', 3);
    my ($M, $d, $R, $tau) = @$j{qw(fleet_mtbi_s write_s restart_s
                                   interval_s)};
    my $first_order = 1 - $d / $tau - ($tau + $d) / (2 * $M) - $R / $M;
    my $z = ($j->{simulated_effective_fraction} - $first_order)
          / $j->{simulated_standard_error};
    ok(abs($z) > 10, sprintf('the first-order f at 240 min is %.0f '
                             . 'standard errors from the simulation', $z));
}

# A seed gives the same runs; another seed other runs.
{
    my @a = run($fleet, 'checkpoint', @sim, '--seed', 5, '--json');
    my @b = run($fleet, 'checkpoint', @sim, '--seed', 5, '--json');
    my @c = run($fleet, 'checkpoint', @sim, '--seed', 6, '--json');
    is($a[1], $b[1], 'the same seed: the same report');
    isnt($a[1], $c[1], 'another seed: another report');
}

# --------------------------------------------------- the text it prints --
{
    my ($status, $out) = run($fleet, 'checkpoint', '--simulate', 20);
    is($status, 0, 'fleet checkpoint --simulate 20 runs');
    for my $line (qr/^interruptions  419 in 54 days on 16,384 GPUs/m,
                  qr/^  M = 50,677 h ÷ 16,384 = 3\.09 h$/m,
                  qr/^Young          τ = sqrt\(2δM\)/m, qr/^Daly  /m,
                  qr/^effective      f = τ ÷ E = /m, qr/^wall clock /m,
                  qr/^simulated      20 runs: f = /m) {
        like($out, $line, "the derivation has $line");
    }
}

# ---------------------------------------------------------- refusals --
for my $bad (
    [[qw(--mtbf-hours 1000 --node-mtbf-hours 100)], 'alternatives'],
    [[qw(--mtbf-hours 1000 --interruptions 5 --window-days 3)],
     'alternatives'],
    [[qw(--interruptions 5)], 'go together'],
    [[qw(--window-days 5)], 'go together'],
    [[qw(--write-gbs 100 --write-seconds 5)], '--write-seconds'],
    [[qw(--gpus 12 --node-mtbf-hours 100)], 'whole nodes'],
    [[qw(--seed 3)], '--seed goes with --simulate'],
    [[qw(--simulate 1)], 'at least 2 runs'],
    [[qw(--simulate 1000000 --interval-minutes 0.01)], 'fewer runs'],
    [[qw(--gpus 100000 --mtbf-hours 100 --interval-minutes 600)],
     'less than a millionth'],
    [[qw(--interruptions 2.5 --window-days 3)], '--interruptions'],
    [[qw(--gpus-per-node 0)], '--gpus-per-node'],
) {
    my ($flags, $why) = @$bad;
    refused_no_output("fleet checkpoint @$flags", $why, $fleet,
                      'checkpoint', @$flags);
}
for my $flag (qw(--gpus --mtbf-hours --node-mtbf-hours --interruptions
                 --window-days --params --bytes-per-param --write-gbs
                 --write-seconds --restart-minutes --interval-minutes
                 --train-days --simulate)) {
    for my $value ('0', '-1', 'abc') {
        refused("fleet checkpoint $flag $value", $flag, $fleet,
                'checkpoint', $flag, $value);
    }
}

# ------------------------------------------- the book's numbers, after make --
SKIP: {
    my $numbers = "$root/build/numbers";
    skip 'the chapter\'s run has not run (make)', 1
        unless -f "$numbers/13-checkpoint-fleet.tex"
            && -f "$numbers/13-checkpoint.tex";
    my $macros = read_macros("$numbers/13-checkpoint*.tex");
    # The chapter's run, its flags rebuilt from the same sources.
    my ($s1, $table) = run($fleet, qw(memory --precisions --csv));
    my ($mixed) = grep { /^mixed,/ } split /\n/, $table;
    my @c = split /,/, $mixed;
    my $restart = $c[4] + $c[6];
    is($restart, 12, 'a restart needs 12 bytes a parameter');
    my $days = fleet_json(qw(compute --params 405e9 --tokens 15.6e12
                             --gpus 16384 --layers 126 --hidden 16384
                             --seq 8192))->{days};
    my $j = checkpoint('--params', '405e9', '--bytes-per-param', $restart,
                       '--restart-minutes', 10, '--train-days', $days,
                       '--write-gbs', 2000);
    my %want = (
        CkptFleetMtbiTime => $j->{fleet_mtbi_s},
        CkptCheckpointBytes => $j->{checkpoint_bytes},
        CkptWriteTime => $j->{write_s},
        CkptYoungIntervalTime => $j->{young_interval_s},
        CkptDalyIntervalTime => $j->{daly_interval_s},
        CkptOptimumIntervalTime => $j->{optimum_interval_s},
        CkptIntervalWallTime => $j->{interval_wall_s},
        CkptEffectiveFraction => 100 * $j->{effective_fraction},
        CkptWallClockTime => $j->{wall_clock_s},
        CkptTrainTime => $j->{train_s},
        CkptExpectedInterruptions => $j->{expected_interruptions},
        CkptGpuMtbfHours => $j->{gpu_mtbf_s} / 3600,
        CkptStopsPerDay => 86400 / $j->{fleet_mtbi_s},
        CkptLossPerRestartMinute => 100 * 60 / $j->{fleet_mtbi_s},
        CkptCheckpointLossFraction => 100 * ($j->{write_loss_fraction}
                                             + $j->{rework_loss_fraction}),
    );
    for my $name (sort keys %want) {
        macro_agrees($macros, $name, $want{$name}, 'the book prints fleet\'s');
    }
    # Chapter 13's text (its introduction, "What it means", the
    # asynchronous save) says the restarts are the cost to attack at these
    # numbers: the restarts' share of the run must exceed the writes' and
    # the rework's together, and the verdict must say so.
    cmp_ok($j->{restart_loss_fraction}, '>',
           $j->{write_loss_fraction} + $j->{rework_loss_fraction},
           'the 405B run loses more to restarts than to its checkpoints, '
           . 'as the text says');
    like($macros->{CkptVerdictLargestLoss} // '', qr/^The restarts cost more/,
         '... and the verdict the text follows says the same');
    my $slow = checkpoint('--params', '405e9', '--bytes-per-param', $restart,
                          '--restart-minutes', 10, '--train-days', $days,
                          '--write-gbs', 200);
    macro_agrees($macros, 'CkptSlowEffectiveFraction',
                 100 * $slow->{effective_fraction}, 'a tenth of the rate');
    my $small = checkpoint(qw(--gpus 1024));
    macro_agrees($macros, 'CkptSmallFleetMtbiTime', $small->{fleet_mtbi_s},
                 '1,024 GPUs at the published rate per GPU');
    # The simulated intervals: each within six standard errors (the build
    # stops otherwise), and the sentence names the farthest.
    my $csv = slurp("$root/build/data/13-interval.csv") // '';
    my @rows = grep { /^\d/ } split /\n/, $csv;
    is(scalar @rows, 13, 'thirteen simulated intervals in the figure');
    my $far = 0;
    for (@rows) {
        my ($tau, $sim, $se, $closed) = split /,/;
        my $z = abs($sim - $closed) / $se;
        $far = $z if $z > $far;
        my $again = checkpoint('--params', '405e9', '--bytes-per-param',
                               $restart, '--restart-minutes', 10,
                               '--train-days', $days, '--write-gbs', 2000,
                               '--interval-minutes', $tau / 60);
        close_to($closed, $again->{effective_fraction}, 1e-6,
                 "the figure's closed form at $tau s is fleet's");
    }
    ok($far < 6, "the simulation within 6 standard errors everywhere ($far)");
    my $verdict = $macros->{CkptVerdictSimulated} // '';
    my $said = sprintf '%.2g', $far;
    like($verdict, qr/\Q$said\E standard errors/,
         'the sentence names the farthest, in standard errors');
}
done_testing();
