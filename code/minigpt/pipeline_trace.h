/* Tangled from chapters/98b-trace-plumbing.nw; edit the chapter, not this file. */
#ifndef PIPELINE_TRACE_H
#define PIPELINE_TRACE_H

#include <stdio.h>
#include <mpi.h>

#include "../common/cli.h"
#include "../common/pipeline_schedule.h"

typedef struct {
    int step;             /* the training step                           */
    double measured;      /* 1 - busy / (P x span)                       */
    double replayed;      /* the same for the replay                     */
    double transfer;      /* s: a message's time between stages          */
    double replayed_transfer;  /* the replay with that time per message  */
    double span;          /* s: earliest start to latest end             */
    double forward, backward, weight;  /* s: mean duration of each kind  */
    double imbalance;     /* busiest stage's busy time / the mean - 1    */
} TraceStep;

enum { TRACE_TEXT = 512 };   /* room for a number per stage, as text */

typedef struct PipelineTrace {
    Pipeline schedule;    /* P, M, V and the schedule; ops unused        */
    MPI_Comm pp;          /* the pipeline axis                           */
    int rank;             /* in pp: rank 0 gathers and computes          */
    double offset;        /* s: this rank's clock minus rank 0's         */
    int per_stage;        /* operations per stage per step               */
    int writes;           /* 1 on the one rank that writes --trace       */
    Output csv;           /* --trace, in a temporary file until freed    */
    PipeOp *all;          /* (P, per_stage) on rank 0: one step's ops    */
    int *slots;           /* (P) on rank 0: one step's peak slots        */
    int *peak_slots;      /* (P) on rank 0: the most over all steps      */
    double *order_peak;   /* (P) the schedule's peak in flight           */
    TraceStep *steps;     /* (count) on rank 0, in the order run         */
    int count, room;
    char peak_text[TRACE_TEXT];        /* measured, per stage  */
    char order_peak_text[TRACE_TEXT];  /* the schedule's       */
} PipelineTrace;

/* schedule: P, M, V, the schedule (ops unused); csv: --trace path or
   NULL (NULL on every pipeline but the one whose dp and tp coordinates
   are 0); collective over the pipeline axis pp. 0, or 2 after a line. */
int  pipeline_trace_init(PipelineTrace *t, const Pipeline *schedule,
                         MPI_Comm pp, const char *csv);
/* At the start of each step, on every rank of pp, in place of a
   barrier: the step's start on this rank's MPI_Wtime, the same instant
   on every rank (the moment rank 0 left the barrier). */
double pipeline_trace_start(const PipelineTrace *t);
/* After each step, on every rank of pp: this rank's ops in executed
   order (pipeline_ops_per_stage of them, start/end in seconds on the
   common clock) and the most slots it held at once. Gathers to pp
   rank 0, which computes the step's measured bubble (idle fraction of
   P x step time), the replayed bubble (simulate_pipeline with each op's
   measured duration and no waiting for anything but the schedule's
   dependencies), and appends the step's rows to the CSV. */
void pipeline_trace_step(PipelineTrace *t, const PipeOp *mine,
                         int peak_slots, int step);
/* Medians over the timed steps (after the warm-up) and the theory, on
   pp rank 0, into the report: bubble_measured, bubble_replayed,
   bubble_theory, peak_inflight (per stage as well), ... */
void pipeline_trace_report(const PipelineTrace *t, Report *r);
/* The same as a person reads it, from the report's fields. */
void pipeline_trace_print(FILE *out, const Report *r);
/* Frees the trace and moves the --trace CSV into place: 0, or 2 after a
   line (on the rank that writes it). */
int  pipeline_trace_free(PipelineTrace *t);

/* The idle fraction of P x the step's span, for P * per_stage ops; the
   span (latest end - earliest start) into *span when it is not NULL. */
double trace_bubble(const PipeOp *ops, int stages, int per_stage,
                    double *span);
/* The bubble of the schedule run with each op's measured duration and
   nothing else to wait for but p2p_seconds per message; -1 if the ops
   are not the schedule's. */
double trace_replay(const Pipeline *schedule, const PipeOp *ops,
                    double p2p_seconds);
/* A message's time between stages, as the trace shows it (a median). */
double trace_transfer(const PipeOp *ops, int stages, int chunks,
                      int per_stage);
/* The closed form for the schedule, from the measured backward ratio
   (B + W) / F and W's share of the backward, W / (B + W). */
double trace_theory(const Pipeline *schedule, double backward_ratio,
                    double weight_share);
#endif
