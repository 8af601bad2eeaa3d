#!/usr/bin/perl
# tests/05-layout.t: fleet layout on the running example (100e9 dense,
# 55 layers of hidden 12,288, 96 heads, sequence 4,096, 2,097,152 tokens a
# step on 1,024 H100) and on Llama 3 405B, against arithmetic done here:
# design A = TP8 x FSDP128 sends 3 x 25 GB x 127/128 across nodes; design B =
# TP8 x PP8 x DP16 sends a ring all-reduce of 100e9/64 x 2 B over 16 ranks
# plus 2 x 32 activations of 4,096 x 12,288 x 2 B / 8; A computes
# 6 x 100e9 x 16,384 / 8 FLOPs; B's 1F1B bubble is 7/32 of compute. Then the
# decisions: A at 400 Gbps, a pipelined layout without FSDP at 200 Gbps, B
# ahead of A at 200 and behind at 400; TP inside the node; the JSON's shape;
# bad input refused.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $fleet = root() . '/build/bin/fleet';
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT('run make first');

# fleet layout's list, read once for each set of flags: the search is
# deterministic, and the whole list's JSON (megabytes) takes seconds to decode.
my %layouts;
sub layouts {
    my $key = join "\0", @_;
    $layouts{$key} //= fleet_json('layout', @_)->{layouts};
    return @{ $layouts{$key} };
}
sub best { return (layouts(@_))[0]; }

my ($N, $L, $h, $s, $G, $batch) = (100e9, 55, 12288, 4096, 1024, 2097152);
my @A = qw(--tp 8 --pp 1 --dp 128 --fsdp 1);
my @B = qw(--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule 1f1b --micro-batch 1);

# ---------------------------------------------------------- design A ----
my $a = best(@A);
is($a->{layers}, 55, 'the running example has 55 layers (12 L h^2 = 100e9)');
is($a->{microbatches}, 1, 'A runs its 4 sequences as one micro-batch');
is($a->{micro_batch}, 4, 'A: 16,384 tokens a replica');
close_to($a->{nic_bytes}, 3 * $N / 8 * 2 * 127 / 128, 1e-9,
         'A: FSDP sends 3 x 25 GB x 127/128 per GPU per step');
close_to($a->{nic_line_s}, 3 * $N / 8 * 2 * 127 / 128 / 50e9, 1e-9,
         'A: about 1.5 s at 50 GB/s');
my $dense = 6 * $N * $batch / $G;
close_to($dense, 1.2288e15, 1e-12, 'A: 6 x 100e9 x 16,384 / 8 = 1.23e15 FLOPs');
close_to($a->{dense_compute_s}, $dense / (989e12 * 0.4), 1e-9,
         'A: 3.1 s of 6N compute at 40 %');
close_to($a->{model_flops}, ($dense + 12 * $L * $s * $h * $batch / $G), 1e-9,
         'A: model FLOPs add the attention scores, 12 L s h a token');
close_to($a->{nic_line_ratio}, 0.48, 0.01, 'A: NIC at line rate / compute = 0.48');
ok($a->{fits}, 'A fits in 80 GB');
is($a->{tp_nic}, 0, 'A: TP8 stays on NVLink');
{
    my $a200 = best(@A, qw(--nic-gbps 200));
    close_to($a200->{nic_line_ratio}, 0.96, 0.01, 'A at 200 Gbps: ratio about 1');
}

# ---------------------------------------------------------- design B ----
my $b = best(@B);
is($b->{microbatches}, 32, 'B: 32 micro-batches of one sequence');
close_to($b->{bubble_over_compute}, 7 / 32, 1e-12, 'B: bubble 7/32 of compute');
my $dp_b = 2 * 15 / 16 * $N / 64 * 2;
my $pp_b = 2 * 32 * $s * $h * 2 / 8;
close_to($b->{dp_bytes}, $dp_b, 1e-9,
         'B: DP ring all-reduce of 100e9/64 x 2 B over 16 ranks = 5.9 GB');
