/* Streaming .npz reader: the zip central directory (zip64 included), one member at a time through
 * a fixed buffer (raw inflate for deflated members), the .npy header and element conversion. */
#include "graph/npz.h"

#include "core/err.h"
#include "core/mem.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#define NPZ_CHUNK (256 * 1024)       /* bytes per read of compressed or stored data */
#define NPZ_MAX_MEMBERS 4096         /* members an archive may have */
#define NPZ_MAX_CDIR (16 << 20)      /* bytes of central directory read into memory */
#define NPZ_MAX_HEADER 65536         /* bytes of a .npy header */
#define NPZ_EOCD_SEARCH (65535 + 22) /* the end record lies within this many bytes of the end */

/* One member of the archive, from the central directory. */
typedef struct npz_member {
    char name[256];    /* array name (file name without ".npy") */
    uint16_t method;   /* 0 stored, 8 deflated */
    uint16_t flags;    /* general-purpose bit flags */
    uint32_t crc;      /* CRC-32 of the uncompressed data */
    uint64_t csize;    /* compressed size */
    uint64_t usize;    /* uncompressed size */
    uint64_t offset;   /* offset of the local header */
} npz_member;

struct halo_import_npz {
    char path[4096];     /* as given to open */
    FILE *f;             /* the archive */
    uint64_t size;       /* its size in bytes */
    npz_member *members; /* [count] */
    int count;           /* members */
};

struct halo_import_npy {
    halo_import_npz *z;        /* the archive */
    const npz_member *m;       /* the member */
    halo_import_npy_info info; /* its header */
    z_stream zs;               /* inflate state (deflated members) */
    bool zs_live;              /* zs initialised */
    bool zs_end;               /* inflate reached the end of the stream */
    uint64_t cleft;            /* compressed bytes not yet read from the file */
    uint64_t produced;         /* uncompressed bytes delivered so far */
    uint32_t crc;              /* CRC-32 of the delivered bytes */
    int64_t next;              /* index of the next element */
    bool parsed;               /* the header parsed: close checks the member's end and CRC */
    unsigned char *in;         /* [NPZ_CHUNK] compressed input */
    unsigned char *buf;        /* [NPZ_CHUNK] uncompressed elements */
    size_t have, pos;          /* bytes in buf and read position */
};

static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

