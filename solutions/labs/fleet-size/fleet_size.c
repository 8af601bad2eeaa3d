/* solutions/labs/fleet-size/fleet_size.c: a model solution of the lab of
   chapter 2, the fleet a deadline demands (exercises/labs/fleet-size). */
#include <math.h>

#include "fleet_size.h"

enum { SECONDS_A_DAY = 86400, SECONDS_AN_HOUR = 3600 };

double flops_to_train(double active_params, double tokens, double layers,
                      double seq, double hidden)
{
    double dense = 6 * active_params * tokens;      /* 2 forward, 4 back */
    double scores = 12 * layers * seq * hidden * tokens;   /* QK^T, PV */
    return dense + scores;
}

/* Useful FLOP/s of n GPUs of part g at utilisation mfu. */
static double useful_rate(const Gpu *g, double mfu, double n)
{
    return n * g->peak_flops * mfu;
}

double days_to_train(double flops, const Gpu *g, double mfu, double gpus)
{
    return flops / useful_rate(g, mfu, gpus) / SECONDS_A_DAY;
}

double gpu_hours_to_train(double flops, const Gpu *g, double mfu)
{
    /* n GPUs for flops / (n X u) seconds: n cancels */
    return flops / useful_rate(g, mfu, 1) / SECONDS_AN_HOUR;
}

double gpus_for_days(double flops, const Gpu *g, double mfu, double days)
{
    double one_gpu = useful_rate(g, mfu, 1) * days * SECONDS_A_DAY;
    double gpus = flops / one_gpu;
    double whole = round(gpus);              /* 10 on paper, 10.000...02 */
    return fabs(gpus - whole) <= 1e-12 * gpus ? whole : ceil(gpus);
}
