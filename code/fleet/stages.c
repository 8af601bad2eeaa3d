/* Tangled from chapters/04-activations.nw; edit the chapter, not this file. */
#include <math.h>

#include "fleet.h"

double layers_on_stage(double layers, double p, double r)
{
    double most = ceil(layers / p);
    double short_by = most * p - layers;         /* layers the ends give up */
    /* Order the stages from the ends inwards: 0, p-1, 1, p-2, ... */
    double from_end = fmin(r, p - 1 - r);
    double rank = 2 * from_end + (r > p - 1 - r ? 1 : 0);
    return most - (rank < short_by ? 1 : 0);
}
double micro_batches_in_flight(Schedule s, double p, double m, double v,
                               double r)
{
    if (p <= 1)                  /* no pipeline: one micro-batch at a time */
        return fmin(1, m);
    if (s == SCHEDULE_GPIPE)     /* every forward before any backward */
        return m;
    if (s == SCHEDULE_1F1B)      /* p - r - 1 warm-up forwards, + 1 */
        return fmin(p - r, m);
    if (s == SCHEDULE_ZB_H1)     /* 1F1B's, each held until its W */
        return fmin(p, m);
    /* interleaved: Megatron's warm-up of 2(p - r - 1) + (v - 1)p chunks, + 1,
       at most every chunk of every micro-batch; a chunk is 1/v of the stage */
    v = fmax(v, 1);
    double chunks = fmin(2 * (p - r - 1) + (v - 1) * p + 1, m * v);
    return chunks / v;                       /* stage 0: p (1 + (p-1)/(p v)) */
}
double params_per_layer(const Layout *l)
{
    double h = l->hidden;
    double kv = l->kv_heads > 0 ? l->kv_heads : l->heads;
    double h_kv = h * kv / l->heads;                 /* width of K and of V */
    double ffn = l->ffn > 0 ? l->ffn : 4 * h;
    return 2 * h * h + 2 * h * h_kv + (l->gated ? 3 : 2) * h * ffn;
}
/* Micro-batches' fp32 logits the last stage keeps at once, counting the
   gradient as one: GPipe keeps every micro-batch's until the backward
   passes, the other schedules run each backward pass right after its loss. */
static double logits_kept(const Layout *l)
{
    return l->pp > 1 && l->schedule == SCHEDULE_GPIPE ? l->micro_batches + 1
                                                      : 2;
}

GpuMemory gpu_memory_of_stage(const Layout *l, double r)
{
    double p = l->pp > 1 ? l->pp : 1, t = l->tp > 1 ? l->tp : 1;
    double cp = l->cp > 1 ? l->cp : 1, dp = l->dp > 1 ? l->dp : 1;
    double layers = layers_on_stage(l->layers, p, r);
    double vh = l->vocab * l->hidden;                /* embedding, and head */
    double shape = l->layers * params_per_layer(l) + 2 * vh;
    double scale = l->params > 0 ? l->params / shape : 1;   /* to --params */
    double per_layer = params_per_layer(l) * scale;
    vh *= scale;
    double params = layers * per_layer + (r == 0 ? vh : 0)
                  + (r == p - 1 ? vh : 0);
    MemoryFloor stage = { .params = params / t };
    GpuMemory g = { .heaviest_stage = (int)r, .stage_layers = layers,
                    .stage_params = params };
    g.state = shard_state(&stage, l->state, l->zero, dp * cp).total;

    LayerActivations a = { .seq = l->seq, .micro_batch = l->micro_batch,
                           .hidden = l->hidden, .heads = l->heads, .tp = t,
                           .sequence_parallel = l->sequence_parallel,
                           .recompute = l->recompute,
                           .attention = l->attention, .cp = cp };
    LayerActivations whole = a;
    whole.recompute = RECOMPUTE_NONE;
    double kept = activation_bytes_per_layer(&a);
    g.in_flight = micro_batches_in_flight(l->schedule, p, l->micro_batches,
                                          l->chunks, r);
    g.recomputing = activation_bytes_per_layer(&whole) - kept;
    g.activations = kept * layers * g.in_flight + g.recomputing;
    if (l->zero >= 3)       /* the unit computing and the one prefetched */
        g.gathered = 2 * per_layer * 2 / t;
    if (r == p - 1)         /* fp32 logits and their gradient, vocab split by t */
        g.logits = logits_kept(l) * 4 * l->micro_batch * l->seq / cp
                 * l->vocab / t;
    g.buffers = l->library_bytes > 0 ? l->library_bytes : LIBRARY_BYTES_DEFAULT;
    if (l->zero >= 2)       /* one unit's 16-bit gradients, to reduce-scatter */
        g.buffers += per_layer * 2 / t;
    g.context = l->context_bytes > 0 ? l->context_bytes : CONTEXT_BYTES_DEFAULT;
    double held = g.state + g.activations + g.gathered + g.logits + g.buffers;
    g.fragmentation = held * (l->fragmentation > 0 ? l->fragmentation
                                                   : FRAGMENTATION_DEFAULT);
    g.total = held + g.fragmentation + g.context;
    return g;
}
GpuMemory gpu_memory(const Layout *l)
{
    GpuMemory heaviest = gpu_memory_of_stage(l, 0);
    for (double r = 1; r < l->pp; r++) {
        GpuMemory g = gpu_memory_of_stage(l, r);
        if (g.total > heaviest.total)
            heaviest = g;
    }
    return heaviest;
}
