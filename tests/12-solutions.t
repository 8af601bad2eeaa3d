#!/usr/bin/perl
# tests/12-solutions.t: the worked solutions of chapter 12 (mixed
# precision) against the formats' definitions and the arithmetic of the
# chapter.
#
# Every number solutions/12-precision.sh derived (build/solutions/12-ex*)
# is worked out again here, in Perl: the formats' ranges from their bits;
# each rounding by a round-to-nearest-even of its own (a number is first
# read as an fp32 number, through pack 'f', as the trainer holds it); the
# dynamic loss scaler by a simulation of its own; the bytes of each
# convention as (b_w + b_g + master + moments) N and the fewest GPUs as
# the state over 64 GB; the lab's runs against their own logs, histogram
# and reports. Each sentence of the solutions that reads a number (an
# update is lost, one is rounded up to a whole spacing, the errors stay
# within the unit roundoff) is checked against the number. No timing is
# held to a threshold. The test also checks, with FleetTest's checks shared
# by every chapter's solutions, that the solution uses only macros the
# script defines, that the statements give no answer away, and that
# build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/12-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use NumberRounding;
use JSON::PP ();
use POSIX qw(ceil floor);
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/12-ex7-derived.tex", 'the solution script has run (build/solutions/12-*)')
    or BAIL_OUT('no build/solutions/12-ex7-derived.tex: run make first');