/* Reads n bytes at offset into buf; false when the file is shorter. */
static bool read_at(FILE *f, uint64_t offset, void *buf, size_t n)
{
    return fseeko(f, (off_t)offset, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

/* Finds the end of central directory record (and its zip64 twin when a field overflows) and
 * returns where the central directory lies and how many entries it has. */
static int npz_find_cdir(halo_import_npz *z, uint64_t *cd_off, uint64_t *cd_size,
                         uint64_t *entries)
{
    size_t tail = z->size < NPZ_EOCD_SEARCH ? (size_t)z->size : NPZ_EOCD_SEARCH;
    unsigned char *t = halo_malloc(tail > 0 ? tail : 1);
    int rc = 0;
    uint64_t at = z->size - tail;
    if (tail < 22 || !read_at(z->f, at, t, tail)) {
        rc = halo_errorf(HALO_EINPUT, "%s: not a zip archive, or truncated (%" PRIu64 " bytes, "
                         "no end-of-central-directory record)", z->path, z->size);
        goto done;
    }
    size_t e = tail - 22 + 1;
    while (e-- > 0 && memcmp(t + e, "PK\5\6", 4) != 0) {
    }
    if (e == (size_t)-1) {
        rc = halo_errorf(HALO_EINPUT, "%s: not a zip archive, or truncated (no "
                         "end-of-central-directory record)", z->path);
        goto done;
    }
    *entries = le16(t + e + 10);
    *cd_size = le32(t + e + 12);
    *cd_off = le32(t + e + 16);
    uint64_t end = at + e;
    if (*entries == 0xFFFF || *cd_size == 0xFFFFFFFF || *cd_off == 0xFFFFFFFF) {
        unsigned char loc[20], rec[56];
        if (end < 20 || !read_at(z->f, end - 20, loc, 20) || memcmp(loc, "PK\6\7", 4) != 0 ||
            !read_at(z->f, le64(loc + 8), rec, 56) || memcmp(rec, "PK\6\6", 4) != 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: zip64 end record missing or corrupt", z->path);
            goto done;
        }
        end = le64(loc + 8);
        *entries = le64(rec + 32);
        *cd_size = le64(rec + 40);
        *cd_off = le64(rec + 48);
    }
    if (*cd_off > end || *cd_size > end - *cd_off) {
        rc = halo_errorf(HALO_EINPUT, "%s: central directory (%" PRIu64 " bytes at %" PRIu64
                         ") lies outside the file: truncated or corrupt", z->path, *cd_size,
                         *cd_off);
    } else if (*entries > NPZ_MAX_MEMBERS || *cd_size > NPZ_MAX_CDIR) {
        rc = halo_errorf(HALO_EINPUT, "%s: %" PRIu64 " members (%" PRIu64 " bytes of directory); "
                         "at most %d are read", z->path, *entries, *cd_size, NPZ_MAX_MEMBERS);
    }
done:
    halo_free(t);
    return rc;
}

/* Applies a zip64 extra field (id 1) to the fields of m that overflowed 32 bits. */
static int npz_zip64_extra(const halo_import_npz *z, const unsigned char *x, size_t xlen,
                           npz_member *m)
{
    size_t p = 0;
    while (p + 4 <= xlen) {
        uint16_t id = le16(x + p), len = le16(x + p + 2);
        if (p + 4 + len > xlen) {
            break;
        }
        if (id == 1) {
            const unsigned char *v = x + p + 4;
            size_t k = 0;
            uint64_t *fields[3] = {&m->usize, &m->csize, &m->offset};
            for (int i = 0; i < 3; i++) {
                if (*fields[i] == 0xFFFFFFFF) {
                    if (k + 8 > len) {
                        return halo_errorf(HALO_EINPUT, "%s:%s.npy: zip64 extra field too short",
                                           z->path, m->name);
                    }
                    *fields[i] = le64(v + k);
                    k += 8;
                }
            }
        }
        p += 4 + (size_t)len;
    }
    return 0;
}

/* Parses the central directory's entries into z->members. */
static int npz_parse_cdir(halo_import_npz *z, const unsigned char *cd, uint64_t size,
                          uint64_t entries)
{
    uint64_t p = 0;
    z->members = HALO_ALLOC(npz_member, entries > 0 ? entries : 1);
    for (uint64_t i = 0; i < entries; i++) {
        npz_member *m = &z->members[i];
        if (p + 46 > size || memcmp(cd + p, "PK\1\2", 4) != 0) {
            return halo_errorf(HALO_EINPUT, "%s: central directory entry %" PRIu64 " is corrupt",
                               z->path, i);
        }
        const unsigned char *h = cd + p;
        size_t nlen = le16(h + 28), xlen = le16(h + 30), clen = le16(h + 32);
        if (p + 46 + nlen + xlen + clen > size) {
            return halo_errorf(HALO_EINPUT, "%s: central directory entry %" PRIu64 " runs past "
                               "its end", z->path, i);
        }
        memset(m, 0, sizeof *m);
        m->flags = le16(h + 8);
        m->method = le16(h + 10);
        m->crc = le32(h + 16);
        m->csize = le32(h + 20);
        m->usize = le32(h + 24);
        m->offset = le32(h + 42);
        const char *name = (const char *)h + 46;
        if (nlen < 5 || nlen - 4 >= sizeof m->name || memcmp(name + nlen - 4, ".npy", 4) != 0) {
            return halo_errorf(HALO_EINPUT, "%s: member '%.*s' is not a .npy array", z->path,
                               (int)(nlen < 200 ? nlen : 200), name);
        }
        memcpy(m->name, name, nlen - 4);
        z->count = (int)i + 1;
        HALO_CHECK(npz_zip64_extra(z, h + 46 + nlen, xlen, m));
        p += 46 + nlen + xlen + clen;
    }
    return 0;
}

int halo_import_npz_open(const char *path, halo_import_npz **out)
{
    halo_import_npz *z = HALO_ALLOC(halo_import_npz, 1);
    unsigned char *cd = NULL;
    uint64_t cd_off = 0, cd_size = 0, entries = 0;
    int rc = 0;
    *out = NULL;
    snprintf(z->path, sizeof z->path, "%s", path);
    z->f = fopen(path, "rb");
    if (z->f == NULL) {
        rc = halo_errorf(HALO_EINPUT, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (fseeko(z->f, 0, SEEK_END) != 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: cannot seek: %s", path, strerror(errno));
        goto fail;
    }
    z->size = (uint64_t)ftello(z->f);
    HALO_TRY(npz_find_cdir(z, &cd_off, &cd_size, &entries));
    cd = halo_malloc(cd_size > 0 ? cd_size : 1);
    if (!read_at(z->f, cd_off, cd, cd_size)) {
        rc = halo_errorf(HALO_EINPUT, "%s: cannot read the central directory", path);
        goto fail;
    }
    HALO_TRY(npz_parse_cdir(z, cd, cd_size, entries));
    halo_free(cd);
    *out = z;
    return 0;
fail:
    halo_free(cd);
    halo_import_npz_close(z);
    return rc;
}

void halo_import_npz_close(halo_import_npz *z)
{
    if (z == NULL) {
        return;
    }
    if (z->f != NULL) {
        fclose(z->f);
    }
    halo_free(z->members);
    halo_free(z);
}

const char *halo_import_npz_path(const halo_import_npz *z)
{
    return z->path;
}

int halo_import_npz_count(const halo_import_npz *z)
{
    return z->count;
}

const char *halo_import_npz_name(const halo_import_npz *z, int i)
{
    return z->members[i].name;
}

static const npz_member *npz_find(const halo_import_npz *z, const char *name)
{
    for (int i = 0; i < z->count; i++) {
        if (strcmp(z->members[i].name, name) == 0) {
            return &z->members[i];
        }
    }
    return NULL;
}

bool halo_import_npz_has(const halo_import_npz *z, const char *name)
{
    return npz_find(z, name) != NULL;
}

int halo_import_npy_fail(const halo_import_npy *a, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return halo_errorf(HALO_EINPUT, "%s:%s.npy: %s", a->z->path, a->m->name, msg);
}

/* Refills a->buf with up to NPZ_CHUNK uncompressed bytes (fewer only at the member's end);
 * stored members are copied, deflated ones inflated raw. Updates the CRC. */
static int npy_fill(halo_import_npy *a)
{
    const npz_member *m = a->m;
    size_t want = NPZ_CHUNK - a->have, got = 0;
    if (m->method == 0) {
        size_t n = a->cleft < want ? (size_t)a->cleft : want;
        got = fread(a->buf + a->have, 1, n, a->z->f);
        if (got != n) {
            return halo_import_npy_fail(a, "truncated: the archive ends inside this member");
        }
        a->cleft -= got;
    } else {
        a->zs.next_out = a->buf + a->have;
        a->zs.avail_out = (uInt)want;
        while (a->zs.avail_out > 0 && !a->zs_end) {
            if (a->zs.avail_in == 0 && a->cleft > 0) {
                size_t n = a->cleft < NPZ_CHUNK ? (size_t)a->cleft : NPZ_CHUNK;
                if (fread(a->in, 1, n, a->z->f) != n) {
                    return halo_import_npy_fail(a, "truncated: the archive ends inside this "
                                                "member");
                }
                a->cleft -= n;
                a->zs.next_in = a->in;
                a->zs.avail_in = (uInt)n;
            }
            int zr = inflate(&a->zs, Z_NO_FLUSH);
            if (zr == Z_STREAM_END) {
                a->zs_end = true;
            } else if (zr == Z_BUF_ERROR && a->zs.avail_in == 0 && a->cleft == 0) {
                return halo_import_npy_fail(a, "truncated deflate stream (ends before its last "
                                            "block)");
            } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
                return halo_import_npy_fail(a, "corrupt deflate data (%s)",
                                            a->zs.msg != NULL ? a->zs.msg : "zlib error");
            }
        }
        got = want - a->zs.avail_out;
    }
    a->crc = (uint32_t)crc32(a->crc, a->buf + a->have, (uInt)got);
    a->produced += got;
    if (a->produced > m->usize) {
        return halo_import_npy_fail(a, "more data than the %" PRIu64 " bytes the archive "
                                    "records", m->usize);
    }
    a->have += got;
    return 0;
}

/* Copies exactly n uncompressed bytes into out (n <= NPZ_CHUNK). */
static int npy_take(halo_import_npy *a, void *out, size_t n, const char *what)
{
    if (a->have - a->pos < n) {
        memmove(a->buf, a->buf + a->pos, a->have - a->pos);
        a->have -= a->pos;
        a->pos = 0;
        HALO_CHECK(npy_fill(a));
        if (a->have < n) {
            return halo_import_npy_fail(a, "ends inside %s (%" PRIu64 " bytes in all)", what,
                                        a->produced);
        }
    }
    memcpy(out, a->buf + a->pos, n);
    a->pos += n;
    return 0;
}

/* Value of key `key` in a .npy header dict, or NULL ("'descr': '<f4'" -> "'<f4', ..."). */
static const char *npy_key(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (p == NULL) {
        return NULL;
    }
    p += strlen(pat);
    while (*p == ' ') {
        p++;
    }
    if (*p != ':') {
        return NULL;
    }
    p++;
    while (*p == ' ') {
        p++;
    }
    return p;
}

/* Fills info from the descr string ('<f4'): little-endian or byte-sized numbers only. */
static int npy_parse_descr(halo_import_npy *a, const char *p)
{
    halo_import_npy_info *in = &a->info;
    const char *q = *p == '\'' ? strchr(p + 1, '\'') : NULL;
    if (q == NULL || q - p - 1 >= (long)sizeof in->descr) {
        return halo_import_npy_fail(a, "header's descr is not a simple dtype (structured "
                                    "arrays are not supported)");
    }
    snprintf(in->descr, sizeof in->descr, "%.*s", (int)(q - p - 1), p + 1);
    const char *d = in->descr;
    char *end;
    long size = strtol(d + (d[0] != '\0' ? 2 : 0), &end, 10);
    bool little = d[0] == '<' || d[0] == '|' || d[0] == '=';
    char kind = d[0] != '\0' ? d[1] : '\0';
    if (!little || *end != '\0' || (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') ||
        (size != 1 && size != 2 && size != 4 && size != 8) || (kind == 'f' && size == 1) ||
        (kind == 'b' && size != 1)) {
        return halo_import_npy_fail(a, "dtype '%s' is not supported (little-endian int, uint, "
                                    "bool or float of 1-8 bytes)", d);
    }
    in->kind = kind == 'b' ? 'u' : kind;
    in->itemsize = (int)size;
    return 0;
}

/* Fills info's shape from "(2, 8)", "(6,)" or "()"; the product must fit the member. */
static int npy_parse_shape(halo_import_npy *a, const char *p)
{
    halo_import_npy_info *in = &a->info;
    if (*p++ != '(') {
        return halo_import_npy_fail(a, "header's shape is not a tuple");
    }
    in->count = 1;
    for (;;) {
        while (*p == ' ' || *p == ',') {
            p++;
        }
        if (*p == ')') {
            return 0;
        }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || errno != 0 || in->ndim == HALO_NPY_MAXDIM) {
            return halo_import_npy_fail(a, "header's shape is not a tuple of at most %d "
                                        "non-negative integers", HALO_NPY_MAXDIM);
        }
        in->shape[in->ndim++] = v;
        if (v > 0 && in->count > (INT64_MAX / 8) / v) {
            return halo_import_npy_fail(a, "shape too large");
        }
        in->count *= v;
        p = end;
    }
}

/* Reads and parses the .npy header: magic, version, length, then the dict's descr,
 * fortran_order and shape; the data must fill the member exactly. */
static int npy_parse_header(halo_import_npy *a)
{
    unsigned char pre[12];
    HALO_CHECK(npy_take(a, pre, 10, "the .npy preamble"));
    if (memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] < 1 || pre[6] > 3) {
        return halo_import_npy_fail(a, "not a .npy array (no \\x93NUMPY magic of version 1-3)");
    }
    size_t hlen = le16(pre + 8), pre_len = 10;
    if (pre[6] >= 2) {
        HALO_CHECK(npy_take(a, pre + 10, 2, "the .npy preamble"));
        hlen = le32(pre + 8);
        pre_len = 12;
    }
    if (hlen > NPZ_MAX_HEADER) {
        return halo_import_npy_fail(a, ".npy header of %zu bytes (at most %d)", hlen,
                                    NPZ_MAX_HEADER);
    }
    char *hdr = halo_malloc(hlen + 1);
    int rc = npy_take(a, hdr, hlen, "the .npy header");
    hdr[rc == 0 ? hlen : 0] = '\0';
    const char *descr = npy_key(hdr, "descr"), *order = npy_key(hdr, "fortran_order");
    const char *shape = npy_key(hdr, "shape");
    if (rc == 0 && (descr == NULL || order == NULL || shape == NULL)) {
        rc = halo_import_npy_fail(a, ".npy header lacks descr, fortran_order or shape");
    }
    if (rc == 0) {
        a->info.fortran = strncmp(order, "True", 4) == 0;
        rc = npy_parse_descr(a, descr);
    }
    if (rc == 0) {
        rc = npy_parse_shape(a, shape);
    }
    halo_free(hdr);
    HALO_CHECK(rc);
    uint64_t need = pre_len + hlen + (uint64_t)a->info.count * (uint64_t)a->info.itemsize;
    if (need != a->m->usize) {
        return halo_import_npy_fail(a, "header says %" PRId64 " elements of %d bytes "
                                    "(%" PRIu64 " bytes with the header), the member holds %"
                                    PRIu64, a->info.count, a->info.itemsize, need,
                                    a->m->usize);
    }
    return 0;
}

int halo_import_npy_open(halo_import_npz *z, const char *name, halo_import_npy **out)
{
    const npz_member *m = npz_find(z, name);
    *out = NULL;
    if (m == NULL) {
        char list[1024] = "";
        for (int i = 0; i < z->count; i++) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", i > 0 ? ", " : "",
                     z->members[i].name);
        }
        return halo_errorf(HALO_EINPUT, "%s: no array '%s' (it holds: %s)", z->path, name,
                           z->count > 0 ? list : "nothing");
    }
    halo_import_npy *a = HALO_ALLOC(halo_import_npy, 1);
    memset(a, 0, sizeof *a);
    a->z = z;
    a->m = m;
    a->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    unsigned char lh[30];
    int rc = 0;
    if ((m->flags & 1) != 0 || (m->method != 0 && m->method != 8)) {
        rc = halo_import_npy_fail(a, "%s (compression method %u); stored or deflated members "
                                  "are read", (m->flags & 1) ? "encrypted" : "unsupported",
                                  (unsigned)m->method);
        goto fail;
    }
    if (!read_at(z->f, m->offset, lh, 30) || memcmp(lh, "PK\3\4", 4) != 0) {
        rc = halo_import_npy_fail(a, "local header missing: truncated or corrupt archive");
        goto fail;
    }
    uint64_t data = m->offset + 30 + le16(lh + 26) + le16(lh + 28);
    if (data > z->size || fseeko(z->f, (off_t)data, SEEK_SET) != 0) {
        rc = halo_import_npy_fail(a, "truncated: the archive ends inside this member");
        goto fail;
    }
    a->cleft = m->csize;
    a->in = halo_malloc(NPZ_CHUNK);
    a->buf = halo_malloc(NPZ_CHUNK);
    if (m->method == 8) {
        if (inflateInit2(&a->zs, -MAX_WBITS) != Z_OK) {
            rc = halo_import_npy_fail(a, "cannot start zlib's inflate");
            goto fail;
        }
        a->zs_live = true;
    }
    HALO_TRY(npy_parse_header(a));
    a->parsed = true;
    *out = a;
    return 0;
fail:
    halo_import_npy_close(a);
    return rc;
}

