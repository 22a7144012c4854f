/* Unit tests of runtime/model on the CPU back end: every operation and the whole GraphSAGE model
 * against a double-precision reference and central differences, determinism across thread
 * counts, Adam against hand-computed updates, learning a toy problem, devices and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../common/batch.h"
#include "../common/ref.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/model.h"
#include "model/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- test mini-batches */

/* 0..maxdeg in-neighbours, none for every 11th destination (the draw is made all the same). */
static int batch_deg(halo_rng *r, int32_t i, int maxdeg)
{
    int deg = (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
    return i % 11 == 3 ? 0 : deg;
}

/* Builds `layers` blocks with nodes[l] sources and nodes[l+1] destinations in block l; each
 * destination gets 0..maxdeg random in-neighbours (some none), keyed by seed. */
static void batch_make(test_batch *t, int layers, const int32_t *nodes, int maxdeg, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 1, 0, 0);
    t->gid = HALO_ALLOC(int32_t, nodes[0]);
    for (int32_t i = 0; i < nodes[0]; i++) {
        t->gid[i] = 1000 + 7 * i + (int32_t)halo_rng_below(&r, 7);
    }
    test_batch_blocks(t, layers, nodes, maxdeg, &r, batch_deg);
}

/* ---------------------------------------------------------------- double reference */

/* Everything the reference forward needs. */
typedef struct ref_model {
    int layers;
    int dims[HALO_MAX_LAYERS + 1];
    size_t off[HALO_MAX_LAYERS + 1];
    double dropout;   /* 0: none */
    uint64_t seed, step;
} ref_model;

/* h' = h_dst W_self + mean(h_src) W_neigh + b, ReLU + dropout between layers; returns the mean
 * softmax cross-entropy over the seeds and (logits != NULL) the last layer's output. */
static double ref_loss(const ref_model *rm, const double *param, const halo_minibatch *mb,
                       const float *feat, const int32_t *labels, double *logits)
{
    int32_t rows = mb->num_input;
    double *h = malloc(sizeof(double) * (size_t)rows * rm->dims[0]);
    for (size_t i = 0; i < (size_t)rows * rm->dims[0]; i++) {
        h[i] = feat[i];
    }
    for (int l = 0; l < rm->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        int in = rm->dims[l], out = rm->dims[l + 1];
        const double *ws = param + rm->off[l], *wn = ws + (size_t)in * out,
                     *bias = ws + 2 * (size_t)in * out;
        double *y = calloc((size_t)b->num_dst * out, sizeof(double));
        double *mean = calloc((size_t)in, sizeof(double));
        for (int32_t i = 0; i < b->num_dst; i++) {
            int64_t deg = b->indptr[i + 1] - b->indptr[i];
            for (int k = 0; k < in; k++) {
                mean[k] = 0;
            }
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                for (int k = 0; k < in; k++) {
                    mean[k] += h[(size_t)b->indices[e] * in + k];
                }
            }
            for (int k = 0; k < in; k++) {
                mean[k] = deg > 0 ? mean[k] / (double)deg : 0.0;
            }
            for (int j = 0; j < out; j++) {
                double s = bias[j];
                for (int k = 0; k < in; k++) {
                    s += h[(size_t)i * in + k] * ws[(size_t)k * out + j] +
                         mean[k] * wn[(size_t)k * out + j];
                }
                if (l < rm->layers - 1) {
                    s = test_ref_relu_dropout(s, rm->seed, rm->step, l, b->src_gid[i], j,
                                              rm->dropout);
                }
                y[(size_t)i * out + j] = s;
            }
        }
        free(mean);
        free(h);
        h = y;
    }
    return test_ref_output(h, mb->num_seeds, rm->dims[rm->layers], labels, logits);
}

/* ref_loss as a function of the parameters, for test_central_diff. */
typedef struct loss_at {
    const ref_model *rm;      /* the reference */
    const halo_minibatch *mb; /* its batch */
    const float *feat;        /* input rows */
    const int32_t *lab;       /* seed labels */
} loss_at;

static double loss_of_params(void *ctx, const double *param)
{
    const loss_at *a = ctx;
    return ref_loss(a->rm, param, a->mb, a->feat, a->lab, NULL);
}

static void ref_from_model(ref_model *rm, halo_model *m, uint64_t step)
{
    const halo_model_config *c = halo_model_config_of(m);
    rm->layers = c->layers;
    for (int l = 0; l < c->layers; l++) {
        rm->dims[l] = halo_model_layer_in(m, l);
        rm->off[l] = halo_model_param_offset(m, l);
    }
    rm->dims[c->layers] = c->classes;
    rm->dropout = c->dropout;
    rm->seed = c->seed;
    rm->step = step;
}

/* ---------------------------------------------------------------- operations */

static halo_ops_ctx *open_cpu(int threads)
{
    halo_ops_ctx *ctx;
    halo_ops_config oc = {.threads = threads};
    assert_int_equal(halo_ops_cpu.open(&oc, &ctx), 0);
    return ctx;
}

