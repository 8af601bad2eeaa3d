/* Tangled from chapters/03-step.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fleet.h"

static LinkKind spanned_link(const Step *s, double span)
{
    return span <= s->gpu->per_node ? LINK_NVLINK : LINK_NIC;
}

static void time_traffic(Traffic *t, const Step *s)
{
    Link l = gpu_link(s->gpu, t->link, s->efficiency);
    t->seconds = t->bytes / l.bandwidth + t->messages * l.latency;
}

static int adds_in_network(const Step *s, LinkKind k)
{
    return s->in_network && link_reduces(s->gpu, k);
}

void derive_step(Step *s)
{
    s->steps = ceil_count(s->tokens / s->batch_tokens);
    s->tokens_per_replica = s->batch_tokens / s->dp;
    s->micro_batches = s->tokens_per_replica / s->micro_batch_tokens;
    s->flops_per_gpu = 6 * s->params * s->batch_tokens / s->gpus;
    s->compute_seconds = s->flops_per_gpu / (s->gpu->peak_flops * s->mfu);

    double m = s->micro_batches, k = s->micro_batch_tokens;
    double layers = s->layers / s->pp;             /* on one stage */
    Traffic *tp = &s->traffic[0], *pp = &s->traffic[1], *dp = &s->traffic[2];
    /* TP: four all-reduces of the activations per layer per micro-batch. */
    *tp = (Traffic){ "TP", spanned_link(s, s->tp), 0, 0, 0 };
    int tp_adds = adds_in_network(s, tp->link);
    double activations = 2 * k * s->hidden;            /* 16-bit (b, s, h) */
    tp->bytes = 4 * collective_bytes_sent(ALL_REDUCE, activations, s->tp,
                                          tp_adds) * layers * m;
    tp->messages = 4 * collective_steps(ALL_REDUCE, s->tp, tp_adds) * layers * m;
    /* PP: each GPU of a stage sends 1/t of the activation forward and of its
       gradient back, per micro-batch (Megatron-LM's scatter and gather). */
    *pp = (Traffic){ "PP", spanned_link(s, s->tp * s->pp), 0, 0, 0 };
    if (s->pp > 1) {
        pp->bytes = 2 * m * 2 * k * s->hidden / s->tp;
        pp->messages = 2 * m;
    }
    /* DP: one collective per layer and kind, as FSDP wraps a model. */
    *dp = (Traffic){ "DP", spanned_link(s, s->gpus), 0, 0, 0 };
    int dp_adds = adds_in_network(s, dp->link);
    double shard = s->params / (s->tp * s->pp);        /* parameters per GPU */
    dp->bytes = data_parallel_bytes(s->zero, 2 * shard, s->dp, m, dp_adds);
    dp->messages = data_parallel_messages(s->zero, layers, s->dp, m, dp_adds);
    for (int i = 0; i < 2; i++)
        s->link_bytes[i] = s->link_seconds[i] = s->link_latency_seconds[i] = 0;
    for (int a = 0; a < 3; a++) {
        Traffic *t = &s->traffic[a];
        time_traffic(t, s);
        s->link_bytes[t->link] += t->bytes;
        s->link_seconds[t->link] += t->seconds;
        s->link_latency_seconds[t->link] +=
            t->messages * link_latency(t->link);
    }
}
static void print_parts(FILE *out, int csv)
{
    if (csv)
        fprintf(out, "key,name,memory_bytes,peak_flops,memory_bandwidth,"
                     "per_node,nvlink_bandwidth,nic_bandwidth,pcie_bandwidth\n");
    else
        fprintf(out, "%-7s %6s %7s %6s %5s %7s %5s %5s\n", "part", "memory",
                "bf16", "HBM", "node", "NVLink", "NIC", "PCIe");
    for (const Gpu *g = first_gpu(); g != NULL; g = next_gpu(g)) {
        if (csv)
            fprintf(out, "%s,%s,%.17g,%.17g,%.17g,%g,%.17g,%.17g,%.17g\n",
                    g->key, g->name, g->memory_bytes, g->peak_flops,
                    g->memory_bandwidth, g->per_node, g->nvlink_bandwidth,
                    g->nic_bandwidth, g->pcie_bandwidth);
        else
            fprintf(out, "%-7s %6s %7s %6s %5g %7s %5s %5s\n", g->key,
                    sig(g->memory_bytes / 1e9, 3).s,
                    grouped(g->peak_flops / 1e12).s,
                    sig(g->memory_bandwidth / 1e12, 3).s, g->per_node,
                    grouped(g->nvlink_bandwidth / 1e9).s,
                    grouped(g->nic_bandwidth / 1e9).s,
                    grouped(g->pcie_bandwidth / 1e9).s);
    }
    if (!csv)
        fprintf(out, "\nmemory GB; bf16 dense TFLOP/s; HBM TB/s; GPUs per node;"
                "\nNVLink, NIC and PCIe GB/s per GPU, each way, line rate\n"
                "latency per message: NVLink %s us, NIC %s us, PCIe %s us\n",
                sig(link_latency(LINK_NVLINK) * 1e6, 2).s,
                sig(link_latency(LINK_NIC) * 1e6, 2).s,
                sig(link_latency(LINK_PCIE) * 1e6, 2).s);
}
static void print_step(FILE *out, const Step *s)
{
    const char *stage[] = { "plain DP", "ZeRO-1", "ZeRO-2", "ZeRO-3/FSDP" };
    fprintf(out, "fleet step: %s parameters, %s tokens, %s (%s)\n"
            "  layout TP%s × PP%s × DP%s (%s), %s, hidden %s\n\n",
            eng(s->params).s, eng(s->tokens).s,
            counted(s->gpus, "GPU", "GPUs").s, s->gpu->name,
            grouped(s->tp).s, grouped(s->pp).s, grouped(s->dp).s,
            stage[s->zero], counted(s->layers, "layer", "layers").s,
            grouped(s->hidden).s);
    fprintf(out, "tokens per step   = %s (the global batch)\n",
            grouped(s->batch_tokens).s);
    fprintf(out, "steps             = %s ÷ %s → %s\n", eng(s->tokens).s,
            grouped(s->batch_tokens).s, grouped(s->steps).s);
    fprintf(out, "per replica       = %s ÷ %s = %s\n",
            grouped(s->batch_tokens).s, grouped(s->dp).s,
            counted(s->tokens_per_replica, "token", "tokens").s);
    fprintf(out, "micro-batches     = %s ÷ %s = %s of %s\n",
            grouped(s->tokens_per_replica).s,
            grouped(s->micro_batch_tokens).s, grouped(s->micro_batches).s,
            counted(s->micro_batch_tokens, "token", "tokens").s);
    fprintf(out, "compute per GPU   = 6 × %s × %s ÷ %s = %s FLOPs\n",
            eng(s->params).s, grouped(s->batch_tokens).s, grouped(s->gpus).s,
            sci(s->flops_per_gpu, 3).s);
    fprintf(out, "                  ÷ (%s FLOP/s × %s %%) = %s per step\n",
            eng(s->gpu->peak_flops).s, sig(100 * s->mfu, 3).s,
            duration(s->compute_seconds).s);
    for (int k = 0; k < 2; k++) {
        Link l = gpu_link(s->gpu, (LinkKind)k, s->efficiency);
        fprintf(out, "\non %s (%s/s each way at %s %% of line rate%s):\n",
                l.name, bytes_auto(l.bandwidth).s, sig(100 * s->efficiency, 3).s,
                adds_in_network(s, (LinkKind)k) ? ", reducing in the switches"
                                                : "");
        int any = 0;
        for (int a = 0; a < 3; a++) {
            const Traffic *t = &s->traffic[a];
            if (t->link != (LinkKind)k || t->bytes == 0)
                continue;
            any = 1;
            fprintf(out, "  %-2s sends %s per GPU: %s (latency %s)\n",
                    t->axis, bytes_auto(t->bytes).s, duration(t->seconds).s,
                    duration(t->messages * l.latency).s);
        }
        if (!any)
            fprintf(out, "  nothing crosses it\n");
        else
            fprintf(out, "  comm ÷ compute = %s ÷ %s = %s\n",
                    duration(s->link_seconds[k]).s,
                    duration(s->compute_seconds).s,
                    sig(s->link_seconds[k] / s->compute_seconds, 3).s);
    }
}
static void report_step(Report *r, const Step *s)
{
    static const char *const keys[3][3] = {
        { "tp_link", "tp_bytes_per_step", "tp_seconds_per_step" },
        { "pp_link", "pp_bytes_per_step", "pp_seconds_per_step" },
        { "dp_link", "dp_bytes_per_step", "dp_seconds_per_step" },
    };
    report_add(r, "params", FIELD_ENG, s->params);
    report_add(r, "tokens", FIELD_ENG, s->tokens);
    report_text(r, "gpu", s->gpu->name);
    report_add(r, "gpus", FIELD_COUNT, s->gpus);
    report_add(r, "tp", FIELD_COUNT, s->tp);
    report_add(r, "pp", FIELD_COUNT, s->pp);
    report_add(r, "dp", FIELD_COUNT, s->dp);
    report_add(r, "zero_stage", FIELD_COUNT, s->zero);
    report_add(r, "layers", FIELD_COUNT, s->layers);
    report_add(r, "hidden", FIELD_COUNT, s->hidden);
    report_add(r, "mfu", FIELD_FRACTION, s->mfu);
    report_add(r, "params_per_gpu", FIELD_ENG, s->params / (s->tp * s->pp));
    report_add(r, "weight_bytes_per_gpu", FIELD_BYTES,
               2 * s->params / (s->tp * s->pp));
    report_add(r, "hbm_bandwidth", FIELD_BYTES, s->gpu->memory_bandwidth);
    report_add(r, "nvlink_line_rate", FIELD_BYTES, s->gpu->nvlink_bandwidth);
    report_add(r, "nvlink_both_ways", FIELD_BYTES, 2 * s->gpu->nvlink_bandwidth);
    report_add(r, "nic_line_rate", FIELD_BYTES, s->gpu->nic_bandwidth);
    report_add(r, "nic_gbps", FIELD_COUNT, s->gpu->nic_bandwidth * 8 / 1e9);
    report_add(r, "nic_both_ways", FIELD_BYTES, 2 * s->gpu->nic_bandwidth);
    report_add(r, "pcie_line_rate", FIELD_BYTES, s->gpu->pcie_bandwidth);
    report_add(r, "nvlink_latency_us", FIELD_REAL,
               link_latency(LINK_NVLINK) * 1e6);
    report_add(r, "nic_latency_us", FIELD_REAL, link_latency(LINK_NIC) * 1e6);
    report_add(r, "pcie_latency_us", FIELD_REAL, link_latency(LINK_PCIE) * 1e6);
    report_add(r, "link_efficiency", FIELD_FRACTION, s->efficiency);
    report_add(r, "tokens_per_step", FIELD_COUNT, s->batch_tokens);
    report_add(r, "steps", FIELD_COUNT, s->steps);
    report_add(r, "tokens_per_replica", FIELD_COUNT, s->tokens_per_replica);
    report_add(r, "tokens_per_micro_batch", FIELD_COUNT, s->micro_batch_tokens);
    report_add(r, "micro_batches_per_replica", FIELD_COUNT, s->micro_batches);
    report_add(r, "flops_per_gpu_per_step", FIELD_SCI, s->flops_per_gpu);
    report_add(r, "compute_seconds_per_step", FIELD_REAL, s->compute_seconds);
    for (int a = 0; a < 3; a++) {
        const Traffic *t = &s->traffic[a];
        report_text(r, keys[a][0], t->link == LINK_NVLINK ? "nvlink" : "nic");
        report_add(r, keys[a][1], FIELD_BYTES, t->bytes);
        report_add(r, keys[a][2], FIELD_REAL, t->seconds);
    }
    static const char *const links[2][5] = {
        { "nvlink_bytes_per_step", "nvlink_seconds_per_step",
          "nvlink_latency_seconds", "nvlink_ratio", "nvlink_bandwidth_ratio" },
        { "nic_bytes_per_step", "nic_seconds_per_step",
          "nic_latency_seconds", "nic_ratio", "nic_bandwidth_ratio" },
    };
    for (int k = 0; k < 2; k++) {
        double bandwidth_only = s->link_seconds[k] - s->link_latency_seconds[k];
        report_add(r, links[k][0], FIELD_BYTES, s->link_bytes[k]);
        report_add(r, links[k][1], FIELD_REAL, s->link_seconds[k]);
        report_add(r, links[k][2], FIELD_REAL, s->link_latency_seconds[k]);
        report_add(r, links[k][3], FIELD_REAL,
                   s->link_seconds[k] / s->compute_seconds);
        report_add(r, links[k][4], FIELD_REAL,
                   bandwidth_only / s->compute_seconds);
    }
}
int step_main(int argc, char **argv)
{
    const char *command = "fleet step";
    Option options[] = {
        { "--params", OPT_NUMBER, 1e15, "parameters N", 100e9, NULL, 0 },
        { "--tokens", OPT_NUMBER, 1e17, "training tokens D", 2e12, NULL, 0 },
        { "--batch-tokens", OPT_COUNT, 1e10,
          "global batch B in tokens per step", 2097152, NULL, 0 },
        { "--gpus", OPT_COUNT, 1e7, "GPUs in the fleet", 1024, NULL, 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or mi300x",
          0, "h100", 0 },
        { "--mfu", OPT_NUMBER, 1, "model FLOPs utilisation", 0.4, NULL, 0 },
        { "--tp", OPT_COUNT, 1e4, "tensor-parallel degree", 1, NULL, 0 },
        { "--pp", OPT_COUNT, 1e4, "pipeline stages", 1, NULL, 0 },
        { "--dp", OPT_COUNT, 1e7,
          "data-parallel replicas (default: gpus ÷ (tp × pp))", 0, NULL, 0 },
        { "--zero", OPT_NAME, 0, "ZeRO stage of the data-parallel axis: "
          "0, 1, 2 or 3 (FSDP)", 0, "0", 0 },
        { "--micro-batch-tokens", OPT_COUNT, 1e10,
          "tokens per micro-batch (default: all of a replica's)", 0, NULL, 0 },
        { "--hidden", OPT_COUNT, 1e7, "hidden size h", 12288, NULL, 0 },
        { "--layers", OPT_COUNT, 1e5,
          "layers L (default: N ÷ 12h², rounded)", 0, NULL, 0 },
        { "--link-efficiency", OPT_NUMBER, 1,
          "fraction of each link's line rate a collective reaches", 1, NULL, 0 },
        { "--nic-gbps", OPT_NUMBER, 1e5,
          "NIC line rate per GPU in Gbps (default: the part's)", 0, NULL, 0 },
        { "--in-network", OPT_SWITCH, 0,
          "all-reduce in the switches (NVLS, SHARP) where the part has them",
          0, NULL, 0 },
        { "--parts", OPT_SWITCH, 0,
          "print the parts and their links (text or --csv) and exit",
          0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "The batch, the steps, the compute per step and the bytes per step "
        "on each link.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    const Gpu *gpu = find_gpu(command, option_text(options, "--gpu"));
    int zero = parse_zero_stage(command, option_text(options, "--zero"));
    if (gpu == NULL || zero < 0)
        return 2;
    double gpus = option_number(options, "--gpus");
    double tp = option_number(options, "--tp"), pp = option_number(options, "--pp");
    double dp = option_given(options, "--dp") ? option_number(options, "--dp")
                                              : gpus / (tp * pp);
    if (dp != floor(dp) || tp * pp * dp != gpus) {
        complain(command, "--tp %s × --pp %s × --dp %s must equal --gpus %s",
                 grouped(tp).s, grouped(pp).s, sig(dp, 4).s, grouped(gpus).s);
        return 2;
    }
    double batch = option_number(options, "--batch-tokens");
    if (fmod(batch, dp) != 0) {
        complain(command, "--batch-tokens %s does not divide over %s replicas",
                 grouped(batch).s, grouped(dp).s);
        return 2;
    }
    double micro = option_given(options, "--micro-batch-tokens")
                 ? option_number(options, "--micro-batch-tokens") : batch / dp;
    if (fmod(batch / dp, micro) != 0) {
        complain(command, "--micro-batch-tokens %s does not divide a replica's "
                 "%s tokens", grouped(micro).s, grouped(batch / dp).s);
        return 2;
    }
    int csv = option_given(options, "--csv");
    if (option_given(options, "--parts")
        && (option_given(options, "--json") || option_given(options, "--latex"))) {
        complain(command, "--parts prints text or --csv; it takes no --json or "
                 "--latex");
        return 2;
    }
    Gpu part = *gpu;                        /* the part, with --nic-gbps if given */
    if (option_given(options, "--nic-gbps"))
        part.nic_bandwidth = option_number(options, "--nic-gbps") * 1e9 / 8;
    double params = option_number(options, "--params");
    double hidden = option_number(options, "--hidden");
    Step s = {
        .params = params, .tokens = option_number(options, "--tokens"),
        .batch_tokens = batch, .gpus = gpus, .gpu = &part,
        .mfu = option_number(options, "--mfu"),
        .tp = tp, .pp = pp, .dp = dp, .zero = zero, .micro_batch_tokens = micro,
        .hidden = hidden,
        .layers = option_given(options, "--layers")
                ? option_number(options, "--layers")
                : fmax(1, round(params / (12 * hidden * hidden))),
        .efficiency = option_number(options, "--link-efficiency"),
        .in_network = option_given(options, "--in-network"),
    };
    derive_step(&s);

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (option_given(options, "--parts")) {
        print_parts(out.file, csv);
    } else if (report_requested(options)) {
        Report r = { .count = 0 };
        report_step(&r, &s);
        print_report(out.file, &r, options);
    } else {
        print_step(out.file, &s);
    }
    return output_commit(&out, command);
}
