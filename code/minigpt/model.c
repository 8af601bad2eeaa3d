/* Tangled from chapters/06-reference.nw, chapters/07-data-parallel.nw, chapters/08-sharded-state.nw, chapters/09-tensor-parallel.nw, chapters/10-pipeline.nw, chapters/94-trainer-plumbing.nw and chapters/98-pipeline-plumbing.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"

const char *const param_names[PARAM_TENSORS] = {
    "wte", "wpe", "ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b",
    "ln2_w", "ln2_b", "fc_w", "fc_b", "fcproj_w", "fcproj_b", "lnf_w",
    "lnf_b", "head_w"
};

const char *const act_names[ACT_TENSORS] = {
    "encoded", "ln1", "ln1_mean", "ln1_rstd", "qkv", "att", "atty", "res2",
    "ln2", "ln2_mean", "ln2_rstd", "fch", "fch_gelu", "res3", "lnf",
    "lnf_mean", "lnf_rstd", "probs", "losses", "scratch"
};
static void param_sizes(ModelConfig c, int t, unsigned ends, size_t *size)
{
    size_t V = (size_t)c.vocab, T = (size_t)c.seq, L = (size_t)c.layers;
    size_t C = (size_t)c.hidden, Cl = C / t, Vl = V / t;    /* t-th parts */
    size_t E = (ends & STAGE_EMBEDDINGS) != 0;   /* 0 where a pipeline */
    size_t F = (ends & STAGE_HEAD) != 0;         /* stage lacks them   */
    size_t s[PARAM_TENSORS] = {
        E * V * C, E * T * C, L * C, L * C, L * C * 3 * Cl, L * 3 * Cl,
        L * Cl * C, L * C, L * C, L * C, L * C * 4 * Cl, L * 4 * Cl,
        L * 4 * Cl * C, L * C, F * C, F * C, F * C * Vl
    };
    memcpy(size, s, sizeof s);
}
static void act_sizes(ModelConfig c, int t, int rows, int batch,
                      unsigned ends, size_t *size)
{
    size_t B = (size_t)batch, T = (size_t)c.seq, L = (size_t)c.layers;
    size_t C = (size_t)c.hidden, H = (size_t)c.heads, V = (size_t)c.vocab;
    size_t Cl = C / t, Hl = H / t, Vl = V / t;     /* this rank's parts */
    size_t N = B * T, Ns = N / rows;      /* the stream's rows it holds */
    size_t s[ACT_TENSORS] = {
        N * C, L * N * C, L * Ns, L * Ns, L * N * 3 * Cl,
        L * B * Hl * T * T, L * N * Cl, L * Ns * C, L * N * C,
        L * Ns, L * Ns, L * N * 4 * Cl, L * N * 4 * Cl,
        L * Ns * C, N * C, Ns, Ns, N * Vl, N, N * C
    };
    if (!(ends & STAGE_HEAD))          /* a pipeline stage without the */
        for (int i = 14; i <= 18; i++)  /* head keeps none of its own  */
            s[i] = 0;
    memcpy(size, s, sizeof s);
}
static real *carve(real **block, size_t size)
{
    real *p = *block;
    *block += size;
    return p;
}

static const size_t param_field[PARAM_TENSORS] = {
    offsetof(Params, wte), offsetof(Params, wpe), offsetof(Params, ln1_w),
    offsetof(Params, ln1_b), offsetof(Params, qkv_w), offsetof(Params, qkv_b),
    offsetof(Params, proj_w), offsetof(Params, proj_b),
    offsetof(Params, ln2_w), offsetof(Params, ln2_b), offsetof(Params, fc_w),
    offsetof(Params, fc_b), offsetof(Params, fcproj_w),
    offsetof(Params, fcproj_b), offsetof(Params, lnf_w),
    offsetof(Params, lnf_b), offsetof(Params, head_w)
};

real **param_tensor(Params *p, int t)
{
    return (real **)((char *)p + param_field[t]);
}

