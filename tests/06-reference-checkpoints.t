#!/usr/bin/perl
# Chapter 6: checkpoints that lose nothing. A run killed with SIGKILL and
# resumed from its last checkpoint ends with the same bytes as a run that was
# never interrupted; a truncated, corrupted, mismatched or foreign file is
# refused with one line naming --resume and exit status 2; a write that fails
# leaves the previous checkpoint as it was and no temporary file behind. The
# layout checked here is a one-process checkpoint of format version 3
# (Chapter 13): a directory of a manifest and one shard, whose file is
# thirty little-endian 64-bit header words, a table of one run (two words),
# three arrays of N numbers, and an FNV-1a hash of all before it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use JSON::PP ();
use Test::More;


my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
ok(-x $minigpt, 'build/bin/minigpt is built') or BAIL_OUT('no minigpt');

my $dir = tempdir(CLEANUP => 1);


sub spew {
    my ($path, $bytes) = @_;
    open my $fh, '>:raw', $path or die "$path: $!";
    print $fh $bytes;
    close $fh or die;
}

# FNV-1a, 64 bits, without relying on integer overflow: the prime is
# 2^40 + 435, so h·prime mod 2^64 is assembled from 32-bit halves.
sub fnv1a {
    my ($bytes) = @_;
    my $h = (0xcbf29ce4 << 32) | 0x84222325;
    for my $byte (unpack 'C*', $bytes) {
        $h ^= $byte;
        my ($lo, $hi) = ($h & 0xffffffff, $h >> 32);
        my ($a_lo, $a_hi) = ($lo * 435, $hi * 435);
        my $high = ((($lo & 0xffffff) << 8) + $a_hi + ($a_lo >> 32)) & 0xffffffff;
        $h = ($high << 32) | ($a_lo & 0xffffffff);
    }
    return $h;
}

# ------------------------------------------------------- the file itself --
my %small = (layers => 1, hidden => 16, heads => 2, seq => 8, batch => 2, vocab => 16);
{
    my ($status, $out, $err) = run($minigpt, qw(--quiet --steps 7 --seed 5),
                                   minigpt_flags(%small), '--save', "$dir/small.ckpt");
    is($status, 0, 'a small run saves a checkpoint') or diag $err;
    is_deeply([files_in("$dir/small.ckpt")], [qw(manifest rank00000.shard)],
              'a directory of a manifest and one shard');
    my $bytes = slurp("$dir/small.ckpt/rank00000.shard");
    my $N = minigpt_params(%small);
    is(length $bytes, 32 * 8 + 3 * 4 * $N + 8,
       'header, one run, weights, Adam m and v, checksum: 32·8 + 3·4·N + 8 bytes');
    my @h = unpack 'Q<32', $bytes;
    is(substr($bytes, 0, 8), "MINIGPT\0", 'the magic number');
    is($h[1], 3, 'format version 3');
    is_deeply([@h[22 .. 31]], [1, 1, 1, 0, 0, 1, 1, $N, 0, $N],
              'one process: tp, pp, dp 1, no ZeRO, rank 0 of 1; one run of '
              . 'N numbers, from 0');
    is_deeply([@h[2 .. 8]], [1, 16, 2, 8, 16, 2, 5],
              'layers, hidden, heads, seq, vocab, batch and seed');
    is($h[9], 7, 'the step');
    is($h[10], 7 * 2, 'the sequences consumed: steps × batch');
    is($h[12], $N, 'N, the parameter count');
    is($h[13], 4, 'four-byte numbers');
    is_deeply([@h[14, 15]], [7, 1], 'the schedule: --steps 7, warm-up max(7/10, 1) = 1');
    my @d = unpack 'd<6', substr($bytes, 16 * 8, 48);
    is_deeply([map { sprintf '%.7g', $_ } @d], ['0.003', '0.9', '0.95', '1e-08', '0.1', '1'],
              'the peak rate and Adam\'s beta1, beta2, eps, decay and clip, as doubles');
    my $stored = unpack 'Q<', substr($bytes, -8);
    is(sprintf('%016x', fnv1a(substr $bytes, 0, -8)), sprintf('%016x', $stored),
       'the file ends with the FNV-1a hash of everything before it');
    like(slurp("$dir/small.ckpt/manifest"),
         qr/^shard 0 rank00000\.shard ${\ length $bytes} ${\ sprintf '%016x',
            fnv1a($bytes)}$/m,
         'the manifest gives its size and the FNV-1a hash of all of it');

    my ($s64, undef, $e64) = run($fp64, qw(--quiet --steps 7 --seed 5),
                                 minigpt_flags(%small), '--save', "$dir/small64.ckpt");
    is($s64, 0, 'minigpt-fp64 saves a checkpoint too') or diag $e64;
    is(-s "$dir/small64.ckpt/rank00000.shard", 32 * 8 + 3 * 8 * $N + 8,
       'of eight-byte numbers');
}

