/* The CUDA back end against the CPU back end operation by operation, through the ops table
 * (runtime/model/ops.h): GEMM in all four transpose combinations with beta 0 and 1 and row
 * strides wider than the width; aggregation and its backward at widths 16, 33 and 100 with
 * accumulate on and off, every keep_rows variant, rows with no neighbours, repeated sources and
 * sources past one workspace chunk (16 MiB); bias/ReLU/dropout (zero patterns compared exactly),
 * the fused GEMM, the activation's backward, column sums, softmax cross-entropy at 47 and 100
 * classes, Adam, GAT's attention operations (heads 1-4, rows without edges). Tolerances: GEMM
 * and sums 2e-5 relative (error / (|cpu| + 1e-2 max |cpu|)); the aggregation backward 1e-5, GAT's
 * scattered backward 1e-4 (atomics: order of additions); predictions and dropout patterns
 * exact. Reports SKIP where no GPU is (tests/run.sh counts it as skipped, never passed;
 * HALO_TEST_GPU=1 makes it a failure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOL 2e-5      /* GEMM, sums, softmax, Adam */
#define TOL_ATOMIC 1e-5 /* aggregation backward (atomics) */

/* One back end and its context. */
typedef struct be {
    const halo_ops *o;
    halo_ops_ctx *c;
} be;

static be g_be[2]; /* [0] CPU, [1] CUDA */

/* A copy of n floats (or bytes) of host data in the back end's device memory. */
static void *up(be *b, const void *host, size_t bytes)
{
    void *d = NULL;
    assert_int_equal(b->o->dev_alloc(b->c, bytes > 0 ? bytes : 4, &d), 0);
    assert_int_equal(b->o->h2d(b->c, d, host, bytes), 0);
    return d;
}

/* Device data back into a new host buffer (after the back end's sync). */
static void *down(be *b, const void *dev, size_t bytes)
{
    void *h = halo_calloc(bytes > 0 ? bytes : 4, 1);
    assert_int_equal(b->o->d2h(b->c, h, dev, bytes), 0);
    int rc = b->o->sync(b->c);
    if (rc < 0) {
        fprintf(stderr, "# %s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    return h;
}

static float *rand_floats(size_t n, uint64_t seed)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 7, 0, 0);
    float *x = HALO_ALLOC(float, n > 0 ? n : 1);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
    }
    return x;
}

/* Largest |a - b| / (|b| + 1e-2 max |b|) over the rows x cols block of stride ld. */
static double rel_err(const float *a, const float *b, int64_t rows, int cols, int ld)
{
    double bmax = 0, worst = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int j = 0; j < cols; j++) {
            bmax = fmax(bmax, fabs(b[r * ld + j]));
        }
    }
    for (int64_t r = 0; r < rows; r++) {
        for (int j = 0; j < cols; j++) {
            double d = fabs((double)a[r * ld + j] - b[r * ld + j]);
            worst = fmax(worst, d / (fabs(b[r * ld + j]) + 1e-2 * bmax + 1e-30));
        }
    }
    return worst;
}

