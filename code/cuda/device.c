/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "gpu.h"
#include "../comm/ring.h"

/* The model on the GPU: the CPU model's arrays, each at the same offset
   in a device block of the same size, so that unit_view and the layout
   of Chapter 6 serve both. With --tp the CPU model is this rank's part
   of each block (Chapter 9), and so is the GPU's. */
typedef struct {
    Model *host;             /* the CPU model whose layout it mirrors   */
    const Mesh *mesh;        /* the run's axes and their communicators   */
    real *params, *grads;    /* (N) device                               */
    real *m, *v;             /* (N) Adam's moments, device               */
    real *acts_memory, *grad_acts_memory;
    Activations acts;        /* pointers into acts_memory                */
    Gradients grad_acts;     /* pointers into grad_acts_memory           */
    real *dscores;           /* (B, H/t, T, T) scores' gradients, scratch */
    int *inputs, *targets;   /* (B, T) device                            */
    int *mine, *host_mine;   /* (B, T) device and host, t > 1: targets as
                                columns of this rank's vocabulary, or -1 */
    real *vocab_sums;        /* (B·T, 3) device, t > 1: the loss's rows'
                                maxima, then their sums                   */
    real *staging;           /* (B·T, max(C, 2)) host, t > 1: a copy for
                                a collective                             */
    real *ring_scratch;      /* (N/d + 1) host, d > 1: a chunk of a ring */
    GpuComm *tp_nccl, *dp_nccl;  /* the axes' device communicators, or
                                    NULL: collectives on host copies     */
} GpuModel;

/* A host pointer's place in its block, carried over to another block. */
static void move_pointers(real **pointers, int count, const real *from,
                          real *to)
{
    for (int i = 0; i < count; i++)
        pointers[i] = to + (pointers[i] - from);
}

static void gpu_model_free(GpuModel *g)
{
    void *all[] = { g->params, g->grads, g->m, g->v, g->acts_memory,
                    g->grad_acts_memory, g->dscores, g->inputs, g->targets,
                    g->mine, g->vocab_sums };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gpu_free(all[i]);
    free(g->host_mine);
    free(g->staging);
    free(g->ring_scratch);
    memset(g, 0, sizeof *g);
}

/* 0, or -1 when the device (or the host) has not the memory. */
static int gpu_model_init(GpuModel *g, Model *host, const Mesh *mesh)
{
    _Static_assert(sizeof(Activations) == ACT_TENSORS * sizeof(real *),
                   "Activations holds only its tensors' pointers");
    enum { GRADIENT_TENSORS = sizeof(Gradients) / sizeof(real *) };
    ModelConfig c = host->config;
    size_t N = host->params_count, BT = (size_t)host->batch * c.seq;
    int t = model_ways(host);
    size_t row = c.hidden > 2 ? (size_t)c.hidden : 2;  /* of staging */
    memset(g, 0, sizeof *g);
    g->host = host;
    g->mesh = mesh;
    real **state[] = { &g->params, &g->grads, &g->m, &g->v };
    int failed = 0;
    for (int i = 0; i < 4; i++)
        failed |= (*state[i] = gpu_alloc(sizeof(real) * N)) == NULL;
    g->acts_memory = gpu_alloc(sizeof(real) * host->acts_count);
    g->grad_acts_memory = gpu_alloc(sizeof(real) * host->grad_acts_count);
    g->dscores = gpu_alloc(sizeof(real) * BT * (c.heads / t) * c.seq);
    g->inputs = gpu_alloc(sizeof(int) * BT);
    g->targets = gpu_alloc(sizeof(int) * BT);
    if (t > 1)
        failed |= (g->mine = gpu_alloc(sizeof(int) * BT)) == NULL
               || (g->vocab_sums = gpu_alloc(sizeof(real) * BT * 3)) == NULL
               || (g->host_mine = malloc(sizeof(int) * BT)) == NULL
               || (g->staging = malloc(sizeof(real) * BT * row)) == NULL;
    if (mesh->dp > 1)
        failed |= (g->ring_scratch = malloc(sizeof(real)
                                            * (N / mesh->dp + 1))) == NULL;
    if (failed || !g->acts_memory || !g->grad_acts_memory || !g->dscores
        || !g->inputs || !g->targets) {
        gpu_model_free(g);
        return -1;
    }
    g->acts = host->acts;
    move_pointers((real **)&g->acts, ACT_TENSORS, host->acts_memory,
                  g->acts_memory);
    g->grad_acts = host->grad_acts;
    move_pointers((real **)&g->grad_acts, GRADIENT_TENSORS,
                  host->grad_acts_memory, g->grad_acts_memory);
    gpu_zero(g->m, sizeof(real) * N);
    gpu_zero(g->v, sizeof(real) * N);
    return 0;
}


typedef struct {             /* block l's slices of the stacked activations */
    const real *x;           /* (B, T, C) the block's input                 */
    real *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2;
    real *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *res3;
} Block;

/* As model.c's block_activations, on the device's arrays: this rank's
   t-th of the heads and of the MLP's width. */
