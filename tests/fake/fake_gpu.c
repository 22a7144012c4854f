/* The tests' stand-in for the CUDA back end: a shared object with the loader's interface
 * (halo_ops_cuda_plugin_v1) whose "device" memory is plain memory of its own (so the model takes
 * its GPU data path: copies, staging, events) and whose kernels are the CPU back end's, so a run
 * on it must equal a CPU run bitwise. It keeps the queue bookkeeping a GPU has (what is queued,
 * what the host has waited for) and injects faults: HALO_FAULT=host_alloc fails every pinned
 * allocation while set (as the CUDA back end does), fake_gpu_fail_after = N fails the Nth
 * operation queued from then on. Loaded by tests through HALO_CUDA_LIB. */
#include "core/err.h"
#include "core/mem.h"
#include "model/ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What the tests read (dlsym "fake_gpu_counts"). */
typedef struct fake_gpu_counts {
    int64_t queued;        /* operations queued on the compute queue so far */
    int64_t waited;        /* of those, how many the host has waited for (sync, event_sync) */
    int64_t used_at;       /* queue position of the last compute-queue record */
    int64_t undrained;     /* ws_reset calls while queued work had not been waited for */
    int64_t host_allocs;   /* successful host_alloc calls */
    int64_t host_failures; /* host_alloc calls failed by HALO_FAULT */
    int64_t live_host;     /* host_alloc blocks not freed */
    int64_t live_dev;      /* dev_alloc blocks not freed */
} fake_gpu_counts;

fake_gpu_counts fake_gpu_counts_v;
/* > 0: the operation queued when it counts down to 0 fails (HALO_ECUDA). */
int64_t fake_gpu_fail_after;

/* A queued operation's bookkeeping: 0, or the injected failure. */
static int queue_op(const char *what)
{
    fake_gpu_counts_v.queued++;
    if (fake_gpu_fail_after > 0 && --fake_gpu_fail_after == 0) {
        return halo_errorf(HALO_ECUDA, "fake GPU: injected failure of %s (operation %lld)", what,
                           (long long)fake_gpu_counts_v.queued);
    }
    return 0;
}

/* The fake's context: the CPU back end's, and a workspace of its own (device memory). */
struct fake_ctx {
    halo_ops_ctx *cpu; /* the CPU back end's context (kernels, GEMM) */
    char *ws;          /* workspace */
    size_t ws_cap;     /* its bytes */
    size_t ws_used;    /* bytes handed out */
    char **old;        /* workspaces outgrown since the last reset */
    int nold;          /* entries of old */
};
typedef struct fake_ctx fake_ctx;

#define CPU (&halo_ops_cpu)
#define FC(ctx) ((fake_ctx *)(void *)(ctx))
#define INNER(ctx) (FC(ctx)->cpu)

static int f_open(const halo_ops_config *cfg, halo_ops_ctx **out)
{
    if (cfg->gpu != 0) {
        return halo_errorf(HALO_ECUDA, "fake GPU: GPU %d requested, 1 present", cfg->gpu);
    }
    fake_ctx *c = HALO_NEW(fake_ctx, 1);
    halo_ops_config cc = {.threads = cfg->threads > 0 ? cfg->threads : 1, .gpu = -1};
    int rc = CPU->open(&cc, &c->cpu);
    if (rc < 0) {
        halo_free(c);
        return rc;
    }
    *out = (halo_ops_ctx *)(void *)c;
    return 0;
}

static void f_close(halo_ops_ctx *ctx)
{
    fake_ctx *c = FC(ctx);
    CPU->close(c->cpu);
    for (int i = 0; i < c->nold; i++) {
        halo_free(c->old[i]);
    }
    halo_free(c->old);
    halo_free(c->ws);
    halo_free(c);
}

static int f_dev_alloc(halo_ops_ctx *ctx, size_t bytes, void **out)
{
    (void)ctx;
    *out = halo_calloc(bytes > 0 ? bytes : 1, 1);
    fake_gpu_counts_v.live_dev++;
    return 0;
}

