/* Unit tests of the RGCN model (runtime/model with cfg.kind = HALO_MODEL_RGCN) on the CPU back
 * end: gradients of every parameter and of the input rows against central differences of an
 * independent double-precision implementation (with and without basis decomposition, with
 * destinations that have no sampled edge of some relations), inference against it, bit-identical
 * results across thread counts, init keyed by seed, and bad typed input. */
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- typed test mini-batches */

/* A random typed mini-batch: the blocks of test_batch plus an edge type per edge. */
typedef struct typed_batch {
    test_batch t;                    /* blocks and their arrays */
    uint8_t *etype[HALO_MAX_LAYERS]; /* per block */
} typed_batch;

/* 0..maxdeg in-neighbours, none for every 7th destination. */
static int typed_deg(halo_rng *r, int32_t i, int maxdeg)
{
    int deg = (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
    return i % 7 == 5 ? 0 : deg;
}

/* Blocks with nodes[l] sources and nodes[l+1] destinations; edge types drawn from [0, R), except
 * that destination 1 of every block has all its edges of relation R-1 (so every other relation
 * is empty there) and destination 2 none of relation 0. */
static void typed_make(typed_batch *b, int layers, const int32_t *nodes, int maxdeg, int R,
                       uint64_t seed)
{
    memset(b, 0, sizeof *b);
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 2, 0, 0);
    b->t.gid = HALO_ALLOC(int32_t, nodes[0]);
    for (int32_t i = 0; i < nodes[0]; i++) {
        b->t.gid[i] = 500 + 3 * i + (int32_t)halo_rng_below(&r, 3);
    }
    test_batch_blocks(&b->t, layers, nodes, maxdeg, &r, typed_deg);
    for (int l = 0; l < layers; l++) {
        halo_block *blk = &b->t.mb.blocks[l];
        b->etype[l] = HALO_ALLOC(uint8_t, blk->num_edges + 1);
        for (int32_t i = 0; i < blk->num_dst; i++) {
            for (int64_t e = blk->indptr[i]; e < blk->indptr[i + 1]; e++) {
                int t = (int)halo_rng_below(&r, (uint64_t)R);
                if (i == 1) {
                    t = R - 1;
                } else if (i == 2 && t == 0) {
                    t = R > 1 ? 1 : 0;
                }
                b->etype[l][e] = (uint8_t)t;
            }
        }
        blk->etype = b->etype[l];
    }
}

static void typed_free(typed_batch *b)
{
    for (int l = 0; l < b->t.mb.layers; l++) {
        halo_free(b->etype[l]);
        b->t.mb.blocks[l].etype = NULL;
    }
    test_batch_free(&b->t);
}

/* ---------------------------------------------------------------- double reference */

/* The layout of model.h, restated: W_self, then R weights or B bases (in x out each), then the
 * R x B coefficients when B > 0, then the bias. */
typedef struct ref_rgcn {
    int layers, R, B;
    int dims[HALO_MAX_LAYERS + 1];
    size_t off[HALO_MAX_LAYERS + 1]; /* from halo_model_param_offset */
    double dropout;
    uint64_t seed, step;
} ref_rgcn;

static size_t ref_bias_at(const ref_rgcn *rm, int l)
{
    size_t io = (size_t)rm->dims[l] * rm->dims[l + 1];
    size_t mats = 1 + (size_t)(rm->B > 0 ? rm->B : rm->R);
    return mats * io + (rm->B > 0 ? (size_t)rm->R * rm->B : 0);
}

/* Relation r's weight (in x out) of layer l into w: W_r, or sum_b a[r][b] V_b. */
static void ref_weight(const ref_rgcn *rm, const double *param, int l, int r, double *w)
{
    int in = rm->dims[l], out = rm->dims[l + 1];
    size_t io = (size_t)in * out;
    const double *base = param + rm->off[l];
    if (rm->B == 0) {
        memcpy(w, base + (size_t)(1 + r) * io, io * sizeof(double));
        return;
    }
    const double *coef = base + (size_t)(1 + rm->B) * io;
    for (size_t k = 0; k < io; k++) {
        double s = 0;
        for (int b = 0; b < rm->B; b++) {
            s += coef[(size_t)r * rm->B + b] * base[(size_t)(1 + b) * io + k];
        }
        w[k] = s;
    }
}

