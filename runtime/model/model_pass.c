/* The model's passes over a mini-batch: the layers' forward and backward (GraphSAGE here, RGCN
 * in rgcn.c, GAT in gat.c), loss and predictions, a training pass (host arrays or a stage's device
 * copies), inference, one layer by itself. */
#include "model/model.h"
#include "model/internal.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "model/ops.h"
#include "model/rgcn.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- forward / backward */

/* GAT's output layer with several heads: the CSR of their mean on the device (*ptr NULL when
 * there is one head). Built on the host into grow-only buffers of the model, whose prefixes serve
 * smaller blocks; a buffer grows only between passes (each ends with the back end's sync). */
static int gat_mean_to_dev(halo_model *m, int l, const halo_block *b, const int64_t **ptr,
                           const int32_t **idx)
{
    *ptr = NULL;
    *idx = NULL;
    int H = m->cfg.out_heads;
    if (l < m->cfg.layers - 1 || H <= 1) {
        return 0;
    }
    int64_t rows = b->num_dst;
    if ((rows + 1) * H > m->hmean_cap) {
        halo_free(m->hmean_ptr);
        halo_free(m->hmean_idx);
        int64_t cap = rows + 1 + rows / 2;
        m->hmean_ptr = HALO_ALLOC(int64_t, cap + 1);
        m->hmean_idx = HALO_ALLOC(int32_t, cap * H);
        halo_gat_mean_csr(cap, H, m->hmean_ptr, m->hmean_idx);
        m->hmean_cap = cap * H;
    }
    const void *p;
    HALO_CHECK(m->ops->to_dev(m->ctx, m->hmean_ptr, (size_t)(rows + 1) * sizeof(int64_t), &p));
    *ptr = p;
    HALO_CHECK(m->ops->to_dev(m->ctx, m->hmean_idx,
                              (size_t)(rows > 0 ? rows * H : 1) * sizeof(int32_t), &p));
    *idx = p;
    return 0;
}

/* Applies layer l to block b with input rows h (device): fills st (the output in st->y, after
 * bias and, unless last, ReLU and the dropout drop). gid_dev: destination global ids for dropout
 * (may be NULL when drop is NULL). */
static int layer_forward(halo_model *m, int l, const halo_block *b, const float *h,
                         const int64_t *indptr, const int32_t *indices,
                         const halo_ops_dropout *drop, layer_state *st)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int in = m->dims[l], out = m->dims[l + 1];
    bool last = l == m->cfg.layers - 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        halo_rgcn_shape s = halo_model_rgcn_shape(m, l);
        HALO_CHECK(halo_rgcn_forward(ops, ctx, &s, m->d_param + m->off[l], b, h, indptr, indices,
                                     !last, drop, &st->rgcn));
        st->y = st->rgcn.y;
        return 0;
    }
    if (m->cfg.kind == HALO_MODEL_GAT) {
        halo_gat_shape s = halo_model_gat_shape(m, l);
        const int64_t *mptr;
        const int32_t *midx;
        HALO_CHECK(gat_mean_to_dev(m, l, b, &mptr, &midx));
        HALO_CHECK(halo_gat_forward(ops, ctx, &s, m->d_param + m->off[l], b, h, indptr, indices,
                                    !last, drop, mptr, midx, &st->gat));
        st->y = st->gat.y;
        return 0;
    }
    const float *w = m->d_param + m->off[l];
    const float *bias = w + 2 * (size_t)in * out;
    int32_t nd = b->num_dst, ns = b->num_src;
    void *p;
    st->path = halo_model_choose_path(m, b, in, out, l > 0);
    st->h = h;
    st->indptr = indptr;
    st->indices = indices;
    st->xcat = NULL;
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * out * sizeof(float), &p));
    st->y = p;
    if (st->path == HALO_MODEL_PATH_AGG_FIRST) {
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * 2 * in * sizeof(float), &p));
        st->xcat = p;
        HALO_CHECK(ops->copy_rows(ctx, st->xcat, 2 * in, h, in, nd, in));
        HALO_CHECK(ops->agg_mean(ctx, nd, indptr, indices, in, h, in, st->xcat + in, 2 * in, 0));
        return ops->gemm_bias_act(ctx, nd, out, 2 * in, st->xcat, 2 * in, w, out, 0.0f, st->y,
                                  out, bias, !last, drop);
    } else {
        float *z;
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * out * sizeof(float), &p));
        z = p;
        HALO_CHECK(ops->gemm(ctx, 0, 0, ns, out, in, 1.0f, h, in, w + (size_t)in * out, out,
                             0.0f, z, out));
        HALO_CHECK(ops->gemm(ctx, 0, 0, nd, out, in, 1.0f, h, in, w, out, 0.0f, st->y, out));
        HALO_CHECK(ops->agg_mean(ctx, nd, indptr, indices, out, z, out, st->y, out, 1));
    }
    return ops->bias_act(ctx, st->y, nd, out, out, bias, !last, drop);
}

