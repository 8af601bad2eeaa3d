/* Tangled from chapters/09-tensor-parallel.nw, chapters/95-parallel-plumbing.nw, chapters/99-mesh-plumbing.nw and chapters/99d-hierarchical.nw; edit the chapters, not this file. */
#ifndef MESH_H
#define MESH_H

#include <stddef.h>
#include <stdio.h>
#include <mpi.h>

typedef struct {
    MPI_Comm world;               /* every rank of the run            */
    int rank, ranks;              /* in world                         */
    int tp, pp, dp;               /* axis sizes, tp * pp * dp == ranks */
    int tp_rank, pp_rank, dp_rank;    /* this rank's coordinates      */
    MPI_Comm tp_comm, pp_comm, dp_comm;   /* one communicator per axis */
    int prev, next;   /* pipeline neighbours (world ranks), MPI_PROC_NULL
                         at the ends                                  */
} Mesh;

/* 0, or 2 with a one-line reason in why (same answer on every rank). */
int mesh_init(Mesh *mesh, MPI_Comm world, int tp, int pp, int dp,
              char *why, size_t why_size);
void mesh_free(Mesh *mesh);
/* The parts of a step that a rank's clock keeps; compute comes from the
   model's tally, and what is left of the step is other. */
typedef enum { PART_TP, PART_PP, PART_DP, PART_BUBBLE, PART_OPTIMIZER,
               STEP_PARTS } StepPart;
/* A step's breakdown: the clock's parts, then the model's compute, what is
   left of the step (other), and the step itself. */
enum { PART_COMPUTE = STEP_PARTS, PART_OTHER, PART_STEP, BREAKDOWN_PARTS };
/* Add seconds to one part of this rank's step. */
void step_clock_add(StepPart part, double seconds);
/* Add the time since `started` (an MPI_Wtime) to part; returns now. */
double step_clock_stop(StepPart part, double started);
/* The seconds a part has had since the last reset. */
double step_clock_seconds(StepPart part);
/* The seconds of waiting on other ranks (tp, pp, dp and the bubble) since
   the last reset: what an operation timed around a wait takes back out. */
double step_clock_waiting(void);
void step_clock_reset(void);
/* The part's name in reports: "tp", "pp", "dp", "bubble", "optimizer". */
const char *step_part_name(StepPart part);
/* 1 after one line in why when tp × pp × dp is not `ranks` (or an axis is
   not positive); 0 when the layout fits. */
int mesh_refuses(int ranks, int tp, int pp, int dp, char *why,
                 size_t why_size);
/* The largest status over the ranks of comm: every rank learns if one
   failed. */
int ranks_agree(int status, MPI_Comm comm);
/* MPI's name for a floating-point number of `bytes` bytes, 4 or 8. */
MPI_Datatype float_type(size_t bytes);
/* Bytes this process has sent through MPI_Sendrecv. */
unsigned long long mpi_bytes_sent(void);
/* From now on, every MPI_Sendrecv from one group of `group` consecutive
   world ranks to another first sleeps delay_s plus its bytes at
   bytes_per_second (0: no limit). group 0: no groups, no sleeps. */
void slow_link_between_groups(int group, double delay_s,
                              double bytes_per_second);
/* Every rank's coordinates and communicators, one line a rank, printed
   by world rank 0 in rank order. */
void mesh_print(const Mesh *mesh, FILE *out);
#endif
