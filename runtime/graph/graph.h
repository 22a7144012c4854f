/* The graph directory of docs/design.md §4: an in-edge CSR, features, labels and split as raw
 * little-endian arrays beside meta.json; loaded with mmap, written atomically. */
#ifndef HALO_GRAPH_H
#define HALO_GRAPH_H

#include "core/fs.h"
#include "core/json.h"

#include <stdbool.h>
#include <stdint.h>

#define HALO_GRAPH_FORMAT 1

/* The arrays of a graph directory, in the order of halo_graph's slots. */
enum {
    HALO_GA_INDPTR,
    HALO_GA_INDICES,
    HALO_GA_FEAT,
    HALO_GA_LABEL,
    HALO_GA_SPLIT,
    HALO_GA_NTYPE,
    HALO_GA_ETYPE,
    HALO_GA_COUNT
};

/* File name of each array ("indptr.i64", ...). */
extern const char *const halo_graph_files[HALO_GA_COUNT];

/* Limits of a heterogeneous graph (types are uint8 in ntype.u8 / etype.u8). */
#define HALO_MAX_NTYPES 32
#define HALO_MAX_RELS 64
#define HALO_TYPE_NAME 32

/* A relation (canonical edge type): edges from nodes of type src into nodes of type dst. */
typedef struct halo_relation {
    char name[HALO_TYPE_NAME]; /* relation name ("cites", "rev_writes"), unique in the graph */
    int src;                   /* source node type */
    int dst;                   /* destination node type */
} halo_relation;

/* Split values in split.u8. */
enum { HALO_SPLIT_NONE = 0, HALO_SPLIT_TRAIN = 1, HALO_SPLIT_VALID = 2, HALO_SPLIT_TEST = 3 };

/* A graph in memory. A loaded graph's arrays are read-only mappings; a graph made with
 * halo_graph_alloc owns writable arrays. A topology-only graph (made with --no-features;
 * meta.json "features": false, absent meaning true) has no feat.f32: feat is NULL while feat_dim
 * still declares the width the features would have.
 * Features of a typed graph (nrels > 0; docs/hetero.md) are one file per node type that has
 * any, feat.TYPE.f32 = float32[nodes_t * w_t] over the type's id range (w_t =
 * ntype_feat_dim[t]): tfeat[t] points at them (NULL for a featureless type) and feat is NULL.
 * Read rows through halo_graph_feat_row / halo_graph_feat_ptr, never feat directly. */
typedef struct halo_graph {
    char name[128];     /* meta.json "name" */
    int64_t nodes;      /* node count (< 2^31) */
    int64_t edges;      /* edge count */
    int feat_dim;       /* features per node (0 allowed); declared width when topology_only */
    bool topology_only; /* no features: feat is NULL and there is no feat.f32 */
    int classes;        /* label classes */
    bool directed;      /* false when every edge has its reverse */
    int ntypes;         /* node types (0 or 1: homogeneous; ntype is NULL) */
    int nrels;          /* relations (0: homogeneous graph; etype is NULL) */
    int target_type;    /* node type that carries labels and split (typed graphs) */
    char ntype_name[HALO_MAX_NTYPES][HALO_TYPE_NAME]; /* node type names (typed graphs) */
    int ntype_feat_dim[HALO_MAX_NTYPES]; /* feature width of each node type (<= feat_dim) */
    halo_relation rel[HALO_MAX_RELS];    /* the relations, by relation id */
    int64_t *indptr;    /* [nodes+1] CSR over in-edges */
    int32_t *indices;   /* [edges] sources of in-edges */
    float *feat;        /* [nodes*feat_dim] row-major; NULL when topology_only or typed */
    float *tfeat[HALO_MAX_NTYPES];     /* typed: [nodes_t * ntype_feat_dim[t]] rows of type t's
                                        * ids, NULL when w_t = 0 or topology_only */
    int64_t tstart[HALO_MAX_NTYPES + 1]; /* typed: type t owns ids [tstart[t], tstart[t+1]) */
    int32_t *label;     /* [nodes], -1 unlabelled */
    uint8_t *split;     /* [nodes], HALO_SPLIT_* */
    uint8_t *ntype;     /* [nodes] node type, non-decreasing (types contiguous), or NULL */
    uint8_t *etype;     /* [edges] relation of each in-edge (aligned with indices; each row
                         * grouped by ascending relation), or NULL on a homogeneous graph */
    halo_json *meta;    /* parsed meta.json of a loaded graph (NULL for an allocated one) */
    char dir[4096];     /* directory it was loaded from ("" if allocated) */
    halo_map maps[HALO_GA_COUNT]; /* mappings of a loaded graph */
    halo_map tmaps[HALO_MAX_NTYPES]; /* mappings of the per-type feature files */
    bool owned;         /* arrays were allocated with halo_malloc */
} halo_graph;

