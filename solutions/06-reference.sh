# usage: sh solutions/06-reference.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 6 (the reference trainer).
# Exercise N writes its transcripts to BUILD_DIR/solutions/06-exN*.txt and the
# numbers its prose needs to BUILD_DIR/solutions/06-exN*.tex, as LaTeX macros
# named \SolThree<letter><run><Field> (A for exercise 6.1, B for 6.2, and so
# on). Most macros are minigpt's own --latex output; where a number is read
# off a file (a checkpoint's size, a profile, a log) this script prints it
# with the one line of arithmetic that says where it comes from, and the
# test-suite (tests/06-solutions.t) checks it.
#
# Models are tiny and runs short: the whole script takes some tens of seconds.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
# One core's peak comes from the build's measurement of this machine.
minigpt="$bin/minigpt --quiet --machine $1/machine.json"
minigpt64="$bin/minigpt-fp64 --quiet"




# ---------------------------------------------------------------- 6.1 ------
# The parameters of a small model, counted from the shapes.
small="--layers 3 --hidden 48 --heads 6 --seq 32 --vocab 40"
$minigpt $small --steps 1 --transcript "$out/06-ex1.txt" \
         --latex SolThreeA --output "$out/06-ex1.tex"

# ---------------------------------------------------------------- 6.2 ------
# The default model at context 64, 128 and 256.
$minigpt --seq 64  --steps 1 --latex SolThreeBBase --output "$out/06-ex2-64.tex"
$minigpt --seq 128 --steps 1 --latex SolThreeBDouble \
         --transcript "$out/06-ex2.txt" --output "$out/06-ex2-128.tex"
$minigpt --seq 256 --steps 1 --latex SolThreeBQuad --output "$out/06-ex2-256.tex"

# ---------------------------------------------------------------- 6.3 ------
# Attention's FLOPs per token, 6 L C (T + 1), equal the matrices', 6 N_matmul,
# where T + 1 = N_matmul / (L C). N_matmul is minigpt's own count; the run at
# that T shows the two terms side by side.
crossover() {    # crossover FLAGS...: print the T at which the terms meet
    $minigpt "$@" --steps 1 --batch 1 --json --output "$out/06-ex3-shape.json"
    n=$(json "$out/06-ex3-shape.json" matmul_params)
    l=$(json "$out/06-ex3-shape.json" layers)
    c=$(json "$out/06-ex3-shape.json" hidden)
    test $((n % (l * c))) -eq 0     # a whole T: V divisible by L
    echo $((n / (l * c) - 1))
}
t=$(crossover)
$minigpt --seq "$t" --batch 1 --steps 1 --transcript "$out/06-ex3.txt" \
         --latex SolThreeCCross --output "$out/06-ex3.tex"
t=$(crossover --layers 4)
$minigpt --layers 4 --seq "$t" --batch 1 --steps 1 \
         --latex SolThreeCDeep --output "$out/06-ex3-deep.tex"
rm -f "$out/06-ex3-shape.json"

# ---------------------------------------------------------------- 6.4 ------
# Activations against the batch, and micro-batches.
for b in 1 2 4 8; do
    case $b in
        1) name=One ;; 2) name=Two ;; 4) name=Four ;; 8) name=Eight ;;
    esac
    $minigpt --batch $b --steps 1 --latex SolThreeD$name \
             --output "$out/06-ex4-$b.tex"
done
$minigpt --batch 8 --micro-batches 4 --steps 1 --transcript "$out/06-ex4.txt" \
         --latex SolThreeDMicro --output "$out/06-ex4-micro.tex"
$minigpt --verify --batch 8 --micro-batches 4 --output "$out/06-ex4-verify.txt"
$minigpt --verify --batch 8 --micro-batches 4 --latex SolThreeDVerify \
         --output "$out/06-ex4-verify.tex"

# ---------------------------------------------------------------- 6.5 ------
# What the model learns in 300 steps, at three learning rates; from the log,
# the first step whose training loss is below each entropy.
# The default run is the chapter's own training run (code/runs/06-reference.sh
# writes its transcript, log and numbers), reused rather than run again, so
# that the book prints one speed and one MFU for it.
for f in "$1/transcripts/06-train.txt" "$1/data/06-loss.csv" \
         "$1/numbers/06-train.tex"; do
    test -f "$f" || { echo "$0: 6.5 reuses the chapter's run, and $f is" \
                           "missing: run make first" >&2; exit 1; }
