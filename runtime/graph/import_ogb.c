/* halo import ogb: OGB's raw node-property-prediction layout (csv.gz files) to a graph dir. */
#include "graph/import.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "graph/textio.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads num-node-list: exactly one line holding the node count, 1 .. 2^31-1. */
static int ogb_read_nodes(const char *path, int64_t *nodes)
{
    halo_import_reader *r;
    char *line, *cur, *f;
    uint64_t v = 0;
    int rc = 0, got;
    HALO_CHECK(halo_import_reader_open(path, &r));
    HALO_TRY(got = halo_import_reader_next(r, &line));
    cur = line;
    if (got == 0 || !halo_import_next_field(&cur, ',', &f)) {
        rc = halo_import_fail(r, "no node count (the file is empty)");
        goto fail;
    }
    if (cur != NULL) {
        rc = halo_import_fail(r, "several numbers on one line; expected one node count");
        goto fail;
    }
    HALO_TRY(halo_import_parse_u64(r, f, "node count", &v));
    if (v == 0) {
        rc = halo_import_fail(r, "0 nodes: the graph is empty");
        goto fail;
    }
    if (v > INT32_MAX) {
        rc = halo_import_fail(r, "%llu nodes: more than 2^31-1", (unsigned long long)v);
        goto fail;
    }
    HALO_TRY(got = halo_import_reader_next(r, &line));
    if (got == 1) {
        rc = halo_import_fail(r, "more than one graph; a node-property dataset has one line");
        goto fail;
    }
    *nodes = (int64_t)v;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Reads edge.csv: "src,dst" lines (blank lines skipped), each id below nodes. */
static int ogb_read_edges(const char *path, int64_t nodes, halo_import_edges *edges)
{
    halo_import_reader *r;
    char *line, *cur, *f;
    int rc = 0, got;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = halo_import_reader_next(r, &line)) == 1) {
        int32_t u = 0, v = 0;
        int nf = halo_import_count_fields(line, ',');
        if (nf != 2) {
            if (halo_import_count_fields(line, 0) == 0) {
                continue;
            }
            rc = halo_import_fail(r, "%d fields, expected 'src,dst'", nf);
            goto fail;
        }
        cur = line;
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_ogb_node_id(r, f, "source id", nodes, &u));
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_ogb_node_id(r, f, "destination id", nodes, &v));
        halo_import_edges_add(edges, u, v);
    }
    rc = got;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Reads node-label.csv: one row per node ("nan" or empty: unlabelled); sets *classes to the
 * largest label + 1. */
static int ogb_read_labels(const char *path, int64_t nodes, int32_t *label, int *classes)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    int64_t rows = 0;
    int32_t max = -1;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = halo_import_reader_next(r, &line)) == 1) {
        char *cur = line, *f;
        if (rows == nodes) {
            rc = halo_import_fail(r, "more rows than the %lld nodes", (long long)nodes);
            goto fail;
        }
        int nf = halo_import_count_fields(line, ',');
        if (nf != 1) {
            rc = halo_import_fail(r, "%d label columns; one label per node is supported", nf);
            goto fail;
        }
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_parse_label(r, f, &label[rows]));
        max = label[rows] > max ? label[rows] : max;
        rows++;
    }
    HALO_TRY(got);
    if (rows != nodes) {
        rc = halo_import_fail(r, "%lld rows, expected one per node (%lld)", (long long)rows,
                              (long long)nodes);
        goto fail;
    }
    *classes = max + 1;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Reads node-feat.csv: one row of comma-separated floats per node, all as wide as the first.
 * Allocates *feat (nodes x width). */
