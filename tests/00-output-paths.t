#!/usr/bin/perl
# tests/00-output-paths.t: output that cannot destroy, and output that cannot
# be lost without a word.
#  - An output path must be absent or a regular file: a device, a directory,
#    a pipe or a symbolic link is refused with one line and exit status 2, and
#    is still what it was afterwards (the atomic write renames over its path,
#    so a device run as root would otherwise become a regular file).
#  - Paths that cannot be written are refused when the flags are read, before
#    any work: no progress line, nothing on stdout, no file left behind.
#  - A full standard output (> /dev/full) and a full disk under --output (a
#    file-size limit of zero) give exit status 2 and one line naming the file
#    and the reason, for every tool; a failed --output leaves the old file.
#  - Rounding up is exact for whole quotients from 1e3 to 1e18, and rounds
#    genuine fractions up.
#
# Run after `make programs`:  prove -v tests/00-output-paths.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX ();
use Test::More;

my $bin = root() . '/build/bin';
for my $tool (qw(fleet minigpt allreduce matmul-bench moe)) {
    ok(-x "$bin/$tool", "build/bin/$tool exists") or BAIL_OUT("run make first");
}

# Quick runs of each tool, each with the flags that name its output files.
my %tool = (
    'fleet memory'  => { cmd => ["$bin/fleet", 'memory'],  flags => ['--output'] },
    'fleet compute' => { cmd => ["$bin/fleet", 'compute'], flags => ['--output'] },
    'allreduce'     => { cmd => ["$bin/allreduce", qw(--max-bytes 1024 --seconds 0.001
                                                      --warmup 1), '--machine',
                                     "$bin/../machine.json"],
                         flags => [qw(--output --data --transcript)] },
    'matmul-bench'  => { cmd => ["$bin/matmul-bench", qw(--seconds 0.01 --batch 1 --seq 8
                                                         --hidden 8 --vocab 8)],
                         flags => [qw(--output --transcript)] },
    'moe'           => { cmd => ["$bin/moe", qw(--tokens 16 --hidden 8
                                                --repeats 1)],
                         flags => [qw(--output --tokens-csv)] },
    # A run far too long to finish within the timeout: it must be refused
    # before it starts.
    'minigpt'       => { cmd => ["$bin/minigpt", qw(--steps 1000000)],
                         flags => [qw(--output --transcript)] },
);

# ------------------------------------------------ paths that are refused --
my $dir = tempdir(CLEANUP => 1);
mkdir "$dir/folder" or die;
open(my $keep, '>', "$dir/target") or die; print $keep "keep me\n"; close $keep;
symlink("$dir/target", "$dir/link") or die;
symlink("$dir/absent", "$dir/dangling") or die;
POSIX::mkfifo("$dir/fifo", 0600) or die "mkfifo: $!";
# Devices of this test's own, never the system's: a tool with the bug this
# test looks for, run as root, would replace /dev/full or /dev/null with a
# regular file. Making a device takes root, the case that matters.
my @devices;
for my $device (['full', 7], ['null', 3]) {
    my ($name, $minor) = @$device;
    push @devices, "$dir/$name"
        if system("mknod '$dir/$name' c 1 $minor 2>/dev/null") == 0 && -c "$dir/$name";
}
diag('not root: no device of its own to try; the pipe and the rest still are')
    unless @devices;

sub unchanged {
    my ($label) = @_;
    ok(-d "$dir/folder", "$label: the folder is still a folder");
    is_deeply([files_in("$dir/folder")], [], "$label: nothing was put in it");
    ok(-l "$dir/link" && -l "$dir/dangling", "$label: the links are still links");
    is(slurp("$dir/target"), "keep me\n", "$label: the file a link points to is untouched");
    ok(!-e "$dir/absent", "$label: a dangling link's target was not created");
    ok(-p "$dir/fifo", "$label: the pipe is still a pipe");
    ok(-c $_, "$label: $_ is still a device") for @devices;
    is_deeply([grep { /tmp/ } files_in($dir)], [], "$label: no temporary file left");
}

