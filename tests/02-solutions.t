#!/usr/bin/perl
# tests/02-solutions.t: the worked solutions of chapter 2 (compute and
# the fleet) against first principles.
#
# For every exercise, fleet compute (or fleet memory) is run with --json on the
# exercise's inputs, and each field is compared with a value this file derives
# on its own: 6 N D FLOPs, 12 L s h D for attention, dense peaks of 989e12
# FLOP/s (H100, H200) and 312e12 FLOP/s (A100), 86,400 s a day, 16 bytes of
# state per parameter, eight GPUs a node. Real-valued fields must agree to a
# relative 1e-9 (both sides do the same few double operations in possibly
# different orders); counts must agree exactly. The macros that the solutions
# script wrote are checked against the same values at the precision they
# print, and the solutions volume must carry every exercise's heading.
#
# Run after make, from anywhere: prove -v tests/02-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(floor);
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
my $sol = "$root/build/solutions";

ok(-x $fleet, "build/bin/fleet exists (run make first)")
    or BAIL_OUT("no $fleet: run make in $root first");

# ------------------------------------------------------- first principles --
my %part = (
    a100 => { peak => 312e12, memory => 80e9 },
    h100 => { peak => 989e12, memory => 80e9 },
    h200 => { peak => 989e12, memory => 141e9 },
);
my $PER_NODE = 8;
my $DAY = 86_400;
my $BYTES_PER_PARAM = 16;

# Counts that should be whole are rounded up by round_up, which forgives the
# last bits of floating-point noise (a quotient like 24.999999999999996 is 25).
sub whole_nodes { my ($gpus) = @_; return round_up($gpus / $PER_NODE) * $PER_NODE; }

# The inputs of a run, with the book's defaults, and every field that follows.
sub expected_compute {
    my %in = (params => 100e9, tokens => 2e12, gpu => 'h100', gpus => 1024,
              mfu => 0.4, usable => 0.8, layers => 0, hidden => 0, seq => 0,
              @_);
    $in{active} //= $in{params};
    my $p = $part{ $in{gpu} };
    my %e;
    $e{dense_flops} = 6 * $in{active} * $in{tokens};
    $e{attention_flops} = 12 * $in{layers} * $in{seq} * $in{hidden} * $in{tokens};
    $e{flops} = $e{dense_flops} + $e{attention_flops};
    $e{attention_over_dense} = $e{attention_flops} / $e{dense_flops};
    $e{peak_flops} = $p->{peak};
    $e{flops_per_second} = $in{gpus} * $p->{peak} * $in{mfu};
    $e{seconds} = $e{flops} / $e{flops_per_second};
    $e{days} = $e{seconds} / $DAY;
    my $floor_min = round_up($BYTES_PER_PARAM * $in{params} / ($p->{memory} * $in{usable}));
    $e{floor_gpus} = whole_nodes($floor_min);
    $e{floor_flops_per_second} = $e{floor_gpus} * $p->{peak} * $in{mfu};
    $e{floor_days} = $e{flops} / $e{floor_flops_per_second} / $DAY;
    $e{fleet_over_floor} = $in{gpus} / $e{floor_gpus};
    $e{gpus} = $in{gpus};
    if ($in{days}) {
        $e{deadline_days} = $in{days};
        $e{gpus_needed} = round_up($e{flops} / ($p->{peak} * $in{mfu} * $in{days} * $DAY));
        $e{gpus_needed_whole_nodes} = whole_nodes($e{gpus_needed});
    }
    return \%e;
}

sub expected_memory {
    my %in = (params => 100e9, gpu => 'h100', usable => 0.8, @_);
    my $p = $part{ $in{gpu} };
    my %e;
    $e{static_bytes} = $BYTES_PER_PARAM * $in{params};
    $e{usable_bytes_per_gpu} = $p->{memory} * $in{usable};
    $e{gpus_min} = round_up($e{static_bytes} / $e{usable_bytes_per_gpu});
    $e{gpus_whole_nodes} = whole_nodes($e{gpus_min});
    $e{nodes} = $e{gpus_whole_nodes} / $PER_NODE;
    return \%e;
}

