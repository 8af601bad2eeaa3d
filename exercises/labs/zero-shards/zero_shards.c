/* exercises/labs/zero-shards/zero_shards.c: which numbers a rank owns
   under ZeRO, and what it holds and sends (Chapter 8). Replace each TODO;
   zero_shards.h gives the contracts, README.md the lab. */
#include "zero_shards.h"

void shard_chunk(size_t count, int ranks, int rank, size_t *begin,
                 size_t *end)
{
    /* TODO: rank's chunk of count numbers, as the ring cuts them. */
    (void)count;
    (void)ranks;
    (void)rank;
    *begin = *end = 0;
}

int shard_runs(int tensors, const size_t *at, const size_t *count,
               size_t begin, size_t end, size_t shard_at, ShardRun *runs)
{
    /* TODO: walk the tensors in packed order and keep the part of each
       that falls in [begin, end). */
    (void)tensors;
    (void)at;
    (void)count;
    (void)begin;
    (void)end;
    (void)shard_at;
    (void)runs;
    return 0;
}

ShardedState zero_per_rank(double params, const StateBytes *s, int stage,
                           double ranks)
{
    ShardedState z = { stage, ranks, 0, 0, 0, 0, 0 };
    /* TODO: the bytes of each kind, divided by ranks where the stage
       shards it; their total; the traffic of one step. */
    (void)params;
    (void)s;
    return z;
}
