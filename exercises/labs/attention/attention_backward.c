/* exercises/labs/attention/attention_backward.c: the backward pass of
 * causal multi-head attention. See exercises/labs/attention/README.md for
 * the task and chapter 6 (section "Causal multi-head attention") for the
 * forward pass.
 *
 * Grade your work with
 *
 *     make lab LAB=attention
 *
 * which builds the double-precision trainer with this function in place of
 * the chapter's and compares every parameter's gradient with central finite
 * differences. As handed out, this file compiles and runs but computes no
 * gradient at all, so the autograder reports FAIL.
 */
#include <tgmath.h>
#include <string.h>

#include "minigpt.h"

/* The contract, the same as the chapter's:
 *
 *   dqkv      (B, T, 3C)  written: the gradient of the loss with respect to
 *                         qkv, queries in [0, C), keys in [C, 2C), values in
 *                         [2C, 3C) of each position; head h owns the slice of
 *                         hs = C / H numbers at offset h * hs in each third
 *   datt_row  (T)         scratch space for one row of gradients; use it
 *                         or not
 *   dout      (B, T, C)   the gradient of the loss with respect to the
 *                         attention output (before the output projection)
 *   qkv       (B, T, 3C)  the forward pass's queries, keys and values
 *   att       (B, H, T, T) the forward pass's softmax probabilities; row t
 *                         holds p[t][0..t] and zeros after t
 *   flops                 add the multiply-add FLOPs you perform (two each)
 *
 * Forward, for one batch row b, head h and position t (see the chapter):
 *
 *   s[t2] = scale * (q_t . k_t2)        for t2 = 0 .. t, scale = 1/sqrt(hs)
 *   p[t2] = softmax(s)[t2]
 *   y_t   = sum over t2 of p[t2] * v_t2
 */
void attention_backward(real *dqkv, real *datt_row, const real *dout,
                        const real *qkv, const real *att,
                        int B, int T, int C, int H, double *flops)
{
    int hs = C / H;                                 /* head size */
    real scale = 1 / sqrt((real)hs);
    /* Keys and values receive contributions from many positions t, so the
       whole gradient starts at zero and is accumulated into. */
    memset(dqkv, 0, sizeof(real) * (size_t)B * T * 3 * C);

    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                /* Position t's query and its gradient, head h's slice. */
                size_t at = ((size_t)b * T + t) * 3 * C + (size_t)h * hs;
                const real *q = qkv + at;                         /* (hs) */
                real *dq = dqkv + at;                             /* (hs) */
                /* Row t of head h's probabilities, and the output's
                   gradient at position t. */
                const real *p = att + (((size_t)b * H + h) * T + t) * T;
                const real *dy = dout + ((size_t)b * T + t) * C
                               + (size_t)h * hs;                 /* (hs) */

                /* Step 1. For every position t2 = 0 .. t that t attends
                   to, with v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C
                   + h * hs and dv the same offset in dqkv:
                     TODO: the gradient of p[t2], which is dy . v; keep it
                           in datt_row[t2];
                     TODO: add p[t2] * dy to dv. */

                /* Step 2. Through the softmax to the scores:
                     TODO: ds[t2] = p[t2] * (datt_row[t2] - sum over t3 of
                           p[t3] * datt_row[t3]). */

                /* Step 3. Through the scaled dot products, for every
                   t2 = 0 .. t, with k at offset C instead of 2 * C:
                     TODO: add scale * ds[t2] * k to dq;
                     TODO: add scale * ds[t2] * q to dk. */

                /* Remove these casts as you use each name. */
                (void)scale; (void)q; (void)dq; (void)p; (void)dy;
                (void)datt_row;

                /* Steps 1 and 3 each do two multiply-adds per t2 and per
                   element of the head: 8 FLOPs in all. */
                *flops += 8.0 * (t + 1) * hs;
            }
}
