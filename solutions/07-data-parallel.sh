# usage: sh solutions/07-data-parallel.sh BUILD_DIR
#
# The runs and the arithmetic behind the worked solutions of chapter 7 (data
# parallel and the ring all-reduce). Exercise N writes the numbers its prose
# needs to BUILD_DIR/solutions/07-exN*.tex, as LaTeX macros named
# \SolFour<letter><Field> (A for exercise 7.1, B for 7.2, and so on), and its
# transcripts to BUILD_DIR/solutions/07-exN*.txt.
#
# Each exercise's inputs are set once, at the top of its section, as the
# statement gives them. What fleet computes (parameters, bytes, FLOPs,
# seconds of compute) comes from fleet's own --latex and --json; what it does
# not compute yet (the bytes a collective moves, its time) is one line of awk
# on those inputs and on fleet's JSON, printed as a macro, so that no derived
# number is typed by hand. tests/07-solutions.t redoes every
# line of this arithmetic in Perl. Exercise 4.7 reads a measurement of this
# build: a two-rank all-reduce sweep of a few seconds.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"





# ---------------------------------------------------------------- 7.1 ------
# What one rank of a ring sends: a buffer of N bytes, n ranks. Chunk N/n;
# (n-1)/n N in each half; 2(n-1)/n N in all, over 2(n-1) steps; against
# (n-1) N if every rank sent its whole buffer to every other.
N=1e9
for n in 2 8 1024; do
    case $n in 2) name=Two ;; 8) name=Eight ;; 1024) name=Kilo ;; esac
    macro SolFourA${name}ChunkMB "$(calc %.4g "$N / $n / 1e6")"
    macro SolFourA${name}HalfGB "$(calc %.4g "($n - 1) / $n * $N / 1e9")"
    macro SolFourA${name}TotalGB "$(calc %.4g "2 * ($n - 1) / $n * $N / 1e9")"
    macro SolFourA${name}Steps "$(grouped "$(calc %d "2 * ($n - 1)")")"
    macro SolFourA${name}NaiveGB "$(grouped "$(calc %.0f "($n - 1) * $N / 1e9")")"
done > "$out/07-ex1.tex"

# ---------------------------------------------------------------- 7.2 ------
# A 1 GB gradient all-reduced at a bus bandwidth of 50 GB/s: the time is the
# bytes each rank sends over the bus bandwidth.
N=1e9 busbw=50e9
for n in 8 1024; do
    case $n in 8) name=Eight ;; 1024) name=Kilo ;; esac
    t="2 * ($n - 1) / $n * $N / $busbw"
    macro SolFourB${name}Ms "$(calc %.4g "1e3 * $t")"
    macro SolFourB${name}AlgbwGBs "$(calc %.4g "$N / ($t) / 1e9")"
    macro SolFourB${name}HalfMs "$(calc %.4g "1e3 * ($n - 1) / $n * $N / $busbw")"
done > "$out/07-ex2.tex"
macro SolFourBGrowth "$(calc %.3g "(2 * 1023 / 1024) / (2 * 7 / 8)")" \
    >> "$out/07-ex2.tex"

# ---------------------------------------------------------------- 7.3 ------
# nccl-tests' busbw of 360 GB/s on 8 GPUs at 1 GB: algbw = busbw / factor,
# time = size / algbw, for all-reduce and for all-gather.
n=8 busbw=360e9 N=1e9
{
    macro SolFourCAllreduceFactor "$(calc %.4g "2 * ($n - 1) / $n")"
    macro SolFourCAllgatherFactor "$(calc %.4g "($n - 1) / $n")"
    macro SolFourCAllreduceAlgbw "$(calc %.4g "$busbw / (2 * ($n - 1) / $n) / 1e9")"
    macro SolFourCAllreduceMs "$(calc %.4g "1e3 * $N / ($busbw / (2 * ($n - 1) / $n))")"
    macro SolFourCAllgatherAlgbw "$(calc %.4g "$busbw / (($n - 1) / $n) / 1e9")"
    macro SolFourCAllgatherMs "$(calc %.4g "1e3 * $N / ($busbw / (($n - 1) / $n))")"
} > "$out/07-ex3.tex"
# The same node's NVSwitches can add (NVLS): an all-reduce in the network
# sends each GPU's buffer once, as fleet prices it with --in-network (chapter
# 3's collective_bytes_sent), against the ring's 2(n-1)/n of it. At the
# link's 450 GB/s each way, the shortest call, and the busbw nccl-tests would
# print for it with the ring's factor. Then the 360 GB/s read both ways: as a
# ring each link carried busbw; as NVLS each link carried the buffer per
# call, algbw.
link=450e9
{
    macro SolFourCRingSentGB "$(calc %.4g "2 * ($n - 1) / $n * $N / 1e9")"
    macro SolFourCNvlsSentGB "$(calc %.4g "$N / 1e9")"
    macro SolFourCNvlsMs "$(calc %.4g "1e3 * $N / $link")"
    macro SolFourCRingLinkMs "$(calc %.4g "1e3 * 2 * ($n - 1) / $n * $N / $link")"
    macro SolFourCNvlsBusbw "$(calc %.4g "$link * 2 * ($n - 1) / $n / 1e9")"
    macro SolFourCLinkGBs "$(calc %.4g "$link / 1e9")"
    macro SolFourCRingLinkShare "$(calc %.3g "100 * $busbw / $link")\\,\\%"
    macro SolFourCNvlsLinkShare "$(calc %.3g "100 * $busbw / (2 * ($n - 1) / $n) / $link")\\,\\%"
} >> "$out/07-ex3.tex"

