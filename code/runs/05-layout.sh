# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# usage: sh code/runs/05-layout.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
A="--tp 8 --pp 1 --dp 128 --fsdp 1"
B="--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule 1f1b --micro-batch 1"
llama="--layers 126 --hidden 16384 --ffn 53248 --gated --heads 128
       --kv-heads 8 --vocab 128000 --batch-tokens 16777216"
# The awk functions that write numbers as every printer does: grouped, 1,024,
# and duration, 388 ms (Appendix A).
formats=$(cat code/common/formats.awk)

# best KEY FLAGS...: one field of the best layout fleet layout finds.
best() {
    key=$1
    shift
    $fleet layout "$@" --csv \
        | awk -F, -v k="$key" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
                               NR == 2 { print $c[k] }'
}

$fleet pipeline --pp 8 --micro-batches 32 --output "$transcripts/05-pipeline.txt"
$fleet pipeline --pp 8 --micro-batches 32 --latex Pipe \
                --output "$numbers/05-pipe.tex"
$fleet pipeline --pp 8 --micro-batches 32 --schedule interleaved --chunks 4 \
                --latex PipeInter --output "$numbers/05-pipe-inter.tex"
$fleet pipeline --pp 8 --micro-batches 32 --schedule zb-h1 --latex PipeZb \
                --output "$numbers/05-pipe-zb.tex"
$fleet pipeline --pp 8 --micro-batches 4 --schedule zb-h1 \
                --latex PipeZbShort --output "$numbers/05-pipe-zb-short.tex"
# The chapter says that with m < p zb-h1 idles more than its closed form.
$fleet pipeline --pp 8 --micro-batches 4 --schedule zb-h1 --csv \
    | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
               NR == 2 && $c["bubble"] <= $c["closed_bubble"] {
                   print "05-layout.sh: zb-h1 with m < p idles no more " \
                         "than its closed form" > "/dev/stderr"; exit 1 }'
$fleet pipeline --pp 8 --micro-batches 16 --trace --output "$data/05-trace-8.csv"
$fleet pipeline --pp 8 --micro-batches 16 --schedule zb-h1 --trace \
                --output "$data/05-trace-8-zb.csv"
$fleet pipeline --pp 16 --micro-batches 32 --schedule interleaved --chunks 2 \
                --trace --output "$data/05-trace-16.csv"
$fleet pipeline --pp 16 --micro-batches 32 --schedule zb-h1 --trace \
                --output "$data/05-trace-16-zb.csv"
$fleet pipeline --pp 4 --micro-batches 8 --p2p-seconds 0.5 \
                --latex PipeWire --output "$numbers/05-pipe-wire.tex"
if $fleet pipeline --pp 8 --micro-batches 12 --schedule interleaved \
          --chunks 2 2> "$transcripts/05-deadlock.txt" > /dev/null; then
    echo "05-layout.sh: the deadlock the chapter shows did not happen" >&2
    exit 1
fi
$fleet layout $A --top 1 --output "$transcripts/05-design-a.txt"
$fleet layout $B --top 1 --output "$transcripts/05-design-b.txt"
$fleet layout $A --latex DesA --output "$numbers/05-des-a.tex"
$fleet layout $B --latex DesB --output "$numbers/05-des-b.tex"
$fleet layout $A --nic-gbps 200 --latex DesAslow \
              --output "$numbers/05-des-a-slow.tex"
$fleet layout $B --nic-gbps 200 --latex DesBslow \
              --output "$numbers/05-des-b-slow.tex"
$fleet layout --top 6 --output "$transcripts/05-plan.txt"
$fleet layout --latex Plan --output "$numbers/05-plan.tex"
# At 200 Gbps: the winner, its derivation and the runners-up; the heading
# is 05-plan.txt's but for the NIC.
$fleet layout --nic-gbps 200 --top 4 \
    | awk 'BEGIN { RS = "" } /^(best:|memory per GPU| +layout)/ {
               printf "%s%s\n", n++ ? "\n" : "", $0 } END { exit !n }' \
    > "$transcripts/05-plan-slow.txt"
$fleet layout --nic-gbps 200 --latex PlanSlow --output "$numbers/05-plan-slow.tex"
$fleet layout --tp 16 --cross-node-tp --latex TpWide \
              --output "$numbers/05-tp16.tex"