static Block block_of(const GpuModel *g, int l, int B)
{
    const ModelConfig c = g->host->config;
    const Activations *a = &g->acts;
    size_t t = (size_t)model_ways(g->host);
    size_t N = (size_t)B * c.seq, BTC = N * c.hidden, L = (size_t)l;
    size_t BTCl = BTC / t;                           /* C/t: a t-th */
    size_t TT = (size_t)B * (c.heads / t) * c.seq * c.seq;
    return (Block){
        .x = l == 0 ? a->encoded : a->res3 + (L - 1) * BTC,
        .ln1 = a->ln1 + L * BTC, .ln1_mean = a->ln1_mean + L * N,
        .ln1_rstd = a->ln1_rstd + L * N,
        .qkv = a->qkv + L * 3 * BTCl,                /* (B, T, 3C/t)   */
        .att = a->att + L * TT,                      /* (B, H/t, T, T) */
        .atty = a->atty + L * BTCl, .res2 = a->res2 + L * BTC,
        .ln2 = a->ln2 + L * BTC, .ln2_mean = a->ln2_mean + L * N,
        .ln2_rstd = a->ln2_rstd + L * N,
        .fch = a->fch + L * 4 * BTCl,                /* (B, T, 4C/t)   */
        .fch_gelu = a->fch_gelu + L * 4 * BTCl,
        .res3 = a->res3 + L * BTC,
    };
}

/* Chapter 9's f or g on a device buffer x (n), summed over the tensor
   group: by NCCL's all-reduce in place, or by the CPU's operator, op, on
   a host copy; counted either way; nothing on one rank. */
static void tp_operator(const GpuModel *g,
                        void (*op)(real *, size_t, MPI_Comm), real *x,
                        size_t n)
{
    int t = model_ways(g->host);
    if (t == 1)
        return;
    if (g->tp_nccl != NULL) {
        gpu_all_reduce(g->tp_nccl, x, n, GPU_SUM);
        /* counted as a ring all-reduce of n reals sends: 2(t-1)/t·n */
        tp_traffic_count(2.0 * (t - 1) / t * (double)n * sizeof(real));
        return;
    }
    gpu_download(g->staging, x, sizeof(real) * n);
    op(g->staging, n, model_tp_comm(g->host));
    gpu_upload(x, g->staging, sizeof(real) * n);
}

/* How an axis of `ways` ranks reduces, for the reports: "nccl" on the
   device, "host" through host copies, "none" on one rank. */
static const char *path_name(const GpuComm *nccl, int ways)
{
    return ways == 1 ? "none" : nccl != NULL ? "nccl" : "host";
}

/* out (N, OCl) = in (N, C) · w (C, OCl) + bias (OCl); f: the identity
   (the GPU does not split the sequence). */
static void gpu_column_parallel_forward(real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl)
{
    gpu_matmul_forward(out, in, w, bias, N, C, OCl);
}

/* din (N, C) = dout (N, OCl) · w^T, summed over the group (f backward);
   dw (C, OCl) and dbias (OCl) accumulate this rank's part. */
static void gpu_column_parallel_backward(const GpuModel *g, real *din,
    real *dw, real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl)
{
    gpu_matmul_backward(din, dw, dbias, dout, in, w, N, C, OCl);
    tp_operator(g, f_backward, din, (size_t)N * C);
}

/* out (N, OC) = the sum over the group of in (N, Cl) · w (Cl, OC) (g),
   and bias (OC) once: the group's first rank adds it before the sum. */
static void gpu_row_parallel_forward(const GpuModel *g, real *out,
    const real *in, const real *w, const real *bias, int N, int Cl, int OC)
{
    int first = g->host->tp == NULL || g->host->tp->rank == 0;
    gpu_matmul_forward(out, in, w, first ? bias : NULL, N, Cl, OC);
    tp_operator(g, g_forward, out, (size_t)N * OC);
}

/* din (N, Cl) = dout (N, OC) · w^T (g backward: the identity); dw
   (Cl, OC) and dbias (OC) accumulate. */
static void gpu_row_parallel_backward(real *din, real *dw, real *dbias,
    const real *dout, const real *in, const real *w, int N, int Cl, int OC)
{
    gpu_matmul_backward(din, dw, dbias, dout, in, w, N, Cl, OC);
}

/* An all-reduce of a device array x (n) over the tensor group, by NCCL
   or through a host copy: the loss's maxima (GPU_MAX) and sums (GPU_SUM),
   which the CPU does not count among the blocks' collectives either. */
static void tp_all_reduce(const GpuModel *g, real *x, size_t n,
                          GpuReduction op)
{
    if (g->tp_nccl != NULL) {
        gpu_all_reduce(g->tp_nccl, x, n, op);
        return;
    }
    gpu_download(g->staging, x, sizeof(real) * n);
    MPI_Allreduce(MPI_IN_PLACE, g->staging, (int)n, real_type(),
                  op == GPU_MAX ? MPI_MAX : MPI_SUM, model_tp_comm(g->host));
    gpu_upload(x, g->staging, sizeof(real) * n);
}

/* The mean loss of this rank's logits probs (N, Vl), made probabilities:
   on one rank, the kernel over the whole vocabulary; on t, Chapter 9's
   vocabulary-parallel cross-entropy, its steps on the device and its two
   all-reduces of N and 2N numbers. */
static double gpu_vocab_parallel_crossentropy_forward(GpuModel *g,
    real *probs, real *losses, int N, int Vl)
{
    if (model_ways(g->host) == 1)
        return gpu_crossentropy_forward(probs, losses, g->targets, N, Vl);
    real *row_max = g->vocab_sums, *sums = g->vocab_sums + N;  /* (N, 2) */
    gpu_vocab_shard_max(row_max, probs, N, Vl);
    tp_all_reduce(g, row_max, (size_t)N, GPU_MAX);
    gpu_vocab_shard_exp(probs, sums, row_max, g->mine, N, Vl);
    tp_all_reduce(g, sums, 2 * (size_t)N, GPU_SUM);
    return gpu_vocab_shard_loss(probs, losses, sums, N, Vl);
}

