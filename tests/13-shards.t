#!/usr/bin/perl
# Chapter 13: sharded checkpoints. Every rank writes its own shard, and the
# manifest gives each shard's size and FNV-1a checksum, which this test
# recomputes; a save that one rank fails (--fail-shard-write) leaves the
# previous checkpoint as it was and no temporary directory; a resume on the
# layout that saved continues bit for bit (the next checkpoint is the same
# bytes as the uninterrupted run's); a resume on another layout (one
# process, --tp 2, --pp 2) reads the pieces it needs from the shards and
# reaches the uninterrupted run's losses, which it sums in another order;
# and a checkpoint with a shard missing, torn, corrupted, of another step
# or of another layout than its manifest says, or of another model, is
# refused with one line and exit status 2 on every rank, the last good
# checkpoint untouched.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Copy qw(copy);
use File::Path qw(remove_tree);
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my %shape = (layers => 2, hidden => 16, heads => 2, seq => 8, vocab => 16);
my @tiny = (minigpt_flags(%shape), '--batch', 4);
my @train = (@tiny, '--machine', root() . '/build/machine.json',
             qw(--eval-every 1000 --quiet --steps 4));
my @zero3 = qw(--dp 2 --zero 3);
my $dir = tempdir(CLEANUP => 1);

# 64-bit FNV-1a in two 32-bit halves, so that no product overflows.
sub fnv1a_hex {
    my ($bytes) = @_;
    my ($hi, $lo) = (0xcbf29ce4, 0x84222325);
    for my $byte (unpack 'C*', $bytes) {
        $lo ^= $byte;                      # times 2^40 + 0x1b3, mod 2^64
        my $low = $lo * 0x1b3;
        $hi = ($hi * 0x1b3 + ($low >> 32) + ($lo << 8)) & 0xffffffff;
        $lo = $low & 0xffffffff;
    }
    return sprintf '%08x%08x', $hi, $lo;
}

sub manifest {
    my ($ckpt) = @_;
    my %m = (shards => []);
    for (split /\n/, slurp("$ckpt/manifest") // '') {
        my @w = split ' ';
        if ($w[0] eq 'shard') { push @{ $m{shards} }, [@w[2 .. 4]] }
        else                  { $m{$w[0]} = $w[1] }
    }
    return \%m;
}

sub losses {
    my ($csv) = @_;
    my %loss;
    for (split /\n/, slurp($csv) // '') {
        my @f = split /,/;
        $loss{$f[0]} = $f[2] if $f[0] =~ /^\d+$/;
    }
    return %loss;
}

# Two ranks, ZeRO-3: a checkpoint at steps 2 and 4, and the log.
my ($status, $out, $err) = run(mpiexec(2, $minigpt, @train, @zero3,
    qw(--save-every 2 --keep-checkpoints 2 --save), "$dir/a",
    '--log', "$dir/a.csv"));
is($status, 0, 'two ranks with --zero 3 save every 2 steps') or diag $err;
my $m = manifest("$dir/a");
is_deeply([@$m{qw(step tp pp dp zero ranks)}], [4, 1, 1, 2, 3, 2],
          'the manifest names the step and the layout');
is_deeply([files_in("$dir/a")],
          [qw(manifest rank00000.shard rank00001.shard)],
          'a manifest and one shard per rank');
for my $shard (@{ $m->{shards} }) {
    my ($file, $bytes, $hash) = @$shard;
    my $data = slurp("$dir/a/$file") // '';
    is(length $data, $bytes, "$file: as long as the manifest says");
    is(fnv1a_hex($data), $hash, "$file: the manifest's FNV-1a checksum");
    my @h = unpack 'Q<30', $data;
    is($h[9], 4, "$file: its header holds the step");
}
my $N = minigpt_params(%shape);
my $held = 0;
$held += (unpack 'Q<30', slurp("$dir/a/$_->[0]"))[29] for @{ $m->{shards} };
is($held, $N, "the shards hold the model's $N numbers between them, "
              . 'each once');
is_deeply([grep { /tmp/ } files_in($dir)], [], 'no temporary directory left');

