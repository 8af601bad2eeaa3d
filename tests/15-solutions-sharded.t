#!/usr/bin/perl
# tests/15-solutions-sharded.t: the worked solutions to chapter 5's exercises
# (sharded state: ZeRO and FSDP) against the ZeRO formulas.
#
# Every run of solutions/05-sharded-state.sh is described once below, by its
# inputs as the exercise states them. For each, this file derives the state per
# device and the traffic on its own, from the bytes per parameter of the
# convention (mixed: 2 + 2 + 12; fp32-grads: 2 + 4 + 12) and the sharding of
# each stage, and holds to the closed forms of the ZeRO paper for mixed
# precision (16 Psi, 4 Psi + 12 Psi/N, 2 Psi + 14 Psi/N, 16 Psi/N; traffic
# 2 or 3 x Psi x 2 B x (N - 1)/N). Then:
#  - fleet memory --json, run here on the same inputs, and the JSON that the
#    solution script saved, must agree with it to a relative 1e-9;
#  - the macros the script wrote must print those values to their digits,
#    and so must every number the script derived with awk, redone in Perl;
#  - what the solutions state in words (which stage fits, which degree is the
#    smallest, which stage a convention hurts most) must hold;
#  - the solutions use only macros and files that exist; the exercise file
#    has at least six exercises, one solution each, and gives no answer away;
#  - once solutions/solutions.tex includes chapter 5, build/solutions.pdf
#    prints each heading "Exercise 5.N".
#
# Run after `make`:  prove -v tests/15-solutions-sharded.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
my $sols = "$root/build/solutions";
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT("no $fleet: run make first");
ok(-s "$sols/05-ex1-0.tex", 'the solution script has run (build/solutions/05-*)')
    or BAIL_OUT('no build/solutions/05-ex1-0.tex: run make first');


# ------------------------------------------------------- first principles --
# Bytes per parameter by kind: 16-bit weights, 16-bit gradients, fp32 master
# weights, fp32 gradient accumulator, Adam's two moments.
my %convention = (
    mixed        => { w => 2, g => 2, mw => 4, mg => 0, opt => 8 },
    'fp32-grads' => { w => 2, g => 0, mw => 4, mg => 4, opt => 8 },
);
my $USABLE = 80e9 * 0.8;     # H100, 80 % of its memory for the state

# The state per device and the traffic of one stage, kind by kind.
sub expected {
    my (%in) = (precision => 'mixed', @_);
    my ($P, $s, $N) = @in{qw(params stage dp)};
    my $c = $convention{ $in{precision} };
    my %e = (zero_stage => $s, dp => $N, params => $P,
             usable_bytes_per_gpu => $USABLE,
             static_bytes => $P * ($c->{w} + $c->{g} + $c->{mw} + $c->{mg} + $c->{opt}));
    $e{weight_bytes_per_device} = $P * $c->{w} / ($s >= 3 ? $N : 1);
    $e{gradient_bytes_per_device} = $P * ($c->{g} + $c->{mg}) / ($s >= 2 ? $N : 1);
    $e{optimizer_bytes_per_device} = $P * ($c->{mw} + $c->{opt}) / ($s >= 1 ? $N : 1);
    $e{bytes_per_device} = $e{weight_bytes_per_device}
        + $e{gradient_bytes_per_device} + $e{optimizer_bytes_per_device};
    $e{traffic_bytes} = ($s == 3 ? 3 : 2) * $P * $c->{w} * ($N - 1) / $N;
    return \%e;
}

# The closed forms of the ZeRO paper, mixed precision, 16-bit traffic.
sub closed_form {
    my ($P, $s, $N) = @_;
    my @state = (16 * $P, 4 * $P + 12 * $P / $N, 2 * $P + 14 * $P / $N, 16 * $P / $N);
    return ($state[$s], ($s == 3 ? 3 : 2) * $P * 2 * ($N - 1) / $N);
}

# Round up after rounding to nine figures, as the script does.
sub up { my ($x) = @_; return ceil(sprintf('%.9g', $x)); }

# ------------------------------------------------------------- the runs ----
# [exercise, macro prefix, file under build/solutions without .tex, inputs].
# Inputs that are another number's answer are this file's own derivation.
my $n405 = up(16 * 405e9 / $USABLE);
my $pow405 = 1;
$pow405 *= 2 while $pow405 < $n405;
my %n13 = (1 => up(12 * 13e9 / ($USABLE - 4 * 13e9)),
           2 => up(14 * 13e9 / ($USABLE - 2 * 13e9)),
           3 => up(16 * 13e9 / $USABLE));
