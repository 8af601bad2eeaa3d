/* Tangled from chapters/07-data-parallel.nw; edit the chapter, not this file. */
#include <stdlib.h>

#include "ring.h"

void ring_chunks(size_t count, int n, int *size, int *offset)
{
    for (int c = 0; c < n; c++) {
        size_t begin = count * (size_t)c / (size_t)n;
        size_t end = count * (size_t)(c + 1) / (size_t)n;
        offset[c] = (int)begin;
        size[c] = (int)(end - begin);
    }
}

static int modulo(int a, int n) { return ((a % n) + n) % n; }

typedef struct {
    int rank, n, left, right;
    int size[MAX_RANKS], offset[MAX_RANKS];      /* the chunks */
} Ring;

/* 0 when there is a ring to walk; otherwise what to return at once. */
static int ring_begin(Ring *r, size_t count, MPI_Comm comm, int *done)
{
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->n);
    *done = r->n == 1 || r->n > MAX_RANKS;
    if (r->n > MAX_RANKS)
        return MPI_ERR_COMM;
    ring_chunks(count, r->n, r->size, r->offset);
    r->right = modulo(r->rank + 1, r->n);
    r->left = modulo(r->rank - 1, r->n);
    return MPI_SUCCESS;
}
int ring_reduce_scatter(float *buf, size_t count, float *scratch,
                        MPI_Comm comm)
{
    Ring r;
    int done, status = ring_begin(&r, count, comm, &done);
    for (int s = 0; !done && s < r.n - 1; s++) {
        int out = modulo(r.rank - s - 1, r.n);
        int in = modulo(r.rank - s - 2, r.n);
        status = MPI_Sendrecv(buf + r.offset[out], r.size[out], MPI_FLOAT,
                              r.right, s, scratch, r.size[in], MPI_FLOAT,
                              r.left, s, comm, MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
        float *mine = buf + r.offset[in];                /* (size[in]) */
        for (int i = 0; i < r.size[in]; i++)
            mine[i] += scratch[i];
    }
    return status;
}
int ring_all_gather(float *buf, size_t count, MPI_Comm comm)
{
    Ring r;
    int done, status = ring_begin(&r, count, comm, &done);
    for (int s = 0; !done && s < r.n - 1; s++) {
        int out = modulo(r.rank - s, r.n), in = modulo(r.rank - s - 1, r.n);
        status = MPI_Sendrecv(buf + r.offset[out], r.size[out], MPI_FLOAT,
                              r.right, s, buf + r.offset[in], r.size[in],
                              MPI_FLOAT, r.left, s, comm, MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
    }
    return status;
}

int ring_allreduce(float *buf, size_t count, float *scratch, MPI_Comm comm)
{
    int status = ring_reduce_scatter(buf, count, scratch, comm);
    return status != MPI_SUCCESS ? status : ring_all_gather(buf, count, comm);
}
