/* Tangled from chapters/10b-measured.nw and chapters/98b-trace-plumbing.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"
#include "pipeline_trace.h"

enum { CLOCK_TRIPS = 64 };

/* This rank's clock minus the clock of rank 0 of pp (0 on rank 0). */
static double clock_offset(MPI_Comm pp, int rank, int ranks)
{
    double offset = 0;
    for (int r = 1; r < ranks; r++) {
        double shortest = INFINITY, best = 0, sent, theirs;
        for (int k = 0; k < CLOCK_TRIPS; k++) {
            if (rank == 0) {
                sent = MPI_Wtime();
                MPI_Send(&sent, 1, MPI_DOUBLE, r, 0, pp);
                MPI_Recv(&theirs, 1, MPI_DOUBLE, r, 0, pp,
                         MPI_STATUS_IGNORE);
                double back = MPI_Wtime();
                if (back - sent < shortest)
                    shortest = back - sent, best = theirs - (sent + back) / 2;
            } else if (rank == r) {
                MPI_Recv(&sent, 1, MPI_DOUBLE, 0, 0, pp, MPI_STATUS_IGNORE);
                theirs = MPI_Wtime();
                MPI_Send(&theirs, 1, MPI_DOUBLE, 0, 0, pp);
            }
        }
        if (fabs(best) <= shortest / 2)
            best = 0;               /* within its own error: one clock */
        if (rank == 0)
            MPI_Send(&best, 1, MPI_DOUBLE, r, 1, pp);
        else if (rank == r)
            MPI_Recv(&offset, 1, MPI_DOUBLE, 0, 1, pp, MPI_STATUS_IGNORE);
    }
    return offset;
}

double pipeline_trace_start(const PipelineTrace *t)
{
    MPI_Barrier(t->pp);
    double start = MPI_Wtime();                 /* on rank 0's clock   */
    MPI_Bcast(&start, 1, MPI_DOUBLE, 0, t->pp);
    return start + t->offset;                   /* the same, on mine   */
}
/* 1 - busy / (P x span): the share of P stages' time over the step that
   no stage spent computing. */
double trace_bubble(const PipeOp *ops, int stages, int per_stage,
                    double *span)
{
    double first = ops[0].start, last = ops[0].end, busy = 0;
    for (int i = 0; i < stages * per_stage; i++) {
        first = fmin(first, ops[i].start);
        last = fmax(last, ops[i].end);
        busy += ops[i].end - ops[i].start;
    }
    if (span != NULL)
        *span = last - first;
    return last > first ? 1 - busy / (stages * (last - first)) : 0;
}
/* The measured op that is o: the same kind, micro-batch and chunk. */
static const PipeOp *measured_op(const PipeOp *ops, int n, const PipeOp *o)
{
    for (int i = 0; i < n; i++)
        if (ops[i].kind == o->kind && ops[i].micro_batch == o->micro_batch
            && ops[i].chunk == o->chunk)
            return &ops[i];
    return NULL;
}

double trace_replay(const Pipeline *schedule, const PipeOp *ops,
                    double p2p_seconds)
{
    Pipeline replay = *schedule;
    int P = replay.stages, n = pipeline_ops_per_stage(&replay), found = 1;
    double *seconds = malloc(sizeof *seconds * (size_t)(P * n)); /* (P, n) */
    PipeOp *order = malloc(sizeof *order * (size_t)n);           /* (n)    */
    if (seconds == NULL || order == NULL)
        abort();
    for (int r = 0; r < P; r++) {
        pipeline_order(&replay, r, order);
        for (int i = 0; i < n; i++) {
            const PipeOp *o = measured_op(ops + r * n, n, &order[i]);
            found = found && o != NULL;
            seconds[r * n + i] = o != NULL ? o->end - o->start : 0;
        }
    }
    replay.op_seconds = seconds;       /* each op as long as it took     */
    replay.p2p_seconds = p2p_seconds;  /* and nothing else to wait for   */
    replay.ops = NULL;
    double bubble = -1;
    if (found && simulate_pipeline(&replay) == 0)
        bubble = trace_bubble(replay.ops, P, n, NULL);
    free(replay.ops), free(seconds), free(order);
    return bubble;
}
/* The op on virtual stage s (chunk s / P of stage s % P) of this kind and
   micro-batch, among the step's (P, n) ops. */
