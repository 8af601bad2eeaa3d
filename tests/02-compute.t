#!/usr/bin/perl
# Chapter 2's numbers, asserted against `fleet compute` and against arithmetic
# done here. H100 dense bf16 peak: 989e12 FLOP/s; a day is 86,400 s.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(ceil);
use Test::More;

my $fleet = root() . '/build/bin/fleet';
my $peak = 989e12;

my $c = fleet_json(qw(compute --params 100e9 --tokens 2T --gpus 1024 --mfu 0.4));
is($c->{flops}, 6 * 100e9 * 2e12, 'FLOPs = 6 N D = 1.2e24');
close_to($c->{flops}, 1.2e24, 1e-12, '1.2e24 FLOPs');
close_to($c->{flops_per_second}, 4.05e17, 2e-3, '4.05e17 FLOP/s at 40 % MFU');
close_to($c->{flops_per_second}, 1024 * $peak * 0.4, 1e-15, 'rate = GPUs × peak × MFU');
close_to($c->{seconds}, 2.96e6, 2e-3, '2.96e6 s');
close_to($c->{days}, 34, 0.015, '≈ 34 days');
is($c->{floor_gpus}, 32, 'the memory floor is 32 GPUs');
close_to($c->{floor_days}, 1100, 0.01, '≈ 1,100 days on the floor');
close_to($c->{floor_days}, 1.2e24 / (32 * $peak * 0.4) / 86400, 1e-12,
         'floor days exactly (1,097, which the seed rounds to 1,090)');
is($c->{fleet_over_floor}, 32, 'the fleet is 32× the floor');
# Chapter 2's words on these: the run "fits the lab's six weeks", and the
# floor's days are "three years".
cmp_ok($c->{days}, '<=', 6 * 7, 'the run fits the lab\'s six weeks');
close_to($c->{floor_days} / 365.25, 3, 0.01, 'the floor\'s days are three years');

# The inverse question.
my $d = fleet_json(qw(compute --days 30));
my $need = ceil(1.2e24 / (30 * 86400 * $peak * 0.4));
is($d->{gpus_needed}, $need, "30 days needs $need GPUs");
is($d->{gpus_needed_whole_nodes}, 8 * ceil($need / 8), 'rounded to whole nodes');
my $back = fleet_json('compute', '--gpus', $d->{gpus_needed});
cmp_ok($back->{days}, '<=', 30, 'and that fleet does finish in 30 days');
my $short = fleet_json('compute', '--gpus', $d->{gpus_needed} - 1);
cmp_ok($short->{days}, '>', 30, 'one GPU fewer does not');

# Ten trillion tokens.
my $t = fleet_json(qw(compute --tokens 10T));
close_to($t->{flops}, 6e24, 1e-12, '10T tokens: 5× the FLOPs');
close_to($t->{days}, 170, 0.015, '≈ 170 days on 1,024');
my $w = fleet_json(qw(compute --tokens 10T --gpus 5120));
close_to($w->{days}, 34, 0.015, '≈ 34 days on 5,120');

# A mixture of experts: 100e9 total, 20e9 active.
my $moe = fleet_json(qw(compute --params 100e9 --active-params 20e9));
close_to($moe->{flops}, 1.2e24 / 5, 1e-12, 'MoE: 5× less compute');
is($moe->{floor_gpus}, 32, 'MoE: the same memory floor');
is(fleet_json(qw(memory --params 100e9))->{static_bytes}, 1.6e12,
   'MoE: the same 1.6 TB of state (all experts are stored)');

# A published run: Llama 3 405B on 15.6T tokens, about 3.8e25 FLOPs.
my $l = fleet_json(qw(compute --params 405e9 --tokens 15.6e12 --gpus 16384));
close_to($l->{flops}, 3.8e25, 0.01, 'Llama 3 405B: ≈ 3.8e25 FLOPs');
my $la = fleet_json(qw(compute --params 405e9 --tokens 15.6e12
                        --layers 126 --hidden 16384 --seq 8192));
is($la->{attention_flops}, 12 * 126 * 8192 * 16384 * 15.6e12,
   'attention term = 12 L s h D');
close_to($la->{flops}, $la->{dense_flops} + $la->{attention_flops}, 1e-15,
         'total = dense + attention');

# Other parts.
my $a = fleet_json(qw(compute --gpu a100));
close_to($a->{days}, 1.2e24 / (1024 * 312e12 * 0.4) / 86400, 1e-12,
         'A100: 312e12 dense peak');

# Other conventions beside 6ND: the forward pass alone, full recomputation,
# and the attention term counted as a causal kernel does it.
close_to($c->{forward_flops}, 2 * 100e9 * 2e12, 1e-12, '2ND: the forward pass');
close_to($c->{recompute_flops}, 8 * 100e9 * 2e12, 1e-12, '8ND: with full recomputation');
close_to($c->{hfu_full_recompute}, 0.4 * 8 / 6, 1e-12, 'HFU = MFU × 8/6 with full recomputation');
close_to($la->{attention_flops_causal}, 6 * 126 * 8192 * 16384 * 15.6e12, 1e-12,
         'the causal attention term is half the whole one');

# Time is money: GPU-hours always, dollars only at a given price.
close_to($c->{gpu_hours}, 1024 * 1.2e24 / (1024 * $peak * 0.4) / 3600, 1e-6,
         'GPU-hours = FLOPs ÷ (peak × MFU) ÷ 3,600');
ok(!exists $c->{usd}, 'no dollars without --usd-per-gpu-hour');
my $priced = fleet_json(qw(compute --usd-per-gpu-hour 3));
close_to($priced->{usd}, 3 * 1.2e24 / ($peak * 0.4) / 3600, 1e-6, 'dollars at $3 a GPU-hour');
close_to(fleet_json(qw(compute --gpus 2048 --usd-per-gpu-hour 3))->{usd}, $priced->{usd},
         1e-6, 'twice the fleet, the same bill');

# The figure's data: days × GPUs is constant along the sweep.
my ($status, $csv) = run($fleet, qw(compute --sweep));
is($status, 0, '--sweep prints');
my ($head, @rows) = split /\n/, $csv;
is($head, 'gpus,seconds,days', 'sweep CSV header');
ok(@rows >= 10, 'sweep covers many fleet sizes');
my $product = (split /,/, $rows[0])[0] * (split /,/, $rows[0])[2];
my $constant = 1;
for (@rows) {
    my ($g, undef, $days) = split /,/;
    $constant &&= abs($g * $days - $product) <= 1e-9 * $product;
}
ok($constant, 'days are inversely proportional to GPUs');
done_testing();
