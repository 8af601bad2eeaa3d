/* exercises/labs/1f1b/lab_order.c: how the lab puts the student's 1F1B order
   in place of the chapter's. `make lab-1f1b` compiles the schedule module
   (code/common/pipeline_schedule.c) with its pipeline_order renamed
   chapter_pipeline_order, and links this pipeline_order instead: the 1F1B
   schedule comes from the student's order_1f1b, every other schedule from
   the chapter's. The autograder and the trainer both call pipeline_order,
   so both run the student's order. */
#include "one_f_one_b.h"

void chapter_pipeline_order(const Pipeline *p, int r, PipeOp *ops);

void pipeline_order(const Pipeline *p, int r, PipeOp *ops)
{
    if (p->schedule == SCHEDULE_1F1B)
        order_1f1b(p, r, ops);
    else
        chapter_pipeline_order(p, r, ops);
}
