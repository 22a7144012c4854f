/* The table of operations the GraphSAGE layers are written against: memory, copies, GEMM, CSR
 * mean aggregation and its backward, fused bias/ReLU/dropout, softmax cross-entropy, Adam.
 * Back ends: ops_cpu.c (OpenBLAS + a thread pool) and ops_cuda.cu (cuBLAS + CUDA kernels).
 * "Device" pointers are host pointers on the CPU back end. No CUDA types appear here. */
#ifndef HALO_MODEL_OPS_H
#define HALO_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct halo_ops_ctx halo_ops_ctx;
/* A point in one of the back end's two queues (GPU: a CUDA event). */
typedef struct halo_ops_event halo_ops_event;

/* The purpose number the dropout masks are keyed with: HALO_RNG_DROPOUT of core/rng.h, which
 * model.c and ops_cuda.cu check with a static assertion (the device code cannot call rng.h). */
#define HALO_OPS_RNG_DROPOUT 9

/* What a back end is opened with. */
typedef struct halo_ops_config {
    int threads; /* CPU: threads of the kernels and GEMM tasks (>= 1) */
    int gpu;     /* CUDA: device ordinal */
} halo_ops_config;

/* Dropout of one layer's output rows: element (r, j) is kept iff
 * (halo_mix64(halo_hash5(seed, HALO_OPS_RNG_DROPOUT, step, layer, gid[r]) ^ halo_mix64(j + 1)) >> 11)
 * >= threshold, where threshold = p * 2^53 (the draw of halo_rng_next with counter j+1). */
typedef struct halo_ops_dropout {
    float p;            /* drop probability; 0 disables dropout */
    uint64_t seed;      /* model seed */
    uint64_t step;      /* trainer's mini-batch number */
    uint64_t layer;     /* layer whose output is dropped */
    const int32_t *gid; /* [rows] global node ids of the rows (device memory) */
} halo_ops_dropout;

/* The backward of the activation below a layer, fused into the pass that writes its gradient
 * (agg_mean_backward): as act_backward(rows, y, p, db) on the result, in the same pass. */
typedef struct halo_ops_act_grad {
    const float *y; /* the activation's output, same shape and stride as the gradient */
    float p;        /* its dropout probability (0: none) */
    float *db;      /* the bias gradient (column sums of the result), or NULL */
} halo_ops_act_grad;

/* Adam hyper-parameters of one step (torch.optim.Adam, L2 decay added to the gradient). */
typedef struct halo_ops_adam {
    float lr, beta1, beta2, eps, weight_decay; /* as torch.optim.Adam */
    float grad_scale;                          /* gradient multiplier applied first */
    int64_t t;                                 /* step number after this update (>= 1) */
} halo_ops_adam;

/* Every operation returns 0 or a negative HALO_E code with a message set. Operations may run
 * asynchronously (GPU: in stream order); sync waits for all of them. Matrices are row-major. */
