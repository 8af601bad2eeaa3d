/* Tangled from chapters/06-reference.nw, chapters/07-data-parallel.nw, chapters/08-sharded-state.nw, chapters/09-tensor-parallel.nw, chapters/10-pipeline.nw, chapters/11c-buckets.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/98-pipeline-plumbing.nw, chapters/99b-mesh-plumbing.nw, chapters/99c-buckets.nw and chapters/99gp-precision-plumbing.nw; edit the chapters, not this file. */
#ifndef MINIGPT_H
#define MINIGPT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/cli.h"
#include "number_formats.h"

/* The model's numbers: single precision, or double in the twin binary
   minigpt-fp64 that the gradient check uses (built with -DMINIGPT_FP64). */
#ifdef MINIGPT_FP64
typedef double real;
#else
typedef float real;
#endif

typedef struct {
    int layers;   /* L */
    int hidden;   /* C, divisible by heads */
    int heads;    /* H */
    int seq;      /* T, the context length */
    int vocab;    /* V */
} ModelConfig;
typedef struct {
    uint64_t state;
} Rng;

uint64_t rng_next(Rng *r);
float rng_uniform(Rng *r);             /* in [0, 1) */
float rng_normal(Rng *r);              /* mean 0, standard deviation 1 */
int rng_below(Rng *r, int n);          /* in [0, n) */
enum { LEXICON_WORDS = 24, WORD_SUCCESSORS = 3, MIN_VOCAB = 8 };

/* Tokens 0, 1 and 2 are the full stop, the space and the copy bar; the
   letters of the words are tokens 3 to V - 1. */
enum { TOKEN_STOP = 0, TOKEN_SPACE = 1, TOKEN_BAR = 2, FIRST_LETTER = 3 };

typedef struct {
    int vocab;
    int word_length[LEXICON_WORDS];
    int word[LEXICON_WORDS][5];                   /* letters of each word */
    int successor[LEXICON_WORDS][WORD_SUCCESSORS];
} Language;

void language_init(Language *lang, int vocab, uint64_t seed);
/* Fill tokens[0..n) with the start of a fresh stretch of text. */
void language_sample(const Language *lang, Rng *rng, int *tokens, int n);
/* Entropy estimates in nats per token, from a sample of n tokens. */
void language_entropy(const Language *lang, uint64_t seed, int n,
                      double *unigram, double *bigram);
char token_char(int token);
enum { PARAM_TENSORS = 17 };

typedef struct {
    real *wte;        /* (V, C)     token embedding                 */
    real *wpe;        /* (T, C)     position embedding              */
    real *ln1_w;      /* (L, C)     first layer norm, scale         */
    real *ln1_b;      /* (L, C)                       shift         */
    real *qkv_w;      /* (L, C, 3C) query, key and value projection */
    real *qkv_b;      /* (L, 3C)                                    */
    real *proj_w;     /* (L, C, C)  attention output projection     */
    real *proj_b;     /* (L, C)                                     */
    real *ln2_w;      /* (L, C)     second layer norm               */
    real *ln2_b;      /* (L, C)                                     */
    real *fc_w;       /* (L, C, 4C) MLP up                          */
    real *fc_b;       /* (L, 4C)                                    */
    real *fcproj_w;   /* (L, 4C, C) MLP down                        */
    real *fcproj_b;   /* (L, C)                                     */
    real *lnf_w;      /* (C)        final layer norm                */
    real *lnf_b;      /* (C)                                        */
    real *head_w;     /* (C, V)     language-model head             */
} Params;
enum { ACT_TENSORS = 20 };

