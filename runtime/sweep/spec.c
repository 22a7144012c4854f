/* Experiment files: loaded by the policy sandbox's data loader, the quick table merged in,
 * every field checked (errors carry the file's line), and the points expanded. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "policy/policy.h"
#include "sim/profile.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* Most points an experiment may expand to. */
#define MAX_POINTS 100000

#define M_SIM HALO_SWEEP_M(HALO_SWEEP_SIM)
#define M_RUN HALO_SWEEP_M(HALO_SWEEP_RUN)
#define M_TRACE HALO_SWEEP_M(HALO_SWEEP_TRACE)
#define M_PART HALO_SWEEP_M(HALO_SWEEP_PARTITION)

const halo_sweep_runkey halo_sweep_runkeys[] = {
    {"policy", "--policy", M_SIM | M_RUN | M_PART},
    {"set", NULL, M_SIM | M_RUN | M_PART},
    {"epochs", "--epochs", M_SIM | M_RUN | M_TRACE | M_PART},
    {"batch", "--batch", M_SIM | M_RUN | M_TRACE | M_PART},
    {"batching", "--batching", M_SIM | M_RUN | M_PART},
    {"fanouts", "--fanouts", M_SIM | M_RUN | M_TRACE | M_PART},
    {"hidden", "--hidden", M_SIM | M_RUN | M_PART},
    {"seed", "--seed", M_SIM | M_RUN | M_TRACE | M_PART},
    {"depth", "--depth", M_SIM | M_RUN | M_PART},
    {"sampler_threads", "--sampler-threads", M_SIM | M_RUN | M_PART},
    {"netem", "--netem", M_SIM | M_RUN},
    {"cluster", NULL, M_SIM},
    {"machines", NULL, M_SIM},
    {"trainers", NULL, M_SIM},
    {"lr", "--lr", M_RUN},
    {"dropout", "--dropout", M_RUN},
    {"weight_decay", "--weight-decay", M_RUN},
    {"device", "--device", M_RUN},
    {"threads", "--threads", M_RUN},
    {"eval", "--eval", M_RUN},
    {"eval_fanouts", "--eval-fanouts", M_RUN},
    {"eval_every", "--eval-every", M_RUN},
    {"eval_batch", "--eval-batch", M_RUN},
    {"check", "--check", M_RUN},
    {NULL, NULL, 0},
};

const char *const halo_sweep_tracekeys[] = {"policy", "policies",    "capacity",  "capacities",
                                            "set",    "max_batches", "row_bytes", NULL};

const char *const halo_sweep_all_policies[] = {"belady", "pagraph", "vip",        "fifo",
                                               "lru",    "lfu",     "massivegnn", NULL};

static const char *const top_fields[] = {"name",   "title",     "caption", "paper",   "mode",
                                         "graph",  "partition", "run",     "trace",   "sweep",
                                         "points", "repeat",    "repeats", "quick",   "measures",
                                         "derive", "plot",      "plots",   "timeout", NULL};

static const char *const mode_names[] = {"sim", "run", "trace", "partition", NULL};

static const char *const plot_kinds[] = {"line", "bars", "stacked", "heatmap", "scatter", NULL};

static const char *const plot_fields[] = {"kind",   "x",      "y",    "z",    "series",   "title",
                                          "xlabel", "ylabel", "logx", "logy", "diagonal", NULL};

static const char *const derive_ops[] = {"baseline/value", "value/baseline", "improvement",
                                         "difference", NULL};

static const char *const sections[] = {"graph", "partition", "run", "trace", NULL};

/* ---- small helpers shared by the module ---- */

const char *halo_sweep_mode_name(int mode)
{
    return mode >= 0 && mode <= HALO_SWEEP_PARTITION ? mode_names[mode] : "?";
}

const char *halo_sweep_get(const halo_sweep_point *p, const char *key)
{
    for (int i = 0; i < p->nkv; i++) {
        if (strcmp(p->kv[i].key, key) == 0) {
            return p->kv[i].val;
        }
    }
    return NULL;
}

uint64_t halo_sweep_hash(uint64_t h, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s;; c++) {
        h ^= *c;
        h *= 0x100000001b3ull;
        if (*c == '\0') {
            break;
        }
    }
    return h;
}

void halo_sweep_hex(uint64_t h, char *out)
{
    /* splitmix64's finaliser spreads FNV's weak low bits */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void halo_sweep_fmt_num(double v, char *buf, size_t size)
{
    if (isnan(v)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

void halo_sweep_label(const char *val, char *buf, size_t size)
{
    if (val[0] == '\0') {
        snprintf(buf, size, "(default)");
        return;
    }
    const char *slash = strrchr(val, '/');
    size_t n = strlen(val);
    if (n > 4 && strcmp(val + n - 4, ".lua") == 0) {
        const char *b = slash ? slash + 1 : val;
        snprintf(buf, size, "%.*s", (int)(val + n - 4 - b), b);
        return;
    }
    snprintf(buf, size, "%s", val);
}

bool halo_sweep_is_num(const char *s, double *out)
{
    if (s == NULL || s[0] == '\0' || isspace((unsigned char)s[0])) {
        return false;
    }
    char *end;
    double v = strtod(s, &end);
    if (*end != '\0' || !isfinite(v)) {
        return false;
    }
    if (out != NULL) {
        *out = v;
    }
    return true;
}

static bool in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], s) == 0) {
            return true;
        }
    }
    return false;
}

/* "a, b, c" of a NULL-terminated list, for messages. */
static void list_text(const char *const *list, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; list[i] != NULL && n + 1 < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", list[i]);
        n += w > 0 ? (size_t)w : 0;
    }
}

static const halo_sweep_runkey *runkey(const char *name)
{
    for (const halo_sweep_runkey *k = halo_sweep_runkeys; k->name != NULL; k++) {
        if (strcmp(k->name, name) == 0) {
            return k;
        }
    }
    return NULL;
}

/* ---- where a field is in the file ---- */

/* A field's path: keys, "[i]" list positions (i-th entry: the key after it is searched i
 * times), and "\"value" components that match a string literal. */
typedef struct fpath {
    const char *c[8]; /* components */
    int n;            /* count */
} fpath;

/* Loading state. */
typedef struct ctx {
    const char *path; /* experiment file */
    char *code;       /* its text with comments blanked (NULL when unreadable) */
} ctx;

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static bool is_ident(const char *s)
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
static void blank_comments(char *s)
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
static int find_line_depth(const ctx *c, const fpath *p, int *depth)
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

static int find_line(const ctx *c, const fpath *p)
{
    return find_line_depth(c, p, NULL);
}

