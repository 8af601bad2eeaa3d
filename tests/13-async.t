#!/usr/bin/perl
# Asynchronous checkpoints (minigpt --async-save): the checkpoint written on
# the writer's thread is, file for file and byte for byte, the one a
# synchronous save of the same run writes; every run that saves reports how
# many saves it made and what they cost the training thread; a write that
# fails on the thread is said at the next save, in one line, and ends the
# run; the flags that cannot work together are refused in one line, exit 2,
# on every rank.
#
# Structure, never speed: the stalls are checked to be reported and
# nonnegative, never compared with a threshold or with each other.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;

my $root = root();
my $minigpt = "$root/build/bin/minigpt";
# Each run takes one core's peak from the build's machine file rather than
# measure it for a tenth of a second on every rank.
my @model = (qw(--layers 2 --hidden 64 --heads 4 --seq 16 --vocab 24
                --batch 8 --eval-every 1000 --quiet),
             '--machine', "$root/build/machine.json");
my $dir = tempdir(CLEANUP => 1);

# ------------------------------------------- the same checkpoint ----
# Thirteen steps, a save every four: two saves between steps and the end's.
# Each layout's asynchronous run must leave the synchronous run's files.
my %report;
for my $case (['zero3', 2, '--dp', 2, '--zero', 3], ['one', 1]) {
    my ($layout, $ranks, @flags) = @$case;
    for my $how (['sync'], ['async', '--async-save']) {
        my ($name, @extra) = @$how;
        my ($status, $out, $err) = run(mpiexec($ranks, $minigpt, @model,
            @flags, qw(--steps 12 --save-every 4 --json --save),
            "$dir/$layout-$name", @extra));
        is($status, 0, "$layout, $name: trains and saves") or diag $err;
        $report{"$layout-$name"} = eval { decode_json($out) } // {};
    }
    same_checkpoints("$dir/$layout-sync", "$dir/$layout-async",
                     "$layout: --async-save writes the synchronous save's "
                     . 'checkpoint, byte for byte');
}

