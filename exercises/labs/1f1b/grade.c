/* exercises/labs/1f1b/grade.c: the first half of the autograder of the lab of
   chapter 10, the order of operations. It is built by `make lab-1f1b` with
   a student's order_1f1b, which it reaches as the trainer does, through
   pipeline_order with SCHEDULE_1F1B (lab_order.c), and run alone:

       grade

   For every pipeline of p = 1 .. MAX_STAGES stages and m = 1 ..
   MAX_MICRO_BATCHES micro-batches, and every stage r of it, it asks for
   the stage's operations and checks six properties of the 1F1B order:
   each of the 2m operations appears once; forwards and backwards each go
   in micro-batch order; every backward comes after its own forward; the
   warm-up runs min(p - r, m) forwards before the first backward (p - r - 1
   of warm-up and the steady phase's first); after it, backwards and
   forwards alternate until the forwards run out; and at most min(p - r, m)
   micro-batches are in flight at once. A stage whose operations are not
   each there once fails every check.

   It prints one line per check, PASS or FAIL with the first stage that
   fails it, the order of every stage of one pipeline (p = 4, m = 6) as the
   student's function wrote it, and `order: k/6`; the exit status is 0 only
   if every check passes. grade.sh then trains with the same order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "one_f_one_b.h"

enum { MAX_STAGES = 8, MAX_MICRO_BATCHES = 16, CHECKS = 6 };
enum { UNWRITTEN = -1 };                 /* a micro-batch no op can have */

static const char *names[CHECKS] = {
    "each of the 2m operations once",
    "forwards in order, backwards in order",
    "every backward after its forward",
    "warm-up: min(p - r, m) forwards first",
    "then one backward, one forward, ...",
    "at most min(p - r, m) in flight",
};

typedef struct {
    int failed;                          /* stages that fail the check   */
    char first[160];                     /* what the first one did wrong */
} Verdict;

static int smaller(int a, int b) { return a < b ? a : b; }

/* The kind of ops[i] as one letter, or '?' for anything else. */
static char letter(const PipeOp *o)
{
    return o->kind == PIPE_FORWARD ? 'F' : o->kind == PIPE_BACKWARD ? 'B'
                                                                    : '?';
}

/* Each of the m forwards and m backwards once, chunk 0, and nothing past
   ops[2m - 1]; why not into why. */
static int each_once(const PipeOp *ops, int m, char *why, size_t size)
{
    int *seen = calloc(2 * (size_t)m, sizeof *seen);
    int ok = 1;
    for (int i = 0; i < 2 * m && ok; i++) {
        const PipeOp *o = &ops[i];
        char k = letter(o);
        if (o->micro_batch == UNWRITTEN) {
            snprintf(why, size, "operation %d was not written "
                     "(left unwritten?)", i);
            ok = 0;
        } else if (k == '?' || o->micro_batch < 0 || o->micro_batch >= m
                   || o->chunk != 0) {
            snprintf(why, size, "operation %d is not a forward or a "
                     "backward of micro-batches 0 .. %d in chunk 0", i,
                     m - 1);
            ok = 0;
        } else if (seen[(k == 'B') * m + o->micro_batch]++) {
            snprintf(why, size, "%c%d appears twice", k, o->micro_batch);
            ok = 0;
        }
    }
    for (int i = 2 * m; i < 4 * m && ok; i++)
        if (ops[i].micro_batch != UNWRITTEN) {
            snprintf(why, size, "more than 2m = %d operations written",
                     2 * m);
            ok = 0;
        }
    free(seen);
    return ok;
}

/* Check `check` of stage r of (p, m); a failure is counted, and the first
   is described. */
static void verdict(Verdict *v, int ok, int p, int m, int r,
                    const char *why)
{
    if (ok)
        return;
    if (v->failed++ == 0)
        snprintf(v->first, sizeof v->first, "p = %d, m = %d, stage %d: %s",
                 p, m, r, why);
}

