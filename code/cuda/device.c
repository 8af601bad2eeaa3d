/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "gpu.h"

/* The model on the GPU: the CPU model's arrays, each at the same offset
   in a device block of the same size, so that unit_view and the layout
   of Chapter 6 serve both. */
typedef struct {
    Model *host;             /* the CPU model whose layout it mirrors   */
    real *params, *grads;    /* (N) device                               */
    real *m, *v;             /* (N) Adam's moments, device               */
    real *acts_memory, *grad_acts_memory;
    Activations acts;        /* pointers into acts_memory                */
    Gradients grad_acts;     /* pointers into grad_acts_memory           */
    real *dscores;           /* (B, H, T, T) scores' gradients, scratch  */
    int *inputs, *targets;   /* (B, T) device                            */
} GpuModel;

/* A host pointer's place in its block, carried over to another block. */
static void move_pointers(real **pointers, int count, const real *from,
                          real *to)
{
    for (int i = 0; i < count; i++)
        pointers[i] = to + (pointers[i] - from);
}

static void gpu_model_free(GpuModel *g)
{
    void *all[] = { g->params, g->grads, g->m, g->v, g->acts_memory,
                    g->grad_acts_memory, g->dscores, g->inputs, g->targets };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gpu_free(all[i]);
    memset(g, 0, sizeof *g);
}

/* 0, or -1 when the device has not the memory. */
static int gpu_model_init(GpuModel *g, Model *host)
{
    _Static_assert(sizeof(Activations) == ACT_TENSORS * sizeof(real *),
                   "Activations holds only its tensors' pointers");
    enum { GRADIENT_TENSORS = sizeof(Gradients) / sizeof(real *) };
    ModelConfig c = host->config;
    size_t N = host->params_count, BT = (size_t)host->batch * c.seq;
    memset(g, 0, sizeof *g);
    g->host = host;
    real **state[] = { &g->params, &g->grads, &g->m, &g->v };
    int failed = 0;
    for (int i = 0; i < 4; i++)
        failed |= (*state[i] = gpu_alloc(sizeof(real) * N)) == NULL;
    g->acts_memory = gpu_alloc(sizeof(real) * host->acts_count);
    g->grad_acts_memory = gpu_alloc(sizeof(real) * host->grad_acts_count);
    g->dscores = gpu_alloc(sizeof(real) * BT * c.heads * c.seq);
    g->inputs = gpu_alloc(sizeof(int) * BT);
    g->targets = gpu_alloc(sizeof(int) * BT);
    if (failed || !g->acts_memory || !g->grad_acts_memory || !g->dscores
        || !g->inputs || !g->targets) {
        gpu_model_free(g);
        return -1;
    }
    g->acts = host->acts;
    move_pointers((real **)&g->acts, ACT_TENSORS, host->acts_memory,
                  g->acts_memory);
    g->grad_acts = host->grad_acts;
    move_pointers((real **)&g->grad_acts, GRADIENT_TENSORS,
                  host->grad_acts_memory, g->grad_acts_memory);
    gpu_zero(g->m, sizeof(real) * N);
    gpu_zero(g->v, sizeof(real) * N);
    return 0;
}


typedef struct {             /* block l's slices of the stacked activations */
    const real *x;           /* (B, T, C) the block's input                 */
    real *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2;
    real *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *res3;
} Block;

