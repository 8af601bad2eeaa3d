#!/usr/bin/perl
# Every tool and subcommand has help text that lists every flag it accepts.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $fleet = root() . '/build/bin/fleet';
my ($status, $out) = run($fleet, '--help');
is($status, 0, 'fleet --help exits 0');
my @commands = $out =~ /^  (\w+) /mg;
ok(scalar(@commands) >= 2, "fleet --help lists its commands (@commands)");
for my $command (@commands) {
    my ($s, $help) = run($fleet, $command, '--help');
    is($s, 0, "fleet $command --help exits 0");
    like($help, qr/^usage: fleet $command/, "fleet $command --help shows usage");
    my @flags = $help =~ /^  (--[\w-]+)/mg;
    ok(scalar(@flags) >= 5, "fleet $command --help lists its flags");
    for my $flag (grep { $_ ne '--help' } @flags) {
        my ($st, $o, $e) = run($fleet, $command, $flag);
        # Each listed flag is accepted: a switch runs, a valued flag asks for
        # its value, and neither is called unknown.
        unlike($e, qr/unknown flag/, "fleet $command accepts $flag");
    }
}
done_testing();
