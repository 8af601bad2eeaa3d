/* Tangled from chapters/12-precision.nw and chapters/99gp-precision-plumbing.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

enum {                       /* the bytes a mixed-precision run holds */
    BYTES_WEIGHTS, BYTES_GRADIENTS, BYTES_MASTER_WEIGHTS,
    BYTES_MASTER_GRADIENTS, BYTES_MOMENTS, BYTES_BUFFERS, BYTE_KINDS
};

struct MixedPrecision {
    NumberFormat format;      /* bf16 or fp16                              */
    uint16_t *weights;        /* (N) what the passes read, in 16 bits      */
    uint16_t *gradients;      /* (N) what they add to; NULL: fp32-grads    */
    real *master;             /* (N) the fp32 master weights               */
    real *master_gradients;   /* (N) --fp32-grads: the gradients in fp32   */
    real *m, *v;              /* (N) Adam's moments, fp32                  */
    real *unit_weights;       /* (largest unit) one unit's weights, decoded */
    real *unit_gradients;     /* (largest unit) its gradient from the pass */
    size_t largest_unit;
    double bytes[BYTE_KINDS]; /* held, by kind                             */
    double scale;             /* S: the loss is multiplied by it           */
    double scale_used;        /* ... as it was for the last step's gradient */
    int clean;                /* steps in a row without overflow           */
    int overflow;             /* the gradient holds an infinity or a NaN   */
    int skipped;              /* the last step was skipped                 */
    int skipped_steps, growths;
    int fp8;                  /* --precision fp8                            */
    uint8_t *weights8;        /* (12 L C^2) the linear layers' weights, E4M3 */
    float *weight_scales;     /* (4 L) one scale a weight matrix             */
    int eight_bits[PARAM_TENSORS];  /* tensor t is one of those, in weights8 */
    size_t tensor_at[PARAM_TENSORS]; /* where tensor t starts in the N       */
    size_t held_at[PARAM_TENSORS];   /* ... in weights8 or in weights        */
    size_t scale_at[PARAM_TENSORS];  /* ... and its scales, in weight_scales */
    real *stream_gradient;    /* (B, T, C) the residual stream's gradient,
                                 set aside while a GEMM reads it in E5M2     */
    size_t stream_count;      /* ... of this many numbers                    */
    int stream_set_aside;     /* stream_gradient holds it now                */
};
static float fp16_numbers[65536];        /* every fp16 number, by bits */
static float e4m3_numbers[256];          /* every E4M3 number, by bits */

static void fill_fp16_numbers(void)
{
    for (uint32_t h = 0; h < 65536; h++)
        fp16_numbers[h] = float_from_fp16((uint16_t)h);
    for (uint32_t h = 0; h < 256; h++)
        e4m3_numbers[h] = format_decode(h, FORMAT_E4M3);
}

static uint16_t to_16_bits(float x, NumberFormat f)
{
    return f == FORMAT_BF16 ? bf16_from_float(x) : fp16_from_float(x);
}

static float from_16_bits(uint16_t h, NumberFormat f)
{
    return f == FORMAT_BF16 ? float_from_bf16(h) : fp16_numbers[h];
}

/* Weight i of the N, of tensor t, as the passes read it: from 16 bits,
   or in fp8 from E4M3 divided by its matrix's scale (exact). */
static real weight_at(const MixedPrecision *p, int t, size_t i,
                      size_t slice)
{
    size_t k = i - p->tensor_at[t];             /* within the tensor */
    if (!p->eight_bits[t])
        return from_16_bits(p->weights[p->held_at[t] + k], p->format);
    return e4m3_numbers[p->weights8[p->held_at[t] + k]]
         / p->weight_scales[p->scale_at[t] + k / slice];
}

static void round_all_weights(MixedPrecision *p, const Model *m);

static real gradient_at(const MixedPrecision *p, size_t i)
{
    return p->master_gradients != NULL ? p->master_gradients[i]
                                       : from_16_bits(p->gradients[i],
                                                      p->format);
}
enum { LOWEST_EXPONENT = -300, EXPONENTS = 600 };

