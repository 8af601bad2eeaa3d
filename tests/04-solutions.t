#!/usr/bin/perl
# tests/04-solutions.t: the worked solutions of chapter 4
# (activation memory) against arithmetic done here. The model of the bytes a
# layer, a stage and a GPU keep is tests/04-activations.t's, loaded
# without running its tests; the macros that solutions/04-activations.sh
# wrote must print these values to the digits they show, and the prose's
# claims in words (fits, the heaviest stage, the fitted coefficients) are
# checked on the same values.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use List::Util qw(max);
use Test::More;

require "$FindBin::Bin/04-activations.t";
our (%DEFAULT);

my $root = root();
my $m = read_macros("$root/build/solutions/04-ex*.tex");
ok(scalar keys %$m, 'the solutions script wrote macros') or BAIL_OUT('run make');

sub agrees { my ($name, $want, $label) = @_; macro_agrees($m, $name, $want, $label) }
sub says { my ($name, $want, $label) = @_; is($m->{$name}, $want, "$label (\\$name)") }

# 4.1: hidden 16,384, 128 heads, 8,192 tokens, one sequence, TP8.
{
    # the table of variants, as published: attention that writes its scores
    my %shape = (s => 8192, b => 1, h => 16384, a => 128, at => 'materialized');
    my $sbh = 8192 * 16384;
    agrees('SolActAScoreRatio', 5 * 128 * 8192 / 16384, '4.1: 5as/h');
    agrees('SolActABytesPerLayerNone', layer_bytes(%shape, t => 1, sp => 0, rc => 'none'),
           '4.1: no parallelism');
    agrees('SolActABytesPerLayerTp', layer_bytes(%shape, t => 8, sp => 0, rc => 'none'),
           '4.1: TP');
    agrees('SolActABytesPerLayerTpSp', layer_bytes(%shape, t => 8, sp => 1, rc => 'none'),
           '4.1: TP + SP');
    agrees('SolActABytesPerLayerTpSpSelective',
           layer_bytes(%shape, t => 8, sp => 1, rc => 'selective'), '4.1: TP + SP + selective');
    agrees('SolActABytesPerLayerFull', layer_bytes(%shape, t => 8, sp => 1, rc => 'full'),
           '4.1: full with SP');
    my $scores = layer_bytes(%shape, t => 8, sp => 1, rc => 'none')
               - layer_bytes(%shape, t => 8, sp => 1, rc => 'selective');
    agrees('SolActAScoreShare', 100 * $scores / layer_bytes(%shape, t => 8, sp => 1, rc => 'none'),
           '4.1: the scores\' share');
}

