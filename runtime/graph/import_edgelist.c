/* halo import edgelist: a text edge list with arbitrary 64-bit ids (plus optional label, feature
 * and split files) to a graph directory with dense ids and the id map beside it. */
#include "graph/import.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "graph/textio.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_EMPTY UINT64_MAX /* never an id: ids are at most 2^63-1 */

/* Original id -> dense id, an open-addressing hash table, plus the reverse array. */
typedef struct id_map {
    uint64_t *keys;   /* [cap] original ids, ID_EMPTY for a free slot */
    int32_t *vals;    /* [cap] dense id of keys[i] */
    uint64_t cap;     /* slots, a power of two, at most half full */
    int64_t n;        /* ids stored (= nodes) */
    int64_t *orig;    /* [n] dense id -> original id */
    int64_t orig_cap; /* room in orig */
} id_map;

/* splitmix64's finaliser: spreads sequential ids over the table. */
static uint64_t id_hash(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static void idmap_free(id_map *m)
{
    halo_free(m->keys);
    halo_free(m->vals);
    halo_free(m->orig);
    memset(m, 0, sizeof *m);
}

/* Slot of key: where it is, or the free slot where it would go. */
static uint64_t idmap_slot(const id_map *m, uint64_t key)
{
    uint64_t i = id_hash(key) & (m->cap - 1);
    while (m->keys[i] != ID_EMPTY && m->keys[i] != key) {
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

/* Dense id of key, or -1 when it was never seen. */
static int32_t idmap_find(const id_map *m, uint64_t key)
{
    if (m->cap == 0) {
        return -1;
    }
    uint64_t i = idmap_slot(m, key);
    return m->keys[i] == key ? m->vals[i] : -1;
}

static void idmap_grow(id_map *m)
{
    uint64_t old_cap = m->cap;
    uint64_t *old_keys = m->keys;
    int32_t *old_vals = m->vals;
    m->cap = old_cap == 0 ? 1024 : old_cap * 2;
    m->keys = HALO_ALLOC(uint64_t, m->cap);
    m->vals = HALO_ALLOC(int32_t, m->cap);
    memset(m->keys, 0xff, m->cap * sizeof *m->keys);
    for (uint64_t i = 0; i < old_cap; i++) {
        if (old_keys[i] != ID_EMPTY) {
            uint64_t s = idmap_slot(m, old_keys[i]);
            m->keys[s] = old_keys[i];
            m->vals[s] = old_vals[i];
        }
    }
    halo_free(old_keys);
    halo_free(old_vals);
}

/* Dense id of key, assigning the next one on first sight; fails past 2^31-1 nodes. */
static int idmap_get(id_map *m, const halo_import_reader *r, uint64_t key, int32_t *out)
{
    if ((uint64_t)(m->n + 1) * 2 > m->cap) {
        idmap_grow(m);
    }
    uint64_t i = idmap_slot(m, key);
    if (m->keys[i] == key) {
        *out = m->vals[i];
        return 0;
    }
    if (m->n == INT32_MAX) {
        return halo_import_fail(r, "more than 2^31-1 distinct node ids");
    }
    if (m->n == m->orig_cap) {
        m->orig_cap = m->orig_cap < 1024 ? 1024 : m->orig_cap * 2;
        m->orig = halo_realloc(m->orig, (size_t)m->orig_cap * sizeof *m->orig);
    }
    m->keys[i] = key;
    m->vals[i] = (int32_t)m->n;
    m->orig[m->n] = (int64_t)key;
    *out = (int32_t)m->n++;
    return 0;
}

/* Frees the hash table but keeps orig: the table is not needed while the CSR is built, which is
 * when memory peaks. */
static void idmap_drop_table(id_map *m)
{
    halo_free(m->keys);
    halo_free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = 0;
}

/* Builds the hash table again from orig. */
static void idmap_rebuild(id_map *m)
{
    m->cap = 1024;
    while (m->cap < (uint64_t)m->n * 2) {
        m->cap *= 2;
    }
    m->keys = HALO_ALLOC(uint64_t, m->cap);
    m->vals = HALO_ALLOC(int32_t, m->cap);
    memset(m->keys, 0xff, m->cap * sizeof *m->keys);
    for (int64_t v = 0; v < m->n; v++) {
        uint64_t s = idmap_slot(m, (uint64_t)m->orig[v]);
        m->keys[s] = (uint64_t)m->orig[v];
        m->vals[s] = (int32_t)v;
    }
}

/* The next line of r that is not a comment or blank: 1, 0 at the end of the file, or an error. */
static int el_next_line(halo_import_reader *r, char **line)
{
    int got;
    do {
        got = halo_import_reader_next(r, line);
    } while (got == 1 && halo_import_is_comment(*line));
    return got;
}

/* el_next_line for files of two fields a line; another count is an error that names the fields
 * expected ("src dst"). */
static int el_next_pair(halo_import_reader *r, const char *fields, char **line)
{
    int got = el_next_line(r, line);
    if (got == 1) {
        int nf = halo_import_count_fields(*line, 0);
        if (nf != 2) {
            return halo_import_fail(r, "%d fields, expected '%s'", nf, fields);
        }
    }
    return got;
}

/* Reads the edge list: "src dst" per line, '#'/'%' comments and blank lines skipped. An edge
 * list without edges is an empty graph, an error. */
static int el_read_edges(const char *path, id_map *ids, halo_import_edges *edges)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = el_next_pair(r, "src dst", &line)) == 1) {
        char *cur = line, *f;
        uint64_t a, b;
        int32_t u = 0, v = 0;
        halo_import_next_field(&cur, 0, &f);
        HALO_TRY(halo_import_parse_u64(r, f, "source id", &a));
        halo_import_next_field(&cur, 0, &f);
        HALO_TRY(halo_import_parse_u64(r, f, "destination id", &b));
        HALO_TRY(idmap_get(ids, r, a, &u));
        HALO_TRY(idmap_get(ids, r, b, &v));
        halo_import_edges_add(edges, u, v);
    }
    HALO_TRY(got);
    if (edges->n == 0) {
        rc = halo_import_fail(r, "no edges: the graph is empty");
    }
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Cuts the id field off a line of a node file and looks it up; unknown ids are errors. */
static int el_node(const halo_import_reader *r, const id_map *ids, char **cur, int32_t *out)
{
    char *f;
    uint64_t key;
    halo_import_next_field(cur, 0, &f);
    HALO_CHECK(halo_import_parse_u64(r, f, "node id", &key));
    *out = idmap_find(ids, key);
    if (*out < 0) {
        return halo_import_fail(r, "node id %llu does not appear in the edge list",
                                (unsigned long long)key);
    }
    return 0;
}

/* Reads "id label" lines; unlisted nodes stay unlabelled (-1). Sets *classes to max label + 1. */
static int el_read_labels(const char *path, const id_map *ids, int32_t *label, int *classes)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    int32_t max = -1;
    uint8_t *seen = HALO_NEW(uint8_t, ids->n);
    for (int64_t v = 0; v < ids->n; v++) {
        label[v] = -1;
    }
    rc = halo_import_reader_open(path, &r);
    if (rc < 0) {
        halo_free(seen);
        return rc;
    }
    while ((got = el_next_pair(r, "id label", &line)) == 1) {
        char *cur = line, *f;
        int32_t v = 0;
        HALO_TRY(el_node(r, ids, &cur, &v));
        if (seen[v]) {
            rc = halo_import_fail(r, "node id %lld is labelled twice", (long long)ids->orig[v]);
            goto fail;
        }
        seen[v] = 1;
        halo_import_next_field(&cur, 0, &f);
        HALO_TRY(halo_import_parse_label(r, f, &label[v]));
        max = label[v] > max ? label[v] : max;
    }
    HALO_TRY(got);
    *classes = max + 1;
fail:
    halo_free(seen);
    halo_import_reader_close(r);
    return rc;
}