/* The path as shown: keys joined by '.', ["a.b"] for names that are not identifiers, [i]. */
static void path_text(const fpath *p, char *buf, size_t size)
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
        } else if (is_ident(s)) {
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
static int ferr(const ctx *c, const fpath *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int ferr(const ctx *c, const fpath *p, const char *fmt, ...)
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

static fpath fp1(const char *a)
{
    fpath p = {{a}, 1};
    return p;
}

static fpath fp2(const char *a, const char *b)
{
    fpath p = {{a, b}, 2};
    return p;
}

static fpath fp3(const char *a, const char *b, const char *c)
{
    fpath p = {{a, b, c}, 3};
    return p;
}

/* An index component "[i]" in buf. */
static const char *idx_comp(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "[%zu", i);
    return buf;
}

/* A literal component "\"s" in buf. */
static const char *lit_comp(char *buf, size_t size, const char *s)
{
    snprintf(buf, size, "\"%s", s);
    return buf;
}

/* Adds the line to a loader message "FILE: field a.b[2]: what" when the field is found. */
static int loader_error(const ctx *c, int rc)
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
    fpath p = {{NULL}, 0};
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

/* ---- JSON trees: clone, deep merge ---- */

static halo_json *json_clone(const halo_json *v)
{
    halo_json *c = HALO_NEW(halo_json, 1);
    c->type = v->type;
    c->boolean = v->boolean;
    c->number = v->number;
    c->string = v->string ? halo_strdup(v->string) : NULL;
    c->len = v->len;
    if (v->type == HALO_JSON_ARRAY || v->type == HALO_JSON_OBJECT) {
        c->items = HALO_NEW(halo_json *, v->len + 1);
        if (v->keys != NULL) {
            c->keys = HALO_NEW(char *, v->len + 1);
        }
        for (size_t i = 0; i < v->len; i++) {
            c->items[i] = json_clone(v->items[i]);
            if (v->keys != NULL) {
                c->keys[i] = halo_strdup(v->keys[i]);
            }
        }
    }
    return c;
}

/* Merges src over dst: objects key by key (recursively), anything else replaced. */
static void json_merge(halo_json *dst, const halo_json *src)
{
    for (size_t i = 0; i < src->len; i++) {
        size_t j = 0;
        while (j < dst->len && strcmp(dst->keys[j], src->keys[i]) != 0) {
            j++;
        }
        if (j < dst->len) {
            if (dst->items[j]->type == HALO_JSON_OBJECT &&
                src->items[i]->type == HALO_JSON_OBJECT) {
                json_merge(dst->items[j], src->items[i]);
            } else {
                halo_json_free(dst->items[j]);
                dst->items[j] = json_clone(src->items[i]);
            }
            continue;
        }
        dst->items = halo_realloc(dst->items, (dst->len + 1) * sizeof *dst->items);
        dst->keys = halo_realloc(dst->keys, (dst->len + 1) * sizeof *dst->keys);
        dst->items[dst->len] = json_clone(src->items[i]);
        dst->keys[dst->len] = halo_strdup(src->keys[i]);
        dst->len++;
    }
}

/* ---- values ---- */

/* Canonical text of a scalar, or of a list of scalars (comma-joined); -1 for anything else. */
static int canon(const halo_json *v, halo_sb *sb, int *type)
{
    char num[40];
    switch (v->type) {
    case HALO_JSON_STRING:
        halo_sb_puts(sb, v->string);
        *type = HALO_SWEEP_STR;
        return 0;
    case HALO_JSON_NUMBER:
        halo_sweep_fmt_num(v->number, num, sizeof num);
        halo_sb_puts(sb, num);
        *type = HALO_SWEEP_NUM;
        return 0;
    case HALO_JSON_BOOL:
        halo_sb_puts(sb, v->boolean ? "true" : "false");
        *type = HALO_SWEEP_BOOL;
        return 0;
    case HALO_JSON_ARRAY:
        if (v->len == 0) {
            return -1;
        }
        for (size_t i = 0; i < v->len; i++) {
            int t;
            if (v->items[i]->type == HALO_JSON_ARRAY || v->items[i]->type == HALO_JSON_OBJECT ||
                canon(v->items[i], sb, &t) < 0) {
                return -1;
            }
            if (i + 1 < v->len) {
                halo_sb_putc(sb, ',');
            }
        }
        *type = HALO_SWEEP_STR;
        return 0;
    default: return -1;
    }
}

static const char *type_name(const halo_json *v)
{
    switch (v->type) {
    case HALO_JSON_STRING: return "a string";
    case HALO_JSON_NUMBER: return "a number";
    case HALO_JSON_BOOL: return "a boolean";
    case HALO_JSON_ARRAY: return "a list";
    case HALO_JSON_OBJECT: return "a table";
    default: return "nothing";
    }
}

/* A growable list of settings. */
typedef struct kvlist {
    halo_sweep_kv *v; /* settings */
    int n;            /* used */
    int cap;          /* allocated */
} kvlist;

static void kv_set(kvlist *l, const char *key, const char *val, int type)
{
    for (int i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            halo_free(l->v[i].val);
            l->v[i].val = halo_strdup(val);
            l->v[i].type = type;
            return;
        }
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = halo_realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n].key = halo_strdup(key);
    l->v[l->n].val = halo_strdup(val);
    l->v[l->n].type = type;
    l->n++;
}

static void kv_del(kvlist *l, const char *key)
{
    for (int i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            halo_free(l->v[i].key);
            halo_free(l->v[i].val);
            l->v[i] = l->v[--l->n];
            return;
        }
    }
}

static const halo_sweep_kv *kv_find(const kvlist *l, const char *key)
{
    for (int i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            return &l->v[i];
        }
    }
    return NULL;
}

static void kv_free(kvlist *l)
{
    for (int i = 0; i < l->n; i++) {
        halo_free(l->v[i].key);
        halo_free(l->v[i].val);
    }
    halo_free(l->v);
    memset(l, 0, sizeof *l);
}

static void kv_copy(kvlist *dst, const kvlist *src)
{
    memset(dst, 0, sizeof *dst);
    for (int i = 0; i < src->n; i++) {
        kv_set(dst, src->v[i].key, src->v[i].val, src->v[i].type);
    }
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const halo_sweep_kv *)a)->key, ((const halo_sweep_kv *)b)->key);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- checks of the fields ---- */

/* A string field (NULL when absent); wrong types are errors. */
static int get_str(const ctx *c, const halo_json *obj, const char *key, const fpath *where,
                   const char **out)
{
    *out = NULL;
    const halo_json *v = halo_json_get(obj, key);
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_STRING) {
        return ferr(c, where, "%s, expected a string", type_name(v));
    }
    *out = v->string;
    return 0;
}

static int get_bool(const ctx *c, const halo_json *obj, const char *key, const fpath *where,
                    bool *out)
{
    const halo_json *v = halo_json_get(obj, key);
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_BOOL) {
        return ferr(c, where, "%s, expected true or false", type_name(v));
    }
    *out = v->boolean;
    return 0;
}

/* Whether an axis name ("run.policy", "run.set.delta") names a setting of a section. */
static int check_axis_name(const ctx *c, const fpath *where, const char *name)
{
    const char *dot = strchr(name, '.');
    char sec[32];
    if (dot == NULL || dot == name || (size_t)(dot - name) >= sizeof sec || dot[1] == '\0') {
        return ferr(c, where,
                    "\"%s\" is not SECTION.KEY (sections: graph, partition, run, "
                    "trace)",
                    name);
    }
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - name), name);
    if (!in_list(sec, sections)) {
        return ferr(c, where, "\"%s\": unknown section \"%s\" (graph, partition, run, trace)", name,
                    sec);
    }
    const char *key = dot + 1;
    if (strncmp(key, "set.", 4) == 0 && key[4] != '\0' && strcmp(sec, "graph") != 0) {
        return 0;
    }
    if (strcmp(sec, "run") == 0) {
        const halo_sweep_runkey *k = runkey(key);
        if (k == NULL || strcmp(key, "set") == 0) {
            return ferr(c, where, "\"%s\": unknown run key \"%s\" (see docs/experiments.md)", name,
                        key);
        }
    } else if (strcmp(sec, "trace") == 0) {
        if (strcmp(key, "capacities") == 0 || strcmp(key, "policies") == 0) {
            return ferr(c, where, "sweep over trace.capacity or trace.policy (one value each)");
        }
        if (!in_list(key, halo_sweep_tracekeys) || strcmp(key, "set") == 0) {
            char l[256];
            list_text(halo_sweep_tracekeys, l, sizeof l);
            return ferr(c, where, "\"%s\": unknown trace key \"%s\" (%s)", name, key, l);
        }
    }
    return 0;
}

