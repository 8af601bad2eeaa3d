#!/usr/bin/perl
# Chapter 9: minigpt --tp T. The split model agrees with the single-process
# reference (loss, gathered gradient, one optimizer step) for T = 1, 2, 4,
# with micro-batches, and on a mesh of two ways by two data-parallel ranks
# with every ZeRO stage; it sends, per block per micro-batch, the bytes the
# formula 8bsh(t-1)/t says, counted at MPI_Sendrecv; a rank holds the
# activations its local shapes say, fewer as t grows; a split run writes the
# whole-state checkpoint every layout writes and any layout resumes it; and
# a split the model cannot take is refused with one line and exit status 2.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my %shape = (layers => 2, hidden => 32, heads => 4, seq => 16, vocab => 24);
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @tiny = (minigpt_flags(%shape), '--batch', 8,
            '--machine', root() . '/build/machine.json');
my ($L, $C, $H, $T, $V) = @shape{qw(layers hidden heads seq vocab)};
my $word = 4;                                     # bytes of a real (fp32)

# --verify: 1, 2 and 4 ways; with two micro-batches; and two ways by two
# data-parallel ranks, with every ZeRO stage.
for my $case ([1], [2], [4], [2, '--micro-batches', 2],
              (map { [2, '--dp', 2, '--zero', $_] } 0 .. 3),
              (map { [$_, '--sequence-parallel'] } 1, 2, 4),
              [2, qw(--sequence-parallel --micro-batches 2)],
              [2, qw(--sequence-parallel --dp 2 --zero 1)]) {
    my ($t, @flags) = @$case;
    my $ranks = grep({ $_ eq '--dp' } @flags) ? 2 * $t : $t;
    my $name = "verify, --tp $t @flags";
    my ($status, $out, $err) = run(mpiexec($ranks, $minigpt, @tiny, '--tp', $t,
                                           '--verify', @flags));
    is($status, 0, "$name: exit 0") or diag $err;
    verify_ok($name, $out, grad => 1);       # this model's gradients are below 1
    like($out, qr/^verify: each block split $t ways by tensor parallelism/m,
         "$name: names the split") if $t > 1;
}

# The collectives of a block, counted, against the formula, and the
# activations a rank holds against its local shapes: two training steps,
# with and without sequence parallelism.
my (%held, %held_sp);
for my $case ((map { [$_, 0] } 1, 2, 4), [2, 1], [4, 1]) {
    my ($t, $sp) = @$case;
    my $r = json_of(mpiexec($t, $minigpt, @tiny, '--tp', $t, qw(--steps 2
                            --eval-every 1000 --quiet),
                            $sp ? '--sequence-parallel' : ()));
    my ($b, $bsh) = ($r->{micro_batch}, $r->{micro_batch} * $T * $C);
    my $name = "--tp $t" . ($sp ? ' --sequence-parallel' : '');
    is($r->{tp}, $t, "$name: reports tp $t");
    is($r->{sequence_parallel}, $sp, "$name: reports sequence_parallel $sp");
    # Counted at MPI_Sendrecv; each all-reduce becomes a reduce-scatter and
    # an all-gather with sequence parallelism, the same bytes.
    tp_block_counts_ok($r, t => $t, bsh => $bsh, sp => $sp, word => $word,
                       name => $name);
    # Kept for the backward pass: the layer norms' outputs whole; the
    # stream and the layer norms' statistics whole, or a t-th with sequence
    # parallelism; queries, keys, values, attention, the MLP's hidden and
    # the logits a t-th each.
    my ($N, $BTC, $s) = ($b * $T, $b * $T * $C, $sp ? $t : 1);
    my $layer = 2 * $BTC + (2 * $BTC + 4 * $N) / $s
              + (3 * $BTC + $b * $H * $T * $T + $BTC + 8 * $BTC) / $t;
    my $kept = $BTC + $L * $layer + $BTC + 2 * $N / $s + $N * $V / $t + $N;
    is($r->{activation_bytes_held}, $word * $kept,
       "$name: holds the activations of its local shapes");
    ($sp ? \%held_sp : \%held)->{$t} = $r->{activation_bytes_held};
}
cmp_ok($held{4}, '<', $held{2}, 'four ways hold fewer activations than two');
cmp_ok($held{2}, '<', $held{1}, 'two ways hold fewer activations than one');
cmp_ok($held_sp{$_}, '<', $held{$_},
       "sequence parallelism holds fewer activations at --tp $_") for 2, 4;

