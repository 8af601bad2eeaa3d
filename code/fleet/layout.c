/* Tangled from chapters/05-layout.nw, chapters/91-planner-subcommands.nw and chapters/99e-predict-plumbing.nw; edit the chapters, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

static int crosses_nodes(double stride, double degree, double per_node)
{
    return degree > 1 && stride * degree > per_node;
}

/* The link an axis uses, at the bandwidth a collective reaches on it. */
static Link plan_link(const Fleet *f, const Assumptions *a, int nic)
{
    if (nic)
        return (Link){ "NIC", f->nic_bandwidth * a->link_efficiency,
                       a->nic_latency };
    return (Link){ "NVLink", f->nvlink_bandwidth * a->link_efficiency,
                   a->nvlink_latency };
}
static double heaviest_stage_layers(const Layout *l)
{
    return ceil(l->layers / l->pp);
}

/* The bubble as a fraction of the heaviest stage's compute. Equal chunks:
   the closed form. Unequal ones (the layers do not divide into p v equal
   chunks): the simulator, each chunk taking its own layers' time. */
static double plan_bubble_over_compute(const Layout *l, double R)
{
    int P = (int)l->pp, v = (int)l->chunks, L = (int)l->layers;
    if (l->chunks == 1 || L % (P * v) == 0)
        return bubble_over_compute_closed(l->schedule, P,
                                          (int)l->micro_batches, v, R,
                                          WEIGHT_SHARE_DEFAULT);
    double heaviest = heaviest_stage_layers(l);
    double *time = malloc(sizeof *time * P * v);
    for (int r = 0; r < P; r++) {
        int stage = L / P + (r < L % P);            /* layers of stage r */
        for (int c = 0; c < v; c++)
            time[c * P + r] = (stage / v + (c < stage % v)) / heaviest;
    }
    Pipeline sim = { .schedule = l->schedule, .stages = P,
                     .micro_batches = (int)l->micro_batches, .chunks = v,
                     .backward_ratio = R, .chunk_time = time };
    if (simulate_pipeline(&sim) != 0)    /* m a multiple of p: cannot be */
        abort();
    free(sim.ops), free(time);
    return sim.bubble_over_compute;
}

static void plan_compute(Plan *pl, const Fleet *f, const Assumptions *a)
{
    const Layout *l = &pl->l;
    double attention = 12 * l->layers * l->seq * l->hidden;  /* per token */
    /* a fused kernel recomputes its scores in both cases: nothing extra */
    double extra = l->recompute == RECOMPUTE_SELECTIVE
                 ? (l->attention == ATTENTION_FLASH ? 0 : attention / 3)
                 : l->recompute == RECOMPUTE_FULL
                 ? 2 * f->model_params + attention / 3 : 0;
    double tokens_per_gpu = f->batch_tokens / f->gpus;
    pl->model_flops = (6 * f->model_params + attention) * tokens_per_gpu;
    pl->hardware_flops = pl->model_flops + extra * tokens_per_gpu;
    double imbalance = heaviest_stage_layers(l) * l->pp / l->layers;
    pl->dense_compute_s = 6 * f->model_params * tokens_per_gpu
                        / (f->gpu->peak_flops * a->compute_efficiency);
    pl->compute_s = pl->hardware_flops * imbalance
                  / (f->gpu->peak_flops * a->compute_efficiency);
    pl->bubble_s = l->pp > 1
        ? plan_bubble_over_compute(l, a->backward_ratio) * pl->compute_s
        : 0;
}
static void plan_traffic(Plan *pl, const Fleet *f, const Assumptions *a)
{
    const Layout *l = &pl->l;
    double t = l->tp, cp = l->cp, pp = l->pp, m = l->micro_batches;
    double n = l->dp * cp;                 /* ranks that share the weights */
    double layers = heaviest_stage_layers(l);
    double kv = l->kv_heads > 0 ? l->kv_heads : l->heads;
    double act = l->micro_batch * l->seq / cp * l->hidden * 2;  /* bytes */
    pl->tp_nic = crosses_nodes(1, t, f->per_node);
    pl->cp_nic = crosses_nodes(t, cp, f->per_node);
    pl->pp_nic = crosses_nodes(t * cp, pp, f->per_node);
    pl->dp_nic = crosses_nodes(t * cp * pp, l->dp, f->per_node)
              || pl->cp_nic;
    Link tp_link = plan_link(f, a, pl->tp_nic);
    Link cp_link = plan_link(f, a, pl->cp_nic);
    Link pp_link = plan_link(f, a, pl->pp_nic);
    Link dp_link = plan_link(f, a, pl->dp_nic);

    int full = l->recompute == RECOMPUTE_FULL;   /* the forward runs twice */
    double tp_calls = (full ? 6 : 4) * layers * m;
    pl->tp_bytes = tp_calls * ring_bytes_sent(ALL_REDUCE, act, t);
    pl->tp_s = tp_calls * collective_seconds(ALL_REDUCE, act, t, &tp_link);

    double kv_bytes = 2 * l->micro_batch * l->seq * l->hidden * kv / l->heads
                    / t * 2;               /* the whole sequence's K and V */
    /* gather forward (twice with full recomputation), scatter back */
    double cp_calls = (full ? 3 : 2) * layers * m;
    pl->cp_bytes = cp_calls * ring_bytes_sent(ALL_GATHER, kv_bytes, cp);
    pl->cp_s = cp_calls * collective_seconds(ALL_GATHER, kv_bytes, cp, &cp_link);

    double sends = pp > 1 ? 2 * m * l->chunks : 0;
    pl->pp_bytes = sends * act / t;
    pl->pp_s = sends * (act / t / pp_link.bandwidth + pp_link.latency);

    double weights = f->model_params / (t * pp) * 2;  /* 16-bit, per GPU */
    double unit = weights / layers;                   /* one layer's      */
    double calls = l->zero >= 3 ? 3 * m : 2;          /* per layer        */
    pl->dp_bytes = calls * layers * ring_bytes_sent(ALL_GATHER, unit, n);
    pl->dp_s = calls * layers * collective_seconds(ALL_GATHER, unit, n, &dp_link);
    pl->dp_latency_s = n > 1 ? calls * layers * ring_steps(ALL_GATHER, n)
                               * dp_link.latency : 0;

    pl->nic_bytes = pl->tp_nic * pl->tp_bytes + pl->cp_nic * pl->cp_bytes
                  + pl->pp_nic * pl->pp_bytes + pl->dp_nic * pl->dp_bytes;
    pl->nvlink_bytes = pl->tp_bytes + pl->cp_bytes + pl->pp_bytes
                     + pl->dp_bytes - pl->nic_bytes;
}
static double hidden_behind(double traffic, double window)
{
    return traffic < window ? traffic : window;
}

