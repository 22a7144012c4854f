/* The graph in memory (allocation, arrays, node types and relations, freeing) and its writing:
 * the arrays and meta.json, atomically. Loading: load.c. */
#include "graph/graph.h"

#include "core/err.h"
#include "core/mem.h"
#include "graph/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *const halo_graph_files[HALO_GA_COUNT] = {
    "indptr.i64", "indices.i32", "feat.f32", "label.i32", "split.u8", "ntype.u8", "etype.u8",
};

bool halo_graph_has_array(const halo_graph *g, int which)
{
    switch (which) {
    case HALO_GA_FEAT: return !g->topology_only && g->nrels == 0;
    case HALO_GA_NTYPE: return g->ntypes > 1;
    case HALO_GA_ETYPE: return g->nrels > 0;
    default: return which >= 0 && which < HALO_GA_COUNT;
    }
}

uint64_t halo_graph_array_bytes(const halo_graph *g, int which)
{
    uint64_t n = (uint64_t)g->nodes;
    switch (which) {
    case HALO_GA_INDPTR: return (n + 1) * 8;
    case HALO_GA_INDICES: return (uint64_t)g->edges * 4;
    case HALO_GA_FEAT:
        return g->topology_only || g->nrels > 0 ? 0 : n * (uint64_t)g->feat_dim * 4;
    case HALO_GA_LABEL: return n * 4;
    case HALO_GA_SPLIT: return n;
    case HALO_GA_NTYPE: return g->ntypes > 1 ? n : 0;
    case HALO_GA_ETYPE: return g->nrels > 0 ? (uint64_t)g->edges : 0;
    default: return 0;
    }
}

void **halo_graph_slot(halo_graph *g, int which)
{
    switch (which) {
    case HALO_GA_INDPTR: return (void **)&g->indptr;
    case HALO_GA_INDICES: return (void **)&g->indices;
    case HALO_GA_FEAT: return (void **)&g->feat;
    case HALO_GA_LABEL: return (void **)&g->label;
    case HALO_GA_SPLIT: return (void **)&g->split;
    case HALO_GA_ETYPE: return (void **)&g->etype;
    default: return (void **)&g->ntype;
    }
}

const void *halo_graph_array(const halo_graph *g, int which)
{
    return *halo_graph_slot((halo_graph *)g, which);
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
            *halo_graph_slot(g, a) = halo_calloc(1, b);
            if (a == HALO_GA_FEAT) { /* before the first touch, so the faults take huge pages */
                halo_mem_hugepages(g->feat, b);
            }
        }
    }
    return g;
}

void halo_feat_row_pad(float *dst, const float *src, int w, int dim)
{
    if (w > 0) {
        memcpy(dst, src, (size_t)w * sizeof(float));
    }
    if (dim > w) {
        memset(dst + w, 0, (size_t)(dim - w) * sizeof(float));
    }
}

void halo_graph_feat_row(const halo_graph *g, int64_t v, float *dst)
{
    int w;
    const float *src = halo_graph_feat_ptr(g, v, &w);
    halo_feat_row_pad(dst, src, w, g->feat_dim);
}

void halo_graph_type_feat_name(const halo_graph *g, int t, char *buf, size_t size)
{
    snprintf(buf, size, "feat.%s.f32", g->ntype_name[t]);
}

bool halo_graph_has_type_feat(const halo_graph *g, int t)
{
    return halo_graph_typed_feat(g) && t >= 0 && t < g->ntypes && g->ntype_feat_dim[t] > 0;
}

uint64_t halo_graph_type_feat_bytes(const halo_graph *g, int t)
{
    if (!halo_graph_has_type_feat(g, t)) {
        return 0;
    }
    return (uint64_t)(g->tstart[t + 1] - g->tstart[t]) * (uint64_t)g->ntype_feat_dim[t] * 4;
}

void halo_graph_set_type_starts(halo_graph *g)
{
    for (int t = 0; t <= g->ntypes && t <= HALO_MAX_NTYPES; t++) {
        g->tstart[t] = halo_graph_type_start(g, t);
    }
}

