/* Tangled from chapters/01-memory-floor.nw, chapters/02-compute-and-fleet.nw, chapters/03-step.nw, chapters/04-activations.nw, chapters/05-layout.nw, chapters/11d-hierarchical.nw, chapters/90-plumbing.nw, chapters/91-planner-subcommands.nw, chapters/92-measuring.nw, chapters/99d-hierarchical.nw, chapters/99e-predict-plumbing.nw, chapters/99h-reliability-plumbing.nw and chapters/99k-experts-plumbing.nw; edit the chapters, not this file. */
#ifndef FLEET_H
#define FLEET_H

#include "../common/cli.h"
#include "../common/pipeline_schedule.h"

typedef struct {
    const char *key;          /* "h100", as given to --gpu               */
    const char *name;         /* "H100 SXM 80 GB"                         */
    double memory_bytes;      /* 80e9: decimal, as the datasheet writes it */
    double peak_flops;        /* dense bf16, FLOP/s                        */
    double memory_bandwidth;  /* bytes/s of HBM                            */
    double per_node;          /* GPUs in one NVLink server                 */
    double nvlink_bandwidth;  /* bytes/s each way per GPU, inside a node   */
    double nic_bandwidth;     /* bytes/s each way per GPU, between nodes   */
    double pcie_bandwidth;    /* bytes/s each way, GPU to host             */
    int nvlink_reduces;       /* 1: the NVLink switches can add (NVLS)     */
} Gpu;
typedef struct {
    const char *key;           /* "mixed", as given to --precision        */
    const char *name;          /* "mixed-precision Adam"                  */
    double weights;            /* the copy the forward pass reads         */
    double gradients;          /* what the backward pass writes           */
    double master_weights;     /* fp32 copy the optimizer updates         */
    double master_gradients;   /* fp32 gradient accumulator, where kept   */
    double optimizer;          /* Adam's m and v, fp32                    */
} StateBytes;
typedef struct {
    /* what is given */
    double params;            /* parameters held in memory (all experts)  */
    double bytes_per_param;   /* 16 for mixed-precision Adam              */
    const Gpu *gpu;
    double usable;            /* fraction of a GPU the state may fill     */
    /* what follows */
    double static_bytes;      /* params × bytes_per_param                 */
    double node_bytes;        /* memory of one node                       */
    double nodes_of_state;    /* static_bytes ÷ node_bytes                */
    double usable_bytes;      /* memory × usable, per GPU                 */
    double gpus_min;          /* GPUs that hold the state                 */
    double gpus_whole_nodes;  /* the same, rounded up to whole nodes      */
    double nodes;             /* gpus_whole_nodes ÷ per_node              */
} MemoryFloor;
typedef struct {
    double bytes_per_param;   /* what a checkpoint keeps of each parameter */
    double bytes;             /* params × bytes_per_param                  */
    double bandwidth;         /* aggregate write bandwidth, bytes/s        */
} Checkpoint;
typedef struct {
    /* what is given */
    double params;            /* total parameters (memory)               */
    double active_params;     /* parameters each token passes through     */
    double tokens;            /* D                                        */
    double layers, hidden, seq; /* for the attention term; 0 to leave out */
    const Gpu *gpu;
    double mfu;               /* model FLOPs utilisation, 0..1            */
    double gpus;              /* the fleet                                */
    double usd_per_gpu_hour;  /* the price of a GPU-hour; 0 if not given  */
    /* what follows */
    double dense_flops;       /* 6 N D                                    */
    double attention_flops;   /* 12 L s h D                               */
    double flops;             /* their sum                                */
    double flops_per_second;  /* gpus × peak × mfu                        */
    double seconds;
    double gpu_hours;         /* gpus × seconds ÷ 3,600                   */
} TrainingTime;
typedef enum { ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER } Collective;

typedef struct {
    const char *name;       /* "NVLink", "NIC"                            */
    double bandwidth;       /* bytes/s each way per GPU that a collective uses */
    double latency;         /* seconds per step of a ring                 */
} Link;

typedef enum { LINK_NVLINK, LINK_NIC, LINK_PCIE } LinkKind;
typedef struct {
    int stage;                 /* 0: plain data parallel; 1, 2, 3: ZeRO    */
    double ranks;              /* N_d, the data-parallel degree             */
    double weights, gradients, optimizer;   /* bytes per device, by kind   */
    double total;              /* their sum                                 */
    double traffic;            /* bytes each device sends per step          */
} ShardedState;
typedef struct {
    const char *axis;         /* "TP", "PP", "DP"                         */
    LinkKind link;            /* the link its group spans                 */
    double bytes;             /* each GPU sends per step                  */
    double messages;          /* ring steps or sends, each pays latency   */
    double seconds;           /* bytes ÷ bandwidth + messages × latency   */
} Traffic;