$fleet layout --layers 100 --latex Hundred --output "$numbers/05-hundred.tex"
# TP16 per micro-batch of A's 16,384 tokens: what a ring sends, and the
# element count 8 b s h (t-1)/t a layer that counts each buffer once.
t16="--tp 16 --cross-node-tp --pp 1 --fsdp 1 --micro-batch 4"
ring=$(best tp_bytes $t16)
m16=$(best microbatches $t16)
# The compute one such micro-batch gives each of the 16 GPUs, 6N x 16,384
# tokens / 16 at 40 % of peak; and TP16's all-reduce time a step were its
# traffic spread over a node's eight NICs instead of one (chapter 3).
tps=$(best tp_s --tp 16 --cross-node-tp)
awk -v b="$ring" -v m="$m16" -v t="$tps" "$formats"'
BEGIN {
    printf "\\newcommand{\\TpWideRingGb}{%s}\n", grouped(b / m / 1e9)
    printf "\\newcommand{\\TpWideNicTime}{%s}\n", duration(b / m / 50e9)
    printf "\\newcommand{\\TpWideMicroComputeTime}{%s}\n",
           duration(6e11 * 16384 / 16 / (989e12 * 0.4))
    printf "\\newcommand{\\TpWideMicroCount}{%d}\n", m
    printf "\\newcommand{\\TpWideSpreadTime}{%s}\n", duration(t / 8) }' \
    > "$numbers/05-tp16-micro.tex"
# What decides A against B: FSDP's exposed seconds (A's exposed less the
# tensor-parallel all-reduces both pay) against B's bubble and B's exposed
# pipeline and gradient traffic; the winner and its margin. The chapter's
# sentences assume A ahead at 400 Gbps and B at 200: stop if that turns.
for d in "400 A" "200 Aslow"; do
    set -- $d
    awk -v ae="$(best exposed_s $A --nic-gbps $1)" \
        -v at="$(best tp_s $A --nic-gbps $1)" \
        -v as="$(best step_time_s $A --nic-gbps $1)" \
        -v bb="$(best bubble_s $B --nic-gbps $1)" \
        -v be="$(best exposed_s $B --nic-gbps $1)" \
        -v bt="$(best tp_s $B --nic-gbps $1)" \
        -v bs="$(best step_time_s $B --nic-gbps $1)" -v n="$2" "$formats"'
BEGIN {
        printf "\\newcommand{\\Ab%sFsdpExposedTime}{%s}\n", n,
               duration(ae - at)
        printf "\\newcommand{\\Ab%sBubbleTime}{%s}\n", n, duration(bb)
        printf "\\newcommand{\\Ab%sBWaitTime}{%s}\n", n, duration(be - bt)
        printf "\\newcommand{\\Ab%sWinner}{%s}\n", n, as < bs ? "A" : "B"
        printf "\\newcommand{\\Ab%sMargin}{%.0f\\,\\%%}\n", n,
               100 * (as < bs ? (bs - as) / bs : (as - bs) / as) }'
done > "$numbers/05-decide.tex"
if ! grep -q 'AbAWinner}{A}' "$numbers/05-decide.tex" \
   || ! grep -q 'AbAslowWinner}{B}' "$numbers/05-decide.tex"; then
    echo "05-layout.sh: design A no longer wins at 400 Gbps and loses at 200;" \
         "the chapter's decision must be rewritten" >&2
    exit 1
fi
echo "nic_gbps,ratio_a,ratio_b,step_a,step_b" > "$data/05-ratio.csv.tmp"
for nic in 100 125 150 175 200 225 250 275 300 325 350 375 400 450 500 600 \
           700 800; do
    echo "$nic,$(best comm_compute_ratio $A --nic-gbps $nic),$(best \
          comm_compute_ratio $B --nic-gbps $nic),$(best step_time_s $A \
          --nic-gbps $nic),$(best step_time_s $B --nic-gbps $nic)"