typedef struct {
    real *encoded;    /* (B, T, C)      embeddings, the stream's start */
    real *ln1;        /* (L, B, T, C)   first layer norm output        */
    real *ln1_mean;   /* (L, B, T)                                     */
    real *ln1_rstd;   /* (L, B, T)      1 / standard deviation         */
    real *qkv;        /* (L, B, T, 3C)  queries, keys, values          */
    real *att;        /* (L, B, H, T, T) attention probabilities       */
    real *atty;       /* (L, B, T, C)   attention output, per head     */
    real *res2;       /* (L, B, T, C)   stream after attention         */
    real *ln2;        /* (L, B, T, C)   second layer norm output       */
    real *ln2_mean;   /* (L, B, T)                                     */
    real *ln2_rstd;   /* (L, B, T)                                     */
    real *fch;        /* (L, B, T, 4C)  MLP hidden, before GELU        */
    real *fch_gelu;   /* (L, B, T, 4C)  MLP hidden, after GELU         */
    real *res3;       /* (L, B, T, C)   stream after the block         */
    real *lnf;        /* (B, T, C)      final layer norm output        */
    real *lnf_mean;   /* (B, T)                                        */
    real *lnf_rstd;   /* (B, T)                                        */
    real *probs;      /* (B, T, V)      logits, then probabilities     */
    real *losses;     /* (B, T)         loss at each position          */
    real *scratch;    /* (B, T, C)      a temporary, not kept          */
} Activations;
typedef struct {
    real *dres;       /* (B, T, C)   gradient of the residual stream */
    real *dtmp;       /* (B, T, C)   gradient of a layer norm output  */
    real *dqkv;       /* (B, T, 3C)                                   */
    real *dfch;       /* (B, T, 4C)                                   */
    real *dfch_gelu;  /* (B, T, 4C)                                   */
    real *dlogits;    /* (B, T, V)                                    */
    real *datt_row;   /* (T)         one row of attention gradients   */
} Gradients;
typedef enum {
    OP_EMBED, OP_LAYERNORM, OP_MATMUL, OP_ATTENTION, OP_GELU, OP_RESIDUAL,
    OP_LOSS, OP_OPTIMIZER, OPS
} Op;

typedef struct {
    double seconds[OPS][2];   /* [op][0 forward, 1 backward] */
    double flops;             /* counted multiply-add FLOPs  */
    double waited;            /* of those seconds, waiting on other ranks
                                 (Chapter 11's clock)         */
} Tally;

typedef struct {
    real *a;                 /* a packed panel of A                 */
    real *b;                 /* a packed panel of B                 */
} GemmWorkspace;

#include "../common/pipeline_schedule.h"

enum { STAGE_EMBEDDINGS = 1, STAGE_HEAD = 2 };   /* the model's two ends */

typedef struct {          /* the blocks a model holds, and its ends      */
    int layers;           /* blocks held: L, or a stage's L / P          */
    int chunk_layers;     /* blocks one pass runs: a chunk, L / (P v)    */
    unsigned ends;        /* STAGE_EMBEDDINGS, STAGE_HEAD: which it has  */
} StageShape;

typedef struct {
    ModelConfig config;
    int batch;                       /* B the activations are sized for */
    size_t param_size[PARAM_TENSORS];
    size_t params_count;             /* N */
    real *params_memory;            /* (N)                      */
    real *grads_memory;             /* (N)                      */
    real *m_memory;                 /* (N) Adam's first moment  */
    real *v_memory;                 /* (N) Adam's second moment */
    size_t act_size[ACT_TENSORS];
    size_t acts_count;
    real *acts_memory;
    Activations acts;
    size_t grad_acts_count;
    real *grad_acts_memory;
    Gradients grad_acts;
    GemmWorkspace pack;
    Tally tally;
    real loss;                      /* mean loss of the last forward */
    /* Called when the backward pass has finished a unit's gradients; NULL when
       nobody listens. The context is given to every hook. */
    void (*gradients_ready)(void *context, int unit);
    void *hook_context;
    int last_piece;                 /* the batch's last micro-batch is running */
    /* Where the passes find a unit's weights and put its gradients; when NULL,
       in the whole-model arrays. What they return is valid until the next call
       of the same hook, and the gradients they point to must start at zero or
       hold what earlier micro-batches added: the pass adds into them. */
    Params (*weights_needed)(void *context, int unit);
    Params (*gradients_needed)(void *context, int unit);
    struct TensorParallel *tp;      /* the tensor-parallel group; NULL: whole */
    ModelConfig whole;              /* the whole model's shape; config's
                                       layers are the blocks this one holds */
    StageShape shape;
    struct PipelineStage *pp;       /* the pipeline stage; NULL: whole      */
    real *deferred;                 /* zb-h1: where B keeps the products'
                                       output gradients for W; NULL: none   */
    NumberFormat format;          /* Chapter 12: what each op's output is
                                     rounded to; fp32: nothing             */
    struct GradientHistogram *histogram;  /* counting gradients, or NULL   */
    struct MixedPrecision *fp8;   /* fp8: the state that quantizes the linear
                                     layers' inputs; NULL otherwise        */
} Model;

