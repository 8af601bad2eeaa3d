/* Tangled from chapters/04-activations.nw; edit the chapter, not this file. */
#include "fleet.h"

double activation_bytes_per_layer(const LayerActivations *a)
{
    double cp = a->cp > 1 ? a->cp : 1;
    double sbh = a->seq / cp * a->micro_batch * a->hidden;
    double t = a->tp;
    double scores = 5 * a->heads * a->seq / (a->hidden * t);    /* 5as/(ht) */
    if (a->recompute == RECOMPUTE_FULL)                 /* the layer's input */
        return 2 * sbh / (a->sequence_parallel ? t : 1);
    if (a->recompute == RECOMPUTE_SELECTIVE)
        scores = 0;
    double per_sbh = a->sequence_parallel ? 34 / t              /* 34/t      */
                                          : 10 + 24 / t;        /* 10 + 24/t */
    return sbh * (per_sbh + scores);
}
