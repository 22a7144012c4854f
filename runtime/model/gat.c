/* GAT layers over the table of operations: z = h W by one GEMM over all sources, the attention
 * scores per row, the per-destination softmax and weighted sum (gat_aggregate), bias and
 * activation; the backward in the reverse order. */
#include "model/gat.h"

#include "core/err.h"
#include "core/rng.h"

#include <math.h>
#include <string.h>

size_t halo_gat_al_at(const halo_gat_shape *s)
{
    return (size_t)s->in * s->heads * s->fdim;
}

size_t halo_gat_ar_at(const halo_gat_shape *s)
{
    return halo_gat_al_at(s) + (size_t)s->heads * s->fdim;
}

size_t halo_gat_bias_at(const halo_gat_shape *s)
{
    return halo_gat_ar_at(s) + (size_t)s->heads * s->fdim;
}

size_t halo_gat_floats(const halo_gat_shape *s)
{
    return halo_gat_bias_at(s) + (size_t)s->heads * s->fdim;
}

/* n draws of U(-a, a) from stream (seed, HALO_RNG_INIT, layer, which, 0). */
static void xavier(float *w, size_t n, double a, uint64_t seed, int layer, uint64_t which)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_INIT, (uint64_t)layer, which, 0);
    for (size_t e = 0; e < n; e++) {
        w[e] = (float)((2.0 * halo_rng_uniform(&r) - 1.0) * a);
    }
}

void halo_gat_init(const halo_gat_shape *s, uint64_t seed, int layer, float *w)
{
    size_t hf = (size_t)s->heads * s->fdim;
    xavier(w, (size_t)s->in * hf, sqrt(2.0) * sqrt(6.0 / (double)(s->in + (double)hf)), seed, layer,
           0);
    double aa = sqrt(2.0) * sqrt(6.0 / ((double)hf + s->fdim));
    xavier(w + halo_gat_al_at(s), hf, aa, seed, layer, 1);
    xavier(w + halo_gat_ar_at(s), hf, aa, seed, layer, 2);
    memset(w + halo_gat_bias_at(s), 0, hf * sizeof(float));
}

/* Workspace for n floats (at least one, so that an empty block still gets a pointer). */
static int ws_floats(const halo_ops *ops, halo_ops_ctx *ctx, size_t n, float **out)
{
    void *p;
    HALO_CHECK(ops->ws_alloc(ctx, (n > 0 ? n : 1) * sizeof(float), &p));
    *out = p;
    return 0;
}

void halo_gat_mean_csr(int64_t rows, int heads, int64_t *ptr, int32_t *idx)
{
    for (int64_t i = 0; i <= rows; i++) {
        ptr[i] = i * heads;
    }
    for (int64_t e = 0; e < rows * heads; e++) {
        idx[e] = (int32_t)e;
    }
}

int halo_gat_forward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_gat_shape *s,
                     const float *w, const halo_block *b, const float *h, const int64_t *indptr,
                     const int32_t *indices, int relu, const halo_ops_dropout *drop,
                     const int64_t *mptr, const int32_t *midx, halo_gat_state *st)
{
    int H = s->heads, F = s->fdim, HF = H * F;
    int32_t nd = b->num_dst, ns = b->num_src;
    st->h = h;
    st->indptr = indptr;
    st->indices = indices;
    st->mptr = mptr;
    st->midx = midx;
    HALO_CHECK(ws_floats(ops, ctx, (size_t)ns * HF, &st->z));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)ns * H, &st->el));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)nd * H, &st->er));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)b->num_edges * H, &st->alpha));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)nd * HF, &st->y));
    HALO_CHECK(ops->gemm(ctx, 0, 0, ns, HF, s->in, 1.0f, h, s->in, w, HF, 0.0f, st->z, HF));
    HALO_CHECK(ops->gat_score(ctx, ns, H, F, st->z, w + halo_gat_al_at(s), st->el));
    HALO_CHECK(ops->gat_score(ctx, nd, H, F, st->z, w + halo_gat_ar_at(s), st->er));
    HALO_CHECK(ops->gat_aggregate(ctx, nd, indptr, indices, H, F, st->z, st->el, st->er,
                                  HALO_GAT_SLOPE, st->alpha, st->y));
    HALO_CHECK(ops->bias_act(ctx, st->y, nd, HF, HF, w + halo_gat_bias_at(s), relu, drop));
    if (mptr == NULL) {
        return 0;
    }
    /* the heads' mean: one agg_mean over the [nd*H x F] rows of the heads */
    float *heads = st->y;
    HALO_CHECK(ws_floats(ops, ctx, (size_t)nd * F, &st->y));
    return ops->agg_mean(ctx, nd, mptr, midx, F, heads, F, st->y, F, 0);
}

