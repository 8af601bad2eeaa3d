#!/usr/bin/perl
# The fault drill (code/runs/13-fault-drill.sh), run here into a scratch
# build directory with another seed than the book's: a data-parallel job of
# two ranks under ZeRO-3 with sharded checkpoints loses a rank to SIGKILL,
# once at a random step with synchronous saves and once while an
# asynchronous save is being written; each time the job relaunched with
# --resume from what is left ends bit-identical to an uninterrupted run.
# The test checks the checkpoints itself rather than trust the script's
# verdict, and checks that a kill during an asynchronous write leaves the
# checkpoint before it complete, loadable, and nothing of the torn one
# published.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
my $build = tempdir(CLEANUP => 1);
symlink("$root/build/bin", "$build/bin") or die "symlink: $!";
symlink("$root/build/machine.json", "$build/machine.json")
    or die "symlink: $!";
local $ENV{DRILL_SEED} = 7;
my ($status, $out, $err) = run('timeout', '-k', '10', '200', 'sh',
                               "$root/code/runs/13-fault-drill.sh", $build);
is($status, 0, 'the drill runs to its end (every check in it passed)')
    or diag $err;
is($err, '', 'and says nothing on standard error');

my %n = %{ read_macros("$build/numbers/13-fault-drill.tex") // {} };
my ($steps, $every) = ($n{DrillSteps}, $n{DrillEvery});
ok($n{DrillKillStep} >= $every && $n{DrillKillStep} < $steps,
   'the synchronous drill kills at a step after the first checkpoint');
like($n{DrillKillRank}, qr/^[01]$/, '... on one of the two ranks');
is($n{DrillWriteStep} % $every, 0, 'the asynchronous drill kills at a save');
ok($n{DrillWriteStep} >= 2 * $every && $n{DrillWriteStep} < $steps,
   '... with a checkpoint before it, and before the end');

my $drill = "$build/drill";
sub manifest_step {
    my ($text) = (slurp("$_[0]/manifest") // '') =~ /^step (\d+)$/m;
    return $text;
}
for my $job (qw(sync async)) {
    same_checkpoints("$drill/reference", "$drill/$job",
                     "$job: the relaunched job's final checkpoint is the "
                     . "uninterrupted run's, byte for byte");
    is(manifest_step("$drill/$job"), $steps, "$job: ... at step $steps");
    like(slurp("$drill/$job-killed.err") // '',
         qr/^minigpt: rank [01] kills itself after step \d+ /m,
         "$job: the killed rank said what it did");
}

# What the kill left, as the transcript recorded it before the relaunch:
# the synchronous drill resumed from the last save at or before the kill;
# the asynchronous one from the save before the one being written, since
# the killed rank never joined that save's agreement.
my $transcript = slurp("$build/transcripts/13-fault-drill.txt") // '';
my @left = $transcript =~ /^\$ ls -d \w+\*; grep step \w+\/manifest\n.*\n  step (\d+)$/mg;
is_deeply(\@left, [int($n{DrillKillStep} / $every) * $every,
                   $n{DrillWriteStep} - $every],
          'the checkpoints the kills left: the last one whose save had ended');
like($transcript, qr/^  async async\.tmp-PID$/m,
     'the torn asynchronous save stayed under its temporary name');
my @ran = $transcript =~ /^  ran steps (\d+) to (\d+)$/mg;
is_deeply(\@ran, [1, $steps, $left[0] + 1, $steps, $left[1] + 1, $steps],
          'each relaunch ran from the step after its checkpoint to the end');

# The kill during the asynchronous write, once more by hand: the previous
# checkpoint is complete and loads, on the same layout and on one process.
my $minigpt = "$root/build/bin/minigpt";
my @model = qw(--layers 2 --hidden 64 --heads 4 --seq 16 --vocab 24
               --batch 8 --eval-every 1000 --quiet --steps 12);
my $dir = tempdir(CLEANUP => 1);
($status) = run(mpiexec(2, $minigpt, @model, qw(--dp 2 --zero 3
    --save-every 4 --async-save --fault-at-step 8 --fault-rank 0 --save),
    "$dir/torn"));
isnt($status, 0, 'killed during the write of step 8: the job failed');
is(manifest_step("$dir/torn"), 4, 'the checkpoint of step 4 is the one left');
($status, $out, $err) = run($minigpt, @model, '--resume', "$dir/torn",
                            '--json');
is($status, 0, 'it loads on one process and trains on') or diag $err;
like($out, qr/"steps": 8\b/, '... the 8 steps after step 4');

done_testing();
