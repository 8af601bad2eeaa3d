#!/usr/bin/perl
# Appendix "The CUDA backend", section "Tensor parallelism on the GPU":
# minigpt --device cuda on a mesh of --tp × --dp ranks, tested without a GPU
# through build/bin/minigpt-emulated (the GPU model's code, device.c, on the
# CPU's layers), with every collective through MPI on host copies
# (--collectives host; tests/09-cuda-nccl.t runs the device's collectives).
# --verify compares the loss, the gathered gradients and the
# weights and moments after one step against the CPU reference for --tp 1,
# 2 and 4, with micro-batches and with --dp 2, in fp32 and in bf16; the
# collectives counted per block per micro-batch are the CPU trainer's; the
# flags a GPU run does not offer are refused on every rank in one line;
# and three mutated copies of device.c (a collective left out, the norm's
# replicated tensors counted on every rank, a replicated bias added on
# every rank) fail --verify.
# Where there is no GPU, the real --device cuda runs are reported skipped.
# Run after `make`:  prove -v tests/09-cuda-tp.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
my $emulated = "$root/build/bin/minigpt-emulated";
ok(-x $emulated, 'build/bin/minigpt-emulated is built')
  or BAIL_OUT('run make first');
my %shape = (layers => 2, hidden => 32, heads => 4, seq => 16, vocab => 24);
my @tiny = (minigpt_flags(%shape), '--batch', 8);
# The collectives through MPI on host copies, the path of ranks that share
# a GPU; tests/09-cuda-nccl.t runs the device's (NCCL's, emulated).
my @host = qw(--device cuda --collectives host);
my ($L, $C, $T) = @shape{qw(layers hidden seq)};

# ---- --verify against the CPU reference ----
# gpu_verify_ok: fp32 within the reference's own --verify tolerance; bf16
# within the stated (4L + 1)·2u and (8L + 3)·2u, and not zero.
for my $case ([1], [2], [4], [2, '--micro-batches', 2], [2, '--dp', 2],
              [1, '--dp', 2]) {
    my ($t, @flags) = @$case;
    my $ranks = grep({ $_ eq '--dp' } @flags) ? 2 * $t : $t;
    for my $precision (qw(fp32 bf16)) {
        my $name = "emulated --tp $t @flags, $precision";
        my $r = eval {
            json_of(mpiexec($ranks, $emulated, @tiny, @host,
                            '--tp', $t, @flags, '--verify', '--precision',
                            $precision))
        };
        diag($@) unless $r;
        gpu_verify_ok($name, $r, $L);
        next unless $r;
        is($r->{tp}, $t, "$name: reports tp $t");
        is($r->{dp}, $ranks / $t, "$name: reports dp " . $ranks / $t);
        is($r->{tp_collectives}, $t > 1 ? 'host' : 'none',
           "$name: the tensor axis's collectives on host copies");
    }
}
{
    my ($status, $out, $err) = run(mpiexec(4, $emulated, @tiny, @host,
                                           qw(--tp 2 --dp 2 --verify)));
    is($status, 0, 'emulated --tp 2 --dp 2 --verify: exit 0') or diag($err);
    like($out, qr/^verify: --tp 2 × --dp 2 on 4 ranks: each block split 2 ways, /m,
         'it names the mesh and the split');
    like($out, qr/: OK$/m, 'it prints OK, once')
      and is(() = $out =~ /^verify: tolerance/mg, 1, 'rank 0 alone prints');
}

# ---- what the collectives send, against the CPU trainer's ----
# Two steps on each side; per block per micro-batch, the GPU's passes call
# the CPU's f and g, so they count what the CPU's count: four all-reduces
# of b·s·h elements, 8bsh(t-1)/t elements' bytes by each rank.
for my $t (2, 4) {
    my @steps = ('--tp', $t, qw(--steps 2 --quiet));
    my $gpu = json_of(mpiexec($t, $emulated, @tiny, @host,
                              @steps));
    my $cpu = json_of(mpiexec($t, $minigpt, @tiny, @steps, '--eval-every',
                              1000, '--machine', "$root/build/machine.json"));
    tp_block_counts_ok($gpu, t => $t, name => "--tp $t",
                       bsh => 8 * $T * $C);   # one micro-batch of 8 rows
    same_tp_counts_ok($gpu, $cpu, "--tp $t");
}