static int ogb_read_feat(const char *path, int64_t nodes, float **feat, int *width)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    int64_t rows = 0;
    int w = 0;
    float *x = NULL;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = halo_import_reader_next(r, &line)) == 1) {
        if (rows == nodes) {
            rc = halo_import_fail(r, "more rows than the %lld nodes", (long long)nodes);
            goto fail;
        }
        if (x == NULL) {
            int nf = halo_import_count_fields(line, ',');
            if (line[0] == '\0' || nf > 1000000) {
                rc = halo_import_fail(r, "%d values: a feature row needs 1 to 10^6",
                                      line[0] == '\0' ? 0 : nf);
                goto fail;
            }
            w = nf;
            size_t cells = (size_t)nodes * (size_t)w;
            x = HALO_ALLOC(float, cells);
        }
        HALO_TRY(halo_import_parse_row(r, line, ',', w, x + (size_t)rows * (size_t)w));
        rows++;
    }
    HALO_TRY(got);
    if (rows != nodes) {
        rc = halo_import_fail(r, "%lld rows, expected one per node (%lld)", (long long)rows,
                              (long long)nodes);
        goto fail;
    }
    *feat = x;
    *width = w;
    x = NULL;
fail:
    halo_free(x);
    halo_import_reader_close(r);
    return rc;
}

/* meta.json "source" of an OGB import. */
static char *ogb_source_json(const char *src, const char *split, bool directed,
                             const halo_import_csr_stats *st, const int64_t *split_count)
{
    halo_jw w;
    char real[PATH_MAX];
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "importer");
    halo_jw_str(&w, "ogb");
    halo_jw_key(&w, "src");
    halo_jw_str(&w, realpath(src, real) != NULL ? real : src);
    halo_jw_key(&w, "split");
    halo_jw_str(&w, split);
    halo_import_json_edges(&w, directed, st, split_count);
    halo_jw_obj_end(&w);
    return w.sb.buf;
}

static int import_ogb_hetero(const char *src, const char *dir, const halo_import_opts *opts,
                             const char *p_dict);

/* Order: cheap checks first (every file is there, the split is unambiguous, the node count),
 * then edges -> CSR (the edge list is freed before the features are read), labels, split and
 * features. The graph is written only when everything parsed. */
int halo_import_ogb(const char *src, const char *dir, const halo_import_opts *opts)
{
    char p_nodes[4096], p_edge[4096], p_label[4096], p_feat[4096], p_split[3][4096];
    char split[256], rel[512];
    halo_import_edges edges = {0};
    halo_import_csr_stats st;
    halo_graph *g = NULL;
    char *source = NULL;
    int64_t nodes = 0, split_count[4] = {0};
    int rc = 0;
    if (!halo_is_dir(src)) {
        return halo_errorf(HALO_EINPUT, "%s: %s", src,
                           halo_path_exists(src) ? "not a directory (expected OGB's layout: "
                                                   "raw/ and split/)"
                                                 : "no such directory");
    }
    HALO_CHECK(halo_import_check_outdir(dir));
    HALO_CHECK(halo_import_ogb_path(src, "raw/num-node-dict", p_nodes, sizeof p_nodes));
    if (halo_path_exists(p_nodes)) {
        return import_ogb_hetero(src, dir, opts, p_nodes);
    }
    if (halo_import_npz_layout(src)) {
        return halo_import_ogb_npz(src, dir, opts);
    }
    HALO_CHECK(halo_import_ogb_path(src, "raw/num-node-list", p_nodes, sizeof p_nodes));
    HALO_CHECK(halo_import_ogb_path(src, "raw/edge", p_edge, sizeof p_edge));
    HALO_CHECK(halo_import_ogb_path(src, "raw/node-label", p_label, sizeof p_label));
    HALO_CHECK(halo_import_ogb_path(src, "raw/node-feat", p_feat, sizeof p_feat));
    HALO_CHECK(halo_import_ogb_pick_split(src, opts->split, split, sizeof split));
    for (int s = 0; s < 3; s++) {
        snprintf(rel, sizeof rel, "split/%s/%s", split, halo_import_split_names[s + 1]);
        HALO_CHECK(halo_import_ogb_path(src, rel, p_split[s], sizeof p_split[s]));
    }
    HALO_CHECK(halo_import_ogb_require(p_nodes));
    HALO_CHECK(halo_import_ogb_require(p_edge));
    HALO_CHECK(halo_import_ogb_require(p_label));
    for (int s = 0; s < 3; s++) {
        HALO_CHECK(halo_import_ogb_require(p_split[s]));
    }
    bool have_feat = halo_path_exists(p_feat);
    HALO_CHECK(ogb_read_nodes(p_nodes, &nodes));

    /* Arrays left empty by halo_graph_alloc (indices, feat) are filled in below with buffers
     * from halo_malloc, which halo_graph_free releases like its own. */
    g = halo_graph_alloc(nodes, 0, 0, 0, 1);
    halo_import_default_name(src, false, g->name, sizeof g->name);
    if (opts->name != NULL) {
        snprintf(g->name, sizeof g->name, "%s", opts->name);
    }
    g->directed = opts->directed;
    HALO_TRY(ogb_read_edges(p_edge, nodes, &edges));
    halo_import_build_csr(&edges, nodes, opts->directed, g->indptr, &g->indices, &g->edges, &st);
    if (g->edges == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: no edges left (%lld self-loops dropped)", p_edge,
                         (long long)st.self_loops);
        goto fail;
    }
    HALO_TRY(ogb_read_labels(p_label, nodes, g->label, &g->classes));
    for (int s = 0; s < 3; s++) {
        HALO_TRY(halo_import_ogb_read_split(p_split[s], nodes, (uint8_t)(s + 1), g->split,
                                            &split_count[s + 1]));
    }
    if (have_feat) {
        HALO_TRY(ogb_read_feat(p_feat, nodes, &g->feat, &g->feat_dim));
    } else {
        halo_notice("%s: not found; the graph has no node features", p_feat);
    }
    source = ogb_source_json(src, split, opts->directed, &st, split_count);
    HALO_TRY(halo_graph_write(g, dir, source));
    halo_info("imported %s: %lld nodes, %lld edges (%s), feat_dim %d, classes %d, "
              "train/valid/test %lld/%lld/%lld -> %s",
              src, (long long)g->nodes, (long long)g->edges,
              opts->directed ? "directed" : "symmetrised", g->feat_dim, g->classes,
              (long long)split_count[1], (long long)split_count[2], (long long)split_count[3], dir);