my @word = qw(Zero One Two Three);
my @runs;
push @runs, [1, "SolFiveA$word[$_]", "05-ex1-$_", params => 70e9, stage => $_, dp => 64]
    for 0 .. 3;
push @runs, [2, 'SolFiveBFit',   '05-ex2-fit',   params => 405e9, stage => 3, dp => $n405],
            [2, 'SolFiveBShort', '05-ex2-short', params => 405e9, stage => 3, dp => $n405 - 1],
            [2, 'SolFiveBPow',   '05-ex2-pow',   params => 405e9, stage => 3, dp => $pow405];
push @runs, [3, "SolFiveC$word[$_]", "05-ex3-$_", params => 12.5e9, stage => $_, dp => 128]
    for 2, 3;
for my $s (1 .. 3) {
    push @runs, [4, "SolFiveDMixed$word[$s]", "05-ex4-mixed-$s", params => 100e9,
                 stage => $s, dp => 64, precision => 'mixed'],
                [4, "SolFiveDMegatron$word[$s]", "05-ex4-megatron-$s", params => 100e9,
                 stage => $s, dp => 64, precision => 'fp32-grads'];
}
push @runs, [5, "SolFiveE$word[$_]", "05-ex5-$_", params => 7e9, stage => $_, dp => 8]
    for 0 .. 3;
push @runs, [6, "SolFiveF$word[$_]", "05-ex6-$_", params => 100e9, stage => $_, dp => 1024]
    for 1 .. 3;
for my $s (1 .. 3) {
    push @runs, [7, "SolFiveG$word[$s]Fit", "05-ex7-$s-fit", params => 13e9,
                 stage => $s, dp => $n13{$s}],
                [7, "SolFiveG$word[$s]Short", "05-ex7-$s-short", params => 13e9,
                 stage => $s, dp => $n13{$s} - 1];
}

