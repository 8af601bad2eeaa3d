/* Tangled from chapters/05-layout.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

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

/* Forwards stage r runs before it first alternates with a backward. */
int pipeline_warmup(const Pipeline *p, int r)
{
    int total = p->micro_batches * p->chunks;
    int w = p->schedule == SCHEDULE_GPIPE ? total
          : p->schedule == SCHEDULE_1F1B ? p->stages - r - 1
          : 2 * (p->stages - r - 1) + (p->chunks - 1) * p->stages;
    return w < total ? w : total;
}

static void order_stage(const Pipeline *p, int r, PipeOp *ops)
{
    int total = p->micro_batches * p->chunks, n = 0;
    int warmup = pipeline_warmup(p, r), f = 0, b = 0;
    while (f < warmup)
        ops[n++] = nth_op(p, PIPE_FORWARD, f++);
    while (f < total) {                             /* one forward, one back */
        ops[n++] = nth_op(p, PIPE_FORWARD, f++);
        ops[n++] = nth_op(p, PIPE_BACKWARD, b++);
    }
    while (b < total)                                       /* the drain */
        ops[n++] = nth_op(p, PIPE_BACKWARD, b++);
}
static double op_duration(const Pipeline *p, int r, const PipeOp *o)
{
    double forward = p->chunk_time != NULL
                   ? p->chunk_time[o->chunk * p->stages + r] : 1.0 / p->chunks;
    return (o->kind == PIPE_FORWARD ? 1 : p->backward_ratio) * forward;
}

/* When the input of o on stage r is available, or -1 if not yet produced.
   done[kind][virtual stage][micro-batch] holds end times, -1 until run. */
