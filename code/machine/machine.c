/* Tangled from chapters/92-measuring.nw; edit the chapter, not this file. */
#define _GNU_SOURCE                  /* sched_getaffinity, CPU_COUNT */
#include <mpi.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../minigpt/minigpt.h"

typedef struct { double median, low, high; } Measured;

static Measured figure_of(double *repeats, int n)
{
    double median = median_in_place(repeats, n);          /* sorts them */
    return (Measured){ median, repeats[0], repeats[n - 1] };
}
static double gemm_rate(GemmWorkspace *w, int M, int N, int K, const real *A,
                        const real *B, real *C, double seconds)
{
    double started = seconds_now(), elapsed;
    long runs = 0;
    do {
        gemm(w, M, N, K, A, K, 0, B, N, 0, C, N, 0);
        runs++;
        elapsed = seconds_now() - started;
    } while (elapsed < seconds);
    return 2.0 * M * N * K * (double)runs / elapsed;
}

static double copy_rate(char *to, char *from, size_t bytes, double seconds)
{
    double started = seconds_now(), elapsed;
    long copies = 0;
    do {
        memcpy(to, from, bytes);
        from[(size_t)copies % bytes] ^= 1;
        copies++;
        elapsed = seconds_now() - started;
    } while (elapsed < seconds);
    return (double)bytes * (double)copies / elapsed;
}
static double one_way_seconds(int rank, char *buffer, int bytes, long trips)
{
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_Barrier(world);
    double started = MPI_Wtime();
    for (long i = 0; i < trips && rank < 2; i++)
        if (rank == 0) {
            MPI_Send(buffer, bytes, MPI_BYTE, 1, 0, world);
            MPI_Recv(buffer, bytes, MPI_BYTE, 1, 0, world, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buffer, bytes, MPI_BYTE, 0, 0, world, MPI_STATUS_IGNORE);
            MPI_Send(buffer, bytes, MPI_BYTE, 0, 0, world);
        }
    double t = (MPI_Wtime() - started) / (2.0 * (double)trips);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, world);
    return t;
}

/* Round trips enough to take about `seconds`: doubled until they do. This is
   also the warm-up of the ping-pong. */
