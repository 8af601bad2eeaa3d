/* Tangled from chapters/06-reference.nw, chapters/07-data-parallel.nw, chapters/08-sharded-state.nw and chapters/93-trainer-state.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minigpt.h"

typedef struct {
    ModelConfig config;
    int batch, steps, micro, eval_every, save_every, quiet;
    real lr;
    uint64_t seed;
    const char *save, *resume, *log, *profile;
    const char *machine;   /* the machine file the peak comes from, or NULL */
    double peak;           /* one core's peak FLOP/s read from it, or 0     */
    double gemm;           /* and the rate of its gemm, FLOP/s              */
    int rank, ranks;       /* this process, and how many there are */
    int dp;                /* ranks that share each batch: 1 until Chapter 7 */
    const char *dump;          /* --dump DIR, or NULL                  */
    int keep;                  /* --keep-checkpoints, or 0             */
    int allow_schedule_change; /* --allow-schedule-change              */
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
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of `path` into dir ("." if it has none); returns the
   last component. */
static const char *split_path(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, size, ".");
    else                                     /* "/x" is in "/" */
        snprintf(dir, size, "%.*s", (int)(slash - path) + (slash == path),
                 path);
    return slash == NULL ? path : slash + 1;
}

static int same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int same_file(const char *p, const char *q)
{
    struct stat a, b;
    int has_p = stat(p, &a) == 0, has_q = stat(q, &b) == 0;
    if (has_p || has_q)
        return has_p && has_q && same_inode(&a, &b);
    char dp[4096], dq[4096];
    const char *base_p = split_path(p, dp, sizeof dp);
    const char *base_q = split_path(q, dq, sizeof dq);
    return strcmp(base_p, base_q) == 0 && stat(dp, &a) == 0
        && stat(dq, &b) == 0 && same_inode(&a, &b);
}

/* 0 if the paths of the flags can all be used as asked, 2 after one line. */
static int check_state_paths(const char *command, Option *o)
{
    enum { FILES = 6 };
    const char *flag[FILES] = { "--save", "--log", "--profile",
                                "--transcript", "--output", "--resume" };
    struct stat st;
    for (int i = 0; i < FILES - 1; i++) {           /* the files written */
        const char *path = option_text(o, flag[i]);
        if (path == NULL || stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            complain(command, "%s: %s is a directory; give a file name",
                     flag[i], path);
            return 2;
        }
        if (i == 0 && !S_ISREG(st.st_mode)) {
            complain(command, "--save: %s is not a regular file, and a "
                     "checkpoint is renamed over what is there", path);
            return 2;
        }
    }
    const char *dump = option_text(o, "--dump");
    if (dump != NULL && stat(dump, &st) == 0 && !S_ISDIR(st.st_mode)) {
        complain(command, "--dump: %s is not a directory", dump);
        return 2;
    }
    for (int i = 0; i < FILES; i++)
        for (int j = i + 1; j < FILES; j++) {
            const char *p = option_text(o, flag[i]);
            const char *q = option_text(o, flag[j]);
            if (p == NULL || q == NULL || (i == 0 && j == FILES - 1))
                continue;
            if (same_file(p, q)) {
                complain(command, "%s %s and %s %s name the same file; "
                         "give each its own", flag[i], p, flag[j], q);
                return 2;
            }
        }
    return 0;
}
/* Write `data`, of `dims` dimensions given by `shape`, as a .npy file whose
   elements are of type `descr` ("<f4", "<f8", "<i4") and item_bytes each. */
