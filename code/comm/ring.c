/* Tangled from chapters/04-data-parallel.nw; edit the chapter, not this file. */
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

int ring_reduce_scatter(float *buf, size_t count, float *scratch,
                        MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    if (n == 1)
        return MPI_SUCCESS;
    if (n > MAX_RANKS)
        return MPI_ERR_COMM;
    int size[MAX_RANKS], offset[MAX_RANKS];
    ring_chunks(count, n, size, offset);
    int right = modulo(rank + 1, n), left = modulo(rank - 1, n);
    for (int s = 0; s < n - 1; s++) {
        int out = modulo(rank - s - 1, n), in = modulo(rank - s - 2, n);
        int status = MPI_Sendrecv(buf + offset[out], size[out], MPI_FLOAT,
                                  right, s, scratch, size[in], MPI_FLOAT,
                                  left, s, comm, MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
        float *mine = buf + offset[in];                  /* (size[in]) */
        for (int i = 0; i < size[in]; i++)
            mine[i] += scratch[i];
    }
    return MPI_SUCCESS;
}
int ring_all_gather(float *buf, size_t count, MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    if (n == 1)
        return MPI_SUCCESS;
    if (n > MAX_RANKS)
        return MPI_ERR_COMM;
    int size[MAX_RANKS], offset[MAX_RANKS];
    ring_chunks(count, n, size, offset);
    int right = modulo(rank + 1, n), left = modulo(rank - 1, n);
    for (int s = 0; s < n - 1; s++) {
        int out = modulo(rank - s, n), in = modulo(rank - s - 1, n);
        int status = MPI_Sendrecv(buf + offset[out], size[out], MPI_FLOAT,
                                  right, s, buf + offset[in], size[in],
                                  MPI_FLOAT, left, s, comm, MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
    }
    return MPI_SUCCESS;
}

int ring_allreduce(float *buf, size_t count, float *scratch, MPI_Comm comm)
{
    int status = ring_reduce_scatter(buf, count, scratch, comm);
    return status != MPI_SUCCESS ? status : ring_all_gather(buf, count, comm);
}