static void gemm_matches_reference_in_all_transposes(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_cpu(2);
    int m = 37, n = 23, k = 29;
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            float *a = test_random_floats(99, (size_t)m * k, 1.0, 1);
            float *b = test_random_floats(99, (size_t)k * n, 1.0, 2);
            float *c = test_random_floats(99, (size_t)m * n, 1.0, 3);
            double *ref = malloc(sizeof(double) * m * n);
            int lda = ta ? m : k, ldb = tb ? k : n;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++) {
                        double av = ta ? a[p * lda + i] : a[i * lda + p];
                        double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
                        s += av * bv;
                    }
                    ref[i * n + j] = 0.5 * s + 2.0 * c[i * n + j];
                }
            }
            assert_int_equal(
                halo_ops_cpu.gemm(ctx, ta, tb, m, n, k, 0.5f, a, lda, b, ldb, 2.0f, c, n), 0);
            assert_true(test_max_rel_err(c, ref, (size_t)m * n, 1e-2, NULL) < 1e-5);
            free(ref);
            halo_free(a);
            halo_free(b);
            halo_free(c);
        }
    }
    halo_ops_cpu.close(ctx);
}

/* gemm_bias_act is bitwise gemm then bias_act: more rows than one GEMM task (1024), beta 0 and
 * 1, with and without ReLU and dropout, on 1 and 3 threads. */
static void gemm_bias_act_is_bitwise_gemm_then_bias_act(void **state)
{
    (void)state;
    int m = 2500, n = 33, k = 21, ldc = 35;
    float *a = test_random_floats(99, (size_t)m * k, 1.0, 31);
    float *b = test_random_floats(99, (size_t)k * n, 1.0, 32);
    float *bias = test_random_floats(99, (size_t)n, 0.5, 33);
    float *c0 = test_random_floats(99, (size_t)m * ldc, 1.0, 34);
    float *want = HALO_ALLOC(float, (size_t)m * ldc);
    float *got = HALO_ALLOC(float, (size_t)m * ldc);
    int32_t *gid = HALO_ALLOC(int32_t, m);
    for (int r = 0; r < m; r++) {
        gid[r] = 3 * r + 2;
    }
    halo_ops_dropout drop = {.p = 0.4f, .seed = 5, .step = 2, .layer = 0, .gid = gid};
    for (int threads = 1; threads <= 3; threads += 2) {
        halo_ops_ctx *ctx = open_cpu(threads);
        for (int v = 0; v < 6; v++) {
            float beta = v & 1 ? 1.0f : 0.0f;
            int relu = v >= 2;
            const halo_ops_dropout *dp = v >= 4 ? &drop : NULL;
            memcpy(want, c0, sizeof(float) * m * ldc);
            memcpy(got, c0, sizeof(float) * m * ldc);
            assert_int_equal(
                halo_ops_cpu.gemm(ctx, 0, 0, m, n, k, 1.0f, a, k, b, n, beta, want, ldc), 0);
            assert_int_equal(halo_ops_cpu.bias_act(ctx, want, m, n, ldc, bias, relu, dp), 0);
            assert_int_equal(halo_ops_cpu.gemm_bias_act(ctx, m, n, k, a, k, b, n, beta, got, ldc,
                                                        bias, relu, dp),
                             0);
            assert_memory_equal(got, want, sizeof(float) * m * ldc);
        }
        halo_ops_cpu.close(ctx);
    }
    halo_free(gid);
    halo_free(got);
    halo_free(want);
    halo_free(c0);
    halo_free(bias);
    halo_free(b);
    halo_free(a);
}

/* agg_mean against the mean in double, and agg_mean_backward against central differences of the
 * double mean of L = sum(w * agg(x)). */
