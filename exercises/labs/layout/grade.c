/* exercises/labs/layout/grade.c: the autograder of the lab of chapter 5.
   It links the student's traffic.c with the chapter's own planner
   (code/fleet/layout.c, and what evaluate_plan needs of the chapters
   before it) and compares, for every (tp, pp, dp) layout of two models on
   two fleets, in nodes of four and of eight GPUs, with ZeRO-1 and FSDP, no
   and full recomputation, one or two chunks per pipeline rank and
   micro-batches of one and two sequences, the student's StepTraffic with
   the Plan that evaluate_plan fills in. Which axes cross nodes must agree
   exactly, bytes to a relative 1e-12; a failed check names the first
   layout it failed on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab_tally.h"
#include "traffic.h"

#define RELATIVE 1e-12

typedef struct {
    LabTally placed, tp, pp, dp, links;
} Tallies;

/* A model: parameters and the shape the planner reads. */
typedef struct {
    const char *name;
    double params, layers, hidden, heads, seq, vocab, batch_tokens;
} Model;

static const Model models[] = {
    /* the running example: 66 layers do not divide into most stages */
    { "100B", 100e9, 66, 12288, 96, 4096, 50304, 2097152 },
    { "7B", 7e9, 32, 4096, 32, 2048, 32000, 1048576 },
};
static const double fleet_gpus[] = { 64, 1024 };
static const double node_sizes[] = { 4, 8 };

static int same(double got, double want)
{
    return isfinite(got) && fabs(got - want) <= RELATIVE * fabs(want);
}

static Assumptions assumptions(void)
{
    return (Assumptions){ .compute_efficiency = 1, .link_efficiency = 1,
                          .overlap = 1,
                          .nvlink_latency = link_latency(LINK_NVLINK),
                          .nic_latency = link_latency(LINK_NIC),
                          .backward_ratio = 2 };
}

static void check_layout(Tallies *t, const Layout *l, const Fleet *f)
{
    Assumptions a = assumptions();
    Plan book = { .l = *l };
    evaluate_plan(&book, f, &a);
    StepTraffic s;
    memset(&s, 0, sizeof s);
    place_traffic(l, f, &s);
    char where[200];
    snprintf(where, sizeof where, "%s, TP%g × PP%g × DP%g in nodes of %g, "
             "ZeRO-%d, recompute %s, %g chunk(s), m %g of b %g",
             l->params == 100e9 ? "100B" : "7B", l->tp, l->pp, l->dp,
             f->per_node, l->zero, recompute_name(l->recompute), l->chunks,
             l->micro_batches, l->micro_batch);
    lab_tally(&t->placed, s.tp_nic == book.tp_nic && s.pp_nic == book.pp_nic
              && s.dp_nic == book.dp_nic, "%s: NIC for tp, pp, dp got %d %d "
              "%d, want %d %d %d", where, s.tp_nic, s.pp_nic, s.dp_nic,
              book.tp_nic, book.pp_nic, book.dp_nic);
    lab_tally(&t->tp, same(s.tp_bytes, book.tp_bytes), "%s: got %.17g B, "
              "want %.17g", where, s.tp_bytes, book.tp_bytes);
    lab_tally(&t->pp, same(s.pp_bytes, book.pp_bytes), "%s: got %.17g B, "
              "want %.17g", where, s.pp_bytes, book.pp_bytes);
    lab_tally(&t->dp, same(s.dp_bytes, book.dp_bytes), "%s: got %.17g B, "
              "want %.17g", where, s.dp_bytes, book.dp_bytes);
    lab_tally(&t->links, same(s.nic_bytes, book.nic_bytes)
              && same(s.nvlink_bytes, book.nvlink_bytes), "%s: NIC, NVLink "
              "got %.17g, %.17g B, want %.17g, %.17g", where, s.nic_bytes,
              s.nvlink_bytes, book.nic_bytes, book.nvlink_bytes);
}

/* The model on the fleet as the planner is given it, without a layout. */
static Layout base_layout(const Model *m)
{
    return (Layout){ .params = m->params, .layers = m->layers,
                     .hidden = m->hidden, .heads = m->heads, .seq = m->seq,
                     .vocab = m->vocab, .cp = 1, .gpu = next_gpu(first_gpu()),
                     .state = mixed_precision_adam(),
                     .attention = ATTENTION_FLASH };
}

