#!/usr/bin/perl
# Chapter 14, the arithmetic of a mixture of experts: fleet moe's memory
# floor (of every parameter) and FLOPs per token (of the active ones)
# against Perl's own arithmetic and against fleet memory and fleet
# compute; the split of the parameters into one expert's and everyone's;
# the all-to-all's bytes per token per layer worked by hand (dispatch and
# combine, forward and backward, k copies of the 16-bit hidden vector,
# (EP - 1)/EP of them leaving the GPU); the link it crosses at EP inside a
# node and across nodes, and the step's time on it; the tensor-parallel
# bytes it replaces; Mixtral 8x7B counted from its shape against its
# published totals; the refusals; the text, CSV and LaTeX against --json;
# and the macros the book's run writes against fleet's output.
#
# Run after `make build/bin/fleet`:  prove -v tests/14-moe-math.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
ok(-x $fleet, 'fleet is built') or BAIL_OUT('run make');

sub moe { return fleet_json('moe', @_) }
sub max2 { return $_[0] > $_[1] ? $_[0] : $_[1] }

# ------------------------------------------------ memory and compute --
# The defaults: 100e9 parameters, 20e9 active, 16 experts, top-2, h 6,144,
# 48 layers, EP 8 on H100s (8 a node, 80 GB, 989e12 FLOP/s, NVLink 450 GB/s
# and a NIC of 50 GB/s each way), 16,384 tokens a GPU a step, 40 % MFU.
my $m = moe();
my ($P, $A, $E, $k, $h, $L) = (100e9, 20e9, 16, 2, 6144, 48);
is($m->{params_total}, $P, 'the default: 100e9 parameters');
is($m->{params_active}, $A, '... of which 20e9 active');
close_to($m->{memory_floor_bytes}, 16 * $P, 1e-12,
         'the memory floor counts every parameter: 16 B x 100e9 = 1.6 TB');
is($m->{memory_floor_gpus}, ceil(16 * $P / (80e9 * 0.8)),
   'GPUs to hold it: 1.6 TB over 64 GB usable, rounded up');
close_to($m->{flops_per_token}, 6 * $A, 1e-12,
         'FLOPs per token count only the active parameters: 6 x 20e9');
close_to($m->{dense_flops_per_token}, 6 * $P, 1e-12,
         'a dense model of the same memory: 6 x 100e9');
close_to($m->{compute_ratio}, 5, 1e-12, '5 times less compute per token');
close_to($m->{training_flops}, 6 * $A * 2e12, 1e-12,
         'training FLOPs: 6 x 20e9 x 2e12');
close_to($m->{dense_training_days} / $m->{training_days}, 5, 1e-9,
         'the dense model of the same memory takes 5 times the days');

# The same floor as fleet memory's, the same compute as fleet compute's:
# the subcommand reuses chapters 1 and 2 rather than copying them.
my $memory = fleet_json('memory', '--params', $P);
close_to($m->{memory_floor_bytes}, $memory->{static_bytes}, 1e-12,
         'the floor is fleet memory\'s static state for 100e9');
is($m->{memory_floor_gpus}, $memory->{gpus_min}, '... and its GPUs');
my $compute = fleet_json('compute', '--params', $P, '--active-params', $A);
close_to($m->{training_flops}, $compute->{flops}, 1e-12,
         'training FLOPs are fleet compute --active-params 20e9\'s');
close_to($m->{training_days}, $compute->{days}, 1e-9, '... and its days');

# x = (P - A)/(E - k), s = P - E x.
my $x = ($P - $A) / ($E - $k);
close_to($m->{expert_params}, $x, 1e-12, 'one expert: (P - A)/(E - k)');
close_to($m->{shared_params}, $P - $E * $x, 1e-9,
         'what every token uses: P - E x');
close_to($m->{shared_params} + $k * $m->{expert_params}, $A, 1e-12,
         's + k x gives back the active parameters');
close_to($m->{expert_bytes_per_gpu}, 16 * $E / 8 * $x, 1e-12,
         'on each GPU: E/EP whole experts at 16 B a parameter');

# ------------------------------------------------------ the all-to-all --
# By hand: 4 all-to-alls (dispatch, combine; both again backward) of k
# copies of 2h bytes: 4 x 2 x 2 x 6,144 = 98,304 B; 7/8 leave the GPU.
is($m->{alltoall_payload_bytes_per_token_per_layer}, 98304,
   'payload per token per layer: 4 x top-2 x 2 B x 6,144 = 98,304 B');
is($m->{alltoall_bytes_per_token_per_layer}, 86016,
   'leaving the GPU at EP 8: 7/8 of it, 86,016 B');
