/* The distributed training loop: seed order per epoch, sample, pull, forward/backward, one
 * gradient allreduce, Adam; stage times, metrics records, checkpoints and --check. Sampling and
 * pulls run in the asynchronous pipeline of runtime/pipe (depth from the policy, 0 = inline). */
#include "train/train.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/timer.h"
#include "order/order.h"
#include "pipe/pipe.h"
#include "pipe/timeline.h"
#include "policy/policy.h"
#include "train/checkpoint.h"
#include "train/eval.h"
#include "train/metrics.h"
#include "train/train_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void halo_train_opts_default(halo_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 3;
    o->batch = 2000;
    o->batching = HALO_TRAIN_BATCH_LOCAL;
    o->hidden = 16;
    o->lr = 0.003;
    o->dropout = 0.5;
    o->seed = 1;
    o->device = HALO_DEVICE_AUTO;
    o->eval = HALO_TRAIN_EVAL_SAMPLED;
    o->eval_every = 1;
    o->eval_batch = 2000;
    o->checkpoint_every = 1;
    o->table = true;
    o->depth = -1;
    o->embed_optim = HALO_EMBED_ADAM;
    o->embed_lr = 0.01;
}

const char *halo_train_batching_name(int b)
{
    return b == HALO_TRAIN_BATCH_GLOBAL ? "global" : "local";
}

int halo_train_parse_batching(const char *s, int *out)
{
    if (strcmp(s, "local") == 0) {
        *out = HALO_TRAIN_BATCH_LOCAL;
    } else if (strcmp(s, "global") == 0) {
        *out = HALO_TRAIN_BATCH_GLOBAL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--batching: '%s' is not local or global", s);
    }
    return 0;
}

const char *halo_train_eval_name(int e)
{
    return e == HALO_TRAIN_EVAL_FULL ? "full" : e == HALO_TRAIN_EVAL_SAMPLED ? "sampled" : "none";
}

int halo_train_parse_eval(const char *s, int *out)
{
    if (strcmp(s, "sampled") == 0) {
        *out = HALO_TRAIN_EVAL_SAMPLED;
    } else if (strcmp(s, "full") == 0) {
        *out = HALO_TRAIN_EVAL_FULL;
    } else if (strcmp(s, "none") == 0) {
        *out = HALO_TRAIN_EVAL_NONE;
    } else {
        return halo_errorf(HALO_EUSAGE, "--eval: '%s' is not sampled, full or none", s);
    }
    return 0;
}

int halo_train_opts_check(const halo_train_opts *o)
{
    if (o->pdir == NULL) {
        return halo_errorf(HALO_EUSAGE, "train: a partition directory is required");
    }
    if (o->epochs < 0) {
        return halo_errorf(HALO_EUSAGE, "--epochs: must be >= 0, got %d", o->epochs);
    }
    if (o->batch < 1) {
        return halo_errorf(HALO_EUSAGE, "--batch: must be >= 1, got %lld", (long long)o->batch);
    }
    if (o->eval_batch < 1) {
        return halo_errorf(HALO_EUSAGE, "--eval-batch: must be >= 1, got %lld",
                           (long long)o->eval_batch);
    }
    if (o->hidden < 1) {
        return halo_errorf(HALO_EUSAGE, "--hidden: must be >= 1, got %d", o->hidden);
    }
    if (!(o->lr > 0)) {
        return halo_errorf(HALO_EUSAGE, "--lr: must be > 0, got %g", o->lr);
    }
    if (!(o->embed_lr > 0)) {
        return halo_errorf(HALO_EUSAGE, "--embed-lr: must be > 0, got %g", o->embed_lr);
    }
    if (!(o->dropout >= 0 && o->dropout < 1)) {
        return halo_errorf(HALO_EUSAGE, "--dropout: must be in [0, 1), got %g", o->dropout);
    }
    if (o->eval_every < 1 || o->checkpoint_every < 1) {
        return halo_errorf(HALO_EUSAGE, "--eval-every and --checkpoint-every must be >= 1");
    }
    if (o->resume && o->checkpoint == NULL) {
        return halo_errorf(HALO_EUSAGE, "--resume needs --checkpoint DIR");
    }
    if (o->depth < -1 || o->depth > HALO_PIPE_MAX_DEPTH) {
        return halo_errorf(HALO_EUSAGE, "--depth: must be in 0..%d, got %d", HALO_PIPE_MAX_DEPTH,
                           o->depth);
    }
    if (o->sampler_threads < 0 || o->sampler_threads > HALO_PIPE_MAX_THREADS) {
        return halo_errorf(HALO_EUSAGE,
                           "--sampler-threads: must be in 0..%d (0: the policy's), got %d",
                           HALO_PIPE_MAX_THREADS, o->sampler_threads);
    }
    if (o->threads < 0) {
        return halo_errorf(HALO_EUSAGE, "--threads: must be >= 0, got %d", o->threads);
    }
    /* the per-relation form ("cites=10;*=5") needs the partition's relation names: checked in
     * the set-up */
    int f[HALO_MAX_LAYERS];
    if (o->fanouts != NULL && strpbrk(o->fanouts, "=;*") == NULL &&
        halo_sample_parse_fanouts(o->fanouts, f, HALO_MAX_LAYERS) < 0) {
        return halo_error_prefix(HALO_EUSAGE, "--fanouts");
    }
    if (o->eval_fanouts != NULL && strpbrk(o->eval_fanouts, "=;*") == NULL &&
        halo_sample_parse_fanouts(o->eval_fanouts, f, HALO_MAX_LAYERS) < 0) {
        return halo_error_prefix(HALO_EUSAGE, "--eval-fanouts");
    }
    return 0;
}

/* ---------------------------------------------------------------- epoch order */

/* Epoch order (runtime/order, shared with the simulator): local batching orders this rank's
 * seeds; global batching orders everybody's (orig ids gathered once in all_orig) and keeps this
 * rank's seeds of each global batch. Fills order[nt] and boff[nb+1] (batch b = order[boff[b] ..
 * boff[b+1])). keys is scratch of nt (local) or ranks * nt (global) entries. */
