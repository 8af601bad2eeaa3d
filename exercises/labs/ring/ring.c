/* exercises/labs/ring/ring.c: the lab of chapter 7, a ring reduce-scatter and
   all-gather written from MPI_Sendrecv. This file replaces code/comm/ring.c
   as a whole: ring_chunks, modulo and ring_allreduce are the chapter's and
   are done; the body of one step of each phase is yours (the three TODOs).

   Grade your copy (labs/ring/) from the repository root:

       make lab LAB=ring

   which builds build/bin/allreduce with this file in place of the chapter's
   ring and runs it on 1, 2, 3 and 4 ranks. As handed out the file compiles
   and runs, leaves the buffers untouched, and the benchmark counts wrong
   elements from 2 ranks up. README.md in this folder sets out the task. */
#include <stdlib.h>

#include "ring.h"


/* Chunk c of a buffer of `count` floats is [offset[c], offset[c] + size[c]);
   sizes differ by at most one, and some are zero when count < n. */
void ring_chunks(size_t count, int n, int *size, int *offset)
{
    for (int c = 0; c < n; c++) {
        size_t begin = count * (size_t)c / (size_t)n;
        size_t end = count * (size_t)(c + 1) / (size_t)n;
        offset[c] = (int)begin;
        size[c] = (int)(end - begin);
    }
}

/* a mod n in 0 .. n-1, also for negative a (C's % keeps the sign of a). */
static int modulo(int a, int n) { return ((a % n) + n) % n; }

/* Afterwards chunk `rank` of buf holds the sum of chunk `rank` over all
   ranks; the other chunks hold partial sums that nobody reads. `scratch`
   has room for one chunk. */
int ring_reduce_scatter(float *buf, size_t count, float *scratch,
                        MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    if (n == 1)
        return MPI_SUCCESS;
    int size[MAX_RANKS], offset[MAX_RANKS];
    ring_chunks(count, n, size, offset);
    int right = modulo(rank + 1, n), left = modulo(rank - 1, n);
    for (int s = 0; s < n - 1; s++) {
        /* TODO 1 (reduce-scatter, step s): which chunk does this rank send
           to the right, and which does it receive from the left? Choose
           them so that at the last step, s = n - 2, the chunk received is
           chunk `rank`. Use modulo() for indices that may go negative. */
        int out = 0, in = 0;

        /* TODO 2: one MPI_Sendrecv: send size[out] floats from
           buf + offset[out] to `right`, receive size[in] floats from `left`
           into scratch, with tag s. Return its status if it is not
           MPI_SUCCESS. */

        /* TODO 3: add the size[in] floats of scratch into chunk `in` of
           buf. */

        (void)out; (void)in; (void)right; (void)left;   /* delete when done */
        (void)buf; (void)scratch; (void)offset;
    }
    return MPI_SUCCESS;
}

/* On entry chunk `rank` of buf is this rank's finished chunk; afterwards
   every rank has every finished chunk. */
int ring_all_gather(float *buf, size_t count, MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    if (n == 1)
        return MPI_SUCCESS;
    int size[MAX_RANKS], offset[MAX_RANKS];
    ring_chunks(count, n, size, offset);
    int right = modulo(rank + 1, n), left = modulo(rank - 1, n);
    for (int s = 0; s < n - 1; s++) {
        /* TODO 4 (all-gather, step s): send a finished chunk to the right
           and receive one from the left straight into its place in buf (no
           scratch, no arithmetic). At step 0 the only finished chunk this
           rank has is its own; after that, forward what just arrived. */

        (void)s; (void)right; (void)left;              /* delete when done */
        (void)buf; (void)offset;
    }
    return MPI_SUCCESS;
}

/* The sum over all ranks, in place: reduce-scatter, then all-gather. */
int ring_allreduce(float *buf, size_t count, float *scratch, MPI_Comm comm)
{
    int status = ring_reduce_scatter(buf, count, scratch, comm);
    return status != MPI_SUCCESS ? status : ring_all_gather(buf, count, comm);
}
