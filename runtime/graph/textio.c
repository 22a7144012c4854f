/* Buffered line reader over zlib's gz* interface (plain text passes through) and field parsers. */
#include "graph/textio.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/progress.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define READ_CHUNK (1u << 20)

struct halo_import_reader {
    gzFile gz;              /* zlib handle; reads plain files transparently */
    char path[4096];        /* as given, for messages */
    char *buf;              /* decompressed bytes; buf[start, end) not yet returned */
    size_t cap;             /* bytes allocated for buf */
    size_t start;           /* first unreturned byte */
    size_t end;             /* one past the last decompressed byte */
    bool eof;               /* gzread reported the end of the data */
    int64_t line;           /* number of the line last returned */
    uint64_t size;          /* file size on disk */
    halo_progress progress; /* bar or log lines while a big file is read */
    char label[64];         /* progress label: "reading NAME" */
};

int halo_import_reader_open(const char *path, halo_import_reader **out)
{
    *out = NULL;
    uint64_t size = 0;
    int fd;
    HALO_CHECK(halo_input_open(path, &fd));
    gzFile gz = gzdopen(fd, "rb");
    if (gz == NULL) {
        close(fd);
        return halo_errorf(HALO_EINPUT, "%s: cannot open: %s", path,
                           errno != 0 ? strerror(errno) : "out of memory");
    }
    if (halo_file_size(path, &size) < 0) {
        size = 0;
    }
    gzbuffer(gz, 256u << 10);
    halo_import_reader *r = HALO_NEW(halo_import_reader, 1);
    r->gz = gz;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->cap = READ_CHUNK + 1;
    r->buf = halo_malloc(r->cap);
    r->size = size;
    const char *base = strrchr(path, '/');
    snprintf(r->label, sizeof r->label, "reading %s", base != NULL ? base + 1 : path);
    halo_progress_begin(&r->progress, r->label, size);
    *out = r;
    return 0;
}

void halo_import_reader_close(halo_import_reader *r)
{
    if (r == NULL) {
        return;
    }
    halo_progress_end(&r->progress);
    gzclose(r->gz);
    halo_free(r->buf);
    halo_free(r);
}

int64_t halo_import_reader_line(const halo_import_reader *r)
{
    return r->line;
}

const char *halo_import_reader_path(const halo_import_reader *r)
{
    return r->path;
}

uint64_t halo_import_reader_offset(const halo_import_reader *r)
{
    z_off_t off = gzoffset(r->gz);
    return off > 0 ? (uint64_t)off : 0;
}

uint64_t halo_import_reader_size(const halo_import_reader *r)
{
    return r->size;
}

int halo_import_fail(const halo_import_reader *r, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return halo_errorf(HALO_EINPUT, "%s:%lld: %s", r->path, (long long)r->line, what);
}

/* Refills the buffer: keeps the unreturned tail, grows the buffer when the tail fills it (a
 * long line), and reads one chunk. At the end of the data, zlib's error state tells a complete
 * stream from a truncated one (Z_BUF_ERROR: "unexpected end of file") or a corrupt one. */
static int reader_fill(halo_import_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->cap - 1 - r->end < READ_CHUNK / 2) {
        r->cap = r->cap * 2;
        r->buf = halo_realloc(r->buf, r->cap);
    }
    size_t want = r->cap - 1 - r->end;
    if (want > READ_CHUNK) {
        want = READ_CHUNK;
    }
    int n = gzread(r->gz, r->buf + r->end, (unsigned)want);
    int err = Z_OK;
    const char *msg = gzerror(r->gz, &err);
    int64_t at = r->line + 1;
    size_t plen = strlen(r->path);
    if (strncmp(msg, r->path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0) {
        msg += plen + 2; /* gzerror prefixes the path, which the message already has */
    }
    if (n < 0 || (err != Z_OK && err != Z_BUF_ERROR)) {
        return halo_errorf(HALO_EINPUT, "%s:%lld: corrupt gzip data (%s)", r->path, (long long)at,
                           err == Z_ERRNO ? strerror(errno) : msg);
    }
    if (n == 0) {
        if (err == Z_BUF_ERROR) {
            return halo_errorf(HALO_EINPUT, "%s:%lld: truncated gzip stream (%s)", r->path,
                               (long long)at, msg);
        }
        r->eof = true;
    }
    r->end += (size_t)n;
    halo_progress_update(&r->progress, halo_import_reader_offset(r));
    return 0;
}