static void epoch_order(const train_ctx *t, int epoch, const int64_t *all_orig,
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

/* ---------------------------------------------------------------- one batch */

/* Stage times and counts accumulated over an epoch on this rank. */
typedef struct epoch_acc {
    halo_epoch_stats s; /* the record (times, counts) */
    double loss_sum;    /* sum over batches of seeds x mean loss */
    int64_t seeds;      /* seeds trained */
    int64_t correct;    /* seeds predicted right */
} epoch_acc;

/* The mini-batch as the model sees it: sources keyed by input-graph id, so dropout masks do not
 * depend on the partition numbering (1 rank and P ranks drop the same units). The keys go into
 * keybuf/keycap (per layer; grown as needed), the caller's (a pipeline slot's). */
static void keyed_minibatch(const train_ctx *t, const halo_minibatch *mb, int32_t **keybuf,
                            int64_t *keycap, halo_minibatch *out)
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

/* ---------------------------------------------------------------- the pipeline's stages */

/* One batch on its way through the pipeline (docs/pipeline.md): what the sample and fetch
 * stages prepare for the compute. Depth k uses k + 1 of them. */
typedef struct batch_slot {
    halo_minibatch mb;  /* sampled blocks */
    halo_store_pull pull;     /* pull plan of the input rows */
    float *rows;        /* [num_input * feat_dim] input features (== own) */
    float *own;         /* the slot's buffer: pinned host memory from the model (GPU) */
    int64_t own_cap;    /* floats allocated in own */
    bool own_pageable;  /* own is plain memory (pinned memory could not be had) */
    int32_t *labels;    /* [n] labels of the seeds */
    int64_t labels_cap; /* capacity of labels */
    halo_minibatch keyed;              /* mb with sources keyed by input-graph id */
    int32_t *keybuf[HALO_MAX_LAYERS];  /* its keys per layer */
    int64_t keycap[HALO_MAX_LAYERS];   /* their capacities */
    halo_model_stage *stage;           /* the model's staging of this slot (copy stage) */
    int32_t n;          /* this rank's seeds of the batch */
    int64_t hits;       /* halo input nodes served by the cache */
    int64_t misses;     /* halo input nodes pulled */
    int64_t evicted;    /* cache slots the policy freed at this batch */
    int64_t bytes;      /* bytes received by the sample and fetch stages for this batch */
    int64_t sent;       /* bytes they sent */
    int64_t messages;   /* messages they sent */
} batch_slot;

/* What the stages of one epoch read (fixed while the pipeline runs). */
typedef struct epoch_plan {
    train_ctx *t;         /* the trainer (fanouts, labels, cache: the fetch thread's alone) */
    int epoch;            /* epoch */
    uint64_t step0;       /* global step of batch 0 */
    const int32_t *order; /* this rank's seeds in epoch order */
    const int64_t *boff;  /* batch b = order[boff[b] .. boff[b+1]) */
    int depth;            /* pipeline depth (0: stages run on the trainer's thread) */
    bool copy_stage;      /* a copy stage runs after the fetch (GPU) */
} epoch_plan;

/* A stage thread's own handles: a channel (a dup of the world one at depth > 0), a store handle
 * on it and, for sampling, a sampler. */
typedef struct stage_arg {
    epoch_plan *plan;  /* the epoch */
    halo_store *st;    /* store handle of this thread */
    halo_sampler *smp; /* sampler scratch (sampling threads) */
} stage_arg;

/* The pipeline's channels and handles, made once and reused by every epoch. */
typedef struct pipe_res {
    int nchan;                                    /* channels made (fetch + samplers) */
    halo_comm *chan[HALO_PIPE_MAX_THREADS + 1];   /* [0] fetch, [1..] sampling threads */
    halo_store *st[HALO_PIPE_MAX_THREADS + 1];    /* store clones on them */
    halo_sampler *smp[HALO_PIPE_MAX_THREADS + 1]; /* samplers of the sampling threads */
    batch_slot slot[HALO_PIPE_MAX_DEPTH + 1];     /* per-batch buffers */
    void *slotp[HALO_PIPE_MAX_DEPTH + 1];         /* pointers to them */
    float *gbuf;                                  /* gradient + failure flag for the allreduce */
    halo_timeline tl;                             /* --timeline events of this rank */
} pipe_res;

/* Stage 1: sample the batch's blocks on this thread's channel (collective: batch b runs on
 * sampling thread b % T of every rank, so the calls on each channel match), and look up the
 * seeds' labels. A failure inside the collective cannot be carried to a batch boundary (peers
 * wait in it): it ends the job. */
static int stage_sample(void *arg, halo_pipe_item *it)
{
    stage_arg *a = arg;
    epoch_plan *pl = a->plan;
    train_ctx *t = pl->t;
    batch_slot *s = it->data;
    int64_t b = it->batch;
    s->n = (int32_t)(pl->boff[b + 1] - pl->boff[b]);
    halo_comm_stats c0 = halo_comm_get_stats(halo_store_comm(a->st));
    halo_sample_key k = {t->o->seed, pl->epoch, b};
    int rc = halo_train_sample(t, a->st, a->smp, t->fanouts, t->rfan, &k,
                               pl->order + pl->boff[b], s->n, &s->mb);
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

/* Stage 2: the feature pull, with the cache between plan and exec (docs/cache.md). One thread,
 * batches in order, so the cache's lookups and admissions happen in the same order at every
 * depth (invariant 2). A policy error (cache_batch in Lua) is returned after the pull's
 * collective call was still made, so no peer waits: the trainer agrees on it at the batch
 * boundary. */
static int stage_fetch(void *arg, halo_pipe_item *it)
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

/* Keys the slot's batch and stages it for the model (halo_model_stage_upload). */
static int slot_upload(train_ctx *t, batch_slot *s, int64_t batch)
{
    if (s->stage == NULL) {
        HALO_CHECK(halo_model_stage_new(t->m, &s->stage));
    }
    keyed_minibatch(t, &s->mb, s->keybuf, s->keycap, &s->keyed);
    return halo_model_stage_upload(t->m, s->stage, &s->keyed, s->rows, s->labels, batch);
}

/* Stage 3 (GPU): the copy stage. The slot's batch goes to the device on the model's copy stream
 * while the trainer computes the batch before it (docs/pipeline.md). No collectives; skipped
 * after an earlier stage's error and for a batch without seeds. */
static int stage_copy(void *arg, halo_pipe_item *it)
{
    stage_arg *a = arg;
    batch_slot *s = it->data;
    if (it->rc < 0 || s->n == 0) {
        return 0;
    }
    return slot_upload(a->plan->t, s, it->batch);
}

/* The per-type counts of a typed batch: input nodes (and remote ones) by node type, sampled
 * edges by relation. */
static void count_types(const train_ctx *t, const halo_minibatch *mb, halo_epoch_stats *s)
{
    const halo_partinfo *pi = halo_store_info(t->st);
    for (int32_t i = 0; i < mb->num_input; i++) {
        int ty = halo_train_node_type(pi, mb->input[i]);
        s->input_nodes_type[ty]++;
        s->remote_nodes_type[ty] += !halo_store_is_local(t->st, mb->input[i]);
    }
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        for (int64_t e = 0; b->etype != NULL && e < b->num_edges; e++) {
            s->sampled_edges_rel[b->etype[e]]++;
        }
    }
}

/* The trainer's part of one batch: forward/backward, the gradient allreduce, Adam. The
 * allreduce carries one more float, 1 on a rank whose batch failed (a stage's error, or the
 * model's), so the ranks learn of a failure at the batch boundary without another collective;
 * they then agree on the message and return it (every rank, no hang). global_n is the step's
 * seed count over all ranks. Collective. */
static int compute_step(train_ctx *t, pipe_res *pr, const halo_pipe_item *it, int rc,
                        uint64_t step, int64_t global_n, epoch_acc *acc, int epoch,
                        bool plan_copies)
{
    batch_slot *s = it->data;
    int32_t n = s->n;
    double t0 = halo_now();
    halo_model_stats ms = {0};
    float *dinput = NULL;
    if (t->emb != NULL) {
        /* the featureless input rows from their owners: on the trainer's thread, after the
         * previous step's update, so every depth trains on the same rows (no copy stage runs
         * ahead with embeddings: the rows are only known here) */
        int erc = halo_train_embed_gather(t, rc == 0 && n > 0 ? s->mb.num_input : 0,
                                          s->mb.input, s->rows);
        rc = rc < 0 ? rc : erc;
        int64_t need = (int64_t)s->mb.num_input * halo_store_feat_dim(t->st);
        if (rc == 0 && n > 0 && need > t->dcap) {
            halo_free(t->dinput);
            t->dcap = need + need / 2 + 16;
            t->dinput = HALO_ALLOC(float, t->dcap);
        }
        dinput = n > 0 ? t->dinput : NULL;
    }
    if (rc == 0 && n > 0 && t->emb != NULL) {
        /* with embeddings the pass also returns the input gradient (for the owners' update) */
        keyed_minibatch(t, &s->mb, s->keybuf, s->keycap, &s->keyed);
        rc = halo_model_train_forward_backward_dx(t->m, &s->keyed, s->rows, s->labels, step,
                                                  NULL, dinput);
    } else {
        if (rc == 0 && n > 0 && !plan_copies) {
            rc = slot_upload(t, s, it->batch); /* no copy stage: staged here (CPU: no copies) */
        }
        if (rc == 0 && n > 0) {
            /* the loss is read after the Adam step (halo_model_last_stats), off the step's path */
            rc = halo_model_train_staged(t->m, s->stage, it->batch, step, NULL);
        }
    }
    /* after the pass, which waited for its gradients: no wait here (GPU: before it, this would
     * wait for the last step's Adam upload) */
    size_t count;
    float *grad = halo_model_grads(t->m, &count);
    if (rc == 0 && n > 0) {
        /* mean over our seeds -> sum over our seeds, so the allreduce sums per-seed gradients */
        float w = (float)n;
        for (size_t i = 0; i < count; i++) {
            pr->gbuf[i] = grad[i] * w;
        }
    } else {
        memset(pr->gbuf, 0, count * sizeof *pr->gbuf);
    }
    pr->gbuf[count] = rc < 0 ? 1.0f : 0.0f;
    double t1 = halo_now();
    int arc = halo_comm_allreduce_sum_f32(t->c, pr->gbuf, (int64_t)count + 1);
    if (arc < 0) {
        halo_comm_fail(t->c, arc);
    }
    double t2 = halo_now();
    if (pr->gbuf[count] != 0.0f) {
        int arc2 = halo_comm_agree(t->c, rc); /* some rank failed: all return its message */
        return arc2 < 0 ? arc2 : halo_errorf(HALO_ESTATE, "train: a rank flagged batch %lld as "
                                             "failed but reported no error", (long long)it->batch);
    }
    memcpy(grad, pr->gbuf, count * sizeof *grad);
    /* the embeddings' gradients go to their owners (collective; a failure is every rank's) */
    HALO_CHECK(halo_train_embed_update(t, dinput, (float)n, 1.0f / (float)global_n));
    rc = halo_model_adam_step(t->m, 1.0f / (float)global_n);
    if (rc == 0 && n > 0) {
        rc = halo_model_last_stats(t->m, &ms);
    }
    if (rc < 0) {
        halo_comm_fail(t->c, rc); /* local, after the last collective of the step */
    }
    double t3 = halo_now();

    acc->s.sample_s += it->end[0] - it->start[0];
    acc->s.fetch_s += it->end[1] - it->start[1];
    acc->s.copy_s += plan_copies ? it->end[2] - it->start[2] : 0.0;
    acc->s.compute_s += (t1 - t0) + (t3 - t2);
    acc->s.allreduce_s += t2 - t1;
    acc->s.batches++;
    acc->s.sampled_edges += halo_sample_edges(&s->mb);
    if (t->nrels > 0) {
        count_types(t, &s->mb, &acc->s);
    }
    acc->s.input_nodes += s->mb.num_input;
    acc->s.remote_nodes += s->pull.num_remote;
    acc->s.cache_hits += s->hits;
    acc->s.cache_misses += s->misses;
    acc->s.cache_evicted += s->evicted;
    acc->s.bytes_remote += s->bytes;
    acc->s.bytes_sent += s->sent;
    acc->s.messages += s->messages;
    acc->loss_sum += (double)ms.loss * n;
    acc->seeds += n;
    acc->correct += ms.correct;
    if (t->o->timeline != NULL) {
        halo_timeline_add(&pr->tl, t->rank, epoch, it->batch, "compute", 0, t0, t1);
        halo_timeline_add(&pr->tl, t->rank, epoch, it->batch, "allreduce", 0, t1, t3);
    }
    return 0;
}

/* Depth and sampling threads of an epoch: --depth, else the policy's pipeline hook; the same on
 * every rank (the largest asked for), since the channels a batch's collectives use depend on
 * them. Depth 0 when MPI cannot take calls from several threads. */
static int epoch_pipeline(train_ctx *t, halo_policy *pol, const halo_policy_ctx *pctx,
                          int *depth, int *threads, bool *notice)
{
    int d = 0, th = 1;
    int rc = halo_policy_pipeline(pol, pctx, &d, &th);
    if (t->o->depth >= 0) {
        d = t->o->depth;
    }
    if (t->o->sampler_threads > 0) {
        th = t->o->sampler_threads;
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    int64_t v[2] = {d, th};
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, v, 2));
    d = (int)(v[0] < HALO_PIPE_MAX_DEPTH ? v[0] : HALO_PIPE_MAX_DEPTH);
    th = (int)(v[1] < HALO_PIPE_MAX_THREADS ? v[1] : HALO_PIPE_MAX_THREADS);
    if (d > 0 && halo_comm_thread_level() < 3) {
        if (!*notice && t->rank == 0) {
            halo_notice("pipeline: MPI does not provide MPI_THREAD_MULTIPLE; depth 0");
        }
        *notice = true;
        d = 0;
    }
    *depth = d;
    *threads = d == 0 ? 1 : th > d ? d : th;
    return 0;
}

