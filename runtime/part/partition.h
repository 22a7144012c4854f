/* Partitioners (METIS multi-constraint, two-level, random, streaming, custom) and the writer that
 * relabels a graph and writes the partition directory of part.h for any assignment. */
#ifndef HALO_PARTITION_H
#define HALO_PARTITION_H

#include "graph/graph.h"
#include "part/part.h"

#include <stdbool.h>
#include <stdint.h>

/* Partitioning methods. */
enum {
    HALO_PARTITION_METIS = 0,  /* METIS k-way on the symmetrised graph */
    HALO_PARTITION_MULTILEVEL, /* METIS across machines, then each machine across its trainers */
    HALO_PARTITION_RANDOM,     /* hash of the node id */
    HALO_PARTITION_STREAM,     /* one pass, LDG or Fennel */
    HALO_PARTITION_CUSTOM,     /* a caller (policy) supplied assignment array */
    HALO_PARTITION_PTSCOTCH,   /* PT-Scotch across MPI ranks; the ranks' gathered assignment
                                * comes in choice.assignment (cli/cmd_partition_dist.c) */
};

/* Balance constraints (bit set): one vertex-weight column each. */
enum {
    HALO_PCON_NODES = 1u << 0, /* node count (weight 1) */
    HALO_PCON_TRAIN = 1u << 1, /* training nodes (weight 0/1) */
    HALO_PCON_EDGES = 1u << 2, /* edges (weight = in-degree) */
    HALO_PCON_ALL = 7u,
};

/* METIS objective. */
enum { HALO_POBJ_CUT = 0, HALO_POBJ_VOL = 1 };

/* Streaming heuristic. */
enum { HALO_STREAM_LDG = 0, HALO_STREAM_FENNEL = 1 };

/* The choice a `partition` policy hook makes (until the policy engine lands, flags fill it). */
typedef struct halo_partition_choice {
    int method;                 /* HALO_PARTITION_* */
    unsigned constraints;       /* HALO_PCON_* bits (0 means nodes only) */
    double imbalance;           /* tolerance per constraint, max/mean (e.g. 1.05) */
    int objective;              /* HALO_POBJ_* (METIS methods) */
    int stream;                 /* HALO_STREAM_* (stream method) */
    const int32_t *assignment;  /* custom: part of each input node, NULL otherwise */
    int64_t assignment_len;     /* custom: length of assignment (must equal the node count) */
} halo_partition_choice;

/* Everything halo_partition_run needs besides the graph. */
typedef struct halo_partition_opts {
    halo_partition_choice choice; /* method and its parameters */
    int parts;                    /* P; for multilevel 0 means machines * trainers */
    int machines;                 /* machines (0: P machines of one trainer each) */
    int trainers_per_machine;     /* trainers per machine (0 or 1: one) */
    uint64_t seed;                /* seed of every random choice (METIS seed, random, stream) */
    bool force;                   /* overwrite an output directory that holds another graph */
    bool sort_rows;               /* sort each in-edge row by new id (default false: keep the
                                   * input graph's order, so a sampler that draws neighbour
                                   * positions draws the same edges as on the input graph) */
    const char *policy;           /* policy file that made the choice, NULL when flags did */
} halo_partition_opts;

/* Figures of a written partition (also recorded in partition.json). */
typedef struct halo_partition_stats {
    int64_t edge_cut;           /* edges whose endpoints lie in different parts */
    double edge_cut_fraction;   /* edge_cut / edges */
    double balance[3];          /* max over mean per part of nodes, train, edges (in-degree) */
    double replication;         /* sum over parts of (owned + halo), divided by nodes */
    int64_t train_per_part;     /* force-even training seeds per part */
    int64_t train_dropped;      /* training nodes left out by the even split (< P) */
    int64_t train_borrowed;     /* seeds taken from another part, all parts together */
    double assign_s;            /* seconds spent computing the assignment */
    double write_s;             /* seconds spent relabelling and writing */
    uint64_t rss_peak;          /* peak RSS of the process after the run (bytes) */
} halo_partition_stats;

