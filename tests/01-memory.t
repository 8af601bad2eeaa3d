#!/usr/bin/perl
# Chapter 1's numbers, asserted against `fleet memory` and against arithmetic
# done here from first principles. Tolerances are those the book's rounding
# allows; exact results are compared exactly.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(ceil);
use File::Temp qw(tempdir);
use Test::More;

my $fleet = root() . '/build/bin/fleet';
ok(-x $fleet, 'build/bin/fleet is built') or BAIL_OUT('no fleet');

# The running example: 100e9 parameters, mixed-precision Adam, H100.
my $m = fleet_json(qw(memory --params 100e9 --gpu h100));
is($m->{bytes_per_param}, 16, 'mixed-precision Adam keeps 16 B/param');
is($m->{static_bytes}, 100e9 * 16, 'static state is 1.6e12 B');
close_to($m->{static_bytes} / 1e9, 1600, 0, 'which is 1,600 GB');
is($m->{node_bytes}, 8 * 80e9, 'one node holds 640 GB');
close_to($m->{nodes_of_state}, 2.5, 1e-12, 'the state is 2.5 nodes');
close_to($m->{usable_bytes_per_gpu}, 64e9, 1e-12, '80 % of 80 GB is 64 GB');
is($m->{gpus_min}, 25, '25 GPUs hold the state at 80 % usable');
is($m->{gpus_whole_nodes}, 32, '32 GPUs in whole nodes');
is($m->{nodes}, 4, 'which is 4 nodes');
is($m->{gpus}, 1024, 'the fleet defaults to 1,024 GPUs');
close_to($m->{bytes_per_gpu_sharded}, 1.6e9, 0.03,
         'fully sharded over 1,024 GPUs: 1.6 GB per GPU (1.5625, rounded)');
is($m->{bytes_per_gpu_sharded}, 1.6e12 / 1024, 'exactly 1.6e12 / 1,024');
is($m->{checkpoint_bytes}, 1.6e12, 'a full checkpoint is 1.6 TB');
cmp_ok($m->{checkpoint_seconds}, '<', 1, 'written at 2 TB/s in under a second');
close_to($m->{checkpoint_seconds}, 1.6e12 / 2e12, 1e-12, 'exactly 0.8 s');

# The conventions, each from its terms.
my %expect = (mixed => 16, fp32 => 16, lean => 10, 'fp32-grads' => 18,
              'mt-nlg' => 20);
for my $p (sort keys %expect) {
    my $c = fleet_json('memory', '--precision', $p);
    is($c->{bytes_per_param}, $expect{$p}, "--precision $p is $expect{$p} B/param");
    is($c->{gpus_min}, ceil(100e9 * $expect{$p} / 64e9 - 1e-9),
       "--precision $p: GPUs to hold 100e9 parameters");
}
my $custom = fleet_json(qw(memory --bytes-per-param 18));
is($custom->{static_bytes}, 1.8e12, '--bytes-per-param 18 gives 1.8 TB');

# Numbers as people write them.
for my $spelling (qw(100e9 100B 0.1T 100000M 1e11)) {
    is(fleet_json('memory', '--params', $spelling)->{static_bytes}, 1.6e12,
       "--params $spelling is 100e9");
}
is(fleet_json(qw(memory --gpus 16k))->{gpus}, 16000, '--gpus 16k is 16,000');
is(fleet_json(qw(memory --usable 80%))->{gpus_min}, 25, '--usable 80% is 0.8');
is(fleet_json(qw(memory --usable=0.9))->{gpus_min}, ceil(1600 / 72),
   '--usable=0.9 (flag=value form)');

# Another part: 70e9 on H200 (141 GB).
my $h = fleet_json(qw(memory --params 70e9 --gpu h200));
is($h->{gpus_min}, ceil(70e9 * 16 / (141e9 * 0.8)), '70e9 on H200: GPUs');
is($h->{gpus_whole_nodes}, 8 * ceil(ceil(70e9 * 16 / (141e9 * 0.8)) / 8),
   '70e9 on H200: whole nodes');
my $a = fleet_json(qw(memory --gpu a100));
is($a->{gpus_whole_nodes}, 32, 'A100 80 GB has the H100 floor');

