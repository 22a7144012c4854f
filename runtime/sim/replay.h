/* The simulator's replay, private to runtime/sim: the state of P simulated ranks, shared by
 * the replay of one batch (replay_batch.c) and the run around it (replay.c). */
#ifndef HALO_SIM_REPLAY_H
#define HALO_SIM_REPLAY_H

#include "cache/cache.h"
#include "core/mem.h"
#include "order/order.h"
#include "part/part.h"
#include "pipe/timeline.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "sample/sample.h"
#include "sim/cost.h"
#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

/* Bytes of the header of a sampling request (store.c's req_hdr). */
#define SIM_REQ_HDR 32
/* Bytes of the header of one gradient record of an embedding update (embed.c's REC_HDR: order
 * key, node id, position; the row follows). */
#define SIM_EMBED_REC_HDR 16

/* Bytes of a typed sampling reply's relation array of ne neighbours (store.c's etype_bytes:
 * one byte each, padded to 4). */
static inline int64_t sim_etype_bytes(int64_t ne)
{
    return (ne + 3) / 4 * 4;
}

/* One simulated rank. */
typedef struct sim_rank {
    halo_part *part;                /* its part (mapped) */
    halo_policy *pol;               /* its own policy state, as each runtime rank has */
    halo_policy_ctx pctx;           /* the context its hooks see */
    halo_cache *cache;              /* remote-feature cache (NULL: the policy has none) */
    halo_plan_fanouts fan;          /* this epoch's fanouts (halo_plan_epoch_fanouts) */
    halo_minibatch mb;              /* current batch's blocks */
    halo_sim_work w;                /* current batch's work */
    int64_t *sample_req;            /* [L * P] request bytes to each peer per layer */
    int64_t *sample_rep;            /* [L * P] reply bytes from each peer per layer */
    int64_t *pull_rows;             /* [P] rows fetched from each peer */
    int64_t *embed_rows;            /* [P] featureless input rows gathered from each owner
                                       (its own entry: the rows it holds itself) */
    int64_t remote;                 /* remote input nodes of the batch */
    int64_t hits, misses;           /* halo input nodes served by the cache / pulled */
    halo_epoch_stats acc;           /* this epoch's counts and times */
    halo_sim_embed_stats emb;       /* this epoch's embedding traffic */
    int64_t *train_orig;            /* [num_train] input-graph id of each training seed */
} sim_rank;

/* The whole simulation. */
typedef struct sim {
    const halo_sim_opts *o;    /* options */
    halo_partinfo *info;       /* range table */
    int P;                     /* ranks == parts */
    halo_map orig_map;         /* orig_id.i64 */
    const int64_t *orig;       /* [nodes] input-graph id of each global id */
    sim_rank *r;               /* [P] */
    halo_sim_work *works;      /* [P] copies handed to the time model */
    halo_sampler *smp;         /* sampler scratch (one thread) */
    int64_t nt;                /* training seeds per rank */
    int64_t nb;                /* batches per epoch */
    int64_t total;             /* seeds ordered per epoch (nt, or nt * P when global) */
    int64_t row_bytes;         /* bytes of a feature row */
    halo_order_key *keys;      /* order scratch */
    int32_t *order;            /* [P * nt] every rank's seeds in epoch order */
    int64_t *boff;             /* [P * (nb+1)] batch offsets of every rank */
    int32_t *all_gid;          /* [P * nt] global batching: every rank's seeds */
    int64_t *all_orig;         /* [P * nt] and their input-graph ids */
    int32_t *owner;            /* sampling scratch: owner of each frontier node */
    halo_buf grow, gkey, goff, gnbr, moff, mnbr; /* sampling scratch: per-owner groups, merge */
    halo_buf rpos, rid;            /* fetch scratch: remote positions and ids */
    halo_buf served;               /* fetch scratch: cache hit flags */
    int64_t *cnt, *gstart, *gcur, *nbase; /* [P] (P+1) per-owner counters of one layer */
    halo_sim_cost *cost;       /* time model (NULL without profile) */
    int nrels;                 /* relations of a typed partition (0: homogeneous) */
    int relations;             /* RGCN's relations (0: GraphSAGE; halo_plan_relations) */
    bool embed;                /* featureless types have learnable embeddings (halo_plan_featless) */
    uint8_t featless[HALO_MAX_NTYPES];          /* node types of width 0 */
    halo_plan_names names;     /* ctx.graph.node_types and ctx.graph.relations */
    halo_plan_fanouts given;   /* --fanouts, parsed once (layers 0: the policies') */
    halo_buf getype, metype;   /* typed sampling scratch: relations of gnbr and of mnbr */
    halo_timeline tl;          /* --timeline events */
} sim;

/* Rank r's blocks of a batch into its mb: the frontier loop (halo_sample_frontier) over the
 * replay of the store's distributed draw, counting its requests and replies. */
int halo_sim_sample(sim *S, int r, const halo_sample_key *k, const int32_t *seeds, int32_t n);

/* Clears every rank's work record for a new batch. */
void halo_sim_work_reset(sim *S);

/* Batch b of an epoch on every rank: sample, fetch, count, then the time model. */
int halo_sim_batch(sim *S, int epoch, int64_t b, int64_t step);

#endif