my $RTOL = 1e-9;
sub compare {
    my ($label, $got, $want) = @_;
    for my $key (sort keys %$want) {
        my ($g, $w) = ($got->{$key}, $want->{$key});
        if ($w == 0) {
            ok(defined $g && $g == 0, "$label: $key = 0") or diag('got ' . ($g // 'nothing'));
        } else {
            close_to($g, $w, $RTOL, "$label: $key = $w");
        }
    }
}

my %want;
for my $run (@runs) {
    my ($n, $prefix, $file, %in) = @$run;
    my $want = expected(%in);
    $want{$prefix} = $want;
    my $label = "5.$n $prefix";
    if (($in{precision} // 'mixed') eq 'mixed') {
        my ($state, $traffic) = closed_form(@in{qw(params stage dp)});
        close_to($want->{bytes_per_device}, $state, 1e-12, "$label: kind by kind = ZeRO's closed form");
        if ($traffic == 0) { is($want->{traffic_bytes}, 0, "$label: no traffic on one rank") }
        else { close_to($want->{traffic_bytes}, $traffic, 1e-12, "$label: traffic = closed form") }
    }
    my @flags = ('memory', '--params', $in{params}, '--zero', $in{stage}, '--dp', $in{dp});
    push @flags, '--precision', $in{precision} if $in{precision};
    compare("$label (fleet here)", fleet_json(@flags), $want);
    my $saved = eval { JSON::PP::decode_json(slurp("$sols/$file.json") // '') };
    ok($saved, "$label: the script saved $file.json") or next;
    compare("$label (the script's run)", $saved, $want);
}

# ---------------------------------------------------------- the macros ----
my %macro = %{ read_macros("$sols/05-*.tex") };

# A printed number: (value, half a unit in its last place), units applied.

sub agrees { return macro_agrees(\%macro, @_) }

sub camel { join '', map { ucfirst } split /_/, $_[0] }
for my $run (@runs) {
    my ($n, $prefix) = @$run;
    for my $key (qw(zero_stage dp weight_bytes_per_device gradient_bytes_per_device
                    optimizer_bytes_per_device bytes_per_device traffic_bytes
                    usable_bytes_per_gpu)) {
        agrees($prefix . camel($key), $want{$prefix}{$key}, "5.$n: $prefix $key");
    }
}

# ------------------------------------- what the script derived, and the prose
my %W = %want;
my $fits = sub { $_[0]{bytes_per_device} <= $USABLE * (1 + 1e-12) };

# 5.1: only stage 3 fits; stages 1 and 2 never can.
ok(!$fits->($W{SolFiveAZero}) && !$fits->($W{SolFiveAOne}) && !$fits->($W{SolFiveATwo}),
   '5.1: stages 0, 1 and 2 do not fit on 64 ranks');
ok($fits->($W{SolFiveAThree}), '5.1: stage 3 fits');
agrees('SolFiveAOneReplicated', 4 * 70e9 / 1e9, '5.1: stage 1 replicates 4 Psi (GB)');
agrees('SolFiveATwoReplicated', 2 * 70e9 / 1e9, '5.1: stage 2 replicates 2 Psi (GB)');
ok(4 * 70e9 > $USABLE && 2 * 70e9 > $USABLE, '5.1: both replicated parts exceed the usable memory');

# 5.2: N = ceil(16 Psi / usable) fits, N - 1 does not, and it is chapter 1's
# floor; the power of two leaves headroom.
agrees('SolFiveBQuotient', 16 * 405e9 / $USABLE, '5.2: 16 Psi / usable');
agrees('SolFiveBDegree', $n405, '5.2: the smallest degree');
agrees('SolFiveBPowerOfTwo', $pow405, '5.2: the next power of two');
ok($fits->($W{SolFiveBFit}) && !$fits->($W{SolFiveBShort}), "5.2: $n405 fits, one fewer does not");
my $floor = fleet_json('memory', '--params', 405e9);
is($floor->{gpus_min}, $n405, "5.2: the degree is chapter 1's GPUs to hold it");
is($floor->{gpus_whole_nodes}, 8 * ceil($n405 / 8), '5.2: ... in whole nodes of eight');
isnt($n405 % 8, 0, '5.2: the degree is not whole nodes, as the solution says');
my $left = $USABLE - 16 * 405e9 / $pow405;
agrees('SolFiveBPowHeadroomGB', $left / 1e9, '5.2: headroom at the power of two (GB)');
agrees('SolFiveBPowHeadroomPercent', 100 * $left / $USABLE, '5.2: ... as a share of usable');

# 5.3: design A, stage 2 against stage 3, at 50 GB/s.
{
    my ($two, $three) = @W{qw(SolFiveCTwo SolFiveCThree)};
    close_to($three->{traffic_bytes}, 3 * 12.5e9 * 2 * 127 / 128, 1e-12, '5.3: stage 3 traffic');
    ok(abs($three->{traffic_bytes} / 1e9 - 75) < 1, "5.3: about the seed's 75 GB");
    agrees('SolFiveCTwoSeconds', $two->{traffic_bytes} / 50e9, '5.3: stage 2 at 50 GB/s');
    agrees('SolFiveCThreeSeconds', $three->{traffic_bytes} / 50e9, '5.3: stage 3 at 50 GB/s');
    ok(abs($three->{traffic_bytes} / 50e9 - 1.5) < 0.05, "5.3: about the seed's 1.5 s");
    agrees('SolFiveCExtraSeconds', ($three->{traffic_bytes} - $two->{traffic_bytes}) / 50e9,
           '5.3: the extra time');
    agrees('SolFiveCTrafficRatio', 1.5, '5.3: stage 3 sends 1.5 times stage 2');
    agrees('SolFiveCSavedGB', ($two->{bytes_per_device} - $three->{bytes_per_device}) / 1e9,
           '5.3: memory stage 3 saves');
    agrees('SolFiveCTwoLeftGB', ($USABLE - $two->{bytes_per_device}) / 1e9,
           '5.3: what stage 2 leaves');
    ok($fits->($two), '5.3: stage 2 fits');
}

# 5.4: 18 bytes hurt stage 1 most; stage 3 by exactly 18/16; traffic unchanged.
{
    my %ratio;
    for my $s (1 .. 3) {
        $ratio{$s} = $W{"SolFiveDMegatron$word[$s]"}{bytes_per_device}
                   / $W{"SolFiveDMixed$word[$s]"}{bytes_per_device};
        agrees("SolFiveDRatio$word[$s]", $ratio{$s}, "5.4: stage $s, 18 B over 16 B");
        is($W{"SolFiveDMegatron$word[$s]"}{traffic_bytes},
           $W{"SolFiveDMixed$word[$s]"}{traffic_bytes}, "5.4: stage $s traffic unchanged");
    }
    ok($ratio{1} > $ratio{3} && $ratio{3} > $ratio{2}, '5.4: stage 1 suffers most, stage 2 least');
    ok(abs($ratio{3} - 18 / 16) < 1e-12, '5.4: stage 3 grows by 18/16');
    close_to($W{SolFiveDMegatronOne}{gradient_bytes_per_device}, 4 * 100e9, 1e-12,
             '5.4: the accumulator is counted as gradients, replicated at stage 1');
}

# 5.5: stages 0 to 2 send the same; the naive stage 1 sends as much as stage 3.
{
    my $t0 = $W{SolFiveEZero}{traffic_bytes};
    is($W{"SolFiveE$word[$_]"}{traffic_bytes}, $t0, "5.5: stage $_ sends what stage 0 does")
        for 1, 2;
    agrees('SolFiveENaiveGB', 3 * 7e9 * 2 * 7 / 8 / 1e9, '5.5: all-reduce then all-gather');
    close_to(1.5 * $t0, $W{SolFiveEThree}{traffic_bytes}, 1e-12, '5.5: ... as much as stage 3');
    ok(!$fits->($W{SolFiveEZero}) && $fits->($W{SolFiveEOne}) && $fits->($W{SolFiveETwo}),
       '5.5: stage 0 does not fit, stages 1 and 2 do');
}

# 5.6: on 1,024 ranks the replicated parts dominate; stage 3 is chapter 1's figure.
{
    my ($one, $two, $three) = @W{qw(SolFiveFOne SolFiveFTwo SolFiveFThree)};
    agrees('SolFiveFOneReplicatedPercent', 100 * 4 * 100e9 / $one->{bytes_per_device},
           '5.6: replicated share at stage 1');
    agrees('SolFiveFTwoReplicatedPercent', 100 * 2 * 100e9 / $two->{bytes_per_device},
           '5.6: replicated share at stage 2');
    ok(!$fits->($one) && !$fits->($two) && $fits->($three), '5.6: only stage 3 fits');
    agrees('SolFiveFThreeBytesPerGpuSharded', 16 * 100e9 / 1024, "5.6: chapter 1's per-GPU figure");
    close_to($three->{bytes_per_device}, 16 * 100e9 / 1024, 1e-12, '5.6: ... is stage 3');
    ok(abs($three->{bytes_per_device} / 1e9 - 1.6) < 0.05, "5.6: about the seed's 1.6 GB");
}

# 5.7: each stage's smallest degree fits and one fewer does not; stage 1's
# bound is whole and fills the card exactly; the limits are usable / r.
{
    my %rk = (1 => [4, 12], 2 => [2, 14], 3 => [0, 16]);
    for my $s (1 .. 3) {
        my ($r, $k) = @{ $rk{$s} };
        my $q = $k * 13e9 / ($USABLE - $r * 13e9);
        agrees("SolFiveG$word[$s]Quotient", $q, "5.7: stage $s bound");
        agrees("SolFiveG$word[$s]Degree", $n13{$s}, "5.7: stage $s smallest degree");
        ok($fits->($W{"SolFiveG$word[$s]Fit"}) && !$fits->($W{"SolFiveG$word[$s]Short"}),
           "5.7: stage $s fits at $n13{$s}, not at one fewer");
    }
    is_deeply([@n13{1, 2, 3}], [13, 5, 4], '5.7: 13, 5 and 4 ranks');
    ok(abs(12 * 13e9 / ($USABLE - 4 * 13e9) - $n13{1}) < 1e-9, "5.7: stage 1's bound is whole");
    close_to($W{SolFiveGOneFit}{bytes_per_device}, $USABLE, 1e-12, '5.7: ... and fills the usable memory exactly');
    agrees('SolFiveGLimitOne', $USABLE / 4 / 1e9, '5.7: stage 1 holds at most usable/4');
    agrees('SolFiveGLimitTwo', $USABLE / 2 / 1e9, '5.7: stage 2 holds at most usable/2');
}

# ------------------------------------------------------- the solutions ----
my $tex = slurp("$root/solutions/05-sharded-state.tex") // '';
(my $code = $tex) =~ s/(?<!\\)%.*$//mg;
my %used = map { $_ => 1 } $code =~ /\\(SolFive\w+)/g;
ok(scalar keys %used, 'solutions: they use SolFive macros');
is_deeply([grep { !exists $macro{$_} } sort keys %used], [],
          'solutions: every SolFive macro they use is defined');
for my $input ($code =~ /\{(build\/solutions\/[^}]+)\}/g) {
    ok(-s "$root/$input", "solutions: $input exists and is not empty");
}
my @inputs = $code =~ /\\input\{build\/solutions\/(05-[^}]+\.tex)\}/g;
my %input = map { $_ => 1 } @inputs;
for my $file (map { $_->[2] . '.tex' } @runs) {
    ok($input{$file}, "solutions: they input $file");
}
for my $txt (glob "$sols/05-*zero.txt") {
    like(slurp($txt) // '', qr/^(?:ZeRO stage|plain data parallel)/,
         "solutions: $txt starts at the sharded state");
}

# ------------------------------------------------------- the exercise file --
my $statements = slurp("$root/exercises/05-sharded-state.tex") // '';
(my $text = $statements) =~ s/(?<!\\)%.*$//mg;
like($text, qr/\\section\{Exercises\}/, 'exercises: a section');
unlike($text, qr/\\usepackage|enumitem|\[\[/, 'exercises: plain LaTeX, no enumitem');
my ($depth, $items) = (0, 0);
while ($text =~ /(\\begin\{enumerate\}|\\end\{enumerate\}|\\item\b)/g) {
    if    ($1 =~ /begin/) { $depth++ }
    elsif ($1 =~ /end/)   { $depth-- }
    elsif ($depth == 1)   { $items++ }
}
is($depth, 0, 'exercises: the enumerates are balanced');
cmp_ok($items, '>=', 6, "exercises: at least six ($items)");
my @headings = $code =~ /^\\solfiveexercise\{(\d+)\}/mg;
is_deeply(\@headings, [1 .. $items], 'exercises: one solution each, in order');

# The statements give inputs only: no answer, as the macros print it.
(my $flat = $text) =~ s/\{,\}|\\,|~/ /g;
$flat =~ s/(\d) (\d{3})(?!\d)/$1,$2/g;
for my $name (qw(SolFiveAThreeBytesPerDevice SolFiveAOneBytesPerDevice
                 SolFiveATwoBytesPerDevice SolFiveAThreeTrafficBytes
                 SolFiveBDegree SolFiveBQuotient SolFiveBPowBytesPerDevice
                 SolFiveBPowHeadroomGB SolFiveCTwoTrafficBytes
                 SolFiveCThreeTrafficBytes SolFiveCTwoSeconds SolFiveCThreeSeconds
                 SolFiveCTwoBytesPerDevice SolFiveDRatioOne SolFiveDRatioTwo
                 SolFiveDMegatronOneBytesPerDevice SolFiveDMixedOneBytesPerDevice
                 SolFiveEOneBytesPerDevice SolFiveEZeroTrafficBytes SolFiveENaiveGB
                 SolFiveFOneBytesPerDevice SolFiveFTwoBytesPerDevice
                 SolFiveFOneReplicatedPercent SolFiveFTwoReplicatedPercent
                 SolFiveGTwoQuotient SolFiveGThreeQuotient)) {
    my $answer = $macro{$name};
    ok(defined $answer, "exercises: \\$name exists to check") or next;
    (my $plain = $answer) =~ s/\\,/ /g;
    ok($flat !~ /(?<![\d.,])\Q$plain\E(?!\d|\.\d)/,
       "exercises: the answer $plain (\\$name) is not given away");
}

# The largest models of 5.7 are small whole numbers of billions, which the
# statements may use for other things; they must not appear as billions.
for my $name (qw(SolFiveGLimitOne SolFiveGLimitTwo)) {
    my $answer = $macro{$name} // 'missing';
    ok($flat !~ /(?<![\d.,])\Q$answer\E(?:\s|\\,|~)*(?:billion|\\times10\^\{?9|e9)/,
       "exercises: the limit $answer billion (\\$name) is not given away");
}

# ------------------------------------------------------- the solutions PDF --
SKIP: {
    my $master = slurp("$root/solutions/solutions.tex") // '';
    skip 'solutions/solutions.tex does not \\input chapter 5 yet', $items + 3
        unless $master =~ /^\s*\\input\{solutions\/05-sharded-state\.tex\}/m;
    my ($status, $body) = run('pdftotext', '-enc', 'UTF-8', "$root/build/solutions.pdf", '-');
    is($status, 0, 'solutions: pdftotext reads build/solutions.pdf');
    my @chapters = split /^Sharded state: ZeRO and FSDP$/m, $body;
    $body = @chapters > 1 ? $chapters[-1] : '';
    ok(length $body, 'solutions: the PDF has the chapter');
    unlike($body, qr/\?\?/, 'solutions: no unresolved references in chapter 5');
    for my $n (1 .. $items) {
        like($body, qr/^Exercise 5\.$n$/m, "solutions: heading Exercise 5.$n");
    }
}

done_testing();
