/* CPU vs GPU back ends of runtime/model: the same mini-batch gives the same loss, gradients,
 * Adam update and inference within 1e-4 relative; the GPU data path (pinned staging, the copy
 * stream through a pipeline at depths 0 and 2, a forced cudaHostAlloc failure then a staged pass,
 * NaN arg-max). Skipped (TAP "# SKIP") where no GPU is. HALO_TEST_ONLY=PATTERN runs the tests
 * whose name matches (cmocka's filter; scripts/gpu-check.sh runs *stage* under
 * compute-sanitizer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../common/batch.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/model.h"
#include "pipe/pipe.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0..maxdeg in-neighbours, none (and no draw) for every 13th destination. */
static int batch_deg(halo_rng *r, int32_t i, int maxdeg)
{
    return i % 13 == 5 ? 0 : (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
}

static void batch_make(test_batch *t, int layers, const int32_t *nodes, int maxdeg, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 2, 0, 0);
    t->gid = HALO_ALLOC(int32_t, nodes[0]);
    for (int32_t i = 0; i < nodes[0]; i++) {
        t->gid[i] = 3 * i + 5;
    }
    test_batch_blocks(t, layers, nodes, maxdeg, &r, batch_deg);
}

/* Largest |a - b| / (|b| + 1e-2 max |b|) over n values. */
static double rel_err(const float *a, const float *b, size_t n)
{
    double bmax = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        bmax = fabs(b[i]) > bmax ? fabs(b[i]) : bmax;
    }
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / (fabs(b[i]) + 1e-2 * bmax + 1e-30);
        worst = e > worst ? e : worst;
    }
    return worst;
}