static void plan_overlap(Plan *pl, const Assumptions *a)
{
    const Layout *l = &pl->l;
    double R = a->backward_ratio;
    double edges = 0;
    if (l->zero >= 3) {
        double calls = 3 * l->micro_batches * heaviest_stage_layers(l);
        edges = 2 * pl->dp_s / calls;     /* first gather, last scatter */
        pl->window_s = a->overlap * pl->compute_s;
    } else {
        pl->window_s = a->overlap * pl->compute_s / l->micro_batches
                     * R / (1 + R);       /* the last backward          */
    }
    double cp_window = a->overlap * pl->compute_s;
    pl->overlappable_s = pl->dp_s + pl->cp_s;
    double exposed_dp = pl->dp_s - hidden_behind(pl->dp_s - edges, pl->window_s);
    double exposed_cp = pl->cp_s - hidden_behind(pl->cp_s, cp_window);
    pl->exposed_s = pl->tp_s + pl->pp_s + exposed_dp + exposed_cp;
}
void evaluate_plan(Plan *pl, const Fleet *f, const Assumptions *a)
{
    pl->name = layout_name(&pl->l);
    pl->memory = gpu_memory(&pl->l);
    pl->fits = pl->memory.total <= f->gpu->memory_bytes;
    plan_compute(pl, f, a);
    plan_traffic(pl, f, a);
    plan_overlap(pl, a);
    pl->step_s = pl->compute_s + pl->bubble_s + pl->exposed_s;
    pl->mfu = pl->model_flops / (pl->step_s * f->gpu->peak_flops);
    double nic_s = pl->tp_nic * pl->tp_s + pl->cp_nic * pl->cp_s
                 + pl->pp_nic * pl->pp_s + pl->dp_nic * pl->dp_s;
    pl->comm_compute_ratio = nic_s / pl->compute_s;
}

/* Better first: layouts that fit, by the shorter step; then those that do
   not, by how close they come to fitting. */
int compare_plans(const void *x, const void *y)
{
    const Plan *p = x, *q = y;
    if (p->fits != q->fits)
        return q->fits - p->fits;
    double a = p->fits ? p->step_s : p->memory.total;
    double b = q->fits ? q->step_s : q->memory.total;
    return (a > b) - (a < b);
}
static int free_or(double fixed, double value)
{
    return fixed == 0 || fixed == value;
}

typedef struct { Plan *plans; int count, room; } PlanList;

static void add_plan(PlanList *list, const Plan *p)
{
    if (list->count == list->room) {
        list->room = list->room ? 2 * list->room : 1024;
        list->plans = realloc(list->plans, sizeof *list->plans * list->room);
        if (list->plans == NULL)
            abort();
    }
    list->plans[list->count++] = *p;
}

/* The schedules, micro-batch sizes and recomputations of one tp, cp, pp, dp. */
static void enumerate_within(PlanList *list, Layout l, const Axes *x,
                             const Fleet *f, const Assumptions *a)
{
    double sequences = f->batch_tokens / (l.seq * l.dp);  /* per pipeline */
    for (double b = 1; b <= sequences; b++) {
        if (fmod(sequences, b) != 0 || !free_or(x->micro_batch, b))
            continue;
        l.micro_batch = b;
        l.micro_batches = sequences / b;
        if (!free_or(x->micro_batches, l.micro_batches))
            continue;
        double most_chunks = l.pp > 1 ? floor(l.layers / l.pp) : 1;
        for (double v = 1; v <= most_chunks; v++) {
            Schedule s = v == 1 ? SCHEDULE_1F1B : SCHEDULE_INTERLEAVED;
            if (x->schedule >= 0 && l.pp > 1 && (int)s != x->schedule)
                continue;
            if (!free_or(x->chunks, v) && !(x->chunks == 0 && v == 1))
                continue;
            if (v > 1 && fmod(l.micro_batches, l.pp) != 0)
                continue;
            l.schedule = s;
            l.chunks = v;
            for (int zero = 1; zero <= 3; zero += 2) {
                if (x->fsdp >= 0 && (zero == 3) != x->fsdp)
                    continue;
                l.zero = zero;
                for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r++) {
                    if (x->recompute >= 0 && r != x->recompute)
                        continue;
                    l.recompute = (Recompute)r;
                    Plan p = { .l = l };
                    evaluate_plan(&p, f, a);
                    add_plan(list, &p);
                }
            }
        }
    }
}

