# usage: sh solutions/10-pipeline.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 10 (pipeline parallelism).
# Exercise N writes fleet's macros to BUILD_DIR/solutions/10-exN*.tex (named
# \SolTen<letter><run><Field>, A for exercise 10.1, B for 10.2, and so on),
# fleet's JSON to 10-exN*.json, what it prints, under the command, to
# 10-exN*.txt, and its per-stage CSV (--stages, --trace) to 10-exN*.csv.
# What fleet does not print itself (a sum over stages, a count of sends in a
# trace, a ratio of two runs, a share of FLOPs) is one line of awk on its
# output or on the exercise's inputs, written as macros into
# 10-exN-derived.tex, so that no answer is typed by hand. Exercise 10.8 runs
# the lab's autograder on the lab's solution. tests/10-solutions.t redoes
# the arithmetic in Perl from the closed forms of the chapter.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

# pipe NAME FILE FLAGS...: one run of fleet pipeline, four ways: macros with
# the prefix NAME into FILE.tex, JSON into FILE.json, what a reader sees at
# a terminal into FILE.txt, and each stage's warm-up and peak in flight into
# FILE-stages.csv.
pipe() {
    name=$1 file=$2
    shift 2
    $fleet pipeline "$@" --latex "$name" --output "$out/$file.tex"
    $fleet pipeline "$@" --json --output "$out/$file.json"
    $fleet pipeline "$@" --stages --output "$out/$file-stages.csv"
    show "$out/$file.txt" "$fleet" pipeline "$@"
}

# bubble FLAGS...: the simulated bubble, a fraction of the step.
bubble() {
    $fleet pipeline "$@" --json --output "$out/10-bubble.json"
    json "$out/10-bubble.json" bubble
}

# column FILE STAGE FIELD: a field of one stage's row of a --stages CSV
# (stage,warmup,peak_in_flight,in_flight_predicted).
column() {
    awk -F, -v r="$2" -v f="$3" \
        'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
         $1 == r { print $(at[f]) }' "$1"
}

# total FILE: the peak in flight summed over a --stages CSV's stages.
total() {
    awk -F, 'NR > 1 { s += $3 } END { print s }' "$1"
}

# word N: a number as a macro name can spell it.
word() {
    case $1 in 1) echo One ;; 2) echo Two ;; 3) echo Three ;; 4) echo Four ;;
               5) echo Five ;; 8) echo Eight ;; 16) echo Sixteen ;; esac
}

# ---------------------------------------------------------------- 10.1 -----
# Eight stages, sixteen micro-batches, a backward twice the forward; zb-h1
# with B and W equal halves of it (its default weight share).
ex1="--pp 8 --micro-batches 16"
pipe SolTenAGpipe 10-ex1-gpipe $ex1 --schedule gpipe
pipe SolTenAOneFOneB 10-ex1-1f1b $ex1 --schedule 1f1b
pipe SolTenAInterTwo 10-ex1-inter2 $ex1 --schedule interleaved --chunks 2
pipe SolTenAInterFour 10-ex1-inter4 $ex1 --schedule interleaved --chunks 4
pipe SolTenAZb 10-ex1-zb $ex1 --schedule zb-h1
quote "$out/10-ex1-zb.txt" 'compute per stage'
{
    for run in gpipe:Gpipe 1f1b:OneFOneB inter2:InterTwo inter4:InterFour \
               zb:Zb; do
        csv="$out/10-ex1-${run%%:*}-stages.csv"
        macro "SolTenA${run#*:}PeakFirst" "$(column "$csv" 0 peak_in_flight)"
        macro "SolTenA${run#*:}PeakLast" "$(column "$csv" 7 peak_in_flight)"
    done
} > "$out/10-ex1-derived.tex"

# ---------------------------------------------------------------- 10.2 -----
# The fewest micro-batches whose simulated bubble is under 5 % of the step,
# for 1F1B and zb-h1 on 4, 8 and 16 stages, found by asking fleet: double m
# until the bubble is under 5 %, then halve the interval between the last m
# that was not and the first that was (the bubble falls as m grows). Then
# the data-parallel pipelines that a batch of 1,024 sequences (one a
# micro-batch) feeds, floor(1024 / m).

