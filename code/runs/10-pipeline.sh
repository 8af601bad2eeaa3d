# Tangled from chapters/95-parallel-plumbing.nw and chapters/98c-pipeline-runs.nw; edit the chapters, not this file.
# usage: sh code/runs/10-pipeline.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
list() {         # the numbers of the list after "KEY":, one to a line
    sed -n "s/^ *\"$1\": *\[\(.*\)\],*\$/\1/p" "$2" | tr -d ' ' | tr , '\n'
}
summarise_trace='
function median(a, n,    i, j, x) {     # sorts a[1..n] in place
    for (i = 2; i <= n; i++) {
        x = a[i]
        for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
    }
    return n ? a[int((n + 1) / 2)] : 0
}
NR == 1 { next }
!($1 in seen) { seen[$1] = 1; order[++steps] = $1 }
{ end[$1] = $7 > end[$1] ? $7 : end[$1]
  row[$1, ++rows[$1]] = $3 " " $7 - $6 }
END {
    for (i = warmup + 1; i <= steps; i++) {
        s = order[i]; length_of[++n] = end[s]
        for (j = 1; j <= rows[s]; j++) {
            split(row[s, j], r, " ")
            d[r[1], ++count[r[1]]] = r[2]
        }
    }
    for (i = 1; i <= n; i++) sorted[i] = length_of[i]
    middle = median(sorted, n)
    for (i = warmup + 1; i <= steps; i++)
        if (end[order[i]] == middle) { pick = order[i]; break }
    split("F B W", kinds, " ")
    printf "%s", pick
    for (k = 1; k <= 3; k++) {
        split("", a)
        for (j = 1; j <= count[kinds[k]]; j++) a[j] = d[kinds[k], j]
        printf " %.9g", median(a, count[kinds[k]])
    }
    printf "\n"
}'
cores=$(field cores "$machine" 2>/dev/null || true)
test -n "$cores" || cores=$(nproc)
if [ "$cores" -lt 2 ]; then
    echo "10-pipeline.sh: the chapter times two stages, one per core;" \
         "this machine has $cores core" >&2
    exit 1
fi
timed=2
if [ "$cores" -ge 4 ]; then timed=4; fi
drawn=4 drawn_m=8 chunks=2
layers=8 hidden=64 heads=4 seq=64
model="--layers $layers --hidden $hidden --heads $heads --seq $seq"
sequences=2 steps=10
pipeline() {     # pipeline NAME P M SCHEDULE: its JSON and trace CSV
    chunk_flag=""
    if [ "$4" = interleaved ]; then chunk_flag="--chunks $chunks"; fi
    pin=""
    if [ "$2" -le "$cores" ]; then pin="-bind-to core"; fi
    mpiexec $pin -n "$2" "$bin/minigpt" $model \
            --batch $(($3 * sequences)) --pp "$2" --micro-batches "$3" \
            --schedule "$4" $chunk_flag --steps $steps --eval-every 1000 \
            --quiet --json --machine "$machine" --trace "$data/10-$1.csv" \
            --output "$data/10-$1.json"
}
schedules="gpipe 1f1b interleaved zb-h1"
for schedule in $schedules; do
    for m in 1 2 4 8 16; do
        # interleaved needs a multiple of the stages
        if [ $schedule = interleaved ] && [ $((m % timed)) -ne 0 ]; then
            continue
        fi
        pipeline "bubble-$schedule-$m" $timed $m $schedule
    done
    if [ $timed -ne $drawn ]; then
        pipeline "drawn-$schedule" $drawn $drawn_m $schedule
    else
        cp "$data/10-bubble-$schedule-$drawn_m.json" \
           "$data/10-drawn-$schedule.json"
        cp "$data/10-bubble-$schedule-$drawn_m.csv" \
           "$data/10-drawn-$schedule.csv"
    fi
done
echo "schedule,m,measured,replayed,theory" > "$data/10-bubble.csv"
for schedule in $schedules; do
    for f in "$data"/10-bubble-$schedule-*.json; do
        echo "$schedule,$(field micro_batches "$f"),$(field \
            bubble_measured "$f"),$(field bubble_replayed "$f"),$(field \
            bubble_theory "$f")"
    done | sort -t, -k2,2n
