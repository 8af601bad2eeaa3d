/* solutions/labs/router/router.c: the model solution of the router lab
   (Chapter 14). */
#include <math.h>
#include <stddef.h>

#include "router.h"

enum { MOST_EXPERTS = 64 };

void route_top_k(const float *scores, int n, int E, int k, int *expert,
                 float *gate, long *routed)
{
    for (int e = 0; e < E; e++)
        routed[e] = 0;
    for (int i = 0; i < n; i++) {
        const float *s = scores + (size_t)i * E;           /* (E) */
        float p[MOST_EXPERTS], max = s[0], sum = 0, chosen = 0;
        for (int e = 1; e < E; e++)
            max = s[e] > max ? s[e] : max;
        for (int e = 0; e < E; e++)           /* softmax, without overflow */
            sum += p[e] = expf(s[e] - max);
        for (int e = 0; e < E; e++)
            p[e] /= sum;
        int taken[MOST_EXPERTS] = { 0 };
        for (int j = 0; j < k; j++) {   /* the best not yet taken; on a tie
                                           the first, the lower number */
            int best = -1;
            for (int e = 0; e < E; e++)
                if (!taken[e] && (best < 0 || p[e] > p[best]))
                    best = e;
            taken[best] = 1;
            expert[(size_t)i * k + j] = best;
            gate[(size_t)i * k + j] = p[best];
            chosen += p[best];
            routed[best]++;
        }
        for (int j = 0; j < k; j++)
            gate[(size_t)i * k + j] /= chosen;
    }
}

long capacity_slots(int k, int tokens, int ranks, int E, double factor)
{
    double want = factor * ((double)k * tokens * ranks / E);
    double whole = floor(want + 0.5);
    return fabs(want - whole) <= 1e-9 * want ? (long)whole
                                             : (long)ceil(want);
}

void slots_before(const long *routed, int R, int E, int rank,
                  long *before)
{
    (void)R;
    for (int e = 0; e < E; e++) {
        before[e] = 0;
        for (int r = 0; r < rank; r++)
            before[e] += routed[(size_t)r * E + e];
    }
}

long keep_slots(const int *expert, int n, int k, int E, const long *before,
                long capacity, int *kept)
{
    long taken[MOST_EXPERTS], dropped = 0;
    for (int e = 0; e < E; e++)
        taken[e] = before[e];
    for (int slot = 0; slot < n * k; slot++) {
        kept[slot] = taken[expert[slot]]++ < capacity;
        dropped += !kept[slot];
    }
    return dropped;
}
