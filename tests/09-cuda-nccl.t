#!/usr/bin/perl
# Appendix "The CUDA backend", section "Collectives on the device":
# minigpt --device cuda with its collectives on the device (NCCL's; here
# the emulated backend's, MPI_Allreduce on the communicator's MPI_Comm),
# tested without a GPU through build/bin/minigpt-emulated. With
# --collectives nccl, --verify passes for --tp 2 in fp32 and bf16, --tp 4
# in fp32 and --tp 2 --dp 2 in bf16 (and in fp32 through auto), with the
# host path's tolerances; the collectives counted per block per
# micro-batch are the CPU trainer's; training on four ranks ends at the
# host path's losses, to 1e-5; auto takes the
# device on an axis whose ranks have a device each and the host where
# they share one (GPU_EMULATED_DEVICES); --collectives is refused where it
# cannot be had, without --device cuda, and with an unknown value; and two
# mutated copies of device.c (the f and g sums done as maxima, the tensor
# axis's all-reduce on the data axis's communicator) fail --verify on the
# device's path and pass on the host's. Where the build found nccl.h, the
# CUDA backend's object holds NCCL's part, and where nvcc is found,
# layers.cu compiles without it.
# Run after `make`:  prove -v tests/09-cuda-nccl.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use List::Util qw(max);
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
my $emulated = "$root/build/bin/minigpt-emulated";
ok(-x $emulated, 'build/bin/minigpt-emulated is built')
  or BAIL_OUT('run make first');
my %shape = (layers => 2, hidden => 32, heads => 4, seq => 16, vocab => 24);
my @tiny = (minigpt_flags(%shape), '--batch', 8);
my ($L, $C, $T) = @shape{qw(layers hidden seq)};
my @nccl = qw(--device cuda --collectives nccl);
my @host = qw(--device cuda --collectives host);

# ---- --verify on the device's collectives ----
# gpu_verify_ok: the tolerances of tests/09-cuda-tp.t. (--tp 2 --dp 2 in
# fp32 is auto's first case below.)
for my $case ([2, 'fp32'], [2, 'bf16'], [4, 'fp32'], [2, 'bf16', '--dp', 2]) {
    my ($t, $precision, @flags) = @$case;
    my $d = @flags ? 2 : 1;
    my $name = "--collectives nccl --tp $t @flags, $precision";
    my $r = eval {
        json_of(mpiexec($t * $d, $emulated, @tiny, @nccl, '--tp', $t,
                        @flags, '--verify', '--precision', $precision))
    };
    diag($@) unless $r;
    gpu_verify_ok($name, $r, $L);
    next unless $r;
    is($r->{tp_collectives}, 'nccl', "$name: the tensor axis's on the "
       . 'device');
    is($r->{dp_collectives}, $d > 1 ? 'nccl' : 'none',
       "$name: the data axis's " . ($d > 1 ? 'on the device' : 'none'));
}

# ---- the counts, and the losses of the host path ----
# Two steps on the device's collectives. They are counted per call, as a
# ring all-reduce of n numbers sends 2(t-1)/t·n of them, and must be the
# CPU trainer's, counted at MPI_Sendrecv: four all-reduces of b·s·h
# elements, 8bsh(t-1)/t elements' bytes (for --tp 4, the formula's, which
# tests/09-cuda-tp.t holds the CPU's to). On four tensor-parallel ranks
# the two paths add the same numbers in different orders, the ring in its
# own and MPI_Allreduce in MPICH's, so the losses after two steps agree to
# 1e-5 of their size, not exactly.
my @steps = qw(--steps 2 --quiet);
for my $t (2, 4) {
    my $name = "--tp $t";
    my $device = json_of(mpiexec($t, $emulated, @tiny, @nccl, '--tp', $t,
                                 @steps));
    tp_block_counts_ok($device, t => $t, bsh => 8 * $T * $C,
                       name => $name);
    if ($t == 2) {
        my $cpu = json_of(mpiexec($t, $minigpt, @tiny, '--tp', $t, @steps,
                                  '--eval-every', 1000, '--machine',
                                  "$root/build/machine.json"));
        same_tp_counts_ok($device, $cpu, $name);
        next;
    }
    my $host = json_of(mpiexec($t, $emulated, @tiny, @host, '--tp', $t,
                               @steps));
    my $largest = 0;
    for my $loss (qw(train_loss val_loss)) {
        my $difference = abs($device->{$loss} - $host->{$loss});
        $largest = max($largest, $difference / abs($host->{$loss}));
        close_to($device->{$loss}, $host->{$loss}, 1e-5,
                 "$name: the device's $loss is the host's ($difference "
                 . 'apart)');
    }
    note("$name: host and device paths, largest relative difference in "
         . "a loss $largest");
}

