/* Heterogeneous generators shaped like ogbn-mag and MAG240M: typed nodes and relations whose
 * edges follow latent "venue" communities, so that a relational model can recover a paper's
 * class from its authors, fields and citations while its own features say little. */
#include "graph/gen.h"

#include "core/err.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node type of a preset at scale 1. */
typedef struct het_type {
    const char *name; /* type name */
    int64_t nodes;    /* node count of the real dataset */
    bool featured;    /* carries the preset's features */
} het_type;

/* A relation of a preset at scale 1; its reverse "rev_NAME" is added. Each edge has an anchor
 * endpoint drawn uniformly and a partner endpoint drawn, with probability `own`, among the
 * anchor's community (else over the whole type), with hubs (a skewed pick). */
typedef struct het_rel {
    const char *name;  /* relation name */
    int src, dst;      /* endpoint types */
    int64_t edges;     /* edge count of the real dataset */
    bool anchor_dst;   /* the anchor is the destination (true) or the source */
    double own;        /* share of partners drawn from the anchor's community */
} het_rel;

/* A heterogeneous preset. */
typedef struct het_preset {
    const char *name;          /* as typed after --preset */
    int ntypes;                /* node types; type 0 is the target */
    het_type types[4];         /* types in id order */
    int nrels;                 /* relations before reverses */
    het_rel rels[4];           /* relations */
    int feat_dim;              /* feature width of featured types */
    int classes;               /* label classes */
    double labelled;           /* share of target nodes that are labelled */
    double train, valid;       /* year-based split: shares of labelled nodes (rest test) */
    double noise;              /* feature noise around the class mean */
    double label_noise;        /* share of labelled nodes with a uniform random label */
} het_preset;

/* ogbn-mag (OGB): 736,389 papers with 128-dim features, 349 venues; split by year (train before
 * 2018, valid 2018, test 2019: 629,571 / 64,879 / 41,939). MAG240M (OGB-LSC): 121.8 M papers
 * with 768-dim features, 153 arXiv subject classes on 1.4 M labelled papers (train up to 2018,
 * valid 2019, test 2020). */
static const het_preset het_presets[] = {
    {"mag", 4,
     {{"paper", 736389, true}, {"author", 1134649, false}, {"institution", 8740, false},
      {"field_of_study", 59965, false}},
     4,
     {{"cites", 0, 0, 5416271, false, 0.25},
      {"writes", 1, 0, 7145660, true, 0.35},
      {"affiliated_with", 1, 2, 1043998, false, 0.40},
      {"has_topic", 0, 3, 7505078, false, 0.25}},
     128, 349, 1.0, 629571.0 / 736389.0, 64879.0 / 736389.0, 2.8, 0.15},
    {"mag240m", 3,
     {{"paper", 121751666, true}, {"author", 122383112, false}, {"institution", 25721, false}},
     3,
     {{"cites", 0, 0, 1297748926, false, 0.55},
      {"writes", 1, 0, 386022720, true, 0.75},
      {"affiliated_with", 1, 2, 44592586, false, 0.70}},
     768, 153, 1397159.0 / 121751666.0, 1112392.0 / 1397159.0, 138949.0 / 1397159.0, 4.0,
     0.15},
};

bool halo_gen_hetero_preset(const char *name)
{
    for (size_t i = 0; i < sizeof het_presets / sizeof het_presets[0]; i++) {
        if (strcmp(name, het_presets[i].name) == 0) {
            return true;
        }
    }
    return false;
}

int halo_gen_hetero_defaults(const char *preset, double scale, halo_gen_hetero_params *p)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < sizeof het_presets / sizeof het_presets[0]; i++) {
        if (strcmp(preset, het_presets[i].name) == 0) {
            p->preset = i;
        }
    }
    if (!halo_gen_hetero_preset(preset)) {
        return halo_errorf(HALO_EUSAGE, "--preset: '%s' is not a heterogeneous preset", preset);
    }
    if (!(scale > 0) || scale > 1) {
        return halo_errorf(HALO_EUSAGE, "--scale: %g is not in (0, 1] for preset %s", scale,
                           preset);
    }
    const het_preset *ps = &het_presets[p->preset];
    p->scale = scale;
    p->seed = 1;
    p->classes = ps->classes;
    p->feat_dim = ps->feat_dim;
    p->noise = ps->noise;
    p->label_noise = ps->label_noise;
    snprintf(p->name, sizeof p->name, "%s", ps->name);
    return 0;
}