my @bad = ((map { [$_, qr/is a device/] } @devices),
           ["$dir/folder", qr/is a directory/],
           ["$dir/link", qr/is a symbolic link/],
           ["$dir/dangling", qr/is a symbolic link/],
           ["$dir/fifo", qr/is a pipe/],
           ['/nonexistent/x', qr/cannot write \/nonexistent\/x: No such file/],
           ["$dir/target/x", qr/cannot write .*: Not a directory/]);
for my $name (sort keys %tool) {
    my ($cmd, $flags) = @{ $tool{$name} }{qw(cmd flags)};
    for my $flag (@$flags) {
        for my $case (@bad) {
            my ($path, $why) = @$case;
            my $label = "$name $flag $path";
            (my $command = $name) =~ s/ .*//;
            # One line, before any work: the run would not end in time.
            my $err = refused($label, qr/^\Q$command\E.*: \Q$flag\E: .*$why/,
                              'timeout', 30, @$cmd, $flag, $path);
            like($err, qr/\Q$path\E/, "$label: the line names the path");
        }
        unchanged("$name $flag");
    }
}

# A refusal of an output does not depend on the other flags being good:
# with a bad --output and nothing else wrong, --help still prints help.
{
    my ($status, $out) = run("$bin/fleet", qw(memory --help --output), $dir);
    is($status, 0, '--help with a bad --output: still help, exit 0');
    like($out, qr/^usage: fleet memory/, '--help with a bad --output: the help');
}

# A regular file is replaced whole, and its name stays a regular file.
{
    my $file = "$dir/report.txt";
    open(my $fh, '>', $file) or die; print $fh "old\n"; close $fh;
    my ($status) = run("$bin/fleet", qw(memory --output), $file);
    is($status, 0, 'an existing regular file may be replaced');
    like(slurp($file), qr/^fleet memory:/, '... and is replaced whole');
    ok(-f $file && !-l $file, '... by a regular file');
}

# --------------------------------------------- a full standard output ----
my @stdout_runs = (
    [fleet => "$bin/fleet", 'memory'],
    [fleet => "$bin/fleet", qw(memory --json)],
    [fleet => "$bin/fleet", qw(memory --help)],
    [fleet => "$bin/fleet", '--help'],
    [fleet => "$bin/fleet", qw(compute --sweep)],
    [fleet => "$bin/fleet", qw(layout --json)],
    [minigpt => "$bin/minigpt", qw(--steps 2 --quiet)],
    [minigpt => "$bin/minigpt", qw(--steps 2 --quiet --json)],
    [minigpt => "$bin/minigpt", '--help'],
    [allreduce => "$bin/allreduce", qw(--max-bytes 1024 --seconds 0.001 --json --machine),
     "$bin/../machine.json"],
    [allreduce => "$bin/allreduce", qw(--max-bytes 1024 --seconds 0.001 --op allreduce
                                       --machine), "$bin/../machine.json"],
    ['matmul-bench' => "$bin/matmul-bench", qw(--seconds 0.01 --batch 1 --seq 8
                                               --hidden 8 --vocab 8)],
    [moe => "$bin/moe", qw(--tokens 16 --hidden 8 --repeats 1 --json)],
);
SKIP: {
    skip 'this system has no /dev/full to fill standard output with', 4 * @stdout_runs
        unless -c '/dev/full';
    for my $r (@stdout_runs) {
        my ($command, @cmd) = @$r;
        my $label = join(' ', map { s{.*/}{}r } @cmd) . ' > /dev/full';
        my ($status, undef, $err) = run({ stdout => '/dev/full' }, @cmd);
        is($status, 2, "$label: exit status 2, not success");
        my @said = grep { /standard output/ } split /\n/, $err;
        is(scalar @said, 1, "$label: one line about it") or diag $err;
        like($said[0] // '', qr/^\Q$command\E[\w ]*: standard output: No space left on device$/,
             "$label: names standard output and the reason");
        unlike($err, qr/standard output.*\n.*standard output/s, "$label: said once");
    }
}

