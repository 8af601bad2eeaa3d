/* Tangled from chapters/11e-predicted.nw and chapters/99e-predict-plumbing.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

/* What one core of this machine does, from build/machine.json. */
typedef struct {
    double gemm_flops;        /* R_gemm: the trainer's GEMM, FLOP/s       */
    double memcpy_rate;       /* M: bytes copied per second               */
    double stream;            /* 2M: bytes read or written per second     */
    Link p2p;                 /* alpha and beta, between two ranks        */
} Core;
/* minigpt's model and batch, as its flags give them. */
typedef struct {
    double layers, hidden, heads, vocab, seq;   /* L, C, H, V, T           */
    double batch;             /* B: sequences a step, all replicas         */
    double micro_batches;     /* m: each replica's share split this often  */
    Schedule schedule;        /* with a pipeline                           */
    double chunks;            /* v: with the interleaved schedule          */
} MiniShape;

typedef struct { double tp, pp, dp; } MeshLayout;

/* What one rank of a stage does in a step. */
typedef struct {
    double flops, tp_s, pp_s, dp_s, optimizer_s, other_s;
    double params;            /* its share of the stage's parameters       */
    double tp_all_reduces, pp_messages, dp_all_reduces, optimizer_bytes;
} RankWork;

/* A layout's step, in minigpt's step_breakdown's parts (means over the
   ranks, which add up to step_s), and what they came from. */
typedef struct {
    MeshLayout layout;
    double compute_s, tp_s, pp_s, dp_s, bubble_s, optimizer_s, other_s;
    double step_s;
    double flops;             /* all ranks, a step                         */
    double bubble_fraction;   /* phi, the closed form's                    */
    double tp_all_reduces, pp_messages, dp_all_reduces;   /* busiest rank  */
    double optimizer_bytes, params;                       /* busiest rank  */
} Prediction;

/* A backward pass's FLOPs over its forward's, in minigpt's count. */
#define BACKWARD_RATIO 2
/* A tensor of `count` numbers on this rank: its parameters, and its
   all-reduce over the replicas. */
