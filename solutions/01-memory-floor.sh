# usage: sh solutions/01-memory-floor.sh BUILD_DIR
#
# The runs behind the worked solutions of chapter 1 (the memory floor). Each
# exercise N writes its main transcript to BUILD_DIR/solutions/01-exN.txt and
# the single numbers its prose needs to BUILD_DIR/solutions/01-exN*.tex, as
# LaTeX macros named \SolOne<letter><run><Field> (A for exercise 1.1, B for
# 1.2, and so on).
set -eu
. "$(dirname "$0")/lib/helpers.sh"
fleet="$1/bin/fleet"
out="$1/solutions"
mkdir -p "$out"
# The lines of the floor's derivation that the solutions quote: all of them
# ($floor), or the state, the usable memory and the GPUs ($gpus).
gpus='^(static state|usable per GPU|GPUs to hold|in whole nodes)'
floor="$gpus|^(one node|state in nodes)"

# Exercise 1.1: 70e9 parameters on H200 and on H100.
show "$out/01-ex1.txt" "$fleet" memory --params 70e9 --gpu h200
quote_lines "$out/01-ex1.txt" "$floor"
$fleet memory --params 70e9 --gpu h200 --latex SolOneAHtwo \
              --output "$out/01-ex1-h200.tex"
$fleet memory --params 70e9 --gpu h100 --latex SolOneAHone \
              --output "$out/01-ex1-h100.tex"

# Exercise 1.2: the running example at other usable fractions, and the two
# whole percentages between which the floor drops by a node.
show "$out/01-ex2.txt" "$fleet" memory --params 100e9 --usable 0.9
quote_lines "$out/01-ex2.txt" "$gpus"
$fleet memory --params 100e9 --usable 0.9  --latex SolOneBNinety \
              --output "$out/01-ex2-90.tex"
$fleet memory --params 100e9 --usable 0.8  --latex SolOneBEighty \
              --output "$out/01-ex2-80.tex"
$fleet memory --params 100e9 --usable 0.7  --latex SolOneBSeventy \
              --output "$out/01-ex2-70.tex"
$fleet memory --params 100e9 --usable 0.83 --latex SolOneBEightyThree \
              --output "$out/01-ex2-83.tex"
$fleet memory --params 100e9 --usable 0.84 --latex SolOneBEightyFour \
              --output "$out/01-ex2-84.tex"

# Exercise 1.3: a 175e9 model on A100s under four conventions.
show "$out/01-ex3.txt" "$fleet" memory --params 175e9 --gpu a100 \
     --precision mixed
quote_lines "$out/01-ex3.txt" "$floor"
for convention in lean mixed fp32-grads mt-nlg; do
    case $convention in
        lean)       prefix=SolOneCLean ;;
        mixed)      prefix=SolOneCMixed ;;
        fp32-grads) prefix=SolOneCFpGrads ;;
        mt-nlg)     prefix=SolOneCMtnlg ;;
    esac
    $fleet memory --params 175e9 --gpu a100 --precision $convention \
                  --latex $prefix --output "$out/01-ex3-$convention.tex"
done

# Exercise 1.4: the largest model whose state fits one H100, a slightly
# larger one, and a 7e9 model.
show "$out/01-ex4.txt" "$fleet" memory --params 4e9
quote_lines "$out/01-ex4.txt" "$gpus"
$fleet memory --params 4e9   --latex SolOneDFits  --output "$out/01-ex4-fits.tex"
$fleet memory --params 4.1e9 --latex SolOneDOver  --output "$out/01-ex4-over.tex"
$fleet memory --params 7e9   --latex SolOneDSeven --output "$out/01-ex4-seven.tex"

# Exercise 1.5: a 405e9 model, fully sharded over 16,384 GPUs (written out:
# 16k would mean 16,000).
show "$out/01-ex5.txt" "$fleet" memory --params 405e9 --gpus 16384
quote_lines "$out/01-ex5.txt" "$floor|^fully sharded"
$fleet memory --params 405e9 --gpus 16384 --latex SolOneE \
              --output "$out/01-ex5.tex"

# Exercise 1.6: an 8-bit optimizer, 2 + 2 + 4 + 1 + 1 = 10 bytes per parameter.
show "$out/01-ex6.txt" "$fleet" memory --params 100e9 --bytes-per-param 10
quote_lines "$out/01-ex6.txt" '^(static state|GPUs to hold|in whole nodes)'
$fleet memory --params 100e9 --bytes-per-param 10 --latex SolOneFEight \
              --output "$out/01-ex6.tex"
$fleet memory --params 100e9 --precision lean --latex SolOneFLean \
              --output "$out/01-ex6-lean.tex"

# Exercise 1.7: a checkpoint without the bf16 gradients (14 bytes per
# parameter), written by every rank or by one writer, and one without the bf16
# weights either (12 bytes per parameter).
show "$out/01-ex7.txt" "$fleet" memory --params 100e9 \
     --checkpoint-bytes-per-param 14
quote_lines "$out/01-ex7.txt" '^checkpoint'
$fleet memory --params 100e9 --checkpoint-bytes-per-param 14 --latex SolOneGRanks \
              --output "$out/01-ex7-ranks.tex"
$fleet memory --params 100e9 --checkpoint-bytes-per-param 14 --checkpoint-bandwidth 5e9 \
              --latex SolOneGOne --output "$out/01-ex7-one.tex"
$fleet memory --params 100e9 --checkpoint-bytes-per-param 12 --latex SolOneGMaster \
              --output "$out/01-ex7-master.tex"

# Exercise 1.8: the running example spread over its own floor, and the floor
# if every byte of every card could hold state.
$fleet memory --params 100e9 --gpus 32 --latex SolOneHFloor \
              --output "$out/01-ex8.tex"
show "$out/01-ex8.txt" "$fleet" memory --params 100e9 --usable 1 --gpus 32
quote_lines "$out/01-ex8.txt" \
    '^(usable per GPU|GPUs to hold|in whole nodes|fully sharded)'
$fleet memory --params 100e9 --usable 1 --latex SolOneHAll \
              --output "$out/01-ex8-all.tex"
