#!/usr/bin/perl
# tests/13-drill.t: the numbers of chapter 13's lesson and interview drill
# (build/numbers/13-drill.tex, from code/runs/13-drill.sh) against fleet
# checkpoint's own report of the same run, and against the arithmetic of
# the chapter: M = 54 days / 419, one GPU's rate n M, Young's interval
# sqrt(2 delta M), four times the fleet stopping four times as often. Each
# sentence of the lesson and the drill that reads a number (the restart
# costs more than the writes and the lost work together; hourly saves lose
# more than Daly's) is checked against the number. Where Section 12b's run
# has written its macros (build/numbers/13-checkpoint-fleet.tex), the
# lesson's numbers must print the same.
#
# Run after `make`:  prove -v tests/13-drill.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $numbers = "$root/build/numbers";
ok(-s "$numbers/13-drill.tex", 'the drill has run (build/numbers/13-drill.tex)')
    or BAIL_OUT('no build/numbers/13-drill.tex: run make first');
my %macro = %{ read_macros("$numbers/13-drill.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }

# The drill's run, as code/runs/13-drill.sh gives it to the planner.
my $days = fleet_json(qw(compute --params 405e9 --tokens 15.6e12 --gpus 16384
                         --layers 126 --hidden 16384 --seq 8192))->{days};
my @run = (qw(--gpus 16384 --interruptions 419 --window-days 54 --params 405e9
              --bytes-per-param 12 --write-gbs 2000 --restart-minutes 10),
           '--train-days', $days);
my $j = fleet_json('checkpoint', @run);
my $M = 54 * 86400 / 419;
close_to($j->{fleet_mtbi_s}, $M, 1e-12, 'M = 54 days / 419');
agrees('FailDrillMtbi', $M, 'M printed');
agrees('FailDrillMtbiSeconds', $M, 'M in seconds');
agrees('FailDrillPerDay', 86400 / $M, 'interruptions a day');
agrees('FailDrillGpuMtbfYears', 16384 * $M / (365.25 * 86400), "one GPU's years");
agrees('FailDrillCheckpointBytes', 405e9 * 12, 'the checkpoint: 12 B a parameter');
agrees('FailDrillWrite', 405e9 * 12 / 2e12, 'the write at 2 TB/s');
agrees('FailDrillYoung', sqrt(2 * 405e9 * 12 / 2e12 * $M), "Young's interval");
agrees('FailDrillDaly', $j->{daly_interval_s}, "Daly's interval");
agrees('FailDrillRestart', 600, 'the restart');
agrees('FailDrillEffective', 100 * $j->{effective_fraction}, 'the effective fraction');
agrees('FailDrillWriteAndLost',
       100 * ($j->{write_loss_fraction} + $j->{rework_loss_fraction}),
       'writes and lost work, to first order');
agrees('FailDrillRestartLoss', 100 * $j->{restart_loss_fraction}, 'the restarts');
agrees('FailDrillTrainDays', $days, 'the failure-free days');
agrees('FailDrillWallDays', $j->{wall_clock_s} / 86400, 'the wall clock');
cmp_ok($j->{restart_loss_fraction}, '>',
       $j->{write_loss_fraction} + $j->{rework_loss_fraction},
       'the restart costs more than the writes and the lost work together');
my $hourly = fleet_json('checkpoint', @run, '--interval-minutes', 60);
agrees('FailDrillHourlyEffective', 100 * $hourly->{effective_fraction}, 'hourly saves');
agrees('FailDrillHourlyLoss',
       100 * ($j->{effective_fraction} - $hourly->{effective_fraction}), 'what they cost');
cmp_ok($hourly->{effective_fraction}, '<', $j->{effective_fraction},
       "hourly saves keep less than Daly's interval");
my $big = fleet_json('checkpoint', qw(--gpus 65536 --mtbf-hours), 16384 * $M / 3600,
                     @run[6 .. $#run]);
close_to($big->{fleet_mtbi_s}, $M / 4, 1e-9, 'four times the fleet stops four times as often');
agrees('FailDrillBigMtbi', $M / 4, "the larger fleet's M");
agrees('FailDrillBigEffective', 100 * $big->{effective_fraction}, "the larger fleet's f");
cmp_ok($big->{effective_fraction}, '<', $j->{effective_fraction}, 'and keeps less');

SKIP: {
    my $section = "$numbers/13-checkpoint-fleet.tex";
    skip "no $section (Section 12b's run)", 4 unless -s $section;
    my %ckpt = %{ read_macros($section) };
    is($macro{FailDrillMtbi}, $ckpt{CkptFleetMtbiTime}, "the lesson's M is Section 12b's");
    is($macro{FailDrillCheckpointBytes}, $ckpt{CkptCheckpointBytes}, '... its checkpoint');
    is($macro{FailDrillDaly}, $ckpt{CkptDalyIntervalTime}, "... its Daly's interval");
    is(value('FailDrillEffective'), (printed_number($ckpt{CkptEffectiveFraction}))[0] // '',
       '... its effective fraction')
        or diag("12b prints $ckpt{CkptEffectiveFraction}");
}

done_testing();
