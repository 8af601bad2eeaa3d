/* Tangled from chapters/06-reference.nw; edit the chapter, not this file. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"

typedef struct {
    const char *what;
    int M, N, K, trans_a, trans_b;
} Product;

static int products(int positions, int C, int V, Product *p)
{
    const struct { const char *name; int in, out; } layers[] = {
        { "qkv", C, 3 * C }, { "proj", C, C }, { "fc", C, 4 * C },
        { "fcproj", 4 * C, C }, { "head", C, V },
    };
    int n = 0;
    for (int i = 0; i < 5; i++) {
        int in = layers[i].in, out = layers[i].out;
        p[n++] = (Product){ layers[i].name, positions, out, in, 0, 0 };
        p[n++] = (Product){ "  dx", positions, in, out, 0, 1 };
        p[n++] = (Product){ "  dW", in, out, positions, 1, 0 };
    }
    return n;
}
typedef struct { double ours, blas, difference; } Timing;

static Timing time_product(const Product *p, GemmWorkspace *w, double seconds)
{
    int lda = p->trans_a ? p->M : p->K, ldb = p->trans_b ? p->K : p->N;
    size_t a_size = (size_t)p->M * p->K, b_size = (size_t)p->K * p->N;
    float *A = malloc(sizeof(float) * a_size), *B = malloc(sizeof(float) * b_size);
    float *C1 = malloc(sizeof(float) * (size_t)p->M * p->N);
    float *C2 = malloc(sizeof(float) * (size_t)p->M * p->N);
    if (!A || !B || !C1 || !C2)
        abort();
    Rng rng = { 42 };
    for (size_t i = 0; i < a_size; i++) A[i] = rng_uniform(&rng) - 0.5f;
    for (size_t i = 0; i < b_size; i++) B[i] = rng_uniform(&rng) - 0.5f;
    double flops = 2.0 * p->M * p->N * p->K, ours = 0, blas = 0;
    long ours_runs = 0, blas_runs = 0;
    while (ours < seconds || blas < seconds) {   /* alternate while both run */
        if (ours < seconds) {
            double t0 = seconds_now();
            gemm(w, p->M, p->N, p->K, A, lda, p->trans_a, B, ldb, p->trans_b,
                 C1, p->N, 0);
            ours += seconds_now() - t0;
            ours_runs++;
        }
        if (blas < seconds) {
            double t0 = seconds_now();
            cblas_sgemm(CblasRowMajor, p->trans_a ? CblasTrans : CblasNoTrans,
                        p->trans_b ? CblasTrans : CblasNoTrans, p->M, p->N,
                        p->K, 1.0f, A, lda, B, ldb, 0.0f, C2, p->N);
            blas += seconds_now() - t0;
            blas_runs++;
        }
    }
    Timing t = { flops * ours_runs / ours, flops * blas_runs / blas, 0 };
    for (size_t i = 0; i < (size_t)p->M * p->N; i++)
        t.difference = fmax(t.difference, fabs((double)C1[i] - C2[i]));
    free(A); free(B); free(C1); free(C2);
    return t;
}
typedef struct {
    double ratio, time_ratio, worst;
    char cpu[128];
} Summary;

static Summary summarise(const Product *p, const Timing *t, int n)
{
    Summary s = { 0, 0, 0, "" };
    double log_sum = 0, time_ours = 0, time_blas = 0;
    for (int i = 0; i < n; i++) {
        double flops = 2.0 * p[i].M * p[i].N * p[i].K;
        log_sum += log(t[i].ours / t[i].blas);
        time_ours += flops / t[i].ours;
        time_blas += flops / t[i].blas;
        s.worst = fmax(s.worst, t[i].difference);
    }
    s.ratio = exp(log_sum / n);
    s.time_ratio = time_blas / time_ours;
    return s;
}

static void print_table(FILE *f, const Product *p, const Timing *t, int n,
                        const Summary *s)
{
    fprintf(f, "%-8s %18s %10s %10s %7s %9s\n", "product", "M × N × K",
            "ours GF/s", "BLAS GF/s", "ratio", "max diff");
    for (int i = 0; i < n; i++) {
        char shape[32];
        snprintf(shape, sizeof shape, "%d×%d×%d", p[i].M, p[i].N, p[i].K);
        fprintf(f, "%-8s %18s %10.1f %10.1f %7.2f %9.1e\n", p[i].what, shape,
                t[i].ours / 1e9, t[i].blas / 1e9, t[i].ours / t[i].blas,
                t[i].difference);
    }
    fprintf(f, "\ngeometric mean of the ratios %.2f; ratio of total times "
            "%.2f\n(one core of %s)\n", s->ratio, s->time_ratio, s->cpu);
}

int main(int argc, char **argv)
{
    const char *command = "matmul-bench";
    Option options[] = {
        { "--batch", OPT_COUNT, 4096, "sequences B", 8, NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--hidden", OPT_COUNT, 4096, "width C", 64, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V", 32, NULL, 0 },
        { "--seconds", OPT_NUMBER, 60, "time spent on each product, per side",
          0.2, NULL, 0 },
        { "--transcript", OPT_OUTPUT, 0, "also write the readable table here",
          0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command, "This book's gemm against OpenBLAS "
                               "sgemm on one core, at the model's shapes.",
                               options, argc - 1, argv + 1);
    if (status != 0)
        return status == 1 ? 0 : status;
    double positions = option_number(options, "--batch")
                     * option_number(options, "--seq");
    double widest = fmax(4 * option_number(options, "--hidden"),
                         option_number(options, "--vocab"));
    double bytes = 4.0 * (2 * positions * widest + widest * widest);
    if (bytes > 4e9) {
        complain(command, "--batch, --seq, --hidden and --vocab ask for %s "
                 "per product; the limit is 4 GB", bytes_auto(bytes).s);
        return 2;
    }
    openblas_set_num_threads(1);
    Product p[15];
    Timing t[15];
    int n = products((int)positions, (int)option_number(options, "--hidden"),
                     (int)option_number(options, "--vocab"), p);
    GemmWorkspace w;
    gemm_workspace_init(&w);
    if (!w.a || !w.b)
        return 2;
    for (int i = 0; i < n; i++)
        t[i] = time_product(&p[i], &w, option_number(options, "--seconds"));
    gemm_workspace_free(&w);
    Summary sum = summarise(p, t, n);
    cpu_name(sum.cpu, sizeof sum.cpu);
    const char *transcript_path = option_text(options, "--transcript");
    Output out;
    if (transcript_path != NULL) {
        if (output_open_path(&out, command, "--transcript", transcript_path) != 0)
            return 2;
        print_table(out.file, p, t, n, &sum);
        if (output_commit(&out, command) != 0)
            return 2;
    }
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "cpu", sum.cpu);
        report_add(&r, "ratio", FIELD_REAL, sum.ratio);
        report_add(&r, "time_ratio", FIELD_REAL, sum.time_ratio);
        report_add(&r, "max_difference", FIELD_SCI, sum.worst);
        print_report(out.file, &r, options);
    } else {
        print_table(out.file, p, t, n, &sum);
    }
    return output_commit(&out, command);
}
