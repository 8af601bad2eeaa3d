/* Tangled from chapters/11f-measured.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/96-tensor-parallel-plumbing.nw, chapters/98-pipeline-plumbing.nw, chapters/99c-buckets.nw, chapters/99f-measured-plumbing.nw, chapters/99gp-precision-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer.h"
#include "pipeline_trace.h"

void step_breakdown(double part[BREAKDOWN_PARTS], double step,
                    double worked)
{
    for (int k = 0; k < STEP_PARTS; k++)        /* tp, pp, dp, bubble, */
        part[k] = step_clock_seconds((StepPart)k);         /* optimizer */
    part[PART_COMPUTE] = worked - part[PART_OPTIMIZER];
    part[PART_STEP] = step;
    part[PART_OTHER] = step;               /* what no part claimed */
    for (int k = 0; k < PART_OTHER; k++)
        part[PART_OTHER] -= part[k];
}
/* The first steps of a run fault in its buffers and warm the caches and
   the allocator, so they are not counted: none of one step, one of a short
   run, a tenth (at most ten) of a long one. Every median of per-step
   numbers in this book, of one rank or of several, skips the same. */
int untimed_steps(int n)
{
    return n < 2 ? 0 : n < 20 ? 1 : n / 10 < 10 ? n / 10 : 10;
}

double median_after_warm_up(double *values, int n, int *timed)
{
    int skip = untimed_steps(n);
    *timed = n - skip;
    return median_in_place(values + skip, *timed);
}

/* The speed of a run is that of its median step; the middle half of the
   counted steps, between the first and third quartiles, is the spread. */
void step_statistics(RunSummary *s)
{
    s->step_median = median_after_warm_up(s->step_seconds, s->steps,
                                          &s->timed);
    s->warmup = s->steps - s->timed;
    const double *sorted = s->step_seconds + s->warmup;
    if (s->timed > 0) {
        s->step_q1 = quantile(sorted, s->timed, 0.25);
        s->step_q3 = quantile(sorted, s->timed, 0.75);
    }
}

static double matmul_params(ModelConfig c)
{
    double C = c.hidden, L = c.layers;
    return L * (3 * C * C + C * C + 4 * C * C + 4 * C * C) + C * c.vocab;
}

