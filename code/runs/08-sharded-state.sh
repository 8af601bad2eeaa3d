# Tangled from chapters/07-data-parallel.nw and chapters/08-sharded-state.nw; edit the chapters, not this file.
# usage: sh code/runs/08-sharded-state.sh BUILD_DIR
set -eu
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

# minigpt, sharded: the check against the reference, then every stage on
# 1, 2 and 4 ranks, two steps each, for the bytes held and sent.
bin="$1/bin"
mpiexec -n 4 $bin/minigpt --dp 4 --zero 3 --verify --micro-batches 2 \
        --output "$transcripts/08-verify-3.txt"
for n in 1 2 4; do
    for stage in 0 1 2 3; do
        ring=$([ $stage = 0 ] && echo "--allreduce ring" || true)
        mpiexec -n $n $bin/minigpt --steps 2 --eval-every 1000 --quiet --json \
                --machine "$1/machine.json" --dp $n --zero $stage $ring \
                --transcript "$transcripts/08-zero-minigpt-$stage-$n.txt" \
                --output "$data/08-zero-minigpt-$stage-$n.json"
    done
done
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
json() { echo "$data/08-zero-minigpt-$1-$2.json"; }
{
    echo "ranks,stage,state,with_buffers"
    for n in 1 2 4; do
        for stage in 0 1 2 3; do
            f=$(json $stage $n)
            awk -v n=$n -v s=$stage -v w="$(field weight_bytes_held "$f")" \
                -v g="$(field gradient_bytes_held "$f")" \
                -v o="$(field optimizer_bytes_held "$f")" \
                -v b="$(field buffer_bytes_held "$f")" \
                'BEGIN { printf "%d,%d,%.0f,%.0f\n", n, s, w+g+o, w+g+o+b }'
        done
    done
} > "$data/08-zero-minigpt.csv"
awk -v psi="$(field params "$(json 0 1)")" 'BEGIN {
    print "ranks,stage0,stage1,stage2,stage3"
    for (n = 1; n <= 4.001; n += 0.05)
        printf "%.2f,%.0f,%.0f,%.0f,%.0f\n", n, 16 * psi, 8 * psi + 8 * psi / n,
               4 * psi + 12 * psi / n, 16 * psi / n
}' > "$data/08-zero-minigpt-formula.csv"
{
    printf '\\newcommand{\\MgZeroRanks}{4}\n'
    for key in params largest_unit_params; do
        awk -v key=$key -v x="$(field $key "$(json 3 4)")" 'BEGIN {
            s = sprintf("%d", x)                  # 108288 -> 108,288
            while (s ~ /[0-9][0-9][0-9][0-9]/)
                sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
            name = key == "params" ? "MgZeroParams" : "MgZeroUnitParams"
            printf "\\newcommand{\\%s}{%s}\n", name, s }'
    done
    for stage in 0 1 2 3; do
        name=$(echo $stage | sed 's/0/Zero/; s/1/One/; s/2/Two/; s/3/Three/')
        f=$(json $stage 4)
        awk -v name=$name -v sent="$(field bytes_sent_per_step "$f")" \
            -v formula="$(field bytes_sent_formula "$f")" 'BEGIN {
            printf "\\newcommand{\\MgZero%sSent}{%.1f~kB}\n", name, sent / 1e3
            printf "\\newcommand{\\MgZero%sSentFormula}{%.1f~kB}\n", name,
                   formula / 1e3 }'
    done
} > "$numbers/08-zero-minigpt.tex"