static halo_model *make_model(int device, int path, float dropout)
{
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = 32;
    cfg.hidden = 48;
    cfg.classes = 7;
    cfg.dropout = dropout;
    cfg.threads = 2;
    cfg.path = path;
    cfg.weight_decay = 1e-4f;
    cfg.device = device;
    cfg.gpu = device == HALO_DEVICE_GPU ? 0 : -1;
    halo_model *m = NULL;
    int rc = halo_model_create(&cfg, &m);
    if (rc < 0) {
        fprintf(stderr, "# %s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    return m;
}

/* The fixtures shared by the tests. */
typedef struct fixture {
    test_batch t;    /* 2 layers: 5000 inputs, 1200 hidden, 250 seeds */
    float *feat;     /* [5000 x 32] */
    int32_t *labels; /* [250] */
} fixture;

static int setup(void **state)
{
    fixture *f = HALO_NEW(fixture, 1);
    int32_t nodes[3] = {5000, 1200, 250};
    batch_make(&f->t, 2, nodes, 12, 1);
    halo_rng r;
    halo_rng_init(&r, 3, HALO_RNG_TEST, 0, 0, 0);
    f->feat = HALO_ALLOC(float, (size_t)5000 * 32);
    for (size_t i = 0; i < (size_t)5000 * 32; i++) {
        f->feat[i] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
    }
    f->labels = HALO_ALLOC(int32_t, 250);
    for (int i = 0; i < 250; i++) {
        f->labels[i] = (int32_t)halo_rng_below(&r, 7);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_batch_free(&f->t);
    halo_free(f->feat);
    halo_free(f->labels);
    halo_free(f);
    return 0;
}

/* Loss and every gradient of one training pass (with dropout) agree, on each layer path. */
static void train_pass_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    for (int path = HALO_MODEL_PATH_AUTO; path <= HALO_MODEL_PATH_LIN_FIRST; path++) {
        halo_model *cpu = make_model(HALO_DEVICE_CPU, path, 0.5f);
        halo_model *gpu = make_model(HALO_DEVICE_GPU, path, 0.5f);
        size_t n;
        assert_memory_equal(halo_model_params(cpu, &n), halo_model_params(gpu, NULL),
                            n * sizeof(float));
        halo_model_stats sc, sg;
        assert_int_equal(
            halo_model_train_forward_backward(cpu, &f->t.mb, f->feat, f->labels, 11, &sc), 0);
        assert_int_equal(
            halo_model_train_forward_backward(gpu, &f->t.mb, f->feat, f->labels, 11, &sg), 0);
        fprintf(stderr, "# path %d: loss cpu %.7f gpu %.7f\n", path, (double)sc.loss,
                (double)sg.loss);
        assert_true(fabs((double)sc.loss - sg.loss) <= 1e-4 * fabs((double)sc.loss));
        /* arg-max may flip on a near tie */
        assert_true(abs(sc.correct - sg.correct) <= 2);
        double e = rel_err(halo_model_grads(gpu, NULL), halo_model_grads(cpu, NULL), n);
        fprintf(stderr, "# path %d: gradients differ by %.3g relative\n", path, e);
        assert_true(e <= 1e-4);
        halo_model_free(cpu);
        halo_model_free(gpu);
    }
}

/* The same gradients give the same Adam update; the moments pulled back agree too. */
static void adam_step_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    halo_model *cpu = make_model(HALO_DEVICE_CPU, 0, 0.5f);
    halo_model *gpu = make_model(HALO_DEVICE_GPU, 0, 0.5f);
    size_t n;
    for (int s = 0; s < 3; s++) {
        assert_int_equal(
            halo_model_train_forward_backward(cpu, &f->t.mb, f->feat, f->labels, 20 + s, NULL), 0);
        memcpy(halo_model_grads(gpu, &n), halo_model_grads(cpu, NULL), n * sizeof(float));
        assert_int_equal(halo_model_adam_step(cpu, 0.5f), 0);
        assert_int_equal(halo_model_adam_step(gpu, 0.5f), 0);
    }
    assert_true(rel_err(halo_model_params(gpu, NULL), halo_model_params(cpu, NULL), n) < 1e-5);
    assert_int_equal(halo_model_pull_state(gpu), 0);
    assert_true(rel_err(halo_model_adam_m(gpu), halo_model_adam_m(cpu), n) < 1e-5);
    assert_true(rel_err(halo_model_adam_v(gpu), halo_model_adam_v(cpu), n) < 1e-5);
    assert_int_equal(halo_model_adam_t(gpu), 3);
    halo_model_free(cpu);
    halo_model_free(gpu);
}

/* Inference and the layer-wise path agree between the back ends. */
static void inference_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    halo_model *cpu = make_model(HALO_DEVICE_CPU, 0, 0.5f);
    halo_model *gpu = make_model(HALO_DEVICE_GPU, 0, 0.5f);
    float *lc = HALO_ALLOC(float, 250 * 7), *lg = HALO_ALLOC(float, 250 * 7);
    halo_model_stats sc, sg;
    assert_int_equal(halo_model_infer(cpu, &f->t.mb, f->feat, f->labels, lc, NULL, &sc), 0);
    assert_int_equal(halo_model_infer(gpu, &f->t.mb, f->feat, f->labels, lg, NULL, &sg), 0);
    assert_true(rel_err(lg, lc, 250 * 7) < 1e-4);
    assert_true(fabs((double)sc.loss - sg.loss) <= 1e-4 * fabs((double)sc.loss));
    float *hc = HALO_ALLOC(float, 1200 * 48), *hg = HALO_ALLOC(float, 1200 * 48);
    assert_int_equal(halo_model_layer_forward(cpu, 0, &f->t.mb.blocks[0], f->feat, hc), 0);
    assert_int_equal(halo_model_layer_forward(gpu, 0, &f->t.mb.blocks[0], f->feat, hg), 0);
    assert_true(rel_err(hg, hc, 1200 * 48) < 1e-4);
    halo_free(lc);
    halo_free(lg);
    halo_free(hc);
    halo_free(hg);
    halo_model_free(cpu);
    halo_model_free(gpu);
}

/* Builds cfg on the CPU and on GPU 0 (the same parameters) and checks that the loss, the
 * gradients, the input gradient and inference agree between the back ends on the fixture's
 * blocks. */
