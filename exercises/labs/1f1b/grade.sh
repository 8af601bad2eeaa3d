# exercises/labs/1f1b/grade.sh: the autograder of the lab of chapter 10, run by
# `make lab-1f1b` once it has built into DIR the order's checker (grade)
# and the trainer (minigpt-lab), both with the student's order_1f1b:
#
#     sh exercises/labs/1f1b/grade.sh DIR
#
# First the order: DIR/grade checks six properties of it on every stage of
# every pipeline of 1 to 8 stages and 1 to 16 micro-batches (grade.c says
# how). Then the gradients: the trainer runs the student's order on 2 and
# on 4 pipeline stages with --verify, which compares the loss, the
# gradients and one AdamW step with the reference's; a run that does not
# end in OK fails, and one that hangs is stopped after two minutes (the
# checker after one). A wrong order can leave a stage waiting for a message
# that is never sent, so the trainer runs only once the order passes. The
# last lines read `score: k/8` and `lab-1f1b: OK` or `lab-1f1b: FAIL`; the
# exit status is 0 only if all eight checks pass.
set -u
dir=$1
shape="--layers 4 --hidden 32 --heads 4 --seq 16 --vocab 24 --batch 8"
runs=2

timeout -k 5 60 "$dir/grade" > "$dir/order.txt" 2>&1
status=$?
cat "$dir/order.txt"
passed=$(sed -n 's/^order: \([0-9]*\)\/[0-9]*$/\1/p' "$dir/order.txt")
checks=$(sed -n 's/^order: [0-9]*\/\([0-9]*\)$/\1/p' "$dir/order.txt")
if [ -z "$passed" ]; then
    echo "  FAIL  the order's checker stopped with status $status" \
         "($([ $status = 124 ] && echo 'it hung' || echo 'a crash'))"
    passed=0 checks=6
fi
checks=$((checks + runs))

echo "lab-1f1b: training with this order, against the reference (--verify):"
for stages in 2 4; do
    flags="--pp $stages --schedule 1f1b --micro-batches $((2 * stages))"
    what="mpiexec -n $stages minigpt $flags --verify"
    if [ "$status" -ne 0 ]; then
        echo "  FAIL  $what"
        echo "          not run: the order fails its checks"
        continue
    fi
    # shellcheck disable=SC2086
    timeout -k 5 120 mpiexec -n "$stages" "$dir/minigpt-lab" $shape $flags \
        --verify > "$dir/verify-$stages.txt" 2>&1
    run=$?
    if [ $run -eq 0 ] && grep -q '^verify: .*: OK$' "$dir/verify-$stages.txt"
    then
        echo "  PASS  $what"
        passed=$((passed + 1))
    else
        echo "  FAIL  $what"
        if [ $run -eq 124 ]; then
            echo "          it hung, and was stopped after 120 s"
        else
            sed -n '$s/^/          /p' "$dir/verify-$stages.txt"
        fi
    fi
done
echo "score: $passed/$checks"
if [ "$passed" -eq "$checks" ]; then
    echo "lab-1f1b: OK"
    exit 0
fi
echo "lab-1f1b: FAIL"
exit 1
