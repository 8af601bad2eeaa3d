/* Tangled from chapters/08-sharded-state.nw; edit the chapter, not this file. */
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"
#include "../comm/ring.h"

static void cut_into_runs(DataParallel *dp)
{
    Model *m = dp->model;
    int size[MAX_RANKS], offset[MAX_RANKS];
    dp->shard_count = dp->largest_unit = 0;
    int n_runs = 0;
    for (int i = 0; i < dp->units; i++) {
        size_t at[PARAM_TENSORS], count[PARAM_TENSORS], packed = 0;
        unit_layout(m, i - 1, at, count);
        dp->unit_count[i] = unit_size(m, i - 1);
        if (dp->unit_count[i] > dp->largest_unit)
            dp->largest_unit = dp->unit_count[i];
        ring_chunks(dp->unit_count[i], dp->ranks, size, offset);
        size_t begin = (size_t)offset[dp->rank];
        size_t end = begin + (size_t)size[dp->rank];
        dp->chunk_at[i] = begin;
        dp->shard_at[i] = dp->shard_count;
        dp->unit_runs[i] = n_runs;
        for (int t = 0; t < PARAM_TENSORS; t++) {
            size_t lo = packed > begin ? packed : begin;
            size_t hi = packed + count[t] < end ? packed + count[t] : end;
            if (lo < hi)
                dp->runs[n_runs++] = (ShardRun){
                    t, at[t] + (lo - packed), lo,
                    dp->shard_count + (lo - begin), hi - lo };
            packed += count[t];
        }
        dp->shard_count += end - begin;
    }
    dp->shard_at[dp->units] = dp->shard_count;
    dp->unit_runs[dp->units] = n_runs;
}
static real *zeros(size_t count, double *held)
{
    *held += (double)count * sizeof(real);
    return calloc(count ? count : 1, sizeof(real));
}

static int sharded_init(DataParallel *dp)
{
    Model *m = dp->model;
    dp->units = m->config.layers + 2;
    size_t u = (size_t)dp->units;
    dp->unit_count = malloc(sizeof(size_t) * u);
    dp->chunk_at = malloc(sizeof(size_t) * u);
    dp->shard_at = malloc(sizeof(size_t) * (u + 1));
    dp->unit_runs = malloc(sizeof(int) * (u + 1));
    dp->runs = malloc(sizeof(ShardRun) * u * PARAM_TENSORS);
    if (!dp->unit_count || !dp->chunk_at || !dp->shard_at || !dp->unit_runs
        || !dp->runs)
        return -1;
    cut_into_runs(dp);
    dp->owned = dp->unit_runs[dp->units];
    count_model_state(dp);
    double *held = dp->held;
    size_t S = dp->shard_count, U = dp->largest_unit;
    dp->m_shard = zeros(S, &held[HELD_OPTIMIZER]);
    dp->v_shard = zeros(S, &held[HELD_OPTIMIZER]);
    if (dp->stage >= 2)
        dp->grad_shard = zeros(S, &held[HELD_GRADIENTS]);
    if (dp->stage == 3) {
        dp->weight_shard = zeros(S, &held[HELD_WEIGHTS]);
        dp->gathered = zeros(U, &held[HELD_BUFFERS]);
    }
    dp->unit_buffer = zeros(U, &held[HELD_BUFFERS]);
    dp->scratch = zeros(U / (size_t)dp->ranks + 1, &held[HELD_BUFFERS]); /* ring */
    if (!dp->m_shard || !dp->v_shard || !dp->unit_buffer || !dp->scratch
        || (dp->stage >= 2 && !dp->grad_shard)
        || (dp->stage == 3 && (!dp->weight_shard || !dp->gathered)))
        return -1;
    if (dp->stage == 3) {
        real *whole = malloc(sizeof(real) * m->params_count);
        if (whole == NULL)
            return -1;
        tp_init_weights(m, whole, dp->seed);  /* this rank's part */
        for (int r = 0; r < dp->unit_runs[dp->units]; r++)
            memcpy(dp->weight_shard + dp->runs[r].shard,
                   whole + dp->runs[r].full,
                   sizeof(real) * dp->runs[r].count);
        free(whole);
    }
    return 0;
}
static void sharded_free(DataParallel *dp)
{
    free(dp->unit_count);
    free(dp->chunk_at);
    free(dp->shard_at);
    free(dp->unit_runs);
    free(dp->weight_shard);
    free(dp->grad_shard);
    free(dp->m_shard);
    free(dp->v_shard);
    free(dp->gathered);
    free(dp->unit_buffer);
}
static size_t chunk_count(const DataParallel *dp, int i)
{
    return dp->shard_at[i + 1] - dp->shard_at[i];
}

