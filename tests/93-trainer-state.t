#!/usr/bin/perl
# tests/93-trainer-state.t: minigpt's state on disk, checked by code that
# shares nothing with the trainer (Appendix "The trainer's state on disk").
#
# - The optimizer's first step, read from a checkpoint parsed here from the
#   chapter's layout (format 2): a bias that starts at zero and does not
#   decay moves by exactly -lr_1 g / (|g| + eps), where lr_1 is the first
#   step's rate worked out here from the schedule the header records and g
#   the gradient --dump wrote for the same batch, clipped here; the first
#   moment's norm is (1 - beta1) min(|g|, clip). Adam without its bias
#   correction, or clipping that never engages, fails these.
# - The .npy files of --dump, parsed here byte by byte (format 1.0).
# - --steps 0 --save writes the initial state; --keep-checkpoints keeps the
#   newest N; the --log CSV carries the rate and the norm at full precision.
# - A resume that would change the schedule, or run nothing, is refused;
#   bad paths (a directory, a device, one file named by two flags) are
#   refused before any training, with one line and exit status 2.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use List::Util qw(min max sum);
use POSIX ();
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
ok(-x $_, "$_ is built") or BAIL_OUT("no $_") for $minigpt, $fp64;
my $dir = tempdir(CLEANUP => 1);

# ------------------------------------------------ reading the files here --
# A one-process checkpoint of format 3: its one shard's header words, the
# schedule, its table of one run (all N numbers, from 0), and the arrays.
sub read_checkpoint {
    my ($path) = @_;
    my $bytes = slurp("$path/rank00000.shard") // die "cannot read $path";
    my @h = unpack 'Q<32', $bytes;
    die "$path: not format 3" unless substr($bytes, 0, 8) eq "MINIGPT\0" && $h[1] == 3;
    my ($N, $size) = @h[12, 13];
    die "$path: not one run of N" unless "@h[27 .. 31]" eq "1 1 $N 0 $N";
    my $type = $size == 8 ? 'd<' : 'f<';
    my @d = unpack 'd<6', substr($bytes, 16 * 8, 48);
    my %c = (step => $h[9], sequences => $h[10], N => $N, steps => $h[14],
             warmup => $h[15], lr => $d[0], beta1 => $d[1], beta2 => $d[2],
             eps => $d[3], decay => $d[4], clip => $d[5]);
    for my $i (0 .. 2) {
        my $at = 32 * 8 + $i * $N * $size;
        $c{(qw(w m v))[$i]} = [unpack "$type$N", substr($bytes, $at, $N * $size)];
    }
    return \%c;
}

# A .npy file of format 1.0: (descr, [shape], [data], header bytes).
sub read_npy {
    my ($path) = @_;
    my $bytes = slurp($path) // die "cannot read $path";
    die "$path: bad magic" unless substr($bytes, 0, 8) eq "\x93NUMPY\x01\x00";
    my $length = unpack 'v', substr($bytes, 8, 2);
    my $header = substr($bytes, 10, $length);
    my ($descr) = $header =~ /'descr': '([<>|]\w\d)'/;
    my ($shape) = $header =~ /'shape': \(([\d, ]*)\)/;
    die "$path: header $header" unless defined $descr && defined $shape
                                       && $header =~ /'fortran_order': False/;
    my @shape = grep { length } split /,\s*/, $shape;
    my $count = 1;
    $count *= $_ for @shape;
    my %unpack = ('<f4' => 'f<', '<f8' => 'd<', '<i4' => 'l<');
    my %bytes = ('<f4' => 4, '<f8' => 8, '<i4' => 4);
    my $data = substr($bytes, 10 + $length);
    die "$path: " . length($data) . " bytes of data for $count items"
        unless length $data == $count * $bytes{$descr};
    return ($descr, \@shape, [unpack "$unpack{$descr}$count", $data], 10 + $length, $header);
}

# ------------------------------------------------------- the dump itself --
my %tiny = (layers => 2, hidden => 16, heads => 2, seq => 8, batch => 2, vocab => 16);
my @tiny = (minigpt_flags(%tiny), '--seed', 3, '--quiet');
my ($L, $C, $T, $V, $B) = @tiny{qw(layers hidden seq vocab batch)};
my %shape = (wte => [$V, $C], wpe => [$T, $C], ln1_w => [$L, $C], ln1_b => [$L, $C],
             qkv_w => [$L, $C, 3 * $C], qkv_b => [$L, 3 * $C], proj_w => [$L, $C, $C],
             proj_b => [$L, $C], ln2_w => [$L, $C], ln2_b => [$L, $C],
             fc_w => [$L, $C, 4 * $C], fc_b => [$L, 4 * $C], fcproj_w => [$L, 4 * $C, $C],
             fcproj_b => [$L, $C], lnf_w => [$C], lnf_b => [$C], head_w => [$C, $V]);