/* C = alpha op(A) op(B) + beta C for every transpose pair, beta 0 and 1, strides > widths. */
static void gemm_matches(void **state)
{
    (void)state;
    const int shapes[][3] = {{16, 33, 100}, {100, 16, 33}, {47, 100, 16}, {33, 47, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        for (int t = 0; t < 8; t++) {
            int ta = t & 1, tb = (t >> 1) & 1;
            float beta = (t >> 2) ? 1.0f : 0.0f;
            int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            int lda = ac + 3, ldb = bc + 5, ldc = n + 7;
            float *a = rand_floats((size_t)ar * lda, 1 + s), *b = rand_floats((size_t)br * ldb, 2);
            float *c = rand_floats((size_t)m * ldc, 3);
            float *out[2];
            for (int e = 0; e < 2; e++) {
                float *da = up(&g_be[e], a, (size_t)ar * lda * 4);
                float *db = up(&g_be[e], b, (size_t)br * ldb * 4);
                float *dc = up(&g_be[e], c, (size_t)m * ldc * 4);
                assert_int_equal(g_be[e].o->gemm(g_be[e].c, ta, tb, m, n, k, 0.75f, da, lda, db,
                                                 ldb, beta, dc, ldc),
                                 0);
                out[e] = down(&g_be[e], dc, (size_t)m * ldc * 4);
                g_be[e].o->dev_free(g_be[e].c, da);
                g_be[e].o->dev_free(g_be[e].c, db);
                g_be[e].o->dev_free(g_be[e].c, dc);
            }
            double err = rel_err(out[1], out[0], m, n, ldc);
            if (err > TOL) {
                fprintf(stderr, "# gemm %dx%dx%d ta %d tb %d beta %g: %.3g\n", m, n, k, ta, tb,
                        (double)beta, err);
            }
            assert_true(err <= TOL);
            /* the padding between rows is untouched */
            for (int r = 0; r < m; r++) {
                assert_memory_equal(out[1] + (size_t)r * ldc + n, c + (size_t)r * ldc + n, 7 * 4);
            }
            halo_free(a);
            halo_free(b);
            halo_free(c);
            halo_free(out[0]);
            halo_free(out[1]);
        }
    }
}

/* A CSR of num_dst rows over num_src sources: every 7th row without neighbours, repeated
 * sources in the others. */
static void make_csr(int32_t num_dst, int32_t num_src, int maxdeg, int64_t **indptr,
                     int32_t **indices, int64_t *edges)
{
    halo_rng r;
    halo_rng_init(&r, 11, HALO_RNG_TEST, (uint64_t)num_dst, 0, 0);
    int64_t *p = HALO_ALLOC(int64_t, num_dst + 1);
    p[0] = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        p[i + 1] = p[i] + (i % 7 == 3 ? 0 : 1 + (int64_t)halo_rng_below(&r, (uint64_t)maxdeg));
    }
    int32_t *x = HALO_ALLOC(int32_t, p[num_dst] + 1);
    for (int32_t i = 0; i < num_dst; i++) {
        for (int64_t e = p[i]; e < p[i + 1]; e++) {
            /* the row's first source again every third edge */
            x[e] = (e - p[i]) % 3 == 2 ? x[p[i]] : (int32_t)halo_rng_below(&r, (uint64_t)num_src);
        }
    }
    *indptr = p;
    *indices = x;
    *edges = p[num_dst];
}

