/* Structural invariants of a loaded graph's arrays (CSR shape, ids and labels in range, the
 * typed layout) and finite feature values. Every message names the file at fault. */
#include "graph/stats.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/progress.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "dir/file" for messages, or just "file" without a directory. */
static const char *file_name(char *buf, size_t size, const char *dir, int which)
{
    if (dir == NULL || dir[0] == '\0') {
        snprintf(buf, size, "%s", halo_graph_files[which]);
    } else {
        snprintf(buf, size, "%s/%s", dir, halo_graph_files[which]);
    }
    return buf;
}

/* The invariants of a typed graph (docs/hetero.md): node types contiguous in id order; each
 * in-edge's relation in range, its endpoints of the relation's source and destination types, and
 * each row's in-edges grouped by ascending relation; labels and split only on the target type.
 * Reads no features (those are per-type files, checked by halo_graph_verify). Assumes the
 * untyped checks passed. */
static int check_typed(const halo_graph *g, const char *dir)
{
    char f[4200];
    int64_t n = g->nodes;
    for (int64_t v = 1; v < n && g->ntype != NULL; v++) {
        if (g->ntype[v] < g->ntype[v - 1]) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is type %u after type %u: "
                               "nodes of one type must be contiguous in id order",
                               file_name(f, sizeof f, dir, HALO_GA_NTYPE), v,
                               (unsigned)g->ntype[v], (unsigned)g->ntype[v - 1]);
        }
    }
    for (int64_t v = 0; v < n; v++) {
        int dt = halo_graph_node_type(g, v);
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            unsigned r = g->etype[e];
            if (r >= (unsigned)g->nrels) {
                return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " (row %" PRId64 ") is %u, "
                                   "not a relation in [0, %d)",
                                   file_name(f, sizeof f, dir, HALO_GA_ETYPE), e, v, r, g->nrels);
            }
            int st = halo_graph_node_type(g, g->indices[e]);
            if (g->rel[r].dst != dt || g->rel[r].src != st) {
                return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is relation '%s' (%s -> "
                                   "%s) on an edge %s %d -> %s %" PRId64,
                                   file_name(f, sizeof f, dir, HALO_GA_ETYPE), e, g->rel[r].name,
                                   g->ntype_name[g->rel[r].src], g->ntype_name[g->rel[r].dst],
                                   g->ntype_name[st], g->indices[e], g->ntype_name[dt], v);
            }
            if (e > g->indptr[v] && r < g->etype[e - 1]) {
                return halo_errorf(HALO_EINPUT, "%s: row %" PRId64 " is not grouped by relation "
                                   "(entry %" PRId64 " is %u after %u)",
                                   file_name(f, sizeof f, dir, HALO_GA_ETYPE), v, e, r,
                                   (unsigned)g->etype[e - 1]);
            }
        }
    }
    for (int64_t v = 0; v < n; v++) {
        int t = halo_graph_node_type(g, v);
        if (t == g->target_type) {
            continue;
        }
        if (g->label != NULL && g->label[v] != -1) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %" PRId32 " on a %s node; "
                               "only the target type %s is labelled",
                               file_name(f, sizeof f, dir, HALO_GA_LABEL), v, g->label[v],
                               g->ntype_name[t], g->ntype_name[g->target_type]);
        }
        if (g->split != NULL && g->split[v] != HALO_SPLIT_NONE) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %u on a %s node; only the "
                               "target type %s is split",
                               file_name(f, sizeof f, dir, HALO_GA_SPLIT), v,
                               (unsigned)g->split[v], g->ntype_name[t],
                               g->ntype_name[g->target_type]);
        }
    }
    return 0;
}

int halo_graph_check(const halo_graph *g, const char *dir)
{
    char f[4200];
    int64_t n = g->nodes, e = g->edges;
    if (n > 0 && g->indptr == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: missing", file_name(f, sizeof f, dir, 0));
    }
    if (g->indptr != NULL && g->indptr[0] != 0) {
        return halo_errorf(HALO_EINPUT, "%s: entry 0 is %" PRId64 ", not 0",
                           file_name(f, sizeof f, dir, HALO_GA_INDPTR), g->indptr[0]);
    }
    for (int64_t v = 0; v < n; v++) {
        if (g->indptr[v + 1] < g->indptr[v]) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %" PRId64
                               ", less than entry %" PRId64 " (%" PRId64 ")",
                               file_name(f, sizeof f, dir, HALO_GA_INDPTR), v + 1,
                               g->indptr[v + 1], v, g->indptr[v]);
        }
    }
    if (g->indptr != NULL && g->indptr[n] != e) {
        return halo_errorf(HALO_EINPUT, "%s: last entry is %" PRId64 ", not the edge count %"
                           PRId64, file_name(f, sizeof f, dir, HALO_GA_INDPTR), g->indptr[n], e);
    }
    halo_progress pr;
    halo_progress_begin(&pr, "check: indices", (uint64_t)e);
    for (int64_t i = 0; i < e; i++) {
        if ((i & ((1 << 24) - 1)) == 0) {
            halo_progress_update(&pr, (uint64_t)i);
        }
        if (g->indices[i] < 0 || g->indices[i] >= n) {
            halo_progress_end(&pr);
            /* Find the row for the message (binary search over indptr). */
            int64_t lo = 0, hi = n;
            while (hi - lo > 1) {
                int64_t mid = lo + (hi - lo) / 2;
                if (g->indptr[mid] <= i) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " (row %" PRId64 ") is %" PRId32
                               ", not a node id in [0, %" PRId64 ")",
                               file_name(f, sizeof f, dir, HALO_GA_INDICES), i, lo,
                               g->indices[i], n);
        }
    }
    halo_progress_end(&pr);
    for (int64_t v = 0; v < n && g->label != NULL; v++) {
        if (g->label[v] < -1 || g->label[v] >= g->classes) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %" PRId32
                               ", not in [-1, %d)", file_name(f, sizeof f, dir, HALO_GA_LABEL),
                               v, g->label[v], g->classes);
        }
    }
    for (int64_t v = 0; v < n && g->split != NULL; v++) {
        if (g->split[v] > HALO_SPLIT_TEST) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %u, not in 0..3",
                               file_name(f, sizeof f, dir, HALO_GA_SPLIT), v,
                               (unsigned)g->split[v]);
        }
    }
    for (int64_t v = 0; v < n && g->ntype != NULL; v++) {
        if (g->ntype[v] >= g->ntypes) {
            return halo_errorf(HALO_EINPUT, "%s: entry %" PRId64 " is %u, not in [0, %d)",
                               file_name(f, sizeof f, dir, HALO_GA_NTYPE), v,
                               (unsigned)g->ntype[v], g->ntypes);
        }
    }
    return halo_graph_typed(g) ? check_typed(g, dir) : 0;
}

int halo_check_features(const float *feat, int64_t rows, int feat_dim, int64_t row0,
                        const char *file)
{
    for (int64_t r = 0; feat != NULL && r < rows; r++) {
        const float *x = feat + r * (int64_t)feat_dim;
        for (int j = 0; j < feat_dim; j++) {
            if (!isfinite(x[j])) {
                return halo_errorf(HALO_EINPUT, "%s: row %" PRId64 " column %d is %s, not a "
                                   "finite number", file, row0 + r, j,
                                   isnan(x[j]) ? "NaN" : "infinite");
            }
        }
    }
    return 0;
}
