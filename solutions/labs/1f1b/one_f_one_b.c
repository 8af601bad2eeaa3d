/* solutions/labs/1f1b/one_f_one_b.c: a solution of the lab of chapter 10 (the
   1F1B order of one pipeline stage's operations); exercises/labs/1f1b/ holds
   the task. `make lab LAB=1f1b WORK=solutions/labs/1f1b` grades it. */
#include "one_f_one_b.h"

/* The operation of the given kind on micro-batch j (chunk 0). */
static PipeOp op(PipeOpKind kind, int j)
{
    return (PipeOp){ .kind = kind, .micro_batch = j, .chunk = 0 };
}

void order_1f1b(const Pipeline *p, int r, PipeOp *ops)
{
    int m = p->micro_batches;
    int n = 0;                  /* operations written to ops             */
    int f = 0, b = 0;           /* the next forward's and backward's
                                   micro-batch                           */

    /* The stages after r, p - r - 1 of them, each run one forward before
       micro-batch 0's backward can start on the last stage and come back:
       that many forwards fill the wait. */
    int warmup = p->stages - r - 1 < m ? p->stages - r - 1 : m;

    while (f < warmup)
        ops[n++] = op(PIPE_FORWARD, f++);
    while (f < m) {                              /* one forward, one back */
        ops[n++] = op(PIPE_FORWARD, f++);
        ops[n++] = op(PIPE_BACKWARD, b++);
    }
    while (b < m)                                            /* the drain */
        ops[n++] = op(PIPE_BACKWARD, b++);
}
