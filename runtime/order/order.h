/* The epoch order of training seeds and its cut into mini-batches: a pure function of (seed,
 * epoch, input-graph ids), shared by the trainer (runtime/train) and the simulator (runtime/sim)
 * so that both run exactly the same mini-batches (invariants 1 and 3). Plain arrays, no MPI. */
#ifndef HALO_ORDER_H
#define HALO_ORDER_H

#include <stdint.h>

/* A training seed being ordered (scratch of the order functions). */
typedef struct halo_order_key {
    uint64_t key; /* halo_hash5(seed, HALO_RNG_SHUFFLE, epoch, orig id) */
    int64_t orig; /* input-graph id (tie break) */
    int32_t gid;  /* global (partition) id */
    int32_t rank; /* rank that holds it as a training seed */
} halo_order_key;

/* Batches of an epoch of `total` seeds cut `batch` at a time. */
static inline int64_t halo_order_batches(int64_t total, int64_t batch)
{
    return batch > 0 ? (total + batch - 1) / batch : 0;
}

/* Local batching (DistDGL): one rank's nt seeds gid[nt] (input-graph ids orig[nt]) sorted by
 * their shuffle key; batch b = order[boff[b] .. boff[b+1]) for b < nb = halo_order_batches(nt,
 * batch). keys is scratch of nt entries. */
void halo_order_local(uint64_t seed, int epoch, int64_t nt, const int32_t *gid,
                      const int64_t *orig, int64_t batch, halo_order_key *keys, int32_t *order,
                      int64_t *boff);

/* Global batching: one order of every rank's seeds (rank r holds entries [r*nt, (r+1)*nt) of
 * gid and orig), global batch b = positions [b*batch, (b+1)*batch) of it; each rank keeps its own
 * seeds of each batch. Fills the orders of ranks [r0, r1): rank r's at order + (r-r0)*nt and
 * boff + (r-r0)*(nb+1), nb = halo_order_batches(ranks*nt, batch). gid entries of other ranks are
 * not read. keys is scratch of ranks*nt entries. */
void halo_order_global(uint64_t seed, int epoch, int ranks, int64_t nt, const int32_t *gid,
                       const int64_t *orig, int64_t batch, int r0, int r1, halo_order_key *keys,
                       int32_t *order, int64_t *boff);

#endif
