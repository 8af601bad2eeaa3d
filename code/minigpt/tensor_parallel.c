/* Tangled from chapters/09-tensor-parallel.nw, chapters/11b-composed.nw and chapters/99b-mesh-plumbing.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "minigpt.h"
#include "elementwise.h"
#include "../comm/ring.h"

int model_ways(const Model *m)
{
    return m->tp != NULL ? m->tp->ways : 1;
}

MPI_Comm model_tp_comm(const Model *m)
{
    return m->tp != NULL ? m->tp->comm : MPI_COMM_SELF;
}

int model_sequence_ways(const Model *m)
{
    return m->tp != NULL && m->tp->sequence_parallel ? m->tp->ways : 1;
}

int model_sequence_rank(const Model *m)
{
    return model_sequence_ways(m) > 1 ? m->tp->rank : 0;
}
static TpTraffic traffic_total, traffic_blocks[2];
static double traffic_elsewhere;   /* bytes of it sent outside MPI */

TpTraffic tp_traffic(void)
{
    return traffic_total;
}

TpTraffic tp_traffic_blocks(int direction)
{
    return traffic_blocks[direction];
}

void tp_traffic_blocks_add(TpTraffic since, int direction)
{
    TpTraffic *b = &traffic_blocks[direction];
    b->collectives += traffic_total.collectives - since.collectives;
    b->bytes += traffic_total.bytes - since.bytes;
    b->blocks += 1;
}

void tp_traffic_count(double bytes)
{
    traffic_total.collectives += 1;
    traffic_total.bytes += bytes;
    traffic_elsewhere += bytes;
}

unsigned long long data_bytes_sent(void)
{
    return mpi_bytes_sent()
         - (unsigned long long)(traffic_total.bytes - traffic_elsewhere);
}

void tp_collective(TpCollective kind, real *x, size_t n, MPI_Comm tp)
{
    int t;
    MPI_Comm_size(tp, &t);
    if (t == 1)
        return;
    unsigned long long before = mpi_bytes_sent();
    double started = MPI_Wtime();     /* blocking: all of it is exposed */
#ifdef MINIGPT_FP64
    if (kind != TP_ALL_REDUCE)        /* refused with the flags */
        abort();
    MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_SUM, tp);
#else
    static real *scratch;             /* one chunk of the ring, grown */
    static size_t scratch_count;
    size_t chunk = n / (size_t)t + 1;
    if (chunk > scratch_count) {
        free(scratch);
        scratch = malloc(sizeof(real) * chunk);
        if (scratch == NULL)
            abort();
        scratch_count = chunk;
    }
    if (kind == TP_ALL_REDUCE)
        ring_allreduce(x, n, scratch, tp);
    else if (kind == TP_REDUCE_SCATTER)
        ring_reduce_scatter(x, n, scratch, tp);
    else
        ring_all_gather(x, n, tp);
#endif
    step_clock_stop(PART_TP, started);
    traffic_total.collectives += 1;
    traffic_total.bytes += (double)(mpi_bytes_sent() - before);
}
static int split_sequence;        /* --sequence-parallel: rows are split */

void tp_split_sequence(int on)
{
    split_sequence = on;
}

/* f: the identity forward; x (n) is already whole on every rank. With
   sequence parallelism, this rank's slice of x's rows is gathered. */
void f_forward(real *x, size_t n, MPI_Comm tp)
{
    if (split_sequence)
        tp_collective(TP_ALL_GATHER, x, n, tp);
}

/* f backward: the input's gradient x (n), summed over the group; with
   sequence parallelism, only this rank's slice of the rows. */
void f_backward(real *x, size_t n, MPI_Comm tp)
{
    tp_collective(split_sequence ? TP_REDUCE_SCATTER : TP_ALL_REDUCE, x, n,
                  tp);
}

/* g: a row-parallel layer's partial outputs x (n), summed over the group;
   with sequence parallelism, only this rank's slice of the rows. */
void g_forward(real *x, size_t n, MPI_Comm tp)
{
    tp_collective(split_sequence ? TP_REDUCE_SCATTER : TP_ALL_REDUCE, x, n,
                  tp);
}

/* g backward: the identity; the gradient of a sum reaches every term.
   With sequence parallelism, every rank's slice of x's rows is gathered. */
void g_backward(real *x, size_t n, MPI_Comm tp)
{
    if (split_sequence)
        tp_collective(TP_ALL_GATHER, x, n, tp);
}
/* probs (N, Vl): this rank's logits of vocabulary r·Vl .. (r + 1)·Vl - 1,
   made its probabilities; losses (N) on every rank; the mean loss. */
