#!/usr/bin/perl
# Chapter 6: the reference trainer is right. Its gradients agree with finite
# differences, it learns the synthetic language below the entropies that
# counting alone would reach, it is deterministic, its FLOP and memory
# accounting matches formulas evaluated here from the shapes, --verify
# accepts every micro-batch split, and --sample speaks the language the
# chapter describes. Models are tiny except for one learning run.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use List::Util qw(max sum);
use Test::More;


my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
ok(-x $minigpt, 'build/bin/minigpt is built') or BAIL_OUT('no minigpt');
ok(-x $fp64, 'build/bin/minigpt-fp64 is built') or BAIL_OUT('no minigpt-fp64');

# The seventeen parameter tensors, in the order of the Params structure.
my @tensors = qw(wte wpe ln1_w ln1_b qkv_w qkv_b proj_w proj_b ln2_w ln2_b
                 fc_w fc_b fcproj_w fcproj_b lnf_w lnf_b head_w);

my %tiny = (layers => 2, hidden => 16, heads => 2, seq => 8, batch => 2,
            vocab => 16);

# ------------------------------------------------------------ gradcheck --
for my $shape (\%tiny, { layers => 1, hidden => 24, heads => 3, seq => 6,
                         batch => 3, vocab => 20 }) {
    my @flags = minigpt_flags(%$shape);
    my ($status, $out, $err) = run($fp64, '--gradcheck', @flags);
    is($status, 0, "fp64 gradcheck (@flags) exits 0") or diag $err;
    my @rows = $out =~ /^(\w+)\s+([-+.\de]+)\s+([-+.\de]+)\s*$/mg;
    my (@names, %error, %largest);
    while (my ($name, $g, $e) = splice @rows, 0, 3) {
        push @names, $name;
        $largest{$name} = $g;
        $error{$name} = $e;
    }
    is_deeply(\@names, \@tensors, 'fp64 gradcheck: one row per parameter tensor');
    for my $name (@tensors) {
        my $e = $error{$name} // 'missing';
        ok($e ne 'missing' && $e < 1e-5,
           "fp64 gradcheck: $name relative error $e < 1e-5");
        ok(($largest{$name} // 0) > 0, "fp64 gradcheck: $name receives a gradient");
    }
    my ($worst, $where) = $out =~ /^largest relative error (\S+) in (\w+) \(tolerance [^)]*\): OK$/m;
    ok(defined $worst, 'fp64 gradcheck: the summary line says OK') or diag $out;
    my $row_max = max(map { $_ // 0 } values %error);
    close_to($worst, $row_max, 0.01, "the summary's error is the table's largest");
    ok(defined $where && exists $error{$where}, 'the summary names a tensor of the table');
}

my $g = json_of($fp64, '--gradcheck', minigpt_flags(%tiny));
cmp_ok($g->{max_relative_error}, '<', 1e-5, 'fp64 gradcheck --json: max_relative_error < 1e-5');
cmp_ok($g->{max_relative_error}, '>', 0, 'fp64 gradcheck --json: the error is measured, not zero');
is($g->{tensors}, 17, 'fp64 gradcheck --json: 17 tensors');
ok((grep { $_ eq $g->{worst_tensor} } @tensors), 'fp64 gradcheck --json: worst_tensor is a tensor');

{
    my ($status, $out, $err) = run($minigpt, '--gradcheck', minigpt_flags(%tiny));
    is($status, 0, 'fp32 gradcheck exits 0 under its own tolerance') or diag "$out$err";
    like($out, qr/^largest relative error \S+ in \w+ \(tolerance [^)]*\): OK$/m,
         'fp32 gradcheck: OK');
    my $g32 = json_of($minigpt, '--gradcheck', minigpt_flags(%tiny));
    cmp_ok($g32->{max_relative_error}, '<=', $g32->{tolerance},
           'fp32 gradcheck --json: within its tolerance');
    cmp_ok($g32->{tolerance}, '<=', 0.5, 'fp32 gradcheck: the tolerance is below one half');
    cmp_ok($g32->{max_relative_error}, '>', $g->{max_relative_error},
           'fp32 is coarser than fp64, as the chapter says');
}

# ------------------------------------------------------------- learning --
my $dir = tempdir(CLEANUP => 1);
{
    my $t = json_of($minigpt, '--quiet', '--log', "$dir/learn.csv");
    my $ln_v = log($t->{vocab});
    cmp_ok($t->{val_loss}, '<', 0.5 * $t->{unigram_entropy},
           "default model: validation loss $t->{val_loss} < half the unigram entropy $t->{unigram_entropy}");
    cmp_ok($t->{val_loss}, '<', $t->{bigram_entropy},
           "default model: validation loss below the bigram entropy $t->{bigram_entropy}");
    cmp_ok($t->{bigram_entropy}, '<', $t->{unigram_entropy},
           'the bigram entropy is below the unigram entropy');
    cmp_ok($t->{unigram_entropy}, '<', $ln_v, 'the unigram entropy is below ln V');
    open my $fh, '<', "$dir/learn.csv" or die;
    my @lines = <$fh>;
    chomp @lines;
    is($lines[0], 'step,lr,train_loss,val_loss,grad_norm,unigram,bigram,loss_scale,skipped', 'the log has its header');
    is(scalar(@lines) - 1, $t->{steps}, 'the log has one line per step');
    my @first = split /,/, $lines[1], -1;
    is($first[0], 1, 'the log starts at step 1');
    close_to($first[2], $ln_v, 0.1, 'the first loss is near ln V (a near-uniform start)');
    my @last = split /,/, $lines[-1], -1;
    is($last[0], $t->{steps}, 'the log ends at the last step');
    close_to($last[3], $t->{val_loss}, 1e-5, 'the last validation loss in the log is the reported one');
    my @evals = grep { (split /,/, $_, -1)[3] ne '' } @lines[1 .. $#lines];
    is(scalar @evals, int($t->{steps} / 50) + ($t->{steps} % 50 ? 1 : 0),
       'a validation loss every 50 steps and at the end');
}

# The entropies, counted here from the language's own text (vocabulary 16,
# so each token prints as its own character).
{
    my $t = json_of($minigpt, qw(--quiet --steps 1), minigpt_flags(%tiny));
    my ($status, $text) = run($minigpt, qw(--sample 300000), minigpt_flags(%tiny));
    $text =~ s/\n//g;
    my @tok = split //, $text;
    my (%one, %pair, %first);
    $one{$_}++ for @tok;
    for my $i (1 .. $#tok) {
        $pair{"$tok[$i-1]$tok[$i]"}++;
        $first{$tok[$i-1]}++;
    }
    my $n = @tok;
    my $uni = -sum(map { $_ / $n * log($_ / $n) } values %one);
    my $bi = -sum(map { $pair{$_} / ($n - 1) * log($pair{$_} / $first{substr $_, 0, 1}) }
                  keys %pair);
    close_to($t->{unigram_entropy}, $uni, 0.02, "unigram entropy agrees with a count here ($uni)");
    close_to($t->{bigram_entropy}, $bi, 0.03, "bigram entropy agrees with a count here ($bi)");
}

# ---------------------------------------------------------- determinism --
{
    my @train = (qw(--quiet --steps 30), minigpt_flags(%tiny),
                 '--machine', root() . '/build/machine.json');
    my @s = map { (run($minigpt, @train, '--save', "$dir/det$_.ckpt"))[0] } 1, 2;
    is_deeply(\@s, [0, 0], 'two identical runs succeed');
    is(-s "$dir/det1.ckpt/rank00000.shard",
       32 * 8 + 3 * 4 * minigpt_params(%tiny) + 8,
       "a one-process checkpoint's shard is the 30-word header, one run, "
       . 'three arrays of N floats and the checksum');
    same_checkpoints("$dir/det1.ckpt", "$dir/det2.ckpt",
                     'two identical runs write byte-identical checkpoints');
    run($minigpt, @train, '--seed', 2, '--save', "$dir/seed2.ckpt");
    different_checkpoints("$dir/det1.ckpt", "$dir/seed2.ckpt",
                          'another --seed gives another checkpoint');
    run($minigpt, @train, '--lr', '0.001', '--save', "$dir/lr.ckpt");
    different_checkpoints("$dir/det1.ckpt", "$dir/lr.ckpt",
                          'another --lr gives another checkpoint');
}

# ------------------------------------------------- FLOPs and parameters --
for my $shape (\%tiny,
               { layers => 3, hidden => 32, heads => 4, seq => 12, batch => 4, vocab => 24 },
               { layers => 1, hidden => 40, heads => 5, seq => 16, batch => 3, vocab => 50 }) {
    my %c = %$shape;
    my ($L, $C, $H, $T, $B, $V) = @c{qw(layers hidden heads seq batch vocab)};
    my $name = "L=$L C=$C H=$H T=$T B=$B V=$V";
    my $r = json_of($minigpt, qw(--quiet --steps 3 --eval-every 3), minigpt_flags(%c));
    my $N = minigpt_params(%c);
    my $matmul = $L * 12 * $C**2 + $C * $V;
    is($r->{params}, $N, "$name: params from the shapes ($N)");
    is($r->{matmul_params}, $matmul, "$name: matrix parameters L·12C² + CV");
    is($r->{tokens_per_step}, $B * $T, "$name: tokens per step B·T");
    close_to($r->{flops_per_step},
             6 * $matmul * $B * $T + 6 * $L * $C * ($T + 1) * $B * $T, 1e-12,
             "$name: counted FLOPs = 6·(matrix params)·BT + 6·L·C·(T+1)·BT");
    close_to($r->{flops_six_n_per_step}, 6 * $N * $B * $T, 1e-12, "$name: 6N per step");
    is($r->{state_bytes}, 16 * $N, "$name: training state is 16 B per parameter");
    my $formula = 64 * $T * $B * $C + 4 * $H * $T**2 * $B;
    is($r->{activation_formula_per_layer}, $formula, "$name: 64sbh + 4as²b");
    is($r->{activation_bytes_per_layer} - $formula, 16 * $B * $T,
       "$name: kept per layer = formula + the layer norms' mean and rstd (16·B·T B)");
    is($r->{activation_bytes},
       $L * ($formula + 16 * $B * $T) + 4 * (2 * $B * $T * $C + 3 * $B * $T + $B * $T * $V),
       "$name: all activations = layers + embeddings, final norm, probabilities, losses");
    is($r->{backward_buffer_bytes}, 4 * (14 * $B * $T * $C + $B * $T * $V + $T),
       "$name: one layer's gradient buffers");

    # Micro-batches change the order of additions, not the arithmetic.
    if ($B % 2 == 0) {
        my $m = json_of($minigpt, qw(--quiet --steps 3 --eval-every 3 --micro-batches 2),
                        minigpt_flags(%c));
        is($m->{flops_per_step}, $r->{flops_per_step},
           "$name: two micro-batches count the same FLOPs");
    }
}

# -------------------------------------------------------------- verify --
# The bound on max |dgrad| follows from the element-wise test
# |g - ref| <= atol + rtol·|ref|: no difference can exceed
# atol + rtol·max|ref|, and max|ref| is the gradcheck table's largest entry
# (the same weights and the same first batch).
{
    my %v = (layers => 2, hidden => 32, heads => 4, seq => 16, batch => 8, vocab => 32);
    my (undef, $table) = run($minigpt, '--gradcheck', minigpt_flags(%v));
    my $gmax = max($table =~ /^\w+\s+([-+.\de]+)\s+[-+.\de]+\s*$/mg);
    ok(defined $gmax && $gmax > 0, "largest gradient of the batch: $gmax");
    for my $k (1, 2, 4, 8) {
        my ($status, $out, $err) = run($minigpt, '--verify', '--micro-batches', $k,
                                       minigpt_flags(%v));
        is($status, 0, "--verify --micro-batches $k exits 0") or diag $err;
        # The loss is at most about 2 ln V, twice a uniform guess's.
        my $verdict = verify_ok("--verify --micro-batches $k", $out,
                                loss => 2 * log($v{vocab}), grad => $gmax);
        my $per = $v{batch} / $k;
        my $pieces = $k == 1 ? 'micro-batch' : 'micro-batches';
        like($out, qr/against 1 replica × $k $pieces of $per\n/,
             "--verify --micro-batches $k: says what it compared");
        next unless $verdict;
        cmp_ok($verdict->{atol}, '<=', 1e-5, 'the absolute tolerance is tight');
        cmp_ok($verdict->{rtol}, '<=', 1e-3, 'the relative tolerance is tight');
        is($verdict->{dgrad}, 0, '--micro-batches 1 is the reference itself: no difference')
            if $k == 1;
    }
    my $j = json_of($minigpt, qw(--verify --micro-batches 4), minigpt_flags(%v));
    is($j->{result}, 'OK', '--verify --json: result OK');
    is($j->{micro_batches}, 4, '--verify --json: micro_batches');
    cmp_ok($j->{max_dgrad}, '<=', $j->{atol} + $j->{rtol} * $gmax, '--verify --json: max_dgrad bounded');
    cmp_ok($j->{max_dloss}, '<=', $j->{atol} + $j->{rtol} * 2 * log($v{vocab}),
           '--verify --json: max_dloss bounded');
}

# -------------------------------------------------------------- sample --
# Tokens: full stop, space, copy bar, then letters; with vocabulary 16 the
# letters are a to m. Words come from a lexicon of 24, two to five letters;
# a sentence is two to five words; a copy repeats the sentence after a bar.
{
    my ($status, $out, $err) = run($minigpt, qw(--sample 20000 --vocab 16));
    is($status, 0, '--sample exits 0');
    is($err, '', '--sample: nothing on stderr');
    my @lines = split /\n/, $out, -1;
    is(pop @lines, '', '--sample ends with a newline');
    ok(!(grep { length($_) > 72 } @lines), '--sample: lines of at most 72 characters');
    (my $text = $out) =~ s/\n//g;
    is(length $text, 20000, '--sample 20000 prints 20,000 characters');
    like($text, qr/\A[. |a-m]+\z/, '--sample: only the language\'s characters');
    my @sentences = split /\./, $text;
    pop @sentences unless $text =~ /\.\z/;        # a cut-off last sentence
    my (%words, $bad_copy, $bad_length, $bad_count);
    for my $s (@sentences) {
        my ($plain, $copy, @more) = split /\|/, $s, -1;
        $bad_copy++ if @more || (defined $copy && $copy ne $plain);
        my @w = split / /, $plain, -1;
        $bad_count++ if @w < 2 || @w > 5;
        for (@w) { $words{$_}++; $bad_length++ if length($_) < 2 || length($_) > 5 }
    }
    ok(@sentences > 100, 'the sample has many sentences');
    ok(!$bad_copy, 'every copy repeats its sentence exactly');
    ok(!$bad_count, 'sentences are two to five words');
    ok(!$bad_length, 'words are two to five letters');
    cmp_ok(scalar keys %words, '<=', 24, 'at most 24 distinct words (the lexicon)');
    my $copies = grep { /\|/ } @sentences;
    my $share = $copies / @sentences;
    ok($share > 0.4 && $share < 0.6, "about half the sentences are copied ($share)");

    my ($s1, $one) = run($minigpt, qw(--sample 1 --vocab 16));
    is($one, substr($out, 0, 1) . "\n", '--sample 1 prints the first character alone');
    my (undef, $again) = run($minigpt, qw(--sample 20000 --vocab 16));
    is($again, $out, '--sample is deterministic');
    my (undef, $other) = run($minigpt, qw(--sample 20000 --vocab 16 --seed 7));
    isnt($other, $out, '--sample with another --seed is another text');
    my (undef, $wide) = run($minigpt, qw(--sample 3000 --vocab 24));
    (my $w = $wide) =~ s/\n//g;
    is(length $w, 3000, '--sample 3000 --vocab 24: 3,000 characters');
    like($w, qr/\A[. |a-u]+\z/, '--vocab 24: letters a to u only');
}

# The text explains the fp32 check's errors by rounding: its largest errors
# are named, and they must be the tensors with the smallest gradients.
SKIP: {
    my $fp32 = slurp(root() . '/build/transcripts/06-gradcheck-fp32.txt');
    my $tex = root() . '/build/numbers/06-gradcheck.tex';
    skip 'chapter 6 has not run (make)', 3 unless defined $fp32 && -f $tex;
    my %m = %{ read_macros($tex) };
    my (%g, %e);
    while ($fp32 =~ /^(\w+)\s+([0-9.]+e[-+]\d+)\s+([0-9.]+e[-+]\d+)$/mg) {
        ($g{$1}, $e{$1}) = ($2, $3);
    }
    my @by_e = sort { $e{$b} <=> $e{$a} } keys %e;
    my @by_g = sort { $g{$a} <=> $g{$b} } keys %g;
    is($m{GradcheckSingleMaxRelativeError}, sprintf('%.3g\\,\\%%', 100 * $e{$by_e[0]}),
       'the text quotes the largest fp32 error of the transcript');
    my @named = ($m{GradcheckSingleWorstTensors} // '') =~ /\\texttt\{([^}]+)\}/g;
    s/\\_/_/g for @named;
    ok(@named >= 2, 'at least two tensors are named as the worst');
    is_deeply([sort @named], [sort @by_g[0 .. $#named]],
              'the named tensors are those with the smallest gradients')
        and is_deeply([sort @named], [sort @by_e[0 .. $#named]],
                      '... and those with the largest errors');
}

# The report prints the two losses to the same precision (0.930, not 0.93).
SKIP: {
    my $train = slurp(root() . '/build/transcripts/06-train.txt');
    skip 'chapter 6 has not run (make)', 1 unless defined $train;
    my ($t, $v) = $train =~ /^loss\s+= (\S+) train, (\S+) validation/m;
    my $figures = sub { (my $x = $_[0] // '') =~ s/^[0.]+//; $x =~ s/\.//; length $x };
    ok(defined $v && $figures->($t) == 3 && $figures->($v) == 3,
       "the training and validation losses both have three figures ($t, $v)");
}

done_testing();
