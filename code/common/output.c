/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int output_open(Output *o, const char *command, Option *options)
{
    return output_open_path(o, command, "--output",
                            option_text(options, "--output"));
}

int output_open_path(Output *o, const char *command, const char *flag,
                     const char *path)
{
    o->flag = flag;
    o->path = path;
    if (o->path == NULL) {
        o->file = stdout;
        return 0;
    }
    snprintf(o->temporary, sizeof o->temporary, "%s.tmp.%ld", o->path,
             (long)getpid());
    o->file = fopen(o->temporary, "w");
    if (o->file == NULL) {
        complain(command, "%s: cannot write %s", flag, o->path);
        return 2;
    }
    return 0;
}

int output_commit(Output *o, const char *command)
{
    if (o->path == NULL)
        return fflush(stdout) == 0 ? 0 : 2;
    int failed = ferror(o->file) | (fclose(o->file) != 0);
    if (failed || rename(o->temporary, o->path) != 0) {
        remove(o->temporary);
        complain(command, "%s: could not finish writing %s", o->flag,
                 o->path);
        return 2;
    }
    return 0;
}
int check_writable(const char *command, const char *flag, const char *path)
{
    char probe[4096];
    if (path == NULL)
        return 0;
    snprintf(probe, sizeof probe, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (f == NULL) {
        complain(command, "%s: cannot write %s", flag, path);
        return 2;
    }
    fclose(f);
    remove(probe);
    return 0;
}
