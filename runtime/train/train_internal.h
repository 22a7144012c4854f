/* The trainer's state and the functions its files share (private to runtime/train): the
 * context, the pipeline's slots and resources, the run's state; stages.c, step.c, setup.c,
 * typed.c and rows.c declare here what the others call. */
#ifndef HALO_TRAIN_INTERNAL_H
#define HALO_TRAIN_INTERNAL_H

#include "cache/cache.h"
#include "cache/trace.h"
#include "comm/comm.h"
#include "core/json.h"
#include "core/progress.h"
#include "embed/embed.h"
#include "model/model.h"
#include "order/order.h"
#include "pipe/pipe.h"
#include "pipe/timeline.h"
#include "plan/plan.h"
#include "sample/sample.h"
#include "store/store.h"
#include "train/metrics.h"
#include "train/train.h"

#include <stddef.h>
#include <stdint.h>

/* One rank's training state. */
typedef struct train_ctx {
    halo_comm *c;                 /* world channel (not owned) */
    const halo_train_opts *o;     /* options (not owned) */
    halo_store *st;               /* this rank's part */
    halo_model *m;                /* the model */
    halo_cache *cache;            /* remote-feature cache, NULL when the policy has no cache_init */
    halo_trace_writer *trace;     /* access trace being written (--trace), NULL = none */
    int rank;                     /* this rank */
    int ranks;                    /* ranks == parts */
    int layers;                   /* model layers */
    halo_plan_fanouts given;      /* --fanouts, parsed once (layers 0: the policy's) */
    halo_plan_fanouts fan;        /* training fanouts of the current epoch */
    halo_plan_fanouts eval_fan;   /* fanouts of sampled evaluation */
    int nrels;                    /* relations of a typed partition, 0 = homogeneous */
    halo_embed *emb;                   /* learnable rows of the featureless types, NULL = none */
    uint8_t featless[HALO_MAX_NTYPES]; /* 1: node type t has no features (rows from emb) */
    int64_t ne;                        /* featureless input nodes of the last gather */
    int64_t ecap;                      /* capacity of egid, epos, ebuf (rows) */
    int32_t *egid;                     /* [ne] their global ids */
    int64_t *epos;                     /* [ne] their positions in the batch's input */
    float *ebuf;                       /* [ne x feat_dim] rows gathered / gradients pushed */
    float *dinput;                     /* [num_input x feat_dim] the model's input gradient */
    halo_plan_names names;             /* the policy's ctx.graph.node_types and relations */
    int64_t dcap;                      /* floats allocated in dinput */
    halo_sampler *smp;                 /* sampler scratch */
    halo_minibatch mb;                 /* current mini-batch */
    halo_store_pull pull;                    /* reusable pull plan */
    int32_t *labels;                   /* labels of the current batch's seeds */
    int64_t labels_cap;                /* capacity of labels */
    int64_t nborrow;                   /* training seeds of this rank owned by another rank */
    int32_t *borrow_id;                /* [nborrow] their global ids, ascending */
    int32_t *borrow_label;             /* [nborrow] their labels (pulled from the owners once) */
} train_ctx;

/* Stage times and counts accumulated over an epoch on this rank. */
typedef struct epoch_acc {
    halo_epoch_stats s; /* the record (times, counts) */
    double loss_sum;    /* sum over batches of seeds x mean loss */
    int64_t seeds;      /* seeds trained */
    int64_t correct;    /* seeds predicted right */
} epoch_acc;

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

