/* Unit tests of the GAT model (runtime/model with cfg.kind = HALO_MODEL_GAT) on the CPU back end:
 * gradients of every parameter and of the input rows against central differences of an
 * independent double-precision implementation of DGL's GATConv (heads, LeakyReLU 0.2, softmax
 * per destination and head, destinations without sampled edges, dropout), inference and
 * layer-wise inference against it, bit-identical results across thread counts, init keyed by
 * seed, and bad configurations. `test_gat --dump DIR [OUT_HEADS]` writes a fixed 2-layer
 * mini-batch, the parameters and halo's loss, logits and gradients on it for
 * python/gat_reference.py's op check (tests/e2e/gat.sh). */
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0..maxdeg in-neighbours, none for every 6th destination. */
static int gat_deg(halo_rng *r, int32_t i, int maxdeg)
{
    int deg = (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
    return i % 6 == 4 ? 0 : deg;
}

static void batch_make(test_batch *t, int layers, const int32_t *nodes, int maxdeg, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 3, 0, 0);
    t->gid = HALO_ALLOC(int32_t, nodes[0]);
    for (int32_t i = 0; i < nodes[0]; i++) {
        t->gid[i] = 700 + 3 * i + (int32_t)halo_rng_below(&r, 3);
    }
    test_batch_blocks(t, layers, nodes, maxdeg, &r, gat_deg);
}

/* ---------------------------------------------------------------- double reference */

/* The model, restated from model.h: per layer W (in x H*F), a_l, a_r, bias (H*F each); H = heads
 * on hidden layers, out_heads (averaged) on the output layer. */
typedef struct ref_gat {
    int layers, heads, out_heads;
    int dims[HALO_MAX_LAYERS + 1];
    size_t off[HALO_MAX_LAYERS + 1]; /* from halo_model_param_offset */
    double dropout;
    uint64_t seed, step;
} ref_gat;

/* One GAT layer in double: y_i = concat_h sum_{e: j->i} alpha_eh z_jh + b, alpha the softmax
 * over i's edges of LeakyReLU(a_l . z_j + a_r . z_i); on the output layer the mean over heads
 * instead; y (nd x H*F or nd x F, malloc'd) returned. */
static double *ref_layer(const ref_gat *rm, const double *param, int l, const halo_block *b,
                         const double *h)
{
    bool last = l == rm->layers - 1;
    int in = rm->dims[l];
    int H = last ? rm->out_heads : rm->heads;
    int F = last ? rm->dims[l + 1] : rm->dims[l + 1] / H, HF = H * F;
    const double *w = param + rm->off[l];
    const double *al = w + (size_t)in * HF, *ar = al + HF, *bias = ar + HF;
    double *z = calloc((size_t)b->num_src * HF, sizeof(double));
    for (int32_t j = 0; j < b->num_src; j++) {
        for (int c = 0; c < HF; c++) {
            for (int k = 0; k < in; k++) {
                z[(size_t)j * HF + c] += h[(size_t)j * in + k] * w[(size_t)k * HF + c];
            }
        }
    }
    double *y = malloc(sizeof(double) * (size_t)b->num_dst * HF);
    for (int32_t i = 0; i < b->num_dst; i++) {
        for (int hd = 0; hd < H; hd++) {
            double *yo = y + (size_t)i * HF + (size_t)hd * F;
            for (int f = 0; f < F; f++) {
                yo[f] = bias[hd * F + f];
            }
            int64_t e0 = b->indptr[i], e1 = b->indptr[i + 1];
            if (e1 == e0) {
                continue;
            }
            double er = 0, mx = -INFINITY, sum = 0;
            for (int f = 0; f < F; f++) {
                er += ar[hd * F + f] * z[(size_t)i * HF + hd * F + f];
            }
            double *s = malloc(sizeof(double) * (size_t)(e1 - e0));
            for (int64_t e = e0; e < e1; e++) {
                double el = 0;
                for (int f = 0; f < F; f++) {
                    el += al[hd * F + f] * z[(size_t)b->indices[e] * HF + hd * F + f];
                }
                double x = el + er;
                s[e - e0] = x > 0 ? x : 0.2 * x;
                mx = s[e - e0] > mx ? s[e - e0] : mx;
            }
            for (int64_t e = e0; e < e1; e++) {
                s[e - e0] = exp(s[e - e0] - mx);
                sum += s[e - e0];
            }
            for (int64_t e = e0; e < e1; e++) {
                for (int f = 0; f < F; f++) {
                    yo[f] += s[e - e0] / sum * z[(size_t)b->indices[e] * HF + hd * F + f];
                }
            }
            free(s);
        }
    }
    free(z);
    if (last) {
        /* the heads' mean, in place: row i's F floats from its H x F */
        for (int32_t i = 0; i < b->num_dst; i++) {
            for (int f = 0; f < F; f++) {
                double m = 0;
                for (int hd = 0; hd < H; hd++) {
                    m += y[(size_t)i * HF + (size_t)hd * F + f];
                }
                y[(size_t)i * F + f] = m / H;
            }
        }
    }
    return y;
}