close_to($b->{pp_bytes}, $pp_b, 1e-9, 'B: 64 activation sends of 12.6 MB');
close_to($b->{nic_bytes}, $dp_b + $pp_b, 1e-9, 'B: cross-node bytes');
ok($b->{fits}, 'B fits in 80 GB');
{
    # Full recomputation runs the forward's two all-reduces again: six a
    # layer a micro-batch, on the heaviest stage's 7 layers.
    my $bf = best(@B, qw(--recompute full));
    my $act = $s * $h * 2;
    close_to($bf->{tp_bytes}, 6 * 7 * 32 * 2 * 7 / 8 * $act, 1e-9,
             'B with full recomputation: six TP all-reduces a layer');
    close_to($b->{tp_bytes}, 4 * 7 * 32 * 2 * 7 / 8 * $act, 1e-9,
             'B without: four');
}
{
    # Interleaving 55 layers on 8 stages: stages of 7 and 6 layers, chunks
    # of unequal size. The closed form (p-1)/(v m) would assume equal
    # chunks; the simulated bubble is larger, and still below 1F1B's
    # (p-1)/m. With equal chunks (55 layers on 5 stages of 11, v = 11) the
    # planner keeps the closed form.
    my $u = best(qw(--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule interleaved
                    --chunks 6 --micro-batch 1));
    cmp_ok($u->{bubble_over_compute}, '>', 1.2 * 7 / (6 * 32),
           'unequal chunks: the bubble exceeds (p-1)/(v m)');
    cmp_ok($u->{bubble_over_compute}, '<', 7 / 32,
           'unequal chunks: ... and is below 1F1B\'s (p-1)/m');
    my $e = best(qw(--tp 8 --pp 5 --dp 32 --fsdp 0 --schedule interleaved
                    --chunks 11 --micro-batch 1 --gpus 1280
                    --batch-tokens 655360));
    close_to($e->{bubble_over_compute}, 4 / (11 * $e->{microbatches}), 1e-9,
             'equal chunks: the closed form (p-1)/(v m)');
}

# ------------------------------------------------------- the decision ----
# At 400 Gbps design A and the best interleaved pipeline are level: A is
# the best layout without a pipeline and within 3 % of the best of all (a
# near-tie: they trade places at a NIC near 400 Gbps).
my @l400 = layouts();
my $w400 = $l400[0];
my ($a400) = grep { $_->{pp} == 1 } @l400;
is("$a400->{tp} $a400->{pp} $a400->{dp} $a400->{fsdp}", '8 1 128 1',
   'at 400 Gbps design A is the best unpipelined layout');
cmp_ok($a400->{step_time_s}, "<", 1.03 * $w400->{step_time_s},
       "at 400 Gbps design A is within 3 % of the best ($w400->{layout})");
my $w200 = best(qw(--nic-gbps 200));
cmp_ok($w200->{pp}, '>', 1, "at 200 Gbps the winner is pipelined ($w200->{layout})");
is($w200->{fsdp}, 0, 'at 200 Gbps the winner does not use FSDP');
cmp_ok(best(@A)->{step_time_s}, '<', best(@B)->{step_time_s},
       'A beats B at 400 Gbps');
cmp_ok(best(@A, qw(--nic-gbps 200))->{step_time_s}, '>',
       best(@B, qw(--nic-gbps 200))->{step_time_s}, 'B beats A at 200 Gbps');
{
    my $t16 = best(qw(--tp 16 --cross-node-tp));
    is($t16->{tp_nic}, 1, 'TP16 crosses nodes');
    my $per_layer = 4 * 2 * 15 / 16 * $t16->{micro_batch} * $s * $h * 2;
    close_to($t16->{tp_bytes}, $per_layer * $L * $t16->{microbatches}, 1e-9,
             'TP16: four ring all-reduces a layer a micro-batch');
    cmp_ok($t16->{step_time_s}, '>', $w400->{step_time_s}, 'TP16 loses');
}

