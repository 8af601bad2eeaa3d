/* Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

static void print_closed_form(FILE *out, const Pipeline *p)
{
    double P = p->stages, m = p->micro_batches, v = p->chunks;
    double closed = bubble_over_compute_closed(p->schedule, p->stages,
                                               p->micro_batches, p->chunks,
                                               p->backward_ratio,
                                               p->weight_share);
    if (p->schedule == SCHEDULE_INTERLEAVED) {
        fprintf(out, "closed form       = (p − 1)/(v m) = %s/%s = %s %% "
                "of compute\n", grouped(P - 1).s, grouped(v * m).s,
                sig(100 * closed, 3).s);
    } else if (p->schedule == SCHEDULE_ZB_H1) {
        double W = p->weight_share * p->backward_ratio;
        double B = p->backward_ratio - W;
        double idle = (P - 1) * fmax(1 + B - W, fmax(1, B));
        fprintf(out, "closed form       = %s / (m (F + B + W) + idle)%s\n"
                "                  = %s/%s = %s %% of the step, %s %% of "
                "compute\n", 1 + B - W >= fmax(1, B) ? "(p − 1)(F + B − W)"
                : B > 1 ? "(p − 1) B" : "(p − 1) F",
                m >= P ? "" : ", for m ≥ p only", sig(idle, 4).s,
                sig(m * (1 + B + W) + idle, 4).s,
                sig(100 * bubble_fraction_closed(p->schedule, p->stages,
                        p->micro_batches, 1, p->backward_ratio,
                        p->weight_share), 3).s,
                sig(100 * closed, 3).s);
    } else {
        fprintf(out, "closed form       = (p − 1)/(m + p − 1) = %s/%s = %s %% "
                "of the step\n                  = (p − 1)/m = %s/%s = %s %% "
                "of compute\n", grouped(P - 1).s, grouped(m + P - 1).s,
                sig(100 * (P - 1) / (m + P - 1), 3).s, grouped(P - 1).s,
                grouped(m).s, sig(100 * closed, 3).s);
    }
}

static void print_pipeline(FILE *out, const Pipeline *p)
{
    double P = p->stages, m = p->micro_batches, v = p->chunks;
    fprintf(out, "fleet pipeline: %s, %s, %s",
            counted(P, "stage", "stages").s,
            counted(m, "micro-batch", "micro-batches").s,
            (const char *[]){ "GPipe", "1F1B", "interleaved",
                              "ZB-H1" }[p->schedule]);
    if (p->schedule == SCHEDULE_INTERLEAVED)
        fprintf(out, " with %s per stage", counted(v, "chunk", "chunks").s);
    fprintf(out, "\nforward 1, backward %s units per micro-batch per stage",
            sig(p->backward_ratio, 3).s);
    if (p->schedule == SCHEDULE_ZB_H1)
        fprintf(out, " (B %s, W %s)",
                sig((1 - p->weight_share) * p->backward_ratio, 3).s,
                sig(p->weight_share * p->backward_ratio, 3).s);
    fprintf(out, "; p2p %s units\n\n", sig(p->p2p_seconds, 3).s);
    fprintf(out, "compute per stage = %s × (1 + %s) = %s units\n",
            grouped(m).s, sig(p->backward_ratio, 3).s, sig(p->compute, 4).s);
    fprintf(out, "step (simulated)  = %s units\n", sig(p->step_time, 4).s);
    fprintf(out, "idle per stage    = %s − %s = %s units\n",
            sig(p->step_time, 4).s, sig(p->compute, 4).s, sig(p->idle, 4).s);
    fprintf(out, "bubble            = %s %% of the step, %s %% of compute\n",
            sig(100 * p->bubble, 3).s, sig(100 * p->bubble_over_compute, 3).s);
    print_closed_form(out, p);
    fprintf(out, "\nstage  warm-up  peak in flight\n");
    for (int r = 0; r < p->stages; r++)
        fprintf(out, "%5d  %7d  %14s\n", r, pipeline_warmup(p, r),
                sig(pipeline_peak_in_flight(p, r), 4).s);
}
int find_schedule(const char *command, const char *name)
{
    int s = schedule_from_name(name);
    if (s < 0)
        complain(command, "--schedule: unknown schedule \"%s\" "
                 "(known: gpipe, 1f1b, interleaved, zb-h1)", name);
    return s;
}
static void report_pipeline(Report *r, const Pipeline *p)
{
    report_add(r, "pp", FIELD_COUNT, p->stages);
    report_add(r, "micro_batches", FIELD_COUNT, p->micro_batches);
    report_text(r, "schedule", schedule_name(p->schedule));
    report_add(r, "chunks", FIELD_COUNT, p->chunks);
    report_add(r, "backward_ratio", FIELD_REAL, p->backward_ratio);
    report_add(r, "weight_share", FIELD_FRACTION, p->weight_share);
    report_add(r, "p2p_seconds", FIELD_REAL, p->p2p_seconds);
    report_add(r, "compute", FIELD_REAL, p->compute);
    report_add(r, "step_time", FIELD_REAL, p->step_time);
    report_add(r, "idle", FIELD_REAL, p->idle);
    report_add(r, "bubble", FIELD_FRACTION, p->bubble);
    report_add(r, "bubble_over_compute", FIELD_FRACTION, p->bubble_over_compute);
    report_add(r, "closed_bubble", FIELD_FRACTION,
               bubble_fraction_closed(p->schedule, p->stages,
                                      p->micro_batches, p->chunks,
                                      p->backward_ratio, p->weight_share));
    report_add(r, "closed_bubble_over_compute", FIELD_FRACTION,
               bubble_over_compute_closed(p->schedule, p->stages,
                                          p->micro_batches, p->chunks,
                                          p->backward_ratio,
                                          p->weight_share));
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
                    (const char *[]){ "forward", "backward",
                                      "weight" }[o->kind],
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
        { "--schedule", OPT_NAME, 0, "gpipe, 1f1b, interleaved or zb-h1", 0,
          "1f1b", 0 },
        { "--chunks", OPT_COUNT, 64,
          "model chunks v per stage (interleaved only, at least 2)", 0, NULL, 0 },
        { "--backward-ratio", OPT_NUMBER, 100,
          "time of a backward ÷ time of a forward", 2, NULL, 0 },
        { "--weight-share", OPT_NUMBER, 1,
          "zb-h1: the weight gradient's share of the backward's time",
          WEIGHT_SHARE_DEFAULT, NULL, 0 },
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
    if (schedule != SCHEDULE_ZB_H1 && option_given(options, "--weight-share")) {
        complain(command, "--weight-share: only zb-h1 splits the backward into "
                 "B and W; give --schedule zb-h1 or drop --weight-share");
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
        .weight_share = option_number(options, "--weight-share"),
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