/* The whole model: layers, ReLU and dropout between them; mean softmax cross-entropy returned,
 * the logits into logits when not NULL. */
static double ref_loss(const ref_gat *rm, const double *param, const halo_minibatch *mb,
                       const double *feat, const int32_t *labels, double *logits)
{
    double *h = malloc(sizeof(double) * (size_t)mb->num_input * rm->dims[0]);
    memcpy(h, feat, sizeof(double) * (size_t)mb->num_input * rm->dims[0]);
    for (int l = 0; l < rm->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        int out = rm->dims[l + 1];
        double *y = ref_layer(rm, param, l, b, h);
        if (l < rm->layers - 1) {
            for (int32_t i = 0; i < b->num_dst; i++) {
                for (int j = 0; j < out; j++) {
                    y[(size_t)i * out + j] =
                        test_ref_relu_dropout(y[(size_t)i * out + j], rm->seed, rm->step, l,
                                              b->src_gid[i], j, rm->dropout);
                }
            }
        }
        free(h);
        h = y;
    }
    return test_ref_output(h, mb->num_seeds, rm->dims[rm->layers], labels, logits);
}

static int g_out_heads = 1; /* the output heads make_gat gives a model */

/* Every test starts with one output head (a failed test may have left another). */
static int one_out_head(void **state)
{
    (void)state;
    g_out_heads = 1;
    return 0;
}

static halo_model *make_gat(int layers, int in, int hidden, int heads, int classes, float dropout,
                            int threads)
{
    halo_model_config cfg;
    test_model_config(&cfg, layers, in, hidden, classes, dropout, threads, 5);
    cfg.kind = HALO_MODEL_GAT;
    cfg.heads = heads;
    cfg.out_heads = g_out_heads;
    halo_model *m = NULL;
    assert_int_equal(halo_model_create(&cfg, &m), 0);
    return m;
}

