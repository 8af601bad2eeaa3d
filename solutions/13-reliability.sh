# usage: sh solutions/13-reliability.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 13 (when GPUs fail).
# Exercise N writes its macros to BUILD_DIR/solutions/13-exN*.tex (named
# \SolThirteen<letter><Field>, A for exercise 13.1, B for 13.2, and so on),
# fleet's JSON to 13-exN*.json and what it prints, under the command, to
# 13-exN*.txt. What fleet does not print itself (interruptions a day, a
# rate in years, the restart that keeps a target, the fleet at which the
# effective time falls below one, a shard's bytes, a sharded checkpoint's
# files) is one line of awk on its output or on the exercise's inputs, or a
# bisection that runs fleet at each step, written as macros into
# 13-exN-derived.tex, so that no answer is typed by hand.
# tests/13-solutions.t redoes the arithmetic in Perl.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"
minigpt="$bin/minigpt --machine $(cd "$1" && pwd)/machine.json"

# checkpoint NAME FILE FLAGS...: fleet checkpoint under FLAGS, as macros
# with the prefix NAME into FILE.tex, and as JSON into FILE.json.
checkpoint() {
    name=$1 file=$2
    shift 2
    $fleet checkpoint "$@" --latex "$name" --output "$out/$file.tex"
    $fleet checkpoint "$@" --json --output "$out/$file.json"
}
# at FILE KEY: KEY of FILE.json.
at() {
    json "$out/$1.json" "$2"
}
# value KEY FLAGS...: KEY of fleet checkpoint's report under FLAGS.
value() {
    key=$1
    shift
    $fleet checkpoint "$@" --json | awk -F'[:,]' -v k="\"$key\"" '
        { gsub(/ /, "", $1) } $1 == k { printf "%.17g\n", $2 }'
}
# percent X: a fraction as the book prints it, 97.3\,\%.
percent() {
    printf '%s\\,\\%%' "$(calc %.3g "100 * $1")"
}
llama="--gpus 16384 --interruptions 419 --window-days 54"
ckpt405="--params 405e9 --bytes-per-param 12 --write-gbs 2000"

# ---------------------------------------------------------------- 13.1 -----
# How often a fleet stops: GPUs of 50,000 hours each, on three fleets; the
# rate one GPU must have had for Llama 3's count; the node's rate that
# gives the same fleet.
for n in 1024:Small 16384:Mid 131072:Big; do
    checkpoint "SolThirteenA${n#*:}" "13-ex1-${n%%:*}" --gpus ${n%%:*} \
        --mtbf-hours 50000
done
checkpoint SolThirteenALlama 13-ex1-llama $llama
node_hours=$(calc %.10g "$(at 13-ex1-llama node_mtbf_s) / 3600")
checkpoint SolThirteenANode 13-ex1-node --gpus 16384 \
    --node-mtbf-hours "$node_hours"
