/* Tangled from chapters/14c-moe-layer.nw and chapters/99l-moe-layer-plumbing.nw; edit the chapters, not this file. */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../minigpt/minigpt.h"

enum { MOE_MAX_EXPERTS = 64 };

enum {                       /* the phases timed */
    PHASE_ROUTER, PHASE_DISPATCH, PHASE_EXPERTS, PHASE_COMBINE,
    PHASE_BACKWARD, PHASES
};

static const char *const phase_names[PHASES] = {
    "router", "dispatch", "experts", "combine", "backward"
};
static const char *const phase_keys[PHASES] = {
    "router_s", "dispatch_s", "experts_s", "combine_s", "backward_s"
};
typedef struct {
    int experts;             /* E                                        */
    int top_k;               /* k: the experts each token is sent to     */
    int tokens;              /* N: the tokens each rank holds            */
    int hidden;              /* C: the width of a token                  */
    int ranks;               /* R: E / R experts live on each rank       */
    double capacity_factor;  /* F                                        */
    double skew;             /* S: the router's bias toward expert 0     */
    uint64_t seed;           /* of the weights and the tokens            */
} MoeShape;

typedef struct {             /* one expert: an MLP C -> 4C -> C          */
    real *up_w;              /* (C, 4C)                                  */
    real *up_b;              /* (4C)                                     */
    real *down_w;            /* (4C, C)                                  */
    real *down_b;            /* (C)                                      */
} Expert;

typedef struct {
    real *router_w;          /* (C, E)                                   */
    real *router_b;          /* (E): -S ln(e + 1), the skew              */
    Expert *expert;          /* (E): only [first, first + held) filled   */
    int first, held;         /* the experts this rank holds              */
} MoeWeights;

typedef struct {             /* where n tokens go                        */
    int *expert;             /* (n, k) the chosen experts, best first    */
    real *gate;              /* (n, k) their renormalised probabilities  */
    int *kept;               /* (n, k) 1: within the expert's capacity   */
    long *routed;            /* (E) slots of these tokens, per expert    */
    real *probs;             /* (n, E) scores, then probabilities        */
    real *chosen;            /* (n) the k chosen probabilities' sum      */
} Routing;
typedef struct {
    GemmWorkspace ws;
    Routing routing;         /* of the n tokens it routes               */
    long *taken;             /* (E) slots each expert has taken          */
    real *send_rows;         /* (n k, C) kept slots' tokens, by expert   */
    int *send_expert;        /* (n k)    their experts                   */
    int *slot_row;           /* (n, k)   each slot's row; -1: dropped    */
    real *send_out;          /* (n k, C) their outputs, come back        */
    real *recv_rows;         /* (V, C)   the rows received               */
    int *recv_expert;        /* (V)      their experts                   */
    real *recv_out;          /* (V, C)   their outputs                   */
    real *gathered, *result; /* (M, C)   one expert's rows, outputs      */
    real *hidden, *active;   /* (M, 4C)  its hidden layer, before and
                                         after GELU                      */
    int received;            /* V, the rows received                     */
    int expert_count[MOE_MAX_EXPERTS];  /* the reference's runs of rows, */
    int expert_offset[MOE_MAX_EXPERTS]; /* per expert                    */
    /* the backward pass's */
    real *send_grad;         /* (n k, C) the outputs' gradients          */
    real *send_din;          /* (n k, C) the inputs' gradients, back     */
    real *recv_grad;         /* (V, C)   the outputs' gradients received */
    real *recv_din;          /* (V, C)   the inputs' gradients           */
    real *dgathered;         /* (M, C)   one expert's outputs' gradients */
    real *dhidden, *dactive; /* (M, 4C)                                  */
    real *dgate;             /* (n, k)                                   */
    real *dlogits;           /* (n, E)                                   */
    real *dfrom_router;      /* (n, C)   the router's part of dx         */
    /* per rank: rows (count, offset) and numbers (_c: rows x C) */
    int send_count[MOE_MAX_EXPERTS], send_offset[MOE_MAX_EXPERTS];
    int recv_count[MOE_MAX_EXPERTS], recv_offset[MOE_MAX_EXPERTS];
    int send_count_c[MOE_MAX_EXPERTS], send_offset_c[MOE_MAX_EXPERTS];
    int recv_count_c[MOE_MAX_EXPERTS], recv_offset_c[MOE_MAX_EXPERTS];
    long dropped;            /* slots dropped, of this rank's tokens     */
    double sent_bytes;       /* to other ranks, dispatch and combine     */
    double seconds[PHASES];
    double flops;
} Layer;

/* Buffers for routing n tokens, receiving V rows, and one expert's M. */
static int layer_init(Layer *b, const MoeShape *s, int n, int V, int M)
{
    size_t C = (size_t)s->hidden, k = (size_t)s->top_k, E = s->experts;
    size_t S = (size_t)n * k;
    gemm_workspace_init(&b->ws);
    b->routing = (Routing){ malloc(sizeof(int) * S), malloc(sizeof(real) * S),
                          malloc(sizeof(int) * S), malloc(sizeof(long) * E),
                          malloc(sizeof(real) * (size_t)n * E),
                          malloc(sizeof(real) * (size_t)n) };
    b->taken = malloc(sizeof(long) * E);
    b->send_rows = malloc(sizeof(real) * S * C);
    b->send_expert = malloc(sizeof(int) * S);
    b->slot_row = malloc(sizeof(int) * S);
    b->send_out = malloc(sizeof(real) * S * C);
    b->recv_rows = malloc(sizeof(real) * ((size_t)V * C + 1));
    b->recv_expert = malloc(sizeof(int) * ((size_t)V + 1));
    b->recv_out = malloc(sizeof(real) * ((size_t)V * C + 1));
    b->gathered = malloc(sizeof(real) * ((size_t)M * C + 1));
    b->result = malloc(sizeof(real) * ((size_t)M * C + 1));
    b->hidden = malloc(sizeof(real) * ((size_t)M * 4 * C + 1));
    b->active = malloc(sizeof(real) * ((size_t)M * 4 * C + 1));
    b->send_grad = malloc(sizeof(real) * S * C);
    b->send_din = malloc(sizeof(real) * S * C);
    b->recv_grad = malloc(sizeof(real) * ((size_t)V * C + 1));
    b->recv_din = malloc(sizeof(real) * ((size_t)V * C + 1));
    b->dgathered = malloc(sizeof(real) * ((size_t)M * C + 1));
    b->dhidden = malloc(sizeof(real) * ((size_t)M * 4 * C + 1));
    b->dactive = malloc(sizeof(real) * ((size_t)M * 4 * C + 1));
    b->dgate = malloc(sizeof(real) * S);
    b->dlogits = malloc(sizeof(real) * (size_t)n * E);
    b->dfrom_router = malloc(sizeof(real) * (size_t)n * C);
    b->flops = 0;
    b->received = 0;
    return b->send_grad && b->send_din && b->recv_grad && b->recv_din
        && b->dgathered && b->dhidden && b->dactive && b->dgate
        && b->dlogits && b->dfrom_router && b->ws.a && b->ws.b
        && b->routing.expert && b->routing.gate
        && b->routing.kept && b->routing.routed && b->routing.probs
        && b->routing.chosen && b->taken
        && b->send_rows && b->send_expert && b->slot_row && b->send_out
        && b->recv_rows && b->recv_expert && b->recv_out && b->gathered
        && b->result && b->hidden && b->active ? 0 : -1;
}

