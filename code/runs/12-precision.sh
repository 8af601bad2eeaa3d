# Tangled from chapters/95-parallel-plumbing.nw, chapters/99gp-precision-plumbing.nw and chapters/99gq-precision-runs.nw; edit the chapters, not this file.
# usage: sh code/runs/12-precision.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
numbers="$1/numbers" data="$1/data" work="$1/precision"
formats=$(cat code/common/formats.awk)
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
mkdir -p "$numbers" "$data"
rm -rf "$work" && mkdir -p "$work"
minigpt="$bin/minigpt --machine $machine --quiet"
steps=300 every=20
runs="fp32 bf16 fp16 fp8"
flags_of() {      # the trainer's flags for the run named $1
    case $1 in
        fp32-grads) echo "--precision bf16 --fp32-grads" ;;
        *) echo "--precision $1" ;;
    esac
}
for run in $runs; do
    histogram=
    case $run in
        fp32) histogram="--grad-histogram $data/12-histogram.csv" ;;
    esac
    echo "$minigpt $(flags_of $run) --steps $steps --eval-every $every \
$histogram --log $data/12-log-$run.csv --json \
--output $data/12-run-$run.json"
done | xargs -P 2 -I RUN sh -c RUN
for loss in train_loss val_loss; do
    for run in $runs; do echo "$data/12-log-$run.csv"; done |
    awk -v loss=$loss -v runs="$runs" '
        BEGIN { count = split(runs, run, " ") }
        {   k++
            while ((getline line < $0) > 0) {
                n = split(line, f, ",")
                if (f[1] == "step") {
                    for (i = 1; i <= n; i++) at[f[i]] = i
                    continue
                }
                if (f[at[loss]] == "") continue
                steps[f[1]] = 1; value[f[1], k] = f[at[loss]]
            } }
        END {
            printf "step"
            for (k = 1; k <= count; k++) printf ",%s", title(run[k])
            printf "\n"
            m = 0
            for (s in steps) order[++m] = s + 0
            for (i = 2; i <= m; i++)
                for (j = i; j > 1 && order[j - 1] > order[j]; j--) {
                    x = order[j]; order[j] = order[j - 1]; order[j - 1] = x
                }
            for (i = 1; i <= m; i++) {
                printf "%d", order[i]
                for (k = 1; k <= count; k++)
                    printf ",%s", value[order[i], k]
                printf "\n"
            }
        }
        function title(r) { return r == "fp16" ? "fp16 scaled" : r }' \
        > "$data/12-$loss.csv"
done
share_steps=100 share_most=14
tokens=$(awk -v b="$(field batch "$data/12-run-fp32.json")" \
             -v t="$(field seq "$data/12-run-fp32.json")" \
             'BEGIN { print b * t }')
octaves() {       # log2 of $1 tokens over $tokens, to the nearest
    awk -v n="$1" -v tokens=$tokens 'BEGIN {
        print int(log(n / tokens) / log(2) + 0.5) }'
}
# Chapter 3's designs A and B, as code/runs/03-step.sh runs them: the
# tokens of a replica's step, and of the whole step.
"$bin/fleet" step --tp 8 --zero 3 --json --output "$work/design-a.json"
"$bin/fleet" step --tp 8 --pp 8 --dp 16 --zero 1 --micro-batch-tokens 4096 \
    --json --output "$work/design-b.json"
k_a=$(octaves "$(field tokens_per_replica "$work/design-a.json")")
k_b=$(octaves "$(field tokens_per_replica "$work/design-b.json")")
k_global=$(octaves "$(field tokens_per_step "$work/design-a.json")")
shares=$(awk -v most=$share_most -v a=$k_a -v b=$k_b 'BEGIN {
    for (k = 0; k <= most; k += 2) s[k]; s[a]; s[b]
    for (k in s) print k }' | sort -n | tr '\n' ' ')
