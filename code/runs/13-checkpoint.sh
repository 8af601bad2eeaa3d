# Tangled from chapters/99h-reliability-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/13-checkpoint.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
field() {        # field() FILE KEY: the field KEY of a CSV file's one row
    awk -F, -v key="$2" 'NR == 1 { for (i = 1; i <= NF; i++)
                                       if ($i == key) k = i }
                         NR == 2 && k { print $k }' "$1"
}
restart=$($fleet memory --precisions --csv |
          awk -F, '$1 == "mixed" { print $5 + $7 }')
test -n "$restart" || {
    echo "13-checkpoint.sh: no mixed row in the table" >&2; exit 1; }
$fleet compute --params 405e9 --tokens 15.6e12 --gpus 16384 --layers 126 \
    --hidden 16384 --seq 8192 --csv --output "$data/13-compute.csv"
days=$(field "$data/13-compute.csv" days)
model="--params 405e9 --bytes-per-param $restart --restart-minutes 10
       --train-days $days"
run="$model --write-gbs 2000"
$fleet checkpoint $run --output "$transcripts/13-checkpoint.txt"
$fleet checkpoint $run --csv --output "$data/13-checkpoint.csv"
$fleet checkpoint $run --latex Ckpt \
    --output "$numbers/13-checkpoint-fleet.tex"
$fleet checkpoint $model --write-gbs 200 --latex CkptSlow \
    --output "$numbers/13-checkpoint-slow.tex"
$fleet checkpoint $model --write-gbs 200 --csv \
    --output "$data/13-checkpoint-slow.csv"
$fleet checkpoint $run --gpus 1024 --latex CkptSmall \
    --output "$numbers/13-checkpoint-small.tex"
runs=400
best=$(field "$data/13-checkpoint.csv" optimum_interval_s)
echo "interval_s,simulated,standard_error,closed" > "$data/13-interval.csv"
for k in -6 -5 -4 -3 -2 -1 0 1 2 3 4 5 6; do
    minutes=$(awk -v b="$best" -v k=$k 'BEGIN {
        printf "%.9g", b * 2 ^ (k / 2) / 60 }')
    $fleet checkpoint $run --interval-minutes "$minutes" --simulate $runs \
        --seed $((k + 7)) --csv --output "$data/13-interval-one.csv"
    echo "$(field "$data/13-interval-one.csv" interval_s)"\
",$(field "$data/13-interval-one.csv" simulated_effective_fraction)"\
",$(field "$data/13-interval-one.csv" simulated_standard_error)"\
",$(field "$data/13-interval-one.csv" effective_fraction)" \
        >> "$data/13-interval.csv"
done
rm -f "$data/13-interval-one.csv"
echo "interval_s,effective_fraction" > "$data/13-interval-closed.csv"
for k in $(seq 0 100); do
    minutes=$(awk -v b="$best" -v k=$k 'BEGIN {
        printf "%.9g", b * 10 ^ (2 * k / 100 - 1) / 60 }')
    $fleet checkpoint $run --interval-minutes "$minutes" --csv |
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
                 NR == 2 { print $c["interval_s"] "," \
                                 $c["effective_fraction"] }'
done >> "$data/13-interval-closed.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
         NR == 2 { print "young_s,daly_s,optimum_s,optimum_fraction"
                   print $c["young_interval_s"] "," $c["daly_interval_s"] \
                         "," $c["optimum_interval_s"] "," \
                         $c["optimum_effective_fraction"] }' \
    "$data/13-checkpoint.csv" > "$data/13-interval-marks.csv"
mtbfs="10000 30000 100000"
{
    printf "gpus"; for h in $mtbfs; do printf ",mtbi_h_%s" $h; done; echo
    for gpus in 8 32 128 512 2048 8192 32768 131072; do
        printf "%s" $gpus
        for h in $mtbfs; do
            $fleet checkpoint --gpus $gpus --mtbf-hours $h --csv |
                awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
                         NR == 2 { printf ",%.9g", $c["fleet_mtbi_s"] / 3600 }'
        done
        echo
    done
} > "$data/13-fleet.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
         NR == 2 { print "gpus,mtbi_h"
                   print $c["gpus"] "," $c["fleet_mtbi_s"] / 3600 }' \
    "$data/13-checkpoint.csv" > "$data/13-fleet-observed.csv"
awk -F, -v runs=$runs -v mtbfs="$mtbfs" \
    -v interval="$data/13-interval.csv" -v compute="$data/13-compute.csv" \
    -v slow="$data/13-checkpoint-slow.csv" \
    "$formats"'
