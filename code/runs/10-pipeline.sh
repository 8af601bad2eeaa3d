# Tangled from chapters/95-parallel-plumbing.nw and chapters/98c-pipeline-runs.nw; edit the chapters, not this file.
# usage: sh code/runs/10-pipeline.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
formats="$formats"'
function sort(a, n,    i, j, x) {               # insertion sort
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            x = a[j]; a[j] = a[j - 1]; a[j - 1] = x
        }
}'
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
cores=$(field cores "$machine" 2>/dev/null || true)
test -n "$cores" || cores=$(nproc)
if [ "$cores" -lt 2 ]; then
    echo "10-pipeline.sh: the chapter times two stages, one per core;" \
         "this machine has $cores core" >&2
    exit 1
fi
cpu=$(sed -n 's/^ *"cpu": *"\(.*\)",*$/\1/p' "$machine")
timed=2 drawn=4 drawn_m=8 chunks=2
layers=8
model="--layers $layers --hidden 64 --heads 4 --seq 64"
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
counts() {       # counts SCHEDULE: the micro-batch counts it runs with
    for m in 1 2 4 8 16; do
        if [ $1 != interleaved ] || [ $((m % timed)) -eq 0 ]; then
            echo $m
        fi
    done
}
for schedule in $schedules; do
    for m in $(counts $schedule); do
        pipeline "bubble-$schedule-$m" $timed $m $schedule
    done
    pipeline "drawn-$schedule" $drawn $drawn_m $schedule
