/* CPU back end of the model's operations: OpenBLAS sgemm and multithreaded kernels whose results
 * do not depend on the thread count (fixed row partitions, reductions in a fixed order). This file:
 * the thread pool, the context and its memory, the operations table and the BLAS kernel choice;
 * the operations are in ops_cpu_gemm.c, ops_cpu_agg.c and ops_cpu_act.c. */
#include "model/ops_cpu_impl.h"

#include "core/err.h"
#include "core/mem.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------------------------------------------------------------- context and memory */

static int cpu_open(const halo_ops_config *cfg, halo_ops_ctx **out)
{
    halo_ops_ctx *ctx = HALO_NEW(halo_ops_ctx, 1);
    ctx->threads = cfg->threads > 0 ? cfg->threads : 1;
    int rc = halo_ops_cpu_pool_start(&ctx->pool, ctx->threads);
    if (rc < 0) {
        halo_ops_cpu_pool_stop(&ctx->pool);
        halo_free(ctx);
        return rc;
    }
    openblas_set_num_threads(1);
    *out = ctx;
    return 0;
}

static void cpu_close(halo_ops_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    halo_ops_cpu_pool_stop(&ctx->pool);
    for (int i = 0; i < ctx->nchunks; i++) {
        halo_free(ctx->chunks[i].raw);
    }
    halo_free(ctx->chunks);
    halo_free(ctx->scratch);
    halo_free(ctx);
}

static int cpu_dev_alloc(halo_ops_ctx *ctx, size_t bytes, void **out)
{
    (void)ctx;
    *out = halo_calloc(1, bytes > 0 ? bytes : 1);
    return 0;
}

static void cpu_dev_free(halo_ops_ctx *ctx, void *p)
{
    (void)ctx;
    halo_free(p);
}

/* Workspace reset: when the last round needed several chunks, they are replaced by one chunk of
 * their total size, so a steady state allocates nothing. */
static void cpu_ws_reset(halo_ops_ctx *ctx)
{
    if (ctx->nchunks > 1) {
        size_t total = 0;
        for (int i = 0; i < ctx->nchunks; i++) {
            total += ctx->chunks[i].cap;
            halo_free(ctx->chunks[i].raw);
        }
        ctx->chunks[0].raw = halo_malloc(total + 64);
        ctx->chunks[0].base = (char *)(((uintptr_t)ctx->chunks[0].raw + 63) & ~(uintptr_t)63);
        ctx->chunks[0].cap = total;
        ctx->nchunks = 1;
    }
    if (ctx->nchunks == 1) {
        ctx->chunks[0].used = 0;
    }
}

static int cpu_ws_alloc(halo_ops_ctx *ctx, size_t bytes, void **out)
{
    bytes = (bytes + 63) & ~(size_t)63;
    if (ctx->nchunks > 0) {
        ws_chunk *c = &ctx->chunks[ctx->nchunks - 1];
        if (c->cap - c->used >= bytes) {
            *out = c->base + c->used;
            c->used += bytes;
            return 0;
        }
    }
    if (ctx->nchunks == ctx->cap_chunks) {
        ctx->cap_chunks = ctx->cap_chunks ? 2 * ctx->cap_chunks : 8;
        ctx->chunks = halo_realloc(ctx->chunks, (size_t)ctx->cap_chunks * sizeof(ws_chunk));
    }
    size_t cap = bytes > ((size_t)1 << 22) ? bytes : ((size_t)1 << 22);
    if (ctx->nchunks > 0 && cap < 2 * ctx->chunks[ctx->nchunks - 1].cap) {
        cap = 2 * ctx->chunks[ctx->nchunks - 1].cap;
    }
    /* halo_malloc aligns to 16; over-allocate so the chunk base can be rounded up to 64 */
    ws_chunk *c = &ctx->chunks[ctx->nchunks++];
    c->raw = halo_malloc(cap + 64);
    c->base = (char *)(((uintptr_t)c->raw + 63) & ~(uintptr_t)63);
    c->cap = cap;
    c->used = bytes;
    *out = c->base;
    return 0;
}

static int cpu_to_dev(halo_ops_ctx *ctx, const void *host, size_t bytes, const void **out)
{
    (void)ctx;
    (void)bytes;
    *out = host;
    return 0;
}

static int cpu_copy(halo_ops_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (dst != src && bytes > 0) {
        memcpy(dst, src, bytes);
    }
    return 0;
}

static int cpu_sync(halo_ops_ctx *ctx)
{
    (void)ctx;
    return 0;
}

