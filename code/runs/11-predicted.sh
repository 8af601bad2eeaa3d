# Tangled from chapters/99e-predict-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/11-predicted.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet" machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
shape="--layers 8 --hidden 64 --heads 8 --seq 64 --vocab 32 --batch 32
       --micro-batches 4"
# shellcheck disable=SC2086  # $shape is words
$fleet layout --machine "$machine" $shape \
    --output "$transcripts/11-predicted.txt"
$fleet layout --machine "$machine" $shape --latex Pred \
    --output "$numbers/11-predicted.tex"
$fleet layout --machine "$machine" $shape --csv \
    --output "$data/11-predicted.csv"
awk -F, "$formats"'
function name(i) { return "$" tp[i] " \\times " pp[i] " \\times " dp[i] "$" }
function costliest(i,   best, k) {
    best = 1
    for (k = 2; k <= 6; k++)
        if (cost[i, k] > cost[i, best]) best = k
    return best
}
function say(prefix, i,   k) {
    k = costliest(i)
    printf "\\newcommand{\\%s}{%s}\n", prefix, name(i)
    printf "\\newcommand{\\%sStep}{%s}\n", prefix, duration(step[i])
    printf "\\newcommand{\\%sCompute}{%s}\n", prefix, duration(compute[i])
    printf "\\newcommand{\\%sComputeShare}{%.3g\\,\\%%}\n", prefix,
           100 * compute[i] / step[i]
    printf "\\newcommand{\\%sPart}{%s}\n", prefix, part[k]
    printf "\\newcommand{\\%sPartTime}{%s}\n", prefix, duration(cost[i, k])
}
BEGIN {
    split("the tensor-parallel all-reduces,the pipeline'"'"'s messages," \
          "the gradient'"'"'s all-reduces,the bubble,the optimizer," \
          "the rest of the step", part, ",")
    split("One Two Three Four Five Six Seven Eight", word, " ")
}
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
    n = NR - 1
    ranks[n] = $c["ranks"]; tp[n] = $c["tp"]; pp[n] = $c["pp"]
    dp[n] = $c["dp"]; step[n] = $c["step_breakdown_step_s"]
    compute[n] = $c["step_breakdown_compute_s"]
    cost[n, 1] = $c["step_breakdown_exposed_comm_s_tp"]
    cost[n, 2] = $c["step_breakdown_exposed_comm_s_pp"]
    cost[n, 3] = $c["step_breakdown_exposed_comm_s_dp"]
    cost[n, 4] = $c["step_breakdown_bubble_s"]
    cost[n, 5] = $c["step_breakdown_optimizer_s"]
    cost[n, 6] = $c["step_breakdown_other_s"]
    if (!(ranks[n] in first)) first[ranks[n]] = n
    last[ranks[n]] = n
    count[ranks[n]]++
}
END {
    for (r in first) {
        w = "Pred" word[r]
        printf "\\newcommand{\\%sLayouts}{%d}\n", w, count[r]
        say(w "Fastest", first[r])
        say(w "Slowest", last[r])
    }
}' "$data/11-predicted.csv" > "$numbers/11-predicted-chosen.tex"
