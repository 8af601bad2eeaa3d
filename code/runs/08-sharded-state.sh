# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/08-sharded-state.sh BUILD_DIR
set -eu
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)

# minigpt, sharded: the check against the reference, then every stage on
# each count of ranks, two steps each, for the bytes held and sent.
bin="$1/bin" counts="1 2 4"
most=${counts##* }             # the chapter shows stage 3 on the most ranks
mpiexec -n $most $bin/minigpt --dp $most --zero 3 --verify --micro-batches 2 \
        --output "$transcripts/08-verify-3.txt"
for n in $counts; do
    for stage in 0 1 2 3; do
        ring=$([ $stage = 0 ] && echo "--allreduce ring" || true)
        mpiexec -n $n $bin/minigpt --steps 2 --eval-every 1000 --quiet --json \
                --machine "$1/machine.json" --dp $n --zero $stage $ring \
                --transcript "$transcripts/08-zero-minigpt-$stage-$n.txt" \
                --output "$data/08-zero-minigpt-$stage-$n.json"
    done
done
# The chapter shows the end of stage 3's report on the most ranks: the shard.
sed -n '/^sharded state/,$p' "$transcripts/08-zero-minigpt-3-$most.txt" \
    > "$transcripts/08-zero-minigpt-3-shard.txt"
test -s "$transcripts/08-zero-minigpt-3-shard.txt"
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
json() { echo "$data/08-zero-minigpt-$1-$2.json"; }
{
    echo "ranks,stage,state,with_buffers"
    for n in $counts; do
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
awk -v psi="$(field params "$(json 0 1)")" -v most=$most 'BEGIN {
    print "ranks,stage0,stage1,stage2,stage3"
    for (n = 1; n <= most + 0.001; n += 0.05)
        printf "%.2f,%.0f,%.0f,%.0f,%.0f\n", n, 16 * psi,
               8 * psi + 8 * psi / n,
               4 * psi + 12 * psi / n, 16 * psi / n
}' > "$data/08-zero-minigpt-formula.csv"
{
    printf '\\newcommand{\\MgZeroRanks}{%d}\n' $most
    awk -v counts="$counts" 'BEGIN {      # "1, 2 and 4"
        n = split(counts, c, " "); s = c[1]
        for (i = 2; i <= n; i++) s = s (i < n ? ", " : " and ") c[i]
        printf "\\newcommand{\\MgZeroCounts}{%s}\n", s }'
    for key in params largest_unit_params; do
        awk -v key=$key -v x="$(field $key "$(json 3 $most)")" "$formats"'
        BEGIN {
            name = key == "params" ? "MgZeroParams" : "MgZeroUnitParams"
            printf "\\newcommand{\\%s}{%s}\n", name, grouped(x) }'
    done
    for stage in 0 1 2 3; do
        name=$(echo $stage | sed 's/0/Zero/; s/1/One/; s/2/Two/; s/3/Three/')
        f=$(json $stage $most)
        awk -v name=$name -v sent="$(field bytes_sent_per_step "$f")" \
            -v formula="$(field bytes_sent_formula "$f")" 'BEGIN {
            printf "\\newcommand{\\MgZero%sSent}{%.1f~kB}\n", name, sent / 1e3
            printf "\\newcommand{\\MgZero%sSentFormula}{%.1f~kB}\n", name,
                   formula / 1e3 }'
    done
    for n in $counts; do
        for stage in 0 1 2 3; do
            f=$(json $stage $n)
            echo "$n $stage $(for k in weight gradient optimizer; do
                printf '%s %s ' "$(field ${k}_bytes_held "$f")" \
                                "$(field ${k}_bytes_formula "$f")"; done)" \
                 "$(field buffer_bytes_held "$f")" \
                 "$(field bytes_sent_per_step "$f")" \
                 "$(field largest_unit_params "$f") $(field params "$f")"
        done
    done | awk -v q="'" -v most=$most '
        function macro(name, text) {
            printf "\\newcommand{\\%s}{%s}\n", name, text
        }
        function fail(why) {
            printf "08-sharded-state.sh: %s: the text would be wrong\n", why \
                > "/dev/stderr"
            bad = 1; exit 1
        }
        {
            held = $3 + $5 + $7; formula = $4 + $6 + $8
            dev = held > formula ? held / formula - 1 : 1 - held / formula
            if (dev > worst) worst = dev
            if ($1 == most) { sent[$2] = $10; buffers[$2] = $9; state[$2] = held }
            unit = $11; params = $12
        }
        END {
            if (bad) exit 1
            if (worst > 0.01)
                fail(sprintf("a rank held %.2g %% more or less than the " \
                     "formula", 100 * worst))
            macro("MgZeroMeansHeld", worst == 0 \
                  ? "exactly what the formula says" \
                  : sprintf("what the formula says to within %.2g\\,\\%%",
                            100 * worst))
            macro("MgZeroRounding", worst == 0 ? "here none: every unit " \
                  "divides evenly among the ranks" \
                  : sprintf("here at most %.2g\\,\\%%", 100 * worst))
            share = sprintf("%.0f\\,\\%%", 100 * buffers[3] / state[3])
            unit_share = sprintf("%.0f\\,\\%%", 100 * unit / params)
            macro("MgZeroUnitShare", unit_share)
            if (buffers[3] >= state[3] / 2)
                macro("MgZeroMeansBuffers", sprintf("At stage~3 on " \
                      "\\MgZeroRanks{} ranks the buffers added %s to the " \
                      "state a rank held, because one unit here is %s of " \
                      "the model: " \
                      "for a model this small, the formula that leaves " \
                      "them out is no guide to a rank%ss memory.", share,
                      unit_share, q))
            else
                macro("MgZeroMeansBuffers", sprintf("At stage~3 on " \
                      "\\MgZeroRanks{} ranks the buffers added only %s to " \
                      "the state a rank held, with one unit %s of the " \
                      "model.", share,
                      unit_share))
            r1 = sent[1] / sent[0]; r2 = sent[2] / sent[0]
            r3 = sent[3] / sent[0]
            if (r1 < 0.99 || r1 > 1.01 || r2 < 0.99 || r2 > 1.01)
                fail(sprintf("stages 1 and 2 sent %.3g and %.3g times what " \
                     "stage 0 sent", r1, r2))
            if (r3 <= 1 || r3 > 1.5)
                fail(sprintf("stage 3 sent %.3g times what stage 0 sent", r3))
            tail = r3 < 1.5 ? sprintf(", a little under the formula%ss " \
                   "1.5 because the embeddings are never gathered for the " \
                   "backward pass", q) : sprintf(", the formula%ss 1.5", q)
            macro("MgZeroMeansSent", sprintf("Stages 1 and 2 sent %s what " \
                  "plain data parallelism sent, and stage~3 sent %.3g times as " \
                  "much%s", r1 == 1 && r2 == 1 ? "exactly" : "almost exactly",
                  r3, tail))
        }'
} > "$numbers/08-zero-minigpt.tex"
