# usage: sh solutions/03-step.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 3 (the step). Exercise N
# writes its transcripts to BUILD_DIR/solutions/03-exN*.txt and the numbers
# its prose needs to BUILD_DIR/solutions/03-exN*.tex, as LaTeX macros named
# \SolStep<letter><run><Field> (A for exercise 3.1, B for 3.2, and so on).
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"

# Exercise 3.1: Llama 3 405B's last batch, 16M tokens, on TP8 x PP16 x DP128
# at 400 TFLOP/s per GPU (126 layers, hidden 16,384, sequences of 8,192).
llama="--params 405e9 --tokens 15.6e12 --gpus 16384"
$fleet compute $llama --achieved-flops 400e12 --latex SolStepAMfu \
               --output "$out/03-ex1-mfu.tex"
$fleet compute $llama --achieved-flops 400e12 --json --output "$out/03-ex1-mfu.json"
mfu=$(json "$out/03-ex1-mfu.json" mfu)
shape="--batch-tokens 16777216 --tp 8 --pp 16 --zero 1 --hidden 16384 \
       --layers 126 --micro-batch-tokens 8192 --mfu $mfu"
show "$out/03-ex1.txt" "$fleet" step $llama $shape
quote "$out/03-ex1.txt" 'tokens per step|on NIC'
$fleet step $llama $shape --latex SolStepA --output "$out/03-ex1.tex"

# Design A: tensor parallelism of 8, FSDP over the rest.
a="--tp 8 --zero 3"

# Exercise 3.2: design A on NICs of 100 to 800 Gbit/s per GPU.
for run in 100:OneHundred 200:TwoHundred 400:FourHundred 800:EightHundred; do
    $fleet step $a --nic-gbps "${run%%:*}" --latex "SolStepB${run#*:}" \
           --output "$out/03-ex2-${run%%:*}.tex"
done
$fleet step $a --nic-gbps 400 --json --output "$out/03-ex2.json"
{
    macro SolStepBBreakEven \
        "$(calc '%.0f' "400 * $(json "$out/03-ex2.json" nic_bandwidth_ratio)")"
} > "$out/03-ex2-even.tex"

# Exercise 3.3: TP16 across two nodes against TP8 inside one.
show "$out/03-ex3.txt" "$fleet" tp --tp 16 --link nic
quote_lines "$out/03-ex3.txt" \
    '^per block|^  sent|comm ÷ compute|^per micro-batch|on the link'
show "$out/03-ex3-8.txt" "$fleet" tp
quote_lines "$out/03-ex3-8.txt" 'comm ÷ compute|^per micro-batch|on the link'
$fleet tp --tp 16 --link nic --latex SolStepCSixteen --output "$out/03-ex3-16.tex"
$fleet tp --latex SolStepCEight --output "$out/03-ex3-8.tex"

# Exercise 3.4: a 1 GB all-reduce on 8 GPUs in 5 ms: algbw, busbw, and the
# fraction of NVLink's line rate, used as --link-efficiency for design A.
$fleet step $a --json --output "$out/03-ex4-a.json"
line=$(json "$out/03-ex4-a.json" nvlink_line_rate)
algbw=$(calc '%.6g' "1e9 / 5e-3")
busbw=$(calc '%.6g' "$algbw * 2 * 7 / 8")
fraction=$(calc '%.4f' "$busbw / $line")
{
    macro SolStepDAlgbw "$(calc '%.0f' "$algbw / 1e9")"
    macro SolStepDBusbw "$(calc '%.0f' "$busbw / 1e9")"
    macro SolStepDFraction "$(calc '%.1f' "100 * $fraction")"
} > "$out/03-ex4.tex"
$fleet step $a --link-efficiency "$fraction" --latex SolStepD \
       --output "$out/03-ex4-step.tex"
$fleet step $a --latex SolStepDLine --output "$out/03-ex4-line.tex"

# Exercise 3.5: switches that add, for design B and design A.
b="--tp 8 --pp 8 --dp 16 --zero 1 --micro-batch-tokens 4096"
show "$out/03-ex5.txt" "$fleet" step $b --in-network
quote "$out/03-ex5.txt" 'on '
$fleet step $b --in-network --latex SolStepESharp --output "$out/03-ex5-sharp.tex"
$fleet step $b --latex SolStepERing --output "$out/03-ex5-ring.tex"
$fleet step $a --in-network --latex SolStepEA --output "$out/03-ex5-a.tex"
plain="--tp 8 --pp 8 --dp 16 --zero 0 --micro-batch-tokens 4096"
$fleet step $plain --in-network --latex SolStepEPlain --output "$out/03-ex5-plain.tex"

# Exercise 3.6: design A on H800s beside H100s.
show "$out/03-ex6.txt" "$fleet" step $a --gpu h800
quote "$out/03-ex6.txt" 'on NVLink'
show "$out/03-ex6-h100.txt" "$fleet" step $a --gpu h100
quote "$out/03-ex6-h100.txt" 'on NVLink'
$fleet step $a --gpu h800 --latex SolStepFHeight --output "$out/03-ex6-h800.tex"
$fleet step $a --gpu h100 --latex SolStepFHundred --output "$out/03-ex6-h100.tex"

# Exercise 3.7: 8,192 GPUs with the same global batch, in design A's shape,
# and with a pipeline of 8 stages across nodes.
show "$out/03-ex7.txt" "$fleet" step $a --gpus 8192
quote "$out/03-ex7.txt" 'tokens per step|on NIC'
$fleet step $a --gpus 8192 --latex SolStepG --output "$out/03-ex7.tex"
pipe="--gpus 8192 --tp 8 --pp 8 --zero 1 --micro-batch-tokens 4096"
show "$out/03-ex7-pipe.txt" "$fleet" step $pipe
quote_lines "$out/03-ex7-pipe.txt" '^micro-batches|comm ÷ compute'
$fleet step $pipe --latex SolStepGPipe --output "$out/03-ex7-pipe.tex"

# Exercise 3.8: MI300X, tensor parallelism on the Infinity Fabric's total,
# and design A on it.
show "$out/03-ex8-tp.txt" "$fleet" tp --gpu mi300x
quote_lines "$out/03-ex8-tp.txt" '^fleet tp|comm ÷ compute|on the link'
$fleet tp --gpu mi300x --latex SolStepHBlock --output "$out/03-ex8-tp.tex"
$fleet step $a --gpu mi300x --latex SolStepH --output "$out/03-ex8.tex"
show "$out/03-ex8.txt" "$fleet" step $a --gpu mi300x
quote "$out/03-ex8.txt" 'on NIC'
# A ring of two MI300X uses one Infinity Fabric link of the seven: a seventh
# of the total the parts table gives.
seventh=$(calc '%.6f' '1 / 7')
$fleet tp --gpu mi300x --tp 2 --link-efficiency "$seventh" \
          --latex SolStepHPair --output "$out/03-ex8-pair.tex"
show "$out/03-ex8-pair.txt" "$fleet" tp --gpu mi300x --tp 2 \
     --link-efficiency "$seventh"
quote_lines "$out/03-ex8-pair.txt" '^fleet tp|comm ÷ compute'
