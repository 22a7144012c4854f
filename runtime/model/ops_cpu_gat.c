/* CPU back end, GAT attention (DGL's GATConv): per-row scores, the per-destination softmax and
 * weighted sum, and their backward; every output row is computed by one task in a fixed order,
 * so the results never depend on the thread count. */
#include "model/ops_cpu_impl.h"

#include "core/err.h"

#include <math.h>
#include <string.h>

/* The arguments of every GAT task (each operation reads the fields it needs). */
typedef struct gat_args {
    int64_t rows;           /* rows of the output the tasks split */
    int64_t per;            /* rows per task */
    int H, F;               /* heads and floats per head */
    const int64_t *indptr;  /* CSR over the rows (destinations, or sources when transposed) */
    const int32_t *idx;     /* forward: the edges' sources; transposed: their destinations */
    const int64_t *eid;     /* transposed: the edge number of each entry */
    const float *z;         /* [num_src x H*F] transformed rows */
    const float *el, *er;   /* [num_src x H], [num_dst x H] scores */
    float slope;            /* LeakyReLU slope */
    float *alpha;           /* [edges x H] attention */
    const float *a;         /* score vector [H*F] (gat_score) */
    float *s;               /* scores out [rows x H] (gat_score) */
    float *out;             /* [rows x H*F] aggregated rows (forward) or dz (backward) */
    const float *d_out;     /* [num_dst x H*F] gradient of the aggregated rows */
    float *d_raw;           /* [edges x H] gradient of the raw scores */
    float *d_er;            /* [num_dst x H] gradient of er */
    float *d_el;            /* [num_src x H] gradient of el (written by the source pass) */
    const float *a_l, *a_r; /* the layer's score vectors (source pass) */
    int32_t num_dst;        /* destinations (source pass: rows below it also get the er term) */
    float *partial;         /* score backward: [chunks x H*F] partial sums */
} gat_args;

/* Task range [r0, r1) of task t. */
static void task_range(const gat_args *a, int64_t t, int64_t *r0, int64_t *r1)
{
    *r0 = t * a->per;
    *r1 = *r0 + a->per < a->rows ? *r0 + a->per : a->rows;
}

CPU_HOT static void score_task(void *arg, int64_t t)
{
    const gat_args *a = arg;
    int64_t r0, r1;
    task_range(a, t, &r0, &r1);
    int HF = a->H * a->F;
    for (int64_t r = r0; r < r1; r++) {
        const float *restrict z = a->z + r * HF;
        for (int h = 0; h < a->H; h++) {
            float acc = 0.0f;
            for (int f = 0; f < a->F; f++) {
                acc += z[h * a->F + f] * a->a[h * a->F + f];
            }
            a->s[r * a->H + h] = acc;
        }
    }
}

int halo_ops_cpu_gat_score(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim, const float *z,
                           const float *a, float *s)
{
    gat_args g = {.rows = rows, .H = heads, .F = fdim, .z = z, .a = a, .s = s};
    g.per = halo_ops_cpu_rows_per_task(heads * fdim);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, g.per), score_task, &g);
    return 0;
}

/* LeakyReLU. */
static inline float lrelu(float x, float slope)
{
    return x > 0.0f ? x : slope * x;
}

/* Most heads per layer (model.c checks it): the per-head scalars of a row fit on the stack. */
#define GAT_MAX_HEADS 256

/* Destination i's softmax over its edges [e0, e1), every head at once (edges outer, so each
 * source's scores are read once), into alpha: per head, the maximum, the exponentials and
 * their sum in edge order, then the normalisation. */
