/* Synthetic graph generators: R-MAT (Graph500-style power law) and a planted-partition stochastic
 * block model with class-conditioned features, plus presets shaped like the OGB node-property
 * datasets. Every draw comes from the counter-based RNG, so the same parameters give
 * byte-identical graphs. */
#ifndef HALO_GRAPH_GEN_H
#define HALO_GRAPH_GEN_H

#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

/* Generator models. */
enum { HALO_GEN_RMAT = 1, HALO_GEN_SBM = 2 };

/* Everything that determines a generated graph. Fill with halo_gen_defaults or halo_gen_preset,
 * then adjust fields. */
typedef struct halo_gen_params {
    int model;             /* HALO_GEN_RMAT or HALO_GEN_SBM */
    char name[128];        /* meta.json "name" */
    char preset[32];       /* preset it came from ("" for none), recorded in meta.json */
    uint64_t seed;         /* root of every random draw */
    int64_t nodes;         /* node count, 2 .. 2^31-1 */
    double degree;         /* rmat: edge factor (draws per node); sbm: degree_in + degree_out */
    double a, b, c;        /* rmat: quadrant probabilities (d = 1 - a - b - c) */
    double degree_in;      /* sbm: mean in-degree from the node's own class (after symmetrising) */
    double degree_out;     /* sbm: mean in-degree from other classes */
    double skew;           /* sbm: 0 picks nodes uniformly in a class; s > 0 makes low ranks hubs
                            * (position = size * x^(1+s)), a power-law-like degree spread */
    double homophily_sd;   /* sbm: spread of per-node homophily: node v's share of same-class
                            * neighbours is drawn from a Beta distribution with mean
                            * degree_in / (degree_in + degree_out) and this standard deviation
                            * (0: every node the same, the plain planted partition) */
    double affinity;       /* sbm: share of other-class edges drawn from the node's twin class
                            * c xor 1 rather than uniformly: a node with low homophily then has
                            * the neighbourhood of its twin class (confusable classes) */
    int classes;           /* label classes, 1 .. 2^20 */
    int feat_dim;          /* feature width, 0 .. 65536 (the declared width when topology_only) */
    bool topology_only;    /* no features: no feat.f32 is written (meta.json "features": false,
                            * feat_dim kept) and none is computed; edges, labels and split are
                            * the same as with features */
    double noise;          /* std. deviation of feature noise around the class mean (mean ~N(0,1)) */
    double twin_corr;      /* correlation of the feature means of twin classes (c, c xor 1),
                            * 0 .. 1: features alone then confuse mostly twins */
    double label_noise;    /* fraction of nodes whose observed label is a uniform random class,
                            * drawn independently of their edges and features (0 .. 1) */
    double train, valid, test; /* split fractions; round(fraction * nodes) nodes each, the rest
                                * get split 0 */
    bool label_split_only; /* nodes outside every split get label -1 (papers100M-like) */
    bool directed;         /* false: every edge is stored in both directions (symmetrised) */
} halo_gen_params;

/* Defaults of a model (rmat: scale 16, edge factor 16, a=.57 b=.19 c=.19; sbm: 10000 nodes,
 * 8 classes, degrees 10+5). Split fractions 0.6 / 0.2 / 0.2. */
void halo_gen_defaults(int model, halo_gen_params *p);
/* Parameters of a preset ("arxiv", "products", "papers100M" or "papers") at a fraction `scale`
 * of the real node count (same mean degree, feature width, classes, split proportions). */
int halo_gen_preset(const char *preset, double scale, halo_gen_params *p);
/* Names of the presets, for --help ("arxiv, products, papers100M"). */
const char *halo_gen_preset_names(void);
/* Checks the parameters; messages name the flag-like field ("nodes", "a+b+c", ...). */
int halo_gen_check(const halo_gen_params *p);
/* Split sizes in nodes of p: round(fraction * nodes), clipped so that the sum fits. */
void halo_gen_split_sizes(const halo_gen_params *p, int64_t *train, int64_t *valid,
                          int64_t *test);

/* Generates the graph in memory (for tests and in-process users); feat is NULL when
 * p->topology_only. */
int halo_gen_graph(const halo_gen_params *p, halo_graph **out);
/* Generates the graph straight into directory dir (atomically), streaming features to disk so
 * that peak memory is about the size of the CSR (none with p->topology_only). */
int halo_gen_write(const halo_gen_params *p, const char *dir);
/* Writes the parameters as a JSON object (meta.json "source"); halo_free the result. */
char *halo_gen_source_json(const halo_gen_params *p);
/* A topology-only random graph in memory for micro-benchmarks: n nodes, each with an in-degree
 * uniform in [deg_lo, deg_hi] and uniform sources (no locality), drawn from the test stream with
 * `key`; `classes` label classes (labels all 0). */
halo_graph *halo_gen_random(int64_t n, int deg_lo, int deg_hi, uint64_t key, int classes);

/* A heterogeneous preset shaped like ogbn-mag ("mag") or MAG240M ("mag240m"), see
 * docs/hetero.md: typed nodes (target type first), relations and their reverses, features on the
 * featured types only, labels and a year-based split on the target type. */
typedef struct halo_gen_hetero_params {
    size_t preset;      /* index of the preset (set by halo_gen_hetero_defaults) */
    char name[128];     /* meta.json "name" */
    double scale;       /* fraction of the real node and edge counts, (0, 1] */
    uint64_t seed;      /* root of every random draw */
    int classes;        /* label classes (the preset's by default) */
    int feat_dim;       /* feature width of the featured types */
    double noise;       /* feature noise around the class mean (features weakly informative) */
    double label_noise; /* share of labelled nodes given a uniform random label */
    bool topology_only; /* no feat.f32 */
} halo_gen_hetero_params;

/* Whether `name` is a heterogeneous preset. */
bool halo_gen_hetero_preset(const char *name);
/* Defaults of heterogeneous preset `preset` at `scale`. */
int halo_gen_hetero_defaults(const char *preset, double scale, halo_gen_hetero_params *p);
/* Generates the typed graph in memory. */
int halo_gen_hetero_graph(const halo_gen_hetero_params *p, halo_graph **out);
/* Generates it into dir (atomically). */
int halo_gen_hetero_write(const halo_gen_hetero_params *p, const char *dir);
/* The parameters as a JSON object (meta.json "source"); halo_free the result. */
char *halo_gen_hetero_source_json(const halo_gen_hetero_params *p);

#endif