typedef struct GradientHistogram {
    double scale;                        /* S: what the gradients carry */
    long long counts[2][EXPONENTS];      /* [weights, activations][e]   */
    long long exact_zeros[2], others[2]; /* exact zeros; inf and NaN    */
} GradientHistogram;

static void histogram_add(GradientHistogram *h, int kind, const real *x,
                          size_t n)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        double g = fabs((double)x[i]) / h->scale;
        int e;
        if (g == 0)
            h->exact_zeros[kind]++;
        else if (!isfinite(g))
            h->others[kind]++;
        else {
            frexp(g, &e);                  /* g = f 2^e, f in [1/2, 1) */
            h->counts[kind][e - 1 - LOWEST_EXPONENT]++;
        }
    }
}

void gradient_histogram_begin(Model *m, DataParallel *dp)
{
    if (dp->histogram_path == NULL || m->histogram != NULL)
        return;
    m->histogram = calloc(1, sizeof *m->histogram);
    if (m->histogram != NULL)
        m->histogram->scale = data_parallel_loss_scale(dp);
}

/* After the first step's gradient: fp32's weights' gradients, which no
   hook has seen, then the file; later steps count nothing. */
void gradient_histogram_end(Model *m, DataParallel *dp)
{
    GradientHistogram *h = m->histogram;
    if (h == NULL)
        return;
    if (dp->mixed == NULL)
        histogram_add(h, 0, m->grads_memory, m->params_count);
    FILE *f = fopen(dp->histogram_path, "w");
    int lo = EXPONENTS, hi = -1;
    for (int e = 0; e < EXPONENTS; e++)
        if (h->counts[0][e] + h->counts[1][e] > 0) {
            lo = e < lo ? e : lo;
            hi = e;
        }
    if (f != NULL) {
        fprintf(f, "exponent,param_grads,activation_grads\n");
        for (int e = lo; e <= hi; e++)
            fprintf(f, "%d,%lld,%lld\n", e + LOWEST_EXPONENT,
                    h->counts[0][e], h->counts[1][e]);
        fprintf(f, "zero,%lld,%lld\n", h->exact_zeros[0],
                h->exact_zeros[1]);
        if (h->others[0] + h->others[1] > 0)
            fprintf(f, "nonfinite,%lld,%lld\n", h->others[0], h->others[1]);
    }
    if (f == NULL || fclose(f) != 0)
        complain("minigpt", "--grad-histogram: cannot write %s",
                 dp->histogram_path);
    free(h);
    m->histogram = NULL;
    dp->histogram_path = NULL;                   /* the first step's only */
}
/* x (n), one tensor, as a GEMM reads it in format f: each element a
   number of f divided by the tensor's scale, which is exact, the scale
   being a power of two; the scale is returned. */
static float quantize_tensor(real *x, size_t n, NumberFormat f)
{
    float amax = 0;
    for (size_t i = 0; i < n; i++)
        amax = fmaxf(amax, fabsf((float)x[i]));
    float scale = format_tensor_scale(amax, f);
    for (size_t i = 0; i < n; i++)
        x[i] = format_round_scaled((float)x[i], scale, f) / scale;
    return scale;
}
/* fp8's backward: the output gradient that a linear layer's two GEMMs
   read, in E5M2. The MLP's and the projection's are read by their GEMMs
   alone and are rounded where they lie; the residual stream's goes on,
   in bf16, past the GEMM that reads it, so it is set aside and put back
   at the next rounding, the GEMM's output's (or at block 0's end). */
static void put_back_stream_gradient(const Model *m)
{
    MixedPrecision *p = m->fp8;
    if (!p->stream_set_aside)
        return;
    memcpy(m->grad_acts.dres, p->stream_gradient,
           sizeof(real) * p->stream_count);
    p->stream_set_aside = 0;
}

static void fp8_output_gradient(const Model *m, real *x, size_t n)
{
    MixedPrecision *p = m->fp8;
    const Gradients *g = &m->grad_acts;
    if (x != g->dres)
        put_back_stream_gradient(m);
    if (x == g->dqkv || x == g->dfch)
        quantize_tensor(x, n, FORMAT_E5M2);
    if (x == g->dres) {
        memcpy(p->stream_gradient, x, sizeof(real) * n);
        p->stream_count = n;
        p->stream_set_aside = 1;
        quantize_tensor(x, n, FORMAT_E5M2);
    }
}
/* Does x lie in the n numbers from start? */
static int lies_in(const real *x, const real *start, size_t n)
{
    uintptr_t at = (uintptr_t)x, from = (uintptr_t)start;
    return at >= from && at < from + n * sizeof(real);
}

