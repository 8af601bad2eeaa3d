/* Tangled from chapters/03-step.nw; edit the chapter, not this file. */
#include "fleet.h"

double link_latency(LinkKind k)
{
    static const double seconds[] = { 3.4e-6, 14e-6, 5.7e-6 };
    return seconds[k];                 /* NVLink, NIC, PCIe: per ring step */
}

Link gpu_link(const Gpu *g, LinkKind k, double efficiency, int in_network)
{
    static const char *const names[] = { "NVLink", "NIC", "PCIe" };
    double rate = k == LINK_NVLINK ? g->nvlink_bandwidth
                : k == LINK_NIC    ? g->nic_bandwidth : g->pcie_bandwidth;
    int adds = (k == LINK_NVLINK && g->nvlink_reduces) || k == LINK_NIC;
    Link l = { names[k], rate * efficiency, link_latency(k),
               in_network && adds };
    return l;
}
double ring_steps(Collective c, double n)
{
    return (c == ALL_REDUCE ? 2 : 1) * (n - 1);
}

double ring_bytes_sent(Collective c, double bytes, double n)
{
    return ring_steps(c, n) / n * bytes;          /* 2(n-1)/n or (n-1)/n */
}

static int reduced_in_network(Collective c, const Link *l)
{
    return l != NULL && l->in_network && c == ALL_REDUCE;
}

double collective_bytes_sent(Collective c, double bytes, double n,
                             const Link *l)
{
    if (n <= 1)
        return 0;
    return reduced_in_network(c, l) ? bytes : ring_bytes_sent(c, bytes, n);
}

double collective_steps(Collective c, double n, const Link *l)
{
    if (n <= 1)
        return 0;
    return reduced_in_network(c, l) ? 2 : ring_steps(c, n);
}

double collective_seconds(Collective c, double bytes, double n, const Link *l)
{
    return collective_steps(c, n, l) * l->latency
         + collective_bytes_sent(c, bytes, n, l) / l->bandwidth;
}
double tp_bytes_per_layer(double tokens, double hidden, double tp)
{
    double activations = 2 * tokens * hidden;      /* 16-bit, (b, s, h) */
    return 4 * ring_bytes_sent(ALL_REDUCE, activations, tp);
}
/* Gathers and reduce-scatters of the whole model per step. */
static void data_parallel_collectives(int stage, double k, double *gathers,
                                      double *scatters)
{
    *scatters = stage >= 2 ? k : 1;              /* the gradient           */
    *gathers = stage == 3 ? 2 * k : 1;           /* the weights (or the sum) */
}

double data_parallel_bytes(int stage, double model_bytes, double ranks,
                           double k, const Link *l)
{
    double gathers, scatters;
    data_parallel_collectives(stage, k, &gathers, &scatters);
    if (stage == 0)                              /* one all-reduce */
        return collective_bytes_sent(ALL_REDUCE, model_bytes, ranks, l);
    return (gathers + scatters) * ring_bytes_sent(ALL_GATHER, model_bytes,
                                                  ranks);
}

double data_parallel_messages(int stage, double units, double ranks, double k,
                              const Link *l)
{
    double gathers, scatters;
    data_parallel_collectives(stage, k, &gathers, &scatters);
    if (stage == 0)
        return units * collective_steps(ALL_REDUCE, ranks, l);
    return units * (gathers + scatters) * collective_steps(ALL_GATHER, ranks, l);
}