static void aggregation_and_its_backward_match_finite_differences(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_cpu(3);
    int32_t nodes[2] = {120, 50};
    test_batch t;
    batch_make(&t, 1, nodes, 9, 5);
    const halo_block *b = &t.mb.blocks[0];
    int dim = 13, ld_src = 15, ld_out = 17;
    float *x = test_random_floats(99, (size_t)b->num_src * ld_src, 1.0, 11);
    float *w = test_random_floats(99, (size_t)b->num_dst * ld_out, 1.0, 12);
    float *y = HALO_NEW(float, (size_t)b->num_dst * ld_out);
    assert_int_equal(halo_ops_cpu.agg_mean(ctx, b->num_dst, b->indptr, b->indices, dim, x, ld_src,
                                           y, ld_out, 0),
                     0);
    /* forward in double */
    double *yref = calloc((size_t)b->num_dst * dim, sizeof(double));
    float *yf = HALO_NEW(float, (size_t)b->num_dst * dim);
    for (int32_t i = 0; i < b->num_dst; i++) {
        int64_t deg = b->indptr[i + 1] - b->indptr[i];
        for (int j = 0; j < dim; j++) {
            double s = 0;
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                s += x[(size_t)b->indices[e] * ld_src + j];
            }
            yref[(size_t)i * dim + j] = deg ? s / deg : 0;
            yf[(size_t)i * dim + j] = y[(size_t)i * ld_out + j];
        }
    }
    assert_true(test_max_rel_err(yf, yref, (size_t)b->num_dst * dim, 1e-3, NULL) < 1e-5);
    /* backward: analytic (float) vs central differences of the double forward */
    float *dx = HALO_NEW(float, (size_t)b->num_src * ld_src);
    assert_int_equal(halo_ops_cpu.agg_mean_backward(ctx, b->num_dst, b->num_src, b->num_edges,
                                                    b->indptr, b->indices, dim, w, ld_out, dx,
                                                    ld_src, 0, NULL),
                     0);
    double *fd = calloc((size_t)b->num_src * dim, sizeof(double));
    float *dxf = HALO_NEW(float, (size_t)b->num_src * dim);
    double hstep = 1e-4;
    for (int32_t u = 0; u < b->num_src; u++) {
        for (int j = 0; j < dim; j++) {
            double lp = 0, lm = 0;
            for (int32_t i = 0; i < b->num_dst; i++) {
                int64_t deg = b->indptr[i + 1] - b->indptr[i];
                for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                    if (b->indices[e] == u) {
                        lp += w[(size_t)i * ld_out + j] * hstep / deg;
                        lm -= w[(size_t)i * ld_out + j] * hstep / deg;
                    }
                }
            }
            fd[(size_t)u * dim + j] = (lp - lm) / (2 * hstep);
            dxf[(size_t)u * dim + j] = dx[(size_t)u * ld_src + j];
        }
    }
    assert_true(test_max_rel_err(dxf, fd, (size_t)b->num_src * dim, 1e-3, NULL) < 1e-5);
    /* keep_rows = num_src adds to what is there; keep_rows = k adds to rows below k and
     * overwrites the others (bitwise what keep_rows = 0 gives them) */
    float *dx2 = HALO_NEW(float, (size_t)b->num_src * ld_src);
    int32_t keeps[3] = {b->num_src, b->num_dst, 7};
    for (int q = 0; q < 3; q++) {
        int32_t keep = keeps[q];
        for (size_t i = 0; i < (size_t)b->num_src * ld_src; i++) {
            dx2[i] = 1.0f;
        }
        halo_ops_cpu.agg_mean_backward(ctx, b->num_dst, b->num_src, b->num_edges, b->indptr,
                                       b->indices, dim, w, ld_out, dx2, ld_src, keep, NULL);
        for (int32_t u = 0; u < b->num_src; u++) {
            for (int j = 0; j < dim; j++) {
                float got = dx2[(size_t)u * ld_src + j], alone = dx[(size_t)u * ld_src + j];
                if (u < keep) {
                    assert_true(fabsf(got - 1.0f - alone) < 1e-5f);
                } else {
                    assert_true(memcmp(&got, &alone, sizeof got) == 0);
                }
            }
        }
    }
    free(yref);
    free(fd);
    halo_free(dx2);
    halo_free(dxf);
    halo_free(yf);
    halo_free(dx);
    halo_free(x);
    halo_free(w);
    halo_free(y);
    test_batch_free(&t);
    halo_ops_cpu.close(ctx);
}

/* agg_mean_backward with the activation's backward fused is bitwise the two calls (with and
 * without the column sums; sources over several chunks of the sums; 1 and 3 threads). */
static void fused_activation_backward_is_bitwise_the_two_calls(void **state)
{
    (void)state;
    int32_t nodes[2] = {700, 200};
    test_batch t;
    batch_make(&t, 1, nodes, 9, 6);
    const halo_block *b = &t.mb.blocks[0];
    int dim = 11, ld = 13, ld_out = 12;
    size_t n = (size_t)b->num_src * ld;
    float *d_out = test_random_floats(99, (size_t)b->num_dst * ld_out, 1.0, 41);
    float *y = test_random_floats(99, n, 1.0, 42);
    float *self = test_random_floats(99, n, 1.0, 43);
    float *want = HALO_ALLOC(float, n), *got = HALO_ALLOC(float, n);
    float db_want[11], db_got[11];
    for (int threads = 1; threads <= 3; threads += 2) {
        halo_ops_ctx *ctx = open_cpu(threads);
        for (int with_db = 0; with_db < 2; with_db++) {
            memcpy(want, self, n * sizeof(float));
            memcpy(got, self, n * sizeof(float));
            assert_int_equal(halo_ops_cpu.agg_mean_backward(ctx, b->num_dst, b->num_src,
                                                            b->num_edges, b->indptr, b->indices,
                                                            dim, d_out, ld_out, want, ld,
                                                            b->num_dst, NULL),
                             0);
            assert_int_equal(halo_ops_cpu.act_backward(ctx, want, y, b->num_src, dim, ld, 0.25f,
                                                       with_db ? db_want : NULL),
                             0);
            halo_ops_act_grad act = {.y = y, .p = 0.25f, .db = with_db ? db_got : NULL};
            assert_int_equal(halo_ops_cpu.agg_mean_backward(ctx, b->num_dst, b->num_src,
                                                            b->num_edges, b->indptr, b->indices,
                                                            dim, d_out, ld_out, got, ld,
                                                            b->num_dst, &act),
                             0);
            assert_memory_equal(got, want, n * sizeof(float));
            if (with_db) {
                assert_memory_equal(db_got, db_want, sizeof db_got);
            }
        }
        halo_ops_cpu.close(ctx);
    }
    halo_free(got);
    halo_free(want);
    halo_free(self);
    halo_free(y);
    halo_free(d_out);
    test_batch_free(&t);
}

/* act(x + b) with ReLU and dropout: forward against the specification in double, backward
 * (act_backward + col_sum) against central differences of L = sum(w * act(x + b)). */
