/* CPU back end of the model's operations: OpenBLAS sgemm and multithreaded kernels whose results
 * do not depend on the thread count (fixed row partitions, reductions in a fixed order). */
#include "model/ops.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Hot element-wise loops are vectorised (-O3) for x86-64-v4 (AVX-512), v3 (AVX2, FMA) and the
 * baseline, picked once at load by the CPU's features. Every thread runs the same version, so
 * results never depend on the thread count. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                          \
    !defined(__SANITIZE_ADDRESS__)
#define CPU_HOT                                                                                    \
    __attribute__((optimize("O3"),                                                                 \
                   target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_HOT
#endif

/* Rows of a fixed reduction chunk (bias gradient): a constant, so sums never depend on threads. */
#define CPU_SUM_ROWS 256

/* ---------------------------------------------------------------- thread pool */

/* A task function: runs task number `task` of a parallel loop. */
typedef void (*cpu_task_fn)(void *arg, int64_t task);

/* A fixed set of worker threads; the caller runs tasks too. Tasks are claimed from a shared
 * counter, so which thread runs a task varies, but every task writes only its own outputs. */
typedef struct cpu_pool {
    int threads;              /* workers + the calling thread */
    pthread_t *tid;           /* [threads-1] workers */
    pthread_mutex_t mu;       /* guards the fields below up to `next` */
    pthread_cond_t cv_start;  /* a new loop was posted (gen changed) or stop */
    pthread_cond_t cv_done;   /* the last worker finished a loop */
    uint64_t gen;             /* loop generation */
    bool stop;                /* workers exit */
    int active;               /* workers still in the current loop */
    cpu_task_fn fn;           /* current loop's task */
    void *arg;                /* its argument */
    int64_t ntasks;           /* its task count */
    atomic_llong next;        /* next unclaimed task */
} cpu_pool;

static void pool_drain(cpu_pool *p)
{
    for (;;) {
        long long t = atomic_fetch_add(&p->next, 1);
        if (t >= p->ntasks) {
            return;
        }
        p->fn(p->arg, t);
    }
}

static void *pool_worker(void *arg)
{
    cpu_pool *p = arg;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->stop) {
            pthread_cond_wait(&p->cv_start, &p->mu);
        }
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0) {
            pthread_cond_signal(&p->cv_done);
        }
        pthread_mutex_unlock(&p->mu);
    }
}

static int pool_start(cpu_pool *p, int threads)
{
    memset(p, 0, sizeof *p);
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_start, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    atomic_init(&p->next, 0);
    p->tid = HALO_NEW(pthread_t, threads > 1 ? threads - 1 : 1);
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&p->tid[i], NULL, pool_worker, p) != 0) {
            p->threads = i + 1;
            return halo_errorf(HALO_ESTATE, "model cpu: cannot start thread %d", i + 1);
        }
    }
    return 0;
}

static void pool_stop(cpu_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv_start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->threads - 1; i++) {
        pthread_join(p->tid[i], NULL);
    }
    halo_free(p->tid);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_start);
    pthread_cond_destroy(&p->cv_done);
}

