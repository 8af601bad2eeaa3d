/* Tangled from chapters/14b-moe-arith.nw and chapters/99k-experts-plumbing.nw; edit the chapters, not this file. */
#include <math.h>
#include <string.h>

#include "fleet.h"

typedef struct {
    /* what is given */
    double params, active;     /* P, every expert; A, what a token uses  */
    double experts, top_k;     /* E routed experts; k chosen per token   */
    double hidden, layers;     /* h; L layers in all ...                 */
    double dense_layers;       /* ... of which these have no experts     */
    double ep;                 /* expert-parallel ranks                  */
    double tp_attention;       /* tensor parallelism left on attention   */
    double tokens;             /* D, the training's tokens               */
    double tokens_per_gpu;     /* each GPU's tokens in one step          */
    double micro_batches;      /* per step: each has its own all-to-alls */
    double gpus, mfu, efficiency;
    const Gpu *gpu;
    int from_shape;            /* 1: P and A counted from a shape        */
    /* what follows */
    double expert_params;      /* x: one routed expert, all its layers   */
    double shared_params;      /* s: what every token uses               */
    MemoryFloor memory;        /* of all P                               */
    TrainingTime run, dense;   /* this model's compute; a dense P's      */
    double alltoall_payload;   /* bytes per token per layer, 8 k h       */
    double nvlink_fraction;    /* of the payload, to GPUs of this node   */
    double nic_fraction;       /* of the payload, to other nodes         */
    int spans_nodes;         /* 1: EP is larger than a node            */
    double alltoall_bytes;     /* per token per layer, leaving the GPU   */
    Link nvlink, nic;
    double step_nvlink_bytes;  /* per GPU per step, by link              */
    double step_nic_bytes;
    double step_messages;      /* sends per GPU per step                 */
    double step_alltoall_s, step_compute_s;
    double tp_mlp_bytes;       /* per token per layer, TP of degree EP   */
    double tp_attention_bytes; /* per token per layer, TP of t_a         */
} Moe;
/* From the published totals: P = s + E x and A = s + k x. */
static void split_experts(Moe *m)
{
    m->expert_params = (m->params - m->active)          /* x, all layers */
                     / (m->experts - m->top_k);
    m->shared_params = m->params - m->experts * m->expert_params;     /* s */
}

/* From a shape: every layer has E experts of (2 or 3) h f parameters, a
   router of h E, and the attention of Chapter 4's count; the embedding
   and the output head are V h each (untied), and `shared` experts of the
   same width serve every token. */
static void count_experts(Moe *m, const Layout *l, double vocab,
                          double shared)
{
    double h = l->hidden, layers = m->layers;
    double expert = (l->gated ? 3 : 2) * h * l->ffn;   /* one, one layer */
    double attention = params_per_layer(l) - expert;
    double router = h * m->experts;
    m->expert_params = layers * expert;                               /* x */
    m->shared_params = layers * (attention + router + shared * expert)
                     + 2 * vocab * h;                                 /* s */
    m->params = m->shared_params + m->experts * m->expert_params;     /* P */
    m->active = m->shared_params + m->top_k * m->expert_params;       /* A */
}
static void derive_memory_and_compute(Moe *m)
{
    m->memory.params = m->params;             /* every expert is stored */
    derive_memory_floor(&m->memory);
    TrainingTime run = { .params = m->params, .active_params = m->active,
                         .tokens = m->tokens, .gpu = m->gpu, .mfu = m->mfu,
                         .gpus = m->gpus };
    m->run = run;                             /* only the active work   */
    derive_training_time(&m->run);
    m->dense = run;
    m->dense.active_params = m->params;       /* a dense model of P     */
    derive_training_time(&m->dense);
}
/* Bytes one token's four all-to-alls carry in one layer with experts:
   dispatch and combine, forward and backward, each k copies of the
   token's 16-bit hidden vector. Some of them stay on the GPU. */
