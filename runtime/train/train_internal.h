/* Shared state of the training loop and the evaluation (private to runtime/train). */
#ifndef HALO_TRAIN_INTERNAL_H
#define HALO_TRAIN_INTERNAL_H

#include "cache/cache.h"
#include "cache/trace.h"
#include "comm/comm.h"
#include "embed/embed.h"
#include "model/model.h"
#include "plan/plan.h"
#include "sample/sample.h"
#include "store/store.h"
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

/* Samples a mini-batch on st with fanouts f: the typed sampler with its per-relation fanouts on
 * a typed partition, else the homogeneous one. Collective. */
int halo_train_sample(const train_ctx *t, halo_store *st, halo_sampler *smp,
                      const halo_plan_fanouts *f, const halo_sample_key *k, const int32_t *seeds,
                      int32_t n, halo_minibatch *mb);

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