/* Runs fn(arg, 0..ntasks-1) on the pool and returns when all tasks are done. */
static void pool_run(cpu_pool *p, int64_t ntasks, cpu_task_fn fn, void *arg)
{
    if (ntasks <= 0) {
        return;
    }
    if (p->threads <= 1 || ntasks == 1) {
        for (int64_t t = 0; t < ntasks; t++) {
            fn(arg, t);
        }
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->ntasks = ntasks;
    atomic_store(&p->next, 0);
    p->active = p->threads - 1;
    p->gen++;
    pthread_cond_broadcast(&p->cv_start);
    pthread_mutex_unlock(&p->mu);
    pool_drain(p);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) {
        pthread_cond_wait(&p->cv_done, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

/* ---------------------------------------------------------------- context and memory */

/* One allocation of the workspace arena. */
typedef struct ws_chunk {
    char *raw;   /* as allocated */
    char *base;  /* raw rounded up to 64 bytes */
    size_t cap;  /* bytes */
    size_t used; /* bytes handed out */
} ws_chunk;

struct halo_ops_ctx {
    int threads;        /* threads of the kernels and GEMM tasks */
    cpu_pool pool;      /* kernel threads */
    ws_chunk *chunks;   /* workspace arena; the last one is current */
    int nchunks;        /* chunks in use */
    int cap_chunks;     /* slots in chunks */
    void *scratch;      /* grow-only buffer of operations' private temporaries */
    size_t scratch_cap; /* its bytes */
};

static void *ctx_scratch(halo_ops_ctx *ctx, size_t bytes)
{
    if (bytes > ctx->scratch_cap) {
        halo_free(ctx->scratch);
        ctx->scratch_cap = bytes + bytes / 4;
        ctx->scratch = halo_malloc(ctx->scratch_cap);
    }
    return ctx->scratch;
}

static int cpu_open(const halo_ops_config *cfg, halo_ops_ctx **out)
{
    halo_ops_ctx *ctx = HALO_NEW(halo_ops_ctx, 1);
    ctx->threads = cfg->threads > 0 ? cfg->threads : 1;
    int rc = pool_start(&ctx->pool, ctx->threads);
    if (rc < 0) {
        pool_stop(&ctx->pool);
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
    pool_stop(&ctx->pool);
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

/* ---------------------------------------------------------------- GEMM */

/* Rows of C per task when C is split by rows. */
#define GEMM_ROWS 1024
/* Minimum inner-dimension chunk when a weight gradient (A^T B, long k) is split along k. */
#define GEMM_KCHUNK 4096

/* Thread-seconds spent inside sgemm calls (and the k split's reductions) and their FLOPs, over
 * every GEMM of the process (halo_ops_cpu_gemm_totals). */
static atomic_ullong gemm_ns, gemm_flop;

void halo_ops_cpu_gemm_totals(double *thread_seconds, double *flops)
{
    *thread_seconds = (double)atomic_load(&gemm_ns) * 1e-9;
    *flops = (double)atomic_load(&gemm_flop);
}

static void gemm_account(double t0)
{
    atomic_fetch_add(&gemm_ns, (unsigned long long)((halo_now() - t0) * 1e9));
}

typedef struct act_args act_args;
/* bias_act on rows [r0, r1) of a (defined with the activations below). */
static void act_apply(const act_args *a, int64_t r0, int64_t r1);

/* OpenBLAS runs single-threaded inside tasks of a partition that depends only on the shape: each
 * element of C is computed by one sgemm call of a fixed shape (or, split along k, from partial
 * products added in chunk order), so results never depend on the thread count. OpenBLAS's own
 * threading does not promise that (its blocking changes with the number of threads). */
typedef struct gemm_args {
    int ta, tb, m, n, k, lda, ldb, ldc; /* as cpu_gemm's arguments */
    float alpha, beta;                  /* C = alpha op(A) op(B) + beta C */
    const float *a, *b;                 /* operands */
    float *c;                           /* result */
    int64_t chunk;  /* rows of C, or k per task */
    float *partial; /* k split: [tasks x m x n] */
    int64_t tasks;  /* k split: number of partial products */
    const act_args *act; /* row split: bias_act applied to each task's rows of C, or NULL */
} gemm_args;

static void gemm_rows_task(void *arg, int64_t t)
{
    const gemm_args *g = arg;
    int64_t r0 = t * g->chunk;
    int rows = (int)(r0 + g->chunk < g->m ? g->chunk : g->m - r0);
    const float *a0 = g->ta ? g->a + r0 : g->a + r0 * g->lda;
    double t0 = halo_now();
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                g->tb ? CblasTrans : CblasNoTrans, rows, g->n, g->k, g->alpha, a0, g->lda, g->b,
                g->ldb, g->beta, g->c + r0 * g->ldc, g->ldc);
    gemm_account(t0);
    if (g->act != NULL) {
        act_apply(g->act, r0, r0 + rows);
    }
}

static void gemm_k_task(void *arg, int64_t t)
{
    const gemm_args *g = arg;
    int64_t k0 = t * g->chunk;
    int kk = (int)(k0 + g->chunk < g->k ? g->chunk : g->k - k0);
    const float *a0 = g->a + k0 * g->lda; /* A is k x m (transposed use) */
    const float *b0 = g->tb ? g->b + k0 : g->b + k0 * g->ldb;
    double t0 = halo_now();
    cblas_sgemm(CblasRowMajor, CblasTrans, g->tb ? CblasTrans : CblasNoTrans, g->m, g->n, kk,
                1.0f, a0, g->lda, b0, g->ldb, 0.0f, g->partial + t * (int64_t)g->m * g->n, g->n);
    gemm_account(t0);
}

/* C rows of task t = alpha * (sum of the partials in chunk order) + beta * C. */
static void gemm_reduce_task(void *arg, int64_t t)
{
    const gemm_args *g = arg;
    double t0 = halo_now();
    int64_t r0 = t * GEMM_ROWS;
    int64_t r1 = r0 + GEMM_ROWS < g->m ? r0 + GEMM_ROWS : g->m;
    size_t mn = (size_t)g->m * g->n;
    for (int64_t i = r0; i < r1; i++) {
        float *c = g->c + i * g->ldc;
        for (int j = 0; j < g->n; j++) {
            const float *p = g->partial + i * g->n + j;
            float s = p[0];
            for (int64_t q = 1; q < g->tasks; q++) {
                s += p[q * mn];
            }
            c[j] = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * c[j];
        }
    }
    gemm_account(t0);
}

/* cpu_gemm, and when act is not NULL (never with ta), bias_act on C fused into the row tasks. */
static int gemm_run(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc, const act_args *act)
{
    if (m <= 0 || n <= 0) {
        return 0;
    }
    if (k <= 0) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                c[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[(size_t)i * ldc + j];
            }
        }
        if (act != NULL) {
            act_apply(act, 0, m);
        }
        return 0;
    }
    if (openblas_get_num_threads() != 1) {
        openblas_set_num_threads(1);
    }
    atomic_fetch_add(&gemm_flop,
                     2ULL * (unsigned long long)m * (unsigned long long)n * (unsigned long long)k);
    gemm_args g = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb,
                   .ldc = ldc, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .act = act};
    int64_t kchunk = (int64_t)k / 64 > GEMM_KCHUNK ? (int64_t)k / 64 : GEMM_KCHUNK;
    if (ta && k >= 2 * kchunk && act == NULL) {
        g.chunk = kchunk;
        g.tasks = ((int64_t)k + kchunk - 1) / kchunk;
        g.partial = ctx_scratch(ctx, (size_t)g.tasks * m * n * sizeof(float));
        pool_run(&ctx->pool, g.tasks, gemm_k_task, &g);
        pool_run(&ctx->pool, ((int64_t)m + GEMM_ROWS - 1) / GEMM_ROWS, gemm_reduce_task, &g);
        return 0;
    }
    g.chunk = GEMM_ROWS;
    pool_run(&ctx->pool, ((int64_t)m + GEMM_ROWS - 1) / GEMM_ROWS, gemm_rows_task, &g);
    return 0;
}

static int cpu_gemm(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc)
{
    return gemm_run(ctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL);
}

/* ---------------------------------------------------------------- row-wise kernels */

/* Rows per task so that a task touches about 16K floats (at least one row). */
static int64_t rows_per_task(int cols)
{
    int64_t r = 16384 / (cols > 0 ? cols : 1);
    return r > 0 ? r : 1;
}

static int64_t ntasks_for(int64_t rows, int64_t per)
{
    return (rows + per - 1) / per;
}

/* Arguments of the row-wise zero and copy tasks. */
typedef struct zero_args {
    float *x;          /* zero: rows to clear */
    int64_t rows, per; /* rows, rows per task */
    int cols, ld;      /* columns; stride of x or dst */
    float *dst;        /* copy: destination */
    const float *src;  /* copy: source */
    int ld_src;        /* copy: source stride */
} zero_args;

static void zero_task(void *arg, int64_t t)
{
    zero_args *a = arg;
    int64_t r1 = (t + 1) * a->per < a->rows ? (t + 1) * a->per : a->rows;
    for (int64_t r = t * a->per; r < r1; r++) {
        memset(a->x + r * a->ld, 0, (size_t)a->cols * sizeof(float));
    }
}

static int cpu_zero(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld)
{
    zero_args a = {.x = x, .rows = rows, .per = rows_per_task(cols), .cols = cols, .ld = ld};
    pool_run(&ctx->pool, ntasks_for(rows, a.per), zero_task, &a);
    return 0;
}

static void copy_task(void *arg, int64_t t)
{
    zero_args *a = arg;
    int64_t r1 = (t + 1) * a->per < a->rows ? (t + 1) * a->per : a->rows;
    for (int64_t r = t * a->per; r < r1; r++) {
        memcpy(a->dst + r * a->ld, a->src + r * a->ld_src, (size_t)a->cols * sizeof(float));
    }
}

static int cpu_copy_rows(halo_ops_ctx *ctx, float *dst, int ld_dst, const float *src, int ld_src,
                         int64_t rows, int cols)
{
    zero_args a = {.dst = dst, .ld = ld_dst, .src = src, .ld_src = ld_src, .rows = rows,
                   .per = rows_per_task(cols), .cols = cols};
    pool_run(&ctx->pool, ntasks_for(rows, a.per), copy_task, &a);
    return 0;
}

/* ---------------------------------------------------------------- aggregation */

typedef struct agg_args {
    int32_t num_dst;       /* rows of the output */
    const int64_t *indptr; /* CSR (forward: over destinations; backward: over sources) */
    const int32_t *idx;    /* neighbour rows */
    const float *inv;      /* backward: 1/deg of each destination, NULL in forward */
    int dim;               /* columns */
    const float *in;       /* rows gathered */
    int ld_in;             /* their stride */
    float *out;            /* rows written */
    int ld_out;            /* their stride */
    int64_t keep;          /* rows i < keep add to out[i], the others overwrite it */
    const float *act_y;    /* backward: act_backward of each finished row with this output */
    float act_scale;       /* 1 / (1 - p) */
    float *partial;        /* act_y with column sums: [chunks of CPU_SUM_ROWS x dim] */
    int64_t per;           /* rows per task */
} agg_args;

/* out[i] (+)= scale_i * sum_e in[idx[e]] (* inv[idx[e]] in the backward) over row i's edges, for
 * the rows of task t. Each output row is summed by one task in edge order: deterministic. */
CPU_HOT static void agg_rows(const agg_args *a, int64_t r0, int64_t r1)
{
    int dim = a->dim;
    for (int64_t i = r0; i < r1; i++) {
        float *restrict o = a->out + i * a->ld_out;
        int64_t e0 = a->indptr[i], e1 = a->indptr[i + 1];
        bool acc = i < a->keep;
        if (e1 == e0) {
            if (!acc) {
                for (int j = 0; j < dim; j++) {
                    o[j] = 0.0f;
                }
            }
            continue;
        }
        /* An overwritten row starts from its first edge as 0.0f + term (not the term itself:
         * the same bits as zeroing then adding, -0.0 included), so it is not cleared first. */
        if (a->inv == NULL) {
            /* forward: mean of the rows of the in-neighbours */
            float s = 1.0f / (float)(e1 - e0);
            if (acc) {
                for (int64_t e = e0; e < e1; e++) {
                    const float *restrict x = a->in + (int64_t)a->idx[e] * a->ld_in;
                    for (int j = 0; j < dim; j++) {
                        o[j] += s * x[j];
                    }
                }
            } else {
                const float *restrict x0 = a->in + (int64_t)a->idx[e0] * a->ld_in;
                for (int j = 0; j < dim; j++) {
                    o[j] = 0.0f + x0[j];
                }
                for (int64_t e = e0 + 1; e < e1; e++) {
                    const float *restrict x = a->in + (int64_t)a->idx[e] * a->ld_in;
                    for (int j = 0; j < dim; j++) {
                        o[j] += x[j];
                    }
                }
                for (int j = 0; j < dim; j++) {
                    o[j] *= s;
                }
            }
        } else {
            /* backward: each destination's gradient divided by its degree */
            int64_t e = e0;
            if (!acc) {
                int32_t d = a->idx[e];
                float s = a->inv[d];
                const float *restrict x = a->in + (int64_t)d * a->ld_in;
                for (int j = 0; j < dim; j++) {
                    o[j] = 0.0f + s * x[j];
                }
                e++;
            }
            for (; e < e1; e++) {
                int32_t d = a->idx[e];
                float s = a->inv[d];
                const float *restrict x = a->in + (int64_t)d * a->ld_in;
                for (int j = 0; j < dim; j++) {
                    o[j] += s * x[j];
                }
            }
        }
    }
}

static void colsum_reduce(const float *partial, int64_t chunks, int cols, float *db);

/* The fused act_backward of agg_mean_backward on the rows of chunk t (CPU_SUM_ROWS rows, already
 * summed): the operations of act_back_sum_task (or act_back_rows without sums), in its order. */
CPU_HOT static void agg_act_rows(const agg_args *a, int64_t t, int64_t r0, int64_t r1)
{
    int dim = a->dim;
    float s = a->act_scale;
    float *restrict p = a->partial != NULL ? a->partial + t * dim : NULL;
    if (p != NULL) {
        for (int j = 0; j < dim; j++) {
            p[j] = 0.0f;
        }
    }
    for (int64_t r = r0; r < r1; r++) {
        float *restrict dy = a->out + r * a->ld_out;
        const float *restrict y = a->act_y + r * a->ld_out;
        if (p == NULL) {
            for (int j = 0; j < dim; j++) {
                dy[j] = y[j] > 0.0f ? dy[j] * s : 0.0f;
            }
            continue;
        }
        for (int j = 0; j < dim; j++) {
            float v = y[j] > 0.0f ? dy[j] * s : 0.0f;
            dy[j] = v;
            p[j] += v;
        }
    }
}

static void agg_task(void *arg, int64_t t)
{
    const agg_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->num_dst ? r0 + a->per : a->num_dst;
    agg_rows(a, r0, r1);
    if (a->act_y != NULL) {
        agg_act_rows(a, t, r0, r1);
    }
}

/* Rows per aggregation task: about 32K gathered floats per task. */
static int64_t agg_rows_per_task(int32_t rows, int64_t edges, int dim)
{
    double per_row = ((double)edges / (rows > 0 ? rows : 1) + 1.0) * (dim > 0 ? dim : 1);
    int64_t r = (int64_t)(32768.0 / per_row);
    return r > 0 ? r : 1;
}

static int cpu_agg_mean(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                        const int32_t *indices, int dim, const float *src, int ld_src, float *out,
                        int ld_out, int accumulate)
{
    agg_args a = {.num_dst = num_dst, .indptr = indptr, .idx = indices, .inv = NULL, .dim = dim,
                  .in = src, .ld_in = ld_src, .out = out, .ld_out = ld_out,
                  .keep = accumulate ? num_dst : 0};
    a.per = agg_rows_per_task(num_dst, num_dst > 0 ? indptr[num_dst] - indptr[0] : 0, dim);
    pool_run(&ctx->pool, ntasks_for(num_dst, a.per), agg_task, &a);
    return 0;
}

/* Backward of the mean: transposes the block's CSR into a CSR over sources (a stable counting
 * sort, so each source lists its destinations in ascending order), then gathers per source. The
 * sum order is fixed by the block alone, never by the thread count. */
static int cpu_agg_mean_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                                 int64_t num_edges, const int64_t *indptr,
                                 const int32_t *indices, int dim, const float *d_out, int ld_out,
                                 float *d_src, int ld_src, int32_t keep_rows,
                                 const halo_ops_act_grad *act)
{
    int64_t chunks = ntasks_for(num_src, CPU_SUM_ROWS);
    size_t psize = act != NULL && act->db != NULL
                       ? (size_t)(chunks > 0 ? chunks : 1) * (size_t)dim * sizeof(float) + 64
                       : 0;
    size_t need = (size_t)(num_src + 1) * sizeof(int64_t) + (size_t)num_edges * sizeof(int32_t) +
                  (size_t)num_dst * sizeof(float) + 64 + psize;
    char *s = ctx_scratch(ctx, need);
    int64_t *tptr = (int64_t *)s;
    int32_t *tdst = (int32_t *)(s + (size_t)(num_src + 1) * sizeof(int64_t));
    float *inv = (float *)(s + (size_t)(num_src + 1) * sizeof(int64_t) +
                           (size_t)num_edges * sizeof(int32_t));
    memset(tptr, 0, (size_t)(num_src + 1) * sizeof(int64_t));
    int64_t base = indptr[0];
    for (int64_t e = 0; e < num_edges; e++) {
        int32_t u = indices[base + e];
        if (u < 0 || u >= num_src) {
            return halo_errorf(HALO_EINPUT, "model: block edge %lld has source %d outside [0, %d)",
                               (long long)e, u, num_src);
        }
        tptr[u + 1]++;
    }
    for (int32_t u = 0; u < num_src; u++) {
        tptr[u + 1] += tptr[u];
    }
    for (int32_t i = 0; i < num_dst; i++) {
        int64_t deg = indptr[i + 1] - indptr[i];
        inv[i] = deg > 0 ? 1.0f / (float)deg : 0.0f;
        for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) {
            tdst[tptr[indices[e]]++] = i;
        }
    }
    for (int32_t u = num_src; u > 0; u--) {
        tptr[u] = tptr[u - 1];
    }
    tptr[0] = 0;
    agg_args a = {.num_dst = num_src, .indptr = tptr, .idx = tdst, .inv = inv, .dim = dim,
                  .in = d_out, .ld_in = ld_out, .out = d_src, .ld_out = ld_src,
                  .keep = keep_rows};
    a.per = agg_rows_per_task(num_src, num_edges, dim);
    if (act != NULL) {
        /* tasks of the column sums' chunks, so that each task finishes its rows */
        a.per = CPU_SUM_ROWS;
        a.act_y = act->y;
        a.act_scale = act->p > 0.0f ? 1.0f / (1.0f - act->p) : 1.0f;
        if (act->db != NULL) {
            uintptr_t at = (uintptr_t)(inv + num_dst);
            a.partial = (float *)((at + 63) & ~(uintptr_t)63);
        }
    }
    pool_run(&ctx->pool, ntasks_for(num_src, a.per), agg_task, &a);
    if (act != NULL && act->db != NULL) {
        colsum_reduce(a.partial, chunks, dim, act->db);
    }
    return 0;
}

