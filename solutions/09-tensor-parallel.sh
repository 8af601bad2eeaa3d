# usage: sh solutions/09-tensor-parallel.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 9 (tensor parallelism).
# Exercise N writes fleet's macros to BUILD_DIR/solutions/09-exN*.tex (named
# \SolNine<letter><run><Field>, A for exercise 9.1, B for 9.2, and so on),
# fleet's JSON to 09-exN*.json and what it prints, under the command, to
# 09-exN*.txt. What fleet does not print itself (a limit, a ratio of two of
# its runs, the count of collectives) is one line of awk on its JSON or on
# the exercise's inputs, written as macros into 09-exN-derived.tex, so that
# no answer is typed by hand. Exercise 9.6 runs the lab's autograder on the
# lab's solution and reads its shapes from what the autograder printed;
# exercise 9.7 runs minigpt --tp, and where this build's minigpt has no
# --tp yet it says so instead. tests/09-solutions.t redoes the arithmetic in
# Perl from the formulas of the chapter.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

# tp NAME FILE FLAGS...: one run of fleet tp, three ways: macros with the
# prefix NAME into FILE.tex, JSON into FILE.json, and what a reader sees at
# a terminal into FILE.txt.
tp() {
    name=$1 file=$2
    shift 2
    $fleet tp "$@" --latex "$name" --output "$out/$file.tex"
    $fleet tp "$@" --json --output "$out/$file.json"
    show "$out/$file.txt" "$fleet" tp "$@"
}

# word N: a number as a macro name can spell it.
word() {
    case $1 in 1) echo One ;; 2) echo Two ;; 4) echo Four ;; 8) echo Eight ;;
               16) echo Sixteen ;; esac
}

# ---------------------------------------------------------------- 9.1 ------
# Hidden 12,288, one sequence of 4,096 tokens, bf16, on NVLink, t = 2, 4, 8:
# each block all-reduces b s h elements twice forward and twice backward,
# and a ring sends 2(t-1)/t of each. As t grows the bytes approach
# 8 b s h x 2 B per GPU, while the compute falls as 1/t.
h=12288 s=4096 b=1
for t in 2 4 8; do
    tp "SolNineA$(word $t)" "09-ex1-$t" --hidden $h --seq $s --micro-batch $b \
        --tp $t --layers 1
done
quote "$out/09-ex1-8.txt" 'per block'
{
    macro SolNineALimitGB "$(calc %.4g "8 * $b * $s * $h * 2 / 1e9")"
    macro SolNineAAllReduces "$(calc %d "2 + 2")"
    for t in 2 4 8; do
        j="$out/09-ex1-$t.json"
        macro "SolNineA$(word $t)OfLimit" "$(calc %.3g \
            "100 * $(json "$j" bytes_per_block) / (8 * $b * $s * $h * 2)")\\,\\%"
    done
    macro SolNineAComputeRatio "$(calc %.3g \
        "$(json "$out/09-ex1-2.json" compute_seconds_per_block) \
         / $(json "$out/09-ex1-8.json" compute_seconds_per_block)")"
    macro SolNineABytesRatio "$(calc %.3g "(8 - 1) / 8 / ((2 - 1) / 2)")"
    macro SolNineACommRatio "$(calc %.3g \
        "$(json "$out/09-ex1-8.json" comm_seconds_per_block) \
         / $(json "$out/09-ex1-2.json" comm_seconds_per_block)")"
} > "$out/09-ex1-derived.tex"

# ---------------------------------------------------------------- 9.2 ------
# fleet tp's running example (hidden 12,288, 4 x 4,096 tokens, 55 layers):
# TP8 on NVLink, TP8 over the NIC, TP16 across two nodes over the NIC, and
# TP8 with the all-reduce in NVLink's switches.
tp SolNineBNvlink 09-ex2-nvlink --tp 8 --link nvlink
tp SolNineBNic 09-ex2-nic --tp 8 --link nic
tp SolNineBSixteen 09-ex2-sixteen --tp 16 --link nic
tp SolNineBSharp 09-ex2-sharp --tp 8 --link nvlink --in-network
quote "$out/09-ex2-sixteen.txt" 'per block|per micro-batch'
quote "$out/09-ex2-sharp.txt" 'per block'
{
    nv="$out/09-ex2-nvlink.json" six="$out/09-ex2-sixteen.json"
    macro SolNineBLinkRatio "$(calc %.3g \
        "$(json "$nv" link_bandwidth) / $(json "$out/09-ex2-nic.json" link_bandwidth)")"
    macro SolNineBSlowdown "$(calc %.3g \
        "$(json "$six" comm_seconds_per_block) / $(json "$nv" comm_seconds_per_block)")"
    macro SolNineBSixteenStepRatio "$(calc %.3g \
        "($(json "$six" comm_seconds_per_micro_batch) \
          + $(json "$six" compute_seconds_per_micro_batch)) \
         / ($(json "$nv" comm_seconds_per_micro_batch) \
          + $(json "$nv" compute_seconds_per_micro_batch))")"
    macro SolNineBSharpSaving "$(calc %.3g \
        "100 * (1 - $(json "$out/09-ex2-sharp.json" bytes_per_block) \
                  / $(json "$nv" bytes_per_block))")\\,\\%"
} > "$out/09-ex2-derived.tex"

