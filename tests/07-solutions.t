#!/usr/bin/perl
# tests/07-solutions.t: the worked solutions to chapter 7's
# exercises (data parallel and the ring all-reduce) and its lab.
#
# Every number the solution script printed (build/solutions/07-*.tex) is
# worked out again here, in Perl, from the exercise's inputs as the
# statement gives them, and must agree to the digits it was printed with:
# half a unit in its last place. Exercise 7.5 is design A of Chapter 3, so its
# numbers are also held to that design's round figures (12.5e9 parameters, 25 GB, 75 GB,
# 1.5 s, 1.23e15 FLOPs, 3.1 s, ratio 0.48, about 1 at 200 Gbps). Exercise
# 4.7 reads a measurement, which cannot be repeated here; instead every
# number the script derived from it is derived again from the same JSON. The
# test also checks that the solution uses only macros the script defines,
# checks the lab's skeleton and README (tests/00-labs.t grades the lab),
# checks that the statements give no answer away, and, once the solutions
# volume includes chapter 7, that build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/07-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use List::Util qw(sum);
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/07-ex1.tex", 'the solution script has run (build/solutions/07-*)')
    or BAIL_OUT('no build/solutions/07-ex1.tex: run make first');


# The macros the solution script wrote: name => text.
my %macro = %{ read_macros("$sols/07-*.tex") };

# The macro NAME prints WANT to its digits (printed_number reads the units).
sub agrees { return macro_agrees(\%macro, @_) }

# ------------------------------------------------------------------ 4.1 ----
{
    my $N = 1e9;
    for my $case ([2, 'Two'], [8, 'Eight'], [1024, 'Kilo']) {
        my ($n, $name) = @$case;
        agrees("SolFourA${name}ChunkMB", $N / $n / 1e6, "4.1: n = $n, chunk N/n in MB");
        agrees("SolFourA${name}HalfGB", ($n - 1) / $n * $N / 1e9,
               "4.1: n = $n, reduce-scatter sends (n-1)/n N");
        agrees("SolFourA${name}TotalGB", 2 * ($n - 1) / $n * $N / 1e9,
               "4.1: n = $n, all-reduce sends 2(n-1)/n N");
        agrees("SolFourA${name}Steps", 2 * ($n - 1), "4.1: n = $n, 2(n-1) steps");
        agrees("SolFourA${name}NaiveGB", ($n - 1) * $N / 1e9, "4.1: n = $n, naive (n-1) N");
    }
    my ($big) = printed_number($macro{SolFourAKiloTotalGB});
    ok(defined $big && $big < 2 && $big > 1.99, '4.1: the total approaches 2N from below');
}

# ------------------------------------------------------------------ 4.2 ----
{
    my ($N, $busbw) = (1e9, 50e9);
    my %t;
    for my $case ([8, 'Eight'], [1024, 'Kilo']) {
        my ($n, $name) = @$case;
        $t{$n} = 2 * ($n - 1) / $n * $N / $busbw;
        agrees("SolFourB${name}Ms", 1e3 * $t{$n}, "4.2: n = $n, time = 2(n-1)/n N / busbw");
        agrees("SolFourB${name}AlgbwGBs", $N / $t{$n} / 1e9, "4.2: n = $n, algbw = N / time");
        agrees("SolFourB${name}HalfMs", 1e3 * $t{$n} / 2, "4.2: n = $n, a reduce-scatter alone");
    }
    agrees('SolFourBGrowth', $t{1024} / $t{8}, '4.2: 1,024 ranks over 8');
}

