/* Graph directory: allocation, mmap loading with size checks, atomic writing, meta.json. */
#include "graph/graph.h"

#include "core/err.h"
#include "core/mem.h"
#include "graph/stats.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *const halo_graph_files[HALO_GA_COUNT] = {
    "indptr.i64", "indices.i32", "feat.f32", "label.i32", "split.u8", "ntype.u8",
};

bool halo_graph_has_array(const halo_graph *g, int which)
{
    switch (which) {
    case HALO_GA_FEAT: return !g->topology_only;
    case HALO_GA_NTYPE: return g->ntypes > 1;
    default: return which >= 0 && which < HALO_GA_COUNT;
    }
}

uint64_t halo_graph_array_bytes(const halo_graph *g, int which)
{
    uint64_t n = (uint64_t)g->nodes;
    switch (which) {
    case HALO_GA_INDPTR: return (n + 1) * 8;
    case HALO_GA_INDICES: return (uint64_t)g->edges * 4;
    case HALO_GA_FEAT: return g->topology_only ? 0 : n * (uint64_t)g->feat_dim * 4;
    case HALO_GA_LABEL: return n * 4;
    case HALO_GA_SPLIT: return n;
    case HALO_GA_NTYPE: return g->ntypes > 1 ? n : 0;
    default: return 0;
    }
}

static void **graph_slot(halo_graph *g, int which)
{
    switch (which) {
    case HALO_GA_INDPTR: return (void **)&g->indptr;
    case HALO_GA_INDICES: return (void **)&g->indices;
    case HALO_GA_FEAT: return (void **)&g->feat;
    case HALO_GA_LABEL: return (void **)&g->label;
    case HALO_GA_SPLIT: return (void **)&g->split;
    default: return (void **)&g->ntype;
    }
}

const void *halo_graph_array(const halo_graph *g, int which)
{
    return *graph_slot((halo_graph *)g, which);
}

halo_graph *halo_graph_alloc(int64_t nodes, int64_t edges, int feat_dim, int classes, int ntypes)
{
    halo_graph *g = HALO_NEW(halo_graph, 1);
    g->nodes = nodes;
    g->edges = edges;
    g->feat_dim = feat_dim;
    g->classes = classes;
    g->ntypes = ntypes;
    g->directed = true;
    g->owned = true;
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        uint64_t b = halo_graph_array_bytes(g, a);
        if (b > 0) {
            *graph_slot(g, a) = halo_calloc(1, b);
        }
    }
    return g;
}

/* madvise(MADV_DONTNEED) over the whole pages inside bytes [lo, hi) of mapping m. */
static void release_bytes(const halo_map *m, uint64_t lo, uint64_t hi)
{
    static uint64_t page;
    if (page == 0) {
        long ps = sysconf(_SC_PAGESIZE);
        page = ps > 0 ? (uint64_t)ps : 4096;
    }
    hi = hi < m->size ? hi : m->size;
    if (m->data == NULL || lo >= hi) {
        return;
    }
    uintptr_t base = (uintptr_t)m->data; /* page aligned (mmap) */
    uint64_t a = (lo + page - 1) / page * page, b = hi / page * page;
    if (b > a) {
        (void)madvise((void *)(base + a), b - a, MADV_DONTNEED); /* only a hint */
    }
}

void halo_graph_release_rows(const halo_graph *g, int64_t v0, int64_t v1)
{
    if (g->owned || v0 >= v1 || g->indptr == NULL) {
        return;
    }
    uint64_t a = (uint64_t)v0, b = (uint64_t)v1, f = (uint64_t)g->feat_dim * 4;
    release_bytes(&g->maps[HALO_GA_INDICES], (uint64_t)g->indptr[v0] * 4,
                  (uint64_t)g->indptr[v1] * 4);
    release_bytes(&g->maps[HALO_GA_INDPTR], a * 8, (b + 1) * 8);
    release_bytes(&g->maps[HALO_GA_FEAT], a * f, b * f);
    release_bytes(&g->maps[HALO_GA_LABEL], a * 4, b * 4);
    release_bytes(&g->maps[HALO_GA_SPLIT], a, b);
    release_bytes(&g->maps[HALO_GA_NTYPE], a, b);
}

void halo_graph_drop_features(halo_graph *g)
{
    if (g->owned) {
        halo_free(g->feat);
    } else {
        halo_unmap(&g->maps[HALO_GA_FEAT]);
    }
    g->feat = NULL;
    g->topology_only = true;
}

