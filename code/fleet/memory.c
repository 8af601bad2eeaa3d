/* Tangled from chapters/01-memory-floor.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <math.h>
#include <string.h>

#include "fleet.h"

static const Gpu parts[] = {
    /* key      name               memory  bf16 dense HBM      node
                                   NVLink  NIC     PCIe   (each way, B/s) NVLS */
    { "a100",  "A100 SXM 80 GB",   80e9,   312e12,  2.039e12, 8,
                                   300e9,  25e9,   32e9,  0 },
    { "h100",  "H100 SXM 80 GB",   80e9,   989e12,  3.35e12, 8,
                                   450e9,  50e9,   64e9,  1 },
    { "h200",  "H200 SXM 141 GB",  141e9,  989e12,  4.8e12,  8,
                                   450e9,  50e9,   64e9,  1 },
    { "h800",  "H800 SXM 80 GB",   80e9,   989e12,  3.35e12, 8,
                                   200e9,  50e9,   64e9,  1 },
    { "b200",  "B200 SXM 180 GB",  180e9,  2250e12, 7.7e12,  8,
                                   900e9,  50e9,   64e9,  1 },
    { "mi300x", "MI300X OAM 192 GB", 192e9, 1307e12, 5.3e12, 8,
                                   448e9,  50e9,   64e9,  0 },
};
enum { PARTS = sizeof parts / sizeof parts[0] };
static const StateBytes conventions[] = {
    /* key           name                        w  g  mw mg opt   total */
    { "mixed",      "mixed-precision Adam",      2, 2, 4, 0, 8 }, /* 16 */
    { "fp32",       "fp32 Adam",                 4, 4, 0, 0, 8 }, /* 16 */
    { "lean",       "bf16 weights + fp32 moments", 2, 0, 0, 0, 8 }, /* 10 */
    { "fp32-grads", "fp32 gradient accumulator", 2, 0, 4, 4, 8 }, /* 18 */
    { "mt-nlg",     "both gradient copies",      2, 2, 4, 4, 8 }, /* 20 */
};
enum { CONVENTIONS = sizeof conventions / sizeof conventions[0] };

double state_bytes_per_param(const StateBytes *s)
{
    return s->weights + s->gradients + s->master_weights
         + s->master_gradients + s->optimizer;
}
const Gpu *first_gpu(void)
{
    return &parts[0];
}

const Gpu *next_gpu(const Gpu *g)
{
    return g + 1 < parts + PARTS ? g + 1 : NULL;
}

const Gpu *find_gpu(const char *command, const char *key)
{
    for (int i = 0; i < PARTS; i++)
        if (strcmp(parts[i].key, key) == 0)
            return &parts[i];
    char known[128] = "";
    for (int i = 0; i < PARTS; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                 i > 0 ? ", " : "", parts[i].key);
    complain(command, "--gpu: unknown part \"%s\" (known: %s)", key, known);
    return NULL;
}

static const StateBytes *find_convention(const char *command, const char *key)
{
    for (int i = 0; i < CONVENTIONS; i++)
        if (strcmp(conventions[i].key, key) == 0)
            return &conventions[i];
    complain(command, "--precision: unknown convention \"%s\" "
             "(known: mixed, fp32, lean, fp32-grads, mt-nlg)", key);
    return NULL;
}
/* The mixed-precision row, 16 B a parameter: the state the later
   chapters' layouts keep. */
const StateBytes *mixed_precision_adam(void)
{
    return &conventions[0];
}
double ceil_count(double x)
{
    double whole = round(x);
    if (fabs(x - whole) <= 1e-13 * fabs(x))   /* a whole number, but for */
        return whole;                         /* the error of roundings  */
    return ceil(x);
}

