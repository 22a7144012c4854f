/* Blocks (message-flow graphs) as DGL builds them: the shared currency of the sampler, the
 * feature pull, the cache and the model. Plain arrays, no MPI, no CUDA. */
#ifndef HALO_BLOCK_H
#define HALO_BLOCK_H

#include <stdint.h>

#define HALO_MAX_LAYERS 8

/* One layer of a mini-batch. Destination nodes are the first num_dst source nodes (DGL's
 * convention), so src_gid[0..num_dst) are the destinations' global ids. Edges are a CSR over
 * destinations: the sampled in-neighbours of dst i are indices[indptr[i]..indptr[i+1]), given as
 * local source numbers in [0, num_src). */
typedef struct halo_block {
    int32_t num_dst;   /* destination nodes */
    int32_t num_src;   /* source nodes (>= num_dst) */
    int64_t num_edges; /* sampled edges */
    int64_t *indptr;   /* [num_dst+1] */
    int32_t *indices;  /* [num_edges] local source numbers */
    int32_t *src_gid;  /* [num_src] global node ids (partition numbering on a distributed run) */
    uint8_t *etype;    /* [num_edges] relation of each sampled edge, or NULL on a homogeneous graph */
} halo_block;

/* A sampled mini-batch: blocks[0] is the input layer (its sources are the input nodes whose
 * features are pulled), blocks[layers-1] the output layer (its destinations are the seeds). */
typedef struct halo_minibatch {
    int layers;                        /* L */
    halo_block blocks[HALO_MAX_LAYERS]; /* input layer first */
    int32_t num_seeds;                 /* == blocks[layers-1].num_dst */
    const int32_t *seeds;              /* == blocks[layers-1].src_gid */
    int32_t num_input;                 /* == blocks[0].num_src */
    const int32_t *input;              /* == blocks[0].src_gid */
} halo_minibatch;

#endif