show "$out/13-ex1.txt" "$fleet" checkpoint $llama
quote_range "$out/13-ex1.txt" '^interruptions' 'between failures'
{
    for n in 1024:Small 16384:Mid 131072:Big; do
        f=13-ex1-${n%%:*} w=SolThirteenA${n#*:}
        macro "${w}Mtbi" "$(duration "$(at $f fleet_mtbi_s)")"
        macro "${w}PerDay" "$(calc %.3g "86400 / $(at $f fleet_mtbi_s)")"
    done
    macro SolThirteenALlamaMtbi "$(duration "$(at 13-ex1-llama fleet_mtbi_s)")"
    macro SolThirteenALlamaGpuHours "$(grouped "$(calc %.0f \
        "$(at 13-ex1-llama gpu_mtbf_s) / 3600")")"
    macro SolThirteenALlamaGpuYears "$(calc %.3g \
        "$(at 13-ex1-llama gpu_mtbf_s) / (365.25 * 86400)")"
    macro SolThirteenANodeHours "$(grouped "$(calc %.0f "$node_hours")")"
    macro SolThirteenANodeMtbi "$(duration "$(at 13-ex1-node fleet_mtbi_s)")"
} > "$out/13-ex1-derived.tex"

# ---------------------------------------------------------------- 13.2 -----
# Young against Daly: 70B on 4,096 GPUs of 50,000 hours, a restart of 10
# minutes; a write at 200 GB/s, and one through a single node at 2 GB/s;
# each at Daly's interval, a quarter of it and four times it.
ex2="--gpus 4096 --mtbf-hours 50000 --params 70e9 --bytes-per-param 12
     --restart-minutes 10"
checkpoint SolThirteenBFast 13-ex2-fast $ex2 --write-gbs 200
slow_s=$(calc %.10g "$(at 13-ex2-fast checkpoint_bytes) / 2e9")
checkpoint SolThirteenBSlow 13-ex2-slow $ex2 --write-seconds "$slow_s"
show "$out/13-ex2.txt" "$fleet" checkpoint $ex2 --write-seconds "$slow_s"
quote_range "$out/13-ex2.txt" '^Young' '^Daly'
{
    for w in fast:Fast slow:Slow; do
        f=13-ex2-${w%%:*} n=SolThirteenB${w#*:}
        write=$([ ${w%%:*} = fast ] && echo "--write-gbs 200" \
                                    || echo "--write-seconds $slow_s")
        daly=$(at $f daly_interval_s)
        macro "${n}Write" "$(duration "$(at $f write_s)")"
        macro "${n}Young" "$(duration "$(at $f young_interval_s)")"
        macro "${n}Daly" "$(duration "$daly")"
        macro "${n}Apart" "$(calc %.2g "100 * ($(at $f young_interval_s) \
            - $daly) / $daly")\\,\\%"
        for k in 0.25:Quarter 1:Daly 4:Four; do
            macro "${n}${k#*:}Effective" "$(percent "$(value \
                effective_fraction $ex2 $write --interval-minutes \
                "$(calc %.10g "${k%%:*} * $daly / 60")")")"
        done
    done
    macro SolThirteenBCheckpointBytes "$(calc %.3g \
        "$(at 13-ex2-fast checkpoint_bytes) / 1e9")\\,GB"
} > "$out/13-ex2-derived.tex"

# ---------------------------------------------------------------- 13.3 -----
# What a restart costs: Llama 3's fleet and count, the 405B checkpoint at
# 2 TB/s, restarts of 1, 5, 10 and 30 minutes. The restart multiplies the
# expected time of every interval by e^(R/M), so the restart that keeps a
# target fraction f is R + M ln(f_R / f) for a run of restart R that keeps
# f_R; the planner is run again at it.
for r in 1:One 5:Five 10:Ten 30:Thirty; do
    checkpoint "SolThirteenC${r#*:}" "13-ex3-${r%%:*}" $llama $ckpt405 \
        --restart-minutes ${r%%:*}
done
f10=$(at 13-ex3-10 effective_fraction) mtbi=$(at 13-ex3-10 fleet_mtbi_s)
keep=$(calc %.10g "10 + $mtbi * log($f10 / 0.95) / 60")
checkpoint SolThirteenCKeep 13-ex3-keep $llama $ckpt405 --restart-minutes "$keep"
{
    for r in 1:One 5:Five 10:Ten 30:Thirty; do
        f=13-ex3-${r%%:*} n=SolThirteenC${r#*:}
        macro "${n}Daly" "$(duration "$(at $f daly_interval_s)")"
        macro "${n}Effective" "$(percent "$(at $f effective_fraction)")"
    done
    macro SolThirteenCKeepRestart "$(duration "$(calc %.10g "60 * $keep")")"
    macro SolThirteenCKeepEffective "$(percent \
        "$(at 13-ex3-keep effective_fraction)")"
} > "$out/13-ex3-derived.tex"

# ---------------------------------------------------------------- 13.4 -----
# One writer, every rank, or a second thread: the 405B checkpoint through
# one NIC of 400 Gbps (50 GB/s); every rank at once, the file system's
# 2 TB/s; each rank's shard copied to host memory at 20 GB/s.
bytes=$(value checkpoint_bytes $llama $ckpt405)
one=$(calc %.10g "$bytes / 50e9")
every=$(calc %.10g "$bytes / 2000e9")
copy=$(calc %.10g "$bytes / 16384 / 20e9")
for w in one:One:$one every:Every:$every copy:Copy:$copy; do
    file=${w%%:*} rest=${w#*:}
    checkpoint "SolThirteenD${rest%%:*}" "13-ex4-$file" $llama \
        --params 405e9 --bytes-per-param 12 --write-seconds ${rest#*:} \
        --restart-minutes 10
done
{
    for w in one:One every:Every copy:Copy; do
        f=13-ex4-${w%%:*} n=SolThirteenD${w#*:}
        macro "${n}Stall" "$(duration "$(at $f write_s)")"
        macro "${n}Daly" "$(duration "$(at $f daly_interval_s)")"
        macro "${n}Effective" "$(percent "$(at $f effective_fraction)")"
    done
    macro SolThirteenDBytes "$(calc %.3g "$bytes / 1e12")\\,TB"
    macro SolThirteenDShard "$(calc %.3g "$bytes / 16384 / 1e6")\\,MB"
} > "$out/13-ex4-derived.tex"

# ---------------------------------------------------------------- 13.5 -----
# The formula against random runs: 200 simulated runs of 30 days at
# Daly's interval, a quarter of it and four times it, from one seed.
ex5="$llama $ckpt405 --restart-minutes 10 --train-days 30"
daly=$(value daly_interval_s $ex5)
for k in 0.25:quarter:Quarter 1:daly:Daly 4:four:Four; do
    times=${k%%:*} rest=${k#*:}
    checkpoint "SolThirteenE${rest#*:}" "13-ex5-${rest%%:*}" $ex5 \
        --simulate 200 --seed 1 \
        --interval-minutes "$(calc %.10g "$times * $daly / 60")"
done
show "$out/13-ex5.txt" "$fleet" checkpoint $ex5 --simulate 200 --seed 1
quote_range "$out/13-ex5.txt" '^effective' 'standard errors from'
{
    for k in quarter:Quarter daly:Daly four:Four; do
        f=13-ex5-${k%%:*} n=SolThirteenE${k#*:}
        macro "${n}Interval" "$(duration "$(at $f interval_s)")"
        macro "${n}Closed" "$(percent "$(at $f effective_fraction)")"
        macro "${n}Simulated" "$(percent \
            "$(at $f simulated_effective_fraction)")"
        macro "${n}Error" "$(percent "$(at $f simulated_standard_error)")"
        macro "${n}Sigmas" "$(calc %.2g "($(at $f simulated_effective_fraction) \
            - $(at $f effective_fraction)) / $(at $f simulated_standard_error)")"
    done
} > "$out/13-ex5-derived.tex"

# ---------------------------------------------------------------- 13.6 -----
# How large a fleet: one GPU's rate from Llama 3's count, the 405B
# checkpoint at 2 TB/s; the effective fraction at Daly's interval on four
# fleets, and by bisection (whole GPUs) the fleet at
# which it falls to 90 %, with restarts of 10 and 2 minutes.
gpu_hours=$(calc %.10g "$(at 13-ex1-llama gpu_mtbf_s) / 3600")
ex6="--mtbf-hours $gpu_hours $ckpt405"
# largest RESTART: the largest fleet that spends at least 90 % training.
# A fleet of 1,024 GPUs is far above 90 % and one of 2^20 far below;
# halvings until the two ends are within a thousandth of each other.
largest() {
    low=1024 high=1048576
    while [ $((1000 * (high - low))) -gt $low ]; do
        mid=$(( (low + high) / 2 ))
        f=$(value effective_fraction $ex6 --gpus $mid --restart-minutes $1)
        if awk "BEGIN { exit !($f >= 0.9) }"
        then low=$mid; else high=$mid; fi
    done
    echo $low
}
{
    for n in 16384:Sixteen 32768:ThirtyTwo 65536:SixtyFour \
             131072:HundredTwentyEight; do
        macro "SolThirteenF${n#*:}Effective" "$(percent "$(value \
            effective_fraction $ex6 --gpus ${n%%:*} --restart-minutes 10)")"
    done
    ten=$(largest 10) two=$(largest 2)
    # to three figures: the bisection stops within a thousandth
    macro SolThirteenFLargestTen "$(grouped "$(calc %.0f "$(calc %.3g $ten)")")"
    macro SolThirteenFLargestTwo "$(grouped "$(calc %.0f "$(calc %.3g $two)")")"
    macro SolThirteenFLargestRatio "$(calc %.3g "$two / $ten")"
} > "$out/13-ex6-derived.tex"

# ---------------------------------------------------------------- 13.7 -----
# Killed and resumed: two data-parallel ranks with ZeRO-3 and sharded
# checkpoints every 5 of 20 steps; a straight run, and one whose rank 1
# kills itself after step 12, relaunched with --resume. A copy of the
# killed run's checkpoint with one byte cut from a shard must be refused;
# another copy is resumed on one rank.
lab="--seq 32 --steps 20 --eval-every 1000 --quiet"
cd "$out"
rm -rf 13-ex7-*
mpiexec -n 2 $minigpt --dp 2 --zero 3 $lab --save-every 5 \
    --save 13-ex7-straight --json --output 13-ex7-straight.json
mpiexec -n 2 $minigpt --dp 2 --zero 3 $lab --save-every 5 \
    --save 13-ex7-killed --fault-at-step 12 --fault-rank 1 \
    > /dev/null 2>&1 && { echo "13-reliability.sh: rank 1 was not killed" >&2
                          exit 1; }
cp -r 13-ex7-killed 13-ex7-damaged
cp -r 13-ex7-killed 13-ex7-one-rank
resumed_from=$(awk '$1 == "step" { print $2 }' 13-ex7-killed/manifest)
mpiexec -n 2 $minigpt --dp 2 --zero 3 $lab --save-every 5 \
    --save 13-ex7-killed --resume 13-ex7-killed --json \
    --output 13-ex7-resumed.json
# compare A B: "identical" if every file of checkpoint A equals B's.
compare() {
    for f in "$1"/*; do
        cmp -s "$f" "$2/$(basename "$f")" || { echo differ; return; }
    done
    echo identical
}
shard=$(ls 13-ex7-damaged/*.shard | tail -n 1)
truncate -s -1 "$shard"
before=$(cat 13-ex7-damaged/* | cksum)
status=0
mpiexec -n 2 $minigpt --dp 2 --zero 3 $lab --resume 13-ex7-damaged \
    --save 13-ex7-damaged > /dev/null 2> 13-ex7-refused.err || status=$?
$minigpt $lab --resume 13-ex7-one-rank --save 13-ex7-one-rank \
    --json --output 13-ex7-one-rank.json
{
    echo '$ cat ck/manifest'
    cat 13-ex7-straight/manifest
} > 13-ex7.txt
{
    echo '$ mpiexec -n 2 minigpt --dp 2 --zero 3 --seq 32 --steps 20 \'
    echo '      --resume ck --save ck'
    sort -u 13-ex7-refused.err | sed 's/13-ex7-damaged/ck/g' | fold -s -w 72
} > 13-ex7-refused.txt
after=$(cat 13-ex7-damaged/* | cksum)
left=$(ls -d 13-ex7-damaged* | wc -l)
{
    macro SolThirteenGResumedFrom "$resumed_from"
    macro SolThirteenGIdentical "$([ "$(compare 13-ex7-straight \
        13-ex7-killed)" = identical ] && echo 1 || echo 0)"
    macro SolThirteenGShards "$(ls 13-ex7-straight/*.shard | wc -l)"
    macro SolThirteenGRefusedStatus "$status"
    macro SolThirteenGDamagedUntouched "$([ "$before" = "$after" ] \
        && [ "$left" -eq 1 ] && echo 1 || echo 0)"
    macro SolThirteenGStraightLoss "$(calc %.6f \
        "$(json 13-ex7-straight.json val_loss)")"
    macro SolThirteenGResumedLoss "$(calc %.6f \
        "$(json 13-ex7-resumed.json val_loss)")"
    macro SolThirteenGOneRankLoss "$(calc %.6f \
        "$(json 13-ex7-one-rank.json val_loss)")"
    diff=$(calc %.2g "sqrt(($(json 13-ex7-one-rank.json val_loss) \
        - $(json 13-ex7-straight.json val_loss))^2)")
    macro SolThirteenGOneRankDiff "$(sci "$diff")"
    macro SolThirteenGOneRankExact "$(calc %d "$diff == 0")"
} > 13-ex7-derived.tex