/* Backward of layer l: dy (device, [num_dst x out], gradient w.r.t. the layer's output after its
 * activation; overwritten) gives the layer's parameter gradients and, when dh is not NULL, the
 * gradient w.r.t. its input rows in *dh (workspace, [num_src x in]). act_done: dy is the gradient
 * before the activation already, and the bias gradient is there (the layer above fused them).
 * below (may be NULL): the activation of the layer below (its output is this layer's input);
 * *fused is set when its backward (and its bias gradient) went into the pass writing *dh. */
static int layer_backward(halo_model *m, int l, const halo_block *b, const layer_state *st,
                          float *dy, float drop_p, float **dh, bool act_done,
                          const halo_ops_act_grad *below, bool *fused)
{
    *fused = false;
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int in = m->dims[l], out = m->dims[l + 1];
    bool last = l == m->cfg.layers - 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        halo_rgcn_shape s = halo_model_rgcn_shape(m, l);
        return halo_rgcn_backward(ops, ctx, &s, m->d_param + m->off[l], m->d_grad + m->off[l], b,
                                  &st->rgcn, dy, !last, drop_p, dh);
    }
    if (m->cfg.kind == HALO_MODEL_GAT) {
        halo_gat_shape s = halo_model_gat_shape(m, l);
        return halo_gat_backward(ops, ctx, &s, m->d_param + m->off[l], m->d_grad + m->off[l], b,
                                 &st->gat, dy, !last, drop_p, dh);
    }
    const float *w = m->d_param + m->off[l];
    float *gw = m->d_grad + m->off[l];
    float *gb = gw + 2 * (size_t)in * out;
    int32_t nd = b->num_dst, ns = b->num_src;
    void *p;
    if (last) {
        HALO_CHECK(ops->col_sum(ctx, dy, nd, out, out, gb));
    } else if (!act_done) {
        HALO_CHECK(ops->act_backward(ctx, dy, st->y, nd, out, out, drop_p, gb));
    }
    float *dx = NULL;
    if (dh != NULL) {
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * in * sizeof(float), &p));
        dx = p;
    }
    if (st->path == HALO_MODEL_PATH_AGG_FIRST) {
        /* y = [h_dst | mean] W: dW = xcat^T dy; dxcat = dy W^T */
        HALO_CHECK(ops->gemm(ctx, 1, 0, 2 * in, out, nd, 1.0f, st->xcat, 2 * in, dy, out, 0.0f,
                             gw, out));
        if (dx != NULL) {
            float *dxcat;
            HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * 2 * in * sizeof(float), &p));
            dxcat = p;
            HALO_CHECK(ops->gemm(ctx, 0, 1, nd, 2 * in, out, 1.0f, dy, out, w, out, 0.0f, dxcat,
                                 2 * in));
            /* self part into the destinations' rows, then the neighbours' part added to them
             * and written into the other sources' rows, then (below) the activation's backward
             * of the layer below, in the same pass */
            HALO_CHECK(ops->copy_rows(ctx, dx, in, dxcat, 2 * in, nd, in));
            HALO_CHECK(ops->agg_mean_backward(ctx, nd, ns, b->num_edges, st->indptr, st->indices,
                                              in, dxcat + in, 2 * in, dx, in, nd, below));
            *fused = below != NULL;
        }
    } else {
        /* y = h_dst W_self + mean(h W_neigh) */
        const float *ws = w, *wn = w + (size_t)in * out;
        float *dz;
        HALO_CHECK(ops->gemm(ctx, 1, 0, in, out, nd, 1.0f, st->h, in, dy, out, 0.0f, gw, out));
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * out * sizeof(float), &p));
        dz = p;
        HALO_CHECK(ops->agg_mean_backward(ctx, nd, ns, b->num_edges, st->indptr, st->indices, out,
                                          dy, out, dz, out, 0, NULL));
        HALO_CHECK(ops->gemm(ctx, 1, 0, in, out, ns, 1.0f, st->h, in, dz, out, 0.0f,
                             gw + (size_t)in * out, out));
        if (dx != NULL) {
            HALO_CHECK(ops->gemm(ctx, 0, 1, ns, in, out, 1.0f, dz, out, wn, out, 0.0f, dx, in));
            HALO_CHECK(ops->gemm(ctx, 0, 1, nd, in, out, 1.0f, dy, out, ws, out, 1.0f, dx, in));
        }
    }
    if (dh != NULL) {
        *dh = dx;
    }
    return 0;
}

