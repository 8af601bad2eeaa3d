/* Tangled from chapters/06-reference.nw; edit the chapter, not this file. */
#include <tgmath.h>
#include <string.h>

#include "minigpt.h"
#include "elementwise.h"

void encoder_forward(real *out, const int *tokens, const real *wte,
                     const real *wpe, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            real *o = out + ((size_t)b * T + t) * C;          /* (C) */
            const real *e = wte + (size_t)tokens[b * T + t] * C;
            const real *p = wpe + (size_t)t * C;
            for (int i = 0; i < C; i++)
                o[i] = e[i] + p[i];
        }
}

void encoder_backward(real *dwte, real *dwpe, const real *dout,
                      const int *tokens, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const real *d = dout + ((size_t)b * T + t) * C;   /* (C) */
            real *de = dwte + (size_t)tokens[b * T + t] * C;
            real *dp = dwpe + (size_t)t * C;
            for (int i = 0; i < C; i++) {
                de[i] += d[i];
                dp[i] += d[i];
            }
        }
}
void layernorm_forward(real *out, real *mean, real *rstd, const real *in,
                       const real *w, const real *b, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const real *x = in + (size_t)n * C;                   /* (C) */
        real *y = out + (size_t)n * C;                        /* (C) */
        real mu = 0.0f, var = 0.0f;
        for (int i = 0; i < C; i++)
            mu += x[i];
        mu /= (real)C;
        for (int i = 0; i < C; i++)
            var += (x[i] - mu) * (x[i] - mu);
        real r = layernorm_rstd(var, C);
        for (int i = 0; i < C; i++)
            y[i] = layernorm_normalise(x[i], mu, r, w[i], b[i]);
        mean[n] = mu;
        rstd[n] = r;
    }
}

/* din is added to, so the gradient joins the residual stream's. */
void layernorm_backward(real *din, real *dw, real *db, const real *dout,
                        const real *in, const real *w, const real *mean,
                        const real *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const real *x = in + (size_t)n * C;                   /* (C) */
        const real *d = dout + (size_t)n * C;                 /* (C) */
        real *dx = din + (size_t)n * C;                       /* (C) */
        real mu = mean[n], r = rstd[n];
        real g_mean = 0.0f, gx_mean = 0.0f;
        for (int i = 0; i < C; i++) {
            real xhat = layernorm_xhat(x[i], mu, r);
            real g = d[i] * w[i];
            g_mean += g;
            gx_mean += g * xhat;
            db[i] += d[i];
            dw[i] += d[i] * xhat;
        }
        g_mean /= (real)C;
        gx_mean /= (real)C;
        for (int i = 0; i < C; i++)
            dx[i] += layernorm_input_gradient(d[i], w[i], layernorm_xhat(
                                                  x[i], mu, r), r, g_mean,
                                              gx_mean);
    }
}
void matmul_forward(GemmWorkspace *ws, real *out, const real *in,
                    const real *w, const real *bias, int N, int C, int OC,
                    double *flops)
{
    gemm(ws, N, OC, C, in, C, 0, w, OC, 0, out, OC, 0);   /* (N, OC) */
    *flops += 2.0 * N * C * OC;
    if (bias != NULL)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                out[(size_t)n * OC + o] += bias[o];
}

/* din (N, C) is written; dw (C, OC) and dbias (OC) are added to. A NULL
   din or dw skips that half: the input's or the weights' gradient. */
