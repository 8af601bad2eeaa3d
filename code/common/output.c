/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int replaceable(const char *command, const char *flag, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)                        /* absent: it will be made */
            return 1;
        complain(command, "%s: cannot write %s: %s", flag, path,
                 strerror(errno));
        return 0;
    }
    if (S_ISREG(st.st_mode))
        return 1;
    const char *what = S_ISDIR(st.st_mode) ? "a directory"
                     : S_ISLNK(st.st_mode) ? "a symbolic link"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISFIFO(st.st_mode) ? "a pipe"
                     : "not a file";
    complain(command, "%s: %s is %s; name a regular file (or leave the flag "
             "out to write to standard output)", flag, path, what);
    return 0;
}
static FILE *create_temporary(const char *path, char *temporary, size_t size)
{
    snprintf(temporary, size, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        remove(temporary);
    }
    return f;
}

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
    if (!replaceable(command, flag, path))
        return 2;
    o->file = create_temporary(path, o->temporary, sizeof o->temporary);
    if (o->file == NULL) {
        complain(command, "%s: cannot write %s: %s", flag, o->path,
                 strerror(errno));
        return 2;
    }
    return 0;
}
static int stdout_reported;        /* a failed stdout was already named */

static int stdout_ok(const char *command, int earlier)
{
    errno = 0;
    int failed = (fflush(stdout) != 0) | ferror(stdout);
    int error = errno != 0 ? errno : earlier;
    if (failed && !stdout_reported) {
        complain(command, "standard output: %s",
                 error != 0 ? strerror(error) : "write error");
        stdout_reported = 1;
    }
    return !failed;
}

int flush_stdout(const char *command)
{
    return stdout_ok(command, errno) ? 0 : 2;
}

int output_commit(Output *o, const char *command)
{
    int earlier = errno;
    if (o->path == NULL)
        return stdout_ok(command, earlier) ? 0 : 2;
    errno = 0;
    int failed = (fflush(o->file) != 0) | ferror(o->file);
    int error = errno != 0 ? errno : earlier;
    if (fclose(o->file) != 0 && !failed) {
        failed = 1;
        error = errno;
    }
    if (failed) {
        remove(o->temporary);
        complain(command, "%s: could not write %s: %s", o->flag, o->path,
                 error != 0 ? strerror(error) : "write error");
        return 2;
    }
    if (!replaceable(command, o->flag, o->path)) {
        remove(o->temporary);
        return 2;
    }
    if (rename(o->temporary, o->path) != 0) {
        error = errno;
        remove(o->temporary);
        complain(command, "%s: could not move %s into place: %s", o->flag,
                 o->path, strerror(error));
        return 2;
    }
    return 0;
}
static const char *stdout_command;

static void check_stdout_at_exit(void)
{
    int ok = stdout_ok(stdout_command, 0);
    if (fclose(stdout) != 0 && ok) {
        complain(stdout_command, "standard output: %s", strerror(errno));
        ok = 0;
    }
    if (!ok)
        _exit(2);
}

void guard_stdout(const char *command)
{
    if (stdout_command == NULL)
        atexit(check_stdout_at_exit);
    stdout_command = command;
}
int check_writable(const char *command, const char *flag, const char *path)
{
    char probe[4096];
    if (path == NULL)
        return 0;
    if (!replaceable(command, flag, path))
        return 2;
    FILE *f = create_temporary(path, probe, sizeof probe);
    if (f == NULL) {
        complain(command, "%s: cannot write %s: %s", flag, path,
                 strerror(errno));
        return 2;
    }
    fclose(f);
    remove(probe);
    return 0;
}
