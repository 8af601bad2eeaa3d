# Tangled from chapters/99k-experts-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/14-alltoall.sh BUILD_DIR
set -eu
bin="$1/bin"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
cores=$(nproc)
ranks=$cores pin="-bind-to core"
if [ "$ranks" -gt 4 ]; then ranks=4; fi
if [ "$ranks" -eq 3 ]; then ranks=2; fi      # a power of two: whole blocks
if [ "$ranks" -lt 2 ]; then ranks=2 pin=""; fi
repeats=5 min=64 max=4194304
sweep="--min-bytes $min --max-bytes $max --repeats $repeats --seconds 0.02"
mpiexec $pin -n $ranks $bin/allreduce --machine "$1/machine.json" \
        --op allreduce $sweep \
        --data "$data/14-alltoall-allreduce.csv" >/dev/null 2>&1
mpiexec $pin -n $ranks $bin/allreduce --machine "$1/machine.json" \
        --op alltoall $sweep \
        --data "$data/14-alltoall-measured.csv" \
        --transcript "$transcripts/14-alltoall.txt" \
        --latex AlltoallRun --output "$numbers/14-alltoall-run.tex" 2>/dev/null
awk -F, 'FNR == 1 { next }
         $1 == "allreduce" || $1 == "alltoall" {
             bw[$1, $2, $3] = $7; size[$3] = 1
             spread = ($10 - $9) / $5
             if (spread > widest[$3]) widest[$3] = spread
         }
         END {
             print "size,pairwise_busbw,mpi_alltoall_busbw," \
                   "ring_allreduce_busbw,mpi_allreduce_busbw,widest_spread"
             for (s in size)
                 if ((("alltoall", "pairwise", s) in bw) \
                     && (("allreduce", "ring", s) in bw))
                     printf "%s,%s,%s,%s,%s,%.4g\n", s, \
                            bw["alltoall", "pairwise", s], \
                            bw["alltoall", "mpi", s], \
                            bw["allreduce", "ring", s], \
                            bw["allreduce", "mpi", s], widest[s]
         }' "$data/14-alltoall-measured.csv" \
            "$data/14-alltoall-allreduce.csv" \
    | sort -t, -k1,1n > "$data/14-alltoall.csv"
awk -F, -v ranks=$ranks -v cores=$cores -v repeats=$repeats \
    -v pinned="$pin" \
    -v wrong="$(sed -n 's/.*{\\AlltoallRunWrong}{\(.*\)}/\1/p' \
                "$numbers/14-alltoall-run.tex")" \
    -v largest="$(sed -n \
        's/.*{\\AlltoallRunLargestDifference}{\(.*\)}/\1/p' \
        "$numbers/14-alltoall-run.tex")" '
function macro(name, text) { printf "\\newcommand{\\%s}{%s}\n", name, text }
function size(b) { return b >= 1048576 ? sprintf("%g\\,MiB", b / 1048576) \
                     : b >= 1024 ? sprintf("%g\\,KiB", b / 1024) \
                     : sprintf("%g\\,B", b) }
function median(x, k,   i, j, t) {          # of x[1..k], sorted in place
    for (i = 2; i <= k; i++)
        for (j = i; j > 1 && x[j - 1] > x[j]; j--) {
            t = x[j]; x[j] = x[j - 1]; x[j - 1] = t
        }
    return k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2
}
function best(a, b) { return a > b ? a : b }
function fail(why) {
    printf "14-alltoall.sh: %s: the text would be wrong\n", why \
        > "/dev/stderr"
    bad = 1; exit 1
}
NR > 1 {
    n++; s[n] = $1; pw[n] = $2; ma[n] = $3; ra[n] = $4; mr[n] = $5
    spread[n] = $6
    if ($2 <= 0 || $3 <= 0 || $4 <= 0 || $5 <= 0) fail("a bandwidth is 0")
}
END {
    if (bad) exit 1
    if (n < 2) fail("fewer than two sizes measured")
    if (wrong != "0") fail("the all-to-all delivered wrong blocks")
    macro("AlltoallRanks", ranks); macro("AlltoallCores", cores)
    macro("AlltoallRepeats", repeats)
    macro("AlltoallBusFactor", sprintf("%d/%d", ranks - 1, ranks))
    macro("AlltoallPinned", pinned != "" ? "each pinned to a core of " \
          "its own" : "oversubscribed, not pinned")
    macro("AlltoallSmallest", size(s[1])); macro("AlltoallLargest", size(s[n]))
    macro("AlltoallLargestDifference", largest)
    macro("AlltoallPairwiseBusbw", sprintf("%.3g", pw[n]))
    macro("AlltoallMpiBusbw", sprintf("%.3g", ma[n]))
    macro("AlltoallRingBusbw", sprintf("%.3g", ra[n]))
    macro("AlltoallMpiAllreduceBusbw", sprintf("%.3g", mr[n]))
    # the largest quarter of the sizes (at least three), where the link
    # bandwidth, not latency, sets the time: the median of the ratios
    k = int(n / 4); if (k < 3) k = n < 3 ? n : 3
    for (i = 1; i <= k; i++) {
        j = n - k + i
        q[i] = best(pw[j], ma[j]) / best(ra[j], mr[j]); p[i] = pw[j] / ma[j]
        w[i] = spread[j]
    }
    r = median(q, k); o = median(p, k); wide = median(w, k)
    macro("AlltoallFrom", size(s[n - k + 1]))
    macro("AlltoallVerdict", sprintf("From %s to %s, the better " \
          "all-to-all reached %s times the better all-reduce%ss bus " \
          "bandwidth (the median of the %d sizes)%s", size(s[n - k + 1]), \
          size(s[n]), sprintf("%.3g", r), "\x27", k, \
          r > 0.8 && r < 1.25 ? ": the same link, used about as well by " \
                                "both." \
          : r <= 0.8 ? ": the all-to-all used the link less well." \
          : ": on this host, where no link is crossed, the all-reduce" \
            "\x27s sums and its second pass through memory cost more; on " \
            "a real link the two should meet."))
    macro("AlltoallVerdictImpl", o >= 1 \
          ? sprintf("The pairwise exchange reached %s times the bus " \
                    "bandwidth of MPICH%ss all-to-all there.", \
                    sprintf("%.3g", o), "\x27") \
          : sprintf("MPICH%ss all-to-all reached %s times the bus " \
                    "bandwidth of the pairwise exchange there.", "\x27", \
                    sprintf("%.3g", 1 / o)))
    macro("AlltoallSpread", sprintf("%.3g\\,\\%%", 100 * wide))
    macro("AlltoallVerdictSpread", wide > 0.5 \
          ? sprintf("But the batches at these sizes spread over %.3g\\,\\%% " \
                    "of their median (the median of the widest spreads): " \
                    "the times were unsteady, and these ratios say little " \
                    "about the collectives.", \
                    100 * wide) \
          : sprintf("The batches at these sizes spread over %.3g\\,\\%% " \
                    "of their median at the most (the median of the " \
                    "widest spreads)%s", 100 * wide, \
                    (o > 1 ? o - 1 : 1 / o - 1) < wide \
                    ? ": the two all-to-alls are not told apart by these " \
                      "runs." : ", less than the difference between the " \
                      "two all-to-alls."))
}' "$data/14-alltoall.csv" > "$numbers/14-alltoall.tex"
