# Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file.
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
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16"
$bin/minigpt --gradcheck $tiny --output "$transcripts/06-gradcheck-fp32.txt"
$bin/minigpt-fp64 --gradcheck $tiny --output "$transcripts/06-gradcheck.txt"
$bin/minigpt-fp64 --gradcheck $tiny --latex Gradcheck \
                  --output "$numbers/06-gradcheck.tex"
$bin/minigpt --verify --micro-batches 4 --output "$transcripts/06-verify.txt"
$bin/minigpt --verify --micro-batches 4 --latex Verify \
             --output "$numbers/06-verify.tex"
$bin/matmul-bench --machine "$machine" \
                  --transcript "$transcripts/06-bench.txt" \
                  --latex Bench --output "$numbers/06-bench.tex"
# value FILE NAME: the number in the macro \NAME of FILE, as awk reads it
# (28.8\,\% as 28.8, 59,681 as 59681, \ensuremath{4.02\times10^{10}} as
# 4.02e10).
value() {
    v=$(grep -F "{\\$2}{" "$1" | sed 's/.*}{//; s/}$//' |
        sed 's/\\ensuremath{\([-0-9.]*\)\\times10^{\([-0-9]*\)}}/\1e\2/' |
        tr -d ',\\%')
    test -n "$v" || { echo "$0: no \\$2 in $1" >&2; exit 1; }
    echo "$v"
}
above() {    # above A B: true when A > B
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'
}
train="$numbers/06-train.tex"
share=$(value "$train" TrainMatmulFraction)
{
    awk -v a="$(value "$train" TrainMatmulFlops)" \
        -v b="$(value "$train" TrainPeakFlops)" 'BEGIN {
        printf "\\newcommand{\\TrainMatmulShareOfPeak}"
        printf "{%.0f\\,\\%%}\n", 100 * a / b }'
    if above 50 "$share"; then
        printf '%s\n' '\newcommand{\TrainMfuWhy}{Yet the profile gives' \
            'the matrix multiplies only \TrainMatmulFraction{} of a step:' \
            'most of it goes to attention, the element-wise layers and the' \
            'optimizer, which do little arithmetic per byte they touch' \
            '(Figure~\ref{fig:profile}).\TrainPeakCaveat{}}' \
            '\newcommand{\TrainMfuBecause}{most of a step goes to work' \
            'that is not a matrix multiply: the multiplies take' \
            '\TrainMatmulFraction{} of it, and run at \TrainMatmulFlops{}' \
            'FLOP/s themselves.}'
    else
        printf '%s\n' '\newcommand{\TrainMfuWhy}{The profile gives the' \
            'matrix multiplies \TrainMatmulFraction{} of a step, and the' \
            'rest to attention, the element-wise layers and the optimizer' \
            '(Figure~\ref{fig:profile}).\TrainPeakCaveat{}}' \
            '\newcommand{\TrainMfuBecause}{the matrix multiplies, which' \
            'take \TrainMatmulFraction{} of a step, run at' \
            '\TrainMatmulFlops{} FLOP/s, and the rest of the step adds time' \
            'for few counted FLOPs.}'
    fi
    if above "$(value "$train" TrainMatmulFlops)" \
             "$(value "$train" TrainPeakFlops)"; then
        printf '%s\n' '\newcommand{\TrainPeakCaveat}{ But the matrix' \
            'multiplies ran faster than the peak that build/machine.json' \
            'gives, which no true peak allows: the machine was busier' \
            'when the build measured it than during this run, and every' \
            'MFU in this copy of the book is too high by as much.}'
    else
        printf '%s\n' '\newcommand{\TrainPeakCaveat}{}'
    fi
    best=$(value "$numbers/06-bench.tex" BenchBestFractionOfPeak)
    if above "$best" 100; then
        printf '%s\n' '\newcommand{\BenchPeakSentence}{and its fastest' \
            'product ran at \BenchBestFractionOfPeak{} of the peak that' \
            '\texttt{build/machine.json} gives, which no true peak allows:' \
            'the machine was busier when the build measured its peak than' \
            'when the benchmark ran, and rates compared with that peak in' \
            'this copy of the book are too high by as much:}'
    else
        printf '%s\n' '\newcommand{\BenchPeakSentence}{and its fastest' \
            'product reached \BenchBestFractionOfPeak{} of one' \
            'core'"'"'s peak' \
            'as \texttt{build/machine.json} gives it:}'
    fi
    # The kernel OpenBLAS chose, against the width of the core's vectors.
    blas_bits=$(value "$numbers/06-bench.tex" BenchBlasVectorBits)
    core_bits=$(value "$numbers/06-bench.tex" BenchCoreVectorBits)
    if [ "$blas_bits" -gt 0 ] && [ "$core_bits" -gt "$blas_bits" ]; then
        case $((core_bits / blas_bits)) in
            2) part=half ;;
            4) part='a quarter' ;;
            *) part="1/$((core_bits / blas_bits))" ;;
        esac
        printf '%s\n' '\newcommand{\BenchKernelSentence}{The comparison' \
            'is with the kernel OpenBLAS chose when it started, its' \
            '\BenchBlasCore{} kernel, whose vectors are' \
            '\BenchBlasVectorBits{} bits wide on a core whose vectors are' \
            '\BenchCoreVectorBits{} bits wide: that kernel can reach at' \
            "most about $part of the peak, so the ratio says that this" \
            'gemm beats the kernel OpenBLAS picked here, not that it beats' \
            'the best OpenBLAS could do on this machine.}'
    elif [ "$blas_bits" -gt 0 ]; then
        printf '%s\n' '\newcommand{\BenchKernelSentence}{The comparison' \
            'is with the kernel OpenBLAS chose when it started, its' \
            '\BenchBlasCore{} kernel, whose \BenchBlasVectorBits{}-bit' \
            'vectors are as wide as the core'"'"'s.}'
    else
        printf '%s\n' '\newcommand{\BenchKernelSentence}{The comparison' \
            'is with the kernel OpenBLAS chose when it started, its' \
            '\BenchBlasCore{} kernel; the width of its vectors is not one' \
            'the benchmark knows, so whether it could use the whole core' \
            'is not known.}'
    fi
} > "$numbers/06-mfu.tex"
