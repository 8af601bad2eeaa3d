/* Tangled from chapters/06-reference.nw and chapters/97-cuda.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#ifdef GPU_NCCL
#include <nccl.h>
#endif

extern "C" {                    /* the interface is C's */
#include "gpu.h"
}
#include "../minigpt/elementwise.h"
#include "../minigpt/number_formats.h"

static cublasHandle_t blas;
static cudaError_t first_error = cudaSuccess;
static cublasStatus_t first_blas_error = CUBLAS_STATUS_SUCCESS;
static GpuPrecision precision = GPU_FP32;
static char device_name[256];
static int device_number;                /* of the node's devices */
#ifdef GPU_NCCL
static ncclResult_t first_nccl_error = ncclSuccess;
static const char *nccl_error(ncclResult_t r);
#endif

static void check(cudaError_t e)
{
    if (e != cudaSuccess && first_error == cudaSuccess)
        first_error = e;
}

static void check_blas(cublasStatus_t s)
{
    if (s != CUBLAS_STATUS_SUCCESS
        && first_blas_error == CUBLAS_STATUS_SUCCESS)
        first_blas_error = s;
}

enum { THREADS = 256 };                          /* threads per block */
static_assert(THREADS % 32 == 0 && THREADS <= 1024,
              "block_reduce needs whole warps, at most 32 of them");

static unsigned blocks_for(size_t n)
{
    return (unsigned)((n + THREADS - 1) / THREADS);
}

/* Launch checks: the kernel's own errors surface at the next call. */
#define LAUNCH(kernel, blocks, ...)                                     \
    do {                                                                \
        if ((blocks) > 0)                                               \
            kernel<<<(blocks), THREADS>>>(__VA_ARGS__);                 \
        check(cudaGetLastError());                                      \
    } while (0)


/* The cuBLAS functions this file calls. cublasGemmEx's type is the C
   declaration's (C++ also sees an inline overload); the cast, never
   evaluated, checks that the header declares it so. */
static struct {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasGetStatusString) status_string;
    decltype(&cublasSgemm_v2) sgemm;
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t,
                              cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType,
                              int, const void *, cudaDataType, int,
                              const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
} cublas;
static_assert(sizeof static_cast<decltype(cublas.gemm_ex)>(&cublasGemmEx)
              > 0, "cublasGemmEx as the C header declares it");

#define STRING(x) #x
#define EXPANDED_STRING(x) STRING(x)
#define FIND(library, pointer, symbol)                                  \
    ((pointer = reinterpret_cast<decltype(pointer)>(                    \
          dlsym(library, symbol))) != NULL)

/* The library `file`, loaded once into *library, and find's look-ups
   in it: 0, or 2 and a one-line reason in why, which names it as what. */
static int load_library(void **library, const char *file, const char *what,
                        bool (*find)(void *), char *why, size_t why_size)
{
    if (*library != NULL)
        return 0;
    void *l = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (l == NULL || !find(l)) {
        snprintf(why, why_size, "%s: %s", what, dlerror());
        return 2;
    }
    *library = l;
    return 0;
}

/* 0 once cuBLAS is loaded; otherwise 2 and a one-line reason in why. */
static int load_cublas(char *why, size_t why_size)
{
    static void *library;
    return load_library(&library, "libcublas.so."
                        EXPANDED_STRING(CUBLAS_VER_MAJOR), "cuBLAS",
                        [](void *l) {
        return FIND(l, cublas.create, "cublasCreate_v2")
            && FIND(l, cublas.destroy, "cublasDestroy_v2")
            && FIND(l, cublas.set_math_mode, "cublasSetMathMode")
            && FIND(l, cublas.status_string, "cublasGetStatusString")
            && FIND(l, cublas.sgemm, "cublasSgemm_v2")
            && FIND(l, cublas.gemm_ex, "cublasGemmEx");
    }, why, why_size);
}
int gpu_open(int device, char *why, size_t why_size)
{
    if (load_cublas(why, why_size) != 0)
        return 2;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(why, why_size, "no CUDA device: %s",
                 e != cudaSuccess ? cudaGetErrorString(e)
                                  : "the driver sees none");
        return 2;
    }
    cudaDeviceProp p;
    device_number = device % count;
    check(cudaSetDevice(device % count));
    check(cudaGetDeviceProperties(&p, device % count));
    snprintf(device_name, sizeof device_name, "%s", p.name);
    check_blas(cublas.create(&blas));
    /* fp32 GEMMs in fp32: no silent TF32. */
    check_blas(cublas.set_math_mode(blas, CUBLAS_DEFAULT_MATH));
    return gpu_status(why, why_size);
}

