/* Tangled from chapters/06-reference.nw, chapters/07-data-parallel.nw, chapters/94-trainer-plumbing.nw, chapters/99c-buckets.nw and chapters/99f-measured-plumbing.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

int batch_alloc(Batch *b, int B, int T)
{
    b->inputs = malloc(sizeof(int) * (size_t)B * T);
    b->targets = malloc(sizeof(int) * (size_t)B * T);
    return b->inputs && b->targets ? 0 : -1;
}

void batch_free(Batch *b)
{
    free(b->inputs);
    free(b->targets);
}

void batch_draw(Batch *b, const Language *lang, Rng *rng, int B, int T)
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

Rng validation_rng(uint64_t seed)
{
    return (Rng){ seed ^ 0x76616c6964ULL };               /* "valid" */
}

Rng training_rng(uint64_t seed)
{
    return (Rng){ seed ^ 0x747261696eULL };               /* "train" */
}

int print_sample(const Settings *set, int n, Option *options)
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
double batch_gradient(Model *m, const Batch *b, int B, int micro,
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
double rank_gradient(Model *m, const Batch *b, Settings *set)
{
    DataParallel *dp = &set->parallel;
    int share = set->batch / dp->ranks;  /* the sequences this rank computes */
    size_t first = (size_t)dp->rank * share * m->config.seq;
    Batch mine = { b->inputs + first, b->targets + first };
    real part = (real)share / (real)set->batch
              * (real)data_parallel_loss_scale(dp);  /* Chapter 12; 1 here */
    data_parallel_begin(dp);
    gradient_histogram_begin(m, dp);                 /* Chapter 12 */
    double loss = m->pp != NULL                           /* Chapter 10 */
                ? pipeline_gradient(m, &mine, share, set->micro, part)
                : batch_gradient(m, &mine, share, set->micro, part);
    data_parallel_combine(dp, &loss);
    tp_sum_sequence_parallel_gradients(m);            /* Chapter 9 */
    gradient_histogram_end(m, dp);
    return loss;
}
AdamW adamw_settings(real lr)
{
    return (AdamW){ lr, 0.9f, 0.95f, 1e-8f, 0.1f, 1.0f };
}

/* Clip and step; returns the gradient's norm before clipping. Its time,
   less any wait on other ranks inside it, is the step's optimizer part. */
real optimizer_step(Settings *set, const AdamW *opt, real lr, int step)
{
    double started = seconds_now(), waiting = step_clock_waiting();
    real norm = data_parallel_step(&set->parallel, opt, lr, step);
    step_clock_add(PART_OPTIMIZER, seconds_now() - started
                                   - (step_clock_waiting() - waiting));
    return norm;
}

/* The configuration's weights, gradient or one of Adam's moments, whole,
   on every rank. */
void collect_state(Settings *set, StateKind kind, real *into)
{
    collect_whole_state(&set->parallel, kind, into);      /* Chapter 9 */
}
enum { VALIDATION_BATCHES = 4 };

/* Mean loss over fixed validation batches; the tally is left as it was, so
   that evaluation does not count as training work. */
double validation_loss(Model *m, const Language *lang, uint64_t seed,
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
            sum += (m->pp != NULL ? pipeline_loss : model_forward)(
                       m, b.inputs + (size_t)k * m->batch * T,
                       b.targets + (size_t)k * m->batch * T, m->batch) / pieces;
    }
    batch_free(&b);
    m->tally = saved;
    return sum / VALIDATION_BATCHES;
}
int train(Model *m, const Language *lang, Settings *set,
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
    s.peak = set->machine != NULL ? set->peak : measure_peak_flops(0.1);
    s.step_seconds = malloc(sizeof(double) * (size_t)(set->steps + 1));
    s.step_parts = malloc(sizeof *s.step_parts * (size_t)(set->steps + 1));
    if (s.step_seconds == NULL || s.step_parts == NULL)
        abort();
    language_entropy(lang, set->seed ^ 0x656e74726f7079ULL, 1000000,
                     &s.unigram, &s.bigram);
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    if (batch_alloc(&b, set->batch, set->config.seq) != 0)
        abort();
    if (log != NULL && (!appending || ftell(log) == 0))
        fprintf(log, "step,lr,train_loss,val_loss,grad_norm,unigram,bigram,"
                "loss_scale,skipped\n");
    memset(&m->tally, 0, sizeof m->tally);
    s.val_loss = NAN;
    int failed = 0;
    for (int step = (int)state.step; step < set->steps; step++) {
        double started = seconds_now();
        step_clock_reset();
        double worked = tally_work(&m->tally);     /* the model's, before it */
        batch_draw(&b, lang, &state.data, set->batch, set->config.seq);
        state.sequences += (uint64_t)set->batch;
        model_zero_grads(m);
        s.train_loss = rank_gradient(m, &b, set);
        real lr = learning_rate(set->lr, step, set->steps), norm;
        TIMED(m, OP_OPTIMIZER, 0,
              norm = optimizer_step(set, &opt, lr, step + 1));
        state.step = (uint64_t)step + 1;
        s.step_seconds[s.steps] = seconds_now() - started;
        step_breakdown(s.step_parts[s.steps], s.step_seconds[s.steps],
                       tally_work(&m->tally) - worked);
        s.seconds += s.step_seconds[s.steps];
        s.steps++;
        int last = step + 1 == set->steps;
        int evaluate = (step + 1) % set->eval_every == 0 || last;
        if (evaluate)
            s.val_loss = validation_loss(m, lang, set->seed, set->batch);
        if (log != NULL) {
            fprintf(log, "%d,%.*g,%.*g,", step + 1, LOG_DIGITS, (double)lr,
                    LOG_DIGITS, s.train_loss);
            if (evaluate)
                fprintf(log, "%.*g", LOG_DIGITS, s.val_loss);
            fprintf(log, ",%.*g,%.*g,%.*g,%.*g,%d\n", LOG_DIGITS, (double)norm,
                    LOG_DIGITS, s.unigram, LOG_DIGITS, s.bigram, LOG_DIGITS,
                    loss_scale_used(&set->parallel), step_skipped(&set->parallel));
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
            int bad = checkpoint_now(set, &state, 0, why, sizeof why) != 0;
            if (bad)
                complain(command, "--save: %s", why);
            if (ranks_agree(bad ? 2 : 0, set->mesh.world) != 0) {
                failed = 1;
                break;
            }
        }
        fault_drill(set, step + 1);                           /* Chapter 13 */
    }
    batch_free(&b);
    s.tally = m->tally;
    s.step = (int)state.step;
    set->parallel.identical = data_parallel_identical(&set->parallel);
    data_parallel_step_time(&set->parallel);
    data_parallel_account(&set->parallel);
    data_parallel_wait_time(&set->parallel);
    if (log != NULL)
        fclose(log);
    step_statistics(&s);
    average_breakdown(&s, set->mesh.world);
    free(s.step_seconds);
    free(s.step_parts);
    if (failed)
        return 2;
    int bad = set->save != NULL
           && checkpoint_now(set, &state, 1, why, sizeof why) != 0;
    if (bad)
        complain(command, "--save: %s", why);
    if (ranks_agree(bad ? 2 : 0, set->mesh.world) != 0)
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
