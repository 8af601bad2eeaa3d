/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#ifndef GPU_H
#define GPU_H
#include <stddef.h>
#include <mpi.h>

typedef float real;        /* the GPU backend is single precision */

/* 0 when a CUDA device is there (then it is this process's); otherwise 2
   and a one-line reason in why. */
int gpu_open(int device, char *why, size_t why_size);
void gpu_close(void);
/* The device's name, as the driver gives it ("NVIDIA H200", ...). */
const char *gpu_name(void);
/* 0 while every call so far has worked; else 2 and why. */
int gpu_status(char *why, size_t why_size);

void *gpu_alloc(size_t bytes);                      /* NULL when it cannot */
void gpu_free(void *device);
void gpu_upload(void *device, const void *host, size_t bytes);
void gpu_download(void *host, const void *device, size_t bytes);
void gpu_zero(void *device, size_t bytes);

typedef enum { GPU_FP32, GPU_BF16 } GpuPrecision;
/* What the GEMMs read: fp32, or bf16 copies of both inputs (fp32
   accumulation and output either way). */
void gpu_set_precision(GpuPrecision precision);

/* C (M, N) = op(A) (M, K) · op(B) (K, N), or += when accumulate is set,
   row-major as the CPU's gemm; A and B are fp32, or bf16 (2 bytes each)
   when inputs is GPU_BF16; C is fp32, and so is the accumulation. */
void gpu_gemm(int M, int N, int K, const void *A, int lda, int trans_a,
              const void *B, int ldb, int trans_b, real *C, int ldc,
              int accumulate, GpuPrecision inputs);

/* The layers of Chapter 6, on device pointers, with the CPU functions'
   shapes and conventions. */
void gpu_encoder_forward(real *out, const int *tokens, const real *wte,
                         const real *wpe, int B, int T, int C);
void gpu_encoder_backward(real *dwte, real *dwpe, const real *dout,
                          const int *tokens, int B, int T, int C);
void gpu_layernorm_forward(real *out, real *mean, real *rstd,
                           const real *in, const real *w, const real *b,
                           int N, int C);
void gpu_layernorm_backward(real *din, real *dw, real *db, const real *dout,
                            const real *in, const real *w, const real *mean,
                            const real *rstd, int N, int C);
void gpu_matmul_forward(real *out, const real *in, const real *w,
                        const real *bias, int N, int C, int OC);
void gpu_matmul_backward(real *din, real *dw, real *dbias, const real *dout,
                         const real *in, const real *w, int N, int C, int OC);
void gpu_attention_forward(real *out, real *att, const real *qkv,
                           int B, int T, int C, int H);
/* dscores (B, H, T, T) is scratch. */
void gpu_attention_backward(real *dqkv, real *dscores, const real *dout,
                            const real *qkv, const real *att,
                            int B, int T, int C, int H);
void gpu_gelu_forward(real *out, const real *in, size_t n);
void gpu_gelu_backward(real *din, const real *in, const real *dout,
                       size_t n);
void gpu_residual_forward(real *out, const real *a, const real *b, size_t n);
/* The mean loss, summed on the host in double as the CPU does. */
double gpu_crossentropy_forward(real *probs, real *losses,
                                const int *targets, int N, int V);
void gpu_crossentropy_backward(real *dlogits, const real *probs,
                               const int *targets, int N, int V, real scale);
/* Chapter 9's steps of the cross-entropy over a split vocabulary,
   vocab_shard_max, vocab_shard_exp and vocab_shard_loss, on this rank's
   logits (N, V); the caller all-reduces between them. */
void gpu_vocab_shard_max(real *row_max, const real *logits, int N, int V);
void gpu_vocab_shard_exp(real *probs, real *sums, const real *row_max,
                         const int *mine, int N, int V);
double gpu_vocab_shard_loss(real *probs, real *losses, const real *sums,
                            int N, int V);
double gpu_sum_of_squares(const real *x, size_t count);
void gpu_scale(real *x, real s, size_t count);
void gpu_adamw_span(real *w, const real *g, real *m, real *v, size_t count,
                    real beta1, real beta2, real eps, real c1, real c2,
                    real lr, real decay);

/* Collectives on device arrays over the ranks of an MPI communicator,
   each rank on a GPU of its own: NCCL's. */
typedef struct GpuComm GpuComm;
typedef enum { GPU_SUM, GPU_MAX } GpuReduction;
/* 0 when this process can have them (NCCL's header was found when it
   was built, and its library loads); else a one-line reason and 1 when
   the header was not found, 2 when the library does not load. */
int gpu_collectives(char *why, size_t why_size);
/* The device gpu_open took, as a name that is the same GPU's in every
   process of the node: its PCI bus id, since a process that sees only
   its own GPU (CUDA_VISIBLE_DEVICES) numbers it 0, whichever it is. */
void gpu_device_id(char *id, size_t size);
/* A communicator of comm's ranks, opened together by all of them once
   gpu_collectives has answered 0 on each: rank 0 makes the unique id,
   MPI_Bcast sends it. NULL, and a one-line reason, when it fails. */
GpuComm *gpu_comm_open(MPI_Comm comm, char *why, size_t why_size);
/* x (n), device, in place: each element the sum, or the largest, of the
   communicator's ranks' elements. */
void gpu_all_reduce(GpuComm *comm, real *x, size_t n, GpuReduction op);
void gpu_comm_close(GpuComm *comm);
#endif
