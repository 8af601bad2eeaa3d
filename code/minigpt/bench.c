/* Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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
enum { MAX_REPEATS = 101 };
typedef struct {
    double ours, ours_low, ours_high;    /* median, slowest and fastest */
    double blas, blas_low, blas_high;
    double difference;
} Timing;

static void run_ours(const Product *p, GemmWorkspace *w, const float *A,
                     const float *B, float *C)
{
    gemm(w, p->M, p->N, p->K, A, p->trans_a ? p->M : p->K, p->trans_a,
         B, p->trans_b ? p->K : p->N, p->trans_b, C, p->N, 0);
}

static void run_blas(const Product *p, GemmWorkspace *w, const float *A,
                     const float *B, float *C)
{
    (void)w;
    cblas_sgemm(CblasRowMajor, p->trans_a ? CblasTrans : CblasNoTrans,
                p->trans_b ? CblasTrans : CblasNoTrans, p->M, p->N, p->K, 1.0f,
                A, p->trans_a ? p->M : p->K, B, p->trans_b ? p->K : p->N, 0.0f,
                C, p->N);
}

typedef void Kernel(const Product *, GemmWorkspace *, const float *,
                    const float *, float *);

/* FLOP/s of one kernel, run over and over for about `seconds`. */
static double rate(Kernel *k, const Product *p, GemmWorkspace *w,
                   const float *A, const float *B, float *C, double seconds)
{
    double started = seconds_now(), elapsed;
    long runs = 0;
    do {
        k(p, w, A, B, C);
        runs++;
        elapsed = seconds_now() - started;
    } while (elapsed < seconds);
    return 2.0 * p->M * p->N * p->K * (double)runs / elapsed;
}

