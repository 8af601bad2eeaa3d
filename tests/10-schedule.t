#!/usr/bin/perl
# tests/10-schedule.t: the module of pipeline schedules
# (code/common/pipeline_schedule.c), on its own and through fleet pipeline.
#
# A small driver is compiled against the module alone (no fleet, no MPI: the
# trainer links the same file) and runs each schedule over a grid of stages
# p (2..16), micro-batches m (1..32) and chunks v. Independent arithmetic:
# GPipe and 1F1B idle (p-1)/(m+p-1) of the step; interleaved (p-1)/(vm+p-1)
# when m is a multiple of p; zb-h1, with F = 1, B = (1-w)R and W = wR,
# (p-1)(F+B-W) / (m(F+B+W) + (p-1)(F+B-W)) for m >= p and W no longer
# than F or B, and the fill (p-1)F or the drain (p-1)B in place of
# (p-1)(F+B-W) where either is longer; for m < p more than that.
# From the order: every stage's list holds every (kind, micro-batch, chunk)
# exactly once, each W after its own B, 1F1B and zb-h1 warm up with
# p-r-1 forwards; the peak in flight is m for GPipe, min(p-r, m) for 1F1B
# and min(p, m) for zb-h1 (activations held from F until W). A replay of
# the simulated durations through op_seconds gives back the same timeline.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use List::Util qw(min max);
use File::Temp ();
use Test::More;

my $root = root();
my $fleet = "$root/build/bin/fleet";
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT('run make first');

# ------------------------------------------------------------ the driver --
# One run per line of input: "schedule p m v R w [replay]"; for each, the
# run's results, each stage's warm-up and peak, and every operation in the
# order the stage runs it. Built from the module alone.
my $dir = File::Temp::tempdir(CLEANUP => 1);
open my $src, '>', "$dir/driver.c" or die "$dir/driver.c: $!";
print $src <<'C';
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_schedule.h"

static const char *kind_name(PipeOpKind k)
{
    return k == PIPE_FORWARD ? "F" : k == PIPE_BACKWARD ? "B" : "W";
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "names") == 0) {
        for (int s = SCHEDULE_GPIPE; s <= SCHEDULE_ZB_H1; s++)
            printf("%d %s %d\n", s, schedule_name((Schedule)s),
                   schedule_from_name(schedule_name((Schedule)s)));
        for (int i = 2; i < argc; i++)
            printf("unknown %s %d\n", argv[i], schedule_from_name(argv[i]));
        return 0;
    }
    char name[32];
    int P, m, v, replay;
    double R, w;
    while (scanf("%31s %d %d %d %lf %lf %d", name, &P, &m, &v, &R, &w,
                 &replay) == 7) {
        Pipeline p = { .schedule = (Schedule)schedule_from_name(name),
                       .stages = P, .micro_batches = m, .chunks = v,
                       .backward_ratio = R, .weight_share = w };
        int n = pipeline_ops_per_stage(&p);
        /* the order alone, before any simulation */
        PipeOp *order = malloc(sizeof *order * n);
        for (int r = 0; r < P; r++) {
            pipeline_order(&p, r, order);
            for (int i = 0; i < n; i++)
                printf("order %d %s %d %d\n", r, kind_name(order[i].kind),
                       order[i].micro_batch, order[i].chunk);
        }
        free(order);
        int status = simulate_pipeline(&p);
        if (replay && status == 0) {  /* the same durations, measured */
            double *seconds = malloc(sizeof *seconds * P * p.per_stage);
            for (int i = 0; i < P * p.per_stage; i++)
                seconds[i] = p.ops[i].end - p.ops[i].start;
            Pipeline again = p;
            again.op_seconds = seconds;
            again.backward_ratio = 1e3;       /* ignored when replaying */
            status = simulate_pipeline(&again);
            for (int i = 0; i < P * p.per_stage; i++)
                if (again.ops[i].start != p.ops[i].start
                    || again.ops[i].end != p.ops[i].end)
                    status = 99;
            free(again.ops), free(seconds);
        }
        printf("run %d %d %.17g %.17g %.17g %.17g\n", status, p.per_stage,
               p.step_time, p.compute, p.bubble,
               bubble_fraction_closed(p.schedule, P, m, v, R, w));
        for (int r = 0; r < P && status == 0; r++) {
            printf("stage %d %d %.17g\n", r, pipeline_warmup(&p, r),
                   pipeline_peak_in_flight(&p, r));
            for (int i = 0; i < p.per_stage; i++) {
                const PipeOp *o = &p.ops[r * p.per_stage + i];
                printf("op %d %s %d %d %.17g %.17g\n", r, kind_name(o->kind),
                       o->micro_batch, o->chunk, o->start, o->end);
            }
        }
        printf("end\n");
        free(p.ops);
    }
    return 0;
}
C
close $src;
my @cflags = qw(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror
                -Wshadow -Wstrict-prototypes -Wmissing-prototypes);
