/* Tangled from chapters/10-pipeline.nw, chapters/11b-composed.nw and chapters/98-pipeline-plumbing.nw; edit the chapters, not this file. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline.h"

static int virtual_stage(const PipelineStage *s, int chunk)
{
    return chunk * s->stages + s->rank;
}

static int last_virtual_stage(const PipelineStage *s)
{
    return s->stages * s->chunks - 1;
}

static int rank_of(const PipelineStage *s, int virtual)
{
    return virtual % s->stages;
}

/* direction 0: forward, to virtual stage `to`; 1: backward, to `to`. */
static int tag_of(const PipelineStage *s, int micro_batch, int to,
                  int direction)
{
    int virtual_stages = s->stages * s->chunks;
    return ((micro_batch * virtual_stages + to) * 2 + direction) % 32768;
}
static void wait_politely(MPI_Request *request)
{
    double started = MPI_Wtime();
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec nap = { 0, 20000 };            /* 20 µs */
        nanosleep(&nap, NULL);
        MPI_Test(request, &done, MPI_STATUS_IGNORE);
    }
    step_clock_stop(PART_BUBBLE, started);   /* a wait is the bubble's */
}

/* Send x (message_size numbers) from a buffer of its own. */
static void post(PipelineStage *s, const real *x, int to, int tag)
{
    double started = MPI_Wtime();
    Message *free_ = NULL;
    for (int i = 0; i < s->message_count && free_ == NULL; i++) {
        int done = 1;
        if (s->messages[i].request != MPI_REQUEST_NULL)
            MPI_Test(&s->messages[i].request, &done, MPI_STATUS_IGNORE);
        if (done)
            free_ = &s->messages[i];
    }
    if (free_ == NULL) {                        /* every one in flight */
        Message *more = realloc(s->messages, sizeof(Message)
                                * (size_t)(s->message_count + 1));
        if (more == NULL)
            abort();
        s->messages = more;
        free_ = &more[s->message_count++];
        free_->data = malloc(sizeof(real) * s->message_size);
        if (free_->data == NULL)
            abort();
    }
    memcpy(free_->data, x, sizeof(real) * s->message_size);
    MPI_Isend(free_->data, (int)s->message_size, real_type(),
              rank_of(s, to), tag, s->comm, &free_->request);
    step_clock_stop(PART_PP, started);         /* the copy and the post */
}

static void receive(PipelineStage *s, real *into, int from, int tag)
{
    MPI_Request request;
    double started = MPI_Wtime();
    MPI_Irecv(into, (int)s->message_size, real_type(), rank_of(s, from), tag,
              s->comm, &request);
    step_clock_stop(PART_PP, started);
    wait_politely(&request);
}

/* The output x (B, T, C) of the slot's chunk's last block, to the next
   virtual stage, and its receipt there. */
static void send_forward(PipelineStage *s, const Slot *slot, const real *x)
{
    int to = virtual_stage(s, slot->chunk) + 1;
    post(s, x, to, tag_of(s, slot->micro_batch, to, 0));
}

static void recv_forward(PipelineStage *s, const Slot *slot, real *x)
{
    int me = virtual_stage(s, slot->chunk);
    receive(s, x, me - 1, tag_of(s, slot->micro_batch, me, 0));
}

/* The gradient dx (B, T, C) of the chunk's input, to the previous
   virtual stage, and its receipt there. */
static void send_backward(PipelineStage *s, const Slot *slot,
                          const real *dx)
{
    int to = virtual_stage(s, slot->chunk) - 1;
    post(s, dx, to, tag_of(s, slot->micro_batch, to, 1));
}

static void recv_backward(PipelineStage *s, const Slot *slot, real *dx)
{
    int me = virtual_stage(s, slot->chunk);
    receive(s, dx, me + 1, tag_of(s, slot->micro_batch, me, 1));
}
static int schedule_peak(const PipelineStage *s)
{
    int zero_bubble = s->schedule.schedule == SCHEDULE_ZB_H1;
    int held = 0, most = 0;
    for (int i = 0; i < s->count; i++) {
        PipeOpKind kind = s->ops[i].kind;
        held += kind == PIPE_FORWARD ? 1
              : kind == (zero_bubble ? PIPE_WEIGHT : PIPE_BACKWARD) ? -1 : 0;
        most = held > most ? held : most;
    }
    return most;
}

static Slot *slot_take(PipelineStage *s, int micro_batch, int chunk)
{
    for (int i = 0; i < s->slot_count; i++) {
        Slot *slot = &s->slots[i];
        if (slot->micro_batch >= 0)
            continue;
        slot->micro_batch = micro_batch;
        slot->chunk = chunk;
        if (++s->in_use > s->peak)
            s->peak = s->in_use;
        return slot;
    }
    abort();              /* cannot be: the slots are the schedule's peak */
}

static Slot *slot_of(PipelineStage *s, int micro_batch, int chunk)
{
    for (int i = 0; i < s->slot_count; i++)
        if (s->slots[i].micro_batch == micro_batch
            && s->slots[i].chunk == chunk)
            return &s->slots[i];
    abort();              /* cannot be: its forward took one */
}

