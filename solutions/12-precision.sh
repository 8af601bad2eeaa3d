# usage: sh solutions/12-precision.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 12 (mixed precision).
# Exercise N writes its macros to BUILD_DIR/solutions/12-exN*.tex (named
# \SolTwelve<letter><Field>, A for exercise 12.1, B for 12.2, and so on),
# the tools' JSON to 12-exN*.json and what they print, under the command,
# to 12-exN*.txt. The roundings are formats', the bytes fleet memory's and
# the runs minigpt's; what they do not print themselves (a span in powers
# of two, the step a rounding stores, a weight after a thousand updates,
# the dynamic scaler's skips, a share of a histogram) is one line of awk
# on their output or on the exercise's inputs, written as macros into
# 12-exN-derived.tex, so that no answer is typed by hand.
# tests/12-solutions.t redoes the arithmetic in Perl.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"
formats="$bin/formats"
minigpt="$bin/minigpt --machine $(cd "$1" && pwd)/machine.json"
# This chapter's files only: none left from an earlier run.
rm -rf "$out"/12-ex* "$out/12-ranges.csv" "$out"/12-one-*.csv

# at FILE KEY: KEY of FILE.json.
at() {
    json "$out/$1.json" "$2"
}
# ranges: every format's range, once, as CSV (one line, a column
# FORMAT_FIELD for each field of each format).
$formats --ranges --csv > "$out/12-ranges.csv"
# column FILE NAME: the column NAME of the CSV FILE's second line; none
# stops the script.
column() {
    awk -F, -v name="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
        NR == 2 && (name in at) { print $at[name]; found = 1 }
        END { exit !found }' "$1" ||
    { echo "$0: no column $2 in $1" >&2; exit 1; }
}
# range FORMAT FIELD: one field of a format's range (largest,
# smallest_normal, smallest_subnormal, unit_roundoff, significant_bits).
range() {
    column "$out/12-ranges.csv" "$1_$2"
}
# rounded X FORMAT FIELD: FIELD (nearest, relative_error) of X rounded to
# FORMAT, as formats prints it (X is first read as an fp32 number, as the
# trainer holds it; FORMAT fp32 gives that number).
rounded() {
    [ -s "$out/12-one-$1.csv" ] || $formats "$1" --csv > "$out/12-one-$1.csv"
    if [ "$2" = fp32 ]; then column "$out/12-one-$1.csv" x
    else column "$out/12-one-$1.csv" "$2_$3"; fi
}
# percent X: a fraction as the book prints it, 4.6\,\%.
percent() {
    printf '%s\\,\\%%' "$(calc %.2g "100 * $1")"
}
# sci3 X: X as LaTeX writes it, three figures and a power of ten, or 0.
sci3() {
    awk -v x="$1" 'BEGIN { if (x == 0) { print 0; exit }
        a = x < 0 ? -x : x; e = int(log(a) / log(10)); if (a < 10 ^ e) e--
        m = sprintf("%.3g", x / 10 ^ e)
        if (m + 0 >= 10 || m + 0 <= -10) {
            e++; m = sprintf("%.3g", x / 10 ^ e) }
        printf "\\ensuremath{%s\\times10^{%d}}", m, e }'
}
# number X: a value as the solutions print it: 0, an overflow ($\infty$,
# or NaN where a format has no infinity), a plain number between 0.001
# and 10,000 (grouped above), or three figures and a power of ten.
number() {
    case "$1" in
    *[Ii]nf*) printf '$\\infty$' ;;
    *[Nn]a[Nn]*) printf 'NaN' ;;
    *) awk -v x="$1" 'BEGIN { a = x < 0 ? -x : x
           if (x == 0) r = 0; else if (a >= 1e-3 && a < 1e4) r = 1
           else if (a >= 1e4 && a < 1e7 && x == int(x)) r = 2; else r = 3
           exit r }' && echo 0 && return
       case $? in
       1) calc %.6g "$1" ;;
       2) grouped "$(calc %.0f "$1")" ;;
       *) sci3 "$1" ;;
       esac ;;
    esac
}
# error X: a relative error as a percentage, or a dash where the value
# overflowed.
error() {
    case "$1" in
    *[Nn]a[Nn]*|*[Ii]nf*) printf -- '---' ;;
    *) printf '%s\\,\\%%' "$(calc %.3g "100 * $1")" ;;
    esac
}
# bytes X: a size in GB or TB, three figures.
bytes() {
    awk -v x="$1" 'BEGIN { if (x >= 1e12) printf "%.3g\\,TB", x / 1e12
                           else printf "%.3g\\,GB", x / 1e9 }'
}

