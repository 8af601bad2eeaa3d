# Tangled from chapters/07-data-parallel.nw; edit the chapter, not this file.
# usage: sh code/runs/07-data-parallel.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
cores=$(nproc)
if [ "$cores" -lt 2 ]; then
    echo "07-data-parallel.sh: the chapter times two ranks, one per core;" \
         "this machine has $cores core" >&2
    exit 1
fi
pin="-bind-to core"
machine_field() {    # the number after "KEY": in build/machine.json, if any
    sed -n "s/.*\"$1\": *\([0-9][0-9.eE+]*\).*/\1/p" "$2" 2>/dev/null | head -n 1
}
copy=$(machine_field memcpy_bytes_per_second "$1/machine.json")
p2p=$(machine_field p2p_bytes_per_second "$1/machine.json")
memcpy=""
if [ -n "$copy" ]; then
    memcpy="--memcpy $(awk -v b="$copy" 'BEGIN { printf "%.6g", b / 1e9 }')"
fi
{
    printf '\\newcommand{\\RingCoresHere}{%d}\n' "$cores"
    printf '\\newcommand{\\RingHasPtoP}{%d}\n' "$([ -n "$p2p" ] && echo 1 || echo 0)"
    source='measured by the benchmark itself, as this build has no'
    source="$source \\texttt{build/machine.json}"
    if [ -n "$copy" ]; then source='read from \texttt{build/machine.json}'; fi
    printf '\\newcommand{\\RingCeilingSource}{%s}\n' "$source"
    printf '\\newcommand{\\RingPtoPGbps}{%s}\n' \
        "$(awk -v b="${p2p:-0}" 'BEGIN { printf "%.3g", b / 1e9 }')"
} > "$numbers/07-machine.tex"
largest=67108864
mpiexec $pin -n 2 $bin/allreduce $memcpy --max-bytes $largest \
        --transcript "$transcripts/07-allreduce-2.txt" \
        --data "$data/07-allreduce-2.csv" --latex Ring \
        --output "$numbers/07-allreduce.tex" 2>/dev/null
heap="glibc.malloc.mmap_threshold=1073741824"
heap="$heap:glibc.malloc.trim_threshold=1073741824"
GLIBC_TUNABLES=$heap mpiexec $pin -n 2 $bin/allreduce $memcpy --op allreduce \
        --min-bytes $largest --max-bytes $largest \
        --data "$data/07-allreduce-heap.csv" --latex RingHeap \
        --output "$numbers/07-allreduce-heap.tex" 2>/dev/null
if [ "$cores" -ge 4 ]; then
    mpiexec $pin -n 4 $bin/allreduce $memcpy --op allreduce --max-bytes 67108864 \
            --transcript "$transcripts/07-allreduce-4.txt" --latex RingFour \
            --output "$numbers/07-allreduce-4.tex" 2>/dev/null
    timed=1
else
    mpiexec -n 4 $bin/allreduce --max-bytes 65536 --seconds 0.001 --warmup 1 \
            --repeats 1 --latex RingFour \
            --output "$numbers/07-allreduce-4.tex" 2>/dev/null
    rm -f "$transcripts/07-allreduce-4.txt" "$transcripts/07-allreduce-4-short.txt"
    timed=0
fi
printf '\\newcommand{\\RingFourTimed}{%d}\n' $timed >> "$numbers/07-allreduce-4.tex"
# The book shows every fourth size of the all-reduce table, and every size
# from 16 MiB.
for n in 2 4; do
    test -f "$transcripts/07-allreduce-$n.txt" || continue
    awk '/^# allreduce/ { on = 1 } /^# reduce_scatter/ { exit }
         !on || /^#/ || (++row % 4) == 1 || $1 >= 16777216' \
        "$transcripts/07-allreduce-$n.txt" | sed '$ { /^#$/d; }' \
        > "$transcripts/07-allreduce-$n-short.txt"