static void gradient_tensor(RankWork *w, double count, const MeshLayout *l,
                            const Core *c)
{
    w->params += count;
    if (l->dp == 1)
        return;
    w->dp_all_reduces += 1;
    w->dp_s += collective_seconds(ALL_REDUCE, 4 * count, l->dp,
                                  &c->p2p);
}
static RankWork rank_work(const MiniShape *s, const MeshLayout *l,
                          const Core *c, double r)
{
    RankWork work = { 0 }, *w = &work;
    double blocks = s->layers / l->pp, last = r == l->pp - 1;
    double tokens = s->batch / l->dp * s->seq;          /* the rank's share */
    double C = s->hidden;
    w->flops = tokens * (6 * (blocks * 12 * C * C + last * C * s->vocab)
                         + 6 * blocks * C * (s->seq + 1)) / l->tp;
    double act = 4 * tokens / s->micro_batches * C;   /* (n, C), bytes */
    double n = act / (4 * C);                         /* positions, n  */
    w->tp_all_reduces = l->tp > 1 ? s->micro_batches * (4 * blocks + 3 * last)
                                   : 0;
    w->tp_s = l->tp > 1 ? s->micro_batches
        * (4 * blocks * collective_seconds(ALL_REDUCE, act, l->tp, &c->p2p)
           + last * (collective_seconds(ALL_REDUCE, act, l->tp, &c->p2p)
                     + collective_seconds(ALL_REDUCE, 4 * n, l->tp, &c->p2p)
                     + collective_seconds(ALL_REDUCE, 8 * n, l->tp, &c->p2p)))
        : 0;
    double chunks = s->schedule == SCHEDULE_INTERLEAVED ? s->chunks : 1;
    w->pp_messages = l->pp > 1
        ? s->micro_batches * (2 * chunks - last - (r == 0)) : 0;
    w->pp_s = w->pp_messages * (c->p2p.latency + act / c->p2p.bandwidth);
    double block[12] = { C, C, 3 * C * C / l->tp, 3 * C / l->tp,   /* ln1, qkv */
                         C * C / l->tp, C, C, C,                 /* proj, ln2 */
                         4 * C * C / l->tp, 4 * C / l->tp,        /* fc */
                         4 * C * C / l->tp, C };                  /* fcproj */
    if (r == 0) {
        gradient_tensor(w, s->vocab * C, l, c);                   /* wte */
        gradient_tensor(w, s->seq * C, l, c);                     /* wpe */
    }
    for (double i = 0; i < blocks; i++)
        for (int j = 0; j < 12; j++)
            gradient_tensor(w, block[j], l, c);
    if (last) {
        gradient_tensor(w, C, l, c);                              /* lnf_w */
        gradient_tensor(w, C, l, c);                              /* lnf_b */
        gradient_tensor(w, C * s->vocab / l->tp, l, c);           /* head_w */
    }
    w->optimizer_bytes = 32 * w->params;
    w->optimizer_s = w->optimizer_bytes / c->stream
                   + collective_seconds(ALL_REDUCE, 8, l->tp * l->pp * l->dp,
                                        &c->p2p);
    w->other_s = 4 * w->params / c->stream
               + collective_seconds(ALL_REDUCE, 8, l->dp, &c->p2p);
    return work;
}
static double pipeline_idle_share(const MiniShape *s, const MeshLayout *l)
{
    int p = (int)l->pp, m = (int)s->micro_batches;
    int v = s->schedule == SCHEDULE_INTERLEAVED ? (int)s->chunks : 1;
    if (s->schedule != SCHEDULE_ZB_H1 || m >= p)
        return bubble_fraction_closed(s->schedule, p, m, v, BACKWARD_RATIO,
                                      WEIGHT_SHARE_DEFAULT);
    Pipeline sim = { .schedule = s->schedule, .stages = p,
                     .micro_batches = m, .chunks = 1,
                     .backward_ratio = BACKWARD_RATIO,
                     .weight_share = WEIGHT_SHARE_DEFAULT };
    if (simulate_pipeline(&sim) != 0)     /* zb-h1 never deadlocks */
        abort();
    free(sim.ops);
    return sim.bubble;
}
static Prediction predict_step(const MiniShape *s, const MeshLayout *l,
                               const Core *c)
{
    Prediction p = { .layout = *l };
    double busiest = 0, after = 0, busy = 0, flops = 0;
    for (double r = 0; r < l->pp; r++) {
        RankWork w = rank_work(s, l, c, r);
        double mine = w.flops / c->gemm_flops + w.tp_s + w.pp_s;
        busiest = fmax(busiest, mine);
        after = fmax(after, w.dp_s + w.optimizer_s + w.other_s);
        busy += mine / l->pp;
        flops += w.flops * l->tp * l->dp;
        p.compute_s += w.flops / c->gemm_flops / l->pp;
        p.tp_s += w.tp_s / l->pp;
        p.pp_s += w.pp_s / l->pp;
        p.dp_s += w.dp_s / l->pp;
        p.other_s += w.other_s / l->pp;
        p.tp_all_reduces = fmax(p.tp_all_reduces, w.tp_all_reduces);
        p.pp_messages = fmax(p.pp_messages, w.pp_messages);
        p.dp_all_reduces = fmax(p.dp_all_reduces, w.dp_all_reduces);
        p.optimizer_bytes = fmax(p.optimizer_bytes, w.optimizer_bytes);
        p.params = fmax(p.params, w.params);
    }
    p.flops = flops;
    p.bubble_fraction = l->pp > 1 ? pipeline_idle_share(s, l) : 0;
    double pipeline = busiest / (1 - p.bubble_fraction);
    p.bubble_s = pipeline - busy;
    p.step_s = pipeline + after;
    p.optimizer_s = p.step_s - pipeline - p.dp_s - p.other_s;
    return p;
}
/* NULL when minigpt runs layout l of shape s; else why not, as it says. */
static const char *cannot_run(const MiniShape *s, const MeshLayout *l)
{
    static char why[256];
    double v = s->schedule == SCHEDULE_INTERLEAVED ? s->chunks : 1;
    if (fmod(s->heads, l->tp) != 0)
        snprintf(why, sizeof why, "--tp %g does not divide --heads %g: each "
                 "rank computes whole heads", l->tp, s->heads);
    else if (fmod(s->vocab, l->tp) != 0)
        snprintf(why, sizeof why, "--tp %g does not divide --vocab %g: each "
                 "rank holds a t-th of the head's columns", l->tp, s->vocab);
    else if (fmod(s->batch, l->dp) != 0
             || fmod(s->batch / l->dp, s->micro_batches) != 0)
        snprintf(why, sizeof why, "--batch (%g) must divide into --dp (%g) "
                 "slices of --micro-batches (%g) equal pieces", s->batch,
                 l->dp, s->micro_batches);
    else if (l->pp > 1 && fmod(s->layers, l->pp * v) != 0)
        snprintf(why, sizeof why, "--layers %g does not split into --pp %g "
                 "stages of %g %s each", s->layers, l->pp, v,
                 v == 1 ? "part" : "equal chunks");
    else if (l->pp > 1 && v > 1 && fmod(s->micro_batches, l->pp) != 0)
        snprintf(why, sizeof why, "--schedule interleaved runs micro-batches "
                 "in groups of --pp %g: --micro-batches %g is not a multiple "
                 "of it", l->pp, s->micro_batches);
    else
        return NULL;
    return why;
}
static int read_core(const char *command, const char *path, Core *c)
{
    double latency, bandwidth;
    if (machine_figure(command, "--machine", path, "gemm_flops_per_core",
                       &c->gemm_flops) != 0
        || machine_figure(command, "--machine", path,
                          "memcpy_bytes_per_second", &c->memcpy_rate) != 0
        || machine_figure(command, "--machine", path, "p2p_latency_s",
                          &latency) != 0
        || machine_figure(command, "--machine", path, "p2p_bytes_per_second",
                          &bandwidth) != 0)
        return 2;
    c->stream = 2 * c->memcpy_rate;
    c->p2p = (Link){ "point-to-point", bandwidth, latency };
    return 0;
}
static void report_prediction(Report *r, const Prediction *p,
                              const MiniShape *s)
{
    const MeshLayout *l = &p->layout;
    report_add(r, "ranks", FIELD_COUNT, l->tp * l->pp * l->dp);
    report_add(r, "tp", FIELD_COUNT, l->tp);
    report_add(r, "pp", FIELD_COUNT, l->pp);
    report_add(r, "dp", FIELD_COUNT, l->dp);
    report_text(r, "schedule",
                l->pp == 1 ? "none" : schedule_name(s->schedule));
    report_add(r, "chunks", FIELD_COUNT, l->pp > 1
               && s->schedule == SCHEDULE_INTERLEAVED ? s->chunks : 1);
    report_add(r, "micro_batches", FIELD_COUNT, s->micro_batches);
    report_add(r, "micro_batch", FIELD_COUNT,
               s->batch / (l->dp * s->micro_batches));
    report_add(r, "flops_per_step", FIELD_SCI, p->flops);
    report_add(r, "params_per_rank", FIELD_COUNT, p->params);
    report_add(r, "tp_all_reduces", FIELD_COUNT, p->tp_all_reduces);
    report_add(r, "pp_messages", FIELD_COUNT, p->pp_messages);
    report_add(r, "dp_all_reduces", FIELD_COUNT, p->dp_all_reduces);
    report_add(r, "optimizer_bytes", FIELD_BYTES, p->optimizer_bytes);
    report_add(r, "bubble_fraction", FIELD_FRACTION, p->bubble_fraction);
}