static inline __attribute__((always_inline)) void softmax_edges(const gat_args *a, int64_t i,
                                                                int64_t e0, int64_t e1)
{
    int H = a->H;
    float m[GAT_MAX_HEADS], sum[GAT_MAX_HEADS];
    const float *er = a->er + i * H;
    for (int h = 0; h < H; h++) {
        m[h] = -INFINITY;
        sum[h] = 0.0f;
    }
    for (int64_t e = e0; e < e1; e++) {
        const float *el = a->el + (int64_t)a->idx[e] * H;
        float *al = a->alpha + e * H;
        for (int h = 0; h < H; h++) {
            float x = lrelu(el[h] + er[h], a->slope);
            al[h] = x;
            m[h] = x > m[h] ? x : m[h];
        }
    }
    for (int64_t e = e0; e < e1; e++) {
        float *al = a->alpha + e * H;
        for (int h = 0; h < H; h++) {
            float v = expf(al[h] - m[h]);
            al[h] = v;
            sum[h] += v;
        }
    }
    for (int h = 0; h < H; h++) {
        sum[h] = 1.0f / sum[h];
    }
    for (int64_t e = e0; e < e1; e++) {
        float *al = a->alpha + e * H;
        for (int h = 0; h < H; h++) {
            al[h] *= sum[h];
        }
    }
}

/* Each destination's row: its softmax, then the weighted sum of its sources' rows, every head
 * of a source row at once; each output element sums its edges in edge order. */
CPU_HOT static void aggregate_task(void *arg, int64_t t)
{
    const gat_args *a = arg;
    int64_t r0, r1;
    task_range(a, t, &r0, &r1);
    int H = a->H, F = a->F, HF = H * F;
    for (int64_t i = r0; i < r1; i++) {
        float *restrict o = a->out + i * HF;
        int64_t e0 = a->indptr[i], e1 = a->indptr[i + 1];
        memset(o, 0, (size_t)HF * sizeof(float));
        if (e1 == e0) {
            continue;
        }
        softmax_edges(a, i, e0, e1);
        for (int64_t e = e0; e < e1; e++) {
            const float *restrict zj = a->z + (int64_t)a->idx[e] * HF;
            const float *al = a->alpha + e * H;
            for (int h = 0; h < H; h++) {
                float w = al[h];
                for (int f = 0; f < F; f++) {
                    o[h * F + f] += w * zj[h * F + f];
                }
            }
        }
    }
}

/* Rows per task of a per-destination pass: about 32K floats touched per task. */
static int64_t edge_rows_per_task(int64_t rows, int64_t edges, int width)
{
    double per_row =
        ((double)edges / (double)(rows > 0 ? rows : 1) + 1.0) * (width > 0 ? width : 1);
    int64_t r = (int64_t)(32768.0 / per_row);
    return r > 0 ? r : 1;
}

/* HALO_EUSAGE for more heads than the per-row scratch holds. */
static int check_heads(int heads)
{
    if (heads < 1 || heads > GAT_MAX_HEADS) {
        return halo_errorf(HALO_EUSAGE, "model: gat heads must be in [1, %d], got %d",
                           GAT_MAX_HEADS, heads);
    }
    return 0;
}

int halo_ops_cpu_gat_aggregate(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                               const int32_t *indices, int heads, int fdim, const float *z,
                               const float *el, const float *er, float slope, float *alpha,
                               float *out)
{
    HALO_CHECK(check_heads(heads));
    gat_args g = {.rows = num_dst,
                  .H = heads,
                  .F = fdim,
                  .indptr = indptr,
                  .idx = indices,
                  .z = z,
                  .el = el,
                  .er = er,
                  .slope = slope,
                  .alpha = alpha,
                  .out = out};
    g.per = edge_rows_per_task(num_dst, indptr[num_dst], heads * fdim);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(num_dst, g.per), aggregate_task, &g);
    return 0;
}

/* Each destination's edges, every head at once: g = dy_i . z_j per head (the gradient of
 * alpha), then the softmax's and the LeakyReLU's backward; per head the sums run in edge order. */
