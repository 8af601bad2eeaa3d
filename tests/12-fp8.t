#!/usr/bin/perl
# Chapter 12, fp8: a tensor's scale (the largest power of two that keeps
# its largest magnitude within the format's largest number) and the
# saturating rounding, from formats --tensor, against NumberRounding.pm;
# minigpt --verify --precision fp8 with its tolerance recomputed here; the
# bytes an fp8 run holds, counted here from the model's shapes; that an
# fp8 run's loss falls; and the refusals.
#
# Run after `make build/bin/minigpt build/bin/formats`:
#     prove -v tests/12-fp8.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use NumberRounding;
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my $formats = root() . '/build/bin/formats';
ok(-x $minigpt && -x $formats, 'minigpt and formats are built')
  or BAIL_OUT('run make build/bin/minigpt build/bin/formats');
my $dir = tempdir(CLEANUP => 1);

# ------------------------------------------- a tensor's scale, rounding --
# The scale: the largest power of two s with amax * s <= largest.
sub scale_of {
    my ($amax, $f) = @_;
    my $largest = $number_format{$f}[2];
    return 1 if $amax == 0;
    my $e = 0;
    $e++ while $amax * 2**($e + 1) <= $largest;
    $e-- while $amax * 2**$e > $largest;
    return 2**$e;
}

# What a GEMM holds of x: x * s rounded, saturated, and divided by s.
sub held {
    my ($x, $s, $f) = @_;
    my $largest = $number_format{$f}[2];
    my $y = fp32($x) * $s;
    $y = $largest if $y > $largest;
    $y = -$largest if $y < -$largest;
    return round_to($y, $f) / $s;
}

sub tensor {
    my ($f, @numbers) = @_;
    my $r = json_of($formats, '--tensor', $f, @numbers);
    return @{ $r->{values} };
}

srand(12);
my @cases = (
    [e4m3 => 0.01, 0.05, -3, 2000],           # one outlier
    [e4m3 => 448, -1, 0.5],                   # already at the largest
    [e4m3 => 449, 1e-3],                      # just past it: one step down
    [e4m3 => 448, 1.0625, 1.1875, -1.0625,    # ties at scale 1, to even,
           3 * 2**-10, 5 * 2**-10, 2**-10],   # ... among the subnormals too
    [e5m2 => 57344, 1.125, 1.375, 3 * 2**-17, 2**-17],
    [e5m2 => 1e-9, 3e-7, -2e-4],              # gradients, scaled up
    [e5m2 => 57344, 1],
    [e4m3 => map { (rand() - 0.5) * 10**(4 * rand() - 2) } 1 .. 200],
    [e5m2 => map { (rand() - 0.5) * 10**(8 * rand() - 9) } 1 .. 200],
);
for my $case (@cases) {
    my ($f, @x) = @$case;
    my $amax = 0;
    for (@x) { $amax = abs fp32($_) if abs fp32($_) > $amax }
    my $s = scale_of($amax, $f);
    my @got = tensor($f, @x);
    my $name = "$f tensor of " . @x . " (largest $amax)";
    is($got[0]{scale}, $s, "$name: its scale is 2^" . log($s) / log(2));
    cmp_ok($amax * $got[0]{scale}, '<=', $number_format{$f}[2],
           "$name: its largest magnitude scaled stays in range");
    my $wrong = grep { $got[$_]{held} != held($x[$_], $s, $f) } 0 .. $#x;
    is($wrong, 0, "$name: every number held as NumberRounding rounds it");
}
{
    my @got = tensor('e4m3', 0, 0);
    is($got[0]{scale}, 1, 'a tensor of zeros has a scale of 1');
    is($got[1]{held}, 0, '... and stays zero');
}
# A stale scale, too large for the tensor, saturates instead of overflowing.
{
    my $r = json_of($formats, qw(--tensor e4m3 --scale 1 0.01 1000 -1e6));
    my @got = @{ $r->{values} };
    is($got[1]{scaled}, 448, 'saturation: 1000 at scale 1 is E4M3\'s 448');
    is($got[2]{scaled}, -448, '... and -1e6 is -448, not NaN');
    is($got[0]{held}, round_to(0.01, 'e4m3'), '... while 0.01 rounds as usual');
    my $e5 = json_of($formats, qw(--tensor e5m2 --scale 1 1e6));
    is($e5->{values}[0]{scaled}, 57344, 'E5M2 saturates at 57344, not inf');
}

# ------------------------------------------------------------ --verify --
my %tiny = (layers => 2, hidden => 16, heads => 2, seq => 8, batch => 2,
            vocab => 16);
