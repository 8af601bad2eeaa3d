#!/usr/bin/perl
# tests/13-solutions.t: the worked solutions of chapter 13 (when GPUs fail)
# against the formulas of the chapter.
#
# Every number solutions/13-reliability.sh derived (build/solutions/13-ex*)
# is worked out again here, in Perl, from the exercise's inputs: the fleet's
# mean time between interruptions M = MTBF / n, Young's interval
# sqrt(2 delta M), Daly's, and Daly's effective fraction
# f = tau / (M e^(R/M) (e^((tau + delta)/M) - 1)); the restart that keeps
# 95 %, and the largest fleet that keeps 90 %, each checked by the formula
# on either side of it; the simulated runs against the closed form, within
# a few standard errors; the sharded checkpoint of the lab, resumed to the
# same bytes, refused when a shard is cut, and resumed on one rank. Each
# sentence of the solutions that reads a number (Daly's interval is many
# times the write, the restart's limit grows a little less than the restart
# shrinks) is checked against the number. No timing is held to a
# threshold. The test also checks, with FleetTest's checks shared by every
# chapter's solutions, that the solution uses only macros the script
# defines, that the statements give no answer away, and that
# build/solutions.pdf prints every heading.
#
# Run after `make`:  prove -v tests/13-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP ();
use Test::More;

my $root = root();
my $sols = "$root/build/solutions";
ok(-s "$sols/13-ex7-derived.tex", 'the solution script has run (build/solutions/13-*)')
    or BAIL_OUT('no build/solutions/13-ex7-derived.tex: run make first');