/* h'_i = h_i W_self + sum_r (1/deg_r i) sum_{u in N_r(i)} h_u W_r + b, ReLU and dropout between
 * layers, one destination and relation at a time; returns the mean softmax cross-entropy and
 * (logits != NULL) the output. feat is given in double so the input can be perturbed. */
static double ref_loss(const ref_rgcn *rm, const double *param, const halo_minibatch *mb,
                       const double *feat, const int32_t *labels, double *logits)
{
    double *h = malloc(sizeof(double) * (size_t)mb->num_input * rm->dims[0]);
    memcpy(h, feat, sizeof(double) * (size_t)mb->num_input * rm->dims[0]);
    for (int l = 0; l < rm->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        int in = rm->dims[l], out = rm->dims[l + 1];
        const double *ws = param + rm->off[l], *bias = ws + ref_bias_at(rm, l);
        double *wr = malloc(sizeof(double) * (size_t)in * out);
        double *mean = malloc(sizeof(double) * (size_t)in);
        double *y = malloc(sizeof(double) * (size_t)b->num_dst * out);
        for (int32_t i = 0; i < b->num_dst; i++) {
            for (int j = 0; j < out; j++) {
                double s = bias[j];
                for (int k = 0; k < in; k++) {
                    s += h[(size_t)i * in + k] * ws[(size_t)k * out + j];
                }
                y[(size_t)i * out + j] = s;
            }
        }
        for (int r = 0; r < rm->R; r++) {
            ref_weight(rm, param, l, r, wr);
            for (int32_t i = 0; i < b->num_dst; i++) {
                int deg = 0;
                for (int k = 0; k < in; k++) {
                    mean[k] = 0;
                }
                for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                    if ((b->etype != NULL ? b->etype[e] : 0) != r) {
                        continue;
                    }
                    deg++;
                    for (int k = 0; k < in; k++) {
                        mean[k] += h[(size_t)b->indices[e] * in + k];
                    }
                }
                if (deg == 0) {
                    continue;
                }
                for (int j = 0; j < out; j++) {
                    double s = 0;
                    for (int k = 0; k < in; k++) {
                        s += mean[k] / deg * wr[(size_t)k * out + j];
                    }
                    y[(size_t)i * out + j] += s;
                }
            }
        }
        if (l < rm->layers - 1) {
            for (int32_t i = 0; i < b->num_dst; i++) {
                for (int j = 0; j < out; j++) {
                    y[(size_t)i * out + j] = test_ref_relu_dropout(
                        y[(size_t)i * out + j], rm->seed, rm->step, l, b->src_gid[i], j,
                        rm->dropout);
                }
            }
        }
        free(wr);
        free(mean);
        free(h);
        h = y;
    }
    return test_ref_output(h, mb->num_seeds, rm->dims[rm->layers], labels, logits);
}

static halo_model *make_rgcn(int layers, int in, int hidden, int classes, int R, int B,
                             float dropout, int threads)
{
    halo_model_config cfg;
    test_model_config(&cfg, layers, in, hidden, classes, dropout, threads, 5);
    cfg.kind = HALO_MODEL_RGCN;
    cfg.relations = R;
    cfg.bases = B;
    halo_model *m = NULL;
    assert_int_equal(halo_model_create(&cfg, &m), 0);
    return m;
}

/* ref_loss as a function of the parameters or of the input rows, for test_central_diff. */
typedef struct loss_at {
    const ref_rgcn *rm;       /* the reference */
    const halo_minibatch *mb; /* its batch */
    const double *param;      /* parameters (when the inputs vary) */
    const double *feat;       /* input rows (when the parameters vary) */
    const int32_t *lab;       /* seed labels */
} loss_at;

static double loss_of_params(void *ctx, const double *param)
{
    const loss_at *a = ctx;
    return ref_loss(a->rm, param, a->mb, a->feat, a->lab, NULL);
}

static double loss_of_inputs(void *ctx, const double *feat)
{
    const loss_at *a = ctx;
    return ref_loss(a->rm, a->param, a->mb, feat, a->lab, NULL);
}