/* Flattens one section into defaults ("SECTION.KEY" = value, "SECTION.set.K" = value). */
static int flatten_section(const ctx *c, const halo_json *root, const char *sec, int mode,
                           kvlist *out)
{
    const halo_json *s = halo_json_get(root, sec);
    if (s == NULL) {
        return 0;
    }
    if (s->type != HALO_JSON_OBJECT) {
        fpath p = fp1(sec);
        return ferr(c, &p, "%s, expected a table of settings", type_name(s));
    }
    for (size_t i = 0; i < s->len; i++) {
        const char *k = s->keys[i];
        const halo_json *v = s->items[i];
        fpath p = fp2(sec, k);
        if (strcmp(sec, "run") == 0 && runkey(k) == NULL) {
            return ferr(c, &p, "unknown run key (see docs/experiments.md for the keys)");
        }
        if (strcmp(sec, "trace") == 0 && !in_list(k, halo_sweep_tracekeys)) {
            char l[256];
            list_text(halo_sweep_tracekeys, l, sizeof l);
            return ferr(c, &p, "unknown field (trace takes: %s)", l);
        }
        if (strcmp(k, "set") == 0 && strcmp(sec, "graph") != 0) {
            if (v->type != HALO_JSON_OBJECT) {
                return ferr(c, &p, "%s, expected a table of NAME = VALUE", type_name(v));
            }
            for (size_t j = 0; j < v->len; j++) {
                fpath q = fp3(sec, "set", v->keys[j]);
                halo_sb sb;
                halo_sb_init(&sb);
                int t;
                if (canon(v->items[j], &sb, &t) < 0) {
                    halo_sb_free(&sb);
                    return ferr(c, &q, "%s, expected a number, a string or a boolean",
                                type_name(v->items[j]));
                }
                char key[600];
                snprintf(key, sizeof key, "%s.set.%s", sec, v->keys[j]);
                kv_set(out, key, sb.buf, t);
                halo_sb_free(&sb);
            }
            continue;
        }
        halo_sb sb;
        halo_sb_init(&sb);
        int t;
        if (canon(v, &sb, &t) < 0) {
            halo_sb_free(&sb);
            return ferr(c, &p, "%s, expected a number, a string, a boolean or a list of them",
                        type_name(v));
        }
        char key[600];
        snprintf(key, sizeof key, "%s.%s", sec, k);
        kv_set(out, key, sb.buf, t);
        halo_sb_free(&sb);
    }
    (void)mode;
    return 0;
}

/* An axis: its name and values. */
typedef struct axis {
    char *name;  /* dotted name */
    char **val;  /* values */
    int *type;   /* their kinds */
    int n;       /* values */
    bool listed; /* from sweep (or trace sugar), not only from points */
} axis;

static int cmp_axis(const void *a, const void *b)
{
    return strcmp(((const axis *)a)->name, ((const axis *)b)->name);
}

static void axes_free(axis *ax, int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < ax[i].n; j++) {
            halo_free(ax[i].val[j]);
        }
        halo_free(ax[i].val);
        halo_free(ax[i].type);
        halo_free(ax[i].name);
    }
    halo_free(ax);
}

static int axis_find(const axis *ax, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(ax[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* Adds an axis with the values of a list (a single scalar is a list of one). */
static int axis_add(const ctx *c, const fpath *where, axis **ax, int *n, const char *name,
                    const halo_json *v)
{
    if (axis_find(*ax, *n, name) >= 0) {
        return 0;
    }
    *ax = halo_realloc(*ax, (size_t)(*n + 1) * sizeof **ax);
    axis *a = &(*ax)[(*n)++];
    memset(a, 0, sizeof *a);
    a->name = halo_strdup(name);
    a->listed = true;
    size_t cnt = v->type == HALO_JSON_ARRAY ? v->len : 1;
    if (cnt == 0) {
        return ferr(c, where, "an empty list of values");
    }
    a->val = HALO_NEW(char *, cnt);
    a->type = HALO_NEW(int, cnt);
    for (size_t i = 0; i < cnt; i++) {
        const halo_json *x = v->type == HALO_JSON_ARRAY ? v->items[i] : v;
        halo_sb sb;
        halo_sb_init(&sb);
        if (x->type == HALO_JSON_OBJECT || canon(x, &sb, &a->type[i]) < 0) {
            halo_sb_free(&sb);
            return ferr(c, where,
                        "value %zu is %s, expected a number, a string, a boolean or "
                        "a list of them",
                        i + 1, type_name(x));
        }
        a->val[i] = halo_strdup(sb.buf);
        a->n++;
        halo_sb_free(&sb);
    }
    return 0;
}

/* A string list field: a list of strings, or one string. */
static int str_list(const ctx *c, const fpath *where, const halo_json *v, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (v->type == HALO_JSON_STRING) {
        *out = HALO_NEW(char *, 1);
        (*out)[0] = halo_strdup(v->string);
        *n = 1;
        return 0;
    }
    if (v->type != HALO_JSON_ARRAY || v->len == 0) {
        return ferr(c, where, "%s, expected a list of names", type_name(v));
    }
    *out = HALO_NEW(char *, v->len);
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i]->type != HALO_JSON_STRING) {
            char ib[24];
            fpath p = *where;
            p.c[p.n++] = idx_comp(ib, sizeof ib, i);
            return ferr(c, &p, "%s, expected a name", type_name(v->items[i]));
        }
        (*out)[i] = halo_strdup(v->items[i]->string);
        (*n)++;
    }
    return 0;
}

/* ---- the loaded experiment ---- */

void halo_sweep_free(halo_sweep_exp *e)
{
    if (e == NULL) {
        return;
    }
    halo_free(e->path);
    halo_free(e->name);
    halo_free(e->title);
    halo_free(e->caption);
    halo_free(e->paper);
    for (int i = 0; i < e->nmeasures; i++) {
        halo_free(e->measures[i]);
    }
    halo_free(e->measures);
    for (int i = 0; i < e->naxes; i++) {
        halo_free(e->axes[i]);
    }
    halo_free(e->axes);
    for (int i = 0; i < e->npts; i++) {
        for (int j = 0; j < e->pts[i].nkv; j++) {
            halo_free(e->pts[i].kv[j].key);
            halo_free(e->pts[i].kv[j].val);
        }
        halo_free(e->pts[i].kv);
    }
    halo_free(e->pts);
    for (int i = 0; i < e->nderives; i++) {
        halo_sweep_derive *d = &e->derives[i];
        halo_free(d->name);
        halo_free(d->of);
        halo_free(d->op);
        for (int j = 0; j < d->nbase; j++) {
            halo_free(d->base[j].key);
            halo_free(d->base[j].val);
        }
        halo_free(d->base);
        for (int j = 0; j < d->nby; j++) {
            halo_free(d->by[j]);
        }
        halo_free(d->by);
    }
    halo_free(e->derives);
    for (int i = 0; i < e->nplots; i++) {
        halo_sweep_plot *p = &e->plots[i];
        halo_free(p->x);
        for (int j = 0; j < p->ny; j++) {
            halo_free(p->y[j]);
        }
        halo_free(p->y);
        halo_free(p->z);
        halo_free(p->series);
        halo_free(p->title);
        halo_free(p->xlabel);
        halo_free(p->ylabel);
    }
    halo_free(e->plots);
    halo_free(e);
}

static char *dup_or(const char *s, const char *dflt)
{
    return halo_strdup(s != NULL ? s : dflt);
}

/* Whether a column name is an axis, a measure or a derived column (or rep, seconds). */
static bool is_column(const halo_sweep_exp *e, const char *name)
{
    for (int i = 0; i < e->naxes; i++) {
        if (strcmp(e->axes[i], name) == 0) {
            return true;
        }
    }
    for (int i = 0; i < e->nmeasures; i++) {
        if (strcmp(e->measures[i], name) == 0) {
            return true;
        }
    }
    for (int i = 0; i < e->nderives; i++) {
        if (strcmp(e->derives[i].name, name) == 0) {
            return true;
        }
    }
    return strcmp(name, "reps") == 0;
}

