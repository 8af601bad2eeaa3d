/* Tangled from chapters/01-memory-floor.nw, chapters/02-compute-and-fleet.nw, chapters/03-step.nw, chapters/04-activations.nw, chapters/90-plumbing.nw, chapters/91-planner-subcommands.nw, chapters/99d-hierarchical.nw, chapters/99h-reliability-plumbing.nw and chapters/99k-experts-plumbing.nw; edit the chapters, not this file. */
#include <stdio.h>
#include <string.h>

#include "fleet.h"

static const struct {
    const char *name;
    Subcommand *run;
    const char *summary;
} subcommands[] = {
    { "memory", memory_main, "the static training state and the memory floor" },
    { "compute", compute_main,
      "training FLOPs, days on a fleet, fleet for a deadline" },
    { "step", step_main, "the batch, the step, and bytes against compute per link" },
    { "tp", tp_main, "a tensor-parallel block: all-reduce bytes against compute" },
    { "activations", activations_main, "activation memory per layer, stage and GPU" },
    { "pipeline", pipeline_main, "a pipeline schedule's timeline and bubble" },
    { "layout", layout_main, "every layout of a model on a fleet, ranked" },
    { "allreduce", allreduce_main,
      "one all-reduce, flat ring against hierarchical" },
    { "checkpoint", checkpoint_main,
      "interruptions, checkpoint interval, effective time and wall clock" },
    { "moe", moe_main,
      "a mixture of experts: memory, compute and the all-to-all" },
};

enum { SUBCOMMANDS = sizeof subcommands / sizeof subcommands[0] };

static void usage(FILE *out)
{
    fprintf(out, "usage: fleet COMMAND [flags]   (fleet COMMAND --help)\n\n");
    for (int i = 0; i < SUBCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", subcommands[i].name,
                subcommands[i].summary);
}

int main(int argc, char **argv)
{
    guard_stdout("fleet");
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 0; i < SUBCOMMANDS; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "fleet: unknown command \"%s\" (try fleet --help)\n",
            argv[1]);
    return 2;
}
