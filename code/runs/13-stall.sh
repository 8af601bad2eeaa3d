# Tangled from chapters/95-parallel-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/13-stall.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
numbers="$1/numbers" data="$1/data" work="$1/stall"
formats=$(cat code/common/formats.awk)
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
cores=$(field cores "$machine" 2>/dev/null || true)
if [ "${cores:=$(nproc)}" -lt 2 ]; then
    echo "13-stall.sh: two ranks need two cores; this machine has one" >&2
    exit 1
fi
model="--layers 2 --hidden 256 --heads 4 --seq 32 --vocab 64 --batch 8"
steps=40 every=8 repeats="1 2 3"
mkdir -p "$numbers" "$data"
rm -rf "$work" && mkdir -p "$work"
for k in $repeats; do
    for kind in sync async; do
        flag=; [ $kind = sync ] || flag=--async-save
        rm -rf "$work/$kind"
        mpiexec -bind-to core -n 2 "$bin/minigpt" $model --dp 2 --zero 3 \
            --steps $steps --save-every $every --eval-every 1000 --quiet \
            --machine "$machine" --json --save "$work/$kind" $flag \
            > "$data/13-stall-$kind-$k.json"
    done
done
bytes=$(awk '$1 == "shard" { n += $4 } END { print n }' "$work/sync/manifest")
for k in $repeats; do
    for kind in sync async; do
        f="$data/13-stall-$kind-$k.json"
        echo "$kind $(field checkpoint_stall_s "$f") \
$(field step_seconds_median "$f")"
    done
done > "$work/runs.txt"
awk -v csv="$data/13-stall.csv" "$formats"'
    { n[$1]++; stall[$1, n[$1]] = $2 }
    function median(kind) { return median_of(stall, kind, n[kind]) }
    function low(kind,   i, x) {
        x = stall[kind, 1]
        for (i = 2; i <= n[kind]; i++) if (stall[kind, i] < x) x = stall[kind, i]
        return x
    }
    function high(kind,   i, x) {
        x = stall[kind, 1]
        for (i = 2; i <= n[kind]; i++) if (stall[kind, i] > x) x = stall[kind, i]
        return x
    }
    END {
        print "at,kind,stall_ms,lo_ms,hi_ms" > csv
        printf "1,synchronous,%.6g,%.6g,%.6g\n", 1e3 * median("sync"),
               1e3 * low("sync"), 1e3 * high("sync") > csv
        printf "2,asynchronous,%.6g,%.6g,%.6g\n", 1e3 * median("async"),
               1e3 * low("async"), 1e3 * high("async") > csv
        printf "%.6g %.6g %.6g %.6g %.6g %.6g\n", median("sync"), low("sync"),
               high("sync"), median("async"), low("async"), high("async")
    }' "$work/runs.txt" > "$work/medians.txt"
read sync sync_lo sync_hi async async_lo async_hi < "$work/medians.txt"
# The fleet of Section sec:interruptions as 13-checkpoint.sh sets it out:
# its synchronous write is its delta, and its asynchronous save is assumed
# to scale that stall by the ratio measured here.
state=$("$bin/fleet" memory --precisions --csv |
        awk -F, '$1 == "mixed" { print $5 + $7 }')
fleet_run="--params 405e9 --bytes-per-param $state --restart-minutes 10"
"$bin/fleet" checkpoint $fleet_run --write-gbs 2000 --json \
    > "$data/13-stall-fleet-write.json"