/* Grows the host staging buffers for per-seed loss and predictions. */
static int stage_rows(halo_model *m, int32_t rows)
{
    if (rows <= m->stage_rows) {
        return 0;
    }
    /* h_pred lies in h_rowloss's block */
    halo_model_host_buf_free(m, m->h_rowloss, m->rows_pageable);
    halo_free(m->h_lab);
    m->h_lab = NULL;
    /* one allocation for both: they are pinned or plain together */
    size_t loss_bytes = (size_t)rows * sizeof(float);
    loss_bytes = (loss_bytes + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
    size_t bytes = loss_bytes + (size_t)rows * sizeof(int32_t);
    char *p = halo_model_host_buf_alloc(m, bytes, &m->rows_pageable);
    m->h_rowloss = (float *)(void *)p;
    m->h_pred = (int32_t *)(void *)(p + loss_bytes);
    m->h_lab = HALO_ALLOC(int32_t, rows);
    m->stage_rows = rows;
    return 0;
}

/* The CSR layer l computes over, on the device: the block's own (SAGE) or its edges regrouped by
 * relation (RGCN, built on the host into the layer's buffers, which stay untouched until the next
 * pass, after the back end's sync). */
static int block_to_dev(halo_model *m, int l, const halo_block *b, const int64_t **indptr,
                        const int32_t **indices)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    const void *p;
    const int64_t *ptr = b->indptr;
    const int32_t *idx = b->indices;
    int64_t nptr = (int64_t)b->num_dst + 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        int R = m->cfg.relations;
        nptr = (int64_t)b->num_dst * R + 1;
        if (nptr > m->vptr_cap[l]) {
            halo_free(m->vptr[l]);
            m->vptr_cap[l] = nptr + nptr / 2;
            m->vptr[l] = HALO_ALLOC(int64_t, m->vptr_cap[l]);
        }
        if (b->num_edges + 1 > m->vidx_cap[l]) {
            halo_free(m->vidx[l]);
            m->vidx_cap[l] = b->num_edges + 1 + b->num_edges / 2;
            m->vidx[l] = HALO_ALLOC(int32_t, m->vidx_cap[l]);
        }
        if (m->rcnt == NULL) {
            m->rcnt = HALO_ALLOC(int64_t, R);
        }
        halo_rgcn_relation_csr(b, R, m->vptr[l], m->vidx[l], m->rcnt);
        ptr = m->vptr[l];
        idx = m->vidx[l];
    }
    HALO_CHECK(ops->to_dev(ctx, ptr, (size_t)nptr * sizeof(int64_t), &p));
    *indptr = p;
    HALO_CHECK(ops->to_dev(ctx, idx, (size_t)b->num_edges * sizeof(int32_t), &p));
    *indices = p;
    return 0;
}


