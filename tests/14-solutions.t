#!/usr/bin/perl
# tests/14-solutions.t: the worked solutions of chapter 14 (mixture of
# experts) against the formulas of the chapter.
#
# Every number solutions/14-experts.sh derived (build/solutions/14-ex*) is
# worked out again here, in Perl, from the exercise's inputs: the state of
# all P parameters, 16 P bytes, and the compute of the A active ones, 6 A
# FLOPs a token; one expert's parameters x = (P - A)/(E - k) and everyone's
# s = P - E x; the all-to-all's 8 k h bytes a token a layer, the share that
# leaves a GPU, (EP - 1)/EP, and the share that crosses a node,
# (EP - G)/EP; the MLP's tensor-parallel all-reduces, 8 h (t - 1)/t; an
# expert's capacity, ceil(F k N R / E), and the drops, the routed slots
# above it, counted from the layer's own CSV of slots per expert; the
# imbalance, the busiest expert over the mean; and the bus bandwidth's
# factors, (n - 1)/n for the all-to-all and 2 (n - 1)/n for the all-reduce.
# Each sentence of the solutions that reads a number (the same days, a small
# all-to-all inside a node and a large one across, an exact check) is
# checked against the number. No timing is held to a threshold. The test
# also checks, with FleetTest's checks shared by every chapter's solutions,
# that the solution uses only macros the script defines, that the
# statements give no answer away, and that build/solutions.pdf prints
# every heading.
#
# Run after `make`:  prove -v tests/14-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use POSIX qw(ceil);
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/14-ex6-derived.tex", 'the solution script has run (build/solutions/14-*)')
    or BAIL_OUT('no build/solutions/14-ex6-derived.tex: run make first');