void gpu_close(void)
{
    if (blas != NULL)
        cublas.destroy(blas);
    blas = NULL;
}

const char *gpu_name(void)
{
    return device_name;
}

int gpu_status(char *why, size_t why_size)
{
    check(cudaDeviceSynchronize());
    if (first_error != cudaSuccess) {
        snprintf(why, why_size, "CUDA: %s", cudaGetErrorString(first_error));
        return 2;
    }
    if (first_blas_error != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_size, "cuBLAS: %s",
                 cublas.status_string(first_blas_error));
        return 2;
    }
#ifdef GPU_NCCL
    if (first_nccl_error != ncclSuccess) {
        snprintf(why, why_size, "NCCL: %s", nccl_error(first_nccl_error));
        return 2;
    }
#endif
    return 0;
}

void *gpu_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes > 0 ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();                 /* an answer, not a failure */
        return NULL;
    }
    return p;
}

void gpu_free(void *device)
{
    if (device != NULL)
        check(cudaFree(device));
}

void gpu_upload(void *device, const void *host, size_t bytes)
{
    check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}

void gpu_download(void *host, const void *device, size_t bytes)
{
    check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

void gpu_zero(void *device, size_t bytes)
{
    check(cudaMemset(device, 0, bytes));
}

void gpu_set_precision(GpuPrecision p)
{
    precision = p;
}
/* The sum, or the largest, of one number from each thread of the block,
   returned to every thread. blockDim.x is a multiple of 32. */
template <typename X, bool largest>
__device__ X block_reduce(X x)
{
    __shared__ X partial[32];
    __shared__ X result;
    for (int o = 16; o > 0; o /= 2) {
        X y = __shfl_xor_sync(0xffffffffu, x, o);
        x = largest ? (y > x ? y : x) : x + y;
    }
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();                        /* the last call's readers */
    if (lane == 0)
        partial[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int warps = blockDim.x / 32;
        x = lane < warps ? partial[lane] : largest ? partial[0] : X(0);
        for (int o = 16; o > 0; o /= 2) {
            X y = __shfl_xor_sync(0xffffffffu, x, o);
            x = largest ? (y > x ? y : x) : x + y;
        }
        if (lane == 0)
            result = x;
    }
    __syncthreads();
    return result;
}
__global__ void encoder_forward_kernel(real *out, const int *tokens,
                                       const real *wte, const real *wpe,
                                       int T, int C, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    size_t position = e / C;                      /* b T + t */
    int i = (int)(e % C), t = (int)(position % T);
    out[e] = wte[(size_t)tokens[position] * C + i] + wpe[(size_t)t * C + i];
}

/* Rows of wte that several positions read gather by atomic adds. */
__global__ void encoder_backward_wte_kernel(real *dwte, const real *dout,
                                            const int *tokens, int C,
                                            size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    size_t position = e / C;
    atomicAdd(&dwte[(size_t)tokens[position] * C + e % C], dout[e]);
}

/* One thread per element of wpe (T, C), adding over b in the CPU's
   order. */
__global__ void encoder_backward_wpe_kernel(real *dwpe, const real *dout,
                                            int B, int T, int C)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= (size_t)T * C)
        return;
    real sum = dwpe[e];
    for (int b = 0; b < B; b++)
        sum += dout[(size_t)b * T * C + e];
    dwpe[e] = sum;
}