void report_run(Report *r, const Model *m, const Settings *set,
                const RunSummary *s, const char *cpu)
{
    ModelConfig c = m->config;
    double tokens = (double)set->batch * c.seq;
    double steps = s->steps > 0 ? s->steps : 1;
    double rank_tokens = tokens / set->dp;       /* the work of one rank */
    double N = (double)m->params_count, L = c.layers, C = c.hidden;
    double word = sizeof(real);                     /* 4, or 8 in fp64 */
    double per_layer = 0.0, kept = 0.0;
    for (int i = 0; i < ACT_TENSORS; i++)
        if (i != ACT_TENSORS - 1)                   /* not the scratch */
            kept += word * m->act_size[i];
    for (int i = 1; i <= 13; i++)                   /* ln1 .. res3 */
        per_layer += word * m->act_size[i] / m->shape.chunk_layers;
    double held = (double)m->batch * c.seq;      /* positions held at once */
    double sbh = held * C, as2b = (double)c.heads * c.seq * c.seq * m->batch;
    double flops = s->tally.flops / steps;
    int timed = s->timed > 0 && s->step_median > 0;
    double step = timed ? s->step_median : 1, matmul = 0, all = 0;
    for (int op = 0; op < OPS; op++) {
        all += s->tally.seconds[op][0] + s->tally.seconds[op][1];
        if (op == OP_MATMUL)
            matmul = (s->tally.seconds[op][0] + s->tally.seconds[op][1])
                   / steps;
    }
    all /= steps;
    report_text(r, "cpu", cpu);
    report_add(r, "cores", FIELD_COUNT, (double)sysconf(_SC_NPROCESSORS_ONLN));
    report_add(r, "layers", FIELD_COUNT, m->whole.layers);  /* all stages' */
    report_add(r, "hidden", FIELD_COUNT, C);
    report_add(r, "heads", FIELD_COUNT, c.heads);
    report_add(r, "seq", FIELD_COUNT, c.seq);
    report_add(r, "vocab", FIELD_COUNT, c.vocab);
    report_add(r, "batch", FIELD_COUNT, set->batch);
    report_add(r, "micro_batch", FIELD_COUNT, m->batch);
    report_add(r, "params", FIELD_COUNT, N);
    report_add(r, "matmul_params", FIELD_COUNT, matmul_params(c));
    report_add(r, "step", FIELD_COUNT, s->step);
    report_add(r, "steps", FIELD_COUNT, s->steps);
    report_add(r, "tokens_per_step", FIELD_COUNT, tokens);
    report_add(r, "train_loss", FIELD_REAL, s->train_loss);
    report_add(r, "val_loss", FIELD_REAL, s->val_loss);
    report_add(r, "unigram_entropy", FIELD_REAL, s->unigram);
    report_add(r, "bigram_entropy", FIELD_REAL, s->bigram);
    report_add(r, "seconds", FIELD_REAL, s->seconds);
    report_add(r, "warmup_steps", FIELD_COUNT, s->warmup);
    report_add(r, "timed_steps", FIELD_COUNT, s->timed);
    report_add(r, "step_ms", FIELD_REAL, timed ? 1e3 * step : 0);
    report_add(r, "tokens_per_second", FIELD_COUNT,
               timed ? round(tokens / step) : 0);
    report_add(r, "tokens_per_second_low", FIELD_COUNT,
               timed ? round(tokens / s->step_q3) : 0);
    report_add(r, "tokens_per_second_high", FIELD_COUNT,
               timed ? round(tokens / s->step_q1) : 0);
    report_add(r, "flops_per_step", FIELD_SCI, flops);
    report_add(r, "flops_six_n_per_step", FIELD_SCI, 6 * N * rank_tokens);
    report_add(r, "flops_matmul_per_step", FIELD_SCI,
               6 * matmul_params(c) * rank_tokens);
    report_add(r, "flops_attention_per_step", FIELD_SCI,
               6 * L * C * (c.seq + 1) * rank_tokens);
    report_add(r, "flops_attention_palm_per_step", FIELD_SCI,
               12 * L * c.seq * C * rank_tokens);
    report_add(r, "achieved_flops", FIELD_SCI, timed ? flops / step : 0);
    report_add(r, "peak_flops", FIELD_SCI, s->peak);
    report_text(r, "peak_from", set->machine != NULL ? set->machine
                                : "measured in this run");
    report_add(r, "mfu", FIELD_FRACTION, timed ? flops / step / s->peak : 0);
    report_add(r, "matmul_ms", FIELD_REAL, 1e3 * matmul);
    report_add(r, "matmul_fraction", FIELD_FRACTION,
               all > 0 ? matmul / all : 0);
    report_add(r, "matmul_flops", FIELD_SCI,
               matmul > 0 ? 6 * matmul_params(c) * rank_tokens / matmul : 0);
    if (set->machine != NULL) {           /* what the machine file adds */
        report_add(r, "gemm_flops", FIELD_SCI, set->gemm_flops);
        report_add(r, "matmul_ms_at_gemm_rate", FIELD_REAL,
                   1e3 * 6 * matmul_params(c) * rank_tokens / set->gemm_flops);
    }
    double state[3] = { word * N, word * N, 2 * word * N };
    mixed_state_bytes(&set->parallel, state);  /* Chapter 12's, if 16-bit */
    report_add(r, "bytes_per_param", FIELD_REAL,
               (state[0] + state[1] + state[2]) / N);
    report_add(r, "param_bytes", FIELD_BYTES, state[0]);
    report_add(r, "grad_bytes", FIELD_BYTES, state[1]);
    report_add(r, "optimizer_bytes", FIELD_BYTES, state[2]);
    report_add(r, "state_bytes", FIELD_BYTES, state[0] + state[1] + state[2]);
    report_add(r, "activation_bytes", FIELD_BYTES, kept);
    report_add(r, "activation_bytes_per_layer", FIELD_BYTES, per_layer);
    report_add(r, "activation_formula_per_layer", FIELD_BYTES,
               word * (16 * sbh + as2b));
    report_add(r, "backward_buffer_bytes", FIELD_BYTES,
               word * (m->grad_acts_count + m->act_size[ACT_TENSORS - 1]));
    const DataParallel *dp = &set->parallel;
    double per_step = dp->steps > 0 ? dp->exposed / dp->steps : 0;
    report_add(r, "ranks", FIELD_COUNT, dp->ranks);
    report_text(r, "allreduce", dp->strategy->name);
    report_add(r, "exposed_seconds", FIELD_REAL, per_step);
    report_add(r, "step_seconds_median", FIELD_REAL, dp->step_median);
    report_add(r, "step_intervals", FIELD_COUNT, dp->intervals_count);
    report_add(r, "weights_identical", FIELD_COUNT, dp->identical);
    double n = dp->ranks;            /* word and N as in report_run */
    double most[HELD_KINDS] = { 0 }, k = set->micro;
    for (int i = 0; i < dp->ranks && dp->held_by_rank != NULL; i++)
        for (int j = 0; j < HELD_KINDS; j++)
            most[j] = fmax(most[j], dp->held_by_rank[i][j]);
    double copies = dp->stage == 3 ? 3 * k : dp->stage == 2 ? k + 1 : 2;
    report_add(r, "zero_stage", FIELD_COUNT, dp->stage);
    report_add(r, "weight_bytes_held", FIELD_BYTES, most[HELD_WEIGHTS]);
    report_add(r, "gradient_bytes_held", FIELD_BYTES, most[HELD_GRADIENTS]);
    report_add(r, "optimizer_bytes_held", FIELD_BYTES, most[HELD_OPTIMIZER]);
    report_add(r, "buffer_bytes_held", FIELD_BYTES, most[HELD_BUFFERS]);
    report_add(r, "weight_bytes_formula", FIELD_BYTES,
               word * N / (dp->stage == 3 ? n : 1));
    report_add(r, "gradient_bytes_formula", FIELD_BYTES,
               word * N / (dp->stage >= 2 ? n : 1));
    report_add(r, "optimizer_bytes_formula", FIELD_BYTES,
               2 * word * N / (dp->stage >= 1 ? n : 1));
    report_add(r, "sends_counted", FIELD_COUNT, dp->stage > 0 || dp->ring);
    report_add(r, "bytes_sent_per_step", FIELD_BYTES, dp->sent_most);
    report_add(r, "bytes_sent_formula", FIELD_BYTES,
               copies * word * N * (n - 1) / n);
    report_add(r, "psi_copies_sent", FIELD_COUNT, copies);
    report_add(r, "largest_unit_params", FIELD_COUNT, dp->largest_unit);
    {
        TpTraffic forward = tp_traffic_blocks(0), backward = tp_traffic_blocks(1);
        double t = model_ways(m);
        double fb = fmax(forward.blocks, 1), bb = fmax(backward.blocks, 1);
        double bsh = (double)m->batch * c.seq * C;   /* one micro-batch's */
        report_add(r, "tp", FIELD_COUNT, t);
        report_add(r, "sequence_parallel", FIELD_COUNT,
                   set->split.sequence_parallel);
        report_add(r, "tp_collectives_per_block", FIELD_COUNT,
                   forward.collectives / fb + backward.collectives / bb);
        report_add(r, "tp_bytes_per_block", FIELD_BYTES,
                   forward.bytes / fb + backward.bytes / bb);
        report_add(r, "tp_bytes_per_block_formula", FIELD_BYTES,
                   8 * bsh * (t - 1) / t * word);
        report_add(r, "activation_bytes_held", FIELD_BYTES, kept);
    }
    report_add(r, "pp", FIELD_COUNT, set->mesh.pp);
    if (set->mesh.pp > 1)
        pipeline_report(m, r);
    report_add(r, "bucket_mb", FIELD_REAL, dp->bucket_bytes / 1048576.0);
    report_add(r, "buckets", FIELD_COUNT, dp->bucket_count);
    report_add(r, "dp_exposed_s", FIELD_REAL, dp->wait_median);
    {
        static const struct { int part; const char *key; } fields[] = {
            { PART_COMPUTE, "step_breakdown.compute_s" },
            { PART_TP, "step_breakdown.exposed_comm_s.tp" },
            { PART_PP, "step_breakdown.exposed_comm_s.pp" },
            { PART_DP, "step_breakdown.exposed_comm_s.dp" },
            { PART_BUBBLE, "step_breakdown.bubble_s" },
            { PART_OPTIMIZER, "step_breakdown.optimizer_s" },
            { PART_OTHER, "step_breakdown.other_s" },
            { PART_STEP, "step_breakdown.step_s" },
        };
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            report_add(r, fields[i].key, FIELD_REAL,
                       s->breakdown[fields[i].part]);
    }
    precision_report(r, set);
    report_add(r, "async_save", FIELD_COUNT, set->async_save);
    report_add(r, "checkpoint_saves", FIELD_COUNT, set->checkpoint_saves);
    report_add(r, "checkpoint_stall_s", FIELD_REAL, set->checkpoint_stall_s);
    report_add(r, "checkpoint_final_s", FIELD_REAL, set->checkpoint_final_s);
}
static const Field *field_named(const Report *r, const char *key)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->fields[i].key, key) == 0)
            return &r->fields[i];
    abort();
}