/* ref_loss as a function of the parameters or of the input rows, for test_central_diff. */
typedef struct loss_at {
    const ref_gat *rm;        /* the reference */
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

static void ref_from_model(ref_gat *rm, halo_model *m, uint64_t step)
{
    const halo_model_config *c = halo_model_config_of(m);
    rm->layers = c->layers;
    rm->heads = c->heads;
    rm->out_heads = c->out_heads;
    for (int l = 0; l < c->layers; l++) {
        rm->dims[l] = halo_model_layer_in(m, l);
        rm->off[l] = halo_model_param_offset(m, l);
    }
    rm->dims[c->layers] = c->classes;
    rm->dropout = c->dropout;
    rm->seed = c->seed;
    rm->step = step;
}

/* Copies of the model's parameters and n floats into doubles. */
static double *to_double(const float *x, size_t n)
{
    double *d = malloc(sizeof(double) * (n > 0 ? n : 1));
    for (size_t i = 0; i < n; i++) {
        d[i] = x[i];
    }
    return d;
}

/* ---------------------------------------------------------------- gradients */

/* The float model's parameter and input gradients against central differences of ref_loss. */
static void check_gat_gradient(int layers, int heads, float dropout, const int32_t *nodes)
{
    int in = 5, hidden = 3, classes = 4;
    halo_model *m = make_gat(layers, in, hidden, heads, classes, dropout, 2);
    test_batch tb;
    batch_make(&tb, layers, nodes, 6, 60 + (uint64_t)heads);
    const halo_minibatch *mb = &tb.mb;
    size_t nfeat = (size_t)nodes[0] * in;
    float *feat = test_random_floats(77, nfeat, 1.0, 61);
    int32_t *lab = test_random_labels(78, nodes[layers], classes, 62);
    uint64_t step = 4;
    size_t n;
    float *p = halo_model_params(m, &n);
    ref_gat rm;
    ref_from_model(&rm, m, step);
    /* biases off zero, so no pre-activation sits on ReLU's kink; the attention vectors scaled
     * up so that the softmax is far from uniform (its gradient matters) */
    for (int l = 0; l < layers; l++) {
        int out = halo_model_layer_out(m, l) * (l == layers - 1 ? g_out_heads : 1);
        size_t bo = halo_model_bias_offset(m, l);
        assert_int_equal(bo, rm.off[l] + (size_t)rm.dims[l] * out + 2 * (size_t)out);
        for (int j = 0; j < out; j++) {
            p[bo + j] = 0.04f * (float)(j % 4 + 1);
            p[bo - 2 * (size_t)out + j] *= 3.0f;
            p[bo - (size_t)out + j] *= 3.0f;
        }
    }
    assert_int_equal(halo_model_push_state(m), 0);
    halo_model_stats st;
    float *dx = HALO_ALLOC(float, nfeat);
    assert_int_equal(halo_model_train_forward_backward_dx(m, mb, feat, lab, step, &st, dx), 0);
    float *g = halo_model_grads(m, NULL);
    double *pd = to_double(p, n), *xd = to_double(feat, nfeat);
    double *fd = calloc(n, sizeof(double)), *fdx = calloc(nfeat, sizeof(double));
    double l0 = ref_loss(&rm, pd, mb, xd, lab, NULL);
    assert_true(fabs(st.loss - l0) < 1e-5 * (1 + fabs(l0)));
    loss_at la = {&rm, mb, pd, xd, lab};
    test_central_diff(loss_of_params, &la, pd, n, 1e-6, fd);
    test_central_diff(loss_of_inputs, &la, xd, nfeat, 1e-6, fdx);
    size_t at = 0;
    double err = test_max_rel_err(g, fd, n, 1e-2, &at);
    if (err >= 2e-3) {
        fprintf(stderr, "# heads %d: parameter gradient %zu is %g, finite differences %g\n", heads,
                at, (double)g[at], fd[at]);
    }
    assert_true(err < 2e-3);
    double errx = test_max_rel_err(dx, fdx, nfeat, 1e-2, &at);
    if (errx >= 2e-3) {
        fprintf(stderr, "# heads %d: input gradient %zu is %g, finite differences %g\n", heads, at,
                (double)dx[at], fdx[at]);
    }
    assert_true(errx < 2e-3);
    /* the check has teeth: the attention vectors' gradients of every layer are far from zero */
    for (int l = 0; l < layers; l++) {
        int out = halo_model_layer_out(m, l) * (l == layers - 1 ? g_out_heads : 1);
        size_t al = halo_model_bias_offset(m, l) - 2 * (size_t)out;
        double amax = 0;
        for (size_t i = al; i < al + 2 * (size_t)out; i++) {
            amax = fabs(fd[i]) > amax ? fabs(fd[i]) : amax;
        }
        assert_true(amax > 1e-4);
    }
    free(pd);
    free(fd);
    free(xd);
    free(fdx);
    halo_free(dx);
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&tb);
    halo_model_free(m);
}