void gpu_encoder_forward(real *out, const int *tokens, const real *wte,
                         const real *wpe, int B, int T, int C)
{
    size_t n = (size_t)B * T * C;
    LAUNCH(encoder_forward_kernel, blocks_for(n), out, tokens, wte, wpe, T,
           C, n);
}

void gpu_encoder_backward(real *dwte, real *dwpe, const real *dout,
                          const int *tokens, int B, int T, int C)
{
    size_t n = (size_t)B * T * C;
    LAUNCH(encoder_backward_wte_kernel, blocks_for(n), dwte, dout, tokens,
           C, n);
    LAUNCH(encoder_backward_wpe_kernel, blocks_for((size_t)T * C), dwpe,
           dout, B, T, C);
}
__global__ void layernorm_forward_kernel(real *out, real *mean, real *rstd,
                                         const real *in, const real *w,
                                         const real *b, int C)
{
    const real *x = in + (size_t)blockIdx.x * C;              /* (C) */
    real *y = out + (size_t)blockIdx.x * C;                   /* (C) */
    real sum = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        sum += x[i];
    real mu = block_reduce<real, false>(sum) / (real)C;
    real squares = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        squares += (x[i] - mu) * (x[i] - mu);
    real r = layernorm_rstd(block_reduce<real, false>(squares), C);
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        y[i] = layernorm_normalise(x[i], mu, r, w[i], b[i]);
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}

/* din (N, C) is added to; one block per row. */
__global__ void layernorm_backward_input_kernel(
    real *din, const real *dout, const real *in, const real *w,
    const real *mean, const real *rstd, int C)
{
    size_t row = (size_t)blockIdx.x * C;
    const real *x = in + row, *d = dout + row;               /* (C) */
    real *dx = din + row;                                     /* (C) */
    real mu = mean[blockIdx.x], r = rstd[blockIdx.x];
    real g_sum = 0.0f, gx_sum = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        real g = d[i] * w[i];
        g_sum += g;
        gx_sum += g * layernorm_xhat(x[i], mu, r);
    }
    real g_mean = block_reduce<real, false>(g_sum) / (real)C;
    real gx_mean = block_reduce<real, false>(gx_sum) / (real)C;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        dx[i] += layernorm_input_gradient(d[i], w[i],
                                          layernorm_xhat(x[i], mu, r), r,
                                          g_mean, gx_mean);
}

/* dw and db (C) are added to; one thread per column, rows in order. */
__global__ void layernorm_backward_weights_kernel(
    real *dw, real *db, const real *dout, const real *in, const real *mean,
    const real *rstd, int N, int C)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= C)
        return;
    real w_sum = dw[i], b_sum = db[i];
    for (int n = 0; n < N; n++) {
        real d = dout[(size_t)n * C + i];
        b_sum += d;
        w_sum += d * layernorm_xhat(in[(size_t)n * C + i], mean[n], rstd[n]);
    }
    dw[i] = w_sum;
    db[i] = b_sum;
}

void gpu_layernorm_forward(real *out, real *mean, real *rstd,
                           const real *in, const real *w, const real *b,
                           int N, int C)
{
    LAUNCH(layernorm_forward_kernel, (unsigned)N, out, mean, rstd, in, w, b,
           C);
}

void gpu_layernorm_backward(real *din, real *dw, real *db, const real *dout,
                            const real *in, const real *w, const real *mean,
                            const real *rstd, int N, int C)
{
    LAUNCH(layernorm_backward_input_kernel, (unsigned)N, din, dout, in, w,
           mean, rstd, C);
    LAUNCH(layernorm_backward_weights_kernel, blocks_for((size_t)C), dw, db,
           dout, in, mean, rstd, N, C);
}
/* bf16's bits, as number_formats.h rounds on the CPU. */
__global__ void to_bf16_kernel(uint16_t *out, const real *in, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        out[e] = bf16_from_float(in[e]);              /* nearest, even */
}