# least_m P SCHEDULE: the fewest micro-batches with a bubble under 5 %.
least_m() {
    under() {
        awk "BEGIN { exit !($(bubble --pp $1 --micro-batches $3 \
                                      --schedule $2) < 0.05) }"
    }
    high=1
    until under "$1" "$2" $high; do high=$((high * 2)); done
    low=$((high / 2))                       # not under, or 0
    while [ $((high - low)) -gt 1 ]; do
        mid=$(((low + high) / 2))
        if under "$1" "$2" $mid; then high=$mid; else low=$mid; fi
    done
    echo $high
}

: > "$out/10-ex2.tex"
for p in 4 8 16; do
    for s in 1f1b:OneFOneB zb-h1:Zb; do
        m=$(least_m $p ${s%%:*})
        name="SolTenB${s#*:}$(word $p)"
        {
            macro "${name}M" "$m"
            macro "${name}Bubble" "$(calc %.3g \
                "100 * $(bubble --pp $p --micro-batches $m \
                         --schedule ${s%%:*})")\\,\\%"
            macro "${name}Before" "$(calc %.3g \
                "100 * $(bubble --pp $p --micro-batches $((m - 1)) \
                         --schedule ${s%%:*})")\\,\\%"
            macro "${name}Replicas" "$(calc %d "int(1024 / $m)")"
        } >> "$out/10-ex2.tex"
    done
done
rm -f "$out/10-bubble.json"
m=$(sed -n 's/.*{\\SolTenBZbEightM}{\([0-9]*\)}/\1/p' "$out/10-ex2.tex")
show "$out/10-ex2.txt" "$fleet" pipeline --pp 8 --micro-batches "$m" \
    --schedule zb-h1
quote "$out/10-ex2.txt" 'compute per stage'

# ---------------------------------------------------------------- 10.3 -----
# A 175B-class model (hidden 12,288, 96 heads, 96 layers) with TP8 and
# sequence parallelism, one sequence of 4,096 tokens a micro-batch, on 8
# stages of 12 layers, 32 micro-batches: each stage's micro-batches in
# flight and the bytes of the heaviest, by schedule. fleet activations
# knows GPipe, 1F1B and interleaved; zb-h1's micro-batches in flight are
# fleet pipeline's, times the same bytes per layer and layers per stage.
act="--hidden 12288 --heads 96 --seq 4096 --micro-batch 1 --layers 96 --tp 8
     --sequence-parallel --pp 8 --micro-batches 32"
for s in gpipe:Gpipe 1f1b:OneFOneB; do
    $fleet activations $act --schedule ${s%%:*} --latex "SolTenC${s#*:}" \
        --output "$out/10-ex3-${s%%:*}.tex"
    $fleet activations $act --schedule ${s%%:*} --json \
        --output "$out/10-ex3-${s%%:*}.json"
done
$fleet activations $act --schedule interleaved --chunks 2 \
    --latex SolTenCInter --output "$out/10-ex3-interleaved.tex"
$fleet activations $act --schedule interleaved --chunks 2 --json \
    --output "$out/10-ex3-interleaved.json"
show "$out/10-ex3.txt" "$fleet" activations $act --schedule 1f1b
# The last stage's row of the table (stage, layers, in flight, activations,
# GPU total, both in GB): what it holds besides its activations.
last_row=$(awk '$1 == 7 && $2 == 12 && $5 == "GB" && $7 == "GB" { print $4, $6 }' \
               "$out/10-ex3.txt")
test -n "$last_row"
quote_range "$out/10-ex3.txt" '^8 stages' 'GPipe'
for s in 1f1b zb-h1; do
    $fleet pipeline --pp 8 --micro-batches 32 --schedule $s --stages \
        --output "$out/10-ex3-$s-stages.csv"
