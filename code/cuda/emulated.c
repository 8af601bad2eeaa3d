/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../minigpt/minigpt.h"
#include "../minigpt/elementwise.h"
#include "gpu.h"

/* "Device" memory is host memory, and each layer the CPU's own. */
static GemmWorkspace ws;
static GpuPrecision precision = GPU_FP32;
static int device_number;

void gpu_device_id(char *id, size_t size)
{
    snprintf(id, size, "emulated device %d", device_number);
}

struct GpuComm {
    MPI_Comm comm;
};

int gpu_collectives(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    return 0;
}

GpuComm *gpu_comm_open(MPI_Comm comm, char *why, size_t why_size)
{
    GpuComm *c = malloc(sizeof *c);
    if (c == NULL) {
        snprintf(why, why_size, "NCCL, emulated: no memory");
        return NULL;
    }
    MPI_Comm_dup(comm, &c->comm);
    return c;
}

void gpu_all_reduce(GpuComm *c, real *x, size_t n, GpuReduction op)
{
    MPI_Allreduce(MPI_IN_PLACE, x, (int)n, real_type(),
                  op == GPU_MAX ? MPI_MAX : MPI_SUM, c->comm);
}

void gpu_comm_close(GpuComm *c)
{
    MPI_Comm_free(&c->comm);
    free(c);
}

/* The device: one a rank of the node, or of GPU_EMULATED_DEVICES. */
int gpu_open(int device, char *why, size_t why_size)
{
    const char *devices = getenv("GPU_EMULATED_DEVICES");
    int count = devices != NULL ? atoi(devices) : 0;
    (void)why, (void)why_size;
    device_number = count > 0 ? device % count : device;
    gemm_workspace_init(&ws);
    return ws.a != NULL && ws.b != NULL ? 0 : 2;
}

void gpu_close(void)
{
    gemm_workspace_free(&ws);
}

const char *gpu_name(void)
{
    return "the CPU, emulating the CUDA backend";
}

int gpu_status(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    return 0;
}

void *gpu_alloc(size_t bytes)
{
    return malloc(bytes > 0 ? bytes : 1);
}

void gpu_free(void *device)
{
    free(device);
}

void gpu_upload(void *device, const void *host, size_t bytes)
{
    memcpy(device, host, bytes);
}

void gpu_download(void *host, const void *device, size_t bytes)
{
    memcpy(host, device, bytes);
}

void gpu_zero(void *device, size_t bytes)
{
    memset(device, 0, bytes);
}

void gpu_set_precision(GpuPrecision p)
{
    precision = p;
}

/* x rounded to bf16's 8 significant bits, to nearest, ties to even, as
   __float2bfloat16 rounds it. */
static float bf16_rounded(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) != 0x7f800000u) {      /* not inf or NaN */
        bits += 0x7fffu + ((bits >> 16) & 1);
        bits &= 0xffff0000u;
    }
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The GEMM inputs as they reach the GEMM: x itself in fp32, a rounded
   copy in one of three buffers in bf16. */
static const real *gemm_input(int which, const real *x, size_t n)
{
    static real *copy[3];
    static size_t capacity[3];
    if (precision == GPU_FP32)
        return x;
    if (n > capacity[which]) {
        free(copy[which]);
        if ((copy[which] = malloc(sizeof(real) * n)) == NULL)
            abort();
        capacity[which] = n;
    }
    for (size_t i = 0; i < n; i++)
        copy[which][i] = bf16_rounded(x[i]);
    return copy[which];
}

void gpu_gemm(int M, int N, int K, const void *A, int lda, int trans_a,
              const void *B, int ldb, int trans_b, real *C, int ldc,
              int accumulate, GpuPrecision inputs)
{
    if (inputs != GPU_FP32)               /* bf16 data: not emulated */
        abort();
    gemm(&ws, M, N, K, A, lda, trans_a, B, ldb, trans_b, C, ldc, accumulate);
}

void gpu_encoder_forward(real *out, const int *tokens, const real *wte,
                         const real *wpe, int B, int T, int C)
{
    encoder_forward(out, tokens, wte, wpe, B, T, C);
}

