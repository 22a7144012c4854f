/* Experiment files: loaded by the policy sandbox's data loader, the quick table merged in, and
 * every field but the points checked and read (the points: expand.c). */
#include "sweep/spec_int.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "policy/policy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_fields[] = {
    "name",  "title", "caption", "paper",   "mode",    "graph", "partition", "run",
    "trace", "sweep", "points",  "repeat",  "repeats", "quick", "measures",  "derive",
    "plot",  "plots", "timeout", "extends", "depends", NULL};

static const char *const plot_kinds[] = {"line", "bars", "stacked", "heatmap", "scatter", NULL};

static const char *const plot_fields[] = {"kind",   "x",      "y",    "z",    "series",   "title",
                                          "xlabel", "ylabel", "logx", "logy", "diagonal", NULL};

static const char *const derive_ops[] = {"baseline/value", "value/baseline", "improvement",
                                         "difference", NULL};

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

/* A string field (NULL when absent); wrong types are errors. */
static int get_str(const halo_sweep_ctx *c, const halo_json *obj, const char *key,
                   const halo_sweep_fpath *where, const char **out)
{
    *out = NULL;
    const halo_json *v = halo_json_get(obj, key);
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_STRING) {
        return halo_sweep_ferr(c, where, "%s, expected a string", halo_sweep_type_name(v));
    }
    *out = v->string;
    return 0;
}

static int get_bool(const halo_sweep_ctx *c, const halo_json *obj, const char *key,
                    const halo_sweep_fpath *where, bool *out)
{
    const halo_json *v = halo_json_get(obj, key);
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_BOOL) {
        return halo_sweep_ferr(c, where, "%s, expected true or false", halo_sweep_type_name(v));
    }
    *out = v->boolean;
    return 0;
}

/* A string list field: a list of strings, or one string. */
static int str_list(const halo_sweep_ctx *c, const halo_sweep_fpath *where, const halo_json *v,
                    char ***out, int *n)
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
        return halo_sweep_ferr(c, where, "%s, expected a list of names", halo_sweep_type_name(v));
    }
    *out = HALO_NEW(char *, v->len);
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i]->type != HALO_JSON_STRING) {
            char ib[24];
            halo_sweep_fpath p = *where;
            p.c[p.n++] = idx_comp(ib, sizeof ib, i);
            return halo_sweep_ferr(c, &p, "%s, expected a name", halo_sweep_type_name(v->items[i]));
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
    halo_sweep_free_paper(e);
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

/* Reads the measures list. */
static int load_measures(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "measures");
    halo_sweep_fpath p = fp1("measures");
    if (v == NULL) {
        return halo_sweep_ferr(c, &p, "missing (the columns to measure, e.g. { \"epoch_s\" })");
    }
    HALO_CHECK(str_list(c, &p, v, &e->measures, &e->nmeasures));
    for (int i = 0; i < e->nmeasures; i++) {
        char ib[24], lb[128];
        halo_sweep_fpath q = fp3("measures", idx_comp(ib, sizeof ib, (size_t)i),
                                 lit_comp(lb, sizeof lb, e->measures[i]));
        unsigned modes = 0;
        int k = halo_sweep_measure_known(e->measures[i], e->mode, &modes);
        if (k == 0) {
            return halo_sweep_ferr(c, &q, "unknown measure \"%s\" (see docs/experiments.md)",
                                   e->measures[i]);
        }
        if (k < 0) {
            char ml[64] = "";
            for (int m = 0; m <= HALO_SWEEP_PARTITION; m++) {
                if (modes & HALO_SWEEP_M(m)) {
                    size_t l = strlen(ml);
                    snprintf(ml + l, sizeof ml - l, "%s%s", l ? ", " : "", halo_sweep_mode_name(m));
                }
            }
            return halo_sweep_ferr(c, &q, "\"%s\" is not measured in mode \"%s\" (only in: %s)",
                                   e->measures[i], halo_sweep_mode_name(e->mode), ml);
        }
        for (int j = 0; j < i; j++) {
            if (strcmp(e->measures[j], e->measures[i]) == 0) {
                return halo_sweep_ferr(c, &q, "\"%s\" is listed twice", e->measures[i]);
            }
        }
    }
    return 0;
}

