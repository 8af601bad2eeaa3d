/* Tangled from chapters/04-data-parallel.nw; edit the chapter, not this file. */
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"
#include "../comm/ring.h"

static MPI_Datatype real_type(void)
{
    return sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
}

int ranks_agree(int status)
{
    int worst = status;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int data_parallel_init(DataParallel *dp, Model *m)
{
    dp->model = m;
    dp->capacity = 12 * m->config.layers + 8;
    dp->requests = malloc(sizeof(MPI_Request) * (size_t)dp->capacity);
    dp->statuses = malloc(sizeof(MPI_Status) * (size_t)dp->capacity);
    dp->scratch = malloc(sizeof(real) * (m->params_count / (size_t)dp->ranks + 1));
    if (dp->requests == NULL || dp->statuses == NULL || dp->scratch == NULL)
        return -1;
    if (dp->ranks == 1)
        return 0;
    enum { TRIALS = 5 };
    MPI_Barrier(MPI_COMM_WORLD);
    double started = MPI_Wtime();
    for (int i = 0; i < TRIALS; i++)
        MPI_Allreduce(MPI_IN_PLACE, m->grads_memory, (int)m->params_count,
                      real_type(), MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - started) / TRIALS;
    MPI_Allreduce(&mine, &dp->blocking, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    model_zero_grads(m);
    return 0;
}

void data_parallel_free(DataParallel *dp)
{
    free(dp->requests);
    free(dp->statuses);
    free(dp->scratch);
}
static void gradients_ready(void *context, int layer)
{
    DataParallel *dp = context;
    Model *m = dp->model;
    Params *g = &m->grads;
    int L = m->config.layers;
    real *whole[] = { g->ln1_w, g->ln1_b, g->qkv_w, g->qkv_b, g->proj_w,
                      g->proj_b, g->ln2_w, g->ln2_b, g->fc_w, g->fc_b,
                      g->fcproj_w, g->fcproj_b };
    const int tensor[] = { 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
    real *at[12];
    size_t count[12];
    int n = 0;
    if (layer >= 0 && layer < L)
        for (int i = 0; i < 12; i++, n++) {
            count[n] = m->param_size[tensor[i]] / (size_t)L;
            at[n] = whole[i] + (size_t)layer * count[n];
        }
    else if (layer == L) {
        at[n] = g->lnf_w;  count[n++] = m->param_size[14];
        at[n] = g->lnf_b;  count[n++] = m->param_size[15];
        at[n] = g->head_w; count[n++] = m->param_size[16];
    } else {
        at[n] = g->wte; count[n++] = m->param_size[0];
        at[n] = g->wpe; count[n++] = m->param_size[1];
    }
    for (int i = 0; i < n; i++)
        MPI_Iallreduce(MPI_IN_PLACE, at[i], (int)count[i], real_type(),
                       MPI_SUM, MPI_COMM_WORLD, &dp->requests[dp->pending++]);
    int done;
    MPI_Testall(dp->pending, dp->requests, &done, dp->statuses);
}

void data_parallel_begin(DataParallel *dp, Model *m)
{
    dp->pending = 0;
    if (dp->ranks > 1 && dp->overlap && !dp->ring) {
        m->gradients_ready = gradients_ready;
        m->gradients_context = dp;
    }
}
void data_parallel_combine(DataParallel *dp, double *loss)
{
    Model *m = dp->model;
    m->gradients_ready = NULL;
    if (dp->ranks == 1)
        return;
    double started = MPI_Wtime();
    if (dp->overlap && !dp->ring)
        MPI_Waitall(dp->pending, dp->requests, dp->statuses);
    else if (dp->ring)
        ring_allreduce((float *)m->grads_memory, m->params_count,
                       (float *)dp->scratch, MPI_COMM_WORLD);
    else
        MPI_Allreduce(MPI_IN_PLACE, m->grads_memory, (int)m->params_count,
                      real_type(), MPI_SUM, MPI_COMM_WORLD);
    dp->exposed += MPI_Wtime() - started;
    dp->steps++;
    MPI_Allreduce(MPI_IN_PLACE, loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *loss /= dp->ranks;
}
int data_parallel_identical(DataParallel *dp)
{
    const unsigned char *p = (const unsigned char *)dp->model->params_memory;
    unsigned long long hash = 0xcbf29ce484222325ULL, low, high;
    for (size_t i = 0; i < dp->model->params_count * sizeof(real); i++)
        hash = (hash ^ p[i]) * 0x100000001b3ULL;
    MPI_Allreduce(&hash, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
                  MPI_COMM_WORLD);
    MPI_Allreduce(&hash, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                  MPI_COMM_WORLD);
    return low == high;
}
