/* Tangled from chapters/07-data-parallel.nw, chapters/11d-hierarchical.nw, chapters/14b-moe-arith.nw, chapters/95-parallel-plumbing.nw, chapters/99d-hierarchical.nw and chapters/99k-experts-plumbing.nw; edit the chapters, not this file. */
#define _GNU_SOURCE    /* sched_getaffinity, CPU_COUNT, MAP_ANONYMOUS */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/cli.h"
#include "mesh.h"
#include "ring.h"

/* The sum over all ranks of buf (count floats), in place: reduce-scatter
   inside the group, all-reduce each rank's chunk across the groups, then
   all-gather inside. `inside` holds this rank's group of G ranks; `across`
   the ranks at the same place of every group. scratch: count / G + 1
   floats, or count / n + 1 when G is 1. */
static int hierarchical_allreduce(float *buf, size_t count, float *scratch,
                                  MPI_Comm inside, MPI_Comm across)
{
    int place, group;
    MPI_Comm_rank(inside, &place);
    MPI_Comm_size(inside, &group);
    int size[MAX_RANKS], offset[MAX_RANKS];     /* the group's chunks */
    ring_chunks(count, group, size, offset);
    int status = ring_reduce_scatter(buf, count, scratch, inside);
    float *mine = buf + offset[place];   /* (size[place]): the group's sum */
    if (status == MPI_SUCCESS)
        status = ring_allreduce(mine, (size_t)size[place], scratch, across);
    return status != MPI_SUCCESS ? status
         : ring_all_gather(buf, count, inside);
}
/* Every rank sends block d of `send` (n blocks of `block` floats) to rank
   d, and receives into block s of `received` what rank s sent it: its
   own block is copied, and the other n - 1 are exchanged in n - 1 steps,
   at step k with the rank k places ahead (sending) and the rank k places
   behind (receiving). */
static int pairwise_alltoall(const float *send, float *received,
                             size_t block, MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    memcpy(received + (size_t)rank * block, send + (size_t)rank * block,
           block * sizeof(float));
    for (int k = 1; k < n; k++) {
        int to = (rank + k) % n, from = (rank - k + n) % n;
        int status = MPI_Sendrecv(send + (size_t)to * block, (int)block,
                                  MPI_FLOAT, to, 0,
                                  received + (size_t)from * block,
                                  (int)block, MPI_FLOAT, from, 0, comm,
                                  MPI_STATUS_IGNORE);
        if (status != MPI_SUCCESS)
            return status;
    }
    return MPI_SUCCESS;
}
typedef enum { ALLREDUCE, REDUCESCATTER, ALLGATHER, ALLTOALL,
               OPERATIONS } Operation;
typedef enum { RING, LIBRARY, HIERARCHICAL, IMPLEMENTATIONS } Implementation;

static const char *const operation_names[OPERATIONS] = {
    "allreduce", "reduce_scatter", "all_gather", "alltoall"
};
static const char *const impl_names[IMPLEMENTATIONS] = {
    "ring", "mpi", "hierarchical"
};

/* The fraction of the buffer each rank sends, which turns algorithm
   bandwidth into bus bandwidth. */
static double bus_factor(Operation op, int n)
{
    return op == ALLREDUCE ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
}

typedef struct {
    float *buf, *scratch;
    float *result;             /* MPI's reduce-scatter writes here      */
    int *size, *offset;        /* the ring's chunks, for the v variants */
    MPI_Comm comm;
    int rank, n;
    MPI_Comm inside, across;   /* the hierarchy's groups, where it runs */
    float *received;           /* the all-to-all's blocks, where it runs */
} Buffers;

static int run_collective(Operation op, Implementation impl, Buffers *b,
                          size_t count)
{
    if (op == ALLTOALL) {             /* count: n blocks of count / n floats */
        size_t block = count / (size_t)b->n;
        return impl == RING
             ? pairwise_alltoall(b->buf, b->received, block, b->comm)
             : MPI_Alltoall(b->buf, (int)block, MPI_FLOAT, b->received,
                            (int)block, MPI_FLOAT, b->comm);
    }
    if (impl == RING)
        return op == ALLREDUCE
                 ? ring_allreduce(b->buf, count, b->scratch, b->comm)
             : op == REDUCESCATTER
                 ? ring_reduce_scatter(b->buf, count, b->scratch, b->comm)
                 : ring_all_gather(b->buf, count, b->comm);
    if (impl == HIERARCHICAL)                    /* an all-reduce */
        return hierarchical_allreduce(b->buf, count, b->scratch, b->inside,
                                      b->across);
    ring_chunks(count, b->n, b->size, b->offset);
    if (op == ALLREDUCE)
        return MPI_Allreduce(MPI_IN_PLACE, b->buf, (int)count, MPI_FLOAT,
                             MPI_SUM, b->comm);
    if (op == REDUCESCATTER)
        return MPI_Reduce_scatter(b->buf, b->result, b->size, MPI_FLOAT,
                                  MPI_SUM, b->comm);
    return MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, b->buf, b->size,
                          b->offset, MPI_FLOAT, b->comm);
}
static const char *impl_name(Operation op, Implementation impl)
{
    return op == ALLTOALL && impl == RING ? "pairwise" : impl_names[impl];
}

