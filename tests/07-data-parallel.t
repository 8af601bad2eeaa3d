#!/usr/bin/perl
# Data-parallel minigpt under MPI: every configuration agrees with the
# single-process reference, the ranks keep identical weights, and bad
# layouts are refused once, by every rank, without a hang.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @tiny = (qw(--layers 2 --hidden 32 --heads 4 --seq 16 --vocab 24 --batch 8),
            '--machine', root() . '/build/machine.json');

# --verify: each layout against the whole batch in one process.
for my $case ([2, qw(--micro-batches 1)], [2, qw(--micro-batches 2)],
              [2, qw(--allreduce ring)], [2, qw(--no-overlap)],
              [2, qw(--allreduce ring --micro-batches 4)],
              [4, qw(--micro-batches 2)], [4, qw(--allreduce ring)]) {
    my ($n, @flags) = @$case;
    my ($status, $out, $err) = run(mpiexec($n, $minigpt, @tiny,
                                           '--dp', $n, '--verify', @flags));
    is($status, 0, "verify on $n ranks @flags: exit 0") or diag $err;
    # The gradients of this model are below 1.
    verify_ok("verify on $n ranks @flags", $out, grad => 1);
    like($out, qr/against $n replicas/, "verify on $n ranks @flags: says how many");
}

# Training: the ranks end with identical weights, and the model learns
# what the single-process run learns, up to the rounding of the sums.
my $dir = tempdir(CLEANUP => 1);
my @train = (@tiny, qw(--steps 40 --eval-every 1000 --quiet --json));
my ($s1, $one) = run($minigpt, @train, '--save', "$dir/one.ckpt");
is($s1, 0, 'one process trains');
my ($s2, $two, $err2) = run(mpiexec(2, $minigpt, @train, '--dp', 2,
                            '--save', "$dir/two.ckpt"));
is($s2, 0, 'two ranks train') or diag $err2;
my ($j1, $j2) = (decode_json($one), decode_json($two));
is($j2->{ranks}, 2, 'the report counts two ranks');
is($j2->{weights_identical}, 1, 'every rank ends with the same weights');
cmp_ok(abs($j1->{val_loss} - $j2->{val_loss}), '<', 1e-3,
       "the same validation loss as one process ($j1->{val_loss} vs $j2->{val_loss})");
is($j2->{tokens_per_step}, $j1->{tokens_per_step}, 'the same global batch');
is($j2->{micro_batch}, 4, 'each rank holds activations for its 4 sequences');
cmp_ok($j2->{flops_per_step}, '<', 0.51 * $j1->{flops_per_step},
       'each rank does half the arithmetic of one process');