const halo_import_npy_info *halo_import_npy_header(const halo_import_npy *a)
{
    return &a->info;
}

/* IEEE half precision to float. */
static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v;
    if (e == 0) {
        v = ldexpf((float)m, -24);
    } else if (e == 31) {
        v = m != 0 ? NAN : INFINITY;
    } else {
        v = ldexpf((float)(m | 0x400), e - 25);
    }
    return (h & 0x8000) ? -v : v;
}

/* The next element's raw bytes, little-endian, in *raw (zero-extended to 8 bytes). */
static int npy_next_raw(halo_import_npy *a, uint64_t *raw)
{
    unsigned char b[8];
    int size = a->info.itemsize;
    if (a->next >= a->info.count) {
        return halo_import_npy_fail(a, "read past the last of %" PRId64 " elements",
                                    a->info.count);
    }
    if (a->have - a->pos >= (size_t)size) {
        memcpy(b, a->buf + a->pos, (size_t)size);
        a->pos += (size_t)size;
    } else {
        HALO_CHECK(npy_take(a, b, (size_t)size, "the array data"));
    }
    uint64_t v = 0;
    for (int i = size - 1; i >= 0; i--) {
        v = (v << 8) | b[i];
    }
    *raw = v;
    a->next++;
    return 0;
}