/* The all-to-all's size rounded down to whole blocks, one of floats per
   rank (0: fewer floats than ranks); the others' sizes as they are. */
static size_t whole_blocks(Operation op, size_t bytes, int n)
{
    size_t blocks = sizeof(float) * (size_t)n;
    return op == ALLTOALL ? bytes / blocks * blocks : bytes;
}

/* Element j of the block rank `from` sends to rank `to`: a whole number
   below 2^24, so exact in float32, and distinct for every pair of ranks
   up to 512 ranks. */
static float block_value(int from, int to, int n, size_t j)
{
    size_t pair = (size_t)from * (size_t)n + (size_t)to;
    return (float)((pair * 64 + j % 64) % 16777216);
}

static void fill_alltoall(Buffers *b, size_t count)
{
    size_t block = count / (size_t)b->n;
    for (int to = 0; to < b->n; to++)
        for (size_t j = 0; j < block; j++) {
            b->buf[(size_t)to * block + j] = block_value(b->rank, to, b->n, j);
            b->received[(size_t)to * block + j] = -1.0f;   /* not yet */
        }
}

/* Elements of the received blocks that are not what their sender sent
   this rank, and the largest difference of any. */
static long alltoall_wrong(const Buffers *b, size_t count, double *largest)
{
    size_t block = count / (size_t)b->n;
    long wrong = 0;
    for (int from = 0; from < b->n; from++)
        for (size_t j = 0; j < block; j++) {
            float got = b->received[(size_t)from * block + j];
            float want = block_value(from, b->rank, b->n, j);
            wrong += got != want;
            *largest = fmax(*largest, fabs((double)got - want));
        }
    return wrong;
}
/* What element i of the result must be, for this operation. */
static float expected(Operation op, size_t i, int owner, int n)
{
    if (op == ALLGATHER)
        return (float)((owner + i) % 17);
    double sum = 0;
    for (int r = 0; r < n; r++)
        sum += (double)((r + i) % 17);
    return (float)sum;
}

static void fill(Operation op, Buffers *b, size_t count)
{
    if (op == ALLTOALL) {
        fill_alltoall(b, count);
        return;
    }
    ring_chunks(count, b->n, b->size, b->offset);
    for (size_t i = 0; i < count; i++)
        b->buf[i] = (float)((b->rank + i) % 17);
    if (op == ALLGATHER)             /* only the rank's own chunk counts */
        for (size_t i = 0; i < count; i++)
            if (i < (size_t)b->offset[b->rank]
                || i >= (size_t)(b->offset[b->rank] + b->size[b->rank]))
                b->buf[i] = -1.0f;
}

/* Elements that differ from the exact result, counted on this rank, and
   the largest difference of any. */
static long count_wrong(Operation op, Implementation impl, const Buffers *b,
                        size_t count, double *largest)
{
    if (op == ALLTOALL)
        return alltoall_wrong(b, count, largest);
    size_t begin = 0, end = count;
    const float *result = b->buf;
    if (op == REDUCESCATTER) {    /* only the rank's own chunk is defined */
        begin = (size_t)b->offset[b->rank];
        end = begin + (size_t)b->size[b->rank];
        if (impl == LIBRARY)
            result = b->result;       /* element i is result[i - begin] */
    }
    long wrong = 0;
    int owner = 0;
    for (size_t i = begin; i < end; i++) {
        while (owner + 1 < b->n && (size_t)b->offset[owner + 1] <= i)
            owner++;
        float got = result == b->buf ? b->buf[i] : b->result[i - begin];
        float want = expected(op, i, owner, b->n);
        if (got != want)
            wrong++;
        *largest = fmax(*largest, fabs((double)got - want));
    }
    return wrong;
}
typedef struct {
    Operation op;
    Implementation impl;
    size_t bytes;
    double seconds;            /* per call: the median batch's            */
    double algbw, busbw;       /* GB/s, from the median                   */
    long wrong;                /* over all ranks                          */
    double fastest, slowest;   /* per call: the fastest and slowest batch */
    int repeats;               /* batches timed                           */
    double faults;             /* page faults per call, the most of a rank */
    double largest_difference; /* |result - exact|, the most of a rank   */
} Row;

