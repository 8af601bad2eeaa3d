/* Tangled from chapters/03-reference.nw; edit the chapter, not this file. */
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

static void param_sizes(ModelConfig c, size_t *size)
{
    size_t V = (size_t)c.vocab, T = (size_t)c.seq, L = (size_t)c.layers;
    size_t C = (size_t)c.hidden;
    size_t s[PARAM_TENSORS] = {
        V * C, T * C, L * C, L * C, L * C * 3 * C, L * 3 * C, L * C * C,
        L * C, L * C, L * C, L * C * 4 * C, L * 4 * C, L * 4 * C * C, L * C,
        C, C, C * V
    };
    memcpy(size, s, sizeof s);
}
static void act_sizes(ModelConfig c, int batch, size_t *size)
{
    size_t B = (size_t)batch, T = (size_t)c.seq, L = (size_t)c.layers;
    size_t C = (size_t)c.hidden, H = (size_t)c.heads, V = (size_t)c.vocab;
    size_t s[ACT_TENSORS] = {
        B * T * C, L * B * T * C, L * B * T, L * B * T, L * B * T * 3 * C,
        L * B * H * T * T, L * B * T * C, L * B * T * C, L * B * T * C,
        L * B * T, L * B * T, L * B * T * 4 * C, L * B * T * 4 * C,
        L * B * T * C, B * T * C, B * T, B * T, B * T * V, B * T, B * T * C
    };
    memcpy(size, s, sizeof s);
}
static real *carve(real **block, size_t size)
{
    real *p = *block;
    *block += size;
    return p;
}