done
camel() {        # camel SCHEDULE: 1f1b -> OneFOneB, zb-h1 -> ZbHOne
    echo "$1" | sed 's/1f1b/OneFOneB/; s/gpipe/Gpipe/; s/zb-h1/ZbHOne/;
                     s/interleaved/Interleaved/'
}
spelled() {      # spelled M: 16 -> Sixteen
    echo "$1" | sed 's/^16$/Sixteen/; s/^1$/One/; s/^2$/Two/; s/^4$/Four/;
                     s/^8$/Eight/'
}
run_macros() {   # run_macros PREFIX JSON: the run's fields as macros
    awk -v prefix="$1" "$formats"'
        function name(key,   out, i, c, up) {
            up = 1; out = ""
            for (i = 1; i <= length(key); i++) {
                c = substr(key, i, 1)
                if (c == "_") up = 1
                else { out = out (up ? toupper(c) : c); up = 0 }
            }
            return out
        }
        function macro(key, text) {
            printf "\\newcommand{\\%s%s}{%s}\n", prefix, name(key), text
        }
        $NF == "{" { depth++; next }     # objects inside the report are
        /^ *}/     { depth--; next }     # left out: only its own fields
        depth > 1  { next }
        {
            key = $1; gsub(/[":]/, "", key)
            value = $0; sub(/^[^:]*: */, "", value); sub(/,$/, "", value)
            number = value + 0
        }
        key ~ /^(bubble_|weight_share$|stage_imbalance$)/ {
            macro(key, sig3(100 * number) "\\,\\%")
        }
        key ~ /_seconds$/ { k = key; sub(/seconds$/, "time", k)
                            macro(k, duration(number)) }
        key ~ /^(trace_steps|pp)$/ { macro(key, grouped(number)) }
        key ~ /^peak_inflight.*per_stage$/ { gsub(/"/, "", value)
                                             macro(key, value) }
    ' "$2"
}
{
    for schedule in $schedules; do
        for m in $(counts $schedule); do
            run_macros "PipeRun$(camel $schedule)M$(spelled $m)" \
                       "$data/10-bubble-$schedule-$m.json"
        done
        run_macros "PipeRunFour$(camel $schedule)M$(spelled $drawn_m)" \
                   "$data/10-drawn-$schedule.json"
    done
} > "$numbers/10-measured.tex"
echo "schedule,m,measured,replayed,theory,transfers" \
    > "$data/10-bubble.csv"
for schedule in $schedules; do
    for m in $(counts $schedule); do
        f="$data/10-bubble-$schedule-$m.json"
        echo "$schedule,$m,$(field bubble_measured "$f"),$(field \
            bubble_replayed "$f"),$(field bubble_theory "$f"),$(field \
            bubble_replayed_transfers "$f")"
    done
done >> "$data/10-bubble.csv"
zb="$data/10-bubble-zb-h1-16.json"
ratio=$(awk -v f="$(field forward_seconds "$zb")" \
            -v b="$(field backward_seconds "$zb")" \
            -v w="$(field weight_seconds "$zb")" \
            'BEGIN { printf "%.6g", (b + w) / f }')
share=$(field weight_share "$zb")
closed() {       # closed SCHEDULE M: the formula's bubble, or nothing
    flags=""
    if [ $1 = interleaved ]; then flags="--chunks $chunks"; fi
    if [ $1 = zb-h1 ]; then flags="--weight-share $share"; fi
    "$bin/fleet" pipeline --pp $timed --micro-batches $2 --schedule $1 \
        $flags --backward-ratio $ratio --json \
        2>/dev/null | awk '$1 == "\"closed_bubble\":" { sub(/,$/, "", $2)
                                                       print $2 }'
}
{
    echo "m,gpipe,interleaved,zb"
    for m in $(seq 1 16); do
        zb_bubble=""
        if [ $m -ge $timed ]; then zb_bubble=$(closed zb-h1 $m); fi
        echo "$m,$(closed 1f1b $m),$(closed interleaved $m),$zb_bubble"
    done
} > "$data/10-bubble-formula.csv"
median_step='
NR == 1 { next }
!($1 in seen) { seen[$1] = 1; order[++steps] = $1 }
$7 > end[$1] { end[$1] = $7 }
END {
    for (i = warmup + 1; i <= steps; i++) length_of[++n] = end[order[i]]
    sort(length_of, n)
    for (i = warmup + 1; i <= steps; i++)
        if (end[order[i]] == length_of[int((n + 1) / 2)]) {
            print order[i]; exit
        }
}'
for schedule in $schedules; do
    f="$data/10-drawn-$schedule.json"
    step=$(awk -F, -v warmup="$(field warmup_steps "$f")" \
               "$formats$median_step" "$data/10-drawn-$schedule.csv")
    awk -F, -v step=$step 'NR == 1 || $1 == step' \
        "$data/10-drawn-$schedule.csv" > "$data/10-gantt-$schedule.csv"
    v=1 flags=""
    if [ $schedule = interleaved ]; then
        v=$chunks flags="--chunks $chunks"
    fi
    set -- $(awk -v f="$(field forward_seconds "$f")" \
                 -v b="$(field backward_seconds "$f")" \
                 -v w="$(field weight_seconds "$f")" \
                 -v t="$(field transfer_seconds "$f")" -v v=$v 'BEGIN {
        printf "%.9g %.6g %.6g %.6g\n", f * v, (b + w) / f,
               (w > 0 ? w / (b + w) : 0.5), (t > 0 ? t / (f * v) : 0) }')
    unit=$1
    if [ $schedule = zb-h1 ]; then flags="$flags --weight-share $3"; fi
    if [ $4 != 0 ]; then flags="$flags --p2p-seconds $4"; fi
    "$bin/fleet" pipeline --pp $drawn --micro-batches $drawn_m \
        --schedule $schedule $flags --backward-ratio $2 --trace |
    awk -F, -v u=$unit 'NR == 1 {
            print "step,stage,kind,micro_batch,chunk,start_s,end_s"; next }
        { kind = $2 == "forward" ? "F" : $2 == "backward" ? "B" : "W"
          printf "0,%d,%s,%d,%d,%.9g,%.9g\n", $1, kind, $3, $4, $5 * u,
                 $6 * u }' > "$data/10-gantt-$schedule-sim.csv"
