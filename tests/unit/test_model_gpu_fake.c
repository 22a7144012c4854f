/* The model's GPU data path on the CPU build, with the CUDA back end replaced by the tests' fake
 * (tests/fake/fake_gpu.c, loaded through HALO_CUDA_LIB like the real one): separate device
 * memory, copies, staging and events, the CPU's kernels. A run on it equals the CPU run bitwise;
 * the error paths a GPU review found are driven by fault injection: pinned memory running out
 * (HALO_FAULT=host_alloc) in the loss staging (issue bug 1, a double free), the input buffer
 * (bug 4, a NULL buffer) and a stage's pack, and a pass failing midway (bug 6: no `used` event,
 * no wait before the workspace is handed out again). */
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
#include "model/ops.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* As tests/fake/fake_gpu.c's. */
typedef struct fake_gpu_counts {
    int64_t queued, waited, used_at, undrained, host_allocs, host_failures, live_host, live_dev;
} fake_gpu_counts;

static fake_gpu_counts *g_counts; /* the fake's counters */
static int64_t *g_fail_after;     /* its injected failure */

/* A 2-layer batch of `seeds` seeds, its rows and labels. */
typedef struct fbatch {
    test_batch t;
    float *feat;
    int32_t *labels;
} fbatch;

static int deg(halo_rng *r, int32_t i, int maxdeg)
{
    return i % 9 == 4 ? 0 : (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
}

static void fbatch_make(fbatch *b, int32_t seeds, uint64_t seed)
{
    int32_t nodes[3] = {seeds * 12, seeds * 4, seeds};
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 1, 0, 0);
    memset(b, 0, sizeof *b);
    b->t.gid = HALO_ALLOC(int32_t, nodes[0]);
    for (int32_t i = 0; i < nodes[0]; i++) {
        b->t.gid[i] = 5 * i + 1;
    }
    test_batch_blocks(&b->t, 2, nodes, 8, &r, deg);
    b->feat = HALO_ALLOC(float, (size_t)nodes[0] * 24);
    for (size_t i = 0; i < (size_t)nodes[0] * 24; i++) {
        b->feat[i] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
    }
    b->labels = HALO_ALLOC(int32_t, seeds);
    for (int32_t i = 0; i < seeds; i++) {
        b->labels[i] = (int32_t)halo_rng_below(&r, 6);
    }
}

static void fbatch_free(fbatch *b)
{
    test_batch_free(&b->t);
    halo_free(b->feat);
    halo_free(b->labels);
}

static int g_kind = HALO_MODEL_SAGE; /* the model model_on makes */