/* dlogits (N, Vl) is written: this rank's columns of the gradient. */
static void gpu_vocab_parallel_crossentropy_backward(GpuModel *g,
    real *dlogits, const real *probs, int N, int Vl, real scale)
{
    const int *targets = model_ways(g->host) == 1 ? g->targets : g->mine;
    gpu_crossentropy_backward(dlogits, probs, targets, N, Vl, scale);
}

/* The micro-batch's targets (n) on the device, and with t > 1 as
   columns of this rank's vocabulary (-1 where another rank holds one). */
static void upload_targets(GpuModel *g, const int *targets, int n)
{
    const Model *m = g->host;
    int Vl = m->config.vocab / model_ways(m);
    gpu_upload(g->targets, targets, sizeof(int) * (size_t)n);
    if (model_ways(m) == 1)
        return;
    vocab_shard_targets(g->host_mine, targets, m->tp->rank * Vl, n, Vl);
    gpu_upload(g->mine, g->host_mine, sizeof(int) * (size_t)n);
}

/* model_forward on the GPU: the mean loss of B sequences whose inputs
   and targets are already on the device. */
static double gpu_forward(GpuModel *g, int B)
{
    ModelConfig c = g->host->config;
    int T = c.seq, C = c.hidden, L = c.layers;
    int t = model_ways(g->host);             /* ways the blocks are split */
    int Cl = C / t, Hl = c.heads / t;        /* this rank's width, heads  */
    int Vl = c.vocab / t;                    /* ... and vocabulary        */
    int N = B * T;                                   /* positions */
    size_t BTC = (size_t)N * C, BTCl = BTC / (size_t)t;
    Activations *a = &g->acts;
    Params e = unit_view(g->host, g->params, -1);    /* the embeddings */
    gpu_encoder_forward(a->encoded, g->inputs, e.wte, e.wpe, B, T, C);
    for (int l = 0; l < L; l++) {
        Params w = unit_view(g->host, g->params, l);
        Block k = block_of(g, l, B);
        TpTraffic sent = tp_traffic();          /* counted for Chapter 9 */
        gpu_layernorm_forward(k.ln1, k.ln1_mean, k.ln1_rstd, k.x, w.ln1_w,
                              w.ln1_b, N, C);
        gpu_column_parallel_forward(k.qkv, k.ln1, w.qkv_w, w.qkv_b, N, C,
                                    3 * Cl);
        gpu_attention_forward(k.atty, k.att, k.qkv, B, T, Cl, Hl);
        gpu_row_parallel_forward(g, a->scratch, k.atty, w.proj_w, w.proj_b,
                                 N, Cl, C);
        gpu_residual_forward(k.res2, k.x, a->scratch, BTC);
        gpu_layernorm_forward(k.ln2, k.ln2_mean, k.ln2_rstd, k.res2, w.ln2_w,
                              w.ln2_b, N, C);
        gpu_column_parallel_forward(k.fch, k.ln2, w.fc_w, w.fc_b, N, C,
                                    4 * Cl);
        gpu_gelu_forward(k.fch_gelu, k.fch, 4 * BTCl);
        gpu_row_parallel_forward(g, a->scratch, k.fch_gelu, w.fcproj_w,
                                 w.fcproj_b, N, 4 * Cl, C);
        gpu_residual_forward(k.res3, k.res2, a->scratch, BTC);
        tp_traffic_blocks_add(sent, 0);
    }
    real *last = a->res3 + (size_t)(L - 1) * BTC;     /* (B, T, C) */
    Params h = unit_view(g->host, g->params, L);     /* final norm, head */
    gpu_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, last, h.lnf_w,
                          h.lnf_b, N, C);
    gpu_column_parallel_forward(a->probs, a->lnf, h.head_w, NULL, N, C, Vl);
    return gpu_vocab_parallel_crossentropy_forward(g, a->probs, a->losses,
                                                   N, Vl);
}

/* model_backward on the GPU: adds the gradient of scale × the mean loss
   to g->grads. */