/* What halo_train_run keeps across its set-up, epochs and finish. */
typedef struct train_run {
    train_ctx *t;                  /* the trainer */
    halo_policy *pol;              /* the policy */
    halo_policy_ctx pctx;          /* the context its hooks see */
    const char *policy_name;       /* its name */
    uint64_t hash;                 /* configuration hash (checkpoints) */
    char config[4096];             /* the text hashed into hash: a refused resume names the
                                      first setting that differs */
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

/* ---- stages.c: the pipeline's stages and the epoch order they read */

/* Samples a mini-batch on st with fanouts f: the typed sampler with its per-relation fanouts on
 * a typed partition, else the homogeneous one (the sample stage's and the evaluation's).
 * Collective. */
int halo_train_sample(const train_ctx *t, halo_store *st, halo_sampler *smp,
                      const halo_plan_fanouts *f, const halo_sample_key *k, const int32_t *seeds,
                      int32_t n, halo_minibatch *mb);

/* Epoch order (runtime/order, shared with the simulator): local batching orders this rank's
 * seeds; global batching orders everybody's (orig ids gathered once in all_orig) and keeps this
 * rank's seeds of each global batch. Fills order[nt] and boff[nb+1] (batch b = order[boff[b] ..
 * boff[b+1])). keys is scratch of nt (local) or ranks * nt (global) entries. */
void halo_train_epoch_order(const train_ctx *t, int epoch, const int64_t *all_orig,
                            halo_order_key *keys, int32_t *order, int64_t *boff);

/* The mini-batch as the model sees it: sources keyed by input-graph id, so dropout masks do not
 * depend on the partition numbering (1 rank and P ranks drop the same units). The keys go into
 * keybuf/keycap (per layer; grown as needed), the caller's (a pipeline slot's). */
void halo_train_keyed_minibatch(const train_ctx *t, const halo_minibatch *mb,
                                int32_t **keybuf, int64_t *keycap, halo_minibatch *out);

/* Stage 1: sample the batch's blocks on this thread's channel (collective: batch b runs on
 * sampling thread b % T of every rank, so the calls on each channel match), and look up the
 * seeds' labels. A failure inside the collective cannot be carried to a batch boundary (peers
 * wait in it): it ends the job. */
int halo_train_stage_sample(void *arg, halo_pipe_item *it);

/* Stage 2: the feature pull, with the cache between plan and exec (docs/cache.md). One thread,
 * batches in order, so the cache's lookups and admissions happen in the same order at every
 * depth (invariant 2). A policy error (cache_batch in Lua) is returned after the pull's
 * collective call was still made, so no peer waits: the trainer agrees on it at the batch
 * boundary. */
int halo_train_stage_fetch(void *arg, halo_pipe_item *it);

/* Keys the slot's batch and stages it for the model (halo_model_stage_upload). */
int halo_train_slot_upload(train_ctx *t, batch_slot *s, int64_t batch);

/* Stage 3 (GPU): the copy stage. The slot's batch goes to the device on the model's copy stream
 * while the trainer computes the batch before it (docs/pipeline.md). No collectives; skipped
 * after an earlier stage's error and for a batch without seeds. */
int halo_train_stage_copy(void *arg, halo_pipe_item *it);

/* Makes the channels and store handles a pipeline of `threads` sampling threads needs (a fetch
 * channel and one per sampling thread), duplicating the world channel (collective: every rank
 * asks for the same count, see epoch_pipeline). */
int halo_train_pipe_channels(train_ctx *t, pipe_res *pr, int threads);

/* Frees the pipeline's channels, store clones and slots (before the store and the model). */
void halo_train_pipe_free(pipe_res *pr, halo_model *m);

/* ---- step.c: an epoch's batches */

/* One epoch of training through the pipeline (depth 0: the stages run inline, one batch after
 * the other). Every rank returns the same code: a stage's or the model's error is agreed on at
 * its batch boundary, the pipeline is closed alike on every rank. */
int halo_train_epoch_batches(train_ctx *t, pipe_res *pr, epoch_plan *pl, int threads,
                             int64_t nb, int64_t total, uint64_t *step, epoch_acc *acc,
                             halo_progress *prog);

/* ---- setup.c: the run's set-up and its end */

/* Set-up: store, policy and model (setup), the checkpoint to resume, the metrics file, the
 * emulated network, the epoch order's buffers, the cache, the pipeline's resources and the
 * start-up line. Collective; every rank returns the same code. */
int halo_train_setup(train_ctx *t, train_run *r, halo_train_result *res);

/* Frees what halo_train_setup made (an unfinished metrics file is removed). */
void halo_train_free(train_ctx *t, train_run *r);

/* ---- typed.c: learnable embeddings of featureless node types */

/* Creates t->emb when the partition has a node type of width 0 (and the model's input is at
 * least one column wide): one row of feat_dim floats per owned node of such a type, keyed by its
 * input-graph id, optimiser and learning rate from the options. Collective. */
int halo_train_embed_setup(train_ctx *t);

/* Writes the embedding rows of the featureless nodes among gid[n] into rows (n x feat_dim, the
 * input of the batch) and remembers them for halo_train_embed_update. Collective (every rank,
 * n may be 0); a failure is every rank's. No-op without embeddings. */
int halo_train_embed_gather(train_ctx *t, int64_t n, const int32_t *gid, float *rows);

/* Sends the input gradient rows of the last gather's featureless nodes (d_input[num_input x
 * feat_dim], NULL when this rank trained no seed) times w to their owners, which apply
 * the optimiser with grad_scale. Collective; a failure is every rank's. */
int halo_train_embed_update(train_ctx *t, const float *d_input, float w, float grad_scale);

/* ---- rows.c: what both the epoch loop and the evaluation use */

/* Rows of a table owned by other ranks (collective: every rank calls it, n may be 0). ids are
 * global ids sorted ascending (so grouped by owner); each owner answers with
 * table[(id - its start) * row_bytes ...]; out receives n rows of row_bytes in ids' order.
 * Two batched exchanges (requests, replies). */
int halo_train_fetch_rows(halo_comm *c, const halo_store *st, const int32_t *ids, int64_t n,
                          const void *table, size_t row_bytes, void *out);

/* Pulls the labels of the training seeds this rank holds but does not own (DistDGL's force-even
 * split lends a few) into t->borrow_id / t->borrow_label. Collective. */
int halo_train_borrow_labels(train_ctx *t);

/* Label of a training seed held by this rank (owned or borrowed). */
int32_t halo_train_seed_label(const train_ctx *t, int32_t gid);

#endif
