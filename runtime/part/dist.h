/* The plain-array half of the distributed (PT-Scotch) partitioner: each rank's slice of the
 * symmetrised graph and its vertex weights, and halo's balance refinement of the gathered
 * assignment (docs/partition.md). The MPI half is comm/ptscotch.c. */
#ifndef HALO_PART_DIST_H
#define HALO_PART_DIST_H

#include "graph/graph.h"

#include <stdint.h>

/* Every rank's slice of vertices: rank r holds [range[r], range[r+1]), contiguous in rank order,
 * about equal in in-edges so that every rank reads about the same bytes of the CSR, none empty
 * (ranks <= nodes; the caller checks). Reads only ~ranks x log(nodes) entries of indptr. */
void halo_partition_dist_ranges(const halo_graph *g, int ranks, int64_t *range);

/* The undirected edges a slice [v0, v1) knows (its in-edges u -> v, u != v), as int32 pairs
 * (owner-side vertex, neighbour) addressed to the rank owning the first vertex: (v, u) to this
 * rank and (u, v) to u's owner. range[ranks+1] holds every rank's first vertex (range[ranks] =
 * nodes). *pairs (halo_malloc'd) is grouped by destination rank, off[ranks+1] in bytes. */
int halo_partition_dist_pairs(const halo_graph *g, int64_t v0, int64_t v1, const int64_t *range,
                              int ranks, int32_t **pairs, int64_t *off);

/* Builds the slice [v0, v1)'s rows of the undirected graph from the npairs pairs received (any
 * order, first vertex in the slice): each row sorted, duplicates dropped. *xadj[v1-v0+1] and
 * *adj (global ids) are halo_malloc'd. */
int halo_partition_dist_build(const int32_t *pairs, int64_t npairs, int64_t v0, int64_t v1,
                              int64_t **xadj, int64_t **adj);

/* One vertex weight per row of [v0, v1) for an engine that balances a single weight: the sum of
 * the requested constraints (HALO_PCON_*), each normalised by its total (totals[3]: nodes,
 * train, edges of the whole graph) so that each counts alike, scaled to integers >= 1. */
void halo_partition_dist_weights(const halo_graph *g, int64_t v0, int64_t v1,
                                 unsigned constraints, const int64_t *totals, int64_t *w);

/* An upper bound of those weights summed over a graph of `nodes` nodes, known before any is
 * computed (each normalised column sums to the node count). */
int64_t halo_partition_dist_weight_bound(int64_t nodes);

/* halo's balance pass on a whole assignment (part ids in [0, parts)): while a part exceeds
 * imbalance x mean in a requested constraint (nodes, train, edges = in-degree), moves its nodes
 * that carry that weight to a part where every requested constraint stays within the limit,
 * best first by the in-edges cut they add (a node with more in-neighbours in the target part
 * than in its own adds none), never emptying a part. *moved counts the moves. Returns 0, also
 * when no feasible move is left (the caller reports the balance reached). */
int halo_partition_refine(const halo_graph *g, int parts, unsigned constraints, double imbalance,
                          int32_t *assignment, int64_t *moved);

#endif
