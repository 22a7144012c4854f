/* RGCN layers over the table of operations: per-relation means as one agg_mean over a CSR of
 * (destination, relation) pairs, then two GEMMs (self loop and the stacked relation weights). */
#include "model/rgcn.h"

#include "core/err.h"
#include "core/rng.h"

#include <math.h>
#include <string.h>

size_t halo_rgcn_coef_at(const halo_rgcn_shape *s)
{
    size_t mats = 1 + (size_t)(s->B > 0 ? s->B : s->R);
    return mats * (size_t)s->in * s->out;
}

size_t halo_rgcn_bias_at(const halo_rgcn_shape *s)
{
    return halo_rgcn_coef_at(s) + (s->B > 0 ? (size_t)s->R * s->B : 0);
}

size_t halo_rgcn_floats(const halo_rgcn_shape *s)
{
    return halo_rgcn_bias_at(s) + (size_t)s->out;
}

/* n draws of U(-a, a) from stream (seed, HALO_RNG_INIT, layer, which, c). */
static void xavier(float *w, size_t n, double a, uint64_t seed, int layer, uint64_t which,
                   uint64_t c)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_INIT, (uint64_t)layer, which, c);
    for (size_t e = 0; e < n; e++) {
        w[e] = (float)((2.0 * halo_rng_uniform(&r) - 1.0) * a);
    }
}

void halo_rgcn_init(const halo_rgcn_shape *s, uint64_t seed, int layer, float *w)
{
    size_t io = (size_t)s->in * s->out;
    double a = sqrt(2.0) * sqrt(6.0 / (double)(s->in + s->out));
    int mats = s->B > 0 ? s->B : s->R;
    for (int k = 0; k <= mats; k++) {
        xavier(w + (size_t)k * io, io, a, seed, layer, (uint64_t)k, 0);
    }
    if (s->B > 0) {
        double ac = sqrt(2.0) * sqrt(6.0 / (double)(s->R + s->B));
        xavier(w + halo_rgcn_coef_at(s), (size_t)s->R * s->B, ac, seed, layer, 0, 1);
    }
    memset(w + halo_rgcn_bias_at(s), 0, (size_t)s->out * sizeof(float));
}

void halo_rgcn_relation_csr(const halo_block *b, int R, int64_t *vptr, int32_t *vidx, int64_t *cnt)
{
    int64_t pos = 0;
    vptr[0] = 0;
    for (int32_t i = 0; i < b->num_dst; i++) {
        int64_t e0 = b->indptr[i], e1 = b->indptr[i + 1];
        memset(cnt, 0, (size_t)R * sizeof *cnt);
        for (int64_t e = e0; e < e1; e++) {
            cnt[b->etype != NULL ? b->etype[e] : 0]++;
        }
        /* cnt[r] becomes the write position of relation r's next edge */
        for (int r = 0; r < R; r++) {
            int64_t c = cnt[r];
            cnt[r] = pos;
            pos += c;
            vptr[(int64_t)i * R + r + 1] = pos;
        }
        for (int64_t e = e0; e < e1; e++) {
            vidx[cnt[b->etype != NULL ? b->etype[e] : 0]++] = b->indices[e];
        }
    }
}

int halo_rgcn_forward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_rgcn_shape *s,
                      const float *w, const halo_block *b, const float *h, const int64_t *vptr,
                      const int32_t *vidx, int relu, const halo_ops_dropout *drop,
                      halo_rgcn_state *st)
{
    int in = s->in, out = s->out, R = s->R;
    int32_t nd = b->num_dst;
    size_t io = (size_t)in * out;
    if ((int64_t)nd * R > INT32_MAX || (int64_t)R * in > INT32_MAX) {
        return halo_errorf(HALO_EUSAGE,
                           "model: rgcn block of %d destinations x %d relations "
                           "is too large",
                           nd, R);
    }
    void *p;
    st->h = h;
    st->vptr = vptr;
    st->vidx = vidx;
    if (s->B > 0) {
        /* W_r = sum_b a[r][b] V_b: (R x B) x (B x in*out) */
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)R * io * sizeof(float), &p));
        HALO_CHECK(ops->gemm(ctx, 0, 0, R, (int)io, s->B, 1.0f, w + halo_rgcn_coef_at(s), s->B,
                             w + io, (int)io, 0.0f, p, (int)io));
        st->wr = p;
    } else {
        st->wr = w + io;
    }
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * R * in * sizeof(float), &p));
    st->mean = p;
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * out * sizeof(float), &p));
    st->y = p;
    HALO_CHECK(ops->agg_mean(ctx, nd * R, vptr, vidx, in, h, in, st->mean, in, 0));
    HALO_CHECK(ops->gemm(ctx, 0, 0, nd, out, in, 1.0f, h, in, w, out, 0.0f, st->y, out));
    return ops->gemm_bias_act(ctx, nd, out, R * in, st->mean, R * in, st->wr, out, 1.0f, st->y,
                              out, w + halo_rgcn_bias_at(s), relu, drop);
}