/* Allocates a writable graph with zeroed arrays (ntype only when ntypes > 1). */
halo_graph *halo_graph_alloc(int64_t nodes, int64_t edges, int feat_dim, int classes, int ntypes);
/* Makes an allocated graph typed: sets its relations (names, endpoint types) and allocates a
 * zeroed etype array (and ntype when it has none). Type names and widths are set by the caller. */
void halo_graph_set_relations(halo_graph *g, const halo_relation *rels, int nrels);
/* Builds the in-edge CSR of an allocated typed graph g (nodes and nrels set) from ne edges
 * (dst[i], key[i] = relation << 32 | source): rows grouped by ascending relation, sources
 * ascending within a relation, duplicates dropped; sets indptr, indices, etype and edges.
 * Frees dst and key. */
void halo_graph_typed_csr(halo_graph *g, int64_t ne, int32_t *dst, uint64_t *key);
/* Whether g is heterogeneous (has relations). */
static inline bool halo_graph_typed(const halo_graph *g)
{
    return g->nrels > 0;
}
/* Node type of node v (0 on a homogeneous graph). */
static inline int halo_graph_node_type(const halo_graph *g, int64_t v)
{
    return g->ntype != NULL ? g->ntype[v] : 0;
}
/* Whether g keeps its features per node type (typed and not topology-only). */
static inline bool halo_graph_typed_feat(const halo_graph *g)
{
    return g->nrels > 0 && !g->topology_only;
}
/* Feature row of node v where it is stored, and its width in *w: feat_dim floats of feat on a
 * homogeneous graph; the w_t floats of tfeat[t] on a typed one (NULL and *w = 0 for a featureless
 * type or a topology-only graph). */
static inline const float *halo_graph_feat_ptr(const halo_graph *g, int64_t v, int *w)
{
    if (g->nrels == 0) {
        *w = g->feat != NULL ? g->feat_dim : 0;
        return g->feat != NULL ? g->feat + v * (int64_t)g->feat_dim : NULL;
    }
    int t = g->ntype != NULL ? g->ntype[v] : 0;
    *w = g->tfeat[t] != NULL ? g->ntype_feat_dim[t] : 0;
    return g->tfeat[t] != NULL ? g->tfeat[t] + (v - g->tstart[t]) * (int64_t)*w : NULL;
}
/* Writes node v's feature row, feat_dim floats, into dst: its type's w_t columns, zeros after
 * (all zeros for a featureless type). The model's input and the wire carry rows this wide. */
void halo_graph_feat_row(const halo_graph *g, int64_t v, float *dst);
/* dst[dim] = the w floats at src (none when w is 0), then zeros: a typed row padded to the
 * model's input width (halo_graph_feat_row, halo_part_feat_row). */
void halo_feat_row_pad(float *dst, const float *src, int w, int dim);
/* File name of type t's features ("feat.paper.f32") into buf. */
void halo_graph_type_feat_name(const halo_graph *g, int t, char *buf, size_t size);
/* Whether typed graph g has a feature file for type t (w_t > 0 and not topology-only). */
bool halo_graph_has_type_feat(const halo_graph *g, int t);
/* Expected bytes of type t's feature file (nodes_t * w_t * 4; 0 when it has none). */
uint64_t halo_graph_type_feat_bytes(const halo_graph *g, int t);
/* An allocated typed graph whose ntype, ntypes and ntype_feat_dim are set: computes tstart and
 * allocates zeroed tfeat[t] for every type with features (none when topology_only). */