static const PipeOp *op_on(const PipeOp *ops, int P, int n, int s,
                           PipeOpKind kind, int micro_batch)
{
    PipeOp want = { kind, micro_batch, s / P, 0, 0 };
    return measured_op(ops + (s % P) * n, n, &want);
}

/* The median of the gaps between an op's input leaving the stage that
   made it and the op's start, over the ops whose stage sat idle waiting
   for that input; 0 if no stage waited. */
double trace_transfer(const PipeOp *ops, int P, int V, int n)
{
    double *gaps = malloc(sizeof *gaps * (size_t)(P * n));      /* (P n) */
    if (gaps == NULL)
        abort();
    int count = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < n; i++) {
            const PipeOp *o = &ops[r * n + i];
            int s = o->chunk * P + r;
            int from = o->kind == PIPE_FORWARD ? s - 1
                     : o->kind == PIPE_BACKWARD ? s + 1 : -1;
            if (from < 0 || from >= P * V || from % P == r)
                continue;                  /* no message: data, loss, W */
            const PipeOp *input = op_on(ops, P, n, from, o->kind,
                                        o->micro_batch);
            double idle_since = i > 0 ? ops[r * n + i - 1].end : 0;
            if (input != NULL && idle_since <= input->end)
                gaps[count++] = o->start - input->end;
        }
    double median = median_in_place(gaps, count);
    free(gaps);
    return fmax(median, 0);      /* never less than nothing, whatever the
                                    clocks' offsets left over */
}
double trace_theory(const Pipeline *schedule, double backward_ratio,
                    double weight_share)
{
    return bubble_fraction_closed(schedule->schedule, schedule->stages,
                                  schedule->micro_batches, schedule->chunks,
                                  backward_ratio, weight_share);
}
static void kind_means(const PipelineTrace *t, TraceStep *s)
{
    double sum[3] = { 0 }, count[3] = { 0 }, busiest = 0, busy_all = 0;
    int P = t->schedule.stages;
    for (int r = 0; r < P; r++) {
        double busy = 0;
        for (int i = 0; i < t->per_stage; i++) {
            const PipeOp *o = &t->all[r * t->per_stage + i];
            sum[o->kind] += o->end - o->start;
            count[o->kind] += 1;
            busy += o->end - o->start;
        }
        busiest = fmax(busiest, busy);
        busy_all += busy;
    }
    s->forward = count[0] > 0 ? sum[0] / count[0] : 0;
    s->backward = count[1] > 0 ? sum[1] / count[1] : 0;
    s->weight = count[2] > 0 ? sum[2] / count[2] : 0;
    s->imbalance = busy_all > 0 ? busiest / (busy_all / P) - 1 : 0;
}

