#!/usr/bin/perl
# tests/11-drill.t: the numbers of chapter 11's interview drill. The drill
# sizes the suspects of a step that came in slower than design B's plan:
# the compute efficiency, the NIC's and NVLink's rates at which the planner
# predicts the slow step, and how many times its bubble would have to grow.
# Each value is put back into the planner here: it must give the slow step
# to within the bisection's interval, and each input moved the other way
# must give a faster one. The macros are checked against the planner's
# JSON to the digits they print.
#
# Run after `make`:  prove -v tests/11-drill.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $numbers = "$root/build/numbers";
ok(-s "$numbers/11-drill.tex", 'the drill has run (build/numbers/11-drill.tex)')
    or BAIL_OUT('no build/numbers/11-drill.tex: run make first');
my %macro = %{ read_macros("$numbers/11-drill*.tex") };
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }

my @B = qw(--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule 1f1b --micro-batch 1);
sub design_b { return fleet_json('layout', @B, '--top', '1', @_)->{layouts}[0] }

my $plan = design_b();
my $slower = value('DrillSlower') / 100;
my $target = $plan->{step_time_s} * (1 + $slower);
macro_agrees(\%macro, 'DrillStepTime', $plan->{step_time_s}, "design B's step");
macro_agrees(\%macro, 'DrillSlowStep', $target, 'the slow step');
macro_agrees(\%macro, 'DrillExtra', $target - $plan->{step_time_s}, 'the gap');
is($macro{DrillLayout}, 'TP8 × PP8 × DP16', 'the drill is about design B');

# Each input at the printed value gives the slow step, to the printed
# digits' worth of that input; a little less gives a slower step and a
# little more a faster one.
for my $suspect (['DrillNeededEfficiency', '--compute-efficiency', 0.01],
                 ['DrillNeededNicGbps', '--nic-gbps', 1],
                 ['DrillNeededNvlinkGbs', '--nvlink-gbs', 1]) {
    my ($name, $flag, $scale) = @$suspect;
    my ($v, $half) = printed_number($macro{$name});
    ok(defined $v, "$name is a number");
    my ($low, $high) = map { $_ * $scale } $v - 2 * $half, $v + 2 * $half;
    cmp_ok(design_b($flag, $low)->{step_time_s}, '>', $target,
           "$flag $low gives a step slower than the slow step");
    cmp_ok(design_b($flag, $high)->{step_time_s}, '<', $target,
           "$flag $high gives a step faster than the slow step");
    my $planned = $flag eq '--compute-efficiency' ? value('DrillPlannedEfficiency') / 100
                : $flag eq '--nic-gbps' ? value('DrillNicGbps')
                : value('DrillPlannedNvlinkGbs');
    cmp_ok($v * $scale, '<', $planned, "$flag: the value needed is below the plan's");
    ok(abs(design_b($flag, $planned)->{step_time_s} - $plan->{step_time_s})
           < 1e-9 * $plan->{step_time_s}, "$flag $planned is the plan's own input");
}
my $grown = ($plan->{bubble_s} + $target - $plan->{step_time_s}) / $plan->{bubble_s};
macro_agrees(\%macro, 'DrillBubbleTimes', $grown, 'the bubble, grown to the gap');

# The drill's text uses only macros the runs define.
my $nw = slurp("$root/chapters/11g-diagnose.nw") // '';
my %used = map { $_ => 1 } $nw =~ /\\(Drill\w+)/g;
my @missing = grep { !exists $macro{$_} } sort keys %used;
is_deeply(\@missing, [], 'the drill uses only macros code/runs/11-drill.sh writes');

done_testing();
