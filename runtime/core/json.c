/* JSON parsing (recursive descent with line tracking) and writing. */
#include "core/json.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;     /* cursor */
    const char *end;   /* end of text */
    const char *where; /* file name for messages */
    int line;          /* current line, 1-based */
    int depth;         /* nesting depth, bounded */
} jparser;

static int jp_fail(jparser *jp, const char *what)
{
    return halo_errorf(HALO_EINPUT, "%s:%d: invalid JSON: %s", jp->where, jp->line, what);
}

static void jp_ws(jparser *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' ||
                               *jp->p == '\r')) {
        if (*jp->p == '\n') {
            jp->line++;
        }
        jp->p++;
    }
}

static int jp_value(jparser *jp, halo_json **out);

static int jp_string(jparser *jp, char **out)
{
    halo_sb sb;
    jp->p++; /* opening quote */
    halo_sb_init(&sb);
    while (jp->p < jp->end && *jp->p != '"') {
        char c = *jp->p++;
        if (c == '\n') {
            halo_sb_free(&sb);
            return jp_fail(jp, "newline in string");
        }
        if (c == '\\') {
            if (jp->p >= jp->end) {
                break;
            }
            char e = *jp->p++;
            switch (e) {
            case 'n': halo_sb_putc(&sb, '\n'); break;
            case 't': halo_sb_putc(&sb, '\t'); break;
            case 'r': halo_sb_putc(&sb, '\r'); break;
            case 'b': halo_sb_putc(&sb, '\b'); break;
            case 'f': halo_sb_putc(&sb, '\f'); break;
            case 'u': {
                if (jp->end - jp->p < 4) {
                    halo_sb_free(&sb);
                    return jp_fail(jp, "short \\u escape");
                }
                char hex[5] = {jp->p[0], jp->p[1], jp->p[2], jp->p[3], 0};
                unsigned cp = (unsigned)strtoul(hex, NULL, 16);
                jp->p += 4;
                if (cp < 0x80) {
                    halo_sb_putc(&sb, (char)cp);
                } else if (cp < 0x800) {
                    halo_sb_putc(&sb, (char)(0xc0 | (cp >> 6)));
                    halo_sb_putc(&sb, (char)(0x80 | (cp & 0x3f)));
                } else {
                    halo_sb_putc(&sb, (char)(0xe0 | (cp >> 12)));
                    halo_sb_putc(&sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
                    halo_sb_putc(&sb, (char)(0x80 | (cp & 0x3f)));
                }
                break;
            }
            default: halo_sb_putc(&sb, e); break;
            }
        } else {
            halo_sb_putc(&sb, c);
        }
    }
    if (jp->p >= jp->end) {
        halo_sb_free(&sb);
        return jp_fail(jp, "unterminated string");
    }
    jp->p++;
    if (sb.buf == NULL) {
        halo_sb_putc(&sb, '\0');
        sb.len = 0;
    }
    *out = sb.buf;
    return 0;
}

static int jp_container(jparser *jp, halo_json *v, char close)
{
    size_t cap = 0;
    jp->p++;
    if (++jp->depth > 64) {
        return jp_fail(jp, "nesting too deep");
    }
    jp_ws(jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        jp->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        jp_ws(jp);
        if (close == '}') {
            if (jp->p >= jp->end || *jp->p != '"') {
                return jp_fail(jp, "expected a key");
            }
            HALO_CHECK(jp_string(jp, &key));
            for (size_t i = 0; i < v->len; i++) {
                if (strcmp(v->keys[i], key) == 0) {
                    char what[200];
                    snprintf(what, sizeof what, "key \"%.160s\" appears twice in one object",
                             key);
                    halo_free(key);
                    return jp_fail(jp, what);
                }
            }
            jp_ws(jp);
            if (jp->p >= jp->end || *jp->p != ':') {
                halo_free(key);
                return jp_fail(jp, "expected ':'");
            }
            jp->p++;
        }
        halo_json *item = NULL;
        int rc = jp_value(jp, &item);
        if (rc < 0) {
            halo_free(key);
            return rc;
        }
        if (v->len == cap) {
            cap = cap ? 2 * cap : 8;
            v->items = halo_realloc(v->items, cap * sizeof *v->items);
            if (close == '}') {
                v->keys = halo_realloc(v->keys, cap * sizeof *v->keys);
            }
        }
        v->items[v->len] = item;
        if (close == '}') {
            v->keys[v->len] = key;
        }
        v->len++;
        jp_ws(jp);
        if (jp->p < jp->end && *jp->p == ',') {
            jp->p++;
            continue;
        }
        if (jp->p < jp->end && *jp->p == close) {
            jp->p++;
            jp->depth--;
            return 0;
        }
        return jp_fail(jp, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jp_value(jparser *jp, halo_json **out)
{
    halo_json *v = HALO_NEW(halo_json, 1);
    int rc = 0;
    *out = v;
    jp_ws(jp);
    if (jp->p >= jp->end) {
        return jp_fail(jp, "unexpected end");
    }
    char c = *jp->p;
    if (c == '{') {
        v->type = HALO_JSON_OBJECT;
        rc = jp_container(jp, v, '}');
    } else if (c == '[') {
        v->type = HALO_JSON_ARRAY;
        rc = jp_container(jp, v, ']');
    } else if (c == '"') {
        v->type = HALO_JSON_STRING;
        rc = jp_string(jp, &v->string);
    } else if (jp->end - jp->p >= 4 && memcmp(jp->p, "true", 4) == 0) {
        v->type = HALO_JSON_BOOL;
        v->boolean = true;
        jp->p += 4;
    } else if (jp->end - jp->p >= 5 && memcmp(jp->p, "false", 5) == 0) {
        v->type = HALO_JSON_BOOL;
        jp->p += 5;
    } else if (jp->end - jp->p >= 4 && memcmp(jp->p, "null", 4) == 0) {
        v->type = HALO_JSON_NULL;
        jp->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (jp->p < jp->end && n < sizeof buf - 1 &&
               strchr("+-0123456789.eE", *jp->p) != NULL) {
            buf[n++] = *jp->p++;
        }
        buf[n] = '\0';
        char *endp;
        v->type = HALO_JSON_NUMBER;
        v->number = strtod(buf, &endp);
        if (*endp != '\0') {
            rc = jp_fail(jp, "bad number");
        }
    } else {
        rc = jp_fail(jp, "unexpected character");
    }
    if (rc < 0) {
        halo_json_free(v);
        *out = NULL;
    }
    return rc;
}

int halo_json_parse(const char *text, size_t len, const char *where, halo_json **out)
{
    jparser jp = {text, text + len, where, 1, 0};
    *out = NULL;
    HALO_CHECK(jp_value(&jp, out));
    jp_ws(&jp);
    if (jp.p != jp.end) {
        halo_json_free(*out);
        *out = NULL;
        return jp_fail(&jp, "trailing characters");
    }
    return 0;
}

int halo_json_load(const char *path, halo_json **out)
{
    char *text;
    size_t len;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    int rc = halo_json_parse(text, len, path, out);
    halo_free(text);
    return rc;
}

void halo_json_free(halo_json *v)
{
    if (v == NULL) {
        return;
    }
    for (size_t i = 0; i < v->len; i++) {
        halo_json_free(v->items[i]);
        if (v->keys != NULL) {
            halo_free(v->keys[i]);
        }
    }
    halo_free(v->items);
    halo_free(v->keys);
    halo_free(v->string);
    halo_free(v);
}

const halo_json *halo_json_get(const halo_json *v, const char *key)
{
    if (v == NULL || v->type != HALO_JSON_OBJECT) {
        return NULL;
    }
    for (size_t i = 0; i < v->len; i++) {
        if (strcmp(v->keys[i], key) == 0) {
            return v->items[i];
        }
    }
    return NULL;
}

int halo_json_get_f64(const halo_json *v, const char *key, const char *where, double *out)
{
    const halo_json *m = halo_json_get(v, key);
    if (m == NULL || m->type != HALO_JSON_NUMBER) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" is missing or not a number", where, key);
    }
    *out = m->number;
    return 0;
}

int halo_json_get_i64(const halo_json *v, const char *key, const char *where, int64_t *out)
{
    double d = 0;
    HALO_CHECK(halo_json_get_f64(v, key, where, &d));
    if (d != floor(d) || fabs(d) > 9007199254740992.0) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" is not an integer", where, key);
    }
    *out = (int64_t)d;
    return 0;
}

