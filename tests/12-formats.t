#!/usr/bin/perl
# Chapter 12, the number formats: formats --json's rounding of numbers to
# bf16, fp16, E4M3 and E5M2 against a second implementation written here
# from the definitions (fp32's bits taken apart with pack and unpack, the
# fraction shifted and rounded with integer arithmetic, ties to even):
# exact numbers, midpoints and their neighbours, the largest finite number
# and the first that overflows, subnormals and underflow, infinities, NaN,
# negative numbers and random bit patterns; formats --ranges against each
# format's definition; the refusals.
#
# Run after `make build/bin/formats`:  prove -v tests/12-formats.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use Test::More;

my $formats = root() . '/build/bin/formats';
ok(-x $formats, 'formats is built') or BAIL_OUT('run make build/bin/formats');

# E, M and whether the all-ones exponent is IEEE's infinity and NaN.
my %format = (bf16 => [8, 7, 1], fp16 => [5, 10, 1], e4m3 => [4, 3, 0],
              e5m2 => [5, 2, 1]);
my @names = qw(bf16 fp16 e4m3 e5m2);

sub float_of_bits { return unpack('f<', pack('L<', $_[0])) }
sub bits_of_float { return unpack('L<', pack('f<', $_[0])) }

# The format's bits of the fp32 number whose bits are $x, rounded to
# nearest, ties to even.
sub round_bits {
    my ($x, $name) = @_;
    my ($E, $M, $ieee) = @{ $format{$name} };
    my $bias = 2**($E - 1) - 1;
    my $sign = ($x >> 31) << ($E + $M);
    my $ones = 2**$E - 1;
    my $nan = $ieee ? $sign | $ones << $M | 1 << ($M - 1)
                    : $sign | $ones << $M | (2**$M - 1);
    my $inf = $ieee ? $sign | $ones << $M : $nan;
    my ($ex, $fr) = (($x >> 23) & 255, $x & 0x7fffff);
    return $fr ? $nan : $inf if $ex == 255;
    return $sign if $ex == 0 && $fr == 0;
    my ($sig, $e2) = $ex == 0 ? ($fr, -149) : ($fr | 1 << 23, $ex - 150);
    my $lead = $e2;                      # the exponent of the leading bit
    $lead++ while $sig >> ($lead - $e2 + 1);
    my $emin = 1 - $bias;
    my $qe = ($lead > $emin ? $lead : $emin) - $M;   # the quantum 2^qe
    my $shift = $qe - $e2;
    my $n;
    if ($shift <= 0) {
        $n = $sig << -$shift;
    } elsif ($shift > 40) {
        $n = 0;                          # below half the smallest step
    } else {
        $n = $sig >> $shift;
        my $rest = $sig & ((1 << $shift) - 1);
        my $half = 1 << ($shift - 1);
        $n++ if $rest > $half || ($rest == $half && ($n & 1));
    }
    return $sign if $n == 0;
    if ($n >= 2**($M + 1)) {             # the carry made a new binade
        $n >>= 1;
        $qe++;
    }
    return $sign | $n if $n < 2**$M;     # subnormal
    my $field = $qe + $M + $bias;
    my $frac = $n - 2**$M;
    if ($ieee) {
        return $inf if $field > 2**$E - 2;
    } else {
        return $nan
            if $field > $ones || ($field == $ones && $frac == 2**$M - 1);
    }
    return $sign | $field << $M | $frac;
}

# The number a format's bits stand for (finite, or undef).
sub value_of {
    my ($bits, $name) = @_;
    my ($E, $M, $ieee) = @{ $format{$name} };
    my $bias = 2**($E - 1) - 1;
    my $sign = ($bits >> ($E + $M)) & 1 ? -1 : 1;
    my $field = ($bits >> $M) & (2**$E - 1);
    my $frac = $bits & (2**$M - 1);
    return undef if $field == 2**$E - 1 && ($ieee || $frac == 2**$M - 1);
    return $sign * $frac * 2**(1 - $bias - $M) if $field == 0;
    return $sign * (2**$M + $frac) * 2**($field - $bias - $M);
}

# The numbers to round, as fp32 bits.
my %cases;
sub add { $cases{$_[0] & 0xffffffff} = 1 for @_ }
for my $name (@names) {
    my ($E, $M) = @{ $format{$name} };
    my $width = 1 + $E + $M;
    my $step = $width == 16 ? ($name eq 'bf16' ? 97 : 37) : 1;
    my @finite;
    for (my $b = 0; $b < 2**($width - 1); $b += $step) {
        my $v = value_of($b, $name);
        push @finite, $v if defined $v;
    }
    # The largest few and the smallest few of every format, exactly.
    for my $b (0 .. 8, 2**($width - 1) - 8 .. 2**($width - 1) - 1) {
        my $v = value_of($b, $name);
        push @finite, $v if defined $v;
    }
    @finite = sort { $a <=> $b } @finite;
    for my $i (0 .. $#finite) {
        my $bits = bits_of_float($finite[$i]);
        add($bits, $bits | 1 << 31);                 # exact, both signs
        next if $i == 0;
        my $mid = ($finite[$i - 1] + $finite[$i]) / 2;   # a tie
        my $m = bits_of_float($mid);
        add($m, $m + 1, $m - 1, ($m | 1 << 31), ($m + 1) | 1 << 31);
    }
}
# The largest finite number, the midpoint above it (the first to overflow
# in IEEE's formats), underflow, infinities and NaN; then random patterns.
for my $name (@names) {
    my ($E, $M, $ieee) = @{ $format{$name} };
    my $bias = 2**($E - 1) - 1;
    my $emax = 2**$E - ($ieee ? 2 : 1) - $bias;
    my $top = $ieee ? 2 - 2**-$M : 2 - 2**(1 - $M);
    my $largest = $top * 2**$emax;
    my $over = $largest + 2**($emax - $M - 1);       # half a step above
    my $tiny = 2**(1 - $bias - $M);                  # smallest subnormal
    for my $v ($largest, $over, $tiny / 2, $tiny / 4, $tiny * 0.75) {
        next if $v > 3.4e38;
        my $b = bits_of_float($v);
        add($b, $b + 1, $b - 1, $b | 1 << 31);
    }
}
add(0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0, 0x80000000, 1,
    0x7f7fffff);