/* Makes the channels and store handles a pipeline of `threads` sampling threads needs (a fetch
 * channel and one per sampling thread), duplicating the world channel (collective: every rank
 * asks for the same count, see epoch_pipeline). */
static int pipe_channels(train_ctx *t, pipe_res *pr, int threads)
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

static void pipe_res_free(pipe_res *pr, halo_model *m)
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

/* One epoch of training through the pipeline (depth 0: the stages run inline, one batch after
 * the other). Every rank returns the same code: a stage's or the model's error is agreed on at
 * its batch boundary, the pipeline is closed alike on every rank. */
static int train_epoch(train_ctx *t, pipe_res *pr, epoch_plan *pl, int threads, int64_t nb,
                       int64_t total, uint64_t *step, epoch_acc *acc, halo_progress *prog)
{
    const halo_train_opts *o = t->o;
    bool global = o->batching == HALO_TRAIN_BATCH_GLOBAL;
    int64_t B = o->batch;
    stage_arg sarg[HALO_PIPE_MAX_THREADS], farg;
    void *sargp[HALO_PIPE_MAX_THREADS], *fargp[1] = {&farg};
    for (int i = 0; i < threads; i++) {
        sarg[i] = (stage_arg){pl, pl->depth > 0 ? pr->st[1 + i] : t->st,
                              pl->depth > 0 ? pr->smp[1 + i] : t->smp};
        sargp[i] = &sarg[i];
    }
    farg = (stage_arg){pl, pl->depth > 0 ? pr->st[0] : t->st, NULL};
    halo_pipe_opts po = {.depth = pl->depth, .batches = nb, .nstages = 2, .slots = pr->slotp,
                         .jitter_seed = (uint64_t)t->rank};
    po.stages[0] = (halo_pipe_stage){"sample", stage_sample, threads, sargp};
    po.stages[1] = (halo_pipe_stage){"fetch", stage_fetch, 1, fargp};
    if (pl->copy_stage) {
        po.stages[2] = (halo_pipe_stage){"copy", stage_copy, 1, fargp};
        po.nstages = 3;
    }
    const char *ql = getenv("HALO_PIPE_QUEUE_LEN"); /* tests: queues of one */
    po.queue_len = ql != NULL ? atoi(ql) : 0;
    halo_pipe *p = NULL;
    int rc = halo_pipe_start(&po, &p);
    rc = halo_comm_agree(t->c, rc); /* before any stage ran: a rank without threads stops all */
    for (int64_t b = 0; rc == 0 && b < nb; b++) {
        halo_pipe_item *it = NULL;
        int prc = halo_pipe_next(p, &it);
        if (prc == 1 || it == NULL) {
            halo_comm_fail(t->c, halo_errorf(HALO_ESTATE, "train: the pipeline ended at batch "
                                             "%lld of %lld", (long long)b, (long long)nb));
        }
        int64_t left = total - b * B;
        int64_t gn = left < B ? left : B;
        if (!global) {
            gn *= t->ranks; /* equal seed counts on every rank */
        }
        halo_pipe_jitter(p, b, 99); /* tests: a random delay before the compute too */
        if (o->timeline != NULL) {
            halo_timeline_add_item(&pr->tl, p, t->rank, pl->epoch, it);
        }
        rc = compute_step(t, pr, it, prc, *step, gn, acc, pl->epoch, pl->copy_stage);
        if (rc < 0) {
            break;
        }
        halo_pipe_release(p, it);
        (*step)++;
        if (prog != NULL) {
            halo_progress_update(prog, (uint64_t)b + 1);
        }
    }
    acc->s.wait_s += p != NULL ? halo_pipe_wait_s(p) : 0;
    halo_pipe_close(p); /* the same batches on every rank: the released ones + depth */
    return rc;
}

/* ---------------------------------------------------------------- set-up */

/* Everything that changes the weights a run produces, hashed into checkpoints. Not included:
 * epochs (a resumed run may go further), device and threads (same function; on GPU only float
 * rounding differs), evaluation and output settings. */
static char config_text[4096]; /* the text config_hash hashed, written into checkpoints */