/* As model.c's block_activations, on the device's arrays. */
static Block block_of(const GpuModel *g, int l, int B)
{
    const ModelConfig c = g->host->config;
    const Activations *a = &g->acts;
    size_t N = (size_t)B * c.seq, BTC = N * c.hidden, L = (size_t)l;
    size_t TT = (size_t)B * c.heads * c.seq * c.seq;
    return (Block){
        .x = l == 0 ? a->encoded : a->res3 + (L - 1) * BTC,
        .ln1 = a->ln1 + L * BTC, .ln1_mean = a->ln1_mean + L * N,
        .ln1_rstd = a->ln1_rstd + L * N,
        .qkv = a->qkv + L * 3 * BTC,                 /* (B, T, 3C)    */
        .att = a->att + L * TT,                      /* (B, H, T, T)  */
        .atty = a->atty + L * BTC, .res2 = a->res2 + L * BTC,
        .ln2 = a->ln2 + L * BTC, .ln2_mean = a->ln2_mean + L * N,
        .ln2_rstd = a->ln2_rstd + L * N,
        .fch = a->fch + L * 4 * BTC,                 /* (B, T, 4C)    */
        .fch_gelu = a->fch_gelu + L * 4 * BTC,
        .res3 = a->res3 + L * BTC,
    };
}

/* model_forward on the GPU: the mean loss of B sequences whose inputs
   and targets are already on the device. */
static double gpu_forward(GpuModel *g, int B)
{
    ModelConfig c = g->host->config;
    int T = c.seq, C = c.hidden, L = c.layers, H = c.heads, V = c.vocab;
    int N = B * T;                                   /* positions */
    size_t BTC = (size_t)N * C;
    Activations *a = &g->acts;
    Params e = unit_view(g->host, g->params, -1);    /* the embeddings */
    gpu_encoder_forward(a->encoded, g->inputs, e.wte, e.wpe, B, T, C);
    for (int l = 0; l < L; l++) {
        Params w = unit_view(g->host, g->params, l);
        Block k = block_of(g, l, B);
        gpu_layernorm_forward(k.ln1, k.ln1_mean, k.ln1_rstd, k.x, w.ln1_w,
                              w.ln1_b, N, C);
        gpu_matmul_forward(k.qkv, k.ln1, w.qkv_w, w.qkv_b, N, C, 3 * C);
        gpu_attention_forward(k.atty, k.att, k.qkv, B, T, C, H);
        gpu_matmul_forward(a->scratch, k.atty, w.proj_w, w.proj_b, N, C, C);
        gpu_residual_forward(k.res2, k.x, a->scratch, BTC);
        gpu_layernorm_forward(k.ln2, k.ln2_mean, k.ln2_rstd, k.res2, w.ln2_w,
                              w.ln2_b, N, C);
        gpu_matmul_forward(k.fch, k.ln2, w.fc_w, w.fc_b, N, C, 4 * C);
        gpu_gelu_forward(k.fch_gelu, k.fch, 4 * BTC);
        gpu_matmul_forward(a->scratch, k.fch_gelu, w.fcproj_w, w.fcproj_b, N,
                           4 * C, C);
        gpu_residual_forward(k.res3, k.res2, a->scratch, BTC);
    }
    real *last = a->res3 + (size_t)(L - 1) * BTC;     /* (B, T, C) */
    Params h = unit_view(g->host, g->params, L);     /* final norm, head */
    gpu_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, last, h.lnf_w,
                          h.lnf_b, N, C);
    gpu_matmul_forward(a->probs, a->lnf, h.head_w, NULL, N, C, V);
    return gpu_crossentropy_forward(a->probs, a->losses, g->targets, N, V);
}

/* model_backward on the GPU: adds the gradient of scale × the mean loss
   to g->grads. */