static void ref_from_model(ref_rgcn *rm, halo_model *m, uint64_t step)
{
    const halo_model_config *c = halo_model_config_of(m);
    rm->layers = c->layers;
    rm->R = c->relations;
    rm->B = c->bases;
    for (int l = 0; l < c->layers; l++) {
        rm->dims[l] = halo_model_layer_in(m, l);
        rm->off[l] = halo_model_param_offset(m, l);
    }
    rm->dims[c->layers] = c->classes;
    rm->dropout = c->dropout;
    rm->seed = c->seed;
    rm->step = step;
}

/* ---------------------------------------------------------------- gradients */

/* The float model's parameter and input gradients against central differences of ref_loss. */
static void check_rgcn_gradient(int layers, int R, int B, float dropout, const int32_t *nodes)
{
    int in = 5, hidden = 6, classes = 4;
    halo_model *m = make_rgcn(layers, in, hidden, classes, R, B, dropout, 2);
    typed_batch tb;
    typed_make(&tb, layers, nodes, 6, R, 60 + (uint64_t)B);
    const halo_minibatch *mb = &tb.t.mb;
    size_t nfeat = (size_t)nodes[0] * in;
    float *feat = test_random_floats(77, nfeat, 1.0, 61);
    int32_t *lab = test_random_labels(78, nodes[layers], classes, 62);
    uint64_t step = 4;
    size_t n;
    float *p = halo_model_params(m, &n);
    ref_rgcn rm;
    ref_from_model(&rm, m, step);
    /* biases off zero, so no pre-activation sits on ReLU's kink */
    for (int l = 0; l < layers; l++) {
        assert_int_equal(halo_model_bias_offset(m, l), rm.off[l] + ref_bias_at(&rm, l));
        float *bias = p + halo_model_bias_offset(m, l);
        for (int j = 0; j < halo_model_layer_out(m, l); j++) {
            bias[j] = 0.04f * (float)(j % 4 + 1);
        }
    }
    assert_int_equal(halo_model_push_state(m), 0);
    halo_model_stats st;
    float *dx = HALO_ALLOC(float, nfeat);
    assert_int_equal(halo_model_train_forward_backward_dx(m, mb, feat, lab, step, &st, dx), 0);
    float *g = halo_model_grads(m, NULL);

    double *pd = malloc(sizeof(double) * n), *fd = calloc(n, sizeof(double));
    double *xd = malloc(sizeof(double) * nfeat), *fdx = calloc(nfeat, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        pd[i] = p[i];
    }
    for (size_t i = 0; i < nfeat; i++) {
        xd[i] = feat[i];
    }
    double l0 = ref_loss(&rm, pd, mb, xd, lab, NULL);
    assert_true(fabs(st.loss - l0) < 1e-5 * (1 + fabs(l0)));
    loss_at la = {&rm, mb, pd, xd, lab};
    test_central_diff(loss_of_params, &la, pd, n, 1e-6, fd);
    test_central_diff(loss_of_inputs, &la, xd, nfeat, 1e-6, fdx);
    size_t at = 0;
    double err = test_max_rel_err(g, fd, n, 1e-2, &at);
    if (err >= 2e-3) {
        fprintf(stderr, "# R %d B %d: parameter gradient %zu is %g, finite differences %g\n", R, B,
                at, (double)g[at], fd[at]);
    }
    assert_true(err < 2e-3);
    double errx = test_max_rel_err(dx, fdx, nfeat, 1e-2, &at);
    if (errx >= 2e-3) {
        fprintf(stderr, "# R %d B %d: input gradient %zu is %g, finite differences %g\n", R, B, at,
                (double)dx[at], fdx[at]);
    }
    assert_true(errx < 2e-3);
    /* the check has teeth: some gradients of every relation's weights are far from zero */
    double gmax = 0;
    for (size_t i = 0; i < n; i++) {
        gmax = fabs(fd[i]) > gmax ? fabs(fd[i]) : gmax;
    }
    assert_true(gmax > 1e-3);
    free(pd);
    free(fd);
    free(xd);
    free(fdx);
    halo_free(dx);
    halo_free(feat);
    halo_free(lab);
    typed_free(&tb);
    halo_model_free(m);
}

static void rgcn_gradient_matches_finite_differences(void **state)
{
    (void)state;
    int32_t nodes[3] = {40, 18, 7};
    check_rgcn_gradient(2, 3, 0, 0.0f, nodes);
}

