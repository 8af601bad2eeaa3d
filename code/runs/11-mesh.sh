# Tangled from chapters/95-parallel-plumbing.nw, chapters/98c-pipeline-runs.nw and chapters/99f-measured-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/11-mesh.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
formats="$formats"'
function sig3(x,   magnitude, s) {
    if (x == 0) return "0"
    magnitude = int(log(x < 0 ? -x : x) / log(10) + 100) - 100
    if (2 - magnitude <= 0) return grouped(x)
    s = sprintf("%.*f", 2 - magnitude, x)
    sub(/0+$/, "", s); sub(/\.$/, "", s)
    return s
}
function sort(a, n,    i, j, x) {               # insertion sort
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            x = a[j]; a[j] = a[j - 1]; a[j - 1] = x
        }
}'
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
cores=$(field cores "$machine" 2>/dev/null || true)
test -n "$cores" || cores=$(nproc)
cpu=$(sed -n 's/^ *"cpu": *"\(.*\)",*$/\1/p' "$machine")
layers=8 hidden=64 heads=8 seq=32 vocab=64 batch=32 micro=4
shape="--layers $layers --hidden $hidden --heads $heads --seq $seq"
shape="$shape --vocab $vocab --batch $batch --micro-batches $micro"
steps=10 repeats=3
parts="compute_s exposed_comm_tp_s exposed_comm_pp_s exposed_comm_dp_s"
parts="$parts bubble_s optimizer_s other_s step_s"
"$bin/fleet" layout --machine "$machine" $shape --csv \
    --output "$data/11-predicted.csv"
layouts=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
                   { print $at["ranks"] ":" $at["tp"] ":" $at["pp"] ":" \
                           $at["dp"] }' "$data/11-predicted.csv")
degrees() {      # degrees N:T:P:D sets n, t, p and d
    n=${1%%:*}; rest=${1#*:}
    t=${rest%%:*}; rest=${rest#*:}
    p=${rest%%:*}; d=${rest#*:}
}
rm -f "$data"/11-mesh-*.json
for layout in $layouts; do
    degrees $layout
    test "$n" -le "$cores" || continue
    name="$data/11-mesh-$t-$p-$d"
    for r in $(seq 1 $repeats); do
        mpiexec -bind-to core -n "$n" "$bin/minigpt" $shape \
                --tp "$t" --pp "$p" --dp "$d" --steps $steps \
                --eval-every 1000 --quiet --json --machine "$machine" \
                --output "$name-run$r.json"
    done
    median=$(for r in $(seq 1 $repeats); do
                 echo "$(field step_breakdown_step_s "$name-run$r.json") $r"
             done | sort -g | awk -v n=$repeats 'NR == int((n + 1) / 2) {
                                                    print $2 }')
    cp "$name-run$median.json" "$name.json"
done
for layout in $layouts; do
    degrees $layout
    f="$data/11-mesh-$t-$p-$d.json"
    test -f "$f" || continue
    printf "%s,%s,%s" $t $p $d
    for part in $parts; do printf ",%s" "$(field step_breakdown_$part "$f")"
    done
    printf ",%s\n" "$(field step_ms "$f")"
done > "$data/11-measured.csv"
awk -F, -v parts="$parts" -v runs="$data/11-measured.csv" '
    BEGIN { count = split(parts, part, " ") }
    FILENAME == runs { key = $1 ":" $2 ":" $3
                 for (k = 1; k <= count; k++) measured[key, k] = $(3 + k)
                 median[key] = $(4 + count) / 1e3; timed[key] = 1; next }
    FNR == 1 {
        for (i = 1; i <= NF; i++) at[$i] = i
        printf "layout,ranks,tp,pp,dp,timed"
        for (k = 1; k <= count; k++) printf ",predicted_%s", part[k]
        for (k = 1; k <= count; k++) printf ",measured_%s", part[k]
        printf ",measured_step_median_s\n"
        next
    }
    {
        t = $at["tp"]; p = $at["pp"]; d = $at["dp"]; key = t ":" p ":" d
        printf "%sx%sx%s,%s,%s,%s,%s,%d", t, p, d, $at["ranks"], t, p, d,
               key in timed
        for (k = 1; k <= count; k++) printf ",%s", $at[part[k]]
        for (k = 1; k <= count; k++)
            printf ",%s", key in timed ? measured[key, k] : ""
        printf ",%s\n", key in timed ? sprintf("%.9g", median[key]) : ""
    }' "$data/11-measured.csv" "$data/11-predicted.csv" > "$data/11-mesh.csv"