# ---- auto, axis by axis ----
# One device a rank: auto takes the device's collectives. Two ranks of the
# tensor axis on one device (GPU_EMULATED_DEVICES=1): the host's. Two
# devices for four ranks: the tensor axis's pairs have a device each, the
# data axis's share one.
for my $case ([undef, 'nccl', 'nccl'], [1, 'host', 'host'],
              [2, 'nccl', 'host']) {
    my ($devices, $tp, $dp) = @$case;
    local $ENV{GPU_EMULATED_DEVICES} = $devices if defined $devices;
    my $name = 'auto, ' . ($devices // 'one a rank') . ' devices';
    my $r = eval {
        json_of(mpiexec(4, $emulated, @tiny, qw(--device cuda --tp 2 --dp 2
                                                 --verify)))
    };
    diag($@) unless $r;
    gpu_verify_ok($name, $r, $L);
    is($r && $r->{tp_collectives}, $tp, "$name: the tensor axis's: $tp");
    is($r && $r->{dp_collectives}, $dp, "$name: the data axis's: $dp");
}

# ---- refusals, on every rank, in one line ----
{
    local $ENV{GPU_EMULATED_DEVICES} = 1;
    refused('nccl, two ranks on one device',
            qr/^minigpt: --collectives nccl: ranks of the tensor axis share a GPU/,
            mpiexec(2, $emulated, @tiny, @nccl, qw(--tp 2 --verify)));
}
refused('--collectives without --device', '--collectives',
        mpiexec(2, $minigpt, @tiny, qw(--tp 2 --collectives nccl --steps 1)));
refused('an unknown path', qr/--collectives: unknown "wire"/,
        mpiexec(2, $emulated, @tiny, qw(--device cuda --tp 2
                --collectives wire --verify)));

# ---- the checks can fail ----
# device.c compiled twice more, each with one mistake on the device's path
# only: the f and g operators' sums done as maxima, and the tensor axis's
# all-reduce done on the data axis's communicator. Each fails --verify on
# --tp 2 (the maxima) or --tp 2 --dp 2 (the data axis) with --collectives
# nccl, and passes with --collectives host, which does not run the
# mistaken line. (A maximum done as a sum, in the
# loss's first all-reduce, is not among them: the softmax is the same
# whatever number is subtracted from a row, so no check can see it.)
my $dir = tempdir(CLEANUP => 1);
my @recipe = link_recipe('build/bin/minigpt-emulated');
my @mutants = (
    ['f and g as maxima', qr/gpu_all_reduce\(g->tp_nccl, x, n, GPU_SUM\)/,
     'gpu_all_reduce(g->tp_nccl, x, n, GPU_MAX)'],
    ['f and g on the data axis',
     qr/gpu_all_reduce\(g->tp_nccl, x, n, GPU_SUM\)/,
     'gpu_all_reduce(g->dp_nccl, x, n, GPU_SUM)'],
);
for my $m (@mutants) {
    my ($mutant, $from, $to) = @$m;
    my $program = build_mutant({ recipe => \@recipe,
        target => 'build/bin/minigpt-emulated',
        object => 'build/obj/cuda/device.o', source => 'code/cuda/device.c',
        name => $mutant, from => $from, to => $to, dir => $dir });
    my @mesh = $mutant =~ /data axis/ ? qw(--tp 2 --dp 2) : qw(--tp 2);
    my $ranks = @mesh == 4 ? 4 : 2;
    my ($status, $out, $err) = run(mpiexec($ranks, $program, @tiny, @nccl,
                                           @mesh, '--verify'));
    is($status, 1, "$mutant: --collectives nccl @mesh --verify fails "
       . '(exit 1)') or diag($out . $err);
    like($out, qr/: FAIL$/m, "$mutant: and says FAIL");
    ($status, $out, $err) = run(mpiexec($ranks, $program, @tiny, @host, @mesh,
                                        '--verify'));
    is($status, 0, "$mutant: --collectives host still passes")
      or diag($out . $err);
}

# ---- NCCL's part of the CUDA backend ----
# Where the build found nccl.h, make compiled layers.cu with it (its object
# up to date: tests/09-cuda.t), and the object names the library it loads
# and the functions it looks up there. Without nccl.h (GPU_NCCL not
# defined) layers.cu compiles too, with make's own nvcc line otherwise.
my %build = `make -s -C $root --no-print-directory cuda-backend`
  =~ /^(CUDA|NCCL)=(.*)$/mg;
SKIP: {
    skip('no CUDA toolkit: this build has no CUDA backend', 4)
      unless $build{CUDA};
    my (undef, $make) = run('make', '-n', '-B', '-C', $root,
                            '--no-print-directory', 'build/obj/cuda/layers.o');
    my ($line) = grep { /nvcc.* -c code\/cuda\/layers\.cu / } split /\n/, $make;
    ok(defined $line, 'make\'s nvcc line for layers.cu') or diag($make);
    my $dir = tempdir(CLEANUP => 1);
    (my $without = $line // '') =~ s/ -DGPU_NCCL\b//;
    $without =~ s{-o \S+$}{-o '$dir/layers.o'};
    my ($status, undef, $err) = run('sh', '-c', "cd $root && $without");
    is($status, 0, 'layers.cu compiles without nccl.h\'s part') or diag($err);
    skip('nccl.h was not found: the collectives go through host copies', 2)
      unless $build{NCCL};
    my $object = slurp("$root/build/obj/cuda/layers.o") // '';
    like($object, qr/libnccl\.so\.\d/, 'layers.o loads libnccl.so');
    ok(!grep({ index($object, $_) < 0 } qw(ncclGetUniqueId ncclCommInitRank
            ncclAllReduce ncclCommDestroy ncclGetErrorString)),
       'and looks up the five functions it calls');
}
done_testing();
