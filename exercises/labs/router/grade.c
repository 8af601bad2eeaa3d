/* exercises/labs/router/grade.c: the autograder of the router lab.

   The book's router and capacity rule are static in code/moe/moe.c, a
   whole MPI program; this file includes that source (its main renamed, so
   that the grader's is the program's) and calls route, expert_capacity
   and keep_within_capacity directly, in one process. route scores tokens
   with a linear layer: here an identity of E × E weights and no bias, so
   that its scores are the grader's own. The ranks' prefix sum that the
   layer gets from MPI_Exscan is summed here by hand. */
int moe_main(int argc, char **argv);
#define main moe_main
#include "moe.c"
#undef main

#include "lab_check.h"
#include "router.h"

enum { MOST_TOKENS = 64, MOST_RANKS = 4 };

/* What failed first, for each check. */
enum { CHECK_EXPERTS, CHECK_GATES, CHECK_ROUTED, CHECK_CAPACITY,
       CHECK_BEFORE, CHECK_KEPT, CHECKS };
static char failed[CHECKS][400];
static int scenarios;

static void fail(int check, const char *format, ...)
{
    if (failed[check][0])
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(failed[check], sizeof failed[check], format, args);
    va_end(args);
}

static uint32_t next_random(uint64_t *state)             /* xorshift64* */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (uint32_t)(*state * 0x2545f4914f6cdd1dull >> 32);
}

/* Scores (n, E): multiples of 1/64 in [-3, 3], so that two are either
   equal or clearly apart, plus `skew` for expert 0; every fifth token
   scores all experts alike. */
static void make_scores(float *scores, int n, int E, float skew,
                        uint64_t *rng)
{
    for (int i = 0; i < n; i++)
        for (int e = 0; e < E; e++)
            scores[(size_t)i * E + e] = i % 5 == 4 ? 0.5f
                : (float)((int)(next_random(rng) % 385) - 192) / 64.0f
                  + (e == 0 ? skew : 0.0f);
}

static void scenario(int E, int k, int R, int N, float skew, double F)
{
    static float scores[MOST_RANKS][MOST_TOKENS * MOE_MAX_EXPERTS];
    static real probs[MOST_TOKENS * MOE_MAX_EXPERTS], chosen[MOST_TOKENS];
    static int expert[MOST_RANKS][MOST_TOKENS * MOE_MAX_EXPERTS];
    static real gate[MOST_TOKENS * MOE_MAX_EXPERTS];
    static int kept[MOST_TOKENS * MOE_MAX_EXPERTS];
    static int got_expert[MOST_TOKENS * MOE_MAX_EXPERTS];
    static float got_gate[MOST_TOKENS * MOE_MAX_EXPERTS];
    static int got_kept[MOST_TOKENS * MOE_MAX_EXPERTS];
    static long routed[MOST_RANKS * MOE_MAX_EXPERTS];
    static real identity[MOE_MAX_EXPERTS * MOE_MAX_EXPERTS];
    static real no_bias[MOE_MAX_EXPERTS];
    long got_routed[MOE_MAX_EXPERTS], before[MOE_MAX_EXPERTS];
    long got_before[MOE_MAX_EXPERTS], taken[MOE_MAX_EXPERTS];
    char where[160];
    snprintf(where, sizeof where, "E %d, k %d, %d rank%s of %d token%s, "
             "skew %g, F %g", E, k, R, R == 1 ? "" : "s", N,
             N == 1 ? "" : "s", (double)skew, F);
    scenarios++;
    uint64_t rng = 0x2545f4914f6cdd1dull + (uint64_t)(E * 1000 + k * 100
                                                      + R * 10 + N);
    for (int c = 0; c < E; c++)
        for (int e = 0; e < E; e++)
            identity[c * E + e] = c == e;
    MoeShape shape = { .experts = E, .top_k = k, .tokens = N, .hidden = E,
                       .ranks = R, .capacity_factor = F };
    MoeWeights weights = { .router_w = identity, .router_b = no_bias };
    GemmWorkspace ws;
    gemm_workspace_init(&ws);
    for (int r = 0; r < R; r++) {
        make_scores(scores[r], N, E, skew, &rng);
        Routing routing = { .expert = expert[r], .gate = gate,
                            .kept = kept, .routed = routed + r * E,
                            .probs = probs, .chosen = chosen };
        route(&ws, &shape, &weights, scores[r], N, &routing);
        for (int e = 0; e < E; e++)
            got_routed[e] = -1;
        route_top_k(scores[r], N, E, k, got_expert, got_gate, got_routed);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < k; j++) {
                size_t slot = (size_t)i * k + j;
                if (got_expert[slot] != expert[r][slot])
                    fail(CHECK_EXPERTS, "%s: rank %d, token %d, choice %d: "
                         "got expert %d, want %d", where, r, i, j,
                         got_expert[slot], expert[r][slot]);
                if (!(fabsf(got_gate[slot] - gate[slot]) <= 1e-6f))
                    fail(CHECK_GATES, "%s: rank %d, token %d, choice %d: "
                         "got %.9g, want %.9g", where, r, i, j,
                         (double)got_gate[slot], (double)gate[slot]);
            }
        for (int e = 0; e < E; e++)
            if (got_routed[e] != routed[r * E + e])
                fail(CHECK_ROUTED, "%s: rank %d, expert %d: got %ld, want "
                     "%ld", where, r, e, got_routed[e], routed[r * E + e]);
    }
    gemm_workspace_free(&ws);
    long capacity = expert_capacity(&shape);
    long got_capacity = capacity_slots(k, N, R, E, F);
    if (got_capacity != capacity)
        fail(CHECK_CAPACITY, "%s: got %ld, want %ld", where, got_capacity,
             capacity);
    for (int r = 0; r < R; r++) {
        for (int e = 0; e < E; e++) {      /* MPI_Exscan's sum, by hand */
            before[e] = 0;
            for (int q = 0; q < r; q++)
                before[e] += routed[q * E + e];
            got_before[e] = -1;
        }
        slots_before(routed, R, E, r, got_before);
        for (int e = 0; e < E; e++)
            if (got_before[e] != before[e])
                fail(CHECK_BEFORE, "%s: rank %d, expert %d: got %ld, want "
                     "%ld", where, r, e, got_before[e], before[e]);
        Routing routing = { .expert = expert[r], .kept = kept };
        long dropped = keep_within_capacity(&routing, N, k, E, before,
                                            capacity, taken);
        for (int slot = 0; slot < N * k; slot++)
            got_kept[slot] = -1;
        long got_dropped = keep_slots(expert[r], N, k, E, before, capacity,
                                      got_kept);
        for (int slot = 0; slot < N * k; slot++)
            if (got_kept[slot] != kept[slot])
                fail(CHECK_KEPT, "%s, capacity %ld: rank %d, token %d, "
                     "choice %d (expert %d): kept %d, want %d", where,
                     capacity, r, slot / k, slot % k, expert[r][slot],
                     got_kept[slot], kept[slot]);
        if (got_dropped != dropped)
            fail(CHECK_KEPT, "%s, capacity %ld: rank %d dropped %ld, want "
                 "%ld", where, capacity, r, got_dropped, dropped);
    }
}

