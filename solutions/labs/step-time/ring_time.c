/* solutions/labs/step-time/ring_time.c: a model solution of the lab of
   chapter 3, what a collective costs (exercises/labs/step-time). */
#include "ring_time.h"

/* Steps of a ring: n - 1 for each half, 2(n - 1) for an all-reduce. */
static double steps_on_ring(Collective c, double n)
{
    return (c == ALL_REDUCE ? 2 : 1) * (n - 1);
}

/* Where switches add, an all-reduce is one send up and one receive down. */
static double steps(Collective c, double n, int in_network)
{
    if (n <= 1)
        return 0;
    return in_network && c == ALL_REDUCE ? 2 : steps_on_ring(c, n);
}

double bytes_each_rank_sends(Collective c, double bytes, double n,
                             int in_network)
{
    if (n <= 1)
        return 0;
    if (in_network && c == ALL_REDUCE)
        return bytes;
    return steps_on_ring(c, n) / n * bytes;      /* a chunk S/n a step */
}

double collective_time(Collective c, double bytes, double n, double latency,
                       double bandwidth, int in_network)
{
    return steps(c, n, in_network) * latency
         + bytes_each_rank_sends(c, bytes, n, in_network) / bandwidth;
}

double algorithm_bandwidth(double bytes, double seconds)
{
    return bytes / seconds;
}

double bus_bandwidth(Collective c, double bytes, double seconds, double n)
{
    /* 2(n-1)/n or (n-1)/n: what a ring makes each link carry, whatever
       the collective was actually run on */
    return algorithm_bandwidth(bytes, seconds) * steps_on_ring(c, n) / n;
}