/* The parts, named as minigpt's report names them (whole = 1) or by
   their own names alone. */
static void report_breakdown(Report *r, const Prediction *p, int whole)
{
    static const char *const names[] = {
        "step_breakdown.compute_s", "step_breakdown.exposed_comm_s.tp",
        "step_breakdown.exposed_comm_s.pp", "step_breakdown.exposed_comm_s.dp",
        "step_breakdown.bubble_s", "step_breakdown.optimizer_s",
        "step_breakdown.other_s", "step_breakdown.step_s"
    };
    double values[] = { p->compute_s, p->tp_s, p->pp_s, p->dp_s,
                        p->bubble_s, p->optimizer_s, p->other_s, p->step_s };
    size_t skip = whole ? 0 : strlen("step_breakdown.");
    for (int i = 0; i < 8; i++)
        report_add(r, names[i] + skip, FIELD_REAL, values[i]);
}
static Text ms(double seconds)
{
    return sig(1e3 * seconds, 3);
}

static void print_prediction_table(FILE *out, const Prediction *p, int count)
{
    fprintf(out, "  %-15s %7s %7s %7s %7s %7s %9s %7s %7s\n", "t × p × d",
            "compute", "TP", "PP", "DP", "bubble", "optimizer", "other",
            "step");
    for (int i = 0; i < count; i++) {
        const MeshLayout *l = &p[i].layout;
        char name[64];              /* each × is two bytes, one column */
        snprintf(name, sizeof name, "%g × %g × %g", l->tp, l->pp, l->dp);
        fprintf(out, "  %-15s %7s %7s %7s %7s %7s %9s %7s %7s\n", name,
                ms(p[i].compute_s).s, ms(p[i].tp_s).s, ms(p[i].pp_s).s,
                ms(p[i].dp_s).s, ms(p[i].bubble_s).s, ms(p[i].optimizer_s).s,
                ms(p[i].other_s).s, ms(p[i].step_s).s);
    }
}

