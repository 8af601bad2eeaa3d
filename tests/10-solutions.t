#!/usr/bin/perl
# tests/10-solutions.t: the worked solutions of chapter 10 (pipeline
# parallelism) against the closed forms of the chapter.
#
# Every number solutions/10-pipeline.sh derived (build/solutions/10-ex*) is
# worked out again here, in Perl, from the exercise's inputs: the bubbles of
# GPipe and 1F1B, (p-1)/(m+p-1); of the interleaved schedule,
# (p-1)/(vm+p-1); of zb-h1, (p-1)(F+B-W)/(m(F+B+W) + (p-1)(F+B-W)); the
# micro-batches in flight (m; p - r; Megatron's interleaved warm-up; p); the
# smallest m under 5 %; W's share of a block's backward, 3h/(6h+s); the LM
# head's FLOPs; the sends of an interleaved step, 2m(vp-1). fleet's JSON is
# held to the same formulas, and each macro to the digits it was printed
# with. Each sentence of the solutions that reads a number (equal, fits,
# does not fit, still wins, recovers little) is checked against the number.
# Exercise 10.8 reads the lab's autograder. The test also checks that the
# solution uses only macros the script defines, that the statements give
# no answer away, and that build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/10-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use List::Util qw(min sum);
use POSIX qw(floor);
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/10-ex9-derived.tex", 'the solution script has run (build/solutions/10-*)')
    or BAIL_OUT('no build/solutions/10-ex9-derived.tex: run make first');