# ---------------------------------------------------------------- 12.1 -----
# Four formats side by side: formats --ranges, and four numbers rounded to
# each; the span of each format in powers of two, and fp16's range from
# its layout (5 exponent bits of bias 15, 10 fraction bits).
show "$out/12-ex1.txt" "$formats" 3e5 1e-6 1e-9 1.001
{
    for f in bf16:Bf fp16:Fp e4m3:Efour e5m2:Efive; do
        n=SolTwelveA${f#*:} k=${f%%:*}
        macro "${n}Max" "$(number "$(range $k largest)")"
        macro "${n}MinNormal" "$(number "$(range $k smallest_normal)")"
        macro "${n}MinSubnormal" "$(number "$(range $k smallest_subnormal)")"
        macro "${n}Unit" "$(number "$(range $k unit_roundoff)")"
        macro "${n}Bits" "$(range $k significant_bits)"
        macro "${n}Binades" "$(calc %.1f "log($(range $k largest) \
            / $(range $k smallest_subnormal)) / log(2)")"
        for x in 3e5:Big 1e-6:Micro 1e-9:Nano 1.001:Near; do
            v=$(rounded ${x%%:*} $k nearest)
            macro "${n}${x#*:}" "$(number "$v")"
            macro "${n}${x#*:}Error" "$(error \
                "$(rounded ${x%%:*} $k relative_error)")"
        done
    done
    # fp16 from its layout: bias 15, 10 fraction bits.
    macro SolTwelveALayoutMax "$(grouped "$(calc %.0f "(2 - 2^-10) * 2^15")")"
    macro SolTwelveALayoutMinNormal "$(number "$(calc %.10g "2^-14")")"
    macro SolTwelveALayoutMinSubnormal "$(number "$(calc %.10g "2^-24")")"
    macro SolTwelveALayoutUnit "$(number "$(calc %.10g "2^-11")")"
} > "$out/12-ex1-derived.tex"

# ---------------------------------------------------------------- 12.2 -----
# The update a weight can take: weights of 1 and 0.02, steps of Llama 3's
# peak and final rates, rounded by formats; the spacing above 0.02 in
# bf16; a thousand steps of the final rate on a weight of 1, in bf16 (one
# rounding is enough: the weight does not move, so every step is the
# first) and in fp32, rounded to nearest-even on 24 bits.
# stored W FORMAT: the weight W as FORMAT holds it.
stored() {
    rounded $1 $2 nearest
}
show "$out/12-ex2.txt" "$formats" "$(calc %.10g "$(stored 1 bf16) + 8e-5")" \
    "$(calc %.10g "$(stored 0.02 bf16) + 8e-5")"
bf_bits=$(range bf16 significant_bits)
{
    for w in 1:One 0.02:Small; do
        for r in 8e-5:Peak 8e-7:Final; do
            n=SolTwelveB${w#*:}${r#*:}
            for f in bf16:Bf fp16:Fp; do
                base=$(stored ${w%%:*} ${f%%:*})
                after=$(rounded "$(calc %.17g "$base + ${r%%:*}")" \
                        ${f%%:*} nearest)
                step=$(calc %.10g "$after - $base")
                macro "$n${f#*:}Step" "$(number "$step")"
                macro "$n${f#*:}StepRatio" "$(calc %.3g "$step / ${r%%:*}")"
            done
        done
    done
    # the spacing above 0.02 in bf16: 2^(e - (p - 1)), 2^e <= 0.02
    e=$(awk 'BEGIN { e = int(log(0.02) / log(2)); if (2 ^ e > 0.02) e--
                     print e }')
    macro SolTwelveBSpacing "$(sci3 "$(calc %.10g "2 ^ ($e - $bf_bits + 1)")")"
    macro SolTwelveBSmallest "$(sci3 "$(calc %.10g \
        "2 ^ ($e - $bf_bits + 1) / 2")")"
    macro SolTwelveBSmallBf "$(number "$(stored 0.02 bf16)")"
    macro SolTwelveBSmallFp "$(number "$(stored 0.02 fp16)")"
    macro SolTwelveBThousandBf "$(rounded 1.0000008 bf16 nearest)"
    # fp32's spacing is the same from 1 to 2, so every step of a thousand
    # is stored as the first one is.
    first=$(calc %.17g "$(rounded 1.0000008 fp32) - 1")
    macro SolTwelveBFloatStep "$(sci3 "$first")"
    macro SolTwelveBThousandFloat "$(calc %.7f "1 + 1000 * $first")"
    macro SolTwelveBThousandExact "$(calc %.7f "1 + 1000 * 8e-7")"
} > "$out/12-ex2-derived.tex"

# ---------------------------------------------------------------- 12.3 -----
# Choosing a loss scale: gradients from 2e-9 to 3 against fp16's range;
# the largest power-of-two scale; the dynamic scaler (start 2^16, halve
# and skip on overflow, double after 2,000 clean steps) over 10,000 steps.
fp_max=$(range fp16 largest)
fp_normal=$(range fp16 smallest_normal)
fp_sub=$(range fp16 smallest_subnormal)
low=2e-9 high=3
scale=$(awk -v m="$fp_max" -v g=$high 'BEGIN { s = 1
    while (2 * s * g <= m) s *= 2; print s }')
scaler=$(awk -v m="$fp_max" -v g=$high 'BEGIN {
    s = 65536; clean = 0
    for (step = 1; step <= 10000; step++) {
        if (s * g > m) { skips++; s /= 2; clean = 0; continue }
        if (++clean == 2000) { s *= 2; clean = 0 }
    }
    print skips, s }')
span() {
    calc %.10g "log($2 / $1) / log(2)"
}
{
    all=$(span $low $high)
    macro SolTwelveCSpan "$(calc %.1f "$all")"
    macro SolTwelveCBelowNormal "$(percent "$(span $low "$fp_normal") / $all")"
    macro SolTwelveCBelowSubnormal "$(percent "$(span $low "$fp_sub") / $all")"
    macro SolTwelveCScale "$(grouped "$scale")"
    macro SolTwelveCScaleLog "$(calc %.0f "log($scale) / log(2)")"
    macro SolTwelveCScaledMax "$(grouped "$(calc %.0f "$scale * $high")")"
    macro SolTwelveCSmallestNormal "$(sci3 "$(calc %.10g \
        "$fp_normal / $scale")")"
    macro SolTwelveCSkips "${scaler% *}"
    macro SolTwelveCFinalScale "$(grouped "${scaler#* }")"
} > "$out/12-ex3-derived.tex"

# ---------------------------------------------------------------- 12.4 -----
# The bytes of each convention: fleet memory for 70B and 405B in five
# conventions (fp8's: 8-bit weights, bf16 gradients, 1 + 2 + 4 + 8 bytes).
for p in 70e9:Seventy 405e9:FourHundred; do
    for c in mixed:Mixed fp32:Float lean:Lean fp32-grads:Grads \
             eight:Eight; do
        flags="--precision ${c%%:*}"
        [ ${c%%:*} = eight ] && flags="--bytes-per-param 15"
        $fleet memory --params ${p%%:*} $flags --json \
            --output "$out/12-ex4-${p%%:*}-${c%%:*}.json"
    done
done
show "$out/12-ex4.txt" "$fleet" memory --params 405e9 --bytes-per-param 15
quote_range "$out/12-ex4.txt" '^static state' '^GPUs to hold'
{
    for p in 70e9:Seventy 405e9:FourHundred; do
        for c in mixed:Mixed fp32:Float lean:Lean fp32-grads:Grads \
                 eight:Eight; do
            f=12-ex4-${p%%:*}-${c%%:*} n=SolTwelveD${p#*:}${c#*:}
            macro "${n}State" "$(bytes "$(at $f static_bytes)")"
            macro "${n}Gpus" "$(at $f gpus_min)"
        done
    done
    fp32_share=$($fleet memory --precisions --csv |
                 awk -F, '$1 == "mixed" { print ($5 + $7) / $8 }')
    macro SolTwelveDFpShare "$(percent "$fp32_share")"
    macro SolTwelveDFpBytes "$($fleet memory --precisions --csv |
                               awk -F, '$1 == "mixed" { print $5 + $7 }')"
    macro SolTwelveDMixedBytes "$($fleet memory --precisions --csv |
                                  awk -F, '$1 == "mixed" { print $8 }')"
    for c in eight:Eight lean:Lean; do
        macro "SolTwelveD${c#*:}Saves" "$(calc %d \
            "$(at 12-ex4-405e9-mixed gpus_min) \
             - $(at 12-ex4-405e9-${c%%:*} gpus_min)")"
    done
} > "$out/12-ex4-derived.tex"

# ---------------------------------------------------------------- 12.5 -----
# Which precision: the state of each run's model under the convention the
# solution chooses (A, D: mixed; B: mixed with fp16; C: fp32).
{
    for r in A:70e9:mixed B:7e9:mixed C:1e9:fp32 D:405e9:mixed; do
        set -- $(echo $r | tr : ' ')
        $fleet memory --params $2 --precision $3 --json \
            --output "$out/12-ex5-$1.json"
        macro "SolTwelveE$1State" "$(bytes "$(at 12-ex5-$1 static_bytes)")"
        macro "SolTwelveE$1Gpus" "$(at 12-ex5-$1 gpus_min)"
    done
    macro SolTwelveEBfUnit "$(number "$(range bf16 unit_roundoff)")"
    macro SolTwelveEFpMinNormal "$(number "$(range fp16 smallest_normal)")"
} > "$out/12-ex5-derived.tex"

# ---------------------------------------------------------------- 12.6 -----
# One outlier and one scale: 0.01 and 0.05 scaled to E4M3's largest
# number by the tensor's largest magnitude (2,000 with the outlier, 1
# without), rounded by formats; a block scale's bytes (an fp32 scale for
# 128 values of one byte).
e4_max=$(range e4m3 largest)
show "$out/12-ex6.txt" "$formats" "$(calc %.10g "0.01 * $e4_max / 2000")" \
    "$(calc %.10g "0.05 * $e4_max / 2000")"
{
    for amax in 2000:Outlier 1:Plain; do
        for x in 0.01:Hundredth 0.05:Twentieth; do
            s=$(calc %.10g "${x%%:*} * $e4_max / ${amax%%:*}")
            n=SolTwelveF${amax#*:}${x#*:}
            macro "${n}Scaled" "$(number "$s")"
            macro "${n}Value" "$(number "$(rounded $s e4m3 nearest)")"
            macro "${n}Error" "$(error "$(rounded $s e4m3 relative_error)")"
        done
    done
    macro SolTwelveFScaleOutlier "$(calc %.3g "$e4_max / 2000")"
    macro SolTwelveFBlockBytes "$(percent "4 / 128")"
    macro SolTwelveFEfourMinNormal "$(number "$(range e4m3 smallest_normal)")"
    macro SolTwelveFEfourMinSubnormal "$(number \
        "$(range e4m3 smallest_subnormal)")"
    macro SolTwelveFEfourUnit "$(number "$(range e4m3 unit_roundoff)")"
    macro SolTwelveFEfiveMax "$(grouped "$(range e5m2 largest)")"
} > "$out/12-ex6-derived.tex"

# ---------------------------------------------------------------- 12.7 -----
# Four runs and a log: minigpt's default model for 100 steps in fp32, bf16,
# fp16 and fp16 without loss scaling; fp16 again from a scale of 2^30; the
# first step's gradients by binary exponent; --verify for bf16 and fp16;
# the bytes held in bf16, and with --fp32-grads.
lab="--steps 100 --quiet"
cd "$out"
for p in fp32:fp32 bf16:bf16 fp16:fp16 plain:"fp16 --no-loss-scaling" \
         high:"fp16 --loss-scale 1073741824"; do
    $minigpt $lab --precision ${p#*:} --log 12-ex7-${p%%:*}.csv \
        --json --output 12-ex7-${p%%:*}.json
done
$minigpt --steps 1 --quiet --grad-histogram 12-ex7-histogram.csv \
    --json --output 12-ex7-step.json
$minigpt --steps 1 --quiet --precision bf16 --fp32-grads \
    --json --output 12-ex7-grads.json
# verify FORMAT: --verify --precision FORMAT, as a transcript and as JSON;
# its exit status (0 inside the tolerances, 1 outside) into NAME.status.
for f in bf16 fp16; do
    status=0
    $minigpt --verify --precision $f > 12-ex7-verify-$f.out || status=$?
    # the transcript, its long lines folded at a space to fit the page
    { echo "\$ minigpt --verify --precision $f"
      fold -s -w 80 12-ex7-verify-$f.out; } > 12-ex7-verify-$f.txt
    echo $status > 12-ex7-verify-$f.status
    $minigpt --verify --precision $f --json \
        --output 12-ex7-verify-$f.json || true
done
# The log of the run from 2^30: its skipped steps and the scale they end at.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    NR <= 9 { print $at["step"], $at["train_loss"], $at["grad_norm"],
              $at["loss_scale"], $at["skipped"] }' 12-ex7-high.csv |
    { echo "step train_loss grad_norm loss_scale skipped"; cat; } \
    > 12-ex7-high.txt
{
    for p in fp32:Float bf16:Bf fp16:Fp plain:Plain high:High; do
        macro "SolTwelveG${p#*:}Loss" "$(calc %.4f \
            "$(json 12-ex7-${p%%:*}.json val_loss)")"
        macro "SolTwelveG${p#*:}Skipped" \
            "$(json 12-ex7-${p%%:*}.json loss_scale_skipped_steps)"
        macro "SolTwelveG${p#*:}FinalScale" "$(grouped "$(calc %.0f \
            "$(json 12-ex7-${p%%:*}.json loss_scale_final)")")"
        # the gradient's norm over the last ten steps, on average
        macro "SolTwelveG${p#*:}GradNorm" "$(calc %.3g "$(awk -F, '
            NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
            { norm[NR] = $at["grad_norm"] }
            END { for (i = NR - 9; i <= NR; i++) s += norm[i]
                  printf "%.10g", s / 10 }' 12-ex7-${p%%:*}.csv)")"
    done
    macro SolTwelveGHighSkippedRows "$(awk -F, '
        NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
        $at["skipped"] == 1 { n++ } END { print n + 0 }' 12-ex7-high.csv)"
    # below fp16's smallest normal (2^-14), and below half its smallest
    # subnormal (2^-25), where a gradient rounds to zero
    share=$(awk -F, 'NR == 1 || $1 == "zero" { next }
        { n = $2 + $3; all += n; if ($1 < -14) below += n
          if ($1 < -25) flushed += n }
        END { printf "%.10g %.10g", below / all, flushed / all }' \
        12-ex7-histogram.csv)
    macro SolTwelveGBelowNormal "$(percent "${share% *}")"
    macro SolTwelveGFlushed "$(percent "${share#* }")"
    for f in bf16:Bf fp16:Fp; do
        v=12-ex7-verify-${f%%:*}.json
        macro "SolTwelveG${f#*:}Dloss" "$(sci3 "$(json $v relative_dloss)")"
        macro "SolTwelveG${f#*:}Dgrad" "$(sci3 \
            "$(json $v relative_dgrad_norm)")"
        macro "SolTwelveG${f#*:}LossTolerance" "$(sci3 \
            "$(json $v loss_tolerance)")"
        macro "SolTwelveG${f#*:}GradTolerance" "$(sci3 \
            "$(json $v grad_tolerance)")"
        macro "SolTwelveG${f#*:}VerifyStatus" \
            "$(cat 12-ex7-verify-${f%%:*}.status)"
    done
    # Does the unscaled run fail? As the chapter's Section "Without the
    # scaler" judges a run: its loss is not a number, or no lower than the
    # unigram entropy, the loss of a model that knows only frequencies.
    gaps=$(awk -v f="$(json 12-ex7-fp32.json val_loss)" \
               -v p="$(json 12-ex7-plain.json val_loss)" \
               -v u="$(json 12-ex7-plain.json unigram_entropy)" 'BEGIN {
        finite = p ~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/
        printf "%d %.10g\n", !finite || p + 0 >= u + 0, finite ? p - f : 0 }')
    macro SolTwelveGPlainFails "${gaps% *}"
    macro SolTwelveGPlainGap "$(sci3 "$(calc %.10g "sqrt((${gaps#* })^2)")")"
    params=$(json 12-ex7-bf16.json params)
    for k in weights:Weights gradients:Gradients \
             master_weights:MasterWeights moments:Moments; do
        macro "SolTwelveGBf${k#*:}Bytes" "$(calc %.6g \
            "$(json 12-ex7-bf16.json bytes_held_${k%%:*}) / $params")"
    done
    macro SolTwelveGBfBytes "$(json 12-ex7-bf16.json bytes_per_param)"
    macro SolTwelveGGradsBytes "$(json 12-ex7-grads.json bytes_per_param)"
} > 12-ex7-derived.tex
