/* exercises/labs/zero-shards/grade.c: the autograder of the ZeRO lab.

   shard_chunk is compared with the book's ring_chunks (code/comm/ring.c),
   which cuts every unit of minigpt's model into the ranks' chunks;
   zero_per_rank with the planner's shard_state (code/fleet/zero.c).
   The book's cut_into_runs is static and works on a whole model, so
   shard_runs is compared with the runs that a walk over the chunk, one
   number at a time, finds: every number of [begin, end), in order, in
   the tensor that holds it, a new run wherever the tensor changes. */
#include <stdio.h>
#include <stdlib.h>

#include "lab_check.h"
#include "ring.h"
#include "zero_shards.h"

enum { MOST_TENSORS = 16, SPARE_RUNS = 8 };

/* ---------------------------------------------------------- the chunks -- */
static void check_chunks(int ranks)
{
    static const size_t counts[] = { 0, 1, 2, 3, 5, 7, 8, 10, 64, 100, 101,
                                     999, 4096, 12345, 1000003, 123456789 };
    static int size[MAX_RANKS], offset[MAX_RANKS];
    char failed[200] = "";
    for (size_t i = 0; i < sizeof counts / sizeof counts[0] && !failed[0];
         i++) {
        ring_chunks(counts[i], ranks, size, offset);
        for (int r = 0; r < ranks && !failed[0]; r++) {
            size_t begin = 7, end = 3;
            shard_chunk(counts[i], ranks, r, &begin, &end);
            size_t want = (size_t)offset[r], want_end = want + (size_t)size[r];
            if (begin != want || end != want_end)
                snprintf(failed, sizeof failed, ": count %zu, rank %d: got "
                         "[%zu, %zu), want [%zu, %zu)", counts[i], r, begin,
                         end, want, want_end);
        }
    }
    lab_check(!failed[0], "shard_chunk over %d rank%s = ring_chunks for 16 "
              "unit sizes from 0 to 123456789%s", ranks, ranks == 1 ? "" : "s",
              failed);
}

/* ------------------------------------------------------------ the runs -- */
typedef struct {
    const char *name;
    int tensors;
    size_t count[MOST_TENSORS];       /* (tensors) numbers in each tensor */
} Unit;

/* The runs of [begin, end), one number at a time. Returns how many. */
static int walk_runs(const Unit *u, const size_t *at, size_t begin,
                     size_t end, size_t shard_at, ShardRun *runs)
{
    int n = 0, t = 0;
    size_t packed = 0;                  /* where tensor t starts */
    for (size_t x = begin; x < end; x++) {
        while (x >= packed + u->count[t])
            packed += u->count[t++];
        if (n > 0 && runs[n - 1].tensor == t)
            runs[n - 1].count++;
        else
            runs[n++] = (ShardRun){ t, at[t] + (x - packed), x,
                                    shard_at + (x - begin), 1 };
    }
    return n;
}

static int same_run(const ShardRun *a, const ShardRun *b)
{
    return a->tensor == b->tensor && a->full == b->full
        && a->unit_at == b->unit_at && a->shard == b->shard
        && a->count == b->count;
}