fail:
    halo_import_edges_free(&edges);
    halo_graph_free(g);
    halo_free(source);
    return rc;
}

/* ---- heterogeneous layout (ogbn-mag) ---------------------------------------------------- */

/* snprintf for paths and names whose parts were checked to fit (relative paths below
 * 1024 bytes, names below HALO_TYPE_NAME); a longer result is cut. */
static void het_fmt(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void het_fmt(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* A node type of a heterogeneous OGB dataset. */
typedef struct het_ntype {
    char name[HALO_TYPE_NAME]; /* as in num-node-dict */
    int64_t nodes;             /* its node count */
    int64_t start;             /* first global id (types contiguous in num-node-dict order) */
} het_ntype;

/* A relation directory raw/relations/SRC___REL___DST. */
typedef struct het_rel {
    char dir[256];             /* the directory name */
    char name[HALO_TYPE_NAME]; /* REL */
    int src, dst;              /* endpoint types */
} het_rel;

/* Reads num-node-dict: a line of type names and a line of node counts, as many of each. */
static int het_read_node_dict(const char *path, het_ntype *t, int *ntypes)
{
    halo_import_reader *r;
    char *line, *cur, *f;
    int rc = 0, got, n = 0;
    HALO_CHECK(halo_import_reader_open(path, &r));
    HALO_TRY(got = halo_import_reader_next(r, &line));
    if (got == 0 || line[0] == '\0') {
        rc = halo_import_fail(r, "no node type names (the file is empty)");
        goto fail;
    }
    cur = line;
    while (halo_import_next_field(&cur, ',', &f)) {
        if (n == HALO_MAX_NTYPES) {
            rc = halo_import_fail(r, "more than %d node types", HALO_MAX_NTYPES);
            goto fail;
        }
        if (f[0] == '\0' || strlen(f) >= HALO_TYPE_NAME || strpbrk(f, ";=: ") != NULL) {
            rc = halo_import_fail(r, "node type name '%s' is empty, longer than %d bytes or "
                                  "holds one of ';=: '", f, HALO_TYPE_NAME - 1);
            goto fail;
        }
        for (int i = 0; i < n; i++) {
            if (strcmp(t[i].name, f) == 0) {
                rc = halo_import_fail(r, "node type '%s' named twice", f);
                goto fail;
            }
        }
        snprintf(t[n++].name, HALO_TYPE_NAME, "%s", f);
    }
    HALO_TRY(got = halo_import_reader_next(r, &line));
    if (got == 0) {
        rc = halo_import_fail(r, "no line of node counts after the type names");
        goto fail;
    }
    int nf = halo_import_count_fields(line, ',');
    if (nf != n) {
        rc = halo_import_fail(r, "%d node counts for %d node types", nf, n);
        goto fail;
    }
    cur = line;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        uint64_t v;
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_parse_u64(r, f, "node count", &v));
        if (v > INT32_MAX || total + (int64_t)v > INT32_MAX) {
            rc = halo_import_fail(r, "more than 2^31-1 nodes in all");
            goto fail;
        }
        t[i].start = total;
        t[i].nodes = (int64_t)v;
        total += (int64_t)v;
    }
    if (total == 0) {
        rc = halo_import_fail(r, "0 nodes: the graph is empty");
        goto fail;
    }
    HALO_TRY(got = halo_import_reader_next(r, &line));
    if (got == 1) {
        rc = halo_import_fail(r, "a third line; num-node-dict has type names and counts only");
        goto fail;
    }
    *ntypes = n;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Index of type `name` among t[n], or -1. */
static int het_type_of(const het_ntype *t, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++) {
        if (strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0) {
            return i;
        }
    }
    return -1;
}

