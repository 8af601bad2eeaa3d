# Tangled from chapters/99gp-precision-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/12-formats.sh BUILD_DIR
set -eu
formats_tool="$1/bin/formats" minigpt="$1/bin/minigpt" fleet="$1/bin/fleet"
machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
$formats_tool --ranges --output "$transcripts/12-formats-ranges.txt"
$formats_tool --ranges --latex Formats --output "$numbers/12-formats.tex"
$formats_tool 0.1 3.14159265 1e-5 70000 --output \
    "$transcripts/12-formats-values.txt"
$fleet memory --precisions --csv --output "$data/12-conventions.csv"
"$1/bin/formats" --ranges --csv | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    { e4m3 = $at["e4m3_bits"] / 8; bf16 = $at["bf16_bits"] / 8
      fp32 = $at["fp32_bits"] / 8
      printf "fp8,E4M3 weights + bf16 gradients,%g,%g,%g,0,%g,%g\n", e4m3,
             bf16, fp32, 2 * fp32, e4m3 + bf16 + 3 * fp32 }' \
    >> "$data/12-conventions.csv"
for run in "fp32 fp32" "bf16 mixed" "fp16 mixed" \
           "bf16 fp32-grads --fp32-grads" "fp8 fp8"; do
    set -- $run
    precision=$1 convention=$2
    shift 2
    $minigpt --steps 2 --quiet --precision $precision "$@" \
        --machine "$machine" --csv --output "$data/12-bytes-$precision$*.csv"
    awk -F, -v run="--precision $precision $*" -v key="$convention" \
        -v csv="$data/12-bytes-$precision$*.csv" '
        BEGIN {
            while ((getline line < csv) > 0) {
                n = split(line, f, ",")
                if (!names) { for (i = 1; i <= n; i++) col[f[i]] = i
                              names = 1 }
                else for (k in col) value[k] = f[col[k]]
            }
            N = value["params"]
        }
        $1 == key {
            printf "%-30s %3.3g %3g %3g %3g %3g %5.3g B   %-10s %3g B\n", run,
                value["bytes_held_weights"] / N,
                value["bytes_held_gradients"] / N,
                value["bytes_held_master_weights"] / N,
                value["bytes_held_master_gradients"] / N,
                value["bytes_held_moments"] / N, value["bytes_per_param"],
                key, $8
        }' "$data/12-conventions.csv"
done > "$data/12-bytes-rows.txt"
{
    printf "%-30s %3s %3s %3s %3s %3s %7s   %s\n" "minigpt" \
        w g mw mg opt total "Chapter 1's convention"
    cat "$data/12-bytes-rows.txt"
    echo
    echo "bytes held per parameter, measured: w weights the passes read," \
         "g gradients"
    echo "they write, mw fp32 master weights, mg fp32 gradients," \
         "opt Adam's m and v"
} > "$transcripts/12-bytes.txt"
awk '{ name = $2 == "fp32" ? "Fp" : $2 == "fp16" ? "Half" \
            : $2 == "fp8" ? "Eight" : "Bf"
       if ($3 == "--fp32-grads") name = name "FpGrads"
       printf "\\newcommand{\\PrecBytes%s}{%.3g}\n", name, $(NF - 4) + 0
       if ($2 == "fp8")
           printf "\\newcommand{\\PrecBytesEightWeights}{%.3g}\n", $3
       if ($2 == "fp8")
           printf "\\newcommand{\\PrecBytesEightConvention}{%g}\n", $(NF - 1)
     }' \
    "$data/12-bytes-rows.txt" > "$numbers/12-bytes.tex"
for precision in bf16 fp16 fp8; do
    $minigpt --verify --quiet --precision $precision \
        --output "$transcripts/12-verify-$precision.txt"
done
$minigpt --verify --quiet --precision bf16 --latex PrecVerifyBf \
    --output "$numbers/12-verify-bf16.tex"
$minigpt --verify --quiet --precision fp16 --latex PrecVerifyHalf \
    --output "$numbers/12-verify-fp16.tex"
$minigpt --verify --quiet --precision fp8 --latex PrecVerifyEight \
    --output "$numbers/12-verify-fp8.tex"