static void gat_gradient_matches_finite_differences(void **state)
{
    (void)state;
    int32_t nodes[3] = {40, 18, 7};
    check_gat_gradient(2, 3, 0.0f, nodes);
}

static void gat_gradient_matches_finite_differences_with_dropout(void **state)
{
    (void)state;
    int32_t nodes[4] = {50, 26, 12, 6};
    check_gat_gradient(3, 2, 0.3f, nodes);
}

static void gat_one_layer_gradient_matches_finite_differences(void **state)
{
    (void)state;
    int32_t nodes[2] = {30, 11};
    check_gat_gradient(1, 4, 0.0f, nodes);
}

/* An output layer of 3 heads, averaged (DGL's GAT example with --num-out-heads 3). */
static void gat_output_heads_gradient_matches_finite_differences(void **state)
{
    (void)state;
    int32_t nodes[3] = {40, 18, 7};
    g_out_heads = 3;
    check_gat_gradient(2, 2, 0.2f, nodes);
    int32_t one[2] = {30, 11};
    g_out_heads = 2;
    check_gat_gradient(1, 2, 0.0f, one);
    g_out_heads = 1;
}

/* ---------------------------------------------------------------- inference, determinism */

/* halo_model_infer and halo_model_layer_forward against the double forward. */
static void gat_inference_matches_reference_and_layerwise(void **state)
{
    (void)state;
    int32_t nodes[3] = {45, 20, 8};
    int in = 5, classes = 4, hidden = 3, heads = 2;
    halo_model *m = make_gat(2, in, hidden, heads, classes, 0.5f, 3);
    test_batch tb;
    batch_make(&tb, 2, nodes, 5, 70);
    float *feat = test_random_floats(77, (size_t)nodes[0] * in, 1.0, 71);
    double *xd = to_double(feat, (size_t)nodes[0] * in);
    size_t n;
    double *pd = to_double(halo_model_params(m, &n), 0);
    free(pd);
    pd = to_double(halo_model_params(m, NULL), n);
    ref_gat rm;
    ref_from_model(&rm, m, 0);
    rm.dropout = 0; /* inference: no dropout */
    double *want = malloc(sizeof(double) * (size_t)nodes[2] * classes);
    int32_t *lab = test_random_labels(78, nodes[2], classes, 72);
    ref_loss(&rm, pd, &tb.mb, xd, lab, want);
    float *logits = HALO_ALLOC(float, (size_t)nodes[2] * classes);
    assert_int_equal(halo_model_infer(m, &tb.mb, feat, NULL, logits, NULL, NULL), 0);
    size_t at = 0;
    assert_true(test_max_rel_err(logits, want, (size_t)nodes[2] * classes, 1e-2, &at) < 1e-4);
    /* layer by layer gives the same logits; the hidden layer is heads x hidden wide */
    assert_int_equal(halo_model_layer_out(m, 0), heads * hidden);
    float *h1 = HALO_ALLOC(float, (size_t)nodes[1] * heads * hidden);
    float *out = HALO_ALLOC(float, (size_t)nodes[2] * classes);
    assert_int_equal(halo_model_layer_forward(m, 0, &tb.mb.blocks[0], feat, h1), 0);
    assert_int_equal(halo_model_layer_forward(m, 1, &tb.mb.blocks[1], h1, out), 0);
    assert_true(test_max_rel_err(out, want, (size_t)nodes[2] * classes, 1e-2, &at) < 1e-4);
    halo_free(h1);
    halo_free(out);
    halo_free(logits);
    halo_free(lab);
    free(want);
    free(pd);
    free(xd);
    halo_free(feat);
    test_batch_free(&tb);
    halo_model_free(m);
}

/* A training step (gradients, input gradient, Adam) is bit for bit the same with 1..4 threads,
 * on blocks large enough that every kernel splits into several tasks. */
