/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#include <stdlib.h>

#include "cli.h"

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double quantile(const double *sorted, int n, double q)
{
    double at = q * (n - 1);
    int i = (int)at;
    return i + 1 < n ? sorted[i] + (at - i) * (sorted[i + 1] - sorted[i])
                     : sorted[n - 1];
}

double median_in_place(double *x, int n)
{
    if (n <= 0)
        return 0;
    qsort(x, (size_t)n, sizeof *x, ascending);
    return quantile(x, n, 0.5);
}