static void layer_free(Layer *b)
{
    gemm_workspace_free(&b->ws);
    void *all[] = { b->routing.expert, b->routing.gate, b->routing.kept,
                    b->routing.routed, b->routing.probs, b->routing.chosen,
                    b->taken, b->send_rows,
                    b->send_expert, b->slot_row, b->send_out, b->recv_rows,
                    b->recv_expert, b->recv_out, b->gathered, b->result,
                    b->hidden, b->active, b->send_grad, b->send_din,
                    b->recv_grad, b->recv_din, b->dgathered, b->dhidden,
                    b->dactive, b->dgate, b->dlogits, b->dfrom_router };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* The counts and offsets of numbers, from those of rows of C numbers. */
static void scale_counts(Layer *b, int R, int C)
{
    for (int d = 0; d < R; d++) {
        b->send_count_c[d] = b->send_count[d] * C;
        b->send_offset_c[d] = b->send_offset[d] * C;
        b->recv_count_c[d] = b->recv_count[d] * C;
        b->recv_offset_c[d] = b->recv_offset[d] * C;
    }
}
enum { STREAM_ROUTER = 1, STREAM_EXPERT = 2, STREAM_TOKEN = 3,
       STREAM_GRADIENT = 4 };

static Rng moe_stream(uint64_t seed, uint64_t purpose, uint64_t index)
{
    Rng a = { seed };
    Rng b = { rng_next(&a) ^ purpose * 0x9e3779b97f4a7c15ULL };
    Rng c = { rng_next(&b) ^ index * 0xd1b54a32d192ed03ULL };
    rng_next(&c);
    return c;
}

static void fill_normal(real *a, size_t n, double scale, Rng *r)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (real)(scale * rng_normal(r));
}

/* x (n, C): the tokens of global index first .. first + n - 1, or with
   STREAM_GRADIENT the gradients of their outputs. */
static void make_tokens(const MoeShape *s, int purpose, long first, int n,
                        real *x)
{
    for (int i = 0; i < n; i++) {
        Rng r = moe_stream(s->seed, (uint64_t)purpose,
                           (uint64_t)(first + i));
        fill_normal(x + (size_t)i * s->hidden, (size_t)s->hidden, 1, &r);
    }
}

/* The router, and experts first .. first + held - 1, all zero; 0 on
   success. */
static int zero_weights(const MoeShape *s, int first, int held,
                        MoeWeights *w)
{
    size_t C = (size_t)s->hidden, E = (size_t)s->experts;
    w->first = first;
    w->held = held;
    w->router_w = calloc(C * E, sizeof(real));
    w->router_b = calloc(E, sizeof(real));
    w->expert = calloc(E, sizeof(Expert));
    if (!w->router_w || !w->router_b || !w->expert)
        return -1;
    for (int e = first; e < first + held; e++) {
        Expert *x = &w->expert[e];
        x->up_w = calloc(C * 4 * C, sizeof(real));
        x->up_b = calloc(4 * C, sizeof(real));
        x->down_w = calloc(4 * C * C, sizeof(real));
        x->down_b = calloc(C, sizeof(real));
        if (!x->up_w || !x->up_b || !x->down_w || !x->down_b)
            return -1;
    }
    return 0;
}

/* The same, filled with the layer's weights. */
static int make_weights(const MoeShape *s, int first, int held,
                        MoeWeights *w)
{
    size_t C = (size_t)s->hidden, E = (size_t)s->experts;
    if (zero_weights(s, first, held, w) != 0)
        return -1;
    Rng r = moe_stream(s->seed, STREAM_ROUTER, 0);
    fill_normal(w->router_w, C * E, 1 / sqrt((double)C), &r);
    for (size_t e = 0; e < E; e++)
        w->router_b[e] = (real)(-s->skew * log(e + 1.0));
    for (int e = first; e < first + held; e++) {
        Expert *x = &w->expert[e];
        Rng q = moe_stream(s->seed, STREAM_EXPERT, (uint64_t)e);
        fill_normal(x->up_w, C * 4 * C, 1 / sqrt((double)C), &q);
        fill_normal(x->up_b, 4 * C, 0.1 / sqrt((double)C), &q);
        fill_normal(x->down_w, 4 * C * C, 1 / sqrt(4.0 * C), &q);
        fill_normal(x->down_b, C, 0.1 / sqrt(4.0 * C), &q);
    }
    return 0;
}

static void free_weights(MoeWeights *w)
{
    for (int e = w->first; w->expert && e < w->first + w->held; e++) {
        free(w->expert[e].up_w);
        free(w->expert[e].up_b);
        free(w->expert[e].down_w);
        free(w->expert[e].down_b);
    }
    free(w->expert);
    free(w->router_w);
    free(w->router_b);
}
/* Fill r's expert, gate, routed, probs and chosen for the n tokens
   x (n, C). */
static void route(GemmWorkspace *ws, const MoeShape *s, const MoeWeights *w,
                  const real *x, int n, Routing *r)
{
    int C = s->hidden, E = s->experts, k = s->top_k;
    double flops = 0;
    matmul_forward(ws, r->probs, x, w->router_w, w->router_b, n, C, E,
                   &flops);                                /* (n, E) */
    memset(r->routed, 0, sizeof(long) * (size_t)E);
    for (int i = 0; i < n; i++) {
        real *p = r->probs + (size_t)i * E;                /* (E) */
        real max = p[0], sum = 0;
        for (int e = 1; e < E; e++)
            max = p[e] > max ? p[e] : max;
        for (int e = 0; e < E; e++)
            sum += p[e] = expf(p[e] - max);
        for (int e = 0; e < E; e++)
            p[e] /= sum;
        real chosen = 0;                   /* the k probabilities' sum */
        int taken[MOE_MAX_EXPERTS] = { 0 };
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int e = 0; e < E; e++)
                if (!taken[e] && (best < 0 || p[e] > p[best]))
                    best = e;
            taken[best] = 1;
            r->expert[(size_t)i * k + j] = best;
            r->gate[(size_t)i * k + j] = p[best];
            chosen += p[best];
            r->routed[best]++;
        }
        r->chosen[i] = chosen;
        for (int j = 0; j < k; j++)
            r->gate[(size_t)i * k + j] /= chosen;
    }
}
/* Set r->kept for n tokens' slots, taken in the order of the tokens, then
   of their choices; before (E) holds the slots that earlier tokens sent to
   each expert, taken (E) is scratch. Returns the slots dropped. */
static long keep_within_capacity(Routing *r, int n, int k, int E,
                                 const long *before, long capacity,
                                 long *taken)
{
    long dropped = 0;
    memcpy(taken, before, sizeof(long) * (size_t)E);
    for (size_t slot = 0; slot < (size_t)n * k; slot++) {
        int e = r->expert[slot];
        r->kept[slot] = taken[e]++ < capacity;
        dropped += !r->kept[slot];
    }
    return dropped;
}
static long expert_capacity(const MoeShape *s)
{
    double even = (double)s->top_k * s->tokens * s->ranks / s->experts;
    double want = s->capacity_factor * even, whole = floor(want + 0.5);
    return fabs(want - whole) <= 1e-9 * want ? (long)whole
                                             : (long)ceil(want);
}
/* rows (S, C): the kept slots' tokens by expert, then in slot order;
   row_expert (S) their experts; slot_row (n, k) each slot's row, -1 if it
   was dropped; count (E) and offset (E) each expert's run of rows.
   Returns S, the rows. */
