/* solutions/labs/attention/attention_backward.c: a worked solution to the
 * lab of chapter 6, the backward pass of causal multi-head attention.
 *
 *     make lab LAB=attention WORK=solutions/labs/attention
 *
 * For one batch row, one head and one query position t, the forward pass was
 *
 *     s_j = c (q . k_j),  p = softmax(s),  y = sum_j p_j v_j,   j = 0 .. t,
 *
 * with c = 1/sqrt(hs). Given g = dL/dy, the chain rule gives, in order:
 *
 *     dL/dv_j += p_j g                 (y is linear in each v_j)
 *     dL/dp_j  = g . v_j               (and in each p_j)
 *     dL/ds_j  = p_j (dL/dp_j - sum_i p_i dL/dp_i)      (softmax Jacobian,
 *                                       diag(p) - p p^T, applied to dL/dp)
 *     dL/dq   += c sum_j dL/ds_j k_j   (s_j is a dot product of q and k_j)
 *     dL/dk_j += c dL/ds_j q
 *
 * Keys and values collect a term from every later query, so dqkv is cleared
 * first and only ever added to.
 */
#include <tgmath.h>
#include <string.h>

#include "minigpt.h"

/* Where head h's slice of part `part` (0 query, 1 key, 2 value) of position
   t of batch row b begins, in a (B, T, 3C) tensor. */
static size_t slice(int b, int t, int part, int h, int T, int C, int hs)
{
    return ((size_t)b * T + t) * 3 * C + (size_t)part * C + (size_t)h * hs;
}

void attention_backward(real *dqkv, real *datt_row, const real *dout,
                        const real *qkv, const real *att,
                        int B, int T, int C, int H, double *flops)
{
    int hs = C / H;
    real c = 1 / sqrt((real)hs);
    memset(dqkv, 0, sizeof(real) * (size_t)B * T * 3 * C);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const real *p = att + (((size_t)b * H + h) * T + t) * T;
                const real *g = dout + ((size_t)b * T + t) * C
                              + (size_t)h * hs;                  /* (hs) */
                const real *q = qkv + slice(b, t, 0, h, T, C, hs);
                real *dq = dqkv + slice(b, t, 0, h, T, C, hs);
                real *dp = datt_row;                             /* (t+1) */

                /* The values: dL/dp_j and the values' own gradients. */
                for (int j = 0; j <= t; j++) {
                    const real *v = qkv + slice(b, j, 2, h, T, C, hs);
                    real *dv = dqkv + slice(b, j, 2, h, T, C, hs);
                    real sum = 0;
                    for (int i = 0; i < hs; i++) {
                        sum += g[i] * v[i];
                        dv[i] += p[j] * g[i];
                    }
                    dp[j] = sum;
                }

                /* The softmax: the row's p-weighted mean of dL/dp is what
                   the normalisation takes away; dp becomes dL/ds, scaled
                   by c ready for the dot products. */
                real mean = 0;
                for (int j = 0; j <= t; j++)
                    mean += p[j] * dp[j];
                for (int j = 0; j <= t; j++)
                    dp[j] = c * p[j] * (dp[j] - mean);

                /* The scores: each is q . k_j, so q gathers the keys and
                   each key gathers q, both weighted by dL/ds_j. */
                for (int j = 0; j <= t; j++) {
                    const real *k = qkv + slice(b, j, 1, h, T, C, hs);
                    real *dk = dqkv + slice(b, j, 1, h, T, C, hs);
                    for (int i = 0; i < hs; i++) {
                        dq[i] += dp[j] * k[i];
                        dk[i] += dp[j] * q[i];
                    }
                }
                *flops += 8.0 * (t + 1) * hs;
            }
}
