# usage: sh solutions/04-activations.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 4 (activation memory).
# Exercise N writes its transcripts to BUILD_DIR/solutions/04-exN*.txt and
# the numbers its prose needs to BUILD_DIR/solutions/04-exN*.tex, as LaTeX
# macros named \SolAct<letter><run><Field> (A for exercise 4.1, B for 4.2,
# and so on). Numbers that are arithmetic on fleet's answers (a share, a
# ratio, a fitted coefficient) are computed here from its JSON.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"
minigpt="$bin/minigpt"
machine="$1/machine.json"    # one core's peak, as the build measured it

# run PREFIX FILE FLAGS...: fleet activations with FLAGS, as macros \PREFIX...
# in FILE.tex and as JSON in FILE.json.
run() {
    prefix=$1 file=$2
    shift 2
    "$fleet" activations "$@" --latex "$prefix" --output "$out/$file.tex"
    "$fleet" activations "$@" --json --output "$out/$file.json"
}

# The running example's two designs (Chapter 5 defines them).
a="--tp 8 --sequence-parallel --dp 128 --zero 3"
pipeline="--tp 8 --sequence-parallel --pp 8 --micro-batch 1 --dp 16 --zero 1"
b="$pipeline --micro-batches 32"

# Exercise 4.1: hidden 16,384, 128 heads, 8,192 tokens, TP8.
wide="--hidden 16384 --heads 128 --seq 8192 --micro-batch 1 --tp 8
      --layers 126"
show "$out/04-ex1.txt" "$fleet" activations $wide --sequence-parallel \
     --recompute selective
quote_range "$out/04-ex1.txt" '^bytes one layer' '^  this run'
run SolActA 04-ex1 $wide --sequence-parallel
ratio=$(json "$out/04-ex1.json" score_ratio)
{
    macro SolActAScoreShare "$(calc '%.1f' "100 * $ratio / (34 + $ratio)")\\,\\%"
} > "$out/04-ex1-share.tex"

# Exercise 4.2: 16,384 against 16,000 tokens, and GiB.
run SolActB 04-ex2 --tp 8
run SolActBApprox 04-ex2-approx --tp 8 --seq 4000
exact=$(json "$out/04-ex2.json" bytes_per_layer_without_scores)
approx=$(json "$out/04-ex2-approx.json" bytes_per_layer_without_scores)
{
    macro SolActBGap "$(calc '%.1f' "100 * ($exact - $approx) / $exact")\\,\\%"
    macro SolActBGib "$(calc '%.2f' "$exact / 1073741824")\\,GiB"
} > "$out/04-ex2-gap.tex"

# Exercise 4.3: 126 layers on 16 stages (a Llama 3 405B shape).
llama="--hidden 16384 --heads 128 --kv-heads 8 --ffn 53248 --gated --seq 8192
       --micro-batch 1 --vocab 128000 --layers 126 --tp 8 --sequence-parallel
       --recompute selective --pp 16 --micro-batches 16 --dp 128 --zero 1"
show "$out/04-ex3.txt" "$fleet" activations $llama
quote_range "$out/04-ex3.txt" ' parameters each' '^    GPipe'
run SolActC 04-ex3 $llama

# Exercise 4.4: design B without recomputation under GPipe, and the most
# micro-batches that fit.
# Exercises 4.4, 4.6 and 4.7 are set with attention that writes its scores.
mat="--attention materialized"
run SolActD 04-ex4 $b $mat --recompute none --schedule gpipe
run SolActDPlain 04-ex4-plain $b $mat --recompute none
most=0
m=1
while [ $m -le 32 ]; do
    "$fleet" activations $pipeline $mat --recompute none --schedule gpipe \
        --micro-batches $m --json --output "$out/04-ex4-m.json"
    if [ "$(json "$out/04-ex4-m.json" fits)" = 1 ]; then most=$m; fi
    m=$((m + 1))
done
rm -f "$out/04-ex4-m.json"
test "$most" -gt 0
run SolActDMost 04-ex4-most $pipeline $mat --recompute none --schedule gpipe \
    --micro-batches "$most"
{
    macro SolActDMostMicroBatches "$most"
    macro SolActDBubble "$(calc '%.0f' "100 * 7 / $most")\\,\\%"
    macro SolActDBubbleOneFOneB "$(calc '%.0f' "100 * 7 / 32")\\,\\%"
} > "$out/04-ex4-bubble.tex"