static void bias_relu_dropout_backward_matches_finite_differences(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_cpu(2);
    int rows = 300, cols = 7;
    float p = 0.3f;
    int32_t *gid = HALO_ALLOC(int32_t, rows);
    for (int r = 0; r < rows; r++) {
        gid[r] = 5 * r + 1;
    }
    float *x = test_random_floats(99, (size_t)rows * cols, 1.0, 21);
    float *bias = test_random_floats(99, (size_t)cols, 0.3, 22);
    float *w = test_random_floats(99, (size_t)rows * cols, 1.0, 23);
    float *y = HALO_ALLOC(float, (size_t)rows * cols);
    memcpy(y, x, sizeof(float) * rows * cols);
    halo_ops_dropout drop = {.p = p, .seed = 7, .step = 3, .layer = 1, .gid = gid};
    assert_int_equal(halo_ops_cpu.bias_act(ctx, y, rows, cols, cols, bias, 1, &drop), 0);
    int dropped = 0, positive = 0;
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < cols; j++) {
            double v = (double)x[r * cols + j] + bias[j];
            v = v > 0 ? v : 0;
            int keep = test_ref_keep(7, 3, 1, gid[r], j, p);
            dropped += !keep;
            positive += v > 0;
            double want = keep ? v / (1.0 - p) : 0.0;
            assert_true(fabs(y[r * cols + j] - want) <= 1e-6 * (1 + fabs(want)));
        }
    }
    /* about 30% dropped */
    assert_true(dropped > 0.25 * rows * cols && dropped < 0.35 * rows * cols);
    assert_true(positive > 0.3 * rows * cols);
    float *dx = HALO_ALLOC(float, (size_t)rows * cols);
    memcpy(dx, w, sizeof(float) * rows * cols);
    assert_int_equal(halo_ops_cpu.act_backward(ctx, dx, y, rows, cols, cols, p, NULL), 0);
    float db[7];
    assert_int_equal(halo_ops_cpu.col_sum(ctx, dx, rows, cols, cols, db), 0);
    /* the fused column sums: bitwise the two calls' (rows span two chunks of the sums) */
    float *dx1 = HALO_ALLOC(float, (size_t)rows * cols);
    memcpy(dx1, w, sizeof(float) * rows * cols);
    float db1[7];
    assert_int_equal(halo_ops_cpu.act_backward(ctx, dx1, y, rows, cols, cols, p, db1), 0);
    assert_memory_equal(dx1, dx, sizeof(float) * rows * cols);
    assert_memory_equal(db1, db, sizeof db);
    halo_free(dx1);
    double h = 1e-6;
    double *fdx = malloc(sizeof(double) * rows * cols);
    double fdb[7] = {0};
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < cols; j++) {
            double keep = test_ref_keep(7, 3, 1, gid[r], j, p) ? 1.0 / (1.0 - p) : 0.0;
            double v = (double)x[r * cols + j] + bias[j];
            double vp = v + h > 0 ? v + h : 0, vm = v - h > 0 ? v - h : 0;
            fdx[r * cols + j] = w[r * cols + j] * keep * (vp - vm) / (2 * h);
            fdb[j] += fdx[r * cols + j];
        }
    }
    assert_true(test_max_rel_err(dx, fdx, (size_t)rows * cols, 1e-3, NULL) < 1e-5);
    assert_true(test_max_rel_err(db, fdb, 7, 1e-3, NULL) < 1e-4);
    /* no dropout: identity on positives */
    memcpy(y, x, sizeof(float) * rows * cols);
    halo_ops_cpu.bias_act(ctx, y, rows, cols, cols, NULL, 1, NULL);
    for (int i = 0; i < rows * cols; i++) {
        assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
    }
    free(fdx);
    halo_free(dx);
    halo_free(y);
    halo_free(w);
    halo_free(bias);
    halo_free(x);
    halo_free(gid);
    halo_ops_cpu.close(ctx);
}

/* Softmax cross-entropy: per-row loss against double, dx against central differences of the
 * mean loss, predictions are the arg-max. */
static void softmax_cross_entropy_matches_finite_differences(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_cpu(2);
    int rows = 40, c = 6;
    float *x = test_random_floats(99, (size_t)rows * c, 3.0, 31);
    int32_t *lab = test_random_labels(98, rows, c, 32);
    float *dx = HALO_ALLOC(float, (size_t)rows * c);
    float *loss = HALO_ALLOC(float, rows);
    int32_t *pred = HALO_ALLOC(int32_t, rows);
    assert_int_equal(
        halo_ops_cpu.softmax_xent(ctx, x, rows, c, lab, 1.0f / rows, dx, loss, pred), 0);
    double *fd = malloc(sizeof(double) * rows * c);
    double h = 1e-6;
    for (int r = 0; r < rows; r++) {
        double xr[6] = {0};
        int best = 0;
        for (int j = 0; j < c; j++) {
            xr[j] = x[r * c + j];
            best = xr[j] > xr[best] ? j : best;
        }
        assert_int_equal(pred[r], best);
        for (int j = -1; j < c; j++) {
            double lpm[2];
            for (int s = 0; s < 2; s++) {
                double se = 0;
                for (int k = 0; k < c; k++) {
                    double v = xr[k] + (k == j ? (s ? -h : h) : 0);
                    se += exp(v);
                }
                double xl = xr[lab[r]] + (lab[r] == j ? (s ? -h : h) : 0);
                lpm[s] = log(se) - xl;
            }
            if (j < 0) {
                assert_true(fabs(loss[r] - lpm[0]) < 1e-5 * (1 + fabs(lpm[0])));
            } else {
                fd[r * c + j] = (lpm[0] - lpm[1]) / (2 * h) / rows;
            }
        }
    }
    assert_true(test_max_rel_err(dx, fd, (size_t)rows * c, 1e-3, NULL) < 1e-4);
    int32_t bad = c;
    assert_int_equal(halo_ops_cpu.softmax_xent(ctx, x, 1, c, &bad, 1.0f, dx, loss, pred),
                     HALO_EINPUT);
    free(fd);
    halo_free(x);
    halo_free(lab);
    halo_free(dx);
    halo_free(loss);
    halo_free(pred);
    halo_ops_cpu.close(ctx);
}

