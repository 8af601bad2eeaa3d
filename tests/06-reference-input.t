#!/usr/bin/perl
# Chapter 6: bad input to minigpt, minigpt-fp64 and matmul-bench. A bad value,
# a combination of flags that cannot work, or a size that cannot fit gets one
# line on stderr that names the flag, exit status 2, nothing on stdout and no
# output file, before any training starts; a path that cannot be written gets
# the same kind of line when it is written. --help lists every flag.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
my $bench = root() . '/build/bin/matmul-bench';
ok(-x $_, "$_ is built") or BAIL_OUT("no $_") for $minigpt, $fp64, $bench;

# ----------------------------------------------------------- bad values --
my @counts = qw(--layers --hidden --heads --seq --batch --vocab --steps
                --seed --micro-batches --eval-every --save-every);
my @values = ('abc', '-1', '0', '1e30', '2.5', '', '1e400', 'nan', '12x');
for my $binary ($minigpt, $fp64) {
    my $tool = $binary eq $fp64 ? 'minigpt-fp64' : 'minigpt';
    for my $flag (@counts) {
        for my $value (@values) {
            # --save-every is checked with --save, so that only its value is wrong.
            my @extra = $flag eq '--save-every' ? ('--save', '/nonexistent/never.ckpt') : ();
            refused_no_output("$tool $flag '$value'", qr/^minigpt: \Q$flag\E\b/, $binary,
                    $flag, $value, @extra);
        }
        last if $binary eq $fp64 && $flag eq '--hidden';   # the twin shares the table
    }
}
# The learning rate is a real number in (0, 1].
for my $value ('abc', '-1', '0', '1e30', '2.5', '', 'inf') {
    refused_no_output("minigpt --lr '$value'", qr/^minigpt: --lr\b/, $minigpt, '--lr', $value);
}
# Values out of range that look reasonable.
refused_no_output('--vocab 100000', qr/--vocab/, $minigpt, qw(--vocab 100000));
refused_no_output('--hidden 8192', qr/--hidden/, $minigpt, qw(--hidden 8192));
refused_no_output('--layers 65', qr/--layers/, $minigpt, qw(--layers 65));
refused_no_output('--sample 0', qr/--sample/, $minigpt, qw(--sample 0));
refused_no_output('--sample 2e6', qr/--sample/, $minigpt, qw(--sample 2e6));

# A flag with no value, twice, unknown, or a switch given a value.
for my $flag (@counts, qw(--lr --save --resume --log --profile --transcript --output)) {
    refused("$flag with no value", qr/^minigpt: \Q$flag\E needs a value$/,
            $minigpt, $flag);
}
refused_no_output('--layers twice', qr/--layers given twice/, $minigpt, qw(--layers 2 --layers 3));
refused_no_output('an unknown flag', qr/unknown flag --widht/, $minigpt, qw(--widht 64));
refused_no_output('a stray word', qr/flags start with --/, $minigpt, qw(train));
refused_no_output('--verify takes no value', qr/--verify/, $minigpt, '--verify=1');
refused_no_output('two report formats', qr/--json/, $minigpt, qw(--json --csv));
refused_no_output('an empty --save', qr/--save/, $minigpt, '--save', '');

# ---------------------------------------------------- flags that clash --
refused_no_output('--heads not dividing --hidden', qr/--heads.*--hidden/, $minigpt,
                  qw(--heads 3 --hidden 16));
refused_no_output('more heads than width', qr/--heads.*--hidden/, $minigpt,
                  qw(--heads 64 --hidden 32));
refused_no_output('--vocab 4', qr/--vocab/, $minigpt, qw(--vocab 4));
refused_no_output('--vocab 7', qr/--vocab/, $minigpt, qw(--vocab 7));
refused_no_output('--micro-batches not dividing --batch', qr/--micro-batches.*--batch/,
                  $minigpt, qw(--batch 6 --micro-batches 4));
refused_no_output('--micro-batches above --batch', qr/--micro-batches.*--batch/,
                  $minigpt, qw(--batch 2 --micro-batches 4));
refused_no_output('--micro-batches not dividing --batch, with --verify', qr/--micro-batches/,
                  $minigpt, qw(--verify --batch 6 --micro-batches 4));
refused_no_output('--save-every without --save', qr/--save-every/, $minigpt,
                  qw(--save-every 10));
refused_no_output('activations that cannot fit', qr/--batch.*--seq.*--hidden/, $minigpt,
                  qw(--batch 4096 --seq 4096 --hidden 4096));
refused_no_output('activations that cannot fit (fp64)', qr/--batch.*--seq.*--hidden/, $fp64,
                  qw(--batch 4096 --seq 4096 --hidden 4096));
refused_no_output('a long context', qr/--seq/, $minigpt, qw(--batch 512 --seq 4096 --heads 64 --hidden 4096));