static void point_params(Params *p, real *block, const size_t *s)
{
    p->wte = carve(&block, s[0]);      p->wpe = carve(&block, s[1]);
    p->ln1_w = carve(&block, s[2]);    p->ln1_b = carve(&block, s[3]);
    p->qkv_w = carve(&block, s[4]);    p->qkv_b = carve(&block, s[5]);
    p->proj_w = carve(&block, s[6]);   p->proj_b = carve(&block, s[7]);
    p->ln2_w = carve(&block, s[8]);    p->ln2_b = carve(&block, s[9]);
    p->fc_w = carve(&block, s[10]);    p->fc_b = carve(&block, s[11]);
    p->fcproj_w = carve(&block, s[12]); p->fcproj_b = carve(&block, s[13]);
    p->lnf_w = carve(&block, s[14]);   p->lnf_b = carve(&block, s[15]);
    p->head_w = carve(&block, s[16]);
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
                              int batch)
{
    size_t BTC = (size_t)batch * (size_t)c.seq * (size_t)c.hidden;
    size_t BTV = (size_t)batch * (size_t)c.seq * (size_t)c.vocab;
    real *start = block;
    g->dres = carve(&block, BTC);
    g->dtmp = carve(&block, BTC);
    g->dqkv = carve(&block, 3 * BTC);
    g->dfch = carve(&block, 4 * BTC);
    g->dfch_gelu = carve(&block, 4 * BTC);
    g->dlogits = carve(&block, BTV);
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

int model_init(Model *m, ModelConfig config, int batch)
{
    memset(m, 0, sizeof *m);
    m->config = config;
    m->batch = batch;
    param_sizes(config, m->param_size);
    m->params_count = total(m->param_size, PARAM_TENSORS);
    act_sizes(config, batch, m->act_size);
    m->acts_count = total(m->act_size, ACT_TENSORS);
    m->grad_acts_count = point_grad_acts(&m->grad_acts, NULL, config, batch);
    size_t N = m->params_count;
    m->params_memory = calloc(N, sizeof(real));
    m->grads_memory = calloc(N, sizeof(real));
    m->m_memory = calloc(N, sizeof(real));
    m->v_memory = calloc(N, sizeof(real));
    m->acts_memory = calloc(m->acts_count, sizeof(real));
    m->grad_acts_memory = calloc(m->grad_acts_count, sizeof(real));
    gemm_workspace_init(&m->gemm);
    if (!m->params_memory || !m->grads_memory || !m->m_memory
        || !m->v_memory || !m->acts_memory || !m->grad_acts_memory
        || !m->gemm.a || !m->gemm.b) {
        model_free(m);
        return -1;
    }
    point_params(&m->params, m->params_memory, m->param_size);
    point_params(&m->grads, m->grads_memory, m->param_size);
    point_acts(&m->acts, m->acts_memory, m->act_size);
    point_grad_acts(&m->grad_acts, m->grad_acts_memory, config, batch);
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
    gemm_workspace_free(&m->gemm);
    memset(m, 0, sizeof *m);
}

void model_zero_grads(Model *m)
{
    memset(m->grads_memory, 0, m->params_count * sizeof(real));
}
void model_init_weights(Model *m, uint64_t seed)
{
    Rng rng = { seed ^ 0x77656967687473ULL };          /* "weights" */
    real *p = m->params_memory;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        const char *name = param_names[t];
        real std = 0.02f;
        if (strcmp(name, "proj_w") == 0 || strcmp(name, "fcproj_w") == 0)
            std /= sqrt(2.0f * (real)m->config.layers);
        int is_scale = strstr(name, "ln") != NULL && name[strlen(name) - 1] == 'w';
        int is_bias = name[strlen(name) - 1] == 'b';
        for (size_t i = 0; i < m->param_size[t]; i++)
            p[i] = is_scale ? 1.0f : is_bias ? 0.0f : std * rng_normal(&rng);
        p += m->param_size[t];
    }
}
double model_forward(Model *m, const int *inputs, const int *targets, int B)
{
    ModelConfig c = m->config;
    int T = c.seq, C = c.hidden, L = c.layers, H = c.heads, V = c.vocab;
    int N = B * T;                                   /* positions */
    size_t NC = (size_t)N * C;
    Params *p = &m->params;
    Activations *a = &m->acts;
    double *flops = &m->tally.flops;

    TIMED(m, OP_EMBED, 0,
          encoder_forward(a->encoded, inputs, p->wte, p->wpe, B, T, C));
    for (int l = 0; l < L; l++) {
        size_t Cl = (size_t)l * C;
        const real *x = l == 0 ? a->encoded : a->res3 + (size_t)(l - 1) * NC;
        real *ln1 = a->ln1 + l * NC, *ln2 = a->ln2 + l * NC;
        real *ln1_mean = a->ln1_mean + (size_t)l * N, *ln1_rstd = a->ln1_rstd + (size_t)l * N;
        real *ln2_mean = a->ln2_mean + (size_t)l * N, *ln2_rstd = a->ln2_rstd + (size_t)l * N;
        real *qkv = a->qkv + l * 3 * NC;                         /* (B, T, 3C) */
        real *att = a->att + (size_t)l * B * H * T * T;          /* (B, H, T, T) */
        real *atty = a->atty + l * NC, *res2 = a->res2 + l * NC;
        real *fch = a->fch + l * 4 * NC, *fch_gelu = a->fch_gelu + l * 4 * NC;
        real *res3 = a->res3 + l * NC;
        const real *qkv_w = p->qkv_w + Cl * 3 * C, *qkv_b = p->qkv_b + 3 * Cl;
        const real *proj_w = p->proj_w + Cl * C, *proj_b = p->proj_b + Cl;
        const real *fc_w = p->fc_w + Cl * 4 * C, *fc_b = p->fc_b + 4 * Cl;
        const real *fcproj_w = p->fcproj_w + Cl * 4 * C, *fcproj_b = p->fcproj_b + Cl;
        const real *ln1_w = p->ln1_w + Cl, *ln1_b = p->ln1_b + Cl;
        const real *ln2_w = p->ln2_w + Cl, *ln2_b = p->ln2_b + Cl;
        TIMED(m, OP_LAYERNORM, 0,
              layernorm_forward(ln1, ln1_mean, ln1_rstd, x, ln1_w, ln1_b, N, C));
        TIMED(m, OP_MATMUL, 0,
              matmul_forward(&m->gemm, qkv, ln1, qkv_w, qkv_b, N, C, 3 * C, flops));
        TIMED(m, OP_ATTENTION, 0,
              attention_forward(atty, att, qkv, B, T, C, H, flops));
        TIMED(m, OP_MATMUL, 0,
              matmul_forward(&m->gemm, a->scratch, atty, proj_w, proj_b, N, C, C, flops));
        TIMED(m, OP_RESIDUAL, 0, residual_forward(res2, x, a->scratch, NC));
        TIMED(m, OP_LAYERNORM, 0,
              layernorm_forward(ln2, ln2_mean, ln2_rstd, res2, ln2_w, ln2_b, N, C));
        TIMED(m, OP_MATMUL, 0,
              matmul_forward(&m->gemm, fch, ln2, fc_w, fc_b, N, C, 4 * C, flops));
        TIMED(m, OP_GELU, 0, gelu_forward(fch_gelu, fch, 4 * NC));
        TIMED(m, OP_MATMUL, 0,
              matmul_forward(&m->gemm, a->scratch, fch_gelu, fcproj_w, fcproj_b, N,
                             4 * C, C, flops));
        TIMED(m, OP_RESIDUAL, 0, residual_forward(res3, res2, a->scratch, NC));
    }
    real *last = a->res3 + (size_t)(L - 1) * NC;     /* (B, T, C) */
    TIMED(m, OP_LAYERNORM, 0,
          layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, last, p->lnf_w,
                            p->lnf_b, N, C));
    TIMED(m, OP_MATMUL, 0,
          matmul_forward(&m->gemm, a->probs, a->lnf, p->head_w, NULL, N, C, V,
                         flops));
    double loss = 0.0;
    TIMED(m, OP_LOSS, 0,
          loss = crossentropy_forward(a->probs, a->losses, targets, N, V));
    m->loss = (real)loss;
    return loss;
}
static void announce(Model *m, int layer);

