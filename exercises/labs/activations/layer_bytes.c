/* exercises/labs/activations/layer_bytes.c: the lab of chapter 4, the
   bytes one layer keeps for its backward pass. Write the function below
   (the TODO); README.md in this folder sets out the task, and

       make lab LAB=activations

   grades it against the chapter's own code. As handed out, the file
   compiles, returns zero, and the grader says FAIL. */
#include "layer_bytes.h"

double layer_activation_bytes(const LayerActivations *a)
{
    /* TODO: s b h times the bytes per element of s b h that the layer
       keeps: 34 + 5as/h with no parallelism. Which part does tensor
       parallelism divide, which does sequence parallelism, what is left
       with selective or full recomputation or a fused attention kernel,
       and what does context parallelism split? */
    (void)a;
    return 0;
}
