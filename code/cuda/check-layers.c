/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../minigpt/minigpt.h"
#include "gpu.h"

enum { B = 4, T = 32, C = 128, H = 4, V = 100, N = B * T };

/* fp32 against fp32 in another order: 64 units of the last place of the
   largest value, 64 · 2^-23 of it. */
static const double fp32_tolerance = 64 * FLT_EPSILON;
/* bf16 inputs: each rounded to 8 significant bits (unit roundoff
   u = 2^-8), so a product is within 2u of exact and a sum of products
   within 2u + u^2 of the sum of their magnitudes, |A||B|, with fp32's
   allowance for the sum on top. */
static const double bf16_tolerance = 2.0 / 256 + 1.0 / 65536
                                     + 64 * FLT_EPSILON;

typedef struct {
    Output out;
    Option *options;
    int checks, failures;
} Checks;

/* A tensor in two copies: the CPU's and the GPU's, made equal. */
typedef struct {
    real *cpu, *gpu;
    size_t n;
} Pair;

enum { MOST_PAIRS = 96 };
static Pair made[MOST_PAIRS];        /* every pair, freed at the end */
static int pairs;

static Pair pair(Rng *rng, size_t n, real scale)
{
    Pair p = { malloc(sizeof(real) * n), gpu_alloc(sizeof(real) * n), n };
    if (p.cpu == NULL || p.gpu == NULL || pairs == MOST_PAIRS)
        abort();
    for (size_t i = 0; i < n; i++)
        p.cpu[i] = rng != NULL ? scale * rng_normal(rng) : 0.0f;
    gpu_upload(p.gpu, p.cpu, sizeof(real) * n);
    return made[pairs++] = p;
}

static void free_pairs(void)
{
    for (int i = 0; i < pairs; i++) {
        free(made[i].cpu);
        gpu_free(made[i].gpu);
    }
    pairs = 0;
}

static void *on_gpu(const void *host, size_t bytes)
{
    void *d = gpu_alloc(bytes);
    if (d == NULL)
        abort();
    gpu_upload(d, host, bytes);
    return d;
}

/* The largest |gpu - cpu| relative to the largest |cpu|, or, given
   magnitude (n), the largest |gpu - cpu| / magnitude element by element;
   prints a line and counts a failure above the tolerance. */
static void compare(Checks *k, const char *layer, const char *tensor,
                    Pair p, const real *magnitude, double tolerance)
{
    real *gpu = malloc(sizeof(real) * p.n);
    if (gpu == NULL)
        abort();
    gpu_download(gpu, p.gpu, sizeof(real) * p.n);
    double largest = 0.0, scale = 0.0, relative = 0.0;
    int nan = 0;
    for (size_t i = 0; i < p.n; i++) {
        double d = fabs((double)gpu[i] - p.cpu[i]);
        nan |= isnan(d);
        largest = fmax(largest, d);
        scale = fmax(scale, fabs((double)p.cpu[i]));
        if (magnitude != NULL && d > 0)
            relative = fmax(relative, magnitude[i] > 0 ? d / magnitude[i]
                                                       : INFINITY);
    }
    if (magnitude == NULL)
        relative = scale > 0 ? largest / scale : largest;
    if (nan)
        relative = NAN;
    int ok = relative <= tolerance;     /* NaN is not ok */
    Report r = { .count = 0 };
    report_text(&r, "layer", layer);
    report_text(&r, "tensor", tensor);
    report_add(&r, "difference", FIELD_SCI, relative);
    report_add(&r, "tolerance", FIELD_SCI, tolerance);
    report_text(&r, "result", ok ? "OK" : "FAIL");
    if (option_given(k->options, "--csv"))
        print_csv_row(k->out.file, &r, k->checks == 0);
    else if (option_given(k->options, "--json"))
        json_list_item(k->out.file, &r, k->checks);
    else
        fprintf(k->out.file, "%-20s %-7s %s |gpu - cpu| = %.2e "
                "(tolerance %.2e): %s\n", layer, tensor,
                magnitude != NULL ? "largest ratio of" : "max relative",
                relative, tolerance, ok ? "OK" : "FAIL");
    k->checks++;
    k->failures += !ok;
    free(gpu);
}

