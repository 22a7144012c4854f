/* Random partitioner: the part of a node is a hash of (seed, node id), the baseline of every
 * partitioning paper. */
#include "part/partition.h"

#include "core/err.h"
#include "core/rng.h"

/* Part of v: the high 32 bits of its hash scaled to [0, parts) (multiply-shift, no modulo bias
 * worth speaking of). */
int halo_partition_random(const halo_graph *g, int parts, uint64_t seed, int32_t *assignment)
{
    if (parts < 1) {
        return halo_errorf(HALO_EUSAGE, "random partition: parts must be >= 1 (got %d)", parts);
    }
    for (int64_t v = 0; v < g->nodes; v++) {
        uint64_t h = halo_hash5(seed, HALO_RNG_PARTITION, (uint64_t)v, 0, 0) >> 32;
        assignment[v] = (int32_t)((h * (uint64_t)parts) >> 32);
    }
    return 0;
}
