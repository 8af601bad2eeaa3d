/* Tangled from chapters/99gp-precision-plumbing.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "../minigpt/number_formats.h"

static const char *const format_names[NUMBER_FORMATS] = {
    "fp32", "bf16", "fp16", "e4m3", "e5m2"
};

static void add_number(Report *r, const char *key, float x, char *text,
                       size_t size)
{
    if (isfinite(x)) {
        report_add(r, key, FIELD_REAL, x);
        return;
    }
    snprintf(text, size, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    report_text(r, key, text);
}

static void print_values(FILE *out, const float *numbers, int count,
                         Option *options)
{
    int json = option_given(options, "--json");
    int csv = option_given(options, "--csv");
    static char text[NUMBER_FORMATS * 4][16];  /* bits and non-finite */
    char keys[NUMBER_FORMATS * 3][32];
    if (json)
        json_list_begin(out, "values");
    for (int i = 0; i < count; i++) {
        float x = numbers[i];
        Report r = { .count = 0 };
        add_number(&r, "x", x, text[0], sizeof text[0]);
        if (!json && !csv && !report_requested(options))
            fprintf(out, "%s%.9g\n  %-6s %-16s %-12s %s\n", i ? "\n" : "",
                    x, "format", "nearest", "bits", "relative error");
        for (int f = FORMAT_BF16; f < NUMBER_FORMATS; f++) {
            float near = round_to_format(x, (NumberFormat)f);
            double error = x == 0 || !isfinite(x) ? 0
                         : fabs((double)near - x) / fabs((double)x);
            char *bits = text[4 * f + 1], *value = text[4 * f + 2];
            snprintf(bits, sizeof text[0], "0x%0*x", f <= FORMAT_FP16 ? 4 : 2,
                     (unsigned)format_bits_of(x, (NumberFormat)f));
            snprintf(keys[3 * f], sizeof keys[0], "%s.nearest",
                     format_names[f]);
            snprintf(keys[3 * f + 1], sizeof keys[0], "%s.bits",
                     format_names[f]);
            snprintf(keys[3 * f + 2], sizeof keys[0], "%s.relative_error",
                     format_names[f]);
            add_number(&r, keys[3 * f], near, value, sizeof text[0]);
            report_text(&r, keys[3 * f + 1], bits);
            add_number(&r, keys[3 * f + 2], isfinite(near) ? (float)error
                       : near, text[4 * f + 3], sizeof text[0]);
            if (!json && !csv && !report_requested(options))
                fprintf(out, "  %-6s %-16.9g %-12s %.2g\n", format_names[f],
                        near, bits, error);
        }
        if (json)
            json_list_item(out, &r, i);
        else if (csv)
            print_csv_row(out, &r, i == 0);
        else if (report_requested(options))
            print_report(out, &r, options);
    }
    if (json)
        json_list_end(out);
}
static void print_tensor(FILE *out, const float *numbers, int count,
                         NumberFormat f, Option *options)
{
    int json = option_given(options, "--json");
    int csv = option_given(options, "--csv");
    int plain = !json && !csv && !report_requested(options);
    float amax = 0;
    for (int i = 0; i < count; i++)
        amax = fmaxf(amax, fabsf(numbers[i]));
    float scale = option_given(options, "--scale")
                ? (float)option_number(options, "--scale")
                : format_tensor_scale(amax, f);
    static char text[3][16];                     /* non-finite values */
    if (plain)
        fprintf(out, "%s tensor of %d: largest magnitude %.9g, scale %.9g"
                "\n  %-16s %-16s %-16s %s\n", f == FORMAT_E4M3 ? "e4m3"
                : "e5m2", count, amax, scale, "x", "scaled, rounded",
                "held", "relative error");
    if (json)
        json_list_begin(out, "values");
    for (int i = 0; i < count; i++) {
        float x = numbers[i];
        float scaled = format_round_scaled(x, scale, f);
        float held = scaled / scale;
        float error = x == 0 || !isfinite(x) ? 0
                    : (float)(fabs((double)held - x) / fabs((double)x));
        Report r = { .count = 0 };
        report_add(&r, "amax", FIELD_REAL, amax);
        report_add(&r, "scale", FIELD_REAL, scale);
        add_number(&r, "x", x, text[0], sizeof text[0]);
        add_number(&r, "scaled", scaled, text[1], sizeof text[1]);
        add_number(&r, "held", held, text[2], sizeof text[2]);
        report_add(&r, "relative_error", FIELD_REAL, error);
        if (plain)
            fprintf(out, "  %-16.9g %-16.9g %-16.9g %.2g\n", x, scaled,
                    held, error);
        else if (json)
            json_list_item(out, &r, i);
        else if (csv)
            print_csv_row(out, &r, i == 0);
        else
            print_report(out, &r, options);
    }
    if (json)
        json_list_end(out);
}
static void print_ranges(FILE *out, Option *options)
{
    Report r = { .count = 0 };
    char keys[NUMBER_FORMATS * 9][48];
    static const char *const fields[9] = {
        "bits", "exponent_bits", "mantissa_bits", "significant_bits",
        "largest", "smallest_normal", "smallest_subnormal",
        "smallest_subnormal_exponent", "unit_roundoff"
    };
    int json = option_given(options, "--json");
    if (!report_requested(options))
        fprintf(out, "%-6s %2s %2s %2s  %-12s %-10s %-10s %s\n", "format",
                "E", "M", "p", "largest", "smallest", "smallest",
                "unit roundoff");
    if (!report_requested(options))
        fprintf(out, "%-15s  %-12s %-10s %-10s %s\n", "", "finite",
                "normal", "subnormal", "u = 2^-p");
    if (json)
        json_list_begin(out, "formats");
    for (int f = 0; f < NUMBER_FORMATS; f++) {
        NumberFormat nf = (NumberFormat)f;
        FormatBits b = format_bits(nf);
        int p = b.mantissa_bits + 1;
        double value[9] = {
            1 + b.exponent_bits + b.mantissa_bits, b.exponent_bits,
            b.mantissa_bits, p, format_largest(nf),
            format_smallest_normal(nf), format_smallest_subnormal(nf),
            1 - b.bias - b.mantissa_bits, format_unit_roundoff(nf)
        };
        if (json)
            r.count = 0;
        if (json)
            report_text(&r, "format", format_names[f]);
        for (int k = 0; k < 9; k++) {
            char *key = keys[9 * f + k];
            snprintf(key, sizeof keys[0], json ? "%s" : "%s.%s",
                     json ? fields[k] : format_names[f], fields[k]);
            report_add(&r, key, k < 4 || k == 7 || (k == 4 && value[k] < 1e6)
                                ? FIELD_COUNT : FIELD_SCI, value[k]);
        }
        if (json)
            json_list_item(out, &r, f);
        else if (!report_requested(options))
            fprintf(out, "%-6s %2d %2d %2d  %-12.6g %-10.4g 2^%-8d "
                    "%.3g\n", format_names[f], b.exponent_bits,
                    b.mantissa_bits, p, value[4], value[5], (int)value[7],
                    value[8]);
    }
    if (json)
        json_list_end(out);
    else if (report_requested(options))
        print_report(out, &r, options);
}