static void backends_agree(fixture *f, const halo_model_config *cfg, const char *name)
{
    halo_model *m[2];
    for (int k = 0; k < 2; k++) {
        halo_model_config c = *cfg;
        c.device = k == 0 ? HALO_DEVICE_CPU : HALO_DEVICE_GPU;
        c.gpu = k == 0 ? -1 : 0;
        assert_int_equal(halo_model_create(&c, &m[k]), 0);
    }
    size_t n;
    assert_memory_equal(halo_model_params(m[0], &n), halo_model_params(m[1], NULL),
                        n * sizeof(float));
    float *dx[2];
    halo_model_stats st[2];
    for (int k = 0; k < 2; k++) {
        dx[k] = HALO_ALLOC(float, (size_t)5000 * 32);
        assert_int_equal(halo_model_train_forward_backward_dx(m[k], &f->t.mb, f->feat, f->labels,
                                                              13, &st[k], dx[k]),
                         0);
    }
    fprintf(stderr, "# %s: loss cpu %.7f gpu %.7f\n", name, (double)st[0].loss,
            (double)st[1].loss);
    assert_true(fabs((double)st[0].loss - st[1].loss) <= 1e-4 * fabs((double)st[0].loss));
    assert_true(rel_err(halo_model_grads(m[1], NULL), halo_model_grads(m[0], NULL), n) <= 1e-4);
    assert_true(rel_err(dx[1], dx[0], (size_t)5000 * 32) <= 1e-4);
    float *lc = HALO_ALLOC(float, 250 * 7), *lg = HALO_ALLOC(float, 250 * 7);
    assert_int_equal(halo_model_infer(m[0], &f->t.mb, f->feat, NULL, lc, NULL, NULL), 0);
    assert_int_equal(halo_model_infer(m[1], &f->t.mb, f->feat, NULL, lg, NULL, NULL), 0);
    assert_true(rel_err(lg, lc, 250 * 7) < 1e-4);
    for (int k = 0; k < 2; k++) {
        halo_free(dx[k]);
        halo_model_free(m[k]);
    }
    halo_free(lc);
    halo_free(lg);
}

/* RGCN (3 relations, 2 bases, dropout): loss, gradients, the input gradient and inference agree
 * between the back ends on typed copies of the fixture's blocks. */
static void rgcn_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    halo_rng r;
    halo_rng_init(&r, 4, HALO_RNG_TEST, 0, 0, 0);
    uint8_t *et[2];
    for (int l = 0; l < 2; l++) {
        halo_block *b = &f->t.mb.blocks[l];
        et[l] = HALO_ALLOC(uint8_t, b->num_edges + 1);
        for (int64_t e = 0; e < b->num_edges; e++) {
            et[l][e] = (uint8_t)halo_rng_below(&r, 3);
        }
        b->etype = et[l];
    }
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.kind = HALO_MODEL_RGCN;
    cfg.relations = 3;
    cfg.bases = 2;
    cfg.in_dim = 32;
    cfg.hidden = 48;
    cfg.classes = 7;
    cfg.threads = 2;
    backends_agree(f, &cfg, "rgcn");
    for (int l = 0; l < 2; l++) {
        f->t.mb.blocks[l].etype = NULL;
        halo_free(et[l]);
    }
}

/* GAT (4 heads of 12, 2 output heads, dropout): loss, gradients, the input gradient and inference
 * agree between the back ends on the fixture's blocks. */
static void gat_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.kind = HALO_MODEL_GAT;
    cfg.heads = 4;
    cfg.out_heads = 2;
    cfg.in_dim = 32;
    cfg.hidden = 12;
    cfg.classes = 7;
    cfg.threads = 2;
    backends_agree(f, &cfg, "gat");
}

/* With a GPU present, auto and gpu resolve to it and a rank takes local_rank % count. */
static void device_resolves_to_a_gpu(void **state)
{
    (void)state;
    int count = halo_model_gpu_count();
    int d, g;
    assert_int_equal(halo_model_device_resolve(HALO_DEVICE_GPU, 2 * count + 1, &d, &g), 0);
    assert_int_equal(d, HALO_DEVICE_GPU);
    assert_int_equal(g, (2 * count + 1) % count);
    assert_int_equal(halo_model_device_resolve(HALO_DEVICE_AUTO, 0, &d, &g), 0);
    assert_int_equal(d, HALO_DEVICE_GPU);
    assert_int_equal(g, 0);
}

/* Staging memory is pinned on the GPU back end (plain memory is not; nothing is on the CPU). */
static void staging_is_pinned(void **state)
{
    (void)state;
    halo_model *gpu = make_model(HALO_DEVICE_GPU, 0, 0.5f);
    halo_model *cpu = make_model(HALO_DEVICE_CPU, 0, 0.5f);
    void *p = NULL;
    assert_int_equal(halo_model_host_alloc(gpu, 1 << 20, &p), 0);
    assert_int_equal(halo_model_host_pinned(gpu, p), 1);
    assert_int_equal(halo_model_host_pinned(gpu, (char *)p + 12345), 1);
    float *plain = HALO_ALLOC(float, 1024);
    assert_int_equal(halo_model_host_pinned(gpu, plain), 0);
    assert_int_equal(halo_model_host_pinned(cpu, p), 0);
    halo_free(plain);
    halo_model_host_free(gpu, p);
    halo_model_free(cpu);
    halo_model_free(gpu);
}