extern const char *const param_names[PARAM_TENSORS];
extern const char *const act_names[ACT_TENSORS];

enum {                      /* the state a model holds in full */
    HOLDS_WEIGHTS = 1, HOLDS_GRADIENTS = 2, HOLDS_MOMENTS = 4, HOLDS_ALL = 7
};
typedef enum {              /* one array of the training state */
    STATE_WEIGHTS, STATE_GRADIENTS, STATE_FIRST_MOMENT, STATE_SECOND_MOMENT
} StateKind;

/* Allocate a model for batches of `batch` sequences, holding the parts of
   the training state named in `holds`; 0 on success. */
int model_init(Model *m, ModelConfig config, int batch, unsigned holds);
void model_free(Model *m);
/* The initial weights, into `params` (N): m->params_memory, or elsewhere. */
void model_init_weights(const Model *m, real *params, uint64_t seed);
void model_zero_grads(Model *m);
double seconds_now(void);
/* Unit u's tensors packed one after another, in tensor order, in a buffer
   of the unit's size. */
Params unit_packed(const Model *m, real *packed, int unit);
/* Tensor t's part of unit u is count[t] numbers from offset[t] of the flat
   array of N; count[t] is 0 where the tensor has no part in the unit. */
void unit_layout(const Model *m, int unit, size_t *offset, size_t *count);
/* Unit u's tensors where they lie in a flat array of N. */
Params unit_view(const Model *m, real *flat, int unit);
size_t unit_size(const Model *m, int unit);
/* The t-th pointer of a Params, t in 0 .. PARAM_TENSORS - 1. */
real **param_tensor(Params *p, int t);
/* A pipeline stage's part of a model of shape `config`, for batches of
   `batch`; model_init_split is the shape of every block and both ends. */
int model_init_stage(Model *m, ModelConfig config, const StageShape *shape,
                     int batch, unsigned holds,
                     struct TensorParallel *tp);
/* zb-h1's W: the products' weight gradients of blocks first .. first +
   count - 1 from the output gradients B kept in m->deferred. */
void stage_weight_backward(Model *m, int B, int first, int count);
/* Point m's activations at a block of acts_count numbers: a slot. */
void model_use_activations(Model *m, real *block);
/* The whole model's tensor sizes, for a config of the whole model. */
void whole_param_sizes(const ModelConfig *c, size_t *size);
/* A stage's part (params_count) into the whole model's array
   (whole_params_count), on every rank of the pipeline; and back. */
void pipeline_gather(const Model *m, const real *local, real *whole);
void pipeline_scatter(const Model *m, const real *whole, real *local);
/* C (M, N) = op(A) (M, K) · op(B) (K, N), or += when accumulate is set.
   op(A) is A, or A transposed when trans_a is set; likewise B. */
void gemm(GemmWorkspace *w, int M, int N, int K,
          const real *A, int lda, int trans_a,
          const real *B, int ldb, int trans_b,
          real *C, int ldc, int accumulate);
void gemm_workspace_init(GemmWorkspace *w);
void gemm_workspace_free(GemmWorkspace *w);
void encoder_forward(real *out, const int *tokens, const real *wte,
                     const real *wpe, int B, int T, int C);
void encoder_backward(real *dwte, real *dwpe, const real *dout,
                      const int *tokens, int B, int T, int C);