static int linear_input(const Model *m, const real *x)
{
    const Activations *a = &m->acts;
    size_t L = (size_t)m->config.layers;
    size_t BTC = (size_t)m->batch * m->config.seq * m->config.hidden;
    return lies_in(x, a->ln1, L * BTC) || lies_in(x, a->atty, L * BTC)
        || lies_in(x, a->ln2, L * BTC)
        || lies_in(x, a->fch_gelu, 4 * L * BTC);
}
void model_round(const Model *m, real *x, size_t n)
{
    NumberFormat f = m->format;
    if (f == FORMAT_FP32)
        return;                      /* fp32: this chapter's reference */
    for (size_t i = 0; i < n; i++)
        x[i] = round_to_format((float)x[i], f);
    if (m->fp8 != NULL && linear_input(m, x))   /* fp8: then to E4M3 */
        quantize_tensor(x, n, FORMAT_E4M3);
}

void model_round_gradient(const Model *m, real *x, size_t n)
{
    histogram_add(m->histogram, 1, x, n);
    model_round(m, x, n);
    if (m->fp8 != NULL)                         /* fp8: some to E5M2 */
        fp8_output_gradient(m, x, n);
}
static Params mixed_weights(void *context, int unit)
{
    DataParallel *dp = context;
    MixedPrecision *p = dp->mixed;
    size_t at[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(dp->model, unit, at, count);
    real *to = p->unit_weights;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t slice = dp->model->param_size[t]     /* a block's part */
                     / (size_t)dp->model->config.layers;
        for (size_t k = 0; k < count[t]; k++)
            *to++ = weight_at(p, t, at[t] + k, slice);
    }
    return unit_packed(dp->model, p->unit_weights, unit);
}

static Params mixed_gradients(void *context, int unit)
{
    DataParallel *dp = context;
    MixedPrecision *p = dp->mixed;
    memset(p->unit_gradients, 0, sizeof(real) * unit_size(dp->model, unit));
    return unit_packed(dp->model, p->unit_gradients, unit);
}

/* The pass has finished the unit's gradient: add it to what is held. */
static void mixed_gradients_ready(void *context, int unit)
{
    DataParallel *dp = context;
    MixedPrecision *p = dp->mixed;
    size_t at[PARAM_TENSORS], count[PARAM_TENSORS];
    unit_layout(dp->model, unit, at, count);
    histogram_add(dp->model->histogram, 0, p->unit_gradients,
                  unit_size(dp->model, unit));
    if (p->fp8 && unit == 0)          /* the embeddings read the stream's */
        put_back_stream_gradient(dp->model);     /* gradient, in bf16 */
    const real *g = p->unit_gradients;
    for (int t = 0; t < PARAM_TENSORS; t++)
        for (size_t k = 0; k < count[t]; k++, g++) {
            size_t i = at[t] + k;
            if (p->master_gradients != NULL)
                p->master_gradients[i] += *g;
            else
                p->gradients[i] = to_16_bits(
                    from_16_bits(p->gradients[i], p->format) + *g,
                    p->format);
        }
}
/* After the gradient: does it hold a number that is not finite? */
static void mixed_finish_gradients(DataParallel *dp)
{
    MixedPrecision *p = dp->mixed;
    p->overflow = 0;
    for (size_t i = 0; i < dp->model->params_count && !p->overflow; i++)
        p->overflow = !isfinite(gradient_at(p, i));
    p->scale_used = p->scale;
}

/* Skip and halve on an overflow; double after a window of clean steps.
   --no-loss-scaling keeps S as it started and skips nothing. */
