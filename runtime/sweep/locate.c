/* Where a field of an experiment file is written: its line, found in the file's text with the
 * comments blanked, for the one-line errors "FILE:LINE: field PATH: what". */
#include "sweep/spec_int.h"

#include "core/err.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

bool halo_sweep_is_ident(const char *s)
{
    if (!isalpha((unsigned char)s[0]) && s[0] != '_') {
        return false;
    }
    for (const char *p = s; *p; p++) {
        if (!ident_char(*p)) {
            return false;
        }
    }
    return true;
}

/* Length of a Lua long bracket opening "[==[" at s (0 when none); level gets the '=' count. */
static size_t long_open(const char *s, int *level)
{
    if (s[0] != '[') {
        return 0;
    }
    size_t i = 1;
    while (s[i] == '=') {
        i++;
    }
    if (s[i] != '[') {
        return 0;
    }
    *level = (int)i - 1;
    return i + 1;
}

/* Skips to just past the long bracket close of `level` (or the end); blanks what it passes
 * over except newlines when blank is set. */
static char *long_close(char *s, int level, bool blank)
{
    while (*s) {
        if (s[0] == ']') {
            int i = 1;
            while (s[i] == '=') {
                i++;
            }
            if (s[i] == ']' && i - 1 == level) {
                if (blank) {
                    memset(s, ' ', (size_t)i + 1);
                }
                return s + i + 1;
            }
        }
        if (blank && *s != '\n') {
            *s = ' ';
        }
        s++;
    }
    return s;
}

/* Blanks Lua comments in place (strings are kept: keys and values are searched in them). */
void halo_sweep_blank_comments(char *s)
{
    while (*s) {
        int level;
        size_t lo;
        if (s[0] == '-' && s[1] == '-') {
            s[0] = s[1] = ' ';
            s += 2;
            if ((lo = long_open(s, &level)) > 0) {
                memset(s, ' ', lo);
                s = long_close(s + lo, level, true);
            } else {
                while (*s && *s != '\n') {
                    *s++ = ' ';
                }
            }
        } else if (*s == '"' || *s == '\'') {
            char q = *s++;
            while (*s && *s != q && *s != '\n') {
                s += (s[0] == '\\' && s[1]) ? 2 : 1;
            }
            s += *s == q;
        } else if ((lo = long_open(s, &level)) > 0) {
            s = long_close(s + lo, level, false);
        } else {
            s++;
        }
    }
}

static const char *skip_sp(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
        s++;
    }
    return s;
}

/* Next place at or after from where key k is assigned ("k =" or "["k"] ="), or the string
 * literal v (component "\"v"); NULL when none. */
static const char *find_comp(const char *code, const char *from, const char *comp)
{
    bool lit = comp[0] == '"';
    const char *k = lit ? comp + 1 : comp;
    size_t kl = strlen(k);
    if (kl == 0) {
        return NULL;
    }
    for (const char *q = strstr(from, k); q != NULL; q = strstr(q + 1, k)) {
        char before = q > code ? q[-1] : ' ';
        char after = q[kl];
        if (before == '"' || before == '\'') {
            if (after != before) {
                continue;
            }
            if (lit) {
                return q - 1;
            }
            const char *b = q - 1;
            while (b > code && (b[-1] == ' ' || b[-1] == '\t')) {
                b--;
            }
            if (b == code || b[-1] != '[') {
                continue;
            }
            const char *a = skip_sp(q + kl + 1);
            if (*a != ']') {
                continue;
            }
            a = skip_sp(a + 1);
            if (a[0] == '=' && a[1] != '=') {
                return q;
            }
        } else if (!lit && !ident_char(before) && !ident_char(after) && before != '.') {
            const char *a = skip_sp(q + kl);
            if (a[0] == '=' && a[1] != '=') {
                return q;
            }
        }
    }
    return NULL;
}

/* The 1-based line of the deepest component of p found in order, 0 when not even the first;
 * depth (when not NULL) gets how many of the key and literal components were found. */
int halo_sweep_find_line(const halo_sweep_ctx *c, const halo_sweep_fpath *p, int *depth)
{
    int found_n = 0;
    if (depth != NULL) {
        *depth = 0;
    }
    if (c->code == NULL) {
        return 0;
    }
    const char *pos = c->code, *found = NULL;
    int skip = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->c[i][0] == '[') {
            skip = atoi(p->c[i] + 1);
            continue;
        }
        const char *hit = NULL, *from = pos;
        for (int k = 0; k <= skip; k++) {
            hit = find_comp(c->code, from, p->c[i]);
            if (hit == NULL) {
                break;
            }
            from = hit + 1;
        }
        skip = 0;
        if (hit == NULL) {
            break;
        }
        pos = found = hit;
        found_n++;
    }
    if (depth != NULL) {
        *depth = found_n;
    }
    if (found == NULL) {
        return 0;
    }
    int line = 1;
    for (const char *s = c->code; s < found; s++) {
        line += *s == '\n';
    }
    return line;
}

