# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/07-data-parallel.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
cores=$(nproc)
if [ "$cores" -lt 2 ]; then
    echo "07-data-parallel.sh: the chapter times two ranks, one per core;" \
         "this machine has $cores core" >&2
    exit 1
fi
pin="-bind-to core"
machine_field() {    # the number after "KEY": in build/machine.json, if any
    sed -n "s/.*\"$1\": *\([0-9][0-9.eE+]*\).*/\1/p" "$2" 2>/dev/null \
        | head -n 1
}
copy=$(machine_field memcpy_bytes_per_second "$1/machine.json")
p2p=$(machine_field p2p_bytes_per_second "$1/machine.json")
rates=""             # the copy and first-touch rates, measured once
if [ -n "$copy" ]; then rates="--machine $1/machine.json"; fi
{
    printf '\\newcommand{\\RingCoresHere}{%d}\n' "$cores"
    has_p2p=0
    if [ -n "$p2p" ]; then has_p2p=1; fi
    printf '\\newcommand{\\RingHasPtoP}{%d}\n' "$has_p2p"
    source='measured by the benchmark itself, as this build has no'
    source="$source \\texttt{build/machine.json}"
    if [ -n "$copy" ]; then source='read from \texttt{build/machine.json}'; fi
    printf '\\newcommand{\\RingCeilingSource}{%s}\n' "$source"
    printf '\\newcommand{\\RingPtoPGbps}{%s}\n' \
        "$(awk -v b="${p2p:-0}" 'BEGIN { printf "%.3g", b / 1e9 }')"
} > "$numbers/07-machine.tex"
largest=67108864
mpiexec $pin -n 2 $bin/allreduce $rates --max-bytes $largest \
        --transcript "$transcripts/07-allreduce-2.txt" \
        --data "$data/07-allreduce-2.csv" --latex Ring \
        --output "$numbers/07-allreduce.tex" 2>/dev/null
heap="glibc.malloc.mmap_threshold=1073741824"
heap="$heap:glibc.malloc.trim_threshold=1073741824"
GLIBC_TUNABLES=$heap mpiexec $pin -n 2 $bin/allreduce $rates --op allreduce \
        --min-bytes $largest --max-bytes $largest \
        --data "$data/07-allreduce-heap.csv" --latex RingHeap \
        --output "$numbers/07-allreduce-heap.tex" 2>/dev/null
if [ "$cores" -ge 4 ]; then
    mpiexec $pin -n 4 $bin/allreduce $rates --op allreduce \
            --max-bytes 67108864 \
            --transcript "$transcripts/07-allreduce-4.txt" --latex RingFour \
            --output "$numbers/07-allreduce-4.tex" 2>/dev/null
    timed=1
else
    checked=4096            # a check of correctness, not a measurement
    mpiexec -n 4 $bin/allreduce $rates --max-bytes $checked \
            --seconds 0.001 --warmup 1 --repeats 1 --latex RingFour \
            --output "$numbers/07-allreduce-4.tex" 2>/dev/null
    printf '\\newcommand{\\RingFourCheckedKib}{%d}\n' $((checked / 1024)) \
        >> "$numbers/07-allreduce-4.tex"
    rm -f "$transcripts/07-allreduce-4.txt" \
          "$transcripts/07-allreduce-4-short.txt"
    timed=0
fi
printf '\\newcommand{\\RingFourTimed}{%d}\n' $timed \
    >> "$numbers/07-allreduce-4.tex"
# The book shows every fourth size of the all-reduce table, and every size
# from 16 MiB.
for n in 2 4; do
    test -f "$transcripts/07-allreduce-$n.txt" || continue
    awk '/^# allreduce/ { on = 1 } /^# reduce_scatter/ { exit }
         !on || /^#/ || (++row % 4) == 1 || $1 >= 16777216' \
        "$transcripts/07-allreduce-$n.txt" | sed '$ { /^#$/d; }' \
        > "$transcripts/07-allreduce-$n-short.txt"
