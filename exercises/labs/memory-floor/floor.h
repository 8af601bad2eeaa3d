/* exercises/labs/memory-floor/floor.h: what the lab of chapter 1 asks for.
   The types (StateBytes, Gpu, MemoryFloor) are the chapter's, from
   code/fleet/fleet.h; floor.c defines the two functions. */
#ifndef LAB_FLOOR_H
#define LAB_FLOOR_H

#include "fleet.h"

/* Bytes of state one parameter costs under the convention s: the sum of
   the bytes it keeps of each kind (16 for mixed-precision Adam). */
double state_bytes_of(const StateBytes *s);

/* Fills in the fields of m that follow from the given ones (params,
   bytes_per_param, gpu, usable): static_bytes, node_bytes, nodes_of_state,
   usable_bytes, gpus_min, nodes and gpus_whole_nodes, as the chapter
   defines them. Leaves the given fields alone. */
void floor_of(MemoryFloor *m);

#endif