# ------------------------------------------------------ the JSON's shape --
my @all = layouts();
cmp_ok(scalar @all, '>', 100, 'many layouts are admitted');
my ($sorted, $fits_first) = (1, 1);
for my $i (1 .. $#all) {
    $fits_first = 0 if $all[$i]{fits} > $all[$i - 1]{fits};
    my $key = $all[$i]{fits} ? 'step_time_s' : 'memory_per_gpu_bytes';
    $sorted = 0 if $all[$i]{fits} == $all[$i - 1]{fits}
                && $all[$i]{$key} < $all[$i - 1]{$key} * (1 - 1e-12);
}
ok($fits_first, 'layouts that fit come first');
ok($sorted, 'then best first by step time (by memory among those that do not fit)');
for my $key (qw(tp pp cp dp fsdp schedule chunks microbatches recompute
                memory_per_gpu_bytes fits step_time_s mfu bubble
                comm_compute_ratio)) {
    ok(exists $all[0]{$key}, "each layout has $key");
}
my $bad_product = grep { $_->{tp} * $_->{cp} * $_->{pp} * $_->{dp} != $G } @all;
is($bad_product, 0, 'tp x cp x pp x dp = GPUs in every layout');
my $bad_tp = grep { 96 % $_->{tp} || $_->{tp} > 8 } @all;
is($bad_tp, 0, 'TP divides the heads and stays in the node');
for my $p (@all) {
    my $m = $p->{model_flops} / ($p->{step_time_s} * 989e12);
    if (abs($m - $p->{mfu}) > 1e-9) { fail("MFU of $p->{layout}"); last; }
}
pass('MFU = model FLOPs / (step x peak) in every layout');

# ---------------------------------------------------------------- 405B --
my @llama = qw(--layers 126 --hidden 16384 --ffn 53248 --gated --heads 128
               --kv-heads 8 --vocab 128000 --seq 8192 --batch-tokens 16777216);
{
    my @l = layouts(@llama, qw(--gpus 16384));
    my $w = $l[0];
    is($w->{tp}, 8, "405B on 16,384: TP8 ($w->{layout})");
    cmp_ok($w->{pp}, '>', 1, '405B on 16,384: pipelined across nodes');
    is($w->{cp}, 1, '405B at 8k tokens: no context parallelism');
    my ($llama) = grep { $_->{tp} == 8 && $_->{pp} == 16 && $_->{dp} == 128 } @l;
    ok($llama && $llama->{fits}, 'TP8 x PP16 x DP128 fits');
    cmp_ok($llama->{step_time_s}, '<', 1.10 * $w->{step_time_s},
           'TP8 x PP16 x DP128 is within 10 % of the best step');
    # The near-tie's one condition: with a data axis four times slower the
    # sixteen stages, which halve its gradients, win.
    my $slow = best(@llama, qw(--gpus 16384 --nic-gbps 100));
    is("$slow->{tp} $slow->{pp} $slow->{dp}", '8 16 128',
       "405B at 100 Gbps: Llama 3's TP8 x PP16 x DP128 wins ($slow->{layout})");
    my $per_layer = 2 * 16384**2 + 2 * 16384 * 1024 + 3 * 16384 * 53248;
    close_to($w->{params}, 126 * $per_layer + 2 * 128000 * 16384, 1e-12,
             '405B: parameters from the shape');
}

# ------------------------------------------------------------ bad input --
my @bad = (
    [ '--tp', qw(--tp 7) ], [ '--tp', qw(--tp 8 --pp 8 --dp 8 --cp 1) ],
    [ '--fsdp', qw(--fsdp 2) ], [ '--schedule', qw(--schedule gpipe) ],
    [ '--schedule', qw(--schedule zigzag) ],
    [ '--recompute', qw(--recompute partial) ], [ '--attention', qw(--attention tiled) ], [ '--pp', qw(--pp 100) ],
    [ '--chunks', qw(--chunks 2) ], [ '--kv-heads', qw(--kv-heads 5) ],
    [ '--batch-tokens', qw(--batch-tokens 1000) ], [ '--gpus', qw(--gpus 0) ],
    [ '--overlap', qw(--overlap 1.5) ], [ '--nic-gbps', qw(--nic-gbps -4) ],
    [ '--gpu', qw(--gpu v100) ], [ '--gpus', qw(--gpus 1000 --tp 8 --pp 5) ],
);
for my $case (@bad) {
    my ($flag, @args) = @$case;
    refused_no_output("layout @args", $flag, $fleet, 'layout', @args);
}

