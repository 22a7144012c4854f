/* The CUDA back end's host-side error paths (runtime/model/ops_cuda.cu) without a GPU: this
 * program defines the CUDA runtime and cuBLAS calls those paths make (exported from the
 * executable, they take precedence over libcudart's when lib/halo/libhalo_cuda.so is loaded) and
 * records what the back end asks of them: the device current on the calling thread, the stream of
 * each call, the error left pending. No kernel is launched. Covers the review's bugs 2 (a failed
 * cudaHostAlloc left its error pending), 3 (pinned memory allocated on a thread without
 * cudaSetDevice: a context on GPU 0), 5 (dev_alloc zero-filled on the compute stream, waited
 * for it, and leaked on a failed memset) and 6 (ws_reset of one chunk did not wait). Skipped in
 * a build without CUDA (no back end to load). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "model/ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cudaErrorMemoryAllocation */
#define FAKE_OOM 2

static __thread int t_device;   /* the calling thread's current device (CUDA: 0 by default) */
static int g_pending;           /* the error cudaGetLastError returns next */
static int g_streams;           /* streams created (stream k is (void *)k) */
static int g_syncs[16];         /* cudaStreamSynchronize calls per stream */
static int g_memset_stream;     /* stream of the last cudaMemsetAsync */
static int g_fail_memset;       /* cudaMemsetAsync fails */
static int g_fail_host;         /* cudaHostAlloc fails */
static int g_host_alloc_device; /* device current at the last cudaHostAlloc */
static int g_live;              /* cudaMalloc blocks not freed */

/* The runtime's calls, as this program defines them (cudaError_t is an int-sized enum, streams
 * and handles are pointers). */
int cudaGetDeviceCount(int *n);
int cudaSetDevice(int d);
int cudaStreamCreateWithFlags(void **s, unsigned flags);
int cudaStreamDestroy(void *s);
int cudaStreamSynchronize(void *s);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemsetAsync(void *p, int v, size_t n, void *s);
int cudaHostAlloc(void **p, size_t n, unsigned flags);
int cudaFreeHost(void *p);
int cudaGetLastError(void);
const char *cudaGetErrorString(int e);
int cublasCreate_v2(void **h);
int cublasSetStream_v2(void *h, void *s);
int cublasDestroy_v2(void *h);

int cudaGetDeviceCount(int *n)
{
    *n = 2;
    return 0;
}

int cudaSetDevice(int d)
{
    t_device = d;
    return 0;
}

int cudaStreamCreateWithFlags(void **s, unsigned flags)
{
    (void)flags;
    *s = (void *)(intptr_t)++g_streams;
    return 0;
}

int cudaStreamDestroy(void *s)
{
    (void)s;
    return 0;
}

int cudaStreamSynchronize(void *s)
{
    g_syncs[(intptr_t)s & 15]++;
    return 0;
}

int cudaMalloc(void **p, size_t n)
{
    *p = calloc(1, n > 0 ? n : 1);
    g_live++;
    return 0;
}

int cudaFree(void *p)
{
    if (p != NULL) {
        free(p);
        g_live--;
    }
    return 0;
}

int cudaMemsetAsync(void *p, int v, size_t n, void *s)
{
    g_memset_stream = (int)(intptr_t)s;
    if (g_fail_memset) {
        g_pending = FAKE_OOM;
        return FAKE_OOM;
    }
    memset(p, v, n);
    return 0;
}

int cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags;
    g_host_alloc_device = t_device;
    if (g_fail_host || n > ((size_t)1 << 40)) {
        g_pending = FAKE_OOM;
        return FAKE_OOM;
    }
    *p = calloc(1, n);
    return 0;
}

int cudaFreeHost(void *p)
{
    free(p);
    return 0;
}

int cudaGetLastError(void)
{
    int e = g_pending;
    g_pending = 0;
    return e;
}

const char *cudaGetErrorString(int e)
{
    return e == 0 ? "no error" : "out of memory (test)";
}

int cublasCreate_v2(void **h)
{
    *h = (void *)(intptr_t)1;
    return 0;
}

int cublasSetStream_v2(void *h, void *s)
{
    (void)h;
    (void)s;
    return 0;
}

int cublasDestroy_v2(void *h)
{
    (void)h;
    return 0;
}

static const halo_ops *g_ops; /* the real CUDA back end's table */

static halo_ops_ctx *open_gpu1(void)
{
    halo_ops_config cfg = {.threads = 1, .gpu = 1};
    halo_ops_ctx *ctx = NULL;
    assert_int_equal(g_ops->open(&cfg, &ctx), 0);
    return ctx;
}

/* Bug 2: a failed cudaHostAlloc returns an error and leaves none pending (the next launch check
 * would report it and fail the pageable fall-back's step): failed here by the runtime, then by
 * the back end's own switch HALO_FAULT=host_alloc (which the GPU suite uses on a real device). */
