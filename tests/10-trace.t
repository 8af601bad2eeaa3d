#!/usr/bin/perl
# tests/10-trace.t: the pipeline's trace (Section "The bubble, measured").
# First without the trainer: a small C program, linked with minigpt's
# objects, hands the trace timelines made by hand or by Part I's simulator
# and prints what it computes; the bubble of a known timeline, the replay of
# a simulated timeline (which must give the simulation's own bubble back),
# the formula beside the simulator for equal stages, a delay that the
# replay removes, a transfer time found and replayed, and the CSV and
# report of a whole trace on one to three ranks.
# Then the trainer itself: --trace and --json on two stages for GPipe, 1F1B,
# ZB-H1 and the interleaved schedule, whose trace must hold every operation
# once per step, never two at once on a stage, each forward after its input's
# forward on the stage before and each backward after its gradient's backward
# on the stage after; whose peaks in flight are the schedule's; and whose
# measured bubble lies in (0, 1) and falls from M = 1 to M = 8, as the
# replayed one does (the medians of a few steps; no time is compared with a
# threshold).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp ();
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
ok(-x $minigpt, 'minigpt is built') or BAIL_OUT('no minigpt');
my $dir = File::Temp::tempdir(CLEANUP => 1);

# ------------------------------------------------------------ the program --
my $program = <<'C';
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipeline_trace.h"

static int failures;

static void check(const char *name, int ok, double got, double want)
{
    printf("check %s %s %.17g %.17g\n", ok ? "ok" : "FAIL", name, got, want);
    failures += !ok;
}

static int near(double x, double y) { return fabs(x - y) <= 1e-12; }

/* A timeline by Part I's simulator, each op lasting a length of its own
   (jitter != 0) or F = 1, B = 2 (W = 1, B = 1 in zb-h1). */
static Pipeline simulated_p2p(Schedule s, int P, int M, int V,
                              double jitter, double p2p, double **seconds)
{
    Pipeline p = { .schedule = s, .stages = P, .micro_batches = M,
                   .chunks = V, .backward_ratio = 2, .weight_share = 0.5,
                   .p2p_seconds = p2p };
    int n = pipeline_ops_per_stage(&p);
    *seconds = malloc(sizeof **seconds * P * n);
    PipeOp *order = malloc(sizeof *order * n);
    for (int r = 0; r < P; r++) {
        pipeline_order(&p, r, order);
        for (int i = 0; i < n; i++) {
            double base = order[i].kind == PIPE_FORWARD ? 1.0
                        : s == SCHEDULE_ZB_H1 ? 1.0 : 2.0;
            (*seconds)[r * n + i] = base / V
                * (1 + jitter * ((r * 7 + i * 13) % 11) / 11.0);
        }
    }
    free(order);
    p.op_seconds = *seconds;
    if (simulate_pipeline(&p) != 0)
        abort();
    return p;
}

static Pipeline simulated(Schedule s, int P, int M, int V, double jitter,
                          double **seconds)
{
    return simulated_p2p(s, P, M, V, jitter, 0, seconds);
}