static double alltoall_bytes_per_token(double top_k, double hidden)
{
    double vector = 2 * hidden;                  /* bytes, (h) in bf16 */
    return 4 * top_k * vector;                   /* 8 k h              */
}
/* The fractions of the all-to-all's bytes that go over NVLink and over
   the NIC, with the EP ranks packed into nodes of per_node GPUs. */
static void alltoall_links(double ep, double per_node, double *nvlink,
                           double *nic)
{
    double in_node = fmin(ep, per_node);     /* EP ranks in this node */
    *nvlink = (in_node - 1) / ep;
    *nic = (ep - in_node) / ep;
}
static void derive_alltoall(Moe *m)
{
    double tokens = m->tokens_per_gpu;
    double layers = m->layers - m->dense_layers;        /* with experts */
    m->alltoall_payload = alltoall_bytes_per_token(m->top_k, m->hidden);
    alltoall_links(m->ep, m->gpu->per_node, &m->nvlink_fraction,
                   &m->nic_fraction);
    m->spans_nodes = m->nic_fraction > 0;
    m->alltoall_bytes = m->alltoall_payload                   /* leaving */
                      * (m->nvlink_fraction + m->nic_fraction);
    m->nvlink = gpu_link(m->gpu, LINK_NVLINK, m->efficiency);
    m->nic = gpu_link(m->gpu, LINK_NIC, m->efficiency);
    m->step_nvlink_bytes = tokens * layers * m->alltoall_payload
                         * m->nvlink_fraction;
    m->step_nic_bytes = tokens * layers * m->alltoall_payload
                      * m->nic_fraction;
    /* four all-to-alls a layer, for every micro-batch, EP - 1 messages */
    m->step_messages = 4 * layers * m->micro_batches * (m->ep - 1);
    const Link *slowest = m->spans_nodes ? &m->nic : &m->nvlink;
    m->step_alltoall_s = fmax(m->step_nvlink_bytes / m->nvlink.bandwidth,
                              m->step_nic_bytes / m->nic.bandwidth)
                       + m->step_messages * slowest->latency;
    TrainingTime step = { .params = m->params, .active_params = m->active,
                          .tokens = tokens, .gpu = m->gpu, .mfu = m->mfu,
                          .gpus = 1 };
    derive_training_time(&step);                  /* one GPU, one step */
    m->step_compute_s = step.seconds;
}
/* Bytes per token per layer of one sublayer's two all-reduces (the MLP's
   or attention's: one forward, one backward) at TP degree t: half of the
   layer's four. */
static double tp_sublayer_bytes_per_token(double hidden, double t)
{
    return tp_bytes_per_layer(1, hidden, t) / 2;
}
static void derive_moe(Moe *m)
{
    if (!m->from_shape)
        split_experts(m);
    derive_memory_and_compute(m);
    derive_alltoall(m);
    m->tp_mlp_bytes = tp_sublayer_bytes_per_token(m->hidden, m->ep);
    m->tp_attention_bytes = tp_sublayer_bytes_per_token(m->hidden,
                                                        m->tp_attention);
}
static void print_moe_memory(FILE *out, const Moe *m)
{
    const MemoryFloor *f = &m->memory;
    fprintf(out, "memory: every expert is stored\n"
            "  static state    = %s × %s B = %s\n"
            "  GPUs to hold it = %s ÷ %s usable = %s → %s",
            eng(m->params).s, sig(f->bytes_per_param, 3).s,
            bytes_auto(f->static_bytes).s, bytes_auto(f->static_bytes).s,
            bytes_auto(f->usable_bytes).s,
            quotient(f->static_bytes / f->usable_bytes).s,
            counted(f->gpus_min, "GPU", "GPUs").s);
    if (f->gpus_whole_nodes > f->gpus_min)
        fprintf(out, "; %s in whole nodes", grouped(f->gpus_whole_nodes).s);
    fprintf(out, "\n\ncompute: only the active parameters work\n"
            "  FLOPs per token = 6 × %s = %s (dense, 6 × %s = %s: %s×)\n",
            eng(m->active).s, sci(6 * m->active, 3).s, eng(m->params).s,
            sci(6 * m->params, 3).s, sig(m->params / m->active, 3).s);
    fprintf(out, "  training        = 6 × %s × %s = %s FLOPs\n"
            "                  = %s on %s at %s %% MFU (dense: %s)\n\n",
            eng(m->active).s, eng(m->tokens).s, sci(m->run.flops, 3).s,
            duration(m->run.seconds).s, counted(m->gpus, "GPU", "GPUs").s,
            sig(100 * m->mfu, 3).s, duration(m->dense.seconds).s);
}