static double input_ready(const Pipeline *p, const double *done, int r,
                          const PipeOp *o)
{
    int virtual_stages = p->stages * p->chunks, m = p->micro_batches;
    int s = o->chunk * p->stages + r;
    int from = o->kind == PIPE_FORWARD ? s - 1 : s + 1;
    int kind = o->kind;
    if (o->kind == PIPE_FORWARD && from < 0)
        return 0;                              /* the data loader: at once */
    if (o->kind == PIPE_BACKWARD && from == virtual_stages) {
        from = s;                              /* the loss: own forward    */
        kind = PIPE_FORWARD;
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
    p->per_stage = 2 * m * p->chunks;
    p->ops = malloc(sizeof *p->ops * P * p->per_stage);
    double *done = malloc(sizeof *done * 2 * vs * m);
    int *next = calloc(P, sizeof *next);
    double *free_at = calloc(P, sizeof *free_at);
    for (int i = 0; i < 2 * vs * m; i++)
        done[i] = -1;
    for (int r = 0; r < P; r++)
        order_stage(p, r, p->ops + r * p->per_stage);
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
                o->end = free_at[r] = o->start + op_duration(p, r, o);
                int s = o->chunk * P + r;
                done[(o->kind * vs + s) * m + o->micro_batch] = o->end;
                next[r]++, left--, moved = 1;
            }
        }
    }
    p->step_time = 0;
    for (int r = 0; r < P; r++)
        p->step_time = fmax(p->step_time, free_at[r]);
    p->compute = 0;                 /* the busiest stage's, 1 when equal */
    for (int r = 0; r < P; r++) {
        double busy = 0;
        for (int c = 0; c < p->chunks; c++)
            busy += p->chunk_time != NULL ? p->chunk_time[c * P + r]
                                          : 1.0 / p->chunks;
        p->compute = fmax(p->compute, busy);
    }
    p->compute *= m * (1 + p->backward_ratio);
    p->idle = p->step_time - p->compute;
    p->bubble = p->idle / p->step_time;
    p->bubble_over_compute = p->idle / p->compute;
    free(done), free(next), free(free_at);
    return left == 0 ? 0 : -1;
}
double pipeline_peak_in_flight(const Pipeline *p, int r)
{
    const PipeOp *ops = p->ops + r * p->per_stage;
    int held = 0, most = 0;
    for (int i = 0; i < p->per_stage; i++) {
        held += ops[i].kind == PIPE_FORWARD ? 1 : -1;
        if (held > most)
            most = held;
    }
    return (double)most / p->chunks;
}
/* Idle time ÷ compute time, as the literature writes it. */
double bubble_over_compute_closed(Schedule s, double p, double m, double v)
{
    return s == SCHEDULE_INTERLEAVED ? (p - 1) / (v * m) : (p - 1) / m;
}
static void print_pipeline(FILE *out, const Pipeline *p)
{
    double P = p->stages, m = p->micro_batches, v = p->chunks;
    fprintf(out, "fleet pipeline: %s, %s, %s",
            counted(P, "stage", "stages").s,
            counted(m, "micro-batch", "micro-batches").s,
            (const char *[]){ "GPipe", "1F1B", "interleaved" }[p->schedule]);
    if (p->schedule == SCHEDULE_INTERLEAVED)
        fprintf(out, " with %s per stage", counted(v, "chunk", "chunks").s);
    fprintf(out, "\nforward 1, backward %s units per micro-batch per stage; "
            "p2p %s units\n\n", sig(p->backward_ratio, 3).s,
            sig(p->p2p_seconds, 3).s);
    fprintf(out, "compute per stage = %s × (1 + %s) = %s units\n",
            grouped(m).s, sig(p->backward_ratio, 3).s, sig(p->compute, 4).s);
    fprintf(out, "step (simulated)  = %s units\n", sig(p->step_time, 4).s);
    fprintf(out, "idle per stage    = %s − %s = %s units\n",
            sig(p->step_time, 4).s, sig(p->compute, 4).s, sig(p->idle, 4).s);
    fprintf(out, "bubble            = %s %% of the step, %s %% of compute\n",
            sig(100 * p->bubble, 3).s, sig(100 * p->bubble_over_compute, 3).s);
    double closed = bubble_over_compute_closed(p->schedule, P, m, v);
    if (p->schedule == SCHEDULE_INTERLEAVED)
        fprintf(out, "closed form       = (p − 1)/(v m) = %s/%s = %s %% "
                "of compute\n", grouped(P - 1).s, grouped(v * m).s,
                sig(100 * closed, 3).s);
    else
        fprintf(out, "closed form       = (p − 1)/(m + p − 1) = %s/%s = %s %% "
                "of the step\n                  = (p − 1)/m = %s/%s = %s %% "
                "of compute\n", grouped(P - 1).s, grouped(m + P - 1).s,
                sig(100 * (P - 1) / (m + P - 1), 3).s, grouped(P - 1).s,
                grouped(m).s, sig(100 * closed, 3).s);
    fprintf(out, "\nstage  warm-up  peak in flight\n");
    for (int r = 0; r < p->stages; r++)
        fprintf(out, "%5d  %7d  %14s\n", r, pipeline_warmup(p, r),
                sig(pipeline_peak_in_flight(p, r), 4).s);
}
int find_schedule(const char *command, const char *name)
{
    if (strcmp(name, "gpipe") == 0)
        return SCHEDULE_GPIPE;
    if (strcmp(name, "1f1b") == 0)
        return SCHEDULE_1F1B;
    if (strcmp(name, "interleaved") == 0)
        return SCHEDULE_INTERLEAVED;
    complain(command, "--schedule: unknown schedule \"%s\" "
             "(known: gpipe, 1f1b, interleaved)", name);
    return -1;
}
static void report_pipeline(Report *r, const Pipeline *p)
{
    report_add(r, "pp", FIELD_COUNT, p->stages);
    report_add(r, "micro_batches", FIELD_COUNT, p->micro_batches);
    report_text(r, "schedule", schedule_name(p->schedule));
    report_add(r, "chunks", FIELD_COUNT, p->chunks);
    report_add(r, "backward_ratio", FIELD_REAL, p->backward_ratio);
    report_add(r, "p2p_seconds", FIELD_REAL, p->p2p_seconds);
    report_add(r, "compute", FIELD_REAL, p->compute);
    report_add(r, "step_time", FIELD_REAL, p->step_time);
    report_add(r, "idle", FIELD_REAL, p->idle);
    report_add(r, "bubble", FIELD_FRACTION, p->bubble);
    report_add(r, "bubble_over_compute", FIELD_FRACTION, p->bubble_over_compute);
    report_add(r, "closed_bubble_over_compute", FIELD_FRACTION,
               bubble_over_compute_closed(p->schedule, p->stages,
                                          p->micro_batches, p->chunks));
    report_add(r, "peak_in_flight_first_stage", FIELD_REAL,
               pipeline_peak_in_flight(p, 0));
}
static void print_trace(FILE *out, const Pipeline *p)
{
    fprintf(out, "stage,op,micro_batch,chunk,start,end\n");
    for (int r = 0; r < p->stages; r++)
        for (int i = 0; i < p->per_stage; i++) {
            const PipeOp *o = &p->ops[r * p->per_stage + i];
            fprintf(out, "%d,%s,%d,%d,%.17g,%.17g\n", r,
                    o->kind == PIPE_FORWARD ? "forward" : "backward",
                    o->micro_batch, o->chunk, o->start, o->end);
        }
}