static void unit_checks(void)
{
    /* GPipe, P = 2, M = 1: stage 0 F [0,1] and B [3,5]; stage 1 F [1,2]
       and B [2,3]; busy 5 of 2 x 5. */
    PipeOp known[4] = { { PIPE_FORWARD, 0, 0, 0, 1 },
                        { PIPE_BACKWARD, 0, 0, 3, 5 },
                        { PIPE_FORWARD, 0, 0, 1, 2 },
                        { PIPE_BACKWARD, 0, 0, 2, 3 } };
    double span = 0;
    double b = trace_bubble(known, 2, 2, &span);
    check("known-bubble", near(b, 0.5), b, 0.5);
    check("known-span", near(span, 5), span, 5);
    Pipeline g = { .schedule = SCHEDULE_GPIPE, .stages = 2,
                   .micro_batches = 1, .chunks = 1 };
    double replayed = trace_replay(&g, known, 0);
    check("known-replay", near(replayed, 0.5), replayed, 0.5);

    /* The replay of a simulated timeline is that timeline. */
    const Schedule kinds[] = { SCHEDULE_GPIPE, SCHEDULE_1F1B,
                               SCHEDULE_INTERLEAVED, SCHEDULE_ZB_H1 };
    for (int k = 0; k < 4; k++)
        for (int P = 2; P <= 4; P++)
            for (int M = 1; M <= 8; M++) {
                int V = kinds[k] == SCHEDULE_INTERLEAVED ? 2 : 1;
                if (V > 1 && M % P != 0)
                    continue;
                double *seconds;
                Pipeline p = simulated(kinds[k], P, M, V, 0.8, &seconds);
                double want = trace_bubble(p.ops, P, p.per_stage, NULL);
                Pipeline plain = { .schedule = kinds[k], .stages = P,
                                   .micro_batches = M, .chunks = V };
                double got = trace_replay(&plain, p.ops, 0);
                char name[64];
                snprintf(name, sizeof name, "replay-%s-P%d-M%d",
                         schedule_name(kinds[k]), P, M);
                check(name, fabs(got - want) <= 1e-9, got, want);
                free(p.ops), free(seconds);
            }

    /* Equal stages and no transfer time: the formula's bubble. */
    for (int k = 0; k < 4; k++)
        for (int P = 2; P <= 4; P++)
            for (int M = P; M <= 8; M += P) {
                int V = kinds[k] == SCHEDULE_INTERLEAVED ? 2 : 1;
                double *seconds;
                Pipeline p = simulated(kinds[k], P, M, V, 0, &seconds);
                double got = trace_bubble(p.ops, P, p.per_stage, NULL);
                double want = trace_theory(&p, 2, 0.5);
                char name[64];
                snprintf(name, sizeof name, "formula-%s-P%d-M%d",
                         schedule_name(kinds[k]), P, M);
                check(name, fabs(got - want) <= 1e-9, got, want);
                free(p.ops), free(seconds);
            }

    /* With a transfer time per message: the trace finds it, and the
       replay with it gives the timeline back. */
    for (int k = 0; k < 4; k++)
        for (int P = 2; P <= 4; P++) {
            int V = kinds[k] == SCHEDULE_INTERLEAVED ? 2 : 1, M = 2 * P;
            double *seconds;
            Pipeline p = simulated_p2p(kinds[k], P, M, V, 0.8, 0.25,
                                       &seconds);
            double want = trace_bubble(p.ops, P, p.per_stage, NULL);
            double transfer = trace_transfer(p.ops, P, V, p.per_stage);
            Pipeline plain = { .schedule = kinds[k], .stages = P,
                               .micro_batches = M, .chunks = V };
            double got = trace_replay(&plain, p.ops, transfer);
            double none = trace_replay(&plain, p.ops, 0);
            char name[64];
            snprintf(name, sizeof name, "transfer-%s-P%d",
                     schedule_name(kinds[k]), P);
            check(name, fabs(transfer - 0.25) <= 1e-12, transfer, 0.25);
            snprintf(name, sizeof name, "replay-transfer-%s-P%d",
                     schedule_name(kinds[k]), P);
            check(name, fabs(got - want) <= 1e-9, got, want);
            snprintf(name, sizeof name, "replay-no-transfer-%s-P%d",
                     schedule_name(kinds[k]), P);
            check(name, none < want, none, want);
            free(p.ops), free(seconds);
        }

    /* A stage that starts late (a stolen core) is bubble in the measure,
       not in the replay. */
    double *seconds;
    Pipeline p = simulated(SCHEDULE_1F1B, 2, 4, 1, 0, &seconds);
    double before = trace_bubble(p.ops, 2, p.per_stage, NULL);
    for (int i = 0; i < p.per_stage; i++) {          /* stage 1, late */
        p.ops[p.per_stage + i].start += 3;
        p.ops[p.per_stage + i].end += 3;
    }
    double late = trace_bubble(p.ops, 2, p.per_stage, NULL);
    Pipeline plain = { .schedule = SCHEDULE_1F1B, .stages = 2,
                       .micro_batches = 4, .chunks = 1 };
    double again = trace_replay(&plain, p.ops, 0);
    check("late-measured-grows", late > before + 0.05, late, before);
    check("late-replay-removes-it", near(again, before), again, before);
    free(p.ops), free(seconds);
}

