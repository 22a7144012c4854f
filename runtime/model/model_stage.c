/* The model's copy stage (docs/pipeline.md): host buffers for copies, and per pipeline slot a
 * stage that packs a mini-batch's blocks, dropout keys and labels into one pinned buffer and
 * copies it and the input rows to the device on the copy queue, ordered by events. */
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

/* ---------------------------------------------------------------- the copy stage */

int halo_model_host_alloc(halo_model *m, size_t bytes, void **out)
{
    return m->ops->host_alloc(m->ctx, bytes, out);
}

void halo_model_host_free(halo_model *m, void *p)
{
    if (p != NULL) {
        m->ops->host_free(m->ctx, p);
    }
}

int halo_model_host_pinned(halo_model *m, const void *p)
{
    return m->ops->host_pinned(m->ctx, p);
}

int halo_model_stage_new(halo_model *m, halo_model_stage **out)
{
    halo_model_stage *sg = HALO_NEW(halo_model_stage, 1);
    sg->batch = -1;
    int rc = m->ops->event_new(m->ctx, &sg->copied);
    if (rc == 0) {
        rc = m->ops->event_new(m->ctx, &sg->used);
    }
    if (rc < 0) {
        halo_model_stage_free(m, sg);
        sg = NULL;
    }
    *out = sg;
    return rc;
}

void halo_model_stage_free(halo_model *m, halo_model_stage *sg)
{
    if (sg == NULL) {
        return;
    }
    const halo_ops *ops = m->ops;
    /* nothing may still read the buffers: the copies and the last pass over them */
    if (sg->copied != NULL) {
        (void)ops->event_sync(m->ctx, sg->copied);
    }
    if (sg->used != NULL) {
        (void)ops->event_sync(m->ctx, sg->used);
    }
    halo_model_host_buf_free(m, sg->h_pack, sg->pack_pageable);
    if (sg->d_pack != NULL) {
        ops->dev_free(m->ctx, sg->d_pack);
    }
    if (sg->d_feat != NULL) {
        ops->dev_free(m->ctx, sg->d_feat);
    }
    if (sg->copied != NULL) {
        ops->event_free(m->ctx, sg->copied);
    }
    if (sg->used != NULL) {
        ops->event_free(m->ctx, sg->used);
    }
    halo_free(sg->rcnt);
    halo_free(sg);
}

int64_t halo_model_stage_bytes(const halo_model_stage *sg)
{
    return sg->bytes;
}

int64_t halo_model_stage_batch(const halo_model_stage *sg)
{
    return sg->batch;
}

/* Rounds a byte offset up to STAGE_ALIGN. */
static size_t stage_align(size_t at)
{
    return (at + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
}

/* Where each array of mb lies in a stage's packed buffers (byte offsets); returns the total. */
typedef struct stage_layout {
    size_t indptr[HALO_MAX_LAYERS], indices[HALO_MAX_LAYERS], gid[HALO_MAX_LAYERS];
    int64_t nptr[HALO_MAX_LAYERS]; /* indptr entries of layer l */
    size_t labels;                 /* offset of the labels */
    size_t total;                  /* bytes */
} stage_layout;

static void stage_plan(const halo_model *m, const halo_minibatch *mb, stage_layout *lo)
{
    size_t at = 0;
    int R = m->cfg.kind == HALO_MODEL_RGCN ? m->cfg.relations : 1;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        lo->nptr[l] = (int64_t)b->num_dst * R + 1;
        lo->indptr[l] = at;
        at = stage_align(at + (size_t)lo->nptr[l] * sizeof(int64_t));
        lo->indices[l] = at;
        at = stage_align(at + (size_t)b->num_edges * sizeof(int32_t));
        lo->gid[l] = at;
        if (halo_model_layer_drops(m, l)) {
            at = stage_align(at + (size_t)b->num_dst * sizeof(int32_t));
        }
    }
    lo->labels = at;
    at = stage_align(at + (size_t)mb->num_seeds * sizeof(int32_t));
    lo->total = at;
}

/* Grows a stage's buffers to pack bytes and feat bytes. Old buffers are freed only once nothing
 * reads them any more (host waits for both events: growth is rare). */
