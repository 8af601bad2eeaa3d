# Tangled from chapters/99j-reliability-drill.nw; edit the chapter, not this file.
# usage: sh code/runs/13-drill.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
numbers="$1/numbers"
formats=$(cat code/common/formats.awk)
gpus=16384 interruptions=419 window_days=54     # Llama 3's 54 days
params=405e9 write_gbs=2000 restart_minutes=10  # the drill's run
# What a restart reads back: mixed precision's fp32 weights and moments.
bytes=$($fleet memory --precisions --csv |
        awk -F, '$1 == "mixed" { print $5 + $7 }')
# The failure-free time: Llama 3's FLOPs for its tokens at 40 % MFU.
days=$($fleet compute --params $params --tokens 15.6e12 --gpus $gpus \
           --layers 126 --hidden 16384 --seq 8192 --json |
       awk -F'[:,]' '{ gsub(/ /, "", $1) }
                     $1 == "\"days\"" { printf "%.17g\n", $2 }')
run="--params $params --bytes-per-param $bytes --write-gbs $write_gbs
     --train-days $days"
observed="--gpus $gpus --interruptions $interruptions \
          --window-days $window_days"

R="--restart-minutes $restart_minutes"
# The drill's run, the same with a save every hour, and (below) a fleet
# four times larger: fleet checkpoint's reports.
drill=$($fleet checkpoint $observed $run $R --json)
hourly=$($fleet checkpoint $observed $run $R --interval-minutes 60 --json)
# field KEY [REPORT]: one number of REPORT, the drill's run by default.
field() {
    echo "${2:-$drill}" | awk -F'[:,]' -v k="\"$1\"" '{ gsub(/ /, "", $1) }
        $1 == k { printf "%.17g\n", $2 }'
}
mtbi=$(field fleet_mtbi_s)
# The rate of one GPU that the count implies, in hours.
gpu_hours=$(awk "BEGIN { printf \"%.10g\", $mtbi * $gpus / 3600 }")
big=$($fleet checkpoint --gpus $((4 * gpus)) --mtbf-hours $gpu_hours \
          $run $R --json)
awk -v mtbi="$mtbi" -v gpus=$gpus -v interruptions=$interruptions \
    -v window_days=$window_days -v restart=$((60 * restart_minutes)) \
    -v write_gbs=$write_gbs -v days="$days" \
    -v bytes="$(field checkpoint_bytes)" -v write="$(field write_s)" \
    -v young="$(field young_interval_s)" -v daly="$(field daly_interval_s)" \
    -v effective="$(field effective_fraction)" \
    -v wall="$(field wall_clock_s)" \
    -v writes="$(field write_loss_fraction)" \
    -v rework="$(field rework_loss_fraction)" \
    -v restarts="$(field restart_loss_fraction)" \
    -v hourly="$(field effective_fraction "$hourly")" \
    -v big_mtbi="$(field fleet_mtbi_s "$big")" \
    -v big_effective="$(field effective_fraction "$big")" \
    "$formats"'
    function macro(name, value) {
        printf "\\newcommand{\\FailDrill%s}{%s}\n", name, value
    }
    function percent(x) { return sprintf("%.3g\\,\\%%", 100 * x) }
    function tb(x) { return sprintf("%.3g\\,TB", x / 1e12) }
    BEGIN {
        macro("Gpus", grouped(gpus))
        macro("Interruptions", interruptions)
        macro("WindowDays", window_days)
        macro("Mtbi", duration(mtbi))
        macro("MtbiSeconds", grouped(mtbi))
        macro("PerDay", sprintf("%.2g", 86400 / mtbi))
        macro("GpuMtbfYears", sprintf("%.2g", mtbi * gpus / (365.25 * 86400)))
        macro("CheckpointBytes", tb(bytes))
        macro("WriteRate", tb(write_gbs * 1e9))
        macro("Write", duration(write))
        macro("Young", duration(young))
        macro("Daly", duration(daly))
        macro("Restart", duration(restart))
        macro("Effective", percent(effective))
        macro("WriteAndLost", percent(writes + rework))
        macro("RestartLoss", percent(restarts))
        macro("HourlyEffective", percent(hourly))
        macro("HourlyLoss", percent(effective - hourly))
        macro("TrainDays", sprintf("%.3g", days))
        macro("WallDays", sprintf("%.3g", wall / 86400))
        macro("LostDays", sprintf("%.2g", wall / 86400 - days))
        macro("BigGpus", grouped(4 * gpus))
        macro("BigMtbi", duration(big_mtbi))
        macro("BigEffective", percent(big_effective))
    }' > "$numbers/13-drill.tex"