static void update_loss_scale(DataParallel *dp)
{
    MixedPrecision *p = dp->mixed;
    if (!dp->loss_scaling)
        return;
    if (p->overflow) {
        p->scale /= 2;
        p->skipped_steps++;
        p->clean = 0;
    } else if (++p->clean == dp->scale_window) {
        p->scale *= 2;
        p->growths++;
        p->clean = 0;
    }
}
double mixed_gradient_squares(DataParallel *dp)
{
    const MixedPrecision *p = dp->mixed;
    double squares = 0.0;
    for (size_t i = 0; i < dp->model->params_count; i++) {
        double g = gradient_at(p, i);
        squares += g * g;
    }
    return squares / (p->scale_used * p->scale_used);
}
static void mixed_step(DataParallel *dp, const AdamW *opt, real lr,
                       int step, real scale)
{
    MixedPrecision *p = dp->mixed;
    Model *m = dp->model;
    p->skipped = p->overflow && dp->loss_scaling;
    update_loss_scale(dp);
    if (p->skipped)
        return;                         /* an inf or NaN: no step at all */
    real unscale = scale / (real)p->scale_used;
    size_t at = 0, piece = p->largest_unit;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        real decay = decays(t) ? opt->weight_decay : 0;
        for (size_t k = 0; k < m->param_size[t]; k += piece) {
            size_t n = m->param_size[t] - k < piece ? m->param_size[t] - k
                                                     : piece;
            size_t i = at + k;
            for (size_t j = 0; j < n; j++)
                p->unit_gradients[j] = gradient_at(p, i + j) * unscale;
            adamw_span(opt, lr, step, decay, p->master + i,
                       p->unit_gradients, p->m + i, p->v + i, n);
            for (size_t j = 0; j < n && !p->fp8; j++)
                p->weights[i + j] = to_16_bits(p->master[i + j], p->format);
        }
        at += m->param_size[t];
    }
    if (p->fp8)                  /* a scale needs the whole matrix first */
        round_all_weights(p, m);
}
static void *counted_calloc(size_t count, size_t size, double *bytes)
{
    *bytes += (double)count * size;
    return calloc(count ? count : 1, size);
}

/* The weights the passes read, from the master weights: in 16 bits, or
   in fp8 each linear layer's matrix in E4M3 with a scale of its own. */
static void round_all_weights(MixedPrecision *p, const Model *m)
{
    int L = m->config.layers;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        const real *w = p->master + p->tensor_at[t];
        size_t n = m->param_size[t], slice = n / (size_t)L;
        if (!p->eight_bits[t])
            for (size_t k = 0; k < n; k++)
                p->weights[p->held_at[t] + k] = to_16_bits(w[k], p->format);
        else
            for (int l = 0; l < L; l++) {    /* (C, 3C) ... (4C, C) */
                const real *from = w + (size_t)l * slice;
                uint8_t *to = p->weights8 + p->held_at[t] + l * slice;
                real amax = 0;
                for (size_t k = 0; k < slice; k++)
                    amax = fmax(amax, fabs(from[k]));
                float scale = format_tensor_scale((float)amax, FORMAT_E4M3);
                for (size_t k = 0; k < slice; k++)
                    to[k] = (uint8_t)format_encode_scaled((float)from[k],
                                                          scale, FORMAT_E4M3);
                p->weight_scales[p->scale_at[t] + (size_t)l] = scale;
            }
    }
}