void layernorm_forward(real *out, real *mean, real *rstd, const real *in,
                       const real *w, const real *b, int N, int C);
void layernorm_backward(real *din, real *dw, real *db, const real *dout,
                        const real *in, const real *w, const real *mean,
                        const real *rstd, int N, int C);
void matmul_forward(GemmWorkspace *ws, real *out, const real *in,
                    const real *w, const real *bias, int N, int C, int OC,
                    double *flops);
void matmul_backward(GemmWorkspace *ws, real *din, real *dw, real *dbias,
                     const real *dout, const real *in, const real *w,
                     int N, int C, int OC, double *flops);
void attention_forward(real *out, real *att, const real *qkv,
                       int B, int T, int C, int H, double *flops);
void attention_backward(real *dqkv, real *datt_row, const real *dout,
                        const real *qkv, const real *att,
                        int B, int T, int C, int H, double *flops);
void gelu_forward(real *out, const real *in, size_t n);
void gelu_backward(real *din, const real *in, const real *dout, size_t n);
void residual_forward(real *out, const real *a, const real *b, size_t n);
double crossentropy_forward(real *probs, real *losses, const int *targets,
                            int N, int V);
void crossentropy_backward(real *dlogits, const real *probs,
                           const int *targets, int N, int V, real scale);
/* Run `call` and add its time to the tally of `op` in `direction`, and
   what it spent waiting on other ranks to the tally's waited. */
#define TIMED(m, op, direction, call)                                   \
    do {                                                                \
        double started_ = seconds_now();                                \
        double waiting_ = step_clock_waiting();                         \
        call;                                                           \
        (m)->tally.seconds[op][direction] += seconds_now() - started_;  \
        (m)->tally.waited += step_clock_waiting() - waiting_;           \
    } while (0)

/* Mean loss over the B × T positions; inputs and targets are (B, T). */
double model_forward(Model *m, const int *inputs, const int *targets, int B);
/* Add the gradient of scale × (mean loss) to m->grads. */
void model_backward(Model *m, const int *inputs, const int *targets, int B,
                    real scale);
/* The same for blocks first .. first + count - 1 alone, after the
   embeddings when inputs is not NULL and before the head and the loss when
   targets is not NULL (0 is returned without them; backward, m's dres
   then holds the gradient of the last block's output). */
double stage_forward(Model *m, const int *inputs, const int *targets,
                     int B, int first, int count);
void stage_backward(Model *m, const int *inputs, const int *targets, int B,
                    real scale, int first, int count);
typedef struct {
    real lr, beta1, beta2, eps, weight_decay, clip;
} AdamW;

real learning_rate(real peak, int step, int steps);
/* The warm-up of a schedule of `steps` steps: a tenth of it, at least 1. */
int warmup_steps(int steps);
double sum_of_squares(const real *x, size_t count);
/* What to multiply a gradient by so that its norm, sqrt(squares), is at
   most `clip`; sets *norm to that norm. */
real clip_factor(double squares, real clip, real *norm);
/* Scale the gradients to norm at most `clip`; returns the norm before. */
real clip_gradients(Model *m, real clip);
/* Whether tensor t's weights decay: matrices and embeddings do. */
int decays(int t);
/* One AdamW step on `count` weights w from their gradients g, updating the
   moments mo and v; `step` counts from 1 for the bias correction. */
void adamw_span(const AdamW *opt, real lr, int step, real decay, real *w,
                const real *g, real *mo, real *v, size_t count);
/* One AdamW step of the whole model. */
void adamw_update(Model *m, const AdamW *opt, real lr, int step);
typedef struct {
    ModelConfig config;
    int batch;               /* sequences per optimizer step         */
    uint64_t seed;           /* the language and the initial weights */
    uint64_t step;           /* optimizer steps taken                */
    uint64_t sequences;      /* training sequences consumed          */
    Rng data;                /* where the data stream continues      */
    uint64_t steps;          /* the schedule's length, --steps       */
    uint64_t warmup;         /* its warm-up, in steps                */
    AdamW optimizer;         /* the peak rate and Adam's constants   */
} TrainingState;

