#!/usr/bin/perl
# fleet layout --machine: minigpt's step on this machine, predicted for
# every layout of 1, 2, 4 and 8 ranks minigpt can run, in the parts of
# minigpt's step_breakdown. The parts add up to the step; the cases a
# reader can derive by hand come out as derived (one rank: compute is the
# FLOPs over the GEMM rate, and minigpt counts the same FLOPs); bad input
# is refused in one line. No timing is asserted: the rates are the
# machine file's, whatever they are.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp ();
use Test::More;

my $fleet = root() . '/build/bin/fleet';
my $minigpt = root() . '/build/bin/minigpt';
my $machine = root() . '/build/machine.json';
ok(-x $fleet && -x $minigpt && -r $machine, 'fleet, minigpt and the machine '
   . 'file are built') or BAIL_OUT('build first');

sub figure {
    my ($key) = @_;
    my $text = slurp($machine);
    $text =~ /"\Q$key\E": ([0-9.eE+-]+)/ or die "no $key in $machine";
    return $1;
}
my ($gemm, $copy) = (figure('gemm_flops_per_core'),
                     figure('memcpy_bytes_per_second'));
my ($alpha, $beta) = (figure('p2p_latency_s'), figure('p2p_bytes_per_second'));

my @parts = map { "step_breakdown.$_" }
    qw(compute_s exposed_comm_s.tp exposed_comm_s.pp exposed_comm_s.dp
       bubble_s optimizer_s other_s);

# A shape every layout of 1, 2, 4 and 8 ranks can split: 8 heads and 8
# layers for t and p up to 8, 32 sequences in 4 micro-batches for d up to 8.
my %shape = (layers => 8, hidden => 64, heads => 8, seq => 64, vocab => 32);
my @shape = (minigpt_flags(%shape), '--batch', 32, '--micro-batches', 4);
my $all = fleet_json('layout', '--machine', $machine, @shape);
my %layouts = (1 => 1, 2 => 3, 4 => 6, 8 => 10);    # pairs t, p with t p | N
for my $n (sort { $a <=> $b } keys %layouts) {
    my @of = grep { $_->{ranks} == $n } @{ $all->{layouts} };
    is(scalar @of, $layouts{$n}, "$n ranks: every factorisation t x p x d");
    my %seen = map { ("$_->{tp}x$_->{pp}x$_->{dp}" => 1) } @of;
    is(scalar keys %seen, $layouts{$n}, "$n ranks: no layout twice");
}
for my $l (@{ $all->{layouts} }) {
    my $name = "$l->{tp}x$l->{pp}x$l->{dp}";
    is($l->{tp} * $l->{pp} * $l->{dp}, $l->{ranks}, "$name: t p d = ranks");
    cmp_ok($l->{step_breakdown}{step_s}, '>', 0, "$name: a positive step");
    my $sum = 0;
    for my $part (@parts) {
        cmp_ok(at_path($l, $part), '>=', 0, "$name: $part is not negative");
        $sum += at_path($l, $part);
    }
    close_to($sum, $l->{step_breakdown}{step_s}, 1e-12,
             "$name: the parts add up to the step");
    is($l->{step_breakdown}{exposed_comm_s}{tp} > 0, $l->{tp} > 1,
       "$name: TP time exactly when t > 1");
    is($l->{step_breakdown}{exposed_comm_s}{pp} > 0, $l->{pp} > 1,
       "$name: PP time exactly when p > 1");
    is($l->{step_breakdown}{bubble_s} > 0, $l->{pp} > 1,
       "$name: a bubble exactly when p > 1");
    is($l->{step_breakdown}{exposed_comm_s}{dp} > 0, $l->{dp} > 1,
       "$name: DP time exactly when d > 1");
}
my @steps = map { $_->{ranks} . ':' . $_->{step_breakdown}{step_s} }
            @{ $all->{layouts} };
my @sorted = map { $_->{ranks} . ':' . $_->{step_breakdown}{step_s} }
             sort { $a->{ranks} <=> $b->{ranks}
                    || $a->{step_breakdown}{step_s}
                       <=> $b->{step_breakdown}{step_s} } @{ $all->{layouts} };
is_deeply(\@steps, \@sorted, 'each rank count is listed fastest first');

# One rank, by hand. minigpt counts F = 6 B T (12 L C^2 + C V) + 6 L C (T + 1)
# B T FLOPs; compute is F over the GEMM rate. The optimizer streams 32 bytes
# a parameter and zeroing the gradient 4, at twice memcpy's rate.
my ($L, $C, $T, $V, $B) = (8, 64, 64, 32, 32);
my $F = 6 * $B * $T * (12 * $L * $C**2 + $C * $V) + 6 * $L * $C * ($T + 1)
      * $B * $T;
my $P = minigpt_params(%shape);
my ($one) = grep { $_->{ranks} == 1 } @{ $all->{layouts} };
is($one->{flops_per_step}, $F, 'one rank: the FLOPs of the formula');
close_to($one->{step_breakdown}{compute_s}, $F / $gemm, 1e-12,
         'one rank: compute = FLOPs / the GEMM rate');
is($one->{params_per_rank}, $P, "one rank: minigpt's parameters");
close_to($one->{step_breakdown}{optimizer_s}, 32 * $P / (2 * $copy), 1e-12,
         'one rank: the optimizer streams 32 bytes a parameter');