my @tiny = (minigpt_flags(%tiny), '--quiet');
my $N = minigpt_params(%tiny);
my ($L, $C) = @tiny{qw(layers hidden)};
{
    my ($status, $out) = run($minigpt, @tiny, qw(--verify --precision fp8));
    is($status, 0, '--verify --precision fp8 passes');
    like($out, qr{\|dgrad\|/\|grad\| = \S+ .*: OK}s, '... and prints the '
         . 'gradient\'s difference');
    my ($u, $u4, $u5) = (2**-8, 2**-4, 2**-3);
    my $v = json_of($minigpt, @tiny, qw(--verify --precision fp8));
    is($v->{precision}, 'fp8', 'the check names fp8');
    close_to($v->{loss_tolerance}, (6 * $L + 1) * 2 * $u + 8 * $L * $u4,
             1e-9, 'the loss\'s tolerance: (6L + 1)·2u + 8L·u4');
    close_to($v->{grad_tolerance}, (12 * $L + 3) * 2 * $u
             + (12 * $L + 1) * $u4 + (4 * $L + 1) * $u5, 1e-9,
             'the gradient\'s: (12L + 3)·2u + (12L + 1)·u4 + (4L + 1)·u5');
    my $bf16 = json_of($minigpt, @tiny, qw(--verify --precision bf16));
    cmp_ok($v->{relative_dgrad_norm}, '>', $bf16->{relative_dgrad_norm},
           'fp8\'s gradient is further from fp32\'s than bf16\'s: it rounds '
           . 'to 8 bits');
    cmp_ok($v->{relative_dgrad_norm}, '<=', $v->{grad_tolerance},
           '... within its tolerance');
    # The worst case adds every rounding and passes 1 (a zeroed gradient
    # would pass it); independent roundings add as squares.
    my $independent = sqrt((12 * $L + 3) * (2 * $u)**2
                           + (12 * $L + 1) * $u4**2 + (4 * $L + 1) * $u5**2);
    cmp_ok($v->{relative_dgrad_norm}, '<', $independent,
           "... and below the root-sum-square of its roundings, "
           . sprintf('%.3g', $independent));
}

# ------------------------------------------------------ the bytes held --
# The four linear layers' matrices, 12 C^2 a block, in E4M3 (1 byte) with
# a 4-byte scale a matrix; every other weight in bf16; bf16 gradients;
# fp32 master weights and moments. Buffers: two of the largest unit
# (fp32) and the residual stream's gradient, (B, T, C) in fp32.
{
    my $r = json_of($minigpt, @tiny, qw(--steps 1 --precision fp8));
    my $N8 = 12 * $L * $C * $C;
    my %want = (weights => $N8 + 2 * ($N - $N8) + 4 * 4 * $L,
                gradients => 2 * $N, master_weights => 4 * $N,
                master_gradients => 0, moments => 8 * $N);
    my $sum = 0;
    for my $kind (sort keys %want) {
        is($r->{bytes_held}{$kind}, $want{$kind}, "fp8: $kind hold "
           . "$want{$kind} bytes");
        $sum += $want{$kind};
    }
    close_to($r->{bytes_per_param}, $sum / $N, 1e-12,
             'fp8: bytes_per_param is what is held over N');
    my $unit = 12 * $C * $C + 9 * $C + 4 * $C;          # one block's
    my $ends = $tiny{vocab} * $C + 2 * $C;              # the head's unit
    $unit = $ends if $ends > $unit;
    $unit = ($tiny{vocab} + $tiny{seq}) * $C if ($tiny{vocab} + $tiny{seq})
                                                * $C > $unit;
    is($r->{bytes_held}{buffers}, 4 * (2 * $unit
       + $tiny{batch} * $tiny{seq} * $C), 'fp8: the buffers');
    is($r->{precision}, 'fp8', 'the report names fp8');
}

# ---------------------------------------------------- the loss falls --
{
    my $log = "$dir/fp8.csv";
    my $r = json_of($minigpt, @tiny, qw(--steps 40 --eval-every 40
                    --precision fp8 --log), $log);
    open my $fh, '<', $log or die "$log: $!";
    chomp(my @lines = <$fh>);
    my @names = split /,/, shift @lines;
    my ($at) = grep { $names[$_] eq 'train_loss' } 0 .. $#names;
    my @loss = map { (split /,/)[$at] } @lines;
    cmp_ok($loss[-1], '<', $loss[0] - 0.15, "an fp8 run's loss falls "
           . "($loss[0] to $loss[-1] in 40 steps)");
    is($r->{loss_scale}{skipped_steps}, 0, '... and skips no step');
    my $fp32 = json_of($minigpt, @tiny, qw(--steps 40 --eval-every 40));
    isnt($r->{val_loss}, $fp32->{val_loss}, '... differs from fp32\'s');
    close_to($r->{val_loss}, $fp32->{val_loss}, 0.01,
             '... and ends within 1 % of it');
}

# ------------------------------------------------------------ refusals --
refused('fp8 with a loss scale', qr/no loss scale/,
        $minigpt, @tiny, qw(--precision fp8 --loss-scale 8));
refused('fp8 with --no-loss-scaling', qr/no loss scale/,
        $minigpt, @tiny, qw(--precision fp8 --no-loss-scaling));
refused('fp8 with --fp32-grads', qr/no --fp32-grads/,
        $minigpt, @tiny, qw(--precision fp8 --fp32-grads));
refused('fp8 on the GPU', qr/no fp8 GEMMs/,
        $minigpt, @tiny, qw(--device cuda --precision fp8));
refused('fp8 with --gradcheck', qr/--zero, --gradcheck and --dump/,
        $minigpt, @tiny, qw(--precision fp8 --gradcheck));
refused('formats --tensor with another format', qr/e4m3 or e5m2/,
        $formats, qw(--tensor bf16 1));
refused('formats --scale without --tensor', qr/--scale is for --tensor/,
        $formats, qw(--scale 2 1));
done_testing();