my %macro = %{ read_macros("$sols/12-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
sub json {
    my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
    return JSON::PP->new->decode($text);
}

my %format = %number_format;
my $inf = $infinity;
sub relative { return relative_error(@_) }

# ----------------------------------------------------------------- 12.1 ----
{
    my %name = (bf16 => 'Bf', fp16 => 'Fp', e4m3 => 'Efour', e5m2 => 'Efive');
    for my $f (sort keys %format) {
        my ($p, $emin, $max) = @{ $format{$f} };
        my $w = "SolTwelveA$name{$f}";
        is($macro{"${w}Bits"}, $p, "12.1 $f: $p significand bits");
        agrees("${w}Max", $max, "12.1 $f: the largest");
        agrees("${w}MinNormal", 2**$emin, "12.1 $f: the smallest normal");
        agrees("${w}MinSubnormal", 2**($emin - $p + 1), "12.1 $f: the smallest subnormal");
        agrees("${w}Unit", 2**-$p, "12.1 $f: u = 2^-p");
        agrees("${w}Binades", log($max / 2**($emin - $p + 1)) / log(2), "12.1 $f: its span");
        for my $x ([3e5, 'Big'], [1e-6, 'Micro'], [1e-9, 'Nano'], [1.001, 'Near']) {
            my ($v, $n) = ($x->[0], "$w$x->[1]");
            my $r = round_to($v, $f);
            if ($r eq 'nan') {
                is($macro{$n}, 'NaN', "12.1 $f: $v overflows to NaN");
                is($macro{"${n}Error"}, '---', '... with no error to print');
            } elsif ($r == $inf) {
                is($macro{$n}, '$\\infty$', "12.1 $f: $v overflows to infinity");
                is($macro{"${n}Error"}, '---', '... with no error to print');
            } else {
                agrees($n, $r, "12.1 $f: $v rounds");
                agrees("${n}Error", 100 * relative($v, $f), "12.1 $f: the error of $v");
            }
        }
    }
    agrees('SolTwelveALayoutMax', (2 - 2**-10) * 2**15, '12.1 (b): fp16 from its layout');
    agrees('SolTwelveALayoutMinNormal', 2**-14, '12.1 (b): smallest normal');
    agrees('SolTwelveALayoutMinSubnormal', 2**-24, '12.1 (b): smallest subnormal');
    agrees('SolTwelveALayoutUnit', 2**-11, '12.1 (b): u');
    for my $x (1e-6, 1e-9) {
        cmp_ok(relative($x, 'bf16'), '<=', 2**-8, "12.1 (c): bf16 keeps $x within u");
    }
    cmp_ok(relative(1e-6, 'fp16'), '>', 2**-11,
           "12.1 (c): fp16's 1e-6 is off by more than its u (a subnormal)");
    is(round_to(1.001, 'bf16'), 1, '12.1 (c): 1.001 is 1 in bf16');
    cmp_ok(relative(1.001, 'fp16'), '<', 1e-3 / 2, '12.1 (c): fp16 keeps most of it');
    like(slurp("$sols/12-ex1.txt") // '', qr/^\$ formats 3e5 1e-6 1e-9 1\.001\n/,
         '12.1: the transcript shows its command');
}

# ----------------------------------------------------------------- 12.2 ----
{
    my %small = (bf16 => round_to(0.02, 'bf16'), fp16 => round_to(0.02, 'fp16'));
    agrees('SolTwelveBSmallBf', $small{bf16}, '12.2: 0.02 in bf16');
    agrees('SolTwelveBSmallFp', $small{fp16}, '12.2: 0.02 in fp16');
    my %step;
    for my $w ([1, 'One'], [0.02, 'Small']) {
        for my $r ([8e-5, 'Peak'], [8e-7, 'Final']) {
            for my $f (['bf16', 'Bf'], ['fp16', 'Fp']) {
                my $base = round_to($w->[0], $f->[0]);
                my $step = round_to($base + $r->[0], $f->[0]) - $base;
                my $n = "SolTwelveB$w->[1]$r->[1]$f->[1]";
                $step{$n} = $step;
                agrees("${n}Step", $step, "12.2: $w->[0] + $r->[0] in $f->[0]");
                agrees("${n}StepRatio", $step / $r->[0], '... as a share of the update');
            }
        }
    }
    is($step{$_}, 0, "12.2 (a): $_ is lost")
        for qw(SolTwelveBOnePeakBf SolTwelveBOnePeakFp SolTwelveBOneFinalBf
               SolTwelveBOneFinalFp SolTwelveBSmallFinalBf SolTwelveBSmallFinalFp);
    cmp_ok($step{SolTwelveBSmallPeakBf} / 8e-5, '>', 1,
           '12.2 (a): bf16 rounds the peak step on 0.02 up to a whole spacing');
    close_to($step{SolTwelveBSmallPeakBf}, 2**-13, 1e-12, '... one spacing');
    cmp_ok($step{SolTwelveBSmallPeakFp} / 8e-5, '<', 1, '12.2 (a): fp16 stores less of it');
    agrees('SolTwelveBSpacing', 2**-13, "12.2 (b): bf16's spacing above 0.02");
    agrees('SolTwelveBSmallest', 2**-14, '12.2 (b): half of it');
    is($macro{SolTwelveBThousandBf}, 1, '12.2 (c): a bf16 weight of 1 stays 1');
    my $w = 1;
    $w = fp32($w + 8e-7) for 1 .. 1000;
    agrees('SolTwelveBThousandFloat', $w, '12.2 (c): the fp32 master after 1,000 steps');
    agrees('SolTwelveBFloatStep', fp32(1 + 8e-7) - 1, "12.2 (c): each fp32 step");
    agrees('SolTwelveBThousandExact', 1 + 1000 * 8e-7, '12.2 (c): the exact sum');
    my $error = (value('SolTwelveBThousandFloat') - 1) / 8e-4 - 1;
    cmp_ok(abs $error, '>', 0.01, '12.2 (c): an error of a few per cent ...');
    cmp_ok(abs $error, '<', 0.1, '... and no more');
}

# ----------------------------------------------------------------- 12.3 ----
{
    my ($low, $high, $max) = (2e-9, 3, 65504);
    my $span = log($high / $low) / log(2);
    agrees('SolTwelveCSpan', $span, '12.3 (a): the span in powers of two');
    agrees('SolTwelveCBelowNormal', 100 * log(2**-14 / $low) / log(2) / $span,
           '12.3 (a): below the smallest normal');
    agrees('SolTwelveCBelowSubnormal', 100 * log(2**-24 / $low) / log(2) / $span,
           '12.3 (a): below the smallest subnormal');
    my $s = 2**floor(log($max / $high) / log(2));
    cmp_ok($s * $high, '<=', $max, '12.3 (b): the scale does not overflow');
    cmp_ok(2 * $s * $high, '>', $max, '... and twice it would');
    agrees('SolTwelveCScale', $s, '12.3 (b): the scale');
    is($macro{SolTwelveCScaleLog}, log($s) / log(2), '12.3 (b): as a power of two');
    agrees('SolTwelveCScaledMax', $s * $high, '12.3 (b): the largest, scaled');
    agrees('SolTwelveCSmallestNormal', 2**-14 / $s, '12.3 (b): the smallest normal gradient');
    cmp_ok($low * $s, '<', 2**-14, '12.3 (b): the smallest gradients are subnormal');
    cmp_ok($low * $s, '>=', 2**-24, '... but kept');
    # The scaler: an overflow skips the step and halves; 2,000 clean steps
    # double.
    my ($scale, $clean, $skips) = (2**16, 0, 0);
    for my $step (1 .. 10000) {
        if (round_to($scale * $high, 'fp16') == $inf) {
            $skips++;
            $scale /= 2;
            $clean = 0;
        } elsif (++$clean == 2000) {
            $scale *= 2;
            $clean = 0;
        }
    }
    is($macro{SolTwelveCSkips}, $skips, "12.3 (c): $skips skipped steps");
    agrees('SolTwelveCFinalScale', $scale, '12.3 (c): the final scale');
}

# ----------------------------------------------------------------- 12.4 ----
{
    my %bytes = (mixed => 16, fp32 => 16, lean => 10, 'fp32-grads' => 18, eight => 15);
    my %name = (mixed => 'Mixed', fp32 => 'Float', lean => 'Lean',
                'fp32-grads' => 'Grads', eight => 'Eight');
    my %gpus;
    for my $p (['70e9', 'Seventy'], ['405e9', 'FourHundred']) {
        for my $c (sort keys %bytes) {
            my $state = $bytes{$c} * $p->[0];
            my $n = "SolTwelveD$p->[1]$name{$c}";
            agrees("${n}State", $state, "12.4 $p->[0] $c: the state");
            is($macro{"${n}Gpus"}, ceil($state / 64e9), "12.4 $p->[0] $c: its GPUs");
            is(json("12-ex4-$p->[0]-$c")->{static_bytes}, $state, "... as fleet says");
            $gpus{$p->[0]}{$c} = ceil($state / 64e9);
        }
    }
    agrees('SolTwelveDFpShare', 100 * 12 / 16, '12.4 (b): 12 of 16 bytes are fp32');
    is($macro{SolTwelveDFpBytes}, 12, '12.4 (b): 12');
    is($macro{SolTwelveDMixedBytes}, 16, '12.4 (b): 16');
    is($macro{SolTwelveDEightSaves}, $gpus{'405e9'}{mixed} - $gpus{'405e9'}{eight},
       '12.4 (c): what 8 bits save');
    is($macro{SolTwelveDLeanSaves}, $gpus{'405e9'}{mixed} - $gpus{'405e9'}{lean},
       '12.4 (c): what dropping the master copy saves');
}

# ----------------------------------------------------------------- 12.5 ----
{
    for my $r (['A', 70e9, 16], ['B', 7e9, 16], ['C', 1e9, 16], ['D', 405e9, 16]) {
        my ($w, $p, $b) = @$r;
        agrees("SolTwelveE${w}State", $b * $p, "12.5 ($w): the state");
        is($macro{"SolTwelveE${w}Gpus"}, ceil($b * $p / 64e9), "12.5 ($w): its GPUs");
    }
    agrees('SolTwelveEBfUnit', 2**-8, "12.5: bf16's u");
    agrees('SolTwelveEFpMinNormal', 2**-14, "12.5: fp16's smallest normal");
}

# ----------------------------------------------------------------- 12.6 ----
{
    agrees('SolTwelveFScaleOutlier', 448 / 2000, '12.6: the scale');
    for my $amax ([2000, 'Outlier'], [1, 'Plain']) {
        for my $x ([0.01, 'Hundredth'], [0.05, 'Twentieth']) {
            my $s = $x->[0] * 448 / $amax->[0];
            my $n = "SolTwelveF$amax->[1]$x->[1]";
            agrees("${n}Scaled", $s, "12.6: $x->[0] scaled for $amax->[0]");
            agrees("${n}Value", round_to($s, 'e4m3'), '... rounded to E4M3');
            agrees("${n}Error", 100 * relative($s, 'e4m3'), '... its error');
        }
    }
    is(round_to(0.01 * 448 / 2000, 'e4m3'), 2**-9,
       "12.6 (a): 0.01 becomes E4M3's smallest subnormal");
    cmp_ok(0.05 * 448 / 2000, '<', 2**-6, '12.6 (a): 0.05 is subnormal too');
    cmp_ok(relative(0.01 * 448 / 2000, 'e4m3'), '>', 2**-4, '12.6 (a): beyond u');
    cmp_ok(relative($_, 'e4m3'), '<=', 2**-4, "12.6 (b): $_ within u") for 4.48, 22.4;
    agrees('SolTwelveFBlockBytes', 100 * 4 / 128, '12.6 (c): a scale per 128 bytes');
    agrees('SolTwelveFEfourMinNormal', 2**-6, "12.6: E4M3's smallest normal");
    agrees('SolTwelveFEfourMinSubnormal', 2**-9, "12.6: its smallest subnormal");
    agrees('SolTwelveFEfourUnit', 2**-4, '12.6: its u');
    agrees('SolTwelveFEfiveMax', 57344, "12.6 (d): E5M2's largest");
    my $ratio = value('SolTwelveAEfiveBinades') / value('SolTwelveAEfourBinades');
    cmp_ok($ratio, '>', 1.5, '12.6 (d): E5M2 spans about twice ...');
    cmp_ok($ratio, '<', 2.5, "... E4M3's powers of two");
}

# ----------------------------------------------------------------- 12.7 ----
{
    # read_log NAME: the lab's --log CSV as a list of hashes, one a step.
    my $read_log = sub {
        my @lines = split /\n/, slurp("$sols/12-ex7-$_[0].csv") // '';
        my @keys = split /,/, shift @lines;
        return map { my %row; @row{@keys} = split /,/; \%row } @lines;
    };
    my %name = (fp32 => 'Float', bf16 => 'Bf', fp16 => 'Fp', plain => 'Plain',
                high => 'High');
    my %loss;
    for my $run (sort keys %name) {
        my $j = json("12-ex7-$run");
        my @log = $read_log->($run);
        is(scalar @log, 100, "12.7 $run: a line a step");
        is($j->{precision}, $run eq 'fp32' ? 'fp32' : $run eq 'bf16' ? 'bf16' : 'fp16',
           "12.7 $run: the precision");
        $loss{$run} = $j->{val_loss};
        agrees("SolTwelveG$name{$run}Loss", $j->{val_loss}, "12.7 $run: the loss");
        my $skipped = grep { $_->{skipped} } @log;
        is($j->{loss_scale}{skipped_steps}, $skipped, "12.7 $run: skipped as the log says");
        is($macro{"SolTwelveG$name{$run}Skipped"}, $skipped, '... as printed');
        agrees("SolTwelveG$name{$run}FinalScale", $j->{loss_scale}{final},
               "12.7 $run: the final scale");
        my $mean = 0;
        $mean += $log[$_]{grad_norm} / 10 for $#log - 9 .. $#log;
        agrees("SolTwelveG$name{$run}GradNorm", $mean, "12.7 $run: the gradient's norm");
        if ($run eq 'plain') {
            is((grep { $_->{loss_scale} != 1 } @log), 0, '12.7 (a): no scaling: S = 1 throughout');
            is($skipped, 0, '12.7 (a): ... and nothing skipped');
        }
    }
    # The unscaled run fails, or not, as the solution says.
    my $spread = 0;
    for my $r (qw(bf16 fp16)) {
        my $d = abs($loss{$r} - $loss{fp32});
        $spread = $d if $d > $spread;
    }
    my $gap = $loss{plain} - $loss{fp32};
    my $unigram = json('12-ex7-plain')->{unigram_entropy};
    is($macro{SolTwelveGPlainFails},
       (!defined $loss{plain} || $loss{plain} >= $unigram) ? 1 : 0,
       '12.7 (a): the unscaled run fails (no lower than the unigram '
       . 'entropy) or not, as the solution says');
    agrees('SolTwelveGPlainGap', abs $gap, '12.7 (a): its distance from fp32');
    cmp_ok(abs($loss{$_} - $loss{fp32}), '<', 0.1, "12.7 (a): $_ ends close to fp32")
        for qw(bf16 fp16);
    # (b) from 2^30: every skip halves, and the log's skipped lines come first.
    my @high = $read_log->('high');
    my $k = grep { $_->{skipped} } @high;
    cmp_ok($k, '>', 0, '12.7 (b): 2^30 overflows');
    is($macro{SolTwelveGHighSkippedRows}, $k, '12.7 (b): the skipped lines counted');
    is((grep { $high[$_]{skipped} } 0 .. $k - 1), $k, '12.7 (b): they are the first steps');
    close_to($high[$_]{loss_scale}, 2**(30 - $_), 1e-8,
             '12.7 (b): step ' . ($_ + 1) . ' used 2^' . (30 - $_))
        for 0 .. $k;
    like($high[$_]{grad_norm}, qr/inf|nan/i, "12.7 (b): skipped step " . ($_ + 1) . ' has no finite norm')
        for 0 .. $k - 1;
    is(json('12-ex7-high')->{loss_scale}{final}, 2**(30 - $k),
       '12.7 (b): it ends where the skips left it (100 steps grow nothing)');
    like(slurp("$sols/12-ex7-high.txt") // '', qr/^step train_loss grad_norm loss_scale skipped\n/,
         '12.7 (b): the log quoted under its columns');
    # (c) the histogram.
    my ($all, $below, $flushed) = (0, 0, 0);
    for (split /\n/, slurp("$sols/12-ex7-histogram.csv") // '') {
        my ($e, $p, $a) = split /,/;
        next if $e !~ /^-?\d+$/;
        $all += $p + $a;
        $below += $p + $a if $e < -14;
        $flushed += $p + $a if $e < -25;
    }
    agrees('SolTwelveGBelowNormal', 100 * $below / $all, "12.7 (c): below fp16's smallest normal");
    agrees('SolTwelveGFlushed', 100 * $flushed / $all, '12.7 (c): below half its smallest subnormal');
    cmp_ok($flushed / $all, '<', 0.05, '12.7 (a, c): few vanish on this model')
        if !$macro{SolTwelveGPlainFails};
    # (d) --verify.
    my %u = (bf16 => 2**-8, fp16 => 2**-11);
    for my $f (['bf16', 'Bf'], ['fp16', 'Fp']) {
        my $v = json("12-ex7-verify-$f->[0]");
        agrees("SolTwelveG$f->[1]Dloss", $v->{relative_dloss}, "12.7 (d) $f->[0]: dloss");
        agrees("SolTwelveG$f->[1]Dgrad", $v->{relative_dgrad_norm}, "12.7 (d) $f->[0]: dgrad");
        agrees("SolTwelveG$f->[1]LossTolerance", (6 * 2 + 1) * 2 * $u{$f->[0]},
               "12.7 (d) $f->[0]: (6L + 1) 2u, L = 2");
        agrees("SolTwelveG$f->[1]GradTolerance", (12 * 2 + 3) * 2 * $u{$f->[0]},
               "12.7 (d) $f->[0]: (12L + 3) 2u");
        is($macro{"SolTwelveG$f->[1]VerifyStatus"}, 0, "12.7 (d) $f->[0]: it passes");
        cmp_ok($v->{relative_dloss}, '<=', $v->{loss_tolerance}, '... inside the loss tolerance');
        cmp_ok($v->{relative_dgrad_norm}, '<=', $v->{grad_tolerance}, '... and the gradient one');
        like(slurp("$sols/12-ex7-verify-$f->[0].txt") // '',
             qr/^\$ minigpt --verify --precision $f->[0]\nverify: /,
             "12.7 (d) $f->[0]: the transcript under its command");
    }
    # (e) the bytes.
    is($macro{SolTwelveGBfBytes}, 16, '12.7 (e): bf16 holds 16 bytes a parameter');
    is($macro{SolTwelveGBfWeightsBytes}, 2, '... 2 of weights');
    is($macro{SolTwelveGBfGradientsBytes}, 2, '... 2 of gradients');
    is($macro{SolTwelveGBfMasterWeightsBytes}, 4, '... 4 of master weights');
    is($macro{SolTwelveGBfMomentsBytes}, 8, '... 8 of moments');
    is($macro{SolTwelveGGradsBytes}, 18, '12.7 (e): with --fp32-grads, 18');
}

# ------------------------------------------- the solution, the statements --
my $code = solution_sources_ok(solution => 'solutions/12-precision.tex',
                               prefix => 'SolTwelve', macros => \%macro,
                               transcripts => 4, width => 85);
unlike($code, qr/\\ref\{/,
       'no reference to a label of the book (the volumes are apart)');
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/12-precision.tex',
    solution => 'solutions/12-precision.tex',
    heading => 'solprecexercise');
answers_not_given_away($text, \%macro, qw(
    SolTwelveAFpMinSubnormal SolTwelveBSpacing SolTwelveBThousandFloat
    SolTwelveCScale SolTwelveCScaledMax SolTwelveDFourHundredMixedGpus
    SolTwelveDFourHundredEightState SolTwelveFOutlierHundredthError));
solutions_pdf_ok(chapter => 12, solution => 'solutions/12-precision.tex',
                 title => 'Mixed precision', items => scalar @items,
                 key => { 2 => $macro{SolTwelveBThousandFloat},
                          3 => $macro{SolTwelveCScale},
                          4 => $macro{SolTwelveDFourHundredMixedGpus} },
                 newer_than => "$sols/12-ex7-derived.tex");

done_testing();