static void print_stage_csv(FILE *out, const Pipeline *p)
{
    fprintf(out, "stage,warmup,peak_in_flight,in_flight_predicted\n");
    for (int r = 0; r < p->stages; r++)
        fprintf(out, "%d,%d,%.17g,%.17g\n", r, pipeline_warmup(p, r),
                pipeline_peak_in_flight(p, r),
                micro_batches_in_flight(p->schedule, p->stages,
                                        p->micro_batches, p->chunks, r));
}
int pipeline_main(int argc, char **argv)
{
    const char *command = "fleet pipeline";
    Option options[] = {
        { "--pp", OPT_COUNT, 1024, "pipeline stages p", 8, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 4096,
          "micro-batches m per pipeline per step", 32, NULL, 0 },
        { "--schedule", OPT_NAME, 0, "gpipe, 1f1b or interleaved", 0,
          "1f1b", 0 },
        { "--chunks", OPT_COUNT, 64,
          "model chunks v per stage (interleaved only, at least 2)", 0, NULL, 0 },
        { "--backward-ratio", OPT_NUMBER, 100,
          "time of a backward ÷ time of a forward", 2, NULL, 0 },
        { "--p2p-seconds", OPT_NUMBER, 1e6,
          "time to send an activation to the next stage, in forward units "
          "(default 0)", 0, NULL, 0 },
        { "--trace", OPT_SWITCH, 0,
          "print the timeline as CSV (stage,op,micro_batch,chunk,start,end)",
          0, NULL, 0 },
        { "--stages", OPT_SWITCH, 0,
          "print CSV of each stage's warm-up and peak micro-batches in flight",
          0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "The timeline of a pipeline schedule by discrete-event simulation, "
        "and its bubble.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    int schedule = find_schedule(command, option_text(options, "--schedule"));
    if (schedule < 0)
        return 2;
    int chunks = option_given(options, "--chunks")
               ? (int)option_number(options, "--chunks") : 1;
    if (schedule == SCHEDULE_INTERLEAVED && chunks < 2) {
        complain(command, "--chunks: the interleaved schedule needs at least 2 "
                 "chunks per stage; got %d", chunks);
        return 2;
    }
    if (schedule != SCHEDULE_INTERLEAVED && chunks != 1) {
        complain(command, "--chunks: only the interleaved schedule splits a stage "
                 "into chunks; give --schedule interleaved or drop --chunks");
        return 2;
    }
    if (option_given(options, "--trace") && option_given(options, "--stages")) {
        complain(command, "--trace and --stages are alternatives; give one");
        return 2;
    }
    if ((option_given(options, "--trace") || option_given(options, "--stages"))
        && report_requested(options)) {
        complain(command, "--trace and --stages print CSV of their own; "
                 "drop --json, --csv or --latex");
        return 2;
    }
    Pipeline p = {
        .schedule = (Schedule)schedule,
        .stages = (int)option_number(options, "--pp"),
        .micro_batches = (int)option_number(options, "--micro-batches"),
        .chunks = chunks,
        .backward_ratio = option_number(options, "--backward-ratio"),
        .p2p_seconds = option_number(options, "--p2p-seconds"),
    };
    if (simulate_pipeline(&p) != 0) {
        complain(command, "--micro-batches: %s deadlocks (m = %d, p = %d)",
                 schedule_name(p.schedule), p.micro_batches, p.stages);
        free(p.ops);
        return 2;
    }
    Output out;
    if (output_open(&out, command, options) != 0) {
        free(p.ops);
        return 2;
    }
    if (option_given(options, "--trace")) {
        print_trace(out.file, &p);
    } else if (option_given(options, "--stages")) {
        print_stage_csv(out.file, &p);
    } else if (report_requested(options)) {
        Report r = { .count = 0 };
        report_pipeline(&r, &p);
        print_report(out.file, &r, options);
    } else {
        print_pipeline(out.file, &p);
    }
    free(p.ops);
    return output_commit(&out, command);
}