static void print_moe_experts(FILE *out, const Moe *m)
{
    double per_gpu = m->experts / m->ep, b = m->memory.bytes_per_param;
    fprintf(out, "the experts (x: one expert, its %s; s: what every "
            "token uses):\n",
            counted(m->layers - m->dense_layers, "layer", "layers").s);
    if (!m->from_shape)
        fprintf(out, "  x = (P - A) ÷ (E - k) = (%s - %s) ÷ (%s - %s) = %s\n"
                "  s = P - E x = %s - %s × %s = %s\n",
                eng(m->params).s, eng(m->active).s, grouped(m->experts).s,
                grouped(m->top_k).s, eng(m->expert_params).s,
                eng(m->params).s, grouped(m->experts).s,
                eng(m->expert_params).s, eng(m->shared_params).s);
    else
        fprintf(out, "  x = %s, s = %s: P = s + E x = %s, A = s + k x = %s\n",
                eng(m->expert_params).s, eng(m->shared_params).s,
                eng(m->params).s, eng(m->active).s);
    fprintf(out, "  on each GPU, EP %s: %s whole, %s of state,\n"
            "  and s replicated, %s (before sharding over data-parallel "
            "ranks)\n\n", grouped(m->ep).s,
            counted(per_gpu, "expert", "experts").s,
            bytes_auto(b * per_gpu * m->expert_params).s,
            bytes_auto(b * m->shared_params).s);
}

static void print_moe_alltoall(FILE *out, const Moe *m)
{
    double layers = m->layers - m->dense_layers, ep = m->ep;
    double per_node = m->gpu->per_node;
    fprintf(out, "the all-to-all, per token per layer (bf16, even "
            "routing):\n  dispatch + combine, forward and backward = "
            "4 × %s × 2 B × %s = %s B\n", grouped(m->top_k).s,
            grouped(m->hidden).s, grouped(m->alltoall_payload).s);
    fprintf(out, "  leaves the GPU  = (EP - 1)/EP = %s/%s → %s B\n",
            grouped(ep - 1).s, grouped(ep).s,
            grouped(round(m->alltoall_bytes)).s);
    if (m->spans_nodes)
        fprintf(out, "  link            = NIC: EP %s spans %s;\n"
                "                    %s/%s of the bytes on NVLink, %s/%s on "
                "the NIC\n", grouped(ep).s,
                counted(ep / per_node, "node", "nodes").s,
                grouped(per_node - 1).s, grouped(ep).s,
                grouped(ep - per_node).s, grouped(ep).s);
    else
        fprintf(out, "  link            = NVLink: %s EP ranks fit in a node "
                "of %s\n", grouped(ep).s, grouped(per_node).s);
    fprintf(out, "per GPU per step, %s tokens, %s with experts:\n",
            grouped(m->tokens_per_gpu).s,
            counted(layers, "layer", "layers").s);
    fprintf(out, "  NVLink          = %s at %s/s = %s\n",
            bytes_auto(m->step_nvlink_bytes).s,
            bytes_auto(m->nvlink.bandwidth).s,
            duration(m->step_nvlink_bytes / m->nvlink.bandwidth).s);
    if (m->spans_nodes)
        fprintf(out, "  NIC             = %s at %s/s = %s\n",
                bytes_auto(m->step_nic_bytes).s,
                bytes_auto(m->nic.bandwidth).s,
                duration(m->step_nic_bytes / m->nic.bandwidth).s);
    fprintf(out, "  all-to-all      = %s (the slower link, + %s "
            "messages' latency)\n", duration(m->step_alltoall_s).s,
            grouped(m->step_messages).s);
    fprintf(out, "  compute         = 6 × %s × %s ÷ (%s × %s %%) = %s\n"
            "  all-to-all ÷ compute = %s %%\n\n", eng(m->active).s,
            grouped(m->tokens_per_gpu).s, eng(m->gpu->peak_flops).s,
            sig(100 * m->mfu, 3).s, duration(m->step_compute_s).s,
            sig(100 * m->step_alltoall_s / m->step_compute_s, 3).s);
}

