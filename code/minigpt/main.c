/* Tangled from chapters/06-reference.nw; edit the chapter, not this file. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"

typedef struct {
    ModelConfig config;
    int batch, steps, micro, eval_every, save_every, quiet;
    real lr;
    uint64_t seed;
    const char *save, *resume, *log, *profile;
    int rank, ranks;       /* this process, and how many there are */
    int dp;                /* ranks that share each batch: 1 until Chapter 7 */
    DataParallel parallel;
} Settings;
typedef struct {
    int *inputs;     /* (B, T) */
    int *targets;    /* (B, T) */
} Batch;

static int batch_alloc(Batch *b, int B, int T)
{
    b->inputs = malloc(sizeof(int) * (size_t)B * T);
    b->targets = malloc(sizeof(int) * (size_t)B * T);
    return b->inputs && b->targets ? 0 : -1;
}

static void batch_free(Batch *b)
{
    free(b->inputs);
    free(b->targets);
}

static void batch_draw(Batch *b, const Language *lang, Rng *rng, int B, int T)
{
    int *text = malloc(sizeof(int) * (size_t)(T + 1));
    if (text == NULL)
        abort();
    for (int i = 0; i < B; i++) {
        language_sample(lang, rng, text, T + 1);
        memcpy(b->inputs + (size_t)i * T, text, sizeof(int) * (size_t)T);
        memcpy(b->targets + (size_t)i * T, text + 1, sizeof(int) * (size_t)T);
    }
    free(text);
}

static Rng validation_rng(uint64_t seed) { return (Rng){ seed ^ 0x76616c6964ULL }; }
static Rng training_rng(uint64_t seed)   { return (Rng){ seed ^ 0x747261696eULL }; }

/* The start of the training stream, as text, 72 characters to a line. */
static int print_sample(const Settings *set, int n, Option *options)
{
    Language lang;
    language_init(&lang, set->config.vocab, set->seed);
    int *tokens = malloc(sizeof(int) * (size_t)n);
    Output out;
    if (tokens == NULL || output_open(&out, "minigpt", options) != 0)
        return 2;
    Rng rng = training_rng(set->seed);
    language_sample(&lang, &rng, tokens, n);
    for (int i = 0; i < n; i++) {
        fputc(token_char(tokens[i]), out.file);
        if ((i + 1) % 72 == 0 || i + 1 == n)
            fputc('\n', out.file);
    }
    free(tokens);
    return output_commit(&out, "minigpt");
}
static double batch_gradient(Model *m, const Batch *b, int B, int micro,
                             real share)
{
    int T = m->config.seq, per = B / micro;
    double loss = 0.0;
    for (int k = 0; k < micro; k++) {
        const int *in = b->inputs + (size_t)k * per * T;
        const int *tg = b->targets + (size_t)k * per * T;
        loss += model_forward(m, in, tg, per);
        m->last_piece = k == micro - 1;       /* the gradient is complete */
        model_backward(m, in, tg, per, share / (real)micro);
    }
    m->last_piece = 0;
    return loss / micro;
}
static double rank_gradient(Model *m, const Batch *b, Settings *set)
{
    Batch mine = *b;                 /* the sequences this rank computes */
    int share = set->batch;          /* how many of them                 */
    share = set->batch / set->dp;
    mine.inputs += (size_t)set->rank * share * m->config.seq;
    mine.targets += (size_t)set->rank * share * m->config.seq;
    data_parallel_begin(&set->parallel, m);
    double loss = batch_gradient(m, &mine, share, set->micro,
                                 (real)share / (real)set->batch);
    data_parallel_combine(&set->parallel, &loss);
    return loss;
}
static AdamW adamw_settings(real lr)
{
    return (AdamW){ lr, 0.9f, 0.95f, 1e-8f, 0.1f, 1.0f };
}

/* Clip and step; returns the gradient's norm before clipping. */
static real optimizer_step(Model *m, const AdamW *opt, real lr, int step,
                           Settings *set)
{
    if (set->parallel.stage > 0)
        return sharded_step(&set->parallel, opt, lr, step);
    real norm = clip_gradients(m, opt->clip);
    adamw_update(m, opt, lr, step);
    return norm;
}

/* The configuration's weights, gradient or one of Adam's moments, whole,
   on every rank. */
static void collect_state(Model *m, Settings *set, StateKind kind, real *into)
{
    if (set->parallel.stage > 0) {
        sharded_collect(&set->parallel, kind, into);
        return;
    }
    real *whole[] = { m->params_memory, m->grads_memory, m->m_memory,
                      m->v_memory };
    memcpy(into, whole[kind], sizeof(real) * m->params_count);
}
/* 0 on success on rank 0; the other ranks take part and return 0. */
static int save_checkpoint(Model *m, Settings *set, const TrainingState *s,
                           char *why, size_t why_size)
{
    if (set->parallel.stage > 0)
        return sharded_save(&set->parallel, set->save, s, why, why_size);
    return set->rank == 0 ? checkpoint_save(set->save, m, s, why, why_size)
                          : 0;
}

