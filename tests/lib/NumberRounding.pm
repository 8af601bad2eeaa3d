# tests/lib/NumberRounding.pm: the number formats of Chapter 12 for the
# tests of its drill and solutions, written from the formats' values
# rather than their bits (tests/12-formats.t checks the bits): a format is
# its significand bits p, its smallest normal exponent and its largest
# finite number, and rounding is to nearest, ties to even, of the number
# as fp32 holds it, as the trainer and build/bin/formats round.
package NumberRounding;
use strict;
use warnings;
use POSIX qw(floor);
use Exporter qw(import);
our @EXPORT = qw(%number_format fp32 round_to relative_error $infinity);

# name => [p, smallest normal exponent, largest finite].
our %number_format = (
    bf16 => [8, -126, (2 - 2**-7) * 2**127],
    fp16 => [11, -14, (2 - 2**-10) * 2**15],
    e4m3 => [4, -6, 448],
    e5m2 => [3, -14, 57344],
);
our $infinity = 9**9**9;

# X as an fp32 number.
sub fp32 { return unpack 'f', pack 'f', $_[0] }

# round_to(X, FORMAT): fp32(X) rounded to FORMAT; past the largest
# number, infinity, or the string 'nan' for E4M3, which has no infinity.
sub round_to {
    my ($x, $f) = @_;
    $x = fp32($x);
    my ($p, $emin, $max) = @{ $number_format{$f} };
    return 0 if $x == 0;
    my $a = abs $x;
    my $e = floor(log($a) / log(2));
    $e-- while 2**$e > $a;
    $e++ while 2**($e + 1) <= $a;
    $e = $emin if $e < $emin;
    my $q = 2**($e - $p + 1);
    my $r = $a / $q;
    my $n = floor($r);
    $n++ if $r - $n > 0.5 || ($r - $n == 0.5 && $n % 2);
    my $v = $n * $q;
    return $f eq 'e4m3' ? 'nan' : $infinity if $v > $max;
    return $x < 0 ? -$v : $v;
}

# relative_error(X, FORMAT): |round_to(X) - fp32(X)| / |fp32(X)|.
sub relative_error {
    my ($x, $f) = @_;
    return abs(round_to($x, $f) - fp32($x)) / abs fp32($x);
}

1;
