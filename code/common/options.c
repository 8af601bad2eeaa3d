/* Tangled from chapters/90-plumbing.nw and chapters/95-parallel-plumbing.nw; edit the chapters, not this file. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static double suffix_multiplier(char suffix)
{
    switch (suffix) {
    case 'k': case 'K': return 1e3;
    case 'M':           return 1e6;
    case 'B': case 'G': return 1e9;
    case 'T':           return 1e12;
    case 'P':           return 1e15;
    case '%':           return 1e-2;
    default:            return 0;
    }
}
int parse_number(const char *text, double *value)
{
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text))
        return 0;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v))
        return 0;
    if (*end != '\0') {
        double m = suffix_multiplier(*end);
        if (m == 0 || end[1] != '\0')
            return 0;
        v *= m;
    }
    *value = v;
    return 1;
}
#include <stdarg.h>

void complain(const char *command, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", command);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

Option *find_option(Option *options, const char *flag)
{
    for (Option *o = options; o->flag != NULL; o++)
        if (strcmp(o->flag, flag) == 0)
            return o;
    return NULL;
}

double option_number(Option *options, const char *flag)
{
    return find_option(options, flag)->number;
}

const char *option_text(Option *options, const char *flag)
{
    return find_option(options, flag)->text;
}

int option_given(Option *options, const char *flag)   /* 0 if not in the table */
{
    const Option *o = find_option(options, flag);
    return o != NULL && o->given;
}

static void print_help(const char *command, const char *summary,
                       const Option *options)
{
    printf("usage: %s [flags]\n%s\n\nflags:\n", command, summary);
    for (const Option *o = options; o->flag != NULL; o++) {
        char shown[96];
        switch (o->kind) {
        case OPT_NUMBER:
        case OPT_COUNT:
        case OPT_WHOLE:
            snprintf(shown, sizeof shown, "%s N", o->flag);
            break;
        case OPT_NAME:
        case OPT_PATH:
        case OPT_OUTPUT:
            snprintf(shown, sizeof shown, "%s NAME", o->flag);
            break;
        default:
            snprintf(shown, sizeof shown, "%s", o->flag);
        }
        printf("  %-26s %s", shown, o->help);
        if ((o->kind == OPT_NUMBER || o->kind == OPT_COUNT
             || o->kind == OPT_WHOLE) && o->number > 0)
            printf(" (default %g)", o->number);
        else if (o->kind == OPT_NAME && o->text != NULL)
            printf(" (default %s)", o->text);
        putchar('\n');
    }
    printf("\nNumbers may be written 100e9, 100B, 2T, 16k or 80%%.\n");
}
static int set_option_value(const char *command, Option *o, const char *value)
{
    if (o->kind == OPT_NAME || o->kind == OPT_PATH || o->kind == OPT_OUTPUT) {
        if (*value == '\0') {
            complain(command, "%s needs a non-empty value", o->flag);
            return 0;
        }
        o->text = value;
        return 1;
    }
    double v;
    if (!parse_number(value, &v)) {
        complain(command, "%s: \"%s\" is not a number "
                 "(write it like 100e9, 100B, 2T, 16k or 80%%)", o->flag, value);
        return 0;
    }
    int zero_too = o->kind == OPT_WHOLE;
    if (!((v > 0 || (zero_too && v == 0)) && v <= o->max)) {
        complain(command, "%s must be %s 0 and at most %s; got %s", o->flag,
                 zero_too ? "at least" : "greater than",
                 o->max >= 1e4 ? sci(o->max, 3).s : sig(o->max, 3).s, value);
        return 0;
    }
    if ((o->kind == OPT_COUNT || zero_too) && v != floor(v)) {
        complain(command, "%s must be a whole number; got %s", o->flag, value);
        return 0;
    }
    o->number = v;
    return 1;
}

int parse_options(const char *command, const char *summary, Option *options,
                  int argc, char **argv)
{
    guard_stdout(command);          /* even --help must reach its reader */
    for (int i = 0; i < argc; i++) {
        char flag[64];
        const char *value = NULL;
        const char *equals = strchr(argv[i], '=');
        size_t length = equals ? (size_t)(equals - argv[i]) : strlen(argv[i]);
        if (strncmp(argv[i], "--", 2) != 0 || length >= sizeof flag) {
            complain(command, "unexpected argument \"%s\" (flags start with --)",
                     argv[i]);
            return 2;
        }
        memcpy(flag, argv[i], length);
        flag[length] = '\0';
        if (equals)
            value = equals + 1;
        Option *o = find_option(options, flag);
        if (o == NULL) {
            complain(command, "unknown flag %s (try %s --help)", flag, command);
            return 2;
        }
        if (o->given) {
            complain(command, "%s given twice", o->flag);
            return 2;
        }
        o->given = 1;
        if (o->kind == OPT_SWITCH) {
            if (value != NULL) {
                complain(command, "%s takes no value", o->flag);
                return 2;
            }
            o->number = 1;
            continue;
        }
        if (value == NULL) {
            if (i + 1 >= argc) {
                complain(command, "%s needs a value", o->flag);
                return 2;
            }
            value = argv[++i];
        }
        if (!set_option_value(command, o, value))
            return 2;
    }
    if (option_given(options, "--help")) {
        print_help(command, summary, options);
        return flush_stdout(command) == 0 ? 1 : 2;
    }
    int formats = option_given(options, "--json") + option_given(options, "--csv")
                + option_given(options, "--latex");
    if (formats > 1) {
        complain(command, "--json, --csv and --latex are alternatives; give one");
        return 2;
    }
    const char *prefix = option_text(options, "--latex");
    for (const char *c = prefix; c != NULL && *c != '\0'; c++)
        if (!isalpha((unsigned char)*c)) {
            complain(command, "--latex: a macro prefix is letters only; got \"%s\"",
                     prefix);
            return 2;
        }
    for (Option *o = options; o->flag != NULL; o++)
        if (o->kind == OPT_OUTPUT && o->given
            && check_writable(command, o->flag, o->text) != 0)
            return 2;
    return 0;
}
int streams_silence(int speak)
{
    if (speak)
        return -1;
    fflush(stdout);
    fflush(stderr);
    int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
    return out * 65536 + err;       /* both descriptors, in one int */
}

void streams_restore(int saved)
{
    if (saved < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    dup2(saved / 65536, 1);
    dup2(saved % 65536, 2);
    close(saved / 65536);
    close(saved % 65536);
}

int parse_options_as(int speak, const char *command, const char *summary,
                     Option *options, int argc, char **argv)
{
    int saved = streams_silence(speak);
    int status = parse_options(command, summary, options, argc, argv);
    streams_restore(saved);
    return status;
}
int launcher_rank(void)
{
    const char *rank = getenv("PMI_RANK");
    return rank != NULL ? atoi(rank) : 0;
}

int launcher_size(void)
{
    const char *size = getenv("PMI_SIZE");
    return size != NULL ? atoi(size) : 1;
}
