/* The expansion of an experiment into points: the sections flattened into settings, the sweep's
 * axes (and trace's capacities and policies), their product and the explicit points, each point
 * settled (cluster, parts, policy files) and keyed. */
#include "sweep/spec_int.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "sim/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* Most points an experiment may expand to. */
#define MAX_POINTS 100000

static const char *const sections[] = {"graph", "partition", "run", "trace", NULL};

/* ---- settings ---- */

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
/* Whether an axis name ("run.policy", "run.set.delta") names a setting of a section. */
static int check_axis_name(const halo_sweep_ctx *c, const halo_sweep_fpath *where, const char *name)
{
    const char *dot = strchr(name, '.');
    char sec[32];
    if (dot == NULL || dot == name || (size_t)(dot - name) >= sizeof sec || dot[1] == '\0') {
        return halo_sweep_ferr(c, where,
                               "\"%s\" is not SECTION.KEY (sections: graph, partition, run, "
                               "trace)",
                               name);
    }
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - name), name);
    if (!halo_sweep_in_list(sec, sections)) {
        return halo_sweep_ferr(
            c, where, "\"%s\": unknown section \"%s\" (graph, partition, run, trace)", name, sec);
    }
    const char *key = dot + 1;
    if (strncmp(key, "set.", 4) == 0 && key[4] != '\0' && strcmp(sec, "graph") != 0) {
        return 0;
    }
    if (strcmp(sec, "run") == 0) {
        const halo_sweep_runkey *k = halo_sweep_runkey_find(key);
        if (k == NULL || strcmp(key, "set") == 0) {
            return halo_sweep_ferr(
                c, where, "\"%s\": unknown run key \"%s\" (see docs/experiments.md)", name, key);
        }
    } else if (strcmp(sec, "trace") == 0) {
        if (strcmp(key, "capacities") == 0 || strcmp(key, "policies") == 0) {
            return halo_sweep_ferr(c, where,
                                   "sweep over trace.capacity or trace.policy (one value each)");
        }
        if (!halo_sweep_in_list(key, halo_sweep_tracekeys) || strcmp(key, "set") == 0) {
            char l[256];
            halo_sweep_list_text(halo_sweep_tracekeys, l, sizeof l);
            return halo_sweep_ferr(c, where, "\"%s\": unknown trace key \"%s\" (%s)", name, key, l);
        }
    }
    return 0;
}

