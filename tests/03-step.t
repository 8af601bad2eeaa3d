#!/usr/bin/perl
# Chapter 3's arithmetic: fleet step, fleet tp and the collectives' costs,
# against a model of the step written here from first principles (6 N B FLOPs
# a step; ring collectives send 2(n-1)/n or (n-1)/n of a buffer per rank and
# pay a latency per step; FSDP 3 Psi, data parallelism 2 Psi; tensor
# parallelism four all-reduces of b s h bf16 activations per layer), the
# parts' datasheet figures, the limits of utilisation, and the chapter as
# the book prints it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT('run make first');

# ------------------------------------------------------------ the parts ----
# Datasheet figures, dense bf16, one way per GPU (NVLink 900 GB/s counted
# both ways is 450 each way; 400 Gbit/s is 50 GB/s).
my %part = (
    a100   => [80e9,  312e12,  2.039e12, 300e9, 25e9, 32e9],
    h100   => [80e9,  989e12,  3.35e12,  450e9, 50e9, 64e9],
    h200   => [141e9, 989e12,  4.8e12,   450e9, 50e9, 64e9],
    h800   => [80e9,  989e12,  3.35e12,  200e9, 50e9, 64e9],
    b200   => [180e9, 2250e12, 7.7e12,   900e9, 50e9, 64e9],
    mi300x => [192e9, 1307e12, 5.3e12,   7 * 64e9, 50e9, 64e9],
);
my (undef, $csv) = run($fleet, qw(step --parts --csv));
my ($head, @rows) = split /\n/, $csv;
my @col = split /,/, $head;
is(scalar @rows, scalar keys %part, 'the parts table has every part');
for my $row (@rows) {
    my %r; @r{@col} = split /,/, $row;
    my $want = $part{ $r{key} } or next;
    my @got = @r{qw(memory_bytes peak_flops memory_bandwidth nvlink_bandwidth
                    nic_bandwidth pcie_bandwidth)};
    ok(!grep({ $got[$_] != $want->[$_] } 0 .. 5),
       "$r{key}: memory, dense peak, HBM and links (@got)");
    is($r{per_node}, 8, "$r{key}: 8 GPUs a node");
}

# --------------------------------------------------- a model of the step ----
my %latency = (nvlink => 3.4e-6, nic => 14e-6);
sub ring_ar { my ($S, $n) = @_; return $n > 1 ? 2 * ($n - 1) / $n * $S : 0 }
sub ring_half { my ($S, $n) = @_; return $n > 1 ? ($n - 1) / $n * $S : 0 }

