# usage: sh solutions/11-mesh.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 11 (the 3D mesh). Exercise
# N writes its macros to BUILD_DIR/solutions/11-exN*.tex (named
# \SolEleven<letter><Field>, A for exercise 11.1, B for 11.2, and so on),
# fleet's and minigpt's JSON to 11-exN*.json and what they print, under the
# command, to 11-exN*.txt. What the tools do not print themselves (which
# groups of a mesh cross a host, a sum of parts, a ratio of two runs, the
# closed forms of two all-reduces, a bucket's timeline) is one line of awk on
# their output or on the exercise's inputs, written as macros into
# 11-exN-derived.tex, so that no answer is typed by hand.
# tests/11-solutions.t redoes the arithmetic in Perl.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

# layout NAME FILE FLAGS...: the best layout fleet layout finds under FLAGS,
# as macros with the prefix NAME into FILE.tex, and as JSON into FILE.json.
layout() {
    name=$1 file=$2
    shift 2
    $fleet layout "$@" --top 1 --latex "$name" --output "$out/$file.tex"
    $fleet layout "$@" --top 1 --json --output "$out/$file.json"
}

# ---------------------------------------------------------------- 11.1 -----
# Where the ranks sit: 16 ranks on two hosts of 8 (ranks 0-7 on the first,
# as mpiexec places them), as three meshes. minigpt --print-mesh prints
# each rank's coordinates and the world ranks of its three groups; a group
# crosses a host when its lowest and highest ranks are on different hosts.
# The model has 8 heads and 4 layers, so that every layout here splits it.
for m in 4x2x2 2x4x2 8x2x1; do
    t=${m%%x*} rest=${m#*x}
    p=${rest%%x*} d=${rest#*x}
    mpiexec -n 16 "$bin/minigpt" --hidden 64 --heads 8 --layers 4 --batch 16 \
        --tp $t --pp $p --dp $d --print-mesh > "$out/11-ex1-$m.txt"
done
# crossing FILE AXIS: how many of the mesh's groups along AXIS (tp, pp or
# dp) hold ranks of both hosts, and how many groups there are.
crossing() {
    awk -v axis="$2" '
        $1 == "rank" {
            for (i = 3; i <= NF; i++) if ($i == axis) break
            list = $(i + 4); gsub(/[\[\],]+/, " ", list)
            n = split(list, r, " ")
            lo = r[1]; hi = r[1]
            for (k = 2; k <= n; k++) { if (r[k] < lo) lo = r[k]; if (r[k] > hi) hi = r[k] }
            if (!(list in seen)) { seen[list] = 1; groups++
                                   if (int(lo / 8) != int(hi / 8)) crossed++ }
        }
        END { printf "%d of %d", crossed, groups }' "$1"
}
# field FILE RANK WHAT: one rank's coordinate ("tp", "pp", "dp": the number
# after it) or group ("tp-group" ...: the list after "of N").
field() {
    awk -v r="$2" -v what="$3" '
        $1 == "rank" && $2 == r ":" {
            axis = what; sub(/-group$/, "", axis)
            for (i = 3; i <= NF; i++) if ($i == axis) break
            v = what ~ /-group$/ ? $(i + 4) : $(i + 1)
            gsub(/[\[\]]/, "", v); sub(/,$/, "", v); gsub(/,/, ", ", v)
            print v
        }' "$1"
}
# word M: a mesh as a macro name can spell it.
word() {
    case $1 in 4x2x2) echo FourTwoTwo ;; 2x4x2) echo TwoFourTwo ;;
               8x2x1) echo EightTwoOne ;; esac
}
{
    for m in 4x2x2 2x4x2 8x2x1; do
        f="$out/11-ex1-$m.txt" n="SolElevenA$(word $m)"
        for a in tp pp dp; do
            case $a in tp) A=Tp ;; pp) A=Pp ;; dp) A=Dp ;; esac
            macro "$n${A}Coord" "$(field "$f" 13 $a)"
            macro "$n${A}Group" "$(field "$f" 13 $a-group)"
            macro "$n${A}Crossing" "$(crossing "$f" $a)"
        done
    done
} > "$out/11-ex1-derived.tex"
{
    echo '$ mpiexec -n 16 minigpt --hidden 64 --heads 8 --layers 4 --batch 16 \'
    echo '      --tp 4 --pp 2 --dp 2 --print-mesh'
    cat "$out/11-ex1-4x2x2.txt"
} > "$out/11-ex1.txt"
quote_lines "$out/11-ex1.txt" '^(mesh|rank ([0-9]|1[23]):)'

