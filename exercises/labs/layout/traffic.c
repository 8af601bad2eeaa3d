/* exercises/labs/layout/traffic.c: the lab of chapter 5, each kind of
   traffic on the link that carries it. Write the function below (the
   TODO); README.md in this folder sets out the task, and

       make lab LAB=layout

   grades it against the chapter's own planner. As handed out, the file
   compiles, leaves every answer at zero, and the grader says FAIL. */
#include <math.h>

#include "traffic.h"

void place_traffic(const Layout *l, const Fleet *f, StepTraffic *out)
{
    /* TODO: the axes are nested tensor innermost, then pipeline, then
       data; an axis crosses the network as soon as its group does not fit
       in a node. Then the bytes of each axis per GPU per step on the
       heaviest stage (ceil(L / pp) layers): the tensor-parallel
       all-reduces of the activations, the pipeline's sends, and the
       data-parallel gathers and scatters of the stage's 16-bit weights
       (ZeRO-1 or FSDP). Last, the bytes on each link. */
    (void)l, (void)f;
    *out = (StepTraffic){ 0, 0, 0, 0, 0, 0, 0, 0 };
}
