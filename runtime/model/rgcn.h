/* RGCN layers (DGL's RelGraphConv with the mean per relation, a self loop and optional basis
 * decomposition), written over the table of operations; internal to model/ (the public API is
 * model.h, whose halo_model stacks these layers when cfg.kind is HALO_MODEL_RGCN). */
#ifndef HALO_MODEL_RGCN_H
#define HALO_MODEL_RGCN_H

#include "model/ops.h"
#include "sample/block.h"

#include <stddef.h>
#include <stdint.h>

/* Shape of one RGCN layer. */
typedef struct halo_rgcn_shape {
    int in, out; /* input and output widths */
    int R;       /* relations (>= 1) */
    int B;       /* bases (0: one weight per relation) */
} halo_rgcn_shape;

/* Layout of a layer's parameters from its start: W_self (in x out) at 0; W_r or V_b (in x out
 * each) at in*out; with bases the coefficients (R x B) at halo_rgcn_coef_at; the bias (out) at
 * halo_rgcn_bias_at; halo_rgcn_floats in all. */
size_t halo_rgcn_coef_at(const halo_rgcn_shape *s);
size_t halo_rgcn_bias_at(const halo_rgcn_shape *s);
size_t halo_rgcn_floats(const halo_rgcn_shape *s);

/* Xavier/Glorot uniform with the ReLU gain for W_self and every W_r or V_b (U(-a, a), a =
 * sqrt(2) sqrt(6 / (in + out))), and for the coefficients (a = sqrt(2) sqrt(6 / (R + B))); bias
 * zero. Draw e of stream (seed, HALO_RNG_INIT, layer, 0, 0) is element e of W_self, of (seed,
 * HALO_RNG_INIT, layer, 1 + r, 0) element e of W_r (or V_r), of (seed, HALO_RNG_INIT, layer, 0, 1)
 * element e of the coefficients. w points at the layer's first float. */
void halo_rgcn_init(const halo_rgcn_shape *s, uint64_t seed, int layer, float *w);

/* The block's edges regrouped by relation: a CSR over num_dst * R virtual destinations, virtual
 * destination i*R + r listing the sources of dst i's edges of relation r in block order, so the
 * per-relation means are one agg_mean over it. etype NULL: every edge is relation 0. vptr holds
 * num_dst*R + 1 entries, vidx num_edges, cnt R (scratch). */
void halo_rgcn_relation_csr(const halo_block *b, int R, int64_t *vptr, int32_t *vidx, int64_t *cnt);

/* What a layer's forward pass keeps for its backward pass (device pointers). */
typedef struct halo_rgcn_state {
    const float *h;      /* input rows [num_src x in] */
    const float *wr;     /* the relations' weights [R*in x out] (materialised from bases) */
    float *mean;         /* per-relation means [num_dst x R*in] */
    float *y;            /* output after bias and activation [num_dst x out] */
    const int64_t *vptr; /* relation CSR (halo_rgcn_relation_csr) on the device */
    const int32_t *vidx; /* its sources on the device */
} halo_rgcn_state;

/* y = act(h_dst W_self + sum_r mean_r W_r + b) on block b (num_dst, num_src, num_edges read) with
 * input rows h and the relation CSR vptr/vidx on the device; w the layer's parameters on the
 * device; relu: ReLU then drop (may be NULL). Workspace buffers go into st. */
int halo_rgcn_forward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_rgcn_shape *s,
                      const float *w, const halo_block *b, const float *h, const int64_t *vptr,
                      const int32_t *vidx, int relu, const halo_ops_dropout *drop,
                      halo_rgcn_state *st);

/* Backward of halo_rgcn_forward: dy (device, [num_dst x out], gradient w.r.t. the output after
 * the activation; overwritten) gives the parameter gradients in gw (the layer's slice of the
 * gradient buffer, written) and, when dh is not NULL, the gradient w.r.t. the input rows in *dh
 * (workspace, [num_src x in]). relu and drop_p as in the forward pass. */
int halo_rgcn_backward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_rgcn_shape *s,
                       const float *w, float *gw, const halo_block *b, const halo_rgcn_state *st,
                       float *dy, int relu, float drop_p, float **dh);

/* Multiply-adds x2 of one forward + backward of the layer on b (dx: with the input gradient). */
double halo_rgcn_flops(const halo_rgcn_shape *s, const halo_block *b, int dx);

#endif