static int cmp_rel_dir(const void *a, const void *b)
{
    return strcmp(((const het_rel *)a)->dir, ((const het_rel *)b)->dir);
}

/* Lists raw/relations/: each directory SRC___REL___DST of known types, sorted by name. */
static int het_list_relations(const char *src, const het_ntype *t, int ntypes, het_rel *rels,
                              int max, int *nrels)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/raw/relations", src);
    DIR *d = opendir(dir);
    if (d == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: cannot open: %s", dir, strerror(errno));
    }
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && rc == 0) {
        char path[4400];
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!halo_is_dir(path)) {
            continue;
        }
        const char *a = strstr(e->d_name, "___");
        const char *b = a != NULL ? strstr(a + 3, "___") : NULL;
        if (a == NULL || b == NULL || strstr(b + 3, "___") != NULL || b == a + 3 ||
            (size_t)(b - a - 3) >= HALO_TYPE_NAME || strlen(e->d_name) >= sizeof rels[0].dir) {
            rc = halo_errorf(HALO_EINPUT, "%s: not a relation directory SRC___REL___DST", path);
            break;
        }
        int st = het_type_of(t, ntypes, e->d_name, (size_t)(a - e->d_name));
        int dt = het_type_of(t, ntypes, b + 3, strlen(b + 3));
        if (st < 0 || dt < 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: %s type '%.*s' is not in num-node-dict", path,
                             st < 0 ? "source" : "destination",
                             st < 0 ? (int)(a - e->d_name) : (int)strlen(b + 3),
                             st < 0 ? e->d_name : b + 3);
            break;
        }
        if (n == max) {
            rc = halo_errorf(HALO_EINPUT, "%s: more than %d relations", dir, max);
            break;
        }
        snprintf(rels[n].dir, sizeof rels[n].dir, "%s", e->d_name);
        snprintf(rels[n].name, sizeof rels[n].name, "%.*s", (int)(b - a - 3), a + 3);
        rels[n].src = st;
        rels[n].dst = dt;
        n++;
    }
    closedir(d);
    if (rc == 0 && n == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: no relation directory in it", dir);
    }
    qsort(rels, (size_t)n, sizeof *rels, cmp_rel_dir);
    for (int i = 0; i < n && rc == 0; i++) {
        for (int j = 0; j < i; j++) {
            if (strcmp(rels[i].name, rels[j].name) == 0) {
                rc = halo_errorf(HALO_EINPUT, "%s: relation name '%s' also in %s/%s (names must "
                                 "be unique)", dir, rels[i].name, dir, rels[j].dir);
            }
        }
    }
    *nrels = n;
    return rc;
}

