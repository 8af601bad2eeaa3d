/* Tangled from chapters/90-plumbing.nw and chapters/92-measuring.nw; edit the chapters, not this file. */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

typedef enum {
    OPT_NUMBER,   /* a positive real number, with optional suffix      */
    OPT_COUNT,    /* a whole number of things, at least 1              */
    OPT_WHOLE,    /* a whole number that may be 0                      */
    OPT_NAME,     /* one word, checked by the subcommand               */
    OPT_PATH,     /* a file name                                       */
    OPT_OUTPUT,   /* a file to write, checked before the work starts   */
    OPT_SWITCH    /* no value: present or not                          */
} OptionKind;

typedef struct {
    const char *flag;      /* "--params"                                 */
    OptionKind kind;
    double max;            /* numbers must lie in (0, max]               */
    const char *help;      /* one line for --help                        */
    double number;         /* the value (default until given)            */
    const char *text;      /* the value of an OPT_NAME, PATH or OUTPUT   */
    int given;             /* 1 once the flag appeared on the line       */
} Option;
#define OUTPUT_OPTIONS                                                       \
    { "--json",   OPT_SWITCH, 0, "print the results as JSON",                \
      0, NULL, 0 },                                                          \
    { "--csv",    OPT_SWITCH, 0, "print the results as CSV with a header",   \
      0, NULL, 0 },                                                          \
    { "--latex",  OPT_NAME,   0,                                             \
      "print LaTeX macros \\<PREFIX><Field> (prefixes must not clash)",    \
      0, NULL, 0 },                                                          \
    { "--output", OPT_OUTPUT, 0,                                             \
      "write to this file (atomically) instead of standard output",          \
      0, NULL, 0 },                                                          \
    { "--help",   OPT_SWITCH, 0, "print this help and exit", 0, NULL, 0 }
typedef struct { char s[48]; } Text;   /* a formatted number */
typedef enum {
    FIELD_COUNT,      /* a whole number: GPUs, nodes          */
    FIELD_REAL,       /* any other number                     */
    FIELD_BYTES,      /* bytes, written with a decimal unit   */
    FIELD_SCI,        /* large numbers: FLOPs, FLOP/s         */
    FIELD_ENG,        /* parameters and tokens: 100e9, 2e12   */
    FIELD_FRACTION,   /* 0.4, written 40 % in the book        */
    FIELD_TEXT        /* a name                               */
} FieldKind;

typedef struct {
    const char *key;      /* snake_case, as in the JSON output */
    FieldKind kind;
    double value;
    const char *text;     /* for FIELD_TEXT */
} Field;

enum { REPORT_MAX_FIELDS = 128 };

typedef struct {
    Field fields[REPORT_MAX_FIELDS];
    int count;
} Report;
typedef struct {
    FILE *file;            /* where to print                      */
    const char *flag;      /* the flag that named the file        */
    const char *path;      /* the final name, or NULL for stdout  */
    char temporary[4096];  /* the name written to until commit    */
} Output;
/* Parse text such as "100e9", "100B", "2T", "16k" or "80%".
   Returns 1 and stores the value when the whole text is one number. */
int parse_number(const char *text, double *value);
/* Parse argv against a table ending in an entry whose flag is NULL.
   Returns 0 to go on, 1 after printing --help, 2 after printing an error. */
int parse_options(const char *command, const char *summary, Option *options,
                  int argc, char **argv);
/* The same, but silent unless `speak`: every rank of an MPI program parses
   its command line and reaches the same verdict; only one should print it. */
int parse_options_as(int speak, const char *command, const char *summary,
                     Option *options, int argc, char **argv);
/* Before MPI starts, this process's rank and the number of ranks as
   MPICH's mpiexec gives them (PMI_RANK, PMI_SIZE); 0 and 1 for a process
   started alone. */
int launcher_rank(void);
int launcher_size(void);
/* Point stdout and stderr at /dev/null unless `speak`; returns what
   streams_restore needs to undo it. */
int streams_silence(int speak);
void streams_restore(int saved);
Option *find_option(Option *options, const char *flag);
double option_number(Option *options, const char *flag);
const char *option_text(Option *options, const char *flag);
int option_given(Option *options, const char *flag);
/* Print "COMMAND: " and a formatted message on one line of stderr. */
void complain(const char *command, const char *format, ...);
Text sig(double value, int digits);        /* 34.3, 2.5, 0.8         */
Text quotient(double value);               /* 101.25, never 101 if not whole */
Text sci(double value, int digits);        /* 1.2e24, 4.05e17        */
Text eng(double value);                    /* 100e9, 15.6e12, 405e9  */
Text grouped(double value);                /* 1,024 and 1,600        */
Text bytes_in(double bytes, double unit);  /* "1,600 GB" for unit 1e9 */
Text bytes_auto(double bytes);             /* "1.6 TB", "640 GB"      */
/* "node" or "nodes", as the count requires. */
const char *plural(double count, const char *one, const char *many);
/* A count and its noun: "1 GPU", "1,024 GPUs", "2.5 nodes". */
Text counted(double count, const char *one, const char *many);
/* A time in the unit a person reads it in: "355 ms", "3.11 s", "34.3 days". */
Text duration(double seconds);
/* Sorts x[0..n) ascending and returns its median (0 when n is 0). */
double median_in_place(double *x, int n);
/* The q-quantile, 0 <= q <= 1, of n >= 1 numbers sorted ascending. */
double quantile(const double *sorted, int n, double q);
void report_add(Report *r, const char *key, FieldKind kind, double value);
void report_text(Report *r, const char *key, const char *text);
/* 1 when --json, --csv or --latex asks for a report rather than the
   derivation a person reads. */
int report_requested(Option *options);
/* Write the report in the format the options ask for (JSON, CSV or LaTeX). */
void print_report(FILE *out, const Report *r, Option *options);
/* Many reports of one kind: {"KEY": [{...}, ...]} item by item, or CSV
   lines under one header. */
void json_list_begin(FILE *out, const char *key);
void json_list_item(FILE *out, const Report *r, int index);
void json_list_end(FILE *out);
void print_csv_row(FILE *out, const Report *r, int header);
/* Open standard output or the --output file; 0 on success, 2 on error. */
int output_open(Output *o, const char *command, Option *options);
/* The same for the file named by `flag` (NULL path: standard output). */
int output_open_path(Output *o, const char *command, const char *flag,
                     const char *path);
/* Refuse early a path that cannot be written: 0 if it can, 2 if not.
   A path can be written when it is absent or a regular file (not a
   directory, a device or a symbolic link) and its folder takes new files. */
int check_writable(const char *command, const char *flag, const char *path);
/* Close and move the file into place; 0 on success, 2 on error. */
int output_commit(Output *o, const char *command);
/* Flush standard output: 0 if everything printed reached it, else 2
   after one line that says why. */
int flush_stdout(const char *command);
/* Check at exit that everything printed on standard output reached it; if
   not, say so in one line that starts with COMMAND and exit with status 2.
   parse_options calls it, so every tool does. */
void guard_stdout(const char *command);
/* The figure KEY of a machine file (build/machine.json, written by
   build/bin/machine) into *value: 0 when the file holds it as a finite,
   positive number; otherwise one line on stderr naming FLAG, and 2. */
int machine_figure(const char *command, const char *flag, const char *path,
                   const char *key, double *value);
/* Bytes a second of one first touch of `bytes` of fresh pages: map them,
   write each once, unmap them. Every 4 KiB page is a fault (without
   transparent huge pages), in which the kernel finds and zeroes a page. */
double first_touch_rate(size_t bytes);
#endif