typedef struct {
    /* what is given */
    double params, tokens, batch_tokens, gpus;
    const Gpu *gpu;
    double mfu;
    double tp, pp, dp;        /* the layout: tp × pp × dp = gpus          */
    int zero;                 /* ZeRO stage of the data-parallel axis     */
    double micro_batch_tokens;
    double layers, hidden;
    double efficiency;        /* usable fraction of each link's line rate */
    int in_network;           /* 1: switches add where they can           */
    /* what follows */
    double steps;             /* tokens ÷ batch, rounded up               */
    double tokens_per_replica;
    double micro_batches;     /* per replica per step                     */
    double flops_per_gpu;     /* 6 N B ÷ gpus                             */
    double compute_seconds;
    Traffic traffic[3];       /* TP, PP, DP                               */
    double link_bytes[2];     /* NVLink, NIC: all axes on that link       */
    double link_seconds[2];
    double link_latency_seconds[2];
} Step;
typedef struct {
    /* what is given */
    double hidden, seq, micro_batch, tp, layers;
    double bytes_per_element;      /* 2 for 16-bit activations             */
    const Gpu *gpu;
    double mfu;
    Link link;
    int in_network;                /* 1: the switches add                  */
    /* what follows, per GPU */
    double tokens;                 /* micro_batch × seq                    */
    double buffer;                 /* one all-reduce's buffer, bytes       */
    double bytes_per_block;        /* four all-reduces                     */
    double all_reduce_seconds;     /* one of them                          */
    double comm_seconds_per_block;
    double flops_per_block;        /* (72 b s h² + 12 b s² h) ÷ tp         */
    double compute_seconds_per_block;
} TpBlock;
typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } Recompute;
/* How the attention core runs: a fused kernel that never writes the s x s
   scores to memory (FlashAttention), or one that materialises them. */
typedef enum { ATTENTION_FLASH, ATTENTION_MATERIALIZED } Attention;

typedef struct {
    double seq;               /* s, tokens per sequence                    */
    double micro_batch;       /* b, sequences per micro-batch              */
    double hidden;            /* h                                         */
    double heads;             /* a                                         */
    double tp;                /* t, tensor-parallel degree                 */
    int sequence_parallel;    /* 1: LayerNorm and dropout split over t too */
    Recompute recompute;
    Attention attention;      /* flash: the scores are never stored       */
    double cp;                /* context-parallel degree: each GPU holds
                                 s/cp of the queries (0 reads as 1)        */
} LayerActivations;
/* A layout of the model on the fleet: what gpu_memory and the planner read. */
typedef struct {
    /* the model */
    double params;            /* the model's size; 0: the shape's count     */
    double layers, hidden, heads, seq, vocab;
    double ffn;               /* the MLP's inner width (0 reads as 4h)      */
    double kv_heads;          /* key-value heads (0 reads as heads)         */
    int gated;                /* 1: a gated MLP, three matrices (SwiGLU)    */
    /* the layout */
    double tp, cp, pp, dp;    /* tensor, context, pipeline, data degrees    */
    int zero;                 /* over dp × cp: 0 plain, 1, 2, 3 (FSDP)      */
    int sequence_parallel;    /* 1: activations outside the GEMMs split by t */
    Recompute recompute;
    Attention attention;      /* flash (the default) stores no scores      */
    Schedule schedule;
    double chunks;            /* V, model chunks per rank (interleaved)     */
    double micro_batches;     /* m, per pipeline per step                   */
    double micro_batch;       /* b, sequences per micro-batch               */
    const Gpu *gpu;
    const StateBytes *state;  /* bytes of state by kind: mixed-precision Adam */
    /* what no formula gives: assumptions, 0 reads as the default below */
    double context_bytes;     /* CUDA context and kernels, per GPU          */
    double library_bytes;     /* the collective library's own buffers       */
    double fragmentation;     /* the allocator's slack, a fraction          */
} Layout;

