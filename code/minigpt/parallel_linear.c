/* Tangled from chapters/09-tensor-parallel.nw; edit the chapter, not this file. */
#include "minigpt.h"

/* out (N, OCl) = in (N, C) · w (C, OCl) + bias (OCl); f: identity */
void column_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl,
    MPI_Comm tp, double *flops)
{
    /* With sequence parallelism f gathers in's rows in place: in is the
       model's own activations, writable, though this layer only reads. */
    f_forward((real *)in, (size_t)N * C, tp);
    matmul_forward(ws, out, in, w, bias, N, C, OCl, flops);
}

/* din (N, C) = dout (N, OCl) · w^T, all-reduced over tp (f backward);
   dw (C, OCl) and dbias (OCl) accumulate (+=) this rank's part. */
void column_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl, MPI_Comm tp, double *flops)
{
    matmul_backward(ws, din, dw, dbias, dout, in, w, N, C, OCl, flops);
    if (din != NULL)                  /* NULL: the weights' half alone */
        f_backward(din, (size_t)N * C, tp);
}

/* out (N, OC) = sum over tp of in (N, Cl) · w (Cl, OC), + bias (OC)
   once; g: all-reduce forward */
void row_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int Cl, int OC,
    MPI_Comm tp, double *flops)
{
    matmul_forward(ws, out, in, w, NULL, N, Cl, OC, flops);
    g_forward(out, (size_t)N * OC, tp);
    if (bias != NULL)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                out[(size_t)n * OC + o] += bias[o];
}

/* din (N, Cl) = dout (N, OC) · w^T (g backward: identity); dw (Cl, OC),
   dbias (OC) accumulate. */
void row_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int Cl, int OC, MPI_Comm tp, double *flops)
{
    if (din != NULL)                /* NULL: dout was gathered already */
        g_backward((real *)dout, (size_t)N * OC, tp);  /* the same, for dout */
    matmul_backward(ws, din, dw, dbias, dout, in, w, N, Cl, OC, flops);
}
