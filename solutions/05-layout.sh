# usage: sh solutions/05-layout.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 5 (the layout decision).
# Exercise N writes its transcripts to BUILD_DIR/solutions/05-exN*.txt and
# the numbers its prose needs to BUILD_DIR/solutions/05-exN*.tex, as LaTeX
# macros named \SolFive<letter><run><Field> (A for exercise 5.1, and so on).
set -eu
. "$(dirname "$0")/lib/helpers.sh"
build_dirs "$1"
fleet="$bin/fleet"
A="--tp 8 --pp 1 --dp 128 --fsdp 1"
B="--tp 8 --pp 8 --dp 16 --fsdp 0 --schedule 1f1b --micro-batch 1"

# Exercise 5.1: designs A and B at 100 and 800 Gbps, and the planner's choice.
for nic in 100 800; do
    $fleet layout $A --nic-gbps $nic --latex "SolFiveAA$([ $nic = 100 ] && echo Slow || echo Fast)" \
                  --output "$out/05-ex1-a-$nic.tex"
    $fleet layout $B --nic-gbps $nic --latex "SolFiveAB$([ $nic = 100 ] && echo Slow || echo Fast)" \
                  --output "$out/05-ex1-b-$nic.tex"
    $fleet layout --nic-gbps $nic --latex "SolFiveAPlan$([ $nic = 100 ] && echo Slow || echo Fast)" \
                  --output "$out/05-ex1-plan-$nic.tex"
done

# Exercise 5.2: B's pipeline with 16, 32 and 64 micro-batches, 1F1B and GPipe.
for m in 16 32 64; do
    name=$(case $m in 16) echo Sixteen;; 32) echo ThirtyTwo;; 64) echo SixtyFour;; esac)
    $fleet pipeline --pp 8 --micro-batches $m --latex "SolFiveB$name" \
                    --output "$out/05-ex2-$m.tex"
done
$fleet pipeline --pp 8 --micro-batches 32 --schedule gpipe --latex SolFiveBGpipe \
                --output "$out/05-ex2-gpipe.tex"

# Exercise 5.3: interleaving B's pipeline: v = 2, 4, 8 with m = 32, and m = 36.
for v in 2 4 8; do
    name=$(case $v in 2) echo Two;; 4) echo Four;; 8) echo Eight;; esac)
    $fleet pipeline --pp 8 --micro-batches 32 --schedule interleaved --chunks $v \
                    --latex "SolFiveC$name" --output "$out/05-ex3-$v.tex"
done
if $fleet pipeline --pp 8 --micro-batches 36 --schedule interleaved --chunks 2 \
        --latex SolFiveCOdd > "$out/05-ex3-odd.tex" 2> "$out/05-ex3-odd.txt"; then
    echo 'ran' > "$out/05-ex3-odd.txt"
else
    macro SolFiveCOddDeadlock 1 > "$out/05-ex3-odd.tex"
fi

# Exercise 5.4: TP16 across two nodes.
$fleet layout --tp 16 --cross-node-tp --pp 1 --fsdp 1 --micro-batch 4 \
              --latex SolFiveD --output "$out/05-ex4.tex"
$fleet layout --tp 8 --pp 1 --fsdp 1 --micro-batch 4 --dp 128 \
              --latex SolFiveDEight --output "$out/05-ex4-8.tex"

# Exercise 5.5: ten trillion tokens in five weeks: 5,120 GPUs.
show "$out/05-ex5.txt" "$fleet" layout --gpus 5120
quote_lines "$out/05-ex5.txt" '^best:|^compute|heaviest stage|^DP on NIC|^MFU'
$fleet layout --gpus 5120 --latex SolFiveE --output "$out/05-ex5.tex"

# Exercise 5.6: an MoE of the same memory, 20e9 of 100e9 active: FSDP gathers
# all the weights, the compute is a fifth.
$fleet layout $A --json > "$out/05-ex6.json"
line=$(json "$out/05-ex6.json" nic_line_s | head -n 1)
dense=$(json "$out/05-ex6.json" dense_compute_s | head -n 1)
{
    macro SolFiveFLineTime "$(duration "$line")"
    macro SolFiveFDenseTime "$(duration "$dense")"
    macro SolFiveFMoeTime "$(duration "$(calc '%.17g' "$dense / 5")")"
    macro SolFiveFRatio "$(calc '%.3g' "$line / $dense")"
    macro SolFiveFMoeRatio "$(calc '%.3g' "$line / ($dense / 5)")"
} > "$out/05-ex6.tex"

# Exercise 5.7: an open design: 70e9 (80 layers, hidden 8,192, 64 heads, 8 KV
# heads, gated FFN 28,672, vocabulary 128,000) on 512 H100 with 200 Gbps NICs,
# 4M-token batches of 8,192.
seventy="--layers 80 --hidden 8192 --heads 64 --kv-heads 8 --ffn 28672 --gated
         --vocab 128000 --seq 8192 --batch-tokens 4194304 --gpus 512 --nic-gbps 200"
show "$out/05-ex7.txt" "$fleet" layout $seventy
quote_lines "$out/05-ex7.txt" \
    '^fleet layout|^best:|^step|^MFU|^what reverses|overtakes'
$fleet layout $seventy --latex SolFiveG --output "$out/05-ex7.tex"
# The best layout without a pipeline, and the best with FSDP (no pipeline).
$fleet layout $seventy --pp 1 --latex SolFiveGFlat --output "$out/05-ex7-flat.tex"
$fleet layout $seventy --pp 1 --fsdp 1 --latex SolFiveGFsdp --output "$out/05-ex7-fsdp.tex"
show "$out/05-ex7-flat.txt" "$fleet" layout $seventy --pp 1
quote_lines "$out/05-ex7-flat.txt" '^best:|^step'
show "$out/05-ex7-fsdp.txt" "$fleet" layout $seventy --pp 1 --fsdp 1
quote_lines "$out/05-ex7-fsdp.txt" '^best:|^step'

# Exercise 5.8: where FSDP turns latency-bound with a faster network stack.
for us in 5 10 20; do
    name=$(case $us in 5) echo Five;; 10) echo Ten;; 20) echo Twenty;; esac)
    $fleet layout --gpus 4096 --tp 8 --pp 1 --fsdp 1 --nic-latency-us $us \
                  --latex "SolFiveH$name" --output "$out/05-ex8-$us.tex"
done