static void check_encoder(Checks *k, Rng *rng)
{
    int tokens[N];
    for (int i = 0; i < N; i++)
        tokens[i] = rng_below(rng, V / 4);       /* rows read repeatedly */
    int *tokens_gpu = on_gpu(tokens, sizeof tokens);
    Pair wte = pair(rng, (size_t)V * C, 1), wpe = pair(rng, (size_t)T * C, 1);
    Pair dout = pair(rng, (size_t)N * C, 1), out = pair(NULL, dout.n, 0);
    Pair dwte = pair(NULL, wte.n, 0), dwpe = pair(NULL, wpe.n, 0);
    encoder_forward(out.cpu, tokens, wte.cpu, wpe.cpu, B, T, C);
    gpu_encoder_forward(out.gpu, tokens_gpu, wte.gpu, wpe.gpu, B, T, C);
    compare(k, "encoder_forward", "out", out, NULL, fp32_tolerance);
    encoder_backward(dwte.cpu, dwpe.cpu, dout.cpu, tokens, B, T, C);
    gpu_encoder_backward(dwte.gpu, dwpe.gpu, dout.gpu, tokens_gpu, B, T, C);
    compare(k, "encoder_backward", "dwte", dwte, NULL, fp32_tolerance);
    compare(k, "encoder_backward", "dwpe", dwpe, NULL, fp32_tolerance);
    gpu_free(tokens_gpu);
}

static void check_layernorm(Checks *k, Rng *rng)
{
    Pair in = pair(rng, (size_t)N * C, 2), w = pair(rng, C, 1);
    Pair b = pair(rng, C, 1), out = pair(NULL, in.n, 0);
    Pair mean = pair(NULL, N, 0), rstd = pair(NULL, N, 0);
    Pair dout = pair(rng, in.n, 1), din = pair(rng, in.n, 1);
    Pair dw = pair(rng, C, 1), db = pair(rng, C, 1);   /* added to */
    layernorm_forward(out.cpu, mean.cpu, rstd.cpu, in.cpu, w.cpu, b.cpu, N, C);
    gpu_layernorm_forward(out.gpu, mean.gpu, rstd.gpu, in.gpu, w.gpu, b.gpu,
                          N, C);
    compare(k, "layernorm_forward", "out", out, NULL, fp32_tolerance);
    compare(k, "layernorm_forward", "mean", mean, NULL, fp32_tolerance);
    compare(k, "layernorm_forward", "rstd", rstd, NULL, fp32_tolerance);
    layernorm_backward(din.cpu, dw.cpu, db.cpu, dout.cpu, in.cpu, w.cpu,
                       mean.cpu, rstd.cpu, N, C);
    gpu_layernorm_backward(din.gpu, dw.gpu, db.gpu, dout.gpu, in.gpu, w.gpu,
                           mean.gpu, rstd.gpu, N, C);
    compare(k, "layernorm_backward", "din", din, NULL, fp32_tolerance);
    compare(k, "layernorm_backward", "dw", dw, NULL, fp32_tolerance);
    compare(k, "layernorm_backward", "db", db, NULL, fp32_tolerance);
}

/* In fp32 against the CPU's tolerance; in bf16 element by element
   against bf16_tolerance of |A||B|, which the CPU computes from the
   inputs' magnitudes. */
