/* exercises/labs/young-daly/grade.c: the autograder of the checkpoint lab.

   The book's functions are static in the planner's code/fleet/checkpoint.c,
   so this file includes that source whole (its feature macro first, before
   any header) and calls young_interval, daly_interval,
   interval_wall_seconds, effective_fraction_at and optimum_interval
   directly; the rest of the planner it needs is linked beside it. */
#include "checkpoint.c"

#include <stdio.h>

#include "lab_check.h"
#include "young_daly.h"

static const double writes[] = { 1, 30, 120, 600, 3600, 20000 };
static const double mtbis[] = { 120, 1800, 3 * 3600, 86400, 30 * 86400 };
static const double restarts[] = { 0, 300, 1800 };
enum { WRITES = 6, MTBIS = 5, RESTARTS = 3 };

static void check_intervals(void)
{
    char young[300] = "", daly[2][300] = { "", "" }, best[300] = "";
    int cases[2] = { 0, 0 };
    for (int w = 0; w < WRITES; w++)
        for (int m = 0; m < MTBIS; m++) {
            double d = writes[w], M = mtbis[m];
            double got = young_interval_s(d, M), want = young_interval(d, M);
            if (!young[0] && !lab_close(got, want, 1e-12))
                snprintf(young, sizeof young, ": δ = %g s, M = %g s: got "
                         "%.17g s, want %.17g s", d, M, got, want);
            int beyond = d >= 2 * M;
            cases[beyond]++;
            got = daly_interval_s(d, M);
            want = daly_interval(d, M);
            if (!daly[beyond][0] && !lab_close(got, want, 1e-12))
                snprintf(daly[beyond], sizeof daly[beyond], ": δ = %g s, "
                         "M = %g s: got %.17g s, want %.17g s", d, M, got,
                         want);
            got = best_interval_s(d, M);
            want = optimum_interval(d, M);
            if (!best[0] && !(isfinite(got)
                              && fabs(got - want) <= 1e-7 * want))
                snprintf(best, sizeof best, ": δ = %g s, M = %g s: got "
                         "%.17g s, want %.17g s", d, M, got, want);
        }
    lab_check(!young[0], "young_interval_s = the book's for %d writes "
              "(1 s to 20000 s) and %d fleets (M from 2 minutes to 30 "
              "days)%s", WRITES, MTBIS, young);
    lab_check(!daly[0][0], "daly_interval_s = the book's where δ < 2M (%d "
              "cases)%s", cases[0], daly[0]);
    lab_check(!daly[1][0], "daly_interval_s = M where δ >= 2M (%d cases, "
              "δ = 2M among them)%s", cases[1], daly[1]);
    lab_check(!best[0], "best_interval_s = the book's optimum_interval to "
              "1e-7, %d cases%s", WRITES * MTBIS, best);
}

static void check_wall_clock(void)
{
    char expected[300] = "", lost[300] = "";
    int cases = 0;
    for (int w = 0; w < WRITES; w++)
        for (int m = 0; m < MTBIS; m++)
            for (int r = 0; r < RESTARTS; r++) {
                double d = writes[w], M = mtbis[m], R = restarts[r];
                double taus[] = { young_interval(d, M), daly_interval(d, M),
                                  optimum_interval(d, M),
                                  daly_interval(d, M) / 4, 60, 7200 };
                for (int t = 0; t < 6; t++, cases++) {
                    double tau = taus[t];
                    double got = expected_interval_s(tau, d, R, M);
                    double want = interval_wall_seconds(tau, d, R, M);
                    if (!expected[0] && !(isfinite(got)
                             && fabs(got - want) <= 1e-10 * want))
                        snprintf(expected, sizeof expected, ": τ = %g s, "
                                 "δ = %g s, R = %g s, M = %g s: got %.17g "
                                 "s, want %.17g s", tau, d, R, M, got, want);
                    got = fraction_lost(tau, d, R, M);
                    want = 1 - effective_fraction_at(tau, d, R, M);
                    if (!lost[0] && !lab_close(got, want, 1e-10))
                        snprintf(lost, sizeof lost, ": τ = %g s, δ = %g s, "
                                 "R = %g s, M = %g s: got %.12g, want "
                                 "%.12g", tau, d, R, M, got, want);
                }
            }
    lab_check(!expected[0], "expected_interval_s = the book's "
              "interval_wall_seconds to 1e-10, %d cases (Young's, Daly's, "
              "the best and other intervals; restarts of 0 to 30 minutes)%s",
              cases, expected);
    lab_check(!lost[0], "fraction_lost = 1 - the book's "
              "effective_fraction_at to 1e-10, %d cases%s", cases, lost);
}

/* One property no table shows: at the best interval, f is at its peak. */
static void check_peak(void)
{
    char failed[300] = "";
    int cases = 0;
    for (int w = 0; w < WRITES; w++)
        for (int m = 0; m < MTBIS; m++) {
            double d = writes[w], M = mtbis[m];
            if (d > M / 2)
                continue;             /* f rounds to 0 near the peak */
            cases++;
            double best = best_interval_s(d, M);
            double at = fraction_lost(best, d, 0, M);
            double lower = fraction_lost(best * 0.99, d, 0, M);
            double higher = fraction_lost(best * 1.01, d, 0, M);
            if (!failed[0]
                && !(isfinite(at) && at > 0 && at < lower && at < higher))
                snprintf(failed, sizeof failed, ": δ = %g s, M = %g s: lost "
                         "%.12g at %g s, %.12g at 1%% less, %.12g at 1%% "
                         "more", d, M, at, best, lower, higher);
        }
    lab_check(!failed[0], "fraction_lost is least at best_interval_s (1%% "
              "either side loses more), %d cases with δ <= M/2%s", cases,
              failed);
}

int main(void)
{
    check_intervals();
    check_wall_clock();
    check_peak();
    return lab_finish("young-daly");
}
