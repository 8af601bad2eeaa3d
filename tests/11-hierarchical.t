#!/usr/bin/perl
# Chapter 11, "The hierarchical all-reduce": allreduce --op hierarchical
# against the exact sum for several sizes and groupings, with and without
# the slow link; the refusals of both tools; fleet allreduce's arithmetic
# against cases worked by hand; and, after `make`, the run's macros.
#
# The only times asserted are lower bounds that the slow link itself
# imposes (a send across sleeps at least its delay), never a speed.
#
# Run after `make`:  prove -v tests/11-hierarchical.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $bin = "$root/build/bin/allreduce";
my $fleet = "$root/build/bin/fleet";
ok(-x $bin && -x $fleet, 'allreduce and fleet are built')
    or BAIL_OUT('run make');
# The copy and first-touch rates from the machine file make measured once,
# so that no launch spends seconds measuring them while its ranks poll.
my @quick = ('--seconds', '0.001', '--warmup', '1', '--repeats', '1',
             '--memcpy', '1', '--machine', "$root/build/machine.json");

# ------------------------------------------------------------ the sum --
# Sizes from one float (fewer elements than ranks: empty chunks) to 64
# bytes, the groups of one and of every rank included.
for my $case ([4, 2, '--delay-us', 100, '--throttle-gbs', 5], [4, 1],
              [4, 4], [6, 3]) {
    my ($n, $g, @slow) = @$case;
    my $name = "$n ranks, --group $g" . (@slow ? " @slow" : '');
    my $rows = eval { json_of(mpiexec($n, $bin, '--op', 'hierarchical',
                                      '--group', $g, @slow, @quick,
                                      '--min-bytes', 4, '--max-bytes', 64)) };
    ok($rows, "$name: runs") or do { diag $@; next };
    my @sums = grep { $_->{op} eq 'allreduce' } @$rows;
    my %impls = map { $_->{impl} => 1 } @sums;
    is(join(',', sort keys %impls), 'hierarchical,ring',
       "$name: the flat ring beside the hierarchy, nothing else");
    is(scalar @sums, 2 * 5, "$name: 5 sizes of each");
    my @wrong = grep { $_->{wrong} != 0 } @sums;
    is(scalar @wrong, 0, "$name: every element equals the exact sum")
        or diag join ' ', map { "$_->{impl} $_->{size}: $_->{wrong}" } @wrong;
    my @busbw = grep { abs($_->{busbw} - $_->{algbw} * 2 * ($n - 1) / $n)
                       > 1e-3 * $_->{busbw} + 1e-9 } @sums;
    is(scalar @busbw, 0, "$name: busbw = algbw x 2(n-1)/n, both ways");
}