static void f_dev_free(halo_ops_ctx *ctx, void *p)
{
    (void)ctx;
    if (p != NULL) {
        fake_gpu_counts_v.live_dev--;
        halo_free(p);
    }
}

static int f_host_alloc(halo_ops_ctx *ctx, size_t bytes, void **out)
{
    (void)ctx;
    *out = NULL;
    const char *f = getenv("HALO_FAULT");
    if (f != NULL && strstr(f, "host_alloc") != NULL) {
        fake_gpu_counts_v.host_failures++;
        return halo_errorf(HALO_ECUDA, "fake GPU: cudaHostAlloc: out of memory (HALO_FAULT)");
    }
    *out = halo_calloc(bytes > 0 ? bytes : 1, 1);
    fake_gpu_counts_v.host_allocs++;
    fake_gpu_counts_v.live_host++;
    return 0;
}

static void f_host_free(halo_ops_ctx *ctx, void *p)
{
    (void)ctx;
    if (p != NULL) {
        fake_gpu_counts_v.live_host--;
        halo_free(p);
    }
}

/* The contract of ws_reset: nothing queued still reads the workspace. Outgrown workspaces are
 * freed here, as the CUDA back end does. */
static void f_ws_reset(halo_ops_ctx *ctx)
{
    fake_ctx *c = FC(ctx);
    if (fake_gpu_counts_v.waited < fake_gpu_counts_v.queued) {
        fake_gpu_counts_v.undrained++;
    }
    for (int i = 0; i < c->nold; i++) {
        halo_free(c->old[i]);
    }
    c->nold = 0;
    c->ws_used = 0;
}

static int f_ws_alloc(halo_ops_ctx *ctx, size_t bytes, void **out)
{
    fake_ctx *c = FC(ctx);
    bytes = (bytes + 255) & ~(size_t)255;
    if (c->ws_cap - c->ws_used < bytes) {
        /* a new, larger workspace; the old one stays valid until the reset */
        c->old = halo_realloc(c->old, (size_t)(c->nold + 1) * sizeof(char *));
        c->old[c->nold++] = c->ws;
        c->ws_cap = 2 * (c->ws_cap + bytes);
        c->ws = halo_calloc(c->ws_cap, 1);
        c->ws_used = 0;
    }
    *out = c->ws + c->ws_used;
    c->ws_used += bytes;
    return 0;
}

static int f_h2d(halo_ops_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    (void)ctx;
    HALO_CHECK(queue_op("h2d"));
    if (bytes > 0 && dev != host) {
        memcpy(dev, host, bytes);
    }
    return 0;
}

static int f_to_dev(halo_ops_ctx *ctx, const void *host, size_t bytes, const void **out)
{
    void *p;
    HALO_CHECK(f_ws_alloc(ctx, bytes > 0 ? bytes : 1, &p));
    HALO_CHECK(f_h2d(ctx, p, host, bytes));
    *out = p;
    return 0;
}

static int f_d2h(halo_ops_ctx *ctx, void *host, const void *dev, size_t bytes)
{
    return f_h2d(ctx, host, dev, bytes);
}

static int f_sync(halo_ops_ctx *ctx)
{
    (void)ctx;
    fake_gpu_counts_v.waited = fake_gpu_counts_v.queued;
    return 0;
}

/* An event: the compute-queue position it was recorded at. */
struct halo_ops_event {
    int64_t at; /* queue position, -1 for the copy queue (always complete) */
};

static int f_event_new(halo_ops_ctx *ctx, halo_ops_event **out)
{
    (void)ctx;
    *out = HALO_NEW(halo_ops_event, 1);
    (*out)->at = -1;
    return 0;
}

static void f_event_free(halo_ops_ctx *ctx, halo_ops_event *ev)
{
    (void)ctx;
    halo_free(ev);
}

static int f_copy_h2d(halo_ops_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    (void)ctx;
    if (bytes > 0) {
        memcpy(dev, host, bytes);
    }
    return 0;
}

