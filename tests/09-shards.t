#!/usr/bin/perl
# Chapter 9, "What splitting costs": matmul-bench --shards and fleet tp
# --machine.
#
# Structure, never speed: the shard efficiencies are well-formed (positive,
# the median inside its spread) and exactly 1 at t = 1, where the slice is
# the whole; t slices of the block hold exactly the whole block's FLOPs; the
# scale-down is the smallest power of two that fits and keeps the shape's
# proportions; bad input is one line and status 2 with no output file; fleet
# tp --machine prices the block on the machine file's link; and, after a
# build, the book's macros and the figure's data agree with the run's JSON.
#
# Run after `make`:  prove -v tests/09-shards.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root  = root();
my $bench = "$root/build/bin/matmul-bench";
my $fleet = "$root/build/bin/fleet";
my $tmp   = tempdir(CLEANUP => 1);
for my $bin ($bench, $fleet) {
    ok(-x $bin, "$bin is built") or BAIL_OUT("no $bin: run make first");
}
my @quick = qw(--shards --seconds 0.02 --repeats 3);

# A whole machine file with figures of our choosing.
sub machine_file {
    my ($path, %figure) = @_;
    my %m = (peak_flops_per_core => 2e11, gemm_flops_per_core => 1e9,
             memcpy_bytes_per_second => 1e10, p2p_latency_s => 1e-6,
             p2p_bytes_per_second => 5e9, %figure);
    open(my $fh, '>', $path) or die "$path: $!";
    print $fh "{\n  \"cpu\": \"test\",\n";
    print $fh "  \"$_\": $m{$_},\n" for sort keys %m;
    print $fh "  \"complete\": true\n}\n";
    close $fh;
    return $path;
}
my $machine = machine_file("$tmp/machine.json");

# ------------------------------------------------- the efficiencies --
sub check_efficiencies {
    my ($r, $what) = @_;
    my $top = $r->{max_tp};
    is($r->{efficiency_t1}, 1, "$what: efficiency at t = 1 is exactly 1");
    is($r->{efficiency_t1_low}, 1, "$what: ... in every repeat (lowest)");
    is($r->{efficiency_t1_high}, 1, "$what: ... in every repeat (highest)");
    is($r->{block_flops}, 72 * $r->{positions} * $r->{hidden}**2,
       "$what: the block's FLOPs are 72 N C^2");
    for (my $t = 1; $t <= $top; $t *= 2) {
        my ($e, $lo, $hi) = map { $r->{"efficiency_t$t$_"} } ('', '_low',
                                                              '_high');
        ok(defined $e && $lo > 0 && $lo <= $e && $e <= $hi && $hi < 1e3,
           "$what: t = $t: 0 < lowest <= median <= highest, finite")
          or diag "t = $t: $lo, $e, $hi";
        is($r->{"slice_flops_t$t"} * $t, $r->{block_flops},
           "$what: t = $t: t slices hold exactly the whole block's FLOPs");
        ok($r->{"slice_rate_t$t"} > 0, "$what: t = $t: a positive rate");
    }
    ok(!exists $r->{'efficiency_t' . 2 * $top}, "$what: nothing past --max-tp");
}

my $mini = json_of($bench, @quick);
is($mini->{hidden}, 64, 'default shape: minigpt\'s width');
is($mini->{positions}, 512, 'default shape: 8 x 64 positions');
is($mini->{max_tp}, 4, 'default shape: t up to the 4 heads');
is($mini->{scale}, 1, 'no --scale-to: not scaled');
check_efficiencies($mini, 'minigpt\'s shape');

# ------------------------------------------------------ the scale-down --
# At 1e9 FLOP/s and 1 s the 100B-class block (72 x 16384 x 12288^2 FLOPs)
# needs k^3 >= 178,121: k = 64, hidden 192, 256 positions.
my $big = json_of($bench, @quick, qw(--batch 4 --seq 4096 --hidden 12288
                  --heads 96 --max-tp 8 --scale-to 1 --machine), $machine);
