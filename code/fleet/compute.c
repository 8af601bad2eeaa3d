/* Tangled from chapters/02-compute-and-fleet.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdio.h>

#include "fleet.h"

enum { SECONDS_PER_DAY = 86400, SECONDS_PER_HOUR = 3600 };

static void count_training_flops(TrainingTime *t)
{
    t->dense_flops = 6 * t->active_params * t->tokens;         /* 1.2e24 */
    t->attention_flops = 12 * t->layers * t->seq * t->hidden * t->tokens;
    t->flops = t->dense_flops + t->attention_flops;
}
static double fleet_flops_per_second(const TrainingTime *t, double gpus)
{
    return gpus * t->gpu->peak_flops * t->mfu;                 /* 4.05e17 */
}

void derive_training_time(TrainingTime *t)
{
    count_training_flops(t);
    t->flops_per_second = fleet_flops_per_second(t, t->gpus);
    t->seconds = t->flops / t->flops_per_second;               /* 2.96e6 s */
    t->gpu_hours = t->gpus * t->seconds / SECONDS_PER_HOUR;
}

static double gpus_for_deadline(const TrainingTime *t, double days)
{
    double per_gpu = t->gpu->peak_flops * t->mfu * days * SECONDS_PER_DAY;
    return ceil_count(t->flops / per_gpu);
}
static Text seconds_of(double seconds, int digits) /* 2.96e6, 38.5 */
{
    return seconds >= 1e4 ? sci(seconds, digits) : sig(seconds, digits);
}

static Text whole_above_thousand(double x)  /* 842,602 but 0.0042 */
{
    return x >= 1000 ? grouped(round(x)) : x < 0.01 ? sci(x, 3) : sig(x, 3);
}

static void print_rate_and_time(FILE *out, const TrainingTime *t, double gpus)
{
    double rate = fleet_flops_per_second(t, gpus);
    double seconds = t->flops / rate;
    fprintf(out, "fleet rate     = %s × %s FLOP/s × %s %% = %s FLOP/s\n",
            grouped(gpus).s, eng(t->gpu->peak_flops).s,
            sig(100 * t->mfu, 3).s, sci(rate, 3).s);
    fprintf(out, "time           = %s ÷ %s FLOP/s = ", sci(t->flops, 3).s,
            sci(rate, 3).s);
    if (seconds >= 120)            /* the seconds, then a unit one reads */
        fprintf(out, "%s s = ", seconds_of(seconds, 3).s);
    fprintf(out, "%s\n", duration(seconds).s);
}

static void print_gpu_hours(FILE *out, const TrainingTime *t)
{
    if (t->seconds >= 1)
        fprintf(out, "GPU-hours      = %s × %s s ÷ 3,600 = %s\n",
                grouped(t->gpus).s, seconds_of(t->seconds, 4).s,
                whole_above_thousand(t->gpu_hours).s);
    else                                        /* 8 × 1.9 ms ÷ 3,600 s */
        fprintf(out, "GPU-hours      = %s × %s ÷ 3,600 s = %s\n",
                grouped(t->gpus).s, duration(t->seconds).s,
                whole_above_thousand(t->gpu_hours).s);
    if (t->usd_per_gpu_hour > 0)
        fprintf(out, "cost           = %s GPU-hours × $%s = $%s\n",
                whole_above_thousand(t->gpu_hours).s,
                sig(t->usd_per_gpu_hour, 4).s,
                grouped(round(t->gpu_hours * t->usd_per_gpu_hour)).s);
}