initial=$(field loss_scale_initial "$data/12-run-fp16.json")
fixed() { awk -v k=$1 'BEGIN { printf "--loss-scale %.17g", 2 ^ -k }'; }
share="$minigpt --steps $share_steps --eval-every $share_steps --json"
{   for k in $shares; do
        echo "$share --precision fp16 --no-loss-scaling $(fixed $k) \
--grad-histogram $work/share-$k.csv --output $work/share-$k.json"
    done
    echo "$share --output $work/share-fp32.json"
    echo "$share --precision bf16 --no-loss-scaling $(fixed $share_most) \
--output $work/share-bf16.json"
    echo "$share --precision fp16 --loss-scale $(awk -v s="$initial" \
-v k=$share_most 'BEGIN { printf "%.17g", s * 2 ^ -k }') \
--output $work/share-scaled.json"
} | xargs -P 2 -I RUN sh -c RUN
"$bin/formats" --ranges --json > "$data/12-ranges.json"
scale=$(field loss_scale_initial "$data/12-run-fp16.json")
awk -v scale="$scale" '
    function lg(x) { return log(x) / log(2) }
    /"format"/ { name = $2; gsub(/[",]/, "", name) }
    { key = $1; gsub(/[":]/, "", key); value = $2; sub(/,$/, "", value)
      limit[name, key] = value }
    END {
        printf "fp16_subnormal,fp16_normal,fp16_largest,bf16_subnormal,"
        printf "bf16_normal,scale,bf16_largest,fp16_roundoff,"
        printf "bf16_roundoff,fp16_bits,bf16_bits\n"
        printf "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%d\n",
            lg(limit["fp16", "smallest_subnormal"]),
            lg(limit["fp16", "smallest_normal"]),
            lg(limit["fp16", "largest"]),
            lg(limit["bf16", "smallest_subnormal"]),
            lg(limit["bf16", "smallest_normal"]), lg(scale),
            lg(limit["bf16", "largest"]),
            lg(limit["fp16", "unit_roundoff"]),
            lg(limit["bf16", "unit_roundoff"]),
            limit["fp16", "significant_bits"],
            limit["bf16", "significant_bits"]
    }' "$data/12-ranges.json" > "$data/12-limits.csv"
awk -F, 'NR == 1 { next }
         $1 == "zero" { next }
         { param[$1] = $2; activation[$1] = $3; p += $2; a += $3 }
         END {
             print "exponent,param_grads,activation_grads"
             for (e in param)
                 printf "%d,%.6g,%.6g\n", e, param[e] / p,
                        activation[e] / a
         }' "$data/12-histogram.csv" | sort -t, -k1,1g \
    > "$data/12-histogram-plot.csv"
$minigpt $(flags_of fp32-grads) --steps 1 --eval-every 1000 --json \
    --output "$data/12-run-fp32-grads.json"
"$bin/fleet" memory --precisions --csv > "$data/12-conventions.csv"
"$1/bin/formats" --ranges --csv | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    { e4m3 = $at["e4m3_bits"] / 8; bf16 = $at["bf16_bits"] / 8
      fp32 = $at["fp32_bits"] / 8
      printf "fp8,E4M3 weights + bf16 gradients,%g,%g,%g,0,%g,%g\n", e4m3,
             bf16, fp32, 2 * fp32, e4m3 + bf16 + 3 * fp32 }' \
    >> "$data/12-conventions.csv"
for run in fp32 bf16 fp16 fp32-grads fp8; do
    f="$data/12-run-$run.json"
    echo "$run $(field params "$f") $(field bytes_held_weights "$f") \
$(field bytes_held_gradients "$f") $(field bytes_held_master_weights "$f") \
$(field bytes_held_master_gradients "$f") $(field bytes_held_moments "$f") \
$(field bytes_held_buffers "$f") $(field bytes_per_param "$f")"
done > "$work/bytes.txt"
timed_steps=40 repeats="1 2 3"
for k in $repeats; do
    for run in fp32 bf16 fp16 fp8; do
        mpiexec -bind-to core -n 1 "$bin/minigpt" --machine "$machine" \
            $(flags_of $run) --steps $timed_steps --eval-every 1000 \
            --quiet --json --output "$work/time-$run-$k.json"
    done
done
for k in $repeats; do
    for run in fp32 bf16 fp16 fp8; do
        echo "$k $run $(field step_seconds_median "$work/time-$run-$k.json")"
    done
done > "$work/times.txt"
cpu=$(sed -n 's/^ *"cpu": *"\(.*\)",*$/\1/p' "$machine")
window=$("$bin/minigpt" --help |
         sed -n 's/.*--loss-scale-window.*(default \([0-9]*\)).*/\1/p')
common='
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function pc(x) { return (x == 0 ? "0" : x < 1e-4 ? sprintf("%.2g", 100 * x) \
                         : x > 0.995 && x < 1 ? sprintf("%.4g", 100 * x) \
                         : sig3(100 * x)) "\\,\\%" }
function finite(x) { return x ~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ }
function verdict(loss, base, yard, floor) {   # fp16 without the scaler
    return !finite(loss) || loss >= floor ? "failed" \
         : loss - base > yard ? "lagged" : "kept up" }
function signed(x,   a, e) {   # below 10^-4 as a power of ten
    a = x < 0 ? -x : x
    if (a == 0 || a >= 1e-4)
        return (x < 0 ? "$-$" : "+") sprintf("%.2g", a)
    e = int(log(a) / log(10)); if (10 ^ e > a) e--
    return sprintf("$%s%.2g \\times 10^{%d}$", x < 0 ? "-" : "+",
                   a / 10 ^ e, e) }
function camel(run) { return run == "fp32" ? "FpThirtyTwo" \
    : run == "bf16" ? "BfSixteen" : run == "fp16" ? "FpSixteen" \
    : run == "fp8" ? "FpEight" : "FpThirtyTwoGrads" }
function count(x) { return x <= 12 ? small[x] : grouped(x) }
BEGIN { split("one two three four five six seven eight nine ten " \
              "eleven twelve", small, " "); small[0] = "no" }
'
{
for run in $runs; do
    echo "$run $(field val_loss "$data/12-run-$run.json")"
done > "$work/losses.txt"
f="$data/12-run-fp32.json"
awk -v steps=$steps -v every=$every -v runs="$runs" \
    -v params="$(field params "$f")" -v layers="$(field layers "$f")" \
    -v hidden="$(field hidden "$f")" -v seq="$(field seq "$f")" \
    -v batch="$(field batch "$f")" -v vocab="$(field vocab "$f")" \
    -v unigram="$(field unigram_entropy "$f")" \
    -v curve="$data/12-val_loss.csv" -v first="$data/12-log-fp32.csv" \
    "$formats$common"'
    { val[$1] = $2 }
    END {
        macro("PrecRunParams", grouped(params))
        macro("PrecRunLayers", layers); macro("PrecRunHidden", hidden)
        macro("PrecRunSeq", seq); macro("PrecRunBatch", batch)
        macro("PrecRunVocab", vocab)
        macro("PrecRunSteps", steps); macro("PrecRunEvery", every)
        macro("PrecRunUnigram", sprintf("%.3f", unigram))
        getline line < first; getline line < first; split(line, f, ",")
        macro("PrecRunFirstLoss", sprintf("%.3f", f[3]))
        # fp32 validation loss, by step, for the slope at the end
        while ((getline line < curve) > 0) {
            split(line, f, ",")
            if (f[1] != "step") fp32_at[f[1] + 0] = f[2]
        }
        back = steps - 3 * every
        slope = (fp32_at[back] - fp32_at[steps]) / (3 * every)
        for (i = split(runs, run, " "); i >= 1; i--) {
            r = run[i]
            macro("PrecRunLoss" camel(r), finite(val[r]) \
                  ? sprintf("%.4f", val[r]) : "not a number")
            if (r != "fp32" && finite(val[r]))
                macro("PrecRunDiff" camel(r),
                      signed(val[r] - val["fp32"]))
        }
        d = val["bf16"] - val["fp32"]; if (d < 0) d = -d
        e = val["fp16"] - val["fp32"]; if (e < 0) e = -e
        yard = d > e ? d : e
        yardwords = sprintf("%.2g, the larger of the moves of bf16 " \
                            "(%.2g) and of scaled fp16 (%.2g)", yard, d, e)
        macro("PrecRunRoundingSpread", sprintf("%.2g", yard))
        macro("PrecRunRoundingVerdict", slope > 0 \
              ? sprintf("That is as much as fp32%ss own loss fell in " \
                        "about %s steps near the end of its run.", "\x27",
                        count(int(yard / slope + 0.5))) \
              : sprintf("fp32%ss own loss did not fall over the last " \
                        "%s steps of its run, so the difference cannot " \
                        "be put in steps.", "\x27", 3 * every))
if (!finite(val["fp8"]))
    macro("PrecRunFpEightVerdict", "fp8 failed: its validation loss " \
          "ended as " val["fp8"] ", not a number.")
else
    macro("PrecRunFpEightVerdict", sprintf("fp8 ended at %.4f, %s from " \
          "fp32%ss: %s than %s. One run of each cannot tell a " \
          "difference this small from the scatter of a run.", val["fp8"],
          signed(val["fp8"] - val["fp32"]), "\x27",
          (val["fp8"] - val["fp32"] > yard \
           || val["fp8"] - val["fp32"] < -yard) ? "further" \
          : "no further", yardwords))
    }' "$work/losses.txt"
awk -F, "$formats$common"'
    function whole(x,   k) {
        k = x < 0 ? -int(-x + 0.5) : int(x + 0.5)
        if (x - k > 1e-9 || k - x > 1e-9) {
            print "12-precision.sh: a floor is not a power of two" \
                  > "/dev/stderr"
            exit 1
        }
        return k
    }
    function below(kind, k,   e, n) {
        for (e in hist) { split(e, key, SUBSEP)
            if (key[1] == kind && key[2] + 0 < k) n += hist[e] }
        return n / total[kind]
    }
    function from(kind, k,   e, n) { return 1 - below(kind, k) }
    FILENAME ~ /limits/ {
        if (FNR == 2) {
            sub16 = whole($1); normal16 = whole($2); over16 = int($3) + 1
            sub_bf = whole($4); normal_bf = whole($5); s = whole($6)
            over_bf = int($7) + 1
            u16 = whole($8); u_bf = whole($9); bits16 = $10; bits_bf = $11
        }
        next
    }
    FNR == 1 || $1 == "zero" { next }
    {   e = $1 + 0
        hist["param", e] = $2; hist["activation", e] = $3
        total["param"] += $2; total["activation"] += $3
        if ($2 + $3 > 0 && (lo == "" || e < lo)) lo = e
        if ($2 + $3 > 0 && (hi == "" || e > hi)) hi = e }
    END {
        macro("PrecRunScaleExponent", s)
        macro("PrecRunHalfSubnormal", sub16)
        macro("PrecRunHalfNormal", normal16)
        macro("PrecRunHalfOverflow", over16)
        macro("PrecRunBfloatSubnormal", sub_bf)
        macro("PrecRunBfloatNormal", normal_bf)
        macro("PrecRunHalfRoundoff", u16)
        macro("PrecRunHalfBits", small[bits16])
        macro("PrecRunBfloatBits", small[bits_bf])
        macro("PrecRunBfloatRoundoff", u_bf)
        macro("PrecRunHalfOctaves", over16 - sub16)
        macro("PrecRunBfloatOctaves", over_bf - sub_bf)
        macro("PrecRunLowestExponent", lo)
        macro("PrecRunHighestExponent", hi)
        split("param activation", kinds, " ")
        split("Param Activation", names, " ")
        for (i = 1; i <= 2; i++) {
            k = kinds[i]; n = names[i]
            b[k] = below(k, sub16); bs[k] = below(k, sub16 - s)
            o[k] = from(k, over16 - s)
            macro("PrecRun" n "BelowSubnormal", pc(b[k]))
            macro("PrecRun" n "BelowSubnormalScaled", pc(bs[k]))
            macro("PrecRun" n "ToZero", pc(below(k, sub16 - 1)))
            macro("PrecRun" n "BelowNormal", pc(below(k, normal16)))
            macro("PrecRun" n "OverflowScaled", pc(o[k]))
            bf += below(k, sub_bf)
        }
        macro("PrecRunBfloatRoom", count(lo - sub_bf))
tail = b["param"] + b["activation"]; scaled = bs["param"] + bs["activation"]
over = o["param"] + o["activation"]
macro("PrecRunScaleVerdict", tail == 0 \
      ? "No nonzero gradient of the first step lies below fp16" "\x27" \
        "s smallest subnormal even unscaled: at this model" "\x27" "s " \
        "size the scale has no tail to rescue." \
      : scaled == 0 \
      ? sprintf("Scaled by $2^{%d}$, not one nonzero element of either " \
                "kind lies below fp16%ss smallest subnormal: the whole " \
                "tail moves into range.", s, "\x27") \
      : sprintf("Scaled by $2^{%d}$, the share below fp16%ss smallest " \
                "subnormal falls from %s to %s for the parameters%s " \
                "gradients and from %s to %s for the activations%s: " \
                "the scale moves most of the tail into range, not all " \
                "of it.", s, "\x27", pc(b["param"]), pc(bs["param"]),
                "\x27", pc(b["activation"]), pc(bs["activation"]), "\x27"))
macro("PrecRunOverflowVerdict", over == 0 \
      ? sprintf("None reaches $2^{%d}$ once scaled, so the scale costs " \
                "nothing at the top: the largest element, below " \
                "$2^{%d}$, scales to below $2^{%d}$, under fp16%ss " \
                "largest value.", over16, hi + 1, hi + 1 + s, "\x27") \
      : sprintf("Once scaled, %s of the parameters%s gradients and %s of " \
                "the activations%s reach $2^{%d}$ or more, beyond fp16%ss " \
                "largest value: such a step overflows, and the scaler " \
                "skips it and halves the scale.", pc(o["param"]), "\x27",
                pc(o["activation"]), "\x27", over16, "\x27"))
macro("PrecRunBfloatVerdict", bf == 0 \
      ? sprintf("No element comes near bf16%ss floor: the smallest lies " \
                "in the octave of $2^{%d}$, %s octaves above bf16%ss " \
                "smallest subnormal, $2^{%d}$.", "\x27", lo,
                count(lo - sub_bf), "\x27", sub_bf) \
      : sprintf("Some elements lie below even bf16%ss smallest " \
                "subnormal, $2^{%d}$: the smallest in the octave of " \
                "$2^{%d}$.", "\x27", sub_bf, lo))
    }' "$data/12-limits.csv" "$data/12-histogram.csv"
for run in fp32 bf16 scaled $shares; do
    echo "$run $(field val_loss "$work/share-$run.json")"
done > "$work/share-losses.txt"
awk -F'[, ]' -v tokens=$tokens -v steps=$share_steps -v most=$share_most \
    -v k_a=$k_a -v k_b=$k_b -v k_global=$k_global -v shares="$shares" \
    -v scaled_scale="$(field loss_scale_initial "$work/share-scaled.json")" \
    -v scaled_final="$(field loss_scale_final "$work/share-scaled.json")" \
    -v unigram="$(field unigram_entropy "$data/12-run-fp32.json")" \
    -v table="$data/12-share.csv" -v lines="$data/12-share-lines.csv" \
    -v prediction="$data/12-share-predicted.csv" \
    "$formats$common"'
    FILENAME ~ /limits/ { if (FNR == 2) floor16 = -int(-$1 + 0.5) - 1
                          next }
    FILENAME ~ /losses/ { loss[$1] = $2; next }
    FNR == 1 { next }
    {   r = FILENAME ~ /share-/ ? FILENAME : "fp32"
        sub(/.*share-/, "", r); sub(/\.csv$/, "", r)
        if ($1 == "zero") { zero[r, 1] = $2; zero[r, 2] = $3; next }
        total[r, 1] += $2; total[r, 2] += $3
        hist[r, 1, $1 + 0] = $2; hist[r, 2, $1 + 0] = $3 }
    function below(r, i, e,   x, n) {    # kind i of run r below 2^e
        for (x in hist) { split(x, key, SUBSEP)
            if (key[1] == r && key[2] == i && key[3] + 0 < e) n += hist[x] }
        return n
    }
    function lost(k, i) { return (zero[k, i] + below(k, i, floor16 + k) \
                                  - zero["fp32", i]) / total["fp32", i] }
    function predicted(k, i) { return below("fp32", i, floor16 + k) \
                                      / total["fp32", i] }
    function prev(k,   j) { for (j = 2; j <= n; j++) if (ks[j] == k) \
                                return ks[j - 1] }
    function shown(x) { return finite(x) ? sprintf("%.4f", x) \
                                         : "not a number" }
    function shown_gap(k) { return finite(loss[k]) \
                                   ? signed(loss[k] - loss["fp32"]) \
                                   : "as NaN" }
    END {
        n = split(shares, ks, " ")
        base = loss["fp32"]
        d = loss["bf16"] - base; if (d < 0) d = -d
        e = loss["scaled"] - base; if (e < 0) e = -e
        yard = d > e ? d : e
        print "k,tokens,predicted_activation,lost_activation," \
              "predicted_param,lost_param,val_loss" > table
        for (j = 1; j <= n; j++) {
            k = ks[j]
            printf "%d,%d,%.6g,%.6g,%.6g,%.6g,%s\n", k, tokens * 2 ^ k,
                   predicted(k, 2), lost(k, 2), predicted(k, 1), lost(k, 1),
                   finite(loss[k]) ? loss[k] : "nan" > table
        }
        close(table)
        print "fp32,unigram,bf16,scaled,most,k_a,k_b,yard" > lines
        printf "%s,%s,%s,%s,%d,%d,%d,%.9g\n", base, unigram, loss["bf16"],
               loss["scaled"], most, k_a, k_b, yard > lines
        close(lines)
        macro("PrecShareSteps", steps); macro("PrecShareTokens", tokens)
        macro("PrecShareMost", most); macro("PrecShareFlushOctave", -floor16)
        listed = ks[1]
        for (j = 2; j <= n; j++)
            listed = listed (j == n ? " \\text{ and } " : ", ") ks[j]
        macro("PrecShareKs", listed)
        macro("PrecShareLossFpThirtyTwo", sprintf("%.4f", base))
        macro("PrecShareYard", sprintf("%.2g", yard))
        for (k = 0; k <= most; k++)        # the prediction, for the figure
            printf "%d,%.6g,%.6g\n", k, predicted(k, 2),
                   predicted(k, 1) > prediction
        close(prediction)
        macro("PrecShareUnscaledActivationLost", pc(lost(0, 2)))
        macro("PrecShareUnscaledParamLost", pc(lost(0, 1)))
for (j = 1; j <= n; j++) gap[ks[j]] = finite(loss[ks[j]]) \
                                      ? loss[ks[j]] - base : 1e30
onset = ""
for (j = 1; j <= n && onset == ""; j++) {
    rises = 1
    for (i = j; i <= n; i++) rises = rises && gap[ks[i]] > yard
    if (rises) onset = ks[j]
}
early = ""; early_most = 0; early_count = 0
for (j = 1; j <= n; j++)
    if ((onset == "" || ks[j] + 0 < onset + 0) && gap[ks[j]] > yard) {
        early_k[++early_count] = ks[j]
        early_most = gap[ks[j]] > early_most ? gap[ks[j]] : early_most
    }
for (j = 1; j <= early_count; j++)
    early = early (j == 1 ? "" : j == early_count ? " and " : ", ") \
            "$k = " early_k[j] "$"
fail = ""
for (j = 1; j <= n && fail == ""; j++)
    if (verdict(loss[ks[j]], base, yard, unigram) == "failed") fail = ks[j]
below_onset = early_count == 0 ? " Below it, none did." \
    : sprintf(" Below it, the run%s at %s ended above the band " \
              "too, by at most %.2g, and the others did not: with one " \
              "run at each $k$, a cost that small is not told apart from a " \
              "path%ss own scatter.", early_count > 1 ? "s" : "", early,
              early_most, "\x27")
macro("PrecShareOnsetVerdict", onset == "" \
      ? sprintf("bf16 and fp16 with the scaler, which differ from fp32 " \
                "in rounding alone, ended within %.2g of it. No share up " \
                "to $k = %d$ began a stretch of runs that all ended " \
                "further above fp32 than that.", yard, most) \
      : sprintf("bf16 and fp16 with the scaler, which differ from fp32 " \
                "in rounding alone, ended within %.2g of it. From " \
                "$k = %d$ on, every run without the scaler ended further " \
                "above: %s at $k = %d$, where the histogram predicts " \
                "that %s of the activations%s gradients flush and the " \
                "run%ss own first step lost %s.%s", yard, onset,
                signed(gap[onset]), onset, pc(predicted(onset, 2)), "\x27",
                "\x27", pc(lost(onset, 2)), below_onset))
after = ""; after_count = 0; after_failed = 0
for (j = 1; j <= n; j++) {
    k = ks[j]
    if (fail == "" || k + 0 <= fail + 0) continue
    if (verdict(loss[k], base, yard, unigram) == "failed") {
        after_failed++
        continue
    }
    after = after (after_count++ ? "; " : "") sprintf("at $k = %d$, with " \
            "%s of the activations%s gradients lost, it ended at %s",
            k, pc(lost(k, 2)), "\x27", shown(loss[k]))
}
if (fail == "")
    macro("PrecShareFailVerdict", sprintf("None failed outright: at " \
          "$k = %d$, where %s of the activations%s gradients are " \
          "predicted to flush, the loss still ended at %s, below the " \
          "%.3f of a model that knows only how often each token occurs.",
          most, pc(predicted(most, 2)), "\x27", shown(loss[most]),
          unigram))
else
    macro("PrecShareFailVerdict", sprintf("At $k = %d$, a step over %s " \
          "tokens, the run failed: its loss ended at %s, %s. Its first " \
          "step lost %s of the activations%s gradients and %s of the " \
          "parameters%s.%s", fail, grouped(tokens * 2 ^ fail),
          shown(loss[fail]), finite(loss[fail]) \
          ? sprintf("above the %.3f of a model that knows only how " \
                    "often each token occurs", unigram) \
          : "not a number", pc(lost(fail, 2)), "\x27", pc(lost(fail, 1)),
          "\x27", after_count == 0 \
          ? (after_failed > 0 ? " So did every run at a larger share." \
                              : "") \
          : sprintf(" Past it, the loss no longer follows the fraction " \
                    "lost: %s, below the unigram entropy.", after)))
worst = 0; at_worst = ks[1]; param_over = ""
for (j = 1; j <= n; j++) {
    k = ks[j]
    if (fail != "" && k + 0 >= fail + 0) continue
    d = lost(k, 2) - predicted(k, 2); if (d < 0) d = -d
    if (d >= worst) { worst = d; at_worst = k }
    if (param_over == "" && lost(k, 1) > 2 * predicted(k, 1) \
        && predicted(k, 1) > 0.01)
        param_over = k
}
macro("PrecShareCascadeVerdict", sprintf("%s each run%ss first step lost " \
      "the fraction of the activations%s gradients that fp32%ss " \
      "histogram predicts, to within %.2g points (at $k = %d$: %s " \
      "predicted, %s lost).%s%s", fail == "" ? "At every share" \
      : sprintf("Below $k = %d$,", fail), "\x27", "\x27", "\x27",
      100 * worst, at_worst, pc(predicted(at_worst, 2)),
      pc(lost(at_worst, 2)), fail == "" ? "" \
      : sprintf(" At $k = %d$ it lost %s where %s was predicted: a " \
                "gradient computed from one that is partly flushed is " \
                "smaller than fp32%ss, and more of it flushes in turn.",
                fail, pc(lost(fail, 2)), pc(predicted(fail, 2)), "\x27"),
      param_over == "" ? "" \
      : sprintf(" The parameters%s gradients part from their prediction " \
                "sooner: at $k = %d$, %s lost where %s was predicted.",
                "\x27", param_over, pc(lost(param_over, 1)),
                pc(predicted(param_over, 1)))))
split("A B", names, " "); kk["A"] = k_a; kk["B"] = k_b
for (i = 1; i <= 2; i++) {
    x = names[i]; k = kk[x]
    macro("PrecShareDesign" x "K", k)
    macro("PrecShareDesign" x "Predicted", pc(predicted(k, 2)))
    macro("PrecShareDesign" x "Lost", pc(lost(k, 2)))
    macro("PrecShareDesign" x "Diff", finite(loss[k]) \
          ? signed(loss[k] - base) : "not a number")
    w = verdict(loss[k], base, yard, unigram)
    said[x] = k == onset \
        ? sprintf("Design~%s%ss share, $k = %d$, is that onset.", x, "\x27",
                  k) \
        : sprintf("Design~%s%ss share, $k = %d$, lies %s: %s of the " \
                  "activations%s gradients flushed, and the run ended " \
                  "%s from fp32, %s.", x, "\x27", k, onset == "" \
                  ? "where no onset was found" : k + 0 < onset + 0 \
                  ? "below the onset" : "above the onset",
                  pc(lost(k, 2)), "\x27", shown_gap(k), w == "kept up" \
                  ? "within rounding" "\x27" "s band" : w == "lagged" \
                  ? "above rounding" "\x27" "s band" : "a failed run")
}
macro("PrecShareDesignVerdict", said["A"] " " said["B"])
macro("PrecShareGlobalK", k_global)
macro("PrecShareScaledDiff", signed(loss["scaled"] - base))
macro("PrecShareBfSixteenDiff", signed(loss["bf16"] - base))
macro("PrecShareUnscaledMostDiff", finite(loss[most]) \
      ? signed(loss[most] - base) : "not a number")
macro("PrecShareScaledScale", sprintf("%.6g", scaled_scale))
macro("PrecShareCureVerdict", sprintf("At $k = %d$, where fp16 without " \
      "the scaler ended %s from fp32, fp16 with it ended %s and bf16 %s: " \
      "%s. The scaler%ss $S$ started at $2^{%d} \\times 2^{-%d} = %s$ " \
      "and %s.", most, shown_gap(most), signed(loss["scaled"] - base),
      signed(loss["bf16"] - base), \
      verdict(loss["scaled"], base, yard, unigram) == "kept up" \
      && verdict(loss["bf16"], base, yard, unigram) == "kept up" \
      ? sprintf("both within rounding%ss band, which they set, so the " \
                "scale undid the factor $2^{-%d}$", "\x27", most) \
      : "not both within rounding" "\x27" "s band", "\x27",
      int(log(scaled_scale) / log(2) + 0.5) + most, most,
      sprintf("%.6g", scaled_scale), scaled_final == scaled_scale \
      ? "held there all run: no step overflowed and none of its windows " \
        "of clean steps ended" \
      : sprintf("ended at %.6g", scaled_final)))
macro("PrecShareLesson", fail == "" \
      ? sprintf("in this book%ss small model %s of the activations%s " \
                "gradients at its first step; a step over $2^{%d}$ " \
                "times as many tokens moves each micro-batch%ss " \
                "gradients %d octaves down, and there it loses %s of " \
                "them", "\x27", pc(lost(0, 2)), "\x27", most, "\x27", most,
                pc(lost(most, 2))) \
      : sprintf("in this book%ss small model %s of the activations%s " \
                "gradients at its first step, too few to matter; a step " \
                "over $2^{%d}$ times as many tokens moves each " \
                "micro-batch%ss gradients " \
                "%d octaves down, and there it loses %s of them and " \
                "after %d steps ends no better than a model that knows " \
                "only how often each token occurs", "\x27", pc(lost(0, 2)),
                "\x27", fail, "\x27", fail, pc(lost(fail, 2)), steps))
macro("PrecShareMeaning", sprintf("Without the scaler, fp16 loses what " \
      "falls below its floor, and how much falls there is set by the " \
      "tokens a step averages over, one octave per doubling. At this " \
      "model%ss own step of %s tokens it lost %s of the activations%s " \
      "gradients, and its loss ended %s; %s " \
      "(Section~\\ref{sec:precision-share}). The scaler costs a skipped " \
      "step now and then, and once it has grown to a step%ss $1/N$ it " \
      "undoes it, for any distribution no wider than fp16%ss window.",
      "\x27", grouped(tokens), pc(lost(0, 2)), "\x27",
      verdict(loss[0], base, yard, unigram) == "kept up" \
      ? "within rounding" "\x27" "s band" \
      : shown_gap(0) " from fp32" "\x27" "s", fail == "" \
      ? sprintf("at the $1/N$ of a step over %s tokens it lost %s and " \
                "its loss ended %s from fp32%ss, without failing",
                grouped(tokens * 2 ^ most), pc(lost(most, 2)),
                shown_gap(most), "\x27") \
      : sprintf("at the $1/N$ of a step over %s tokens it lost %s, and " \
                "the run failed", grouped(tokens * 2 ^ fail),
                pc(lost(fail, 2))), "\x27", "\x27"))
    }' "$data/12-limits.csv" "$work/share-losses.txt" \
    "$data/12-histogram.csv" $(for k in $shares; do
                                   echo "$work/share-$k.csv"; done)
f="$data/12-run-fp16.json"
awk -F, -v window="$window" -v steps=$steps \
    -v initial="$(field loss_scale_initial "$f")" \
    -v final="$(field loss_scale_final "$f")" \
    -v skipped="$(field loss_scale_skipped_steps "$f")" \
    -v growths="$(field loss_scale_growths "$f")" \
    -v table="$numbers/12-precision-scale.tex" "$formats$common"'
    function power(x,   k) {       # 65536 as $2^{16}$, if it is one
        k = int(log(x) / log(2) + 0.5)
        return 2 ^ k == x ? sprintf("$2^{%d}$", k) : grouped(x)
    }
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    {   scale = $at["loss_scale"]
        if (rows == 0 || scale != at_scale[rows]) {
            rows++; at_scale[rows] = scale; first[rows] = $1
        }
        last[rows] = $1; skips[rows] += $at["skipped"]
        if ($at["skipped"] == 1 && ++n_skipped <= 8)
            skipped_list = skipped_list (n_skipped > 1 ? ", " : "") $1
        else if ($at["skipped"] == 1 && n_skipped == 9)
            skipped_list = skipped_list " and later"
    }
    END {
        print "\\begin{tabular}{lrr}\n\\hline" > table
        print "steps & loss scale & skipped \\\\\n\\hline" > table
        for (i = 1; i <= rows; i++)
            printf "%s & %s & %d \\\\\n", first[i] == last[i] ? first[i] \
                   : first[i] "--" last[i], power(at_scale[i]),
                   skips[i] > table
        print "\\hline\n\\end{tabular}" > table
        close(table)
        macro("PrecRunScaleInitial", power(initial))
        macro("PrecRunScaleFinal", power(final))
        macro("PrecRunSkipped", count(skipped))
        macro("PrecRunGrowths", count(growths))
        macro("PrecRunWindow", grouped(window))
        ended = sprintf("the scale ended at %s", power(final)) \
              (growths > 0 ? sprintf(", after %s %s", count(growths),
                                     growths == 1 ? "doubling" \
                                     : "doublings") \
              : window > steps ? sprintf(", and could not grow, since the " \
                                         "window of %s clean steps that " \
                                         "doubles it is longer than the run",
                                         grouped(window)) : "")
        macro("PrecRunScaleStory", skipped == 0 \
              ? sprintf("No step overflowed in %s steps; %s.", steps,
                        ended) \
              : skipped == 1 \
              ? sprintf("One step overflowed, step %s: it was skipped and " \
                        "the scale halved; %s.", skipped_list, ended) \
              : sprintf("%s steps overflowed (steps %s), each skipped and " \
                        "each halving the scale; %s.",
                        toupper(substr(count(skipped), 1, 1)) \
                        substr(count(skipped), 2), skipped_list, ended))
    }' "$data/12-log-fp16.csv"
f="$data/12-run-fp8.json"
awk -F, -v table="$numbers/12-precision-bytes.tex" -v params="$(field \
    params "$f")" -v layers="$(field layers "$f")" -v hidden="$(field \
    hidden "$f")" "$formats$common"'
    function per(x) { return x == int(x) ? x : sprintf("%.3g", x) }
    FILENAME ~ /conventions/ {
        if (FNR == 1) { for (i = 1; i <= NF; i++) at[$i] = i; next }
        key = $at["key"]
        conv[key] = $at["weights"] " " $at["gradients"] " " \
                    $at["master_weights"] " " $at["master_gradients"] " " \
                    $at["optimizer"] " " $at["total"]
        next
    }
    {   split($0, f, " "); run = f[1]; n = f[2]
        held[run] = per(f[3] / n) " " per(f[4] / n) " " per(f[5] / n) " " \
                    per(f[6] / n) " " per(f[7] / n) " " per(f[9])
        buffers[run] = f[8]; order[++runs] = run }
    END {
        split("fp32:fp32 bf16:mixed fp16:mixed fp32-grads:fp32-grads " \
              "fp8:fp8", pairs, " ")
        for (i in pairs) { split(pairs[i], p, ":"); convention[p[1]] = p[2] }
        label["fp32"] = "fp32"; label["bf16"] = "bf16"
        label["fp16"] = "fp16"; label["fp32-grads"] = "bf16, fp32 gradients"
        label["fp8"] = "fp8"
        print "\\begin{tabular}{lrrrrrrlr}\n\\hline" > table
        print " & \\multicolumn{6}{c}{held, bytes per parameter} & " \
              "\\multicolumn{2}{c}{Part I" "\x27" "s convention} \\\\" > table
        print "run & w & g & mw & mg & moments & total & name & total " \
              "\\\\\n\\hline" > table
        agree = 0
        for (i = 1; i <= runs; i++) {
            r = order[i]; c = convention[r]
            split(held[r], h, " "); split(conv[c], k, " ")
            row = label[r]
            for (j = 1; j <= 6; j++) row = row " & " h[j]
            printf "%s & %s & %s \\\\\n", row, c, k[6] > table
            macro("PrecRunBytes" camel(r), h[6])
            if (r == "fp8") {
                eight = h[1]; eight_total = h[6]
                eight_convention = k[6]; eight_convention_weights = k[1]
                continue                 # in a sentence of its own, below
            }
            same = held[r] == conv[c]
            agree += same
            if (!same) differs = differs (differs == "" ? "" : "; ") \
                sprintf("%s holds %s where %s counts %s", label[r],
                        held[r], c, conv[c])
        }
        print "\\hline\n\\end{tabular}" > table
        close(table)
        macro("PrecRunBuffersBfSixteen",
              sprintf("%.3g", buffers["bf16"] / 1e3) "~kB")
        macro("PrecRunBytesVerdict", agree == runs - ("fp8" in held) \
              ? "Each run but fp8 holds, kind by kind, what its " \
                "convention counts." \
              : "Not every run holds what its convention counts: " \
                differs ".")
        share = 12 * layers * hidden * hidden / params  # the E4M3 matrices
        macro("PrecRunBytesEightShare", pc(share))
        macro("PrecRunBytesEightVerdict", sprintf("fp8 holds %s bytes a " \
              "parameter where its convention counts %s: the convention " \
              "puts every weight in E4M3, and the trainer holds only the " \
              "blocks" "\x27" " four weight matrices there, %s of the " \
              "parameters, each with a scale; the embeddings, the head, " \
              "the layer norms and the biases stay in bf16, which puts " \
              "the weights at %s bytes a parameter rather than %s.",
              eight_total, eight_convention, pc(share), eight,
              eight_convention_weights))
    }' "$data/12-conventions.csv" "$work/bytes.txt"
awk -v cpu="$cpu" -v timed=$timed_steps -v repeats="$repeats" \
    "$formats$common"'
    function median(run) { return median_of(t, run, n[run]) }
    { t[$2, ++n[$2]] = $3; turn[$2, $1] = $3; turns[$1] = 1 }
    END {
        macro("PrecRunCpu", cpu); macro("PrecRunTimedSteps", timed)
        macro("PrecRunRepeats", count(split(repeats, r, " ")))
        for (run in n) macro("PrecRunStep" camel(run), duration(median(run)))
        split("bf16 fp16 fp8", sixteen, " ")
        for (i = 1; i <= 3; i++) {
            x = sixteen[i]; lo[x] = hi[x] = ""
            for (k in turns) {
                q = turn[x, k] / turn["fp32", k]
                if (lo[x] == "" || q < lo[x]) lo[x] = q
                if (hi[x] == "" || q > hi[x]) hi[x] = q
            }
            ratio[x] = median(x) / median("fp32")
            macro("PrecRunRatio" camel(x), sprintf("%.2f", ratio[x]))
            macro("PrecRunRatio" camel(x) "Range",
                  sprintf("%.2f--%.2f", lo[x], hi[x]))
        }
        macro("PrecRunCostVerdict", lo["bf16"] > 1 \
              ? sprintf("In each of the %s turns a bf16 step took longer " \
                        "than an fp32 step: what the 16-bit format adds " \
                        "here is only work, the conversions.",
                        count(split(repeats, r, " "))) \
              : hi["bf16"] < 1 \
              ? sprintf("In each of the %s turns a bf16 step took less " \
                        "time than an fp32 step, though it does the same " \
                        "fp32 arithmetic and more: the smaller weights " \
                        "and gradients must have saved more time in the " \
                        "memory than the conversions cost.",
                        count(split(repeats, r, " "))) \
              : sprintf("On this CPU a bf16 step and an fp32 step took " \
                        "about as long: the ratio, %.2f, ranged from " \
                        "%.2f to %.2f over the %s turns, across one, so " \
                        "this machine cannot tell what the conversions " \
                        "cost from its own noise.", ratio["bf16"],
                        lo["bf16"], hi["bf16"],
                        count(split(repeats, r, " "))))
more = less = all = 0
for (k in turns) {
    all++
    if (turn["fp16", k] > turn["bf16", k]) more++
    if (turn["fp16", k] < turn["bf16", k]) less++
}
macro("PrecRunHalfVerdict", more == all \
      ? "fp16 cost more than bf16 in every turn. bf16 is the top half " \
        "of an fp32" "\x27" "s bits, so rounding to it is an addition " \
        "and a shift; fp16 has an exponent of its own, and a number " \
        "outside its normal range, such as a subnormal gradient, takes " \
        "the slower, general way through the format" "\x27" "s " \
        "fields." \
      : less == all \
      ? "fp16 cost less than bf16 in every turn, though its rounding " \
        "has more to do: this machine" "\x27" "s noise, or its memory, " \
        "decided the difference, not the conversions." \
      : "The turns do not agree on which of fp16 and bf16 cost more.")
    }' "$work/times.txt"
} > "$numbers/12-precision.tex"