/* ---------------------------------------------------------------- whole model */

static halo_model *make_model(int layers, int in, int hidden, int classes, float dropout,
                              int threads, int path)
{
    halo_model_config cfg;
    test_model_config(&cfg, layers, in, hidden, classes, dropout, threads, 17);
    cfg.path = path;
    halo_model *m = NULL;
    int rc = halo_model_create(&cfg, &m);
    if (rc < 0) {
        fprintf(stderr, "%s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    return m;
}

/* Gradient of the whole model (float, analytic) against central differences of the double
 * reference with the same dropout masks, for every parameter. */
static void check_model_gradient(int layers, int in, int hidden, int classes, int path,
                                 float dropout, const int32_t *nodes)
{
    halo_model *m = make_model(layers, in, hidden, classes, dropout, 2, path);
    test_batch t;
    batch_make(&t, layers, nodes, 6, 40 + (uint64_t)path);
    float *feat = test_random_floats(99, (size_t)nodes[0] * in, 1.0, 41);
    int32_t *lab = test_random_labels(98, nodes[layers], classes, 42);
    uint64_t step = 9;
    halo_model_stats st;
    size_t n;
    float *p = halo_model_params(m, &n);
    /* non-zero biases, so that no pre-activation sits exactly on ReLU's kink (a row with no
     * neighbours and an all-zero input would otherwise be exactly 0) */
    for (int l = 0; l < layers; l++) {
        int li = halo_model_layer_in(m, l), lo = halo_model_layer_out(m, l);
        float *b = p + halo_model_param_offset(m, l) + 2 * (size_t)li * lo;
        for (int j = 0; j < lo; j++) {
            b[j] = 0.05f * (float)(j % 5 + 1);
        }
    }
    assert_int_equal(halo_model_push_state(m), 0);
    assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, step, &st), 0);
    float *g = halo_model_grads(m, NULL);
    ref_model rm;
    ref_from_model(&rm, m, step);
    double *pd = malloc(sizeof(double) * n);
    double *fd = calloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        pd[i] = p[i];
    }
    double l0 = ref_loss(&rm, pd, &t.mb, feat, lab, NULL);
    assert_true(fabs(st.loss - l0) < 1e-5 * (1 + fabs(l0)));
    assert_int_equal(st.seeds, nodes[layers]);
    loss_at la = {&rm, &t.mb, feat, lab};
    test_central_diff(loss_of_params, &la, pd, n, 1e-6, fd);
    size_t at = 0;
    double err = test_max_rel_err(g, fd, n, 1e-2, &at);
    if (err >= 2e-3) {
        fprintf(stderr, "# layers %d path %d: gradient %zu is %g, finite differences %g\n",
                layers, path, at, (double)g[at], fd[at]);
    }
    assert_true(err < 2e-3);
    free(pd);
    free(fd);
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&t);
    halo_model_free(m);
}

static void model_gradient_matches_finite_differences_agg_first(void **state)
{
    (void)state;
    int32_t nodes[3] = {60, 25, 9};
    check_model_gradient(2, 5, 6, 4, HALO_MODEL_PATH_AGG_FIRST, 0.5f, nodes);
}

static void model_gradient_matches_finite_differences_lin_first(void **state)
{
    (void)state;
    int32_t nodes[3] = {60, 25, 9};
    check_model_gradient(2, 5, 6, 4, HALO_MODEL_PATH_LIN_FIRST, 0.5f, nodes);
}

static void model_gradient_matches_finite_differences_three_layers(void **state)
{
    (void)state;
    int32_t nodes[4] = {80, 40, 20, 7};
    check_model_gradient(3, 4, 5, 3, HALO_MODEL_PATH_AUTO, 0.25f, nodes);
}

static void model_gradient_matches_finite_differences_one_layer(void **state)
{
    (void)state;
    int32_t nodes[2] = {30, 12};
    check_model_gradient(1, 6, 16, 5, HALO_MODEL_PATH_AUTO, 0.5f, nodes);
}

/* Inference (no dropout) gives the reference's logits and loss; applying the layers one by one
 * (the full-neighbour path) gives the same logits bit for bit. */
