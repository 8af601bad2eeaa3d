# Tangled from chapters/99d-hierarchical.nw; edit the chapter, not this file.
# usage: sh code/runs/11-hierarchical.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
ranks=4 group=2 delay_us=1000 throttle_gbs=0.02 repeats=5
min=131072 max=8388608
cores=$(nproc)
mpiexec -n $ranks $bin/allreduce --machine "$machine" --op hierarchical \
        --group $group --delay-us $delay_us --throttle-gbs $throttle_gbs \
        --min-bytes $min --max-bytes $max --seconds 0.001 --warmup 1 \
        --repeats $repeats --transcript "$transcripts/11-hierarchical.txt" \
        --data "$data/11-hierarchical-measured.csv" >/dev/null 2>&1
column() {       # the field named $1 of the CSV row that follows a header
    awk -F, -v key="$1" 'NR == 1 { for (i = 1; i <= NF; i++)
                                       if ($i == key) k = i }
                         NR == 2 { print $k }'
}
echo "size,flat_measured_s,hierarchical_measured_s,flat_predicted_s,"\
"hierarchical_predicted_s" > "$data/11-hierarchical.csv"
awk -F, '$1 == "allreduce" { print $3 }' \
    "$data/11-hierarchical-measured.csv" | sort -nu |
while read -r size; do
    predicted=$($bin/fleet allreduce --machine "$machine" --gpus $ranks \
                --group $group --bytes $size --delay-us $delay_us \
                --throttle-gbs $throttle_gbs --csv)
    flat=$(echo "$predicted" | column flat_seconds)
    hierarchical=$(echo "$predicted" | column hierarchical_seconds)
    awk -F, -v size=$size -v flat=$flat -v hier=$hierarchical '
        $1 == "allreduce" && $3 == size { t[$2] = $5 }
        END { printf "%s,%.9g,%.9g,%.9g,%.9g\n", size, t["ring"],
              t["hierarchical"], flat, hier }' \
        "$data/11-hierarchical-measured.csv"
done >> "$data/11-hierarchical.csv"
$bin/fleet allreduce --machine "$machine" --gpus $ranks --group $group \
    --bytes $max --delay-us $delay_us --throttle-gbs $throttle_gbs \
    --latex HierHere --output "$numbers/11-hierarchical-here.tex"
$bin/fleet allreduce --gpu h100 --gpus 1024 --group 8 --bytes 10e9 \
    --latex HierFleet --output "$numbers/11-hierarchical-fleet.tex"
$bin/fleet allreduce --gpu h100 --gpus 1024 --group 8 --bytes 100e6 \
    --latex HierBucket --output "$numbers/11-hierarchical-bucket.tex"
$bin/fleet allreduce --gpu h100 --gpus 1024 --group 8 --bytes 10e9 \
    > "$transcripts/11-hierarchical-fleet.txt"
awk -F, -v ranks=$ranks -v group=$group -v delay=$delay_us \
    -v throttle=$throttle_gbs -v repeats=$repeats -v cores=$cores \
    -v fleet="$numbers/11-hierarchical-fleet.tex" \
    -v bucket="$numbers/11-hierarchical-bucket.tex" \
    "$formats"'
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function size(b) { return b >= 1048576 ? sprintf("%g\\,MiB", b / 1048576) \
                                       : sprintf("%g\\,KiB", b / 1024) }
