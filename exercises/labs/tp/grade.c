/* exercises/labs/tp/grade.c: the autograder of the lab of chapter 9. It is
   built by `make lab-tp` with a student's parallel_linear.c and the
   reference's matmul (code/minigpt/layers.c and gemm.c), and run on 4 ranks:

       mpiexec -n 4 grade

   Every rank builds the same whole layer, a weight (C, OC), a bias (OC), an
   input (N, C) and an output gradient (N, OC), and computes the reference
   with matmul_forward and matmul_backward, unsplit. Then, for t = 2 (two
   groups of 2 ranks, so that a collective on the wrong communicator sums
   too much) and t = 4, every rank cuts its slice the Megatron way, runs the
   student's layer on it, and compares each output and gradient with the
   same slice of the reference: the largest difference over all ranks must be
   within TOLERANCE times the largest entry of the reference tensor (at
   least 1). dw and dbias start from the same non-zero values in both, so a
   gradient that overwrites instead of adding fails. Outputs and input
   gradients start as NaN, so one left unwritten fails. Each rank's FLOPs,
   forward and backward, must be the whole layer's divided by t.

   Rank 0 prints one line per check, PASS or FAIL with the largest
   difference, then the score k/n and OK or FAIL; the exit status is 0 only
   if every check passes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel_linear.h"

enum { ROWS = 10, IN = 24, OUT = 40 };   /* N, C, OC: 4 divides C and OC */
#define TOLERANCE 1e-5                   /* float: 2^-24 is 6.0e-8 */
#define FLOPS_TOLERANCE 1e-9

/* The whole layer and its reference results, the same on every rank. */
typedef struct {
    real in[ROWS * IN];         /* (N, C)                               */
    real w[IN * OUT];           /* (C, OC)                              */
    real bias[OUT];             /* (OC)                                 */
    real dout[ROWS * OUT];      /* (N, OC)                              */
    real dw0[IN * OUT];         /* (C, OC) what dw holds before a pass  */
    real dbias0[OUT];           /* (OC)    what dbias holds before      */
    real out[ROWS * OUT];       /* (N, OC) reference output             */
    real din[ROWS * IN];        /* (N, C)  reference input gradient     */
    real dw[IN * OUT];          /* (C, OC) dw0 + reference gradient     */
    real dbias[OUT];            /* (OC)    dbias0 + reference gradient  */
    double flops;               /* forward + backward, the whole layer  */
} Layer;

static int passed, checks;

/* Uniform in [-1, 1), from a 64-bit xorshift: the same on every rank. */
static real uniform(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (real)((double)(*state >> 11) / 9007199254740992.0 * 2 - 1);
}

static void fill(real *x, size_t count, uint64_t *state)
{
    for (size_t i = 0; i < count; i++)
        x[i] = uniform(state);
}

static void fill_nan(real *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        x[i] = (real)NAN;
}

/* rows x cols of x from (row0, col0), whose rows are ld long, copied into
   a (rows, cols) array. */
static real *slice(const real *x, int ld, int row0, int col0, int rows,
                   int cols)
{
    real *s = malloc(sizeof(real) * (size_t)rows * cols);
    for (int i = 0; i < rows; i++)
        memcpy(s + (size_t)i * cols, x + (size_t)(row0 + i) * ld + col0,
               sizeof(real) * (size_t)cols);
    return s;
}

/* The largest |got - want| over a (rows, cols) got and the same block of
   want from (row0, col0), rows ld long; infinite where got is not finite. */
static double difference(const real *got, const real *want, int ld,
                         int row0, int col0, int rows, int cols)
{
    double worst = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double g = got[(size_t)i * cols + j];
            double d = fabs(g - want[(size_t)(row0 + i) * ld + col0 + j]);
            if (!isfinite(g) || !(d <= worst))
                worst = isfinite(g) ? d : INFINITY;
        }
    return worst;
}

/* max(1, the largest |x|) over count numbers. */
static double scale_of(const real *x, size_t count)
{
    double s = 1;
    for (size_t i = 0; i < count; i++)
        if (fabs((double)x[i]) > s)
            s = fabs((double)x[i]);
    return s;
}

