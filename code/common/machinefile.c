/* Tangled from chapters/92-measuring.nw; edit the chapter, not this file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