static uint64_t config_hash(const train_ctx *t, const char *policy_name)
{
    const halo_train_opts *o = t->o;
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sb_printf(&sb,
                   "graph=%08x nodes=%lld parts=%d batch=%lld batching=%s hidden=%d "
                   "lr=%.9g dropout=%.9g wd=%.9g seed=%llu layers=%d fanouts=%s policy=%s(%s)",
                   halo_store_info(t->st)->graph_checksum, (long long)halo_store_info(t->st)->nodes,
                   t->ranks, (long long)o->batch, halo_train_batching_name(o->batching), o->hidden,
                   o->lr, o->dropout, o->weight_decay, (unsigned long long)o->seed, t->layers,
                   o->fanouts != NULL ? o->fanouts : "policy", policy_name,
                   o->policy != NULL ? o->policy : "");
    for (int i = 0; i < o->nsets; i++) {
        halo_sb_printf(&sb, " set=%s", o->sets[i]);
    }
    if (o->model != HALO_MODEL_SAGE) {
        halo_sb_printf(&sb, " model=%s relations=%d bases=%d", halo_model_kind_name(o->model),
                       o->relations, o->bases);
    }
    if (t->emb != NULL) {
        halo_sb_printf(&sb, " embed=%s embed_lr=%.9g", halo_embed_optim_name(o->embed_optim),
                       o->embed_lr);
    }
    char *text = NULL;
    size_t len = 0;
    if (o->policy != NULL && halo_file_read_all(o->policy, &text, &len) == 0) {
        /* the policy's text, not its name: an edited policy is another configuration */
        halo_sb_printf(&sb, " policy_text=%016llx", (unsigned long long)halo_config_hash(text));
        halo_free(text);
    }
    uint64_t h = halo_config_hash(sb.buf);
    snprintf(config_text, sizeof config_text, "%s", sb.buf); /* a refused resume names a key */
    halo_sb_free(&sb);
    return h;
}

/* Fanouts of an epoch: --fanouts, else the policy's fanout hook. On a typed partition also the
 * per-relation fanouts rfan (a plain list gives every relation the layer's number). */
static int epoch_fanouts(train_ctx *t, halo_policy *pol, const halo_policy_ctx *pctx, int *fanouts,
                         halo_rel_fanouts rfan, int *layers)
{
    if (t->o->fanouts != NULL) {
        int l;
        if (t->nrels > 0) {
            l = halo_sample_parse_rel_fanouts(t->o->fanouts, halo_store_info(t->st)->rel,
                                              t->nrels, rfan, HALO_MAX_LAYERS);
            if (l < 0) {
                return l; /* the message names --fanouts */
            }
            for (int i = 0; i < l; i++) {
                fanouts[i] = halo_sample_rel_fanout_max(rfan[i], t->nrels);
            }
        } else {
            l = halo_sample_parse_fanouts(t->o->fanouts, fanouts, HALO_MAX_LAYERS);
        }
        if (l < 0) {
            return halo_error_prefix(l, "--fanouts");
        }
        *layers = l;
        return 0;
    }
    if (t->nrels == 0) {
        return halo_policy_fanout(pol, pctx, fanouts, HALO_MAX_LAYERS, layers);
    }
    /* typed: each layer a number or a table keyed by relation name, as a spec to check */
    char spec[4096];
    int l = 0;
    HALO_CHECK(halo_policy_fanout_spec(pol, pctx, spec, sizeof spec, HALO_MAX_LAYERS, &l));
    l = halo_sample_parse_rel_fanouts(spec, halo_store_info(t->st)->rel, t->nrels, rfan,
                                      HALO_MAX_LAYERS);
    if (l < 0) {
        return halo_policy_fanout_spec_refused(pol, pctx->epoch, spec);
    }
    for (int i = 0; i < l; i++) {
        fanouts[i] = halo_sample_rel_fanout_max(rfan[i], t->nrels);
    }
    *layers = l;
    return 0;
}

int halo_train_sample(const train_ctx *t, halo_store *st, halo_sampler *smp, const int *fanouts,
                      const halo_rel_fanouts rfan, const halo_sample_key *k, const int32_t *seeds,
                      int32_t n, halo_minibatch *mb)
{
    if (t->nrels > 0) {
        return halo_store_sample_typed(st, smp, rfan, t->layers, k, seeds, n, mb);
    }
    return halo_store_sample(st, smp, fanouts, t->layers, k, seeds, n, mb);
}

/* Reads the checkpoint on rank 0 and broadcasts it; every rank returns the same code. */
static int resume_from(train_ctx *t, uint64_t hash, int *epoch, int64_t *step)
{
    size_t count;
    float *params = halo_model_params(t->m, &count);
    halo_checkpoint ck = {.config_hash = hash,
                          .config = config_text,
                          .nparams = (int64_t)count,
                          .params = params,
                          .adam_m = halo_model_adam_m(t->m),
                          .adam_v = halo_model_adam_v(t->m)};
    int rc = 0;
    if (t->rank == 0) {
        rc = halo_checkpoint_read(t->o->checkpoint, &ck);
        if (rc < 0) {
            rc = halo_error_prefix(rc, "--resume");
        } else if (ck.seed != t->o->seed) {
            rc = halo_errorf(HALO_EINPUT, "%s: checkpoint of seed %llu, this run %llu",
                             t->o->checkpoint, (unsigned long long)ck.seed,
                             (unsigned long long)t->o->seed);
        }
    }
    int64_t hdr[2] = {ck.epoch, ck.step};
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", halo_errmsg());
    int64_t code = rc;
    HALO_CHECK(halo_comm_bcast(t->c, &code, sizeof code, 0));
    if (code < 0) {
        HALO_CHECK(halo_comm_bcast(t->c, msg, sizeof msg, 0));
        return halo_errorf((int)code, "%s", msg);
    }
    HALO_CHECK(halo_comm_bcast(t->c, hdr, sizeof hdr, 0));
    HALO_CHECK(halo_comm_bcast(t->c, params, (int64_t)(count * sizeof(float)), 0));
    HALO_CHECK(halo_comm_bcast(t->c, ck.adam_m, (int64_t)(count * sizeof(float)), 0));
    HALO_CHECK(halo_comm_bcast(t->c, ck.adam_v, (int64_t)(count * sizeof(float)), 0));
    halo_model_set_adam_t(t->m, hdr[1]);
    HALO_CHECK(halo_model_push_state(t->m));
    if (t->emb != NULL) {
        /* every rank its own rows (embed-rRANK.bin) */
        int erc = halo_embed_load(t->emb, t->o->checkpoint);
        HALO_CHECK(halo_comm_agree(t->c, erc < 0 ? halo_error_prefix(erc, "--resume") : 0));
    }
    *epoch = (int)hdr[0];
    *step = hdr[1];
    return 0;
}