is($m->{alltoall_link}, 'NVLink', 'EP 8 on nodes of 8: NVLink');
is($m->{alltoall_crosses_nodes}, 0, '... never the NIC');
is($m->{alltoall_nic_fraction}, 0, '... no byte on the NIC');
my $step_nvlink = 16384 * $L * 98304 * 7 / 8;
close_to($m->{step_nvlink_bytes}, $step_nvlink, 1e-12,
         'per GPU per step: 16,384 tokens x 48 layers x 86,016 B');
is($m->{step_messages}, 4 * $L * 7, 'EP - 1 sends in each of 4 x 48 '
   . 'all-to-alls');
close_to($m->{step_alltoall_s}, $step_nvlink / 450e9 + 4 * $L * 7 * 3.4e-6,
         1e-9, 'the step\'s all-to-all: its bytes at 450 GB/s, and the '
         . 'latency of NVLink for each send');
close_to($m->{step_compute_s}, 6 * $A * 16384 / (989e12 * 0.4), 1e-12,
         'the step\'s compute: 6 A FLOPs a token at 40 % of 989e12');
close_to($m->{alltoall_over_compute},
         $m->{step_alltoall_s} / $m->{step_compute_s}, 1e-9,
         'all-to-all over compute');

# Inside a node at EP 4: 3/4 leave the GPU, all on NVLink.
my $ep4 = moe('--ep', 4);
is($ep4->{alltoall_bytes_per_token_per_layer}, 98304 * 3 / 4,
   'EP 4: 3/4 of the payload leaves the GPU');
is($ep4->{alltoall_link}, 'NVLink', 'EP 4: NVLink');
# Across two nodes at EP 16: 7/16 over NVLink, 8/16 over the NIC, and the
# slower link (the NIC) sets the time; its latency for every send.
my $ep16 = moe('--ep', 16);
is($ep16->{alltoall_link}, 'NIC', 'EP 16 on nodes of 8: the NIC');
is($ep16->{alltoall_crosses_nodes}, 1, '... across nodes');
close_to($ep16->{alltoall_nvlink_fraction}, 7 / 16, 1e-12,
         'EP 16: 7/16 of the bytes to the 7 other GPUs of the node');
close_to($ep16->{alltoall_nic_fraction}, 8 / 16, 1e-12,
         'EP 16: 8/16 to the 8 GPUs of the other node');
is($ep16->{alltoall_bytes_per_token_per_layer}, 98304 * 15 / 16,
   'EP 16: 15/16 leave the GPU');
my ($nv16, $nic16) = (16384 * $L * 98304 * 7 / 16, 16384 * $L * 98304 / 2);
close_to($ep16->{step_alltoall_s},
         max2($nv16 / 450e9, $nic16 / 50e9) + 4 * $L * 15 * 14e-6, 1e-9,
         'EP 16: the longer of the two links\' times, the NIC\'s latency '
         . 'for each send');
cmp_ok($ep16->{alltoall_over_compute}, '>', $m->{alltoall_over_compute},
       'across nodes the all-to-all costs more against the same compute');
# Micro-batches multiply the sends, not the bytes.
my $micro = moe('--micro-batches', 4);
is($micro->{step_messages}, 4 * $m->{step_messages},
   '4 micro-batches: 4 times the sends');
close_to($micro->{step_nvlink_bytes}, $m->{step_nvlink_bytes}, 1e-12,
         '... and the same bytes');
# A slower link: H800's NVLink at 200 GB/s.
my $h800 = moe('--gpu', 'h800');
close_to($h800->{step_alltoall_s}, $step_nvlink / 200e9 + 4 * $L * 7 * 3.4e-6,
         1e-9, 'H800: the same bytes at 200 GB/s');
# Layers without experts send no all-to-all.
my $dense3 = moe('--dense-layers', 3);
is($dense3->{moe_layers}, 45, '3 of 48 layers dense: 45 with experts');
close_to($dense3->{step_nvlink_bytes}, 16384 * 45 * 98304 * 7 / 8, 1e-12,
         '... and only they send the all-to-all');

# ---------------------------------------- in place of tensor parallelism --
# TP of degree t on the MLP: one all-reduce forward, one backward, of 2h
# bytes a token, each sending 2(t-1)/t of it.
close_to($m->{tp_mlp_bytes_per_token_per_layer}, 2 * 2 * 7 / 8 * 2 * $h,
         1e-12, 'TP 8 on the MLP: 2 x 2(t-1)/t x 2h = 43,008 B, gone');
is($m->{tp_attention_bytes_per_token_per_layer}, 0,
   'attention data-parallel: nothing remains');
