/* The remote-feature cache: a per-rank buffer of halo feature rows with a fixed slot count, its
 * statistics, and the mechanics that carry out a policy's cache_init / cache_batch decisions.
 *
 * Mechanism only (docs/design.md §1, invariant 4): which rows to keep is decided by the policy's Lua
 * hooks; this module looks ids up, copies rows, counts, and applies evict/admit lists. It works
 * on plain arrays (no MPI), so the trainer, `halo trace replay` and the simulator share it
 * (invariant 3).
 *
 * One training batch (the trainer's side, runtime/train; the simulator makes the same calls
 * without rows; see docs/cache.md):
 *   halo_store_pull_plan(st, ids, n, &pull);              which inputs are remote
 *   halo_cache_lookup(c, &bi, pull.num_remote, pull.remote_id, pull.remote_pos, rows, pull.skip);
 *                                                        hits: rows copied, skip[i] = 1
 *   halo_cache_decide(c, &extra, &n_extra);              policy's cache_batch; admitted ids that
 *                                                        are not this batch's misses: extras
 *   halo_store_pull_add_extra(&pull, st, extra, n_extra);
 *   halo_store_pull_exec(st, &pull, rows);               misses + extras in one request per peer
 *   halo_cache_admit(c, rows, extra_rows);               admitted rows copied into their slots
 *
 * This module depends on core/ and policy/ only (no store, no MPI).
 *
 * Rows: every row the cache holds is a byte copy of a row the store returned (a miss of this
 * batch, or an extra / initial row fetched for it); a hit copies that row back unchanged. The
 * cache never computes on rows, so no policy can change what the model sees (invariant 2).
 *
 * Hit accounting (MassiveGNN): only halo nodes count. A remote input node that is not in this
 * rank's halo set (reached through another part) is neither a hit nor a miss; it is pulled
 * every time and counted in stats.other_remote. */
#ifndef HALO_CACHE_H
#define HALO_CACHE_H

#include "policy/policy.h"

#include <stdbool.h>
#include <stdint.h>

/* Next-use value of a node that is never used again (or not within the look-ahead). */
#define HALO_CACHE_NEVER INT64_MAX

/* Hints the mechanism writes into the policy-owned score arrays for a policy that asks for
 * them with the parameter `hint` (params = {hint = "next_use"}): see halo_cache_opts. */
enum {
    HALO_CACHE_HINT_NONE = 0, /* the policy owns the scores alone */
    HALO_CACHE_HINT_NEXT_USE, /* next use step (Belady): ctx.halo.score[h], ctx.cache.score[s] */
    HALO_CACHE_HINT_VIP,      /* vertex inclusion probability before cache_init: ctx.halo.score */
};

/* The hint a policy asks for (HALO_CACHE_HINT_*), from its parameter `hint`; the caller uses it to
 * know whether to compute inclusion probabilities or a look-ahead before opening the cache. */
int halo_cache_policy_hint(halo_policy *pol);

/* Counters since open (or halo_cache_stats_reset). */
typedef struct halo_cache_stats {
    int64_t batches;      /* lookups */
    int64_t remote;       /* remote input nodes looked up */
    int64_t hits;         /* halo input nodes found in the cache */
    int64_t misses;       /* halo input nodes not in the cache */
    int64_t other_remote; /* remote input nodes outside the halo set (never cacheable) */
    int64_t admitted;     /* rows admitted by cache_batch decisions */
    int64_t prefetched;   /* of those, rows that were not misses of the batch (extra rows) */
    int64_t evicted;      /* slots freed by cache_batch decisions */
    int64_t init_rows;    /* rows of the initial fill */
    int64_t row_bytes;    /* bytes of one feature row (4 * feat_dim; 0 when rows are not kept
                             and the opts gave no row_bytes) */
    int64_t bytes_saved;  /* hits * row_bytes: remote bytes the cache avoided */
    int64_t bytes_pulled; /* (misses + other_remote + prefetched) * row_bytes: batch pulls */
    int64_t bytes_init;   /* init_rows * row_bytes: the bulk pull before training */
    double policy_s;      /* time spent in the cache_batch hook */
    double lookup_s;      /* time spent in lookups (including row copies) */
} halo_cache_stats;

/* How to open a cache. Zero-initialise and set what you know. */
typedef struct halo_cache_opts {
    halo_policy *policy;       /* the policy whose cache hooks decide (not owned); NULL: none */
    int rank;                  /* this rank */
    int ranks;                 /* ranks of the run */
    int64_t num_halo;          /* halo nodes of this rank */
    const int32_t *halo_ids;   /* [num_halo] sorted ascending global ids (copied) */
    const int32_t *halo_deg;   /* [num_halo] in-degree in the whole graph (copied; or NULL) */
    const int32_t *halo_owner; /* [num_halo] owner part (copied; or NULL) */
    const int32_t *halo_ntype; /* [num_halo] node type (copied; NULL: homogeneous) */
    const double *vip;         /* [num_halo] inclusion probability (halo_cache_vip) or NULL */
    int feat_dim;              /* row width in floats; 0 = keep no rows (trace replay) */
    int64_t row_bytes;         /* bytes per row for the byte counters; 0 = 4 * feat_dim */
    int epochs;                /* planned epochs (ctx.epochs; 0 unknown) */
    int64_t batches;           /* batches per epoch (ctx.batches; 0 unknown) */
    int batch_size;            /* seeds per batch (ctx.batch_size) */
    halo_policy_graph_summary graph; /* ctx.graph */
    halo_policy_part_summary part;   /* ctx.part */
} halo_cache_opts;