static void gpu_backward(GpuModel *g, int B, real scale)
{
    ModelConfig c = g->host->config;
    int T = c.seq, C = c.hidden, L = c.layers, H = c.heads, V = c.vocab;
    int N = B * T;
    size_t BTC = (size_t)N * C;
    Activations *a = &g->acts;
    Gradients *d = &g->grad_acts;
    real *last = a->res3 + (size_t)(L - 1) * BTC;
    Params h = unit_view(g->host, g->params, L);
    Params dh = unit_view(g->host, g->grads, L);
    gpu_crossentropy_backward(d->dlogits, a->probs, g->targets, N, V, scale);
    gpu_matmul_backward(d->dtmp, dh.head_w, NULL, d->dlogits, a->lnf,
                        h.head_w, N, C, V);
    gpu_zero(d->dres, sizeof(real) * BTC);
    gpu_layernorm_backward(d->dres, dh.lnf_w, dh.lnf_b, d->dtmp, last,
                           h.lnf_w, a->lnf_mean, a->lnf_rstd, N, C);
    for (int l = L - 1; l >= 0; l--) {
        Params w = unit_view(g->host, g->params, l);
        Params dw = unit_view(g->host, g->grads, l);
        Block k = block_of(g, l, B);
        gpu_matmul_backward(d->dfch_gelu, dw.fcproj_w, dw.fcproj_b, d->dres,
                            k.fch_gelu, w.fcproj_w, N, 4 * C, C);
        gpu_gelu_backward(d->dfch, k.fch, d->dfch_gelu, 4 * BTC);
        gpu_matmul_backward(d->dtmp, dw.fc_w, dw.fc_b, d->dfch, k.ln2,
                            w.fc_w, N, C, 4 * C);
        gpu_layernorm_backward(d->dres, dw.ln2_w, dw.ln2_b, d->dtmp, k.res2,
                               w.ln2_w, k.ln2_mean, k.ln2_rstd, N, C);
        gpu_matmul_backward(d->dtmp, dw.proj_w, dw.proj_b, d->dres, k.atty,
                            w.proj_w, N, C, C);
        gpu_attention_backward(d->dqkv, g->dscores, d->dtmp, k.qkv, k.att,
                               B, T, C, H);
        gpu_matmul_backward(d->dtmp, dw.qkv_w, dw.qkv_b, d->dqkv, k.ln1,
                            w.qkv_w, N, C, 3 * C);
        gpu_layernorm_backward(d->dres, dw.ln1_w, dw.ln1_b, d->dtmp, k.x,
                               w.ln1_w, k.ln1_mean, k.ln1_rstd, N, C);
    }
    Params de = unit_view(g->host, g->grads, -1);
    gpu_encoder_backward(de.wte, de.wpe, d->dres, g->inputs, B, T, C);
}

/* batch_gradient on the GPU: the batch of B in `micro` pieces, each
   uploaded in turn; the mean loss. */
static double gpu_batch_gradient(GpuModel *g, const Batch *b, int B,
                                 int micro)
{
    int T = g->host->config.seq, per = B / micro;
    double loss = 0.0;
    gpu_zero(g->grads, sizeof(real) * g->host->params_count);
    for (int k = 0; k < micro; k++) {
        size_t bytes = sizeof(int) * (size_t)per * T;
        gpu_upload(g->inputs, b->inputs + (size_t)k * per * T, bytes);
        gpu_upload(g->targets, b->targets + (size_t)k * per * T, bytes);
        loss += gpu_forward(g, per);
        gpu_backward(g, per, 1.0f / (real)micro);
    }
    return loss / micro;
}

/* clip_gradients and adamw_update on the GPU; the norm before clipping. */
static real gpu_optimizer_step(GpuModel *g, const AdamW *opt, real lr,
                               int step)
{
    Model *m = g->host;
    real norm, s = clip_factor(gpu_sum_of_squares(g->grads, m->params_count),
                               opt->clip, &norm);
    if (s != 1.0f)
        gpu_scale(g->grads, s, m->params_count);
    real c1 = 1.0f - powf(opt->beta1, (real)step);
    real c2 = 1.0f - powf(opt->beta2, (real)step);
    size_t at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        gpu_adamw_span(g->params + at, g->grads + at, g->m + at, g->v + at,
                       m->param_size[t], opt->beta1, opt->beta2, opt->eps,
                       c1, c2, lr, decays(t) ? opt->weight_decay : 0.0f);
        at += m->param_size[t];
    }
    return norm;
}
/* The reference --verify's tolerance: atol plus rtol of the reference. */
static const double fp32_atol = 1e-6, fp32_rtol = 1e-4;

/* The largest |got - want|; clears *ok where one exceeds atol + rtol of
   the reference. */
