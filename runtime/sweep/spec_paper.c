/* An experiment's `paper` field (the paper's claim in words and the ranges it publishes, drawn
 * as bands on the figure) and its `depends` field (source paths whose change makes the figure
 * stale, for halo report). */
#include "sweep/spec_int.h"

#include "core/err.h"
#include "core/mem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const paper_fields[] = {"text", "ranges", NULL};
static const char *const range_fields[] = {"metric", "lo", "hi", "unit", "source", NULL};

/* The default claim of a paper given only as ranges: "SOURCE: METRIC LO-HI UNIT; ...". */
static char *ranges_text(const halo_sweep_exp *e)
{
    halo_sb sb;
    halo_sb_init(&sb);
    for (int i = 0; i < e->npranges; i++) {
        const halo_sweep_prange *r = &e->pranges[i];
        char lo[40], hi[40];
        halo_sweep_fmt_num(r->lo, lo, sizeof lo);
        halo_sweep_fmt_num(r->hi, hi, sizeof hi);
        halo_sb_printf(&sb, "%s%s: %s %s-%s%s", i ? "; " : "", r->source, r->metric, lo, hi,
                       r->unit);
    }
    char *s = halo_strdup(sb.buf ? sb.buf : "");
    halo_sb_free(&sb);
    return s;
}

/* A number field of a range (required). */
static int range_num(const halo_sweep_ctx *c, const halo_json *v, const char *key,
                     halo_sweep_fpath where, double *out)
{
    const halo_json *f = halo_json_get(v, key);
    where.c[where.n++] = key;
    if (f == NULL || f->type != HALO_JSON_NUMBER || !isfinite(f->number)) {
        return halo_sweep_ferr(c, &where, "%s, expected a number (the paper's %s value)",
                               f ? halo_sweep_type_name(f) : "missing",
                               strcmp(key, "lo") == 0 ? "lowest" : "highest");
    }
    *out = f->number;
    return 0;
}

/* A string field of a range; required ones may not be empty. */
static int range_str(const halo_sweep_ctx *c, const halo_json *v, const char *key,
                     halo_sweep_fpath where, bool required, size_t max, char **out)
{
    const halo_json *f = halo_json_get(v, key);
    where.c[where.n++] = key;
    if (f == NULL && !required) {
        *out = halo_strdup("");
        return 0;
    }
    if (f == NULL || f->type != HALO_JSON_STRING || (required && f->string[0] == '\0') ||
        strlen(f->string) > max) {
        return halo_sweep_ferr(c, &where, "%s, expected a %sstring of at most %zu characters",
                               f ? halo_sweep_type_name(f) : "missing",
                               required ? "non-empty " : "", max);
    }
    *out = halo_strdup(f->string);
    return 0;
}

/* One entry of paper.ranges: { metric = COLUMN, lo = N, hi = N, unit = "x", source = "..." }. */
static int load_range(const halo_sweep_ctx *c, const halo_json *v, size_t i, halo_sweep_exp *e)
{
    char ib[24];
    halo_sweep_fpath where = fp3("paper", "ranges", idx_comp(ib, sizeof ib, i));
    if (v->type != HALO_JSON_OBJECT) {
        return halo_sweep_ferr(c, &where,
                               "%s, expected { metric = COLUMN, lo = N, hi = N, source = ... }",
                               halo_sweep_type_name(v));
    }
    for (size_t j = 0; j < v->len; j++) {
        if (!halo_sweep_in_list(v->keys[j], range_fields)) {
            halo_sweep_fpath q = where;
            q.c[q.n++] = v->keys[j];
            return halo_sweep_ferr(c, &q,
                                   "unknown field (a range takes: metric, lo, hi, unit, "
                                   "source)");
        }
    }
    halo_sweep_prange *r = &e->pranges[e->npranges++];
    HALO_CHECK(range_str(c, v, "metric", where, true, 128, &r->metric));
    HALO_CHECK(range_str(c, v, "source", where, true, 80, &r->source));
    HALO_CHECK(range_str(c, v, "unit", where, false, 8, &r->unit));
    HALO_CHECK(range_num(c, v, "lo", where, &r->lo));
    HALO_CHECK(range_num(c, v, "hi", where, &r->hi));
    halo_sweep_fpath q = where;
    q.c[q.n++] = "metric";
    if (!halo_sweep_is_column(e, r->metric) || halo_sweep_is_axis(e, r->metric)) {
        return halo_sweep_ferr(c, &q, "\"%s\" is not a measure or a derived column", r->metric);
    }
    if (r->lo > r->hi) {
        q.c[q.n - 1] = "hi";
        return halo_sweep_ferr(c, &q, "below lo (the range is lo to hi)");
    }
    return 0;
}

