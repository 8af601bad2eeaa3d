#!/usr/bin/perl
# Times in prose read in the unit the transcripts print (388 ms, not
# 0.388 s): every report field in seconds has a Time macro that says the same
# time with its unit, and the prose of Part I uses those, never a bare number
# of seconds followed by "s".
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
# The files this build's fleet wrote (a build folder may keep files of older
# layouts of the book, which no script writes any more).
my $fleet_age = -M "$root/build/bin/fleet";
my @files = grep { -M $_ <= $fleet_age }
            glob("$root/build/{numbers,solutions}/0[1-5]*.tex");
my $pairs = 0;
for my $file (@files) {
    my $m = read_macros($file);
    for my $name (sort keys %$m) {
        next unless $name =~ /Time/;
        my @twins = ($name =~ s/Time/Seconds/r, $name =~ s/Time$/TimeS/r,
                     $name =~ s/Time(?!.*Time)/S/r);
        my ($twin) = grep { $_ ne $name && exists $m->{$_} } @twins;
        next unless defined $twin;
        my ($seconds) = printed_number($m->{$twin});
        next unless defined $seconds;
        $pairs++;
        macro_agrees($m, $name, $seconds, "$name says $twin seconds")
          if $seconds != 0;
        like($m->{$name},
             qr/^[\d.,]+\\,(?:\\ensuremath\{\\mu\}s|ms|s|min|h|days)$/,
             "\\$name carries its unit");
        unlike($m->{$name}, qr/^0\.\d/, "\\$name is not a fraction of its unit")
          if $seconds != 0;
    }
}
cmp_ok($pairs, '>', 100, 'Part I writes a Time macro beside each time field');

# The prose: no report macro of seconds followed by a typed "s".
for my $file (glob("$root/chapters/0[1-5]*.nw"), glob("$root/solutions/0[1-5]*.tex")) {
    my $text = slurp($file);
    my @bare = $text =~ /(\\[A-Za-z]+(?:Seconds[A-Za-z]*|S)(?:\{\})?(?:~|\\,)s\b)/g;
    is("@bare", '', "$file writes times with their Time macros");
}
done_testing();
