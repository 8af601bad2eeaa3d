/* Tangled from chapters/03-step.nw; edit the chapter, not this file. */
#include "fleet.h"

double ring_steps(Collective c, double n)
{
    return (c == ALL_REDUCE ? 2 : 1) * (n - 1);
}

double ring_bytes_sent(Collective c, double bytes, double n)
{
    return ring_steps(c, n) / n * bytes;          /* 2(n-1)/n or (n-1)/n */
}
double collective_seconds(Collective c, double bytes, double n, const Link *l)
{
    if (n <= 1)
        return 0;
    return ring_steps(c, n) * l->latency
         + ring_bytes_sent(c, bytes, n) / l->bandwidth;
}
