# usage: sh solutions/02-compute-and-fleet.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 2 (compute and the fleet).
# Exercise N writes its transcripts to BUILD_DIR/solutions/02-exN*.txt and the
# numbers its prose needs to BUILD_DIR/solutions/02-exN*.tex, as LaTeX macros
# named \SolTwo<letter><run><Field> (A for exercise 2.1, B for 2.2, and so on).
# Exercise 2.9 is conceptual and has no runs.
set -eu
. "$(dirname "$0")/lib/helpers.sh"
fleet="$1/bin/fleet"
out="$1/solutions"
mkdir -p "$out"

# field KEY ARGS...: one number from fleet compute --json, for a run whose
# input is another run's answer (so that no answer is copied into this file).
field() {
    key=$1
    shift
    "$fleet" compute "$@" --json \
        | sed -n "s/^ *\"$key\": *\([0-9.e+]*\),*\$/\1/p"
}

# Exercise 2.1: Llama 3 405B, 15.6T tokens, 16,384 H100 at 41 % MFU, without
# and with the attention term (126 layers, hidden 16,384, sequence 8,192).
llama="--params 405e9 --tokens 15.6e12 --gpus 16384 --mfu 0.41"
show "$out/02-ex1.txt" "$fleet" compute $llama
quote "$out/02-ex1.txt" 'training FLOPs|on '
$fleet compute $llama --latex SolTwoA --output "$out/02-ex1.tex"
show "$out/02-ex1-attn.txt" "$fleet" compute $llama --layers 126 \
     --hidden 16384 --seq 8192
quote "$out/02-ex1-attn.txt" 'training FLOPs|on [0-9]'
$fleet compute $llama --layers 126 --hidden 16384 --seq 8192 \
               --latex SolTwoAAttn --output "$out/02-ex1-attn.tex"

# Exercise 2.2: the running example in 30 days at 40 % and at 30 % MFU.
show "$out/02-ex2.txt" "$fleet" compute --days 30 --mfu 0.3
quote "$out/02-ex2.txt" 'on [0-9]|to finish'
$fleet compute --days 30 --mfu 0.4 --latex SolTwoBForty \
               --output "$out/02-ex2-40.tex"
$fleet compute --days 30 --mfu 0.3 --latex SolTwoBThirty \
               --output "$out/02-ex2-30.tex"

# Exercise 2.3: the running example on 1,024 A100s, beside 1,024 H100s, and
# the A100 memory floor.
show "$out/02-ex3.txt" "$fleet" compute --gpu a100 --days 30
quote "$out/02-ex3.txt" 'on [0-9]|to finish'
$fleet compute --gpu a100 --days 30 --latex SolTwoC --output "$out/02-ex3.tex"
$fleet compute --gpu h100 --days 30 --latex SolTwoCHopper \
               --output "$out/02-ex3-h100.tex"
$fleet memory --gpu a100 --latex SolTwoCMemory --output "$out/02-ex3-memory.tex"

# Exercise 2.4: MFU at 30, 40 and 45 %, with a 30-day deadline.
show "$out/02-ex4.txt" "$fleet" compute --mfu 0.45 --days 30
quote "$out/02-ex4.txt" 'on [0-9]|to finish'
$fleet compute --mfu 0.3  --days 30 --latex SolTwoDThirty \
               --output "$out/02-ex4-30.tex"
$fleet compute --mfu 0.4  --days 30 --latex SolTwoDForty \
               --output "$out/02-ex4-40.tex"
$fleet compute --mfu 0.45 --days 30 --latex SolTwoDFortyFive \
               --output "$out/02-ex4-45.tex"

# Exercise 2.5: an MoE of 100e9 parameters, 20e9 active, beside the dense
# model of the same size; the memory floor is fleet memory's.
show "$out/02-ex5-memory.txt" "$fleet" memory --params 100e9
quote_lines "$out/02-ex5-memory.txt" \
    '^(static state|GPUs to hold|in whole nodes)'
$fleet memory --params 100e9 --latex SolTwoEMemory \
              --output "$out/02-ex5-memory.tex"
show "$out/02-ex5.txt" "$fleet" compute --active-params 20e9 --days 30
quote "$out/02-ex5.txt" 'training FLOPs|on [0-9]|to finish'
$fleet compute --active-params 20e9 --days 30 --latex SolTwoE \
               --output "$out/02-ex5.tex"
$fleet compute --days 30 --latex SolTwoEBaseline \
               --output "$out/02-ex5-dense.tex"

# Exercise 2.6: ten trillion tokens in 35 days; then the fleet that the first
# run found, at 35 % MFU.
show "$out/02-ex6.txt" "$fleet" compute --tokens 10e12 --days 35
quote "$out/02-ex6.txt" 'training FLOPs|on [0-9]|to finish'
$fleet compute --tokens 10e12 --days 35 --latex SolTwoF \
               --output "$out/02-ex6.tex"
wide=$(field gpus_needed_whole_nodes --tokens 10e12 --days 35)
test -n "$wide"
printf '\\newcommand{\\SolTwoFFleet}{%s}\n' "$wide" > "$out/02-ex6-fleet.tex"
show "$out/02-ex6-low.txt" "$fleet" compute --tokens 10e12 --days 35 \
     --gpus "$wide" --mfu 0.35
quote "$out/02-ex6-low.txt" 'on [0-9]|to finish'
$fleet compute --tokens 10e12 --days 35 --gpus "$wide" --mfu 0.35 \
               --latex SolTwoFLow --output "$out/02-ex6-low.tex"

# Exercise 2.7: H200 beside H100, compute and memory floor.
show "$out/02-ex7.txt" "$fleet" compute --gpu h200 --days 30
quote "$out/02-ex7.txt" 'on '
$fleet compute --gpu h200 --days 30 --latex SolTwoGHtwo \
               --output "$out/02-ex7-h200.tex"
$fleet compute --gpu h100 --days 30 --latex SolTwoGHone \
               --output "$out/02-ex7-h100.tex"
$fleet memory --gpu h200 --latex SolTwoGMemory --output "$out/02-ex7-memory.tex"

# Exercise 2.8: the attention term of a 70e9 model (80 layers, hidden 8,192)
# at sequence 2,048 and 32,768, and the long case counted as a causal kernel
# does it (half the score work, which the linear term gives at half the
# sequence).
seventy="--params 70e9 --layers 80 --hidden 8192"
show "$out/02-ex8-short.txt" "$fleet" compute $seventy --seq 2048
quote "$out/02-ex8-short.txt" 'training FLOPs|on [0-9]'
show "$out/02-ex8-long.txt" "$fleet" compute $seventy --seq 32768
quote "$out/02-ex8-long.txt" 'training FLOPs|on [0-9]'
$fleet compute $seventy --seq 2048  --latex SolTwoHShort \
               --output "$out/02-ex8-short.tex"
$fleet compute $seventy --seq 32768 --latex SolTwoHLong \
               --output "$out/02-ex8-long.tex"
$fleet compute $seventy --seq 16384 --latex SolTwoHCausal \
               --output "$out/02-ex8-causal.tex"