/* Reads one relation's edge.csv ("src,dst" local ids of its endpoint types) into dst/key as
 * global ids with relation id `fwd` (and `rev` for the reverse when rev >= 0). */
static int het_read_edges(const char *path, const het_ntype *ts, const het_ntype *td, int fwd,
                          int rev, int32_t **dst, uint64_t **key, int64_t *ne, int64_t *cap,
                          int64_t *read)
{
    halo_import_reader *r;
    char *line, *cur, *f;
    int rc = 0, got;
    *read = 0;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = halo_import_reader_next(r, &line)) == 1) {
        uint64_t u, v;
        int nf = halo_import_count_fields(line, ',');
        if (nf != 2) {
            if (halo_import_count_fields(line, 0) == 0) {
                continue;
            }
            rc = halo_import_fail(r, "%d fields, expected 'src,dst'", nf);
            goto fail;
        }
        cur = line;
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_parse_u64(r, f, "source id", &u));
        if (u >= (uint64_t)ts->nodes) {
            rc = halo_import_fail(r, "source id %llu is out of range (%s has %lld nodes)",
                                  (unsigned long long)u, ts->name, (long long)ts->nodes);
            goto fail;
        }
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(halo_import_parse_u64(r, f, "destination id", &v));
        if (v >= (uint64_t)td->nodes) {
            rc = halo_import_fail(r, "destination id %llu is out of range (%s has %lld nodes)",
                                  (unsigned long long)v, td->name, (long long)td->nodes);
            goto fail;
        }
        if (*ne + 2 > *cap) {
            *cap = *cap * 2 + 1024;
            *dst = halo_realloc(*dst, (size_t)*cap * sizeof **dst);
            *key = halo_realloc(*key, (size_t)*cap * sizeof **key);
        }
        int64_t gu = ts->start + (int64_t)u, gv = td->start + (int64_t)v;
        (*dst)[*ne] = (int32_t)gv;
        (*key)[(*ne)++] = ((uint64_t)fwd << 32) | (uint64_t)gu;
        if (rev >= 0) {
            (*dst)[*ne] = (int32_t)gu;
            (*key)[(*ne)++] = ((uint64_t)rev << 32) | (uint64_t)gv;
        }
        (*read)++;
    }
    rc = got;
fail:
    halo_import_reader_close(r);
    return rc;
}

/* Reads a relation's num-edge-list (one count) when present and checks it against the edges
 * read from its edge.csv. */
static int het_check_edge_count(const char *path, const char *edge_path, int64_t read)
{
    if (!halo_path_exists(path)) {
        return 0;
    }
    halo_import_reader *r;
    char *line, *cur, *f;
    int rc = 0, got;
    uint64_t v = 0;
    HALO_CHECK(halo_import_reader_open(path, &r));
    HALO_TRY(got = halo_import_reader_next(r, &line));
    cur = line;
    if (got == 0 || !halo_import_next_field(&cur, ',', &f)) {
        rc = halo_import_fail(r, "no edge count (the file is empty)");
        goto fail;
    }
    HALO_TRY(halo_import_parse_u64(r, f, "edge count", &v));
    if (v != (uint64_t)read) {
        rc = halo_import_fail(r, "says %llu edges, %s has %lld", (unsigned long long)v,
                              edge_path, (long long)read);
    }
fail:
    halo_import_reader_close(r);
    return rc;
}

/* The one node type with labels (raw/node-label/TYPE/node-label) into *target; a second one, or
 * none, is an error. */
static int het_find_target(const char *src, const het_ntype *t, int ntypes, int *target)
{
    char rel[1024], path[4096];
    *target = -1;
    for (int i = 0; i < ntypes; i++) {
        het_fmt(rel, sizeof rel, "raw/node-label/%s/node-label", t[i].name);
        HALO_CHECK(halo_import_ogb_path(src, rel, path, sizeof path));
        if (halo_path_exists(path)) {
            if (*target >= 0) {
                return halo_errorf(HALO_EINPUT, "%s: labels for a second node type (%s has "
                                   "them too); one labelled type is supported", path,
                                   t[*target].name);
            }
            *target = i;
        }
    }
    if (*target < 0) {
        return halo_errorf(HALO_EINPUT, "%s/raw/node-label: no TYPE/node-label.csv.gz for any "
                           "node type", src);
    }
    return 0;
}

