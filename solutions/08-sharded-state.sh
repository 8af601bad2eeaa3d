# usage: sh solutions/08-sharded-state.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 8 (sharded state: ZeRO and
# FSDP). Exercise N writes fleet's transcripts to BUILD_DIR/solutions/
# 08-exN*.txt, fleet's macros to BUILD_DIR/solutions/08-exN*.tex (named
# \SolFive<letter><run><Field>, A for exercise 5.1, B for 5.2, and so on) and
# fleet's JSON to BUILD_DIR/solutions/08-exN*.json. What fleet does not print
# itself (a time at a bandwidth, a ratio, a share, the degree that solves an
# inequality) is one line of awk on that JSON, written as a macro into
# BUILD_DIR/solutions/08-exN-derived.tex, so that no answer is typed by hand.
# tests/08-solutions.t redoes all of it in Perl from the ZeRO formulas.
# Exercise 5.8 is conceptual and has no runs.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"




# ceil9 EXPRESSION: the expression rounded up to a whole number, after
# rounding it to nine figures, so that floating-point noise in a quotient
# that is whole (13.000000000000002) cannot add one.
ceil9() {
    awk "BEGIN { q = sprintf(\"%.9g\", $1) + 0; n = int(q); if (n < q) n++;
                 printf \"%d\", n }"
}

# zero NAME FILE FLAGS...: one run of fleet memory, two ways: macros with the
# prefix NAME into FILE.tex and JSON into FILE.json.
zero() {
    name=$1 file=$2
    shift 2
    $fleet memory "$@" --latex "$name" --output "$out/$file.tex"
    $fleet memory "$@" --json --output "$out/$file.json"
}

# transcript FILE FLAGS...: what fleet memory prints, cut to the lines a
# solution quotes, into FILE.txt: the state, what a GPU can give it, and the
# sharded state; and the sharded state alone, from its heading on, into
# FILE-zero.txt (for the solutions that have already shown the state).
transcript() {
    file=$1
    shift
    $fleet memory "$@" --output "$out/$file.txt"
    sed -n -e '/^plain data parallel over /,$p' -e '/^ZeRO stage /,$p' \
        "$out/$file.txt" > "$out/$file-zero.txt"
    test -s "$out/$file-zero.txt"
    quote_lines "$out/$file.txt" '^(static state|usable per GPU)'
    { echo; cat "$out/$file-zero.txt"; } >> "$out/$file.txt"
}

# word STAGE: the stage's number (or, in 5.10, a number of micro-batches) as
# a macro can spell it.
word() {
    case $1 in 0) echo Zero ;; 1) echo One ;; 2) echo Two ;; 3) echo Three ;;
               4) echo Four ;; esac
}

# ---------------------------------------------------------------- 5.1 ------
# A 70e9 model on 64 data-parallel ranks, stages 0 to 3. What stages 1 and 2
# keep whole however many ranks share the rest: the 16-bit weights and
# gradients (stage 1), the weights (stage 2).
for s in 0 1 2 3; do
    zero "SolFiveA$(word $s)" "08-ex1-$s" --params 70e9 --zero $s --dp 64
done
transcript 08-ex1 --params 70e9 --zero 3 --dp 64
{
    j="$out/08-ex1-1.json"
    macro SolFiveAOneReplicated "$(calc %.4g "($(json "$j" weight_bytes_per_device) \
        + $(json "$j" gradient_bytes_per_device)) / 1e9")"
    j="$out/08-ex1-2.json"
    macro SolFiveATwoReplicated "$(calc %.4g "$(json "$j" weight_bytes_per_device) / 1e9")"
} > "$out/08-ex1-derived.tex"