done
cp "$1/transcripts/06-train.txt" "$out/06-ex5.txt"
cp "$1/data/06-loss.csv" "$out/06-ex5-loss.csv"
sed 's/^\\newcommand{\\Train/\\newcommand{\\SolThreeEBase/' \
    "$1/numbers/06-train.tex" > "$out/06-ex5.tex"
awk -F, 'NR > 1 && !u && $3 < $6 { u = $1 }
         NR > 1 && !b && $3 < $7 { b = $1 }
         END { printf "\\newcommand{\\SolThreeEBelowUnigram}{%s}\n", u ? u : "never"
               printf "\\newcommand{\\SolThreeEBelowBigram}{%s}\n", b ? b : "never" }' \
    "$out/06-ex5-loss.csv" > "$out/06-ex5-steps.tex"
$minigpt --lr 3e-4 --latex SolThreeESlow --output "$out/06-ex5-slow.tex"
$minigpt --lr 3e-2 --latex SolThreeEFast --output "$out/06-ex5-fast.tex"

# ---------------------------------------------------------------- 6.6 ------
# The gradient check in single and in double precision, on the chapter's tiny
# model. A worst tensor's name has an underscore; the prose detokenizes it.
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16"
$minigpt --gradcheck $tiny --output "$out/06-ex6-fp32.txt"
$minigpt --gradcheck $tiny --latex SolThreeFSingle --output "$out/06-ex6-fp32.tex"
$minigpt64 --gradcheck $tiny --output "$out/06-ex6-fp64.txt"
$minigpt64 --gradcheck $tiny --latex SolThreeFDouble \
           --output "$out/06-ex6-fp64.tex"

# ---------------------------------------------------------------- 6.7 ------
# A checkpoint of the model of 3.1: the size of its one shard by the layout
# (30 header words and a run of 2 words, 8 bytes each, weights and Adam's
# two moments of 4 bytes each, an 8-byte hash), the file's size, and three
# checkpoints that minigpt refuses.
ckpt="$out/06-ex7.ckpt"
rm -rf "$ckpt" "$ckpt".*
$minigpt $small --steps 2 --save "$ckpt" --latex SolThreeG \
         --output "$out/06-ex7.tex"
n=$(sed -n 's/^.newcommand{.SolThreeGParams}{\([0-9,]*\)}$/\1/p' \
        "$out/06-ex7.tex" | tr -d ,)
shard=rank00000.shard
size=$(wc -c < "$ckpt/$shard")
{
    macro SolThreeGFileBytes "$(grouped "$size")"
    macro SolThreeGPredictedBytes "$(grouped $((32 * 8 + 3 * n * 4 + 8)))"
    macro SolThreeGDoublePredictedBytes "$(grouped $((32 * 8 + 3 * n * 8 + 8)))"
} >> "$out/06-ex7.tex"
# refuse LABEL BINARY FLAGS...: a resume that must fail with status 2. It
# runs in $out, so that the messages name the files as the transcript does,
# and the transcript shows the command as it was run there (less the path of
# the binary, and less --quiet, which only silences the progress lines).
refuse() {
    label=$1
    shift
    printf '%s\n' "$label" >> "$out/06-ex7.txt"
    echo "$* $small --steps 3" | sed -e "s|$bin/||" -e 's| --quiet||' \
        | fold -s -w 72 | sed -e '1s|^|  $ |' -e '2,$s|^|      |' \
        >> "$out/06-ex7.txt"
    if (cd "$out" && "$@" $small --steps 3 > /dev/null 2> 06-ex7.err); then
        echo "06-reference.sh: $label was not refused" >&2
        exit 1
    else
        status=$?
    fi
    fold -s -w 74 "$out/06-ex7.err" | sed 's|^|  |' >> "$out/06-ex7.txt"
    printf '  (exit status %s)\n' "$status" >> "$out/06-ex7.txt"
    rm -f "$out/06-ex7.err"
}
printf 'the shard of the checkpoint of --steps 2: %s bytes\n\n' \
    "$(grouped "$size")" \
    > "$out/06-ex7.txt"
