/* Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file. */
#include <math.h>

#include "minigpt.h"

uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

float rng_uniform(Rng *r)
{
    return (float)(rng_next(r) >> 40) / 16777216.0f;     /* 24 random bits */
}

float rng_normal(Rng *r)
{
    float u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrtf(-2.0f * logf(1.0f - u1)) * cosf(6.2831853f * u2);
}

int rng_below(Rng *r, int n)
{
    return (int)(rng_next(r) % (uint64_t)n);
}