# ---------------------------------------------------------------- 11.2 -----
# The planner's breakdown of one layout of a 70B-class model (hidden 8,192,
# 64 heads, 80 layers) on 64 H100: TP8 x PP4 x DP2, 1F1B, micro-batches of
# one sequence, selective recomputation; then the same layout on a NIC of
# 50 Gbps, and the same model as TP2 x PP16 x DP2. Each part's share of the
# step is one line of awk on fleet's JSON.
ex2="--params 70e9 --hidden 8192 --heads 64 --layers 80 --gpus 64
     --schedule 1f1b --micro-batch 1 --recompute selective"
layout SolElevenBEight 11-ex2-tp8 $ex2 --tp 8 --pp 4 --dp 2
layout SolElevenBSlow 11-ex2-slow $ex2 --tp 8 --pp 4 --dp 2 --nic-gbps 50
layout SolElevenBTwo 11-ex2-tp2 $ex2 --tp 2 --pp 16 --dp 2
show "$out/11-ex2.txt" "$fleet" layout $ex2 --tp 8 --pp 4 --dp 2 --top 1
quote_range "$out/11-ex2.txt" '^compute' '^step'
# best FILE KEY: KEY of the best layout in FILE.json (the first listed).
best() {
    json "$out/$1.json" "$2" | head -n 1
}
# share FILE KEY: KEY's share of the best layout's step, in per cent.
share() {
    calc "%.3g" "100 * $(best "$1" "$2") / $(best "$1" step_time_s)"
}
{
    for run in tp8:Eight slow:Slow tp2:Two; do
        n="SolElevenB${run#*:}" f="11-ex2-${run%%:*}"
        for k in compute_s:Compute bubble_s:Bubble tp_s:Tp exposed_s:Exposed; do
            macro "$n${k#*:}Share" "$(share $f ${k%%:*})\\,\\%"
        done
        macro "${n}NicTime" "$(duration "$(calc %.17g \
            "$(best $f pp_s) + $(best $f dp_s)")")"
    done
    macro SolElevenBSlowDelta "$(duration "$(calc %.17g \
        "$(best 11-ex2-slow step_time_s) - $(best 11-ex2-tp8 step_time_s)")")"
    macro SolElevenBGain "$(calc %.3g "$(best 11-ex2-tp8 step_time_s) \
        / $(best 11-ex2-tp2 step_time_s)")"
} > "$out/11-ex2-derived.tex"

# ---------------------------------------------------------------- 11.3 -----
# Flat against hierarchical: the all-reduce of a 2 GB gradient (1e9
# parameters in bf16) over nodes of g = 8 GPUs, on 2 and on 16 nodes, with
# NVLink at 360 GB/s and the NIC at 40 GB/s of bus bandwidth a GPU (80 % of
# 450 GB/s and of 400 Gbps); no latency. A flat ring over all n = g k GPUs
# moves 2(n-1)/n of the buffer through every hop, and each of its steps
# waits for the slowest, a NIC. The hierarchical one reduce-scatters inside
# the node, (g-1)/g of it on NVLink, all-reduces its 1/g across the k nodes,
# 2(k-1)/k of that on the NIC, and all-gathers inside the node.
{
    S=2e9 g=8 nv=360e9 nic=40e9
    for k in 2:Two 16:Sixteen; do
        n=$((g * ${k%%:*})) K=${k%%:*} name="SolElevenC${k#*:}"
        flat=$(calc %.17g "2 * ($n - 1) / $n * $S / $nic")
        inside=$(calc %.17g "2 * ($g - 1) / $g * $S / $nv")
        across=$(calc %.17g "2 * ($K - 1) / $K * $S / $g / $nic")
        macro "${name}Gpus" "$n"
        macro "${name}Flat" "$(duration "$flat")"
        macro "${name}Inside" "$(duration "$inside")"
        macro "${name}Across" "$(duration "$across")"
        macro "${name}Hier" "$(duration "$(calc %.17g "$inside + $across")")"
        macro "${name}Speedup" "$(calc %.3g "$flat / ($inside + $across)")"
        macro "${name}FlatNicGB" "$(calc %.3g "2 * ($n - 1) / $n * $S / 1e9")"
        macro "${name}HierNicGB" "$(calc %.3g "2 * ($K - 1) / $K * $S / $g / 1e9")"
    done
} > "$out/11-ex3-derived.tex"