static void gat_step_is_bitwise_identical_across_thread_counts(void **state)
{
    (void)state;
    int32_t nodes[3] = {6000, 2500, 600};
    int in = 24, classes = 7;
    test_batch tb;
    batch_make(&tb, 2, nodes, 10, 80);
    float *feat = test_random_floats(77, (size_t)nodes[0] * in, 1.0, 81);
    int32_t *lab = test_random_labels(78, nodes[2], classes, 82);
    size_t n0 = 0;
    float *g0 = NULL, *dx0 = NULL, *p0 = NULL;
    for (int threads = 1; threads <= 4; threads++) {
        halo_model *m = make_gat(2, in, 8, 4, classes, 0.5f, threads);
        size_t n;
        halo_model_params(m, &n);
        float *dx = HALO_ALLOC(float, (size_t)nodes[0] * in);
        halo_model_stats st;
        assert_int_equal(halo_model_train_forward_backward_dx(m, &tb.mb, feat, lab, 3, &st, dx), 0);
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
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&tb);
}

/* Init: Xavier bounds of W and of the attention vectors, keyed by seed, biases zero; layout. */
static void gat_init_is_keyed_and_bounded(void **state)
{
    (void)state;
    int in = 8, hid = 5, heads = 3, cls = 3, hf = hid * heads;
    halo_model *a = make_gat(2, in, hid, heads, cls, 0.0f, 1);
    halo_model *b = make_gat(2, in, hid, heads, cls, 0.0f, 1);
    size_t n;
    float *pa = halo_model_params(a, &n);
    assert_memory_equal(pa, halo_model_params(b, NULL), n * sizeof(float));
    /* layer 0: W (in x H*F) + a_l + a_r + bias; layer 1: one head of cls floats */
    size_t l0 = (size_t)in * hf + 3 * (size_t)hf;
    assert_true(halo_model_param_offset(a, 1) >= l0);
    assert_true(halo_model_param_offset(a, 1) < l0 + 16);
    assert_int_equal(halo_model_bias_offset(a, 1),
                     halo_model_param_offset(a, 1) + (size_t)hf * cls + 2 * (size_t)cls);
    double bound = sqrt(2.0) * sqrt(6.0 / (in + hf)), ab = sqrt(2.0) * sqrt(6.0 / (hf + hid));
    double mx = 0;
    for (size_t e = 0; e < (size_t)in * hf; e++) {
        assert_true(fabs(pa[e]) <= bound);
        mx = fabs(pa[e]) > mx ? fabs(pa[e]) : mx;
    }
    assert_true(mx > 0.8 * bound);
    for (size_t e = (size_t)in * hf; e < (size_t)in * hf + 2 * (size_t)hf; e++) {
        assert_true(fabs(pa[e]) <= ab && pa[e] != 0.0f);
    }
    for (int j = 0; j < hf; j++) {
        assert_true(pa[halo_model_bias_offset(a, 0) + j] == 0.0f);
    }
    /* a_l and a_r are different draws */
    assert_true(memcmp(pa + (size_t)in * hf, pa + (size_t)in * hf + hf, hf * sizeof(float)) != 0);
    halo_model_config cfg = *halo_model_config_of(a);
    cfg.seed = 6;
    halo_model *c = NULL;
    assert_int_equal(halo_model_create(&cfg, &c), 0);
    assert_true(memcmp(pa, halo_model_params(c, NULL), n * sizeof(float)) != 0);
    halo_model_free(a);
    halo_model_free(b);
    halo_model_free(c);
}

