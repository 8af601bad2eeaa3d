# exercises/labs/attention/grade.sh: the autograder of the lab of chapter
# 6, run by `make lab LAB=attention` once it has built DIR/minigpt-lab, the
# double-precision trainer with the student's attention_backward:
#
#     sh exercises/labs/attention/grade.sh DIR
#
# The trainer's gradient check compares, on a tiny model, each of the
# seventeen parameter tensors' analytic gradient with central finite
# differences at eight entries. Each tensor is one check: it passes when
# its largest relative error is within the check's tolerance. The last
# lines read `score: k/17` and `lab-attention: OK` or `lab-attention:
# FAIL`; the exit status is 0 only if every check passes.
set -u
dir=$1
timeout -k 5 120 "$dir/minigpt-lab" --gradcheck --layers 2 --hidden 16 \
    --heads 2 --seq 8 --batch 2 --vocab 16 > "$dir/gradcheck.txt" 2>&1
status=$?
cat "$dir/gradcheck.txt"
tolerance=$(sed -n 's/^largest relative error .*(tolerance \([^)]*\)).*/\1/p' \
                "$dir/gradcheck.txt")
if [ -z "$tolerance" ]; then
    echo "  FAIL  the gradient check stopped with status $status" \
         "($([ $status = 124 ] && echo 'it hung' || echo 'a crash'))"
    echo "score: 0/17"
    echo "lab-attention: FAIL"
    exit 1
fi
echo "lab-attention: each tensor's gradient against finite differences:"
# The table's rows: a tensor, its largest |gradient|, its largest error.
awk -v tolerance="$tolerance" '
    /^tensor / { table = 1; next }
    table && NF == 3 {
        ok = ($3 + 0 <= tolerance + 0 && $3 !~ /nan|inf/)
        printf "  %s  %-9s largest relative error %s (tolerance %s)\n",
               ok ? "PASS" : "FAIL", $1, $3, tolerance
        passed += ok; checks++
    }
    table && NF == 0 { table = 0 }
    END {
        ok = checks > 0 && passed == checks
        printf "score: %d/%d\nlab-attention: %s\n", passed, checks,
               (ok ? "OK" : "FAIL")
        exit !ok
    }' "$dir/gradcheck.txt"
