# Tangled from chapters/96-tensor-parallel-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/09-tensor-parallel.sh BUILD_DIR
set -eu
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
bin="$1/bin"
mpiexec -n 2 $bin/minigpt --tp 2 --verify \
        --output "$transcripts/09-verify-2.txt"
mpiexec -n 4 $bin/minigpt --tp 4 --verify \
        --output "$transcripts/09-verify-4.txt"
mpiexec -n 4 $bin/minigpt --tp 2 --dp 2 --zero 1 --verify \
        --output "$transcripts/09-verify-2x2.txt"
for t in 1 2 4; do
    mpiexec -n $t $bin/minigpt --tp $t --steps 2 --eval-every 1000 --quiet \
            --json --machine "$1/machine.json" \
            --transcript "$transcripts/09-tp-$t.txt" \
            --output "$data/09-tp-$t.json"
done
sed -n '/^tensor parallel/,$p' "$transcripts/09-tp-4.txt" \
    > "$transcripts/09-tp-4-traffic.txt"
test -s "$transcripts/09-tp-4-traffic.txt"
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
{
    echo "t,collectives,counted,formula,activations"
    for t in 1 2 4; do
        f="$data/09-tp-$t.json"
        echo "$t,$(field tp_collectives_per_block "$f"),$(field \
            tp_bytes_per_block "$f"),$(field tp_bytes_per_block_formula \
            "$f"),$(field activation_bytes_held "$f")"
    done
} > "$data/09-tp-bytes.csv"
awk -F, -v q="'" 'NR > 1 {
    name = $1 == 1 ? "One" : $1 == 2 ? "Two" : "Four"
    printf "\\newcommand{\\MgTpCollectives%s}{%d}\n", name, $2
    printf "\\newcommand{\\MgTpSent%s}{%.1f~kB}\n", name, $3 / 1e3
    printf "\\newcommand{\\MgTpSentFormula%s}{%.1f~kB}\n", name, $4 / 1e3
    printf "\\newcommand{\\MgTpActivations%s}{%.0f~kB}\n", name, $5 / 1e3
    if ($1 == 1) one = $5
    else printf "\\newcommand{\\MgTpActivationsShare%s}{%.2f}\n", name,
                $5 / one
}' "$data/09-tp-bytes.csv" > "$numbers/09-tp.tex"
f="$data/09-tp-2.json"
awk -v b="$(field micro_batch "$f")" -v s="$(field seq "$f")" \
    -v h="$(field hidden "$f")" 'BEGIN {
    printf "\\newcommand{\\MgTpMicroBatch}{%d}\n", b
    printf "\\newcommand{\\MgTpSeq}{%d}\n", s
    printf "\\newcommand{\\MgTpHidden}{%d}\n", h
    printf "\\newcommand{\\MgTpBsh}{%d}\n", b * s * h }' >> "$numbers/09-tp.tex"
# The formula's curve, from its value at t = 2, 8bsh/2 elements' bytes.
awk -v two="$(field tp_bytes_per_block_formula "$f")" 'BEGIN {
    print "t,formula"
    for (t = 1; t <= 8.001; t += 0.05)
        printf "%.2f,%.0f\n", t, two * 2 * (t - 1) / t }' \
    > "$data/09-tp-bytes-formula.csv"
