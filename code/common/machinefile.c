/* Tangled from chapters/92-measuring.nw; edit the chapter, not this file. */
#define _DEFAULT_SOURCE                     /* MAP_ANONYMOUS */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cli.h"

double first_touch_rate(size_t bytes)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        abort();
    memset(p, 1, bytes);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    munmap(p, bytes);
    return (double)bytes / ((double)(t1.tv_sec - t0.tv_sec)
                            + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

int machine_figure(const char *command, const char *flag, const char *path,
                   const char *key, double *value)
{
    static char text[65536];
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        complain(command, "%s: cannot read %s (%s)", flag, path,
                 strerror(errno));
        return 2;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    int whole = feof(f) && !ferror(f);
    fclose(f);
    text[n] = '\0';
    char quoted[128], *at, *end;
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *start = text + strspn(text, " \t\r\n");
    if (!whole || *start != '{' || strstr(text, "\"complete\": true") == NULL) {
        complain(command, "%s: %s is not a whole machine file (write it with "
                 "build/bin/machine)", flag, path);
        return 2;
    }
    if ((at = strstr(text, quoted)) == NULL) {
        complain(command, "%s: %s has no %s", flag, path, key);
        return 2;
    }
    at += strlen(quoted);
    at += strspn(at, " \t");
    double v = *at == ':' ? strtod(at + 1, &end) : NAN;
    if (*at != ':' || end == at + 1 || !isfinite(v) || !(v > 0)
        || strchr(",}\r\n", *(end + strspn(end, " \t"))) == NULL) {
        complain(command, "%s: %s in %s is not a positive number", flag, key,
                 path);
        return 2;
    }
    *value = v;
    return 0;
}