# ---- training on a mesh is training on one rank ----
my @steps = qw(--steps 3 --quiet);
my $one = json_of($emulated, @tiny, @host, @steps);
{
    my $mesh = json_of(mpiexec(4, $emulated, @tiny, @host,
                               qw(--tp 2 --dp 2), @steps));
    close_to($mesh->{train_loss}, $one->{train_loss}, 1e-4,
             '--tp 2 --dp 2: the last training loss is one rank\'s');
    close_to($mesh->{val_loss}, $one->{val_loss}, 1e-4,
             '--tp 2 --dp 2: and so is the validation loss');
    is($one->{tp_collectives_per_block}, 0, 'one rank: no collectives');
}

# ---- refusals, on every rank, in one line ----
for my $program ($emulated, $minigpt) {
    my $which = $program eq $emulated ? 'emulated' : 'minigpt';
    refused("$which: a pipeline", qr/--pp is not offered with --device cuda/,
            mpiexec(2, $program, @tiny, qw(--device cuda --pp 2 --verify)));
    refused("$which: sequence parallelism",
            qr/--sequence-parallel is not offered with --device cuda/,
            mpiexec(2, $program, @tiny, qw(--device cuda --tp 2
                    --sequence-parallel --verify)));
    refused("$which: ZeRO", qr/--zero is not offered with --device cuda/,
            mpiexec(2, $program, @tiny, qw(--device cuda --dp 2 --zero 1
                    --verify)));
    refused("$which: --tp 3 and 4 heads", qr/--tp 3 does not divide --heads 4/,
            mpiexec(3, $program, @tiny, qw(--device cuda --tp 3 --verify)));
    refused("$which: a mesh that is not the ranks", '--tp',
            mpiexec(2, $program, @tiny, qw(--device cuda --tp 2 --dp 2
                    --verify)));
}

# ---- the checks can fail ----
# device.c compiled three times more, each time with one mistake (warnings
# not errors: a mistake can leave a variable unused), and linked as
# minigpt-emulated is. Without the f operator's all-reduce in a
# column-parallel layer's backward pass, and with the squares of the
# tensors every rank holds counted on every rank in the gradient's norm (so
# the first step, whose norm is above the clip of 1, is clipped harder),
# --verify fails on two ranks and passes on one, where neither mistake
# changes anything. With the row-parallel bias added on every rank of the
# group instead of once, the first gradient is right, since the initial
# biases are zero; --verify's second gradient, from the stepped weights,
# fails, and so would three steps of training on two ranks, which end
# away from one rank's loss.
my $dir = tempdir(CLEANUP => 1);
my @recipe = link_recipe('build/bin/minigpt-emulated');
my @mutants = (
    ['no f all-reduce',
     qr/^\s*tp_operator\(g, f_backward, din, \(size_t\)N \* C\);\n/m, ''],
    ['replicated squares on every rank',
     qr/if \(tp_counts_tensor\(m, t\)\)/, 'if (1)'],
    ['bias on every rank', qr/first \? bias : NULL/, 'bias'],
);
for my $m (@mutants) {
    my ($mutant, $from, $to) = @$m;
    my $program = build_mutant({ recipe => \@recipe,
        target => 'build/bin/minigpt-emulated',
        object => 'build/obj/cuda/device.o', source => 'code/cuda/device.c',
        name => $mutant, from => $from, to => $to, dir => $dir });
    my ($status, $out, $err) = run(mpiexec(2, $program, @tiny, @host,
                                           qw(--tp 2 --verify)));
    is($status, 1, "$mutant: --tp 2 --verify fails (exit 1)")
      or diag($out . $err);
    like($out, qr/: FAIL$/m, "$mutant: and says FAIL");
    ($status, $out, $err) = run($program, @tiny, @host, '--verify');
    is($status, 0, "$mutant: one rank still passes") or diag($out . $err);
}

# ---- on a GPU, if there is one ----
my %build = `make -s -C $root --no-print-directory cuda-backend`
  =~ /^(CUDA|NVCC)=(.*)$/mg;
SKIP: {
    skip('no CUDA toolkit: this build has no CUDA backend', 2)
      unless $build{CUDA};
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, '--device', 'cuda',
                                              qw(--tp 2 --verify)));
    if ($status == 2 && $err =~ /^minigpt: --device cuda: (no CUDA device: .*)$/) {
        my $why = $1;
        is(FleetTest::line_count($err), 1, 'no GPU: two ranks say so in one line');
        skip("GPU runs: $why", 1);
    }
    is($status, 0, '--device cuda --tp 2 --verify on the GPU')
      or diag($out . $err);
    ($status, $out, $err) = run(mpiexec(2, $minigpt, '--device', 'cuda',
                                        qw(--tp 2 --verify --precision bf16)));
    is($status, 0, '--device cuda --tp 2 --verify --precision bf16 on the GPU')
      or diag($out . $err);
}
done_testing();
