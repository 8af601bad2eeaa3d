# usage: sh solutions/05-sharded-state.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 5 (sharded state: ZeRO and
# FSDP). Exercise N writes fleet's transcripts to BUILD_DIR/solutions/
# 05-exN*.txt, fleet's macros to BUILD_DIR/solutions/05-exN*.tex (named
# \SolFive<letter><run><Field>, A for exercise 5.1, B for 5.2, and so on) and
# fleet's JSON to BUILD_DIR/solutions/05-exN*.json. What fleet does not print
# itself (a time at a bandwidth, a ratio, a share, the degree that solves an
# inequality) is one line of awk on that JSON, written as a macro into
# BUILD_DIR/solutions/05-exN-derived.tex, so that no answer is typed by hand.
# tests/15-solutions-sharded.t redoes all of it in Perl from the ZeRO formulas.
# Exercise 5.8 is conceptual and has no runs.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
mkdir -p "$1/solutions"
bin=$(cd "$1/bin" && pwd)
out=$(cd "$1/solutions" && pwd)
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

# transcript FILE FLAGS...: what fleet memory prints, into FILE.txt, and its
# last part, from the heading of the sharded state on, into FILE-zero.txt
# (for the solutions that have already shown the floor's derivation).
transcript() {
    file=$1
    shift
    $fleet memory "$@" --output "$out/$file.txt"
    sed -n -e '/^plain data parallel over /,$p' -e '/^ZeRO stage /,$p' \
        "$out/$file.txt" > "$out/$file-zero.txt"
    test -s "$out/$file-zero.txt"
}

# word STAGE: the stage's number as a macro can spell it.
word() {
    case $1 in 0) echo Zero ;; 1) echo One ;; 2) echo Two ;; 3) echo Three ;; esac
}

# ---------------------------------------------------------------- 5.1 ------
# A 70e9 model on 64 data-parallel ranks, stages 0 to 3. What stages 1 and 2
# keep whole however many ranks share the rest: the 16-bit weights and
# gradients (stage 1), the weights (stage 2).
for s in 0 1 2 3; do
    zero "SolFiveA$(word $s)" "05-ex1-$s" --params 70e9 --zero $s --dp 64
done
transcript 05-ex1 --params 70e9 --zero 3 --dp 64
{
    j="$out/05-ex1-1.json"
    macro SolFiveAOneReplicated "$(calc %.4g "($(json "$j" weight_bytes_per_device) \
        + $(json "$j" gradient_bytes_per_device)) / 1e9")"
    j="$out/05-ex1-2.json"
    macro SolFiveATwoReplicated "$(calc %.4g "$(json "$j" weight_bytes_per_device) / 1e9")"
} > "$out/05-ex1-derived.tex"

# ---------------------------------------------------------------- 5.2 ------
# 405e9 at stage 3: the smallest degree N with 16 Psi / N <= usable, solved
# from fleet's static state and usable bytes, then runs at N, N - 1 and the
# next power of two. The quotient is rounded to nine figures before it is
# rounded up, so that floating-point noise cannot add a rank.
j="$out/05-ex2-solve.json"
$fleet memory --params 405e9 --zero 3 --json --output "$j"
static=$(json "$j" static_bytes)
usable=$(json "$j" usable_bytes_per_gpu)
n=$(ceil9 "$static / $usable")
pow=1
while [ "$pow" -lt "$n" ]; do pow=$((pow * 2)); done
zero SolFiveBFit "05-ex2-fit" --params 405e9 --zero 3 --dp "$n"
transcript 05-ex2-fit --params 405e9 --zero 3 --dp "$n"
zero SolFiveBShort "05-ex2-short" --params 405e9 --zero 3 --dp $((n - 1))
transcript 05-ex2-short --params 405e9 --zero 3 --dp $((n - 1))
zero SolFiveBPow "05-ex2-pow" --params 405e9 --zero 3 --dp "$pow"
{
    macro SolFiveBQuotient "$(calc %.5g "$static / $usable")"
    macro SolFiveBDegree "$n"
    macro SolFiveBPowerOfTwo "$pow"
    left="$usable - $(json "$out/05-ex2-pow.json" bytes_per_device)"
    macro SolFiveBPowHeadroomGB "$(calc %.3g "($left) / 1e9")"
    macro SolFiveBPowHeadroomPercent "$(calc %.2g "100 * ($left) / $usable")"
} > "$out/05-ex2-derived.tex"

# ---------------------------------------------------------------- 5.3 ------
# Design A: 12.5e9 parameters per tensor-parallel rank over 128 data-parallel
# ranks, stage 2 against stage 3, and the traffic's time at 50 GB/s.
bw=50e9
zero SolFiveCTwo "05-ex3-2" --params 12.5e9 --zero 2 --dp 128
transcript 05-ex3 --params 12.5e9 --zero 2 --dp 128
zero SolFiveCThree "05-ex3-3" --params 12.5e9 --zero 3 --dp 128
{
    two=$(json "$out/05-ex3-2.json" traffic_bytes)
    three=$(json "$out/05-ex3-3.json" traffic_bytes)
    macro SolFiveCTwoSeconds "$(calc %.3g "$two / $bw")"
    macro SolFiveCThreeSeconds "$(calc %.3g "$three / $bw")"
    macro SolFiveCExtraSeconds "$(calc %.3g "($three - $two) / $bw")"
    macro SolFiveCTrafficRatio "$(calc %.3g "$three / $two")"
    macro SolFiveCTwoLeftGB "$(calc %.3g "($(json "$out/05-ex3-2.json" usable_bytes_per_gpu) \
        - $(json "$out/05-ex3-2.json" bytes_per_device)) / 1e9")"
    macro SolFiveCSavedGB "$(calc %.3g "($(json "$out/05-ex3-2.json" bytes_per_device) \
        - $(json "$out/05-ex3-3.json" bytes_per_device)) / 1e9")"
} > "$out/05-ex3-derived.tex"