my $tpa = moe('--tp-attention', 4);
close_to($tpa->{tp_attention_bytes_per_token_per_layer},
         2 * 2 * 3 / 4 * 2 * $h, 1e-12,
         'TP 4 kept on attention: its two all-reduces remain');
my $top1 = moe('--top-k', 1, '--params-active', 15e9);
close_to($top1->{alltoall_bytes_per_token_per_layer},
         $top1->{tp_mlp_bytes_per_token_per_layer}, 1e-12,
         'top-1 at EP 8 sends the bytes TP 8 on the MLP would');

# ----------------------------------------------------- published shapes --
# Mixtral 8x7B from its shape: 32 layers, h 4,096, 8 gated experts of
# 14,336, top-2, 32 heads with 8 KV heads, vocabulary 32,000 (untied).
my @mixtral = qw(--ffn 14336 --mlp gated --heads 32 --kv-heads 8 --vocab 32000
                 --experts 8 --top-k 2 --hidden 4096 --layers 32);
my $mx = moe(@mixtral);
my $attention = 2 * 4096**2 + 2 * 4096 * 1024;
my $expert = 3 * 4096 * 14336;
my $shared = 32 * ($attention + 4096 * 8) + 2 * 32000 * 4096;
close_to($mx->{params_total}, $shared + 8 * 32 * $expert, 1e-12,
         'Mixtral: P counted from the shape');
close_to($mx->{params_active}, $shared + 2 * 32 * $expert, 1e-12,
         'Mixtral: A counted from the shape');
close_to($mx->{params_total}, 46.7e9, 0.01,
         'Mixtral: within 1 % of the published 46.7 billion');
close_to($mx->{params_active}, 12.9e9, 0.01,
         'Mixtral: within 1 % of the published 12.9 billion active');
is($mx->{alltoall_payload_bytes_per_token_per_layer}, 4 * 2 * 2 * 4096,
   'Mixtral: 4 x top-2 x 2 B x 4,096 per token per layer');
# DeepSeek-V3 from its totals: x = (671e9 - 37e9)/(256 - 8).
my $ds = moe(qw(--gpu h800 --params-total 671e9 --params-active 37e9
                --experts 256 --top-k 8 --hidden 7168 --layers 61
                --dense-layers 3 --ep 64 --gpus 2048));
close_to($ds->{expert_params}, 634e9 / 248, 1e-12,
         'DeepSeek-V3: one routed expert, (671e9 - 37e9)/(256 - 8)');
is($ds->{alltoall_link}, 'NIC', 'DeepSeek-V3 at EP 64: the NIC');
close_to($ds->{alltoall_nic_fraction}, 56 / 64, 1e-12,
         'DeepSeek-V3: 56/64 of the bytes leave the node');

# ------------------------------------------------------------ refusals --
my @refusals = (
    ['top-k above the experts', '--top-k', qw(--experts 8 --top-k 9)],
    ['top-k equal to the experts, from totals', '--top-k',
     qw(--experts 8 --top-k 8 --ep 8)],
    ['EP not dividing the experts', '--ep', qw(--experts 16 --ep 6)],
    ['EP not dividing the fleet', '--ep', qw(--ep 16 --gpus 1000)],
    ['EP of a node and a half', '--ep', qw(--experts 24 --ep 12 --gpus 1200)],
    ['active above the total', '--params-active',
     qw(--params-total 10e9 --params-active 20e9)],
    ['active below k/E of the total', '--params-active',
     qw(--params-active 10e9)],
    ['totals and a shape together', '--params-total',
     qw(--params-total 100e9 --ffn 1024 --heads 8)],
    ['dense layers with a shape', '--dense-layers',
     qw(--dense-layers 2 --ffn 1024 --heads 8)],
    ['a shape without heads', '--heads', qw(--ffn 1024)],
    ['--mlp without a shape', '--mlp', qw(--mlp gated)],
    ['an unknown MLP', '--mlp', qw(--ffn 1024 --heads 8 --mlp glu)],
    ['--vocab without a shape', '--vocab', qw(--vocab 32000)],
    ['KV heads that do not divide the heads', '--kv-heads',
     qw(--ffn 1024 --heads 32 --kv-heads 5)],
    ['every layer dense', '--dense-layers', qw(--dense-layers 48)],
    ['TP on attention beyond a node', '--tp-attention',
     qw(--tp-attention 16)],
    ['an unknown part', '--gpu', qw(--gpu v100)],
    ['no experts', '--experts', qw(--experts 0)],
    ['a fraction of a token', '--tokens-per-gpu',
     qw(--tokens-per-gpu 2.5)],
    ['an unknown flag', '--bogus', qw(--bogus)],
);
for my $case (@refusals) {
    my ($name, $flag, @args) = @$case;
    refused_no_output("fleet moe: $name", $flag, $fleet, 'moe', @args);
}

