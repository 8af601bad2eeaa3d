/* Tangled from chapters/93-trainer-state.nw; edit the chapter, not this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of `path` into dir ("." if it has none); returns the
   last component. */
const char *split_path(const char *path, char *dir, size_t size)
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
int check_state_paths(const char *command, Option *o)
{
    enum { FILES = 6 };
    const char *flag[FILES] = { "--save", "--log", "--profile",
                                "--transcript", "--output", "--resume" };
    struct stat st;
    for (int i = 0; i < FILES - 1; i++) {           /* the files written */
        const char *path = option_text(o, flag[i]);
        if (path == NULL || stat(path, &st) != 0)
            continue;
        if (i > 0 && S_ISDIR(st.st_mode)) {  /* --save's is a directory */
            complain(command, "%s: %s is a directory; give a file name",
                     flag[i], path);
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

int dump_state(Model *m, const Language *lang, Settings *set,
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

/* The directory `to` with a hard link to (or a copy of) each file of the
   checkpoint `from`; 0 on success, and nothing of it left on failure. */
static int link_checkpoint(const char *from, const char *to)
{
    DIR *d = opendir(from);
    int ok = d != NULL && mkdir(to, 0777) == 0;
    char a[8192], b[8192];
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        ok = link(a, b) == 0 || copy_file(a, b) == 0;
    }
    if (d != NULL)
        closedir(d);
    if (!ok)
        remove_checkpoint(to);
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
    remove_checkpoint(name);           /* a name an earlier run left */
    if (link_checkpoint(path, name) != 0) {
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
        remove_checkpoint(name);
    }
    free(steps);
    return 0;
}
/* Every rank writes its shard; then rank 0 keeps the copies that
   --keep-checkpoints asks for. Rank 0 returns the outcome, which every
   rank agreed on, and the others 0, so that one line says why. */
int save_checkpoint(Settings *set, const TrainingState *s, char *why,
                    size_t why_size)
{
    int status = checkpoint_save_sharded(set, set->save, s, why, why_size);
    if (set->rank != 0)
        return 0;
    if (status == 0 && set->keep > 0)
        status = keep_checkpoint(set->save, s->step, set->keep, why,
                                 why_size);
    return status;
}

int load_checkpoint(Settings *set, TrainingState *s, char *why,
                    size_t why_size)
{
    int status = checkpoint_load_sharded(set, set->resume, s, why, why_size);
    mixed_state_loaded(&set->parallel);       /* Chapter 12's 16-bit copy */
    return status;
}
TrainingState fresh_state(const Settings *set)
{
    return (TrainingState){
        set->config, set->batch, set->seed, 0, 0, training_rng(set->seed),
        (uint64_t)set->steps, (uint64_t)warmup_steps(set->steps),
        adamw_settings(set->lr)
    };
}

/* 0 when the checkpoint in *s may go on under this run's flags, and then
   *s takes their schedule; 2 after one line (from rank 0) saying why not. */
int resume_schedule(const char *command, const Settings *set,
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
