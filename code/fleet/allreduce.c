/* Tangled from chapters/99d-hierarchical.nw; edit the chapter, not this file. */
#include <math.h>

#include "fleet.h"

typedef struct {
    double bytes, n, group;    /* S, n ranks, G ranks per group           */
    Link inside, across;
    const char *part;          /* the part's name, or this machine        */
    double flat_s, hierarchical_s, rails_s;
    double inside_s;           /* the hierarchy's two phases inside       */
    double across_s;           /* and its all-reduce across               */
} AllReduce;

static void derive_allreduce(AllReduce *a)
{
    double g = a->n / a->group;
    /* one group: the flat ring never leaves it */
    const Link *ring = g > 1 ? &a->across : &a->inside;
    a->flat_s = collective_seconds(ALL_REDUCE, a->bytes, a->n, ring);
    a->hierarchical_s = hierarchical_allreduce_seconds(a->bytes, a->n,
                                                       a->group, &a->inside,
                                                       &a->across);
    a->across_s = collective_seconds(ALL_REDUCE, a->bytes / a->group, g,
                                     &a->across);
    a->inside_s = a->hierarchical_s - a->across_s;
    a->rails_s = g > 1 ? collective_seconds(ALL_REDUCE, a->bytes / a->group,
                                            a->n, &a->across)
                       : a->flat_s;              /* no NICs to split over */
}
static void print_allreduce(FILE *out, const AllReduce *a)
{
    double n = a->n, G = a->group, g = n / G;
    fprintf(out, "fleet allreduce: %s over %s of %s, %s of %s\n"
            "  inside a group: %s, %s/s each way, %s a step\n"
            "  across groups:  %s, %s/s each way, %s a step\n\n",
            bytes_auto(a->bytes).s, counted(n, "rank", "ranks").s, a->part,
            counted(g, "group", "groups").s, grouped(G).s, a->inside.name,
            bytes_auto(a->inside.bandwidth).s,
            duration(a->inside.latency).s, a->across.name,
            bytes_auto(a->across.bandwidth).s,
            duration(a->across.latency).s);
    fprintf(out, "flat ring:    %s, 2(n-1)/n × S = %s per rank, every "
            "step at the pace across\n              = %s\n",
            counted(ring_steps(ALL_REDUCE, n), "step", "steps").s,
            bytes_auto(ring_bytes_sent(ALL_REDUCE, a->bytes, n)).s,
            duration(a->flat_s).s);
    fprintf(out, "hierarchical: inside, 2 × %s, 2 × (G-1)/G × S = %s "
            "= %s\n              across, %s, 2(g-1)/g × S/G = %s "
            "= %s\n              = %s, %s times the flat ring's time\n",
            counted(G - 1, "step", "steps").s,
            bytes_auto(2 * ring_bytes_sent(ALL_GATHER, a->bytes, G)).s,
            duration(a->inside_s).s,
            counted(ring_steps(ALL_REDUCE, g), "step", "steps").s,
            bytes_auto(collective_bytes_sent(ALL_REDUCE, a->bytes / G, g,
                                             0)).s,
            duration(a->across_s).s, duration(a->hierarchical_s).s,
            sig(a->hierarchical_s / a->flat_s, 3).s);
    if (g > 1)
        fprintf(out, "flat, G rings (one per NIC): %s of S/G each = %s\n",
                counted(ring_steps(ALL_REDUCE, n), "step", "steps").s,
                duration(a->rails_s).s);
}
static void report_allreduce(Report *r, const AllReduce *a)
{
    double n = a->n, G = a->group, g = n / G;
    report_add(r, "bytes", FIELD_BYTES, a->bytes);
    report_add(r, "ranks", FIELD_COUNT, n);
    report_add(r, "group", FIELD_COUNT, G);
    report_add(r, "groups", FIELD_COUNT, g);
    report_text(r, "inside_link", a->inside.name);
    report_add(r, "inside_bandwidth", FIELD_BYTES, a->inside.bandwidth);
    report_add(r, "inside_latency_s", FIELD_REAL, a->inside.latency);
    report_text(r, "across_link", a->across.name);
    report_add(r, "across_bandwidth", FIELD_BYTES, a->across.bandwidth);
    report_add(r, "across_latency_s", FIELD_REAL, a->across.latency);
    report_add(r, "flat_steps", FIELD_COUNT, ring_steps(ALL_REDUCE, n));
    report_add(r, "flat_bytes_across", FIELD_BYTES,
               ring_bytes_sent(ALL_REDUCE, a->bytes, n));
    report_add(r, "flat_seconds", FIELD_REAL, a->flat_s);
    report_add(r, "hierarchical_steps_across", FIELD_COUNT,
               collective_steps(ALL_REDUCE, g, 0));
    report_add(r, "hierarchical_bytes_across", FIELD_BYTES,
               collective_bytes_sent(ALL_REDUCE, a->bytes / G, g, 0));
    report_add(r, "hierarchical_bytes_inside", FIELD_BYTES,
               2 * ring_bytes_sent(ALL_GATHER, a->bytes, G));
    report_add(r, "hierarchical_inside_seconds", FIELD_REAL, a->inside_s);
    report_add(r, "hierarchical_across_seconds", FIELD_REAL, a->across_s);
    report_add(r, "hierarchical_seconds", FIELD_REAL, a->hierarchical_s);
    report_add(r, "speedup", FIELD_REAL, a->flat_s / a->hierarchical_s);
    report_add(r, "rails_seconds", FIELD_REAL, a->rails_s);
    report_add(r, "flat_busbw", FIELD_BYTES,
               a->bytes / a->flat_s * ring_steps(ALL_REDUCE, n) / n);
    report_add(r, "hierarchical_busbw", FIELD_BYTES,
               a->bytes / a->hierarchical_s * ring_steps(ALL_REDUCE, n) / n);
}
int allreduce_main(int argc, char **argv)
{
    const char *command = "fleet allreduce";
    Option options[] = {
        { "--bytes", OPT_NUMBER, 1e15, "bytes all-reduced by every rank",
          10e9, NULL, 0 },
        { "--gpus", OPT_COUNT, 1e7, "ranks n", 1024, NULL, 0 },
        { "--group", OPT_COUNT, 1e7, "ranks per group G (default: a node's "
          "GPUs)", 0, NULL, 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or mi300x",
          0, "h100", 0 },
        { "--link-efficiency", OPT_NUMBER, 1,
          "fraction of each link's line rate a collective reaches", 1, NULL,
          0 },
        { "--machine", OPT_PATH, 0, "plan for this machine instead of --gpu: "
          "its measured point-to-point link inside and across "
          "(build/machine.json)", 0, NULL, 0 },
        { "--delay-us", OPT_NUMBER, 1e6, "with --machine: microseconds each "
          "message across groups waits first", 0, NULL, 0 },
        { "--throttle-gbs", OPT_NUMBER, 1e6, "with --machine: GB/s of each "
          "message across groups", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "One all-reduce, flat ring against hierarchical: reduce-scatter "
        "inside each group, all-reduce across, all-gather inside.", options,
        argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    AllReduce a = { .bytes = option_number(options, "--bytes"),
                    .n = option_number(options, "--gpus") };
    const char *machine = option_text(options, "--machine");
    int slowed = option_given(options, "--delay-us")
                 || option_given(options, "--throttle-gbs");
    if (machine != NULL ? option_given(options, "--gpu") : slowed) {
        complain(command, machine != NULL ? "--machine plans for this machine's "
                 "link; give it without --gpu" : "--delay-us and --throttle-gbs "
                 "describe the benchmark's simulated link; give them with "
                 "--machine");
        return 2;
    }
    const Gpu *gpu = machine != NULL
                   ? machine_part(command, machine)
                   : find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    a.group = option_given(options, "--group")
            ? option_number(options, "--group") : gpu->per_node;
    if (machine == NULL && a.group > gpu->per_node) {
        complain(command, "--group %s spans more than the %s GPUs NVLink joins "
                 "in one node", grouped(a.group).s, grouped(gpu->per_node).s);
        return 2;
    }
    if (fmod(a.n, a.group) != 0) {
        complain(command, "--group %s does not divide the %s ranks into whole "
                 "groups", grouped(a.group).s, grouped(a.n).s);
        return 2;
    }
    double efficiency = option_number(options, "--link-efficiency");
    a.part = gpu->name;
    a.inside = gpu_link(gpu, LINK_NVLINK, efficiency);
    a.across = gpu_link(gpu, LINK_NIC, efficiency);
    if (machine != NULL) {
        double latency, delay = 0, throttle = 0;
        if (machine_figure(command, "--machine", machine, "p2p_latency_s",
                           &latency) != 0)
            return 2;
        if (option_given(options, "--delay-us"))
            delay = option_number(options, "--delay-us") * 1e-6;
        if (option_given(options, "--throttle-gbs"))
            throttle = option_number(options, "--throttle-gbs") * 1e9;
        a.part = "this machine's cores";
        a.inside.name = "point-to-point";
        a.inside.latency = latency;
        a.across.name = slowed ? "slowed point-to-point" : "point-to-point";
        a.across.latency = latency + delay;
        if (throttle > 0)
            a.across.bandwidth = 1 / (1 / a.across.bandwidth + 1 / throttle);
    }
    derive_allreduce(&a);

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_allreduce(&r, &a);
        print_report(out.file, &r, options);
    } else {
        print_allreduce(out.file, &a);
    }
    return output_commit(&out, command);
}