done >> "$data/05-ratio.csv.tmp"
mv "$data/05-ratio.csv.tmp" "$data/05-ratio.csv"
awk -F, 'NR > 2 && !done && (pa - pb) * ($4 - $5) <= 0 {
             x = pn + ($1 - pn) * (pa - pb) / ((pa - pb) - ($4 - $5))
             printf "\\newcommand{\\CrossNicGbps}{%.0f}\n", 10 * int(x / 10 + 0.5)
             done = 1 }
         NR > 1 { pn = $1; pa = $4; pb = $5 }' "$data/05-ratio.csv" \
    > "$numbers/05-cross.tex"
grep -q CrossNicGbps "$numbers/05-cross.tex"
awk -F, 'NR > 2 && !done && (pa - pb) * ($4 - $5) <= 0 {
             f = (pa - pb) / ((pa - pb) - ($4 - $5))
             print "nic_gbps,ratio_a"
             printf "%.6g,%.6g\n", pn + ($1 - pn) * f, ra + ($2 - ra) * f
             done = 1 }
         NR > 1 { pn = $1; pa = $4; pb = $5; ra = $2 }' "$data/05-ratio.csv" \
    > "$data/05-cross.csv"
low="" high=""
for h in 0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.65 0.7 \
         0.75 0.8 0.85 0.9 0.95 1; do
    a4=$(best step_time_s $A --overlap $h)
    b4=$(best step_time_s $B --overlap $h)
    a2=$(best step_time_s $A --overlap $h --nic-gbps 200)
    b2=$(best step_time_s $B --overlap $h --nic-gbps 200)
    if awk "BEGIN { exit !($a4 < $b4 && $a2 > $b2) }"; then
        low=${low:-$h}
        high=$h
    fi
done
test -n "$low"
printf '\\newcommand{\\OverlapLow}{%s}\n\\newcommand{\\OverlapHigh}{%s}\n' \
       "$low" "$high" > "$numbers/05-overlap.tex"
# The kernel rate from which B's 1F1B pipeline overtakes A at 400 Gbps:
# faster kernels shrink the compute FSDP hides behind, and the bubble with it.
flip=""
for e in $(LC_ALL=C seq 0.40 0.01 0.80); do
    if awk "BEGIN { exit !($(best step_time_s $B --compute-efficiency $e) \
                        <= $(best step_time_s $A --compute-efficiency $e)) }"; then
        flip=$e
        break
    fi
done
test -n "$flip"
awk -v e="$flip" 'BEGIN {
    printf "\\newcommand{\\EffFlip}{%.0f\\,\\%%}\n", 100 * e }' \
    > "$numbers/05-eff-flip.tex"
$fleet layout $llama --seq 8192 --gpus 16384 --top 5 \
              --output "$transcripts/05-405b.txt"
$fleet layout $llama --seq 8192 --gpus 16384 --latex Big \
              --output "$numbers/05-big.tex"
$fleet layout $llama --seq 8192 --gpus 16384 --tp 8 --pp 16 --dp 128 \
              --fsdp 0 --latex BigPub --output "$numbers/05-big-pub.tex"
$fleet layout $llama --seq 8192 --gpus 8192 --tp 8 --pp 16 --dp 64 \
              --fsdp 0 --schedule interleaved --latex PubEight \
              --output "$numbers/05-pub-8k.tex"
$fleet layout $llama --seq 8192 --gpus 16384 --tp 8 --pp 16 --dp 128 \
              --fsdp 0 --schedule interleaved --latex PubSixteen \
              --output "$numbers/05-pub-16k.tex"
$fleet layout $llama --seq 131072 --gpus 16384 --tp 8 --cp 16 --pp 16 --dp 8 \
              --fsdp 0 --schedule interleaved --latex PubLong \
              --output "$numbers/05-pub-long.tex"
