/* exercises/labs/common/lab_tally.h: one check over a grid of inputs.

   An autograder that compares a student's function with the book's on
   many inputs counts, for each quantity, on how many it was wrong, keeps
   the first input it was wrong on, and then makes that one check:

       "  PASS  what: all 960 inputs"
       "  FAIL  what: wrong on 3 of 960 inputs; first: INPUT: got X, want Y"

   so that a student sees at once where to look. */
#ifndef LAB_TALLY_H
#define LAB_TALLY_H

#include <stdarg.h>
#include <stdio.h>

#include "lab_check.h"

typedef struct {
    int cases, failed;
    char first[320];          /* the first input it failed on, and why */
} LabTally;

/* Counts one input; where ok is 0 and it is the first such, the format
   (the input and the numbers) is kept. */
static inline void lab_tally(LabTally *t, int ok, const char *format, ...)
{
    t->cases++;
    if (ok || t->failed++ > 0)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(t->first, sizeof t->first, format, args);
    va_end(args);
}

/* The check the tally makes, described by `what`. */
static inline void lab_tally_check(const LabTally *t, const char *what)
{
    if (t->failed)
        lab_check(0, "%s: wrong on %d of %d inputs; first: %s", what,
                  t->failed, t->cases, t->first);
    else
        lab_check(t->cases > 0, "%s: all %d inputs", what, t->cases);
}

#endif