static int load_checkpoint(Model *m, Settings *set, TrainingState *s,
                           char *why, size_t why_size)
{
    if (set->parallel.stage > 0)
        return sharded_load(&set->parallel, set->resume, s, why, why_size);
    return checkpoint_load(set->resume, m, s, why, why_size);
}
enum { VALIDATION_BATCHES = 4 };

/* Mean loss over fixed validation batches; the tally is left as it was, so
   that evaluation does not count as training work. */
static double validation_loss(Model *m, const Language *lang, uint64_t seed,
                              int B)
{
    Tally saved = m->tally;
    Rng rng = validation_rng(seed);
    int T = m->config.seq, pieces = B / m->batch;   /* as many as fit */
    Batch b;
    if (batch_alloc(&b, B, T) != 0)
        abort();
    double sum = 0.0;
    for (int i = 0; i < VALIDATION_BATCHES; i++) {
        batch_draw(&b, lang, &rng, B, T);
        for (int k = 0; k < pieces; k++)
            sum += model_forward(m, b.inputs + (size_t)k * m->batch * T,
                                 b.targets + (size_t)k * m->batch * T,
                                 m->batch) / pieces;
    }
    batch_free(&b);
    m->tally = saved;
    return sum / VALIDATION_BATCHES;
}
enum { GRADCHECK_ENTRIES = 8 };
static const double gradcheck_h = sizeof(real) == 8 ? 1e-5 : 3e-3;
static const double gradcheck_tolerance = sizeof(real) == 8 ? 1e-5 : 0.25;

static int gradcheck(Model *m, const Language *lang, const Settings *set,
                     Option *options)
{
    int B = set->batch, T = set->config.seq;
    Batch b;
    Rng rng = training_rng(set->seed);
    if (batch_alloc(&b, B, T) != 0)
        abort();
    batch_draw(&b, lang, &rng, B, T);
    model_zero_grads(m);
    batch_gradient(m, &b, B, 1, 1);
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    FILE *table = report_requested(options) ? NULL : out.file;
    if (table)
        fprintf(table, "gradcheck: central differences with h = %g at %d "
                "entries of each tensor\n\n%-10s %14s %14s\n", gradcheck_h,
                GRADCHECK_ENTRIES, "tensor", "max |gradient|", "max rel. error");
    double worst = 0.0;
    const char *worst_name = param_names[0];
    size_t offset = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t size = m->param_size[t];
        double largest = 0.0, error = 0.0;
        for (size_t i = 0; i < size; i++)
            largest = fmax(largest, fabs(m->grads_memory[offset + i]));
        double floor_ = 1e-2 * largest;
        for (int e = 0; e < GRADCHECK_ENTRIES; e++) {
            size_t i = offset + (size_t)((2 * e + 1) * size / (2 * GRADCHECK_ENTRIES));
            real saved = m->params_memory[i];
            m->params_memory[i] = saved + (real)gradcheck_h;
            double up = model_forward(m, b.inputs, b.targets, B);
            m->params_memory[i] = saved - (real)gradcheck_h;
            double down = model_forward(m, b.inputs, b.targets, B);
            m->params_memory[i] = saved;
            double numeric = (up - down) / (2 * gradcheck_h);
            double analytic = m->grads_memory[i];
            double scale = fmax(fmax(fabs(analytic), fabs(numeric)), floor_);
            if (scale > 0)
                error = fmax(error, fabs(analytic - numeric) / scale);
        }
        if (table)
            fprintf(table, "%-10s %14.3e %14.2e\n", param_names[t], largest, error);
        if (error > worst) {
            worst = error;
            worst_name = param_names[t];
        }
        offset += m->param_size[t];
    }
    int ok = worst <= gradcheck_tolerance;
    if (table)
        fprintf(table, "\nlargest relative error %.2e in %s (tolerance %g): %s\n",
                worst, worst_name, gradcheck_tolerance, ok ? "OK" : "FAIL");
    else {
        Report r = { .count = 0 };
        report_add(&r, "max_relative_error", FIELD_SCI, worst);
        report_add(&r, "tolerance", FIELD_SCI, gradcheck_tolerance);
        report_add(&r, "entries_per_tensor", FIELD_COUNT, GRADCHECK_ENTRIES);
        report_add(&r, "tensors", FIELD_COUNT, PARAM_TENSORS);
        report_text(&r, "worst_tensor", worst_name);
        print_report(out.file, &r, options);
    }
    batch_free(&b);
    if (output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
static const double verify_atol = 1e-6, verify_rtol = 1e-4;

/* The largest |got - want|; clears *ok where one exceeds atol plus
   verify_rtol of the reference. */
static double largest_difference(const real *got, const real *want,
                                 size_t n, double atol, int *ok)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        largest = fmax(largest, d);
        if (d > atol + verify_rtol * fabs(want[i]))
            *ok = 0;
    }
    return largest;
}