# A shard's header word 29 counts the numbers of each array it holds.
sub held { (unpack 'Q<30', slurp($_[0]) // '')[29] // 0 }
my @two = map { "$dir/two.ckpt/rank0000$_.shard" } 0, 1;
is_deeply([map { -s $_ ? 1 : 0 } @two], [1, 1], 'each of two ranks wrote its shard');
is(held($two[0]) + held($two[1]), held("$dir/one.ckpt/rank00000.shard"),
   'and the two hold between them what one process\'s shard holds');
cmp_ok(held($two[0]), '<', held("$dir/one.ckpt/rank00000.shard"),
       'rank 0 alone holds less than the whole');

# A checkpoint written by two ranks resumes on two ranks (its 40-step
# schedule lengthened to 50, which the resume must be told is meant).
my ($s3, $three, $err3) = run(mpiexec(2, $minigpt, @tiny, qw(--steps 50
    --eval-every 1000 --quiet --json --dp 2 --allow-schedule-change --resume),
    "$dir/two.ckpt"));
is($s3, 0, 'two ranks resume from it') or diag $err3;
is(decode_json($three)->{step}, 50, '... and continue to step 50');

# The three timings the chapter compares: overlapped, blocking and the
# compute alone. Each reports the median of its steps after the warm-up;
# only the first two combine the gradients; none claims a fraction hidden,
# which one run cannot measure.
my %timing;
# The warm-up every median of per-step numbers leaves out (Appendix
# sec:plumbing-report): none of one, one of under 20, a tenth (at most ten).
sub untimed { my ($n) = @_; $n < 2 ? 0 : $n < 20 ? 1 : $n < 100 ? int($n / 10) : 10 }
for my $case (['overlapped'], ['blocking', '--no-overlap'],
              ['compute', '--no-allreduce']) {
    my ($name, @flags) = @$case;
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, @tiny,
        qw(--steps 30 --eval-every 1000 --quiet --json --dp 2), @flags));
    is($status, 0, "$name: two ranks train") or diag $err;
    my $j = eval { decode_json($out) } // {};
    $timing{$name} = $j;
    cmp_ok($j->{step_seconds_median} // 0, '>', 0, "$name: a median step time");
    is($j->{step_intervals}, 29 - untimed(29),
       "$name: the median of the 29 intervals less the warm-up's "
       . untimed(29) . ', the rule of a one-rank run');
    ok(!exists $j->{hidden_fraction} && !exists $j->{allreduce_seconds},
       "$name: no fraction hidden from one run, no cold blocking time");
}
is($timing{overlapped}{allreduce}, 'mpi, overlapped', 'overlapped: says so');
is($timing{blocking}{allreduce}, 'mpi', 'blocking: says so');
is($timing{compute}{allreduce}, 'skipped', '--no-allreduce: says the all-reduce was skipped');
is($timing{overlapped}{weights_identical}, 1, 'overlapped: identical weights');
is($timing{blocking}{weights_identical}, 1, 'blocking: identical weights');
is($timing{compute}{weights_identical}, 0,
   '--no-allreduce: the ranks drift apart, and the report does not hide it');
{
    my ($status, $out) = run(mpiexec(2, $minigpt, @tiny,
        qw(--steps 30 --eval-every 1000 --dp 2 --no-allreduce)));
    is($status, 0, '--no-allreduce: the report');
    like($out, qr/^  weights      = not combined \(--no-allreduce\) at the end$/m,
         '--no-allreduce: the report says the weights were not combined');
    like($out, qr/^  step         = [\d.]+ (?:us|ms|s), the median of 27 intervals between step starts,\n {17}after the warm-up$/m,
         '--no-allreduce: the report prints the median step');
    unlike($out, qr/% hidden/, '--no-allreduce: no fraction hidden printed');
}

# The chapter's hidden fraction, from the runs the build kept: the medians
# of each configuration's runs, and (blocking - overlapped) / (blocking -
# compute), or no fraction at all when the communication is within the
# spread of the runs.
{
    my $data = root() . '/build/data';
    my %m = %{ read_macros(root() . '/build/numbers/07-dp.tex') };
    my $runs = $m{DpRepeats} // 0;
    cmp_ok($runs, '>=', 3, "the chapter times each configuration at least three times ($runs)");
    is($m{DpTwoBatch}, 2 * ($m{DpOneBatch} // 0),
       'weak scaling: two ranks take twice the batch of one');
    my %median;
    my %range;
    for my $config (qw(1 2 blocking compute)) {
        my @v;
        for my $k (1 .. $runs) {
            my $j = eval { decode_json(slurp("$data/07-dp-$config-$k.json") // '') };
            push @v, $j->{step_seconds_median} if $j;
        }
        is(scalar @v, $runs, "run $config: all $runs reports are there");
        if ($config =~ /^[12]$/) {
            my $j = eval { decode_json(slurp("$data/07-dp-$config-1.json") // '') } // {};
            my $steps = $j->{steps} // 0;
            is($m{DpTimedIntervals}, $steps - 1 - untimed($steps - 1),
               "run $config: the text's \\DpTimedIntervals, $steps - 1 intervals less the warm-up's");
            is($j->{step_intervals}, $m{DpTimedIntervals}, "run $config: ... is what it timed");
            my $batch = $config == 1 ? 'DpOneBatch' : 'DpTwoBatch';
            is($m{$batch}, $j->{batch}, "run $config: the text's \\$batch is its batch");
        }
        @v = sort { $a <=> $b } @v;
        $median{$config} = @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
        $range{$config} = $v[-1] - $v[0];
    }
    macro_agrees(\%m, 'DpOneMs', 1e3 * $median{1}, 'one rank: the median step');
    macro_agrees(\%m, 'DpTwoMs', 1e3 * $median{2}, 'overlapped: the median step');
    macro_agrees(\%m, 'DpBlockingMs', 1e3 * $median{blocking}, 'blocking: the median step');
    macro_agrees(\%m, 'DpComputeMs', 1e3 * $median{compute}, 'compute alone: the median step');
    my $comm = $median{blocking} - $median{compute};
    my $saved = $median{blocking} - $median{2};
    my $noise = (sort { $b <=> $a } @range{qw(2 blocking compute)})[0];
    macro_agrees(\%m, 'DpCommMs', 1e3 * $comm, 'the communication: blocking - compute');
    macro_agrees(\%m, 'DpNoiseMs', 1e3 * $noise, 'the spread: the widest range of the runs');
    macro_agrees(\%m, 'DpEfficiency', 100 * $median{1} / $median{2}, 'weak scaling: one step over the other');
    if ($comm > $noise) {
        macro_agrees(\%m, 'DpHidden', 100 * $saved / $comm,
                     'hidden = (blocking - overlapped) / (blocking - compute)');
        my $h = $saved / $comm;
        my $word = $h >= 0.5 ? 'most' : $h >= 0.1 ? 'part' : 'little or none';
        like($m{DpOverlapVerdict} // '', qr/it hid \Q$word\E of the communication/,
             "the verdict follows the fraction: $word");
    } else {
        is($m{DpHidden}, '--', 'within the spread: no fraction is printed');
        like($m{DpOverlapVerdict} // '', qr/cannot say how much/,
             'within the spread: the text says it cannot tell');
    }
    like($m{DpOverlapCompare} // '',
         $median{2} > $median{blocking} ? qr/slower than the blocking one, not faster/ : qr/faster than the blocking one by/,
         'the overlapped step is said to be slower than the blocking one exactly when it was');
    my $spread = $range{1} > $range{compute} ? $range{1} : $range{compute};
    like($m{DpSharing} // '',
         $median{compute} - $median{1} > $spread ? qr/already take/
                                                 : qr/within what the runs differ/,
         'two ranks without an all-reduce are called slower than one only beyond the spread');
    # What it means: the overlapped, blocking and compute-alone steps decide
    # whether overlap hid part of the all-reduce or none of it.
    my ($lost, $shared, $added) = ($median{2} - $median{1},
        $median{compute} - $median{1}, $median{2} - $median{compute});
    my $case = $lost <= $noise ? qr/no cost of the second rank/
             : $shared <= $noise && $added <= $noise
                 ? qr/runs cannot say which of the two cost it/
             : $shared <= $noise ? qr/what was lost is the all-reduce/
             : $added <= $noise ? qr/by sharing one machine: the all-reduce itself/
             : $saved > $noise ? qr/overlap did not hide, of the/
             : $median{2} > $median{blocking} + $noise ? qr/Overlap hid none.*cost \S+ more than waiting/
             : qr/Overlap hid none.*within the spread of the runs/;
    like($m{DpMeansScaling} // '', $case,
         'What it means follows the three step times: overlap hid part, or none');
}

# Bad layouts: one line, printed once, exit 2 on every rank, no hang.
for my $case ([2, 'without --dp', qr/--dp 1 disagrees with the 2 ranks/, ()],
              [2, '--dp 3 on 2 ranks', qr/--dp 3 disagrees/, qw(--dp 3)],
              [3, 'a batch that does not divide among 3 ranks',
               qr/--batch \(8\)/, qw(--dp 3)],
              [2, 'micro-batches that do not divide', qr/--micro-batches \(3\)/,
               qw(--dp 2 --micro-batches 3)],
              [2, 'an unknown all-reduce', qr/--allreduce: unknown/,
               qw(--dp 2 --allreduce tree)],
              [2, 'a bad flag', qr/--layers/, qw(--dp 2 --layers 0)],
              [2, 'a --log that cannot be written', qr/--log: cannot write/,
               qw(--dp 2 --log /nonexistent/dir/log.csv)],
              [2, '--no-allreduce with --verify', qr/--no-allreduce/,
               qw(--dp 2 --no-allreduce --verify)],
              [2, '--no-allreduce with --zero 1', qr/--no-allreduce/,
               qw(--dp 2 --no-allreduce --zero 1)]) {
    my ($n, $name, $pattern, @flags) = @$case;
    refused($name, $pattern, mpiexec($n, $minigpt, @tiny, @flags, '--steps', 2));
}

# A checkpoint that cannot be written stops every rank, not just the one
# that failed: here rank 1 fails to write its shard (the drill of
# --fail-shard-write).
{
    my $d = tempdir(CLEANUP => 1);
    refused('a failed save on two ranks', '--save',
            mpiexec(2, $minigpt, @tiny, qw(--dp 2 --steps 4 --save-every 2
                                           --quiet --fail-shard-write 1
                                           --save), "$d/ckpt"));
    is_deeply([grep { /tmp/ } files_in($d)], [],
              'a failed save on two ranks: no temporary file left');
}
done_testing();
