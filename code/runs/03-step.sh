# Tangled from chapters/03-step.nw; edit the chapter, not this file.
# usage: sh code/runs/03-step.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet step --parts                    --output "$transcripts/03-parts.txt"
$fleet step --parts --csv              --output "$data/03-parts.csv"

# Design A (the defaults) and design B, the same batch on the same fleet.
b="--tp 8 --pp 8 --dp 16 --zero 0 --micro-batch-tokens 4096"
$fleet step                            --output "$transcripts/03-design-a.txt"
$fleet step --latex DesignA            --output "$numbers/03-design-a.tex"
$fleet step $b                         --output "$transcripts/03-design-b.txt"
$fleet step $b --latex DesignB         --output "$numbers/03-design-b.tex"

# Tensor parallelism inside the node, and across two nodes.
$fleet tp                              --output "$transcripts/03-tp8.txt"
$fleet tp --latex TpEight              --output "$numbers/03-tp8.tex"
$fleet tp --tp 16 --link nic           --output "$transcripts/03-tp16.txt"
$fleet tp --tp 16 --link nic --latex TpSixteen \
                                       --output "$numbers/03-tp16.tex"

# ZeRO's stages: design A's sharded state, plain data parallelism, the sweep.
$fleet memory --params 12.5e9 --zero 3 --dp 128 \
              --output "$transcripts/03-zero-3.txt"
$fleet memory --params 12.5e9 --zero 3 --dp 128 --latex ZeroThree \
              --output "$numbers/03-zero-3.tex"
$fleet memory --params 100e9 --zero 0 --dp 16 --latex ZeroZero \
              --output "$numbers/03-zero-0.tex"
$fleet memory --params 100e9 --zero-sweep --output "$data/03-zero.csv"
