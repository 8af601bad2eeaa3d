/* solutions/labs/zero-shards/zero_shards.c: the model solution of the
   ZeRO lab (Chapter 8). */
#include "zero_shards.h"

void shard_chunk(size_t count, int ranks, int rank, size_t *begin,
                 size_t *end)
{
    /* rounding count · r / N down: the sizes differ by at most one */
    *begin = count * (size_t)rank / (size_t)ranks;
    *end = count * (size_t)(rank + 1) / (size_t)ranks;
}

int shard_runs(int tensors, const size_t *at, const size_t *count,
               size_t begin, size_t end, size_t shard_at, ShardRun *runs)
{
    int n = 0;
    size_t packed = 0;                 /* where tensor t starts in the unit */
    for (int t = 0; t < tensors; t++) {
        size_t lo = packed > begin ? packed : begin;
        size_t hi = packed + count[t] < end ? packed + count[t] : end;
        if (lo < hi)
            runs[n++] = (ShardRun){ t, at[t] + (lo - packed), lo,
                                    shard_at + (lo - begin), hi - lo };
        packed += count[t];
    }
    return n;
}

ShardedState zero_per_rank(double params, const StateBytes *s, int stage,
                           double ranks)
{
    ShardedState z = { stage, ranks, 0, 0, 0, 0, 0 };
    z.weights = params * s->weights / (stage >= 3 ? ranks : 1);
    z.gradients = params * (s->gradients + s->master_gradients)
                / (stage >= 2 ? ranks : 1);
    z.optimizer = params * (s->master_weights + s->optimizer)
                / (stage >= 1 ? ranks : 1);
    z.total = z.weights + z.gradients + z.optimizer;
    /* a ring all-gather or reduce-scatter of B bytes sends B (N-1)/N;
       an all-reduce is one of each; stage 3 gathers twice */
    double once = params * s->weights * (ranks - 1) / ranks;
    z.traffic = (stage == 3 ? 3 : 2) * once;
    return z;
}