static double largest_difference(const real *got, const real *want,
                                 size_t n, double atol, double rtol, int *ok)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        largest = fmax(largest, d);
        if (!(d <= atol + rtol * fabs(want[i])))
            *ok = 0;
    }
    return largest;
}

/* ||got - want|| / ||want||, in the Euclidean norm. */
static double norm_difference(const real *got, const real *want, size_t n)
{
    double d = 0.0, w = 0.0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        w += (double)want[i] * want[i];
    }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

/* One batch and one AdamW step on the GPU against the CPU reference. */
static int gpu_verify(GpuModel *g, const Language *lang, Settings *set,
                      Option *options, int bf16)
{
    Model *ref = g->host;                 /* the whole batch, in one pass */
    int B = set->batch, T = set->config.seq, L = set->config.layers;
    size_t N = ref->params_count;
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    Rng rng = training_rng(set->seed);
    real *got = malloc(sizeof(real) * N);
    if (batch_alloc(&b, B, T) != 0 || got == NULL)
        abort();
    batch_draw(&b, lang, &rng, B, T);
    gpu_upload(g->params, ref->params_memory, sizeof(real) * N);
    model_zero_grads(ref);
    double loss_ref = batch_gradient(ref, &b, B, 1, 1);
    double loss = gpu_batch_gradient(g, &b, B, set->micro);
    gpu_download(got, g->grads, sizeof(real) * N);
    int ok = 1;
    double dloss = fabs(loss - loss_ref), dgrad, loss_tolerance,
           grad_tolerance;
    if (bf16) {                      /* relative, and in the norm */
        /* bf16 rounds each GEMM input to 8 significant bits, so one
           GEMM's result is within about 2u of its size, u = 2^-8; a
           gradient passes through at most 8L + 3 GEMMs (4L + 1 forward,
           as many backward, and its own), and the loss through 4L + 1. */
        loss_tolerance = format_gemm_tolerance(4 * L + 1, FORMAT_BF16);
        grad_tolerance = format_gemm_tolerance(8 * L + 3, FORMAT_BF16);
        dloss /= fabs(loss_ref);
        dgrad = norm_difference(got, ref->grads_memory, N);
        ok = dloss <= loss_tolerance && dgrad <= grad_tolerance;
    } else {
        loss_tolerance = fp32_atol + fp32_rtol * fabs(loss_ref);
        grad_tolerance = fp32_rtol;
        ok = dloss <= loss_tolerance;
        dgrad = largest_difference(got, ref->grads_memory, N, fp32_atol,
                                   fp32_rtol, &ok);
    }
    /* Both optimizers step from the GPU's gradient, so that the step is
       checked on its own, in fp32 whatever the GEMMs' precision. */
    memcpy(ref->grads_memory, got, sizeof(real) * N);
    clip_gradients(ref, opt.clip);
    adamw_update(ref, &opt, set->lr, 1);
    gpu_optimizer_step(g, &opt, set->lr, 1);
    gpu_download(got, g->params, sizeof(real) * N);
    double dweight = largest_difference(got, ref->params_memory, N,
                                        fp32_atol, fp32_rtol, &ok);
    gpu_download(got, g->m, sizeof(real) * N);
    double dmoment = largest_difference(got, ref->m_memory, N, 0, fp32_rtol,
                                        &ok);
    gpu_download(got, g->v, sizeof(real) * N);
    dmoment = fmax(dmoment, largest_difference(got, ref->v_memory, N, 0,
                                               fp32_rtol, &ok));
    free(got);
    batch_free(&b);
    char why[512];
    if (gpu_status(why, sizeof why) != 0) {
        complain("minigpt", "--device cuda: %s", why);
        return 2;
    }
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    const char *precision = bf16 ? "bf16" : "fp32";
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "device", gpu_name());
        report_text(&r, "precision", precision);
        report_add(&r, "micro_batches", FIELD_COUNT, set->micro);
        report_add(&r, bf16 ? "relative_dloss" : "max_dloss", FIELD_SCI,
                   dloss);
        report_add(&r, bf16 ? "relative_dgrad_norm" : "max_dgrad", FIELD_SCI,
                   dgrad);
        report_add(&r, "max_dweight", FIELD_SCI, dweight);
        report_add(&r, "max_dmoment", FIELD_SCI, dmoment);
        report_add(&r, "loss_tolerance", FIELD_SCI, loss_tolerance);
        report_add(&r, "grad_tolerance", FIELD_SCI, grad_tolerance);
        report_text(&r, "result", ok ? "OK" : "FAIL");
        print_report(out.file, &r, options);
    } else {
        fprintf(out.file, "verify: %s, GEMMs in %s, against the CPU "
                "reference (the batch of %d in one pass)\n", gpu_name(),
                precision, B);
        if (bf16)
            fprintf(out.file, "verify: |dloss| / loss = %.3g (tolerance "
                    "(4L + 1)·2u = %.3g), |dgrad| / |grad| = %.3g "
                    "(tolerance (8L + 3)·2u = %.3g), u = 2^-8\n", dloss,
                    loss_tolerance, dgrad, grad_tolerance);
        else
            fprintf(out.file, "verify: max |dloss| = %.3g, max |dgrad| = "
                    "%.3g\n", dloss, dgrad);
        fprintf(out.file, "verify: after one AdamW step from the same "
                "gradient, max |dweight| = %.3g, max |dmoment| = %.3g\n",
                dweight, dmoment);
        fprintf(out.file, "verify: tolerance %g + %g·|reference|%s: %s\n",
                fp32_atol, fp32_rtol, bf16 ? " for the step" : "",
                ok ? "OK" : "FAIL");
    }
    if (output_commit(&out, "minigpt") != 0)
        return 2;
    return ok ? 0 : 1;
}
static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The training steps of train(), on the GPU; the report is shorter. */
static int gpu_train(GpuModel *g, const Language *lang, Settings *set,
                     Option *options, int bf16)
{
    Model *host = g->host;
    int T = set->config.seq;
    TrainingState state = fresh_state(set);
    AdamW opt = adamw_settings(set->lr);
    Batch b;
    double *seconds = malloc(sizeof(double) * (size_t)(set->steps + 1));
    if (batch_alloc(&b, set->batch, T) != 0 || seconds == NULL)
        abort();
    gpu_upload(g->params, host->params_memory,
               sizeof(real) * host->params_count);
    double train_loss = NAN;
    char why[512];
    for (int step = 0; step < set->steps; step++) {
        double started = seconds_now();
        batch_draw(&b, lang, &state.data, set->batch, T);
        train_loss = gpu_batch_gradient(g, &b, set->batch, set->micro);
        real lr = learning_rate(set->lr, step, set->steps);
        real norm = gpu_optimizer_step(g, &opt, lr, step + 1);
        if (gpu_status(why, sizeof why) != 0)     /* waits for the step */
            break;
        seconds[step] = seconds_now() - started;
        if (!set->quiet)
            fprintf(stderr, "step %d/%d: loss %.4f, lr %.2e, grad norm "
                    "%.3f\n", step + 1, set->steps, train_loss, lr, norm);
    }
    batch_free(&b);
    if (gpu_status(why, sizeof why) != 0) {
        free(seconds);
        complain("minigpt", "--device cuda: %s", why);
        return 2;
    }
    gpu_download(host->params_memory, g->params,
                 sizeof(real) * host->params_count);
    double val_loss = validation_loss(host, lang, set->seed, set->batch);
    int timed = set->steps - 1;                 /* the first warms up */
    double median = NAN;
    if (timed > 0) {
        qsort(seconds + 1, (size_t)timed, sizeof *seconds, compare_doubles);
        median = timed % 2 ? seconds[1 + timed / 2]
               : (seconds[timed / 2] + seconds[1 + timed / 2]) / 2;
    }
    free(seconds);
    double tokens = (double)set->batch * T;
    Output out;
    if (output_open(&out, "minigpt", options) != 0)
        return 2;
    if (report_requested(options)) {
        Report r = { .count = 0 };
        report_text(&r, "device", gpu_name());
        report_text(&r, "precision", bf16 ? "bf16" : "fp32");
        report_add(&r, "steps", FIELD_COUNT, set->steps);
        report_add(&r, "train_loss", FIELD_REAL, train_loss);
        report_add(&r, "val_loss", FIELD_REAL, val_loss);
        report_add(&r, "step_ms", FIELD_REAL, median * 1e3);
        report_add(&r, "tokens_per_second", FIELD_REAL, tokens / median);
        print_report(out.file, &r, options);
    } else
        fprintf(out.file, "minigpt on %s, GEMMs in %s: %d steps, train "
                "loss %.4f, validation loss %.4f, median step %.3g ms "
                "(%.0f tokens/s)\n", gpu_name(), bf16 ? "bf16" : "fp32",
                set->steps, train_loss, val_loss, median * 1e3,
                tokens / median);
    return output_commit(&out, "minigpt") != 0 ? 2 : 0;
}
/* The flags a GPU run does not offer (yet), or NULL. */
static const char *not_offered(Option *options)
{
    const char *flags[] = { "--resume", "--save", "--dump", "--gradcheck",
                            "--log", "--profile", "--keep-checkpoints" };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (find_option(options, flags[i]) != NULL
            && option_given(options, flags[i]))
            return flags[i];
    if (find_option(options, "--zero") != NULL
        && strcmp(option_text(options, "--zero"), "0") != 0)
        return "--zero";
    return NULL;
}