/* ---------------------------------------------------------------- bias, ReLU, dropout */

struct act_args {
    float *x;                    /* rows x cols (stride ld), in place */
    const float *y;              /* backward: the forward output */
    int64_t rows, per;           /* rows and rows per task */
    int cols, ld;                /* columns and stride */
    const float *b;              /* bias or NULL */
    int relu;                    /* apply ReLU (and dropout) */
    const halo_ops_dropout *drop; /* dropout or NULL */
    const uint64_t *col_mix;     /* [cols] halo_mix64(j + 1), the per-column half of a draw */
    uint64_t threshold;          /* p * 2^53 */
    float scale;                 /* 1 / (1 - p) */
};

/* Bias, ReLU and dropout of a range of rows. The keep test of ops.h's contract,
 * (halo_mix64(row_key ^ halo_mix64(j + 1)) >> 11) >= threshold, with the column half taken from
 * a table computed once per call. */
CPU_HOT static void act_rows(const act_args *a, int64_t r0, int64_t r1)
{
    int cols = a->cols;
    for (int64_t r = r0; r < r1; r++) {
        float *restrict x = a->x + r * a->ld;
        if (a->b != NULL) {
            const float *restrict b = a->b;
            for (int j = 0; j < cols; j++) {
                x[j] += b[j];
            }
        }
        if (!a->relu) {
            continue;
        }
        for (int j = 0; j < cols; j++) {
            x[j] = x[j] > 0.0f ? x[j] : 0.0f;
        }
        if (a->threshold > 0) {
            const halo_ops_dropout *d = a->drop;
            const uint64_t *restrict cm = a->col_mix;
            uint64_t key = halo_hash5(d->seed, HALO_RNG_DROPOUT, d->step, d->layer,
                                      (uint64_t)(int64_t)d->gid[r]);
            uint64_t thr = a->threshold;
            float scale = a->scale;
            for (int j = 0; j < cols; j++) {
                uint64_t z = (key ^ cm[j]) + 0x9e3779b97f4a7c15ULL;
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
                z ^= z >> 31;
                x[j] = (z >> 11) >= thr ? x[j] * scale : 0.0f;
            }
        }
    }
}

