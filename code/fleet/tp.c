/* Tangled from chapters/03-step.nw and chapters/91-planner-subcommands.nw; edit the chapters, not this file. */
#include <stdio.h>
#include <string.h>

#include "fleet.h"

/* nccl-tests' busbw: algbw × 2(n-1)/n for an all-reduce. */
static double bus_bandwidth(const TpBlock *b)
{
    return b->buffer / b->all_reduce_seconds * ring_steps(ALL_REDUCE, b->tp)
         / b->tp;
}

static void derive_tp_block(TpBlock *b)
{
    double h = b->hidden;
    b->tokens = b->micro_batch * b->seq;
    b->buffer = b->bytes_per_element * b->tokens * h;          /* (b, s, h) */
    b->bytes_per_block = 4 * collective_bytes_sent(ALL_REDUCE, b->buffer, b->tp,
                                                   b->in_network);
    b->all_reduce_seconds = collective_seconds_in_network(ALL_REDUCE, b->buffer,
                                                          b->tp, &b->link,
                                                          b->in_network);
    b->comm_seconds_per_block = 4 * b->all_reduce_seconds;
    b->flops_per_block = (72 * b->tokens * h * h
                          + 12 * b->tokens * b->seq * h) / b->tp;
    b->compute_seconds_per_block =
        b->flops_per_block / (b->gpu->peak_flops * b->mfu);
}
static void print_tp_block(FILE *out, const TpBlock *b)
{
    double t = b->tp, L = b->layers;
    fprintf(out, "fleet tp: TP%s on %s (%s/s each way), %s, %s %% MFU\n"
            "  micro-batch %s × %s = %s, hidden %s, %s\n\n",
            grouped(t).s, b->link.name, bytes_auto(b->link.bandwidth).s,
            b->gpu->name, sig(100 * b->mfu, 3).s, grouped(b->micro_batch).s,
            grouped(b->seq).s, counted(b->tokens, "token", "tokens").s,
            grouped(b->hidden).s, counted(L, "layer", "layers").s);
    fprintf(out, "per block: 4 all-reduces of %s B × %s × %s = %s each,\n"
            "  %s\n", sig(b->bytes_per_element, 3).s, grouped(b->tokens).s,
            grouped(b->hidden).s, bytes_auto(b->buffer).s,
            b->in_network ? "reduced in the switches: sent once"
                               : "2(t-1)/t of each sent around the ring");
    fprintf(out, "  sent     = %s per GPU (%s elements)\n",
            bytes_auto(b->bytes_per_block).s,
            sci(b->bytes_per_block / b->bytes_per_element, 3).s);
    fprintf(out, "  comm     = 4 × %s = %s\n"
            "             (algbw %s/s, busbw %s/s)\n",
            duration(b->all_reduce_seconds).s,
            duration(b->comm_seconds_per_block).s,
            bytes_auto(b->buffer / b->all_reduce_seconds).s,
            bytes_auto(bus_bandwidth(b)).s);
    fprintf(out, "  compute  = (72 × %s × %s² + 12 × %s × %s × %s) ÷ %s\n"
            "           = %s FLOPs ÷ (%s FLOP/s × %s %%) = %s\n",
            grouped(b->tokens).s, grouped(b->hidden).s, grouped(b->tokens).s,
            grouped(b->seq).s, grouped(b->hidden).s, grouped(t).s,
            sci(b->flops_per_block, 3).s, eng(b->gpu->peak_flops).s,
            sig(100 * b->mfu, 3).s, duration(b->compute_seconds_per_block).s);
    fprintf(out, "  comm ÷ compute = %s\n\n",
            sig(b->comm_seconds_per_block / b->compute_seconds_per_block, 3).s);
    fprintf(out, "per micro-batch, %s: %s sent (%s elements),\n"
            "  %s on the link against %s of compute\n",
            counted(L, "layer", "layers").s,
            bytes_auto(L * b->bytes_per_block).s,
            sci(L * b->bytes_per_block / b->bytes_per_element, 3).s,
            duration(L * b->comm_seconds_per_block).s,
            duration(L * b->compute_seconds_per_block).s);
}
static void report_tp_block(Report *r, const TpBlock *b)
{
    report_add(r, "hidden", FIELD_COUNT, b->hidden);
    report_add(r, "seq", FIELD_COUNT, b->seq);
    report_add(r, "micro_batch", FIELD_COUNT, b->micro_batch);
    report_add(r, "tokens", FIELD_COUNT, b->tokens);
    report_add(r, "tp", FIELD_COUNT, b->tp);
    report_add(r, "layers", FIELD_COUNT, b->layers);
    report_text(r, "link", b->link.name);
    report_add(r, "link_bandwidth", FIELD_BYTES, b->link.bandwidth);
    report_add(r, "bytes_per_element", FIELD_REAL, b->bytes_per_element);
    report_add(r, "all_reduce_bytes", FIELD_BYTES, b->buffer);
    report_add(r, "all_reduce_seconds", FIELD_REAL, b->all_reduce_seconds);
    report_add(r, "algbw", FIELD_BYTES, b->buffer / b->all_reduce_seconds);
    report_add(r, "busbw", FIELD_BYTES, bus_bandwidth(b));
    report_add(r, "bytes_per_block", FIELD_BYTES, b->bytes_per_block);
    report_add(r, "elements_per_block", FIELD_SCI,
               b->bytes_per_block / b->bytes_per_element);
    report_add(r, "comm_seconds_per_block", FIELD_REAL,
               b->comm_seconds_per_block);
    report_add(r, "flops_per_block", FIELD_SCI, b->flops_per_block);
    report_add(r, "compute_seconds_per_block", FIELD_REAL,
               b->compute_seconds_per_block);
    report_add(r, "comm_compute_ratio", FIELD_REAL,
               b->comm_seconds_per_block / b->compute_seconds_per_block);
    report_add(r, "bytes_per_micro_batch", FIELD_BYTES,
               b->layers * b->bytes_per_block);
    report_add(r, "elements_per_micro_batch", FIELD_SCI,
               b->layers * b->bytes_per_block / b->bytes_per_element);
    report_add(r, "comm_seconds_per_micro_batch", FIELD_REAL,
               b->layers * b->comm_seconds_per_block);
    report_add(r, "bandwidth_seconds_per_micro_batch", FIELD_REAL,
               b->layers * b->bytes_per_block / b->link.bandwidth);
    report_add(r, "compute_seconds_per_micro_batch", FIELD_REAL,
               b->layers * b->compute_seconds_per_block);
}
int tp_main(int argc, char **argv)
{
    const char *command = "fleet tp";
    Option options[] = {
        { "--hidden", OPT_COUNT, 1e7, "hidden size h", 12288, NULL, 0 },
        { "--seq", OPT_COUNT, 1e8, "sequence length s", 4096, NULL, 0 },
        { "--micro-batch", OPT_COUNT, 1e6, "sequences per micro-batch b",
          4, NULL, 0 },
        { "--tp", OPT_COUNT, 1e4, "tensor-parallel degree t", 8, NULL, 0 },
        { "--link", OPT_NAME, 0, "the link the group spans: nvlink or nic",
          0, "nvlink", 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or mi300x",
          0, "h100", 0 },
        { "--machine", OPT_PATH, 0, "plan for this machine instead of --gpu: "
          "each rank one core, joined by the measured point-to-point link "
          "(build/machine.json)", 0, NULL, 0 },
        { "--mfu", OPT_NUMBER, 1, "model FLOPs utilisation", 0.4, NULL, 0 },
        { "--layers", OPT_COUNT, 1e5, "layers, for the micro-batch's totals",
          55, NULL, 0 },
        { "--bytes-per-element", OPT_NUMBER, 8,
          "bytes of each activation sent (2: bf16)", 2, NULL, 0 },
        { "--link-efficiency", OPT_NUMBER, 1,
          "fraction of the link's line rate a collective reaches", 1, NULL, 0 },
        { "--in-network", OPT_SWITCH, 0,
          "all-reduce in the switches (NVLS, SHARP) where the part has them",
          0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "A tensor-parallel block's all-reduces against its compute, on the "
        "link they cross.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    const char *machine = option_text(options, "--machine");
    if (machine != NULL && (option_given(options, "--gpu")
                            || option_given(options, "--link")
                            || option_given(options, "--in-network"))) {
        complain(command, "--machine plans for this machine's cores and their "
                 "link; give it without --gpu, --link or --in-network");
        return 2;
    }
    const Gpu *gpu = machine != NULL
                   ? machine_part(command, machine)
                   : find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    const char *name = option_text(options, "--link");
    LinkKind kind = LINK_NVLINK;
    if (strcmp(name, "nic") == 0)
        kind = LINK_NIC;
    else if (strcmp(name, "nvlink") != 0) {
        complain(command, "--link must be nvlink or nic; got \"%s\"", name);
        return 2;
    }
    double tp = option_number(options, "--tp");
    if (tp < 2) {
        complain(command, "--tp 1 all-reduces nothing; give a degree of 2 or "
                 "more");
        return 2;
    }
    if (machine != NULL && tp > gpu->per_node) {
        complain(command, "--tp %s is more ranks than this machine's %s cores, "
                 "which --machine plans one rank to each", grouped(tp).s,
                 grouped(gpu->per_node).s);
        return 2;
    }
    if (kind == LINK_NVLINK && tp > gpu->per_node) {
        complain(command, "--tp %s spans more than the %s GPUs NVLink joins in "
                 "one node; give --link nic", grouped(tp).s,
                 grouped(gpu->per_node).s);
        return 2;
    }
    TpBlock b = {
        .hidden = option_number(options, "--hidden"),
        .seq = option_number(options, "--seq"),
        .micro_batch = option_number(options, "--micro-batch"),
        .tp = tp, .layers = option_number(options, "--layers"),
        .bytes_per_element = option_number(options, "--bytes-per-element"),
        .gpu = gpu, .mfu = option_number(options, "--mfu"),
        .link = gpu_link(gpu, kind, option_number(options, "--link-efficiency")),
        .in_network = option_given(options, "--in-network")
                      && link_reduces(gpu, kind),
    };
    if (machine != NULL) {
        double latency;
        if (machine_figure(command, "--machine", machine, "p2p_latency_s",
                           &latency) != 0)
            return 2;
        b.link.name = "point-to-point";
        b.link.latency = latency;
    }
    derive_tp_block(&b);

    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_tp_block(&r, &b);
        print_report(out.file, &r, options);
    } else {
        print_tp_block(out.file, &b);
    }
    return output_commit(&out, command);
}
