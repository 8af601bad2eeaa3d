#!/usr/bin/perl
# tests/05-pipeline.t: fleet pipeline's discrete-event simulation
# against the closed forms of the bubble, read from its JSON and from its
# trace, over a grid of stages p, micro-batches m and chunks v.
#
# Independent arithmetic: GPipe and 1F1B with nothing on the wire idle
# (p-1)/(m+p-1) of the step, (p-1)/m of compute; interleaved with v chunks
# idles (p-1)/(v m) of compute when m is a multiple of p (Megatron-LM's
# assumption) and more when it is not; GPipe with X on the wire takes
# (m+p-1)(1+R) + 2(p-1)X. From the trace: every stage computes m(1+R), no
# stage runs two things at once, no operation starts before its input
# arrived, stage r of 1F1B runs p-r forwards (p-r-1 of warm-up and the
# first of the steady state) before its first backward, and the micro-batches
# a stage holds at its peak are min(p-r, m) for 1F1B, m for GPipe and
# min(2(p-r-1) + (v-1)p + 1, v m)/v for interleaved.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use List::Util qw(min max);
use Test::More;
use JSON::PP ();

my $fleet = root() . '/build/bin/fleet';
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT('run make first');

sub pipeline {
    my (%a) = @_;
    my @flags = ('--pp', $a{p}, '--micro-batches', $a{m},
                 '--schedule', $a{schedule});
    push @flags, '--chunks', $a{v} if $a{schedule} eq 'interleaved';
    push @flags, '--p2p-seconds', $a{x} if $a{x};
    push @flags, '--backward-ratio', $a{r} if $a{r};
    return @flags;
}

# ------------------------------------------------------ the closed forms --
for my $schedule (qw(gpipe 1f1b)) {
    for my $p (1, 2, 3, 4, 8, 16) {
        for my $m (1, 2, 5, 8, 13, 32, 64) {
            my $j = fleet_json('pipeline',
                               pipeline(schedule => $schedule, p => $p, m => $m));
            close_to($j->{bubble}, ($p - 1) / ($m + $p - 1) || 1e-300, 1e-9,
                     "$schedule p=$p m=$m: idle (p-1)/(m+p-1) of the step")
                if $p > 1;
            is($j->{bubble}, 0, "$schedule p=1 m=$m: no bubble") if $p == 1;
            close_to($j->{step_time}, ($m + $p - 1) * 3, 1e-12,
                     "$schedule p=$p m=$m: step (m+p-1)(1+R)");
        }
    }
}

# Interleaved: the closed form where m is a multiple of p, as Megatron-LM
# requires. Where it is not, the last group of micro-batches is short: the
# schedule idles more than (p-1)/(v m), or its warm-up, sized for full
# groups, waits on itself and the simulation refuses it as a deadlock.
for my $p (2, 3, 4, 8) {
    for my $m (2, 3, 4, 6, 8, 12, 16, 32) {
        for my $v (2, 3, 4) {
            my @flags = pipeline(schedule => 'interleaved', p => $p, m => $m,
                                 v => $v);
            my $closed = ($p - 1) / ($v * $m);
            if ($m % $p == 0) {
                my $j = fleet_json('pipeline', @flags);
                close_to($j->{bubble_over_compute}, $closed, 1e-9,
                         "interleaved p=$p m=$m v=$v: (p-1)/(v m) of compute");
                next;
            }
            my ($status, $out, $err) = run($fleet, 'pipeline', @flags, '--json');
            if ($status == 0) {
                my $j = JSON::PP::decode_json($out);
                cmp_ok($j->{bubble_over_compute}, '>', $closed * (1 + 1e-9),
                       "interleaved p=$p m=$m v=$v (m not a multiple of p): "
                       . "more idle than (p-1)/(v m)");
            } else {
                like($err, qr/--micro-batches: .*deadlocks/,
                     "interleaved p=$p m=$m v=$v (m not a multiple of p): "
                     . "refused as a deadlock");
            }
        }
    }
}
{
    refused('interleaved p=8 m=12 v=2', qr/--micro-batches: .*deadlocks/,
            $fleet, 'pipeline', qw(--pp 8 --micro-batches 12
                                   --schedule interleaved --chunks 2));
}

# GPipe with time on the wire: the fill and the drain each cross p-1 links.
for my $p (2, 4, 8) {
    for my $m (1, 4, 32) {
        for my $x (0.1, 0.5) {
            my $j = fleet_json('pipeline', pipeline(schedule => 'gpipe',
                                                    p => $p, m => $m, x => $x));
            close_to($j->{step_time}, ($m + $p - 1) * 3 + 2 * ($p - 1) * $x,
                     1e-9, "gpipe p=$p m=$m X=$x: (m+p-1)(1+R) + 2(p-1)X");
        }
    }
}
{
    my $j = fleet_json('pipeline', qw(--pp 8 --micro-batches 32));
    close_to($j->{bubble_over_compute}, 7 / 32, 1e-12,
             "the running example's design B: 7/32 of compute");
}

# ------------------------------------------------------------ the trace --
sub trace {
    my ($status, $out, $err) = run($fleet, 'pipeline', @_, '--trace');
    die "fleet pipeline @_ --trace: $err" if $status;
    my @lines = split /\n/, $out;
    is(shift @lines, 'stage,op,micro_batch,chunk,start,end',
       "trace header (@_)");
    my @ops;
    for (@lines) {
        my %o;
        @o{qw(stage op mb chunk start end)} = split /,/;
        push @ops, \%o;
    }
    return @ops;
}