# ---------------------------------------------------------------- 5.2 ------
# 405e9 at stage 3: the smallest degree N with 16 Psi / N <= usable, solved
# from fleet's static state and usable bytes, then runs at N, N - 1 and the
# next power of two. The quotient is rounded to nine figures before it is
# rounded up, so that floating-point noise cannot add a rank.
j="$out/08-ex2-solve.json"
$fleet memory --params 405e9 --zero 3 --json --output "$j"
static=$(json "$j" static_bytes)
usable=$(json "$j" usable_bytes_per_gpu)
n=$(ceil9 "$static / $usable")
pow=1
while [ "$pow" -lt "$n" ]; do pow=$((pow * 2)); done
zero SolFiveBFit "08-ex2-fit" --params 405e9 --zero 3 --dp "$n"
transcript 08-ex2-fit --params 405e9 --zero 3 --dp "$n"
zero SolFiveBShort "08-ex2-short" --params 405e9 --zero 3 --dp $((n - 1))
transcript 08-ex2-short --params 405e9 --zero 3 --dp $((n - 1))
zero SolFiveBPow "08-ex2-pow" --params 405e9 --zero 3 --dp "$pow"
{
    macro SolFiveBQuotient "$(calc %.5g "$static / $usable")"
    macro SolFiveBDegree "$n"
    macro SolFiveBPowerOfTwo "$pow"
    left="$usable - $(json "$out/08-ex2-pow.json" bytes_per_device)"
    macro SolFiveBPowHeadroomGB "$(calc %.3g "($left) / 1e9")"
    macro SolFiveBPowHeadroomPercent "$(calc %.2g "100 * ($left) / $usable")"
} > "$out/08-ex2-derived.tex"

# ---------------------------------------------------------------- 5.3 ------
# Design A: 12.5e9 parameters per tensor-parallel rank over 128 data-parallel
# ranks, stage 2 against stage 3, and the traffic's time at 50 GB/s.
bw=50e9
zero SolFiveCTwo "08-ex3-2" --params 12.5e9 --zero 2 --dp 128
transcript 08-ex3 --params 12.5e9 --zero 2 --dp 128
zero SolFiveCThree "08-ex3-3" --params 12.5e9 --zero 3 --dp 128
{
    two=$(json "$out/08-ex3-2.json" traffic_bytes)
    three=$(json "$out/08-ex3-3.json" traffic_bytes)
    macro SolFiveCTwoSeconds "$(calc %.3g "$two / $bw")"
    macro SolFiveCThreeSeconds "$(calc %.3g "$three / $bw")"
    macro SolFiveCExtraSeconds "$(calc %.3g "($three - $two) / $bw")"
    macro SolFiveCTrafficRatio "$(calc %.3g "$three / $two")"
    macro SolFiveCTwoLeftGB "$(calc %.3g "($(json "$out/08-ex3-2.json" usable_bytes_per_gpu) \
        - $(json "$out/08-ex3-2.json" bytes_per_device)) / 1e9")"
    macro SolFiveCSavedGB "$(calc %.3g "($(json "$out/08-ex3-2.json" bytes_per_device) \
        - $(json "$out/08-ex3-3.json" bytes_per_device)) / 1e9")"
} > "$out/08-ex3-derived.tex"

# ---------------------------------------------------------------- 5.4 ------
# The running example on 64 ranks, stages 1 to 3, under the 16-byte mixed
# convention and the 18-byte fp32-grads one, and the ratio of the two.
transcript 08-ex4 --params 100e9 --precision fp32-grads \
    --zero 1 --dp 64
for s in 1 2 3; do
    zero "SolFiveDMixed$(word $s)" "08-ex4-mixed-$s" --params 100e9 \
        --precision mixed --zero $s --dp 64
    zero "SolFiveDMegatron$(word $s)" "08-ex4-megatron-$s" --params 100e9 \
        --precision fp32-grads --zero $s --dp 64
done
for s in 1 2 3; do
    macro "SolFiveDRatio$(word $s)" "$(calc %.4g \
        "$(json "$out/08-ex4-megatron-$s.json" bytes_per_device) \
         / $(json "$out/08-ex4-mixed-$s.json" bytes_per_device)")"
done > "$out/08-ex4-derived.tex"

# ---------------------------------------------------------------- 5.5 ------
# 7e9 on the eight GPUs of a node, stages 0 to 3; and what stage 1 would send
# if it all-reduced the gradients and then all-gathered the weights: the
# all-reduce's traffic (stage 0's) and half as much again.
for s in 0 1 2 3; do
    zero "SolFiveE$(word $s)" "08-ex5-$s" --params 7e9 --zero $s --dp 8
done
transcript 08-ex5 --params 7e9 --zero 1 --dp 8
{
    j="$out/08-ex5-0.json"
    macro SolFiveENaiveGB "$(calc %.4g "1.5 * $(json "$j" traffic_bytes) / 1e9")"
} > "$out/08-ex5-derived.tex"