int pipeline_trace_init(PipelineTrace *t, const Pipeline *schedule,
                        MPI_Comm pp, const char *csv)
{
    memset(t, 0, sizeof *t);
    t->schedule = *schedule;
    t->schedule.ops = NULL;
    t->schedule.op_seconds = NULL;
    t->pp = pp;
    MPI_Comm_rank(pp, &t->rank);
    int P = schedule->stages;
    int ranks;
    MPI_Comm_size(pp, &ranks);
    t->offset = clock_offset(pp, t->rank, ranks);
    t->per_stage = pipeline_ops_per_stage(schedule);
    t->writes = csv != NULL && t->rank == 0;
    int status = 0;
    if (t->rank == 0) {
        t->all = malloc(sizeof *t->all * (size_t)(P * t->per_stage));
        t->slots = calloc((size_t)P, sizeof *t->slots);
        t->peak_slots = calloc((size_t)P, sizeof *t->peak_slots);
        t->order_peak = calloc((size_t)P, sizeof *t->order_peak);
        if (t->all == NULL || t->slots == NULL || t->peak_slots == NULL
            || t->order_peak == NULL)
            abort();
        Pipeline order = t->schedule;
        order.per_stage = t->per_stage;
        order.ops = t->all;                       /* a place to write the order */
        for (int r = 0; r < P; r++)
            pipeline_order(&order, r, order.ops + r * t->per_stage);
        int n = 0;
        for (int r = 0; r < P; r++) {
            t->order_peak[r] = pipeline_peak_in_flight(&order, r);
            n += snprintf(t->order_peak_text + n, sizeof t->order_peak_text - n,
                          "%s%g", r ? " " : "", t->order_peak[r]);
            if (n >= (int)sizeof t->order_peak_text)
                n = (int)sizeof t->order_peak_text - 1;
        }
    }
    if (t->writes) {
        status = output_open_path(&t->csv, "minigpt", "--trace", csv);
        if (status == 0)
            fprintf(t->csv.file,
                    "step,stage,kind,micro_batch,chunk,start_s,end_s\n");
        else
            t->writes = 0;
    }
    return ranks_agree(status, pp);
}
static void write_rows(PipelineTrace *t, int step)
{
    for (int r = 0; r < t->schedule.stages; r++)
        for (int i = 0; i < t->per_stage; i++) {
            const PipeOp *o = &t->all[r * t->per_stage + i];
            fprintf(t->csv.file, "%d,%d,%c,%d,%d,%.9f,%.9f\n", step, r,
                    "FBW"[o->kind], o->micro_batch, o->chunk, o->start,
                    o->end);
        }
}

void pipeline_trace_step(PipelineTrace *t, const PipeOp *mine,
                         int peak_slots, int step)
{
    int P = t->schedule.stages, bytes = (int)sizeof *mine * t->per_stage;
    MPI_Gather(mine, bytes, MPI_BYTE, t->all, bytes, MPI_BYTE, 0, t->pp);
    MPI_Gather(&peak_slots, 1, MPI_INT, t->slots, 1, MPI_INT, 0, t->pp);
    if (t->rank != 0)
        return;
    if (t->count == t->room) {
        t->room = t->room ? 2 * t->room : 64;
        t->steps = realloc(t->steps, sizeof *t->steps * (size_t)t->room);
        if (t->steps == NULL)
            abort();
    }
    TraceStep *s = &t->steps[t->count++];
    s->step = step;
    s->measured = trace_bubble(t->all, P, t->per_stage, &s->span);
    s->replayed = trace_replay(&t->schedule, t->all, 0);
    s->transfer = trace_transfer(t->all, P, t->schedule.chunks,
                                 t->per_stage);
    s->replayed_transfer = trace_replay(&t->schedule, t->all, s->transfer);
    kind_means(t, s);
    int n = 0;
    for (int r = 0; r < P; r++) {
        if (t->slots[r] > t->peak_slots[r])
            t->peak_slots[r] = t->slots[r];
        n += snprintf(t->peak_text + n, sizeof t->peak_text - n, "%s%g",
                      r ? " " : "",
                      (double)t->peak_slots[r] / t->schedule.chunks);
        if (n >= (int)sizeof t->peak_text)
            n = (int)sizeof t->peak_text - 1;
    }
    if (t->writes)
        write_rows(t, step);
}
/* The median of one field of the recorded steps, after the warm-up. */
static double median_of_steps(const PipelineTrace *t, size_t offset,
                          int *timed)
{
    double *values = malloc(sizeof(double) * (size_t)(t->count + 1));
    if (values == NULL)
        abort();
    for (int i = 0; i < t->count; i++)
        memcpy(&values[i], (const char *)&t->steps[i] + offset,
               sizeof(double));
    int kept;
    double median = median_after_warm_up(values, t->count, &kept);
    free(values);
    if (timed != NULL)
        *timed = kept;
    return median;
}
#define MEDIAN(field) median_of_steps(t, offsetof(TraceStep, field), NULL)

