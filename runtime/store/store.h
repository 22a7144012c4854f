/* The distributed graph store: a rank's part, the range table, owner lookup, and batched remote
 * requests (neighbour samples, feature rows) to the owners through comm/. */
#ifndef HALO_STORE_H
#define HALO_STORE_H

#include "comm/comm.h"
#include "part/part.h"
#include "sample/sample.h"

#include <stdint.h>

typedef struct store_scratch store_scratch;

/* Counters of a store since open (or halo_store_stats_reset). */
typedef struct halo_store_stats {
    int64_t sample_calls;       /* halo_store_sample calls */
    int64_t sampled_edges;      /* edges of the blocks built */
    int64_t sample_remote_nodes;/* frontier nodes sampled by another rank for this one */
    int64_t sample_served_nodes;/* nodes this rank sampled for others */
    int64_t pull_calls;         /* halo_store_pull_exec calls */
    int64_t input_nodes;        /* ids passed to pull plans */
    int64_t local_nodes;        /* rows copied from this rank's part */
    int64_t remote_nodes;       /* rows fetched from other ranks (misses + extras) */
    int64_t skipped_nodes;      /* remote rows the caller served itself (cache hits) */
    int64_t bytes_remote;       /* feature bytes received from other ranks */
    int64_t served_rows;        /* rows this rank sent to others */
} halo_store_stats;

/* A rank's view of a partition: opaque; read it through the accessors below. */
typedef struct halo_store halo_store;

/* The channel its requests use (not owned). */
halo_comm *halo_store_comm(const halo_store *st);
/* This rank (== the part it owns) and the rank count (== parts). */
int halo_store_rank(const halo_store *st);
int halo_store_ranks(const halo_store *st);
/* The partition's range table and summary. */
const halo_partinfo *halo_store_info(const halo_store *st);
/* This rank's part (CSR of its owned nodes' in-edges, features, labels, split, halo, seeds). */
const halo_part *halo_store_part(const halo_store *st);
/* The owned global ids are [start, end). */
int64_t halo_store_start(const halo_store *st);
int64_t halo_store_end(const halo_store *st);
/* Features per node. */
int halo_store_feat_dim(const halo_store *st);
/* [nodes] the input-graph id of every global id (the partition's orig_id.i64, mapped). */
const int64_t *halo_store_orig_ids(const halo_store *st);
/* The counters since open or halo_store_stats_reset. */
const halo_store_stats *halo_store_stats_get(const halo_store *st);

/* Opens part `rank` of pdir for the channel's rank (parts must equal ranks). Local: a rank that
 * fails returns an error; the caller ends the job with halo_comm_fail (see docs/distributed.md). */
int halo_store_open(halo_comm *c, const char *pdir, halo_store **out);
void halo_store_close(halo_store *st);
/* A second handle on the same part for another thread (a pipeline's sampling thread): shares the
 * mapped arrays, has its own buffers and counters and talks on channel c (e.g. from
 * halo_comm_dup). A store handle is used by one thread at a time. Close clones before parent. */
halo_store *halo_store_clone(halo_store *parent, halo_comm *c);

/* The shared-memory pull path (off by default): rows owned by ranks on the same host are copied
 * straight from their part's feat.f32, mapped read-only here (the page cache is shared), with no
 * message and no work on the owner. Counts are unchanged (the rows are still remote); with netem
 * on, a pull that takes such rows waits a request/reply round trip for their bytes. Local. */
int halo_store_set_direct(halo_store *st, int on);

/* Owner of a global id (binary search over range ends); -1 when out of range. */
int halo_store_owner(const halo_store *st, int32_t gid);
/* 1 when gid is owned by this rank. */
int halo_store_is_local(const halo_store *st, int32_t gid);

/* Memory held for this rank: mapped part arrays (bytes of files) and heap bytes of the store. */
typedef struct halo_store_memory {
    int64_t mapped_bytes; /* part arrays + this rank's slice of orig_id */
    int64_t heap_bytes;   /* exchange buffers and tables of the store */
    int64_t process_heap; /* halo_mem_current() of the whole process */
    int64_t rss_peak;     /* peak resident set of the process */
} halo_store_memory;
halo_store_memory halo_store_mem(const halo_store *st);