/* paper = { text = "...", ranges = { ... } }. */
static int load_paper_table(const halo_sweep_ctx *c, const halo_json *v, halo_sweep_exp *e)
{
    for (size_t j = 0; j < v->len; j++) {
        if (!halo_sweep_in_list(v->keys[j], paper_fields)) {
            halo_sweep_fpath q = fp2("paper", v->keys[j]);
            return halo_sweep_ferr(c, &q, "unknown field (paper takes: text, ranges)");
        }
    }
    const halo_json *text = halo_json_get(v, "text");
    if (text != NULL && text->type != HALO_JSON_STRING) {
        halo_sweep_fpath q = fp2("paper", "text");
        return halo_sweep_ferr(c, &q, "%s, expected a string", halo_sweep_type_name(text));
    }
    const halo_json *rs = halo_json_get(v, "ranges");
    if (rs != NULL && (rs->type != HALO_JSON_ARRAY || rs->len == 0)) {
        halo_sweep_fpath q = fp2("paper", "ranges");
        return halo_sweep_ferr(c, &q, "%s, expected a list of { metric, lo, hi, source }",
                               halo_sweep_type_name(rs));
    }
    if (text == NULL && rs == NULL) {
        halo_sweep_fpath q = fp1("paper");
        return halo_sweep_ferr(c, &q, "give text, ranges or both");
    }
    e->pranges = HALO_NEW(halo_sweep_prange, rs ? rs->len : 1);
    for (size_t i = 0; rs != NULL && i < rs->len; i++) {
        HALO_CHECK(load_range(c, rs->items[i], i, e));
    }
    e->paper = text ? halo_strdup(text->string) : ranges_text(e);
    return 0;
}

/* depends = { "runtime/sim", "policies/x.lua" }: paths relative to the repository's root, in
 * the characters a path of the project uses (they reach git as arguments, never a shell). */
static int load_depends(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "depends");
    if (v == NULL) {
        return 0;
    }
    halo_sweep_fpath where = fp1("depends");
    if (v->type != HALO_JSON_ARRAY || v->len == 0) {
        return halo_sweep_ferr(c, &where, "%s, expected a list of paths", halo_sweep_type_name(v));
    }
    e->depends = HALO_NEW(char *, v->len);
    for (size_t i = 0; i < v->len; i++) {
        const halo_json *p = v->items[i];
        char ib[24];
        halo_sweep_fpath q = fp2("depends", idx_comp(ib, sizeof ib, i));
        if (p->type != HALO_JSON_STRING || !halo_sweep_repo_path_ok(p->string)) {
            return halo_sweep_ferr(c, &q,
                                   "expected a path relative to the repository's root (letters, "
                                   "digits, _ - . /; no .. and no leading /)");
        }
        e->depends[e->ndepends++] = halo_strdup(p->string);
    }
    return 0;
}

int halo_sweep_load_paper(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "paper");
    if (v == NULL) {
        e->paper = halo_strdup("");
    } else if (v->type == HALO_JSON_STRING) {
        e->paper = halo_strdup(v->string);
    } else if (v->type == HALO_JSON_OBJECT) {
        HALO_CHECK(load_paper_table(c, v, e));
    } else {
        halo_sweep_fpath q = fp1("paper");
        return halo_sweep_ferr(c, &q, "%s, expected a string or { text = ..., ranges = ... }",
                               halo_sweep_type_name(v));
    }
    return load_depends(c, root, e);
}

void halo_sweep_free_paper(halo_sweep_exp *e)
{
    for (int i = 0; i < e->npranges; i++) {
        halo_free(e->pranges[i].metric);
        halo_free(e->pranges[i].unit);
        halo_free(e->pranges[i].source);
    }
    halo_free(e->pranges);
    for (int i = 0; i < e->ndepends; i++) {
        halo_free(e->depends[i]);
    }
    halo_free(e->depends);
}