# ------------------------------------------------------------- outputs --
{
    my ($status, $out, $err) = run($fleet, 'moe');
    is($status, 0, 'the derivation: exit 0') or diag $err;
    like($out, qr/^  static state    = 100e9 × 16 B = 1\.6 TB$/m,
         'the text shows the floor of every parameter');
    like($out, qr/^  FLOPs per token = 6 × 20e9 = 1\.2e11 /m,
         '... the FLOPs of the active ones');
    like($out, qr/= 4 × 2 × 2 B × 6,144 = 98,304 B$/m,
         '... the all-to-all\'s payload, worked');
    like($out, qr/^  leaves the GPU  = \(EP - 1\)\/EP = 7\/8 → 86,016 B$/m,
         '... and what leaves the GPU');
    like($out, qr/^  link            = NVLink: 8 EP ranks fit in a node of 8$/m,
         '... and the link');
    my @long = grep { length > 80 } split /\n/, $out;
    is_deeply(\@long, [], 'no line of the text is wider than 80 characters');
    ($status, $out) = run($fleet, 'moe', '--ep', 16);
    like($out, qr/^  link            = NIC: EP 16 spans 2 nodes;$/m,
         'EP 16: the text names the NIC');
    ($status, $out) = run($fleet, 'moe', '--csv');
    my ($head, $row) = split /\n/, $out;
    my %csv;
    @csv{split /,/, $head} = split /,/, $row;
    is($csv{alltoall_bytes_per_token_per_layer}, 86016, '--csv agrees');
    is($csv{alltoall_link}, 'NVLink', '--csv names the link');
    my $dir = tempdir(CLEANUP => 1);
    ($status) = run($fleet, 'moe', '--latex', 'Test', '--output',
                    "$dir/m.tex");
    my $macros = read_macros("$dir/m.tex");
    macro_agrees($macros, 'TestMemoryFloorBytes', $m->{memory_floor_bytes},
                 '--latex: the floor');
    macro_agrees($macros, 'TestAlltoallBytesPerTokenPerLayer', 86016,
                 '--latex: the all-to-all\'s bytes');
    is($macros->{TestAlltoallLink}, 'NVLink', '--latex: the link');
}

# --------------------------------------------- the book's run, replayed --
# code/runs/14-moe.sh into a fresh folder: its macros are fleet moe's.
{
    my $dir = tempdir(CLEANUP => 1);
    mkdir "$dir/$_" for qw(numbers transcripts data);
    symlink "$root/build/bin", "$dir/bin" or die "symlink: $!";
    my ($status, undef, $err) = run('sh', "$root/code/runs/14-moe.sh", $dir);
    is($status, 0, 'code/runs/14-moe.sh runs') or diag $err;
    my $macros = read_macros("$dir/numbers/14-moe*.tex");
    macro_agrees($macros, 'MixtureMemoryFloorBytes', 16 * $P,
                 'the book\'s floor is 16 B x 100e9');
    macro_agrees($macros, 'MixtureComputeRatio', 5,
                 'the book\'s ratio of compute is 5');
    macro_agrees($macros, 'MixtureAlltoallBytesPerTokenPerLayer', 86016,
                 'the book\'s all-to-all per token per layer');
    macro_agrees($macros, 'MixtralParamsTotal', $mx->{params_total},
                 'the book\'s Mixtral total is fleet moe\'s');
    macro_agrees($macros, 'DeepseekAlltoallOverCompute',
                 $ds->{alltoall_over_compute},
                 'the book\'s DeepSeek-V3 ratio is fleet moe\'s');
    macro_agrees($macros, 'MixtureAcrossAlltoallNicFraction', 50,
                 'across two nodes, half the bytes (50 %) on the NIC');
    my $verdict = $macros->{MixtureVerdict} // '';
    my ($inside, $across) = $verdict =~ /takes ([\d.]+)\\,\\% of the time.*and it takes ([\d.]+)\\,\\%/;
    ok(defined $inside && abs($inside - 100 * $m->{alltoall_over_compute})
       < 0.01 && abs($across - 100 * $ep16->{alltoall_over_compute}) < 0.1,
       'the verdict quotes fleet moe\'s two ratios') or diag $verdict;
    my $text = slurp("$dir/transcripts/14-moe.txt") // '';
    is($text, scalar((run($fleet, 'moe'))[1]),
       'the transcript is fleet moe\'s text');
}

done_testing();