static void rgcn_gradient_matches_finite_differences_with_bases(void **state)
{
    (void)state;
    int32_t nodes[3] = {40, 18, 7};
    check_rgcn_gradient(2, 4, 2, 0.0f, nodes);
}

static void rgcn_gradient_matches_finite_differences_with_dropout(void **state)
{
    (void)state;
    int32_t nodes[4] = {50, 26, 12, 6};
    check_rgcn_gradient(3, 3, 3, 0.3f, nodes);
}

static void rgcn_one_layer_gradient_matches_finite_differences(void **state)
{
    (void)state;
    int32_t nodes[2] = {30, 11};
    check_rgcn_gradient(1, 2, 1, 0.0f, nodes);
}

/* ---------------------------------------------------------------- inference, determinism */

/* halo_model_infer and halo_model_layer_forward against the double forward. */
static void rgcn_inference_matches_reference_and_layerwise(void **state)
{
    (void)state;
    int32_t nodes[3] = {45, 20, 8};
    int R = 3, in = 5, classes = 4;
    halo_model *m = make_rgcn(2, in, 6, classes, R, 2, 0.5f, 3);
    typed_batch tb;
    typed_make(&tb, 2, nodes, 5, R, 70);
    float *feat = test_random_floats(77, (size_t)nodes[0] * in, 1.0, 71);
    double *xd = malloc(sizeof(double) * (size_t)nodes[0] * in);
    for (size_t i = 0; i < (size_t)nodes[0] * in; i++) {
        xd[i] = feat[i];
    }
    int32_t *lab = test_random_labels(78, nodes[2], classes, 72);
    size_t n;
    float *p = halo_model_params(m, &n);
    double *pd = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) {
        pd[i] = p[i];
    }
    ref_rgcn rm;
    ref_from_model(&rm, m, 0);
    rm.dropout = 0; /* inference: no dropout */
    double *want = malloc(sizeof(double) * (size_t)nodes[2] * classes);
    ref_loss(&rm, pd, &tb.t.mb, xd, lab, want);
    float *logits = HALO_ALLOC(float, (size_t)nodes[2] * classes);
    assert_int_equal(halo_model_infer(m, &tb.t.mb, feat, NULL, logits, NULL, NULL), 0);
    size_t at = 0;
    assert_true(test_max_rel_err(logits, want, (size_t)nodes[2] * classes, 1e-2, &at) < 1e-4);
    /* layer by layer gives the same logits */
    float *h1 = HALO_ALLOC(float, (size_t)nodes[1] * 6);
    float *out = HALO_ALLOC(float, (size_t)nodes[2] * classes);
    assert_int_equal(halo_model_layer_forward(m, 0, &tb.t.mb.blocks[0], feat, h1), 0);
    assert_int_equal(halo_model_layer_forward(m, 1, &tb.t.mb.blocks[1], h1, out), 0);
    assert_true(test_max_rel_err(out, want, (size_t)nodes[2] * classes, 1e-2, &at) < 1e-4);
    halo_free(h1);
    halo_free(out);
    halo_free(logits);
    free(want);
    free(pd);
    free(xd);
    halo_free(feat);
    halo_free(lab);
    typed_free(&tb);
    halo_model_free(m);
}

/* A training step (gradients, input gradient, Adam) is bit for bit the same with 1..4 threads,
 * on blocks large enough that every kernel splits into several tasks. */