static double field(const Report *r, const char *key)
{
    return field_named(r, key)->value;
}

static const char *text_field(const Report *r, const char *key)
{
    return field_named(r, key)->text;
}

/* Two losses side by side: three significant figures each, trailing zeros
   kept, so that 0.930 and 0.881 are printed to the same precision. */
static Text loss_text(double loss)
{
    Text t;
    snprintf(t.s, sizeof t.s, "%#.3g", loss);
    return t;
}

void print_run(FILE *out, const Report *r, const char *cpu,
               const Settings *set)
{
#define F(key) field(r, key)
    fprintf(out, "minigpt: %s %s, hidden %s, %s %s, context %s, "
            "vocabulary %s, batch %s\n", grouped(F("layers")).s,
            plural(F("layers"), "layer", "layers"), grouped(F("hidden")).s,
            grouped(F("heads")).s, plural(F("heads"), "head", "heads"),
            grouped(F("seq")).s, grouped(F("vocab")).s, grouped(F("batch")).s);
    fprintf(out, "parameters     = %s\n", grouped(F("params")).s);
    fprintf(out, "memory         = %s weights + %s gradients + %s Adam m, v\n",
            bytes_auto(F("param_bytes")).s, bytes_auto(F("grad_bytes")).s,
            bytes_auto(F("optimizer_bytes")).s);
    fprintf(out, "               = %s × %s B = %s of training state%s\n",
            grouped(F("params")).s, grouped(F("bytes_per_param")).s,
            bytes_auto(F("state_bytes")).s,
            F("zero_stage") > 0 ? ", over all ranks" : "");
    fprintf(out, "language       = unigram entropy %s, bigram %s nats per "
            "token\n", sig(F("unigram_entropy"), 3).s,
            sig(F("bigram_entropy"), 3).s);
    fprintf(out, "loss           = %s train, %s validation after %s %s\n",
            loss_text(F("train_loss")).s, loss_text(F("val_loss")).s,
            grouped(F("step")).s, plural(F("step"), "step", "steps"));
    fprintf(out, "speed          = %s tokens/s, the median of %s %s "
            "after %s warm-up\n", grouped(F("tokens_per_second")).s,
            grouped(F("timed_steps")).s,
            plural(F("timed_steps"), "step", "steps"),
            grouped(F("warmup_steps")).s);
    fprintf(out, "  spread       = %s to %s tokens/s, the middle half\n",
            grouped(F("tokens_per_second_low")).s,
            grouped(F("tokens_per_second_high")).s);
    fprintf(out, "  step         = %s tokens; %s in all\n",
            grouped(F("tokens_per_step")).s, duration(F("seconds")).s);
    fprintf(out, "FLOPs per step = %s counted = %s matrices + %s attention\n",
            sci(F("flops_per_step"), 3).s,
            sci(F("flops_matmul_per_step"), 3).s,
            sci(F("flops_attention_per_step"), 3).s);
    fprintf(out, "  6N per step  = %s (counts embeddings, biases; no "
            "attention)\n", sci(F("flops_six_n_per_step"), 3).s);
    fprintf(out, "rate           = %s FLOP/s achieved %s\n",
            sci(F("achieved_flops"), 3).s,
            set->ranks > 1 ? "by each rank"
                           : "on one core");
    fprintf(out, "  machine      = %s (%s %s)\n", cpu, grouped(F("cores")).s,
            plural(F("cores"), "core", "cores"));
    if (set->ranks > F("cores"))
        fprintf(out, "               (%d ranks on %s cores share them: these "
                "times are not a measurement)\n", set->ranks,
                grouped(F("cores")).s);
    fprintf(out, "  peak         = %s FLOP/s per core, %s%s; MFU %s %%\n",
            sci(F("peak_flops"), 3).s, set->machine != NULL ? "from " : "",
            set->machine != NULL ? set->machine
                                 : "measured in this run (FMA loop)",
            sig(100 * F("mfu"), 3).s);
    fprintf(out, "  matrices     = %s of a step (%s %% of the profile) at "
            "%s FLOP/s\n", duration(F("matmul_ms") / 1e3).s,
            sig(100 * F("matmul_fraction"), 3).s, sci(F("matmul_flops"), 3).s);
    fprintf(out, "activations    = %s kept for the backward pass, %s per "
            "layer,\n                 for %s %s at a time\n",
            bytes_auto(F("activation_bytes")).s,
            bytes_auto(F("activation_bytes_per_layer")).s,
            grouped(F("micro_batch")).s,
            plural(F("micro_batch"), "sequence", "sequences"));
    fprintf(out, "  formula      = (16sbh + as²b) × %s B = %s per layer (no "
            "dropout)\n", grouped(sizeof(real)).s,
            bytes_auto(F("activation_formula_per_layer")).s);
    fprintf(out, "  backward     = %s of buffers for one layer's gradients\n",
            bytes_auto(F("backward_buffer_bytes")).s);
    if (F("ranks") > 1) {
        fprintf(out, "data parallel  = %s ranks × %s sequences; all-reduce: %s\n",
                grouped(F("ranks")).s, grouped(F("batch") / F("ranks")).s,
                text_field(r, "allreduce"));
        if (F("zero_stage") == 0 && strcmp(text_field(r, "allreduce"), "skipped"))
            fprintf(out, "  waited       = %s per step after the backward "
                    "pass, for the all-reduce\n                 and for the "
                    "slower rank\n", duration(F("exposed_seconds")).s);
        fprintf(out, "  step         = %s, the median of %s %s between "
                "step starts,\n                 after the warm-up\n",
                duration(F("step_seconds_median")).s,
                grouped(F("step_intervals")).s,
                plural(F("step_intervals"), "interval", "intervals"));
        fprintf(out, "  weights      = %s at the end\n",
                strcmp(text_field(r, "allreduce"), "skipped") == 0
                ? "not combined (--no-allreduce)"
                : F("weights_identical") > 0 ? "identical on every rank"
                : F("weights_identical") < 0 ? "sharded: no rank holds them all"
                : "DIFFERENT on some ranks");
    }
    if (F("zero_stage") > 0 || (F("sends_counted") > 0 && F("ranks") > 1)) {
        const DataParallel *dp = &set->parallel;
        const char *kinds[HELD_KINDS] = { "weights", "gradients", "optimizer",
                                          "buffers" };
        const char *formula[] = { "weight_bytes_formula",
                                  "gradient_bytes_formula",
                                  "optimizer_bytes_formula" };
        fprintf(out, "sharded state  = ZeRO stage %s over %s %s; bytes held:\n",
                grouped(F("zero_stage")).s, grouped(F("ranks")).s,
                plural(F("ranks"), "rank", "ranks"));
        fprintf(out, "  %-8s", "");
        for (int j = 0; j < HELD_KINDS; j++)
            fprintf(out, " %11s", kinds[j]);
        fprintf(out, " %11s\n  %-8s", "total", "formula");
        double sum = 0;
        for (int j = 0; j < 3; j++) {
            fprintf(out, " %11s", grouped(F(formula[j])).s);
            sum += F(formula[j]);
        }
        fprintf(out, " %11s %11s\n", "-", grouped(sum).s);
        for (int i = 0; i < dp->ranks && dp->held_by_rank != NULL; i++) {
            double all = 0;
            fprintf(out, "  rank %-3d", i);
            for (int j = 0; j < HELD_KINDS; j++) {
                fprintf(out, " %11s", grouped(dp->held_by_rank[i][j]).s);
                all += dp->held_by_rank[i][j];
            }
            fprintf(out, " %11s\n", grouped(all).s);
        }
        if (F("zero_stage") > 0)
            fprintf(out, "  largest unit = %s parameters (%s B of a buffer)\n",
                    grouped(F("largest_unit_params")).s,
                    grouped(sizeof(real) * F("largest_unit_params")).s);
        if (F("sends_counted") > 0)
            fprintf(out, "  sent per step = %s B counted at MPI_Sendrecv;\n"
                    "    formula %s × %s B × %s/%s = %s B\n",
                    grouped(F("bytes_sent_per_step")).s,
                    grouped(F("psi_copies_sent")).s, grouped(sizeof(real)
                    * F("params")).s, grouped(F("ranks") - 1).s,
                    grouped(F("ranks")).s, grouped(F("bytes_sent_formula")).s);
    }
    if (F("tp") > 1)
        fprintf(out, "tensor parallel = %s ways%s; per block per micro-batch "
                "%s collectives,\n  %s B sent by each rank (counted at "
                "MPI_Sendrecv);\n  formula 8bsh(t-1)/t elements = %s B\n",
                grouped(F("tp")).s, F("sequence_parallel") > 0
                ? ", sequence parallel" : "",
                grouped(F("tp_collectives_per_block")).s,
                grouped(F("tp_bytes_per_block")).s,
                grouped(F("tp_bytes_per_block_formula")).s);
    if (set->mesh.pp > 1) {
        fprintf(out, "pipeline       = %d stages, schedule %s\n", set->mesh.pp,
                schedule_name((Schedule)set->schedule));
        fprintf(out, "  slots        = %s of activations per %s in flight\n",
                bytes_auto(F("slot_bytes")).s, set->chunks > 1
                ? "chunk of a micro-batch" : "micro-batch");
        pipeline_trace_print(out, r);
    }
    if (F("ranks") > 1 && F("buckets") > 0)
        fprintf(out, "  buckets      = %s of at least %s MiB, the last "
                "excepted\n", grouped(F("buckets")).s, sig(F("bucket_mb"), 3).s);
    if (F("ranks") > 1)
        fprintf(out, "  data axis    = %s per step in its communication, "
                "not hidden\n", duration(F("dp_exposed_s")).s);
    fprintf(out, "step parts     = compute %s, tp %s, pp %s, dp %s,\n"
            "                 bubble %s, optimizer %s, other %s; step %s "
            "(means)\n",
            duration(F("step_breakdown.compute_s")).s,
            duration(F("step_breakdown.exposed_comm_s.tp")).s,
            duration(F("step_breakdown.exposed_comm_s.pp")).s,
            duration(F("step_breakdown.exposed_comm_s.dp")).s,
            duration(F("step_breakdown.bubble_s")).s,
            duration(F("step_breakdown.optimizer_s")).s,
            duration(F("step_breakdown.other_s")).s,
            duration(F("step_breakdown.step_s")).s);
    print_precision(out, r);
    if (F("checkpoint_saves") > 0)
        fprintf(out, "checkpoints    = %s %s, %s; training stalled %s per "
                "save\n                 (median), %s at the end\n",
                grouped(F("checkpoint_saves")).s,
                plural(F("checkpoint_saves"), "save", "saves"),
                F("async_save") > 0 ? "written on a thread" : "synchronous",
                duration(F("checkpoint_stall_s")).s,
                duration(F("checkpoint_final_s")).s);
#undef F
}
double tally_work(const Tally *t)
{
    double seconds = -t->waited;
    for (int op = 0; op < OPS; op++)
        seconds += t->seconds[op][0] + t->seconds[op][1];
    return seconds;
}
void average_breakdown(RunSummary *s, MPI_Comm world)
{
    double mine[BREAKDOWN_PARTS] = { 0 };
    int ranks;
    for (int i = s->warmup; i < s->steps; i++)
        for (int k = 0; k < BREAKDOWN_PARTS; k++)
            mine[k] += s->step_parts[i][k] / s->timed;
    MPI_Comm_size(world, &ranks);
    MPI_Allreduce(mine, s->breakdown, BREAKDOWN_PARTS, MPI_DOUBLE, MPI_SUM,
                  world);
    for (int k = 0; k < BREAKDOWN_PARTS; k++)
        s->breakdown[k] /= ranks;
}
static const char *const op_names[OPS] = {
    "embedding", "layernorm", "matmul", "attention", "gelu", "residual",
    "softmax+loss", "adamw"
};

int write_profile(const char *path, const Tally *t, int steps)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "op,forward,backward,update\n");
    for (int op = 0; op < OPS; op++) {
        int update = op == OP_OPTIMIZER;
        fprintf(f, "%s,%.9g,%.9g,%.9g\n", op_names[op],
                update ? 0.0 : t->seconds[op][0] / steps,
                update ? 0.0 : t->seconds[op][1] / steps,
                update ? t->seconds[op][0] / steps : 0.0);
    }
    return fclose(f) == 0 ? 0 : -1;
}
