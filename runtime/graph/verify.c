/* halo verify: a graph directory loaded (with its invariants), its features finite, its per-type
 * counts against meta.json, and each file's CRC-32 checksum against meta.json. */
#include "graph/stats.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    snprintf(f, sizeof f, "%s/%s", g->dir, halo_graph_files[HALO_GA_FEAT]);
    int rc = halo_check_features(g->feat, g->nodes, g->feat_dim, 0, f);
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