static void point_acts(Activations *a, real *block, const size_t *s)
{
    a->encoded = carve(&block, s[0]);  a->ln1 = carve(&block, s[1]);
    a->ln1_mean = carve(&block, s[2]); a->ln1_rstd = carve(&block, s[3]);
    a->qkv = carve(&block, s[4]);      a->att = carve(&block, s[5]);
    a->atty = carve(&block, s[6]);     a->res2 = carve(&block, s[7]);
    a->ln2 = carve(&block, s[8]);      a->ln2_mean = carve(&block, s[9]);
    a->ln2_rstd = carve(&block, s[10]); a->fch = carve(&block, s[11]);
    a->fch_gelu = carve(&block, s[12]); a->res3 = carve(&block, s[13]);
    a->lnf = carve(&block, s[14]);     a->lnf_mean = carve(&block, s[15]);
    a->lnf_rstd = carve(&block, s[16]); a->probs = carve(&block, s[17]);
    a->losses = carve(&block, s[18]);  a->scratch = carve(&block, s[19]);
}

static size_t point_grad_acts(Gradients *g, real *block, ModelConfig c,
                              int t, int batch)
{
    size_t BTC = (size_t)batch * (size_t)c.seq * (size_t)c.hidden;
    size_t BTV = (size_t)batch * (size_t)c.seq * (size_t)c.vocab;
    real *start = block;
    g->dres = carve(&block, BTC);
    g->dtmp = carve(&block, BTC);
    g->dqkv = carve(&block, 3 * BTC / t);
    g->dfch = carve(&block, 4 * BTC / t);
    g->dfch_gelu = carve(&block, 4 * BTC / t);
    g->dlogits = carve(&block, BTV / t);
    g->datt_row = carve(&block, (size_t)c.seq);
    return (size_t)(block - start);
}
static size_t total(const size_t *size, int n)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += size[i];
    return sum;
}

int model_init(Model *m, ModelConfig config, int batch, unsigned holds)
{
    return model_init_split(m, config, batch, holds, NULL);
}

int model_init_split(Model *m, ModelConfig config, int batch,
                     unsigned holds, TensorParallel *tp)
{
    StageShape whole = { config.layers, config.layers,
                         STAGE_EMBEDDINGS | STAGE_HEAD };
    return model_init_stage(m, config, &whole, batch, holds, tp);
}

int model_init_stage(Model *m, ModelConfig config, const StageShape *shape,
                     int batch, unsigned holds, TensorParallel *tp)
{
    memset(m, 0, sizeof *m);
    m->whole = config;
    config.layers = shape->layers;               /* the blocks it holds */
    m->config = config;
    m->shape = *shape;
    m->batch = batch;
    m->tp = tp;
    int t = model_ways(m);
    param_sizes(config, t, shape->ends, m->param_size);
    m->params_count = total(m->param_size, PARAM_TENSORS);
    ModelConfig pass = config;              /* the blocks one pass runs */
    pass.layers = shape->chunk_layers;
    act_sizes(pass, t, model_sequence_ways(m), batch, shape->ends,
              m->act_size);
    m->acts_count = total(m->act_size, ACT_TENSORS);
    m->grad_acts_count = point_grad_acts(&m->grad_acts, NULL, config, t,
                                         batch);
    size_t N = m->params_count;
    int failed = 0;
    real **state[] = { &m->params_memory, &m->grads_memory, &m->m_memory,
                       &m->v_memory };
    unsigned kind[] = { HOLDS_WEIGHTS, HOLDS_GRADIENTS, HOLDS_MOMENTS,
                        HOLDS_MOMENTS };
    for (int i = 0; i < 4; i++)
        if (holds & kind[i])
            failed |= (*state[i] = calloc(N, sizeof(real))) == NULL;
    m->acts_memory = calloc(m->acts_count, sizeof(real));
    m->grad_acts_memory = calloc(m->grad_acts_count, sizeof(real));
    gemm_workspace_init(&m->pack);
    if (failed || !m->acts_memory || !m->grad_acts_memory || !m->pack.a
        || !m->pack.b) {
        model_free(m);
        return -1;
    }
    point_acts(&m->acts, m->acts_memory, m->act_size);
    point_grad_acts(&m->grad_acts, m->grad_acts_memory, config, t, batch);
    return 0;
}