my @cases = (
    [ gpipe => 4, 8, 1, 0 ], [ '1f1b' => 8, 32, 1, 0 ], [ '1f1b' => 4, 3, 1, 0 ],
    [ '1f1b' => 4, 8, 1, 0.3 ], [ interleaved => 4, 8, 2, 0 ],
    [ interleaved => 4, 12, 3, 0.2 ], [ interleaved => 3, 8, 2, 0 ],
);
for my $case (@cases) {
    my ($schedule, $p, $m, $v, $x) = @$case;
    my @flags = pipeline(schedule => $schedule, p => $p, m => $m, v => $v,
                         x => $x);
    my $name = "$schedule p=$p m=$m v=$v X=$x";
    my @ops = trace(@flags);
    is(scalar @ops, 2 * $p * $m * $v, "$name: 2 m v operations per stage");
    my (%end, %busy, %last, $overlap, $early);
    for my $o (@ops) {
        my $kind = $o->{op} eq 'forward' ? 'f' : 'b';
        $end{$kind, $o->{chunk} * $p + $o->{stage}, $o->{mb}} = $o->{end};
    }
    my $vs = $p * $v;
    for my $o (sort { $a->{stage} <=> $b->{stage} || $a->{start} <=> $b->{start} } @ops) {
        my $r = $o->{stage};
        $busy{$r} += $o->{end} - $o->{start};
        $overlap++ if defined $last{$r} && $o->{start} < $last{$r} - 1e-9;
        $last{$r} = $o->{end};
        my $s = $o->{chunk} * $p + $r;
        my $ready;
        if ($o->{op} eq 'forward') {
            $ready = $s == 0 ? 0 : $end{'f', $s - 1, $o->{mb}} + $x;
        } else {
            $ready = $s == $vs - 1 ? $end{'f', $s, $o->{mb}}
                                   : $end{'b', $s + 1, $o->{mb}} + $x;
        }
        $early++ if $o->{start} < $ready - 1e-9;
    }
    ok(!$overlap, "$name: no stage runs two operations at once");
    ok(!$early, "$name: no operation starts before its input arrived");
    for my $r (0 .. $p - 1) {
        close_to($busy{$r}, $m * 3, 1e-9, "$name: stage $r computes m(1+R)");
    }
    # Warm-up and the peak held, stage by stage, from the trace alone.
    for my $r (0 .. $p - 1) {
        my @mine = sort { $a->{start} <=> $b->{start} }
                   grep { $_->{stage} == $r } @ops;
        my $first_back = min(map { $_->{start} } grep { $_->{op} eq 'backward' } @mine);
        my $before = grep { $_->{op} eq 'forward' && $_->{start} < $first_back } @mine;
        my ($held, $peak) = (0, 0);
        for (@mine) {
            $held += $_->{op} eq 'forward' ? 1 : -1;
            $peak = max($peak, $held);
        }
        $peak /= $v;
        if ($schedule eq '1f1b') {
            is($before, min($p - $r, $m),
               "$name: stage $r warms up with p-r-1 forwards, then one more");
            close_to($peak, min($p - $r, $m), 1e-12,
                     "$name: stage $r holds min(p-r, m) micro-batches");
        } elsif ($schedule eq 'gpipe') {
            is($before, $m, "$name: stage $r runs every forward first");
            close_to($peak, $m, 1e-12, "$name: stage $r holds all m");
        } else {
            my $w = min(2 * ($p - $r - 1) + ($v - 1) * $p + 1, $m * $v);
            is($before, $w, "$name: stage $r runs 2(p-r-1)+(v-1)p+1 "
               . "chunk-forwards before its first backward");
            close_to($peak, $w / $v, 1e-12,
                     "$name: stage $r holds (2(p-r-1)+(v-1)p+1)/v");
        }
    }
    # The same peak from the program's own per-stage table, and what
    # chapter 4's micro_batches_in_flight predicts for it.
    my ($status, $out) = run($fleet, 'pipeline', @flags, '--stages');
    my @rows = map { [split /,/] } grep { /^\d/ } split /\n/, $out;
    is(scalar @rows, $p, "$name: --stages has a row per stage");
    for my $row (@rows) {
        my ($r, $warmup, $peak, $predicted) = @$row;
        close_to($predicted, $peak, 1e-12,
                 "$name: stage $r: micro_batches_in_flight agrees with the "
                 . "simulation");
    }
}

# ------------------------------------------------------------ bad input --
my @bad = (
    [ '--pp', qw(--pp 0) ], [ '--pp', qw(--pp 2.5) ], [ '--pp', qw(--pp abc) ],
    [ '--micro-batches', qw(--micro-batches 0) ],
    [ '--micro-batches', qw(--micro-batches -3) ],
    [ '--schedule', qw(--schedule zigzag) ],
    [ '--chunks', qw(--chunks 2) ],
    [ '--chunks', qw(--schedule interleaved) ],
    [ '--chunks', qw(--schedule interleaved --chunks 1) ],
    [ '--backward-ratio', qw(--backward-ratio 0) ],
    [ '--p2p-seconds', qw(--p2p-seconds -1) ],
    [ '--trace', qw(--trace --json) ],
    [ '--stages', qw(--trace --stages) ],
);
for my $case (@bad) {
    my ($flag, @args) = @$case;
    refused_no_output("pipeline @args", $flag, $fleet, 'pipeline', @args);
}

done_testing();