# ---------------------------------------------------------------- 5.4 ------
# The running example on 64 ranks, stages 1 to 3, under the 16-byte mixed
# convention and the 18-byte fp32-grads one, and the ratio of the two.
transcript 05-ex4 --params 100e9 --precision fp32-grads \
    --zero 1 --dp 64
for s in 1 2 3; do
    zero "SolFiveDMixed$(word $s)" "05-ex4-mixed-$s" --params 100e9 \
        --precision mixed --zero $s --dp 64
    zero "SolFiveDMegatron$(word $s)" "05-ex4-megatron-$s" --params 100e9 \
        --precision fp32-grads --zero $s --dp 64
done
for s in 1 2 3; do
    macro "SolFiveDRatio$(word $s)" "$(calc %.4g \
        "$(json "$out/05-ex4-megatron-$s.json" bytes_per_device) \
         / $(json "$out/05-ex4-mixed-$s.json" bytes_per_device)")"
done > "$out/05-ex4-derived.tex"

# ---------------------------------------------------------------- 5.5 ------
# 7e9 on the eight GPUs of a node, stages 0 to 3; and what stage 1 would send
# if it all-reduced the gradients and then all-gathered the weights: the
# all-reduce's traffic (stage 0's) and half as much again.
for s in 0 1 2 3; do
    zero "SolFiveE$(word $s)" "05-ex5-$s" --params 7e9 --zero $s --dp 8
done
transcript 05-ex5 --params 7e9 --zero 1 --dp 8
{
    j="$out/05-ex5-0.json"
    macro SolFiveENaiveGB "$(calc %.4g "1.5 * $(json "$j" traffic_bytes) / 1e9")"
} > "$out/05-ex5-derived.tex"

# ---------------------------------------------------------------- 5.6 ------
# The running example's 1,024 GPUs as data-parallel ranks at stages 1 to 3,
# and the share of each stage's state that stays replicated.
for s in 1 2 3; do
    zero "SolFiveF$(word $s)" "05-ex6-$s" --params 100e9 --zero $s --dp 1024
done
transcript 05-ex6 --params 100e9 --zero 2 --dp 1024
{
    j="$out/05-ex6-1.json"
    macro SolFiveFOneReplicatedPercent "$(calc %.4g "100 * ($(json "$j" weight_bytes_per_device) \
        + $(json "$j" gradient_bytes_per_device)) / $(json "$j" bytes_per_device)")"
    j="$out/05-ex6-2.json"
    macro SolFiveFTwoReplicatedPercent "$(calc %.4g "100 * $(json "$j" weight_bytes_per_device) \
        / $(json "$j" bytes_per_device)")"
} > "$out/05-ex6-derived.tex"

# ---------------------------------------------------------------- 5.7 ------
# 13e9: for each stage, the replicated bytes per parameter r and the sharded
# ones k (read from a stage-0 run, kind by kind), and the smallest N with
# r Psi + k Psi / N <= usable, that is N >= k Psi / (usable - r Psi); then
# runs at N and N - 1. The largest model stages 1 and 2 can ever hold is
# usable / r.
j="$out/05-ex7-kinds.json"
$fleet memory --params 13e9 --zero 0 --json --output "$j"
P=$(json "$j" params)
usable=$(json "$j" usable_bytes_per_gpu)
w=$(calc %.17g "$(json "$j" weight_bytes_per_device) / $P")
g=$(calc %.17g "$(json "$j" gradient_bytes_per_device) / $P")
o=$(calc %.17g "$(json "$j" optimizer_bytes_per_device) / $P")
: > "$out/05-ex7-derived.tex"
for s in 1 2 3; do
    case $s in
        1) r="$w + $g" k="$o" ;;
        2) r="$w" k="$g + $o" ;;
        3) r="0" k="$w + $g + $o" ;;
    esac
    q="($k) * $P / ($usable - ($r) * $P)"
    n=$(ceil9 "$q")
    if [ $s -eq 1 ]; then first=$n; fi
    zero "SolFiveG$(word $s)Fit" "05-ex7-$s-fit" --params 13e9 --zero $s --dp "$n"
    zero "SolFiveG$(word $s)Short" "05-ex7-$s-short" --params 13e9 --zero $s \
        --dp $((n - 1))
    {
        macro "SolFiveG$(word $s)Quotient" "$(calc %.4g "$q")"
        macro "SolFiveG$(word $s)Degree" "$n"
    } >> "$out/05-ex7-derived.tex"
done
transcript 05-ex7 --params 13e9 --zero 1 --dp "$first"
{
    macro SolFiveGLimitOne "$(calc %.4g "$usable / ($w + $g) / 1e9")"
    macro SolFiveGLimitTwo "$(calc %.4g "$usable / $w / 1e9")"
} >> "$out/05-ex7-derived.tex"
