#!/usr/bin/perl
# Chapter 12, minigpt --precision: the bytes held per parameter against
# counts made here from the model's N; the loss scaler's state machine
# (forced overflows halve the scale and skip the step, clean windows double
# it), read from the log; fp32 unchanged by the new flags; a bf16 run
# resumed from its checkpoint ends as the uninterrupted run does; --verify
# for bf16 and fp16 with the tolerance recomputed here; the gradient
# histogram's counts; the refusals.
#
# Run after `make build/bin/minigpt`:  prove -v tests/12-precision.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
ok(-x $minigpt, 'minigpt is built') or BAIL_OUT('run make build/bin/minigpt');

my %tiny = (layers => 2, hidden => 16, heads => 2, seq => 8, batch => 2,
            vocab => 16);
my @tiny = (minigpt_flags(%tiny), '--quiet');
my $N = minigpt_params(%tiny);
my $dir = tempdir(CLEANUP => 1);

sub train { return json_of($minigpt, @tiny, @_) }

# The log's rows as hashes, by the header's names.
sub log_rows {
    my ($path) = @_;
    open my $fh, '<', $path or die "$path: $!";
    chomp(my @lines = <$fh>);
    my @names = split /,/, shift @lines;
    return map { my %row; @row{@names} = split /,/, $_, -1; \%row } @lines;
}

# ------------------------------------------------------ the bytes held --
# bf16 and fp16: 2 + 2 + 4 + 8 bytes; fp32 gradients 2 + 4 + 4 + 8;
# fp32: 4 + 4 + 8, the weights their own master.
my %want = (
    fp32 => { weights => 4, gradients => 4, master_weights => 0,
              master_gradients => 0, moments => 8 },
    bf16 => { weights => 2, gradients => 2, master_weights => 4,
              master_gradients => 0, moments => 8 },
    'bf16 --fp32-grads' => { weights => 2, gradients => 0,
              master_weights => 4, master_gradients => 4, moments => 8 },
);
$want{fp16} = $want{bf16};
for my $case (sort keys %want) {
    my ($precision, @more) = split ' ', $case;
    my $r = train(qw(--steps 1 --precision), $precision, @more);
    my $per = 0;
    for my $kind (sort keys %{ $want{$case} }) {
        is($r->{bytes_held}{$kind}, $want{$case}{$kind} * $N,
           "$case: $kind hold $want{$case}{$kind} bytes a parameter");
        $per += $want{$case}{$kind};
    }
    is($r->{bytes_per_param}, $per, "$case: $per bytes a parameter in all");
    is($r->{params}, $N, "$case: N is the model's");
    is($r->{precision}, $precision, "$case: the report names $precision");
}

# ---------------------------------------------------- fp32 is unchanged --
{
    my $plain = train(qw(--steps 3 --log), "$dir/plain.csv");
    my $named = train(qw(--steps 3 --precision fp32 --log), "$dir/named.csv");
    is($named->{val_loss}, $plain->{val_loss},
       '--precision fp32 is the reference, to the last bit');
    my @rows = log_rows("$dir/plain.csv");
    is(scalar(grep { $_->{loss_scale} == 1 && $_->{skipped} == 0 } @rows), 3,
       'fp32 logs a loss scale of 1 and no skipped step');
    is_deeply($plain->{loss_scale}, { initial => 1, final => 1,
                                      skipped_steps => 0, growths => 0 },
              'fp32 reports no loss scaling');
    my $bf16 = train(qw(--steps 3 --precision bf16));
    isnt($bf16->{val_loss}, $plain->{val_loss}, 'bf16 rounds: it differs');
    close_to($bf16->{val_loss}, $plain->{val_loss}, 0.01,
             'bf16 ends within 1 % of fp32 after three steps');
}

