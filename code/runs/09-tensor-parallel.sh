# Tangled from chapters/95-parallel-plumbing.nw and chapters/96-tensor-parallel-plumbing.nw; edit the chapters, not this file.
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
for t in 2 4; do
    mpiexec -n $t $bin/minigpt --tp $t --sequence-parallel --steps 2 \
            --eval-every 1000 --quiet --json --machine "$1/machine.json" \
            --output "$data/09-tp-sp-$t.json"
done
sed -n '/^tensor parallel/,$p' "$transcripts/09-tp-4.txt" \
    > "$transcripts/09-tp-4-traffic.txt"
test -s "$transcripts/09-tp-4-traffic.txt"
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
{
    echo "t,sp,collectives,counted,formula,activations"
    for f in "$data"/09-tp-[124].json "$data"/09-tp-sp-[24].json; do
        echo "$(field tp "$f"),$(field sequence_parallel "$f"),$(field \
            tp_collectives_per_block "$f"),$(field tp_bytes_per_block \
            "$f"),$(field tp_bytes_per_block_formula "$f"),$(field \
            activation_bytes_held "$f")"
    done
} > "$data/09-tp-bytes.csv"
awk -F, 'NR > 1 {
    name = ($1 == 1 ? "One" : $1 == 2 ? "Two" : "Four") ($2 ? "Sp" : "")
    printf "\\newcommand{\\MgTpCollectives%s}{%d}\n", name, $3
    printf "\\newcommand{\\MgTpSent%s}{%.1f\\,kB}\n", name, $4 / 1e3
    printf "\\newcommand{\\MgTpSentFormula%s}{%.1f\\,kB}\n", name, $5 / 1e3
    printf "\\newcommand{\\MgTpActivations%s}{%.0f\\,kB}\n", name, $6 / 1e3
    if ($1 == 1) one = $6
    else printf "\\newcommand{\\MgTpActivationsShare%s}{%.2f}\n", name,
                $6 / one
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