static void rgcn_step_is_bitwise_identical_across_thread_counts(void **state)
{
    (void)state;
    int32_t nodes[3] = {6000, 2500, 600};
    int R = 4, in = 24, classes = 7;
    typed_batch tb;
    typed_make(&tb, 2, nodes, 10, R, 80);
    float *feat = test_random_floats(77, (size_t)nodes[0] * in, 1.0, 81);
    int32_t *lab = test_random_labels(78, nodes[2], classes, 82);
    size_t n0 = 0;
    float *g0 = NULL, *dx0 = NULL, *p0 = NULL;
    for (int B = 0; B <= 2; B += 2) {
        for (int threads = 1; threads <= 4; threads++) {
            halo_model *m = make_rgcn(2, in, 32, classes, R, B, 0.5f, threads);
            size_t n;
            halo_model_params(m, &n);
            float *dx = HALO_ALLOC(float, (size_t)nodes[0] * in);
            halo_model_stats st;
            assert_int_equal(
                halo_model_train_forward_backward_dx(m, &tb.t.mb, feat, lab, 3, &st, dx), 0);
            assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
            float *g = halo_model_grads(m, NULL), *p = halo_model_params(m, NULL);
            if (threads == 1) {
                n0 = n;
                g0 = HALO_ALLOC(float, n);
                p0 = HALO_ALLOC(float, n);
                memcpy(g0, g, n * sizeof(float));
                memcpy(p0, p, n * sizeof(float));
                dx0 = dx;
            } else {
                assert_int_equal(n, n0);
                assert_memory_equal(g, g0, n * sizeof(float));
                assert_memory_equal(p, p0, n * sizeof(float));
                assert_memory_equal(dx, dx0, (size_t)nodes[0] * in * sizeof(float));
                halo_free(dx);
            }
            halo_model_free(m);
        }
        halo_free(g0);
        halo_free(p0);
        halo_free(dx0);
    }
    halo_free(feat);
    halo_free(lab);
    typed_free(&tb);
}

/* Init: Xavier bounds per matrix, keyed by seed, biases zero; the layout's size. */
static void rgcn_init_is_keyed_and_bounded(void **state)
{
    (void)state;
    int in = 8, hid = 10, cls = 3, R = 5, B = 2;
    halo_model *a = make_rgcn(2, in, hid, cls, R, B, 0.0f, 1);
    halo_model *b = make_rgcn(2, in, hid, cls, R, B, 0.0f, 1);
    size_t n;
    float *pa = halo_model_params(a, &n);
    assert_memory_equal(pa, halo_model_params(b, NULL), n * sizeof(float));
    /* layer 0: W_self + 2 bases (in x hid) + 5x2 coefficients + bias */
    size_t l0 = 3 * (size_t)in * hid + (size_t)R * B + hid;
    assert_true(halo_model_param_offset(a, 1) >= l0);
    assert_true(halo_model_param_offset(a, 1) < l0 + 16);
    double bound = sqrt(2.0) * sqrt(6.0 / (in + hid)), cb = sqrt(2.0) * sqrt(6.0 / (R + B));
    double mx = 0;
    for (size_t e = 0; e < 3 * (size_t)in * hid; e++) {
        assert_true(fabs(pa[e]) <= bound);
        mx = fabs(pa[e]) > mx ? fabs(pa[e]) : mx;
    }
    assert_true(mx > 0.8 * bound);
    for (size_t e = 3 * (size_t)in * hid; e < 3 * (size_t)in * hid + (size_t)R * B; e++) {
        assert_true(fabs(pa[e]) <= cb && pa[e] != 0.0f);
    }
    for (int j = 0; j < hid; j++) {
        assert_true(pa[halo_model_bias_offset(a, 0) + j] == 0.0f);
    }
    /* different seed, different weights; the relations' matrices differ from each other */
    halo_model_config cfg = *halo_model_config_of(a);
    cfg.seed = 6;
    halo_model *c = NULL;
    assert_int_equal(halo_model_create(&cfg, &c), 0);
    assert_true(memcmp(pa, halo_model_params(c, NULL), n * sizeof(float)) != 0);
    assert_true(memcmp(pa, pa + (size_t)in * hid, (size_t)in * hid * sizeof(float)) != 0);
    halo_model_free(a);
    halo_model_free(b);
    halo_model_free(c);
}

/* One relation and untyped blocks: exactly h W_self + mean(h_src) W_1 + b, the SAGE function;
 * so with the SAGE weights copied in, the logits agree with a SAGE model. */