static Params gather_weights(void *context, int unit)
{
    DataParallel *dp = context;
    int i = unit + 1;
    memcpy(dp->gathered + dp->chunk_at[i], dp->weight_shard + dp->shard_at[i],
           sizeof(real) * chunk_count(dp, i));
    ring_all_gather((float *)dp->gathered, dp->unit_count[i], dp->comm);
    return unit_packed(dp->model, dp->gathered, unit);
}

static Params unit_gradient(void *context, int unit)
{
    DataParallel *dp = context;
    memset(dp->unit_buffer, 0, sizeof(real) * dp->unit_count[unit + 1]);
    return unit_packed(dp->model, dp->unit_buffer, unit);
}

/* Reduce-scatter the packed unit in unit_buffer; add this rank's chunk of
   the sum to `into` (its place in the shard). */
static void reduce_into_shard(DataParallel *dp, int i, real *into)
{
    ring_reduce_scatter((float *)dp->unit_buffer, dp->unit_count[i],
                        (float *)dp->scratch, dp->comm);
    const real *mine = dp->unit_buffer + dp->chunk_at[i];
    for (size_t k = 0; k < chunk_count(dp, i); k++)
        into[k] += mine[k];
}

static void reduce_unit_gradient(void *context, int unit)
{
    DataParallel *dp = context;
    reduce_into_shard(dp, unit + 1, dp->grad_shard + dp->shard_at[unit + 1]);
}
static void pack_unit(const Model *m, int unit, const real *flat,
                      real *packed)
{
    size_t at[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(m, unit, at, count);
    for (int t = 0; t < PARAM_TENSORS; t++) {
        memcpy(packed, flat + at[t], sizeof(real) * count[t]);
        packed += count[t];
    }
}

static void unpack_unit(const Model *m, int unit, const real *packed,
                        real *flat)
{
    size_t at[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(m, unit, at, count);
    for (int t = 0; t < PARAM_TENSORS; t++) {
        memcpy(flat + at[t], packed, sizeof(real) * count[t]);
        packed += count[t];
    }
}

static void reduce_scatter_gradient(DataParallel *dp)
{
    Model *m = dp->model;
    for (int i = 0; i < dp->units; i++) {
        pack_unit(m, i - 1, m->grads_memory, dp->unit_buffer);
        ring_reduce_scatter((float *)dp->unit_buffer, dp->unit_count[i],
                            (float *)dp->scratch, dp->comm);
        for (int r = dp->unit_runs[i]; r < dp->unit_runs[i + 1]; r++)
            memcpy(m->grads_memory + dp->runs[r].full,
                   dp->unit_buffer + dp->runs[r].unit_at,
                   sizeof(real) * dp->runs[r].count);
    }
}
static real *weights_of_run(DataParallel *dp, const ShardRun *r)
{
    return dp->weight_shard != NULL ? dp->weight_shard + r->shard
                                    : dp->model->params_memory + r->full;
}

static void step_shard(DataParallel *dp, const AdamW *opt, real lr,
                       int step, real scale)
{
    for (int r = 0; r < dp->owned; r++) {
        const ShardRun *run = &dp->runs[r];
        real *g = gradient_of_run(dp, run);
        for (size_t k = 0; k < run->count; k++)
            g[k] *= scale;
        adamw_span(opt, lr, step, decays(run->tensor) ? opt->weight_decay : 0,
                   weights_of_run(dp, run), g, dp->m_shard + run->shard,
                   dp->v_shard + run->shard, run->count);
    }
}

static void step_shard_and_gather(DataParallel *dp, const AdamW *opt,
                                  real lr, int step, real scale)
{
    Model *m = dp->model;
    step_shard(dp, opt, lr, step, scale);
    double started = MPI_Wtime();
    for (int i = 0; i < dp->units; i++) {
        for (int r = dp->unit_runs[i]; r < dp->unit_runs[i + 1]; r++)
            memcpy(dp->unit_buffer + dp->runs[r].unit_at,
                   m->params_memory + dp->runs[r].full,
                   sizeof(real) * dp->runs[r].count);
        ring_all_gather((float *)dp->unit_buffer, dp->unit_count[i],
                        dp->comm);
        unpack_unit(m, i - 1, dp->unit_buffer, m->params_memory);
    }
    data_parallel_waited(dp, started);
}
/* Each rank's runs, from `shard` at their places in the shard or, when it
   is NULL, from the whole-model array `flat`, summed over the ranks. */
static void collect_runs(DataParallel *dp, const real *shard,
                         const real *flat, real *into)
{
    size_t N = dp->model->params_count;
    memset(into, 0, sizeof(real) * N);
    for (int r = 0; r < dp->owned; r++) {
        const ShardRun *run = &dp->runs[r];
        memcpy(into + run->full, shard != NULL ? shard + run->shard
                                               : flat + run->full,
               sizeof(real) * run->count);
    }
    MPI_Allreduce(MPI_IN_PLACE, into, (int)N, real_type(), MPI_SUM,
                  dp->comm);
}

static void collect_shard(DataParallel *dp, StateKind kind, real *into)
{
    Model *m = dp->model;
    if (kind == STATE_WEIGHTS && m->params_memory != NULL)
        memcpy(into, m->params_memory, sizeof(real) * m->params_count);
    else if (kind == STATE_WEIGHTS)
        collect_runs(dp, dp->weight_shard, NULL, into);
    else if (kind == STATE_GRADIENTS)   /* stage 1 keeps its summed chunks */
        collect_runs(dp, dp->grad_shard, m->grads_memory, into); /* in m */
    else
        collect_runs(dp, kind == STATE_FIRST_MOMENT ? dp->m_shard
                                                    : dp->v_shard, NULL, into);
}

/* Keep this rank's part of the whole weights or moments. */
static void scatter_shard(DataParallel *dp, StateKind kind,
                          const real *whole)
{
    Model *m = dp->model;
    real *shard = kind == STATE_FIRST_MOMENT ? dp->m_shard
                : kind == STATE_SECOND_MOMENT ? dp->v_shard
                : kind == STATE_WEIGHTS ? dp->weight_shard : dp->grad_shard;
    if (kind == STATE_WEIGHTS && m->params_memory != NULL)
        memcpy(m->params_memory, whole, sizeof(real) * m->params_count);
    for (int r = 0; shard != NULL && r < dp->owned; r++)
        memcpy(shard + dp->runs[r].shard, whole + dp->runs[r].full,
               sizeof(real) * dp->runs[r].count);
}
static void clear_gradient_shard(DataParallel *dp)
{
    memset(dp->grad_shard, 0, sizeof(real) * dp->shard_count);
}

const ShardingStrategy zero_stages[3] = {
    { "ring, sharded", HOLDS_WEIGHTS | HOLDS_GRADIENTS, sharded_init,
      do_nothing, NULL, NULL, NULL, reduce_scatter_gradient,
      step_shard_and_gather, collect_shard, scatter_shard, do_nothing,
      sharded_free },
    { "ring, sharded", HOLDS_WEIGHTS, sharded_init, clear_gradient_shard,
      NULL, unit_gradient, reduce_unit_gradient, do_nothing,
      step_shard_and_gather, collect_shard, scatter_shard, do_nothing,
      sharded_free },
    { "ring, sharded", 0, sharded_init, clear_gradient_shard,
      gather_weights, unit_gradient, reduce_unit_gradient, do_nothing,
      step_shard, collect_shard, scatter_shard, do_nothing, sharded_free },
};