# 4.2: 16,384 against 16,000 tokens.
{
    my ($exact, $approx) = (34 * 16384 * 12288, 34 * 16000 * 12288);
    agrees('SolActBBytesPerLayerWithoutScores', $exact, '4.2: 34 sbh at 16,384');
    agrees('SolActBApproxBytesPerLayerWithoutScores', $approx, '4.2: at 16,000');
    agrees('SolActBGap', 100 * ($exact - $approx) / $exact, '4.2: the gap');
    my ($gib) = ($m->{SolActBGib} // '') =~ /^([\d.]+)\\,GiB$/;
    ok(defined $gib && abs($gib - $exact / 2**30) <= 0.005, '4.2: GiB (\SolActBGib)')
        or diag($m->{SolActBGib});
}

# 4.3: 126 layers on 16 stages.
my %llama = (hidden => 16384, heads => 128, kv_heads => 8, ffn => 53248,
             gated => 1, seq => 8192, micro_batch => 1, vocab => 128000,
             layers => 126, tp => 8, sp => 1, rc => 'selective', pp => 16,
             micro_batches => 16, dp => 128, zero => 1);
{
    my $l = layout(%llama);
    my ($g, $stage) = gpu_memory($l);
    my @act = map { stage_memory($l, $_)->{activations} } 0 .. 15;
    my ($most) = sort { $act[$b] <=> $act[$a] || $a <=> $b } 0 .. 15;
    is_deeply([stage_layers(126, 16)], [7, (8) x 14, 7], '4.3: 7, 8 x 14, 7');
    says('SolActCMostActivationsStage', $most, '4.3: the stage with the most activations');
    says('SolActCHeaviestStage', $stage, '4.3: the heaviest GPU');
    ok($most != 0 && $stage != 0, '4.3: neither is the first stage');
    agrees('SolActCBytesPerGpu', $g->{total}, '4.3: its memory');
    says('SolActCVerdict', $g->{total} <= 80e9 ? 'fits' : 'does not fit', '4.3: the verdict');
    ok($g->{total} > 80e9, '4.3: as the prose says, it does not fit');
}

# 4.4: design B without recomputation under GPipe, and the most m that fits.
# 4.4, 4.6 and 4.7 are set with attention that writes its scores.
my %b = (tp => 8, sp => 1, pp => 8, micro_batch => 1, dp => 16, zero => 1,
         micro_batches => 32, at => 'materialized');
{
    my ($gpipe) = gpu_memory(layout(%b, rc => 'none', schedule => 'gpipe'));
    my ($plain) = gpu_memory(layout(%b, rc => 'none'));
    agrees('SolActDBytesPerGpu', $gpipe->{total}, '4.4: GPipe at 32 micro-batches');
    agrees('SolActDActivationBytes', $gpipe->{activations}, '4.4: its activations');
    says('SolActDVerdict', 'does not fit', '4.4: GPipe does not fit');
    ok($gpipe->{total} > 80e9, '4.4: ... by the model too');
    agrees('SolActDPlainBytesPerGpu', $plain->{total}, '4.4: 1F1B');
    ok($plain->{total} <= 80e9, '4.4: 1F1B fits');
    my $most = max(grep { (gpu_memory(layout(%b, rc => 'none', schedule => 'gpipe',
                                              micro_batches => $_)))[0]{total} <= 80e9 } 1 .. 32);
    says('SolActDMostMicroBatches', $most, '4.4: the most micro-batches GPipe fits');
    agrees('SolActDBubble', 100 * 7 / $most, '4.4: its bubble');
    agrees('SolActDBubbleOneFOneB', 100 * 7 / 32, '4.4: 1F1B\'s bubble');
    my ($with) = gpu_memory(layout(%b, rc => 'selective', schedule => 'gpipe'));
    ok($with->{total} <= 80e9, '4.4: with selective recomputation GPipe fits');
}

# 4.5: interleaving with 2 and 4 chunks.
{
    agrees('SolActEFirstTwo', 8 * (1 + 7 / 16), '4.5: V = 2, first stage');
    agrees('SolActEFirstFour', 8 * (1 + 7 / 32), '4.5: V = 4, first stage');
    my @runs = ([Plain => '1f1b', 1], [Two => 'interleaved', 2], [Four => 'interleaved', 4]);
    my %act;
    for my $r (@runs) {
        my ($g, $stage) = gpu_memory(layout(%b, at => 'flash', rc => 'selective', schedule => $r->[1],
                                            chunks => $r->[2]));
        agrees("SolActE$r->[0]ActivationBytes", $g->{activations}, "4.5: $r->[0]");
        is($stage, 1, "4.5: $r->[0]: the second stage is the heaviest");
        $act{ $r->[0] } = $g->{activations};
    }
    ok($act{Two} > $act{Four} && $act{Four} > $act{Plain},
       '4.5: the extra falls as V grows, towards 1F1B');
}

# 4.6: design A's 16,384 tokens, five ways.
my %a = (tp => 8, sp => 1, dp => 128, zero => 3, at => 'materialized');
{
    my %runs = (None => [4, 'none'], Selective => [4, 'selective'], Full => [4, 'full'],
                Two => [2, 'none'], One => [1, 'none']);
    my %margin;
    for my $k (sort keys %runs) {
        my ($b, $rc) = @{ $runs{$k} };
        my ($g) = gpu_memory(layout(%a, micro_batch => $b, rc => $rc));
        agrees("SolActF${k}BytesPerGpu", $g->{total}, "4.6: $k");
        says("SolActF${k}Verdict", $g->{total} <= 80e9 ? 'fits' : 'does not fit', "4.6: $k");
        $margin{$k} = 80e9 - $g->{total};
    }
    is_deeply([sort grep { $margin{$_} >= 10e9 } keys %margin], [qw(Full Selective)],
              '4.6: only selective and full recomputation leave 10 GB');
    ok($margin{One} > 0, '4.6: one sequence per micro-batch fits, without the margin');
    agrees('SolActFOneHeadroomBytes', $margin{One}, '4.6: its headroom');
    my $x = 4096 / (6 * 12288);
    agrees('SolActFSelectiveExtra', 100 * $x / (1 + $x + 50304 / (12 * 12288 * 55)),
           '4.6: selective recomputation\'s extra FLOPs');
    agrees('SolActFFullExtra', 100 / 3, '4.6: full recomputation\'s');
}

# 4.7: six sequences per micro-batch.
{
    my ($g) = gpu_memory(layout(%a, micro_batch => 6, rc => 'selective'));
    agrees('SolActGPaper', $g->{state} + $g->{stored}, '4.7: the colleague\'s sum');
    ok($g->{state} + $g->{stored} < 80e9, '4.7: ... is under 80 GB');
    agrees('SolActGBytesPerGpu', $g->{total}, '4.7: the whole sum');
    says('SolActGVerdict', 'does not fit', '4.7: it does not fit');
    for my $k (qw(gathered logits context fragmentation)) {
        agrees('SolActG' . ucfirst($k) . 'Bytes', $g->{$k}, "4.7: $k");
    }
    agrees('SolActGRecomputingBytes', $g->{activations} - $g->{stored}, '4.7: the recomputed layer');
    agrees('SolActGBufferBytes', $g->{buffers}, '4.7: buffers');
}

# 4.8: minigpt keeps 16h + as + 4 fp32 numbers per position and layer.
{
    agrees('SolActHAlpha', 64, '4.8: alpha is 16 tensors of h, 4 bytes each');
    agrees('SolActHBeta', 4, '4.8: beta is the probabilities, 4 bytes each');
    agrees('SolActHGamma', 16, '4.8: gamma is the layer norms\' statistics');
    my $bytes = sub { my ($h, $s) = @_; 4 * $s * 8 * (16 * $h + 4 * $s + 4) };
    agrees('SolActHSmall', $bytes->(64, 64), '4.8: measured at (64, 64)');
    agrees('SolActHWide', $bytes->(128, 64), '4.8: at (128, 64)');
    agrees('SolActHLong', $bytes->(64, 128), '4.8: at (64, 128)');
    agrees('SolActHBoth', $bytes->(128, 128), '4.8: at (128, 128)');
    is($m->{SolActHPredicted}, $m->{SolActHBoth}, '4.8: the fit predicts the fourth run');
}

# One solution per exercise, every macro defined, the headings in the PDF.
my $tex = slurp("$root/solutions/04-activations.tex");
my $count = () = exercise_items("$root/exercises/04-activations.tex");
cmp_ok($count, '>=', 6, "chapter 4 has at least six exercises ($count)");
my @headings = $tex =~ /\\solactexercise\{(\d+)\}/g;
is_deeply(\@headings, [1 .. $count], 'one solution per exercise, in order');
my %used = map { $_ => 1 } $tex =~ /\\(SolAct\w+)/g;
is_deeply([grep { !exists $m->{$_} } sort keys %used], [], 'every SolAct macro is defined');
for my $input ($tex =~ /\{(build\/solutions\/[^}]+)\}/g) {
    ok(-s "$root/$input", "$input exists and is not empty");
}
(my $s = pdf_text("$root/build/solutions.pdf")) =~ s/[ \t]+/ /g;
# The chapter ends where the next begins, on a new page (a form feed).
my ($chapter) = $s =~ /(Activation memory\n.*?)(?=\n\f?Chapter \d|\z)/s;
$chapter //= '';
like($chapter, qr/^Exercise 4\.$_$/m, "solutions.pdf has Exercise 4.$_") for 1 .. $count;
unlike($chapter, qr/\?\?/, 'no unresolved reference in the solutions of chapter 4');
done_testing();