static int pack_by_expert(const Routing *r, const real *x, int n, int k,
                          int E, int C, real *rows, int *row_expert,
                          int *slot_row, int *count, int *offset)
{
    memset(count, 0, sizeof(int) * (size_t)E);
    for (size_t slot = 0; slot < (size_t)n * k; slot++)
        if (r->kept[slot])
            count[r->expert[slot]]++;
    int S = 0;
    for (int e = 0; e < E; e++) {
        offset[e] = S;
        S += count[e];
    }
    int next[MOE_MAX_EXPERTS];             /* the next free row, per expert */
    memcpy(next, offset, sizeof(int) * (size_t)E);
    for (size_t slot = 0; slot < (size_t)n * k; slot++) {
        slot_row[slot] = -1;
        if (!r->kept[slot])
            continue;
        int e = r->expert[slot], row = next[e]++;
        slot_row[slot] = row;
        row_expert[row] = e;
        memcpy(rows + (size_t)row * C, x + slot / k * C,
               sizeof(real) * (size_t)C);
    }
    return S;
}
/* out (M, C) = down(GELU(up(in))) for M rows in (M, C) of one expert;
   hidden and active (M, 4C) are scratch. */
static void expert_forward(GemmWorkspace *ws, const Expert *ex, real *out,
                           const real *in, real *hidden, real *active,
                           int M, int C, double *flops)
{
    matmul_forward(ws, hidden, in, ex->up_w, ex->up_b, M, C, 4 * C,
                   flops);                                  /* (M, 4C) */
    gelu_forward(active, hidden, (size_t)M * 4 * C);        /* (M, 4C) */
    matmul_forward(ws, out, active, ex->down_w, ex->down_b, M, 4 * C, C,
                   flops);                                  /* (M, C)  */
}
/* din (M, C) from dout (M, C) for M rows in (M, C) of one expert; the
   weights' gradients are added into gx. hidden, active, dhidden and
   dactive (M, 4C) are scratch: the forward pass is recomputed. */
static void expert_backward(GemmWorkspace *ws, const Expert *ex,
                            Expert *gx, real *din, const real *dout,
                            const real *in, real *hidden, real *active,
                            real *dhidden, real *dactive, int M, int C,
                            double *flops)
{
    matmul_forward(ws, hidden, in, ex->up_w, ex->up_b, M, C, 4 * C,
                   flops);                                  /* (M, 4C) */
    gelu_forward(active, hidden, (size_t)M * 4 * C);        /* (M, 4C) */
    matmul_backward(ws, dactive, gx->down_w, gx->down_b, dout, active,
                    ex->down_w, M, 4 * C, C, flops);        /* (M, 4C) */
    gelu_backward(dhidden, hidden, dactive, (size_t)M * 4 * C);
    matmul_backward(ws, din, gx->up_w, gx->up_b, dhidden, in, ex->up_w,
                    M, C, 4 * C, flops);                    /* (M, C)  */
}
/* y (V, C) = each row of rows (V, C) through the expert row_expert[v]
   names; b's gathered, hidden, active and result are scratch. */
static void run_experts(Layer *b, const MoeShape *s, const MoeWeights *w,
                        const real *rows, const int *row_expert, int V,
                        real *y)
{
    int C = s->hidden;
    for (int e = w->first; e < w->first + w->held; e++) {
        int M = 0;
        for (int v = 0; v < V; v++)
            if (row_expert[v] == e)
                memcpy(b->gathered + (size_t)M++ * C,
                       rows + (size_t)v * C, sizeof(real) * (size_t)C);
        if (M == 0)
            continue;
        expert_forward(&b->ws, &w->expert[e], b->result, b->gathered,
                       b->hidden, b->active, M, C, &b->flops);
        M = 0;
        for (int v = 0; v < V; v++)
            if (row_expert[v] == e)
                memcpy(y + (size_t)v * C, b->result + (size_t)M++ * C,
                       sizeof(real) * (size_t)C);
    }
}
/* y (n, C) = x (n, C) + the gate-weighted outputs out (S, C) of each
   token's kept slots, found through slot_row (n, k). */
static void combine_tokens(const Routing *r, const int *slot_row,
                           const real *out, const real *x, int n, int k,
                           int C, real *y)
{
    for (int i = 0; i < n; i++) {
        real *yi = y + (size_t)i * C;                        /* (C) */
        memcpy(yi, x + (size_t)i * C, sizeof(real) * (size_t)C);
        for (int j = 0; j < k; j++) {
            int row = slot_row[(size_t)i * k + j];
            if (row < 0)                                 /* dropped */
                continue;
            real g = r->gate[(size_t)i * k + j];
            const real *o = out + (size_t)row * C;           /* (C) */
            for (int c = 0; c < C; c++)
                yi[c] += g * o[c];
        }
    }
}
/* dout (S, C): row slot_row[i, j] = g_ij dy_i; dgate (n, k) = dy_i . the
   slot's output out (S, C), 0 where the slot was dropped. */
static void slot_gradients(const Routing *r, const int *slot_row,
                           const real *out, const real *dy, int n, int k,
                           int C, real *dout, real *dgate)
{
    for (size_t slot = 0; slot < (size_t)n * k; slot++) {
        int row = slot_row[slot];
        const real *d = dy + slot / k * C;                   /* (C) */
        real dot = 0;
        for (int c = 0; row >= 0 && c < C; c++) {
            dout[(size_t)row * C + c] = r->gate[slot] * d[c];
            dot += d[c] * out[(size_t)row * C + c];
        }
        dgate[slot] = dot;
    }
}
/* dx (n, C) = dy (n, C), the residual's, + each kept slot's input
   gradient, row slot_row[i, j] of din (S, C), + the router's part from
   dgate (n, k), whose weights' gradient is added into g->router_w.
   dlogits (n, E) and dfrom_router (n, C) are scratch. */
