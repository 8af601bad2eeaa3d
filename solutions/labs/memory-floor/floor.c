/* solutions/labs/memory-floor/floor.c: a model solution of the lab of
   chapter 1, the memory floor (exercises/labs/memory-floor). */
#include <math.h>

#include "floor.h"

double state_bytes_of(const StateBytes *s)
{
    return s->weights + s->gradients + s->master_weights
         + s->master_gradients + s->optimizer;
}

/* x rounded up to a whole count, where x a few ulps above a whole number
   is that number: 1.6e12 / (80e9 × 0.8) must give 25, not 26. */
static double round_up_count(double x)
{
    double nearest = round(x);
    return fabs(x - nearest) <= 1e-12 * fabs(x) ? nearest : ceil(x);
}

void floor_of(MemoryFloor *m)
{
    const Gpu *g = m->gpu;
    m->static_bytes = m->params * m->bytes_per_param;
    m->node_bytes = g->per_node * g->memory_bytes;
    m->nodes_of_state = m->static_bytes / m->node_bytes;
    m->usable_bytes = g->memory_bytes * m->usable;
    m->gpus_min = round_up_count(m->static_bytes / m->usable_bytes);
    m->nodes = round_up_count(m->gpus_min / g->per_node);
    /* inside one node a job takes the GPUs it needs; beyond, whole nodes */
    m->gpus_whole_nodes = m->gpus_min <= g->per_node ? m->gpus_min
                                                     : m->nodes * g->per_node;
}