# ---------------------------------------------------------------- 9.3 ------
# A 7B-class model: hidden 4,096, 32 layers, one sequence of 4,096 tokens,
# TP 2, 4 and 8 on NVLink; beside 9.1's hidden 12,288 at the same shape.
for t in 2 4 8; do
    tp "SolNineC$(word $t)" "09-ex3-$t" --hidden 4096 --seq 4096 --micro-batch 1 \
        --tp $t --layers 32
done
quote "$out/09-ex3-8.txt" 'per block'
{
    small="$out/09-ex3-8.json" big="$out/09-ex1-8.json"
    macro SolNineCRatioOfRatios "$(calc %.3g \
        "$(json "$small" comm_compute_ratio) / $(json "$big" comm_compute_ratio)")"
    # Weights of one block, 12 h^2 in bf16, whole and on one of 8 ranks.
    macro SolNineCBlockWeightsMB "$(calc %.4g "12 * 4096 * 4096 * 2 / 1e6")"
    macro SolNineCBlockWeightsEightMB "$(calc %.4g "12 * 4096 * 4096 * 2 / 8 / 1e6")"
    macro SolNineCAllBlocksGB "$(calc %.3g "32 * 12 * 4096 * 4096 * 2 / 1e9")"
} > "$out/09-ex3-derived.tex"

# ---------------------------------------------------------------- 9.4 ------
# Sequence parallelism at TP8, hidden 12,288, 96 heads, one sequence of
# 4,096 tokens, flash attention: the activation bytes one layer keeps, with
# and without; and the collectives: each all-reduce becomes a reduce-scatter
# and an all-gather, each sending (t-1)/t of the buffer, so the bytes do
# not change.
act="--hidden 12288 --heads 96 --seq 4096 --micro-batch 1 --layers 96 --tp 8"
$fleet activations $act --json --output "$out/09-ex4-tp.json"
$fleet activations $act --sequence-parallel --json --output "$out/09-ex4-sp.json"
show "$out/09-ex4-sp.txt" "$fleet" activations $act --sequence-parallel
quote_range "$out/09-ex4-sp.txt" '^bytes one layer' 'this run'
$fleet activations $act --latex SolNineDTp --output "$out/09-ex4-tp.tex"
$fleet activations $act --sequence-parallel --latex SolNineDSp \
    --output "$out/09-ex4-sp.tex"
t=8
{
    j="$out/09-ex1-8.json"
    buffer=$(json "$j" all_reduce_bytes)
    macro SolNineDCollectivesTp "$(calc %d "2 + 2")"
    macro SolNineDCollectivesSp "$(calc %d "2 * (2 + 2)")"
    macro SolNineDSentTpGB "$(calc %.4g "4 * 2 * ($t - 1) / $t * $buffer / 1e9")"
    macro SolNineDSentSpGB "$(calc %.4g "8 * ($t - 1) / $t * $buffer / 1e9")"
    macro SolNineDLayerTpGB "$(calc %.4g "$(json "$out/09-ex4-tp.json" bytes_per_layer) / 1e9")"
    macro SolNineDLayerSpGB "$(calc %.4g "$(json "$out/09-ex4-sp.json" bytes_per_layer) / 1e9")"
    macro SolNineDActTpGB "$(calc %.4g "$(json "$out/09-ex4-tp.json" activation_bytes) / 1e9")"
    macro SolNineDActSpGB "$(calc %.4g "$(json "$out/09-ex4-sp.json" activation_bytes) / 1e9")"
    # The layer's bytes as multiples of s b h, as fleet's table writes them.
    macro SolNineDTpFactor "$(calc %.4g "$(json "$out/09-ex4-tp.json" bytes_per_layer) \
        / $(json "$out/09-ex4-tp.json" sbh)")"
    macro SolNineDSpFactor "$(calc %.4g "$(json "$out/09-ex4-sp.json" bytes_per_layer) \
        / $(json "$out/09-ex4-sp.json" sbh)")"
    macro SolNineDSaving "$(calc %.3g "100 * (1 - $(json "$out/09-ex4-sp.json" bytes_per_layer) \
        / $(json "$out/09-ex4-tp.json" bytes_per_layer))")\\,\\%"
} > "$out/09-ex4-derived.tex"

