# Tangled from chapters/95-parallel-plumbing.nw, chapters/99gp-precision-plumbing.nw and chapters/99gr-precision-drill.nw; edit the chapters, not this file.
# usage: sh code/runs/12-drill.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
numbers="$1/numbers"
awklib=$(cat code/common/formats.awk)
number_formats="$1/bin/formats"
minigpt="$1/bin/minigpt --machine $1/machine.json"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
gradient=1e-8 update=8e-5               # the drill's inputs (appendix)
params=100e9
window=2000 scale=65536                  # the trainer's defaults for fp16
scaled=$(awk "BEGIN { print $gradient * $scale }")
gain=$(awk "BEGIN { print 1 + $update }")

$number_formats --ranges --csv > "$tmp/ranges.csv"
# column FILE NAME: the column NAME of the second line of the CSV FILE.
column() {
    awk -F, -v name="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
        NR == 2 && (name in at) { print $at[name]; found = 1 }
        END { exit !found }' "$1" ||
    { echo "12-drill.sh: no column $2 in $1" >&2; exit 1; }
}
# range FORMAT FIELD: one field of a format's range.
range() { column "$tmp/ranges.csv" "$1_$2"; }
# nearest X FORMAT FIELD: FIELD (nearest, relative_error) of X in FORMAT.
nearest() {
    $number_formats "$1" --csv > "$tmp/one.csv"
    column "$tmp/one.csv" "$2_$3"
}
# state FLAGS...: fleet memory's static bytes of the 100B model.
state() {
    $fleet memory --params $params "$@" --json |
        awk -F'[:,]' '{ gsub(/ /, "", $1) }
                      $1 == "\"static_bytes\"" { printf "%.17g\n", $2 }'
}
mixed=$(state --precision mixed)
float=$(state --precision fp32)
lean=$(state --precision lean)
data="$tmp"                # fp8's convention, from the formats' bits
: > "$data/12-conventions.csv"
"$1/bin/formats" --ranges --csv | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    { e4m3 = $at["e4m3_bits"] / 8; bf16 = $at["bf16_bits"] / 8
      fp32 = $at["fp32_bits"] / 8
      printf "fp8,E4M3 weights + bf16 gradients,%g,%g,%g,0,%g,%g\n", e4m3,
             bf16, fp32, 2 * fp32, e4m3 + bf16 + 3 * fp32 }' \
    >> "$data/12-conventions.csv"
eight_bit_state=$(awk -F, '$1 == "fp8" { print $8 }' \
                  "$data/12-conventions.csv")           # 1 + 2 + 4 + 8
eight=$(state --bytes-per-param $eight_bit_state)
# The fp32 bytes of mixed precision: master weights and moments.
fp32_state=$($fleet memory --precisions --csv |
             awk -F, '$1 == "mixed" { print $5 + $7 }')
per_param=$($fleet memory --precisions --csv |
            awk -F, '$1 == "mixed" { print $8 }')
lean_per_param=$($fleet memory --precisions --csv |
                 awk -F, '$1 == "lean" { print $8 }')
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
# bytes_per_param PRECISION: what the trainer holds a parameter.
bytes_per_param() {
    $minigpt --precision "$1" --steps 1 --quiet --json > "$tmp/$1.json"
    printf '%.6g\n' "$(field bytes_per_param "$tmp/$1.json")"
}
trainer_float=$(bytes_per_param fp32)
trainer_bf=$(bytes_per_param bf16)
trainer_eight=$(bytes_per_param fp8)
$minigpt --steps 1 --quiet --grad-histogram "$tmp/histogram.csv" \
    --json > "$tmp/step.json"
