# Tangled from chapters/95-parallel-plumbing.nw and chapters/99c-buckets.nw; edit the chapters, not this file.
# usage: sh code/runs/11-buckets.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
cores=$(field cores "$machine" 2>/dev/null || true)
if [ "${cores:=$(nproc)}" -lt 2 ]; then
    echo "11-buckets.sh: two ranks need two cores; this machine has one" >&2
    exit 1
fi
model="--layers 4 --hidden 256 --heads 4 --seq 32 --vocab 32 --batch 8"
sizes="0 1 2 4 8 64"            # MiB; 64 is more than the whole gradient
steps=20 repeats="1 2 3"
ranks() {        # ranks NAME FLAGS...: two pinned ranks, one JSON report
    name=$1; shift
    mpiexec -bind-to core -n 2 "$bin/minigpt" $model --dp 2 \
            --steps $steps --eval-every 1000 --quiet --json \
            --machine "$machine" "$@" --output "$data/11-buckets-$name.json"
}
mpiexec -bind-to core -n 2 "$bin/minigpt" $model --dp 2 --verify \
        --bucket-mb 1 --output "$transcripts/11-buckets-verify.txt"
for k in $repeats; do
    for mb in $sizes; do
        ranks "$mb-$k" --bucket-mb "$mb"
    done
    ranks "blocking-$k" --no-overlap
    ranks "compute-$k" --no-allreduce
done
if [ "$(field buckets "$data/11-buckets-64-1.json")" != 1 ]; then
    echo "11-buckets.sh: 64 MiB should be one bucket of this model" >&2
    exit 1