/* Forward over all layers of mb. train: dropout on (keyed by step). Layer states into st.
 * db: the batch is on the device already (a stage's copies), else it is copied here. */
static int model_forward(halo_model *m, const halo_minibatch *mb, const float *feat, bool train,
                         uint64_t step, const dev_batch *db, layer_state *st)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    const void *p;
    if (db != NULL) {
        p = db->feat;
    } else {
        HALO_CHECK(ops->to_dev(ctx, feat, (size_t)mb->num_input * m->cfg.in_dim * sizeof(float),
                               &p));
    }
    const float *h = p;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        const int64_t *indptr;
        const int32_t *indices;
        if (db != NULL) {
            indptr = db->indptr[l];
            indices = db->indices[l];
        } else {
            HALO_CHECK(block_to_dev(m, l, b, &indptr, &indices));
        }
        halo_ops_dropout drop = {0};
        const halo_ops_dropout *dp = NULL;
        if (train && halo_model_layer_drops(m, l)) {
            if (db != NULL) {
                p = db->gid[l];
            } else {
                HALO_CHECK(
                    ops->to_dev(ctx, b->src_gid, (size_t)b->num_dst * sizeof(int32_t), &p));
            }
            drop.p = m->cfg.dropout;
            drop.seed = m->cfg.seed;
            drop.step = step;
            drop.layer = (uint64_t)l;
            drop.gid = p;
            dp = &drop;
        }
        HALO_CHECK(layer_forward(m, l, b, h, indptr, indices, dp, &st[l]));
        h = st[l].y;
    }
    return 0;
}

/* Loss, predictions and (dlogits != NULL) the loss gradient for the seeds, queued: the per-seed
 * losses and predictions are copied into the host staging in queue order and read by
 * loss_finish after the pass's one wait (no wait here, between forward and backward). dev_labels:
 * the labels on the device already (a stage's), else they are copied here. */
static int model_loss(halo_model *m, const halo_minibatch *mb, const float *logits,
                      const int32_t *labels, const int32_t *dev_labels, float **dlogits)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int32_t n = mb->num_seeds;
    int c = m->cfg.classes;
    void *p;
    const void *cp;
    float *row_loss = NULL, *dx = NULL;
    int32_t *pred;
    const int32_t *lab = NULL;
    if (labels != NULL) {
        for (int32_t r = 0; r < n; r++) {
            if (labels[r] < 0 || labels[r] >= c) {
                return halo_errorf(HALO_EINPUT, "model: label %d of seed %d is outside [0, %d)",
                                   labels[r], r, c);
            }
        }
        if (dev_labels != NULL) {
            cp = dev_labels;
        } else {
            HALO_CHECK(ops->to_dev(ctx, labels, (size_t)n * sizeof(int32_t), &cp));
        }
        lab = cp;
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * sizeof(float), &p));
        row_loss = p;
        if (dlogits != NULL) {
            HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * c * sizeof(float), &p));
            dx = p;
        }
    }
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * sizeof(int32_t), &p));
    pred = p;
    float scale = n > 0 ? 1.0f / (float)n : 0.0f;
    HALO_CHECK(ops->softmax_xent(ctx, logits, n, c, lab, scale, dx, row_loss, pred));
    HALO_CHECK(stage_rows(m, n > 0 ? n : 1));
    HALO_CHECK(ops->d2h(ctx, m->h_pred, pred, (size_t)n * sizeof(int32_t)));
    if (row_loss != NULL) {
        HALO_CHECK(ops->d2h(ctx, m->h_rowloss, row_loss, (size_t)n * sizeof(float)));
    }
    if (dlogits != NULL) {
        *dlogits = dx;
    }
    if (labels != NULL) {
        memcpy(m->h_lab, labels, (size_t)n * sizeof(int32_t));
    }
    m->pend_n = n;
    m->pend_labels = labels != NULL;
    return 0;
}

/* After the pass's wait: the predictions into pred_out and the stats (loss summed in seed order
 * on the host, so it does not depend on the back end's threads) into *out. */