my $k = $big->{scale};
is($k, 64, 'scale: the smallest power of two that fits');
is($big->{hidden} * $k, 12288, 'scale: the width divided by k');
is($big->{positions} * $k, 16384, 'scale: the positions divided by k');
is($big->{real_block_flops}, 72 * 16384 * 12288**2, 'scale: the real block');
ok($big->{block_flops} <= 1e9 * 1, 'scale: the block fits the budget');
ok(72 * ($big->{positions} * 2) * ($big->{hidden} * 2)**2 > 1e9,
   'scale: half the scale would not');
is($big->{hidden} % 96, 0, 'scale: whole heads remain');
check_efficiencies($big, 'the scaled shape');

# ------------------------------------------------------------ refusals --
my @refusals = (
    ['--heads without --shards', qr/--heads goes with --shards/,
     qw(--heads 4)],
    ['--max-tp not a power of two', qr/--max-tp must be a power of two/,
     @quick, qw(--max-tp 3)],
    ['--max-tp past the heads', qr/--max-tp 8 does not divide --heads 4/,
     @quick, qw(--max-tp 8)],
    ['heads that do not divide the width',
     qr/--heads 3 does not divide --hidden 64/, @quick, qw(--heads 3
     --max-tp 1)],
    ['--scale-to without --machine', qr/--scale-to needs --machine/,
     @quick, qw(--scale-to 1)],
    ['--vocab with --shards', qr/--vocab has no use with --shards/,
     @quick, qw(--vocab 32)],
    ['a scale no power of two reaches', qr/--scale-to .*no power of two/,
     @quick, qw(--scale-to 1e-9 --machine), $machine],
    ['--scale-to with a missing machine file', qr/--machine: cannot read/,
     @quick, qw(--scale-to 1 --machine), "$tmp/none.json"],
);
for my $r (@refusals) {
    my ($what, $pattern, @args) = @$r;
    refused_no_output("matmul-bench: $what", $pattern, $bench, @args);
}
{
    my $incomplete = "$tmp/incomplete.json";
    open(my $fh, '>', $incomplete) or die;
    print $fh "{\n  \"gemm_flops_per_core\": 1e9\n}\n";
    close $fh;
    refused_no_output('matmul-bench: an incomplete machine file',
                      qr/not a whole machine file/, $bench, @quick,
                      qw(--scale-to 1 --machine), $incomplete);
}

# ------------------------------------------------- fleet tp --machine --
{
    my $m = machine_file("$tmp/fast.json", p2p_latency_s => 2e-6,
                         p2p_bytes_per_second => 4e9);
    my $r = fleet_json(qw(tp --machine), $m, qw(--hidden 64 --seq 64
                       --micro-batch 8 --layers 2 --bytes-per-element 4
                       --tp 2));
    is($r->{link_bandwidth}, 4e9, 'fleet tp --machine: the file\'s bandwidth');
    is($r->{all_reduce_bytes}, 4 * 512 * 64, 'fleet tp --machine: fp32 buffer');
    is($r->{bytes_per_block}, 4 * 2 * (2 - 1) / 2 * 4 * 512 * 64,
       'fleet tp --machine: 8 b s h (t-1)/t elements, 4 bytes each');
    close_to($r->{all_reduce_seconds}, 2 * 1 * 2e-6 + 4 * 512 * 64 / 4e9,
             1e-12, 'fleet tp --machine: 2(t-1) steps at the file\'s latency '
             . 'and the bytes at its bandwidth');
    close_to($r->{compute_seconds_per_block},
             (72 * 512 * 64**2 + 12 * 512 * 64 * 64) / 2 / (2e11 * 0.4),
             1e-12, 'fleet tp --machine: compute at the file\'s peak');
    my ($s, $out) = run($fleet, qw(tp --machine), $m, qw(--tp 2));
    is($s, 0, 'fleet tp --machine: runs');
    like($out, qr/TP2 on point-to-point/, 'fleet tp --machine: names '
         . 'the link it prices');
    refused_no_output('fleet tp --machine with --gpu',
                      qr/--machine .*without --gpu/, $fleet, qw(tp --machine),
                      $m, qw(--gpu h100));
    refused_no_output('fleet tp --machine with --link',
                      qr/--machine .*--link/, $fleet, qw(tp --machine), $m,
                      qw(--link nic));
    refused_no_output('fleet tp --machine past the cores',
                      qr/--tp 8,192 is more ranks than this machine/, $fleet,
                      qw(tp --machine), $m, qw(--tp 8192 --link-efficiency 1));
    refused_no_output('fleet tp --machine with a missing file',
                      qr/^fleet tp: --machine: cannot read/, $fleet,
                      qw(tp --machine), "$tmp/none.json");
    my $no_latency = "$tmp/no-latency.json";
    (my $text = slurp($m)) =~ s/\s*"p2p_latency_s": [^,]*,//;
    open(my $fh, '>', $no_latency) or die;
    print $fh $text;
    close $fh;
    refused_no_output('fleet tp --machine with no latency in the file',
                      qr/has no p2p_latency_s/, $fleet, qw(tp --machine),
                      $no_latency, qw(--tp 2));
}

