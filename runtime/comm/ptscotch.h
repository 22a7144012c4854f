/* PT-Scotch's distributed k-way partitioner on a channel's ranks (docs/partition.md). */
#ifndef HALO_COMM_PTSCOTCH_H
#define HALO_COMM_PTSCOTCH_H

#include "comm/comm.h"

#include <stdint.h>

/* The width of this program's SCOTCH_Num in bits: 64 in bin/halo (Debian's int64 build, for
 * graphs whose adjacency passes 2^31 entries), 32 in bin/halo-ptscotch32 (the same program linked
 * to the int32 build: every integer array of PT-Scotch takes half the memory). */
int halo_comm_ptscotch_bits(void);

/* Partitions a distributed undirected graph into machines x trainers parts (collective over c).
 * Each rank gives its own contiguous slice of vertices: n_local rows of xadj[n_local+1] (offsets
 * into adj) holding global neighbour ids adj (symmetric over all ranks, no self loops), and one
 * vertex weight per row in vwgt (NULL: weight 1). Slices lie in rank order. The three arrays are
 * halo_malloc'd and taken over: with a 32-bit SCOTCH_Num they are narrowed in place (halving them
 * while Scotch runs), and all are freed before return. With trainers > 1,
 * two levels as DistDGLv2's: k-way into the machines, then each machine's induced subgraph into
 * its trainers, each level with sqrt(imbalance), so part k = machine x trainers + trainer; else
 * one k-way partition. imbalance is the tolerated max/mean of the weight (e.g. 1.05); seed seeds Scotch's random generator. Writes the part of
 * each local row into part[n_local]. Every rank returns the same code: 0, HALO_EUSAGE when the
 * graph's adjacency entries or vertex weights summed over the ranks exceed SCOTCH_Num, or
 * HALO_EMETIS with PT-Scotch's message when it refused the graph or failed on any rank. */
int halo_comm_ptscotch_part(halo_comm *c, int64_t n_local, int64_t *xadj, int64_t *adj,
                            int64_t *vwgt, int machines, int trainers, double imbalance,
                            uint64_t seed, int32_t *part);

#endif