static int mixed_init(DataParallel *dp)
{
    Model *m = dp->model;
    size_t N = m->params_count;
    MixedPrecision *p = dp->mixed = calloc(1, sizeof *p);
    if (p == NULL)
        return -1;
    fill_fp16_numbers();
    p->format = m->format = dp->format;
    p->fp8 = dp->fp8;
    m->fp8 = dp->fp8 ? p : NULL;
    for (int u = -1; u <= m->config.layers; u++)
        if (unit_size(m, u) > p->largest_unit)
            p->largest_unit = unit_size(m, u);
    double *b = p->bytes;
    size_t N8 = 0, N16 = 0, scales = 0, start = 0;
    int L = m->config.layers;
    for (int t = 0; t < PARAM_TENSORS; start += m->param_size[t++]) {
        const char *name = param_names[t];
        p->eight_bits[t] = p->fp8 && (strcmp(name, "qkv_w") == 0
                                      || strcmp(name, "proj_w") == 0
                                      || strcmp(name, "fc_w") == 0
                                      || strcmp(name, "fcproj_w") == 0);
        p->tensor_at[t] = start;
        p->held_at[t] = p->eight_bits[t] ? N8 : N16;
        p->scale_at[t] = scales;
        *(p->eight_bits[t] ? &N8 : &N16) += m->param_size[t];
        scales += p->eight_bits[t] ? (size_t)L : 0;
    }
    if (p->fp8) {
        size_t BTC = (size_t)m->batch * m->config.seq * m->config.hidden;
        p->weights8 = counted_calloc(N8, sizeof(uint8_t), &b[BYTES_WEIGHTS]);
        p->weight_scales = counted_calloc(scales, sizeof(float),
                                          &b[BYTES_WEIGHTS]);
        p->stream_gradient = counted_calloc(BTC, sizeof(real),
                                            &b[BYTES_BUFFERS]);
    }
    p->weights = counted_calloc(N16, sizeof(uint16_t), &b[BYTES_WEIGHTS]);
    if (dp->fp32_grads)
        p->master_gradients = counted_calloc(N, sizeof(real),
                                             &b[BYTES_MASTER_GRADIENTS]);
    else
        p->gradients = counted_calloc(N, sizeof(uint16_t),
                                      &b[BYTES_GRADIENTS]);
    p->master = counted_calloc(N, sizeof(real), &b[BYTES_MASTER_WEIGHTS]);
    p->m = counted_calloc(N, sizeof(real), &b[BYTES_MOMENTS]);
    p->v = counted_calloc(N, sizeof(real), &b[BYTES_MOMENTS]);
    size_t U = p->largest_unit;
    p->unit_weights = counted_calloc(U, sizeof(real), &b[BYTES_BUFFERS]);
    p->unit_gradients = counted_calloc(U, sizeof(real), &b[BYTES_BUFFERS]);
    if (!p->weights || !(p->gradients || p->master_gradients) || !p->master
        || !p->m || !p->v || !p->unit_weights || !p->unit_gradients
        || (p->fp8 && (!p->weights8 || !p->weight_scales
                       || !p->stream_gradient)))
        return -1;
    tp_init_weights(m, p->master, dp->seed);
    round_all_weights(p, m);
    p->scale = p->scale_used = dp->initial_scale;
    dp->runs = malloc(sizeof(ShardRun) * PARAM_TENSORS);
    if (dp->runs == NULL)
        return -1;
    for (size_t t = 0, at = 0; t < PARAM_TENSORS; at += m->param_size[t++])
        dp->runs[t] = (ShardRun){ (int)t, at, 0, at, m->param_size[t] };
    dp->owned = PARAM_TENSORS;
    dp->weight_shard = p->master;
    dp->m_shard = p->m;
    dp->v_shard = p->v;
    return 0;
}

void mixed_state_loaded(DataParallel *dp)
{
    if (dp->mixed != NULL)
        round_all_weights(dp->mixed, dp->model);
}

static void mixed_begin(DataParallel *dp)
{
    MixedPrecision *p = dp->mixed;
    size_t N = dp->model->params_count;
    if (p->gradients != NULL)
        memset(p->gradients, 0, sizeof(uint16_t) * N);   /* +0 in both */
    else
        memset(p->master_gradients, 0, sizeof(real) * N);
}

/* A whole array of the state: the master weights, the unscaled gradient
   or a moment; and back, the 16-bit weights rounded again from the master
   weights (they are derived, and no checkpoint holds them). */
static void mixed_collect(DataParallel *dp, StateKind kind, real *into)
{
    const MixedPrecision *p = dp->mixed;
    size_t N = dp->model->params_count;
    const real *from = kind == STATE_WEIGHTS ? p->master
                     : kind == STATE_FIRST_MOMENT ? p->m
                     : kind == STATE_SECOND_MOMENT ? p->v : NULL;
    if (from != NULL)
        memcpy(into, from, sizeof(real) * N);
    else
        for (size_t i = 0; i < N; i++)
            into[i] = gradient_at(p, i) / (real)p->scale_used;
}