done
# The second-level cache of one core (0 when the system does not say), the
# point-to-point bandwidth of build/machine.json (0 without it) and whether
# the processor reports that it runs under a hypervisor.
l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo 0)
vm=0
if grep -qw hypervisor /proc/cpuinfo 2>/dev/null; then vm=1; fi
awk -F, -v heap_file="$data/07-allreduce-heap.csv" \
    -v page="$(getconf PAGESIZE)" \
    -v l2="${l2:-0}" -v p2p="${p2p:-0}" -v vm="$vm" -v q="'" '
    function sentence(name, text) {
        printf "\\newcommand{\\%s}{%s}\n", name, text
    }
    function grouped(x,   s, r) {
        s = sprintf("%.0f", x)
        for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3))
            r = "," substr(s, length(s) - 2) r
        return s r
    }
    function num(x) {    # three figures, or a whole number from 1,000 on
        return x >= 1000 ? grouped(x) : sprintf("%.3g", x)
    }
    FILENAME == heap_file {
        if ($1 == "allreduce" && $2 == "mpi") { heap = $7; heap_t = $5 }
        next
    }
    $1 == "memcpy" { copy = $7 }
    $1 == "first_touch" { touch = $7 }
    $1 == "allreduce" {
        size = $3; bw[$2, size] = $7; t[$2, size] = $5; f[$2, size] = $12
        lo[$2, size] = $9; hi[$2, size] = $10
        if ($7 > best) best = $7
        if ($2 == "ring" && $7 > ring_best) {
            ring_best = $7; ring_best_size = size
        }
        if ($2 == "ring" && size >= 16777216 && $7 > ring_large)
            ring_large = $7
        if ($2 == "ring" && size >= 16777216 \
            && (ring_large_min == "" || $7 < ring_large_min))
            ring_large_min = $7
        if (smallest == "" || size + 0 < smallest + 0) smallest = size
        if (size > largest) largest = size
        sizes[size] = 1
    }
    END {
        above = 0
        for (s in sizes)
            if (bw["ring", s] > copy || bw["mpi", s] > copy) {
                above++
                if (s + 0 > top_above + 0) top_above = s
            }
        # A row whose buffer and the buffer it receives into fit together in
        # the second-level cache of a core moves no bytes through memory; it
        # can pass the point-to-point bandwidth, which was measured with a
        # large message.
        cached = l2 > 0 && 2 * ring_best_size <= l2 + 0
        if (above == 0 && p2p > 0 && ring_best * 1e9 > p2p && cached)
            sentence("RingCeilingVerdict", sprintf("That row is faster " \
                "than two ranks%s point-to-point bandwidth, %.3g~GB/s, " \
                "because its buffer of %s~bytes, with as many bytes " \
                "received, " \
                "fits in a core%ss %s~KiB second-level cache, while the " \
                "point-to-point " \
                "figure was measured with a message far larger than it.",
                q, p2p / 1e9, grouped(ring_best_size), q, grouped(l2 / 1024)))
        else if (above == 0 && best < copy / 2)
            sentence("RingCeilingVerdict", "No all-reduce row of either " \
                "implementation reaches half of it.")
        else if (above == 0)
            sentence("RingCeilingVerdict", "")
        else
            sentence("RingCeilingVerdict", sprintf("%d all-reduce %s above " \
                "it, the largest at %s~bytes. The ceiling is a copy of " \
                "64~MiB; a smaller buffer can stay in the processor%ss " \
                "caches and move faster than memory allows, so a bus " \
                "bandwidth is to be read against the memory it touched.",
                above, above == 1 ? "row lies" : "rows lie",
                grouped(top_above), q))
        # MPICH falls behind: the first size from 1 MiB on where it runs at
        # under a third of the ring, and stays there.
        collapse = 0
        for (s = 1048576; s <= largest; s *= 2)
            if (bw["mpi", s] < bw["ring", s] / 3) {
                if (!collapse) collapse = s
            }
            else collapse = 0
        sentence("RingMpiCollapses", collapse ? 1 : 0)
        sentence("RingCollapseMib", collapse ? collapse / 1048576 : 0)
        # How far behind: the smallest factor from the collapse on, rounded
        # down, so that "at least" holds for every row.
        factor = 0
        for (s = collapse; collapse && s <= largest; s *= 2)
            if (!factor || bw["ring", s] / bw["mpi", s] < factor)
                factor = bw["ring", s] / bw["mpi", s]
        sentence("RingCollapseSentence", collapse ? sprintf("From " \
            "%d~MiB on, the ring runs at least %d times as fast as MPICH " \
            "(at %d~MiB, %.3g against %.3g~GB/s).", collapse / 1048576,
            int(factor), collapse / 1048576, bw["ring", collapse],
            bw["mpi", collapse]) : "")
        sentence("RingNoCollapseSentence", sprintf("At the largest size " \
            "MPICH runs at %.3g~GB/s and the ring at %.3g~GB/s.",
            bw["mpi", largest], bw["ring", largest]))
        # The faults of the largest size: the half a rank receives into a
        # fresh scratch buffer, page by page, at the first-touch rate.
        half_pages = largest / 2 / page
        fault_ms = 1e3 * f["mpi", largest] * page / (touch * 1e9)
        gap_ms = 1e3 * (t["mpi", largest] - heap_t)
        sentence("RingFaultArithmetic", sprintf("The faults are the pages " \
            "of the half of the buffer that a rank receives into its fresh " \
            "scratch buffer, %d~MiB of %d~KiB pages, %s of them; at the " \
            "first-touch rate they cost about %s~ms of the %s~ms by which " \
            "the call is slower than with the heap kept, below.",
            largest / 2 / 1048576, page / 1024, grouped(half_pages),
            num(fault_ms), num(gap_ms)))
        if (touch > 0 && touch < copy / 10)
            sentence("RingSlowTouch", sprintf(" Fresh memory comes slowly " \
                "here: a first touch runs at 1/%.0f of the copy%s, so the " \
                "fall is steeper than on a machine that hands out pages " \
                "faster.", copy / touch, vm ? ", and this " \
                "machine runs under a hypervisor, where every fault of a " \
                "guest can cost the host work as well" : ""))
        else
            sentence("RingSlowTouch", "")
        # The best large row for the drill, and whether the best of all was
        # a cached one.
        sentence("RingLargeBestOfMemcpy", sprintf("%.2g\\,\\%%",
                 100 * ring_large / copy))
        sentence("RingBestCachedClause", cached ? sprintf("; its best row " \
            "of all, %.2g\\,\\%%, was a buffer of %s~bytes, which stays " \
            "in the caches", 100 * ring_best / copy, grouped(ring_best_size)) \
            : "")
        # The smallest size: can the two be told apart?
        rs = smallest
        if (lo["ring", rs] <= hi["mpi", rs] && lo["mpi", rs] <= hi["ring", rs])
            sentence("RingSmallSentence", sprintf("the ring%ss two steps " \
                "cost %s~µs and MPICH%ss call %s~µs, but the spreads of " \
                "their batches overlap (%s to %s~µs against %s to " \
                "%s~µs), so at %d~bytes the two cannot be told apart.",
                q, num(1e6 * t["ring", rs]), q, num(1e6 * t["mpi", rs]),
                num(1e6 * lo["ring", rs]), num(1e6 * hi["ring", rs]),
                num(1e6 * lo["mpi", rs]), num(1e6 * hi["mpi", rs]), rs))
        else
            sentence("RingSmallSentence", sprintf("at %d~bytes the ring%ss " \
                "two steps cost %s~µs and MPICH%ss call %s~µs, and the " \
                "spreads of their batches do not overlap (%s to %s~µs " \
                "against %s to %s~µs): %s is faster here.", rs, q,
                num(1e6 * t["ring", rs]), q, num(1e6 * t["mpi", rs]),
                num(1e6 * lo["ring", rs]), num(1e6 * hi["ring", rs]),
                num(1e6 * lo["mpi", rs]), num(1e6 * hi["mpi", rs]),
                t["ring", rs] < t["mpi", rs] ? "the ring" : "MPICH"))
        pages = f["mpi", largest]
        sentence("RingMpiLargestMs", sprintf("%.3g", 1e3 * t["mpi", largest]))
        sentence("RingHeapGain", sprintf("%.2g", heap / bw["mpi", largest]))
        sentence("RingHeapMs", sprintf("%.3g", 1e3 * heap_t))
        ratio = bw["ring", largest] / heap
        if (ratio <= 1.5 && ratio >= 1 / 1.5)
            sentence("RingHeapVerdict", sprintf("With the heap kept, " \
                "MPICH%ss " \
                "%.3g~GB/s is %.2g\\,\\%% %s the ring%ss %.3g~GB/s: " \
                "at large sizes the table compares allocators, not " \
                "algorithms.", q, heap,
                100 * (heap > bw["ring", largest] \
                       ? heap / bw["ring", largest] - 1 \
                       : 1 - heap / bw["ring", largest]),
                heap > bw["ring", largest] ? "above" : "below", q,
                bw["ring", largest]))
        else if (ratio < 1)
            sentence("RingHeapVerdict", sprintf("With the heap kept, MPICH " \
                "runs at %.3g~GB/s, faster than the ring%ss %.3g~GB/s by a " \
                "factor of %.2g: at large sizes it is the allocator that " \
                "puts " \
                "MPICH behind, not its algorithm.", heap, q,
                bw["ring", largest], 1 / ratio))
        else
            sentence("RingHeapVerdict", sprintf("Even with the heap kept, " \
                "MPICH runs at %.3g~GB/s against the ring%ss %.3g~GB/s, a " \
                "factor of %.2g: the allocator explains MPICH%ss fall, but " \
                "not the whole of the difference.", heap, q,
                bw["ring", largest], ratio, q))
        # The range of the ring rows from 16 MiB on, as per cent of the copy
        # ("31 to 37", or one figure when both ends round alike).
        frac = ring_large / copy
        span_lo = sprintf("%.2g", 100 * ring_large_min / copy)
        span_hi = sprintf("%.2g", 100 * frac)
        span = span_lo == span_hi ? span_hi "\\,\\%" \
                                  : span_lo " to " span_hi "\\,\\%"
        if (ring_large_min / copy >= 0.5)
            sentence("RingMeansBandwidth", sprintf("On this machine the ring " \
                "carried buffers of 16~MiB and more at %s of the rate " \
                "at which one core copies memory, within a factor of two of " \
                "that ceiling: what limits a large all-reduce is the medium " \
                "the bytes cross, and only a faster medium would make it much " \
                "faster.", span))
        else if (frac < 0.5)
            sentence("RingMeansBandwidth", sprintf("On this machine the ring " \
                "carried buffers of 16~MiB and more at only %s of the " \
                "rate at which one core copies memory. The ring already sends " \
                "the fewest bytes that messages between ranks allow, so the " \
                "gap is in how the bytes cross: a message between processes " \
                "passes through memory more than once, and the ranks add as " \
                "well as copy.", span))
        else
            sentence("RingMeansBandwidth", sprintf("On this machine the ring " \
                "carried buffers of 16~MiB and more at %s of the rate at which " \
                "one core copies memory: the largest came within a factor of " \
                "two of that ceiling and the others did not, so the medium " \
                "limits a large all-reduce only in part.", span))
        if (collapse)
            sentence("RingMeansAllocator", sprintf("The second lesson is " \
                "that a slower row has found a cost, not yet its cause. From " \
                "%d~MiB on MPICH fell behind a ring that sends the same bytes, " \
                "and the cause was fresh pages on every call: the page faults " \
                "counted it, and the same call with the heap kept ran %s times " \
                "faster.", collapse / 1048576,
                sprintf("%.2g", heap / bw["mpi", largest])))
        else
            sentence("RingMeansAllocator", "The second lesson is that two " \
                "implementations of the same bytes run at the same pace once " \
                "the buffers are large: here MPICH never fell to a third of " \
                "the ring from 1~MiB on, so nothing but the algorithms and the " \
                "medium separates them.")
        sentence("RingTwoLargestMs", sprintf("%.3g", 1e3 * t["ring", largest]))
        sentence("RingFourPredictedMs",
                 sprintf("%.3g", 1e3 * 1.5 * t["ring", largest]))
        if (collapse && (pages < largest / page / 4 || f["ring", largest] > 1 \
                         || heap < 3 * bw["mpi", largest])) {
            printf "07-data-parallel.sh: MPICH falls behind the ring from " \
                   "%d bytes, but page faults do not explain it (MPICH %.3g " \
                   "faults a call, the ring %.3g; %.3g GB/s with the heap " \
                   "kept, against %.3g): the text would be wrong\n", collapse,
                   pages, f["ring", largest], heap, bw["mpi", largest] \
                   > "/dev/stderr"
            exit 1
        }
    }' "$data/07-allreduce-heap.csv" "$data/07-allreduce-2.csv" \
    > "$numbers/07-allreduce-verdict.tex"