int halo_json_opt_bool(const halo_json *v, const char *key, const char *where, bool dflt,
                       bool *out)
{
    const halo_json *m = halo_json_get(v, key);
    if (m == NULL) {
        *out = dflt;
        return 0;
    }
    if (m->type != HALO_JSON_BOOL) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" must be true or false", where, key);
    }
    *out = m->boolean;
    return 0;
}

int halo_json_opt_i64(const halo_json *v, const char *key, const char *where, int64_t dflt,
                      int64_t lo, int64_t hi, int64_t *out)
{
    if (halo_json_get(v, key) == NULL) {
        *out = dflt;
        return 0;
    }
    HALO_CHECK(halo_json_get_i64(v, key, where, out));
    if (*out < lo || *out > hi) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" is %lld, not in [%lld, %lld]", where, key,
                           (long long)*out, (long long)lo, (long long)hi);
    }
    return 0;
}

int halo_json_get_str(const halo_json *v, const char *key, const char *where, const char **out)
{
    const halo_json *m = halo_json_get(v, key);
    if (m == NULL || m->type != HALO_JSON_STRING) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" is missing or not a string", where, key);
    }
    *out = m->string;
    return 0;
}

/* ---- string builder ---- */

void halo_sb_init(halo_sb *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void halo_sb_free(halo_sb *sb)
{
    halo_free(sb->buf);
    halo_sb_init(sb);
}

static void sb_reserve(halo_sb *sb, size_t extra)
{
    if (sb->len + extra + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (cap < sb->len + extra + 1) {
            cap *= 2;
        }
        sb->buf = halo_realloc(sb->buf, cap);
        sb->cap = cap;
    }
}

void halo_sb_putc(halo_sb *sb, char c)
{
    sb_reserve(sb, 1);
    sb->buf[sb->len++] = c;
    sb->buf[sb->len] = '\0';
}

void halo_sb_puts(halo_sb *sb, const char *s)
{
    size_t n = strlen(s);
    sb_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n + 1);
    sb->len += n;
}