static void gpu_backward(GpuModel *g, int B, real scale)
{
    ModelConfig c = g->host->config;
    int T = c.seq, C = c.hidden, L = c.layers;
    int t = model_ways(g->host);
    int Cl = C / t, Hl = c.heads / t, Vl = c.vocab / t;
    int N = B * T;
    size_t BTC = (size_t)N * C, BTCl = BTC / (size_t)t;
    Activations *a = &g->acts;
    Gradients *d = &g->grad_acts;
    real *last = a->res3 + (size_t)(L - 1) * BTC;
    Params h = unit_view(g->host, g->params, L);
    Params dh = unit_view(g->host, g->grads, L);
    gpu_vocab_parallel_crossentropy_backward(g, d->dlogits, a->probs, N, Vl,
                                             scale);
    gpu_column_parallel_backward(g, d->dtmp, dh.head_w, NULL, d->dlogits,
                                 a->lnf, h.head_w, N, C, Vl);
    gpu_zero(d->dres, sizeof(real) * BTC);
    gpu_layernorm_backward(d->dres, dh.lnf_w, dh.lnf_b, d->dtmp, last,
                           h.lnf_w, a->lnf_mean, a->lnf_rstd, N, C);
    for (int l = L - 1; l >= 0; l--) {
        Params w = unit_view(g->host, g->params, l);
        Params dw = unit_view(g->host, g->grads, l);
        Block k = block_of(g, l, B);
        TpTraffic sent = tp_traffic();
        gpu_row_parallel_backward(d->dfch_gelu, dw.fcproj_w, dw.fcproj_b,
                                  d->dres, k.fch_gelu, w.fcproj_w, N, 4 * Cl,
                                  C);
        gpu_gelu_backward(d->dfch, k.fch, d->dfch_gelu, 4 * BTCl);
        gpu_column_parallel_backward(g, d->dtmp, dw.fc_w, dw.fc_b, d->dfch,
                                     k.ln2, w.fc_w, N, C, 4 * Cl);
        gpu_layernorm_backward(d->dres, dw.ln2_w, dw.ln2_b, d->dtmp, k.res2,
                               w.ln2_w, k.ln2_mean, k.ln2_rstd, N, C);
        gpu_row_parallel_backward(d->dtmp, dw.proj_w, dw.proj_b, d->dres,
                                  k.atty, w.proj_w, N, Cl, C);
        gpu_attention_backward(d->dqkv, g->dscores, d->dtmp, k.qkv, k.att,
                               B, T, Cl, Hl);
        gpu_column_parallel_backward(g, d->dtmp, dw.qkv_w, dw.qkv_b, d->dqkv,
                                     k.ln1, w.qkv_w, N, C, 3 * Cl);
        gpu_layernorm_backward(d->dres, dw.ln1_w, dw.ln1_b, d->dtmp, k.x,
                               w.ln1_w, k.ln1_mean, k.ln1_rstd, N, C);
        tp_traffic_blocks_add(sent, 1);
    }
    Params de = unit_view(g->host, g->grads, -1);
    gpu_encoder_backward(de.wte, de.wpe, d->dres, g->inputs, B, T, C);
}

/* data_parallel_combine on the GPU: the sum over the data axis of the
   ranks' gradients, by NCCL's all-reduce or by Chapter 7's ring on a host
   copy (counted at MPI_Sendrecv), and their mean loss; nothing on one
   rank. */
static void gpu_data_parallel_combine(GpuModel *g, double *loss)
{
    const Mesh *mesh = g->mesh;
    Model *m = g->host;
    size_t bytes = sizeof(real) * m->params_count;
    if (mesh->dp == 1)
        return;
    if (g->dp_nccl != NULL)
        gpu_all_reduce(g->dp_nccl, g->grads, m->params_count, GPU_SUM);
    else {
        gpu_download(m->grads_memory, g->grads, bytes);
        ring_allreduce(m->grads_memory, m->params_count, g->ring_scratch,
                       mesh->dp_comm);
        gpu_upload(g->grads, m->grads_memory, bytes);
    }
    MPI_Allreduce(MPI_IN_PLACE, loss, 1, MPI_DOUBLE, MPI_SUM, mesh->dp_comm);
    *loss /= mesh->dp;
}

/* The squared norm of the whole model's gradient, of which g holds a
   part: as tp_sum_of_squares, each split tensor's squares on every rank
   of the group and each replicated one's on its first, summed. */
static double gpu_gradient_squares(const GpuModel *g)
{
    const Model *m = g->host;
    if (model_ways(m) == 1)
        return gpu_sum_of_squares(g->grads, m->params_count);
    double squares = 0.0;
    size_t at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        if (tp_counts_tensor(m, t))
            squares += gpu_sum_of_squares(g->grads + at, m->param_size[t]);
        at += m->param_size[t];
    }
    MPI_Allreduce(MPI_IN_PLACE, &squares, 1, MPI_DOUBLE, MPI_SUM,
                  model_tp_comm(m));
    return squares;
}

/* A device array of this rank's part, whole on every rank: downloaded
   into the host model's array `copy`, then gathered as Chapter 9 does. */
static void gpu_gather(const GpuModel *g, const real *part, real *copy,
                       real *whole)
{
    gpu_download(copy, part, sizeof(real) * g->host->params_count);
    tp_gather(g->host, copy, whole);
}

/* rank_gradient on the GPU: this rank's share of the batch of `batch`
   (the data axis's split) in `micro` pieces, each uploaded in turn, then
   summed over the data axis; the batch's mean loss. */
static double gpu_rank_gradient(GpuModel *g, const Batch *b, int batch,
                                int micro)
{
    int T = g->host->config.seq, share = batch / g->mesh->dp;
    int per = share / micro;
    size_t first = (size_t)g->mesh->dp_rank * share * T;
    real part = (real)share / (real)batch;
    double loss = 0.0;
    gpu_zero(g->grads, sizeof(real) * g->host->params_count);
    for (int k = 0; k < micro; k++) {
        size_t at = first + (size_t)k * per * T;
        size_t bytes = sizeof(int) * (size_t)per * T;
        gpu_upload(g->inputs, b->inputs + at, bytes);
        upload_targets(g, b->targets + at, per * T);
        loss += gpu_forward(g, per);
        gpu_backward(g, per, part / (real)micro);
    }
    loss /= micro;
    gpu_data_parallel_combine(g, &loss);
    return loss;
}