# The step per GPU: compute, and each axis's bytes and seconds on its link.
sub step_model {
    my %in = (params => 100e9, tokens => 2e12, batch => 2097152, gpus => 1024,
              gpu => 'h100', mfu => 0.4, tp => 8, pp => 1, zero => 3,
              hidden => 12288, eff => 1, @_);
    my $p = $part{ $in{gpu} };
    my %bw = (nvlink => $p->[3] * $in{eff}, nic => ($in{nic} // $p->[4]) * $in{eff});
    $in{dp} //= $in{gpus} / ($in{tp} * $in{pp});
    $in{layers} //= sprintf('%.0f', $in{params} / (12 * $in{hidden}**2));
    my %e;
    $e{tokens_per_replica} = $in{batch} / $in{dp};
    $in{micro} //= $e{tokens_per_replica};
    my $m = $e{tokens_per_replica} / $in{micro};
    $e{micro_batches_per_replica} = $m;
    $e{steps} = ceil($in{tokens} / $in{batch});
    $e{flops_per_gpu_per_step} = 6 * $in{params} * $in{batch} / $in{gpus};
    $e{compute_seconds_per_step} = $e{flops_per_gpu_per_step} / ($p->[1] * $in{mfu});
    my $L = $in{layers} / $in{pp};
    my $h = $in{hidden};
    my %link = (tp => $in{tp} <= 8 ? 'nvlink' : 'nic',
                pp => $in{tp} * $in{pp} <= 8 ? 'nvlink' : 'nic',
                dp => $in{gpus} <= 8 ? 'nvlink' : 'nic');
    my (%bytes, %msgs);
    $bytes{tp} = 4 * ring_ar(2 * $in{micro} * $h, $in{tp}) * $L * $m;
    $msgs{tp} = 4 * 2 * ($in{tp} - 1) * $L * $m;
    ($bytes{pp}, $msgs{pp}) = $in{pp} > 1 ? (2 * $m * 2 * $in{micro} * $h / $in{tp}, 2 * $m) : (0, 0);
    my $model = 2 * $in{params} / ($in{tp} * $in{pp});
    my ($gathers, $scatters) = $in{zero} == 3 ? (2 * $m, $m)
                             : $in{zero} == 2 ? (1, $m) : (1, 1);
    $bytes{dp} = ($gathers + $scatters) * ring_half($model, $in{dp});
    $msgs{dp} = $L * ($gathers + $scatters) * ($in{dp} - 1);
    for my $k ('nvlink', 'nic') {
        my ($b, $lat) = (0, 0);
        for my $axis (qw(tp pp dp)) {
            next unless $link{$axis} eq $k;
            $b += $bytes{$axis};
            $lat += $msgs{$axis} * $latency{$k};
        }
        $e{"${k}_bytes_per_step"} = $b;
        $e{"${k}_latency_seconds"} = $lat;
        $e{"${k}_seconds_per_step"} = $b / $bw{$k} + $lat;
        $e{"${k}_ratio"} = $e{"${k}_seconds_per_step"} / $e{compute_seconds_per_step};
        $e{"${k}_bandwidth_ratio"} = $b / $bw{$k} / $e{compute_seconds_per_step};
    }
    $e{"${_}_bytes_per_step"} = $bytes{$_} for qw(tp pp dp);
    return %e;
}

sub check_step {
    my ($name, $flags, %model) = @_;
    my $j = fleet_json('step', @$flags);
    my %e = step_model(tp => 1, zero => 0, %model);
    for my $key (sort keys %e) {
        close_to($j->{$key} + 1e-30, $e{$key} + 1e-30, 1e-9, "$name: $key");
    }
    return $j;
}

my $b = ['--tp', 8, '--pp', 8, '--dp', 16, '--zero', 0, '--micro-batch-tokens', 4096];
my @a = ('--tp', 8, '--zero', 3);
my %a = (tp => 8, zero => 3);
my $A = check_step('design A', [@a], %a);
my $B = check_step('design B', $b, tp => 8, pp => 8, dp => 16, zero => 0, micro => 4096);
check_step('design A at 200 Gbit/s', [@a, '--nic-gbps', 200], %a, nic => 25e9);
check_step('design A at 80 %', [@a, '--link-efficiency', 0.8], %a, eff => 0.8);
check_step('design A on H800', [@a, '--gpu', 'h800'], %a, gpu => 'h800');
check_step('8,192 GPUs', [@a, '--gpus', 8192], %a, gpus => 8192);
check_step('ZeRO-2, 4 micro-batches', ['--tp', 8, '--zero', 2, '--micro-batch-tokens', 4096],
           tp => 8, zero => 2, micro => 4096);
check_step('plain data parallelism (the defaults)', []);
check_step('the brief\'s form', [qw(--params 7e9 --tokens 1e12 --batch-tokens 4194304
    --gpus 64 --gpu h200 --mfu 0.45 --dp 64 --micro-batch-tokens 8192)],
    params => 7e9, tokens => 1e12, batch => 4194304, gpus => 64, gpu => 'h200',
    mfu => 0.45, micro => 8192);
check_step('Llama 3 405B', [qw(--params 405e9 --tokens 15.6e12 --gpus 16384
    --batch-tokens 16777216 --tp 8 --pp 16 --zero 1 --hidden 16384
    --layers 126 --micro-batch-tokens 8192)],
    params => 405e9, tokens => 15.6e12, gpus => 16384, batch => 16777216,
    tp => 8, pp => 16, zero => 1, hidden => 16384, layers => 126, micro => 8192);

# The running example's numbers, with the tolerance their rounding allows.
is($A->{tokens_per_step}, 2097152, 'global batch 128 × 16,384 tokens');
is($A->{tokens_per_replica}, 16384, 'design A: 16,384 tokens per replica');
is($A->{layers}, 55, '12 L h² = 100e9 at h = 12,288 gives 55 layers');
close_to($A->{params_per_gpu}, 12.5e9, 1e-12, '12.5e9 parameters per TP rank');
close_to($A->{weight_bytes_per_gpu}, 25e9, 1e-12, '25 GB in bf16');
close_to($A->{flops_per_gpu_per_step}, 1.23e15, 0.005, '1.23e15 FLOPs per GPU per step');
close_to($A->{compute_seconds_per_step}, 3.1, 0.01, '≈ 3.1 s of compute per step');
close_to($A->{dp_bytes_per_step}, 75e9, 0.01, 'FSDP ≈ 75 GB per GPU per step');
close_to($A->{dp_bytes_per_step}, 3 * 25e9 * 127 / 128, 1e-12, '... 3 × 25 GB × 127/128');
close_to($A->{nic_bytes_per_step} / 50e9, 1.5, 0.01, '... 1.5 s at 50 GB/s');
close_to($A->{nic_bandwidth_ratio}, 0.48, 0.01, 'ratio ≈ 0.48');
is($A->{dp_link}, 'nic', 'FSDP crosses the NIC');
is($A->{tp_link}, 'nvlink', 'TP8 stays on NVLink');
my $slow = fleet_json('step', @a, '--nic-gbps', 200);
close_to($slow->{nic_bandwidth_ratio}, 1, 0.05, '200 Gbit/s: ratio ≈ 1');
close_to($slow->{nic_bandwidth_ratio}, 2 * $A->{nic_bandwidth_ratio}, 1e-12,
         '... twice the 400 Gbit/s ratio');
# A fleet eight times larger with the same batch: the rings of 1,024 ranks
# pay more in latency than the whole step computes (the chapter says so).
my $wide = fleet_json('step', @a, '--gpus', 8192);
close_to($wide->{nic_latency_seconds}, 3 * 55 * 1023 * 14e-6, 1e-9,
         '8,192 GPUs: 3 collectives × 55 layers × 1,023 ring steps × 14 us');
cmp_ok($wide->{nic_latency_seconds}, '>', 2 * $wide->{compute_seconds_per_step},
       '... several times the compute');
cmp_ok($wide->{nic_latency_seconds}, '>', $wide->{nic_seconds_per_step} / 2,
       '... most of the NIC time');
close_to($wide->{nic_ratio}, $wide->{nic_seconds_per_step} / $wide->{compute_seconds_per_step},
         1e-12, '... ratio with latency');
is($B->{tokens_per_replica}, 131072, 'design B: 131,072 tokens per pipeline');
is($B->{micro_batches_per_replica}, 32, '... 32 micro-batches of one sequence');
close_to($B->{dp_bytes_per_step}, 2 * 2 * 100e9 / 64 * 15 / 16, 1e-12,
         'design B: gradient all-reduce 2 Psi × 15/16 over 16 replicas');
close_to($B->{pp_bytes_per_step}, 2 * 32 * 2 * 4096 * 12288 / 8, 1e-12,
         'design B: pipeline sends, an eighth per GPU of the stage');
is($B->{tp_link} . $B->{pp_link} . $B->{dp_link}, 'nvlinknicnic',
   'design B: TP on NVLink, PP and DP across nodes');

# --------------------------------------------------------- in-network ----
my $sharp = fleet_json('step', @$b, '--in-network');
close_to($sharp->{dp_bytes_per_step}, 2 * 100e9 / 64, 1e-12,
         'SHARP: the all-reduce sends each gradient once');
close_to($sharp->{tp_bytes_per_step}, 4 * 2 * 4096 * 12288 * 55 / 8 * 32, 1e-12,
         'NVLS: each TP all-reduce sends its buffer once');
my $fsdp = fleet_json('step', @a, '--in-network');
close_to($fsdp->{dp_bytes_per_step}, $A->{dp_bytes_per_step}, 1e-12,
         'FSDP (gathers and reduce-scatters) gains nothing in the network');
my $a100 = fleet_json(qw(tp --gpu a100 --in-network));
my $a100r = fleet_json(qw(tp --gpu a100));
is($a100->{bytes_per_block}, $a100r->{bytes_per_block}, 'no NVLS on the A100');

# ----------------------------------------------------- tensor parallelism ----
sub tp_model {
    my %in = (hidden => 12288, seq => 4096, b => 4, tp => 8, link => 'nvlink',
              gpu => 'h100', mfu => 0.4, layers => 55, bpe => 2, @_);
    my $p = $part{ $in{gpu} };
    my $bw = $in{link} eq 'nvlink' ? $p->[3] : $p->[4];
    my ($t, $h, $s) = @in{qw(tp hidden seq)};
    my $tokens = $in{b} * $s;
    my $S = $in{bpe} * $tokens * $h;
    my %e;
    $e{bytes_per_block} = 4 * 2 * ($t - 1) / $t * $S;
    $e{elements_per_block} = $e{bytes_per_block} / $in{bpe};
    $e{all_reduce_seconds} = 2 * ($t - 1) * $latency{ $in{link} } + 2 * ($t - 1) / $t * $S / $bw;
    $e{comm_seconds_per_block} = 4 * $e{all_reduce_seconds};
    $e{algbw} = $S / $e{all_reduce_seconds};
    $e{busbw} = $e{algbw} * 2 * ($t - 1) / $t;
    $e{flops_per_block} = (72 * $tokens * $h**2 + 12 * $tokens * $s * $h) / $t;
    $e{compute_seconds_per_block} = $e{flops_per_block} / ($p->[1] * $in{mfu});
    $e{comm_compute_ratio} = $e{comm_seconds_per_block} / $e{compute_seconds_per_block};
    $e{bytes_per_micro_batch} = $in{layers} * $e{bytes_per_block};
    $e{bandwidth_seconds_per_micro_batch} = $e{bytes_per_micro_batch} / $bw;
    $e{compute_seconds_per_micro_batch} = $in{layers} * $e{compute_seconds_per_block};
    return %e;
}
sub check_tp {
    my ($name, $flags, %model) = @_;
    my $j = fleet_json('tp', @$flags);
    my %e = tp_model(%model);
    close_to($j->{$_}, $e{$_}, 1e-9, "$name: $_") for sort keys %e;
    return $j;
}
my $t8 = check_tp('TP8 on NVLink', []);
my $t16 = check_tp('TP16 across two nodes', [qw(--tp 16 --link nic)], tp => 16, link => 'nic');
check_tp('TP2 on MI300X', [qw(--tp 2 --gpu mi300x)], tp => 2, gpu => 'mi300x');
check_tp('TP4, 2 sequences, 32 layers', [qw(--tp 4 --micro-batch 2 --layers 32)],
         tp => 4, b => 2, layers => 32);
my $round = check_tp('the round figure', [qw(--tp 16 --link nic --layers 50 --bytes-per-element 1)],
                     tp => 16, link => 'nic', layers => 50, bpe => 1);
close_to($round->{bytes_per_micro_batch}, 75e9, 0.01,
         'TP16: ≈ 75 GB per micro-batch counting one byte per element over 50 layers');
close_to($round->{bandwidth_seconds_per_micro_batch}, 1.5, 0.01, '... 1.5 s at 50 GB/s');
close_to($t16->{bytes_per_block}, 16 * 16384 * 12288 * 15 / 16, 1e-12,
         'TP bytes per layer = 16 b s h (t-1)/t');
cmp_ok($t16->{comm_compute_ratio}, '>', 1, 'TP16 over the NIC cannot hide');
cmp_ok($t8->{comm_compute_ratio}, '<', 0.2, 'TP8 on NVLink costs a tenth of compute or so');
cmp_ok($t8->{busbw}, '<', 450e9, 'busbw stays below the line rate');

# -------------------------------------------------------- utilisation ----
# Llama 3 405B's published throughputs over the H100's dense peak.
for my $x (430e12, 400e12, 380e12) {
    my $j = fleet_json('compute', '--params', '405e9', '--achieved-flops', $x);
    close_to($j->{mfu}, $x / 989e12, 1e-12, sprintf('%.0f TFLOP/s is %.1f %% of the dense peak', $x / 1e12, 100 * $x / 989e12));
    cmp_ok($j->{mfu}, '<=', 1, '... and not above 100 %');
}
refused('a sparse peak as a throughput', qr/^fleet compute: --achieved-flops/,
        $fleet, qw(compute --achieved-flops 1979e12));
# Every utilisation the book prints is at most 100 %: the macros of every
# numbers file a chapter reads.
my @inputs;
for my $nw (glob "$root/chapters/*.nw") {
    push @inputs, slurp($nw) =~ m{\\input\{(build/numbers/[\w.-]+)\}}g;
}
my $macros = read_macros(join ' ', map { "$root/$_" } @inputs);
my @mfu = grep { /Mfu$|Hfu\w*$/ } keys %$macros;
ok(@mfu >= 5, 'the book prints utilisations (' . scalar(@mfu) . ')');
for my $name (sort @mfu) {
    my ($v) = printed_number($macros->{$name});
    ok(defined $v && $v > 0 && $v <= 100, "\\$name = $macros->{$name} is at most 100 %");
}

# ---------------------------------------------------------- money ----
my $c = fleet_json(qw(compute --gpus 1024));
close_to($c->{gpu_hours}, 1024 * $c->{seconds} / 3600, 1e-6, 'GPU-hours = GPUs × seconds ÷ 3,600');
ok(!exists $c->{usd}, 'no dollars without a price');
my $d = fleet_json(qw(compute --gpus 1024 --usd-per-gpu-hour 2.5));
close_to($d->{usd}, 2.5 * 1024 * $c->{seconds} / 3600, 1e-6, 'dollars = GPU-hours × price');
my (undef, $text) = run($fleet, qw(compute));
unlike($text, qr/\$/, 'the derivation prints no dollars without a price');

# ---------------------------------------------------------- bad input ----
for my $case ([['step', '--tp', 3], '--tp'],
              [['step', '--tp', 8, '--dp', 100], '--tp'],
              [['step', '--batch-tokens', 1000000], '--batch-tokens'],
              [['step', '--micro-batch-tokens', 5000], '--micro-batch-tokens'],
              [['step', '--zero', 4], '--zero'],
              [['step', '--gpu', 'v100'], '--gpu'],
              [['step', '--mfu', 1.5], '--mfu'],
              [['step', '--link-efficiency', 0], '--link-efficiency'],
              [['step', '--nic-gbps', 'fast'], '--nic-gbps'],
              [['step', '--parts', '--json'], '--parts'],
              [['tp', '--link', 'pcie'], '--link'],
              [['tp', '--tp', 16], '--tp'],
              [['tp', '--hidden', 0], '--hidden'],
              [['tp', '--micro-batch', 1.5], '--micro-batch'],
              [['compute', '--usd-per-gpu-hour', -2], '--usd-per-gpu-hour'],
              [['compute', '--mfu', 0.4, '--achieved-flops', 400e12], '--achieved-flops']) {
    my ($args, $flag) = @$case;
    refused_no_output("@$args", qr/^fleet \w+: .*\Q$flag\E/, $fleet, @$args);
}

# --------------------------------------------------------------- help ----
for my $command ('step', 'tp') {
    my ($s, $help) = run($fleet, $command, '--help');
    is($s, 0, "fleet $command --help exits 0");
    my @lines = $help =~ /^  (--[\w-]+.*)$/mg;
    ok(@lines >= 10, "fleet $command --help lists its flags");
    ok(!grep({ !/\S\s{2,}\S/ } @lines), "fleet $command: every flag has help");
}

# ----------------------------------------------------------- the book ----
my $book = pdf_text("$root/build/book.pdf");
(my $flat = $book) =~ s/\s+/ /g;
for my $cmd (['step', @a], ['step', @$b], ['tp', '--tp', 16, '--link', 'nic'],
             ['step', '--parts']) {
    my (undef, $t) = run($fleet, @$cmd);
    my @lines = grep { /\S/ } split /\n/, $t;
    my $line = $lines[-2];
    $line =~ s/\s+/ /g;
    $line =~ s/^ //;
    ok(index($flat, $line) >= 0, "the book prints fleet @$cmd: $line");
}
my $boxes = () = $flat =~ /Why your number differs:/g;
cmp_ok($boxes, '>=', 6, "the book has the why-your-number-differs boxes ($boxes)");
for my $topic ('16, 18 or 20 bytes', '2ND, 6ND or 8ND',
               'the attention term, whole or causal', 'algbw or busbw',
               'one way or both', 'elements or bytes') {
    ok(index($flat, "Why your number differs: $topic") >= 0, "a box on $topic");
}
for my $phrase ('communication seconds per step against compute seconds per step',
                'a single peer gets one link', 'critical batch size') {
    ok(index($flat, $phrase) >= 0, "the book says: $phrase");
}
# The book speaks about its subject, never about the documents it grew from.
unlike($flat, qr/running example.s source/, 'no "the running example\'s source"');
# The links are not an order of magnitude apart each: PCIe outruns the NIC.
unlike($flat, qr/differ by an order of magnitude each/, 'no claim that PCIe is ten times the NIC');
# One compute figure per step in the lesson: TP8's share is quoted against
# the step's compute, and the interview answer pairs each ratio with its time.
my $tp8ratio = sprintf '%.3g', $A->{nvlink_ratio};
# A time under a second reads in milliseconds, as the transcripts print it.
my $tp8ms = sprintf '%.3g', 1e3 * $A->{nvlink_seconds_per_step};
ok(index($flat, "$tp8ms ms on NVLink: $tp8ratio of the step") >= 0,
   "TP8 on NVLink is $tp8ratio of the step's compute");
for my $nw ("$root/chapters/01-memory-floor.nw", "$root/chapters/02-compute-and-fleet.nw",
            "$root/chapters/03-step.nw") {
    unlike(slurp($nw), qr/running example's\s+source/, "$nw: no mention of a source document");
}
for my $figure ('03-zero', '03-nic') {
    ok(-s "$root/build/figures/$figure.pdf", "figure $figure was drawn");
}
ok(!-e "$root/figures/08-zero.gp", 'the ZeRO figure moved to chapter 3');
done_testing();
