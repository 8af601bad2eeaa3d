/* exercises/labs/activations/grade.c: the autograder of the lab of
   chapter 4. It links the student's layer_bytes.c with the chapter's own
   code/fleet/activations.c and compares layer_activation_bytes with
   activation_bytes_per_layer over a grid of shapes (sequence length,
   micro-batch, hidden size, heads) and of every variant the chapter's
   table gives (tensor parallelism, sequence parallelism, selective and
   full recomputation, materialised or fused attention) and context
   parallelism. Each variant is one check; the bytes must agree to a
   relative 1e-12, and a failed check names the first input it failed
   on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab_tally.h"
#include "layer_bytes.h"

#define RELATIVE 1e-12
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static const double seq_grid[] = { 1, 2048, 4096, 8192, 131072 };
static const double micro_batch_grid[] = { 1, 4 };
/* hidden, heads: a small model's, the running example's, a wider one */
static const double width_grid[][2] = { { 4096, 32 }, { 12288, 96 },
                                        { 16384, 128 } };
static const double tp_grid[] = { 1, 2, 8 };
static const double cp_grid[] = { 0, 1, 2, 8 };

/* The variants, each a check of its own. */
enum { NO_PARALLELISM, TP, TP_SP, FLASH, SELECTIVE, FULL, FULL_SP, CP,
       VARIANTS };
static const char *const variant_names[VARIANTS] = {
    "no parallelism, scores kept: sbh (34 + 5as/h)",
    "tensor parallel, scores kept: sbh (10 + 24/t + 5as/(ht))",
    "tensor + sequence parallel, scores kept: sbh (34/t + 5as/(ht))",
    "fused (flash) attention, no recomputation",
    "selective recomputation",
    "full recomputation",
    "full recomputation with sequence parallelism",
    "context parallelism (cp > 1)",
};

static int variant_of(const LayerActivations *a)
{
    if (a->cp > 1)
        return CP;
    if (a->recompute == RECOMPUTE_FULL)
        return a->sequence_parallel ? FULL_SP : FULL;
    if (a->recompute == RECOMPUTE_SELECTIVE)
        return SELECTIVE;
    if (a->attention == ATTENTION_FLASH)
        return FLASH;
    if (a->tp == 1)
        return NO_PARALLELISM;
    return a->sequence_parallel ? TP_SP : TP;
}

static const char *const recompute_names[] = { "none", "selective",
                                               "full" };

static void check_one(LabTally *tallies, const LayerActivations *a)
{
    double got = layer_activation_bytes(a);
    double want = activation_bytes_per_layer(a);
    int ok = isfinite(got) && fabs(got - want) <= RELATIVE * want;
    lab_tally(&tallies[variant_of(a)], ok, "s %g, b %g, h %g, a %g, t %g, "
              "sp %d, recompute %s, attention %s, cp %g: got %.17g B, "
              "want %.17g", a->seq, a->micro_batch, a->hidden, a->heads,
              a->tp, a->sequence_parallel, recompute_names[a->recompute],
              a->attention == ATTENTION_FLASH ? "flash" : "materialized",
              a->cp, got, want);
}

/* The chapter's design A: a micro-batch of one 4,096-token sequence of
   width 12,288, TP8 with sequence parallelism and selective
   recomputation, 34/8 sbh. */
static void check_design_a(void)
{
    LayerActivations a = { .seq = 4096, .micro_batch = 1, .hidden = 12288,
                           .heads = 96, .tp = 8, .sequence_parallel = 1,
                           .recompute = RECOMPUTE_SELECTIVE,
                           .attention = ATTENTION_FLASH, .cp = 1 };
    double got = layer_activation_bytes(&a);
    double want = activation_bytes_per_layer(&a);
    lab_check(isfinite(got) && fabs(got - want) <= RELATIVE * want,
              "design A's layer (s 4096, b 1, h 12288, TP8 + SP, "
              "selective): %.6g B (want %.6g)", got, want);
}

int main(void)
{
    printf("lab activations: the student's layer against "
           "code/fleet/activations.c\n");
    LabTally tallies[VARIANTS];
    memset(tallies, 0, sizeof tallies);
    for (int s = 0; s < COUNT(seq_grid); s++)
    for (int b = 0; b < COUNT(micro_batch_grid); b++)
    for (int w = 0; w < COUNT(width_grid); w++)
    for (int t = 0; t < COUNT(tp_grid); t++)
    for (int c = 0; c < COUNT(cp_grid); c++)
    for (int sp = 0; sp <= 1; sp++)
    for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r++)
    for (int k = ATTENTION_FLASH; k <= ATTENTION_MATERIALIZED; k++) {
        LayerActivations a = {
            .seq = seq_grid[s], .micro_batch = micro_batch_grid[b],
            .hidden = width_grid[w][0], .heads = width_grid[w][1],
            .tp = tp_grid[t], .sequence_parallel = sp,
            .recompute = (Recompute)r, .attention = (Attention)k,
            .cp = cp_grid[c] };
        check_one(tallies, &a);
    }
    for (int v = 0; v < VARIANTS; v++)
        lab_tally_check(&tallies[v], variant_names[v]);
    check_design_a();
    return lab_finish("activations");
}
