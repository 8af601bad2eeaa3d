#!/usr/bin/perl
# Every transcript the solutions of Part I quote sits under the command that
# printed it, in one prompt style ("$ fleet ..."), and every transcript the
# solutions include is one of them.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $count = 0;
for my $tex (glob "$root/solutions/0[1-5]*.tex") {
    my $text = slurp($tex);
    for my $file ($text =~ /\\verbatiminput\{([^}]+)\}/g) {
        my $transcript = slurp("$root/$file");
        ok(defined $transcript, "$file exists") or next;
        like($transcript, qr/\A\$ (fleet|minigpt|allreduce) /,
             "$file opens with the command that printed it");
        # A quoted transcript is a cut, not a copy: at most 25 lines.
        cmp_ok(FleetTest::line_count($transcript), '<=', 25, "$file quotes a few lines");
        $count++;
    }
    unlike($text, qr/\\begin\{verbatim\}\s*fleet /,
           "$tex types no command of its own");
}
cmp_ok($count, '>=', 30, 'the solutions of Part I include their transcripts');
done_testing();