void model_free(Model *m)
{
    free(m->params_memory);
    free(m->grads_memory);
    free(m->m_memory);
    free(m->v_memory);
    free(m->acts_memory);
    free(m->grad_acts_memory);
    gemm_workspace_free(&m->pack);
    memset(m, 0, sizeof *m);
}

void model_zero_grads(Model *m)
{
    if (m->grads_memory != NULL)         /* a sharded model may hold none */
        memset(m->grads_memory, 0, m->params_count * sizeof(real));
}
Params unit_packed(const Model *m, real *packed, int unit)
{
    size_t offset[PARAM_TENSORS], count[PARAM_TENSORS];
    Params v = { 0 };
    unit_layout(m, unit, offset, count);
    for (int t = 0; t < PARAM_TENSORS; t++)
        if (count[t] > 0)
            *param_tensor(&v, t) = carve(&packed, count[t]);
    return v;
}
void unit_layout(const Model *m, int unit, size_t *offset, size_t *count)
{
    int L = m->config.layers;
    size_t at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        int per_layer = t >= 2 && t <= 13;
        int mine = per_layer ? unit >= 0 && unit < L
                 : t < 2 ? unit == -1 : unit == L;
        size_t slice = m->param_size[t] / (per_layer ? (size_t)L : 1);
        offset[t] = at + (per_layer && mine ? (size_t)unit * slice : 0);
        count[t] = mine ? slice : 0;
        at += m->param_size[t];
    }
}

size_t unit_size(const Model *m, int unit)
{
    size_t offset[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(m, unit, offset, count);
    return total(count, PARAM_TENSORS);
}

Params unit_view(const Model *m, real *flat, int unit)
{
    size_t offset[PARAM_TENSORS], count[PARAM_TENSORS];
    Params v = { 0 };                /* tensors outside the unit stay NULL */
    unit_layout(m, unit, offset, count);
    for (int t = 0; t < PARAM_TENSORS; t++)
        if (count[t] > 0)
            *param_tensor(&v, t) = flat + offset[t];
    return v;
}
void model_init_weights(const Model *m, real *params, uint64_t seed)
{
    Rng rng = { seed ^ 0x77656967687473ULL };          /* "weights" */
    real *p = params;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        const char *name = param_names[t];
        real std = 0.02f;
        if (strcmp(name, "proj_w") == 0 || strcmp(name, "fcproj_w") == 0)
            std /= sqrt(2.0f * (real)m->config.layers);
        char last = name[strlen(name) - 1];
        int is_scale = strstr(name, "ln") != NULL && last == 'w';
        int is_bias = last == 'b';
        for (size_t i = 0; i < m->param_size[t]; i++)
            p[i] = is_scale ? 1.0f : is_bias ? 0.0f : std * rng_normal(&rng);
        p += m->param_size[t];
    }
}
typedef struct {             /* block l's slices of the stacked activations */
    const real *x;           /* (B, T, C) the block's input                 */
    real *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2;
    real *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *res3;
    real *kept_fcproj, *kept_fc, *kept_proj, *kept_qkv;  /* zb-h1's, or NULL */
} BlockActivations;