my %macro = %{ read_macros("$sols/13-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
sub value { my ($v) = printed_number($macro{ $_[0] }); return $v }
sub json {
    my $text = slurp("$sols/$_[0].json") // die "no $_[0].json";
    return JSON::PP->new->decode($text);
}

# Daly's model: the fraction of the wall clock that trains and is kept.
sub effective {
    my ($tau, $delta, $R, $M) = @_;
    return $tau / ($M * exp($R / $M) * (exp(($tau + $delta) / $M) - 1));
}
sub young { my ($delta, $M) = @_; return sqrt(2 * $delta * $M) }
sub daly {
    my ($delta, $M) = @_;
    return $M if $delta >= 2 * $M;
    my $x = $delta / (2 * $M);
    return sqrt(2 * $delta * $M) * (1 + sqrt($x) / 3 + $x / 9) - $delta;
}
my ($gpus, $window, $count) = (16384, 54 * 86400, 419);
my $M_llama = $window / $count;
my $bytes405 = 405e9 * 12;
my $delta405 = $bytes405 / 2000e9;

# ----------------------------------------------------------------- 13.1 ----
{
    for my $n ([1024, 'Small'], [16384, 'Mid'], [131072, 'Big']) {
        my ($N, $w) = @$n;
        my $M = 50000 * 3600 / $N;
        my $j = json("13-ex1-$N");
        close_to($j->{fleet_mtbi_s}, $M, 1e-9, "13.1 $N GPUs: M = MTBF / n");
        agrees("SolThirteenA${w}Mtbi", $M, "13.1 $N GPUs: M printed");
        agrees("SolThirteenA${w}PerDay", 86400 / $M, "13.1 $N GPUs: a day");
    }
    my $j = json('13-ex1-llama');
    close_to($j->{fleet_mtbi_s}, $M_llama, 1e-9, '13.1 (b): 54 days / 419');
    agrees('SolThirteenALlamaGpuHours', $gpus * $M_llama / 3600, "13.1 (b): one GPU's hours");
    agrees('SolThirteenALlamaGpuYears', $gpus * $M_llama / (365.25 * 86400),
           "13.1 (b): one GPU's years");
    agrees('SolThirteenANodeHours', $gpus * $M_llama / 8 / 3600, "13.1 (c): a node's hours");
    my $node = json('13-ex1-node');
    close_to($node->{fleet_mtbi_s}, $M_llama, 1e-6, "13.1 (c): the node's rate gives the same M");
    is($node->{nodes}, 2048, '13.1 (c): 2,048 nodes');
    like(slurp("$sols/13-ex1.txt") // '', qr/^\$ fleet checkpoint .*\n(?:.*\n)*.*M = /m,
         '13.1: the transcript shows its command and M');
}

# ----------------------------------------------------------------- 13.2 ----
{
    my $M = 50000 * 3600 / 4096;
    my $bytes = 70e9 * 12;
    my %write = (Fast => $bytes / 200e9, Slow => $bytes / 2e9);
    agrees('SolThirteenBCheckpointBytes', $bytes, '13.2: the checkpoint');
    for my $w (sort keys %write) {
        my $d = $write{$w};
        my $j = json('13-ex2-' . lc $w);
        close_to($j->{write_s}, $d, 1e-9, "13.2 $w: delta");
        close_to($j->{young_interval_s}, young($d, $M), 1e-9, "13.2 $w: Young");
        close_to($j->{daly_interval_s}, daly($d, $M), 1e-9, "13.2 $w: Daly");
        close_to($j->{effective_fraction}, effective(daly($d, $M), $d, 600, $M), 1e-9,
                 "13.2 $w: f at Daly's interval");
        agrees("SolThirteenB${w}Write", $d, "13.2 $w: the write");
        agrees("SolThirteenB${w}Young", young($d, $M), "13.2 $w: Young printed");
        agrees("SolThirteenB${w}Daly", daly($d, $M), "13.2 $w: Daly printed");
        agrees("SolThirteenB${w}Apart", 100 * (young($d, $M) - daly($d, $M)) / daly($d, $M),
               "13.2 $w: how far apart");
        for my $k ([0.25, 'Quarter'], [1, 'Daly'], [4, 'Four']) {
            my $tau = $k->[0] * daly($d, $M);
            agrees("SolThirteenB$w$k->[1]Effective", 100 * effective($tau, $d, 600, $M),
                   "13.2 $w: f at $k->[0] x Daly");
        }
        cmp_ok(value("SolThirteenB${w}DalyEffective"), '>=',
               value("SolThirteenB${w}QuarterEffective"), "13.2 $w: Daly beats a quarter");
        cmp_ok(value("SolThirteenB${w}DalyEffective"), '>=',
               value("SolThirteenB${w}FourEffective"), "13.2 $w: Daly beats four times");
    }
    cmp_ok(value('SolThirteenBSlowApart'), '>', 5 * value('SolThirteenBFastApart'),
           '13.2 (b): the slow write parts Young and Daly more');
}

# ----------------------------------------------------------------- 13.3 ----
{
    my $tau = daly($delta405, $M_llama);
    for my $r ([1, 'One'], [5, 'Five'], [10, 'Ten'], [30, 'Thirty']) {
        my ($R, $w) = ($r->[0] * 60, $r->[1]);
        agrees("SolThirteenC${w}Daly", $tau, "13.3 R = $r->[0] min: Daly's interval");
        agrees("SolThirteenC${w}Effective", 100 * effective($tau, $delta405, $R, $M_llama),
               "13.3 R = $r->[0] min: f");
        close_to(json("13-ex3-$r->[0]")->{daly_interval_s}, $tau, 1e-12,
                 "13.3 R = $r->[0] min: the interval does not move");
    }
    my $f0 = $tau / ($M_llama * (exp(($tau + $delta405) / $M_llama) - 1));
    my $keep = $M_llama * log($f0 / 0.95);
    agrees('SolThirteenCKeepRestart', $keep, '13.3 (c): the restart that keeps 95 %');
    close_to(json('13-ex3-keep')->{effective_fraction}, 0.95, 1e-9,
             '13.3 (c): the planner keeps 95 % at it');
    cmp_ok(effective($tau, $delta405, $keep * 1.01, $M_llama), '<', 0.95,
           '13.3 (c): a restart 1 % longer keeps less');
}

# ----------------------------------------------------------------- 13.4 ----
{
    my %stall = (One => $bytes405 / 50e9, Every => $delta405,
                 Copy => $bytes405 / 16384 / 20e9);
    agrees('SolThirteenDBytes', $bytes405, '13.4: the checkpoint');
    agrees('SolThirteenDShard', $bytes405 / 16384, "13.4: a rank's shard");
    for my $w (sort keys %stall) {
        my $d = $stall{$w};
        agrees("SolThirteenD${w}Stall", $d, "13.4 $w: the stall");
        agrees("SolThirteenD${w}Daly", daly($d, $M_llama), "13.4 $w: Daly");
        agrees("SolThirteenD${w}Effective",
               100 * effective(daly($d, $M_llama), $d, 600, $M_llama), "13.4 $w: f");
    }
    cmp_ok(daly($stall{Copy}, $M_llama), '>', 5 * $stall{Every},
           "13.4 (c): (C)'s interval is many times the whole write");
    cmp_ok(value('SolThirteenDCopyEffective'), '>', value('SolThirteenDEveryEffective'),
           '13.4: the second thread keeps more than every rank alone');
    cmp_ok(value('SolThirteenDEveryEffective'), '>', value('SolThirteenDOneEffective'),
           '13.4: every rank keeps more than one writer');
}

# ----------------------------------------------------------------- 13.5 ----
{
    my $tau = daly($delta405, $M_llama);
    for my $k ([0.25, 'quarter', 'Quarter'], [1, 'daly', 'Daly'], [4, 'four', 'Four']) {
        my ($x, $file, $w) = @$k;
        my $j = json("13-ex5-$file");
        is($j->{simulated_runs}, 200, "13.5 $file: 200 runs");
        close_to($j->{interval_s}, $x * $tau, 1e-6, "13.5 $file: the interval");
        close_to($j->{effective_fraction},
                 effective($j->{interval_s}, $delta405, 600, $M_llama), 1e-9,
                 "13.5 $file: the closed form");
        my $sigmas = ($j->{simulated_effective_fraction} - $j->{effective_fraction})
                   / $j->{simulated_standard_error};
        cmp_ok(abs($sigmas), '<', 4, "13.5 $file: within a few standard errors");
        cmp_ok(abs($j->{simulated_effective_fraction} - $j->{effective_fraction}), '<',
               1e-3, "13.5 $file: within a few hundredths of a per cent");
        agrees("SolThirteenE${w}Sigmas", $sigmas, "13.5 $file: the distance printed");
        agrees("SolThirteenE${w}Closed", 100 * $j->{effective_fraction}, "13.5 $file: closed");
        agrees("SolThirteenE${w}Simulated", 100 * $j->{simulated_effective_fraction},
               "13.5 $file: simulated");
    }
}

# ----------------------------------------------------------------- 13.6 ----
{
    my $gpu_s = $gpus * $M_llama;
    my $f = sub {
        my ($n, $R) = @_;
        my $M = $gpu_s / $n;
        return effective(daly($delta405, $M), $delta405, $R, $M);
    };
    for my $n ([16384, 'Sixteen'], [32768, 'ThirtyTwo'], [65536, 'SixtyFour'],
               [131072, 'HundredTwentyEight']) {
        agrees("SolThirteenF$n->[1]Effective", 100 * $f->($n->[0], 600),
               "13.6 $n->[0] GPUs: f");
    }
    for my $r ([600, 'Ten'], [120, 'Two']) {
        my $n = value("SolThirteenFLargest$r->[1]");     # to three figures
        cmp_ok($f->($n * 0.995, $r->[0]), '>=', 0.9,
               "13.6 R = $r->[0] s: 0.5 % fewer than $n GPUs keep 90 %");
        cmp_ok($f->($n * 1.005, $r->[0]), '<', 0.9,
               "13.6 R = $r->[0] s: 0.5 % more do not");
    }
    my $ratio = value('SolThirteenFLargestTwo') / value('SolThirteenFLargestTen');
    close_to(value('SolThirteenFLargestRatio'), $ratio, 0.01, '13.6 (c): the ratio');
    cmp_ok($ratio, '<', 5, '13.6 (c): less than the five times the restart shrank');
    cmp_ok($ratio, '>', 3, '13.6 (c): ... but most of it');
}

# ----------------------------------------------------------------- 13.7 ----
{
    is($macro{SolThirteenGResumedFrom}, 10, '13.7 (a): killed after step 12, resumed from 10');
    is($macro{SolThirteenGIdentical}, 1, '13.7 (a): the resumed run ends with the same bytes');
    for my $f (glob "$sols/13-ex7-straight/*") {
        (my $other = $f) =~ s/13-ex7-straight/13-ex7-killed/;
        ok(same_files($f, $other), "13.7 (a): $f is the resumed run's");
    }
    my $manifest = slurp("$sols/13-ex7-straight/manifest") // '';
    like($manifest, qr/^step 20$/m, '13.7 (b): the manifest names the step');
    like($manifest, qr/^zero 3$/m, '13.7 (b): ... the layout');
    my @shards = $manifest =~ /^shard \d+ (\S+) \d+ [0-9a-f]+$/mg;
    is(scalar @shards, 2, '13.7 (b): two shards, each with bytes and a checksum');
    is($macro{SolThirteenGShards}, scalar @shards, '13.7 (b): as the solution says');
    is($macro{SolThirteenGRefusedStatus}, 2, '13.7 (c): the cut shard is refused, status 2');
    my @lines = grep { /\S/ } split /\n/, slurp("$sols/13-ex7-refused.err") // '';
    my %distinct = map { $_ => 1 } @lines;
    is(scalar keys %distinct, 1, '13.7 (c): in one line (from each rank that says it)');
    like($lines[0] // '', qr/truncated/, '13.7 (c): ... that says the shard is cut');
    is($macro{SolThirteenGDamagedUntouched}, 1, '13.7 (c): the copy is untouched');
    is(scalar(() = glob("$sols/13-ex7-damaged.tmp*")), 0, '13.7 (c): nothing temporary left');
    my ($one, $two) = map { json($_)->{val_loss} } '13-ex7-one-rank', '13-ex7-straight';
    cmp_ok(abs($one - $two), '<', 1e-4, '13.7 (d): one rank ends close to two');
    is($macro{SolThirteenGOneRankExact}, $one == $two ? 1 : 0, '13.7 (d): exact or not, as said');
    is(json('13-ex7-one-rank')->{dp}, 1, '13.7 (d): resumed on one rank')
        if exists json('13-ex7-one-rank')->{dp};
}

# ------------------------------------------- the solution, the statements --
my $code = solution_sources_ok(solution => 'solutions/13-reliability.tex',
                               prefix => 'SolThirteen', macros => \%macro,
                               transcripts => 4, width => 85);
unlike($code, qr/\\ref\{/,
       'no reference to a label of the book (the volumes are apart)');
my ($text, @items) = exercise_file_ok(
    exercises => 'exercises/13-reliability.tex',
    solution => 'solutions/13-reliability.tex',
    heading => 'soltwelveexercise');
answers_not_given_away($text, \%macro, qw(
    SolThirteenAMidMtbi SolThirteenALlamaGpuHours SolThirteenBFastDaly
    SolThirteenBSlowDaly SolThirteenCTenEffective SolThirteenCKeepRestart
    SolThirteenDOneStall SolThirteenDShard SolThirteenFLargestTen
    SolThirteenFLargestTwo));
solutions_pdf_ok(chapter => 13, solution => 'solutions/13-reliability.tex',
                 title => 'When GPUs fail', items => scalar @items,
                 key => { 1 => $macro{SolThirteenALlamaGpuHours},
                          3 => $macro{SolThirteenCTenEffective},
                          6 => $macro{SolThirteenFLargestTen} },
                 newer_than => "$sols/13-ex7-derived.tex");

done_testing();
