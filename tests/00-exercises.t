#!/usr/bin/perl
# tests/00-exercises.t: the exercises of every chapter, exercises/NN-*.tex,
# as a course uses them.
#
# Each file has at least six exercises (the top-level \items of its
# enumerate); each exercise says its kind exactly once, right after its
# title, with \exkind{numeric} (answers computed by a program and tested),
# \exkind{design} (which layout or choice, and why) or \exkind{lab} (code to
# write, or an experiment to run with the book's programs); every chapter
# has all three kinds; every chapter has a lab exercise graded by `make lab
# LAB=NAME`; and every `make lab LAB=NAME` an exercise file names is a lab,
# exercises/labs/NAME with its lab.mk. A failure names the file, the
# exercise (by number and title) and what it lacks.
#
# Reads only the sources:  prove -v tests/00-exercises.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my @files = grep { /^\d\d-.*\.tex$/ } files_in("$root/exercises");
cmp_ok(scalar @files, '>=', 14, 'an exercise file per chapter (' . @files . ')');

my %kinds = map { $_ => 1 } qw(numeric design lab);
for my $file (@files) {
    my ($chapter) = $file =~ /^0*(\d+)-/;
    my @items = eval { exercise_items("$root/exercises/$file") };
    ok(!$@, "$file: its enumerates balance") or diag($@);
    cmp_ok(scalar @items, '>=', 6, "$file: at least six exercises");
    my (%seen, @wrong);
    for my $i (1 .. @items) {
        my $item = $items[$i - 1];
        my ($title) = $item =~ /\A\s*\\textbf\{((?:[^{}]|\{[^{}]*\})*)\}/;
        my $what = "exercise $chapter.$i" . (defined $title ? " ($title)" : '');
        my @tags = $item =~ /\\exkind\{([^{}]*)\}/g;
        if (@tags != 1) {
            push @wrong, "$what has " . @tags . ' \\exkind tags, not one';
        } elsif (!$kinds{$tags[0]}) {
            push @wrong, "$what: \\exkind{$tags[0]} is not numeric, design or lab";
        } else {
            $seen{$tags[0]}++;
            push @wrong, "$what: \\exkind is not right after its title"
                unless $item =~ /\A\s*\\textbf\{(?:[^{}]|\{[^{}]*\})*\}\s*\\exkind\{/;
        }
        push @{ $seen{'make lab'} }, $i
            if @tags == 1 && $tags[0] eq 'lab' && $item =~ /make\s+lab\s+LAB=/;
    }
    is_deeply(\@wrong, [], "$file: every exercise has one kind, after its title")
        or diag(join "\n", @wrong);
    my @missing = grep { !$seen{$_} } sort keys %kinds;
    is_deeply(\@missing, [], "$file: numeric, design and lab exercises")
        or diag("$file lacks a $_ exercise") for @missing;

    # The labs it names, in the exercises or in the text around them.
    my $text = slurp("$root/exercises/$file") // '';
    $text =~ s/(?<!\\)%.*$//mg;
    my @named = $text =~ /make\s+lab\s+LAB=([A-Za-z0-9_-]+)/g;
    ok(@named, "$file: a lab exercise names make lab LAB=NAME")
        or diag("$file names no make lab LAB=NAME");
    ok($seen{'make lab'}, "$file: ... in an exercise tagged \\exkind{lab}")
        or diag("$file: no \\exkind{lab} exercise names make lab LAB=NAME");
    for my $lab (@named) {
        ok(-f "$root/exercises/labs/$lab/lab.mk",
           "$file: make lab LAB=$lab is a lab (exercises/labs/$lab/lab.mk)");
    }
}

done_testing();