static int by_rate(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n rates, with the slowest and the fastest. */
static double median_rate(double *x, int n, double *low, double *high)
{
    qsort(x, (size_t)n, sizeof *x, by_rate);
    *low = x[0];
    *high = x[n - 1];
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static Timing time_product(const Product *p, GemmWorkspace *w, double seconds,
                           int repeats)
{
    size_t a_size = (size_t)p->M * p->K, b_size = (size_t)p->K * p->N;
    float *A = malloc(sizeof(float) * a_size);
    float *B = malloc(sizeof(float) * b_size);
    float *C1 = malloc(sizeof(float) * (size_t)p->M * p->N);
    float *C2 = malloc(sizeof(float) * (size_t)p->M * p->N);
    if (!A || !B || !C1 || !C2)
        abort();
    Rng rng = { 42 };
    for (size_t i = 0; i < a_size; i++) A[i] = rng_uniform(&rng) - 0.5f;
    for (size_t i = 0; i < b_size; i++) B[i] = rng_uniform(&rng) - 0.5f;
    double ours[MAX_REPEATS], blas[MAX_REPEATS], slice = seconds / repeats;
    rate(run_ours, p, w, A, B, C1, slice);                    /* warm-up */
    rate(run_blas, p, w, A, B, C2, slice);
    for (int r = 0; r < repeats; r++) {        /* alternate the two sides */
        ours[r] = rate(run_ours, p, w, A, B, C1, slice);
        blas[r] = rate(run_blas, p, w, A, B, C2, slice);
    }
    Timing t = { 0 };
    t.ours = median_rate(ours, repeats, &t.ours_low, &t.ours_high);
    t.blas = median_rate(blas, repeats, &t.blas_low, &t.blas_high);
    for (size_t i = 0; i < (size_t)p->M * p->N; i++)
        t.difference = fmax(t.difference, fabs((double)C1[i] - C2[i]));
    free(A); free(B); free(C1); free(C2);
    return t;
}
/* The width in bits of the vectors of OpenBLAS's x86 kernel of this name;
   0 for a name this table does not know. */
static int blas_vector_bits(const char *core)
{
    static const struct { const char *name; int bits; } kernels[] = {
        { "SkylakeX", 512 }, { "Cooperlake", 512 }, { "SapphireRapids", 512 },
        { "Haswell", 256 }, { "Zen", 256 }, { "Sandybridge", 256 },
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcasecmp(core, kernels[i].name) == 0)
            return kernels[i].bits;
    return 0;
}

/* The width in bits of the widest vectors this core runs; 0 when unknown. */
static int core_vector_bits(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return 512;
    if (__builtin_cpu_supports("avx"))
        return 256;
    return 128;
#else
    return 0;
#endif
}
typedef struct {
    double ratio, time_ratio, worst, best;   /* best: our fastest median */
    char cpu[128];
    char blas_core[64], blas_config[256];    /* what OpenBLAS says it runs */
    int blas_bits, core_bits;                /* vector widths; 0: unknown */
    int cores, repeats;
    double peak;                             /* 0 without --machine */
    const char *machine;
} Summary;

static Summary summarise(const Product *p, const Timing *t, int n)
{
    Summary s = { 0 };
    double log_sum = 0, time_ours = 0, time_blas = 0;
    for (int i = 0; i < n; i++) {
        double flops = 2.0 * p[i].M * p[i].N * p[i].K;
        log_sum += log(t[i].ours / t[i].blas);
        time_ours += flops / t[i].ours;
        time_blas += flops / t[i].blas;
        s.worst = fmax(s.worst, t[i].difference);
        s.best = fmax(s.best, t[i].ours);
    }
    s.ratio = exp(log_sum / n);
    s.time_ratio = time_blas / time_ours;
    return s;
}

static void print_table(FILE *f, const Product *p, const Timing *t, int n,
                        const Summary *s)
{
    fprintf(f, "%-7s %12s %17s %17s %6s %8s\n", "product", "M × N × K",
            "ours GF/s", "BLAS GF/s", "ratio", "max diff");
    for (int i = 0; i < n; i++) {
        char shape[32], ours[32], blas[32];
        snprintf(shape, sizeof shape, "%d×%d×%d", p[i].M, p[i].N, p[i].K);
        snprintf(ours, sizeof ours, "%.0f (%.0f-%.0f)", t[i].ours / 1e9,
                 t[i].ours_low / 1e9, t[i].ours_high / 1e9);
        snprintf(blas, sizeof blas, "%.0f (%.0f-%.0f)", t[i].blas / 1e9,
                 t[i].blas_low / 1e9, t[i].blas_high / 1e9);
        fprintf(f, "%-7s %12s %17s %17s %6.2f %8.1e\n", p[i].what, shape, ours,
                blas, t[i].ours / t[i].blas, t[i].difference);
    }
    fprintf(f, "\nmedians of %s (slowest-fastest) after a warm-up;\n"
            "geometric mean of the ratios %.2f; ratio of total times %.2f\n",
            counted(s->repeats, "repeat", "repeats").s, s->ratio,
            s->time_ratio);
    if (s->peak > 0)
        fprintf(f, "fastest product %.0f GF/s = %s %% of one core's peak, "
                "%.0f GF/s (%s)\n", s->best / 1e9,
                sig(100 * s->best / s->peak, 3).s, s->peak / 1e9, s->machine);
    fprintf(f, "(one core of %s, %d %s)\n", s->cpu, s->cores,
            s->cores == 1 ? "core" : "cores");
    fprintf(f, "BLAS: %s\n", s->blas_config);
    fprintf(f, "OpenBLAS's kernel: %s", s->blas_core);
    if (s->blas_bits > 0)
        fprintf(f, ", %d-bit vectors", s->blas_bits);
    if (s->core_bits > 0)
        fprintf(f, "; this core's vectors: %d-bit", s->core_bits);
    fprintf(f, "\n");
}

int main(int argc, char **argv)
{
    const char *command = "matmul-bench";
    Option options[] = {
        { "--batch", OPT_COUNT, 4096, "sequences B", 8, NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--hidden", OPT_COUNT, 4096, "width C", 64, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V", 32, NULL, 0 },
        { "--seconds", OPT_NUMBER, 60, "time spent on each product, per side, "
          "over all repeats", 0.2, NULL, 0 },
        { "--repeats", OPT_COUNT, 101, "timed repeats of each product, after "
          "one untimed (the median is reported)", 5, NULL, 0 },
        { "--machine", OPT_PATH, 0, "compare with one core's peak FLOP/s from "
          "this file (build/machine.json)", 0, NULL, 0 },
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
    double peak = 0;
    const char *machine = option_text(options, "--machine");
    if (machine != NULL
        && machine_figure(command, "--machine", machine,
                          "peak_flops_per_core", &peak) != 0)
        return 2;
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
        t[i] = time_product(&p[i], &w, option_number(options, "--seconds"),
                            (int)option_number(options, "--repeats"));
    gemm_workspace_free(&w);
    Summary sum = summarise(p, t, n);
    cpu_name(sum.cpu, sizeof sum.cpu);
    sum.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    sum.repeats = (int)option_number(options, "--repeats");
    sum.peak = peak;
    sum.machine = machine;
    snprintf(sum.blas_core, sizeof sum.blas_core, "%s", openblas_get_corename());
    snprintf(sum.blas_config, sizeof sum.blas_config, "%s", openblas_get_config());
    sum.blas_bits = blas_vector_bits(sum.blas_core);
    sum.core_bits = core_vector_bits();
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
        report_add(&r, "best_flops", FIELD_SCI, sum.best);
        report_add(&r, "repeats", FIELD_COUNT, sum.repeats);
        report_add(&r, "cores", FIELD_COUNT, sum.cores);
        report_text(&r, "blas_core", sum.blas_core);
        report_add(&r, "blas_vector_bits", FIELD_COUNT, sum.blas_bits);
        report_add(&r, "core_vector_bits", FIELD_COUNT, sum.core_bits);
        if (peak > 0) {
            report_add(&r, "peak_flops", FIELD_SCI, peak);
            report_add(&r, "best_fraction_of_peak", FIELD_FRACTION,
                       sum.best / peak);
        }
        print_report(out.file, &r, options);
    } else {
        print_table(out.file, p, t, n, &sum);
    }
    return output_commit(&out, command);
}
