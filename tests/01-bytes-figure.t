#!/usr/bin/perl
# Figure 1.1, bytes per parameter: one bar per convention of the CSV, none
# for its header line, and bar names and key entries that do not overlap.
# The figure is read from the LaTeX that gnuplot's cairolatex terminal wrote:
# each text is placed by \put(x,y) in units of 1/20 bp.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $tex = slurp("$root/build/figures/01-bytes.tex");
ok(defined $tex, 'figure 01-bytes was drawn') or BAIL_OUT('no figure');
my $csv = slurp("$root/build/data/01-precisions.csv");
my @keys = map { (split /,/)[0] } grep { /\S/ } split /\n/, $csv;
shift @keys;                                          # the header line
ok(@keys >= 4, 'the CSV has the conventions: ' . join(' ', @keys));

# Every text of the figure: [x, y, alignment, text].
my @texts;
while ($tex =~ /\\put\((\d+),(\d+)\)\{\\makebox\(0,0\)(\[\w\])?\{\\strut\{\}([^}]*)\}\}/g) {
    push @texts, [$1, $2, $3 // '', $4];
}
my %is_key = map { $_ => 1 } @keys;
my @names = sort { $a->[0] <=> $b->[0] } grep { $is_key{$_->[3]} } @texts;
is_deeply([map { $_->[3] } @names], \@keys,
          'one bar name per convention, in the order of the CSV');
ok(!grep({ $_->[3] eq 'key' } @texts), 'the header is not a bar');

# No empty slot: the first bar is as close to the y axis as the bars are to
# one another (the axis's tick labels are right-aligned at its left).
my ($axis) = map { $_->[0] } grep { $_->[2] eq '[r]' && $_->[3] =~ /^\$0\$$/ } @texts;
my $spacing = ($names[-1][0] - $names[0][0]) / (@names - 1);
cmp_ok($names[0][0] - $axis, '<', 1.5 * $spacing,
       'no empty slot before the first bar');

# Names apart: centred names, about 5 bp a character at 9 pt (100 units).
for my $i (1 .. $#names) {
    my ($l, $r) = @names[$i - 1, $i];
    my $need = 100 * (length($l->[3]) + length($r->[3])) / 2;
    cmp_ok($r->[0] - $l->[0], '>', $need, "$l->[3] and $r->[3] do not collide");
}

# The key sits above the bars: every left-aligned entry is higher than the
# tallest total printed over a bar.
my @totals = grep { $_->[2] eq '' && $_->[3] =~ /^\d+$/ } @texts;
my @entries = grep { $_->[2] eq '[l]' } @texts;
ok(@entries >= 5, 'the key has an entry for each term');
my $top = (sort { $b <=> $a } map { $_->[1] } @totals)[0];
ok(!grep({ $_->[1] <= $top } @entries), 'the key is above every bar');

done_testing();
