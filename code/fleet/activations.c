/* Tangled from chapters/04-activations.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fleet.h"

double activation_bytes_per_layer(const LayerActivations *a)
{
    double cp = a->cp > 1 ? a->cp : 1;
    double sbh = a->seq / cp * a->micro_batch * a->hidden;
    double t = a->tp;
    double scores = 5 * a->heads * a->seq / (a->hidden * t);    /* 5as/(ht) */
    if (a->recompute == RECOMPUTE_FULL)                 /* the layer's input */
        return 2 * sbh / (a->sequence_parallel ? t : 1);
    if (a->recompute == RECOMPUTE_SELECTIVE || a->attention == ATTENTION_FLASH)
        scores = 0;                       /* dropped, or never written */
    double per_sbh = a->sequence_parallel ? 34 / t              /* 34/t      */
                                          : 10 + 24 / t;        /* 10 + 24/t */
    return sbh * (per_sbh + scores);
}
static const char *const recompute_names[] = { "none", "selective", "full" };
static const char *const attention_names[] = { "flash", "materialized" };
static const char *const schedule_titles[] = { "GPipe", "1F1B", "interleaved" };

/* The index of key in names[0..n), or -1. */
static int find_name(const char *const *names, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], key) == 0)
            return i;
    return -1;
}

/* The names by which reports and the later chapters print the choices. */
const char *recompute_name(Recompute r)
{
    return recompute_names[r];
}
static double layers_for_params(const Layout *l, double params)
{
    return fmax(1, round(params / params_per_layer(l)));
}
typedef struct {
    const char *label, *formula;
    double tp;
    int sequence_parallel;
    Recompute recompute;
} Variant;

static int layer_variants(const LayerActivations *run, Variant *v)
{
    double t = run->tp;
    int sp = run->sequence_parallel;
    Variant all[] = {
        { "no parallelism", "34 + 5as/h", 1, 0, RECOMPUTE_NONE },
        { "no parallelism, selective", "34", 1, 0, RECOMPUTE_SELECTIVE },
        { "TP", "10 + 24/t + 5as/(ht)", t, 0, RECOMPUTE_NONE },
        { "TP + SP", "34/t + 5as/(ht)", t, 1, RECOMPUTE_NONE },
        { "TP + selective", "10 + 24/t", t, 0, RECOMPUTE_SELECTIVE },
        { "TP + SP + selective", "34/t", t, 1, RECOMPUTE_SELECTIVE },
        { sp ? "full (TP + SP)" : "full", sp ? "2/t" : "2", t, sp,
          RECOMPUTE_FULL },
    };
    memcpy(v, all, sizeof all);
    return (int)(sizeof all / sizeof all[0]);
}

static double variant_bytes(const LayerActivations *run, const Variant *v)
{
    LayerActivations a = *run;
    a.tp = v->tp;
    a.sequence_parallel = v->sequence_parallel;
    a.recompute = v->recompute;
    a.attention = ATTENTION_MATERIALIZED;        /* the table as published */
    return activation_bytes_per_layer(&a);
}

static void print_layer_variants(FILE *out, const LayerActivations *a)
{
    double cp = a->cp > 1 ? a->cp : 1;
    double tokens = a->seq / cp * a->micro_batch, sbh = tokens * a->hidden;
    fprintf(out, "bytes one layer keeps per GPU for one micro-batch "
            "(16-bit activations),\n  as published, for attention that "
            "writes its scores:\n");
    fprintf(out, "  sbh  = %s tokens%s × %s hidden = %s\n", grouped(tokens).s,
            cp > 1 ? " (÷ cp)" : "", grouped(a->hidden).s, sci(sbh, 3).s);
    fprintf(out, "  5as/h = 5 × %s × %s ÷ %s = %s;  t = %s\n",
            grouped(a->heads).s, grouped(a->seq).s, grouped(a->hidden).s,
            sig(5 * a->heads * a->seq / a->hidden, 4).s, grouped(a->tp).s);
    Variant v[8];
    int n = layer_variants(a, v);
    for (int i = 0; i < n; i++) {
        double bytes = variant_bytes(a, &v[i]);
        fprintf(out, "  %-26s %-21s = %7s × sbh = %s\n", v[i].label,
                v[i].formula, sig(bytes / sbh, 4).s, bytes_auto(bytes).s);
    }
}
/* The stage of l that keeps the most activations (the first of equals). */
static double stage_of_most_activations(const Layout *l)
{
    double most = -1, stage = 0;
    for (double r = 0; r < fmax(l->pp, 1); r++) {
        double bytes = gpu_memory_of_stage(l, r).activations;
        if (bytes > most)
            most = bytes, stage = r;
    }
    return stage;
}

