#!/usr/bin/perl
# Chapter 8: minigpt --zero 1|2|3. Every stage agrees with the single-process
# reference (gradient and one optimizer step) on 1, 2, 3 and 4 ranks; trains
# to the loss plain data parallelism reaches; writes and reads the checkpoint
# any layout writes and reads; holds, per rank, the bytes the
# shard sizes say; sends, per step, the bytes the ring's chunks say; and
# refuses what it cannot do with one line and exit status 2.
#
# The expected bytes are recomputed here from the model's shape: the units
# (embeddings, each block, final norm and head), each cut into the ring's
# chunks, floor(U r / n) to floor(U (r + 1) / n), of which rank r owns one.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use List::Util qw(max sum);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
my %shape = (layers => 2, hidden => 32, heads => 4, seq => 16, vocab => 24);
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @tiny = (minigpt_flags(%shape), '--batch', 12,
            '--machine', root() . '/build/machine.json');
my $word = 4;                                     # bytes of a real (fp32)

# The units' sizes, in the order the program cuts them.
my ($L, $C, $T, $V) = @shape{qw(layers hidden seq vocab)};
my @units = ($V * $C + $T * $C, (12 * $C * $C + 13 * $C) x $L, 2 * $C + $C * $V);
my $N = sum(@units);

sub chunk { my ($U, $n, $r) = @_; int($U * ($r + 1) / $n) - int($U * $r / $n) }
sub shard { my ($n, $r) = @_; sum(map { chunk($_, $n, $r) } @units) }
# What rank r sends around the ring for every unit in @u: a reduce-scatter
# sends every chunk but its own, r; an all-gather every chunk but r + 1, the
# last to reach it.
sub scatter_sends { my ($n, $r, @u) = @_; sum(map { $_ - chunk($_, $n, $r) } @u) }
sub gather_sends {
    my ($n, $r, @u) = @_;
    sum(map { $_ - chunk($_, $n, ($r + 1) % $n) } @u);
}

sub verify_run {
    my ($n, @flags) = @_;
    return run(mpiexec($n, $minigpt, @tiny, '--dp', $n, '--verify', @flags));
}

# --verify: every stage, on 1 to 4 ranks, with and without micro-batches.
for my $case ([1, 1], [2, 1], [2, 2], [2, 3], [3, 3], [4, 3], [4, 2],
              [2, 1, 3], [2, 2, 3], [2, 3, 3], [4, 3, 3]) {
    my ($n, $stage, $micro) = @$case;
    my @flags = ('--zero', $stage, defined $micro ? ('--micro-batches', $micro) : ());
    my $name = "verify, $n " . ($n == 1 ? 'rank' : 'ranks') . " @flags";
    my ($status, $out, $err) = verify_run($n, @flags);
    is($status, 0, "$name: exit 0") or diag $err;
    # The gradients of this model are below 1.
    verify_ok($name, $out, grad => 1);
    like($out, qr/^verify: ZeRO stage $stage shards /m, "$name: names the stage");
}

# The same verdict in JSON, and the readable one in the transcript.
{
    my $dir = tempdir(CLEANUP => 1);
    my ($status, $out) = verify_run(2, qw(--zero 3 --json --transcript),
                                    "$dir/verify.txt");
    is($status, 0, 'verify --json, stage 3: exit 0');
    verify_ok('verify --transcript', slurp("$dir/verify.txt"), grad => 1);
    my $j = decode_json($out);
    is($j->{result}, 'OK', 'verify --json, stage 3: result OK');
    is($j->{zero_stage}, 3, 'verify --json: zero_stage');
    ok(exists $j->{max_dweight}, 'verify --json: max_dweight');
}