/* Writes the checkpoint on rank 0; every rank returns the same code. */
static int write_checkpoint(train_ctx *t, uint64_t hash, int epochs_done, int64_t step)
{
    int rc = 0;
    if (t->rank == 0) {
        rc = halo_model_pull_state(t->m);
        if (rc == 0) {
            size_t count;
            halo_checkpoint ck = {
                .epoch = epochs_done, .step = step, .seed = t->o->seed, .config_hash = hash,
                .config = config_text};
            ck.params = halo_model_params(t->m, &count);
            ck.nparams = (int64_t)count;
            ck.adam_m = halo_model_adam_m(t->m);
            ck.adam_v = halo_model_adam_v(t->m);
            rc = halo_checkpoint_write(t->o->checkpoint, &ck);
        }
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    if (t->emb != NULL) {
        /* into the directory rank 0 just committed: each rank its rows and optimiser state */
        rc = halo_embed_save(t->emb, t->o->checkpoint);
    }
    return halo_comm_agree(t->c, rc);
}

/* --check: every rank's parameter checksum must be the same. */
static int check_params(train_ctx *t, int epoch)
{
    uint64_t mine = halo_model_param_checksum(t->m);
    uint64_t *all = HALO_ALLOC(uint64_t, t->ranks);
    int rc = halo_comm_allgather(t->c, &mine, sizeof mine, all);
    for (int r = 1; rc == 0 && r < t->ranks; r++) {
        if (all[r] != all[0]) {
            rc = halo_errorf(HALO_ESTATE,
                             "--check: epoch %d: parameters differ between rank 0 (%016" PRIx64
                             ") and rank %d (%016" PRIx64 ")",
                             epoch, all[0], r, all[r]);
        }
    }
    halo_free(all);
    return rc;
}

/* ---------------------------------------------------------------- the run */

/* Frees everything of a train_ctx. */
static void ctx_free(train_ctx *t)
{
    halo_trace_discard(t->trace); /* an unfinished trace (error path) is removed */
    if (t->cache != NULL) {
        halo_cache_close(t->cache);
    }
    halo_store_pull_free(&t->pull);
    halo_sample_free(&t->mb);
    if (t->smp != NULL) {
        halo_sampler_free(t->smp);
    }
    halo_embed_free(t->emb);
    halo_free(t->egid);
    halo_free(t->epos);
    halo_free(t->ebuf);
    halo_free(t->dinput);
    halo_free(t->labels);
    halo_free(t->borrow_id);
    halo_free(t->borrow_label);
    if (t->m != NULL) {
        halo_model_free(t->m);
    }
    if (t->st != NULL) {
        halo_store_close(t->st);
    }
}

/* Set-up shared by every rank: store, policy, fanouts, device, model, labels of borrowed seeds.
 * Each step is agreed on, so a failure on one rank makes every rank return. */
static int setup(train_ctx *t, halo_policy **pol, halo_policy_ctx *pctx, bool *gpu_notice)
{
    const halo_train_opts *o = t->o;
    int rc = halo_store_open(t->c, o->pdir, &t->st);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    halo_policy_opts po = {
        .path = o->policy, .params = o->sets, .nparams = o->nsets, .rank = t->rank};
    rc = halo_policy_open(&po, pol);
    HALO_CHECK(halo_comm_agree(t->c, rc));

    const halo_part *pt = halo_store_part(t->st);
    int64_t nt[2] = {pt->num_train, -pt->num_train};
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, nt, 2));
    if (nt[0] != -nt[1]) {
        return halo_errorf(HALO_EINPUT,
                           "%s: parts hold different numbers of training seeds "
                           "(%lld to %lld); every rank must run the same number of batches",
                           o->pdir, (long long)-nt[1], (long long)nt[0]);
    }
    if (nt[0] == 0) {
        return halo_errorf(HALO_EINPUT, "%s: no training seeds", o->pdir);
    }
    pctx->rank = t->rank;
    pctx->ranks = t->ranks;
    pctx->epoch = 0;
    pctx->epochs = o->epochs;
    pctx->batch = -1;
    pctx->batch_size = (int)o->batch;
    pctx->graph.nodes = halo_store_info(t->st)->nodes;
    pctx->graph.edges = halo_store_info(t->st)->edges;
    pctx->graph.feat_dim = halo_store_feat_dim(t->st);
    pctx->graph.classes = halo_store_info(t->st)->classes;
    pctx->graph.train_nodes = pt->num_train * t->ranks;
    const halo_partinfo *pi = halo_store_info(t->st);
    if (pi->nrels > 0) {
        for (int i = 0; i < pi->ntypes; i++) {
            t->ntype_names[i] = pi->ntype_name[i];
        }
        for (int i = 0; i < pi->nrels; i++) {
            t->rel_names[i] = pi->rel[i].name;
        }
        pctx->graph.ntypes = pi->ntypes;
        pctx->graph.node_types = t->ntype_names;
        pctx->graph.nrels = pi->nrels;
        pctx->graph.relations = t->rel_names;
        pctx->graph.target_type = pi->ntype_name[pi->target_type];
    }
    pctx->part.parts = t->ranks;
    pctx->part.id = t->rank;
    pctx->part.nodes = pt->nodes;
    pctx->part.edges = pt->edges;
    pctx->part.train_nodes = pt->num_train;
    t->nrels = halo_store_info(t->st)->nrels;
    rc = epoch_fanouts(t, *pol, pctx, t->fanouts, t->rfan, &t->layers);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    if (o->eval_fanouts != NULL) {
        int l;
        if (t->nrels > 0) {
            l = halo_sample_parse_rel_fanouts(o->eval_fanouts, halo_store_info(t->st)->rel,
                                              t->nrels, t->eval_rfan, HALO_MAX_LAYERS);
            for (int i = 0; l > 0 && i < l; i++) {
                t->eval_fanouts[i] = halo_sample_rel_fanout_max(t->eval_rfan[i], t->nrels);
            }
        } else {
            l = halo_sample_parse_fanouts(o->eval_fanouts, t->eval_fanouts, HALO_MAX_LAYERS);
        }
        if (l < 0) {
            return halo_error_prefix(l, "--eval-fanouts");
        }
        if (l != t->layers) {
            return halo_errorf(HALO_EUSAGE, "--eval-fanouts: %d layers, the model has %d", l,
                               t->layers);
        }
    } else {
        memcpy(t->eval_fanouts, t->fanouts, sizeof t->fanouts);
        memcpy(t->eval_rfan, t->rfan, sizeof t->rfan);
    }

    int device, gpu;
    const char *lr_env = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int local_rank = lr_env != NULL ? atoi(lr_env) : t->rank;
    if (o->device == HALO_DEVICE_AUTO && halo_model_gpu_count() == 0) {
        *gpu_notice = true; /* resolve prints its notice on every rank; say it once instead */
        device = HALO_DEVICE_CPU;
        gpu = -1;
        rc = 0;
    } else {
        rc = halo_model_device_resolve(o->device, local_rank, &device, &gpu);
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    halo_model_config mc;
    halo_model_config_default(&mc);
    mc.layers = t->layers;
    mc.in_dim = halo_store_feat_dim(t->st);
    mc.hidden = o->hidden;
    mc.kind = o->model;
    /* RGCN's relations default to the partition's (1 on a homogeneous one); GraphSAGE ignores
     * the blocks' relations */
    mc.relations = o->relations > 0 ? o->relations : t->nrels > 0 ? t->nrels : 1;
    mc.bases = o->bases;
    mc.classes = halo_store_info(t->st)->classes;
    mc.dropout = (float)o->dropout;
    mc.lr = (float)o->lr;
    mc.weight_decay = (float)o->weight_decay;
    mc.seed = o->seed;
    mc.device = device;
    mc.gpu = gpu;
    mc.threads = o->threads;
    /* tests: HALO_COPY_STAGE=1 runs the GPU's copy stage on the CPU too, with real copies */
    const char *cs = getenv("HALO_COPY_STAGE");
    mc.copy_stage = cs != NULL && atoi(cs) > 0;
    if (mc.threads == 0) {
        /* the cores of this machine shared among the ranks on it (mpirun sets the local size) */
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int local = ls != NULL && atoi(ls) > 0 ? atoi(ls) : 1;
        mc.threads = cores > local ? (int)(cores / local) : 1;
    }
    rc = halo_model_create(&mc, &t->m);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    HALO_CHECK(halo_comm_agree(t->c, halo_train_embed_setup(t)));
    t->smp = halo_sampler_new();
    rc = halo_train_borrow_labels(t);
    return halo_comm_agree(t->c, rc);
}

/* The remote ids of every batch from start_epoch to the end, for a policy that asks for next-use
 * hints (Belady): the run is sampled once ahead with the first epoch's fanouts (sampling is
 * deterministic, invariant 1). Collective: every rank samples the same number of batches. */