static void act_apply(const act_args *a, int64_t r0, int64_t r1)
{
    act_rows(a, r0, r1);
}

static void act_task(void *arg, int64_t t)
{
    const act_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    act_rows(a, r0, r1);
}

/* p * 2^53 as an integer threshold for the 53-bit uniform draw (0: no dropout). */
static uint64_t dropout_threshold(float p)
{
    if (!(p > 0.0f)) {
        return 0;
    }
    return (uint64_t)((double)p * 9007199254740992.0);
}

/* The arguments of bias_act on x (the dropout's column table in the context's scratch). */
static act_args act_setup(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                          const float *b, int relu, const halo_ops_dropout *drop)
{
    act_args a = {.x = x, .rows = rows, .per = rows_per_task(cols), .cols = cols, .ld = ld,
                  .b = b, .relu = relu, .drop = drop};
    if (relu && drop != NULL && drop->p > 0.0f) {
        a.threshold = dropout_threshold(drop->p);
        a.scale = 1.0f / (1.0f - drop->p);
        uint64_t *cm = ctx_scratch(ctx, (size_t)cols * sizeof(uint64_t));
        for (int j = 0; j < cols; j++) {
            cm[j] = halo_mix64((uint64_t)j + 1);
        }
        a.col_mix = cm;
    }
    return a;
}

