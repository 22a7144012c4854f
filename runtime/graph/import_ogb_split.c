/* The pieces of an OGB dataset that both of its layouts (csv.gz: import_ogb.c; npz:
 * import_npz.c) read the same way: file paths, the split directory and its node-id files. */
#include "graph/import.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "graph/textio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 64

/* Path of SRC/REL.csv.gz, or of SRC/REL.csv when only the uncompressed file exists; a missing
 * file is reported by the reader with the .gz name. */
int halo_import_ogb_path(const char *src, const char *rel, char *out, size_t size)
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
int halo_import_ogb_require(const char *path)
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
int halo_import_ogb_pick_split(const char *src, const char *want, char *name, size_t size)
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

/* Reads a node id field and checks it against the node count. */
int halo_import_ogb_node_id(const halo_import_reader *r, const char *field, const char *what,
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

/* Reads one split file (node ids, one per line; blank lines skipped) and marks them `value`; a
 * node listed twice, in this or another split, is an error. Counts the nodes in *count. */
int halo_import_ogb_read_split(const char *path, int64_t nodes, uint8_t value, uint8_t *split,
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
        HALO_TRY(halo_import_ogb_node_id(r, f, "node id", nodes, &v));
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

int halo_import_ogb_split_paths(const char *src, const char *want, char *name, size_t size,
                                char (*paths)[4096])
{
    char rel[512];
    HALO_CHECK(halo_import_ogb_pick_split(src, want, name, size));
    for (int s = 0; s < 3; s++) {
        snprintf(rel, sizeof rel, "split/%s/%s", name, halo_import_split_names[s + 1]);
        HALO_CHECK(halo_import_ogb_path(src, rel, paths[s], 4096));
        HALO_CHECK(halo_import_ogb_require(paths[s]));
    }
    return 0;
}