/* Every shard of the checkpoint at `path` into a model that holds the
   whole state, and the run's state into *s; 0, or -1 with a one-line
   reason in `why`. */
int checkpoint_load_whole(const char *path, Model *whole, TrainingState *s,
                          char *why, size_t why_size);
/* FLOP/s of one core doing nothing but fused multiply-adds. */
double measure_peak_flops(double seconds);
/* The processor's name, as /proc/cpuinfo gives it. */
const char *cpu_name(char *buffer, size_t size);
#include "../comm/mesh.h"

static inline MPI_Datatype real_type(void)
{
    return float_type(sizeof(real));
}

enum {                    /* the kinds of bytes a rank holds */
    HELD_WEIGHTS, HELD_GRADIENTS, HELD_OPTIMIZER, HELD_BUFFERS, HELD_KINDS
};

typedef struct {
    int tensor;               /* which parameter tensor                 */
    size_t full;              /* where it starts in the flat array of N */
    size_t unit_at;           /* ... in its unit, packed                */
    size_t shard;             /* ... in this rank's shard               */
    size_t count;
} ShardRun;
typedef struct {
    int unit;                 /* the unit whose backward pass finishes it */
    int bucket;               /* the bucket it travels in                 */
    size_t full;              /* where it lies in the flat gradient       */
    size_t packed;            /* ... in the buffer of the buckets         */
    size_t count;
} GradientSlice;

typedef struct {
    size_t packed, count;     /* its numbers in the buffer of the buckets */
    int slices;               /* how many slices it holds                 */
    int waiting;              /* ... and how many are not finished yet    */
} Bucket;
typedef struct DataParallel DataParallel;

/* One way of holding the training state over the data axis's ranks. */
typedef struct {
    const char *name;         /* how the report names it              */
    unsigned holds;           /* what the model keeps whole: HOLDS_*  */
    /* Allocate what the strategy keeps beside the model; 0 or -1. */
    int (*init)(DataParallel *dp);
    /* Before a batch's gradient. */
    void (*begin_step)(DataParallel *dp);
    /* The model's hooks: where a unit's weights are and its gradient
       goes, and who hears that it is finished; NULL: the model's own
       arrays, and nobody. */
    Params (*weights_needed)(void *dp, int unit);
    Params (*gradients_needed)(void *dp, int unit);
    void (*gradients_ready)(void *dp, int unit);
    /* After the backward passes: what this rank owns of the gradient
       becomes the sum over the ranks. */
    void (*finish_gradients)(DataParallel *dp);
    /* Scale the gradient by the clip's factor and take AdamW's step;
       the weights the model holds whole are whole again after it. */
    void (*step)(DataParallel *dp, const AdamW *opt, real lr, int step,
                 real scale);
    /* One array of the state, whole, on every rank of the data axis. */
    void (*collect)(DataParallel *dp, StateKind kind, real *into);
    /* Keep this rank's part of a whole array of the state. */
    void (*scatter)(DataParallel *dp, StateKind kind, const real *whole);
    /* The bytes this rank holds, by kind, into dp->held. */
    void (*account)(DataParallel *dp);
    void (*free)(DataParallel *dp);
} ShardingStrategy;