void halo_graph_free(halo_graph *g)
{
    if (g == NULL) {
        return;
    }
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (g->owned) {
            halo_free(*graph_slot(g, a));
        } else {
            halo_unmap(&g->maps[a]);
        }
    }
    halo_json_free(g->meta);
    halo_free(g);
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
        *graph_slot(g, a) = g->maps[a].data;
    }
    /* Every command relies on the CSR, labels and split being well formed: check them here,
     * once, in O(nodes + edges), rather than in each command. */
    HALO_TRY(halo_graph_check(g, dir));
    *out = g;
    return 0;
fail:
    halo_graph_free(g);
    return rc;
}

int halo_graph_write_meta(const halo_graph *g, const char *tmpdir, const uint32_t *crc,
                          const uint64_t *bytes, const char *source_json)
{
    halo_jw w;
    char path[4096];
    halo_jw_init(&w, true);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "format");
    halo_jw_i64(&w, HALO_GRAPH_FORMAT);
    halo_jw_key(&w, "name");
    halo_jw_str(&w, g->name);
    halo_jw_key(&w, "nodes");
    halo_jw_i64(&w, g->nodes);
    halo_jw_key(&w, "edges");
    halo_jw_i64(&w, g->edges);
    halo_jw_key(&w, "feat_dim");
    halo_jw_i64(&w, g->feat_dim);
    if (g->topology_only) {
        /* written only when false, so featured graphs keep the meta.json of before */
        halo_jw_key(&w, "features");
        halo_jw_bool(&w, false);
    }
    halo_jw_key(&w, "classes");
    halo_jw_i64(&w, g->classes);
    halo_jw_key(&w, "directed");
    halo_jw_bool(&w, g->directed);
    halo_jw_key(&w, "ntypes");
    halo_jw_i64(&w, g->ntypes > 0 ? g->ntypes : 1);
    halo_jw_key(&w, "files");
    halo_jw_obj_begin(&w);
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        char hex[16];
        snprintf(hex, sizeof hex, "%08x", crc[a]);
        halo_jw_key(&w, halo_graph_files[a]);
        halo_jw_obj_begin(&w);
        halo_jw_key(&w, "bytes");
        halo_jw_i64(&w, (int64_t)bytes[a]);
        halo_jw_key(&w, "crc32");
        halo_jw_str(&w, hex);
        halo_jw_obj_end(&w);
    }
    halo_jw_obj_end(&w);
    halo_jw_key(&w, "source");
    halo_jw_raw(&w, source_json != NULL ? source_json : "{}");
    halo_jw_obj_end(&w);
    halo_sb_putc(&w.sb, '\n');
    int rc = halo_path_join(path, sizeof path, tmpdir, "meta.json");
    if (rc == 0) {
        rc = halo_file_write_all(path, w.sb.buf, w.sb.len);
    }
    halo_jw_free(&w);
    return rc;
}

int halo_graph_write(const halo_graph *g, const char *dir, const char *source_json)
{
    return halo_graph_write_with(g, dir, source_json, NULL, NULL, 0);
}

int halo_graph_write_with(const halo_graph *g, const char *dir, const char *source_json,
                          const char *extra_name, const void *extra, size_t extra_bytes)
{
    char tmp[4096], path[4096];
    uint32_t crc[HALO_GA_COUNT] = {0};
    uint64_t bytes[HALO_GA_COUNT] = {0};
    int rc = 0;
    HALO_CHECK(halo_outdir_begin(dir, "indptr.i64", "graph", tmp, sizeof tmp));
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        uint64_t n = halo_graph_array_bytes(g, a);
        const void *data = halo_graph_array(g, a);
        HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[a]));
        HALO_TRY(halo_file_write_all(path, data, (size_t)n));
        crc[a] = halo_crc32(0, data, (size_t)n);
        bytes[a] = n;
    }
    if (extra_name != NULL) {
        HALO_TRY(halo_path_join(path, sizeof path, tmp, extra_name));
        HALO_TRY(halo_file_write_all(path, extra, extra_bytes));
    }
    HALO_TRY(halo_graph_write_meta(g, tmp, crc, bytes, source_json));
    HALO_TRY(halo_outdir_commit(tmp, dir));
    return 0;
fail:
    halo_outdir_abort(tmp);
    return rc;
}