/* Every rank of the world is a stage of one pipeline: three steps of a
   simulated 1F1B timeline, each stage handing its own ops. */
static int whole_trace(const char *csv, int steps)
{
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double *seconds;
    Pipeline p = simulated(SCHEDULE_1F1B, P, 4, 1, 0.5, &seconds);
    Pipeline plain = { .schedule = SCHEDULE_1F1B, .stages = P,
                       .micro_batches = 4, .chunks = 1 };
    PipelineTrace t;
    if (pipeline_trace_init(&t, &plain, MPI_COMM_WORLD, csv) != 0)
        return 2;
    for (int s = 0; s < steps; s++)
        pipeline_trace_step(&t, p.ops + rank * p.per_stage, P - rank + s % 2,
                            s + 1);
    Report r = { .count = 0 };
    pipeline_trace_report(&t, &r);
    if (rank == 0) {
        double want = trace_bubble(p.ops, P, p.per_stage, NULL);
        printf("bubble %.17g\n", want);
        Option none[] = { OUTPUT_OPTIONS, { NULL, 0, 0, NULL, 0, NULL, 0 } };
        find_option(none, "--json")->given = 1;
        print_report(stdout, &r, none);
        pipeline_trace_print(stdout, &r);
    }
    free(p.ops), free(seconds);
    return pipeline_trace_free(&t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int status = 0;
    if (argc == 2 && strcmp(argv[1], "--unit") == 0) {
        unit_checks();
        status = failures != 0;
    } else if (argc == 3) {
        status = whole_trace(strcmp(argv[1], "-") ? argv[1] : NULL,
                             atoi(argv[2]));
    }
    MPI_Finalize();
    return status;
}
C

# Built as the trainer's objects are, and linked with an archive of them
# (all but main.c's), from which the linker takes what the trace needs.
my $flags = slurp("$root/build/obj/cflags") // die 'no build/obj/cflags';
my (undef, @cflags) = split ' ', $flags;
open my $f, '>', "$dir/trace-test.c" or die;
print $f $program;
close $f;
my @objects = ((grep { !m{/(main|bench)\.o$} }
                glob "$root/build/obj/minigpt/*.o"),
               "$root/build/obj/comm/ring.o", "$root/build/obj/comm/mesh.o",
               glob("$root/build/obj/common/*.o"),
               grep { -e } "$root/build/obj/cuda/absent.o");
my ($s0, undef, $e0) = run('ar', 'qcs', "$dir/trainer.a", @objects);
is($s0, 0, 'the trainer\'s objects make an archive') or diag $e0;
my ($s1, undef, $e1) = run('mpicc', @cflags, "-I$root/code/minigpt",
                           "$dir/trace-test.c", "$dir/trainer.a", '-lm',
                           '-o', "$dir/trace-test");
is($s1, 0, 'the test program compiles and links') or diag $e1;

my ($status, $out, $err) = run("$dir/trace-test", '--unit');
is($status, 0, 'the unit checks pass') or diag $err;
my @checks = $out =~ /^check (\S+ \S+ \S+ \S+)$/mg;
cmp_ok(scalar @checks, '>', 100, 'the unit checks ran');
for (@checks) {
    my ($verdict, $name, $got, $want) = split ' ';
    is($verdict, 'ok', "$name: $got (want $want)");
}

# ------------------------------------------------------ a whole trace ------
sub rows_of_csv {
    my ($path) = @_;
    my $text = slurp($path) // return;
    my ($header, @lines) = split /\n/, $text;
    return ($header, [map { [split /,/] } @lines]);
}

for my $P (1, 2, 3) {
    my $csv = "$dir/whole-$P.csv";
    my ($st, $o, $e) = run(mpiexec($P, "$dir/trace-test", $csv, 3));
    is($st, 0, "whole trace on $P ranks: exit status 0") or diag $e;
    my ($want) = $o =~ /^bubble (\S+)$/m;
    my ($json) = $o =~ /^(\{.*?^\})$/ms;
    my $r = eval { JSON::PP::decode_json($json // '') } // {};
    ok(close_to($r->{bubble_measured} // -1, $want // -2, 1e-12, 1e-12),
       "whole trace on $P ranks: the measured bubble is the timeline's");
    ok(close_to($r->{bubble_replayed} // -1, $want // -2, 1e-9, 1e-9),
       "whole trace on $P ranks: the replay gives it back");
    is($r->{trace_steps}, 2, "whole trace on $P ranks: 2 steps after a "
       . 'warm-up of 1');
    is($r->{peak_inflight}, $P + 1, "whole trace on $P ranks: the most slots "
       . 'handed over, on stage 0');
    is($r->{peak_inflight_per_stage},
       join(' ', map { $P - $_ + 1 } 0 .. $P - 1),
       "whole trace on $P ranks: the most slots of each stage");
    is($r->{peak_inflight_schedule_per_stage},
       join(' ', map { $P - $_ > 4 ? 4 : $P - $_ } 0 .. $P - 1),
       "whole trace on $P ranks: 1F1B holds P - r on stage r");
    like($o, qr/^bubble *= .* % measured: .*, the median of 2 steps$/m,
         "whole trace on $P ranks: printed for a person");
    my ($header, $rows) = rows_of_csv($csv);
    is($header, 'step,stage,kind,micro_batch,chunk,start_s,end_s',
       "whole trace on $P ranks: the CSV's header");
    is(scalar @$rows, 3 * $P * 8, "whole trace on $P ranks: a row per "
       . 'operation of every stage and step');
    my %seen;
    $seen{"$_->[0] $_->[1] $_->[2] $_->[3]"}++ for @$rows;
    is(scalar(grep { $_ != 1 } values %seen), 0,
       "whole trace on $P ranks: each operation once");
    is(scalar(grep { @$_ != 7 } @$rows), 0,
       "whole trace on $P ranks: seven columns in every row");
    is_deeply([glob "$csv.*"], [],
              "whole trace on $P ranks: no temporary file left");
}
my ($st, $o) = run(mpiexec(2, "$dir/trace-test", '-', 2));
is($st, 0, 'without --trace: no CSV, and the report all the same');
like($o, qr/"bubble_measured"/, 'without --trace: the report');

# ------------------------------------------------------------ the trainer --
# Operations long enough (a few milliseconds) that a message's time does
# not swamp them on an idle machine.
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @small = (qw(--layers 4 --hidden 128 --heads 4 --seq 64 --batch 16
                --vocab 64 --steps 6 --quiet),
             '--machine', "$root/build/machine.json");

sub trained {
    my ($schedule, $m) = @_;
    my $csv = "$dir/$schedule-$m.csv";
    my ($status, $out, $err) = run(mpiexec(2, $minigpt, @small, '--pp', 2,
                                   '--schedule', $schedule,
                                   '--micro-batches', $m, '--trace', $csv,
                                   '--json'));
    return (undef, $err) if $status != 0;
    my $r = eval { JSON::PP::decode_json($out) };
    return ($r, $err, $csv);
}

my ($pipe) = grep { /--trace\b/ } `$minigpt --help 2>&1`;
SKIP: {
    skip 'minigpt has no --trace yet', 1 unless $pipe;
    for my $schedule (qw(gpipe 1f1b zb-h1 interleaved)) {
        my $V = $schedule eq 'interleaved' ? 2 : 1;
        my @ms = $V > 1 ? (2, 8) : (1, 8);         # m a multiple of P
        my (%bubble, %replayed);
        for my $m (@ms) {
            my $what = "$schedule, M = $m";
            my ($r, $err, $csv) = trained($schedule, $m);
            ok($r, "$what: runs") or diag $err;
            next unless $r;
            my $measured = $r->{bubble_measured} // -1;
            ok($measured > 0 && $measured < 1, "$what: the measured bubble "
               . "$measured lies in (0, 1)");
            $bubble{$m} = $measured;
            $replayed{$m} = $r->{bubble_replayed};
            is($r->{peak_inflight_per_stage},
               $r->{peak_inflight_schedule_per_stage}, "$what: the peaks "
               . 'in flight measured are the schedule\'s');
            my ($header, $rows) = rows_of_csv($csv);
            my $per = $schedule eq 'zb-h1' ? 3 * $m : 2 * $m * $V;
            is($header, 'step,stage,kind,micro_batch,chunk,start_s,end_s',
               "$what: the CSV's header");
            is(scalar @$rows, 6 * 2 * $per, "$what: a row per operation of "
               . 'every stage and step');
            my %seen;
            $seen{join ' ', @$_[0 .. 4]}++ for @$rows;
            is(scalar(keys %seen), 6 * 2 * $per,
               "$what: each operation once per step");
            # Each stage's operations one at a time; each forward after
            # the forward of the virtual stage before (chunk c of stage r
            # is virtual stage 2c + r), each backward after the backward
            # of the one after.
            my (%by_stage, %end, $overlaps, $early);
            push @{ $by_stage{"$_->[0] $_->[1]"} }, $_ for @$rows;
            for my $ops (values %by_stage) {
                my @sorted = sort { $a->[5] <=> $b->[5] } @$ops;
                for my $i (1 .. $#sorted) {
                    $overlaps++ if $sorted[$i][5] < $sorted[$i - 1][6];
                }
            }
            my $virtual = sub { 2 * $_[0][4] + $_[0][1] };
            $end{join ' ', $_->[0], $_->[2], $_->[3], $virtual->($_)}
                = $_->[6] for @$rows;
            for my $row (grep { $_->[2] =~ /^[FB]$/ } @$rows) {
                my $from = $virtual->($row) + ($row->[2] eq 'F' ? -1 : 1);
                next if $from < 0 || $from >= 2 * $V;
                my $before = $end{join ' ', @$row[0, 2, 3], $from};
                $early++ if !defined $before || $row->[5] < $before;
            }
            ok(!$overlaps, "$what: no two operations at once on a stage");
            ok(!$early, "$what: each forward and backward starts after "
               . 'its input\'s ends on the neighbouring stage');
        }
        my ($few, $many) = @ms;
        # A replay of measured durations is a measurement: whether it
        # falls with M is for the book's sentences, not a test (it did not
        # on a loaded machine). Here: each replay is a fraction.
        for my $m ($few, $many) {
            my $r = $replayed{$m};
            ok(defined $r && $r >= 0 && $r < 1,
               "$schedule: the replayed bubble at M = $m is a fraction ("
               . ($r // '?') . ')');
        }
        # The interleaved schedule's operations are a chunk's, half as
        # long, and it sends twice the messages: on a busy machine the
        # time its messages wait swamps its bubble, so only its replay is
        # held to the fall.
        next if $V > 1;
        ok(($bubble{$many} // 1) < ($bubble{$few} // 0),
           "$schedule: the measured bubble falls from M = $few ("
           . ($bubble{$few} // '?') . ") to M = $many ("
           . ($bubble{$many} // '?') . ')');
    }
}

done_testing();