void derive_memory_floor(MemoryFloor *m)
{
    m->static_bytes = m->params * m->bytes_per_param;          /* 1.6e12 B */
    m->node_bytes = m->gpu->per_node * m->gpu->memory_bytes;   /* 640 GB   */
    m->nodes_of_state = m->static_bytes / m->node_bytes;       /* 2.5      */
    m->usable_bytes = m->gpu->memory_bytes * m->usable;        /* 64 GB    */
    m->gpus_min = ceil_count(m->static_bytes / m->usable_bytes);         /* 25 */
    m->nodes = ceil_count(m->gpus_min / m->gpu->per_node);               /* 4  */
    m->gpus_whole_nodes = m->gpus_min <= m->gpu->per_node
                        ? m->gpus_min                     /* part of a node */
                        : m->nodes * m->gpu->per_node;                   /* 32 */
}
static void print_conventions(FILE *out, int csv)
{
    if (csv)
        fprintf(out, "key,name,weights,gradients,master_weights,"
                     "master_gradients,optimizer,total\n");
    else
        fprintf(out, "%-11s %-27s %3s %3s %3s %3s %3s %6s\n", "convention",
                "", "w", "g", "mw", "mg", "opt", "total");
    for (int i = 0; i < CONVENTIONS; i++) {
        const StateBytes *s = &conventions[i];
        fprintf(out, csv ? "%s,%s,%g,%g,%g,%g,%g,%g\n"
                         : "%-11s %-27s %3g %3g %3g %3g %3g %4g B\n",
                s->key, s->name, s->weights, s->gradients, s->master_weights,
                s->master_gradients, s->optimizer, state_bytes_per_param(s));
    }
    if (!csv)
        fprintf(out, "\nw: working weights (bf16; fp32 in the fp32 row)\n"
                     "g: gradients (bf16; fp32 in the fp32 row)\n"
                     "mw: fp32 master weights   mg: fp32 gradient accumulator\n"
                     "opt: Adam's m and v (fp32)\n");
}
static void print_breakdown(FILE *out, const StateBytes *s)
{
    const char *width = s->weights == 4 ? "fp32" : "bf16";
    const struct { const char *what; double bytes; } terms[] = {
        { "weights",                         s->weights },
        { "gradients",                       s->gradients },
        { "fp32 master weights",             s->master_weights },
        { "fp32 gradient accumulator",       s->master_gradients },
        { "fp32 Adam moments (m and v)",     s->optimizer },
    };
    fprintf(out, "bytes per parameter, %s:\n", s->name);
    for (int i = 0; i < 5; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s%s%s", i < 2 ? width : "",
                 i < 2 ? " " : "", terms[i].what);
        if (terms[i].bytes > 0)
            fprintf(out, "  %-33s %3g B\n", label, terms[i].bytes);
    }
    fprintf(out, "  %-33s %3g B\n\n", "total", state_bytes_per_param(s));
}

