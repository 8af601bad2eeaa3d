#!/usr/bin/perl
# tests/12-drill.t: the numbers of chapter 12's interview drill
# (build/numbers/12-drill.tex, from code/runs/12-drill.sh) against the
# formats' definitions and against the tools, each worked out again here:
# a format with a significand of p bits and an exponent of e bits has
# u = 2^-p, a smallest normal number 2^(2 - 2^(e-1)), and (bf16, fp16)
# a largest finite (2 - 2^(1-p)) 2^(2^(e-1) - 1) or (E4M3, E5M2, whose
# largest codes are special) the OCP standard's 448 and 57,344; the drill's
# roundings by a round-to-nearest-even written again in Perl; the bytes
# against (b_w + b_g + 12) N; the trainer's bytes and histogram against a
# run of its own. Each sentence of the drill that reads a number (the
# small gradient vanishes in fp16, the update is lost in both 16-bit
# formats but not in fp32, fp8's state is bf16's) is checked against it.
#
# Run after `make`:  prove -v tests/12-drill.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use NumberRounding;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $numbers = "$root/build/numbers";
ok(-s "$numbers/12-drill.tex", 'the drill has run (build/numbers/12-drill.tex)')
    or BAIL_OUT('no build/numbers/12-drill.tex: run make first');