double vocab_parallel_crossentropy_forward(real *probs, real *losses,
                                           const int *targets, int N,
                                           int Vl, MPI_Comm tp)
{
    int r;
    MPI_Comm_rank(tp, &r);
    real *row_max = malloc(sizeof(real) * (size_t)N);       /* (N)    */
    real *sums = malloc(sizeof(real) * 2 * (size_t)N);      /* (N, 2) */
    int *mine = calloc((size_t)N, sizeof(int));             /* (N)    */
    if (row_max == NULL || sums == NULL || mine == NULL)
        abort();
    vocab_shard_targets(mine, targets, r * Vl, N, Vl);
    vocab_shard_max(row_max, probs, N, Vl);
    MPI_Allreduce(MPI_IN_PLACE, row_max, N, real_type(), MPI_MAX, tp);
    vocab_shard_exp(probs, sums, row_max, mine, N, Vl);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2 * N, real_type(), MPI_SUM, tp);
    double loss = vocab_shard_loss(probs, losses, sums, N, Vl);
    free(row_max);
    free(sums);
    free(mine);
    return loss;
}

/* dlogits (N, Vl) is written: this rank's columns of p - 1_y. */
void vocab_parallel_crossentropy_backward(real *dlogits, const real *probs,
                                          const int *targets, int N, int Vl,
                                          MPI_Comm tp, real scale)
{
    int r;
    MPI_Comm_rank(tp, &r);
    int *mine = calloc((size_t)N, sizeof(int));      /* (N) local targets */
    if (mine == NULL)
        abort();
    vocab_shard_targets(mine, targets, r * Vl, N, Vl);
    crossentropy_backward(dlogits, probs, mine, N, Vl, scale);
    free(mine);
}
/* mine (N): each position's target as a column of this rank's, which
   are first .. first + Vl - 1; -1 where another rank holds it. */
void vocab_shard_targets(int *mine, const int *targets, int first, int N,
                         int Vl)
{
    for (int n = 0; n < N; n++)
        mine[n] = targets[n] >= first && targets[n] < first + Vl
                ? targets[n] - first : -1;
}

/* row_max (N): the largest of each row of this rank's logits (N, Vl). */
void vocab_shard_max(real *row_max, const real *logits, int N, int Vl)
{
    for (int n = 0; n < N; n++) {
        const real *p = logits + (size_t)n * Vl;
        row_max[n] = p[0];
        for (int v = 1; v < Vl; v++)
            if (p[v] > row_max[n])
                row_max[n] = p[v];
    }
}

/* probs (N, Vl) made exp(logit - the row's largest); sums (N, 2): each
   row's sum of them, and its target's (0 where another rank holds it). */
void vocab_shard_exp(real *probs, real *sums, const real *row_max,
                     const int *mine, int N, int Vl)
{
    for (int n = 0; n < N; n++) {
        real *p = probs + (size_t)n * Vl;
        real z = 0.0f;
        for (int v = 0; v < Vl; v++) {
            p[v] = softmax_exp(p[v], row_max[n]);
            z += p[v];
        }
        sums[2 * n] = z;                 /* and the target's exponential */
        sums[2 * n + 1] = mine[n] >= 0 ? p[mine[n]] : 0.0f;
    }
}

/* With sums (N, 2) summed over the group: probs (N, Vl) divided by their
   row's sum, losses (N); the mean loss. */
double vocab_shard_loss(real *probs, real *losses, const real *sums, int N,
                        int Vl)
{
    double sum = 0.0;
    for (int n = 0; n < N; n++) {
        real *p = probs + (size_t)n * Vl, z = sums[2 * n];
        for (int v = 0; v < Vl; v++)
            p[v] /= z;
        losses[n] = -log(sums[2 * n + 1] / z);
        sum += losses[n];
    }
    return sum / N;
}
typedef enum { WHOLE, BY_COLUMNS, BY_ROWS } SplitKind;

typedef struct {
    SplitKind kind;
    int groups;               /* column groups cut separately: Q, K and V */
} TensorSplit;

