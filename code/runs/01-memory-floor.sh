# Tangled from chapters/01-memory-floor.nw; edit the chapter, not this file.
# usage: sh code/runs/01-memory-floor.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet memory --precisions              --output "$transcripts/01-precisions.txt"
$fleet memory --precisions --csv        --output "$data/01-precisions.csv"
$fleet memory --params 100e9 --gpu h100 --output "$transcripts/01-floor.txt"
$fleet memory --params 100e9 --gpu h100 --latex Floor \
              --output "$numbers/01-floor.tex"
$fleet memory --params 70e9  --gpu h200 --latex Seventy \
              --output "$numbers/01-h200.tex"
$fleet memory --params 100e9 --precision lean       --latex Lean \
              --output "$numbers/01-lean.tex"
$fleet memory --params 100e9 --precision fp32-grads --latex FpGrads \
              --output "$numbers/01-fp32-grads.tex"
$fleet memory --params 100e9 --precision mt-nlg     --latex Mtnlg \
              --output "$numbers/01-mt-nlg.tex"
