/* Tangled from chapters/09-tensor-parallel.nw, chapters/93-trainer-state.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/96-tensor-parallel-plumbing.nw, chapters/97-cuda.nw, chapters/98-pipeline-plumbing.nw, chapters/99c-buckets.nw, chapters/99gp-precision-plumbing.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file. */
#include <stdio.h>
#include <string.h>

#include "trainer.h"

int read_settings(const char *command, Option *o, int rank, int ranks,
                  Settings *set)
{
    *set = (Settings){
        .config = { (int)option_number(o, "--layers"),
                    (int)option_number(o, "--hidden"),
                    (int)option_number(o, "--heads"),
                    (int)option_number(o, "--seq"),
                    (int)option_number(o, "--vocab") },
        .batch = (int)option_number(o, "--batch"),
        .steps = (int)option_number(o, "--steps"),
        .micro = (int)option_number(o, "--micro-batches"),
        .eval_every = (int)option_number(o, "--eval-every"),
        .save_every = (int)option_number(o, "--save-every"),
        .quiet = option_given(o, "--quiet"),
        .lr = (real)option_number(o, "--lr"),
        .seed = (uint64_t)option_number(o, "--seed"),
        .save = option_text(o, "--save"),
        .resume = option_text(o, "--resume"),
        .log = option_text(o, "--log"),
        .profile = option_text(o, "--profile"),
        .machine = option_text(o, "--machine"),
        .rank = rank, .ranks = ranks, .dp = 1,
    };
    ModelConfig c = set->config;
    double C = c.hidden, params = (double)c.vocab * C + (double)c.seq * C
                  + c.layers * (12 * C * C + 13 * C) + 2 * C + C * c.vocab;
    double state = 4.0 * sizeof(real) * params;
    double held = option_given(o, "--verify") || option_given(o, "--gradcheck")
                ? set->batch : (double)set->batch / set->micro;
    double activations = sizeof(real) * held * c.seq * c.layers
                       * (16.0 * c.hidden + (double)c.heads * c.seq)
                       + 2.0 * sizeof(real) * held * c.seq * c.vocab;
    if (c.hidden % c.heads != 0)
        complain(command, "--heads (%d) must divide --hidden (%d)", c.heads,
                 c.hidden);
    else if (c.vocab < MIN_VOCAB)
        complain(command, "--vocab must be at least %d; got %d", MIN_VOCAB,
                 c.vocab);
    else if (set->batch % set->micro != 0)
        complain(command, "--micro-batches (%d) must divide --batch (%d)",
                 set->micro, set->batch);
    else if (activations > 16e9)
        complain(command, "--batch, --seq, --hidden and --layers ask for %s "
                 "of activations; the limit is 16 GB",
                 bytes_auto(activations).s);
    else if (state > 16e9)
        complain(command, "--layers, --hidden, --seq and --vocab ask for %s "
                 "of weights, gradients and Adam state; the limit is 16 GB",
                 bytes_auto(state).s);
    else if (option_given(o, "--save-every") && set->save == NULL)
        complain(command, "--save-every needs --save PATH");
    else if (option_given(o, "--gradcheck") && option_given(o, "--verify"))
        complain(command, "--gradcheck and --verify are separate runs; "
                 "give one");
    else if (set->machine != NULL
             && (machine_figure(command, "--machine", set->machine,
                                "peak_flops_per_core", &set->peak) != 0
                 || machine_figure(command, "--machine", set->machine,
                                   "gemm_flops_per_core", &set->gemm_flops) != 0))
        return 2;                          /* machine_figure said why */
    else {
        set->dump = option_text(o, "--dump");
        set->keep = option_given(o, "--keep-checkpoints")
                  ? (int)option_number(o, "--keep-checkpoints") : 0;
        set->allow_schedule_change = option_given(o, "--allow-schedule-change");
        set->fail_shard = option_given(o, "--fail-shard-write")
                        ? (int)option_number(o, "--fail-shard-write") : -1;
        int checks = option_given(o, "--gradcheck") || option_given(o, "--verify")
                  || option_given(o, "--sample");
        if (set->dump != NULL && checks) {
            complain(command, "--dump, --gradcheck, --verify and --sample are "
                     "separate runs; give one");
            return 2;
        }
        if (set->dump != NULL && (ranks > 1 || option_given(o, "--zero"))) {
            complain(command, "--dump writes one process's whole state; run it "
                     "without mpiexec and --zero");
            return 2;
        }
        if (set->dump != NULL && set->save != NULL) {
            complain(command, "--dump trains nothing and saves no checkpoint; for "
                     "the initial state as a checkpoint, give --steps 0 --save PATH");
            return 2;
        }
        if (!checks && set->dump == NULL && set->steps == 0 && set->save == NULL) {
            complain(command, "--steps 0 trains nothing: it saves the initial "
                     "state, and needs --save PATH");
            return 2;
        }
        if (set->keep > 0 && set->save == NULL) {
            complain(command, "--keep-checkpoints needs --save PATH");
            return 2;
        }
        if (set->allow_schedule_change && set->resume == NULL) {
            complain(command, "--allow-schedule-change is for --resume; give both");
            return 2;
        }
        if (set->fail_shard >= 0 && (set->save == NULL || set->fail_shard >= ranks)) {
            complain(command, "--fail-shard-write %d needs --save and a rank below "
                     "%d", set->fail_shard, ranks);
            return 2;
        }
        int tp = (int)option_number(o, "--tp"), pp = (int)option_number(o, "--pp");
        int dp = (int)option_number(o, "--dp");
        if (!option_given(o, "--dp")
            && (option_given(o, "--tp") || option_given(o, "--pp"))) {
            if (ranks % (tp * pp) != 0) {
                complain(command, "--tp %d × --pp %d does not divide the %d %s "
                         "started by mpiexec; the data axis takes what is left", tp,
                         pp, ranks, ranks == 1 ? "rank" : "ranks");
                return 2;
            }
            dp = ranks / (tp * pp);             /* the data axis takes the rest */
        }
        char layout_why[256];
        if (mesh_refuses(ranks, tp, pp, dp, layout_why, sizeof layout_why)) {
            complain(command, "%s", layout_why);
            return 2;
        }
        set->dp = dp;
        set->mesh = (Mesh){ .tp = tp, .pp = pp, .dp = dp };   /* laid out later */
        const char *how = option_text(o, "--allreduce");
        set->parallel = (DataParallel){ .ring = strcmp(how, "ring") == 0,
                                        .overlap = !option_given(o, "--no-overlap"),
                                        .communicate
                                            = !option_given(o, "--no-allreduce") };
        if (!set->parallel.communicate
            && (option_given(o, "--verify") || option_given(o, "--gradcheck")
                || strcmp(option_text(o, "--zero"), "0") != 0)) {
            complain(command, "--no-allreduce is a timing baseline for --zero 0; "
                     "it cannot be verified");
            return 2;
        }
        if (strcmp(how, "ring") != 0 && strcmp(how, "mpi") != 0) {
            complain(command, "--allreduce: unknown \"%s\" (known: ring, mpi)", how);
            return 2;
        }
        if (set->parallel.ring && sizeof(real) != sizeof(float)) {
            complain(command, "--allreduce ring is single precision; this build "
                     "uses --allreduce mpi");
            return 2;
        }
        if (set->batch % set->dp != 0 || (set->batch / set->dp) % set->micro != 0) {
            complain(command, "--batch (%d) must divide into --dp (%d) slices of "
                     "--micro-batches (%d) equal pieces", set->batch, set->dp,
                     set->micro);
            return 2;
        }
        const char *zero = option_text(o, "--zero");
        int stage = zero[0] >= '0' && zero[0] <= '3' && zero[1] == '\0'
                  ? zero[0] - '0' : -1;
        set->parallel.stage = stage;
        set->parallel.seed = set->seed;
        if (stage < 0) {
            complain(command, "--zero must be 0, 1, 2 or 3; got \"%s\"", zero);
            return 2;
        }
        if (stage > 0 && sizeof(real) != sizeof(float)) {
            complain(command, "--zero %d uses the single-precision ring; this build "
                     "is double precision", stage);
            return 2;
        }
        if (stage > 0 && (option_given(o, "--allreduce")
                          || option_given(o, "--no-overlap"))) {
            complain(command, "--allreduce and --no-overlap choose stage 0's "
                     "all-reduce; --zero %d reduce-scatters and gathers with the "
                     "ring", stage);
            return 2;
        }
        if (stage > 0 && option_given(o, "--gradcheck")) {
            complain(command, "--gradcheck perturbs a whole model; use it without "
                     "--zero");
            return 2;
        }
        const ShardingStrategy *replicated
            = set->dp == 1 ? &replicated_alone
            : !set->parallel.communicate ? &replicated_skipped
            : set->parallel.ring ? &replicated_ring
            : set->parallel.overlap ? &replicated_overlapped : &replicated_blocking;
        set->parallel.strategy = stage > 0 ? &zero_stages[stage - 1] : replicated;
        {
            int t = set->mesh.tp, sp = option_given(o, "--sequence-parallel");
            ModelConfig shape = set->config;
            set->split = (TensorParallel){ .comm = MPI_COMM_SELF, .ways = t,
                                           .sequence_parallel = sp };
            tp_split_sequence(sp);
            if (shape.heads % t != 0) {
                complain(command, "--tp %d does not divide --heads %d: each rank "
                         "computes whole heads", t, shape.heads);
                return 2;
            }
            if (shape.vocab % t != 0) {
                complain(command, "--tp %d does not divide --vocab %d: each rank "
                         "holds a t-th of the head's columns", t, shape.vocab);
                return 2;
            }
            if (sp && shape.seq % t != 0) {
                complain(command, "--sequence-parallel: --tp %d does not divide "
                         "--seq %d", t, shape.seq);
                return 2;
            }
            if (sp && (set->parallel.stage >= 2 || sizeof(real) != sizeof(float))) {
                complain(command, "--sequence-parallel runs in single precision "
                         "with --zero 0 or 1");
                return 2;
            }
            if (t > 1 && (option_given(o, "--gradcheck")
                          || option_given(o, "--dump"))) {
                complain(command, "--tp %d: --gradcheck and --dump work on one whole "
                         "model; use them without --tp", t);
                return 2;
            }
        }
        if (option_given(o, "--collectives") && !option_given(o, "--device")) {
            complain(command, "--collectives chooses the GPU backend's path; it "
                     "needs --device cuda");
            return 2;
        }
        if (strcmp(option_text(o, "--collectives"), "auto") != 0
            && strcmp(option_text(o, "--collectives"), "nccl") != 0
            && strcmp(option_text(o, "--collectives"), "host") != 0) {
            complain(command, "--collectives: unknown \"%s\" (known: auto, nccl, "
                     "host)", option_text(o, "--collectives"));
            return 2;
        }
        {
            int P = set->mesh.pp, V = (int)option_number(o, "--chunks");
            int runs = P > 1 && !option_given(o, "--print-mesh");  /* a pipeline */
            const char *name = option_text(o, "--schedule");
            set->schedule = schedule_from_name(name);
            set->trace = option_text(o, "--trace");
            int interleaved = set->schedule == SCHEDULE_INTERLEAVED;
            set->chunks = interleaved ? V : 1;
            if (P == 1 && (option_given(o, "--schedule")
                           || option_given(o, "--chunks")
                           || option_given(o, "--trace"))) {
                complain(command, "--schedule, --chunks and --trace are for a "
                         "pipeline; give --pp 2 or more");
                return 2;
            }
            if (set->schedule < 0) {
                complain(command, "--schedule: unknown \"%s\" (known: gpipe, 1f1b, "
                         "interleaved, zb-h1)", name);
                return 2;
            }
            if (option_given(o, "--chunks") && !interleaved) {
                complain(command, "--chunks is for --schedule interleaved; %s runs "
                         "one chunk per stage", name);
                return 2;
            }
            if (runs && set->config.layers % (P * set->chunks) != 0) {
                complain(command, "--layers %d does not split into --pp %d stages "
                         "of %d %s each", set->config.layers, P, set->chunks,
                         set->chunks == 1 ? "part" : "equal chunks");
                return 2;
            }
            if (runs && interleaved && set->micro % P != 0) {
                complain(command, "--schedule interleaved runs micro-batches in "
                         "groups of --pp %d: --micro-batches %d is not a multiple "
                         "of it", P, set->micro);
                return 2;
            }
            if (runs && set->parallel.stage >= 2) {
                complain(command, "--zero %d with --pp: a pipeline takes --zero 0 "
                         "or 1", set->parallel.stage);
                return 2;
            }
            if (runs && (option_given(o, "--gradcheck")
                          || option_given(o, "--dump"))) {
                complain(command, "--pp %d: --gradcheck and --dump work on one whole "
                         "model; use them without --pp", P);
                return 2;
            }
        }
        if (option_given(o, "--bucket-mb")) {
            DataParallel *axis = &set->parallel;
            if (axis->stage > 0) {
                complain(command, "--bucket-mb groups stage 0's all-reduce; --zero "
                         "%d reduce-scatters unit by unit", axis->stage);
                return 2;
            }
            if (axis->ring || !axis->overlap || !axis->communicate) {
                complain(command, "--bucket-mb groups the overlapped MPI "
                         "all-reduce; drop --allreduce ring, --no-overlap and "
                         "--no-allreduce");
                return 2;
            }
            if (set->dp == 1) {
                complain(command, "--bucket-mb needs a data axis: give --dp 2 or "
                         "more");
                return 2;
            }
            axis->bucket_bytes = option_number(o, "--bucket-mb") * 1048576.0;
            if (axis->bucket_bytes > 0)
                axis->strategy = &replicated_in_buckets;
        }
        {
            DataParallel *axis = &set->parallel;
            const char *name = option_text(o, "--precision");
            int fp16 = strcmp(name, "fp16") == 0, bf16 = strcmp(name, "bf16") == 0;
            int fp32 = strcmp(name, "fp32") == 0, fp8 = strcmp(name, "fp8") == 0;
            int scaling = option_given(o, "--fp32-grads")
                       || option_given(o, "--loss-scale")
                       || option_given(o, "--loss-scale-window")
                       || option_given(o, "--no-loss-scaling");
            axis->format = bf16 || fp8 ? FORMAT_BF16
                         : fp16 ? FORMAT_FP16 : FORMAT_FP32;
            axis->fp8 = fp8;
            axis->fp32_grads = option_given(o, "--fp32-grads");
            axis->loss_scaling = !option_given(o, "--no-loss-scaling");
            axis->scale_window = (int)option_number(o, "--loss-scale-window");
            axis->initial_scale = option_given(o, "--loss-scale")
                                ? option_number(o, "--loss-scale")
                                : fp16 && axis->loss_scaling ? 65536 : 1;
            axis->histogram_path = option_text(o, "--grad-histogram");
            if (option_given(o, "--device") && fp8) {
                complain(command, "--device cuda has no fp8 GEMMs; --precision fp8 "
                         "is the CPU trainer's emulation (drop --device)");
                return 2;
            } else if (option_given(o, "--device")) {
                if (scaling || axis->histogram_path != NULL) {
                    complain(command, "--device cuda takes --precision alone; the "
                             "loss-scale flags, --fp32-grads and --grad-histogram "
                             "are the CPU trainer's");
                    return 2;
                }
                axis->format = FORMAT_FP32;         /* the GPU reads --precision */
            } else if (!fp32 && !bf16 && !fp16 && !fp8) {
                complain(command, "--precision: unknown \"%s\" (known: fp32, bf16, "
                         "fp16, fp8)", name);
                return 2;
            } else if (fp8 && scaling) {
                complain(command, "--precision fp8 scales each GEMM input by its "
                         "own factor and holds bf16 gradients: no loss scale, no "
                         "--fp32-grads");
                return 2;
            } else if (fp32 && scaling) {
                complain(command, "--fp32-grads and the loss-scale flags are for "
                         "--precision bf16 or fp16");
                return 2;
            } else if (!axis->loss_scaling
                       && option_given(o, "--loss-scale-window")) {
                complain(command, "--no-loss-scaling keeps the scale fixed; drop "
                         "--loss-scale-window");
                return 2;
            } else if (!fp32 && ranks > 1) {
                complain(command, "--precision %s trains on one rank in this "
                         "chapter (mpiexec gave %d)", name, ranks);
                return 2;
            } else if (!fp32 && sizeof(real) != sizeof(float)) {
                complain(command, "--precision %s: this build is double precision",
                         name);
                return 2;
            } else if (!fp32 && (axis->stage > 0 || option_given(o, "--gradcheck")
                                 || set->dump != NULL)) {
                complain(command, "--precision %s holds 16-bit state; --zero, "
                         "--gradcheck and --dump read whole fp32 arrays", name);
                return 2;
            }
            if (!fp32 && !option_given(o, "--device"))
                axis->strategy = &mixed_precision_alone;
            if (axis->histogram_path != NULL
                && (ranks > 1 || set->micro > 1
                    || check_writable(command, "--grad-histogram",
                                      axis->histogram_path) != 0)) {
                if (ranks > 1 || set->micro > 1)
                    complain(command, "--grad-histogram counts one pass's "
                             "gradients: one rank, one micro-batch");
                return 2;
            }
        }
        set->async_save = option_given(o, "--async-save");
        set->fault_step = option_given(o, "--fault-at-step")
                        ? (int)option_number(o, "--fault-at-step") : 0;
        set->fault_rank = (int)option_number(o, "--fault-rank");
        if (set->async_save && set->save == NULL) {
            complain(command, "--async-save writes the checkpoints of --save; "
                     "give --save PATH");
            return 2;
        }
        if (set->async_save && set->keep > 0) {
            complain(command, "--async-save keeps no copies of old checkpoints; "
                     "drop --keep-checkpoints");
            return 2;
        }
        if (set->async_save && option_given(o, "--device")) {
            complain(command, "--async-save: a --device cuda run saves no "
                     "checkpoints");
            return 2;
        }
        if (option_given(o, "--fault-rank") != (set->fault_step > 0)) {
            complain(command, "--fault-at-step and --fault-rank go together: "
                     "give both");
            return 2;
        }
        if (set->fault_step > set->steps) {
            complain(command, "--fault-at-step %d is after the last step, --steps "
                     "%d", set->fault_step, set->steps);
            return 2;
        }
        if (set->fault_step > 0 && set->fault_rank >= ranks) {
            complain(command, "--fault-rank %d: the ranks are 0 to %d",
                     set->fault_rank, ranks - 1);
            return 2;
        }
        return 0;
    }
    return 2;
}
