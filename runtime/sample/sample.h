/* Node-wise uniform neighbour sampling into blocks (DGL's NeighborSampler), over plain arrays. */
#ifndef HALO_SAMPLE_H
#define HALO_SAMPLE_H

#include "graph/graph.h"
#include "sample/block.h"

#include <stdint.h>

/* The keys of one mini-batch's draws (invariant 1). The neighbours drawn for node v in layer l
 * are a pure function of (seed, epoch, batch, l, key(v), degree(v), fanout), where key(v) is the
 * node's id in the input graph (orig_id on a partitioned run), and of the order of v's in-edges
 * in the input graph. */
typedef struct halo_sample_key {
    uint64_t seed; /* run seed */
    int64_t epoch; /* epoch number */
    int64_t batch; /* mini-batch number within the epoch */
} halo_sample_key;

/* Scratch space of one sampling thread (hash tables, frontier buffers); reused between batches. */
typedef struct halo_sampler halo_sampler;

halo_sampler *halo_sampler_new(void);
void halo_sampler_free(halo_sampler *s);

/* Neighbours drawn for a node of in-degree deg with fanout k (k < 0: all). */
static inline int64_t halo_sample_count(int64_t deg, int fanout)
{
    return (fanout < 0 || deg <= fanout) ? deg : fanout;
}

/* Samples the in-neighbours of n nodes from a CSR (slice): node i's in-edges are
 * indices[indptr[row[i]] .. indptr[row[i]+1]) and its RNG key is key[i]. off[n+1] must hold the
 * prefix sums of halo_sample_count(degree, fanout) (see halo_sample_rows_offsets); node i's draws
 * go to nbrs[off[i] .. off[i+1]) in the order of its in-edges. Without replacement: each of
 * deg-choose-k subsets is equally likely. */
void halo_sample_rows(halo_sampler *s, const int64_t *indptr, const int32_t *indices,
                      const int64_t *row, const int64_t *key, int64_t n, int fanout,
                      const halo_sample_key *k, int layer, const int64_t *off, int32_t *nbrs);
/* off[0] = 0, off[i+1] = off[i] + halo_sample_count(degree of row[i], fanout); returns off[n]. */
int64_t halo_sample_rows_offsets(const int64_t *indptr, const int64_t *row, int64_t n, int fanout,
                                 int64_t *off);

/* Builds block b from its destinations dst[num_dst] (unique global ids) and their sampled
 * neighbours (global ids; dst i's in nbrs[off[i]..off[i+1])): the sources are the destinations
 * followed by the other neighbours in order of first appearance (DGL's to_block). Allocates the
 * block's arrays (free with halo_sample_block_free). Fails on a duplicate destination. */
int halo_sample_block_build(halo_sampler *s, const int32_t *dst, int32_t num_dst,
                            const int64_t *off, const int32_t *nbrs, halo_block *b);
void halo_sample_block_free(halo_block *b);

/* Sets num_seeds/seeds/num_input/input of mb from its blocks. */
void halo_sample_minibatch_finish(halo_minibatch *mb);
/* Frees every block of mb and zeroes it. */
void halo_sample_free(halo_minibatch *mb);
/* Sampled edges of all blocks. */
int64_t halo_sample_edges(const halo_minibatch *mb);

/* What one layer's draw of the frontier loop yields: the neighbours of the frontier, pointers
 * into the drawer's own buffers (valid until its next draw). */
typedef struct halo_sample_drawn {
    const int64_t *off;   /* [num_dst + 1] frontier node i's neighbours are nbrs[off[i]..off[i+1]) */
    const int32_t *nbrs;  /* [off[num_dst]] the neighbours, global ids */
    const uint8_t *etype; /* [off[num_dst]] their relations (a typed draw), else NULL */
} halo_sample_drawn;

/* One layer's draw: the neighbours of dst[num_dst] in layer `layer` into *out. 0 or a negative
 * code. */
typedef int (*halo_sample_draw_fn)(void *arg, int layer, const int32_t *dst, int32_t num_dst,
                                   halo_sample_drawn *out);

