#!/usr/bin/perl
# tests/03-solutions.t: the worked solutions of chapter 3 (the step)
# against arithmetic done here. Each macro the solutions script wrote into
# build/solutions/03-*.tex must print, to the digits it shows, the value this
# file derives from first principles: 6 N B FLOPs a step over G GPUs; FSDP
# sends 3 Psi and the ring all-reduce 2(n-1)/n of a buffer per rank; tensor
# parallelism four all-reduces of b s h bf16 numbers per layer; NCCL's
# per-step latencies (3.4 us NVLink, 14 us network); dense peaks.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $m = read_macros("$root/build/solutions/03-*.tex");
ok(scalar(keys %$m) > 50, 'the solutions script wrote its macros');

my ($PEAK, $NVL, $NIC) = (989e12, 450e9, 50e9);
my ($A_NVL, $A_NIC) = (3.4e-6, 14e-6);
my $h = 12288;

# Design A, per GPU per step, at a NIC of $nic bytes/s and efficiency $eff.
sub design_a {
    my (%in) = (nic => $NIC, eff => 1, nvl => $NVL, gpus => 1024, @_);
    my $dp = $in{gpus} / 8;
    my %e;
    $e{compute} = 6 * 100e9 * 2097152 / $in{gpus} / ($PEAK * 0.4);
    my $tokens = 2097152 / $dp;
    my $fsdp = 3 * (2 * 100e9 / 8) * ($dp - 1) / $dp;
    my $fsdp_lat = 55 * 3 * ($dp - 1) * $A_NIC;
    $e{nic_bytes} = $fsdp;
    $e{nic_seconds} = $fsdp / ($in{nic} * $in{eff}) + $fsdp_lat;
    $e{nic_latency} = $fsdp_lat;
    $e{nic_ratio} = $e{nic_seconds} / $e{compute};
    $e{nic_bw_ratio} = $fsdp / ($in{nic} * $in{eff}) / $e{compute};
    my $tp = 4 * 2 * 7 / 8 * 2 * $tokens * $h * 55;
    $e{nvl_bytes} = $tp;
    $e{nvl_seconds} = $tp / ($in{nvl} * $in{eff}) + 4 * 14 * 55 * $A_NVL;
    $e{nvl_ratio} = $e{nvl_seconds} / $e{compute};
    $e{tokens} = $tokens;
    return %e;
}

# Exercise 3.1: Llama 3 405B at 16M tokens a step.
my $mfu = 400e12 / $PEAK;
macro_agrees($m, 'SolStepASteps', ceil(15.6e12 / 16777216), '3.1 steps');
macro_agrees($m, 'SolStepATokensPerReplica', 16777216 / 128, '3.1 tokens per replica');
macro_agrees($m, 'SolStepAMicroBatchesPerReplica', 16, '3.1 micro-batches');
macro_agrees($m, 'SolStepAMfuMfu', 100 * $mfu, '3.1 MFU of 400 TFLOP/s');
my $llama_compute = 6 * 405e9 * 16777216 / 16384 / 400e12;
macro_agrees($m, 'SolStepAComputeSecondsPerStep', $llama_compute, '3.1 compute per step');
my $llama_dp = 2 * 2 * 405e9 / 128 * 127 / 128;
my $llama_pp = 2 * 16 * 2 * 8192 * 16384 / 8;
macro_agrees($m, 'SolStepANicBytesPerStep', $llama_dp + $llama_pp, '3.1 cross-node bytes');

# Exercise 3.2: design A against the NIC's rate.
for my $run ([100, 'OneHundred'], [200, 'TwoHundred'], [400, 'FourHundred'],
             [800, 'EightHundred']) {
    my ($g, $name) = @$run;
    my %e = design_a(nic => $g * 1e9 / 8);
    macro_agrees($m, "SolStepB${name}NicSecondsPerStep", $e{nic_seconds}, "3.2 $g Gbit/s: seconds");
    macro_agrees($m, "SolStepB${name}NicRatio", $e{nic_ratio}, "3.2 $g Gbit/s: ratio");
    macro_agrees($m, "SolStepB${name}NicBandwidthRatio", $e{nic_bw_ratio},
                 "3.2 $g Gbit/s: bandwidth ratio");
}
my %a = design_a();
macro_agrees($m, 'SolStepBBreakEven', 400 * $a{nic_bw_ratio}, '3.2 break-even rate');