# --------------------------------------------------- a full disk ----
# A file-size limit of zero makes every write to a file fail (EFBIG), as a
# full disk would; standard error goes to a pipe, which the limit spares.
# (The MPI programs cannot start under such a limit, so fleet, whose layout
# JSON is far larger than a stream's buffer, and matmul-bench stand in.)
sub run_full_disk {
    my @command = @_;
    my $script = q{trap '' XFSZ; ulimit -f 0 || exit 99; exec "$@" 2>&1};
    open(my $fh, '-|', 'sh', '-c', $script, 'sh', @command) or die;
    local $/;
    my $said = <$fh> // '';
    close $fh;
    return (exit_status($?), $said);
}
for my $case (['fleet memory', "$bin/fleet", 'memory', '--output'],
              ['fleet layout', "$bin/fleet", qw(layout --json --output)],
              ['matmul-bench', "$bin/matmul-bench", qw(--seconds 0.01 --batch 1 --seq 8
                                                       --hidden 8 --vocab 8 --transcript)]) {
    my ($name, @cmd) = @$case;
    my $flag = $cmd[-1];
    my $d = tempdir(CLEANUP => 1);
    my ($status, $said) = run_full_disk(@cmd, "$d/new.txt");
    isnt($status, 99, "$name $flag on a full disk: the limit was set");
    is($status, 2, "$name $flag on a full disk: exit status 2");
    my @lines = grep { /\Q$flag\E/ } split /\n/, $said;
    is(scalar @lines, 1, "$name $flag on a full disk: one line") or diag $said;
    like($lines[0] // '', qr/\Q$flag\E: could not write \Q$d\E\/new\.txt: File too large/,
         "$name $flag on a full disk: names the flag, the file and the reason");
    is_deeply([files_in($d)], [], "$name $flag on a full disk: no file, no temporary file");
    open(my $fh, '>', "$d/old.txt") or die; print $fh "old\n"; close $fh;
    ($status) = run_full_disk(@cmd, "$d/old.txt");
    is($status, 2, "$name $flag over an old file on a full disk: exit 2");
    is(slurp("$d/old.txt"), "old\n", "$name $flag over an old file: the old file is kept");
}

# ------------------------------------------------------- rounding up ----
# fleet compute --days finds ceil(FLOPs / (rate x seconds)) GPUs. With
# --achieved-flops 1e13 and --params 1e15, one day's GPU does 8.64e17 FLOP,
# and 6e15 x tokens FLOP need tokens x 6e15 / 8.64e17 GPUs: the tokens below
# make the quotient exactly Q. Every quotient and product here is exact in
# binary except by a rounding or two, which must not cost or gain a GPU.
sub gpus_needed {
    my ($quotient, $days) = @_;
    $days //= 1;
    my $tokens = $quotient * 1e13 * 86400 * $days / 6e15;
    my $j = fleet_json('compute', '--params', 1e15, '--achieved-flops', 1e13,
                       '--tokens', sprintf('%.17g', $tokens), '--days', $days);
    return ($j->{gpus_needed}, $j->{gpus_needed_whole_nodes});
}
for my $q (1e3, 1e12, 2e14) {
    my ($gpus, $nodes) = gpus_needed($q);
    is($gpus, $q, sprintf('a quotient of %g GPUs rounds up to itself', $q));
    is($nodes, $q, sprintf('... and %g GPUs are %g whole nodes of eight', $q, $q / 8));
}
{
    # Fewer days, so that the tokens stay under --tokens' limit of 1e17.
    # Doubles near 1e18 are 128 apart, and the FLOPs are rounded once, so
    # the answer may be a neighbour of 1e18, but not a million GPUs short.
    my ($gpus) = gpus_needed(1e18, 2**-11);
    ok(abs($gpus - 1e18) <= 256, 'a quotient of 1e18 GPUs rounds up to about itself')
        or diag sprintf('got %.17g', $gpus);
}
for my $case ([1000.5, 1001], [1e12 + 0.5, 1e12 + 1], [24.9, 25]) {
    my ($q, $want) = @$case;
    my ($gpus) = gpus_needed($q);
    is($gpus, $want, sprintf('a quotient of %.1f rounds up to %.0f', $q, $want));
}
# The memory floor: 1.6e12 B over 64 GB is 25 in decimals but not quite in
# binary (80e9 x 0.8); it must be 25 GPUs, and a hair more must be 26.
is(fleet_json(qw(memory --params 100e9))->{gpus_min}, 25, 'the floor of 100e9 is 25 GPUs');
is(fleet_json(qw(memory --params 100.001e9))->{gpus_min}, 26, '... and of 100.001e9, 26');

done_testing();
