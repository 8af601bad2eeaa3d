/* Tangled from chapters/93-trainer-state.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/96-tensor-parallel-plumbing.nw, chapters/98-pipeline-plumbing.nw, chapters/99f-measured-plumbing.nw, chapters/99gp-precision-plumbing.nw, chapters/99i-shards-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file. */
#ifndef TRAINER_H
#define TRAINER_H

#include "minigpt.h"

typedef struct {
    ModelConfig config;
    int batch, steps, micro, eval_every, save_every, quiet;
    real lr;
    uint64_t seed;
    const char *save, *resume, *log, *profile;
    const char *machine;   /* the machine file the peak comes from, or NULL */
    double peak;           /* one core's peak FLOP/s read from it, or 0     */
    double gemm_flops;     /* and the rate of its gemm, FLOP/s              */
    int rank, ranks;       /* this process, and how many there are */
    int dp;                /* ranks that share each batch: 1 until Chapter 7 */
    const char *dump;          /* --dump DIR, or NULL                  */
    int keep;                  /* --keep-checkpoints, or 0             */
    int allow_schedule_change; /* --allow-schedule-change              */
    int fail_shard;            /* --fail-shard-write RANK, or -1       */
    Mesh mesh;
    DataParallel parallel;
    TensorParallel split;     /* --tp; its group is filled in by the mesh */
    int schedule;             /* --schedule, a Schedule                   */
    int chunks;               /* v: --chunks when interleaved, else 1     */
    const char *trace;        /* --trace, or NULL                         */
    int async_save;              /* --async-save                          */
    int fault_step, fault_rank;  /* --fault-at-step (0: none), --fault-rank */
    struct Checkpointer *checkpointer;  /* the saves so far, or NULL      */
    int checkpoint_saves;        /* what the report says of them          */
    double checkpoint_stall_s;   /* ... the median stall between steps    */
    double checkpoint_final_s;   /* ... and the end's save                */
} Settings;
/* 0 if the paths of the flags can all be used as asked, 2 after one line. */
int check_state_paths(const char *command, Option *o);
/* --dump: the state, the first batch, its loss and gradients; 0 or 2. */
int dump_state(Model *m, const Language *lang, Settings *set,
               const TrainingState *s, Option *options);
/* Step 0 of the schedule the flags ask for. */
TrainingState fresh_state(const Settings *set);
/* 0 when the checkpoint in *s may go on under this run's flags. */
int resume_schedule(const char *command, const Settings *set,
                    TrainingState *s, int speak);
/* Write --save (and the kept copies) from any layout; 0 on success. */
int save_checkpoint(Settings *set, const TrainingState *s, char *why,
                    size_t why_size);
/* Read --resume into any layout; 0 on success. */
int load_checkpoint(Settings *set, TrainingState *s, char *why,
                    size_t why_size);
enum { LOG_DIGITS = sizeof(real) == 8 ? 17 : 9 };
typedef struct {
    int *inputs;     /* (B, T) */
    int *targets;    /* (B, T) */
} Batch;

/* The gradient of a batch of B in `micro` pieces, times share; the loss. */
double batch_gradient(Model *m, const Batch *b, int B, int micro,
                      real share);
/* This rank's slice of the batch's gradient, combined over the ranks. */
double rank_gradient(Model *m, const Batch *b, Settings *set);
AdamW adamw_settings(real lr);
/* Clip and step; returns the gradient's norm before clipping. */
real optimizer_step(Settings *set, const AdamW *opt, real lr, int step);
/* The configuration's weights, gradient or one of Adam's moments, whole,
   on every rank. */
void collect_state(Settings *set, StateKind kind, real *into);
int gradcheck(Model *m, const Language *lang, const Settings *set,
              Option *options);
int verify(Model *m, const Language *lang, Settings *set, Option *options);
/* --verify's tolerance, atol + rtol of the reference, and the largest
   difference of n numbers (NaN if one is not a number), which clears *ok
   where one exceeds it: Chapter 6's, the GPU's too. */
extern const double verify_atol, verify_rtol;
double verify_largest_difference(const real *got, const real *want,
                                 size_t n, double atol, double rtol,
                                 int *ok);
int train(Model *m, const Language *lang, Settings *set,
          TrainingState *state, Option *options);
int batch_alloc(Batch *b, int B, int T);
void batch_free(Batch *b);
/* B stretches of T + 1 tokens: the inputs, and the targets shifted by 1. */
void batch_draw(Batch *b, const Language *lang, Rng *rng, int B, int T);
Rng validation_rng(uint64_t seed);
Rng training_rng(uint64_t seed);
/* The start of the training stream, as text, 72 characters to a line. */
int print_sample(const Settings *set, int n, Option *options);
/* Mean loss over fixed validation batches of B. */
double validation_loss(Model *m, const Language *lang, uint64_t seed,
                       int B);
/* Read the flags into *set and check them; 0, or 2 after one line. */
int read_settings(const char *command, Option *o, int rank, int ranks,
                  Settings *set);
typedef struct {
    int step;                  /* the step the model has reached    */
    int steps;                 /* steps this process ran            */
    double seconds;            /* in those steps alone              */
    double train_loss, val_loss, unigram, bigram, peak;
    double *step_seconds;      /* each step's time, in order        */
    int warmup, timed;         /* steps not counted, and counted    */
    double step_median, step_q1, step_q3;  /* of the counted steps  */
    Tally tally;               /* training work only                */
    double (*step_parts)[BREAKDOWN_PARTS];  /* each step's, in order      */
    double breakdown[BREAKDOWN_PARTS];  /* their mean: timed steps, ranks */
} RunSummary;

