/* exercises/labs/fleet-size/fleet_size.h: what the lab of chapter 2 asks
   for. Gpu is the chapter's part (code/fleet/fleet.h): peak_flops is its
   dense bf16 peak, per_node its GPUs per server. */
#ifndef LAB_FLEET_SIZE_H
#define LAB_FLEET_SIZE_H

#include "fleet.h"

/* FLOPs to train on `tokens` tokens a model whose tokens each pass through
   `active_params` parameters: 6 N D, plus the attention scores' 12 L s h D
   when layers, seq and hidden are given (all 0: left out). */
double flops_to_train(double active_params, double tokens, double layers,
                      double seq, double hidden);

/* Days the run of `flops` takes on `gpus` GPUs of part g at utilisation
   mfu (0..1) of their dense peak. */
double days_to_train(double flops, const Gpu *g, double mfu, double gpus);

/* GPU-hours the same run costs: on any number of GPUs. */
double gpu_hours_to_train(double flops, const Gpu *g, double mfu);

/* The fewest GPUs that finish the run in `days` days: a whole count. */
double gpus_for_days(double flops, const Gpu *g, double mfu, double days);

#endif