/* Minor page faults of this process so far: pages the kernel had to map. */
static double page_faults(void)
{
    struct rusage use;
    getrusage(RUSAGE_SELF, &use);
    return (double)use.ru_minflt;
}

static Row measure(Operation op, Implementation impl, Buffers *b,
                   size_t bytes, int warmup, int repeats, double target)
{
    enum { MOST_REPEATS = 1000 };
    size_t count = bytes / sizeof(float);
    Row row = { op, impl, bytes, 0, 0, 0, 0, 0, 0, repeats, 0, 0 };
    fill(op, b, count);
    run_collective(op, impl, b, count);
    double largest = 0;
    long wrong = count_wrong(op, impl, b, count, &largest);
    MPI_Allreduce(&wrong, &row.wrong, 1, MPI_LONG, MPI_SUM, b->comm);
    MPI_Allreduce(&largest, &row.largest_difference, 1, MPI_DOUBLE, MPI_MAX,
                  b->comm);
    if (repeats == 0)                     /* --check: checked, not timed */
        return row;
    for (int i = 0; i < warmup; i++)
        run_collective(op, impl, b, count);
    MPI_Barrier(b->comm);
    double t0 = MPI_Wtime();
    run_collective(op, impl, b, count);
    double trial = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&trial, &slowest, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    int calls = (int)fmin(fmax(target / fmax(slowest, 1e-9), 1), 10000);
    MPI_Bcast(&calls, 1, MPI_INT, 0, b->comm);
    double batch[MOST_REPEATS], faults = page_faults();
    for (int k = 0; k < repeats; k++) {
        MPI_Barrier(b->comm);
        t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++)
            run_collective(op, impl, b, count);
        double mine = (MPI_Wtime() - t0) / calls;
        MPI_Allreduce(&mine, &batch[k], 1, MPI_DOUBLE, MPI_MAX, b->comm);
    }
    faults = (page_faults() - faults) / ((double)calls * repeats);
    MPI_Allreduce(&faults, &row.faults, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    row.seconds = median_in_place(batch, repeats);          /* sorts them */
    row.fastest = batch[0];
    row.slowest = batch[repeats - 1];
    row.algbw = (double)bytes / row.seconds / 1e9;
    row.busbw = row.algbw * bus_factor(op, b->n);
    return row;
}
/* The best of repeated copies, as STREAM reports: a copy disturbed by
   something else on the machine says nothing about the memory. */
static double memcpy_bandwidth(size_t bytes)
{
    char *from = malloc(bytes), *to = malloc(bytes);
    if (from == NULL || to == NULL)
        abort();
    memset(from, 1, bytes);
    memset(to, 2, bytes);                 /* touch every page first */
    double best = 1e30, started = MPI_Wtime();
    for (int copies = 0; copies < 5 || MPI_Wtime() - started < 0.5; copies++) {
        double t0 = MPI_Wtime();
        memcpy(to, from, bytes);
        best = fmin(best, MPI_Wtime() - t0);
        from[copies % bytes] ^= 1;        /* keep the copies distinct */
    }
    free(from);
    free(to);
    return (double)bytes / best / 1e9;
}

/* The best of three first touches of fresh pages, in GB/s. */
static double first_touch_bandwidth(size_t bytes)
{
    double best = 0;
    for (int k = 0; k < 3; k++)
        best = fmax(best, first_touch_rate(bytes));
    return best / 1e9;
}
typedef struct {
    int cores;                 /* online on this host                     */
    int ranks_here;            /* ranks on this host                      */
    int pinned;                /* every rank is bound to a single core    */
} Placement;

static Placement placement(MPI_Comm comm)
{
    Placement p = { (int)sysconf(_SC_NPROCESSORS_ONLN), 1, 0 };
    MPI_Comm host;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &p.ranks_here);
    MPI_Comm_free(&host);
    cpu_set_t set;
    int mine = sched_getaffinity(0, sizeof set, &set) == 0
               && CPU_COUNT(&set) == 1;
    MPI_Allreduce(&mine, &p.pinned, 1, MPI_INT, MPI_MIN, comm);
    int most_here;
    MPI_Allreduce(&p.ranks_here, &most_here, 1, MPI_INT, MPI_MAX, comm);
    p.ranks_here = most_here;
    return p;
}
/* The range of the batches over their median, in per cent (at most 999). */
static double spread(const Row *r)
{
    return fmin(999, 100 * (r->slowest - r->fastest) / r->seconds);
}