/* g's relations: each of rels, followed by its reverse "rev_NAME" when per is 2; a reverse whose
 * name clashes with another relation is an error. */
static int het_set_relations(halo_graph *g, const het_rel *rels, int nrels, int per,
                             const char *src)
{
    for (int k = 0; k < nrels; k++) {
        halo_relation *f = &g->rel[per * k];
        het_fmt(f->name, HALO_TYPE_NAME, "%s", rels[k].name);
        f->src = rels[k].src;
        f->dst = rels[k].dst;
        if (per == 2) {
            halo_relation *b = &g->rel[2 * k + 1];
            snprintf(b->name, HALO_TYPE_NAME, "rev_%.*s", HALO_TYPE_NAME - 5, rels[k].name);
            b->src = rels[k].dst;
            b->dst = rels[k].src;
        }
    }
    g->nrels = per * nrels;
    for (int q = 0; q < g->nrels; q++) {
        for (int p = 0; p < q; p++) {
            if (strcmp(g->rel[p].name, g->rel[q].name) == 0) {
                return halo_errorf(HALO_EINPUT, "%s/raw/relations: relation '%s' clashes with the "
                                   "reverse of another (use --directed)", src, g->rel[q].name);
            }
        }
    }
    return 0;
}

/* Features: each type's own width, in its own file (none for a type without them); g's
 * feat_dim is the widest. */
static int het_read_feats(const char *src, const het_ntype *t, int ntypes, halo_graph *g)
{
    char rel[1024], path[4096];
    int rc = 0;
    int width[HALO_MAX_NTYPES] = {0};
    float *feats[HALO_MAX_NTYPES] = {NULL};
    int fmax = 0;
    for (int i = 0; i < ntypes; i++) {
        het_fmt(rel, sizeof rel, "raw/node-feat/%s/node-feat", t[i].name);
        rc = halo_import_ogb_path(src, rel, path, sizeof path);
        if (rc < 0) {
            for (int j = 0; j < i; j++) {
                halo_free(feats[j]);
            }
            return rc;
        }
        if (halo_path_exists(path) && t[i].nodes > 0) {
            rc = ogb_read_feat(path, t[i].nodes, &feats[i], &width[i]);
            if (rc < 0) {
                for (int j = 0; j < i; j++) {
                    halo_free(feats[j]);
                }
                return rc;
            }
            fmax = width[i] > fmax ? width[i] : fmax;
        }
    }
    g->feat_dim = fmax;
    halo_graph_set_type_starts(g);
    for (int i = 0; i < ntypes; i++) {
        g->ntype_feat_dim[i] = width[i];
        g->tfeat[i] = feats[i]; /* nodes_i x width_i, the graph's now */
    }
    return 0;
}

/* The heterogeneous import: num-node-dict, relations (with reverses unless directed), the one
 * labelled type's labels and split, features of every type that has them (rows of narrower or
 * featureless types zero-padded to the widest). Written only when everything parsed. */