my %macro = %{ read_macros("$numbers/12-drill.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }

my %format = %number_format;
my ($bf, $fp) = ($format{bf16}, $format{fp16});
is($macro{PrecDrillBfBits}, 8, 'bf16: 8 significand bits');
is($macro{PrecDrillFpBits}, 11, 'fp16: 11');
is($macro{PrecDrillFloatBits}, 24, 'fp32: 24');
agrees('PrecDrillBfUnit', 2**-8, "bf16's unit roundoff 2^-8");
agrees('PrecDrillFpUnit', 2**-11, "fp16's 2^-11");
agrees('PrecDrillFloatUnit', 2**-24, "fp32's 2^-24");
agrees('PrecDrillFpMax', 65504, "fp16's largest");
agrees('PrecDrillFpMinNormal', 2**-14, "fp16's smallest normal");
agrees('PrecDrillFpMinSubnormal', 2**-24, "fp16's smallest subnormal");
agrees('PrecDrillBfMax', $bf->[2], "bf16's largest");
agrees('PrecDrillBfMinNormal', 2**-126, "bf16's smallest normal, fp32's");
agrees('PrecDrillFpBinades', log(65504 / 2**-24) / log(2), "fp16's span");
agrees('PrecDrillBfBinades', log($bf->[2] / 2**-126) / log(2), "bf16's normal span");
agrees('PrecDrillEfourUnit', 2**-4, "E4M3's unit roundoff");
agrees('PrecDrillEfourMax', 448, "E4M3's largest");
agrees('PrecDrillEfourBinades', log(448 / 2**-9) / log(2), "E4M3's span");
agrees('PrecDrillEfiveUnit', 2**-3, "E5M2's unit roundoff");
agrees('PrecDrillEfiveMax', 57344, "E5M2's largest");

# The roundings the drill quotes.
my ($gradient, $scale, $update) = (1e-8, 65536, 8e-5);
agrees('PrecDrillGradient', $gradient, 'the example gradient');
is(value('PrecDrillTinyFp'), 0, 'the gradient is 0 in fp16') and
    is(round_to($gradient, 'fp16'), 0, '... as rounding says');
agrees('PrecDrillTinyBf', round_to($gradient, 'bf16'), 'and kept in bf16');
agrees('PrecDrillTinyBfError',
       100 * abs(round_to($gradient, 'bf16') - $gradient) / $gradient,
       "bf16's error on it");
cmp_ok(abs(round_to($gradient, 'bf16') - $gradient) / $gradient, '<=', 2**-8,
       '... within u');
is($macro{PrecDrillScaleLog}, 16, 'the first scale is 2^16');
agrees('PrecDrillScaled', $gradient * $scale, 'the scaled gradient');
agrees('PrecDrillScaledFpError',
       100 * abs(round_to($gradient * $scale, 'fp16') - $gradient * $scale)
           / ($gradient * $scale), 'fp16 holds it');
cmp_ok($gradient * $scale, '>=', 2**-14, '... as a normal number');
agrees('PrecDrillUpdate', $update, "Llama 3's peak rate");
is($macro{PrecDrillGainBf}, 1, '1 + the update is 1 in bf16');
is($macro{PrecDrillGainFp}, 1, '... and in fp16');
is(round_to(1 + $update, 'bf16'), 1, 'as rounding says, in bf16');
is(round_to(1 + $update, 'fp16'), 1, '... and in fp16');
cmp_ok($update, '>', 2**-24, 'fp32 keeps it: the update is above its u');
agrees('PrecDrillUpdateOverBfUnit', $update / 2**-8, "the update in bf16's u");
cmp_ok($update, '<', 2**-8 / 2, 'below half of u: lost whatever the weight');

# The bytes of 100B.
my $N = 100e9;
agrees('PrecDrillMixedBytes', 16 * $N, 'mixed: 16 N');
agrees('PrecDrillFloatBytes', 16 * $N, 'fp32: 16 N too');
agrees('PrecDrillLeanBytes', 10 * $N, 'lean: 10 N');
agrees('PrecDrillEightBytes', 15 * $N, 'fp8: 8-bit weights, bf16 '
       . 'gradients, 1 + 2 + 4 + 8 = 15 bytes a parameter');
agrees('PrecDrillOptimizerShare', 100 * 12 / 16, 'fp32 state is 12 of 16');
agrees('PrecDrillEightSaving', 100 * 1 / 16, '8-bit weights save 1 of 16');
is($macro{PrecDrillFpThirtyTwoState}, 12, '12 bytes of fp32 state');
is($macro{PrecDrillMixedPerParam}, 16, '16 bytes');
is($macro{PrecDrillLeanPerParam}, 10, '10 bytes lean');
my $mixed = fleet_json(qw(memory --params 100e9 --precision mixed));
is($mixed->{static_bytes}, 16 * $N, "fleet memory's own report");

# The loss scaler's window and the skipped share.
my $minigpt = "$root/build/bin/minigpt";
my (undef, $help) = run($minigpt, '--help');
like($help, qr/--loss-scale-window.*\(default 2000\)/,
     "the trainer's window is 2,000 steps");
agrees('PrecDrillWindow', 2000, 'the window printed');
agrees('PrecDrillSkipShare', 100 / 2001, 'at most one skip in 2,001 steps');

# The trainer's numbers, from runs of its own.
my @machine = ('--machine', "$root/build/machine.json", '--steps', 1, '--quiet');
my %bytes = map { $_ => json_of($minigpt, @machine, '--precision', $_)->{bytes_per_param} }
            qw(fp32 bf16 fp8);
agrees('PrecDrillTrainerFloat', $bytes{fp32}, "the trainer's fp32 bytes");
agrees('PrecDrillTrainerBf', $bytes{bf16}, "its bf16 bytes");
agrees('PrecDrillTrainerEight', $bytes{fp8}, "its fp8 bytes");
cmp_ok($bytes{fp8}, '>', 15, 'fp8 holds more than the convention\'s 15: '
       . 'its embeddings and head stay in bf16');
is($bytes{bf16}, 16, "bf16 holds the convention's 16 bytes");
my $dir = tempdir(CLEANUP => 1);
my $step = json_of($minigpt, @machine, '--grad-histogram', "$dir/h.csv");
agrees('PrecDrillUnigram', $step->{unigram_entropy}, 'the unigram floor');
agrees('PrecDrillBigram', $step->{bigram_entropy}, 'the bigram floor');
cmp_ok($step->{bigram_entropy}, '<', $step->{unigram_entropy}, 'the lower floor is the bigram');
my ($all, $below, $flushed) = (0, 0, 0);
open my $h, '<', "$dir/h.csv" or die "$dir/h.csv: $!";
my $header = <$h>;
like($header, qr/^exponent,param_grads,activation_grads/, 'the histogram');
while (<$h>) {
    chomp;
    my ($e, $p, $a) = split /,/;
    next if $e eq 'zero';
    $all += $p + $a;
    $below += $p + $a if $e < -14;
    $flushed += $p + $a if $e <= -26;
}
ok($all > 0, 'the histogram counts gradients');
agrees('PrecDrillBelowFpNormal', 100 * $below / $all, "below fp16's smallest normal");
agrees('PrecDrillFlushedFp', 100 * $flushed / $all, 'below half its smallest subnormal');
cmp_ok($below, '>', 0, 'some gradients lie below it, as the drill says');

done_testing();