/* The aggregation and its backward at one width; big: sources past one workspace chunk. */
static void agg_case(int dim, int32_t num_dst, int32_t num_src)
{
    int64_t *ptr, edges;
    int32_t *idx;
    make_csr(num_dst, num_src, 9, &ptr, &idx, &edges);
    int ld_src = dim + 3, ld_out = dim + 1;
    float *src = rand_floats((size_t)num_src * ld_src, 5);
    float *out0 = rand_floats((size_t)num_dst * ld_out, 6);
    float *y = rand_floats((size_t)num_src * ld_src, 8);
    for (int acc = 0; acc <= 1; acc++) {
        float *res[2];
        for (int e = 0; e < 2; e++) {
            be *b = &g_be[e];
            b->o->ws_reset(b->c);
            const void *dp, *dx, *ds;
            /* through the workspace: a big source makes it chain chunks */
            assert_int_equal(b->o->to_dev(b->c, ptr, (size_t)(num_dst + 1) * 8, &dp), 0);
            assert_int_equal(b->o->to_dev(b->c, idx, (size_t)edges * 4, &dx), 0);
            assert_int_equal(b->o->to_dev(b->c, src, (size_t)num_src * ld_src * 4, &ds), 0);
            float *dout = up(b, out0, (size_t)num_dst * ld_out * 4);
            assert_int_equal(b->o->agg_mean(b->c, num_dst, dp, dx, dim, ds, ld_src, dout, ld_out,
                                            acc),
                             0);
            res[e] = down(b, dout, (size_t)num_dst * ld_out * 4);
            b->o->dev_free(b->c, dout);
        }
        double err = rel_err(res[1], res[0], num_dst, ld_out, ld_out);
        if (err > TOL) {
            fprintf(stderr, "# agg_mean dim %d acc %d: %.3g\n", dim, acc, err);
        }
        assert_true(err <= TOL);
        halo_free(res[0]);
        halo_free(res[1]);
    }
    /* backward: keep_rows 0, num_dst, num_src; with and without the fused activation */
    int32_t keeps[3] = {0, num_dst, num_src};
    for (int k = 0; k < 3; k++) {
        for (int act = 0; act <= 1; act++) {
            float *res[2], *dbias[2];
            for (int e = 0; e < 2; e++) {
                be *b = &g_be[e];
                b->o->ws_reset(b->c);
                const void *dp, *dx;
                assert_int_equal(b->o->to_dev(b->c, ptr, (size_t)(num_dst + 1) * 8, &dp), 0);
                assert_int_equal(b->o->to_dev(b->c, idx, (size_t)edges * 4, &dx), 0);
                float *dgo = up(b, out0, (size_t)num_dst * ld_out * 4);
                float *dsrc = up(b, src, (size_t)num_src * ld_src * 4);
                float *dy = up(b, y, (size_t)num_src * ld_src * 4);
                float *ddb = up(b, out0, (size_t)dim * 4);
                halo_ops_act_grad ag = {.y = dy, .p = 0.25f, .db = ddb};
                assert_int_equal(b->o->agg_mean_backward(b->c, num_dst, num_src, edges, dp, dx,
                                                         dim, dgo, ld_out, dsrc, ld_src,
                                                         keeps[k], act ? &ag : NULL),
                                 0);
                res[e] = down(b, dsrc, (size_t)num_src * ld_src * 4);
                dbias[e] = down(b, ddb, (size_t)dim * 4);
                b->o->dev_free(b->c, dgo);
                b->o->dev_free(b->c, dsrc);
                b->o->dev_free(b->c, dy);
                b->o->dev_free(b->c, ddb);
            }
            double err = rel_err(res[1], res[0], num_src, dim, ld_src);
            double errb = act ? rel_err(dbias[1], dbias[0], 1, dim, dim) : 0;
            if (err > TOL_ATOMIC || errb > TOL) {
                fprintf(stderr, "# agg_mean_backward dim %d keep %d act %d: %.3g, db %.3g\n", dim,
                        keeps[k], act, err, errb);
            }
            assert_true(err <= TOL_ATOMIC);
            assert_true(errb <= TOL);
            for (int32_t r = 0; r < num_src; r++) { /* the stride's padding untouched */
                assert_memory_equal(res[1] + (size_t)r * ld_src + dim,
                                    src + (size_t)r * ld_src + dim, 3 * 4);
            }
            for (int e = 0; e < 2; e++) {
                halo_free(res[e]);
                halo_free(dbias[e]);
            }
        }
    }
    halo_free(ptr);
    halo_free(idx);
    halo_free(src);
    halo_free(out0);
    halo_free(y);
}

static void aggregation_matches(void **state)
{
    (void)state;
    agg_case(16, 500, 2000);
    agg_case(33, 500, 2000);
    agg_case(100, 700, 3000);
    agg_case(100, 9000, 50000); /* 50000 x 103 floats: 20.6 MB, past the 16 MiB first chunk */
}

/* bias + ReLU + dropout (the kept/zeroed pattern exactly equal), the fused GEMM, the
 * activation's backward and column sums, at widths 16, 33, 100. */
