#!/usr/bin/perl
# tests/06-solutions.t: the worked solutions to chapter 6's
# exercises (the reference trainer, minigpt) and its lab.
#
# For every exercise this test runs minigpt with the exercise's inputs and
# compares the fields the solution relies on with the same quantities worked
# out here from the model's shapes: parameter counts, FLOP counts, activation
# bytes and checkpoint sizes must agree exactly, since they are counts. What
# a build measures (losses, timings) cannot be recomputed here, so for those
# the test checks that the claims the solutions' prose makes hold for the
# numbers the solution script printed (build/solutions/06-*); no timing is
# compared with another (which is faster is for `make bench`): where the prose
# compares two timings, the script words it from its data, and this test
# checks that the wording matches the numbers. It also checks that the
# numbers the script derived from files (a profile, a log, a checkpoint) are
# what those files say. It checks the lab's skeleton and README
# (tests/00-labs.t grades the lab), that the exercises give no answers away,
# and, once the solutions volume includes chapter 6, that build/solutions.pdf
# prints every heading.
#
# Run after `make`:  prove -v tests/06-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep);

my $root      = root();
my $minigpt   = "$root/build/bin/minigpt";
my $minigpt64 = "$root/build/bin/minigpt-fp64";
my $sols      = "$root/build/solutions";
my $tmp       = tempdir(CLEANUP => 1);

for my $bin ($minigpt, $minigpt64) {
    ok(-x $bin, "$bin exists") or BAIL_OUT("no $bin: run make in $root first");
}
ok(-s "$sols/06-ex1.tex", 'the solution script has run (build/solutions/06-*)')
    or BAIL_OUT('no build/solutions/06-ex1.tex: run make first');

# ------------------------------------------------------------- running ----
# minigpt's report for these flags, decoded; undef (with a diagnostic) when
# the run fails. (run and json_of are FleetTest's: a crash reads as 128 +
# its signal, never as exit status 0.)
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second.
sub report {
    my ($bin, @flags) = @_;
    my $r = eval { json_of($bin, '--quiet', '--machine',
                           "$root/build/machine.json", @flags) };
    diag($@) unless $r;
    return $r;
}

# The macros the solution script wrote: name => value.
my %macro = %{ read_macros("$sols/06-*.tex") };
sub number_of {    # a grouped count from a macro: "90,288" => 90288
    my ($name) = @_;
    my $v = $macro{$name};
    return undef unless defined $v;
    $v =~ s/,//g;
    return $v;
}

# ------------------------------------------------------ first principles ----
# The model's shapes, as chapter 6 lays out the seventeen parameter tensors
# and the activations kept for the backward pass.
sub config {
    my (%a) = @_;
    return { L => 2, C => 64, H => 4, T => 64, V => 32, B => 8, %a };
}

sub flags_of {
    my ($m) = @_;
    return ('--layers', $m->{L}, '--hidden', $m->{C}, '--heads', $m->{H},
            '--seq', $m->{T}, '--vocab', $m->{V}, '--batch', $m->{B});
}

sub params {
    my ($m) = @_;
    return minigpt_params(layers => $m->{L}, hidden => $m->{C}, seq => $m->{T},
                          vocab => $m->{V});
}

sub matmul_params {
    my ($m) = @_;
    return $m->{L} * 12 * $m->{C} ** 2 + $m->{C} * $m->{V};
}

sub tokens { my ($m) = @_; return $m->{B} * $m->{T} }

sub flops_matmul    { my ($m) = @_; return 6 * matmul_params($m) * tokens($m) }
sub flops_attention {
    my ($m) = @_;
    return 6 * $m->{L} * $m->{C} * ($m->{T} + 1) * tokens($m);
}
sub flops_six_n { my ($m) = @_; return 6 * params($m) * tokens($m) }