/* Skewed pick in [0, m): position m * u^2, so low positions are hubs (a power-law-like spread). */
static inline int64_t het_skewed(halo_rng *r, int64_t m)
{
    double u = halo_rng_uniform(r);
    int64_t x = (int64_t)((double)m * u * u);
    return x < m ? x : m - 1;
}

/* Members of each community of one type: a CSR (community -> node ids in id order). */
typedef struct het_members {
    int64_t *start; /* [classes+1] */
    int32_t *ids;   /* [nodes of the type] */
} het_members;

static void het_members_build(const int32_t *comm, int64_t v0, int64_t v1, int classes,
                              het_members *m)
{
    m->start = HALO_NEW(int64_t, (size_t)classes + 1);
    m->ids = HALO_ALLOC(int32_t, v1 - v0 + 1);
    for (int64_t v = v0; v < v1; v++) {
        m->start[comm[v] + 1]++;
    }
    for (int c = 0; c < classes; c++) {
        m->start[c + 1] += m->start[c];
    }
    int64_t *fill = HALO_ALLOC(int64_t, (size_t)classes + 1);
    memcpy(fill, m->start, ((size_t)classes + 1) * sizeof *fill);
    for (int64_t v = v0; v < v1; v++) {
        m->ids[fill[comm[v]]++] = (int32_t)v;
    }
    halo_free(fill);
}

/* 2. Edges of each relation and its reverse (relation 2k and 2k+1) into dst[] and key[]
 * (relation << 32 | source, for halo_graph_typed_csr): an anchor node uniform in its type, the
 * other end from the anchor's community with the relation's probability `own`, else skewed over
 * its type; no self-loops. Returns the entries written. */
static int64_t het_edges(const halo_gen_hetero_params *p, const int64_t *tstart,
                         const int32_t *comm, const het_members *mem, int32_t *dst, uint64_t *key)
{
    const het_preset *ps = &het_presets[p->preset];
    int64_t ne = 0;
    for (int k = 0; k < ps->nrels; k++) {
        const het_rel *rl = &ps->rels[k];
        int at = rl->anchor_dst ? rl->dst : rl->src, pt = rl->anchor_dst ? rl->src : rl->dst;
        int64_t na = tstart[at + 1] - tstart[at], np = tstart[pt + 1] - tstart[pt];
        int64_t m = (int64_t)llround((double)rl->edges * p->scale);
        for (int64_t i = 0; i < m; i++) {
            halo_rng r;
            halo_rng_init(&r, p->seed, HALO_RNG_GEN_EDGES, (uint64_t)k, (uint64_t)i, 7);
            int64_t a = tstart[at] + (int64_t)halo_rng_below(&r, (uint64_t)na), b;
            const het_members *pm = &mem[pt];
            int64_t c0 = pm->start[comm[a]], cn = pm->start[comm[a] + 1] - c0;
            if (halo_rng_uniform(&r) < rl->own && cn > 0) {
                b = pm->ids[c0 + het_skewed(&r, cn)];
            } else {
                b = tstart[pt] + het_skewed(&r, np);
            }
            if (a == b) {
                continue; /* no self-citations */
            }
            int64_t s = rl->anchor_dst ? b : a, d = rl->anchor_dst ? a : b;
            dst[ne] = (int32_t)d;
            key[ne++] = ((uint64_t)(2 * k) << 32) | (uint64_t)s;
            dst[ne] = (int32_t)s;
            key[ne++] = ((uint64_t)(2 * k + 1) << 32) | (uint64_t)d;
        }
    }
    return ne;
}

/* 3. Labels and the year-based split on the target type: a node is labelled with
 * probability `labelled`; its year falls in the train years, the valid year or the test
 * year with the preset's shares. */
