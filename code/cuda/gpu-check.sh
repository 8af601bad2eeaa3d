# Tangled from chapters/97-cuda.nw; edit the chapter, not this file.
# make gpu-check GPU_OUT=DIR: every GPU test and benchmark of the CUDA
# backend, one after another; a log and CSV and JSON results into DIR.
# Usage: sh code/cuda/gpu-check.sh BUILD_DIR OUT_DIR
B=$1
OUT=$2
mkdir -p "$OUT" || exit 2
log=$OUT/gpu-check.log
failed=0
mpi="${MPIEXEC:-mpiexec}"
{ echo "gpu-check: $(date -u '+%Y-%m-%d %H:%M UTC')"
  if command -v nvidia-smi > /dev/null; then nvidia-smi -L 2>&1
      echo "driver $(nvidia-smi --query-gpu=driver_version \
                     --format=csv,noheader 2>&1 | head -n 1)"
  else echo "nvidia-smi: not found"; fi
  echo "nvcc: $(timeout 10 nvcc --version 2>&1 | tail -n 1)"
  echo "mpiexec: $(timeout 10 "$mpi" --version 2>&1 | head -n 2 |
                   tr '\n' ' ')"; } > "$log"

# step NAME COMMAND...: run it, keep its output in the log, say how it
# went; a step that hangs is stopped after GPU_CHECK_STEP_SECONDS (90 s
# unless set; exit 124, or 137 when it ignored the stop). Once a step of
# several ranks has hung, the others are skipped: they would hang alike,
# and the device's time is better spent on what follows.
hung=0
step() {
    name=$1
    shift
    if [ "$1" = "$mpi" ] && [ $hung = 1 ]; then
        echo "gpu-check: $name: SKIPPED (a step of several ranks hung)" \
            | tee -a "$log"
        failed=1
        return
    fi
    echo "== $name: $*" >> "$log"
    start=$(date +%s)
    timeout -k 10 "${GPU_CHECK_STEP_SECONDS:-90}" "$@" >> "$log" 2>&1
    status=$?
    if [ "$1" = "$mpi" ] && { [ $status = 124 ] || [ $status = 137 ]; }; then
        hung=1
    fi
    echo "== $name: exit $status, $(($(date +%s) - start)) s" >> "$log"
    if [ $status -eq 0 ]; then
        echo "gpu-check: $name: OK"
    else
        echo "gpu-check: $name: FAIL (exit $status; see $log)"
        failed=1
    fi
}

step layers "$B/bin/gpu-check-layers"
if grep -q 'no CUDA device' "$log"; then    # nothing else can run either
    echo "gpu-check: $(grep -m 1 'no CUDA device' "$log")"
    exit 2
fi
step layers-csv "$B/bin/gpu-check-layers" --csv --output "$OUT/layers.csv"
step gemm "$B/bin/gpu-gemm-bench" --csv --output "$OUT/gemm.csv"
cat "$OUT/gemm.csv" >> "$log" 2>/dev/null
step verify-fp32 "$B/bin/minigpt" --device cuda --verify
step verify-bf16 "$B/bin/minigpt" --device cuda --verify --precision bf16
step verify-micro "$B/bin/minigpt" --device cuda --verify --micro-batches 2
step verify-wider "$B/bin/minigpt" --device cuda --verify --layers 4 \
    --hidden 256 --heads 8 --seq 128 --batch 4 --vocab 500
step train-fp32 "$B/bin/minigpt" --device cuda --quiet --json \
    --output "$OUT/train-fp32.json"
step train-bf16 "$B/bin/minigpt" --device cuda --precision bf16 --quiet \
    --json --output "$OUT/train-bf16.json"
step train-cpu "$B/bin/minigpt" --quiet --json --output "$OUT/train-cpu.json"
# Tensor parallelism: two ranks (on one GPU, each its own model, when
# there is one), the collectives through MPI on host copies.
host="--device cuda --collectives host"
step verify-tp2-fp32 "$mpi" -n 2 "$B/bin/minigpt" $host --tp 2 --verify
step verify-tp2-bf16 "$mpi" -n 2 "$B/bin/minigpt" $host --tp 2 --verify \
    --precision bf16
step verify-tp2-dp2 "$mpi" -n 4 "$B/bin/minigpt" $host --tp 2 --dp 2 \
    --verify
step train-tp2-fp32 "$mpi" -n 2 "$B/bin/minigpt" $host --tp 2 --quiet \
    --json --output "$OUT/train-tp2-fp32.json"
step train-tp2-bf16 "$mpi" -n 2 "$B/bin/minigpt" $host --tp 2 \
    --precision bf16 --quiet --json --output "$OUT/train-tp2-bf16.json"
# The same on NCCL's collectives, where there is a GPU a rank: two for
# the tensor axis, four for the data axis beside it.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then    # the GPUs CUDA will show
    gpus=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
fi
nccl="--device cuda --collectives nccl"
if ! grep -q libnccl "$B/bin/minigpt"; then
    gpus=0
    echo "gpu-check: nccl: skipped: this build found no nccl.h" | tee -a "$log"
elif [ "$gpus" -ge 2 ]; then
    step verify-tp2-nccl "$mpi" -n 2 "$B/bin/minigpt" $nccl --tp 2 --verify
    step verify-tp2-nccl-bf16 "$mpi" -n 2 "$B/bin/minigpt" $nccl --tp 2 \
        --verify --precision bf16
    step train-tp2-nccl "$mpi" -n 2 "$B/bin/minigpt" $nccl --tp 2 --quiet \
        --json --output "$OUT/train-tp2-nccl.json"
else
    echo "gpu-check: nccl: skipped: $gpus GPU; NCCL takes a GPU a rank," \
         "so its path needs two (gpu-check-layers ran its all-reduce on" \
         "one rank)" | tee -a "$log"
fi
if [ "$gpus" -ge 4 ]; then
    step verify-tp2-dp2-nccl "$mpi" -n 4 "$B/bin/minigpt" $nccl --tp 2 \
        --dp 2 --verify
fi
# What a failed or stopped step left half-written (NAME.tmp.PID) goes into
# the log, so that the folder holds only finished results and the log.
for part in "$OUT"/*.tmp.*; do
    [ -e "$part" ] || continue
    { echo "== partial: $part"; cat "$part"; } >> "$log"
    rm -f "$part"
done
echo "gpu-check: log and results in $OUT"
exit $failed
