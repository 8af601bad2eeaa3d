/* Tangled from chapters/13b-interruptions.nw and chapters/99h-reliability-plumbing.nw; edit the chapters, not this file. */
#define _XOPEN_SOURCE 700        /* erand48: its arithmetic POSIX fixes */
#include <math.h>
#include <stdlib.h>

#include "fleet.h"

/* Where the rate of interruptions comes from. */
typedef enum {
    RATE_PUBLISHED,  /* none given: Llama 3's count, each GPU's share     */
    RATE_GPU,        /* --mtbf-hours: one GPU's mean time between failures */
    RATE_NODE,       /* --node-mtbf-hours: one node's                     */
    RATE_OBSERVED    /* --interruptions in --window-days, on this fleet   */
} RateSource;

typedef struct {
    /* what is given */
    double gpus, gpus_per_node;
    RateSource source;
    double part_mtbf_s;        /* a GPU's or a node's (RATE_GPU, RATE_NODE) */
    double interruptions;      /* counted (RATE_OBSERVED, RATE_PUBLISHED)   */
    double window_s;           /* ... over this long                        */
    double observed_gpus;      /* ... on this many GPUs                     */
    double params, bytes_per_param;   /* what the checkpoint holds        */
    double write_bandwidth;    /* bytes/s in aggregate; 0: write_s given    */
    double write_s;            /* δ: the stall of one checkpoint            */
    double restart_s;          /* R: from an interruption to training again */
    double interval_s;         /* τ: training between checkpoints           */
    int daly;                  /* 1: τ is Daly's, none was given            */
    double work_s;             /* W: the training, failure-free             */
    /* what follows */
    double nodes;
    double fleet_mtbi_s;       /* M                                         */
    double checkpoint_bytes;   /* params × bytes_per_param                  */
    double young_s, daly_s, optimum_s;
    double interval_wall_s;    /* E(τ)                                      */
    double effective_fraction; /* τ / E(τ)                                  */
    double wall_clock_s;       /* W / f                                     */
} FailingRun;
/* Llama 3 405B's pre-training (arXiv:2407.21783, Section 3.3): 419
   unexpected interruptions in a 54-day window on 16,384 H100s. */
#define PUBLISHED_INTERRUPTIONS 419
#define PUBLISHED_WINDOW_DAYS 54
#define PUBLISHED_GPUS 16384
/* M, seconds: the parts fail independently, at random, so the fleet
   fails at the sum of their rates. */
static double fleet_mtbi(const FailingRun *r)
{
    switch (r->source) {
    case RATE_GPU:
        return r->part_mtbf_s / r->gpus;
    case RATE_NODE:
        return r->part_mtbf_s / r->nodes;
    case RATE_OBSERVED:
        return r->window_s / r->interruptions;
    case RATE_PUBLISHED:
        break;
    }
    /* the published count: each GPU's share, times this fleet's GPUs */
    double gpu_mtbf_s = r->observed_gpus * r->window_s / r->interruptions;
    return gpu_mtbf_s / r->gpus;
}
/* Young: the interval that balances writes (δ/τ) against rework
   (τ/2M), to first order. */
static double young_interval(double write_s, double mtbi_s)
{
    return sqrt(2 * write_s * mtbi_s);
}
/* Daly: the optimum of f to higher order in δ/M. */
static double daly_interval(double write_s, double mtbi_s)
{
    if (write_s >= 2 * mtbi_s)
        return mtbi_s;
    double x = write_s / (2 * mtbi_s);
    return sqrt(2 * write_s * mtbi_s) * (1 + sqrt(x) / 3 + x / 9)
           - write_s;
}
/* E(τ): the expected wall-clock time to train τ and write it, when
   interruptions come at random, M apart on average, each followed by a
   restart of R that an interruption begins again (Daly's model). */
static double interval_wall_seconds(double interval_s, double write_s,
                                    double restart_s, double mtbi_s)
{
    return mtbi_s * exp(restart_s / mtbi_s)
                  * expm1((interval_s + write_s) / mtbi_s);
}