my %macro = %{ read_macros("$sols/14-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
sub json {
    my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
    return JSON::PP->new->decode($text);
}

# ----------------------------------------------------------------- 14.1 ----
{
    my ($P, $A, $E, $k) = (100e9, 20e9, 16, 2);
    my $j = json('14-ex1');
    my $x = ($P - $A) / ($E - $k);
    is($j->{memory_floor_bytes}, 16 * $P, '14.1 (a): 16 B of every parameter');
    is($j->{memory_floor_gpus}, ceil(16 * $P / 64e9), '14.1 (a): the floor at 64 GB usable');
    close_to($j->{flops_per_token}, 6 * $A, 1e-12, '14.1 (b): 6 A a token');
    close_to($j->{dense_training_days} / $j->{training_days}, $P / $A, 1e-9,
             '14.1 (b): P / A times the days');
    agrees('SolFourteenADaysRatio', $P / $A, '14.1 (b): the ratio printed');
    close_to($j->{training_days}, 6 * $A * 2e12 / (1024 * 989e12 * 0.4) / 86400, 1e-9,
             '14.1 (b): the days');
    close_to($j->{expert_params}, $x, 1e-9, '14.1 (c): x = (P - A)/(E - k)');
    close_to($j->{shared_params}, $P - $E * $x, 1e-9, '14.1 (c): s = P - E x');
    agrees('SolFourteenAExpertShare', 100 * $E * $x / $P, "14.1 (c): the experts' share");
    cmp_ok($E * $x / $P, '>', 0.5, '14.1 (c): mostly experts');
    like(slurp("$sols/14-ex1.txt") // '', qr/^\$ fleet moe .*\n(?:.*\n)*  s = P - E x/m,
         '14.1: the transcript shows its command and the split');
}

# ----------------------------------------------------------------- 14.2 ----
{
    my ($dense, $moe) = (json('14-ex2-dense-memory'), json('14-ex2-moe-memory'));
    is($dense->{static_bytes}, 16 * 20e9, '14.2 (a): the dense state');
    is($moe->{static_bytes}, 16 * 100e9, "14.2 (a): the mixture's");
    agrees('SolFourteenBStateRatio', 5, '14.2 (a): five times');
    agrees('SolFourteenBDenseDays', json('14-ex2-dense')->{days}, '14.2 (a): dense days');
    agrees('SolFourteenATrainingDays', json('14-ex1')->{training_days}, "14.2 (a): the mixture's");
    close_to(json('14-ex2-dense')->{days}, json('14-ex1')->{training_days}, 1e-9,
             '14.2 (a): the same days, as the solution says');
    close_to($moe->{bytes_per_gpu_sharded}, 16 * 100e9 / 1024, 1e-12, '14.2 (b): sharded');
    cmp_ok($moe->{bytes_per_gpu_sharded}, '<', 0.1 * 80e9, '14.2 (b): far below 80 GB');
}

# ----------------------------------------------------------------- 14.3 ----
{
    my ($k, $h, $T, $L, $A) = (2, 4096, 8192, 32, 5e9);
    agrees('SolFourteenCForwardBytes', 4 * $k * $h, '14.3 (a): 4 k h forward');
    agrees('SolFourteenCPayloadBytes', 8 * $k * $h, '14.3 (a): 8 k h in all');
    for my $r ([8, 'Eight', 360e9, 40e9], [32, 'ThirtyTwo', 360e9, 40e9]) {
        my ($ep, $w, $nv, $nic) = @$r;
        my $j = json("14-ex3-ep$ep");
        my $in_node = $ep < 8 ? $ep : 8;
        my ($f_nv, $f_nic) = (($in_node - 1) / $ep, ($ep - $in_node) / $ep);
        close_to($j->{alltoall_leaving_fraction}, ($ep - 1) / $ep, 1e-12,
                 "14.3 (b) EP $ep: (EP - 1)/EP leaves");
        close_to($j->{alltoall_nic_fraction} + 0, $f_nic, 1e-12, "14.3 (b) EP $ep: NIC share")
            if $f_nic > 0;
        is($j->{alltoall_nic_fraction} + 0, 0, "14.3 (b) EP $ep: none on the NIC")
            if $f_nic == 0;
        close_to($j->{nvlink_bandwidth}, $nv, 1e-12, "14.3 EP $ep: NVLink at 80 %");
        close_to($j->{nic_bandwidth}, $nic, 1e-12, "14.3 EP $ep: NIC at 80 %");
        my $bytes = 8 * $k * $h * $T * $L;
        close_to($j->{step_nvlink_bytes}, $bytes * $f_nv, 1e-12, "14.3 (c) EP $ep: NVLink bytes");
        is($j->{step_nic_bytes} + 0, $bytes * $f_nic, "14.3 (c) EP $ep: NIC bytes");
        agrees("SolFourteenC${w}NvlinkTime", $bytes * $f_nv / $nv, "14.3 (c) EP $ep: NVLink time");
        agrees("SolFourteenC${w}NicTime", $bytes * $f_nic / $nic, "14.3 (c) EP $ep: NIC time")
            if $f_nic > 0;
        close_to($j->{step_compute_s}, 6 * $A * $T / (989e12 * 0.4), 1e-9,
                 "14.3 (c) EP $ep: the compute");
    }
    cmp_ok(json('14-ex3-ep8')->{alltoall_over_compute}, '<', 0.1,
           '14.3 (c): inside a node, small beside the compute');
    cmp_ok(json('14-ex3-ep32')->{alltoall_over_compute}, '>', 0.3,
           '14.3 (c): over four nodes, a large part of it');
}

# ----------------------------------------------------------------- 14.4 ----
{
    my ($P, $A, $E, $k, $h) = (300e9, 40e9, 64, 2, 6144);
    my ($eight, $wide) = (json('14-ex4-ep8'), json('14-ex4-ep64'));
    my $x = ($P - $A) / ($E - $k);
    close_to($eight->{tp_mlp_bytes_per_token_per_layer}, 8 * $h * 7 / 8, 1e-12,
             '14.4 (a): TP 8 sends 8 h (t - 1)/t');
    close_to($eight->{alltoall_bytes_per_token_per_layer}, 8 * $k * $h * 7 / 8, 1e-12,
             '14.4 (a): EP 8 sends 8 k h (EP - 1)/EP');
    close_to($wide->{alltoall_bytes_per_token_per_layer}, 8 * $k * $h * 63 / 64, 1e-12,
             '14.4 (a): EP 64 sends 8 k h (EP - 1)/EP');
    close_to($wide->{alltoall_nic_fraction}, 56 / 64, 1e-12, '14.4 (a): 56/64 on the NIC');
    agrees('SolFourteenDAlltoallOverTp', $k, '14.4 (a): k times the bytes');
    agrees('SolFourteenDTpExpertBytes', 16 * $E * $x / 8, "14.4 (b): TP 8's experts");
    close_to($eight->{expert_bytes_per_gpu}, 16 * $E * $x / 8, 1e-9, "14.4 (b): EP 8's, the same");
    close_to($wide->{expert_bytes_per_gpu}, 16 * $x, 1e-9, "14.4 (b): EP 64's, one expert");
    close_to($eight->{shared_bytes_per_gpu}, 16 * ($P - $E * $x), 1e-9, '14.4 (b): s on every GPU');
    cmp_ok($eight->{step_alltoall_s}, '<', 0.05 * $eight->{step_compute_s},
           "14.4 (c): EP 8's all-to-all is small beside the compute");
    cmp_ok($wide->{step_alltoall_s}, '>', 5 * $eight->{step_alltoall_s},
           "14.4 (c): EP 64's crosses the network, many times slower");
}

# ----------------------------------------------------------------- 14.5 ----
{
    my %word = ('even-1.25' => 'Even', 'skew-1.0' => 'SkewOne',
                'skew-1.25' => 'SkewOneQuarter', 'skew-2.0' => 'SkewTwo');
    my ($E, $k, $N, $R) = (4, 2, 1024, 4);
    for my $run (sort keys %word) {
        my ($F) = $run =~ /-([\d.]+)$/;
        my $w = "SolFourteenE$word{$run}";
        my @rows = grep { /^\d/ } split /\n/, slurp("$sols/14-ex5-$run.csv") // '';
        is(scalar @rows, $E, "14.5 $run: a row an expert");
        my $capacity = ceil($F * $k * $N * $R / $E - 1e-9);
        my ($dropped, $busiest, $sum) = (0, 0, 0);
        for my $i (0 .. $#rows) {
            my ($e, $rank, $routed, $kept, $drop, $cap) = split /,/, $rows[$i];
            is($cap, $capacity, "14.5 $run expert $e: capacity ceil(F k N R / E)");
            is($kept, $routed < $capacity ? $routed : $capacity, "14.5 $run expert $e: kept");
            is($drop, $routed - $kept, "14.5 $run expert $e: dropped");
            is(value("${w}Routed" . ('A' .. 'D')[$i]), $routed, "14.5 $run expert $e: printed");
            $dropped += $drop;
            $sum += $routed;
            $busiest = $routed if $routed > $busiest;
        }
        is($sum, $k * $N * $R, "14.5 $run: every slot routed");
        is(value("${w}Capacity"), $capacity, "14.5 $run: the capacity printed");
        is(value("${w}Dropped"), $dropped, "14.5 $run: the drops");
        agrees("${w}Imbalance", $busiest / ($sum / $E), "14.5 $run: the imbalance");
        is($dropped == 0 ? 1 : 0, $F >= $busiest / ($sum / $E) - 1e-9 ? 1 : 0,
           "14.5 $run: nothing dropped exactly when F reaches the imbalance");
    }
    cmp_ok(value('SolFourteenESkewOneImbalance'), '>', value('SolFourteenEEvenImbalance'),
           '14.5: the skewed router is the less balanced');
    cmp_ok(value('SolFourteenESkewOneUnserved'), '>', 0,
           '14.5: at F = 1 some tokens lose every slot');
    like(slurp("$sols/14-ex5.txt") // '', qr/^load imbalance/m, '14.5: the transcript');
}

# ----------------------------------------------------------------- 14.6 ----
{
    my $j = json('14-ex5-even-1.25');
    is($j->{result}, 'OK', '14.6 (a): the layer equals the reference');
    is($macro{SolFourteenFExact}, $j->{max_doutput} == 0 ? 1 : 0,
       '14.6 (a): exact or not, as the solution says');
    cmp_ok($j->{max_doutput}, '<=', $j->{atol} + $j->{rtol},
           '14.6 (a): within the tolerance');
    for my $op ([alltoall => 'Alltoall', 1], [allreduce => 'Allreduce', 2]) {
        my ($name, $w, $factor) = @$op;
        my ($row) = grep { $_->{op} eq $name && $_->{impl} eq 'mpi' }
                    @{ json("14-ex6-$name") };
        ok($row, "14.6 (b) $name: MPICH's row");
        next unless $row;
        is($row->{wrong}, 0, "14.6 (b) $name: no wrong element");
        close_to($row->{algbw}, $row->{size} / $row->{time_s} / 1e9, 1e-4,
                 "14.6 (b) $name: algbw = size / time");
        close_to($row->{busbw}, $row->{algbw} * $factor * (2 - 1) / 2, 1e-4,
                 "14.6 (b) $name: busbw = algbw x $factor (n - 1)/n");
        agrees("SolFourteenF${w}Time", $row->{time_s}, "14.6 (b) $name: the time");
        agrees("SolFourteenF${w}Busbw", $row->{busbw}, "14.6 (b) $name: busbw");
    }
}

# ------------------------------------------- the solution, the statements --
my $code = solution_sources_ok(solution => 'solutions/14-experts.tex',
                               prefix => 'SolFourteen', macros => \%macro,
                               transcripts => 4, width => 85);
unlike($code, qr/\\ref\{/,
       'no reference to a label of the book (the volumes are apart)');
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/14-experts.tex',
    solution => 'solutions/14-experts.tex',
    heading => 'solthirteenexercise');
answers_not_given_away($text, \%macro, qw(
    SolFourteenAMemoryFloorBytes SolFourteenATrainingDays SolFourteenAExpertShare
    SolFourteenCPayloadBytes SolFourteenCThirtyTwoNicTime SolFourteenDTpExpertBytes
    SolFourteenESkewOneDropped SolFourteenESkewOneImbalance));
solutions_pdf_ok(chapter => 14, solution => 'solutions/14-experts.tex',
                 title => 'Mixture of experts', items => scalar @items,
                 key => { 1 => $macro{SolFourteenAExpertShare},
                          3 => $macro{SolFourteenCPayloadBytes},
                          5 => $macro{SolFourteenESkewOneDropped} },
                 newer_than => "$sols/14-ex6-derived.tex");

done_testing();
