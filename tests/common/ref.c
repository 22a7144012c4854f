/* Double-precision pieces shared by the model tests' references (see ref.h). */
#include "ref.h"

#include "core/mem.h"
#include "core/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void test_model_config(halo_model_config *cfg, int layers, int in, int hidden, int classes,
                       float dropout, int threads, uint64_t seed)
{
    halo_model_config_default(cfg);
    cfg->layers = layers;
    cfg->in_dim = in;
    cfg->hidden = hidden;
    cfg->classes = classes;
    cfg->dropout = dropout;
    cfg->threads = threads;
    cfg->seed = seed;
}

float *test_random_floats(uint64_t seed, size_t n, double scale, uint64_t key)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, key, 0, 0);
    float *x = HALO_ALLOC(float, n);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)((2.0 * halo_rng_uniform(&r) - 1.0) * scale);
    }
    return x;
}

int32_t *test_random_labels(uint64_t seed, int32_t n, int classes, uint64_t key)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, key, 0, 0);
    int32_t *y = HALO_ALLOC(int32_t, n);
    for (int32_t i = 0; i < n; i++) {
        y[i] = (int32_t)halo_rng_below(&r, (uint64_t)classes);
    }
    return y;
}

int test_ref_keep(uint64_t seed, uint64_t step, int layer, int32_t gid, int j, double p)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_DROPOUT, step, (uint64_t)layer, (uint64_t)(int64_t)gid);
    r.ctr = (uint64_t)j;
    return halo_rng_uniform(&r) >= p;
}

double test_ref_xent(const double *h, int32_t n, int c, const int32_t *labels)
{
    double loss = 0;
    for (int32_t i = 0; i < n; i++) {
        const double *x = h + (size_t)i * c;
        double mx = x[0];
        for (int j = 1; j < c; j++) {
            mx = x[j] > mx ? x[j] : mx;
        }
        double s = 0;
        for (int j = 0; j < c; j++) {
            s += exp(x[j] - mx);
        }
        // cppcheck-suppress invalidFunctionArg
        loss += mx + log(s) - x[labels[i]];
    }
    return loss / n;
}

double test_max_rel_err(const float *a, const double *b, size_t n, double rel_floor, size_t *at)
{
    double bmax = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        bmax = fabs(b[i]) > bmax ? fabs(b[i]) : bmax;
    }
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / (fabs(b[i]) + rel_floor * bmax + 1e-30);
        if (e > worst) {
            worst = e;
            if (at != NULL) {
                *at = i;
            }
        }
    }
    return worst;
}

double test_ref_relu_dropout(double s, uint64_t seed, uint64_t step, int layer, int32_t gid, int j,
                             double p)
{
    s = s > 0 ? s : 0;
    if (p > 0) {
        s = test_ref_keep(seed, step, layer, gid, j, p) ? s / (1.0 - p) : 0.0;
    }
    return s;
}

double test_ref_output(double *h, int32_t n, int c, const int32_t *labels, double *logits)
{
    double loss = test_ref_xent(h, n, c, labels);
    if (logits != NULL) {
        memcpy(logits, h, sizeof(double) * (size_t)n * c);
    }
    free(h);
    return loss;
}

void test_central_diff(test_fn f, void *ctx, double *x, size_t n, double h, double *fd)
{
    for (size_t i = 0; i < n; i++) {
        double keep = x[i];
        x[i] = keep + h;
        double lp = f(ctx, x);
        x[i] = keep - h;
        double lm = f(ctx, x);
        x[i] = keep;
        fd[i] = (lp - lm) / (2 * h);
    }
}
