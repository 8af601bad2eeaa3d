# exercises/labs/ring/grade.sh: the autograder of the lab of chapter 7, run
# by `make lab LAB=ring` once it has built DIR/allreduce-lab, the chapter's
# benchmark with the student's ring.c:
#
#     sh exercises/labs/ring/grade.sh DIR
#
# On 1, 2, 3 and 4 ranks it runs the benchmark with --check on every size
# from 8 bytes to 16 KiB: it times nothing (only correctness is graded, and
# three or four ranks on fewer cores would time the scheduler), and compares
# every element of the ring's all-reduce, reduce-scatter and all-gather
# with the exact sum, counting those that differ in the column `wrong`. A
# check is one collective of the ring on one number of ranks: it passes
# when no element of any size is wrong. A run that crashes fails its three
# checks; one that hangs is stopped after a minute. The full tables are in
# DIR/ranks-N.txt. The last lines read `score: k/12` and `lab-ring: OK` or
# `lab-ring: FAIL`; the exit status is 0 only if every check passes.
set -u
dir=$1
passed=0 checks=0
echo "lab-ring: the ring's collectives, every element checked:"
for n in 1 2 3 4; do
    timeout -k 5 60 mpiexec -n $n "$dir/allreduce-lab" --max-bytes 16384 \
        --check > "$dir/ranks-$n.txt" 2>&1
    status=$?
    for op in allreduce reduce_scatter all_gather; do
        checks=$((checks + 1))
        # The ring's `wrong` column (the 7th) of this collective's table,
        # summed over its sizes; empty when the table is not there.
        wrong=$(awk -v op="$op" '
            /^# [a-z_]+ +ring/ { table = ($2 == op); next }
            /^#/ { next }
            table && NF >= 7 { rows++; sum += $7 }
            END { if (rows) print sum }' "$dir/ranks-$n.txt")
        what=$(printf '%-14s on %d rank%s' "$op" $n "$([ $n = 1 ] || echo s)")
        if [ -z "$wrong" ]; then
            echo "  FAIL  $what: the run stopped with status $status" \
                 "($([ $status = 124 ] && echo 'it hung' || echo 'a crash'))"
        elif [ "$wrong" -eq 0 ]; then
            echo "  PASS  $what: every element right, 8 B to 16 KiB"
            passed=$((passed + 1))
        else
            echo "  FAIL  $what: $wrong wrong elements, 8 B to 16 KiB"
        fi
    done
done
echo "score: $passed/$checks"
if [ "$passed" -eq "$checks" ]; then
    echo "lab-ring: OK"
    exit 0
fi
echo "lab-ring: FAIL"
exit 1