srand(12);
add(int(rand(2**32))) for 1 .. 3000;

my @bits = sort { $a <=> $b } keys %cases;
my ($wrong, $wrong_value) = (0, 0);
my %checked;
while (my @batch = splice(@bits, 0, 2000)) {
    my @args = map {
        my $f = float_of_bits($_);
        $f != $f ? (($_ >> 31) ? '-nan' : 'nan') : sprintf('%.9g', $f)
    } @batch;
    my $json = json_of($formats, @args);
    my $values = $json->{values};
    is(scalar @$values, scalar @batch, 'formats prints one row a number');
    for my $i (0 .. $#batch) {
        my $x = $batch[$i];
        my $f = float_of_bits($x);
        for my $name (@names) {
            my $want = round_bits($x, $name);
            my $got = hex($values->[$i]{$name}{bits});
            my $near = $values->[$i]{$name}{nearest};
            my $value = value_of($want, $name);
            $wrong_value++ if defined $value && $near ne 'nan'
                           && $near ne 'inf' && $near ne '-inf'
                           && $near != $value;
            next if $got == $want;
            # A NaN's payload need not survive; its being a NaN must.
            next if $f != $f && !defined value_of($got, $name)
                 && !defined value_of($want, $name);
            diag(sprintf "%s of %s (0x%08x): got 0x%x, want 0x%x", $name,
                 $args[$i], $x, $got, $want) if $wrong++ < 10;
        }
        $checked{$_}++ for @names;
    }
}
is($wrong, 0, sprintf 'formats rounds %d numbers as the definition does, '
   . 'in every format', $checked{bf16});
is($wrong_value, 0, 'the nearest number it prints is the one its bits '
   . 'stand for (the fast roundings of bf16 and fp16 agree)');

# Ties go both ways: 1 + 2^-8 (between 1 and 1 + 2^-7) down to 1 in bf16,
# 1 + 3 * 2^-8 up to 1 + 2^-6; fp16's largest and first overflow.
my $ties = json_of($formats, qw(1.00390625 1.01171875 65519 65520 464 465));
my @near = map { $_->{bf16}{nearest} } @{ $ties->{values} }[0, 1];
is_deeply(\@near, [1, 1.015625], 'bf16 ties go to even, down and up');
is($ties->{values}[2]{fp16}{nearest}, 65504, 'fp16: 65519 rounds to 65504');
is($ties->{values}[3]{fp16}{nearest}, 'inf', 'fp16: 65520 overflows');
is($ties->{values}[4]{e4m3}{nearest}, 448, 'e4m3: the tie 464 is 448');
is($ties->{values}[5]{e4m3}{nearest}, 'nan', 'e4m3: 465 overflows to NaN');

# --ranges against the definitions.
my $ranges = json_of($formats, '--ranges')->{formats};
my %row = map { $_->{format} => $_ } @$ranges;
$format{fp32} = [8, 23, 1];
for my $name (qw(fp32 bf16 fp16 e4m3 e5m2)) {
    my ($E, $M, $ieee) = @{ $format{$name} };
    my $bias = 2**($E - 1) - 1;
    my $emax = 2**$E - ($ieee ? 2 : 1) - $bias;
    my %want = (
        bits => 1 + $E + $M, exponent_bits => $E, mantissa_bits => $M,
        significant_bits => $M + 1,
        largest => ($ieee ? 2 - 2**-$M : 2 - 2**(1 - $M)) * 2**$emax,
        smallest_normal => 2**(1 - $bias),
        smallest_subnormal => 2**(1 - $bias - $M),
        smallest_subnormal_exponent => 1 - $bias - $M,
        unit_roundoff => 2**-($M + 1),
    );
    for my $k (sort keys %want) {
        close_to($row{$name}{$k}, $want{$k}, 1e-15, "--ranges: $name $k");
    }
}
is($row{fp16}{largest}, 65504, 'fp16 ends at 65504');
is($row{e4m3}{largest}, 448, 'e4m3 ends at 448');
is($row{e5m2}{largest}, 57344, 'e5m2 ends at 57344');

# Refusals.
refused('no numbers', qr/give numbers to round, or --ranges/, $formats);
refused('a word that is not a number', qr/not a number: "two"/, $formats,
        'two');
refused('--ranges with numbers', qr/--ranges takes no numbers/, $formats,
        '--ranges', '1');
done_testing();