static int npy_write(const char *path, const char *descr, const void *data,
                     size_t item_bytes, int dims, const size_t *shape)
{
    char shape_text[160] = "", header[320];
    size_t count = 1;
    for (int d = 0; d < dims; d++) {           /* "(5,)" and "(2, 3)" */
        size_t used = strlen(shape_text);
        snprintf(shape_text + used, sizeof shape_text - used, "%s%zu%s",
                 d > 0 ? " " : "", shape[d],
                 dims == 1 || d < dims - 1 ? "," : "");
        count *= shape[d];
    }
    int length = snprintf(header, sizeof header, "{'descr': '%s', "
                          "'fortran_order': False, 'shape': (%s), }", descr,
                          shape_text);
    size_t padded = (10 + (size_t)length + 1 + 63) / 64 * 64;
    size_t header_bytes = padded - 10;               /* with the newline */
    memset(header + length, ' ', header_bytes - (size_t)length);
    header[header_bytes - 1] = '\n';
    unsigned char lead[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                               (unsigned char)(header_bytes & 0xff),
                               (unsigned char)(header_bytes >> 8) };
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int ok = fwrite(lead, 1, sizeof lead, f) == sizeof lead
          && fwrite(header, 1, header_bytes, f) == header_bytes
          && fwrite(data, item_bytes, count, f) == count;
    return fclose(f) == 0 && ok ? 0 : -1;
}
/* Tensor t's shape, as in the comments of Params; returns its rank. */
static int param_shape(const Model *m, int t, size_t *shape)
{
    ModelConfig c = m->config;
    size_t L = (size_t)c.layers, C = (size_t)c.hidden, T = (size_t)c.seq;
    size_t V = (size_t)c.vocab;
    const size_t shapes[PARAM_TENSORS][3] = {
        { V, C }, { T, C }, { L, C }, { L, C }, { L, C, 3 * C }, { L, 3 * C },
        { L, C, C }, { L, C }, { L, C }, { L, C }, { L, C, 4 * C },
        { L, 4 * C }, { L, 4 * C, C }, { L, C }, { C }, { C }, { C, V }
    };
    const int dims[PARAM_TENSORS] = { 2, 2, 2, 2, 3, 2, 3, 2, 2, 2, 3, 2, 3,
                                      2, 1, 1, 2 };
    size_t count = 1;
    for (int d = 0; d < dims[t]; d++)
        count *= shape[d] = shapes[t][d];
    if (count != m->param_size[t])              /* the table is wrong */
        abort();
    return dims[t];
}
static int make_directory(const char *path)
{
    struct stat st;
    return mkdir(path, 0777) == 0
        || (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
         ? 0 : -1;
}

/* Each tensor of the flat array `flat` (weights or gradients) as
   DIR/SUB/NAME.npy; 0 on success, or -1 with the failed path in `path`. */
static int dump_tensors(const Model *m, const real *flat, const char *dir,
                        const char *sub, char *path, size_t path_size)
{
    const char *type = sizeof(real) == 8 ? "<f8" : "<f4";
    snprintf(path, path_size, "%s/%s", dir, sub);
    if (make_directory(path) != 0)
        return -1;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t shape[3];
        int dims = param_shape(m, t, shape);
        snprintf(path, path_size, "%s/%s/%s.npy", dir, sub, param_names[t]);
        if (npy_write(path, type, flat, sizeof(real), dims, shape) != 0)
            return -1;
        flat += m->param_size[t];
    }
    return 0;
}
static int write_manifest(const char *path, const Model *m,
                          const Settings *set, const TrainingState *s,
                          double loss)
{
    ModelConfig c = m->config;
    const AdamW *o = &s->optimizer;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "{\n  \"format\": \"minigpt dump 1\",\n"
            "  \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"seq\": %d, "
            "\"vocab\": %d,\n  \"batch\": %d, \"seed\": %llu, \"step\": %llu,"
            "\n  \"params\": %zu, \"real\": \"%s\",\n", c.layers, c.hidden,
            c.heads, c.seq, c.vocab, set->batch,
            (unsigned long long)set->seed, (unsigned long long)s->step,
            m->params_count, sizeof(real) == 8 ? "<f8" : "<f4");
    fprintf(f, "  \"loss\": %.17g,\n  \"layernorm_eps\": 1e-05, "
            "\"activation\": \"gelu_tanh\",\n  \"attention_scale\": "
            "\"1/sqrt(hidden/heads)\", \"head\": \"untied\",\n", loss);
    fprintf(f, "  \"adamw\": { \"beta1\": %.9g, \"beta2\": %.9g, "
            "\"eps\": %.9g, \"weight_decay\": %.9g, \"clip\": %.9g },\n",
            (double)o->beta1, (double)o->beta2, (double)o->eps,
            (double)o->weight_decay, (double)o->clip);
    fprintf(f, "  \"schedule\": { \"steps\": %llu, \"warmup\": %llu, "
            "\"peak_lr\": %.9g, \"next_lr\": %.9g },\n  \"tensors\": [\n",
            (unsigned long long)s->steps, (unsigned long long)s->warmup,
            (double)o->lr, (double)learning_rate(o->lr, (int)s->step,
                                                 (int)s->steps));
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t shape[3];
        int dims = param_shape(m, t, shape);
        fprintf(f, "    { \"name\": \"%s\", \"decays\": %s, \"shape\": [",
                param_names[t], decays(t) ? "true" : "false");
        for (int d = 0; d < dims; d++)
            fprintf(f, "%s%zu", d > 0 ? ", " : "", shape[d]);
        fprintf(f, "] }%s\n", t + 1 < PARAM_TENSORS ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}