static void check_matmul(Checks *k, Rng *rng, GpuPrecision precision)
{
    int IC = C, OC = 3 * C;
    GemmWorkspace ws;
    double flops = 0;
    gemm_workspace_init(&ws);
    Pair in = pair(rng, (size_t)N * IC, 1), w = pair(rng, (size_t)IC * OC,
                                                     0.1f);
    Pair bias = pair(rng, OC, 1), out = pair(NULL, (size_t)N * OC, 0);
    Pair dout = pair(rng, out.n, 1), din = pair(NULL, in.n, 0);
    Pair dw = pair(rng, w.n, 1), dbias = pair(rng, OC, 1);
    int bf16 = precision == GPU_BF16;
    const char *forward = bf16 ? "matmul_forward bf16" : "matmul_forward";
    const char *backward = bf16 ? "matmul_backward bf16" : "matmul_backward";
    /* The magnitudes |in||w|, |dout||w|^T and |in|^T|dout|. */
    Pair abs_in = pair(NULL, in.n, 0), abs_w = pair(NULL, w.n, 0);
    Pair abs_dout = pair(NULL, dout.n, 0), abs_out = pair(NULL, out.n, 0);
    Pair abs_din = pair(NULL, in.n, 0), abs_dw = pair(NULL, w.n, 0);
    Pair *from[] = { &in, &w, &dout }, *to[] = { &abs_in, &abs_w, &abs_dout };
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < from[t]->n; i++)
            to[t]->cpu[i] = fabsf(from[t]->cpu[i]);
    matmul_forward(&ws, abs_out.cpu, abs_in.cpu, abs_w.cpu, NULL, N, IC, OC,
                   &flops);
    matmul_backward(&ws, abs_din.cpu, abs_dw.cpu, NULL, abs_dout.cpu,
                    abs_in.cpu, abs_w.cpu, N, IC, OC, &flops);
    for (size_t i = 0; i < dw.n; i++)         /* dw starts where it was */
        abs_dw.cpu[i] += fabsf(dw.cpu[i]);
    gpu_set_precision(precision);
    matmul_forward(&ws, out.cpu, in.cpu, w.cpu, bf16 ? NULL : bias.cpu, N,
                   IC, OC, &flops);
    gpu_matmul_forward(out.gpu, in.gpu, w.gpu, bf16 ? NULL : bias.gpu, N,
                       IC, OC);
    compare(k, forward, "out", out, bf16 ? abs_out.cpu : NULL,
            bf16 ? bf16_tolerance : fp32_tolerance);
    matmul_backward(&ws, din.cpu, dw.cpu, bf16 ? NULL : dbias.cpu, dout.cpu,
                    in.cpu, w.cpu, N, IC, OC, &flops);
    gpu_matmul_backward(din.gpu, dw.gpu, bf16 ? NULL : dbias.gpu, dout.gpu,
                        in.gpu, w.gpu, N, IC, OC);
    compare(k, backward, "din", din, bf16 ? abs_din.cpu : NULL,
            bf16 ? bf16_tolerance : fp32_tolerance);
    compare(k, backward, "dw", dw, bf16 ? abs_dw.cpu : NULL,
            bf16 ? bf16_tolerance : fp32_tolerance);
    if (!bf16)
        compare(k, backward, "dbias", dbias, NULL, fp32_tolerance);
    gpu_set_precision(GPU_FP32);
    gemm_workspace_free(&ws);
}

static void check_attention(Checks *k, Rng *rng)
{
    double flops = 0;
    Pair qkv = pair(rng, (size_t)N * 3 * C, 1), out = pair(NULL,
                                                          (size_t)N * C, 0);
    Pair att = pair(NULL, (size_t)B * H * T * T, 0);
    Pair dout = pair(rng, out.n, 1), dqkv = pair(NULL, qkv.n, 0);
    Pair dscores = pair(NULL, att.n, 0);
    real datt_row[T];
    attention_forward(out.cpu, att.cpu, qkv.cpu, B, T, C, H, &flops);
    gpu_attention_forward(out.gpu, att.gpu, qkv.gpu, B, T, C, H);
    compare(k, "attention_forward", "out", out, NULL, fp32_tolerance);
    compare(k, "attention_forward", "att", att, NULL, fp32_tolerance);
    attention_backward(dqkv.cpu, datt_row, dout.cpu, qkv.cpu, att.cpu, B, T,
                       C, H, &flops);
    gpu_attention_backward(dqkv.gpu, dscores.gpu, dout.gpu, qkv.gpu, att.gpu,
                           B, T, C, H);
    compare(k, "attention_backward", "dqkv", dqkv, NULL, fp32_tolerance);
}

static void check_pointwise(Checks *k, Rng *rng)
{
    size_t n = (size_t)N * 4 * C;
    Pair in = pair(rng, n, 2), out = pair(NULL, n, 0), dout = pair(rng, n, 1);
    Pair din = pair(NULL, n, 0), other = pair(rng, n, 1);
    gelu_forward(out.cpu, in.cpu, n);
    gpu_gelu_forward(out.gpu, in.gpu, n);
    compare(k, "gelu_forward", "out", out, NULL, fp32_tolerance);
    gelu_backward(din.cpu, in.cpu, dout.cpu, n);
    gpu_gelu_backward(din.gpu, in.gpu, dout.gpu, n);
    compare(k, "gelu_backward", "din", din, NULL, fp32_tolerance);
    residual_forward(out.cpu, in.cpu, other.cpu, n);
    gpu_residual_forward(out.gpu, in.gpu, other.gpu, n);
    compare(k, "residual_forward", "out", out, NULL, fp32_tolerance);
}