static void print_training_time(FILE *out, const TrainingTime *t,
                                 const MemoryFloor *floor_, double days)
{
    fprintf(out, "fleet compute: %s parameters (%s active), %s tokens,\n"
            "               %s at %s %% MFU\n\n", eng(t->params).s,
            eng(t->active_params).s, eng(t->tokens).s, t->gpu->name,
            sig(100 * t->mfu, 3).s);
    fprintf(out, "training FLOPs = 6 × %s × %s = %s\n", eng(t->active_params).s,
            eng(t->tokens).s, sci(t->dense_flops, 3).s);
    if (t->attention_flops > 0)
        fprintf(out, "  + attention  = 12 × %s layers × %s seq × %s hidden × "
                "%s = %s\n  = %s FLOPs\n", grouped(t->layers).s,
                grouped(t->seq).s, grouped(t->hidden).s, eng(t->tokens).s,
                sci(t->attention_flops, 3).s, sci(t->flops, 3).s);
    fprintf(out, "\non %s:\n", counted(t->gpus, "GPU", "GPUs").s);
    print_rate_and_time(out, t, t->gpus);
    print_gpu_hours(out, t);
    fprintf(out, "\non the memory floor, %s (fleet memory: %s B per "
            "parameter, %s %% usable):\n",
            counted(floor_->gpus_whole_nodes, "GPU", "GPUs").s,
            sig(floor_->bytes_per_param, 3).s, sig(100 * floor_->usable, 3).s);
    print_rate_and_time(out, t, floor_->gpus_whole_nodes);
    fprintf(out, "fleet ÷ floor  = %s ÷ %s = %s×\n", grouped(t->gpus).s,
            grouped(floor_->gpus_whole_nodes).s,
            sig(t->gpus / floor_->gpus_whole_nodes, 3).s);
    if (days > 0) {
        double needed = gpus_for_deadline(t, days);
        double per_node = t->gpu->per_node;
        fprintf(out, "\nto finish in %s:\n", counted(days, "day", "days").s);
        fprintf(out, "GPUs needed    = %s ÷ (%s × 86,400 s × %s FLOP/s "
                "× %s %%)\n               = %s → %s\n",
                sci(t->flops, 3).s, counted(days, "day", "days").s,
                eng(t->gpu->peak_flops).s, sig(100 * t->mfu, 3).s,
                quotient(t->flops / (t->gpu->peak_flops * t->mfu * days
                                     * SECONDS_PER_DAY)).s,
                counted(needed, "GPU", "GPUs").s);
        fprintf(out, "in whole nodes = %s = %s\n",
                counted(ceil_count(needed / per_node), "node", "nodes").s,
                counted(ceil_count(needed / per_node) * per_node, "GPU",
                        "GPUs").s);
    }
}
static void report_training_time(Report *r, const TrainingTime *t,
                                 const MemoryFloor *floor_, double days)
{
    double floor_rate = fleet_flops_per_second(t, floor_->gpus_whole_nodes);
    report_add(r, "params", FIELD_ENG, t->params);
    report_add(r, "active_params", FIELD_ENG, t->active_params);
    report_add(r, "tokens", FIELD_ENG, t->tokens);
    report_text(r, "gpu", t->gpu->name);
    report_add(r, "peak_flops", FIELD_SCI, t->gpu->peak_flops);
    report_add(r, "mfu", FIELD_FRACTION, t->mfu);
    report_add(r, "gpus", FIELD_COUNT, t->gpus);
    report_add(r, "dense_flops", FIELD_SCI, t->dense_flops);
    report_add(r, "attention_flops", FIELD_SCI, t->attention_flops);
    report_add(r, "attention_over_dense", FIELD_FRACTION,
               t->attention_flops / t->dense_flops);
    report_add(r, "flops", FIELD_SCI, t->flops);
    report_add(r, "forward_flops", FIELD_SCI, 2 * t->active_params * t->tokens);
    report_add(r, "recompute_flops", FIELD_SCI, 8 * t->active_params * t->tokens);
    report_add(r, "hfu_full_recompute", FIELD_FRACTION, t->mfu * 8 / 6);
    report_add(r, "attention_flops_causal", FIELD_SCI, t->attention_flops / 2);
    report_add(r, "attention_causal_over_dense", FIELD_FRACTION,
               t->attention_flops / 2 / t->dense_flops);
    report_add(r, "flops_per_second", FIELD_SCI, t->flops_per_second);
    report_add(r, "seconds", FIELD_SCI, t->seconds);
    report_add(r, "days", FIELD_REAL, t->seconds / SECONDS_PER_DAY);
    report_add(r, "gpu_hours", FIELD_COUNT, round(t->gpu_hours));
    if (t->usd_per_gpu_hour > 0) {
        report_add(r, "usd_per_gpu_hour", FIELD_REAL, t->usd_per_gpu_hour);
        report_add(r, "usd", FIELD_COUNT,
                   round(t->gpu_hours * t->usd_per_gpu_hour));
    }
    report_add(r, "floor_gpus", FIELD_COUNT, floor_->gpus_whole_nodes);
    report_add(r, "floor_flops_per_second", FIELD_SCI, floor_rate);
    report_add(r, "floor_days", FIELD_REAL,
               t->flops / floor_rate / SECONDS_PER_DAY);
    report_add(r, "fleet_over_floor", FIELD_REAL,
               t->gpus / floor_->gpus_whole_nodes);
    if (days > 0) {
        double needed = gpus_for_deadline(t, days);
        report_add(r, "deadline_days", FIELD_REAL, days);
        report_add(r, "gpus_needed", FIELD_COUNT, needed);
        report_add(r, "gpus_needed_whole_nodes", FIELD_COUNT,
                   ceil_count(needed / t->gpu->per_node) * t->gpu->per_node);
    }
}
static void print_days_against_fleet(FILE *out, TrainingTime t)
{
    fprintf(out, "gpus,seconds,days\n");
    for (double gpus = t.gpu->per_node; gpus <= 65536; gpus *= 2) {
        t.gpus = gpus;
        derive_training_time(&t);
        fprintf(out, "%.0f,%.17g,%.17g\n", gpus, t.seconds,
                t.seconds / SECONDS_PER_DAY);
    }
}
int compute_main(int argc, char **argv)
{
    const char *command = "fleet compute";
    Option options[] = {
        { "--params", OPT_NUMBER, 1e15,
          "parameters held in memory (for MoE: all experts)", 100e9, NULL, 0 },
        { "--active-params", OPT_NUMBER, 1e15,
          "parameters each token passes through (default: --params)",
          0, NULL, 0 },
        { "--tokens", OPT_NUMBER, 1e17, "training tokens D", 2e12, NULL, 0 },
        { "--gpu", OPT_NAME, 0,
          "part: a100, h100, h200, h800, b200 or mi300x", 0, "h100", 0 },
        { "--machine", OPT_PATH, 0, "plan for this machine instead of --gpu: "
          "each device is one core, its peak peak_flops_per_core of this file "
          "(build/machine.json)", 0, NULL, 0 },
        { "--gpus", OPT_COUNT, 1e7, "GPUs in the fleet", 1024, NULL, 0 },
        { "--mfu", OPT_NUMBER, 1, "model FLOPs utilisation", 0.4, NULL, 0 },
        { "--achieved-flops", OPT_NUMBER, 1e17,
          "model FLOP/s one GPU achieves (instead of --mfu)", 0, NULL, 0 },
        { "--days", OPT_NUMBER, 1e5,
          "also find the GPUs that finish in this many days", 0, NULL, 0 },
        { "--usable", OPT_NUMBER, 1,
          "fraction of memory for state, for the floor", 0.8, NULL, 0 },
        { "--layers", OPT_COUNT, 1e5, "layers, for the attention term",
          0, NULL, 0 },
        { "--hidden", OPT_COUNT, 1e7, "hidden size, for the attention term",
          0, NULL, 0 },
        { "--seq", OPT_COUNT, 1e8, "sequence length, for the attention term",
          0, NULL, 0 },
        { "--usd-per-gpu-hour", OPT_NUMBER, 1e4,
          "price of one GPU-hour in dollars, for the cost (no default)",
          0, NULL, 0 },
        { "--sweep", OPT_SWITCH, 0,
          "print CSV of days against fleet size and exit", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "Training FLOPs, the time they take on a fleet, and the fleet a "
        "deadline demands.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    if (option_given(options, "--gpu") && option_given(options, "--machine")) {
        complain(command, "--gpu and --machine are alternatives; give one");
        return 2;
    }
    const Gpu *gpu = option_given(options, "--machine")
                   ? machine_part(command, option_text(options, "--machine"))
                   : find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    double params = option_number(options, "--params");
    double active = option_given(options, "--active-params")
                  ? option_number(options, "--active-params") : params;
    if (active > params) {
        complain(command, "--active-params (%s) cannot exceed --params (%s)",
                 eng(active).s, eng(params).s);
        return 2;
    }
    double mfu = option_number(options, "--mfu");
    if (option_given(options, "--achieved-flops")) {
        double achieved = option_number(options, "--achieved-flops");
        if (option_given(options, "--mfu")) {
            complain(command, "--achieved-flops and --mfu are alternatives; "
                     "give one");
            return 2;
        }
        if (achieved > gpu->peak_flops) {
            complain(command, "--achieved-flops %s exceeds the %s's dense peak "
                     "of %s FLOP/s (a sparse figure?)", eng(achieved).s,
                     gpu->key, eng(gpu->peak_flops).s);
            return 2;
        }
        mfu = achieved / gpu->peak_flops;
    }
    int shape = option_given(options, "--layers") + option_given(options, "--hidden")
              + option_given(options, "--seq");
    if (shape != 0 && shape != 3) {
        complain(command, "--layers, --hidden and --seq go together; "
                 "give all three for the attention term, or none");
        return 2;
    }
    TrainingTime t = {
        .params = params, .active_params = active,
        .tokens = option_number(options, "--tokens"),
        .layers = option_number(options, "--layers"),
        .hidden = option_number(options, "--hidden"),
        .seq = option_number(options, "--seq"),
        .gpu = gpu, .mfu = mfu,
        .gpus = option_number(options, "--gpus"),
        .usd_per_gpu_hour = option_number(options, "--usd-per-gpu-hour"),
    };
    derive_training_time(&t);
    MemoryFloor floor_ = { .params = params, .bytes_per_param = 16, .gpu = gpu,
                           .usable = option_number(options, "--usable") };
    derive_memory_floor(&floor_);
    double days = option_number(options, "--days");

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (option_given(options, "--sweep")) {
        print_days_against_fleet(out.file, t);
    } else if (report_requested(options)) {
        Report r = { .count = 0 };
        report_training_time(&r, &t, &floor_, days);
        print_report(out.file, &r, options);
    } else {
        print_training_time(out.file, &t, &floor_, days);
    }
    return output_commit(&out, command);
}
