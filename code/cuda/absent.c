/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include "device.h"

/* A build without nvcc or the CUDA libraries, and the double-precision
   twin: the flags are there, the backend is not. */
int device_run(const char *command, Settings *set, Option *options)
{
    (void)options;
    if (set->rank == 0)
        complain(command, "--device cuda: this build has no CUDA backend "
                 "(%s)", sizeof(real) == 8 ? "it is double precision"
                 : "no CUDA toolkit was found when it was built");
    return 2;
}
