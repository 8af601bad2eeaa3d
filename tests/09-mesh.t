#!/usr/bin/perl
# tests/09-mesh.t: the mesh of Chapter 9. minigpt --print-mesh prints, for
# every rank, its coordinates, each axis's communicator as the world ranks it
# holds (in the communicator's own order) and its pipeline neighbours; for
# layouts of 1, 2 and 4 ranks these must be what the rank order (tensor
# innermost, then pipeline, then data) says. Layouts that do not fit are
# refused on every rank with one line and exit status 2. The gradient's
# norm, which the clip sums over the world, is the same on every layout. And
# the trainer's data-parallel and ZeRO code takes its communicators from the
# mesh: no file of minigpt but main.c names MPI_COMM_WORLD, and the training
# loop, the checkpoints and the program never ask for a ZeRO stage.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp ();
use Test::More;

my $minigpt = root() . '/build/bin/minigpt';
ok(-x $minigpt, 'minigpt is built') or BAIL_OUT('no minigpt');
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @tiny = (qw(--layers 2 --hidden 32 --heads 4 --seq 16 --batch 8 --vocab 32),
            '--machine', root() . '/build/machine.json');

# What the mesh must be: rank = t_r + t (p_r + p d_r); an axis's
# communicator holds the ranks equal in the other two coordinates, in the
# order of its own coordinate; the pipeline's ends have no neighbour.
sub expected {
    my ($t, $p, $d, $r) = @_;
    my ($tr, $pr, $dr) = ($r % $t, int($r / $t) % $p, int($r / ($t * $p)));
    my $at = sub { my ($x, $y, $z) = @_; $x + $t * ($y + $p * $z) };
    my @tp = map { $at->($_, $pr, $dr) } 0 .. $t - 1;
    my @pp = map { $at->($tr, $_, $dr) } 0 .. $p - 1;
    my @dp = map { $at->($tr, $pr, $_) } 0 .. $d - 1;
    my $prev = $pr > 0 ? $r - $t : '-';
    my $next = $pr < $p - 1 ? $r + $t : '-';
    return sprintf 'rank %d: tp %d of %d [%s], pp %d of %d [%s], dp %d of %d '
      . '[%s], prev %s, next %s', $r, $tr, $t, join(',', @tp), $pr, $p,
      join(',', @pp), $dr, $d, join(',', @dp), $prev, $next;
}

for my $case ([1, 1, 1, 1, []], [2, 1, 1, 2, [qw(--dp 2)]],
              [2, 2, 1, 1, [qw(--tp 2)]], [4, 2, 1, 2, [qw(--tp 2 --dp 2)]],
              [4, 4, 1, 1, [qw(--tp 4)]], [4, 1, 1, 4, [qw(--dp 4)]],
              [4, 2, 2, 1, [qw(--tp 2 --pp 2)]],
              [4, 1, 2, 2, [qw(--pp 2 --dp 2)]],
              [4, 2, 1, 2, [qw(--tp 2)]]) {          # --dp inferred: 2
    my ($n, $t, $p, $d, $flags) = @$case;
    my $name = "$n " . ($n == 1 ? 'rank' : 'ranks') . ", @$flags";
    my ($status, $out, $err) = run(mpiexec($n, $minigpt, @tiny, @$flags,
                                           '--print-mesh'));
    is($status, 0, "$name: --print-mesh exits 0") or diag $err;
    like($out, qr/^mesh: --tp $t × --pp $p × --dp $d on $n ranks?$/m,
         "$name: the layout is $t × $p × $d");
    my @lines = $out =~ /^(rank \d+: .*)$/mg;
    is_deeply(\@lines, [map { expected($t, $p, $d, $_) } 0 .. $n - 1],
              "$name: every rank's coordinates, communicators and "
              . 'neighbours, in rank order')
      or diag $out;
}