/* Fills opts with the defaults: METIS, all three constraints, imbalance 1.05, cut, LDG, seed 1. */
void halo_partition_opts_init(halo_partition_opts *opts);
/* Parses a method / constraint list / objective / stream name; HALO_EUSAGE naming it on failure. */
int halo_partition_parse_method(const char *s, int *method);
int halo_partition_parse_constraints(const char *s, unsigned *constraints);
int halo_partition_parse_objective(const char *s, int *objective);
int halo_partition_parse_stream(const char *s, int *stream);
const char *halo_partition_method_name(int method);

/* Resolves parts / machines / trainers_per_machine of opts against g (P >= 1, P <= nodes,
 * P == machines * trainers); fills *parts, *machines and *trainers. */
int halo_partition_resolve(const halo_graph *g, const halo_partition_opts *opts, int *parts,
                           int *machines, int *trainers);

/* Fails (HALO_EINPUT, naming where) unless every entry of a[0..n) is a part in [0, parts) and
 * no part is empty. */
int halo_partition_check_assignment(const int32_t *a, int64_t n, int parts, const char *where);
/* Name of balance constraint c (the weight column c: 0, 1, 2): "nodes", "train", "edges". */
const char *halo_partition_constraint_name(int c);
/* Computes the part of every input node with the method of opts->choice into
 * assignment[g->nodes] (caller-allocated). Part k lies on machine k / trainers. */
int halo_partition_assign(const halo_graph *g, const halo_partition_opts *opts,
                          int32_t *assignment);

/* The methods themselves (assignment[g->nodes], caller-allocated). */
int halo_partition_metis(const halo_graph *g, int parts, unsigned constraints, double imbalance,
                         int objective, uint64_t seed, int32_t *assignment);
int halo_partition_multilevel(const halo_graph *g, int machines, int trainers,
                              unsigned constraints, double imbalance, int objective,
                              uint64_t seed, int32_t *assignment);
int halo_partition_random(const halo_graph *g, int parts, uint64_t seed, int32_t *assignment);
int halo_partition_stream(const halo_graph *g, int parts, unsigned constraints, double imbalance,
                          int heuristic, uint64_t seed, int32_t *assignment);

/* Relabels g by assignment (part ids in [0, P), P from opts) and writes the partition
 * directory pdir atomically: partition.json, orig_id.i64 and part-K/. Refuses a pdir that holds
 * a partition of another graph unless opts->force. stats may be NULL. */
int halo_partition_write(const halo_graph *g, const int32_t *assignment,
                         const halo_partition_opts *opts, const char *pdir,
                         halo_partition_stats *stats);

/* halo_partition_assign then halo_partition_write. */
int halo_partition_run(const halo_graph *g, const halo_partition_opts *opts, const char *pdir,
                       halo_partition_stats *stats);

/* Reads a node -> part assignment written by another tool (part/assign.c): a NumPy .npy file
 * (1-D, int32 or int64, little-endian; found by its magic) or else raw little-endian int32, one
 * entry per node. Checks the length (== nodes), the range ([0, parts), or [0, largest + 1) when
 * parts is 0) and that no part is empty, each failure one HALO_EINPUT message naming path.
 * *out (halo_malloc'd, caller frees) and *parts_out (the part count) on success. */
int halo_partition_load_assign(const char *path, int64_t nodes, int parts, int32_t **out,
                               int *parts_out);

/* Edges (u -> v) with assignment[u] != assignment[v]. */
int64_t halo_partition_edge_cut(const halo_graph *g, const int32_t *assignment);
/* Max over mean of the per-part weight of constraint column c (0 nodes, 1 train, 2 edges). */
double halo_partition_balance(const halo_graph *g, const int32_t *assignment, int parts, int c);

/* Checksum identifying a source graph: CRC-32 of its meta.json, or of its arrays when it was
 * built in memory. */
uint32_t halo_partition_graph_checksum(const halo_graph *g);

#endif
