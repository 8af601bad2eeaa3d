#!/usr/bin/perl
# tests/00-labs.t: every lab, exercises/labs/NAME (all but common/), through
# the driver, `make lab LAB=NAME` (exercises/labs/labs.mk).
#
# For each lab: README.md's first line is "# Lab: TITLE"; lab.mk names the
# files a student edits (LAB_FILES_NAME) and has the rule lab-grade-NAME;
# the skeleton and the model solution (solutions/labs/NAME) hold those
# files; the untouched skeleton builds, runs its grader, and fails with a
# score (not a build error), without a warning; the model solution passes
# every check; and `make lab` lists the lab with its title and chapter.
# For the labs that came with the chapters, the skeleton fails where it
# should. The driver refuses an unknown lab, and says what a build failure
# is. Then the handout, build/handout.tar.gz, untarred into an empty
# folder, grades a lab on its own: the student's copy is made from the
# skeleton and fails, and with the solution's files copied in it passes.
#
# Run after `make` (or at least `make programs`):  prove -v tests/00-labs.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $labs = "$root/exercises/labs";
my @labs = grep { $_ ne 'common' && -d "$labs/$_" } files_in($labs);
cmp_ok(scalar @labs, '>=', 4, 'the labs: ' . join(' ', @labs));

# The objects the labs link are this build's: under `make check-sanitize`
# they were compiled with SANITIZE=1, and the labs must say so too, or make
# would rebuild them without the sanitizers.
my $cflags = slurp("$root/build/obj/cflags") // '';
my @sanitize = $cflags =~ /-fsanitize/ ? ('SANITIZE=1') : ();

