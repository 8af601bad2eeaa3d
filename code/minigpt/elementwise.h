/* Tangled from chapters/06-reference.nw; edit the chapter, not this file. */
#ifndef ELEMENTWISE_H
#define ELEMENTWISE_H
/* Include after the type real is defined (minigpt.h, or cuda/gpu.h). */
#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#include <tgmath.h>
#define HOST_DEVICE
#endif

/* 1 / the standard deviation of a row of C numbers whose squared
   deviations from the mean sum to var_sum. */
static inline HOST_DEVICE real layernorm_rstd(real var_sum, int C)
{
    return 1.0f / sqrt(var_sum / (real)C + 1e-5f);
}

static inline HOST_DEVICE real layernorm_xhat(real x, real mean, real rstd)
{
    return (x - mean) * rstd;
}

static inline HOST_DEVICE real layernorm_normalise(real x, real mean,
                                                   real rstd, real w, real b)
{
    return (x - mean) * rstd * w + b;
}

/* g_mean and gx_mean: the row's means of d w and of d w xhat. */
static inline HOST_DEVICE real layernorm_input_gradient(
    real d, real w, real xhat, real rstd, real g_mean, real gx_mean)
{
    return rstd * (d * w - g_mean - xhat * gx_mean);
}
static inline HOST_DEVICE real softmax_exp(real score, real max)
{
    return exp(score - max);
}

static inline HOST_DEVICE real softmax_gradient(real p, real g, real dot,
                                                real scale)
{
    return p * (g - dot) * scale;
}
#define GELU_K ((real)0.7978845608028654)                /* sqrt(2 / pi) */

static inline HOST_DEVICE real gelu(real x)
{
    real u = GELU_K * (x + (real)0.044715 * x * x * x);
    return x / (1 + exp(-2 * u));
}

/* The gradient of GELU's input from its output's, dout. */
static inline HOST_DEVICE real gelu_gradient(real x, real dout)
{
    real u = GELU_K * (x + (real)0.044715 * x * x * x);
    real s = 1 / (1 + exp(-2 * u));                     /* sigma(2u) */
    real du = GELU_K * (1 + 3 * (real)0.044715 * x * x);
    return (s + x * s * (1 - s) * 2 * du) * dout;
}
/* p - 1 at the target, p elsewhere, times the position's share. */
static inline HOST_DEVICE real crossentropy_gradient(real p, int is_target,
                                                     real per_position)
{
    real indicator = is_target ? 1.0f : 0.0f;
    return (p - indicator) * per_position;
}
static inline HOST_DEVICE void adamw_element(real *w, real g, real *m,
                                             real *v, real beta1, real beta2,
                                             real eps, real c1, real c2,
                                             real lr, real decay)
{
    real mi = *m = beta1 * *m + (1.0f - beta1) * g;
    real vi = *v = beta2 * *v + (1.0f - beta2) * g * g;
    real update = (mi / c1) / (sqrt(vi / c2) + eps);
    *w -= lr * (update + decay * *w);
}
#endif
