# Tangled from chapters/95-parallel-plumbing.nw and chapters/99k-experts-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/14-moe.sh BUILD_DIR
set -eu
fleet="$1/bin/fleet"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
$fleet moe --output "$transcripts/14-moe.txt"
$fleet moe --latex Mixture --output "$numbers/14-moe.tex"
$fleet moe --json --output "$data/14-moe.json"
$fleet moe --ep 16 --latex MixtureAcross --output "$numbers/14-moe-across.tex"
$fleet moe --ep 16 --json --output "$data/14-moe-across.json"
$fleet moe --ffn 14336 --mlp gated --heads 32 --kv-heads 8 --vocab 32000 \
    --experts 8 --top-k 2 --hidden 4096 --layers 32 --ep 8 \
    --latex Mixtral --output "$numbers/14-moe-mixtral.tex"
$fleet moe --gpu h800 --params-total 671e9 --params-active 37e9 \
    --experts 256 --top-k 8 --hidden 7168 --layers 61 --dense-layers 3 \
    --ep 64 --gpus 2048 --tokens 14.8e12 \
    --latex Deepseek --output "$numbers/14-moe-deepseek.tex"
inside=$(field alltoall_over_compute "$data/14-moe.json")
across=$(field alltoall_over_compute "$data/14-moe-across.json")
nic=$(field alltoall_nic_fraction "$data/14-moe-across.json")
nvlink_bw=$(field nvlink_bandwidth "$data/14-moe.json")
nic_bw=$(field nic_bandwidth "$data/14-moe.json")
awk -v inside="$inside" -v across="$across" -v nic="$nic" \
    -v ratio="$(awk -v a="$nvlink_bw" -v b="$nic_bw" \
                    'BEGIN { print a / b }')" '
function percent(x) { return sprintf("%.3g\\,\\%%", 100 * x) }
BEGIN {
    if (inside <= 0 || across <= 0) {
        print "14-moe.sh: no all-to-all time" > "/dev/stderr"; exit 1
    }
    s = sprintf("Inside a node the all-to-all takes %s of the time of " \
                "the step%ss compute. With expert parallelism of 16, " \
                "over two nodes, %s of its bytes cross the NIC, %s " \
                "times slower than NVLink, and it takes %s.", \
                percent(inside), "\x27", percent(nic), \
                sprintf("%.3g", ratio), percent(across))
    if (across > 0.5)
        s = s " That is comparable with the compute itself: a step " \
              "that does not hide it behind computation loses it."
    else if (across > 0.1)
        s = s " Not negligible: it has to be overlapped with " \
              "computation, or kept inside the node."
    printf "\\newcommand{\\MixtureVerdict}{%s}\n", s
}' >> "$numbers/14-moe.tex"