static void check_crossentropy(Checks *k, Rng *rng)
{
    int targets[N];
    for (int i = 0; i < N; i++)
        targets[i] = rng_below(rng, V);
    int *targets_gpu = on_gpu(targets, sizeof targets);
    Pair probs = pair(rng, (size_t)N * V, 3), losses = pair(NULL, N, 0);
    Pair dlogits = pair(NULL, probs.n, 0);
    double loss = crossentropy_forward(probs.cpu, losses.cpu, targets, N, V);
    double loss_gpu = gpu_crossentropy_forward(probs.gpu, losses.gpu,
                                               targets_gpu, N, V);
    compare(k, "crossentropy_forward", "probs", probs, NULL, fp32_tolerance);
    compare(k, "crossentropy_forward", "losses", losses, NULL,
            fp32_tolerance);
    Pair mean = pair(NULL, 1, 0);
    mean.cpu[0] = (real)loss;
    real mean_gpu = (real)loss_gpu;
    gpu_upload(mean.gpu, &mean_gpu, sizeof mean_gpu);
    compare(k, "crossentropy_forward", "loss", mean, NULL, fp32_tolerance);
    crossentropy_backward(dlogits.cpu, probs.cpu, targets, N, V, 0.5f);
    gpu_crossentropy_backward(dlogits.gpu, probs.gpu, targets_gpu, N, V,
                              0.5f);
    compare(k, "crossentropy_backward", "dlogits", dlogits, NULL,
            fp32_tolerance);
    gpu_free(targets_gpu);
}

/* Chapter 9's steps of the cross-entropy over a split vocabulary, as the
   first of two ranks runs them, without the all-reduces between: half
   the targets are the other rank's, and before the last step the other
   rank's sums are stood in for by half of this one's. */
static void check_vocab_shard(Checks *k, Rng *rng)
{
    int targets[N], mine[N];
    for (int i = 0; i < N; i++)
        targets[i] = rng_below(rng, 2 * V);
    vocab_shard_targets(mine, targets, 0, N, V);
    int *mine_gpu = on_gpu(mine, sizeof mine);
    Pair probs = pair(rng, (size_t)N * V, 3), losses = pair(NULL, N, 0);
    Pair row_max = pair(NULL, N, 0), sums = pair(NULL, 2 * N, 0);
    vocab_shard_max(row_max.cpu, probs.cpu, N, V);
    gpu_vocab_shard_max(row_max.gpu, probs.gpu, N, V);
    compare(k, "vocab_shard_max", "row_max", row_max, NULL, fp32_tolerance);
    vocab_shard_exp(probs.cpu, sums.cpu, row_max.cpu, mine, N, V);
    gpu_vocab_shard_exp(probs.gpu, sums.gpu, row_max.gpu, mine_gpu, N, V);
    compare(k, "vocab_shard_exp", "probs", probs, NULL, fp32_tolerance);
    compare(k, "vocab_shard_exp", "sums", sums, NULL, fp32_tolerance);
    for (int n = 0; n < N; n++)
        if (mine[n] < 0)                   /* the other rank's target */
            sums.cpu[2 * n + 1] = sums.cpu[2 * n] / 2;
    gpu_upload(sums.gpu, sums.cpu, sizeof(real) * sums.n);
    Pair mean = pair(NULL, 1, 0);
    mean.cpu[0] = (real)vocab_shard_loss(probs.cpu, losses.cpu, sums.cpu, N,
                                         V);
    real mean_gpu = (real)gpu_vocab_shard_loss(probs.gpu, losses.gpu,
                                               sums.gpu, N, V);
    gpu_upload(mean.gpu, &mean_gpu, sizeof mean_gpu);
    compare(k, "vocab_shard_loss", "probs", probs, NULL, fp32_tolerance);
    compare(k, "vocab_shard_loss", "losses", losses, NULL, fp32_tolerance);
    compare(k, "vocab_shard_loss", "loss", mean, NULL, fp32_tolerance);
    gpu_free(mine_gpu);
}