# Flags for fleet from the same inputs, so that the two sides cannot drift.
sub flags {
    my %in = @_;
    my %name = (params => '--params', active => '--active-params',
                tokens => '--tokens', gpu => '--gpu', gpus => '--gpus',
                mfu => '--mfu', days => '--days', layers => '--layers',
                hidden => '--hidden', seq => '--seq', usable => '--usable');
    return map { ($name{$_} // die("no flag for $_"), $in{$_}) } sort keys %in;
}

sub run_json {
    my ($sub, @flags) = @_;
    my $json = eval { fleet_json($sub, @flags) };
    ok($json, "$sub @flags runs and prints JSON") or diag($@);
    return $json // {};
}

my %COUNT = map { $_ => 1 } qw(gpus floor_gpus gpus_needed
    gpus_needed_whole_nodes gpus_min gpus_whole_nodes nodes);
my $RTOL = 1e-9;

sub compare {
    my ($label, $got, $want) = @_;
    for my $key (sort keys %$want) {
        my ($g, $w) = ($got->{$key}, $want->{$key});
        if (!defined $g) {
            fail("$label: field $key is missing");
        } elsif ($COUNT{$key}) {
            is($g, $w, "$label: $key = $w");
        } else {
            my $err = abs($g - $w);
            ok($err <= $RTOL * abs($w) + 1e-300,
               "$label: $key = $w within rel $RTOL")
                or diag("got $g, want $w");
        }
    }
}

# ------------------------------------------------------------- the runs ----
# Each run: exercise, the macro prefix the solutions script uses for it, the
# subcommand, and its inputs. Inputs that are another run's answer are taken
# from this file's own derivation, never from fleet's output.
my %ex6 = (tokens => 10e12, days => 35);
my $ex6_fleet = expected_compute(%ex6)->{gpus_needed_whole_nodes};
my $llama = { params => 405e9, tokens => 15.6e12, gpus => 16384, mfu => 0.41 };
my $seventy = { params => 70e9, layers => 80, hidden => 8192 };
my @runs = (
    [1, 'SolTwoA',          compute => {%$llama}],
    [1, 'SolTwoAAttn',      compute => {%$llama, layers => 126,
                                        hidden => 16384, seq => 8192}],
    [2, 'SolTwoBForty',     compute => {days => 30, mfu => 0.4}],
    [2, 'SolTwoBThirty',    compute => {days => 30, mfu => 0.3}],
    [3, 'SolTwoC',          compute => {gpu => 'a100', days => 30}],
    [3, 'SolTwoCHopper',    compute => {gpu => 'h100', days => 30}],
    [3, 'SolTwoCMemory',    memory  => {gpu => 'a100'}],
    [4, 'SolTwoDThirty',    compute => {mfu => 0.3,  days => 30}],
    [4, 'SolTwoDForty',     compute => {mfu => 0.4,  days => 30}],
    [4, 'SolTwoDFortyFive', compute => {mfu => 0.45, days => 30}],
    [5, 'SolTwoEMemory',    memory  => {params => 100e9}],
    [5, 'SolTwoE',          compute => {active => 20e9, days => 30}],
    [5, 'SolTwoEBaseline',  compute => {days => 30}],
    [6, 'SolTwoF',          compute => {%ex6}],
    [6, 'SolTwoFLow',       compute => {%ex6, gpus => $ex6_fleet, mfu => 0.35}],
    [7, 'SolTwoGHtwo',      compute => {gpu => 'h200', days => 30}],
    [7, 'SolTwoGHone',      compute => {gpu => 'h100', days => 30}],
    [7, 'SolTwoGMemory',    memory  => {gpu => 'h200'}],
    [8, 'SolTwoHShort',     compute => {%$seventy, seq => 2048}],
    [8, 'SolTwoHLong',      compute => {%$seventy, seq => 32768}],
    [8, 'SolTwoHCausal',    compute => {%$seventy, seq => 16384}],
);

my (%got, %want);
for my $run (@runs) {
    my ($n, $prefix, $sub, $in) = @$run;
    my $want = $sub eq 'compute' ? expected_compute(%$in) : expected_memory(%$in);
    my $got = run_json($sub, flags(%$in));
    compare("exercise 2.$n $prefix", $got, $want);
    ($got{$prefix}, $want{$prefix}) = ($got, $want);
}

# -------------------------------------- what the solutions' prose claims ----
# Relations the prose states in words, checked on the independent values.
my $W = \%want;
ok(abs($W->{SolTwoA}{flops} - 3.8e25) <= 0.05e25,
   '2.1: 6ND for Llama 3 405B rounds to the published 3.8e25');
ok(abs($W->{SolTwoAAttn}{flops} - 3.8e25) > 0.05e25,
   '2.1: with attention it no longer rounds to 3.8e25');
ok($W->{SolTwoBThirty}{gpus_needed} > $W->{SolTwoBForty}{gpus_needed} * 1.3,
   '2.2: 30 % MFU needs about a third more GPUs than 40 %');
ok($W->{SolTwoDFortyFive}{days} > 30,
   '2.4: at 45 % MFU, 1,024 GPUs still miss 30 days');
is($W->{SolTwoCMemory}{gpus_whole_nodes}, $W->{SolTwoCHopper}{floor_gpus},
   '2.3: the A100 floor equals the H100 floor');
ok(abs($W->{SolTwoEBaseline}{flops} / $W->{SolTwoE}{flops} - 5) < 1e-12,
   '2.5: the MoE does five times less compute');
is($W->{SolTwoEMemory}{gpus_whole_nodes}, $W->{SolTwoEBaseline}{floor_gpus},
   '2.5: the MoE floor equals the dense floor');
is($W->{SolTwoF}{gpus_needed}, $W->{SolTwoF}{gpus_needed_whole_nodes},
   '2.6: the 35-day fleet is already whole nodes');
ok($W->{SolTwoFLow}{days} > 35, '2.6: at 35 % MFU that fleet misses 35 days');
ok(abs($W->{SolTwoGHtwo}{days} - $W->{SolTwoGHone}{days}) < 1e-12,
   '2.7: H200 and H100 take the same days');
ok($W->{SolTwoGMemory}{gpus_whole_nodes} < $W->{SolTwoGHone}{floor_gpus},
   '2.7: the H200 floor is smaller');
ok(abs($W->{SolTwoHLong}{attention_over_dense} / $W->{SolTwoHShort}{attention_over_dense}
       - 16) < 1e-9, '2.8: the attention share is linear in the sequence');
ok(abs($W->{SolTwoHLong}{attention_over_dense} / $W->{SolTwoHCausal}{attention_over_dense}
       - 2) < 1e-9, '2.8: the causal count is half the full one');

# ----------------------------------- the macros the solutions script wrote --
# Each prefix's file must exist, and its counts and days must be the values
# above at the precision fleet prints (counts exact, days to 3 significant
# figures).
my $m = read_macros("$sol/02-ex*.tex");
ok(scalar keys %$m, 'the solutions script wrote macros into build/solutions');

sub plain { my $v = $_[0]; $v =~ s/,//g; return $v }

for my $run (@runs) {
    my ($n, $prefix) = @$run;
    my $want = $want{$prefix};
    for my $key (sort keys %$want) {
        my $name = $prefix . camel($key);
        if ($COUNT{$key}) {
            is(plain($m->{$name} // 'missing'), $want->{$key},
               "2.$n: \\$name is $want->{$key}");
        } elsif ($key =~ /days$/) {
            my $got = plain($m->{$name} // 'nan');
            my $w = $want->{$key};
            my $tol = 0.51 * 10 ** (floor(log($w) / log(10)) - 2);
            ok($got =~ /^[0-9.]+$/ && abs($got - $w) <= $tol,
               "2.$n: \\$name is $w to 3 figures") or diag("got $got");
        }
    }
}

# Every macro the solutions use is defined, and every file they input exists.
my $tex_file = "$root/solutions/02-compute-and-fleet.tex";
my $tex = slurp($tex_file) // die "$tex_file: $!";
my %used = map { $_ => 1 } $tex =~ /\\(SolTwo\w+)/g;
ok(scalar keys %used, 'the solutions use SolTwo macros');
is_deeply([grep { !exists $m->{$_} } sort keys %used], [],
          'every SolTwo macro in the solutions is defined');
for my $input ($tex =~ /\{(build\/solutions\/[^}]+)\}/g) {
    ok(-s "$root/$input", "$input exists and is not empty");
}

# ------------------------------------------------------ the two volumes ----
# One solution per exercise, and each heading in the built PDF.
my $exercises = slurp("$root/exercises/02-compute-and-fleet.tex") // die $!;
my $count = () = exercise_items("$root/exercises/02-compute-and-fleet.tex");
cmp_ok($count, '>=', 7, "chapter 2 has at least 7 exercises ($count)");
my @headings = $tex =~ /\\soltwoexercise\{(\d+)\}/g;
is_deeply(\@headings, [1 .. $count], 'one solution per exercise, in order');

# The statements give inputs only: no count of GPUs that a run derives, and no
# derived FLOP total, appears in them (the fleets given as inputs are skipped).
(my $statements = $exercises) =~ s/^%.*$//mg;
my %derived;
for my $prefix (keys %want) {
    for my $key (grep { $COUNT{$_} && $_ ne 'gpus' } keys %{ $want{$prefix} }) {
        $derived{ grouped($want{$prefix}{$key}) } = "$prefix $key";
    }
    $derived{ sprintf('%.2e', $want{$prefix}{flops}) =~ s/e\+?0*(\d+)$/\\times10^{$1}/r }
        = "$prefix flops" if exists $want{$prefix}{flops};
}
my @given = grep { my $v = $_; $statements =~ /(?<![\w,.{^])\Q$v\E(?![\w,.}])/ }
            sort keys %derived;
is_deeply(\@given, [], 'the exercise statements give no derived answer')
    or diag(join ', ', map { "$_ ($derived{$_})" } @given);

my $pdf = "$root/build/solutions.pdf";
ok(-s $pdf, 'build/solutions.pdf exists');
my $text = eval { pdf_text($pdf) };
ok(defined $text, 'pdftotext reads build/solutions.pdf') or diag($@);
$text //= '';
my ($chapter) = $text =~ /(Compute sets the fleet.*)\z/s;
$chapter //= '';
for my $n (1 .. $count) {
    like($chapter, qr/^Exercise 2\.$n$/m, "solutions.pdf has the heading Exercise 2.$n");
}
unlike($chapter, qr/\?\?/, 'no unresolved reference (??) in chapter 2');

done_testing();