/* Reads "id f1 f2 ..." lines, as wide as the first; every node needs exactly one row. */
static int el_read_feat(const char *path, const id_map *ids, float **feat, int *width)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got, w = 0;
    int64_t rows = 0;
    float *x = NULL;
    uint8_t *seen = HALO_NEW(uint8_t, ids->n);
    rc = halo_import_reader_open(path, &r);
    if (rc < 0) {
        halo_free(seen);
        return rc;
    }
    while ((got = el_next_line(r, &line)) == 1) {
        char *cur = line;
        int32_t v = 0;
        if (x == NULL) {
            int nf = halo_import_count_fields(line, 0);
            if (nf < 2 || nf > 1000001) {
                rc = halo_import_fail(r, "%d values after the id: a feature row needs 1 to 10^6",
                                      nf - 1);
                goto fail;
            }
            w = nf - 1;
            size_t cells = (size_t)ids->n * (size_t)w;
            x = HALO_ALLOC(float, cells);
        }
        HALO_TRY(el_node(r, ids, &cur, &v));
        if (seen[v]) {
            rc = halo_import_fail(r, "node id %lld has a second feature row",
                                  (long long)ids->orig[v]);
            goto fail;
        }
        seen[v] = 1;
        HALO_TRY(halo_import_parse_row(r, cur != NULL ? cur : "", 0, w, x + (size_t)v * (size_t)w));
        rows++;
    }
    HALO_TRY(got);
    if (rows < ids->n) {
        int64_t v = 0;
        while (seen[v]) {
            v++;
        }
        rc = halo_import_fail(r,
                              "end of file, but node id %lld has no feature row (%lld of %lld "
                              "nodes have one)",
                              (long long)ids->orig[v], (long long)rows, (long long)ids->n);
        goto fail;
    }
    *feat = x;
    *width = w;
    x = NULL;