# ------------------------------------------- the book's run, if built --
SKIP: {
    my %data = map { $_ => "$root/build/data/09-shards-$_.json" }
                   qw(minigpt scaled plan);
    skip 'the chapter\'s run has not been made', 1
        unless -s $data{minigpt} && -s $data{scaled}
            && -s "$root/build/numbers/09-shards-verdict.tex";
    for my $name (qw(minigpt scaled)) {
        my $prefix = $name eq 'minigpt' ? 'ShardMini' : 'ShardBig';
        my $r = JSON::PP::decode_json(slurp($data{$name}));
        my $macros = read_macros("$root/build/numbers/09-shards-$name.tex");
        check_efficiencies($r, "the book's $name run");
        my @digit = qw(Zero One Two Three Four Five Six Seven Eight Nine);
        for (my $t = 1; $t <= $r->{max_tp}; $t *= 2) {
            (my $spelled = $t) =~ s/(\d)/$digit[$1]/g;
            for my $end ('', '_low', '_high') {
                my $name_ = "${prefix}EfficiencyT$spelled" . camel($end);
                is($macros->{$name_},
                   sprintf('%.2f', $r->{"efficiency_t$t$end"}),
                   "$name: \\$name_ is the run's");
            }
        }
        for my $key (qw(hidden positions heads scale max_tp repeats)) {
            is($macros->{$prefix . camel($key)}, grouped($r->{$key}),
               "$name: \\$prefix" . camel($key) . ' is the run\'s');
        }
        my @rows = grep { /^\d/ } split /\n/,
                   slurp("$root/build/data/09-shards-$name.csv") // '';
        is(scalar @rows, 1 + log($r->{max_tp}) / log(2),
           "$name: the figure has a point for every t");
        for my $row (@rows) {
            my ($t, $e) = split /,/, $row;
            close_to($e, $r->{"efficiency_t$t"}, 1e-12,
                     "$name: the figure's point at t = $t is the run's");
        }
    }
    my $plan = JSON::PP::decode_json(slurp($data{plan}));
    my $macros = read_macros("$root/build/numbers/09-shards-plan.tex");
    is($macros->{ShardPlanTp}, $plan->{tp}, 'the planner\'s t is the run\'s');
    my $v = read_macros("$root/build/numbers/09-shards-verdict.tex");
    for my $m (qw(ShardVerdictMini ShardVerdictBig ShardVerdictCompare
                  ShardVerdictMeans ShardPlanCorrection)) {
        like($v->{$m} // '', qr/\S/, "the verdict \\$m was written");
    }
}

# The planner's bytes at minigpt's shape are the bytes minigpt counts at its
# sends: the chapter says so beside both numbers.
{
    my ($plan, $run) = map { -s $_ ? JSON::PP::decode_json(slurp($_)) : undef }
        "$root/build/data/09-shards-plan.json", "$root/build/data/09-tp-2.json";
    SKIP: {
        skip 'the chapter runs have not written their data', 2
            unless $plan && $run;
        is($plan->{tp}, $run->{tp}, 'planner and trainer split the same ways');
        is($plan->{bytes_per_block}, $run->{tp_bytes_per_block},
           'the planner predicts the bytes minigpt --tp counts per block');
    }
}
done_testing();
