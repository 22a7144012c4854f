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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 64

/* Path of SRC/REL.csv.gz, or of SRC/REL.csv when only the uncompressed file exists; a missing
 * file is reported by the reader with the .gz name. */
static int ogb_path(const char *src, const char *rel, char *out, size_t size)
{
    char plain[4096];
    if (snprintf(out, size, "%s/%s.csv.gz", src, rel) >= (int)size ||
        snprintf(plain, sizeof plain, "%s/%s.csv", src, rel) >= (int)sizeof plain) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", src);
    }
    if (!halo_path_exists(out) && halo_path_exists(plain)) {
        snprintf(out, size, "%s", plain);
    }
    return 0;
}

/* Fails naming path when it cannot be read, so a missing file is found before a long parse. */
static int ogb_require(const char *path)
{
    halo_import_reader *r;
    HALO_CHECK(halo_import_reader_open(path, &r));
    halo_import_reader_close(r);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Chooses the split directory under SRC/split: `want` when given (it must exist), else the only
 * one present. Errors list the splits found. */
static int ogb_pick_split(const char *src, const char *want, char *name, size_t size)
{
    char dir[4096];
    char *found[MAX_SPLITS];
    int n = 0, rc = 0;
    if (snprintf(dir, sizeof dir, "%s/split", src) >= (int)sizeof dir) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", src);
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: cannot open: %s", dir, strerror(errno));
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_SPLITS) {
        char path[4096];
        if (e->d_name[0] == '.' ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            !halo_is_dir(path)) {
            continue;
        }
        found[n++] = halo_strdup(e->d_name);
    }
    closedir(d);
    qsort(found, (size_t)n, sizeof *found, cmp_str);
    char list[1024] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i > 0 ? ", " : "", found[i]);
    }
    if (want != NULL) {
        bool ok = false;
        for (int i = 0; i < n; i++) {
            ok = ok || strcmp(found[i], want) == 0;
        }
        if (!ok) {
            rc = halo_errorf(HALO_EINPUT, "%s/%s: no such split (present: %s)", dir, want,
                             n > 0 ? list : "none");
        } else {
            snprintf(name, size, "%s", want);
        }
    } else if (n == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: no split directory in it", dir);
    } else if (n > 1) {
        rc = halo_errorf(HALO_EINPUT, "%s: several splits (%s); choose one with --split NAME", dir,
                         list);
    } else {
        snprintf(name, size, "%s", found[0]);
    }
    for (int i = 0; i < n; i++) {
        halo_free(found[i]);
    }
    return rc;
}

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

/* Reads a node id field and checks it against the node count. */
static int ogb_node_id(const halo_import_reader *r, const char *field, const char *what,
                       int64_t nodes, int32_t *out)
{
    uint64_t v;
    HALO_CHECK(halo_import_parse_u64(r, field, what, &v));
    if (v >= (uint64_t)nodes) {
        return halo_import_fail(r, "%s %llu is out of range (num-node-list says %lld nodes)", what,
                                (unsigned long long)v, (long long)nodes);
    }
    *out = (int32_t)v;
    return 0;
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
        HALO_TRY(ogb_node_id(r, f, "source id", nodes, &u));
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(ogb_node_id(r, f, "destination id", nodes, &v));
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

/* Reads one split file (node ids, one per line; blank lines skipped) and marks them `value`; a
 * node listed twice, in this or another split, is an error. Counts the nodes in *count. */
static int ogb_read_split(const char *path, int64_t nodes, uint8_t value, uint8_t *split,
                          int64_t *count)
{
    halo_import_reader *r;
    char *line;
    int rc = 0, got;
    HALO_CHECK(halo_import_reader_open(path, &r));
    while ((got = halo_import_reader_next(r, &line)) == 1) {
        char *cur = line, *f;
        int32_t v = 0;
        int nf = halo_import_count_fields(line, ',');
        if (nf != 1) {
            if (halo_import_count_fields(line, 0) == 0) {
                continue;
            }
            rc = halo_import_fail(r, "%d fields, expected one node id", nf);
            goto fail;
        }
        halo_import_next_field(&cur, ',', &f);
        HALO_TRY(ogb_node_id(r, f, "node id", nodes, &v));
        if (split[v] != HALO_SPLIT_NONE) {
            rc = halo_import_fail(r, "node %d is already in %s (a node belongs to one split)", v,
                                  halo_import_split_names[split[v]]);
            goto fail;
        }
        split[v] = value;
        (*count)++;
    }
    rc = got;
fail:
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
    HALO_CHECK(ogb_path(src, "raw/num-node-list", p_nodes, sizeof p_nodes));
    HALO_CHECK(ogb_path(src, "raw/edge", p_edge, sizeof p_edge));
    HALO_CHECK(ogb_path(src, "raw/node-label", p_label, sizeof p_label));
    HALO_CHECK(ogb_path(src, "raw/node-feat", p_feat, sizeof p_feat));
    HALO_CHECK(ogb_pick_split(src, opts->split, split, sizeof split));
    for (int s = 0; s < 3; s++) {
        snprintf(rel, sizeof rel, "split/%s/%s", split, halo_import_split_names[s + 1]);
        HALO_CHECK(ogb_path(src, rel, p_split[s], sizeof p_split[s]));
    }
    HALO_CHECK(ogb_require(p_nodes));
    HALO_CHECK(ogb_require(p_edge));
    HALO_CHECK(ogb_require(p_label));
    for (int s = 0; s < 3; s++) {
        HALO_CHECK(ogb_require(p_split[s]));
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
    HALO_TRY(ogb_read_labels(p_label, nodes, g->label, &g->classes));
    for (int s = 0; s < 3; s++) {
        HALO_TRY(
            ogb_read_split(p_split[s], nodes, (uint8_t)(s + 1), g->split, &split_count[s + 1]));
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