static void check_runs(const Unit *u)
{
    static const int ranks[] = { 1, 2, 3, 4, 5, 7, 8, 16, 64, 1000 };
    size_t at[MOST_TENSORS], total = 0;
    for (int t = 0; t < u->tensors; t++) {
        at[t] = 100000 * (size_t)t + 17 * (size_t)t + 3;  /* anywhere */
        total += u->count[t];
    }
    char failed[400] = "";
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0] && !failed[0];
         i++) {
        int size[MAX_RANKS], offset[MAX_RANKS];
        ring_chunks(total, ranks[i], size, offset);
        size_t shard_at = 0;
        for (int r = 0; r < ranks[i] && !failed[0]; r++) {
            size_t begin = (size_t)offset[r], end = begin + (size_t)size[r];
            shard_at = 1000 + 13 * (size_t)r;     /* after earlier units */
            ShardRun want[MOST_TENSORS], got[MOST_TENSORS + SPARE_RUNS];
            int n = walk_runs(u, at, begin, end, shard_at, want);
            for (int k = 0; k < MOST_TENSORS + SPARE_RUNS; k++)
                got[k] = (ShardRun){ -1, 0, 0, 0, 0 };
            int m = shard_runs(u->tensors, at, u->count, begin, end,
                               shard_at, got);
            int k = 0;
            while (k < n && k < m && same_run(&got[k], &want[k]))
                k++;
            if (m != n || k < n) {
                int used = snprintf(failed, sizeof failed, ": %d ranks, rank "
                                    "%d, chunk [%zu, %zu): %d runs, want %d",
                                    ranks[i], r, begin, end, m, n);
                if (k < n && k < m)
                    snprintf(failed + used, sizeof failed - (size_t)used,
                             "; run %d is (tensor %d, full %zu, unit_at %zu, "
                             "shard %zu, count %zu), want (%d, %zu, %zu, %zu, "
                             "%zu)", k, got[k].tensor, got[k].full,
                             got[k].unit_at, got[k].shard, got[k].count,
                             want[k].tensor, want[k].full, want[k].unit_at,
                             want[k].shard, want[k].count);
            }
        }
    }
    lab_check(!failed[0], "shard_runs: %s (%zu numbers in %d tensor%s), "
              "every rank of 1 to 1000%s", u->name, total, u->tensors,
              u->tensors == 1 ? "" : "s", failed);
}

/* ---------------------------------------------------- bytes and traffic -- */
static void check_bytes(int stage)
{
    static const StateBytes conventions[] = {
        { "mixed", "mixed-precision Adam, 16 B", 2, 2, 4, 0, 8 },
        { "accumulate", "with an fp32 accumulator, 18 B", 2, 2, 4, 2, 8 },
        { "fp32", "fp32 Adam, 16 B", 4, 4, 0, 0, 8 },
    };
    static const double params[] = { 1, 124e6, 7e9, 405e9 };
    static const double ranks[] = { 1, 2, 3, 8, 64, 1000, 16384 };
    char failed[300] = "";
    for (size_t c = 0; c < 3 && !failed[0]; c++)
        for (size_t p = 0; p < 4 && !failed[0]; p++)
            for (size_t n = 0; n < 7 && !failed[0]; n++) {
                MemoryFloor m = { .params = params[p] };
                ShardedState want = shard_state(&m, &conventions[c], stage,
                                                ranks[n]);
                ShardedState got = zero_per_rank(params[p], &conventions[c],
                                                 stage, ranks[n]);
                const char *names[] = { "weights", "gradients", "optimizer",
                                        "total", "traffic" };
                double g[] = { got.weights, got.gradients, got.optimizer,
                               got.total, got.traffic };
                double w[] = { want.weights, want.gradients, want.optimizer,
                               want.total, want.traffic };
                for (int k = 0; k < 5 && !failed[0]; k++)
                    if (!lab_close(g[k], w[k], 1e-12))
                        snprintf(failed, sizeof failed, ": %s, %g "
                                 "parameters, %g ranks: %s = %.17g B, want "
                                 "%.17g B", conventions[c].name, params[p],
                                 ranks[n], names[k], g[k], w[k]);
            }
    lab_check(!failed[0], "zero_per_rank, stage %d: weights, gradients, "
              "optimizer, total, traffic = shard_state for 3 conventions, "
              "4 models, 1 to 16384 ranks%s", stage, failed);
}

int main(void)
{
    static const int chunk_ranks[] = { 1, 2, 3, 4, 7, 8, 64, 1000 };
    for (size_t i = 0; i < sizeof chunk_ranks / sizeof chunk_ranks[0]; i++)
        check_chunks(chunk_ranks[i]);
    static const Unit units[] = {
        { "one tensor", 1, { 1000 } },
        { "a block of width 6", 12,
          { 6, 6, 108, 18, 36, 6, 6, 6, 144, 24, 144, 6 } },
        { "the embeddings: two tensors, then ten empty ones", 12,
          { 390, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
        { "empty tensors between and at both ends", 9,
          { 0, 5, 0, 0, 3, 1, 0, 7, 0 } },
        { "tensors of one number", 6, { 1, 1, 1, 1, 1, 1 } },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        check_runs(&units[i]);
    for (int stage = 0; stage <= 3; stage++)
        check_bytes(stage);
    return lab_finish("zero-shards");
}
