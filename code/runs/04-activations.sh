# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# usage: sh code/runs/04-activations.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

# Design A: TP8 x FSDP128, one micro-batch of 4 x 4,096 tokens per replica.
a="--tp 8 --sequence-parallel --dp 128 --zero 3"
# Design B: TP8 x PP8 x DP16, 32 micro-batches of one 4,096-token sequence.
b="--tp 8 --sequence-parallel --pp 8 --micro-batches 32 --micro-batch 1
   --dp 16 --zero 1"
for r in none selective full; do
    case $r in none) R=None ;; selective) R=Selective ;; full) R=Full ;; esac
    $fleet activations $a --recompute $r --latex "ActA$R" \
           --output "$numbers/04-a-$r.tex"
    $fleet activations $b --recompute $r --latex "ActB$R" \
           --output "$numbers/04-b-$r.tex"
done
# The same with attention that writes its scores (Korthikanti et al.'s count).
for r in none selective; do
    case $r in none) R=None ;; selective) R=Selective ;; esac
    $fleet activations $a --attention materialized --recompute $r \
           --latex "ActAMat$R" --output "$numbers/04-a-mat-$r.tex"
    $fleet activations $b --attention materialized --recompute $r \
           --latex "ActBMat$R" --output "$numbers/04-b-mat-$r.tex"
done
# The transcripts: the table of variants from design A's, and the rest of
# each design's (its stages and its heaviest GPU) from the line of layers on.
$fleet activations $a --recompute selective --output "$transcripts/04-a.txt"
$fleet activations $b --recompute selective --output "$transcripts/04-b.txt"
sed -n '/^bytes one layer/,/^  this run/p' "$transcripts/04-a.txt" \
    > "$transcripts/04-layer.txt"
sed -n '/ parameters each/,$p' "$transcripts/04-a.txt" \
    > "$transcripts/04-design-a.txt"
sed -n '/ parameters each/,$p' "$transcripts/04-b.txt" \
    > "$transcripts/04-design-b.txt"

# 16k read as 16,000 tokens; 100 layers; no sequence parallelism.
$fleet activations --seq 4000 --tp 8 --sequence-parallel \
       --recompute selective --latex ActApprox --output "$numbers/04-approx.tex"
$fleet activations --layers 100 --tp 8 --sequence-parallel \
       --recompute selective --latex ActHundred \
       --output "$numbers/04-hundred.tex"
$fleet activations --tp 8 --recompute selective --dp 128 --zero 3 \
       --latex ActNoSp --output "$numbers/04-no-sp.tex"

# Stages: equal ones (64 layers), and design B under GPipe and interleaving.
$fleet activations --layers 64 --tp 8 --sequence-parallel --pp 8 \
       --micro-batches 32 --micro-batch 1 --dp 16 --zero 1 \
       --recompute selective --latex ActEqual --output "$numbers/04-equal.tex"
$fleet activations $b --recompute selective --schedule gpipe \
       --latex ActGpipe --output "$numbers/04-gpipe.tex"
$fleet activations $b --recompute selective --schedule interleaved \
       --chunks 2 --latex ActInterleaved --output "$numbers/04-interleaved.tex"

# The figure: bytes per layer against sequence length.
$fleet activations --tp 8 --sequence-parallel --micro-batch 1 --sweep \
       --attention materialized \
       --output "$data/04-per-layer.csv"
