/* The store's state (private to runtime/store: everything else reads it through the accessors
 * of store.h, so the layout can change without touching callers or tests). */
#ifndef HALO_STORE_IMPL_H
#define HALO_STORE_IMPL_H

#include "store/store.h"

/* A rank's view of a partition. */
struct halo_store {
    halo_comm *comm;        /* channel for requests (not owned) */
    int rank;               /* this rank == the part it owns */
    int ranks;              /* ranks == parts */
    halo_partinfo *info;    /* range table and summary (owned) */
    halo_part *part;        /* this rank's part (owned) */
    int64_t start, end;     /* owned global ids [start, end) */
    int feat_dim;           /* features per node */
    const int64_t *orig;    /* [end-start] input-graph id of each owned node (sampling keys) */
    halo_map orig_map;      /* mapping of orig_id.i64 */
    halo_store_stats stats; /* counters */
    store_scratch *scr;     /* exchange buffers */
    struct halo_store *parent; /* the store whose part this clone shares (NULL: owns its part) */
    int direct;             /* pulls read same-host peers' rows from their mapped files */
    const float **peer_feat;/* [ranks] feat.f32 of same-host peers when direct, else NULL */
    halo_map *peer_maps;    /* [ranks] their mappings (owned by the parent) */
};

/* Rows to look ahead when prefetching a gather (gather.c, and a pull's own rows). */
#define GATHER_AHEAD 8

#endif
