#!/usr/bin/perl
# Chapter 10: minigpt --pp P. The pipelined trainer agrees with the
# single-process reference (loss, gathered gradient, one optimizer step) for
# every schedule at P = 2 and 4, and on a mesh of two stages by two
# data-parallel ranks, with and without ZeRO-1; a stage holds at most the
# micro-batches its schedule says (m for GPipe, P - r for 1F1B, P for
# ZB-H1), as measured by the slots it took; a checkpoint written by a
# pipeline resumes in one process and the other way round, each giving the
# uninterrupted run's losses; and what a pipeline cannot take is refused
# with one line and exit status 2, on every rank.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my %shape = (layers => 8, hidden => 16, heads => 2, seq => 8, vocab => 16);
my @tiny = (minigpt_flags(%shape), '--batch', 8);

# Training runs take the peak from a machine file rather than measure it.
my $tmp = tempdir(CLEANUP => 1);
open(my $fh, '>', "$tmp/machine.json") or die "$tmp/machine.json: $!";
print $fh qq({\n  "cpu": "test",\n  "peak_flops_per_core": 2e11,\n),
          qq(  "gemm_flops_per_core": 1e9,\n  "complete": true\n}\n);
close $fh;
my @train = ('--machine', "$tmp/machine.json", qw(--eval-every 1000
             --quiet));

# --verify: every schedule, two and four stages; m = 2P, and m = P on four
# stages (the least the interleaved schedule takes), to keep the test short.
for my $p (2, 4) {
    my $m = $p == 2 ? 2 * $p : $p;
    for my $schedule (qw(gpipe 1f1b interleaved zb-h1)) {
        my @flags = ('--pp', $p, '--schedule', $schedule,
                     '--micro-batches', $m);
        my $name = "verify, @flags";
        my ($status, $out, $err) = run(mpiexec($p, $minigpt, @tiny,
                                               @flags, '--verify'));
        is($status, 0, "$name: exit 0") or diag $err;
        verify_ok($name, $out, grad => 1);
        my $how = $schedule eq 'interleaved' ? ' of interleaved chunks' : '';
        like($out, qr/^verify: the 8 blocks in $p pipeline stages$how, schedule $schedule over $m micro-batches/m,
             "$name: names the pipeline");
    }
}
for my $flags ([qw(--pp 2 --dp 2 --micro-batches 2)],
               [qw(--pp 2 --dp 2 --micro-batches 2 --zero 1)]) {
    my $name = "verify, @$flags";
    my ($status, $out, $err) = run(mpiexec(4, $minigpt, @tiny, @$flags,
                                           '--verify'));
    is($status, 0, "$name: exit 0") or diag $err;
    verify_ok($name, $out, grad => 1);
}

# The peak of micro-batches in flight, counted in the slots each stage took.
for my $case (['gpipe', 2, 4, '4 4'], ['1f1b', 4, 8, '4 3 2 1'],
              ['zb-h1', 4, 8, '4 4 4 4']) {
    my ($schedule, $p, $m, $want) = @$case;
    my $report = json_of(mpiexec($p, $minigpt, @tiny, '--pp', $p,
                                 '--schedule', $schedule, '--micro-batches',
                                 $m, '--steps', 1, @train));
    is($report->{peak_inflight_per_stage}, $want,
       "$schedule, P = $p, m = $m: at most $want micro-batches in flight");
    is($report->{schedule}, $schedule, "$schedule: the report names it");
}

# Checkpoints: a pipeline writes the whole state at step 3, one process
# resumes it; one process writes it, a pipeline resumes it. Both reach the
# uninterrupted run's losses.
{
    my $dir = tempdir(CLEANUP => 1);
    my @run = (@tiny, '--steps', 6, @train);
    my @pp = qw(--pp 2 --micro-batches 2);
    my $whole = json_of($minigpt, @run);
    my ($status, undef, $err) = run(mpiexec(2, $minigpt, @run, @pp,
        qw(--save-every 3 --keep-checkpoints 2 --save), "$dir/p.ckpt"));
    is($status, 0, '--pp 2 saves checkpoints') or diag $err;
    ($status, undef, $err) = run($minigpt, @run, qw(--save-every 3
        --keep-checkpoints 2 --save), "$dir/w.ckpt");
    is($status, 0, 'one process saves checkpoints') or diag $err;
    my $one = json_of($minigpt, @run, '--resume', "$dir/p.ckpt.step000003");
    my $two = json_of(mpiexec(2, $minigpt, @run, @pp, '--resume',
                              "$dir/w.ckpt.step000003"));
    for my $case (['one process from the pipeline\'s', $one],
                  ['the pipeline from one process\'s', $two]) {
        my ($name, $r) = @$case;
        for my $key (qw(train_loss val_loss)) {
            cmp_ok(abs($r->{$key} - $whole->{$key}), '<', 1e-5,
                   "$name checkpoint: $key $r->{$key}, uninterrupted "
                   . "$whole->{$key}");
        }
    }
}

# Refusals: one line, exit status 2, every rank.
refused('--schedule without a pipeline', qr/--schedule, --chunks and --trace are for a pipeline/,
        $minigpt, @tiny, qw(--schedule gpipe --verify));
refused('--trace without a pipeline', qr/are for a pipeline/,
        $minigpt, @tiny, qw(--trace /tmp/never.csv --verify));
refused('an unknown schedule', qr/--schedule: unknown "zigzag"/,
        mpiexec(2, $minigpt, @tiny, qw(--pp 2 --schedule zigzag --verify)));
refused('--chunks without interleaved', qr/--chunks is for --schedule interleaved/,
        mpiexec(2, $minigpt, @tiny, qw(--pp 2 --chunks 2 --verify)));
refused('layers that do not split', qr/--layers 6 does not split into --pp 4 stages/,
        mpiexec(4, $minigpt, minigpt_flags(%shape, layers => 6),
                qw(--batch 8 --pp 4 --verify)));
refused('chunks that do not split', qr/--layers 8 does not split into --pp 2 stages of 3 equal chunks/,
        mpiexec(2, $minigpt, @tiny, qw(--pp 2 --schedule interleaved
                --chunks 3 --micro-batches 2 --verify)));
refused('interleaved, m not a multiple of P', qr/--micro-batches 2 is not a multiple/,
        mpiexec(4, $minigpt, @tiny, qw(--pp 4 --schedule interleaved
                --micro-batches 2 --verify)));
refused('micro-batches that do not divide the batch', qr/--micro-batches \(3\) must divide --batch \(8\)/,
        mpiexec(2, $minigpt, @tiny, qw(--pp 2 --micro-batches 3 --verify)));
refused('--zero 2 with --pp', qr/--zero 2 with --pp: a pipeline takes --zero 0 or 1/,
        mpiexec(4, $minigpt, @tiny, qw(--pp 2 --dp 2 --zero 2 --verify)));

done_testing();