# The same all-reduces as the planner prices them (fleet allreduce), with
# each ring step's latency, at 80 % of the links' rates; with NCCL's flat
# answer beside them, g rings at once, one on each NIC of a node (the
# "rails"); and for a bucket of 25 MB on 1,024 GPUs.
for run in 16:2e9:Two 128:2e9:Sixteen 1024:2e9:Big 1024:25e6:Bucket; do
    n=${run%%:*} rest=${run#*:}
    bytes=${rest%%:*} name="SolElevenC${run##*:}Fleet"
    $fleet allreduce --gpus $n --bytes $bytes --link-efficiency 0.8 \
        --latex "$name" --output "$out/11-ex3-$n-$bytes.tex"
    $fleet allreduce --gpus $n --bytes $bytes --link-efficiency 0.8 --json \
        --output "$out/11-ex3-$n-$bytes.json"
done
# fastest FILE: which of the three is fastest in FILE.json.
fastest() {
    f="$out/$1.json"
    awk -v flat="$(json "$f" flat_seconds)" \
        -v rails="$(json "$f" rails_seconds)" \
        -v hier="$(json "$f" hierarchical_seconds)" 'BEGIN {
            print (rails < flat && rails < hier) ? "rails" \
                : (hier < flat) ? "hierarchical" : "flat" }'
}
{
    macro SolElevenCRailsFastestTwo \
        "$([ "$(fastest 11-ex3-16-2e9)" = rails ] && echo 1 || echo 0)"
    macro SolElevenCHierFastestBucket \
        "$([ "$(fastest 11-ex3-1024-25e6)" = hierarchical ] && echo 1 || echo 0)"
} >> "$out/11-ex3-derived.tex"
show "$out/11-ex3.txt" "$fleet" allreduce --gpus 128 --bytes 2e9 \
    --link-efficiency 0.8
quote_range "$out/11-ex3.txt" '^hierarchical' '^flat, G rings'

# ---------------------------------------------------------------- 11.4 -----
# How big a bucket: a 2 GB gradient all-reduced over 16 data-parallel ranks
# on the NIC (40 GB/s of bus bandwidth), during a backward pass of 150 ms
# that finishes the gradient at an even rate. A bucket of X bytes is ready
# when the backward pass has produced all of it, and its all-reduce takes
# alpha + 2(d-1)/d X / B, alpha = 2(d-1) ring steps of 10 us; the link does
# one all-reduce at a time, in order. What is exposed is the time from the
# end of the backward pass to the end of the last all-reduce.
{
    awk -v G=2e9 -v d=16 -v B=40e9 -v Tb=0.150 -v step=10e-6 '
    function exposed(X,   n, i, c, done, ready, size) {
        n = int((G + X - 1) / X)
        done = 0
        for (i = 1; i <= n; i++) {
            size = i < n ? X : G - (n - 1) * X
            ready = Tb * (i * X < G ? i * X : G) / G
            c = 2 * (d - 1) * step + 2 * (d - 1) / d * size / B
            done = (done > ready ? done : ready) + c
        }
        count = n
        return done - Tb
    }
    BEGIN {
        split("1 5 25 100 500 2000", mb, " ")
        split("One Five TwentyFive Hundred FiveHundred TwoThousand", w, " ")
        best = -1
        for (k = 1; k <= 6; k++) {
            e = exposed(mb[k] * 1e6)
            printf "\\newcommand{\\SolElevenD%sExposedMs}{%.3g}\n", w[k], e * 1e3
            printf "\\newcommand{\\SolElevenD%sBuckets}{%d}\n", w[k], count
            if (best < 0 || e < best) { best = e; at = mb[k] }
        }
        printf "\\newcommand{\\SolElevenDBestMB}{%d}\n", at
        printf "\\newcommand{\\SolElevenDAlphaUs}{%.3g}\n", 2 * (d - 1) * step * 1e6
        printf "\\newcommand{\\SolElevenDCommMs}{%.3g}\n", 2 * (d - 1) / d * G / B * 1e3
    }'
} > "$out/11-ex4-derived.tex"