/* Reads the derive table (needs axes and measures). */
static int load_derives(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *v = halo_json_get(root, "derive");
    if (v == NULL) {
        return 0;
    }
    if (v->type != HALO_JSON_OBJECT) {
        halo_sweep_fpath p = fp1("derive");
        return halo_sweep_ferr(c, &p,
                               "%s, expected a table NAME = { of = ..., baseline = { ... } }",
                               halo_sweep_type_name(v));
    }
    e->derives = HALO_NEW(halo_sweep_derive, v->len + 1);
    for (size_t i = 0; i < v->len; i++) {
        const char *name = v->keys[i];
        const halo_json *d = v->items[i];
        halo_sweep_fpath p = fp2("derive", name);
        if (!halo_sweep_is_ident(name)) {
            return halo_sweep_ferr(c, &p, "a derived column's name is letters, digits and _");
        }
        if (halo_sweep_is_column(e, name)) {
            return halo_sweep_ferr(c, &p, "\"%s\" is already a measure or an axis", name);
        }
        if (d->type != HALO_JSON_OBJECT) {
            return halo_sweep_ferr(c, &p,
                                   "%s, expected { of = ..., baseline = { ... }, by = { ... }, "
                                   "op = ... }",
                                   halo_sweep_type_name(d));
        }
        halo_sweep_derive *dv = &e->derives[e->nderives++];
        dv->name = halo_strdup(name);
        static const char *const fields[] = {"of", "baseline", "by", "op", NULL};
        for (size_t j = 0; j < d->len; j++) {
            if (!halo_sweep_in_list(d->keys[j], fields)) {
                halo_sweep_fpath q = fp3("derive", name, d->keys[j]);
                return halo_sweep_ferr(c, &q, "unknown field (derive takes: of, baseline, by, op)");
            }
        }
        const char *of = NULL, *op = NULL;
        halo_sweep_fpath q = fp3("derive", name, "of");
        HALO_CHECK(get_str(c, d, "of", &q, &of));
        if (of == NULL) {
            return halo_sweep_ferr(c, &q, "missing (the measure it is computed from)");
        }
        bool found = false;
        for (int m = 0; m < e->nmeasures; m++) {
            found = found || strcmp(e->measures[m], of) == 0;
        }
        if (!found) {
            return halo_sweep_ferr(c, &q, "\"%s\" is not one of the measures", of);
        }
        dv->of = halo_strdup(of);
        q = fp3("derive", name, "op");
        HALO_CHECK(get_str(c, d, "op", &q, &op));
        if (op != NULL && !halo_sweep_in_list(op, derive_ops)) {
            char l[128];
            halo_sweep_list_text(derive_ops, l, sizeof l);
            return halo_sweep_ferr(c, &q, "\"%s\" is not one of %s", op, l);
        }
        dv->op = halo_strdup(op != NULL ? op : "baseline/value");
        const halo_json *b = halo_json_get(d, "baseline");
        q = fp3("derive", name, "baseline");
        if (b == NULL || b->type != HALO_JSON_OBJECT || b->len == 0) {
            return halo_sweep_ferr(c, &q,
                                   "%s, expected a table of axis values { [\"run.policy\"] = ... }",
                                   b == NULL ? "missing" : halo_sweep_type_name(b));
        }
        dv->base = HALO_NEW(halo_sweep_kv, b->len);
        for (size_t j = 0; j < b->len; j++) {
            halo_sweep_fpath r = {{"derive", name, "baseline", b->keys[j]}, 4};
            if (!halo_sweep_is_axis(e, b->keys[j])) {
                return halo_sweep_ferr(c, &r, "\"%s\" is not an axis of the sweep", b->keys[j]);
            }
            halo_sb sb;
            halo_sb_init(&sb);
            int t;
            if (halo_sweep_canon(b->items[j], &sb, &t) < 0) {
                halo_sb_free(&sb);
                return halo_sweep_ferr(c, &r, "%s, expected a value of the axis",
                                       halo_sweep_type_name(b->items[j]));
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
                if (!halo_sweep_is_axis(e, dv->by[j])) {
                    return halo_sweep_ferr(c, &q, "\"%s\" is not an axis of the sweep", dv->by[j]);
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

/* A plot's labels and switches: title, xlabel, ylabel, logx, logy, diagonal (scatter only).
 * base is the plot table's path. */
static int load_plot_labels(const halo_sweep_ctx *c, const halo_json *v, halo_sweep_fpath base,
                            halo_sweep_plot *pl)
{
    const char *s = NULL;
    halo_sweep_fpath q;
#define FIELD(k) (base.c[base.n] = (k), base.n++, base)
#define UNFIELD() (base.n--)
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
    if (pl->diagonal && pl->kind != HALO_SWEEP_SCATTER) {
        return halo_sweep_ferr(c, &q, "only a scatter plot takes diagonal");
    }
#undef FIELD
#undef UNFIELD
    return 0;
}

/* Reads one plot table into pl. */
static int load_plot(const halo_sweep_ctx *c, const halo_json *v, const char *top, size_t idx,
                     bool listed, halo_sweep_exp *e, halo_sweep_plot *pl)
{
    char ib[24];
    halo_sweep_fpath base = fp1(top);
    if (listed) {
        base = fp2(top, idx_comp(ib, sizeof ib, idx));
    }
    if (v->type != HALO_JSON_OBJECT) {
        return halo_sweep_ferr(c, &base, "%s, expected a table { kind = ..., x = ..., y = ... }",
                               halo_sweep_type_name(v));
    }
#define FIELD(k) (base.c[base.n] = (k), base.n++, base)
#define UNFIELD() (base.n--)
    for (size_t j = 0; j < v->len; j++) {
        halo_sweep_fpath q = FIELD(v->keys[j]);
        UNFIELD();
        if (!halo_sweep_in_list(v->keys[j], plot_fields)) {
            char l[256];
            halo_sweep_list_text(plot_fields, l, sizeof l);
            return halo_sweep_ferr(c, &q, "unknown field (plot takes: %s)", l);
        }
    }
    const char *kind = NULL;
    halo_sweep_fpath q = FIELD("kind");
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
        halo_sweep_list_text(plot_kinds, l, sizeof l);
        return halo_sweep_ferr(c, &q, "\"%s\" is not one of %s", kind, l);
    }
    pl->kind = k;
    const char *x = NULL, *z = NULL, *series = NULL;
    q = FIELD("x");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "x", &q, &x));
    if (x == NULL) {
        return halo_sweep_ferr(c, &q, "missing (the column on the x axis)");
    }
    if (!halo_sweep_is_column(e, x)) {
        return halo_sweep_ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column", x);
    }
    pl->x = halo_strdup(x);
    q = FIELD("y");
    UNFIELD();
    const halo_json *yv = halo_json_get(v, "y");
    if (yv == NULL) {
        return halo_sweep_ferr(c, &q, "missing (the column on the y axis)");
    }
    HALO_CHECK(str_list(c, &q, yv, &pl->y, &pl->ny));
    for (int i = 0; i < pl->ny; i++) {
        if (!halo_sweep_is_column(e, pl->y[i])) {
            return halo_sweep_ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column",
                                   pl->y[i]);
        }
    }
    q = FIELD("series");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "series", &q, &series));
    if (series != NULL && !halo_sweep_is_column(e, series)) {
        return halo_sweep_ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column",
                               series);
    }
    if (series != NULL && k == HALO_SWEEP_HEATMAP) {
        return halo_sweep_ferr(c, &q, "a heatmap takes x, y and z, not a series");
    }
    pl->series = series ? halo_strdup(series) : NULL;
    q = FIELD("z");
    UNFIELD();
    HALO_CHECK(get_str(c, v, "z", &q, &z));
    if (k == HALO_SWEEP_HEATMAP) {
        if (z == NULL) {
            return halo_sweep_ferr(c, &q, "missing (a heatmap colours cells by the column z)");
        }
        if (!halo_sweep_is_column(e, z)) {
            return halo_sweep_ferr(c, &q, "\"%s\" is not an axis, a measure or a derived column",
                                   z);
        }
        pl->z = halo_strdup(z);
    } else if (z != NULL) {
        return halo_sweep_ferr(c, &q, "only a heatmap takes z");
    }
    if (pl->ny > 1 && k != HALO_SWEEP_STACKED && k != HALO_SWEEP_LINE) {
        q = FIELD("y");
        UNFIELD();
        return halo_sweep_ferr(c, &q, "a list of columns is for kind stacked or line");
    }
    if (pl->ny > 1 && k == HALO_SWEEP_LINE && series != NULL) {
        q = FIELD("y");
        UNFIELD();
        return halo_sweep_ferr(c, &q,
                               "a line plot takes a list of y columns or a series, not both");
    }
    HALO_CHECK(load_plot_labels(c, v, base, pl));
