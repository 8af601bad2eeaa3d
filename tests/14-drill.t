#!/usr/bin/perl
# tests/14-drill.t: the numbers of chapter 14's lesson and interview drill
# (build/numbers/14-drill.tex, from code/runs/14-drill.sh) against fleet
# moe's own report of the running example as a mixture of experts, and
# against the arithmetic of the chapter: 16 bytes of state for every
# parameter, 6 FLOPs a token for every active one, 8 k h bytes of
# all-to-all a token a layer, and the two links' rates.
#
# Run after `make`:  prove -v tests/14-drill.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $numbers = "$root/build/numbers";
ok(-s "$numbers/14-drill.tex", 'the drill has run (build/numbers/14-drill.tex)')
    or BAIL_OUT('no build/numbers/14-drill.tex: run make first');
my %macro = %{ read_macros("$numbers/14-drill.tex") };
sub agrees { return macro_agrees(\%macro, @_) }

my $j = fleet_json('moe');
my ($P, $A, $k, $h) = @$j{qw(params_total params_active top_k hidden)};
is($P, 100e9, 'the running example: 100 billion parameters');
is($A, 20e9, '... 20 billion active');
is($macro{ExpertDrillTotal}, '100~billion', 'printed');
is($macro{ExpertDrillActive}, '20~billion', 'printed');
agrees('ExpertDrillMemory', 16 * $P, 'the state: 16 B of every parameter');
is($macro{ExpertDrillFloorGpus}, ceil(16 * $P / 64e9), 'its floor at 64 GB usable');
agrees('ExpertDrillFlopsPerToken', 6 * $A, '6 A FLOPs a token');
agrees('ExpertDrillDenseFlopsPerToken', 6 * $P, '6 P for the dense model');
agrees('ExpertDrillComputeRatio', $P / $A, 'P / A times less');
agrees('ExpertDrillDays', $j->{training_days}, 'the days');
agrees('ExpertDrillDenseDays', $j->{dense_training_days}, "the dense model's");
close_to($j->{dense_training_days} / $j->{training_days}, $P / $A, 1e-9,
         'the days differ by P / A');
agrees('ExpertDrillHidden', $h, 'h');
is($macro{ExpertDrillTopK}, $k, 'k');
agrees('ExpertDrillAlltoallBytes', 8 * $k * $h, '8 k h bytes a token a layer');
agrees('ExpertDrillAlltoallLeaving', 8 * $k * $h * ($j->{ep} - 1) / $j->{ep},
       '(EP - 1)/EP of them leave the GPU');
is($macro{ExpertDrillLink}, 'NVLink', 'EP 8 stays on NVLink');
agrees('ExpertDrillNicOverNvlink', 450e9 / 50e9, "NVLink's rate over the NIC's");

done_testing();
