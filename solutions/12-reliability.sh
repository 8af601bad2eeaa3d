# usage: sh solutions/12-reliability.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 12 (when GPUs fail).
# Exercise N writes its macros to BUILD_DIR/solutions/12-exN*.tex (named
# \SolTwelve<letter><Field>, A for exercise 12.1, B for 12.2, and so on),
# fleet's JSON to 12-exN*.json and what it prints, under the command, to
# 12-exN*.txt. What fleet does not print itself (interruptions a day, a
# rate in years, the restart that keeps a target, the fleet at which the
# effective time falls below one, a shard's bytes, a sharded checkpoint's
# files) is one line of awk on its output or on the exercise's inputs, or a
# bisection that runs fleet at each step, written as macros into
# 12-exN-derived.tex, so that no answer is typed by hand.
# tests/12-solutions.t redoes the arithmetic in Perl.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

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
        { gsub(/ /, "", $1) } $1 == k { print $2 + 0 }'
}
# percent X: a fraction as the book prints it, 97.3\,\%.
percent() {
    printf '%s\\,\\%%' "$(calc %.3g "100 * $1")"
}
llama="--gpus 16384 --interruptions 419 --window-days 54"
ckpt405="--params 405e9 --bytes-per-param 12 --write-gbs 2000"

# ---------------------------------------------------------------- 12.1 -----
# How often a fleet stops: GPUs of 50,000 hours each, on three fleets; the
# rate one GPU must have had for Llama 3's count; the node's rate that
# gives the same fleet.
for n in 1024:Small 16384:Mid 131072:Big; do
    checkpoint "SolTwelveA${n#*:}" "12-ex1-${n%%:*}" --gpus ${n%%:*} \
        --mtbf-hours 50000
done
checkpoint SolTwelveALlama 12-ex1-llama $llama
node_hours=$(calc %.10g "$(at 12-ex1-llama node_mtbf_s) / 3600")
checkpoint SolTwelveANode 12-ex1-node --gpus 16384 \
    --node-mtbf-hours "$node_hours"