_Static_assert(sizeof(int) == 4, "the tokens are written as <i4");

static int dump_state(Model *m, const Language *lang, Settings *set,
                      const TrainingState *s, Option *options)
{
    const char *command = "minigpt", *dir = set->dump;
    int B = set->batch, T = set->config.seq;
    char path[8192];
    Batch b;
    Rng rng = s->data;               /* the batch the next step would draw */
    if (batch_alloc(&b, B, T) != 0)
        abort();
    batch_draw(&b, lang, &rng, B, T);
    size_t tokens[2] = { (size_t)B, (size_t)T };
    snprintf(path, sizeof path, "%s", dir);
    int failed = make_directory(dir) != 0
              || dump_tensors(m, m->params_memory, dir, "weights", path,
                              sizeof path) != 0;
    model_zero_grads(m);
    double loss = batch_gradient(m, &b, B, 1, 1);
    if (!failed)
        failed = dump_tensors(m, m->grads_memory, dir, "grads", path,
                              sizeof path) != 0;
    const char *name[] = { "inputs.npy", "targets.npy", "loss.npy",
                           "manifest.json" };
    for (int i = 0; i < 4 && !failed; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, name[i]);
        failed = (i < 2 ? npy_write(path, "<i4", i == 0 ? b.inputs
                                    : b.targets, sizeof(int), 2, tokens)
                  : i == 2 ? npy_write(path, "<f8", &loss, sizeof loss, 0,
                                       NULL)
                  : write_manifest(path, m, set, s, loss)) != 0;
    }
    batch_free(&b);
    if (failed) {
        complain(command, "--dump: could not write %s", path);
        return 2;
    }
    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_add(&r, "loss", FIELD_REAL, loss);
        report_add(&r, "params", FIELD_COUNT, (double)m->params_count);
        report_add(&r, "tensors", FIELD_COUNT, PARAM_TENSORS);
        report_add(&r, "step", FIELD_COUNT, (double)s->step);
        report_text(&r, "directory", dir);
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "dump: the weights and gradients of %d tensors (%s "
                "parameters), a batch of %d × %d tokens and its loss %.6f, in "
                "%s\n", PARAM_TENSORS, grouped((double)m->params_count).s, B, T,
                loss, dir);
    }
    return output_commit(&out, command);
}
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in != NULL ? fopen(to, "wb") : NULL;
    char buffer[65536];
    size_t n;
    int ok = in != NULL && out != NULL;
    while (ok && (n = fread(buffer, 1, sizeof buffer, in)) > 0)
        ok = fwrite(buffer, 1, n, out) == n;
    ok = ok && !ferror(in) && fflush(out) == 0 && fsync(fileno(out)) == 0;
    if (in != NULL)
        fclose(in);
    if (out != NULL && fclose(out) != 0)
        ok = 0;
    if (!ok)
        remove(to);
    return ok ? 0 : -1;
}

static int newest_first(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The checkpoint of step `step` is at `path`: keep it as PATH.stepNNNNNN
   too, and remove all but the newest `keep` such names. */
static int keep_checkpoint(const char *path, uint64_t step, int keep,
                           char *why, size_t why_size)
{
    char name[4200], dir[4096];
    snprintf(name, sizeof name, "%s.step%06llu", path,
             (unsigned long long)step);
    remove(name);                      /* a name an earlier run left */
    if (link(path, name) != 0 && copy_file(path, name) != 0) {
        snprintf(why, why_size, "could not keep a copy of it as %.512s",
                 name);
        return -1;
    }
    const char *base = split_path(path, dir, sizeof dir);
    size_t length = strlen(base), count = 0, room = 0;
    uint64_t *steps = NULL;
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, base, length) != 0
            || strncmp(e->d_name + length, ".step", 5) != 0)
            continue;
        const char *digits = e->d_name + length + 5;   /* after ".step" */
        char again[32];
        if (*digits < '0' || *digits > '9')
            continue;
        uint64_t n = strtoull(digits, NULL, 10);
        snprintf(again, sizeof again, "%06llu", (unsigned long long)n);
        if (strcmp(again, digits) != 0)       /* not a name this wrote */
            continue;
        if (count == room) {
            room = room ? 2 * room : 16;
            uint64_t *more = realloc(steps, room * sizeof *steps);
            if (more == NULL)
                abort();
            steps = more;
        }
        steps[count++] = n;
    }
    if (d != NULL)
        closedir(d);
    if (steps != NULL)
        qsort(steps, count, sizeof *steps, newest_first);
    for (size_t i = (size_t)keep; i < count; i++) {
        snprintf(name, sizeof name, "%s.step%06llu", path,
                 (unsigned long long)steps[i]);
        remove(name);
    }
    free(steps);
    return 0;
}
enum { LOG_DIGITS = sizeof(real) == 8 ? 17 : 9 };
/* 0 on success on rank 0; the other ranks take part and return 0. */
static int write_checkpoint(Model *m, Settings *set, const TrainingState *s,
                            char *why, size_t why_size)
{
    if (set->parallel.stage > 0)
        return sharded_save(&set->parallel, set->save, s, why, why_size);
    return set->rank == 0 ? checkpoint_save(set->save, m, s, why, why_size)
                          : 0;
}