/* What one GPU holds at its peak, by kind, in bytes. */
typedef struct {
    double state;             /* weights, gradients, optimizer, sharded     */
    double activations;       /* the heaviest stage's, at its peak          */
    double gathered;          /* FSDP units gathered at once                */
    double logits;            /* the last stage's logits and their gradient */
    double buffers;           /* the collective library's buffers           */
    double context;           /* CUDA context and kernels                   */
    double fragmentation;     /* the allocator's slack                      */
    double total;
    int heaviest_stage;       /* the stage whose GPU this is                */
    /* how the activations come about, on that stage */
    double stage_layers;      /* layers on the stage                        */
    double stage_params;      /* its parameters, all TP ranks together      */
    double in_flight;         /* micro-batches in flight at its peak        */
    double recomputing;       /* of activations: the layer being recomputed */
} GpuMemory;
/* Defaults of what no formula gives (the text says why each). */
#define CONTEXT_BYTES_DEFAULT 1e9     /* CUDA context and loaded kernels    */
#define LIBRARY_BYTES_DEFAULT 0.5e9   /* NCCL's buffers, all communicators  */
#define FRAGMENTATION_DEFAULT 0.10    /* on top of the live bytes           */
/* What no formula gives: each a flag of fleet layout, with its reason. */
typedef struct {
    double compute_efficiency; /* fraction of dense peak the kernels reach  */
    double link_efficiency;    /* busbw ÷ line rate a collective reaches    */
    double overlap;            /* share of compute that can hide traffic    */
    double nvlink_latency;     /* seconds per ring step inside a node       */
    double nic_latency;        /* seconds per ring step between nodes       */
    double backward_ratio;     /* backward time ÷ forward time              */
} Assumptions;

/* The fleet and the work, as fleet layout is given them. */
typedef struct {
    const Gpu *gpu;
    double gpus;
    double per_node;           /* GPUs that share NVLink                    */
    double nvlink_bandwidth;   /* bytes/s each way per GPU, line rate       */
    double nic_bandwidth;      /* bytes/s each way per GPU, line rate       */
    double batch_tokens;       /* tokens per optimizer step, all replicas   */
    double model_params;       /* N for the FLOPs and the traffic           */
} Fleet;

/* One layout, evaluated: what it holds, does, sends, and how long it takes. */
typedef struct {
    Layout l;                  /* the model on its layout (chapter 4)       */
    Text name;                 /* "TP8 × FSDP128"                           */
    GpuMemory memory;
    int fits;
    double model_flops;        /* per GPU per step, 6N + attention          */
    double hardware_flops;     /* the same with recomputation               */
    double compute_s;          /* the heaviest stage's, at the efficiency   */
    double dense_compute_s;    /* 6N per token only, evenly spread          */
    double bubble_s;           /* idle time of the pipeline                 */
    double tp_bytes, tp_s;     /* tensor-parallel all-reduces: exposed      */
    double cp_bytes, cp_s;     /* context-parallel K,V gathers              */
    double pp_bytes, pp_s;     /* activations to the next stage             */
    double dp_bytes, dp_s;     /* the data-parallel gradients (or FSDP)     */
    double dp_latency_s;       /* the part of dp_s that is ring latency     */
    int tp_nic, cp_nic, pp_nic, dp_nic;     /* 1: the axis crosses nodes    */
    double nic_bytes, nvlink_bytes;         /* per GPU per step, by link    */
    double overlappable_s;     /* traffic that may hide behind compute      */
    double window_s;           /* the compute it may hide behind            */
    double exposed_s;          /* communication the step waits for          */
    double step_s, mfu;
    double comm_compute_ratio; /* NIC traffic's seconds ÷ compute seconds   */
} Plan;
/* The axes fleet layout may choose; 0 (or -1 for the switches) is free. */
typedef struct {
    double tp, cp, pp, dp, chunks, micro_batches, micro_batch;
    int fsdp, schedule, recompute;     /* -1: free                      */
    int cross_node_tp;                 /* 1: TP may leave the node      */
    double cp_min_tokens;              /* shortest slice of a sequence  */
} Axes;
typedef int Subcommand(int argc, char **argv);
double state_bytes_per_param(const StateBytes *s);
/* The part named by --gpu, or NULL after printing an error. */
const Gpu *find_gpu(const char *command, const char *key);
/* Mixed-precision Adam, the first row of the table of conventions. */
const StateBytes *mixed_precision_adam(void);
/* The parts in the table's order: first_gpu(), then next_gpu() to NULL. */
const Gpu *first_gpu(void);
const Gpu *next_gpu(const Gpu *g);
double ceil_count(double x);
/* Fill in the fields of m that follow from the given ones. */
void derive_memory_floor(MemoryFloor *m);
int memory_main(int argc, char **argv);
int compute_main(int argc, char **argv);
/* Fill in the FLOPs, seconds and GPU-hours of t from its given fields. */
void derive_training_time(TrainingTime *t);
/* Bytes each of n ranks sends in a ring collective on a buffer of `bytes`. */
double ring_bytes_sent(Collective c, double bytes, double n);
/* Steps of the ring: 2(n - 1) for an all-reduce, n - 1 for its halves. */
double ring_steps(Collective c, double n);
/* The same where the switches add (in_network = 1): an all-reduce then
   sends the buffer once, in two steps. */
