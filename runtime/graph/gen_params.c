/* The parameters of a generated graph: the model defaults, the OGB-shaped presets, their checks,
 * the split sizes and the source record written to meta.json. */
#include "graph/gen.h"

#include "core/err.h"
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A preset: the shape of an OGB node-property dataset. */
typedef struct gen_preset {
    const char *name;     /* as typed after --preset */
    const char *alias;    /* second accepted name or NULL */
    int64_t nodes;        /* real node count */
    double degree;        /* mean in-degree of the symmetrised graph */
    double homophily;     /* mean fraction of in-edges from the node's own class */
    double homophily_sd;  /* its spread over nodes (see halo_gen_params.homophily_sd) */
    double affinity;      /* share of other-class edges from the twin class (c xor 1) */
    double label_noise;   /* fraction of nodes with a uniform random label */
    double twin_corr;     /* correlation of twin classes' feature means */
    double skew;          /* degree spread (see halo_gen_params.skew) */
    int feat_dim;         /* feature width */
    int classes;          /* label classes */
    double noise;         /* feature noise */
    int64_t train, valid, test; /* real split sizes */
    bool label_split_only; /* unlabelled outside the splits */
} gen_preset;

/* Sizes from docs/distdgl.md and the OGB dataset pages. The noise, homophily
 * spread, twin affinity, twin correlation and label noise are calibrated (docs/graph.md, "Accuracy") so that the
 * 2-layer GraphSAGE of `halo train` and the same model on features alone (--fanouts 0,0) land
 * near the OGB leaderboard figures of GraphSAGE and MLP: arxiv 0.71 / 0.55, products
 * 0.79 / 0.61, papers100M 0.66 / 0.47. */
static const gen_preset presets[] = {
    {.name = "arxiv", .alias = "ogbn-arxiv", .nodes = 169343, .degree = 2.0 * 1166243 / 169343,
     .homophily = 0.65, .homophily_sd = 0.3, .affinity = 0.8, .twin_corr = 0.9,
     .label_noise = 0.12, .skew = 1.0, .feat_dim = 128, .classes = 40, .noise = 1.6,
     .train = 90941, .valid = 29799, .test = 48603, .label_split_only = false},
    {.name = "products", .alias = "ogbn-products", .nodes = 2449029,
     .degree = 2.0 * 61859140 / 2449029, .homophily = 0.80, .homophily_sd = 0.3,
     .affinity = 0.8, .twin_corr = 0.9, .label_noise = 0.14, .skew = 1.0, .feat_dim = 100,
     .classes = 47, .noise = 1.0, .train = 196615, .valid = 39323, .test = 2213091,
     .label_split_only = false},
    {.name = "papers100M", .alias = "papers", .nodes = 111059956,
     .degree = 2.0 * 1615685872 / 111059956, .homophily = 0.60, .homophily_sd = 0.3,
     .affinity = 0.8, .twin_corr = 0.9, .label_noise = 0.12, .skew = 1.0, .feat_dim = 128,
     .classes = 172, .noise = 1.15, .train = 1207179, .valid = 125265, .test = 214338,
     .label_split_only = true},
};

const char *halo_gen_preset_names(void)
{
    return "arxiv, products, papers100M";
}

void halo_gen_split_sizes(const halo_gen_params *p, int64_t *train, int64_t *valid,
                          int64_t *test)
{
    double n = (double)p->nodes;
    int64_t t = (int64_t)llround(p->train * n), v = (int64_t)llround(p->valid * n);
    int64_t e = (int64_t)llround(p->test * n);
    t = t < p->nodes ? t : p->nodes;
    v = t + v < p->nodes ? v : p->nodes - t;
    e = t + v + e < p->nodes ? e : p->nodes - t - v;
    *train = t;
    *valid = v;
    *test = e;
}

void halo_gen_defaults(int model, halo_gen_params *p)
{
    memset(p, 0, sizeof *p);
    p->model = model;
    p->seed = 1;
    p->a = 0.57;
    p->b = 0.19;
    p->c = 0.19;
    p->directed = false;
    if (model == HALO_GEN_RMAT) {
        snprintf(p->name, sizeof p->name, "rmat");
        p->nodes = 1 << 16;
        p->degree = 16;
        p->classes = 16;
        p->feat_dim = 32;
        p->noise = 2.5;
    } else {
        snprintf(p->name, sizeof p->name, "sbm");
        p->nodes = 10000;
        p->degree_in = 10;
        p->degree_out = 5;
        p->degree = 15;
        p->classes = 8;
        p->feat_dim = 32;
        p->noise = 3.0;
    }
    p->train = 0.6;
    p->valid = 0.2;
    p->test = 0.2;
}

