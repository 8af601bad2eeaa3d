#!/usr/bin/perl
# tests/10-lab.t: the lab of chapter 10, `make lab LAB=1f1b`: the 1F1B
# order of a pipeline stage's operations, checked on a grid of pipelines
# and then trained with against the reference.
#
# The solution passes all eight checks (six of the order, two of the
# gradients; the skeleton's failure is tests/00-labs.t's, with every
# lab's); three broken solutions, made here from the solution by one
# substitution each, fail exactly the checks of the order that their
# mistake should fail, and the trainer is not run on them; a solution that
# crashes fails with a last line that says so. The chapter's own 1F1B order
# passes the checks of the order too: the lab's properties are the
# chapter's schedule.
#
# Run after `make` (or at least `make programs`):  prove -v tests/10-lab.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use Test::More;

my $root = root();

# The objects the lab links are this build's: under `make check-sanitize`
# they were compiled with SANITIZE=1, and make lab must say so too, or
# it would rebuild them without the sanitizers.
my $cflags = slurp("$root/build/obj/cflags") // '';
my @sanitize = $cflags =~ /-fsanitize/ ? ('SANITIZE=1') : ();

# grade FILE: make lab LAB=1f1b on FILE (relative to the root), copied as
# one_f_one_b.c into a folder of its own, built in lab_dir(FILE); returns
# (status, stdout, stderr, { check => PASS|FAIL }), the six checks of the
# order by name and the two runs as "gradients, p = P".
my $out_root = 'build/lab-test/10';
sub lab_dir {
    (my $tag = $_[0]) =~ s{[/. ]}{-}g;
    return "$out_root/$tag";
}
sub grade {
    my ($file) = @_;
    my $work = "$root/" . lab_dir($file) . '-work';
    remove_tree($work);
    make_path($work);
    copy("$root/$file", "$work/one_f_one_b.c") or die "$file: $!";
    # Up to four ranks: the run waits its turn (mpi_turn).
    my ($status, $out, $err) = run(mpi_turn(4, 'make', '-s',
        '--no-print-directory', '-C', $root, 'lab', 'LAB=1f1b', @sanitize,
        "WORK=$work", 'LAB_OUT=' . lab_dir($file)));
    my %verdict;
    while ($out =~ /^  (PASS|FAIL)  (.+?) {2,}on /mg) {
        $verdict{$2} = $1;
    }
    while ($out =~ /^  (PASS|FAIL)  mpiexec -n (\d+) minigpt --pp \2 /mg) {
        $verdict{"gradients, p = $2"} = $1;
    }
    return ($status, $out, $err, \%verdict);
}

sub failing {
    my ($verdict) = @_;
    return [sort grep { $verdict->{$_} eq 'FAIL' } keys %$verdict];
}

my @order_checks = ('each of the 2m operations once',
                    'forwards in order, backwards in order',
                    'every backward after its forward',
                    'warm-up: min(p - r, m) forwards first',
                    'then one backward, one forward, ...',
                    'at most min(p - r, m) in flight');
my @runs = ('gradients, p = 2', 'gradients, p = 4');

# ------------------------------------------------------------- solution ----
my $solution_file = 'solutions/labs/1f1b/one_f_one_b.c';
my ($status, $out, $err, $verdict) = grade($solution_file);
is($status, 0, 'the solution passes the autograder') or diag("$out$err");
like($out, qr/^score: 8\/8$/m, '... with 8 of 8 checks');
like($out, qr/^lab 1f1b: 8 of 8 checks passed$/m, '... and make lab says so');
like($out, qr/^lab-1f1b: OK$/m, '... and says OK');
is_deeply([sort keys %$verdict], [sort @order_checks, @runs],
          'six checks of the order and two runs of the trainer')
    or diag(join "\n", sort keys %$verdict);
is_deeply(failing($verdict), [], 'no check fails');
like($out, qr/^  PASS  each of the 2m operations once +on all 576 stages$/m,
     'the order is checked on 576 stages (p = 1 .. 8, m = 1 .. 16)');
like($out, qr/^  stage 1: F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5$/m,
     'stage 1 of p = 4, m = 6 is printed in the 1F1B order');
like($out, qr/^  stage 3: F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5$/m,
     '... and the last stage alternates from the start');
like($out, qr/^  PASS  mpiexec -n 4 minigpt --pp 4 --schedule 1f1b --micro-batches 8 --verify$/m,
     'the trainer runs the order on 4 stages with --verify');
{
    my $dir = "$root/" . lab_dir($solution_file);
    for my $p (2, 4) {
        my $v = slurp("$dir/verify-$p.txt") // '';
        verify_ok("the solution's order, --pp $p", $v);
    }
}

# ------------------------------------------------------------- skeleton ----
{
    my ($s, $dry) = run('make', '-n', '-C', $root, 'lab-grade-1f1b',
                        'LAB_WORK=x', 'LAB_OUT=y', @sanitize);
    like($dry, qr{-Dpipeline_order=chapter_pipeline_order[\s\\]+-c\s+code/common/pipeline_schedule\.c},
         "the chapter's pipeline_order is renamed, not copied");
}

