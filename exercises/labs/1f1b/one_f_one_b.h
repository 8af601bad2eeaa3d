/* exercises/labs/1f1b/one_f_one_b.h: the contract of the lab of chapter 10,
   the order in which one stage of a pipeline runs its operations under the
   1F1B schedule. The chapter's pipeline_order (code/common/
   pipeline_schedule.c) computes the same order for SCHEDULE_1F1B; the lab
   puts yours in its place, in the autograder and in the trainer.

   A PipeOp names one operation: its kind (PIPE_FORWARD or PIPE_BACKWARD,
   the whole backward pass), its micro-batch (0 .. m - 1) and its chunk
   (always 0: a 1F1B stage holds one chunk of layers). start and end are
   the simulator's and the trainer's to fill; leave them 0. */
#ifndef ONE_F_ONE_B_H
#define ONE_F_ONE_B_H

#include "pipeline_schedule.h"

/* Stage r (0 .. p->stages - 1) of a pipeline of p->stages stages and
   p->micro_batches micro-batches m: write its 2m operations, in the order
   it runs them, to ops[0 .. 2m - 1]. */
void order_1f1b(const Pipeline *p, int r, PipeOp *ops);

#endif