void matmul_backward(GemmWorkspace *ws, real *din, real *dw, real *dbias,
                     const real *dout, const real *in, const real *w,
                     int N, int C, int OC, double *flops)
{
    if (din != NULL) {
        gemm(ws, N, C, OC, dout, OC, 0, w, OC, 1, din, C, 0); /* dout W^T */
        *flops += 2.0 * N * C * OC;
    }
    if (dw == NULL)
        return;
    gemm(ws, C, OC, N, in, C, 1, dout, OC, 0, dw, OC, 1);  /* x^T dout */
    *flops += 2.0 * N * C * OC;
    if (dbias != NULL)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                dbias[o] += dout[(size_t)n * OC + o];
}
void attention_forward(real *out, real *att, const real *qkv,
                       int B, int T, int C, int H, double *flops)
{
    int hs = C / H;                                /* head size */
    real scale = 1.0f / sqrt((real)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
                real *row = att + (((size_t)b * H + h) * T + t) * T; /* (T) */
                real *y = out + ((size_t)b * T + t) * C + h * hs;    /* (hs) */
                real max = -INFINITY;
                for (int t2 = 0; t2 <= t; t2++) {
                    const real *k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                    real s = 0.0f;
                    for (int i = 0; i < hs; i++)
                        s += q[i] * k[i];
                    row[t2] = s * scale;
                    if (row[t2] > max)
                        max = row[t2];
                }
                real sum = 0.0f;
                for (int t2 = 0; t2 <= t; t2++) {
                    row[t2] = softmax_exp(row[t2], max);
                    sum += row[t2];
                }
                for (int t2 = 0; t2 < T; t2++)
                    row[t2] = t2 <= t ? row[t2] / sum : 0.0f;
                for (int i = 0; i < hs; i++)
                    y[i] = 0.0f;
                for (int t2 = 0; t2 <= t; t2++) {
                    const real *v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                    for (int i = 0; i < hs; i++)
                        y[i] += row[t2] * v[i];
                }
                *flops += 4.0 * (t + 1) * hs;
            }
}
#ifndef LAB_ATTENTION_BACKWARD      /* the lab supplies its own */
/* dqkv (B, T, 3C) is written. */
void attention_backward(real *dqkv, real *datt_row, const real *dout,
                        const real *qkv, const real *att,
                        int B, int T, int C, int H, double *flops)
{
    int hs = C / H;
    real scale = 1.0f / sqrt((real)hs);
    memset(dqkv, 0, sizeof(real) * (size_t)B * T * 3 * C);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                size_t at = ((size_t)b * T + t) * 3 * C + h * hs;
                const real *q = qkv + at;
                real *dq = dqkv + at;
                const real *row = att + (((size_t)b * H + h) * T + t) * T;
                const real *dy = dout + ((size_t)b * T + t) * C + h * hs;
                real dot = 0.0f;                         /* p · g over the row */
                for (int t2 = 0; t2 <= t; t2++) {
                    size_t v_at = ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                    real g = 0.0f;
                    for (int i = 0; i < hs; i++) {
                        g += dy[i] * qkv[v_at + i];
                        dqkv[v_at + i] += row[t2] * dy[i];
                    }
                    datt_row[t2] = g;
                    dot += row[t2] * g;
                }
                for (int t2 = 0; t2 <= t; t2++) {
                    size_t k_at = ((size_t)b * T + t2) * 3 * C + C + h * hs;
                    real dscore = softmax_gradient(row[t2], datt_row[t2], dot, scale);
                    for (int i = 0; i < hs; i++) {
                        dq[i] += dscore * qkv[k_at + i];
                        dqkv[k_at + i] += dscore * q[i];
                    }
                }
                *flops += 8.0 * (t + 1) * hs;
            }
}
#endif
void gelu_forward(real *out, const real *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = gelu(in[i]);
}

/* din is written. */
void gelu_backward(real *din, const real *in, const real *dout, size_t n)
{
    for (size_t i = 0; i < n; i++)
        din[i] = gelu_gradient(in[i], dout[i]);
}
void residual_forward(real *out, const real *a, const real *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}
double crossentropy_forward(real *probs, real *losses, const int *targets,
                            int N, int V)
{
    double sum = 0.0;
    for (int n = 0; n < N; n++) {
        real *p = probs + (size_t)n * V;                      /* (V) */
        real max = p[0], z = 0.0f;
        for (int v = 1; v < V; v++)
            if (p[v] > max)
                max = p[v];
        for (int v = 0; v < V; v++) {
            p[v] = softmax_exp(p[v], max);
            z += p[v];
        }
        for (int v = 0; v < V; v++)
            p[v] /= z;
        losses[n] = -log(p[targets[n]]);
        sum += losses[n];
    }
    return sum / N;
}

/* dlogits (N, V) is written. */
void crossentropy_backward(real *dlogits, const real *probs,
                           const int *targets, int N, int V, real scale)
{
    real per_position = scale / (real)N;
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++)
            dlogits[(size_t)n * V + v] = crossentropy_gradient(
                probs[(size_t)n * V + v], v == targets[n], per_position);
}