void halo_graph_alloc_type_feat(halo_graph *g);
/* Sets tstart of typed graph g from its ntype array. */
void halo_graph_set_type_starts(halo_graph *g);
/* Relation id named `name`, or -1. */
int halo_graph_relation(const halo_graph *g, const char *name);
/* Node type id named `name`, or -1. */
int halo_graph_ntype_id(const halo_graph *g, const char *name);
/* First node id of type t (node types are contiguous in id order); t == ntypes gives nodes. */
int64_t halo_graph_type_start(const halo_graph *g, int t);
/* The address of array `which`'s pointer in g (the loader points it at the mapped file). */
void **halo_graph_slot(halo_graph *g, int which);
/* Loads a graph directory (load.c): parses meta.json, maps each array and checks its size against it.
 * Errors name the file. Checksums are not verified here (see halo_graph_verify). */
int halo_graph_load(const char *dir, halo_graph **out);
void halo_graph_free(halo_graph *g);

/* Makes g topology-only: frees its features (an allocated graph) and sets feat = NULL, keeping
 * feat_dim as the declared width. */
void halo_graph_drop_features(halo_graph *g);

/* Hands the whole pages of rows [v0, v1) of a loaded graph's mapped arrays back to the kernel
 * (madvise MADV_DONTNEED over each array's bytes of those rows), so that a sequential pass over a
 * graph bigger than memory keeps only a window of it resident. The data stays valid: the next
 * access maps it again from the page cache or the file. Nothing for an allocated graph. */
void halo_graph_release_rows(const halo_graph *g, int64_t v0, int64_t v1);

/* Whether g has array `which` as a file: not ntype.u8 / etype.u8 of a homogeneous graph, not
 * feat.f32 of a topology-only or a typed one (those have per-type files). */
bool halo_graph_has_array(const halo_graph *g, int which);

/* Expected byte size of array `which` of g (0 for an array it does not have). */
uint64_t halo_graph_array_bytes(const halo_graph *g, int which);

/* The array of slot `which` (HALO_GA_*) of g; NULL when g does not have it. */
const void *halo_graph_array(const halo_graph *g, int which);

/* Writes g to dir atomically (temporary sibling, fsync, rename), with meta.json carrying sizes,
 * CRC-32 checksums and `source`, a JSON object describing how the graph was made (may be NULL). */
int halo_graph_write(const halo_graph *g, const char *dir, const char *source_json);

/* halo_graph_write with one more raw file beside the arrays (none when extra_name is NULL), so
 * that it appears together with the graph (the id map of an edge-list import). */
int halo_graph_write_with(const halo_graph *g, const char *dir, const char *source_json,
                          const char *extra_name, const void *extra, size_t extra_bytes);

/* Writes meta.json for arrays already written into tmpdir (used by streaming generators):
 * sizes and checksums are given per array (crc/bytes indexed by HALO_GA_*); the arrays g does
 * not have (halo_graph_has_array) get no entry, and a topology-only g gets "features": false.
 * The per-type feature files of a typed g get entries checksummed from tfeat in memory. */
int halo_graph_write_meta(const halo_graph *g, const char *tmpdir, const uint32_t *crc,
                          const uint64_t *bytes, const char *source_json);

/* Full integrity check of a graph directory: sizes, checksums and every invariant (indptr starts
 * at 0, non-decreasing, ends at edges; indices in range; labels in [-1, classes); split in 0..3;
 * on a typed graph the typed invariants of halo_graph_check).
 * A topology-only graph has no feat.f32 to check; any other graph must have it. The first
 * problem found is the error, naming the file. */
int halo_graph_verify(const char *dir);

#endif
