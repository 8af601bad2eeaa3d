/* exercises/labs/fleet-size/grade.c: the autograder of the lab of
   chapter 2. It links the student's fleet_size.c with the chapter's own
   code/fleet/compute.c and compares, over a grid of models, token counts,
   shapes, parts, utilisations, fleets and deadlines, each of the student's
   four functions with what derive_training_time gives. FLOPs, days and
   GPU-hours must agree to a relative 1e-12, GPU counts exactly. A failed
   check names the first input it failed on.

   The chapter's own fleet for a deadline (gpus_for_deadline) is private
   to compute.c, so the reference here is derive_training_time's seconds on
   one GPU, divided by the deadline and rounded up with ceil_count: the
   same division, in another order, which ceil_count's tolerance absorbs. */
#include <stdio.h>
#include <string.h>

#include "fleet_size.h"
#include "lab_tally.h"

#define RELATIVE 1e-12

static const double params_grid[] = { 1e8, 7e9, 70e9, 100e9, 405e9, 1e12 };
static const double tokens_grid[] = { 3e11, 2e12, 15e12 };
/* layers, seq, hidden: none, the running example's, a wider one */
static const double shapes[][3] = { { 0, 0, 0 }, { 66, 4096, 12288 },
                                    { 126, 8192, 16384 } };
static const double mfu_grid[] = { 0.3, 0.4, 0.55 };
static const double gpus_grid[] = { 1, 8, 1024, 16384 };
static const double days_grid[] = { 1, 30, 90 };
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

typedef struct {
    LabTally flops, dense, days, hours, hours_fleet, gpus;
} Tallies;

/* The book's run: what derive_training_time makes of the inputs. */
static TrainingTime book_run(double n, double d, const double *shape,
                             const Gpu *g, double mfu, double gpus)
{
    TrainingTime t = { .params = n, .active_params = n, .tokens = d,
                       .layers = shape[0], .seq = shape[1],
                       .hidden = shape[2], .gpu = g, .mfu = mfu,
                       .gpus = gpus };
    derive_training_time(&t);
    return t;
}

static void check_flops(Tallies *t, double n, double d, const double *shape)
{
    const Gpu *g = first_gpu();
    TrainingTime book = book_run(n, d, shape, g, 0.4, 1);
    double got = flops_to_train(n, d, shape[0], shape[1], shape[2]);
    LabTally *which = shape[0] == 0 ? &t->dense : &t->flops;
    lab_tally(which, lab_close(got, book.flops, RELATIVE),
              "N %g, D %g, L %g, s %g, h %g: got %.6g, want %.6g", n, d,
              shape[0], shape[1], shape[2], got, book.flops);
}

static void check_time(Tallies *t, double flops_n, double d, const Gpu *g,
                       double mfu)
{
    const double none[3] = { 0, 0, 0 };
    TrainingTime one = book_run(flops_n, d, none, g, mfu, 1);
    for (int i = 0; i < COUNT(gpus_grid); i++) {
        TrainingTime b = book_run(flops_n, d, none, g, mfu, gpus_grid[i]);
        double days = days_to_train(b.flops, g, mfu, gpus_grid[i]);
        lab_tally(&t->days, lab_close(days, b.seconds / 86400, RELATIVE),
                  "%.6g FLOPs on %g %s at MFU %g: got %.6g days, want %.6g",
                  b.flops, gpus_grid[i], g->key, mfu, days,
                  b.seconds / 86400);
        lab_tally(&t->hours_fleet, lab_close(b.gpu_hours, one.gpu_hours,
                                             RELATIVE) &&
                  lab_close(gpu_hours_to_train(b.flops, g, mfu), b.gpu_hours,
                            RELATIVE),
                  "%.6g FLOPs on %g %s at MFU %g: got %.6g GPU-hours, the "
                  "book's run on that fleet %.6g", b.flops, gpus_grid[i],
                  g->key, mfu, gpu_hours_to_train(b.flops, g, mfu),
                  b.gpu_hours);
    }
    double hours = gpu_hours_to_train(one.flops, g, mfu);
    lab_tally(&t->hours, lab_close(hours, one.gpu_hours, RELATIVE),
              "%.6g FLOPs on %s at MFU %g: got %.6g GPU-hours, want %.6g",
              one.flops, g->key, mfu, hours, one.gpu_hours);
    for (int i = 0; i < COUNT(days_grid); i++) {
        double want = ceil_count(one.seconds / (days_grid[i] * 86400));
        double got = gpus_for_days(one.flops, g, mfu, days_grid[i]);
        lab_tally(&t->gpus, got == want, "%.6g FLOPs in %g days on %s at "
                  "MFU %g: got %g GPUs, want %g", one.flops, days_grid[i],
                  g->key, mfu, got, want);
    }
}

/* A named case: the GPUs for `days`, against the book's. */
static void check_deadline(const char *what, double n, double d,
                           const char *gpu, double mfu, double days)
{
    const double none[3] = { 0, 0, 0 };
    const Gpu *g = first_gpu();
    while (g != NULL && strcmp(g->key, gpu) != 0)
        g = next_gpu(g);
    TrainingTime one = book_run(n, d, none, g, mfu, 1);
    double want = ceil_count(one.seconds / (days * 86400));
    double got = gpus_for_days(one.flops, g, mfu, days);
    lab_check(got == want, "%s: 6 × %g × %g FLOPs in %g days on %s at MFU "
              "%g: %g GPUs (want %g)", what, n, d, days, gpu, mfu, got, want);
}

int main(void)
{
    printf("lab fleet-size: the student's arithmetic against "
           "code/fleet/compute.c\n");
    Tallies t = { { 0, 0, "" }, { 0, 0, "" }, { 0, 0, "" }, { 0, 0, "" },
                  { 0, 0, "" }, { 0, 0, "" } };
    for (int n = 0; n < COUNT(params_grid); n++)
        for (int d = 0; d < COUNT(tokens_grid); d++) {
            for (int s = 0; s < COUNT(shapes); s++)
                check_flops(&t, params_grid[n], tokens_grid[d], shapes[s]);
            for (const Gpu *g = first_gpu(); g != NULL; g = next_gpu(g))
                for (int u = 0; u < COUNT(mfu_grid); u++)
                    check_time(&t, params_grid[n], tokens_grid[d], g,
                               mfu_grid[u]);
        }
    lab_tally_check(&t.dense, "flops_to_train: 6 N D (no shape given)");
    lab_tally_check(&t.flops, "flops_to_train: 6 N D + attention");
    lab_tally_check(&t.days, "days_to_train");
    lab_tally_check(&t.hours, "gpu_hours_to_train");
    lab_tally_check(&t.hours_fleet, "gpu_hours_to_train: the same on every "
                    "fleet");
    lab_tally_check(&t.gpus, "gpus_for_days");
    /* 6 × 405e9 × 2e12 FLOPs is 62,500 B200-days at 40 %, exactly on
       paper but not in binary; and a small run needs one GPU, not a
       fraction of one */
    check_deadline("a whole count on paper", 405e9, 2e12, "b200", 0.4, 1);
    check_deadline("less than one GPU", 1e8, 1e9, "h100", 0.4, 30);
    check_deadline("the chapter's deadline", 100e9, 2e12, "h100", 0.4, 30);
    return lab_finish("fleet-size");
}