# The transcript shows the derivation a reader checks by hand.
my ($status, $text) = run($fleet, qw(memory --params 100e9 --gpu h100));
is($status, 0, 'the transcript prints');
like($text, qr/100e9 × 16 B = 1\.6e12 B = 1,600 GB/, 'static state line');
like($text, qr/8 × 80 GB = 640 GB/, 'one node line');
like($text, qr/= 2\.5 nodes/, 'state in nodes');
like($text, qr/= 25 → 25 GPUs/, 'GPUs to hold it');
like($text, qr/→ 4 nodes = 32 GPUs/, 'whole nodes');
like($text, qr/1\.56 GB per GPU/, 'sharded state per GPU');
like($text, qr/1\.6 TB; at 2 TB\/s aggregate: 800 ms\n/, 'checkpoint, in ms');
like($text, qr/floor, not a plan/, 'the transcript says it is a floor');

# --output writes the same bytes, and only on success.
my $dir = tempdir(CLEANUP => 1);
($status) = run($fleet, qw(memory --output), "$dir/floor.txt");
is($status, 0, '--output succeeds');
my $written = slurp("$dir/floor.txt");
is($written, $text, '--output writes what stdout would show');
is_deeply([files_in($dir)], ['floor.txt'], 'no temporary file is left behind');

# LaTeX macros and CSV carry the same numbers.
my (undef, $latex) = run($fleet, qw(memory --latex Floor));
like($latex, qr/\\newcommand\{\\FloorGpusWholeNodes\}\{32\}/, 'LaTeX macro for 32 GPUs');
like($latex, qr/\\newcommand\{\\FloorStaticBytes\}\{1\.6\\,TB\}/, 'LaTeX macro for 1.6 TB');
my (undef, $csv) = run($fleet, qw(memory --csv));
my ($head, $row) = split /\n/, $csv;
my @k = split /,/, $head; my @v = split /,/, $row;
my %c; @c{@k} = @v;
is($c{gpus_min}, 25, 'CSV carries gpus_min');
my (undef, $conv) = run($fleet, qw(memory --precisions --csv));
my @rows = split /\n/, $conv;
is(scalar @rows, 6, 'the conventions CSV has a header and five rows');
for my $r (@rows[1..$#rows]) {
    my @f = split /,/, $r;
    is($f[2] + $f[3] + $f[4] + $f[5] + $f[6], $f[7], "$f[0]: terms add up to the total");
    is(scalar @f, 8, "$f[0]: eight CSV fields (no comma inside a name)");
}
# A row's name says what its bytes count: lean's moments are fp32 (8 B).
like($conv, qr/^lean,bf16 weights \+ fp32 moments,2,0,0,0,8,10$/m,
     'the lean row is named for its bf16 weights and fp32 moments');

# The checkpoint a restart needs, as chapter 1's run script priced it
# (build/numbers/01-restart.tex): the mixed row's fp32 master weights and
# moments, divided among the floor's nodes and the whole fleet's.
{
    my $file = root() . '/build/numbers/01-restart.tex';
    ok(-s $file, 'the run script priced the restart checkpoint (run make first)');
    my %r = %{ read_macros($file) };
    my ($mixed) = grep { /^mixed,/ } @rows;
    my @f = split /,/, $mixed // '';
    my $keep = $f[4] + $f[6];
    is($keep, 12, 'a restart keeps 4 B of master weights and 8 B of moments');
    macro_agrees(\%r, 'RestartCheckpointBytesPerParam', $keep, 'restart: bytes a parameter');
    macro_agrees(\%r, 'RestartCheckpointBytes', 100e9 * $keep, 'restart: 1.2 TB');
    macro_agrees(\%r, 'RestartCheckpointSeconds', 100e9 * $keep / 2e12, 'restart: seconds at 2 TB/s');
    macro_agrees(\%r, 'RestartCheckpointBytesPerNode', 100e9 * $keep / $m->{nodes},
                 "restart: bytes per node of the floor's $m->{nodes}");
    macro_agrees(\%r, 'RestartCheckpointRatePerNode', 2e12 / $m->{nodes},
                 'restart: rate per node of the floor');
    macro_agrees(\%r, 'RestartFleetNodes', 1024 / 8, 'restart: the fleet has 128 nodes');
    macro_agrees(\%r, 'RestartFleetRatePerNode', 2e12 / 128, 'restart: rate per node of the fleet');
}
done_testing();
