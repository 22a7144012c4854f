/* CPU back end, GEMM: OpenBLAS sgemm run single-threaded in tasks of a partition fixed by the
 * shape (rows of C, or chunks of k added in order), with bias_act fused into the row tasks. */
#include "model/ops_cpu_impl.h"

#include "core/timer.h"

#include <cblas.h>

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

/* OpenBLAS runs single-threaded inside tasks of a partition that depends only on the shape: each
 * element of C is computed by one sgemm call of a fixed shape (or, split along k, from partial
 * products added in chunk order), so results never depend on the thread count. OpenBLAS's own
 * threading does not promise that (its blocking changes with the number of threads). */
typedef struct gemm_args {
    int ta, tb, m, n, k, lda, ldb, ldc; /* as halo_ops_cpu_gemm's arguments */
    float alpha, beta;                  /* C = alpha op(A) op(B) + beta C */
    const float *a, *b;                 /* operands */
    float *c;                           /* result */
    int64_t chunk;                      /* rows of C, or k per task */
    float *partial;                     /* k split: [tasks x m x n] */
    int64_t tasks;                      /* k split: number of partial products */
    const act_args *act; /* row split: bias_act applied to each task's rows of C, or NULL */
} gemm_args;

static void gemm_rows_task(void *arg, int64_t t)
{
    const gemm_args *g = arg;
    int64_t r0 = t * g->chunk;
    int rows = (int)(r0 + g->chunk < g->m ? g->chunk : g->m - r0);
    const float *a0 = g->ta ? g->a + r0 : g->a + r0 * g->lda;
    double t0 = halo_now();
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans,
                rows, g->n, g->k, g->alpha, a0, g->lda, g->b, g->ldb, g->beta, g->c + r0 * g->ldc,
                g->ldc);
    gemm_account(t0);
    if (g->act != NULL) {
        halo_ops_cpu_act_apply(g->act, r0, r0 + rows);
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
    cblas_sgemm(CblasRowMajor, CblasTrans, g->tb ? CblasTrans : CblasNoTrans, g->m, g->n, kk, 1.0f,
                a0, g->lda, b0, g->ldb, 0.0f, g->partial + t * (int64_t)g->m * g->n, g->n);
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

/* halo_ops_cpu_gemm, and when act is not NULL (never with ta), bias_act on C fused into the row
 * tasks. */
int halo_ops_cpu_gemm_run(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
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
            halo_ops_cpu_act_apply(act, 0, m);
        }
        return 0;
    }
    if (openblas_get_num_threads() != 1) {
        openblas_set_num_threads(1);
    }
    atomic_fetch_add(&gemm_flop,
                     2ULL * (unsigned long long)m * (unsigned long long)n * (unsigned long long)k);
    gemm_args g = {.ta = ta,
                   .tb = tb,
                   .m = m,
                   .n = n,
                   .k = k,
                   .lda = lda,
                   .ldb = ldb,
                   .ldc = ldc,
                   .alpha = alpha,
                   .beta = beta,
                   .a = a,
                   .b = b,
                   .c = c,
                   .act = act};
    int64_t kchunk = (int64_t)k / 64 > GEMM_KCHUNK ? (int64_t)k / 64 : GEMM_KCHUNK;
    if (ta && k >= 2 * kchunk && act == NULL) {
        g.chunk = kchunk;
        g.tasks = ((int64_t)k + kchunk - 1) / kchunk;
        g.partial = halo_ops_cpu_scratch(ctx, (size_t)g.tasks * m * n * sizeof(float));
        halo_ops_cpu_pool_run(&ctx->pool, g.tasks, gemm_k_task, &g);
        halo_ops_cpu_pool_run(&ctx->pool, ((int64_t)m + GEMM_ROWS - 1) / GEMM_ROWS,
                              gemm_reduce_task, &g);
        return 0;
    }
    g.chunk = GEMM_ROWS;
    halo_ops_cpu_pool_run(&ctx->pool, ((int64_t)m + GEMM_ROWS - 1) / GEMM_ROWS, gemm_rows_task, &g);
    return 0;
}

int halo_ops_cpu_gemm(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      int ldc)
{
    return halo_ops_cpu_gemm_run(ctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL);
}

int halo_ops_cpu_gemm_bias_act(halo_ops_ctx *ctx, int m, int n, int k, const float *a, int lda,
                               const float *b, int ldb, float beta, float *c, int ldc,
                               const float *bias, int relu, const halo_ops_dropout *drop)
{
    act_args act = halo_ops_cpu_act_setup(ctx, c, m, n, ldc, bias, relu, drop);
    return halo_ops_cpu_gemm_run(ctx, 0, 0, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, &act);
}
