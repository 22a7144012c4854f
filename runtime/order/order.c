/* Epoch order of training seeds: a shuffle by hash keys, cut into mini-batches. */
#include "order/order.h"

#include "core/mem.h"
#include "core/rng.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const void *a, const void *b)
{
    const halo_order_key *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return (x->orig > y->orig) - (x->orig < y->orig);
}

/* Sorting by a hash of (seed, epoch, input-graph id) is a uniform shuffle that does not depend
 * on how the graph was partitioned or numbered. */
static void sort_keys(uint64_t seed, int epoch, halo_order_key *keys, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        keys[i].key = halo_hash5(seed, HALO_RNG_SHUFFLE, (uint64_t)epoch, (uint64_t)keys[i].orig, 0);
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
}

void halo_order_local(uint64_t seed, int epoch, int64_t nt, const int32_t *gid,
                      const int64_t *orig, int64_t batch, halo_order_key *keys, int32_t *order,
                      int64_t *boff)
{
    int64_t nb = halo_order_batches(nt, batch);
    for (int64_t i = 0; i < nt; i++) {
        keys[i] = (halo_order_key){0, orig[i], gid[i], 0};
    }
    sort_keys(seed, epoch, keys, nt);
    boff[0] = 0;
    for (int64_t b = 0; b < nb; b++) {
        int64_t end = (b + 1) * batch;
        boff[b + 1] = end < nt ? end : nt;
    }
    for (int64_t i = 0; i < nt; i++) {
        order[i] = keys[i].gid;
    }
}

void halo_order_global(uint64_t seed, int epoch, int ranks, int64_t nt, const int32_t *gid,
                       const int64_t *orig, int64_t batch, int r0, int r1, halo_order_key *keys,
                       int32_t *order, int64_t *boff)
{
    int64_t total = nt * ranks, nb = halo_order_batches(total, batch);
    for (int64_t i = 0; i < total; i++) {
        int32_t r = (int32_t)(i / (nt > 0 ? nt : 1));
        keys[i] = (halo_order_key){0, orig[i], r >= r0 && r < r1 ? gid[i] : -1, r};
    }
    sort_keys(seed, epoch, keys, total);
    memset(boff, 0, (size_t)(r1 - r0) * (size_t)(nb + 1) * sizeof *boff);
    int64_t *fill = HALO_NEW(int64_t, (r1 - r0) + 1); /* cursor per wanted rank */
    for (int64_t i = 0; i < total; i++) {
        int r = keys[i].rank;
        if (r < r0 || r >= r1) {
            continue;
        }
        order[(int64_t)(r - r0) * nt + fill[r - r0]++] = keys[i].gid;
        boff[(int64_t)(r - r0) * (nb + 1) + i / batch + 1]++;
    }
    halo_free(fill);
    for (int r = r0; r < r1; r++) {
        int64_t *bo = boff + (int64_t)(r - r0) * (nb + 1);
        for (int64_t b = 0; b < nb; b++) {
            bo[b + 1] += bo[b];
        }
    }
}
