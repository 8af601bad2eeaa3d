# Tangled from chapters/07-data-parallel.nw; edit the chapter, not this file.
# usage: sh code/runs/07-data-parallel.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

mpiexec -n 2 $bin/allreduce --transcript "$transcripts/07-allreduce-2.txt" \
        --data "$data/07-allreduce-2.csv" --latex Ring \
        --output "$numbers/07-allreduce.tex" 2>/dev/null
mpiexec -n 4 $bin/allreduce --op allreduce --max-bytes 67108864 \
        --transcript "$transcripts/07-allreduce-4.txt" --latex RingFour \
        --output "$numbers/07-allreduce-4.tex" 2>/dev/null
# Data-parallel minigpt: the check against the reference, then weak scaling
# from one rank with 8 sequences to two ranks with 16.
mpiexec -n 2 $bin/minigpt --dp 2 --verify --micro-batches 2 \
        --output "$transcripts/07-verify.txt"
weak="--quiet --steps 150 --eval-every 1000 --json"
mpiexec -n 1 $bin/minigpt $weak --machine "$1/machine.json" --batch 8 \
        --output "$data/07-dp-1.json"
mpiexec -n 2 $bin/minigpt $weak --machine "$1/machine.json" --batch 16 --dp 2 \
        --transcript "$transcripts/07-dp-2.txt" --output "$data/07-dp-2.json"
mpiexec -n 2 $bin/minigpt $weak --machine "$1/machine.json" --batch 16 --dp 2 \
        --no-overlap \
        --output "$data/07-dp-2-blocking.json"
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
awk -v one="$(field tokens_per_second "$data/07-dp-1.json")" \
    -v two="$(field tokens_per_second "$data/07-dp-2.json")" \
    -v plain="$(field tokens_per_second "$data/07-dp-2-blocking.json")" \
    -v blocking="$(field allreduce_seconds "$data/07-dp-2.json")" \
    -v exposed="$(field exposed_seconds "$data/07-dp-2.json")" \
    -v hidden="$(field hidden_fraction "$data/07-dp-2.json")" 'BEGIN {
    printf "\\newcommand{\\DpOneTokens}{%d}\n", one
    printf "\\newcommand{\\DpTwoTokens}{%d}\n", two
    printf "\\newcommand{\\DpBlockingTokens}{%d}\n", plain
    printf "\\newcommand{\\DpEfficiency}{%.0f}\n", 100 * two / (2 * one)
    printf "\\newcommand{\\DpBlockingMs}{%.3g}\n", 1000 * blocking
    printf "\\newcommand{\\DpExposedMs}{%.3g}\n", 1000 * exposed
    printf "\\newcommand{\\DpHidden}{%.0f}\n", 100 * hidden
}' > "$numbers/07-dp.tex"
# The book shows every fourth size of the all-reduce table.
for n in 2 4; do
    awk '/^# allreduce/ { on = 1 } /^# reduce_scatter/ { on = 0 }
         on && (/^#/ || (++row % 4) == 1)' \
        "$transcripts/07-allreduce-$n.txt" > "$transcripts/07-allreduce-$n-short.txt"
done
