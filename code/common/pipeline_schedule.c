/* Tangled from chapters/05-layout.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_schedule.h"

static const char *const schedule_names[] = { "gpipe", "1f1b", "interleaved",
                                              "zb-h1" };

const char *schedule_name(Schedule s)
{
    return schedule_names[s];
}

int schedule_from_name(const char *name)
{
    for (int s = 0; s < (int)(sizeof schedule_names / sizeof *schedule_names);
         s++)
        if (strcmp(schedule_names[s], name) == 0)
            return s;
    return -1;
}
/* The k-th forward (or backward) of a stage in the interleaved order:
   groups of p micro-batches, each group through every chunk in turn. */
static PipeOp interleaved_op(const Pipeline *p, PipeOpKind kind, int k)
{
    int per_group = p->stages * p->chunks;
    int group = k / per_group, within = k % per_group;
    int first = group * p->stages;
    int size = p->micro_batches - first < p->stages
             ? p->micro_batches - first : p->stages;   /* a short last group */
    int chunk = within / size;
    if (kind == PIPE_BACKWARD)
        chunk = p->chunks - 1 - chunk;        /* backwards go chunks down */
    return (PipeOp){ kind, first + within % size, chunk, 0, 0 };
}

static PipeOp nth_op(const Pipeline *p, PipeOpKind kind, int k)
{
    if (p->schedule == SCHEDULE_INTERLEAVED)
        return interleaved_op(p, kind, k);
    return (PipeOp){ kind, k, 0, 0, 0 };
}

int pipeline_ops_per_stage(const Pipeline *p)
{
    if (p->schedule == SCHEDULE_ZB_H1)
        return 3 * p->micro_batches;                 /* F, B and W of each */
    return 2 * p->micro_batches * p->chunks;
}

/* Forwards stage r runs before it first alternates with a backward. */
int pipeline_warmup(const Pipeline *p, int r)
{
    int total = p->micro_batches * p->chunks;
    int w = p->schedule == SCHEDULE_GPIPE ? total
          : p->schedule == SCHEDULE_INTERLEAVED
          ? 2 * (p->stages - r - 1) + (p->chunks - 1) * p->stages
          : p->stages - r - 1;                          /* 1F1B and zb-h1 */
    return w < total ? w : total;
}

/* Append the k-th backward to ops[n..]; in zb-h1 the weight gradient of
   the micro-batch r before it follows, so that stage r holds back r. */
static int append_backward(const Pipeline *p, int r, PipeOp *ops, int n,
                           int k)
{
    ops[n++] = nth_op(p, PIPE_BACKWARD, k);
    if (p->schedule == SCHEDULE_ZB_H1 && k >= r)
        ops[n++] = (PipeOp){ PIPE_WEIGHT, k - r, 0, 0, 0 };
    return n;
}

void pipeline_order(const Pipeline *p, int r, PipeOp *ops)
{
    int total = p->micro_batches * p->chunks, n = 0;
    int warmup = pipeline_warmup(p, r), f = 0, b = 0;
    while (f < warmup)
        ops[n++] = nth_op(p, PIPE_FORWARD, f++);
    while (f < total) {                             /* one forward, one back */
        ops[n++] = nth_op(p, PIPE_FORWARD, f++);
        n = append_backward(p, r, ops, n, b++);
    }
    while (b < total)                                       /* the drain */
        n = append_backward(p, r, ops, n, b++);
    if (p->schedule == SCHEDULE_ZB_H1)        /* the weight gradients held */
        for (int j = total > r ? total - r : 0; j < total; j++)
            ops[n++] = (PipeOp){ PIPE_WEIGHT, j, 0, 0, 0 };
}
/* How long op i of stage r (o) takes. */
static double op_duration(const Pipeline *p, int r, int i, const PipeOp *o)
{
    if (p->op_seconds != NULL)
        return p->op_seconds[r * p->per_stage + i];
    double forward = p->chunk_time != NULL
                   ? p->chunk_time[o->chunk * p->stages + r] : 1.0 / p->chunks;
    double backward = p->backward_ratio * forward;
    if (o->kind == PIPE_FORWARD)
        return forward;
    if (p->schedule != SCHEDULE_ZB_H1)
        return backward;
    return (o->kind == PIPE_WEIGHT ? p->weight_share
                                   : 1 - p->weight_share) * backward;
}

/* When the input of o on stage r is available, or -1 if not yet produced.
   done[kind][virtual stage][micro-batch] holds end times, -1 until run. */