# ---------------------------------------------------------------- 5.6 ------
# The running example's 1,024 GPUs as data-parallel ranks at stages 1 to 3,
# and the share of each stage's state that stays replicated.
for s in 1 2 3; do
    zero "SolFiveF$(word $s)" "08-ex6-$s" --params 100e9 --zero $s --dp 1024
done
transcript 08-ex6 --params 100e9 --zero 2 --dp 1024
{
    j="$out/08-ex6-1.json"
    macro SolFiveFOneReplicatedPercent "$(calc %.4g "100 * ($(json "$j" weight_bytes_per_device) \
        + $(json "$j" gradient_bytes_per_device)) / $(json "$j" bytes_per_device)")"
    j="$out/08-ex6-2.json"
    macro SolFiveFTwoReplicatedPercent "$(calc %.4g "100 * $(json "$j" weight_bytes_per_device) \
        / $(json "$j" bytes_per_device)")"
} > "$out/08-ex6-derived.tex"

# ---------------------------------------------------------------- 5.7 ------
# 13e9: for each stage, the replicated bytes per parameter r and the sharded
# ones k (read from a stage-0 run, kind by kind), and the smallest N with
# r Psi + k Psi / N <= usable, that is N >= k Psi / (usable - r Psi); then
# runs at N and N - 1. The largest model stages 1 and 2 can ever hold is
# usable / r.
j="$out/08-ex7-kinds.json"
$fleet memory --params 13e9 --zero 0 --json --output "$j"
P=$(json "$j" params)
usable=$(json "$j" usable_bytes_per_gpu)
w=$(calc %.17g "$(json "$j" weight_bytes_per_device) / $P")
g=$(calc %.17g "$(json "$j" gradient_bytes_per_device) / $P")
o=$(calc %.17g "$(json "$j" optimizer_bytes_per_device) / $P")
: > "$out/08-ex7-derived.tex"
for s in 1 2 3; do
    case $s in
        1) r="$w + $g" k="$o" ;;
        2) r="$w" k="$g + $o" ;;
        3) r="0" k="$w + $g + $o" ;;
    esac
    q="($k) * $P / ($usable - ($r) * $P)"
    n=$(ceil9 "$q")
    if [ $s -eq 1 ]; then first=$n; fi
    zero "SolFiveG$(word $s)Fit" "08-ex7-$s-fit" --params 13e9 --zero $s --dp "$n"
    zero "SolFiveG$(word $s)Short" "08-ex7-$s-short" --params 13e9 --zero $s \
        --dp $((n - 1))
    {
        macro "SolFiveG$(word $s)Quotient" "$(calc %.4g "$q")"
        macro "SolFiveG$(word $s)Degree" "$n"
    } >> "$out/08-ex7-derived.tex"
done
transcript 08-ex7 --params 13e9 --zero 1 --dp "$first"
{
    macro SolFiveGLimitOne "$(calc %.4g "$usable / ($w + $g) / 1e9")"
    macro SolFiveGLimitTwo "$(calc %.4g "$usable / $w / 1e9")"
} >> "$out/08-ex7-derived.tex"

# ============================================================================
# Exercises 5.9 to 5.12 measure minigpt's sharded state instead. Each run
# writes minigpt's JSON to BUILD_DIR/solutions/08-exN*.json and its readable
# report to 08-exN*.txt; the macros of 08-exN.tex are read off the JSON, in
# bytes exactly, or worked out from it with one line of awk. Every run is one
# optimizer step of a small model, on 2 ranks where the exercise allows: on a
# machine of 2 cores, 4 ranks are oversubscribed and each ring step waits for
# a core.
minigpt="$bin/minigpt --quiet --eval-every 1000 --steps 1 --machine $1/machine.json"

# mg FILE RANKS FLAGS...: one run of minigpt on RANKS data-parallel ranks, its
# JSON into FILE.json and its readable report into FILE.txt, and the report's
# last part, from the sharded state on, into FILE-sharded.txt.
mg() {
    file=$1 n=$2
    shift 2
    mpiexec -n "$n" $minigpt --dp "$n" "$@" --json --output "$out/$file.json" \
        --transcript "$out/$file.txt"
    sed -n '/^sharded state/,$p' "$out/$file.txt" > "$out/$file-sharded.txt"
    test -s "$out/$file-sharded.txt"
}

