/* solutions/labs/layout/traffic.c: a model solution of the lab of
   chapter 5, each kind of traffic on the link that carries it
   (exercises/labs/layout). */
#include <math.h>

#include "traffic.h"

/* A group of `degree` ranks `stride` apart spans nodes once it is larger
   than one: tensor ranks are adjacent, pipeline ranks a tensor group
   apart, data ranks a whole pipeline apart. */
static int spans_nodes(double stride, double degree, double per_node)
{
    return degree > 1 && stride * degree > per_node;
}

/* What each of n ranks sends of a buffer in a ring all-gather (or
   reduce-scatter): (n-1)/n of it. */
static double ring_half(double bytes, double n)
{
    return (n - 1) / n * bytes;
}

void place_traffic(const Layout *l, const Fleet *f, StepTraffic *out)
{
    double t = l->tp, pp = l->pp, dp = l->dp, m = l->micro_batches;
    double layers = ceil(l->layers / pp);            /* heaviest stage */
    double activations = 2 * l->micro_batch * l->seq * l->hidden; /* B */
    out->tp_nic = spans_nodes(1, t, f->per_node);
    out->pp_nic = spans_nodes(t, pp, f->per_node);
    out->dp_nic = spans_nodes(t * pp, dp, f->per_node);

    /* four all-reduces a layer a micro-batch, six if the forward reruns */
    double all_reduces = (l->recompute == RECOMPUTE_FULL ? 6 : 4)
                       * layers * m;
    out->tp_bytes = all_reduces * 2 * ring_half(activations, t);

    /* an activation forward and a gradient back per micro-batch and
       chunk, each tensor rank its slice */
    out->pp_bytes = pp > 1 ? 2 * m * l->chunks * activations / t : 0;

    /* the stage's 16-bit weights, gathered one layer at a time: twice a
       step with ZeRO-1, three times a micro-batch with FSDP */
    double layer_weights = 2 * f->model_params / (t * pp) / layers;
    double gathers = l->zero >= 3 ? 3 * m : 2;
    out->dp_bytes = gathers * layers * ring_half(layer_weights, dp);

    out->nic_bytes = out->tp_nic * out->tp_bytes + out->pp_nic * out->pp_bytes
                   + out->dp_nic * out->dp_bytes;
    out->nvlink_bytes = out->tp_bytes + out->pp_bytes + out->dp_bytes
                      - out->nic_bytes;
}