my ($cs, undef, $ce) = run('gcc', @cflags, "-I$root/code/common",
                           "$dir/driver.c", "$root/code/common/pipeline_schedule.c",
                           '-lm', '-o', "$dir/driver");
is($cs, 0, 'the module compiles and links on its own, without fleet or MPI')
    or BAIL_OUT("driver: $ce");

# Run every case in one process; return one hash per case, in order.
sub schedules {
    my @cases = @_;
    my $in = "$dir/in";
    open my $fh, '>', $in or die "$in: $!";
    print $fh join(' ', @$_{qw(schedule p m v r w)}, $_->{replay} // 0), "\n"
        for @cases;
    close $fh;
    my ($status, $out, $err) = run('sh', '-c', "'$dir/driver' < '$in'");
    die "driver: $err" if $status;
    my @runs;
    my $run = {};
    for (split /\n/, $out) {
        my @f = split / /;
        my $tag = shift @f;
        if ($tag eq 'order') {
            push @{ $run->{order}[$f[0]] }, { kind => $f[1], mb => $f[2],
                                                chunk => $f[3] };
        } elsif ($tag eq 'run') {
            @$run{qw(status per_stage step compute bubble closed)} = @f;
        } elsif ($tag eq 'stage') {
            $run->{warmup}[$f[0]] = $f[1];
            $run->{peak}[$f[0]] = $f[2];
        } elsif ($tag eq 'op') {
            push @{ $run->{ops}[$f[0]] }, { kind => $f[1], mb => $f[2],
                chunk => $f[3], start => $f[4], end => $f[5] };
        } elsif ($tag eq 'end') {
            push @runs, $run;
            $run = {};
        }
    }
    is(scalar @runs, scalar @cases, 'the driver answered every case');
    return @runs;
}

# --------------------------------------------------------------- the grid --
my @cases;
for my $p (2 .. 16) {
    for my $m (1 .. 32) {
        push @cases, { schedule => $_, p => $p, m => $m, v => 1, r => 2,
                       w => 0.5 } for qw(gpipe 1f1b zb-h1);
        next if $m % $p;       # interleaved as Megatron-LM requires it
        push @cases, { schedule => 'interleaved', p => $p, m => $m, v => $_,
                       r => 2, w => 0.5 } for 2, 3;
    }
}
# zb-h1 with other shares of the backward and another backward ratio
for my $p (2, 3, 4, 8, 16) {
    for my $m ($p, $p + 1, 2 * $p, 32) {
        for my $rw ([2, 0.25], [2, 0.4], [3, 0.5], [2, 0.6], [2, 0.75],
                    [3, 1 / 3], [1, 0.2], [1, 0.5], [1, 0.8], [4, 0.1],
                    [4, 0.5], [2.5, 0.45]) {
            push @cases, { schedule => 'zb-h1', p => $p, m => $m, v => 1,
                           r => $rw->[0], w => $rw->[1] };
        }
    }
}
# replays of measured durations, one per schedule
push @cases, map { { %$_, replay => 1 } }
    { schedule => 'gpipe', p => 4, m => 6, v => 1, r => 2, w => 0.5 },
    { schedule => '1f1b', p => 5, m => 9, v => 1, r => 2.5, w => 0.5 },
    { schedule => 'interleaved', p => 4, m => 8, v => 2, r => 2, w => 0.5 },
    { schedule => 'zb-h1', p => 6, m => 12, v => 1, r => 2, w => 0.3 };

my @runs = schedules(@cases);
my (%bad, %count);
sub check {
    my ($what, $ok, $name) = @_;
    $count{$what}++;
    push @{ $bad{$what} }, $name unless $ok;
}
sub near { my ($x, $y) = @_; return abs($x - $y) <= 1e-9 * max(abs($y), 1e-300) }

for my $i (0 .. $#cases) {
    my ($c, $run) = ($cases[$i], $runs[$i]);
    my ($s, $p, $m, $v, $R, $w) = @$c{qw(schedule p m v r w)};
    my $name = "$s p=$p m=$m v=$v R=$R w=$w";
    check('simulates', $run->{status} == 0, $name);
    next if $run->{status} != 0;
    my $zb = $s eq 'zb-h1';
    my ($F, $B, $W) = (1, $zb ? (1 - $w) * $R : $R, $zb ? $w * $R : 0);

    # the closed forms, against the simulation and against the module's
    if ($s eq 'gpipe' || $s eq '1f1b') {
        my $want = ($p - 1) / ($m + $p - 1);
        check('gpipe and 1f1b: (p-1)/(m+p-1)', near($run->{bubble}, $want),
              $name);
        check('closed form in the module', near($run->{closed}, $want), $name);
    } elsif ($s eq 'interleaved') {
        my $want = ($p - 1) / ($v * $m + $p - 1);
        check('interleaved: (p-1)/(vm+p-1)', near($run->{bubble}, $want),
              $name);
        check('closed form in the module', near($run->{closed}, $want), $name);
    } else {
        my $idle = ($p - 1) * max($F + $B - $W, $F, $B);
        my $want = $idle / ($m * ($F + $B + $W) + $idle);
        check('closed form in the module', near($run->{closed}, $want), $name);
        if ($m >= $p && $W <= min($F, $B)) {
            check('zb-h1, m >= p, W <= F, B: (p-1)(F+B-W) idle',
                  near($run->{bubble}, $want), $name);
        } elsif ($m >= $p) {
            check('zb-h1, m >= p, W > F or B: (p-1) max(F, B) idle',
                  near($run->{bubble}, $want), $name);
        } else {
            check('zb-h1, m < p: more idle than (p-1)(F+B-W)',
                  $run->{bubble} > $want * (1 + 1e-9), $name);
        }
        check('zb-h1 idles a third of 1F1B when F = B = W, m >= p',
              near($run->{bubble} / (1 - $run->{bubble}),
                   ($p - 1) / (3 * $m)), $name)
            if $m >= $p && $R == 2 && $w == 0.5;
    }
    check('compute m(1+R)', near($run->{compute}, $m * (1 + $R)), $name);
    check('replay of the durations: the same timeline', 1, $name)
        if $c->{replay};

    # the order: every operation exactly once, each W after its B
    my $per_stage = $zb ? 3 * $m : 2 * $m * $v;
    check('ops per stage: 2mv, 3m for zb-h1', $run->{per_stage} == $per_stage,
          $name);
    for my $r (0 .. $p - 1) {
        for my $list ([order => $run->{order}[$r]], [timeline => $run->{ops}[$r]]) {
            my ($what, $ops) = @$list;
            my (%seen, $twice, $w_early);
            my $i = 0;
            for my $o (@$ops) {
                my $key = join ',', @$o{qw(kind mb chunk)};
                $twice++ if $seen{$key};
                $seen{$key} = ++$i;
                $w_early++ if $o->{kind} eq 'W' && !$seen{"B,$o->{mb},$o->{chunk}"};
            }
            my $expected = 0;
            for my $mb (0 .. $m - 1) {
                for my $chunk (0 .. $v - 1) {
                    $expected++ if $seen{"F,$mb,$chunk"} && $seen{"B,$mb,$chunk"}
                                   && (!$zb || $seen{"W,$mb,$chunk"});
                }
            }
            check("$what: every (kind, micro-batch, chunk) exactly once",
                  !$twice && @$ops == $per_stage && $expected == $m * $v,
                  "$name stage $r");
            check("$what: no W before its own B", !$w_early, "$name stage $r");
            check("$what: no W outside zb-h1",
                  $zb || !grep({ $_->{kind} eq 'W' } @$ops), "$name stage $r");
        }
        # the simulated timeline runs the order, one thing at a time
        my ($same, $overlap) = (1, 0);
        for my $k (0 .. $per_stage - 1) {
            my ($a, $b) = ($run->{order}[$r][$k], $run->{ops}[$r][$k]);
            $same &&= join(',', @$a{qw(kind mb chunk)})
                   eq join(',', @$b{qw(kind mb chunk)});
            $overlap++ if $k && $b->{start} < $run->{ops}[$r][$k - 1]{end} - 1e-12;
        }
        check('the simulation runs each stage in pipeline_order', $same,
              "$name stage $r");
        check('a stage runs one operation at a time', !$overlap,
              "$name stage $r");

        # warm-up and peak in flight
        my @ops = @{ $run->{order}[$r] };
        my $before = 0;
        $before++ while $before < @ops && $ops[$before]{kind} eq 'F';
        if ($s eq '1f1b' || $zb) {
            check('1f1b and zb-h1: warm-up min(p-r-1, m)',
                  $run->{warmup}[$r] == min($p - $r - 1, $m), "$name stage $r");
            check('1f1b and zb-h1: min(p-r, m) forwards before the first B',
                  $before == min($p - $r, $m), "$name stage $r");
        }
        if ($s eq 'gpipe') {
            check('gpipe: every forward first', $before == $m,
                  "$name stage $r");
            check('gpipe: peak in flight m', $run->{peak}[$r] == $m,
                  "$name stage $r");
        } elsif ($s eq '1f1b') {
            check('1f1b: peak in flight min(p-r, m)',
                  $run->{peak}[$r] == min($p - $r, $m), "$name stage $r");
        } elsif ($zb) {
            check('zb-h1: peak in flight min(p, m), F until W',
                  $run->{peak}[$r] == min($p, $m), "$name stage $r");
        }
        # zb-h1: W of micro-batch j right after B of j + r; r held to the end
        if ($zb) {
            my ($placed, $held) = (1, 0);
            for my $k (0 .. $#ops) {
                next unless $ops[$k]{kind} eq 'W';
                my $j = $ops[$k]{mb};
                if ($j + $r < $m) {
                    $placed &&= $k > 0 && $ops[$k - 1]{kind} eq 'B'
                             && $ops[$k - 1]{mb} == $j + $r;
                } else {
                    $held++;
                    $placed &&= $k > $#ops - min($r, $m);
                }
            }
            check('zb-h1: W of j after B of j + r, min(r, m) held to the end',
                  $placed && $held == min($r, $m), "$name stage $r");
        }
    }
}
for my $what (sort keys %count) {
    my @failed = @{ $bad{$what} // [] };
    ok(!@failed, "$what ($count{$what} cases)")
        or diag('failed: ' . join('; ', @failed[0 .. min(4, $#failed)]));
}
# The grid must reach each claim, or the checks above prove nothing.
for my $what ('gpipe and 1f1b: (p-1)/(m+p-1)', 'interleaved: (p-1)/(vm+p-1)',
              'zb-h1, m >= p, W <= F, B: (p-1)(F+B-W) idle',
              'zb-h1, m >= p, W > F or B: (p-1) max(F, B) idle',
              'zb-h1, m < p: more idle than (p-1)(F+B-W)',
              'replay of the durations: the same timeline',
              'zb-h1: W of j after B of j + r, min(r, m) held to the end') {
    cmp_ok($count{$what} // 0, '>', 3, "the grid reaches: $what");
}

# ------------------------------------------------------------- the names --
{
    my ($status, $out) = run("$dir/driver", 'names', 'ZB-H1', 'zb_h1', '',
                             '1F1B', 'interleave');
    is($status, 0, 'the driver prints the names');
    my @lines = split /\n/, $out;
    is_deeply([ @lines[0 .. 3] ],
              [ '0 gpipe 0', '1 1f1b 1', '2 interleaved 2', '3 zb-h1 3' ],
              'schedule_name and schedule_from_name round-trip');
    is_deeply([ @lines[4 .. $#lines] ],
              [ 'unknown ZB-H1 -1', 'unknown zb_h1 -1', 'unknown  -1',
                'unknown 1F1B -1', 'unknown interleave -1' ],
              'schedule_from_name refuses unknown names with -1');
}

# ----------------------------------------------------- fleet pipeline --
{
    my $j = fleet_json('pipeline', qw(--pp 8 --micro-batches 32
                                      --schedule zb-h1));
    is($j->{schedule}, 'zb-h1', 'fleet pipeline --schedule zb-h1: schedule');
    is($j->{pp}, 8, 'pp');
    is($j->{micro_batches}, 32, 'micro_batches');
    is($j->{weight_share}, 0.5, 'weight_share: one half by default');
    close_to($j->{step_time}, 32 * 3 + 7, 1e-12,
             'step m(F+B+W) + (p-1)(F+B-W) = 103 units');
    close_to($j->{compute}, 96, 1e-12, 'compute m(1+R)');
    close_to($j->{bubble}, 7 / 103, 1e-12, 'bubble 7/103 of the step');
    close_to($j->{closed_bubble}, 7 / 103, 1e-12, 'closed_bubble beside it');
    close_to($j->{bubble_over_compute}, 7 / 96, 1e-12, 'bubble_over_compute');
    close_to($j->{closed_bubble_over_compute}, 7 / 96, 1e-12,
             'closed_bubble_over_compute');
    is($j->{peak_in_flight_first_stage}, 8, 'peak in flight p on stage 0');

    my $o = fleet_json('pipeline', qw(--pp 8 --micro-batches 32));
    close_to($o->{closed_bubble}, 7 / 39, 1e-12,
             '1f1b: closed_bubble (p-1)/(m+p-1)');
    is($o->{weight_share}, 0.5, '1f1b reports the default share too');
    cmp_ok($j->{bubble}, '<', $o->{bubble} / 2.5,
           'zb-h1 idles about a third of 1F1B');

    my $q = fleet_json('pipeline', qw(--pp 4 --micro-batches 8
                                      --schedule zb-h1 --weight-share 0.25));
    is($q->{weight_share}, 0.25, '--weight-share 0.25');
    # F = 1, B = 1.5, W = 0.5: idle 3 x 2 = 6 in a step of 8 x 3 + 6
    close_to($q->{bubble}, 6 / 30, 1e-12, '--weight-share 0.25: 6/30');
    close_to($q->{closed_bubble}, 6 / 30, 1e-12, 'its closed form');

    my ($status, $out, $err) = run($fleet, 'pipeline', qw(--pp 4
        --micro-batches 6 --schedule zb-h1 --trace));
    is($status, 0, 'fleet pipeline --schedule zb-h1 --trace');
    my @rows = split /\n/, $out;
    is(shift @rows, 'stage,op,micro_batch,chunk,start,end', 'trace header');
    is(scalar @rows, 4 * 3 * 6, '3m operations a stage');
    is(scalar(grep { (split /,/)[1] eq 'weight' } @rows), 4 * 6,
       'one weight-gradient operation per micro-batch per stage');

    my ($ss, $sout) = run($fleet, 'pipeline', qw(--pp 4 --micro-batches 6
        --schedule zb-h1 --stages));
    is($sout, "stage,warmup,peak_in_flight,in_flight_predicted\n"
              . "0,3,4,4\n1,2,4,4\n2,1,4,4\n3,0,4,4\n",
       '--stages: warm-up p-r-1, p in flight, as chapter 4 predicts');

    my ($ts, $text) = run($fleet, 'pipeline', qw(--pp 8 --micro-batches 32
                                                 --schedule zb-h1));
    like($text, qr/ZB-H1/, 'the derivation names ZB-H1');
    like($text, qr/closed form += \(p − 1\)\(F \+ B − W\)/,
         'the derivation prints the closed form');
    like($text, qr{= 7/103 = 6\.8 % of the step}, 'and its value');
    my ($tshort, $short) = run($fleet, 'pipeline', qw(--pp 8 --micro-batches 4
                                                      --schedule zb-h1));
    like($short, qr/for m ≥ p only/, 'm < p: the closed form is marked');
}
refused('--weight-share without zb-h1', qr/--weight-share: only zb-h1/,
        $fleet, 'pipeline', qw(--schedule 1f1b --weight-share 0.3));
refused('--weight-share above 1', qr/--weight-share/,
        $fleet, 'pipeline', qw(--schedule zb-h1 --weight-share 1.5));
refused('--weight-share 0', qr/--weight-share/,
        $fleet, 'pipeline', qw(--schedule zb-h1 --weight-share 0));
refused('an unknown schedule', qr/--schedule: unknown schedule "zb".*zb-h1/,
        $fleet, 'pipeline', qw(--schedule zb));
refused('fleet layout --schedule zb-h1', qr/--schedule: the planner compares/,
        $fleet, 'layout', qw(--schedule zb-h1));
refused('fleet activations --schedule zb-h1', qr/--schedule must be/,
        $fleet, 'activations', qw(--schedule zb-h1));

done_testing();
