/* Loading a graph directory: meta.json parsed, each array mapped and its size checked against
 * it, the typed part (node types, relations, per-type features) read, then the structural
 * invariants of check.c. */
#include "graph/graph.h"

#include "core/err.h"
#include "core/mem.h"
#include "graph/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string member of j no longer than a type name, for a typed graph's meta.json. */
static int type_name_of(const halo_json *j, const char *key, const char *where, char *out)
{
    const char *s;
    HALO_CHECK(halo_json_get_str(j, key, where, &s));
    if (s[0] == '\0' || strlen(s) >= HALO_TYPE_NAME || strpbrk(s, ",;=: ") != NULL) {
        return halo_errorf(HALO_EINPUT, "%s: %s '%s' is empty, longer than %d bytes or holds one "
                           "of ',;=: '", where, key, s, HALO_TYPE_NAME - 1);
    }
    snprintf(out, HALO_TYPE_NAME, "%s", s);
    return 0;
}

/* Reads the node types and relations of a typed graph from meta.json ("node_types",
 * "relations", "target_type"; docs/hetero.md). A graph without "relations" is homogeneous; a
 * graph with ntypes > 1 but no names gets t0, t1, ... */
static int load_types(halo_graph *g, const char *path)
{
    char where[4300];
    if (g->ntypes < 1 || g->ntypes > HALO_MAX_NTYPES) {
        return halo_errorf(HALO_EINPUT, "%s: ntypes %d is not in [1, %d]", path, g->ntypes,
                           HALO_MAX_NTYPES);
    }
    const halo_json *nt = halo_json_get(g->meta, "node_types");
    const halo_json *rl = halo_json_get(g->meta, "relations");
    for (int t = 0; t < g->ntypes; t++) {
        snprintf(g->ntype_name[t], HALO_TYPE_NAME, "t%d", t);
        g->ntype_feat_dim[t] = g->feat_dim;
    }
    if (nt != NULL) {
        if (nt->type != HALO_JSON_ARRAY || (int)nt->len != g->ntypes) {
            return halo_errorf(HALO_EINPUT, "%s: \"node_types\" must be an array of ntypes (%d) "
                               "objects", path, g->ntypes);
        }
        for (int t = 0; t < g->ntypes; t++) {
            int64_t w;
            snprintf(where, sizeof where, "%s: node_types[%d]", path, t);
            HALO_CHECK(type_name_of(nt->items[t], "name", where, g->ntype_name[t]));
            HALO_CHECK(halo_json_get_i64(nt->items[t], "feat_dim", where, &w));
            if (w < 0 || w > g->feat_dim) {
                return halo_errorf(HALO_EINPUT, "%s: feat_dim %lld is not in [0, feat_dim %d]",
                                   where, (long long)w, g->feat_dim);
            }
            g->ntype_feat_dim[t] = (int)w;
            if (halo_graph_ntype_id(g, g->ntype_name[t]) != t) {
                return halo_errorf(HALO_EINPUT, "%s: name '%s' given twice", where,
                                   g->ntype_name[t]);
            }
        }
    }
    if (rl == NULL) {
        return 0;
    }
    if (rl->type != HALO_JSON_ARRAY || rl->len < 1 || rl->len > HALO_MAX_RELS) {
        return halo_errorf(HALO_EINPUT, "%s: \"relations\" must be an array of 1..%d objects",
                           path, HALO_MAX_RELS);
    }
    g->nrels = (int)rl->len;
    for (int r = 0; r < g->nrels; r++) {
        char src[HALO_TYPE_NAME], dst[HALO_TYPE_NAME];
        halo_relation *rel = &g->rel[r];
        snprintf(where, sizeof where, "%s: relations[%d]", path, r);
        HALO_CHECK(type_name_of(rl->items[r], "name", where, rel->name));
        HALO_CHECK(type_name_of(rl->items[r], "src", where, src));
        HALO_CHECK(type_name_of(rl->items[r], "dst", where, dst));
        rel->src = halo_graph_ntype_id(g, src);
        rel->dst = halo_graph_ntype_id(g, dst);
        if (rel->src < 0 || rel->dst < 0) {
            return halo_errorf(HALO_EINPUT, "%s: %s '%s' is not a node type", where,
                               rel->src < 0 ? "src" : "dst", rel->src < 0 ? src : dst);
        }
        if (halo_graph_relation(g, rel->name) != r) {
            return halo_errorf(HALO_EINPUT, "%s: name '%s' given twice", where, rel->name);
        }
    }
    char target[HALO_TYPE_NAME];
    HALO_CHECK(type_name_of(g->meta, "target_type", path, target));
    g->target_type = halo_graph_ntype_id(g, target);
    if (g->target_type < 0) {
        return halo_errorf(HALO_EINPUT, "%s: target_type '%s' is not a node type", path, target);
    }
    return 0;
}