static bool is_axis(const halo_sweep_exp *e, const char *name)
{
    for (int i = 0; i < e->naxes; i++) {
        if (strcmp(e->axes[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Reads the measures list. */
static int load_measures(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "measures");
    fpath p = fp1("measures");
    if (v == NULL) {
        return ferr(c, &p, "missing (the columns to measure, e.g. { \"epoch_s\" })");
    }
    HALO_CHECK(str_list(c, &p, v, &e->measures, &e->nmeasures));
    for (int i = 0; i < e->nmeasures; i++) {
        char ib[24], lb[128];
        fpath q = fp3("measures", idx_comp(ib, sizeof ib, (size_t)i),
                      lit_comp(lb, sizeof lb, e->measures[i]));
        unsigned modes = 0;
        int k = halo_sweep_measure_known(e->measures[i], e->mode, &modes);
        if (k == 0) {
            return ferr(c, &q, "unknown measure \"%s\" (see docs/experiments.md)", e->measures[i]);
        }
        if (k < 0) {
            char ml[64] = "";
            for (int m = 0; m <= HALO_SWEEP_PARTITION; m++) {
                if (modes & HALO_SWEEP_M(m)) {
                    size_t l = strlen(ml);
                    snprintf(ml + l, sizeof ml - l, "%s%s", l ? ", " : "", mode_names[m]);
                }
            }
            return ferr(c, &q, "\"%s\" is not measured in mode \"%s\" (only in: %s)",
                        e->measures[i], mode_names[e->mode], ml);
        }
        for (int j = 0; j < i; j++) {
            if (strcmp(e->measures[j], e->measures[i]) == 0) {
                return ferr(c, &q, "\"%s\" is listed twice", e->measures[i]);
            }
        }
    }
    return 0;
}

/* Reads the derive table (needs axes and measures). */
static int load_derives(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "derive");
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_OBJECT) {
        fpath p = fp1("derive");
        return ferr(c, &p, "%s, expected a table NAME = { of = ..., baseline = { ... } }",
                    type_name(v));
    }
    e->derives = HALO_NEW(halo_sweep_derive, v->len + 1);
    for (size_t i = 0; i < v->len; i++) {
        const char *name = v->keys[i];
        const halo_json *d = v->items[i];
        fpath p = fp2("derive", name);
        if (!is_ident(name)) {
            return ferr(c, &p, "a derived column's name is letters, digits and _");
        }
        if (is_column(e, name)) {
            return ferr(c, &p, "\"%s\" is already a measure or an axis", name);
        }
        if (d->type != HALO_JSON_OBJECT) {
            return ferr(c, &p,
                        "%s, expected { of = ..., baseline = { ... }, by = { ... }, "
                        "op = ... }",
                        type_name(d));
        }
        halo_sweep_derive *dv = &e->derives[e->nderives++];
        dv->name = halo_strdup(name);
        static const char *const fields[] = {"of", "baseline", "by", "op", NULL};
        for (size_t j = 0; j < d->len; j++) {
            if (!in_list(d->keys[j], fields)) {
                fpath q = fp3("derive", name, d->keys[j]);
                return ferr(c, &q, "unknown field (derive takes: of, baseline, by, op)");
            }
        }
        const char *of = NULL, *op = NULL;
        fpath q = fp3("derive", name, "of");
        HALO_CHECK(get_str(c, d, "of", &q, &of));
        if (of == NULL) {
            return ferr(c, &q, "missing (the measure it is computed from)");
        }
        bool found = false;
        for (int m = 0; m < e->nmeasures; m++) {
            found = found || strcmp(e->measures[m], of) == 0;
        }
        if (!found) {
            return ferr(c, &q, "\"%s\" is not one of the measures", of);
        }
        dv->of = halo_strdup(of);
        q = fp3("derive", name, "op");
        HALO_CHECK(get_str(c, d, "op", &q, &op));
        if (op != NULL && !in_list(op, derive_ops)) {
            char l[128];
            list_text(derive_ops, l, sizeof l);
            return ferr(c, &q, "\"%s\" is not one of %s", op, l);
        }
        dv->op = halo_strdup(op != NULL ? op : "baseline/value");
        const halo_json *b = halo_json_get(d, "baseline");
        q = fp3("derive", name, "baseline");
        if (b == NULL || b->type != HALO_JSON_OBJECT || b->len == 0) {
            return ferr(c, &q, "%s, expected a table of axis values { [\"run.policy\"] = ... }",
                        b == NULL ? "missing" : type_name(b));
        }
        dv->base = HALO_NEW(halo_sweep_kv, b->len);
        for (size_t j = 0; j < b->len; j++) {
            fpath r = {{"derive", name, "baseline", b->keys[j]}, 4};
            if (!is_axis(e, b->keys[j])) {
                return ferr(c, &r, "\"%s\" is not an axis of the sweep", b->keys[j]);
            }
            halo_sb sb;
            halo_sb_init(&sb);
            int t;
            if (canon(b->items[j], &sb, &t) < 0) {
                halo_sb_free(&sb);
                return ferr(c, &r, "%s, expected a value of the axis", type_name(b->items[j]));
            }
            dv->base[dv->nbase].key = halo_strdup(b->keys[j]);
            dv->base[dv->nbase].val = halo_strdup(sb.buf);
            dv->base[dv->nbase].type = t;
            dv->nbase++;
            halo_sb_free(&sb);
        }
        const halo_json *by = halo_json_get(d, "by");
        if (by != NULL) {
            q = fp3("derive", name, "by");
            HALO_CHECK(str_list(c, &q, by, &dv->by, &dv->nby));
            for (int j = 0; j < dv->nby; j++) {
                if (!is_axis(e, dv->by[j])) {
                    return ferr(c, &q, "\"%s\" is not an axis of the sweep", dv->by[j]);
                }
            }
        } else {
            /* every axis the baseline does not fix */
            dv->by = HALO_NEW(char *, e->naxes + 1);
            for (int a = 0; a < e->naxes; a++) {
                bool fixed = false;
                for (int j = 0; j < dv->nbase; j++) {
                    fixed = fixed || strcmp(dv->base[j].key, e->axes[a]) == 0;
                }
                if (!fixed) {
                    dv->by[dv->nby++] = halo_strdup(e->axes[a]);
                }
            }
        }
    }
    return 0;
}

/* Reads one plot table into pl. */
static int load_plot(const ctx *c, const halo_json *v, const char *top, size_t idx, bool listed,
                     halo_sweep_exp *e, halo_sweep_plot *pl)
{
    char ib[24];
    fpath base = fp1(top);
    if (listed) {
        base = fp2(top, idx_comp(ib, sizeof ib, idx));
    }
    if (v->type != HALO_JSON_OBJECT) {
        return ferr(c, &base, "%s, expected a table { kind = ..., x = ..., y = ... }",
                    type_name(v));
    }
#define FIELD(k) (base.c[base.n] = (k), base.n++, base)
#define UNFIELD() (base.n--)
    for (size_t j = 0; j < v->len; j++) {
        fpath q = FIELD(v->keys[j]);
        UNFIELD();
        if (!in_list(v->keys[j], plot_fields)) {
            char l[256];
            list_text(plot_fields, l, sizeof l);
            return ferr(c, &q, "unknown field (plot takes: %s)", l);
        }
    }
    const char *kind = NULL;
    fpath q = FIELD("kind");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "kind", &q, &kind));
    if (kind == NULL) {
        kind = "line";
    }
    int k = -1;
    for (int i = 0; plot_kinds[i] != NULL; i++) {
        if (strcmp(plot_kinds[i], kind) == 0) {
            k = i;
        }
    }
    if (k < 0) {
        char l[128];
        list_text(plot_kinds, l, sizeof l);
        return ferr(c, &q, "\"%s\" is not one of %s", kind, l);
    }
    pl->kind = k;
    const char *x = NULL, *z = NULL, *series = NULL, *s = NULL;
    q = FIELD("x");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "x", &q, &x));
    if (x == NULL) {
        return ferr(c, &q, "missing (the column on the x axis)");
    }
    if (!is_column(e, x)) {
        return ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column", x);
    }
    pl->x = halo_strdup(x);
    q = FIELD("y");
    UNFIELD();
    const halo_json *yv = halo_json_get(v, "y");
    if (yv == NULL) {
        return ferr(c, &q, "missing (the column on the y axis)");
    }
    HALO_CHECK(str_list(c, &q, yv, &pl->y, &pl->ny));
    for (int i = 0; i < pl->ny; i++) {
        if (!is_column(e, pl->y[i])) {
            return ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column", pl->y[i]);
        }
    }
    q = FIELD("series");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "series", &q, &series));
    if (series != NULL && !is_column(e, series)) {
        return ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column", series);
    }
    if (series != NULL && k == HALO_SWEEP_HEATMAP) {
        return ferr(c, &q, "a heatmap takes x, y and z, not a series");
    }
    pl->series = series ? halo_strdup(series) : NULL;
    q = FIELD("z");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "z", &q, &z));
    if (k == HALO_SWEEP_HEATMAP) {
        if (z == NULL) {
            return ferr(c, &q, "missing (a heatmap colours cells by the column z)");
        }
        if (!is_column(e, z)) {
            return ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column", z);
        }
        pl->z = halo_strdup(z);
    } else if (z != NULL) {
        return ferr(c, &q, "only a heatmap takes z");
    }
    if (pl->ny > 1 && k != HALO_SWEEP_STACKED && k != HALO_SWEEP_LINE) {
        q = FIELD("y");
        UNFIELD();
        return ferr(c, &q, "a list of columns is for kind stacked or line");
    }
    if (pl->ny > 1 && k == HALO_SWEEP_LINE && series != NULL) {
        q = FIELD("y");
        UNFIELD();
        return ferr(c, &q, "a line plot takes a list of y columns or a series, not both");
    }
    q = FIELD("title");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "title", &q, &s));
    pl->title = s ? halo_strdup(s) : NULL;
    q = FIELD("xlabel");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "xlabel", &q, &s));
    pl->xlabel = s ? halo_strdup(s) : NULL;
    q = FIELD("ylabel");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "ylabel", &q, &s));
    pl->ylabel = s ? halo_strdup(s) : NULL;
    q = FIELD("logx");
    UNFIELD();
    HALO_CHECK(get_bool(c, v, "logx", &q, &pl->logx));
    q = FIELD("logy");
    UNFIELD();
    HALO_CHECK(get_bool(c, v, "logy", &q, &pl->logy));
    q = FIELD("diagonal");
    UNFIELD();
    HALO_CHECK(get_bool(c, v, "diagonal", &q, &pl->diagonal));
    if (pl->diagonal && k != HALO_SWEEP_SCATTER) {
        return ferr(c, &q, "only a scatter plot takes diagonal");
    }