static void mixed_scatter(DataParallel *dp, StateKind kind,
                          const real *whole)
{
    MixedPrecision *p = dp->mixed;
    size_t N = dp->model->params_count;
    real *to = kind == STATE_WEIGHTS ? p->master
             : kind == STATE_FIRST_MOMENT ? p->m
             : kind == STATE_SECOND_MOMENT ? p->v : NULL;
    if (to != NULL)
        memcpy(to, whole, sizeof(real) * N);
    else if (p->master_gradients != NULL)
        for (size_t i = 0; i < N; i++)
            p->master_gradients[i] = whole[i] * (real)p->scale_used;
    else
        for (size_t i = 0; i < N; i++)
            p->gradients[i] = to_16_bits(whole[i] * (real)p->scale_used,
                                         p->format);
    if (kind == STATE_WEIGHTS)
        round_all_weights(p, dp->model);
}

/* The report's kinds: 16-bit and master weights are weights, and so on. */
static void mixed_account(DataParallel *dp)
{
    const double *b = dp->mixed->bytes;
    dp->held[HELD_WEIGHTS] = b[BYTES_WEIGHTS] + b[BYTES_MASTER_WEIGHTS];
    dp->held[HELD_GRADIENTS] = b[BYTES_GRADIENTS]
                             + b[BYTES_MASTER_GRADIENTS];
    dp->held[HELD_OPTIMIZER] = b[BYTES_MOMENTS];
    dp->held[HELD_BUFFERS] = b[BYTES_BUFFERS];
}

static void mixed_free(DataParallel *dp)
{
    MixedPrecision *p = dp->mixed;
    if (p == NULL)
        return;
    dp->weight_shard = dp->m_shard = dp->v_shard = NULL;
    free(p->weights);
    free(p->gradients);
    free(p->master);
    free(p->master_gradients);
    free(p->m);
    free(p->v);
    free(p->unit_weights);
    free(p->unit_gradients);
    free(p->weights8);
    free(p->weight_scales);
    free(p->stream_gradient);
    dp->model->fp8 = NULL;
    free(p);
    dp->mixed = NULL;
}

const ShardingStrategy mixed_precision_alone = {
    "none", 0, mixed_init, mixed_begin, mixed_weights, mixed_gradients,
    mixed_gradients_ready, mixed_finish_gradients, mixed_step, mixed_collect,
    mixed_scatter, mixed_account, mixed_free };

double data_parallel_loss_scale(const DataParallel *dp)
{
    return dp->mixed != NULL ? dp->mixed->scale : 1;
}

double loss_scale_used(const DataParallel *dp)
{
    return dp->mixed != NULL ? dp->mixed->scale_used : 1;
}

int step_skipped(const DataParallel *dp)
{
    return dp->mixed != NULL && dp->mixed->skipped;
}
/* ||got - want|| / ||want||, in the Euclidean norm. */
static double relative_norm(const real *got, const real *want, size_t n)
{
    double d = 0.0, w = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)got[i] - (double)want[i];
        d += e * e;
        w += (double)want[i] * want[i];
    }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

const char *precision_name(const DataParallel *dp)
{
    return dp->fp8 ? "fp8" : dp->format == FORMAT_BF16 ? "bf16"
         : dp->format == FORMAT_FP16 ? "fp16" : "fp32";
}

/* The relative differences --verify allows for the loss and the
   gradient: 2u a GEMM in format f; fp8 adds its own roundings of the
   blocks' linear layers' inputs, u of E4M3 or E5M2 each. */
static void verify_tolerances(NumberFormat f, int fp8, int L,
                              double *loss, double *grad)
{
    double u4 = format_unit_roundoff(FORMAT_E4M3);
    double u5 = format_unit_roundoff(FORMAT_E5M2);
    *loss = format_gemm_tolerance(6 * L + 1, f);
    *grad = format_gemm_tolerance(12 * L + 3, f);
    if (fp8) {
        *loss += 4 * L * (u4 + u4);                  /* forward: x, W */
        *grad += 4 * L * (u4 + u4)                   /* forward       */
               + 4 * L * (u5 + u4)                   /* dy W^T        */
               + (u4 + u5);                          /* x^T dy        */
    }
}