# ---------------------------------------------------- the loss scaler --
# An initial scale of 2^40 overflows fp16: each step is skipped and halves
# the scale until it fits; then the steps are taken.
{
    my $r = train(qw(--steps 30 --precision fp16 --loss-scale 1099511627776
                     --log), "$dir/overflow.csv");
    my @rows = log_rows("$dir/overflow.csv");
    my $skipped = grep { $_->{skipped} } @rows;
    cmp_ok($skipped, '>', 0, "a scale of 2^40 overflows ($skipped skipped)");
    cmp_ok($skipped, '<', 30, '... and then fits');
    is($r->{loss_scale}{skipped_steps}, $skipped,
       'the report counts the skipped steps of the log');
    my $ok = 1;                    # the log keeps 9 significant digits
    for my $i (0 .. $#rows - 1) {
        my $next = $rows[$i]{loss_scale} / ($rows[$i]{skipped} ? 2 : 1);
        $ok &&= abs($rows[$i + 1]{loss_scale} / $next - 1) < 1e-8;
    }
    ok($ok, 'each skipped step halves the scale, and only those');
    ok($rows[0]{skipped} && $rows[1]{skipped},
       'the first steps, at 2^40, are skipped');
    is($r->{loss_scale}{final}, 2**(40 - $skipped),
       'the final scale is 2^40 halved once per skipped step');
    like($rows[0]{grad_norm}, qr/inf|nan/i,
         'a skipped step logs a norm that is not finite');
}
# A window of 3 clean steps doubles the scale: 1, 1, 1, 2, 2, 2, 4, ...
{
    my $r = train(qw(--steps 10 --precision bf16 --loss-scale-window 3
                     --log), "$dir/growth.csv");
    my @scales = map { $_->{loss_scale} } log_rows("$dir/growth.csv");
    is_deeply(\@scales, [1, 1, 1, 2, 2, 2, 4, 4, 4, 8],
              'the scale doubles after every window of 3 clean steps');
    is($r->{loss_scale}{growths}, 3, 'three growths in ten steps');
    is($r->{loss_scale}{final}, 8, 'the final scale is 2^3');
}
# Plain fp16: the scale stays 1 and nothing is skipped.
{
    my $r = train(qw(--steps 4 --precision fp16 --no-loss-scaling --log),
                  "$dir/plain16.csv");
    my @rows = log_rows("$dir/plain16.csv");
    is(scalar(grep { $_->{loss_scale} == 1 && !$_->{skipped} } @rows), 4,
       '--no-loss-scaling: a scale of 1 and no skipped step');
    is($r->{loss_scale}{initial}, 1, '--no-loss-scaling starts at 1');
    is(train(qw(--steps 1 --precision fp16))->{loss_scale}{initial}, 65536,
       'fp16 starts at 2^16 by default');
}
# A fixed scale: --no-loss-scaling --loss-scale S keeps S, even one that
# overflows (the step is taken, not skipped), and one below 1.
for my $s (2**-3, 2**40) {
    my $r = train(qw(--steps 4 --precision fp16 --no-loss-scaling
                     --loss-scale), $s, '--log', "$dir/fixed.csv");
    my @rows = log_rows("$dir/fixed.csv");
    is(scalar(grep { abs($_->{loss_scale} / $s - 1) < 1e-8   # 9 digits
                     && !$_->{skipped} } @rows), 4,
       "--no-loss-scaling --loss-scale $s: every step at $s, none skipped");
    is($r->{loss_scale}{final}, $s, "... and it ends at $s");
}
# A power of two inside bf16's range changes no bit of a bf16 run: the
# loss is multiplied by 2^-14 before the backward pass and the gradient
# divided by it in the step, both exactly. In fp16 the same S flushes
# gradients to zero, and the run differs.
{
    my @base = qw(--steps 5 --eval-every 5 --no-loss-scaling);
    my $tiny = 2**-14;
    my %bf;
    for my $s (1, $tiny) {
        train(@base, qw(--precision bf16 --loss-scale), $s, '--log',
              "$dir/bf-$s.csv", '--save', "$dir/bf-$s");
        $bf{$s} = [map { join ',', @{$_}{qw(step train_loss val_loss
                                             grad_norm skipped)} }
                   log_rows("$dir/bf-$s.csv")];
    }
    is_deeply($bf{$tiny}, $bf{1}, 'bf16 at S = 2^-14: every step\'s loss '
              . 'and gradient norm are those of S = 1');
    same_checkpoints("$dir/bf-1", "$dir/bf-$tiny", '... and the '
                     . 'checkpoints, master weights and moments, are the '
                     . 'same bytes');
    my $half = train(@base, qw(--precision fp16));
    my $half_small = train(@base, qw(--precision fp16 --loss-scale), $tiny);
    isnt($half_small->{val_loss}, $half->{val_loss},
         'fp16 at S = 2^-14 does not: its small gradients flush to zero');
}