# -------------------------------------------------- bit-exact resume ----
# Run A goes straight through. Run B saves every K steps and is killed with
# SIGKILL once it is past a checkpoint; the same command with --resume then
# finishes it. The final checkpoints must be the same bytes.
my %model = (layers => 2, hidden => 32, heads => 2, seq => 32, batch => 4, vocab => 32);
my ($S, $K, $kill_after) = (600, 50, 80);
my @train = (minigpt_flags(%model), '--steps', $S, '--eval-every', 100);
{
    my ($status, $out, $err) = run($minigpt, @train, '--quiet', '--json',
                                   '--save', "$dir/a.ckpt");
    is($status, 0, "run A: $S steps uninterrupted") or diag $err;

    # Run B, reading its progress from standard error.
    pipe(my $from_child, my $to_parent) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        close $from_child;
        open STDOUT, '>', '/dev/null' or die;
        open STDERR, '>&', $to_parent or die;
        exec $minigpt, @train, '--save', "$dir/b.ckpt", '--save-every', $K
          or exit 127;
    }
    close $to_parent;
    my ($seen, $killed_at) = (0, undef);
    local $SIG{ALRM} = sub { kill 'KILL', $pid; die "run B took too long\n" };
    alarm 120;
    while (my $line = <$from_child>) {
        next unless $line =~ m{^step (\d+)/(\d+): loss };
        $seen = $1;
        if ($seen >= $kill_after) {
            kill 'KILL', $pid;
            $killed_at = $seen;
            last;
        }
    }
    waitpid $pid, 0;
    my $wait = $?;
    alarm 0;
    close $from_child;
    ok(defined $killed_at, "run B reported step $kill_after and was sent SIGKILL");
    is($wait & 127, 9, 'run B died of SIGKILL');
    ok(-e "$dir/b.ckpt/manifest", 'run B left a checkpoint');
    my @h = unpack 'Q<22', slurp("$dir/b.ckpt/rank00000.shard") // '';
    ok($h[9] >= $K && $h[9] < $S && $h[9] % $K == 0,
       "run B's checkpoint is from the middle of the run (step $h[9])");
    different_checkpoints("$dir/a.ckpt", "$dir/b.ckpt",
                          'and differs from the finished one');
    my $from = $h[9];

    # The same command, with --resume.
    ($status, $out, $err) = run($minigpt, @train, '--json', '--save', "$dir/b.ckpt",
                                '--save-every', $K, '--resume', "$dir/b.ckpt");
    is($status, 0, 'run B resumes and finishes') or diag $err;
    my ($first) = $err =~ m{^step (\d+)/}m;
    is($first, $from + 1, "the resumed run starts at step $from + 1");
    my $r = eval { JSON::PP::decode_json($out) } // {};
    is($r->{step}, $S, "the resumed run reaches step $S");
    is($r->{steps}, $S - $from, 'having run only the steps that were left');
    same_checkpoints("$dir/a.ckpt", "$dir/b.ckpt",
                     'killed and resumed, run B ends with the bytes of run A');
    # (A SIGKILL during a write may strand run B's own b.ckpt.tmp-PID; the
    # resumed run must leave none of its own.)
    is_deeply([grep { /\.tmp-/ && !/\.tmp-$pid\z/ } files_in($dir)], [],
              'the resumed run leaves no temporary checkpoint');

    # Resuming a finished run does no steps and changes nothing.
    ($status, $out, $err) = run($minigpt, @train, '--json', '--quiet',
                                '--resume', "$dir/a.ckpt", '--save', "$dir/c.ckpt");
    is($status, 0, 'resuming a finished run succeeds') or diag $err;
    $r = eval { JSON::PP::decode_json($out) } // {};
    is($r->{steps}, 0, 'and runs no steps');
    same_checkpoints("$dir/a.ckpt", "$dir/c.ckpt", 'and saves the same bytes');
}