/* One check: the largest of every rank's difference against the
   tolerance times scale, printed by rank 0. */
static void check(const char *what, double diff, double scale, int rank)
{
    double worst;
    MPI_Allreduce(&diff, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = worst <= TOLERANCE * scale;
    passed += ok;
    checks++;
    if (rank == 0) {
        if (isfinite(worst))
            printf("  %s  %-36s largest difference %.2g\n",
                   ok ? "PASS" : "FAIL", what, worst);
        else
            printf("  %s  %-36s not finite (left unwritten?)\n",
                   ok ? "PASS" : "FAIL", what);
    }
}

/* The FLOPs each rank counted against the whole layer's over t. */
static void check_flops(const char *what, double counted, double whole,
                        int t, int rank)
{
    double want = whole / t;
    double off = fabs(counted - want) / want, worst, least, most;
    MPI_Allreduce(&off, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&counted, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&counted, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = worst <= FLOPS_TOLERANCE;
    passed += ok;
    checks++;
    if (rank == 0)
        printf("  %s  %-36s counted %.6g to %.6g, want %.6g\n",
               ok ? "PASS" : "FAIL", what, least, most, want);
}

static void reference(Layer *L, GemmWorkspace *ws)
{
    uint64_t state = 0x9e3779b97f4a7c15u;
    fill(L->in, ROWS * IN, &state);
    fill(L->w, IN * OUT, &state);
    fill(L->bias, OUT, &state);
    fill(L->dout, ROWS * OUT, &state);
    fill(L->dw0, IN * OUT, &state);
    fill(L->dbias0, OUT, &state);
    memcpy(L->dw, L->dw0, sizeof L->dw);
    memcpy(L->dbias, L->dbias0, sizeof L->dbias);
    L->flops = 0;
    matmul_forward(ws, L->out, L->in, L->w, L->bias, ROWS, IN, OUT,
                   &L->flops);
    matmul_backward(ws, L->din, L->dw, L->dbias, L->dout, L->in, L->w,
                    ROWS, IN, OUT, &L->flops);
}

/* Column-parallel: rank r of t holds columns r·OC/t .. of w, bias, the
   output and its gradient; the input and din are whole. */
static void grade_column(const Layer *L, GemmWorkspace *ws, MPI_Comm tp,
                         int t, int r, int rank)
{
    int OCl = OUT / t, col0 = r * OCl;
    real *w = slice(L->w, OUT, 0, col0, IN, OCl);          /* (C, OCl) */
    real *bias = slice(L->bias, OUT, 0, col0, 1, OCl);     /* (OCl)    */
    real *dout = slice(L->dout, OUT, 0, col0, ROWS, OCl);  /* (N, OCl) */
    real *dw = slice(L->dw0, OUT, 0, col0, IN, OCl);       /* (C, OCl) */
    real *dbias = slice(L->dbias0, OUT, 0, col0, 1, OCl);  /* (OCl)    */
    real *out = malloc(sizeof(real) * ROWS * OCl);         /* (N, OCl) */
    real *din = malloc(sizeof(real) * ROWS * IN);          /* (N, C)   */
    fill_nan(out, (size_t)ROWS * OCl);
    fill_nan(din, (size_t)ROWS * IN);
    double flops = 0;
    column_parallel_forward(ws, out, L->in, w, bias, ROWS, IN, OCl, tp,
                            &flops);
    column_parallel_backward(ws, din, dw, dbias, dout, L->in, w, ROWS, IN,
                             OCl, tp, &flops);
    check("column forward   out (N, OC/t)",
          difference(out, L->out, OUT, 0, col0, ROWS, OCl),
          scale_of(L->out, ROWS * OUT), rank);
    check("column backward  din (N, C)",
          difference(din, L->din, IN, 0, 0, ROWS, IN),
          scale_of(L->din, ROWS * IN), rank);
    check("column backward  dw (C, OC/t)",
          difference(dw, L->dw, OUT, 0, col0, IN, OCl),
          scale_of(L->dw, IN * OUT), rank);
    check("column backward  dbias (OC/t)",
          difference(dbias, L->dbias, OUT, 0, col0, 1, OCl),
          scale_of(L->dbias, OUT), rank);
    check_flops("column FLOPs     forward + backward", flops, L->flops, t,
                rank);
    free(w); free(bias); free(dout); free(dw); free(dbias); free(out);
    free(din);
}

/* Row-parallel: rank r of t holds rows r·C/t .. of w, the same columns of
   the input and of din; the output, its gradient and the bias are whole. */
static void grade_row(const Layer *L, GemmWorkspace *ws, MPI_Comm tp,
                      int t, int r, int rank)
{
    int Cl = IN / t, row0 = r * Cl;
    real *in = slice(L->in, IN, 0, row0, ROWS, Cl);        /* (N, Cl)  */
    real *w = slice(L->w, OUT, row0, 0, Cl, OUT);          /* (Cl, OC) */
    real *dw = slice(L->dw0, OUT, row0, 0, Cl, OUT);       /* (Cl, OC) */
    real *dbias = slice(L->dbias0, OUT, 0, 0, 1, OUT);     /* (OC)     */
    real *out = malloc(sizeof(real) * ROWS * OUT);         /* (N, OC)  */
    real *din = malloc(sizeof(real) * ROWS * Cl);          /* (N, Cl)  */
    fill_nan(out, (size_t)ROWS * OUT);
    fill_nan(din, (size_t)ROWS * Cl);
    double flops = 0;
    row_parallel_forward(ws, out, in, w, L->bias, ROWS, Cl, OUT, tp,
                         &flops);
    row_parallel_backward(ws, din, dw, dbias, L->dout, in, w, ROWS, Cl,
                          OUT, tp, &flops);
    check("row    forward   out (N, OC)",
          difference(out, L->out, OUT, 0, 0, ROWS, OUT),
          scale_of(L->out, ROWS * OUT), rank);
    check("row    backward  din (N, C/t)",
          difference(din, L->din, IN, 0, row0, ROWS, Cl),
          scale_of(L->din, ROWS * IN), rank);
    check("row    backward  dw (C/t, OC)",
          difference(dw, L->dw, OUT, row0, 0, Cl, OUT),
          scale_of(L->dw, IN * OUT), rank);
    check("row    backward  dbias (OC)",
          difference(dbias, L->dbias, OUT, 0, 0, 1, OUT),
          scale_of(L->dbias, OUT), rank);
    check_flops("row    FLOPs     forward + backward", flops, L->flops, t,
                rank);
    free(in); free(w); free(dw); free(dbias); free(out); free(din);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc > 1 || ranks % 4 != 0) {
        if (rank == 0)
            fprintf(stderr, argc > 1 ? "grade: takes no arguments\n"
                    : "grade: run it on a multiple of 4 ranks "
                      "(mpiexec -n 4)\n");
        MPI_Finalize();
        return 2;
    }
    static Layer L;
    GemmWorkspace ws;
    gemm_workspace_init(&ws);
    reference(&L, &ws);
    if (rank == 0)
        printf("lab-tp: column- and row-parallel linear layers against "
               "the unsplit layer\n"
               "  N = %d rows, C = %d inputs, OC = %d outputs, %s; "
               "tolerance %.0e x the\n"
               "  largest entry of the reference (at least 1)\n",
               ROWS, IN, OUT, sizeof(real) == 4 ? "float" : "double",
               TOLERANCE);
    int sizes[] = {2, 4};
    for (int i = 0; i < 2; i++) {
        int t = sizes[i];
        MPI_Comm tp;       /* ranks g·t .. g·t + t − 1: TP innermost */
        MPI_Comm_split(MPI_COMM_WORLD, rank / t, rank % t, &tp);
        if (rank == 0)
            printf("t = %d: %d group%s of %d ranks\n", t, ranks / t,
                   ranks / t == 1 ? "" : "s", t);
        grade_column(&L, &ws, tp, t, rank % t, rank);
        grade_row(&L, &ws, tp, t, rank % t, rank);
        MPI_Comm_free(&tp);
    }
    if (rank == 0)
        printf("score: %d/%d\nlab-tp: %s\n", passed, checks,
               passed == checks ? "OK" : "FAIL");
    gemm_workspace_free(&ws);
    MPI_Finalize();
    return passed == checks ? 0 : 1;
}