static int cpu_bias_act(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                        const float *b, int relu, const halo_ops_dropout *drop)
{
    act_args a = act_setup(ctx, x, rows, cols, ld, b, relu, drop);
    pool_run(&ctx->pool, ntasks_for(rows, a.per), act_task, &a);
    return 0;
}

static int cpu_gemm_bias_act(halo_ops_ctx *ctx, int m, int n, int k, const float *a, int lda,
                             const float *b, int ldb, float beta, float *c, int ldc,
                             const float *bias, int relu, const halo_ops_dropout *drop)
{
    act_args act = act_setup(ctx, c, m, n, ldc, bias, relu, drop);
    return gemm_run(ctx, 0, 0, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, &act);
}

CPU_HOT static void act_back_rows(const act_args *a, int64_t r0, int64_t r1)
{
    int cols = a->cols;
    float s = a->scale;
    for (int64_t r = r0; r < r1; r++) {
        float *restrict dy = a->x + r * a->ld;
        const float *restrict y = a->y + r * a->ld;
        for (int j = 0; j < cols; j++) {
            dy[j] = y[j] > 0.0f ? dy[j] * s : 0.0f;
        }
    }
}

static void act_back_task(void *arg, int64_t t)
{
    const act_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    act_back_rows(a, r0, r1);
}