# units FILE: the sizes of the units of the model of a run, from its shapes,
# as the shell assignments E= (embeddings: wte V x C and wpe T x C), U=
# (a block: 12 C^2 + 13 C) and H= (the final norm 2 C and the head C x V);
# the script stops if they do not add up to the run's own parameter count.
units() {
    awk -v L="$(json "$1" layers)" -v C="$(json "$1" hidden)" \
        -v T="$(json "$1" seq)" -v V="$(json "$1" vocab)" \
        -v P="$(json "$1" params)" 'BEGIN {
        E = V * C + T * C; U = 12 * C * C + 13 * C; H = 2 * C + C * V
        if (L * U + E + H != P) {
            print "units: " L " x " U " + " E " + " H " is not " P > "/dev/stderr"
            exit 1
        }
        printf "E=%d U=%d H=%d\n", E, U, H }'
}

# sci VALUE [FIGURES]: a number in the form \ensuremath{1.79\times10^{-7}}
# (\ensuremath{10^{-6}} where the figures before the power are 1).
sci() {
    awk -v x="$1" -v d="${2:-3}" 'BEGIN {
        split(sprintf("%." (d - 1) "e", x), part, "e")
        if (part[1] + 0 == 1) printf "\\ensuremath{10^{%d}}", part[2]
        else printf "\\ensuremath{%g\\times10^{%d}}", part[1], part[2] }'
}

# ---------------------------------------------------------------- 5.9 ------
# Stage 3 on 4 ranks, the default model, one micro-batch: the forward pass
# gathers every unit, the backward pass every unit but the embeddings, and
# the reduce-scatter moves every unit once, so a rank sends
# (3 Psi - E) x 4 B x (N - 1)/N. Skipping the head's second gather would
# save H of the 3 Psi; the same shares for a model of 100 layers at hidden
# 4,096, context 2,048 and vocabulary 50,000, from the unit formulas.
mg 08-ex9 4 --zero 3
j="$out/08-ex9.json"
u=$(units "$j")
eval "$u"
P=$(json "$j" params) N=$(json "$j" ranks)
{
    macro SolFiveIEmbeddings "$(grouped "$E")"
    macro SolFiveIBlock "$(grouped "$U")"
    macro SolFiveIHead "$(grouped "$H")"
    macro SolFiveIParams "$(grouped "$P")"
    macro SolFiveIRanks "$N"
    macro SolFiveIThreePsi "$(grouped "$(calc %d "3 * $P")")"
    macro SolFiveIGathered "$(grouped "$(calc %d "3 * $P - $E")")"
    macro SolFiveIPredicted "$(grouped "$(calc %d "(3 * $P - $E) * 4 * ($N - 1) / $N")")"
    macro SolFiveIMeasured "$(grouped "$(json "$j" bytes_sent_per_step)")"
    macro SolFiveIFormula "$(grouped "$(json "$j" bytes_sent_formula)")"
    macro SolFiveIEmbeddingsPercent "$(calc %.3g "100 * $E / (3 * $P)")"
    macro SolFiveIHeadPercent "$(calc %.3g "100 * $H / (3 * $P)")"
    macro SolFiveIBothPercent "$(calc %.3g "100 * ($E + $H) / (3 * $P)")"
    macro SolFiveIHeadSaved "$(grouped "$(calc %d "$H * 4 * ($N - 1) / $N")")"
} > "$out/08-ex9.tex"
big=$(awk 'BEGIN { L = 100; C = 4096; T = 2048; V = 50000
    E = V * C + T * C; U = 12 * C * C + 13 * C; H = 2 * C + C * V
    printf "bE=%.0f bU=%.0f bH=%.0f bP=%.0f\n", E, U, H, L * U + E + H }')
eval "$big"
{
    macro SolFiveIBigEmbeddings "$(calc %.4g "$bE / 1e6")"
    macro SolFiveIBigBlock "$(calc %.4g "$bU / 1e6")"
    macro SolFiveIBigHead "$(calc %.4g "$bH / 1e6")"
    macro SolFiveIBigParams "$(calc %.4g "$bP / 1e9")"
    macro SolFiveIBigHeadShare "$(calc %.3g "100 * $bH / $bP")"
    macro SolFiveIBigHeadPercent "$(calc %.3g "100 * $bH / (3 * $bP)")"
    macro SolFiveIBigBothPercent "$(calc %.3g "100 * ($bE + $bH) / (3 * $bP)")"
} >> "$out/08-ex9.tex"