static void slot_free(PipelineStage *s, Slot *slot)
{
    slot->micro_batch = -1;
    s->in_use--;
}

/* The model's passes read and write the slot's activations. */
static void use_slot(Model *m, const Slot *slot)
{
    model_use_activations(m, slot->acts);
    m->deferred = slot->deferred;
}
double pipeline_gradient(Model *m, const Batch *b, int B, int micro,
                         real share)
{
    PipelineStage *s = m->pp;
    int T = m->config.seq, per = B / micro;
    int zero_bubble = s->schedule.schedule == SCHEDULE_ZB_H1;
    double loss = 0.0;
    s->peak = 0;
    m->last_piece = 0;             /* no unit's gradient is final yet */
    double start = pipeline_trace_start(&s->trace);   /* the common clock */
    for (int i = 0; i < s->count; i++) {
        PipeOp *o = &s->ops[i];
        int v = virtual_stage(s, o->chunk);
        size_t at = (size_t)o->micro_batch * per * T;  /* its sequences */
        const int *in = v == 0 ? b->inputs + at : NULL;
        const int *tg = v == last_virtual_stage(s) ? b->targets + at : NULL;
        int first = o->chunk * s->chunk_layers;       /* its blocks */
        int forward = o->kind == PIPE_FORWARD, backward = o->kind == PIPE_BACKWARD;
        Slot *slot = forward ? slot_take(s, o->micro_batch, o->chunk)
                             : slot_of(s, o->micro_batch, o->chunk);
        use_slot(m, slot);
        if (forward && in == NULL)                        /* the stream, (B, T, C) */
            recv_forward(s, slot, m->acts.encoded + s->message_at);
        if (backward && tg == NULL)                       /* its gradient          */
            recv_backward(s, slot, m->grad_acts.dres + s->message_at);
        o->start = MPI_Wtime() - start;
        if (forward)
            loss += stage_forward(m, in, tg, per, first, s->chunk_layers);
        else if (backward)
            stage_backward(m, in, tg, per, share / (real)micro, first,
                           s->chunk_layers);
        else                                              /* zb-h1's W */
            stage_weight_backward(m, per, first, s->chunk_layers);
        o->end = MPI_Wtime() - start;
        if (forward && tg == NULL)                        /* the last block's */
            send_forward(s, slot, m->acts.res3
                         + (size_t)(s->chunk_layers - 1) * s->message_size);
        if (backward && in == NULL)
            send_backward(s, slot, m->grad_acts.dres + s->message_at);
        if (o->kind == (zero_bubble ? PIPE_WEIGHT : PIPE_BACKWARD))
            slot_free(s, slot);
    }
    for (int i = 0; i < s->message_count; i++)
        if (s->messages[i].request != MPI_REQUEST_NULL)
            wait_politely(&s->messages[i].request);
    model_use_activations(m, m->acts_memory);
    m->deferred = NULL;
    if (m->gradients_ready != NULL) {
        m->last_piece = 1;
        for (int unit = m->config.layers; unit >= -1; unit--)
            m->gradients_ready(m->hook_context, unit);
        m->last_piece = 0;
    }
    double waited = MPI_Wtime();           /* for the stage that ends last */
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, s->comm);
    step_clock_stop(PART_BUBBLE, waited);
    pipeline_trace_step(&s->trace, s->ops, s->peak, ++s->traced);
    return loss / micro;
}
int pipeline_model_init(Model *m, Settings *set, int rows, unsigned holds)
{
    PipelineStage *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    int P = set->mesh.pp, V = set->chunks, L = set->config.layers;
    *s = (PipelineStage){ .comm = set->mesh.pp_comm,
                          .rank = set->mesh.pp_rank, .stages = P,
                          .chunks = V, .chunk_layers = L / (P * V) };
    s->schedule = (Pipeline){ .schedule = (Schedule)set->schedule,
                              .stages = P, .micro_batches = set->micro,
                              .chunks = V };
    s->count = pipeline_ops_per_stage(&s->schedule);
    s->ops = malloc(sizeof(PipeOp) * (size_t)s->count);
    StageShape shape = { L / P, s->chunk_layers,
                         (s->rank == 0 ? STAGE_EMBEDDINGS : 0)
                         | (s->rank == P - 1 ? STAGE_HEAD : 0) };
    if (s->ops == NULL
        || model_init_stage(m, set->config, &shape, rows, holds,
                            &set->split) != 0) {
        free(s->ops);
        free(s);
        return -1;
    }
    m->pp = s;
    pipeline_order(&s->schedule, s->rank, s->ops);
    size_t BTC = (size_t)rows * set->config.seq * set->config.hidden;
    size_t kept = s->schedule.schedule != SCHEDULE_ZB_H1 ? 0  /* 9C a token */
                : (size_t)shape.layers * 9 * BTC;
    size_t count = m->acts_count + kept;
    size_t rows_held = BTC / (size_t)model_sequence_ways(m);  /* (B T/t, C) */
    s->message_size = rows_held;
    s->message_at = (size_t)model_sequence_rank(m) * rows_held;
    s->slot_count = schedule_peak(s);
    s->slot_bytes = sizeof(real) * (double)count;
    s->slots = calloc((size_t)s->slot_count, sizeof(Slot));
    if (s->slots == NULL)
        return -1;
    for (int i = 0; i < s->slot_count; i++) {
        Slot *slot = &s->slots[i];
        slot->acts = calloc(count, sizeof(real));
        if (slot->acts == NULL)
            return -1;
        slot->deferred = kept > 0 ? slot->acts + m->acts_count : NULL;
        slot->micro_batch = -1;
    }
    int writer = set->mesh.dp_rank == 0 && set->mesh.tp_rank == 0;
    if (pipeline_trace_init(&s->trace, &s->schedule, s->comm,
                            writer ? set->trace : NULL) != 0)
        return 2;
    return 0;
}
int pipeline_free(Model *m)
{
    PipelineStage *s = m->pp;
    if (s == NULL)
        return 0;
    for (int i = 0; s->slots != NULL && i < s->slot_count; i++)
        free(s->slots[i].acts);
    for (int i = 0; i < s->message_count; i++)
        free(s->messages[i].data);
    int status = pipeline_trace_free(&s->trace);
    free(s->messages);
    free(s->slots);
    free(s->ops);
    free(s);
    m->pp = NULL;
    return status;
}