int precision_verify(Model *m, const Language *lang, Settings *set,
                     Option *options)
{
    int B = set->batch, T = set->config.seq, L = set->config.layers;
    DataParallel *dp = &set->parallel;
    NumberFormat f = dp->format;
    size_t N = m->params_count;
    Batch b;
    Rng rng = training_rng(set->seed);
    Model ref;                          /* fp32, the whole batch at once */
    real *got = malloc(sizeof(real) * N);
    if (batch_alloc(&b, B, T) != 0 || got == NULL
        || model_init(&ref, set->config, B, HOLDS_ALL) != 0)
        abort();
    tp_init_weights(&ref, ref.params_memory, set->seed);
    batch_draw(&b, lang, &rng, B, T);
    double loss_ref = batch_gradient(&ref, &b, B, 1, 1);
    double loss = rank_gradient(m, &b, set);
    collect_state(set, STATE_GRADIENTS, got);
    double dloss = fabs(loss - loss_ref) / fabs(loss_ref);
    double dgrad = relative_norm(got, ref.grads_memory, N);
    double loss_tolerance, grad_tolerance;
    verify_tolerances(f, dp->fp8, L, &loss_tolerance, &grad_tolerance);
    int overflow = dp->mixed->overflow;
    int ok = !overflow && dloss <= loss_tolerance && dgrad <= grad_tolerance;
    model_free(&ref);
    free(got);
    batch_free(&b);
    const char *name = precision_name(dp);
    int p = format_bits(f).mantissa_bits + 1;
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "precision", name);
        report_add(&r, "layers", FIELD_COUNT, L);
        report_add(&r, "unit_roundoff", FIELD_SCI, format_unit_roundoff(f));
        report_add(&r, "loss_scale", FIELD_REAL, loss_scale_used(dp));
        report_add(&r, "relative_dloss", FIELD_SCI, dloss);
        report_add(&r, "relative_dgrad_norm", FIELD_SCI, dgrad);
        report_add(&r, "loss_tolerance", FIELD_SCI, loss_tolerance);
        report_add(&r, "grad_tolerance", FIELD_SCI, grad_tolerance);
        report_add(&r, "loss_ratio", FIELD_REAL, dloss / loss_tolerance);
        report_add(&r, "grad_ratio", FIELD_REAL, dgrad / grad_tolerance);
        report_add(&r, "overflow", FIELD_COUNT, overflow);
        report_text(&r, "result", ok ? "OK" : "FAIL");
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "verify: %s against fp32 on one batch of %d, "
                "L = %d, u = 2^-%d, loss scale %g\n", name, B, L, p,
                loss_scale_used(dp));
        if (overflow)
            fprintf(out.file, "verify: the %s gradient overflowed\n", name);
        if (dp->fp8)
            fprintf(out.file, "verify: linear layers' GEMMs: u4 = 2^-4 "
                    "(E4M3: x, W), u5 = 2^-3 (E5M2: dy)\n");
        fprintf(out.file, "verify: |dloss|/loss = %.3g (tolerance "
                "(6L + 1)·2u%s = %.3g, %.3g of it)\n", dloss,
                dp->fp8 ? " + 8L·u4\n       " : "", loss_tolerance,
                dloss / loss_tolerance);
        fprintf(out.file, "verify: |dgrad|/|grad| = %.3g (tolerance "
                "(12L + 3)·2u%s = %.3g, %.3g of it): %s\n", dgrad,
                dp->fp8 ? "\n        + (12L + 1)·u4 + (4L + 1)·u5" : "",
                grad_tolerance, dgrad / grad_tolerance, ok ? "OK" : "FAIL");
    }
    if (output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
void precision_report(Report *r, const Settings *set)
{
    const DataParallel *dp = &set->parallel;
    const MixedPrecision *p = dp->mixed;
    double b[BYTE_KINDS] = { dp->held[HELD_WEIGHTS],
                             dp->held[HELD_GRADIENTS], 0, 0,
                             dp->held[HELD_OPTIMIZER],
                             dp->held[HELD_BUFFERS] };
    if (p != NULL)
        memcpy(b, p->bytes, sizeof b);
    static const char *const keys[BYTE_KINDS] = {
        "bytes_held.weights", "bytes_held.gradients",
        "bytes_held.master_weights", "bytes_held.master_gradients",
        "bytes_held.moments", "bytes_held.buffers"
    };
    report_text(r, "precision", precision_name(dp));
    for (int k = 0; k < BYTE_KINDS; k++)
        report_add(r, keys[k], FIELD_BYTES, b[k]);
    report_add(r, "loss_scale.initial", FIELD_REAL,
               p != NULL ? dp->initial_scale : 1);
    report_add(r, "loss_scale.final", FIELD_REAL,
               p != NULL ? p->scale : 1);
    report_add(r, "loss_scale.skipped_steps", FIELD_COUNT,
               p != NULL ? p->skipped_steps : 0);
    report_add(r, "loss_scale.growths", FIELD_COUNT,
               p != NULL ? p->growths : 0);
}

/* The training state's bytes, weights (16-bit and master), gradients and
   moments, into state[3] when the run holds 16-bit state: the report's
   memory, and its bytes_per_param, are then what is held. */
void mixed_state_bytes(const DataParallel *dp, double state[3])
{
    const MixedPrecision *p = dp->mixed;
    if (p == NULL)
        return;
    state[0] = p->bytes[BYTES_WEIGHTS] + p->bytes[BYTES_MASTER_WEIGHTS];
    state[1] = p->bytes[BYTES_GRADIENTS] + p->bytes[BYTES_MASTER_GRADIENTS];
    state[2] = p->bytes[BYTES_MOMENTS];
}

/* Nothing in fp32, whose report stays Chapter 6's. */
void print_precision(FILE *out, const Report *r)
{
    const Field *name = NULL;
    double value[BYTE_KINDS + 5] = { 0 };
    static const char *const keys[BYTE_KINDS + 5] = {
        "bytes_held.weights", "bytes_held.gradients",
        "bytes_held.master_weights", "bytes_held.master_gradients",
        "bytes_held.moments", "bytes_held.buffers", "bytes_per_param",
        "loss_scale.initial", "loss_scale.final", "loss_scale.skipped_steps",
        "loss_scale.growths"
    };
    for (int i = 0; i < r->count; i++) {
        if (strcmp(r->fields[i].key, "precision") == 0)
            name = &r->fields[i];
        for (int k = 0; k < BYTE_KINDS + 5; k++)
            if (strcmp(r->fields[i].key, keys[k]) == 0)
                value[k] = r->fields[i].value;
    }
    if (name == NULL || strcmp(name->text, "fp32") == 0)
        return;
    if (strcmp(name->text, "fp8") == 0)
        fprintf(out, "precision      = fp8: the linear layers' weights in "
                "E4M3, the others and\n                 the gradients in "
                "bf16, fp32 master weights and moments\n");
    else
        fprintf(out, "precision      = %s: weights and gradients in %s, "
                "fp32 master weights and moments\n", name->text,
                value[BYTES_MASTER_GRADIENTS] > 0 ? "16 and 32 bits"
                                                  : "16 bits");
    fprintf(out, "  bytes held   = %s a parameter: weights %s, gradients "
            "%s,\n                 master weights %s, moments %s "
            "(buffers %s)\n", sig(value[BYTE_KINDS], 3).s,
            bytes_auto(value[BYTES_WEIGHTS]).s,
            bytes_auto(value[BYTES_GRADIENTS]
                       + value[BYTES_MASTER_GRADIENTS]).s,
            bytes_auto(value[BYTES_MASTER_WEIGHTS]).s,
            bytes_auto(value[BYTES_MOMENTS]).s,
            bytes_auto(value[BYTES_BUFFERS]).s);
    fprintf(out, "  loss scale   = %s at the start, %s at the end; %s "
            "skipped, %s %s\n", grouped(value[BYTE_KINDS + 1]).s,
            grouped(value[BYTE_KINDS + 2]).s,
            counted(value[BYTE_KINDS + 3], "step", "steps").s,
            grouped(value[BYTE_KINDS + 4]).s,
            plural(value[BYTE_KINDS + 4], "growth", "growths"));
}