# ---------------------------------------------------------------- 11.5 -----
# Which layout, and why: a 13B-class model (hidden 5,120, 40 heads, 40
# layers) on 16 H100 in two nodes of 8, first with the planner's default
# batch of 2,097,152 tokens (512 sequences), then with 16 sequences (65,536
# tokens). For each batch: the planner's best, the best without a pipeline
# (--pp 1), the best with 4 stages (--pp 4) and the best with eight-way
# tensor parallelism (--tp 8), each one's distance behind the best; and the
# ranking's head as a reader sees it.
ex5="--params 13e9 --hidden 5120 --heads 40 --layers 40 --gpus 16"
for batch in big:Big:2097152 small:Small:65536; do
    b=${batch%%:*} B=E$(echo $batch | cut -d: -f2) tokens=${batch##*:}
    layout SolEleven$B 11-ex5-$b $ex5 --batch-tokens $tokens
    layout SolEleven${B}Flat 11-ex5-$b-flat $ex5 --batch-tokens $tokens \
        --pp 1
    layout SolEleven${B}Piped 11-ex5-$b-piped $ex5 \
        --batch-tokens $tokens --pp 4
    layout SolEleven${B}TpEight 11-ex5-$b-tp8 $ex5 \
        --batch-tokens $tokens --tp 8
    show "$out/11-ex5-$b.txt" "$fleet" layout $ex5 \
        --batch-tokens $tokens --top 4
    quote_range "$out/11-ex5-$b.txt" '^   layout' '^ 4 '
done
{
    for b in big:Big small:Small; do
        for run in flat:Flat piped:Piped tp8:TpEight; do
            macro "SolElevenE${b#*:}${run#*:}Behind" "$(calc %.3g "100 * ($(best \
                11-ex5-${b%%:*}-${run%%:*} step_time_s) / $(best \
                11-ex5-${b%%:*} step_time_s) - 1)")\\,\\%"
        done
    done
} > "$out/11-ex5-derived.tex"

# ---------------------------------------------------------------- 11.6 -----
# A slow step, diagnosed: the default model with 4 layers on 2 pipeline
# stages, the batch of 8 sequences as 1 micro-batch and as 4, 12 steps
# each, the ranks pinned to cores where there are two. Each run's
# step_breakdown (the mean over the timed steps and the ranks) from its
# JSON; the part whose difference between the two runs is largest is
# chosen by awk, never assumed; the bubble's share of each step beside the
# closed form (p-1)/(m+p-1).
bind=$([ "$(nproc)" -ge 2 ] && echo -bind-to core || true)
for m in 1 4; do
    mpiexec $bind -n 2 "$bin/minigpt" --layers 4 --pp 2 --micro-batches $m \
        --steps 12 --eval-every 1000 --quiet --machine "$1/machine.json" \
        --json --output "$out/11-ex6-m$m.json"
done
parts="compute_s exposed_comm_s_tp exposed_comm_s_pp exposed_comm_s_dp
       bubble_s optimizer_s other_s"
# part M KEY: step_breakdown_KEY of the run with M micro-batches.
part() {
    json "$out/11-ex6-m$1.json" "step_breakdown_$2"
}
{
    for m in 1:One 4:Four; do
        n="SolElevenF${m#*:}" M=${m%%:*}
        sum=0
        for k in $parts; do
            v=$(part $M $k)
            sum=$(calc %.17g "$sum + $v")
            case $k in
                compute_s) K=Compute ;; exposed_comm_s_tp) K=Tp ;;
                exposed_comm_s_pp) K=Pp ;; exposed_comm_s_dp) K=Dp ;;
                bubble_s) K=Bubble ;; optimizer_s) K=Optimizer ;;
                other_s) K=Other ;;
            esac
            macro "$n$K" "$(duration "$v")"
        done
        step=$(part $M step_s)
        macro "${n}Step" "$(duration "$step")"
        macro "${n}Sum" "$(duration "$sum")"
        macro "${n}BubbleShare" "$(calc %.3g \
            "100 * $(part $M bubble_s) / $step")\\,\\%"
        macro "${n}Closed" "$(calc %.3g "100 * 1 / ($M + 1)")\\,\\%"
    done
    macro SolElevenFSlowdown "$(calc %.3g "$(part 1 step_s) / $(part 4 step_s)")"
    # the part that differs most, and the one that differs next
    for k in $parts; do
        echo "$k $(calc %.17g "$(part 1 $k) - $(part 4 $k)")"
    done | awk '
        function abs(x) { return x < 0 ? -x : x }
        { d[$1] = $2; if (abs($2) > abs(most)) { most = $2; which = $1 } }
        END {
            for (k in d) if (k != which && abs(d[k]) > abs(next_)) {
                next_ = d[k]; second = k }
            printf "\\newcommand{\\SolElevenFBiggestIsBubble}{%d}\n",
                which == "bubble_s"
            printf "\\newcommand{\\SolElevenFBiggest}{%s}\n", name(which)
            printf "\\newcommand{\\SolElevenFSecond}{%s}\n", name(second)
            printf "\\newcommand{\\SolElevenFSecondGrew}{%d}\n", (next_ < 0)
            printf "\\newcommand{\\SolElevenFSecondKind}{%d}\n",
                second == "bubble_s" ? 2 : \
                (second == "compute_s" || second == "exposed_comm_s_pp")
            printf "\\newcommand{\\SolElevenFBubbleFell}{%d}\n",
                (d["bubble_s"] > 0)
        }
        function name(k) {
            return k == "compute_s" ? "compute" \
                 : k == "bubble_s" ? "the bubble" \
                 : k == "optimizer_s" ? "the optimizer" \
                 : k == "other_s" ? "the rest" \
                 : "exposed " toupper(substr(k, 14, 2)) " time"
        }'
} > "$out/11-ex6-derived.tex"