static int verify(Model *m, const Language *lang, Settings *set,
                  Option *options)
{
    int B = set->batch, T = set->config.seq;
    size_t N = m->params_count;
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    Rng rng = training_rng(set->seed);
    Model ref;                  /* the whole batch, the whole state, at once */
    real *got = malloc(sizeof(real) * N);  /* the configuration's, gathered */
    if (batch_alloc(&b, B, T) != 0 || got == NULL
        || model_init(&ref, set->config, B, HOLDS_ALL) != 0)
        abort();
    TrainingState start = { set->config, set->batch, set->seed, 0, 0,
                            training_rng(set->seed) };
    char why[1024];
    if (set->resume == NULL)
        model_init_weights(&ref, ref.params_memory, set->seed);
    else if (checkpoint_load(set->resume, &ref, &start, why, sizeof why) != 0)
        abort();                        /* the configuration has just read it */
    int step = (int)start.step + 1;
    collect_state(m, set, STATE_WEIGHTS, got);
    int same_start = 1;
    double dweight = largest_difference(got, ref.params_memory, N, verify_atol,
                                        &same_start);
    batch_draw(&b, lang, &rng, B, T);
    double loss_ref = batch_gradient(&ref, &b, B, 1, 1);
    model_zero_grads(m);
    double loss = rank_gradient(m, &b, set);
    double dloss = fabs(loss - loss_ref);
    int ok = same_start && dloss <= verify_atol + verify_rtol * fabs(loss_ref);
    collect_state(m, set, STATE_GRADIENTS, got);
    double dgrad = largest_difference(got, ref.grads_memory, N, verify_atol, &ok);
    memcpy(ref.grads_memory, got, sizeof(real) * N);
    clip_gradients(&ref, opt.clip);
    adamw_update(&ref, &opt, set->lr, step);
    optimizer_step(m, &opt, set->lr, step, set);
    collect_state(m, set, STATE_WEIGHTS, got);
    dweight = fmax(dweight, largest_difference(got, ref.params_memory, N,
                                               verify_atol, &ok));
    collect_state(m, set, STATE_FIRST_MOMENT, got);       /* relative only: */
    double dmoment = largest_difference(got, ref.m_memory, N, 0, &ok);
    collect_state(m, set, STATE_SECOND_MOMENT, got);      /* v is ~ g² */
    dmoment = fmax(dmoment, largest_difference(got, ref.v_memory, N, 0, &ok));
    if (set->ranks > 1) {
        double mine_[4] = { dloss, dgrad, dweight, dmoment }, worst[4];
        MPI_Allreduce(mine_, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        dloss = worst[0];
        dgrad = worst[1];
        dweight = worst[2];
        dmoment = worst[3];
        ok = ranks_agree(!ok) == 0;
    }
    model_free(&ref);
    free(got);
    Output out;
    if (set->rank != 0) {                    /* rank 0 speaks for all */
        batch_free(&b);
        return ok ? 0 : 1;
    }
    Output transcript;
    const char *transcript_path = option_text(options, "--transcript");
    if (output_open(&out, "minigpt", options) != 0
        || (transcript_path != NULL
            && output_open_path(&transcript, "minigpt", "--transcript",
                                transcript_path) != 0))
        return 2;
    FILE *readable[2] = { report_requested(options) ? NULL : out.file,
                          transcript_path != NULL ? transcript.file : NULL };
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_add(&r, "ranks", FIELD_COUNT, set->dp);
        report_add(&r, "micro_batches", FIELD_COUNT, set->micro);
        report_add(&r, "zero_stage", FIELD_COUNT, set->parallel.stage);
        report_add(&r, "max_dloss", FIELD_SCI, dloss);
        report_add(&r, "max_dgrad", FIELD_SCI, dgrad);
        report_add(&r, "max_dweight", FIELD_SCI, dweight);
        report_add(&r, "max_dmoment", FIELD_SCI, dmoment);
        report_add(&r, "atol", FIELD_SCI, verify_atol);
        report_add(&r, "rtol", FIELD_SCI, verify_rtol);
        report_text(&r, "result", ok ? "OK" : "FAIL");
        print_report(out.file, &r, options);
    }
    for (int i = 0; i < 2; i++) {      /* the output, and the transcript */
        FILE *f = readable[i];
        if (f == NULL)
            continue;
        fprintf(f, "verify: reference (the batch of %d in one pass) "
                "against %d %s × %d micro-%s of %d\n", B, set->dp,
                plural(set->dp, "rank", "ranks"), set->micro,
                plural(set->micro, "batch", "batches"),
                B / set->dp / set->micro);
        if (set->parallel.stage > 0)
            fprintf(f, "verify: ZeRO stage %d shards %s\n", set->parallel.stage,
                    set->parallel.stage == 1 ? "Adam's moments"
                    : set->parallel.stage == 2 ? "Adam's moments and the gradients"
                    : "Adam's moments, the gradients and the weights");
        fprintf(f, "verify: max |dloss| = %.3g, max |dgrad| = %.3g\n", dloss,
                dgrad);
        fprintf(f, "verify: after one AdamW step, max |dweight| = %.3g, "
                "max |dmoment| = %.3g\n", dweight, dmoment);
        fprintf(f, "verify: tolerance %g + %g·|reference|, moments "
                "%g·|reference|: %s\n", verify_atol, verify_rtol, verify_rtol,
                ok ? "OK" : "FAIL");
    }
    batch_free(&b);
    if ((transcript_path != NULL && output_commit(&transcript, "minigpt") != 0)
        || output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
typedef struct {
    int step;                  /* the step the model has reached    */
    int steps;                 /* steps this process ran            */
    double seconds;            /* in those steps alone              */
    double train_loss, val_loss, unigram, bigram, peak;
    Tally tally;               /* training work only                */
} RunSummary;

static double matmul_params(ModelConfig c)
{
    double C = c.hidden, L = c.layers;
    return L * (3 * C * C + C * C + 4 * C * C + 4 * C * C) + C * c.vocab;
}

static void report_run(Report *r, const Model *m, const Settings *set,
                       const RunSummary *s, const char *cpu)
{
    ModelConfig c = m->config;
    double tokens = (double)set->batch * c.seq, steps = s->steps > 0 ? s->steps : 1;
    double rank_tokens = tokens / set->dp;       /* the work of one rank */
    double N = (double)m->params_count, L = c.layers, C = c.hidden;
    double word = sizeof(real);                     /* 4, or 8 in fp64 */
    double per_layer = 0.0, kept = 0.0;
    for (int i = 0; i < ACT_TENSORS; i++)
        if (i != ACT_TENSORS - 1)                   /* not the scratch */
            kept += word * m->act_size[i];
    for (int i = 1; i <= 13; i++)                   /* ln1 .. res3 */
        per_layer += word * m->act_size[i] / L;
    double held = (double)m->batch * c.seq;      /* positions held at once */
    double sbh = held * C, as2b = (double)c.heads * c.seq * c.seq * m->batch;
    double flops = s->tally.flops / steps;
    report_text(r, "cpu", cpu);
    report_add(r, "layers", FIELD_COUNT, L);
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
    report_add(r, "tokens_per_second", FIELD_COUNT,
               round(tokens * s->steps / s->seconds));
    report_add(r, "flops_per_step", FIELD_SCI, flops);
    report_add(r, "flops_six_n_per_step", FIELD_SCI, 6 * N * rank_tokens);
    report_add(r, "flops_matmul_per_step", FIELD_SCI,
               6 * matmul_params(c) * rank_tokens);
    report_add(r, "flops_attention_per_step", FIELD_SCI,
               6 * L * C * (c.seq + 1) * rank_tokens);
    report_add(r, "flops_attention_palm_per_step", FIELD_SCI,
               12 * L * c.seq * C * rank_tokens);
    report_add(r, "achieved_flops", FIELD_SCI, flops * steps / s->seconds);
    report_add(r, "peak_flops", FIELD_SCI, s->peak);
    report_add(r, "mfu", FIELD_FRACTION, flops * steps / s->seconds / s->peak);
    report_add(r, "bytes_per_param", FIELD_REAL, 4 * word);
    report_add(r, "param_bytes", FIELD_BYTES, word * N);
    report_add(r, "grad_bytes", FIELD_BYTES, word * N);
    report_add(r, "optimizer_bytes", FIELD_BYTES, 2 * word * N);
    report_add(r, "state_bytes", FIELD_BYTES, 4 * word * N);
    report_add(r, "activation_bytes", FIELD_BYTES, kept);
    report_add(r, "activation_bytes_per_layer", FIELD_BYTES, per_layer);
    report_add(r, "activation_formula_per_layer", FIELD_BYTES,
               word * (16 * sbh + as2b));
    report_add(r, "backward_buffer_bytes", FIELD_BYTES,
               word * (m->grad_acts_count + m->act_size[ACT_TENSORS - 1]));
    const DataParallel *dp = &set->parallel;
    double per_step = dp->steps > 0 ? dp->exposed / dp->steps : 0;
    report_add(r, "ranks", FIELD_COUNT, dp->ranks);
    report_text(r, "allreduce", dp->stage > 0 ? "ring, sharded"
                : dp->ranks == 1 ? "none" : !dp->communicate ? "skipped"
                : dp->ring ? "ring" : dp->overlap ? "mpi, overlapped" : "mpi");
    report_add(r, "exposed_seconds", FIELD_REAL, per_step);
    report_add(r, "step_seconds_median", FIELD_REAL, dp->step_median);
    report_add(r, "step_intervals", FIELD_COUNT, dp->intervals_count);
    report_add(r, "weights_identical", FIELD_COUNT, dp->identical);
    double n = dp->ranks;            /* word and N as above */
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

static void print_run(FILE *out, const Report *r, const char *cpu,
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
            sig(F("train_loss"), 3).s, sig(F("val_loss"), 3).s,
            grouped(F("step")).s, plural(F("step"), "step", "steps"));
    fprintf(out, "speed          = %s tokens/s (%s tokens per step, %s s "
            "in all)\n", grouped(F("tokens_per_second")).s,
            grouped(F("tokens_per_step")).s, sig(F("seconds"), 3).s);
    fprintf(out, "FLOPs per step = %s counted = %s matrices + %s attention\n",
            sci(F("flops_per_step"), 3).s, sci(F("flops_matmul_per_step"), 3).s,
            sci(F("flops_attention_per_step"), 3).s);
    fprintf(out, "  6N per step  = %s (counts embeddings, biases; no "
            "attention)\n", sci(F("flops_six_n_per_step"), 3).s);
    fprintf(out, "rate           = %s FLOP/s achieved on one core of %s\n",
            sci(F("achieved_flops"), 3).s, cpu);
    fprintf(out, "  peak         = %s FLOP/s measured (FMA loop); MFU %s %%\n",
            sci(F("peak_flops"), 3).s, sig(100 * F("mfu"), 3).s);
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
            fprintf(out, "  waited       = %s ms per step after the backward "
                    "pass, for the all-reduce\n                 and for the "
                    "slower rank\n", sig(1e3 * F("exposed_seconds"), 3).s);
        fprintf(out, "  step         = %s ms, the median of %s steps after the "
                "warm-up\n", sig(1e3 * F("step_seconds_median"), 3).s,
                grouped(F("step_intervals")).s);
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
#undef F
}
static const char *const op_names[OPS] = {
    "embedding", "layernorm", "matmul", "attention", "gelu", "residual",
    "softmax+loss", "adamw"
};

static int write_profile(const char *path, const Tally *t, int steps)
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

static int train(Model *m, const Language *lang, Settings *set,
                 TrainingState *state_, Option *options)
{
    const char *command = "minigpt";
    char why[1024], cpu[128];
    TrainingState state = *state_;
    FILE *log = NULL;
    int appending = set->resume != NULL;      /* a resumed run continues it */
    if (set->rank == 0 && set->log != NULL
        && (log = fopen(set->log, appending ? "a" : "w")) == NULL) {
        complain(command, "--log: cannot write %s", set->log);
        return 2;
    }
    RunSummary s = { 0 };
    s.peak = measure_peak_flops(0.25);
    language_entropy(lang, set->seed ^ 0x656e74726f7079ULL, 1000000,
                     &s.unigram, &s.bigram);
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    if (batch_alloc(&b, set->batch, set->config.seq) != 0)
        abort();
    if (log != NULL && (!appending || ftell(log) == 0))
        fprintf(log, "step,lr,train_loss,val_loss,grad_norm,unigram,bigram\n");
    memset(&m->tally, 0, sizeof m->tally);
    s.val_loss = NAN;
    int failed = 0;
    for (int step = (int)state.step; step < set->steps; step++) {
        double started = seconds_now();
        batch_draw(&b, lang, &state.data, set->batch, set->config.seq);
        state.sequences += (uint64_t)set->batch;
        model_zero_grads(m);
        s.train_loss = rank_gradient(m, &b, set);
        real lr = learning_rate(set->lr, step, set->steps), norm;
        TIMED(m, OP_OPTIMIZER, 0,
              norm = optimizer_step(m, &opt, lr, step + 1, set));
        state.step = (uint64_t)step + 1;
        s.seconds += seconds_now() - started;
        s.steps++;
        int last = step + 1 == set->steps;
        int evaluate = (step + 1) % set->eval_every == 0 || last;
        if (evaluate)
            s.val_loss = validation_loss(m, lang, set->seed, set->batch);
        if (log != NULL) {
            fprintf(log, "%d,%.6g,%.6f,", step + 1, lr, s.train_loss);
            if (evaluate)
                fprintf(log, "%.6f", s.val_loss);
            fprintf(log, ",%.6g,%.6f,%.6f\n", norm, s.unigram, s.bigram);
        }
        if (!set->quiet && set->rank == 0) {
            fprintf(stderr, "step %d/%d: loss %.4f, lr %.2e, grad norm %.3f, "
                    "%.0f tokens/s", step + 1, set->steps, s.train_loss, lr, norm,
                    (double)set->batch * set->config.seq * s.steps / s.seconds);
            if (evaluate)
                fprintf(stderr, ", validation %.4f", s.val_loss);
            fputc('\n', stderr);
        }
        if (set->save != NULL && set->save_every > 0 && !last
            && (step + 1) % set->save_every == 0) {
            int bad = save_checkpoint(m, set, &state, why, sizeof why) != 0;
            if (bad)
                complain(command, "--save: %s", why);
            if (ranks_agree(bad ? 2 : 0) != 0) {
                failed = 1;
                break;
            }
        }
    }
    batch_free(&b);
    s.tally = m->tally;
    s.step = (int)state.step;
    set->parallel.identical = data_parallel_identical(&set->parallel);
    data_parallel_step_time(&set->parallel);
    sharded_account(&set->parallel);
    if (log != NULL)
        fclose(log);
    if (failed)
        return 2;
    int bad = set->save != NULL
           && save_checkpoint(m, set, &state, why, sizeof why) != 0;
    if (bad)
        complain(command, "--save: %s", why);
    if (ranks_agree(bad ? 2 : 0) != 0)
        return 2;
    if (isnan(s.val_loss))
        s.val_loss = validation_loss(m, lang, set->seed, set->batch);
    if (set->rank != 0)                           /* rank 0 reports for all */
        return 0;
    if (s.steps > 0 && set->profile != NULL
        && write_profile(set->profile, &s.tally, s.steps) != 0) {
        complain(command, "--profile: cannot write %s", set->profile);
        return 2;
    }
    if (s.seconds <= 0)
        s.seconds = 1e-9;
    cpu_name(cpu, sizeof cpu);
    for (char *c = cpu; *c; c++)         /* keep the name safe for LaTeX */
        if (strchr("&%$#_{}~^\\", *c))
            *c = ' ';
    Report r = { .count = 0 };
    report_run(&r, m, set, &s, cpu);
    Output out, transcript;
    const char *transcript_path = option_text(options, "--transcript");
    if (transcript_path != NULL) {
        if (output_open_path(&transcript, command, "--transcript",
                             transcript_path) != 0)
            return 2;
        print_run(transcript.file, &r, cpu, set);
        if (output_commit(&transcript, command) != 0)
            return 2;
    }
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options))
        print_report(out.file, &r, options);
    else
        print_run(out.file, &r, cpu, set);
    return output_commit(&out, command);
}
static int read_settings(const char *command, Option *o, int rank, int ranks,
                         Settings *set)
{
    *set = (Settings){
        .config = { (int)option_number(o, "--layers"),
                    (int)option_number(o, "--hidden"),
                    (int)option_number(o, "--heads"),
                    (int)option_number(o, "--seq"),
                    (int)option_number(o, "--vocab") },
        .batch = (int)option_number(o, "--batch"),
        .steps = (int)option_number(o, "--steps"),
        .micro = (int)option_number(o, "--micro-batches"),
        .eval_every = (int)option_number(o, "--eval-every"),
        .save_every = (int)option_number(o, "--save-every"),
        .quiet = option_given(o, "--quiet"),
        .lr = (real)option_number(o, "--lr"),
        .seed = (uint64_t)option_number(o, "--seed"),
        .save = option_text(o, "--save"),
        .resume = option_text(o, "--resume"),
        .log = option_text(o, "--log"),
        .profile = option_text(o, "--profile"),
        .rank = rank, .ranks = ranks, .dp = 1,
    };
    ModelConfig c = set->config;
    double C = c.hidden, params = (double)c.vocab * C + (double)c.seq * C
                  + c.layers * (12 * C * C + 13 * C) + 2 * C + C * c.vocab;
    double state = 4.0 * sizeof(real) * params;
    double held = option_given(o, "--verify") || option_given(o, "--gradcheck")
                ? set->batch : (double)set->batch / set->micro;
    double activations = sizeof(real) * held * c.seq * c.layers
                       * (16.0 * c.hidden + (double)c.heads * c.seq)
                       + 2.0 * sizeof(real) * held * c.seq * c.vocab;
    if (c.hidden % c.heads != 0)
        complain(command, "--heads (%d) must divide --hidden (%d)", c.heads,
                 c.hidden);
    else if (c.vocab < MIN_VOCAB)
        complain(command, "--vocab must be at least %d; got %d", MIN_VOCAB,
                 c.vocab);
    else if (set->batch % set->micro != 0)
        complain(command, "--micro-batches (%d) must divide --batch (%d)",
                 set->micro, set->batch);
    else if (activations > 16e9)
        complain(command, "--batch, --seq, --hidden and --layers ask for %s "
                 "of activations; the limit is 16 GB",
                 bytes_auto(activations).s);
    else if (state > 16e9)
        complain(command, "--layers, --hidden, --seq and --vocab ask for %s "
                 "of weights, gradients and Adam state; the limit is 16 GB",
                 bytes_auto(state).s);
    else if (option_given(o, "--save-every") && set->save == NULL)
        complain(command, "--save-every needs --save PATH");
    else if (option_given(o, "--gradcheck") && option_given(o, "--verify"))
        complain(command, "--gradcheck and --verify are separate runs; "
                 "give one");
    else {
        set->dp = (int)option_number(o, "--dp");
        const char *how = option_text(o, "--allreduce");
        set->parallel = (DataParallel){ .rank = rank, .ranks = ranks,
                                        .ring = strcmp(how, "ring") == 0,
                                        .overlap = !option_given(o, "--no-overlap"),
                                        .communicate = !option_given(o, "--no-allreduce") };
        if (set->dp != ranks) {
            complain(command, "--dp %d disagrees with the %d %s started by mpiexec",
                     set->dp, ranks, plural(ranks, "rank", "ranks"));
            return 2;
        }
        if (!set->parallel.communicate
            && (option_given(o, "--verify") || option_given(o, "--gradcheck")
                || strcmp(option_text(o, "--zero"), "0") != 0)) {
            complain(command, "--no-allreduce is a timing baseline for --zero 0; "
                     "it cannot be verified");
            return 2;
        }
        if (strcmp(how, "ring") != 0 && strcmp(how, "mpi") != 0) {
            complain(command, "--allreduce: unknown \"%s\" (known: ring, mpi)", how);
            return 2;
        }
        if (set->parallel.ring && sizeof(real) != sizeof(float)) {
            complain(command, "--allreduce ring is single precision; this build "
                     "uses --allreduce mpi");
            return 2;
        }
        if (set->batch % set->dp != 0 || (set->batch / set->dp) % set->micro != 0) {
            complain(command, "--batch (%d) must divide into --dp (%d) slices of "
                     "--micro-batches (%d) equal pieces", set->batch, set->dp,
                     set->micro);
            return 2;
        }
        const char *zero = option_text(o, "--zero");
        int stage = zero[0] >= '0' && zero[0] <= '3' && zero[1] == '\0'
                  ? zero[0] - '0' : -1;
        set->parallel.stage = stage;
        set->parallel.seed = set->seed;
        if (stage < 0) {
            complain(command, "--zero must be 0, 1, 2 or 3; got \"%s\"", zero);
            return 2;
        }
        if (stage > 0 && sizeof(real) != sizeof(float)) {
            complain(command, "--zero %d uses the single-precision ring; this build "
                     "is double precision", stage);
            return 2;
        }
        if (stage > 0 && (option_given(o, "--allreduce")
                          || option_given(o, "--no-overlap"))) {
            complain(command, "--allreduce and --no-overlap choose stage 0's "
                     "all-reduce; --zero %d reduce-scatters and gathers with the "
                     "ring", stage);
            return 2;
        }
        if (stage > 0 && option_given(o, "--gradcheck")) {
            complain(command, "--gradcheck perturbs a whole model; use it without "
                     "--zero");
            return 2;
        }
        return 0;
    }
    return 2;
}