struct DataParallel {
    const ShardingStrategy *strategy;   /* chosen once, from the flags  */
    int rank, ranks;          /* along the mesh's data axis               */
    MPI_Comm comm, world;     /* the data axis's ranks, and every rank    */
    int ring;                 /* 1: this chapter's ring; 0: MPICH         */
    int overlap;              /* start each block's all-reduce when ready */
    int communicate;          /* 0: skip the gradient's all-reduce        */
    Model *model;
    MPI_Request *requests;    /* the all-reduces in flight                */
    MPI_Status *statuses;     /* their outcomes, which we do not read     */
    int pending, capacity;
    real *scratch;            /* the ring's: one chunk of what it reduces */
    double exposed;           /* s: waited after the backward passes      */
    int steps;                /* steps whose gradients were combined      */
    double last_begin;        /* MPI_Wtime when the last step began       */
    double *intervals;        /* s: from each step's start to the next's  */
    int intervals_count, intervals_capacity;
    double step_median;       /* s: their median after the warm-up,       */
                              /* the slowest rank's                       */
    int identical;            /* every rank ended with the same weights   */
    ShardRun *runs;           /* what this rank owns, in pieces             */
    int owned;                /* how many runs                              */
    int norm_counts[PARAM_TENSORS];  /* 1: this rank's copy of tensor t
                                        counts in the norm; 0: another's does */
    int stage;                /* ZeRO stage; 0 keeps everything whole       */
    uint64_t seed;            /* of the initial weights                     */
    int units;                /* L + 2: embeddings, blocks, head            */
    size_t *unit_count;       /* (units) numbers in each unit               */
    size_t *chunk_at;         /* (units) where this rank's chunk begins in
                                 the packed unit                            */
    size_t *shard_at;         /* (units + 1) where it lies in the shard     */
    int *unit_runs;           /* (units + 1) first run of each unit         */
    size_t shard_count, largest_unit;
    real *weight_shard;       /* (shard_count) stage 3                      */
    real *grad_shard;         /* (shard_count) stages 2 and 3               */
    real *m_shard, *v_shard;  /* (shard_count) Adam's moments, stages 1-3   */
    real *gathered;           /* (largest_unit) a unit's weights, stage 3   */
    real *unit_buffer;        /* (largest_unit) a unit being reduced, or
                                 gathered after the step (stages 1, 2)      */
    double held[HELD_KINDS];  /* bytes held, by kind                        */
    double (*held_by_rank)[HELD_KINDS];  /* on rank 0, every rank's         */
    double sent;              /* bytes sent by the steps                    */
    unsigned long long sent_mark;
    double sent_most;         /* the most any rank sent per step            */
    double bucket_bytes;      /* --bucket-mb in bytes; 0: no buckets        */
    GradientSlice *slices;    /* (slice_count) in the backward pass's order */
    int slice_count;
    Bucket *buckets;          /* (bucket_count)                             */
    int bucket_count;
    real *packed;             /* (N) the slices, one after another          */
    double communicated;      /* s: on the data axis, since the start      */
    double communicated_mark; /* ... when the step began                   */
    double *waits;            /* s: each step's, beside its interval       */
    int waits_count, waits_capacity;
    double wait_median;       /* s: the median after the warm-up, mean of
                                 the ranks'                                */
    NumberFormat format;      /* Chapter 12: --precision                    */
    int fp32_grads;           /* --fp32-grads                               */
    int loss_scaling;         /* 0: --no-loss-scaling, S stays as it starts */
    double initial_scale;     /* --loss-scale, or the format's default      */
    int scale_window;         /* --loss-scale-window                        */
    const char *histogram_path;           /* --grad-histogram, until written */
    struct MixedPrecision *mixed;         /* the 16-bit state; NULL in fp32  */
    int fp8;                  /* --precision fp8: format is bf16, and the
                                 blocks' linear layers read 8 bits          */
};

extern const ShardingStrategy replicated_alone, replicated_skipped,
    replicated_blocking, replicated_overlapped, replicated_ring;
/* Set up the ranks of the mesh's data axis, and the strategy's state. */
int data_parallel_init(DataParallel *dp, Model *m, const Mesh *mesh);
void data_parallel_free(DataParallel *dp);
/* 1 when every rank holds the same weights, 0 when not, -1 when no rank
   holds them all (Chapter 8's stage 3). */
int data_parallel_identical(DataParallel *dp);
/* After training, on every rank: the median step time, into step_median. */
void data_parallel_step_time(DataParallel *dp);
/* An entry with nothing to do. */
void do_nothing(DataParallel *dp);
/* Before a batch's gradient: the strategy's start and its hooks. */
void data_parallel_begin(DataParallel *dp);
/* After it: the gradient summed, and the loss averaged, over the ranks. */
void data_parallel_combine(DataParallel *dp, double *loss);
/* Clip and step; returns the gradient's norm before clipping. */
real data_parallel_step(DataParallel *dp, const AdamW *opt, real lr,
                        int step);
