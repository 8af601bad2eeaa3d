/* Tangled from chapters/06-reference.nw; edit the chapter, not this file. */
#include <tgmath.h>
#include <string.h>

#include "minigpt.h"
#include "elementwise.h"

int warmup_steps(int steps)
{
    return steps / 10 > 0 ? steps / 10 : 1;
}

real learning_rate(real peak, int step, int steps)
{
    int warmup = warmup_steps(steps);
    if (step < warmup)
        return peak * (real)(step + 1) / (real)warmup;
    real progress = (real)(step - warmup) / (real)(steps - warmup + 1);
    return peak * (0.1f + 0.45f * (1.0f + cos(3.14159265f * progress)));
}

double sum_of_squares(const real *x, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++)
        sum += (double)x[i] * x[i];
    return sum;
}

real clip_factor(double squares, real clip, real *norm)
{
    *norm = (real)sqrt(squares);
    return *norm > clip ? clip / *norm : 1.0f;
}

real clip_gradients(Model *m, real clip)
{
    real norm, s = clip_factor(tp_sum_of_squares(m, m->grads_memory), clip,
                               &norm);
    if (s != 1.0f)
        for (size_t i = 0; i < m->params_count; i++)
            m->grads_memory[i] *= s;
    return norm;
}

int decays(int t)
{
    const char *name = param_names[t];
    return name[strlen(name) - 1] != 'b' && strncmp(name, "ln", 2) != 0;
}

void adamw_span(const AdamW *opt, real lr, int step, real decay, real *w,
                const real *g, real *mo, real *v, size_t count)
{
    real c1 = 1.0f - pow(opt->beta1, (real)step);
    real c2 = 1.0f - pow(opt->beta2, (real)step);
    for (size_t i = 0; i < count; i++)
        adamw_element(&w[i], g[i], &mo[i], &v[i], opt->beta1, opt->beta2,
                      opt->eps, c1, c2, lr, decay);
}

void adamw_update(Model *m, const AdamW *opt, real lr, int step)
{
    size_t at = 0;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        adamw_span(opt, lr, step, decays(t) ? opt->weight_decay : 0.0f,
                   m->params_memory + at, m->grads_memory + at,
                   m->m_memory + at, m->v_memory + at, m->param_size[t]);
        at += m->param_size[t];
    }
}