# In $out the build directory is .., so the machine's measurement is
# ../machine.json there.
minigpt_out="$bin/minigpt --quiet --machine ../machine.json"
test -f "$out/../machine.json"
printf '(each command run in %s/solutions)\n\n' "$1" >> "$out/06-ex7.txt"
refuse "the same checkpoint, resumed by minigpt-fp64:" \
       $minigpt64 --resume 06-ex7.ckpt
cp -r "$ckpt" "$ckpt.short"
head -c $((size - 1)) "$ckpt/$shard" > "$ckpt.short/$shard"
refuse "the shard less its last byte:" $minigpt_out --resume 06-ex7.ckpt.short
cp -r "$ckpt" "$ckpt.changed"
byte=$(od -An -t u1 -j 1000 -N 1 "$ckpt/$shard" | tr -d ' ')
if [ "$byte" = 88 ]; then new=Y; else new=X; fi
printf '%s' "$new" | dd of="$ckpt.changed/$shard" bs=1 seek=1000 \
    conv=notrunc 2> /dev/null
refuse "the shard with byte 1000 changed:" \
       $minigpt_out --resume 06-ex7.ckpt.changed
rm -rf "$ckpt" "$ckpt".*

# ---------------------------------------------------------------- 6.8 ------
# Bit-exact resume. A straight run of 120 steps; the same run killed with
# kill -9 after its first periodic checkpoint, then resumed; and a run of 60
# steps (whose schedule is 60 steps long) resumed to 120, which is refused,
# and then allowed with --allow-schedule-change.
steps=120
straight="$out/06-ex8-straight.ckpt" killed="$out/06-ex8-killed.ckpt"
resumed="$out/06-ex8-resumed.ckpt" half="$out/06-ex8-half.ckpt"
changed="$out/06-ex8-changed.ckpt"
rm -rf "$out"/06-ex8-*.ckpt*
$minigpt --steps $steps --save "$straight" --output "$out/06-ex8-straight.txt"
# The checkpoint appears (by an atomic rename) at step 30; the kill lands a
# few steps later. Should the run finish first, which a stalled machine could
# cause, try again.
for attempt in 1 2 3; do
    rm -rf "$killed" "$killed".*
    $minigpt --steps $steps --save-every 30 --save "$killed" \
             --output "$out/06-ex8-killed.txt" &
    pid=$!
    while [ ! -f "$killed/manifest" ] && kill -0 $pid 2> /dev/null; do
        sleep 0.01
    done
    kill -9 $pid 2> /dev/null || true
    wait $pid 2> /dev/null || true
    at=$(od -An -t u8 -j 72 -N 8 "$killed/$shard" | tr -d ' ')   # word 9
    [ "$at" -lt $steps ] && break
done
rm -rf "$killed".tmp-* "$out/06-ex8-killed.txt"
$minigpt --steps $steps --resume "$killed" --save "$resumed" \
         --transcript "$out/06-ex8-resumed.txt" \
         --latex SolThreeHResumed --output "$out/06-ex8-resumed.tex"
$minigpt --steps 60 --save "$half" --output "$out/06-ex8-half.txt"
if $minigpt --steps $steps --resume "$half" --save "$changed" \
         > /dev/null 2> "$out/06-ex8-refused.err"; then
    echo "06-reference.sh: a 60-step checkpoint resumed to $steps was not refused" >&2
    exit 1
fi
$minigpt --steps $steps --resume "$half" --save "$changed" \
         --allow-schedule-change \
         --latex SolThreeHChanged --output "$out/06-ex8-changed.tex"
