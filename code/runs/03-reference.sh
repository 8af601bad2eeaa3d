# Tangled from chapters/03-reference.nw; edit the chapter, not this file.
# usage: sh code/runs/03-reference.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$bin/minigpt --sample 288 --output "$transcripts/03-sample.txt"
$bin/minigpt --quiet --log "$data/03-loss.csv" --profile "$data/03-profile.csv" \
             --transcript "$transcripts/03-train.txt" \
             --latex Train --output "$numbers/03-train.tex"
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16"
$bin/minigpt --gradcheck $tiny --output "$transcripts/03-gradcheck-fp32.txt"
$bin/minigpt-fp64 --gradcheck $tiny --output "$transcripts/03-gradcheck.txt"
$bin/minigpt-fp64 --gradcheck $tiny --latex Gradcheck \
                  --output "$numbers/03-gradcheck.tex"
$bin/minigpt --verify --micro-batches 4 --output "$transcripts/03-verify.txt"
$bin/minigpt --verify --micro-batches 4 --latex Verify \
             --output "$numbers/03-verify.tex"
$bin/matmul-bench --transcript "$transcripts/03-bench.txt" \
                  --latex Bench --output "$numbers/03-bench.tex"
