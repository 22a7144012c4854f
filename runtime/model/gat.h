/* GAT layers (DGL's GATConv: multi-head attention over a block's sampled in-edges, LeakyReLU 0.2,
 * softmax per destination and head, no self loop added), written over the table of operations;
 * internal to model/ (the public API is model.h, whose halo_model stacks these layers when
 * cfg.kind is HALO_MODEL_GAT). */
#ifndef HALO_MODEL_GAT_H
#define HALO_MODEL_GAT_H

#include "model/ops.h"
#include "sample/block.h"

#include <stddef.h>
#include <stdint.h>

/* The LeakyReLU slope of the attention scores (DGL's GATConv default). */
#define HALO_GAT_SLOPE 0.2f

/* Shape of one GAT layer: in -> heads x fdim (hidden layers concatenate their heads; the output
 * layer averages its heads, so its output is fdim = classes wide). */
typedef struct halo_gat_shape {
    int in;    /* input width */
    int heads; /* attention heads H */
    int fdim;  /* output floats per head F */
} halo_gat_shape;

/* Layout of a layer's parameters from its start: W (in x H*F, row-major) at 0, a_l (H*F: head h's
 * F floats at h*F) at halo_gat_al_at, a_r at halo_gat_ar_at, the bias (H*F) at halo_gat_bias_at;
 * halo_gat_floats in all. */
size_t halo_gat_al_at(const halo_gat_shape *s);
size_t halo_gat_ar_at(const halo_gat_shape *s);
size_t halo_gat_bias_at(const halo_gat_shape *s);
size_t halo_gat_floats(const halo_gat_shape *s);

/* Xavier/Glorot uniform with the ReLU gain (as DGL's GATConv.reset_parameters, which draws from
 * the normal of the same variance): W ~ U(-a, a), a = sqrt(2) sqrt(6 / (in + H*F)), stream
 * (seed, HALO_RNG_INIT, layer, 0, 0); a_l and a_r (DGL's (1, H, F) tensors: fan-in H*F, fan-out
 * F) ~ U(-a', a'), a' = sqrt(2) sqrt(6 / (H*F + F)), streams (..., layer, 1, 0) and (..., 2, 0);
 * bias zero. w points at the layer's first float. */
void halo_gat_init(const halo_gat_shape *s, uint64_t seed, int layer, float *w);

/* What a layer's forward pass keeps for its backward pass (device pointers). */
typedef struct halo_gat_state {
    const float *h;         /* input rows [num_src x in] */
    float *z;               /* h W [num_src x H*F] */
    float *el, *er;         /* scores [num_src x H] (a_l) and [num_dst x H] (a_r) */
    float *alpha;           /* attention [num_edges x H] */
    float *y;               /* output after bias and activation [num_dst x H*F], or the heads'
                               mean [num_dst x F] */
    const int64_t *indptr;  /* block CSR on the device */
    const int32_t *indices; /* its sources on the device */
    const int64_t *mptr;    /* the heads' mean as a CSR (row i: rows i*H.. i*H+H-1 of the
                               [num_dst*H x F] heads), or NULL: heads concatenated */
    const int32_t *midx;    /* its sources 0..num_dst*H-1 */
} halo_gat_state;

/* y = act(concat_h sum_e alpha_eh z_j,h + b) on block b with input rows h and its CSR on the
 * device; w the layer's parameters on the device; relu: ReLU then drop (may be NULL). mptr/midx
 * (device; NULL: none): y = the mean over heads of (sum_e alpha_eh z_j,h + b_h) instead, the
 * CSR of halo_gat_mean_csr (no activation then). Workspace buffers go into st. */
int halo_gat_forward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_gat_shape *s,
                     const float *w, const halo_block *b, const float *h, const int64_t *indptr,
                     const int32_t *indices, int relu, const halo_ops_dropout *drop,
                     const int64_t *mptr, const int32_t *midx, halo_gat_state *st);

/* The CSR that averages H heads with agg_mean: rows rows, row i over sources i*H..i*H+H-1 of a
 * [rows*H x F] matrix; ptr holds rows + 1 entries, idx rows*H. A prefix of a longer one is the
 * shorter one. */
void halo_gat_mean_csr(int64_t rows, int heads, int64_t *ptr, int32_t *idx);

/* Backward of halo_gat_forward: dy (device, [num_dst x H*F], gradient w.r.t. the output after
 * the activation; overwritten) gives the parameter gradients in gw (the layer's slice of the
 * gradient buffer, written) and, when dh is not NULL, the gradient w.r.t. the input rows in *dh
 * (workspace, [num_src x in]). relu and drop_p as in the forward pass. */
int halo_gat_backward(const halo_ops *ops, halo_ops_ctx *ctx, const halo_gat_shape *s,
                      const float *w, float *gw, const halo_block *b, const halo_gat_state *st,
                      float *dy, int relu, float drop_p, float **dh);

/* Floating-point operations of one forward + backward of the layer on b (dx: with the input
 * gradient): the GEMMs by shape, and the attention's per-edge work (per head: the score, the
 * softmax and the weighted sum forward; the dot product, the softmax backward and the scattered
 * sum backward). */
double halo_gat_flops(const halo_gat_shape *s, double num_edges, double num_dst, double num_src,
                      int dx);
/* The GEMM part of halo_gat_flops alone (the rest is per-edge attention work). */
double halo_gat_gemm_flops(const halo_gat_shape *s, double num_dst, double num_src, int dx);

#endif