static int stage_grow(halo_model *m, halo_model_stage *sg, size_t pack, size_t feat)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    void *p;
    if (pack > sg->pack_cap || feat > sg->feat_cap) {
        HALO_CHECK(ops->event_sync(ctx, sg->copied));
        HALO_CHECK(ops->event_sync(ctx, sg->used));
    }
    if (pack > sg->pack_cap) {
        size_t cap = stage_align(pack + pack / 2);
        halo_model_host_buf_free(m, sg->h_pack, sg->pack_pageable);
        if (sg->d_pack != NULL) {
            ops->dev_free(ctx, sg->d_pack);
        }
        sg->h_pack = sg->d_pack = NULL;
        sg->pack_cap = 0;
        sg->h_pack = halo_model_host_buf_alloc(m, cap, &sg->pack_pageable);
        HALO_CHECK(ops->dev_alloc(ctx, cap, &p));
        sg->d_pack = p;
        sg->pack_cap = cap;
    }
    if (feat > sg->feat_cap) {
        size_t cap = stage_align(feat + feat / 2);
        if (sg->d_feat != NULL) {
            ops->dev_free(ctx, sg->d_feat);
        }
        sg->d_feat = NULL;
        sg->feat_cap = 0;
        HALO_CHECK(ops->dev_alloc(ctx, cap, &p));
        sg->d_feat = p;
        sg->feat_cap = cap;
    }
    return 0;
}

int halo_model_stage_upload(halo_model *m, halo_model_stage *sg, const halo_minibatch *mb,
                            const float *feat, const int32_t *labels, int64_t batch)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    sg->batch = -1;
    sg->bytes = 0;
    HALO_CHECK(halo_model_check_minibatch(m, mb));
    if (labels == NULL) {
        return halo_errorf(HALO_EUSAGE, "model: training needs the seeds' labels");
    }
    sg->mb = *mb;
    sg->feat = feat;
    sg->labels = labels;
    sg->copies = !m->host_is_dev || m->cfg.copy_stage;
    sg->uploads++;
    if (!sg->copies) {
        /* CPU: the device reads host memory; nothing to copy */
        sg->batch = batch;
        return 0;
    }
    stage_layout lo;
    stage_plan(m, mb, &lo);
    size_t fbytes = (size_t)mb->num_input * m->cfg.in_dim * sizeof(float);
    HALO_CHECK(stage_grow(m, sg, lo.total, fbytes));
    /* the packed host buffer is rewritten: the last copies out of it must be done (they are by
     * now: the pass that read them has waited for them) */
    HALO_CHECK(ops->event_sync(ctx, sg->copied));
    char *h = sg->h_pack;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        int64_t *ptr = (int64_t *)(void *)(h + lo.indptr[l]);
        int32_t *idx = (int32_t *)(void *)(h + lo.indices[l]);
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            if (sg->rcnt == NULL) {
                sg->rcnt = HALO_ALLOC(int64_t, m->cfg.relations);
            }
            halo_rgcn_relation_csr(b, m->cfg.relations, ptr, idx, sg->rcnt);
        } else {
            memcpy(ptr, b->indptr, (size_t)lo.nptr[l] * sizeof(int64_t));
            memcpy(idx, b->indices, (size_t)b->num_edges * sizeof(int32_t));
        }
        if (halo_model_layer_drops(m, l)) {
            memcpy(h + lo.gid[l], b->src_gid, (size_t)b->num_dst * sizeof(int32_t));
        }
        sg->db.indptr[l] = (const int64_t *)(const void *)(sg->d_pack + lo.indptr[l]);
        sg->db.indices[l] = (const int32_t *)(const void *)(sg->d_pack + lo.indices[l]);
        sg->db.gid[l] = halo_model_layer_drops(m, l)
                            ? (const int32_t *)(const void *)(sg->d_pack + lo.gid[l])
                            : NULL;
    }
    memcpy(h + lo.labels, labels, (size_t)mb->num_seeds * sizeof(int32_t));
    sg->db.labels = (const int32_t *)(const void *)(sg->d_pack + lo.labels);
    sg->db.feat = sg->d_feat;
    /* the device buffers may still be read by the slot's last pass: the copies wait for it */
    HALO_CHECK(ops->wait(ctx, sg->used, 1));
    HALO_CHECK(ops->copy_h2d(ctx, sg->d_pack, sg->h_pack, lo.total));
    HALO_CHECK(ops->copy_h2d(ctx, sg->d_feat, feat, fbytes));
    HALO_CHECK(ops->record(ctx, sg->copied, 1));
    sg->bytes = (int64_t)(lo.total + fbytes);
    sg->batch = batch;
    return 0;
}

int halo_model_train_staged(halo_model *m, halo_model_stage *sg, int64_t batch, uint64_t step,
                            halo_model_stats *stats)
{
    if (sg->batch < 0 || sg->batch != batch) {
        return halo_errorf(HALO_ESTATE,
                           "model: the stage holds batch %lld (-1: none), the pass asks for %lld",
                           (long long)sg->batch, (long long)batch);
    }
    sg->batch = -1; /* consumed: the slot takes a later batch next */
    if (!sg->copies) {
        return halo_model_train_pass(m, &sg->mb, sg->feat, sg->labels, step, stats, NULL, NULL,
                                     NULL);
    }
    return halo_model_train_pass(m, &sg->mb, sg->feat, sg->labels, step, stats, NULL, &sg->db, sg);
}