static void token_gradients(GemmWorkspace *ws, const MoeShape *s,
                            const Routing *r, const int *slot_row,
                            const real *din, const real *dgate,
                            const MoeWeights *w, MoeWeights *g,
                            const real *x, const real *dy, int n,
                            real *dlogits, real *dfrom_router, real *dx,
                            double *flops)
{
    int k = s->top_k, E = s->experts, C = s->hidden;
    for (int i = 0; i < n; i++) {
        real *dxi = dx + (size_t)i * C;                      /* (C) */
        memcpy(dxi, dy + (size_t)i * C, sizeof(real) * (size_t)C);
        const real *p = r->probs + (size_t)i * E;            /* (E) */
        const real *gate = r->gate + (size_t)i * k;          /* (k) */
        const real *dg = dgate + (size_t)i * k;              /* (k) */
        real dp[MOE_MAX_EXPERTS] = { 0 }, dot = 0;
        for (int j = 0; j < k; j++) {
            int row = slot_row[(size_t)i * k + j];
            for (int c = 0; row >= 0 && c < C; c++)
                dxi[c] += din[(size_t)row * C + c];
            dot += gate[j] * dg[j];
        }
        for (int j = 0; j < k; j++) {             /* the renormalisation */
            int e = r->expert[(size_t)i * k + j];
            dp[e] = (dg[j] - dot) / r->chosen[i];
        }
        for (int e = 0; e < E; e++)                       /* the softmax */
            dlogits[(size_t)i * E + e] = p[e] * dp[e];
    }
    matmul_backward(ws, dfrom_router, g->router_w, NULL, dlogits, x,
                    w->router_w, n, C, E, flops);           /* (n, C) */
    for (size_t i = 0; i < (size_t)n * C; i++)
        dx[i] += dfrom_router[i];
}
/* y (N, C) = the layer applied to this rank's tokens x (N, C). */
static void moe_forward(Layer *b, const MoeShape *s, const MoeWeights *w,
                        const real *x, real *y, MPI_Comm comm)
{
    int N = s->tokens, k = s->top_k, E = s->experts, C = s->hidden;
    int R = s->ranks, rank, per_rank = E / R;
    MPI_Comm_rank(comm, &rank);
    double t0 = MPI_Wtime();
    route(&b->ws, s, w, x, N, &b->routing);
    long before[MOE_MAX_EXPERTS] = { 0 };  /* earlier ranks' slots, per e */
    MPI_Exscan(b->routing.routed, before, E, MPI_LONG, MPI_SUM, comm);
    if (rank == 0)                         /* MPI leaves rank 0's undefined */
        memset(before, 0, sizeof before);
    b->dropped = keep_within_capacity(&b->routing, N, k, E, before,
                                      expert_capacity(s), b->taken);
    double t1 = MPI_Wtime();
    int count[MOE_MAX_EXPERTS], offset[MOE_MAX_EXPERTS];    /* per expert */
    pack_by_expert(&b->routing, x, N, k, E, C, b->send_rows, b->send_expert,
                   b->slot_row, count, offset);
    for (int d = 0; d < R; d++) {
        b->send_count[d] = 0;
        b->send_offset[d] = offset[d * per_rank];
        for (int e = d * per_rank; e < (d + 1) * per_rank; e++)
            b->send_count[d] += count[e];
    }
    MPI_Alltoall(b->send_count, 1, MPI_INT, b->recv_count, 1, MPI_INT, comm);
    int V = 0;                                 /* the rows this rank receives */
    for (int d = 0; d < R; d++) {
        b->recv_offset[d] = V;
        V += b->recv_count[d];
    }
    b->received = V;
    scale_counts(b, R, C);
    MPI_Alltoallv(b->send_rows, b->send_count_c, b->send_offset_c, MPI_FLOAT,
                  b->recv_rows, b->recv_count_c, b->recv_offset_c, MPI_FLOAT,
                  comm);
    MPI_Alltoallv(b->send_expert, b->send_count, b->send_offset, MPI_INT,
                  b->recv_expert, b->recv_count, b->recv_offset, MPI_INT, comm);
    b->sent_bytes = 0;
    for (int d = 0; d < R; d++)
        if (d != rank)
            b->sent_bytes += (double)b->send_count[d]
                           * (C * sizeof(real) + sizeof(int));
    double t2 = MPI_Wtime();
    run_experts(b, s, w, b->recv_rows, b->recv_expert, V, b->recv_out);
    double t3 = MPI_Wtime();
    MPI_Alltoallv(b->recv_out, b->recv_count_c, b->recv_offset_c, MPI_FLOAT,
                  b->send_out, b->send_count_c, b->send_offset_c, MPI_FLOAT,
                  comm);
    for (int d = 0; d < R; d++)
        if (d != rank)
            b->sent_bytes += (double)b->recv_count[d] * C * sizeof(real);
    combine_tokens(&b->routing, b->slot_row, b->send_out, x, N, k, C, y);
    double t4 = MPI_Wtime();
    b->seconds[PHASE_ROUTER] = t1 - t0;
    b->seconds[PHASE_DISPATCH] = t2 - t1;
    b->seconds[PHASE_EXPERTS] = t3 - t2;
    b->seconds[PHASE_COMBINE] = t4 - t3;
}
/* dx (N, C) from dy (N, C), after moe_forward on this rank's x (N, C),
   whose buffers it reads; the router's and this rank's experts' weight
   gradients are added into g. */
static void moe_backward(Layer *b, const MoeShape *s, const MoeWeights *w,
                         MoeWeights *g, const real *x, const real *dy,
                         real *dx, MPI_Comm comm)
{
    int N = s->tokens, k = s->top_k, C = s->hidden;
    slot_gradients(&b->routing, b->slot_row, b->send_out, dy, N, k, C,
                   b->send_grad, b->dgate);
    MPI_Alltoallv(b->send_grad, b->send_count_c, b->send_offset_c,
                  MPI_FLOAT, b->recv_grad, b->recv_count_c,
                  b->recv_offset_c, MPI_FLOAT, comm);
    for (int e = w->first; e < w->first + w->held; e++) {
        int M = 0;
        for (int v = 0; v < b->received; v++)
            if (b->recv_expert[v] == e) {
                memcpy(b->gathered + (size_t)M * C,
                       b->recv_rows + (size_t)v * C,
                       sizeof(real) * (size_t)C);
                memcpy(b->dgathered + (size_t)M++ * C,
                       b->recv_grad + (size_t)v * C,
                       sizeof(real) * (size_t)C);
            }
        if (M == 0)
            continue;
        expert_backward(&b->ws, &w->expert[e], &g->expert[e], b->result,
                        b->dgathered, b->gathered, b->hidden, b->active,
                        b->dhidden, b->dactive, M, C, &b->flops);
        M = 0;
        for (int v = 0; v < b->received; v++)
            if (b->recv_expert[v] == e)
                memcpy(b->recv_din + (size_t)v * C,
                       b->result + (size_t)M++ * C,
                       sizeof(real) * (size_t)C);
    }
    MPI_Alltoallv(b->recv_din, b->recv_count_c, b->recv_offset_c,
                  MPI_FLOAT, b->send_din, b->send_count_c,
                  b->send_offset_c, MPI_FLOAT, comm);
    token_gradients(&b->ws, s, &b->routing, b->slot_row, b->send_din,
                    b->dgate, w, g, x, dy, N, b->dlogits, b->dfrom_router,
                    dx, &b->flops);
}
/* y (NR, C) = the layer applied to all NR tokens x (NR, C) on one rank,
   with every expert in w; returns the slots dropped, the slots per
   expert into routed (E). */
static long moe_reference(Layer *b, const MoeShape *s, const MoeWeights *w,
                          const real *x, real *y, long *routed)
{
    int n = s->tokens * s->ranks, k = s->top_k, E = s->experts;
    int C = s->hidden;
    route(&b->ws, s, w, x, n, &b->routing);
    long none[MOE_MAX_EXPERTS] = { 0 };
    long dropped = keep_within_capacity(&b->routing, n, k, E, none,
                                        expert_capacity(s), b->taken);
    int *count = b->expert_count, *offset = b->expert_offset;
    pack_by_expert(&b->routing, x, n, k, E, C, b->send_rows, b->send_expert,
                   b->slot_row, count, offset);
    for (int e = 0; e < E; e++)
        if (count[e] > 0)
            expert_forward(&b->ws, &w->expert[e],
                           b->send_out + (size_t)offset[e] * C,
                           b->send_rows + (size_t)offset[e] * C, b->hidden,
                           b->active, count[e], C, &b->flops);
    combine_tokens(&b->routing, b->slot_row, b->send_out, x, n, k, C, y);
    memcpy(routed, b->routing.routed, sizeof(long) * (size_t)E);
    return dropped;
}
/* dx (NR, C) from dy (NR, C), after moe_reference on x (NR, C); every
   weight's gradient is added into g. */