done >> "$data/10-bubble.csv"
zb="$data/10-bubble-zb-h1-16"
set -- $(awk -F, -v warmup="$(field warmup_steps "$zb.json")" \
         "$summarise_trace" "$zb.csv")
awk -v p=$timed -v v=$chunks -v f=$2 -v b=$3 -v w=$4 'BEGIN {
    print "m,gpipe,interleaved,zb"
    for (m = 1; m <= 16.001; m *= 2 ^ (1 / 16)) {
        zb_idle = (p - 1) * (f + b - w)
        printf "%.4f,%.6f,%.6f,%s\n", m, (p - 1) / (m + p - 1),
               (p - 1) / (v * m + p - 1),
               m < p ? "" : sprintf("%.6f",
                                    zb_idle / (m * (f + b + w) + zb_idle))
    }
}' > "$data/10-bubble-formula.csv"
latency=$(field p2p_latency_s "$machine")
bandwidth=$(field p2p_bytes_per_second "$machine")
for schedule in $schedules; do
    name="drawn-$schedule"
    set -- $(awk -F, -v warmup="$(field warmup_steps \
             "$data/10-$name.json")" "$summarise_trace" "$data/10-$name.csv")
    step=$1 forward=$2 backward=$3 weight=$4
    awk -F, -v step=$step 'NR == 1 || $1 == step' "$data/10-$name.csv" \
        > "$data/10-gantt-$schedule.csv"
    v=1 chunk_flag="" weight_flag=""
    if [ $schedule = interleaved ]; then
        v=$chunks chunk_flag="--chunks $chunks"
    fi
    if [ $schedule = zb-h1 ] && "$bin/fleet" pipeline --help |
        grep -q -- --weight-share; then
        weight_flag="--weight-share $(awk -v b=$backward -v w=$weight \
                     'BEGIN { printf "%.6g", w / (b + w) }')"
    fi
    unit=$(awk -v f=$forward -v v=$v 'BEGIN { printf "%.9g", f * v }')
    send=$(awk -v l="$latency" -v bw="$bandwidth" -v u=$unit \
           -v bytes=$((sequences * seq * hidden * 4)) \
           'BEGIN { printf "%.6g", (l + bytes / bw) / u }')
    "$bin/fleet" pipeline --pp $drawn --micro-batches $drawn_m \
        --schedule $schedule $chunk_flag $weight_flag \
        --backward-ratio "$(awk -v f=$forward -v b=$backward -v w=$weight \
                           'BEGIN { printf "%.6g", (b + w) / f }')" \
        --p2p-seconds $send --trace |
    awk -F, -v u=$unit 'NR == 1 {
            print "step,stage,kind,micro_batch,chunk,start_s,end_s"; next }
        { kind = $2 == "forward" ? "F" : $2 == "backward" ? "B" : "W"
          printf "0,%d,%s,%d,%d,%.9g,%.9g\n", $1, kind, $3, $4, $5 * u,
                 $6 * u }' > "$data/10-gantt-$schedule-sim.csv"
done
for schedule in gpipe 1f1b zb-h1; do
    f="$data/10-drawn-$schedule.json"
    list peak_inflight_per_stage "$f" > "$data/10-peak-$schedule.txt"
    list activation_bytes_per_micro_batch "$f" |
    paste -d, "$data/10-peak-$schedule.txt" - > "$data/10-held-$schedule.csv"
