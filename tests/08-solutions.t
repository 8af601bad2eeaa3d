#!/usr/bin/perl
# tests/08-solutions.t: the worked solutions to chapter 8's exercises
# (sharded state: ZeRO and FSDP) against the ZeRO formulas.
#
# Every run of solutions/08-sharded-state.sh is described once below, by its
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
#  - the runs of minigpt behind exercises 5.9 to 5.12 must send, per rank and
#    step, exactly what a ring sends rank by rank for the collectives of each
#    stage, and hold exactly the stage-3 buffers, counted here from the unit
#    sizes of the model's shapes (and so must one run of this test's own, on
#    units of odd sizes); their macros, and the layers, micro-batches and
#    tolerances the solutions derive, are redone here in Perl;
#  - once solutions/solutions.tex includes chapter 8, build/solutions.pdf
#    prints each heading "Exercise 8.N".
#
# Run after `make`:  prove -v tests/08-solutions.t
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
ok(-s "$sols/08-ex1-0.tex", 'the solution script has run (build/solutions/08-*)')
    or BAIL_OUT('no build/solutions/08-ex1-0.tex: run make first');


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

# ------------------------------------------------------------- the runs ----
# [exercise, macro prefix, file under build/solutions without .tex, inputs].
# Inputs that are another number's answer are this file's own derivation;
# counts are rounded up by round_up, which forgives floating-point noise.
my $n405 = round_up(16 * 405e9 / $USABLE);
my $pow405 = 1;
$pow405 *= 2 while $pow405 < $n405;
my %n13 = (1 => round_up(12 * 13e9 / ($USABLE - 4 * 13e9)),
           2 => round_up(14 * 13e9 / ($USABLE - 2 * 13e9)),
           3 => round_up(16 * 13e9 / $USABLE));
my @word = qw(Zero One Two Three);
my @runs;
push @runs, [1, "SolFiveA$word[$_]", "08-ex1-$_", params => 70e9, stage => $_, dp => 64]
    for 0 .. 3;
push @runs, [2, 'SolFiveBFit',   '08-ex2-fit',   params => 405e9, stage => 3, dp => $n405],
            [2, 'SolFiveBShort', '08-ex2-short', params => 405e9, stage => 3, dp => $n405 - 1],
            [2, 'SolFiveBPow',   '08-ex2-pow',   params => 405e9, stage => 3, dp => $pow405];
push @runs, [3, "SolFiveC$word[$_]", "08-ex3-$_", params => 12.5e9, stage => $_, dp => 128]
    for 2, 3;
for my $s (1 .. 3) {
    push @runs, [4, "SolFiveDMixed$word[$s]", "08-ex4-mixed-$s", params => 100e9,
                 stage => $s, dp => 64, precision => 'mixed'],
                [4, "SolFiveDMegatron$word[$s]", "08-ex4-megatron-$s", params => 100e9,
                 stage => $s, dp => 64, precision => 'fp32-grads'];
}
push @runs, [5, "SolFiveE$word[$_]", "08-ex5-$_", params => 7e9, stage => $_, dp => 8]
    for 0 .. 3;
push @runs, [6, "SolFiveF$word[$_]", "08-ex6-$_", params => 100e9, stage => $_, dp => 1024]
    for 1 .. 3;