# ---------------------------------------------------------------- 5.10 -----
# The same model on 2 ranks, k micro-batches a step, stages 1 to 3. A batch
# of 24 leaves 12 sequences per rank, which k = 1, 2, 3 and 4 all divide.
# Stage 2 sends (k + 1) Psi and stage 1 2 Psi, so stage 2 sends twice
# stage 1's at k = 2 x 2 - 1; that k is run as well.
twice=$(calc %d "2 * 2 - 1")
: > "$out/08-ex10.tex"
for k in 1 2 4 "$twice"; do
    for s in 1 2 3; do
        if [ "$k" = "$twice" ] && [ "$s" != 2 ]; then continue; fi
        mg "08-ex10-$s-$k" 2 --zero "$s" --micro-batches "$k" --batch 24
        j="$out/08-ex10-$s-$k.json"
        test "$(json "$j" micro_batch)" -eq $((12 / k))
        {
            macro "SolFiveJ$(word "$s")K$(word "$k")Sent" \
                "$(grouped "$(json "$j" bytes_sent_per_step)")"
            macro "SolFiveJ$(word "$s")K$(word "$k")Formula" \
                "$(grouped "$(json "$j" bytes_sent_formula)")"
            macro "SolFiveJ$(word "$s")K$(word "$k")Copies" "$(json "$j" psi_copies_sent)"
        } >> "$out/08-ex10.tex"
    done
done
j="$out/08-ex10-3-1.json"
u=$(units "$j")
eval "$u"
P=$(json "$j" params) N=$(json "$j" ranks)
{
    macro SolFiveJRanks "$N"
    macro SolFiveJTwice "$twice"
    for k in 1 2 4; do
        macro "SolFiveJThreeK$(word "$k")Predicted" \
            "$(grouped "$(calc %d "$k * (3 * $P - $E) * 4 * ($N - 1) / $N")")"
    done
    macro SolFiveJTwiceRatio "$(calc %.4g "$(json "$out/08-ex10-2-$twice.json" bytes_sent_per_step) \
        / $(json "$out/08-ex10-1-1.json" bytes_sent_per_step)")"
    macro SolFiveJRatioFormulaOne "$(calc %.3g "3 * 1 / (1 + 1)")"
    macro SolFiveJRatioFormulaFour "$(calc %.3g "3 * 4 / (4 + 1)")"
    macro SolFiveJThreeOverTwoFour "$(calc %.3g "$(json "$out/08-ex10-3-4.json" bytes_sent_per_step) \
        / $(json "$out/08-ex10-2-4.json" bytes_sent_per_step)")"
} >> "$out/08-ex10.tex"

# ---------------------------------------------------------------- 5.11 -----
# The stage-3 buffers of the run of 5.9: a gathered unit and a unit's
# gradient, U numbers each, and the ring's scratch of one chunk, U / N + 1
# (rounded down, as C divides sizes), at 4 B a number; beside the state the
# formula counts, 16 Psi / N. The fewest layers at which the buffers are
# below a tenth of that state, for 4, 2 and 1,024 ranks, by trying each depth
# in turn; the answer for 2 ranks is run, with one layer fewer.
j="$out/08-ex9.json"
u=$(units "$j")
eval "$u"
P=$(json "$j" params) N=$(json "$j" ranks)
test "$(json "$j" largest_unit_params)" -eq "$U"
state=$(calc %.17g "$(json "$j" weight_bytes_formula) + $(json "$j" gradient_bytes_formula) \
    + $(json "$j" optimizer_bytes_formula)")

# fewest RANKS: the smallest L with 4 (2U + U/N + 1) < 0.1 x 16 (L U + E + H) / N.
fewest() {
    awk -v N="$1" -v E="$E" -v U="$U" -v H="$H" 'BEGIN {
        buffers = 4 * (2 * U + int(U / N) + 1)
        for (L = 1; 10 * buffers >= 16 * (L * U + E + H) / N; L++) ;
        print L }'
}
four=$(fewest 4) two=$(fewest 2) many=$(fewest 1024)
mg 08-ex11-fit 2 --zero 3 --layers "$two"
mg 08-ex11-short 2 --zero 3 --layers $((two - 1))

