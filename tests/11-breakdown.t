#!/usr/bin/perl
# Chapter 11: minigpt's step breakdown. On one rank, on two data-parallel
# ranks (with and without ZeRO-1), on two pipeline stages and on two
# tensor-parallel ranks, the parts of step_breakdown add up to its step,
# and no part is below zero by more than the slack the clocks allow: one
# part in a thousand of the step, for the rounding between two clocks
# read a few nanoseconds apart. Compute, the optimizer and the step itself
# are positive, and the readable report prints the breakdown's line. No
# part is checked against a time: only that the parts are what they are.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my @tiny = (minigpt_flags(layers => 4, hidden => 16, heads => 2, seq => 8,
                          vocab => 16), qw(--batch 8 --micro-batches 2
                                          --steps 4 --eval-every 1000
                                          --quiet));
my $tmp = tempdir(CLEANUP => 1);
open(my $fh, '>', "$tmp/machine.json") or die "$tmp/machine.json: $!";
print $fh qq({\n  "cpu": "test",\n  "peak_flops_per_core": 2e11,\n),
          qq(  "gemm_flops_per_core": 1e9,\n  "complete": true\n}\n);
close $fh;
push @tiny, '--machine', "$tmp/machine.json";

my @parts = qw(compute_s exposed_comm_s.tp exposed_comm_s.pp
               exposed_comm_s.dp bubble_s optimizer_s other_s);
my $slack = 1e-3;                     # of the step, for each part
for my $case ([1], [2, '--dp', 2], [2, qw(--dp 2 --zero 1)], [2, '--pp', 2],
              [2, '--tp', 2]) {
    my ($ranks, @flags) = @$case;
    my $name = "$ranks rank" . ($ranks > 1 ? 's' : '') . " @flags";
    my $r = json_of(mpiexec($ranks, $minigpt, @tiny, @flags));
    is_deeply([sort keys %{ $r->{step_breakdown} // {} }],
              [sort qw(compute_s exposed_comm_s bubble_s optimizer_s other_s
                       step_s)], "$name: step_breakdown is one object")
      and is_deeply([sort keys %{ $r->{step_breakdown}{exposed_comm_s} }],
                    [qw(dp pp tp)], "$name: ... with an object of axes");
    my $step = $r->{step_breakdown}{step_s};
    ok(defined $step && $step > 0, "$name: the step is positive")
      or next;
    my $sum = 0;
    for my $part (@parts) {
        my $x = at_path($r, "step_breakdown.$part");
        ok(defined $x, "$name: step_breakdown.$part is reported") or next;
        $sum += $x;
        ok($x >= -$slack * $step,
           "$name: $part is not below zero by more than $slack of a step")
          or diag "$part = $x s of a $step s step";
    }
    close_to($sum, $step, 1e-9, "$name: the parts add up to the step");
    ok($r->{step_breakdown}{compute_s} > 0, "$name: compute is positive");
    ok($r->{step_breakdown}{optimizer_s} > 0,
       "$name: the optimizer's part is positive");
    ok($r->{step_breakdown}{compute_s} <= $step,
       "$name: compute is no more than the step");
    my %has = map { (substr($_, 2) => 1) } grep { /^--[tpd]p$/ } @flags;
    # No tensor-parallel all-reduce, no message and no bubble without
    # their axis. (A data axis of one rank still calls its collectives.)
    is($r->{step_breakdown}{exposed_comm_s}{tp}, 0,
       "$name: no tensor-parallel wait without the axis") unless $has{tp};
    is(at_path($r, "step_breakdown.$_"), 0, "$name: no $_ without a pipeline")
      for $has{pp} ? () : qw(exposed_comm_s.pp bubble_s);
    # Each axis's own code clocks its waits: an axis that is there waited.
    ok($r->{step_breakdown}{exposed_comm_s}{tp} > 0,
       "$name: the tensor-parallel all-reduces waited") if $has{tp};
    ok($r->{step_breakdown}{bubble_s} > 0, "$name: the stages waited")
      if $has{pp};
    ok($r->{step_breakdown}{exposed_comm_s}{dp} > 0,
       "$name: the gradient's all-reduces waited") if $has{dp};
}

# The readable report prints the breakdown in one line.
my ($status, $out, $err) = run($minigpt, @tiny);
is($status, 0, 'the readable report: exit 0') or diag $err;
like($out, qr/^step parts     = compute \S+ \S+, tp \S+ \S+, pp \S+ \S+, dp \S+ \S+,\n {17}bubble \S+ \S+, optimizer \S+ \S+, other -?\S+ \S+; step \S+ \S+ \(means\)$/m,
     'the readable report prints the step parts in two lines');
done_testing();