# ------------------------------------------------- checkpoint and resume --
{
    my @run = qw(--steps 6 --precision bf16 --eval-every 6);
    my $whole = train(@run, '--save', "$dir/ck", qw(--save-every 3
                      --keep-checkpoints 2));
    my $half = "$dir/ck.step000003";
    ok(-d $half, 'a bf16 run saves its checkpoints');
    my $resumed = train(@run, '--resume', $half);
    is($resumed->{val_loss}, $whole->{val_loss}, 'a bf16 run resumed from '
       . 'its fp32 master weights ends as the uninterrupted run, to the bit');
    my $fp32 = train(qw(--steps 6 --eval-every 6 --resume), $half);
    ok(defined $fp32->{val_loss}, 'an fp32 run resumes a bf16 checkpoint');
}

# ------------------------------------------------------------- --verify --
for my $case ([bf16 => 8], [fp16 => 11]) {
    my ($precision, $p) = @$case;
    my ($status, $out) = run($minigpt, @tiny, '--verify', '--precision',
                             $precision);
    is($status, 0, "--verify --precision $precision passes");
    my $L = $tiny{layers};
    my ($loss_tol) = $out =~ /tolerance \(6L \+ 1\)·2u = (\S+),/;
    my ($grad_tol) = $out =~ /tolerance \(12L \+ 3\)·2u = (\S+),/;
    close_to($loss_tol, (6 * $L + 1) * 2 * 2**-$p, 5e-3,     # 3 digits
             "$precision: the loss's tolerance is (6L + 1)·2u, u = 2^-$p");
    close_to($grad_tol, (12 * $L + 3) * 2 * 2**-$p, 5e-3,
             "$precision: the gradient's is (12L + 3)·2u");
    my $v = json_of($minigpt, @tiny, '--verify', '--precision', $precision);
    is($v->{unit_roundoff}, 2**-$p, "$precision: u = 2^-$p");
    cmp_ok($v->{relative_dgrad_norm}, '>', 0,
           "$precision: the gradient differs from fp32's");
    cmp_ok($v->{relative_dgrad_norm}, '<=', $v->{grad_tolerance},
           "$precision: ... within the tolerance");
}
{
    my ($status, $out) = run($minigpt, @tiny, qw(--verify --precision fp16
                             --loss-scale 1099511627776));
    is($status, 1, '--verify fails when the fp16 gradient overflows');
    like($out, qr/overflowed/, '... and says so');
}

# ------------------------------------------------- the gradient histogram --
for my $precision (qw(fp32 fp16)) {
    my $path = "$dir/histogram-$precision.csv";
    train(qw(--steps 2 --precision), $precision, '--grad-histogram', $path);
    open my $fh, '<', $path or die "$path: $!";
    chomp(my @lines = <$fh>);
    is(shift @lines, 'exponent,param_grads,activation_grads',
       "$precision histogram: its header");
    my ($params, $activations, @exponents) = (0, 0);
    for (@lines) {
        my ($e, $p, $a) = split /,/;
        $params += $p;
        $activations += $a;
        push @exponents, $e if $e =~ /^-?\d+$/;
    }
    is($params, $N, "$precision histogram: the weights' gradients count N");
    cmp_ok($activations, '>', 0, "$precision histogram: and activations'");
    is_deeply(\@exponents, [$exponents[0] .. $exponents[-1]],
              "$precision histogram: one row per exponent, in order");
    like($lines[-1], qr/^zero,\d+,\d+$/, "$precision histogram: zeros last");
}

# ------------------------------------------------------------ refusals --
refused('an unknown format', qr/--precision: unknown "fp64"/,
        $minigpt, @tiny, qw(--precision fp64));
refused('--fp32-grads in fp32', qr/--fp32-grads and the loss-scale flags/,
        $minigpt, @tiny, '--fp32-grads');
refused('--loss-scale in fp32', qr/loss-scale flags are for --precision/,
        $minigpt, @tiny, qw(--loss-scale 8));
refused('--no-loss-scaling with --loss-scale-window',
        qr/keeps the scale fixed; drop --loss-scale-window/,
        $minigpt, @tiny, qw(--precision fp16 --no-loss-scaling
                            --loss-scale-window 8));
refused('--precision bf16 with --zero', qr/--zero, --gradcheck and --dump/,
        $minigpt, @tiny, qw(--precision bf16 --zero 1));
refused('--grad-histogram with micro-batches', qr/one micro-batch/,
        $minigpt, @tiny, qw(--micro-batches 2 --grad-histogram),
        "$dir/h.csv");
refused('--precision bf16 on two ranks', qr/trains on one rank/,
        mpiexec(2, $minigpt, @tiny, qw(--dp 2 --precision bf16)));
done_testing();