# Training: each stage on two ranks learns what plain data parallelism
# learns, up to rounding, and says whether the ranks hold the same weights.
my @train = (@tiny, qw(--steps 30 --eval-every 1000 --quiet --json));
my %trained;
for my $stage (0 .. 3) {
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, @train, '--dp', 2, '--zero', $stage));
    is($status, 0, "training, stage $stage on 2 ranks: exit 0") or diag $err;
    $trained{$stage} = eval { decode_json($out) } || {};
}
for my $stage (1 .. 3) {
    my ($a, $b) = ($trained{0}{val_loss} // 0, $trained{$stage}{val_loss} // 9);
    cmp_ok(abs($a - $b), '<', 1e-6,
           "stage $stage reaches stage 0's validation loss ($b vs $a)");
    cmp_ok($b, '<', 0.9 * log($V), "stage $stage learned: $b below 0.9 ln V");
}
is($trained{$_}{weights_identical}, 1, "stage $_: identical weights on every rank")
    for 0 .. 2;
is($trained{3}{weights_identical}, -1, 'stage 3: no rank holds all the weights');

# Checkpoints: each rank of a sharded run writes its shard, and any layout
# reads the pieces it needs. Resuming a checkpoint at its last step does no
# training and writes it again; resharded onto one process, each is byte
# for byte the one the first layout wrote, resharded likewise, if nothing
# was lost on the way.
{
    my $dir = tempdir(CLEANUP => 1);
    my @short = (@tiny, qw(--steps 20 --eval-every 1000 --quiet));
    my @layouts = ([2, 3], [1, 0], [4, 3], [4, 2], [3, 1], [3, 3], [2, 0]);
    my ($n0, $z0) = @{ $layouts[0] };
    my ($status, undef, $err) = run(mpiexec($n0, $minigpt, @short,
        '--dp', $n0, '--zero', $z0, '--save-every', 10, '--save', "$dir/a.ckpt"));
    is($status, 0, "stage $z0 on $n0 ranks saves a checkpoint") or diag $err;
    my $on_one = sub {            # the checkpoint, resharded onto one
        my ($ckpt) = @_;
        run($minigpt, @short, '--resume', $ckpt, '--save', "$ckpt.one");
        return "$ckpt.one";
    };
    my $first = $on_one->("$dir/a.ckpt");
    my $previous = "$dir/a.ckpt";
    for my $i (1 .. $#layouts) {
        my ($n, $z) = @{ $layouts[$i] };
        my $next = "$dir/$i.ckpt";
        ($status, undef, $err) = run(mpiexec($n, $minigpt, @short,
            '--dp', $n, '--zero', $z, '--resume', $previous, '--save', $next));
        is($status, 0, "stage $z on $n ranks resumes it and saves") or diag $err;
        is(scalar(grep { /\.shard$/ } files_in($next)), $n,
           "stage $z on $n ranks: a shard per rank");
        same_checkpoints($on_one->($next), $first,
                         "stage $z on $n ranks: the same state, byte for byte");
        $previous = $next;
    }
    # Training on from it, sharded or not, reaches the same loss (its
    # 20-step schedule lengthened to 30, which must be said to be meant).
    my @on = (@tiny, qw(--steps 30 --eval-every 1000 --quiet --json
                        --allow-schedule-change --resume), "$dir/a.ckpt");
    my ($s1, $one) = run($minigpt, @on);
    my ($s3, $three) = run(mpiexec(2, $minigpt, @on, qw(--dp 2 --zero 3)));
    is($s1 + $s3, 0, 'one process and stage 3 on two ranks both resume');
    my ($l1, $l3) = map { decode_json($_)->{val_loss} } $one, $three;
    cmp_ok(abs($l1 - $l3), '<', 1e-4, "and reach the same loss ($l1, $l3)");
    refused('a missing checkpoint', '--resume',
            mpiexec(2, $minigpt, @short, qw(--dp 2 --zero 2 --resume),
                    "$dir/missing.ckpt"));
}

# Bytes held and sent, against the shard sizes and the formula: every stage,
# on 1, 2, 3 and 4 ranks (3 does not divide the units evenly), and with two
# micro-batches on 2 ranks.
for my $case ((map { my $n = $_; map { [$n, $_, 1] } 1 .. 3 } 1 .. 4),
              [2, 2, 2], [2, 3, 2], [2, 1, 2], [3, 0, 1], [4, 0, 1]) {
    my ($n, $stage, $micro) = @$case;
    my @flags = ('--dp', $n, '--zero', $stage, '--micro-batches', $micro,
                 $stage == 0 ? qw(--allreduce ring) : ());
    my $name = "stage $stage, $n " . ($n == 1 ? 'rank' : 'ranks')
             . ", $micro micro-" . ($micro == 1 ? 'batch' : 'batches');
    my ($status, $out, $err) = run(mpiexec($n, $minigpt, @tiny,
        qw(--steps 2 --eval-every 1000 --quiet --json), @flags));
    is($status, 0, "$name: exit 0") or diag $err;
    my $j = eval { decode_json($out) } || {};
    is($j->{params}, $N, "$name: $N parameters, as the units add up");
    is($j->{zero_stage}, $stage, "$name: zero_stage");
    my $largest = max(@units);
    is($j->{largest_unit_params}, $stage > 0 ? $largest : 0, "$name: largest unit")
        if $stage > 0;
    # The most any rank holds: its shard, where the stage shards a kind.
    my $most = max(map { shard($n, $_) } 0 .. $n - 1);
    is($j->{weight_bytes_held}, $word * ($stage == 3 ? $most : $N), "$name: weights held");
    is($j->{gradient_bytes_held}, $word * ($stage >= 2 ? $most : $N), "$name: gradients held");
    is($j->{optimizer_bytes_held}, 2 * $word * ($stage >= 1 ? $most : $N),
       "$name: optimizer state held");
    my $buffers = $stage == 0 ? int($N / $n) + 1
                : ($stage == 3 ? 2 : 1) * $largest + int($largest / $n) + 1;
    is($j->{buffer_bytes_held}, $word * $buffers, "$name: buffers held");
    # The formula, and how far the shard sizes may stray from it.
    my %div = (weight => $stage == 3, gradient => $stage >= 2, optimizer => $stage >= 1);
    my %per = (weight => 1, gradient => 1, optimizer => 2);
    for my $kind (sort keys %div) {
        my $formula = $per{$kind} * $word * $N / ($div{$kind} ? $n : 1);
        ok(abs($j->{"${kind}_bytes_formula"} - $formula) < 1e-6 * $formula,
           "$name: $kind formula");
        cmp_ok(abs($j->{"${kind}_bytes_held"} - $formula), '<=',
               $per{$kind} * $word * scalar(@units),
               "$name: $kind held within a number per unit of the formula");
    }
    # Sent per step: the most any rank sent, collective by collective.
    my @sent;
    for my $r (0 .. $n - 1) {
        my $scatter = scatter_sends($n, $r, @units);
        my $gather = gather_sends($n, $r, @units);
        my $backward = gather_sends($n, $r, @units[1 .. $#units]);  # no embeddings
        push @sent, $word * ($stage == 0 ? scatter_sends($n, $r, $N)
                                           + gather_sends($n, $r, $N)
                           : $stage == 1 ? $scatter + $gather
                           : $stage == 2 ? $micro * $scatter + $gather
                           : $micro * ($scatter + $gather + $backward));
    }
    is($j->{sends_counted}, 1, "$name: the sends were counted");
    is($j->{bytes_sent_per_step}, max(@sent), "$name: bytes sent per step, "
       . "to the byte") if $n > 1;
    is($j->{bytes_sent_per_step}, 0, "$name: one rank sends nothing") if $n == 1;
    my $copies = $stage == 3 ? 3 * $micro : $stage == 2 ? $micro + 1 : 2;
    my $formula = $copies * $word * $N * ($n - 1) / $n;
    ok(abs($j->{bytes_sent_formula} - $formula) <= 1e-6 * $formula + 1e-9,
       "$name: the formula is $copies Ψ × (n-1)/n");
}

# Stage 0 with MPICH's own all-reduce sends nothing through MPI_Sendrecv,
# and says that it did not count.
{
    my ($status, $out) = run(mpiexec(2, $minigpt, @tiny,
        qw(--steps 2 --eval-every 1000 --quiet --json --dp 2)));
    is($status, 0, 'stage 0 with MPICH: exit 0');
    is(decode_json($out)->{sends_counted}, 0, 'stage 0 with MPICH: not counted');
}

# The readable report: a row per rank, and the formula row.
{
    my ($status, $out) = run(mpiexec(3, $minigpt, @tiny,
        qw(--steps 2 --eval-every 1000 --quiet --dp 3 --zero 2)));
    is($status, 0, 'stage 2 on 3 ranks, readable: exit 0');
    like($out, qr/^sharded state  = ZeRO stage 2 over 3 ranks/m, 'the heading');
    my @rows = $out =~ /^  rank (\d+) /mg;
    is_deeply(\@rows, [0, 1, 2], 'a row for every rank');
    like($out, qr/^  formula /m, 'the formula row');
    like($out, qr/sent per step = [\d,]+ B counted at MPI_Sendrecv/, 'bytes sent');
}

# Refusals: one line from rank 0, exit 2 on every rank, nothing on stdout.
for my $case ([2, 'an unknown stage', qr/--zero must be 0, 1, 2 or 3; got "4"/, qw(--zero 4)],
              [2, 'a stage that is not a number', qr/--zero must be/, qw(--zero one)],
              [2, '--allreduce with a sharded stage', qr/--allreduce and --no-overlap/,
               qw(--zero 1 --allreduce ring)],
              [2, '--no-overlap with a sharded stage', qr/--allreduce and --no-overlap/,
               qw(--zero 2 --no-overlap)],
              [1, '--gradcheck with a sharded stage', qr/--gradcheck perturbs/,
               qw(--zero 1 --gradcheck)]) {
    my ($n, $name, $pattern, @flags) = @$case;
    refused($name, $pattern,
            mpiexec($n, $minigpt, @tiny, '--dp', $n, '--steps', 2, @flags));
}
{
    refused('minigpt-fp64 --zero 1', qr/single-precision ring/,
            $fp64, @tiny, qw(--steps 2 --zero 1));
}

# The chapter's words about the build's own stage-3 run: the largest unit's
# share of the model, and whether the shards held any rounding.
{
    my $m = read_macros(root() . '/build/numbers/08-zero-minigpt.tex');
    my $ranks = $m->{MgZeroRanks} // 0;
    my $file = root() . "/build/data/08-zero-minigpt-3-$ranks.json";
    my $run = -s $file ? decode_json(slurp($file)) : {};
    ok($ranks > 1 && $run->{ranks} && $run->{ranks} == $ranks,
       "the chapter's stage-3 run is on \\MgZeroRanks ($ranks) ranks");
    macro_agrees($m, 'MgZeroUnitShare',
                 100 * ($run->{largest_unit_params} // 0)
                     / ($run->{params} || 1),
                 'the largest unit as a share of the model');
    my $exact = !grep { $run->{"${_}_bytes_held"} != $run->{"${_}_bytes_formula"} }
                grep { defined $run->{"${_}_bytes_held"} }
                qw(weight gradient optimizer);
    is(($m->{MgZeroRounding} // '') =~ /^here none/ ? 1 : 0, $exact ? 1 : 0,
       'the text says no rounding exactly when the shards held none');
}
done_testing();
