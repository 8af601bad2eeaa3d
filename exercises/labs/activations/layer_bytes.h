/* exercises/labs/activations/layer_bytes.h: what the lab of chapter 4 asks
   for. LayerActivations, Recompute and Attention are the chapter's, from
   code/fleet/fleet.h. */
#ifndef LAB_LAYER_BYTES_H
#define LAB_LAYER_BYTES_H

#include "fleet.h"

/* Bytes of activations one transformer layer keeps on one GPU, for one
   micro-batch, for its backward pass: 16-bit activations, the chapter's
   count, with the tensor-parallel degree, sequence parallelism,
   recomputation, the kind of attention and the context-parallel degree
   (0 reads as 1) that `a` gives. */
double layer_activation_bytes(const LayerActivations *a);

#endif