static halo_model *model_on(int device)
{
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.kind = g_kind;
    cfg.out_heads = 2; /* GAT: the heads' mean goes through the device's workspace too */
    cfg.in_dim = 24;
    cfg.hidden = 20;
    cfg.classes = 6;
    cfg.threads = 1;
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

/* The model runs on the fake: the "GPU" back end comes from the shared object named by
 * HALO_CUDA_LIB, and its training equals the CPU's bitwise (loss, gradients, Adam, staged). */
static void equals_cpu_bitwise(int kind)
{
    g_kind = kind;
    fbatch b;
    fbatch_make(&b, 40, 1);
    int64_t host0 = g_counts->live_host, dev0 = g_counts->live_dev;
    halo_model *cpu = model_on(HALO_DEVICE_CPU);
    halo_model *gpu = model_on(HALO_DEVICE_GPU);
    assert_int_equal(halo_ops_cuda_loaded(), 1);
    halo_model_stage *sg;
    assert_int_equal(halo_model_stage_new(gpu, &sg), 0);
    for (int s = 0; s < 3; s++) {
        halo_model_stats sc, sgs;
        assert_int_equal(halo_model_train_forward_backward(cpu, &b.t.mb, b.feat, b.labels,
                                                           (uint64_t)s, &sc),
                         0);
        if (s == 1) {
            assert_int_equal(halo_model_stage_upload(gpu, sg, &b.t.mb, b.feat, b.labels, s), 0);
            assert_true(halo_model_stage_bytes(sg) > 0);
            assert_int_equal(halo_model_train_staged(gpu, sg, s, (uint64_t)s, &sgs), 0);
        } else {
            assert_int_equal(halo_model_train_forward_backward(gpu, &b.t.mb, b.feat, b.labels,
                                                               (uint64_t)s, &sgs),
                             0);
        }
        assert_memory_equal(&sc.loss, &sgs.loss, sizeof sc.loss);
        size_t n;
        const float *gc = halo_model_grads(cpu, &n);
        assert_memory_equal(gc, halo_model_grads(gpu, NULL), n * sizeof(float));
        assert_int_equal(halo_model_adam_step(cpu, 1.0f), 0);
        assert_int_equal(halo_model_adam_step(gpu, 1.0f), 0);
    }
    assert_true(halo_model_param_checksum(cpu) == halo_model_param_checksum(gpu));
    halo_model_stage_free(gpu, sg);
    halo_model_free(cpu);
    halo_model_free(gpu);
    assert_int_equal(g_counts->live_host, host0);
    assert_int_equal(g_counts->live_dev, dev0);
    fbatch_free(&b);
    g_kind = HALO_MODEL_SAGE;
}

static void fake_gpu_equals_cpu_bitwise(void **state)
{
    (void)state;
    equals_cpu_bitwise(HALO_MODEL_SAGE);
}

/* GAT's attention kernels on the GPU data path (the stage's copies, the workspace). */
static void fake_gpu_gat_equals_cpu_bitwise(void **state)
{
    (void)state;
    equals_cpu_bitwise(HALO_MODEL_GAT);
}

/* Bug 1: pinned memory runs out when the loss staging grows (a pass with more seeds than any
 * before). The pass still succeeds (plain memory), and freeing the model frees each buffer once
 * (the old staging freed its labels' copy without forgetting it: a double free). */
static void staging_growth_without_pinned_memory(void **state)
{
    (void)state;
    fbatch small, big;
    fbatch_make(&small, 10, 2);
    fbatch_make(&big, 60, 3);
    int64_t host0 = g_counts->live_host;
    halo_model *m = model_on(HALO_DEVICE_GPU);
    assert_int_equal(halo_model_train_forward_backward(m, &small.t.mb, small.feat, small.labels,
                                                       1, NULL),
                     0);
    int64_t failed = g_counts->host_failures;
    setenv("HALO_FAULT", "host_alloc", 1);
    halo_model_stats st;
    int rc = halo_model_train_forward_backward(m, &big.t.mb, big.feat, big.labels, 2, &st);
    unsetenv("HALO_FAULT");
    halo_model_free(m); /* first: each buffer freed once, whatever the pass said */
    assert_true(g_counts->host_failures > failed); /* the fault was hit */
    assert_int_equal(rc, 0);
    assert_int_equal(st.seeds, 60);
    assert_int_equal(g_counts->live_host, host0);
    fbatch_free(&small);
    fbatch_free(&big);
}

/* Bug 4: the input buffer the fetch gathers into is never NULL when pinned memory runs out
 * (evaluation wrote through it). */
static void input_buffer_without_pinned_memory(void **state)
{
    (void)state;
    int64_t host0 = g_counts->live_host;
    halo_model *m = model_on(HALO_DEVICE_GPU);
    setenv("HALO_FAULT", "host_alloc", 1);
    float *rows = halo_model_input_buffer(m, 5000);
    unsetenv("HALO_FAULT");
    assert_non_null(rows);
    for (size_t i = 0; i < (size_t)5000 * 24; i++) {
        rows[i] = 1.0f;
    }
    assert_ptr_equal(halo_model_input_buffer(m, 100), rows); /* kept while large enough */
    float *pinned = halo_model_input_buffer(m, 6000);        /* grows: pinned again */
    assert_non_null(pinned);
    halo_model_free(m);
    assert_int_equal(g_counts->live_host, host0);
}

/* A stage whose pack cannot be pinned still uploads and trains, equal to the CPU. */
static void staged_pass_without_pinned_memory(void **state)
{
    (void)state;
    fbatch b;
    fbatch_make(&b, 30, 4);
    halo_model *cpu = model_on(HALO_DEVICE_CPU);
    halo_model *gpu = model_on(HALO_DEVICE_GPU);
    halo_model_stage *sg;
    assert_int_equal(halo_model_stage_new(gpu, &sg), 0);
    setenv("HALO_FAULT", "host_alloc", 1);
    int rc = halo_model_stage_upload(gpu, sg, &b.t.mb, b.feat, b.labels, 0);
    unsetenv("HALO_FAULT");
    assert_int_equal(rc, 0);
    halo_model_stats sc, sgs;
    assert_int_equal(halo_model_train_staged(gpu, sg, 0, 7, &sgs), 0);
    assert_int_equal(halo_model_train_forward_backward(cpu, &b.t.mb, b.feat, b.labels, 7, &sc), 0);
    assert_memory_equal(&sc.loss, &sgs.loss, sizeof sc.loss);
    halo_model_stage_free(gpu, sg);
    halo_model_free(cpu);
    halo_model_free(gpu);
    fbatch_free(&b);
}

/* Bug 6: a pass that fails midway (its kth queued operation, for every k) has recorded the
 * stage's `used` event after all it queued and waited for the queue before it returns, so the
 * next pass's workspace reset and the next upload cannot overwrite what queued work reads; the
 * next pass then succeeds and equals the CPU. */
static void failed_pass_waits_for_its_work(void **state)
{
    (void)state;
    fbatch b;
    fbatch_make(&b, 30, 5);
    halo_model *gpu = model_on(HALO_DEVICE_GPU);
    halo_model *cpu = model_on(HALO_DEVICE_CPU);
    halo_model_stage *sg;
    assert_int_equal(halo_model_stage_new(gpu, &sg), 0);
    /* how many operations a staged pass queues */
    assert_int_equal(halo_model_stage_upload(gpu, sg, &b.t.mb, b.feat, b.labels, 0), 0);
    int64_t q0 = g_counts->queued;
    assert_int_equal(halo_model_train_staged(gpu, sg, 0, 1, NULL), 0);
    int64_t ops = g_counts->queued - q0;
    assert_true(ops > 5);
    for (int64_t k = 2; k <= ops; k++) {
        assert_int_equal(halo_model_stage_upload(gpu, sg, &b.t.mb, b.feat, b.labels, k), 0);
        *g_fail_after = k;
        int rc = halo_model_train_staged(gpu, sg, k, 1, NULL);
        *g_fail_after = 0;
        assert_int_equal(rc, HALO_ECUDA);
        assert_non_null(strstr(halo_errmsg(), "injected failure"));
        assert_int_equal(g_counts->waited, g_counts->queued);
        assert_int_equal(g_counts->used_at, g_counts->queued);
    }
    int64_t undrained = g_counts->undrained;
    halo_model_stats sg1, sc1;
    assert_int_equal(halo_model_stage_upload(gpu, sg, &b.t.mb, b.feat, b.labels, 99), 0);
    assert_int_equal(halo_model_train_staged(gpu, sg, 99, 3, &sg1), 0);
    assert_int_equal(g_counts->undrained, undrained);
    assert_int_equal(halo_model_train_forward_backward(cpu, &b.t.mb, b.feat, b.labels, 3, &sc1),
                     0);
    assert_memory_equal(&sc1.loss, &sg1.loss, sizeof sc1.loss);
    /* inference failing midway waits too */
    int32_t pred[30];
    *g_fail_after = 3;
    assert_int_equal(halo_model_infer(gpu, &b.t.mb, b.feat, NULL, NULL, pred, NULL), HALO_ECUDA);
    *g_fail_after = 0;
    assert_int_equal(g_counts->waited, g_counts->queued);
    halo_model_stage_free(gpu, sg);
    halo_model_free(gpu);
    halo_model_free(cpu);
    fbatch_free(&b);
}

int main(void)
{
    char exe[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    char lib[PATH_MAX];
    snprintf(lib, sizeof lib, "%s/../libhalo_fakegpu.so", exe); /* $BUILD/tests/ */
    setenv("HALO_CUDA_LIB", lib, 1);
    if (halo_model_gpu_count() != 1) {
        fprintf(stderr, "halo: error: test_model_gpu_fake: the fake GPU back end %s: %s\n", lib,
                halo_errmsg());
        return 1;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    g_counts = h != NULL ? dlsym(h, "fake_gpu_counts_v") : NULL;
    g_fail_after = h != NULL ? dlsym(h, "fake_gpu_fail_after") : NULL;
    if (g_counts == NULL || g_fail_after == NULL) {
        fprintf(stderr, "halo: error: test_model_gpu_fake: %s has no counters\n", lib);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_gpu_equals_cpu_bitwise),
        cmocka_unit_test(fake_gpu_gat_equals_cpu_bitwise),
        cmocka_unit_test(staging_growth_without_pinned_memory),
        cmocka_unit_test(input_buffer_without_pinned_memory),
        cmocka_unit_test(staged_pass_without_pinned_memory),
        cmocka_unit_test(failed_pass_waits_for_its_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