static void inference_matches_reference_and_layerwise_path(void **state)
{
    (void)state;
    int32_t nodes[3] = {70, 30, 11};
    halo_model *m = make_model(2, 5, 8, 3, 0.5f, 2, HALO_MODEL_PATH_AUTO);
    test_batch t;
    batch_make(&t, 2, nodes, 5, 50);
    float *feat = test_random_floats(99, (size_t)nodes[0] * 5, 1.0, 51);
    int32_t *lab = test_random_labels(98, nodes[2], 3, 52);
    float logits[11 * 3];
    int32_t pred[11];
    halo_model_stats st;
    assert_int_equal(halo_model_infer(m, &t.mb, feat, lab, logits, pred, &st), 0);
    size_t n;
    float *p = halo_model_params(m, &n);
    double *pd = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) {
        pd[i] = p[i];
    }
    ref_model rm;
    ref_from_model(&rm, m, 0);
    rm.dropout = 0;
    double ref_logits[11 * 3];
    double l = ref_loss(&rm, pd, &t.mb, feat, lab, ref_logits);
    assert_true(fabs(st.loss - l) < 1e-5);
    assert_true(test_max_rel_err(logits, ref_logits, 33, 1e-2, NULL) < 1e-5);
    int correct = 0;
    for (int i = 0; i < 11; i++) {
        correct += pred[i] == lab[i];
    }
    assert_int_equal(st.correct, correct);
    float *h1 = HALO_ALLOC(float, (size_t)nodes[1] * 8);
    float lw[11 * 3];
    assert_int_equal(halo_model_layer_forward(m, 0, &t.mb.blocks[0], feat, h1), 0);
    assert_int_equal(halo_model_layer_forward(m, 1, &t.mb.blocks[1], h1, lw), 0);
    assert_memory_equal(lw, logits, sizeof lw);
    free(pd);
    halo_free(h1);
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&t);
    halo_model_free(m);
}

/* The same mini-batch gives bit-identical loss, gradients and updated weights with 1, 2, 3 and 4
 * threads, on both layer paths. */
static void training_step_is_bitwise_identical_across_thread_counts(void **state)
{
    (void)state;
    int32_t nodes[3] = {6000, 1500, 300};
    test_batch t;
    batch_make(&t, 2, nodes, 12, 60);
    int in = 40, hidden = 64, classes = 7;
    float *feat = test_random_floats(99, (size_t)nodes[0] * in, 1.0, 61);
    int32_t *lab = test_random_labels(98, nodes[2], classes, 62);
    for (int path = HALO_MODEL_PATH_AGG_FIRST; path <= HALO_MODEL_PATH_LIN_FIRST; path++) {
        float *g1 = NULL, *p1 = NULL;
        float loss1 = 0;
        size_t n = 0;
        for (int threads = 1; threads <= 4; threads++) {
            halo_model *m = make_model(2, in, hidden, classes, 0.5f, threads, path);
            halo_model_stats st;
            assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, 3, &st), 0);
            float *g = halo_model_grads(m, &n);
            assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
            assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, 4, &st), 0);
            assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
            float *p = halo_model_params(m, NULL);
            if (threads == 1) {
                g1 = HALO_ALLOC(float, n);
                p1 = HALO_ALLOC(float, n);
                memcpy(g1, g, n * sizeof(float));
                memcpy(p1, p, n * sizeof(float));
                loss1 = st.loss;
            } else {
                assert_memory_equal(&st.loss, &loss1, sizeof(float));
                assert_memory_equal(g, g1, n * sizeof(float));
                assert_memory_equal(p, p1, n * sizeof(float));
            }
            halo_model_free(m);
        }
        halo_free(g1);
        halo_free(p1);
    }
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&t);
}

/* Adam: first step moves each weight by lr * sign(g) (hand-computed), later steps (with weight
 * decay and a gradient scale) follow torch.optim.Adam's formulas evaluated in double. */
