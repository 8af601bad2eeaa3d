/* solutions/labs/tp/parallel_linear.c: a solution of the lab of chapter 9,
   the column- and row-parallel linear layers. Each is the reference's
   matmul_forward or matmul_backward on this rank's slice of the weight, and
   at most one all-reduce over tp:

     column-parallel  forward   f = identity    backward  f = all-reduce din
     row-parallel     forward   g = all-reduce  backward  g = identity

   Grade it with  make lab LAB=tp WORK=solutions/labs/tp  */
#include <stddef.h>

#include "parallel_linear.h"

/* MPI's name for the type of real. */
static MPI_Datatype mpi_real(void)
{
    return sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
}

/* x (count) becomes the sum of every rank's x over tp, in place. */
static void all_reduce(real *x, size_t count, MPI_Comm tp)
{
    MPI_Allreduce(MPI_IN_PLACE, x, (int)count, mpi_real(), MPI_SUM, tp);
}

void column_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl,
    MPI_Comm tp, double *flops)
{
    (void)tp;                   /* f forward: the input is already whole */
    matmul_forward(ws, out, in, w, bias, N, C, OCl, flops); /* (N, OCl) */
}

void column_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl, MPI_Comm tp, double *flops)
{
    /* This rank's outputs' share of din (N, C); dw, dbias are its own. */
    matmul_backward(ws, din, dw, dbias, dout, in, w, N, C, OCl, flops);
    all_reduce(din, (size_t)N * C, tp);                  /* f backward */
}

void row_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int Cl, int OC,
    MPI_Comm tp, double *flops)
{
    /* This rank's inputs' share of out (N, OC), without the bias ... */
    matmul_forward(ws, out, in, w, NULL, N, Cl, OC, flops);
    all_reduce(out, (size_t)N * OC, tp);                 /* g forward */
    /* ... which is added once, to the sum. */
    if (bias != NULL)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                out[(size_t)n * OC + o] += bias[o];
}

void row_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int Cl, int OC, MPI_Comm tp, double *flops)
{
    (void)tp;                /* g backward: dout is whole on every rank */
    /* din (N, Cl) is this rank's slice whole: its inputs feed only its
       rows of w. dbias (OC) is the replicated bias's whole gradient. */
    matmul_backward(ws, din, dw, dbias, dout, in, w, N, Cl, OC, flops);
}