# ------------------------------------------------------------ the book --
# The chapter's macros against the arithmetic above, and the transcripts and
# figures in the woven book.
{
    my $n = read_macros(root() . '/build/numbers/05-{des,pipe,tp16,lat,plan,overlap,decide}*.tex');
    macro_agrees($n, 'DesANicBytes', 3 * $N / 8 * 2 * 127 / 128, 'book: A sends 74.4 GB');
    macro_agrees($n, 'DesBDpBytes', $dp_b, 'book: B all-reduces 5.86 GB');
    macro_agrees($n, 'DesBPpBytes', $pp_b, 'book: B sends 805 MB of activations');
    macro_agrees($n, 'DesBNicBytes', $dp_b + $pp_b, 'book: B crosses 6.66 GB');
    macro_agrees($n, 'DesANicLineRatio', 3 * $N / 8 * 2 * 127 / 128 / 50e9
                 / ($dense / (989e12 * 0.4)), 'book: A ratio 0.48');
    macro_agrees($n, 'DesAslowNicLineRatio', 3 * $N / 8 * 2 * 127 / 128 / 25e9
                 / ($dense / (989e12 * 0.4)), 'book: A ratio at 200 Gbps');
    macro_agrees($n, 'DesBBubbleOverCompute', 100 * 7 / 32, 'book: B bubble 7/32');
    macro_agrees($n, 'PipeStepTime', (32 + 8 - 1) * 3, 'book: simulated step');
    macro_agrees($n, 'PipeBubble', 100 * 7 / 39, 'book: 7/39 of the step');
    macro_agrees($n, 'PipeInterBubbleOverCompute', 100 * 7 / (4 * 32),
                 'book: interleaved 7/128');
    macro_agrees($n, 'TpWideRingGb', 4 * 2 * 15 / 16 * 16384 * $h * 2 * $L / 1e9,
                 'book: TP16 ring bytes a micro-batch');
    # chapter 3's NIC latency, 14 us a ring step
    macro_agrees($n, 'LatFourDpLatencyS', 3 * 55 * 511 * 14e-6,
                 'book: FSDP latency on 512 nodes');
    is($n->{PlanOther}, 'TP8 × FSDP128', 'book: design A is the best of its kind');
    # What decides A against B, from the designs' own fields.
    for my $case ([A => ()], [Aslow => qw(--nic-gbps 200)]) {
        my ($tag, @nic) = @$case;
        my ($da, $db) = (best(@A, @nic), best(@B, @nic));
        macro_agrees($n, "Ab${tag}FsdpExposedTime", $da->{exposed_s} - $da->{tp_s},
                     "book: $tag: FSDP's exposed seconds, less TP's");
        macro_agrees($n, "Ab${tag}BubbleTime", $db->{bubble_s}, "book: $tag: B's bubble");
        macro_agrees($n, "Ab${tag}BWaitTime", $db->{exposed_s} - $db->{tp_s},
                     "book: $tag: B's exposed PP and DP");
        my $win = $da->{step_time_s} < $db->{step_time_s} ? 'A' : 'B';
        is($n->{"Ab${tag}Winner"}, $win, "book: $tag: the winner is $win");
        my ($sa, $sb) = ($da->{step_time_s}, $db->{step_time_s});
        my ($lo, $hi) = $sa < $sb ? ($sa, $sb) : ($sb, $sa);
        macro_agrees($n, "Ab${tag}Margin", 100 * ($hi - $lo) / $hi,
                     "book: $tag: the winner's margin");
    }
    cmp_ok($n->{DesAslowDpS}, '>', $n->{DesAslowComputeS},
           'book: at 200 Gbps and 80 % A\'s FSDP takes longer than its compute');
    is($n->{AbAWinner}, 'A', 'book: the prose has A ahead at 400 Gbps');
    is($n->{AbAslowWinner}, 'B', 'book: ... and B at 200');
    macro_agrees($n, 'TpWideMicroComputeTime', 6 * $N * 16384 / 16 / (989e12 * 0.4),
                 'book: a 16,384-token micro-batch on 16 GPUs, 1.55 s');
    macro_agrees($n, 'TpWideSpreadTime', best(qw(--tp 16 --cross-node-tp))->{tp_s} / 8,
                 "book: TP16's all-reduces over eight NICs");
    # Ten trillion tokens on 5,120 GPUs: days = 10e12 / batch x step; with
    # the same batch the best idles about as long as it computes.
    my $t = read_macros(root() . '/build/numbers/05-{tenfold-wide,eff-flip,search-off,big-margin}.tex');
    for my $case ([Two => 2097152], [Ten => 10485760]) {
        my ($tag, $tokens) = @$case;
        my $w = best('--gpus', 5120, '--batch-tokens', $tokens);
        macro_agrees($t, "TenWide${tag}Days", 10e12 / $tokens * $w->{step_time_s} / 86400,
                     "book: ten trillion tokens, $tokens a step: days");
        macro_agrees($t, "TenWide${tag}Mfu", 100 * $w->{mfu}, "book: ... MFU");
        cmp_ok($w->{bubble_over_compute}, '>=', 0.95,
               'book: with the same batch the bubble is as long as the compute')
            if $tag eq 'Two';
    }
    # The kernel rate from which B overtakes A at 400 Gbps.
    (my $flip = $t->{EffFlip}) =~ s/\\,.*//;
    my $e = $flip / 100;
    cmp_ok(best(@B, '--compute-efficiency', $e)->{step_time_s}, '<=',
           best(@A, '--compute-efficiency', $e)->{step_time_s},
           "book: B overtakes A with kernels at $flip %");
    cmp_ok(best(@B, '--compute-efficiency', $e - 0.01)->{step_time_s}, '>',
           best(@A, '--compute-efficiency', $e - 0.01)->{step_time_s},
           '... and not a point below');
    # The search's layouts off the figure's axes.
    my @every = layouts();
    is($t->{SearchAbove}, scalar(grep { $_->{step_time_s} > 12 } @every),
       'book: layouts above the 12 s of the search figure');
    is($t->{SearchLeft}, scalar(grep { $_->{memory_per_gpu_bytes} < 10e9 } @every),
       'book: layouts left of its 10 GB');
    unlike($n->{PlanSlowLayout}, qr/FSDP/, 'book: no FSDP at 200 Gbps');
    cmp_ok($n->{OverlapLow}, '<=', 0.5, 'book: the default overlap is in the range');
    cmp_ok($n->{OverlapHigh}, '>=', 0.5, 'book: ... on both sides');
    cmp_ok($n->{PlanReversalNicGbps} =~ s/,//r, '>', 400,
           'book: at 400 Gbps the pipeline is still ahead of A (a near-tie)');

    # The published runs: the layout's efficiency (compute / step) and the
    # kernel rate each published MFU implies, MFU / (predicted MFU / 0.4).
    my $p = read_macros(root() . '/build/numbers/05-pub-steps.tex');
    my %implied;
    for my $row ([Eight => 8192, 1, 64, 8192, 0.43],
                 [Sixteen => 16384, 1, 128, 8192, 0.41],
                 [Long => 16384, 16, 8, 131072, 0.38]) {
        my ($name, $gpus, $cp, $dp, $seq, $mfu) = @$row;
        my @run = ((grep { $_ ne '--seq' && $_ ne '8192' } @llama), '--seq', $seq,
                   '--gpus', $gpus, '--tp', 8, '--cp', $cp, '--pp', 16,
                   '--dp', $dp, '--fsdp', 0, '--schedule', 'interleaved');
        my $w = best(@run, qw(--compute-efficiency 0.4));
        my $flops = 6 * $w->{params} + 12 * 126 * $seq * 16384;
        close_to($w->{model_flops}, $flops * 16777216 / $gpus, 1e-9,
                 "$name: model FLOPs 6N + 12Lsh a token");
        my $step = $w->{model_flops} / ($mfu * 989e12);
        macro_agrees($p, "Pub${name}PublishedStep", $step,
                     "$name: the step the published MFU implies");
        my $eff = $w->{compute_s} / $w->{step_time_s};
        macro_agrees($p, "Pub${name}LayoutEfficiency", 100 * $eff,
                     "$name: the layout's efficiency");
        # MFU = rate x efficiency x model / (hardware x imbalance), so the
        # implied rate is the published MFU over the predicted one, times 0.4
        my $imb = 8 * 16 / 126;
        my $rate = $mfu * $w->{hardware_flops} * $imb / ($w->{model_flops} * $eff);
        macro_agrees($p, "Pub${name}ImpliedEfficiency", 100 * $rate,
                     "$name: the implied compute efficiency");
        cmp_ok($rate, '>', 0.5, "$name: the kernels must beat 50 % of peak");
        cmp_ok($rate, '<', 0.8, "$name: ... and stay under the GEMMs' 80 %");
        if ($name ne 'Long') {     # the prose: near the low end of 70-80 %
            cmp_ok($rate, '>', 0.65, "$name: near the low end of 70-80 %");
            cmp_ok($rate, '<', 0.77, "$name: ... and not above its middle");
        }
        $implied{$name} = $rate;
        if ($name eq 'Long') {
            # a fused kernel stores no scores; materialised, they do not fit
            ok($w->{fits}, 'Long: fits with a fused attention kernel');
            my $m = best(@run, qw(--attention materialized));
            ok(!$m->{fits}, 'Long: with materialised scores it does not fit');
        }
        my $h = best(@run, qw(--compute-efficiency 0.75));
        macro_agrees($p, "Pub${name}MfuAtHigh", 100 * $h->{mfu},
                     "$name: the predicted MFU at 75 %");
    }
    cmp_ok($implied{Long}, '<', $implied{$_}, "Long implies slower kernels than $_")
        for qw(Eight Sixteen);
    cmp_ok(best((grep { $_ ne '--seq' && $_ ne '8192' } @llama), qw(--seq 131072
               --gpus 16384 --tp 8 --cp 16 --pp 16 --dp 8 --fsdp 0 --schedule
               interleaved --compute-efficiency 0.75))->{mfu}, '>', 0.38,
           'Long: at 75 % the planner over-predicts the published 38 %');

    my $book = root() . '/build/book.pdf';
    (my $flat = pdf_text($book)) =~ s/\s+/ /g;
    my ($chapter) = $flat =~ /(Chapter 5 The layout decision.*?)Chapter 6 /;
    ok(defined $chapter, 'the book has chapter 5');
    $chapter //= '';
    for my $t ('05-plan', '05-plan-slow', '05-pipeline', '05-405b') {
        my $text = slurp(root() . "/build/transcripts/$t.txt") // '';
        my ($line) = grep { /\S/ } split /\n/, $text;
        (my $want = $line // 'missing') =~ s/\s+/ /g;
        ok(index($chapter, $want) >= 0, "the $t transcript is in the chapter");
    }
    for my $f ('05-ratio', '05-memory', '05-search', '05-timeline') {
        ok(-s root() . "/build/figures/$f.pdf", "figure $f was drawn");
    }
    like($chapter, qr/Figure 5\.1/, 'figure 5.1 is placed');
    like($chapter, qr/Design A, TP8 × FSDP128/, 'design A is defined');
    like($chapter, qr/Design B, TP8 × PP8 × DP16/, 'design B is defined');
    like($chapter, qr/Capstone drill/, 'the capstone drill is there');
}

done_testing();
