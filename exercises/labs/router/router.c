/* exercises/labs/router/router.c: top-k routing, and which slots a full
   expert drops (Chapter 14). Replace each TODO; router.h gives the
   contracts, README.md the lab. */
#include <math.h>

#include "router.h"

void route_top_k(const float *scores, int n, int E, int k, int *expert,
                 float *gate, long *routed)
{
    /* TODO: each token's probabilities, its k best experts and their
       gates; the slots per expert. */
    (void)scores;
    (void)n;
    (void)k;
    (void)expert;
    (void)gate;
    for (int e = 0; e < E; e++)
        routed[e] = 0;
}

long capacity_slots(int k, int tokens, int ranks, int E, double factor)
{
    /* TODO: F k N R / E, rounded up, but for the error of rounding. */
    (void)k;
    (void)tokens;
    (void)ranks;
    (void)E;
    (void)factor;
    return 0;
}

void slots_before(const long *routed, int R, int E, int rank,
                  long *before)
{
    /* TODO: what MPI_Exscan would give rank `rank`. */
    (void)routed;
    (void)R;
    (void)rank;
    for (int e = 0; e < E; e++)
        before[e] = 0;
}

long keep_slots(const int *expert, int n, int k, int E, const long *before,
                long capacity, int *kept)
{
    /* TODO: take the slots in order; an expert keeps the first
       `capacity` that reach it. */
    (void)expert;
    (void)E;
    (void)before;
    (void)capacity;
    for (int slot = 0; slot < n * k; slot++)
        kept[slot] = 0;
    return 0;
}
