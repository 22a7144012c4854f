/* Importers: OGB's raw node-property-prediction layouts (csv.gz and npz) and text edge lists, into a graph
 * directory (docs/design.md §4). Bad input fails with "FILE:LINE: what" and leaves no output behind. */
#ifndef HALO_IMPORT_H
#define HALO_IMPORT_H

#include "core/json.h"
#include "graph/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Options of an import. */
typedef struct halo_import_opts {
    const char *name;       /* graph name in meta.json (NULL: derived from the source path) */
    bool directed;          /* keep edges as given (default: add reverses, drop duplicates and
                             * self loops) */
    const char *split;      /* ogb: split directory name (NULL: the only one under SRC/split) */
    const char *labels;     /* edgelist: "id label" file, or NULL */
    const char *feat;       /* edgelist: "id f1 f2 ..." file, or NULL */
    const char *split_file; /* edgelist: "id train|valid|test" file, or NULL */
} halo_import_opts;

/* Imports SRC (raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz,
 * raw/num-node-list.csv.gz, split/NAME/{train,valid,test}.csv.gz) into the graph directory dir. */
int halo_import_ogb(const char *src, const char *dir, const halo_import_opts *opts);
/* True when SRC holds OGB's binary layout (raw/data.npz), which halo_import_ogb then reads. */
bool halo_import_npz_layout(const char *src);
/* Imports OGB's binary node-property layout (ogbn-papers100M): raw/data.npz (edge_index,
 * num_nodes_list, num_edges_list, node_feat), raw/node-label.npz (node_label) and the split
 * files of the CSV layout, streaming each array (import_npz.c). */
int halo_import_ogb_npz(const char *src, const char *dir, const halo_import_opts *opts);
/* Imports a whitespace-separated "src dst" edge list (plus optional label, feature and split
 * files) into dir; ids are renumbered densely in order of first appearance and dir/orig_id.i64
 * maps each new id to its original id. */
int halo_import_edgelist(const char *file, const char *dir, const halo_import_opts *opts);

/* File name of the id map written by the edge-list importer. */
#define HALO_IMPORT_ORIG_ID "orig_id.i64"

/* ---- Shared by the importers (exported for the unit tests) ---- */

/* A growing list of directed edges u -> v. */
typedef struct halo_import_edges {
    int32_t *src; /* sources */
    int32_t *dst; /* destinations */
    int64_t n;    /* edges stored */
    int64_t cap;  /* room in src and dst */
} halo_import_edges;

/* Appends u -> v. */
void halo_import_edges_add(halo_import_edges *e, int32_t u, int32_t v);
void halo_import_edges_free(halo_import_edges *e);

/* What building the CSR did to the input edges. */
typedef struct halo_import_csr_stats {
    int64_t input_edges; /* edges read */
    int64_t self_loops;  /* self loops dropped (symmetrised graphs only) */
    int64_t duplicates;  /* duplicate edges dropped (symmetrised graphs only) */
} halo_import_csr_stats;

/* Builds the in-edge CSR of the edges over `nodes` nodes: row v lists the sources u of edges
 * u -> v in ascending order. Unless directed, every edge also gets its reverse and duplicates and
 * self loops are dropped. Fills indptr[nodes+1] (caller's) and allocates *indices; frees the
 * edge list (e is empty afterwards) before sorting, to keep the peak small. */
void halo_import_build_csr(halo_import_edges *e, int64_t nodes, bool directed, int64_t *indptr,
                           int32_t **indices, int64_t *edges, halo_import_csr_stats *stats);

/* Names of the split values, indexed by HALO_SPLIT_* ("none", "train", "valid", "test"). */
extern const char *const halo_import_split_names[4];

/* Writes the members of a meta.json "source" that both importers record: directed, symmetrised,
 * the input edges and what building the CSR dropped, and the nodes of each split. */
void halo_import_json_edges(halo_jw *w, bool directed, const halo_import_csr_stats *st,
                            const int64_t *split_count);

/* Path of SRC/REL.csv.gz, or of SRC/REL.csv when only the uncompressed file exists; a missing
 * file is reported by the reader with the .gz name (import_ogb_split.c). */
int halo_import_ogb_path(const char *src, const char *rel, char *out, size_t size);
/* Fails naming path when it cannot be read, so a missing file is found before a long parse. */
int halo_import_ogb_require(const char *path);
/* Chooses the split directory under SRC/split: `want` when given (it must exist), else the only
 * one present. Errors list the splits found. */
int halo_import_ogb_pick_split(const char *src, const char *want, char *name, size_t size);
typedef struct halo_import_reader halo_import_reader;
/* Reads a node id field of reader r and checks it against the node count. */
int halo_import_ogb_node_id(const halo_import_reader *r, const char *field, const char *what,
                            int64_t nodes, int32_t *out);
/* The split of an OGB dataset, for both of its layouts: picks split/NAME (`want`, or the only
 * one), writes its name and the paths of its train, valid and test files (.csv.gz, or .csv),
 * and fails naming the first that cannot be read. */
int halo_import_ogb_split_paths(const char *src, const char *want, char *name, size_t size,
                                char (*paths)[4096]);
/* Reads one split file of node ids below nodes, marking them `value` in split (a node in two
 * splits is an error) and counting them in *count. */
int halo_import_ogb_read_split(const char *path, int64_t nodes, uint8_t value, uint8_t *split,
                               int64_t *count);

/* Fails early (HALO_EUSAGE) when dir could not be created: its parent is missing or not
 * writable, so a long parse is not wasted. */
int halo_import_check_outdir(const char *dir);

/* "name" for meta.json from a path: its last component, and with strip_ext without ".gz" and
 * one more extension ("data/web-Google.txt.gz" -> "web-Google"). */
void halo_import_default_name(const char *path, bool strip_ext, char *out, size_t size);

#endif
