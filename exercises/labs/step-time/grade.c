/* exercises/labs/step-time/grade.c: the autograder of the lab of
   chapter 3. It links the student's ring_time.c with the chapter's own
   code/fleet/collectives.c and compares, for the three collectives, ring
   sizes from 1 to 1,024, buffers from 0 to 1 GB, the H100's NVLink, NIC
   and PCIe links at their line rate and at 80 % of it, and with and
   without switches that add, the student's bytes and seconds with
   collective_bytes_sent and collective_seconds_in_network, and the two
   bandwidths with their definitions in nccl-tests' terms (the bus factor
   from ring_bytes_sent). All must agree to a relative 1e-12. A failed check
   names the first input it failed on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab_tally.h"
#include "ring_time.h"

#define RELATIVE 1e-12
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static const double ranks_grid[] = { 1, 2, 3, 8, 16, 128, 1024 };
/* 100,663,296 B: one tensor-parallel all-reduce of the running example,
   a micro-batch of 4,096 tokens of width 12,288 in 16 bits */
static const double bytes_grid[] = { 0, 1, 4096, 1e6, 100663296, 1e9 };
static const double efficiency_grid[] = { 1, 0.8 };
static const char *const names[] = { "all-reduce", "reduce-scatter",
                                     "all-gather" };

/* got within a relative 1e-12 of want; 0 wants 0 (to 1e-300). */
static int same(double got, double want)
{
    return isfinite(got)
        && fabs(got - want) <= RELATIVE * fabs(want) + 1e-300;
}

typedef struct {
    LabTally sent_ring, sent_switch, time_ring, time_switch, algbw, busbw,
             busbw_is_link;
} Tallies;

static void check_one(Tallies *t, Collective c, double bytes, double n,
                      const Link *l, int in_network)
{
    double sent = bytes_each_rank_sends(c, bytes, n, in_network);
    double want_sent = collective_bytes_sent(c, bytes, n, in_network);
    double time = collective_time(c, bytes, n, l->latency, l->bandwidth,
                                  in_network);
    double want_time = collective_seconds_in_network(c, bytes, n, l,
                                                     in_network);
    const char *how = in_network ? "in the network" : "on a ring";
    lab_tally(in_network ? &t->sent_switch : &t->sent_ring,
              same(sent, want_sent), "%s of %.0f B on %g ranks %s: got "
              "%.17g B, want %.17g", names[c], bytes, n, how, sent,
              want_sent);
    lab_tally(in_network ? &t->time_switch : &t->time_ring,
              same(time, want_time), "%s of %.0f B on %g ranks %s, %s at "
              "%g B/s, %g s a step: got %.17g s, want %.17g", names[c],
              bytes, n, how, l->name, l->bandwidth, l->latency, time,
              want_time);
    if (in_network || want_time <= 0)
        return;
    double algbw = algorithm_bandwidth(bytes, want_time);
    double busbw = bus_bandwidth(c, bytes, want_time, n);
    double want_busbw = ring_bytes_sent(c, bytes, n) / want_time;
    lab_tally(&t->algbw, same(algbw, bytes / want_time), "%s of %.0f B in "
              "%.17g s: got %.17g B/s, want %.17g", names[c], bytes,
              want_time, algbw, bytes / want_time);
    lab_tally(&t->busbw, same(busbw, want_busbw), "%s of %.0f B on %g ranks "
              "in %.17g s: got %.17g B/s, want %.17g", names[c], bytes, n,
              want_time, busbw, want_busbw);
    /* without latency a ring's busbw is the link's rate, whatever n */
    if (bytes <= 0)
        return;
    Link fast = *l;
    fast.latency = 0;
    double ideal = collective_seconds(c, bytes, n, &fast);
    double ideal_busbw = bus_bandwidth(c, bytes, ideal, n);
    lab_tally(&t->busbw_is_link, same(ideal_busbw, l->bandwidth), "%s of "
              "%.0f B on %g ranks at %g B/s, no latency: busbw %.17g B/s",
              names[c], bytes, n, l->bandwidth, ideal_busbw);
}

/* Design A's tensor-parallel all-reduce, as the chapter prints it. */
static void check_design_a(void)
{
    const Gpu *h100 = next_gpu(first_gpu());
    Link nvlink = gpu_link(h100, LINK_NVLINK, 1);
    double bytes = 100663296, n = 8;
    double want = collective_seconds(ALL_REDUCE, bytes, n, &nvlink);
    double got = collective_time(ALL_REDUCE, bytes, n, nvlink.latency,
                                 nvlink.bandwidth, 0);
    double busbw = bus_bandwidth(ALL_REDUCE, bytes, want, n);
    double want_busbw = ring_bytes_sent(ALL_REDUCE, bytes, n) / want;
    lab_check(same(got, want) && same(busbw, want_busbw),
              "design A's all-reduce, %.0f B over 8 %s GPUs on NVLink: "
              "%.6g s, busbw %.6g B/s (want %.6g s, %.6g B/s)", bytes,
              h100->key, got, busbw, want, want_busbw);
}

int main(void)
{
    printf("lab step-time: the student's collectives against "
           "code/fleet/collectives.c\n");
    Tallies t;
    memset(&t, 0, sizeof t);
    const Gpu *h100 = next_gpu(first_gpu());
    for (int k = LINK_NVLINK; k <= LINK_PCIE; k++)
        for (int e = 0; e < COUNT(efficiency_grid); e++) {
            Link l = gpu_link(h100, (LinkKind)k, efficiency_grid[e]);
            for (int c = ALL_REDUCE; c <= ALL_GATHER; c++)
                for (int n = 0; n < COUNT(ranks_grid); n++)
                    for (int b = 0; b < COUNT(bytes_grid); b++)
                        for (int in_network = 0; in_network <= 1;
                             in_network++)
                            check_one(&t, (Collective)c, bytes_grid[b],
                                      ranks_grid[n], &l, in_network);
        }
    lab_tally_check(&t.sent_ring, "bytes_each_rank_sends on a ring");
    lab_tally_check(&t.sent_switch, "bytes_each_rank_sends in the network");
    lab_tally_check(&t.time_ring, "collective_time on a ring");
    lab_tally_check(&t.time_switch, "collective_time in the network");
    lab_tally_check(&t.algbw, "algorithm_bandwidth");
    lab_tally_check(&t.busbw, "bus_bandwidth");
    lab_tally_check(&t.busbw_is_link, "bus_bandwidth without latency is the "
                    "link's rate on every ring");
    check_design_a();
    return lab_finish("step-time");
}
