#!/usr/bin/perl
# tests/09-lab.t: the lab of chapter 9, `make lab LAB=tp`: column- and
# row-parallel linear layers graded against the unsplit layer.
#
# The solution passes all twenty checks, each printed as it should be (the
# skeleton's failure is tests/00-labs.t's, with every lab's); the skeleton
# leaves the multiplies and the collectives to the student; three broken
# solutions, made here from
# the solution by one substitution each, fail exactly the checks that their
# mistake should fail: f's all-reduce forgotten (the column layer's input
# gradient), g's all-reduce on MPI_COMM_WORLD instead of the group (the row
# layer's output, at t = 2 only, where there are two groups), and the bias
# added on every rank before the sum (the row layer's output). When the
# chapter's own code/minigpt/parallel_linear.c exists, it passes as well.
#
# Run after `make` (or at least `make programs`):  prove -v tests/09-lab.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use Test::More;

my $root = root();

# The objects the autograder links are this build's: under `make
# check-sanitize` they were compiled with SANITIZE=1, and make lab must
# say so too, or it would rebuild them without the sanitizers.
my $cflags = slurp("$root/build/obj/cflags") // '';
my @sanitize = $cflags =~ /-fsanitize/ ? ('SANITIZE=1') : ();

# grade FILE: make lab LAB=tp on FILE (relative to the root), copied as
# parallel_linear.c into a folder of its own; returns (status, stdout,
# stderr, { check => [PASS|FAIL, ...] }) where each check's list is in the
# order t = 2, t = 4.
my $out_root = 'build/lab-test/09';
sub grade {
    my ($file) = @_;
    (my $tag = $file) =~ s{[/.]}{-}g;
    my $work = "$root/$out_root/$tag";
    remove_tree($work);
    make_path($work);
    copy("$root/$file", "$work/parallel_linear.c") or die "$file: $!";
    # Four ranks: the run waits its turn (mpi_turn).
    my ($status, $out, $err) = run(mpi_turn(4, 'make', '-s',
        '--no-print-directory', '-C', $root, 'lab', 'LAB=tp', @sanitize,
        "WORK=$work", "LAB_OUT=$out_root/$tag-out"));
    # The grader's lines, not the driver's summary after them.
    (my $grader = $out) =~ s/^lab tp: .*//ms;
    my %verdict;
    while ($grader =~ /^  (PASS|FAIL)  (\S+ +\S+ +\S+(?: \(\S+(?:, \S+)?\))?)/mg) {
        my ($word, $check) = ($1, $2);
        $check =~ s/ +/ /g;
        push @{ $verdict{$check} }, $word;
    }
    return ($status, $out, $err, \%verdict);
}

# The checks that fail, as "name at t = T".
sub failing {
    my ($verdict) = @_;
    my @t = (2, 4);
    my @failed;
    for my $check (keys %$verdict) {
        my @runs = @{ $verdict->{$check} };
        push @failed, map { $runs[$_] eq 'FAIL' ? "$check at t = $t[$_]" : () }
                          0 .. $#runs;
    }
    return [sort @failed];
}

# ------------------------------------------------------------- solution ----
my ($status, $out, $err, $verdict) = grade('solutions/labs/tp/parallel_linear.c');
is($status, 0, 'the solution passes the autograder') or diag("$out$err");
like($out, qr/^score: 20\/20$/m, '... with 20 of 20 checks');
like($out, qr/^lab tp: 20 of 20 checks passed$/m, '... and make lab says so');
like($out, qr/^lab-tp: OK$/m, '... and says OK');
is(scalar(keys %$verdict), 10, 'ten checks, each run at t = 2 and t = 4')
    or diag(join "\n", sort keys %$verdict);
is_deeply(failing($verdict), [], 'no check fails');
like($out, qr/^t = 2: 2 groups of 2 ranks$/m, 't = 2 runs as two groups');
like($out, qr/^t = 4: 1 group of 4 ranks$/m, 't = 4 runs as one group');
my @diffs = $out =~ /largest difference (\S+)/g;
is(scalar(@diffs), 16, 'eight numeric checks per t print their largest difference');
ok(!(grep { $_ !~ /^[0-9.e+-]+$/ || $_ > 1e-5 * 10 } @diffs),
   'every difference is a number within the tolerance');