my $skeleton = slurp("$root/exercises/labs/1f1b/one_f_one_b.c") // '';
cmp_ok(scalar(() = $skeleton =~ /TODO/g), '>=', 4, 'the TODOs are marked');
like($skeleton, qr/#include "one_f_one_b\.h"/, 'the skeleton includes one_f_one_b.h');
like($skeleton, qr/^void order_1f1b\(const Pipeline \*p, int r, PipeOp \*ops\)$/m,
     'the skeleton defines order_1f1b');
(my $skeleton_code = $skeleton) =~ s{/\*.*?\*/}{}gs;
unlike($skeleton_code, qr/ops\[n\+\+\]|while \(/,
       'the skeleton leaves the loops to the student');

# ------------------------------------------------------ broken solutions ----
my $solution = slurp("$root/$solution_file") // '';
my %broken = (
    # one forward too many in the warm-up
    'warm-up' => [qr/p->stages - r - 1 < m \? p->stages - r - 1 : m/,
                  'p->stages - r < m ? p->stages - r : m',
                  ['at most min(p - r, m) in flight',
                   'then one backward, one forward, ...',
                   'warm-up: min(p - r, m) forwards first']],
    # GPipe: every forward first
    'gpipe' => [qr/int warmup = [^;]*;/, 'int warmup = m + 0 * r;',
                ['at most min(p - r, m) in flight',
                 'then one backward, one forward, ...',
                 'warm-up: min(p - r, m) forwards first']],
    # the steady phase's backward before its forward
    'backward first' => [qr/(ops\[n\+\+\] = op\(PIPE_FORWARD, f\+\+\);)(\n\s*)(ops\[n\+\+\] = op\(PIPE_BACKWARD, b\+\+\);)/,
                         '$3$2$1',
                         ['every backward after its forward',
                          'then one backward, one forward, ...',
                          'warm-up: min(p - r, m) forwards first']],
);
make_path("$root/$out_root/broken");
for my $name (sort keys %broken) {
    my ($pattern, $replacement, $fails) = @{ $broken{$name} };
    (my $text = $solution) =~ s/$pattern/"\"$replacement\""/ee or do {
        fail("broken '$name': the solution has the line it changes"); next };
    (my $file = "$out_root/broken/$name.c") =~ s/ /-/g;
    write_file("$root/$file", $text);
    ($status, $out, $err, $verdict) = grade($file);
    isnt($status, 0, "broken '$name' fails the autograder");
    unlike($err, qr/error:/, "broken '$name' compiles") or diag($err);
    is_deeply(failing($verdict), [sort @$fails, @runs],
              "broken '$name' fails just where its mistake is, and is not trained")
        or diag($out);
    like($out, qr/^          p = \d+, m = \d+, stage \d+: /m,
         "broken '$name': the first failing stage is named");
}

# The trainer the lab builds runs the student's order, not the chapter's:
# built with the GPipe order above, asked for 1F1B, it holds every
# micro-batch on both stages (1F1B: 2 on the first, 1 on the last).
for my $case (["$out_root/broken/gpipe.c", '4,4', "the GPipe order"],
              [$solution_file, '2,1', "the solution's order"]) {
    my ($file, $want, $what) = @$case;
    my $dir = lab_dir($file);
    my ($s, $json, $e) = run(mpiexec(2, "$root/$dir/minigpt-lab",
        qw(--layers 4 --hidden 32 --heads 4 --seq 16 --vocab 24 --batch 8
           --pp 2 --schedule 1f1b --micro-batches 4 --steps 1
           --eval-every 1000 --quiet --json)));
    is($s, 0, "the lab's trainer trains with $what") or diag($e);
    (my $pattern = quotemeta $want) =~ s/\\,/[ ,]/g;   # "4 4" or "4,4"
    like($json, qr/"peak_inflight_per_stage": "$pattern"/,
         "... and holds $want micro-batches on its stages");
}

# A solution that crashes: the checker stops, and the last line says FAIL.
{
    (my $text = $solution) =~ s{int m = p->micro_batches;}
        {int m = p->micro_batches;\n    if (m > 3) abort();} or
        fail('crash: the solution has the line it changes');
    $text =~ s{#include "one_f_one_b.h"}{#include <stdlib.h>\n\n#include "one_f_one_b.h"};
    my $file = "$out_root/broken/crash.c";
    write_file("$root/$file", $text);
    ($status, $out, $err) = grade($file);
    isnt($status, 0, 'an order that crashes fails the autograder');
    like($out, qr/^  FAIL  the order's checker stopped with status \d+ \(a crash\)$/m,
         '... says the checker crashed') or diag("$out$err");
    like($out, qr/^score: 0\/8\nlab-1f1b: FAIL$/m, '... and scores nothing');
}

# ------------------------------------------------ the chapter's own order ----
# The chapter's pipeline_order for SCHEDULE_1F1B, wrapped as the student's
# function, passes the six checks: they describe the schedule the trainer
# and the simulator use.
{
    my $file = "$out_root/broken/chapter.c";
    open my $fh, '>', "$root/$file" or die "$file: $!";
    print $fh <<'EOF';
/* The chapter's own 1F1B order as the lab's function. */
#include "one_f_one_b.h"

void chapter_pipeline_order(const Pipeline *p, int r, PipeOp *ops);

void order_1f1b(const Pipeline *p, int r, PipeOp *ops)
{
    chapter_pipeline_order(p, r, ops);
}
EOF
    close $fh;
    ($status, $out, $err, $verdict) = grade($file);
    is_deeply([grep { $verdict->{$_} ne 'PASS' } @order_checks], [],
              "the chapter's 1F1B order passes the six checks")
        or diag("$out$err");
}

# ---------------------------------------------------------------- README ----
my $readme = slurp("$root/exercises/labs/1f1b/README.md") // '';
like($readme, qr/^    make lab LAB=1f1b$/m, 'README says how to grade');
like($readme, qr/p - r - 1/, 'README names the warm-up');

done_testing();