# compare A B: "identical" or the first byte (counted from 1) that differs.
compare() {
    if cmp -s "$1" "$2"; then echo identical; else
        cmp -l "$1" "$2" 2> /dev/null | awk 'NR == 1 { print $1 }'; fi
}
same=$(compare "$straight/$shard" "$resumed/$shard")
first=$(compare "$straight/$shard" "$changed/$shard")
{
    printf 'straight run, %s steps:                %s bytes\n' $steps \
        "$(grouped "$(wc -c < "$straight/$shard")")"
    printf 'killed (kill -9) with a checkpoint of step %s\n' "$at"
    printf 'resumed from it to step %s:             %s\n' $steps \
        "$([ "$same" = identical ] && echo 'identical to the straight run' \
                                   || echo "differs from byte $same")"
    printf '60 steps (--steps 60), resumed to %s:   refused:\n' $steps
    sed 's|/.*/||' "$out/06-ex8-refused.err" | fold -s -w 72 | sed 's|^|  |'
    printf 'the same with --allow-schedule-change: %s\n' \
        "$([ "$first" = identical ] && echo 'identical to the straight run' \
                                    || echo "differs from byte $first")"
} > "$out/06-ex8.txt"
rm -f "$out/06-ex8-refused.err"
{
    macro SolThreeHKilledAt "$at"
    macro SolThreeHSame "$same"
    macro SolThreeHFirstDifference "$(grouped "$first")"
} > "$out/06-ex8.tex"
rm -rf "$out"/06-ex8-*.ckpt*

# ---------------------------------------------------------------- 6.9 ------
# Where a step's time goes, for the default model and one four times as wide.
# The profile gives seconds per step by operation; the report, the FLOPs that
# the matrix multiplies and attention performed in them.
profile() {    # profile NAME PREFIX FLAGS...
    name=$1 prefix=$2
    shift 2
    $minigpt "$@" --profile "$out/06-ex9-$name.csv" \
             --transcript "$out/06-ex9-$name.txt" \
             --json --output "$out/06-ex9-$name.json"
    j="$out/06-ex9-$name.json"
    awk -F, -v p="$prefix" -v mm="$(json "$j" flops_matmul_per_step)" \
        -v at="$(json "$j" flops_attention_per_step)" \
        -v mfu="$(json "$j" mfu)" -v peak="$(json "$j" peak_flops)" \
        -v cpu="$(json "$j" cpu)" -v med="$(json "$j" step_seconds_median)" \
        -v table="$out/06-ex9-$name-table.txt" '
        NR > 1 { op[++n] = $1; f[n] = $2; b[n] = $3; u[n] = $4
                 all[n] = $2 + $3 + $4; sum += all[n]
                 if (!top || all[n] > all[top]) top = n }
        function sci(x,  t) { t = sprintf("%.3g", x); sub(/e\+0*/, "e", t)
                              return t }
        function ms(s) { return sprintf("%.3g", 1000 * s) }
        function pct(i) { return sprintf("%.3g", 100 * all[i] / sum) }
        function macro(k, v) { printf "\\newcommand{\\%s%s}{%s}\n", p, k, v }
        END {
            printf "%-14s %9s %9s %9s %9s %7s\n", "operation", "forward",
                   "backward", "update", "total", "share" > table
            for (i = 1; i <= n; i++) {
                printf "%-14s %9s %9s %9s %9s %5s %%\n", op[i], ms(f[i]),
                       ms(b[i]), ms(u[i]), ms(all[i]), pct(i) > table
                if (op[i] == "matmul") m = i
                if (op[i] == "attention") a = i
            }
            printf "%-14s %9s %9s %9s %9s %7s\n", "all", "", "", "", ms(sum),
                   "100 %" > table
            printf "(milliseconds per step)\n\n" > table
            printf "matmul:    %s FLOPs per step / %s ms = %.3g GFLOP/s\n",
                   sci(mm), ms(all[m]), mm / all[m] / 1e9 > table
            printf "attention: %s FLOPs per step / %s ms = %.3g GFLOP/s\n",
                   sci(at), ms(all[a]), at / all[a] / 1e9 > table
            macro("TopOp", op[top]); macro("TopShare", pct(top) "\\,\\%")
            macro("MatmulShare", pct(m) "\\,\\%")
            macro("AttentionShare", pct(a) "\\,\\%")
            macro("StepMs", ms(sum))
            macro("MedianMs", ms(med))
            # The largest row, named once: the shares of the matrix
            # multiplies and attention are already in the sentence.
            if (top == a)
                macro("TopClause", ", and attention was the largest row of the table")
            else if (top == m)
                macro("TopClause", ", and the matrix multiplies were the largest row of the table")
            else
                macro("TopClause", sprintf(", and the largest row of the table was \\solthreename{%s}, at %s\\,\\%%", op[top], pct(top)))
            macro("MatmulRate", sprintf("%.3g", mm / all[m] / 1e9))
            macro("AttentionRate", sprintf("%.3g", at / all[a] / 1e9))
            macro("PeakRate", sprintf("%.3g", peak / 1e9))
            macro("Mfu", sprintf("%.3g", 100 * mfu) "\\,\\%")
            macro("Cpu", cpu)
        }' "$out/06-ex9-$name.csv" > "$out/06-ex9-$name.tex"
}
profile default SolThreeIDefault --steps 100
profile wide SolThreeIWide --hidden 256 --steps 10