int halo_import_reader_next(halo_import_reader *r, char **line)
{
    for (;;) {
        char *s = r->buf + r->start;
        char *nl = memchr(s, '\n', r->end - r->start);
        if (nl != NULL || (r->eof && r->end > r->start)) {
            size_t len = nl != NULL ? (size_t)(nl - s) : r->end - r->start;
            r->start += nl != NULL ? len + 1 : len;
            if (len > 0 && s[len - 1] == '\r') {
                len--;
            }
            s[len] = '\0'; /* cap > end always leaves room for the last line's NUL */
            r->line++;
            if (memchr(s, '\0', len) != NULL) {
                /* a NUL would end the line early (a line of NULs would read as blank) */
                return halo_import_fail(r, "a NUL byte: binary data, not text");
            }
            *line = s;
            return 1;
        }
        if (r->eof) {
            return 0;
        }
        HALO_CHECK(reader_fill(r));
    }
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

bool halo_import_next_field(char **cursor, char sep, char **field)
{
    char *s = *cursor;
    if (s == NULL) {
        return false;
    }
    if (sep == 0) {
        while (is_blank(*s)) {
            s++;
        }
        if (*s == '\0') {
            *cursor = NULL;
            return false;
        }
        char *e = s;
        while (*e != '\0' && !is_blank(*e)) {
            e++;
        }
        *cursor = *e != '\0' ? e + 1 : NULL;
        *e = '\0';
        *field = s;
        return true;
    }
    char *e = strchr(s, sep);
    *cursor = e != NULL ? e + 1 : NULL;
    if (e == NULL) {
        e = s + strlen(s);
    }
    while (s < e && is_blank(*s)) {
        s++;
    }
    while (e > s && is_blank(e[-1])) {
        e--;
    }
    *e = '\0';
    *field = s;
    return true;
}

int halo_import_count_fields(const char *line, char sep)
{
    int n = 0;
    if (sep == 0) {
        const char *s = line;
        for (;;) {
            while (is_blank(*s)) {
                s++;
            }
            if (*s == '\0') {
                return n;
            }
            n++;
            while (*s != '\0' && !is_blank(*s)) {
                s++;
            }
        }
    }
    n = 1;
    for (const char *s = line; *s != '\0'; s++) {
        n += *s == sep;
    }
    return n;
}

bool halo_import_is_comment(const char *line)
{
    while (is_blank(*line)) {
        line++;
    }
    return *line == '\0' || *line == '#' || *line == '%';
}

int halo_import_parse_u64(const halo_import_reader *r, const char *field, const char *what,
                          uint64_t *out)
{
    const char *s = field;
    uint64_t v = 0;
    if (*s < '0' || *s > '9') { /* digits only: no sign, no space */
        return halo_import_fail(r, "%s '%.40s' is not a non-negative integer", what, field);
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_C(0x7fffffffffffffff) - d) / 10) {
            return halo_import_fail(r, "%s '%.40s' is larger than 2^63-1", what, field);
        }
        v = v * 10 + d;
    }
    if (*s != '\0') {
        return halo_import_fail(r, "%s '%.40s' is not a non-negative integer", what, field);
    }
    *out = v;
    return 0;
}

int halo_import_parse_f32(const halo_import_reader *r, const char *field, const char *what,
                          float *out)
{
    char *end;
    errno = 0;
    float v = strtof(field, &end);
    if (end == field || *end != '\0') {
        return halo_import_fail(r, "%s '%.40s' is not a number", what, field);
    }
    if (!isfinite(v)) {
        return halo_import_fail(r, "%s '%.40s' is not a finite number", what, field);
    }
    *out = v;
    return 0;
}

int halo_import_parse_label(const halo_import_reader *r, const char *field, int32_t *out)
{
    if (field[0] == '\0' || strcasecmp(field, "nan") == 0 || strcmp(field, "-1") == 0) {
        *out = -1;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(field, &end);
    if (end == field || *end != '\0' || isnan(v)) {
        return halo_import_fail(r, "label '%.40s' is not an integer or nan", field);
    }
    if (v != floor(v) || v < 0 || v >= 1000000) {
        return halo_import_fail(r, "label '%.40s' is not an integer in [0, 1000000) or -1", field);
    }
    *out = (int32_t)v;
    return 0;
}

int halo_import_parse_row(const halo_import_reader *r, char *row, char sep, int width, float *out)
{
    int n = halo_import_count_fields(row, sep);
    if (n != width) {
        return halo_import_fail(r, "%d values, expected %d (the width of the first row)", n, width);
    }
    char *cur = row, *f;
    for (int i = 0; i < width && halo_import_next_field(&cur, sep, &f); i++) {
        char what[48];
        snprintf(what, sizeof what, "value %d", i + 1);
        HALO_CHECK(halo_import_parse_f32(r, f, what, &out[i]));
    }
    return 0;
}
