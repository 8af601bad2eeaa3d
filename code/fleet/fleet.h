/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#ifndef FLEET_H
#define FLEET_H

#include "../common/cli.h"

typedef struct {
    const char *key;          /* "h100", as given to --gpu               */
    const char *name;         /* "H100 SXM 80 GB"                         */
    double memory_bytes;      /* 80e9: decimal, as the datasheet writes it */
    double peak_flops;        /* dense bf16, FLOP/s                        */
    double memory_bandwidth;  /* bytes/s of HBM                            */
    double per_node;          /* GPUs in one NVLink server                 */
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
    /* what follows */
    double dense_flops;       /* 6 N D                                    */
    double attention_flops;   /* 12 L s h D                               */
    double flops;             /* their sum                                */
    double flops_per_second;  /* gpus × peak × mfu                        */
    double seconds;
} TrainingTime;
typedef struct {
    int stage;                 /* 0: plain data parallel; 1, 2, 3: ZeRO    */
    double ranks;              /* N_d, the data-parallel degree             */
    double weights, gradients, optimizer;   /* bytes per device, by kind   */
    double total;              /* their sum                                 */
    double traffic;            /* bytes each device sends per step          */
} ShardedState;
typedef int Subcommand(int argc, char **argv);
double state_bytes_per_param(const StateBytes *s);
/* The part named by --gpu, or NULL after printing an error. */
const Gpu *find_gpu(const char *command, const char *key);
double ceil_count(double x);
/* Fill in the fields of m that follow from the given ones. */
void derive_memory_floor(MemoryFloor *m);
int memory_main(int argc, char **argv);
int compute_main(int argc, char **argv);
ShardedState shard_state(const MemoryFloor *m, const StateBytes *s, int stage,
                         double ranks);
void print_sharded_state(FILE *out, const MemoryFloor *m, const StateBytes *s,
                         int stage, double ranks);
void print_zero_sweep(FILE *out, const MemoryFloor *m, const StateBytes *s);
#endif