static void print_memory_floor(FILE *out, const MemoryFloor *m,
                               const StateBytes *s, double gpus,
                               const Checkpoint *c)
{
    const Gpu *g = m->gpu;
    fprintf(out, "fleet memory: %s parameters, %s B per parameter, %s\n\n",
            eng(m->params).s, sig(m->bytes_per_param, 3).s, g->name);
    if (s != NULL)
        print_breakdown(out, s);
    fprintf(out, "static state    = %s × %s B = %s B = %s\n",
            eng(m->params).s, sig(m->bytes_per_param, 3).s,
            sci(m->static_bytes, 3).s, bytes_in(m->static_bytes, 1e9).s);
    fprintf(out, "one node        = %s × %s = %s\n", grouped(g->per_node).s,
            bytes_in(g->memory_bytes, 1e9).s, bytes_in(m->node_bytes, 1e9).s);
    fprintf(out, "state in nodes  = %s ÷ %s = %s\n",
            bytes_in(m->static_bytes, 1e9).s, bytes_in(m->node_bytes, 1e9).s,
            counted(m->nodes_of_state, "node", "nodes").s);
    fprintf(out, "usable per GPU  = %s × %s %% = %s\n",
            bytes_in(g->memory_bytes, 1e9).s, sig(100 * m->usable, 3).s,
            bytes_in(m->usable_bytes, 1e9).s);
    fprintf(out, "GPUs to hold it = %s ÷ %s = %s → %s\n",
            bytes_in(m->static_bytes, 1e9).s, bytes_in(m->usable_bytes, 1e9).s,
            quotient(m->static_bytes / m->usable_bytes).s,
            counted(m->gpus_min, "GPU", "GPUs").s);
    if (m->gpus_min <= g->per_node)
        fprintf(out, "in whole nodes  = not needed: %s %s in one node of %s\n",
                counted(m->gpus_min, "GPU", "GPUs").s,
                plural(m->gpus_min, "fits", "fit"), grouped(g->per_node).s);
    else
        fprintf(out, "in whole nodes  = %s ÷ %s per node → %s = %s\n",
                counted(m->gpus_min, "GPU", "GPUs").s, grouped(g->per_node).s,
                counted(m->nodes, "node", "nodes").s,
                counted(m->gpus_whole_nodes, "GPU", "GPUs").s);
    fprintf(out, "  (a floor, not a plan: activations, communication buffers\n"
                 "   and fragmentation come on top of the static state)\n\n");
    fprintf(out, "fully sharded over %s (--gpus) = %s ÷ %s = %s per GPU\n",
            counted(gpus, "GPU", "GPUs").s, bytes_in(m->static_bytes, 1e9).s,
            grouped(gpus).s, bytes_auto(m->static_bytes / gpus).s);
    fprintf(out, "checkpoint      = %s × %s B = %s; at %s/s aggregate: %s\n",
            eng(m->params).s, sig(c->bytes_per_param, 3).s,
            bytes_auto(c->bytes).s, bytes_auto(c->bandwidth).s,
            duration(c->bytes / c->bandwidth).s);
}
static void report_memory_floor(Report *r, const MemoryFloor *m, double gpus,
                                const Checkpoint *c)
{
    report_add(r, "params", FIELD_ENG, m->params);
    report_add(r, "bytes_per_param", FIELD_REAL, m->bytes_per_param);
    report_text(r, "gpu", m->gpu->name);
    report_add(r, "gpu_memory_bytes", FIELD_BYTES, m->gpu->memory_bytes);
    report_add(r, "usable_fraction", FIELD_FRACTION, m->usable);
    report_add(r, "static_bytes", FIELD_BYTES, m->static_bytes);
    report_add(r, "node_bytes", FIELD_BYTES, m->node_bytes);
    report_add(r, "nodes_of_state", FIELD_REAL, m->nodes_of_state);
    report_add(r, "usable_bytes_per_gpu", FIELD_BYTES, m->usable_bytes);
    report_add(r, "gpus_min", FIELD_COUNT, m->gpus_min);
    report_add(r, "gpus_whole_nodes", FIELD_COUNT, m->gpus_whole_nodes);
    report_add(r, "nodes", FIELD_COUNT, m->nodes);
    report_add(r, "gpus", FIELD_COUNT, gpus);
    report_add(r, "bytes_per_gpu_sharded", FIELD_BYTES, m->static_bytes / gpus);
    report_add(r, "checkpoint_bytes_per_param", FIELD_REAL, c->bytes_per_param);
    report_add(r, "checkpoint_bytes", FIELD_BYTES, c->bytes);
    report_add(r, "checkpoint_bandwidth", FIELD_BYTES, c->bandwidth);
    report_add(r, "checkpoint_seconds", FIELD_REAL, c->bytes / c->bandwidth);
}
int memory_main(int argc, char **argv)
{
    const char *command = "fleet memory";
    Option options[] = {
        { "--params", OPT_NUMBER, 1e15,
          "parameters held in memory (for MoE: all experts)", 100e9, NULL, 0 },
        { "--precision", OPT_NAME, 0,
          "convention: mixed, fp32, lean, fp32-grads or mt-nlg",
          0, "mixed", 0 },
        { "--bytes-per-param", OPT_NUMBER, 1000,
          "bytes of state per parameter (instead of --precision)", 0, NULL, 0 },
        { "--gpu", OPT_NAME, 0,
          "part: a100, h100, h200, h800, b200 or mi300x", 0, "h100", 0 },
        { "--usable", OPT_NUMBER, 1,
          "fraction of each GPU's memory the state may fill", 0.8, NULL, 0 },
        { "--gpus", OPT_COUNT, 1e7,
          "GPUs in the fleet the state is sharded over", 1024, NULL, 0 },
        { "--checkpoint-bandwidth", OPT_NUMBER, 1e16,
          "aggregate write bandwidth for checkpoints, bytes/s", 2e12, NULL, 0 },
        { "--checkpoint-bytes-per-param", OPT_NUMBER, 1000,
          "bytes a checkpoint keeps per parameter (default: all the state)",
          0, NULL, 0 },
        { "--precisions", OPT_SWITCH, 0,
          "print the table of conventions and exit", 0, NULL, 0 },
        { "--zero", OPT_NAME, 0, "ZeRO stage 0, 1, 2 or 3 (3 is FSDP's full "
          "sharding)", 0, "0", 0 },
        { "--dp", OPT_COUNT, 1e7, "data-parallel ranks the state is sharded over",
          1, NULL, 0 },
        { "--zero-sweep", OPT_SWITCH, 0, "print CSV of bytes per device against "
          "--dp for every stage and exit", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "The static training state of a dense model and the fewest GPUs "
        "that hold it.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    if (option_given(options, "--precision")
        && option_given(options, "--bytes-per-param")) {
        complain(command, "--precision and --bytes-per-param are alternatives; "
                 "give one");
        return 2;
    }
    const StateBytes *convention =
        find_convention(command, option_text(options, "--precision"));
    const Gpu *gpu = find_gpu(command, option_text(options, "--gpu"));
    if (convention == NULL || gpu == NULL)
        return 2;
    if (option_given(options, "--bytes-per-param"))
        convention = NULL;
    int stage = parse_zero_stage(command, option_text(options, "--zero"));
    if (stage < 0)
        return 2;
    if (convention == NULL && (option_given(options, "--zero")
                               || option_given(options, "--dp")
                               || option_given(options, "--zero-sweep"))) {
        complain(command, "--zero and --dp need --precision (the bytes by kind), "
                 "not --bytes-per-param");
        return 2;
    }
    if (option_given(options, "--zero-sweep")
        && (report_requested(options) || option_given(options, "--zero")
            || option_given(options, "--dp"))) {
        complain(command, "--zero-sweep prints CSV of every stage and --dp; it "
                 "takes no --zero, --dp, --json, --csv or --latex");
        return 2;
    }
    double dp = option_number(options, "--dp");
    MemoryFloor m = {
        .params = option_number(options, "--params"),
        .bytes_per_param = convention ? state_bytes_per_param(convention)
                                      : option_number(options, "--bytes-per-param"),
        .gpu = gpu,
        .usable = option_number(options, "--usable"),
    };
    derive_memory_floor(&m);
    double fleet = option_number(options, "--gpus");
    Checkpoint checkpoint = {
        .bytes_per_param = option_given(options, "--checkpoint-bytes-per-param")
            ? option_number(options, "--checkpoint-bytes-per-param")
            : m.bytes_per_param,
        .bandwidth = option_number(options, "--checkpoint-bandwidth"),
    };
    checkpoint.bytes = m.params * checkpoint.bytes_per_param;

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (option_given(options, "--precisions")) {
        print_conventions(out.file, option_given(options, "--csv"));
    } else if (option_given(options, "--zero-sweep"))
          print_zero_sweep(out.file, &m, convention);
    else {
        Report r = { .count = 0 };
        report_memory_floor(&r, &m, fleet, &checkpoint);
        if (convention != NULL) {
            ShardedState z = shard_state(&m, convention, stage, dp);
            report_add(&r, "zero_stage", FIELD_COUNT, stage);
            report_add(&r, "dp", FIELD_COUNT, dp);
            report_add(&r, "weight_bytes_per_device", FIELD_BYTES, z.weights);
            report_add(&r, "gradient_bytes_per_device", FIELD_BYTES, z.gradients);
            report_add(&r, "optimizer_bytes_per_device", FIELD_BYTES, z.optimizer);
            report_add(&r, "bytes_per_device", FIELD_BYTES, z.total);
            report_add(&r, "traffic_bytes", FIELD_BYTES, z.traffic);
        }
        if (report_requested(options))
            print_report(out.file, &r, options);
        else {
            print_memory_floor(out.file, &m, convention, fleet, &checkpoint);
            if (convention != NULL
                && (option_given(options, "--zero") || option_given(options, "--dp")))
                print_sharded_state(out.file, &m, convention, stage, dp);
        }
    }
    return output_commit(&out, command);
}
