/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <stdlib.h>
#include <cuda_runtime.h>

extern "C" {
#include "gpu.h"
#include "../common/cli.h"
}
#include "../minigpt/number_formats.h"

/* One GEMM of the step: C (M, N) = op(A) (M, K) · op(B) (K, N). */
typedef struct {
    int M, N, K, trans_a, trans_b, accumulate;
} Gemm;

/* A linear layer's three GEMMs on one rank: in (tokens, IC) · w (IC, OC),
   then dout · w^T and in^T · dout, as matmul_forward and _backward. */
static int linear_gemms(Gemm *g, int tokens, int IC, int OC)
{
    g[0] = (Gemm){ tokens, OC, IC, 0, 0, 0 };       /* out = in w     */
    g[1] = (Gemm){ tokens, IC, OC, 0, 1, 0 };       /* din = dout w^T  */
    g[2] = (Gemm){ IC, OC, tokens, 1, 0, 1 };       /* dw += in^T dout */
    return 3;
}

/* Fill with numbers near 0.01 that are not all equal. */
__global__ void fill_kernel(float *x, uint16_t *x16, size_t n)
{
    size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    float value = 0.01f * (float)((e * 2654435761u) % 1000) / 1000.0f;
    if (x != NULL)
        x[e] = value;
    else
        x16[e] = bf16_from_float(value);
}

extern "C" int gpu_tp_block_seconds(int tokens, int hidden, int t,
                                    GpuPrecision inputs, int repeats,
                                    double *median, double *flops)
{
    int h = hidden;
    Gemm g[12];
    int n = 0;
    n += linear_gemms(g + n, tokens, h, 3 * h / t);      /* qkv: column */
    n += linear_gemms(g + n, tokens, h / t, h);          /* proj: row   */
    n += linear_gemms(g + n, tokens, h, 4 * h / t);      /* fc: column  */
    n += linear_gemms(g + n, tokens, 4 * h / t, h);      /* fcproj: row */
    size_t most = 0;                 /* the largest operand, in numbers */
    *flops = 0;
    for (int i = 0; i < n; i++) {
        size_t sizes[3] = { (size_t)g[i].M * g[i].K, (size_t)g[i].K * g[i].N,
                            (size_t)g[i].M * g[i].N };
        for (int j = 0; j < 3; j++)
            most = sizes[j] > most ? sizes[j] : most;
        *flops += 2.0 * g[i].M * g[i].N * g[i].K;
    }
    size_t width = inputs == GPU_BF16 ? 2 : 4;
    void *a = gpu_alloc(most * width), *b = gpu_alloc(most * width);
    float *c = (float *)gpu_alloc(most * sizeof(float));
    double *seconds = (double *)malloc(sizeof(double) * repeats);
    cudaEvent_t start, stop;
    int status = a == NULL || b == NULL || c == NULL || seconds == NULL;
    if (status == 0) {
        unsigned blocks = (unsigned)((most + 255) / 256);
        void *operand[2] = { a, b };
        for (int j = 0; j < 2; j++)
            fill_kernel<<<blocks, 256>>>(
                inputs == GPU_FP32 ? (float *)operand[j] : NULL,
                inputs == GPU_BF16 ? (uint16_t *)operand[j] : NULL,
                most);
        fill_kernel<<<blocks, 256>>>(c, NULL, most);
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        for (int r = -2; r < repeats; r++) {      /* two warm-up steps */
            cudaEventRecord(start);
            for (int i = 0; i < n; i++)
                gpu_gemm(g[i].M, g[i].N, g[i].K, a,
                         g[i].trans_a ? g[i].M : g[i].K, g[i].trans_a, b,
                         g[i].trans_b ? g[i].K : g[i].N, g[i].trans_b, c,
                         g[i].N, g[i].accumulate, inputs);
            cudaEventRecord(stop);
            cudaEventSynchronize(stop);
            float ms = 0;
            cudaEventElapsedTime(&ms, start, stop);
            if (r >= 0)
                seconds[r] = ms / 1e3;
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        *median = median_in_place(seconds, repeats);
    }
    gpu_free(a);
    gpu_free(b);
    gpu_free(c);
    free(seconds);
    return status;
}