fail:
    halo_free(x);
    halo_free(seen);
    halo_import_reader_close(r);
    return rc;
}

/* Reads "id train|valid|test" lines; unlisted nodes are in no split. Counts each split. */
static int el_read_split(const char *path, const id_map *ids, uint8_t *split, int64_t *count)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = el_next_pair(r, "id train|valid|test", &line)) == 1) {
        char *cur = line, *f;
        int32_t v = 0;
        HALO_TRY(el_node(r, ids, &cur, &v));
        halo_import_next_field(&cur, 0, &f);
        uint8_t s = HALO_SPLIT_NONE;
        for (uint8_t k = HALO_SPLIT_TRAIN; k <= HALO_SPLIT_TEST; k++) {
            s = strcmp(f, halo_import_split_names[k]) == 0 ? k : s;
        }
        if (s == HALO_SPLIT_NONE) {
            rc = halo_import_fail(r, "split '%.40s' is not train, valid or test", f);
            goto fail;
        }
        if (split[v] != HALO_SPLIT_NONE) {
            rc = halo_import_fail(r, "node id %lld is already in %s (a node belongs to one split)",
                                  (long long)ids->orig[v], halo_import_split_names[split[v]]);
            goto fail;
        }
        split[v] = s;
        count[s]++;
    }
    rc = got;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* A path for meta.json: absolute when it resolves, else as given; NULL stays null. */
static void json_path(halo_jw *w, const char *key, const char *path)
{
    char real[PATH_MAX];
    halo_jw_key(w, key);
    if (path == NULL) {
        halo_jw_null(w);
    } else {
        halo_jw_str(w, realpath(path, real) != NULL ? real : path);
    }
}

