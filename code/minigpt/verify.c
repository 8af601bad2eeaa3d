/* Tangled from chapters/06-reference.nw, chapters/94-trainer-plumbing.nw, chapters/95-parallel-plumbing.nw, chapters/96-tensor-parallel-plumbing.nw, chapters/98-pipeline-plumbing.nw and chapters/99b-mesh-plumbing.nw; edit the chapters, not this file. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

enum { GRADCHECK_ENTRIES = 8 };
static const double gradcheck_h = sizeof(real) == 8 ? 1e-5 : 3e-3;
static const double gradcheck_tolerance = sizeof(real) == 8 ? 1e-5 : 0.25;

int gradcheck(Model *m, const Language *lang, const Settings *set,
              Option *options)
{
    int B = set->batch, T = set->config.seq;
    Batch b;
    Rng rng = training_rng(set->seed);
    if (batch_alloc(&b, B, T) != 0)
        abort();
    batch_draw(&b, lang, &rng, B, T);
    model_zero_grads(m);
    batch_gradient(m, &b, B, 1, 1);
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    FILE *table = report_requested(options) ? NULL : out.file;
    if (table)
        fprintf(table, "gradcheck: central differences with h = %g at %d "
                "entries of each tensor\n\n%-10s %14s %14s\n", gradcheck_h,
                GRADCHECK_ENTRIES, "tensor", "max |gradient|",
                "max rel. error");
    double worst = 0.0;
    const char *worst_name = param_names[0];
    size_t offset = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        size_t size = m->param_size[t];
        double largest = 0.0, error = 0.0;
        for (size_t i = 0; i < size; i++)
            largest = fmax(largest, fabs(m->grads_memory[offset + i]));
        double floor_ = 1e-2 * largest;
        for (int e = 0; e < GRADCHECK_ENTRIES; e++) {
            size_t i = offset + (size_t)((2 * e + 1) * size / (2 * GRADCHECK_ENTRIES));
            real saved = m->params_memory[i];
            m->params_memory[i] = saved + (real)gradcheck_h;
            double up = model_forward(m, b.inputs, b.targets, B);
            m->params_memory[i] = saved - (real)gradcheck_h;
            double down = model_forward(m, b.inputs, b.targets, B);
            m->params_memory[i] = saved;
            double numeric = (up - down) / (2 * gradcheck_h);
            double analytic = m->grads_memory[i];
            double scale = fmax(fmax(fabs(analytic), fabs(numeric)), floor_);
            if (scale > 0)
                error = fmax(error, fabs(analytic - numeric) / scale);
        }
        if (table)
            fprintf(table, "%-10s %14.3e %14.2e\n", param_names[t], largest, error);
        if (error > worst) {
            worst = error;
            worst_name = param_names[t];
        }
        offset += m->param_size[t];
    }
    int ok = worst <= gradcheck_tolerance;
    if (table)
        fprintf(table, "\nlargest relative error %.2e in %s (tolerance %g): "
                "%s\n", worst, worst_name, gradcheck_tolerance,
                ok ? "OK" : "FAIL");
    else {
        Report r = { .count = 0 };
        report_add(&r, "max_relative_error", FIELD_SCI, worst);
        report_add(&r, "tolerance", FIELD_SCI, gradcheck_tolerance);
        report_add(&r, "entries_per_tensor", FIELD_COUNT, GRADCHECK_ENTRIES);
        report_add(&r, "tensors", FIELD_COUNT, PARAM_TENSORS);
        report_text(&r, "worst_tensor", worst_name);
        print_report(out.file, &r, options);
    }
    batch_free(&b);
    if (output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
const double verify_atol = 1e-6, verify_rtol = 1e-4;

/* Rank 0's words and report; 0 when ok, 1 when not, 2 if it cannot. */
static int print_verdict(const Settings *set, Option *options, int ok,
                         double dloss, double dgrad, double dweight,
                         double dmoment);

/* The largest |got - want| of n numbers, NaN if one is not a number;
   clears *ok where one exceeds atol + rtol of the reference, or is not
   a number (a NaN compares false with everything, so the test is
   written to fail on it). */
double verify_largest_difference(const real *got, const real *want,
                                 size_t n, double atol, double rtol,
                                 int *ok)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (isnan(d) || d > largest)
            largest = d;
        if (!(d <= atol + rtol * fabs(want[i])))
            *ok = 0;
    }
    return largest;
}