static BlockActivations block_activations(Model *m, int l, int B)
{
    const ModelConfig c = m->config;
    const Activations *a = &m->acts;
    size_t N = (size_t)B * c.seq, BTC = N * c.hidden, L = (size_t)l;
    size_t t = (size_t)model_ways(m), BTCl = BTC / t;   /* C/t: a t-th */
    size_t TT = (size_t)B * (c.heads / t) * c.seq * c.seq;
    size_t Ns = N / (size_t)model_sequence_ways(m);     /* rows held */
    size_t BTCs = Ns * c.hidden, mine = model_sequence_rank(m) * BTCs;
    real *kept = m->deferred == NULL ? NULL      /* the products' douts */
               : m->deferred + L * (2 * BTC + 7 * BTCl);
    return (BlockActivations){
        .x = l == 0 ? a->encoded + mine : a->res3 + (L - 1) * BTCs,
        .ln1 = a->ln1 + L * BTC, .ln1_mean = a->ln1_mean + L * Ns,
        .ln1_rstd = a->ln1_rstd + L * Ns,
        .qkv = a->qkv + L * 3 * BTCl,                /* (B, T, 3C/t)  */
        .att = a->att + L * TT,                      /* (B, H/t, T, T) */
        .atty = a->atty + L * BTCl, .res2 = a->res2 + L * BTCs,
        .ln2 = a->ln2 + L * BTC, .ln2_mean = a->ln2_mean + L * Ns,
        .ln2_rstd = a->ln2_rstd + L * Ns,
        .fch = a->fch + L * 4 * BTCl,                /* (B, T, 4C/t)  */
        .fch_gelu = a->fch_gelu + L * 4 * BTCl,
        .res3 = a->res3 + L * BTCs,
        .kept_fcproj = kept,                         /* (B, T, C)     */
        .kept_fc = kept ? kept + BTC : NULL,         /* (B, T, 4C/t)  */
        .kept_proj = kept ? kept + BTC + 4 * BTCl : NULL,   /* (B, T, C) */
        .kept_qkv = kept ? kept + 2 * BTC + 4 * BTCl : NULL, /* (B, T, 3C/t) */
    };
}

/* zb-h1: keep a product's output gradient (n) for the deferred weight
   gradient; nothing when `to` is NULL. */
static void keep_for_weights(real *to, const real *dout, size_t n)
{
    if (to != NULL)
        memcpy(to, dout, sizeof(real) * n);
}

static Params weights_of(Model *m, int unit)
{
    if (m->weights_needed != NULL)
        return m->weights_needed(m->hook_context, unit);
    return unit_view(m, m->params_memory, unit);
}