int halo_gat_backward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_gat_shape *s,
                      const float *w, float *gw, const halo_block *b, const halo_gat_state *st,
                      float *dy, int relu, float drop_p, float **dh)
{
    int H = s->heads, F = s->fdim, HF = H * F;
    int32_t nd = b->num_dst, ns = b->num_src;
    if (st->mptr != NULL) {
        /* through the heads' mean: each head's rows get dy / H */
        float *dheads;
        HALO_CHECK(ws_floats(ops, ctx, (size_t)nd * HF, &dheads));
        HALO_CHECK(ops->agg_mean_backward(ctx, nd, nd * H, (int64_t)nd * H, st->mptr, st->midx, F,
                                          dy, F, dheads, F, 0, NULL));
        dy = dheads;
    }
    if (relu) {
        HALO_CHECK(ops->act_backward(ctx, dy, st->y, nd, HF, HF, drop_p, gw + halo_gat_bias_at(s)));
    } else {
        HALO_CHECK(ops->col_sum(ctx, dy, nd, HF, HF, gw + halo_gat_bias_at(s)));
    }
    float *d_raw, *d_er, *d_el, *dz;
    HALO_CHECK(ws_floats(ops, ctx, (size_t)b->num_edges * H, &d_raw));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)nd * H, &d_er));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)ns * H, &d_el));
    HALO_CHECK(ws_floats(ops, ctx, (size_t)ns * HF, &dz));
    HALO_CHECK(ops->gat_edge_backward(ctx, nd, st->indptr, st->indices, H, F, st->z, st->el, st->er,
                                      HALO_GAT_SLOPE, st->alpha, dy, d_raw, d_er));
    HALO_CHECK(ops->gat_src_backward(ctx, nd, ns, b->num_edges, st->indptr, st->indices, H, F,
                                     st->alpha, dy, d_raw, d_er, w + halo_gat_al_at(s),
                                     w + halo_gat_ar_at(s), dz, d_el));
    HALO_CHECK(ops->gat_score_backward(ctx, ns, H, F, st->z, d_el, gw + halo_gat_al_at(s)));
    HALO_CHECK(ops->gat_score_backward(ctx, nd, H, F, st->z, d_er, gw + halo_gat_ar_at(s)));
    /* dW = h^T dz; dh = dz W^T */
    HALO_CHECK(ops->gemm(ctx, 1, 0, s->in, HF, ns, 1.0f, st->h, s->in, dz, HF, 0.0f, gw, HF));
    if (dh == NULL) {
        return 0;
    }
    float *dx;
    HALO_CHECK(ws_floats(ops, ctx, (size_t)ns * s->in, &dx));
    HALO_CHECK(ops->gemm(ctx, 0, 1, ns, s->in, HF, 1.0f, dz, HF, w, HF, 0.0f, dx, s->in));
    *dh = dx;
    return 0;
}

double halo_gat_gemm_flops(const halo_gat_shape *s, double num_dst, double num_src, int dx)
{
    (void)num_dst;
    double hf = (double)s->heads * s->fdim;
    /* z = h W forward, dW = h^T dz, and dh = dz W^T when the input needs a gradient */
    return 2.0 * num_src * s->in * hf * (2.0 + (dx ? 1.0 : 0.0));
}

double halo_gat_flops(const halo_gat_shape *s, double num_edges, double num_dst, double num_src,
                      int dx)
{
    double H = s->heads, F = s->fdim;
    /* per row and head: the two scores forward (2F each) and backward (2F each, and the dz terms
     * 2F each); per edge and head: score, LeakyReLU, exp and normalisation (5) and the weighted
     * sum (2F) forward, the dot product (2F), the softmax's backward (5) and the scattered sum
     * (2F) backward */
    double rows = (num_src + num_dst) * H * 6.0 * F;
    double edges = num_edges * H * (4.0 * F + 10.0 + 2.0 * F);
    return halo_gat_gemm_flops(s, num_dst, num_src, dx) + rows + edges;
}