# A lab that runs MPI ranks waits its turn (FleetTest's mpi_turn).
sub uses_mpi {
    my ($dir) = @_;
    return grep { (slurp($_) // '') =~ /\bmpiexec\b/ } glob("$dir/*");
}

# grade(DIR, NAME, OPTIONS...): make lab LAB=NAME in DIR (a checkout or a
# handout); returns (status, stdout, stderr).
sub grade {
    my ($dir, $name, @options) = @_;
    my @make = ('make', '-s', '--no-print-directory', '-C', $dir, 'lab',
                "LAB=$name", @options);
    return run(uses_mpi("$dir/exercises/labs/$name") ? mpi_turn(4, @make)
                                                     : @make);
}

# The driver's verdict: (passed, checks) from "lab NAME: k of n checks
# passed", or () when it is not there.
sub verdict {
    my ($name, $out) = @_;
    return $out =~ /^lab \Q$name\E: (\d+) of (\d+) checks passed$/m;
}

# What each skeleton of the chapters' labs must fail, beyond failing.
my %skeleton_fails = (
    attention => [qr/^  FAIL  qkv_w +largest relative error 1\.00e\+00/m],
    ring => [qr/^  PASS  allreduce +on 1 rank:/m,
             qr/^  FAIL  allreduce +on 2 ranks: \d+ wrong elements/m,
             qr/^lab ring: 3 of 12 checks passed$/m],
    tp => [qr/not finite \(left unwritten\?\)/, qr/^score: 0\/20$/m],
    '1f1b' => [qr/left unwritten\?/, qr/^score: 0\/8$/m,
               qr/^          not run: the order fails its checks$/m],
);

# The labs whose own test grades the model solution (and broken ones).
my %graded_elsewhere = (tp => 'tests/09-lab.t', '1f1b' => 'tests/10-lab.t');

my (undef, $list) = run('make', '-s', '--no-print-directory', '-C', $root,
                        'lab');
my $out_root = "build/lab-test/00";
for my $name (@labs) {
    my $dir = "$labs/$name";
    my ($title) = (slurp("$dir/README.md") // '') =~ /\A# Lab: (\S[^\n]*)\n/;
    ok(defined $title, "$name: README.md's first line is '# Lab: TITLE'");
    my $mk = slurp("$dir/lab.mk") // '';
    ok(length $mk, "$name: lab.mk is there");
    my ($files) = $mk =~ /^LAB_FILES_\Q$name\E\s*:?=\s*(.+?)\s*$/m;
    ok(defined $files, "$name: lab.mk names the student's files");
    like($mk, qr/^lab-grade-\Q$name\E\s*:/m, "$name: lab.mk has lab-grade-$name");
    my @files = split ' ', $files // '';
    for my $file (@files) {
        ok(-f "$dir/$file", "$name: the skeleton has $file");
        ok(-f "$root/solutions/labs/$name/$file",
           "$name: the solution has $file");
    }
    ok((grep { (slurp("$dir/$_") // '') =~ /TODO/ } @files),
       "$name: the skeleton marks what is left to do (TODO)");
    like($list, qr/^  \Q$name\E +chapter (\d+) +\Q@{[$title \/\/ '']}\E$/m,
         "$name: make lab lists it with its chapter and title");

    my ($status, $out, $err) = grade($root, $name, @sanitize,
        "WORK=exercises/labs/$name", "LAB_OUT=$out_root/$name-skeleton");
    isnt($status, 0, "$name: the untouched skeleton fails");
    my ($passed, $checks) = verdict($name, $out);
    ok(defined $checks && $checks > 0 && $passed < $checks,
       "$name: ... with a score, not a build error ("
       . ($checks ? "$passed of $checks" : 'none') . ')')
        or diag("$out$err");
    like($out, qr/^  FAIL  /m, "$name: ... and says what failed");
    unlike($err, qr/error:|warning:/, "$name: the skeleton compiles cleanly")
        or diag($err);
    like($out, $_, "$name: the skeleton: $_") for @{ $skeleton_fails{$name} };

    # A lab with a test of its own grades its solution there, with its
    # mistakes; grading it here again would only double the ranks' time.
    if (my $own = $graded_elsewhere{$name}) {
        like(slurp("$root/$own") // '', qr{solutions/labs/\Q$name\E/},
             "$name: $own grades the solution");
        next;
    }
    ($status, $out, $err) = grade($root, $name, @sanitize,
        "WORK=solutions/labs/$name", "LAB_OUT=$out_root/$name-solution");
    is($status, 0, "$name: the solution passes") or diag("$out$err");
    ($passed, $checks) = verdict($name, $out);
    ok(defined $checks && $checks > 0 && $passed == $checks,
       "$name: ... every check (" . ($checks ? "$passed of $checks" : 'none')
       . ')');
    unlike($out, qr/^  FAIL  /m, "$name: ... and no line says FAIL");
}

# ------------------------------------------------------------- the driver --
{
    my ($status, $out, $err) = run('make', '-s', '-C', $root, 'lab',
                                   'LAB=no-such-lab');
    is($status, 2, 'an unknown lab is refused with status 2');
    like($err, qr/^make lab: there is no lab 'no-such-lab'; the labs are: \Q@labs\E$/m,
         '... in one line that lists the labs') or diag($err);
    ($status, $out, $err) = run('make', '-s', '-C', $root, 'lab-tp',
                                'LAB=exercises/labs/tp/parallel_linear.c');
    isnt($status, 0, 'make lab-tp LAB=FILE (the old form) is refused');
    like($err, qr/LAB= names a lab now.*WORK=DIR/, '... and says to use WORK');
    my ($s, $dry) = run('make', '-n', '-C', $root, 'lab-grade-1f1b',
                        'LAB_WORK=x', 'LAB_OUT=y', @sanitize);
    like($dry, qr{-Dpipeline_order=chapter_pipeline_order[\s\\]+-c\s+code/common/pipeline_schedule\.c},
         "the 1F1B lab renames the chapter's pipeline_order, not copies it");
    like($dry, qr{-c\s+x/one_f_one_b\.c\b}, '... and compiles LAB_WORK\'s file');
}

# A lab to build from scratch: one in plain C if there is one (the
# cheapest), else the attention lab (one process, no mpiexec).
my ($plain) = grep { (slurp("$labs/$_/lab.mk") // '') !~ /MPICC/
                     && !uses_mpi("$labs/$_") } @labs;
$plain //= 'attention';

# A student's file that does not compile: a build failure, score 0.
{
    my $name = $plain;
    my $work = "$root/$out_root/broken-$name";
    remove_tree($work);
    make_path($work);
    my $mk = slurp("$labs/$name/lab.mk") // '';
    my ($files) = $mk =~ /^LAB_FILES_\Q$name\E\s*:?=\s*(.+?)\s*$/m;
    my @files = split ' ', $files // '';
    copy("$labs/$name/$_", "$work/$_") for @files;
    write_file("$work/$files[0]", (slurp("$work/$files[0]") // '')
                                  . "\nthis is not C;\n");
    my ($status, $out, $err) = grade($root, $name, @sanitize, "WORK=$work",
                                     "LAB_OUT=$out_root/broken-$name-out");
    isnt($status, 0, "$name: a file that does not compile fails");
    like($out, qr/^lab \Q$name\E: it did not build \(the messages are above\); 0 checks passed$/m,
         '... as a build failure, with 0 checks passed') or diag("$out$err");
    like($err, qr/error:/, "... and the compiler's message is shown");
}

# ----------------------------------------------------------- the handout --
{
    my ($status, $out, $err) = run('make', '-s', '-C', $root, 'handout');
    is($status, 0, 'make handout') or diag("$out$err");
    my $tar = "$root/build/handout.tar.gz";
    my (undef, $listing) = run('tar', 'tzf', $tar);
    unlike($listing, qr{(^|/)solutions/}m, 'the handout holds no solution');
    like($listing, qr{^fleet-labs/$_$}m, "the handout has $_")
        for 'Makefile', 'README.md', 'exercises/labs/labs.mk',
            'exercises/labs/common/lab_check.h',
            map { "exercises/labs/$_/lab.mk" } @labs;

    my $tmp = tempdir(CLEANUP => 1);
    ($status, $out, $err) = run('tar', 'xzf', $tar, '-C', $tmp);
    is($status, 0, 'the handout untars') or diag($err);
    my $hand = "$tmp/fleet-labs";
    ($status, $out) = run('make', '-s', '-C', $hand);
    like($out, qr/^  \Q$_\E +chapter \d+ /m, "the handout lists $_")
        for @labs;

    my $name = $plain;
    ($status, $out, $err) = grade($hand, $name);
    like($out, qr{^lab \Q$name\E: made your copy, labs/\Q$name\E/, from the skeleton}m,
         "handout: make lab LAB=$name makes the student's copy");
    ok(-d "$hand/labs/$name", "handout: ... labs/$name/");
    isnt($status, 0, "handout: the skeleton fails");
    my ($passed, $checks) = verdict($name, $out);
    ok(defined $checks && $checks > 0 && $passed < $checks,
       'handout: ... with a score') or diag("$out$err");
    copy($_, "$hand/labs/$name/") or die "$_: $!"
        for glob("$root/solutions/labs/$name/*");
    ($status, $out, $err) = grade($hand, $name);
    is($status, 0, "handout: the solution's files in labs/$name/ pass")
        or diag("$out$err");
    ($passed, $checks) = verdict($name, $out);
    ok(defined $checks && $checks > 0 && $passed == $checks,
       'handout: ... every check');
    ok(-d "$hand/build/lab/$name", "handout: it was built in the handout's own build/");
}

done_testing();