static double input_ready(const Pipeline *p, const double *done, int r,
                          const PipeOp *o)
{
    int virtual_stages = p->stages * p->chunks, m = p->micro_batches;
    int s = o->chunk * p->stages + r;
    int from = s, kind = PIPE_BACKWARD;   /* W: its own stage's B          */
    if (o->kind == PIPE_FORWARD) {
        if (s == 0)
            return 0;                          /* the data loader: at once */
        from = s - 1, kind = PIPE_FORWARD;
    } else if (o->kind == PIPE_BACKWARD) {
        if (s + 1 == virtual_stages)
            kind = PIPE_FORWARD;               /* the loss: own forward    */
        else
            from = s + 1;
    }
    double end = done[(kind * virtual_stages + from) * m + o->micro_batch];
    if (end < 0)
        return -1;
    return end + (from % p->stages == r ? 0 : p->p2p_seconds);
}

/* 0 on success, -1 if the schedule deadlocks. */
int simulate_pipeline(Pipeline *p)
{
    int P = p->stages, vs = P * p->chunks, m = p->micro_batches;
    int kinds = 3;                           /* forward, backward, weight */
    p->per_stage = pipeline_ops_per_stage(p);
    p->ops = malloc(sizeof *p->ops * P * p->per_stage);
    double *done = malloc(sizeof *done * kinds * vs * m);
    int *next = calloc(P, sizeof *next);
    double *free_at = calloc(P, sizeof *free_at);
    for (int i = 0; i < kinds * vs * m; i++)
        done[i] = -1;
    for (int r = 0; r < P; r++)
        pipeline_order(p, r, p->ops + r * p->per_stage);
    int left = P * p->per_stage, moved = 1;
    while (left > 0 && moved) {
        moved = 0;
        for (int r = 0; r < P; r++) {
            while (next[r] < p->per_stage) {
                PipeOp *o = &p->ops[r * p->per_stage + next[r]];
                double ready = input_ready(p, done, r, o);
                if (ready < 0)
                    break;                     /* wait for another stage   */
                o->start = fmax(ready, free_at[r]);
                o->end = free_at[r] = o->start
                                    + op_duration(p, r, next[r], o);
                int s = o->chunk * P + r;
                done[(o->kind * vs + s) * m + o->micro_batch] = o->end;
                next[r]++, left--, moved = 1;
            }
        }
    }
    p->step_time = 0;
    p->compute = 0;                 /* the busiest stage's, m (1 + R) when
                                       the stages are equal              */
    for (int r = 0; r < P; r++) {
        double busy = 0;
        for (int i = 0; i < p->per_stage; i++)
            busy += op_duration(p, r, i, &p->ops[r * p->per_stage + i]);
        p->step_time = fmax(p->step_time, free_at[r]);
        p->compute = fmax(p->compute, busy);
    }
    p->idle = p->step_time - p->compute;
    p->bubble = p->idle / p->step_time;
    p->bubble_over_compute = p->idle / p->compute;
    free(done), free(next), free(free_at);
    return left == 0 ? 0 : -1;
}
double pipeline_peak_in_flight(const Pipeline *p, int r)
{
    PipeOpKind frees = p->schedule == SCHEDULE_ZB_H1 ? PIPE_WEIGHT
                                                     : PIPE_BACKWARD;
    const PipeOp *ops = p->ops + r * p->per_stage;
    int held = 0, most = 0;
    for (int i = 0; i < p->per_stage; i++) {
        held += ops[i].kind == PIPE_FORWARD ? 1 : ops[i].kind == frees ? -1
                                                                       : 0;
        if (held > most)
            most = held;
    }
    return (double)most / p->chunks;
}
/* A stage's idle time and its compute by the closed forms, in forward
   times: F = 1, B = R (zb-h1: B = (1 - w) R and W = w R, and the fill
   (p - 1) F or the drain (p - 1) B when either is longer). */
static void closed_times(Schedule s, int p, int m, int v,
                         double backward_ratio, double weight_share,
                         double *idle, double *compute)
{
    double F = 1, B = backward_ratio, W = 0;
    if (s == SCHEDULE_ZB_H1)
        W = weight_share * backward_ratio, B -= W;
    *compute = m * (F + B + W);
    *idle = s == SCHEDULE_INTERLEAVED ? (p - 1) * (F + B) / v
          : s == SCHEDULE_ZB_H1 ? (p - 1) * fmax(F + B - W, fmax(F, B))
          : (p - 1) * (F + B);
}

double bubble_fraction_closed(Schedule s, int p, int m, int v,
                              double backward_ratio, double weight_share)
{
    double idle, compute;
    closed_times(s, p, m, v, backward_ratio, weight_share, &idle, &compute);
    return idle / (idle + compute);
}

double bubble_over_compute_closed(Schedule s, int p, int m, int v,
                                  double backward_ratio, double weight_share)
{
    double idle, compute;
    closed_times(s, p, m, v, backward_ratio, weight_share, &idle, &compute);
    return idle / compute;
}