close_to($one->{step_breakdown}{other_s}, 4 * $P / (2 * $copy), 1e-12,
         'one rank: zeroing the gradient streams 4 bytes a parameter');
my $run = json_of($minigpt, minigpt_flags(%shape), '--batch', $B,
                  '--micro-batches', 4, '--steps', 1, '--quiet');
is($run->{flops_per_step}, $F, 'minigpt counts the same FLOPs');
is($run->{params}, $P, 'and has the same parameters');

# Two replicas: one ring all-reduce per gradient tensor, 2 + 12 L + 3 of
# them; with d = 2 each sends its whole tensor in two messages.
my ($dp2) = grep { $_->{tp} == 1 && $_->{pp} == 1 && $_->{dp} == 2 }
            @{ $all->{layouts} };
is($dp2->{dp_all_reduces}, 2 + 12 * $L + 3, 'd = 2: one all-reduce a tensor');
close_to($dp2->{step_breakdown}{exposed_comm_s}{dp},
         2 * (2 + 12 * $L + 3) * $alpha + 4 * $P / $beta, 1e-12,
         'd = 2: 2 (d - 1) latencies a tensor, and its bytes once');

# Two stages of 1F1B with 4 micro-batches idle (p - 1) / (m + p - 1).
my ($pp2) = grep { $_->{tp} == 1 && $_->{pp} == 2 && $_->{dp} == 1 }
            @{ $all->{layouts} };
close_to($pp2->{bubble_fraction}, 1 / 5, 1e-12, 'p = 2, m = 4: a fifth idle');
is($pp2->{pp_messages}, 4, 'p = 2: a stage sends one message a micro-batch');

# minigpt's defaults are the planner's: with no shape flags, one rank
# counts what minigpt's default run counts.
my $default = fleet_json('layout', '--machine', $machine, '--ranks', 1);
my $plain = json_of($minigpt, '--steps', 1, '--quiet');
is($default->{layouts}[0]{flops_per_step}, $plain->{flops_per_step},
   "no flags: minigpt's default shape");
is($default->{layouts}[0]{micro_batch}, $plain->{micro_batch},
   "no flags: minigpt's default batch and micro-batches");

# The interleaved schedule, and zb-h1 below m = p (the simulator's case).
my $inter = fleet_json('layout', '--machine', $machine, @shape, '--ranks', 4,
                       '--pp', 4, '--schedule', 'interleaved');
is($inter->{layouts}[0]{chunks}, 2, 'interleaved: two chunks, as minigpt');
my $zb = fleet_json('layout', '--machine', $machine, @shape, '--ranks', 8,
                    '--pp', 8, '--schedule', 'zb-h1');
cmp_ok($zb->{layouts}[0]{bubble_fraction}, '>', 0, 'zb-h1, m < p: a bubble');
cmp_ok($zb->{layouts}[0]{bubble_fraction}, '<', 1, 'zb-h1, m < p: below 1');

# The table a person reads names every layout, and the macros each part.
my ($status, $out) = run($fleet, 'layout', '--machine', $machine, @shape);
is($status, 0, 'the table prints');
for my $l (@{ $all->{layouts} }) {
    like($out, qr/^  $l->{tp} × $l->{pp} × $l->{dp} /m,
         "the table lists $l->{tp}x$l->{pp}x$l->{dp}");
}
my $latex;
($status, $latex) = run($fleet, 'layout', '--machine', $machine, @shape,
                        '--ranks', 2, '--latex', 'Pred');
like($latex, qr/\\newcommand\{\\PredTpTwoPpOneDpOneStepTime\}\{\d/,
     'a layout\'s step as a macro');

# Refusals: one line, exit 2.
my $dir = File::Temp::tempdir(CLEANUP => 1);
open my $cut, '>', "$dir/cut.json" or die;
print $cut substr(slurp($machine), 0, 300);
close $cut;
(my $without = slurp($machine)) =~ s/"gemm_flops_per_core": [^,]*,//;
open my $less, '>', "$dir/less.json" or die;
print $less $without;
close $less;
my @m = ('layout', '--machine');
refused('no machine file', 'cannot read', $fleet, @m, "$dir/none.json");
refused('a machine file cut short', 'not a whole machine file', $fleet, @m,
        "$dir/cut.json");
refused('a figure missing', 'gemm_flops_per_core', $fleet, @m,
        "$dir/less.json");
refused('heads that do not divide the width', '--heads (3) must divide',
        $fleet, @m, $machine, '--heads', 3);
refused('no layout of the ranks', '--tp 8 does not divide --heads 4',
        $fleet, @m, $machine, '--ranks', 8, '--tp', 8);
refused('a batch that does not split', '--micro-batches (3) must divide',
        $fleet, @m, $machine, '--micro-batches', 3);
refused('layers that do not split', 'does not split into --pp 4', $fleet,
        @m, $machine, '--ranks', 4, '--pp', 4);
refused('an unknown schedule', '--schedule: unknown', $fleet, @m, $machine,
        '--schedule', 'zigzag');
refused('chunks without interleaving', '--chunks is for --schedule '
        . 'interleaved', $fleet, @m, $machine, '--chunks', 2);
refused('GPUs on a CPU', 'give --ranks', $fleet, @m, $machine, '--gpus', 8);
refused('a vocabulary too small', '--vocab must be at least 8', $fleet, @m,
        $machine, '--vocab', 4);

done_testing();
