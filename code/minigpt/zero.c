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
static Params gather_weights(void *context, int unit);
static Params unit_gradient(void *context, int unit);
static void reduce_unit_gradient(void *context, int unit);

static void count_model_state(DataParallel *dp)
{
    const Model *m = dp->model;
    double word = sizeof(real), N = (double)m->params_count;
    dp->held[HELD_WEIGHTS] = m->params_memory != NULL ? word * N : 0;
    dp->held[HELD_GRADIENTS] = m->grads_memory != NULL ? word * N : 0;
    dp->held[HELD_OPTIMIZER] = m->m_memory != NULL ? 2 * word * N : 0;
    dp->held[HELD_BUFFERS] = 0;
}

static real *zeros(size_t count, double *held)
{
    *held += (double)count * sizeof(real);
    return calloc(count ? count : 1, sizeof(real));
}

int sharded_init(DataParallel *dp)
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
        m->weights_needed = gather_weights;
    }
    if (dp->stage >= 2) {
        m->gradients_needed = unit_gradient;
        m->gradients_ready = reduce_unit_gradient;
    }
    m->hook_context = dp;
    return 0;
}
void sharded_free(DataParallel *dp)
{
    free(dp->unit_count);
    free(dp->chunk_at);
    free(dp->shard_at);
    free(dp->unit_runs);
    free(dp->runs);
    free(dp->weight_shard);
    free(dp->grad_shard);
    free(dp->m_shard);
    free(dp->v_shard);
    free(dp->gathered);
    free(dp->unit_buffer);
    free(dp->held_by_rank);
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

void sharded_combine(DataParallel *dp)
{
    Model *m = dp->model;
    if (dp->stage != 1)               /* 2 and 3 reduced during backward */
        return;
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
static real *gradient_of_run(DataParallel *dp, const ShardRun *r)
{
    return dp->stage >= 2 ? dp->grad_shard + r->shard
                          : dp->model->grads_memory + r->full;
}

static real *weights_of_run(DataParallel *dp, const ShardRun *r)
{
    return dp->stage == 3 ? dp->weight_shard + r->shard
                          : dp->model->params_memory + r->full;
}

real sharded_step(DataParallel *dp, const AdamW *opt, real lr, int step)
{
    Model *m = dp->model;
    int runs = dp->unit_runs[dp->units];
    double squares = 0.0;
    for (int r = 0; r < runs; r++)
        if (tp_counts_tensor(m, dp->runs[r].tensor))     /* Chapter 9 */
            squares += sum_of_squares(gradient_of_run(dp, &dp->runs[r]),
                                      dp->runs[r].count);
    MPI_Allreduce(MPI_IN_PLACE, &squares, 1, MPI_DOUBLE, MPI_SUM,
                  dp->comm);
    MPI_Allreduce(MPI_IN_PLACE, &squares, 1, MPI_DOUBLE, MPI_SUM,
                  model_tp_comm(m));            /* nothing when unsplit */
    real norm, scale = clip_factor(squares, opt->clip, &norm);
    for (int r = 0; r < runs; r++) {
        const ShardRun *run = &dp->runs[r];
        real *g = gradient_of_run(dp, run);
        for (size_t k = 0; k < run->count; k++)
            g[k] *= scale;
        adamw_span(opt, lr, step, decays(run->tensor) ? opt->weight_decay : 0,
                   weights_of_run(dp, run), g, dp->m_shard + run->shard,
                   dp->v_shard + run->shard, run->count);
    }
    for (int i = 0; dp->stage < 3 && i < dp->units; i++) {
        for (int r = dp->unit_runs[i]; r < dp->unit_runs[i + 1]; r++)
            memcpy(dp->unit_buffer + dp->runs[r].unit_at,
                   m->params_memory + dp->runs[r].full,
                   sizeof(real) * dp->runs[r].count);
        ring_all_gather((float *)dp->unit_buffer, dp->unit_count[i],
                        dp->comm);
        unpack_unit(m, i - 1, dp->unit_buffer, m->params_memory);
    }
    dp->sent += (double)(mpi_bytes_sent() - dp->sent_mark);
    return norm;
}
/* Each rank's runs, from `shard` at their places in the shard or, when it
   is NULL, from the whole-model array `flat`, summed over the ranks. */
static void collect_runs(DataParallel *dp, const real *shard,
                         const real *flat, real *into)
{
    size_t N = dp->model->params_count;
    memset(into, 0, sizeof(real) * N);
    for (int r = 0; r < dp->unit_runs[dp->units]; r++) {
        const ShardRun *run = &dp->runs[r];
        memcpy(into + run->full, shard != NULL ? shard + run->shard
                                               : flat + run->full,
               sizeof(real) * run->count);
    }
    MPI_Allreduce(MPI_IN_PLACE, into, (int)N, real_type(), MPI_SUM,
                  dp->comm);
}

void sharded_collect(DataParallel *dp, StateKind kind, real *into)
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

void sharded_account(DataParallel *dp)
{
    if (dp->stage == 0) {    /* the model's arrays and the ring's chunk */
        count_model_state(dp);
        size_t chunk = dp->model->params_count / (size_t)dp->ranks + 1;
        dp->held[HELD_BUFFERS] = dp->scratch == NULL ? 0
                               : sizeof(real) * (double)chunk;
    }
    double per_step = dp->steps > 0 ? dp->sent / dp->steps : 0;
    MPI_Allreduce(&per_step, &dp->sent_most, 1, MPI_DOUBLE, MPI_MAX,
                  dp->comm);
    if (dp->rank == 0)
        dp->held_by_rank = malloc(sizeof(double[HELD_KINDS])
                                  * (size_t)dp->ranks);
    MPI_Gather(dp->held, HELD_KINDS, MPI_DOUBLE,
               dp->rank == 0 ? dp->held_by_rank : NULL, HELD_KINDS,
               MPI_DOUBLE, 0, dp->comm);
}
/* A model of one sequence that holds the whole weights and moments: what a
   checkpoint writes and reads. */
static int whole_state(const Model *m, Model *whole)
{
    return model_init(whole, m->config, 1, HOLDS_WEIGHTS | HOLDS_MOMENTS);
}

int sharded_save(DataParallel *dp, const char *path, const TrainingState *s,
                 char *why, size_t why_size)
{
    Model whole;
    int status = whole_state(dp->model, &whole);
    if (ranks_agree(status != 0, dp->comm) != 0) {  /* rank 0 reports it */
        model_free(&whole);
        snprintf(why, why_size, "no memory to gather the state for %s", path);
        return dp->rank == 0 ? -1 : 0;
    }
    sharded_collect(dp, STATE_WEIGHTS, whole.params_memory);
    sharded_collect(dp, STATE_FIRST_MOMENT, whole.m_memory);
    sharded_collect(dp, STATE_SECOND_MOMENT, whole.v_memory);
    if (dp->rank == 0)
        status = checkpoint_save(path, &whole, s, why, why_size);
    model_free(&whole);
    return status;
}

int sharded_load(DataParallel *dp, const char *path, TrainingState *s,
                 char *why, size_t why_size)
{
    Model *m = dp->model, whole;
    int status = whole_state(m, &whole);
    if (status != 0)
        snprintf(why, why_size, "no memory to read %s", path);
    else
        status = checkpoint_load(path, &whole, s, why, why_size);
    if (status == 0 && m->params_memory != NULL)
        memcpy(m->params_memory, whole.params_memory,
               sizeof(real) * m->params_count);
    for (int r = 0; status == 0 && r < dp->unit_runs[dp->units]; r++) {
        const ShardRun *run = &dp->runs[r];
        size_t bytes = sizeof(real) * run->count;
        if (dp->stage == 3)
            memcpy(dp->weight_shard + run->shard,
                   whole.params_memory + run->full, bytes);
        memcpy(dp->m_shard + run->shard, whole.m_memory + run->full, bytes);
        memcpy(dp->v_shard + run->shard, whole.v_memory + run->full, bytes);
    }
    model_free(&whole);
    return status;
}