static void rgcn_with_one_relation_computes_sage(void **state)
{
    (void)state;
    int32_t nodes[3] = {40, 15, 6};
    int in = 4, hid = 5, cls = 3;
    typed_batch tb;
    typed_make(&tb, 2, nodes, 5, 1, 90);
    for (int l = 0; l < 2; l++) {
        tb.t.mb.blocks[l].etype = NULL;
    }
    float *feat = test_random_floats(77, (size_t)nodes[0] * in, 1.0, 91);
    halo_model *r = make_rgcn(2, in, hid, cls, 1, 0, 0.0f, 2);
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = in;
    cfg.hidden = hid;
    cfg.classes = cls;
    cfg.threads = 2;
    cfg.path = HALO_MODEL_PATH_AGG_FIRST;
    halo_model *s = NULL;
    assert_int_equal(halo_model_create(&cfg, &s), 0);
    /* same [W_self; W_neigh] then bias in both layouts for R = 1 */
    for (int l = 0; l < 2; l++) {
        int li = halo_model_layer_in(s, l), lo = halo_model_layer_out(s, l);
        memcpy(halo_model_params(r, NULL) + halo_model_param_offset(r, l),
               halo_model_params(s, NULL) + halo_model_param_offset(s, l),
               (2 * (size_t)li * lo + lo) * sizeof(float));
    }
    float *a = HALO_ALLOC(float, (size_t)nodes[2] * cls),
          *b = HALO_ALLOC(float, (size_t)nodes[2] * cls);
    assert_int_equal(halo_model_infer(r, &tb.t.mb, feat, NULL, a, NULL, NULL), 0);
    assert_int_equal(halo_model_infer(s, &tb.t.mb, feat, NULL, b, NULL, NULL), 0);
    for (int i = 0; i < nodes[2] * cls; i++) {
        assert_true(fabsf(a[i] - b[i]) <= 1e-5f * (1.0f + fabsf(b[i])));
    }
    halo_free(a);
    halo_free(b);
    halo_free(feat);
    typed_free(&tb);
    halo_model_free(r);
    halo_model_free(s);
}

/* ---------------------------------------------------------------- bad input */

static void rgcn_bad_input_is_reported(void **state)
{
    (void)state;
    int32_t nodes[3] = {30, 12, 5};
    typed_batch tb;
    typed_make(&tb, 2, nodes, 4, 3, 95);
    float *feat = test_random_floats(77, (size_t)nodes[0] * 4, 1.0, 96);
    int32_t *lab = test_random_labels(78, nodes[2], 3, 97);
    halo_model *m = make_rgcn(2, 4, 5, 3, 3, 0, 0.0f, 1);
    halo_model_stats st;
    /* an edge type beyond the model's relations */
    uint8_t keep = tb.etype[1][0];
    tb.etype[1][0] = 3;
    assert_int_equal(halo_model_train_forward_backward(m, &tb.t.mb, feat, lab, 1, &st),
                     HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "relation 3"));
    tb.etype[1][0] = keep;
    /* untyped blocks with several relations */
    tb.t.mb.blocks[0].etype = NULL;
    assert_int_equal(halo_model_infer(m, &tb.t.mb, feat, NULL, NULL, NULL, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "typed blocks"));
    tb.t.mb.blocks[0].etype = tb.etype[0];
    assert_int_equal(halo_model_train_forward_backward(m, &tb.t.mb, feat, lab, 1, &st), 0);
    /* configurations */
    halo_model_config cfg = *halo_model_config_of(m);
    halo_model *bad = NULL;
    cfg.bases = 4;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    cfg.bases = 0;
    cfg.relations = 0;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    cfg.relations = 300;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    assert_null(bad);
    int kind = -1;
    assert_int_equal(halo_model_kind_parse("rgcn", &kind), 0);
    assert_int_equal(kind, HALO_MODEL_RGCN);
    assert_int_equal(halo_model_kind_parse("gcn", &kind), HALO_EUSAGE);
    assert_string_equal(halo_model_kind_name(HALO_MODEL_SAGE), "sage");
    halo_free(feat);
    halo_free(lab);
    typed_free(&tb);
    halo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rgcn_gradient_matches_finite_differences),
        cmocka_unit_test(rgcn_gradient_matches_finite_differences_with_bases),
        cmocka_unit_test(rgcn_gradient_matches_finite_differences_with_dropout),
        cmocka_unit_test(rgcn_one_layer_gradient_matches_finite_differences),
        cmocka_unit_test(rgcn_inference_matches_reference_and_layerwise),
        cmocka_unit_test(rgcn_step_is_bitwise_identical_across_thread_counts),
        cmocka_unit_test(rgcn_init_is_keyed_and_bounded),
        cmocka_unit_test(rgcn_with_one_relation_computes_sage),
        cmocka_unit_test(rgcn_bad_input_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