static int presample_future(train_ctx *t, int start_epoch, halo_cache_future *f)
{
    const halo_part *pt = halo_store_part(t->st);
    int64_t nt = pt->num_train, B = t->o->batch;
    bool global = t->o->batching == HALO_TRAIN_BATCH_GLOBAL;
    int64_t total = global ? nt * t->ranks : nt, nb = (total + B - 1) / B;
    int64_t *all_orig = NULL;
    int rc = 0;
    if (global) {
        const int64_t *orig = halo_store_orig_ids(t->st);
        int64_t *mine = HALO_ALLOC(int64_t, nt > 0 ? nt : 1);
        for (int64_t i = 0; i < nt; i++) {
            mine[i] = orig[pt->train[i]];
        }
        all_orig = HALO_ALLOC(int64_t, total > 0 ? total : 1);
        rc = halo_comm_allgather(t->c, mine, nt * (int64_t)sizeof(int64_t), all_orig);
        halo_free(mine);
    }
    halo_order_key *keys = HALO_ALLOC(halo_order_key, total > 0 ? total : 1);
    int32_t *order = HALO_ALLOC(int32_t, nt > 0 ? nt : 1);
    int64_t *boff = HALO_ALLOC(int64_t, nb + 1);
    int32_t *rid = NULL;
    int64_t cap = 0;
    for (int ep = start_epoch; rc == 0 && ep < t->o->epochs; ep++) {
        epoch_order(t, ep, all_orig, keys, order, boff);
        for (int64_t b = 0; rc == 0 && b < nb; b++) {
            halo_sample_key k = {t->o->seed, ep, b};
            rc = halo_train_sample(t, t->st, t->smp, t->fanouts, t->rfan, &k, order + boff[b],
                                   (int32_t)(boff[b + 1] - boff[b]), &t->mb);
            if (rc == 0 && t->mb.num_input > cap) {
                cap = t->mb.num_input + t->mb.num_input / 2 + 64;
                halo_free(rid);
                rid = HALO_ALLOC(int32_t, cap);
            }
            int64_t m = 0;
            for (int32_t i = 0; rc == 0 && i < t->mb.num_input; i++) {
                if (!halo_store_is_local(t->st, t->mb.input[i])) {
                    rid[m++] = t->mb.input[i];
                }
            }
            halo_cache_future_add(f, rid, m);
        }
    }
    halo_free(rid);
    halo_free(boff);
    halo_free(order);
    halo_free(keys);
    halo_free(all_orig);
    return rc;
}

/* Opens the remote-feature cache when the policy has a cache_init hook (with the run's look-ahead
 * when it asks for next-use hints), pulls its initial contents and opens the --trace file
 * (collective: every rank pulls, possibly nothing). */
static int setup_cache(train_ctx *t, halo_policy *pol, const halo_policy_ctx *pctx, int64_t nb,
                       int start_epoch)
{
    const halo_store *st = t->st;
    const halo_part *pt = halo_store_part(st);
    int rc = 0;
    int32_t *owner = NULL;
    double *p = NULL, *vip = NULL;
    float *rows = NULL;
    halo_cache_future *fut = NULL;
    /* owners of the halo nodes: for the cache's context and for the trace's halo record */
    owner = HALO_ALLOC(int32_t, pt->num_halo > 0 ? pt->num_halo : 1);
    for (int64_t h = 0; h < pt->num_halo; h++) {
        owner[h] = halo_store_owner(st, pt->halo[h]);
    }
    int32_t *hntype = NULL; /* ctx.halo.ntype of a typed partition */
    if (pt->halo_ntype != NULL) {
        hntype = HALO_ALLOC(int32_t, pt->num_halo > 0 ? pt->num_halo : 1);
        for (int64_t h = 0; h < pt->num_halo; h++) {
            hntype[h] = pt->halo_ntype[h];
        }
    }
    if (halo_policy_hooks(pol) & (1u << HALO_POLICY_CACHE_INIT)) {
        int hint = halo_cache_policy_hint(pol);
        if (hint == HALO_CACHE_HINT_NEXT_USE) {
            fut = halo_cache_future_new();
            rc = halo_comm_agree(t->c, presample_future(t, start_epoch, fut));
            if (rc != 0) {
                goto fail;
            }
        }
        if (hint == HALO_CACHE_HINT_VIP) {
            /* inclusion probabilities over this part's CSR (propagation stops at other parts) */
            p = HALO_ALLOC(double, halo_store_info(st)->nodes + 1);
            halo_cache_vip(halo_store_info(st)->nodes, halo_store_start(st), halo_store_end(st),
                           pt->indptr, pt->indices, pt->train, pt->num_train, (int)t->o->batch,
                           t->fanouts, t->layers, p);
            vip = HALO_ALLOC(double, pt->num_halo > 0 ? pt->num_halo : 1);
            for (int64_t h = 0; h < pt->num_halo; h++) {
                vip[h] = p[pt->halo[h]];
            }
        }
        halo_cache_opts co = {
            .policy = pol,
            .rank = t->rank,
            .ranks = t->ranks,
            .num_halo = pt->num_halo,
            .halo_ids = pt->halo,
            .halo_deg = pt->halo_deg,
            .halo_owner = owner,
            .halo_ntype = hntype,
            .vip = vip,
            .feat_dim = halo_store_feat_dim(st),
            .epochs = t->o->epochs,
            .batches = nb,
            .batch_size = (int)t->o->batch,
            .graph = pctx->graph,
            .part = pctx->part,
        };
        rc = halo_cache_open(&co, fut, &t->cache);
        fut = NULL; /* the cache owns it */
    }
fail:
    halo_cache_future_free(fut);
    rc = halo_comm_agree(t->c, rc);
    if (rc == 0) {
        const int32_t *ids = NULL;
        int64_t n = t->cache != NULL ? halo_cache_init_ids(t->cache, &ids) : 0;
        rows = HALO_ALLOC(float, n * halo_store_feat_dim(st) > 0 ? n * halo_store_feat_dim(st) : 1);
        rc = halo_store_pull_rows(t->st, ids, n, rows, &t->pull);
        if (rc == 0 && n > 0) {
            rc = halo_cache_init_fill(t->cache, rows);
        }
        if (rc == 0 && t->o->trace != NULL) {
            char path[4200];
            if (t->ranks > 1) {
                snprintf(path, sizeof path, "%s.r%d", t->o->trace, t->rank);
            } else {
                snprintf(path, sizeof path, "%s", t->o->trace);
            }
            rc = halo_trace_create(path, t->ranks, halo_store_feat_dim(st),
                                   halo_store_info(st)->nodes, &t->trace);
            if (rc == 0) {
                rc = halo_trace_put_halo(t->trace, t->rank, pt->num_halo, pt->halo, pt->halo_deg,
                                         owner, vip);
            }
        }
        rc = halo_comm_agree(t->c, rc);
    }
    halo_free(rows);
    halo_free(vip);
    halo_free(p);
    halo_free(owner);
    halo_free(hntype);
    return rc;
}

/* Gathers every rank's --timeline events; rank 0 writes them (JSON Lines, docs/pipeline.md).
 * Collective; every rank returns the same code. */
static int write_timeline(train_ctx *t, pipe_res *pr)
{
    int64_t n = pr->tl.n;
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, &n, 1));
    halo_timeline_event *mine = HALO_NEW(halo_timeline_event, n > 0 ? n : 1);
    halo_timeline_event *all = HALO_NEW(halo_timeline_event, n > 0 ? n * t->ranks : 1);
    if (pr->tl.n > 0) {
        memcpy(mine, pr->tl.ev, (size_t)pr->tl.n * sizeof *mine);
    }
    for (int64_t i = pr->tl.n; i < n; i++) {
        mine[i].rank = -1; /* padding up to the longest rank's count */
    }
    int rc = halo_comm_allgather(t->c, mine, n * (int64_t)sizeof *mine, all);
    if (rc == 0 && t->rank == 0) {
        int64_t m = 0;
        for (int64_t i = 0; i < n * t->ranks; i++) {
            if (all[i].rank >= 0) {
                all[m++] = all[i];
            }
        }
        rc = halo_timeline_write(t->o->timeline, all, m);
    }
    halo_free(all);
    halo_free(mine);
    return halo_comm_agree(t->c, rc);
}

/* ---------------------------------------------------------------- the run */

/* What halo_train_run keeps across its set-up, epochs and finish. */
typedef struct train_run {
    halo_policy *pol;              /* the policy */
    halo_policy_ctx pctx;          /* the context its hooks see */
    const char *policy_name;       /* its name */
    uint64_t hash;                 /* configuration hash (checkpoints) */
    halo_metrics *mf;              /* --metrics file on rank 0, NULL = none */
    int start_epoch;               /* first epoch this run trains */
    int64_t step;                  /* global steps taken so far */
    int64_t nt;                    /* training seeds of this rank */
    int64_t total;                 /* seeds ordered per epoch (this rank's, or all: global) */
    int64_t nb;                    /* batches per epoch */
    int64_t *all_orig;             /* global batching: every rank's seeds' orig ids */
    halo_order_key *keys;          /* epoch order scratch */
    int32_t *order;                /* this rank's seeds in epoch order */
    int64_t *boff;                 /* batch offsets into order */
    halo_epoch_stats *all_stats;   /* every rank's record of the epoch */
    halo_sb sb;                    /* metrics line scratch */
    bool gpu_notice, mt_notice;    /* notices said once */
    pipe_res *pr;                  /* pipeline resources */
    int last_depth, last_threads;  /* pipeline settings last announced */
    double train_time;             /* seconds of the epochs trained */
    int trained;                   /* epochs trained */
} train_run;

