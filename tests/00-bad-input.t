#!/usr/bin/perl
# Bad input to fleet: a missing, unknown, negative, zero, non-numeric or
# absurdly large value gets one line on stderr that names the flag, exit
# status 2, nothing on stdout and no output file left behind.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $fleet = root() . '/build/bin/fleet';

my %numeric = (
    memory  => [qw(--params --bytes-per-param --usable --gpus
                   --checkpoint-bandwidth)],
    compute => [qw(--params --active-params --tokens --gpus --mfu --days
                   --usable --layers --hidden --seq)],
);
my @bad_values = ('abc', '-5', '0', '1e400', '1e30', '12x', '', ' 5', 'nan',
                  'inf', '5 B');

sub refused {
    my ($name, $must_name, @args) = @_;
    my $dir = tempdir(CLEANUP => 1);
    my ($status, $out, $err) = run($fleet, @args, '--output', "$dir/out.txt");
    # A missing value at the end of the line must not be taken from --output.
    is($status, 2, "$name: exit status 2");
    is($out, '', "$name: nothing on stdout");
    my $lines = () = $err =~ /\n/g;
    is($lines, 1, "$name: one line on stderr") or diag $err;
    like($err, qr/\Q$must_name\E/, "$name: the message names $must_name");
    opendir(my $dh, $dir) or die; my @left = grep { !/^\./ } readdir $dh;
    is_deeply(\@left, [], "$name: no output file left behind");
}

for my $command (sort keys %numeric) {
    for my $flag (@{ $numeric{$command} }) {
        for my $value (@bad_values) {
            refused("$command $flag '$value'", $flag, $command, $flag, $value);
        }
    }
}

# A missing value: the flag is the last word on the line.
for my $command (sort keys %numeric) {
    for my $flag (@{ $numeric{$command} }) {
        my ($status, $out, $err) = run($fleet, $command, $flag);
        is($status, 2, "$command $flag with no value: exit 2");
        like($err, qr/^fleet $command: \Q$flag\E needs a value\n\z/,
             "$command $flag with no value: one line naming the flag");
    }
}

# Counts must be whole.
refused('memory --gpus 2.5', '--gpus', qw(memory --gpus 2.5));
# Fractions above one.
refused('compute --mfu 1.5', '--mfu', qw(compute --mfu 1.5));
refused('memory --usable 120%', '--usable', qw(memory --usable 120%));
# Unknown names and flags.
refused('memory --gpu v100', '--gpu', qw(memory --gpu v100));
refused('compute --gpu tpu', '--gpu', qw(compute --gpu tpu));
refused('memory --precision fp8', '--precision', qw(memory --precision fp8));
refused('memory --frobnicate', '--frobnicate', qw(memory --frobnicate 3));
refused('memory stray word', 'flags start with --', qw(memory params));
refused('memory --params twice', '--params',
        qw(memory --params 1e9 --params 2e9));
refused('memory --json takes no value', '--json', qw(memory --json=1));
# Flags that contradict each other.
refused('memory --precision with --bytes-per-param', '--bytes-per-param',
        qw(memory --precision mixed --bytes-per-param 16));
refused('compute active above total', '--active-params',
        qw(compute --params 10e9 --active-params 20e9));
refused('compute partial attention shape', '--seq',
        qw(compute --layers 80 --hidden 8192));
refused('two output formats', '--json', qw(memory --json --csv));
refused('a bad LaTeX prefix', '--latex', qw(memory --latex Floor1));

# The program itself.
my ($status, $out, $err) = run($fleet, 'teleport');
is($status, 2, 'an unknown command exits 2');
like($err, qr/^fleet: unknown command "teleport".*\n\z/, 'and says so in one line');
($status) = run($fleet);
is($status, 2, 'no command at all exits 2 with the usage');
done_testing();