static void het_labels(const halo_gen_hetero_params *p, int64_t ntarget, const int32_t *comm,
                       halo_graph *g)
{
    const het_preset *ps = &het_presets[p->preset];
    int C = p->classes;
    for (int64_t v = 0; v < g->nodes; v++) {
        g->label[v] = -1;
        g->split[v] = HALO_SPLIT_NONE;
        if (v >= ntarget) {
            continue;
        }
        halo_rng r;
        halo_rng_init(&r, p->seed, HALO_RNG_SPLIT, (uint64_t)v, 3, 0);
        if (halo_rng_uniform(&r) >= ps->labelled) {
            continue;
        }
        double y = halo_rng_uniform(&r);
        g->split[v] = y < ps->train ? HALO_SPLIT_TRAIN
                      : y < ps->train + ps->valid ? HALO_SPLIT_VALID : HALO_SPLIT_TEST;
        g->label[v] = halo_rng_uniform(&r) < p->label_noise
                          ? (int32_t)halo_rng_below(&r, (uint64_t)C) : comm[v];
    }
}

/* 4. Features of featured types: class mean (of the node's community) plus noise, into
 * each featured type's own array; featureless types have none. */
static void het_features(const halo_gen_hetero_params *p, const int32_t *comm, halo_graph *g)
{
    int C = p->classes;
    if (!p->topology_only && p->feat_dim > 0) {
        int f = p->feat_dim;
        float *mu = HALO_ALLOC(float, (size_t)C * (size_t)f);
        for (int c = 0; c < C; c++) {
            halo_rng r;
            halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)c, 1, 0);
            for (int j = 0; j < f; j++) {
                mu[(size_t)c * f + j] = (float)halo_rng_normal(&r);
            }
        }
        for (int64_t v = 0; v < g->nodes; v++) {
            int t = g->ntype[v];
            if (g->tfeat[t] == NULL) {
                continue;
            }
            halo_rng r;
            halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)v, 0, 0);
            float *row = g->tfeat[t] + (size_t)(v - g->tstart[t]) * (size_t)f;
            for (int j = 0; j < f; j++) {
                row[j] = mu[(size_t)comm[v] * f + j] + (float)(p->noise * halo_rng_normal(&r));
            }
        }
        halo_free(mu);
    }
}

