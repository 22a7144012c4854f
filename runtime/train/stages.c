/* The pipeline's stages of one batch (docs/pipeline.md): sampling (halo_train_sample, also
 * the evaluation's) of the seeds the epoch order gives it, the feature pull through the cache,
 * the copy to the device; the slots they fill and the channels they run on. */
#include "core/err.h"
#include "core/mem.h"
#include "order/order.h"
#include "train/train_internal.h"

#include <string.h>

int halo_train_sample(const train_ctx *t, halo_store *st, halo_sampler *smp,
                      const halo_plan_fanouts *f, const halo_sample_key *k, const int32_t *seeds,
                      int32_t n, halo_minibatch *mb)
{
    if (t->nrels > 0) {
        return halo_store_sample_typed(st, smp, f->rfan, t->layers, k, seeds, n, mb);
    }
    return halo_store_sample(st, smp, f->fanouts, t->layers, k, seeds, n, mb);
}

void halo_train_keyed_minibatch(const train_ctx *t, const halo_minibatch *mb,
                                int32_t **keybuf, int64_t *keycap, halo_minibatch *out)
{
    const int64_t *orig = halo_store_orig_ids(t->st);
    *out = *mb;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        if (b->num_src > keycap[l]) {
            halo_free(keybuf[l]);
            keycap[l] = b->num_src + b->num_src / 2 + 16;
            keybuf[l] = HALO_ALLOC(int32_t, keycap[l]);
        }
        for (int32_t i = 0; i < b->num_src; i++) {
            keybuf[l][i] = (int32_t)orig[b->src_gid[i]];
        }
        out->blocks[l].src_gid = keybuf[l];
    }
    out->seeds = out->blocks[out->layers - 1].src_gid;
    out->input = out->blocks[0].src_gid;
}

int halo_train_stage_sample(void *arg, halo_pipe_item *it)
{
    stage_arg *a = arg;
    epoch_plan *pl = a->plan;
    train_ctx *t = pl->t;
    batch_slot *s = it->data;
    int64_t b = it->batch;
    s->n = (int32_t)(pl->boff[b + 1] - pl->boff[b]);
    halo_comm_stats c0 = halo_comm_get_stats(halo_store_comm(a->st));
    halo_sample_key k = {t->o->seed, pl->epoch, b};
    int rc = halo_train_sample(t, a->st, a->smp, &t->fan, &k, pl->order + pl->boff[b], s->n,
                               &s->mb);
    if (rc < 0) {
        halo_comm_fail(halo_store_comm(a->st), rc);
    }
    if (s->mb.num_seeds > s->labels_cap) {
        halo_free(s->labels);
        s->labels_cap = s->mb.num_seeds;
        s->labels = HALO_ALLOC(int32_t, s->labels_cap);
    }
    for (int32_t i = 0; i < s->mb.num_seeds; i++) {
        s->labels[i] = halo_train_seed_label(t, s->mb.seeds[i]);
    }
    halo_comm_stats c1 = halo_comm_get_stats(halo_store_comm(a->st));
    s->bytes = c1.bytes_recv - c0.bytes_recv;
    s->sent = c1.bytes_sent - c0.bytes_sent;
    s->messages = c1.messages - c0.messages;
    return 0;
}

/* Frees a slot's rows buffer (pinned or plain). */
static void slot_rows_free(halo_model *m, batch_slot *s)
{
    if (s->own_pageable) {
        halo_free(s->own);
    } else {
        halo_model_host_free(m, s->own);
    }
    s->own = NULL;
    s->own_cap = 0;
    s->own_pageable = false;
}

