/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#ifndef DEVICE_H
#define DEVICE_H

#include "../minigpt/trainer.h"

/* --device cuda: train, or with --verify check one step against the CPU
   reference, on the GPU; 0, 1 when the check fails, 2 when it cannot. */
int device_run(const char *command, Settings *set, Option *options);
#endif
