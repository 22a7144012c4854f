/* halo import ogb, binary layout (ogbn-papers100M): raw/data.npz and raw/node-label.npz, read
 * array by array through npz.h's bounded buffer, plus the split files of the CSV layout. */
#include "graph/import.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "graph/npz.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPZ_BATCH 4096       /* elements converted per call to the reader */
#define NPZ_MAX_CLASSES 1000000 /* labels must lie below this, as in the CSV layout */

/* One batch buffer of both element types, so that no read allocates per call. */
typedef union npz_batch {
    int64_t i[NPZ_BATCH]; /* integer elements */
    double f[NPZ_BATCH];  /* float elements */
} npz_batch;

bool halo_import_npz_layout(const char *src)
{
    char path[4096];
    return snprintf(path, sizeof path, "%s/raw/data.npz", src) < (int)sizeof path &&
           halo_path_exists(path);
}

/* "(2, 8)" for error messages. */
static void shape_str(const halo_import_npy_info *in, char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "(");
    for (int d = 0; d < in->ndim && used < size; d++) {
        used += (size_t)snprintf(out + used, size - used, "%s%" PRId64, d > 0 ? ", " : "",
                                 in->shape[d]);
    }
    if (used < size) {
        snprintf(out + used, size - used, in->ndim == 1 ? ",)" : ")");
    }
}

/* Reads a one-element integer array (num_nodes_list, num_edges_list): exactly one graph. */
static int npz_read_count(halo_import_npz *z, const char *name, int64_t lo, int64_t hi,
                          int64_t *out)
{
    halo_import_npy *a;
    int rc = 0;
    HALO_CHECK(halo_import_npy_open(z, name, &a));
    const halo_import_npy_info *in = halo_import_npy_header(a);
    if (in->kind == 'f') {
        rc = halo_import_npy_fail(a, "dtype '%s', expected an integer type", in->descr);
    } else if (in->count != 1) {
        rc = halo_import_npy_fail(a, "%" PRId64 " entries: a node-property dataset holds one "
                                  "graph", in->count);
    }
    if (rc == 0) {
        rc = halo_import_npy_read_i64(a, out, 1);
    }
    if (rc == 0 && (*out < lo || *out > hi)) {
        rc = halo_import_npy_fail(a, "%" PRId64 " is out of range (%" PRId64 " .. %" PRId64 ")",
                                  *out, lo, hi);
    }
    int rc2 = halo_import_npy_close(a);
    return rc != 0 ? rc : rc2;
}

/* Opens `name` and checks it is 2-D with rows x cols (cols < 0: any) or, when one_col, also
 * 1-D of rows; kind 'i' demands an integer dtype, 'f' a float one, 0 any. `why` ends a shape
 * error ("" for nothing). */