write=$(field write_s "$data/13-stall-fleet-write.json")
for kind in sync async; do
    eval "stall=\$$kind"
    delta=$(awk -v w="$write" -v s="$stall" -v y="$sync" \
                'BEGIN { printf "%.9g", w * s / y }')
    "$bin/fleet" checkpoint $fleet_run --write-seconds "$delta" --json \
        > "$data/13-stall-fleet-$kind.json"
    echo "$kind $(field daly_interval_s "$data/13-stall-fleet-$kind.json") \
$(field effective_fraction "$data/13-stall-fleet-$kind.json")"
done > "$work/fleet.txt"
fleet="$data/13-stall-fleet-sync.json"
awk -v sync="$sync" -v sync_lo="$sync_lo" -v sync_hi="$sync_hi" \
    -v async="$async" -v async_lo="$async_lo" -v async_hi="$async_hi" \
    -v bytes="$bytes" -v steps=$steps -v every=$every \
    -v runs="$(echo $repeats | wc -w)" \
    -v step="$(field step_seconds_median "$data/13-stall-sync-1.json")" \
    -v gpus="$(field gpus "$fleet")" -v mtbi="$(field fleet_mtbi_s "$fleet")" \
    -v restart="$(field restart_s "$fleet")" -v write="$write" "$formats"'
    { daly[$1] = $2; fraction[$1] = $3 }
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    function ms(x) { return sprintf("%.3g", 1e3 * x) }
    function percent(x) { return sprintf("%.2f", 100 * x) }
    END {
        macro("StallSteps", steps); macro("StallEvery", every)
        macro("StallRuns", runs)
        macro("StallCheckpointMB", sprintf("%.3g", bytes / 1e6))
        macro("StallShardMB", sprintf("%.3g", bytes / 2e6))
        macro("StallStepMs", ms(step))
        macro("StallSyncMs", ms(sync)); macro("StallAsyncMs", ms(async))
        macro("StallSyncRange", ms(sync_lo) "--" ms(sync_hi))
        macro("StallAsyncRange", ms(async_lo) "--" ms(async_hi))
        macro("StallFleetGpus", grouped(gpus))
        macro("StallFleetMtbi", duration(mtbi))
        macro("StallFleetRestart", duration(restart))
        macro("StallFleetWrite", duration(write))
        macro("StallFleetAsyncWrite", duration(write * async / sync))
        macro("StallRatio", sprintf("%.2f", async / sync))
        macro("StallSyncDaly", duration(daly["sync"]))
        macro("StallAsyncDaly", duration(daly["async"]))
        macro("StallSyncFraction", percent(fraction["sync"]))
        macro("StallAsyncFraction", percent(fraction["async"]))
        noise = sync_hi - sync_lo
        if (async_hi - async_lo > noise) noise = async_hi - async_lo
        if (sync - async > noise)
            macro("StallVerdict", sprintf("Writing on the thread cut the stall " \
                  "per save from %s~ms to %s~ms: the training thread no longer " \
                  "waits for %.0f\\,\\%% of it, a difference larger than the " \
                  "%s~ms by which the repeated runs of one kind differ.",
                  ms(sync), ms(async), 100 * (sync - async) / sync, ms(noise)))
        else if (async - sync > noise)
            macro("StallVerdict", sprintf("Here the asynchronous save stalled " \
                  "training longer than the synchronous one, %s~ms against " \
                  "%s~ms: on this machine the copy and the writer%ss thread " \
                  "cost the training thread more than the write they moved off " \
                  "it.", ms(async), ms(sync), "\x27"))
        else
            macro("StallVerdict", sprintf("The two stalls, %s~ms synchronous " \
                  "and %s~ms asynchronous, are no further apart than the %s~ms " \
                  "by which the repeated runs of one kind differ: on this " \
                  "machine the write is too fast for the thread to hide a part " \
                  "of it that these runs can measure.", ms(sync), ms(async),
                  ms(noise)))
        gain = fraction["async"] - fraction["sync"]
        macro("StallFleetVerdict", sprintf("With its synchronous write as " \
              "$\\delta$, Daly%ss interval is %s and the fleet keeps " \
              "%s\\,\\%% of its time for training; with the stall %s " \
              "in the measured ratio, " \
              "%s and %s\\,\\%%%s.", "\x27", duration(daly["sync"]),
              percent(fraction["sync"]),
              async <= sync ? "shortened" : "lengthened", duration(daly["async"]),
              percent(fraction["async"]),
              gain >= 0.00005 ? sprintf(", %s points more", percent(gain)) \
              : gain <= -0.00005 ? sprintf(", %s points less", percent(-gain)) \
              : ", the same to the hundredth of a point"))
    }' "$work/fleet.txt" > "$numbers/13-stall.tex"