static void adam_matches_hand_computed_updates(void **state)
{
    (void)state;
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.layers = 1;
    cfg.in_dim = 1;
    cfg.classes = 1;
    cfg.lr = 0.1f;
    cfg.threads = 1;
    halo_model *m = NULL;
    assert_int_equal(halo_model_create(&cfg, &m), 0);
    size_t n;
    float *p = halo_model_params(m, &n);
    float *g = halo_model_grads(m, NULL);
    assert_int_equal(n, 16); /* 3 weights padded to 16 */
    p[0] = 1.0f;
    p[1] = -2.0f;
    p[2] = 0.5f;
    g[0] = 0.1f;
    g[1] = -0.2f;
    g[2] = 0.0f;
    assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
    assert_true(fabsf(p[0] - 0.9f) < 1e-6f);
    assert_true(fabsf(p[1] - -1.9f) < 1e-6f);
    assert_true(p[2] == 0.5f);
    for (size_t i = 3; i < n; i++) {
        assert_true(p[i] == 0.0f);
    }
    assert_int_equal(halo_model_adam_t(m), 1);
    /* three more steps with decay 0.01 and a scale of 0.5, against double */
    halo_model_free(m);
    cfg.weight_decay = 0.01f;
    assert_int_equal(halo_model_create(&cfg, &m), 0);
    p = halo_model_params(m, NULL);
    g = halo_model_grads(m, NULL);
    double pd[3] = {1.0, -2.0, 0.5}, md[3] = {0}, vd[3] = {0};
    double gs[3][3] = {{0.4, -0.2, 1.0}, {0.1, 0.3, -2.0}, {-0.5, 0.05, 0.7}};
    for (int i = 0; i < 3; i++) {
        p[i] = (float)pd[i];
    }
    for (int s = 0; s < 3; s++) {
        double b1 = 0.9, b2 = 0.999, lr = 0.1, eps = 1e-8, wd = 0.01;
        for (int i = 0; i < 3; i++) {
            g[i] = (float)gs[s][i];
            double gg = gs[s][i] * 0.5 + wd * pd[i];
            md[i] = b1 * md[i] + (1 - b1) * gg;
            vd[i] = b2 * vd[i] + (1 - b2) * gg * gg;
            double bc1 = 1 - pow(b1, s + 1), bc2 = 1 - pow(b2, s + 1);
            pd[i] -= lr / bc1 * md[i] / (sqrt(vd[i]) / sqrt(bc2) + eps);
        }
        assert_int_equal(halo_model_adam_step(m, 0.5f), 0);
        for (int i = 0; i < 3; i++) {
            assert_true(fabs(p[i] - pd[i]) < 2e-6);
            assert_true(fabs(halo_model_adam_m(m)[i] - md[i]) < 1e-6);
            assert_true(fabs(halo_model_adam_v(m)[i] - vd[i]) < 1e-6);
        }
    }
    assert_int_equal(halo_model_adam_t(m), 3);
    halo_model_free(m);
}

/* Weight init: Xavier uniform with ReLU gain, per matrix within the bound, roughly its variance,
 * a pure function of the seed; biases zero; the checksum tells weights apart. */
static void init_is_xavier_uniform_and_keyed_by_seed(void **state)
{
    (void)state;
    halo_model *a = make_model(2, 100, 64, 10, 0.5f, 1, 0);
    halo_model *b = make_model(2, 100, 64, 10, 0.5f, 2, 0);
    size_t n;
    float *pa = halo_model_params(a, &n);
    assert_memory_equal(pa, halo_model_params(b, NULL), n * sizeof(float));
    assert_true(halo_model_param_checksum(a) == halo_model_param_checksum(b));
    for (int l = 0; l < 2; l++) {
        int in = halo_model_layer_in(a, l), out = halo_model_layer_out(a, l);
        double bound = sqrt(2.0) * sqrt(6.0 / (in + out));
        size_t off = halo_model_param_offset(a, l);
        assert_int_equal(off % 16, 0);
        double sq = 0;
        for (size_t i = 0; i < 2 * (size_t)in * out; i++) {
            assert_true(fabs(pa[off + i]) <= bound);
            sq += (double)pa[off + i] * pa[off + i];
        }
        double var = sq / (2.0 * in * out);
        assert_true(fabs(var - bound * bound / 3) < 0.1 * bound * bound / 3);
        for (int j = 0; j < out; j++) {
            assert_true(pa[off + 2 * (size_t)in * out + j] == 0.0f);
        }
    }
    pa[5] += 1e-6f;
    assert_true(halo_model_param_checksum(a) != halo_model_param_checksum(b));
    halo_model_free(a);
    halo_model_free(b);
}

/* A node's class is only visible in its neighbours' features (its own are noise); a 2-layer model
 * with dropout learns it: the loss falls far below chance and accuracy is high. */
static void model_learns_a_separable_toy_problem(void **state)
{
    (void)state;
    enum { C = 4, IN = 8, SEEDS = 200, HID = 400, INPUT = 1200, DEG = 6 };
    int32_t nodes[3] = {INPUT, HID, SEEDS};
    int32_t *cls = HALO_ALLOC(int32_t, INPUT);
    for (int i = 0; i < INPUT; i++) {
        cls[i] = i % C;
    }
    test_batch t;
    batch_make(&t, 2, nodes, DEG, 70);
    halo_rng r;
    halo_rng_init(&r, 71, HALO_RNG_TEST, 0, 0, 0);
    /* rewire: every destination's neighbours have its class (sources of class k: i % C == k) */
    for (int l = 0; l < 2; l++) {
        halo_block *b = &t.mb.blocks[l];
        int64_t e = 0;
        for (int32_t i = 0; i < b->num_dst; i++) {
            t.indptr[l][i] = e;
            for (int k = 0; k < DEG; k++) {
                int32_t u = (int32_t)halo_rng_below(&r, (uint64_t)b->num_src / C) * C + cls[i];
                t.indices[l][e++] = u;
            }
        }
        t.indptr[l][b->num_dst] = e;
        b->num_edges = e;
    }
    float *feat = HALO_ALLOC(float, (size_t)INPUT * IN);
    for (int i = 0; i < INPUT; i++) {
        for (int j = 0; j < IN; j++) {
            double noise = 2.0 * halo_rng_uniform(&r) - 1.0;
            /* destinations of block 0 (i < HID) carry pure noise */
            feat[i * IN + j] = (float)(noise + (i >= HID && j == cls[i] ? 1.5 : 0.0));
        }
    }
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = IN;
    cfg.classes = C;
    cfg.lr = 0.01f;
    cfg.threads = 2;
    halo_model *m = NULL;
    assert_int_equal(halo_model_create(&cfg, &m), 0);
    halo_model_stats st, first = {0};
    for (int s = 0; s < 150; s++) {
        assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, cls, (uint64_t)s, &st),
                         0);
        if (s == 0) {
            first = st;
        }
        assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
    }
    halo_model_stats ev;
    assert_int_equal(halo_model_infer(m, &t.mb, feat, cls, NULL, NULL, &ev), 0);
    fprintf(stderr, "# toy: loss %.4f -> %.4f (train), %.4f eval, accuracy %d/%d\n",
            (double)first.loss, (double)st.loss, (double)ev.loss, ev.correct, ev.seeds);
    assert_true(first.loss > 1.2f);
    assert_true(ev.loss < 0.2f * first.loss);
    assert_true(ev.correct >= 0.95 * SEEDS);
    halo_model_free(m);
    halo_free(feat);
    halo_free(cls);
    test_batch_free(&t);
}

