#!/usr/bin/perl
# Chapter 6's --verify and a number that is not a number. A NaN compares
# false with everything, so a check written "fail where d > tolerance"
# lets it through. A mutated copy of code/minigpt/parallel_linear.c
# writes a NaN into one element of a column-parallel layer's input
# gradient, which the backward pass spreads into the weights' gradients:
# --verify must fail at the first gradient, and its largest gradient
# difference must be printed as nan, not as the largest of the numbers
# that are still numbers. The unmutated trainer passes the same check.
# Run after `make build/bin/minigpt`:  prove -v tests/06-verify-nan.t
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
                          vocab => 24), qw(--batch 4 --quiet --verify));

my ($status, $out, $err) = run("$root/build/bin/minigpt", @tiny);
is($status, 0, 'the trainer passes --verify') or diag($out . $err);
like($out, qr/^verify: max \|dloss\| = \S+, max \|dgrad\| = [0-9.e+-]+$/m,
     '... and prints its largest gradient difference as a number');

my $dir = tempdir(CLEANUP => 1);
my @recipe = link_recipe('build/bin/minigpt');
my $object = 'build/obj/minigpt/parallel_linear.o';
like($recipe[1], qr/\Q$object\E/, "minigpt links $object");
my $program = build_mutant({ recipe => \@recipe,
    target => 'build/bin/minigpt', object => $object,
    source => 'code/minigpt/parallel_linear.c', name => 'a NaN gradient',
    from => qr/f_backward\(din, \(size_t\)N \* C, tp\);/,
    to => 'f_backward(din, (size_t)N * C, tp); din[0] = __builtin_nan("");',
    dir => $dir });
($status, $out, $err) = run($program, @tiny);
is($status, 1, 'a NaN in the gradients: --verify fails (exit 1)')
  or diag($out . $err);
like($out, qr/^verify: max \|dloss\| = \S+, max \|dgrad\| = -?nan$/m,
     '... and prints the largest gradient difference as nan')
  or diag($out);
like($out, qr/: FAIL$/m, '... and says FAIL');
done_testing();
