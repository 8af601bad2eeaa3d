/* Tangled from chapters/07-data-parallel.nw, chapters/09-tensor-parallel.nw, chapters/93-trainer-state.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/96-tensor-parallel-plumbing.nw, chapters/97-cuda.nw, chapters/98-pipeline-plumbing.nw, chapters/99c-buckets.nw, chapters/99gp-precision-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file. */
#include <stdio.h>

#include "trainer.h"
#include "../cuda/device.h"

static int read_settings_once(const char *command, Option *options,
                              int rank, int ranks, Settings *set);
static int run(const char *command, Option *options, Settings set);
static int run_on_mesh(const char *command, Option *options, Settings set);

int main(int argc, char **argv)
{
    const char *command = "minigpt";
    int rank = launcher_rank(), ranks = launcher_size();
    Option options[] = {
        { "--layers", OPT_COUNT, 64, "transformer blocks L", 2, NULL, 0 },
        { "--hidden", OPT_COUNT, 4096, "width C of the residual stream", 64,
          NULL, 0 },
        { "--heads", OPT_COUNT, 64, "attention heads H (divides --hidden)", 4,
          NULL, 0 },
        { "--seq", OPT_COUNT, 4096, "context length T", 64, NULL, 0 },
        { "--batch", OPT_COUNT, 4096, "sequences B per step", 8, NULL, 0 },
        { "--vocab", OPT_COUNT, 65536, "vocabulary V (at least 8)", 32, NULL, 0 },
        { "--steps", OPT_WHOLE, 1e7, "optimizer steps (0: save the initial "
          "state)", 300, NULL, 0 },
        { "--lr", OPT_NUMBER, 1, "peak learning rate", 3e-3, NULL, 0 },
        { "--seed", OPT_COUNT, 1e15, "seed of the language, weights and data",
          1, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 4096,
          "split each batch into this many (gradient accumulation)", 1, NULL, 0 },
        { "--eval-every", OPT_COUNT, 1e7, "steps between validation losses", 50,
          NULL, 0 },
        { "--save", OPT_PATH, 0, "write a checkpoint here, a directory of a "
          "shard per rank (at the end, and every --save-every steps)", 0, NULL,
          0 },
        { "--save-every", OPT_COUNT, 1e7, "steps between checkpoints", 0, NULL,
          0 },
        { "--resume", OPT_PATH, 0, "continue from this checkpoint", 0, NULL, 0 },
        { "--log", OPT_PATH, 0, "write a CSV line per step here", 0, NULL, 0 },
        { "--profile", OPT_PATH, 0, "write seconds per step by operation here",
          0, NULL, 0 },
        { "--machine", OPT_PATH, 0, "take one core's peak FLOP/s from this file "
          "(build/machine.json) instead of measuring it", 0, NULL, 0 },
        { "--transcript", OPT_PATH, 0, "also write the readable report here",
          0, NULL, 0 },
        { "--gradcheck", OPT_SWITCH, 0,
          "check the gradients against finite differences and exit", 0, NULL, 0 },
        { "--verify", OPT_SWITCH, 0, "compare the configuration with the "
          "reference on one batch and exit", 0, NULL, 0 },
        { "--quiet", OPT_SWITCH, 0, "no progress on standard error", 0, NULL, 0 },
        { "--dump", OPT_PATH, 0, "write the weights, the first batch, its loss and "
          "its gradients as NumPy files into this directory, and exit", 0, NULL, 0 },
        { "--keep-checkpoints", OPT_COUNT, 1e6, "also keep the last N checkpoints, "
          "as PATH.step000100 and so on beside --save PATH", 0, NULL, 0 },
        { "--allow-schedule-change", OPT_SWITCH, 0, "let --resume go on under "
          "another --steps or --lr", 0, NULL, 0 },
        { "--fail-shard-write", OPT_WHOLE, 1e6, "a drill: this rank fails to write "
          "its shard at every save, which must leave the previous checkpoint as it "
          "was", 0, NULL, 0 },
        { "--tp", OPT_COUNT, 4096, "tensor-parallel ranks, the mesh's innermost "
          "axis", 1, NULL, 0 },
        { "--pp", OPT_COUNT, 4096, "pipeline stages, the mesh's middle axis", 1,
          NULL, 0 },
        { "--dp", OPT_COUNT, 4096, "data-parallel ranks (--tp × --pp × --dp must "
          "match mpiexec -n)", 1, NULL, 0 },
        { "--print-mesh", OPT_SWITCH, 0, "print each rank's coordinates and "
          "communicators, and exit", 0, NULL, 0 },
        { "--allreduce", OPT_NAME, 0, "ring or mpi, for --dp", 0, "mpi", 0 },
        { "--no-overlap", OPT_SWITCH, 0, "one blocking all-reduce after the "
          "backward pass", 0, NULL, 0 },
        { "--no-allreduce", OPT_SWITCH, 0, "skip the gradient's all-reduce: a "
          "timing baseline of compute alone (the ranks' weights drift apart)", 0,
          NULL, 0 },
        { "--zero", OPT_NAME, 0, "ZeRO stage 0, 1, 2 or 3: shard the optimizer "
          "state, also the gradients, also the weights", 0, "0", 0 },
        { "--sequence-parallel", OPT_SWITCH, 0, "with --tp: layer norms and the "
          "residual stream on a t-th of the rows each", 0, NULL, 0 },
        { "--device", OPT_NAME, 0, "cuda: train (or --verify) on the GPU, a GPU "
          "a rank with --tp and --dp; the CPU is the default", 0, NULL, 0 },
        { "--precision", OPT_NAME, 0, "fp32, bf16, fp16 or fp8: 16-bit weights, "
          "gradients and activations (fp8: 8-bit inputs to the blocks' linear "
          "layers) with fp32 master weights and moments (one rank); with "
          "--device cuda: fp32, or bf16 GEMM inputs", 0, "fp32", 0 },
        { "--collectives", OPT_NAME, 0, "with --device cuda: auto (NCCL on an axis "
          "whose ranks have a GPU each, else MPI on host copies), nccl or host",
          0, "auto", 0 },
        { "--schedule", OPT_NAME, 0, "with --pp: gpipe, 1f1b, interleaved or "
          "zb-h1", 0, "1f1b", 0 },
        { "--chunks", OPT_COUNT, 64, "with --schedule interleaved: chunks v of "
          "blocks per stage", 2, NULL, 0 },
        { "--trace", OPT_PATH, 0, "with --pp: write every operation's start and "
          "end here (CSV)", 0, NULL, 0 },
        { "--bucket-mb", OPT_WHOLE, 1e6, "with --dp: all-reduce the gradient in "
          "buckets of at least N MiB, each started when the backward pass has "
          "filled it (0: one all-reduce per tensor)", 0, NULL, 0 },
        { "--fp32-grads", OPT_SWITCH, 0, "with --precision bf16 or fp16: add the "
          "gradients into fp32 instead of 16 bits (18 bytes a parameter)", 0,
          NULL, 0 },
        { "--loss-scale", OPT_NUMBER, 1e30, "with --precision bf16 or fp16: the "
          "loss scale S to start from (default 65536 for fp16, 1 for bf16)", 0,
          NULL, 0 },
        { "--loss-scale-window", OPT_COUNT, 1e9, "steps without overflow before "
          "the loss scale doubles", 2000, NULL, 0 },
        { "--no-loss-scaling", OPT_SWITCH, 0, "keep the loss scale fixed, at 1 or "
          "at --loss-scale, and step even when the gradient overflows (plain "
          "fp16)", 0, NULL, 0 },
        { "--grad-histogram", OPT_PATH, 0, "write the first step's gradient "
          "magnitudes here, as CSV: the count at each binary exponent", 0, NULL,
          0 },
        { "--async-save", OPT_SWITCH, 0, "with --save: copy the state into host "
          "memory at a checkpoint and write it on a thread while training goes on",
          0, NULL, 0 },
        { "--fault-at-step", OPT_COUNT, 1e7, "the fault drill: after this step "
          "(and its checkpoint) rank --fault-rank kills itself with SIGKILL", 0,
          NULL, 0 },
        { "--fault-rank", OPT_WHOLE, 1e6, "the rank that --fault-at-step kills", 0,
          NULL, 0 },
        { "--sample", OPT_COUNT, 1e6, "print this many tokens of the language "
          "and exit", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options_as(rank == 0, command, "A small GPT trained "
                                  "on CPU cores: the reference every parallel "
                                  "chapter checks against.", options,
                                  argc - 1, argv + 1);
    if (status != 0)       /* --help was printed (1), or a flag refused (2) */
        return status == 1 ? 0 : status;
    Settings set;
    if (read_settings_once(command, options, rank, ranks, &set) != 0)
        return 2;
    int threads;          /* --async-save's writer calls MPI from a thread */
    MPI_Init_thread(NULL, NULL, option_given(options, "--async-save")
                    ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &threads);
    int mpi_rank, mpi_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    if ((mpi_rank != rank || mpi_size != ranks)  /* another launcher */
        && read_settings_once(command, options, mpi_rank, mpi_size,
                              &set) != 0)
        status = 2;
    if (status == 0 && set.async_save && threads < MPI_THREAD_MULTIPLE) {
        if (mpi_rank == 0)
            complain(command, "--async-save needs an MPI that lets a second "
                     "thread call it (MPI_THREAD_MULTIPLE); this one does not");
        status = 2;
    }
    if (status == 0)
        status = run(command, options, set);
    MPI_Finalize();
    return status;
}

static int read_settings_once(const char *command, Option *options,
                              int rank, int ranks, Settings *set)
{
    int saved = streams_silence(rank == 0);  /* every rank checks; one says */
    int invalid = read_settings(command, options, rank, ranks, set);
    streams_restore(saved);
    return invalid;
}

static int run(const char *command, Option *options, Settings set)
{
    int rank = set.rank;
    if (option_given(options, "--sample"))
        return rank == 0 ? print_sample(&set, (int)option_number(options,
                                        "--sample"), options) : 0;
    if (option_given(options, "--device"))      /* Appendix ch:cuda */
        return device_run(command, &set, options);
    char why[256];
    Mesh *mesh = &set.mesh;
    if (mesh_init(mesh, MPI_COMM_WORLD, mesh->tp, mesh->pp, mesh->dp, why,
                  sizeof why) != 0) {
        if (rank == 0)
            complain(command, "%s", why);
        return 2;
    }
    int status = option_given(options, "--print-mesh")
               ? (mesh_print(mesh, stdout), 0)
               : run_on_mesh(command, options, set);
    mesh_free(&set.mesh);
    return status;
}

static int run_on_mesh(const char *command, Option *options, Settings set)
{
    int rank = set.rank, status = 0;
    if (rank == 0
        && (check_state_paths(command, options) != 0
            || check_checkpoint_path(command, "--save", set.save) != 0
            || check_writable(command, "--log", set.log) != 0
            || check_writable(command, "--profile", set.profile) != 0
            || check_writable(command, "--trace", set.trace) != 0
            || check_writable(command, "--transcript",
                              option_text(options, "--transcript")) != 0
            || check_writable(command, "--output",
                              option_text(options, "--output")) != 0))
        status = 2;
    if (ranks_agree(status, set.mesh.world) != 0)
        return 2;
    /* Training keeps the activations of one micro-batch at a time;
       --gradcheck runs the whole batch in one pass. */
    int whole = option_given(options, "--gradcheck")
             || option_given(options, "--dump");
    unsigned holds = set.parallel.strategy->holds;  /* the model's part */
    Model model;
    set.split.comm = set.mesh.tp_comm;       /* this rank's part of each */
    set.split.rank = set.mesh.tp_rank;       /* block, Chapter 9's split */
    int rows = whole ? set.batch : set.batch / set.dp / set.micro;
    int failed = set.mesh.pp > 1             /* Chapter 10's stages */
               ? pipeline_model_init(&model, &set, rows, holds)
               : model_init_split(&model, set.config, rows, holds, &set.split);
    if (failed == -1)
        complain(command, "cannot allocate this model: --layers, --hidden, "
                 "--seq and --batch ask for more memory than there is");
    if (ranks_agree(failed != 0 ? 2 : 0, set.mesh.world) != 0)
        return 2;                   /* every rank, when one cannot go on */
    if (model.params_memory != NULL)    /* else each rank holds a shard */
        tp_init_weights(&model, model.params_memory, set.seed);
    Language lang;
    language_init(&lang, set.config.vocab, set.seed);
    if (data_parallel_init(&set.parallel, &model, &set.mesh) != 0) {
        complain(command, "cannot allocate the buffers for --dp");
        status = 2;
    }
    for (int t = 0; t < PARAM_TENSORS; t++)
        set.parallel.norm_counts[t] = tp_counts_tensor(&model, t);
    status = ranks_agree(status, set.mesh.world);
    TrainingState state = fresh_state(&set);
    char why[1024];
    if (status == 0 && set.resume != NULL
        && load_checkpoint(&set, &state, why, sizeof why) != 0) {
        if (rank == 0)                      /* every rank read it; one says */
            complain(command, "--resume: %s", why);
        status = 2;
    }
    int trains = !option_given(options, "--gradcheck")
              && !option_given(options, "--verify") && set.dump == NULL;
    if (status == 0 && set.resume != NULL && trains)
        status = resume_schedule(command, &set, &state, rank == 0);
    status = ranks_agree(status, set.mesh.world);
    if (status == 0 && option_given(options, "--gradcheck"))
        status = gradcheck(&model, &lang, &set, options);
    else if (status == 0 && option_given(options, "--verify"))
        status = verify(&model, &lang, &set, options);
    else if (status == 0 && set.dump != NULL)
        status = dump_state(&model, &lang, &set, &state, options);
    else if (status == 0)
        status = train(&model, &lang, &set, &state, options);
    data_parallel_free(&set.parallel);
    if (pipeline_free(&model) != 0)
        status = 2;
    model_free(&model);
    return status;
}