function macro(name, text) {
    printf "\\newcommand{\\Ckpt%s}{%s}\n", name, text
}
function sig(x, n,   w) {                 # n significant digits, grouped
    w = sprintf("%." n "g", x)
    return w ~ /e/ ? grouped(w + 0) : w
}
function percent(x, n) { return sig(100 * x, n) "\\,\\%" }
function fail(why) {
    printf "13-checkpoint.sh: %s\n", why > "/dev/stderr"; bad = 1; exit 1
}
function row(file, out,   line, n, k, head, v, i) {   # a CSV with a header
    n = 0
    while ((getline line < file) > 0) {
        if (++n == 1) { k = split(line, head, ","); continue }
        split(line, v, ",")
        for (i = 1; i <= k; i++) out[n - 1, head[i]] = v[i]
    }
    close(file)
    return n - 1
}
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
NR == 2 {
    M = $c["fleet_mtbi_s"]; f = $c["effective_fraction"]
    R = $c["restart_s"]; d = $c["write_s"]
    wl = $c["write_loss_fraction"]; rl = $c["rework_loss_fraction"]
}
END {
    if (bad) exit 1
    if (!(M > 0 && f > 0 && f < 1)) fail("no run in the report")
    macro("GpuMtbfHours", grouped(M * $c["gpus"] / 3600))
    macro("GpuMtbfYears", sig(M * $c["gpus"] / (365.25 * 86400), 2))
    macro("StopsPerDay", sig(86400 / M, 2))
    n = split(mtbfs, h, " "); list = ""
    for (i = 1; i <= n; i++)
        list = list (i == 1 ? "" : i == n ? " and " : ", ") grouped(h[i])
    macro("FleetMtbfList", list)
    macro("WriteOverMtbi", percent(d / M, 2))
    macro("LossPerRestartMinute", percent(60 / M, 3))
    macro("CheckpointLossFraction", percent(wl + rl, 3))
    rs = $c["restart_loss_fraction"]
    macro("VerdictLargestLoss", rs > wl + rl \
        ? "The restarts cost more than the checkpoints do" \
        : "The checkpoints, writes and rework together, cost more than " \
          "the restarts do")
    if (row(slow, sr) != 1) fail("no run at a tenth of the rate")
    macro("SlowLossRatio", sig((sr[1, "write_loss_fraction"] \
          + sr[1, "rework_loss_fraction"]) / (wl + rl), 3))
    if (row(compute, cr) != 1) fail("no training time")
    macro("TrainSource", sprintf("(Chapter~\\ref{ch:compute}%ss " \
          "405-billion-parameter model, %s trillion tokens on %s GPUs at " \
          "%s MFU)", "\x27", sig(cr[1, "tokens"] / 1e12, 3), \
          grouped(cr[1, "gpus"]), percent(cr[1, "mfu"], 2)))
    r90 = R + M * log(f / 0.9)
    macro("VerdictPublished", f >= 0.9 \
        ? sprintf("at the restart of %s assumed here the closed form " \
                  "agrees, and it would go on agreeing up to a restart of " \
                  "%s.", duration(R), duration(r90)) \
        : r90 > 0 \
        ? sprintf("the closed form falls short of it, so the run%ss " \
                  "restarts must have taken less than the %s assumed " \
                  "here: under %s would keep 90\\,\\%%.", "\x27", \
                  duration(R), duration(r90)) \
        : "the closed form falls short of it even with restarts that " \
          "take no time, so its interruptions or its writes must have " \
          "cost less than this model assumes.")
    k = row(interval, iv)
    if (k != 13) fail("not thirteen simulated intervals")
    far = 0; within2 = 0; beyond3 = 0
    for (i = 1; i <= k; i++) {
        z = (iv[i, "simulated"] - iv[i, "closed"]) / iv[i, "standard_error"]
        a = z < 0 ? -z : z
        if (a <= 2) within2++
        if (a > 3) beyond3++
        if (a > far) { far = a; far_at = iv[i, "interval_s"] }
        se += iv[i, "standard_error"] / k
    }
    if (far > 6) fail(sprintf("the simulation lies %.1f standard errors " \
                              "from the closed form: one of them is wrong", \
                              far))
    macro("SimRuns", grouped(runs)); macro("SimIntervals", k)
    macro("SimShortestIntervalTime", duration(iv[1, "interval_s"]))
    macro("SimLongestIntervalTime", duration(iv[k, "interval_s"]))
    macro("VerdictSimulated", beyond3 == 0 \
        ? sprintf("At every interval the simulation lies within %s " \
                  "standard errors of the closed form, and at %d of the " \
                  "%d within two, as noise alone would place them: they " \
                  "agree to within the simulation%ss own noise, about " \
                  "%s of the time.", sig(far, 2), within2, k, "\x27", \
                  percent(se, 1)) \
        : sprintf("At %d of the %d intervals the simulation lies more " \
                  "than three standard errors from the closed form, the " \
                  "farthest %s standard errors away, at an interval of " \
                  "%s: there the simulated run and the closed form%ss " \
                  "model part, most likely by " \
                  "the simulation%ss shorter last interval, which the " \
                  "closed form counts as a fraction of a whole one.", \
                  beyond3, k, sig(far, 2), duration(far_at), "\x27", \
                  "\x27"))
    top = iv[7, "closed"]
    low = iv[5, "closed"] < iv[9, "closed"] ? iv[5, "closed"] \
                                            : iv[9, "closed"]
    macro("HalfTwiceLoss", percent(top - low, 2))
}' "$data/13-checkpoint.csv" > "$numbers/13-checkpoint.tex"