static PlanList enumerate_layouts(Layout base, const Axes *x, const Fleet *f,
                                  const Assumptions *a)
{
    PlanList list = { NULL, 0, 0 };
    for (double tp = 1; tp <= 64 && tp <= f->gpus; tp++) {
        if (!free_or(x->tp, tp) || fmod(base.heads, tp) != 0
            || fmod(f->gpus, tp) != 0)
            continue;
        if (x->tp == 0 && !x->cross_node_tp && tp > f->per_node)
            continue;
        for (double cp = 1; cp <= 64; cp *= 2) {
            if (!free_or(x->cp, cp) || fmod(f->gpus, tp * cp) != 0)
                continue;
            if (x->cp == 0 && cp > 1 && base.seq / cp < x->cp_min_tokens)
                continue;
            double rest = f->gpus / (tp * cp);
            for (double pp = 1; pp <= base.layers && pp <= rest; pp++) {
                if (!free_or(x->pp, pp) || fmod(rest, pp) != 0
                    || !free_or(x->dp, rest / pp))
                    continue;
                double seqs = f->batch_tokens / (base.seq * rest / pp);
                if (seqs < 1 || seqs != floor(seqs))
                    continue;
                Layout l = base;
                l.tp = tp, l.cp = cp, l.pp = pp, l.dp = rest / pp;
                enumerate_within(&list, l, x, f, a);
            }
        }
    }
    if (list.count > 1)                 /* qsort may not be given NULL */
        qsort(list.plans, list.count, sizeof *list.plans, compare_plans);
    return list;
}
/* The NIC moves only the traffic: the compute and the bubble stay. */
static double step_with_nic(Plan p, Fleet f, const Assumptions *a, double nic)
{
    f.nic_bandwidth = nic;
    plan_traffic(&p, &f, a);
    plan_overlap(&p, a);
    return p.compute_s + p.bubble_s + p.exposed_s;
}

/* NIC bandwidth (bytes/s) at which w and o take equal steps; 0 if none
   between 1 Gbps and 100 Tbps. */
double reversal_nic(const Plan *w, const Plan *o, const Fleet *f,
                    const Assumptions *a)
{
    double here = f->nic_bandwidth;
    double sign = step_with_nic(*w, *f, a, here) - step_with_nic(*o, *f, a, here);
    for (int i = 1; i < 2000; i++) {
        for (int dir = -1; dir <= 1; dir += 2) {
            double lo = here * pow(1.01, dir * (i - 1));
            double hi = here * pow(1.01, dir * i);
            if (hi < 0.125e9 || hi > 12.5e12)
                continue;
            double d = step_with_nic(*w, *f, a, hi) - step_with_nic(*o, *f, a, hi);
            if ((d > 0) == (sign > 0))
                continue;
            for (int k = 0; k < 60; k++) {          /* bisect [lo, hi] */
                double mid = sqrt(lo * hi);
                double dm = step_with_nic(*w, *f, a, mid)
                          - step_with_nic(*o, *f, a, mid);
                if ((dm > 0) == (sign > 0))
                    lo = mid;
                else
                    hi = mid;
            }
            return sqrt(lo * hi);
        }
    }
    return 0;
}

/* Of the best few layouts of the other kind (pipelined or not) that fit,
   the one that overtakes the winner nearest the given NIC bandwidth; its
   crossing in *turn (0 and the best of them if none crosses). */
static const Plan *first_to_overtake(const PlanList *list, const Fleet *f,
                                     const Assumptions *a, double *turn)
{
    int kind = list->plans[0].l.pp > 1, tried = 0;
    const Plan *best = NULL, *nearest = NULL;
    *turn = 0;
    for (int i = 1; i < list->count && tried < 16; i++) {
        const Plan *o = &list->plans[i];
        if ((o->l.pp > 1) == kind || !o->fits)
            continue;
        if (tried++ == 0)
            best = o;
        double x = reversal_nic(&list->plans[0], o, f, a);
        if (x > 0 && (*turn == 0 || fabs(log(x / f->nic_bandwidth))
                                    < fabs(log(*turn / f->nic_bandwidth)))) {
            *turn = x;
            nearest = o;
        }
    }
    return nearest != NULL ? nearest : best;
}
Text layout_name(const Layout *l)
{
    Text t;
    int n = snprintf(t.s, sizeof t.s, "TP%g", l->tp);
    if (l->cp > 1)
        n += snprintf(t.s + n, sizeof t.s - n, " × CP%g", l->cp);
    if (l->pp > 1)
        n += snprintf(t.s + n, sizeof t.s - n, " × PP%g", l->pp);
    snprintf(t.s + n, sizeof t.s - n, " × %s%g", l->zero >= 3 ? "FSDP" : "DP",
             l->dp);
    return t;
}

static const char *link_of(int nic)
{
    return nic ? "NIC" : "NVLink";
}