static void moe_reference_backward(Layer *b, const MoeShape *s,
                                   const MoeWeights *w, MoeWeights *g,
                                   const real *x, const real *dy, real *dx)
{
    int n = s->tokens * s->ranks, k = s->top_k, C = s->hidden;
    slot_gradients(&b->routing, b->slot_row, b->send_out, dy, n, k, C,
                   b->send_grad, b->dgate);
    for (int e = 0; e < s->experts; e++) {
        size_t at = (size_t)b->expert_offset[e] * C;
        if (b->expert_count[e] > 0)
            expert_backward(&b->ws, &w->expert[e], &g->expert[e],
                            b->send_din + at, b->send_grad + at,
                            b->send_rows + at, b->hidden, b->active,
                            b->dhidden, b->dactive, b->expert_count[e], C,
                            &b->flops);
    }
    token_gradients(&b->ws, s, &b->routing, b->slot_row, b->send_din,
                    b->dgate, w, g, x, dy, n, b->dlogits, b->dfrom_router,
                    dx, &b->flops);
}
static const double gradcheck_atol = 2e-3, gradcheck_rtol = 2e-2;
enum { GRADCHECK_SAMPLES = 6 };

/* L = sum of dy . y, in double, for the reference's y (n, C); 1 in
   *same when the routing is the one saved in expert0 and kept0 (n k). */
static double layer_loss(Layer *b, const MoeShape *s, const MoeWeights *w,
                         const real *x, const real *dy, real *y,
                         const int *expert0, const int *kept0, int *same)
{
    long routed[MOE_MAX_EXPERTS];
    int n = s->tokens, k = s->top_k;
    moe_reference(b, s, w, x, y, routed);
    *same = memcmp(b->routing.expert, expert0, sizeof(int) * n * k) == 0
         && memcmp(b->routing.kept, kept0, sizeof(int) * n * k) == 0;
    double loss = 0;
    for (size_t i = 0; i < (size_t)n * s->hidden; i++)
        loss += (double)dy[i] * y[i];
    return loss;
}

/* One rank: the central differences of a sample of every tensor's entries
   against the backward pass; printed on f as the options ask. 0: OK,
   1: FAIL, 2: no memory. */
static int moe_gradcheck(const MoeShape *s, FILE *f, Option *o)
{
    int n = s->tokens, C = s->hidden, E = s->experts, k = s->top_k;
    long capacity = expert_capacity(s), slots = (long)k * n;
    int M = (int)(capacity < slots ? capacity : slots);
    MoeWeights w, g;
    Layer b;
    size_t nc = (size_t)n * C;
    real *x = malloc(sizeof(real) * nc), *dy = malloc(sizeof(real) * nc);
    real *y = malloc(sizeof(real) * nc), *dx = malloc(sizeof(real) * nc);
    int *expert0 = malloc(sizeof(int) * slots);
    int *kept0 = malloc(sizeof(int) * slots);
    if (!x || !dy || !y || !dx || !expert0 || !kept0
        || make_weights(s, 0, E, &w) != 0 || zero_weights(s, 0, E, &g) != 0
        || layer_init(&b, s, n, 0, M) != 0) {
        complain("moe", "--gradcheck: out of memory");
        return 2;
    }
    make_tokens(s, STREAM_TOKEN, 0, n, x);
    make_tokens(s, STREAM_GRADIENT, 0, n, dy);
    int same;
    layer_loss(&b, s, &w, x, dy, y, b.routing.expert, b.routing.kept, &same);
    memcpy(expert0, b.routing.expert, sizeof(int) * slots);
    memcpy(kept0, b.routing.kept, sizeof(int) * slots);
    moe_reference_backward(&b, s, &w, &g, x, dy, dx);
    int tensors = 2 + 4 * E, checked = 0, skipped = 0;
    double worst = 0;
    for (int t = 0; t < tensors; t++) {
        real *v, *d;                        /* the tensor and its gradient */
        size_t count;
        const Expert *we = &w.expert[(t - 1) / 4], *ge = &g.expert[(t - 1) / 4];
        switch (t == 0 ? -1 : t == tensors - 1 ? -2 : (t - 1) % 4) {
        case -1: v = w.router_w; d = g.router_w; count = (size_t)C * E; break;
        case -2: v = x; d = dx; count = nc; break;
        case 0: v = we->up_w; d = ge->up_w; count = (size_t)C * 4 * C; break;
        case 1: v = we->up_b; d = ge->up_b; count = (size_t)4 * C; break;
        case 2: v = we->down_w; d = ge->down_w; count = (size_t)4 * C * C;
                break;
        default: v = we->down_b; d = ge->down_b; count = (size_t)C; break;
        }
        Rng pick = moe_stream(s->seed, STREAM_GRADIENT + 1, (uint64_t)t);
        for (int sample = 0; sample < GRADCHECK_SAMPLES; sample++) {
            size_t i = (size_t)(rng_next(&pick) % count);
            real old = v[i];
            v[i] = old + (real)1e-2;
            double up = v[i] - old;
            int same_up, same_down;
            double loss_up = layer_loss(&b, s, &w, x, dy, y, expert0, kept0,
                                        &same_up);
            v[i] = old - (real)1e-2;
            double down = old - v[i];
            double loss_down = layer_loss(&b, s, &w, x, dy, y, expert0, kept0,
                                          &same_down);
            v[i] = old;
            if (!same_up || !same_down) {
                skipped++;
                continue;
            }
            double fd = (loss_up - loss_down) / (up + down);
            double err = fabs(fd - d[i])
                       / (gradcheck_atol + gradcheck_rtol * fabs((double)d[i]));
            worst = err > worst ? err : worst;
            checked++;
        }
    }
    if (report_requested(o)) {
        Report r = { .count = 0 };
        report_add(&r, "entries", FIELD_COUNT, checked);
        report_add(&r, "skipped", FIELD_COUNT, skipped);
        report_add(&r, "worst", FIELD_REAL, worst);
        report_add(&r, "atol", FIELD_SCI, gradcheck_atol);
        report_add(&r, "rtol", FIELD_SCI, gradcheck_rtol);
        report_text(&r, "result", worst <= 1 ? "OK" : "FAIL");
        print_report(f, &r, o);
    } else
        fprintf(f, "gradcheck: %d entries, %d skipped (the step changed "
                "the routing); worst |fd - analytic| / (%g + "
                "%g·|analytic|) = %.3g: %s\n", checked, skipped,
                gradcheck_atol, gradcheck_rtol, worst,
                worst <= 1 ? "OK" : "FAIL");
    layer_free(&b);
    free_weights(&w);
    free_weights(&g);
    free(x); free(dy); free(y); free(dx); free(expert0); free(kept0);
    return worst <= 1 ? 0 : 1;
}
static Option moe_options[] = {
    { "--experts", OPT_COUNT, MOE_MAX_EXPERTS, "E, the experts; a multiple "
      "of the ranks", 8, NULL, 0 },
    { "--top-k", OPT_COUNT, MOE_MAX_EXPERTS, "k, the experts each token is "
      "sent to", 2, NULL, 0 },
    { "--tokens", OPT_COUNT, 1 << 20, "N, the tokens on each rank", 512,
      NULL, 0 },
    { "--hidden", OPT_COUNT, 4096, "C, the width of a token; each expert is "
      "an MLP C -> 4C -> C", 64, NULL, 0 },
    { "--capacity-factor", OPT_NUMBER, 1000, "F: each expert takes at most "
      "ceil(F k N R / E) token-slots, the rest are dropped", 1.25, NULL, 0 },
    { "--skew", OPT_NUMBER, 100, "S: expert e's router score gains "
      "-S ln(e + 1), a Zipf law of exponent S over the experts (default: "
      "none)", 0, NULL, 0 },
    { "--seed", OPT_WHOLE, 1e15, "of the weights and the tokens", 1, NULL,
      0 },
    { "--repeats", OPT_COUNT, 1000, "forward passes timed; the report gives "
      "each phase's median, on the slowest rank", 5, NULL, 0 },
    { "--verify", OPT_SWITCH, 0, "compare with the same layer on one rank, "
      "without the exchange", 0, NULL, 0 },
    { "--backward", OPT_SWITCH, 0, "also run the backward pass, timed; with "
      "--verify, compare the gradients too", 0, NULL, 0 },
    { "--gradcheck", OPT_SWITCH, 0, "on one rank: check the backward pass "
      "against central differences, and exit", 0, NULL, 0 },
    { "--tokens-csv", OPT_OUTPUT, 0, "also write each expert's routed, kept "
      "and dropped slots as CSV here", 0, NULL, 0 },
    OUTPUT_OPTIONS,
    { NULL, 0, 0, NULL, 0, NULL, 0 }
};

