/* Tangled from chapters/97-cuda.nw; edit the chapter, not this file. */
/* The shared per-element arithmetic against formulas in double. */
#include <math.h>
#include <stdio.h>

typedef float real;
#include "elementwise.h"

static double gelu_exact(double x)
{
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/* The layer norm of a row of 8, weighted by d: sum of d y. */
static double weighted_norm(const double *x, const double *w,
                            const double *d)
{
    double mu = 0, var = 0, sum = 0;
    for (int i = 0; i < 8; i++)
        mu += x[i] / 8;
    for (int i = 0; i < 8; i++)
        var += (x[i] - mu) * (x[i] - mu) / 8;
    for (int i = 0; i < 8; i++)
        sum += d[i] * (x[i] - mu) / sqrt(var + 1e-5) * w[i];
    return sum;
}

/* The softmax of 5 scores, weighted by g: sum of g p. */
static double weighted_softmax(const double *s, const double *g)
{
    double z = 0, sum = 0;
    for (int i = 0; i < 5; i++)
        z += exp(s[i]);
    for (int i = 0; i < 5; i++)
        sum += g[i] * exp(s[i]) / z;
    return sum;
}

int main(void)
{
    double e = 0;                 /* GELU, relative to its size */
    for (double x = -6; x <= 6; x += 0.01)
        e = fmax(e, fabs(gelu((real)x) - gelu_exact(x))
                        / fmax(fabs(gelu_exact(x)), 1e-3));
    printf("gelu %.3e\n", e);
    e = 0;                        /* its derivative, by central differences */
    for (double x = -6; x <= 6; x += 0.01) {
        double h = 1e-5, slope = (gelu_exact(x + h) - gelu_exact(x - h))
                                 / (2 * h);
        e = fmax(e, fabs(gelu_gradient((real)x, 0.5f) - 0.5 * slope));
    }
    printf("gelu_gradient %.3e\n", e);
    double x[8] = { 0.3, -1.2, 2.0, 0.7, -0.4, 1.1, -2.2, 0.05 };
    double w[8] = { 1.0, 0.5, -0.7, 1.3, 0.9, -1.1, 0.2, 1.6 };
    double d[8] = { 0.2, -0.3, 0.8, 0.1, -0.9, 0.4, 0.6, -0.5 };
    real mu = 0, var = 0, g_mean = 0, gx_mean = 0;
    for (int i = 0; i < 8; i++)
        mu += (real)x[i] / 8;
    for (int i = 0; i < 8; i++)
        var += ((real)x[i] - mu) * ((real)x[i] - mu);
    real r = layernorm_rstd(var, 8);
    e = fabs(r - 1 / sqrt(var / 8 + 1e-5)) * sqrt(var / 8 + 1e-5);
    printf("layernorm_rstd %.3e\n", e);
    e = 0;
    for (int i = 0; i < 8; i++) {
        double y = ((real)x[i] - mu) * r * (real)w[i] + 0.25;
        e = fmax(e, fabs(layernorm_normalise((real)x[i], mu, r, (real)w[i],
                                             0.25f) - y));
        real xhat = layernorm_xhat((real)x[i], mu, r);
        g_mean += (real)(d[i] * w[i]) / 8;
        gx_mean += (real)(d[i] * w[i]) * xhat / 8;
    }
    printf("layernorm_normalise %.3e\n", e);
    e = 0;                        /* the input's gradient, numerically */
    for (int i = 0; i < 8; i++) {
        double up[8], down[8], h = 1e-6;
        for (int j = 0; j < 8; j++)
            up[j] = down[j] = x[j];
        up[i] += h;
        down[i] -= h;
        double numeric = (weighted_norm(up, w, d) - weighted_norm(down, w, d))
                         / (2 * h);
        real dx = layernorm_input_gradient((real)d[i], (real)w[i],
                                           layernorm_xhat((real)x[i], mu, r),
                                           r, g_mean, gx_mean);
        e = fmax(e, fabs(dx - numeric));
    }
    printf("layernorm_input_gradient %.3e\n", e);
    double s[5] = { 0.5, -1.0, 2.0, 0.1, 1.5 }, g[5] = { 1, -2, 0.5, 3, -1 };
    double max = 2.0, z = 0, dot = 0;
    real p[5];
    for (int i = 0; i < 5; i++)
        z += softmax_exp((real)s[i], (real)max);
    e = 0;
    for (int i = 0; i < 5; i++) {
        p[i] = softmax_exp((real)s[i], (real)max) / (real)z;
        e = fmax(e, fabs(softmax_exp((real)s[i], (real)max)
                         - exp(s[i] - max)));
        dot += p[i] * g[i];
    }
    printf("softmax_exp %.3e\n", e);
    e = 0;
    for (int i = 0; i < 5; i++) {
        double up[5], down[5], h = 1e-6;
        for (int j = 0; j < 5; j++)
            up[j] = down[j] = s[j];
        up[i] += h;
        down[i] -= h;
        double numeric = (weighted_softmax(up, g) - weighted_softmax(down, g))
                         / (2 * h);
        e = fmax(e, fabs(softmax_gradient(p[i], (real)g[i], (real)dot, 1.0f)
                         - numeric));
    }
    printf("softmax_gradient %.3e\n", e);
    e = fmax(fabs(crossentropy_gradient(0.25f, 1, 0.5f) - (0.25 - 1) * 0.5),
             fabs(crossentropy_gradient(0.25f, 0, 0.5f) - 0.25 * 0.5));
    printf("crossentropy_gradient %.3e\n", e);
    e = 0;                        /* two AdamW steps, against double */
    real w1 = 0.5f, m1 = 0, v1 = 0;
    double wd = 0.5, md = 0, vd = 0;
    for (int step = 1; step <= 2; step++) {
        double grad = step == 1 ? 0.02 : -0.01;
        double c1 = 1 - pow(0.9, step), c2 = 1 - pow(0.95, step);
        adamw_element(&w1, (real)grad, &m1, &v1, 0.9f, 0.95f, 1e-8f,
                      (real)c1, (real)c2, 1e-3f, 0.1f);
        md = 0.9 * md + 0.1 * grad;
        vd = 0.95 * vd + 0.05 * grad * grad;
        wd -= 1e-3 * ((md / c1) / (sqrt(vd / c2) + 1e-8) + 0.1 * wd);
        e = fmax(e, fmax(fabs(w1 - wd), fmax(fabs(m1 - md), fabs(v1 - vd))));
    }
    printf("adamw_element %.3e\n", e);
    return 0;
}