my %macro = %{ read_macros("$sols/10-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
sub json {
    my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
    return JSON::PP::decode_json($text);
}
# A --stages CSV: stage => { warmup, peak_in_flight, ... }.
sub stages {
    my $text = slurp("$sols/$_[0]") // die "no $_[0]";
    my ($head, @rows) = split /\n/, $text;
    my @names = split /,/, $head;
    my %by;
    for (@rows) {
        my %row;
        @row{@names} = split /,/;
        $by{ $row{stage} } = \%row;
    }
    return \%by;
}
my %word = (1 => 'One', 2 => 'Two', 3 => 'Three', 4 => 'Four', 8 => 'Eight',
            16 => 'Sixteen');

# The closed forms, as fractions of the step, with F = 1, B + W = R = 2.
sub plain { my ($p, $m) = @_; return ($p - 1) / ($m + $p - 1) }
sub interleaved { my ($p, $m, $v) = @_; return ($p - 1) / ($v * $m + $p - 1) }
sub zb {
    my ($p, $m, $w) = @_;
    my ($B, $W) = (2 * (1 - $w), 2 * $w);
    my $idle = ($p - 1) * (1 + $B - $W);
    return $idle / ($m * 3 + $idle);
}
# Peak micro-batches in flight on stage r, in stages' worth.
sub in_flight {
    my ($s, $p, $m, $r, $v) = @_;
    return $m if $s eq 'gpipe';
    return min($p - $r, $m) if $s eq '1f1b';
    return $p if $s eq 'zb-h1';                      # for m >= p
    return min(2 * ($p - $r - 1) + ($v - 1) * $p + 1, $m * $v) / $v;
}

# ----------------------------------------------------------------- 10.1 ----
{
    my ($p, $m) = (8, 16);
    my %run = (gpipe => ['Gpipe', 'gpipe', plain($p, $m)],
               '1f1b' => ['OneFOneB', '1f1b', plain($p, $m)],
               inter2 => ['InterTwo', 'interleaved', interleaved($p, $m, 2), 2],
               inter4 => ['InterFour', 'interleaved', interleaved($p, $m, 4), 4],
               zb => ['Zb', 'zb-h1', zb($p, $m, 0.5)]);
    for my $file (sort keys %run) {
        my ($name, $s, $want, $v) = @{ $run{$file} };
        my $j = json("10-ex1-$file");
        is($j->{schedule}, $s, "10.1: $file runs $s");
        ok(abs($j->{bubble} - $want) < 1e-9, "10.1: $s simulated = closed form");
        agrees("SolTenA${name}Bubble", 100 * $want, "10.1: ${file}'s bubble");
        agrees("SolTenA${name}PeakFirst", in_flight($s, $p, $m, 0, $v),
               "10.1: ${file}'s first stage's peak");
        agrees("SolTenA${name}PeakLast", in_flight($s, $p, $m, $p - 1, $v),
               "10.1: ${file}'s last stage's peak");
    }
    is($macro{SolTenAGpipeBubble}, $macro{SolTenAOneFOneBBubble},
       '10.1: GPipe and 1F1B print the same bubble');
    is(value('SolTenAZbPeakLast'), $p * value('SolTenAOneFOneBPeakLast'),
       "10.1: zb-h1's last stage holds p times 1F1B's");
    cmp_ok(value('SolTenAInterFourPeakFirst'), '>', value('SolTenAOneFOneBPeakFirst'),
           "10.1: the interleaved first stage holds more than 1F1B's");
    is(value('SolTenAOneFOneBIdle') / value('SolTenAOneFOneBStepTime') + 0,
       json('10-ex1-1f1b')->{bubble} + 0, "10.1: 1F1B's idle units over its step");
    is(value('SolTenAZbIdle'), $p - 1, '10.1: zb-h1 idles p - 1 units');
    like(slurp("$sols/10-ex1-zb.txt") // '', qr/^closed form/m,
         "10.1: the transcript shows zb-h1's closed form");
}

# ----------------------------------------------------------------- 10.2 ----
{
    my %least;
    for my $p (4, 8, 16) {
        for my $s (['OneFOneB', sub { plain($p, $_[0]) }],
                   ['Zb', sub { zb($p, $_[0], 0.5) }]) {
            my ($name, $bubble) = @$s;
            my $m = 1;
            $m++ while $bubble->($m) >= 0.05;
            my $key = "SolTenB$name$word{$p}";
            is($macro{"${key}M"}, $m, "10.2: $name, p = $p: $m micro-batches");
            cmp_ok($m, '>=', $p, "10.2: $name, p = $p: m >= p (the closed form holds)");
            agrees("${key}Bubble", 100 * $bubble->($m), "10.2: $name, p = $p: under 5 %");
            cmp_ok(value("${key}Bubble"), '<', 5, "10.2: $name, p = $p: printed under 5");
            agrees("${key}Before", 100 * $bubble->($m - 1), "10.2: $name, p = $p: m - 1");
            is($macro{"${key}Replicas"}, floor(1024 / $m), "10.2: $name, p = $p: pipelines");
            $least{$name}{$p} = $m;
        }
        my $ratio = $macro{"SolTenBZb$word{$p}Replicas"}
                  / $macro{"SolTenBOneFOneB$word{$p}Replicas"};
        ok($ratio > 2.5 && $ratio < 3.5, "10.2: p = $p: about three times the pipelines");
    }
    is($least{OneFOneB}{8}, 19 * 7 + 1, '10.2: 1F1B: m > 19(p - 1)');
    like(slurp("$sols/10-ex2.txt") // '',
         qr/^\$ fleet pipeline --pp 8 --micro-batches $least{Zb}{8} --schedule zb-h1$/m,
         '10.2: the transcript runs the m found');
}

# ----------------------------------------------------------------- 10.3 ----
{
    my %j = map { $_ => json("10-ex3-$_") } qw(gpipe 1f1b interleaved);
    my $layer = $j{'1f1b'}{bytes_per_layer};
    is($j{'1f1b'}{heaviest_stage_layers}, 12, '10.3: 12 layers a stage');
    is($j{gpipe}{micro_batches_in_flight}, 32, '10.3: GPipe holds all 32');
    is($j{'1f1b'}{micro_batches_in_flight}, 8, '10.3: 1F1B holds p on stage 0');
    for my $s (qw(gpipe 1f1b)) {
        ok(abs($j{$s}{activation_bytes} - 12 * $j{$s}{micro_batches_in_flight} * $layer) < 1,
           "10.3: $s: layers x in flight x bytes per layer");
    }
    is($j{gpipe}{fits}, 0, '10.3: GPipe does not fit');
    is($j{'1f1b'}{fits}, 1, '10.3: 1F1B fits');
    is($j{interleaved}{fits}, 0, '10.3: interleaved (2 chunks) does not fit');
    my %zb = %{ stages('10-ex3-zb-h1-stages.csv') };
    my %one = %{ stages('10-ex3-1f1b-stages.csv') };
    is($zb{$_}{peak_in_flight}, 8, "10.3: zb-h1 holds p on stage $_") for 0 .. 7;
    is($one{$_}{peak_in_flight}, 8 - $_, "10.3: 1F1B holds p - r on stage $_") for 0 .. 7;
    agrees('SolTenCZbStageGB', 8 * 12 * $layer / 1e9, "10.3: zb-h1's heaviest stage");
    is($macro{SolTenCZbStageGB}, $macro{SolTenCOneFOneBActGB},
       "10.3: ... prints what 1F1B's first stage holds");
    agrees('SolTenCOneFOneBLastGB', 1 * 12 * $layer / 1e9, "10.3: 1F1B's last stage");
    is($macro{SolTenCOneFOneBHeld}, 36, '10.3: 1F1B holds p(p+1)/2 stage-loads');
    is($macro{SolTenCZbHeld}, 64, '10.3: zb-h1 holds p^2');
    agrees('SolTenCOneFOneBPipelineGB', 36 * 12 * $layer / 1e9, '10.3: 1F1B over the pipeline');
    agrees('SolTenCZbPipelineGB', 64 * 12 * $layer / 1e9, '10.3: zb-h1 over the pipeline');
    agrees('SolTenCTotalRatio', 64 / 36, '10.3: the ratio');
    for my $s (['Gpipe', 'gpipe'], ['OneFOneB', '1f1b'], ['Inter', 'interleaved']) {
        agrees("SolTenC$s->[0]GpuGB", $j{$s->[1]}{bytes_per_gpu} / 1e9, "10.3: $s->[1] in all");
    }
    # The last stage's other bytes are its row of fleet's table (GPU total
    # less activations, each printed to three figures), and both macros are
    # printed to three figures: within 0.05 + 0.005 + 0.05 + 0.05 GB.
    my $zb_last = value('SolTenCZbLastGpuGB');
    cmp_ok(value('SolTenCLastOtherGB'), '>', 0, "10.3: the last stage holds more than activations");
    ok(abs($zb_last - value('SolTenCLastOtherGB') - 8 * 12 * $layer / 1e9) <= 0.16,
       "10.3: zb-h1's last stage in all (\\SolTenCZbLastGpuGB)")
        or diag("printed $zb_last");
    cmp_ok($zb_last * 1e9, '<', $j{'1f1b'}{gpu_memory_bytes}, "10.3: ... which fits");
}

# ----------------------------------------------------------------- 10.4 ----
{
    my ($p, $m) = (8, 32);
    my $one = json('10-ex4-1f1b');
    ok(abs($one->{bubble} - plain($p, $m)) < 1e-9, '10.4: 1F1B at p = 8, m = 32');
    my @shapes = ([12288, 4096], [4096, 4096], [4096, 32768], [4096, 131072]);
    my $last_gain = 1e9;
    for my $k (1 .. 4) {
        my ($h, $s) = @{ $shapes[$k - 1] };
        my $name = "SolTenD$word{$k}";
        agrees("${name}Share", 3 * $h / (6 * $h + $s), "10.4: shape $k: 3h/(6h+s)");
        my $w = $macro{"${name}Share"};
        my $j = json("10-ex4-$k");
        is($j->{weight_share} + 0, $w + 0, "10.4: shape $k: fleet ran the printed share");
        ok(abs($j->{bubble} - zb($p, $m, $w)) < 1e-9, "10.4: shape $k: simulated = closed form");
        agrees("${name}Bubble", 100 * zb($p, $m, $w), "10.4: shape $k: the bubble");
        agrees("${name}IdleRatio", (3 - 4 * $w) / 3, "10.4: shape $k: 1 - 4w/3 of 1F1B's idle");
        my $gain = plain($p, $m) / zb($p, $m, $w);
        agrees("${name}Gain", $gain, "10.4: shape $k: 1F1B's bubble over zb-h1's");
        cmp_ok($gain, '<', $last_gain, "10.4: shape $k: longer sequences gain less");
        $last_gain = $gain;
    }
    cmp_ok($last_gain, '<', 1.2, '10.4: at 131,072 tokens zb-h1 recovers little');
}

# ----------------------------------------------------------------- 10.5 ----
{
    ok(abs(json('10-ex5-a-inter')->{bubble} - interleaved(8, 32, 2)) < 1e-9,
       '10.5 A: interleaved, 2 chunks');
    cmp_ok(value('SolTenDOneBubble'), '<', value('SolTenEAInterBubble'),
           "10.5 A: zb-h1's bubble is below the interleaved schedule's");
    my $w = $macro{SolTenEBShare};
    agrees('SolTenEBShare', 3 * 5120 / (6 * 5120 + 4096), "10.5 B: W's share");
    my %want = ('1f1b' => plain(4, 8), inter2 => interleaved(4, 8, 2),
                inter5 => interleaved(4, 8, 5), zb => zb(4, 8, $w));
    my %name = ('1f1b' => 'OneFOneB', inter2 => 'InterTwo', inter5 => 'InterFive',
                zb => 'Zb');
    for my $run (sort keys %want) {
        ok(abs(json("10-ex5-b-$run")->{bubble} - $want{$run}) < 1e-9,
           "10.5 B: $run simulated = closed form");
        agrees("SolTenEB$name{$run}Bubble", 100 * $want{$run}, "10.5 B: $run");
    }
    cmp_ok($want{inter5}, '<', $want{zb}, '10.5 B: 5 chunks beat zb-h1');
    cmp_ok($want{inter5}, '<', $want{inter2}, '10.5 B: ... and 2 chunks');
    is(8 % 4, 0, '10.5 B: m is a multiple of p');
    my $mem = json('10-ex5-b-mem');
    is($mem->{fits}, 1, '10.5 B: the interleaved schedule fits');
    agrees('SolTenEBGpuGB', $mem->{bytes_per_gpu} / 1e9, '10.5 B: its bytes');
    cmp_ok($mem->{bytes_per_gpu}, '<', 0.5 * $mem->{gpu_memory_bytes},
           '10.5 B: room to spare (under half the card)');
}

# ----------------------------------------------------------------- 10.6 ----
{
    my ($L, $h, $V, $s, $p) = (32, 4096, 128256, 4096, 8);
    my $block = 24 * $h**2 + 4 * $s * $h;
    my $head = 2 * $h * $V;
    my $blocks = $head / $block;
    my $per = $L / $p;
    agrees('SolTenFBlockMFLOP', $block / 1e6, '10.6: a block per token');
    agrees('SolTenFHeadMFLOP', $head / 1e6, '10.6: the head per token');
    agrees('SolTenFHeadBlocks', $blocks, '10.6: the head in blocks');
    agrees('SolTenFLastBlocks', $per + $blocks, '10.6: the last stage');
    agrees('SolTenFSlowdown', ($per + $blocks) / $per, '10.6: how much slower');
    agrees('SolTenFIdleShare', 100 * (1 - $per / ($per + $blocks)), '10.6: the others wait');
    agrees('SolTenFIdeal', ($L + $blocks) / $p, '10.6: the ideal');
    my ($best, $slowest);
    for my $k (0 .. $per) {
        my $others = POSIX::ceil(($L - $k) / ($p - 1));
        my $worst = $k + $blocks > $others ? $k + $blocks : $others;
        ($best, $slowest) = ($k, $worst) if !defined $slowest || $worst <= $slowest;
    }
    is($macro{SolTenFBestLast}, $best, "10.6: the last stage keeps $best blocks");
    is($macro{SolTenFBestMoved}, $per - $best, '10.6: the blocks moved');
    is($macro{SolTenFBestOthers}, POSIX::ceil(($L - $best) / ($p - 1)), '10.6: the others');
    agrees('SolTenFBestLastLoad', $best + $blocks, "10.6: the last stage's load");
    agrees('SolTenFBestSlowest', $slowest, '10.6: the slowest stage');
    agrees('SolTenFSpeedup', ($per + $blocks) / $slowest, '10.6: the speed-up');
    cmp_ok($slowest, '>=', ($L + $blocks) / $p, '10.6: no better than the ideal');
}

# ----------------------------------------------------------------- 10.7 ----
{
    my ($p, $m) = (4, 8);
    my $bytes = 4096 * 4096 * 2;
    agrees('SolTenGSendMB', $bytes / 1e6, '10.7: a send');
    for my $v (1, 2, 4) {
        my $n = "SolTenG$word{$v}";
        is($macro{"${n}Sends"}, 2 * $m * ($v * $p - 1), "10.7: v = $v: 2m(vp - 1) sends");
        is($macro{"${n}StageSends"}, 2 * $m * $v, "10.7: v = $v: 2mv from a middle stage");
        is($macro{"${n}FirstSends"}, $m * (2 * $v - 1), "10.7: v = $v: the first stage");
        agrees("${n}StageGB", 2 * $m * $v * $bytes / 1e9, "10.7: v = $v: its bytes");
        my $closed = $v == 1 ? plain($p, $m) : interleaved($p, $m, $v);
        agrees("${n}ZeroBubble", 100 * $closed, "10.7: v = $v: no time on the wire");
        cmp_ok(value("${n}TenthBubble"), '>', value("${n}ZeroBubble"),
               "10.7: v = $v: sends lengthen the bubble");
        cmp_ok(value("${n}QuarterBubble"), '>', value("${n}TenthBubble"),
               "10.7: v = $v: ... more as they slow");
    }
    for my $v (2, 4) {
        my @gap = map { value("SolTenGOne${_}Bubble") - value("SolTenG$word{$v}${_}Bubble") }
                      qw(Zero Tenth Quarter);
        ok($gap[0] > $gap[1] && $gap[1] > $gap[2],
           "10.7: v = $v: the interleaved schedule's advantage shrinks (@gap)");
        cmp_ok($gap[2], '>', 0, "10.7: v = $v: ... but it still wins at a quarter");
    }
    cmp_ok(value('SolTenGTwoQuarterBubble'), '<', value('SolTenGFourQuarterBubble'),
           '10.7: at a quarter, 2 chunks beat 4');
}

# ----------------------------------------------------------------- 10.8 ----
{
    my $t = slurp("$sols/10-ex8.txt") // '';
    like($t, qr/^lab-1f1b: OK$/m, '10.8: the transcript ends OK');
    is($macro{SolTenHScore}, '8/8', '10.8: the solution scores 8/8');
    is(scalar(() = $t =~ /^  PASS  /mg), 8, '10.8: it shows the eight checks');
    # 1F1B and zb-h1 for p = 4, m = 6, stage 1, written out here.
    my ($p, $m, $r) = (4, 6, 1);
    my $warmup = $p - $r - 1;
    is($macro{SolTenHWarmupOne}, $warmup, '10.8: stage 1 warms up with p - r - 1');
    my (@one, @zb);
    my ($f, $b) = (0, 0);
    my $backward = sub {
        push @one, 'B' . $b;
        push @zb, 'B' . $b;
        push @zb, 'W' . ($b - $r) if $b >= $r;
        $b++;
    };
    while ($f < $warmup) { push @one, 'F' . $f; push @zb, 'F' . $f; $f++ }
    while ($f < $m) { push @one, 'F' . $f; push @zb, 'F' . $f; $f++; $backward->() }
    $backward->() while $b < $m;
    push @zb, map { "W$_" } $m - $r .. $m - 1;
    is($macro{SolTenHStageOne}, "@one", "10.8: stage 1's 1F1B order");
    is($macro{SolTenHZbStageOne}, "@zb", "10.8: stage 1's zb-h1 order");
    is($macro{"SolTenHZbPeak$word{$_}"}, $p, "10.8: zb-h1 holds p on stage " . ($_ - 1))
        for 1 .. 4;
}

# ----------------------------------------------------------------- 10.9 ----
{
    my ($L, $p, $m) = (4, 4, 8);
    my %j = map { $_ => json("10-ex9-$_") } qw(gpipe 1f1b zb-h1);
    my %name = (gpipe => 'Gpipe', '1f1b' => 'OneFOneB', 'zb-h1' => 'Zb');
    for my $s (sort keys %j) {
        my $j = $j{$s};
        is($j->{pp}, $p, "10.9: $s on $p stages");
        is($j->{schedule}, $s, "10.9: $s is the schedule it ran");
        (my $peaks = $j->{peak_inflight_per_stage} // '') =~ tr/ /,/;
        my @want = map { in_flight($s, $p, $m, $_) } 0 .. $p - 1;
        is($peaks, join(',', @want), "10.9: $s: the peaks measured, by stage");
        is($macro{"SolTenI$name{$s}Peaks"}, join(', ', @want), "10.9: $s: printed");
        agrees("SolTenI$name{$s}SlotBytes", $j->{slot_bytes}, "10.9: $s: a slot's bytes");
        agrees("SolTenI$name{$s}FirstKB", $want[0] * $j->{slot_bytes} / 1e3,
               "10.9: $s: the first stage's slots");
        agrees("SolTenI$name{$s}LastKB", $want[-1] * $j->{slot_bytes} / 1e3,
               "10.9: $s: the last stage's slots");
    }
    is($j{gpipe}{slot_bytes}, $j{'1f1b'}{slot_bytes}, '10.9: GPipe and 1F1B slots are alike');
    my ($b, $T, $C) = @{ $j{'zb-h1'} }{qw(micro_batch seq hidden)};
    is($macro{SolTenIShape}, "$b, $T, $C", '10.9: the shapes the run reports');
    my $extra = 9 * $b * $T * $C * 4 * $L / $p;
    is($j{'zb-h1'}{slot_bytes} - $j{'1f1b'}{slot_bytes}, $extra,
       "10.9: zb-h1's slot keeps 9 b s h floats a layer more");
    agrees('SolTenIExtra', $extra, '10.9: the difference, printed');
    agrees('SolTenIExtraPredicted', $extra, '10.9: the prediction, printed');
    cmp_ok(value('SolTenIZbFirstKB'), '>', value('SolTenIOneFOneBFirstKB'),
           "10.9: zb-h1's first stage holds more than 1F1B's");
    my $v = slurp("$sols/10-ex9-verify.txt") // '';
    like($v, qr/^\$ mpiexec -n 4 minigpt --layers 4 --pp 4 \\$/m, '10.9: the command');
    verify_ok('10.9: zb-h1 --verify', $v);
}

# ------------------------------------------- the solution and its exercises --
my $code = solution_sources_ok(solution => 'solutions/10-pipeline.tex',
                               prefix => 'SolTen', macros => \%macro,
                               transcripts => 6, width => 85);
unlike($code, qr/\\ref\{/,
       'no reference to a label of the book (the volumes are apart)');
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/10-pipeline.tex',
    solution => 'solutions/10-pipeline.tex',
    heading => 'soltenexercise',
    lab => 'make lab LAB=1f1b');
answers_not_given_away($text, \%macro, qw(
    SolTenAZbBubble SolTenAInterFourBubble SolTenBOneFOneBEightM
    SolTenBZbEightM SolTenCOneFOneBPipelineGB SolTenCZbPipelineGB
    SolTenDThreeShare SolTenDThreeBubble SolTenEBInterFiveBubble
    SolTenFHeadBlocks SolTenFSlowdown SolTenGFourSends
    SolTenGFourQuarterBubble));
solutions_pdf_ok(chapter => 10, solution => 'solutions/10-pipeline.tex',
                 title => 'Pipeline parallelism', items => scalar @items,
                 key => { 2 => $macro{SolTenBOneFOneBSixteenM},
                          9 => $macro{SolTenIExtra},
                          4 => $macro{SolTenDFourShare},
                          6 => $macro{SolTenFSpeedup} },
                 newer_than => "$sols/10-ex9-derived.tex");

done_testing();