/* A destination without sampled in-edges gets its bias alone (no self loop is added). */
static void gat_destination_without_edges_gets_bias(void **state)
{
    (void)state;
    int32_t nodes[2] = {30, 11};
    test_batch tb;
    batch_make(&tb, 1, nodes, 5, 90);
    const halo_block *b = &tb.mb.blocks[0];
    assert_true(b->indptr[5] == b->indptr[4]); /* gat_deg: destination 4 has no edge */
    halo_model *m = make_gat(1, 4, 3, 2, 3, 0.0f, 1);
    float *p = halo_model_params(m, NULL);
    size_t bo = halo_model_bias_offset(m, 0);
    p[bo] = 0.5f;
    p[bo + 1] = -0.25f;
    p[bo + 2] = 2.0f;
    assert_int_equal(halo_model_push_state(m), 0);
    float *feat = test_random_floats(77, (size_t)nodes[0] * 4, 1.0, 91);
    float *out = HALO_ALLOC(float, (size_t)nodes[1] * 3);
    assert_int_equal(halo_model_layer_forward(m, 0, b, feat, out), 0);
    assert_true(out[4 * 3] == 0.5f && out[4 * 3 + 1] == -0.25f && out[4 * 3 + 2] == 2.0f);
    assert_true(out[0] != 0.5f); /* a destination with edges does not */
    halo_free(out);
    halo_free(feat);
    test_batch_free(&tb);
    halo_model_free(m);
}

static void gat_bad_configuration_is_refused(void **state)
{
    (void)state;
    halo_model_config cfg;
    test_model_config(&cfg, 2, 4, 3, 3, 0.0f, 1, 5);
    cfg.kind = HALO_MODEL_GAT;
    halo_model *bad = NULL;
    cfg.heads = 0;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "heads"));
    cfg.heads = 1 << 20;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    cfg.heads = 8;
    cfg.hidden = 1 << 28;
    assert_int_equal(halo_model_create(&cfg, &bad), HALO_EUSAGE);
    assert_null(bad);
    int kind = -1;
    assert_int_equal(halo_model_kind_parse("gat", &kind), 0);
    assert_int_equal(kind, HALO_MODEL_GAT);
    assert_string_equal(halo_model_kind_name(HALO_MODEL_GAT), "gat");
    assert_int_equal(halo_model_kind_parse("gatv2", &kind), HALO_EUSAGE);
    int hidden = 0;
    double lr = 0;
    halo_model_run_defaults(HALO_MODEL_GAT, &hidden, &lr, NULL);
    assert_int_equal(hidden, 8);
    assert_true(lr == 0.005);
}

/* ---------------------------------------------------------------- the op check's dump */

/* Writes n bytes of p to DIR/name; 0 or -1. */
static int dump_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "halo: error: %s: cannot write\n", path);
        return -1;
    }
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* A 2-layer GAT (4 heads of 8 on the hidden layer, out_heads on the output layer) on a random
 * mini-batch with destinations without edges: one training pass without dropout; the batch,
 * parameters and results go to DIR (dump.json says the shapes; the arrays are raw
 * little-endian). */