show "$out/12-ex1.txt" "$fleet" checkpoint $llama
quote_lines "$out/12-ex1.txt" 'interruptions|MTBF|mtbf|M ='
{
    for n in 1024:Small 16384:Mid 131072:Big; do
        f=12-ex1-${n%%:*} w=SolTwelveA${n#*:}
        macro "${w}Mtbi" "$(duration "$(at $f fleet_mtbi_s)")"
        macro "${w}PerDay" "$(calc %.3g "86400 / $(at $f fleet_mtbi_s)")"
    done
    macro SolTwelveALlamaMtbi "$(duration "$(at 12-ex1-llama fleet_mtbi_s)")"
    macro SolTwelveALlamaGpuHours "$(grouped "$(calc %.0f \
        "$(at 12-ex1-llama gpu_mtbf_s) / 3600")")"
    macro SolTwelveALlamaGpuYears "$(calc %.3g \
        "$(at 12-ex1-llama gpu_mtbf_s) / (365.25 * 86400)")"
    macro SolTwelveANodeHours "$(grouped "$(calc %.0f "$node_hours")")"
    macro SolTwelveANodeMtbi "$(duration "$(at 12-ex1-node fleet_mtbi_s)")"
} > "$out/12-ex1-derived.tex"

# ---------------------------------------------------------------- 12.2 -----
# Young against Daly: 70B on 4,096 GPUs of 50,000 hours, a restart of 10
# minutes; a write at 200 GB/s, and one through a single node at 2 GB/s;
# each at Daly's interval, a quarter of it and four times it.
ex2="--gpus 4096 --mtbf-hours 50000 --params 70e9 --bytes-per-param 12
     --restart-minutes 10"
checkpoint SolTwelveBFast 12-ex2-fast $ex2 --write-gbs 200
slow_s=$(calc %.10g "$(at 12-ex2-fast checkpoint_bytes) / 2e9")
checkpoint SolTwelveBSlow 12-ex2-slow $ex2 --write-seconds "$slow_s"
show "$out/12-ex2.txt" "$fleet" checkpoint $ex2 --write-seconds "$slow_s"
quote_lines "$out/12-ex2.txt" '[Yy]oung|[Dd]aly'
{
    for w in fast:Fast slow:Slow; do
        f=12-ex2-${w%%:*} n=SolTwelveB${w#*:}
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
    macro SolTwelveBCheckpointBytes "$(calc %.3g \
        "$(at 12-ex2-fast checkpoint_bytes) / 1e9")\\,GB"
} > "$out/12-ex2-derived.tex"

# ---------------------------------------------------------------- 12.3 -----
# What a restart costs: Llama 3's fleet and count, the 405B checkpoint at
# 2 TB/s, restarts of 1, 5, 10 and 30 minutes. The restart multiplies the
# expected time of every interval by e^(R/M), so the restart that keeps a
# target fraction f is R + M ln(f_R / f) for a run of restart R that keeps
# f_R; the planner is run again at it.
for r in 1:One 5:Five 10:Ten 30:Thirty; do
    checkpoint "SolTwelveC${r#*:}" "12-ex3-${r%%:*}" $llama $ckpt405 \
        --restart-minutes ${r%%:*}
done
f10=$(at 12-ex3-10 effective_fraction) mtbi=$(at 12-ex3-10 fleet_mtbi_s)
keep=$(calc %.10g "10 + $mtbi * log($f10 / 0.95) / 60")
checkpoint SolTwelveCKeep 12-ex3-keep $llama $ckpt405 --restart-minutes "$keep"
{
    for r in 1:One 5:Five 10:Ten 30:Thirty; do
        f=12-ex3-${r%%:*} n=SolTwelveC${r#*:}
        macro "${n}Daly" "$(duration "$(at $f daly_interval_s)")"
        macro "${n}Effective" "$(percent "$(at $f effective_fraction)")"
    done
    macro SolTwelveCKeepRestart "$(duration "$(calc %.10g "60 * $keep")")"
    macro SolTwelveCKeepEffective "$(percent \
        "$(at 12-ex3-keep effective_fraction)")"
} > "$out/12-ex3-derived.tex"

# ---------------------------------------------------------------- 12.4 -----
# One writer, every rank, or a second thread: the 405B checkpoint through
# one NIC of 400 Gbps (50 GB/s); every rank at once, the file system's
# 2 TB/s; each rank's shard copied to host memory at 20 GB/s.
bytes=$(value checkpoint_bytes $llama $ckpt405)
one=$(calc %.10g "$bytes / 50e9")
every=$(calc %.10g "$bytes / 2000e9")
copy=$(calc %.10g "$bytes / 16384 / 20e9")
for w in one:One:$one every:Every:$every copy:Copy:$copy; do
    file=${w%%:*} rest=${w#*:}
    checkpoint "SolTwelveD${rest%%:*}" "12-ex4-$file" $llama \
        --params 405e9 --bytes-per-param 12 --write-seconds ${rest#*:} \
        --restart-minutes 10
done
{
    for w in one:One every:Every copy:Copy; do
        f=12-ex4-${w%%:*} n=SolTwelveD${w#*:}
        macro "${n}Stall" "$(duration "$(at $f write_s)")"
        macro "${n}Daly" "$(duration "$(at $f daly_interval_s)")"
        macro "${n}Effective" "$(percent "$(at $f effective_fraction)")"
    done
    macro SolTwelveDBytes "$(calc %.3g "$bytes / 1e12")\\,TB"
    macro SolTwelveDShard "$(calc %.3g "$bytes / 16384 / 1e6")\\,MB"
} > "$out/12-ex4-derived.tex"

# ---------------------------------------------------------------- 12.5 -----
# The formula against random runs: 200 simulated runs of 30 days at
# Daly's interval, a quarter of it and four times it, from one seed.
ex5="$llama $ckpt405 --restart-minutes 10 --train-days 30"
daly=$(value daly_interval_s $ex5)
for k in 0.25:quarter:Quarter 1:daly:Daly 4:four:Four; do
    times=${k%%:*} rest=${k#*:}
    checkpoint "SolTwelveE${rest#*:}" "12-ex5-${rest%%:*}" $ex5 \
        --simulate 200 --seed 1 \
        --interval-minutes "$(calc %.10g "$times * $daly / 60")"
done
show "$out/12-ex5.txt" "$fleet" checkpoint $ex5 --simulate 200 --seed 1
quote_lines "$out/12-ex5.txt" '[Ss]imulat|effective'
{
    for k in quarter:Quarter daly:Daly four:Four; do
        f=12-ex5-${k%%:*} n=SolTwelveE${k#*:}
        macro "${n}Interval" "$(duration "$(at $f interval_s)")"
        macro "${n}Closed" "$(percent "$(at $f effective_fraction)")"
        macro "${n}Simulated" "$(percent \
            "$(at $f simulated_effective_fraction)")"
        macro "${n}Error" "$(percent "$(at $f simulated_standard_error)")"
        macro "${n}Sigmas" "$(calc %.2g "($(at $f simulated_effective_fraction) \
            - $(at $f effective_fraction)) / $(at $f simulated_standard_error)")"
    done
} > "$out/12-ex5-derived.tex"

# ---------------------------------------------------------------- 12.6 -----
# How large a fleet: one GPU's rate from Llama 3's count, the 405B
# checkpoint at 2 TB/s; the effective fraction at Daly's interval on four
# fleets, and by bisection (whole GPUs) the fleet at
# which it falls to 90 %, with restarts of 10 and 2 minutes.
gpu_hours=$(calc %.10g "$(at 12-ex1-llama gpu_mtbf_s) / 3600")
ex6="--mtbf-hours $gpu_hours $ckpt405"
# largest RESTART: the largest fleet that spends at least 90 % training.
# The fleet of 2^20 GPUs is far below 90 %; halvings until the two ends
# are one GPU apart.
largest() {
    low=1 high=1048576
    while [ $((high - low)) -gt 1 ]; do
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
        macro "SolTwelveF${n#*:}Effective" "$(percent "$(value \
            effective_fraction $ex6 --gpus ${n%%:*} --restart-minutes 10)")"
    done
    ten=$(largest 10) two=$(largest 2)
    macro SolTwelveFLargestTen "$(grouped $ten)"
    macro SolTwelveFLargestTwo "$(grouped $two)"
    macro SolTwelveFLargestRatio "$(calc %.3g "$two / $ten")"
} > "$out/12-ex6-derived.tex"