static void loss_finish(halo_model *m, int32_t *pred_out, halo_model_stats *out)
{
    int32_t n = m->pend_n;
    if (pred_out != NULL) {
        memcpy(pred_out, m->h_pred, (size_t)n * sizeof(int32_t));
    }
    double sum = 0;
    int32_t correct = 0;
    for (int32_t r = 0; r < n; r++) {
        if (m->pend_labels) {
            sum += m->h_rowloss[r];
            correct += m->h_pred[r] == m->h_lab[r];
        }
    }
    out->loss = n > 0 ? (float)(sum / n) : 0.0f;
    out->correct = correct;
    out->seeds = n;
}

int halo_model_train_forward_backward(halo_model *m, const halo_minibatch *mb, const float *feat,
                                      const int32_t *labels, uint64_t step,
                                      halo_model_stats *stats)
{
    return halo_model_train_forward_backward_dx(m, mb, feat, labels, step, stats, NULL);
}

/* A pass failed midway with rc: kernels it queued may still read the workspace and a stage's
 * buffers. Records the stage's `used` event after them and waits for the compute queue, so that
 * the next ws_reset or upload cannot overwrite what a queued kernel reads; keeps rc's message. */
static int pass_abort(halo_model *m, halo_model_stage *sg, int rc)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", halo_errmsg());
    if (sg != NULL) {
        (void)m->ops->record(m->ctx, sg->used, 0);
    }
    (void)halo_model_queue_sync(m);
    return halo_errorf(rc, "%s", msg);
}

/* The queued part of a training pass: forward, loss, backward, the gradients' copy back; `used`
 * recorded on the compute queue after the last read of db. */
static int train_queue(halo_model *m, const halo_minibatch *mb, const float *feat,
                       const int32_t *labels, uint64_t step, float *d_input, const dev_batch *db,
                       halo_model_stage *sg)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    layer_state st[HALO_MAX_LAYERS];
    if (sg != NULL) {
        HALO_CHECK(ops->wait(ctx, sg->copied, 0));
    }
    HALO_CHECK(model_forward(m, mb, feat, true, step, db, st));
    float *dy;
    int L = mb->layers;
    HALO_CHECK(model_loss(m, mb, st[L - 1].y, labels, db != NULL ? db->labels : NULL, &dy));
    float p = m->cfg.dropout;
    bool act_done = false;
    for (int l = L - 1; l >= 0; l--) {
        float *dh = NULL;
        halo_ops_act_grad below = {0};
        const halo_ops_act_grad *bp = NULL;
        if (l > 0 && m->cfg.kind == HALO_MODEL_SAGE) {
            /* layer l-1's ReLU/dropout and bias gradient, fused into layer l's input gradient */
            below.y = st[l - 1].y;
            below.p = p;
            below.db = m->d_grad + m->off[l - 1] + 2 * (size_t)m->dims[l - 1] * m->dims[l];
            bp = &below;
        }
        HALO_CHECK(layer_backward(m, l, &mb->blocks[l], &st[l], dy, l < L - 1 ? p : 0.0f,
                                  l > 0 || d_input != NULL ? &dh : NULL, act_done, bp,
                                  &act_done));
        dy = dh;
    }
    if (sg != NULL) {
        HALO_CHECK(ops->record(ctx, sg->used, 0));
    }
    if (d_input != NULL) {
        HALO_CHECK(ops->d2h(ctx, d_input, dy,
                            (size_t)mb->num_input * m->cfg.in_dim * sizeof(float)));
    }
    if (!m->host_is_dev) {
        HALO_CHECK(ops->d2h(ctx, m->h_grad, m->d_grad, m->count * sizeof(float)));
    }
    return 0;
}

/* One training pass: db (a stage's device copies, waited for by the compute queue through
 * copied) or the host arrays copied here. One host wait, for the gradients (the trainer's
 * allreduce needs them); the loss rows come with it. A failure midway waits too (pass_abort). */
