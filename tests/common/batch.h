/* Random mini-batches for the model tests: DGL-style blocks over arrays the test owns. */
#ifndef HALO_TEST_BATCH_H
#define HALO_TEST_BATCH_H

#include "core/rng.h"
#include "sample/block.h"

#include <stdint.h>

/* A random mini-batch and the arrays behind it. */
typedef struct test_batch {
    halo_minibatch mb;                 /* blocks point into the arrays below */
    int64_t *indptr[HALO_MAX_LAYERS];  /* per block */
    int32_t *indices[HALO_MAX_LAYERS]; /* per block */
    int32_t *gid;                      /* input nodes' global ids; every block uses a prefix */
} test_batch;

/* In-degree of destination i of a block, at most maxdeg, drawn from r (or not). */
typedef int (*test_batch_deg)(halo_rng *r, int32_t i, int maxdeg);

/* Builds `layers` blocks over t->gid (nodes[0] ids, allocated with halo_malloc by the caller;
 * the rest of t zeroed): block l has nodes[l] sources and nodes[l+1] destinations, destination i
 * deg(r, i, maxdeg) in-neighbours drawn from r. Seeds and inputs are prefixes of t->gid. */
void test_batch_blocks(test_batch *t, int layers, const int32_t *nodes, int maxdeg, halo_rng *r,
                       test_batch_deg deg);

/* Frees the arrays of t (gid included). */
void test_batch_free(test_batch *t);

#endif
