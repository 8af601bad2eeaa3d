# usage: sh solutions/14-experts.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 14 (mixture of experts).
# Exercise N writes its macros to BUILD_DIR/solutions/14-exN*.tex (named
# \SolFourteen<letter><Field>, A for exercise 14.1, B for 14.2, and so on),
# the tools' JSON to 14-exN*.json and what they print, under the command, to
# 14-exN*.txt. What the tools do not print themselves (a share of the
# memory, a ratio of two runs, the bytes a GPU sends in a step, the
# capacity that would have dropped nothing) is one line of awk on their
# output or on the exercise's inputs, written as macros into
# 14-exN-derived.tex, so that no answer is typed by hand.
# tests/14-solutions.t redoes the arithmetic in Perl.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

# run_fleet NAME FILE COMMAND FLAGS...: fleet COMMAND under FLAGS, as macros
# with the prefix NAME into FILE.tex, and as JSON into FILE.json.
run_fleet() {
    name=$1 file=$2
    shift 2
    $fleet "$@" --latex "$name" --output "$out/$file.tex"
    $fleet "$@" --json --output "$out/$file.json"
}
# at FILE KEY: KEY of FILE.json.
at() {
    json "$out/$1.json" "$2"
}


# ---------------------------------------------------------------- 14.1 -----
# What the experts cost: 100B parameters, 20B active, 16 experts, top-2,
# 2T tokens on 1,024 GPUs at 40 % MFU. fleet moe splits the parameters
# into one expert's (x) and everyone's (s), and prices the memory of all
# of them and the compute of the active ones beside a dense 100B.
ex1="--params-total 100e9 --params-active 20e9 --experts 16 --top-k 2
     --tokens 2T --gpus 1024 --mfu 0.4"
run_fleet SolFourteenA 14-ex1 moe $ex1
show "$out/14-ex1.txt" "$fleet" moe $ex1
quote_range "$out/14-ex1.txt" '^memory' '^  s = '
{
    macro SolFourteenAExpertShare "$(calc '%.3g' "100 * $(at 14-ex1 experts) \
        * $(at 14-ex1 expert_params) / $(at 14-ex1 params_total)")\\,\\%"
    macro SolFourteenADaysRatio "$(calc '%.3g' \
        "$(at 14-ex1 dense_training_days) / $(at 14-ex1 training_days)")"
} > "$out/14-ex1-derived.tex"

# ---------------------------------------------------------------- 14.2 -----
# The same compute two ways: a dense 20B (fleet memory, fleet compute) and
# the mixture of 14.1; each fully sharded over the 1,024 GPUs.
run_fleet SolFourteenBDenseMemory 14-ex2-dense-memory memory \
    --params 20e9 --gpus 1024
run_fleet SolFourteenBDense 14-ex2-dense compute \
    --params 20e9 --tokens 2T --gpus 1024 --mfu 0.4
run_fleet SolFourteenBMoeMemory 14-ex2-moe-memory memory \
    --params 100e9 --gpus 1024
{
    macro SolFourteenBStateRatio "$(calc '%.3g' \
        "$(at 14-ex2-moe-memory static_bytes) \
         / $(at 14-ex2-dense-memory static_bytes)")"
} > "$out/14-ex2-derived.tex"

# ---------------------------------------------------------------- 14.3 -----
# The all-to-all's bytes and links: 60B with 5B active, h 4,096, 32
# layers, 64 experts, top-2, 8,192 tokens a GPU a step; EP 8 in a node and
# EP 32 over four nodes, the links at 80 % of their rates.
ex3="--params-total 60e9 --params-active 5e9 --experts 64 --top-k 2
     --hidden 4096 --layers 32 --tokens-per-gpu 8192 --link-efficiency 0.8"
