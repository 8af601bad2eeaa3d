# Tangled from chapters/95-parallel-plumbing.nw, chapters/98c-pipeline-runs.nw, chapters/99e-predict-plumbing.nw and chapters/99f-measured-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/11-mesh.sh BUILD_DIR
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
cpu=$(sed -n 's/^ *"cpu": *"\(.*\)",*$/\1/p' "$machine")
shape="--layers 8 --hidden 64 --heads 8 --seq 64 --vocab 32 --batch 32
       --micro-batches 4"
steps=10 repeats=3
parts="compute_s exposed_comm_s_tp exposed_comm_s_pp exposed_comm_s_dp"
parts="$parts bubble_s optimizer_s other_s step_s"
"$bin/fleet" layout --machine "$machine" $shape --csv \
    --output "$data/11-mesh-predicted.csv"
layouts=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
                   { print $at["ranks"] ":" $at["tp"] ":" $at["pp"] ":" \
                           $at["dp"] }' "$data/11-mesh-predicted.csv")
degrees() {      # degrees N:T:P:D sets n, t, p and d
    n=${1%%:*}; rest=${1#*:}
    t=${rest%%:*}; rest=${rest#*:}
    p=${rest%%:*}; d=${rest#*:}
}
rm -f "$data"/11-mesh-*.json
for layout in $layouts; do
    degrees $layout
    test "$n" -le "$cores" || continue
    name="$data/11-mesh-$t-$p-$d"
    for r in $(seq 1 $repeats); do
        mpiexec -bind-to core -n "$n" "$bin/minigpt" $shape \
                --tp "$t" --pp "$p" --dp "$d" --steps $steps \
                --eval-every 1000 --quiet --json --machine "$machine" \
                --output "$name-run$r.json"
    done
    median=$(for r in $(seq 1 $repeats); do
                 echo "$(field step_breakdown_step_s "$name-run$r.json") $r"
             done | sort -g | awk -v n=$repeats 'NR == int((n + 1) / 2) {
                                                    print $2 }')
    cp "$name-run$median.json" "$name.json"
done
for layout in $layouts; do
    degrees $layout
    f="$data/11-mesh-$t-$p-$d.json"
    test -f "$f" || continue
    printf "%s,%s,%s" $t $p $d
    for part in $parts; do printf ",%s" "$(field step_breakdown_$part "$f")"
    done
    printf ",%s" "$(field step_ms "$f")"
    for r in "$data/11-mesh-$t-$p-$d"-run*.json; do    # the runs' spread
        field step_breakdown_step_s "$r"
    done | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
                          END { printf ",%s,%s\n", lo, hi }'
done > "$data/11-mesh-measured.csv"
awk -F, -v parts="$parts" -v runs="$data/11-mesh-measured.csv" '
    BEGIN { count = split(parts, part, " ") }
    FILENAME == runs { key = $1 ":" $2 ":" $3
                 for (k = 1; k <= count; k++) measured[key, k] = $(3 + k)
                 median[key] = $(4 + count) / 1e3; timed[key] = 1
                 lo[key] = $(5 + count); hi[key] = $(6 + count); next }
    FNR == 1 {
        for (i = 1; i <= NF; i++) at[$i] = i
        printf "layout,ranks,tp,pp,dp,timed"
        for (k = 1; k <= count; k++) printf ",predicted_%s", part[k]
        for (k = 1; k <= count; k++) printf ",measured_%s", part[k]
        printf ",measured_step_median_s"
        printf ",measured_step_min_s,measured_step_max_s\n"
        next
    }
    {
        t = $at["tp"]; p = $at["pp"]; d = $at["dp"]; key = t ":" p ":" d
        printf "%sx%sx%s,%s,%s,%s,%s,%d", t, p, d, $at["ranks"], t, p, d,
               key in timed
        for (k = 1; k <= count; k++)
            printf ",%s", $at["step_breakdown_" part[k]]
        for (k = 1; k <= count; k++)
            printf ",%s", key in timed ? measured[key, k] : ""
        printf ",%s", key in timed ? sprintf("%.9g", median[key]) : ""
        printf ",%s,%s\n", key in timed ? lo[key] : "",
               key in timed ? hi[key] : ""
    }' "$data/11-mesh-measured.csv" "$data/11-mesh-predicted.csv" \
    > "$data/11-mesh.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i
                   print "x,tp,pp,dp,kind,compute,tp_top,pp_top,dp_top," \
                         "bubble_top,optimizer_top,other_top"; next }
    $at["timed"] == 1 {
        split("predicted measured", kinds, " ")
        for (j = 2; j >= 1; j--) {
            x = 3 * bars + (j == 2 ? 0 : 1); top = 0
            printf "%d,%s,%s,%s,%s", x, $at["tp"], $at["pp"], $at["dp"],
                   kinds[j]
            split("compute_s exposed_comm_s_tp exposed_comm_s_pp " \
                  "exposed_comm_s_dp bubble_s optimizer_s other_s", part,
                  " ")
            for (k = 1; k <= 7; k++) {
                top += 1e3 * $at[kinds[j] "_" part[k]]
                printf ",%.6g", top
            }
            printf "\n"
        }
        bars++
    }' "$data/11-mesh.csv" > "$data/11-mesh-bars.csv"
awk -F, -v cores="$cores" -v cpu="$cpu" -v steps=$steps -v q="'" \
    -v repeats=$repeats -v shape="$shape" \
    -v table="$numbers/11-mesh-table.tex" \
    "$formats"'
BEGIN {
    split("compute_s exposed_comm_s_tp exposed_comm_s_pp exposed_comm_s_dp " \
          "bubble_s optimizer_s other_s step_s", part, " ")
    split("compute,the tensor-parallel all-reduces,the pipeline" q "s " \
          "messages,the gradient" q "s all-reduces,the bubble,the " \
          "optimizer,the rest of the step (other),the step", said, ",")
    split("Compute Tp Pp Dp Bubble Optimizer Other Step", camel, " ")
    split("One Two Three Four Five Six Seven Eight", big, " ")
    split("one two three four five six seven eight nine ten eleven " \
          "twelve", small, " ")
}
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function spelt(x) { return x == 1 ? "One" : x == 2 ? "Two" : x == 4 \
                    ? "Four" : x == 8 ? "Eight" : x }
function key(i) { return "Tp" spelt(t[i]) "Pp" spelt(p[i]) "Dp" spelt(d[i]) }
function name(i) { return "$" t[i] " \\times " p[i] " \\times " d[i] "$" }
function ms(x) { return sig3(1e3 * x) }
function count(x) { return x <= 12 ? small[x] : x }
function abs(x) { return x < 0 ? -x : x }
function needs(k, more) {
    if (k == 1 && more)
        return "the planner runs every operation at the rate of the " \
               "machine file" q "s one GEMM, but the operations that are " \
               "not products (attention, the GELU, the layer norms) run " \
               "far slower than that, as products at other shapes than " \
               "the one it timed may; it would need a measured rate for " \
               "each kind of operation at the shapes each layout gives it"
    if (k == 1)
        return "the products ran faster at their shapes than the " \
               "machine file" q "s GEMM; the planner would need the " \
               "GEMM" q "s rate at each shape"
    if (k == 2 && more)
        return "the planner costs each all-reduce as a ring of the " \
               "machine" q "s point-to-point messages; it would need what " \
               "MPI" q "s all-reduce costs here at these sizes, with the " \
               "wait for the group" q "s slowest rank that a blocking " \
               "collective includes"
    if (k == 2)
        return "MPI" q "s all-reduce cost less on one host than the ring " \
               "of point-to-point messages the planner charges; it would " \
               "need the algorithm MPI chose, and its cost"
    if (k == 3 && more)
        return "posting each message and copying it in and out of its " \
               "buffer cost more than the one-way time the planner " \
               "charges; it would need the cost of the trainer" q "s own " \
               "send and receive"
    if (k == 3)
        return "the planner charges each message the ping-pong" q "s " \
               "one-way time, more than posting it took here; it would " \
               "need the cost of posting a message, apart from its transit"
    if (k == 4 && more)
        return "the gradient" q "s all-reduces waited longer than their " \
               "ring" q "s cost: the wait includes the slower replica" q \
               "s lateness, and the planner would need the spread of the " \
               "replicas" q " step times as well as the collective" q "s cost"
    if (k == 4)
        return "the backward pass hid part of the gradient" q "s " \
               "all-reduces, which the planner charges whole; it would " \
               "need how much of each the rest of the backward pass covers"
    if (k == 5 && more)
        return "the stages waited for each other longer than the " \
               "schedule" q "s bubble: the planner takes the stages " \
               "equal, and would need each stage" q "s own time (the last " \
               "also runs the head and the loss) and each message" q "s " \
               "time to arrive"
    if (k == 5)
        return "the stages waited less than the schedule" q "s bubble " \
               "that the planner charges; it would need the schedule " \
               "replayed with the stages" q " measured durations"
    if (k == 6 && more)
        return "the optimizer" q "s pass over the weights and moments ran " \
               "slower than the rate the planner charges it at; it would " \
               "need AdamW" q "s own measured rate"
    if (k == 6)
        return "the optimizer" q "s pass ran faster than the rate the " \
               "planner charges it at; it would need AdamW" q "s own " \
               "measured rate"
    if (more)
        return "the step spent that time in no part the clock keeps " \
               "(drawing the batch, zeroing the gradients, the loops " \
               "between the timed operations), which the planner would " \
               "need to count"
    return "the parts counted more than the step took, so some wait was " \
           "counted twice; the planner is not what needs mending"
}
NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
{
    n++
    for (k = 1; k <= 8; k++) {
        predicted[n, k] = $at["predicted_" part[k]]
        measured[n, k] = $at["measured_" part[k]]
    }
    t[n] = $at["tp"]; p[n] = $at["pp"]; d[n] = $at["dp"]
    ranks[n] = $at["ranks"]; timed[n] = $at["timed"]
    lo[n] = $at["measured_step_min_s"]; hi[n] = $at["measured_step_max_s"]
}
END {
    macro("MeshCores", cores)
    macro("MeshCpu", cpu)
    macro("MeshSteps", steps)
    macro("MeshRepeats", count(repeats))
    words = split(shape, w, " ")
    for (i = 1; i < words; i += 2) {
        flag = w[i]; sub(/^--/, "", flag)
        macro("MeshShape" (flag == "micro-batches" ? "MicroBatches" \
              : toupper(substr(flag, 1, 1)) substr(flag, 2)), w[i + 1])
    }
    list = ""; timed_count = 0; most = 0
    print "\\begin{tabular}{llrrrrrrrr}\n\\hline" > table
    print "layout & & compute & TP & PP & DP & bubble & optim. & other & " \
          "step \\\\\n\\hline" > table
    for (i = 1; i <= n; i++) {
        row = sprintf("%s & predicted", name(i))
        for (k = 1; k <= 8; k++) row = row " & " ms(predicted[i, k])
        print row " \\\\" > table
        if (!timed[i]) continue
        row = sprintf(" & measured")
        for (k = 1; k <= 8; k++) row = row " & " ms(measured[i, k])
        print row " \\\\" > table
        timed_count++; last_timed = ranks[i]
        list = list (list == "" ? "" : ", ") name(i)
        macro("Mesh" key(i) "MeasuredStepTime", duration(measured[i, 8]))
        macro("Mesh" key(i) "PredictedStepTime", duration(predicted[i, 8]))
        share = measured[i, 7] / measured[i, 8]
        if (share < 0) share = -share
        if (share >= most) { most = share; most_at = i }
    }
    print "\\hline\n\\end{tabular}" > table
    close(table)
    macro("MeshTimedCount", count(timed_count))
    macro("MeshPredictedCount", count(n))
    macro("MeshTimedList", list)
    macro("MeshVerdictOther", most <= 0.05 \
          ? sprintf("Other was at most %s of a step, on %s: the clock" q "s " \
                    "parts account for the rest of every timed step.",
                    sig3(100 * most) "\\,\\%", name(most_at)) \
          : sprintf("Other reached %s of a step on %s: that much of the step " \
                    "was work or waiting that no part of the clock claimed, " \
                    "and that layout" q "s breakdown says where its time went " \
                    "only for the rest.", sig3(100 * most) "\\,\\%",
                    name(most_at)))
    macro("MeshUntimed", timed_count == n \
          ? "Every layout the planner lists fits on this machine" q "s cores " \
            "and was timed." \
          : sprintf("The other %s layouts need more ranks than this " \
                    "machine%ss %s cores and were only predicted: a rank that " \
                    "shares a core times the sharing, not the layout.",
                    count(n - timed_count), q, count(cores)))
    missed = 0; groups = 0
    for (i = 1; i <= n; i++) {
        if (!timed[i]) continue
        ratio = measured[i, 8] / predicted[i, 8]
        if (ratio <= 1.25 && ratio >= 0.75) continue
        missed++
        worst = 1
        for (k = 2; k <= 7; k++)
            if (abs(measured[i, k] - predicted[i, k]) \
                > abs(measured[i, worst] - predicted[i, worst]))
                worst = k
        more = measured[i, worst] > predicted[i, worst]
        took[missed] = sprintf("%s took %s against a predicted %s (%s)",
            name(i), duration(measured[i, 8]),
            duration(predicted[i, 8]),
            ratio >= 2 - 1e-9 ? sig3(ratio) " times" \
            : ratio > 1 ? sig3(100 * (ratio - 1)) "\\,\\% more" \
            : sig3(100 * (1 - ratio)) "\\,\\% less")
        g = worst SUBSEP more
        if (!(g in members)) { group[++groups] = g; members[g] = 0 }
        in_group[g, ++members[g]] = i
    }
    list = ""
    for (m = 1; m <= missed; m++)
        list = list (m == 1 ? "" : m == missed ? " and " : ", ") took[m]
    says = ""
    for (j = 1; j <= groups; j++) {
        split(group[j], wm, SUBSEP); worst = wm[1]; more = wm[2]
        who = ""; pairs = ""
        for (m = 1; m <= members[group[j]]; m++) {
            i = in_group[group[j], m]
            sep = m == 1 ? "" : m == members[group[j]] ? " and " : ", "
            who = who sep name(i)
            pairs = pairs sep duration(measured[i, worst]) \
                    (m == 1 ? " measured against " : " against ") \
                    duration(predicted[i, worst]) (m == 1 ? " predicted" : "")
        }
        if (members[group[j]] == missed && missed > 1)
            who = missed == 2 ? "both" : "all " count(missed)
        says = says sprintf(" In %s the part that differs most is %s, %s: " \
                            "%s.", who, said[worst], pairs, needs(worst, more))
    }
    fast_m = fast_p = 0; among = 0
    for (i = 1; i <= n; i++) {
        if (!timed[i] || ranks[i] != last_timed) continue
        among++
        if (!fast_m || measured[i, 8] < measured[fast_m, 8]) fast_m = i
        if (!fast_p || predicted[i, 8] < predicted[fast_p, 8]) fast_p = i
    }
    macro("MeshVerdictFastest", among < 2 ? "" \
          : fast_m == fast_p \
          ? sprintf("Of the %s layouts of %s ranks timed, the planner " \
                    "predicted %s the fastest, and it measured the fastest.",
                    count(among), count(last_timed), name(fast_p)) \
          : hi[fast_m] >= lo[fast_p] \
          ? sprintf("Of the %s layouts of %s ranks timed, the planner " \
                    "predicted %s the fastest and %s measured the fastest, " \
                    "but their repeated runs overlap (%s from %s to %s, %s " \
                    "from %s to %s): this machine cannot tell the two apart.",
                    count(among), count(last_timed), name(fast_p),
                    name(fast_m), name(fast_p), duration(lo[fast_p]),
                    duration(hi[fast_p]), name(fast_m), duration(lo[fast_m]),
                    duration(hi[fast_m])) \
          : sprintf("Of the %s layouts of %s ranks timed, the planner " \
                    "predicted %s the fastest, but %s measured the fastest: " \
                    "the ranking, which is what a planner is for, did not " \
                    "survive the machine.", count(among), count(last_timed),
                    name(fast_p), name(fast_m)))
    macro("MeshVerdictMisses", missed == 0 \
          ? sprintf("Every one of the %s timed layouts lies within 25\\,\\%% " \
                    "of its prediction.", count(timed_count)) \
          : sprintf("%s %s by more than 25\\,\\%%: %s.%s",
                    missed == timed_count ? "All " count(missed) " timed " \
                    "layouts" : sprintf("%s of the %s timed layouts",
                    toupper(substr(count(missed), 1, 1)) substr(count(missed), 2),
                    count(timed_count)), missed == 1 ? "misses its prediction" \
                    : "miss their predictions", list, says))
}' "$data/11-mesh.csv" > "$numbers/11-mesh.tex"
