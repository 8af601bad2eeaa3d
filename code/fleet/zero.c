/* Tangled from chapters/03-step.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <stdio.h>

#include "fleet.h"

ShardedState shard_state(const MemoryFloor *m, const StateBytes *s, int stage,
                         double ranks)
{
    double P = m->params;
    ShardedState z = { stage, ranks, 0, 0, 0, 0, 0 };
    z.weights = P * s->weights / (stage >= 3 ? ranks : 1);
    z.gradients = P * (s->gradients + s->master_gradients)
                / (stage >= 2 ? ranks : 1);
    z.optimizer = P * (s->master_weights + s->optimizer)
                / (stage >= 1 ? ranks : 1);
    z.total = z.weights + z.gradients + z.optimizer;
    z.traffic = data_parallel_bytes(stage, P * s->weights, ranks, 1, 0);
    return z;
}

int parse_zero_stage(const char *command, const char *text)
{
    if (text[0] >= '0' && text[0] <= '3' && text[1] == '\0')
        return text[0] - '0';
    complain(command, "--zero must be 0, 1, 2 or 3; got \"%s\"", text);
    return -1;
}
void print_sharded_state(FILE *out, const MemoryFloor *m, const StateBytes *s,
                         int stage, double ranks)
{
    ShardedState z = shard_state(m, s, stage, ranks);
    const char *names[] = { "plain data parallel", "ZeRO stage 1",
                            "ZeRO stage 2", "ZeRO stage 3 (FSDP)" };
    fprintf(out, "\n%s over %s, per device:\n", names[stage],
            counted(ranks, "data-parallel rank", "data-parallel ranks").s);
    const struct { const char *kind; double bytes, part; int sharded; } rows[] = {
        { "weights", z.weights, s->weights, stage >= 3 },
        { "gradients", z.gradients, s->gradients + s->master_gradients,
          stage >= 2 },
        { "optimizer", z.optimizer, s->master_weights + s->optimizer,
          stage >= 1 },
    };
    for (int i = 0; i < 3; i++)
        fprintf(out, "  %-10s = %s × %s B%s%s = %s\n", rows[i].kind,
                eng(m->params).s, sig(rows[i].part, 3).s,
                rows[i].sharded ? " ÷ " : "",
                rows[i].sharded ? grouped(ranks).s : "",
                bytes_auto(rows[i].bytes).s);
    fprintf(out, "  %-10s = %s\n", "total", bytes_auto(z.total).s);
    fprintf(out, "traffic per step = %s × %s × %s B × %s/%s = %s per device\n"
            "  (%s)\n", stage == 3 ? "3" : "2", eng(m->params).s,
            sig(s->weights, 3).s, grouped(ranks - 1).s, grouped(ranks).s,
            bytes_auto(z.traffic).s, stage == 3
            ? "weights gathered for forward and backward, gradients "
              "reduce-scattered"
            : stage == 0 ? "gradients all-reduced"
            : "gradients reduce-scattered, weights all-gathered");
}
void print_zero_sweep(FILE *out, const MemoryFloor *m, const StateBytes *s)
{
    fprintf(out, "dp,stage0,stage1,stage2,stage3\n");
    for (double ranks = 1; ranks <= 65536; ranks *= 2) {
        fprintf(out, "%.0f", ranks);
        for (int stage = 0; stage <= 3; stage++)
            fprintf(out, ",%.17g", shard_state(m, s, stage, ranks).total);
        fputc('\n', out);
    }
}