run_fleet SolFourteenCEight 14-ex3-ep8 moe $ex3 --ep 8
run_fleet SolFourteenCThirtyTwo 14-ex3-ep32 moe $ex3 --ep 32
show "$out/14-ex3.txt" "$fleet" moe $ex3 --ep 32
quote_range "$out/14-ex3.txt" '^the all-to-all' '^  all-to-all ÷'
{
    for run in 8:Eight 32:ThirtyTwo; do
        f=14-ex3-ep${run%%:*} n=SolFourteenC${run#*:}
        macro "${n}NvlinkTime" "$(duration "$(calc %.17g \
            "$(at $f step_nvlink_bytes) / $(at $f nvlink_bandwidth)")")"
        macro "${n}NicTime" "$(duration "$(calc %.17g \
            "$(at $f step_nic_bytes) / $(at $f nic_bandwidth)")")"
    done
    macro SolFourteenCForwardBytes "$(grouped "$(calc %.0f \
        "$(at 14-ex3-ep8 alltoall_payload_bytes_per_token_per_layer) / 2")")"
    macro SolFourteenCPayloadBytes "$(grouped "$(calc %.0f \
        "$(at 14-ex3-ep8 alltoall_payload_bytes_per_token_per_layer)")")"
} > "$out/14-ex3-derived.tex"

# ---------------------------------------------------------------- 14.4 -----
# Expert or tensor parallelism: 64 experts, top-2, h 6,144, 48 layers, 300B
# with 40B active, on 1,024 GPUs. fleet moe at EP 8 prices the experts
# whole on eight GPUs of a node, and beside it what TP 8 on the same MLPs
# would all-reduce; at EP 64 the experts spread over eight nodes.
ex4="--params-total 300e9 --params-active 40e9 --experts 64 --top-k 2
     --hidden 6144 --layers 48 --gpus 1024 --link-efficiency 0.8"
run_fleet SolFourteenDEight 14-ex4-ep8 moe $ex4 --ep 8
run_fleet SolFourteenDSixtyFour 14-ex4-ep64 moe $ex4 --ep 64
show "$out/14-ex4.txt" "$fleet" moe $ex4 --ep 8
quote_range "$out/14-ex4.txt" '^in place of' 'hold it'
{
    # TP 8 holds an eighth of every expert: the same expert state per GPU
    # as EP 8, which holds eight whole experts of the 64.
    macro SolFourteenDTpExpertBytes "$(calc '%.3g' \
        "$(at 14-ex4-ep8 bytes_per_param) * $(at 14-ex4-ep8 experts) \
         * $(at 14-ex4-ep8 expert_params) / 8 / 1e9")\\,GB"
    macro SolFourteenDAlltoallOverTp "$(calc '%.3g' \
        "$(at 14-ex4-ep8 alltoall_bytes_per_token_per_layer) \
         / $(at 14-ex4-ep8 tp_mlp_bytes_per_token_per_layer)")"
} > "$out/14-ex4-derived.tex"

# ---------------------------------------------------------------- 14.5 -----
# Capacity and dropped tokens: four experts on four ranks, top-2, 1,024
# tokens a rank; the router as it is at F = 1.25 (checked against the
# one-rank reference), then skewed (--skew 1) at F = 1.0, 1.25 and 2.0.
# Each expert's routed, kept and dropped slots are the layer's CSV.
layer="--experts 4 --top-k 2 --tokens 1024 --repeats 1"
for run in even:1.25 skew:1.0 skew:1.25 skew:2.0; do
    kind=${run%%:*} F=${run#*:}
    flags="$layer --capacity-factor $F"
    [ $kind = skew ] && flags="$flags --skew 1"
    [ $kind = even ] && flags="$flags --verify"
    mpiexec -n 4 "$bin/moe" $flags --json --output "$out/14-ex5-$kind-$F.json" \
        --tokens-csv "$out/14-ex5-$kind-$F.csv"
done
{
    echo '$ mpiexec -n 4 moe --experts 4 --top-k 2 --tokens 1024 \'
    echo '      --capacity-factor 1.0 --skew 1'
    mpiexec -n 4 "$bin/moe" $layer --capacity-factor 1.0 --skew 1
} > "$out/14-ex5.txt"
quote_lines "$out/14-ex5.txt" '^(capacity|expert|  +[0-9]|dropped|load)'
# word RUN: a run as a macro name can spell it.
word() {
    case $1 in even-1.25) echo Even ;; skew-1.0) echo SkewOne ;;
               skew-1.25) echo SkewOneQuarter ;; skew-2.0) echo SkewTwo ;; esac
}
{
    for run in even-1.25 skew-1.0 skew-1.25 skew-2.0; do
        f="$out/14-ex5-$run" n="SolFourteenE$(word $run)"
        for e in 0 1 2 3; do
            macro "${n}Routed$(echo $e | tr 0123 ABCD)" "$(grouped "$(awk -F, \
                -v e=$e 'NR > 1 && $1 == e { print $3 }' "$f.csv")")"
        done
        macro "${n}Capacity" "$(grouped "$(json "$f.json" capacity)")"
        macro "${n}Dropped" "$(grouped "$(json "$f.json" dropped_tokens)")"
        macro "${n}Unserved" "$(grouped "$(json "$f.json" tokens_unserved)")"
        macro "${n}Imbalance" "$(calc %.3g "$(json "$f.json" load_imbalance)")"
    done
    macro SolFourteenESlots "$(grouped "$(json "$out/14-ex5-even-1.25.json" slots)")"
} > "$out/14-ex5-derived.tex"

# ---------------------------------------------------------------- 14.6 -----
# (a) the first run's check against the reference; (b) the all-to-all and
# the all-reduce at 4 MiB on two ranks, MPICH's own (impl mpi), the copy
# ceiling given rather than measured again.
even="$out/14-ex5-even-1.25.json"
size=4194304
for op in alltoall allreduce; do
    mpiexec -n 2 "$bin/allreduce" --op $op --min-bytes $size \
        --max-bytes $size --memcpy 10 --machine "$1/machine.json" \
        --repeats 3 --json \
        --output "$out/14-ex6-$op.json"
done
# row OP FIELD: FIELD of the row of MPICH's OP in 14-ex6-OP.json.
row() {
    awk -v op="\"$1\"" -v f="\"$2\"" '
        index($0, "\"op\": " op) && index($0, "\"impl\": \"mpi\"") {
            n = split($0, kv, /, /)
            for (i = 1; i <= n; i++) {
                split(kv[i], p, /: /); gsub(/[{} ]/, "", p[1])
                if (p[1] == f) { gsub(/[}, ]/, "", p[2]); print p[2] }
            } }' "$out/14-ex6-$1.json"
}
{
    macro SolFourteenFMaxDiff "$(sci "$(json "$even" max_doutput)")"
    macro SolFourteenFExact "$(awk -v d="$(json "$even" max_doutput)" \
        'BEGIN { print d == 0 ? 1 : 0 }')"
    macro SolFourteenFAtol "$(sci "$(json "$even" atol)")"
    macro SolFourteenFRtol "$(sci "$(json "$even" rtol)")"
    macro SolFourteenFResult "$(json "$even" result)"
    for op in alltoall:Alltoall allreduce:Allreduce; do
        o=${op%%:*} n=SolFourteenF${op#*:}
        macro "${n}Time" "$(duration "$(row $o time_s)")"
        macro "${n}Algbw" "$(calc %.3g "$(row $o algbw)")"
        macro "${n}Busbw" "$(calc %.3g "$(row $o busbw)")"
    done
} > "$out/14-ex6-derived.tex"