void halo_graph_alloc_type_feat(halo_graph *g)
{
    halo_graph_set_type_starts(g);
    for (int t = 0; t < g->ntypes; t++) {
        halo_free(g->tfeat[t]);
        g->tfeat[t] = NULL;
        uint64_t b = halo_graph_type_feat_bytes(g, t);
        if (halo_graph_has_type_feat(g, t)) {
            g->tfeat[t] = halo_calloc(1, b > 0 ? b : 4);
            halo_mem_hugepages(g->tfeat[t], b);
        }
    }
}

void halo_graph_set_relations(halo_graph *g, const halo_relation *rels, int nrels)
{
    g->nrels = nrels;
    memcpy(g->rel, rels, (size_t)nrels * sizeof *rels);
    halo_free(g->etype);
    g->etype = halo_calloc(1, (size_t)g->edges > 0 ? (size_t)g->edges : 1);
    if (g->ntype == NULL && g->ntypes > 1) {
        g->ntype = halo_calloc(1, (size_t)g->nodes > 0 ? (size_t)g->nodes : 1);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void halo_graph_typed_csr(halo_graph *g, int64_t ne, int32_t *dst, uint64_t *key)
{
    int64_t n = g->nodes;
    int64_t *start = HALO_NEW(int64_t, n + 1);
    for (int64_t i = 0; i < ne; i++) {
        start[dst[i] + 1]++;
    }
    for (int64_t v = 0; v < n; v++) {
        start[v + 1] += start[v];
    }
    uint64_t *sorted = HALO_ALLOC(uint64_t, ne + 1);
    int64_t *fill = HALO_ALLOC(int64_t, n + 1);
    memcpy(fill, start, (size_t)(n + 1) * sizeof *fill);
    for (int64_t i = 0; i < ne; i++) {
        sorted[fill[dst[i]]++] = key[i];
    }
    halo_free(fill);
    halo_free(dst);
    halo_free(key);
    int64_t out = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t b = start[v], e = start[v + 1];
        qsort(sorted + b, (size_t)(e - b), sizeof *sorted, cmp_u64);
        g->indptr[v] = out;
        for (int64_t i = b; i < e; i++) {
            if (i == b || sorted[i] != sorted[i - 1]) {
                sorted[out++] = sorted[i];
            }
        }
    }
    g->indptr[n] = out;
    g->edges = out;
    halo_free(start);
    halo_free(g->indices);
    halo_free(g->etype);
    g->indices = HALO_ALLOC(int32_t, out + 1);
    g->etype = HALO_ALLOC(uint8_t, out + 1);
    for (int64_t i = 0; i < out; i++) {
        g->indices[i] = (int32_t)(sorted[i] & 0xffffffffu);
        g->etype[i] = (uint8_t)(sorted[i] >> 32);
    }
    halo_free(sorted);
}

int halo_graph_relation(const halo_graph *g, const char *name)
{
    for (int r = 0; r < g->nrels; r++) {
        if (strcmp(g->rel[r].name, name) == 0) {
            return r;
        }
    }
    return -1;
}

int halo_graph_ntype_id(const halo_graph *g, const char *name)
{
    for (int t = 0; t < g->ntypes && t < HALO_MAX_NTYPES; t++) {
        if (strcmp(g->ntype_name[t], name) == 0) {
            return t;
        }
    }
    return -1;
}

int64_t halo_graph_type_start(const halo_graph *g, int t)
{
    if (g->ntype == NULL) {
        return t <= 0 ? 0 : g->nodes;
    }
    int64_t lo = 0, hi = g->nodes; /* first v with ntype[v] >= t */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g->ntype[mid] < t) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
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
    for (int t = 0; t < g->ntypes && halo_graph_typed_feat(g); t++) {
        int64_t lo = v0 > g->tstart[t] ? v0 : g->tstart[t];
        int64_t hi = v1 < g->tstart[t + 1] ? v1 : g->tstart[t + 1];
        uint64_t tw = (uint64_t)g->ntype_feat_dim[t] * 4;
        if (lo < hi) {
            release_bytes(&g->tmaps[t], (uint64_t)(lo - g->tstart[t]) * tw,
                          (uint64_t)(hi - g->tstart[t]) * tw);
        }
    }
    release_bytes(&g->maps[HALO_GA_INDICES], (uint64_t)g->indptr[v0] * 4,
                  (uint64_t)g->indptr[v1] * 4);
    release_bytes(&g->maps[HALO_GA_INDPTR], a * 8, (b + 1) * 8);
    release_bytes(&g->maps[HALO_GA_FEAT], a * f, b * f);
    release_bytes(&g->maps[HALO_GA_LABEL], a * 4, b * 4);
    release_bytes(&g->maps[HALO_GA_SPLIT], a, b);
    release_bytes(&g->maps[HALO_GA_NTYPE], a, b);
    release_bytes(&g->maps[HALO_GA_ETYPE], (uint64_t)g->indptr[v0], (uint64_t)g->indptr[v1]);
}

