# Tangled from chapters/06-reference.nw; edit the chapter, not this file.
# usage: sh code/runs/06-reference.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$bin/minigpt --sample 288 --output "$transcripts/06-sample.txt"
$bin/minigpt --quiet --log "$data/06-loss.csv" --profile "$data/06-profile.csv" \
             --transcript "$transcripts/06-train.txt" \
             --latex Train --output "$numbers/06-train.tex"
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16"
$bin/minigpt --gradcheck $tiny --output "$transcripts/06-gradcheck-fp32.txt"
$bin/minigpt-fp64 --gradcheck $tiny --output "$transcripts/06-gradcheck.txt"
$bin/minigpt-fp64 --gradcheck $tiny --latex Gradcheck \
                  --output "$numbers/06-gradcheck.tex"
$bin/minigpt --verify --micro-batches 4 --output "$transcripts/06-verify.txt"
$bin/minigpt --verify --micro-batches 4 --latex Verify \
             --output "$numbers/06-verify.tex"
$bin/matmul-bench --transcript "$transcripts/06-bench.txt" \
                  --latex Bench --output "$numbers/06-bench.tex"
