# Tangled from chapters/99g-drill.nw; edit the chapter, not this file.
# usage: sh code/runs/11-drill.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
numbers="$1/numbers"
B="--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule 1f1b --micro-batch 1"
slower=0.40                     # the drill's premise: 40 % over the plan
formats=$(cat code/common/formats.awk)

# field KEY FLAGS...: one field of design B's plan under FLAGS.
field() {
    key=$1
    shift
    $fleet layout $B "$@" --top 1 --csv \
        | awk -F, -v k="$key" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
                               NR == 2 { print $c[k] }'
}

# needed FLAG LOW HIGH: the value of FLAG, between LOW (a slower step than
# the target) and HIGH (a faster one), at which design B's step is the
# slow step; sixteen halvings narrow the interval 2^16-fold.
needed() {
    flag=$1 low=$2 high=$3
    for i in $(seq 16); do
        mid=$(awk "BEGIN { printf \"%.10g\", ($low + $high) / 2 }")
        if awk "BEGIN { exit !($(field step_time_s $flag $mid) > $target) }"
        then low=$mid; else high=$mid; fi
    done
    echo "$high"
}

$fleet layout $B --latex Drill --output "$numbers/11-drill-b.tex"
# The planner's own inputs, as its header prints them: "compute efficiency
# 40 %", "NVLink 450 GB/s and NIC 400 Gbps"; each is the top of its search.
header=$($fleet layout $B --top 1)
# planned TEXT UNIT: the number before UNIT after TEXT in the header.
planned() {
    echo "$header" | sed -n "s/.*$1 \([0-9.]*\) $2.*/\1/p"
}
planned_e=$(planned 'compute efficiency' '%')
planned_nv=$(planned NVLink 'GB\/s')
planned_nic=$(planned NIC Gbps)
step=$(field step_time_s)
target=$(awk "BEGIN { printf \"%.17g\", $step * (1 + $slower) }")
efficiency=$(needed --compute-efficiency 0.01 "$(awk \
    "BEGIN { print $planned_e / 100 }")")
nic=$(needed --nic-gbps 1 "$planned_nic")
nvlink=$(needed --nvlink-gbs 1 "$planned_nv")
bubble=$(field bubble_s)
awk -v step="$step" -v target="$target" -v slower="$slower" \
    -v bubble="$bubble" -v e="$efficiency" -v nic="$nic" -v nv="$nvlink" \
    -v planned_e="$planned_e" -v planned_nv="$planned_nv" \
    "$formats"'
    function macro(name, value) {
        printf "\\newcommand{\\%s}{%s}\n", name, value
    }
    BEGIN {
        macro("DrillSlower", sprintf("%.0f\\,\\%%", 100 * slower))
        macro("DrillSlowStep", duration(target))
        macro("DrillExtra", duration(target - step))
        macro("DrillPlannedEfficiency", sprintf("%g\\,\\%%", planned_e))
        macro("DrillPlannedNvlinkGbs", sprintf("%g", planned_nv))
        macro("DrillNeededEfficiency", sprintf("%.3g\\,\\%%", 100 * e))
        macro("DrillNeededNicGbps", sprintf("%.3g", nic))
        macro("DrillNeededNvlinkGbs", sprintf("%.3g", nv))
        grown = bubble + target - step
        macro("DrillBubbleTimes", sprintf("%.3g", grown / bubble))
    }' > "$numbers/11-drill.tex"
