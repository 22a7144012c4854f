/* Random mini-batches for the model tests (see batch.h). */
#include "batch.h"

#include "core/mem.h"

void test_batch_blocks(test_batch *t, int layers, const int32_t *nodes, int maxdeg, halo_rng *r,
                       test_batch_deg deg)
{
    t->mb.layers = layers;
    for (int l = 0; l < layers; l++) {
        halo_block *b = &t->mb.blocks[l];
        b->num_src = nodes[l];
        b->num_dst = nodes[l + 1];
        t->indptr[l] = HALO_ALLOC(int64_t, b->num_dst + 1);
        t->indices[l] = HALO_ALLOC(int32_t, (size_t)b->num_dst * maxdeg + 1);
        int64_t e = 0;
        t->indptr[l][0] = 0;
        for (int32_t i = 0; i < b->num_dst; i++) {
            int d = deg(r, i, maxdeg);
            for (int k = 0; k < d; k++) {
                t->indices[l][e++] = (int32_t)halo_rng_below(r, (uint64_t)b->num_src);
            }
            t->indptr[l][i + 1] = e;
        }
        b->num_edges = e;
        b->indptr = t->indptr[l];
        b->indices = t->indices[l];
        b->src_gid = t->gid;
    }
    t->mb.num_seeds = nodes[layers];
    t->mb.seeds = t->gid;
    t->mb.num_input = nodes[0];
    t->mb.input = t->gid;
}

void test_batch_free(test_batch *t)
{
    for (int l = 0; l < t->mb.layers; l++) {
        halo_free(t->indptr[l]);
        halo_free(t->indices[l]);
    }
    halo_free(t->gid);
}
