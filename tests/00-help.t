#!/usr/bin/perl
# Every tool and subcommand has help text that lists every flag it accepts,
# and the exit status says what happened: 0 after --help or a listed switch,
# 2 (with one line on stderr that names the flag) after a flag that is
# unknown, lacks its value, or is a switch given a value.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $bin = root() . '/build/bin';
my $fleet = "$bin/fleet";

# The flags a --help lists: (flag, takes a value).
sub listed {
    my ($help) = @_;
    my @flags;
    for (split /\n/, $help) {
        push @flags, [$1, defined $2] if /^  (--[\w-]+)( (?:N|NAME))?\s/;
    }
    return @flags;
}

# What every tool must do with flags that are wrong.
sub refuses_bad_flags {
    my ($name, @command) = @_;
    refused("$name --frobnicate", qr/unknown flag --frobnicate/,
            @command, '--frobnicate');
    refused("$name stray: a word that is not a flag",
            qr/flags start with --/, @command, 'stray');
    refused("$name --help=yes: a switch with a value", qr/--help takes no value/,
            @command, '--help=yes');
}

my ($status, $out) = run($fleet, '--help');
is($status, 0, 'fleet --help exits 0');
my @commands = $out =~ /^  (\w+) /mg;
ok(scalar(@commands) >= 2, "fleet --help lists its commands (@commands)");
($status, undef, my $err) = run($fleet);
is($status, 2, 'fleet with no command exits 2');
like($err, qr/^usage: fleet/, '... and prints the usage on stderr');
($status) = run($fleet, 'frobnicate');
is($status, 2, 'fleet with an unknown command exits 2');

for my $command (@commands) {
    my ($s, $help) = run($fleet, $command, '--help');
    is($s, 0, "fleet $command --help exits 0");
    like($help, qr/^usage: fleet $command/, "fleet $command --help shows usage");
    my @flags = listed($help);
    ok(scalar(@flags) >= 5, "fleet $command --help lists its flags");
    refuses_bad_flags("fleet $command", $fleet, $command);
    for my $f (grep { $_->[0] ne '--help' } @flags) {
        my ($flag, $valued) = @$f;
        if ($valued) {
            # A valued flag at the end of the line lacks its value.
            refused("fleet $command $flag without its value",
                    qr/^fleet $command: \Q$flag\E needs a value$/,
                    $fleet, $command, $flag);
        } else {
            my ($st, $o, $e) = run($fleet, $command, $flag);
            unlike($e, qr/unknown flag/, "fleet $command accepts $flag");
            # A switch alone runs the subcommand with its defaults.
            is($st, 0, "fleet $command $flag: the switch runs, exit status 0")
                or diag $e;
        }
    }
}

# The other tools: their switches start long runs, so each is given with
# --help, which must still print the help and exit 0.
for my $tool (qw(minigpt minigpt-fp64 allreduce matmul-bench moe formats)) {
    (my $name = $tool) =~ s/-fp64//;            # it calls itself minigpt
    my ($s, $help, $e) = run("$bin/$tool", '--help');
    is($s, 0, "$tool --help exits 0");
    like($help, qr/^usage: $name/, "$tool --help shows usage");
    is($e, '', "$tool --help: nothing on stderr");
    my @flags = listed($help);
    ok(scalar(@flags) >= 5, "$tool --help lists its flags");
    refuses_bad_flags($tool, "$bin/$tool");
    for my $f (grep { $_->[0] ne '--help' } @flags) {
        my ($flag, $valued) = @$f;
        if ($valued) {
            refused("$tool $flag without its value",
                    qr/^$name: \Q$flag\E needs a value$/, "$bin/$tool", $flag);
        } else {
            my ($st, $o) = run("$bin/$tool", $flag, '--help');
            is($st, 0, "$tool $flag --help: exit status 0");
            is($o, $help, "$tool $flag --help: the help");
        }
    }
}
done_testing();