# share FILE: a run's buffers as a percentage of the state its formula counts.
share() {
    calc %.3g "100 * $(json "$1" buffer_bytes_held) / ($(json "$1" weight_bytes_formula) \
        + $(json "$1" gradient_bytes_formula) + $(json "$1" optimizer_bytes_formula))"
}
{
    macro SolFiveKUnit "$(grouped "$U")"
    macro SolFiveKScratch "$(grouped "$(calc %d "int($U / $N) + 1")")"
    macro SolFiveKNumbers "$(grouped "$(calc %d "2 * $U + int($U / $N) + 1")")"
    macro SolFiveKPredicted "$(grouped "$(calc %d "4 * (2 * $U + int($U / $N) + 1)")")"
    macro SolFiveKHeld "$(grouped "$(json "$j" buffer_bytes_held)")"
    macro SolFiveKState "$(grouped "$(calc %d "$state")")"
    macro SolFiveKPercent "$(share "$j")"
    macro SolFiveKLayersFour "$four"
    macro SolFiveKLayersTwo "$two"
    macro SolFiveKLayersTwoShort "$((two - 1))"
    macro SolFiveKLayersMany "$(grouped "$many")"
    macro SolFiveKFitParams "$(grouped "$(json "$out/08-ex11-fit.json" params)")"
    macro SolFiveKFitHeld "$(grouped "$(json "$out/08-ex11-fit.json" buffer_bytes_held)")"
    macro SolFiveKFitPercent "$(share "$out/08-ex11-fit.json")"
    macro SolFiveKShortPercent "$(share "$out/08-ex11-short.json")"
    for n in 4 2; do
        macro "SolFiveKBound$(word "$n")" \
            "$(calc %.4g "(2.5 * $n * (2 * $U + int($U / $n) + 1) - $E - $H) / $U")"
    done
} > "$out/08-ex11.tex"

# ---------------------------------------------------------------- 5.12 -----
# --verify at stage 3 on 2 ranks, two micro-batches each (its report once as
# JSON and once as text, which --transcript does not write for --verify).
# A step that forgot the weight decay lambda = 0.1 would leave each decaying
# weight w off by lr x lambda x |w|, which fails the tolerance
# atol + rtol |w| once |w| > atol / (lr lambda - rtol); at the initial
# standard deviation, 0.02, the miss and the tolerance. A gradient that
# cancels to about zero may come out as +d/2 in one run and -d/2 in the
# other, d the largest difference seen; AdamW's first step lr g / (|g| + eps)
# then differs by 2 lr (d/2) / (d/2 + eps).
verify="$bin/minigpt --dp 2 --zero 3 --micro-batches 2 --verify"
mpiexec -n 2 $verify --output "$out/08-ex12.txt"
mpiexec -n 2 $verify --json --output "$out/08-ex12.json"
j="$out/08-ex12.json"
test "$(json "$j" result)" = OK
lr=0.003 lambda=0.1 sigma=0.02 eps=1e-8
atol=$(json "$j" atol) rtol=$(json "$j" rtol) d=$(json "$j" max_dgrad)
{
    macro SolFiveLAtol "$(sci "$atol" 1)"
    macro SolFiveLRtol "$(sci "$rtol" 1)"
    macro SolFiveLDgrad "$(sci "$d")"
    macro SolFiveLDecay "$(sci "$(calc %.17g "$lr * $lambda")" 2)"
    macro SolFiveLThreshold "$(calc %.3g "$atol / ($lr * $lambda - $rtol)")"
    macro SolFiveLThresholdSigma "$(calc %.3g "$atol / ($lr * $lambda - $rtol) / $sigma")"
    macro SolFiveLSigmaMiss "$(sci "$(calc %.17g "$lr * $lambda * $sigma")" 2)"
    macro SolFiveLSigmaTolerance "$(sci "$(calc %.17g "$atol + $rtol * $sigma")" 2)"
    macro SolFiveLFlip "$(sci "$(calc %.17g "2 * $lr * ($d / 2) / ($d / 2 + $eps)")" 2)"
    times=$(calc %.2g "2 * $lr * ($d / 2) / ($d / 2 + $eps) / ($atol + $rtol * $sigma)")
    macro SolFiveLFlipTimes "$(grouped "$(calc %d "$times")")"
} > "$out/08-ex12.tex"