void model_backward(Model *m, const int *inputs, const int *targets, int B,
                    real scale)
{
    ModelConfig c = m->config;
    int T = c.seq, C = c.hidden, L = c.layers, H = c.heads, V = c.vocab;
    int N = B * T;
    size_t NC = (size_t)N * C;
    Params *p = &m->params, *gp = &m->grads;
    Activations *a = &m->acts;
    Gradients *g = &m->grad_acts;
    double *flops = &m->tally.flops;

    real *last = a->res3 + (size_t)(L - 1) * NC;
    TIMED(m, OP_LOSS, 1,
          crossentropy_backward(g->dlogits, a->probs, targets, N, V, scale));
    TIMED(m, OP_MATMUL, 1,
          matmul_backward(&m->gemm, g->dtmp, gp->head_w, NULL, g->dlogits, a->lnf,
                          p->head_w, N, C, V, flops));
    memset(g->dres, 0, sizeof(real) * NC);
    TIMED(m, OP_LAYERNORM, 1,
          layernorm_backward(g->dres, gp->lnf_w, gp->lnf_b, g->dtmp, last,
                             p->lnf_w, a->lnf_mean, a->lnf_rstd, N, C));
    announce(m, L);                   /* the head and the final norm are done */
    for (int l = L - 1; l >= 0; l--) {
        size_t Cl = (size_t)l * C;
        const real *x = l == 0 ? a->encoded : a->res3 + (size_t)(l - 1) * NC;
        real *ln1 = a->ln1 + l * NC, *ln2 = a->ln2 + l * NC;
        real *ln1_mean = a->ln1_mean + (size_t)l * N, *ln1_rstd = a->ln1_rstd + (size_t)l * N;
        real *ln2_mean = a->ln2_mean + (size_t)l * N, *ln2_rstd = a->ln2_rstd + (size_t)l * N;
        real *qkv = a->qkv + l * 3 * NC;                         /* (B, T, 3C) */
        real *att = a->att + (size_t)l * B * H * T * T;          /* (B, H, T, T) */
        real *atty = a->atty + l * NC, *res2 = a->res2 + l * NC;
        real *fch = a->fch + l * 4 * NC, *fch_gelu = a->fch_gelu + l * 4 * NC;
        real *res3 = a->res3 + l * NC;
        const real *qkv_w = p->qkv_w + Cl * 3 * C, *qkv_b = p->qkv_b + 3 * Cl;
        const real *proj_w = p->proj_w + Cl * C, *proj_b = p->proj_b + Cl;
        const real *fc_w = p->fc_w + Cl * 4 * C, *fc_b = p->fc_b + 4 * Cl;
        const real *fcproj_w = p->fcproj_w + Cl * 4 * C, *fcproj_b = p->fcproj_b + Cl;
        const real *ln1_w = p->ln1_w + Cl, *ln1_b = p->ln1_b + Cl;
        const real *ln2_w = p->ln2_w + Cl, *ln2_b = p->ln2_b + Cl;
        real *dqkv_w = gp->qkv_w + Cl * 3 * C, *dqkv_b = gp->qkv_b + 3 * Cl;
        real *dproj_w = gp->proj_w + Cl * C, *dproj_b = gp->proj_b + Cl;
        real *dfc_w = gp->fc_w + Cl * 4 * C, *dfc_b = gp->fc_b + 4 * Cl;
        real *dfcproj_w = gp->fcproj_w + Cl * 4 * C, *dfcproj_b = gp->fcproj_b + Cl;
        real *dln1_w = gp->ln1_w + Cl, *dln1_b = gp->ln1_b + Cl;
        real *dln2_w = gp->ln2_w + Cl, *dln2_b = gp->ln2_b + Cl;
        (void)res3; (void)ln1_b; (void)ln2_b;       /* the forward pass's alone */
        (void)qkv_b; (void)proj_b; (void)fc_b; (void)fcproj_b;
        TIMED(m, OP_MATMUL, 1,
              matmul_backward(&m->gemm, g->dfch_gelu, dfcproj_w, dfcproj_b, g->dres,
                              fch_gelu, fcproj_w, N, 4 * C, C, flops));
        TIMED(m, OP_GELU, 1, gelu_backward(g->dfch, fch, g->dfch_gelu, 4 * NC));
        TIMED(m, OP_MATMUL, 1,
              matmul_backward(&m->gemm, g->dtmp, dfc_w, dfc_b, g->dfch, ln2, fc_w, N,
                              C, 4 * C, flops));
        TIMED(m, OP_LAYERNORM, 1,
              layernorm_backward(g->dres, dln2_w, dln2_b, g->dtmp, res2, ln2_w,
                                 ln2_mean, ln2_rstd, N, C));
        TIMED(m, OP_MATMUL, 1,
              matmul_backward(&m->gemm, g->dtmp, dproj_w, dproj_b, g->dres, atty,
                              proj_w, N, C, C, flops));
        TIMED(m, OP_ATTENTION, 1,
              attention_backward(g->dqkv, g->datt_row, g->dtmp, qkv, att, B, T, C, H,
                                 flops));
        TIMED(m, OP_MATMUL, 1,
              matmul_backward(&m->gemm, g->dtmp, dqkv_w, dqkv_b, g->dqkv, ln1, qkv_w,
                              N, C, 3 * C, flops));
        TIMED(m, OP_LAYERNORM, 1,
              layernorm_backward(g->dres, dln1_w, dln1_b, g->dtmp, x, ln1_w, ln1_mean,
                                 ln1_rstd, N, C));
        announce(m, l);
    }
    TIMED(m, OP_EMBED, 1,
          encoder_backward(gp->wte, gp->wpe, g->dres, inputs, B, T, C));
    announce(m, -1);
}
static void announce(Model *m, int layer)
{
    if (m->gradients_ready != NULL && m->hooks_armed)
        m->gradients_ready(m->gradients_context, layer);
}