#undef FIELD
#undef UNFIELD
    return 0;
}

static int load_plots(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *one = halo_json_get(root, "plot");
    const halo_json *many = halo_json_get(root, "plots");
    if (one != NULL && many != NULL) {
        fpath p = fp1("plots");
        return ferr(c, &p, "give plot or plots, not both");
    }
    if (one != NULL) {
        e->plots = HALO_NEW(halo_sweep_plot, 1);
        e->nplots = 1;
        return load_plot(c, one, "plot", 0, false, e, &e->plots[0]);
    }
    if (many != NULL) {
        if (many->type != HALO_JSON_ARRAY || many->len == 0) {
            fpath p = fp1("plots");
            return ferr(c, &p, "%s, expected a list of plot tables", type_name(many));
        }
        e->plots = HALO_NEW(halo_sweep_plot, many->len);
        for (size_t i = 0; i < many->len; i++) {
            e->nplots++;
            HALO_CHECK(load_plot(c, many->items[i], "plots", i, true, e, &e->plots[i]));
        }
    }
    return 0;
}

/* ---- settling a point: cluster, parts, cache keys ---- */

/* A loaded profile's shape (profiles are loaded once per path). */
typedef struct prof_seen {
    char path[1024]; /* resolved path */
    int machines;    /* its machines */
    int trainers;    /* its trainers per machine */
} prof_seen;

/* Expansion state. */
typedef struct expand {
    prof_seen *prof; /* profiles loaded so far */
    int nprof;       /* count */
} expand;

/* Error about a setting, located where it is most likely written: SECTION.KEY, then the sweep
 * axis, then the points; else at the line of its section, else the file alone. */