static void activations_match(void **state)
{
    (void)state;
    const int widths[3] = {16, 33, 100};
    const int64_t rows = 3001;
    for (int w = 0; w < 3; w++) {
        int cols = widths[w], ld = cols + 2;
        float *x = rand_floats((size_t)rows * ld, 20 + w), *bias = rand_floats((size_t)cols, 21);
        int32_t *gid = HALO_ALLOC(int32_t, rows);
        for (int64_t r = 0; r < rows; r++) {
            gid[r] = (int32_t)(r * 13 + 1);
        }
        for (int mode = 0; mode < 3; mode++) { /* identity, ReLU, ReLU + dropout 0.5 */
            float *res[2], *dbs[2];
            for (int e = 0; e < 2; e++) {
                be *b = &g_be[e];
                float *dx = up(b, x, (size_t)rows * ld * 4);
                float *dbias = up(b, bias, (size_t)cols * 4);
                int32_t *dgid = up(b, gid, (size_t)rows * 4);
                halo_ops_dropout drop = {.p = 0.5f, .seed = 9, .step = 4, .layer = 1, .gid = dgid};
                assert_int_equal(b->o->bias_act(b->c, dx, rows, cols, ld, dbias, mode > 0,
                                                mode == 2 ? &drop : NULL),
                                 0);
                /* then the backward of that activation with the column sums */
                float *dg = up(b, x, (size_t)rows * ld * 4);
                float *ddb = up(b, bias, (size_t)cols * 4);
                assert_int_equal(b->o->act_backward(b->c, dg, dx, rows, cols, ld,
                                                    mode == 2 ? 0.5f : 0.0f, ddb),
                                 0);
                res[e] = down(b, dx, (size_t)rows * ld * 4);
                float *g = down(b, dg, (size_t)rows * ld * 4);
                dbs[e] = down(b, ddb, (size_t)cols * 4);
                /* the gradient rows of the backward, compared below through their sums */
                halo_free(g);
                b->o->dev_free(b->c, dx);
                b->o->dev_free(b->c, dbias);
                b->o->dev_free(b->c, dgid);
                b->o->dev_free(b->c, dg);
                b->o->dev_free(b->c, ddb);
            }
            for (int64_t i = 0; i < rows * ld; i++) {
                assert_int_equal(res[0][i] == 0.0f, res[1][i] == 0.0f); /* exact pattern */
            }
            assert_true(rel_err(res[1], res[0], rows, cols, ld) <= TOL);
            assert_true(rel_err(dbs[1], dbs[0], 1, cols, cols) <= TOL);
            for (int e = 0; e < 2; e++) {
                halo_free(res[e]);
                halo_free(dbs[e]);
            }
        }
        halo_free(x);
        halo_free(bias);
        halo_free(gid);
    }
}

/* gemm_bias_act (beta 0 and 1) and col_sum over 0, 1 and many rows. */
static void fused_and_sums_match(void **state)
{
    (void)state;
    const int64_t nrows[4] = {0, 1, 255, 70000};
    const int widths[3] = {16, 33, 100};
    for (int w = 0; w < 3; w++) {
        for (int r = 0; r < 4; r++) {
            int cols = widths[w], ld = cols + 4;
            int64_t rows = nrows[r];
            float *dy = rand_floats((size_t)(rows + 1) * ld, 30 + r);
            float *sums[2];
            for (int e = 0; e < 2; e++) {
                float *d = up(&g_be[e], dy, (size_t)(rows + 1) * ld * 4);
                float *db = up(&g_be[e], dy, (size_t)cols * 4);
                assert_int_equal(g_be[e].o->col_sum(g_be[e].c, d, rows, cols, ld, db), 0);
                sums[e] = down(&g_be[e], db, (size_t)cols * 4);
                g_be[e].o->dev_free(g_be[e].c, d);
                g_be[e].o->dev_free(g_be[e].c, db);
            }
            assert_true(rel_err(sums[1], sums[0], 1, cols, cols) <= TOL);
            halo_free(sums[0]);
            halo_free(sums[1]);
            halo_free(dy);
        }
    }
    for (int beta = 0; beta <= 1; beta++) {
        int m = 333, n = 33, k = 100;
        float *a = rand_floats((size_t)m * (k + 1), 40), *b = rand_floats((size_t)k * n, 41);
        float *c = rand_floats((size_t)m * (n + 2), 42), *bias = rand_floats((size_t)n, 43);
        float *res[2];
        for (int e = 0; e < 2; e++) {
            be *B = &g_be[e];
            float *da = up(B, a, (size_t)m * (k + 1) * 4), *dbm = up(B, b, (size_t)k * n * 4);
            float *dc = up(B, c, (size_t)m * (n + 2) * 4), *dbias = up(B, bias, (size_t)n * 4);
            assert_int_equal(B->o->gemm_bias_act(B->c, m, n, k, da, k + 1, dbm, n, (float)beta,
                                                 dc, n + 2, dbias, 1, NULL),
                             0);
            res[e] = down(B, dc, (size_t)m * (n + 2) * 4);
            B->o->dev_free(B->c, da);
            B->o->dev_free(B->c, dbm);
            B->o->dev_free(B->c, dc);
            B->o->dev_free(B->c, dbias);
        }
        assert_true(rel_err(res[1], res[0], m, n, n + 2) <= TOL);
        halo_free(res[0]);
        halo_free(res[1]);
        halo_free(a);
        halo_free(b);
        halo_free(c);
        halo_free(bias);
    }
}