static int faster(const void *x, const void *y)
{
    const Prediction *a = x, *b = y;
    return (a->step_s > b->step_s) - (a->step_s < b->step_s);
}
static void print_latex_prediction(FILE *out, const Prediction *p,
                                   Option *options)
{
    static char keys[REPORT_MAX_FIELDS][64];
    Report all = { .count = 0 }, r = { .count = 0 };
    report_breakdown(&all, p, 0);
    report_add(&all, "bubble_fraction", FIELD_FRACTION, p->bubble_fraction);
    report_add(&all, "tp_all_reduces", FIELD_COUNT, p->tp_all_reduces);
    report_add(&all, "pp_messages", FIELD_COUNT, p->pp_messages);
    report_add(&all, "dp_all_reduces", FIELD_COUNT, p->dp_all_reduces);
    report_add(&all, "flops_per_step", FIELD_SCI, p->flops);
    report_add(&all, "params_per_rank", FIELD_COUNT, p->params);
    report_add(&all, "optimizer_bytes", FIELD_BYTES, p->optimizer_bytes);
    for (int i = 0; i < all.count; i++) {
        snprintf(keys[i], sizeof keys[i], "tp%g_pp%g_dp%g_%s",
                 p->layout.tp, p->layout.pp, p->layout.dp, all.fields[i].key);
        report_add(&r, keys[i], all.fields[i].kind, all.fields[i].value);
    }
    print_report(out, &r, options);
}
static int layouts_of(const MiniShape *s, double ranks, const MeshLayout *fix,
                      Prediction *into, const Core *c, const char **why)
{
    int count = 0;
    for (double tp = 1; tp <= ranks; tp++)
        for (double pp = 1; tp * pp <= ranks; pp++) {
            MeshLayout l = { tp, pp, ranks / (tp * pp) };
            if (fmod(ranks, tp * pp) != 0 || (fix->tp && fix->tp != tp)
                || (fix->pp && fix->pp != pp) || (fix->dp && fix->dp != l.dp))
                continue;
            const char *no = cannot_run(s, &l);
            if (no != NULL)
                *why = no;
            else
                into[count++] = predict_step(s, &l, c);
        }
    qsort(into, (size_t)count, sizeof *into, faster);
    return count;
}

