# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# usage: sh code/runs/02-compute-and-fleet.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet compute --gpus 1024            --output "$transcripts/02-fleet.txt"
$fleet compute --gpus 1024 --latex Fleet --output "$numbers/02-fleet.tex"
$fleet compute --gpus 1024 --csv      --output "$data/02-fleet.csv"
$fleet compute --sweep                --output "$data/02-days.csv"
# The deadline's derivation alone: the lines before it are 02-fleet.txt's.
$fleet compute --days 30 \
    | awk 'BEGIN { RS = "" } /^to finish/ { print; n++ } END { exit !n }' \
    > "$transcripts/02-deadline.txt"
$fleet compute --days 30 --latex Deadline --output "$numbers/02-deadline.tex"
$fleet compute --tokens 10e12 --latex Tenfold \
               --output "$numbers/02-tenfold.tex"
$fleet compute --tokens 10e12 --gpus 5120 --latex TenfoldWide \
               --output "$numbers/02-tenfold-wide.tex"
$fleet compute --active-params 20e9 --latex Moe --output "$numbers/02-moe.tex"
$fleet compute --params 405e9 --tokens 15.6e12 --gpus 16384 \
               --layers 126 --hidden 16384 --seq 8192 --latex Llama \
               --output "$numbers/02-llama.tex"
$fleet compute --gpus 1024 --usd-per-gpu-hour 2 --latex Cost \
               --output "$numbers/02-cost.tex"
