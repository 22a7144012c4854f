/* Integrity of a graph directory: structural invariants over the arrays, then CRC-32 checksums
 * against meta.json. Every message names the file at fault. */
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

/* The per-type node counts and per-relation edge counts of meta.json against the arrays. */
static int check_type_counts(const halo_graph *g)
{
    char where[4200];
    snprintf(where, sizeof where, "%s/meta.json", g->dir);
    const halo_json *nt = halo_json_get(g->meta, "node_types");
    for (int t = 0; nt != NULL && t < g->ntypes; t++) {
        int64_t want, have = halo_graph_type_start(g, t + 1) - halo_graph_type_start(g, t);
        HALO_CHECK(halo_json_get_i64(nt->items[t], "nodes", where, &want));
        if (want != have) {
            return halo_errorf(HALO_EINPUT, "%s: node_types[%d] (%s) says %" PRId64 " nodes, "
                               "ntype.u8 has %" PRId64, where, t, g->ntype_name[t], want, have);
        }
    }
    int64_t count[HALO_MAX_RELS] = {0};
    for (int64_t e = 0; e < g->edges; e++) {
        count[g->etype[e]]++;
    }
    const halo_json *rl = halo_json_get(g->meta, "relations");
    for (int r = 0; r < g->nrels; r++) {
        int64_t want;
        HALO_CHECK(halo_json_get_i64(rl->items[r], "edges", where, &want));
        if (want != count[r]) {
            return halo_errorf(HALO_EINPUT, "%s: relations[%d] (%s) says %" PRId64 " edges, "
                               "etype.u8 has %" PRId64, where, r, g->rel[r].name, want, count[r]);
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

/* Compares the CRC-32 and size of the file `name` (mapped as m) with its entry in meta.json
 * "files"; `done` counts the bytes checksummed so far, for the progress bar. */
static int verify_file_checksum(const halo_graph *g, const char *name, const halo_map *m,
                                halo_progress *pr, uint64_t *done)
{
    char f[4200], where[4200];
    snprintf(f, sizeof f, "%s/%s", g->dir, name);
    snprintf(where, sizeof where, "%s/meta.json", g->dir);
    const halo_json *files = halo_json_get(g->meta, "files");
    const halo_json *entry = halo_json_get(files, name);
    if (entry == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: no entry for %s in \"files\"", where, name);
    }
    int64_t bytes;
    const char *hex;
    HALO_CHECK(halo_json_get_i64(entry, "bytes", where, &bytes));
    HALO_CHECK(halo_json_get_str(entry, "crc32", where, &hex));
    if ((uint64_t)bytes != (uint64_t)m->size) {
        return halo_errorf(HALO_EINPUT, "%s: %zu bytes, meta.json \"files\" says %" PRId64, f,
                           m->size, bytes);
    }
    char *end;
    unsigned long want = strtoul(hex, &end, 16);
    if (*end != '\0' || end == hex) {
        return halo_errorf(HALO_EINPUT, "%s: crc32 of %s is not hexadecimal: '%s'", where,
                           name, hex);
    }
    uint32_t crc = 0;
    const unsigned char *p = m->data;
    size_t left = m->size;
    while (left > 0) {
        size_t step = left < (64u << 20) ? left : (64u << 20);
        crc = halo_crc32(crc, p, step);
        p += step;
        left -= step;
        *done += step;
        halo_progress_update(pr, *done);
    }
    if (crc != (uint32_t)want) {
        return halo_errorf(HALO_EINPUT, "%s: checksum %08x does not match meta.json (%08lx): the "
                           "file was changed after it was written", f, crc, want);
    }
    return 0;
}

/* The per-type feature files of typed graph g (their sizes were checked by the load): finite
 * values in each, and no file for a featureless type (nor for any type of a topology-only
 * graph). */
static int check_type_feat(const halo_graph *g)
{
    char name[64], f[4300];
    for (int t = 0; t < g->ntypes; t++) {
        halo_graph_type_feat_name(g, t, name, sizeof name);
        snprintf(f, sizeof f, "%s/%s", g->dir, name);
        if (!halo_graph_has_type_feat(g, t)) {
            if (halo_path_exists(f)) {
                return halo_errorf(HALO_EINPUT, "%s: node type %s has %s, so it has no feature "
                                   "file", f, g->ntype_name[t],
                                   g->topology_only ? "no features (\"features\": false)"
                                                    : "0 features (feat_dim 0)");
            }
            continue;
        }
        HALO_CHECK(halo_check_features(g->tfeat[t], g->tstart[t + 1] - g->tstart[t],
                                       g->ntype_feat_dim[t], 0, f));
    }
    return 0;
}

int halo_graph_verify(const char *dir)
{
    halo_graph *g;
    HALO_CHECK(halo_graph_load(dir, &g));
    char f[4200], name[64];
    int rc = halo_check_features(g->feat, g->nodes, g->feat_dim, 0,
                                 file_name(f, sizeof f, g->dir, HALO_GA_FEAT));
    if (rc == 0 && halo_graph_typed(g)) {
        rc = check_type_feat(g);
    }
    if (rc == 0 && halo_graph_typed(g)) {
        rc = check_type_counts(g);
    }
    uint64_t total = 0, done = 0;
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        total += g->maps[a].size;
    }
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        total += g->tmaps[t].size;
    }
    halo_progress pr;
    halo_progress_begin(&pr, "verify: checksums", total);
    for (int a = 0; a < HALO_GA_COUNT && rc == 0; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        rc = verify_file_checksum(g, halo_graph_files[a], &g->maps[a], &pr, &done);
    }
    for (int t = 0; t < g->ntypes && rc == 0; t++) {
        if (halo_graph_has_type_feat(g, t)) {
            halo_graph_type_feat_name(g, t, name, sizeof name);
            rc = verify_file_checksum(g, name, &g->tmaps[t], &pr, &done);
        }
    }
    halo_progress_end(&pr);
    halo_graph_free(g);
    return rc;
}
