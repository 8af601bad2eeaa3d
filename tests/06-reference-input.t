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

# A refused command line: refused_run with the binary first.
sub refused {
    my ($name, $binary, $must, @args) = @_;
    return refused_run($name, $must, $binary, @args);
}

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
            refused("$tool $flag '$value'", $binary, qr/^minigpt: \Q$flag\E\b/,
                    $flag, $value, @extra);
        }
        last if $binary eq $fp64 && $flag eq '--hidden';   # the twin shares the table
    }
}
# The learning rate is a real number in (0, 1].
for my $value ('abc', '-1', '0', '1e30', '2.5', '', 'inf') {
    refused("minigpt --lr '$value'", $minigpt, qr/^minigpt: --lr\b/, '--lr', $value);
}
# Values out of range that look reasonable.
refused('--vocab 100000', $minigpt, qr/--vocab/, qw(--vocab 100000));
refused('--hidden 8192', $minigpt, qr/--hidden/, qw(--hidden 8192));
refused('--layers 65', $minigpt, qr/--layers/, qw(--layers 65));
refused('--sample 0', $minigpt, qr/--sample/, qw(--sample 0));
refused('--sample 2e6', $minigpt, qr/--sample/, qw(--sample 2e6));

# A flag with no value, twice, unknown, or a switch given a value.
for my $flag (@counts, qw(--lr --save --resume --log --profile --transcript --output)) {
    my ($status, $out, $err) = run($minigpt, $flag);
    is($status, 2, "$flag with no value: exit 2");
    like($err, qr/^minigpt: \Q$flag\E needs a value\n\z/, "$flag with no value: one line naming it");
}
refused('--layers twice', $minigpt, qr/--layers given twice/, qw(--layers 2 --layers 3));
refused('an unknown flag', $minigpt, qr/unknown flag --widht/, qw(--widht 64));
refused('a stray word', $minigpt, qr/flags start with --/, qw(train));
refused('--verify takes no value', $minigpt, qr/--verify/, '--verify=1');
refused('two report formats', $minigpt, qr/--json/, qw(--json --csv));
refused('an empty --save', $minigpt, qr/--save/, '--save', '');

# ---------------------------------------------------- flags that clash --
refused('--heads not dividing --hidden', $minigpt, qr/--heads.*--hidden/,
        qw(--heads 3 --hidden 16));
refused('more heads than width', $minigpt, qr/--heads.*--hidden/,
        qw(--heads 64 --hidden 32));
refused('--vocab 4', $minigpt, qr/--vocab/, qw(--vocab 4));
refused('--vocab 7', $minigpt, qr/--vocab/, qw(--vocab 7));
refused('--micro-batches not dividing --batch', $minigpt,
        qr/--micro-batches.*--batch/, qw(--batch 6 --micro-batches 4));
refused('--micro-batches above --batch', $minigpt,
        qr/--micro-batches.*--batch/, qw(--batch 2 --micro-batches 4));
refused('--micro-batches not dividing --batch, with --verify', $minigpt,
        qr/--micro-batches/, qw(--verify --batch 6 --micro-batches 4));
refused('--save-every without --save', $minigpt, qr/--save-every/,
        qw(--save-every 10));
refused('activations that cannot fit', $minigpt, qr/--batch.*--seq.*--hidden/,
        qw(--batch 4096 --seq 4096 --hidden 4096));
refused('activations that cannot fit (fp64)', $fp64, qr/--batch.*--seq.*--hidden/,
        qw(--batch 4096 --seq 4096 --hidden 4096));
refused('a long context', $minigpt, qr/--seq/, qw(--batch 512 --seq 4096 --heads 64 --hidden 4096));

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
        my ($status, $out, $err) = run('sh', '-c', "ulimit -c 0; exec $command");
        is($status, 2, "@$case: exit status 2");
        my $lines = () = $err =~ /\n/g;
        is($lines, 1, "@$case: one line on stderr") or diag $err;
        is_deeply([files_in($dir)], [], "@$case: no output file");
        like($err, qr/--layers|--hidden|--vocab/, "@$case: the line names the flags");
    }
}

# Paths that cannot be written: refused with one line that names the flag.
# (all are checked before training starts.)
{
    my @tiny = qw(--layers 1 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16
                  --steps 2 --quiet);
    for my $flag (qw(--log --save --profile --transcript --output)) {
        my ($status, $out, $err) = run($minigpt, @tiny, $flag, '/nonexistent/dir/file');
        is($status, 2, "unwritable $flag: exit status 2");
        is($out, '', "unwritable $flag: nothing on stdout");
        my $lines = () = $err =~ /\n/g;
        is($lines, 1, "unwritable $flag: one line on stderr") or diag $err;
        like($err, qr{/nonexistent/dir/file}, "unwritable $flag: names the path");
        like($err, qr/\Q$flag\E/, "unwritable $flag: names the flag");
    }
}

# matmul-bench shares the flag parser; its sizes, too, must be refused.
refused('matmul-bench --hidden abc', $bench, qr/^matmul-bench: --hidden\b/, qw(--hidden abc));
refused('matmul-bench --seconds 0', $bench, qr/^matmul-bench: --seconds\b/, qw(--seconds 0));
refused('matmul-bench --seconds 1e9', $bench, qr/^matmul-bench: --seconds\b/, qw(--seconds 1e9));
refused('matmul-bench --batch 2.5', $bench, qr/^matmul-bench: --batch\b/, qw(--batch 2.5));
refused('matmul-bench --vocab -1', $bench, qr/^matmul-bench: --vocab\b/, qw(--vocab -1));
refused('matmul-bench --layers', $bench, qr/unknown flag --layers/, qw(--layers 2));
{
    my $dir = tempdir(CLEANUP => 1);
    my $command = join ' ', map { "'$_'" } $bench, qw(--batch 4096 --seq 4096
                  --hidden 4096 --seconds 0.01), '--output', "$dir/out.txt";
    my ($status, $out, $err) = run('sh', '-c', "ulimit -c 0; exec $command 2>&1");
    is_deeply([files_in($dir)], [], 'matmul-bench at absurd sizes: no output file');
    is($status, 2, 'matmul-bench at absurd sizes: exit status 2');
    like($out, qr/\A[^\n]*--(batch|seq|hidden)[^\n]*\n\z/,
         'matmul-bench at absurd sizes: one line naming the flags');
}

# ---------------------------------------------------------------- help --
my %flags = (
    minigpt => [qw(--layers --hidden --heads --seq --batch --vocab --steps --lr
                   --seed --micro-batches --eval-every --save --save-every
                   --resume --log --profile --machine --transcript --gradcheck --verify
                   --quiet --dump --keep-checkpoints --allow-schedule-change
                   --sample --dp --allreduce --no-overlap --no-allreduce --zero --json --csv --latex
                   --output --help)],
    'matmul-bench' => [qw(--batch --seq --hidden --vocab --seconds --repeats
                          --machine --transcript --json --csv --latex --output
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