/* f(τ) = τ / E(τ): the share of the wall clock that trains and is kept. */
static double effective_fraction_at(double interval_s, double write_s,
                                    double restart_s, double mtbi_s)
{
    return interval_s / interval_wall_seconds(interval_s, write_s,
                                              restart_s, mtbi_s);
}
/* The τ at which f peaks: the root y = τ/M of ln(1 - y) + y + δ/M = 0,
   which is positive below the root and negative above it. Newton's step
   (the slope is -y/(1 - y)); a step that would leave the bracket halves
   it instead. The start is the root's series, sqrt(2d) - 2d/3. */
static double optimum_interval(double write_s, double mtbi_s)
{
    double d = write_s / mtbi_s, below = 0, above = 1;
    double p = sqrt(-2 * expm1(-d));       /* sqrt(2d), for small d */
    double y = fmin(p - p * p / 3, 0.5);
    for (int i = 0; i < 200; i++) {
        double g = log1p(-y) + y + d;
        if (g > 0)
            below = y;
        else
            above = y;
        double next = y + g * (1 - y) / y;
        if (!(next > below && next < above))
            next = (below + above) / 2;
        if (fabs(next - y) <= 1e-15 * y)
            return next * mtbi_s;
        y = next;
    }
    return y * mtbi_s;
}
/* A gap between interruptions: exponential with mean M. */
static double exponential(double mean_s, unsigned short rng[3])
{
    return -mean_s * log1p(-erand48(rng));
}

/* One run of r->work_s of training. Returns its wall-clock time; adds
   the interruptions it met to *interruptions. */
static double simulate_run(const FailingRun *r, unsigned short rng[3],
                           double *interruptions)
{
    double intervals = ceil_count(r->work_s / r->interval_s);
    double last_s = r->work_s - (intervals - 1) * r->interval_s;
    double clock = 0;                       /* wall-clock time         */
    double next = exponential(r->fleet_mtbi_s, rng);   /* interruption */
    for (double done = 0; done < intervals;) {
        double work = done + 1 < intervals ? r->interval_s : last_s;
        double saved = clock + work + r->write_s;
        if (next >= saved) {                /* trained, and written     */
            clock = saved;
            done++;
            continue;
        }
        clock = next;                       /* back to the last write   */
        *interruptions += 1;
        while ((next = clock + exponential(r->fleet_mtbi_s, rng))
               < clock + r->restart_s) {
            clock = next;                   /* the restart, interrupted */
            *interruptions += 1;
        }
        clock += r->restart_s;              /* next is still to come    */
    }
    return clock;
}
typedef struct {
    double runs;
    double wall_clock_s;          /* the mean over the runs              */
    double effective_fraction;    /* work ÷ the mean wall clock          */
    double standard_error;        /* of effective_fraction               */
    double interruptions;         /* the mean a run                      */
} Simulated;

static Simulated simulate(const FailingRun *r, double runs, double seed)
{
    unsigned long s = (unsigned long)seed;
    unsigned short rng[3] = { 0x330e, (unsigned short)(s & 0xffff),
                              (unsigned short)(s >> 16 & 0xffff) };
    double mean = 0, squares = 0, interruptions = 0;
    for (double i = 1; i <= runs; i++) {
        double wall = simulate_run(r, rng, &interruptions);
        double change = wall - mean;
        mean += change / i;
        squares += change * (wall - mean);
    }
    double sd = sqrt(squares / (runs - 1));
    Simulated sim = { .runs = runs, .wall_clock_s = mean,
                      .effective_fraction = r->work_s / mean,
                      .interruptions = interruptions / runs };
    sim.standard_error = sim.effective_fraction * sd / (sqrt(runs) * mean);
    return sim;
}
static void derive_failing_run(FailingRun *r)
{
    r->nodes = r->gpus / r->gpus_per_node;
    r->fleet_mtbi_s = fleet_mtbi(r);
    r->checkpoint_bytes = r->params * r->bytes_per_param;
    if (r->write_bandwidth > 0)
        r->write_s = r->checkpoint_bytes / r->write_bandwidth;
    r->young_s = young_interval(r->write_s, r->fleet_mtbi_s);
    r->daly_s = daly_interval(r->write_s, r->fleet_mtbi_s);
    r->optimum_s = optimum_interval(r->write_s, r->fleet_mtbi_s);
    if (r->daly)
        r->interval_s = r->daly_s;
    r->interval_wall_s = interval_wall_seconds(r->interval_s, r->write_s,
                                               r->restart_s, r->fleet_mtbi_s);
    r->effective_fraction = effective_fraction_at(r->interval_s, r->write_s,
                                                  r->restart_s,
                                                  r->fleet_mtbi_s);
    r->wall_clock_s = r->work_s / r->effective_fraction;
}
/* A part's mean time between failures, in hours as its flag takes it. */
static Text in_hours(double seconds)
{
    return sig(seconds / 3600, 3);
}

