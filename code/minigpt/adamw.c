/* Tangled from chapters/03-reference.nw; edit the chapter, not this file. */
#include <tgmath.h>
#include <string.h>

#include "minigpt.h"

real learning_rate(real peak, int step, int steps)
{
    int warmup = steps / 10 > 0 ? steps / 10 : 1;
    if (step < warmup)
        return peak * (real)(step + 1) / (real)warmup;
    real progress = (real)(step - warmup) / (real)(steps - warmup + 1);
    return peak * (0.1f + 0.45f * (1.0f + cos(3.14159265f * progress)));
}

real clip_gradients(Model *m, real clip)
{
    double sum = 0.0;
    for (size_t i = 0; i < m->params_count; i++)
        sum += (double)m->grads_memory[i] * m->grads_memory[i];
    real norm = (real)sqrt(sum);
    if (norm > clip) {
        real s = clip / norm;
        for (size_t i = 0; i < m->params_count; i++)
            m->grads_memory[i] *= s;
    }
    return norm;
}

void adamw_update(Model *m, const AdamW *opt, real lr, int step)
{
    real c1 = 1.0f - pow(opt->beta1, (real)step);
    real c2 = 1.0f - pow(opt->beta2, (real)step);
    real *w = m->params_memory;
    for (int t = 0; t < PARAM_TENSORS; t++) {
        const char *name = param_names[t];
        int decays = name[strlen(name) - 1] != 'b' && strncmp(name, "ln", 2) != 0;
        real decay = decays ? opt->weight_decay : 0.0f;
        size_t start = (size_t)(w - m->params_memory);
        for (size_t i = start; i < start + m->param_size[t]; i++) {
            real g = m->grads_memory[i];
            real mi = m->m_memory[i] = opt->beta1 * m->m_memory[i]
                                      + (1.0f - opt->beta1) * g;
            real vi = m->v_memory[i] = opt->beta2 * m->v_memory[i]
                                      + (1.0f - opt->beta2) * g * g;
            real update = (mi / c1) / (sqrt(vi / c2) + opt->eps);
            m->params_memory[i] -= lr * (update + decay * m->params_memory[i]);
        }
        w += m->param_size[t];
    }
}