/* The shape from the options, or 2 after rank 0 said why it is refused. */
static int moe_shape(Option *o, int rank, int R, MoeShape *s)
{
    const char *command = "moe";
    *s = (MoeShape){ (int)option_number(o, "--experts"),
                     (int)option_number(o, "--top-k"),
                     (int)option_number(o, "--tokens"),
                     (int)option_number(o, "--hidden"), R,
                     option_number(o, "--capacity-factor"),
                     option_given(o, "--skew") ? option_number(o, "--skew")
                                               : 0,
                     (uint64_t)option_number(o, "--seed") };
    if (s->experts % R != 0) {
        if (rank == 0)
            complain(command, "--experts %d cannot be shared evenly by %d "
                     "ranks: E must be a multiple of the ranks", s->experts,
                     R);
        return 2;
    }
    if (s->top_k > s->experts) {
        if (rank == 0)
            complain(command, "--top-k %d is more than the %d experts: a "
                     "token chooses k different experts", s->top_k,
                     s->experts);
        return 2;
    }
    if (option_given(o, "--gradcheck") && R > 1) {
        if (rank == 0)
            complain(command, "--gradcheck runs on one rank, not %d", R);
        return 2;
    }
    double slots = (double)s->top_k * s->tokens * R;      /* k N R */
    if (slots * 4 * s->hidden > INT_MAX) {
        if (rank == 0)
            complain(command, "--top-k %d x --tokens %d x %d ranks x 4 x "
                     "--hidden %d is more than MPI's counts can hold (%d)",
                     s->top_k, s->tokens, R, s->hidden, INT_MAX);
        return 2;
    }
    return 0;
}
typedef struct {
    MoeShape shape;
    long capacity;                     /* slots per expert               */
    long routed[MOE_MAX_EXPERTS];      /* (E) slots sent to each expert  */
    long dropped;                      /* slots dropped                  */
    long unserved;                     /* tokens with every slot dropped */
    double bytes_mean, bytes_max;      /* sent by a rank to the others   */
    double rows_across;                /* rows sent to another rank      */
    double seconds[PHASES];            /* medians over the repeats       */
    int repeats;
    int backward;                      /* --backward                     */
    int verified, ok;                  /* --verify, and its verdict      */
    int routing_equal;                 /* slots and drops as reference's */
    double max_diff, atol, rtol;
    double max_ddx, max_dgrad;         /* with --backward                */
} MoeResult;

static void moe_report(Report *r, const MoeResult *m)
{
    const MoeShape *s = &m->shape;
    double slots = (double)s->top_k * s->tokens * s->ranks, busiest = 0;
    report_add(r, "experts", FIELD_COUNT, s->experts);
    report_add(r, "ranks", FIELD_COUNT, s->ranks);
    report_add(r, "experts_per_rank", FIELD_COUNT, s->experts / s->ranks);
    report_add(r, "top_k", FIELD_COUNT, s->top_k);
    report_add(r, "tokens_per_rank", FIELD_COUNT, s->tokens);
    report_add(r, "tokens", FIELD_COUNT, (double)s->tokens * s->ranks);
    report_add(r, "hidden", FIELD_COUNT, s->hidden);
    report_add(r, "capacity_factor", FIELD_REAL, s->capacity_factor);
    report_add(r, "skew", FIELD_REAL, s->skew);
    report_add(r, "slots", FIELD_COUNT, slots);
    report_add(r, "capacity", FIELD_COUNT, (double)m->capacity);
    static char keys[MOE_MAX_EXPERTS][32];    /* a report keeps the keys */
    for (int e = 0; e < s->experts; e++) {
        snprintf(keys[e], sizeof keys[e], "tokens_per_expert.e%d", e);
        report_add(r, keys[e], FIELD_COUNT, (double)m->routed[e]);
        busiest = m->routed[e] > busiest ? (double)m->routed[e] : busiest;
    }
    report_add(r, "dropped_tokens", FIELD_COUNT, (double)m->dropped);
    report_add(r, "drop_fraction", FIELD_FRACTION, m->dropped / slots);
    report_add(r, "tokens_unserved", FIELD_COUNT, (double)m->unserved);
    report_add(r, "load_imbalance", FIELD_REAL,
               busiest / (slots / s->experts));
    report_add(r, "alltoall_bytes_per_rank", FIELD_BYTES, m->bytes_mean);
    report_add(r, "alltoall_bytes_per_rank_max", FIELD_BYTES, m->bytes_max);
    report_add(r, "alltoall_bytes_per_token", FIELD_REAL,
               2 * m->rows_across * s->hidden * sizeof(real)
               / ((double)s->tokens * s->ranks));
    report_add(r, "alltoall_bytes_per_token_even", FIELD_REAL,
               2.0 * s->top_k * s->hidden * sizeof(real)
               * (s->ranks - 1) / s->ranks);
    report_add(r, "repeats", FIELD_COUNT, m->repeats);
    for (int p = 0; p < (m->backward ? PHASES : PHASE_BACKWARD); p++)
        report_add(r, phase_keys[p], FIELD_REAL, m->seconds[p]);
    if (m->verified) {
        report_add(r, "max_doutput", FIELD_SCI, m->max_diff);
        if (m->backward) {
            report_add(r, "max_ddx", FIELD_SCI, m->max_ddx);
            report_add(r, "max_dgrad", FIELD_SCI, m->max_dgrad);
        }
        report_add(r, "atol", FIELD_SCI, m->atol);
        report_add(r, "rtol", FIELD_SCI, m->rtol);
        report_add(r, "routing_equal", FIELD_COUNT, m->routing_equal);
        report_text(r, "result", m->ok ? "OK" : "FAIL");
    }
}
static void moe_print(FILE *f, const MoeResult *m)
{
    const MoeShape *s = &m->shape;
    int R = s->ranks, per = s->experts / R;
    double slots = (double)s->top_k * s->tokens * R, busiest = 0;
    fprintf(f, "moe: %d experts on %s (%d each), top-%d of %s per rank, "
            "width %d\n", s->experts, counted(R, "rank", "ranks").s, per,
            s->top_k, counted(s->tokens, "token", "tokens").s, s->hidden);
    fprintf(f, "capacity: ceil(%g x %s / %d) = %s slots per expert\n",
            s->capacity_factor, grouped(slots).s, s->experts,
            grouped((double)m->capacity).s);
    fprintf(f, "%6s %5s %8s %8s %8s\n", "expert", "rank", "routed", "kept",
            "dropped");
    for (int e = 0; e < s->experts; e++) {
        long kept = m->routed[e] < m->capacity ? m->routed[e] : m->capacity;
        fprintf(f, "%6d %5d %8s %8s %8s\n", e, e / per,
                grouped((double)m->routed[e]).s, grouped((double)kept).s,
                grouped((double)(m->routed[e] - kept)).s);
        busiest = m->routed[e] > busiest ? (double)m->routed[e] : busiest;
    }
    fprintf(f, "dropped %s of %s slots (%s %%); %s lost every expert\n",
            grouped((double)m->dropped).s, grouped(slots).s,
            sig(100 * m->dropped / slots, 3).s,
            counted((double)m->unserved, "token", "tokens").s);
    fprintf(f, "load imbalance (busiest expert / mean): %s\n",
            sig(busiest / (slots / s->experts), 3).s);
    fprintf(f, "all-to-all: %s sent per rank (mean), %s per token "
            "(spread evenly: %s)\n", bytes_auto(m->bytes_mean).s,
            bytes_auto(2 * m->rows_across * s->hidden * sizeof(real)
                       / ((double)s->tokens * R)).s,
            bytes_auto(2.0 * s->top_k * s->hidden * sizeof(real)
                       * (R - 1) / R).s);
    fprintf(f, "time (median of %d, slowest rank):", m->repeats);
    int phases = m->backward ? PHASES : PHASE_BACKWARD;
    for (int p = 0; p < phases; p++)
        fprintf(f, " %s %s%s", phase_names[p], duration(m->seconds[p]).s,
                p + 1 < phases ? "," : "\n");
    if (!m->verified)
        return;
    fprintf(f, "verify: reference (%s, %d experts, one rank, no exchange) "
            "against %d experts on %s\n",
            counted((double)s->tokens * R, "token", "tokens").s,
            s->experts, s->experts, counted(R, "rank", "ranks").s);
    fprintf(f, "verify: tokens per expert and drops equal: %s\n",
            m->routing_equal ? "yes" : "no");
    fprintf(f, "verify: max |doutput| = %.3g\n", m->max_diff);
    if (m->backward)
        fprintf(f, "verify: backward, max |ddx| = %.3g, max |dgrad| = %.3g "
                "(each gradient within %g + %g·its largest |reference|)\n",
                m->max_ddx, m->max_dgrad, m->atol, m->rtol);
    fprintf(f, "verify: tolerance %g + %g·|reference|: %s\n", m->atol,
            m->rtol, m->ok ? "OK" : "FAIL");
}

