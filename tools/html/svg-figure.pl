#!/usr/bin/perl
# tools/html/svg-figure.pl FIGURE.gp: the gnuplot script of one of the book's
# figures, rewritten for gnuplot's svg terminal, on standard output.
#
# The book draws its figures with the cairolatex terminal, whose text LaTeX
# sets: the scripts' labels hold a little LaTeX ($n$, \tau, {\times},
# \shortstack, {,} between digit groups). The HTML edition draws the same
# scripts, on the same data, with the svg terminal, whose text is plain: this
# filter turns that LaTeX into the characters it prints, and drops a script's
# own `set terminal` line, printing its size (in pixels, 50 to the
# centimetre) as a comment on the first line, "# size W,H", for the caller.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));

my ($width, $height) = (600, 350);    # the book's 12cm by 7cm
my @out;
while (my $line = <>) {
  if ($line =~ /^\s*set\s+terminal\b/) {
    ($width, $height) = (50 * $1, 50 * $2)
      if $line =~ /size\s+([\d.]+)cm\s*,\s*([\d.]+)cm/;
    next;
  }
  # Mathematics between dollars, in a string; not a column ($3) nor an awk
  # field ($1 == ...), whose dollar is followed by a number alone.
  $line =~ s/\$10\^\{(%\w)\}\$/10^$1/g;
  $line =~ s/\$(?![0-9]+\b)([^\$'"]+)\$/$1/g;
  $line =~ s/\\shortstack\{([^{}]*?)\\\\([^{}]*)\}/$1 $2/g;
  $line =~ s/\{\\\\?(?:footnotesize|scriptsize|small|tiny)\s+([^{}]*)\}/$1/g;
  $line =~ s/\{\\times\}|\\times\b/×/g;
  $line =~ s/\\tau\b/τ/g;
  $line =~ s/\\%/%/g;
  $line =~ s/\{,\}/,/g;
  push @out, $line;
}
print "# size $width,$height\n", @out;