int verify(Model *m, const Language *lang, Settings *set,
           Option *options)
{
    if (set->parallel.format != FORMAT_FP32)     /* Chapter 12's check */
        return precision_verify(m, lang, set, options);
    int B = set->batch, T = set->config.seq;
    size_t N = whole_params_count(&m->whole);   /* m may hold a part */
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    Rng rng = training_rng(set->seed);
    Model ref;                  /* the whole batch, the whole state, at once */
    real *got = malloc(sizeof(real) * N);  /* the configuration's, gathered */
    if (batch_alloc(&b, B, T) != 0 || got == NULL
        || model_init(&ref, set->config, B, HOLDS_ALL) != 0)
        abort();
    TrainingState start = fresh_state(set);
    char why[1024];
    if (set->resume == NULL)
        model_init_weights(&ref, ref.params_memory, set->seed);
    else if (checkpoint_load_whole(set->resume, &ref, &start, why,
                                   sizeof why) != 0)
        abort();                        /* the configuration has just read it */
    int step = (int)start.step + 1;
    collect_state(set, STATE_WEIGHTS, got);
    int same_start = 1;
    double dweight = verify_largest_difference(got, ref.params_memory, N,
                                               verify_atol, verify_rtol,
                                               &same_start);
    batch_draw(&b, lang, &rng, B, T);
    double loss_ref = batch_gradient(&ref, &b, B, 1, 1);
    model_zero_grads(m);
    double loss = rank_gradient(m, &b, set);
    double dloss = fabs(loss - loss_ref);
    int ok = same_start && dloss <= verify_atol + verify_rtol * fabs(loss_ref);
    collect_state(set, STATE_GRADIENTS, got);
    double dgrad = verify_largest_difference(got, ref.grads_memory, N,
                                             verify_atol, verify_rtol, &ok);
    memcpy(ref.grads_memory, got, sizeof(real) * N);
    clip_gradients(&ref, opt.clip);
    adamw_update(&ref, &opt, set->lr, step);
    optimizer_step(set, &opt, set->lr, step);
    collect_state(set, STATE_WEIGHTS, got);
    dweight = fmax(dweight, verify_largest_difference(got, ref.params_memory,
                                                      N, verify_atol,
                                                      verify_rtol, &ok));
    collect_state(set, STATE_FIRST_MOMENT, got);       /* relative only: */
    double dmoment = verify_largest_difference(got, ref.m_memory, N, 0,
                                               verify_rtol, &ok);
    collect_state(set, STATE_SECOND_MOMENT, got);      /* v is ~ g² */
    dmoment = fmax(dmoment, verify_largest_difference(got, ref.v_memory, N, 0,
                                                      verify_rtol, &ok));
    collect_state(set, STATE_WEIGHTS, got);
    memcpy(ref.params_memory, got, sizeof(real) * N);
    model_zero_grads(&ref);
    double loss_ref2 = batch_gradient(&ref, &b, B, 1, 1);
    model_zero_grads(m);
    double loss2 = rank_gradient(m, &b, set);
    double dloss2 = fabs(loss2 - loss_ref2);
    ok = ok && dloss2 <= verify_atol + verify_rtol * fabs(loss_ref2);
    dloss = fmax(dloss, dloss2);
    collect_state(set, STATE_GRADIENTS, got);
    dgrad = fmax(dgrad, verify_largest_difference(got, ref.grads_memory, N,
                                                  verify_atol, verify_rtol,
                                                  &ok));
    if (set->ranks > 1) {
        double mine_[4] = { dloss, dgrad, dweight, dmoment }, worst[4];
        MPI_Allreduce(mine_, worst, 4, MPI_DOUBLE, MPI_MAX, set->mesh.world);
        dloss = worst[0];
        dgrad = worst[1];
        dweight = worst[2];
        dmoment = worst[3];
        ok = ranks_agree(!ok, set->mesh.world) == 0;
    }
    model_free(&ref);
    free(got);
    batch_free(&b);
    if (set->rank != 0)                      /* rank 0 speaks for all */
        return ok ? 0 : 1;
    return print_verdict(set, options, ok, dloss, dgrad, dweight, dmoment);
}
static int print_verdict(const Settings *set, Option *options, int ok,
                         double dloss, double dgrad, double dweight,
                         double dmoment)
{
    int B = set->batch;
    Output out, transcript;
    const char *transcript_path = option_text(options, "--transcript");
    if (output_open(&out, "minigpt", options) != 0
        || (transcript_path != NULL
            && output_open_path(&transcript, "minigpt", "--transcript",
                                transcript_path) != 0))
        return 2;
    FILE *readable[2] = { report_requested(options) ? NULL : out.file,
                          transcript_path != NULL ? transcript.file : NULL };
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_add(&r, "ranks", FIELD_COUNT, set->dp);
        report_add(&r, "micro_batches", FIELD_COUNT, set->micro);
        report_add(&r, "zero_stage", FIELD_COUNT, set->parallel.stage);
        report_add(&r, "tp", FIELD_COUNT, set->mesh.tp);
        report_add(&r, "sequence_parallel", FIELD_COUNT,
                   set->split.sequence_parallel);
        report_add(&r, "pp", FIELD_COUNT, set->mesh.pp);
        report_text(&r, "schedule", schedule_name((Schedule)set->schedule));
        report_add(&r, "chunks", FIELD_COUNT, set->chunks);
        report_add(&r, "dp", FIELD_COUNT, set->dp);
        report_add(&r, "max_dloss", FIELD_SCI, dloss);
        report_add(&r, "max_dgrad", FIELD_SCI, dgrad);
        report_add(&r, "max_dweight", FIELD_SCI, dweight);
        report_add(&r, "max_dmoment", FIELD_SCI, dmoment);
        report_add(&r, "atol", FIELD_SCI, verify_atol);
        report_add(&r, "rtol", FIELD_SCI, verify_rtol);
        report_text(&r, "result", ok ? "OK" : "FAIL");
        print_report(out.file, &r, options);
    }
    for (int i = 0; i < 2; i++) {      /* the output, and the transcript */
        FILE *f = readable[i];
        if (f == NULL)
            continue;
        fprintf(f, "verify: reference (batch of %d, one pass) "
                "against %d %s × %d micro-%s of %d\n", B, set->dp,
                plural(set->dp, "replica", "replicas"), set->micro,
                plural(set->micro, "batch", "batches"),
                B / set->dp / set->micro);
        if (set->parallel.stage > 0)
            fprintf(f, "verify: ZeRO stage %d shards %s\n", set->parallel.stage,
                    set->parallel.stage == 1 ? "Adam's moments"
                    : set->parallel.stage == 2 ? "Adam's moments and the gradients"
                    : "Adam's moments, the gradients and the weights");
        if (set->mesh.tp > 1)
            fprintf(f, "verify: each block split %d ways by tensor parallelism%s, "
                    "gathered whole to compare\n", set->mesh.tp,
                    set->split.sequence_parallel ? ", and the stream's rows" : "");
        if (set->mesh.pp > 1)
            fprintf(f, "verify: the %d blocks in %d pipeline stages%s, schedule %s "
                    "over %d %s, gathered whole to compare\n",
                    set->config.layers, set->mesh.pp,
                    set->chunks > 1 ? " of interleaved chunks" : "",
                    schedule_name((Schedule)set->schedule), set->micro,
                    plural(set->micro, "micro-batch", "micro-batches"));
        if ((set->mesh.tp > 1) + (set->mesh.pp > 1) + (set->dp > 1) >= 2)
            fprintf(f, "verify: the mesh --tp %d × --pp %d × --dp %d on %d ranks\n",
                    set->mesh.tp, set->mesh.pp, set->dp, set->ranks);
        fprintf(f, "verify: max |dloss| = %.3g, max |dgrad| = %.3g\n", dloss,
                dgrad);
        fprintf(f, "verify: after one AdamW step, max |dweight| = %.3g, "
                "max |dmoment| = %.3g\n", dweight, dmoment);
        fprintf(f, "verify: tolerance %g + %g·|reference|, moments "
                "%g·|reference|: %s\n", verify_atol, verify_rtol, verify_rtol,
                ok ? "OK" : "FAIL");
    }
    if ((transcript_path != NULL
         && output_commit(&transcript, "minigpt") != 0)
        || output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