void pipeline_trace_report(const PipelineTrace *t, Report *r)
{
    if (t->rank != 0)
        return;
    int timed = 0, P = t->schedule.stages;
    double measured = median_of_steps(t, offsetof(TraceStep, measured),
                                      &timed);
    double forward = MEDIAN(forward), backward = MEDIAN(backward);
    double weight = MEDIAN(weight);
    double ratio = forward > 0 ? (backward + weight) / forward : 0;
    double share = backward + weight > 0 ? weight / (backward + weight) : 0;
    double most = 0;
    for (int s = 0; s < P; s++)
        most = fmax(most, (double)t->peak_slots[s] / t->schedule.chunks);
    report_add(r, "trace_steps", FIELD_COUNT, timed);
    report_add(r, "bubble_measured", FIELD_FRACTION, measured);
    report_add(r, "bubble_replayed", FIELD_FRACTION, MEDIAN(replayed));
    report_add(r, "bubble_replayed_transfers", FIELD_FRACTION,
               MEDIAN(replayed_transfer));
    report_add(r, "transfer_seconds", FIELD_REAL, MEDIAN(transfer));
    report_add(r, "bubble_theory", FIELD_FRACTION,
               trace_theory(&t->schedule, ratio, share));
    report_add(r, "pipeline_step_seconds_median", FIELD_REAL, MEDIAN(span));
    report_add(r, "forward_seconds", FIELD_REAL, forward);
    report_add(r, "backward_seconds", FIELD_REAL, backward);
    report_add(r, "weight_seconds", FIELD_REAL, weight);
    report_add(r, "weight_share", FIELD_FRACTION, share);
    report_add(r, "stage_imbalance", FIELD_FRACTION, MEDIAN(imbalance));
    report_add(r, "peak_inflight", FIELD_REAL, most);
    report_text(r, "peak_inflight_per_stage", t->peak_text);
    report_text(r, "peak_inflight_schedule_per_stage", t->order_peak_text);
}
static double trace_field(const Report *r, const char *key)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->fields[i].key, key) == 0)
            return r->fields[i].value;
    return NAN;
}

static const char *trace_text(const Report *r, const char *key)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->fields[i].key, key) == 0)
            return r->fields[i].text;
    return "";
}

void pipeline_trace_print(FILE *out, const Report *r)
{
#define T(key) trace_field(r, key)
    fprintf(out, "bubble         = %s %% measured: 1 − busy ÷ (P × step), "
            "the median of %s\n", sig(100 * T("bubble_measured"), 3).s,
            counted(T("trace_steps"), "step", "steps").s);
    fprintf(out, "  replayed     = %s %%: each operation as long as it "
            "took, no other wait\n", sig(100 * T("bubble_replayed"), 3).s);
    fprintf(out, "  + transfers  = %s %%: each message taking %s\n",
            sig(100 * T("bubble_replayed_transfers"), 3).s,
            duration(T("transfer_seconds")).s);
    fprintf(out, "  formula      = %s %%\n",
            sig(100 * T("bubble_theory"), 3).s);
    fprintf(out, "operations     = forward %s, backward %s",
            duration(T("forward_seconds")).s,
            duration(T("backward_seconds")).s);
    if (T("weight_seconds") > 0)
        fprintf(out, ", weight gradient %s", duration(T("weight_seconds")).s);
    fprintf(out, ";\n                 the busiest stage %s %% above the "
            "mean\n", sig(100 * T("stage_imbalance"), 3).s);
    fprintf(out, "in flight      = %s measured, %s by the schedule "
            "(micro-batches, by stage)\n",
            trace_text(r, "peak_inflight_per_stage"),
            trace_text(r, "peak_inflight_schedule_per_stage"));
#undef T
}
int pipeline_trace_free(PipelineTrace *t)
{
    int status = t->writes ? output_commit(&t->csv, "minigpt") : 0;
    free(t->all), free(t->slots), free(t->peak_slots);
    free(t->order_peak), free(t->steps);
    memset(t, 0, sizeof *t);
    return status;
}