double collective_bytes_sent(Collective c, double bytes, double n,
                             int in_network);
double collective_steps(Collective c, double n, int in_network);
/* Seconds for the collective on the link: steps × latency + sent ÷ bandwidth,
   on the ring, or reduced in the network. */
double collective_seconds(Collective c, double bytes, double n, const Link *l);
double collective_seconds_in_network(Collective c, double bytes, double n,
                                     const Link *l, int in_network);
/* Seconds per message on that kind of link. */
double link_latency(LinkKind k);
/* A part's link of that kind at `efficiency` of its line rate. */
Link gpu_link(const Gpu *g, LinkKind k, double efficiency);
/* 1 where that link's switches can add: NVLS in an NVLink switch, SHARP in
   an InfiniBand fabric. */
int link_reduces(const Gpu *g, LinkKind k);
/* Bytes each GPU sends per layer per micro-batch of `tokens` tokens in
   tensor parallelism of degree tp: four ring all-reduces of the 16-bit
   activations (tokens × hidden), two forward and two backward. */
double tp_bytes_per_layer(double tokens, double hidden, double tp);
/* Bytes each of `ranks` data-parallel GPUs sends per step at ZeRO `stage`
   for a model of `model_bytes` 16-bit bytes, k micro-batches a step. */
double data_parallel_bytes(int stage, double model_bytes, double ranks,
                           double k, int in_network);
/* Ring steps (each paying the latency) for the same, `units` collectives
   of each kind: one per layer. */
double data_parallel_messages(int stage, double units, double ranks, double k,
                              int in_network);
ShardedState shard_state(const MemoryFloor *m, const StateBytes *s, int stage,
                         double ranks);
/* The stage named by --zero, or -1 after printing an error. */
int parse_zero_stage(const char *command, const char *text);
void print_sharded_state(FILE *out, const MemoryFloor *m, const StateBytes *s,
                         int stage, double ranks);
void print_zero_sweep(FILE *out, const MemoryFloor *m, const StateBytes *s);
/* Fill in the fields of s that follow from the given ones. */
void derive_step(Step *s);
int step_main(int argc, char **argv);
int tp_main(int argc, char **argv);
/* Bytes of activations one layer keeps per GPU for one micro-batch. */
double activation_bytes_per_layer(const LayerActivations *a);
/* Layers on stage r of p: as even as they go, the ends lighter. */
double layers_on_stage(double layers, double p, double r);
/* Micro-batches whose activations stage r holds at its peak (in units of
   the stage's whole set of layers). */
double micro_batches_in_flight(Schedule s, double p, double m, double v,
                               double r);
/* What the GPUs of stage r hold, and the heaviest GPU of a layout. */
GpuMemory gpu_memory_of_stage(const Layout *l, double r);
GpuMemory gpu_memory(const Layout *l);
/* Parameters of one transformer layer: attention 2h^2 + 2 h h_kv, MLP
   2 h ffn (GELU) or 3 h ffn (gated); layer norms and biases left out. */
double params_per_layer(const Layout *l);
int activations_main(int argc, char **argv);
const char *schedule_name(Schedule s);
const char *recompute_name(Recompute r);
void evaluate_plan(Plan *pl, const Fleet *f, const Assumptions *a);
int compare_plans(const void *x, const void *y);
double reversal_nic(const Plan *w, const Plan *o, const Fleet *f,
                    const Assumptions *a);
/* Seconds for an all-reduce of `bytes` over n ranks in groups of `group`:
   reduce-scatter inside each group, all-reduce each 1/group of the buffer
   across the n / group groups, all-gather inside. */
double hierarchical_allreduce_seconds(double bytes, double n, double group,
                                      const Link *inside, const Link *across);
int pipeline_main(int argc, char **argv);
/* The schedule named by --schedule (gpipe, 1f1b, interleaved, zb-h1); -1
   if unknown, after printing an error that names the flag. */
int find_schedule(const char *command, const char *name);
int layout_main(int argc, char **argv);
Text layout_name(const Layout *l);
/* This machine as a part of the table, one core a device, from a machine
   file (build/machine.json); NULL after printing an error. */
const Gpu *machine_part(const char *command, const char *path);
int allreduce_main(int argc, char **argv);
/* fleet layout --machine FILE ...: minigpt's step on this machine. */
int layout_on_machine(int argc, char **argv);
int checkpoint_main(int argc, char **argv);
int moe_main(int argc, char **argv);
#endif