void halo_sb_printf(halo_sb *sb, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    sb_reserve(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    sb->len += (size_t)n;
}

/* ---- writer ---- */

void halo_jw_init(halo_jw *w, bool pretty)
{
    memset(w, 0, sizeof *w);
    halo_sb_init(&w->sb);
    w->pretty = pretty;
    w->first[0] = true;
}

void halo_jw_free(halo_jw *w)
{
    halo_sb_free(&w->sb);
}

static void jw_indent(halo_jw *w)
{
    if (w->pretty) {
        halo_sb_putc(&w->sb, '\n');
        for (int i = 0; i < w->depth; i++) {
            halo_sb_puts(&w->sb, "  ");
        }
    }
}

/* Separator before a value or key at the current depth. */
static void jw_sep(halo_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth]) {
        halo_sb_putc(&w->sb, ',');
    }
    w->first[w->depth] = false;
    if (w->depth > 0) {
        jw_indent(w);
    }
}

static void jw_open(halo_jw *w, char c)
{
    jw_sep(w);
    halo_sb_putc(&w->sb, c);
    if (w->depth < 31) {
        w->depth++;
    }
    w->first[w->depth] = true;
}

static void jw_close(halo_jw *w, char c)
{
    bool empty = w->first[w->depth];
    w->depth--;
    if (!empty) {
        jw_indent(w);
    }
    halo_sb_putc(&w->sb, c);
}

void halo_jw_obj_begin(halo_jw *w) { jw_open(w, '{'); }
void halo_jw_obj_end(halo_jw *w) { jw_close(w, '}'); }
void halo_jw_arr_begin(halo_jw *w) { jw_open(w, '['); }
void halo_jw_arr_end(halo_jw *w) { jw_close(w, ']'); }

static void jw_quoted(halo_sb *sb, const char *s)
{
    halo_sb_putc(sb, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            halo_sb_putc(sb, '\\');
            halo_sb_putc(sb, (char)c);
        } else if (c == '\n') {
            halo_sb_puts(sb, "\\n");
        } else if (c < 0x20) {
            halo_sb_printf(sb, "\\u%04x", c);
        } else {
            halo_sb_putc(sb, (char)c);
        }
    }
    halo_sb_putc(sb, '"');
}

void halo_jw_key(halo_jw *w, const char *key)
{
    jw_sep(w);
    jw_quoted(&w->sb, key);
    halo_sb_puts(&w->sb, w->pretty ? ": " : ":");
    w->after_key = true;
}

void halo_jw_str(halo_jw *w, const char *s)
{
    jw_sep(w);
    jw_quoted(&w->sb, s);
}

void halo_jw_i64(halo_jw *w, int64_t v)
{
    jw_sep(w);
    halo_sb_printf(&w->sb, "%lld", (long long)v);
}

void halo_jw_f64(halo_jw *w, double v)
{
    jw_sep(w);
    if (!isfinite(v)) {
        halo_sb_puts(&w->sb, "null");
    } else {
        halo_sb_printf(&w->sb, "%.9g", v);
    }
}

void halo_jw_bool(halo_jw *w, bool v)
{
    jw_sep(w);
    halo_sb_puts(&w->sb, v ? "true" : "false");
}

void halo_jw_null(halo_jw *w)
{
    jw_sep(w);
    halo_sb_puts(&w->sb, "null");
}

void halo_jw_raw(halo_jw *w, const char *json)
{
    jw_sep(w);
    halo_sb_puts(&w->sb, json);
}