# The step each published MFU implies: model FLOPs ÷ (MFU × peak); the
# layout's efficiency, compute ÷ step; the kernel rate the published MFU
# implies, MFU ÷ (predicted MFU ÷ kernel rate assumed); and the prediction
# at 75 % of peak, a large bf16 GEMM's rate on an H100 (an assumption).
for row in "Eight 8192 1 64 8192 0.43" "Sixteen 16384 1 128 8192 0.41" \
           "Long 16384 16 8 131072 0.38"; do
    set -- $row
    run="$llama --seq $5 --gpus $2 --tp 8 --cp $3 --pp 16 --dp $4 --fsdp 0"
    flops=$(best model_flops $run)
    mfu=$(best mfu $run --schedule interleaved --compute-efficiency 0.4)
    compute=$(best compute_s $run --schedule interleaved --compute-efficiency 0.4)
    step=$(best step_time_s $run --schedule interleaved --compute-efficiency 0.4)
    high=$(best mfu $run --schedule interleaved --compute-efficiency 0.75)
    awk -v f="$flops" -v u="$6" -v n="$1" -v m="$mfu" -v c="$compute" \
        -v s="$step" -v h="$high" 'BEGIN {
        printf "\\newcommand{\\Pub%sPublishedStep}{%.1f}\n", n, f / (u * 989e12)
        printf "\\newcommand{\\Pub%sLayoutEfficiency}{%.0f\\,\\%%}\n", n,
               100 * c / s
        printf "\\newcommand{\\Pub%sImpliedEfficiency}{%.0f\\,\\%%}\n", n,
               100 * u * 0.4 / m
        printf "\\newcommand{\\Pub%sMfuAtHigh}{%.1f\\,\\%%}\n", n, 100 * h }'
done > "$numbers/05-pub-steps.tex"
# How much longer the published degrees' step is than the planner's best.
awk -v b="$(best step_time_s $llama --seq 8192 --gpus 16384)" \
    -v p="$(best step_time_s $llama --seq 8192 --gpus 16384 --tp 8 --pp 16 \
            --dp 128 --fsdp 0)" 'BEGIN {
    printf "\\newcommand{\\BigPubMargin}{%.0f\\,\\%%}\n", 100 * (p - b) / b }' \
    > "$numbers/05-big-margin.tex"
$fleet layout --csv --output "$data/05-search.csv"
# How many of the search's layouts lie off the search figure's axes (12 s, 10 GB).
awk -F, "$formats"'
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
$c["step_time_s"] > 12 { above++ }
$c["memory_per_gpu_bytes"] < 10e9 { left++ }
END { printf "\\newcommand{\\SearchAbove}{%s}\n", grouped(above)
      printf "\\newcommand{\\SearchLeft}{%s}\n", grouped(left) }' \
    "$data/05-search.csv" > "$numbers/05-search-off.tex"
{
    $fleet layout $A --csv | sed -n 1p | sed 's/^/label,/'
    for case in "A:$A" "B:$B" "B-full:$B --recompute full" \
                "TP4 × PP8:--tp 4 --pp 8 --dp 32 --fsdp 0" \
                "TP8 × PP4:--tp 8 --pp 4 --dp 32 --fsdp 0" \
                "TP8 × DP128:--tp 8 --pp 1 --dp 128 --fsdp 0 --recompute full"; do
        label=${case%%:*}
        $fleet layout ${case#*:} --csv | sed -n 2p | sed "s/^/$label,/"
    done
} > "$data/05-memory.csv.tmp"
mv "$data/05-memory.csv.tmp" "$data/05-memory.csv"
$fleet layout --gpus 2048 $(echo $A | sed 's/--dp 128//') --latex LatTwo \
              --output "$numbers/05-lat-2k.tex"
$fleet layout --gpus 4096 $(echo $A | sed 's/--dp 128//') --latex LatFour \
              --output "$numbers/05-lat-4k.tex"
# Ten trillion tokens on five times the fleet, 5,120 GPUs: the planner's best
# with the same 2M-token batch and with 10M-token steps, and the days each takes.
for row in "Two 2097152" "Ten 10485760"; do
    set -- $row
    awk -v n="$1" -v b="$2" -v l="$(best layout --gpus 5120 --batch-tokens $2)" \
        -v s="$(best step_time_s --gpus 5120 --batch-tokens $2)" \
        -v m="$(best mfu --gpus 5120 --batch-tokens $2)" "$formats"'
BEGIN {
        printf "\\newcommand{\\TenWide%sLayout}{%s}\n", n, l
        printf "\\newcommand{\\TenWide%sMfu}{%.0f\\,\\%%}\n", n, 100 * m
        printf "\\newcommand{\\TenWide%sDays}{%s}\n", n,
               grouped(10e12 / b * s / 86400) }'
done > "$numbers/05-tenfold-wide.tex"