mpiexec $pin -n 2 $bin/minigpt --dp 2 --verify --micro-batches 2 \
        --output "$transcripts/07-verify.txt"
weak="--quiet --steps 60 --eval-every 1000 --json"
for k in 1 2 3 4 5; do
    report=""
    test $k = 1 && report="--transcript $transcripts/07-dp-2.txt"
    mpiexec $pin -n 1 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 8 --output "$data/07-dp-1-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 $report --output "$data/07-dp-2-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 --no-overlap \
            --output "$data/07-dp-blocking-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 --no-allreduce \
            --output "$data/07-dp-compute-$k.json"
done
# The chapter shows the end of the first two-rank report: what the ranks did.
sed -n '/^data parallel/,$p' "$transcripts/07-dp-2.txt" \
    > "$transcripts/07-dp-2-ranks.txt"
test -s "$transcripts/07-dp-2-ranks.txt"
runs_of() {    # KEY CONFIG: the five runs' values of KEY, one to a line
    for k in 1 2 3 4 5; do field "$1" "$data/07-dp-$2-$k.json"; done
}
{
    echo one; runs_of step_seconds_median 1
    echo overlapped; runs_of step_seconds_median 2
    echo blocking; runs_of step_seconds_median blocking
    echo compute; runs_of step_seconds_median compute
    echo waited; runs_of exposed_seconds 2
    echo intervals; runs_of step_intervals 1; runs_of step_intervals 2
    echo batches; field batch "$data/07-dp-1-1.json"
    field batch "$data/07-dp-2-1.json"
} | awk -v tokens="$(field tokens_per_step "$data/07-dp-1-1.json")" -v q="'" \
      "$(cat code/common/formats.awk)"'
    /^[a-z]/ { name = $1; next }
    { v[name, ++n[name]] = $1 }
    function median(name) { return median_of(v, name, n[name]) }
    function range(name,   i, lo, hi) {
        lo = hi = v[name, 1]
        for (i = 2; i <= n[name]; i++) {
            if (v[name, i] < lo) lo = v[name, i]
            if (v[name, i] > hi) hi = v[name, i]
        }
        return hi - lo
    }
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    function ms(x) { return sprintf("%.3g", 1e3 * x) }
    END {
        one = median("one"); two = median("overlapped")
        blocking = median("blocking"); compute = median("compute")
        comm = blocking - compute; saved = blocking - two
        noise = range("overlapped")
        if (range("blocking") > noise) noise = range("blocking")
        if (range("compute") > noise) noise = range("compute")
        macro("DpRepeats", n["one"])
        for (i = 2; i <= n["intervals"]; i++)      # one warm-up rule for all
            if (v["intervals", i] != v["intervals", 1]) {
                print "07-data-parallel.sh: the runs timed different " \
                      "numbers of steps" > "/dev/stderr"
                exit 1
            }
        macro("DpTimedIntervals", v["intervals", 1])
        macro("DpOneBatch", v["batches", 1]); macro("DpTwoBatch", v["batches", 2])
        macro("DpOneMs", ms(one)); macro("DpTwoMs", ms(two))
        macro("DpBlockingMs", ms(blocking)); macro("DpComputeMs", ms(compute))
        macro("DpCommMs", ms(comm)); macro("DpSavedMs", ms(saved))
        macro("DpNoiseMs", ms(noise))
        # The wait, in the unit the report prints it in (us below 1 ms).
        waited = median("waited")
        macro("DpExposed", waited < 1e-3 \
              ? sprintf("%.3g~µs", 1e6 * waited) \
              : sprintf("%.3g~ms", 1e3 * waited))
        macro("DpOneTokens", grouped(tokens / one))
        macro("DpTwoTokens", grouped(2 * tokens / two))
        macro("DpBlockingTokens", grouped(2 * tokens / blocking))
        macro("DpEfficiency", sprintf("%.0f", 100 * one / two))
        # The five single-rank runs, slowest and fastest, in tokens/s.
        lo = hi = v["one", 1]
        for (i = 2; i <= n["one"]; i++) {
            if (v["one", i] < lo) lo = v["one", i]
            if (v["one", i] > hi) hi = v["one", i]
        }
        macro("DpOneTokensLow", grouped(tokens / hi))
        macro("DpOneTokensHigh", grouped(tokens / lo))
        # Is the overlapped step slower than the blocking one?
        macro("DpOverlapCompare", sprintf("The overlapped run moved %s " \
              "tokens/s and the blocking run %s: %s",
              grouped(2 * tokens / two),
              grouped(2 * tokens / blocking), two > blocking \
              ? sprintf("the overlapped step was slower than the blocking " \
                        "one, not faster, by %s~ms%s.", ms(two - blocking),
                        two - blocking <= noise ? ", within the spread of " \
                        "the runs" : "") \
              : sprintf("the overlapped step was faster than the blocking " \
                        "one by %s~ms%s.", ms(blocking - two),
                        blocking - two <= noise ? ", within the spread of " \
                        "the runs" : "")))
        # Are two ranks without an all-reduce already slower than one rank?
        spread = range("one")
        if (range("compute") > spread) spread = range("compute")
        if (compute - one > spread)
            macro("DpSharing", sprintf("Two ranks with no all-reduce at all " \
                  "already take %s~ms a step against one rank%ss " \
                  "%s~ms, more than the runs differ among themselves: " \
                  "the two ranks share the machine (its memory, its " \
                  "caches and whatever else runs " \
                  "on it), and each runs slower for it.", ms(compute), q,
                  ms(one)))
        else
            macro("DpSharing", sprintf("Two ranks with no all-reduce at all " \
                  "take %s~ms a step against one rank%ss %s~ms, a " \
                  "difference " \
                  "within what the runs differ among themselves.", ms(compute),
                  q, ms(one)))
        if (comm <= noise) {
            macro("DpHidden", "--")
            macro("DpOverlapVerdict", "The all-reduce adds no more to " \
                  "a step " \
                  "than the runs differ from one another, so these runs " \
                  "cannot say how much of it was hidden.")
        } else {
            hidden = saved / comm
            macro("DpHidden", sprintf("%.0f", 100 * hidden))
            macro("DpOverlapVerdict", sprintf("Overlap %s %s~ms of the " \
                  "%s~ms that the blocking all-reduce adds to a step: %s.",
                  saved >= 0 ? "saved" : "lost",
                  ms(saved >= 0 ? saved : -saved), ms(comm),
                  hidden >= 0.5 ? "it hid most of the communication" \
                  : hidden >= 0.1 ? "it hid part of the communication" \
                  : "it hid little or none of the communication"))
        }
        lost = two - one; shared = compute - one; added = two - compute
        if (lost <= noise)
            macro("DpMeansScaling", sprintf("A step on two ranks took as long " \
                  "as a step on one, to within the %s~ms by which the runs " \
                  "differ, so these runs show no cost of the second rank: as " \
                  "far as they can tell, two ranks did twice the work in the " \
                  "same time.", ms(noise)))
        else if (shared <= noise && added <= noise)
            macro("DpMeansScaling", sprintf("A step on two ranks took %s~ms " \
                  "longer than a step on one, but neither part of it, %s~ms " \
                  "for sharing the machine and %s~ms for the all-reduce, is " \
                  "larger than the %s~ms by which the runs differ, so these " \
                  "runs cannot say which of the two cost it.",
                  ms(lost), ms(shared), ms(added), ms(noise)))
        else if (shared <= noise)
            macro("DpMeansScaling", sprintf("A step on two ranks took %s~ms " \
                  "longer than a step on one. Without the all-reduce the two " \
                  "ranks ran as fast as one, to within the spread of the runs, " \
                  "so what was lost is the all-reduce, as the overlapped run " \
                  "paid for it.",
                  ms(lost)))
        else if (added <= noise)
            macro("DpMeansScaling", sprintf("A step on two ranks took %s~ms " \
                  "longer than a step on one, and the two ranks lost it with no " \
                  "all-reduce at all, by sharing one machine: the all-reduce " \
                  "itself added less than the runs differ.", ms(lost)))
        else if (saved > noise)
            macro("DpMeansScaling", sprintf("A step on two ranks took %s~ms " \
                  "longer than a step on one: %s~ms of it the two ranks pay " \
                  "with no all-reduce at all, by sharing one machine, and " \
                  "%s~ms (the overlapped step of %s~ms against the compute " \
                  "alone, %s~ms) is the part of the all-reduce that overlap " \
                  "did not hide, of the %s~ms that the blocking step of %s~ms " \
                  "pays for it.",
                  ms(lost), ms(shared), ms(added), ms(two), ms(compute),
                  ms(comm), ms(blocking)))
        else
            macro("DpMeansScaling", sprintf("A step on two ranks took %s~ms " \
                  "longer than a step on one: %s~ms of it the two ranks pay " \
                  "with no all-reduce at all, by sharing one machine, and the " \
                  "rest is the all-reduce. Overlap hid none of it that these " \
                  "runs can measure: the overlapped step took %s~ms and the " \
                  "blocking one %s~ms, %s.",
                  ms(lost), ms(shared), ms(two), ms(blocking),
                  two > blocking + noise \
                  ? sprintf("so starting the all-reduce early cost %s~ms " \
                            "more than waiting for it", ms(two - blocking)) \
                  : sprintf("%s~ms apart, within the spread of the runs",
                            ms(two > blocking ? two - blocking : blocking - two))))
        if (comm <= noise)
            macro("DpMeansComm", sprintf("For this model a step with the " \
                  "whole gradient%ss all-reduce, blocking, took %s~ms %s than " \
                  "the %s~ms of the compute alone, less than the runs differ " \
                  "among themselves: the runs cannot tell its cost from the " \
                  "machine%ss noise.", q, ms(comm >= 0 ? comm : -comm),
                  comm >= 0 ? "longer" : "less", ms(compute), q))
        else
            macro("DpMeansComm", sprintf("For this model the whole gradient%ss " \
                  "all-reduce, blocking, adds %s~ms to a step of %s~ms of " \
                  "compute, %.2g\\,\\%% more.", q, ms(comm), ms(compute),
                  100 * comm / compute))
    }' > "$numbers/07-dp.tex"