/* act_backward with the column sums: chunk t of CPU_SUM_ROWS rows gets its gradient rows and
 * their partial sums (the same additions, in the same order, as colsum_task on the result). */
typedef struct act_sum_args {
    act_args act;   /* the act_backward */
    float *partial; /* [chunks x cols] */
} act_sum_args;

CPU_HOT static void act_back_sum_task(void *arg, int64_t t)
{
    const act_sum_args *as = arg;
    const act_args *a = &as->act;
    int64_t r0 = t * CPU_SUM_ROWS;
    int64_t r1 = r0 + CPU_SUM_ROWS < a->rows ? r0 + CPU_SUM_ROWS : a->rows;
    int cols = a->cols;
    float s = a->scale;
    float *restrict p = as->partial + t * cols;
    for (int j = 0; j < cols; j++) {
        p[j] = 0.0f;
    }
    for (int64_t r = r0; r < r1; r++) {
        float *restrict dy = a->x + r * a->ld;
        const float *restrict y = a->y + r * a->ld;
        for (int j = 0; j < cols; j++) {
            float v = y[j] > 0.0f ? dy[j] * s : 0.0f;
            dy[j] = v;
            p[j] += v;
        }
    }
}

/* db = the partials of `chunks` chunks added in chunk order. */
static void colsum_reduce(const float *partial, int64_t chunks, int cols, float *db)
{
    for (int j = 0; j < cols; j++) {
        db[j] = 0.0f;
    }
    for (int64_t c = 0; c < chunks; c++) {
        for (int j = 0; j < cols; j++) {
            db[j] += partial[c * cols + j];
        }
    }
}