fi
{
    for k in $repeats; do
        for name in $sizes blocking compute; do
            f="$data/11-buckets-$name-$k.json"
            echo "$name $(field step_seconds_median "$f") \
$(field dp_exposed_s "$f") $(field buckets "$f")"
        done
    done
} | awk -v sizes="$sizes" -v params="$(field params \
        "$data/11-buckets-0-1.json")" -v steps=$steps \
    -v copy="$(field memcpy_bytes_per_second "$machine")" \
    -v bytes="$(field gradient_bytes_held "$data/11-buckets-0-1.json")" \
    -v csv="$data/11-buckets.csv" -v q="'" "$formats"'
    { n[$1]++; step[$1, n[$1]] = $2; dp[$1, n[$1]] = $3; count[$1] = $4 }
    function median(a, name) { return median_of(a, name, n[name]) }
    function low(a, name,   i, x) {
        x = a[name, 1]
        for (i = 2; i <= n[name]; i++) if (a[name, i] < x) x = a[name, i]
        return x
    }
    function high(a, name,   i, x) {
        x = a[name, 1]
        for (i = 2; i <= n[name]; i++) if (a[name, i] > x) x = a[name, i]
        return x
    }
    function ms(x) { return sprintf("%.3g", 1e3 * x) }
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    function spelled(mb) {
        return mb == 0 ? "Zero" : mb == 1 ? "One" : mb == 2 ? "Two" \
             : mb == 4 ? "Four" : mb == 8 ? "Eight" : "Whole"
    }
    function called(mb) {         # how the text names a bucket size
        return mb == 0 ? "one all-reduce per tensor" \
             : count[mb] == 1 ? "one bucket, a single all-reduce as the " \
                                "backward pass ends" \
             : sprintf("buckets of %d~MiB (%d of them)", mb, count[mb])
    }
    END {
        print "at,label,mb,buckets,step_ms,step_lo,step_hi,dp_ms,dp_lo," \
              "dp_hi,blocking_ms,compute_ms" > csv
        blocking = median(step, "blocking"); compute = median(step, "compute")
        noise = 0
        for (name in n)
            if (high(step, name) - low(step, name) > noise)
                noise = high(step, name) - low(step, name)
        m = split(sizes, size, " ")
        best = worst = size[1]; least = size[1]
        for (i = 1; i <= m; i++) {
            mb = size[i]; S = median(step, mb); D = median(dp, mb)
            printf "%d,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s\n", i,
                   mb == 0 ? "per tensor" : count[mb] == 1 ? "one" : mb,
                   mb, count[mb], ms(S), ms(low(step, mb)), ms(high(step, mb)),
                   ms(D), ms(low(dp, mb)), ms(high(dp, mb)), ms(blocking),
                   ms(compute) > csv
            macro("BucketStepMs" spelled(mb), ms(S))
            macro("BucketDpMs" spelled(mb), ms(D))
            macro("BucketCount" spelled(mb), count[mb])
            if (S < median(step, best)) best = mb
            if (S > median(step, worst)) worst = mb
            if (D < median(dp, least)) least = mb
        }
        close(csv)
        macro("BucketParams", grouped(params))
        macro("BucketGradientMiB", sprintf("%.3g", bytes / 1048576))
        macro("BucketSteps", steps); macro("BucketRepeats", n["blocking"])
        macro("BucketBlockingMs", ms(blocking))
        macro("BucketComputeMs", ms(compute))
        macro("BucketBlockingDpMs", ms(median(dp, "blocking")))
        macro("BucketNoiseMs", ms(noise))
        macro("BucketCopyMs", copy > 0 ? ms(2 * bytes / copy) : "--")
        whole = size[m]; S0 = median(step, 0); Sw = median(step, whole)
        Sb = median(step, best); Sx = median(step, worst)
        if (Sx - Sb <= noise)
            macro("BucketVerdictStep", sprintf("Across the bucket sizes the step " \
                  "took %s, a range no wider than the %s~ms by which the " \
                  "repeated runs of one configuration differ: on this machine " \
                  "the bucket size does not show in the step time.",
                  ms(Sb) == ms(Sx) ? ms(Sb) "~ms at every size" \
                  : "from " ms(Sb) " to " ms(Sx) "~ms", ms(noise)))
        else
            macro("BucketVerdictStep", sprintf("The fastest step, %s~ms, came " \
                  "with %s, and the slowest, %s~ms, with %s: %s~ms apart, more " \
                  "than the %s~ms by which the repeated runs of one " \
                  "configuration differ.", ms(Sb), called(best), ms(Sx),
                  called(worst), ms(Sx - Sb), ms(noise)))
        macro("BucketVerdictExposed", sprintf("With one all-reduce per tensor " \
              "the data axis%ss communication cost a step %s~ms that the " \
              "backward pass did not hide; with one bucket, %s~ms; with the " \
              "blocking all-reduce, %s~ms.%s", q, ms(median(dp, 0)),
              ms(median(dp, whole)), ms(median(dp, "blocking")),
              least != 0 && least != whole \
              ? sprintf(" The least, %s~ms, came with %s.",
                        ms(median(dp, least)), called(least)) : ""))
        comm = blocking - compute
        if (comm <= noise)
            macro("BucketVerdictHidden", sprintf("The blocking step took %s~ms " \
                  "and the compute alone %s~ms, no further apart than the runs " \
                  "differ, so these runs cannot say how much of the all-reduce " \
                  "any bucket size hid.", ms(blocking), ms(compute)))
        else if (Sb > blocking + noise)
            macro("BucketVerdictHidden", sprintf("The blocking all-reduce adds " \
                  "%s~ms to the %s~ms of the compute alone, and even the fastest " \
                  "overlapped step was %s~ms slower than the blocking one: " \
                  "starting the all-reduces early cost more than it hid.",
                  ms(comm), ms(compute), ms(Sb - blocking)))
        else if (blocking - Sb <= noise)
            macro("BucketVerdictHidden", sprintf("The blocking all-reduce adds " \
                  "%s~ms to the %s~ms of the compute alone, and the fastest " \
                  "overlapped step came within the spread of the blocking one " \
                  "(%s against %s~ms): no bucket size hid a part of it that " \
                  "these runs can measure.", ms(comm), ms(compute), ms(Sb),
                  ms(blocking)))
        else
            macro("BucketVerdictHidden", sprintf("The blocking all-reduce adds " \
                  "%s~ms to the %s~ms of the compute alone; the fastest " \
                  "overlapped step hid %s~ms of it, %.0f\\,\\%%.", ms(comm),
                  ms(compute), ms(blocking - Sb), 100 * (blocking - Sb) / comm))
        if (best != 0 && best != whole && S0 - Sb > noise && Sw - Sb > noise)
            macro("BucketVerdictEnds", sprintf("A size between the ends won: " \
                  "%s beat both one all-reduce per tensor (%s~ms) and one " \
                  "bucket (%s~ms), which is the trade that DDP%ss default of " \
                  "25~MB makes for its models.", called(best), ms(S0), ms(Sw),
                  q))
        else if (S0 > Sw + noise)
            macro("BucketVerdictEnds", sprintf("Of the two ends, fewer and " \
                  "larger all-reduces won: one all-reduce per tensor paid " \
                  "%s~ms a step more than one bucket.", ms(S0 - Sw)))
        else if (Sw > S0 + noise)
            macro("BucketVerdictEnds", sprintf("Of the two ends, starting early " \
                  "won: one all-reduce per tensor was %s~ms a step faster than " \
                  "one bucket.", ms(Sw - S0)))
        else
            macro("BucketVerdictEnds", sprintf("The two ends, one all-reduce per " \
                  "tensor and one bucket, came within the spread of each other " \
                  "(%s and %s~ms).", ms(S0), ms(Sw)))
    }
' > "$numbers/11-buckets.tex"
