#!/usr/bin/perl
# tests/09-solutions.t: the worked solutions to chapter 9's exercises
# (tensor parallelism).
#
# Every number the solution script derived (build/solutions/09-ex*-derived.tex
# and 09-ex6, 09-ex7) is worked out again here, in Perl, from the exercise's
# inputs and the chapter's formulas (a block sends 8 b s h (t-1)/t elements
# per micro-batch in four all-reduces; computes (72 b s h^2 + 12 b s^2 h)/t
# FLOPs), and fleet's JSON is held to the same formulas, each to the digits
# it was printed with. Each sentence of the solutions that reads a number
# (a little more than, larger than one, slower) is checked against the
# number. Exercise 9.6 reads the lab's autograder, whose shapes are checked
# against its source; exercise 9.7 needs minigpt --tp and is checked in full
# once this build's minigpt has it. The test also checks that the solution
# uses only macros the script defines, that the statements give no answer
# away, and that build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/09-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/09-ex1-derived.tex", 'the solution script has run (build/solutions/09-*)')
    or BAIL_OUT('no build/solutions/09-ex1-derived.tex: run make first');

my %macro = %{ read_macros("$sols/09-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
sub json {
    my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
    return JSON::PP::decode_json($text);
}
my %word = (1 => 'One', 2 => 'Two', 4 => 'Four', 8 => 'Eight', 16 => 'Sixteen');

# fleet tp's JSON against the chapter's formulas: H100 dense bf16 at 40 %.
my $rate = 989e12 * 0.4;
sub tp_formulas {
    my ($j, $b, $s, $h, $t, $label, $in_network) = @_;
    is($j->{all_reduce_bytes}, 2 * $b * $s * $h, "$label: each all-reduce is b s h x 2 B");
    my $sent = $in_network ? 4 * 2 * $b * $s * $h : 8 * $b * $s * $h * ($t - 1) / $t * 2;
    ok(abs($j->{bytes_per_block} - $sent) <= 1e-9 * $sent,
       "$label: a GPU sends " . ($in_network ? '4 b s h' : '8 b s h (t-1)/t') . ' x 2 B per block');
    my $flops = (72 * $b * $s * $h**2 + 12 * $b * $s**2 * $h) / $t;
    ok(abs($j->{flops_per_block} - $flops) <= 1e-9 * $flops,
       "$label: (72 b s h^2 + 12 b s^2 h)/t FLOPs per block");
    ok(abs($j->{compute_seconds_per_block} - $flops / $rate) <= 1e-9 * $flops / $rate,
       "$label: compute = FLOPs / (989e12 x 40 %)");
    ok(abs($j->{comm_compute_ratio} - $j->{comm_seconds_per_block}
           / $j->{compute_seconds_per_block}) <= 1e-9, "$label: the ratio is comm / compute");
}

# ------------------------------------------------------------------ 9.1 ----
{
    my ($b, $s, $h) = (1, 4096, 12288);
    my %j = map { $_ => json("09-ex1-$_") } 2, 4, 8;
    tp_formulas($j{$_}, $b, $s, $h, $_, "9.1: t = $_") for 2, 4, 8;
    is($macro{SolNineAAllReduces}, 4, '9.1: four all-reduces per block');
    my $limit = 8 * $b * $s * $h * 2;
    agrees('SolNineALimitGB', $limit / 1e9, '9.1: the limit 8 b s h x 2 B');
    for my $t (2, 4, 8) {
        agrees("SolNineA$word{$t}OfLimit", 100 * ($t - 1) / $t, "9.1: t = $t sends (t-1)/t of it");
    }
    agrees('SolNineAComputeRatio', 8 / 2, '9.1: compute falls as 1/t');
    agrees('SolNineABytesRatio', (7 / 8) / (1 / 2), '9.1: the bytes grow by 1.75');
    my $comm = $j{8}{comm_seconds_per_block} / $j{2}{comm_seconds_per_block};
    agrees('SolNineACommRatio', $comm, '9.1: the collectives grow');
    cmp_ok($comm, '>', 1.75, '9.1: ... a little more than the bytes (the start-ups)');
    cmp_ok($comm, '<', 2.5, '9.1: ... but only a little');
    ok($j{2}{comm_compute_ratio} < $j{4}{comm_compute_ratio}
       && $j{4}{comm_compute_ratio} < $j{8}{comm_compute_ratio},
       '9.1: the ratio grows with t');
}

# ------------------------------------------------------------------ 9.2 ----
{
    my %j = map { $_ => json("09-ex2-$_") } qw(nvlink nic sixteen sharp);
    tp_formulas($j{nvlink}, 4, 4096, 12288, 8, '9.2: TP8 NVLink');
    tp_formulas($j{nic}, 4, 4096, 12288, 8, '9.2: TP8 NIC');
    tp_formulas($j{sixteen}, 4, 4096, 12288, 16, '9.2: TP16 NIC');
    tp_formulas($j{sharp}, 4, 4096, 12288, 8, '9.2: TP8 in-network', 1);
    is($j{nvlink}{layers}, 55, "9.2: fleet tp's example has 55 layers");
    is($j{nvlink}{link_bandwidth}, 450e9, '9.2: NVLink 450 GB/s');
    is($j{nic}{link_bandwidth}, 50e9, '9.2: the NIC 50 GB/s');
    agrees('SolNineBLinkRatio', 9, '9.2: NVLink is 9 times the NIC');
    my $slow = $j{sixteen}{comm_seconds_per_block} / $j{nvlink}{comm_seconds_per_block};
    agrees('SolNineBSlowdown', $slow, '9.2: TP16 collectives over TP8 NVLink');
    my $step = ($j{sixteen}{comm_seconds_per_micro_batch}
                + $j{sixteen}{compute_seconds_per_micro_batch})
             / ($j{nvlink}{comm_seconds_per_micro_batch}
                + $j{nvlink}{compute_seconds_per_micro_batch});
    agrees('SolNineBSixteenStepRatio', $step, '9.2: micro-batch TP16 / TP8');
    cmp_ok($step, '>', 1, '9.2: doubling the GPUs made each micro-batch slower');
    cmp_ok($j{sixteen}{bytes_per_block}, '>', $j{nvlink}{bytes_per_block},
           '9.2: TP16 sends a little more per GPU');
    cmp_ok($j{sixteen}{comm_compute_ratio}, '>', 1, '9.2: TP16 over the NIC: comm exceeds compute');
    agrees('SolNineBSharpSaving', 100 * (1 - 1 / (2 * 7 / 8)), '9.2: NVLS sends 1 of 2(t-1)/t');
    cmp_ok($j{sharp}{comm_compute_ratio}, '<', $j{nvlink}{comm_compute_ratio},
           '9.2: ... and the ratio falls');
}

# ------------------------------------------------------------------ 9.3 ----
{
    my %j = map { $_ => json("09-ex3-$_") } 2, 4, 8;
    tp_formulas($j{$_}, 1, 4096, 4096, $_, "9.3: t = $_") for 2, 4, 8;
    my $ratio = $j{8}{comm_compute_ratio} / json('09-ex1-8')->{comm_compute_ratio};
    agrees('SolNineCRatioOfRatios', $ratio, '9.3: hidden 4,096 over 12,288 at TP8');
    ok($ratio > 3 && $ratio < 4, '9.3: about three times, a little more');
    agrees('SolNineCBlockWeightsMB', 12 * 4096**2 * 2 / 1e6, '9.3: 12 h^2 in bf16');
    agrees('SolNineCBlockWeightsEightMB', 12 * 4096**2 * 2 / 8 / 1e6, '9.3: on one of 8');
    agrees('SolNineCAllBlocksGB', 32 * 12 * 4096**2 * 2 / 1e9, '9.3: all 32 blocks');
}

# ------------------------------------------------------------------ 9.4 ----
{
    my ($tp, $sp) = (json('09-ex4-tp'), json('09-ex4-sp'));
    my ($t, $sbh) = (8, 4096 * 12288);
    is($tp->{sbh}, $sbh, '9.4: s b h');
    is($tp->{attention}, 'flash', '9.4: attention that does not store its scores');
    ok(abs($tp->{bytes_per_layer} - (10 + 24 / $t) * $sbh) < 1, '9.4: TP keeps (10 + 24/t) s b h');
    ok(abs($sp->{bytes_per_layer} - 34 / $t * $sbh) < 1, '9.4: TP + SP keeps 34/t s b h');
    agrees('SolNineDTpFactor', 10 + 24 / $t, '9.4: 10 + 24/t');
    agrees('SolNineDSpFactor', 34 / $t, '9.4: 34/t');
    agrees('SolNineDLayerTpGB', (10 + 24 / $t) * $sbh / 1e9, '9.4: a layer without SP');
    agrees('SolNineDLayerSpGB', 34 / $t * $sbh / 1e9, '9.4: a layer with SP');
    agrees('SolNineDActTpGB', 96 * (10 + 24 / $t) * $sbh / 1e9, '9.4: 96 layers without SP');
    agrees('SolNineDActSpGB', 96 * 34 / $t * $sbh / 1e9, '9.4: 96 layers with SP');
    agrees('SolNineDSaving', 100 * (1 - (34 / $t) / (10 + 24 / $t)), '9.4: the share saved');
    is($macro{SolNineDCollectivesTp}, 4, '9.4: four all-reduces');
    is($macro{SolNineDCollectivesSp}, 8, '9.4: eight collectives with SP');
    my $sent = 8 * 4096 * 12288 * ($t - 1) / $t * 2;
    agrees('SolNineDSentTpGB', $sent / 1e9, '9.4: bytes without SP');
    agrees('SolNineDSentSpGB', $sent / 1e9, '9.4: the same bytes with SP');
    is($macro{SolNineDSentSpGB}, $macro{SolNineDSentTpGB}, '9.4: printed the same');
}

# ------------------------------------------------------------------ 9.5 ----
{
    my %j = (4 => json('09-ex5-4'), 8 => json('09-ex5-8'), 16 => json('09-ex5-16'));
    tp_formulas($j{$_}, 1, 4096, 12288, $_, "9.5: t = $_") for 4, 8, 16;
    is($j{4}{link}, 'NVLink', '9.5: TP4 on NVLink');
    is($j{8}{link}, 'NVLink', '9.5: TP8 on NVLink');
    is($j{16}{link}, 'NIC', '9.5: TP16 over the NIC');
    is($macro{SolNineEHeads}, 96, '9.5: 96 heads');
    for my $t (4, 8, 16) {
        is(96 % $t, 0, "9.5: t = $t divides the heads");
        is($macro{"SolNineE$word{$t}Heads"}, 96 / $t, "9.5: t = $t, heads per rank");
        my $state = 16 * 175e9 / $t;
        agrees("SolNineE$word{$t}StateGB", $state / 1e9, "9.5: t = $t, 16 x 175e9 / t bytes");
        my $m = json("09-ex5-state-$t");
        agrees("SolNineE$word{$t}Cards", $state / $m->{usable_bytes_per_gpu},
               "9.5: t = $t, cards of usable memory");
        cmp_ok($state, '>', $m->{usable_bytes_per_gpu}, "9.5: t = $t does not fit one card");
    }
    cmp_ok($j{8}{comm_compute_ratio}, '<', 0.2, '9.5: TP8 on NVLink: a small share');
    cmp_ok($j{16}{comm_compute_ratio}, '>', 1, '9.5: TP16 over the NIC: longer than compute');
    cmp_ok($j{4}{comm_compute_ratio}, '<', $j{8}{comm_compute_ratio}, '9.5: TP4 cuts the share');
}

# ------------------------------------------------------------------ 9.6 ----
{
    my $grade = slurp("$root/exercises/labs/tp/grade.c") // '';
    my ($N, $C, $OC) = $grade =~ /enum \{ ROWS = (\d+), IN = (\d+), OUT = (\d+) \}/;
    ok(defined $OC, '9.6: the autograder states its shapes');
    $N //= 0; $C //= 0; $OC //= 0;
    is($macro{SolNineFN}, $N, '9.6: N as the autograder has it');
    is($macro{SolNineFC}, $C, '9.6: C');
    is($macro{SolNineFOC}, $OC, '9.6: OC');
    is($macro{SolNineFScore}, '20/20', '9.6: the solution scores 20/20');
    agrees('SolNineFColumnBytes', $N * $C * 4, '9.6: din (N, C) in floats');
    agrees('SolNineFRowBytes', $N * $OC * 4, '9.6: out (N, OC) in floats');
    for my $t (2, 4) {
        agrees("SolNineF$word{$t}ColumnSent", 2 * ($t - 1) / $t * $N * $C * 4, "9.6: t = $t, f's ring");
        agrees("SolNineF$word{$t}RowSent", 2 * ($t - 1) / $t * $N * $OC * 4, "9.6: t = $t, g's ring");
    }
    my $t = slurp("$sols/09-ex6.txt") // '';
    like($t, qr/^lab-tp: OK$/m, '9.6: the transcript ends OK');
    is(scalar(() = $t =~ /^  PASS  /mg), 4, '9.6: it shows the four checks of the all-reduced buffers');
}

# ------------------------------------------------------------------ 9.7 ----
{
    {
        for my $t (2, 4) {
            my $j = json("09-ex7-$t");
            my ($b, $s, $h) = @$j{qw(micro_batch seq hidden)};
            my $want = 8 * $b * $s * $h * ($t - 1) / $t * 4;
            is($j->{tp}, $t, "9.7: t = $t run");
            is($j->{tp_collectives_per_block}, 4, "9.7: t = $t, four all-reduces a block");
            is($j->{tp_bytes_per_block}, $want, "9.7: t = $t, counted = 8 b s h (t-1)/t x 4 B");
            is($j->{tp_bytes_per_block_formula}, $want, "9.7: t = $t, minigpt's formula too");
            agrees("SolNineG$word{$t}Predicted", $want, "9.7: t = $t, the prediction");
            agrees("SolNineG$word{$t}Bytes", $j->{tp_bytes_per_block}, "9.7: t = $t, counted");
        }
        like(slurp("$sols/09-ex7-verify.txt") // '', qr/\bOK\b/, '9.7: --verify says OK');
    }
}

# ------------------------------------------- the solution and its exercises --
solution_sources_ok(solution => 'solutions/09-tensor-parallel.tex',
                    prefix => 'SolNine', macros => \%macro, transcripts => 6,
                    width => 85);
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/09-tensor-parallel.tex',
    solution => 'solutions/09-tensor-parallel.tex',
    heading => 'solnineexercise',
    lab => 'make lab LAB=tp');
answers_not_given_away($text, \%macro, qw(
    SolNineALimitGB SolNineACommRatio SolNineBSlowdown
    SolNineBSixteenStepRatio SolNineBSharpSaving SolNineCRatioOfRatios
    SolNineCBlockWeightsMB SolNineDLayerTpGB SolNineDLayerSpGB SolNineDSaving
    SolNineEEightStateGB SolNineEEightCards SolNineFColumnBytes
    SolNineFRowBytes SolNineFFourRowSent));
solutions_pdf_ok(chapter => 9, solution => 'solutions/09-tensor-parallel.tex',
                 title => 'Tensor parallelism', items => scalar @items,
                 key => { 2 => $macro{SolNineBSlowdown},
                          4 => $macro{SolNineDSaving},
                          5 => $macro{SolNineEEightStateGB} },
                 newer_than => "$sols/09-ex1-derived.tex");

done_testing();