/* Capacities alone, where the product is whole or nearly so. */
static void capacities(void)
{
    static const struct { int k, N, R, E; double F; } cases[] = {
        { 2, 50, 4, 4, 1.1 },   /* 1.1 × 100: 110, not 111          */
        { 1, 3, 1, 2, 1.0 },    /* 1.5: 2                            */
        { 2, 10, 3, 8, 1.25 },  /* 9.375: 10                         */
        { 1, 1, 1, 64, 0.5 },   /* 1/128: 1                          */
        { 8, 4096, 8, 64, 1.0 },
        { 2, 1000, 16, 64, 0.7 },
        { 2, 7, 2, 4, 1.0 / 3.0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MoeShape s = { .experts = cases[i].E, .top_k = cases[i].k,
                       .tokens = cases[i].N, .ranks = cases[i].R,
                       .capacity_factor = cases[i].F };
        long want = expert_capacity(&s);
        long got = capacity_slots(cases[i].k, cases[i].N, cases[i].R,
                                  cases[i].E, cases[i].F);
        if (got != want)
            fail(CHECK_CAPACITY, "k %d, N %d, R %d, E %d, F %.17g: got %ld, "
                 "want %ld", cases[i].k, cases[i].N, cases[i].R, cases[i].E,
                 cases[i].F, got, want);
    }
}

int main(void)
{
    static const int experts[] = { 2, 4, 8, 64 };
    static const double factors[] = { 0.25, 1.0, 1.25 };
    for (int a = 0; a < 4; a++) {
        int E = experts[a];
        int ks[] = { 1, 2, E / 2 > 2 ? E / 2 : E, E };
        for (int b = 0; b < 4; b++)
            for (int R = 1; R <= 3; R += 2)
                for (int N = 1; N <= 32; N += 31)
                    for (int f = 0; f < 3; f++) {
                        scenario(E, ks[b], R, N, 0.0f, factors[f]);
                        scenario(E, ks[b], R, N, 1.5f, factors[f]);
                    }
    }
    capacities();
    const char *what[CHECKS] = {
        "route_top_k: each token's k experts, best first, = route's",
        "route_top_k: the gates, renormalised, = route's to 1e-6",
        "route_top_k: the slots routed to each expert = route's",
        "capacity_slots = expert_capacity (and in 7 more cases, 1.1 x 100 "
        "among them)",
        "slots_before: each expert's slots from earlier ranks = "
        "MPI_Exscan's sum",
        "keep_slots: the slots kept and the count dropped = "
        "keep_within_capacity's",
    };
    for (int c = 0; c < CHECKS; c++)
        lab_check(!failed[c][0], "%s, %d cases%s%s", what[c], scenarios,
                  failed[c][0] ? ": " : "", failed[c]);
    return lab_finish("router");
}
