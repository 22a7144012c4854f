/* Partition directories (docs/design.md §4): the range table (partition.json) and one part (part-K/).
 * Node ids here are the relabelled ("global") ids: part k owns [start[k], start[k+1]). */
#ifndef HALO_PART_H
#define HALO_PART_H

#include "core/fs.h"
#include "core/json.h"
#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

#define HALO_PART_FORMAT 1

/* Arrays of a part-K/ directory (all little-endian, no header):
 *   indptr.i64  [n_k+1]   in-edge CSR over the owned nodes (row i is node start+i)
 *   indices.i32 [e_k]     sources as global ids, in the input graph's order within a row
 *                         (ascending instead when partition.json has "rows_sorted": true)
 *   feat.f32    [n_k*feat_dim]  (absent in a topology-only partition: meta.json "features": false)
 *   label.i32   [n_k]
 *   split.u8    [n_k]     HALO_SPLIT_*
 *   halo.i32    [h_k]     sorted global ids of sources owned by other parts
 *   halo_deg.i32 [h_k]    in-degree of each halo node in the whole graph
 *   train.i32   [t]       this part's training seeds (global ids, ascending within each origin);
 *                         t is equal across parts (DistDGL's force-even)
 * and on a typed graph (part-K/meta.json "nrels" > 0; docs/hetero.md):
 *   ntype.u8    [n_k]     node type of each owned node (non-decreasing: types contiguous)
 *   etype.u8    [e_k]     relation of each in-edge, aligned with indices (rows grouped by
 *                         relation; sorted within a relation when "rows_sorted")
 *   halo_ntype.u8 [h_k]   node type of each halo node
 *   feat.TYPE.f32 [n_kt*w_t]  features of the part's nodes of type t (its typed range
 *                         type_ranges[k][t], in id order), w_t = node_types[t].feat_dim; one
 *                         file per type with w_t > 0, none for a featureless type, and no
 *                         feat.f32 (features of a typed part are only in these files)
 * part-K/meta.json gives each array's bytes and crc32 (same layout as a graph's meta.json). */

/* partition.json, loaded on every rank: the range table and the summary. */
typedef struct halo_partinfo {
    int parts;               /* P */
    int machines;            /* machines (multilevel), else P */
    int trainers_per_machine;/* trainers per machine (multilevel), else 1 */
    int64_t nodes;           /* nodes of the whole graph */
    int64_t edges;           /* edges of the whole graph */
    int feat_dim;            /* features per node (the declared width when topology_only) */
    bool topology_only;      /* made from a topology-only graph (partition.json "graph":
                              * "features": false): no part has feat.f32 */
    int classes;             /* label classes */
    int64_t train_per_part;  /* training seeds per part (equal) */
    int64_t *start;          /* [parts+1] range starts; start[parts] == nodes */
    halo_json *json;         /* the whole partition.json */
    char dir[4096];          /* the partition directory */
    int *part_machine;       /* [parts] machine of each part (k / trainers_per_machine) */
    uint32_t graph_checksum; /* checksum of the source graph (CRC-32 of its meta.json) */
    int ntypes;              /* node types (1 when homogeneous) */
    int nrels;               /* relations (0 when homogeneous) */
    int target_type;         /* labelled node type */
    char ntype_name[HALO_MAX_NTYPES][HALO_TYPE_NAME]; /* node type names */
    int ntype_feat_dim[HALO_MAX_NTYPES]; /* feature width of each type (node_types[t].feat_dim;
                                          * feat_dim when absent); 0 = featureless */
    halo_relation rel[HALO_MAX_RELS]; /* relations by id */
    int64_t *type_start;     /* [parts*(ntypes+1)] typed graphs: part k's nodes of type t are
                              * [type_start[k*(ntypes+1)+t], type_start[k*(ntypes+1)+t+1]) */
} halo_partinfo;