static int f_record(halo_ops_ctx *ctx, halo_ops_event *ev, int copy)
{
    (void)ctx;
    ev->at = copy ? -1 : fake_gpu_counts_v.queued;
    if (!copy) {
        fake_gpu_counts_v.used_at = fake_gpu_counts_v.queued;
    }
    return 0;
}

static int f_wait(halo_ops_ctx *ctx, halo_ops_event *ev, int copy)
{
    (void)ctx;
    (void)ev;
    (void)copy;
    return 0;
}

static int f_event_sync(halo_ops_ctx *ctx, halo_ops_event *ev)
{
    (void)ctx;
    if (ev->at > fake_gpu_counts_v.waited) {
        fake_gpu_counts_v.waited = ev->at;
    }
    return 0;
}

static int f_host_pinned(halo_ops_ctx *ctx, const void *p)
{
    (void)ctx;
    (void)p;
    return 0;
}

/* The kernels: queued (bookkeeping, injected failure), then the CPU back end's. */
static int f_gemm(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    HALO_CHECK(queue_op("gemm"));
    return CPU->gemm(INNER(ctx), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static int f_zero(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld)
{
    HALO_CHECK(queue_op("zero"));
    return CPU->zero(INNER(ctx), x, rows, cols, ld);
}

static int f_copy_rows(halo_ops_ctx *ctx, float *dst, int ld_dst, const float *src, int ld_src,
                       int64_t rows, int cols)
{
    HALO_CHECK(queue_op("copy_rows"));
    return CPU->copy_rows(INNER(ctx), dst, ld_dst, src, ld_src, rows, cols);
}

static int f_agg_mean(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                      const int32_t *indices, int dim, const float *src, int ld_src, float *out,
                      int ld_out, int accumulate)
{
    HALO_CHECK(queue_op("agg_mean"));
    return CPU->agg_mean(INNER(ctx), num_dst, indptr, indices, dim, src, ld_src, out, ld_out,
                         accumulate);
}

static int f_agg_mean_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                               int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                               int dim, const float *d_out, int ld_out, float *d_src, int ld_src,
                               int32_t keep_rows, const halo_ops_act_grad *act)
{
    HALO_CHECK(queue_op("agg_mean_backward"));
    return CPU->agg_mean_backward(INNER(ctx), num_dst, num_src, num_edges, indptr, indices, dim,
                                  d_out, ld_out, d_src, ld_src, keep_rows, act);
}

static int f_bias_act(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                      const float *b, int relu, const halo_ops_dropout *drop)
{
    HALO_CHECK(queue_op("bias_act"));
    return CPU->bias_act(INNER(ctx), x, rows, cols, ld, b, relu, drop);
}

static int f_gemm_bias_act(halo_ops_ctx *ctx, int m, int n, int k, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c, int ldc,
                           const float *bias, int relu, const halo_ops_dropout *drop)
{
    HALO_CHECK(queue_op("gemm_bias_act"));
    return CPU->gemm_bias_act(INNER(ctx), m, n, k, a, lda, b, ldb, beta, c, ldc, bias, relu,
                              drop);
}

static int f_act_backward(halo_ops_ctx *ctx, float *dy, const float *y, int64_t rows, int cols,
                          int ld, float p, float *db)
{
    HALO_CHECK(queue_op("act_backward"));
    return CPU->act_backward(INNER(ctx), dy, y, rows, cols, ld, p, db);
}

static int f_col_sum(halo_ops_ctx *ctx, const float *dy, int64_t rows, int cols, int ld,
                     float *db)
{
    HALO_CHECK(queue_op("col_sum"));
    return CPU->col_sum(INNER(ctx), dy, rows, cols, ld, db);
}

static int f_softmax_xent(halo_ops_ctx *ctx, const float *x, int32_t rows, int classes,
                          const int32_t *labels, float scale, float *dx, float *row_loss,
                          int32_t *pred)
{
    HALO_CHECK(queue_op("softmax_xent"));
    return CPU->softmax_xent(INNER(ctx), x, rows, classes, labels, scale, dx, row_loss, pred);
}

static int f_adam(halo_ops_ctx *ctx, float *p, const float *g, float *m, float *v, size_t n,
                  const halo_ops_adam *hp)
{
    HALO_CHECK(queue_op("adam"));
    return CPU->adam(INNER(ctx), p, g, m, v, n, hp);
}

static int f_gat_score(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim, const float *z,
                       const float *a, float *s)
{
    HALO_CHECK(queue_op("gat_score"));
    return CPU->gat_score(INNER(ctx), rows, heads, fdim, z, a, s);
}

static int f_gat_aggregate(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                           const int32_t *indices, int heads, int fdim, const float *z,
                           const float *el, const float *er, float slope, float *alpha, float *out)
{
    HALO_CHECK(queue_op("gat_aggregate"));
    return CPU->gat_aggregate(INNER(ctx), num_dst, indptr, indices, heads, fdim, z, el, er, slope,
                              alpha, out);
}

static int f_gat_edge_backward(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                               const int32_t *indices, int heads, int fdim, const float *z,
                               const float *el, const float *er, float slope, const float *alpha,
                               const float *d_out, float *d_raw, float *d_er)
{
    HALO_CHECK(queue_op("gat_edge_backward"));
    return CPU->gat_edge_backward(INNER(ctx), num_dst, indptr, indices, heads, fdim, z, el, er,
                                  slope, alpha, d_out, d_raw, d_er);
}

static int f_gat_src_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                              int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                              int heads, int fdim, const float *alpha, const float *d_out,
                              const float *d_raw, const float *d_er, const float *a_l,
                              const float *a_r, float *dz, float *d_el)
{
    HALO_CHECK(queue_op("gat_src_backward"));
    return CPU->gat_src_backward(INNER(ctx), num_dst, num_src, num_edges, indptr, indices, heads,
                                 fdim, alpha, d_out, d_raw, d_er, a_l, a_r, dz, d_el);
}