/* One implementation's columns of a row: its time, spread, algbw, busbw
   and wrong elements; under --check, dashes for all but the last. */
static void print_timed_columns(FILE *f, const Row *r)
{
    if (r->repeats == 0)
        fprintf(f, " %9s %3s %6s %6s %5ld", "-", "-", "-", "-", r->wrong);
    else
        fprintf(f, " %9.2f %3.0f %6.2f %6.2f %5ld", 1e6 * r->seconds,
                spread(r), r->algbw, r->busbw, r->wrong);
}

typedef struct {
    int n, warmup, repeats;    /* repeats 0: --check, nothing timed */
    Placement where;
    double copy_bw, touch_bw;  /* GB/s */
    int group;                 /* ranks per group; 0: no hierarchy        */
    double delay_us, throttle_gbs;   /* the slow link; 0: not slowed      */
} Setting;

static void print_results(FILE *f, const Row *rows, int count, const Setting *s)
{
    fprintf(f, "# %d %s, float32 %s, on a host of %d %s (%d %s there), "
            "%s\n", s->n, s->n == 1 ? "rank" : "ranks",
            count > 0 && rows[0].op == ALLTOALL ? "blocks" : "sum",
            s->where.cores,
            s->where.cores == 1 ? "core" : "cores", s->where.ranks_here,
            s->where.ranks_here == 1 ? "rank" : "ranks",
            s->where.pinned ? "each pinned to one core" : "not pinned");
    if (s->where.ranks_here > s->where.cores && s->repeats > 0)
        fprintf(f, "# OVERSUBSCRIBED: more ranks than cores; these times "
                "measure the scheduler, not the collective\n");
    if (s->repeats == 0)                                     /* --check */
        fprintf(f, "# checked, not timed (--check): every element of every "
                "result; the time columns read -\n");
    else {
        fprintf(f, "# time: median of %s after %s; "
                "spread: (slowest - fastest) / median\n",
                counted(s->repeats, "timed batch", "timed batches").s,
                counted(s->warmup, "warm-up call", "warm-up calls").s);
        fprintf(f, "# memory copy %s GB/s on one core (memcpy); fresh pages "
                "first touched at %s GB/s\n", sig(s->copy_bw, 3).s,
                sig(s->touch_bw, 3).s);
    }
    if (s->group > 0)
        fprintf(f, "# %s of %s, consecutive; each send between groups "
                "waits %s us, then its bytes at %s%s\n",
                counted(s->n / s->group, "group", "groups").s,
                counted(s->group, "rank", "ranks").s, sig(s->delay_us, 3).s,
                s->throttle_gbs > 0 ? sig(s->throttle_gbs, 3).s : "no limit",
                s->throttle_gbs > 0 ? " GB/s" : "");
    for (int op = 0; op < OPERATIONS; op++) {
        int header = 0;
        for (int i = 0; i < count; i++) {
            if (rows[i].op != (Operation)op || rows[i].impl != RING)
                continue;
            const Row *ring = &rows[i], *mpi = NULL;  /* or the hierarchy */
            for (int j = 0; j < count; j++)
                if (rows[j].op == ring->op && rows[j].impl != RING
                    && rows[j].bytes == ring->bytes)
                    mpi = &rows[j];
            if (!header++)
                fprintf(f, "#\n# %-19s %30s %34s\n#%9s %8s %9s %3s %6s %6s"
                        " %5s %9s %3s %6s %6s %5s\n", operation_names[op],
                        impl_name(ring->op, RING),
                        mpi ? impl_names[mpi->impl] : "mpi", "size(B)",
                        "count", "time(us)", "+-%", "algbw", "busbw", "wrong",
                        "time(us)", "+-%", "algbw", "busbw", "wrong");
            fprintf(f, " %9zu %8zu", ring->bytes, ring->bytes / sizeof(float));
            print_timed_columns(f, ring);
            if (mpi != NULL)
                print_timed_columns(f, mpi);
            fputc('\n', f);
        }
        if (op == ALLTOALL && header > 0)
            {
                double largest = 0;
                for (int i = 0; i < count; i++)
                    if (rows[i].op == ALLTOALL)
                        largest = fmax(largest, rows[i].largest_difference);
                fprintf(f, "# every block checked against what its sender sent: "
                        "largest difference %s\n", sig(largest, 3).s);
            }
    }
}
static void print_rows(FILE *f, const Row *rows, int count, const Setting *s,
                       size_t copy_bytes, int json)
{
    if (json)
        fprintf(f, "[\n");
    else
        fprintf(f, "op,impl,size,count,time_s,algbw,busbw,wrong,"
                "time_min_s,time_max_s,repeats,faults\n");
    for (int i = 0; i <= count + 1; i++) {
        double bw = i == count ? s->touch_bw : s->copy_bw;
        double t = copy_bytes / bw / 1e9;
        Row machine = { OPERATIONS, IMPLEMENTATIONS, copy_bytes, t, bw, bw, 0,
                        t, t, 1, 0, 0 };
        const Row *r = i < count ? &rows[i] : &machine;
        const char *op = i < count ? operation_names[r->op]
                       : i == count ? "first_touch" : "memcpy";
        const char *impl = i < count ? impl_name(r->op, r->impl) : op;
        if (json)
            fprintf(f, "  {\"op\": \"%s\", \"impl\": \"%s\", \"size\": %zu, "
                    "\"count\": %zu, \"time_s\": %.9g, \"algbw\": %.6g, "
                    "\"busbw\": %.6g, \"wrong\": %ld, \"time_min_s\": %.9g, "
                    "\"time_max_s\": %.9g, \"repeats\": %d, \"faults\": %.6g}"
                    "%s\n", op, impl, r->bytes, r->bytes / sizeof(float),
                    r->seconds, r->algbw, r->busbw, r->wrong, r->fastest,
                    r->slowest, r->repeats, r->faults, i <= count ? "," : "");
        else
            fprintf(f, "%s,%s,%zu,%zu,%.9g,%.6g,%.6g,%ld,%.9g,%.9g,%d,%.6g\n",
                    op, impl, r->bytes, r->bytes / sizeof(float), r->seconds,
                    r->algbw, r->busbw, r->wrong, r->fastest, r->slowest,
                    r->repeats, r->faults);
    }
    if (json)
        fprintf(f, "]\n");
}
static const Row *find_row(const Row *rows, int count, Operation op,
                           Implementation impl, size_t bytes)
{
    const Row *found = NULL;
    for (int i = 0; i < count; i++)
        if (rows[i].op == op && rows[i].impl == impl && rows[i].bytes <= bytes)
            found = &rows[i];        /* the largest size not above `bytes` */
    return found;
}