static TensorSplit tensor_split(int t)
{
    static const TensorSplit split[PARAM_TENSORS] = {
        [4] = { BY_COLUMNS, 3 }, [5] = { BY_COLUMNS, 3 },   /* qkv_w, _b */
        [6] = { BY_ROWS, 1 },                               /* proj_w    */
        [10] = { BY_COLUMNS, 1 }, [11] = { BY_COLUMNS, 1 }, /* fc_w, _b  */
        [12] = { BY_ROWS, 1 },                              /* fcproj_w  */
        [16] = { BY_COLUMNS, 1 },                           /* head_w    */
    };
    return split[t];
}
/* The whole shape of tensor t per layer: layers × rows × columns. */
static void whole_shape(const ModelConfig *c, int t, size_t *layers,
                        size_t *rows, size_t *columns)
{
    size_t C = (size_t)c->hidden, L = (size_t)c->layers;
    size_t shape[PARAM_TENSORS][3] = {
        { 1, (size_t)c->vocab, C }, { 1, (size_t)c->seq, C }, { L, 1, C },
        { L, 1, C }, { L, C, 3 * C }, { L, 1, 3 * C }, { L, C, C },
        { L, 1, C }, { L, 1, C }, { L, 1, C }, { L, C, 4 * C },
        { L, 1, 4 * C }, { L, 4 * C, C }, { L, 1, C }, { 1, 1, C },
        { 1, 1, C }, { 1, C, (size_t)c->vocab }
    };
    *layers = shape[t][0];
    *rows = shape[t][1];
    *columns = shape[t][2];
}

void tensor_placement(const Model *m, RunVisitor visit, void *context)
{
    size_t ways = (size_t)model_ways(m);
    size_t r = m->tp != NULL ? (size_t)m->tp->rank : 0;
    size_t whole_at = 0, local_at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t layers, rows, cols;
        if (m->param_size[t] == 0)     /* a pipeline stage lacks an end */
            continue;
        whole_shape(&m->config, t, &layers, &rows, &cols);
        TensorSplit s = tensor_split(t);
        Run run = { t, whole_at, local_at, layers * rows * cols,
                    s.kind == WHOLE };
        if (s.kind == WHOLE)
            visit(context, &run);
        for (size_t l = 0; s.kind == BY_ROWS && l < layers; l++) {
            size_t block = rows / ways * cols;          /* rows r·rows/t .. */
            run.whole = whole_at + l * rows * cols + r * block;
            run.local = local_at + l * block;
            run.count = block;
            visit(context, &run);
        }
        size_t groups = s.kind == BY_COLUMNS ? (size_t)s.groups : 1;
        size_t part = cols / groups, mine = part / ways;
        for (size_t l = 0; s.kind == BY_COLUMNS && l < layers; l++)
            for (size_t i = 0; i < rows; i++)
                for (size_t p = 0; p < groups; p++) {
                    run.whole = whole_at + (l * rows + i) * cols + p * part
                              + r * mine;
                    run.local = local_at + (l * rows + i) * (cols / ways)
                              + p * mine;
                    run.count = mine;
                    visit(context, &run);
                }
        whole_at += layers * rows * cols;
        local_at += m->param_size[t];
    }
}
typedef struct {
    const Model *m;
    const real *from;
    real *to;
    int gather;              /* 1: local to whole; 0: whole to local */
    double squares;
} RunCopy;

static void copy_run(void *context, const Run *run)
{
    RunCopy *c = context;
    int first = c->m->tp == NULL || c->m->tp->rank == 0;
    if (c->gather && (first || !run->replicated))
        memcpy(c->to + run->whole, c->from + run->local,
               sizeof(real) * run->count);
    else if (!c->gather)
        memcpy(c->to + run->local, c->from + run->whole,
               sizeof(real) * run->count);
}

size_t whole_params_count(const ModelConfig *c)
{
    size_t n = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t layers, rows, cols;
        whole_shape(c, t, &layers, &rows, &cols);
        n += layers * rows * cols;
    }
    return n;
}

void tp_gather(const Model *m, const real *local, real *whole)
{
    size_t n = tp_whole_count(m);
    memset(whole, 0, sizeof(real) * n);
    RunCopy c = { m, local, whole, 1, 0 };
    tensor_placement(m, copy_run, &c);
    if (model_ways(m) > 1)
        MPI_Allreduce(MPI_IN_PLACE, whole, (int)n, real_type(), MPI_SUM,
                      m->tp->comm);
}

void tp_scatter(const Model *m, const real *whole, real *local)
{
    RunCopy c = { m, whole, local, 0, 0 };
    tensor_placement(m, copy_run, &c);
}

