/* exercises/labs/zero-shards/zero_shards.h: the three functions of the
   ZeRO lab (Chapter 8), which zero_shards.c defines. */
#ifndef ZERO_SHARDS_H
#define ZERO_SHARDS_H

#include <stddef.h>

#include "fleet.h"

/* A piece of a rank's shard that lies within one tensor: contiguous in
   the shard and in the model's flat array (the book's ShardRun). */
typedef struct {
    int tensor;        /* which of the unit's tensors                     */
    size_t full;       /* where the piece starts in the flat array        */
    size_t unit_at;    /* ... in its unit, the tensors packed in order    */
    size_t shard;      /* ... in this rank's shard                        */
    size_t count;      /* how many numbers                                */
} ShardRun;

/* The chunk of a unit of `count` numbers that rank `rank` of `ranks`
   owns: [*begin, *end) in the packed unit. The chunks cover the unit in
   rank order and their sizes differ by at most one. */
void shard_chunk(size_t count, int ranks, int rank, size_t *begin,
                 size_t *end);

/* Cuts the chunk [begin, end) of a unit into runs, one per tensor that it
   touches, in tensor order. The unit packs `tensors` tensors in order;
   tensor t has count[t] numbers (possibly 0) and starts at at[t] in the
   flat array. The chunk starts at shard_at in this rank's shard. Writes
   the runs into runs (at most `tensors`) and returns how many. */
int shard_runs(int tensors, const size_t *at, const size_t *count,
               size_t begin, size_t end, size_t shard_at, ShardRun *runs);

/* What one of `ranks` data-parallel ranks holds of a model of `params`
   parameters under ZeRO stage `stage` (0: plain data parallelism),
   with the bytes per parameter of each kind in s: weights, gradients
   (s->gradients + s->master_gradients), optimizer state
   (s->master_weights + s->optimizer), their total, and the bytes each
   rank sends per step with one micro-batch (ring collectives). */
ShardedState zero_per_rank(double params, const StateBytes *s, int stage,
                           double ranks);
#endif