double stage_forward(Model *m, const int *inputs, const int *targets,
                     int B, int first, int count)
{
    ModelConfig c = m->config;
    int T = c.seq, C = c.hidden;
    int N = B * T;                                   /* positions */
    size_t BTC = (size_t)N * C;
    Activations *a = &m->acts;
    double *flops = &m->tally.flops;
    int t = model_ways(m);                   /* ways the blocks are split */
    int Cl = C / t, Hl = c.heads / t;        /* this rank's width, heads  */
    int Vl = c.vocab / t;                    /* ... and vocabulary        */
    size_t BTCl = BTC / (size_t)t;
    MPI_Comm tp = model_tp_comm(m);
    int Ns = N / model_sequence_ways(m);     /* rows of the stream held   */
    size_t BTCs = (size_t)Ns * C;            /* (Ns, C): this rank's rows */
    size_t mine = (size_t)model_sequence_rank(m) * BTCs;  /* ... from here */

    if (inputs != NULL) {
        Params e = weights_of(m, -1);                /* the embeddings */
        TIMED(m, OP_EMBED, 0,
              encoder_forward(a->encoded, inputs, e.wte, e.wpe, B, T, C));
        model_round(m, a->encoded, BTC);
    }
    for (int l = first; l < first + count; l++) {
        Params w = weights_of(m, l);                 /* block l's weights */
        BlockActivations k = block_activations(m, l - first, B);
        TpTraffic sent = tp_traffic();          /* counted for Chapter 9 */
        TIMED(m, OP_LAYERNORM, 0,
              layernorm_forward(k.ln1 + mine, k.ln1_mean, k.ln1_rstd, k.x, w.ln1_w,
                                w.ln1_b, Ns, C));
        model_round(m, k.ln1 + mine, BTCs);
        TIMED(m, OP_MATMUL, 0,
              column_parallel_forward(&m->pack, k.qkv, k.ln1, w.qkv_w, w.qkv_b, N, C,
                                      3 * Cl, tp, flops));
        model_round(m, k.qkv, 3 * BTCl);
        TIMED(m, OP_ATTENTION, 0,
              attention_forward(k.atty, k.att, k.qkv, B, T, Cl, Hl, flops));
        model_round(m, k.att, (size_t)B * Hl * T * T);
        model_round(m, k.atty, BTCl);
        TIMED(m, OP_MATMUL, 0,
              row_parallel_forward(&m->pack, a->scratch, k.atty, w.proj_w, w.proj_b,
                                   N, Cl, C, tp, flops));
        model_round(m, a->scratch, BTC);
        TIMED(m, OP_RESIDUAL, 0,
              residual_forward(k.res2, k.x, a->scratch + mine, BTCs));
        model_round(m, k.res2, BTCs);
        TIMED(m, OP_LAYERNORM, 0,
              layernorm_forward(k.ln2 + mine, k.ln2_mean, k.ln2_rstd, k.res2, w.ln2_w,
                                w.ln2_b, Ns, C));
        model_round(m, k.ln2 + mine, BTCs);
        TIMED(m, OP_MATMUL, 0,
              column_parallel_forward(&m->pack, k.fch, k.ln2, w.fc_w, w.fc_b, N, C,
                                      4 * Cl, tp, flops));
        model_round(m, k.fch, 4 * BTCl);
        TIMED(m, OP_GELU, 0, gelu_forward(k.fch_gelu, k.fch, 4 * BTCl));
        model_round(m, k.fch_gelu, 4 * BTCl);
        TIMED(m, OP_MATMUL, 0,
              row_parallel_forward(&m->pack, a->scratch, k.fch_gelu, w.fcproj_w,
                                   w.fcproj_b, N, 4 * Cl, C, tp, flops));
        model_round(m, a->scratch, BTC);
        TIMED(m, OP_RESIDUAL, 0,
              residual_forward(k.res3, k.res2, a->scratch + mine, BTCs));
        model_round(m, k.res3, BTCs);
        tp_traffic_blocks_add(sent, 0);
    }
    if (targets == NULL)
        return 0.0;
    real *last = a->res3 + (size_t)(count - 1) * BTCs;   /* (B, T, C) */
    Params h = weights_of(m, c.layers);              /* final norm, head */
    TIMED(m, OP_LAYERNORM, 0,
          layernorm_forward(a->lnf + mine, a->lnf_mean, a->lnf_rstd, last,
                            h.lnf_w, h.lnf_b, Ns, C));
    model_round(m, a->lnf + mine, BTCs);
    TIMED(m, OP_MATMUL, 0,
          column_parallel_forward(&m->pack, a->probs, a->lnf, h.head_w, NULL,
                                  N, C, Vl, tp, flops));
    model_round(m, a->probs, (size_t)N * Vl);              /* the logits */
    double loss = 0.0;
    TIMED(m, OP_LOSS, 0,
          loss = vocab_parallel_crossentropy_forward(a->probs, a->losses,
                                                     targets, N, Vl, tp));
    m->loss = (real)loss;
    return loss;
}

double model_forward(Model *m, const int *inputs, const int *targets, int B)
{
    return stage_forward(m, inputs, targets, B, 0, m->config.layers);
}
static void announce(Model *m, int layer);

static Params gradients_of(Model *m, int unit)
{
    if (m->gradients_needed != NULL)
        return m->gradients_needed(m->hook_context, unit);
    return unit_view(m, m->grads_memory, unit);
}