/* Maps the per-type feature files of typed graph g (after the checks: ntype is contiguous), each
 * checked against its expected size; a padded feat.f32 of an older halo is refused. */
static int load_type_feat(halo_graph *g, const char *dir)
{
    char path[4300], name[64];
    HALO_CHECK(halo_path_join(path, sizeof path, dir, halo_graph_files[HALO_GA_FEAT]));
    if (halo_path_exists(path)) {
        return halo_errorf(HALO_EINPUT, "%s: a typed graph from an older halo (one padded feature "
                           "file); regenerate or re-import it", path);
    }
    halo_graph_set_type_starts(g);
    for (int t = 0; t < g->ntypes; t++) {
        if (!halo_graph_has_type_feat(g, t)) {
            continue;
        }
        halo_graph_type_feat_name(g, t, name, sizeof name);
        HALO_CHECK(halo_path_join(path, sizeof path, dir, name));
        if (!halo_path_exists(path)) {
            return halo_errorf(HALO_EINPUT, "%s: missing: node type %s has %d features "
                               "(meta.json node_types[%d].feat_dim)", path, g->ntype_name[t],
                               g->ntype_feat_dim[t], t);
        }
        HALO_CHECK(halo_map_file(path, (size_t)halo_graph_type_feat_bytes(g, t), &g->tmaps[t]));
        halo_mem_hugepages(g->tmaps[t].data, g->tmaps[t].size); /* read at random rows */
        g->tfeat[t] = g->tmaps[t].data;
    }
    return 0;
}

int halo_graph_load(const char *dir, halo_graph **out)
{
    char path[4096];
    int rc = 0;
    *out = NULL;
    HALO_CHECK(halo_path_join(path, sizeof path, dir, "meta.json"));
    halo_graph *g = HALO_NEW(halo_graph, 1);
    snprintf(g->dir, sizeof g->dir, "%s", dir);
    HALO_TRY(halo_json_load(path, &g->meta));
    int64_t v;
    const char *s;
    HALO_TRY(halo_json_get_i64(g->meta, "format", path, &v));
    if (v != HALO_GRAPH_FORMAT) {
        rc = halo_errorf(HALO_EINPUT, "%s: format %lld is not %d", path, (long long)v,
                         HALO_GRAPH_FORMAT);
        goto fail;
    }
    HALO_TRY(halo_json_get_str(g->meta, "name", path, &s));
    snprintf(g->name, sizeof g->name, "%s", s);
    HALO_TRY(halo_json_get_i64(g->meta, "nodes", path, &g->nodes));
    HALO_TRY(halo_json_get_i64(g->meta, "edges", path, &g->edges));
    if (g->nodes < 0 || g->nodes > 2147483647LL || g->edges < 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: nodes or edges out of range", path);
        goto fail;
    }
    HALO_TRY(halo_json_get_i64(g->meta, "feat_dim", path, &v));
    if (v < 0 || v > 1000000) {
        rc = halo_errorf(HALO_EINPUT, "%s: feat_dim %lld out of range", path, (long long)v);
        goto fail;
    }
    g->feat_dim = (int)v;
    HALO_TRY(halo_json_get_i64(g->meta, "classes", path, &v));
    if (v < 0 || v > 1000000) {
        rc = halo_errorf(HALO_EINPUT, "%s: classes %lld out of range", path, (long long)v);
        goto fail;
    }
    g->classes = (int)v;
    HALO_TRY(halo_json_opt_bool(g->meta, "directed", path, true, &g->directed));
    HALO_TRY(halo_json_opt_i64(g->meta, "ntypes", path, 1, 1, 255, &v));
    g->ntypes = (int)v;
    bool features;
    HALO_TRY(halo_json_opt_bool(g->meta, "features", path, true, &features));
    g->topology_only = !features;
    HALO_TRY(load_types(g, path));
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        uint64_t bytes = halo_graph_array_bytes(g, a);
        HALO_TRY(halo_path_join(path, sizeof path, dir, halo_graph_files[a]));
        if (a == HALO_GA_FEAT && !halo_path_exists(path)) {
            rc = halo_errorf(HALO_EINPUT, "%s: missing, and meta.json does not say the graph is "
                             "topology-only (\"features\": false)", path);
            goto fail;
        }
        HALO_TRY(halo_map_file(path, (size_t)bytes, &g->maps[a]));
        if (a == HALO_GA_FEAT) { /* read at random rows by the gather */
            halo_mem_hugepages(g->maps[a].data, g->maps[a].size);
        }
        *halo_graph_slot(g, a) = g->maps[a].data;
    }
    /* Every command relies on the CSR, labels and split being well formed: check them here,
     * once, in O(nodes + edges), rather than in each command. */
    HALO_TRY(halo_graph_check(g, dir));
    if (halo_graph_typed(g)) {
        HALO_TRY(load_type_feat(g, dir));
    }
    *out = g;
    return 0;
fail:
    halo_graph_free(g);
    return rc;
}
