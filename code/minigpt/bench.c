/* Tangled from chapters/09-tensor-parallel.nw, chapters/94-trainer-plumbing.nw and chapters/96-tensor-parallel-plumbing.nw; edit the chapters, not this file. */
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

/* The median of n rates, with the slowest and the fastest. */
static double median_rate(double *x, int n, double *low, double *high)
{
    double median = median_in_place(x, n);                /* sorts them */
    *low = x[0];
    *high = x[n - 1];
    return median;
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
/* A block's four linear layers, their whole weights (in C, out C) in
   multiples of the width C, and how Megatron-LM splits each over t ranks:
   a column-parallel layer keeps every input and 1/t of the outputs, a
   row-parallel one 1/t of the inputs and every output. */
typedef struct {
    const char *name;
    int column;            /* 1: column-parallel; 0: row-parallel         */
    int in, out;           /* the whole weight is (in C, out C)           */
} SplitLayer;

static const SplitLayer block_layers[] = {
    { "qkv", 1, 1, 3 },    /* (C, 3C), by heads: [q_r | k_r | v_r]        */
    { "proj", 0, 1, 1 },   /* (C, C), the rows of this rank's heads       */
    { "fc", 1, 1, 4 },     /* (C, 4C)                                     */
    { "fcproj", 0, 4, 1 }, /* (4C, C), the rows of this rank's units      */
};
enum { BLOCK_PRODUCTS = 12 };      /* three for each of the four layers */
/* The three products of layer l on one of t ranks (t = 1: the whole
   layer), for `positions` rows N, each M × N × K: the forward product
   out (N, out) = in (N, in) · w (in, out); the input's gradient
   din (N, in) = dout (N, out) · w^T; the weight's gradient
   dw (in, out) += in^T (in, N) · dout (N, out). */
static void slice_products(const SplitLayer *l, int C, int positions, int t,
                           Product p[3])
{
    int in = l->in * C / (l->column ? 1 : t);
    int out = l->out * C / (l->column ? t : 1);
    p[0] = (Product){ l->name, positions, out, in, 0, 0 };
    p[1] = (Product){ "  dx", positions, in, out, 0, 1 };
    p[2] = (Product){ "  dW", in, out, positions, 1, 0 };
}
/* FLOPs of a block's twelve products: 2 × 3 × (3 + 1 + 4 + 4) C² per
   position, forward and backward. */
static double block_flops(double C, double positions)
{
    return 72 * positions * C * C;
}

/* The smallest power of two k that divides both C and the positions, leaves
   C / k a whole number of columns for every head, and brings the block's
   products at (C / k, positions / k) within `seconds` at `rate` FLOP/s;
   0 if there is none. Dividing both by k keeps positions : C, and 4C : C. */
static int scale_down(int C, int positions, int heads, double seconds,
                      double rate)
{
    for (int k = 1; C % k == 0 && positions % k == 0
                    && (C / k) % heads == 0; k *= 2)
        if (block_flops(C / k, positions / k) <= seconds * rate)
            return k;
    return 0;
}
static void run_trainers(const Product *p, GemmWorkspace *w, const float *A,
                         const float *B, float *C)
{
    gemm(w, p->M, p->N, p->K, A, p->trans_a ? p->M : p->K, p->trans_a,
         B, p->trans_b ? p->K : p->N, p->trans_b, C, p->N, p->trans_a);
}

enum { MAX_DEGREES = 11 };              /* t = 1, 2, 4, ... 1024 */

typedef struct {
    int C, positions, heads;           /* the block timed                 */
    int scale, real_C, real_positions; /* and the one it was scaled from  */
    int degrees;                       /* t = 1 .. 2^(degrees - 1)        */
    int repeats;
    double seconds;                    /* per measurement                 */
    double scale_to;                   /* 0: not scaled                   */
    double *time;     /* seconds of one run, [repeat][product][degree]    */
} ShardTiming;

static double *shard_time(const ShardTiming *s, int repeat, int product,
                          int degree)
{
    return &s->time[((size_t)repeat * BLOCK_PRODUCTS + product) * s->degrees
                    + degree];
}
static void largest_operands(int C, int positions, size_t size[3])
{
    size[0] = size[1] = size[2] = 0;
    for (int k = 0; k < BLOCK_PRODUCTS; k++) {
        Product p[3];
        slice_products(&block_layers[k / 3], C, positions, 1, p);
        const Product *q = &p[k % 3];
        size_t a = (size_t)q->M * q->K, b = (size_t)q->K * q->N,
               c = (size_t)q->M * q->N;
        size[0] = a > size[0] ? a : size[0];
        size[1] = b > size[1] ? b : size[1];
        size[2] = c > size[2] ? c : size[2];
    }
}

static void time_shards(ShardTiming *s, GemmWorkspace *w)
{
    size_t size[3];
    largest_operands(s->C, s->positions, size);
    float *A = malloc(sizeof(float) * size[0]);
    float *B = malloc(sizeof(float) * size[1]);
    float *C = calloc(size[2], sizeof(float));
    if (!A || !B || !C)
        abort();
    Rng rng = { 42 };
    for (size_t i = 0; i < size[0]; i++) A[i] = rng_uniform(&rng) - 0.5f;
    for (size_t i = 0; i < size[1]; i++) B[i] = rng_uniform(&rng) - 0.5f;
    for (int r = -1; r < s->repeats; r++)
        for (int k = 0; k < BLOCK_PRODUCTS; k++)
            for (int d = 0; d < s->degrees; d++) {
                Product p[3];
                slice_products(&block_layers[k / 3], s->C, s->positions,
                               1 << d, p);
                const Product *q = &p[k % 3];
                run_trainers(q, w, A, B, C);                  /* untimed */
                double flops = 2.0 * q->M * q->N * q->K;
                double t = flops / rate(run_trainers, q, w, A, B, C,
                                        s->seconds);
                if (r >= 0)
                    *shard_time(s, r, k, d) = t;
            }
    free(A); free(B); free(C);
}
typedef struct {
    double median, low, high;     /* shard efficiency over the repeats    */
    double rate;                  /* FLOP/s of one rank's slices, median  */
} Efficiency;

/* The block's efficiency at degree d (t = 2^d), or one product's when
   product >= 0. */
static Efficiency shard_efficiency(const ShardTiming *s, int d, int product)
{
    double e[MAX_REPEATS], r[MAX_REPEATS], low, high;
    int t = 1 << d;
    for (int i = 0; i < s->repeats; i++) {
        double whole = 0, slice = 0;
        for (int k = 0; k < BLOCK_PRODUCTS; k++)
            if (product < 0 || k == product) {
                whole += *shard_time(s, i, k, 0);
                slice += *shard_time(s, i, k, d);
            }
        e[i] = whole / (t * slice);
        r[i] = block_flops(s->C, s->positions) / t / slice;
    }
    Efficiency x;
    x.median = median_rate(e, s->repeats, &x.low, &x.high);
    x.rate = median_rate(r, s->repeats, &low, &high);
    return x;
}
static Text degree_label(int d)                 /* "t=4" */
{
    Text t;
    snprintf(t.s, sizeof t.s, "t=%d", 1 << d);
    return t;
}

static void print_shards(FILE *f, const ShardTiming *s, const char *cpu)
{
    fprintf(f, "shard efficiency: time of the whole product ÷ (t × time of "
            "one rank's 1/t slice)\n");
    fprintf(f, "block: hidden %s, %s positions, %s heads", grouped(s->C).s,
            grouped(s->positions).s, grouped(s->heads).s);
    if (s->scale > 1)
        fprintf(f, ",\n  scaled down %d× from hidden %s and %s positions "
                "(a block within %s s)", s->scale, grouped(s->real_C).s,
                grouped(s->real_positions).s, sig(s->scale_to, 3).s);
    fprintf(f, "\none core of %s; median of %s after a warm-up\n\n", cpu,
            counted(s->repeats, "repeat", "repeats").s);
    int top = s->degrees - 1;
    char head[32];
    snprintf(head, sizeof head, "slice at t=%d", 1 << top);
    fprintf(f, "%-7s %-6s %-16s %-16s", "product", "split", "whole M×N×K",
            head);
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7s", degree_label(d).s);
    fprintf(f, "\n");
    for (int k = 0; k < BLOCK_PRODUCTS; k++) {
        const SplitLayer *l = &block_layers[k / 3];
        Product whole[3], slice[3];
        slice_products(l, s->C, s->positions, 1, whole);
        slice_products(l, s->C, s->positions, 1 << top, slice);
        char a[32], b[32];
        snprintf(a, sizeof a, "%d×%d×%d", whole[k % 3].M, whole[k % 3].N,
                 whole[k % 3].K);
        snprintf(b, sizeof b, "%d×%d×%d", slice[k % 3].M, slice[k % 3].N,
                 slice[k % 3].K);
        fprintf(f, "%-7s %-6s %-16s %-16s", whole[k % 3].what,
                k % 3 ? "" : l->column ? "column" : "row", a, b);
        for (int d = 1; d <= top; d++)
            fprintf(f, " %7.2f", shard_efficiency(s, d, k).median);
        fprintf(f, "\n");
    }
    fprintf(f, "\n%-24s %16s", "block (all 12)", "whole");
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7s", degree_label(d).s);
    fprintf(f, "\n%-24s %16s", "efficiency", "1");
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7.2f", shard_efficiency(s, d, -1).median);
    fprintf(f, "\n%-24s %16s", "  lowest", "");
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7.2f", shard_efficiency(s, d, -1).low);
    fprintf(f, "\n%-24s %16s", "  highest", "");
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7.2f", shard_efficiency(s, d, -1).high);
    fprintf(f, "\n%-24s %16.0f", "one rank's GF/s",
            shard_efficiency(s, 0, -1).rate / 1e9);
    for (int d = 1; d <= top; d++)
        fprintf(f, " %7.0f", shard_efficiency(s, d, -1).rate / 1e9);
    fprintf(f, "\n");
}
static void report_shards(Report *r, const ShardTiming *s, const char *cpu)
{
    static char keys[MAX_DEGREES][5][32];
    static const char *const pattern[5] = { "efficiency_t%d",
        "efficiency_t%d_low", "efficiency_t%d_high", "slice_flops_t%d",
        "slice_rate_t%d" };
    report_text(r, "cpu", cpu);
    report_add(r, "hidden", FIELD_COUNT, s->C);
    report_add(r, "positions", FIELD_COUNT, s->positions);
    report_add(r, "heads", FIELD_COUNT, s->heads);
    report_add(r, "scale", FIELD_COUNT, s->scale);
    report_add(r, "real_hidden", FIELD_COUNT, s->real_C);
    report_add(r, "real_positions", FIELD_COUNT, s->real_positions);
    report_add(r, "real_block_flops", FIELD_SCI,
               block_flops(s->real_C, s->real_positions));
    report_add(r, "scale_to", FIELD_REAL, s->scale_to);
    report_add(r, "repeats", FIELD_COUNT, s->repeats);
    report_add(r, "max_tp", FIELD_COUNT, 1 << (s->degrees - 1));
    report_add(r, "block_flops", FIELD_SCI, block_flops(s->C, s->positions));
    for (int d = 0; d < s->degrees; d++) {
        Efficiency x = shard_efficiency(s, d, -1);
        double v[5] = { x.median, x.low, x.high,
                        block_flops(s->C, s->positions) / (1 << d), x.rate };
        for (int i = 0; i < 5; i++) {
            snprintf(keys[d][i], sizeof keys[d][i], pattern[i], 1 << d);
            report_add(r, keys[d][i], i < 3 ? FIELD_REAL : FIELD_SCI, v[i]);
        }
    }
}
static int shards_main(const char *command, Option *o)
{
    ShardTiming s = {
        .C = (int)option_number(o, "--hidden"),
        .positions = (int)(option_number(o, "--batch")
                           * option_number(o, "--seq")),
        .heads = (int)option_number(o, "--heads"),
        .scale = 1, .repeats = (int)option_number(o, "--repeats"),
        .scale_to = option_number(o, "--scale-to"),
    };
    s.real_C = s.C;
    s.real_positions = s.positions;
    int max_tp = (int)option_number(o, "--max-tp");
    const char *machine = option_text(o, "--machine");
    if (option_given(o, "--vocab")) {
        complain(command, "--vocab has no use with --shards: the head is "
                 "not one of a block's products");
        return 2;
    }
    if (max_tp & (max_tp - 1)) {
        complain(command, "--max-tp must be a power of two; got %d", max_tp);
        return 2;
    }
    if (s.C % s.heads != 0) {
        complain(command, "--heads %d does not divide --hidden %d", s.heads,
                 s.C);
        return 2;
    }
    if (s.heads % max_tp != 0) {
        complain(command, "--max-tp %d does not divide --heads %d: tensor "
                 "parallelism splits whole heads", max_tp, s.heads);
        return 2;
    }
    if (s.scale_to > 0) {
        double rate;
        if (machine == NULL) {
            complain(command, "--scale-to needs --machine, whose GEMM rate "
                     "it scales by");
            return 2;
        }
        if (machine_figure(command, "--machine", machine,
                           "gemm_flops_per_core", &rate) != 0)
            return 2;
        s.scale = scale_down(s.C, s.positions, s.heads, s.scale_to, rate);
        if (s.scale == 0) {
            complain(command, "--scale-to %s: no power of two divides "
                     "--hidden %d and the %d positions far enough, keeping "
                     "%d whole heads", sig(s.scale_to, 3).s, s.C,
                     s.positions, s.heads);
            return 2;
        }
        s.C /= s.scale;
        s.positions /= s.scale;
    }
    size_t size[3];
    largest_operands(s.C, s.positions, size);
    double bytes = 4.0 * ((double)size[0] + size[1] + size[2]);
    if (bytes > 4e9) {
        complain(command, "--batch, --seq and --hidden ask for %s of "
                 "operands; the limit is 4 GB", bytes_auto(bytes).s);
        return 2;
    }
    for (s.degrees = 1; (1 << (s.degrees - 1)) < max_tp; s.degrees++)
        ;
    s.seconds = option_number(o, "--seconds") / s.repeats;
    s.time = malloc(sizeof(double) * (size_t)s.repeats * BLOCK_PRODUCTS
                    * (size_t)s.degrees);
    GemmWorkspace w;
    gemm_workspace_init(&w);
    if (s.time == NULL || !w.a || !w.b)
        return 2;
    char cpu[128];
    cpu_name(cpu, sizeof cpu);
    Output out;
    const char *transcript = option_text(o, "--transcript");
    if (check_writable(command, "--transcript", transcript) != 0
        || check_writable(command, "--output", option_text(o, "--output")) != 0)
        return 2;
    time_shards(&s, &w);
    gemm_workspace_free(&w);
    if (transcript != NULL) {
        if (output_open_path(&out, command, "--transcript", transcript) != 0)
            return 2;
        print_shards(out.file, &s, cpu);
        if (output_commit(&out, command) != 0)
            return 2;
    }
    if (output_open(&out, command, o) != 0)
        return 2;
    if (report_requested(o)) {
        Report r = { .count = 0 };
        report_shards(&r, &s, cpu);
        print_report(out.file, &r, o);
    } else {
        print_shards(out.file, &s, cpu);
    }
    free(s.time);
    return output_commit(&out, command);
}

int main(int argc, char **argv)
{
    const char *command = "matmul-bench";
    Option options[] = {
        { "--batch", OPT_COUNT, 4096, "sequences B", 8, NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--hidden", OPT_COUNT, 65536, "width C", 64, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V", 32, NULL, 0 },
        { "--seconds", OPT_NUMBER, 60, "time spent on each product, per side, "
          "over all repeats", 0.2, NULL, 0 },
        { "--repeats", OPT_COUNT, 101, "timed repeats of each product, after "
          "one untimed (the median is reported)", 5, NULL, 0 },
        { "--machine", OPT_PATH, 0, "compare with one core's peak FLOP/s from "
          "this file (build/machine.json)", 0, NULL, 0 },
        { "--transcript", OPT_OUTPUT, 0, "also write the readable table here",
          0, NULL, 0 },
        { "--shards", OPT_SWITCH, 0, "time one rank's 1/t slice of each product of "
          "a block against the whole, for t = 1, 2, 4 ... --max-tp", 0, NULL, 0 },
        { "--heads", OPT_COUNT, 65536, "attention heads H, which divide the width "
          "and which t must divide (--shards)", 4, NULL, 0 },
        { "--max-tp", OPT_COUNT, 1024, "the largest degree t, a power of two "
          "(--shards)", 4, NULL, 0 },
        { "--scale-to", OPT_NUMBER, 3600, "divide the width and positions by a "
          "power of two until a block takes at most this many seconds at --machine's "
          "GEMM rate (--shards)", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command, "This book's gemm against OpenBLAS "
                               "sgemm on one core, at the model's shapes.",
                               options, argc - 1, argv + 1);
    if (status != 0)
        return status == 1 ? 0 : status;
    {
        const char *own[] = { "--heads", "--max-tp", "--scale-to" };
        for (int i = 0; i < 3; i++)
            if (option_given(options, own[i])
                && !option_given(options, "--shards")) {
                complain(command, "%s goes with --shards", own[i]);
                return 2;
            }
    }
    if (option_given(options, "--shards"))
        return shards_main(command, options);
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