static int moe_tokens_csv(const char *path, const MoeResult *m)
{
    Output out;
    if (output_open_path(&out, "moe", "--tokens-csv", path) != 0)
        return 2;
    int per = m->shape.experts / m->shape.ranks;
    fprintf(out.file, "expert,rank,routed,kept,dropped,capacity\n");
    for (int e = 0; e < m->shape.experts; e++) {
        long kept = m->routed[e] < m->capacity ? m->routed[e] : m->capacity;
        fprintf(out.file, "%d,%d,%ld,%ld,%ld,%ld\n", e, e / per,
                m->routed[e], kept, m->routed[e] - kept, m->capacity);
    }
    return output_commit(&out, "moe");
}
static int moe_run(Option *o, int rank, int R);

int main(int argc, char **argv)
{
    int rank = launcher_rank(), R;      /* flags first, then MPI, as in
                                           minigpt and allreduce */
    int status = parse_options_as(rank == 0, "moe", "One mixture-of-experts "
                                  "layer, its experts spread over the MPI "
                                  "ranks: top-k routing, a capacity, and "
                                  "two all-to-alls.", moe_options,
                                  argc - 1, argv + 1);
    if (status != 0)       /* --help was printed (1), or a flag refused (2) */
        return status == 1 ? 0 : status;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    status = moe_run(moe_options, rank, R);
    MPI_Finalize();
    return status;
}
static int verify_layer(const MoeShape *s, const real *y, const real *dx,
                        const MoeWeights *g, MoeResult *m);