# ------------------------------------------------------------- refusal --
# Each bad checkpoint: exit 2, one line on stderr naming --resume, nothing on
# stdout, and no --output file.
sub resume_refused {
    my ($name, $binary, $path, @flags) = @_;
    return refused_no_output($name, qr/^minigpt: --resume: /, $binary,
                             qw(--quiet --steps 10), @flags, '--resume', $path);
}

my @small = minigpt_flags(%small);
my $good = slurp("$dir/small.ckpt/rank00000.shard");
my $manifest = slurp("$dir/small.ckpt/manifest");
my $len = length $good;
{
    my ($status, undef, $err) = run($minigpt, qw(--quiet --steps 10 --seed 5), @small,
                                    '--resume', "$dir/small.ckpt", '--allow-schedule-change');
    is($status, 0, 'the intact checkpoint resumes (the cases below are refused for their flaw)')
      or diag $err;
}
my @seed5 = (@small, '--seed', 5);

# A checkpoint NAME whose shard holds `bytes`, beside the good manifest (or
# the one given).
sub checkpoint_of {
    my ($name, $bytes, $manifest_text) = @_;
    my $ckpt = "$dir/$name.ckpt";
    mkdir $ckpt;
    spew("$ckpt/manifest", $manifest_text // $manifest);
    spew("$ckpt/rank00000.shard", $bytes);
    return $ckpt;
}

resume_refused('truncated', $minigpt,
               checkpoint_of('truncated', substr($good, 0, $len - 100)), @seed5);
resume_refused('cut in half', $minigpt,
               checkpoint_of('half', substr($good, 0, int($len / 2))), @seed5);
resume_refused('cut inside the header', $minigpt,
               checkpoint_of('header', substr($good, 0, 50)), @seed5);
resume_refused('one byte too long', $minigpt,
               checkpoint_of('padded', $good . "\0"), @seed5);

for my $at (int($len / 2), 32 * 8 + 3, $len - 1) {
    my $bad = $good;
    substr($bad, $at, 1) = chr(ord(substr($bad, $at, 1)) ^ 0x01);
    my $err = resume_refused("one bit flipped at byte $at of $len", $minigpt,
                             checkpoint_of("flipped$at", $bad), @seed5);
    like($err, qr/corrupt|checksum/, "byte $at: the reason is the checksum");
}

# Truncated, with its hashes and the manifest's size recomputed: the size
# its header implies, not a hash, refuses it.
{
    my $body = substr($good, 0, $len - 8 - 4);
    my $short = $body . pack('Q<', fnv1a($body));
    (my $text = $manifest) =~ s/^shard 0 \S+ \K\d+ \S+$/
        sprintf '%d %016x', length $short, fnv1a($short)/me;
    resume_refused('truncated with a valid hash', $minigpt,
                   checkpoint_of('rehashed', $short, $text), @seed5);
}

my $err = resume_refused('written for another --hidden', $minigpt, "$dir/small.ckpt",
                  minigpt_flags(%small, hidden => 32), '--seed', 5);
like($err, qr/--hidden 16/, 'the message says what the checkpoint holds');
resume_refused('written for another --batch', $minigpt, "$dir/small.ckpt",
        minigpt_flags(%small, batch => 4), '--seed', 5);
resume_refused('written for another --layers', $minigpt, "$dir/small.ckpt",
        minigpt_flags(%small, layers => 2), '--seed', 5);
resume_refused('written for another --seed', $minigpt, "$dir/small.ckpt", @small, '--seed', 6);
resume_refused('written by minigpt-fp64, read by minigpt', $minigpt, "$dir/small64.ckpt", @seed5);
resume_refused('written by minigpt, read by minigpt-fp64', $fp64, "$dir/small.ckpt", @seed5);
spew("$dir/text.ckpt", "This is not a checkpoint.\n" x 2000);
resume_refused('a text file', $minigpt, "$dir/text.ckpt", @seed5);
spew("$dir/empty.ckpt", '');
resume_refused('an empty file', $minigpt, "$dir/empty.ckpt", @seed5);
{
    my $bad = $good;
    substr($bad, 8, 8) = pack 'Q<', 4;
    my $e = resume_refused('another format version', $minigpt,
                           checkpoint_of('version', $bad), @seed5);
    like($e, qr/format version 4, not 3/, 'the line names both versions');
    spew("$dir/version2.ckpt", "MINIGPT\0" . pack('Q<', 2) . "\0" x 1000);
    $e = resume_refused('a one-file checkpoint of format version 2', $minigpt,
                        "$dir/version2.ckpt", @seed5);
    like($e, qr/format version 2, one file/,
         'a one-file checkpoint of the format before is refused as such');
}
resume_refused('a missing checkpoint', $minigpt, "$dir/no-such.ckpt", @seed5);
mkdir "$dir/a-directory";
resume_refused('a directory with no manifest', $minigpt, "$dir/a-directory", @seed5);

# ---------------------------------------- a failed write changes nothing --
# A file-size limit makes the write fail part-way (SIGXFSZ ignored, so write
# returns EFBIG); the checkpoint already there must survive byte for byte.
{
    my $wdir = tempdir(CLEANUP => 1);
    my @w = (minigpt_flags(%model), '--quiet');
    my ($status, undef, $e) = run($minigpt, @w, '--steps', 5, '--save', "$wdir/good.ckpt");
    is($status, 0, 'a good checkpoint to protect') or diag $e;
    my $before = slurp("$wdir/good.ckpt/rank00000.shard");
    cmp_ok(length $before, '>', 64 * 1024, 'larger than the file-size limit below');
    # minigpt is an MPI program; under a file-size limit MPICH's UCX transport
    # cannot create its shared-memory files, so one process uses UCX's 'self'.
    my $command = join ' ', map { "'$_'" } $minigpt, @w, '--steps', 6;
    refused('a write that fails', qr/^minigpt: --save: .*good\.ckpt/, 'sh', '-c',
        qq{trap '' XFSZ; ulimit -f 64; UCX_TLS=self exec $command --save '$wdir/good.ckpt'});
    is(slurp("$wdir/good.ckpt/rank00000.shard"), $before,
       'the previous checkpoint is untouched');
    is_deeply([files_in($wdir)], ['good.ckpt'], 'no temporary file is left');

    # The same with a periodic save in the middle of the run.
    refused('a periodic write that fails', '--save', 'sh', '-c',
        qq{trap '' XFSZ; ulimit -f 64; UCX_TLS=self exec $command --save '$wdir/good.ckpt' --save-every 2});
    is(slurp("$wdir/good.ckpt/rank00000.shard"), $before,
       'the previous checkpoint is untouched');
    is_deeply([files_in($wdir)], ['good.ckpt'], 'no temporary file is left');
}

done_testing();