static int cpu_act_backward(halo_ops_ctx *ctx, float *dy, const float *y, int64_t rows, int cols,
                            int ld, float p, float *db)
{
    act_args a = {.x = dy, .y = y, .rows = rows, .per = rows_per_task(cols), .cols = cols,
                  .ld = ld, .scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f};
    if (db == NULL) {
        pool_run(&ctx->pool, ntasks_for(rows, a.per), act_back_task, &a);
        return 0;
    }
    int64_t chunks = ntasks_for(rows, CPU_SUM_ROWS);
    act_sum_args as = {.act = a};
    as.partial = ctx_scratch(ctx, (size_t)(chunks > 0 ? chunks : 1) * cols * sizeof(float));
    pool_run(&ctx->pool, chunks, act_back_sum_task, &as);
    colsum_reduce(as.partial, chunks, cols, db);
    return 0;
}

/* Column sums in fixed chunks of CPU_SUM_ROWS rows: partial sums per chunk (in parallel), then
 * the partials added in chunk order. */
typedef struct colsum_args {
    const float *dy; /* rows x cols, stride ld */
    int64_t rows;    /* rows */
    int cols, ld;    /* columns and stride */
    float *partial;  /* [chunks x cols] */
} colsum_args;

CPU_HOT static void colsum_task(void *arg, int64_t t)
{
    const colsum_args *a = arg;
    int64_t r0 = t * CPU_SUM_ROWS;
    int64_t r1 = r0 + CPU_SUM_ROWS < a->rows ? r0 + CPU_SUM_ROWS : a->rows;
    float *restrict p = a->partial + t * a->cols;
    for (int j = 0; j < a->cols; j++) {
        p[j] = 0.0f;
    }
    for (int64_t r = r0; r < r1; r++) {
        const float *restrict x = a->dy + r * a->ld;
        for (int j = 0; j < a->cols; j++) {
            p[j] += x[j];
        }
    }
}

static int cpu_col_sum(halo_ops_ctx *ctx, const float *dy, int64_t rows, int cols, int ld,
                       float *db)
{
    int64_t chunks = ntasks_for(rows, CPU_SUM_ROWS);
    colsum_args a = {.dy = dy, .rows = rows, .cols = cols, .ld = ld};
    a.partial = ctx_scratch(ctx, (size_t)(chunks > 0 ? chunks : 1) * cols * sizeof(float));
    pool_run(&ctx->pool, chunks, colsum_task, &a);
    colsum_reduce(a.partial, chunks, cols, db);
    return 0;
}

/* ---------------------------------------------------------------- loss */

/* Arguments of the softmax cross-entropy tasks (see halo_ops.softmax_xent). */
typedef struct xent_args {
    const float *x;        /* logits [rows x classes] */
    int32_t rows;          /* seeds */
    int classes;           /* columns */
    const int32_t *labels; /* [rows] or NULL */
    float scale;           /* gradient factor (1 / seeds) */
    float *dx, *row_loss;  /* outputs (dx may be NULL) */
    int32_t *pred;         /* arg-max per row or NULL */
    int64_t per;           /* rows per task */
} xent_args;

