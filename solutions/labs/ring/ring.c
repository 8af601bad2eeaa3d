/* solutions/labs/ring/ring.c: a solution to the lab of chapter 7
   (exercises/labs/ring/ring.c). Each phase keeps one running index, the chunk
   this rank passes on next: in the reduce-scatter a chunk is passed on right
   after this rank has added its share to it, in the all-gather right after
   it arrived, so that the chunk received at one step is the one sent at the
   next. Check it with

       make lab LAB=ring WORK=solutions/labs/ring  */
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

/* One rank's place in the ring: its neighbours and the chunks of the
   buffer. Refuses (MPI_ERR_OTHER) a ring longer than the arrays. */
typedef struct {
    int rank, n, right, left;
    int size[MAX_RANKS], offset[MAX_RANKS];
} Ring;

static int ring_open(Ring *g, size_t count, MPI_Comm comm)
{
    MPI_Comm_rank(comm, &g->rank);
    MPI_Comm_size(comm, &g->n);
    if (g->n > MAX_RANKS)
        return MPI_ERR_OTHER;
    ring_chunks(count, g->n, g->size, g->offset);
    g->right = modulo(g->rank + 1, g->n);
    g->left = modulo(g->rank - 1, g->n);
    return MPI_SUCCESS;
}

int ring_reduce_scatter(float *buf, size_t count, float *scratch,
                        MPI_Comm comm)
{
    Ring g;
    int status = ring_open(&g, count, comm);
    if (status != MPI_SUCCESS || g.n == 1)
        return status;
    /* Chunk c starts at rank c + 1 and ends, n - 1 hops later, at rank c
       with every rank's share in it; so this rank starts by passing on
       chunk rank - 1, and at each step adds its share to the chunk that
       arrives, which it passes on at the next. */
    int pass = modulo(g.rank - 1, g.n);
    for (int step = 0; step < g.n - 1; step++) {
        int take = modulo(pass - 1, g.n);
        status = MPI_Sendrecv(buf + g.offset[pass], g.size[pass], MPI_FLOAT,
                              g.right, step, scratch, g.size[take], MPI_FLOAT,
                              g.left, step, comm, MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
        float *partial = buf + g.offset[take];           /* (size[take]) */
        for (int i = 0; i < g.size[take]; i++)
            partial[i] += scratch[i];
        pass = take;
    }
    return MPI_SUCCESS;              /* pass == rank: the finished chunk */
}

int ring_all_gather(float *buf, size_t count, MPI_Comm comm)
{
    Ring g;
    int status = ring_open(&g, count, comm);
    if (status != MPI_SUCCESS || g.n == 1)
        return status;
    /* Every finished chunk goes n - 1 hops to the right; this rank first
       passes on its own, then whatever the left neighbour just sent. */
    int pass = g.rank;
    for (int step = 0; step < g.n - 1; step++) {
        int take = modulo(pass - 1, g.n);
        status = MPI_Sendrecv(buf + g.offset[pass], g.size[pass], MPI_FLOAT,
                              g.right, step, buf + g.offset[take],
                              g.size[take], MPI_FLOAT, g.left, step, comm,
                              MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
        pass = take;
    }
    return MPI_SUCCESS;
}

int ring_allreduce(float *buf, size_t count, float *scratch, MPI_Comm comm)
{
    int status = ring_reduce_scatter(buf, count, scratch, comm);
    return status != MPI_SUCCESS ? status : ring_all_gather(buf, count, comm);
}