int halo_import_npy_read_i64(halo_import_npy *a, int64_t *out, int64_t n)
{
    int bits = a->info.itemsize * 8;
    if (a->info.kind == 'f') {
        return halo_import_npy_fail(a, "dtype '%s' where integers are expected", a->info.descr);
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t v;
        HALO_CHECK(npy_next_raw(a, &v));
        if (a->info.kind == 'i' && bits < 64 && (v >> (bits - 1)) != 0) {
            v |= ~(uint64_t)0 << bits; /* sign-extend */
        }
        out[i] = a->info.kind == 'u' && v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    return 0;
}

int halo_import_npy_read_f64(halo_import_npy *a, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t v;
        HALO_CHECK(npy_next_raw(a, &v));
        if (a->info.kind != 'f') {
            int bits = a->info.itemsize * 8;
            if (a->info.kind == 'i' && bits < 64 && (v >> (bits - 1)) != 0) {
                v |= ~(uint64_t)0 << bits;
            }
            out[i] = a->info.kind == 'i' ? (double)(int64_t)v : (double)v;
        } else if (a->info.itemsize == 2) {
            out[i] = half_to_float((uint16_t)v);
        } else if (a->info.itemsize == 4) {
            uint32_t u = (uint32_t)v;
            float f;
            memcpy(&f, &u, sizeof f);
            out[i] = f;
        } else {
            memcpy(&out[i], &v, sizeof v);
        }
    }
    return 0;
}