/* A pipeline slot of the staged runs below. */
typedef struct gslot {
    float *rows;             /* pinned rows of its batch */
    size_t cap;              /* bytes */
    halo_model_stage *stage; /* its staging */
    int64_t holds;           /* batch in it, -1 none */
} gslot;

typedef struct grun {
    fixture *f;
    halo_model *m;
    int64_t overlap; /* slot refilled before its batch was trained */
} grun;

/* The fetch's stand-in: the fixture's rows into the slot's pinned buffer, perturbed by batch. */
static int gfill(void *arg, halo_pipe_item *it)
{
    grun *g = arg;
    gslot *s = it->data;
    g->overlap += s->holds >= 0;
    size_t n = (size_t)5000 * 32;
    if (s->rows == NULL) {
        void *p = NULL;
        HALO_CHECK(halo_model_host_alloc(g->m, n * sizeof(float), &p));
        s->rows = p;
        s->cap = n * sizeof(float);
    }
    for (size_t i = 0; i < n; i++) {
        s->rows[i] = g->f->feat[i] * (1.0f + 0.125f * (float)it->batch);
    }
    s->holds = it->batch;
    return 0;
}

static int gcopy(void *arg, halo_pipe_item *it)
{
    grun *g = arg;
    gslot *s = it->data;
    if (s->stage == NULL) {
        HALO_CHECK(halo_model_stage_new(g->m, &s->stage));
    }
    HALO_CHECK(halo_model_stage_upload(g->m, s->stage, &g->f->t.mb, s->rows, g->f->labels,
                                       it->batch));
    bool gpu = halo_model_config_of(g->m)->device == HALO_DEVICE_GPU;
    return !gpu || halo_model_stage_bytes(s->stage) > 0
               ? 0
               : halo_errorf(HALO_ESTATE, "the copy stage copied nothing to the GPU");
}

#define GNB 5 /* batches of a staged run */

/* GNB batches through a pipeline of `depth` (fill, then the copy stage on the copy stream, random
 * delays) into a model of `device`; the loss of each batch (read after Adam) into loss. */
static halo_model *staged_run(fixture *f, int device, int depth, float *loss)
{
    halo_model *m = make_model(device, 0, 0.5f);
    grun g = {.f = f, .m = m};
    int ns = halo_pipe_slots(depth);
    gslot slots[8];
    void *slotp[8];
    assert_true(ns <= 8);
    memset(slots, 0, sizeof slots);
    for (int i = 0; i < ns; i++) {
        slots[i].holds = -1;
        slotp[i] = &slots[i];
    }
    void *args[1] = {&g};
    halo_pipe_opts o = {.depth = depth, .batches = GNB, .nstages = 2, .slots = slotp,
                        .jitter_us = 500, .jitter_seed = 3};
    o.stages[0] = (halo_pipe_stage){"fill", gfill, 1, args};
    o.stages[1] = (halo_pipe_stage){"copy", gcopy, 1, args};
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&o, &p), 0);
    for (int b = 0; b < GNB; b++) {
        halo_pipe_item *it;
        int rc = halo_pipe_next(p, &it);
        if (rc != 0) {
            fprintf(stderr, "# depth %d batch %d: %s\n", depth, b, halo_errmsg());
        }
        assert_int_equal(rc, 0);
        gslot *s = it->data;
        assert_ptr_equal(s, &slots[b % ns]);
        assert_int_equal(s->holds, b);
        assert_int_equal(halo_model_train_staged(m, s->stage, b, 40 + (uint64_t)b, NULL), 0);
        assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
        halo_model_stats st;
        assert_int_equal(halo_model_last_stats(m, &st), 0);
        loss[b] = st.loss;
        s->holds = -1;
        halo_pipe_release(p, it);
    }
    assert_int_equal(halo_pipe_close(p), 0);
    assert_int_equal(g.overlap, 0);
    for (int i = 0; i < ns; i++) {
        halo_model_stage_free(m, slots[i].stage);
        halo_model_host_free(m, slots[i].rows);
    }
    return m;
}

/* The GPU through the copy stage (its own stream, events, pinned slots) at depths 0 and 2 agrees
 * with the CPU: every batch's loss and the weights after GNB Adam steps. */
