/* Tangled from chapters/03-step.nw and chapters/11d-hierarchical.nw; edit the chapters, not this file. */
#include "fleet.h"

double link_latency(LinkKind k)
{
    static const double seconds[] = { 3.4e-6, 14e-6, 5.7e-6 };
    return seconds[k];                 /* NVLink, NIC, PCIe: per ring step */
}

Link gpu_link(const Gpu *g, LinkKind k, double efficiency)
{
    static const char *const names[] = { "NVLink", "NIC", "PCIe" };
    double rate = k == LINK_NVLINK ? g->nvlink_bandwidth
                : k == LINK_NIC    ? g->nic_bandwidth : g->pcie_bandwidth;
    Link l = { names[k], rate * efficiency, link_latency(k) };
    return l;
}

int link_reduces(const Gpu *g, LinkKind k)
{
    return (k == LINK_NVLINK && g->nvlink_reduces) || k == LINK_NIC;
}
double ring_steps(Collective c, double n)
{
    return (c == ALL_REDUCE ? 2 : 1) * (n - 1);
}

double ring_bytes_sent(Collective c, double bytes, double n)
{
    return ring_steps(c, n) / n * bytes;          /* 2(n-1)/n or (n-1)/n */
}

double collective_bytes_sent(Collective c, double bytes, double n,
                             int in_network)
{
    if (n <= 1)
        return 0;
    return in_network && c == ALL_REDUCE ? bytes : ring_bytes_sent(c, bytes, n);
}

double collective_steps(Collective c, double n, int in_network)
{
    if (n <= 1)
        return 0;
    return in_network && c == ALL_REDUCE ? 2 : ring_steps(c, n);
}

double collective_seconds_in_network(Collective c, double bytes, double n,
                                     const Link *l, int in_network)
{
    return collective_steps(c, n, in_network) * l->latency
         + collective_bytes_sent(c, bytes, n, in_network) / l->bandwidth;
}

double collective_seconds(Collective c, double bytes, double n, const Link *l)
{
    return collective_seconds_in_network(c, bytes, n, l, 0);
}
double hierarchical_allreduce_seconds(double bytes, double n, double group,
                                      const Link *inside, const Link *across)
{
    return collective_seconds(REDUCE_SCATTER, bytes, group, inside)
         + collective_seconds(ALL_REDUCE, bytes / group, n / group, across)
         + collective_seconds(ALL_GATHER, bytes, group, inside);
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
                           double k, int in_network)
{
    double gathers, scatters;
    data_parallel_collectives(stage, k, &gathers, &scatters);
    if (stage == 0)                              /* one all-reduce */
        return collective_bytes_sent(ALL_REDUCE, model_bytes, ranks,
                                     in_network);
    return (gathers + scatters) * ring_bytes_sent(ALL_GATHER, model_bytes,
                                                  ranks);
}

double data_parallel_messages(int stage, double units, double ranks, double k,
                              int in_network)
{
    double gathers, scatters;
    data_parallel_collectives(stage, k, &gathers, &scatters);
    if (stage == 0)
        return units * collective_steps(ALL_REDUCE, ranks, in_network);
    return units * (gathers + scatters) * collective_steps(ALL_GATHER, ranks, 0);
}