static long trips_for(int rank, char *buffer, int bytes, double seconds)
{
    long trips = 1;
    while (2.0 * (double)trips * one_way_seconds(rank, buffer, bytes, trips)
               < seconds && trips < (1L << 30))
        trips *= 2;
    return trips;
}
static int ranks_pinned(int rank, int n)
{
    cpu_set_t set;
    int mine = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                mine = c;
    int *cores = malloc(sizeof(int) * (size_t)n), pinned = 1;
    if (cores == NULL)
        abort();
    MPI_Gather(&mine, 1, MPI_INT, cores, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < n; i++) {
            pinned &= cores[i] >= 0;
            for (int j = 0; j < i; j++)
                pinned &= cores[i] != cores[j];
        }
    MPI_Bcast(&pinned, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(cores);
    return pinned;
}
typedef struct {
    char cpu[128];
    int cores, ranks, pinned, repeats;
    double seconds;
    int gemm_m, gemm_n, gemm_k;
    double copy_bytes, latency_bytes, bandwidth_bytes;
    Measured peak, gemm_flops, copy, touch, latency, bandwidth;
} Machine;

static void json_figure(FILE *f, const char *key, Measured x)
{
    fprintf(f, "  \"%s\": %.17g,\n", key, x.median);
    fprintf(f, "  \"%s_spread\": [%.17g, %.17g],\n", key, x.low, x.high);
    fprintf(f, "  \"%s_low\": %.17g,\n", key, x.low);
    fprintf(f, "  \"%s_high\": %.17g,\n", key, x.high);
}

static void machine_json(FILE *f, const Machine *m)
{
    fprintf(f, "{\n  \"cpu\": \"");
    for (const char *c = m->cpu; *c; c++)          /* a JSON string */
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if ((unsigned char)*c >= 0x20)
            fputc(*c, f);
    fprintf(f, "\",\n  \"cores\": %d,\n  \"ranks\": %d,\n", m->cores, m->ranks);
    fprintf(f, "  \"pinned\": %s,\n", m->pinned ? "true" : "false");
    fprintf(f, "  \"repeats\": %d,\n  \"seconds_per_repeat\": %.17g,\n",
            m->repeats, m->seconds);
    json_figure(f, "peak_flops_per_core", m->peak);
    fprintf(f, "  \"gemm_m\": %d,\n  \"gemm_n\": %d,\n  \"gemm_k\": %d,\n",
            m->gemm_m, m->gemm_n, m->gemm_k);
    json_figure(f, "gemm_flops_per_core", m->gemm_flops);
    fprintf(f, "  \"memcpy_bytes\": %.17g,\n", m->copy_bytes);
    json_figure(f, "memcpy_bytes_per_second", m->copy);
    json_figure(f, "first_touch_bytes_per_second", m->touch);
    fprintf(f, "  \"p2p_latency_bytes\": %.17g,\n", m->latency_bytes);
    json_figure(f, "p2p_latency_s", m->latency);
    fprintf(f, "  \"p2p_bytes\": %.17g,\n", m->bandwidth_bytes);
    json_figure(f, "p2p_bytes_per_second", m->bandwidth);
    fprintf(f, "  \"complete\": true\n}\n");
}
static void macro(FILE *f, const char *prefix, const char *name,
                  const char *value)
{
    fprintf(f, "\\newcommand{\\%s%s}{%s}\n", prefix, name, value);
}

static void macro_sci(FILE *f, const char *prefix, const char *name, double x)
{
    Text t = sci(x, 3);
    char *e = strchr(t.s, 'e'), value[96];
    if (e == NULL)
        snprintf(value, sizeof value, "%s", t.s);
    else {
        *e = '\0';
        snprintf(value, sizeof value, "\\ensuremath{%s\\times10^{%s}}", t.s,
                 e + 1);
    }
    macro(f, prefix, name, value);
}

/* Three significant figures, trailing zeros kept: 2.00 x 10^11, so that the
   two ends of a spread read to the same precision. */
static void macro_sci3(FILE *f, const char *prefix, const char *name, double x)
{
    char digits[32], value[96];
    snprintf(digits, sizeof digits, "%.2e", x);
    char *e = strchr(digits, 'e');
    *e = '\0';
    snprintf(value, sizeof value, "\\ensuremath{%s\\times10^{%d}}", digits,
             atoi(e + 1));
    macro(f, prefix, name, value);
}

/* A figure in the unit `unit`, three significant figures, with its spread. */
static void macro_figure(FILE *f, const char *prefix, const char *name,
                         Measured x, double unit, int scientific)
{
    char low[64], high[64];
    snprintf(low, sizeof low, "%sLow", name);
    snprintf(high, sizeof high, "%sHigh", name);
    if (scientific) {
        macro_sci(f, prefix, name, x.median / unit);
        macro_sci3(f, prefix, low, x.low / unit);
        macro_sci3(f, prefix, high, x.high / unit);
    } else {
        macro(f, prefix, name, sig(x.median / unit, 3).s);
        macro(f, prefix, low, sig(x.low / unit, 3).s);
        macro(f, prefix, high, sig(x.high / unit, 3).s);
    }
}

static void machine_latex(FILE *f, const Machine *m, const char *prefix)
{
    char text[160];
    int o = 0;
    for (const char *c = m->cpu; *c && o < (int)sizeof text - 3; c++) {
        if (strchr("&%$#_{}", *c))
            text[o++] = '\\';
        text[o++] = *c;
    }
    text[o] = '\0';
    macro(f, prefix, "Cpu", text);
    macro(f, prefix, "Cores", grouped(m->cores).s);
    macro(f, prefix, "Ranks", grouped(m->ranks).s);
    macro(f, prefix, "Pinned", m->pinned ? "yes" : "no");
    macro(f, prefix, "PinnedSentence", m->pinned
          ? "each rank ran on its own core."
          : "the ranks were \\emph{not} pinned, and the point-to-point "
            "figures were measured with the two ranks free to share "
            "a core.");
    macro(f, prefix, "Repeats", grouped(m->repeats).s);
    macro(f, prefix, "SecondsPerRepeat", sig(m->seconds, 3).s);
    macro(f, prefix, "TimePerRepeat", duration(m->seconds).s);
    macro_figure(f, prefix, "PeakFlops", m->peak, 1, 1);
    macro_figure(f, prefix, "PeakGflops", m->peak, 1e9, 0);
    snprintf(text, sizeof text, "$%d\\times%d\\times%d$", m->gemm_m,
             m->gemm_n, m->gemm_k);
    macro(f, prefix, "GemmShape", text);
    macro_figure(f, prefix, "GemmFlops", m->gemm_flops, 1, 1);
    macro_figure(f, prefix, "GemmGflops", m->gemm_flops, 1e9, 0);
    snprintf(text, sizeof text, "%s\\,\\%%",
             sig(100 * m->gemm_flops.median / m->peak.median, 3).s);
    macro(f, prefix, "GemmShare", text);
    snprintf(text, sizeof text, "%s\\,MiB", grouped(m->copy_bytes / 1048576).s);
    macro(f, prefix, "MemcpyBuffer", text);
    macro_figure(f, prefix, "MemcpyGBs", m->copy, 1e9, 0);
    macro_figure(f, prefix, "FirstTouchGBs", m->touch, 1e9, 0);
    macro(f, prefix, "LatencyBytes", grouped(m->latency_bytes).s);
    macro_figure(f, prefix, "LatencyUs", m->latency, 1e-6, 0);
    snprintf(text, sizeof text, "%s\\,MiB",
             grouped(m->bandwidth_bytes / 1048576).s);
    macro(f, prefix, "BandwidthBuffer", text);
    macro_figure(f, prefix, "BandwidthGBs", m->bandwidth, 1e9, 0);
}
static void machine_table(FILE *f, const Machine *m)
{
    fprintf(f, "machine: %s, %s; %s, %s\n", m->cpu,
            counted(m->cores, "core", "cores").s,
            counted(m->ranks, "rank", "ranks").s,
            m->pinned ? "each pinned to its own core" : "NOT pinned");
    fprintf(f, "%s of about %s each after a warm-up;\n"
            "the median, then the slowest and fastest\n\n",
            counted(m->repeats, "repeat", "repeats").s,
            duration(m->seconds).s);
    fprintf(f, "%-32s %11s %11s %11s\n", "", "median", "low", "high");
    const struct { const char *what; Measured x; double unit; } rows[] = {
        { "peak, one core (GFLOP/s)", m->peak, 1e9 },
        { "gemm, one core (GFLOP/s)", m->gemm_flops, 1e9 },
        { "memcpy, one core (GB/s)", m->copy, 1e9 },
        { "first touch, one core (GB/s)", m->touch, 1e9 },
        { "p2p latency (us)", m->latency, 1e-6 },
        { "p2p bandwidth (GB/s)", m->bandwidth, 1e9 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%-32s %11s %11s %11s\n", rows[i].what,
                sig(rows[i].x.median / rows[i].unit, 3).s,
                sig(rows[i].x.low / rows[i].unit, 3).s,
                sig(rows[i].x.high / rows[i].unit, 3).s);
    fprintf(f, "\ngemm %d×%d×%d; memcpy of %s MiB; latency of %s-byte and "
            "bandwidth of %s MiB messages\n", m->gemm_m, m->gemm_n, m->gemm_k,
            grouped(m->copy_bytes / 1048576).s, grouped(m->latency_bytes).s,
            grouped(m->bandwidth_bytes / 1048576).s);
}
static int write_figures(const Machine *m, Option *o)
{
    const char *command = "machine";
    Output out;
    if (output_open_path(&out, command, "--transcript",
                         option_text(o, "--transcript")) != 0)
        return 2;
    machine_table(out.file, m);
    if (output_commit(&out, command) != 0)
        return 2;
    if (option_given(o, "--latex")) {
        if (output_open_path(&out, command, "--latex-output",
                             option_text(o, "--latex-output")) != 0)
            return 2;
        machine_latex(out.file, m, option_text(o, "--latex"));
        if (output_commit(&out, command) != 0)
            return 2;
    }
    if (option_given(o, "--output")) {
        if (output_open(&out, command, o) != 0)
            return 2;
        machine_json(out.file, m);
        if (output_commit(&out, command) != 0)
            return 2;
    }
    return 0;
}
static int measure_machine(int rank, int n, Option *o)
{
    const char *command = "machine";
    const char *prefix = option_text(o, "--latex");
    int status = 2, saved = streams_silence(rank == 0);
    if (n < 2)
        complain(command, "needs at least 2 ranks for the point-to-point "
                 "figures (run it as mpiexec -n 2 machine); got %d", n);
    else if ((prefix == NULL) != !option_given(o, "--latex-output"))
        complain(command, "--latex and --latex-output go together");
    else if (prefix != NULL && strspn(prefix, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "abcdefghijklmnopqrstuvwxyz")
                               != strlen(prefix))
        complain(command, "--latex: a macro prefix is letters only; got "
                 "\"%s\"", prefix);
    else
        status = rank != 0 ? 0
               : check_writable(command, "--output", option_text(o, "--output"))
               | check_writable(command, "--latex-output",
                                option_text(o, "--latex-output"))
               | check_writable(command, "--transcript",
                                option_text(o, "--transcript"));
    streams_restore(saved);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0)
        return 2;
    Machine m = {
        .cores = (int)sysconf(_SC_NPROCESSORS_ONLN), .ranks = n,
        .repeats = (int)option_number(o, "--repeats"),
        .seconds = option_number(o, "--seconds"),
        .gemm_m = (int)option_number(o, "--gemm-m"),
        .gemm_n = (int)option_number(o, "--gemm-n"),
        .gemm_k = (int)option_number(o, "--gemm-k"),
        .copy_bytes = option_number(o, "--memcpy-bytes"),
        .latency_bytes = option_number(o, "--latency-bytes"),
        .bandwidth_bytes = option_number(o, "--bandwidth-bytes"),
    };
    cpu_name(m.cpu, sizeof m.cpu);
    m.pinned = ranks_pinned(rank, n);
    double *x = malloc(sizeof(double) * (size_t)m.repeats);
    if (x == NULL)
        abort();
    if (rank == 0) {
        measure_peak_flops(m.seconds);                                /* warm-up */
        for (int i = 0; i < m.repeats; i++)
            x[i] = measure_peak_flops(m.seconds);
        m.peak = figure_of(x, m.repeats);

        size_t a_size = (size_t)m.gemm_m * m.gemm_k, b_size = (size_t)m.gemm_k * m.gemm_n;
        real *A = malloc(sizeof(real) * a_size), *B = malloc(sizeof(real) * b_size);
        real *C = malloc(sizeof(real) * (size_t)m.gemm_m * m.gemm_n);
        GemmWorkspace w;
        gemm_workspace_init(&w);
        if (!A || !B || !C || !w.a || !w.b)
            abort();
        for (size_t i = 0; i < a_size; i++) A[i] = (real)((i % 13) - 6) / 8;
        for (size_t i = 0; i < b_size; i++) B[i] = (real)((i % 11) - 5) / 8;
        gemm_rate(&w, m.gemm_m, m.gemm_n, m.gemm_k, A, B, C, m.seconds);
        for (int i = 0; i < m.repeats; i++)
            x[i] = gemm_rate(&w, m.gemm_m, m.gemm_n, m.gemm_k, A, B, C, m.seconds);
        m.gemm_flops = figure_of(x, m.repeats);
        gemm_workspace_free(&w);
        free(A); free(B); free(C);

        size_t bytes = (size_t)m.copy_bytes;
        char *from = malloc(bytes), *to = malloc(bytes);
        if (!from || !to)
            abort();
        memset(from, 1, bytes);
        memset(to, 2, bytes);                           /* touch every page first */
        copy_rate(to, from, bytes, m.seconds);
        for (int i = 0; i < m.repeats; i++)
            x[i] = copy_rate(to, from, bytes, m.seconds);
        m.copy = figure_of(x, m.repeats);
        free(from); free(to);
        first_touch_rate(bytes);                                      /* warm-up */
        for (int i = 0; i < m.repeats; i++)
            x[i] = first_touch_rate(bytes);
        m.touch = figure_of(x, m.repeats);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char *buffer = calloc((size_t)m.bandwidth_bytes > (size_t)m.latency_bytes
                          ? (size_t)m.bandwidth_bytes : (size_t)m.latency_bytes, 1);
    if (buffer == NULL)
        abort();
    int sizes[2] = { (int)m.latency_bytes, (int)m.bandwidth_bytes };
    for (int kind = 0; kind < 2; kind++) {
        long trips = trips_for(rank, buffer, sizes[kind], m.seconds);
        for (int i = 0; i < m.repeats; i++) {
            double t = one_way_seconds(rank, buffer, sizes[kind], trips);
            x[i] = kind == 0 ? t : sizes[kind] / t;
        }
        if (kind == 0)
            m.latency = figure_of(x, m.repeats);
        else
            m.bandwidth = figure_of(x, m.repeats);
    }
    free(buffer);
    free(x);
    if (rank == 0)
        status = write_figures(&m, o);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}
int main(int argc, char **argv)
{
    const char *command = "machine";
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    Option options[] = {
        { "--repeats", OPT_COUNT, 1001, "timed repeats of each measurement "
          "(odd numbers have a middle one)", 7, NULL, 0 },
        { "--seconds", OPT_NUMBER, 60, "seconds each repeat runs for", 0.1,
          NULL, 0 },
        { "--gemm-m", OPT_COUNT, 8192, "rows M of the timed product", 512,
          NULL, 0 },
        { "--gemm-n", OPT_COUNT, 8192, "columns N of the timed product", 256,
          NULL, 0 },
        { "--gemm-k", OPT_COUNT, 8192, "inner dimension K of the product", 64,
          NULL, 0 },
        { "--memcpy-bytes", OPT_COUNT, 1e9, "size of the copied buffer",
          67108864, NULL, 0 },
        { "--latency-bytes", OPT_COUNT, 65536, "size of the ping-pong message "
          "for latency", 8, NULL, 0 },
        { "--bandwidth-bytes", OPT_COUNT, 1e9, "size of the ping-pong message "
          "for bandwidth", 16777216, NULL, 0 },
        { "--output", OPT_OUTPUT, 0, "write the figures as JSON to this file "
          "(atomically)", 0, NULL, 0 },
        { "--latex", OPT_NAME, 0, "also write LaTeX macros \\<PREFIX><Field> "
          "(needs --latex-output)", 0, NULL, 0 },
        { "--latex-output", OPT_OUTPUT, 0, "the file for the --latex macros",
          0, NULL, 0 },
        { "--transcript", OPT_OUTPUT, 0, "write the readable table here, not "
          "to standard output", 0, NULL, 0 },
        { "--help", OPT_SWITCH, 0, "print this help and exit", 0, NULL, 0 },
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options_as(rank == 0, command, "Measure this machine "
                                  "once: one core's peak, GEMM and memcpy "
                                  "rates, and point-to-point latency and "
                                  "bandwidth between two MPI ranks.", options,
                                  argc - 1, argv + 1);
    if (status == 1)                         /* --help was printed */
        status = 0;
    else if (status == 0)
        status = measure_machine(rank, n, options);
    MPI_Finalize();
    return status;
}