static void print_rate(FILE *out, const FailingRun *r)
{
    Text gpus = counted(r->gpus, "GPU", "GPUs");
    double gpu_mtbf_s = r->fleet_mtbi_s * r->gpus;
    switch (r->source) {
    case RATE_GPU:
        fprintf(out, "interruptions  one GPU fails every %s h; %s:\n"
                "  M = %s h ÷ %s = %s\n", in_hours(r->part_mtbf_s).s,
                gpus.s, in_hours(r->part_mtbf_s).s, grouped(r->gpus).s,
                duration(r->fleet_mtbi_s).s);
        break;
    case RATE_NODE:
        fprintf(out, "interruptions  one node fails every %s h; %s of %s:"
                "\n  M = %s h ÷ %s = %s\n", in_hours(r->part_mtbf_s).s,
                counted(r->nodes, "node", "nodes").s,
                counted(r->gpus_per_node, "GPU", "GPUs").s,
                in_hours(r->part_mtbf_s).s, grouped(r->nodes).s,
                duration(r->fleet_mtbi_s).s);
        break;
    case RATE_OBSERVED:
        fprintf(out, "interruptions  %s in %s on this fleet of %s:\n"
                "  M = %s ÷ %s = %s\n", grouped(r->interruptions).s,
                duration(r->window_s).s, gpus.s, duration(r->window_s).s,
                grouped(r->interruptions).s, duration(r->fleet_mtbi_s).s);
        break;
    case RATE_PUBLISHED:
        fprintf(out, "interruptions  %s in %s on %s GPUs (Llama 3 405B); "
                "each GPU's share:\n  %s × %s ÷ %s = %s h; on %s:\n"
                "  M = %s h ÷ %s = %s\n", grouped(r->interruptions).s,
                duration(r->window_s).s, grouped(r->observed_gpus).s,
                grouped(r->observed_gpus).s, duration(r->window_s).s,
                grouped(r->interruptions).s, in_hours(gpu_mtbf_s).s, gpus.s,
                in_hours(gpu_mtbf_s).s, grouped(r->gpus).s,
                duration(r->fleet_mtbi_s).s);
        return;
    }
    if (r->source != RATE_GPU)
        fprintf(out, "  one GPU's share: %s × M = %s h between failures\n",
                grouped(r->gpus).s, in_hours(gpu_mtbf_s).s);
}