done
{
    j="$out/10-ex3-1f1b.json"
    layer=$(json "$j" bytes_per_layer) layers=$(json "$j" heaviest_stage_layers)
    zb="$out/10-ex3-zb-h1-stages.csv" one="$out/10-ex3-1f1b-stages.csv"
    macro SolTenCLayerMB "$(calc %.4g "$layer / 1e6")"
    macro SolTenCStageLayers "$layers"
    macro SolTenCZbFirst "$(column "$zb" 0 peak_in_flight)"
    macro SolTenCZbLast "$(column "$zb" 7 peak_in_flight)"
    macro SolTenCOneFOneBLast "$(column "$one" 7 peak_in_flight)"
    macro SolTenCZbStageGB "$(calc %.3g \
        "$(column "$zb" 0 peak_in_flight) * $layers * $layer / 1e9")"
    macro SolTenCZbLastGB "$(calc %.3g \
        "$(column "$zb" 7 peak_in_flight) * $layers * $layer / 1e9")"
    macro SolTenCOneFOneBLastGB "$(calc %.3g \
        "$(column "$one" 7 peak_in_flight) * $layers * $layer / 1e9")"
    macro SolTenCOneFOneBPipelineGB "$(calc %.3g \
        "$(total "$one") * $layers * $layer / 1e9")"
    macro SolTenCZbPipelineGB "$(calc %.3g \
        "$(total "$zb") * $layers * $layer / 1e9")"
    macro SolTenCOneFOneBHeld "$(total "$one")"
    last_act=${last_row% *} last_total=${last_row#* }
    macro SolTenCLastOtherGB "$(calc %.3g "$last_total - $last_act")"
    macro SolTenCZbLastGpuGB "$(calc %.3g "$last_total - $last_act + \
        $(column "$zb" 7 peak_in_flight) * $layers * $layer / 1e9")"
    macro SolTenCZbHeld "$(total "$zb")"
    macro SolTenCTotalRatio "$(calc %.3g "$(total "$zb") / $(total "$one")")"
    for s in gpipe:Gpipe 1f1b:OneFOneB interleaved:Inter; do
        j="$out/10-ex3-${s%%:*}.json"
        macro "SolTenC${s#*:}ActGB" "$(calc %.3g "$(json "$j" activation_bytes) / 1e9")"
        macro "SolTenC${s#*:}GpuGB" "$(calc %.3g "$(json "$j" bytes_per_gpu) / 1e9")"
    done
} > "$out/10-ex3-derived.tex"

# ---------------------------------------------------------------- 10.4 -----
# The weight gradient's share of a block's backward, from the chapter's
# count of a block's FLOPs per token: forward 24 h^2 + 4 s h; backward the
# input gradients 24 h^2 + 8 s h and the weight gradients 24 h^2, so W's
# share is 24 h^2 / (48 h^2 + 8 s h) = 3 h / (6 h + s). Four shapes, each
# on 8 stages with 32 micro-batches, beside 1F1B.
pipe SolTenDOneFOneB 10-ex4-1f1b --pp 8 --micro-batches 32 --schedule 1f1b
k=0
for shape in 12288:4096 4096:4096 4096:32768 4096:131072; do
    k=$((k + 1))
    h=${shape%%:*} s=${shape#*:}
    share=$(calc %.4f "3 * $h / (6 * $h + $s)")
    name="SolTenD$(word $k)"
    pipe "$name" "10-ex4-$k" --pp 8 --micro-batches 32 --schedule zb-h1 \
        --weight-share "$share"
    {
        macro "${name}Hidden" "$(grouped "$h")"
        macro "${name}Seq" "$(grouped "$s")"
        macro "${name}Share" "$share"
        macro "${name}IdleRatio" "$(calc %.3g "$(json "$out/10-ex4-$k.json" idle) \
            / $(json "$out/10-ex4-1f1b.json" idle)")"
        macro "${name}Gain" "$(calc %.3g "$(json "$out/10-ex4-1f1b.json" bubble) \
            / $(json "$out/10-ex4-$k.json" bubble)")"
    } >> "$out/10-ex4-derived.tex.part"
done
mv "$out/10-ex4-derived.tex.part" "$out/10-ex4-derived.tex"
quote "$out/10-ex4-3.txt" 'compute per stage'

# ---------------------------------------------------------------- 10.5 -----
# Two designs. A: the pipeline of 10.3 (memory-bound), whose bubbles at 32
# micro-batches come from 10.4 (1F1B, and zb-h1 at that model's share) and
# one more run (interleaved, two chunks). B: a 13B-class model (40 layers,
# hidden 5,120, 40 heads) on 4 stages of 10 layers with only 8
# micro-batches a pipeline, TP8 with sequence parallelism: bubble-bound.
pipe SolTenEAInter 10-ex5-a-inter --pp 8 --micro-batches 32 \
    --schedule interleaved --chunks 2
shareB=$(calc %.4f "3 * 5120 / (6 * 5120 + 4096)")
pipe SolTenEBOneFOneB 10-ex5-b-1f1b --pp 4 --micro-batches 8 --schedule 1f1b
pipe SolTenEBInterTwo 10-ex5-b-inter2 --pp 4 --micro-batches 8 \
    --schedule interleaved --chunks 2
pipe SolTenEBInterFive 10-ex5-b-inter5 --pp 4 --micro-batches 8 \
    --schedule interleaved --chunks 5
pipe SolTenEBZb 10-ex5-b-zb --pp 4 --micro-batches 8 --schedule zb-h1 \
    --weight-share "$shareB"
quote "$out/10-ex5-b-inter5.txt" 'compute per stage'
actB="--hidden 5120 --heads 40 --layers 40 --seq 4096 --micro-batch 1 --tp 8
      --sequence-parallel --pp 4 --micro-batches 8"
$fleet activations $actB --schedule interleaved --chunks 5 --latex SolTenEBMem \
    --output "$out/10-ex5-b-mem.tex"
$fleet activations $actB --schedule interleaved --chunks 5 --json \
    --output "$out/10-ex5-b-mem.json"
{
    macro SolTenEBShare "$shareB"
    macro SolTenEBGpuGB "$(calc %.3g \
        "$(json "$out/10-ex5-b-mem.json" bytes_per_gpu) / 1e9")"
} > "$out/10-ex5-derived.tex"

# ---------------------------------------------------------------- 10.6 -----
# The LM head on the last stage: 32 layers of hidden 4,096, a vocabulary of
# 128,256, sequences of 4,096, on 8 stages. Per token, a block's forward is
# 24 h^2 + 4 s h FLOPs and the head's 2 h V; the last stage holds 4 blocks
# and the head. Rebalanced: the last stage keeps k blocks (k = 0 .. 4) and
# the other seven share the rest, as evenly as whole layers allow; the k
# whose slowest stage is the fastest wins (the larger k on a tie).
{
    L=32 h=4096 V=128256 s=4096 p=8
    block=$(calc %.17g "24 * $h * $h + 4 * $s * $h")
    head=$(calc %.17g "2 * $h * $V")
    blocks=$(calc %.17g "$head / $block")
    per=$((L / p))
    macro SolTenFBlockMFLOP "$(calc %.4g "$block / 1e6")"
    macro SolTenFHeadMFLOP "$(calc %.4g "$head / 1e6")"
    macro SolTenFHeadBlocks "$(calc %.3g "$blocks")"
    macro SolTenFStageBlocks "$per"
    macro SolTenFLastBlocks "$(calc %.3g "$per + $blocks")"
    macro SolTenFSlowdown "$(calc %.3g "($per + $blocks) / $per")"
    macro SolTenFIdleShare "$(calc %.3g "100 * (1 - $per / ($per + $blocks))")\\,\\%"
    macro SolTenFIdeal "$(calc %.3g "($L + $blocks) / $p")"
    awk -v L=$L -v p=$p -v head="$blocks" -v per=$per 'BEGIN {
        best = -1
        for (k = 0; k <= per; k++) {
            rest = L - k; others = int((rest + p - 2) / (p - 1))
            slowest = k + head > others ? k + head : others
            if (best < 0 || slowest <= best_slowest) { best = k; best_slowest = slowest }
        }
        others = int((L - best + p - 2) / (p - 1))
        printf "\\newcommand{\\SolTenFBestLast}{%d}\n", best
        printf "\\newcommand{\\SolTenFBestLastLoad}{%.3g}\n", best + head
        printf "\\newcommand{\\SolTenFBestMoved}{%d}\n", per - best
        printf "\\newcommand{\\SolTenFBestOthers}{%d}\n", others
        printf "\\newcommand{\\SolTenFBestSlowest}{%.3g}\n", best_slowest
        printf "\\newcommand{\\SolTenFSpeedup}{%.3g}\n", (per + head) / best_slowest
    }'
} > "$out/10-ex6-derived.tex"

# ---------------------------------------------------------------- 10.7 -----
# Interleaving's messages: 4 stages, 8 micro-batches, v = 1, 2 and 4. In the
# timeline, a forward on virtual stage c p + r sends its output on unless it
# is the last virtual stage, and a backward sends its gradient back unless
# it is the first; each send is one micro-batch's activations, b s h in
# bf16 (hidden 4,096, one sequence of 4,096). Then the bubbles when a send
# takes a tenth and a quarter of a forward.
bytes=$(calc %.17g "1 * 4096 * 4096 * 2")
for v in 1 2 4; do
    if [ $v = 1 ]; then sched="--schedule 1f1b"
    else sched="--schedule interleaved --chunks $v"; fi
    $fleet pipeline --pp 4 --micro-batches 8 $sched --trace \
        --output "$out/10-ex7-$v.csv"
    name="SolTenG$(word $v)"
    awk -F, -v p=4 -v v=$v -v name="$name" -v bytes="$bytes" 'NR > 1 {
            s = $4 * p + $1
            if (($2 == "forward" && s < v * p - 1) || ($2 == "backward" && s > 0))
                sent[$1]++
        } END {
            for (r = 0; r < p; r++) { total += sent[r]; if (sent[r] > most) most = sent[r] }
            printf "\\newcommand{\\%sSends}{%d}\n", name, total
            printf "\\newcommand{\\%sStageSends}{%d}\n", name, most
            printf "\\newcommand{\\%sFirstSends}{%d}\n", name, sent[0]
            printf "\\newcommand{\\%sStageGB}{%.3g}\n", name, most * bytes / 1e9
        }' "$out/10-ex7-$v.csv"
    $fleet pipeline --pp 4 --micro-batches 8 $sched --latex "${name}Zero" \
        --output "$out/10-ex7-$v-0.tex"
    for x in 0.1:Tenth 0.25:Quarter; do
        $fleet pipeline --pp 4 --micro-batches 8 $sched --p2p-seconds ${x%%:*} \
            --latex "$name${x#*:}" --output "$out/10-ex7-$v-${x%%:*}.tex"
    done