static void failed_host_alloc_leaves_no_error(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_gpu1();
    for (int how = 0; how < 2; how++) {
        void *p = NULL;
        g_fail_host = how == 0;
        if (how == 1) {
            setenv("HALO_FAULT", "host_alloc", 1);
        }
        int rc = g_ops->host_alloc(ctx, 4096, &p);
        unsetenv("HALO_FAULT");
        g_fail_host = 0;
        assert_int_equal(rc, HALO_ECUDA);
        assert_null(p);
        assert_int_equal(cudaGetLastError(), 0);
    }
    void *q = NULL;
    assert_int_equal(g_ops->host_alloc(ctx, 4096, &q), 0); /* the switch is off again */
    g_ops->host_free(ctx, q);
    g_ops->close(ctx);
}

typedef struct thread_arg {
    halo_ops_ctx *ctx;
    int rc;
} thread_arg;

/* A thread of its own (as the fetch and copy stages are): no device made current by it. */
static void *alloc_on_thread(void *arg)
{
    thread_arg *a = arg;
    void *p = NULL;
    a->rc = g_ops->host_alloc(a->ctx, 1 << 16, &p);
    g_ops->host_free(a->ctx, p);
    return NULL;
}

/* Bug 3: pinned memory for a context on GPU 1, allocated from another thread, is allocated with
 * GPU 1 current (not GPU 0, the default of a new thread). */
static void host_alloc_sets_the_device(void **state)
{
    (void)state;
    halo_ops_ctx *ctx = open_gpu1();
    thread_arg a = {.ctx = ctx, .rc = -1};
    pthread_t th;
    g_host_alloc_device = -1;
    assert_int_equal(pthread_create(&th, NULL, alloc_on_thread, &a), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(a.rc, 0);
    assert_int_equal(g_host_alloc_device, 1);
    g_ops->close(ctx);
}

/* Bug 5: dev_alloc zero-fills on a stream of its own and waits for that one only (the compute
 * stream, the first one opened, is neither used nor waited for); a failed memset frees the block
 * and leaves no error pending. */
static void dev_alloc_stays_off_the_compute_stream(void **state)
{
    (void)state;
    int first = g_streams + 1; /* the compute stream of the context opened next */
    halo_ops_ctx *ctx = open_gpu1();
    int syncs = g_syncs[first & 15];
    void *p = NULL;
    assert_int_equal(g_ops->dev_alloc(ctx, 1000, &p), 0);
    assert_non_null(p);
    assert_true(g_memset_stream != first);
    assert_int_equal(g_syncs[first & 15], syncs);
    g_ops->dev_free(ctx, p);
    int live = g_live;
    g_fail_memset = 1;
    p = NULL;
    int rc = g_ops->dev_alloc(ctx, 1000, &p);
    g_fail_memset = 0;
    assert_int_equal(rc, HALO_ECUDA);
    assert_null(p);
    assert_int_equal(g_live, live);
    assert_int_equal(cudaGetLastError(), 0);
    g_ops->close(ctx);
}

/* Bug 6: a reset of a one-chunk workspace waits for the compute stream (work a failed pass
 * queued may still read the workspace). */
static void ws_reset_waits_for_the_compute_stream(void **state)
{
    (void)state;
    int first = g_streams + 1;
    halo_ops_ctx *ctx = open_gpu1();
    void *p = NULL;
    assert_int_equal(g_ops->ws_alloc(ctx, 1000, &p), 0);
    int syncs = g_syncs[first & 15];
    g_ops->ws_reset(ctx);
    assert_true(g_syncs[first & 15] > syncs);
    g_ops->close(ctx);
}

int main(void)
{
    /* the build's back end, or another one to check (HALO_CUDA_LIB) */
    const char *lib = getenv("HALO_CUDA_LIB");
    lib = lib != NULL && lib[0] != '\0' ? lib : HALO_ROOT "/lib/halo/libhalo_cuda.so";
    if (access(lib, F_OK) != 0) {
        printf("1..1\nok 1 - cuda_host_paths # SKIP %s not built (CUDA=0)\n", lib);
        return 0;
    }
    setenv("HALO_CUDA_LIB", lib, 1);
    g_ops = halo_ops_cuda_table();
    if (g_ops == NULL) {
        fprintf(stderr, "halo: error: test_model_gpu_host: %s\n", halo_errmsg());
        const char *why = NULL;
        (void)halo_ops_cuda_device_count(&why);
        fprintf(stderr, "halo: error: test_model_gpu_host: %s\n", why != NULL ? why : "?");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failed_host_alloc_leaves_no_error),
        cmocka_unit_test(host_alloc_sets_the_device),
        cmocka_unit_test(dev_alloc_stays_off_the_compute_stream),
        cmocka_unit_test(ws_reset_waits_for_the_compute_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