# On a mesh, the data axis counts its own bytes, not the tensor axis's.
{
    my $r = json_of(mpiexec(4, $minigpt, @tiny, qw(--tp 2 --dp 2 --zero 1
                            --steps 2 --eval-every 1000 --quiet)));
    is($r->{bytes_sent_per_step}, $r->{bytes_sent_formula},
       '--tp 2 --dp 2 --zero 1: the data axis sends what its formula says');
    cmp_ok($r->{tp_bytes_per_block}, '>', 0, 'and the tensor axis sent too');
}

# Refusals, before any compute, on every rank, in one line.
refused('--tp 3 and 4 heads', qr/--tp 3 does not divide --heads 4/,
        mpiexec(3, $minigpt, @tiny, '--tp', 3, '--verify'));
refused('--tp 4 and a vocabulary of 30', qr/--tp 4 does not divide --vocab 30/,
        mpiexec(4, $minigpt, minigpt_flags(%shape, vocab => 30), '--tp', 4,
                '--verify'));
refused('--sequence-parallel, --tp 4 and a context of 18',
        qr/--sequence-parallel: --tp 4 does not divide --seq 18/,
        mpiexec(4, $minigpt, minigpt_flags(%shape, seq => 18), qw(--tp 4
                --sequence-parallel --verify)));
refused('--sequence-parallel with --zero 2', '--sequence-parallel',
        mpiexec(4, $minigpt, @tiny, qw(--tp 2 --dp 2 --zero 2
                --sequence-parallel --verify)));
refused('--gradcheck split', '--tp',
        mpiexec(2, $minigpt, @tiny, '--tp', 2, '--gradcheck'));

# Checkpoints: each rank of a split run writes its shard, and any layout
# reads the pieces it needs. Resuming it at its last step does no training
# and writes it again: resharded onto one process, byte for byte the same,
# whichever split reads and writes it.
{
    my $dir = tempdir(CLEANUP => 1);
    my @short = (@tiny, qw(--steps 20 --eval-every 1000 --quiet));
    my ($status, undef, $err) = run(mpiexec(2, $minigpt, @short, '--tp', 2,
        '--save-every', 10, '--save', "$dir/a.ckpt"));
    is($status, 0, '--tp 2 saves a checkpoint') or diag $err;
    my $on_one = sub {            # the checkpoint, resharded onto one
        my ($ckpt) = @_;
        run($minigpt, @short, '--resume', $ckpt, '--save', "$ckpt.one");
        return "$ckpt.one";
    };
    my $first = $on_one->("$dir/a.ckpt");
    my $previous = "$dir/a.ckpt";
    for my $layout ([1], [4], [2, '--dp', 2], [2, '--sequence-parallel'],
                    [2, qw(--dp 2 --zero 1)], [2, qw(--dp 2 --zero 3)], [2]) {
        my ($t, @flags) = @$layout;
        my $ranks = grep({ $_ eq '--dp' } @flags) ? 2 * $t : $t;
        my $next = "$dir/$t-" . join('', @flags) . '.ckpt';
        ($status, undef, $err) = run(mpiexec($ranks, $minigpt, @short, '--tp',
            $t, @flags, '--resume', $previous, '--save', $next));
        is($status, 0, "--tp $t @flags resumes it and saves") or diag $err;
        same_checkpoints($on_one->($next), $first,
                         "--tp $t @flags: the same state, byte for byte");
        $previous = $next;
    }
    # Training on from it, split or whole, reaches the same loss.
    my @on = (@tiny, qw(--steps 26 --eval-every 1000 --quiet --json
                        --allow-schedule-change --resume), "$dir/a.ckpt");
    my ($s1, $one) = run($minigpt, @on);
    my ($s2, $two) = run(mpiexec(2, $minigpt, @on, '--tp', 2));
    is($s1 + $s2, 0, 'one process and two ways both resume it');
    my ($l1, $l2) = map { decode_json($_)->{val_loss} } $one, $two;
    cmp_ok(abs($l1 - $l2), '<', 1e-4, "and reach the same loss ($l1, $l2)");
}

done_testing();
