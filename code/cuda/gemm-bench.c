/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <stdio.h>
#include <string.h>

#include "../fleet/fleet.h"
#include "gpu.h"

int gpu_tp_block_seconds(int tokens, int hidden, int t,
                         GpuPrecision inputs, int repeats, double *median,
                         double *flops);

/* The part of Part I's table whose name's first word ("H200") the
   driver's name ("NVIDIA H200") contains, or NULL. */
static const Gpu *part_of(const char *device)
{
    for (const Gpu *g = first_gpu(); g != NULL; g = next_gpu(g)) {
        char word[32];
        size_t n = strcspn(g->name, " ");
        if (n >= sizeof word)
            continue;
        memcpy(word, g->name, n);
        word[n] = '\0';
        if (strstr(device, word) != NULL)
            return g;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *command = "gpu-gemm-bench";
    Option options[] = {
        { "--hidden", OPT_COUNT, 65536, "hidden size h (default: 4096, then "
          "8192)", 4096, NULL, 0 },
        { "--tokens", OPT_COUNT, 65536, "tokens b·s in the micro-batch", 4096,
          NULL, 0 },
        { "--repeats", OPT_COUNT, 1000, "timed steps, after two warm-up "
          "steps; the median is reported", 10, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command, "Time one tensor-parallel rank's "
                               "GEMMs of a block's forward and backward "
                               "step, in fp32 and bf16, on the GPU.",
                               options, argc - 1, argv + 1);
    if (status != 0)
        return status == 1 ? 0 : 2;
    if (option_given(options, "--latex")) {
        complain(command, "--latex: no macros here; use --csv or --json");
        return 2;
    }
    int tokens = (int)option_number(options, "--tokens");
    int repeats = (int)option_number(options, "--repeats");
    int hiddens[2] = { 4096, 8192 }, count = 2;
    if (option_given(options, "--hidden")) {
        hiddens[0] = (int)option_number(options, "--hidden");
        count = 1;
    }
    for (int i = 0; i < count; i++)
        if (hiddens[i] % (8 * 4) != 0) {     /* 4h/t and h/t whole */
            complain(command, "--hidden %d: must be a multiple of 32",
                     hiddens[i]);
            return 2;
        }
    char why[512];
    if (gpu_open(0, why, sizeof why) != 0) {
        complain(command, "%s", why);
        return 2;
    }
    const Gpu *part = part_of(gpu_name());
    double peak = part != NULL ? part->peak_flops : 0;
    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    int csv = option_given(options, "--csv");
    int json = option_given(options, "--json");
    if (json)
        json_list_begin(out.file, "steps");
    else if (!csv)
        fprintf(out.file, "%s (%s): one TP rank's 12 GEMMs of a block's "
                "step, %d tokens, median of %d\n%6s %3s %-5s %12s %10s "
                "%9s %8s %10s\n", gpu_name(), part != NULL
                ? "dense bf16 peak from Part I's table"
                : "not in Part I's table: no peak", tokens, repeats,
                "hidden", "t", "type", "FLOPs", "seconds", "TFLOP/s",
                "of peak", "shard eff.");
    int rows = 0;
    for (int i = 0; i < count && status == 0; i++)
        for (int p = 0; p < 2 && status == 0; p++) {
            GpuPrecision inputs = p == 0 ? GPU_FP32 : GPU_BF16;
            double whole = 0;                    /* t = 1's seconds */
            for (int t = 1; t <= 8 && status == 0; t *= 2) {
                double seconds = 0, flops = 0;
                if (gpu_tp_block_seconds(tokens, hiddens[i], t, inputs,
                                         repeats, &seconds, &flops) != 0
                    || gpu_status(why, sizeof why) != 0) {
                    complain(command, "h = %d, t = %d: %s", hiddens[i], t,
                             gpu_status(why, sizeof why) != 0 ? why
                             : "cannot allocate the operands");
                    status = 2;
                    break;
                }
                if (t == 1)
                    whole = seconds;
                double rate = flops / seconds;
                Report r = { .count = 0 };
                report_text(&r, "device", gpu_name());
                report_add(&r, "hidden", FIELD_COUNT, hiddens[i]);
                report_add(&r, "tokens", FIELD_COUNT, tokens);
                report_add(&r, "tp", FIELD_COUNT, t);
                report_text(&r, "precision", p == 0 ? "fp32" : "bf16");
                report_add(&r, "flops", FIELD_SCI, flops);
                report_add(&r, "seconds", FIELD_SCI, seconds);
                report_add(&r, "flops_per_second", FIELD_SCI, rate);
                report_add(&r, "bf16_peak", FIELD_SCI, peak);
                report_add(&r, "peak_fraction", FIELD_REAL,
                           peak > 0 ? rate / peak : 0);
                report_add(&r, "shard_efficiency", FIELD_REAL,
                           whole / (t * seconds));
                if (csv)
                    print_csv_row(out.file, &r, rows == 0);
                else if (json)
                    json_list_item(out.file, &r, rows);
                else
                    fprintf(out.file, "%6d %3d %-5s %12.3e %10.3e %9.1f "
                            "%8.3f %10.3f\n", hiddens[i], t,
                            p == 0 ? "fp32" : "bf16", flops, seconds,
                            rate / 1e12, peak > 0 ? rate / peak : 0,
                            whole / (t * seconds));
                rows++;
            }
        }
    if (json)
        json_list_end(out.file);
    gpu_close();
    if (status != 0)
        return status;
    return output_commit(&out, command) != 0 ? 2 : 0;
}