/* A bf16 copy of n numbers, in one of two buffers that grow as needed. */
static const uint16_t *bf16_copy(int which, const real *x, size_t n)
{
    static uint16_t *buffer[2];
    static size_t capacity[2];
    if (n > capacity[which]) {
        gpu_free(buffer[which]);
        buffer[which] = (uint16_t *)gpu_alloc(n * sizeof **buffer);
        capacity[which] = buffer[which] != NULL ? n : 0;
        if (buffer[which] == NULL) {
            check(cudaErrorMemoryAllocation);
            return NULL;
        }
    }
    LAUNCH(to_bf16_kernel, blocks_for(n), buffer[which], x, n);
    return buffer[which];
}

/* The CPU gemm's contract on device pointers: C (M, N) = op(A) (M, K) ·
   op(B) (K, N), or += when accumulate is set, all row-major, C in fp32
   and A and B in the given precision. cuBLAS is column-major, and a
   row-major matrix read column-major is its transpose, so it computes
   C^T = op(B)^T op(A)^T: the operands swap. */
void gpu_gemm(int M, int N, int K, const void *A, int lda, int trans_a,
              const void *B, int ldb, int trans_b, real *C, int ldc,
              int accumulate, GpuPrecision inputs)
{
    const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (inputs == GPU_FP32)
        check_blas(cublas.sgemm(blas, op_b, op_a, N, M, K, &one,
                                (const float *)B, ldb, (const float *)A, lda,
                                &beta, C, ldc));
    else
        check_blas(cublas.gemm_ex(blas, op_b, op_a, N, M, K, &one, B,
                                  CUDA_R_16BF, ldb, A, CUDA_R_16BF, lda,
                                  &beta, C, CUDA_R_32F, ldc,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* The layers' GEMMs: fp32 inputs, copied to bf16 first in bf16 mode. */
static void gemm(int M, int N, int K, const real *A, int lda, int trans_a,
                 const real *B, int ldb, int trans_b, real *C, int ldc,
                 int accumulate)
{
    const void *a = A, *b = B;
    if (precision == GPU_BF16) {
        a = bf16_copy(0, A, (size_t)(trans_a ? K : M) * lda);
        b = bf16_copy(1, B, (size_t)(trans_b ? N : K) * ldb);
        if (a == NULL || b == NULL)
            return;
    }
    gpu_gemm(M, N, K, a, lda, trans_a, b, ldb, trans_b, C, ldc, accumulate,
             precision);
}

__global__ void add_bias_kernel(real *out, const real *bias, int OC,
                                size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        out[e] += bias[e % OC];
}

/* dbias (OC) is added to; one thread per column, rows in order. */
__global__ void bias_backward_kernel(real *dbias, const real *dout, int N,
                                     int OC)
{
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC)
        return;
    real sum = dbias[o];
    for (int n = 0; n < N; n++)
        sum += dout[(size_t)n * OC + o];
    dbias[o] = sum;
}

void gpu_matmul_forward(real *out, const real *in, const real *w,
                        const real *bias, int N, int C, int OC)
{
    gemm(N, OC, C, in, C, 0, w, OC, 0, out, OC, 0);     /* (N, OC) */
    if (bias != NULL)
        LAUNCH(add_bias_kernel, blocks_for((size_t)N * OC), out, bias, OC,
               (size_t)N * OC);
}

/* din (N, C) is written; dw (C, OC) and dbias (OC) are added to. */
void gpu_matmul_backward(real *din, real *dw, real *dbias, const real *dout,
                         const real *in, const real *w, int N, int C, int OC)
{
    gemm(N, C, OC, dout, OC, 0, w, OC, 1, din, C, 0);    /* dout W^T */
    gemm(C, OC, N, in, C, 1, dout, OC, 0, dw, OC, 1);    /* x^T dout */
    if (dbias != NULL)
        LAUNCH(bias_backward_kernel, blocks_for((size_t)OC), dbias, dout, N,
               OC);
}
__global__ void attention_forward_kernel(real *out, real *att,
                                         const real *qkv, int B, int T,
                                         int C, int H)
{
    int at = blockIdx.x * blockDim.x + threadIdx.x;   /* (b H + h) T + t */
    if (at >= B * H * T)
        return;
    int t = at % T, h = at / T % H, b = at / T / H;
    int hs = C / H;
    real scale = 1.0f / sqrt((real)hs);
    const real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
    real *row = att + (size_t)at * T;                         /* (T) */
    real *y = out + ((size_t)b * T + t) * C + h * hs;         /* (hs) */
    real max = -INFINITY;
    for (int t2 = 0; t2 <= t; t2++) {
        const real *k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
        real s = 0.0f;
        for (int i = 0; i < hs; i++)
            s += q[i] * k[i];
        row[t2] = s * scale;
        if (row[t2] > max)
            max = row[t2];
    }
    real sum = 0.0f;
    for (int t2 = 0; t2 <= t; t2++) {
        row[t2] = softmax_exp(row[t2], max);
        sum += row[t2];
    }
    for (int t2 = 0; t2 < T; t2++)
        row[t2] = t2 <= t ? row[t2] / sum : 0.0f;
    for (int i = 0; i < hs; i++)
        y[i] = 0.0f;
    for (int t2 = 0; t2 <= t; t2++) {
        const real *v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
        for (int i = 0; i < hs; i++)
            y[i] += row[t2] * v[i];
    }
}

/* The scores' gradients of one row into dscores (B, H, T, T). */
__global__ void attention_scores_backward_kernel(
    real *dscores, const real *dout, const real *qkv, const real *att,
    int B, int T, int C, int H)
{
    int at = blockIdx.x * blockDim.x + threadIdx.x;   /* (b H + h) T + t */
    if (at >= B * H * T)
        return;
    int t = at % T, h = at / T % H, b = at / T / H;
    int hs = C / H;
    real scale = 1.0f / sqrt((real)hs);
    const real *row = att + (size_t)at * T;                   /* (T) */
    real *ds = dscores + (size_t)at * T;                      /* (T) */
    const real *dy = dout + ((size_t)b * T + t) * C + h * hs;
    real dot = 0.0f;                                 /* p · g over the row */
    for (int t2 = 0; t2 <= t; t2++) {
        const real *v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
        real g = 0.0f;
        for (int i = 0; i < hs; i++)
            g += dy[i] * v[i];
        ds[t2] = g;
        dot += row[t2] * g;
    }
    for (int t2 = 0; t2 < T; t2++)
        ds[t2] = t2 <= t ? softmax_gradient(row[t2], ds[t2], dot, scale)
                         : 0.0f;
}

/* One thread per (b, t, c): the query's, key's and value's gradient at
   position t, column c, each a sum over the positions it met. */
__global__ void attention_qkv_backward_kernel(
    real *dqkv, const real *dscores, const real *dout, const real *qkv,
    const real *att, int B, int T, int C, int H)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= (size_t)B * T * C)
        return;
    int c = (int)(e % C), t = (int)(e / C % T), b = (int)(e / C / T);
    int h = c / (C / H);
    size_t rows = ((size_t)b * H + h) * T;       /* row (b, h, 0) */
    real dq = 0.0f, dk = 0.0f, dv = 0.0f;
    for (int t2 = 0; t2 <= t; t2++)              /* keys t met */
        dq += dscores[(rows + t) * T + t2]
            * qkv[((size_t)b * T + t2) * 3 * C + C + c];
    for (int t1 = t; t1 < T; t1++) {             /* queries that met t */
        size_t p = (rows + t1) * T + t;
        dk += dscores[p] * qkv[((size_t)b * T + t1) * 3 * C + c];
        dv += att[p] * dout[((size_t)b * T + t1) * C + c];
    }
    real *d = dqkv + ((size_t)b * T + t) * 3 * C;
    d[c] = dq;
    d[C + c] = dk;
    d[2 * C + c] = dv;
}

