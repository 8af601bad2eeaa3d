/* Tangled from chapters/05-layout.nw; edit the chapter, not this file. */
#ifndef PIPELINE_SCHEDULE_H
#define PIPELINE_SCHEDULE_H

typedef enum { SCHEDULE_GPIPE, SCHEDULE_1F1B, SCHEDULE_INTERLEAVED,
               SCHEDULE_ZB_H1 } Schedule;
/* PIPE_BACKWARD is the whole backward pass, except in zb-h1, where it is
   the input-gradient half and PIPE_WEIGHT the weight-gradient half. */
typedef enum { PIPE_FORWARD, PIPE_BACKWARD, PIPE_WEIGHT } PipeOpKind;

typedef struct {
    PipeOpKind kind;
    int micro_batch;          /* 0 .. m-1                                  */
    int chunk;                /* 0 .. v-1                                  */
    double start, end;        /* filled in by the simulation               */
} PipeOp;

/* W's share of the backward's time when the backward's two matrix
   multiplies per weight cost the same FLOPs (the text says why) */
#define WEIGHT_SHARE_DEFAULT 0.5

typedef struct {
    /* what is given */
    Schedule schedule;
    int stages;               /* p                                         */
    int micro_batches;        /* m                                         */
    int chunks;               /* v: 1 unless interleaved                   */
    double backward_ratio;    /* R: a backward takes R forwards' time      */
    double weight_share;      /* zb-h1: W's share of the backward's time   */
    double p2p_seconds;       /* X: time to send an activation to the next
                                 stage                                     */
    const double *chunk_time; /* forward time of chunk c of stage r at
                                 [c * p + r], or NULL: every chunk 1/v     */
    const double *op_seconds; /* when not NULL: op i of stage r lasts
                                 op_seconds[r * per_stage + i] (a replay
                                 of measured durations)                    */
    /* the timeline: stage r's operations are ops[r * per_stage ...]       */
    PipeOp *ops;
    int per_stage;            /* 2 m v; 3 m for zb-h1                      */
    /* what follows */
    double step_time;         /* when the last operation ends              */
    double compute;           /* busy time of the busiest stage: m (1 + R)
                                 when the stages are equal                 */
    double idle;              /* step_time - compute                       */
    double bubble;            /* idle ÷ step_time                          */
    double bubble_over_compute; /* idle ÷ compute                          */
} Pipeline;
/* Operations each stage runs in a step: 2 m v; 3 m for zb-h1. */
int pipeline_ops_per_stage(const Pipeline *p);
/* Stage r's operations, in the order it runs them, into
   ops[0 .. pipeline_ops_per_stage). */
void pipeline_order(const Pipeline *p, int r, PipeOp *ops);
/* Forwards stage r runs before its first backward. */
int pipeline_warmup(const Pipeline *p, int r);
/* Fill in p->ops (malloc'd: the caller frees them), per_stage and the
   times; 0, or -1 if the schedule deadlocks. */
int simulate_pipeline(Pipeline *p);
/* The most micro-batches stage r of a simulated p held at once (units of
   the stage's layers): each from its F until its W (zb-h1) or its B. */
double pipeline_peak_in_flight(const Pipeline *p, int r);
/* "gpipe", "1f1b", "interleaved", "zb-h1", and back; -1 when unknown. */
const char *schedule_name(Schedule s);
int schedule_from_name(const char *name);
/* The closed forms with nothing on the wire (zb-h1: for m >= p): idle
   time ÷ step time, and idle time ÷ compute time. */
double bubble_fraction_closed(Schedule s, int p, int m, int v,
                              double backward_ratio, double weight_share);
double bubble_over_compute_closed(Schedule s, int p, int m, int v,
                                  double backward_ratio, double weight_share);
#endif
