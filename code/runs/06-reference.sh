# Tangled from chapters/06-reference.nw; edit the chapter, not this file.
# usage: sh code/runs/06-reference.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

machine="$1/machine.json"

$bin/minigpt --sample 288 --output "$transcripts/06-sample.txt"
$bin/minigpt --quiet --machine "$machine" --log "$data/06-loss.csv" \
             --profile "$data/06-profile.csv" \
             --transcript "$transcripts/06-train.txt" \
             --latex Train --output "$numbers/06-train.tex"
# value NAME: the number in \TrainNAME (a share such as 28.8\,\% as 28.8).
value() {
    v=$(grep -F "{\\Train$1}{" "$numbers/06-train.tex" |
        sed 's/.*}{//; s/}$//' | tr -d ',\\%')
    test -n "$v" || { echo "$0: no \\Train$1 in $numbers/06-train.tex" >&2
                      exit 1; }
    echo "$v"
}
share=$(value MatmulFraction)
{
    if awk "BEGIN { exit !($share < 50) }"; then
        printf '%s\n' '\newcommand{\TrainMfuWhy}{Yet the profile gives the' \
            'matrix multiplies only \TrainMatmulFraction{} of a step: most of it' \
            'goes to attention, the element-wise layers and the optimizer, which' \
            'do little arithmetic per byte they touch' \
            '(Figure~\ref{fig:profile}).}' \
            '\newcommand{\TrainMfuBecause}{most of a step goes to work that is' \
            'not a matrix multiply: the multiplies take \TrainMatmulFraction{}' \
            'of it, and run at \TrainMatmulFlops{} FLOP/s themselves.}'
    else
        printf '%s\n' '\newcommand{\TrainMfuWhy}{The profile gives the matrix' \
            'multiplies \TrainMatmulFraction{} of a step, and the rest to' \
            'attention, the element-wise layers and the optimizer' \
            '(Figure~\ref{fig:profile}).}' \
            '\newcommand{\TrainMfuBecause}{the matrix multiplies, which take' \
            '\TrainMatmulFraction{} of a step, run at \TrainMatmulFlops{}' \
            'FLOP/s, and the rest of the step adds time for few counted FLOPs.}'
    fi
} > "$numbers/06-mfu.tex"
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16"
$bin/minigpt --gradcheck $tiny --output "$transcripts/06-gradcheck-fp32.txt"
$bin/minigpt-fp64 --gradcheck $tiny --output "$transcripts/06-gradcheck.txt"
$bin/minigpt-fp64 --gradcheck $tiny --latex Gradcheck \
                  --output "$numbers/06-gradcheck.tex"
$bin/minigpt --verify --micro-batches 4 --output "$transcripts/06-verify.txt"
$bin/minigpt --verify --micro-batches 4 --latex Verify \
             --output "$numbers/06-verify.tex"
$bin/matmul-bench --machine "$machine" --transcript "$transcripts/06-bench.txt" \
                  --latex Bench --output "$numbers/06-bench.tex"