static int kv_err(const ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kv_err(const ctx *c, const char *key, const char *fmt, ...)
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
    fpath tries[3] = {fp2(sec, rest), fp2("sweep", key), fp2("points", key)};
    if (strncmp(rest, "set.", 4) == 0) {
        tries[0] = fp3(sec, "set", rest + 4);
    }
    int fallback = 0;
    for (int i = 0; i < 3; i++) {
        int depth;
        int line = find_line_depth(c, &tries[i], &depth);
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

/* A policy setting names a file that must exist: a path (with '/' or ending in .lua) as
 * given; trace policies may also be a name of policies/NAME.lua. */
static int check_policy(const ctx *c, const char *key, const char *val, bool names_ok)
{
    if (strchr(val, '/') != NULL || strstr(val, ".lua") != NULL || !names_ok) {
        if (!halo_path_exists(val)) {
            return kv_err(c, key, "policy file %s: no such file", val);
        }
        return 0;
    }
    char p[1200];
    snprintf(p, sizeof p, "policies/%s.lua", val);
    if (!halo_path_exists(p)) {
        snprintf(p, sizeof p, "%s/policies/%s.lua", HALO_ROOT, val);
        if (!halo_path_exists(p)) {
            return kv_err(c, key, "policy %s: neither a file nor policies/%s.lua", val, val);
        }
    }
    return 0;
}

/* A whole number >= 1 from a setting (0 when absent). */
static int kv_count(const ctx *c, const kvlist *l, const char *key, int *out)
{
    *out = 0;
    const halo_sweep_kv *v = kv_find(l, key);
    if (v == NULL) {
        return 0;
    }
    double d;
    if (!halo_sweep_is_num(v->val, &d) || d != floor(d) || d < 1 || d > 1e6) {
        return kv_err(c, key, "\"%s\", expected a whole number >= 1", v->val);
    }
    *out = (int)d;
    return 0;
}

/* Derives what a point's commands need from its settings: the cluster profile, the parts
 * (partition.parts, else machines x trainers), multilevel's machines, and checks the policy
 * files. The derived settings are added to l. */
static int settle(const ctx *c, expand *x, int mode, kvlist *l, halo_sweep_point *pt)
{
    int parts, machines, trainers;
    HALO_CHECK(kv_count(c, l, "partition.parts", &parts));
    HALO_CHECK(kv_count(c, l, "run.machines", &machines));
    HALO_CHECK(kv_count(c, l, "run.trainers", &trainers));
    const halo_sweep_kv *cl = kv_find(l, "run.cluster");
    pt->cluster[0] = '\0';
    if (cl != NULL && mode == HALO_SWEEP_SIM) {
        const char *v = cl->val;
        if (strchr(v, '/') != NULL || strstr(v, ".lua") != NULL) {
            snprintf(pt->cluster, sizeof pt->cluster, "%s", v);
        } else {
            snprintf(pt->cluster, sizeof pt->cluster, "experiments/clusters/%s.lua", v);
            if (!halo_path_exists(pt->cluster)) {
                snprintf(pt->cluster, sizeof pt->cluster, "%s/experiments/clusters/%s.lua",
                         HALO_ROOT, v);
            }
        }
        if (!halo_path_exists(pt->cluster)) {
            if (strcmp(pt->cluster, v) == 0) {
                return kv_err(c, "run.cluster", "cluster profile %s: no such file", v);
            }
            return kv_err(c, "run.cluster",
                          "cluster profile \"%s\": no such file "
                          "experiments/clusters/%s.lua",
                          v, v);
        }
        int k = 0;
        while (k < x->nprof && strcmp(x->prof[k].path, pt->cluster) != 0) {
            k++;
        }
        if (k == x->nprof) {
            halo_sim_profile *prof = HALO_NEW(halo_sim_profile, 1);
            int rc = halo_sim_profile_load(pt->cluster, prof);
            if (rc < 0) {
                char msg[1500];
                snprintf(msg, sizeof msg, "%s", halo_errmsg());
                halo_free(prof);
                return kv_err(c, "run.cluster", "%s", msg);
            }
            x->prof = halo_realloc(x->prof, (size_t)(x->nprof + 1) * sizeof *x->prof);
            snprintf(x->prof[k].path, sizeof x->prof[k].path, "%s", pt->cluster);
            x->prof[k].machines = prof->machines;
            x->prof[k].trainers = prof->trainers;
            x->nprof++;
            halo_free(prof);
        }
        if (trainers == 0) {
            trainers = x->prof[k].trainers;
        }
        if (machines == 0) {
            if (parts > 0) {
                if (parts % trainers != 0) {
                    return kv_err(c, "partition.parts",
                                  "%d parts are not a whole number of "
                                  "machines of %d trainers (set run.trainers or run.machines)",
                                  parts, trainers);
                }
                machines = parts / trainers;
            } else {
                machines = x->prof[k].machines;
            }
        }
    } else if (mode == HALO_SWEEP_SIM && (machines > 0 || trainers > 0)) {
        return kv_err(c, machines > 0 ? "run.machines" : "run.trainers",
                      "needs run.cluster (a simulation without a profile only counts)");
    }
    if (parts == 0 && (machines > 0 || trainers > 0)) {
        parts = (machines > 0 ? machines : 1) * (trainers > 0 ? trainers : 1);
    }
    if (parts == 0) {
        return kv_err(c, "partition.parts", "missing (the number of parts: ranks)");
    }
    if (mode == HALO_SWEEP_SIM && pt->cluster[0] && machines * trainers != parts) {
        return kv_err(c, "partition.parts", "%d parts, but %d machines x %d trainers = %d ranks",
                      parts, machines, trainers, machines * trainers);
    }
    pt->parts = parts;
    pt->machines = machines;
    pt->trainers = trainers;
    char num[32];
    snprintf(num, sizeof num, "%d", parts);
    kv_set(l, "partition.parts", num, HALO_SWEEP_NUM);
    const halo_sweep_kv *method = kv_find(l, "partition.method");
    if (method != NULL && strcmp(method->val, "multilevel") == 0 &&
        kv_find(l, "partition.machines") == NULL && machines > 0 && trainers > 0 &&
        machines * trainers == parts) {
        snprintf(num, sizeof num, "%d", machines);
        kv_set(l, "partition.machines", num, HALO_SWEEP_NUM);
        snprintf(num, sizeof num, "%d", trainers);
        kv_set(l, "partition.trainers_per_part", num, HALO_SWEEP_NUM);
    }
    const halo_sweep_kv *pol;
    if ((pol = kv_find(l, "run.policy")) != NULL && mode != HALO_SWEEP_TRACE) {
        HALO_CHECK(check_policy(c, "run.policy", pol->val, false));
    }
    if ((pol = kv_find(l, "partition.policy")) != NULL) {
        HALO_CHECK(check_policy(c, "partition.policy", pol->val, false));
    }
    if (mode == HALO_SWEEP_TRACE) {
        if ((pol = kv_find(l, "trace.policy")) == NULL) {
            return kv_err(c, "trace.policy",
                          "missing (trace mode replays a policy: "
                          "trace.policy, trace.policies or a sweep over trace.policy)");
        }
        HALO_CHECK(check_policy(c, "trace.policy", pol->val, true));
    }
    const halo_sweep_kv *g = kv_find(l, "graph.dir");
    if (g != NULL && !halo_is_dir(g->val)) {
        return kv_err(c, "graph.dir", "%s: no such graph directory", g->val);
    }
    /* cache keys and the point key */
    qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_kv);
    uint64_t gh = halo_sweep_hash(HALO_SWEEP_HASH0, "graph");
    for (int i = 0; i < l->n; i++) {
        if (strncmp(l->v[i].key, "graph.", 6) == 0) {
            gh = halo_sweep_hash(halo_sweep_hash(gh, l->v[i].key), l->v[i].val);
        }
    }
    char hex[17];
    halo_sweep_hex(gh, hex);
    snprintf(pt->gkey, sizeof pt->gkey, "g-%s", hex);
    uint64_t ph = halo_sweep_hash(HALO_SWEEP_HASH0, pt->gkey);
    for (int i = 0; i < l->n; i++) {
        if (strncmp(l->v[i].key, "partition.", 10) == 0) {
            ph = halo_sweep_hash(halo_sweep_hash(ph, l->v[i].key), l->v[i].val);
        }
    }
    halo_sweep_hex(ph, hex);
    snprintf(pt->pkey, sizeof pt->pkey, "p-%s", hex);
    static const char *const rec[] = {"run.fanouts", "run.batch",         "run.epochs",
                                      "run.seed",    "trace.max_batches", NULL};
    uint64_t th = halo_sweep_hash(HALO_SWEEP_HASH0, pt->pkey);
    for (int i = 0; rec[i] != NULL; i++) {
        const halo_sweep_kv *v = kv_find(l, rec[i]);
        th = halo_sweep_hash(halo_sweep_hash(th, rec[i]), v ? v->val : "");
    }
    halo_sweep_hex(th, hex);
    snprintf(pt->tkey, sizeof pt->tkey, "t-%s", hex);
    return 0;
}

/* Adds the points of one configuration (settings l, repeated) to e. */
static int add_config(const ctx *c, expand *x, halo_sweep_exp *e, kvlist *l)
{
    if (e->npts + e->repeat > MAX_POINTS) {
        fpath p = fp1("sweep");
        return ferr(c, &p, "more than %d points", MAX_POINTS);
    }
    halo_sweep_point proto;
    memset(&proto, 0, sizeof proto);
    HALO_CHECK(settle(c, x, e->mode, l, &proto));
    e->pts = halo_realloc(e->pts, (size_t)(e->npts + e->repeat) * sizeof *e->pts);
    for (int r = 0; r < e->repeat; r++) {
        halo_sweep_point *p = &e->pts[e->npts++];
        *p = proto;
        p->index = e->nconfigs;
        p->rep = r;
        p->kv = HALO_NEW(halo_sweep_kv, l->n + 1);
        p->nkv = l->n;
        uint64_t h = halo_sweep_hash(HALO_SWEEP_HASH0, mode_names[e->mode]);
        for (int i = 0; i < l->n; i++) {
            p->kv[i].key = halo_strdup(l->v[i].key);
            p->kv[i].val = halo_strdup(l->v[i].val);
            p->kv[i].type = l->v[i].type;
            h = halo_sweep_hash(halo_sweep_hash(h, l->v[i].key), l->v[i].val);
        }
        char rep[32];
        snprintf(rep, sizeof rep, "rep=%d", r);
        halo_sweep_hex(halo_sweep_hash(h, rep), p->key);
    }
    e->nconfigs++;
    return 0;
}

/* Expands the sweep (cartesian product, first axis outermost) and the explicit points. */
static int expand_points(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    int rc = 0;
    kvlist defaults = {NULL, 0, 0}, cur = {NULL, 0, 0};
    axis *ax = NULL;
    int nax = 0;
    expand x = {NULL, 0};
    for (int s = 0; sections[s] != NULL; s++) {
        HALO_TRY(flatten_section(c, root, sections[s], e->mode, &defaults));
    }
    const halo_json *g = halo_json_get(root, "graph");
    if (g == NULL) {
        fpath p = fp1("graph");
        rc = ferr(c, &p,
                  "missing (gen = \"sbm\", preset = \"products\", import = \"ogb\" or "
                  "dir = \"PATH\")");
        goto fail;
    }
    const halo_json *sw = halo_json_get(root, "sweep");
    if (sw != NULL) {
        if (sw->type != HALO_JSON_OBJECT) {
            fpath p = fp1("sweep");
            rc = ferr(c, &p, "%s, expected a table of axes { [\"run.policy\"] = { ... } }",
                      type_name(sw));
            goto fail;
        }
        for (size_t i = 0; i < sw->len; i++) {
            fpath p = fp2("sweep", sw->keys[i]);
            HALO_TRY(check_axis_name(c, &p, sw->keys[i]));
            HALO_TRY(axis_add(c, &p, &ax, &nax, sw->keys[i], sw->items[i]));
        }
    }
    /* trace sugar: capacities and policies lists become axes */
    if (e->mode == HALO_SWEEP_TRACE) {
        const halo_json *t = halo_json_get(root, "trace");
        const halo_json *caps = t ? halo_json_get(t, "capacities") : NULL;
        const halo_json *pols = t ? halo_json_get(t, "policies") : NULL;
        if (caps != NULL) {
            fpath p = fp2("trace", "capacities");
            halo_json *list = NULL;
            if (caps->type == HALO_JSON_STRING) {
                char *copy = halo_strdup(caps->string);
                halo_sb sb;
                halo_sb_init(&sb);
                halo_sb_puts(&sb, "[");
                int n = 0;
                char *save = NULL;
                for (char *tok = strtok_r(copy, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save)) {
                    double d;
                    if (!halo_sweep_is_num(tok, &d)) {
                        halo_sb_free(&sb);
                        halo_free(copy);
                        rc = ferr(c, &p, "\"%s\" is not a number", tok);
                        goto fail;
                    }
                    halo_sb_printf(&sb, "%s%.17g", n++ ? "," : "", d);
                }
                halo_sb_puts(&sb, "]");
                halo_free(copy);
                rc = halo_json_parse(sb.buf, sb.len, c->path, &list);
                halo_sb_free(&sb);
                HALO_TRY(rc);
                rc = axis_add(c, &p, &ax, &nax, "trace.capacity", list);
                halo_json_free(list);
                HALO_TRY(rc);
            } else {
                HALO_TRY(axis_add(c, &p, &ax, &nax, "trace.capacity", caps));
            }
            kv_del(&defaults, "trace.capacities");
        }
        if (pols != NULL) {
            fpath p = fp2("trace", "policies");
            halo_sb sb;
            halo_sb_init(&sb);
            halo_sb_puts(&sb, "[");
            if (pols->type == HALO_JSON_STRING) {
                char *copy = halo_strdup(pols->string);
                int n = 0;
                char *save = NULL;
                for (char *tok = strtok_r(copy, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save)) {
                    if (strcmp(tok, "all") == 0) {
                        for (int i = 0; halo_sweep_all_policies[i] != NULL; i++) {
                            halo_sb_printf(&sb, "%s\"%s\"", n++ ? "," : "",
                                           halo_sweep_all_policies[i]);
                        }
                    } else {
                        halo_sb_printf(&sb, "%s\"%s\"", n++ ? "," : "", tok);
                    }
                }
                halo_free(copy);
            } else if (pols->type == HALO_JSON_ARRAY) {
                for (size_t i = 0; i < pols->len; i++) {
                    if (pols->items[i]->type != HALO_JSON_STRING) {
                        halo_sb_free(&sb);
                        rc = ferr(c, &p, "entry %zu is %s, expected a policy name", i + 1,
                                  type_name(pols->items[i]));
                        goto fail;
                    }
                    halo_sb_printf(&sb, "%s\"%s\"", i ? "," : "", pols->items[i]->string);
                }
            } else {
                halo_sb_free(&sb);
                rc = ferr(c, &p, "%s, expected \"all\", \"a,b\" or a list of names",
                          type_name(pols));
                goto fail;
            }
            halo_sb_puts(&sb, "]");
            halo_json *list = NULL;
            rc = halo_json_parse(sb.buf, sb.len, c->path, &list);
            halo_sb_free(&sb);
            HALO_TRY(rc);
            rc = axis_add(c, &p, &ax, &nax, "trace.policy", list);
            halo_json_free(list);
            HALO_TRY(rc);
            kv_del(&defaults, "trace.policies");
        }
    }
    int nlisted = nax;
    const halo_json *pts = halo_json_get(root, "points");
    if (pts != NULL) {
        fpath p = fp1("points");
        if (pts->type != HALO_JSON_ARRAY) {
            rc = ferr(c, &p, "%s, expected a list of tables { [\"run.depth\"] = 0 }",
                      type_name(pts));
            goto fail;
        }
        for (size_t i = 0; i < pts->len; i++) {
            char ib[24];
            fpath q = fp2("points", idx_comp(ib, sizeof ib, i));
            const halo_json *pv = pts->items[i];
            if (pv->type != HALO_JSON_OBJECT || pv->len == 0) {
                rc = ferr(c, &q, "%s, expected a table of settings { [\"run.depth\"] = 0 }",
                          pv->type == HALO_JSON_ARRAY && pv->len == 0 ? "an empty table"
                                                                      : type_name(pv));
                goto fail;
            }
            for (size_t j = 0; j < pv->len; j++) {
                fpath r = fp3("points", ib, pv->keys[j]);
                HALO_TRY(check_axis_name(c, &r, pv->keys[j]));
                if (axis_find(ax, nax, pv->keys[j]) < 0) {
                    ax = halo_realloc(ax, (size_t)(nax + 1) * sizeof *ax);
                    memset(&ax[nax], 0, sizeof *ax);
                    ax[nax].name = halo_strdup(pv->keys[j]);
                    nax++;
                }
            }
        }
    }
    /* the axes, sorted; listed axes first for the product but the columns are sorted */
    qsort(ax, (size_t)nlisted, sizeof *ax, cmp_axis);
    e->axes = HALO_NEW(char *, nax + 1);
    for (int i = 0; i < nax; i++) {
        e->axes[i] = halo_strdup(ax[i].name);
    }
    e->naxes = nax;
    qsort(e->axes, (size_t)nax, sizeof *e->axes, cmp_str);
    if (nlisted > 0 || pts == NULL) {
        int64_t total = 1;
        for (int i = 0; i < nlisted; i++) {
            total *= ax[i].n;
            if (total > MAX_POINTS) {
                fpath p = fp1("sweep");
                rc = ferr(c, &p, "more than %d points", MAX_POINTS);
                goto fail;
            }
        }
        for (int64_t k = 0; k < total; k++) {
            kv_copy(&cur, &defaults);
            int64_t rest = k;
            for (int i = nlisted - 1; i >= 0; i--) {
                int j = (int)(rest % ax[i].n);
                rest /= ax[i].n;
                kv_set(&cur, ax[i].name, ax[i].val[j], ax[i].type[j]);
            }
            rc = add_config(c, &x, e, &cur);
            kv_free(&cur);
            HALO_TRY(rc);
        }
    }
    for (size_t i = 0; pts != NULL && i < pts->len; i++) {
        const halo_json *pv = pts->items[i];
        kv_copy(&cur, &defaults);
        for (size_t j = 0; j < pv->len; j++) {
            char ib[24];
            fpath r = fp3("points", idx_comp(ib, sizeof ib, i), pv->keys[j]);
            halo_sb sb;
            halo_sb_init(&sb);
            int t;
            if (canon(pv->items[j], &sb, &t) < 0) {
                halo_sb_free(&sb);
                kv_free(&cur);
                rc = ferr(c, &r, "%s, expected a number, a string, a boolean or a list of them",
                          type_name(pv->items[j]));
                goto fail;
            }
            kv_set(&cur, pv->keys[j], sb.buf, t);
            halo_sb_free(&sb);
        }
        rc = add_config(c, &x, e, &cur);
        kv_free(&cur);
        HALO_TRY(rc);
    }
    /* every point has exactly one way to its graph */
    for (int i = 0; i < e->npts; i++) {
        const halo_sweep_point *p = &e->pts[i];
        int ways =
            (halo_sweep_get(p, "graph.gen") != NULL) + (halo_sweep_get(p, "graph.preset") != NULL) +
            (halo_sweep_get(p, "graph.import") != NULL) + (halo_sweep_get(p, "graph.dir") != NULL);
        if (ways != 1) {
            fpath q = fp1("graph");
            rc = ferr(c, &q,
                      "%s (give exactly one of gen = \"sbm\"|\"rmat\", preset = NAME, "
                      "import = \"ogb\"|\"edgelist\" with src = PATH, dir = PATH)",
                      ways == 0 ? "no graph source" : "more than one graph source");
            goto fail;
        }
        if (halo_sweep_get(p, "graph.import") != NULL && halo_sweep_get(p, "graph.src") == NULL) {
            fpath q = fp2("graph", "src");
            rc = ferr(c, &q, "missing (import needs the dataset: src = PATH)");
            goto fail;
        }
    }
fail:
    kv_free(&defaults);
    axes_free(ax, nax);
    halo_free(x.prof);
    return rc;
}

/* Checks and reads everything but the points. */
static int load_fields(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    for (size_t i = 0; i < root->len; i++) {
        if (!in_list(root->keys[i], top_fields)) {
            char l[512];
            list_text(top_fields, l, sizeof l);
            fpath p = fp1(root->keys[i]);
            return ferr(c, &p, "unknown field (an experiment takes: %s)", l);
        }
    }
    const char *name = NULL, *title = NULL, *caption = NULL, *paper = NULL, *mode = NULL;
    fpath p = fp1("name");
    HALO_CHECK(get_str(c, root, "name", &p, &name));
    char base[256];
    if (name == NULL) {
        const char *slash = strrchr(c->path, '/');
        const char *b = slash ? slash + 1 : c->path;
        size_t bl = strlen(b);
        bl = bl > 4 && strcmp(b + bl - 4, ".lua") == 0 ? bl - 4 : bl;
        snprintf(base, sizeof base, "%.*s", (int)bl, b);
        name = base;
    }
    for (const char *s = name; *s; s++) {
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') {
            return ferr(c, &p,
                        "\"%s\": a name is letters, digits, _, - and . (it names the "
                        "output files)",
                        name);
        }
    }
    if (name[0] == '\0' || name[0] == '.') {
        return ferr(c, &p, "\"%s\" cannot name output files", name);
    }
    e->name = halo_strdup(name);
    p = fp1("title");
    HALO_CHECK(get_str(c, root, "title", &p, &title));
    e->title = dup_or(title, e->name);
    p = fp1("caption");
    HALO_CHECK(get_str(c, root, "caption", &p, &caption));
    e->caption = dup_or(caption, "");
    p = fp1("paper");
    HALO_CHECK(get_str(c, root, "paper", &p, &paper));
    e->paper = dup_or(paper, "");
    p = fp1("mode");
    HALO_CHECK(get_str(c, root, "mode", &p, &mode));
    e->mode = HALO_SWEEP_SIM;
    if (mode != NULL) {
        int m = -1;
        for (int i = 0; mode_names[i] != NULL; i++) {
            if (strcmp(mode_names[i], mode) == 0) {
                m = i;
            }
        }
        if (m < 0) {
            return ferr(c, &p, "\"%s\" is not one of sim, run, trace, partition", mode);
        }
        e->mode = m;
    }
    if (e->mode != HALO_SWEEP_TRACE && halo_json_get(root, "trace") != NULL) {
        p = fp1("trace");
        return ferr(c, &p, "only for mode \"trace\"");
    }
    /* `repeat` is a Lua keyword (["repeat"] = N works); `repeats` is the same field */
    const halo_json *v = halo_json_get(root, "repeats");
    p = fp1("repeats");
    if (halo_json_get(root, "repeat") != NULL) {
        if (v != NULL) {
            return ferr(c, &p, "give repeats or [\"repeat\"], not both");
        }
        v = halo_json_get(root, "repeat");
        p = fp1("repeat");
    }
    e->repeat = 1;
    if (v != NULL) {
        if (v->type != HALO_JSON_NUMBER || v->number != floor(v->number) || v->number < 1 ||
            v->number > 1000) {
            return ferr(c, &p, "expected a whole number from 1 to 1000");
        }
        e->repeat = (int)v->number;
    }
    v = halo_json_get(root, "timeout");
    if (v != NULL) {
        p = fp1("timeout");
        if (v->type != HALO_JSON_NUMBER || !(v->number > 0)) {
            return ferr(c, &p, "expected seconds > 0");
        }
        e->timeout = v->number;
    }
    v = halo_json_get(root, "quick");
    if (v != NULL && v->type != HALO_JSON_OBJECT) {
        p = fp1("quick");
        return ferr(c, &p, "%s, expected a table merged over the file for --quick", type_name(v));
    }
    for (size_t i = 0; v != NULL && i < v->len; i++) {
        if (!in_list(v->keys[i], top_fields) || strcmp(v->keys[i], "quick") == 0 ||
            strcmp(v->keys[i], "name") == 0) {
            p = fp2("quick", v->keys[i]);
            return ferr(c, &p, "not a field quick can change");
        }
    }
    return 0;
}