function fail(why) {
    printf "11-hierarchical.sh: %s: the text would be wrong\n", why \
        > "/dev/stderr"
    bad = 1; exit 1
}
function seconds(file, name,   line, v) {     # the value of \name in file
    while ((getline line < file) > 0)
        if (index(line, "{\\" name "}")) {
            v = line; sub(/.*\}\{/, "", v); sub(/\}$/, "", v)
        }
    close(file)
    return v + 0
}
NR > 1 {
    n++; s[n] = $1; fm[n] = $2; hm[n] = $3; fp[n] = $4; hp[n] = $5
    if ($2 <= 0 || $3 <= 0 || $4 <= 0 || $5 <= 0)
        fail("a time is not positive")
}
END {
    if (bad) exit 1
    if (n < 2) fail("fewer than two sizes measured")
    macro("HierRunRanks", ranks); macro("HierRunGroup", group)
    macro("HierRunGroups", ranks / group); macro("HierRunCores", cores)
    macro("HierRunDelayUs", grouped(delay))
    macro("HierRunThrottleGBps", throttle)
    macro("HierRunRepeats", repeats)
    macro("HierRunSmallest", size(s[1])); macro("HierRunLargest", size(s[n]))
    macro("HierRunOversubscribed", ranks > cores ? \
          sprintf("Four ranks on %d cores are oversubscribed: a rank that " \
                  "has a message to pass on may wait for a core, and every " \
                  "time here includes that wait.", cores) : \
          sprintf("Four ranks on %d cores are not oversubscribed.", cores))
    ratio = hm[n] / fm[n]; want = hp[n] / fp[n]
    macro("HierRunLargestFlat", duration(fm[n]))
    macro("HierRunLargestHier", duration(hm[n]))
    macro("HierRunLargestFlatPredicted", duration(fp[n]))
    macro("HierRunLargestHierPredicted", duration(hp[n]))
    macro("HierVerdictLargest", ratio < 1 \
        ? sprintf("At %s the hierarchy took %s of the flat ring%ss time, " \
                  "against the %s the planner predicted.", size(s[n]), \
                  sig3(ratio), "\x27", sig3(want)) \
        : sprintf("At %s the hierarchy was not faster: it took %s times " \
                  "the flat ring%ss time, where the planner predicted %s.", \
                  size(s[n]), sig3(ratio), "\x27", sig3(want)))
    faster = 0
    for (i = 1; i <= n; i++) if (hm[i] < fm[i]) faster++
    macro("HierVerdictSizes", faster == n \
        ? sprintf("The hierarchy was faster at every size, from %s to %s.", \
                  size(s[1]), size(s[n])) \
        : faster == 0 ? "The hierarchy was faster at no size." \
        : sprintf("The hierarchy was faster at %d of the %d sizes.", \
                  faster, n))
    near = 0; above = 0; worst = 0
    for (i = 1; i <= n; i++) {
        for (k = 0; k < 2; k++) {
            m = k ? hm[i] : fm[i]; p = k ? hp[i] : fp[i]
            miss = (m - p) / p
            if (miss < 0.25 && miss > -0.25) near++
            if (m > p) above++
            if ((miss < 0 ? -miss : miss) > worst) {
                worst = miss < 0 ? -miss : miss; worst_size = s[i]
                worst_kind = k ? "hierarchical" : "flat"
                worst_way = m > p ? "above" : "below"
            }
        }
    }
    macro("HierVerdictPredicted", sprintf("Of the %d times, %s within " \
          "a quarter of its prediction; %s above it. The widest miss is " \
          "the %s all-reduce at %s, %s %s.", 2 * n, \
          near == 1 ? "one lies" : (near == 0 ? "none lies" \
                                                : near " lie"), \
          above == 2 * n ? "every one is" : (above == 0 ? "none is" \
              : above == 1 ? "one is" : above " are"), \
          worst_kind, size(worst_size), sig3(100 * worst) "\\,\\%", \
          worst_way))
    small_f = fm[1] / fp[1]; large_f = fm[n] / fp[n]
    small_h = hm[1] / hp[1]; large_h = hm[n] / hp[n]
    macro("HierVerdictSmall", small_f > large_f && small_h > large_h \
        ? sprintf("So it was here: the flat ring took %s times its " \
                  "prediction at %s and %s times at %s, the hierarchy %s " \
                  "and %s times.", sig3(small_f), size(s[1]), \
                  sig3(large_f), size(s[n]), sig3(small_h), sig3(large_h)) \
        : sprintf("Here, though, the misses did not shrink as the size " \
                  "grew (the flat ring took %s times its prediction at " \
                  "%s and %s times at %s, the hierarchy %s and %s times), " \
                  "so something the prediction leaves out grows with the " \
                  "bytes too.", sig3(small_f), size(s[1]), sig3(large_f), \
                  size(s[n]), sig3(small_h), sig3(large_h)))
    f = seconds(fleet, "HierFleetHierarchicalSeconds")
    r = seconds(fleet, "HierFleetRailsSeconds")
    fb = seconds(bucket, "HierBucketHierarchicalSeconds")
    rb = seconds(bucket, "HierBucketRailsSeconds")
    if (f <= 0 || r <= 0 || fb <= 0 || rb <= 0) fail("no fleet prediction")
    macro("HierVerdictRails", sprintf("At 10~GB the hierarchy %s the " \
          "flat ring split across the eight NICs (%s against %s); at " \
          "100~MB it %s it (%s against %s).", \
          f < r ? "beats" : "loses to", duration(f), duration(r), \
          fb < rb ? "beats" : "loses to", duration(fb), duration(rb)))
    macro("HierVerdictRailsWhy", \
          (f < r) == (fb < rb) ? (f < r \
            ? "Both sizes favour the hierarchy: its fewer steps across " \
              "outweigh the two phases inside." \
            : "At both sizes the two phases inside cost more than the " \
              "steps across they save.") \
          : (fb < rb ? "The small buffer is latency-bound, where the " \
                       "hierarchy\x27s fewer steps across win; the large " \
                       "one is bandwidth-bound, where the phases inside " \
                       "are the hierarchy\x27s extra cost." \
                     : "The large buffer favours the hierarchy and the " \
                       "small one the rings."))
}
' "$data/11-hierarchical.csv" > "$numbers/11-hierarchical.tex"