# A save that one rank fails: the previous checkpoint stays as it was.
my %before = map { ($_ => slurp("$dir/a/$_")) } files_in("$dir/a");
refused('rank 1 fails to write its shard', qr/^minigpt: --save: rank 1 /,
        mpiexec(2, $minigpt, @train, @zero3, '--resume', "$dir/a.step000002",
                '--save', "$dir/a", '--fail-shard-write', 1));
my %after = map { ($_ => slurp("$dir/a/$_")) } files_in("$dir/a");
is_deeply(\%after, \%before, '... and the previous checkpoint is untouched');
is_deeply([grep { /tmp/ } files_in($dir)], [],
          '... and no temporary directory is left');
refused('--fail-shard-write of a rank the run lacks', qr/--fail-shard-write/,
        mpiexec(2, $minigpt, @train, @zero3, '--save', "$dir/never",
                '--fail-shard-write', 2));

# The same layout continues bit for bit.
($status, $out, $err) = run(mpiexec(2, $minigpt, @train, @zero3,
    '--resume', "$dir/a.step000002", '--save', "$dir/same"));
is($status, 0, 'resumed from step 2 on the same layout') or diag $err;
same_checkpoints("$dir/same", "$dir/a",
                 'its step-4 checkpoint is the uninterrupted one, byte for '
                 . 'byte');

# Other layouts read the pieces they need: the uninterrupted losses, to
# rounding (each layout sums in its own order).
my %want = losses("$dir/a.csv");
for my $case ([1], [2, '--tp', 2], [2, '--pp', 2], [2, '--dp', 2]) {
    my ($ranks, @layout) = @$case;
    my $name = "resharded onto " . (@layout ? "@layout" : 'one process');
    my @command = ($minigpt, @train, @layout, '--resume',
                   "$dir/a.step000002", '--log', "$dir/r.csv");
    unlink "$dir/r.csv";
    ($status, $out, $err) = run($ranks > 1 ? mpiexec($ranks, @command)
                                           : @command);
    is($status, 0, "$name: exit 0") or diag $err;
    my %got = losses("$dir/r.csv");
    is_deeply([sort keys %got], [3, 4], "$name: steps 3 and 4 logged");
    for my $step (sort keys %got) {
        cmp_ok(abs($got{$step} - $want{$step}), '<=', 1e-6,
               "$name: step ${step}'s loss $got{$step}, uninterrupted "
               . "$want{$step}");
    }
}
# Resharded onto one process and back: the same bytes.
($status, undef, $err) = run($minigpt, @train, '--resume', "$dir/a",
                             '--save', "$dir/one");
is($status, 0, 'the step-4 checkpoint, resharded onto one process')
  or diag $err;
is_deeply([files_in("$dir/one")], [qw(manifest rank00000.shard)],
          '... is one shard');
($status, undef, $err) = run(mpiexec(2, $minigpt, @train, @zero3,
    '--resume', "$dir/one", '--save', "$dir/back"));
is($status, 0, '... and back onto two ranks') or diag $err;
same_checkpoints("$dir/back", "$dir/a", '... the same bytes as before');

