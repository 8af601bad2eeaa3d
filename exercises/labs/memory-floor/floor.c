/* exercises/labs/memory-floor/floor.c: the lab of chapter 1, the memory
   floor. Write the two functions below (the TODOs); README.md in this
   folder sets out the task, and

       make lab LAB=memory-floor

   grades them against the chapter's own code. As handed out, the file
   compiles, leaves every answer at zero, and the grader says FAIL. */
#include <math.h>

#include "floor.h"

double state_bytes_of(const StateBytes *s)
{
    /* TODO: the bytes of every kind of state one parameter keeps. */
    (void)s;
    return 0;
}

void floor_of(MemoryFloor *m)
{
    /* TODO: the static state, one node's memory, the state in nodes, the
       usable bytes of one GPU, the fewest GPUs that hold the state, and
       that count in whole nodes (a job that fits in one node takes only
       the GPUs it needs). Mind the rounding: 80e9 × 0.8 is not exactly
       64e9 in binary. */
    (void)m;
}