/* --device: parsing; cpu stays cpu; auto falls back to the CPU without a GPU; gpu without one is
 * a HALO_ECUDA error naming the flag; with GPUs a rank takes local_rank % count. */
static void device_resolution_follows_the_flag(void **state)
{
    (void)state;
    int d = -1, gpu = 7;
    assert_int_equal(halo_model_device_parse("auto", &d), 0);
    assert_int_equal(d, HALO_DEVICE_AUTO);
    assert_int_equal(halo_model_device_parse("gpu", &d), 0);
    assert_int_equal(d, HALO_DEVICE_GPU);
    assert_int_equal(halo_model_device_parse("tpu", &d), HALO_EUSAGE);
    assert_int_equal(halo_model_device_resolve(HALO_DEVICE_CPU, 3, &d, &gpu), 0);
    assert_int_equal(d, HALO_DEVICE_CPU);
    assert_int_equal(gpu, -1);
    int count = halo_model_gpu_count();
    if (count == 0) {
        assert_int_equal(halo_model_device_resolve(HALO_DEVICE_AUTO, 0, &d, &gpu), 0);
        assert_int_equal(d, HALO_DEVICE_CPU);
        assert_int_equal(halo_model_device_resolve(HALO_DEVICE_GPU, 0, &d, &gpu), HALO_ECUDA);
        assert_non_null(strstr(halo_errmsg(), "--device gpu: no GPU found"));
    } else {
        assert_int_equal(halo_model_device_resolve(HALO_DEVICE_AUTO, count + 1, &d, &gpu), 0);
        assert_int_equal(d, HALO_DEVICE_GPU);
        assert_int_equal(gpu, 1 % count);
    }
}

/* Bad input is an error, never a crash: labels out of range, a source number outside the
 * block, a layer count that differs from the model's, a bad configuration. */
static void bad_input_is_reported(void **state)
{
    (void)state;
    int32_t nodes[3] = {20, 10, 4};
    halo_model *m = make_model(2, 3, 4, 2, 0.5f, 1, 0);
    test_batch t;
    batch_make(&t, 2, nodes, 4, 80);
    float *feat = test_random_floats(99, 20 * 3, 1.0, 81);
    int32_t lab[4] = {0, 1, 2, 0};
    assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, 0, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "label 2"));
    lab[2] = 1;
    assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, 0, NULL), 0);
    int32_t keep = t.indices[0][0];
    t.indices[0][0] = 20;
    assert_int_equal(halo_model_train_forward_backward(m, &t.mb, feat, lab, 0, NULL), HALO_EINPUT);
    t.indices[0][0] = keep;
    t.mb.layers = 1;
    assert_int_equal(halo_model_infer(m, &t.mb, feat, NULL, NULL, NULL, NULL), HALO_EINPUT);
    t.mb.layers = 2;
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    halo_model *bad = NULL;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE); /* in_dim 0 */
    cfg.in_dim = 3;
    cfg.classes = 2;
    cfg.dropout = 1.0f;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    assert_null(bad);
    halo_free(feat);
    test_batch_free(&t);
    halo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_matches_reference_in_all_transposes),
        cmocka_unit_test(gemm_bias_act_is_bitwise_gemm_then_bias_act),
        cmocka_unit_test(aggregation_and_its_backward_match_finite_differences),
        cmocka_unit_test(fused_activation_backward_is_bitwise_the_two_calls),
        cmocka_unit_test(bias_relu_dropout_backward_matches_finite_differences),
        cmocka_unit_test(softmax_cross_entropy_matches_finite_differences),
        cmocka_unit_test(model_gradient_matches_finite_differences_agg_first),
        cmocka_unit_test(model_gradient_matches_finite_differences_lin_first),
        cmocka_unit_test(model_gradient_matches_finite_differences_three_layers),
        cmocka_unit_test(model_gradient_matches_finite_differences_one_layer),
        cmocka_unit_test(inference_matches_reference_and_layerwise_path),
        cmocka_unit_test(training_step_is_bitwise_identical_across_thread_counts),
        cmocka_unit_test(adam_matches_hand_computed_updates),
        cmocka_unit_test(init_is_xavier_uniform_and_keyed_by_seed),
        cmocka_unit_test(model_learns_a_separable_toy_problem),
        cmocka_unit_test(device_resolution_follows_the_flag),
        cmocka_unit_test(bad_input_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