/* Empties a string builder for the next metrics line. */
static void sb_reset(halo_sb *sb)
{
    sb->len = 0;
    if (sb->buf != NULL) {
        sb->buf[0] = 0;
    }
}

/* Set-up: store, policy and model (setup), the checkpoint to resume, the metrics file, the
 * emulated network, the epoch order's buffers, the cache, the pipeline's resources and the
 * start-up line. Collective; every rank returns the same code. */
static int run_setup(train_ctx *t, train_run *r, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    halo_comm *c = t->c;
    int rc = 0;
    HALO_CHECK(setup(t, &r->pol, &r->pctx, &r->gpu_notice));
    r->policy_name = halo_policy_name(r->pol);
    snprintf(res->device, sizeof res->device, "%s",
             halo_model_device_name(halo_model_config_of(t->m)->device));
    r->hash = config_hash(t, r->policy_name);
    if (o->resume) {
        HALO_CHECK(resume_from(t, r->hash, &r->start_epoch, &r->step));
    }
    res->start_epoch = r->start_epoch;
    res->epochs = r->start_epoch;
    res->steps = r->step;
    if (t->rank == 0 && o->metrics != NULL) {
        rc = halo_metrics_open(o->metrics, &r->mf);
    }
    HALO_CHECK(halo_comm_agree(c, rc));
    if (o->netem != NULL) {
        halo_netem ne;
        HALO_CHECK(halo_netem_parse(o->netem, &ne));
        halo_comm_set_netem(c, &ne);
    }

    const halo_part *pt = halo_store_part(t->st);
    int64_t B = o->batch;
    bool global = o->batching == HALO_TRAIN_BATCH_GLOBAL;
    r->nt = pt->num_train;
    r->total = global ? r->nt * t->ranks : r->nt;
    r->nb = (r->total + B - 1) / B;
    if (global) {
        const int64_t *orig = halo_store_orig_ids(t->st);
        int64_t *mine = HALO_ALLOC(int64_t, r->nt);
        for (int64_t i = 0; i < r->nt; i++) {
            mine[i] = orig[pt->train[i]];
        }
        r->all_orig = HALO_ALLOC(int64_t, r->total);
        rc = halo_comm_allgather(c, mine, r->nt * (int64_t)sizeof(int64_t), r->all_orig);
        halo_free(mine);
        HALO_CHECK(rc);
    }
    r->keys = HALO_ALLOC(halo_order_key, r->total);
    r->order = HALO_ALLOC(int32_t, r->nt);
    r->boff = HALO_ALLOC(int64_t, r->nb + 1);
    r->all_stats = HALO_ALLOC(halo_epoch_stats, t->ranks);
    r->pctx.batches = r->nb;
    HALO_CHECK(setup_cache(t, r->pol, &r->pctx, r->nb, r->start_epoch));
    pipe_res *pr = r->pr = HALO_NEW(pipe_res, 1);
    for (int i = 0; i <= HALO_PIPE_MAX_DEPTH; i++) {
        pr->slotp[i] = &pr->slot[i];
    }
    size_t nparams;
    halo_model_grads(t->m, &nparams);
    pr->gbuf = HALO_ALLOC(float, nparams + 1);
    double origin = -halo_now(); /* the earliest clock of all ranks: one time axis */
    HALO_CHECK(halo_comm_allreduce_max_f64(c, &origin, 1));
    halo_timeline_init(&pr->tl, -origin);
    if (t->rank == 0) {
        if (r->gpu_notice) {
            halo_notice("--device auto: no GPU found, training on the CPU");
        }
        char fo[256] = "";
        bool named = o->fanouts != NULL && t->nrels > 0;
        if (named) {
            snprintf(fo, sizeof fo, "%s", o->fanouts);
        }
        for (int l = 0; !named && l < t->layers; l++) {
            size_t len = strlen(fo);
            snprintf(fo + len, sizeof fo - len, "%s%d", l ? "," : "", t->fanouts[l]);
        }
        halo_info("train: %d rank%s, device %s, policy %s, fanouts %s, batch %lld (%s), model %s, "
                  "hidden %d, %lld training seeds per rank, %lld batches per epoch, epochs %d..%d",
                  t->ranks, t->ranks == 1 ? "" : "s", res->device, r->policy_name, fo, (long long)B,
                  halo_train_batching_name(o->batching),
                  halo_model_kind_name(halo_model_config_of(t->m)->kind), o->hidden,
                  (long long)r->nt, (long long)r->nb, r->start_epoch, o->epochs - 1);
    }
    return 0;
}

/* Rank 0's records of an epoch: every rank's epoch record and the eval record in the metrics
 * file, the table row. */
static int epoch_report(train_ctx *t, train_run *r, int ep, double loss, double train_acc,
                        bool do_eval, double va, double ta)
{
    int rc = 0;
    const halo_partinfo *pi = halo_store_info(t->st);
    halo_metrics_types ty = {.ntypes = pi->ntypes, .nrels = pi->nrels};
    for (int i = 0; i < pi->ntypes; i++) {
        ty.ntype[i] = pi->ntype_name[i];
    }
    for (int i = 0; i < pi->nrels; i++) {
        ty.rel[i] = pi->rel[i].name;
    }
    for (int k = 0; r->mf != NULL && rc == 0 && k < t->ranks; k++) {
        sb_reset(&r->sb);
        halo_metrics_epoch_typed_json(&r->sb, "run", r->policy_name, &r->all_stats[k],
                                      t->nrels > 0 ? &ty : NULL);
        rc = halo_metrics_line(r->mf, r->sb.buf);
    }
    if (r->mf != NULL && rc == 0 && do_eval) {
        sb_reset(&r->sb);
        halo_metrics_eval_json(&r->sb, ep, va, ta);
        rc = halo_metrics_line(r->mf, r->sb.buf);
    }
    if (t->o->table) {
        halo_metrics_table_row(stderr, ep, r->all_stats, t->ranks, loss, train_acc, va,
                               ep == r->start_epoch);
    }
    return rc;
}

/* The epoch's record and counts in the policy's context (epoch_end hooks read it). */
static void epoch_context(train_run *r, const epoch_acc *acc, double loss)
{
    halo_policy_stats *le = &r->pctx.last_epoch;
    le->epoch = acc->s.epoch;
    le->batches = acc->s.batches;
    le->seeds = acc->seeds;
    le->input_nodes = acc->s.input_nodes;
    le->sampled_edges = acc->s.sampled_edges;
    le->remote_nodes = acc->s.remote_nodes;
    le->cache_hits = acc->s.cache_hits;
    le->cache_misses = acc->s.cache_misses;
    le->bytes_remote = acc->s.bytes_remote;
    le->loss = loss;
    le->time_s = acc->s.time_s;
    le->sample_s = acc->s.sample_s;
    le->fetch_s = acc->s.fetch_s;
    le->compute_s = acc->s.compute_s;
    le->wait_s = acc->s.wait_s;
    r->pctx.step = r->step;
}

/* One epoch: the policy's fanouts and pipeline, the epoch order, the batches (train_epoch),
 * the global loss, evaluation, records, checkpoint, --check and the epoch_end hook.
 * Collective; every rank returns the same code. */
