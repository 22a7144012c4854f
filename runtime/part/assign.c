/* A node -> part assignment made by another tool (e.g. DGL's or PyG's METIS call), read from a
 * raw little-endian int32 file or a NumPy .npy file of int32 or int64, and validated: one entry
 * per node, every entry a part id, no part left empty. */
#include "part/partition.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key ('descr', 'fortran_order', 'shape') in a .npy header dict, or NULL. */
static const char *npy_value(const char *h, const char *key)
{
    char q[64];
    snprintf(q, sizeof q, "'%s'", key);
    const char *p = strstr(h, q);
    if (p == NULL) {
        return NULL;
    }
    p += strlen(q);
    while (*p == ' ' || *p == ':') {
        p++;
    }
    return p;
}

/* Parses a .npy file's header (format 1.0, 2.0 or 3.0): the element width (4 or 8, signed
 * little-endian integers), the 1-D length and the offset of the data. */
static int npy_header(const char *path, const char *data, size_t len, int *width, int64_t *n,
                      size_t *data_off)
{
    if (len < 10) {
        return halo_errorf(HALO_EINPUT, "%s: truncated .npy header", path);
    }
    int major = (unsigned char)data[6];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)(unsigned char)data[8] | (size_t)(unsigned char)data[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) {
            return halo_errorf(HALO_EINPUT, "%s: truncated .npy header", path);
        }
        hlen = (size_t)(unsigned char)data[8] | (size_t)(unsigned char)data[9] << 8 |
               (size_t)(unsigned char)data[10] << 16 | (size_t)(unsigned char)data[11] << 24;
        hoff = 12;
    } else {
        return halo_errorf(HALO_EINPUT, "%s: .npy format version %d is not 1, 2 or 3", path,
                           major);
    }
    if (hlen > len - hoff || hlen > 65536) {
        return halo_errorf(HALO_EINPUT, "%s: truncated .npy header", path);
    }
    char h[65537];
    memcpy(h, data + hoff, hlen);
    h[hlen] = 0;
    const char *d = npy_value(h, "descr"), *f = npy_value(h, "fortran_order"),
               *s = npy_value(h, "shape");
    if (d == NULL || f == NULL || s == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: .npy header without descr, fortran_order or shape",
                           path);
    }
    if (strncmp(d, "'<i4'", 5) == 0) {
        *width = 4;
    } else if (strncmp(d, "'<i8'", 5) == 0) {
        *width = 8;
    } else {
        const char *e = strchr(d, ',');
        return halo_errorf(HALO_EINPUT, "%s: .npy dtype %.*s, expected int32 or int64 ('<i4', "
                           "'<i8')", path, (int)(e != NULL && e - d < 16 ? e - d : 16), d);
    }
    /* shape: "(N,)" — one dimension (a 2-D array of one column is not an assignment) */
    const char *close = strchr(s, ')');
    int slen = close != NULL && close - s < 40 ? (int)(close - s) + 1 : 20;
    char *end = NULL;
    if (*s != '(') {
        return halo_errorf(HALO_EINPUT, "%s: .npy shape is not a tuple", path);
    }
    long long v = strtoll(s + 1, &end, 10);
    while (end != NULL && *end == ' ') {
        end++;
    }
    if (end == s + 1 || end == NULL || *end != ',' || v < 0) {
        return halo_errorf(HALO_EINPUT, "%s: .npy shape %.*s is not one-dimensional (N,)",
                           path, slen, s);
    }
    end++;
    while (*end == ' ') {
        end++;
    }
    if (*end != ')') {
        return halo_errorf(HALO_EINPUT, "%s: .npy shape %.*s is not one-dimensional (N,)",
                           path, slen, s);
    }
    *n = v;
    *data_off = hoff + hlen;
    if ((len - *data_off) / (size_t)*width < (size_t)v) {
        return halo_errorf(HALO_EINPUT, "%s: .npy data truncated (%lld entries announced, room "
                           "for %lld)", path, v, (long long)((len - *data_off) / (size_t)*width));
    }
    return 0;
}

int halo_partition_load_assign(const char *path, int64_t nodes, int parts, int32_t **out,
                               int *parts_out)
{
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &data, &len));
    int rc = 0;
    int width = 4;
    int64_t n = 0;
    size_t off = 0;
    int32_t *a = NULL;
    int64_t *count = NULL;
    if (len >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) {
        HALO_TRY(npy_header(path, data, len, &width, &n, &off));
    } else if (len % 4 != 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: %zu bytes is not a whole number of int32 entries (raw "
                         "int32, or a .npy file)", path, len);
        goto fail;
    } else {
        n = (int64_t)(len / 4);
    }
    if (n != nodes) {
        rc = halo_errorf(HALO_EINPUT, "%s: %lld entries, the graph has %lld nodes", path,
                         (long long)n, (long long)nodes);
        goto fail;
    }
    /* the range: [0, parts) when the caller says parts, else [0, largest + 1) */
    int64_t lim = parts > 0 ? parts : INT32_MAX;
    a = HALO_ALLOC(int32_t, n > 0 ? n : 1);
    int64_t top = -1;
    for (int64_t v = 0; v < n; v++) {
        int64_t x;
        if (width == 4) {
            int32_t y;
            memcpy(&y, data + off + 4 * (size_t)v, 4);
            x = y;
        } else {
            memcpy(&x, data + off + 8 * (size_t)v, 8);
        }
        if (x < 0 || x >= lim) {
            rc = parts > 0 ? halo_errorf(HALO_EINPUT, "%s: node %lld is assigned to part %lld, "
                                         "not in [0, %d) (--parts)", path, (long long)v,
                                         (long long)x, parts)
                           : halo_errorf(HALO_EINPUT, "%s: node %lld is assigned to part %lld, "
                                         "not a part id", path, (long long)v, (long long)x);
            goto fail;
        }
        a[v] = (int32_t)x;
        top = x > top ? x : top;
    }
    int p = parts > 0 ? parts : (int)(top + 1);
    if (p < 1) {
        rc = halo_errorf(HALO_EINPUT, "%s: no nodes to assign", path);
        goto fail;
    }
    count = HALO_NEW(int64_t, p);
    for (int64_t v = 0; v < n; v++) {
        count[a[v]]++;
    }
    for (int k = 0; k < p; k++) {
        if (count[k] == 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: part %d of %d has no node", path, k, p);
            goto fail;
        }
    }
    *out = a;
    a = NULL;
    *parts_out = p;
fail:
    halo_free(count);
    halo_free(a);
    halo_free(data);
    return rc;
}