/* The most activations any stage of l keeps under schedule s. */
static double peak_activations(Layout l, Schedule s, double chunks)
{
    l.schedule = s;
    l.chunks = chunks;
    return gpu_memory_of_stage(&l, stage_of_most_activations(&l)).activations;
}

static void print_stages(FILE *out, const Layout *l)
{
    fprintf(out, "\n%s × %s parameters each",
            counted(l->layers, "layer", "layers").s,
            eng(params_per_layer(l)).s);
    if (l->params > 0)
        fprintf(out, " (the state scaled to %s in all)", eng(l->params).s);
    if (l->pp <= 1) {
        fprintf(out, "\nno pipeline: one micro-batch in flight\n");
        return;
    }
    fprintf(out, "\n%s, %s, %s", counted(l->pp, "stage", "stages").s,
            counted(l->micro_batches, "micro-batch", "micro-batches").s,
            schedule_titles[l->schedule]);
    if (l->schedule == SCHEDULE_INTERLEAVED)
        fprintf(out, " with %s per rank",
                counted(l->chunks, "chunk", "chunks").s);
    fprintf(out, ":\n");
    fprintf(out, "  stage  layers  in flight  activations  GPU total\n");
    for (double r = 0; r < l->pp; r++) {
        GpuMemory g = gpu_memory_of_stage(l, r);
        fprintf(out, "  %5s  %6s  %9s  %11s  %9s\n", grouped(r).s,
                grouped(g.stage_layers).s, sig(g.in_flight, 4).s,
                bytes_auto(g.activations).s, bytes_auto(g.total).s);
    }
    double chunks = l->schedule == SCHEDULE_INTERLEAVED ? l->chunks : 2;
    fprintf(out, "  heaviest stage's activations by schedule:\n"
            "    GPipe %s, 1F1B %s, interleaved (V = %s) %s\n",
            bytes_auto(peak_activations(*l, SCHEDULE_GPIPE, chunks)).s,
            bytes_auto(peak_activations(*l, SCHEDULE_1F1B, chunks)).s,
            grouped(chunks).s,
            bytes_auto(peak_activations(*l, SCHEDULE_INTERLEAVED, chunks)).s);
}
static void print_gpu_memory(FILE *out, const Layout *l, const GpuMemory *g,
                             double per_layer)
{
    double t = l->tp;
    double kept = per_layer * g->stage_layers * g->in_flight;
    fprintf(out, "\nper GPU, heaviest stage (%d of %s), %s:\n", g->heaviest_stage,
            grouped(fmax(l->pp, 1)).s, l->gpu->name);
    fprintf(out, "  state         = %s params ÷ %s (TP), ZeRO %d over %s: %s\n",
            eng(g->stage_params).s, grouped(t).s, l->zero,
            grouped(l->dp * fmax(l->cp, 1)).s, bytes_auto(g->state).s);
    fprintf(out, "  activations   = %s × %s in flight × %s = %s\n",
            counted(g->stage_layers, "layer", "layers").s,
            sig(g->in_flight, 4).s,
            bytes_auto(per_layer).s, bytes_auto(kept).s);
    if (g->recomputing > 0)
        fprintf(out, "                + one layer being recomputed %s = %s\n",
                bytes_auto(g->recomputing).s, bytes_auto(g->activations).s);
    double held = g->state + g->activations + g->gathered + g->logits
                + g->buffers;
    if (g->gathered > 0)
        fprintf(out, "  gathered      = 2 units × %s × 2 B ÷ %s = %s\n",
                eng(g->gathered * t / 4).s, grouped(t).s,
                bytes_auto(g->gathered).s);
    else
        fprintf(out, "  gathered      = 0 (weights not sharded)\n");
    if (g->logits > 0)
        fprintf(out, "  logits        = %s × 4 B × %s tokens × %s vocab ÷ %s "
                "= %s\n", grouped(g->logits / (4 * l->micro_batch * l->seq
                                     / fmax(l->cp, 1) * l->vocab / t)).s,
                grouped(l->micro_batch * l->seq / fmax(l->cp, 1)).s,
                grouped(l->vocab).s, grouped(t).s, bytes_auto(g->logits).s);
    else
        fprintf(out, "  logits        = 0 (on the last stage only)\n");
    if (l->zero >= 2)
        fprintf(out, "  buffers       = %s (--library-bytes) + one unit's "
                "gradients = %s\n", bytes_auto(l->library_bytes).s,
                bytes_auto(g->buffers).s);
    else
        fprintf(out, "  buffers       = %s (--library-bytes)\n",
                bytes_auto(g->buffers).s);
    fprintf(out, "  CUDA context  = %s (--context-bytes)\n",
            bytes_auto(g->context).s);
    fprintf(out, "  fragmentation = %s %% of %s (--fragmentation) = %s\n",
            sig(100 * g->fragmentation / held, 3).s, bytes_auto(held).s,
            bytes_auto(g->fragmentation).s);
    double memory = l->gpu->memory_bytes;
    int fits = g->total <= memory;
    fprintf(out, "  total         = %s of %s: %s (%s %s)\n",
            bytes_auto(g->total).s, bytes_auto(memory).s,
            fits ? "fits" : "does not fit",
            bytes_auto(fabs(memory - g->total)).s, fits ? "to spare" : "over");
}
static void print_activations(FILE *out, const Layout *l,
                              const LayerActivations *a)
{
    double per_layer = activation_bytes_per_layer(a);
    fprintf(out, "fleet activations: hidden %s, %s heads, sequence %s, "
            "micro-batch %s,\n  TP %s%s%s, recomputation %s, %s attention\n\n",
            grouped(l->hidden).s, grouped(l->heads).s, grouped(l->seq).s,
            grouped(l->micro_batch).s, grouped(l->tp).s,
            l->sequence_parallel ? " with SP" : "",
            l->cp > 1 ? ", CP" : "", recompute_names[l->recompute],
            attention_names[l->attention]);
    print_layer_variants(out, a);
    fprintf(out, "  this run, %s attention: %s per layer\n",
            attention_names[l->attention], bytes_auto(per_layer).s);
    print_stages(out, l);
    GpuMemory g = gpu_memory(l);
    print_gpu_memory(out, l, &g, per_layer);
}
static void report_activations(Report *r, const Layout *l,
                               const LayerActivations *a)
{
    double cp = l->cp > 1 ? l->cp : 1;
    double tokens = l->seq / cp * l->micro_batch;
    double per_layer = activation_bytes_per_layer(a);
    GpuMemory g = gpu_memory(l);
    static const char *const keys[] = {
        "bytes_per_layer_none", "bytes_per_layer_without_scores",
        "bytes_per_layer_tp", "bytes_per_layer_tp_sp",
        "bytes_per_layer_tp_selective", "bytes_per_layer_tp_sp_selective",
        "bytes_per_layer_full",
    };
    Variant v[8];
    int n = layer_variants(a, v);
    report_text(r, "recompute", recompute_names[l->recompute]);
    report_text(r, "attention", attention_names[l->attention]);
    report_text(r, "schedule", schedule_name(l->schedule));
    report_add(r, "tokens_per_micro_batch", FIELD_COUNT, tokens);
    report_add(r, "sbh", FIELD_SCI, tokens * l->hidden);
    report_add(r, "score_ratio", FIELD_REAL, 5 * l->heads * l->seq / l->hidden);
    report_add(r, "layers", FIELD_COUNT, l->layers);
    report_add(r, "params_per_layer", FIELD_ENG, params_per_layer(l));
    report_add(r, "layer_params", FIELD_ENG, l->layers * params_per_layer(l));
    report_add(r, "params", FIELD_ENG, l->params > 0 ? l->params
        : l->layers * params_per_layer(l) + 2 * l->vocab * l->hidden);
    for (int i = 0; i < n; i++)
        report_add(r, keys[i], FIELD_BYTES, variant_bytes(a, &v[i]));
    report_add(r, "bytes_per_layer", FIELD_BYTES, per_layer);
    report_add(r, "heaviest_stage", FIELD_COUNT, g.heaviest_stage);
    report_add(r, "most_activations_stage", FIELD_COUNT,
               stage_of_most_activations(l));
    report_add(r, "heaviest_stage_layers", FIELD_COUNT, g.stage_layers);
    report_add(r, "micro_batches_in_flight", FIELD_REAL, g.in_flight);
    report_add(r, "stored_activation_bytes", FIELD_BYTES,
               per_layer * g.stage_layers * g.in_flight);
    report_add(r, "recomputing_bytes", FIELD_BYTES, g.recomputing);
    report_add(r, "activation_bytes", FIELD_BYTES, g.activations);
    report_add(r, "state_bytes", FIELD_BYTES, g.state);
    report_add(r, "gathered_bytes", FIELD_BYTES, g.gathered);
    report_add(r, "logits_bytes", FIELD_BYTES, g.logits);
    report_add(r, "buffer_bytes", FIELD_BYTES, g.buffers);
    report_add(r, "context_bytes", FIELD_BYTES, g.context);
    report_add(r, "fragmentation_bytes", FIELD_BYTES, g.fragmentation);
    report_add(r, "bytes_per_gpu", FIELD_BYTES, g.total);
    report_add(r, "gpu_memory_bytes", FIELD_BYTES, l->gpu->memory_bytes);
    report_add(r, "fits", FIELD_COUNT, g.total <= l->gpu->memory_bytes);
    report_text(r, "verdict", g.total <= l->gpu->memory_bytes
                              ? "fits" : "does not fit");
    report_add(r, "headroom_bytes", FIELD_BYTES,
               fmax(0, l->gpu->memory_bytes - g.total));
    double chunks = l->schedule == SCHEDULE_INTERLEAVED ? l->chunks : 2;
    report_add(r, "peak_activation_bytes_gpipe", FIELD_BYTES,
               peak_activations(*l, SCHEDULE_GPIPE, chunks));
    report_add(r, "peak_activation_bytes_1f1b", FIELD_BYTES,
               peak_activations(*l, SCHEDULE_1F1B, chunks));
    report_add(r, "peak_activation_bytes_interleaved", FIELD_BYTES,
               peak_activations(*l, SCHEDULE_INTERLEAVED, chunks));
}
static void print_per_layer_sweep(FILE *out, LayerActivations a)
{
    fprintf(out, "seq,none,selective,full\n");
    for (a.seq = 512; a.seq <= 131072; a.seq *= 2) {
        fprintf(out, "%.0f", a.seq);
        for (int c = RECOMPUTE_NONE; c <= RECOMPUTE_FULL; c++) {
            a.recompute = (Recompute)c;
            fprintf(out, ",%.17g", activation_bytes_per_layer(&a));
        }
        fputc('\n', out);
    }
}
int activations_main(int argc, char **argv)
{
    const char *command = "fleet activations";
    Option options[] = {
        { "--hidden", OPT_COUNT, 1e6, "hidden size h", 12288, NULL, 0 },
        { "--heads", OPT_COUNT, 1e5, "attention heads a (divides --hidden)",
          96, NULL, 0 },
        { "--kv-heads", OPT_COUNT, 1e5, "key-value heads, for grouped-query "
          "attention (default: --heads)", 0, NULL, 0 },
        { "--ffn", OPT_COUNT, 1e7, "the MLP's inner width, the columns of "
          "its first matrix (default: 4 × --hidden)", 0, NULL, 0 },
        { "--gated", OPT_SWITCH, 0, "a gated MLP (SwiGLU): three matrices of "
          "hidden × ffn, not two", 0, NULL, 0 },
        { "--seq", OPT_COUNT, 1e8, "tokens per sequence s", 4096, NULL, 0 },
        { "--micro-batch", OPT_COUNT, 1e5, "sequences per micro-batch b",
          4, NULL, 0 },
        { "--vocab", OPT_COUNT, 1e7, "vocabulary V (50,304 is an assumption "
          "for the running example)", 50304, NULL, 0 },
        { "--layers", OPT_COUNT, 1e5, "transformer layers L (default: as "
          "many as --params makes at this shape)", 0, NULL, 0 },
        { "--params", OPT_NUMBER, 1e15, "the model's size: sets the layer "
          "count and scales the state (--layers alone: the shape's count)",
          100e9, NULL, 0 },
        { "--tp", OPT_COUNT, 1024, "tensor-parallel degree t (divides "
          "--heads)", 8, NULL, 0 },
        { "--sequence-parallel", OPT_SWITCH, 0, "split the activations "
          "outside the tensor-parallel regions over t too", 0, NULL, 0 },
        { "--recompute", OPT_NAME, 0, "recomputation: none, selective (the "
          "attention scores) or full (all but each layer's input)",
          0, "none", 0 },
        { "--attention", OPT_NAME, 0, "attention kernel: flash (fused, never "
          "stores the scores) or materialized (writes them)", 0, "flash", 0 },
        { "--cp", OPT_COUNT, 1024, "context-parallel degree: each GPU keeps "
          "1/cp of every sequence", 1, NULL, 0 },
        { "--pp", OPT_COUNT, 1024, "pipeline stages p", 1, NULL, 0 },
        { "--schedule", OPT_NAME, 0, "pipeline schedule: gpipe, 1f1b or "
          "interleaved", 0, "1f1b", 0 },
        { "--chunks", OPT_COUNT, 1024, "model chunks per rank V (with "
          "--schedule interleaved only)", 2, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 1e6, "micro-batches m per pipeline "
          "per step", 1, NULL, 0 },
        { "--dp", OPT_COUNT, 1e7, "data-parallel ranks the state is sharded "
          "over", 1, NULL, 0 },
        { "--zero", OPT_NAME, 0, "ZeRO stage 0, 1, 2 or 3 (FSDP) over --dp "
          "× --cp", 0, "0", 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or "
          "mi300x", 0, "h100", 0 },
        { "--context-bytes", OPT_NUMBER, 1e12, "CUDA context and loaded "
          "kernels per GPU (an assumption: measure yours)",
          CONTEXT_BYTES_DEFAULT, NULL, 0 },
        { "--library-bytes", OPT_NUMBER, 1e12, "the collective library's "
          "buffers per GPU (an assumption)", LIBRARY_BYTES_DEFAULT, NULL, 0 },
        { "--fragmentation", OPT_NUMBER, 1, "the allocator's slack, a "
          "fraction of the live bytes (an assumption)",
          FRAGMENTATION_DEFAULT, NULL, 0 },
        { "--sweep", OPT_SWITCH, 0, "print CSV of bytes per layer against "
          "sequence length, by recomputation, and exit", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "Activation bytes per layer, per pipeline stage and per GPU, with "
        "everything else a GPU holds.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    #define GIVEN(flag) option_given(options, flag)
    #define NUMBER(flag) option_number(options, flag)
    const Gpu *gpu = find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    int recompute = find_name(recompute_names, 3, option_text(options, "--recompute"));
    int schedule = schedule_from_name(option_text(options, "--schedule"));
    if (schedule == SCHEDULE_ZB_H1)
        schedule = -1;          /* Chapter 5's simulator has it; this model not */
    int attention = find_name(attention_names, 2,
                              option_text(options, "--attention"));
    const char *zero = option_text(options, "--zero");
    int stage = zero[0] >= '0' && zero[0] <= '3' && zero[1] == '\0'
              ? zero[0] - '0' : -1;
    double hidden = NUMBER("--hidden"), heads = NUMBER("--heads");
    double tp = NUMBER("--tp"), pp = NUMBER("--pp");
    double kv = GIVEN("--kv-heads") ? NUMBER("--kv-heads") : heads;
    double seq = NUMBER("--seq"), cp = NUMBER("--cp");
    double m = NUMBER("--micro-batches"), chunks = NUMBER("--chunks");
    int bad = 1;
    if (recompute < 0)
        complain(command, "--recompute must be none, selective or full; got "
                 "\"%s\"", option_text(options, "--recompute"));
    else if (schedule < 0)
        complain(command, "--schedule must be gpipe, 1f1b or interleaved; got "
                 "\"%s\"", option_text(options, "--schedule"));
    else if (attention < 0)
        complain(command, "--attention must be flash or materialized; got "
                 "\"%s\"", option_text(options, "--attention"));
    else if (stage < 0)
        complain(command, "--zero must be 0, 1, 2 or 3; got \"%s\"", zero);
    else if (fmod(hidden, heads) != 0)
        complain(command, "--heads (%s) must divide --hidden (%s)",
                 grouped(heads).s, grouped(hidden).s);
    else if (fmod(heads, tp) != 0)
        complain(command, "--tp (%s) must divide --heads (%s)", grouped(tp).s,
                 grouped(heads).s);
    else if (fmod(heads, kv) != 0 || fmod(kv, tp) != 0)
        complain(command, "--kv-heads (%s) must divide --heads (%s) and be a "
                 "multiple of --tp (%s)", grouped(kv).s, grouped(heads).s,
                 grouped(tp).s);
    else if (fmod(seq, cp) != 0)
        complain(command, "--cp (%s) must divide --seq (%s)", grouped(cp).s,
                 grouped(seq).s);
    else if (GIVEN("--chunks") && schedule != SCHEDULE_INTERLEAVED)
        complain(command, "--chunks applies only to --schedule interleaved");
    else if (schedule == SCHEDULE_INTERLEAVED && chunks < 2)
        complain(command, "--chunks must be at least 2 to interleave");
    else if (pp > 1 && schedule != SCHEDULE_GPIPE && m < pp)
        complain(command, "--micro-batches (%s) must be at least --pp (%s) "
                 "under %s", grouped(m).s, grouped(pp).s,
                 schedule_titles[schedule]);
    else if (GIVEN("--sweep") && report_requested(options))
        complain(command, "--sweep prints CSV; it takes no --json, --csv or "
                 "--latex");
    else
        bad = 0;
    if (bad)
        return 2;
    Layout l = {
        .hidden = hidden, .heads = heads, .kv_heads = kv,
        .ffn = GIVEN("--ffn") ? NUMBER("--ffn") : 4 * hidden,
        .gated = GIVEN("--gated"), .seq = seq,
        .vocab = NUMBER("--vocab"), .tp = tp, .cp = cp, .pp = pp,
        .dp = NUMBER("--dp"), .zero = stage,
        .sequence_parallel = GIVEN("--sequence-parallel"),
        .recompute = (Recompute)recompute, .schedule = (Schedule)schedule,
        .attention = (Attention)attention,
        .chunks = schedule == SCHEDULE_INTERLEAVED ? chunks : 1,
        .micro_batches = m,
        .micro_batch = NUMBER("--micro-batch"), .gpu = gpu,
        .state = mixed_precision_adam(),
        .context_bytes = NUMBER("--context-bytes"),
        .library_bytes = NUMBER("--library-bytes"),
        .fragmentation = NUMBER("--fragmentation"),
    };
    l.layers = GIVEN("--layers") ? NUMBER("--layers")
                                 : layers_for_params(&l, NUMBER("--params"));
    l.params = GIVEN("--layers") && !GIVEN("--params") ? 0 : NUMBER("--params");
    if (pp > l.layers) {
        complain(command, "--pp (%s) cannot exceed the layers (%s)",
                 grouped(pp).s, grouped(l.layers).s);
        return 2;
    }
    LayerActivations a = { .seq = l.seq, .micro_batch = l.micro_batch,
                           .hidden = hidden, .heads = heads, .tp = tp,
                           .sequence_parallel = l.sequence_parallel,
                           .recompute = l.recompute,
                           .attention = l.attention, .cp = l.cp };
    #undef GIVEN
    #undef NUMBER

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (option_given(options, "--sweep")) {
        print_per_layer_sweep(out.file, a);
    } else if (report_requested(options)) {
        Report r = { .count = 0 };
        report_activations(&r, &l, &a);
        print_report(out.file, &r, options);
    } else {
        print_activations(out.file, &l, &a);
    }
    return output_commit(&out, command);
}