static void print_plan(FILE *out, const Plan *p, const Fleet *f,
                       const Assumptions *a)
{
    const Layout *l = &p->l;
    const GpuMemory *g = &p->memory;
    fprintf(out, "%s, %s of %s,\n  %s, recomputation: %s\n",
            layout_name(l).s,
            counted(l->micro_batches, "micro-batch", "micro-batches").s,
            counted(l->micro_batch, "sequence", "sequences").s,
            l->pp == 1 ? "no pipeline"
            : l->chunks > 1 ? "interleaved" : "1F1B",
            recompute_name(l->recompute));
    if (l->pp > 1 && l->chunks > 1)
        fprintf(out, "  (%s per stage)\n",
                counted(l->chunks, "chunk", "chunks").s);
    fprintf(out, "\nmemory per GPU = state %s + activations %s + gathered %s\n"
            "                 + logits %s + buffers %s + context %s + slack %s\n"
            "               = %s of %s: %s\n",
            bytes_auto(g->state).s, bytes_auto(g->activations).s,
            bytes_auto(g->gathered).s, bytes_auto(g->logits).s,
            bytes_auto(g->buffers).s, bytes_auto(g->context).s,
            bytes_auto(g->fragmentation).s, bytes_auto(g->total).s,
            bytes_auto(f->gpu->memory_bytes).s, p->fits ? "fits" : "does not fit");
    fprintf(out, "compute        = %s FLOPs (model) %s÷ (%s × %s %%)\n"
            "               × %s on the heaviest stage ÷ %s = %s\n",
            sci(p->model_flops, 3).s,
            p->hardware_flops > p->model_flops ? "+ recomputed " : "",
            eng(f->gpu->peak_flops).s, sig(100 * a->compute_efficiency, 3).s,
            counted(heaviest_stage_layers(l), "layer", "layers").s,
            sig(l->layers / l->pp, 4).s, duration(p->compute_s).s);
    if (l->pp > 1)
        fprintf(out, "bubble         = %s × %s = %s\n",
                l->chunks == 1 ? "(p − 1)/m"
                : fmod(l->layers, l->pp * l->chunks) == 0 ? "(p − 1)/(v m)"
                : "simulated (unequal chunks)",
                duration(p->compute_s).s, duration(p->bubble_s).s);
    if (l->tp > 1)
        fprintf(out, "TP on %-6s   = %s sent, %s, on the critical path\n",
                link_of(p->tp_nic), bytes_auto(p->tp_bytes).s,
                duration(p->tp_s).s);
    if (l->cp > 1)
        fprintf(out, "CP on %-6s   = %s sent, %s\n", link_of(p->cp_nic),
                bytes_auto(p->cp_bytes).s, duration(p->cp_s).s);
    if (l->pp > 1)
        fprintf(out, "PP on %-6s   = %s sent, %s\n", link_of(p->pp_nic),
                bytes_auto(p->pp_bytes).s, duration(p->pp_s).s);
    if (l->dp > 1)
        fprintf(out, "%s on %-6s %s= %s sent, %s (%s of it latency)\n",
                l->zero >= 3 ? "FSDP" : "DP", link_of(p->dp_nic),
                l->zero >= 3 ? "" : "  ", bytes_auto(p->dp_bytes).s,
                duration(p->dp_s).s, duration(p->dp_latency_s).s);
    fprintf(out, "hides behind   = %s %% × %s = %s\n",
            sig(100 * a->overlap, 3).s,
            l->zero >= 3 ? "the step's compute"
                         : "the last micro-batch's backward",
            duration(p->window_s).s);
    fprintf(out, "exposed        = %s\n", duration(p->exposed_s).s);
    fprintf(out, "step           = %s + %s + %s = %s\n",
            duration(p->compute_s).s, duration(p->bubble_s).s,
            duration(p->exposed_s).s, duration(p->step_s).s);
    fprintf(out, "MFU            = %s ÷ (%s × %s) = %s %%\n",
            sci(p->model_flops, 3).s, duration(p->step_s).s,
            eng(f->gpu->peak_flops).s, sig(100 * p->mfu, 3).s);
    fprintf(out, "NIC ÷ compute  = %s\n", sig(p->comm_compute_ratio, 3).s);
}

/* printf pads by bytes, and each × takes two. */
static int multiplication_signs(const char *s)
{
    int n = 0;
    for (; (s = strstr(s, "×")) != NULL; s++)
        n++;
    return n;
}

/* The same degrees and sharding as an earlier, better plan. */
static int seen_before(const PlanList *list, int i)
{
    const Layout *l = &list->plans[i].l;
    for (int j = 0; j < i; j++) {
        const Layout *k = &list->plans[j].l;
        if (k->tp == l->tp && k->cp == l->cp && k->pp == l->pp
            && k->dp == l->dp && k->zero == l->zero)
            return 1;
    }
    return 0;
}