static void report_summary(Report *r, const Row *rows, int count,
                           const Setting *s)
{
    int n = s->n;
    double copy_bw = s->copy_bw;
    size_t mib16 = (size_t)16 << 20, largest = rows[count - 1].bytes;
    const Row *ring16 = find_row(rows, count, ALLREDUCE, RING, mib16);
    const Row *mpi16 = find_row(rows, count, ALLREDUCE, LIBRARY, mib16);
    const Row *ring_big = find_row(rows, count, ALLREDUCE, RING, largest);
    const Row *mpi_big = find_row(rows, count, ALLREDUCE, LIBRARY, largest);
    const Row *ring_small = find_row(rows, count, ALLREDUCE, RING, 8);
    const Row *mpi_small = find_row(rows, count, ALLREDUCE, LIBRARY, 8);
    report_add(r, "ranks", FIELD_COUNT, n);
    report_add(r, "cores", FIELD_COUNT, s->where.cores);
    report_add(r, "ranks_here", FIELD_COUNT, s->where.ranks_here);
    report_add(r, "pinned", FIELD_COUNT, s->where.pinned);
    report_add(r, "repeats", FIELD_COUNT, s->repeats);
    report_add(r, "memcpy_gbps", FIELD_REAL, copy_bw);
    report_add(r, "first_touch_gbps", FIELD_REAL, s->touch_bw);
    const Row *best = NULL;
    for (int i = 0; i < count; i++)
        if (rows[i].op == ALLREDUCE && rows[i].impl == RING
            && (best == NULL || rows[i].busbw > best->busbw))
            best = &rows[i];
    if (best != NULL) {
        report_add(r, "ring_best_busbw", FIELD_REAL, best->busbw);
        report_add(r, "ring_best_bytes", FIELD_COUNT, (double)best->bytes);
        report_add(r, "ring_best_of_memcpy", FIELD_FRACTION,
                   best->busbw / copy_bw);
    }
    if (ring16 && mpi16 && ring_big && mpi_big) {
        report_add(r, "ring_busbw_sixteen", FIELD_REAL, ring16->busbw);
        report_add(r, "mpi_busbw_sixteen", FIELD_REAL, mpi16->busbw);
        report_add(r, "ring_over_mpi_sixteen", FIELD_REAL,
                   ring16->busbw / mpi16->busbw);
        report_add(r, "largest_mib", FIELD_REAL,
                   (double)ring_big->bytes / (1 << 20));
        report_add(r, "ring_busbw_largest", FIELD_REAL, ring_big->busbw);
        report_add(r, "mpi_busbw_largest", FIELD_REAL, mpi_big->busbw);
        report_add(r, "ring_faults_largest", FIELD_REAL, ring_big->faults);
        report_add(r, "mpi_faults_largest", FIELD_REAL, mpi_big->faults);
        report_add(r, "pages_largest", FIELD_COUNT,
                   (double)ring_big->bytes / (double)sysconf(_SC_PAGESIZE));
        report_add(r, "ring_spread_largest", FIELD_FRACTION,
                   spread(ring_big) / 100);
        report_add(r, "mpi_spread_largest", FIELD_FRACTION,
                   spread(mpi_big) / 100);
        report_add(r, "ring_of_memcpy", FIELD_FRACTION,
                   ring_big->busbw / copy_bw);
        report_add(r, "mpi_of_memcpy", FIELD_FRACTION,
                   mpi_big->busbw / copy_bw);
    }
    if (ring_small && mpi_small) {
        report_add(r, "ring_small_us", FIELD_REAL, 1e6 * ring_small->seconds);
        report_add(r, "mpi_small_us", FIELD_REAL, 1e6 * mpi_small->seconds);
    }
    long wrong = 0;
    double difference = 0;
    for (int i = 0; i < count; i++) {
        wrong += rows[i].wrong;
        difference = fmax(difference, rows[i].largest_difference);
    }
    report_add(r, "wrong", FIELD_COUNT, (double)wrong);
    report_add(r, "largest_difference", FIELD_REAL, difference);
}
static int sweep(int rank, int n, Option *options);

