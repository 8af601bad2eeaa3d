/* exercises/labs/common/lab_check.h: what every lab's autograder shares.

   An autograder checks a student's code against the book's own and prints
   one line per check, in the form every lab uses (and `make lab` counts):

       "  PASS  what was checked, and the numbers"
       "  FAIL  what was checked, what came out, what was wanted"

   then "score: k/n" and "lab-NAME: OK" or "lab-NAME: FAIL". Its exit
   status is 0 only if every check passed. A student's function that is
   still a TODO should compile, run and fail its checks, not crash. */
#ifndef LAB_CHECK_H
#define LAB_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int lab_passed, lab_checks;

/* Records one check and prints its line: ok says whether it passed, and
   the format describes it (with the numbers that decided it). */
static inline void lab_check(int ok, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("  %s  ", ok ? "PASS" : "FAIL");
    vprintf(format, args);
    printf("\n");
    va_end(args);
    lab_checks++;
    lab_passed += ok != 0;
}

/* got is within a relative tolerance of want (both finite; want may be 0,
   when |got| must be within tolerance of it). */
static inline int lab_close(double got, double want, double tolerance)
{
    double scale = fabs(want) > 1 ? fabs(want) : 1;
    return isfinite(got) && fabs(got - want) <= tolerance * scale;
}

/* Prints the score and the verdict; returns the exit status (0: all
   passed, 1: some failed or none ran). */
static inline int lab_finish(const char *lab)
{
    int ok = lab_checks > 0 && lab_passed == lab_checks;
    printf("score: %d/%d\nlab-%s: %s\n", lab_passed, lab_checks, lab,
           ok ? "OK" : "FAIL");
    return ok ? 0 : 1;
}

#endif