/* Flattens one section into defaults ("SECTION.KEY" = value, "SECTION.set.K" = value). */
static int flatten_section(const halo_sweep_ctx *c, const halo_json *root, const char *sec,
                           int mode, kvlist *out)
{
    const halo_json *s = halo_json_get(root, sec);
    if (s == NULL) {
        return 0;
    }
    if (s->type != HALO_JSON_OBJECT) {
        halo_sweep_fpath p = fp1(sec);
        return halo_sweep_ferr(c, &p, "%s, expected a table of settings", halo_sweep_type_name(s));
    }
    for (size_t i = 0; i < s->len; i++) {
        const char *k = s->keys[i];
        const halo_json *v = s->items[i];
        halo_sweep_fpath p = fp2(sec, k);
        if (strcmp(sec, "run") == 0 && halo_sweep_runkey_find(k) == NULL) {
            return halo_sweep_ferr(c, &p, "unknown run key (see docs/experiments.md for the keys)");
        }
        if (strcmp(sec, "trace") == 0 && !halo_sweep_in_list(k, halo_sweep_tracekeys)) {
            char l[256];
            halo_sweep_list_text(halo_sweep_tracekeys, l, sizeof l);
            return halo_sweep_ferr(c, &p, "unknown field (trace takes: %s)", l);
        }
        if (strcmp(k, "set") == 0 && strcmp(sec, "graph") != 0) {
            if (v->type != HALO_JSON_OBJECT) {
                return halo_sweep_ferr(c, &p, "%s, expected a table of NAME = VALUE",
                                       halo_sweep_type_name(v));
            }
            for (size_t j = 0; j < v->len; j++) {
                halo_sweep_fpath q = fp3(sec, "set", v->keys[j]);
                halo_sb sb;
                halo_sb_init(&sb);
                int t;
                if (halo_sweep_canon(v->items[j], &sb, &t) < 0) {
                    halo_sb_free(&sb);
                    return halo_sweep_ferr(c, &q, "%s, expected a number, a string or a boolean",
                                           halo_sweep_type_name(v->items[j]));
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
        if (halo_sweep_canon(v, &sb, &t) < 0) {
            halo_sb_free(&sb);
            return halo_sweep_ferr(c, &p,
                                   "%s, expected a number, a string, a boolean or a list of them",
                                   halo_sweep_type_name(v));
        }
        char key[600];
        snprintf(key, sizeof key, "%s.%s", sec, k);
        kv_set(out, key, sb.buf, t);
        halo_sb_free(&sb);
    }
    (void)mode;
    return 0;
}

/* ---- axes ---- */

/* An axis: its name and values. */
typedef struct axis {
    char *name;  /* dotted name */
    char **val;  /* values */
    int *type;   /* their kinds */
    int n;       /* values */
    bool listed; /* from sweep (or trace's lists), not only from points */
} axis;

static int cmp_axis(const void *a, const void *b)
{
    return strcmp(((const axis *)a)->name, ((const axis *)b)->name);
}

static void axis_free(axis *a)
{
    for (int j = 0; j < a->n; j++) {
        halo_free(a->val[j]);
    }
    halo_free(a->val);
    halo_free(a->type);
    halo_free(a->name);
}

static void axes_free(axis *ax, int n)
{
    for (int i = 0; i < n; i++) {
        axis_free(&ax[i]);
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

/* Appends a value of kind type (HALO_SWEEP_STR/NUM/BOOL) to an axis. */
static void axis_push(axis *a, const char *val, int type)
{
    a->val = halo_realloc(a->val, (size_t)(a->n + 1) * sizeof *a->val);
    a->type = halo_realloc(a->type, (size_t)(a->n + 1) * sizeof *a->type);
    a->val[a->n] = halo_strdup(val);
    a->type[a->n] = type;
    a->n++;
}

/* Expansion state: what the rules below build up. */
typedef struct expand {
    kvlist defaults;        /* the sections' settings */
    axis *ax;               /* the axes: listed ones first, then those only points set */
    int nax;                /* axes */
    int nlisted;            /* listed axes (their product is expanded) */
    struct prof_seen *prof; /* cluster profiles loaded so far */
    int nprof;              /* count */
} expand;

/* Puts the listed axis a (its values given at where) among the axes and takes it; an axis of
 * that name listed already wins and a is dropped. No value at all is an error. */
static int axis_put(const halo_sweep_ctx *c, const halo_sweep_fpath *where, expand *x, axis *a)
{
    if (axis_find(x->ax, x->nax, a->name) >= 0) {
        axis_free(a);
        return 0;
    }
    a->listed = true;
    x->ax = halo_realloc(x->ax, (size_t)(x->nax + 1) * sizeof *x->ax);
    x->ax[x->nax++] = *a;
    if (a->n == 0) {
        return halo_sweep_ferr(c, where, "an empty list of values");
    }
    return 0;
}

/* axis -> value | { value, ... }: a listed axis named name (a scalar is a list of one; each
 * value a number, a string, a boolean or a flat list of them, kept as its canonical text). */
static int axis_add(const halo_sweep_ctx *c, const halo_sweep_fpath *where, expand *x,
                    const char *name, const halo_json *v)
{
    if (axis_find(x->ax, x->nax, name) >= 0) {
        return 0;
    }
    axis a = {halo_strdup(name), NULL, NULL, 0, true};
    size_t cnt = v->type == HALO_JSON_ARRAY ? v->len : 1;
    for (size_t i = 0; i < cnt; i++) {
        const halo_json *item = v->type == HALO_JSON_ARRAY ? v->items[i] : v;
        halo_sb sb;
        halo_sb_init(&sb);
        int t;
        if (item->type == HALO_JSON_OBJECT || halo_sweep_canon(item, &sb, &t) < 0) {
            halo_sb_free(&sb);
            axis_free(&a);
            return halo_sweep_ferr(c, where,
                                   "value %zu is %s, expected a number, a string, a boolean or "
                                   "a list of them",
                                   i + 1, halo_sweep_type_name(item));
        }
        axis_push(&a, sb.buf, t);
        halo_sb_free(&sb);
    }
    return axis_put(c, where, x, &a);
}

/* ---- the rules of the expansion ---- */

/* sweep -> { ["SECTION.KEY"] = axis, ... }: one listed axis per key, in the file's order */
static int rule_sweep(const halo_sweep_ctx *c, const halo_json *root, expand *x)
{
    const halo_json *sw = halo_json_get(root, "sweep");
    if (sw == NULL) {
        return 0;
    }
    if (sw->type != HALO_JSON_OBJECT) {
        halo_sweep_fpath p = fp1("sweep");
        return halo_sweep_ferr(c, &p, "%s, expected a table of axes { [\"run.policy\"] = { ... } }",
                               halo_sweep_type_name(sw));
    }
    for (size_t i = 0; i < sw->len; i++) {
        halo_sweep_fpath p = fp2("sweep", sw->keys[i]);
        HALO_CHECK(check_axis_name(c, &p, sw->keys[i]));
        HALO_CHECK(axis_add(c, &p, x, sw->keys[i], sw->items[i]));
    }
    return 0;
}

/* trace.capacities -> "c1,c2,..." | axis: the listed axis trace.capacity; in the text form each
 * comma-separated piece is a number (empty pieces are skipped) */
static int rule_capacities(const halo_sweep_ctx *c, const halo_json *caps, expand *x)
{
    halo_sweep_fpath p = fp2("trace", "capacities");
    if (caps->type != HALO_JSON_STRING) {
        return axis_add(c, &p, x, "trace.capacity", caps);
    }
    axis a = {halo_strdup("trace.capacity"), NULL, NULL, 0, true};
    char *copy = halo_strdup(caps->string);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double d;
        char num[40];
        if (!halo_sweep_is_num(tok, &d)) {
            int rc = halo_sweep_ferr(c, &p, "\"%s\" is not a number", tok);
            halo_free(copy);
            axis_free(&a);
            return rc;
        }
        halo_sweep_fmt_num(d, num, sizeof num);
        axis_push(&a, num, HALO_SWEEP_NUM);
    }
    halo_free(copy);
    return axis_put(c, &p, x, &a);
}

/* trace.policies -> "all" | "p1,p2,..." | { "p1", "p2", ... }: the listed axis trace.policy;
 * "all" stands for every shipped policy (halo_sweep_all_policies) */
static int rule_policies(const halo_sweep_ctx *c, const halo_json *pols, expand *x)
{
    halo_sweep_fpath p = fp2("trace", "policies");
    axis a = {halo_strdup("trace.policy"), NULL, NULL, 0, true};
    if (pols->type == HALO_JSON_STRING) {
        char *copy = halo_strdup(pols->string);
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (strcmp(tok, "all") != 0) {
                axis_push(&a, tok, HALO_SWEEP_STR);
                continue;
            }
            for (int i = 0; halo_sweep_all_policies[i] != NULL; i++) {
                axis_push(&a, halo_sweep_all_policies[i], HALO_SWEEP_STR);
            }
        }
        halo_free(copy);
    } else if (pols->type == HALO_JSON_ARRAY) {
        for (size_t i = 0; i < pols->len; i++) {
            if (pols->items[i]->type != HALO_JSON_STRING) {
                axis_free(&a);
                return halo_sweep_ferr(c, &p, "entry %zu is %s, expected a policy name", i + 1,
                                       halo_sweep_type_name(pols->items[i]));
            }
            axis_push(&a, pols->items[i]->string, HALO_SWEEP_STR);
        }
    } else {
        axis_free(&a);
        return halo_sweep_ferr(c, &p, "%s, expected \"all\", \"a,b\" or a list of names",
                               halo_sweep_type_name(pols));
    }
    return axis_put(c, &p, x, &a);
}

/* trace -> { capacities = ..., policies = ..., ... }: the lists become axes (trace mode only) and
 * leave the settings */
static int rule_trace(const halo_sweep_ctx *c, const halo_json *root, expand *x)
{
    const halo_json *t = halo_json_get(root, "trace");
    const halo_json *caps = t ? halo_json_get(t, "capacities") : NULL;
    const halo_json *pols = t ? halo_json_get(t, "policies") : NULL;
    if (caps != NULL) {
        HALO_CHECK(rule_capacities(c, caps, x));
        kv_del(&x->defaults, "trace.capacities");
    }
    if (pols != NULL) {
        HALO_CHECK(rule_policies(c, pols, x));
        kv_del(&x->defaults, "trace.policies");
    }
    return 0;
}

/* points -> { { ["SECTION.KEY"] = value, ... }, ... }: a key no sweep lists becomes an axis
 * (a column) without values of its own */
static int rule_point_axes(const halo_sweep_ctx *c, const halo_json *pts, expand *x)
{
    if (pts->type != HALO_JSON_ARRAY) {
        halo_sweep_fpath p = fp1("points");
        return halo_sweep_ferr(c, &p, "%s, expected a list of tables { [\"run.depth\"] = 0 }",
                               halo_sweep_type_name(pts));
    }
    for (size_t i = 0; i < pts->len; i++) {
        char ib[24];
        halo_sweep_fpath q = fp2("points", idx_comp(ib, sizeof ib, i));
        const halo_json *pv = pts->items[i];
        if (pv->type != HALO_JSON_OBJECT || pv->len == 0) {
            return halo_sweep_ferr(
                c, &q, "%s, expected a table of settings { [\"run.depth\"] = 0 }",
                pv->type == HALO_JSON_ARRAY && pv->len == 0 ? "an empty table"
                                                            : halo_sweep_type_name(pv));
        }
        for (size_t j = 0; j < pv->len; j++) {
            halo_sweep_fpath r = fp3("points", ib, pv->keys[j]);
            HALO_CHECK(check_axis_name(c, &r, pv->keys[j]));
            if (axis_find(x->ax, x->nax, pv->keys[j]) < 0) {
                x->ax = halo_realloc(x->ax, (size_t)(x->nax + 1) * sizeof *x->ax);
                axis a = {halo_strdup(pv->keys[j]), NULL, NULL, 0, false};
                x->ax[x->nax++] = a;
            }
        }
    }
    return 0;
}

/* columns -> every axis, by name; the listed axes are sorted by name for the product too */
static void rule_columns(expand *x, halo_sweep_exp *e)
{
    qsort(x->ax, (size_t)x->nlisted, sizeof *x->ax, cmp_axis);
    e->axes = HALO_NEW(char *, x->nax + 1);
    for (int i = 0; i < x->nax; i++) {
        e->axes[i] = halo_strdup(x->ax[i].name);
    }
    e->naxes = x->nax;
    qsort(e->axes, (size_t)x->nax, sizeof *e->axes, cmp_str);
}

/* ---- settling a point: cluster, parts, checks, cache keys ---- */

/* A loaded profile's shape (profiles are loaded once per path). */
typedef struct prof_seen {
    char path[1024]; /* resolved path */
    int machines;    /* its machines */
    int trainers;    /* its trainers per machine */
} prof_seen;

/* A policy setting names a file that must exist: a path (with '/' or ending in .lua) as
 * given; trace policies may also be a name of policies/NAME.lua. */
static int check_policy(const halo_sweep_ctx *c, const char *key, const char *val, bool names_ok)
{
    if (strchr(val, '/') != NULL || strstr(val, ".lua") != NULL || !names_ok) {
        if (!halo_path_exists(val)) {
            return halo_sweep_kv_err(c, key, "policy file %s: no such file", val);
        }
        return 0;
    }
    char p[1200];
    snprintf(p, sizeof p, "policies/%s.lua", val);
    if (!halo_path_exists(p)) {
        snprintf(p, sizeof p, "%s/policies/%s.lua", HALO_ROOT, val);
        if (!halo_path_exists(p)) {
            return halo_sweep_kv_err(c, key, "policy %s: neither a file nor policies/%s.lua", val,
                                     val);
        }
    }
    return 0;
}

/* A whole number >= 1 from a setting (0 when absent). */
static int kv_count(const halo_sweep_ctx *c, const kvlist *l, const char *key, int *out)
{
    *out = 0;
    const halo_sweep_kv *v = kv_find(l, key);
    if (v == NULL) {
        return 0;
    }
    double d;
    if (!halo_sweep_is_num(v->val, &d) || d != floor(d) || d < 1 || d > 1e6) {
        return halo_sweep_kv_err(c, key, "\"%s\", expected a whole number >= 1", v->val);
    }
    *out = (int)d;
    return 0;
}

/* The shape of the cluster profile at path (loaded once per path, then remembered in x). */
static int profile_shape(const halo_sweep_ctx *c, expand *x, const char *path, prof_seen **out)
{
    int k = 0;
    while (k < x->nprof && strcmp(x->prof[k].path, path) != 0) {
        k++;
    }
    if (k == x->nprof) {
        halo_sim_profile *prof = HALO_NEW(halo_sim_profile, 1);
        int rc = halo_sim_profile_load(path, prof);
        if (rc < 0) {
            char msg[1500];
            snprintf(msg, sizeof msg, "%s", halo_errmsg());
            halo_free(prof);
            return halo_sweep_kv_err(c, "run.cluster", "%s", msg);
        }
        x->prof = halo_realloc(x->prof, (size_t)(x->nprof + 1) * sizeof *x->prof);
        snprintf(x->prof[k].path, sizeof x->prof[k].path, "%s", path);
        x->prof[k].machines = prof->machines;
        x->prof[k].trainers = prof->trainers;
        x->nprof++;
        halo_free(prof);
    }
    *out = &x->prof[k];
    return 0;
}

/* run.cluster (sim mode) -> the profile's path in pt->cluster (a NAME is
 * experiments/clusters/NAME.lua, here or under the source tree), and the machines and trainers
 * it implies where the settings leave them 0 (parts = machines x trainers). */
static int settle_cluster(const halo_sweep_ctx *c, expand *x, const char *v, int parts,
                          halo_sweep_point *pt, int *machines, int *trainers)
{
    if (strchr(v, '/') != NULL || strstr(v, ".lua") != NULL) {
        snprintf(pt->cluster, sizeof pt->cluster, "%s", v);
    } else {
        snprintf(pt->cluster, sizeof pt->cluster, "experiments/clusters/%s.lua", v);
        if (!halo_path_exists(pt->cluster)) {
            snprintf(pt->cluster, sizeof pt->cluster, "%s/experiments/clusters/%s.lua", HALO_ROOT,
                     v);
        }
    }
    if (!halo_path_exists(pt->cluster)) {
        if (strcmp(pt->cluster, v) == 0) {
            return halo_sweep_kv_err(c, "run.cluster", "cluster profile %s: no such file", v);
        }
        return halo_sweep_kv_err(c, "run.cluster",
                                 "cluster profile \"%s\": no such file "
                                 "experiments/clusters/%s.lua",
                                 v, v);
    }
    prof_seen *shape = NULL;
    HALO_CHECK(profile_shape(c, x, pt->cluster, &shape));
    if (*trainers == 0) {
        *trainers = shape->trainers;
    }
    if (*machines == 0 && parts > 0) {
        if (parts % *trainers != 0) {
            return halo_sweep_kv_err(c, "partition.parts",
                                     "%d parts are not a whole number of "
                                     "machines of %d trainers (set run.trainers or run.machines)",
                                     parts, *trainers);
        }
        *machines = parts / *trainers;
    } else if (*machines == 0) {
        *machines = shape->machines;
    }
    return 0;
}

/* partition.parts, run.machines, run.trainers, run.cluster -> pt's parts, machines, trainers
 * and cluster; the parts (and multilevel's machines) are written back to l. */
static int settle_parts(const halo_sweep_ctx *c, expand *x, int mode, kvlist *l,
                        halo_sweep_point *pt)
{
    int parts, machines, trainers;
    HALO_CHECK(kv_count(c, l, "partition.parts", &parts));
    HALO_CHECK(kv_count(c, l, "run.machines", &machines));
    HALO_CHECK(kv_count(c, l, "run.trainers", &trainers));
    const halo_sweep_kv *cl = kv_find(l, "run.cluster");
    pt->cluster[0] = '\0';
    if (cl != NULL && mode == HALO_SWEEP_SIM) {
        HALO_CHECK(settle_cluster(c, x, cl->val, parts, pt, &machines, &trainers));
    } else if (mode == HALO_SWEEP_SIM && (machines > 0 || trainers > 0)) {
        return halo_sweep_kv_err(c, machines > 0 ? "run.machines" : "run.trainers",
                                 "needs run.cluster (a simulation without a profile only counts)");
    }
    if (parts == 0 && (machines > 0 || trainers > 0)) {
        parts = (machines > 0 ? machines : 1) * (trainers > 0 ? trainers : 1);
    }
    if (parts == 0) {
        return halo_sweep_kv_err(c, "partition.parts", "missing (the number of parts: ranks)");
    }
    if (mode == HALO_SWEEP_SIM && pt->cluster[0] && machines * trainers != parts) {
        return halo_sweep_kv_err(c, "partition.parts",
                                 "%d parts, but %d machines x %d trainers = %d ranks", parts,
                                 machines, trainers, machines * trainers);
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
    return 0;
}

/* The files a point's settings name exist: its policies (trace mode needs trace.policy) and
 * graph.dir. */
static int settle_files(const halo_sweep_ctx *c, int mode, const kvlist *l)
{
    const halo_sweep_kv *pol;
    if ((pol = kv_find(l, "run.policy")) != NULL && mode != HALO_SWEEP_TRACE) {
        HALO_CHECK(check_policy(c, "run.policy", pol->val, false));
    }
    if ((pol = kv_find(l, "partition.policy")) != NULL) {
        HALO_CHECK(check_policy(c, "partition.policy", pol->val, false));
    }
    if (mode == HALO_SWEEP_TRACE) {
        if ((pol = kv_find(l, "trace.policy")) == NULL) {
            return halo_sweep_kv_err(c, "trace.policy",
                                     "missing (trace mode replays a policy: "
                                     "trace.policy, trace.policies or a sweep over trace.policy)");
        }
        HALO_CHECK(check_policy(c, "trace.policy", pol->val, true));
    }
    const halo_sweep_kv *g = kv_find(l, "graph.dir");
    if (g != NULL && !halo_is_dir(g->val)) {
        return halo_sweep_kv_err(c, "graph.dir", "%s: no such graph directory", g->val);
    }
    return 0;
}

/* A cache key "PREFIX-HEX" in out: the hash of from, then of each setting of l (sorted) whose
 * key starts with section. */
static void section_key(const kvlist *l, const char *from, const char *section, const char *prefix,
                        char *out, size_t size)
{
    size_t n = strlen(section);
    uint64_t h = halo_sweep_hash(HALO_SWEEP_HASH0, from);
    for (int i = 0; i < l->n; i++) {
        if (strncmp(l->v[i].key, section, n) == 0) {
            h = halo_sweep_hash(halo_sweep_hash(h, l->v[i].key), l->v[i].val);
        }
    }
    char hex[17];
    halo_sweep_hex(h, hex);
    snprintf(out, size, "%s-%s", prefix, hex);
}

/* The cache keys of a point: its graph (graph.*), its partition (the graph key and
 * partition.*) and its trace (the partition key and what the recording depends on). */
static void settle_keys(kvlist *l, halo_sweep_point *pt)
{
    qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_kv);
    section_key(l, "graph", "graph.", "g", pt->gkey, sizeof pt->gkey);
    section_key(l, pt->gkey, "partition.", "p", pt->pkey, sizeof pt->pkey);
    static const char *const rec[] = {"run.fanouts", "run.batch",         "run.epochs",
                                      "run.seed",    "trace.max_batches", NULL};
    uint64_t th = halo_sweep_hash(HALO_SWEEP_HASH0, pt->pkey);
    for (int i = 0; rec[i] != NULL; i++) {
        const halo_sweep_kv *v = kv_find(l, rec[i]);
        th = halo_sweep_hash(halo_sweep_hash(th, rec[i]), v ? v->val : "");
    }
    char hex[17];
    halo_sweep_hex(th, hex);
    snprintf(pt->tkey, sizeof pt->tkey, "t-%s", hex);
}

/* Adds the points of one configuration (settings l, repeated) to e, each settled: parts,
 * cluster, the files it names checked, its cache keys and its own key. */
static int add_config(const halo_sweep_ctx *c, expand *x, halo_sweep_exp *e, kvlist *l)
{
    if (e->npts + e->repeat > MAX_POINTS) {
        halo_sweep_fpath p = fp1("sweep");
        return halo_sweep_ferr(c, &p, "more than %d points", MAX_POINTS);
    }
    halo_sweep_point proto;
    memset(&proto, 0, sizeof proto);
    HALO_CHECK(settle_parts(c, x, e->mode, l, &proto));
    HALO_CHECK(settle_files(c, e->mode, l));
    settle_keys(l, &proto);
    e->pts = halo_realloc(e->pts, (size_t)(e->npts + e->repeat) * sizeof *e->pts);
    for (int r = 0; r < e->repeat; r++) {
        halo_sweep_point *p = &e->pts[e->npts++];
        *p = proto;
        p->index = e->nconfigs;
        p->rep = r;
        p->kv = HALO_NEW(halo_sweep_kv, l->n + 1);
        p->nkv = l->n;
        uint64_t h = halo_sweep_hash(HALO_SWEEP_HASH0, halo_sweep_mode_name(e->mode));
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

/* product -> the listed axes' values crossed, the first axis outermost: one configuration each,
 * the defaults with the axes' values over them (no axis: the defaults alone) */
static int rule_product(const halo_sweep_ctx *c, expand *x, halo_sweep_exp *e)
{
    int64_t total = 1;
    for (int i = 0; i < x->nlisted; i++) {
        total *= x->ax[i].n;
        if (total > MAX_POINTS) {
            halo_sweep_fpath p = fp1("sweep");
            return halo_sweep_ferr(c, &p, "more than %d points", MAX_POINTS);
        }
    }
    for (int64_t k = 0; k < total; k++) {
        kvlist cur;
        kv_copy(&cur, &x->defaults);
        int64_t rest = k;
        for (int i = x->nlisted - 1; i >= 0; i--) {
            int j = (int)(rest % x->ax[i].n);
            rest /= x->ax[i].n;
            kv_set(&cur, x->ax[i].name, x->ax[i].val[j], x->ax[i].type[j]);
        }
        int rc = add_config(c, x, e, &cur);
        kv_free(&cur);
        HALO_CHECK(rc);
    }
    return 0;
}

/* points[i] -> the defaults with the point's settings over them: one configuration each */
static int rule_points(const halo_sweep_ctx *c, const halo_json *pts, expand *x, halo_sweep_exp *e)
{
    for (size_t i = 0; i < pts->len; i++) {
        const halo_json *pv = pts->items[i];
        kvlist cur;
        kv_copy(&cur, &x->defaults);
        for (size_t j = 0; j < pv->len; j++) {
            halo_sb sb;
            halo_sb_init(&sb);
            int t;
            if (halo_sweep_canon(pv->items[j], &sb, &t) < 0) {
                char ib[24];
                halo_sweep_fpath r = fp3("points", idx_comp(ib, sizeof ib, i), pv->keys[j]);
                halo_sb_free(&sb);
                kv_free(&cur);
                return halo_sweep_ferr(
                    c, &r, "%s, expected a number, a string, a boolean or a list of them",
                    halo_sweep_type_name(pv->items[j]));
            }
            kv_set(&cur, pv->keys[j], sb.buf, t);
            halo_sb_free(&sb);
        }
        int rc = add_config(c, x, e, &cur);
        kv_free(&cur);
        HALO_CHECK(rc);
    }
    return 0;
}

/* graph -> exactly one of gen, preset, import (with src) or dir, in every point */
static int check_graph_source(const halo_sweep_ctx *c, const halo_sweep_exp *e)
{
    for (int i = 0; i < e->npts; i++) {
        const halo_sweep_point *p = &e->pts[i];
        int ways =
            (halo_sweep_get(p, "graph.gen") != NULL) + (halo_sweep_get(p, "graph.preset") != NULL) +
            (halo_sweep_get(p, "graph.import") != NULL) + (halo_sweep_get(p, "graph.dir") != NULL);
        if (ways != 1) {
            halo_sweep_fpath q = fp1("graph");
            return halo_sweep_ferr(c, &q,
                                   "%s (give exactly one of gen = \"sbm\"|\"rmat\", preset = NAME, "
                                   "import = \"ogb\"|\"edgelist\" with src = PATH, dir = PATH)",
                                   ways == 0 ? "no graph source" : "more than one graph source");
        }
        if (halo_sweep_get(p, "graph.import") != NULL && halo_sweep_get(p, "graph.src") == NULL) {
            halo_sweep_fpath q = fp2("graph", "src");
            return halo_sweep_ferr(c, &q, "missing (import needs the dataset: src = PATH)");
        }
    }
    return 0;
}

/* experiment -> sections [sweep] [trace lists] [points]: the configurations of the product of
 * the listed axes, then one per explicit point, each repeated e->repeat times */
int halo_sweep_expand(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e)
{
    int rc = 0;
    expand x;
    memset(&x, 0, sizeof x);
    for (int s = 0; sections[s] != NULL; s++) {
        HALO_TRY(flatten_section(c, root, sections[s], e->mode, &x.defaults));
    }
    if (halo_json_get(root, "graph") == NULL) {
        halo_sweep_fpath p = fp1("graph");
        rc = halo_sweep_ferr(c, &p,
                             "missing (gen = \"sbm\", preset = \"products\", import = \"ogb\" or "
                             "dir = \"PATH\")");
        goto fail;
    }
    HALO_TRY(rule_sweep(c, root, &x));
    if (e->mode == HALO_SWEEP_TRACE) {
        HALO_TRY(rule_trace(c, root, &x));
    }
    x.nlisted = x.nax;
    const halo_json *pts = halo_json_get(root, "points");
    if (pts != NULL) {
        HALO_TRY(rule_point_axes(c, pts, &x));
    }
    rule_columns(&x, e);
    if (x.nlisted > 0 || pts == NULL) {
        HALO_TRY(rule_product(c, &x, e));
    }
    if (pts != NULL) {
        HALO_TRY(rule_points(c, pts, &x, e));
    }
    HALO_TRY(check_graph_source(c, e));
fail:
    kv_free(&x.defaults);
    axes_free(x.ax, x.nax);
    halo_free(x.prof);
    return rc;
}