# ---------------------------------------------------------------- 7.4 ------
# The alpha-beta model of the ring all-reduce:
#   t(N) = 2(n-1) alpha + 2(n-1)/n N / beta,
# whose two terms are equal at N* = n alpha beta.
alpha=5e-6 beta=50e9
{
    for n in 8 1024; do
        case $n in 8) name=Eight ;; 1024) name=Kilo ;; esac
        macro SolFourD${name}LatencyMs "$(calc %.4g "1e3 * 2 * ($n - 1) * $alpha")"
        macro SolFourD${name}CrossMB "$(calc %.4g "$n * $alpha * $beta / 1e6")"
    done
    n=1024
    for N in 1e6 1e9; do
        case $N in 1e6) name=Small ;; 1e9) name=Large ;; esac
        lat="2 * ($n - 1) * $alpha" bw="2 * ($n - 1) / $n * $N / $beta"
        macro SolFourD${name}Ms "$(calc %.4g "1e3 * ($lat + $bw)")"
        macro SolFourD${name}LatencyShare "$(calc %.3g "100 * ($lat) / ($lat + $bw)")\\,\\%"
        macro SolFourD${name}BusbwGBs "$(calc %.4g "$bw * $beta / ($lat + $bw) / 1e9")"
    done
    # Halving-doubling (Rabenseifner): 2 log2(n) steps, the same bytes.
    macro SolFourDHalvingSteps "$(calc %d "2 * log($n) / log(2) + 0.5")"
    macro SolFourDHalvingLatencyMs "$(calc %.4g "1e3 * 2 * log($n) / log(2) * $alpha")"
} > "$out/07-ex4.tex"

# ---------------------------------------------------------------- 7.5 ------
# Design A of chapter 3: 100e9 parameters, TP8 inside a node, FSDP over 128
# such groups, bf16 weights, 16,384 tokens per replica per step, 50 GB/s per
# GPU across nodes, 40 % MFU. fleet gives the parameters and bytes of one
# tensor-parallel rank and the compute time of its share of the step; the
# FSDP traffic is two all-gathers of the weights (forward, backward) and one
# reduce-scatter of the gradients, each (d-1)/d of the rank's bf16 bytes,
# which a quick estimate rounds to the bytes themselves.
params=100e9 tp=8 dp=128 tokens=16384 link=50e9 mfu=0.4 slow=200e9
rank_params=$(calc %.0f "$params / $tp")
$fleet memory --params "$rank_params" --bytes-per-param 2 --gpus "$dp" \
       --output "$out/07-ex5-memory.txt"
quote_lines "$out/07-ex5-memory.txt" '^(static state|fully sharded)'
$fleet memory --params "$rank_params" --bytes-per-param 2 --gpus "$dp" \
       --latex SolFourEWeights --output "$out/07-ex5-weights.tex"
$fleet memory --params "$rank_params" --bytes-per-param 2 --gpus "$dp" \
       --json --output "$out/07-ex5-weights.json"
$fleet memory --params "$rank_params" --gpus "$dp" \
       --latex SolFourEState --output "$out/07-ex5-state.tex"
$fleet compute --params "$rank_params" --tokens "$tokens" --gpus 1 --mfu "$mfu" \
       --output "$out/07-ex5-compute.txt"