void gpu_attention_forward(real *out, real *att, const real *qkv,
                           int B, int T, int C, int H)
{
    LAUNCH(attention_forward_kernel, blocks_for((size_t)B * H * T), out, att,
           qkv, B, T, C, H);
}

/* dqkv (B, T, 3C) is written. */
void gpu_attention_backward(real *dqkv, real *dscores, const real *dout,
                            const real *qkv, const real *att,
                            int B, int T, int C, int H)
{
    LAUNCH(attention_scores_backward_kernel, blocks_for((size_t)B * H * T),
           dscores, dout, qkv, att, B, T, C, H);
    LAUNCH(attention_qkv_backward_kernel, blocks_for((size_t)B * T * C),
           dqkv, dscores, dout, qkv, att, B, T, C, H);
}
__global__ void gelu_forward_kernel(real *out, const real *in, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        out[e] = gelu(in[e]);
}

__global__ void gelu_backward_kernel(real *din, const real *in,
                                     const real *dout, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        din[e] = gelu_gradient(in[e], dout[e]);
}

__global__ void residual_forward_kernel(real *out, const real *a,
                                        const real *b, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        out[e] = a[e] + b[e];
}

void gpu_gelu_forward(real *out, const real *in, size_t n)
{
    LAUNCH(gelu_forward_kernel, blocks_for(n), out, in, n);
}

