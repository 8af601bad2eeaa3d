# Tangled from chapters/99b-mesh-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/11-composed.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json" numbers="$1/numbers"
data="$1/data" transcripts="$1/transcripts"
field() {        # the number after "KEY": in a JSON report
    awk -v key="\"$1\"" '$1 == key":" { sub(/,$/, "", $2); print $2 }' "$2"
}
sci='function sci(x,   e, p) {      # 2.1e-07 as $2.1 \times 10^{-7}$
    if (x == 0) return "0"
    e = sprintf("%.1e", x)
    split(e, p, "e")
    return "\\ensuremath{" p[1] "\\times10^{" p[2] + 0 "}}"
}'
mpiexec -n 8 "$bin/minigpt" --tp 2 --pp 2 --dp 2 --print-mesh \
        > "$transcripts/11-mesh.txt"
verify() {       # verify NAME RANKS FLAGS...: its JSON verdict, and macros
    name=$1 ranks=$2
    shift 2
    mpiexec -n "$ranks" "$bin/minigpt" "$@" --verify --json \
            --output "$data/11-verify-$name.json"
    f="$data/11-verify-$name.json"
    test "$(sed -n 's/^ *"result": "\(.*\)".*/\1/p' "$f")" = OK
    test "$(field max_dweight "$f")" = 0      # the same step, exactly
    test "$(field max_dmoment "$f")" = 0
    awk -v name="$name" -v l="$(field max_dloss "$f")" \
        -v g="$(field max_dgrad "$f")" -v w="$(field max_dweight "$f")" \
        -v m="$(field max_dmoment "$f")" -v a="$(field atol "$f")" \
        -v r="$(field rtol "$f")" "$sci"'
    BEGIN {
        printf "\\newcommand{\\MeshVerify%sLoss}{%s}\n", name, sci(l)
        printf "\\newcommand{\\MeshVerify%sGrad}{%s}\n", name, sci(g)
        printf "\\newcommand{\\MeshVerify%sWeight}{%s}\n", name, sci(w)
        printf "\\newcommand{\\MeshVerify%sMoment}{%s}\n", name, sci(m)
        if (name == "TwoTwoTwo") {
            printf "\\newcommand{\\MeshVerifyAtol}{%s}\n", sci(a)
            printf "\\newcommand{\\MeshVerifyRtol}{%s}\n", sci(r)
        }
    }' >> "$numbers/11-composed.tex"
}
: > "$numbers/11-composed.tex"
pipelined="--micro-batches 2"
verify TwoTwoTwo 8 --tp 2 --pp 2 --dp 2 $pipelined \
       --transcript "$data/11-verify-2x2x2.txt"
awk 'length > 84 && match($0, /.*, /) {    # the page holds 84 characters
    print substr($0, 1, RLENGTH - 1); $0 = "        " substr($0, RLENGTH + 1)
} { print }' "$data/11-verify-2x2x2.txt" > "$transcripts/11-verify-2x2x2.txt"
verify TwoTwoTwoZero 8 --tp 2 --pp 2 --dp 2 $pipelined --zero 1
verify TwoTwoTwoSp 8 --tp 2 --pp 2 --dp 2 $pipelined --zero 1 \
       --sequence-parallel
verify TwoTwoOne 4 --tp 2 --pp 2 --dp 1 $pipelined
verify TwoOneTwo 4 --tp 2 --pp 1 --dp 2
verify OneTwoTwo 4 --tp 1 --pp 2 --dp 2 $pipelined
for sp in "" --sequence-parallel; do
    mpiexec -n 8 "$bin/minigpt" --tp 2 --pp 2 --dp 2 $pipelined $sp \
            --steps 1 --eval-every 1000 --quiet --json --machine "$machine" \
            --output "$data/11-message$sp.json"
done
f="$data/11-message.json" sp="$data/11-message--sequence-parallel.json"
awk -v whole="$(field message_bytes "$f")" \
    -v rows="$(field message_bytes "$sp")" \
    -v b="$(field micro_batch "$f")" -v t="$(field seq "$f")" \
    -v c="$(field hidden "$f")" \
    -v latency="$(field p2p_latency_s "$machine")" \
    -v rate="$(field p2p_bytes_per_second "$machine")" \
    "$(cat code/common/formats.awk)"'
BEGIN {
    if (whole != 4 * b * t * c || rows != whole / 2) exit 1
    printf "\\newcommand{\\MeshMessageTime}{%s}\n",
           duration(latency + whole / rate)
    printf "\\newcommand{\\MeshMessageBytes}{%s}\n", grouped(whole)
    printf "\\newcommand{\\MeshMessageBytesSp}{%s}\n", grouped(rows)
    printf "\\newcommand{\\MeshMicroBatch}{%d}\n", b
    printf "\\newcommand{\\MeshSeq}{%d}\n", t
    printf "\\newcommand{\\MeshHidden}{%d}\n", c
}' >> "$numbers/11-composed.tex"
ckpt="$data/11-mesh.ckpt"
rm -rf "$ckpt" "$ckpt".*  # (an older build's, of another format perhaps)
steps=4 saved=2        # train 4 steps, keep the checkpoint of step 2
run="--steps $steps --eval-every 1000 --quiet --json"
mpiexec -n 8 "$bin/minigpt" --tp 2 --pp 2 --dp 2 $pipelined $run \
        --machine "$machine" --save-every $saved --keep-checkpoints 2 \
        --save "$ckpt" \
        --output "$data/11-resume-mesh.json"
"$bin/minigpt" $run --machine "$machine" \
        --resume "$ckpt.step$(printf %06d $saved)" \
        --output "$data/11-resume-one.json"
"$bin/minigpt" $run --machine "$machine" --resume "$ckpt" \
        --save "$ckpt.one" > /dev/null
mpiexec -n 8 "$bin/minigpt" --tp 2 --pp 2 --dp 2 $pipelined $run \
        --machine "$machine" --resume "$ckpt.one" --save "$ckpt.back" \
        > /dev/null
diff -r "$ckpt" "$ckpt.back"            # the same bytes, or no book
awk -v mesh="$(field train_loss "$data/11-resume-mesh.json")" \
    -v one="$(field train_loss "$data/11-resume-one.json")" \
    -v steps=$steps -v saved=$saved "$sci"'
BEGIN {
    d = mesh - one
    printf "\\newcommand{\\MeshResumeSteps}{%d}\n", steps
    printf "\\newcommand{\\MeshResumeSaved}{%d}\n", saved
    printf "\\newcommand{\\MeshResumeNext}{%d}\n", saved + 1
    printf "\\newcommand{\\MeshResumeLossMesh}{%.6f}\n", mesh
    printf "\\newcommand{\\MeshResumeLossOne}{%.6f}\n", one
    printf "\\newcommand{\\MeshResumeLossDiff}{%s}\n", sci(d < 0 ? -d : d)
}' >> "$numbers/11-composed.tex"
