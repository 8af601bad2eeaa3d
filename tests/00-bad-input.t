#!/usr/bin/perl
# Bad input to fleet: a missing, unknown, negative, zero, non-numeric or
# absurdly large value gets one line on stderr that names the flag, exit
# status 2, nothing on stdout and no output file left behind.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
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


for my $command (sort keys %numeric) {
    for my $flag (@{ $numeric{$command} }) {
        for my $value (@bad_values) {
            refused_no_output("$command $flag '$value'", $flag,
                              $fleet, $command, $flag, $value);
        }
    }
}

# A missing value: the flag is the last word on the line.
for my $command (sort keys %numeric) {
    for my $flag (@{ $numeric{$command} }) {
        refused("$command $flag with no value",
                qr/^fleet $command: \Q$flag\E needs a value$/,
                $fleet, $command, $flag);
    }
}

# Counts must be whole.
refused_no_output('memory --gpus 2.5', '--gpus', $fleet, qw(memory --gpus 2.5));
# Fractions above one.
refused_no_output('compute --mfu 1.5', '--mfu', $fleet, qw(compute --mfu 1.5));
refused_no_output('memory --usable 120%', '--usable', $fleet, qw(memory --usable 120%));
# Unknown names and flags.
refused_no_output('memory --gpu v100', '--gpu', $fleet, qw(memory --gpu v100));
refused_no_output('compute --gpu tpu', '--gpu', $fleet, qw(compute --gpu tpu));
refused_no_output('memory --precision fp8', '--precision', $fleet, qw(memory --precision fp8));
refused_no_output('memory --frobnicate', '--frobnicate', $fleet, qw(memory --frobnicate 3));
refused_no_output('memory stray word', 'flags start with --', $fleet, qw(memory params));
refused_no_output('memory --params twice', '--params', $fleet,
                  qw(memory --params 1e9 --params 2e9));
refused_no_output('memory --json takes no value', '--json', $fleet, qw(memory --json=1));
# Flags that contradict each other.
refused_no_output('memory --precision with --bytes-per-param', '--bytes-per-param', $fleet,
                  qw(memory --precision mixed --bytes-per-param 16));
refused_no_output('compute active above total', '--active-params', $fleet,
                  qw(compute --params 10e9 --active-params 20e9));
refused_no_output('compute partial attention shape', '--seq', $fleet,
                  qw(compute --layers 80 --hidden 8192));
refused_no_output('two output formats', '--json', $fleet, qw(memory --json --csv));
refused_no_output('a bad LaTeX prefix', '--latex', $fleet, qw(memory --latex Floor1));

# The program itself.
refused('an unknown command', qr/^fleet: unknown command "teleport"/,
        $fleet, 'teleport');
my ($status) = run($fleet);
is($status, 2, 'no command at all exits 2 with the usage');
done_testing();
