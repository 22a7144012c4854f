/* The decisions a run takes before and during its epochs, made once for the trainer and the
 * simulator alike: fanouts, pipeline depth, the policy's context, node types and their counts,
 * the cache's set-up and look-ahead. Plain arrays and policy/'s C API only: no MPI, no Lua. */
#ifndef HALO_PLAN_H
#define HALO_PLAN_H

#include "cache/cache.h"
#include "part/part.h"
#include "policy/policy.h"
#include "sample/sample.h"
#include "train/metrics.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- fanouts */

/* The fanouts of one epoch (or of --fanouts, parsed once): a number per layer and, on a typed
 * graph, a number per layer and relation. */
typedef struct halo_plan_fanouts {
    int layers;                   /* layers, input layer first; 0 = not given */
    int fanouts[HALO_MAX_LAYERS]; /* per layer (typed: the layer's largest over its relations) */
    halo_rel_fanouts rfan;        /* typed: per layer and relation (unused when nrels == 0) */
} halo_plan_fanouts;

/* Parses a fanouts option (flag: "--fanouts" or "--eval-fanouts", named in the message) into a
 * spec: "5,4" on any graph, or the per-relation form "cites=5,*=3;*=4" on a typed one (pi with
 * relations; pi NULL: the plain form only). */
int halo_plan_fanouts_parse(const char *text, const char *flag, const halo_partinfo *pi,
                            halo_plan_fanouts *out);

/* The fanouts of the epoch in ctx: the parsed option when given (given->layers > 0), else the
 * policy's fanout hook (on a typed graph its per-relation spec, checked against pi's relations).
 * want > 0: the layers the model has; another count is the policy's error. */
int halo_plan_epoch_fanouts(const halo_plan_fanouts *given, const halo_partinfo *pi,
                            halo_policy *pol, const halo_policy_ctx *ctx, int want,
                            halo_plan_fanouts *out);

/* ---- pipeline */

/* One rank's ask for an epoch's pipeline: the policy's pipeline hook, then --depth (>= 0) and
 * --sampler-threads (> 0) over it. Returns the hook's code (depth and threads set anyway). */
int halo_plan_pipeline_ask(halo_policy *pol, const halo_policy_ctx *ctx, int opt_depth,
                           int opt_threads, int *depth, int *threads);

/* The epoch's pipeline from the largest ask over all ranks: depth and threads capped, threads
 * at most the depth, one thread at depth 0. */
void halo_plan_pipeline_settle(int64_t depth, int64_t threads, int *out_depth, int *out_threads);

/* ---- the policy's context, node types, the model's relations */

/* The names ctx.graph.node_types and ctx.graph.relations point to (kept by the caller). */
typedef struct halo_plan_names {
    const char *ntype[HALO_MAX_NTYPES]; /* node type names */
    const char *rel[HALO_MAX_RELS];     /* relation names */
} halo_plan_names;

/* The run's shape every rank's policy context starts from. */
typedef struct halo_plan_run {
    int ranks;       /* ranks == parts */
    int epochs;      /* planned epochs */
    int64_t batch;   /* seeds per batch */
    int64_t batches; /* batches per epoch */
} halo_plan_run;

/* The policy context of the rank owning part pt before training (epoch 0, no batch), with the
 * graph's node types and relations on a typed partition (names keeps their pointers). */
void halo_plan_policy_ctx(const halo_partinfo *pi, const halo_part *pt, const halo_plan_run *run,
                          halo_plan_names *names, halo_policy_ctx *ctx);

/* The per-type counts of rank me's batch into s: input nodes and those owned by other ranks by
 * node type, sampled edges by relation. */
void halo_plan_count_types(const halo_partinfo *pi, int me, const halo_minibatch *mb,
                           halo_epoch_stats *s);

/* The epoch's counts in the policy's ctx.last_epoch (what epoch_end hooks read); seeds trained
 * and the mean loss come from the caller. */
void halo_plan_last_epoch(const halo_epoch_stats *s, int64_t seeds, double loss,
                          halo_policy_stats *le);

/* RGCN's relations: --relations when > 0, else the partition's, 1 on a homogeneous one. */
int halo_plan_relations(int opt_relations, int nrels);

/* Which node types are featureless (width 0) into featless[]; true when the model then learns
 * embeddings for them (some type is featureless and the input is at least one column wide). */
bool halo_plan_featless(const halo_partinfo *pi, uint8_t featless[HALO_MAX_NTYPES]);

/* ---- the cache */

/* True when the policy opens a cache that wants next-use hints: the caller builds the run's
 * look-ahead (halo_plan_lookahead) before halo_plan_cache_open. */
bool halo_plan_cache_lookahead(halo_policy *pol);

/* The look-ahead's source of batches: the caller's sampler, with its own epoch order. */
typedef struct halo_plan_batches {
    /* batch b of epoch ep sampled with the first epoch's fanouts into *mb (the caller's) */
    int (*sample)(void *arg, int epoch, int64_t b, const halo_minibatch **mb);
    void *arg;             /* its first argument */
    int first_epoch;       /* first epoch to look at */
    int epochs;            /* end of the run (exclusive) */
    int64_t batches;       /* batches per epoch */
    int64_t lo, hi;        /* the rank's own global ids [lo, hi): the other inputs are remote */
} halo_plan_batches;

/* Adds the remote input ids of every batch from src's first epoch to the end to f, in batch
 * order (sampling is deterministic: these are the lookups the run will make). */
int halo_plan_lookahead(const halo_plan_batches *src, halo_cache_future *f);

/* What the cache of a rank is opened with. */
typedef struct halo_plan_cache_opts {
    halo_policy *pol;             /* the rank's policy */
    const halo_partinfo *pi;      /* range table (owners) */
    const halo_part *pt;          /* the rank's part (halo set, CSR, training seeds) */
    int rank, ranks;              /* the rank, ranks of the run */
    int feat_dim;                 /* row width kept in the cache; 0: counts only */
    int64_t row_bytes;            /* bytes per row for the byte counters (0: 4 x feat_dim) */
    const halo_plan_run *run;     /* epochs, batch size, batches per epoch */
    const halo_plan_fanouts *fan; /* the first epoch's fanouts (vertex inclusion probabilities) */
    const halo_policy_ctx *ctx;   /* ctx.graph and ctx.part */
} halo_plan_cache_opts;

/* The halo nodes' views a cache and an access trace are given. */
typedef struct halo_plan_halo {
    int32_t *owner; /* [num_halo] owner of each halo node */
    int32_t *ntype; /* [num_halo] node type of each (typed partition), else NULL */
    double *vip;    /* [num_halo] inclusion probability (the policy's "vip" hint), else NULL */
} halo_plan_halo;

/* Fills h and, when the policy has a cache_init hook, opens its cache on the rank's halo set
 * (*out; NULL without the hook). future is the look-ahead or NULL; owned from here on. The
 * initial contents (halo_cache_init_ids) are the caller's to fill. */
int halo_plan_cache_open(const halo_plan_cache_opts *o, halo_cache_future *future,
                         halo_plan_halo *h, halo_cache **out);

/* Frees h's arrays. */
void halo_plan_halo_free(halo_plan_halo *h);

#endif