#undef FIELD
#undef UNFIELD
    return 0;
}

static int load_plots(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    const halo_json *one = halo_json_get(root, "plot");
    const halo_json *many = halo_json_get(root, "plots");
    if (one != NULL && many != NULL) {
        halo_sweep_fpath p = fp1("plots");
        return halo_sweep_ferr(c, &p, "give plot or plots, not both");
    }
    if (one != NULL) {
        e->plots = HALO_NEW(halo_sweep_plot, 1);
        e->nplots = 1;
        return load_plot(c, one, "plot", 0, false, e, &e->plots[0]);
    }
    if (many != NULL) {
        if (many->type != HALO_JSON_ARRAY || many->len == 0) {
            halo_sweep_fpath p = fp1("plots");
            return halo_sweep_ferr(c, &p, "%s, expected a list of plot tables",
                                   halo_sweep_type_name(many));
        }
        e->plots = HALO_NEW(halo_sweep_plot, many->len);
        for (size_t i = 0; i < many->len; i++) {
            e->nplots++;
            HALO_CHECK(load_plot(c, many->items[i], "plots", i, true, e, &e->plots[i]));
        }
    }
    return 0;
}

/* Checks and reads everything but the points. */
static int load_fields(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    for (size_t i = 0; i < root->len; i++) {
        if (!halo_sweep_in_list(root->keys[i], top_fields)) {
            char l[512];
            halo_sweep_list_text(top_fields, l, sizeof l);
            halo_sweep_fpath p = fp1(root->keys[i]);
            return halo_sweep_ferr(c, &p, "unknown field (an experiment takes: %s)", l);
        }
    }
    const char *name = NULL, *title = NULL, *caption = NULL, *mode = NULL;
    halo_sweep_fpath p = fp1("name");
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
            return halo_sweep_ferr(c, &p,
                                   "\"%s\": a name is letters, digits, _, - and . (it names the "
                                   "output files)",
                                   name);
        }
    }
    if (name[0] == '\0' || name[0] == '.') {
        return halo_sweep_ferr(c, &p, "\"%s\" cannot name output files", name);
    }
    e->name = halo_strdup(name);
    p = fp1("title");
    HALO_CHECK(get_str(c, root, "title", &p, &title));
    e->title = dup_or(title, e->name);
    p = fp1("caption");
    HALO_CHECK(get_str(c, root, "caption", &p, &caption));
    e->caption = dup_or(caption, "");
    p = fp1("mode");
    HALO_CHECK(get_str(c, root, "mode", &p, &mode));
    e->mode = HALO_SWEEP_SIM;
    if (mode != NULL) {
        int m = -1;
        for (int i = 0; i <= HALO_SWEEP_PARTITION; i++) {
            if (strcmp(halo_sweep_mode_name(i), mode) == 0) {
                m = i;
            }
        }
        if (m < 0) {
            return halo_sweep_ferr(c, &p, "\"%s\" is not one of sim, run, trace, partition", mode);
        }
        e->mode = m;
    }
    if (e->mode != HALO_SWEEP_TRACE && halo_json_get(root, "trace") != NULL) {
        p = fp1("trace");
        return halo_sweep_ferr(c, &p, "only for mode \"trace\"");
    }
    /* `repeat` is a Lua keyword (["repeat"] = N works); `repeats` is the same field */
    const halo_json *v = halo_json_get(root, "repeats");
    p = fp1("repeats");
    if (halo_json_get(root, "repeat") != NULL) {
        if (v != NULL) {
            return halo_sweep_ferr(c, &p, "give repeats or [\"repeat\"], not both");
        }
        v = halo_json_get(root, "repeat");
        p = fp1("repeat");
    }
    e->repeat = 1;
    if (v != NULL) {
        if (v->type != HALO_JSON_NUMBER || v->number != floor(v->number) || v->number < 1 ||
            v->number > 1000) {
            return halo_sweep_ferr(c, &p, "expected a whole number from 1 to 1000");
        }
        e->repeat = (int)v->number;
    }
    v = halo_json_get(root, "timeout");
    if (v != NULL) {
        p = fp1("timeout");
        if (v->type != HALO_JSON_NUMBER || !(v->number > 0)) {
            return halo_sweep_ferr(c, &p, "expected seconds > 0");
        }
        e->timeout = v->number;
    }
    v = halo_json_get(root, "quick");
    if (v != NULL && v->type != HALO_JSON_OBJECT) {
        p = fp1("quick");
        return halo_sweep_ferr(c, &p, "%s, expected a table merged over the file for --quick",
                               halo_sweep_type_name(v));
    }
    for (size_t i = 0; v != NULL && i < v->len; i++) {
        if (!halo_sweep_in_list(v->keys[i], top_fields) || strcmp(v->keys[i], "quick") == 0 ||
            strcmp(v->keys[i], "name") == 0 || strcmp(v->keys[i], "extends") == 0) {
            p = fp2("quick", v->keys[i]);
            return halo_sweep_ferr(c, &p, "not a field quick can change");
        }
    }
    return 0;
}