# Layouts that do not fit the ranks.
for my $case ([2, 'no layout on 2 ranks', qr/--dp 1 disagrees with the 2 ranks/,
               ()],
              [4, 'a product of 6 on 4 ranks',
               qr/--tp 2 × --pp 1 × --dp 3 asks for 6 ranks; mpiexec started 4/,
               qw(--tp 2 --dp 3)],
              [4, '--tp 3 on 4 ranks',
               qr/--tp 3 × --pp 1 does not divide the 4 ranks started by mpiexec/,
               qw(--tp 3)],
              [2, '--tp 2 --dp 2 on 2 ranks', qr/asks for 4 ranks/,
               qw(--tp 2 --dp 2)],
              [2, '--tp 0', qr/--tp/, qw(--tp 0)],
              [2, '--pp -1', qr/--pp/, qw(--pp -1)],
              [2, '--dp 0', qr/--dp/, qw(--dp 0)]) {
    my ($n, $name, $pattern, @flags) = @$case;
    refused($name, $pattern, mpiexec($n, $minigpt, @tiny, @flags,
                                      qw(--steps 2 --quiet)));
}

# One clip for every layout: the gradient's norm, summed over the world from
# what each rank owns, with a tensor that the tensor axis holds whole counted
# once, is the one rank's. A learning rate of 0.05 makes the norm exceed the
# clip of 1, so that clipping acts on the steps that follow.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my @train = (@tiny, qw(--lr 0.05 --steps 3 --eval-every 1000 --quiet));
    my %norms;
    for my $case (['1 rank', 1], ['--tp 2', 2, qw(--tp 2)],
                  ['--tp 2 --dp 2 --zero 1', 4, qw(--tp 2 --dp 2 --zero 1)],
                  ['--dp 2 --zero 3', 2, qw(--dp 2 --zero 3)],
                  ['--pp 2 (Chapter 10)', 2, qw(--pp 2)]) {
        my ($name, $n, @flags) = @$case;
        (my $file = "$dir/$name.csv") =~ s/ /_/g;
        my ($status, undef, $err) = run(mpiexec($n, $minigpt, @train, @flags,
                                                '--log', $file));
        is($status, 0, "$name: trains") or diag $err;
        $norms{$name} = [map { (split /,/)[4] } grep { /^\d/ }
                         split /\n/, slurp($file) // ''];
    }
    my $one = $norms{'1 rank'};
    ok(@$one == 3 && $one->[0] > 1, 'the first norm exceeds the clip of 1')
      or diag "@$one";
    for my $name (grep { $_ ne '1 rank' } sort keys %norms) {
        my $same = @{ $norms{$name} } == 3;
        for my $i (0 .. 2) {
            $same &&= abs($norms{$name}[$i] - $one->[$i])
                      <= 1e-4 * abs($one->[$i]);
        }
        ok($same, "$name: the gradient's norm of every step is one rank's")
          or diag "@{ $norms{$name} } against @$one";
    }
}

# The data-parallel and ZeRO code takes its communicators from the mesh.
my @files = glob(root() . '/code/minigpt/*.c');
ok(scalar @files > 10, 'the trainer\'s files are there');
for my $file (@files) {
    my $text = slurp($file);
    my @uses = $text =~ /^(.*MPI_COMM_WORLD.*)$/mg;
    if ($file =~ m{/main\.c$}) {
        is(scalar(grep { !/MPI_Comm_(rank|size)\(MPI_COMM_WORLD|mesh_init\(/ }
                  @uses), 0, 'main.c names MPI_COMM_WORLD only to join MPI '
                  . 'and lay out the mesh')
          or diag join "\n", @uses;
    } else {
        (my $name = $file) =~ s{.*/}{};
        is(scalar @uses, 0, "$name does not name MPI_COMM_WORLD");
    }
}

# One table of functions, chosen once: the loop, the checkpoints and the
# program never branch on the ZeRO stage, and dp.c calls nothing of zero.c.
for my $name (qw(train.c state.c main.c)) {
    my $text = slurp(root() . "/code/minigpt/$name");
    unlike($text, qr/(\.|->)stage\b/, "$name never asks for a ZeRO stage");
}
unlike(slurp(root() . '/code/minigpt/dp.c'), qr/sharded_|zero_stages/,
       'dp.c calls nothing of zero.c');
done_testing();
