#!/usr/bin/perl
# Chapter 11: minigpt --tp T --pp P --dp D, the three axes at once. The
# mesh agrees with the single-process reference (loss, gathered gradient,
# one optimizer step) at 2 x 2 x 2 on eight ranks, with ZeRO-1 on the data
# axis and with sequence parallelism inside the stages, and on the grid of
# two axes at a time; a layout the ranks or the model cannot take is
# refused with one line and exit status 2, on every rank; and the
# sharded checkpoint goes from the mesh to one process and back (the same
# shards, byte for byte) and from each to the other with the losses of the
# uninterrupted run.
# Eight ranks on a small machine are oversubscribed: the model is tiny.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my %shape = (layers => 2, hidden => 16, heads => 2, seq => 8, vocab => 16);
my @tiny = (minigpt_flags(%shape), '--batch', 4);

# Training runs take the peak from the build's machine file rather than
# measure it.
my @train = ('--machine', root() . '/build/machine.json',
             qw(--eval-every 1000 --quiet));
my $tmp = tempdir(CLEANUP => 1);

# --verify: the whole mesh, plain and with ZeRO-1 on the data axis and
# sequence parallelism inside the stages; then each pair of axes.
for my $case ([2, 2, 2],
              [2, 2, 2, qw(--zero 1 --sequence-parallel --micro-batches 2)],
              [2, 2, 1, qw(--micro-batches 2)], [2, 1, 2], [1, 2, 2]) {
    my ($t, $p, $d, @flags) = @$case;
    my $name = "verify, --tp $t --pp $p --dp $d @flags";
    my ($status, $out, $err) = run(mpiexec($t * $p * $d, $minigpt, @tiny,
        '--tp', $t, '--pp', $p, '--dp', $d, @flags, '--verify'));
    is($status, 0, "$name: exit 0") or diag $err;
    verify_ok($name, $out, grad => 1);
    like($out, qr/^verify: the mesh --tp $t × --pp $p × --dp $d on /m,
         "$name: names the mesh");
    like($out, qr/^verify: each block split 2 ways by tensor parallelism/m,
         "$name: names the split") if $t > 1;
    like($out, qr/^verify: the 2 blocks in 2 pipeline stages/m,
         "$name: names the stages") if $p > 1;
    like($out, qr/^verify: ZeRO stage 1 shards/m, "$name: names ZeRO-1")
      if grep { $_ eq '--zero' } @flags;
}

# Layouts the ranks or the model cannot take: one line, exit status 2, and
# no rank left waiting (mpiexec's time limit would end it with 124). A
# hash at the end changes the tiny model's shape.
for my $case (
    [4, 'a mesh of 8 on 4 ranks',
     qr/--tp 2 × --pp 2 × --dp 2 asks for 8 ranks; mpiexec started 4/,
     qw(--tp 2 --pp 2 --dp 2)],
    [6, '--tp 2 --pp 2 on 6 ranks',
     qr/--tp 2 × --pp 2 does not divide the 6 ranks started by mpiexec/,
     qw(--tp 2 --pp 2)],
    [4, 'heads that do not split', qr/--tp 2 does not divide --heads 1/,
     qw(--tp 2 --pp 2), { heads => 1 }],
    [4, 'blocks that do not split',
     qr/--layers 3 does not split into --pp 2 stages/, qw(--tp 2 --pp 2),
     { layers => 3 }],
    [4, 'a batch that does not split',
     qr/--micro-batches \(3\) must divide --batch \(4\)/,
     qw(--tp 2 --pp 2 --micro-batches 3)],
    [4, '--zero 2 on the mesh',
     qr/--zero 2 with --pp: a pipeline takes --zero 0 or 1/,
     qw(--tp 2 --pp 2 --zero 2)],
    [4, 'rows that do not split',
     qr/--sequence-parallel: --tp 2 does not divide --seq 9/,
     qw(--tp 2 --pp 2 --sequence-parallel), { seq => 9 }],
    [4, '--dump on the mesh', qr/--dump/, qw(--tp 2 --pp 2 --dump), $tmp]) {
    my ($n, $name, $pattern, @flags) = @$case;
    my %model = (%shape, ref $flags[-1] ? %{ pop @flags } : ());
    my @check = grep({ $_ eq '--dump' } @flags) ? () : '--verify';
    refused($name, $pattern, mpiexec($n, $minigpt, minigpt_flags(%model),
                                     '--batch', 4, @flags, @check));
}

