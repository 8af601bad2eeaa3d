# Tangled from chapters/05-sharded-state.nw; edit the chapter, not this file.
# usage: sh code/runs/05-sharded-state.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet memory --params 12.5e9 --zero 3 --dp 128 \
       --output "$transcripts/05-zero-3.txt"
$fleet memory --params 12.5e9 --zero 3 --dp 128 --latex ZeroThree \
       --output "$numbers/05-zero-3.tex"
$fleet memory --params 100e9 --zero 0 --dp 16 --latex ZeroZero \
       --output "$numbers/05-zero-0.tex"
$fleet memory --params 100e9 --zero-sweep --output "$data/05-zero.csv"
