/* exercises/labs/young-daly/young_daly.h: the five functions of the
   checkpoint lab (Chapter 13), which young_daly.c defines. Every time is
   in seconds: δ (write_s) the stall of one checkpoint, M (mtbi_s) the
   fleet's mean time between interruptions, R (restart_s) the time from
   an interruption to training again, τ (interval_s) the training between
   checkpoints. */
#ifndef YOUNG_DALY_H
#define YOUNG_DALY_H

/* Young's interval, to first order in δ/M. */
double young_interval_s(double write_s, double mtbi_s);

/* Daly's interval, to higher order in δ/M; M itself when δ >= 2M. */
double daly_interval_s(double write_s, double mtbi_s);

/* E(τ): the expected wall-clock time to train τ and write it, when
   interruptions come at random (a Poisson process of mean gap M), an
   interruption during the interval or its write loses both, and each
   costs a restart of R that an interruption begins again. */
double expected_interval_s(double interval_s, double write_s,
                           double restart_s, double mtbi_s);

/* 1 - f(τ), f = τ/E(τ): the fraction of the wall clock lost to writes,
   rework and restarts. */
double fraction_lost(double interval_s, double write_s, double restart_s,
                     double mtbi_s);

/* The τ at which f(τ) is largest, to a relative 1e-7 or better. */
double best_interval_s(double write_s, double mtbi_s);
#endif