/* Everything after the tree: fields, points, measures, derived columns, plots. */
static int load_tree(const ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    HALO_CHECK(load_fields(c, root, e));
    HALO_CHECK(expand_points(c, root, e));
    HALO_CHECK(load_measures(c, root, e));
    HALO_CHECK(load_derives(c, root, e));
    HALO_CHECK(load_plots(c, root, e));
    return 0;
}

int halo_sweep_load(const char *path, bool quick, halo_sweep_exp **out)
{
    *out = NULL;
    ctx c = {path, NULL};
    size_t len = 0;
    if (halo_file_read_all(path, &c.code, &len) == 0) {
        blank_comments(c.code);
    } else {
        c.code = NULL;
    }
    halo_json *root = NULL, *merged = NULL;
    halo_sweep_exp *e = NULL;
    int rc = halo_policy_load_data(path, &root);
    if (rc < 0) {
        rc = loader_error(&c, rc);
        goto fail;
    }
    if (root->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT,
                         "%s: the file must return a table of fields "
                         "(name = ..., mode = ..., graph = { ... })",
                         path);
        goto fail;
    }
    /* the quick variant is checked even without --quick, so that its mistakes show at once */
    const halo_json *q = halo_json_get(root, "quick");
    if (q != NULL && q->type == HALO_JSON_OBJECT) {
        merged = json_clone(root);
        json_merge(merged, q);
        e = HALO_NEW(halo_sweep_exp, 1);
        HALO_TRY(load_tree(&c, merged, e));
        if (quick) {
            e->quick = true;
            e->path = halo_strdup(path);
            *out = e;
            e = NULL;
            goto fail; /* done, rc is 0 */
        }
        halo_sweep_free(e);
    }
    e = HALO_NEW(halo_sweep_exp, 1);
    HALO_TRY(load_tree(&c, root, e));
    e->path = halo_strdup(path);
    *out = e;
    e = NULL;
fail:
    halo_sweep_free(e);
    halo_json_free(root);
    halo_json_free(merged);
    halo_free(c.code);
    return rc;
}
