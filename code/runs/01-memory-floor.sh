# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# usage: sh code/runs/01-memory-floor.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"

$fleet memory --precisions              --output "$transcripts/01-precisions.txt"
$fleet memory --precisions --csv        --output "$data/01-precisions.csv"
$fleet memory --params 100e9 --gpu h100 --output "$transcripts/01-floor.txt"
$fleet memory --params 100e9 --gpu h100 --latex Floor \
              --output "$numbers/01-floor.tex"
$fleet memory --params 70e9  --gpu h200 --latex Seventy \
              --output "$numbers/01-h200.tex"
$fleet memory --params 100e9 --precision lean       --latex Lean \
              --output "$numbers/01-lean.tex"
$fleet memory --params 100e9 --precision fp32-grads --latex FpGrads \
              --output "$numbers/01-fp32-grads.tex"
$fleet memory --params 100e9 --precision mt-nlg     --latex Mtnlg \
              --output "$numbers/01-mt-nlg.tex"
restart=$(awk -F, '$1 == "mixed" { print $5 + $7 }' "$data/01-precisions.csv")
test -n "$restart" || {
    echo "01-memory-floor.sh: no mixed row in the table" >&2; exit 1; }
$fleet memory --params 100e9 --gpu h100 --checkpoint-bytes-per-param "$restart" \
              --latex Restart --output "$numbers/01-restart.tex"
$fleet memory --params 100e9 --gpu h100 --checkpoint-bytes-per-param "$restart" \
              --json --output "$data/01-restart.json"
# What a node's network adapters carry together, from the part table.
nic=$($fleet step --gpu h100 --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
    c[$i] = i } NR == 2 { print $c["nic_line_rate"], $c["nic_gbps"] }')
test -n "$nic" || {
    echo "01-memory-floor.sh: no NIC rate for the H100" >&2; exit 1; }
awk -v nic="${nic% *}" -v gbps="${nic#* }" "$(cat code/common/formats.awk)"'
function si(x,   u, i) {                  # 3 significant digits, SI prefix
    split("B kB MB GB TB PB", u, " ")
    for (i = 1; x >= 999.5 && i < 6; i++) x /= 1000
    return sprintf("%.3g\\,%s", x, u[i])
}
function put(name, text) {
    printf "\\newcommand{\\Restart%s}{%s}\n", name, text
}
{ gsub(/[",:]/, ""); v[$1] = $2 }
END {
    per_node = v["node_bytes"] / v["gpu_memory_bytes"]
    fleet = int((v["gpus"] + per_node - 1) / per_node)
    floor = v["nodes"]
    if (floor < 1 || fleet < 1) {
        print "01-memory-floor.sh: no nodes in the report" > "/dev/stderr"
        exit 1
    }
    put("CheckpointBytesPerNode", si(v["checkpoint_bytes"] / floor))
    put("CheckpointRatePerNode", si(v["checkpoint_bandwidth"] / floor))
    put("FleetNodes", grouped(fleet))
    put("FleetRatePerNode", si(v["checkpoint_bandwidth"] / fleet))
    put("NodeNics", grouped(per_node))
    put("NicGbps", gbps)
    put("NodeNicRate", si(nic * per_node))
    if (v["checkpoint_bandwidth"] / floor <= nic * per_node) {
        print "01-memory-floor.sh: the nodes of the floor could carry the " \
              "checkpoint rate; the chapter says they cannot" > "/dev/stderr"
        exit 1
    }
}' "$data/01-restart.json" >> "$numbers/01-restart.tex"