void stage_backward(Model *m, const int *inputs, const int *targets, int B,
                    real scale, int first, int count)
{
    ModelConfig c = m->config;
    int T = c.seq, C = c.hidden, L = c.layers;
    int N = B * T;
    size_t BTC = (size_t)N * C;
    Activations *a = &m->acts;
    Gradients *g = &m->grad_acts;
    double *flops = &m->tally.flops;
    int t = model_ways(m);                   /* ways the blocks are split */
    int Cl = C / t, Hl = c.heads / t;        /* this rank's width, heads  */
    int Vl = c.vocab / t;                    /* ... and vocabulary        */
    size_t BTCl = BTC / (size_t)t;
    MPI_Comm tp = model_tp_comm(m);
    int Ns = N / model_sequence_ways(m);     /* rows of the stream held   */
    size_t BTCs = (size_t)Ns * C;            /* (Ns, C): this rank's rows */
    size_t mine = (size_t)model_sequence_rank(m) * BTCs;  /* ... from here */

    if (targets != NULL) {
        real *last = a->res3 + (size_t)(count - 1) * BTCs;
        Params h = weights_of(m, L), dh = gradients_of(m, L);
        TIMED(m, OP_LOSS, 1,
              vocab_parallel_crossentropy_backward(g->dlogits, a->probs, targets, N,
                                                   Vl, tp, scale));
        model_round_gradient(m, g->dlogits, (size_t)N * Vl);
        TIMED(m, OP_MATMUL, 1,
              column_parallel_backward(&m->pack, g->dtmp, dh.head_w, NULL, g->dlogits,
                                       a->lnf, h.head_w, N, C, Vl, tp, flops));
        model_round_gradient(m, g->dtmp, BTC);
        memset(g->dres, 0, sizeof(real) * BTC);
        TIMED(m, OP_LAYERNORM, 1,
              layernorm_backward(g->dres + mine, dh.lnf_w, dh.lnf_b, g->dtmp + mine,
                                 last, h.lnf_w, a->lnf_mean, a->lnf_rstd, Ns, C));
        model_round_gradient(m, g->dres, BTC);
        announce(m, L);                   /* the head and the final norm are done */
    }
    for (int l = first + count - 1; l >= first; l--) {
        Params w = weights_of(m, l), dw = gradients_of(m, l);
        BlockActivations k = block_activations(m, l - first, B);
        TpTraffic sent = tp_traffic();
        Params dm = m->deferred != NULL ? (Params){ 0 } : dw;  /* the products' */
        TIMED(m, OP_MATMUL, 1,
              row_parallel_backward(&m->pack, g->dfch_gelu, dm.fcproj_w, dm.fcproj_b,
                                    g->dres, k.fch_gelu, w.fcproj_w, N, 4 * Cl, C, tp,
                                    flops));
        model_round_gradient(m, g->dfch_gelu, 4 * BTCl);
        keep_for_weights(k.kept_fcproj, g->dres, BTC);
        TIMED(m, OP_GELU, 1, gelu_backward(g->dfch, k.fch, g->dfch_gelu, 4 * BTCl));
        model_round_gradient(m, g->dfch, 4 * BTCl);
        TIMED(m, OP_MATMUL, 1,
              column_parallel_backward(&m->pack, g->dtmp, dm.fc_w, dm.fc_b, g->dfch,
                                       k.ln2, w.fc_w, N, C, 4 * Cl, tp, flops));
        model_round_gradient(m, g->dtmp, BTC);
        keep_for_weights(k.kept_fc, g->dfch, 4 * BTCl);
        TIMED(m, OP_LAYERNORM, 1,
              layernorm_backward(g->dres + mine, dw.ln2_w, dw.ln2_b, g->dtmp + mine,
                                 k.res2, w.ln2_w, k.ln2_mean, k.ln2_rstd, Ns, C));
        model_round_gradient(m, g->dres, BTC);
        TIMED(m, OP_MATMUL, 1,
              row_parallel_backward(&m->pack, g->dtmp, dm.proj_w, dm.proj_b, g->dres,
                                    k.atty, w.proj_w, N, Cl, C, tp, flops));
        model_round_gradient(m, g->dtmp, BTC);
        keep_for_weights(k.kept_proj, g->dres, BTC);
        TIMED(m, OP_ATTENTION, 1,
              attention_backward(g->dqkv, g->datt_row, g->dtmp, k.qkv, k.att, B, T, Cl,
                                 Hl, flops));
        model_round_gradient(m, g->dqkv, 3 * BTCl);
        TIMED(m, OP_MATMUL, 1,
              column_parallel_backward(&m->pack, g->dtmp, dm.qkv_w, dm.qkv_b, g->dqkv,
                                       k.ln1, w.qkv_w, N, C, 3 * Cl, tp, flops));
        model_round_gradient(m, g->dtmp, BTC);
        keep_for_weights(k.kept_qkv, g->dqkv, 3 * BTCl);
        TIMED(m, OP_LAYERNORM, 1,
              layernorm_backward(g->dres + mine, dw.ln1_w, dw.ln1_b, g->dtmp + mine,
                                 k.x, w.ln1_w, k.ln1_mean, k.ln1_rstd, Ns, C));
        model_round_gradient(m, g->dres, BTC);
        tp_traffic_blocks_add(sent, 1);
        announce(m, l);
    }
    if (inputs == NULL)
        return;
    Params de = gradients_of(m, -1);
    g_backward(g->dres, BTC, tp);   /* every rank's rows, when split */
    TIMED(m, OP_EMBED, 1,
          encoder_backward(de.wte, de.wpe, g->dres, inputs, B, T, C));
    announce(m, -1);
}