int halo_import_npy_close(halo_import_npy *a)
{
    int rc = 0;
    if (a == NULL) {
        return 0;
    }
    if (a->parsed && a->next == a->info.count) {
        /* drain: a deflate stream must reach its end, the sizes and CRC must agree */
        while (rc == 0 && a->pos == a->have &&
               (a->m->method == 0 ? a->cleft > 0 : !a->zs_end)) {
            a->have = a->pos = 0;
            rc = npy_fill(a);
            if (rc == 0 && a->have == 0 && a->m->method == 8 && !a->zs_end) {
                rc = halo_import_npy_fail(a, "truncated deflate stream");
            }
        }
        if (rc == 0 && (a->pos != a->have || a->produced != a->m->usize)) {
            rc = halo_import_npy_fail(a, "%" PRIu64 " bytes after inflating, the archive "
                                      "records %" PRIu64, a->produced, a->m->usize);
        }
        if (rc == 0 && a->crc != a->m->crc) {
            rc = halo_import_npy_fail(a, "CRC-32 %08x, the archive records %08x: the member "
                                      "is corrupt", a->crc, a->m->crc);
        }
    }
    if (a->zs_live) {
        inflateEnd(&a->zs);
    }
    halo_free(a->in);
    halo_free(a->buf);
    halo_free(a);
    return rc;
}