# ------------------------------------------------------------------ 4.3 ----
{
    my ($n, $busbw, $N) = (8, 360e9, 1e9);
    my ($ar, $ag) = (2 * ($n - 1) / $n, ($n - 1) / $n);
    agrees('SolFourCAllreduceFactor', $ar, '4.3: all-reduce factor 2(n-1)/n');
    agrees('SolFourCAllgatherFactor', $ag, '4.3: all-gather factor (n-1)/n');
    agrees('SolFourCAllreduceAlgbw', $busbw / $ar / 1e9, '4.3: all-reduce algbw = busbw / factor');
    agrees('SolFourCAllreduceMs', 1e3 * $N / ($busbw / $ar), '4.3: all-reduce time');
    agrees('SolFourCAllgatherAlgbw', $busbw / $ag / 1e9, '4.3: all-gather algbw');
    agrees('SolFourCAllgatherMs', 1e3 * $N / ($busbw / $ag), '4.3: all-gather time');
    # The node's NVSwitches add (NVLS): each GPU sends its buffer once.
    my $link = 450e9;
    agrees('SolFourCRingSentGB', $ar * $N / 1e9, '7.3: a ring sends 2(n-1)/n N per GPU');
    agrees('SolFourCNvlsSentGB', $N / 1e9, '7.3: NVLS sends N per GPU');
    agrees('SolFourCNvlsMs', 1e3 * $N / $link, '7.3: the shortest NVLS call, N / link');
    agrees('SolFourCRingLinkMs', 1e3 * $ar * $N / $link, '7.3: a ring at line rate');
    agrees('SolFourCNvlsBusbw', $link * $ar / 1e9,
           '7.3: the busbw printed for NVLS at line rate, with the ring factor');
    agrees('SolFourCLinkGBs', $link / 1e9, '7.3: the link in GB/s');
    agrees('SolFourCRingLinkShare', 100 * $busbw / $link, '7.3: as a ring, link busy');
    agrees('SolFourCNvlsLinkShare', 100 * $busbw / $ar / $link, '7.3: as NVLS, link busy');
    my ($printed) = printed_number($macro{SolFourCNvlsBusbw} // '');
    ok(defined $printed && $printed > $link / 1e9,
       '7.3: the NVLS busbw is above the link, as the solution says');
    my ($nvls_share) = printed_number($macro{SolFourCNvlsLinkShare} // '');
    ok(defined $nvls_share && $nvls_share < 50,
       '7.3: read as NVLS, the 360 GB/s is a poor run (under half the link)');
}

# ------------------------------------------------------------------ 4.4 ----
{
    my ($alpha, $beta) = (5e-6, 50e9);
    for my $case ([8, 'Eight'], [1024, 'Kilo']) {
        my ($n, $name) = @$case;
        my $latency = 2 * ($n - 1) * $alpha;
        agrees("SolFourD${name}LatencyMs", 1e3 * $latency, "4.4: n = $n, latency 2(n-1) alpha");
        my $cross = $n * $alpha * $beta;
        agrees("SolFourD${name}CrossMB", $cross / 1e6, "4.4: n = $n, crossover n alpha beta");
        # At the crossover the two terms are equal, by the model itself.
        my $bw = 2 * ($n - 1) / $n * $cross / $beta;
        ok(abs($bw - $latency) <= 1e-12 * $latency, "4.4: n = $n, the terms are equal at N*");
    }
    my $n = 1024;
    my %share;
    for my $case ([1e6, 'Small'], [1e9, 'Large']) {
        my ($N, $name) = @$case;
        my $lat = 2 * ($n - 1) * $alpha;
        my $bw = 2 * ($n - 1) / $n * $N / $beta;
        agrees("SolFourD${name}Ms", 1e3 * ($lat + $bw), "4.4: $N bytes on 1,024 ranks, time");
        agrees("SolFourD${name}LatencyShare", 100 * $lat / ($lat + $bw),
               "4.4: $N bytes on 1,024 ranks, latency share");
        agrees("SolFourD${name}BusbwGBs", 2 * ($n - 1) / $n * $N / ($lat + $bw) / 1e9,
               "4.4: $N bytes on 1,024 ranks, busbw achieved");
        $share{$name} = 100 * $lat / ($lat + $bw);
    }
    ok($share{Small} > 99, '4.4: the megabyte is all latency, as the solution says');
    ok($share{Large} > 15 && $share{Large} < 25,
       '4.4: the gigabyte loses about a fifth to latency, as the solution says');
    agrees('SolFourDHalvingSteps', 2 * 10, '4.4: halving-doubling, 2 log2 n steps');
    agrees('SolFourDHalvingLatencyMs', 1e3 * 2 * 10 * $alpha, '4.4: its latency');
}

# ------------------------------------------------------------------ 4.5 ----
# Chapter 3's design A: 100e9 parameters, TP8 x FSDP128, bf16, 16,384 tokens
# per replica, 50 GB/s, 40 % of 989e12 FLOP/s.
{
    my ($P, $tp, $d, $D, $link, $mfu, $peak) = (100e9, 8, 128, 16384, 50e9, 0.4, 989e12);
    my $rank = $P / $tp;
    my $bytes = 2 * $rank;
    my $traffic = 3 * $bytes;
    my $ring = 3 * ($d - 1) / $d * $bytes;
    my $flops = 6 * $rank * $D;
    my $compute = $flops / ($peak * $mfu);
    agrees('SolFourERankParams', $rank / 1e9, '4.5: parameters per TP rank, in 1e9');
    agrees('SolFourEWeightsParams', $rank, '4.5: fleet memory was run with P / TP');
    agrees('SolFourEWeightsStaticBytes', $bytes, '4.5: bf16 bytes per TP rank');
    agrees('SolFourEWeightsBytesPerGpuSharded', $bytes / $d, '4.5: bf16 weights per GPU, sharded');
    agrees('SolFourEStateStaticBytes', 16 * $rank, '4.5: 16-byte state per TP rank');
    agrees('SolFourEStateBytesPerGpuSharded', 16 * $rank / $d, '4.5: state per GPU under FSDP');
    agrees('SolFourETrafficGB', $traffic / 1e9, '4.5: FSDP traffic, 3 x bf16 bytes');
    agrees('SolFourERingTrafficGB', $ring / 1e9, '4.5: FSDP traffic with (d-1)/d');
    agrees('SolFourECommSeconds', $traffic / $link, '4.5: communication time');
    agrees('SolFourERingCommSeconds', $ring / $link, '4.5: communication time, exact ring');
    agrees('SolFourEComputeFlops', $flops, '4.5: FLOPs per GPU per step, 6 (P/TP) D');
    agrees('SolFourEComputeTime', $compute, '4.5: compute time per step');
    agrees('SolFourERatio', $traffic / $link / $compute, '4.5: communication / compute');
    agrees('SolFourERingRatio', $ring / $link / $compute, '4.5: the same, exact ring');
    agrees('SolFourESlowGBs', 200e9 / 8 / 1e9, '4.5: 200 Gbps in GB/s');
    agrees('SolFourESlowCommSeconds', $traffic / 25e9, '4.5: communication at 200 Gbps');
    agrees('SolFourESlowRatio', $traffic / 25e9 / $compute, '4.5: the ratio at 200 Gbps');
    my $json = JSON::PP::decode_json(slurp("$sols/07-ex5-compute.json") // '{}');
    close_to($json->{flops}, $flops, 1e-12, '4.5: fleet compute counts 6 (P/TP) D FLOPs');
    close_to($json->{seconds}, $compute, 1e-9, '4.5: fleet compute\'s seconds');
    # Design A's round figures, to the digits they are quoted with.
    my %round = (SolFourERankParams => [12.5, 0.05], SolFourETrafficGB => [75, 0.5],
                SolFourECommSeconds => [1.5, 0.05], SolFourEComputeTime => [3.1, 0.05],
                SolFourERatio => [0.48, 0.005]);
    for my $name (sort keys %round) {
        my ($got) = printed_number($macro{$name});
        my ($want, $tol) = @{ $round{$name} };
        ok(defined $got && abs($got - $want) <= $tol, "4.5: round figure $want (\\$name)");
    }
    my ($weights) = printed_number($macro{SolFourEWeightsStaticBytes});
    is($weights, 25e9, '4.5: round figures: 25 GB per TP rank');
    my ($f) = printed_number($macro{SolFourEComputeFlops});
    is($f, 1.23e15, '4.5: round figures: 1.23e15 FLOPs');
    my ($slow, $fast) = ((printed_number($macro{SolFourESlowRatio}))[0], (printed_number($macro{SolFourERatio}))[0]);
    ok(abs($slow - 1) < 0.05, '4.5: round figures: at 200 Gbps the ratio is about 1');
    ok(abs($slow / $fast - 2) < 0.01, '4.5: round figures: 200 Gbps doubles the ratio');
    ok($fast < 0.5, '4.5: communication is less than half the compute, as the solution says');
}

# ------------------------------------------------------------------ 4.6 ----
{
    my ($P, $gpus, $D, $mfu, $busbw, $peak) = (1e9, 64, 524288, 0.4, 50e9, 989e12);
    my $compute = 6 * $P * $D / ($gpus * $peak * $mfu);
    my $comm = 2 * ($gpus - 1) / $gpus * 4 * $P / $busbw;
    agrees('SolFourFGradsStaticBytes', 4 * $P, '4.6: fp32 gradient bytes');
    agrees('SolFourFComputeMs', 1e3 * $compute, '4.6: compute time, 6ND / (G X u)');
    agrees('SolFourFCommMs', 1e3 * $comm, '4.6: fp32 all-reduce time');
    agrees('SolFourFRatio', $comm / $compute, '4.6: fp32 ratio');
    agrees('SolFourFHalfCommMs', 1e3 * $comm / 2, '4.6: bf16 all-reduce time');
    agrees('SolFourFHalfRatio', $comm / 2 / $compute, '4.6: bf16 ratio');
    my $even = $comm * $gpus * $peak * $mfu / (6 * $P);
    agrees('SolFourFEvenTokens', $even, '4.6: tokens per step for compute = fp32 all-reduce');
    agrees('SolFourFEvenTokensPerGpu', $even / $gpus, '4.6: ... per GPU');
    ok($comm / $compute > 1 && $comm / 2 / $compute < 1,
       '4.6: fp32 is communication-bound, bf16 is not, as the solution says');
}

# ------------------------------------------------------------------ 4.7 ----
# The measured sweep: every derived number again, from the same JSON.
{
    my $rows = eval { JSON::PP::decode_json(slurp("$sols/07-ex7.json") // '') } // [];
    my @ring = grep { $_->{op} eq 'allreduce' && $_->{impl} eq 'ring' } @$rows;
    my @mpi = grep { $_->{op} eq 'allreduce' && $_->{impl} eq 'mpi' } @$rows;
    my ($copy) = grep { $_->{op} eq 'memcpy' } @$rows;
    my @sizes = map { $_->{size} } @ring;
    my @want_sizes = map { 2**$_ } 3 .. 22;
    is_deeply(\@sizes, \@want_sizes, '4.7: the sweep is 8 bytes to 4 MiB');
    is(scalar @mpi, scalar @ring, '4.7: MPICH beside the ring at every size');
    is(sum(map { $_->{wrong} } @$rows), 0, '4.7: nothing wrong in the measured run');
    ok($copy && $copy->{algbw} > 0, '4.7: the memcpy ceiling was measured');
    my $n = 2;
    agrees('SolFourGRanks', $n, '4.7: two ranks');
    my ($fast, $top);
    for my $i (0 .. $#ring) {
        $fast = $i if $ring[$i]{size} <= 256
                      && (!defined $fast || $ring[$i]{time_s} < $ring[$fast]{time_s});
        $top = $i if !defined $top || $ring[$i]{busbw} > $ring[$top]{busbw};
    }
    # Rows that are missing fail here, rather than skip what follows.
    if (ok(@ring && @mpi && $copy, '4.7: the sweep has rows for the ring, MPICH and memcpy')) {
        my $alpha = $ring[$fast]{time_s} / (2 * ($n - 1));
        my $beta = $ring[$top]{busbw};
        agrees('SolFourGFastBytes', $ring[$fast]{size}, '4.7: the fastest small size');
        agrees('SolFourGFastUs', 1e6 * $ring[$fast]{time_s}, '4.7: its time');
        agrees('SolFourGAlphaUs', 1e6 * $alpha, '4.7: alpha = that time / 2(n-1)');
        agrees('SolFourGBetaBytes', $ring[$top]{size}, '4.7: the size of the largest busbw');
        agrees('SolFourGBetaGBs', $beta, '4.7: beta = the largest busbw');
        agrees('SolFourGLargeBytes', $ring[-1]{size}, '4.7: the largest size');
        agrees('SolFourGCrossBytes', $n * $alpha * $beta * 1e9, '4.7: N* = n alpha beta');
        my ($half) = grep { $_->{busbw} >= $beta / 2 } @ring;
        agrees('SolFourGHalfBytes', $half->{size}, '4.7: the first size at half of beta');
        agrees('SolFourGRingLargeGBs', $ring[-1]{busbw}, '4.7: the ring at the largest size');
        agrees('SolFourGMpiLargeGBs', $mpi[-1]{busbw}, '4.7: MPICH at the largest size');
        agrees('SolFourGMemcpyGBs', $copy->{algbw}, '4.7: the memcpy bandwidth');
        agrees('SolFourGRingOfMemcpy', 100 * $beta / $copy->{algbw}, '4.7: beta / memcpy');
    }
    is(scalar(grep { $_->{busbw} != $_->{algbw} } @ring, @mpi), 0,
       '4.7: on two ranks busbw = algbw in every row');
    agrees('SolFourGDiffer', 0, '4.7: the solution counts no row where they differ');
    SKIP: {
        skip '4.7: no rows to read', 3 unless @ring;
        my ($wide) = sort { ($b->{time_max_s} - $b->{time_min_s}) / $b->{time_s}
                            <=> ($a->{time_max_s} - $a->{time_min_s}) / $a->{time_s} } @ring;
        agrees('SolFourGRepeats', $ring[0]{repeats}, '4.7: the repeats of each row');
        agrees('SolFourGWidestBytes', $wide->{size}, '4.7: the size of the widest spread');
        agrees('SolFourGWidestSpread',
               100 * ($wide->{time_max_s} - $wide->{time_min_s}) / $wide->{time_s},
               '4.7: the widest spread, (slowest - fastest) / median');
    }
    like(slurp("$sols/07-ex7.txt") // '', qr/\A# 2 ranks, float32 sum, on a host of \d+ cores? \(2 ranks there\), each pinned to one core\n/,
         '4.7: the transcript prints the core count, and the ranks were pinned');
    my $table = slurp("$sols/07-ex7.txt") // '';
    like($table, qr/^# memory copy [\d.]+ GB\/s on one core/m, '4.7: the transcript of the same run');
    my @lines = $table =~ /^\s+\d+\s+\d+\s/mg;
    is(scalar @lines, scalar @ring, '4.7: ... with one line per size');
}

# ------------------------------------------------- the solution's macros ----
solution_sources_ok(solution => 'solutions/07-data-parallel.tex',
                    prefix => 'SolFour', macros => \%macro, transcripts => 4);

# ------------------------------------------------------------------ lab ----
# The lab is graded by tests/00-labs.t (the solution passes; the skeleton
# passes on 1 rank and fails from 2), with every lab; here, what this lab's
# skeleton and README hold.
{
    my $skeleton = slurp("$root/exercises/labs/ring/ring.c") // '';
    cmp_ok(scalar(() = $skeleton =~ /TODO/g), '>=', 3, 'lab: the TODOs are marked');
    like($skeleton, qr/#include "ring\.h"/, 'lab: the skeleton includes ring.h');
    for my $kept (qw(ring_chunks modulo ring_allreduce)) {
        like($skeleton, qr/^(?:static )?(?:void|int) \Q$kept\E\(/m, "lab: the skeleton keeps $kept");
    }
    unlike($skeleton, qr/MPI_Sendrecv\(/, 'lab: the skeleton leaves the exchanges to the student');
    my $readme = slurp("$root/exercises/labs/ring/README.md") // '';
    like($readme, qr/^    make lab LAB=ring$/m, 'lab: README says how to grade');
    like($readme, qr/MPI_Sendrecv/, 'lab: README explains MPI_Sendrecv');
    like($readme, qr/deadlock/, 'lab: ... and the deadlock it avoids');
}

# ------------------------------------------ the exercises and the solutions --
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/07-data-parallel.tex',
    solution => 'solutions/07-data-parallel.tex',
    heading => 'solfourexercise',
    lab => 'make lab LAB=ring');
# Answers that must not appear in the statements, as the solutions print them.
answers_not_given_away($text, \%macro, qw(
    SolFourAEightTotalGB SolFourAKiloTotalGB SolFourAKiloSteps
    SolFourAKiloNaiveGB SolFourBEightMs SolFourBKiloMs SolFourBEightAlgbwGBs
    SolFourCAllreduceAlgbw SolFourCAllreduceMs SolFourCAllgatherAlgbw
    SolFourDKiloLatencyMs SolFourDSmallMs SolFourDLargeMs SolFourERankParams
    SolFourERingTrafficGB SolFourERatio SolFourEComputeTime SolFourFCommMs
    SolFourFRatio SolFourFEvenTokens SolFourESlowRatio SolFourCNvlsMs
    SolFourCNvlsBusbw SolFourCNvlsLinkShare));
solutions_pdf_ok(chapter => 7, solution => 'solutions/07-data-parallel.tex',
                 title => 'Data parallel: the ring all-reduce',
                 items => scalar @items,
                 key => { 1 => $macro{SolFourAKiloTotalGB},
                          5 => $macro{SolFourERatio},
                          6 => $macro{SolFourFEvenTokens} });

done_testing();
