/* solutions/labs/activations/layer_bytes.c: a model solution of the lab of
   chapter 4, the bytes one layer keeps (exercises/labs/activations). */
#include "layer_bytes.h"

double layer_activation_bytes(const LayerActivations *a)
{
    double t = a->tp;
    double c = a->cp > 1 ? a->cp : 1;
    /* each GPU of a context-parallel group holds s/c of the tokens */
    double sbh = a->seq / c * a->micro_batch * a->hidden;
    if (a->recompute == RECOMPUTE_FULL)       /* only the layer's input */
        return a->sequence_parallel ? 2 * sbh / t : 2 * sbh;
    /* 10 sbh outside the split region, 24 sbh inside it; with sequence
       parallelism all 34 are split */
    double kept = a->sequence_parallel ? 34 / t : 10 + 24 / t;
    /* the s x s scores: its s/c queries against all s keys, split by t */
    int scores_kept = a->recompute == RECOMPUTE_NONE
                   && a->attention == ATTENTION_MATERIALIZED;
    double scores = scores_kept ? 5 * a->heads * a->seq / (a->hidden * t)
                                : 0;
    return sbh * (kept + scores);
}