quote "$out/07-ex5-compute.txt" 'training FLOPs|on [0-9]'
$fleet compute --params "$rank_params" --tokens "$tokens" --gpus 1 --mfu "$mfu" \
       --latex SolFourECompute --output "$out/07-ex5-compute.tex"
$fleet compute --params "$rank_params" --tokens "$tokens" --gpus 1 --mfu "$mfu" \
       --json --output "$out/07-ex5-compute.json"
bytes=$(json "$out/07-ex5-weights.json" static_bytes)
compute=$(json "$out/07-ex5-compute.json" seconds)
test -n "$bytes" && test -n "$compute"
{
    macro SolFourERankParams "$(calc %.4g "$rank_params / 1e9")"
    macro SolFourETrafficGB "$(calc %.4g "3 * $bytes / 1e9")"
    macro SolFourERingTrafficGB "$(calc %.4g "3 * ($dp - 1) / $dp * $bytes / 1e9")"
    macro SolFourECommSeconds "$(calc %.3g "3 * $bytes / $link")"
    macro SolFourERingCommSeconds "$(calc %.4g "3 * ($dp - 1) / $dp * $bytes / $link")"
    macro SolFourEComputeTime "$(calc %.3g "$compute")"
    macro SolFourERatio "$(calc %.3g "3 * $bytes / $link / $compute")"
    macro SolFourERingRatio "$(calc %.3g "3 * ($dp - 1) / $dp * $bytes / $link / $compute")"
    macro SolFourESlowGBs "$(calc %.4g "$slow / 8 / 1e9")"
    macro SolFourESlowCommSeconds "$(calc %.3g "3 * $bytes / ($slow / 8)")"
    macro SolFourESlowRatio "$(calc %.3g "3 * $bytes / ($slow / 8) / $compute")"
} > "$out/07-ex5.tex"

# ---------------------------------------------------------------- 7.6 ------
# Plain data parallel: 1e9 parameters on 64 GPUs, 524,288 tokens per step,
# 40 % MFU, gradients all-reduced at a bus bandwidth of 50 GB/s, in fp32 and
# in bf16.
params=1e9 gpus=64 tokens=524288 mfu=0.4 busbw=50e9
$fleet memory --params "$params" --bytes-per-param 4 --json \
       --output "$out/07-ex6-fp32.json"
$fleet memory --params "$params" --bytes-per-param 4 \
       --latex SolFourFGrads --output "$out/07-ex6-grads.tex"
$fleet compute --params "$params" --tokens "$tokens" --gpus "$gpus" --mfu "$mfu" \
       --output "$out/07-ex6-compute.txt"
quote "$out/07-ex6-compute.txt" 'training FLOPs|on [0-9]'
$fleet compute --params "$params" --tokens "$tokens" --gpus "$gpus" --mfu "$mfu" \
       --latex SolFourFCompute --output "$out/07-ex6-compute.tex"
$fleet compute --params "$params" --tokens "$tokens" --gpus "$gpus" --mfu "$mfu" \
       --json --output "$out/07-ex6-compute.json"
grads=$(json "$out/07-ex6-fp32.json" static_bytes)
compute=$(json "$out/07-ex6-compute.json" seconds)
rate=$(json "$out/07-ex6-compute.json" flops_per_second)
test -n "$grads" && test -n "$compute" && test -n "$rate"
comm="2 * ($gpus - 1) / $gpus * $grads / $busbw"
{
    macro SolFourFComputeMs "$(calc %.4g "1e3 * $compute")"
    macro SolFourFCommMs "$(calc %.4g "1e3 * $comm")"
    macro SolFourFRatio "$(calc %.3g "$comm / $compute")"
    macro SolFourFHalfCommMs "$(calc %.4g "1e3 * $comm / 2")"
    macro SolFourFHalfRatio "$(calc %.3g "$comm / 2 / $compute")"
    # The step whose compute takes as long as the fp32 all-reduce:
    # 6 N D = comm x fleet rate.
    macro SolFourFEvenTokens "$(grouped "$(calc %.0f "$comm * $rate / (6 * $params)")")"
    macro SolFourFEvenTokensPerGpu "$(grouped "$(calc %.0f "$comm * $rate / (6 * $params) / $gpus")")"
} > "$out/07-ex6.tex"