int halo_gen_hetero_graph(const halo_gen_hetero_params *p, halo_graph **out)
{
    const het_preset *ps = &het_presets[p->preset];
    *out = NULL;
    if (p->classes < 2 || p->classes > 65536 || p->feat_dim < 0 || p->feat_dim > 65536 ||
        !(p->noise >= 0) || !(p->label_noise >= 0 && p->label_noise <= 1)) {
        return halo_errorf(HALO_EUSAGE, "gen: --classes must be in [2, 65536], --feat-dim in "
                           "[0, 65536], --noise >= 0, --label-noise in [0, 1]");
    }
    int T = ps->ntypes, C = p->classes;
    int64_t tstart[5] = {0};
    for (int t = 0; t < T; t++) {
        int64_t n = (int64_t)llround((double)ps->types[t].nodes * p->scale);
        tstart[t + 1] = tstart[t] + (n < 2 ? 2 : n);
    }
    int64_t N = tstart[T];
    if (N > 2147483647LL || tstart[1] < C) {
        return halo_errorf(HALO_EUSAGE, "--scale: %g gives %lld nodes and %lld %s nodes (want "
                           "< 2^31 nodes and at least --classes %d target nodes)", p->scale,
                           (long long)N, (long long)tstart[1], ps->types[0].name, C);
    }
    /* 1. Community of every node: a target node's is its latent class (imbalanced like venues:
     * class floor(C * u^1.5)), any other node's uniform. */
    int32_t *comm = HALO_ALLOC(int32_t, N);
    for (int64_t v = 0; v < N; v++) {
        halo_rng r;
        halo_rng_init(&r, p->seed, HALO_RNG_GEN_LABEL, 1, (uint64_t)v, 0);
        double u = halo_rng_uniform(&r);
        comm[v] = v < tstart[1] ? (int32_t)((double)C * pow(u, 1.5))
                                : (int32_t)halo_rng_below(&r, (uint64_t)C);
        comm[v] = comm[v] < C ? comm[v] : C - 1;
    }
    het_members mem[4];
    for (int t = 0; t < T; t++) {
        het_members_build(comm, tstart[t], tstart[t + 1], C, &mem[t]);
    }
    /* 2. Edges of each relation and its reverse (relation 2k and 2k+1). */
    int64_t want = 0;
    for (int k = 0; k < ps->nrels; k++) {
        want += 2 * (int64_t)llround((double)ps->rels[k].edges * p->scale);
    }
    int32_t *dst = HALO_ALLOC(int32_t, want + 1);
    uint64_t *key = HALO_ALLOC(uint64_t, want + 1);
    int64_t ne = het_edges(p, tstart, comm, mem, dst, key);
    halo_graph *g = halo_graph_alloc(N, 0, 0, C, T);
    snprintf(g->name, sizeof g->name, "%s", p->name);
    g->feat_dim = p->feat_dim;
    g->topology_only = p->topology_only;
    halo_relation rels[HALO_MAX_RELS];
    for (int k = 0; k < ps->nrels; k++) {
        const het_rel *rl = &ps->rels[k];
        snprintf(rels[2 * k].name, HALO_TYPE_NAME, "%s", rl->name);
        rels[2 * k].src = rl->src;
        rels[2 * k].dst = rl->dst;
        snprintf(rels[2 * k + 1].name, HALO_TYPE_NAME, "rev_%s", rl->name);
        rels[2 * k + 1].src = rl->dst;
        rels[2 * k + 1].dst = rl->src;
    }
    g->nrels = 2 * ps->nrels;
    memcpy(g->rel, rels, (size_t)g->nrels * sizeof *rels);
    halo_graph_typed_csr(g, ne, dst, key);
    g->target_type = 0;
    for (int t = 0; t < T; t++) {
        snprintf(g->ntype_name[t], HALO_TYPE_NAME, "%s", ps->types[t].name);
        g->ntype_feat_dim[t] = ps->types[t].featured ? p->feat_dim : 0;
        for (int64_t v = tstart[t]; v < tstart[t + 1]; v++) {
            g->ntype[v] = (uint8_t)t;
        }
    }
    halo_graph_alloc_type_feat(g); /* one array per featured type, none when topology-only */
    het_labels(p, tstart[1], comm, g);
    het_features(p, comm, g);
    g->directed = false; /* every relation has its reverse */
    for (int t = 0; t < T; t++) {
        halo_free(mem[t].start);
        halo_free(mem[t].ids);
    }
    halo_free(comm);
    *out = g;
    return 0;
}

char *halo_gen_hetero_source_json(const halo_gen_hetero_params *p)
{
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "generator");
    halo_jw_str(&w, "hetero");
    halo_jw_key(&w, "preset");
    halo_jw_str(&w, het_presets[p->preset].name);
    halo_jw_key(&w, "scale");
    halo_jw_f64(&w, p->scale);
    halo_jw_key(&w, "seed");
    halo_jw_i64(&w, (int64_t)p->seed);
    halo_jw_key(&w, "classes");
    halo_jw_i64(&w, p->classes);
    halo_jw_key(&w, "feat_dim");
    halo_jw_i64(&w, p->feat_dim);
    halo_jw_key(&w, "noise");
    halo_jw_f64(&w, p->noise);
    halo_jw_key(&w, "label_noise");
    halo_jw_f64(&w, p->label_noise);
    halo_jw_key(&w, "split");
    halo_jw_str(&w, "year");
    halo_jw_obj_end(&w);
    char *s = halo_strdup(w.sb.buf);
    halo_jw_free(&w);
    return s;
}

int halo_gen_hetero_write(const halo_gen_hetero_params *p, const char *dir)
{
    halo_graph *g;
    HALO_CHECK(halo_gen_hetero_graph(p, &g));
    char *src = halo_gen_hetero_source_json(p);
    int rc = halo_graph_write(g, dir, src);
    halo_free(src);
    halo_graph_free(g);
    return rc;
}
