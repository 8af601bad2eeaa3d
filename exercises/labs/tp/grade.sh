# exercises/labs/tp/grade.sh: runs the autograder of the lab of chapter 9,
# DIR/grade (grade.c), which `make lab LAB=tp` has built with the student's
# layers, on 4 ranks:
#
#     sh exercises/labs/tp/grade.sh DIR
#
# A run that hangs (a collective that only some ranks call) is stopped
# after two minutes. When the run stops before its score (a crash, or a
# hang), the checks it did not print fail, and the last lines still read
# `score: k/20` and `lab-tp: FAIL`. The exit status is 0 only if every
# check passes.
set -u
dir=$1
checks=20                                   # grade.c: 10 checks per t
timeout -k 5 120 mpiexec -n 4 "$dir/grade" > "$dir/grade.txt" 2>&1
status=$?
cat "$dir/grade.txt"
if grep -qE '^lab-tp: (OK|FAIL)$' "$dir/grade.txt"; then
    exit $status
fi
passed=$(grep -c '^  PASS  ' "$dir/grade.txt")
echo "  FAIL  the run stopped with status $status" \
     "($([ $status = 124 ] && echo 'it hung' || echo 'a crash'))"
echo "score: $passed/$checks"
echo "lab-tp: FAIL"
exit 1
