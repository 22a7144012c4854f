/* PT-Scotch's distributed k-way partitioner on a channel's ranks (docs/partition.md). */
#ifndef HALO_COMM_PTSCOTCH_H
#define HALO_COMM_PTSCOTCH_H

#include "comm/comm.h"

#include <stdint.h>

/* Partitions a distributed undirected graph into machines x trainers parts (collective over c).
 * Each rank gives its own contiguous slice of vertices: n_local rows of xadj[n_local+1] (offsets
 * into adj) holding global neighbour ids adj (symmetric over all ranks, no self loops), and one
 * vertex weight per row in vwgt (NULL: weight 1). Slices lie in rank order. With trainers > 1,
 * two levels as DistDGLv2's: k-way into the machines, then each machine's induced subgraph into
 * its trainers, each level with sqrt(imbalance), so part k = machine x trainers + trainer; else
 * one k-way partition. imbalance is the tolerated max/mean of the weight (e.g. 1.05); seed seeds Scotch's random generator. Writes the part of
 * each local row into part[n_local]. Every rank returns the same code: 0, or HALO_EMETIS with
 * PT-Scotch's message when it refused the graph or failed on any rank. */
int halo_comm_ptscotch_part(halo_comm *c, int64_t n_local, const int64_t *xadj,
                            const int64_t *adj, const int64_t *vwgt, int machines, int trainers,
                            double imbalance, uint64_t seed, int32_t *part);

#endif
