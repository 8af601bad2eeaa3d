#!/usr/bin/perl
# Appendix "The CUDA backend", tested as far as a machine without a GPU
# allows. The per-element arithmetic that the CPU layers and the CUDA
# kernels share (code/minigpt/elementwise.h) is checked against formulas in
# double precision, compiled by the C compiler and, where nvcc is found, by
# nvcc as host code. Where nvcc is found the CUDA sources compile, the GPU
# programs are built, and each one, finding no GPU, says so in one line and
# exits 2: the GPU runs are then reported skipped, never passed; the check
# program runs on the emulated backend in every build. Where a GPU
# is found they must pass. Bad flags are refused in one line, once for all
# ranks. Where nvcc or the toolkit's libraries are not found, minigpt
# --device cuda says this build has no CUDA backend. Run after `make`:  prove -v tests/09-cuda.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
ok(-x $minigpt, 'build/bin/minigpt is built') or BAIL_OUT('run make first');
my $dir = tempdir(CLEANUP => 1);
# What the build decided: nvcc compiles host code wherever it is found; the
# backend is linked only where the toolkit's libraries were found too.
my %build = `make -s -C $root --no-print-directory cuda-backend`
  =~ /^(CUDA|NVCC)=(.*)$/mg;
my $nvcc = $build{NVCC};
my $backend = $build{CUDA};
ok(defined $build{CUDA} && defined $build{NVCC},
   'make cuda-backend says what the build found');

# ---- the shared arithmetic, on the CPU ----
my %tolerance = (
    gelu => 1e-5, gelu_gradient => 1e-5, layernorm_rstd => 1e-6,
    layernorm_normalise => 1e-6, layernorm_input_gradient => 1e-5,
    softmax_exp => 1e-6, softmax_gradient => 1e-5,
    crossentropy_gradient => 1e-7, adamw_element => 1e-6,
);
my $source = "$root/code/cuda/elementwise-test.c";
my @compilers = (['gcc', 'gcc', '-std=c11', '-D_DEFAULT_SOURCE', '-Wall',
                  '-Wextra', '-Werror', '-Wshadow', "-I$root/code/minigpt",
                  $source, '-lm']);