done > "$out/10-ex7-derived.tex"
{
    macro SolTenGSendMB "$(calc %.4g "$bytes / 1e6")"
} >> "$out/10-ex7-derived.tex"

# ---------------------------------------------------------------- 10.8 -----
# The lab's solution graded by the lab's autograder; and the zero-bubble
# schedule's order of stage 1 for the same pipeline (4 stages, 6
# micro-batches), from fleet pipeline's timeline, and its peaks in flight.
make --no-print-directory -s lab LAB=1f1b WORK=solutions/labs/1f1b \
    > "$out/10-ex8.txt"
grep -q '^lab-1f1b: OK$' "$out/10-ex8.txt"
$fleet pipeline --pp 4 --micro-batches 6 --schedule zb-h1 --trace \
    --output "$out/10-ex8-zb.csv"
$fleet pipeline --pp 4 --micro-batches 6 --schedule zb-h1 --stages \
    --output "$out/10-ex8-zb-stages.csv"
$fleet pipeline --pp 4 --micro-batches 6 --schedule 1f1b --stages \
    --output "$out/10-ex8-1f1b-stages.csv"
{
    macro SolTenHScore "$(sed -n 's/^score: //p' "$out/10-ex8.txt")"
    macro SolTenHStageOne "$(sed -n 's/^  stage 1: //p' "$out/10-ex8.txt")"
    macro SolTenHWarmupOne "$(column "$out/10-ex8-1f1b-stages.csv" 1 warmup)"
    macro SolTenHZbStageOne "$(awk -F, '$1 == 1 {
            printf "%s%s%d", n++ ? " " : "", toupper(substr($2, 1, 1)), $3
        }' "$out/10-ex8-zb.csv")"
    for r in 0 1 2 3; do
        macro "SolTenHZbPeak$(word $((r + 1)))" \
            "$(column "$out/10-ex8-zb-stages.csv" $r peak_in_flight)"
    done
} > "$out/10-ex8-derived.tex"
quote_lines "$out/10-ex8.txt" \
    '^(lab-1f1b|  m = |  (PASS|FAIL)|  stage|the order|order|score)'

