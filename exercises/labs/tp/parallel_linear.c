/* exercises/labs/tp/parallel_linear.c: the lab of chapter 9, the column- and
   row-parallel linear layers of tensor parallelism, forward and backward.
   parallel_linear.h in this folder states the contract; README.md sets out
   the task. The reference's matmul_forward and matmul_backward (chapter 6,
   declared in minigpt.h) do every multiply; yours is to call them on this
   rank's slice and to put the all-reduces where they belong (the TODOs).

   Grade your copy (labs/tp/) from the repository root:

       make lab LAB=tp

   which splits a reference layer's weights over t = 2 and t = 4 ranks, runs
   these four functions, and compares every output and gradient with the
   unsplit layer's. As handed out the file compiles, writes nothing, and the
   autograder fails every check.

   Reminders of the reference's conventions:
     matmul_forward (ws, out, in, w, bias, N, C, OC, flops)
         out (N, OC) = in (N, C) · w (C, OC) + bias (OC), out overwritten;
         bias may be NULL.
     matmul_backward(ws, din, dw, dbias, dout, in, w, N, C, OC, flops)
         din (N, C) overwritten; dw (C, OC) and dbias (OC) added to;
         dbias may be NULL. */
#include <stddef.h>

#include "parallel_linear.h"

/* MPI's name for the type of real (float here, double in minigpt-fp64). */
static inline MPI_Datatype mpi_real(void)
{
    return sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
}

/* Rank r of t holds the columns r·OCl .. (r+1)·OCl − 1 of the whole weight
   (C, OC) and of the bias; `in` is the whole input, the same on every
   rank. */
void column_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl,
    MPI_Comm tp, double *flops)
{
    /* TODO 1: out (N, OCl), this rank's columns of the output. Which
       collective does f need in the forward pass? */
    (void)ws; (void)out; (void)in; (void)w; (void)bias;  /* delete when */
    (void)N; (void)C; (void)OCl; (void)tp; (void)flops;  /* done        */
}

/* dout (N, OCl) is the gradient of this rank's columns of the output. */
void column_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl, MPI_Comm tp, double *flops)
{
    /* TODO 2: dw (C, OCl) and dbias (OCl) of this rank's columns, added
       to what they hold. */

    /* TODO 3: din (N, C). Every rank's outputs depend on every input, so
       what this rank can compute is only its columns' share of din. What
       must f do in the backward pass so that every rank has all of it? */
    (void)ws; (void)din; (void)dw; (void)dbias; (void)dout; /* delete */
    (void)in; (void)w; (void)N; (void)C; (void)OCl;         /* when   */
    (void)tp; (void)flops;                                  /* done   */
}

/* Rank r of t holds the rows r·Cl .. (r+1)·Cl − 1 of the whole weight
   (C, OC), and `in` (N, Cl) holds the same columns of the whole input (the
   output of a column-parallel layer before it). The bias (OC) is whole, the
   same on every rank. */
void row_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int Cl, int OC,
    MPI_Comm tp, double *flops)
{
    /* TODO 4: this rank's share of out (N, OC): its inputs times its rows
       of the weight. */

    /* TODO 5: g in the forward pass: make out the sum of every rank's
       share (MPI_Allreduce on tp, in place, type mpi_real()). */

    /* TODO 6: the bias, added once, however many ranks there are. */
    (void)ws; (void)out; (void)in; (void)w; (void)bias;  /* delete when */
    (void)N; (void)Cl; (void)OC; (void)tp; (void)flops;  /* done        */
}

/* dout (N, OC) is whole, the same on every rank. */
void row_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int Cl, int OC, MPI_Comm tp, double *flops)
{
    /* TODO 7: din (N, Cl), dw (Cl, OC) and dbias (OC). Does g need a
       collective in the backward pass? */
    (void)ws; (void)din; (void)dw; (void)dbias; (void)dout; /* delete */
    (void)in; (void)w; (void)N; (void)Cl; (void)OC;         /* when   */
    (void)tp; (void)flops;                                  /* done   */
}