static void print_failing_run(FILE *out, const FailingRun *r,
                              const Simulated *sim)
{
    double M = r->fleet_mtbi_s, d = r->write_s, tau = r->interval_s;
    fprintf(out, "fleet checkpoint: %s; a checkpoint of %s parameters; "
            "a restart\n  of %s; %s of training without interruptions\n\n",
            counted(r->gpus, "GPU", "GPUs").s, eng(r->params).s,
            duration(r->restart_s).s, duration(r->work_s).s);
    print_rate(out, r);
    fprintf(out, "checkpoint     %s × %s B = %s", eng(r->params).s,
            sig(r->bytes_per_param, 3).s, bytes_auto(r->checkpoint_bytes).s);
    if (r->write_bandwidth > 0)
        fprintf(out, "; at %s/s: δ = %s\n",
                bytes_auto(r->write_bandwidth).s, duration(d).s);
    else
        fprintf(out, "; its stall (--write-seconds): δ = %s\n",
                duration(d).s);
    fprintf(out, "Young          τ = sqrt(2δM) = sqrt(2 × %s × %s) = %s\n",
            duration(d).s, duration(M).s, duration(r->young_s).s);
    fprintf(out, "Daly           τ = sqrt(2δM) [1 + sqrt(δ/2M)/3 + (δ/2M)/9] "
            "− δ\n               = %s\n", duration(r->daly_s).s);
    fprintf(out, "best           e^((τ+δ)/M) (1 − τ/M) = 1 at τ = %s\n",
            duration(r->optimum_s).s);
    fprintf(out, "one interval   τ = %s%s; with its write it takes, on "
            "average,\n  E = M e^(R/M) (e^((τ+δ)/M) − 1) = %s\n",
            duration(tau).s, r->daly ? " (Daly's)" : "",
            duration(r->interval_wall_s).s);
    fprintf(out, "effective      f = τ ÷ E = %s %%; to first order it "
            "loses\n  writes δ/τ = %s %%, rework (τ+δ)/2M = %s %%, "
            "restarts R/M = %s %%\n", sig(100 * r->effective_fraction, 4).s,
            sig(100 * d / tau, 3).s, sig(100 * (tau + d) / (2 * M), 3).s,
            sig(100 * r->restart_s / M, 3).s);
    fprintf(out, "wall clock     W ÷ f = %s ÷ %s %% = %s,\n  through about "
            "%s\n",
            duration(r->work_s).s, sig(100 * r->effective_fraction, 4).s,
            duration(r->wall_clock_s).s,
            counted(round(r->wall_clock_s / M), "interruption",
                    "interruptions").s);
    if (sim->runs > 0)
        fprintf(out, "simulated      %s: f = %s %% ± %s %% (one standard "
                "error),\n  %s standard errors from τ ÷ E; %s interruptions "
                "a run on average\n", counted(sim->runs, "run", "runs").s,
                sig(100 * sim->effective_fraction, 5).s,
                sig(100 * sim->standard_error, 2).s,
                sig((sim->effective_fraction - r->effective_fraction)
                    / sim->standard_error, 2).s,
                sig(sim->interruptions, 4).s);
}
static void report_failing_run(Report *rep, const FailingRun *r,
                               const Simulated *sim)
{
    static const char *const sources[] = {
        [RATE_PUBLISHED] = "published", [RATE_GPU] = "gpu",
        [RATE_NODE] = "node", [RATE_OBSERVED] = "observed"
    };
    double M = r->fleet_mtbi_s, d = r->write_s, tau = r->interval_s;
    report_add(rep, "gpus", FIELD_COUNT, r->gpus);
    report_add(rep, "gpus_per_node", FIELD_COUNT, r->gpus_per_node);
    report_add(rep, "nodes", FIELD_REAL, r->nodes);
    report_text(rep, "rate_source", sources[r->source]);
    if (r->source == RATE_OBSERVED || r->source == RATE_PUBLISHED) {
        report_add(rep, "interruptions", FIELD_COUNT, r->interruptions);
        report_add(rep, "window_s", FIELD_REAL, r->window_s);
        report_add(rep, "observed_gpus", FIELD_COUNT, r->observed_gpus);
    }
    report_add(rep, "fleet_mtbi_s", FIELD_REAL, M);
    report_add(rep, "gpu_mtbf_s", FIELD_REAL, M * r->gpus);
    report_add(rep, "node_mtbf_s", FIELD_REAL, M * r->nodes);
    report_add(rep, "params", FIELD_ENG, r->params);
    report_add(rep, "bytes_per_param", FIELD_REAL, r->bytes_per_param);
    report_add(rep, "checkpoint_bytes", FIELD_BYTES, r->checkpoint_bytes);
    if (r->write_bandwidth > 0)
        report_add(rep, "write_bandwidth", FIELD_BYTES, r->write_bandwidth);
    report_add(rep, "write_s", FIELD_REAL, d);
    report_add(rep, "restart_s", FIELD_REAL, r->restart_s);
    report_add(rep, "train_s", FIELD_REAL, r->work_s);
    report_add(rep, "young_interval_s", FIELD_REAL, r->young_s);
    report_add(rep, "daly_interval_s", FIELD_REAL, r->daly_s);
    report_add(rep, "optimum_interval_s", FIELD_REAL, r->optimum_s);
    report_add(rep, "interval_s", FIELD_REAL, tau);
    report_text(rep, "interval_from", r->daly ? "daly" : "given");
    report_add(rep, "interval_wall_s", FIELD_REAL, r->interval_wall_s);
    report_add(rep, "effective_fraction", FIELD_FRACTION,
               r->effective_fraction);
    report_add(rep, "young_effective_fraction", FIELD_FRACTION,
               effective_fraction_at(r->young_s, d, r->restart_s, M));
    report_add(rep, "optimum_effective_fraction", FIELD_FRACTION,
               effective_fraction_at(r->optimum_s, d, r->restart_s, M));
    report_add(rep, "write_loss_fraction", FIELD_FRACTION, d / tau);
    report_add(rep, "rework_loss_fraction", FIELD_FRACTION,
               (tau + d) / (2 * M));
    report_add(rep, "restart_loss_fraction", FIELD_FRACTION,
               r->restart_s / M);
    report_add(rep, "wall_clock_s", FIELD_REAL, r->wall_clock_s);
    report_add(rep, "expected_interruptions", FIELD_REAL,
               r->wall_clock_s / M);
    if (sim->runs > 0) {
        report_add(rep, "simulated_runs", FIELD_COUNT, sim->runs);
        report_add(rep, "simulated_effective_fraction", FIELD_FRACTION,
                   sim->effective_fraction);
        report_add(rep, "simulated_standard_error", FIELD_REAL,
                   sim->standard_error);
        report_add(rep, "simulated_wall_clock_s", FIELD_REAL,
                   sim->wall_clock_s);
        report_add(rep, "simulated_interruptions", FIELD_REAL,
                   sim->interruptions);
        report_add(rep, "simulated_deviation", FIELD_REAL,
                   (sim->effective_fraction - r->effective_fraction)
                   / sim->standard_error);
    }
}
int checkpoint_main(int argc, char **argv)
{
    const char *command = "fleet checkpoint";
    Option options[] = {
        { "--gpus", OPT_COUNT, 1e7, "GPUs in the fleet; the run stops when any "
          "one stops", PUBLISHED_GPUS, NULL, 0 },
        { "--gpus-per-node", OPT_COUNT, 1024, "GPUs in a node (for "
          "--node-mtbf-hours)", 8, NULL, 0 },
        { "--mtbf-hours", OPT_NUMBER, 1e9, "hours between failures of one GPU "
          "(default: each GPU's share of Llama 3's published count)", 0, NULL, 0 },
        { "--node-mtbf-hours", OPT_NUMBER, 1e9, "hours between failures of one "
          "node (instead of --mtbf-hours)", 0, NULL, 0 },
        { "--interruptions", OPT_COUNT, 1e9, "interruptions counted on this "
          "fleet in --window-days (instead of --mtbf-hours)", 0, NULL, 0 },
        { "--window-days", OPT_NUMBER, 1e5, "days over which --interruptions "
          "were counted", 0, NULL, 0 },
        { "--params", OPT_NUMBER, 1e15, "parameters of the model",
          405e9, NULL, 0 },
        { "--bytes-per-param", OPT_NUMBER, 1000, "bytes the checkpoint holds of "
          "each parameter (16: all of mixed-precision Adam's state; 12: fp32 "
          "weights and Adam's moments, what a restart needs)", 16, NULL, 0 },
        { "--write-gbs", OPT_NUMBER, 1e7, "GB/s, in aggregate, at which the "
          "checkpoint is written", 2000, NULL, 0 },
        { "--write-seconds", OPT_NUMBER, 1e7, "seconds training stalls for each "
          "checkpoint (instead of --write-gbs; e.g. measured)", 0, NULL, 0 },
        { "--restart-minutes", OPT_NUMBER, 1e6, "minutes from an interruption to "
          "training again, reading the checkpoint included", 10, NULL, 0 },
        { "--interval-minutes", OPT_NUMBER, 1e7, "minutes of training between "
          "checkpoints (default: Daly's interval)", 0, NULL, 0 },
        { "--train-days", OPT_NUMBER, 1e5, "days of training the run needs "
          "without interruptions", 30, NULL, 0 },
        { "--simulate", OPT_COUNT, 1e6, "simulate this many runs (Monte Carlo) "
          "beside the closed form; at least 2", 0, NULL, 0 },
        { "--seed", OPT_WHOLE, 4294967295.0, "with --simulate: the seed of its "
          "random numbers", 1, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "How often a run on a fleet stops, how often it should checkpoint, "
        "and what is left of its time: Young's and Daly's intervals, the "
        "expected effective fraction and the wall clock (and, with "
        "--simulate, a Monte Carlo of the same run).", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    int gpu_rate = option_given(options, "--mtbf-hours"),
        node_rate = option_given(options, "--node-mtbf-hours"),
        counted_rate = option_given(options, "--interruptions")
                       || option_given(options, "--window-days");
    if (gpu_rate + node_rate + counted_rate > 1) {
        complain(command, "--mtbf-hours, --node-mtbf-hours and --interruptions "
                 "with --window-days are alternatives; give one");
        return 2;
    }
    if (counted_rate && !(option_given(options, "--interruptions")
                          && option_given(options, "--window-days"))) {
        complain(command, "--interruptions and --window-days go together: a "
                 "count and the days it was counted over");
        return 2;
    }
    if (option_given(options, "--write-gbs")
        && option_given(options, "--write-seconds")) {
        complain(command, "--write-gbs and --write-seconds are alternatives; "
                 "give one");
        return 2;
    }
    double gpus = option_number(options, "--gpus"),
           per_node = option_number(options, "--gpus-per-node");
    if (node_rate && fmod(gpus, per_node) != 0) {
        complain(command, "--node-mtbf-hours: %s GPUs do not fill whole nodes "
                 "of %s (--gpus-per-node)", grouped(gpus).s, grouped(per_node).s);
        return 2;
    }
    if (option_given(options, "--seed") && !option_given(options, "--simulate")) {
        complain(command, "--seed goes with --simulate");
        return 2;
    }
    if (option_given(options, "--simulate")
        && option_number(options, "--simulate") < 2) {
        complain(command, "--simulate needs at least 2 runs for a standard "
                 "error");
        return 2;
    }
    FailingRun r = {
        .gpus = gpus, .gpus_per_node = per_node,
        .source = gpu_rate ? RATE_GPU : node_rate ? RATE_NODE
                : counted_rate ? RATE_OBSERVED : RATE_PUBLISHED,
        .part_mtbf_s = 3600 * option_number(options, gpu_rate ? "--mtbf-hours"
                                                     : "--node-mtbf-hours"),
        .interruptions = counted_rate ? option_number(options, "--interruptions")
                                      : PUBLISHED_INTERRUPTIONS,
        .window_s = 86400 * (counted_rate ? option_number(options,
                                                          "--window-days")
                                          : PUBLISHED_WINDOW_DAYS),
        .observed_gpus = counted_rate ? gpus : PUBLISHED_GPUS,
        .params = option_number(options, "--params"),
        .bytes_per_param = option_number(options, "--bytes-per-param"),
        .restart_s = 60 * option_number(options, "--restart-minutes"),
        .interval_s = 60 * option_number(options, "--interval-minutes"),
        .daly = !option_given(options, "--interval-minutes"),
        .work_s = 86400 * option_number(options, "--train-days"),
    };
    if (option_given(options, "--write-seconds"))
        r.write_s = option_number(options, "--write-seconds");
    else
        r.write_bandwidth = 1e9 * option_number(options, "--write-gbs");
    derive_failing_run(&r);
    if (!(r.effective_fraction >= 1e-6)) {
        complain(command, "an interval of %s and a write of %s, with an "
                 "interruption every %s, keep less than a millionth of the "
                 "time: shorten them", duration(r.interval_s).s,
                 duration(r.write_s).s, duration(r.fleet_mtbi_s).s);
        return 2;
    }
    double runs = option_given(options, "--simulate")
                ? option_number(options, "--simulate") : 0;
    double steps = runs * (ceil_count(r.work_s / r.interval_s)
                           + r.wall_clock_s / r.fleet_mtbi_s);
    if (steps > 1e9) {
        complain(command, "--simulate %s: about %s intervals and interruptions "
                 "to play, more than 1e9; fewer runs or a longer interval",
                 grouped(runs).s, sci(steps, 2).s);
        return 2;
    }
    Simulated sim = { .runs = 0 };
    if (runs > 0)
        sim = simulate(&r, runs, option_number(options, "--seed"));

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report rep = { .count = 0 };
        report_failing_run(&rep, &r, &sim);
        print_report(out.file, &rep, options);
    } else {
        print_failing_run(out.file, &r, &sim);
    }
    return output_commit(&out, command);
}
