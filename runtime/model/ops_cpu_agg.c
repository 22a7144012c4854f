/* CPU back end, aggregation: the mean over a block's edges and its backward (with act_backward
 * and the bias gradient fused in), each output row summed by one task in a fixed order. */
#include "model/ops_cpu_impl.h"

#include "core/err.h"
#include "core/mem.h"

#include <string.h>

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

int halo_ops_cpu_agg_mean(halo_ops_ctx *ctx, int32_t num_dst, const int64_t *indptr,
                          const int32_t *indices, int dim, const float *src, int ld_src, float *out,
                          int ld_out, int accumulate)
{
    agg_args a = {.num_dst = num_dst,
                  .indptr = indptr,
                  .idx = indices,
                  .inv = NULL,
                  .dim = dim,
                  .in = src,
                  .ld_in = ld_src,
                  .out = out,
                  .ld_out = ld_out,
                  .keep = accumulate ? num_dst : 0};
    a.per = agg_rows_per_task(num_dst, num_dst > 0 ? indptr[num_dst] - indptr[0] : 0, dim);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(num_dst, a.per), agg_task, &a);
    return 0;
}

/* Backward of the mean: transposes the block's CSR into a CSR over sources (a stable counting
 * sort, so each source lists its destinations in ascending order), then gathers per source. The
 * sum order is fixed by the block alone, never by the thread count. */
int halo_ops_cpu_agg_mean_backward(halo_ops_ctx *ctx, int32_t num_dst, int32_t num_src,
                                   int64_t num_edges, const int64_t *indptr, const int32_t *indices,
                                   int dim, const float *d_out, int ld_out, float *d_src,
                                   int ld_src, int32_t keep_rows, const halo_ops_act_grad *act)
{
    int64_t chunks = halo_ops_cpu_ntasks(num_src, CPU_SUM_ROWS);
    size_t psize = act != NULL && act->db != NULL
                       ? (size_t)(chunks > 0 ? chunks : 1) * (size_t)dim * sizeof(float) + 64
                       : 0;
    size_t need = (size_t)(num_src + 1) * sizeof(int64_t) + (size_t)num_edges * sizeof(int32_t) +
                  (size_t)num_dst * sizeof(float) + 64 + psize;
    char *s = halo_ops_cpu_scratch(ctx, need);
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
    agg_args a = {.num_dst = num_src,
                  .indptr = tptr,
                  .idx = tdst,
                  .inv = inv,
                  .dim = dim,
                  .in = d_out,
                  .ld_in = ld_out,
                  .out = d_src,
                  .ld_out = ld_src,
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
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(num_src, a.per), agg_task, &a);
    if (act != NULL && act->db != NULL) {
        halo_ops_cpu_colsum_reduce(a.partial, chunks, dim, act->db);
    }
    return 0;
}