/* clip_gradients and adamw_update on the GPU; the norm before clipping. */
static real gpu_optimizer_step(GpuModel *g, const AdamW *opt, real lr,
                               int step)
{
    Model *m = g->host;
    real norm, s = clip_factor(gpu_gradient_squares(g), opt->clip, &norm);
    if (s != 1.0f)
        gpu_scale(g->grads, s, m->params_count);
    real c1 = 1.0f - powf(opt->beta1, (real)step);
    real c2 = 1.0f - powf(opt->beta2, (real)step);
    size_t at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        gpu_adamw_span(g->params + at, g->grads + at, g->m + at, g->v + at,
                       m->param_size[t], opt->beta1, opt->beta2, opt->eps,
                       c1, c2, lr, decays(t) ? opt->weight_decay : 0.0f);
        at += m->param_size[t];
    }
    return norm;
}
/* ||got - want|| / ||want||, in the Euclidean norm. */
static double norm_difference(const real *got, const real *want, size_t n)
{
    double d = 0.0, w = 0.0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        w += (double)want[i] * want[i];
    }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

/* A loss and a gradient against the reference's: in fp32 element by
   element, with the reference --verify's tolerance; in bf16 relative, and
   in the norm. *dloss and *dgrad become the larger of what they held and
   this gradient's; *ok is cleared where a tolerance is exceeded. */
static void compare_gradient(double loss, double loss_ref, const real *got,
                             const real *want, size_t N, int bf16, int L,
                             double *dloss, double *dgrad,
                             double *loss_tolerance, double *grad_tolerance,
                             int *ok)
{
    double dl = fabs(loss - loss_ref), dg;
    if (bf16) {
        /* bf16 rounds each GEMM input to 8 significant bits, so one
           GEMM's result is within about 2u of its size, u = 2^-8; a
           gradient passes through at most 8L + 3 GEMMs (4L + 1 forward,
           as many backward, and its own), and the loss through 4L + 1. */
        *loss_tolerance = format_gemm_tolerance(4 * L + 1, FORMAT_BF16);
        *grad_tolerance = format_gemm_tolerance(8 * L + 3, FORMAT_BF16);
        dl /= fabs(loss_ref);
        dg = norm_difference(got, want, N);
        *ok = *ok && dl <= *loss_tolerance && dg <= *grad_tolerance;
    } else {
        *loss_tolerance = verify_atol + verify_rtol * fabs(loss_ref);
        *grad_tolerance = verify_rtol;
        *ok = *ok && dl <= *loss_tolerance;
        dg = verify_largest_difference(got, want, N, verify_atol,
                                       verify_rtol, ok);
    }
    *dloss = fmax(*dloss, dl);
    *dgrad = fmax(*dgrad, dg);
}

/* The largest status over the run's ranks; when it is not 0, the first
   rank whose status it is says why, in one line for the whole run. */
static int ranks_say(int status, const char *why, const Mesh *mesh)
{
    int worst = ranks_agree(status, mesh->world), first;
    int mine = status == worst ? mesh->rank : mesh->ranks;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, mesh->world);
    if (worst != 0 && first == mesh->rank)
        complain("minigpt", "%s", why);
    return worst;
}

/* One batch, one AdamW step and the batch's gradient again on the GPU,
   on every rank of the mesh, against the CPU reference: a whole model on
   each rank, the whole batch in one pass. */