/* din is written. */
void gpu_gelu_backward(real *din, const real *in, const real *dout,
                       size_t n)
{
    LAUNCH(gelu_backward_kernel, blocks_for(n), din, in, dout, n);
}

void gpu_residual_forward(real *out, const real *a, const real *b, size_t n)
{
    LAUNCH(residual_forward_kernel, blocks_for(n), out, a, b, n);
}
__global__ void crossentropy_forward_kernel(real *probs, real *losses,
                                            const int *targets, int V)
{
    real *p = probs + (size_t)blockIdx.x * V;                 /* (V) */
    real max = -INFINITY;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        max = fmaxf(max, p[v]);
    max = block_reduce<real, true>(max);
    real z = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        p[v] = softmax_exp(p[v], max);
        z += p[v];
    }
    z = block_reduce<real, false>(z);
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        p[v] /= z;
    __syncthreads();
    if (threadIdx.x == 0)
        losses[blockIdx.x] = -log(p[targets[blockIdx.x]]);
}

__global__ void crossentropy_backward_kernel(real *dlogits,
                                             const real *probs,
                                             const int *targets, int V,
                                             real per_position, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        dlogits[e] = crossentropy_gradient(probs[e],
                                           (int)(e % V) == targets[e / V],
                                           per_position);
}

/* The mean of the device's losses (N), summed on the host. */
static double mean_loss(const real *losses, int N)
{
    real *host = (real *)malloc(sizeof(real) * (size_t)N);
    double sum = 0.0;
    if (host == NULL) {
        check(cudaErrorMemoryAllocation);
        return NAN;
    }
    gpu_download(host, losses, sizeof(real) * (size_t)N);
    for (int n = 0; n < N; n++)          /* in the CPU's order, in double */
        sum += host[n];
    free(host);
    return sum / N;
}

double gpu_crossentropy_forward(real *probs, real *losses,
                                const int *targets, int N, int V)
{
    LAUNCH(crossentropy_forward_kernel, (unsigned)N, probs, losses, targets,
           V);
    return mean_loss(losses, N);
}