int halo_train_stage_fetch(void *arg, halo_pipe_item *it)
{
    stage_arg *a = arg;
    epoch_plan *pl = a->plan;
    train_ctx *t = pl->t;
    halo_store *st = a->st;
    batch_slot *s = it->data;
    int64_t ni = s->mb.num_input > 0 ? s->mb.num_input : 1;
    halo_comm_stats c0 = halo_comm_get_stats(halo_store_comm(st));
    int64_t need = ni * halo_store_feat_dim(st);
    if (need > s->own_cap) {
        /* the slot's rows buffer, pinned on a GPU at every depth (its batch's copy to the device
         * is then asynchronous); the last batch of this slot has been computed (released) */
        slot_rows_free(t->m, s);
        s->own_cap = need + need / 2;
        void *p = NULL;
        if (halo_model_host_alloc(t->m, (size_t)s->own_cap * sizeof(float), &p) < 0) {
            p = HALO_ALLOC(float, s->own_cap); /* pinned memory is limited: copies still work */
            s->own_pageable = true;
        }
        s->own = p;
    }
    s->rows = s->own;
    int rc = halo_store_pull_plan(st, s->mb.input, s->mb.num_input, &s->pull);
    if (rc < 0) {
        /* local and never expected: ids come from the sampler */
        halo_comm_fail(halo_store_comm(st), rc);
    }
    s->hits = 0;
    s->misses = s->pull.num_remote;
    s->evicted = 0;
    int prc = 0;
    halo_cache_stats h0;
    memset(&h0, 0, sizeof h0);
    int64_t n_extra = 0;
    if (t->cache != NULL) {
        h0 = *halo_cache_stats_get(t->cache);
        halo_cache_batch cb = {pl->epoch, it->batch, (int64_t)(pl->step0 + (uint64_t)it->batch),
                               s->mb.num_input, s->mb.input};
        prc = halo_cache_lookup(t->cache, &cb, s->pull.num_remote, s->pull.remote_id,
                                s->pull.remote_pos, s->rows, s->pull.skip);
    }
    if (t->trace != NULL && prc == 0) {
        /* the access trace (cache/trace.h), written by this thread alone, in batch order */
        prc = halo_trace_put_lookup(t->trace, t->rank, pl->epoch, it->batch, s->pull.n,
                                    s->pull.ids, s->pull.num_remote, s->pull.remote_id,
                                    s->pull.remote_pos, s->pull.skip, t->cache);
    }
    if (t->cache != NULL && prc == 0) {
        /* the policy's cache_batch: admitted ids that are not this batch's misses are pulled
         * with them (the extras of the plan are the cache's alone) */
        const int32_t *extra = NULL;
        prc = halo_cache_decide(t->cache, &extra, &n_extra);
        if (prc == 0 && n_extra > 0) {
            prc = halo_store_pull_add_extra(&s->pull, st, extra, n_extra);
        }
    }
    rc = halo_store_pull_exec(st, &s->pull, s->rows);
    if (rc < 0) {
        halo_comm_fail(halo_store_comm(st), rc);
    }
    if (t->cache != NULL && prc == 0) {
        const float *er = n_extra > 0 ? s->pull.extra_rows : NULL;
        prc = halo_cache_admit(t->cache, s->rows, er);
        const halo_cache_stats *h1 = halo_cache_stats_get(t->cache);
        s->hits = h1->hits - h0.hits;
        s->misses = h1->misses - h0.misses;
        s->evicted = h1->evicted - h0.evicted;
    }
    halo_comm_stats c1 = halo_comm_get_stats(halo_store_comm(st));
    s->bytes += c1.bytes_recv - c0.bytes_recv;
    s->sent += c1.bytes_sent - c0.bytes_sent;
    s->messages += c1.messages - c0.messages;
    return prc;
}

int halo_train_slot_upload(train_ctx *t, batch_slot *s, int64_t batch)
{
    if (s->stage == NULL) {
        HALO_CHECK(halo_model_stage_new(t->m, &s->stage));
    }
    halo_train_keyed_minibatch(t, &s->mb, s->keybuf, s->keycap, &s->keyed);
    return halo_model_stage_upload(t->m, s->stage, &s->keyed, s->rows, s->labels, batch);
}

int halo_train_stage_copy(void *arg, halo_pipe_item *it)
{
    stage_arg *a = arg;
    batch_slot *s = it->data;
    if (it->rc < 0 || s->n == 0) {
        return 0;
    }
    return halo_train_slot_upload(a->plan->t, s, it->batch);
}

int halo_train_pipe_channels(train_ctx *t, pipe_res *pr, int threads)
{
    while (pr->nchan < threads + 1) {
        int i = pr->nchan;
        HALO_CHECK(halo_comm_dup(t->c, &pr->chan[i]));
        pr->st[i] = halo_store_clone(t->st, pr->chan[i]);
        pr->smp[i] = halo_sampler_new();
        pr->nchan++;
    }
    return 0;
}

void halo_train_pipe_free(pipe_res *pr, halo_model *m)
{
    for (int i = 0; i < pr->nchan; i++) {
        halo_store_close(pr->st[i]);
        halo_sampler_free(pr->smp[i]);
        halo_comm_free(pr->chan[i]);
    }
    for (int i = 0; i <= HALO_PIPE_MAX_DEPTH; i++) {
        batch_slot *s = &pr->slot[i];
        halo_sample_free(&s->mb);
        halo_store_pull_free(&s->pull);
        slot_rows_free(m, s);
        halo_free(s->labels);
        for (int l = 0; l < HALO_MAX_LAYERS; l++) {
            halo_free(s->keybuf[l]);
        }
        halo_model_stage_free(m, s->stage);
    }
    halo_free(pr->gbuf);
    halo_timeline_free(&pr->tl);
    memset(pr, 0, sizeof *pr);
}

void halo_train_epoch_order(const train_ctx *t, int epoch, const int64_t *all_orig,
                            halo_order_key *keys, int32_t *order, int64_t *boff)
{
    const halo_part *pt = halo_store_part(t->st);
    const int64_t *orig = halo_store_orig_ids(t->st);
    int64_t nt = pt->num_train;
    if (t->o->batching == HALO_TRAIN_BATCH_GLOBAL) {
        int32_t *gid = HALO_ALLOC(int32_t, nt * t->ranks > 0 ? nt * t->ranks : 1);
        memcpy(gid + (int64_t)t->rank * nt, pt->train, (size_t)nt * sizeof *gid);
        halo_order_global(t->o->seed, epoch, t->ranks, nt, gid, all_orig, t->o->batch, t->rank,
                          t->rank + 1, keys, order, boff);
        halo_free(gid);
    } else {
        int64_t *torig = HALO_ALLOC(int64_t, nt > 0 ? nt : 1);
        for (int64_t i = 0; i < nt; i++) {
            torig[i] = orig[pt->train[i]];
        }
        halo_order_local(t->o->seed, epoch, nt, pt->train, torig, t->o->batch, keys, order, boff);
        halo_free(torig);
    }
}
