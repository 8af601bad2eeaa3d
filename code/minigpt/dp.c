/* Tangled from chapters/07-data-parallel.nw, chapters/08-sharded-state.nw and chapters/95-parallel-plumbing.nw; edit the chapters, not this file. */
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"
#include "../comm/ring.h"

int data_parallel_init(DataParallel *dp, Model *m, const Mesh *mesh)
{
    dp->model = m;
    dp->rank = mesh->dp_rank;
    dp->ranks = mesh->dp;
    dp->comm = mesh->dp_comm;
    dp->world = mesh->world;
    dp->capacity = 12 * m->config.layers + 8;
    dp->requests = malloc(sizeof(MPI_Request) * (size_t)dp->capacity);
    dp->statuses = malloc(sizeof(MPI_Status) * (size_t)dp->capacity);
    int ring_here = dp->ring && dp->ranks > 1 && dp->stage == 0;
    if (ring_here)
        dp->scratch = malloc(sizeof(real)
                             * (m->params_count / (size_t)dp->ranks + 1));
    if (dp->requests == NULL || dp->statuses == NULL
        || (ring_here && dp->scratch == NULL))
        return -1;
    if (dp->stage > 0)
        return sharded_init(dp);                   /* Chapter 8 */
    return 0;
}

void data_parallel_free(DataParallel *dp)
{
    sharded_free(dp);
    free(dp->requests);
    free(dp->statuses);
    free(dp->scratch);
    free(dp->intervals);
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

void data_parallel_begin(DataParallel *dp, Model *m)
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
    dp->pending = 0;
    dp->sent_mark = mpi_bytes_sent();
    if (dp->grad_shard != NULL)
        memset(dp->grad_shard, 0, sizeof(real) * dp->shard_count);
    if (dp->ranks > 1 && dp->overlap && !dp->ring && dp->stage == 0
        && dp->communicate) {
        m->gradients_ready = gradients_ready;
        m->hook_context = dp;
    }
}
void data_parallel_combine(DataParallel *dp, double *loss)
{
    Model *m = dp->model;
    if (dp->stage == 0)
        m->gradients_ready = NULL;
    if (dp->ranks == 1 && dp->stage == 0)
        return;
    double started = MPI_Wtime();
    if (dp->stage > 0)
        sharded_combine(dp);                       /* Chapter 8 */
    else if (!dp->communicate)
        ;                                  /* the baseline: compute alone */
    else if (dp->overlap && !dp->ring)
        MPI_Waitall(dp->pending, dp->requests, dp->statuses);
    else if (dp->ring)
        ring_allreduce((float *)m->grads_memory, m->params_count,
                       (float *)dp->scratch, dp->comm);
    else
        MPI_Allreduce(MPI_IN_PLACE, m->grads_memory, (int)m->params_count,
                      real_type(), MPI_SUM, dp->comm);
    dp->exposed += MPI_Wtime() - started;
    dp->steps++;
    if (dp->stage == 0)              /* the bytes sent, as Chapter 8 counts */
        dp->sent += (double)(mpi_bytes_sent() - dp->sent_mark);
    MPI_Allreduce(MPI_IN_PLACE, loss, 1, MPI_DOUBLE, MPI_SUM, dp->comm);
    *loss /= dp->ranks;
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
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void data_parallel_step_time(DataParallel *dp)
{
    enum { WARMUP_STEPS = 10 };
    int skip = dp->intervals_count > 2 * WARMUP_STEPS ? WARMUP_STEPS
             : dp->intervals_count / 2;
    int kept = dp->intervals_count - skip;
    double mine = 0;
    if (kept > 0) {
        qsort(dp->intervals + skip, (size_t)kept, sizeof(double), by_value);
        double *rest = dp->intervals + skip;
        mine = kept % 2 ? rest[kept / 2]
             : 0.5 * (rest[kept / 2 - 1] + rest[kept / 2]);
    }
    dp->intervals_count = kept;
    MPI_Allreduce(&mine, &dp->step_median, 1, MPI_DOUBLE, MPI_MAX,
                  dp->world);
}