static void grade_stage(Verdict *v, const PipeOp *ops, int p, int m, int r)
{
    char why[128];
    int leading_want = smaller(p - r, m);
    if (!each_once(ops, m, why, sizeof why)) {
        verdict(&v[0], 0, p, m, r, why);
        for (int c = 1; c < CHECKS; c++)
            verdict(&v[c], 0, p, m, r, "the operations are not each once");
        return;
    }
    verdict(&v[0], 1, p, m, r, "");

    /* micro-batch order, and each backward after its forward */
    char why_after[128] = "";
    int next[2] = { 0, 0 }, order_ok = 1, after_ok = 1;
    int *forward_at = malloc(sizeof *forward_at * (size_t)m);
    for (int j = 0; j < m; j++)
        forward_at[j] = -1;
    for (int i = 0; i < 2 * m; i++) {
        int is_backward = ops[i].kind == PIPE_BACKWARD, j = ops[i].micro_batch;
        if (j != next[is_backward] && order_ok) {
            snprintf(why, sizeof why, "operation %d is %c%d, want %c%d", i,
                     letter(&ops[i]), j, letter(&ops[i]), next[is_backward]);
            order_ok = 0;
        }
        next[is_backward]++;
        if (!is_backward)
            forward_at[j] = i;
        else if (forward_at[j] < 0 && after_ok) {
            snprintf(why_after, sizeof why_after, "operation %d is B%d, "
                     "before F%d", i, j, j);
            after_ok = 0;
        }
    }
    free(forward_at);
    verdict(&v[1], order_ok, p, m, r, why);
    verdict(&v[2], after_ok, p, m, r, why_after);

    /* the warm-up */
    int leading = 0;
    while (leading < 2 * m && ops[leading].kind == PIPE_FORWARD)
        leading++;
    snprintf(why, sizeof why, "%d forward%s before the first backward, "
             "want %d", leading, leading == 1 ? "" : "s", leading_want);
    verdict(&v[3], leading == leading_want, p, m, r, why);

    /* after the warm-up: B, then F B while forwards are left, then B */
    int alternate = 1, forwards_left = m - leading;
    for (int i = leading; i < 2 * m && alternate; i++) {
        int k = i - leading;
        PipeOpKind want = k % 2 == 1 && (k + 1) / 2 <= forwards_left
                        ? PIPE_FORWARD : PIPE_BACKWARD;
        if (ops[i].kind != want) {
            snprintf(why, sizeof why, "operation %d is a %s, want a %s", i,
                     ops[i].kind == PIPE_FORWARD ? "forward" : "backward",
                     want == PIPE_FORWARD ? "forward" : "backward");
            alternate = 0;
        }
    }
    verdict(&v[4], alternate && leading == leading_want, p, m, r,
            alternate ? "the warm-up is wrong, so the rest is out of step"
                      : why);

    /* the peak in flight */
    int held = 0, peak = 0;
    for (int i = 0; i < 2 * m; i++) {
        held += ops[i].kind == PIPE_FORWARD ? 1 : -1;
        peak = held > peak ? held : peak;
    }
    snprintf(why, sizeof why, "%d micro-batches in flight, want at most %d",
             peak, leading_want);
    verdict(&v[5], peak <= leading_want, p, m, r, why);
}

/* Stage r's operations for (p, m) through pipeline_order, the unwritten
   ones marked; ops has room for 4m. */
static void order(PipeOp *ops, int p, int m, int r)
{
    for (int i = 0; i < 4 * m; i++)
        ops[i] = (PipeOp){ .kind = PIPE_FORWARD, .micro_batch = UNWRITTEN };
    Pipeline pipe = { .schedule = SCHEDULE_1F1B, .stages = p,
                      .micro_batches = m, .chunks = 1,
                      .backward_ratio = 2 };
    pipeline_order(&pipe, r, ops);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "grade: takes no arguments\n");
        return 2;
    }
    Verdict v[CHECKS];
    memset(v, 0, sizeof v);
    PipeOp *ops = malloc(sizeof *ops * 4 * MAX_MICRO_BATCHES);
    int stages = 0;
    for (int p = 1; p <= MAX_STAGES; p++)
        for (int m = 1; m <= MAX_MICRO_BATCHES; m++)
            for (int r = 0; r < p; r++, stages++) {
                order(ops, p, m, r);
                grade_stage(v, ops, p, m, r);
            }
    printf("lab-1f1b: the 1F1B order of every stage of p = 1 .. %d stages "
           "and\n  m = 1 .. %d micro-batches (%d stages)\n", MAX_STAGES,
           MAX_MICRO_BATCHES, stages);
    int passed = 0;
    for (int c = 0; c < CHECKS; c++) {
        passed += v[c].failed == 0;
        if (v[c].failed == 0)
            printf("  PASS  %-38s on all %d stages\n", names[c], stages);
        else
            printf("  FAIL  %-38s on %d stages; the first:\n"
                   "          %s\n", names[c], v[c].failed, v[c].first);
    }
    printf("the order as written, p = 4, m = 6:\n");
    for (int r = 0; r < 4; r++) {
        order(ops, 4, 6, r);
        printf("  stage %d:", r);
        for (int i = 0; i < 12; i++)
            if (ops[i].micro_batch == UNWRITTEN)
                printf(" --");
            else
                printf(" %c%d", letter(&ops[i]), ops[i].micro_batch);
        printf("\n");
    }
    printf("order: %d/%d\n", passed, CHECKS);
    free(ops);
    return passed == CHECKS ? 0 : 1;
}