static int moe_run(Option *o, int rank, int R)
{
    MoeShape s;
    if (moe_shape(o, rank, R, &s) != 0)
        return 2;
    if (option_given(o, "--gradcheck")) {
        Output out;
        if (output_open(&out, "moe", o) != 0)
            return 2;
        int verdict = moe_gradcheck(&s, out.file, o);
        return output_commit(&out, "moe") != 0 ? 2 : verdict;
    }
    int N = s.tokens, C = s.hidden, k = s.top_k, per = s.experts / R;
    long capacity = expert_capacity(&s);
    long most = (long)per * capacity, slots = (long)k * N * R;
    int V = (int)(most < slots ? most : slots);
    int M = (int)(capacity < V ? capacity : V);
    MoeWeights w, g;                    /* the weights and their gradients */
    Layer b;
    size_t numbers = (size_t)N * C;
    real *x = malloc(sizeof(real) * numbers);                 /* (N, C) */
    real *y = malloc(sizeof(real) * numbers);                 /* (N, C) */
    real *dy = malloc(sizeof(real) * numbers);                /* (N, C) */
    real *dx = malloc(sizeof(real) * numbers);                /* (N, C) */
    int repeats = (int)option_number(o, "--repeats");
    int backward = option_given(o, "--backward");
    double *times = malloc(sizeof(double) * PHASES * (size_t)repeats);
    if (make_weights(&s, rank * per, per, &w) != 0
        || zero_weights(&s, rank * per, per, &g) != 0
        || layer_init(&b, &s, N, V, M) != 0 || !x || !y || !dy || !dx
        || !times) {
        complain("moe", "rank %d: out of memory", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    make_tokens(&s, STREAM_TOKEN, (long)rank * N, N, x);
    make_tokens(&s, STREAM_GRADIENT, (long)rank * N, N, dy);
    for (int t = 0; t < repeats; t++) {
        MPI_Barrier(MPI_COMM_WORLD);
        moe_forward(&b, &s, &w, x, y, MPI_COMM_WORLD);
        b.seconds[PHASE_BACKWARD] = 0;
        if (backward) {
            free_weights(&g);             /* each pass's gradients afresh */
            zero_weights(&s, rank * per, per, &g);
            double start = MPI_Wtime();
            moe_backward(&b, &s, &w, &g, x, dy, dx, MPI_COMM_WORLD);
            b.seconds[PHASE_BACKWARD] = MPI_Wtime() - start;
        }
        MPI_Reduce(b.seconds, times + (size_t)t * PHASES, PHASES,
                   MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    }
    MoeResult m = { .shape = s, .capacity = capacity, .repeats = repeats,
                    .backward = backward };
    long unserved = 0, counts[2], sums[2];
    for (int i = 0; i < N; i++) {
        int lost = 1;
        for (int j = 0; j < k; j++)
            lost &= b.slot_row[(size_t)i * k + j] < 0;
        unserved += lost;
    }
    MPI_Reduce(b.routing.routed, m.routed, s.experts, MPI_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);
    counts[0] = b.dropped;
    counts[1] = unserved;
    MPI_Reduce(counts, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    m.dropped = sums[0];
    m.unserved = sums[1];
    double rows = 0;                          /* rows this rank sent across */
    for (int d = 0; d < R; d++)
        rows += d == rank ? 0 : b.send_count[d];
    MPI_Reduce(&rows, &m.rows_across, 1, MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&b.sent_bytes, &m.bytes_mean, 1, MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&b.sent_bytes, &m.bytes_max, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    m.bytes_mean /= R;
    if (rank == 0)
        for (int p = 0; p < PHASES; p++) {
            double v[1000];                          /* --repeats <= 1000 */
            for (int t = 0; t < repeats; t++)
                v[t] = times[(size_t)t * PHASES + p];
            m.seconds[p] = median_in_place(v, repeats);
        }
    int status = 0;
    if (option_given(o, "--verify"))
        status = verify_layer(&s, y, backward ? dx : NULL, &g, &m);
    if (rank == 0 && status == 0) {
        Output out;
        const char *csv = option_text(o, "--tokens-csv");
        if (csv != NULL)
            status = moe_tokens_csv(csv, &m);
        if (status == 0)
            status = output_open(&out, "moe", o);
        if (status == 0) {
            if (report_requested(o)) {
                Report r = { .count = 0 };
                moe_report(&r, &m);
                print_report(out.file, &r, o);
            } else
                moe_print(out.file, &m);
            status = output_commit(&out, "moe");
        }
        if (status == 0 && m.verified && !m.ok)
            status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    layer_free(&b);
    free_weights(&w);
    free_weights(&g);
    free(x);
    free(y);
    free(dy);
    free(dx);
    free(times);
    return status;
}
static const double moe_atol = 1e-6, moe_rtol = 1e-5;

/* The largest |got - want| of n numbers; clears *ok where one is more than
   moe_atol + moe_rtol x the largest |want| (by_tensor) or x its own. */
static double worst_difference(const real *got, const real *want,
                               size_t n, int by_tensor, int *ok)
{
    double largest = 0, worst = 0;
    for (size_t i = 0; i < n; i++)
        largest = fabs((double)want[i]) > largest ? fabs((double)want[i])
                                                  : largest;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        double size = by_tensor ? largest : fabs((double)want[i]);
        *ok &= d <= moe_atol + moe_rtol * size;
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* An expert's gradients, one after another: (8C^2 + 5C) numbers. */
static size_t expert_size(int C) { return (size_t)8 * C * C + 5 * (size_t)C; }

static void pack_expert(const Expert *ex, int C, real *flat)
{
    size_t C4 = (size_t)4 * C;
    memcpy(flat, ex->up_w, sizeof(real) * C * C4);
    memcpy(flat + C * C4, ex->up_b, sizeof(real) * C4);
    memcpy(flat + C * C4 + C4, ex->down_w, sizeof(real) * C4 * C);
    memcpy(flat + 2 * C * C4 + C4, ex->down_b, sizeof(real) * C);
}

/* 0, or 2 if rank 0 could not allocate the reference. dx (N, C) and g:
   this rank's gradients, or dx NULL without --backward. */
static int verify_layer(const MoeShape *s, const real *y, const real *dx,
                        const MoeWeights *g, MoeResult *m)
{
    int rank, R = s->ranks, N = s->tokens, C = s->hidden, E = s->experts;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t all = (size_t)N * R * C, P = expert_size(C);
    size_t held = (size_t)(E / R) * P;
    real *got = rank == 0 ? malloc(sizeof(real) * all) : NULL; /* (NR,C) */
    real *got_dx = rank == 0 ? malloc(sizeof(real) * all) : NULL;
    real *got_router = rank == 0 ? malloc(sizeof(real) * C * E) : NULL;
    real *got_experts = rank == 0 ? malloc(sizeof(real) * E * P) : NULL;
    real *mine = malloc(sizeof(real) * held);   /* (E / R, P) */
    MPI_Gather(y, N * C, MPI_FLOAT, got, N * C, MPI_FLOAT, 0,
               MPI_COMM_WORLD);
    if (dx != NULL) {
        MPI_Gather(dx, N * C, MPI_FLOAT, got_dx, N * C, MPI_FLOAT, 0,
                   MPI_COMM_WORLD);
        MPI_Reduce(g->router_w, got_router, C * E, MPI_FLOAT, MPI_SUM, 0,
                   MPI_COMM_WORLD);
        for (int e = 0; e < g->held; e++)
            pack_expert(&g->expert[g->first + e], C, mine + (size_t)e * P);
        MPI_Gather(mine, (int)held, MPI_FLOAT, got_experts, (int)held, MPI_FLOAT, 0,
                   MPI_COMM_WORLD);
    }
    free(mine);
    if (rank != 0)
        return 0;
    m->verified = 1;
    m->atol = moe_atol;
    m->rtol = moe_rtol;
    MoeWeights w, gr;                   /* the reference's, all experts */
    Layer b;
    long capacity = expert_capacity(s), slots = (long)s->top_k * N * R;
    int M = (int)(capacity < slots ? capacity : slots);
    real *x = malloc(sizeof(real) * all), *want = malloc(sizeof(real) * all);
    real *dy = malloc(sizeof(real) * all), *want_dx = malloc(sizeof(real)
                                                             * all);
    real *flat = malloc(sizeof(real) * P);
    if (!got || !got_dx || !got_router || !got_experts || !x || !want
        || !dy || !want_dx || !flat || make_weights(s, 0, E, &w) != 0
        || zero_weights(s, 0, E, &gr) != 0
        || layer_init(&b, s, N * R, 0, M) != 0) {
        complain("moe", "--verify: out of memory for the reference");
        return 2;
    }
    make_tokens(s, STREAM_TOKEN, 0, N * R, x);
    long routed[MOE_MAX_EXPERTS];
    long dropped = moe_reference(&b, s, &w, x, want, routed);
    m->routing_equal = dropped == m->dropped
        && memcmp(routed, m->routed, sizeof(long) * s->experts) == 0;
    int within = 1;
    m->max_diff = worst_difference(got, want, all, 0, &within);
    if (dx != NULL) {
        make_tokens(s, STREAM_GRADIENT, 0, N * R, dy);
        moe_reference_backward(&b, s, &w, &gr, x, dy, want_dx);
        m->max_ddx = worst_difference(got_dx, want_dx, all, 1, &within);
        m->max_dgrad = worst_difference(got_router, gr.router_w,
                                        (size_t)C * E, 1, &within);
        size_t C4 = (size_t)4 * C, part[4] = { C * C4, C4, C4 * C, (size_t)C };
        for (int e = 0; e < E; e++) {
            pack_expert(&gr.expert[e], C, flat);
            for (size_t t = 0, at = 0; t < 4; at += part[t++]) {
                double d = worst_difference(got_experts + e * P + at, flat + at,
                                            part[t], 1, &within);
                m->max_dgrad = d > m->max_dgrad ? d : m->max_dgrad;
            }
        }
    }
    m->ok = within && m->routing_equal;
    layer_free(&b);
    free_weights(&w);
    free_weights(&gr);
    void *scratch[] = { got, got_dx, got_router, got_experts, x, want, dy,
                        want_dx, flat };
    for (size_t i = 0; i < sizeof scratch / sizeof scratch[0]; i++)
        free(scratch[i]);
    return 0;
}
