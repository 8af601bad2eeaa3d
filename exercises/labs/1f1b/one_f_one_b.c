/* exercises/labs/1f1b/one_f_one_b.c: the lab of chapter 10, the 1F1B order of
   one pipeline stage's operations. one_f_one_b.h in this folder states the
   contract; README.md sets out the task.

   Grade your copy (labs/1f1b/) from the repository root:

       make lab LAB=1f1b

   which checks the order on every stage of pipelines of 1 to 8 stages and
   1 to 16 micro-batches, then trains with it: `minigpt --pp 2` and
   `--pp 4 --schedule 1f1b --verify`, whose gradients must match the
   reference's. As handed out the file compiles, writes no operation, and
   the autograder fails every check.

   Stage r of p runs m forwards and m backwards, one micro-batch each, in
   three phases:
     warm-up  forwards only, as many as can run before the first backward
              can come back from the stages after this one;
     steady   one forward, then one backward, while forwards are left;
     drain    the backwards that are left.
   Micro-batches go forward in order 0, 1, ..., m - 1 and come back in the
   same order: first in, first out. */
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

    /* TODO 1: the warm-up. Micro-batch 0's backward reaches stage r only
       after its forward has gone through every stage after r and its
       gradient has come back. How many forwards can stage r run before
       that? Never more than m. */
    int warmup = 0;

    /* TODO 2: the warm-up's forwards: ops[n++] = op(PIPE_FORWARD, f++). */

    /* TODO 3: the steady phase: while forwards are left, one forward, then
       one backward. */

    /* TODO 4: the drain: the backwards that are left. */
    (void)m; (void)n; (void)f; (void)b;           /* delete when done */
    (void)warmup; (void)op; (void)ops; (void)r;
}