static int npz_open_2d(halo_import_npz *z, const char *name, char kind, int64_t rows,
                       int64_t cols, bool one_col, const char *why, halo_import_npy **out)
{
    halo_import_npy *a;
    char s[96];
    int rc = 0;
    HALO_CHECK(halo_import_npy_open(z, name, &a));
    const halo_import_npy_info *in = halo_import_npy_header(a);
    shape_str(in, s, sizeof s);
    bool shape_ok = (in->ndim == 2 && in->shape[0] == rows && (cols < 0 || in->shape[1] == cols)) ||
                    (one_col && in->ndim == 1 && in->shape[0] == rows);
    if (kind == 'i' && in->kind == 'f') {
        rc = halo_import_npy_fail(a, "dtype '%s', expected an integer type", in->descr);
    } else if (kind == 'f' && in->kind != 'f') {
        rc = halo_import_npy_fail(a, "dtype '%s', expected float16, float32 or float64",
                                  in->descr);
    } else if (!shape_ok && cols < 0) {
        rc = halo_import_npy_fail(a, "shape %s, expected (%" PRId64 ", width)%s", s, rows, why);
    } else if (!shape_ok && one_col) {
        rc = halo_import_npy_fail(a, "shape %s, expected (%" PRId64 ",) or (%" PRId64 ", 1)%s", s,
                                  rows, rows, why);
    } else if (!shape_ok) {
        rc = halo_import_npy_fail(a, "shape %s, expected (%" PRId64 ", %" PRId64 ")%s", s, rows,
                                  cols, why);
    }
    if (rc != 0) {
        halo_import_npy_close(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* Row and column of element k (in file order) of a rows x cols array. */
static void npz_cell(const halo_import_npy_info *in, int64_t k, int64_t *row, int64_t *col)
{
    int64_t rows = in->shape[0], cols = in->ndim == 2 ? in->shape[1] : 1;
    if (in->fortran) {
        *row = k % rows;
        *col = k / rows;
    } else {
        *row = k / cols;
        *col = k % cols;
    }
}

/* Reads edge_index (int, shape (2, E)) into e: row 0 the sources, row 1 the destinations,
 * converted batch by batch to int32 after a range check. */
static int npz_read_edges(halo_import_npz *z, int64_t nodes, int64_t ne, halo_import_edges *e,
                          npz_batch *b)
{
    halo_import_npy *a;
    int rc = 0;
    char why[96];
    snprintf(why, sizeof why, " (num_edges_list says %" PRId64 " edges)", ne);
    HALO_CHECK(npz_open_2d(z, "edge_index", 'i', 2, ne, false, why, &a));
    const halo_import_npy_info *in = halo_import_npy_header(a);
    e->src = HALO_ALLOC(int32_t, ne > 0 ? ne : 1);
    e->dst = HALO_ALLOC(int32_t, ne > 0 ? ne : 1);
    e->n = e->cap = ne;
    halo_progress pr;
    halo_progress_begin(&pr, "read: edge_index", (uint64_t)in->count);
    for (int64_t k = 0; k < in->count && rc == 0; k += NPZ_BATCH) {
        int64_t n = in->count - k < NPZ_BATCH ? in->count - k : NPZ_BATCH;
        if ((k & ((1 << 22) - 1)) == 0) {
            halo_progress_update(&pr, (uint64_t)k);
        }
        rc = halo_import_npy_read_i64(a, b->i, n);
        if (rc != 0) {
            break;
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t row, col, v = b->i[j];
            npz_cell(in, k + j, &row, &col);
            if (v < 0 || v >= nodes) {
                rc = halo_import_npy_fail(a, "edge_index[%" PRId64 "][%" PRId64 "] = %" PRId64
                                          " is out of range (num_nodes_list says %" PRId64
                                          " nodes)", row, col, v, nodes);
                break;
            }
            (row == 0 ? e->src : e->dst)[col] = (int32_t)v;
        }
    }
    halo_progress_end(&pr);
    if (rc == 0) {
        return halo_import_npy_close(a);
    }
    halo_import_npy_close(a);
    return rc;
}

/* Reads node_label ((N,) or (N, 1), any number type): NaN or -1 is unlabelled (-1), any other
 * value must be an integer class in [0, 10^6). Sets *classes to the largest label + 1. */
static int npz_read_labels(halo_import_npz *z, int64_t nodes, int32_t *label, int *classes,
                           npz_batch *b)
{
    halo_import_npy *a;
    int rc = 0;
    int32_t max = -1;
    HALO_CHECK(npz_open_2d(z, "node_label", 0, nodes, 1, true, " (one label per node)", &a));
    for (int64_t k = 0; k < nodes && rc == 0; k += NPZ_BATCH) {
        int64_t n = nodes - k < NPZ_BATCH ? nodes - k : NPZ_BATCH;
        HALO_TRY(halo_import_npy_read_f64(a, b->f, n));
        for (int64_t j = 0; j < n; j++) {
            double v = b->f[j];
            if (isnan(v) || v == -1.0) {
                label[k + j] = -1;
                continue;
            }
            if (!(v >= 0 && v < NPZ_MAX_CLASSES) || v != floor(v)) {
                rc = halo_import_npy_fail(a, "node_label[%" PRId64 "] = %g is not a class "
                                          "(an integer in [0, %d), or NaN or -1 for "
                                          "unlabelled)", k + j, v, NPZ_MAX_CLASSES);
                break;
            }
            label[k + j] = (int32_t)v;
            max = label[k + j] > max ? label[k + j] : max;
        }
    }
fail:
    if (rc == 0) {
        *classes = max + 1;
        return halo_import_npy_close(a);
    }
    halo_import_npy_close(a);
    return rc;
}

/* Reads node_feat (float16/32/64, shape (N, width)) into a new float32 array *feat. */
static int npz_read_feat(halo_import_npz *z, int64_t nodes, float **feat, int *width,
                         npz_batch *b)
{
    halo_import_npy *a;
    int rc = 0;
    HALO_CHECK(npz_open_2d(z, "node_feat", 'f', nodes, -1, false, " (one row per node)", &a));
    const halo_import_npy_info *in = halo_import_npy_header(a);
    int64_t w = in->shape[1];
    float *x = NULL;
    if (w < 1 || w > 1000000) {
        rc = halo_import_npy_fail(a, "%" PRId64 " features per node: 1 to 10^6 are supported",
                                  w);
        goto fail;
    }
    x = HALO_ALLOC(float, (size_t)(nodes * w));
    halo_progress pr;
    halo_progress_begin(&pr, "read: node_feat", (uint64_t)in->count);
    for (int64_t k = 0; k < in->count && rc == 0; k += NPZ_BATCH) {
        int64_t n = in->count - k < NPZ_BATCH ? in->count - k : NPZ_BATCH;
        if ((k & ((1 << 22) - 1)) == 0) {
            halo_progress_update(&pr, (uint64_t)k);
        }
        rc = halo_import_npy_read_f64(a, b->f, n);
        for (int64_t j = 0; j < n && rc == 0; j++) {
            int64_t row, col;
            npz_cell(in, k + j, &row, &col);
            if (!isfinite(b->f[j]) || fabs(b->f[j]) > FLT_MAX) {
                rc = halo_import_npy_fail(a, "node_feat[%" PRId64 "][%" PRId64 "] = %g is not "
                                          "a finite float32", row, col, b->f[j]);
                break;
            }
            x[row * w + col] = (float)b->f[j];
        }
    }
    halo_progress_end(&pr);
    HALO_TRY(rc);
    HALO_TRY(halo_import_npy_close(a));
    a = NULL;
    *feat = x;
    *width = (int)w;
    return 0;
fail:
    halo_free(x);
    halo_import_npy_close(a);
    return rc;
}

/* meta.json "source" of an .npz import: as the CSV layout's, with format "npz" and the arrays
 * that were not imported (node_year, edge features ...). */
static char *npz_source_json(const char *src, const char *split, bool directed,
                             const halo_import_csr_stats *st, const int64_t *split_count,
                             const halo_import_npz *data)
{
    static const char *const used[] = {"edge_index", "num_nodes_list", "num_edges_list",
                                       "node_feat"};
    halo_jw w;
    char real[PATH_MAX];
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "importer");
    halo_jw_str(&w, "ogb");
    halo_jw_key(&w, "format");
    halo_jw_str(&w, "npz");
    halo_jw_key(&w, "src");
    halo_jw_str(&w, realpath(src, real) != NULL ? real : src);
    halo_jw_key(&w, "split");
    halo_jw_str(&w, split);
    halo_import_json_edges(&w, directed, st, split_count);
    halo_jw_key(&w, "ignored_arrays");
    halo_jw_arr_begin(&w);
    for (int i = 0; i < halo_import_npz_count(data); i++) {
        const char *name = halo_import_npz_name(data, i);
        bool is_used = false;
        for (size_t u = 0; u < sizeof used / sizeof used[0]; u++) {
            is_used = is_used || strcmp(name, used[u]) == 0;
        }
        if (!is_used) {
            halo_jw_str(&w, name);
        }
    }
    halo_jw_arr_end(&w);
    halo_jw_obj_end(&w);
    return w.sb.buf;
}

/* Order as in the CSV layout: both archives' directories and the split files first (cheap),
 * then the counts, edges -> CSR (edge list freed before the features), labels, split and
 * features; the graph is written only when everything parsed. */
int halo_import_ogb_npz(const char *src, const char *dir, const halo_import_opts *opts)
{
    char p_data[4096], p_label[4096], split[256], p_split[3][4096];
    halo_import_npz *data = NULL, *lab = NULL;
    halo_import_edges edges = {0};
    halo_import_csr_stats st;
    halo_graph *g = NULL;
    char *source = NULL;
    int64_t nodes = 0, ne = 0, split_count[4] = {0};
    npz_batch *b = HALO_ALLOC(npz_batch, 1);
    int rc = 0;
    snprintf(p_data, sizeof p_data, "%s/raw/data.npz", src);
    if (snprintf(p_label, sizeof p_label, "%s/raw/node-label.npz", src) >= (int)sizeof p_label) {
        rc = halo_errorf(HALO_EUSAGE, "%s: path too long", src);
        goto fail;
    }
    HALO_TRY(halo_import_npz_open(p_data, &data));
    HALO_TRY(halo_import_npz_open(p_label, &lab));
    HALO_TRY(halo_import_ogb_split_paths(src, opts->split, split, sizeof split, p_split));
    HALO_TRY(npz_read_count(data, "num_nodes_list", 1, INT32_MAX, &nodes));
    HALO_TRY(npz_read_count(data, "num_edges_list", 0, INT64_MAX / 16, &ne));
    g = halo_graph_alloc(nodes, 0, 0, 0, 1);
    halo_import_default_name(src, false, g->name, sizeof g->name);
    if (opts->name != NULL) {
        snprintf(g->name, sizeof g->name, "%s", opts->name);
    }
    g->directed = opts->directed;
    HALO_TRY(npz_read_edges(data, nodes, ne, &edges, b));
    halo_import_build_csr(&edges, nodes, opts->directed, g->indptr, &g->indices, &g->edges, &st);
    if (g->edges == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s:edge_index.npy: no edges left (%lld self-loops "
                         "dropped)", p_data, (long long)st.self_loops);
        goto fail;
    }
    HALO_TRY(npz_read_labels(lab, nodes, g->label, &g->classes, b));
    for (int s = 0; s < 3; s++) {
        HALO_TRY(halo_import_ogb_read_split(p_split[s], nodes, (uint8_t)(s + 1), g->split,
                                            &split_count[s + 1]));
    }
    if (halo_import_npz_has(data, "node_feat")) {
        HALO_TRY(npz_read_feat(data, nodes, &g->feat, &g->feat_dim, b));
    } else {
        halo_notice("%s: no array node_feat; the graph has no node features", p_data);
    }
    source = npz_source_json(src, split, opts->directed, &st, split_count, data);
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
    halo_import_npz_close(data);
    halo_import_npz_close(lab);
    halo_free(b);
    return rc;
}
