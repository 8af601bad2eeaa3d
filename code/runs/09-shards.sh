# Tangled from chapters/95-parallel-plumbing.nw and chapters/96-tensor-parallel-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/09-shards.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
machine="$1/machine.json"
formats=$(cat code/common/formats.awk)
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
default_of() {   # default_of FLAG: the default a --help line gives FLAG
    sed -n "s/^  $1 N .*(default \([0-9.e+]*\))\$/\1/p"
}
help=$($bin/minigpt --help)
hidden=$(echo "$help" | default_of --hidden)
heads=$(echo "$help" | default_of --heads)
seq=$(echo "$help" | default_of --seq)
batch=$(echo "$help" | default_of --batch)
layers=$(echo "$help" | default_of --layers)
$bin/fleet tp --json --output "$data/09-shards-real.json"
real_hidden=$(field hidden "$data/09-shards-real.json")
real_seq=$(field seq "$data/09-shards-real.json")
real_batch=$(field micro_batch "$data/09-shards-real.json")
real_heads=$($bin/fleet activations --help | default_of --heads)
gemm=$(field gemm_flops_per_core "$machine")
peak=$(field peak_flops_per_core "$machine")
repeats=$(field repeats "$machine")
for v in "$hidden" "$heads" "$seq" "$batch" "$layers" "$real_hidden" \
         "$real_seq" "$real_batch" "$real_heads" "$gemm" "$peak" "$repeats"
do
    test -n "$v" || { echo "09-shards.sh: a shape or a figure of the" \
                           "machine is missing" >&2; exit 1; }
done
pin=""
if [ "$(nproc)" -ge 2 ]; then pin="-bind-to core"; fi
largest_tp() {
    t=1
    while [ $((t * 2)) -le 8 ] && [ $(($1 % (t * 2))) -eq 0 ]; do
        t=$((t * 2))
    done
    echo $t
}
shards() {       # shards NAME FLAGS...: one timed run, transcript and JSON
    name=$1; shift
    mpiexec $pin -n 1 $bin/matmul-bench --shards --machine "$machine" \
        --repeats "$repeats" --seconds 0.35 "$@" \
        --transcript "$transcripts/09-shards-$name.txt" \
        --json --output "$data/09-shards-$name.json"
}
shards minigpt --batch "$batch" --seq "$seq" --hidden "$hidden" \
       --heads "$heads" --max-tp "$(largest_tp "$heads")"
shards scaled --batch "$real_batch" --seq "$real_seq" \
       --hidden "$real_hidden" --heads "$real_heads" \
       --max-tp "$(largest_tp "$real_heads")" --scale-to 1