# The prose compares the two profiles. Timings are not certain, so this checks
# what it says against what this build measured: where the comparison went
# the other way, the sentence says so; and if attention did not run slower
# than the matrix multiply, the explanation built on it is wrong, and the
# build stops.
share() {    # share NAME OP: OP's fraction of a step in profile NAME
    awk -F, -v op="$2" 'NR > 1 { all += $2 + $3 + $4
                                 if ($1 == op) t = $2 + $3 + $4 }
                        END { print t / all }' "$out/06-ex9-$1.csv"
}
rate() {     # rate NAME OP KEY: OP's FLOP/s in profile NAME, FLOPs from KEY
    awk -F, -v op="$2" -v f="$(json "$out/06-ex9-$1.json" "$3")" \
        'NR > 1 && $1 == op { print f / ($2 + $3 + $4) }' "$out/06-ex9-$1.csv"
}
above() {    # above A B: true when A > B
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'
}
for name in default wide; do
    above "$(rate $name matmul flops_matmul_per_step)" \
          "$(rate $name attention flops_attention_per_step)" || {
        echo "$0: 3.9: in the $name model attention ran at least as fast as" \
             "the matrix multiply; the solution's explanation does not hold" >&2
        exit 1
    }
done
{
    if above "$(share wide matmul)" "$(share default matmul)"; then
        macro SolThreeIMatmulClause "$(printf '%s' 'The time moves to the' \
            ' matrix multiplies (\SolThreeIWideMatmulShare{} of the step, up' \
            ' from \SolThreeIDefaultMatmulShare{}')"
    else
        macro SolThreeIMatmulClause "$(printf '%s' 'In this build the time' \
            ' did not move to the matrix multiplies' \
            ' (\SolThreeIWideMatmulShare{} of the step, against' \
            ' \SolThreeIDefaultMatmulShare{} in the default model')"
    fi
    if above "$(share default attention)" "$(share wide attention)"; then
        macro SolThreeIAttentionClause \
            'attention down to \SolThreeIWideAttentionShare{}'
    else
        macro SolThreeIAttentionClause "$(printf '%s' 'attention at' \
            ' \SolThreeIWideAttentionShare{}, not below its share in the' \
            ' default model')"
    fi
    if above "$(json "$out/06-ex9-wide.json" mfu)" \
             "$(json "$out/06-ex9-default.json" mfu)"; then
        macro SolThreeIMfuClause "$(printf '%s' 'and the MFU rises to' \
            ' \SolThreeIWideMfu{} (from the median step,' \
            ' \SolThreeIWideMedianMs{}\,ms; the table, which averages every' \
            ' step, the cold first one included, gives \SolThreeIWideStepMs{}\,ms)')"
    else
        macro SolThreeIMfuClause "$(printf '%s' 'but in this build the MFU' \
            ' did not rise: \SolThreeIWideMfu{}, against' \
            ' \SolThreeIDefaultMfu{} for the default model (both from the' \
            ' median step, \SolThreeIWideMedianMs{}\,ms for the wide model)')"
    fi
} > "$out/06-ex9.tex"

# ---------------------------------------------------------------- 6.10 -----
# A gradient by hand: the dump of a small trained model read with NumPy, its
# loss recomputed by a forward pass written from the chapter, and the
# gradients of the head and of the final norm's shift worked out from the
# probabilities. The program is written out whole, so that the solution
# shows exactly what ran.
python=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy' 2> /dev/null; then python=$p; break; fi
done
if [ -z "$python" ]; then
    echo "06-reference.sh: exercise 6.10 needs python3 with NumPy (Debian's python3-numpy)" >&2
    exit 1