int main(int argc, char **argv)
{
    const char *command = "allreduce";
    int rank = launcher_rank(), n;
    Option options[] = {
        { "--min-bytes", OPT_COUNT, 1e12, "smallest buffer, bytes", 8, NULL, 0 },
        { "--max-bytes", OPT_COUNT, 1e12, "largest buffer, bytes (clamped to fit "
          "memory)", 268435456, NULL, 0 },
        { "--op", OPT_NAME, 0, "allreduce, reduce_scatter, all_gather, all (the "
          "three), alltoall, or hierarchical (the flat ring's all-reduce beside "
          "the hierarchical one)", 0, "all", 0 },
        { "--group", OPT_COUNT, MAX_RANKS, "with --op hierarchical: ranks per "
          "group, consecutive, as the GPUs of a node", 0, NULL, 0 },
        { "--delay-us", OPT_NUMBER, 1e6, "with --group: microseconds each send "
          "between groups waits first", 0, NULL, 0 },
        { "--throttle-gbs", OPT_NUMBER, 1e6, "with --group: GB/s of each send "
          "between groups, after the delay", 0, NULL, 0 },
        { "--warmup", OPT_COUNT, 1000, "untimed calls before timing", 2, NULL, 0 },
        { "--seconds", OPT_NUMBER, 60, "time to spend on each timed batch",
          0.02, NULL, 0 },
        { "--repeats", OPT_COUNT, 1000, "timed batches per size; the table "
          "reports their median and spread", 5, NULL, 0 },
        { "--check", OPT_SWITCH, 0, "check every element of every result and "
          "time nothing (the table only, its times -): for more ranks than "
          "cores", 0, NULL, 0 },
        { "--memcpy", OPT_NUMBER, 1e6, "the memory-copy ceiling in GB/s, as "
          "build/machine.json holds it (default: measured here)", 0, NULL, 0 },
        { "--machine", OPT_PATH, 0, "read the memory-copy ceiling and the "
          "first-touch rate from this machine file (build/machine.json) instead "
          "of measuring them; --memcpy still wins", 0, NULL, 0 },
        { "--transcript", OPT_OUTPUT, 0, "also write the table here", 0, NULL, 0 },
        { "--data", OPT_OUTPUT, 0, "also write the rows as CSV here", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options_as(rank == 0, command, "A ring all-reduce "
                                  "written from MPI point-to-point calls, "
                                  "beside MPICH's own, in the manner of "
                                  "nccl-tests.", options, argc - 1,
                                  argv + 1);
    if (status != 0)       /* --help was printed (1), or a flag refused (2) */
        return status == 1 ? 0 : status;
    MPI_Init(&argc, &argv);     /* as minigpt does: flags first, then MPI */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    status = sweep(rank, n, options);
    MPI_Finalize();
    return status;
}
#include <limits.h>
#include <unistd.h>

static size_t memory_limit(int n)
{
    double total = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    return (size_t)(total / 2 / (n * (1.0 + 2.0 / n)));
}

static int sweep(int rank, int n, Option *options)
{
    const char *command = "allreduce", *which = option_text(options, "--op");
    int first_op = 0, last_op = ALLGATHER;      /* all: the ring's three */
    int hierarchy = strcmp(which, "hierarchical") == 0;
    if (hierarchy)
        last_op = first_op = ALLREDUCE;
    else if (strcmp(which, "all") != 0) {
        for (first_op = 0; first_op < OPERATIONS; first_op++)
            if (strcmp(which, operation_names[first_op]) == 0)
                break;
        if (first_op == OPERATIONS) {
            if (rank == 0)
                complain(command, "--op: unknown operation \"%s\" (known: "
                         "allreduce, reduce_scatter, all_gather, alltoall, "
                         "all, hierarchical)", which);
            return 2;
        }
        last_op = first_op;
    }
    size_t min = (size_t)option_number(options, "--min-bytes");
    size_t max = (size_t)option_number(options, "--max-bytes");
    size_t first = 4;
    while (first < min)
        first *= 2;
    if (min < sizeof(float) || min > max || first > max) {
        if (rank == 0)
            complain(command, "--min-bytes (%zu) must be at least 4, and "
                     "--max-bytes (%zu) must leave a power of two between "
                     "them", min, max);
        return 2;
    }
    int checking = option_given(options, "--check");     /* nothing timed */
    static const char *timed_outputs[] = { "--json", "--csv", "--latex",
                                           "--data" };
    for (size_t i = 0; i < sizeof timed_outputs / sizeof *timed_outputs; i++)
        if (checking && option_given(options, timed_outputs[i])) {
            if (rank == 0)
                complain(command, "--check times nothing, so %s has no "
                         "rows to write: it prints the table (to --output "
                         "or --transcript)", timed_outputs[i]);
            return 2;
        }
    if (n > MAX_RANKS) {
        if (rank == 0)
            complain(command, "%d ranks: the ring supports at most %d", n,
                     MAX_RANKS);
        return 2;
    }
    int group = option_given(options, "--group")
              ? (int)option_number(options, "--group") : 0;
    if (hierarchy != (group > 0) || (!hierarchy
                                     && (option_given(options, "--delay-us")
                                         || option_given(options,
                                                         "--throttle-gbs")))) {
        if (rank == 0)
            complain(command, hierarchy ? "--op hierarchical needs --group, "
                     "the ranks in each group" : "--group, --delay-us and "
                     "--throttle-gbs go with --op hierarchical");
        return 2;
    }
    if (hierarchy && n % group != 0) {
        if (rank == 0)
            complain(command, "--group %d does not divide the %d ranks into "
                     "whole groups", group, n);
        return 2;
    }
    /* The ring with the fewest ranks cuts the largest chunks: the scratch's */
    int smallest_ring = hierarchy && group > 1 ? group : n;
    size_t top = first;                  /* the largest power of two swept */
    while (top * 2 <= max)
        top *= 2;
    if (first_op == ALLTOALL && whole_blocks(ALLTOALL, top, n) == 0) {
        if (rank == 0)
            complain(command, "--max-bytes %zu: the all-to-all sends at least "
                     "one float to each of the %d ranks, %zu bytes", max, n,
                     sizeof(float) * (size_t)n);
        return 2;
    }
    double machine_copy = 0, machine_touch = 0;     /* bytes/s; 0: measure */
    const char *machine = option_text(options, "--machine");
    if (machine != NULL) {
        int saved = streams_silence(rank == 0);
        int bad = machine_figure(command, "--machine", machine,
                                 "memcpy_bytes_per_second", &machine_copy)
               || machine_figure(command, "--machine", machine,
                                 "first_touch_bytes_per_second", &machine_touch);
        streams_restore(saved);
        if (bad)
            return 2;
    }

    size_t counts_fit = (size_t)INT_MAX / 2 * sizeof(float);  /* MPI counts */
    if (max > counts_fit)
        max = counts_fit;
    size_t fits = memory_limit(n) / (first_op == ALLTOALL ? 2 : 1);
    if (max > fits) {            /* the all-to-all: a second buffer */
        max = fits;
        if (rank == 0)
            fprintf(stderr, "allreduce: --max-bytes clamped to %zu bytes to "
                    "fit this machine's memory\n", max);
    }
    size_t chunk = max / sizeof(float) / (size_t)n + 1;
    size_t scratch = max / sizeof(float) / (size_t)smallest_ring + 1;
    Buffers b = { malloc(max), malloc(scratch * sizeof(float)),
                  malloc(chunk * sizeof(float)), malloc(sizeof(int) * (size_t)n),
                  malloc(sizeof(int) * (size_t)n), MPI_COMM_WORLD, rank, n,
                  MPI_COMM_NULL, MPI_COMM_NULL,
                  first_op == ALLTOALL ? malloc(max) : NULL };
    Row *rows = malloc(sizeof(Row) * 64 * OPERATIONS * IMPLEMENTATIONS);
    if (!b.buf || !b.scratch || !b.result || !b.size || !b.offset || !rows
        || (first_op == ALLTOALL && !b.received)) {
        complain(command, "cannot allocate %zu bytes for the buffers", max);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t copy_bytes = (size_t)64 << 20;
    Setting setting = { n, (int)option_number(options, "--warmup"),
                        checking ? 0 : (int)option_number(options, "--repeats"),
                        placement(MPI_COMM_WORLD), 0, 0, 0, 0, 0 };
    if (hierarchy) {
        MPI_Comm_split(MPI_COMM_WORLD, rank / group, rank, &b.inside);
        MPI_Comm_split(MPI_COMM_WORLD, rank % group, rank, &b.across);
        setting.group = group;
        if (option_given(options, "--delay-us"))
            setting.delay_us = option_number(options, "--delay-us");
        if (option_given(options, "--throttle-gbs"))
            setting.throttle_gbs = option_number(options, "--throttle-gbs");
        slow_link_between_groups(group, setting.delay_us * 1e-6,
                                 setting.throttle_gbs * 1e9);
    }
    if (rank == 0 && !checking) {   /* first, before any message is sent */
        setting.copy_bw = option_given(options, "--memcpy")
                        ? option_number(options, "--memcpy")
                        : machine_copy > 0 ? machine_copy / 1e9
                        : memcpy_bandwidth(copy_bytes);
        setting.touch_bw = machine_touch > 0 ? machine_touch / 1e9
                         : first_touch_bandwidth(copy_bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int count = 0, warmup = setting.warmup, repeats = setting.repeats;
    double target = option_number(options, "--seconds");
    for (int op = first_op; op <= last_op; op++)
        for (size_t bytes = 4; bytes <= max; bytes *= 2) {
            size_t size = whole_blocks((Operation)op, bytes, n);
            if (bytes < min || size == 0)
                continue;
            for (int impl = 0; impl < IMPLEMENTATIONS; impl++)
                if (impl == RING || impl == (hierarchy ? HIERARCHICAL : LIBRARY))
                    rows[count++] = measure((Operation)op, (Implementation)impl,
                                            &b, size, warmup, repeats, target);
            if (rank == 0 && !option_given(options, "--json"))
                fprintf(stderr, "allreduce: %s %zu bytes done\n", operation_names[op],
                        bytes);
        }
    int status = 0;
    if (rank == 0) {
        Output out;
        const char *transcript = option_text(options, "--transcript");
        const char *data = option_text(options, "--data");
        if (data != NULL) {
            status = output_open_path(&out, command, "--data", data);
            if (status == 0) {
                print_rows(out.file, rows, count, &setting, copy_bytes, 0);
                status = output_commit(&out, command);
            }
        }
        if (transcript != NULL) {
            status = output_open_path(&out, command, "--transcript", transcript);
            if (status == 0) {
                print_results(out.file, rows, count, &setting);
                status = output_commit(&out, command);
            }
        }
        if (status == 0)
            status = output_open(&out, command, options);
        if (status == 0) {
            if (option_given(options, "--json") || option_given(options, "--csv"))
                print_rows(out.file, rows, count, &setting, copy_bytes,
                           option_given(options, "--json"));
            else if (option_given(options, "--latex")) {
                Report r = { .count = 0 };
                report_summary(&r, rows, count, &setting);
                print_report(out.file, &r, options);
            } else
                print_results(out.file, rows, count, &setting);
            status = output_commit(&out, command);
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long wrong = 0;
    for (int i = 0; i < count; i++)
        wrong += rows[i].wrong;
    if (status == 0 && wrong > 0) {
        if (rank == 0)
            complain(command, "%ld wrong elements: a collective is broken", wrong);
        status = 1;
    }
    free(b.buf); free(b.scratch); free(b.result); free(b.size); free(b.offset);
    free(b.received); free(rows);
    if (b.inside != MPI_COMM_NULL) {
        MPI_Comm_free(&b.inside);
        MPI_Comm_free(&b.across);
    }
    return status;
}