/* The whole gradient's squared norm, from what each rank owns of it. */
double gradient_squares(DataParallel *dp);
/* Where a run's gradient lies: in the shard, or in the model's array. */
real *gradient_of_run(const DataParallel *dp, const ShardRun *run);
/* Add the seconds since started (an MPI_Wtime) to the step clock's data
   axis and to the rank's own total; returns them. */
double data_parallel_waited(DataParallel *dp, double started);
/* After training: the data axis's seconds per step, into wait_median. */
void data_parallel_wait_time(DataParallel *dp);
extern const ShardingStrategy replicated_in_buckets;
extern const ShardingStrategy zero_stages[3];     /* stages 1, 2 and 3 */
/* What the model's own arrays hold, by kind, into dp->held. */
void count_model_state(DataParallel *dp);
/* Every rank's bytes held and the most sent, to rank 0. */
void data_parallel_account(DataParallel *dp);
typedef struct MixedPrecision MixedPrecision;
/* Chapter 12: bf16 or fp16 weights and gradients, fp32 master weights and
   moments, on one rank. */
extern const ShardingStrategy mixed_precision_alone;
/* x (n), an operation's output, rounded to m's format; in the backward
   pass, counted first by the gradient histogram if there is one. */
void model_round(const Model *m, real *x, size_t n);
void model_round_gradient(const Model *m, real *x, size_t n);
/* The squared norm of the unscaled 16-bit gradient. */
double mixed_gradient_squares(DataParallel *dp);
/* S, that the loss is multiplied by now (1 in fp32); and, after a step,
   the S its gradient had and whether it was skipped. */
double data_parallel_loss_scale(const DataParallel *dp);
double loss_scale_used(const DataParallel *dp);
int step_skipped(const DataParallel *dp);
/* After a checkpoint is read: the 16-bit weights from the master. */
void mixed_state_loaded(DataParallel *dp);
/* Around the first step's gradient, --grad-histogram's counting. */
void gradient_histogram_begin(Model *m, DataParallel *dp);
void gradient_histogram_end(Model *m, DataParallel *dp);
typedef struct TensorParallel {
    MPI_Comm comm;            /* the ranks that split each block          */
    int ways, rank;           /* t, and this rank's place among them      */
    int sequence_parallel;    /* --sequence-parallel                      */
} TensorParallel;

typedef struct {              /* collectives and the bytes they sent      */
    double collectives, bytes;
    double blocks;            /* in how many blocks' passes               */
} TpTraffic;

typedef struct {              /* numbers in the same order in both arrays */
    int tensor;
    size_t whole;             /* where they start in the whole model's    */
    size_t local;             /* ... and in this rank's                   */
    size_t count;
    int replicated;           /* every rank of the group holds them       */
} Run;
typedef void (*RunVisitor)(void *context, const Run *run);

int model_init_split(Model *m, ModelConfig config, int batch,
                     unsigned holds, TensorParallel *tp);
/* t, the ways m's blocks are split (1: whole), and the group's comm. */
int model_ways(const Model *m);
MPI_Comm model_tp_comm(const Model *m);
/* The ways the stream's rows are split (t with sequence parallelism, else
   1), and which slice of them is this rank's. */
int model_sequence_ways(const Model *m);
int model_sequence_rank(const Model *m);
void f_forward(real *x, size_t n, MPI_Comm tp);
void f_backward(real *x, size_t n, MPI_Comm tp);
void g_forward(real *x, size_t n, MPI_Comm tp);
void g_backward(real *x, size_t n, MPI_Comm tp);
typedef enum { TP_ALL_REDUCE, TP_REDUCE_SCATTER, TP_ALL_GATHER } TpCollective;
/* One collective over tp on x (n), in place, counted; nothing on one
   rank. A reduce-scatter leaves the sum in this rank's t-th of x; an
   all-gather fills x from every rank's t-th. */
