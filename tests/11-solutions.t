#!/usr/bin/perl
# tests/11-solutions.t: the worked solutions of chapter 11 (the 3D mesh)
# against the formulas of the chapter.
#
# Every number solutions/11-mesh.sh derived (build/solutions/11-ex*) is
# worked out again here, in Perl, from the exercise's inputs: a rank's
# coordinates and groups on the mesh, rank = t_r + t (p_r + p d_r), and which
# groups cross a host of eight; the planner's step as compute + bubble +
# exposed, exposed = TP + PP + DP - hidden; the flat and the hierarchical
# all-reduce's closed forms; the timeline of a gradient's buckets; the
# distances between layouts; a measured step's breakdown, whose parts sum to
# the step and are none of them negative (within a stated slack). Each
# sentence of the solutions that reads a number (only the data axis crosses,
# still small, within what the constants decide) is checked against the
# number. No timing is held to a threshold. The test also checks, with
# FleetTest's checks shared by every chapter's solutions, that the solution
# uses only macros the script defines, that the statements give no answer
# away, and that build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/11-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use List::Util qw(sum);
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/11-ex6-derived.tex", 'the solution script has run (build/solutions/11-*)')
    or BAIL_OUT('no build/solutions/11-ex6-derived.tex: run make first');

my %macro = %{ read_macros("$sols/11-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
# Each file is decoded once (JSON::PP takes seconds over the layout
# searches' megabytes) and its reports only read.
my %decoded;
sub json {
    return $decoded{$_[0]} //= do {
        my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
        JSON::PP->new->decode($text);        # bytes, as the macros hold them
    };
}
# The best layout of a fleet layout report: the first listed.
sub best { return json($_[0])->{layouts}[0] }

# ----------------------------------------------------------------- 11.1 ----
{
    my %mesh = (FourTwoTwo => [4, 2, 2], TwoFourTwo => [2, 4, 2],
                EightTwoOne => [8, 2, 1]);
    for my $name (sort keys %mesh) {
        my ($t, $p, $d) = @{ $mesh{$name} };
        my $rank = sub { my ($tr, $pr, $dr) = @_; $tr + $t * ($pr + $p * $dr) };
        my ($tr, $pr, $dr) = (13 % $t, int(13 / $t) % $p, int(13 / ($t * $p)));
        is($rank->($tr, $pr, $dr), 13, "11.1 $name: the coordinates give rank 13");
        my $n = "SolElevenA$name";
        is($macro{"${n}TpCoord"}, $tr, "11.1 $name: t_r");
        is($macro{"${n}PpCoord"}, $pr, "11.1 $name: p_r");
        is($macro{"${n}DpCoord"}, $dr, "11.1 $name: d_r");
        is($macro{"${n}TpGroup"}, join(', ', map { $rank->($_, $pr, $dr) } 0 .. $t - 1),
           "11.1 $name: the tensor group");
        is($macro{"${n}PpGroup"}, join(', ', map { $rank->($tr, $_, $dr) } 0 .. $p - 1),
           "11.1 $name: the pipeline group");
        is($macro{"${n}DpGroup"}, join(', ', map { $rank->($tr, $pr, $_) } 0 .. $d - 1),
           "11.1 $name: the data group");
        # A group crosses a host of 8 when its members are not all on one.
        my %groups = (Tp => [], Pp => [], Dp => []);
        for my $a (0 .. $t - 1) { for my $b (0 .. $p - 1) { for my $c (0 .. $d - 1) {
            push @{ $groups{Tp} }, [map { $rank->($_, $b, $c) } 0 .. $t - 1] if $a == 0;
            push @{ $groups{Pp} }, [map { $rank->($a, $_, $c) } 0 .. $p - 1] if $b == 0;
            push @{ $groups{Dp} }, [map { $rank->($a, $b, $_) } 0 .. $d - 1] if $c == 0;
        } } }
        for my $axis (qw(Tp Pp Dp)) {
            my @g = @{ $groups{$axis} };
            my $crossed = grep { my %h = map { int($_ / 8) => 1 } @$_; keys %h > 1 } @g;
            is($macro{"${n}${axis}Crossing"}, "$crossed of " . scalar @g,
               "11.1 $name: $axis groups that cross a host");
        }
    }
    # "only the data axis crosses" in the first two; the pipeline in the third
    for my $name (qw(FourTwoTwo TwoFourTwo)) {
        like($macro{"SolElevenA${name}DpCrossing"}, qr/^(\d+) of \1$/,
             "11.1 $name: every data group crosses");
        like($macro{"SolElevenA${name}${_}Crossing"}, qr/^0 of/,
             "11.1 $name: no $_ group crosses") for qw(Tp Pp);
    }
    like($macro{SolElevenAEightTwoOnePpCrossing}, qr/^(\d+) of \1$/,
         '11.1 8x2x1: every pipeline group crosses');
    my $t = slurp("$sols/11-ex1.txt") // '';
    like($t, qr/^\$ mpiexec -n 16 minigpt /m, '11.1: the transcript shows its command');
    like($t, qr/^rank 13: tp 1 of 4 \[12,13,14,15\], pp 1 of 2 \[9,13\], dp 1 of 2 \[5,13\]/m,
         '11.1: the transcript shows rank 13');
}

# ----------------------------------------------------------------- 11.2 ----
{
    my %run = (Eight => best('11-ex2-tp8'), Slow => best('11-ex2-slow'),
               Two => best('11-ex2-tp2'));
    for my $name (sort keys %run) {
        my $j = $run{$name};
        my $n = "SolElevenB$name";
        ok(abs($j->{compute_s} + $j->{bubble_s} + $j->{exposed_s} - $j->{step_time_s})
               < 1e-9 * $j->{step_time_s}, "11.2 $name: step = compute + bubble + exposed");
        ok(abs($j->{tp_s} + $j->{pp_s} + $j->{dp_s} - $j->{window_s} - $j->{exposed_s})
               < 1e-9 * $j->{step_time_s}, "11.2 $name: exposed = TP + PP + DP - hidden");
        is($j->{tp_nic}, 0, "11.2 $name: the tensor axis stays on NVLink");
        for my $k ([compute_s => 'Compute'], [bubble_s => 'Bubble'], [tp_s => 'Tp'],
                   [exposed_s => 'Exposed']) {
            agrees("$n$k->[1]Share", 100 * $j->{ $k->[0] } / $j->{step_time_s},
                   "11.2 $name: $k->[0]'s share");
        }
        agrees("${n}NicTime", $j->{pp_s} + $j->{dp_s}, "11.2 $name: the NIC's terms");
        agrees("${n}StepTime", $j->{step_time_s}, "11.2 $name: the step");
    }
    my ($fast, $slow, $two) = @run{qw(Eight Slow Two)};
    is($slow->{tp_s}, $fast->{tp_s}, '11.2: a slower NIC leaves the tensor axis alone');
    is($slow->{compute_s}, $fast->{compute_s}, '11.2: ... and the compute');
    is($slow->{bubble_s}, $fast->{bubble_s}, '11.2: ... and the bubble');
    cmp_ok($slow->{pp_s}, '>', $fast->{pp_s}, "11.2: the pipeline's sends slow down");
    cmp_ok($slow->{dp_s}, '>', $fast->{dp_s}, "11.2: the gradient's slows down");
    agrees('SolElevenBSlowDelta', $slow->{step_time_s} - $fast->{step_time_s},
           '11.2: the step grows by');
    cmp_ok($slow->{pp_s} + $slow->{dp_s}, '<', 0.05 * $slow->{compute_s},
           "11.2: the NIC's terms are still small beside the compute (under 5 %)");
    cmp_ok($fast->{tp_s}, '>', $fast->{pp_s} + $fast->{dp_s},
           '11.2: TP8 is the largest exposed part');
    cmp_ok($two->{tp_s}, '<', $fast->{tp_s}, '11.2: TP2 sends less on NVLink');
    cmp_ok($two->{bubble_s}, '>', $fast->{bubble_s}, '11.2: ... and has a larger bubble');
    cmp_ok($two->{pp_s}, '>', $fast->{pp_s}, "11.2: ... and larger pipeline sends");
    ok(abs($two->{pp_bytes} / $fast->{pp_bytes} - 4) < 1e-9,
       '11.2: half a stream a send instead of an eighth');
    is($two->{microbatches}, $fast->{microbatches}, '11.2: the same micro-batches');
    agrees('SolElevenBGain', $fast->{step_time_s} / $two->{step_time_s}, '11.2: the gain');
    cmp_ok($fast->{step_time_s}, '>', $two->{step_time_s}, '11.2: TP2 is faster');
    like(slurp("$sols/11-ex2.txt") // '', qr/^step += /m, '11.2: the transcript shows the step');
}

# ----------------------------------------------------------------- 11.3 ----
{
    my ($S, $g, $nv, $nic) = (2e9, 8, 360e9, 40e9);
    for my $k ([2, 'Two'], [16, 'Sixteen']) {
        my ($K, $w) = @$k;
        my $n = $g * $K;
        my $flat = 2 * ($n - 1) / $n * $S / $nic;
        my $inside = 2 * ($g - 1) / $g * $S / $nv;
        my $across = 2 * ($K - 1) / $K * $S / $g / $nic;
        my $name = "SolElevenC$w";
        is($macro{"${name}Gpus"}, $n, "11.3 k = $K: GPUs");
        agrees("${name}Flat", $flat, "11.3 k = $K: the flat ring");
        agrees("${name}Inside", $inside, "11.3 k = $K: inside the node");
        agrees("${name}Across", $across, "11.3 k = $K: across the nodes");
        agrees("${name}Hier", $inside + $across, "11.3 k = $K: hierarchical");
        agrees("${name}Speedup", $flat / ($inside + $across), "11.3 k = $K: the gain");
        agrees("${name}FlatNicGB", 2 * ($n - 1) / $n * $S / 1e9, "11.3 k = $K: flat's hop");
        agrees("${name}HierNicGB", 2 * ($K - 1) / $K * $S / $g / 1e9,
               "11.3 k = $K: hierarchical NIC bytes");
    }
    cmp_ok(value('SolElevenCSixteenSpeedup'), '<', value('SolElevenCTwoSpeedup'),
           '11.3: the gain is smaller on 16 nodes');
    cmp_ok(value('SolElevenCSixteenSpeedup'), '>', 1, '11.3: ... but still a gain');
    # (d) the planner's prices with latency: the closed forms above plus
    # each ring step's latency, and the g rings, one per NIC.
    my %fastest;
    for my $run ([16, '2e9', 'Two'], [128, '2e9', 'Sixteen'], [1024, '2e9', 'Big'],
                 [1024, '25e6', 'Bucket']) {
        my ($n, $bytes, $w) = @$run;
        my $j = json("11-ex3-$n-$bytes");
        my ($k, $S) = ($n / $g, $bytes + 0);
        is($j->{ranks}, $n, "11.3 (d) $n GPUs");
        is($j->{group}, $g, "11.3 (d) $n GPUs: groups of $g");
        cmp_ok($j->{flat_seconds}, '>=', 2 * ($n - 1) / $n * $S / $nic,
               "11.3 (d) $n GPUs, $bytes B: the flat ring, no faster than its bandwidth");
        ok(abs($j->{hierarchical_seconds} - $j->{hierarchical_inside_seconds}
               - $j->{hierarchical_across_seconds}) < 1e-12,
           "11.3 (d) $n GPUs, $bytes B: hierarchical = inside + across");
        for my $f ([flat_seconds => 'Flat'], [rails_seconds => 'Rails'],
                   [hierarchical_seconds => 'Hierarchical']) {
            agrees("SolElevenC${w}Fleet$f->[1]Time", $j->{ $f->[0] },
                   "11.3 (d) $n GPUs, $bytes B: $f->[0]");
        }
        my %t = (rails => $j->{rails_seconds}, hierarchical => $j->{hierarchical_seconds},
                 flat => $j->{flat_seconds});
        ($fastest{$w}) = sort { $t{$a} <=> $t{$b} } keys %t;
    }
    is($macro{SolElevenCRailsFastestTwo}, $fastest{Two} eq 'rails' ? 1 : 0,
       "11.3 (d): on 2 nodes the fastest is $fastest{Two}, as the solution says");
    is($macro{SolElevenCHierFastestBucket}, $fastest{Bucket} eq 'hierarchical' ? 1 : 0,
       "11.3 (d): for 25 MB on 128 nodes the fastest is $fastest{Bucket}, as the solution says");
    my $dj = json('11-ex3-16-2e9');
    ok(abs($dj->{hierarchical_inside_seconds} - 2 * 7 / 8 * $S / $nv) < 1e-3,
       '11.3 (d): inside the node, the closed form plus a little latency');
}

# ----------------------------------------------------------------- 11.4 ----
{
    # The bucket timeline: buckets ready in turn as the backward pass makes
    # them; the link does one all-reduce at a time, in order.
    my $exposed = sub {
        my ($X, %o) = @_;
        my ($G, $d, $B, $Tb, $step) = (2e9, 16, $o{B} // 40e9, $o{Tb} // 0.150, 10e-6);
        my $n = int(($G + $X - 1) / $X);
        my $done = 0;
        for my $i (1 .. $n) {
            my $size = $i < $n ? $X : $G - ($n - 1) * $X;
            my $ready = $Tb * ($i * $X < $G ? $i * $X : $G) / $G;
            my $c = 2 * ($d - 1) * $step + 2 * ($d - 1) / $d * $size / $B;
            $done = ($done > $ready ? $done : $ready) + $c;
        }
        return ($done - $Tb, $n);
    };
    my %w = (1 => 'One', 5 => 'Five', 25 => 'TwentyFive', 100 => 'Hundred',
             500 => 'FiveHundred', 2000 => 'TwoThousand');
    my ($best, $least);
    for my $mb (sort { $a <=> $b } keys %w) {
        my ($e, $n) = $exposed->($mb * 1e6);
        agrees("SolElevenD$w{$mb}ExposedMs", $e * 1e3, "11.4 $mb MB: exposed");
        is($macro{"SolElevenD$w{$mb}Buckets"}, $n, "11.4 $mb MB: buckets");
        ($best, $least) = ($mb, $e) if !defined $least || $e < $least;
    }
    is($macro{SolElevenDBestMB}, $best, "11.4: the best is $best MB");
    agrees('SolElevenDCommMs', 2 * 15 / 16 * 2e9 / 40e9 * 1e3, '11.4: the whole transfer');
    agrees('SolElevenDAlphaUs', 2 * 15 * 10, '11.4: alpha');
    cmp_ok(2000 * 300e-6, '>', 0.150, "11.4: 2,000 buckets' latency outlasts the backward pass");
    cmp_ok(value('SolElevenDTwoThousandExposedMs'), '>', value('SolElevenDCommMs'),
           '11.4: one bucket is all exposed');
    # The solution's directions: a faster NIC moves the best size down, a
    # shorter backward pass moves it up (on a fine grid of sizes).
    my $argmin = sub {
        my %o = @_;
        my ($at, $low);
        for (my $mb = 1; $mb <= 2000; $mb *= 1.05) {
            my ($e) = $exposed->($mb * 1e6, %o);
            ($at, $low) = ($mb, $e) if !defined $low || $e < $low;
        }
        return $at;
    };
    my $here = $argmin->();
    cmp_ok($argmin->(B => 80e9), '<', $here, '11.4: a faster NIC moves the best bucket down');
    cmp_ok($argmin->(Tb => 0.110), '>', $here, '11.4: a shorter backward pass moves it up');
}

# ----------------------------------------------------------------- 11.5 ----
{
    for my $b ([big => 'Big'], [small => 'Small']) {
        my ($file, $B) = @$b;
        my $top = best("11-ex5-$file");
        is($macro{"SolElevenE${B}Layout"}, $top->{layout}, "11.5 $file: the best");
        for my $r ([flat => 'Flat'], [piped => 'Piped'], [tp8 => 'TpEight']) {
            my $j = best("11-ex5-$file-$r->[0]");
            cmp_ok($j->{step_time_s}, '>=', $top->{step_time_s},
                   "11.5 $file: the best is no slower than $r->[0]");
            agrees("SolElevenE$B$r->[1]Behind",
                   100 * ($j->{step_time_s} / $top->{step_time_s} - 1),
                   "11.5 $file: $r->[0] behind");
        }
        is(best("11-ex5-$file-flat")->{pp}, 1, "11.5 $file: --pp 1 has no pipeline");
        is(best("11-ex5-$file-piped")->{pp}, 4, "11.5 $file: --pp 4 has four stages");
        is(best("11-ex5-$file-tp8")->{tp}, 8, "11.5 $file: --tp 8");
    }
    my ($big, $small) = (best('11-ex5-big'), best('11-ex5-small'));
    is($big->{tp}, 1, '11.5 A: no tensor parallelism wins');
    cmp_ok($big->{pp}, '>', 1, '11.5 A: ... with a pipeline');
    cmp_ok($big->{bubble_over_compute}, '<', 0.01, '11.5 A: its bubble is negligible (under 1 %)');
    my $tp8 = best('11-ex5-big-tp8');
    cmp_ok(value('SolElevenEBigTpEightBehind'), '>=', value('SolElevenEBigFlatBehind'),
           '11.5 A: eight-way TP comes last of the four');
    cmp_ok($tp8->{tp_s}, '>', $tp8->{bubble_s} + $tp8->{pp_s} + $tp8->{dp_s},
           "11.5 A: TP8's all-reduces are its largest part after compute");
    is($small->{pp}, 1, '11.5 B: the best has no pipeline');
    cmp_ok($small->{tp}, '>', 1, '11.5 B: ... and splits the model with TP');
    cmp_ok(value('SolElevenESmallPipedBehind'), '<', 2,
           '11.5 B: the pipelined layout is within 2 % (inside the constants)');
    cmp_ok(best('11-ex5-small-piped')->{bubble_over_compute},
           '>', 10 * $big->{bubble_over_compute}, '11.5 B: the bubble has grown');
    for my $f (qw(big small)) {
        my $t = slurp("$sols/11-ex5-$f.txt") // '';
        is(scalar(() = $t =~ /^ [1-4] TP/mg), 4, "11.5 $f: the transcript shows four layouts");
    }
}

# ----------------------------------------------------------------- 11.6 ----
{
    # The breakdown's parts sum to the step (other is what the rest leave),
    # and none is negative beyond a slack: a clock read on either side of an
    # operation can overlap another's by its resolution, so a part may read
    # a little below zero; 2 % of the step, or 50 us, allows for it.
    my @parts = qw(compute_s exposed_comm_s.tp exposed_comm_s.pp exposed_comm_s.dp
                   bubble_s optimizer_s other_s);
    my %j = map { $_ => json("11-ex6-m$_") } 1, 4;
    my %d;
    for my $m (1, 4) {
        my $j = $j{$m};
        is($j->{pp}, 2, "11.6 m = $m: two stages");
        is($j->{micro_batches}, $m, "11.6 m = $m: $m micro-batches") if exists $j->{micro_batches};
        my $step = $j->{step_breakdown}{step_s};
        cmp_ok($step, '>', 0, "11.6 m = $m: a step was measured");
        my $sum = sum(map { at_path($j, "step_breakdown.$_") } @parts);
        ok(abs($sum - $step) <= 1e-9 + 1e-6 * $step, "11.6 m = $m: the parts sum to the step");
        my $slack = 0.02 * $step > 50e-6 ? 0.02 * $step : 50e-6;
        for (@parts) {
            cmp_ok(at_path($j, "step_breakdown.$_"), '>=', -$slack, "11.6 m = $m: $_ is not negative");
        }
        my $n = $m == 1 ? 'One' : 'Four';
        agrees("SolElevenF${n}Step", $step, "11.6 m = $m: the step");
        agrees("SolElevenF${n}Sum", $sum, "11.6 m = $m: the sum");
        agrees("SolElevenF${n}Bubble", $j->{step_breakdown}{bubble_s}, "11.6 m = $m: the bubble");
        agrees("SolElevenF${n}BubbleShare", 100 * $j->{step_breakdown}{bubble_s} / $step,
               "11.6 m = $m: the bubble's share");
        agrees("SolElevenF${n}Closed", 100 / ($m + 1), "11.6 m = $m: (p-1)/(m+p-1)");
    }
    $d{$_} = at_path($j{1}, "step_breakdown.$_")
            - at_path($j{4}, "step_breakdown.$_") for @parts;
    my ($most) = sort { abs($d{$b}) <=> abs($d{$a}) } @parts;
    my ($second) = grep { $_ ne $most } sort { abs($d{$b}) <=> abs($d{$a}) } @parts;
    is($macro{SolElevenFBiggestIsBubble}, $most eq 'bubble_s' ? 1 : 0,
       "11.6: the part that differs most is $most, as the solution says");
    my %name = (compute_s => 'compute', bubble_s => 'the bubble',
                optimizer_s => 'the optimizer', other_s => 'the rest',
                'exposed_comm_s.tp' => 'exposed TP time',
                'exposed_comm_s.pp' => 'exposed PP time',
                'exposed_comm_s.dp' => 'exposed DP time');
    is($macro{SolElevenFBiggest}, $name{$most}, '11.6: ... and names it');
    is($macro{SolElevenFSecond}, $name{$second}, "11.6: the next is $second");
    is($macro{SolElevenFSecondGrew}, $d{$second} < 0 ? 1 : 0, '11.6: ... and which way');
    is($macro{SolElevenFBubbleFell}, $d{bubble_s} > 0 ? 1 : 0, '11.6: whether the bubble fell');
    is($macro{SolElevenFSecondKind},
       $second eq 'bubble_s' ? 2
       : $second eq 'compute_s' || $second eq 'exposed_comm_s.pp' ? 1 : 0,
       '11.6: what kind of part the next one is');
    agrees('SolElevenFSlowdown', $j{1}{step_breakdown}{step_s} / $j{4}{step_breakdown}{step_s},
           '11.6: the ratio of the steps');
}

# ------------------------------------------- the solution, the statements --
my $code = solution_sources_ok(solution => 'solutions/11-mesh.tex',
                               prefix => 'SolEleven', macros => \%macro,
                               transcripts => 4, width => 85);
unlike($code, qr/\\ref\{/,
       'no reference to a label of the book (the volumes are apart)');
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/11-mesh.tex',
    solution => 'solutions/11-mesh.tex',
    heading => 'solelevenexercise');
answers_not_given_away($text, \%macro, qw(
    SolElevenBGain SolElevenBEightComputeShare SolElevenCTwoSpeedup
    SolElevenCSixteenSpeedup SolElevenDCommMs SolElevenDTwentyFiveExposedMs
    SolElevenEBigLayout SolElevenESmallLayout SolElevenEBigTpEightBehind));
solutions_pdf_ok(chapter => 11, solution => 'solutions/11-mesh.tex',
                 title => 'The 3D mesh', items => scalar @items,
                 key => { 3 => $macro{SolElevenCTwoSpeedup},
                          4 => $macro{SolElevenDBestMB},
                          2 => $macro{SolElevenBGain} },
                 newer_than => "$sols/11-ex6-derived.tex");

done_testing();
