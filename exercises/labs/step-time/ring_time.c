/* exercises/labs/step-time/ring_time.c: the lab of chapter 3, what a
   collective costs. Write the four functions below (the TODOs);
   README.md in this folder sets out the task, and

       make lab LAB=step-time

   grades them against the chapter's own code. As handed out, the file
   compiles, returns zero everywhere, and the grader says FAIL. */
#include "ring_time.h"

double bytes_each_rank_sends(Collective c, double bytes, double n,
                             int in_network)
{
    /* TODO: (n-1)/n of the buffer for the halves, twice that for an
       all-reduce on a ring; the buffer once for an all-reduce the
       switches add; nothing on one rank. */
    (void)c, (void)bytes, (void)n, (void)in_network;
    return 0;
}

double collective_time(Collective c, double bytes, double n, double latency,
                       double bandwidth, int in_network)
{
    /* TODO: steps × latency + bytes sent ÷ bandwidth. How many steps has
       each collective on a ring, and an all-reduce in the network? */
    (void)c, (void)bytes, (void)n, (void)latency, (void)bandwidth;
    (void)in_network;
    return 0;
}

double algorithm_bandwidth(double bytes, double seconds)
{
    /* TODO */
    (void)bytes, (void)seconds;
    return 0;
}

double bus_bandwidth(Collective c, double bytes, double seconds, double n)
{
    /* TODO: the algorithm bandwidth times the factor that makes it the
       rate each rank's link carried on a ring. */
    (void)c, (void)bytes, (void)seconds, (void)n;
    return 0;
}