# A hierarchy that does not add is caught: the cross-group all-reduce
# skipped (--throttle-gbs cannot do that), so test the check itself with a
# broken copy of the ring's all-reduce across.
{
    my $dir = tempdir(CLEANUP => 1);
    my $source = slurp("$root/code/comm/allreduce.c");
    my $changed = $source =~ s/status = ring_allreduce\(mine,/status = ring_reduce_scatter(mine,/;
    is($changed, 1, 'broken hierarchy: the all-reduce across found once');
    open my $f, '>', "$dir/allreduce.c" or die;
    print $f $source;
    close $f;
    my (undef, @cflags) = split ' ', slurp("$root/build/obj/cflags") // die;
    my ($s1, undef, $e1) = run('mpicc', @cflags, "-I$root/code/comm",
                               '-c', "$dir/allreduce.c", '-o',
                               "$dir/allreduce.o");
    is($s1, 0, 'broken hierarchy: compiles') or diag $e1;
    my ($s2, undef, $e2) = run('mpicc', @cflags, "$dir/allreduce.o",
                               "$root/build/obj/comm/ring.o",
                               "$root/build/obj/comm/mesh.o",
                               glob("$root/build/obj/common/*.o"), '-lm',
                               '-o', "$dir/allreduce");
    is($s2, 0, 'broken hierarchy: links') or diag $e2;
    my ($status, undef, $err) = run(mpiexec(4, "$dir/allreduce", '--op',
                                    'hierarchical', '--group', 2, @quick,
                                    '--max-bytes', 64));
    is($status, 1, 'broken hierarchy: exit status 1');
    like($err, qr/^allreduce: \d+ wrong elements/m,
         'broken hierarchy: the wrong elements are counted');
}

# The slow link is there: six steps of the flat ring and two of the
# hierarchy's all-reduce across each send over a group boundary, each
# sleeping at least the delay first. Lower bounds only.
{
    my $delay = 0.05;
    my $dir = tempdir(CLEANUP => 1);
    my $rows = json_of(mpiexec(4, $bin, '--op', 'hierarchical', '--group', 2,
                               '--delay-us', 1e6 * $delay,
                               '--throttle-gbs', 50, @quick,
                               '--min-bytes', 64, '--max-bytes', 64,
                               '--transcript', "$dir/table.txt"));
    my %t = map { $_->{impl} => $_->{time_s} }
            grep { $_->{op} eq 'allreduce' } @$rows;
    cmp_ok($t{ring}, '>=', 6 * $delay, 'slow link: the flat ring sleeps '
           . 'six delays (every step crosses between groups)');
    cmp_ok($t{hierarchical}, '>=', 2 * $delay, 'slow link: the hierarchy '
           . 'sleeps at least the two delays of its all-reduce across');
    my $table = slurp("$dir/table.txt") // '';
    like($table, qr/^# 2 groups of 2 ranks, consecutive; each send between groups waits 50,000 us, then its bytes at 50 GB\/s$/m,
         'the table says how the ranks were grouped and slowed')
        or diag $table;
    like($table, qr/^# allreduce\s+ring\s+hierarchical$/m,
         'the table: the flat ring beside the hierarchy');
}

# ------------------------------------------------------------ refusals --
for my $case (
    [3, '--group', ['--op', 'hierarchical', '--group', 2]],
    [2, '--group', ['--op', 'hierarchical', '--group', 0]],
    [2, '--group', ['--op', 'hierarchical', '--group', 4]],
    [2, '--throttle-gbs', ['--op', 'hierarchical', '--group', 1,
                           '--throttle-gbs', -1]],
    [1, '--throttle-gbs', ['--op', 'hierarchical', '--group', 1,
                           '--throttle-gbs', 0]],
    [2, '--delay-us', ['--op', 'hierarchical', '--group', 1,
                       '--delay-us', -5]],
    [2, '--group', ['--op', 'hierarchical']],
    [2, '--op hierarchical', ['--op', 'allreduce', '--group', 2]],
    [1, '--op hierarchical', ['--delay-us', 10]],
) {
    my ($n, $flag, $args) = @$case;
    refused_no_output("$n rank(s): allreduce @$args", $flag,
                      mpiexec($n, $bin, @quick, '--max-bytes', 64, @$args));
}

# ------------------------------------------------------------ the planner --
# 16 H100s in two nodes of eight, 8 GB: NVLink 450 GB/s and 3.4 us a step,
# the NIC 50 GB/s and 14 us a step.
{
    my $p = fleet_json('allreduce', '--gpu', 'h100', '--gpus', 16,
                       '--group', 8, '--bytes', 8e9);
    my $flat = 2 * 15 * 14e-6 + 2 * 15 / 16 * 8e9 / 50e9;
    my $inside = 2 * (7 * 3.4e-6 + 7 / 8 * 8e9 / 450e9);
    my $across = 2 * 1 * 14e-6 + 2 * 1 / 2 * 1e9 / 50e9;
    close_to($p->{flat_seconds}, $flat, 1e-9, 'h100: the flat ring');
    close_to($p->{hierarchical_inside_seconds}, $inside, 1e-9,
             'h100: the two phases inside');
    close_to($p->{hierarchical_across_seconds}, $across, 1e-9,
             'h100: the all-reduce across');
    close_to($p->{hierarchical_seconds}, $inside + $across, 1e-9,
             'h100: the hierarchy, three phases in a row');
    close_to($p->{rails_seconds}, 2 * 15 * 14e-6 + 2 * 15 / 16 * 1e9 / 50e9,
             1e-9, 'h100: the flat ring split over eight NICs');
    close_to($p->{flat_bytes_across}, 15e9, 1e-12,
             'h100: the flat ring sends 2(n-1)/n S across');
    close_to($p->{hierarchical_bytes_across}, 1e9, 1e-12,
             'h100: the hierarchy sends 2(g-1)/g S/G across');
    is(fleet_json('allreduce', '--gpus', 16, '--bytes', 8e9)->{group}, 8,
       'h100: a group is a node by default');
    my $one = fleet_json('allreduce', '--gpus', 8, '--bytes', 8e9);
    close_to($one->{flat_seconds}, 14 * 3.4e-6 + 14 / 8 * 8e9 / 450e9, 1e-9,
             'h100: one node\'s flat ring stays on NVLink');
    close_to($one->{hierarchical_seconds}, $one->{flat_seconds}, 1e-9,
             'h100: in one node the hierarchy is the flat ring');
}
# This machine, made up: 1 GB/s and 1 us point to point, the link across
# slowed by 1 ms and 1 GB/s, in series: 0.5 GB/s and 1.001 ms.
{
    my $dir = tempdir(CLEANUP => 1);
    open my $f, '>', "$dir/machine.json" or die;
    print $f <<'JSON';
{
  "peak_flops_per_core": 1e11,
  "memcpy_bytes_per_second": 1e10,
  "p2p_bytes_per_second": 1e9,
  "p2p_latency_s": 1e-6,
  "complete": true
}
JSON
    close $f;
    my $p = fleet_json('allreduce', '--machine', "$dir/machine.json",
                       '--gpus', 4, '--group', 2, '--bytes', 4e6,
                       '--delay-us', 1000, '--throttle-gbs', 1);
    close_to($p->{across_bandwidth}, 0.5e9, 1e-12, 'machine: in series');
    close_to($p->{flat_seconds}, 6 * 1.001e-3 + 1.5 * 4e6 / 0.5e9, 1e-9,
             'machine: the flat ring');
    close_to($p->{hierarchical_seconds},
             2 * (1e-6 + 0.5 * 4e6 / 1e9) + 2 * 1.001e-3 + 2e6 / 0.5e9,
             1e-9, 'machine: the hierarchy');
}
for my $case (
    ['--group', ['--group', 16]],
    ['--group', ['--gpus', 1024, '--group', 3]],
    ['--machine', ['--delay-us', 10]],
    ['--machine', ['--machine', "$root/build/machine.json", '--gpu', 'h100']],
    ['--throttle-gbs', ['--throttle-gbs', -1]],
) {
    my ($flag, $args) = @$case;
    refused_no_output("fleet allreduce @$args", $flag,
                      $fleet, 'allreduce', @$args);
}

# ------------------------------------------------------- the run's text --
my $numbers = "$root/build/numbers/11-hierarchical.tex";
SKIP: {
    skip 'the chapter\'s runs have not been made (run make)', 1
        unless -s $numbers;
    my %defined;
    for my $file (glob "$root/build/numbers/11-hierarchical*.tex") {
        %defined = (%defined, %{ read_macros($file) });
    }
    my %used;
    for my $chapter ("$root/chapters/11d-hierarchical.nw",
                     "$root/chapters/99d-hierarchical.nw") {
        my $text = slurp($chapter);
        $used{$1} = 1 while $text =~ /\\(Hier[A-Za-z]+)/g;
    }
    ok(scalar keys %used > 10, 'the section uses the run\'s macros');
    ok(exists $defined{$_}, "\\$_ is defined by the run") for sort keys %used;
    like($defined{$_}, qr/\S/, "the sentence \\$_ was written")
        for grep { /Verdict/ } sort keys %defined;
    my @rows = grep { /^allreduce,/ }
               split /\n/, slurp("$root/build/data/11-hierarchical-measured.csv");
    ok(@rows > 2, 'the run measured the all-reduce');
    is(scalar(grep { (split /,/)[7] != 0 } @rows), 0,
       'the run: no wrong element');
    ok(-s "$root/build/figures/11-hierarchical.tex", 'the figure was drawn');
}

done_testing();