# Bytes of activations, four to a number: per layer sixteen (B, T, C)-sized
# tensors, four statistics per position and the (B, H, T, T) probabilities;
# outside the layers the embeddings' output and the final layer norm, its
# statistics, the losses, and the (B, T, V) probabilities.
sub activations_per_layer {
    my ($m) = @_;
    my ($B, $T, $C, $H) = @$m{qw(B T C H)};
    return 4 * (16 * $B * $T * $C + 4 * $B * $T + $B * $H * $T * $T);
}

sub activations {
    my ($m) = @_;
    my ($B, $T, $C, $V, $L) = @$m{qw(B T C V L)};
    return $L * activations_per_layer($m)
         + 4 * (2 * $B * $T * $C + 3 * $B * $T + $B * $T * $V);
}

# Korthikanti's formula as the chapter adapts it: 64 sbh + 4 a s^2 b.
sub korthikanti {
    my ($m) = @_;
    return 64 * $m->{B} * $m->{T} * $m->{C}
         + 4 * $m->{H} * $m->{T} ** 2 * $m->{B};
}

# A one-process checkpoint's shard: 30 header words and a run of 2, weights
# and two moments, an 8-byte hash.
sub checkpoint_bytes {
    my ($n, $bytes_per_number) = @_;
    return 32 * 8 + 3 * $n * $bytes_per_number + 8;
}