static int gpu_verify(GpuModel *g, const Language *lang, Settings *set,
                      Option *options, int bf16)
{
    Model *m = g->host;                        /* this rank's part */
    const Mesh *mesh = g->mesh;
    int B = set->batch, T = set->config.seq, L = set->config.layers;
    size_t N = whole_params_count(&m->whole);  /* the whole model's */
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    Rng rng = training_rng(set->seed);
    Model ref;
    real *got = malloc(sizeof(real) * N);     /* the GPU's, gathered */
    if (batch_alloc(&b, B, T) != 0 || got == NULL
        || model_init(&ref, set->config, B, HOLDS_ALL) != 0)
        abort();
    model_init_weights(&ref, ref.params_memory, set->seed);
    batch_draw(&b, lang, &rng, B, T);
    gpu_upload(g->params, m->params_memory, sizeof(real) * m->params_count);
    double loss_ref = batch_gradient(&ref, &b, B, 1, 1);
    double loss = gpu_rank_gradient(g, &b, B, set->micro);
    gpu_gather(g, g->grads, m->grads_memory, got);
    int ok = 1;
    double dloss = 0, dgrad = 0, loss_tolerance, grad_tolerance;
    compare_gradient(loss, loss_ref, got, ref.grads_memory, N, bf16, L,
                     &dloss, &dgrad, &loss_tolerance, &grad_tolerance, &ok);
    /* Both optimizers step from the GPU's gradient, so that the step is
       checked on its own, in fp32 whatever the GEMMs' precision. */
    memcpy(ref.grads_memory, got, sizeof(real) * N);
    clip_gradients(&ref, opt.clip);
    adamw_update(&ref, &opt, set->lr, 1);
    gpu_optimizer_step(g, &opt, set->lr, 1);
    gpu_gather(g, g->params, m->params_memory, got);
    double dweight = verify_largest_difference(got, ref.params_memory, N,
                                               verify_atol, verify_rtol,
                                               &ok);
    gpu_gather(g, g->m, m->m_memory, got);
    double dmoment = verify_largest_difference(got, ref.m_memory, N, 0,
                                               verify_rtol, &ok);
    gpu_gather(g, g->v, m->v_memory, got);
    dmoment = fmax(dmoment, verify_largest_difference(got, ref.v_memory, N,
                                                      0, verify_rtol, &ok));
    /* A second gradient from the GPU's stepped weights, in which the
       biases are no longer zero, as the CPU's --verify takes it. */
    gpu_gather(g, g->params, m->params_memory, got);
    memcpy(ref.params_memory, got, sizeof(real) * N);
    model_zero_grads(&ref);
    loss_ref = batch_gradient(&ref, &b, B, 1, 1);
    loss = gpu_rank_gradient(g, &b, B, set->micro);
    gpu_gather(g, g->grads, m->grads_memory, got);
    compare_gradient(loss, loss_ref, got, ref.grads_memory, N, bf16, L,
                     &dloss, &dgrad, &loss_tolerance, &grad_tolerance, &ok);
    free(got);
    batch_free(&b);
    model_free(&ref);
    char why[512], line[600];
    int failed = gpu_status(why, sizeof why);
    snprintf(line, sizeof line, "--device cuda: %s", why);
    if (ranks_say(failed, line, mesh) != 0)
        return 2;
    double mine[4] = { dloss, dgrad, dweight, dmoment }, worst[4];
    MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, mesh->world);
    ok = ranks_agree(!ok, mesh->world) == 0;
    if (mesh->rank != 0)                       /* rank 0 speaks for all */
        return ok ? 0 : 1;
    dloss = worst[0];
    dgrad = worst[1];
    dweight = worst[2];
    dmoment = worst[3];
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    const char *precision = bf16 ? "bf16" : "fp32";
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "device", gpu_name());
        report_text(&r, "precision", precision);
        report_add(&r, "micro_batches", FIELD_COUNT, set->micro);
        report_add(&r, "tp", FIELD_COUNT, mesh->tp);
        report_add(&r, "dp", FIELD_COUNT, mesh->dp);
        report_text(&r, "tp_collectives", path_name(g->tp_nccl, mesh->tp));
        report_text(&r, "dp_collectives", path_name(g->dp_nccl, mesh->dp));
        report_add(&r, bf16 ? "relative_dloss" : "max_dloss", FIELD_SCI,
                   dloss);
        report_add(&r, bf16 ? "relative_dgrad_norm" : "max_dgrad", FIELD_SCI,
                   dgrad);
        report_add(&r, "max_dweight", FIELD_SCI, dweight);
        report_add(&r, "max_dmoment", FIELD_SCI, dmoment);
        report_add(&r, "loss_tolerance", FIELD_SCI, loss_tolerance);
        report_add(&r, "grad_tolerance", FIELD_SCI, grad_tolerance);
        report_text(&r, "result", ok ? "OK" : "FAIL");
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "verify: %s, GEMMs in %s, against the CPU "
                "reference (the batch of %d in one pass)\n", gpu_name(),
                precision, B);
        if (mesh->ranks > 1)
            fprintf(out.file, "verify: --tp %d × --dp %d on %d ranks: each "
                    "block split %d ways, gathered whole to compare\n",
                    mesh->tp, mesh->dp, mesh->ranks, mesh->tp);
        if (mesh->ranks > 1)
            fprintf(out.file, "verify: collectives on the tensor axis: %s, "
                    "on the data axis: %s\n", path_name(g->tp_nccl, mesh->tp),
                    path_name(g->dp_nccl, mesh->dp));
        if (bf16)
            fprintf(out.file, "verify: |dloss| / loss = %.3g (tolerance "
                    "(4L + 1)·2u = %.3g), |dgrad| / |grad| = %.3g "
                    "(tolerance (8L + 3)·2u = %.3g), u = 2^-8\n", dloss,
                    loss_tolerance, dgrad, grad_tolerance);
        else
            fprintf(out.file, "verify: max |dloss| = %.3g, max |dgrad| = "
                    "%.3g\n", dloss, dgrad);
        fprintf(out.file, "verify: after one AdamW step from the same "
                "gradient, max |dweight| = %.3g, max |dmoment| = %.3g\n",
                dweight, dmoment);
        fprintf(out.file, "verify: tolerance %g + %g·|reference|%s: %s\n",
                verify_atol, verify_rtol, bf16 ? " for the step" : "",
                ok ? "OK" : "FAIL");
    }
    if (output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
/* The training steps of train(), on the GPU, on every rank of the mesh;
   the report, rank 0's, is shorter. */
static int gpu_train(GpuModel *g, const Language *lang, Settings *set,
                     Option *options, int bf16)
{
    Model *host = g->host;
    const Mesh *mesh = g->mesh;
    int T = set->config.seq, speak = mesh->rank == 0;
    TrainingState state = fresh_state(set);
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    double *seconds = malloc(sizeof(double) * (size_t)(set->steps + 1));
    if (batch_alloc(&b, set->batch, T) != 0 || seconds == NULL)
        abort();
    gpu_upload(g->params, host->params_memory,
               sizeof(real) * host->params_count);
    double train_loss = NAN;
    char why[512] = "", line[600];
    int failed = 0, any_failed = 0;
    for (int step = 0; step < set->steps && !any_failed; step++) {
        double started = seconds_now();
        batch_draw(&b, lang, &state.data, set->batch, T);
        train_loss = gpu_rank_gradient(g, &b, set->batch, set->micro);
        real lr = learning_rate(set->lr, step, set->steps);
        real norm = gpu_optimizer_step(g, &opt, lr, step + 1);
        failed = gpu_status(why, sizeof why);     /* waits for the step */
        any_failed = ranks_agree(failed, mesh->world);  /* all stop */
        seconds[step] = seconds_now() - started;
        if (!set->quiet && speak)
            fprintf(stderr, "step %d/%d: loss %.4f, lr %.2e, grad norm "
                    "%.3f\n", step + 1, set->steps, train_loss, lr, norm);
    }
    batch_free(&b);
    snprintf(line, sizeof line, "--device cuda: %s", why);
    if (ranks_say(failed, line, mesh) != 0) {
        free(seconds);
        return 2;
    }
    /* The tensor axis's traffic in the GPU's blocks (the validation's
       passes below are the CPU's, counted by Chapter 9 apart). */
    TpTraffic forward = tp_traffic_blocks(0), backward = tp_traffic_blocks(1);
    gpu_download(host->params_memory, g->params,
                 sizeof(real) * host->params_count);
    double val_loss = validation_loss(host, lang, set->seed, set->batch);
    int timed;                 /* counted after the warm-up, as on the CPU */
    double median = median_after_warm_up(seconds, set->steps, &timed);
    if (timed == 0)
        median = NAN;
    free(seconds);
    if (!speak)                                /* rank 0 speaks for all */
        return 0;
    double tokens = (double)set->batch * T, t = mesh->tp;
    double bsh = (double)host->batch * T * set->config.hidden;
    double collectives = forward.collectives / fmax(forward.blocks, 1)
                       + backward.collectives / fmax(backward.blocks, 1);
    double bytes = forward.bytes / fmax(forward.blocks, 1)
                 + backward.bytes / fmax(backward.blocks, 1);
    double formula = 8 * bsh * (t - 1) / t * sizeof(real);
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "device", gpu_name());
        report_text(&r, "precision", bf16 ? "bf16" : "fp32");
        report_add(&r, "steps", FIELD_COUNT, set->steps);
        report_add(&r, "tp", FIELD_COUNT, mesh->tp);
        report_add(&r, "dp", FIELD_COUNT, mesh->dp);
        report_add(&r, "train_loss", FIELD_REAL, train_loss);
        report_add(&r, "val_loss", FIELD_REAL, val_loss);
        report_add(&r, "step_ms", FIELD_REAL, median * 1e3);
        report_add(&r, "tokens_per_second", FIELD_REAL, tokens / median);
        report_add(&r, "tp_collectives_per_block", FIELD_COUNT, collectives);
        report_add(&r, "tp_bytes_per_block", FIELD_BYTES, bytes);
        report_add(&r, "tp_bytes_per_block_formula", FIELD_BYTES, formula);
        report_text(&r, "tp_collectives", path_name(g->tp_nccl, mesh->tp));
        report_text(&r, "dp_collectives", path_name(g->dp_nccl, mesh->dp));
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "minigpt on %s, GEMMs in %s, --tp %d × --dp %d: "
                "%d steps, train loss %.4f, validation loss %.4f, median "
                "step %.3g ms (%.0f tokens/s)\n", gpu_name(),
                bf16 ? "bf16" : "fp32", mesh->tp, mesh->dp, set->steps,
                train_loss, val_loss, median * 1e3, tokens / median);
        if (mesh->tp > 1)
            fprintf(out.file, "tensor parallel = %d ways; per block per "
                    "micro-batch %g collectives,\n  %.0f B sent by each "
                    "rank (%s);\n  formula 8bsh(t-1)/t elements = %.0f B\n",
                    mesh->tp, collectives, bytes, g->tp_nccl != NULL
                    ? "NCCL's, counted as a ring sends them"
                    : "counted at MPI_Sendrecv", formula);
    }
    return output_commit(&out, "minigpt") != 0 ? 2 : 0;
}
/* Where a rank's GPU is: its node, and the device's PCI bus id there. */
typedef struct {
    char node[MPI_MAX_PROCESSOR_NAME];
    char device[64];
} GpuPlace;