# ---------------------------------------------------------------- 10.9 -----
# The trainer's own slots: one step of the default model with 4 layers on 4
# stages (one layer each), 8 micro-batches of one sequence, under GPipe,
# 1F1B and zb-h1; each stage's measured peak of micro-batches in flight and
# the bytes of one slot, from its JSON. zb-h1 keeps, per layer and
# micro-batch, the output gradients of the block's four products until W
# runs: 3C + C + 4C + C = 9C numbers per token. Then --verify of zb-h1.
layers=4 stages=4
for s in gpipe:Gpipe 1f1b:OneFOneB zb-h1:Zb; do
    mpiexec -n $stages "$bin/minigpt" --layers $layers --pp $stages \
        --schedule ${s%%:*} --micro-batches 8 --steps 1 --eval-every 1000 \
        --quiet --machine "$1/machine.json" --json \
        --output "$out/10-ex9-${s%%:*}.json"
done
mpiexec -n $stages "$bin/minigpt" --layers $layers --pp $stages \
    --schedule zb-h1 --micro-batches 8 --verify --output "$out/10-ex9-verify.out"
grep -q ': OK$' "$out/10-ex9-verify.out"
{
    echo "\$ mpiexec -n $stages minigpt --layers $layers --pp $stages \\"
    echo "      --schedule zb-h1 --micro-batches 8 --verify"
    grep -E '^verify: (max|after|tolerance)' "$out/10-ex9-verify.out"
} > "$out/10-ex9-verify.txt"
rm -f "$out/10-ex9-verify.out"
# peaks FILE: the peaks in flight by stage, "4,3,2,1", under the name the
# trainer's report gives them.
peaks() {
    # each stage's measured peak: "2 1" in the report, "2,1" here
    sed -n 's/^ *"peak_inflight_per_stage": "\([0-9 ]*\)",\{0,1\}$/\1/p' \
        "$1" | head -n 1 | tr ' ' ','
}
{
    j="$out/10-ex9-zb-h1.json"
    b=$(json "$j" micro_batch) tokens=$(json "$j" seq) h=$(json "$j" hidden)
    macro SolTenIShape "$b, $tokens, $h"
    macro SolTenIStageLayers "$((layers / stages))"
    macro SolTenIExtraPredicted "$(grouped "$(calc %d \
        "9 * $b * $tokens * $h * 4 * $layers / $stages")")"
    macro SolTenIExtra "$(grouped "$(calc %d "$(json "$j" slot_bytes) \
        - $(json "$out/10-ex9-1f1b.json" slot_bytes)")")"
    for s in gpipe:Gpipe 1f1b:OneFOneB zb-h1:Zb; do
        j="$out/10-ex9-${s%%:*}.json" n="SolTenI${s#*:}"
        p=$(peaks "$j")
        test -n "$p"
        macro "${n}Peaks" "$(echo "$p" | sed 's/,/, /g')"
        macro "${n}SlotBytes" "$(grouped "$(json "$j" slot_bytes)")"
        macro "${n}FirstKB" "$(calc %.4g "${p%%,*} * $(json "$j" slot_bytes) / 1e3")"
        macro "${n}LastKB" "$(calc %.4g "${p##*,} * $(json "$j" slot_bytes) / 1e3")"
    done
} > "$out/10-ex9-derived.tex"
