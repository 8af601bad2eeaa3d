/* exercises/labs/step-time/ring_time.h: what the lab of chapter 3 asks
   for. Collective (ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER) is the
   chapter's, from code/fleet/fleet.h. */
#ifndef LAB_RING_TIME_H
#define LAB_RING_TIME_H

#include "fleet.h"

/* Bytes each of n ranks sends in collective c on a buffer of `bytes`
   bytes: on a ring, or (in_network = 1) where the switches add, when an
   all-reduce sends the buffer once. One rank sends nothing. */
double bytes_each_rank_sends(Collective c, double bytes, double n,
                             int in_network);

/* Seconds the same collective takes on a link of `bandwidth` bytes/s each
   way per rank that pays `latency` seconds a step: alpha-beta. */
double collective_time(Collective c, double bytes, double n, double latency,
                       double bandwidth, int in_network);

/* nccl-tests' algorithm bandwidth of a collective on `bytes` that took
   `seconds`, in bytes/s. */
double algorithm_bandwidth(double bytes, double seconds);

/* nccl-tests' bus bandwidth of collective c on n ranks, in bytes/s. */
double bus_bandwidth(Collective c, double bytes, double seconds, double n);

#endif
