/* solutions/labs/young-daly/young_daly.c: the model solution of the
   checkpoint lab (Chapter 13). */
#include <math.h>

#include "young_daly.h"

double young_interval_s(double write_s, double mtbi_s)
{
    /* δ/τ + τ/2M is least where -δ/τ² + 1/2M = 0 */
    return sqrt(2 * write_s * mtbi_s);
}

double daly_interval_s(double write_s, double mtbi_s)
{
    if (write_s >= 2 * mtbi_s)
        return mtbi_s;
    double x = write_s / (2 * mtbi_s);
    return sqrt(2 * write_s * mtbi_s) * (1 + sqrt(x) / 3 + x / 9) - write_s;
}

double expected_interval_s(double interval_s, double write_s,
                           double restart_s, double mtbi_s)
{
    /* expm1: e^x - 1 without losing digits when x = (τ + δ)/M is small */
    return mtbi_s * exp(restart_s / mtbi_s)
                  * expm1((interval_s + write_s) / mtbi_s);
}

double fraction_lost(double interval_s, double write_s, double restart_s,
                     double mtbi_s)
{
    return 1 - interval_s / expected_interval_s(interval_s, write_s,
                                                restart_s, mtbi_s);
}

double best_interval_s(double write_s, double mtbi_s)
{
    /* f'(τ) = 0 where 1 - e^-(τ+δ)/M = τ/M: y = τ/M is the root in
       (0, 1) of g(y) = ln(1 - y) + y + δ/M, positive below it and
       negative above. R scales f and does not move it. Bisection. */
    double d = write_s / mtbi_s, below = 0, above = 1;
    for (int i = 0; i < 200 && above - below > 1e-16 * above; i++) {
        double y = (below + above) / 2;
        if (log1p(-y) + y + d > 0)
            below = y;
        else
            above = y;
    }
    return (below + above) / 2 * mtbi_s;
}