static int f_gat_score_backward(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim,
                                const float *z, const float *d_s, float *d_a)
{
    HALO_CHECK(queue_op("gat_score_backward"));
    return CPU->gat_score_backward(INNER(ctx), rows, heads, fdim, z, d_s, d_a);
}

static const halo_ops fake_table = {
    .name = "cuda",
    .open = f_open,
    .close = f_close,
    .dev_alloc = f_dev_alloc,
    .dev_free = f_dev_free,
    .host_alloc = f_host_alloc,
    .host_free = f_host_free,
    .ws_reset = f_ws_reset,
    .ws_alloc = f_ws_alloc,
    .to_dev = f_to_dev,
    .h2d = f_h2d,
    .d2h = f_d2h,
    .sync = f_sync,
    .event_new = f_event_new,
    .event_free = f_event_free,
    .copy_h2d = f_copy_h2d,
    .record = f_record,
    .wait = f_wait,
    .event_sync = f_event_sync,
    .host_pinned = f_host_pinned,
    .gemm = f_gemm,
    .zero = f_zero,
    .copy_rows = f_copy_rows,
    .agg_mean = f_agg_mean,
    .agg_mean_backward = f_agg_mean_backward,
    .bias_act = f_bias_act,
    .gemm_bias_act = f_gemm_bias_act,
    .act_backward = f_act_backward,
    .col_sum = f_col_sum,
    .softmax_xent = f_softmax_xent,
    .adam = f_adam,
    .gat_score = f_gat_score,
    .gat_aggregate = f_gat_aggregate,
    .gat_edge_backward = f_gat_edge_backward,
    .gat_src_backward = f_gat_src_backward,
    .gat_score_backward = f_gat_score_backward,
};

static int f_device_count(const char **why)
{
    (void)why;
    return 1;
}

/* Non-const so that HALO_FAKE_ABI can make it look like a back end of another halo version. */
halo_ops_cuda_plugin halo_ops_cuda_plugin_v1 = {HALO_OPS_CUDA_ABI, sizeof(halo_ops), &fake_table,
                                                f_device_count};

__attribute__((constructor)) static void fake_abi(void)
{
    const char *a = getenv("HALO_FAKE_ABI");
    if (a != NULL) {
        halo_ops_cuda_plugin_v1.abi = atoi(a);
    }
}