done
{
    echo "stage,gpipe,1f1b,zb-h1,peak_gpipe,peak_1f1b,peak_zb-h1"
    for schedule in gpipe 1f1b zb-h1; do
        f="$data/10-drawn-$schedule.json"
        sed -n 's/^ *"peak_inflight_per_stage": *"\(.*\)",*$/\1/p' "$f"
        field slot_bytes "$f"
    done | awk '{ if (NR % 2) {
                      stages = split($0, p, " ")
                      for (r = 1; r <= stages; r++)
                          peak[(NR + 1) / 2, r] = p[r]
                  } else bytes[NR / 2] = $1 }
                END { for (r = 1; r <= stages; r++)
                          printf "%d,%.0f,%.0f,%.0f,%d,%d,%d\n", r - 1,
                                 peak[1, r] * bytes[1], peak[2, r] * bytes[2],
                                 peak[3, r] * bytes[3], peak[1, r],
                                 peak[2, r], peak[3, r] }'
} > "$data/10-memory.csv"
one="$data/10-bubble-1f1b-16"
busy=$(awk -F, -v warmup="$(field warmup_steps "$one.json")" \
           -v last=$((timed - 1)) "$formats"'
    NR == 1 { next }
    !($1 in seen) { seen[$1] = 1; order[++steps] = $1 }
    { busy[$1, $2] += $7 - $6 }
    END {
        for (i = warmup + 1; i <= steps; i++) {
            r = busy[order[i], last] / busy[order[i], 0]
            ratio[++n] = r
            if (n == 1 || r < low) low = r
        }
        sort(ratio, n)
        printf "%.6g %.6g\n", ratio[int((n + 1) / 2)], low
    }' "$one.csv")
echo "schedule,measured,replayed,transfers" > "$data/10-drawn.csv"
for schedule in $schedules; do
    f="$data/10-drawn-$schedule.json"
    echo "$schedule,$(field bubble_measured "$f"),$(field \
          bubble_replayed "$f"),$(field bubble_replayed_transfers "$f")"
done >> "$data/10-drawn.csv"
awk -F, -v cores=$cores -v timed=$timed -v drawn=$drawn -v m_drawn=$drawn_m \
    -v v=$chunks -v busy="$busy" -v cpu="$cpu" -v steps=$steps -v q="'" \
    -v layers=$layers -v sequences=$sequences \
    -v forward="$(field forward_seconds "$one.json")" \
    -v hidden="$(field hidden "$one.json")" -v seq="$(field seq "$one.json")" \
    -v vocab="$(field vocab "$one.json")" \
    -v layers=$layers \
    -v transfer="$(field transfer_seconds "$one.json")" \
    -v transfers="$(field bubble_replayed_transfers "$one.json")" \
    "$formats"'
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function fail(why) {
    printf "10-pipeline.sh: %s: the text would be wrong\n", why \
        > "/dev/stderr"
    bad = 1; exit 1
}
function pct(x) { return sig3(100 * x) "\\,\\%" }
function kb(x) { return grouped(x / 1e3) "\\,kB" }
FNR == 1 { file++; next }
file == 1 {
    s = $1; m = $2 + 0
    measured[s, m] = $3; replayed[s, m] = $4; theory[s, m] = $5
    with_transfers[s, m] = $6
    if (!(s in first) || m < first[s]) first[s] = m
    if (m > top) top = m
    next
}
file == 2 { drawn_measured[$1] = $2; drawn_replayed[$1] = $3
            drawn_transfers[$1] = $4; next }
file == 3 { stage = $1; peak["gpipe", stage] = $5; peak["1f1b", stage] = $6
            peak["zb-h1", stage] = $7; held_gpipe[stage] = $2
            held_1f1b[stage] = $3; held_zb[stage] = $4
            stages = stage + 1; next }
END {
    if (bad) exit 1
    split("gpipe 1f1b interleaved zb-h1", order, " ")
    name["gpipe"] = "GPipe"; name["1f1b"] = "1F1B"
    name["interleaved"] = "interleaving"; name["zb-h1"] = "zb-h1"
    macro("PipeMeasuredCores", cores)
    macro("PipeMeasuredCpu", cpu)
    macro("PipeMeasuredSteps", steps)
    macro("PipeTimedStages", timed)
    macro("PipeLayers", layers); macro("PipeSequences", sequences)
    falling = 0; within = 0
    for (k = 1; k <= 4; k++) {
        s = order[k]
        if (s == "interleaved") continue
        down = 1
        for (m = 1; m <= 8; m *= 2) {
            d = measured[s, m] / theory[s, m] - 1
            if ((s != "zb-h1" || m >= timed) && d <= 0.1 && d >= -0.1)
                within++
            if (m < 8 && measured[s, 2 * m] >= measured[s, m]) down = 0
        }
        falling += down
    }
    macro("PipeMeasuredFalls", falling == 3 ? 1 : 0)
    macro("PipeMeasuredFallsCount", falling == 0 ? "none" : falling)
    split("One Two Three Four Five Six Seven Eight Nine Ten", spelt, " ")
    macro("PipeMeasuredWithinTen", sprintf("%s of the eleven measurements " \
          "that have a formula %s within 10\\,\\%% of it.", within == 0 \
          ? "None" : within == 11 ? "All" : spelt[within],
          within == 1 ? "lies" : "lie"))
    macro("PipeMeasuredReplayAbove", pct(replayed["1f1b", 4]) != \
          pct(theory["1f1b", 4]) && replayed["1f1b", 4] > theory["1f1b", 4])
    macro("PipeMeasuredFourShared", drawn > cores ? 1 : 0)
    macro("PipeMeasuredSendsBelow", with_transfers["1f1b", 4] \
          <= measured["1f1b", 4] ? 1 : 0)
    rises = ""; falls = ""
    for (k = 1; k <= 4; k++) {
        s = order[k]
        if (measured[s, top] >= measured[s, first[s]])
            fail(sprintf("the measured bubble of %s did not fall from M = %d " \
                         "to M = %d (%s, then %s)", s, first[s], top,
                         measured[s, first[s]], measured[s, top]))
        falls = falls sprintf("%s%s%ss from %s to %s", k == 1 ? "" : \
                              k == 4 ? " and " : ", ", name[s], q,
                              pct(measured[s, first[s]]), pct(measured[s, top]))
        for (m = first[s]; m < top; m *= 2)
            if (measured[s, 2 * m] >= measured[s, m])
                rises = rises sprintf("%s%s%ss rose from %s to %s between " \
                                      "$M = %d$ and %d", rises == "" ? "" : \
                                      "; ", name[s], q, pct(measured[s, m]),
                                      pct(measured[s, 2 * m]), m, 2 * m)
    }
    near = 0; runs = 0
    for (k = 1; k <= 4; k++)
        for (m = 1; m <= top; m *= 2)
            if ((order[k], m) in measured \
                && (order[k] != "zb-h1" || m >= timed)) {   # its formula holds
                runs++
                d = measured[order[k], m] / theory[order[k], m] - 1
                if (d <= 0.1 && d >= -0.1) near++
            }
    macro("PipeVerdictValues", near == runs \
          ? sprintf("its values survive too: all %d runs whose formula " \
                    "holds lie within a tenth of it.", runs) \
          : sprintf("its values survive less well: %s of the %d runs whose " \
                    "formula holds %s within a tenth of it.", near == 0 ? "none" \
                    : near == 1 ? "one" : near, runs, near == 1 ? "lies" \
                    : "lie"))
    macro("PipeVerdictFalls", rises == "" \
          ? sprintf("The measured bubble fell at every doubling of $M$ for " \
                    "every schedule: %s.", falls) \
          : sprintf("The measured bubble fell from the fewest micro-batches " \
                    "to %d for every schedule (%s), though not at every " \
                    "doubling: %s.", top, falls, rises))
    if (transfer <= 0)
        macro("PipeVerdictSend", sprintf("In 1F1B%ss run with %d " \
              "micro-batches the trace shows no time between a stage%ss send " \
              "and the next stage%ss start that the ranks%s clocks do not " \
              "explain, against %s for a forward pass of a stage: on one " \
              "machine the sends are not what the bubble is made of.", q, top,
              q, q, q, duration(forward)))
    else
        macro("PipeVerdictSend", sprintf("In 1F1B%ss run with %d " \
              "micro-batches a message took %s between stages, as the trace " \
              "shows it, against %s for a forward pass of a stage, and a " \
              "replay that charges every message that time gives %s against " \
              "%s without: %s.", q, top, duration(transfer),
              duration(forward), pct(transfers), pct(replayed["1f1b", top]),
              transfer < forward / 10 \
              ? "on one machine the sends are not what the bubble is made of" \
              : "the sends are a part of this machine" q "s bubble"))
    split(busy, b, " ")
    # The share of the head in the work of the last stage, by FLOPs per
    # position: the products of a block, 24 C^2, and its attention, 4 T C,
    # against 2 C V for the head (the norm and the loss: a few per number).
    head = 2 * hidden * vocab / (layers / timed * (24 * hidden * hidden \
                                                   + 4 * seq * hidden))
    excess = b[1] - 1
    if (excess <= 0)
        macro("PipeVerdictHead", sprintf("The last stage, which also " \
              "computes the final norm, the head and the loss, was busy no " \
              "longer than the first at the median timed step of that run " \
              "(%s of the first%ss busy time): at a vocabulary of %d the " \
              "head adds only %s to the stage%ss FLOPs.", pct(b[1]), q, vocab,
              pct(head), q))
    else if (excess <= 2 * head)
        macro("PipeVerdictHead", sprintf("At the median timed step of that " \
              "run the last stage was busy %s longer than the first, about " \
              "what its final norm, head and loss add to its blocks%s FLOPs " \
              "at a vocabulary of %d, %s.", pct(excess), q, vocab, pct(head)))
    else
        macro("PipeVerdictHead", sprintf("At the median timed step of that " \
              "run the last stage was busy %s longer than the first%s. Its " \
              "final norm, head and loss add only %s to its blocks%s FLOPs " \
              "at a vocabulary of %d; the rest is how the two stages ran on " \
              "this machine, each operation%ss time as the core it ran on " \
              "gave it, and the replay, which keeps each measured duration, " \
              "keeps the imbalance too.", pct(excess), b[2] > 1 ? ", and " \
              "longer in every timed step" : "", pct(head), q, vocab, q))
    zb = measured["zb-h1", top]; one = measured["1f1b", top]
    zb_replay = replayed["zb-h1", top]; one_replay = replayed["1f1b", top]
    macro("PipeVerdictZeroBubble", sprintf("With %d micro-batches zb-h1 " \
          "measured %s against 1F1B%ss %s, where the formulas give %s and " \
          "%s, and the replays, which keep the operations and drop the " \
          "waits, %s and %s: %s", top, pct(zb), q, pct(one),
          pct(theory["zb-h1", top]), pct(theory["1f1b", top]), pct(zb_replay),
          pct(one_replay), zb < one && zb_replay < one_replay \
          ? "deferring the weight gradients filled idle time, as the " \
            "schedule meant them to." \
          : zb_replay < one_replay \
          ? "the schedule filled idle time, as the replays show, and the " \
            "machine took more of it back from zb-h1." \
          : zb < one \
          ? "zb-h1 measured less, but its replay did not, so the difference " \
            "is the machine" q "s, not the schedule" q "s." \
          : "here the deferred weight gradients did not fill the idle time " \
            "they were meant to, even in the replay."))
    il = measured["interleaved", top]
    sends_il = with_transfers["interleaved", top] - replayed["interleaved", top]
    rest_il = il - with_transfers["interleaved", top]
    sends = (timed * v - 1) / (timed - 1)      # cuts a micro-batch crosses
    times = sends == 2 ? "twice" : sends == 3 ? "three times" \
          : sig3(sends) " times"
    macro("PipeVerdictInterleaved", sprintf("Interleaving measured %s " \
          "against 1F1B%ss %s with %d micro-batches (the formulas: %s and " \
          "%s)%s Its sends, %s as many, are in its replay with each " \
          "message%ss measured time, %s against %s without: %s", pct(il), q,
          pct(one), top, pct(theory["interleaved", top]),
          pct(theory["1f1b", top]), il < one ? "." : ": the smaller formula " \
          "did not survive the measurement.", times, q,
          pct(with_transfers["interleaved", top]),
          pct(replayed["interleaved", top]),
          sends_il > rest_il \
          ? "the sends are most of what its measurement adds to its replay." \
          : sprintf("they account for %s of the step, and the rest of what " \
                    "the measurement adds, %s, is waiting that no message " \
                    "explains.", pct(sends_il), pct(rest_il))))
    list_m = ""; list_r = ""
    for (k = 1; k <= 4; k++) {
        s = order[k]
        sep = k == 1 ? "" : k == 4 ? " and " : ", "
        list_m = list_m sprintf("%s%s %s", sep, name[s], pct(drawn_measured[s]))
        list_r = list_r sprintf("%s%s", sep, pct(drawn_replayed[s]))
    }
    if (drawn > cores)
        macro("PipeVerdictShared", sprintf("On %d stages the %d ranks share " \
              "this machine%ss %d cores, so the measured charts show, beside " \
              "the schedule, every time a rank waited for a core: the " \
              "measured bubbles were %s, and the replays of the same " \
              "operations %s.", drawn, drawn, q, cores, list_m, list_r))
    else
        macro("PipeVerdictShared", sprintf("On %d stages, a core each, the " \
              "measured bubbles were %s, and the replays of the same " \
              "operations %s.", drawn, list_m, list_r))
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
    macro("PipeDrawnStages", drawn)
    macro("PipeDrawnMicroBatches", m_drawn)
    macro("PipeRunChunks", v)
    macro("PipeHeldGpipeFirst", kb(held_gpipe[0]))
    macro("PipeHeldOneFOneBFirst", kb(held_1f1b[0]))
    if (held_gpipe[0] * stages != held_1f1b[0] * m_drawn)
        fail(sprintf("GPipe held %s bytes on stage 0 and 1F1B %s, not M/P " \
                     "as much", held_gpipe[0], held_1f1b[0]))
    ratio = sprintf("%.0f", held_gpipe[0] / held_1f1b[0])
    macro("PipeHeldRatio", ratio == 2 ? "twice" : ratio " times")
    slot_zb = held_zb[0] / peak["zb-h1", 0]
    slot_one = held_1f1b[0] / peak["1f1b", 0]
    if (slot_zb <= slot_one)
        fail("a zb-h1 slot is no larger than a 1F1B slot")
    macro("PipeSlotRatio", sprintf("%.2g", slot_zb / slot_one))
}
' "$data/10-bubble.csv" "$data/10-drawn.csv" "$data/10-memory.csv" \
    >> "$numbers/10-measured.tex"
awk -v share="$(field weight_share "$data/10-bubble-zb-h1-4.json")" 'BEGIN {
    if (share < 0.45)
        text = ", not half of it: B also runs everything that has no " \
               "weights (the attention\x27s own products, the softmax, the " \
               "GELU, the norms), which at this model\x27s small width " \
               "weighs much against the four weight products."
    else if (share <= 0.55)
        text = ", about half of it: the weight products, as many in B as " \
               "in W, outweigh everything else the backward pass does."
    else
        text = ", more than half of it, although B runs as many weight " \
               "products as W and everything that has no weights besides: " \
               "W\x27s products ran slower here than B\x27s."
    printf "\\newcommand{\\PipeWeightShareVerdict}{%s}\n", text
}' >> "$numbers/10-measured.tex"