/* Every layout of the pipeline's choices for one tp, pp, dp. */
static void check_choices(Tallies *t, Layout l, const Fleet *f)
{
    double sequences = f->batch_tokens / (l.seq * l.dp);   /* a pipeline */
    for (double b = 1; b <= 2 && b <= sequences; b++)
    for (double v = 1; v <= (l.pp > 1 ? 2 : 1); v++)
    for (int zero = 1; zero <= 3; zero += 2)
    for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r += 2) {
        l.micro_batch = b;
        l.micro_batches = sequences / b;
        if (v > 1 && (fmod(l.micro_batches, l.pp) != 0
                      || l.layers < l.pp * v))
            continue;
        l.chunks = v;
        l.schedule = v > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        l.zero = zero;
        l.recompute = (Recompute)r;
        check_layout(t, &l, f);
    }
}

static void check_fleet(Tallies *t, const Model *m, double gpus,
                        double per_node)
{
    const Gpu *h100 = next_gpu(first_gpu());
    Fleet f = { h100, gpus, per_node, h100->nvlink_bandwidth,
                h100->nic_bandwidth, m->batch_tokens, m->params };
    for (double tp = 1; tp <= 16; tp *= 2)
        for (double pp = 1; pp <= m->layers && tp * pp <= gpus; pp *= 2) {
            Layout l = base_layout(m);
            l.tp = tp, l.pp = pp, l.dp = gpus / (tp * pp);
            double sequences = m->batch_tokens / (m->seq * l.dp);
            if (sequences >= 1 && sequences == floor(sequences))
                check_choices(t, l, &f);
        }
}

/* The chapter's two designs on its fleet, each one check. */
static void check_design(const char *name, double tp, double pp, double dp,
                         int zero, double m)
{
    const Gpu *h100 = next_gpu(first_gpu());
    Fleet f = { h100, 1024, 8, h100->nvlink_bandwidth, h100->nic_bandwidth,
                2097152, 100e9 };
    Layout l = base_layout(&models[0]);
    l.tp = tp, l.pp = pp, l.dp = dp, l.zero = zero, l.micro_batches = m;
    l.micro_batch = 1, l.chunks = 1, l.schedule = SCHEDULE_1F1B;
    l.recompute = RECOMPUTE_SELECTIVE;
    Assumptions a = assumptions();
    Plan book = { .l = l };
    evaluate_plan(&book, &f, &a);
    StepTraffic s;
    memset(&s, 0, sizeof s);
    place_traffic(&l, &f, &s);
    lab_check(same(s.nic_bytes, book.nic_bytes)
              && same(s.nvlink_bytes, book.nvlink_bytes),
              "%s: %.4g B a GPU a step on the NIC, %.4g on NVLink (want "
              "%.4g, %.4g)", name, s.nic_bytes, s.nvlink_bytes,
              book.nic_bytes, book.nvlink_bytes);
}

int main(void)
{
    printf("lab layout: the student's traffic against the planner of "
           "code/fleet/layout.c\n");
    Tallies t;
    memset(&t, 0, sizeof t);
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++)
        for (size_t g = 0; g < sizeof fleet_gpus / sizeof fleet_gpus[0]; g++)
            for (size_t n = 0; n < sizeof node_sizes / sizeof node_sizes[0];
                 n++)
                check_fleet(&t, &models[m], fleet_gpus[g], node_sizes[n]);
    lab_tally_check(&t.placed, "which axes cross nodes");
    lab_tally_check(&t.tp, "tensor-parallel bytes");
    lab_tally_check(&t.pp, "pipeline bytes");
    lab_tally_check(&t.dp, "data-parallel bytes");
    lab_tally_check(&t.links, "bytes on the NIC and on NVLink");
    check_design("design A, TP8 × FSDP128", 8, 1, 128, 3, 4);
    check_design("design B, TP8 × PP8 × DP16", 8, 8, 16, 1, 32);
    return lab_finish("layout");
}