/* The frontier loop every sampler shares (the whole graph's, plain and typed, the store's
 * distributed one, the simulator's): from the seeds at layer layers-1 down to layer 0, each
 * layer's frontier drawn by draw(arg, ...) and numbered into its block with s (DGL's to_block,
 * with the relations of a typed draw), the next frontier that block's sources. out is freed
 * first, and again on a failure. */
int halo_sample_frontier(halo_sampler *s, int layers, halo_sample_draw_fn draw, void *arg,
                         const int32_t *seeds, int32_t num_seeds, halo_minibatch *out);

/* The single-process sampler over a whole graph (tests, simulator): L = layers blocks, fanouts
 * listed input layer first (fanouts[layers-1] applies to the seeds), node keys are the graph's own
 * ids. out must be zeroed or hold a previous mini-batch (it is freed first). */
int halo_sample_graph(halo_sampler *s, const halo_graph *g, const int *fanouts, int layers,
                      const halo_sample_key *k, const int32_t *seeds, int32_t num_seeds,
                      halo_minibatch *out);

/* Parses "10,25" into fanouts (input layer first); returns the layer count or HALO_EUSAGE. */
int halo_sample_parse_fanouts(const char *s, int *fanouts, int max_layers);

/* Per-relation fanouts of a typed graph: fan[l][r] for layer l (input layer first) and
 * relation r; -1 = all in-edges of that relation, 0 = none. */
typedef int halo_rel_fanouts[HALO_MAX_LAYERS][HALO_MAX_RELS];

/* Parses a fanout spec for a graph with relations rels[nrels] (nrels 0: homogeneous) into fan;
 * returns the layer count or HALO_EUSAGE with one line naming the problem. Two forms (docs/hetero.md): a plain list "10,25" (each number is that
 * layer's fanout for every relation, as DGL takes an int on a heterograph), or layers separated
 * by ';' of REL=N entries, "cites=10,writes=5;cites=15,*=10", where '*' gives every relation
 * not named in that layer (else they get 0). On a homogeneous graph only the plain form. */
int halo_sample_parse_rel_fanouts(const char *s, const halo_relation *rels, int nrels,
                                  halo_rel_fanouts fan, int max_layers);
/* A typed layer's fanout as one number (start-up lines, the VIP estimate, the simulator's
 * summary): the largest of its nrels relations', -1 when one takes all. */
int halo_sample_rel_fanout_max(const int *fan, int nrels);

/* Typed draws: row[i]'s in-edges are grouped by relation (etype ascending, as in a typed graph
 * directory); relation r's in-edges get fanout fan[r], drawn without replacement from a stream
 * keyed by (seed, epoch, batch, layer, key[i], r). off[n+1] must hold the prefix sums of the
 * per-node totals (halo_sample_rows_typed_offsets); node i's draws go to nbrs[off[i]..off[i+1])
 * relation by relation, their relations to nbr_etype at the same positions. */
void halo_sample_rows_typed(halo_sampler *s, const int64_t *indptr, const int32_t *indices,
                            const uint8_t *etype, int nrels, const int64_t *row,
                            const int64_t *key, int64_t n, const int *fan,
                            const halo_sample_key *k, int layer, const int64_t *off,
                            int32_t *nbrs, uint8_t *nbr_etype);
/* off[0] = 0, off[i+1] = off[i] + sum over r of halo_sample_count(degree of row[i] in r,
 * fan[r]); returns off[n]. */
int64_t halo_sample_rows_typed_offsets(const int64_t *indptr, const uint8_t *etype, int nrels,
                                       const int64_t *row, int64_t n, const int *fan,
                                       int64_t *off);

/* halo_sample_graph on a typed graph with per-relation fanouts; every block carries etype. */
int halo_sample_graph_typed(halo_sampler *s, const halo_graph *g, const halo_rel_fanouts fan,
                            int layers, const halo_sample_key *k, const int32_t *seeds,
                            int32_t num_seeds, halo_minibatch *out);

#endif