static void print_moe_tp(FILE *out, const Moe *m)
{
    fprintf(out, "in place of tensor parallelism, per token per layer:\n"
            "  TP %s on the MLP: 2 all-reduces × 2(t-1)/t × 2h B = %s B;"
            "\n  EP sends none of it: every expert is whole on its GPU\n",
            grouped(m->ep).s, grouped(round(m->tp_mlp_bytes)).s);
    if (m->tp_attention > 1)
        fprintf(out, "  what remains: TP %s on attention, %s B\n",
                grouped(m->tp_attention).s,
                grouped(round(m->tp_attention_bytes)).s);
    else
        fprintf(out, "  what remains: attention data-parallel (no TP), "
                "no all-reduce in the layer\n");
    fprintf(out, "  and per step the gradients: s's over every data-"
            "parallel rank, each expert's\n  over the ranks that hold "
            "it\n");
}

static void print_moe(FILE *out, const Moe *m)
{
    fprintf(out, "fleet moe: %s parameters, %s active; %s, top-%s;\n"
            "           h %s, %s; EP %s on %s\n\n", eng(m->params).s,
            eng(m->active).s, counted(m->experts, "expert", "experts").s,
            grouped(m->top_k).s, grouped(m->hidden).s,
            counted(m->layers, "layer", "layers").s, grouped(m->ep).s,
            m->gpu->name);
    print_moe_memory(out, m);
    print_moe_experts(out, m);
    print_moe_alltoall(out, m);
    print_moe_tp(out, m);
}
static void report_moe(Report *r, const Moe *m)
{
    const MemoryFloor *f = &m->memory;
    double b = f->bytes_per_param, per_gpu = m->experts / m->ep;
    report_add(r, "params_total", FIELD_ENG, m->params);
    report_add(r, "params_active", FIELD_ENG, m->active);
    report_add(r, "experts", FIELD_COUNT, m->experts);
    report_add(r, "top_k", FIELD_COUNT, m->top_k);
    report_add(r, "hidden", FIELD_COUNT, m->hidden);
    report_add(r, "layers", FIELD_COUNT, m->layers);
    report_add(r, "moe_layers", FIELD_COUNT, m->layers - m->dense_layers);
    report_add(r, "ep", FIELD_COUNT, m->ep);
    report_text(r, "gpu", m->gpu->name);
    report_add(r, "gpus_per_node", FIELD_COUNT, m->gpu->per_node);
    report_add(r, "expert_params", FIELD_ENG, m->expert_params);
    report_add(r, "shared_params", FIELD_ENG, m->shared_params);
    report_add(r, "bytes_per_param", FIELD_REAL, b);
    report_add(r, "memory_floor_bytes", FIELD_BYTES, f->static_bytes);
    report_add(r, "memory_floor_gpus", FIELD_COUNT, f->gpus_min);
    report_add(r, "memory_floor_nodes", FIELD_COUNT, f->nodes);
    report_add(r, "active_state_bytes", FIELD_BYTES, b * m->active);
    report_add(r, "flops_per_token", FIELD_SCI, 6 * m->active);
    report_add(r, "dense_flops_per_token", FIELD_SCI, 6 * m->params);
    report_add(r, "compute_ratio", FIELD_REAL, m->params / m->active);
    report_add(r, "tokens", FIELD_ENG, m->tokens);
    report_add(r, "gpus", FIELD_COUNT, m->gpus);
    report_add(r, "mfu", FIELD_FRACTION, m->mfu);
    report_add(r, "training_flops", FIELD_SCI, m->run.flops);
    report_add(r, "training_days", FIELD_REAL, m->run.seconds / 86400);
    report_add(r, "dense_training_days", FIELD_REAL,
               m->dense.seconds / 86400);
    report_add(r, "experts_per_gpu", FIELD_REAL, per_gpu);
    report_add(r, "expert_bytes_per_gpu", FIELD_BYTES,
               b * per_gpu * m->expert_params);
    report_add(r, "shared_bytes_per_gpu", FIELD_BYTES, b * m->shared_params);
    report_add(r, "alltoall_payload_bytes_per_token_per_layer", FIELD_BYTES,
               m->alltoall_payload);
    report_add(r, "alltoall_leaving_fraction", FIELD_FRACTION,
               m->nvlink_fraction + m->nic_fraction);
    report_add(r, "alltoall_bytes_per_token_per_layer", FIELD_BYTES,
               m->alltoall_bytes);
    report_add(r, "alltoall_nvlink_fraction", FIELD_FRACTION,
               m->nvlink_fraction);
    report_add(r, "alltoall_nic_fraction", FIELD_FRACTION, m->nic_fraction);
    report_text(r, "alltoall_link", m->spans_nodes ? m->nic.name
                                                     : m->nvlink.name);
    report_add(r, "alltoall_crosses_nodes", FIELD_COUNT, m->spans_nodes);
    report_add(r, "tokens_per_gpu", FIELD_COUNT, m->tokens_per_gpu);
    report_add(r, "micro_batches", FIELD_COUNT, m->micro_batches);
    report_add(r, "step_nvlink_bytes", FIELD_BYTES, m->step_nvlink_bytes);
    report_add(r, "step_nic_bytes", FIELD_BYTES, m->step_nic_bytes);
    report_add(r, "step_messages", FIELD_COUNT, m->step_messages);
    report_add(r, "nvlink_bandwidth", FIELD_BYTES, m->nvlink.bandwidth);
    report_add(r, "nic_bandwidth", FIELD_BYTES, m->nic.bandwidth);
    report_add(r, "nvlink_over_nic", FIELD_REAL,
               m->nvlink.bandwidth / m->nic.bandwidth);
    report_add(r, "step_alltoall_s", FIELD_REAL, m->step_alltoall_s);
    report_add(r, "step_compute_s", FIELD_REAL, m->step_compute_s);
    report_add(r, "alltoall_over_compute", FIELD_REAL,
               m->step_alltoall_s / m->step_compute_s);
    report_add(r, "tp_mlp_bytes_per_token_per_layer", FIELD_BYTES,
               m->tp_mlp_bytes);
    report_add(r, "tp_attention", FIELD_COUNT, m->tp_attention);
    report_add(r, "tp_attention_bytes_per_token_per_layer", FIELD_BYTES,
               m->tp_attention_bytes);
}
int moe_main(int argc, char **argv)
{
    const char *command = "fleet moe";
    Option options[] = {
        { "--params-total", OPT_NUMBER, 1e15, "parameters stored, every "
          "expert's (P)", 100e9, NULL, 0 },
        { "--params-active", OPT_NUMBER, 1e15, "parameters one token passes "
          "through (A)", 20e9, NULL, 0 },
        { "--experts", OPT_COUNT, 1e5, "routed experts per layer (E)", 16,
          NULL, 0 },
        { "--top-k", OPT_COUNT, 1e5, "experts each token goes to (k)", 2,
          NULL, 0 },
        { "--hidden", OPT_COUNT, 1e7, "hidden size h", 6144, NULL, 0 },
        { "--layers", OPT_COUNT, 1e5, "layers L", 48, NULL, 0 },
        { "--dense-layers", OPT_WHOLE, 1e5, "of the layers, those without "
          "experts (with --params-total)", 0, NULL, 0 },
        { "--ffn", OPT_COUNT, 1e7, "count P and A from a shape: each "
          "expert's inner width", 0, NULL, 0 },
        { "--mlp", OPT_NAME, 0, "with --ffn: each expert plain (two "
          "matrices) or gated (three, SwiGLU)", 0, "plain", 0 },
        { "--heads", OPT_COUNT, 1e5, "with --ffn: attention heads", 0, NULL,
          0 },
        { "--kv-heads", OPT_COUNT, 1e5, "with --ffn: key-value heads "
          "(default: --heads)", 0, NULL, 0 },
        { "--vocab", OPT_WHOLE, 1e8, "with --ffn: vocabulary (embedding and "
          "output head, untied)", 0, NULL, 0 },
        { "--shared-experts", OPT_WHOLE, 1e5, "with --ffn: experts every "
          "token uses", 0, NULL, 0 },
        { "--ep", OPT_COUNT, 1e7, "expert-parallel ranks", 8, NULL, 0 },
        { "--tp-attention", OPT_COUNT, 1e5, "tensor parallelism kept on "
          "attention", 1, NULL, 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or "
          "mi300x", 0, "h100", 0 },
        { "--gpus", OPT_COUNT, 1e7, "GPUs in the fleet", 1024, NULL, 0 },
        { "--tokens", OPT_NUMBER, 1e17, "training tokens D", 2e12, NULL, 0 },
        { "--tokens-per-gpu", OPT_COUNT, 1e10, "tokens each GPU processes "
          "per step", 16384, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 1e6, "micro-batches per step, each "
          "with its own all-to-alls", 1, NULL, 0 },
        { "--mfu", OPT_NUMBER, 1, "model FLOPs utilisation", 0.4, NULL, 0 },
        { "--usable", OPT_NUMBER, 1, "fraction of memory for state, for the "
          "floor", 0.8, NULL, 0 },
        { "--link-efficiency", OPT_NUMBER, 1, "fraction of each link's line "
          "rate the all-to-all reaches", 1, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "A mixture of experts: the memory of every parameter, the compute "
        "of the active ones, and the all-to-all of expert parallelism.",
        options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;
    const Gpu *gpu = find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    Moe m = {
        .params = option_number(options, "--params-total"),
        .active = option_number(options, "--params-active"),
        .experts = option_number(options, "--experts"),
        .top_k = option_number(options, "--top-k"),
        .hidden = option_number(options, "--hidden"),
        .layers = option_number(options, "--layers"),
        .dense_layers = option_number(options, "--dense-layers"),
        .ep = option_number(options, "--ep"),
        .tp_attention = option_number(options, "--tp-attention"),
        .tokens = option_number(options, "--tokens"),
        .tokens_per_gpu = option_number(options, "--tokens-per-gpu"),
        .micro_batches = option_number(options, "--micro-batches"),
        .gpus = option_number(options, "--gpus"),
        .mfu = option_number(options, "--mfu"),
        .efficiency = option_number(options, "--link-efficiency"),
        .gpu = gpu,
        .from_shape = option_given(options, "--ffn"),
        .memory = { .bytes_per_param = 16, .gpu = gpu,
                    .usable = option_number(options, "--usable") },
    };
    static const char *const shape_flags[] = {
        "--mlp", "--heads", "--kv-heads", "--vocab", "--shared-experts"
    };
    if (m.from_shape) {
        const char *totals = option_given(options, "--params-total")
                           ? "--params-total" : option_given(options,
                               "--params-active") ? "--params-active"
                           : option_given(options, "--dense-layers")
                           ? "--dense-layers" : NULL;
        if (totals != NULL) {
            complain(command, "%s and --ffn are alternatives: give the totals "
                     "or the shape", totals);
            return 2;
        }
        if (!option_given(options, "--heads")) {
            complain(command, "--ffn needs --heads, for the attention's "
                     "parameters");
            return 2;
        }
    } else {
        for (int i = 0; i < 5; i++)
            if (option_given(options, shape_flags[i])) {
                complain(command, "%s describes a shape: it goes with --ffn",
                         shape_flags[i]);
                return 2;
            }
    }
    if (m.top_k > m.experts) {
        complain(command, "--top-k %s exceeds the %s: a token cannot choose "
                 "more experts than there are", grouped(m.top_k).s,
                 counted(m.experts, "expert", "experts").s);
        return 2;
    }
    if (fmod(m.experts, m.ep) != 0) {
        complain(command, "--ep %s does not divide the %s into whole experts "
                 "per GPU", grouped(m.ep).s,
                 counted(m.experts, "expert", "experts").s);
        return 2;
    }
    if (fmod(m.gpus, m.ep) != 0) {
        complain(command, "--ep %s does not divide the %s into whole groups",
                 grouped(m.ep).s, counted(m.gpus, "GPU", "GPUs").s);
        return 2;
    }
    if (m.ep > gpu->per_node && fmod(m.ep, gpu->per_node) != 0) {
        complain(command, "--ep %s is larger than a node of %s but not a whole "
                 "number of nodes", grouped(m.ep).s,
                 counted(gpu->per_node, "GPU", "GPUs").s);
        return 2;
    }
    if (m.tp_attention > gpu->per_node) {
        complain(command, "--tp-attention %s spans more than the %s GPUs "
                 "NVLink joins in one node", grouped(m.tp_attention).s,
                 grouped(gpu->per_node).s);
        return 2;
    }
    if (m.dense_layers >= m.layers) {
        complain(command, "--dense-layers %s leaves none of the %s with "
                 "experts", grouped(m.dense_layers).s,
                 counted(m.layers, "layer", "layers").s);
        return 2;
    }
    if (m.from_shape) {
        double heads = option_number(options, "--heads");
        double kv = option_given(options, "--kv-heads")
                  ? option_number(options, "--kv-heads") : heads;
        if (kv > heads || fmod(heads, kv) != 0) {
            complain(command, "--kv-heads %s must divide the %s",
                     grouped(kv).s, counted(heads, "head", "heads").s);
            return 2;
        }
        const char *mlp = option_text(options, "--mlp");
        if (strcmp(mlp, "plain") != 0 && strcmp(mlp, "gated") != 0) {
            complain(command, "--mlp: unknown MLP \"%s\" (known: plain, "
                     "gated)", mlp);
            return 2;
        }
        Layout shape = { .hidden = m.hidden, .heads = heads, .kv_heads = kv,
                         .ffn = option_number(options, "--ffn"),
                         .gated = strcmp(mlp, "gated") == 0 };
        count_experts(&m, &shape, option_number(options, "--vocab"),
                      option_number(options, "--shared-experts"));
    } else {
        if (m.top_k == m.experts) {
            complain(command, "--top-k %s equals --experts: every parameter is "
                     "active, a dense model (fleet memory, fleet compute)",
                     grouped(m.top_k).s);
            return 2;
        }
        if (m.active > m.params) {
            complain(command, "--params-active (%s) cannot exceed "
                     "--params-total (%s)", eng(m.active).s, eng(m.params).s);
            return 2;
        }
        if (m.active < m.top_k / m.experts * m.params) {
            complain(command, "--params-active %s is less than top-%s of %s "
                     "experts allows: at least k/E of --params-total, %s",
                     eng(m.active).s, grouped(m.top_k).s, grouped(m.experts).s,
                     eng(m.top_k / m.experts * m.params).s);
            return 2;
        }
    }
    derive_moe(&m);
    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_moe(&r, &m);
        print_report(out.file, &r, options);
    } else {
        print_moe(out.file, &m);
    }
    return output_commit(&out, command);
}
