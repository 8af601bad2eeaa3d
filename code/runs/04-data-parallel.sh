# Tangled from chapters/04-data-parallel.nw; edit the chapter, not this file.
# usage: sh code/runs/04-data-parallel.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

mpiexec -n 2 $bin/allreduce --transcript "$transcripts/04-allreduce-2.txt" \
        --data "$data/04-allreduce-2.csv" --latex Ring \
        --output "$numbers/04-allreduce.tex" 2>/dev/null
mpiexec -n 4 $bin/allreduce --op allreduce --max-bytes 67108864 \
        --transcript "$transcripts/04-allreduce-4.txt" --latex RingFour \
        --output "$numbers/04-allreduce-4.tex" 2>/dev/null
# The book shows every fourth size of the all-reduce table.
for n in 2 4; do
    awk '/^# allreduce/ { on = 1 } /^# reduce_scatter/ { on = 0 }
         on && (/^#/ || (++row % 4) == 1)' \
        "$transcripts/04-allreduce-$n.txt" > "$transcripts/04-allreduce-$n-short.txt"
done