if ($backend) {
    system('cp', $source, "$dir/elementwise-test.cu") == 0 or die "cp: $!";
    push @compilers, ['nvcc', $nvcc, '-std=c++17', "-I$root/code/minigpt",
                      '-Xcompiler', '-Wall,-Wextra,-Werror',
                      "$dir/elementwise-test.cu"];
}
for my $c (@compilers) {
    my ($name, @command) = @$c;
    my ($status, $out, $err) = run(@command, '-o', "$dir/elementwise-$name");
    is($status, 0, "$name compiles the shared arithmetic") or diag($err);
    ($status, $out, $err) = run("$dir/elementwise-$name");
    is($status, 0, "$name: the test program runs") or diag($err);
    my %error = $out =~ /^(\w+) (\S+)$/mg;
    is_deeply([sort keys %error], [sort keys %tolerance],
              "$name: every shared function is checked");
    for my $f (sort keys %tolerance) {
        ok(defined $error{$f} && $error{$f} <= $tolerance{$f},
           "$name: $f within $tolerance{$f} of the formula in double")
          or diag("error: " . ($error{$f} // 'none'));
    }
}

# ---- the GPU model's code, on the CPU's layers ----
my $emulated = "$root/build/bin/minigpt-emulated";
ok(-x $emulated, 'build/bin/minigpt-emulated is built');
{
    my ($status, $out, $err) = run($emulated, '--device', 'cuda', '--verify');
    is($status, 0, 'emulated fp32 --verify passes') or diag($out . $err);
    like($out, qr/max \|dloss\| = 0, max \|dgrad\| = 0$/m,
         'emulated fp32: the same functions give the same loss and gradient');
    for my $micro (1, 2) {
        my $r = json_of($emulated, '--device', 'cuda', '--verify',
                        '--precision', 'bf16', '--micro-batches', $micro);
        is($r->{result}, 'OK', "emulated bf16 --verify, $micro micro-batches");
        ok($r->{relative_dgrad_norm} > 0,
           'emulated bf16: the rounding changed the gradient');
        ok($r->{relative_dgrad_norm} <= $r->{grad_tolerance}
           && $r->{relative_dloss} <= $r->{loss_tolerance},
           'emulated bf16: within the stated tolerances');
        close_to($r->{grad_tolerance}, (8 * 2 + 3) * 2 / 256, 1e-12,
                 'gradient tolerance (8L + 3)·2u for L = 2');
    }
    my $r = json_of($emulated, '--device', 'cuda', '--steps', 20, '--quiet');
    ok($r->{train_loss} > 0 && $r->{train_loss} < 4 && $r->{val_loss} > 0,
       'emulated training runs and reports its losses');
}

# ---- the GPU check program's own code, on the CPU's layers ----
# gpu-check-layers linked with the emulated backend: each layer against
# itself (or the CPU's bf16 rounding), so that a mistake in the check
# program itself shows without a GPU.
{
    my ($status, $out, $err) = run("$root/build/bin/gpu-check-layers-emulated");
    is($status, 0, 'gpu-check-layers on the emulated backend: exit 0')
      or diag($out . $err);
    like($out, qr/^(\d+) of \1 checks within tolerance: OK$/m,
         'gpu-check-layers, emulated: every check within tolerance');
    like($out, qr/^vocab_shard_loss +loss /m,
         'gpu-check-layers, emulated: checks the split vocabulary\'s steps');
    like($out, qr/^all_reduce +sum .*: OK\nall_reduce +max .*: OK$/m,
         'gpu-check-layers, emulated: and the device\'s all-reduce, one rank');
}

# ---- refusals ----
if (!$backend) {
  SKIP: {
    skip('no CUDA toolkit with libcublas and libcudart: this build has no '
         . 'CUDA backend', 1);
  }
    refused('no backend', qr/this build has no CUDA backend/, $minigpt,
            '--device', 'cuda');
    done_testing();
    exit 0;
}
refused('unknown device', qr/--device: unknown "tpu"/, $minigpt,
        '--device', 'tpu');
refused('the CPU trainer\'s precision flags',
        qr/--device cuda takes --precision alone/, $minigpt, '--device',
        'cuda', '--precision', 'bf16', '--loss-scale', 8);
refused('unknown precision', qr/--precision: unknown "fp16"/, $minigpt,
        '--device', 'cuda', '--precision', 'fp16');
refused('save', qr/--save is not offered with --device cuda/, $minigpt,
        '--device', 'cuda', '--save', "$dir/state.bin");
refused('a pipeline', qr/--pp is not offered with --device cuda/,
        mpiexec(2, $minigpt, '--device', 'cuda', '--pp', 2));
refused('fp64 twin', qr/no CUDA backend \(it is double precision\)/,
        "$root/build/bin/minigpt-fp64", '--device', 'cuda');

# ---- the CUDA sources compile ----
# make compiled them with nvcc, warnings as errors; that its objects are up
# to date (make -q) says that the sources as they are now compiled, without
# compiling them a second time here.
for my $cu (qw(layers bench)) {
    my ($status, $out, $err) = run('make', '-q', '-C', $root,
                                   '--no-print-directory',
                                   "build/obj/cuda/$cu.o");
    is($status, 0, "nvcc compiled code/cuda/$cu.cu as it is now "
       . "(make's build/obj/cuda/$cu.o is up to date)") or diag($err);
}
for my $bin (qw(gpu-check-layers gpu-gemm-bench)) {
    ok(-x "$root/build/bin/$bin", "build/bin/$bin is built");
}
# cuBLAS is loaded when a device is opened, not at every start: no GPU
# program names it as a library it needs.
for my $bin (qw(minigpt gpu-check-layers gpu-gemm-bench)) {
    my ($status, $dynamic) = run('readelf', '-d', "$root/build/bin/$bin");
    is($status, 0, "readelf reads build/bin/$bin");
    like($dynamic, qr/\(NEEDED\).*libcudart/, "$bin is linked with the CUDA runtime");
    unlike($dynamic, qr/\(NEEDED\).*libcublas/, "$bin is not linked with cuBLAS");
}

# ---- on the GPU, if there is one ----
# The programs load cuBLAS before they look for a device, so "no CUDA
# device" also says that cuBLAS and the functions it is asked for were found.
my ($status, $out, $err) = run("$root/build/bin/gpu-check-layers");
if ($status == 2 && $err =~ /^gpu-check-layers: (no CUDA device: .*)$/) {
    my $why = $1;
    is(FleetTest::line_count($err), 1, 'no GPU: gpu-check-layers says so in one line');
    is($out, '', 'no GPU: and prints nothing else');
    refused('no GPU: minigpt', qr/--device cuda: no CUDA device/, $minigpt,
            '--device', 'cuda', '--verify');
    refused('no GPU: the benchmark', qr/no CUDA device/,
            "$root/build/bin/gpu-gemm-bench");
  SKIP: {
    skip("GPU runs: $why", 3);
  }
} else {
    is($status, 0, 'gpu-check-layers: every layer within tolerance')
      or diag($out . $err);
    like($out, qr/checks within tolerance: OK$/m, 'gpu-check-layers: OK');
    for my $precision (qw(fp32 bf16)) {
        ($status, $out, $err) = run($minigpt, '--device', 'cuda', '--verify',
                                    '--precision', $precision);
        is($status, 0, "--device cuda --verify --precision $precision")
          or diag($out . $err);
    }
}
done_testing();
