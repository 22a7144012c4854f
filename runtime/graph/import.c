/* Pieces shared by the importers: the edge list, the in-edge CSR builder, the members of
 * meta.json's "source" both write, the output check. */
#include "graph/import.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/sort.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void halo_import_edges_add(halo_import_edges *e, int32_t u, int32_t v)
{
    if (e->n == e->cap) {
        e->cap = e->cap < 1024 ? 1024 : e->cap * 2;
        e->src = halo_realloc(e->src, (size_t)e->cap * sizeof *e->src);
        e->dst = halo_realloc(e->dst, (size_t)e->cap * sizeof *e->dst);
    }
    e->src[e->n] = u;
    e->dst[e->n] = v;
    e->n++;
}

void halo_import_edges_free(halo_import_edges *e)
{
    halo_free(e->src);
    halo_free(e->dst);
    memset(e, 0, sizeof *e);
}

/* Counting pass (in-degrees, plus out-degrees when symmetrising) and a fill pass over the edge
 * array, then each row is sorted and, when symmetrising, deduplicated and compacted in place. */
void halo_import_build_csr(halo_import_edges *e, int64_t nodes, bool directed, int64_t *indptr,
                           int32_t **indices, int64_t *edges, halo_import_csr_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->input_edges = e->n;
    memset(indptr, 0, (size_t)(nodes + 1) * sizeof *indptr);
    for (int64_t i = 0; i < e->n; i++) {
        int32_t u = e->src[i], v = e->dst[i];
        if (!directed && u == v) {
            stats->self_loops++;
            continue;
        }
        indptr[v + 1]++;
        if (!directed) {
            indptr[u + 1]++;
        }
    }
    for (int64_t v = 0; v < nodes; v++) {
        indptr[v + 1] += indptr[v];
    }
    int64_t total = indptr[nodes];
    int32_t *idx = HALO_ALLOC(int32_t, total > 0 ? total : 1);
    int64_t *cursor = HALO_ALLOC(int64_t, nodes > 0 ? nodes : 1);
    memcpy(cursor, indptr, (size_t)nodes * sizeof *cursor);
    for (int64_t i = 0; i < e->n; i++) {
        int32_t u = e->src[i], v = e->dst[i];
        if (!directed && u == v) {
            continue;
        }
        idx[cursor[v]++] = u;
        if (!directed) {
            idx[cursor[u]++] = v;
        }
    }
    halo_free(cursor);
    halo_import_edges_free(e);
    int64_t w = 0, begin = 0;
    for (int64_t v = 0; v < nodes; v++) {
        int64_t end = indptr[v + 1];
        halo_sort_i32(idx + begin, end - begin);
        if (directed) {
            w = end;
        } else {
            int64_t row = w;
            for (int64_t k = begin; k < end; k++) {
                if (w > row && idx[w - 1] == idx[k]) {
                    stats->duplicates++;
                    continue;
                }
                idx[w++] = idx[k];
            }
        }
        indptr[v + 1] = w;
        begin = end;
    }
    /* Each dropped undirected duplicate was counted once per direction. */
    stats->duplicates /= directed ? 1 : 2;
    *edges = w;
    *indices = halo_realloc(idx, (size_t)(w > 0 ? w : 1) * sizeof *idx);
}

const char *const halo_import_split_names[4] = {"none", "train", "valid", "test"};

void halo_import_json_edges(halo_jw *w, bool directed, const halo_import_csr_stats *st,
                            const int64_t *split_count)
{
    halo_jw_key(w, "directed");
    halo_jw_bool(w, directed);
    halo_jw_key(w, "symmetrised");
    halo_jw_bool(w, !directed);
    halo_jw_key(w, "input_edges");
    halo_jw_i64(w, st->input_edges);
    halo_jw_key(w, "self_loops_removed");
    halo_jw_i64(w, st->self_loops);
    halo_jw_key(w, "duplicates_removed");
    halo_jw_i64(w, st->duplicates);
    for (int s = HALO_SPLIT_TRAIN; s <= HALO_SPLIT_TEST; s++) {
        halo_jw_key(w, halo_import_split_names[s]);
        halo_jw_i64(w, split_count[s]);
    }
}

int halo_import_check_outdir(const char *dir)
{
    char parent[4096];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') {
        n--;
    }
    while (n > 0 && dir[n - 1] != '/') {
        n--;
    }
    if (n == 0) {
        snprintf(parent, sizeof parent, ".");
    } else if (snprintf(parent, sizeof parent, "%.*s", (int)n, dir) >= (int)sizeof parent) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", dir);
    }
    if (!halo_is_dir(parent)) {
        return halo_errorf(HALO_EUSAGE, "-o %s: directory %s does not exist", dir, parent);
    }
    if (access(parent, W_OK) != 0) {
        return halo_errorf(HALO_EUSAGE, "-o %s: directory %s is not writable", dir, parent);
    }
    return 0;
}

void halo_import_default_name(const char *path, bool strip_ext, char *out, size_t size)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') {
        b--;
    }
    const char *base = path + b;
    size_t len = n - b;
    if (strip_ext) {
        if (len > 3 && strncmp(base + len - 3, ".gz", 3) == 0) {
            len -= 3;
        }
        for (size_t i = len; i > 1; i--) {
            if (base[i - 1] == '.') {
                len = i - 1;
                break;
            }
        }
    }
    if (len == 0 || (len == 1 && base[0] == '.')) {
        base = "graph";
        len = 5;
    }
    snprintf(out, size, "%.*s", (int)len, base);
}