unigram=$(printf '%.17g' "$(field unigram_entropy "$tmp/step.json")")
bigram=$(printf '%.17g' "$(field bigram_entropy "$tmp/step.json")")
fp_min_normal=$(range fp16 smallest_normal)
# below: gradients (of weights and activations) under fp16's smallest
# normal, and under half its smallest subnormal, of all that are not 0.
below=$(awk -F, -v normal="$fp_min_normal" '
    NR == 1 || $1 == "zero" { next }
    { n = $2 + $3; all += n
      if (2 ^ $1 < normal) lost += n
      if ($1 < -25) flushed += n }
    END { printf "%.10g %.10g\n", lost / all, flushed / all }' \
    "$tmp/histogram.csv")
awk -v bf_unit="$(range bf16 unit_roundoff)" \
    -v bf_bits="$(range bf16 significant_bits)" \
    -v fp_unit="$(range fp16 unit_roundoff)" \
    -v fp_bits="$(range fp16 significant_bits)" \
    -v float_unit="$(range fp32 unit_roundoff)" \
    -v float_bits="$(range fp32 significant_bits)" \
    -v fp_max="$(range fp16 largest)" \
    -v fp_min_normal="$fp_min_normal" \
    -v fp_min_subnormal="$(range fp16 smallest_subnormal)" \
    -v bf_max="$(range bf16 largest)" \
    -v bf_min_normal="$(range bf16 smallest_normal)" \
    -v e4_unit="$(range e4m3 unit_roundoff)" \
    -v e4_max="$(range e4m3 largest)" \
    -v e4_min_subnormal="$(range e4m3 smallest_subnormal)" \
    -v e5_unit="$(range e5m2 unit_roundoff)" \
    -v e5_max="$(range e5m2 largest)" \
    -v gradient=$gradient -v update=$update \
    -v tiny_fp="$(nearest $gradient fp16 nearest)" \
    -v tiny_bf="$(nearest $gradient bf16 nearest)" \
    -v tiny_bf_error="$(nearest $gradient bf16 relative_error)" \
    -v scaled=$scaled -v scale=$scale \
    -v scaled_fp_error="$(nearest $scaled fp16 relative_error)" \
    -v gain_bf="$(nearest $gain bf16 nearest)" \
    -v gain_fp="$(nearest $gain fp16 nearest)" \
    -v mixed="$mixed" -v float="$float" -v lean="$lean" -v eight="$eight" \
    -v params=$params -v fp32_state="$fp32_state" -v window=$window \
    -v per_param="$per_param" -v lean_per_param="$lean_per_param" \
    -v trainer_float="$trainer_float" \
    -v trainer_bf="$trainer_bf" -v trainer_eight="$trainer_eight" \
    -v unigram="$unigram" -v bigram="$bigram" -v below="$below" \
    "$awklib"'
    function macro(name, value) {
        printf "\\newcommand{\\PrecDrill%s}{%s}\n", name, value
    }
    function sci(x,   e) {
        if (x == 0) return "0"
        e = int(log(x) / log(10)); if (x < 10 ^ e) e--
        return sprintf("\\ensuremath{%.2g\\times10^{%d}}", x / 10 ^ e, e)
    }
    function tb(x) { return sprintf("%.3g\\,TB", x / 1e12) }
    function percent(x) { return sprintf("%.2g\\,\\%%", 100 * x) }
    function binades(hi, lo) { return sprintf("%.0f", log(hi / lo) / log(2)) }
    BEGIN {
        split(below, share, " ")
        macro("BfUnit", sci(bf_unit))
        macro("BfBits", bf_bits)
        macro("FpUnit", sci(fp_unit))
        macro("FpBits", fp_bits)
        macro("FloatUnit", sci(float_unit))
        macro("FloatBits", float_bits)
        macro("FpMax", grouped(fp_max))
        macro("FpMinNormal", sci(fp_min_normal))
        macro("FpMinSubnormal", sci(fp_min_subnormal))
        macro("FpBinades", binades(fp_max, fp_min_subnormal))
        macro("BfMax", sci(bf_max))
        macro("BfMinNormal", sci(bf_min_normal))
        macro("BfBinades", binades(bf_max, bf_min_normal))
        macro("EfourUnit", sprintf("%.3g", e4_unit))
        macro("EfourMax", grouped(e4_max))
        macro("EfourBinades", binades(e4_max, e4_min_subnormal))
        macro("EfiveUnit", sprintf("%.3g", e5_unit))
        macro("EfiveMax", grouped(e5_max))
        macro("Gradient", sci(gradient))
        macro("TinyFp", sci(tiny_fp))
        macro("TinyBf", sci(tiny_bf))
        macro("TinyBfError", percent(tiny_bf_error))
        macro("Scaled", sci(scaled))
        macro("ScaledFpError", percent(scaled_fp_error))
        macro("Update", sci(update))
        macro("GainBf", sprintf("%.6g", gain_bf))
        macro("GainFp", sprintf("%.6g", gain_fp))
        macro("UpdateOverBfUnit", sprintf("%.2g", update / bf_unit))
        macro("MixedBytes", tb(mixed))
        macro("FloatBytes", tb(float))
        macro("LeanBytes", tb(lean))
        macro("EightBytes", tb(eight))
        macro("OptimizerShare", percent(fp32_state * params / mixed))
        macro("EightSaving", sprintf("%.3g\\,\\%%", 100 * (1 - eight / mixed)))
        macro("TrainerFloat", trainer_float)
        macro("TrainerBf", trainer_bf)
        macro("TrainerEight", sprintf("%.3g", trainer_eight))
        macro("Unigram", sprintf("%.3g", unigram))
        macro("Bigram", sprintf("%.3g", bigram))
        macro("BelowFpNormal", percent(share[1]))
        macro("FlushedFp", percent(share[2]))
        macro("FpThirtyTwoState", fp32_state)
        macro("MixedPerParam", per_param)
        macro("LeanPerParam", lean_per_param)
        macro("ScaleLog", sprintf("%.0f", log(scale) / log(2)))
        macro("Window", grouped(window))
        macro("SkipShare", percent(1 / (window + 1)))
    }' > "$numbers/12-drill.tex"