/* One batch as the trainer knows it. */
typedef struct halo_cache_batch {
    int epoch;            /* epoch */
    int64_t batch;        /* batch within the epoch */
    int64_t step;         /* batches since training started */
    int64_t n_input;      /* input nodes */
    const int32_t *input; /* [n_input] their global ids (may be NULL) */
} halo_cache_batch;

typedef struct halo_cache halo_cache;

/* The look-ahead for next-use hints (Belady): the rank's accesses of every future lookup, step
 * by step, from a pre-sampled epoch (sampling is deterministic, invariant 1). Build it, give it
 * to halo_cache_open, which takes ownership. Step k of the future is the k-th lookup. */
typedef struct halo_cache_future halo_cache_future;

/* Opens a cache for one rank and runs the policy's cache_init (no policy or no hook: capacity
 * 0). The initial contents are then pulled by the caller in one bulk pull:
 *   halo_cache_init_ids(c, &ids) -> n; pull rows[n * feat_dim]; halo_cache_init_fill(c, rows).
 * future is the look-ahead or NULL; the cache owns it from here on, also on failure. When the
 * policy declares params.hint ("next_use" or "vip"), the mechanism fills the policy's score
 * arrays with that information before each hook (a look-ahead must then be given, built with
 * halo_cache_future_*; "vip" needs opts.vip, see halo_cache_vip). */
int halo_cache_open(const halo_cache_opts *o, halo_cache_future *future, halo_cache **out);
void halo_cache_close(halo_cache *c);

halo_cache_future *halo_cache_future_new(void);
/* Appends one step: the remote input ids of that batch (any order; ids outside the halo set and
 * repeats are ignored when the cache resolves them). */
void halo_cache_future_add(halo_cache_future *f, const int32_t *ids, int64_t n);
int64_t halo_cache_future_steps(const halo_cache_future *f);
void halo_cache_future_free(halo_cache_future *f);

/* The initial contents the policy chose (halo ids, slot i gets ids[i]); returns their count. */
int64_t halo_cache_init_ids(const halo_cache *c, const int32_t **ids);
/* Stores the pulled rows of the initial contents (rows[n * feat_dim] in init_ids order; NULL
 * when the cache keeps no rows). Must be called once before the first lookup when n > 0. */
int halo_cache_init_fill(halo_cache *c, const float *rows);

/* Core, plain arrays. lookup: the batch's n remote ids (distinct); for each id that is cached,
 * copies its row to rows + row_pos[i] * feat_dim (when rows is not NULL) and sets served[i] = 1
 * (others 0). Updates hit/miss counters, slot statistics (hits, last_hit) and halo miss counts. */
int halo_cache_lookup(halo_cache *c, const halo_cache_batch *b, int64_t n, const int32_t *ids,
                      const int64_t *row_pos, float *rows, uint8_t *served);
/* decide: calls cache_batch with this batch's hits and misses and applies the decision (slots
 * freed, admitted ids assigned to slots). Admitted ids that were among the batch's remote ids
 * are copied from the batch's rows at admit time; the others must be fetched: they are returned
 * in *extra (valid until the next call) and *n_extra. */
int halo_cache_decide(halo_cache *c, const int32_t **extra, int64_t *n_extra);
/* admit: after the pull, copies the admitted rows into their slots: batch ids from rows +
 * row_pos[i] * feat_dim (the arrays given to lookup), extras from extra_rows (n_extra rows in
 * the order decide returned). NULL rows when the cache keeps no rows. */
int halo_cache_admit(halo_cache *c, const float *rows, const float *extra_rows);

/* The context the hooks see (the caller may fill last_batch, last_epoch before decide). */
halo_policy_ctx *halo_cache_ctx(halo_cache *c);
/* Calls the policy's epoch_end hook with the cache's context (epoch = the epoch that ended). */
int halo_cache_epoch_end(halo_cache *c, int epoch);

const halo_cache_stats *halo_cache_stats_get(const halo_cache *c);
void halo_cache_stats_reset(halo_cache *c);
/* Hit rate as MassiveGNN defines it: hits / (hits + misses) over halo nodes; 0 when none. */
double halo_cache_hit_rate(const halo_cache_stats *s);

/* Slot state, for tests and tools. */
int64_t halo_cache_capacity(const halo_cache *c);
int64_t halo_cache_used(const halo_cache *c);
/* Global id in slot s (-1 empty). */
int32_t halo_cache_slot_id(const halo_cache *c, int64_t s);
/* Row of slot s (NULL when rows are not kept or s is empty). */
const float *halo_cache_slot_row(const halo_cache *c, int64_t s);
/* Slot of a global id, -1 when it is not cached. */
int64_t halo_cache_find(const halo_cache *c, int32_t id);
/* Position of a global id in the halo set, -1 when it is not a halo node of this rank. */
int64_t halo_cache_halo_pos(const halo_cache *c, int32_t id);
/* The hint the policy asked for (HALO_CACHE_HINT_*). */
int halo_cache_hint(const halo_cache *c);

/* SALIENT++'s vertex inclusion probability: the probability that each node is an input node of
 * one mini-batch drawn from `seeds` in batches of batch_size, propagated through the fanouts
 * (input layer first, as DGL lists them) along in-edges: a destination v with probability q
 * draws each in-neighbour with probability min(1, fanout / deg(v)); a node's probability at the
 * next layer is 1 - prod (1 - q(v) * min(1, f / deg(v))) over its out-neighbours v, combined with
 * its own (destinations are sources too). The CSR covers the rows [row_lo, row_hi) of the id
 * space [0, nodes); rows outside (another part's nodes) stop the propagation. p[nodes] out. */
void halo_cache_vip(int64_t nodes, int64_t row_lo, int64_t row_hi, const int64_t *indptr,
                    const int32_t *indices, const int32_t *seeds, int64_t num_seeds, int batch_size,
                    const int *fanouts, int layers, double *p);

#endif
