# Tangled from chapters/99j-reliability-drill.nw; edit the chapter, not this file.
# usage: sh code/runs/12-drill.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
numbers="$1/numbers"
formats=$(cat code/common/formats.awk)
gpus=16384 interruptions=419 window_days=54     # Llama 3's 54 days
params=405e9 write_gbs=2000 restart_minutes=10  # the drill's run
# The failure-free time: 6ND FLOPs for Llama 3's 15.6T tokens at 40 % MFU.
days=$($fleet compute --params $params --tokens 15.6T --gpus $gpus \
           --mfu 0.4 --json | awk -F'[:,]' '{ gsub(/ /, "", $1) }
                                         $1 == "\"days\"" { print $2 + 0 }')
run="--params $params --write-gbs $write_gbs --train-days $days"
observed="--gpus $gpus --interruptions $interruptions \
          --window-days $window_days"

# field KEY FLAGS...: one number of fleet checkpoint's report under FLAGS.
field() {
    key=$1
    shift
    $fleet checkpoint "$@" --json \
        | awk -F'[:,]' -v k="\"$key\"" '{ gsub(/ /, "", $1) }
                                         $1 == k { print $2 + 0 }'
}
mtbi=$(field fleet_mtbi_s $observed $run --restart-minutes $restart_minutes)
# The rate of one GPU that the count implies, in hours.
gpu_hours=$(awk "BEGIN { printf \"%.10g\", $mtbi * $gpus / 3600 }")
big="--gpus $((4 * gpus)) --mtbf-hours $gpu_hours $run"
R="--restart-minutes $restart_minutes"
awk -v mtbi="$mtbi" -v gpus=$gpus -v interruptions=$interruptions \
    -v window_days=$window_days -v restart=$((60 * restart_minutes)) \
    -v write_gbs=$write_gbs -v days="$days" \
    -v bytes="$(field checkpoint_bytes $observed $run $R)" \
    -v write="$(field write_s $observed $run $R)" \
    -v young="$(field young_interval_s $observed $run $R)" \
    -v daly="$(field daly_interval_s $observed $run $R)" \
    -v effective="$(field effective_fraction $observed $run $R)" \
    -v wall="$(field wall_clock_s $observed $run $R)" \
    -v no_restart="$(field effective_fraction $observed $run \
                        --restart-minutes 0)" \
    -v hourly="$(field effective_fraction $observed $run $R \
                    --interval-minutes 60)" \
    -v big_mtbi="$(field fleet_mtbi_s $big $R)" \
    -v big_effective="$(field effective_fraction $big $R)" \
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
        macro("RestartShare", percent(restart / mtbi))
        macro("Effective", percent(effective))
        macro("WriteAndLost", percent(1 - no_restart))
        macro("RestartLoss", percent(no_restart - effective))
        macro("HourlyEffective", percent(hourly))
        macro("HourlyLoss", percent(effective - hourly))
        macro("TrainDays", sprintf("%.3g", days))
        macro("WallDays", sprintf("%.3g", wall / 86400))
        macro("LostDays", sprintf("%.2g", wall / 86400 - days))
        macro("BigGpus", grouped(4 * gpus))
        macro("BigMtbi", duration(big_mtbi))
        macro("BigEffective", percent(big_effective))
    }' > "$numbers/12-drill.tex"