/* Softmax cross-entropy at 47 and 100 classes: loss rows, gradient, predictions (exact, NaN
 * rows included), with and without labels and gradient. */
static void softmax_matches(void **state)
{
    (void)state;
    const int classes[2] = {47, 100};
    const int32_t rows = 1000;
    for (int c = 0; c < 2; c++) {
        int C = classes[c];
        float *x = rand_floats((size_t)rows * C, 50 + c);
        for (int j = 0; j < C; j++) {
            x[(size_t)7 * C + j] = NAN; /* a row of NaNs */
        }
        x[(size_t)9 * C] = NAN; /* a NaN first logit */
        int32_t *lab = HALO_ALLOC(int32_t, rows);
        for (int32_t r = 0; r < rows; r++) {
            lab[r] = (r * 31) % C;
        }
        for (int mode = 0; mode < 3; mode++) { /* no labels; labels; labels and gradient */
            float *loss[2], *grad[2];
            int32_t *pred[2];
            for (int e = 0; e < 2; e++) {
                be *b = &g_be[e];
                float *dx = up(b, x, (size_t)rows * C * 4);
                int32_t *dl = up(b, lab, (size_t)rows * 4);
                float *dg = up(b, x, (size_t)rows * C * 4);
                float *drl = up(b, x, (size_t)rows * 4);
                int32_t *dp = up(b, lab, (size_t)rows * 4);
                assert_int_equal(b->o->softmax_xent(b->c, dx, rows, C, mode > 0 ? dl : NULL,
                                                    1.0f / rows, mode == 2 ? dg : NULL, drl, dp),
                                 0);
                loss[e] = down(b, drl, (size_t)rows * 4);
                grad[e] = down(b, dg, (size_t)rows * C * 4);
                pred[e] = down(b, dp, (size_t)rows * 4);
                b->o->dev_free(b->c, dx);
                b->o->dev_free(b->c, dl);
                b->o->dev_free(b->c, dg);
                b->o->dev_free(b->c, drl);
                b->o->dev_free(b->c, dp);
            }
            for (int32_t r = 0; r < rows; r++) {
                assert_true(pred[1][r] >= 0 && pred[1][r] < C);
                if (r != 7 && r != 9) {
                    assert_int_equal(pred[0][r], pred[1][r]);
                }
            }
            if (mode > 0) { /* the NaN rows' losses are NaN on both */
                for (int32_t r = 0; r < rows; r++) {
                    if (r == 7 || r == 9) {
                        assert_true(isnan(loss[0][r]) && isnan(loss[1][r]));
                        loss[0][r] = loss[1][r] = 0.0f;
                    }
                }
                assert_true(rel_err(loss[1], loss[0], 1, rows, rows) <= TOL);
            }
            if (mode == 2) {
                for (int j = 0; j < C; j++) {
                    grad[0][(size_t)7 * C + j] = grad[1][(size_t)7 * C + j] = 0.0f;
                    grad[0][(size_t)9 * C + j] = grad[1][(size_t)9 * C + j] = 0.0f;
                }
                assert_true(rel_err(grad[1], grad[0], rows, C, C) <= TOL);
            }
            for (int e = 0; e < 2; e++) {
                halo_free(loss[e]);
                halo_free(grad[e]);
                halo_free(pred[e]);
            }
        }
        halo_free(x);
        halo_free(lab);
    }
}