int halo_model_train_pass(halo_model *m, const halo_minibatch *mb, const float *feat,
                      const int32_t *labels, uint64_t step, halo_model_stats *stats,
                      float *d_input, const dev_batch *db, halo_model_stage *sg)
{
    if (labels == NULL) {
        return halo_errorf(HALO_EUSAGE, "model: training needs the seeds' labels");
    }
    m->have_last = false;
    m->ops->ws_reset(m->ctx);
    int rc = train_queue(m, mb, feat, labels, step, d_input, db, sg);
    if (rc < 0) {
        return pass_abort(m, sg, rc);
    }
    HALO_CHECK(halo_model_queue_sync(m));
    loss_finish(m, NULL, &m->last);
    m->have_last = true;
    if (stats != NULL) {
        *stats = m->last;
    }
    return 0;
}

int halo_model_train_forward_backward_dx(halo_model *m, const halo_minibatch *mb,
                                         const float *feat, const int32_t *labels, uint64_t step,
                                         halo_model_stats *stats, float *d_input)
{
    HALO_CHECK(halo_model_check_minibatch(m, mb));
    return halo_model_train_pass(m, mb, feat, labels, step, stats, d_input, NULL, NULL);
}

int halo_model_last_stats(const halo_model *m, halo_model_stats *out)
{
    if (!m->have_last) {
        return halo_errorf(HALO_ESTATE, "model: no training pass to read the loss of");
    }
    *out = m->last;
    return 0;
}

int halo_model_infer(halo_model *m, const halo_minibatch *mb, const float *feat,
                     const int32_t *labels, float *logits, int32_t *pred, halo_model_stats *stats)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    layer_state st[HALO_MAX_LAYERS];
    HALO_CHECK(halo_model_check_minibatch(m, mb));
    ops->ws_reset(ctx);
    int rc = model_forward(m, mb, feat, false, 0, NULL, st);
    const float *y = rc == 0 ? st[mb->layers - 1].y : NULL;
    if (rc == 0 && logits != NULL) {
        rc = ops->d2h(ctx, logits, y, (size_t)mb->num_seeds * m->cfg.classes * sizeof(float));
    }
    bool loss = pred != NULL || stats != NULL;
    if (rc == 0 && loss) {
        rc = model_loss(m, mb, y, stats != NULL ? labels : NULL, NULL, NULL);
    }
    if (rc < 0) {
        return pass_abort(m, NULL, rc);
    }
    HALO_CHECK(halo_model_queue_sync(m));
    if (loss) {
        halo_model_stats ms;
        loss_finish(m, pred, &ms);
        if (stats != NULL) {
            *stats = ms;
        }
    }
    return 0;
}

int halo_model_layer_forward(halo_model *m, int layer, const halo_block *blk, const float *h_src,
                             float *h_dst)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    if (layer < 0 || layer >= m->cfg.layers) {
        return halo_errorf(HALO_EUSAGE, "model: layer %d outside [0, %d)", layer, m->cfg.layers);
    }
    halo_minibatch one = {.layers = 1, .blocks = {*blk}, .num_seeds = blk->num_dst,
                          .num_input = blk->num_src};
    halo_model tmp = *m;
    tmp.cfg.layers = 1;
    HALO_CHECK(halo_model_check_minibatch(&tmp, &one));
    int in = m->dims[layer], out = m->dims[layer + 1];
    const void *p;
    ops->ws_reset(ctx);
    HALO_CHECK(ops->to_dev(ctx, h_src, (size_t)blk->num_src * in * sizeof(float), &p));
    const float *h = p;
    const int64_t *indptr;
    const int32_t *indices;
    HALO_CHECK(block_to_dev(m, layer, blk, &indptr, &indices));
    layer_state st;
    int rc = layer_forward(m, layer, blk, h, indptr, indices, NULL, &st);
    if (rc == 0) {
        rc = ops->d2h(ctx, h_dst, st.y, (size_t)blk->num_dst * out * sizeof(float));
    }
    return rc < 0 ? pass_abort(m, NULL, rc) : halo_model_queue_sync(m);
}

