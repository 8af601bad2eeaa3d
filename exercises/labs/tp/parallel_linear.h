/* exercises/labs/tp/parallel_linear.h: the contract of the lab of chapter 9,
   the column- and row-parallel linear layers of tensor parallelism. The
   chapter's code/minigpt/parallel_linear.c keeps the same four functions.

   Shapes are those of one rank. A weight is (in, out), as the reference's
   matmul_forward takes it; t is the size of the communicator tp, and a
   column-parallel layer holds OCl = OC/t of the outputs, a row-parallel one
   Cl = C/t of the inputs. flops: add the FLOPs this rank performs, two per
   multiply-add, as matmul_forward and matmul_backward count them. */
#ifndef PARALLEL_LINEAR_H
#define PARALLEL_LINEAR_H

#include <mpi.h>

#include "minigpt.h"

/* out (N, OCl) = in (N, C) · w (C, OCl) + bias (OCl); f: identity */
void column_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl,
    MPI_Comm tp, double *flops);
/* din (N, C) = dout (N, OCl) · wᵀ, all-reduced over tp (f backward);
   dw (C, OCl) and dbias (OCl) accumulate (+=) this rank's part. */
void column_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl, MPI_Comm tp, double *flops);
/* out (N, OC) = sum over tp of in (N, Cl) · w (Cl, OC), + bias (OC)
   once; g: all-reduce forward */
void row_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int Cl, int OC,
    MPI_Comm tp, double *flops);
/* din (N, Cl) = dout (N, OC) · wᵀ (g backward: identity); dw (Cl, OC),
   dbias (OC) accumulate. */
void row_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int Cl, int OC, MPI_Comm tp, double *flops);

#endif