/* The same, then the copies that --keep-checkpoints keeps. */
static int save_checkpoint(Model *m, Settings *set, const TrainingState *s,
                           char *why, size_t why_size)
{
    int status = write_checkpoint(m, set, s, why, why_size);
    if (status == 0 && set->rank == 0 && set->keep > 0)
        status = keep_checkpoint(set->save, s->step, set->keep, why,
                                 why_size);
    return status;
}

static int load_checkpoint(Model *m, Settings *set, TrainingState *s,
                           char *why, size_t why_size)
{
    if (set->parallel.stage > 0)
        return sharded_load(&set->parallel, set->resume, s, why, why_size);
    return checkpoint_load(set->resume, m, s, why, why_size);
}
static TrainingState fresh_state(const Settings *set)
{
    return (TrainingState){
        set->config, set->batch, set->seed, 0, 0, training_rng(set->seed),
        (uint64_t)set->steps, (uint64_t)warmup_steps(set->steps),
        adamw_settings(set->lr)
    };
}

/* 0 when the checkpoint in *s may go on under this run's flags, and then
   *s takes their schedule; 2 after one line (from rank 0) saying why not. */
static int resume_schedule(const char *command, const Settings *set,
                           TrainingState *s, int speak)
{
    TrainingState want = fresh_state(set);
    const AdamW *a = &s->optimizer, *b = &want.optimizer;
    int same_schedule = s->steps == want.steps && s->warmup == want.warmup
                     && a->lr == b->lr;
    int same_adam = a->beta1 == b->beta1 && a->beta2 == b->beta2
                 && a->eps == b->eps && a->weight_decay == b->weight_decay
                 && a->clip == b->clip;
    if (s->step > 0 && !(same_schedule && same_adam)
        && !set->allow_schedule_change) {
        if (speak && !same_schedule)
            complain(command, "--resume: %s was saved by a run of --steps "
                     "%llu --lr %g; this one asks for --steps %d --lr %g: "
                     "add --allow-schedule-change if that is meant",
                     set->resume, (unsigned long long)s->steps,
                     (double)a->lr, set->steps, (double)b->lr);
        else if (speak)
            complain(command, "--resume: %s was saved with Adam's beta1 %g, "
                     "beta2 %g, eps %g, decay %g, clip %g, and this build "
                     "uses %g, %g, %g, %g, %g: add --allow-schedule-change "
                     "if that is meant", set->resume, (double)a->beta1,
                     (double)a->beta2, (double)a->eps,
                     (double)a->weight_decay, (double)a->clip,
                     (double)b->beta1, (double)b->beta2, (double)b->eps,
                     (double)b->weight_decay, (double)b->clip);
        return 2;
    }
    if (s->step > want.steps) {
        if (speak)
            complain(command, "--resume: %s has taken %llu steps, more "
                     "than --steps %d: there is nothing to run", set->resume,
                     (unsigned long long)s->step, set->steps);
        return 2;
    }
    if (speak && !set->quiet && s->step == want.steps)
        complain(command, "--resume: %s has taken all %d steps; there is "
                 "nothing to train, only the report", set->resume,
                 set->steps);
    s->steps = want.steps;
    s->warmup = want.warmup;
    s->optimizer = want.optimizer;
    return 0;
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
    TrainingState start = fresh_state(set);
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
    double *step_seconds;      /* each step's time, in order        */
    int warmup, timed;         /* steps not counted, and counted    */
    double step_median, step_q1, step_q3;  /* of the counted steps  */
    Tally tally;               /* training work only                */
} RunSummary;