typedef struct halo_ops {
    const char *name; /* "cpu" or "cuda" */
    int (*open)(const halo_ops_config *cfg, halo_ops_ctx **out);
    void (*close)(halo_ops_ctx *ctx);

    /* Persistent device memory, zero-filled. */
    int (*dev_alloc)(halo_ops_ctx *ctx, size_t bytes, void **out);
    void (*dev_free)(halo_ops_ctx *ctx, void *p);
    /* Host memory for copies (pinned on GPU), zero-filled. */
    int (*host_alloc)(halo_ops_ctx *ctx, size_t bytes, void **out);
    void (*host_free)(halo_ops_ctx *ctx, void *p);
    /* Workspace: bump allocation from a pool that ws_reset empties (no free per buffer). Reset
     * only when no queued operation uses the workspace any more (after sync). */
    void (*ws_reset)(halo_ops_ctx *ctx);
    int (*ws_alloc)(halo_ops_ctx *ctx, size_t bytes, void **out);
    /* Makes host data visible to the device: CPU returns host itself; GPU copies it into the
     * workspace (asynchronously; host must stay unchanged until sync). */
    int (*to_dev)(halo_ops_ctx *ctx, const void *host, size_t bytes, const void **out);
    /* Copies between host and device (asynchronous on GPU; same-pointer copies are skipped). */
    int (*h2d)(halo_ops_ctx *ctx, void *dev, const void *host, size_t bytes);
    int (*d2h)(halo_ops_ctx *ctx, void *host, const void *dev, size_t bytes);
    int (*sync)(halo_ops_ctx *ctx);

    /* The copy queue (docs/pipeline.md, the copy stage): host-to-device copies on a queue of
     * their own (GPU: a second CUDA stream), ordered against the compute queue (the one of every
     * other operation) by events only. These may be called from another thread than the compute
     * operations (one thread at a time for the copy queue). CPU: copies are memcpy (skipped when
     * dev == host), events do nothing, since every operation has finished when it returns. */
    int (*event_new)(halo_ops_ctx *ctx, halo_ops_event **out);
    void (*event_free)(halo_ops_ctx *ctx, halo_ops_event *ev);
    /* Queues a copy on the copy queue; host should be host_alloc memory (pinned: the copy is
     * asynchronous) and must stay unchanged until an event recorded after it has completed. */
    int (*copy_h2d)(halo_ops_ctx *ctx, void *dev, const void *host, size_t bytes);
    /* Records ev on the copy queue (copy != 0) or the compute queue: ev completes when all work
     * queued there before it has. */
    int (*record)(halo_ops_ctx *ctx, halo_ops_event *ev, int copy);
    /* Work queued next on the copy queue (copy != 0) or the compute queue waits for ev (the host
     * does not wait). An event never recorded counts as completed. */
    int (*wait)(halo_ops_ctx *ctx, halo_ops_event *ev, int copy);
    /* The host waits for ev. */
    int (*event_sync)(halo_ops_ctx *ctx, halo_ops_event *ev);
    /* 1 when p points into pinned (page-locked) host memory, else 0 (CPU: always 0). */
    int (*host_pinned)(halo_ops_ctx *ctx, const void *p);

    /* C = alpha op(A) op(B) + beta C with op(X) = X or X^T (ta, tb nonzero: transposed); C is
     * m x n, the inner dimension k; lda, ldb, ldc are row strides. */
    int (*gemm)(halo_ops_ctx *ctx, int ta, int tb, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
    /* x[r, 0..cols) = 0 for r < rows, row stride ld. */
    int (*zero)(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld);
    /* dst[r, 0..cols) = src[r, 0..cols) for r < rows (strides ld_dst, ld_src). */
    int (*copy_rows)(halo_ops_ctx *ctx, float *dst, int ld_dst, const float *src, int ld_src,
                     int64_t rows, int cols);
    /* Mean over in-neighbours: out[i] = (accumulate ? out[i] : 0) + (1/deg i) sum_{e in
     * indptr[i]..indptr[i+1]} src[indices[e]] (zero when deg i = 0), for i < num_dst. */
    int (*agg_mean)(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                    const int32_t *indices, int dim, const float *src, int ld_src, float *out,
                    int ld_out, int accumulate);
    /* Backward of agg_mean: d_src[u] = (u < keep_rows ? d_src[u] : 0) + sum over edges (i, u)
     * of d_out[i] / deg i, for u < num_src: keep_rows = num_src accumulates into every row, 0
     * overwrites them all, num_dst adds to the destinations' rows (a layer's self term, already
     * there) and writes the others (no separate zeroing pass). act (may be NULL): then
     * act_backward(d_src, act->y, num_src, dim, ld_src, act->p, act->db) follows, bitwise, in
     * the same pass over d_src. */
    int (*agg_mean_backward)(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                             int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                             int dim, const float *d_out, int ld_out, float *d_src, int ld_src,
                             int32_t keep_rows, const halo_ops_act_grad *act);
    /* x = act(x + b) in place over rows x cols (stride ld): act is the identity when relu is 0,
     * else ReLU followed by dropout (drop may be NULL or have p = 0: no dropout). */
    int (*bias_act)(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld, const float *b,
                    int relu, const halo_ops_dropout *drop);
    /* gemm (not transposed, alpha 1) followed by bias_act on C, as the two calls give it:
     * C = act(A B + beta C + b). The CPU applies the activation to each block of C's rows right
     * after computing it, while it is in cache. */
    int (*gemm_bias_act)(halo_ops_ctx *ctx, int m, int n, int k, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc,
                         const float *bias, int relu, const halo_ops_dropout *drop);
    /* Backward of bias_act with relu from its output y: dx = dy * (y > 0) / (1 - p), in place;
     * when db is not NULL, also db = col_sum(dx) (the same sums as col_sum, in one pass). */
    int (*act_backward)(halo_ops_ctx *ctx, float *dy, const float *y, int64_t rows, int cols,
                        int ld, float p, float *db);
    /* db[j] = sum_r dy[r, j] (the bias gradient); overwrites db. */
    int (*col_sum)(halo_ops_ctx *ctx, const float *dy, int64_t rows, int cols, int ld,
                   float *db);
    /* Softmax cross-entropy per row: row_loss[r] = logsumexp(x[r]) - x[r, labels[r]],
     * pred[r] = arg-max (first on ties; always in [0, classes), also for a row with NaNs); when dx is not NULL, dx = (softmax(x) - onehot) * scale.
     * labels may be NULL (no loss, no dx). */
    int (*softmax_xent)(halo_ops_ctx *ctx, const float *x, int32_t rows, int classes,
                        const int32_t *labels, float scale, float *dx, float *row_loss,
                        int32_t *pred);
    /* One Adam update of n parameters p with gradients g and moments m, v. */
    int (*adam)(halo_ops_ctx *ctx, float *p, const float *g, float *m, float *v, size_t n,
                const halo_ops_adam *hp);

    /* ---- GAT attention (model/gat.c; DGL's GATConv). z holds rows of H heads x F floats,
     * contiguous (row stride H*F); per-head scalars (scores, attention) are [rows x H]. The
     * block's CSR starts at edge 0 (indptr[0] = 0); edge arrays are indexed by edge number. */
    /* s[r, h] = sum_f z[r, h*F + f] a[h*F + f] for r < rows (a layer's a_l or a_r score). */
    int (*gat_score)(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim, const float *z,
                     const float *a, float *s);
    /* For each destination i < num_dst and head h, over its edges e (source j = indices[e]):
     * alpha[e, h] = softmax_e LeakyReLU(el[j, h] + er[i, h], slope), and
     * out[i, h*F + f] = sum_e alpha[e, h] z[j, h*F + f]; a row without edges is zero. */
    int (*gat_aggregate)(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                         const int32_t *indices, int heads, int fdim, const float *z,
                         const float *el, const float *er, float slope, float *alpha, float *out);
    /* Backward of gat_aggregate through the softmax and the LeakyReLU, per destination: with
     * g[e, h] = d_out[i, h*F..] . z[j, h*F..], d_raw[e, h] = alpha[e, h] (g[e, h] - sum_e'
     * alpha[e', h] g[e', h]) * (raw > 0 ? 1 : slope) where raw = el[j, h] + er[i, h], and
     * d_er[i, h] = sum_e d_raw[e, h] (0 without edges). */
    int (*gat_edge_backward)(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                             const int32_t *indices, int heads, int fdim, const float *z,
                             const float *el, const float *er, float slope, const float *alpha,
                             const float *d_out, float *d_raw, float *d_er);
    /* The gradient of z, per source u < num_src (written): d_el[u, h] = sum over edges e = (i,
     * u) of d_raw[e, h]; dz[u, h*F + f] = sum_e alpha[e, h] d_out[i, h*F + f] + d_el[u, h]
     * a_l[h*F + f] (+ d_er[u, h] a_r[h*F + f] when u < num_dst: destinations are the first
     * sources). */
    int (*gat_src_backward)(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src, int64_t num_edges,
                            const int64_t *indptr, const int32_t *indices, int heads, int fdim,
                            const float *alpha, const float *d_out, const float *d_raw,
                            const float *d_er, const float *a_l, const float *a_r, float *dz,
                            float *d_el);
    /* Backward of gat_score for a: d_a[h*F + f] = sum_r d_s[r, h] z[r, h*F + f] (written). */
    int (*gat_score_backward)(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim, const float *z,
                              const float *d_s, float *d_a);
} halo_ops;

/* The CPU back end (always built). */
extern const halo_ops halo_ops_cpu;
/* OpenBLAS chooses its kernels from the CPU model when it is loaded; a CPU newer than the library
 * (an unknown model) gets the generic Prescott (SSE3) kernels, sgemm 4-7x below what the CPU's
 * AVX2 / AVX-512 units give. Called first thing in main (before MPI starts, before any thread):
 * when OPENBLAS_CORETYPE is unset and the kernels OpenBLAS chose use no AVX2 while the CPU has
 * it, re-executes the program (/proc/self/exe, same arguments) with OPENBLAS_CORETYPE set to
 * SkylakeX (AVX-512 F/BW/DQ/VL) or Haswell (AVX2 + FMA). Returns only when nothing is to be done
 * or the re-exec failed. HALO_BLAS_KEEP=1 keeps OpenBLAS's own choice. */
void halo_blas_pick_kernels(char **argv);
/* The OpenBLAS kernels in use (its core name, e.g. "SkylakeX"). */
const char *halo_blas_kernels(void);

/* Totals over every GEMM the CPU back end ran in this process (all contexts): thread-seconds
 * spent inside OpenBLAS calls (and the k split's reductions), summed over the threads, and their
 * FLOPs (2 m n k each). For benchmarks: the difference of two readings around a step, divided by
 * the threads, is the step's GEMM time. */
void halo_ops_cpu_gemm_totals(double *thread_seconds, double *flops);

/* The CUDA back end, a shared object (lib/halo/libhalo_cuda.so, built from ops_cuda.cu) that
 * ops_cuda_load.c opens with dlopen on the first call of one of these two, so that a CPU run never
 * maps the CUDA libraries. The file is $HALO_CUDA_LIB when set, else ../lib/halo/ beside the
 * executable, else the build tree's. Without an NVIDIA driver (and HALO_CUDA_LIB unset) nothing is
 * loaded. The table: NULL when no back end could be loaded. */
const halo_ops *halo_ops_cuda_table(void);
/* Number of CUDA devices; 0 when none, no driver, no back end (missing or broken shared object)
 * or no CUDA support, and then *why (if not NULL) says why in one line. */
int halo_ops_cuda_device_count(const char **why);
/* 1 once the back end's shared object is loaded in this process (tests: a CPU run never). */
int halo_ops_cuda_loaded(void);

/* What the back end's shared object exports under HALO_OPS_CUDA_SYMBOL; the loader refuses one
 * whose abi or ops_size differs (a back end of another halo version). */
#define HALO_OPS_CUDA_ABI 1
#define HALO_OPS_CUDA_SYMBOL "halo_ops_cuda_plugin_v1"
typedef struct halo_ops_cuda_plugin {
    int abi;                              /* HALO_OPS_CUDA_ABI of the build */
    size_t ops_size;                      /* sizeof(halo_ops) of the build */
    const halo_ops *ops;                  /* the operations */
    int (*device_count)(const char **why); /* as halo_ops_cuda_device_count */
} halo_ops_cuda_plugin;

#ifdef __cplusplus
}
#endif

#endif