void tp_collective(TpCollective kind, real *x, size_t n, MPI_Comm tp);
/* With sequence parallelism (1), f and g split the stream's rows. */
void tp_split_sequence(int on);
/* Bytes this process has sent through MPI_Sendrecv, less those of the
   tensor-parallel collectives: what the data axis's collectives sent. */
unsigned long long data_bytes_sent(void);
/* What this process's tensor-parallel collectives have sent. */
TpTraffic tp_traffic(void);
/* ... inside the blocks, in direction 0 (forward) or 1 (backward). */
TpTraffic tp_traffic_blocks(int direction);
/* Count what was sent since `since` as one block's pass in direction. */
void tp_traffic_blocks_add(TpTraffic since, int direction);
/* Count one tensor-parallel collective that did not go through
   tp_collective (the GPU's, on NCCL) and the bytes it is taken to send. */
void tp_traffic_count(double bytes);
void column_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int C, int OCl,
    MPI_Comm tp, double *flops);
void column_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int C, int OCl, MPI_Comm tp, double *flops);
void row_parallel_forward(GemmWorkspace *ws, real *out, const real *in,
    const real *w, const real *bias, int N, int Cl, int OC,
    MPI_Comm tp, double *flops);
void row_parallel_backward(GemmWorkspace *ws, real *din, real *dw,
    real *dbias, const real *dout, const real *in, const real *w,
    int N, int Cl, int OC, MPI_Comm tp, double *flops);
double vocab_parallel_crossentropy_forward(real *probs, real *losses,
                                           const int *targets, int N,
                                           int Vl, MPI_Comm tp);
void vocab_parallel_crossentropy_backward(real *dlogits, const real *probs,
                                          const int *targets, int N, int Vl,
                                          MPI_Comm tp, real scale);
void vocab_shard_targets(int *mine, const int *targets, int first, int N,
                         int Vl);
void vocab_shard_max(real *row_max, const real *logits, int N, int Vl);
void vocab_shard_exp(real *probs, real *sums, const real *row_max,
                     const int *mine, int N, int Vl);
double vocab_shard_loss(real *probs, real *losses, const real *sums, int N,
                        int Vl);
/* Calls visit for every run of this rank's part of the model. */
void tensor_placement(const Model *m, RunVisitor visit, void *context);
size_t whole_params_count(const ModelConfig *c);
/* local (params_count) into whole (whole_params_count), on every rank
   of the group; and back. */
void tp_gather(const Model *m, const real *local, real *whole);
void tp_scatter(const Model *m, const real *whole, real *local);
/* Whether this rank counts tensor's numbers in a norm: the split ones,
   and the replicated ones on the group's rank 0 alone. */
int tp_counts_tensor(const Model *m, int tensor);
/* The squared norm of the whole model's array that local is part of. */
double tp_sum_of_squares(const Model *m, const real *local);
/* With sequence parallelism, the layer norms' gradients are each rank's
   rows' alone: sum them over the group (after the batch's gradient). */
void tp_sum_sequence_parallel_gradients(Model *m);
/* One array of the state, whole (whole_params_count), on every rank:
   the strategy's collection over the data axis, then the tensor axis's
   gather; and the inverse, for a checkpoint read. */
void collect_whole_state(DataParallel *dp, StateKind kind, real *into);
void scatter_whole_state(DataParallel *dp, StateKind kind, const real *whole);
/* The reference's initial weights, this rank's part of them. */
void tp_init_weights(const Model *m, real *local, uint64_t seed);
/* The numbers of m's part with its blocks whole: whole_params_count of
   its config, less the ends a pipeline stage lacks. */
size_t tp_whole_count(const Model *m);
/* One array, this rank's part (params_count), into the whole model's
   (whole_params_count of m->whole), on every rank: the tensor axis's
   gather, then the pipeline axis's; and back. */
void mesh_gather(const Model *m, const real *local, real *whole);
void mesh_scatter(const Model *m, const real *whole, real *local);
#endif
