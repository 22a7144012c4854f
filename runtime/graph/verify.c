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
    return 0;
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

/* Compares the CRC-32 and size of array `which` with its entry in meta.json "files";
 * `done` counts the bytes checksummed so far, for the progress bar. */
static int verify_checksum(const halo_graph *g, int which, halo_progress *pr, uint64_t *done)
{
    char f[4200], where[4200];
    file_name(f, sizeof f, g->dir, which);
    snprintf(where, sizeof where, "%s/meta.json", g->dir);
    const halo_json *files = halo_json_get(g->meta, "files");
    const halo_json *entry = halo_json_get(files, halo_graph_files[which]);
    if (entry == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: no entry for %s in \"files\"", where,
                           halo_graph_files[which]);
    }
    int64_t bytes;
    const char *hex;
    HALO_CHECK(halo_json_get_i64(entry, "bytes", where, &bytes));
    HALO_CHECK(halo_json_get_str(entry, "crc32", where, &hex));
    if ((uint64_t)bytes != (uint64_t)g->maps[which].size) {
        return halo_errorf(HALO_EINPUT, "%s: %zu bytes, meta.json \"files\" says %" PRId64, f,
                           g->maps[which].size, bytes);
    }
    char *end;
    unsigned long want = strtoul(hex, &end, 16);
    if (*end != '\0' || end == hex) {
        return halo_errorf(HALO_EINPUT, "%s: crc32 of %s is not hexadecimal: '%s'", where,
                           halo_graph_files[which], hex);
    }
    uint32_t crc = 0;
    const unsigned char *p = g->maps[which].data;
    size_t left = g->maps[which].size;
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

int halo_graph_verify(const char *dir)
{
    halo_graph *g;
    HALO_CHECK(halo_graph_load(dir, &g));
    char f[4200];
    int rc = halo_check_features(g->feat, g->nodes, g->feat_dim, 0,
                                 file_name(f, sizeof f, g->dir, HALO_GA_FEAT));
    uint64_t total = 0, done = 0;
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        total += g->maps[a].size;
    }
    halo_progress pr;
    halo_progress_begin(&pr, "verify: checksums", total);
    for (int a = 0; a < HALO_GA_COUNT && rc == 0; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        rc = verify_checksum(g, a, &pr, &done);
    }
    halo_progress_end(&pr);
    halo_graph_free(g);
    return rc;
}