static void xent_task(void *arg, int64_t t)
{
    const xent_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    int c = a->classes;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = a->x + r * c;
        float mx = x[0];
        int32_t arg_max = 0;
        for (int j = 1; j < c; j++) {
            if (x[j] > mx) {
                mx = x[j];
                arg_max = j;
            }
        }
        if (a->pred != NULL) {
            a->pred[r] = arg_max;
        }
        if (a->labels == NULL) {
            continue;
        }
        float sum = 0.0f;
        for (int j = 0; j < c; j++) {
            sum += expf(x[j] - mx);
        }
        /* sum >= 1: the arg-max term contributes exp(0). */
        // cppcheck-suppress invalidFunctionArg
        float lse = mx + logf(sum);
        int32_t y = a->labels[r];
        if (a->row_loss != NULL) {
            a->row_loss[r] = lse - x[y];
        }
        if (a->dx != NULL) {
            float *d = a->dx + r * c;
            for (int j = 0; j < c; j++) {
                d[j] = (expf(x[j] - lse) - (j == y ? 1.0f : 0.0f)) * a->scale;
            }
        }
    }
}

static int cpu_softmax_xent(halo_ops_ctx *ctx, const float *x, int32_t rows, int classes,
                            const int32_t *labels, float scale, float *dx, float *row_loss,
                            int32_t *pred)
{
    if (labels != NULL) {
        for (int32_t r = 0; r < rows; r++) {
            if (labels[r] < 0 || labels[r] >= classes) {
                return halo_errorf(HALO_EINPUT, "model: label %d of seed %d is outside [0, %d)",
                                   labels[r], r, classes);
            }
        }
    }
    xent_args a = {.x = x, .rows = rows, .classes = classes, .labels = labels, .scale = scale,
                   .dx = dx, .row_loss = row_loss, .pred = pred, .per = rows_per_task(classes)};
    pool_run(&ctx->pool, ntasks_for(rows, a.per), xent_task, &a);
    return 0;
}

/* ---------------------------------------------------------------- Adam */

/* Arguments of the Adam tasks. */
typedef struct adam_args {
    float *p;                   /* parameters */
    const float *g;             /* gradients */
    float *m, *v;               /* moments */
    size_t n;                   /* count */
    float b1, b2, eps, wd, gs;  /* betas, epsilon, weight decay, gradient scale */
    float step_size, bc2_sqrt;  /* lr / (1 - b1^t), sqrt(1 - b2^t) */
} adam_args;

#define ADAM_CHUNK 16384

CPU_HOT static void adam_task(void *arg, int64_t t)
{
    const adam_args *a = arg;
    size_t i0 = (size_t)t * ADAM_CHUNK;
    size_t i1 = i0 + ADAM_CHUNK < a->n ? i0 + ADAM_CHUNK : a->n;
    for (size_t i = i0; i < i1; i++) {
        float g = a->g[i] * a->gs + a->wd * a->p[i];
        float m = a->b1 * a->m[i] + (1.0f - a->b1) * g;
        float v = a->b2 * a->v[i] + (1.0f - a->b2) * g * g;
        a->m[i] = m;
        a->v[i] = v;
        a->p[i] -= a->step_size * m / (sqrtf(v) / a->bc2_sqrt + a->eps);
    }
}

static int cpu_adam(halo_ops_ctx *ctx, float *p, const float *g, float *m, float *v, size_t n,
                    const halo_ops_adam *hp)
{
    adam_args a = {.p = p, .g = g, .m = m, .v = v, .n = n, .b1 = hp->beta1, .b2 = hp->beta2,
                   .eps = hp->eps, .wd = hp->weight_decay, .gs = hp->grad_scale};
    a.step_size = (float)(hp->lr / (1.0 - pow(hp->beta1, (double)hp->t)));
    a.bc2_sqrt = (float)sqrt(1.0 - pow(hp->beta2, (double)hp->t));
    pool_run(&ctx->pool, (int64_t)((n + ADAM_CHUNK - 1) / ADAM_CHUNK), adam_task, &a);
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
    .gemm = cpu_gemm,
    .zero = cpu_zero,
    .copy_rows = cpu_copy_rows,
    .agg_mean = cpu_agg_mean,
    .agg_mean_backward = cpu_agg_mean_backward,
    .bias_act = cpu_bias_act,
    .gemm_bias_act = cpu_gemm_bias_act,
    .act_backward = cpu_act_backward,
    .col_sum = cpu_col_sum,
    .softmax_xent = cpu_softmax_xent,
    .adam = cpu_adam,
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
    static const char *const wide[] = {"haswell", "skylakex", "cooperlake", "sapphirerapids",
                                       "zen", "excavator"};
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
    if (getenv("OPENBLAS_CORETYPE") != NULL || (keep != NULL && keep[0] != '\0' &&
                                                strcmp(keep, "0") != 0)) {
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