/* meta.json "source" of an edge-list import. */
static char *el_source_json(const char *file, const halo_import_opts *o,
                            const halo_import_csr_stats *st, const int64_t *split_count,
                            int64_t nodes, uint32_t orig_crc)
{
    halo_jw w;
    char hex[16];
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "importer");
    halo_jw_str(&w, "edgelist");
    json_path(&w, "file", file);
    json_path(&w, "labels", o->labels);
    json_path(&w, "feat", o->feat);
    json_path(&w, "split", o->split_file);
    halo_import_json_edges(&w, o->directed, st, split_count);
    halo_jw_key(&w, "orig_id");
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "file");
    halo_jw_str(&w, HALO_IMPORT_ORIG_ID);
    halo_jw_key(&w, "what");
    halo_jw_str(&w, "int64[nodes]: new id -> id in the input; new ids in order of first "
                    "appearance in the edge list");
    halo_jw_key(&w, "bytes");
    halo_jw_i64(&w, nodes * 8);
    snprintf(hex, sizeof hex, "%08x", orig_crc);
    halo_jw_key(&w, "crc32");
    halo_jw_str(&w, hex);
    halo_jw_obj_end(&w);
    halo_jw_obj_end(&w);
    return w.sb.buf;
}

/* Edges first (they define the nodes and their new ids), then the optional node files, which
 * may only name ids seen in the edge list. The graph is written only when everything parsed. */
int halo_import_edgelist(const char *file, const char *dir, const halo_import_opts *opts)
{
    id_map ids = {0};
    halo_import_edges edges = {0};
    halo_import_csr_stats st;
    halo_graph *g = NULL;
    char *source = NULL;
    int64_t split_count[4] = {0};
    int rc = 0;
    HALO_CHECK(halo_import_check_outdir(dir));
    const char *inputs[3] = {opts->labels, opts->feat, opts->split_file};
    for (int i = 0; i < 3; i++) {
        halo_import_reader *r;
        if (inputs[i] != NULL) {
            HALO_CHECK(halo_import_reader_open(inputs[i], &r));
            halo_import_reader_close(r);
        }
    }
    HALO_TRY(el_read_edges(file, &ids, &edges));
    /* Arrays left empty by halo_graph_alloc (indices, feat) are filled in below with buffers
     * from halo_malloc, which halo_graph_free releases like its own. */
    g = halo_graph_alloc(ids.n, 0, 0, 0, 1);
    halo_import_default_name(file, true, g->name, sizeof g->name);
    if (opts->name != NULL) {
        snprintf(g->name, sizeof g->name, "%s", opts->name);
    }
    g->directed = opts->directed;
    idmap_drop_table(&ids);
    halo_import_build_csr(&edges, ids.n, opts->directed, g->indptr, &g->indices, &g->edges, &st);
    if (g->edges == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: every edge is a self-loop (%lld dropped): no edges left",
                         file, (long long)st.self_loops);
        goto fail;
    }
    if (opts->labels != NULL || opts->feat != NULL || opts->split_file != NULL) {
        idmap_rebuild(&ids);
    }
    if (opts->labels != NULL) {
        HALO_TRY(el_read_labels(opts->labels, &ids, g->label, &g->classes));
    } else {
        for (int64_t v = 0; v < ids.n; v++) {
            g->label[v] = -1;
        }
    }
    if (opts->split_file != NULL) {
        HALO_TRY(el_read_split(opts->split_file, &ids, g->split, split_count));
    }
    if (opts->feat != NULL) {
        HALO_TRY(el_read_feat(opts->feat, &ids, &g->feat, &g->feat_dim));
    }
    uint32_t crc = halo_crc32(0, ids.orig, (size_t)ids.n * sizeof *ids.orig);
    source = el_source_json(file, opts, &st, split_count, ids.n, crc);
    HALO_TRY(halo_graph_write_with(g, dir, source, HALO_IMPORT_ORIG_ID, ids.orig,
                                   (size_t)ids.n * sizeof *ids.orig));
    halo_info("imported %s: %lld nodes, %lld edges (%s), feat_dim %d, classes %d, "
              "train/valid/test %lld/%lld/%lld -> %s",
              file, (long long)g->nodes, (long long)g->edges,
              opts->directed ? "directed" : "symmetrised", g->feat_dim, g->classes,
              (long long)split_count[1], (long long)split_count[2], (long long)split_count[3], dir);
fail:
    idmap_free(&ids);
    halo_import_edges_free(&edges);
    halo_graph_free(g);
    halo_free(source);
    return rc;
}
