/* Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file. */
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"

enum {
    MR = 6,      /* rows of the register tile            */
    NR = 32,     /* columns of the register tile         */
    KC = 256,    /* depth of a packed block              */
    MC = 96,     /* rows of a packed block of A          */
    NC = 2048    /* columns of a packed block of B       */
};

void gemm_workspace_init(GemmWorkspace *w)
{
    w->a = malloc(sizeof(real) * MC * KC);
    w->b = malloc(sizeof(real) * KC * NC);
}

void gemm_workspace_free(GemmWorkspace *w)
{
    free(w->a);
    free(w->b);
}

static void pack_a(int mc, int kc, const real *A, int lda, int trans,
                   real *panel)
{
    for (int i0 = 0; i0 < mc; i0 += MR)
        for (int k = 0; k < kc; k++)
            for (int i = 0; i < MR; i++) {
                int r = i0 + i;
                *panel++ = r >= mc ? 0.0f
                         : trans ? A[(size_t)k * lda + r]
                                 : A[(size_t)r * lda + k];
            }
}
static void pack_b(int kc, int nc, const real *B, int ldb, int trans,
                   real *panel)
{
    for (int j0 = 0; j0 < nc; j0 += NR)
        for (int k = 0; k < kc; k++)
            for (int j = 0; j < NR; j++) {
                int c = j0 + j;
                *panel++ = c >= nc ? 0.0f
                         : trans ? B[(size_t)c * ldb + k]
                                 : B[(size_t)k * ldb + c];
            }
}
static void micro_kernel(int kc, const real *a, const real *b,
                         real *C, int ldc, int rows, int cols)
{
    real tile[MR][NR] = {{0}};                /* lives in registers */
    for (int k = 0; k < kc; k++)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                tile[i][j] += a[k * MR + i] * b[k * NR + j];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            C[(size_t)i * ldc + j] += tile[i][j];
}
static int min_int(int a, int b) { return a < b ? a : b; }

void gemm(GemmWorkspace *w, int M, int N, int K,
          const real *A, int lda, int trans_a,
          const real *B, int ldb, int trans_b,
          real *C, int ldc, int accumulate)
{
    if (!accumulate)
        for (int i = 0; i < M; i++)
            memset(C + (size_t)i * ldc, 0, sizeof(real) * (size_t)N);
    for (int jc = 0; jc < N; jc += NC) {
        int nc = min_int(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            int kc = min_int(KC, K - pc);
            pack_b(kc, nc, trans_b ? B + (size_t)jc * ldb + pc
                                   : B + (size_t)pc * ldb + jc,
                   ldb, trans_b, w->b);
            for (int ic = 0; ic < M; ic += MC) {
                int mc = min_int(MC, M - ic);
                pack_a(mc, kc, trans_a ? A + (size_t)pc * lda + ic
                                       : A + (size_t)ic * lda + pc,
                       lda, trans_a, w->a);
                for (int jr = 0; jr < nc; jr += NR)
                    for (int ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, w->a + (size_t)ir * kc,
                                     w->b + (size_t)jr * kc,
                                     C + (size_t)(ic + ir) * ldc + jc + jr,
                                     ldc, min_int(MR, mc - ir),
                                     min_int(NR, nc - jr));
            }
        }
    }
}
