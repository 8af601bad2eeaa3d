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
awk -v flags="$tiny" '
    function tt(x) { gsub(/_/, "\\_", x); return "\\texttt{" x "}" }
    function pc(x) { return sprintf("%.3g\\,\\%%", 100 * x) }
    function sci(x,   m) {    # 8.1e-04 as $8.1\times10^{-4}$
        split(sprintf("%.1e", x), m, "e")
        return sprintf("\\ensuremath{%s\\times10^{%d}}", m[1], m[2])
    }
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    NF == 3 && $2 ~ /^[0-9.]+e[-+][0-9]+$/ {
        n++; name[n] = $1; g[n] = $2 + 0; e[n] = $3 + 0
    }
    END {
        # by_g: the tensors by gradient, smallest first; by_e: by error,
        # largest first.
        for (i = 1; i <= n; i++) { by_g[i] = i; by_e[i] = i }
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && g[by_g[j - 1]] > g[by_g[j]]; j--) {
                x = by_g[j]; by_g[j] = by_g[j - 1]; by_g[j - 1] = x
            }
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && e[by_e[j - 1]] < e[by_e[j]]; j--) {
                x = by_e[j]; by_e[j] = by_e[j - 1]; by_e[j - 1] = x
            }
        k = 0
        for (m = 1; m < n; m++) {
            split("", in_g)
            for (i = 1; i <= m; i++) in_g[by_g[i]] = 1
            same = 1
            for (i = 1; i <= m; i++) if (!(by_e[i] in in_g)) same = 0
            if (same) k = m
        }
        if (k < 2) {
            printf "06-reference.sh: in the fp32 gradient check, the " \
                   "tensors with the largest errors are not those with " \
                   "the smallest gradients: the text would be " \
                   "wrong\n" > "/dev/stderr"
            exit 1
        }
        split("one two three four five six seven eight nine ten", word)
        list = ""
        for (i = 1; i <= k; i++)
            list = list (i == 1 ? "" : i == k ? " and " : ", ") \
                   tt(name[by_e[i]])
        macro("GradcheckSingleFlags", "\\texttt{" flags "}")
        macro("GradcheckSingleMaxRelativeError", pc(e[by_e[1]]))
        macro("GradcheckSingleWorstCount", word[k])
        macro("GradcheckSingleWorstTensors", list)
        macro("GradcheckSingleWorstLow", pc(e[by_e[k]]))
        macro("GradcheckSingleWorstGradLow", sci(g[by_g[1]]))
        macro("GradcheckSingleWorstGradHigh", sci(g[by_g[k]]))
        macro("GradcheckSingleOthersError", pc(e[by_e[k + 1]]))
        macro("GradcheckSingleOthersGrad", sci(g[by_g[k + 1]]))
    }' "$transcripts/06-gradcheck-fp32.txt" >> "$numbers/06-gradcheck.tex"
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