void model_backward(Model *m, const int *inputs, const int *targets, int B,
                    real scale)
{
    stage_backward(m, inputs, targets, B, scale, 0, m->config.layers);
}
static void announce(Model *m, int unit)
{
    if (m->gradients_ready != NULL)
        m->gradients_ready(m->hook_context, unit);
}
void stage_weight_backward(Model *m, int B, int first, int count)
{
    int N = B * m->config.seq, C = m->config.hidden;
    int Cl = C / model_ways(m);
    MPI_Comm tp = model_tp_comm(m);
    double *flops = &m->tally.flops;
    for (int l = first + count - 1; l >= first; l--) {
        Params dw = gradients_of(m, l);
        BlockActivations k = block_activations(m, l - first, B);
        TIMED(m, OP_MATMUL, 1,                    /* x^T dy, four times */
              row_parallel_backward(&m->pack, NULL, dw.fcproj_w,
                                    dw.fcproj_b, k.kept_fcproj, k.fch_gelu,
                                    NULL, N, 4 * Cl, C, tp, flops));
        TIMED(m, OP_MATMUL, 1,
              column_parallel_backward(&m->pack, NULL, dw.fc_w, dw.fc_b,
                                       k.kept_fc, k.ln2, NULL, N, C, 4 * Cl,
                                       tp, flops));
        TIMED(m, OP_MATMUL, 1,
              row_parallel_backward(&m->pack, NULL, dw.proj_w, dw.proj_b,
                                    k.kept_proj, k.atty, NULL, N, Cl, C, tp,
                                    flops));
        TIMED(m, OP_MATMUL, 1,
              column_parallel_backward(&m->pack, NULL, dw.qkv_w, dw.qkv_b,
                                       k.kept_qkv, k.ln1, NULL, N, C, 3 * Cl,
                                       tp, flops));
    }
}
void model_use_activations(Model *m, real *block)
{
    point_acts(&m->acts, block, m->act_size);
}

void whole_param_sizes(const ModelConfig *c, size_t *size)
{
    param_sizes(*c, 1, STAGE_EMBEDDINGS | STAGE_HEAD, size);
}