/* The tool itself; main gives it FLAGS and NUMBERS, room for every word
   of the command line, and frees them whichever way it returns. */
static int round_or_print(int argc, char **argv, char **flags,
                          float *numbers)
{
    const char *command = "formats";
    Option options[] = {
        { "--ranges", OPT_SWITCH, 0, "print each format's largest finite, "
          "smallest normal and smallest subnormal number, unit roundoff and "
          "bits", 0, NULL, 0 },
        { "--tensor", OPT_NAME, 0, "e4m3 or e5m2: round the numbers as "
          "one tensor with its own scale, as minigpt --precision fp8 "
          "does", 0, NULL, 0 },
        { "--scale", OPT_NUMBER, 1e38, "with --tensor: this scale instead "
          "of the tensor's own (a stale scale saturates)", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int nflags = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strncmp(argv[i], "--", 2) == 0) {
            flags[nflags++] = argv[i];
            if ((strcmp(argv[i], "--output") == 0
                 || strcmp(argv[i], "--latex") == 0
                 || strcmp(argv[i], "--tensor") == 0
                 || strcmp(argv[i], "--scale") == 0) && i + 1 < argc)
                flags[nflags++] = argv[++i];
            continue;
        }
        numbers[count++] = strtof(argv[i], &end);
        if (end == argv[i] || *end != '\0') {
            complain(command, "not a number: \"%s\" (flags start with "
                     "--)", argv[i]);
            return 2;
        }
    }
    int status = parse_options(command, "Round numbers to bf16, fp16, "
                               "E4M3 and E5M2 (formats X [X ...]), or print "
                               "the formats' ranges (--ranges).", options,
                               nflags, flags);
    if (status != 0)
        return status == 1 ? 0 : status;
    int ranges = option_given(options, "--ranges");
    const char *tensor = option_text(options, "--tensor");
    NumberFormat eight = tensor == NULL ? FORMAT_FP32
                       : strcmp(tensor, "e4m3") == 0 ? FORMAT_E4M3
                       : strcmp(tensor, "e5m2") == 0 ? FORMAT_E5M2
                       : FORMAT_FP32;
    if (ranges == (count > 0)) {
        complain(command, ranges ? "--ranges takes no numbers"
                                 : "give numbers to round, or --ranges");
        return 2;
    }
    if ((tensor != NULL && eight == FORMAT_FP32)
        || (tensor == NULL && option_given(options, "--scale"))
        || (tensor != NULL && ranges)) {
        complain(command, tensor == NULL ? "--scale is for --tensor"
                 : ranges ? "--tensor takes numbers, not --ranges"
                 : "--tensor: e4m3 or e5m2, not \"%s\"", tensor);
        return 2;
    }
    Output out;
    if (output_open(&out, command, options) != 0)
        return 2;
    if (ranges)
        print_ranges(out.file, options);
    else if (tensor != NULL)
        print_tensor(out.file, numbers, count, eight, options);
    else
        print_values(out.file, numbers, count, options);
    return output_commit(&out, command);
}

int main(int argc, char **argv)
{
    char **flags = malloc(sizeof(char *) * (size_t)(argc + 1));
    float *numbers = malloc(sizeof(float) * (size_t)(argc + 1));
    int status = flags != NULL && numbers != NULL
               ? round_or_print(argc, argv, flags, numbers) : 2;
    free(flags);
    free(numbers);
    return status;
}
