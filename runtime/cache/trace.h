/* Access traces: per rank and batch, the input-node ids and which were remote, halo, cache hits;
 * written by `halo train --trace` and `halo trace record`, replayed through any cache policy by
 * `halo trace replay` (no training, no MPI).
 *
 * Binary format (little-endian, every field naturally aligned; numpy reads it, docs/cache.md):
 *   header, 32 bytes:  char magic[8] = "HALOTRC1"; u32 version = 1; u32 ranks; u32 feat_dim;
 *                      u32 reserved = 0; i64 nodes (of the whole graph)
 *   then records, each a 32-byte head  u32 kind; u32 rank; i64 a; i64 b; i64 n
 *   followed by its payload, zero-padded to a multiple of 8 bytes:
 *     kind 1 HALO  (once per rank, before its batches): a = 1 when vip follows, n = halo nodes;
 *                  i32 ids[n] (sorted), i32 deg[n], i32 owner[n], [f64 vip[n]]
 *     kind 2 BATCH (in step order per rank): a = epoch, b = batch within the epoch,
 *                  n = input nodes; i32 ids[n]; u8 flags[n] (HALO_TRACE_F_*)
 *     kind 3 BLOCK (optional, `halo trace record --blocks`: one per layer, input layer first,
 *                  right after its BATCH record): a = epoch, b = batch, n = sampled edges;
 *                  i32 layer; i32 num_dst; i32 dst[num_dst]; i32 count[num_dst]; i32 src[n]
 *                  (dst: the layer's destination ids; count: sampled in-neighbours of each;
 *                  src: their ids, destination by destination). Replays skip these records.
 * Every id is a global id of the partition's numbering. docs/cache.md gives each offset.
 * Records of different ranks may interleave. A distributed run writes one file per rank,
 * FILE.r0 .. FILE.r{P-1} (same header); readers given FILE load those when FILE is absent. */
#ifndef HALO_TRACE_H
#define HALO_TRACE_H

#include "cache/cache.h"
#include "policy/policy.h"

#include <stdint.h>

#define HALO_TRACE_VERSION 1
/* The trace file's magic, its first bytes. */
#define HALO_TRACE_SIG "HALOTRC1"

enum { HALO_TRACE_HALO = 1, HALO_TRACE_BATCH = 2, HALO_TRACE_BLOCK = 3 };
/* Flags of one input node in a BATCH record. */
enum {
    HALO_TRACE_F_REMOTE = 1, /* owned by another rank */
    HALO_TRACE_F_HALO = 2,   /* in this rank's halo set (cacheable, counts for the hit rate) */
    HALO_TRACE_F_HIT = 4,    /* served by the cache when the trace was recorded */
};

/* ---- writing ---- */

typedef struct halo_trace_writer halo_trace_writer;

/* Creates a trace at path (written to a temporary name, renamed by halo_trace_close). */
int halo_trace_create(const char *path, int ranks, int feat_dim, int64_t nodes,
                      halo_trace_writer **out);
/* The rank's halo set (vip may be NULL). */
int halo_trace_put_halo(halo_trace_writer *w, int rank, int64_t n, const int32_t *ids,
                        const int32_t *deg, const int32_t *owner, const double *vip);
/* One batch: its n input ids and their flags. */
int halo_trace_put_batch(halo_trace_writer *w, int rank, int epoch, int64_t batch, int64_t n,
                         const int32_t *ids, const uint8_t *flags);
/* One layer of a batch's blocks (after the batch's put_batch): num_dst destinations dst[] with
 * count[i] sampled in-neighbours each, src[] their ids (n = sum of count). */
int halo_trace_put_block(halo_trace_writer *w, int rank, int epoch, int64_t batch, int layer,
                         int32_t num_dst, const int32_t *dst, const int32_t *count, int64_t n,
                         const int32_t *src);
/* One batch after the cache lookup: its n input ids, of which nr are remote (remote_id[k] at
 * position remote_pos[k] of ids), served[k] = 1 for a cache hit (served may be NULL); halo
 * flags from the cache's halo set (c may be NULL: no halo flags). */
int halo_trace_put_lookup(halo_trace_writer *w, int rank, int epoch, int64_t batch, int64_t n,
                          const int32_t *ids, int64_t nr, const int32_t *remote_id,
                          const int64_t *remote_pos, const uint8_t *served, const halo_cache *c);
/* Flushes, fsyncs and renames into place. */
int halo_trace_close(halo_trace_writer *w);
/* Drops a trace being written (error path). */
void halo_trace_discard(halo_trace_writer *w);

/* ---- reading ---- */

/* One rank's part of a trace (pointers into the loaded file). */
typedef struct halo_trace_rank {
    int64_t num_halo;          /* halo nodes */
    const int32_t *halo_ids;   /* [num_halo] sorted */
    const int32_t *halo_deg;   /* [num_halo] */
    const int32_t *halo_owner; /* [num_halo] */
    const double *vip;         /* [num_halo] or NULL */
    int64_t batches;           /* batch records */
    int64_t blocks;            /* block records (trace record --blocks; not replayed) */
    const char **rec;          /* [batches] the records' heads in the loaded files (owned) */
    int epochs;                /* distinct epochs seen */
    int64_t max_batch;         /* largest batch index + 1 in any epoch */
} halo_trace_rank;

typedef struct halo_trace {
    int ranks;             /* ranks */
    int feat_dim;          /* row width of the run */
    int64_t nodes;         /* nodes of the graph */
    halo_trace_rank *rank; /* [ranks] */
    char **data;           /* [ndata] file contents */
    int ndata;             /* files loaded */
    int64_t *data_len;     /* [ndata] bytes of each */
} halo_trace;

/* One batch record. */
typedef struct halo_trace_batch {
    int epoch;            /* epoch */
    int64_t batch;        /* batch within the epoch */
    int64_t n;            /* input nodes */
    const int32_t *ids;   /* [n] */
    const uint8_t *flags; /* [n] */
} halo_trace_batch;

/* Loads path (or path.r0 .. path.r{P-1} when path does not exist); checks every record. */
int halo_trace_load(const char *path, halo_trace **out);
void halo_trace_free(halo_trace *t);
/* Batch k of rank r. */
void halo_trace_get_batch(const halo_trace *t, int r, int64_t k, halo_trace_batch *b);

/* ---- replay ---- */

/* Totals of a replay over every rank. */
typedef struct halo_trace_result {
    halo_cache_stats stats; /* summed counters (bytes with row_bytes) */
    int64_t capacity;       /* summed slots */
    int64_t halo;           /* summed halo nodes */
    int64_t input_nodes;    /* input nodes of all batches */
    int64_t remote_nodes;   /* remote input nodes */
    int64_t bytes_nocache;  /* remote_nodes * row_bytes: what no cache pulls */
    int64_t batches;        /* batches replayed (all ranks) */
    double policy_s;        /* time in cache_batch hooks */
    double replay_s;        /* wall time of the replay */
} halo_trace_result;

/* Replays every rank's batches through a fresh cache driven by the policy (opened per rank with
 * popts, rank set); row_bytes 0 = 4 * the trace's feat_dim. With hint=next_use the look-ahead is
 * the rank's whole trace. */
int halo_trace_replay(const halo_trace *t, const halo_policy_opts *popts, int64_t row_bytes,
                      halo_trace_result *res);

#endif
