# Tangled from chapters/95-parallel-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/13-fault-drill.sh BUILD_DIR
set -eu
mkdir -p "$1/transcripts" "$1/numbers"
build=$(cd "$1" && pwd)
bin="$build/bin" transcripts="$build/transcripts" numbers="$build/numbers"
work="$build/drill"
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
model="--layers 2 --hidden 64 --heads 4 --seq 16 --vocab 24 --batch 8"
steps=24 every=4 seed=${DRILL_SEED:-14}
run="--dp 2 --zero 3 --steps $steps --save-every $every --eval-every 1000"
draw() {         # draw K N: the K-th number of the seeded sequence, 0..N-1
    awk -v seed="$seed" -v k="$1" -v n="$2" 'BEGIN {
        x = seed % 2147483648
        for (i = 0; i <= k; i++) x = (1103515245 * x + 12345) % 2147483648
        print int(x / 2147483648 * n) }'
}
kill_step=$((every + $(draw 1 $((steps - every)))))
kill_rank=$(draw 2 2)
write_step=$((every * (2 + $(draw 3 $((steps / every - 2))))))
[ "$write_step" -lt "$steps" ] || write_step=$((steps - every))
write_rank=$(draw 4 2)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
transcript="$transcripts/13-fault-drill.txt"
: > "$transcript"
say() { echo "$*" >> "$transcript"; }
train() {       # train NAME FLAGS...: one launch of the job, its status
    name=$1; shift
    say "\$ mpiexec -n 2 minigpt \$model \$run \\"
    say "      $*"
    status=0
    mpiexec -n 2 "$bin/minigpt" $model $run --quiet --json \
            --machine "$build/machine.json" "$@" \
        > "$name.json" 2> "$name.err" || status=$?
    grep '^minigpt' "$name.err" | sed 's/^/  /' >> "$transcript" || true
    if [ $status -ne 0 ]; then
        say "  (the job ended with status $status)"
    else
        say "  ran steps $(($(field step "$name.json") \
                          - $(field steps "$name.json") + 1)) to \
$(field step "$name.json")"
    fi
}
fail() { echo "13-fault-drill.sh: $*" >&2; exit 1; }
checkpoint_step() { awk '$1 == "step" { print $2 }' "$1/manifest"; }
same() {               # same A B: every file of two checkpoints, bytes
    diff -r -q "$1" "$2" > /dev/null
}
say "model=\"$model\""
say "run=\"$run\""
say ""
say "# An uninterrupted run, the reference"
train reference --save reference
[ $status -eq 0 ] || fail "the reference run failed"
drill() {    # drill NAME STEP RANK EXPECTED FLAGS...: kill, resume, compare
    job=$1 step=$2 rank=$3 expected=$4; shift 4
    train "$job-killed" --save "$job" --fault-at-step "$step" \
          --fault-rank "$rank" "$@"
    [ $status -ne 0 ] || fail "$job: the killed job ended with status 0"
    say "\$ ls -d $job*; grep step $job/manifest"
    say "  $(ls -d "$job" "$job".tmp-* 2>/dev/null \
             | sed 's/tmp-[0-9]*$/tmp-PID/' | tr '\n' ' ' | sed 's/ $//')"
    left=$(checkpoint_step "$job")
    say "  step $left"
    [ "$left" = "$expected" ] || fail "$job: the checkpoint left holds \
step $left, not $expected"
    train "$job-resumed" --save "$job" --resume "$job" "$@"
    [ $status -eq 0 ] || fail "$job: the relaunched job failed"
    say "\$ diff -r reference $job"
    same reference "$job" || fail "$job: the final checkpoint differs \
from the reference's"
    say "  (no difference: the manifest and every shard are identical)"
}
say ""
say "# Drill 1: synchronous saves; rank $kill_rank dies after step $kill_step"
drill sync "$kill_step" "$kill_rank" $((kill_step / every * every))
say ""
say "# Drill 2: --async-save; rank $write_rank dies while the save of step \
$write_step is written"
drill async "$write_step" "$write_rank" $((write_step - every)) --async-save
{
    printf '\\newcommand{\\%s}{%s}\n' DrillSteps $steps DrillEvery $every \
        DrillKillStep $kill_step DrillKillRank $kill_rank \
        DrillKillResumed $((kill_step / every * every)) \
        DrillWriteStep $write_step DrillWriteRank $write_rank \
        DrillWriteResumed $((write_step - every))
} > "$numbers/13-fault-drill.tex"
