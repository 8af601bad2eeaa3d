/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#ifndef FLEET_H
#define FLEET_H

#include <stdio.h>

typedef struct {
    const char *key;          /* "h100", as given to --gpu               */
    const char *name;         /* "H100 SXM 80 GB"                         */
    double memory_bytes;      /* 80e9: decimal, as the datasheet writes it */
    double peak_flops;        /* dense bf16, FLOP/s                        */
    double memory_bandwidth;  /* bytes/s of HBM                            */
    double per_node;          /* GPUs in one NVLink server                 */
} Gpu;
typedef struct {
    const char *key;           /* "mixed", as given to --precision        */
    const char *name;          /* "mixed-precision Adam"                  */
    double weights;            /* the copy the forward pass reads         */
    double gradients;          /* what the backward pass writes           */
    double master_weights;     /* fp32 copy the optimizer updates         */
    double master_gradients;   /* fp32 gradient accumulator, where kept   */
    double optimizer;          /* Adam's m and v, fp32                    */
} StateBytes;
typedef struct {
    /* what is given */
    double params;            /* parameters held in memory (all experts)  */
    double bytes_per_param;   /* 16 for mixed-precision Adam              */
    const Gpu *gpu;
    double usable;            /* fraction of a GPU the state may fill     */
    /* what follows */
    double static_bytes;      /* params × bytes_per_param                 */
    double node_bytes;        /* memory of one node                       */
    double nodes_of_state;    /* static_bytes ÷ node_bytes                */
    double usable_bytes;      /* memory × usable, per GPU                 */
    double gpus_min;          /* GPUs that hold the state                 */
    double gpus_whole_nodes;  /* the same, rounded up to whole nodes      */
    double nodes;             /* gpus_whole_nodes ÷ per_node              */
} MemoryFloor;
typedef struct {
    double bytes_per_param;   /* what a checkpoint keeps of each parameter */
    double bytes;             /* params × bytes_per_param                  */
    double bandwidth;         /* aggregate write bandwidth, bytes/s        */
} Checkpoint;
typedef struct {
    /* what is given */
    double params;            /* total parameters (memory)               */
    double active_params;     /* parameters each token passes through     */
    double tokens;            /* D                                        */
    double layers, hidden, seq; /* for the attention term; 0 to leave out */
    const Gpu *gpu;
    double mfu;               /* model FLOPs utilisation, 0..1            */
    double gpus;              /* the fleet                                */
    /* what follows */
    double dense_flops;       /* 6 N D                                    */
    double attention_flops;   /* 12 L s h D                               */
    double flops;             /* their sum                                */
    double flops_per_second;  /* gpus × peak × mfu                        */
    double seconds;
} TrainingTime;
typedef enum {
    OPT_NUMBER,   /* a positive real number, with optional suffix      */
    OPT_COUNT,    /* a whole number of things, at least 1              */
    OPT_NAME,     /* one word, checked by the subcommand               */
    OPT_PATH,     /* a file name                                       */
    OPT_SWITCH    /* no value: present or not                          */
} OptionKind;

typedef struct {
    const char *flag;      /* "--params"                                 */
    OptionKind kind;
    double max;            /* numbers must lie in (0, max]               */
    const char *help;      /* one line for --help                        */
    double number;         /* the value (default until given)            */
    const char *text;      /* the value of an OPT_NAME or OPT_PATH       */
    int given;             /* 1 once the flag appeared on the line       */
} Option;
#define OUTPUT_OPTIONS                                                       \
    { "--json",   OPT_SWITCH, 0, "print the results as one JSON object",     \
      0, NULL, 0 },                                                          \
    { "--csv",    OPT_SWITCH, 0, "print the results as CSV with a header",   \
      0, NULL, 0 },                                                          \
    { "--latex",  OPT_NAME,   0,                                             \
      "print the results as LaTeX macros named \\<PREFIX><Field>",           \
      0, NULL, 0 },                                                          \
    { "--output", OPT_PATH,   0,                                             \
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

enum { REPORT_MAX_FIELDS = 64 };

typedef struct {
    Field fields[REPORT_MAX_FIELDS];
    int count;
} Report;
typedef struct {
    FILE *file;            /* where to print                      */
    const char *path;      /* the final name, or NULL for stdout  */
    char temporary[4096];  /* the name written to until commit    */
} Output;
typedef int Subcommand(int argc, char **argv);
double state_bytes_per_param(const StateBytes *s);
/* The part named by --gpu, or NULL after printing an error. */
const Gpu *find_gpu(const char *command, const char *key);
double ceil_count(double x);
/* Fill in the fields of m that follow from the given ones. */
void derive_memory_floor(MemoryFloor *m);
int memory_main(int argc, char **argv);
int compute_main(int argc, char **argv);
/* Parse text such as "100e9", "100B", "2T", "16k" or "80%".
   Returns 1 and stores the value when the whole text is one number. */
int parse_number(const char *text, double *value);
/* Parse argv against a table ending in an entry whose flag is NULL.
   Returns 0 to go on, 1 after printing --help, 2 after printing an error. */
int parse_options(const char *command, const char *summary, Option *options,
                  int argc, char **argv);
Option *find_option(Option *options, const char *flag);
double option_number(Option *options, const char *flag);
const char *option_text(Option *options, const char *flag);
int option_given(Option *options, const char *flag);
/* Print "COMMAND: " and a formatted message on one line of stderr. */
void complain(const char *command, const char *format, ...);
Text sig(double value, int digits);        /* 34.3, 2.5, 0.8         */
Text sci(double value, int digits);        /* 1.2e24, 4.05e17        */
Text eng(double value);                    /* 100e9, 15.6e12, 405e9  */
Text grouped(double value);                /* 1,024 and 1,600        */
Text bytes_in(double bytes, double unit);  /* "1,600 GB" for unit 1e9 */
Text bytes_auto(double bytes);             /* "1.6 TB", "640 GB"      */
/* "node" or "nodes", as the count requires. */
const char *plural(double count, const char *one, const char *many);
void report_add(Report *r, const char *key, FieldKind kind, double value);
void report_text(Report *r, const char *key, const char *text);
/* 1 when --json, --csv or --latex asks for a report rather than the
   derivation a person reads. */
int report_requested(Option *options);
/* Write the report in the format the options ask for (JSON, CSV or LaTeX). */
void print_report(FILE *out, const Report *r, Option *options);
/* Open standard output or the --output file; 0 on success, 2 on error. */
int output_open(Output *o, const char *command, Option *options);
/* Close and move the file into place; 0 on success, 2 on error. */
int output_commit(Output *o, const char *command);
#endif