/* dlogits (N, V) is written. */
void gpu_crossentropy_backward(real *dlogits, const real *probs,
                               const int *targets, int N, int V, real scale)
{
    size_t n = (size_t)N * V;
    LAUNCH(crossentropy_backward_kernel, blocks_for(n), dlogits, probs,
           targets, V, scale / (real)N, n);
}
__global__ void vocab_shard_max_kernel(real *row_max, const real *logits,
                                       int V)
{
    const real *p = logits + (size_t)blockIdx.x * V;          /* (V) */
    real max = -INFINITY;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        max = fmaxf(max, p[v]);
    max = block_reduce<real, true>(max);
    if (threadIdx.x == 0)
        row_max[blockIdx.x] = max;
}

__global__ void vocab_shard_exp_kernel(real *probs, real *sums,
                                       const real *row_max, const int *mine,
                                       int V)
{
    real *p = probs + (size_t)blockIdx.x * V;
    real z = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        p[v] = softmax_exp(p[v], row_max[blockIdx.x]);
        z += p[v];
    }
    z = block_reduce<real, false>(z);           /* which synchronises */
    if (threadIdx.x == 0) {
        int target = mine[blockIdx.x];          /* -1: another rank's */
        sums[2 * blockIdx.x] = z;
        sums[2 * blockIdx.x + 1] = target >= 0 ? p[target] : 0.0f;
    }
}

__global__ void vocab_shard_loss_kernel(real *probs, real *losses,
                                        const real *sums, int V)
{
    real *p = probs + (size_t)blockIdx.x * V;
    real z = sums[2 * blockIdx.x];
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        p[v] /= z;
    if (threadIdx.x == 0)
        losses[blockIdx.x] = -log(sums[2 * blockIdx.x + 1] / z);
}

void gpu_vocab_shard_max(real *row_max, const real *logits, int N, int V)
{
    LAUNCH(vocab_shard_max_kernel, (unsigned)N, row_max, logits, V);
}

void gpu_vocab_shard_exp(real *probs, real *sums, const real *row_max,
                         const int *mine, int N, int V)
{
    LAUNCH(vocab_shard_exp_kernel, (unsigned)N, probs, sums, row_max, mine,
           V);
}

double gpu_vocab_shard_loss(real *probs, real *losses, const real *sums,
                            int N, int V)
{
    LAUNCH(vocab_shard_loss_kernel, (unsigned)N, probs, losses, sums, V);
    return mean_loss(losses, N);
}
__global__ void sum_of_squares_kernel(double *sum, const real *x, size_t n)
{
    double mine = 0.0;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
         e += (size_t)gridDim.x * blockDim.x)
        mine += (double)x[e] * x[e];
    mine = block_reduce<double, false>(mine);
    if (threadIdx.x == 0)
        atomicAdd(sum, mine);
}

__global__ void scale_kernel(real *x, real s, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        x[e] *= s;
}

__global__ void adamw_kernel(real *w, const real *g, real *m, real *v,
                             size_t n, real beta1, real beta2, real eps,
                             real c1, real c2, real lr, real decay)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e < n)
        adamw_element(&w[e], g[e], &m[e], &v[e], beta1, beta2, eps, c1, c2,
                      lr, decay);
}

double gpu_sum_of_squares(const real *x, size_t count)
{
    static double *sum;                          /* one number, reused */
    double host = 0.0;
    if (sum == NULL && (sum = (double *)gpu_alloc(sizeof *sum)) == NULL) {
        check(cudaErrorMemoryAllocation);
        return NAN;
    }
    gpu_zero(sum, sizeof *sum);
    unsigned blocks = blocks_for(count);
    LAUNCH(sum_of_squares_kernel, blocks < 1024 ? blocks : 1024, sum, x,
           count);
    gpu_download(&host, sum, sizeof host);
    return host;
}

