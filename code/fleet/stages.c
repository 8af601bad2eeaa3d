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