my @order = qw(wte wpe ln1_w ln1_b qkv_w qkv_b proj_w proj_b ln2_w ln2_b fc_w fc_b
               fcproj_w fcproj_b lnf_w lnf_b head_w);
my (%w0, %g, $loss);
{
    my ($status, $out, $err) = run($minigpt, @tiny, '--dump', "$dir/dump");
    is($status, 0, '--dump DIR succeeds') or diag $err;
    like($out, qr/^dump: .*17 tensors.*\n\z/, 'and says in one line what it wrote');
    is_deeply([files_in("$dir/dump")],
              [qw(grads inputs.npy loss.npy manifest.json targets.npy weights)],
              'the dump: weights/, grads/, the batch, its loss and a manifest');
    is_deeply([files_in("$dir/dump/weights")], [sort map { "$_.npy" } @order],
              'one file of weights per parameter tensor, named as in the model');
    is_deeply([files_in("$dir/dump/grads")], [sort map { "$_.npy" } @order],
              'one file of gradients per parameter tensor');
    for my $name (@order) {
        my ($descr, $shape, $data, $start) = read_npy("$dir/dump/weights/$name.npy");
        is($descr, '<f4', "weights/$name.npy: little-endian float32");
        is_deeply($shape, $shape{$name}, "weights/$name.npy: shaped (@{$shape{$name}}) as in the model");
        is($start % 64, 0, "weights/$name.npy: the data start at a multiple of 64 bytes");
        $w0{$name} = $data;
        (undef, $shape, $g{$name}) = read_npy("$dir/dump/grads/$name.npy");
        is_deeply($shape, $shape{$name}, "grads/$name.npy: the same shape");
    }
    my ($descr, $shape, $data) = read_npy("$dir/dump/inputs.npy");
    is($descr, '<i4', 'inputs.npy: int32');
    is_deeply($shape, [$B, $T], 'inputs.npy: (B, T)');
    ok(!grep({ $_ < 0 || $_ >= $V } @$data), 'inputs.npy: tokens in [0, V)');
    my (undef, undef, $targets) = read_npy("$dir/dump/targets.npy");
    is_deeply([@$targets[0 .. $T - 2]], [@$data[1 .. $T - 1]],
              'targets.npy: the inputs shifted by one');
    (my $ld, $shape, my $l) = read_npy("$dir/dump/loss.npy");
    is_deeply([$ld, scalar @$shape], ['<f8', 0], 'loss.npy: a 0-dimensional float64');
    $loss = $l->[0];
    cmp_ok(abs($loss - log $V), '<', 0.1, "the loss at initialisation is near ln V ($loss)");
    my $manifest = JSON::PP::decode_json(slurp("$dir/dump/manifest.json") // '{}');
    is($manifest->{loss}, $loss, 'the manifest gives the same loss');
    is_deeply([map { $_->{name} } @{ $manifest->{tensors} }], \@order,
              'the manifest lists the tensors in the order of the model');
    ok(!grep({ $_ != 0 } @{ $w0{qkv_b} }, @{ $w0{proj_b} }, @{ $w0{fc_b} }),
       'the biases start at zero');

    my ($s64, $o64, $e64) = run($fp64, @tiny, '--dump', "$dir/dump64");
    is($s64, 0, 'minigpt-fp64 --dump succeeds') or diag $e64;
    ($descr) = read_npy("$dir/dump64/grads/qkv_w.npy");
    is($descr, '<f8', 'minigpt-fp64 writes float64');
}
use JSON::PP ();

# --------------------------------------------- the first optimizer step --
# A 20-step schedule warms up over 2 steps; the checkpoint after step 1 is
# the first of the names --keep-checkpoints keeps.
{
    my ($status, undef, $err) = run($minigpt, @tiny, '--steps', 20, '--save', "$dir/one.ckpt",
                                    '--save-every', 1, '--keep-checkpoints', 25,
                                    '--log', "$dir/one.csv");
    is($status, 0, 'a 20-step run saving every step, keeping them all') or diag $err;
    my $c = read_checkpoint("$dir/one.ckpt.step000001");
    is($c->{step}, 1, 'the kept checkpoint of step 1');
    is($c->{steps}, 20, 'its schedule is 20 steps long');
    my $warmup = max(int($c->{steps} / 10), 1);
    is($c->{warmup}, $warmup, 'with a warm-up of a tenth, at least 1');
    my $lr1 = $c->{lr} * 1 / $warmup;          # step 0 of the linear warm-up
    my @all = map { @{ $g{$_} } } @order;
    my $norm = sqrt(sum(map { $_ * $_ } @all));
    cmp_ok($norm, '>', $c->{clip} * 1.2,
           "the gradient's norm ($norm) is above the clip, so clipping engages");
    my $scale = min(1, $c->{clip} / $norm);

    # The first moment after one step is (1 - beta1) times the clipped g.
    my $mnorm = sqrt(sum(map { $_ * $_ } @{ $c->{m} }));
    close_to($mnorm, (1 - $c->{beta1}) * min($norm, $c->{clip}), 1e-5,
             "|m| = (1 - beta1) min(|g|, clip) after the first step");

    # Each zero-initialised bias that does not decay.
    my $at = 0;
    my %offset;
    for my $name (@order) { $offset{$name} = $at; $at += scalar @{ $w0{$name} } }
    is($at, $c->{N}, 'the tensors add up to the N of the checkpoint');
    for my $name (qw(qkv_b proj_b fc_b fcproj_b ln1_b ln2_b lnf_b)) {
        my ($worst, $n) = (0, scalar @{ $g{$name} });
        for my $i (0 .. $n - 1) {
            my $gc = $g{$name}[$i] * $scale;
            my $want = -$lr1 * $gc / (abs($gc) + $c->{eps});
            my $got = $c->{w}[$offset{$name} + $i] - $w0{$name}[$i];
            $worst = max($worst, abs($got - $want));
        }
        cmp_ok($worst, '<=', 1e-5 * $lr1,
               "$name moved by -lr_1 g / (|g| + eps) at every element (worst miss $worst)");
    }

    # The log: the first line's rate and norm, to their last digit.
    open my $fh, '<', "$dir/one.csv" or die;
    my @lines = <$fh>;
    chomp @lines;
    my @first = split /,/, $lines[1];
    close_to($first[1], $lr1, 1e-7, 'the log gives the first rate at full precision');
    close_to($first[4], $norm, 2e-7, 'and the gradient norm before clipping, at full precision');
    like($first[2], qr/^\d\.\d{6,}/, 'and the training loss with at least seven digits');
    close_to($first[2], $loss, 1e-7, "and that loss is the dump's");
    is(scalar(@lines), 21, 'the log: a header and a line per step');

    # --keep-checkpoints 3 over six saves keeps the newest three.
    ($status, undef, $err) = run($minigpt, @tiny, '--steps', 6, '--save', "$dir/keep.ckpt",
                                 '--save-every', 1, '--keep-checkpoints', 3);
    is($status, 0, '--keep-checkpoints 3 --save-every 1 for 6 steps') or diag $err;
    is_deeply([grep { /^keep/ } files_in($dir)],
              [qw(keep.ckpt keep.ckpt.step000004 keep.ckpt.step000005 keep.ckpt.step000006)],
              'leaves the checkpoint and the newest three, named by their steps');
    same_checkpoints("$dir/keep.ckpt.step000006", "$dir/keep.ckpt",
                     'the newest kept one is the final checkpoint');
    is(read_checkpoint("$dir/keep.ckpt.step000004")->{step}, 4, 'keep.ckpt.step000004 holds step 4');
}

# -------------------------------------------------- the initial state ----
{
    my ($status, $out, $err) = run($minigpt, @tiny, '--steps', 0, '--save', "$dir/init.ckpt");
    is($status, 0, '--steps 0 --save writes a checkpoint') or diag $err;
    my $c = read_checkpoint("$dir/init.ckpt");
    is($c->{step}, 0, 'of step 0');
    is_deeply($c->{w}, [map { @{ $w0{$_} } } @order], "whose weights are the dump's, bit for bit");
    ok(!grep({ $_ != 0 } @{ $c->{m} }, @{ $c->{v} }), 'and whose moments are zero');
    ($status, undef, $err) = run($minigpt, @tiny, '--steps', 3, '--resume', "$dir/init.ckpt",
                                 '--save', "$dir/from-init.ckpt");
    is($status, 0, 'a step-0 checkpoint starts any schedule without --allow-schedule-change')
        or diag $err;
    run($minigpt, @tiny, '--steps', 3, '--save', "$dir/straight3.ckpt");
    same_checkpoints("$dir/from-init.ckpt", "$dir/straight3.ckpt",
                     'and ends where a run from the seed ends');
    refused('--steps 0 without --save', qr/^minigpt: --steps 0 .*--save/,
            $minigpt, @tiny, '--steps', 0);
}

# ------------------------------------------------ resuming, or refusing --
{
    my ($status, undef, $err) = run($minigpt, @tiny, '--steps', 5, '--save', "$dir/five.ckpt");
    is($status, 0, 'a 5-step checkpoint') or diag $err;
    refused_no_output('--resume a step-5 checkpoint with --steps 3', qr/^minigpt: --resume: .*five\.ckpt.*--steps 5.*--steps 3.*--allow-schedule-change/,
                      $minigpt, @tiny, '--steps', 3, '--resume', "$dir/five.ckpt");
    refused_no_output('the same with --allow-schedule-change', qr/^minigpt: --resume: .*taken 5 steps.*--steps 3/,
                      $minigpt, @tiny, '--steps', 3, '--resume', "$dir/five.ckpt", '--allow-schedule-change');
    refused_no_output('--resume with a longer --steps', qr/--steps 5 .*--steps 8/,
                      $minigpt, @tiny, '--steps', 8, '--resume', "$dir/five.ckpt");
    refused_no_output('--resume with another --lr', qr/--lr 0\.003.*--lr 0\.001/,
                      $minigpt, @tiny, '--steps', 5, '--lr', '0.001', '--resume', "$dir/five.ckpt");
    ($status, undef, $err) = run($minigpt, @tiny, '--steps', 8, '--resume', "$dir/five.ckpt",
                                 '--allow-schedule-change', '--save', "$dir/eight.ckpt");
    is($status, 0, '--allow-schedule-change lets a resume change --steps') or diag $err;
    my $c = read_checkpoint("$dir/eight.ckpt");
    is_deeply([@$c{qw(step steps warmup)}], [8, 8, 1], 'and the next checkpoint records the new schedule');
    ($status, undef, $err) = run($minigpt, @tiny, '--steps', 5, '--resume', "$dir/five.ckpt");
    is($status, 0, 'resuming a finished run with its own --steps succeeds') or diag $err;
    refused_no_output('--allow-schedule-change without --resume', qr/--allow-schedule-change.*--resume/,
                      $minigpt, @tiny, '--allow-schedule-change');
}

# ---------------------------------------------------- paths, before all --
{
    my $p = tempdir(CLEANUP => 1);
    mkdir "$p/sub";
    open my $fh, '>', "$p/exists.csv" or die;
    close $fh;
    my @run = (@tiny, '--steps', 2);
    refused_no_output('--save .', qr/^minigpt: --save: \. is a directory/, $minigpt, @run, '--save', '.');
    refused_no_output('--save DIR', qr/^minigpt: --save: .* is a directory/, $minigpt, @run, '--save', "$p/sub");
    refused_no_output('--log DIR', qr/^minigpt: --log: .* is a directory/, $minigpt, @run, '--log', "$p/sub");
    refused_no_output('--profile DIR', qr/^minigpt: --profile: /, $minigpt, @run, '--profile', "$p/sub/");
    # Not a device: should the check fail, the rename lands on a FIFO here.
    POSIX::mkfifo("$p/fifo", 0600) or die "mkfifo: $!";
    refused_no_output('--save FIFO', qr/^minigpt: --save: .*fifo is not a directory/, $minigpt, @run,
                      '--save', "$p/fifo");
    ok(-p "$p/fifo", 'the FIFO is still a FIFO');
    refused_no_output('--save x --log x', qr/--save .* and --log .* name the same file/, $minigpt, @run,
                      '--save', "$p/x", '--log', "$p/x");
    refused_no_output('--save x --log ./x', qr/name the same file/, $minigpt, @run,
                      '--save', "$p/x", '--log', "$p/sub/../x");
    refused_no_output('--log and --profile of one existing file', qr/--log .* and --profile .* name the same file/,
                      $minigpt, @run, '--log', "$p/exists.csv", '--profile', "$p/sub/../exists.csv");
    refused_no_output('--transcript and --save of one file', qr/name the same file/, $minigpt, @run,
                      '--save', "$p/t.txt", '--transcript', "$p/./t.txt");
    refused_no_output('--log naming the checkpoint --resume reads, a directory',
                      qr/--log: .*five\.ckpt is a directory/,
                      $minigpt, @run, '--resume', "$dir/five.ckpt", '--log', "$dir/five.ckpt");
    refused_no_output('--dump of a file', qr/^minigpt: --dump: .* not a directory/, $minigpt, @tiny,
                      '--dump', "$p/exists.csv");
    refused_no_output('--dump with --save', qr/^minigpt: --dump .*--steps 0 --save/, $minigpt, @tiny,
                      '--dump', "$p/d", '--save', "$p/d.ckpt");
    refused_no_output('--dump with --verify', qr/^minigpt: --dump, --gradcheck, --verify/, $minigpt, @tiny,
                      '--dump', "$p/d", '--verify');
    refused_no_output('--keep-checkpoints without --save', qr/^minigpt: --keep-checkpoints needs --save/,
                      $minigpt, @run, '--keep-checkpoints', 2);
    is_deeply([files_in($p)], [qw(exists.csv fifo sub)], 'no refused run wrote anything');
    is_deeply([files_in("$p/sub")], [], 'not even in the directory it was given');
}

done_testing();