# ---------------------------------------------------------------- 7.7 ------
# This build's all-reduce on two ranks, 8 bytes to 4 MiB. From the ring's
# rows: alpha = the shortest time among the sizes up to 256 bytes over the
# 2(n-1) steps of a call, beta = the largest busbw of the sweep, the model's
# crossover n alpha beta, and the first size whose busbw reaches half of
# beta. (One row alone is at the mercy of a busy machine; the fastest of
# several is what the hardware can do.)
# Two ranks, each pinned to a core of its own, as the chapter times them.
# The memory-copy ceiling is build/machine.json's, as in the chapter, when the
# build has measured it; otherwise the benchmark measures its own.
n=2
copy=$(sed -n 's/.*"memcpy_bytes_per_second": *\([0-9][0-9.eE+]*\).*/\1/p' \
           "$1/machine.json" 2> /dev/null | head -n 1)
rates=""
source='measured by this run, as the build has no build/machine.json'
if [ -n "$copy" ]; then
    rates="--machine $1/machine.json"     # its copy and first-touch rates
    source='read from \texttt{build/machine.json}, as in the chapter'
fi
mpiexec -bind-to core -n $n "$bin/allreduce" --op allreduce --min-bytes 8 \
        --max-bytes 4194304 $rates --json --output "$out/07-ex7.json" \
        --transcript "$out/07-ex7.txt" 2> /dev/null
SOURCE="$source" awk -v n=$n '
    function field(line, key,   s) {
        if (!match(line, "\"" key "\": \"?[^,\"}]*"))
            return ""
        s = substr(line, RSTART, RLENGTH)
        sub(/^"[^"]*": "?/, "", s)
        return s
    }
    function macro(name, value) {
        printf "\\newcommand{\\SolFourG%s}{%s}\n", name, value
    }
    function sig(x,   s, m, e) {         # three figures, LaTeX for 1e+03
        s = sprintf("%.3g", x)
        if (s !~ /e/)
            return s
        m = s; sub(/e.*/, "", m)
        e = s; sub(/.*e/, "", e)
        return "\\ensuremath{" m "\\times10^{" (e + 0) "}}"
    }
    function grouped(x,   s, r) {
        s = sprintf("%.0f", x)
        for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3))
            r = "," substr(s, length(s) - 2) r
        return s r
    }
    function percent(x) {               # 12.3, or 1,210 from 100 on
        return (x >= 100 ? grouped(x) : sprintf("%.3g", x)) "\\,\\%"
    }
    /"op": "allreduce"/ && /"impl": "ring"/ {
        k++
        size[k] = field($0, "size") + 0; time[k] = field($0, "time_s") + 0
        busbw[k] = field($0, "busbw") + 0; algbw[k] = field($0, "algbw") + 0
        spread[k] = (field($0, "time_max_s") - field($0, "time_min_s")) / time[k]
        repeats = field($0, "repeats") + 0
    }
    /"op": "allreduce"/ && /"impl": "mpi"/ { mpi = field($0, "busbw") + 0 }
    /"op": "memcpy"/ { copy = field($0, "algbw") + 0 }
    END {
        for (i = 1; i <= k; i++) {
            if (size[i] <= 256 && (fast == "" || time[i] < time[fast]))
                fast = i
            if (top == "" || busbw[i] > busbw[top])
                top = i
        }
        alpha = time[fast] / (2 * (n - 1))
        beta = busbw[top]
        macro("Ranks", n)
        macro("FastBytes", size[fast])
        macro("FastUs", sig(1e6 * time[fast]))
        macro("AlphaUs", sig(1e6 * alpha))
        macro("BetaBytes", grouped(size[top]))
        macro("LargeBytes", grouped(size[k]))
        macro("BetaGBs", sig(beta))
        macro("CrossBytes", grouped(sprintf("%.0f", n * alpha * beta * 1e9)))
        for (i = 1; i <= k; i++)
            if (busbw[i] >= beta / 2) { half = size[i]; break }
        macro("HalfBytes", grouped(half))
        macro("RingLargeGBs", sig(busbw[k]))
        macro("MpiLargeGBs", sig(mpi))
        macro("MemcpyGBs", sig(copy))
        macro("RingOfMemcpy", sig(100 * beta / copy) "\\,\\%")
        for (i = 1; i <= k; i++)
            if (busbw[i] != algbw[i]) differ++
        macro("Differ", differ + 0)
        for (i = 1; i <= k; i++)
            if (wide == "" || spread[i] > spread[wide]) wide = i
        macro("Repeats", repeats)
        macro("WidestBytes", grouped(size[wide]))
        macro("WidestSpread", percent(100 * spread[wide]))
        macro("MemcpySource", ENVIRON["SOURCE"])
    }' "$out/07-ex7.json" > "$out/07-ex7.tex"