static void copy_stage_gpu_matches_cpu(void **state)
{
    fixture *f = *state;
    float lc[GNB], lg[GNB];
    halo_model *cpu = staged_run(f, HALO_DEVICE_CPU, 0, lc);
    for (int depth = 0; depth <= 2; depth += 2) {
        halo_model *gpu = staged_run(f, HALO_DEVICE_GPU, depth, lg);
        for (int b = 0; b < GNB; b++) {
            fprintf(stderr, "# depth %d batch %d: loss cpu %.7f gpu %.7f\n", depth, b,
                    (double)lc[b], (double)lg[b]);
            assert_true(fabs((double)lc[b] - lg[b]) <= 1e-3 * fabs((double)lc[b]));
        }
        size_t n;
        double e = rel_err(halo_model_params(gpu, &n), halo_model_params(cpu, NULL), n);
        fprintf(stderr, "# depth %d: weights differ by %.3g relative\n", depth, e);
        assert_true(e < 1e-3);
        halo_model_free(gpu);
    }
    halo_model_free(cpu);
}

/* A cudaHostAlloc that fails for real (HALO_FAULT=host_alloc: the back end asks for 2^62 bytes)
 * leaves no error pending: the stage's pack falls back to plain memory and the staged pass at
 * depth 0 right after it succeeds, equal to the CPU's. */
static void pinned_failure_then_staged_pass_gpu(void **state)
{
    fixture *f = *state;
    halo_model *cpu = make_model(HALO_DEVICE_CPU, 0, 0.5f);
    halo_model *gpu = make_model(HALO_DEVICE_GPU, 0, 0.5f);
    halo_model_stage *sg;
    assert_int_equal(halo_model_stage_new(gpu, &sg), 0);
    void *p = NULL;
    setenv("HALO_FAULT", "host_alloc", 1);
    int rc_alloc = halo_model_host_alloc(gpu, 1 << 20, &p);
    int rc_up = halo_model_stage_upload(gpu, sg, &f->t.mb, f->feat, f->labels, 0);
    unsetenv("HALO_FAULT");
    assert_true(rc_alloc < 0);
    assert_null(p);
    assert_int_equal(rc_up, 0);
    halo_model_stats sc, sgs;
    int rc = halo_model_train_staged(gpu, sg, 0, 5, &sgs);
    if (rc < 0) {
        fprintf(stderr, "# %s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    assert_int_equal(halo_model_train_forward_backward(cpu, &f->t.mb, f->feat, f->labels, 5, &sc),
                     0);
    assert_true(fabs((double)sc.loss - sgs.loss) <= 1e-4 * fabs((double)sc.loss));
    halo_model_stage_free(gpu, sg);
    halo_model_free(cpu);
    halo_model_free(gpu);
}

/* Rows of NaN logits (every class, or the first only) predict a class in [0, classes) on the
 * GPU too. */
static void nan_argmax_in_range_gpu(void **state)
{
    fixture *f = *state;
    halo_model *m = make_model(HALO_DEVICE_GPU, 0, 0.5f);
    int32_t pred[250];
    for (int all = 1; all >= 0; all--) {
        float *bias = halo_model_params(m, NULL) + halo_model_bias_offset(m, 1);
        for (int c = 0; c < 7; c++) {
            bias[c] = all || c == 0 ? NAN : 0.0f;
        }
        assert_int_equal(halo_model_push_state(m), 0);
        assert_int_equal(halo_model_infer(m, &f->t.mb, f->feat, NULL, NULL, pred, NULL), 0);
        for (int r = 0; r < 250; r++) {
            assert_true(pred[r] >= 0 && pred[r] < 7);
        }
    }
    halo_model_free(m);
}

int main(void)
{
    if (halo_model_gpu_count() == 0) {
        fprintf(stderr, "halo: notice: test_model_gpu: no GPU, CPU vs GPU comparison skipped\n");
        printf("1..1\nok 1 - cpu_and_gpu_agree # SKIP no GPU\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(train_pass_gpu_matches_cpu),
        cmocka_unit_test(adam_step_gpu_matches_cpu),
        cmocka_unit_test(inference_gpu_matches_cpu),
        cmocka_unit_test(rgcn_gpu_matches_cpu),
        cmocka_unit_test(gat_gpu_matches_cpu),
        cmocka_unit_test(device_resolves_to_a_gpu),
        cmocka_unit_test(staging_is_pinned),
        cmocka_unit_test(copy_stage_gpu_matches_cpu),
        cmocka_unit_test(pinned_failure_then_staged_pass_gpu),
        cmocka_unit_test(nan_argmax_in_range_gpu),
    };
    const char *only = getenv("HALO_TEST_ONLY");
    if (only != NULL && only[0] != '\0') {
        cmocka_set_test_filter(only);
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