CPU_HOT static void edge_backward_task(void *arg, int64_t t)
{
    const gat_args *a = arg;
    int64_t r0, r1;
    task_range(a, t, &r0, &r1);
    int H = a->H, F = a->F, HF = H * F;
    float dot[GAT_MAX_HEADS], sum[GAT_MAX_HEADS];
    for (int64_t i = r0; i < r1; i++) {
        int64_t e0 = a->indptr[i], e1 = a->indptr[i + 1];
        const float *restrict dy = a->d_out + i * HF;
        const float *er = a->er + i * H;
        for (int h = 0; h < H; h++) {
            dot[h] = 0.0f;
            sum[h] = 0.0f;
        }
        for (int64_t e = e0; e < e1; e++) {
            const float *restrict zj = a->z + (int64_t)a->idx[e] * HF;
            for (int h = 0; h < H; h++) {
                float g = 0.0f;
                for (int f = 0; f < F; f++) {
                    g += dy[h * F + f] * zj[h * F + f];
                }
                a->d_raw[e * H + h] = g;
                dot[h] += a->alpha[e * H + h] * g;
            }
        }
        for (int64_t e = e0; e < e1; e++) {
            const float *el = a->el + (int64_t)a->idx[e] * H;
            for (int h = 0; h < H; h++) {
                float raw = el[h] + er[h];
                float d = a->alpha[e * H + h] * (a->d_raw[e * H + h] - dot[h]);
                d = raw > 0.0f ? d : a->slope * d;
                a->d_raw[e * H + h] = d;
                sum[h] += d;
            }
        }
        for (int h = 0; h < H; h++) {
            a->d_er[i * H + h] = sum[h];
        }
    }
}

int halo_ops_cpu_gat_edge_backward(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                                   const int32_t *indices, int heads, int fdim, const float *z,
                                   const float *el, const float *er, float slope,
                                   const float *alpha, const float *d_out, float *d_raw,
                                   float *d_er)
{
    HALO_CHECK(check_heads(heads));
    gat_args g = {.rows = num_dst,
                  .H = heads,
                  .F = fdim,
                  .indptr = indptr,
                  .idx = indices,
                  .z = z,
                  .el = el,
                  .er = er,
                  .slope = slope,
                  .alpha = (float *)alpha,
                  .d_out = d_out,
                  .d_raw = d_raw,
                  .d_er = d_er};
    g.per = edge_rows_per_task(num_dst, indptr[num_dst], heads * fdim);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(num_dst, g.per), edge_backward_task, &g);
    return 0;
}

/* Source u's gradient: its edges (transposed CSR, ascending edge number) summed in that order,
 * every head of a destination's gradient row at once; then the scores' terms. */
CPU_HOT static void src_backward_task(void *arg, int64_t t)
{
    const gat_args *a = arg;
    int64_t r0, r1;
    task_range(a, t, &r0, &r1);
    int H = a->H, F = a->F, HF = H * F;
    float del[GAT_MAX_HEADS];
    for (int64_t u = r0; u < r1; u++) {
        float *restrict dz = a->out + u * HF;
        memset(dz, 0, (size_t)HF * sizeof(float));
        for (int h = 0; h < H; h++) {
            del[h] = 0.0f;
        }
        for (int64_t k = a->indptr[u]; k < a->indptr[u + 1]; k++) {
            int64_t e = a->eid[k];
            const float *restrict dy = a->d_out + (int64_t)a->idx[k] * HF;
            for (int h = 0; h < H; h++) {
                float w = a->alpha[e * H + h];
                del[h] += a->d_raw[e * H + h];
                for (int f = 0; f < F; f++) {
                    dz[h * F + f] += w * dy[h * F + f];
                }
            }
        }
        for (int h = 0; h < H; h++) {
            a->d_el[u * H + h] = del[h];
            const float *restrict al = a->a_l + h * F;
            for (int f = 0; f < F; f++) {
                dz[h * F + f] += del[h] * al[f];
            }
            if (u < a->num_dst) {
                float der = a->d_er[u * H + h];
                const float *restrict ar = a->a_r + h * F;
                for (int f = 0; f < F; f++) {
                    dz[h * F + f] += der * ar[f];
                }
            }
        }
    }
}

/* Transposes the block's CSR into one over sources (stable: each source lists its edges in
 * ascending edge number) in the context's scratch; HALO_EINPUT for a source out of range. */