void pipeline_report(const Model *m, Report *r)
{
    PipelineStage *s = m->pp;
    report_text(r, "schedule", schedule_name(s->schedule.schedule));
    report_add(r, "chunks", FIELD_COUNT, s->chunks);
    report_add(r, "slot_bytes", FIELD_BYTES, s->slot_bytes);
    report_add(r, "message_bytes", FIELD_BYTES,
               (double)(sizeof(real) * s->message_size));
    pipeline_trace_report(&s->trace, r);
}
double pipeline_loss(Model *m, const int *inputs, const int *targets,
                     int B)
{
    PipelineStage *s = m->pp;
    double loss = 0.0;
    for (int c = 0; c < s->chunks; c++) {
        int v = virtual_stage(s, c), last = v == last_virtual_stage(s);
        Slot pass = { .micro_batch = 0, .chunk = c };  /* for the tags */
        if (v > 0)
            recv_forward(s, &pass, m->acts.encoded + s->message_at);
        double l = stage_forward(m, v == 0 ? inputs : NULL,
                                 last ? targets : NULL, B,
                                 c * s->chunk_layers, s->chunk_layers);
        if (last)
            loss = l;
        else
            send_forward(s, &pass, m->acts.res3
                         + (size_t)(s->chunk_layers - 1) * s->message_size);
    }
    for (int i = 0; i < s->message_count; i++)
        if (s->messages[i].request != MPI_REQUEST_NULL)
            wait_politely(&s->messages[i].request);
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, s->comm);
    return loss;
}
void stage_placement(const Model *m, RunVisitor visit, void *context)
{
    const PipelineStage *s = m->pp;
    size_t whole[PARAM_TENSORS], whole_at = 0, local_at = 0;
    whole_param_sizes(&m->whole, whole);
    for (int t = 0; t < PARAM_TENSORS; t++) {
        int per_layer = t >= 2 && t <= 13;
        size_t slice = per_layer ? whole[t] / (size_t)m->whole.layers
                     : m->param_size[t] > 0 ? whole[t] : 0;  /* an end */
        for (int j = 0; per_layer && j < m->config.layers; j++) {
            int chunk = j / s->chunk_layers;
            size_t l = (size_t)virtual_stage(s, chunk) * s->chunk_layers
                     + (size_t)(j % s->chunk_layers);
            Run run = { t, whole_at + l * slice,
                        local_at + (size_t)j * slice, slice, 0 };
            visit(context, &run);
        }
        if (!per_layer && slice > 0) {
            Run run = { t, whole_at, local_at, slice, 0 };
            visit(context, &run);
        }
        whole_at += whole[t];
        local_at += per_layer ? slice * (size_t)m->config.layers : slice;
    }
}

typedef struct {
    const real *from;
    real *to;
    int gather;              /* 1: stage to whole; 0: whole to stage */
} StageCopy;

static void copy_stage_run(void *context, const Run *run)
{
    StageCopy *c = context;
    if (c->gather)
        memcpy(c->to + run->whole, c->from + run->local,
               sizeof(real) * run->count);
    else
        memcpy(c->to + run->local, c->from + run->whole,
               sizeof(real) * run->count);
}

void pipeline_gather(const Model *m, const real *local, real *whole)
{
    size_t n = whole_params_count(&m->whole);
    memset(whole, 0, sizeof(real) * n);
    StageCopy c = { local, whole, 1 };
    stage_placement(m, copy_stage_run, &c);
    MPI_Allreduce(MPI_IN_PLACE, whole, (int)n, real_type(), MPI_SUM,
                  m->pp->comm);
}

void pipeline_scatter(const Model *m, const real *whole, real *local)
{
    StageCopy c = { whole, local, 0 };
    stage_placement(m, copy_stage_run, &c);
}