/* Three Adam steps with weight decay and a gradient scale. */
/* GAT's attention operations on one CSR (rows without edges, repeated sources): the scores,
 * the softmax and weighted sum, the edge backward, the scattered source backward (atomics on
 * the GPU: TOL_ATOMIC) and the scores' backward, each from the same inputs on both. */
static void gat_case(int heads, int fdim, int32_t num_dst, int32_t num_src)
{
    int64_t *ptr, edges;
    int32_t *idx;
    make_csr(num_dst, num_src, 9, &ptr, &idx, &edges);
    int hf = heads * fdim;
    float *z = rand_floats((size_t)num_src * hf, 21), *al = rand_floats((size_t)hf, 22);
    float *ar = rand_floats((size_t)hf, 23), *dy = rand_floats((size_t)num_dst * hf, 24);
    float *res[2][9];
    size_t rows[9] = {(size_t)num_src * heads, (size_t)num_dst * heads, (size_t)edges * heads,
                      (size_t)num_dst * hf,    (size_t)edges * heads,   (size_t)num_dst * heads,
                      (size_t)num_src * hf,    (size_t)num_src * heads, (size_t)hf};
    for (int e = 0; e < 2; e++) {
        be *b = &g_be[e];
        b->o->ws_reset(b->c);
        const void *dp, *dx;
        assert_int_equal(b->o->to_dev(b->c, ptr, (size_t)(num_dst + 1) * 8, &dp), 0);
        assert_int_equal(b->o->to_dev(b->c, idx, (size_t)(edges > 0 ? edges : 1) * 4, &dx), 0);
        float *dz = up(b, z, (size_t)num_src * hf * 4), *dal = up(b, al, (size_t)hf * 4);
        float *dar = up(b, ar, (size_t)hf * 4), *ddy = up(b, dy, (size_t)num_dst * hf * 4);
        float *buf[9];
        for (int k = 0; k < 9; k++) {
            void *p = NULL;
            assert_int_equal(b->o->dev_alloc(b->c, rows[k] * 4 + 4, &p), 0);
            buf[k] = p;
        }
        /* el, er, alpha, out, d_raw, d_er, dz, d_el, d_al */
        assert_int_equal(b->o->gat_score(b->c, num_src, heads, fdim, dz, dal, buf[0]), 0);
        assert_int_equal(b->o->gat_score(b->c, num_dst, heads, fdim, dz, dar, buf[1]), 0);
        assert_int_equal(b->o->gat_aggregate(b->c, num_dst, dp, dx, heads, fdim, dz, buf[0],
                                             buf[1], 0.2f, buf[2], buf[3]),
                         0);
        assert_int_equal(b->o->gat_edge_backward(b->c, num_dst, dp, dx, heads, fdim, dz, buf[0],
                                                 buf[1], 0.2f, buf[2], ddy, buf[4], buf[5]),
                         0);
        assert_int_equal(b->o->gat_src_backward(b->c, num_dst, num_src, edges, dp, dx, heads,
                                                fdim, buf[2], ddy, buf[4], buf[5], dal, dar,
                                                buf[6], buf[7]),
                         0);
        assert_int_equal(
            b->o->gat_score_backward(b->c, num_src, heads, fdim, dz, buf[7], buf[8]), 0);
        for (int k = 0; k < 9; k++) {
            res[e][k] = down(b, buf[k], rows[k] * 4);
            b->o->dev_free(b->c, buf[k]);
        }
        b->o->dev_free(b->c, dz);
        b->o->dev_free(b->c, dal);
        b->o->dev_free(b->c, dar);
        b->o->dev_free(b->c, ddy);
    }
    static const char *const names[9] = {"el", "er", "alpha", "out", "d_raw",
                                         "d_er", "dz", "d_el", "d_a"};
    for (int k = 0; k < 9; k++) {
        double tol = k >= 6 ? TOL_ATOMIC * 10 : TOL;
        double err = rel_err(res[1][k], res[0][k], (int64_t)rows[k], 1, 1);
        if (err > tol) {
            fprintf(stderr, "# gat heads %d F %d: %s %.3g\n", heads, fdim, names[k], err);
        }
        assert_true(err <= tol);
        halo_free(res[0][k]);
        halo_free(res[1][k]);
    }
    halo_free(z);
    halo_free(al);
    halo_free(ar);
    halo_free(dy);
    halo_free(ptr);
    halo_free(idx);
}

