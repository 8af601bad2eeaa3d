/* Tangled from chapters/10-pipeline.nw and chapters/98-pipeline-plumbing.nw; edit the chapters, not this file. */
#ifndef PIPELINE_H
#define PIPELINE_H

#include "trainer.h"
#include "pipeline_trace.h"

typedef struct {                 /* one micro-batch's pass in flight       */
    int micro_batch, chunk;      /* whose; micro_batch -1 while free        */
    real *acts;                  /* (acts_count) the chunk's activations   */
    real *deferred;              /* zb-h1: (L/P, B, T, 9C) the
                                    products' output gradients; or NULL    */
} Slot;

typedef struct {                 /* a tensor on its way to a neighbour     */
    real *data;                  /* (B, T, C)                              */
    MPI_Request request;         /* MPI_REQUEST_NULL once it has gone      */
} Message;

typedef struct PipelineStage {
    MPI_Comm comm;               /* the mesh's pipeline axis               */
    int rank, stages;            /* r and P                                */
    int chunks, chunk_layers;    /* v, and the L / (P v) blocks of each    */
    Pipeline schedule;           /* P, m, v and which schedule             */
    PipeOp *ops;                 /* this stage's operations, in order,
                                    timed by the last step                 */
    int count;                   /* how many: pipeline_ops_per_stage       */
    Slot *slots;
    int slot_count;              /* allocated: the schedule's peak         */
    int in_use, peak;            /* held now, and the most this step       */
    double slot_bytes;           /* what one slot holds                    */
    Message *messages;           /* the sends, finished or in flight       */
    int message_count;
    size_t message_size;         /* numbers in one: B T C (a t-th of the
                                    rows with sequence parallelism)        */
    size_t message_at;           /* where this rank's rows start in the
                                    stream: 0 but with sequence parallelism */
    PipelineTrace trace;
    int traced;                  /* steps handed to it                     */
} PipelineStage;
#endif
