#!/usr/bin/perl
# Chapter 9's tensor parallelism, and Chapter 6's --verify: can the check
# fail? Two mutated copies of code/minigpt/parallel_linear.c are linked as
# minigpt is, and --tp 2 --verify must fail with each:
#   - the f operator's all-reduce left out of a column-parallel layer's
#     backward pass, which the first gradient already shows;
#   - the row-parallel bias added by every rank before g's all-reduce, so
#     that it is summed over the group, which the first gradient cannot
#     show (the biases start at zero) and --verify's second gradient,
#     from the stepped weights, does.
# One rank, where neither mistake changes anything, still passes.
# Run after `make build/bin/minigpt`:  prove -v tests/09-tp-mutants.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
ok(-x "$root/build/bin/minigpt", 'build/bin/minigpt is built')
  or BAIL_OUT('run make build/bin/minigpt');
my @tiny = (minigpt_flags(layers => 2, hidden => 32, heads => 4, seq => 16,
                          vocab => 24), qw(--batch 4 --quiet));

my $dir = tempdir(CLEANUP => 1);
my @recipe = link_recipe('build/bin/minigpt');
my $object = 'build/obj/minigpt/parallel_linear.o';
like($recipe[1], qr/\Q$object\E/, "minigpt links $object");

my @mutants = (
    ['no f all-reduce', qr/f_backward\(din, \(size_t\)N \* C, tp\);/,
     ';', 'first'],
    ['bias summed over the group',
     qr/matmul_forward\(ws, out, in, w, NULL, N, Cl, OC, flops\);/,
     'matmul_forward(ws, out, in, w, bias, N, Cl, OC, flops);', 'second'],
);
for my $m (@mutants) {
    my ($mutant, $from, $to, $which) = @$m;
    my $program = build_mutant({ recipe => \@recipe,
        target => 'build/bin/minigpt', object => $object,
        source => 'code/minigpt/parallel_linear.c', name => $mutant,
        from => $from, to => $to, dir => $dir });
    my ($status, $out, $err) = run(mpiexec(2, $program, @tiny,
                                           qw(--tp 2 --verify)));
    is($status, 1, "$mutant: --tp 2 --verify fails (exit 1), "
       . "seen by the $which gradient") or diag($out . $err);
    like($out, qr/: FAIL$/m, "$mutant: and says FAIL");
    ($status, $out, $err) = run($program, @tiny, '--verify');
    is($status, 0, "$mutant: one rank still passes") or diag($out . $err);
}
done_testing();
