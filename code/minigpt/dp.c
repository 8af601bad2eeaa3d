/* Tangled from chapters/07-data-parallel.nw, chapters/08-sharded-state.nw, chapters/09-tensor-parallel.nw, chapters/11c-buckets.nw, chapters/95-parallel-plumbing.nw and chapters/99c-buckets.nw; edit the chapters, not this file. */
#include <stdlib.h>
#include <string.h>

#include "trainer.h"
#include "../comm/ring.h"

double data_parallel_waited(DataParallel *dp, double started)
{
    double seconds = step_clock_stop(PART_DP, started) - started;
    dp->communicated += seconds;
    return seconds;
}

static void clocked_gradients_ready(void *context, int unit)
{
    DataParallel *dp = context;
    double started = MPI_Wtime();
    dp->strategy->gradients_ready(context, unit);
    data_parallel_waited(dp, started);
}

static Params clocked_weights_needed(void *context, int unit)
{
    DataParallel *dp = context;
    double started = MPI_Wtime();
    Params weights = dp->strategy->weights_needed(context, unit);
    data_parallel_waited(dp, started);
    return weights;
}
int data_parallel_init(DataParallel *dp, Model *m, const Mesh *mesh)
{
    dp->model = m;
    dp->rank = mesh->dp_rank;
    dp->ranks = mesh->dp;
    dp->comm = mesh->dp_comm;
    dp->world = mesh->world;
    for (int t = 0; t < PARAM_TENSORS; t++)   /* whole on every tp rank */
        dp->norm_counts[t] = mesh->tp_rank == 0;
    m->weights_needed = dp->strategy->weights_needed;
    m->hook_context = dp;
    return dp->strategy->init(dp);
}

void data_parallel_free(DataParallel *dp)
{
    dp->strategy->free(dp);
    free(dp->runs);
    free(dp->requests);
    free(dp->statuses);
    free(dp->scratch);
    free(dp->intervals);
    free(dp->waits);
    free(dp->held_by_rank);
}
static int own_whole_tensors(DataParallel *dp)
{
    dp->runs = malloc(sizeof(ShardRun) * PARAM_TENSORS);
    if (dp->runs == NULL)
        return -1;
    size_t at = 0;
    dp->owned = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        if (dp->rank == 0)
            dp->runs[dp->owned++] = (ShardRun){
                t, at, 0, at, dp->model->param_size[t] };
        at += dp->model->param_size[t];
    }
    return 0;
}

static void step_whole(DataParallel *dp, const AdamW *opt, real lr,
                       int step, real scale)
{
    Model *m = dp->model;
    if (scale != 1.0f)
        for (size_t i = 0; i < m->params_count; i++)
            m->grads_memory[i] *= scale;
    adamw_update(m, opt, lr, step);
}

static real *whole_array(const Model *m, StateKind kind)
{
    real *whole[] = { m->params_memory, m->grads_memory, m->m_memory,
                      m->v_memory };
    return whole[kind];
}

static void collect_whole(DataParallel *dp, StateKind kind, real *into)
{
    const Model *m = dp->model;
    memcpy(into, whole_array(m, kind), sizeof(real) * m->params_count);
}

static void scatter_whole(DataParallel *dp, StateKind kind,
                          const real *whole)
{
    const Model *m = dp->model;
    memcpy(whole_array(m, kind), whole, sizeof(real) * m->params_count);
}

static void account_whole(DataParallel *dp)
{
    count_model_state(dp);
    size_t chunk = dp->model->params_count / (size_t)dp->ranks + 1;
    dp->held[HELD_BUFFERS] = dp->scratch == NULL ? 0
                           : sizeof(real) * (double)chunk;
}

static void allreduce_blocking(DataParallel *dp)
{
    Model *m = dp->model;
    MPI_Allreduce(MPI_IN_PLACE, m->grads_memory, (int)m->params_count,
                  real_type(), MPI_SUM, dp->comm);
}