int device_run(const char *command, Settings *set, Option *options)
{
    const char *device = option_text(options, "--device");
    const char *precision = option_text(options, "--precision");
    const char *flag = not_offered(options);
    int speak = set->rank == 0, verify = option_given(options, "--verify");
    char why[512];
    int status = 2;
    if (device != NULL && strcmp(device, "cuda") != 0) {
        if (speak)
            complain(command, "--device: unknown \"%s\" (known: cuda; the "
                     "CPU is the default)", device);
        return 2;
    }
    if (strcmp(precision, "fp32") != 0 && strcmp(precision, "bf16") != 0) {
        if (speak)
            complain(command, "--precision: unknown \"%s\" (known: fp32, "
                     "bf16)", precision);
        return 2;
    }
    if (set->ranks > 1) {
        if (speak)
            complain(command, "--device cuda runs in one process in this "
                     "build (mpiexec gave %d)", set->ranks);
        return 2;
    }
    if (flag != NULL) {
        complain(command, "%s is not offered with --device cuda", flag);
        return 2;
    }
    if (gpu_open(0, why, sizeof why) != 0) {
        complain(command, "--device cuda: %s", why);
        return 2;
    }
    Model host;                     /* the sizes, the weights, the reference */
    GpuModel g;
    Language lang;
    language_init(&lang, set->config.vocab, set->seed);
    if (model_init(&host, set->config,
                   verify ? set->batch : set->batch / set->micro,
                   HOLDS_ALL) != 0) {
        complain(command, "cannot allocate this model: --layers, --hidden, "
                 "--seq and --batch ask for more memory than there is");
    } else if (gpu_model_init(&g, &host) != 0) {
        complain(command, "--device cuda: %s has not the memory for this "
                 "model", gpu_name());
        model_free(&host);
    } else {
        model_init_weights(&host, host.params_memory, set->seed);
        int bf16 = strcmp(precision, "bf16") == 0;
        gpu_set_precision(bf16 ? GPU_BF16 : GPU_FP32);
        status = verify ? gpu_verify(&g, &lang, set, options, bf16)
                        : gpu_train(&g, &lang, set, options, bf16);
        gpu_model_free(&g);
        model_free(&host);
    }
    gpu_close();
    return status;
}
