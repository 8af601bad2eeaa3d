/* Tangled from chapters/07-data-parallel.nw; edit the chapter, not this file. */
#ifndef RING_H
#define RING_H

#include <mpi.h>
#include <stddef.h>

enum { MAX_RANKS = 4096 };     /* the chunk tables live on the stack */

/* The n chunks of a buffer of `count` floats: chunk c is
   [offset[c], offset[c] + size[c]); sizes differ by at most one. */
void ring_chunks(size_t count, int n, int *size, int *offset);

/* In place on buf (count floats): afterwards chunk `rank` holds the sum over
   all ranks. `scratch` holds one chunk. */
int ring_reduce_scatter(float *buf, size_t count, float *scratch,
                        MPI_Comm comm);
/* In place: rank r supplies chunk r; afterwards every rank has all chunks. */
int ring_all_gather(float *buf, size_t count, MPI_Comm comm);
/* The sum over all ranks, in place: reduce-scatter, then all-gather. */
int ring_allreduce(float *buf, size_t count, float *scratch, MPI_Comm comm);
#endif