static int init_ring(DataParallel *dp)
{
    size_t chunk = dp->model->params_count / (size_t)dp->ranks + 1;
    dp->scratch = malloc(sizeof(real) * chunk);
    return dp->scratch == NULL ? -1 : own_whole_tensors(dp);
}

static void allreduce_ring(DataParallel *dp)
{
    Model *m = dp->model;
    ring_allreduce((float *)m->grads_memory, m->params_count,
                   (float *)dp->scratch, dp->comm);
}

static int init_overlapped(DataParallel *dp)
{
    dp->capacity = 12 * dp->model->config.layers + 8;
    dp->requests = malloc(sizeof(MPI_Request) * (size_t)dp->capacity);
    dp->statuses = malloc(sizeof(MPI_Status) * (size_t)dp->capacity);
    if (dp->requests == NULL || dp->statuses == NULL)
        return -1;
    return own_whole_tensors(dp);
}

static void start_overlapped(DataParallel *dp)
{
    dp->pending = 0;
}

static void gradients_ready(void *context, int unit)
{
    DataParallel *dp = context;
    Model *m = dp->model;
    if (!m->last_piece)
        return;
    size_t offset[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(m, unit, offset, count);
    for (int t = 0; t < PARAM_TENSORS; t++)
        if (count[t] > 0)
            MPI_Iallreduce(MPI_IN_PLACE, m->grads_memory + offset[t],
                           (int)count[t], real_type(), MPI_SUM,
                           dp->comm, &dp->requests[dp->pending++]);
    int done;
    MPI_Testall(dp->pending, dp->requests, &done, dp->statuses);
}

static void wait_overlapped(DataParallel *dp)
{
    MPI_Waitall(dp->pending, dp->requests, dp->statuses);
}
#define REPLICATED(name_, init_, begin_, ready_, finish_)                 \
    { name_, HOLDS_ALL, init_, begin_, NULL, NULL, ready_, finish_,      \
      step_whole, collect_whole, scatter_whole, account_whole, do_nothing }

const ShardingStrategy replicated_alone =
    REPLICATED("none", own_whole_tensors, do_nothing, NULL, do_nothing);
const ShardingStrategy replicated_skipped =
    REPLICATED("skipped", own_whole_tensors, do_nothing, NULL, do_nothing);
const ShardingStrategy replicated_blocking =
    REPLICATED("mpi", own_whole_tensors, do_nothing, NULL, allreduce_blocking);
const ShardingStrategy replicated_ring =
    REPLICATED("ring", init_ring, do_nothing, NULL, allreduce_ring);
const ShardingStrategy replicated_overlapped =
    REPLICATED("mpi, overlapped", init_overlapped, start_overlapped,
               gradients_ready, wait_overlapped);
static int bucket_full(const DataParallel *dp)
{
    const Bucket *last = &dp->buckets[dp->bucket_count - 1];
    return sizeof(real) * (double)last->count >= dp->bucket_bytes;
}

static int init_buckets(DataParallel *dp)
{
    Model *m = dp->model;
    int L = m->config.layers;
    size_t most = (size_t)(L + 2) * PARAM_TENSORS;
    dp->slices = malloc(sizeof(GradientSlice) * most);
    dp->buckets = malloc(sizeof(Bucket) * most);
    dp->packed = malloc(sizeof(real) * m->params_count);
    dp->requests = malloc(sizeof(MPI_Request) * most);
    dp->statuses = malloc(sizeof(MPI_Status) * most);
    if (!dp->slices || !dp->buckets || !dp->packed || !dp->requests
        || !dp->statuses)
        return -1;
    size_t packed = 0;
    for (int unit = L; unit >= -1; unit--) {       /* the head first */
        size_t offset[PARAM_TENSORS], count[PARAM_TENSORS];
        unit_layout(m, unit, offset, count);
        for (int t = 0; t < PARAM_TENSORS; t++) {
            if (count[t] == 0)
                continue;
            if (dp->bucket_count == 0 || bucket_full(dp))
                dp->buckets[dp->bucket_count++] = (Bucket){ packed, 0, 0, 0 };
            Bucket *b = &dp->buckets[dp->bucket_count - 1];
            dp->slices[dp->slice_count++] = (GradientSlice){
                unit, dp->bucket_count - 1, offset[t], packed, count[t] };
            b->count += count[t];
            b->slices++;
            packed += count[t];
        }
    }
    return own_whole_tensors(dp);
}
static void start_buckets(DataParallel *dp)
{
    dp->pending = 0;
    for (int k = 0; k < dp->bucket_count; k++)
        dp->buckets[k].waiting = dp->buckets[k].slices;
}

static void fill_buckets(void *context, int unit)
{
    DataParallel *dp = context;
    Model *m = dp->model;
    if (!m->last_piece)
        return;
    for (int s = 0; s < dp->slice_count; s++) {
        const GradientSlice *slice = &dp->slices[s];
        if (slice->unit != unit)
            continue;
        memcpy(dp->packed + slice->packed, m->grads_memory + slice->full,
               sizeof(real) * slice->count);
        Bucket *b = &dp->buckets[slice->bucket];
        if (--b->waiting == 0)
            MPI_Iallreduce(MPI_IN_PLACE, dp->packed + b->packed,
                           (int)b->count, real_type(), MPI_SUM, dp->comm,
                           &dp->requests[dp->pending++]);
    }
    int done;
    MPI_Testall(dp->pending, dp->requests, &done, dp->statuses);
}

static void empty_buckets(DataParallel *dp)
{
    Model *m = dp->model;
    MPI_Waitall(dp->pending, dp->requests, dp->statuses);
    for (int s = 0; s < dp->slice_count; s++) {
        const GradientSlice *slice = &dp->slices[s];
        memcpy(m->grads_memory + slice->full, dp->packed + slice->packed,
               sizeof(real) * slice->count);
    }
}
static void account_buckets(DataParallel *dp)
{
    count_model_state(dp);
    dp->held[HELD_BUFFERS] = sizeof(real) * (double)dp->model->params_count;
}

static void free_buckets(DataParallel *dp)
{
    free(dp->slices);
    free(dp->buckets);
    free(dp->packed);
}

const ShardingStrategy replicated_in_buckets = {
    "mpi, overlapped, in buckets", HOLDS_ALL, init_buckets, start_buckets,
    NULL, NULL, fill_buckets, empty_buckets, step_whole, collect_whole,
    scatter_whole, account_buckets, free_buckets };
void data_parallel_begin(DataParallel *dp)
{
    double now = MPI_Wtime();
    if (dp->last_begin > 0) {
        if (dp->intervals_count == dp->intervals_capacity) {
            int more = dp->intervals_capacity > 0
                       ? 2 * dp->intervals_capacity : 256;
            double *grown = realloc(dp->intervals, sizeof(double) * (size_t)more);
            if (grown == NULL)
                abort();
            dp->intervals = grown;
            dp->intervals_capacity = more;
        }
        dp->intervals[dp->intervals_count++] = now - dp->last_begin;
    }
    dp->last_begin = now;
    if (dp->waits_capacity < dp->intervals_capacity) {
        double *grown = realloc(dp->waits, sizeof(double)
                                * (size_t)dp->intervals_capacity);
        if (grown == NULL)
            abort();
        dp->waits = grown;
        dp->waits_capacity = dp->intervals_capacity;
    }
    if (dp->waits_count < dp->intervals_count)
        dp->waits[dp->waits_count++] = dp->communicated - dp->communicated_mark;
    dp->communicated_mark = dp->communicated;
    dp->sent_mark = data_bytes_sent();
    dp->strategy->begin_step(dp);
    dp->model->gradients_needed = dp->strategy->gradients_needed;
    dp->model->gradients_ready = dp->strategy->gradients_ready;
    if (dp->mixed == NULL) {     /* Chapter 12's hooks convert; they send not */
        if (dp->model->gradients_ready != NULL)
            dp->model->gradients_ready = clocked_gradients_ready;
        if (dp->model->weights_needed != NULL)
            dp->model->weights_needed = clocked_weights_needed;
    }
}

void data_parallel_combine(DataParallel *dp, double *loss)
{
    dp->model->gradients_needed = NULL;
    dp->model->gradients_ready = NULL;
    double started = MPI_Wtime();
    dp->strategy->finish_gradients(dp);
    dp->exposed += data_parallel_waited(dp, started);
    dp->steps++;
    MPI_Allreduce(MPI_IN_PLACE, loss, 1, MPI_DOUBLE, MPI_SUM, dp->comm);
    *loss /= dp->ranks;
}
real *gradient_of_run(const DataParallel *dp, const ShardRun *run)
{
    return dp->grad_shard != NULL ? dp->grad_shard + run->shard
                                  : dp->model->grads_memory + run->full;
}

double gradient_squares(DataParallel *dp)
{
    if (dp->mixed != NULL)              /* Chapter 12: 16-bit gradients */
        return mixed_gradient_squares(dp);
    double squares = 0.0;
    for (int r = 0; r < dp->owned; r++) {
        const ShardRun *run = &dp->runs[r];
        if (dp->norm_counts[run->tensor])
            squares += sum_of_squares(gradient_of_run(dp, run), run->count);
    }
    MPI_Allreduce(MPI_IN_PLACE, &squares, 1, MPI_DOUBLE, MPI_SUM, dp->world);
    return squares;
}

real data_parallel_step(DataParallel *dp, const AdamW *opt, real lr,
                        int step)
{
    real norm, scale = clip_factor(gradient_squares(dp), opt->clip, &norm);
    dp->strategy->step(dp, opt, lr, step, scale);
    dp->sent += (double)(data_bytes_sent() - dp->sent_mark);
    return norm;
}
void do_nothing(DataParallel *dp)
{
    (void)dp;
}
int data_parallel_identical(DataParallel *dp)
{
    if (dp->model->params_memory == NULL)
        return -1;
    const unsigned char *p = (const unsigned char *)dp->model->params_memory;
    unsigned long long hash = 0xcbf29ce484222325ULL, low, high;
    for (size_t i = 0; i < dp->model->params_count * sizeof(real); i++)
        hash = (hash ^ p[i]) * 0x100000001b3ULL;
    MPI_Allreduce(&hash, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, dp->comm);
    MPI_Allreduce(&hash, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, dp->comm);
    return low == high;
}
void data_parallel_step_time(DataParallel *dp)
{
    double mine = median_after_warm_up(dp->intervals, dp->intervals_count,
                                       &dp->intervals_count);
    MPI_Allreduce(&mine, &dp->step_median, 1, MPI_DOUBLE, MPI_MAX,
                  dp->world);
}
void data_parallel_wait_time(DataParallel *dp)
{
    int kept, ranks;
    double mine = median_after_warm_up(dp->waits, dp->waits_count, &kept);
    MPI_Comm_size(dp->world, &ranks);
    MPI_Allreduce(&mine, &dp->wait_median, 1, MPI_DOUBLE, MPI_SUM,
                  dp->world);
    dp->wait_median /= ranks;
}
void count_model_state(DataParallel *dp)
{
    const Model *m = dp->model;
    double word = sizeof(real), N = (double)m->params_count;
    dp->held[HELD_WEIGHTS] = m->params_memory != NULL ? word * N : 0;
    dp->held[HELD_GRADIENTS] = m->grads_memory != NULL ? word * N : 0;
    dp->held[HELD_OPTIMIZER] = m->m_memory != NULL ? 2 * word * N : 0;
    dp->held[HELD_BUFFERS] = 0;
}

void data_parallel_account(DataParallel *dp)
{
    dp->strategy->account(dp);
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
