/* exercises/labs/fleet-size/fleet_size.c: the lab of chapter 2, the fleet
   a deadline demands. Write the four functions below (the TODOs);
   README.md in this folder sets out the task, and

       make lab LAB=fleet-size

   grades them against the chapter's own code. As handed out, the file
   compiles, returns zero everywhere, and the grader says FAIL. */
#include <math.h>

#include "fleet_size.h"

double flops_to_train(double active_params, double tokens, double layers,
                      double seq, double hidden)
{
    /* TODO: six FLOPs per parameter per token, and the attention scores'
       FLOPs per token over all layers, forward and backward. */
    (void)active_params, (void)tokens, (void)layers, (void)seq,
    (void)hidden;
    return 0;
}

double days_to_train(double flops, const Gpu *g, double mfu, double gpus)
{
    /* TODO: the fleet's useful FLOP/s, then seconds, then days. */
    (void)flops, (void)g, (void)mfu, (void)gpus;
    return 0;
}

double gpu_hours_to_train(double flops, const Gpu *g, double mfu)
{
    /* TODO: GPUs × hours; why does it not depend on the fleet? */
    (void)flops, (void)g, (void)mfu;
    return 0;
}

double gpus_for_days(double flops, const Gpu *g, double mfu, double days)
{
    /* TODO: what one GPU does in the time allowed, then a whole count of
       GPUs; a quotient that is whole on paper may be a few units in the
       last place above it in binary. */
    (void)flops, (void)g, (void)mfu, (void)days;
    return 0;
}