void gpu_scale(real *x, real s, size_t count)
{
    LAUNCH(scale_kernel, blocks_for(count), x, s, count);
}

void gpu_adamw_span(real *w, const real *g, real *m, real *v, size_t count,
                    real beta1, real beta2, real eps, real c1, real c2,
                    real lr, real decay)
{
    LAUNCH(adamw_kernel, blocks_for(count), w, g, m, v, count, beta1, beta2,
           eps, c1, c2, lr, decay);
}
void gpu_device_id(char *id, size_t size)
{
    if (cudaDeviceGetPCIBusId(id, (int)size, device_number) != cudaSuccess)
        snprintf(id, size, "device %d", device_number);
}

#ifdef GPU_NCCL
static struct {                          /* NCCL's functions, loaded */
    decltype(&ncclGetUniqueId) unique_id;
    decltype(&ncclCommInitRank) init_rank;
    decltype(&ncclAllReduce) all_reduce;
    decltype(&ncclCommDestroy) destroy;
    decltype(&ncclGetErrorString) error_string;
} nccl;

static const char *nccl_error(ncclResult_t r)
{
    return nccl.error_string(r);
}

struct GpuComm {
    ncclComm_t comm;
};

int gpu_collectives(char *why, size_t why_size)
{
    static void *library;
    return load_library(&library, "libnccl.so." EXPANDED_STRING(NCCL_MAJOR),
                        "NCCL", [](void *l) {
        return FIND(l, nccl.unique_id, "ncclGetUniqueId")
            && FIND(l, nccl.init_rank, "ncclCommInitRank")
            && FIND(l, nccl.all_reduce, "ncclAllReduce")
            && FIND(l, nccl.destroy, "ncclCommDestroy")
            && FIND(l, nccl.error_string, "ncclGetErrorString");
    }, why, why_size);
}

GpuComm *gpu_comm_open(MPI_Comm comm, char *why, size_t why_size)
{
    struct { ncclUniqueId id; int made; } offer = {};
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    if (rank == 0)
        offer.made = nccl.unique_id(&offer.id) == ncclSuccess;
    MPI_Bcast(&offer, (int)sizeof offer, MPI_BYTE, 0, comm);
    GpuComm *c = static_cast<GpuComm *>(malloc(sizeof *c));
    ncclResult_t r = offer.made && c != NULL
                   ? nccl.init_rank(&c->comm, ranks, offer.id, rank)
                   : ncclSystemError;
    if (r != ncclSuccess) {
        snprintf(why, why_size, "NCCL: %s", offer.made && c != NULL
                 ? nccl_error(r) : "no unique id, or no memory");
        free(c);
        return NULL;
    }
    return c;
}

void gpu_all_reduce(GpuComm *c, real *x, size_t n, GpuReduction op)
{
    static_assert(sizeof(real) == sizeof(float), "the GPU's real is fp32");
    ncclResult_t r = nccl.all_reduce(x, x, n, ncclFloat,
                                     op == GPU_MAX ? ncclMax : ncclSum,
                                     c->comm, 0);
    if (r != ncclSuccess && first_nccl_error == ncclSuccess)
        first_nccl_error = r;
}

void gpu_comm_close(GpuComm *c)
{
    nccl.destroy(c->comm);
    free(c);
}
#else
struct GpuComm {
    int none;
};

int gpu_collectives(char *why, size_t why_size)
{
    snprintf(why, why_size, "NCCL: nccl.h was not found when this program "
             "was built");
    return 1;
}

GpuComm *gpu_comm_open(MPI_Comm, char *why, size_t why_size)
{
    gpu_collectives(why, why_size);
    return NULL;
}

void gpu_all_reduce(GpuComm *, real *, size_t, GpuReduction)
{
    abort();                       /* no communicator was ever opened */
}

void gpu_comm_close(GpuComm *)
{
}
#endif