static int ascending_seconds(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of n sorted numbers, interpolated between neighbours. */
static double quantile(const double *sorted, int n, double q)
{
    double at = q * (n - 1);
    int i = (int)at;
    return i + 1 < n ? sorted[i] + (at - i) * (sorted[i + 1] - sorted[i])
                     : sorted[n - 1];
}

/* The speed of a run is that of its median step. The first steps warm up
   the caches and the allocator and are not counted: one step in a short run,
   a tenth of the steps (at most ten) in a long one. The middle half of the
   counted steps, between the first and third quartiles, is the spread. */
static void step_statistics(RunSummary *s)
{
    int n = s->steps;
    s->warmup = n < 2 ? 0 : n < 20 ? 1 : n / 10 < 10 ? n / 10 : 10;
    s->timed = n - s->warmup;
    if (s->timed <= 0)
        return;
    double *t = s->step_seconds + s->warmup;
    qsort(t, (size_t)s->timed, sizeof *t, ascending_seconds);
    s->step_median = quantile(t, s->timed, 0.5);
    s->step_q1 = quantile(t, s->timed, 0.25);
    s->step_q3 = quantile(t, s->timed, 0.75);
}

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
    int timed = s->timed > 0 && s->step_median > 0;
    double step = timed ? s->step_median : 1, matmul = 0, all = 0;
    for (int op = 0; op < OPS; op++) {
        all += s->tally.seconds[op][0] + s->tally.seconds[op][1];
        if (op == OP_MATMUL)
            matmul = (s->tally.seconds[op][0] + s->tally.seconds[op][1]) / steps;
    }
    all /= steps;
    report_text(r, "cpu", cpu);
    report_add(r, "cores", FIELD_COUNT, (double)sysconf(_SC_NPROCESSORS_ONLN));
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
    report_add(r, "matmul_fraction", FIELD_FRACTION, all > 0 ? matmul / all : 0);
    report_add(r, "matmul_flops", FIELD_SCI,
               matmul > 0 ? 6 * matmul_params(c) * rank_tokens / matmul : 0);
    if (set->machine != NULL) {           /* what the machine file adds */
        report_add(r, "gemm_flops", FIELD_SCI, set->gemm);
        report_add(r, "matmul_ms_at_gemm_rate", FIELD_REAL,
                   1e3 * 6 * matmul_params(c) * rank_tokens / set->gemm);
    }
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
    fprintf(out, "speed          = %s tokens/s, the median of %s %s "
            "after %s warm-up\n", grouped(F("tokens_per_second")).s,
            grouped(F("timed_steps")).s,
            plural(F("timed_steps"), "step", "steps"),
            grouped(F("warmup_steps")).s);
    fprintf(out, "  spread       = %s to %s tokens/s, the middle half\n",
            grouped(F("tokens_per_second_low")).s,
            grouped(F("tokens_per_second_high")).s);
    fprintf(out, "  step         = %s tokens; %s s in all\n",
            grouped(F("tokens_per_step")).s, sig(F("seconds"), 3).s);
    fprintf(out, "FLOPs per step = %s counted = %s matrices + %s attention\n",
            sci(F("flops_per_step"), 3).s, sci(F("flops_matmul_per_step"), 3).s,
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
    fprintf(out, "  matrices     = %s ms of a step (%s %% of the profile) at "
            "%s FLOP/s\n", sig(F("matmul_ms"), 3).s,
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
            fprintf(out, "  waited       = %s ms per step after the backward "
                    "pass, for the all-reduce\n                 and for the "
                    "slower rank\n", sig(1e3 * F("exposed_seconds"), 3).s);
        fprintf(out, "  step         = %s ms, the median of %s %s between "
                "step starts,\n                 after the warm-up\n",
                sig(1e3 * F("step_seconds_median"), 3).s,
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
    s.peak = set->machine != NULL ? set->peak : measure_peak_flops(0.25);
    s.step_seconds = malloc(sizeof(double) * (size_t)(set->steps + 1));
    if (s.step_seconds == NULL)
        abort();
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
        s.step_seconds[s.steps] = seconds_now() - started;
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
            fprintf(log, ",%.*g,%.*g,%.*g\n", LOG_DIGITS, (double)norm, LOG_DIGITS,
                    s.unigram, LOG_DIGITS, s.bigram);
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
    step_statistics(&s);
    free(s.step_seconds);
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
        .machine = option_text(o, "--machine"),
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
    else if (set->machine != NULL
             && (machine_figure(command, "--machine", set->machine,
                                "peak_flops_per_core", &set->peak) != 0
                 || machine_figure(command, "--machine", set->machine,
                                   "gemm_flops_per_core", &set->gemm) != 0))
        return 2;                          /* machine_figure said why */
    else {
        set->dump = option_text(o, "--dump");
        set->keep = option_given(o, "--keep-checkpoints")
                  ? (int)option_number(o, "--keep-checkpoints") : 0;
        set->allow_schedule_change = option_given(o, "--allow-schedule-change");
        int checks = option_given(o, "--gradcheck") || option_given(o, "--verify")
                  || option_given(o, "--sample");
        if (set->dump != NULL && checks) {
            complain(command, "--dump, --gradcheck, --verify and --sample are "
                     "separate runs; give one");
            return 2;
        }
        if (set->dump != NULL && (ranks > 1 || option_given(o, "--zero"))) {
            complain(command, "--dump writes one process's whole state; run it "
                     "without mpiexec and --zero");
            return 2;
        }
        if (set->dump != NULL && set->save != NULL) {
            complain(command, "--dump trains nothing and saves no checkpoint; for "
                     "the initial state as a checkpoint, give --steps 0 --save PATH");
            return 2;
        }
        if (!checks && set->dump == NULL && set->steps == 0 && set->save == NULL) {
            complain(command, "--steps 0 trains nothing: it saves the initial "
                     "state, and needs --save PATH");
            return 2;
        }
        if (set->keep > 0 && set->save == NULL) {
            complain(command, "--keep-checkpoints needs --save PATH");
            return 2;
        }
        if (set->allow_schedule_change && set->resume == NULL) {
            complain(command, "--allow-schedule-change is for --resume; give both");
            return 2;
        }
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
        { "--steps", OPT_WHOLE, 1e7, "optimizer steps (0: save the initial "
          "state)", 300, NULL, 0 },
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
        { "--machine", OPT_PATH, 0, "take one core's peak FLOP/s from this file "
          "(build/machine.json) instead of measuring it", 0, NULL, 0 },
        { "--transcript", OPT_PATH, 0, "also write the readable report here",
          0, NULL, 0 },
        { "--gradcheck", OPT_SWITCH, 0,
          "check the gradients against finite differences and exit", 0, NULL, 0 },
        { "--verify", OPT_SWITCH, 0, "compare the configuration with the "
          "reference on one batch and exit", 0, NULL, 0 },
        { "--quiet", OPT_SWITCH, 0, "no progress on standard error", 0, NULL, 0 },
        { "--dump", OPT_PATH, 0, "write the weights, the first batch, its loss and "
          "its gradients as NumPy files into this directory, and exit", 0, NULL, 0 },
        { "--keep-checkpoints", OPT_COUNT, 1e6, "also keep the last N checkpoints, "
          "as PATH.step000100 and so on beside --save PATH", 0, NULL, 0 },
        { "--allow-schedule-change", OPT_SWITCH, 0, "let --resume go on under "
          "another --steps or --lr", 0, NULL, 0 },
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
        && (check_state_paths(command, options) != 0
            || check_writable(command, "--save", set.save) != 0
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
    int whole = option_given(options, "--gradcheck")
             || option_given(options, "--dump");
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
    TrainingState state = fresh_state(&set);
    char why[1024];
    if (status == 0 && set.resume != NULL
        && load_checkpoint(&model, &set, &state, why, sizeof why) != 0) {
        if (rank == 0)                      /* every rank read it; one says */
            complain(command, "--resume: %s", why);
        status = 2;
    }
    int trains = !option_given(options, "--gradcheck")
              && !option_given(options, "--verify") && set.dump == NULL;
    if (status == 0 && set.resume != NULL && trains)
        status = resume_schedule(command, &set, &state, rank == 0);
    status = ranks_agree(status);
    if (status == 0 && option_given(options, "--gradcheck"))
        status = gradcheck(&model, &lang, &set, options);
    else if (status == 0 && option_given(options, "--verify"))
        status = verify(&model, &lang, &set, options);
    else if (status == 0 && set.dump != NULL)
        status = dump_state(&model, &lang, &set, &state, options);
    else if (status == 0)
        status = train(&model, &lang, &set, &state, options);
    data_parallel_free(&set.parallel);
    model_free(&model);
    return status;
}