int halo_gen_preset(const char *preset, double scale, halo_gen_params *p)
{
    const gen_preset *ps = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(preset, presets[i].name) == 0 ||
            (presets[i].alias != NULL && strcmp(preset, presets[i].alias) == 0)) {
            ps = &presets[i];
        }
    }
    if (ps == NULL) {
        return halo_errorf(HALO_EUSAGE, "--preset: unknown preset '%s' (known: %s)", preset,
                           halo_gen_preset_names());
    }
    if (!(scale > 0) || scale > 16) {
        return halo_errorf(HALO_EUSAGE, "--scale: %g is not in (0, 16] for a preset", scale);
    }
    halo_gen_defaults(HALO_GEN_SBM, p);
    snprintf(p->preset, sizeof p->preset, "%s", ps->name);
    if (scale == 1.0) {
        snprintf(p->name, sizeof p->name, "%s-like", ps->name);
    } else {
        snprintf(p->name, sizeof p->name, "%s-like-x%g", ps->name, scale);
    }
    p->nodes = (int64_t)llround((double)ps->nodes * scale);
    if (p->nodes < 2 * ps->classes) {
        p->nodes = 2 * ps->classes;
    }
    p->degree = ps->degree;
    p->degree_in = ps->degree * ps->homophily;
    p->degree_out = ps->degree * (1 - ps->homophily);
    p->skew = ps->skew;
    p->homophily_sd = ps->homophily_sd;
    p->affinity = ps->affinity;
    p->label_noise = ps->label_noise;
    p->twin_corr = ps->twin_corr;
    p->feat_dim = ps->feat_dim;
    p->classes = ps->classes;
    p->noise = ps->noise;
    p->label_split_only = ps->label_split_only;
    double n = (double)ps->nodes;
    p->train = (double)ps->train / n;
    p->valid = (double)ps->valid / n;
    p->test = (double)ps->test / n;
    return 0;
}

int halo_gen_check(const halo_gen_params *p)
{
    if (p->model != HALO_GEN_RMAT && p->model != HALO_GEN_SBM) {
        return halo_errorf(HALO_EUSAGE, "gen: unknown model %d", p->model);
    }
    if (p->nodes < 2 || p->nodes > 2147483647LL) {
        return halo_errorf(HALO_EUSAGE, "--nodes: %lld is not in [2, 2^31-1]",
                           (long long)p->nodes);
    }
    if (p->classes < 1 || p->classes > (1 << 20) || p->classes > p->nodes) {
        return halo_errorf(HALO_EUSAGE, "--classes: %d is not in [1, min(2^20, nodes)]",
                           p->classes);
    }
    if (p->feat_dim < 0 || p->feat_dim > 65536) {
        return halo_errorf(HALO_EUSAGE, "--feat-dim: %d is not in [0, 65536]", p->feat_dim);
    }
    if (!(p->noise >= 0) || p->noise > 1e6) {
        return halo_errorf(HALO_EUSAGE, "--noise: %g is not in [0, 1e6]", p->noise);
    }
    if (!(p->twin_corr >= 0 && p->twin_corr <= 1)) {
        return halo_errorf(HALO_EUSAGE, "--twin-corr: %g is not in [0, 1]", p->twin_corr);
    }
    if (!(p->label_noise >= 0 && p->label_noise <= 1)) {
        return halo_errorf(HALO_EUSAGE, "--label-noise: %g is not in [0, 1]", p->label_noise);
    }
    if (!(p->train >= 0 && p->valid >= 0 && p->test >= 0 &&
          p->train + p->valid + p->test <= 1 + 1e-9)) {
        return halo_errorf(HALO_EUSAGE, "--train/--valid/--test: fractions %g, %g, %g must be "
                           ">= 0 and sum to at most 1", p->train, p->valid, p->test);
    }
    if (p->model == HALO_GEN_RMAT) {
        if (!(p->a > 0 && p->b >= 0 && p->c >= 0 && p->a + p->b + p->c <= 1.0 + 1e-12)) {
            return halo_errorf(HALO_EUSAGE, "--a/--b/--c: need a > 0, b, c >= 0, a+b+c <= 1 "
                               "(got %g, %g, %g)", p->a, p->b, p->c);
        }
        if (!(p->degree > 0) || p->degree > 1e5) {
            return halo_errorf(HALO_EUSAGE, "--edge-factor: %g is not in (0, 1e5]", p->degree);
        }
    } else {
        if (!(p->degree_in >= 0) || !(p->degree_out >= 0) || p->degree_in + p->degree_out <= 0 ||
            p->degree_in + p->degree_out > 1e5) {
            return halo_errorf(HALO_EUSAGE, "--degree-in/--degree-out: %g, %g: need both >= 0 "
                               "and 0 < sum <= 1e5", p->degree_in, p->degree_out);
        }
        if (p->classes == 1 && p->degree_in <= 0) {
            return halo_errorf(HALO_EUSAGE, "--degree-in: must be > 0 with one class");
        }
        if (!(p->skew >= 0) || p->skew > 10) {
            return halo_errorf(HALO_EUSAGE, "--skew: %g is not in [0, 10]", p->skew);
        }
        if (!(p->affinity >= 0 && p->affinity <= 1)) {
            return halo_errorf(HALO_EUSAGE, "--affinity: %g is not in [0, 1]", p->affinity);
        }
        double m = p->degree_in / (p->degree_in + p->degree_out);
        if (!(p->homophily_sd >= 0) ||
            (p->homophily_sd > 0 && !(p->homophily_sd * p->homophily_sd < m * (1 - m)))) {
            return halo_errorf(HALO_EUSAGE, "--homophily-sd: %g must be >= 0 and below "
                               "sqrt(h(1-h)) = %.4g for mean homophily h = %.4g",
                               p->homophily_sd, sqrt(m * (1 - m)), m);
        }
    }
    double draws = (double)p->nodes *
                   (p->model == HALO_GEN_RMAT ? p->degree : p->degree_in + p->degree_out);
    if (p->model == HALO_GEN_SBM && !p->directed) {
        draws /= 2;
    }
    if (draws * (p->directed ? 1 : 2) > 1e11) {
        return halo_errorf(HALO_EUSAGE, "gen: %.3g edges is too many", draws);
    }
    return 0;
}