done
awk -F, -v heap_file="$data/07-allreduce-heap.csv" -v page="$(getconf PAGESIZE)" \
    -v q="'" '
    function sentence(name, text) {
        printf "\\newcommand{\\%s}{%s}\n", name, text
    }
    function grouped(x,   s, r) {
        s = sprintf("%.0f", x)
        for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3))
            r = "," substr(s, length(s) - 2) r
        return s r
    }
    FILENAME == heap_file {
        if ($1 == "allreduce" && $2 == "mpi") { heap = $7; heap_t = $5 }
        next
    }
    $1 == "memcpy" { copy = $7 }
    $1 == "first_touch" { touch = $7 }
    $1 == "allreduce" {
        size = $3; bw[$2, size] = $7; t[$2, size] = $5; f[$2, size] = $12
        if ($7 > best) best = $7
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
        if (above == 0 && best < copy / 2)
            sentence("RingCeilingVerdict", sprintf("No all-reduce row of " \
                "either implementation reaches half of it (the best, " \
                "%.2g\\,\\%%).", 100 * best / copy))
        else if (above == 0)
            sentence("RingCeilingVerdict", sprintf("The best all-reduce row " \
                "of either implementation reaches %.2g\\,\\%% of it.",
                100 * best / copy))
        else
            sentence("RingCeilingVerdict", sprintf("%d all-reduce %s above " \
                "it, the largest at %s~bytes. The ceiling is a copy of " \
                "64~MiB; a smaller buffer can stay in the processor%ss " \
                "caches and move faster than memory allows, so a bus " \
                "bandwidth is to be read against the memory it touched.",
                above, above == 1 ? "row lies" : "rows lie", grouped(top_above), q))
        # MPICH falls behind: the first size from 1 MiB on where it runs at
        # under a third of the ring, and stays there.
        collapse = 0
        for (s = 1048576; s <= largest; s *= 2)
            if (bw["mpi", s] < bw["ring", s] / 3) { if (!collapse) collapse = s }
            else collapse = 0
        sentence("RingMpiCollapses", collapse ? 1 : 0)
        sentence("RingCollapseMib", collapse ? collapse / 1048576 : 0)
        pages = f["mpi", largest]
        sentence("RingMpiLargestMs", sprintf("%.3g", 1e3 * t["mpi", largest]))
        sentence("RingHeapGain", sprintf("%.2g", heap / bw["mpi", largest]))
        sentence("RingHeapMs", sprintf("%.3g", 1e3 * heap_t))
        ratio = bw["ring", largest] / heap
        if (ratio <= 1.5 && ratio >= 1 / 1.5)
            sentence("RingHeapVerdict", sprintf("With the heap kept, MPICH%ss " \
                "%.3g~GB/s is within a factor of 1.5 of the ring%ss %.3g~GB/s: " \
                "at large sizes the table compares allocators, not " \
                "algorithms.", q, heap, q, bw["ring", largest]))
        else if (ratio < 1)
            sentence("RingHeapVerdict", sprintf("With the heap kept, MPICH " \
                "runs at %.3g~GB/s, faster than the ring%ss %.3g~GB/s by a " \
                "factor of %.2g: at large sizes it is the allocator that puts " \
                "MPICH behind, not its algorithm.", heap, q,
                bw["ring", largest], 1 / ratio))
        else
            sentence("RingHeapVerdict", sprintf("Even with the heap kept, " \
                "MPICH runs at %.3g~GB/s against the ring%ss %.3g~GB/s, a " \
                "factor of %.2g: the allocator explains MPICH%ss fall, but " \
                "not the whole of the difference.", heap, q,
                bw["ring", largest], ratio, q))
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
weak="--quiet --steps 150 --eval-every 1000 --json"
for k in 1 2 3 4 5; do
    report=""
    test $k = 1 && report="--transcript $transcripts/07-dp-2.txt"
    mpiexec $pin -n 1 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 8 --output "$data/07-dp-1-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 $report --output "$data/07-dp-2-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 --no-overlap --output "$data/07-dp-blocking-$k.json"
    mpiexec $pin -n 2 $bin/minigpt $weak --machine "$1/machine.json" \
            --batch 16 --dp 2 --no-allreduce --output "$data/07-dp-compute-$k.json"
done
runs_of() {    # KEY CONFIG: the five runs' values of KEY, one to a line
    for k in 1 2 3 4 5; do field "$1" "$data/07-dp-$2-$k.json"; done
}
{
    echo one; runs_of step_seconds_median 1
    echo overlapped; runs_of step_seconds_median 2
    echo blocking; runs_of step_seconds_median blocking
    echo compute; runs_of step_seconds_median compute
    echo waited; runs_of exposed_seconds 2
} | awk -v tokens="$(field tokens_per_step "$data/07-dp-1-1.json")" '
    /^[a-z]/ { name = $1; next }
    { v[name, ++n[name]] = $1 }
    function median(name,   i, j, k, x, a) {
        k = n[name]
        for (i = 1; i <= k; i++) a[i] = v[name, i]
        for (i = 2; i <= k; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                x = a[j]; a[j] = a[j - 1]; a[j - 1] = x
            }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
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
    function grouped(x,   s, r) {
        s = sprintf("%.0f", x)
        for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3))
            r = "," substr(s, length(s) - 2) r
        return s r
    }
    END {
        one = median("one"); two = median("overlapped")
        blocking = median("blocking"); compute = median("compute")
        comm = blocking - compute; saved = blocking - two
        noise = range("overlapped")
        if (range("blocking") > noise) noise = range("blocking")
        if (range("compute") > noise) noise = range("compute")
        macro("DpRepeats", n["one"])
        macro("DpOneMs", ms(one)); macro("DpTwoMs", ms(two))
        macro("DpBlockingMs", ms(blocking)); macro("DpComputeMs", ms(compute))
        macro("DpCommMs", ms(comm)); macro("DpSavedMs", ms(saved))
        macro("DpNoiseMs", ms(noise)); macro("DpExposedMs", ms(median("waited")))
        macro("DpOneTokens", grouped(tokens / one))
        macro("DpTwoTokens", grouped(2 * tokens / two))
        macro("DpBlockingTokens", grouped(2 * tokens / blocking))
        macro("DpEfficiency", sprintf("%.0f", 100 * one / two))
        if (comm <= noise) {
            macro("DpHidden", "--")
            macro("DpOverlapVerdict", "The all-reduce adds no more to a step " \
                  "than the runs differ from one another, so these runs " \
                  "cannot say how much of it was hidden.")
        } else {
            hidden = saved / comm
            macro("DpHidden", sprintf("%.0f", 100 * hidden))
            macro("DpOverlapVerdict", sprintf("Overlap %s %s~ms of the " \
                  "%s~ms that the blocking all-reduce adds to a step: %s.",
                  saved >= 0 ? "saved" : "lost", ms(saved >= 0 ? saved : -saved),
                  ms(comm), hidden >= 0.5 ? "it hid most of the communication" \
                  : hidden >= 0.1 ? "it hid part of the communication" \
                  : "it hid little or none of the communication"))
        }
    }' > "$numbers/07-dp.tex"