done
{
    echo "stage,gpipe,1f1b,zb-h1,peak_gpipe,peak_1f1b,peak_zb-h1"
    paste -d, "$data/10-held-gpipe.csv" "$data/10-held-1f1b.csv" \
              "$data/10-held-zb-h1.csv" |
    awk -F, '{ printf "%d,%.0f,%.0f,%.0f,%d,%d,%d\n", NR - 1, $1 * $2,
               $3 * $4, $5 * $6, $1, $3, $5 }'
} > "$data/10-memory.csv"
busy=$(awk -F, -v warmup="$(field warmup_steps \
       "$data/10-bubble-1f1b-16.json")" -v last=$((timed - 1)) '
    NR == 1 { next }
    !($1 in seen) { seen[$1] = 1; order[++steps] = $1 }
    { busy[$1, $2] += $7 - $6 }
    END {
        for (i = warmup + 1; i <= steps; i++) {
            r = busy[order[i], last] / busy[order[i], 0]
            ratio[++n] = r
            if (n == 1 || r < low) low = r
            if (n == 1 || r > high) high = r
        }
        for (i = 2; i <= n; i++)          # sort, for the median
            for (j = i; j > 1 && ratio[j - 1] > ratio[j]; j--) {
                x = ratio[j]; ratio[j] = ratio[j - 1]; ratio[j - 1] = x
            }
        printf "%.6g %.6g %.6g\n", ratio[int((n + 1) / 2)], low, high
    }' "$data/10-bubble-1f1b-16.csv")
one="$data/10-bubble-1f1b-16"
set -- $(awk -F, -v warmup="$(field warmup_steps "$one.json")" \
         "$summarise_trace" "$one.csv")
forward=$2
send=$(awk -v l="$latency" -v bw="$bandwidth" \
       -v bytes=$((sequences * seq * hidden * 4)) \
       'BEGIN { printf "%.6g", l + bytes / bw }')
echo "schedule,measured,replayed" > "$data/10-drawn.csv"
for schedule in $schedules; do
    f="$data/10-drawn-$schedule.json"
    echo "$schedule,$(field bubble_measured "$f"),$(field \
          bubble_replayed "$f")"
done >> "$data/10-drawn.csv"
awk -F, -v cores=$cores -v timed=$timed -v drawn=$drawn -v m_drawn=$drawn_m \
    -v v=$chunks -v busy="$busy" -v q="'" \
    -v rows="$numbers/10-bubble-rows.tex" -v send="$send" \
    -v forward="$forward" \
    "$formats"'
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function fail(why) {
    printf "10-pipeline.sh: %s: the text would be wrong\n", why \
        > "/dev/stderr"
    bad = 1; exit 1
}
function pct(x) { return sprintf("%.0f\\,\\%%", 100 * x) }
function frac(x) { return sprintf("%.3f", x) }
function kb(x) { return sprintf("%s\\,kB", grouped(x / 1e3)) }
function spelled(m) {
    return m == 1 ? "One" : m == 2 ? "Two" : m == 4 ? "Four" : \
           m == 8 ? "Eight" : "Sixteen"
}
FNR == 1 { file++; next }
file == 1 {
    s = $1; m = $2 + 0
    measured[s, m] = $3; replayed[s, m] = $4; theory[s, m] = $5
    if (!(s in first) || m < first[s]) first[s] = m
    if (m > top) top = m
    runs++
    next
}
file == 2 { drawn_measured[$1] = $2; drawn_replayed[$1] = $3; next }
file == 3 { stage = $1; peak["gpipe", stage] = $5; peak["1f1b", stage] = $6
            peak["zb-h1", stage] = $7; held_gpipe[stage] = $2
            held_1f1b[stage] = $3; stages = stage + 1; next }
END {
    if (bad) exit 1
    split("gpipe 1f1b interleaved zb-h1", order, " ")
    name["gpipe"] = "GPipe"; name["1f1b"] = "1F1B"
    name["interleaved"] = "interleaved"; name["zb-h1"] = "zb-h1"
    camel["gpipe"] = "Gpipe"; camel["1f1b"] = "OneFOneB"
    camel["interleaved"] = "Interleaved"; camel["zb-h1"] = "ZbHOne"
    macro("PipeCores", cores)
    macro("PipeTimedStages", timed)
    macro("PipeDrawnStages", drawn)
    macro("PipeDrawnMicroBatches", m_drawn)
    macro("PipeChunks", v)
    macro("PipeRuns", runs)
    for (k = 1; k <= 4; k++)
        for (m = 1; m <= top; m *= 2) {
            s = order[k]
            if (!((s, m) in measured)) continue
            macro("PipeBubble" camel[s] spelled(m), frac(measured[s, m]))
            macro("PipeReplayed" camel[s] spelled(m), frac(replayed[s, m]))
            macro("PipeTheory" camel[s] spelled(m), frac(theory[s, m]))
        }
    for (m = 1; m <= top; m *= 2) {
        row = m
        for (k = 1; k <= 4; k++)
            row = row (((order[k], m) in measured) \
                       ? sprintf(" & %s & %s", frac(measured[order[k], m]),
                                 frac(theory[order[k], m])) : " & -- & --")
        print row " \\\\" > rows
    }
    rises = ""; falls = ""
    for (k = 1; k <= 4; k++) {
        s = order[k]
        if (measured[s, top] >= measured[s, first[s]])
            fail(sprintf("the measured bubble of %s did not fall from M = %d " \
                         "to M = %d (%s, then %s)", s, first[s], top,
                         measured[s, first[s]], measured[s, top]))
        falls = falls sprintf("%s%s%ss from %s to %s", k == 1 ? "" : \
                              k == 4 ? " and " : ", ", name[s], q,
                              frac(measured[s, first[s]]),
                              frac(measured[s, top]))
        for (m = first[s]; m < top; m *= 2)
            if (measured[s, 2 * m] >= measured[s, m])
                rises = rises sprintf("%s%s%ss rose from %s to %s between " \
                                      "$M = %d$ and %d", rises == "" ? "" : \
                                      "; ", name[s], q, frac(measured[s, m]),
                                      frac(measured[s, 2 * m]), m, 2 * m)
    }
    macro("PipeVerdictFalls", rises == "" \
          ? sprintf("The measured bubble fell at every doubling of $M$ for " \
                    "every schedule: %s.", falls) \
          : sprintf("The measured bubble fell from the fewest micro-batches " \
                    "to %d for every schedule (%s), though not at every " \
                    "doubling: %s.", top, falls, rises))
    near = 0; worst = -1
    for (k = 1; k <= 4; k++)
        for (m = 1; m <= top; m *= 2) {
            s = order[k]
            if (!((s, m) in measured)) continue
            d = (measured[s, m] - theory[s, m]) / theory[s, m]
            if ((d < 0 ? -d : d) <= 0.1) near++
            if ((d < 0 ? -d : d) > worst) { worst = d < 0 ? -d : d; ws = s
                                            wm = m }
        }
    x = measured[ws, wm]; y = replayed[ws, wm]; t = theory[ws, wm]
    macro("PipeCloseRuns", near)
    macro("PipeVerdictFormula", sprintf("%s of the %d runs measured a bubble " \
          "within 10\\,\\%% of the formula%ss. The furthest from it, %s with " \
          "$M = %d$, measured %s against the formula%ss %s, %s %s.",
          near == runs ? "All" : near == 0 ? "None" : near, runs, q,
          name[ws], wm, frac(x), q, frac(t), pct(worst),
          x > t ? "more" : "less"))
    schedule_part = y - t; waiting = x - y
    if ((waiting < 0 ? -waiting : waiting) >= \
        (schedule_part < 0 ? -schedule_part : schedule_part))
        macro("PipeVerdictWhy", sprintf("Its replay, the same operations " \
              "with their measured durations and no waiting but the " \
              "schedule%ss, gives %s: most of the difference, %s of the " \
              "step, is time the ranks waited beyond what the schedule " \
              "needs, for sends, for a waiting rank%ss polling, and for " \
              "whatever else ran on the cores.", q, frac(y),
              frac(waiting), q))
    else
        macro("PipeVerdictWhy", sprintf("Its replay, the same operations " \
              "with their measured durations and no waiting but the " \
              "schedule%ss, gives %s: most of the difference, %s of the " \
              "step, is in the durations themselves, stages of unequal " \
              "load, which the formula%ss equal stages leave out; waiting " \
              "beyond the schedule adds %s.", q, frac(y),
              frac(schedule_part), q, frac(waiting)))
    macro("PipeVerdictSend", sprintf("Here a send of one activation takes " \
          "%s at the latency and bandwidth of \\texttt{build/machine.json}, " \
          "against %s for a stage%ss forward pass: %s.", duration(send),
          duration(forward), q, send < forward / 10 \
          ? "the sends are not what this machine" q "s bubble is made of" \
          : "the sends are a part of this machine" q "s bubble to reckon " \
            "with"))
    split(busy, b, " ")
    if (b[2] > 1)
        macro("PipeVerdictHead", sprintf("In every timed step of 1F1B with " \
              "%d micro-batches the last stage was busy longer than the " \
              "first, by %s at the median step: it also computes the final " \
              "norm, the head and the loss, which the replay carries and the " \
              "formula, with its equal stages, does not.", top,
              pct(b[1] - 1)))
    else if (b[1] > 1)
        macro("PipeVerdictHead", sprintf("At the median timed step of 1F1B " \
              "with %d micro-batches the last stage, which also computes the " \
              "final norm, the head and the loss, was busy %s longer than " \
              "the first, but not in every step: the head of so small a " \
              "vocabulary weighs less than the steps differ.", top,
              pct(b[1] - 1)))
    else
        macro("PipeVerdictHead", sprintf("The last stage, which also " \
              "computes the final norm, the head and the loss, was busy no " \
              "longer than the first at the median timed step of 1F1B with " \
              "%d micro-batches (%s of the first%ss time): the head of so " \
              "small a vocabulary weighs nothing the steps can show.", top,
              pct(b[1]), q))
    zb = measured["zb-h1", top]; one = measured["1f1b", top]
    macro("PipeVerdictZeroBubble", zb < one \
          ? sprintf("With %d micro-batches zb-h1 measured %s against " \
                    "1F1B%ss %s, where the formulas give %s and %s: deferring " \
                    "the weight gradients filled idle time, as the schedule " \
                    "meant them to.", top, frac(zb), q, frac(one),
                    frac(theory["zb-h1", top]), frac(theory["1f1b", top])) \
          : sprintf("With %d micro-batches zb-h1 measured %s against " \
                    "1F1B%ss %s, although the formulas give %s and %s: " \
                    "here the deferred weight gradients did not fill the idle " \
                    "time they were meant to.", top, frac(zb), q, frac(one),
                    frac(theory["zb-h1", top]), frac(theory["1f1b", top])))
    il = measured["interleaved", top]
    wait_il = il - replayed["interleaved", top]
    wait_one = one - replayed["1f1b", top]
    macro("PipeVerdictInterleaved", sprintf("Interleaving measured %s " \
          "against 1F1B%ss %s with %d micro-batches (the formulas: %s and " \
          "%s)%s Its waiting beyond the schedule, measured less replayed, " \
          "was %s of the step against 1F1B%ss %s%s", frac(il), q, frac(one),
          top, frac(theory["interleaved", top]), frac(theory["1f1b", top]),
          il < one ? "." : ": the smaller formula did not survive the " \
          "measurement.", frac(wait_il), q, frac(wait_one),
          wait_il > wait_one ? sprintf(": its sends, %d times as many, " \
          "cost it time the schedule does not show.", v) : sprintf(", so " \
          "its sends, %d times as many, cost nothing these runs can see.",
          v)))
    list_m = ""; list_r = ""
    for (k = 1; k <= 4; k++) {
        s = order[k]
        sep = k == 1 ? "" : k == 4 ? " and " : ", "
        list_m = list_m sprintf("%s%s %s", sep, name[s], frac(drawn_measured[s]))
        list_r = list_r sprintf("%s%s", sep, frac(drawn_replayed[s]))
    }
    if (drawn > cores)
        macro("PipeVerdictShared", sprintf("On %d stages the %d ranks share " \
              "this machine%ss %d cores, so whenever two want the same core " \
              "one waits, and its wait is drawn as the other stages%s " \
              "bubble. The measured bubbles (%s) are therefore the " \
              "machine%ss as much as the schedules%s; the replays of the " \
              "same operations give %s. The charts are shown for their " \
              "shape, and the bubble is timed on %d stages.", drawn, drawn,
              q, cores, q, list_m, q, q, list_r, timed))
    else
        macro("PipeVerdictShared", sprintf("On %d stages, a core each, the " \
              "measured bubbles were %s; the replays of the same operations " \
              "give %s.", drawn, list_m, list_r))
    for (r = 0; r < stages; r++) {
        if (peak["gpipe", r] != m_drawn)
            fail(sprintf("GPipe held %d micro-batches on stage %d, not %d",
                         peak["gpipe", r], r, m_drawn))
        if (peak["1f1b", r] != stages - r)
            fail(sprintf("1F1B held %d micro-batches on stage %d, not %d",
                         peak["1f1b", r], r, stages - r))
        if (peak["zb-h1", r] != stages)
            fail(sprintf("zb-h1 held %d micro-batches on stage %d, not %d",
                         peak["zb-h1", r], r, stages))
    }
    macro("PipeHeldGpipeFirst", kb(held_gpipe[0]))
    macro("PipeHeldOneFOneBFirst", kb(held_1f1b[0]))
    macro("PipeHeldRatio", sprintf("%.0f", held_gpipe[0] / held_1f1b[0]))
}
' "$data/10-bubble.csv" "$data/10-drawn.csv" "$data/10-memory.csv" \
    > "$numbers/10-costs.tex"