# A model whose parameters cannot fit. The activations of --layers 64
# --hidden 4096 at the default batch pass the 16 GB check, but the weights,
# gradients and Adam state are 64·12·4096² × 16 B ≈ 206 GB. Run under a
# 4 GB address-space limit so the test is safe on any machine.
{
    my $dir = tempdir(CLEANUP => 1);
    for my $case ([qw(--layers 64 --hidden 4096 --heads 32)],
                  [qw(--vocab 65536 --hidden 4096 --layers 8 --heads 32 --seq 8 --batch 1)]) {
        my $command = join ' ', map { "'$_'" } $minigpt, @$case, qw(--steps 1 --quiet),
                                '--output', "$dir/out.txt";
        refused("@$case", qr/--layers|--hidden|--vocab/,
                'sh', '-c', "ulimit -c 0; exec $command");
        is_deeply([files_in($dir)], [], "@$case: no output file");
    }
}

# Paths that cannot be written: refused with one line that names the flag.
# (all are checked before training starts.)
{
    my @tiny = qw(--layers 1 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16
                  --steps 2 --quiet);
    for my $flag (qw(--log --save --profile --transcript --output)) {
        my $err = refused("unwritable $flag", $flag,
                          $minigpt, @tiny, $flag, '/nonexistent/dir/file');
        like($err, qr{/nonexistent/dir/file}, "unwritable $flag: names the path");
    }
}

# matmul-bench shares the flag parser; its sizes, too, must be refused.
refused_no_output('matmul-bench --hidden abc', qr/^matmul-bench: --hidden\b/, $bench, qw(--hidden abc));
refused_no_output('matmul-bench --seconds 0', qr/^matmul-bench: --seconds\b/, $bench, qw(--seconds 0));
refused_no_output('matmul-bench --seconds 1e9', qr/^matmul-bench: --seconds\b/, $bench, qw(--seconds 1e9));
refused_no_output('matmul-bench --batch 2.5', qr/^matmul-bench: --batch\b/, $bench, qw(--batch 2.5));
refused_no_output('matmul-bench --vocab -1', qr/^matmul-bench: --vocab\b/, $bench, qw(--vocab -1));
refused_no_output('matmul-bench --layers', qr/unknown flag --layers/, $bench, qw(--layers 2));
{
    my $dir = tempdir(CLEANUP => 1);
    my $command = join ' ', map { "'$_'" } $bench, qw(--batch 4096 --seq 4096
                  --hidden 4096 --seconds 0.01), '--output', "$dir/out.txt";
    refused('matmul-bench at absurd sizes', qr/--(batch|seq|hidden)/,
            'sh', '-c', "ulimit -c 0; exec $command");
    is_deeply([files_in($dir)], [], 'matmul-bench at absurd sizes: no output file');
}

# ---------------------------------------------------------------- help --
my %flags = (
    minigpt => [qw(--layers --hidden --heads --seq --batch --vocab --steps --lr
                   --seed --micro-batches --eval-every --save --save-every
                   --resume --log --profile --machine --transcript --gradcheck --verify
                   --quiet --dump --keep-checkpoints --allow-schedule-change
                   --fail-shard-write --async-save --fault-at-step --fault-rank
                   --sample --tp --pp --dp --print-mesh --allreduce --no-overlap --no-allreduce --zero --sequence-parallel --json --csv --latex
                   --device --precision --collectives --schedule --chunks --trace --bucket-mb
                   --fp32-grads --loss-scale --loss-scale-window --no-loss-scaling
                   --grad-histogram
                   --output --help)],
    'matmul-bench' => [qw(--batch --seq --hidden --vocab --seconds --repeats
                          --machine --transcript --shards --heads --max-tp
                          --scale-to --json --csv --latex --output
                          --help)],
    machine => [qw(--repeats --seconds --gemm-m --gemm-n --gemm-k --memcpy-bytes
                   --latency-bytes --bandwidth-bytes --output --latex
                   --latex-output --transcript --help)],
);
for my $binary ($minigpt, $fp64, $bench, root() . "/build/bin/machine") {
    (my $tool = $binary) =~ s{.*/}{};
    my $name = $tool eq 'minigpt-fp64' ? 'minigpt' : $tool;
    my ($status, $help, $err) = run($binary, '--help');
    is($status, 0, "$tool --help exits 0");
    is($err, '', "$tool --help: nothing on stderr");
    like($help, qr/^usage: $name \[flags\]$/m, "$tool --help: usage line");
    my @listed = $help =~ /^  (--[\w-]+)/mg;
    is_deeply([sort @listed], [sort @{ $flags{$name} }], "$tool --help lists every flag")
      or diag "listed: @listed";
    for my $flag (@listed) {
        my ($line) = $help =~ /^  \Q$flag\E\b(.*)$/m;
        like($line, qr/\S{3}/, "$tool --help: $flag has a description");
        # Each listed flag is accepted: a valued flag alone asks for its
        # value; a switch parses, and --help then stops the run.
        next if $flag eq '--help';
        if ($line =~ /^ (N|NAME) /) {
            my ($s, $o, $e) = run($binary, $flag);
            like($e, qr/^$name: \Q$flag\E needs a value\n\z/, "$tool accepts $flag (it wants a value)");
        } else {
            my ($s, $o, $e) = run($binary, $flag, '--help');
            is($s, 0, "$tool accepts the switch $flag");
            is($o, $help, "$tool $flag --help prints the help");
        }
    }
}

done_testing();