fi
model10="--layers 1 --hidden 16 --heads 2 --seq 8 --batch 4 --vocab 16"
rm -rf "$out/06-ex10-dump" "$out/06-ex10.ckpt"
$minigpt $model10 --steps 20 --save "$out/06-ex10.ckpt" > /dev/null
$minigpt $model10 --steps 20 --resume "$out/06-ex10.ckpt" --dump "$out/06-ex10-dump" \
         > /dev/null
cat > "$out/06-ex10.py" <<'PYTHON'
import json, sys
import numpy as np

d = sys.argv[1]                                   # the --dump directory
man = json.load(open(d + "/manifest.json"))
W = {t["name"]: np.load(f"{d}/weights/{t['name']}.npy").astype(np.float64)
     for t in man["tensors"]}
inputs, targets = np.load(d + "/inputs.npy"), np.load(d + "/targets.npy")
L, C, H = man["layers"], man["hidden"], man["heads"]
B, T = inputs.shape
V, hs = W["head_w"].shape[1], C // H

def layernorm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b

def gelu(x):
    u = np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)
    return 0.5 * x * (1 + np.tanh(u))

def heads(z):                               # (B, T, C) -> (B, H, T, hs)
    return z.reshape(B, T, H, hs).transpose(0, 2, 1, 3)

x = W["wte"][inputs] + W["wpe"][np.arange(T)]     # the residual stream
causal = np.tril(np.ones((T, T), dtype=bool))
for l in range(L):
    a = layernorm(x, W["ln1_w"][l], W["ln1_b"][l])
    qkv = a @ W["qkv_w"][l] + W["qkv_b"][l]
    q, k, v = (heads(qkv[..., i * C:(i + 1) * C]) for i in range(3))
    s = np.where(causal, q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    x = x + y @ W["proj_w"][l] + W["proj_b"][l]
    a = layernorm(x, W["ln2_w"][l], W["ln2_b"][l])
    m = gelu(a @ W["fc_w"][l] + W["fc_b"][l])
    x = x + m @ W["fcproj_w"][l] + W["fcproj_b"][l]
h = layernorm(x, W["lnf_w"], W["lnf_b"]).reshape(B * T, C)
logits = h @ W["head_w"]                          # (BT, V)
probs = np.exp(logits - logits.max(-1, keepdims=True))
probs /= probs.sum(-1, keepdims=True)
onehot = np.eye(V)[targets.reshape(-1)]
loss = -np.log(probs[onehot == 1]).mean()

# By hand: dL/dlogits = (p - y) / BT; the head is h W, the shift adds b.
dlogits = (probs - onehot) / (B * T)
dhead = h.T @ dlogits                             # (C, V)
dlnf_b = (dlogits @ W["head_w"].T).sum(0)         # (C)
G = {n: np.load(f"{d}/grads/{n}.npy") for n in ("head_w", "lnf_b")}
theirs = float(np.load(d + "/loss.npy"))
print(f"loss: NumPy {loss:.9f}, minigpt {theirs:.9f}")
for name, mine in (("head_w", dhead), ("lnf_b", dlnf_b)):
    diff = np.abs(mine - G[name]).max()
    print(f"{name}: largest |gradient| {np.abs(G[name]).max():.3e}, "
          f"largest difference {diff:.1e}")
PYTHON
"$python" "$out/06-ex10.py" "$out/06-ex10-dump" > "$out/06-ex10.txt"
{
    sed -n 's/^loss: NumPy \([0-9.]*\), minigpt \([0-9.]*\)$/\1 \2/p' "$out/06-ex10.txt" |
        while read mine theirs; do
            macro SolThreeJLossNumpy "$mine"
            macro SolThreeJLossDump "$theirs"
        done
    for name in head_w lnf_b; do
        case $name in head_w) m=Head ;; lnf_b) m=Shift ;; esac
        sed -n "s/^$name: largest |gradient| \([^,]*\), largest difference \(.*\)\$/\1 \2/p" \
            "$out/06-ex10.txt" | while read big diff; do
            macro SolThreeJ${m}Largest "$big"
            macro SolThreeJ${m}Difference "$diff"
        done
    done
} > "$out/06-ex10.tex"
rm -rf "$out/06-ex10.ckpt"
