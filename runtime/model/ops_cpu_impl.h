/* What the CPU back end's files share (ops_cpu_pool.c: the thread pool; ops_cpu.c: the context,
 * memory and the operations table; ops_cpu_gemm.c; ops_cpu_agg.c; ops_cpu_act.c): the context, the
 * pool and the helpers one file uses of another; ops_cpu_gat.c: GAT's attention. Not a public
 * header. */
#ifndef HALO_MODEL_OPS_CPU_IMPL_H
#define HALO_MODEL_OPS_CPU_IMPL_H

#include "model/ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hot element-wise loops are vectorised (-O3) for x86-64-v4 (AVX-512), v3 (AVX2, FMA) and the
 * baseline, picked once at load by the CPU's features. Every thread runs the same version, so
 * results never depend on the thread count. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
#define CPU_HOT                                                                                    \
    __attribute__((optimize("O3"), target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_HOT
#endif

/* Rows of a fixed reduction chunk (bias gradient): a constant, so sums never depend on threads. */
#define CPU_SUM_ROWS 256

/* A task function: runs task number `task` of a parallel loop. */
typedef void (*cpu_task_fn)(void *arg, int64_t task);

/* A fixed set of worker threads; the caller runs tasks too. Tasks are claimed from a shared
 * counter, so which thread runs a task varies, but every task writes only its own outputs. */
typedef struct cpu_pool {
    int threads;             /* workers + the calling thread */
    pthread_t *tid;          /* [threads-1] workers */
    pthread_mutex_t mu;      /* guards the fields below up to `next` */
    pthread_cond_t cv_start; /* a new loop was posted (gen changed) or stop */
    pthread_cond_t cv_done;  /* the last worker finished a loop */
    uint64_t gen;            /* loop generation */
    bool stop;               /* workers exit */
    int active;              /* workers still in the current loop */
    cpu_task_fn fn;          /* current loop's task */
    void *arg;               /* its argument */
    int64_t ntasks;          /* its task count */
    atomic_llong next;       /* next unclaimed task */
} cpu_pool;

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

/* The arguments of bias_act (and act_backward) on a range of rows (ops_cpu_act.c). */
typedef struct act_args {
    float *x;                     /* rows x cols (stride ld), in place */
    const float *y;               /* backward: the forward output */
    int64_t rows, per;            /* rows and rows per task */
    int cols, ld;                 /* columns and stride */
    const float *b;               /* bias or NULL */
    int relu;                     /* apply ReLU (and dropout) */
    const halo_ops_dropout *drop; /* dropout or NULL */
    const uint64_t *col_mix;      /* [cols] halo_mix64(j + 1), the per-column half of a draw */
    uint64_t threshold;           /* p * 2^53 */
    float scale;                  /* 1 / (1 - p) */
} act_args;

/* ops_cpu_pool.c: starts a pool of `threads` threads (threads - 1 workers and the caller);
 * returns 0 or a negative HALO_E* (then halo_ops_cpu_pool_stop still frees it). */
int halo_ops_cpu_pool_start(cpu_pool *p, int threads);
/* ops_cpu_pool.c: stops and joins the workers and frees the pool. */
void halo_ops_cpu_pool_stop(cpu_pool *p);
/* ops_cpu_pool.c: runs fn(arg, 0..ntasks-1) on the pool and returns when all tasks are done. */
void halo_ops_cpu_pool_run(cpu_pool *p, int64_t ntasks, cpu_task_fn fn, void *arg);
/* ops_cpu_pool.c: the context's grow-only scratch buffer, at least `bytes` long. */
void *halo_ops_cpu_scratch(halo_ops_ctx *ctx, size_t bytes);
/* ops_cpu_pool.c: rows per task so that a task touches about 16K floats (at least one row). */
int64_t halo_ops_cpu_rows_per_task(int cols);
/* ops_cpu_pool.c: tasks of `per` rows that cover `rows` rows. */
int64_t halo_ops_cpu_ntasks(int64_t rows, int64_t per);

/* ops_cpu_gemm.c: halo_ops.gemm, and when act is not NULL (never with ta), bias_act on C fused
 * into the row tasks. */
int halo_ops_cpu_gemm_run(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                          const float *a, int lda, const float *b, int ldb, float beta, float *c,
                          int ldc, const act_args *act);
/* ops_cpu_act.c: the arguments of bias_act on x (the dropout's column table in the context's
 * scratch). */
act_args halo_ops_cpu_act_setup(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                                const float *b, int relu, const halo_ops_dropout *drop);
/* ops_cpu_act.c: bias_act on rows [r0, r1) of a's rows. */
void halo_ops_cpu_act_apply(const act_args *a, int64_t r0, int64_t r1);
/* ops_cpu_act.c: db = the partials of `chunks` chunks of CPU_SUM_ROWS rows added in chunk order. */
void halo_ops_cpu_colsum_reduce(const float *partial, int64_t chunks, int cols, float *db);

/* The operations of halo_ops_cpu (see halo_ops in ops.h), by file. */
/* ops_cpu_gemm.c */
int halo_ops_cpu_gemm(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      int ldc);
int halo_ops_cpu_gemm_bias_act(halo_ops_ctx *ctx, int m, int n, int k, const float *a, int lda,
                               const float *b, int ldb, float beta, float *c, int ldc,
                               const float *bias, int relu, const halo_ops_dropout *drop);
/* ops_cpu_agg.c */
int halo_ops_cpu_agg_mean(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                          const int32_t *indices, int dim, const float *src, int ld_src, float *out,
                          int ld_out, int accumulate);
int halo_ops_cpu_agg_mean_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                                   int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                                   int dim, const float *d_out, int ld_out, float *d_src,
                                   int ld_src, int32_t keep_rows, const halo_ops_act_grad *act);
/* ops_cpu_act.c */
int halo_ops_cpu_zero(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld);
int halo_ops_cpu_copy_rows(halo_ops_ctx *ctx, float *dst, int ld_dst, const float *src, int ld_src,
                           int64_t rows, int cols);
int halo_ops_cpu_bias_act(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                          const float *b, int relu, const halo_ops_dropout *drop);
int halo_ops_cpu_act_backward(halo_ops_ctx *ctx, float *dy, const float *y, int64_t rows, int cols,
                              int ld, float p, float *db);
int halo_ops_cpu_col_sum(halo_ops_ctx *ctx, const float *dy, int64_t rows, int cols, int ld,
                         float *db);
int halo_ops_cpu_softmax_xent(halo_ops_ctx *ctx, const float *x, int32_t rows, int classes,
                              const int32_t *labels, float scale, float *dx, float *row_loss,
                              int32_t *pred);
int halo_ops_cpu_adam(halo_ops_ctx *ctx, float *p, const float *g, float *m, float *v, size_t n,
                      const halo_ops_adam *hp);
/* ops_cpu_gat.c */
int halo_ops_cpu_gat_score(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim, const float *z,
                           const float *a, float *s);
int halo_ops_cpu_gat_aggregate(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                               const int32_t *indices, int heads, int fdim, const float *z,
                               const float *el, const float *er, float slope, float *alpha,
                               float *out);
int halo_ops_cpu_gat_edge_backward(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                                   const int32_t *indices, int heads, int fdim, const float *z,
                                   const float *el, const float *er, float slope,
                                   const float *alpha, const float *d_out, float *d_raw,
                                   float *d_er);
int halo_ops_cpu_gat_src_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                                  int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                                  int heads, int fdim, const float *alpha, const float *d_out,
                                  const float *d_raw, const float *d_er, const float *a_l,
                                  const float *a_r, float *dz, float *d_el);
int halo_ops_cpu_gat_score_backward(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim,
                                    const float *z, const float *d_s, float *d_a);

#endif
