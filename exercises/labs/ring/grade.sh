# exercises/labs/ring/grade.sh: the autograder of the lab of chapter 7, run
# by `make lab LAB=ring` once it has built DIR/allreduce-lab, the chapter's
# benchmark with the student's ring.c:
#
#     sh exercises/labs/ring/grade.sh DIR
#
# On 1, 2, 3 and 4 ranks it runs the benchmark on every size from 8 bytes
# to 16 KiB, one short timed batch each (only correctness is graded). Before
# it times anything, the benchmark compares every element of the ring's
# all-reduce, reduce-scatter and all-gather with the exact sum and counts
# those that differ in the column `wrong`. A check is one collective of the
# ring on one number of ranks: it passes when no element of any size is
# wrong. A run that crashes fails its three checks; one that hangs is
# stopped after a minute. The benchmark measures this machine's memory
# (for its tables' ceilings) on one rank; the runs of 2 to 4 ranks read
# that measurement from DIR/machine.json instead of repeating it while
# their other ranks wait. The full tables are in DIR/ranks-N.txt. The last
# lines read `score: k/12` and `lab-ring: OK` or `lab-ring: FAIL`; the exit
# status is 0 only if every check passes.
set -u
dir=$1
passed=0 checks=0
echo "lab-ring: the ring's collectives, every element checked:"
machine=
for n in 1 2 3 4; do
    # shellcheck disable=SC2086
    timeout -k 5 60 mpiexec -n $n "$dir/allreduce-lab" --max-bytes 16384 \
        --repeats 1 --seconds 0.001 --warmup 1 $machine \
        > "$dir/ranks-$n.txt" 2>&1
    status=$?
    if [ $n = 1 ]; then
        # "# memory copy C GB/s on one core (memcpy); fresh pages first
        # touched at T GB/s", as a machine file of those two figures
        awk '/^# memory copy .* first touched at / {
                printf "{\"complete\": true, \"memcpy_bytes_per_second\": "
                printf "%se9, \"first_touch_bytes_per_second\": %se9}\n",
                       $4, $(NF - 1)
            }' "$dir/ranks-1.txt" > "$dir/machine.json"
        [ -s "$dir/machine.json" ] && machine="--machine $dir/machine.json"
    fi
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
