/* Integrity checks and statistics of a graph in memory (used by halo verify and halo info). */
#ifndef HALO_GRAPH_STATS_H
#define HALO_GRAPH_STATS_H

#include "graph/graph.h"

#include <stdint.h>

/* Log-binned degree histogram: bin 0 holds degree 0, bin b >= 1 degrees in [2^(b-1), 2^b). */
#define HALO_DEG_BINS 40

/* Degree statistics of one direction of a graph. */
typedef struct halo_degree_stats {
    int64_t min;                 /* smallest degree */
    int64_t median;              /* lower median */
    int64_t max;                 /* largest degree */
    double mean;                 /* edges / nodes */
    int64_t hist[HALO_DEG_BINS]; /* nodes per log2 bin (see HALO_DEG_BINS) */
    int bins;                    /* bins in use (last non-empty + 1) */
} halo_degree_stats;

/* What halo info prints about a graph. */
typedef struct halo_graph_stats {
    halo_degree_stats in;  /* in-degrees (CSR row lengths) */
    halo_degree_stats out; /* out-degrees (occurrences in indices) */
    int64_t split[4];      /* nodes per split value (HALO_SPLIT_*) */
    int64_t labelled;      /* nodes with label >= 0 */
    int64_t self_loops;    /* edges v -> v */
} halo_graph_stats;

/* Checks every structural invariant of g: indptr starts at 0, never decreases and ends at the
 * edge count; indices in [0, nodes); labels in [-1, classes); split values in 0..3; on a typed
 * graph node types contiguous, every in-edge's relation in range and consistent with its
 * endpoints' types, rows grouped by relation, labels and split only on the target type, feature
 * columns beyond a type's width zero. The first violation is the error; its message names the file (under dir, may be NULL or "") and entry. */
int halo_graph_check(const halo_graph *g, const char *dir);
/* Refuses a NaN or infinite feature value, naming file, the row (row0 + r) and the column. Not
 * part of halo_graph_check (loading stays O(nodes + edges)): halo verify calls it over the whole
 * graph, and halo_part_load over each part's rows, so training never reads one. */
int halo_check_features(const float *feat, int64_t rows, int feat_dim, int64_t row0,
                        const char *file);

/* Degree statistics of the sorted-or-not degree array deg[0..n) (n may be 0). */
void halo_degree_stats_compute(const int64_t *deg, int64_t n, halo_degree_stats *s);

/* Statistics of g. Assumes halo_graph_check passed (indices in range). */
void halo_graph_stats_compute(const halo_graph *g, halo_graph_stats *s);

/* Statistics of relation r of a typed graph that passed halo_graph_check: its edge count, the
 * in-degrees of the destination type's nodes and the out-degrees of the source type's nodes
 * counted over that relation's edges only. */
void halo_graph_relation_stats(const halo_graph *g, int r, int64_t *edges, halo_degree_stats *in,
                               halo_degree_stats *out);

#endif