static void square_run(void *context, const Run *run)
{
    RunCopy *c = context;
    if (tp_counts_tensor(c->m, run->tensor))
        c->squares += sum_of_squares(c->from + run->local, run->count);
}

int tp_counts_tensor(const Model *m, int tensor)
{
    return tensor_split(tensor).kind != WHOLE || m->tp == NULL
        || m->tp->rank == 0;
}

double tp_sum_of_squares(const Model *m, const real *local)
{
    if (model_ways(m) == 1)            /* every number once, in order */
        return sum_of_squares(local, m->params_count);
    RunCopy c = { m, local, NULL, 0, 0 };
    tensor_placement(m, square_run, &c);
    if (model_ways(m) > 1)
        MPI_Allreduce(MPI_IN_PLACE, &c.squares, 1, MPI_DOUBLE, MPI_SUM,
                      m->tp->comm);
    return c.squares;
}

void collect_whole_state(DataParallel *dp, StateKind kind, real *into)
{
    Model *m = dp->model;
    if (model_ways(m) == 1 && m->pp == NULL) {
        dp->strategy->collect(dp, kind, into);
        return;
    }
    real *part = malloc(sizeof(real) * m->params_count);   /* this rank's */
    if (part == NULL)
        abort();
    dp->strategy->collect(dp, kind, part);
    mesh_gather(m, part, into);        /* the tensor and pipeline axes */
    free(part);
}

void scatter_whole_state(DataParallel *dp, StateKind kind, const real *whole)
{
    Model *m = dp->model;
    if (model_ways(m) == 1 && m->pp == NULL) {
        dp->strategy->scatter(dp, kind, whole);
        return;
    }
    real *part = malloc(sizeof(real) * m->params_count);
    if (part == NULL)
        abort();
    mesh_scatter(m, whole, part);
    dp->strategy->scatter(dp, kind, part);
    free(part);
}

void tp_init_weights(const Model *m, real *local, uint64_t seed)
{
    Model whole;
    if (model_init(&whole, m->whole, 1, HOLDS_WEIGHTS) != 0)
        abort();
    model_init_weights(&whole, whole.params_memory, seed);
    mesh_scatter(m, whole.params_memory, local);    /* this rank's part */
    model_free(&whole);
}
/* local (params_count) into the whole model's array, on every rank of
   the stage's tensor group and of the pipeline: the tensor axis's
   gather, into the stage's blocks whole, then the pipeline axis's. */
void mesh_gather(const Model *m, const real *local, real *whole)
{
    if (m->pp == NULL || model_ways(m) == 1) {  /* one axis, or none */
        (m->pp != NULL ? pipeline_gather : tp_gather)(m, local, whole);
        return;
    }
    real *stage = malloc(sizeof(real) * tp_whole_count(m));
    if (stage == NULL)
        abort();
    tp_gather(m, local, stage);           /* (the stage's blocks, whole) */
    pipeline_gather(m, stage, whole);
    free(stage);
}

/* The inverse: this rank's part of a whole array. */
void mesh_scatter(const Model *m, const real *whole, real *local)
{
    if (m->pp == NULL || model_ways(m) == 1) {
        (m->pp != NULL ? pipeline_scatter : tp_scatter)(m, whole, local);
        return;
    }
    real *stage = malloc(sizeof(real) * tp_whole_count(m));
    if (stage == NULL)
        abort();
    pipeline_scatter(m, whole, stage);
    tp_scatter(m, stage, local);
    free(stage);
}
size_t tp_whole_count(const Model *m)
{
    size_t n = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t layers, rows, cols;
        whole_shape(&m->config, t, &layers, &rows, &cols);
        n += m->param_size[t] > 0 ? layers * rows * cols : 0;
    }
    return n;
}
void tp_sum_sequence_parallel_gradients(Model *m)
{
    if (model_sequence_ways(m) == 1)
        return;
    double started = MPI_Wtime();            /* the tensor axis's time */
    static const int partial[] = { 2, 3, 8, 9, 14, 15 };   /* ln*_w, _b */
    for (size_t i = 0; i < sizeof partial / sizeof *partial; i++) {
        size_t at = 0;
        for (int t = 0; t < partial[i]; t++)
            at += m->param_size[t];
        MPI_Allreduce(MPI_IN_PLACE, m->grads_memory + at,
                      (int)m->param_size[partial[i]], real_type(), MPI_SUM,
                      m->tp->comm);
    }
    step_clock_stop(PART_TP, started);
}