int layout_on_machine(int argc, char **argv)
{
    const char *command = "fleet layout --machine";
    Option options[] = {
        { "--machine", OPT_PATH, 0, "this machine's figures (build/machine.json)",
          0, NULL, 0 },
        { "--ranks", OPT_COUNT, 4096, "ranks, one core each (default: every layout "
          "of 1, 2, 4 and 8 ranks)", 0, NULL, 0 },
        { "--tp", OPT_COUNT, 4096, "fix the tensor-parallel ranks", 0, NULL, 0 },
        { "--pp", OPT_COUNT, 4096, "fix the pipeline stages", 0, NULL, 0 },
        { "--dp", OPT_COUNT, 4096, "fix the data-parallel ranks", 0, NULL, 0 },
        /* minigpt's shape and batch, with its defaults */
        { "--layers", OPT_COUNT, 64, "transformer blocks L", 2, NULL, 0 },
        { "--hidden", OPT_COUNT, 4096, "width C of the residual stream", 64, NULL, 0 },
        { "--heads", OPT_COUNT, 64, "attention heads H (divides --hidden)", 4,
          NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--batch", OPT_COUNT, 4096, "sequences B per step", 8, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V (at least 8)", 32, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 4096, "split each replica's batch into this "
          "many", 1, NULL, 0 },
        { "--schedule", OPT_NAME, 0, "with a pipeline: gpipe, 1f1b, interleaved or "
          "zb-h1", 0, "1f1b", 0 },
        { "--chunks", OPT_COUNT, 64, "with --schedule interleaved: chunks v of blocks "
          "per stage", 2, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--gpus") == 0) {
            complain(command, "--gpus: this machine runs ranks, one core "
                     "each; give --ranks");
            return 2;
        }
    int status = parse_options(command, "minigpt's step on this machine, "
        "predicted for every layout of its ranks, one core a rank, in the "
        "parts of minigpt's step_breakdown.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;
    const char *path = option_text(options, "--machine");
    Core core;
    if (read_core(command, path, &core) != 0)
        return 2;
    MiniShape s = {
        .layers = option_number(options, "--layers"),
        .hidden = option_number(options, "--hidden"),
        .heads = option_number(options, "--heads"),
        .vocab = option_number(options, "--vocab"),
        .seq = option_number(options, "--seq"),
        .batch = option_number(options, "--batch"),
        .micro_batches = option_number(options, "--micro-batches"),
        .chunks = option_number(options, "--chunks"),
    };
    int schedule = schedule_from_name(option_text(options, "--schedule"));
    s.schedule = (Schedule)schedule;
    MeshLayout fix = { option_number(options, "--tp"),
                       option_number(options, "--pp"),
                       option_number(options, "--dp") };
    if (schedule < 0) {
        complain(command, "--schedule: unknown \"%s\" (known: gpipe, 1f1b, "
                 "interleaved, zb-h1)", option_text(options, "--schedule"));
        return 2;
    }
    if (option_given(options, "--chunks") && schedule != SCHEDULE_INTERLEAVED) {
        complain(command, "--chunks is for --schedule interleaved; %s runs one "
                 "chunk per stage", option_text(options, "--schedule"));
        return 2;
    }
    if (fmod(s.hidden, s.heads) != 0) {
        complain(command, "--heads (%g) must divide --hidden (%g)", s.heads,
                 s.hidden);
        return 2;
    }
    if (s.vocab < 8) {                          /* minigpt's MIN_VOCAB */
        complain(command, "--vocab must be at least 8; got %g", s.vocab);
        return 2;
    }
    if (fmod(s.batch, s.micro_batches) != 0) {
        complain(command, "--micro-batches (%g) must divide --batch (%g)",
                 s.micro_batches, s.batch);
        return 2;
    }
    double counts[4] = { 1, 2, 4, 8 };
    int asked = 4;
    if (option_given(options, "--ranks"))
        counts[0] = option_number(options, "--ranks"), asked = 1;
    else if (fix.tp && fix.pp && fix.dp)
        counts[0] = fix.tp * fix.pp * fix.dp, asked = 1;
    Prediction *found = malloc(sizeof *found * 4 * 4096);
    int of[4] = { 0 }, total = 0;
    const char *why = NULL;
    if (found == NULL)
        abort();
    for (int i = 0; i < asked; i++) {
        of[i] = layouts_of(&s, counts[i], &fix, found + total, &core, &why);
        total += of[i];
        if (of[i] == 0 && asked == 1) {
            complain(command, "--ranks %g: minigpt runs no layout of it with "
                     "these flags (%s)", counts[i], why != NULL ? why
                     : "--tp × --pp × --dp must equal --ranks");
            free(found);
            return 2;
        }
    }
    if (total == 0) {
        complain(command, "minigpt runs no layout of 1, 2, 4 or 8 ranks with "
                 "these flags (%s)", why != NULL ? why
                 : "--tp × --pp × --dp must be 1, 2, 4 or 8");
        free(found);
        return 2;
    }
    Output out;
    if (output_open(&out, command, options) != 0) {
        free(found);
        return 2;
    }
    if (option_given(options, "--json")) {
        json_list_begin(out.file, "layouts");
        for (int i = 0; i < total; i++) {
            Report r = { .count = 0 };
            report_prediction(&r, &found[i], &s);
            report_breakdown(&r, &found[i], 1);
            json_list_item(out.file, &r, i);
        }
        json_list_end(out.file);
    } else if (option_given(options, "--csv")) {
        for (int i = 0; i < total; i++) {
            Report r = { .count = 0 };
            report_prediction(&r, &found[i], &s);
            report_breakdown(&r, &found[i], 1);
            print_csv_row(out.file, &r, i == 0);
        }
    } else if (option_given(options, "--latex")) {
        for (int i = 0; i < total; i++)
            print_latex_prediction(out.file, &found[i], options);
    } else {
        fprintf(out.file, "minigpt on this machine, one core a rank (%s):\n"
                "  %s, hidden %g, %g heads, seq %g, vocab %g\n"
                "  %s a step, each replica's in %s; %s with a pipeline\n"
                "  a core: GEMM %s FLOP/s, memcpy %s GB/s;\n"
                "  a message: %s, and its bytes at %s GB/s\n", path,
                counted(s.layers, "layer", "layers").s, s.hidden, s.heads, s.seq,
                s.vocab,
                counted(s.batch, "sequence", "sequences").s,
                counted(s.micro_batches, "micro-batch", "micro-batches").s,
                schedule_name(s.schedule), sci(core.gemm_flops, 3).s,
                sig(core.memcpy_rate / 1e9, 3).s, duration(core.p2p.latency).s,
                sig(core.p2p.bandwidth / 1e9, 3).s);
        fprintf(out.file, "  FLOPs a step, all ranks: %s\n\npredicted step, "
                "milliseconds, fastest first:\n", sci(found[0].flops, 3).s);
        for (int i = 0, at = 0; i < asked; at += of[i], i++) {
            if (of[i] == 0) {
                fprintf(out.file, "\n%s: none minigpt runs\n",
                        counted(counts[i], "rank", "ranks").s);
                continue;
            }
            fprintf(out.file, "\n%s:\n", counted(counts[i], "rank", "ranks").s);
            print_prediction_table(out.file, found + at, of[i]);
        }
    }
    free(found);
    return output_commit(&out, command);
}