/* How many of a run's n per-step numbers its warm-up takes, uncounted. */
int untimed_steps(int n);
/* Sorts values[untimed_steps(n)..n) and returns their median; how many
   there are, into *timed. */
double median_after_warm_up(double *values, int n, int *timed);
/* The median step and its spread, after the warm-up steps. */
void step_statistics(RunSummary *s);
void report_run(Report *r, const Model *m, const Settings *set,
                const RunSummary *s, const char *cpu);
void print_run(FILE *out, const Report *r, const char *cpu,
               const Settings *set);
/* Seconds per step by operation, as CSV; 0 on success. */
int write_profile(const char *path, const Tally *t, int steps);
/* Chapter 10: this rank's model as its pipeline stage, with the stage's
   slots and trace; 0, -1 when memory runs out, or 2 after a line. */
int pipeline_model_init(Model *m, Settings *set, int rows, unsigned holds);
/* 0, or 2 after a line when --trace cannot be written; 0 when m is not a
   stage. */
int pipeline_free(Model *m);
/* As batch_gradient, through the stages by the schedule; the loss is the
   same on every stage. */
double pipeline_gradient(Model *m, const Batch *b, int B, int micro,
                         real share);
/* As model_forward, through the stages. */
double pipeline_loss(Model *m, const int *inputs, const int *targets,
                     int B);
/* The pipeline's and its trace's fields, on the pipeline's first rank. */
void pipeline_report(const Model *m, Report *r);
/* The tally's seconds less what its operations waited on other ranks. */
double tally_work(const Tally *t);
/* One step's parts into part: the clock's, then compute (the tally's work
   in the step, less the optimizer), the step, and what is left (other). */
void step_breakdown(double part[BREAKDOWN_PARTS], double step,
                    double worked);
/* s->breakdown: the mean of each part over the timed steps, then over the
   ranks of world (every rank calls it). */
void average_breakdown(RunSummary *s, MPI_Comm world);
/* --verify --precision bf16, fp16 or fp8: one batch against fp32. */
int precision_verify(Model *m, const Language *lang, Settings *set,
                     Option *options);
/* The report's fields of the precision, and their lines; the state's
   bytes by kind when it is held in 16 bits. */
void mixed_state_bytes(const DataParallel *dp, double state[3]);
/* "fp32", "bf16", "fp16" or "fp8": what --precision named. */
const char *precision_name(const DataParallel *dp);
void precision_report(Report *r, const Settings *set);
void print_precision(FILE *out, const Report *r);
typedef struct {              /* a rank's shard, as its file holds it  */
    unsigned char *bytes;     /* (size) header, runs, numbers, FNV-1a  */
    size_t size;
    uint64_t hash;            /* FNV-1a of all of bytes: the manifest's */
} ShardImage;

typedef struct {              /* a save under way                      */
    char path[4096];          /* the checkpoint, a directory           */
    char directory[4200];     /* where its shards go until the rename  */
    uint64_t step;
    ShardImage image;         /* this rank's shard, in memory          */
    int began, written;
} ShardedSave;

/* The three steps of a save. Begin, on every rank: the temporary
   directory, and this rank's shard copied into memory; 0, or -1 on every
   rank with the reason in why. */
int sharded_save_begin(Settings *set, const char *path,
                       const TrainingState *s, ShardedSave *save,
                       char *why, size_t why_size);
/* Write the shard to its file and sync it (no MPI: any thread may);
   `fail` makes it fail, for the drill; 0 or -1. */
int sharded_save_write(ShardedSave *save, int rank, int fail, char *why,
                       size_t why_size);
/* On every rank, with `failed` this rank's outcome of the write: agree,
   then rank 0 writes the manifest and renames the directory into place;
   0, or -1 on every rank, with nothing of this save left behind. */
int sharded_save_finish(Settings *set, ShardedSave *save, int failed,
                        char *why, size_t why_size);
/* The three in a row. */
int checkpoint_save_sharded(Settings *set, const char *path,
                            const TrainingState *s, char *why,
                            size_t why_size);
/* Every rank reads the pieces it keeps, whatever layout wrote them; 0, or
   -1 on every rank with the same one-line reason. */
int checkpoint_load_sharded(Settings *set, const char *path,
                            TrainingState *s, char *why, size_t why_size);
/* This rank's shard, as its file will hold it. */
int shard_image(Settings *set, const TrainingState *s, ShardImage *image);
void shard_image_free(ShardImage *image);
/* Remove a checkpoint's directory; 0 when it is gone. */
int remove_checkpoint(const char *path);
/* 0 if path can take a checkpoint, 2 after one line. */
int check_checkpoint_path(const char *command, const char *flag,
                          const char *path);
/* The directory part of `path` into dir ("." if it has none); returns the
   last component. */
const char *split_path(const char *path, char *dir, size_t size);
/* The runs a pipeline stage's flat array shares with the whole model's. */
void stage_placement(const Model *m, RunVisitor visit, void *context);
/* Chapter 13: save --save now, or with --async-save start its write on a
   thread (not when `last`); first wait for the write before it. Records
   the time the training thread lost; 0, or -1 with why on rank 0. */
int checkpoint_now(Settings *set, const TrainingState *s, int last,
                   char *why, size_t why_size);
/* The fault drill: SIGKILL to this rank if --fault-at-step is `step`. */
void fault_drill(const Settings *set, int step);
#endif