for name in minigpt scaled; do
    prefix=ShardMini
    test $name = minigpt || prefix=ShardBig
    awk -v prefix=$prefix -v gemm="$gemm" -v name=$name \
        -v csv="$data/09-shards-$name.csv" "$formats"'
        function camel(key,   out, i, c, up, digit) {
            split("Zero One Two Three Four Five Six Seven Eight Nine", digit)
            up = 1; out = ""
            for (i = 1; i <= length(key); i++) {
                c = substr(key, i, 1)
                if (c == "_") up = 1
                else if (c ~ /[0-9]/) { out = out digit[c + 1]; up = 1 }
                else { out = out (up ? toupper(c) : c); up = 0 }
            }
            return out
        }
        function sci(x,   m) {        # 4.35e+10 as 4.35 x 10^10
            split(sprintf("%.3g", x), m, "e")
            if (m[2] == "") return m[1]
            return sprintf("\\ensuremath{%s\\times10^{%d}}", m[1], m[2])
        }
        function macro(key, value) {
            printf "\\newcommand{\\%s%s}{%s}\n", prefix, camel(key), value
        }
        $1 ~ /^"/ {
            key = $1; gsub(/[":]/, "", key)
            value = $0; sub(/^[^:]*: */, "", value); sub(/,$/, "", value)
            v[key] = key == "cpu" ? value : value + 0
            order[++n] = key
        }
        END {
            for (i = 1; i <= n; i++) {
                k = order[i]; x = v[k]
                if (k == "cpu") { gsub(/"/, "", x); macro(k, x) }
                else if (k ~ /flops|rate/) macro(k, sci(x))
                else if (k ~ /^efficiency/) macro(k, sprintf("%.2f", x))
                else macro(k, grouped(x))
            }
            macro("real_block_time", duration(v["real_block_flops"] / gemm))
            if (v["efficiency_t1"] != 1 || v["efficiency_t1_low"] != 1 \
                || v["efficiency_t1_high"] != 1) {
                printf "09-shards.sh: %s: the efficiency at t = 1 is not " \
                       "exactly 1\n", name > "/dev/stderr"
                exit 1
            }
            print "t,efficiency,low,high" > csv
            for (t = 1; t <= v["max_tp"]; t *= 2) {
                e = v["efficiency_t" t]; lo = v["efficiency_t" t "_low"]
                hi = v["efficiency_t" t "_high"]
                if (!(lo > 0 && lo <= e && e <= hi)) {
                    printf "09-shards.sh: %s: at t = %d the efficiency " \
                           "%s lies outside its spread %s to %s\n", name, t,
                           e, lo, hi > "/dev/stderr"
                    exit 1
                }
                printf "%d,%.17g,%.17g,%.17g\n", t, e, lo, hi > csv
            }
        }' "$data/09-shards-$name.json" > "$numbers/09-shards-$name.tex"
done
mini_tp=$(largest_tp "$heads") big_tp=$(largest_tp "$real_heads")
big_hidden=$(field hidden "$data/09-shards-scaled.json")
{
    printf '\\newcommand{\\ShardMiniBatch}{%d}\n' "$batch"
    printf '\\newcommand{\\ShardMiniSeq}{%d}\n' "$seq"
    printf '\\newcommand{\\ShardMiniFcSlice}{%d}\n' \
        $((4 * hidden / mini_tp))
    printf '\\newcommand{\\ShardMiniProjSlice}{%d}\n' $((hidden / mini_tp))
    printf '\\newcommand{\\ShardBigRealBatch}{%d}\n' "$real_batch"
    printf '\\newcommand{\\ShardBigRealSeq}{%s}\n' \
        "$(awk "$formats"' BEGIN { print grouped('"$real_seq"') }')"
    printf '\\newcommand{\\ShardBigFcSlice}{%d}\n' \
        $((4 * big_hidden / big_tp))
    printf '\\newcommand{\\ShardBigProjSlice}{%d}\n' \
        $((big_hidden / big_tp))
} >> "$numbers/09-shards-minigpt.tex"
plan="--machine $machine --hidden $hidden --seq $seq --micro-batch $batch \
      --layers $layers --bytes-per-element 4 --tp 2"
# On a busy machine the GEMM can measure faster than the FMA loop that
# stands for the peak; the planner takes at most the whole peak, and the
# build says why the ratio was cut.
mfu=$(awk -v g="$gemm" -v p="$peak" 'BEGIN {
          if (g > p) {
              printf "09-shards.sh: the GEMM measured %.3g of the peak " \
                     "(a noisy build/machine.json); the planner takes 1\n",
                     g / p > "/dev/stderr"
              g = p
          }
          printf "%.6f", g / p }')
$bin/fleet tp $plan --mfu "$mfu" --output "$transcripts/09-shards-plan.txt"
$bin/fleet tp $plan --mfu "$mfu" --latex ShardPlan \
              --output "$numbers/09-shards-plan.tex"
$bin/fleet tp $plan --mfu "$mfu" --json --output "$data/09-shards-plan.json"
# Chapter 9 says no GPU curve has been measured; a GPU run committed under
# data/gpu/ makes that false, and the chapter must be rewritten to show it.
if ls data/gpu/*.csv > /dev/null 2>&1; then
    echo "09-shards.sh: data/gpu/ holds GPU results that chapter 9 says" \
         "do not exist; quote them there" >&2
    exit 1
fi
node="$numbers/09-shards-node.tex"
: > "$node"
node_run() {     # node_run GPU NAME LABEL FLAGS: its macros, and its JSON
    gpu=$1 name=$2 label=$3
    shift 3
    $bin/fleet tp --gpu $gpu "$@" --latex ShardNode$name$label >> "$node"
    $bin/fleet tp --gpu $gpu "$@" --json \
        --output "$data/09-shards-node-$name$label.json"
}
for gpu in h100 h200; do
    name=Hundred
    test $gpu = h100 || name=TwoHundred
    node_run $gpu $name Nvlink
    node_run $gpu $name Nic --link nic
    node_run $gpu $name Sixteen --tp 16 --link nic
done
awk -v mfu="$mfu" -v q="'" "$formats"'
    FNR == 1 { file++ }
    $1 ~ /^"/ {
        key = $1; gsub(/[":]/, "", key)
        value = $2; sub(/,$/, "", value)
        v[file, key] = value + 0
    }
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    function e2(x) { return sprintf("%.2f", x) }
    # what the repeats say at degree t of shape f: "loss" when every
    # repeat lost, "gain" when every repeat gained, "even" otherwise
    function kind(f, t) {
        if (v[f, "efficiency_t" t "_high"] < 1) return "loss"
        if (v[f, "efficiency_t" t "_low"] > 1) return "gain"
        return "even"
    }
    function spread(f, t) {
        return sprintf("%s to %s", e2(v[f, "efficiency_t" t "_low"]),
                       e2(v[f, "efficiency_t" t "_high"]))
    }
    # the first degree from which every larger one lost, 0 if none
    function from(f,   t, first) {
        first = 0
        for (t = 2; t <= v[f, "max_tp"]; t *= 2)
            if (kind(f, t) == "loss") { if (!first) first = t }
            else first = 0
        return first
    }
    function verdict(f, what,   t, e, k, s, r1, rt) {
        t = v[f, "max_tp"]; e = v[f, "efficiency_t" t]; k = kind(f, t)
        r1 = sprintf("%.3g", v[f, "slice_rate_t1"] / 1e9)
        rt = sprintf("%.3g", v[f, "slice_rate_t" t] / 1e9)
        if (k == "loss")
            s = sprintf("At %s, the slices at $t = %d$ ran at %s~GFLOP/s " \
                "against the whole block%ss %s, an efficiency of %s (%s " \
                "over the repeats): the %d ranks together spend %.3g times " \
                "the core-seconds of one, and each loses %.0f\\,\\%% of its " \
                "time to the smaller products.", what, t, rt, q, r1, e2(e),
                spread(f, t), t, 1 / e, 100 * (1 - e))
        else if (k == "gain")
            s = sprintf("At %s, the slices at $t = %d$ ran faster per FLOP " \
                "than the whole, %s~GFLOP/s against %s, an efficiency of %s " \
                "(%s over the repeats): here splitting cost nothing, and " \
                "the smaller operands ran better.", what, t, rt, r1, e2(e),
                spread(f, t))
        else
            s = sprintf("At %s, the slices at $t = %d$ ran at %s~GFLOP/s " \
                "against the whole block%ss %s, an efficiency of %s, but " \
                "the repeats ranged from %s and include 1: these runs " \
                "cannot tell the slices%s rate from the whole%ss.", what, t,
                rt, q, r1, e2(e), spread(f, t), q, q)
        if (from(f) && from(f) < t)
            s = s sprintf(" The loss shows from $t = %d$ on, where every " \
                          "repeat lost.", from(f))
        return s
    }
    END {
        # file 1: minigpt; 2: the scaled block; 3: the planner
        macro("ShardVerdictMini", verdict(1, "\\texttt{minigpt}" q "s shape"))
        macro("ShardVerdictBig", verdict(2, "the scaled 100B-class shape"))
        t = v[1, "max_tp"] < v[2, "max_tp"] ? v[1, "max_tp"] : v[2, "max_tp"]
        a = v[1, "efficiency_t" t]; b = v[2, "efficiency_t" t]
        e = "efficiency_t" t
        apart = v[1, e "_high"] < v[2, e "_low"] \
             || v[2, e "_high"] < v[1, e "_low"]
        smaller_worse = apart && a < b
        if (!apart)
            c = sprintf("At $t = %d$, the largest degree both can take, " \
                "the two shapes%s efficiencies are %s and %s, but the " \
                "spreads of their repeats overlap, so these runs do not " \
                "say which shape splits better.", t, q, e2(a), e2(b))
        else if (smaller_worse)
            c = sprintf("At $t = %d$, the largest degree both can take, " \
                "the small model lost more: %s against %s, with no overlap " \
                "of the repeats. The smaller the matrices to begin with, " \
                "the more it costs to cut them.", t, e2(a), e2(b))
        else
            c = sprintf("At $t = %d$, the largest degree both can take, " \
                "the small model lost less: %s against %s, with no overlap " \
                "of the repeats, so on this core the small products were " \
                "not the worse to cut.", t, e2(a), e2(b))
        macro("ShardVerdictCompare", c)
        lost1 = kind(1, v[1, "max_tp"]) == "loss"
        lost2 = kind(2, v[2, "max_tp"]) == "loss"
        where = lost1 && lost2 ? "at both shapes" \
              : lost1 ? "at \\texttt{minigpt}" q "s shape" \
              : "at the scaled shape"
        if (lost1 || lost2)
            m = "So tensor parallelism costs compute as well as traffic. " \
                "The planner of Part~I divides a block" q "s FLOPs by $t$ " \
                "and prices them at one rate; " where " the measured " \
                "rate fell as $t$ grew" \
                (smaller_worse ? ", and fell further the smaller the " \
                 "matrices were to begin with." : ".")
        else
            m = "So on this core, at these shapes, splitting cost no " \
                "compute that these runs can measure: here the price of " \
                "tensor parallelism is its traffic. That holds for these " \
                "shapes on this processor, not for every slice on every one."
        macro("ShardVerdictMeans", m)
        # the planner at minigpt, corrected by the measured efficiency
        t = v[3, "tp"]; e = v[1, "efficiency_t" t]
        macro("ShardPlanMfuPercent", sprintf("%.3g\\,\\%%", 100 * mfu))
        macro("ShardPlanEfficiency", e2(e))
        corrected = duration(v[3, "compute_seconds_per_block"] / e)
        k = kind(1, t)
        macro("ShardPlanCorrection", k == "loss" \
            ? sprintf("says the slices ran slower than that, and the " \
                      "compute is nearer %s.", corrected) \
            : k == "gain" \
            ? sprintf("says they ran faster than that, and the compute is " \
                      "nearer %s.", corrected) \
            : sprintf("has a spread from %s, which includes 1: the " \
                      "measurement does not correct the planner" q "s " \
                      "compute by more than it can resolve.", spread(1, t)))
    }' "$data/09-shards-minigpt.json" "$data/09-shards-scaled.json" \
       "$data/09-shards-plan.json" > "$numbers/09-shards-verdict.tex"
ratio() {        # ratio NAME: that run's comm ÷ compute, unrounded
    awk '$1 == "\"comm_compute_ratio\":" { sub(/,$/, "", $2); print $2 }' \
        "$data/09-shards-node-$1.json"
}
for part in Hundred TwoHundred; do
    nv=$(ratio ${part}Nvlink) nic=$(ratio ${part}Nic)
    sixteen=$(ratio ${part}Sixteen)
    test -n "$nv" && test -n "$nic" && test -n "$sixteen"
    awk -v nv="$nv" -v nic="$nic" -v sixteen="$sixteen" -v part=$part '
    BEGIN {
        if (!(nv < 1 && sixteen > 1)) {
            printf "09-shards.sh: the planner no longer says that TP8 fits " \
                   "NVLink (%s) and TP16 over the NIC does not (%s): the " \
                   "text would be wrong\n", nv, sixteen > "/dev/stderr"
            exit 1
        }
        if (part != "Hundred") exit
        s = sprintf("On the NIC the all-reduces take %.2g times as long, " \
                    "%.0f\\,\\%% of the compute they sit between, on the " \
                    "critical path with nothing to overlap them; across " \
                    "two nodes, where each GPU" "\047" "s compute halves " \
                    "and its traffic does not, they take longer than the " \
                    "compute. Tensor parallelism goes as far as NVLink " \
                    "reaches, and no further (priced, as in " \
                    "Chapter~\\ref{ch:step}, as if each GPU" "\047" "s " \
                    "bytes left through its own NIC).", nic / nv, 100 * nic)
        printf "\\newcommand{\\ShardNodeVerdict}{%s}\n", s
    }' >> "$node"
done