# Exercise 3.3: TP16 across the NIC, TP8 on NVLink, micro-batch 4 × 4,096.
for my $run ([16, $NIC, $A_NIC, 'Sixteen'], [8, $NVL, $A_NVL, 'Eight']) {
    my ($t, $bw, $alpha, $name) = @$run;
    my $S = 2 * 16384 * $h;
    my $bytes = 4 * 2 * ($t - 1) / $t * $S;
    my $comm = 4 * (2 * ($t - 1) * $alpha + 2 * ($t - 1) / $t * $S / $bw);
    my $flops = (72 * 16384 * $h**2 + 12 * 16384 * 4096 * $h) / $t;
    my $compute = $flops / ($PEAK * 0.4);
    macro_agrees($m, "SolStepC${name}BytesPerMicroBatch", 55 * $bytes, "3.3 TP$t bytes");
    macro_agrees($m, "SolStepC${name}CommSecondsPerMicroBatch", 55 * $comm, "3.3 TP$t comm");
    macro_agrees($m, "SolStepC${name}ComputeSecondsPerMicroBatch", 55 * $compute,
                 "3.3 TP$t compute");
    macro_agrees($m, "SolStepC${name}CommComputeRatio", $comm / $compute, "3.3 TP$t ratio");
}

# Exercise 3.4: 1 GB in 5 ms on 8 GPUs.
my $algbw = 1e9 / 5e-3;
my $busbw = $algbw * 2 * 7 / 8;
macro_agrees($m, 'SolStepDAlgbw', $algbw / 1e9, '3.4 algbw');
macro_agrees($m, 'SolStepDBusbw', $busbw / 1e9, '3.4 busbw');
macro_agrees($m, 'SolStepDFraction', 100 * $busbw / $NVL, '3.4 fraction of line rate');
my %d = design_a(eff => $busbw / $NVL);
macro_agrees($m, 'SolStepDNvlinkRatio', $d{nvl_ratio}, '3.4 NVLink ratio at that efficiency');
macro_agrees($m, 'SolStepDLineNvlinkRatio', $a{nvl_ratio}, '3.4 NVLink ratio at line rate');

# Exercise 3.5: in-network reduction for design B.
my $b_dp_ring = 2 * 2 * 100e9 / 64 * 15 / 16;
my $b_pp = 2 * 32 * 2 * 4096 * $h / 8;
macro_agrees($m, 'SolStepERingNicBytesPerStep', $b_dp_ring + $b_pp, '3.5 ring: NIC bytes');
macro_agrees($m, 'SolStepESharpNicBytesPerStep', $b_dp_ring + $b_pp,
             '3.5 SHARP: ZeRO-1 NIC bytes as on the ring');
macro_agrees($m, 'SolStepEPlainNicBytesPerStep', 2 * 100e9 / 64 + $b_pp,
             '3.5 SHARP: a plain all-reduce sends each gradient once');
macro_agrees($m, 'SolStepESharpNvlinkBytesPerStep', 4 * 2 * 4096 * $h * 55 / 8 * 32,
             '3.5 NVLS: NVLink bytes');
macro_agrees($m, 'SolStepEANicBytesPerStep', $a{nic_bytes}, '3.5 design A unchanged');

# Exercise 3.6: H800.
my %h800 = design_a(nvl => 200e9);
macro_agrees($m, 'SolStepFHeightNvlinkSecondsPerStep', $h800{nvl_seconds}, '3.6 H800 TP seconds');
macro_agrees($m, 'SolStepFHeightNvlinkRatio', $h800{nvl_ratio}, '3.6 H800 ratio');
macro_agrees($m, 'SolStepFHundredNvlinkRatio', $a{nvl_ratio}, '3.6 H100 ratio');

# Exercise 3.7: 8,192 GPUs, the same batch.
my %w = design_a(gpus => 8192);
macro_agrees($m, 'SolStepGTokensPerReplica', $w{tokens}, '3.7 tokens per replica');
macro_agrees($m, 'SolStepGComputeSecondsPerStep', $w{compute}, '3.7 compute per step');
macro_agrees($m, 'SolStepGNicRatio', $w{nic_ratio}, '3.7 NIC ratio');
macro_agrees($m, 'SolStepGPipeMicroBatchesPerReplica', 16384 / 4096, '3.7 pipeline micro-batches');

# Exercise 3.8: MI300X, TP2 on one Infinity Fabric link of 64 GB/s.
my $S = 2 * 16384 * $h;
my $pair_comm = 4 * (2 * $A_NVL + $S / 64e9);
my $pair_compute = (72 * 16384 * $h**2 + 12 * 16384 * 4096 * $h) / 2 / (1307e12 * 0.4);
macro_agrees($m, 'SolStepHPairCommComputeRatio', $pair_comm / $pair_compute, '3.8 TP2 ratio');
macro_agrees($m, 'SolStepHPairLinkBandwidth', 64e9, '3.8 one link');

# The solutions volume carries every exercise.
my $text = pdf_text("$root/build/solutions.pdf");
for my $n (1 .. 9) {
    ok(index($text, "Exercise 3.$n") >= 0, "the solutions volume has exercise 3.$n");
}
ok(index($text, 'design: choose for a fabric') >= 0, 'the design exercise is answered');
done_testing();