static int import_ogb_hetero(const char *src, const char *dir, const halo_import_opts *opts,
                             const char *p_dict)
{
    het_ntype t[HALO_MAX_NTYPES];
    het_rel rels[HALO_MAX_RELS];
    int ntypes = 0, nrels = 0, target = -1, rc = 0;
    int32_t *dst = NULL;
    uint64_t *key = NULL;
    int64_t ne = 0, cap = 0, read_total = 0;
    halo_graph *g = NULL;
    char path[4096], path2[4096], rel[1024], split[256];
    float *tf = NULL;
    memset(t, 0, sizeof t);
    HALO_CHECK(het_read_node_dict(p_dict, t, &ntypes));
    HALO_CHECK(het_list_relations(src, t, ntypes, rels, opts->directed ? HALO_MAX_RELS
                                                                       : HALO_MAX_RELS / 2,
                                  &nrels));
    HALO_CHECK(het_find_target(src, t, ntypes, &target));
    HALO_CHECK(halo_import_ogb_pick_split(src, opts->split, split, sizeof split));
    for (int s = 0; s < 3; s++) {
        het_fmt(rel, sizeof rel, "split/%s/%s/%s", split, t[target].name,
                 halo_import_split_names[s + 1]);
        HALO_CHECK(halo_import_ogb_path(src, rel, path, sizeof path));
        HALO_CHECK(halo_import_ogb_require(path));
    }
    int64_t nodes = t[ntypes - 1].start + t[ntypes - 1].nodes;
    g = halo_graph_alloc(nodes, 0, 0, 0, ntypes);
    halo_import_default_name(src, false, g->name, sizeof g->name);
    if (opts->name != NULL) {
        snprintf(g->name, sizeof g->name, "%s", opts->name);
    }
    g->directed = opts->directed;
    g->target_type = target;
    for (int i = 0; i < ntypes; i++) {
        het_fmt(g->ntype_name[i], HALO_TYPE_NAME, "%s", t[i].name);
        memset(g->ntype + t[i].start, i, (size_t)t[i].nodes);
    }
    int per = opts->directed ? 1 : 2;
    HALO_TRY(het_set_relations(g, rels, nrels, per, src));
    for (int k = 0; k < nrels; k++) {
        int64_t read;
        het_fmt(rel, sizeof rel, "raw/relations/%s/edge", rels[k].dir);
        HALO_TRY(halo_import_ogb_path(src, rel, path, sizeof path));
        HALO_TRY(het_read_edges(path, &t[rels[k].src], &t[rels[k].dst], per * k,
                                per == 2 ? 2 * k + 1 : -1, &dst, &key, &ne, &cap, &read));
        het_fmt(rel, sizeof rel, "raw/relations/%s/num-edge-list", rels[k].dir);
        HALO_TRY(halo_import_ogb_path(src, rel, path2, sizeof path2));
        HALO_TRY(het_check_edge_count(path2, path, read));
        read_total += read;
    }
    halo_graph_typed_csr(g, ne, dst, key);
    dst = NULL;
    key = NULL;
    /* labels: the target type's rows; the others stay unlabelled */
    for (int64_t v = 0; v < nodes; v++) {
        g->label[v] = -1;
    }
    het_fmt(rel, sizeof rel, "raw/node-label/%s/node-label", t[target].name);
    HALO_TRY(halo_import_ogb_path(src, rel, path, sizeof path));
    HALO_TRY(ogb_read_labels(path, t[target].nodes, g->label + t[target].start, &g->classes));
    int64_t split_count[4] = {0};
    for (int s = 0; s < 3; s++) {
        het_fmt(rel, sizeof rel, "split/%s/%s/%s", split, t[target].name,
                 halo_import_split_names[s + 1]);
        HALO_TRY(halo_import_ogb_path(src, rel, path, sizeof path));
        HALO_TRY(halo_import_ogb_read_split(path, t[target].nodes, (uint8_t)(s + 1),
                                g->split + t[target].start, &split_count[s + 1]));
    }
    HALO_TRY(het_read_feats(src, t, ntypes, g));
    halo_import_csr_stats st = {read_total, 0, 0};
    char *source = ogb_source_json(src, split, opts->directed, &st, split_count);
    rc = halo_graph_write(g, dir, source);
    halo_free(source);
    if (rc == 0) {
        halo_info("imported %s: %d node types, %d relations, %lld nodes, %lld edges, target %s "
                  "(%d classes, train/valid/test %lld/%lld/%lld) -> %s", src, ntypes, g->nrels,
                  (long long)nodes, (long long)g->edges, t[target].name, g->classes,
                  (long long)split_count[1], (long long)split_count[2],
                  (long long)split_count[3], dir);
    }
fail:
    halo_free(dst);
    halo_free(key);
    halo_free(tf);
    halo_graph_free(g);
    return rc;
}