/* Everything after the tree: fields, points, measures, derived columns, plots. */
static int load_tree(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    HALO_CHECK(load_fields(c, root, e));
    HALO_CHECK(halo_sweep_expand(c, root, e));
    HALO_CHECK(load_measures(c, root, e));
    HALO_CHECK(load_derives(c, root, e));
    HALO_CHECK(load_plots(c, root, e));
    HALO_CHECK(halo_sweep_load_paper(c, root, e));
    return 0;
}

/* extends = "FILE.lua" -> the experiment FILE (beside this one, or as given when absolute)
 * with this file's fields merged over it (tables key by key, anything else replaced); one level:
 * the base may not extend another. Replaces *root by the merged tree. */
static int load_extends(const halo_sweep_ctx *c, halo_json **root)
{
    const halo_json *x = halo_json_get(*root, "extends");
    if (x == NULL) {
        return 0;
    }
    halo_sweep_fpath p = fp1("extends");
    if (x->type != HALO_JSON_STRING || x->string[0] == '\0') {
        return halo_sweep_ferr(c, &p, "%s, expected the path of an experiment file",
                               halo_sweep_type_name(x));
    }
    char base_path[4200];
    const char *slash = strrchr(c->path, '/');
    if (x->string[0] == '/' || slash == NULL) {
        snprintf(base_path, sizeof base_path, "%s", x->string);
    } else {
        snprintf(base_path, sizeof base_path, "%.*s/%s", (int)(slash - c->path), c->path,
                 x->string);
    }
    halo_json *base = NULL;
    if (halo_policy_load_data(base_path, &base) < 0) {
        char msg[1500];
        snprintf(msg, sizeof msg, "%s", halo_errmsg());
        return halo_sweep_ferr(c, &p, "%s", msg);
    }
    if (base->type != HALO_JSON_OBJECT || halo_json_get(base, "extends") != NULL) {
        halo_json_free(base);
        return halo_sweep_ferr(c, &p, "%s: %s", base_path,
                               "an experiment to extend returns a table of fields and extends "
                               "no other");
    }
    json_merge(base, *root);
    for (size_t i = 0; i < base->len; i++) {
        if (strcmp(base->keys[i], "extends") == 0) {
            halo_json_free(base->items[i]);
            halo_free(base->keys[i]);
            memmove(&base->items[i], &base->items[i + 1],
                    (base->len - i - 1) * sizeof *base->items);
            memmove(&base->keys[i], &base->keys[i + 1], (base->len - i - 1) * sizeof *base->keys);
            base->len--;
            break;
        }
    }
    halo_json_free(*root);
    *root = base;
    return 0;
}

int halo_sweep_load(const char *path, bool quick, halo_sweep_exp **out)
{
    *out = NULL;
    halo_sweep_ctx c = {path, NULL};
    size_t len = 0;
    if (halo_file_read_all(path, &c.code, &len) == 0) {
        halo_sweep_blank_comments(c.code);
    } else {
        c.code = NULL;
    }
    halo_json *root = NULL, *merged = NULL;
    halo_sweep_exp *e = NULL;
    int rc = halo_policy_load_data(path, &root);
    if (rc < 0) {
        rc = halo_sweep_loader_error(&c, rc);
        goto fail;
    }
    if (root->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT,
                         "%s: the file must return a table of fields "
                         "(name = ..., mode = ..., graph = { ... })",
                         path);
        goto fail;
    }
    HALO_TRY(load_extends(&c, &root));
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