for my $s (1 .. 3) {
    push @runs, [7, "SolFiveG$word[$s]Fit", "08-ex7-$s-fit", params => 13e9,
                 stage => $s, dp => $n13{$s}],
                [7, "SolFiveG$word[$s]Short", "08-ex7-$s-short", params => 13e9,
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
my %macro = %{ read_macros("$sols/08-*.tex") };

sub agrees { return macro_agrees(\%macro, @_) }

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

# --------------------------------------- 5.9 to 5.12: minigpt, measured ----
# The runs of minigpt that the script saved, against the same quantities
# worked out here from the model's shapes: the units, what a ring sends rank
# by rank, the buffers a stage-3 rank allocates. The byte counts must agree
# exactly, since they are counts; then the macros, and the claims of the
# prose. One run of this test's own checks the program on a model whose units
# do not divide evenly among the ranks.
my $minigpt = "$root/build/bin/minigpt";
my @spell = (@word, 'Four');                 # stages, and micro-batches too

# The units of a GPT: embeddings (token and position tables), one block,
# the final norm with the head; and Psi, for L blocks.
sub gpt_units {
    my (%m) = @_;
    my ($L, $C, $T, $V) = @m{qw(layers hidden seq vocab)};
    my %u = (E => $V * $C + $T * $C, U => 12 * $C * $C + 13 * $C,
             H => 2 * $C + $C * $V);
    $u{P} = $L * $u{U} + $u{E} + $u{H};
    $u{L} = $L;
    return \%u;
}

# What rank R of N sends in one ring all-gather (or reduce-scatter) of COUNT
# numbers: every chunk but one, the chunks cut as count * c / N rounds down.
# A rank sends on every chunk but the one it receives last: in the
# all-gather, the chunk of the rank to its right; in the reduce-scatter, its
# own.
sub ring_numbers {
    my ($kind, $count, $N, $R) = @_;
    my $skip = $kind eq 'gather' ? ($R + 1) % $N : $R;
    my $sent = 0;
    for my $c (0 .. $N - 1) {
        next if $c == $skip;
        $sent += int($count * ($c + 1) / $N) - int($count * $c / $N);
    }
    return $sent;
}

# The most any rank sends per step, in bytes, at STAGE with K micro-batches:
# the collectives each stage makes, unit by unit.
sub most_sent {
    my ($u, $stage, $K, $N) = @_;
    my @all = ($u->{E}, ($u->{U}) x $u->{L}, $u->{H});
    my @backward = (($u->{U}) x $u->{L}, $u->{H});        # no embeddings
    my @calls;
    if ($stage == 3) {
        push @calls, map { ([gather => $_], [scatter => $_]) } @all for 1 .. $K;
        push @calls, map { [gather => $_] } @backward for 1 .. $K;
    } else {
        my $reductions = $stage == 2 ? $K : 1;
        push @calls, map { [scatter => $_] } @all for 1 .. $reductions;
        push @calls, map { [gather => $_] } @all;
    }
    my $most = 0;
    for my $R (0 .. $N - 1) {
        my $n = 0;
        $n += ring_numbers($_->[0], $_->[1], $N, $R) for @calls;
        $most = $n if $n > $most;
    }
    return 4 * $most;
}

# The stage-3 buffers: two units and the ring's scratch, 4 B a number.
sub stage3_buffers { my ($U, $N) = @_; return 4 * (2 * $U + int($U / $N) + 1) }

sub saved_json {
    my ($file) = @_;
    my $j = eval { JSON::PP::decode_json(slurp("$sols/$file.json") // '') };
    ok($j, "the script saved $file.json");
    return $j // {};
}

sub state_formula {
    my ($j) = @_;
    return ($j->{weight_bytes_formula} // 0) + ($j->{gradient_bytes_formula} // 0)
         + ($j->{optimizer_bytes_formula} // 0);
}

# A printed power of ten, \ensuremath{10^{-6}}, read as 1 x 10^-6.
for my $name (keys %macro) {
    $macro{$name} =~ s/^\\ensuremath\{10\^\{(-?\d+)\}\}$/\\ensuremath{1\\times10^{$1}}/;
}

# This test's own run: stage 3, two micro-batches, 2 ranks, units of odd
# sizes, so that the ranks send different amounts and the most counts. A run
# that fails is a failed test, not a reason to skip the checks on it.
{
    my @flags = qw(--layers 2 --hidden 33 --heads 3 --seq 16 --vocab 25 --batch 8
                   --micro-batches 2);
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, '--dp', 2, '--zero', 3, @flags,
                                           qw(--steps 1 --eval-every 1000 --quiet --json)));
    is($status, 0, 'minigpt here: mpiexec -n 2 minigpt --zero 3 runs') or diag $err;
    my $j = eval { JSON::PP::decode_json($out) } // {};
    ok(scalar keys %$j, 'minigpt here: it printed its JSON report');
    my $u = gpt_units(layers => 2, hidden => 33, seq => 16, vocab => 25);
    is($j->{params}, $u->{P}, 'minigpt here: Psi from the units');
    ok($u->{U} % 2 && $u->{E} % 2 && $u->{H} % 2, 'minigpt here: every unit is odd');
    is($j->{bytes_sent_per_step}, most_sent($u, 3, 2, 2),
       'minigpt here: stage 3 sends what the ring does, rank by rank');
    is($j->{buffer_bytes_held}, stage3_buffers($u->{U}, 2), 'minigpt here: stage-3 buffers');
}

# 5.9: the default model on 4 ranks at stage 3; the skips; a model of 100
# layers.
my $default = gpt_units(layers => 2, hidden => 64, seq => 64, vocab => 32);
{
    my $j = saved_json('08-ex9');
    my $u = $default;
    my $N = 4;
    is_deeply([@$j{qw(layers hidden seq vocab ranks zero_stage micro_batch batch)}],
              [2, 64, 64, 32, $N, 3, 2, 8], '5.9: the run is the exercise\'s, one micro-batch');
    is($j->{params}, $u->{P}, '5.9: Psi from the units');
    agrees('SolFiveIEmbeddings', $u->{E}, '5.9: embeddings');
    agrees('SolFiveIBlock', $u->{U}, '5.9: a block');
    agrees('SolFiveIHead', $u->{H}, '5.9: the head');
    agrees('SolFiveIParams', $u->{P}, '5.9: Psi');
    agrees('SolFiveIRanks', $N, '5.9: ranks');
    agrees('SolFiveIThreePsi', 3 * $u->{P}, '5.9: 3 Psi');
    agrees('SolFiveIGathered', 3 * $u->{P} - $u->{E}, '5.9: 3 Psi - E');
    ok(!($u->{E} % $N || $u->{U} % $N || $u->{H} % $N),
       '5.9: every unit divides into equal chunks, as the solution says');
    my $sent = most_sent($u, 3, 1, $N);
    is($sent, (3 * $u->{P} - $u->{E}) * 4 * ($N - 1) / $N, '5.9: ring = (3 Psi - E) x 4 B x 3/4');
    is($j->{bytes_sent_per_step}, $sent, '5.9: the run sends exactly that');
    agrees('SolFiveIPredicted', $sent, '5.9: the prediction');
    agrees('SolFiveIMeasured', $sent, '5.9: the measurement');
    close_to($j->{bytes_sent_formula}, 3 * $u->{P} * 4 * ($N - 1) / $N, 1e-12, '5.9: 3 Psi formula');
    agrees('SolFiveIFormula', 3 * $u->{P} * 4 * ($N - 1) / $N, '5.9: the formula');
    agrees('SolFiveIEmbeddingsPercent', 100 * $u->{E} / (3 * $u->{P}), '5.9: the embeddings\' skip');
    agrees('SolFiveIHeadPercent', 100 * $u->{H} / (3 * $u->{P}), '5.9: the head\'s skip');
    agrees('SolFiveIBothPercent', 100 * ($u->{E} + $u->{H}) / (3 * $u->{P}), '5.9: both');
    agrees('SolFiveIHeadSaved', $u->{H} * 4 * ($N - 1) / $N, '5.9: bytes the head\'s skip saves');
    my $big = gpt_units(layers => 100, hidden => 4096, seq => 2048, vocab => 50000);
    agrees('SolFiveIBigEmbeddings', $big->{E} / 1e6, '5.9: 100 layers, embeddings (M)');
    agrees('SolFiveIBigBlock', $big->{U} / 1e6, '5.9: 100 layers, a block (M)');
    agrees('SolFiveIBigHead', $big->{H} / 1e6, '5.9: 100 layers, the head (M)');
    agrees('SolFiveIBigParams', $big->{P} / 1e9, '5.9: 100 layers, Psi (B)');
    agrees('SolFiveIBigHeadShare', 100 * $big->{H} / $big->{P}, '5.9: the head\'s share of Psi');
    ok(abs($big->{H} / $big->{P} - 0.01) < 0.001, '5.9: ... about a hundredth, as the exercise says');
    agrees('SolFiveIBigHeadPercent', 100 * $big->{H} / (3 * $big->{P}), '5.9: 100 layers, head\'s skip');
    agrees('SolFiveIBigBothPercent', 100 * ($big->{E} + $big->{H}) / (3 * $big->{P}),
           '5.9: 100 layers, both skips');
    ok(($big->{E} + $big->{H}) / (3 * $big->{P}) < 0.01, '5.9: ... under one per cent');
}

# 5.10: 2 ranks, a batch of 24, k micro-batches, stages 1 to 3; the k from
# which stage 2 sends twice stage 1's.
{
    my ($u, $N) = ($default, 2);
    my $twice = 1;
    $twice++ while ($twice + 1) * $u->{P} < 2 * 2 * $u->{P};
    agrees('SolFiveJTwice', $twice, '5.10: stage 2 sends twice stage 1 from this k');
    agrees('SolFiveJRanks', $N, '5.10: ranks');
    my %sent;
    for my $run ((map { my $k = $_; map { [$_, $k] } 1 .. 3 } 1, 2, 4), [2, $twice]) {
        my ($s, $k) = @$run;
        my $j = saved_json("08-ex10-$s-$k");
        my $label = "5.10: stage $s, k = $k";
        is_deeply([@$j{qw(zero_stage ranks batch micro_batch params)}],
                  [$s, $N, 24, 12 / $k, $u->{P}], "$label: the run is the exercise's");
        $sent{$s}{$k} = $j->{bytes_sent_per_step} // -1;
        my $want = most_sent($u, $s, $k, $N);
        is($sent{$s}{$k}, $want, "$label: sends what the ring does");
        my $copies = $s == 3 ? 3 * $k : $s == 2 ? $k + 1 : 2;
        my $closed = ($s == 3 ? $k * (3 * $u->{P} - $u->{E}) : $copies * $u->{P}) * 4 * ($N - 1) / $N;
        is($want, $closed, "$label: ... which is the closed form");
        my $name = "SolFiveJ$spell[$s]K$spell[$k]";
        agrees("${name}Sent", $want, "$label: measured");
        agrees("${name}Formula", $copies * $u->{P} * 4 * ($N - 1) / $N, "$label: formula");
        agrees("${name}Copies", $copies, "$label: copies of Psi");
        agrees("SolFiveJThreeK$spell[$k]Predicted", $closed, "$label: predicted") if $s == 3;
    }
    is($sent{1}{$_}, $sent{1}{1}, "5.10: stage 1 sends the same at k = $_") for 2, 4;
    is($sent{2}{1}, $sent{1}{1}, '5.10: stage 2 sends stage 1\'s at k = 1');
    is($sent{2}{$twice}, 2 * $sent{1}{1}, '5.10: ... and twice that at the answer');
    ok($sent{2}{$twice - 1} < 2 * $sent{1}{1}, '5.10: ... but not one micro-batch fewer')
        if exists $sent{2}{$twice - 1};
    agrees('SolFiveJTwiceRatio', 2, '5.10: the ratio at the answer');
    agrees('SolFiveJRatioFormulaOne', 3 * 1 / (1 + 1), '5.10: 3k/(k+1) at k = 1');
    agrees('SolFiveJRatioFormulaFour', 3 * 4 / (4 + 1), '5.10: 3k/(k+1) at k = 4');
    agrees('SolFiveJThreeOverTwoFour', 4 * (3 * $u->{P} - $u->{E}) / (5 * $u->{P}),
           '5.10: stage 3 over stage 2, measured, k = 4');
    ok(4 * (3 * $u->{P} - $u->{E}) / (5 * $u->{P}) < 3 * 4 / 5, '5.10: ... a little under the formula');
}

# 5.11: the stage-3 buffers of 5.9's run; the fewest layers that bring them
# under a tenth of 16 Psi / N, found by trying each depth; the runs at the
# answer for 2 ranks and one layer fewer.
{
    my $j = saved_json('08-ex9');
    my $u = $default;
    my $N = 4;
    ok($u->{U} > $u->{E} && $u->{U} > $u->{H}, '5.11: the largest unit is a block');
    is($j->{largest_unit_params}, $u->{U}, '5.11: the run says so');
    my $buffers = stage3_buffers($u->{U}, $N);
    is($j->{buffer_bytes_held}, $buffers, '5.11: two units and a chunk, to the byte');
    agrees('SolFiveKUnit', $u->{U}, '5.11: U');
    agrees('SolFiveKScratch', int($u->{U} / $N) + 1, '5.11: the scratch');
    agrees('SolFiveKNumbers', $buffers / 4, '5.11: numbers');
    agrees('SolFiveKPredicted', $buffers, '5.11: predicted bytes');
    agrees('SolFiveKHeld', $buffers, '5.11: held bytes');
    is(state_formula($j), 16 * $u->{P} / $N, '5.11: the state is 16 Psi / N');
    agrees('SolFiveKState', 16 * $u->{P} / $N, '5.11: the state');
    agrees('SolFiveKPercent', 100 * $buffers / (16 * $u->{P} / $N), '5.11: buffers as a share');
    ok($buffers > 16 * $u->{P} / $N, '5.11: ... larger than the state, as the solution says');
    my %fewest;
    for my $n (4, 2, 1024) {
        my $L = 1;
        $L++ while stage3_buffers($u->{U}, $n)
                   >= 0.1 * 16 * ($L * $u->{U} + $u->{E} + $u->{H}) / $n;
        $fewest{$n} = $L;
        my $bound = (2.5 * $n * (2 * $u->{U} + int($u->{U} / $n) + 1) - $u->{E} - $u->{H}) / $u->{U};
        is(ceil($bound), $L, "5.11: N = $n, the bound rounds up to the fewest layers");
        ok(abs($bound - (5 * $n + 2.5)) < 1, "5.11: N = $n, the bound is about 5N + 2.5");
        agrees("SolFiveKBound$spell[$n]", $bound, "5.11: N = $n, the bound") if $n <= 4;
    }
    agrees('SolFiveKLayersFour', $fewest{4}, '5.11: fewest layers on 4 ranks');
    agrees('SolFiveKLayersTwo', $fewest{2}, '5.11: fewest layers on 2 ranks');
    agrees('SolFiveKLayersTwoShort', $fewest{2} - 1, '5.11: one fewer');
    agrees('SolFiveKLayersMany', $fewest{1024}, '5.11: fewest layers on 1,024 ranks');
    my %share;
    for my $run (['fit', $fewest{2}], ['short', $fewest{2} - 1]) {
        my ($name, $L) = @$run;
        my $r = saved_json("08-ex11-$name");
        my $v = gpt_units(layers => $L, hidden => 64, seq => 64, vocab => 32);
        is_deeply([@$r{qw(layers ranks zero_stage params largest_unit_params)}],
                  [$L, 2, 3, $v->{P}, $v->{U}], "5.11: the $name run, $L layers");
        is($r->{buffer_bytes_held}, stage3_buffers($v->{U}, 2), "5.11: the $name run's buffers");
        is(state_formula($r), 16 * $v->{P} / 2, "5.11: the $name run's state");
        $share{$name} = 100 * stage3_buffers($v->{U}, 2) / (16 * $v->{P} / 2);
    }
    ok($share{fit} < 10 && $share{short} >= 10, '5.11: under 10 % at the answer, not one layer fewer');
    agrees('SolFiveKFitParams', gpt_units(layers => $fewest{2}, hidden => 64, seq => 64,
                                          vocab => 32)->{P}, '5.11: Psi at the answer');
    agrees('SolFiveKFitHeld', stage3_buffers($u->{U}, 2), '5.11: buffers on 2 ranks');
    agrees('SolFiveKFitPercent', $share{fit}, '5.11: share at the answer');
    agrees('SolFiveKShortPercent', $share{short}, '5.11: share one layer fewer');
}

# 5.12: --verify at stage 3; a forgotten weight decay; a flipped sign.
{
    my $j = saved_json('08-ex12');
    my ($lr, $lambda, $sigma, $eps) = (0.003, 0.1, 0.02, 1e-8);
    is_deeply([@$j{qw(ranks micro_batches result)}], [2, 2, 'OK'], '5.12: the run, and it passes');
    my ($atol, $rtol, $d) = @$j{qw(atol rtol max_dgrad)};
    close_to($atol, 1e-6, 1e-9, '5.12: atol');
    close_to($rtol, 1e-4, 1e-9, '5.12: rtol');
    ok($d > 0 && $d < 1e-5, "5.12: the gradients differ by rounding ($d)");
    like(slurp("$sols/08-ex12.txt") // '', qr/: OK$/m, '5.12: the transcript says OK');
    agrees('SolFiveLAtol', $atol, '5.12: atol');
    agrees('SolFiveLRtol', $rtol, '5.12: rtol');
    agrees('SolFiveLDgrad', $d, '5.12: max |dgrad|');
    agrees('SolFiveLDecay', $lr * $lambda, '5.12: lr x lambda');
    my $threshold = $atol / ($lr * $lambda - $rtol);
    agrees('SolFiveLThreshold', $threshold, '5.12: the weight beyond which the check fails');
    agrees('SolFiveLThresholdSigma', $threshold / $sigma, '5.12: ... in standard deviations');
    ok($threshold < $sigma, '5.12: ... less than one, so most weights fail');
    agrees('SolFiveLSigmaMiss', $lr * $lambda * $sigma, '5.12: the miss at one sigma');
    agrees('SolFiveLSigmaTolerance', $atol + $rtol * $sigma, '5.12: the tolerance at one sigma');
    ok($lr * $lambda * $sigma > $atol + $rtol * $sigma, '5.12: ... which the miss exceeds');
    my $flip = 2 * $lr * ($d / 2) / ($d / 2 + $eps);
    agrees('SolFiveLFlip', $flip, '5.12: the steps of a flipped sign');
    my ($times) = printed_number($macro{SolFiveLFlipTimes});
    close_to($times, $flip / ($atol + $rtol * $sigma), 0.03, '5.12: ... in tolerances (two figures)');
    ok($flip > 100 * ($atol + $rtol * $sigma), '5.12: ... far beyond the tolerance');
}

# ------------------------------------------------------- the solutions ----
my $tex = slurp("$root/solutions/08-sharded-state.tex") // '';
(my $code = $tex) =~ s/(?<!\\)%.*$//mg;
my %used = map { $_ => 1 } $code =~ /\\(SolFive\w+)/g;
ok(scalar keys %used, 'solutions: they use SolFive macros');
is_deeply([grep { !exists $macro{$_} } sort keys %used], [],
          'solutions: every SolFive macro they use is defined');
for my $input ($code =~ /\{(build\/solutions\/[^}]+)\}/g) {
    ok(-s "$root/$input", "solutions: $input exists and is not empty");
}
my @inputs = $code =~ /\\input\{build\/solutions\/(08-[^}]+\.tex)\}/g;
my %input = map { $_ => 1 } @inputs;
for my $file (map { $_->[2] . '.tex' } @runs) {
    ok($input{$file}, "solutions: they input $file");
}
for my $txt (glob "$sols/08-*zero.txt") {
    like(slurp($txt) // '', qr/^(?:ZeRO stage|plain data parallel)/,
         "solutions: $txt starts at the sharded state");
}

# ------------------------------------------------------- the exercise file --
my $statements = slurp("$root/exercises/08-sharded-state.tex") // '';
(my $text = $statements) =~ s/(?<!\\)%.*$//mg;
like($text, qr/\\section\{Exercises\}/, 'exercises: a section');
unlike($text, qr/\\usepackage|enumitem|\[\[/, 'exercises: plain LaTeX, no enumitem');
my $items = eval { scalar(() = exercise_items("$root/exercises/08-sharded-state.tex")) };
ok(defined $items, 'exercises: the enumerates are balanced') or diag($@);
$items //= 0;
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
                 SolFiveGTwoQuotient SolFiveGThreeQuotient
                 SolFiveIPredicted SolFiveIMeasured SolFiveIGathered
                 SolFiveIHeadPercent SolFiveIBothPercent SolFiveIHeadSaved
                 SolFiveIBigHeadPercent SolFiveIBigBothPercent
                 SolFiveJThreeKTwoSent SolFiveJThreeKFourSent SolFiveJTwoKFourSent
                 SolFiveJTwoKThreeSent SolFiveJThreeOverTwoFour
                 SolFiveKPredicted SolFiveKNumbers SolFiveKBoundFour
                 SolFiveKBoundTwo SolFiveKLayersMany SolFiveKFitPercent
                 SolFiveLThreshold SolFiveLFlipTimes)) {
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
solutions_pdf_ok(chapter => 8, solution => 'solutions/08-sharded-state.tex',
                 title => 'Sharded state: ZeRO and FSDP', items => $items);

done_testing();