static int run(const char *command, Option *options, int rank, int ranks);

int main(int argc, char **argv)
{
    const char *command = "minigpt";
    int rank = 0, ranks = 1;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    Option options[] = {
        { "--layers", OPT_COUNT, 64, "transformer blocks L", 2, NULL, 0 },
        { "--hidden", OPT_COUNT, 4096, "width C of the residual stream", 64,
          NULL, 0 },
        { "--heads", OPT_COUNT, 64, "attention heads H (divides --hidden)", 4,
          NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--batch", OPT_COUNT, 4096, "sequences B per step", 8, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V (at least 8)", 32, NULL, 0 },
        { "--steps", OPT_COUNT, 1e7, "optimizer steps", 300, NULL, 0 },
        { "--lr", OPT_NUMBER, 1, "peak learning rate", 3e-3, NULL, 0 },
        { "--seed", OPT_COUNT, 1e15, "seed of the language, weights and data",
          1, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 4096,
          "split each batch into this many (gradient accumulation)", 1, NULL, 0 },
        { "--eval-every", OPT_COUNT, 1e7, "steps between validation losses", 50,
          NULL, 0 },
        { "--save", OPT_PATH, 0, "write a checkpoint here (at the end, and "
          "every --save-every steps)", 0, NULL, 0 },
        { "--save-every", OPT_COUNT, 1e7, "steps between checkpoints", 0, NULL, 0 },
        { "--resume", OPT_PATH, 0, "continue from this checkpoint", 0, NULL, 0 },
        { "--log", OPT_PATH, 0, "write a CSV line per step here", 0, NULL, 0 },
        { "--profile", OPT_PATH, 0, "write seconds per step by operation here",
          0, NULL, 0 },
        { "--transcript", OPT_PATH, 0, "also write the readable report here",
          0, NULL, 0 },
        { "--gradcheck", OPT_SWITCH, 0,
          "check the gradients against finite differences and exit", 0, NULL, 0 },
        { "--verify", OPT_SWITCH, 0, "compare the configuration with the "
          "reference on one batch and exit", 0, NULL, 0 },
        { "--quiet", OPT_SWITCH, 0, "no progress on standard error", 0, NULL, 0 },
        { "--dp", OPT_COUNT, 4096, "data-parallel ranks (must match mpiexec -n)",
          1, NULL, 0 },
        { "--allreduce", OPT_NAME, 0, "ring or mpi, for --dp", 0, "mpi", 0 },
        { "--no-overlap", OPT_SWITCH, 0, "one blocking all-reduce after the "
          "backward pass", 0, NULL, 0 },
        { "--no-allreduce", OPT_SWITCH, 0, "skip the gradient's all-reduce: a "
          "timing baseline of compute alone (the ranks' weights drift apart)", 0,
          NULL, 0 },
        { "--zero", OPT_NAME, 0, "ZeRO stage 0, 1, 2 or 3: shard the optimizer "
          "state, also the gradients, also the weights", 0, "0", 0 },
        { "--sample", OPT_COUNT, 1e6, "print this many tokens of the language "
          "and exit", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options_as(rank == 0, command, "A small GPT trained "
                                  "on CPU cores: the reference every parallel "
                                  "chapter checks against.", options,
                                  argc - 1, argv + 1);
    if (status == 1)                         /* --help was printed */
        status = 0;
    else if (status == 0)
        status = run(command, options, rank, ranks);
    MPI_Finalize();
    return status;
}

static int run(const char *command, Option *options, int rank, int ranks)
{
    Settings set;
    int saved = streams_silence(rank == 0);    /* every rank checks; one says */
    int invalid = read_settings(command, options, rank, ranks, &set);
    streams_restore(saved);
    if (invalid)
        return 2;
    if (option_given(options, "--sample"))
        return rank == 0 ? print_sample(&set, (int)option_number(options,
                                        "--sample"), options) : 0;
    int status = 0;
    if (rank == 0
        && (check_writable(command, "--save", set.save) != 0
            || check_writable(command, "--log", set.log) != 0
            || check_writable(command, "--profile", set.profile) != 0
            || check_writable(command, "--transcript",
                              option_text(options, "--transcript")) != 0
            || check_writable(command, "--output",
                              option_text(options, "--output")) != 0))
        status = 2;
    if (ranks_agree(status) != 0)
        return 2;
    /* Training keeps the activations of one micro-batch at a time;
       --gradcheck runs the whole batch in one pass. */
    int whole = option_given(options, "--gradcheck");
    unsigned holds = HOLDS_ALL;
    if (set.parallel.stage >= 1)
        holds &= ~(unsigned)HOLDS_MOMENTS;
    if (set.parallel.stage >= 2)
        holds &= ~(unsigned)HOLDS_GRADIENTS;
    if (set.parallel.stage == 3)
        holds &= ~(unsigned)HOLDS_WEIGHTS;
    Model model;
    if (model_init(&model, set.config,
                   whole ? set.batch : set.batch / set.dp / set.micro,
                   holds) != 0) {
        complain(command, "cannot allocate this model: --layers, --hidden, "
                 "--seq and --batch ask for more memory than there is");
        return 2;
    }
    if (model.params_memory != NULL)    /* else each rank holds a shard */
        model_init_weights(&model, model.params_memory, set.seed);
    Language lang;
    language_init(&lang, set.config.vocab, set.seed);
    if (data_parallel_init(&set.parallel, &model) != 0) {
        complain(command, "cannot allocate the buffers for --dp");
        status = 2;
    }
    status = ranks_agree(status);
    TrainingState state = { set.config, set.batch, set.seed, 0, 0,
                            training_rng(set.seed) };
    char why[1024];
    if (status == 0 && set.resume != NULL
        && load_checkpoint(&model, &set, &state, why, sizeof why) != 0) {
        if (rank == 0)                      /* every rank read it; one says */
            complain(command, "--resume: %s", why);
        status = 2;
    }
    status = ranks_agree(status);
    if (status == 0 && option_given(options, "--gradcheck"))
        status = gradcheck(&model, &lang, &set, options);
    else if (status == 0 && option_given(options, "--verify"))
        status = verify(&model, &lang, &set, options);
    else if (status == 0)
        status = train(&model, &lang, &set, &state, options);
    data_parallel_free(&set.parallel);
    model_free(&model);
    return status;
}