# Exercise 4.5: interleaving with 2 and 4 chunks per rank, against 1F1B.
run SolActEPlain 04-ex5-plain $b --recompute selective
run SolActETwo 04-ex5-two $b --recompute selective --schedule interleaved \
    --chunks 2
run SolActEFour 04-ex5-four $b --recompute selective --schedule interleaved \
    --chunks 4
{
    macro SolActEFirstTwo "$(calc '%g' "8 + 7 / 2")"
    macro SolActEFirstFour "$(calc '%g' "8 + 7 / 4")"
} > "$out/04-ex5-first.tex"

# Exercise 4.6: design A's 16,384 tokens, five ways.
run SolActFNone 04-ex6-none $a $mat --recompute none
run SolActFSelective 04-ex6-selective $a $mat --recompute selective
run SolActFFull 04-ex6-full $a $mat --recompute full
run SolActFTwo 04-ex6-two $a $mat --recompute none --micro-batch 2
run SolActFOne 04-ex6-one $a $mat --recompute none --micro-batch 1
# Selective recomputation repeats the score FLOPs: the hardware count's
# s/(3h) against the model count's s/(6h) (Korthikanti et al., appendix A),
# at L = 55 and V = 50,304; full recomputation repeats the forward pass, 2 of
# every 6 FLOPs.
layers=$(json "$out/04-ex6-selective.json" layers)
{
    scores="4096 / (6 * 12288)" head="50304 / (12 * 12288 * $layers)"
    macro SolActFSelectiveExtra \
        "$(calc '%.1f' "100 * ($scores) / (1 + $scores + $head)")\\,\\%"
    macro SolActFFullExtra "$(calc '%.0f' "100 * 2 / 6")\\,\\%"
} > "$out/04-ex6-extra.tex"

# Exercise 4.7: six sequences per micro-batch at design A.
show "$out/04-ex7.txt" "$fleet" activations $a $mat --recompute selective \
     --micro-batch 6
quote_range "$out/04-ex7.txt" '^per GPU' '^$^'

run SolActG 04-ex7 $a $mat --recompute selective --micro-batch 6
state=$(json "$out/04-ex7.json" state_bytes)
stored=$(json "$out/04-ex7.json" stored_activation_bytes)
{
    macro SolActGPaper "$(calc '%.1f' "($state + $stored) / 1e9")\\,GB"
} > "$out/04-ex7-paper.tex"

# Exercise 4.8 (lab): minigpt's activation bytes per layer at three shapes,
# fitted to alpha sbh + beta a s^2 b + gamma sb with b = 8, a = 4.
lab() {
    "$minigpt" --layers 2 --heads 4 --batch 8 --steps 1 --quiet \
        --machine "$machine" --hidden "$1" --seq "$2" --json --output "$out/04-ex8-$1-$2.json"
    json "$out/04-ex8-$1-$2.json" activation_bytes_per_layer
}
m11=$(lab 64 64)
m21=$(lab 128 64)
m12=$(lab 64 128)
m22=$(lab 128 128)
alpha=$(calc '%.6g' "($m21 - $m11) / (64 * 8 * 64)")
# With alpha known, the rest at (64, s) is beta a s^2 b + gamma s b.
rest11="($m11 - $alpha * 64 * 8 * 64) / (64 * 8)"       # beta a s + gamma
rest12="($m12 - $alpha * 64 * 8 * 128) / (128 * 8)"
beta=$(calc '%.6g' "($rest12 - $rest11) / (4 * 64)")
gamma=$(calc '%.6g' "$rest11 - $beta * 4 * 64")
check=$(calc '%.0f' \
    "$alpha * 128 * 8 * 128 + $beta * 4 * 128 * 128 * 8 + $gamma * 128 * 8")
{
    macro SolActHSmall "$(grouped "$m11")"
    macro SolActHWide "$(grouped "$m21")"
    macro SolActHLong "$(grouped "$m12")"
    macro SolActHBoth "$(grouped "$m22")"
    macro SolActHAlpha "$alpha"
    macro SolActHBeta "$beta"
    macro SolActHGamma "$gamma"
    macro SolActHPredicted "$(grouped "$check")"
} > "$out/04-ex8.tex"