char *halo_gen_source_json(const halo_gen_params *p)
{
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "generator");
    halo_jw_str(&w, p->model == HALO_GEN_RMAT ? "rmat" : "sbm");
    if (p->preset[0]) {
        halo_jw_key(&w, "preset");
        halo_jw_str(&w, p->preset);
    }
    halo_jw_key(&w, "seed");
    halo_jw_i64(&w, (int64_t)p->seed);
    halo_jw_key(&w, "nodes");
    halo_jw_i64(&w, p->nodes);
    if (p->model == HALO_GEN_RMAT) {
        halo_jw_key(&w, "edge_factor");
        halo_jw_f64(&w, p->degree);
        halo_jw_key(&w, "a");
        halo_jw_f64(&w, p->a);
        halo_jw_key(&w, "b");
        halo_jw_f64(&w, p->b);
        halo_jw_key(&w, "c");
        halo_jw_f64(&w, p->c);
    } else {
        halo_jw_key(&w, "degree_in");
        halo_jw_f64(&w, p->degree_in);
        halo_jw_key(&w, "degree_out");
        halo_jw_f64(&w, p->degree_out);
        halo_jw_key(&w, "skew");
        halo_jw_f64(&w, p->skew);
        halo_jw_key(&w, "homophily_sd");
        halo_jw_f64(&w, p->homophily_sd);
        halo_jw_key(&w, "affinity");
        halo_jw_f64(&w, p->affinity);
    }
    halo_jw_key(&w, "classes");
    halo_jw_i64(&w, p->classes);
    halo_jw_key(&w, "feat_dim");
    halo_jw_i64(&w, p->feat_dim);
    if (p->topology_only) {
        halo_jw_key(&w, "features");
        halo_jw_bool(&w, false);
    }
    halo_jw_key(&w, "noise");
    halo_jw_f64(&w, p->noise);
    halo_jw_key(&w, "twin_corr");
    halo_jw_f64(&w, p->twin_corr);
    halo_jw_key(&w, "label_noise");
    halo_jw_f64(&w, p->label_noise);
    int64_t tr, va, te;
    halo_gen_split_sizes(p, &tr, &va, &te);
    halo_jw_key(&w, "train");
    halo_jw_i64(&w, tr);
    halo_jw_key(&w, "valid");
    halo_jw_i64(&w, va);
    halo_jw_key(&w, "test");
    halo_jw_i64(&w, te);
    halo_jw_key(&w, "label_split_only");
    halo_jw_bool(&w, p->label_split_only);
    halo_jw_key(&w, "symmetrised");
    halo_jw_bool(&w, !p->directed);
    halo_jw_obj_end(&w);
    return w.sb.buf;
}