static int dump(const char *dir, int out_heads)
{
    int32_t nodes[3] = {300, 120, 40};
    int in = 12, hidden = 8, heads = 4, classes = 5;
    halo_model_config cfg;
    test_model_config(&cfg, 2, in, hidden, classes, 0.0f, 2, 11);
    cfg.kind = HALO_MODEL_GAT;
    cfg.heads = heads;
    cfg.out_heads = out_heads;
    halo_model *m = NULL;
    if (halo_model_create(&cfg, &m) < 0) {
        fprintf(stderr, "halo: error: %s\n", halo_errmsg());
        return 1;
    }
    test_batch tb;
    batch_make(&tb, 2, nodes, 8, 99);
    size_t nfeat = (size_t)nodes[0] * in, n;
    float *feat = test_random_floats(77, nfeat, 1.0, 98);
    int32_t *lab = test_random_labels(78, nodes[2], classes, 97);
    float *p = halo_model_params(m, &n);
    for (int l = 0; l < 2; l++) { /* biases off zero, as trained ones are */
        for (int j = 0; j < halo_model_layer_out(m, l) * (l == 1 ? out_heads : 1); j++) {
            p[halo_model_bias_offset(m, l) + j] = 0.01f * (float)(j % 7) - 0.02f;
        }
    }
    halo_model_push_state(m);
    float *p0 = HALO_ALLOC(float, n), *dx = HALO_ALLOC(float, nfeat);
    memcpy(p0, p, n * sizeof(float));
    float *logits = HALO_ALLOC(float, (size_t)nodes[2] * classes);
    halo_model_stats st = {0};
    int rc = halo_model_infer(m, &tb.mb, feat, NULL, logits, NULL, NULL);
    if (rc == 0) {
        rc = halo_model_train_forward_backward_dx(m, &tb.mb, feat, lab, 1, &st, dx);
    }
    char meta[1024];
    int len = snprintf(
        meta, sizeof meta,
        "{\"layers\": 2, \"in\": %d, \"hidden\": %d, \"heads\": %d, "
        "\"out_heads\": %d, \"classes\": %d, \"nodes\": [%d, %d, %d], \"edges\": [%lld, %lld], "
        "\"offsets\": [%zu, %zu], \"params\": %zu, \"loss\": %.9g}\n",
        in, hidden, heads, out_heads, classes, nodes[0], nodes[1], nodes[2],
        (long long)tb.mb.blocks[0].num_edges, (long long)tb.mb.blocks[1].num_edges,
        halo_model_param_offset(m, 0), halo_model_param_offset(m, 1), n, (double)st.loss);
    for (int l = 0; rc == 0 && l < 2; l++) {
        const halo_block *b = &tb.mb.blocks[l];
        char name[64];
        snprintf(name, sizeof name, "indptr%d.i64", l);
        rc |= dump_file(dir, name, b->indptr, ((size_t)b->num_dst + 1) * sizeof(int64_t));
        snprintf(name, sizeof name, "indices%d.i32", l);
        rc |= dump_file(dir, name, b->indices, (size_t)b->num_edges * sizeof(int32_t));
    }
    if (rc == 0) {
        rc = dump_file(dir, "dump.json", meta, (size_t)len) |
             dump_file(dir, "feat.f32", feat, nfeat * sizeof(float)) |
             dump_file(dir, "label.i32", lab, (size_t)nodes[2] * sizeof(int32_t)) |
             dump_file(dir, "params.f32", p0, n * sizeof(float)) |
             dump_file(dir, "logits.f32", logits, (size_t)nodes[2] * classes * sizeof(float)) |
             dump_file(dir, "grads.f32", halo_model_grads(m, NULL), n * sizeof(float)) |
             dump_file(dir, "dfeat.f32", dx, nfeat * sizeof(float));
    }
    if (rc != 0) {
        fprintf(stderr, "halo: error: test_gat --dump %s: %s\n", dir,
                halo_errmsg()[0] != '\0' ? halo_errmsg() : "cannot write");
    }
    halo_free(p0);
    halo_free(dx);
    halo_free(logits);
    halo_free(feat);
    halo_free(lab);
    test_batch_free(&tb);
    halo_model_free(m);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--dump") == 0) {
        return dump(argv[2], argc == 4 ? atoi(argv[3]) : 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(gat_gradient_matches_finite_differences, one_out_head),
        cmocka_unit_test_setup(gat_gradient_matches_finite_differences_with_dropout, one_out_head),
        cmocka_unit_test_setup(gat_one_layer_gradient_matches_finite_differences, one_out_head),
        cmocka_unit_test_setup(gat_output_heads_gradient_matches_finite_differences, one_out_head),
        cmocka_unit_test_setup(gat_inference_matches_reference_and_layerwise, one_out_head),
        cmocka_unit_test_setup(gat_step_is_bitwise_identical_across_thread_counts, one_out_head),
        cmocka_unit_test_setup(gat_init_is_keyed_and_bounded, one_out_head),
        cmocka_unit_test_setup(gat_destination_without_edges_gets_bias, one_out_head),
        cmocka_unit_test_setup(gat_bad_configuration_is_refused, one_out_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