int halo_partinfo_load(const char *pdir, halo_partinfo **out);
void halo_partinfo_free(halo_partinfo *pi);
/* Owner of a global id: binary search over the range ends. */
int halo_partinfo_owner(const halo_partinfo *pi, int32_t gid);
/* Node type of a global id: its position among its owner's typed ranges (0 on a homogeneous
 * partition or for an id outside the graph). */
int halo_partinfo_node_type(const halo_partinfo *pi, int32_t gid);

/* One part, mapped read-only. */
typedef struct halo_part {
    int id;               /* K */
    int64_t start, end;   /* owned global ids [start, end) */
    int64_t nodes;        /* end - start */
    int64_t edges;        /* in-edges of owned nodes */
    int feat_dim;         /* features per node (the declared width when topology_only) */
    bool topology_only;   /* no feat.f32 (part-K/meta.json "features": false): feat is NULL */
    int64_t num_halo;     /* halo nodes */
    int64_t num_train;    /* training seeds */
    int64_t *indptr;      /* [nodes+1] */
    int32_t *indices;     /* [edges] global source ids */
    float *feat;          /* [nodes*feat_dim]; NULL when topology_only or typed (rows through
                           * halo_part_feat_ptr / halo_part_feat_row) */
    int32_t *label;       /* [nodes] */
    uint8_t *split;       /* [nodes] */
    int32_t *halo;        /* [num_halo] sorted */
    int32_t *halo_deg;    /* [num_halo] */
    int32_t *train;       /* [num_train] */
    int nrels;            /* relations (0: homogeneous part; the typed arrays are NULL) */
    uint8_t *ntype;       /* [nodes] node types, or NULL */
    uint8_t *etype;       /* [edges] relation of each in-edge, or NULL */
    uint8_t *halo_ntype;  /* [num_halo] node types of the halo nodes, or NULL */
    halo_map maps[11];    /* the mappings behind the arrays */
    int ntypes;           /* typed part: node types (partition.json), else 0 */
    int64_t tstart[HALO_MAX_NTYPES + 1]; /* typed: the part's type t owns global ids
                                          * [tstart[t], tstart[t+1]) */
    int tdim[HALO_MAX_NTYPES];           /* typed: w_t of each type */
    const float *tfeat[HALO_MAX_NTYPES]; /* typed: feat.TYPE.f32 rows, NULL when w_t = 0 */
    halo_map tmaps[HALO_MAX_NTYPES];     /* their mappings */
} halo_part;

/* Feature row of owned node gid where it is stored, and its width in *w: feat_dim floats of
 * feat on a homogeneous part, the w_t floats of the type's file on a typed one (NULL, *w = 0
 * for a featureless type or a topology-only part). */
static inline const float *halo_part_feat_ptr(const halo_part *p, int64_t gid, int *w)
{
    if (p->ntypes == 0) {
        *w = p->feat != NULL ? p->feat_dim : 0;
        return p->feat != NULL ? p->feat + (gid - p->start) * (int64_t)p->feat_dim : NULL;
    }
    int t = p->ntype[gid - p->start];
    *w = p->tfeat[t] != NULL ? p->tdim[t] : 0;
    return p->tfeat[t] != NULL ? p->tfeat[t] + (gid - p->tstart[t]) * (int64_t)*w : NULL;
}
/* Writes owned node gid's row, feat_dim floats, into dst: the type's w_t columns, zeros after
 * (all zeros for a featureless type), as rows travel and enter the model. */
void halo_part_feat_row(const halo_part *p, int64_t gid, float *dst);

/* Loads part k of pdir, checking every array's size against part-K/meta.json. A topology-only
 * part maps no feature file (feat = NULL, feat_dim kept); a typed part maps feat.TYPE.f32 of each
 * featured type (sizes from partition.json's type ranges and widths); any other part must have
 * feat.f32. */
int halo_part_load(const char *pdir, int k, halo_part **out);
void halo_part_free(halo_part *p);

#endif