void halo_graph_drop_features(halo_graph *g)
{
    if (g->owned) {
        halo_free(g->feat);
    } else {
        halo_unmap(&g->maps[HALO_GA_FEAT]);
    }
    g->feat = NULL;
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        if (g->owned) {
            halo_free(g->tfeat[t]);
        } else {
            halo_unmap(&g->tmaps[t]);
        }
        g->tfeat[t] = NULL;
    }
    g->topology_only = true;
}

void halo_graph_free(halo_graph *g)
{
    if (g == NULL) {
        return;
    }
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (g->owned) {
            halo_free(*halo_graph_slot(g, a));
        } else {
            halo_unmap(&g->maps[a]);
        }
    }
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        if (g->owned) {
            halo_free(g->tfeat[t]);
        } else {
            halo_unmap(&g->tmaps[t]);
        }
    }
    halo_json_free(g->meta);
    halo_free(g);
}

/* The typed part of meta.json: node types (name, node count, feature width), relations (name,
 * endpoint types, edge count) and the target type. Counts come from the arrays. */
static void write_types(const halo_graph *g, halo_jw *w)
{
    int nt = g->ntypes > 0 ? g->ntypes : 1;
    halo_jw_key(w, "node_types");
    halo_jw_arr_begin(w);
    for (int t = 0; t < nt; t++) {
        halo_jw_obj_begin(w);
        halo_jw_key(w, "name");
        halo_jw_str(w, g->ntype_name[t]);
        halo_jw_key(w, "nodes");
        halo_jw_i64(w, halo_graph_type_start(g, t + 1) - halo_graph_type_start(g, t));
        halo_jw_key(w, "feat_dim");
        halo_jw_i64(w, g->ntype_feat_dim[t]);
        halo_jw_obj_end(w);
    }
    halo_jw_arr_end(w);
    int64_t count[HALO_MAX_RELS] = {0};
    for (int64_t e = 0; e < g->edges && g->etype != NULL; e++) {
        count[g->etype[e] < HALO_MAX_RELS ? g->etype[e] : 0]++;
    }
    halo_jw_key(w, "relations");
    halo_jw_arr_begin(w);
    for (int r = 0; r < g->nrels; r++) {
        halo_jw_obj_begin(w);
        halo_jw_key(w, "name");
        halo_jw_str(w, g->rel[r].name);
        halo_jw_key(w, "src");
        halo_jw_str(w, g->ntype_name[g->rel[r].src]);
        halo_jw_key(w, "dst");
        halo_jw_str(w, g->ntype_name[g->rel[r].dst]);
        halo_jw_key(w, "edges");
        halo_jw_i64(w, count[r]);
        halo_jw_obj_end(w);
    }
    halo_jw_arr_end(w);
    halo_jw_key(w, "target_type");
    halo_jw_str(w, g->ntype_name[g->target_type]);
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
    if (halo_graph_typed(g)) {
        write_types(g, &w); /* only typed graphs: homogeneous meta.json stays as before */
    }
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
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        if (!halo_graph_has_type_feat(g, t)) {
            continue;
        }
        char hex[16], name[64];
        uint64_t n = halo_graph_type_feat_bytes(g, t);
        snprintf(hex, sizeof hex, "%08x", halo_crc32(0, g->tfeat[t], (size_t)n));
        halo_graph_type_feat_name(g, t, name, sizeof name);
        halo_jw_key(&w, name);
        halo_jw_obj_begin(&w);
        halo_jw_key(&w, "bytes");
        halo_jw_i64(&w, (int64_t)n);
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
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        if (halo_graph_has_type_feat(g, t)) {
            char name[64];
            halo_graph_type_feat_name(g, t, name, sizeof name);
            HALO_TRY(halo_path_join(path, sizeof path, tmp, name));
            HALO_TRY(halo_file_write_all(path, g->tfeat[t],
                                         (size_t)halo_graph_type_feat_bytes(g, t)));
        }
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
