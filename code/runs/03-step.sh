# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# usage: sh code/runs/03-step.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet step --parts                    --output "$transcripts/03-parts.txt"
$fleet step --parts --csv              --output "$data/03-parts.csv"

# Design A and design B, the same batch on the same fleet.
a="--tp 8 --zero 3"
b="--tp 8 --pp 8 --dp 16 --zero 1 --micro-batch-tokens 4096"
$fleet step $a                         --output "$transcripts/03-design-a.txt"
$fleet step $a --latex DesignA         --output "$numbers/03-design-a.tex"
$fleet step $b                         --output "$transcripts/03-design-b.txt"
$fleet step $b --latex DesignB         --output "$numbers/03-design-b.tex"
$fleet step $a --nic-gbps 200 --latex SlowNic \
                                       --output "$numbers/03-slow-nic.tex"
$fleet step $b --nic-gbps 200 --latex SlowNicB \
                                       --output "$numbers/03-slow-nic-b.tex"
$fleet step $a --link-efficiency 0.8 --latex Efficient \
                                       --output "$numbers/03-efficient.tex"
$fleet step $a --in-network --latex DesignASharp \
                                       --output "$numbers/03-design-a-sharp.tex"
$fleet step $b --in-network --latex DesignBSharp \
                                       --output "$numbers/03-design-b-sharp.tex"
# Design B with a plain all-reduce instead of ZeRO-1, the case SHARP helps.
$fleet step --tp 8 --pp 8 --dp 16 --zero 0 --micro-batch-tokens 4096 \
            --in-network --latex DesignBPlainSharp \
                                       --output "$numbers/03-design-b-plain-sharp.tex"
# The chapter says SHARP leaves design B's NIC bytes as they are (ZeRO-1 sends
# halves) and lowers them for a plain all-reduce; stop if that is not so.
nic_bytes() {
    $fleet step "$@" --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
        c[$i] = i } NR == 2 { print $c["nic_bytes_per_step"] }'
}
b_ring=$(nic_bytes $b) b_sharp=$(nic_bytes $b --in-network)
b_plain=$(nic_bytes --tp 8 --pp 8 --dp 16 --zero 0 --micro-batch-tokens 4096 \
                    --in-network)
test -n "$b_ring" && test "$b_sharp" = "$b_ring" || {
    echo "03-step.sh: SHARP changes design B's NIC bytes under ZeRO-1" >&2; exit 1; }
test -n "$b_plain" && awk -v p="$b_plain" -v r="$b_ring" 'BEGIN { exit !(p < r) }' || {
    echo "03-step.sh: SHARP does not lower a plain all-reduce's NIC bytes" >&2; exit 1; }
# It also says both designs send the same NVLink bytes, with and without NVLS.
nvlink_bytes() {
    $fleet step "$@" --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
        c[$i] = i } NR == 2 { print $c["nvlink_bytes_per_step"] }'
}
for sharp in "" --in-network; do
    na=$(nvlink_bytes $a $sharp) nb=$(nvlink_bytes $b $sharp)
    test -n "$na" && test "$na" = "$nb" || {
        echo "03-step.sh: designs A and B differ on NVLink ($sharp)" >&2; exit 1; }
done
# Design B's per-GPU figures average the layers over the stages; a real
# pipeline gives whole layers to each stage.
$fleet step $b --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
    NR == 2 { l = $c["layers"]; p = $c["pp"]; lo = int(l / p); hi = lo + (l % p > 0)
        nhi = l % p; nlo = p - nhi
        printf "\\newcommand{\\DesignBLayersPerStage}{%g}\n", l / p
        printf "\\newcommand{\\DesignBStageLayersHigh}{%d}\n", hi
        printf "\\newcommand{\\DesignBStagesHigh}{%d}\n", nhi
        printf "\\newcommand{\\DesignBStageLayersLow}{%d}\n", lo
        printf "\\newcommand{\\DesignBStagesLow}{%d %s}\n", nlo,
            nlo == 1 ? "stage" : "stages"
        printf "\\newcommand{\\DesignBBusiestStagePercent}{%.1f}\n",
            100 * (hi * p / l - 1) }' > "$numbers/03-design-b-stages.tex"
grep -q DesignBStagesLow "$numbers/03-design-b-stages.tex"
# A larger fleet with the same global batch.
$fleet step $a --gpus 8192 --latex Wide --output "$numbers/03-wide.tex"

# Tensor parallelism inside the node, and across two nodes.
$fleet tp                              --output "$transcripts/03-tp8.txt"
$fleet tp --latex TpEight              --output "$numbers/03-tp8.tex"
$fleet tp --in-network --latex TpNvls  --output "$numbers/03-tp-nvls.tex"
$fleet tp --tp 16 --link nic           --output "$transcripts/03-tp16.txt"
$fleet tp --tp 16 --link nic --latex TpSixteen \
                                       --output "$numbers/03-tp16.tex"
$fleet tp --tp 16 --link nic --layers 50 --bytes-per-element 1 \
          --latex TpRound              --output "$numbers/03-tp-round.tex"

# Published throughputs as utilisation of the dense peak (Llama 3 405B).
llama="--params 405e9 --tokens 15.6e12"
$fleet compute $llama --gpus 8192  --achieved-flops 430e12 --latex LlamaEight \
               --output "$numbers/03-llama-8k.tex"
$fleet compute $llama --gpus 16384 --achieved-flops 400e12 --latex LlamaSixteen \
               --output "$numbers/03-llama-16k.tex"
$fleet compute $llama --gpus 16384 --achieved-flops 380e12 --latex LlamaLong \
               --output "$numbers/03-llama-long.tex"

# ZeRO's stages: design A's sharded state, plain data parallelism, the sweep.
$fleet memory --params 12.5e9 --zero 3 --dp 128 \
    | sed -n '/^ZeRO stage/,$p' > "$transcripts/03-zero-3.txt"
test -s "$transcripts/03-zero-3.txt"
$fleet memory --params 12.5e9 --zero 3 --dp 128 --latex ZeroThree \
              --output "$numbers/03-zero-3.tex"
$fleet memory --params 100e9 --zero 0 --dp 16 --latex ZeroZero \
              --output "$numbers/03-zero-0.tex"
$fleet memory --params 100e9 --zero-sweep --output "$data/03-zero.csv"
$fleet memory --params 100e9 --csv --output "$data/03-zero-card.csv"
ratios() {   # ratios FLAGS...: the NIC's two ratios of one run, "r,rb"
    $fleet step "$@" --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
        c[$i] = i } NR == 2 { printf "%s,%s", $c["nic_ratio"],
        $c["nic_bandwidth_ratio"] }'
}
{
    echo "nic_gbps,a_ratio,a_bandwidth_ratio,b_ratio,b_bandwidth_ratio"
    for g in 100 150 200 300 400 600 800 1200 1600; do
        echo "$g,$(ratios $a --nic-gbps $g),$(ratios $b --nic-gbps $g)"
    done
} > "$data/03-nic.csv"