/* 1 when no two ranks of comm are on one GPU, which NCCL refuses;
   collective over comm, so every rank of it answers the same. */
static int own_gpus(MPI_Comm comm)
{
    int ranks, length, own = 1;
    MPI_Comm_size(comm, &ranks);
    GpuPlace mine, *all = malloc(sizeof *all * (size_t)ranks);
    if (all == NULL)
        abort();
    memset(&mine, 0, sizeof mine);
    MPI_Get_processor_name(mine.node, &length);
    gpu_device_id(mine.device, sizeof mine.device);
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                  MPI_BYTE, comm);
    for (int i = 0; i < ranks; i++)
        for (int j = i + 1; j < ranks; j++)
            if (strcmp(all[i].device, all[j].device) == 0
                && strcmp(all[i].node, all[j].node) == 0)
                own = 0;
    free(all);
    return own;
}

/* --collectives: each axis of more than one rank reduces its device
   arrays through a communicator of NCCL's, nccl[a] (a = 0 the tensor
   axis, 1 the data axis), or through host copies (NULL). auto takes NCCL
   where it loads on every rank and the axis's ranks have a GPU each;
   nccl insists, and host never takes it. 0, or 2 on every rank after one
   line; collective over the mesh. */
static int open_collectives(const Mesh *mesh, const char *asked,
                            GpuComm **nccl)
{
    const char *axis[2] = { "tensor", "data" };
    MPI_Comm comm[2] = { mesh->tp_comm, mesh->dp_comm };
    int ways[2] = { mesh->tp, mesh->dp }, insist = !strcmp(asked, "nccl");
    char why[512] = "", line[600];
    if (strcmp(asked, "host") == 0 || mesh->ranks == 1)
        return 0;
    int loads = gpu_collectives(why, sizeof why);
    snprintf(line, sizeof line, "--collectives nccl: %s", why);
    if (insist ? ranks_say(loads, line, mesh)
               : ranks_agree(loads, mesh->world))
        return insist ? 2 : 0;
    for (int a = 0; a < 2; a++) {
        if (ways[a] == 1)
            continue;
        int shared = !own_gpus(comm[a]), failed = 0;
        if (shared && insist) {
            snprintf(line, sizeof line, "--collectives nccl: ranks of the "
                     "%s axis share a GPU, and NCCL takes one GPU a rank",
                     axis[a]);
            failed = 2;
        } else if (!shared
                   && (nccl[a] = gpu_comm_open(comm[a], why, sizeof why))
                      == NULL) {
            snprintf(line, sizeof line, "--collectives %s: %s", asked, why);
            failed = 2;
        }
        if (ranks_say(failed, line, mesh) != 0)
            return 2;
    }
    return 0;
}
/* The flags a GPU run does not offer (yet), or NULL. */
static const char *not_offered(Settings *set, Option *options)
{
    const char *flags[] = { "--resume", "--save", "--dump", "--gradcheck",
                            "--log", "--profile", "--keep-checkpoints",
                            "--sequence-parallel", "--allreduce",
                            "--no-overlap", "--no-allreduce", "--bucket-mb" };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (find_option(options, flags[i]) != NULL
            && option_given(options, flags[i]))
            return flags[i];
    if (find_option(options, "--zero") != NULL
        && strcmp(option_text(options, "--zero"), "0") != 0)
        return "--zero";
    return set->mesh.pp > 1 ? "--pp" : NULL;
}