sub same_count {    # counts held in doubles: exact, whatever their size
    my ($got, $want, $name) = @_;
    my $ok = defined $got && $got == $want;
    ok($ok, $name) or diag(sprintf "  got %s, want %.0f", $got // 'undef', $want);
}

# ------------------------------------------------------------------ 3.1 ----
my $small = config(L => 3, C => 48, H => 6, T => 32, V => 40);
{
    my $r = report($minigpt, flags_of($small), '--steps', 1);
    same_count($r->{params}, params($small), '3.1: parameters from the shapes');
    is(params($small), 90288, '3.1: ... which is 90,288');
    same_count($r->{matmul_params}, matmul_params($small),
               '3.1: weight-matrix parameters');
    same_count($r->{state_bytes}, 16 * params($small),
               '3.1: training state at 16 B per parameter');
    my $r3 = report($minigpt, flags_of({ %$small, H => 3 }), '--steps', 1);
    same_count($r3->{params}, params($small),
               '3.1: the heads do not change the parameter count');
    same_count(number_of('SolThreeAParams'), params($small),
               '3.1: the solution prints that count');
}

# ------------------------------------------------------------------ 3.2 ----
{
    my (%r, %m);
    for my $T (64, 128, 256) {
        $m{$T} = config(T => $T);
        $r{$T} = report($minigpt, '--seq', $T, '--steps', 1);
        same_count($r{$T}{params}, params($m{$T}), "3.2 T=$T: parameters");
        same_count($r{$T}{flops_matmul_per_step}, flops_matmul($m{$T}),
                   "3.2 T=$T: matrix FLOPs per step");
        same_count($r{$T}{flops_attention_per_step}, flops_attention($m{$T}),
                   "3.2 T=$T: attention FLOPs per step, 6LC(T+1) per token");
        same_count($r{$T}{flops_per_step},
                   flops_matmul($m{$T}) + flops_attention($m{$T}),
                   "3.2 T=$T: the count is the sum of the two terms");
        same_count($r{$T}{flops_six_n_per_step}, flops_six_n($m{$T}),
                   "3.2 T=$T: 6N per step");
    }
    # The prose: at T = 64 the over-charge of 6N on the parameters that do
    # no multiply and the attention it leaves out are of the same size...
    my $m = $m{64};
    my $overcharge = 6 * (params($m) - matmul_params($m)) * tokens($m);
    my $attention = flops_attention($m);
    cmp_ok(abs($overcharge - $attention) / $attention, '<', 0.1,
           '3.2: 6N\'s two errors nearly cancel at the default context');
    # ... and 6N falls further below the count as T grows.
    my @ratio = map { flops_matmul($m{$_}) + flops_attention($m{$_}) }
                (64, 128, 256);
    $ratio[$_] /= flops_six_n($m{ (64, 128, 256)[$_] }) for 0 .. 2;
    ok($ratio[0] < $ratio[1] && $ratio[1] < $ratio[2],
       '3.2: counted / 6N grows with the context');
    ok(flops_six_n($m{128}) > 2 * flops_six_n($m{64}),
       '3.2: 6N per step more than doubles (the position embedding grows)');
}

# ------------------------------------------------------------------ 3.3 ----
# T + 1 = 12 C + V / L, for the default model and for four layers.
for my $case ([default => config(B => 1)], [deep => config(B => 1, L => 4)]) {
    my ($name, $m) = @$case;
    my $T = 12 * $m->{C} + $m->{V} / $m->{L} - 1;
    $m->{T} = $T;
    is(flops_attention($m), flops_matmul($m),
       "3.3 $name: at T = $T the two terms are equal by the formula");
    my $r = report($minigpt, flags_of($m), '--steps', 1);
    same_count($r->{flops_attention_per_step}, $r->{flops_matmul_per_step},
               "3.3 $name: ... and in the trainer's count");
    same_count($r->{flops_attention_palm_per_step},
               2 * $T / ($T + 1) * $r->{flops_attention_per_step},
               "3.3 $name: the full-square convention counts 2T/(T+1) times more");
    my $prefix = $name eq 'default' ? 'SolThreeCCross' : 'SolThreeCDeep';
    is($macro{"${prefix}Seq"}, $T, "3.3 $name: the solution runs T = $T");
}

# ------------------------------------------------------------------ 3.4 ----
{
    my %r;
    for my $B (1, 2, 4, 8) {
        my $m = config(B => $B);
        $r{$B} = report($minigpt, '--batch', $B, '--steps', 1);
        same_count($r{$B}{activation_bytes_per_layer}, activations_per_layer($m),
                   "3.4 B=$B: activations per layer from the shapes");
        same_count($r{$B}{activation_bytes}, activations($m),
                   "3.4 B=$B: all activations from the shapes");
        same_count($r{$B}{activation_formula_per_layer}, korthikanti($m),
                   "3.4 B=$B: the adapted Korthikanti formula");
        same_count($r{$B}{activation_bytes_per_layer}
                       - $r{$B}{activation_formula_per_layer},
                   16 * $B * $m->{T}, "3.4 B=$B: the gap is the layer-norm statistics");
        same_count($r{$B}{activation_bytes}, $B * $r{1}{activation_bytes},
                   "3.4 B=$B: linear in the batch");
    }
    my $micro = report($minigpt, '--batch', 8, '--micro-batches', 4,
                       '--steps', 1);
    same_count($micro->{activation_bytes}, activations(config(B => 2)),
               '3.4: four micro-batches of eight hold the activations of two');
    same_count($micro->{micro_batch}, 2, '3.4: ... and say so');
    same_count($micro->{flops_per_step}, $r{8}{flops_per_step},
               '3.4: ... and the FLOPs per step');
    same_count($micro->{state_bytes}, $r{8}{state_bytes},
               '3.4: ... and the training state');
    same_count($r{2}{activation_bytes}, activations(config(B => 2)),
               '3.4: one micro-batch of two needs the --batch 2 activations');
    my $v = report($minigpt, '--verify', '--batch', 8, '--micro-batches', 4);
    is($v->{result}, 'OK', '3.4: --verify --micro-batches 4 agrees with the reference');
}

# ------------------------------------------------------------------ 3.5 ----
{
    # Training is deterministic: the default run gives the loss the solution
    # printed, to the three figures it printed.
    my $r = report($minigpt);
    is(sprintf('%.3g', $r->{val_loss}), $macro{SolThreeEBaseValLoss},
       '3.5: the default run reproduces the solution\'s validation loss');
    ok($r->{val_loss} < $r->{bigram_entropy}
       && $r->{bigram_entropy} < $r->{unigram_entropy},
       '3.5: validation loss < bigram entropy < unigram entropy');
    my ($slow, $base, $fast, $bigram) =
        map { $macro{$_} } qw(SolThreeESlowValLoss SolThreeEBaseValLoss
                              SolThreeEFastValLoss SolThreeEBaseBigramEntropy);
    ok(defined $slow && $slow > $bigram,
       '3.5: at --lr 3e-4 the model is still above the bigram entropy');
    ok(defined $fast && $fast < $base,
       '3.5: at --lr 3e-2 it goes below the default run');
    # The steps the script read off the log.
    my ($below_u, $below_b);
    open(my $log, '<', "$sols/06-ex5-loss.csv") or die "no loss log: $!";
    <$log>;
    while (<$log>) {
        my @f = split /,/;
        $below_u //= $f[0] if $f[2] < $f[5];
        $below_b //= $f[0] if $f[2] < $f[6];
    }
    is($macro{SolThreeEBelowUnigram}, $below_u,
       '3.5: first step below the unigram entropy, as the log says');
    is($macro{SolThreeEBelowBigram}, $below_b,
       '3.5: first step below the bigram entropy, as the log says');
    ok($below_u < $below_b, '3.5: the unigram entropy is passed first');
}

# ------------------------------------------------------------------ 3.6 ----
{
    my @tiny = qw(--gradcheck --layers 2 --hidden 16 --heads 2 --seq 8
                  --batch 2 --vocab 16);
    my ($status, $table) = run($minigpt, @tiny);
    is($status, 0, '3.6: the single-precision check passes its loose tolerance');
    my %error = $table =~ /^(\w+)\s+\S+\s+(\S+)$/mg;
    my %gradient = $table =~ /^(\w+)\s+(\S+)\s+\S+$/mg;
    my ($worst) = sort { $error{$b} <=> $error{$a} } keys %error;
    like($worst // '', qr/^ln/, '3.6: the worst fp32 tensor is a layer norm\'s');
    ok($gradient{$worst} < 1e-2 * $gradient{wte},
       '3.6: ... whose gradients are a hundred times smaller than the embedding\'s');
    ok((grep { $error{$_} < 1e-2 } qw(wte wpe head_w)) == 3,
       '3.6: the embeddings and the head agree to a fraction of a per cent');
    ok($error{proj_b} > $error{wte} && $error{fcproj_b} > $error{wte},
       '3.6: the output biases miss by more than the embeddings');
    my $r64 = report($minigpt64, @tiny);
    ok($r64 && $r64->{max_relative_error} <= $r64->{tolerance},
       '3.6: the double-precision check passes');
    ok($r64 && $r64->{max_relative_error} < 1e-5 && $r64->{max_relative_error} > 1e-12,
       '3.6: ... with errors far above 1e-16');
    like($macro{SolThreeFSingleWorstTensor} // '', qr/^ln/,
         '3.6: the solution\'s worst fp32 tensor is a layer norm\'s');
}

# ------------------------------------------------------------------ 3.7 ----
{
    my $n = params($small);
    my $ckpt = "$tmp/small.ckpt";
    my ($status) = run($minigpt, '--quiet', flags_of($small), '--steps', 2,
                       '--save', $ckpt);
    is($status, 0, '3.7: two steps with --save');
    is(-s "$ckpt/rank00000.shard", checkpoint_bytes($n, 4),
       '3.7: shard size = 32 x 8 + 3 N x 4 + 8');
    ($status) = run($minigpt64, '--quiet', flags_of($small), '--steps', 2,
                    '--save', "$tmp/small64.ckpt");
    is(-s "$tmp/small64.ckpt/rank00000.shard", checkpoint_bytes($n, 8),
       '3.7: in double precision, 32 x 8 + 3 N x 8 + 8');
    same_count(number_of('SolThreeGFileBytes'), checkpoint_bytes($n, 4),
               '3.7: the solution\'s file size');
    same_count(number_of('SolThreeGPredictedBytes'), checkpoint_bytes($n, 4),
               '3.7: the solution\'s prediction');
    same_count(number_of('SolThreeGDoublePredictedBytes'), checkpoint_bytes($n, 8),
               '3.7: the solution\'s double-precision prediction');
    my $bytes = slurp("$ckpt/rank00000.shard");
    my $changed = $bytes;
    substr($changed, 1000, 1) = chr(ord(substr($changed, 1000, 1)) ^ 1);
    for my $case (['short', substr($bytes, 0, length($bytes) - 1)],
                  ['changed', $changed]) {
        my ($name, $shard) = @$case;
        mkdir "$tmp/$name.ckpt" or die;
        write_file("$tmp/$name.ckpt/manifest", slurp("$ckpt/manifest"));
        open my $fh, '>:raw', "$tmp/$name.ckpt/rank00000.shard" or die;
        print $fh $shard;
        close $fh;
    }
    for my $case ([$minigpt64, $ckpt, qr/4-byte numbers/, 'the fp32 file in fp64'],
                  [$minigpt, "$tmp/short.ckpt", qr/truncated/, 'a byte short'],
                  [$minigpt, "$tmp/changed.ckpt", qr/checksum/, 'a byte changed']) {
        my ($bin, $file, $why, $label) = @$case;
        my ($s, undef, $err) = run($bin, '--quiet', flags_of($small),
                                   '--steps', 3, '--resume', $file);
        is($s, 2, "3.7: $label is refused with status 2");
        like($err, $why, "3.7: $label: the message says why");
    }
    # The solution's own transcript shows the same three reasons, each after
    # the command that was refused, and no other complaint.
    my $transcript = slurp("$sols/06-ex7.txt") // '';
    like($transcript, qr/4-byte numbers.*truncated.*checksum/s,
         '3.7: the solution\'s transcript shows the three refusals, in order');
    unlike($transcript, qr/cannot read|No such file/,
           '3.7: ... and nothing that failed for another reason');
    is(scalar(() = $transcript =~ /^  \$ minigpt(-fp64)? /mg), 3,
       '3.7: ... each after the command that ran');
}

# ------------------------------------------------------------------ 3.8 ----
{
    my $steps = 120;
    my @run = ($minigpt, '--quiet', '--steps', $steps);
    run(@run, '--save', "$tmp/straight.ckpt");
    # kill -9 after the first periodic checkpoint appears; the step it holds
    # is header word 9. Try again should the run finish first.
    my $at;
    for my $attempt (1 .. 3) {
        system('rm', '-rf', "$tmp/killed.ckpt");
        my $pid = fork // die "fork: $!";
        if ($pid == 0) {
            open STDOUT, '>', '/dev/null';
            open STDERR, '>', '/dev/null';
            exec @run, '--save-every', 30, '--save', "$tmp/killed.ckpt";
            exit 127;
        }
        sleep 0.01 until -e "$tmp/killed.ckpt/manifest"
                         || waitpid($pid, WNOHANG) > 0;
        kill 'KILL', $pid;
        waitpid $pid, 0;
        my $header = substr(slurp("$tmp/killed.ckpt/rank00000.shard") // '',
                            0, 176);
        $at = length $header == 176 ? unpack('Q<', substr($header, 72, 8)) : undef;
        last if defined $at && $at < $steps;
    }
    ok(defined $at && $at < $steps && $at % 30 == 0,
       "3.8: killed with a checkpoint of step " . ($at // 'none'));
    my $r = report(@run[0, 2, 3], '--resume', "$tmp/killed.ckpt",
                   '--save', "$tmp/resumed.ckpt");
    is($r && $r->{steps}, $steps - ($at // 0), '3.8: the resumed run ran the rest');
    same_checkpoints("$tmp/straight.ckpt", "$tmp/resumed.ckpt",
       '3.8: killed and resumed gives the same bytes as a straight run');
    run($minigpt, '--quiet', '--steps', 60, '--save', "$tmp/half.ckpt");
    my ($s, undef, $e) = run(@run, '--resume', "$tmp/half.ckpt", '--save', "$tmp/lengthened.ckpt");
    is($s, 2, '3.8: a 60-step checkpoint resumed with --steps 120 is refused');
    like($e, qr/--steps 60 .*--steps 120.*--allow-schedule-change/,
         '3.8: ... with a line naming both schedules and the flag that allows it');
    ok(!-e "$tmp/lengthened.ckpt", '3.8: ... before it writes anything');
    like(slurp("$sols/06-ex8.txt") // '', qr/refused:\n.*--allow-schedule-change/s,
         '3.8: the solution shows the refusal');
    run(@run, '--resume', "$tmp/half.ckpt", '--save', "$tmp/lengthened.ckpt",
        '--allow-schedule-change');
    my ($a, $b) = map { slurp("$tmp/$_.ckpt/rank00000.shard") // '' }
                  qw(straight lengthened);
    isnt($a, $b, '3.8: with --allow-schedule-change, a 60-step schedule resumed to 120 steps differs');
    my $first = 0;
    $first++ while $first < length $a && substr($a, $first, 1) eq substr($b, $first, 1);
    is($first, 256, '3.8: ... from the first byte after the 256 bytes of '
       . 'header and run table');
    is($macro{SolThreeHSame}, 'identical', '3.8: the solution found them identical');
    is($macro{SolThreeHFirstDifference}, $first + 1,
       '3.8: the solution\'s first differing byte (counted from 1)');
    ok(($macro{SolThreeHKilledAt} // 0) > 0 && $macro{SolThreeHKilledAt} < $steps,
       '3.8: the solution resumed from a checkpoint in mid-run');
}

# ------------------------------------------------------------------ 3.9 ----
# The profile: the shares, rates and largest operation that the script read
# off its own files, and the FLOP counts against the shapes.
my %profile;
for my $case ([default => 'SolThreeIDefault', config()],
              [wide => 'SolThreeIWide', config(C => 256)]) {
    my ($name, $p, $m) = @$case;
    my $j = decode_json(slurp("$sols/06-ex9-$name.json") // '{}');
    same_count($j->{flops_matmul_per_step}, flops_matmul($m),
               "3.9 $name: matrix FLOPs per step from the shapes");
    same_count($j->{flops_attention_per_step}, flops_attention($m),
               "3.9 $name: attention FLOPs per step from the shapes");
    open(my $csv, '<', "$sols/06-ex9-$name.csv") or die "no profile: $!";
    <$csv>;
    my (%t, $sum);
    while (<$csv>) {
        chomp;
        my ($op, @s) = split /,/;
        $t{$op} = $s[0] + $s[1] + $s[2];
        $sum += $t{$op};
    }
    my ($top) = sort { $t{$b} <=> $t{$a} } keys %t;
    my $g = sub { sprintf '%.3g', shift };
    is($macro{"${p}TopOp"}, $top, "3.9 $name: the largest operation");
    is($macro{"${p}MatmulShare"}, $g->(100 * $t{matmul} / $sum) . '\\,\\%',
       "3.9 $name: the matrix multiplies' share");
    is($macro{"${p}AttentionShare"}, $g->(100 * $t{attention} / $sum) . '\\,\\%',
       "3.9 $name: attention's share");
    is($macro{"${p}MatmulRate"}, $g->($j->{flops_matmul_per_step} / $t{matmul} / 1e9),
       "3.9 $name: the matrix multiplies' GFLOP/s");
    is($macro{"${p}AttentionRate"},
       $g->($j->{flops_attention_per_step} / $t{attention} / 1e9),
       "3.9 $name: attention's GFLOP/s");
    is($macro{"${p}Mfu"}, $g->(100 * $j->{mfu}) . '\\,\\%', "3.9 $name: the MFU");
    $j->{"profile_$_"} = $t{$_} for qw(matmul attention);
    $profile{$name} = $j;
}
# Which profile's shares and MFU came out higher is a timing, and timings are
# for benchmarks (make bench), not for tests: the solution script checks the
# prose's comparisons against what its build measured and picks the words.
# This checks that the words it picked are the ones the numbers call for.
{
    my ($d, $w) = @profile{qw(default wide)};
    my $share = sub {
        my ($j, $op) = @_;
        open(my $csv, '<', "$sols/06-ex9-$j.csv") or die "no profile: $!";
        <$csv>;
        my ($t, $all) = (0, 0);
        while (<$csv>) {
            chomp;
            my ($o, @s) = split /,/;
            $all += $s[0] + $s[1] + $s[2];
            $t = $s[0] + $s[1] + $s[2] if $o eq $op;
        }
        return $t / $all;
    };
    like($macro{SolThreeIMatmulClause} // '',
         $share->('wide', 'matmul') > $share->('default', 'matmul')
             ? qr/^The time moves/ : qr/did not move/,
         '3.9: the matrices\' share is said to rise exactly when it rose');
    like($macro{SolThreeIAttentionClause} // '',
         $share->('default', 'attention') > $share->('wide', 'attention')
             ? qr/^attention down to/ : qr/not below/,
         '3.9: attention\'s share is said to fall exactly when it fell');
    like($macro{SolThreeIMfuClause} // '',
         ($w->{mfu} // 0) > ($d->{mfu} // 0) ? qr/MFU rises/ : qr/did not rise/,
         '3.9: the MFU is said to rise exactly when it rose');
    for my $j ($d, $w) {
        ok($j->{peak_from} && $j->{peak_from} =~ /machine\.json$/,
           '3.9: the peak comes from the machine file, not a measurement of '
           . 'its own');
    }
}

# ----------------------------------------------------------------- 3.10 ----
# A gradient by hand: the solution's loss and gradients, read back from what
# its NumPy program printed, against a dump made here and a stated tolerance.
{
    my @m = qw(--quiet --layers 1 --hidden 16 --heads 2 --seq 8 --batch 4 --vocab 16
               --steps 20);
    my ($s1) = run($minigpt, @m, '--save', "$tmp/ex10.ckpt");
    my ($s2, undef, $e2) = run($minigpt, @m, '--resume', "$tmp/ex10.ckpt", '--dump', "$tmp/ex10");
    is($s1 + $s2, 0, '3.10: the dump of the trained model') or diag $e2;
    my $npy = slurp("$tmp/ex10/loss.npy") // '';
    my $length = length $npy > 10 ? unpack('v', substr($npy, 8, 2)) : 0;
    my $loss = length $npy == 10 + $length + 8 ? unpack('d<', substr($npy, 10 + $length)) : undef;
    ok(defined $loss, '3.10: loss.npy holds one float64');
    is($macro{SolThreeJLossDump}, sprintf('%.9f', $loss // 0),
       '3.10: the solution read the loss of the same dump');
    my ($mine, $theirs) = map { $macro{$_} // 'nan' } qw(SolThreeJLossNumpy SolThreeJLossDump);
    ok(abs($mine - $theirs) <= 1e-6 * $theirs,
       "3.10: the solution's NumPy loss agrees to 1e-6 ($mine, $theirs)");
    for my $m (qw(Head Shift)) {
        my ($diff, $big) = map { $macro{"SolThreeJ$m$_"} // 'nan' } qw(Difference Largest);
        ok($big > 0 && $diff <= 1e-5 * $big,
           "3.10: the $m gradient by hand agrees to 1e-5 of its largest entry ($diff of $big)");
    }
}

# ------------------------------------------------------------------ lab ----
# The lab is graded by tests/00-labs.t (the solution passes, the skeleton
# fails), with every lab; here, what this lab's skeleton and README hold.
{
    my $skeleton = slurp("$root/exercises/labs/attention/attention_backward.c") // '';
    like($skeleton, qr/#include "minigpt\.h"/, 'lab: the skeleton includes minigpt.h');
    cmp_ok(scalar(() = $skeleton =~ /TODO/g), '>=', 3, 'lab: the TODOs are marked');
    my $readme = slurp("$root/exercises/labs/attention/README.md") // '';
    like($readme, qr/^    make lab LAB=attention$/m, 'lab: README says how to grade');
}

# ------------------------------------------------------- the exercise file --
my $statements = slurp("$root/exercises/06-reference.tex") // '';
(my $text = $statements) =~ s/(?<!\\)%.*$//mg;
like($text, qr/\\section\{Exercises\}/, 'exercises: a section');
unlike($text, qr/enumitem/, 'exercises: plain enumerate, no enumitem');
unlike($text, qr/\[\[/, 'exercises: no noweb quoting (the file is plain LaTeX)');
my @exercises = exercise_items("$root/exercises/06-reference.tex");
my $items = @exercises;
my ($share) = grep { $exercises[$_ - 1] =~ /\\label\{ex:attention-share\}/ } 1 .. $items;
# The chapter refers to the exercise on 6N and attention by this label.
is($share, 2, 'exercises: \label{ex:attention-share} is on Exercise 6.2');
cmp_ok($items, '>=', 7, "exercises: at least seven ($items)");
my $solution_tex = slurp("$root/solutions/06-reference.tex") // '';
my $sections = () = $solution_tex =~ /\\solthreeexercise\{\d+\}/g;
is($sections, $items, 'exercises: the solutions work every one');
# Answers that must not appear in the statements, as they would print.
my @answers = (params($small), matmul_params($small),
               12 * 64 + 32 / 2 - 1, 12 * 64 + 32 / 4 - 1,
               checkpoint_bytes(params($small), 4),
               checkpoint_bytes(params($small), 8),
               params(config()), matmul_params(config()));
(my $flat = $text) =~ s/\{,\}|\\,|~/ /g;
for my $answer (@answers) {
    my $grouped = grouped($answer);
    my @found = grep { $flat =~ /(?<![\d.,])\Q$_\E(?![\d])/ } ($answer, $grouped);
    ok(!@found, "exercises: the answer $grouped is not given away");
}

# -------------------------------------------------------- the solutions PDF --
SKIP: {
    my $master = slurp("$root/solutions/solutions.tex") // '';
    skip 'solutions/solutions.tex does not \\input chapter 6 yet', 16
        unless $master =~ /^\s*\\input\{solutions\/06-reference\.tex\}/m;
    my $pdf = "$root/build/solutions.pdf";
    my $body = eval { pdf_text($pdf, layout => 0) };
    ok(defined $body, 'solutions: pdftotext reads build/solutions.pdf') or diag($@);
    $body //= '';
    unlike($body, qr/\?\?/, 'solutions: no unresolved references');
    my $start = index($body, 'A reference trainer on one CPU');
    $body = $start < 0 ? '' : substr($body, $start);
    for my $n (1 .. 10) {
        like($body, qr/^Exercise 6\.$n$/m, "solutions: heading Exercise 6.$n");
    }
    # A few key numbers, each in the prose or a transcript of its section.
    my %section;
    my @parts = split /^(Exercise 6\.\d)$/m, $body;
    for (my $i = 1; $i < $#parts; $i += 2) { $section{ $parts[$i] } = $parts[$i + 1] }
    my %key = (
        'Exercise 6.1' => grouped(params($small)),
        'Exercise 6.3' => 12 * 64 + 32 / 2 - 1,
        'Exercise 6.7' => grouped(checkpoint_bytes(params($small), 4)),
        'Exercise 6.8' => 'identical',
    );
    for my $heading (sort keys %key) {
        like($section{$heading} // '', qr/(?<![\d,])\Q$key{$heading}\E(?![\d])/,
             "solutions: $heading prints $key{$heading}");
    }
}

done_testing();