static int transpose(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src, int64_t num_edges,
                     const int64_t *indptr, const int32_t *indices, int64_t **tptr_out,
                     int32_t **tdst_out, int64_t **teid_out)
{
    size_t need = (size_t)(num_src + 1) * sizeof(int64_t) + (size_t)num_edges * sizeof(int64_t) +
                  (size_t)num_edges * sizeof(int32_t) + 64;
    char *s = halo_ops_cpu_scratch(ctx, need);
    int64_t *tptr = (int64_t *)(void *)s;
    int64_t *teid = tptr + num_src + 1;
    int32_t *tdst = (int32_t *)(void *)(teid + num_edges);
    memset(tptr, 0, (size_t)(num_src + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < num_edges; e++) {
        int32_t u = indices[e];
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
        for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) {
            int64_t k = tptr[indices[e]]++;
            tdst[k] = i;
            teid[k] = e;
        }
    }
    for (int32_t u = num_src; u > 0; u--) {
        tptr[u] = tptr[u - 1];
    }
    tptr[0] = 0;
    *tptr_out = tptr;
    *tdst_out = tdst;
    *teid_out = teid;
    return 0;
}

int halo_ops_cpu_gat_src_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                                  int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                                  int heads, int fdim, const float *alpha, const float *d_out,
                                  const float *d_raw, const float *d_er, const float *a_l,
                                  const float *a_r, float *dz, float *d_el)
{
    HALO_CHECK(check_heads(heads));
    int64_t *tptr = NULL, *teid = NULL;
    int32_t *tdst = NULL;
    HALO_CHECK(transpose(ctx, num_dst, num_src, num_edges, indptr, indices, &tptr, &tdst, &teid));
    gat_args g = {.rows = num_src,
                  .H = heads,
                  .F = fdim,
                  .indptr = tptr,
                  .idx = tdst,
                  .eid = teid,
                  .alpha = (float *)alpha,
                  .d_out = d_out,
                  .d_raw = (float *)d_raw,
                  .d_er = (float *)d_er,
                  .a_l = a_l,
                  .a_r = a_r,
                  .out = dz,
                  .d_el = d_el,
                  .num_dst = num_dst};
    g.per = edge_rows_per_task(num_src, num_edges, heads * fdim);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(num_src, g.per), src_backward_task, &g);
    return 0;
}

/* Partial sums of chunk t (CPU_SUM_ROWS rows) of the score backward. */
CPU_HOT static void score_backward_task(void *arg, int64_t t)
{
    const gat_args *a = arg;
    int64_t r0, r1;
    task_range(a, t, &r0, &r1);
    int H = a->H, F = a->F, HF = H * F;
    float *restrict p = a->partial + t * HF;
    memset(p, 0, (size_t)HF * sizeof(float));
    for (int64_t r = r0; r < r1; r++) {
        const float *restrict z = a->z + r * HF;
        for (int h = 0; h < H; h++) {
            float ds = a->s[r * H + h];
            for (int f = 0; f < F; f++) {
                p[h * F + f] += ds * z[h * F + f];
            }
        }
    }
}

int halo_ops_cpu_gat_score_backward(halo_ops_ctx *ctx, int64_t rows, int heads, int fdim,
                                    const float *z, const float *d_s, float *d_a)
{
    int HF = heads * fdim;
    int64_t chunks = halo_ops_cpu_ntasks(rows, CPU_SUM_ROWS);
    if (chunks == 0) {
        memset(d_a, 0, (size_t)HF * sizeof(float));
        return 0;
    }
    float *partial = halo_ops_cpu_scratch(ctx, (size_t)chunks * HF * sizeof(float));
    gat_args g = {.rows = rows,
                  .per = CPU_SUM_ROWS,
                  .H = heads,
                  .F = fdim,
                  .z = z,
                  .s = (float *)d_s,
                  .partial = partial};
    halo_ops_cpu_pool_run(&ctx->pool, chunks, score_backward_task, &g);
    halo_ops_cpu_colsum_reduce(partial, chunks, HF, d_a);
    return 0;
}