static int run_epoch(train_ctx *t, train_run *r, int ep, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    halo_comm *c = t->c;
    pipe_res *pr = r->pr;
    r->pctx.epoch = ep;
    r->pctx.step = r->step;
    int lay = t->layers;
    int rc = epoch_fanouts(t, r->pol, &r->pctx, t->fanouts, t->rfan, &lay);
    if (rc == 0 && lay != t->layers) {
        rc = halo_errorf(HALO_ELUA,
                         "policy %s: fanout returned %d layers at epoch %d, the "
                         "model has %d",
                         r->policy_name, lay, ep, t->layers);
    }
    HALO_CHECK(halo_comm_agree(c, rc));
    int depth, threads;
    HALO_CHECK(epoch_pipeline(t, r->pol, &r->pctx, &depth, &threads, &r->mt_notice));
    if (depth > 0) {
        HALO_CHECK(pipe_channels(t, pr, threads));
    }
    if (depth != r->last_depth || threads != r->last_threads) {
        halo_info("train: pipeline depth %d%s, %d sampling thread%s (from epoch %d)", depth,
                  depth == 0 ? " (synchronous)" : "", threads, threads == 1 ? "" : "s", ep);
        r->last_depth = depth;
        r->last_threads = threads;
    }
    epoch_order(t, ep, r->all_orig, r->keys, r->order, r->boff);
    halo_progress prog;
    bool bar = t->rank == 0 && o->table && isatty(2);
    if (bar) {
        char label[32];
        snprintf(label, sizeof label, "epoch %d", ep);
        halo_progress_begin(&prog, label, (uint64_t)r->nb);
    }
    epoch_acc acc;
    memset(&acc, 0, sizeof acc);
    double te0 = halo_now();
    /* the copy stage only where there is something to copy: the CPU reads the rows in place */
    const halo_model_config *mcfg = halo_model_config_of(t->m);
    /* the copy stage runs ahead of the trainer: not with embeddings, whose rows are gathered on
     * the trainer's thread just before the pass */
    bool copies = (mcfg->device == HALO_DEVICE_GPU || mcfg->copy_stage) && t->emb == NULL;
    epoch_plan plan = {t, ep, (uint64_t)r->step, r->order, r->boff, depth, copies};
    uint64_t ustep = (uint64_t)r->step;
    rc = train_epoch(t, pr, &plan, threads, r->nb, r->total, &ustep, &acc, bar ? &prog : NULL);
    r->step = (int64_t)ustep;
    acc.s.time_s = halo_now() - te0;
    if (bar) {
        halo_progress_end(&prog);
    }
    HALO_CHECK(rc);
    r->train_time += acc.s.time_s;
    r->trained++;
    acc.s.epoch = ep;
    acc.s.rank = t->rank;
    acc.s.ranks = t->ranks;
    acc.s.loss = acc.seeds > 0 ? acc.loss_sum / (double)acc.seeds : 0;
    acc.s.train_acc = acc.seeds > 0 ? (double)acc.correct / (double)acc.seeds : 0;
    double g[3] = {acc.loss_sum, (double)acc.seeds, (double)acc.correct};
    HALO_CHECK(halo_comm_allreduce_sum_f64(c, g, 3));
    double loss = g[0] / g[1], train_acc = g[2] / g[1];
    if (ep < 1024) {
        res->loss[ep] = loss;
    }
    res->epochs = ep + 1;
    res->steps = r->step;

    bool do_eval = o->eval != HALO_TRAIN_EVAL_NONE &&
                   ((ep + 1) % o->eval_every == 0 || ep + 1 == o->epochs);
    double va = -1, ta = -1;
    if (do_eval) {
        rc = o->eval == HALO_TRAIN_EVAL_FULL ? halo_train_eval_full(t, &va, &ta)
                                             : halo_train_eval_sampled(t, ep, &va, &ta);
        if (rc < 0) {
            halo_comm_fail(c, rc); /* peers may wait in an evaluation collective */
        }
        res->val_acc = va;
        res->test_acc = ta;
    }
    HALO_CHECK(halo_comm_allgather(c, &acc.s, sizeof acc.s, r->all_stats));
    if (t->rank == 0) {
        rc = epoch_report(t, r, ep, loss, train_acc, do_eval, va, ta);
    }
    HALO_CHECK(halo_comm_agree(c, rc));
    if (o->checkpoint != NULL && ((ep + 1) % o->checkpoint_every == 0 || ep + 1 == o->epochs)) {
        HALO_CHECK(write_checkpoint(t, r->hash, ep + 1, r->step));
    }
    if (o->check) {
        HALO_CHECK(check_params(t, ep));
    }
    epoch_context(r, &acc, loss);
    if (t->cache != NULL) {
        /* the cache's context carries the cache and halo views the hook may read */
        halo_cache_ctx(t->cache)->last_epoch = r->pctx.last_epoch;
        rc = halo_cache_epoch_end(t->cache, ep);
    } else {
        rc = halo_policy_epoch_end(r->pol, &r->pctx);
    }
    return halo_comm_agree(c, rc);
}

/* Finish: the trace closed, the timeline written, the result's totals and the summary record;
 * the metrics file renamed into place. Collective; every rank returns the same code. */
static int run_finish(train_ctx *t, train_run *r, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    int rc = 0;
    if (t->trace != NULL) {
        rc = halo_trace_close(t->trace);
        t->trace = NULL;
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    if (o->timeline != NULL) {
        HALO_CHECK(write_timeline(t, r->pr));
    }
    res->mean_epoch_s = r->trained > 0 ? r->train_time / r->trained : 0;
    res->param_checksum = halo_model_param_checksum(t->m);
    if (t->emb != NULL) {
        uint64_t mine = halo_embed_checksum(t->emb);
        uint64_t *all = HALO_ALLOC(uint64_t, t->ranks);
        rc = halo_comm_allgather(t->c, &mine, sizeof mine, all);
        uint64_t h = 1469598103934665603ULL;
        for (int k = 0; k < t->ranks; k++) {
            h = (h ^ all[k]) * 1099511628211ULL;
        }
        res->embed_checksum = h;
        halo_free(all);
        HALO_CHECK(rc);
    }
    if (t->rank == 0 && r->mf != NULL) {
        sb_reset(&r->sb);
        halo_metrics_run run = {
            .policy = r->policy_name,
            .batching = halo_train_batching_name(o->batching),
            .eval = halo_train_eval_name(o->eval),
            .ranks = t->ranks,
            .layers = t->layers,
            .fanouts = t->fanouts,
            .threads = halo_model_config_of(t->m)->threads,
            .train_seeds = r->nt * t->ranks,
        };
        halo_metrics_summary_json(&r->sb, o, res, &run);
        rc = halo_metrics_line(r->mf, r->sb.buf);
        if (rc == 0) {
            rc = halo_metrics_close(r->mf);
        } else {
            halo_metrics_abort(r->mf);
        }
        r->mf = NULL;
    }
    return halo_comm_agree(t->c, rc);
}

/* Frees what run_setup made (an unfinished metrics file is removed). */
static void run_free(train_ctx *t, train_run *r)
{
    if (r->mf != NULL) {
        halo_metrics_abort(r->mf);
    }
    halo_sb_free(&r->sb);
    halo_free(r->all_stats);
    halo_free(r->boff);
    halo_free(r->order);
    halo_free(r->keys);
    halo_free(r->all_orig);
    if (r->pr != NULL) {
        pipe_res_free(r->pr, t->m); /* store clones before the store, stages before the model */
        halo_free(r->pr);
    }
    ctx_free(t); /* before the policy: the cache calls its hooks */
    if (r->pol != NULL) {
        halo_policy_close(r->pol);
    }
}

int halo_train_run(halo_comm *c, const halo_train_opts *o, halo_train_result *res)
{
    train_ctx t;
    memset(&t, 0, sizeof t);
    memset(res, 0, sizeof *res);
    res->val_acc = res->test_acc = -1;
    t.c = c;
    t.o = o;
    t.rank = halo_comm_rank(c);
    t.ranks = halo_comm_size(c);
    train_run r;
    memset(&r, 0, sizeof r);
    halo_sb_init(&r.sb);
    r.last_depth = r.last_threads = -1;
    int rc = run_setup(&t, &r, res);
    for (int ep = r.start_epoch; rc == 0 && ep < o->epochs; ep++) {
        rc = run_epoch(&t, &r, ep, res);
    }
    if (rc == 0) {
        rc = run_finish(&t, &r, res);
    }
    run_free(&t, &r);
    return rc;
}
