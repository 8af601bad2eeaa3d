#!/usr/bin/perl
# tests/05-solutions.t: the worked solutions of chapter 5 (the layout
# decision) against arithmetic done here: 1F1B's bubble 7/m and peak p - r
# on stage 0; GPipe's peak m; interleaved (p-1)/(v m) and a peak of
# (2(p-1) + (v-1)p + 1)/v; FSDP's NIC time 3 x 25 GB x 127/128 at 50 GB/s
# against 6 N tokens / GPUs at 40 % of 989e12; its latency 3 L (n-1) alpha;
# TP16's four ring all-reduces. Macros are checked at the precision they
# print, and the solutions volume must carry every exercise's heading.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $m = read_macros("$root/build/solutions/05-ex*.tex");

for my $case ([Sixteen => 16], [ThirtyTwo => 32], [SixtyFour => 64]) {
    my ($name, $mb) = @$case;
    macro_agrees($m, "SolFiveB${name}BubbleOverCompute", 100 * 7 / $mb,
                 "5.2: 1F1B bubble 7/$mb");
    macro_agrees($m, "SolFiveB${name}PeakInFlightFirstStage", 8,
                 "5.2: 1F1B stage 0 holds p = 8 with m = $mb");
}
macro_agrees($m, 'SolFiveBGpipeBubbleOverCompute', 100 * 7 / 32, '5.2: GPipe 7/32');
macro_agrees($m, 'SolFiveBGpipePeakInFlightFirstStage', 32, '5.2: GPipe holds all 32');
for my $case ([Two => 2], [Four => 4], [Eight => 8]) {
    my ($name, $v) = @$case;
    macro_agrees($m, "SolFiveC${name}BubbleOverCompute", 100 * 7 / ($v * 32),
                 "5.3: interleaved v = $v: 7/(32 v)");
    macro_agrees($m, "SolFiveC${name}PeakInFlightFirstStage",
                 (2 * 7 + ($v - 1) * 8 + 1) / $v, "5.3: stage 0 peak, v = $v");
}
is($m->{SolFiveCOddDeadlock}, 1, '5.3: m = 36 on 8 stages deadlocks');

my $line = 3 * 100e9 / 8 * 2 * 127 / 128 / 50e9;
my $dense = 6 * 100e9 * 2097152 / 1024 / (989e12 * 0.4);
macro_agrees($m, 'SolFiveFLineTime', $line, '5.6: FSDP at line rate');
macro_agrees($m, 'SolFiveFDenseTime', $dense, '5.6: dense compute');
macro_agrees($m, 'SolFiveFMoeTime', $dense / 5, '5.6: a fifth of the compute');
macro_agrees($m, 'SolFiveFRatio', $line / $dense, '5.6: dense ratio');
macro_agrees($m, 'SolFiveFMoeRatio', 5 * $line / $dense, '5.6: MoE ratio');

for my $case ([Five => 5], [Ten => 10], [Twenty => 20]) {
    my ($name, $us) = @$case;
    macro_agrees($m, "SolFiveH${name}DpLatencyS", 3 * 55 * 511 * $us * 1e-6,
                 "5.8: FSDP latency at $us us");
}
{
    my $bytes = 4 * 2 * 15 / 16 * 4 * 4096 * 12288 * 2 * 55 * 2;
    macro_agrees($m, 'SolFiveDTpBytes', $bytes, '5.4: TP16 all-reduces, 2 micro-batches');
    my $eight = 4 * 2 * 7 / 8 * 4 * 4096 * 12288 * 2 * 55;
    macro_agrees($m, 'SolFiveDEightTpBytes', $eight, '5.4: TP8 all-reduces');
}
like($m->{SolFiveAPlanFastLayout}, qr/FSDP/, '5.1: FSDP at 800 Gbps');
unlike($m->{SolFiveAPlanSlowLayout}, qr/FSDP/, '5.1: no FSDP at 100 Gbps');
like($m->{SolFiveELayout}, qr/PP/, '5.5: a pipeline on 5,120 GPUs');
# 5.7: the prose says the pipeline beats the best unpipelined layout and the
# best FSDP layout, and that TP4 wins over TP8.
like($m->{SolFiveGLayout}, qr/^TP4 .*PP/, '5.7: TP4 with a pipeline');
unlike($m->{SolFiveGFlatLayout}, qr/PP/, '5.7: the flat layout has no pipeline');
like($m->{SolFiveGFsdpLayout}, qr/FSDP/, '5.7: the FSDP layout uses FSDP');
for my $k (qw(SolFiveGFlatStepTimeS SolFiveGFsdpStepTimeS)) {
    cmp_ok($m->{$k}, '>', $m->{SolFiveGStepTimeS}, "5.7: $k is slower than the pipeline");
}

my $solutions = "$root/build/solutions.pdf";
ok(-s $solutions, 'build/solutions.pdf was woven') or BAIL_OUT('no solutions');
(my $flat = pdf_text($solutions)) =~ s/\s+/ /g;
my @titles = ('other fabrics', 'the bubble and the micro-batches',
              'interleaving', 'TP16 across two nodes', 'ten trillion tokens',
              'a mixture of experts at the same memory', 'an open design',
              'latency', 'traffic in code');
for my $n (1 .. @titles) {
    my $title = $titles[$n - 1];
    like($flat, qr/Exercise 5\.$n: \Q$title\E/,
         "the solutions volume has exercise 5.$n");
}
done_testing();