static int find_line(const halo_sweep_ctx *c, const halo_sweep_fpath *p)
{
    return halo_sweep_find_line(c, p, NULL);
}

/* The path as shown: keys joined by '.', ["a.b"] for names that are not identifiers, [i]. */
static void path_text(const halo_sweep_fpath *p, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->n && n + 1 < size; i++) {
        const char *s = p->c[i];
        int w;
        if (s[0] == '"') {
            continue;
        } else if (s[0] == '[') {
            w = snprintf(buf + n, size - n, "[%d]", atoi(s + 1) + 1);
        } else if (halo_sweep_is_ident(s)) {
            w = snprintf(buf + n, size - n, "%s%s", n ? "." : "", s);
        } else {
            w = snprintf(buf + n, size - n, "[\"%s\"]", s);
        }
        n += w > 0 ? (size_t)w : 0;
        if (n >= size) {
            n = size - 1;
        }
    }
}

/* Sets the HALO_EINPUT error "FILE:LINE: field PATH: what". */
int halo_sweep_ferr(const halo_sweep_ctx *c, const halo_sweep_fpath *p, const char *fmt, ...)
{
    char what[1024], name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    path_text(p, name, sizeof name);
    int line = find_line(c, p);
    char where[1200];
    if (line > 0) {
        snprintf(where, sizeof where, "%s:%d", c->path, line);
    } else {
        snprintf(where, sizeof where, "%s", c->path);
    }
    if (name[0]) {
        return halo_errorf(HALO_EINPUT, "%s: field %s: %s", where, name, what);
    }
    return halo_errorf(HALO_EINPUT, "%s: %s", where, what);
}

/* Adds the line to a loader message "FILE: field a.b[2]: what" when the field is found. */
int halo_sweep_loader_error(const halo_sweep_ctx *c, int rc)
{
    const char *msg = halo_errmsg();
    size_t pl = strlen(c->path);
    if (strncmp(msg, c->path, pl) != 0 || strncmp(msg + pl, ": field ", 8) != 0) {
        return rc;
    }
    const char *f = msg + pl + 8, *end = strstr(f, ": ");
    if (end == NULL || end - f >= 400) {
        return rc;
    }
    char keys[400];
    snprintf(keys, sizeof keys, "%.*s", (int)(end - f), f);
    halo_sweep_fpath p = {{NULL}, 0};
    char *save = NULL;
    for (char *t = strtok_r(keys, ".", &save); t != NULL && p.n < 8;
         t = strtok_r(NULL, ".", &save)) {
        char *br = strchr(t, '[');
        if (br != NULL) {
            *br = '\0';
        }
        if (t[0]) {
            p.c[p.n++] = t;
        }
    }
    int line = find_line(c, &p);
    if (line <= 0) {
        return rc;
    }
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", msg + pl);
    return halo_errorf(rc, "%s:%d%s", c->path, line, copy);
}

/* Error about a setting, located where it is most likely written: SECTION.KEY, then the sweep
 * axis, then the points; else at the line of its section, else the file alone. */
int halo_sweep_kv_err(const halo_sweep_ctx *c, const char *key, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char sec[32];
    const char *dot = strchr(key, '.');
    snprintf(sec, sizeof sec, "%.*s", dot ? (int)(dot - key) : 0, key);
    const char *rest = dot ? dot + 1 : key;
    halo_sweep_fpath tries[3] = {fp2(sec, rest), fp2("sweep", key), fp2("points", key)};
    if (strncmp(rest, "set.", 4) == 0) {
        tries[0] = fp3(sec, "set", rest + 4);
    }
    int fallback = 0;
    for (int i = 0; i < 3; i++) {
        int depth;
        int line = halo_sweep_find_line(c, &tries[i], &depth);
        if (depth == tries[i].n) {
            return halo_errorf(HALO_EINPUT, "%s:%d: field %s: %s", c->path, line, key, what);
        }
        if (i == 0 && depth > 0) {
            fallback = line;
        }
    }
    if (fallback > 0) {
        return halo_errorf(HALO_EINPUT, "%s:%d: field %s: %s", c->path, fallback, key, what);
    }
    return halo_errorf(HALO_EINPUT, "%s: field %s: %s", c->path, key, what);
}