like($out, qr/tolerance 1e-05 x the/, 'the tolerance is stated');

# ------------------------------------------------------------- skeleton ----
my $skeleton = slurp("$root/exercises/labs/tp/parallel_linear.c") // '';
cmp_ok(scalar(() = $skeleton =~ /TODO/g), '>=', 3, 'the TODOs are marked');
like($skeleton, qr/#include "parallel_linear\.h"/, 'the skeleton includes parallel_linear.h');
for my $f (qw(column_parallel_forward column_parallel_backward
              row_parallel_forward row_parallel_backward)) {
    like($skeleton, qr/^void \Q$f\E\(/m, "the skeleton defines $f");
}
(my $skeleton_code = $skeleton) =~ s{/\*.*?\*/}{}gs;
unlike($skeleton_code, qr/MPI_Allreduce\(|matmul_(?:forward|backward)\(/,
       'the skeleton leaves the multiplies and the collectives to the student');

# ------------------------------------------------------ broken solutions ----
my $solution = slurp("$root/solutions/labs/tp/parallel_linear.c") // '';
my %broken = (
    'no-f' => [qr/^ *all_reduce\(din, .*\n/m, "    (void)tp;\n",
               ['column backward din (N, C) at t = 2',
                'column backward din (N, C) at t = 4']],
    'world' => [qr/all_reduce\(out, \(size_t\)N \* OC, tp\);/,
                '(void)tp; all_reduce(out, (size_t)N * OC, MPI_COMM_WORLD);',
                ['row forward out (N, OC) at t = 2']],
    'bias' => [qr/\bin, w, NULL, N, Cl\b/, 'in, w, bias, N, Cl',
               ['row forward out (N, OC) at t = 2',
                'row forward out (N, OC) at t = 4']],
);
make_path("$root/$out_root/broken");
for my $name (sort keys %broken) {
    my ($pattern, $replacement, $fails) = @{ $broken{$name} };
    (my $text = $solution) =~ s/$pattern/$replacement/ or do {
        fail("broken '$name': the solution has the line it changes"); next };
    my $file = "$out_root/broken/$name.c";
    write_file("$root/$file", $text);
    ($status, $out, $err, $verdict) = grade($file);
    isnt($status, 0, "broken '$name' fails the autograder");
    unlike($err, qr/error:/, "broken '$name' compiles") or diag($err);
    is_deeply(failing($verdict), $fails, "broken '$name' fails just where its mistake is")
        or diag($out);
}

# A layer that crashes: the run stops, and the last line still says FAIL.
{
    (my $text = $solution) =~ s{matmul_forward\(ws, out, in, w, bias, N, C, OCl, flops\);}
        {(void)ws; (void)out; (void)in; (void)w; (void)bias; (void)N; (void)C;
         (void)OCl; (void)flops; abort();} or
        fail('crash: the solution has the line it changes');
    $text =~ s{#include <stddef.h>}{#include <stddef.h>\n#include <stdlib.h>};
    my $file = "$out_root/broken/crash.c";
    write_file("$root/$file", $text);
    ($status, $out, $err) = grade($file);
    isnt($status, 0, 'a layer that crashes fails the autograder');
    like($out, qr/^  FAIL  the run stopped with status \d+ \(a crash\)\nscore: 0\/20\nlab-tp: FAIL$/m,
         '... says the run crashed, and scores it') or diag("$out$err");
    like($out, qr/^lab tp: 0 of 20 checks passed$/m, '... and so does make lab');
}

# ---------------------------------------------------- the chapter's file ----
SKIP: {
    skip 'code/minigpt/parallel_linear.c is not there yet', 2
        unless -e "$root/code/minigpt/parallel_linear.c";
    ($status, $out, $err) = grade('code/minigpt/parallel_linear.c');
    is($status, 0, "the chapter's parallel_linear.c passes the autograder")
        or diag("$out$err");
    like($out, qr/^lab-tp: OK$/m, '... and says OK');
}

# ---------------------------------------------------------------- README ----
my $readme = slurp("$root/exercises/labs/tp/README.md") // '';
like($readme, qr/^    make lab LAB=tp$/m, 'README says how to grade');
like($readme, qr/\*\*f\*\*/, 'README names the f operator');
like($readme, qr/\*\*g\*\*/, '... and the g operator');

done_testing();
