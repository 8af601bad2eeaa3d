/* exercises/labs/layout/traffic.h: what the lab of chapter 5 asks for.
   Layout and Fleet are the chapter's, from code/fleet/fleet.h; the lab
   uses its tensor, pipeline and data axes (cp is 1). */
#ifndef LAB_TRAFFIC_H
#define LAB_TRAFFIC_H

#include "fleet.h"

/* Where each axis's traffic goes and how much there is, per GPU per step. */
typedef struct {
    int tp_nic, pp_nic, dp_nic;          /* 1: the axis's group spans nodes */
    double tp_bytes, pp_bytes, dp_bytes; /* bytes each GPU sends a step    */
    double nic_bytes, nvlink_bytes;      /* the same, by the link it takes */
} StepTraffic;

/* Fills in *out for layout l (its tp, pp, dp, zero, recompute, chunks,
   micro_batches, micro_batch and shape) on fleet f (its per_node and
   model_params), as the chapter's planner counts them. */
void place_traffic(const Layout *l, const Fleet *f, StepTraffic *out);

#endif