/* The best variant of each of the next layouts, one row each. */
static void print_runners_up(FILE *out, const PlanList *list, int rows)
{
    fprintf(out, "\n%2s %-22s %-5s %2s %3s %2s %-9s %7s %5s %4s %4s %6s\n",
            "", "layout", "sched", "v", "m", "b", "recompute", "memory",
            "step", "MFU", "bubl", "NIC");
    for (int i = 0, shown = 0; i < list->count && shown < rows; i++) {
        if (seen_before(list, i))
            continue;
        const Plan *p = &list->plans[i];
        const Layout *l = &p->l;
        fprintf(out, "%2d %-*s %-5s %2g %3g %2g %-9s %7s %5s %4s %4s %6s%s\n",
                ++shown, 22 + multiplication_signs(layout_name(l).s),
                layout_name(l).s,
                l->pp == 1 ? "-" : l->chunks > 1 ? "inter" : "1f1b",
                l->chunks, l->micro_batches, l->micro_batch,
                recompute_name(l->recompute), bytes_auto(p->memory.total).s,
                sig(p->step_s, 3).s, sig(100 * p->mfu, 2).s,
                sig(100 * p->bubble_s / p->step_s, 2).s,
                sig(p->comm_compute_ratio, 3).s, p->fits ? "" : " (no fit)");
    }
}
static void report_plan(Report *r, const Plan *p, const Fleet *f)
{
    const Layout *l = &p->l;
    report_text(r, "layout", p->name.s);
    report_add(r, "tp", FIELD_COUNT, l->tp);
    report_add(r, "cp", FIELD_COUNT, l->cp);
    report_add(r, "pp", FIELD_COUNT, l->pp);
    report_add(r, "dp", FIELD_COUNT, l->dp);
    report_add(r, "fsdp", FIELD_COUNT, l->zero >= 3);
    report_text(r, "schedule", l->pp == 1 ? "none" : schedule_name(l->schedule));
    report_add(r, "chunks", FIELD_COUNT, l->chunks);
    report_add(r, "microbatches", FIELD_COUNT, l->micro_batches);
    report_add(r, "micro_batch", FIELD_COUNT, l->micro_batch);
    report_text(r, "recompute", recompute_name(l->recompute));
    report_add(r, "gpus", FIELD_COUNT, f->gpus);
    report_add(r, "layers", FIELD_COUNT, l->layers);
    report_add(r, "params", FIELD_ENG, f->model_params);
    report_add(r, "memory_per_gpu_bytes", FIELD_BYTES, p->memory.total);
    report_add(r, "memory_state", FIELD_BYTES, p->memory.state);
    report_add(r, "memory_activations", FIELD_BYTES, p->memory.activations);
    report_add(r, "memory_gathered", FIELD_BYTES, p->memory.gathered);
    report_add(r, "memory_logits", FIELD_BYTES, p->memory.logits);
    report_add(r, "memory_buffers", FIELD_BYTES, p->memory.buffers);
    report_add(r, "memory_context", FIELD_BYTES, p->memory.context);
    report_add(r, "memory_fragmentation", FIELD_BYTES, p->memory.fragmentation);
    report_add(r, "fits", FIELD_COUNT, p->fits);
    report_add(r, "model_flops", FIELD_SCI, p->model_flops);
    report_add(r, "hardware_flops", FIELD_SCI, p->hardware_flops);
    report_add(r, "compute_s", FIELD_REAL, p->compute_s);
    report_add(r, "bubble_s", FIELD_REAL, p->bubble_s);
    report_add(r, "bubble", FIELD_FRACTION, p->bubble_s / p->step_s);
    report_add(r, "bubble_over_compute", FIELD_FRACTION,
               p->bubble_s / p->compute_s);
    report_add(r, "tp_nic", FIELD_COUNT, p->tp_nic);
    report_add(r, "tp_bytes", FIELD_BYTES, p->tp_bytes);
    report_add(r, "tp_s", FIELD_REAL, p->tp_s);
    report_add(r, "cp_bytes", FIELD_BYTES, p->cp_bytes);
    report_add(r, "cp_s", FIELD_REAL, p->cp_s);
    report_add(r, "pp_bytes", FIELD_BYTES, p->pp_bytes);
    report_add(r, "pp_s", FIELD_REAL, p->pp_s);
    report_add(r, "dp_bytes", FIELD_BYTES, p->dp_bytes);
    report_add(r, "dp_s", FIELD_REAL, p->dp_s);
    report_add(r, "dp_latency_s", FIELD_REAL, p->dp_latency_s);
    report_add(r, "nic_bytes", FIELD_BYTES, p->nic_bytes);
    report_add(r, "nvlink_bytes", FIELD_BYTES, p->nvlink_bytes);
    report_add(r, "window_s", FIELD_REAL, p->window_s);
    report_add(r, "exposed_s", FIELD_REAL, p->exposed_s);
    report_add(r, "step_time_s", FIELD_REAL, p->step_s);
    report_add(r, "mfu", FIELD_FRACTION, p->mfu);
    report_add(r, "comm_compute_ratio", FIELD_REAL, p->comm_compute_ratio);
    report_add(r, "nic_gbps", FIELD_REAL, f->nic_bandwidth * 8 / 1e9);
    /* the back-of-envelope form: NIC bytes at line rate against 6N compute */
    double per_gpu = f->model_params / (l->tp * l->pp);
    report_add(r, "params_per_gpu", FIELD_ENG, per_gpu);
    report_add(r, "weight_bytes", FIELD_BYTES, 2 * per_gpu);
    report_add(r, "dense_flops", FIELD_SCI,
               6 * f->model_params * f->batch_tokens / f->gpus);
    report_add(r, "nic_line_s", FIELD_REAL, p->nic_bytes / f->nic_bandwidth);
    report_add(r, "dense_compute_s", FIELD_REAL, p->dense_compute_s);
    report_add(r, "nic_line_ratio", FIELD_REAL,
               p->nic_bytes / f->nic_bandwidth / p->dense_compute_s);
}
int layout_main(int argc, char **argv)
{
    const char *command = "fleet layout";
    for (int i = 0; i + 1 < argc; i++)       /* without its value: refused below */
        if (strcmp(argv[i], "--machine") == 0)
            return layout_on_machine(argc, argv);
    Option options[] = {
        /* the model: its parameters, or its shape */
        { "--params", OPT_NUMBER, 1e15, "parameters (default 100e9, or from the shape)",
          0, NULL, 0 },
        { "--layers", OPT_COUNT, 1e4, "transformer layers (default: params ÷ 12h²)",
          0, NULL, 0 },
        { "--hidden", OPT_COUNT, 1e6, "hidden size h", 12288, NULL, 0 },
        { "--heads", OPT_COUNT, 1e4, "attention heads", 96, NULL, 0 },
        { "--kv-heads", OPT_COUNT, 1e4, "key-value heads (default: --heads)", 0, NULL, 0 },
        { "--ffn", OPT_COUNT, 1e7, "MLP inner width (default 4h)", 0, NULL, 0 },
        { "--gated", OPT_SWITCH, 0, "the MLP is gated (three matrices, SwiGLU)",
          0, NULL, 0 },
        { "--vocab", OPT_COUNT, 1e7, "vocabulary", 50304, NULL, 0 },
        { "--seq", OPT_COUNT, 1e8, "sequence length s", 4096, NULL, 0 },
        /* the fleet */
        { "--gpus", OPT_COUNT, 1e7, "GPUs in the fleet", 1024, NULL, 0 },
        { "--gpu", OPT_NAME, 0, "part: a100, h100, h200, h800, b200 or mi300x",
          0, "h100", 0 },
        { "--gpus-per-node", OPT_COUNT, 1024, "GPUs sharing NVLink (default: the "
          "part's)", 0, NULL, 0 },
        { "--nvlink-gbs", OPT_NUMBER, 1e5, "NVLink GB/s each way per GPU (default: "
          "the part's)", 0, NULL, 0 },
        { "--nic-gbps", OPT_NUMBER, 1e5, "NIC Gbps each way per GPU (default: the "
          "part's)", 0, NULL, 0 },
        /* the work */
        { "--batch-tokens", OPT_COUNT, 1e12, "tokens per optimizer step", 2097152,
          NULL, 0 },
        { "--micro-batch", OPT_COUNT, 1e6, "sequences per micro-batch b (default: "
          "enumerated)", 0, NULL, 0 },
        /* the assumptions */
        { "--compute-efficiency", OPT_NUMBER, 1, "fraction of dense peak the kernels "
          "reach when nothing waits", 0.4, NULL, 0 },
        { "--link-efficiency", OPT_NUMBER, 1, "busbw ÷ line rate of a collective",
          0.8, NULL, 0 },
        { "--overlap", OPT_NUMBER, 1, "share of compute that traffic can hide behind",
          0.5, NULL, 0 },
        { "--nvlink-latency-us", OPT_NUMBER, 1e6, "microseconds per ring step on "
          "NVLink (default: link_latency, chapter 3)", 0, NULL, 0 },
        { "--nic-latency-us", OPT_NUMBER, 1e6, "microseconds per ring step between "
          "nodes (default: link_latency, chapter 3)", 0, NULL, 0 },
        /* the axes a reader may fix */
        { "--tp", OPT_COUNT, 1024, "fix the tensor-parallel degree", 0, NULL, 0 },
        { "--cp", OPT_COUNT, 1024, "fix the context-parallel degree", 0, NULL, 0 },
        { "--pp", OPT_COUNT, 1e4, "fix the pipeline stages", 0, NULL, 0 },
        { "--dp", OPT_COUNT, 1e7, "fix the data-parallel degree", 0, NULL, 0 },
        { "--fsdp", OPT_NAME, 0, "1: FSDP (ZeRO-3); 0: DP with a sharded optimizer "
          "(ZeRO-1)", 0, NULL, 0 },
        { "--schedule", OPT_NAME, 0, "fix the schedule: 1f1b or interleaved",
          0, NULL, 0 },
        { "--chunks", OPT_COUNT, 1024, "fix the chunks per stage (interleaved)",
          0, NULL, 0 },
        { "--micro-batches", OPT_COUNT, 1e6, "fix the micro-batches per step",
          0, NULL, 0 },
        { "--recompute", OPT_NAME, 0, "fix recomputation: none, selective or full",
          0, NULL, 0 },
        { "--attention", OPT_NAME, 0, "attention kernel: flash (never stores the "
          "scores) or materialized (chapter 4)", 0, "flash", 0 },
        { "--cross-node-tp", OPT_SWITCH, 0, "let tensor parallelism leave the node",
          0, NULL, 0 },
        { "--cp-min-tokens", OPT_COUNT, 1e8, "context parallelism only where each "
          "GPU keeps this many tokens of a sequence", 8192, NULL, 0 },
        { "--top", OPT_COUNT, 1000, "runners-up to print", 8, NULL, 0 },
        { "--machine", OPT_PATH, 0, "predict minigpt on this machine instead, with "
          "minigpt's flags (see fleet layout --machine FILE --help)", 0, NULL, 0 },
        OUTPUT_OPTIONS,
        { NULL, 0, 0, NULL, 0, NULL, 0 }
    };
    int status = parse_options(command,
        "Every layout a model admits on a fleet, ranked by predicted step "
        "time, with the winner's derivation.", options, argc, argv);
    if (status != 0)
        return status == 1 ? 0 : status;

    const Gpu *gpu = find_gpu(command, option_text(options, "--gpu"));
    if (gpu == NULL)
        return 2;
    Layout base = {
        .hidden = option_number(options, "--hidden"),
        .heads = option_number(options, "--heads"),
        .kv_heads = option_number(options, "--kv-heads"),
        .ffn = option_number(options, "--ffn"),
        .gated = option_given(options, "--gated"),
        .vocab = option_number(options, "--vocab"),
        .seq = option_number(options, "--seq"),
        .sequence_parallel = 1, .chunks = 1, .gpu = gpu,
        .state = mixed_precision_adam(),
    };
    const char *attention = option_text(options, "--attention");
    if (strcmp(attention, "flash") != 0 && strcmp(attention, "materialized") != 0) {
        complain(command, "--attention: flash or materialized; got \"%s\"",
                 attention);
        return 2;
    }
    base.attention = attention[0] == 'm' ? ATTENTION_MATERIALIZED
                                         : ATTENTION_FLASH;
    if (base.kv_heads > base.heads || fmod(base.heads, base.kv_heads > 0
                                           ? base.kv_heads : 1) != 0) {
        complain(command, "--kv-heads (%g) must divide --heads (%g)",
                 base.kv_heads, base.heads);
        return 2;
    }
    double per_layer = params_per_layer(&base);
    double embeddings = 2 * base.vocab * base.hidden;
    double params = option_given(options, "--params")
                  ? option_number(options, "--params") : 100e9;
    base.layers = option_given(options, "--layers")
                ? option_number(options, "--layers")
                : fmax(1, round(params / per_layer));
    if (option_given(options, "--layers") && !option_given(options, "--params"))
        params = base.layers * per_layer + embeddings;
    base.params = params;
    Fleet fleet = {
        .gpu = gpu, .gpus = option_number(options, "--gpus"),
        .per_node = option_given(options, "--gpus-per-node")
                  ? option_number(options, "--gpus-per-node") : gpu->per_node,
        .nvlink_bandwidth = option_given(options, "--nvlink-gbs")
                  ? option_number(options, "--nvlink-gbs") * 1e9
                  : gpu->nvlink_bandwidth,
        .nic_bandwidth = option_given(options, "--nic-gbps")
                  ? option_number(options, "--nic-gbps") * 1e9 / 8
                  : gpu->nic_bandwidth,
        .batch_tokens = option_number(options, "--batch-tokens"),
        .model_params = params,
    };
    Assumptions assume = {
        .compute_efficiency = option_number(options, "--compute-efficiency"),
        .link_efficiency = option_number(options, "--link-efficiency"),
        .overlap = option_number(options, "--overlap"),
        .nvlink_latency = option_given(options, "--nvlink-latency-us")
            ? option_number(options, "--nvlink-latency-us") * 1e-6
            : link_latency(LINK_NVLINK),
        .nic_latency = option_given(options, "--nic-latency-us")
            ? option_number(options, "--nic-latency-us") * 1e-6
            : link_latency(LINK_NIC),
        .backward_ratio = 2,
    };
    if (fmod(fleet.batch_tokens, base.seq) != 0) {
        complain(command, "--batch-tokens (%s) must be a whole number of "
                 "sequences of --seq %s", grouped(fleet.batch_tokens).s,
                 grouped(base.seq).s);
        return 2;
    }
    Axes axes = {
        .tp = option_number(options, "--tp"), .cp = option_number(options, "--cp"),
        .pp = option_number(options, "--pp"), .dp = option_number(options, "--dp"),
        .chunks = option_number(options, "--chunks"),
        .micro_batches = option_number(options, "--micro-batches"),
        .micro_batch = option_number(options, "--micro-batch"),
        .fsdp = -1, .schedule = -1, .recompute = -1,
        .cross_node_tp = option_given(options, "--cross-node-tp"),
        .cp_min_tokens = option_number(options, "--cp-min-tokens"),
    };
    const char *fsdp = option_text(options, "--fsdp");
    if (fsdp != NULL) {
        if (strcmp(fsdp, "0") != 0 && strcmp(fsdp, "1") != 0) {
            complain(command, "--fsdp: 0 or 1; got \"%s\"", fsdp);
            return 2;
        }
        axes.fsdp = fsdp[0] == '1';
    }
    const char *schedule = option_text(options, "--schedule");
    if (schedule != NULL) {
        axes.schedule = find_schedule(command, schedule);
        if (axes.schedule < 0)
            return 2;
        if (axes.schedule == SCHEDULE_GPIPE) {
            complain(command, "--schedule: the planner compares 1f1b and "
                     "interleaved (GPipe holds every micro-batch; see fleet "
                     "pipeline)");
            return 2;
        }
        if (axes.schedule == SCHEDULE_ZB_H1) {
            complain(command, "--schedule: the planner compares 1f1b and "
                     "interleaved (zb-h1's timeline: see fleet pipeline)");
            return 2;
        }
    }
    const char *recompute = option_text(options, "--recompute");
    if (recompute != NULL) {
        for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r++)
            if (strcmp(recompute, recompute_name((Recompute)r)) == 0)
                axes.recompute = r;
        if (axes.recompute < 0) {
            complain(command, "--recompute: none, selective or full; got \"%s\"",
                     recompute);
            return 2;
        }
    }
    if (axes.tp > 0 && fmod(base.heads, axes.tp) != 0) {
        complain(command, "--tp %g must divide the %g heads", axes.tp, base.heads);
        return 2;
    }
    if (axes.pp > base.layers) {
        complain(command, "--pp %g: more stages than the %g layers", axes.pp,
                 base.layers);
        return 2;
    }
    if (axes.chunks > 1 && axes.schedule != SCHEDULE_INTERLEAVED) {
        complain(command, "--chunks: only the interleaved schedule has chunks; "
                 "give --schedule interleaved");
        return 2;
    }
    double fixed = (axes.tp > 0 ? axes.tp : 1) * (axes.cp > 0 ? axes.cp : 1)
                 * (axes.pp > 0 ? axes.pp : 1) * (axes.dp > 0 ? axes.dp : 1);
    if (fmod(fleet.gpus, fixed) != 0
        || (axes.tp > 0 && axes.cp > 0 && axes.pp > 0 && axes.dp > 0
            && fixed != fleet.gpus)) {
        complain(command, "--tp × --cp × --pp × --dp (%g) must %s --gpus (%g)",
                 fixed, axes.tp > 0 && axes.cp > 0 && axes.pp > 0 && axes.dp > 0
                 ? "equal" : "divide", fleet.gpus);
        return 2;
    }
    PlanList list = enumerate_layouts(base, &axes, &fleet, &assume);
    if (list.count == 0) {
        complain(command, "--gpus: no layout of %s layers and %s heads divides "
                 "%s GPUs and a batch of %s sequences with the axes given",
                 grouped(base.layers).s, grouped(base.heads).s,
                 grouped(fleet.gpus).s,
                 grouped(fleet.batch_tokens / base.seq).s);
        return 2;
    }
    double turn;
    const Plan *other = first_to_overtake(&list, &fleet, &assume, &turn);
    int fitting = 0;
    for (int i = 0; i < list.count; i++)
        fitting += list.plans[i].fits;
    Output out;
    if (output_open(&out, command, options) != 0) {
        free(list.plans);
        return 2;
    }
    Report r;
    if (option_given(options, "--json")) {
        json_list_begin(out.file, "layouts");
        for (int i = 0; i < list.count; i++) {
            r.count = 0;
            report_plan(&r, &list.plans[i], &fleet);
            json_list_item(out.file, &r, i);
        }
        json_list_end(out.file);
    } else if (option_given(options, "--csv")) {
        for (int i = 0; i < list.count; i++) {
            r.count = 0;
            report_plan(&r, &list.plans[i], &fleet);
            print_csv_row(out.file, &r, i == 0);
        }
    } else if (option_given(options, "--latex")) {
        r.count = 0;
        report_plan(&r, &list.plans[0], &fleet);
        report_add(&r, "admitted", FIELD_COUNT, list.count);
        report_add(&r, "fitting", FIELD_COUNT, fitting);
        report_text(&r, "other", other != NULL ? other->name.s : "none");
        report_add(&r, "other_step_time_s", FIELD_REAL,
                   other != NULL ? other->step_s : 0);
        report_add(&r, "reversal_nic_gbps", FIELD_REAL, turn * 8 / 1e9);
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "fleet layout: %s parameters, %s, hidden %s, "
                "%s heads, seq %s\n  on %s × %s, %s a node,\n  NVLink %s GB/s "
                "and NIC %s Gbps each way a GPU\n  %s tokens a step; compute "
                "efficiency %s %%, links %s %%, overlap %s %%\n  %s "
                "admitted, %s fit\n\n",
                eng(params).s, counted(base.layers, "layer", "layers").s,
                grouped(base.hidden).s,
                grouped(base.heads).s, grouped(base.seq).s, grouped(fleet.gpus).s,
                gpu->name, grouped(fleet.per_node).s,
                sig(fleet.nvlink_bandwidth / 1e9, 3).s,
                sig(fleet.nic_bandwidth * 8 / 1e9, 3).s,
                grouped(fleet.batch_tokens).s,
                sig(100 * assume.compute_efficiency, 3).s,
                sig(100 * assume.link_efficiency, 3).s,
                sig(100 * assume.overlap, 3).s,
                counted(list.count, "layout", "layouts").s,
                grouped(fitting).s);
        fprintf(out.file, "best: ");
        print_plan(out.file, &list.plans[0], &fleet, &assume);
        print_runners_up(out.file, &list, (int)option_number(options, "--top"));
        if (other != NULL && turn > 0)
            fprintf(out.file, "\nwhat reverses it: of the %s layouts, %s "
                    "(%s now)\n  overtakes it soonest, at a NIC of %s Gbps\n",
                    other->l.pp > 1 ? "pipelined" : "unpipelined",
                    layout_name(&other->l).s, duration(other->step_s).s,
                    sig(turn * 8 / 1e9, 3).s);
        else if (other != NULL)
            fprintf(out.file, "\nno NIC bandwidth from 1 Gbps to 100 Tbps puts "
                    "the best %s layouts\n  ahead of it\n",
                    other->l.pp > 1 ? "pipelined" : "unpipelined");
    }
    free(list.plans);
    return output_commit(&out, command);
}
