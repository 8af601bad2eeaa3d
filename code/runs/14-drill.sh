# Tangled from chapters/99m-experts-drill.nw; edit the chapter, not this file.
# usage: sh code/runs/14-drill.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
numbers="$1/numbers"
formats=$(cat code/common/formats.awk)
report=$($fleet moe --json)

# field KEY: one value of the report (a number, or a name without quotes).
field() {
    echo "$report" | awk -F': ' -v k="\"$1\"" '{ gsub(/^ +/, "", $1) }
        $1 == k { sub(/,$/, "", $2); gsub(/"/, "", $2); print $2 }'
}
awk -v total="$(field params_total)" -v active="$(field params_active)" \
    -v bytes_per_param="$(field bytes_per_param)" \
    -v memory="$(field memory_floor_bytes)" \
    -v floor_gpus="$(field memory_floor_gpus)" \
    -v flops="$(field flops_per_token)" \
    -v dense_flops="$(field dense_flops_per_token)" \
    -v ratio="$(field compute_ratio)" \
    -v days="$(field training_days)" \
    -v dense_days="$(field dense_training_days)" \
    -v gpus="$(field gpus)" -v hidden="$(field hidden)" \
    -v top_k="$(field top_k)" -v experts="$(field experts)" \
    -v ep="$(field ep)" -v link="$(field alltoall_link)" \
    -v payload="$(field alltoall_payload_bytes_per_token_per_layer)" \
    -v leaving="$(field alltoall_bytes_per_token_per_layer)" \
    -v nvlink="$(field nvlink_bandwidth)" -v nic="$(field nic_bandwidth)" \
    "$formats"'
    function macro(name, value) {
        printf "\\newcommand{\\ExpertDrill%s}{%s}\n", name, value
    }
    function billions(x) { return sprintf("%.3g~billion", x / 1e9) }
    function sci(x,   e) {
        e = int(log(x) / log(10))
        return sprintf("\\ensuremath{%.3g\\times10^{%d}}", x / 10 ^ e, e)
    }
    function bytes(x) {
        if (x >= 1e12) return sprintf("%.3g\\,TB", x / 1e12)
        if (x >= 1e9) return sprintf("%.3g\\,GB", x / 1e9)
        if (x >= 1e6) return sprintf("%.3g\\,MB", x / 1e6)
        return sprintf("%.3g\\,kB", x / 1e3)
    }
    BEGIN {
        macro("Total", billions(total))
        macro("Active", billions(active))
        macro("BytesPerParam", bytes_per_param)
        macro("Memory", bytes(memory))
        macro("FloorGpus", grouped(floor_gpus))
        macro("FlopsPerToken", sci(flops))
        macro("DenseFlopsPerToken", sci(dense_flops))
        macro("ComputeRatio", sprintf("%.3g", ratio))
        macro("Days", sprintf("%.3g", days))
        macro("DenseDays", sprintf("%.3g", dense_days))
        macro("Gpus", grouped(gpus))
        macro("Hidden", grouped(hidden))
        macro("TopK", top_k)
        macro("Experts", experts)
        macro("Ep", ep)
        macro("Link", link)
        macro("AlltoallBytes", bytes(payload))
        macro("AlltoallLeaving", bytes(leaving))
        macro("NicOverNvlink", sprintf("%.2g", nvlink / nic))
    }' > "$numbers/14-drill.tex"