static void check_optimizer(Checks *k, Rng *rng)
{
    size_t n = 100003;                     /* not a multiple of a block */
    Pair w = pair(rng, n, 1), g = pair(rng, n, 1e-2f);
    Pair m = pair(rng, n, 1e-3f), v = pair(NULL, n, 0);
    for (size_t i = 0; i < n; i++)
        v.cpu[i] = m.cpu[i] * m.cpu[i];
    gpu_upload(v.gpu, v.cpu, sizeof(real) * n);
    Pair squares = pair(NULL, 1, 0);
    squares.cpu[0] = (real)sum_of_squares(g.cpu, n);
    real squares_gpu = (real)gpu_sum_of_squares(g.gpu, n);
    gpu_upload(squares.gpu, &squares_gpu, sizeof squares_gpu);
    compare(k, "sum_of_squares", "sum", squares, NULL, fp32_tolerance);
    AdamW opt = { 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 1.0f };
    int step = 3;
    real c1 = 1.0f - powf(opt.beta1, (real)step);
    real c2 = 1.0f - powf(opt.beta2, (real)step);
    adamw_span(&opt, opt.lr, step, opt.weight_decay, w.cpu, g.cpu, m.cpu,
               v.cpu, n);
    gpu_adamw_span(w.gpu, g.gpu, m.gpu, v.gpu, n, opt.beta1, opt.beta2,
                   opt.eps, c1, c2, opt.lr, opt.weight_decay);
    compare(k, "adamw_span", "w", w, NULL, fp32_tolerance);
    compare(k, "adamw_span", "m", m, NULL, fp32_tolerance);
    compare(k, "adamw_span", "v", v, NULL, fp32_tolerance);
}

/* The device's all-reduce on a communicator of this one rank: NCCL
   loaded, a communicator opened, a sum and a maximum run, which leave
   each element as it was, exactly. Skipped, in one line, where the build
   has no NCCL. */
static void check_all_reduce(Checks *k, Rng *rng)
{
    char why[512];
    int have = gpu_collectives(why, sizeof why);
    if (have == 1) {                     /* built without NCCL's header */
        if (!report_requested(k->options))
            fprintf(k->out.file, "%-20s skipped: %s\n", "all_reduce", why);
        return;
    }
    GpuComm *one = have != 0 ? NULL
                 : gpu_comm_open(MPI_COMM_SELF, why, sizeof why);
    if (one == NULL) {
        complain("gpu-check-layers", "all_reduce: %s", why);
        k->checks++;
        k->failures++;
        return;
    }
    Pair sum = pair(rng, 1000, 1), largest = pair(rng, 1000, 1);
    gpu_all_reduce(one, sum.gpu, sum.n, GPU_SUM);
    gpu_all_reduce(one, largest.gpu, largest.n, GPU_MAX);
    compare(k, "all_reduce", "sum", sum, NULL, 0);
    compare(k, "all_reduce", "max", largest, NULL, 0);
    gpu_comm_close(one);
}

static int check_layers(int argc, char **argv)
{
    const char *command = "gpu-check-layers";
    Option options[] = { OUTPUT_OPTIONS, { NULL, 0, 0, NULL, 0, NULL, 0 } };
    int status = parse_options(command, "Run each CUDA layer against the "
                               "CPU layer function on random inputs.",
                               options, argc - 1, argv + 1);
    if (status != 0)
        return status == 1 ? 0 : 2;
    if (option_given(options, "--latex")) {
        complain(command, "--latex: no macros here; use --csv or --json");
        return 2;
    }
    char why[512];
    if (gpu_open(0, why, sizeof why) != 0) {
        complain(command, "%s", why);
        return 2;
    }
    Checks k = { .options = options };
    if (output_open(&k.out, command, options) != 0)
        return 2;
    if (option_given(options, "--json"))
        json_list_begin(k.out.file, "checks");
    else if (!report_requested(options))
        fprintf(k.out.file, "%s: each CUDA layer against the CPU's, "
                "B = %d, T = %d, C = %d, H = %d, V = %d\n", gpu_name(), B,
                T, C, H, V);
    Rng rng = { 20260101 };
    check_encoder(&k, &rng);
    check_layernorm(&k, &rng);
    check_matmul(&k, &rng, GPU_FP32);
    check_matmul(&k, &rng, GPU_BF16);
    check_attention(&k, &rng);
    check_pointwise(&k, &rng);
    check_crossentropy(&k, &rng);
    check_vocab_shard(&k, &rng);
    check_optimizer(&k, &rng);
    check_all_reduce(&k, &rng);
    free_pairs();
    if (gpu_status(why, sizeof why) != 0) {
        complain(command, "%s", why);
        return 2;
    }
    if (option_given(options, "--json"))
        json_list_end(k.out.file);
    else if (!report_requested(options))
        fprintf(k.out.file, "%d of %d checks within tolerance: %s\n",
                k.checks - k.failures, k.checks,
                k.failures == 0 ? "OK" : "FAIL");
    gpu_close();
    if (output_commit(&k.out, command) != 0)
        return 2;
    return k.failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);          /* for the all-reduce's communicator */
    int status = check_layers(argc, argv);
    MPI_Finalize();
    return status;
}