void gpu_encoder_backward(real *dwte, real *dwpe, const real *dout,
                          const int *tokens, int B, int T, int C)
{
    encoder_backward(dwte, dwpe, dout, tokens, B, T, C);
}

void gpu_layernorm_forward(real *out, real *mean, real *rstd,
                           const real *in, const real *w, const real *b,
                           int N, int C)
{
    layernorm_forward(out, mean, rstd, in, w, b, N, C);
}

void gpu_layernorm_backward(real *din, real *dw, real *db, const real *dout,
                            const real *in, const real *w, const real *mean,
                            const real *rstd, int N, int C)
{
    layernorm_backward(din, dw, db, dout, in, w, mean, rstd, N, C);
}

void gpu_matmul_forward(real *out, const real *in, const real *w,
                        const real *bias, int N, int C, int OC)
{
    double flops = 0;
    matmul_forward(&ws, out, gemm_input(0, in, (size_t)N * C),
                   gemm_input(1, w, (size_t)C * OC), bias, N, C, OC, &flops);
}

void gpu_matmul_backward(real *din, real *dw, real *dbias, const real *dout,
                         const real *in, const real *w, int N, int C, int OC)
{
    double flops = 0;
    matmul_backward(&ws, din, dw, dbias, gemm_input(0, dout, (size_t)N * OC),
                    gemm_input(1, in, (size_t)N * C),
                    gemm_input(2, w, (size_t)C * OC), N, C, OC, &flops);
}

void gpu_attention_forward(real *out, real *att, const real *qkv,
                           int B, int T, int C, int H)
{
    double flops = 0;
    attention_forward(out, att, qkv, B, T, C, H, &flops);
}

/* dscores is at least T long: the CPU's one row of scratch. */
void gpu_attention_backward(real *dqkv, real *dscores, const real *dout,
                            const real *qkv, const real *att,
                            int B, int T, int C, int H)
{
    double flops = 0;
    attention_backward(dqkv, dscores, dout, qkv, att, B, T, C, H, &flops);
}

void gpu_gelu_forward(real *out, const real *in, size_t n)
{
    gelu_forward(out, in, n);
}

void gpu_gelu_backward(real *din, const real *in, const real *dout,
                       size_t n)
{
    gelu_backward(din, in, dout, n);
}

void gpu_residual_forward(real *out, const real *a, const real *b, size_t n)
{
    residual_forward(out, a, b, n);
}

double gpu_crossentropy_forward(real *probs, real *losses,
                                const int *targets, int N, int V)
{
    return crossentropy_forward(probs, losses, targets, N, V);
}

void gpu_crossentropy_backward(real *dlogits, const real *probs,
                               const int *targets, int N, int V, real scale)
{
    crossentropy_backward(dlogits, probs, targets, N, V, scale);
}

void gpu_vocab_shard_max(real *row_max, const real *logits, int N, int V)
{
    vocab_shard_max(row_max, logits, N, V);
}

void gpu_vocab_shard_exp(real *probs, real *sums, const real *row_max,
                         const int *mine, int N, int V)
{
    vocab_shard_exp(probs, sums, row_max, mine, N, V);
}

double gpu_vocab_shard_loss(real *probs, real *losses, const real *sums,
                            int N, int V)
{
    return vocab_shard_loss(probs, losses, sums, N, V);
}

double gpu_sum_of_squares(const real *x, size_t count)
{
    return sum_of_squares(x, count);
}

void gpu_scale(real *x, real s, size_t count)
{
    for (size_t i = 0; i < count; i++)
        x[i] *= s;
}

void gpu_adamw_span(real *w, const real *g, real *m, real *v, size_t count,
                    real beta1, real beta2, real eps, real c1, real c2,
                    real lr, real decay)
{
    for (size_t i = 0; i < count; i++)
        adamw_element(&w[i], g[i], &m[i], &v[i], beta1, beta2, eps, c1, c2,
                      lr, decay);
}
