/* The space `halo sim validate` draws configurations from: the documented default, a Lua space
 * file over it, and the seeded draw. */
#include "sweep/validate.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/rng.h"
#include "policy/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The purpose key of the draw's random stream ("validate"). */
#define VSPACE_PURPOSE 0x76616c6964617465ull

/* A shipped policy of the default space and the values of the parameters drawn for it (the
 * fanout, depth and sampler-thread parameters are not drawn: the space's axes set them). */
typedef struct vpolicy_def {
    const char *name;   /* policies/NAME.lua */
    const char *param;  /* parameter drawn (NULL: none) */
    double vals[4];     /* its values (0-terminated) */
    const char *param2; /* a second parameter (NULL: none) */
    double vals2[4];    /* its values (0-terminated) */
} vpolicy_def;

static const vpolicy_def default_policies[] = {
    {"default", NULL, {0}, NULL, {0}},
    {"distdgl", NULL, {0}, NULL, {0}},
    {"distdglv2", NULL, {0}, NULL, {0}},
    {"massivegnn", "f", {0.1, 0.25, 0.5, 0}, "delta", {2, 8, 25, 0}},
    {"belady", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {"pagraph", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {"vip", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {"fifo", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {"lru", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {"lfu", "f", {0.1, 0.25, 0.5, 0}, NULL, {0}},
    {NULL, NULL, {0}, NULL, {0}},
};

/* Sets ch to the n values of v. */
static void choices(halo_vchoice *ch, const double *v, int n)
{
    ch->n = n;
    for (int i = 0; i < n; i++) {
        ch->v[i] = v[i];
    }
}

#define CHOICES(ch, ...)                                                                           \
    do {                                                                                           \
        const double v_[] = {__VA_ARGS__};                                                         \
        choices(ch, v_, (int)(sizeof v_ / sizeof v_[0]));                                          \
    } while (0)

/* Adds one policy file to s (name: its base name without .lua). */
static int add_policy(halo_vspace *s, const char *file, const char *where)
{
    if (s->npolicies == HALO_VSPACE_MAX) {
        return halo_errorf(HALO_EINPUT, "%s: more than %d policies", where, HALO_VSPACE_MAX);
    }
    if (!halo_path_exists(file)) {
        return halo_errorf(HALO_EINPUT, "%s: policy file %s not found", where, file);
    }
    halo_vpolicy *p = &s->policies[s->npolicies++];
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "%s", file);
    const char *b = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t n = strlen(b) > 4 && strcmp(b + strlen(b) - 4, ".lua") == 0 ? strlen(b) - 4 : strlen(b);
    snprintf(p->name, sizeof p->name, "%.*s", (int)n, b);
    return 0;
}

int halo_vspace_default(halo_vspace *s, int cores, const char *policy_dir)
{
    memset(s, 0, sizeof *s);
    s->epochs = 5;
    halo_vgraph *g = s->graphs;
    g[0].kind = HALO_VGRAPH_SBM;
    CHOICES(&g[0].size, 20000, 40000);
    g[1].kind = HALO_VGRAPH_RMAT;
    CHOICES(&g[1].size, 15, 16);
    g[2].kind = HALO_VGRAPH_PRESET;
    snprintf(g[2].preset, sizeof g[2].preset, "arxiv");
    CHOICES(&g[2].size, 0.1, 0.2);
    g[3].kind = HALO_VGRAPH_PRESET;
    snprintf(g[3].preset, sizeof g[3].preset, "products");
    CHOICES(&g[3].size, 0.02, 0.04);
    s->ngraphs = 4;
    CHOICES(&s->feat_dim, 16, 32, 64, 128);
    int hi = 2 * (cores > 1 ? cores : 1);
    s->ranks.n = 0;
    for (int r = 2; r <= hi && s->ranks.n < HALO_VSPACE_MAX; r++) {
        s->ranks.v[s->ranks.n++] = r;
    }
    CHOICES(&s->layers, 2, 3);
    CHOICES(&s->fanout, 3, 5, 10);
    CHOICES(&s->hidden, 16, 32, 64, 128, 256);
    CHOICES(&s->batch, 64, 128, 256);
    CHOICES(&s->depth, 0, 1, 2, 3, 4);
    CHOICES(&s->sampler_threads, 1, 2);
    s->nnetem = 2;
    snprintf(s->netem[0], sizeof s->netem[0], "off");
    snprintf(s->netem[1], sizeof s->netem[1], "lat=1ms,bw=1Gbit");
    for (const vpolicy_def *d = default_policies; d->name != NULL; d++) {
        char file[1100];
        snprintf(file, sizeof file, "%s/%s.lua", policy_dir, d->name);
        HALO_CHECK(add_policy(s, file, "default space"));
        halo_vpolicy *p = &s->policies[s->npolicies - 1];
        const char *names[2] = {d->param, d->param2};
        const double *vals[2] = {d->vals, d->vals2};
        for (int k = 0; k < 2 && names[k] != NULL; k++) {
            snprintf(p->param[p->nparams], sizeof p->param[0], "%s", names[k]);
            int n = 0;
            while (n < 4 && vals[k][n] != 0) {
                n++;
            }
            choices(&p->val[p->nparams++], vals[k], n);
        }
    }
    return 0;
}

/* Reads a list of numbers (or one number) at key into ch; lo..hi bound each value, whole
 * values only when whole. Absent: ch unchanged. */
static int read_choices(const halo_json *top, const char *key, const char *path, double lo,
                        double hi, bool whole, halo_vchoice *ch)
{
    const halo_json *v = halo_json_get(top, key);
    if (v == NULL) {
        return 0;
    }
    const halo_json *one[1] = {v};
    const halo_json *const *items = v->type == HALO_JSON_ARRAY ? (const halo_json *const *)v->items
                                                              : one;
    size_t n = v->type == HALO_JSON_ARRAY ? v->len : 1;
    if (n == 0 || n > HALO_VSPACE_MAX) {
        return halo_errorf(HALO_EINPUT, "%s: field %s: give 1 to %d values", path, key,
                           HALO_VSPACE_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        double x = items[i]->number;
        if (items[i]->type != HALO_JSON_NUMBER || !(x >= lo && x <= hi) ||
            (whole && x != floor(x))) {
            return halo_errorf(HALO_EINPUT, "%s: field %s: values must be %snumbers in %g..%g",
                               path, key, whole ? "whole " : "", lo, hi);
        }
        ch->v[i] = x;
    }
    ch->n = (int)n;
    return 0;
}

/* Reads one entry of `graphs` into g. */
static int read_graph(const halo_json *e, const char *path, size_t i, halo_vgraph *g)
{
    char where[1200];
    snprintf(where, sizeof where, "%s: field graphs[%zu]", path, i + 1);
    if (e->type != HALO_JSON_OBJECT) {
        return halo_errorf(HALO_EINPUT, "%s: a table { family = ... } expected", where);
    }
    memset(g, 0, sizeof *g);
    const halo_json *fam = halo_json_get(e, "family"), *pre = halo_json_get(e, "preset");
    const halo_json *edges = halo_json_get(e, "edges");
    const char *sizekey = "nodes";
    double lo = 100, hi = 2e6;
    bool whole = true;
    if (edges != NULL && edges->type == HALO_JSON_STRING && fam == NULL && pre == NULL) {
        g->kind = HALO_VGRAPH_EDGES;
        snprintf(g->path, sizeof g->path, "%s", edges->string);
        if (!halo_path_exists(g->path)) {
            return halo_errorf(HALO_EINPUT, "%s: edge list %s not found", where, g->path);
        }
        g->size.n = 1;
        return e->len == 1 ? 0 : halo_errorf(HALO_EINPUT, "%s: an edge list takes only edges",
                                             where);
    } else if (pre != NULL && pre->type == HALO_JSON_STRING && fam == NULL) {
        g->kind = HALO_VGRAPH_PRESET;
        if (strcmp(pre->string, "arxiv") != 0 && strcmp(pre->string, "products") != 0) {
            return halo_errorf(HALO_EINPUT, "%s: preset \"%s\" (want arxiv or products)", where,
                               pre->string);
        }
        snprintf(g->preset, sizeof g->preset, "%s", pre->string);
        sizekey = "scale", lo = 1e-4, hi = 0.2, whole = false;
    } else if (fam != NULL && fam->type == HALO_JSON_STRING && pre == NULL &&
               (strcmp(fam->string, "sbm") == 0 || strcmp(fam->string, "rmat") == 0)) {
        g->kind = fam->string[0] == 's' ? HALO_VGRAPH_SBM : HALO_VGRAPH_RMAT;
        if (g->kind == HALO_VGRAPH_RMAT) {
            sizekey = "scale", lo = 7, hi = 20;
        }
    } else {
        return halo_errorf(HALO_EINPUT, "%s: give family = \"sbm\" or \"rmat\", preset = "
                           "\"arxiv\" or \"products\", or edges = FILE", where);
    }
    for (size_t k = 0; k < e->len; k++) {
        const char *key = e->keys[k];
        if (strcmp(key, "family") != 0 && strcmp(key, "preset") != 0 &&
            strcmp(key, sizekey) != 0) {
            return halo_errorf(HALO_EINPUT, "%s: unknown field %s (this graph takes %s)", where,
                               key, sizekey);
        }
    }
    g->size.n = 0;
    HALO_CHECK(read_choices(e, sizekey, where, lo, hi, whole, &g->size));
    if (g->size.n == 0) {
        return halo_errorf(HALO_EINPUT, "%s: field %s missing", where, sizekey);
    }
    return 0;
}

/* Reads the `policies` list: { file = F, set = { NAME = {values} } } entries. */
static int read_policies(const halo_json *v, const char *path, halo_vspace *s)
{
    if (v->type != HALO_JSON_ARRAY || v->len == 0) {
        return halo_errorf(HALO_EINPUT, "%s: field policies: a list of { file = F, set = {...} } "
                           "expected", path);
    }
    s->npolicies = 0;
    for (size_t i = 0; i < v->len; i++) {
        char where[1200];
        snprintf(where, sizeof where, "%s: field policies[%zu]", path, i + 1);
        const halo_json *e = v->items[i], *file = halo_json_get(e, "file");
        const halo_json *set = halo_json_get(e, "set");
        if (e->type != HALO_JSON_OBJECT || file == NULL || file->type != HALO_JSON_STRING ||
            e->len != 1u + (set != NULL)) {
            return halo_errorf(HALO_EINPUT, "%s: { file = F, set = {...} } expected", where);
        }
        HALO_CHECK(add_policy(s, file->string, where));
        halo_vpolicy *p = &s->policies[s->npolicies - 1];
        if (set == NULL) {
            continue;
        }
        if (set->type != HALO_JSON_OBJECT || set->len > HALO_VPARAM_MAX) {
            return halo_errorf(HALO_EINPUT, "%s: set: a table NAME = {values} of at most %d "
                               "parameters expected", where, HALO_VPARAM_MAX);
        }
        for (size_t k = 0; k < set->len; k++) {
            snprintf(p->param[k], sizeof p->param[0], "%s", set->keys[k]);
            HALO_CHECK(read_choices(set, set->keys[k], where, -1e9, 1e9, false, &p->val[k]));
            p->nparams++;
        }
    }
    return 0;
}

/* Reads the `netem` list of strings ("off" or a --netem SPEC). */
static int read_netem(const halo_json *v, const char *path, halo_vspace *s)
{
    if (v->type != HALO_JSON_ARRAY || v->len == 0 || v->len > HALO_VSPACE_MAX) {
        return halo_errorf(HALO_EINPUT, "%s: field netem: a list of \"off\" or SPEC strings "
                           "expected", path);
    }
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i]->type != HALO_JSON_STRING || v->items[i]->string[0] == '\0' ||
            strlen(v->items[i]->string) >= sizeof s->netem[0]) {
            return halo_errorf(HALO_EINPUT, "%s: field netem[%zu]: a string \"off\" or a "
                               "--netem SPEC expected", path, i + 1);
        }
        snprintf(s->netem[i], sizeof s->netem[0], "%s", v->items[i]->string);
    }
    s->nnetem = (int)v->len;
    return 0;
}

static const char *const space_keys[] = {
    "epochs", "graphs", "feat_dim", "ranks", "layers", "fanout", "hidden", "batch",
    "depth", "sampler_threads", "netem", "policies", NULL};

/* The numeric axes of the file. */
static int read_axes(const halo_json *top, const char *path, halo_vspace *s)
{
    halo_vchoice ep = {.n = 0};
    HALO_CHECK(read_choices(top, "epochs", path, 2, 100, true, &ep));
    if (ep.n > 1) {
        return halo_errorf(HALO_EINPUT, "%s: field epochs: one number expected", path);
    }
    s->epochs = ep.n == 1 ? (int)ep.v[0] : s->epochs;
    HALO_CHECK(read_choices(top, "feat_dim", path, 1, 4096, true, &s->feat_dim));
    HALO_CHECK(read_choices(top, "ranks", path, 1, 256, true, &s->ranks));
    HALO_CHECK(read_choices(top, "layers", path, 1, 4, true, &s->layers));
    HALO_CHECK(read_choices(top, "fanout", path, 1, 1000, true, &s->fanout));
    HALO_CHECK(read_choices(top, "hidden", path, 1, 8192, true, &s->hidden));
    HALO_CHECK(read_choices(top, "batch", path, 1, 1e7, true, &s->batch));
    HALO_CHECK(read_choices(top, "depth", path, 0, 64, true, &s->depth));
    return read_choices(top, "sampler_threads", path, 1, 64, true, &s->sampler_threads);
}

int halo_vspace_load(const char *path, halo_vspace *s)
{
    halo_json *top = NULL;
    HALO_CHECK(halo_policy_load_data(path, &top));
    int rc = 0;
    if (top->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT, "%s: the file returns no table of fields", path);
    }
    for (size_t i = 0; rc == 0 && i < top->len; i++) {
        bool known = false;
        for (int k = 0; space_keys[k] != NULL && !known; k++) {
            known = strcmp(top->keys[i], space_keys[k]) == 0;
        }
        if (!known) {
            rc = halo_errorf(HALO_EINPUT, "%s: field %s: unknown (a space takes epochs, graphs, "
                             "feat_dim, ranks, layers, fanout, hidden, batch, depth, "
                             "sampler_threads, netem, policies)", path, top->keys[i]);
        }
    }
    rc = rc < 0 ? rc : read_axes(top, path, s);
    const halo_json *g = halo_json_get(top, "graphs");
    if (rc == 0 && g != NULL) {
        if (g->type != HALO_JSON_ARRAY || g->len == 0 || g->len > HALO_VSPACE_MAX) {
            rc = halo_errorf(HALO_EINPUT, "%s: field graphs: a list of 1 to %d graphs expected",
                             path, HALO_VSPACE_MAX);
        }
        for (size_t i = 0; rc == 0 && i < g->len; i++) {
            rc = read_graph(g->items[i], path, i, &s->graphs[i]);
        }
        s->ngraphs = rc == 0 ? (int)g->len : s->ngraphs;
    }
    const halo_json *ne = halo_json_get(top, "netem"), *po = halo_json_get(top, "policies");
    rc = rc < 0 || ne == NULL ? rc : read_netem(ne, path, s);
    rc = rc < 0 || po == NULL ? rc : read_policies(po, path, s);
    halo_json_free(top);
    return rc;
}

int halo_vspace_add_edges(halo_vspace *s, const char *path)
{
    if (s->ngraphs == HALO_VSPACE_MAX) {
        return halo_errorf(HALO_EINPUT, "--edges: the space has %d graphs already",
                           HALO_VSPACE_MAX);
    }
    if (!halo_path_exists(path) || strlen(path) >= sizeof s->graphs[0].path) {
        return halo_errorf(HALO_EINPUT, "--edges %s: no such file", path);
    }
    halo_vgraph *g = &s->graphs[s->ngraphs++];
    memset(g, 0, sizeof *g);
    g->kind = HALO_VGRAPH_EDGES;
    g->size.n = 1;
    snprintf(g->path, sizeof g->path, "%s", path);
    return 0;
}

/* One of ch's values. */
static double pick(halo_rng *r, const halo_vchoice *ch)
{
    return ch->v[halo_rng_below(r, (uint64_t)ch->n)];
}

void halo_vspace_draw(const halo_vspace *s, uint64_t seed, int i, halo_vconfig *c)
{
    halo_rng r;
    halo_rng_init(&r, seed, VSPACE_PURPOSE, (uint64_t)i, 0, 0);
    memset(c, 0, sizeof *c);
    c->index = i;
    c->graph = (int)halo_rng_below(&r, (uint64_t)s->ngraphs);
    const halo_vgraph *g = &s->graphs[c->graph];
    c->size = g->kind == HALO_VGRAPH_EDGES ? 0 : pick(&r, &g->size);
    c->feat_dim = (int)pick(&r, &s->feat_dim);
    c->ranks = (int)pick(&r, &s->ranks);
    c->layers = (int)pick(&r, &s->layers);
    for (int l = 0; l < c->layers; l++) {
        c->fanout[l] = (int)pick(&r, &s->fanout);
    }
    c->hidden = (int)pick(&r, &s->hidden);
    c->batch = (int)pick(&r, &s->batch);
    c->policy = (int)halo_rng_below(&r, (uint64_t)s->npolicies);
    const halo_vpolicy *p = &s->policies[c->policy];
    for (int k = 0; k < p->nparams; k++) {
        c->pval[k] = pick(&r, &p->val[k]);
    }
    c->depth = (int)pick(&r, &s->depth);
    c->sampler_threads = (int)pick(&r, &s->sampler_threads);
    c->netem = (int)halo_rng_below(&r, (uint64_t)s->nnetem);
}

void halo_vconfig_graph_label(const halo_vspace *s, const halo_vconfig *c, char *buf,
                              size_t size)
{
    const halo_vgraph *g = &s->graphs[c->graph];
    switch (g->kind) {
    case HALO_VGRAPH_SBM: snprintf(buf, size, "sbm-%g/f%d", c->size, c->feat_dim); break;
    case HALO_VGRAPH_RMAT: snprintf(buf, size, "rmat-%g/f%d", c->size, c->feat_dim); break;
    case HALO_VGRAPH_PRESET: snprintf(buf, size, "%s-%g", g->preset, c->size); break;
    default: {
        const char *b = strrchr(g->path, '/') ? strrchr(g->path, '/') + 1 : g->path;
        snprintf(buf, size, "edges:%s/f%d", b, c->feat_dim);
    }
    }
}

void halo_vconfig_policy_label(const halo_vspace *s, const halo_vconfig *c, char *buf,
                               size_t size)
{
    const halo_vpolicy *p = &s->policies[c->policy];
    size_t n = (size_t)snprintf(buf, size, "%s", p->name);
    for (int k = 0; k < p->nparams && n < size; k++) {
        n += (size_t)snprintf(buf + n, size - n, " %s=%g", p->param[k], c->pval[k]);
    }
}