# Refusals, on both ranks, with --save naming the good checkpoint.
%before = map { ($_ => slurp("$dir/a/$_")) } files_in("$dir/a");
sub broken {
    my ($name, $edit) = @_;
    my $b = "$dir/broken";
    remove_tree($b);
    mkdir $b or die "$b: $!";
    copy("$dir/a/$_", "$b/$_") or die "$_: $!" for files_in("$dir/a");
    $edit->($b);
    return $b;
}
sub truncate_by {
    my ($path, $bytes) = @_;
    truncate($path, (-s $path) - $bytes) or die "$path: $!";
}
sub flip_a_byte {
    my ($path) = @_;
    open(my $fh, '+<:raw', $path) or die "$path: $!";
    seek($fh, 1000, 0);
    read($fh, my $c, 1);
    seek($fh, 1000, 0);
    print $fh chr(ord($c) ^ 1);
    close $fh;
}
for my $case (
    ['a missing shard', qr/rank00001\.shard is missing/,
     sub { unlink "$_[0]/rank00001.shard" }],
    ['a truncated shard', qr/rank00001\.shard is truncated/,
     sub { truncate_by("$_[0]/rank00001.shard", 8) }],
    ['a shard with a byte changed', qr/rank00001\.shard is corrupted/,
     sub { flip_a_byte("$_[0]/rank00001.shard") }],
    ['a shard of another step', qr/rank00000\.shard holds step 2.*step 4/,
     sub { copy("$dir/a.step000002/rank00000.shard", $_[0]) or die }],
    ['a shard of another layout', qr/rank00001\.shard is rank 1 of --tp 2/,
     sub { copy("$dir/tp/rank00001.shard", $_[0]) or die }],
    ['no manifest', qr/manifest/, sub { unlink "$_[0]/manifest" }],
    ) {
    my ($name, $why, $edit) = @$case;
    if ($name =~ /layout/) {
        ($status, undef, $err) = run(mpiexec(2, $minigpt, @train,
            qw(--tp 2 --save), "$dir/tp"));
        is($status, 0, 'a checkpoint of --tp 2 to take a shard from')
          or diag $err;
    }
    my $b = broken($name, $edit);
    refused($name, qr/^minigpt: --resume: .*$why/,
            mpiexec(2, $minigpt, @train, @zero3, '--resume', $b, '--save',
                    "$dir/a"));
}
my @wider = (minigpt_flags(%shape, hidden => 32), '--batch', 4,
             @train[@tiny .. $#train]);
refused('the checkpoint of another model', qr/--hidden 16.*differs/,
        mpiexec(2, $minigpt, @wider, @zero3, '--resume', "$dir/a", '--save',
                "$dir/a"));
%after = map { ($_ => slurp("$dir/a/$_")) } files_in("$dir/a");
is_deeply(\%after, \%before, 'after every refusal, the checkpoint --save '
          . 'names is untouched');
refused('--save naming a file', qr/--save: .* not a directory/,
        $minigpt, @train, '--save', "$dir/a.csv");
mkdir "$dir/plain" or die;
refused('--save naming a directory that holds no checkpoint',
        qr/--save: .*no manifest/, $minigpt, @train, '--save', "$dir/plain");

# The book's numbers (code/runs/13-shards.sh), from first principles: 405e9
# parameters of 12 bytes (fp32 master weights and Adam's two moments), one
# 400 Gb/s NIC of 50 GB/s, 16,384 GPUs of 80 GB.
SKIP: {
    my $numbers = root() . '/build/numbers';
    skip 'run make first for the numbers of the book', 12
        unless -f "$numbers/13-shards.tex";
    my %m = %{ read_macros("$numbers/13-[Ss]hards*.tex") };
    my ($bytes, $nic, $gpus) = (405e9 * 12, 400e9 / 8, 16384);
    macro_agrees(\%m, 'ShardsOneCheckpointBytes', $bytes, 'the state');
    macro_agrees(\%m, 'ShardsOneCheckpointTime', $bytes / $nic,
                 'through one NIC');
    macro_agrees(\%m, 'ShardsGpuMemories', $bytes / 80e9,
                 "in H100s' memories");
    macro_agrees(\%m, 'ShardsIdleGpuHours', $bytes / $nic * $gpus / 3600,
                 'GPU-hours waiting for one writer');
    macro_agrees(\%m, 'ShardsEachCheckpointBytes', $bytes / $gpus,
                 "a rank's shard");
    macro_agrees(\%m, 'ShardsEachCheckpointTime', $bytes / $gpus / $nic,
                 'through its own NIC');
    macro_agrees(\%m, 'ShardsAllNicsTBs', $nic * $gpus / 1e12,
                 "the fleet's NICs, TB/s");
    macro_agrees(\%m, 'ShardsNicGBs', $nic / 1e9, 'one NIC, GB/s');
    is($m{ShardsSameLayout}, 'identical',
       'the book: the same layout resumes to the same bytes');
    is($m{ShardsDrill}, 'untouched', 'the book: the drill left the checkpoint');
    my ($diff) = printed_number($m{ShardsReshardDiff});
    ok(defined $diff && $diff <= 1e-6,
       'the book: resharded losses within 1e-6 of the uninterrupted run\'s');
    like(slurp(root() . '/build/transcripts/13-refusals.txt') // '',
         qr/missing.*truncated.*holds step 2/s,
         'the book: the three refusals, each for its reason');
}

done_testing();