# ---------------------------------------------------- the report ----
for my $name (sort keys %report) {
    my $r = $report{$name};
    is($r->{checkpoint_saves}, 3, "$name: three saves (steps 4, 8, 12)");
    is($r->{async_save}, $name =~ /-async$/ ? 1 : 0,
       "$name: async_save says how the saves were written");
    for my $field (qw(checkpoint_stall_s checkpoint_final_s)) {
        my $v = $r->{$field};
        ok(defined $v && $v >= 0, "$name: $field reported, nonnegative")
            or diag($v // 'undef');
    }
}
my ($status, $out, $err) = run(mpiexec(2, $minigpt, @model, qw(--dp 2
    --steps 4 --json)));
my $unsaved = $status == 0 ? decode_json($out) : {};
is($unsaved->{checkpoint_saves}, 0, 'a run without --save made no saves');
is($unsaved->{checkpoint_stall_s}, 0, '... and lost no time to them');

# A run that saves only at its end reports that save as its stall, and
# the readable report says so too.
($status, $out, $err) = run(mpiexec(2, $minigpt, @model, qw(--dp 2
    --steps 4 --async-save --json --save), "$dir/end-only", '--transcript',
    "$dir/end-only.txt"));
my $end = $status == 0 ? decode_json($out) : {};
is($end->{checkpoint_saves}, 1, 'no --save-every: one save, at the end');
is($end->{checkpoint_stall_s}, $end->{checkpoint_final_s},
   '... whose stall is the stall per save');
ok(-f "$dir/end-only/manifest", '... and it is a complete checkpoint');
like(slurp("$dir/end-only.txt") // '',
     qr/^checkpoints += 1 save, written on a thread; training stalled /m,
     'the readable report says how the saves were written and what they '
     . 'cost');

# ------------------------------------- a write that fails on the thread ----
# --fail-shard-write makes rank 1's write fail. Synchronously the first
# save says so; asynchronously the failure is found when the next save
# waits for the write, and said there: one line, exit 2, nothing of the
# failed save left, and no checkpoint published.
for my $how (['sync'], ['async', '--async-save']) {
    my ($name, @extra) = @$how;
    my $err = refused("$name: rank 1's write fails", qr/rank 1 did not write/,
        mpiexec(2, $minigpt, @model, qw(--dp 2 --steps 12 --save-every 4
        --fail-shard-write 1 --save), "$dir/failed-$name", @extra));
    like($err, qr/the checkpoint of step 4/,
         "$name: the line names the save that failed")
        if $name eq 'async';
    ok(!-e "$dir/failed-$name", "$name: no checkpoint was published");
    is_deeply([grep { /^failed-$name\.tmp/ } files_in($dir)], [],
              "$name: nothing of the failed save is left");
}

# ------------------------------------------------------- refusals ----
my @two = (2, $minigpt, @model, '--dp', 2);
refused('--async-save without --save', '--save',
        mpiexec(@two, qw(--steps 4 --async-save)));
refused('--async-save with --keep-checkpoints', '--keep-checkpoints',
        mpiexec(@two, qw(--steps 4 --async-save --keep-checkpoints 2
        --save-every 2 --save), "$dir/keep"));
refused('--fault-at-step without --fault-rank', '--fault-rank',
        mpiexec(@two, qw(--steps 4 --fault-at-step 2)));
refused('--fault-rank without --fault-at-step', '--fault-at-step',
        mpiexec(@two, qw(--steps 4 --fault-rank 1)));
refused('--fault-at-step after the last step', '--fault-at-step 5',
        mpiexec(@two, qw(--steps 4 --fault-at-step 5 --fault-rank 0)));
refused('--fault-rank that is not a rank', '--fault-rank 2',
        mpiexec(@two, qw(--steps 4 --fault-at-step 2 --fault-rank 2)));
refused('--fault-rank that is not a number', '--fault-rank',
        mpiexec(@two, qw(--steps 4 --fault-at-step 2 --fault-rank one)));
ok(!-e "$dir/keep", 'a refused run writes no checkpoint');

# ------------------------------------------ the book's stall, if made ----
# Where make has run code/runs/13-stall.sh: the macros are the figure's
# medians, the planner's answers are what fleet checkpoint says for those
# stalls, and the sentence that reads them is the one the numbers choose.
SKIP: {
    my $tex = "$root/build/numbers/13-stall.tex";
    my $csv = "$root/build/data/13-stall.csv";
    skip 'make has not run code/runs/13-stall.sh', 6
        unless -f $tex && -f $csv;
    my %m = %{ read_macros($tex) };
    my %row;
    for my $line (split /\n/, slurp($csv)) {
        my ($at, $kind, $ms, $lo, $hi) = split /,/, $line;
        $row{$kind} = [$ms, $lo, $hi] if $at =~ /^\d+$/;
    }
    is($m{StallSyncMs}, sprintf('%.3g', $row{synchronous}[0]),
       'the synchronous stall in the text is the figure\'s median');
    is($m{StallAsyncMs}, sprintf('%.3g', $row{asynchronous}[0]),
       'the asynchronous one too');
    my $noise = 0;
    for my $r (values %row) {
        $noise = $r->[2] - $r->[1] if $r->[2] - $r->[1] > $noise;
    }
    my $diff = $row{synchronous}[0] - $row{asynchronous}[0];
    like($m{StallVerdict},
         $diff > $noise ? qr/^Writing on the thread cut the stall/
         : -$diff > $noise ? qr/^Here the asynchronous save stalled/
         : qr/^The two stalls/,
         'the verdict is the one the medians and their spread choose');
    # The fleet of Section 13.2 writes 12 bytes a parameter of 405B at
    # 2 TB/s; its asynchronous save is that write shortened in the ratio
    # measured here (the CSV's medians are rounded to 4 digits).
    my @fleet = qw(--params 405e9 --bytes-per-param 12 --restart-minutes 10);
    my $write = fleet_json('checkpoint', @fleet, '--write-gbs', 2000)
                ->{write_s};
    close_to($write, 405e9 * 12 / 2e12, 1e-9,
             'the fleet writes its 4.86 TB in 2.43 s');
    for my $kind (qw(sync async)) {
        my $stall = $row{$kind eq 'sync' ? 'synchronous' : 'asynchronous'}[0];
        my $delta = $write * $stall / $row{synchronous}[0];
        my $fleet = fleet_json('checkpoint', @fleet, '--write-seconds', $delta);
        my $said = $m{$kind eq 'sync' ? 'StallSyncFraction'
                                      : 'StallAsyncFraction'};
        close_to($said, 100 * $fleet->{effective_fraction}, 1e-3,
                 "$kind: the fleet's effective fraction is the planner's "
                 . 'for that stall');
    }
    like($m{StallFleetVerdict}, qr/Daly's interval is \Q$m{StallSyncDaly}\E/,
         'the fleet sentence names the synchronous stall\'s interval');
}

done_testing();