/* This rank's place among the ranks of its node: it takes that GPU,
   modulo the node's GPUs (gpu_open), so ranks beyond them share one. */
static int node_rank(MPI_Comm world)
{
    MPI_Comm node;
    int rank;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                        &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_free(&node);
    return rank;
}

/* With the device open on every rank: this rank's part of the model,
   on the host and on the GPU, then --verify or training; nccl: the axes'
   device communicators (tensor, data), or NULL. */
static int run_on_device(Settings *set, Option *options, GpuComm **nccl)
{
    Model host;                  /* this rank's part: sizes and weights */
    GpuModel g = { 0 };
    char line[600] = "";
    int rows = set->batch / set->dp / set->micro;   /* one micro-batch */
    int failed = model_init_split(&host, set->config, rows, HOLDS_ALL,
                                  &set->split) != 0;
    if (failed)
        snprintf(line, sizeof line, "cannot allocate this model: "
                 "--layers, --hidden, --seq and --batch ask for more memory "
                 "than there is");
    else if ((failed = gpu_model_init(&g, &host, &set->mesh) != 0))
        snprintf(line, sizeof line, "--device cuda: %s has not the memory "
                 "for this model", gpu_name());
    int status = ranks_say(failed ? 2 : 0, line, &set->mesh);
    if (status == 0) {
        Language lang;
        g.tp_nccl = nccl[0];
        g.dp_nccl = nccl[1];
        int bf16 = strcmp(option_text(options, "--precision"), "bf16") == 0;
        language_init(&lang, set->config.vocab, set->seed);
        tp_init_weights(&host, host.params_memory, set->seed);
        gpu_set_precision(bf16 ? GPU_BF16 : GPU_FP32);
        status = option_given(options, "--verify")
               ? gpu_verify(&g, &lang, set, options, bf16)
               : gpu_train(&g, &lang, set, options, bf16);
    }
    gpu_model_free(&g);
    model_free(&host);
    return status;
}

int device_run(const char *command, Settings *set, Option *options)
{
    const char *device = option_text(options, "--device");
    const char *precision = option_text(options, "--precision");
    const char *flag = not_offered(set, options);
    int speak = set->rank == 0;
    char why[512] = "", line[600];
    if (device != NULL && strcmp(device, "cuda") != 0) {
        if (speak)
            complain(command, "--device: unknown \"%s\" (known: cuda; the "
                     "CPU is the default)", device);
        return 2;
    }
    if (strcmp(precision, "fp32") != 0 && strcmp(precision, "bf16") != 0) {
        if (speak)
            complain(command, "--precision: unknown \"%s\" (known: fp32, "
                     "bf16)", precision);
        return 2;
    }
    if (flag != NULL) {
        if (speak)
            complain(command, "%s is not offered with --device cuda (--tp "
                     "and --dp are)", flag);
        return 2;
    }
    Mesh *mesh = &set->mesh;                 /* Chapter 9's mesh */
    if (mesh_init(mesh, MPI_COMM_WORLD, mesh->tp, mesh->pp, mesh->dp, why,
                  sizeof why) != 0) {
        if (speak)
            complain(command, "%s", why);
        return 2;
    }
    set->split.comm = mesh->tp_comm;         /* this rank's part of each */
    set->split.rank = mesh->tp_rank;         /* block, Chapter 9's split */
    int opened = gpu_open(node_rank(mesh->world), why, sizeof why);
    snprintf(line, sizeof line, "--device cuda: %s", why);
    int status = ranks_say(opened, line, mesh);
    GpuComm *nccl[2] = { NULL, NULL };         /* tensor axis, data axis */
    if (status == 0)
        status = open_collectives(mesh, option_text(options, "--collectives"),
                                  nccl);
    if (status == 0)
        status = run_on_device(set, options, nccl);
    for (int a = 0; a < 2; a++)
        if (nccl[a] != NULL)
            gpu_comm_close(nccl[a]);
    gpu_close();
    mesh_free(mesh);
    return status;
}
