/* exercises/labs/young-daly/young_daly.c: how often to checkpoint, and
   what it costs (Chapter 13). Replace each TODO; young_daly.h gives the
   contracts, README.md the lab. */
#include <math.h>

#include "young_daly.h"

double young_interval_s(double write_s, double mtbi_s)
{
    /* TODO: balance the writes, δ/τ, against the rework, τ/2M. */
    (void)write_s;
    (void)mtbi_s;
    return 0;
}

double daly_interval_s(double write_s, double mtbi_s)
{
    /* TODO: Daly's series, and M when δ >= 2M. */
    (void)write_s;
    (void)mtbi_s;
    return 0;
}

double expected_interval_s(double interval_s, double write_s,
                           double restart_s, double mtbi_s)
{
    /* TODO: E(τ) in Daly's model. */
    (void)interval_s;
    (void)write_s;
    (void)restart_s;
    (void)mtbi_s;
    return 0;
}

double fraction_lost(double interval_s, double write_s, double restart_s,
                     double mtbi_s)
{
    /* TODO: 1 - τ/E(τ). */
    (void)interval_s;
    (void)write_s;
    (void)restart_s;
    (void)mtbi_s;
    return 0;
}

double best_interval_s(double write_s, double mtbi_s)
{
    /* TODO: where f'(τ) = 0: a root to find, by bisection or Newton. */
    (void)write_s;
    (void)mtbi_s;
    return 0;
}