# ---------------------------------------------------------------- 9.5 ------
# Design: a 175B-class model (hidden 12,288, 96 heads, 96 layers, one
# sequence of 4,096 tokens) on nodes of eight H100s. For t = 4 and 8 on
# NVLink and 16 over the NIC: the collectives against the compute, and the
# 16-byte training state of one tensor-parallel rank, 175e9 / t parameters.
P=175e9
for t in 4 8; do
    tp "SolNineE$(word $t)" "09-ex5-$t" --hidden 12288 --seq 4096 --micro-batch 1 \
        --tp $t --layers 96 --link nvlink
done
tp SolNineESixteen 09-ex5-16 --hidden 12288 --seq 4096 --micro-batch 1 \
    --tp 16 --layers 96 --link nic
for t in 4 8 16; do
    $fleet memory --params "$(calc %.0f "$P / $t")" \
        --latex "SolNineEState$(word $t)" --output "$out/09-ex5-state-$t.tex"
    $fleet memory --params "$(calc %.0f "$P / $t")" --json \
        --output "$out/09-ex5-state-$t.json"
done
{
    macro SolNineEHeads 96
    for t in 4 8 16; do
        macro "SolNineE$(word $t)Heads" "$(calc %d "96 / $t")"
        macro "SolNineE$(word $t)StateGB" "$(calc %.4g \
            "$(json "$out/09-ex5-state-$t.json" static_bytes) / 1e9")"
        # The 80 GB cards the state alone needs, ZeRO or pipeline sharing it.
        macro "SolNineE$(word $t)Cards" "$(calc %.3g \
            "$(json "$out/09-ex5-state-$t.json" static_bytes) \
             / $(json "$out/09-ex5-state-$t.json" usable_bytes_per_gpu)")"
    done
} > "$out/09-ex5-derived.tex"

# ---------------------------------------------------------------- 9.6 ------
# The lab's solution graded by the lab's autograder, and the bytes of its
# collectives at the autograder's shapes, read from what it printed: f's
# all-reduce of din (N, C) in the column layer's backward pass, g's of out
# (N, OC) in the row layer's forward pass, 4-byte floats, a ring sending
# 2(t-1)/t of each.
make --no-print-directory -s lab LAB=tp WORK=solutions/labs/tp \
    > "$out/09-ex6.txt"
grep -q '^lab-tp: OK$' "$out/09-ex6.txt"
shape=$(sed -n 's/^ *N = \([0-9]*\) rows, C = \([0-9]*\) inputs, OC = \([0-9]*\) outputs.*/N=\1 C=\2 OC=\3/p' \
            "$out/09-ex6.txt")
test -n "$shape"
eval "$shape"
{
    macro SolNineFN "$N"
    macro SolNineFC "$C"
    macro SolNineFOC "$OC"
    macro SolNineFScore "$(sed -n 's/^score: //p' "$out/09-ex6.txt")"
    macro SolNineFColumnBytes "$(grouped "$(calc %d "$N * $C * 4")")"
    macro SolNineFRowBytes "$(grouped "$(calc %d "$N * $OC * 4")")"
    for t in 2 4; do
        macro "SolNineF$(word $t)ColumnSent" "$(grouped "$(calc %d "2 * ($t - 1) / $t * $N * $C * 4")")"
        macro "SolNineF$(word $t)RowSent" "$(grouped "$(calc %d "2 * ($t - 1) / $t * $N * $OC * 4")")"
    done
} > "$out/09-ex6-derived.tex"
quote_lines "$out/09-ex6.txt" \
    '^(lab-tp|  N = |  largest|t = |  (PASS|FAIL)  (row +forward|column backward  din)|score)'

# ---------------------------------------------------------------- 9.7 ------
# minigpt --tp: one step of the default model on 2 and 4 ranks, what it
# counts per block against 8 b s h (t-1)/t elements of 4 bytes, where b is
# the micro-batch, s the context and h the hidden size of its JSON.
: > "$out/09-ex7.tex"
for t in 2 4; do
    mpiexec -n $t "$bin/minigpt" --tp $t --quiet --eval-every 1000 --steps 1 \
        --machine "$1/machine.json" --json --output "$out/09-ex7-$t.json"
    j="$out/09-ex7-$t.json"
    b=$(json "$j" micro_batch) s=$(json "$j" seq) h=$(json "$j" hidden)
    {
        macro "SolNineG$(word $t)Collectives" "$(json "$j" tp_collectives_per_block)"
        macro "SolNineG$(word $t)Bytes" "$(grouped "$(json "$j" tp_bytes_per_block)")"
        macro "SolNineG$(word $t)Formula" "$(grouped "$(json "$j" tp_bytes_per_block_formula)")"
        macro "SolNineG$(word $t)Predicted" "$(grouped "$(calc %d "8 * $b * $s * $h * ($t - 1) / $t * 4")")"
        macro "SolNineG$(word $t)Shape" "$b, $s, $h"
    } >> "$out/09-ex7.tex"
done
mpiexec -n 2 "$bin/minigpt" --tp 2 --verify --output "$out/09-ex7-verify.txt"
