#!/usr/bin/perl
# Chapter 3's ZeRO arithmetic: fleet memory --zero S --dp N against the ZeRO
# paper's per-device bytes and traffic, computed here.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $fleet = root() . '/build/bin/fleet';
my $psi = 100e9;

# Mixed precision: 2 B weights, 2 B gradients, 12 B optimizer state.
my %per_device = (
    0 => sub { 16 * $psi },
    1 => sub { 4 * $psi + 12 * $psi / $_[0] },
    2 => sub { 2 * $psi + 14 * $psi / $_[0] },
    3 => sub { 16 * $psi / $_[0] },
);
for my $n (1, 2, 8, 64, 1024) {
    for my $stage (0 .. 3) {
        my $j = fleet_json('memory', '--params', '100e9', '--zero', $stage,
                           '--dp', $n);
        close_to($j->{bytes_per_device}, $per_device{$stage}->($n), 1e-12,
                 "stage $stage on $n ranks: bytes per device");
        close_to($j->{weight_bytes_per_device}
                 + $j->{gradient_bytes_per_device}
                 + $j->{optimizer_bytes_per_device},
                 $j->{bytes_per_device}, 1e-12,
                 "stage $stage on $n ranks: the kinds add up");
        my $elements = $stage == 3 ? 3 : 2;
        close_to($j->{traffic_bytes} + 1, $elements * $psi * 2 * ($n - 1) / $n + 1,
                 1e-12, "stage $stage on $n ranks: $elements Psi of traffic");
        is($j->{zero_stage}, $stage, "stage $stage on $n ranks: reported");
    }
}

# The seed's numbers: full sharding over 1,024 GPUs, and design A's traffic.
my $full = fleet_json(qw(memory --params 100e9 --zero 3 --dp 1024));
close_to($full->{bytes_per_device}, 1.6e9, 0.03, '1.6 GB per GPU at 1,024 (seed)');
my $a = fleet_json(qw(memory --params 12.5e9 --zero 3 --dp 128));
close_to($a->{traffic_bytes}, 75e9, 0.01, 'design A: about 75 GB of traffic per step');
close_to($a->{traffic_bytes} / 50e9, 1.5, 0.01, '... 1.5 s at 50 GB/s');

# The 18-byte convention keeps its fp32 accumulator with the gradients.
my $g = fleet_json(qw(memory --params 100e9 --precision fp32-grads --zero 2 --dp 8));
close_to($g->{gradient_bytes_per_device}, 4 * $psi / 8, 1e-12,
         'fp32-grads: the accumulator is sharded with the gradients');
close_to($g->{weight_bytes_per_device}, 2 * $psi, 1e-12,
         'fp32-grads at stage 2: the 16-bit weights stay whole');

# The transcript shows the arithmetic.
my (undef, $text) = run($fleet, qw(memory --params 12.5e9 --zero 3 --dp 128));
like($text, qr/ZeRO stage 3 \(FSDP\) over 128 data-parallel ranks/, 'the stage line');
like($text, qr/traffic per step = 3 × 12\.5e9 × 2 B × 127\/128 = 74\.4 GB/,
     'the traffic line');

# The sweep behind the figure: stage 3 falls as 1/N, stage 0 is flat.
my (undef, $csv) = run($fleet, qw(memory --params 100e9 --zero-sweep));
my ($head, @rows) = split /\n/, $csv;
is($head, 'dp,stage0,stage1,stage2,stage3', 'the sweep header');
my @first = split /,/, $rows[0];
my @last = split /,/, $rows[-1];
close_to($last[4] * $last[0], $first[4] * $first[0], 1e-12, 'stage 3 falls as 1/N');
close_to($last[1], $first[1], 1e-12, 'stage 0 does not fall');

# Bad input: one line naming the flag, exit 2.
for my $case (['--zero', '4'], ['--zero', 'x'], ['--zero', '-1'], ['--dp', '0'],
              ['--dp', '2.5']) {
    refused_no_output("@$case", qr/^fleet memory: \Q$case->[0]\E/,
                      $fleet, 'memory', @$case);
}
refused_no_output('--zero with --bytes-per-param', qr/--zero and --dp need --precision/,
                  $fleet, qw(memory --bytes-per-param 16 --zero 3));
done_testing();