# Checkpoints across layouts. The mesh writes its shards at steps 1 and 2,
# one process likewise. The mesh's last, resumed at its own last step by
# one process and then by the mesh, is written again byte for byte; each
# layout's
# step-1 checkpoint, resumed by the other, reaches the loss of the
# uninterrupted run that wrote it.
{
    my $dir = tempdir(CLEANUP => 1);
    my @run = (@tiny, qw(--steps 2), @train);
    my @mesh = qw(--tp 2 --pp 2 --dp 2);
    my $saves = sub { ('--save-every', 1, '--keep-checkpoints', 2,
                       '--save', "$dir/$_[0].ckpt", '--log',
                       "$dir/$_[0].csv") };
    my ($status, $out, $err) = run(mpiexec(8, $minigpt, @run, @mesh,
                                           $saves->('mesh')));
    is($status, 0, '2 x 2 x 2 trains and saves') or diag $err;
    ($status, $out, $err) = run($minigpt, @run, $saves->('one'));
    is($status, 0, 'one process trains and saves') or diag $err;

    ($status, $out, $err) = run($minigpt, @run, '--resume',
        "$dir/mesh.ckpt", '--save', "$dir/mesh-by-one.ckpt");
    is($status, 0, "one process resumes the mesh's last checkpoint")
      or diag $err;
    ($status, $out, $err) = run(mpiexec(8, $minigpt, @run, @mesh,
        '--resume', "$dir/mesh-by-one.ckpt", '--save', "$dir/mesh-again.ckpt"));
    is($status, 0, 'the mesh resumes it') or diag $err;
    same_checkpoints("$dir/mesh-again.ckpt", "$dir/mesh.ckpt",
                     '2 x 2 x 2 -> 1 x 1 x 1 -> 2 x 2 x 2: the same '
                     . 'checkpoint, byte for byte');

    ($status, $out, $err) = run($minigpt, @run, '--resume',
        "$dir/mesh.ckpt.step000001", '--log', "$dir/mesh-then-one.csv");
    is($status, 0, "one process trains on from the mesh's step 1")
      or diag $err;
    ($status, $out, $err) = run(mpiexec(8, $minigpt, @run, @mesh,
        '--resume', "$dir/one.ckpt.step000001", '--log',
        "$dir/one-then-mesh.csv"));
    is($status, 0, "the mesh trains on from one process's step 1")
      or diag $err;
    for my $case (['2 x 2 x 2 then 1 x 1 x 1', 'mesh-then-one', 'mesh'],
                  ['1 x 1 x 1 then 2 x 2 x 2', 'one-then-mesh', 'one']) {
        my ($name, $resumed, $whole) = @$case;
        my %want = losses("$dir/$whole.csv");
        my %got = losses("$dir/$resumed.csv");
        is_deeply([sort keys %got], [2], "$name: step 2 logged");
        for my $step (sort keys %got) {
            cmp_ok(abs($got{$step} - $want{$step}), '<', 1e-6,
                   "$name: step ${step}'s loss $got{$step}, uninterrupted "
                   . "$want{$step}");
        }
    }
}

# The training loss of each step a --log file holds: step => loss.
sub losses {
    my ($path) = @_;
    my %loss;
    for my $line (split /\n/, slurp($path) // '') {
        my ($step, undef, $loss) = split /,/, $line;
        $loss{$step} = $loss if $step =~ /^\d+$/;
    }
    return %loss;
}

done_testing();