/* Distributed sampling (collective: every rank calls it for every mini-batch, with the same
 * layer count; seeds may be empty). Each layer: frontier nodes owned here are sampled in place,
 * the others are sent to their owners (one message per peer), sampled there with the requester's
 * keys, and merged in frontier order, so the blocks equal halo_sample_graph's on the input graph
 * (mapped through orig_id). Seeds are global ids. */
int halo_store_sample(halo_store *st, halo_sampler *s, const int *fanouts, int layers,
                      const halo_sample_key *k, const int32_t *seeds, int32_t num_seeds,
                      halo_minibatch *out);

/* halo_store_sample on a typed partition with per-relation fanouts (collective; every rank
 * passes the same fan): every block carries etype, and the blocks equal
 * halo_sample_graph_typed's on the input graph (mapped through orig_id). */
int halo_store_sample_typed(halo_store *st, halo_sampler *s, const halo_rel_fanouts fan,
                            int layers, const halo_sample_key *k, const int32_t *seeds,
                            int32_t num_seeds, halo_minibatch *out);

/* A feature pull in two phases, so that a cache can sit between them:
 *   halo_store_pull_plan(st, ids, n, &p)      which ids are local, which remote (and their owner)
 *   caller: for each remote i it can serve (a cache hit), writes the row to
 *           rows[p.remote_pos[i]] itself and sets p.skip[i] = 1;
 *           halo_store_pull_add_extra(&p, ids, m)    prefetch ids to fetch in the same request
 *   halo_store_pull_exec(st, &p, rows)        collective: one request per peer, local rows copied
 *                                             while the replies travel; extras land in
 *                                             p.extra_rows (m * feat_dim floats, in order).
 * A halo_store_pull is reusable (zero it once, free with halo_store_pull_free). */
typedef struct halo_store_pull {
    int64_t n;             /* ids in the plan */
    const int32_t *ids;    /* [n] the ids (not owned; must live until exec) */
    int64_t num_local;     /* ids owned by this rank */
    int64_t num_remote;    /* ids owned elsewhere */
    int64_t *remote_pos;   /* [num_remote] position in ids of each remote id */
    int32_t *remote_id;    /* [num_remote] the remote ids */
    int32_t *remote_owner; /* [num_remote] their owners */
    uint8_t *skip;         /* [num_remote] 1: served by the caller, not fetched */
    int64_t num_extra;     /* extra (prefetch) ids */
    int32_t *extra_id;     /* [num_extra] extra ids */
    float *extra_rows;     /* [num_extra * feat_dim] their rows after exec */
    int64_t fetched;       /* after exec: rows received from other ranks (misses + extras) */
    int64_t bytes;         /* after exec: feature bytes received from other ranks */
    int64_t cap;           /* internal: capacity of the remote arrays */
    int64_t extra_cap;     /* internal: capacity of the extra arrays */
} halo_store_pull;

int halo_store_pull_plan(halo_store *st, const int32_t *ids, int64_t n, halo_store_pull *p);
int halo_store_pull_add_extra(halo_store_pull *p, const halo_store *st, const int32_t *ids,
                              int64_t m);
int halo_store_pull_exec(halo_store *st, halo_store_pull *p, float *rows);
void halo_store_pull_free(halo_store_pull *p);
/* plan + exec without a cache: rows[n * feat_dim] (collective). */
int halo_store_pull_rows(halo_store *st, const int32_t *ids, int64_t n, float *rows,
                         halo_store_pull *p);

void halo_store_stats_reset(halo_store *st);

/* The local gather behind pulls: out[i] = feat row (ids[i] - base) for i < n, rows of dim floats
 * (ids must lie in [base, base + rows of feat)). Prefetches a few rows ahead. */
void halo_store_gather(const float *feat, int64_t base, int dim, const int32_t *ids, int64_t n,
                       float *out);

#endif