static void gat_matches(void **state)
{
    (void)state;
    gat_case(4, 8, 300, 1200);
    gat_case(1, 33, 97, 400);
    gat_case(3, 5, 2000, 9000);
}

static void adam_matches(void **state)
{
    (void)state;
    size_t n = 100003;
    float *p = rand_floats(n, 60), *g = rand_floats(n, 61);
    float *res[2];
    for (int e = 0; e < 2; e++) {
        be *b = &g_be[e];
        float *dp = up(b, p, n * 4), *dg = up(b, g, n * 4);
        float *dm = NULL, *dv = NULL;
        assert_int_equal(b->o->dev_alloc(b->c, n * 4, (void **)&dm), 0);
        assert_int_equal(b->o->dev_alloc(b->c, n * 4, (void **)&dv), 0);
        for (int t = 1; t <= 3; t++) {
            halo_ops_adam hp = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                .weight_decay = 1e-4f, .grad_scale = 0.5f, .t = t};
            assert_int_equal(b->o->adam(b->c, dp, dg, dm, dv, n, &hp), 0);
        }
        res[e] = down(b, dp, n * 4);
        b->o->dev_free(b->c, dp);
        b->o->dev_free(b->c, dg);
        b->o->dev_free(b->c, dm);
        b->o->dev_free(b->c, dv);
    }
    assert_true(rel_err(res[1], res[0], 1, (int)n, (int)n) <= TOL);
    halo_free(res[0]);
    halo_free(res[1]);
    halo_free(p);
    halo_free(g);
}

int main(void)
{
    const char *why = NULL;
    if (halo_ops_cuda_device_count(&why) <= 0) {
        fprintf(stderr, "halo: notice: test_model_gpu_ops: no GPU (%s), skipped\n",
                why != NULL ? why : "none");
        printf("1..1\nok 1 - ops_cpu_vs_cuda # SKIP no GPU\n");
        return 0;
    }
    halo_ops_config cc = {.threads = 2, .gpu = -1}, gc = {.threads = 1, .gpu = 0};
    g_be[0].o = &halo_ops_cpu;
    g_be[1].o = halo_ops_cuda_table();
    if (g_be[0].o->open(&cc, &g_be[0].c) < 0 || g_be[1].o->open(&gc, &g_be[1].c) < 0) {
        fprintf(stderr, "halo: error: test_model_gpu_ops: %s\n", halo_errmsg());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_matches),        cmocka_unit_test(aggregation_matches),
        cmocka_unit_test(activations_match),   cmocka_unit_test(fused_and_sums_match),
        cmocka_unit_test(softmax_matches),     cmocka_unit_test(adam_matches),
        cmocka_unit_test(gat_matches),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    g_be[1].o->close(g_be[1].c);
    g_be[0].o->close(g_be[0].c);
    return rc;
}