int halo_rgcn_backward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_rgcn_shape *s,
                       const float *w, float *gw, const halo_block *b, const halo_rgcn_state *st,
                       float *dy, int relu, float drop_p, float **dh)
{
    int in = s->in, out = s->out, R = s->R;
    int32_t nd = b->num_dst, ns = b->num_src;
    size_t io = (size_t)in * out;
    void *p;
    if (relu) {
        HALO_CHECK(
            ops->act_backward(ctx, dy, st->y, nd, out, out, drop_p, gw + halo_rgcn_bias_at(s)));
    } else {
        HALO_CHECK(ops->col_sum(ctx, dy, nd, out, out, gw + halo_rgcn_bias_at(s)));
    }
    /* dW_self = h_dst^T dy; dW_rel = mean^T dy (R*in x out) */
    HALO_CHECK(ops->gemm(ctx, 1, 0, in, out, nd, 1.0f, st->h, in, dy, out, 0.0f, gw, out));
    float *gwr = gw + io;
    if (s->B > 0) {
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)R * io * sizeof(float), &p));
        gwr = p;
    }
    HALO_CHECK(
        ops->gemm(ctx, 1, 0, R * in, out, nd, 1.0f, st->mean, R * in, dy, out, 0.0f, gwr, out));
    if (s->B > 0) {
        /* W = A V with A (R x B), V (B x in*out): dV = A^T dW, dA = dW V^T */
        const float *coef = w + halo_rgcn_coef_at(s);
        HALO_CHECK(ops->gemm(ctx, 1, 0, s->B, (int)io, R, 1.0f, coef, s->B, gwr, (int)io, 0.0f,
                             gw + io, (int)io));
        HALO_CHECK(ops->gemm(ctx, 0, 1, R, s->B, (int)io, 1.0f, gwr, (int)io, w + io, (int)io, 0.0f,
                             gw + halo_rgcn_coef_at(s), s->B));
    }
    if (dh == NULL) {
        return 0;
    }
    float *dx, *dmean;
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * in * sizeof(float), &p));
    dx = p;
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * R * in * sizeof(float), &p));
    dmean = p;
    /* dmean = dy W_rel^T; dx_dst = dy W_self^T; then the means' gradients flow to the sources */
    HALO_CHECK(
        ops->gemm(ctx, 0, 1, nd, R * in, out, 1.0f, dy, out, st->wr, out, 0.0f, dmean, R * in));
    HALO_CHECK(ops->gemm(ctx, 0, 1, nd, in, out, 1.0f, dy, out, w, out, 0.0f, dx, in));
    /* the destinations' rows hold their self term: added to; the other sources' rows written */
    HALO_CHECK(ops->agg_mean_backward(ctx, nd * R, ns, b->num_edges, st->vptr, st->vidx, in, dmean,
                                      in, dx, in, nd, NULL));
    *dh = dx;
    return 0;
}

double halo_rgcn_flops(const halo_rgcn_shape *s, const halo_block *b, int dx)
{
    double in = s->in, out = s->out, R = s->R, e = (double)b->num_edges, nd = b->num_dst;
    double mm = 2.0 * nd * in * out; /* one (nd x in) x (in x out) product */
    double basis = s->B > 0 ? 2.0 * R * s->B * in * out : 0.0;
    double f = e * in + mm * (1 + R) + basis;         /* forward */
    f += mm * (1 + R) + (s->B > 0 ? 2 * basis : 0.0); /* weight gradients */
    if (dx) {
        f += mm * (1 + R) + e * in;
    }
    return f;
}