/* ---------------------------------------------------------------- copy queue */

/* Every CPU operation has finished when it returns: an event marks nothing and is never waited
 * on; it only exists so the callers' code is the same on both back ends. */
struct halo_ops_event {
    int64_t records; /* times recorded */
};

static int cpu_event_new(halo_ops_ctx *ctx, halo_ops_event **out)
{
    (void)ctx;
    *out = HALO_NEW(halo_ops_event, 1);
    return 0;
}

static void cpu_event_free(halo_ops_ctx *ctx, halo_ops_event *ev)
{
    (void)ctx;
    halo_free(ev);
}

static int cpu_record(halo_ops_ctx *ctx, halo_ops_event *ev, int copy)
{
    (void)ctx;
    (void)copy;
    ev->records++;
    return 0;
}

static int cpu_wait(halo_ops_ctx *ctx, halo_ops_event *ev, int copy)
{
    (void)ctx;
    (void)ev;
    (void)copy;
    return 0;
}

static int cpu_event_sync(halo_ops_ctx *ctx, halo_ops_event *ev)
{
    (void)ctx;
    (void)ev;
    return 0;
}

static int cpu_host_pinned(halo_ops_ctx *ctx, const void *p)
{
    (void)ctx;
    (void)p;
    return 0;
}

const halo_ops halo_ops_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .dev_alloc = cpu_dev_alloc,
    .dev_free = cpu_dev_free,
    .host_alloc = cpu_dev_alloc,
    .host_free = cpu_dev_free,
    .ws_reset = cpu_ws_reset,
    .ws_alloc = cpu_ws_alloc,
    .to_dev = cpu_to_dev,
    .h2d = cpu_copy,
    .d2h = cpu_copy,
    .sync = cpu_sync,
    .event_new = cpu_event_new,
    .event_free = cpu_event_free,
    .copy_h2d = cpu_copy,
    .record = cpu_record,
    .wait = cpu_wait,
    .event_sync = cpu_event_sync,
    .host_pinned = cpu_host_pinned,
    .gemm = halo_ops_cpu_gemm,
    .zero = halo_ops_cpu_zero,
    .copy_rows = halo_ops_cpu_copy_rows,
    .agg_mean = halo_ops_cpu_agg_mean,
    .agg_mean_backward = halo_ops_cpu_agg_mean_backward,
    .bias_act = halo_ops_cpu_bias_act,
    .gemm_bias_act = halo_ops_cpu_gemm_bias_act,
    .act_backward = halo_ops_cpu_act_backward,
    .col_sum = halo_ops_cpu_col_sum,
    .softmax_xent = halo_ops_cpu_softmax_xent,
    .adam = halo_ops_cpu_adam,
    .gat_score = halo_ops_cpu_gat_score,
    .gat_aggregate = halo_ops_cpu_gat_aggregate,
    .gat_edge_backward = halo_ops_cpu_gat_edge_backward,
    .gat_src_backward = halo_ops_cpu_gat_src_backward,
    .gat_score_backward = halo_ops_cpu_gat_score_backward,
};

/* ---------------------------------------------------------------- BLAS kernels */

const char *halo_blas_kernels(void)
{
    const char *c = openblas_get_corename();
    return c != NULL ? c : "unknown";
}

/* OpenBLAS cores whose sgemm kernels use AVX2 or wider (the others: SSE only, or AVX alone). */
static bool blas_core_is_wide(const char *core)
{
    static const char *const wide[] = {"haswell",        "skylakex", "cooperlake",
                                       "sapphirerapids", "zen",      "excavator"};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
        if (strncasecmp(core, wide[i], strlen(wide[i])) == 0) {
            return true;
        }
    }
    return false;
}

void halo_blas_pick_kernels(char **argv)
{
#if defined(__x86_64__) && defined(__linux__)
    const char *keep = getenv("HALO_BLAS_KEEP");
    if (getenv("OPENBLAS_CORETYPE") != NULL ||
        (keep != NULL && keep[0] != '\0' && strcmp(keep, "0") != 0)) {
        return;
    }
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
        want = "SkylakeX";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        want = "Haswell";
    }
    if (want == NULL || blas_core_is_wide(halo_blas_kernels())) {
        return;
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        return;
    }
    self[len] = '\0';
    setenv("OPENBLAS_CORETYPE", want, 1);
    fflush(NULL);
    execv(self, argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: carry on with OpenBLAS's choice */
#else
    (void)argv;
#endif
}
