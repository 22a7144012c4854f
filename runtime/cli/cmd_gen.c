/* halo gen: synthetic graphs (R-MAT, SBM, OGB-shaped presets) written as a graph directory. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/timer.h"
#include "graph/gen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The flags as typed (NULL when absent): defaults depend on the model or preset, so they are
 * applied after parsing and printed in the help text instead of from the table. */
typedef struct gen_flags {
    const char *out, *preset, *name;           /* strings */
    const char *scale, *nodes, *edge_factor;   /* size */
    const char *a, *b, *c;                     /* rmat quadrants */
    const char *din, *dout, *skew;             /* sbm */
    const char *hsd, *affinity, *label_noise;  /* sbm heterogeneity, label noise */
    const char *twin_corr;                     /* twin classes' feature correlation */
    const char *classes, *feat_dim, *noise;    /* labels and features */
    const char *train, *valid, *test, *seed;   /* split, seed */
    bool directed;                             /* keep one direction */
    bool no_features;                          /* topology-only: write no feat.f32 */
} gen_flags;

/* Parses s (when given) as a number into *dst. */
static int set_f64(const char *s, const char *flag, double *dst)
{
    return s == NULL ? 0 : halo_parse_f64(s, flag, dst);
}

static int set_i64(const char *s, const char *flag, int64_t *dst)
{
    return s == NULL ? 0 : halo_parse_i64(s, flag, dst);
}

static int set_int(const char *s, const char *flag, int *dst)
{
    int64_t v = *dst;
    HALO_CHECK(set_i64(s, flag, &v));
    if (v < -2147483647LL || v > 2147483647LL) {
        return halo_errorf(HALO_EUSAGE, "%s: %s is out of range", flag, s);
    }
    *dst = (int)v;
    return 0;
}

/* Turns the flags into generator parameters (usage errors name the flag). */
static int gen_params_from_flags(const gen_flags *f, const char *model, halo_gen_params *p)
{
    if (model != NULL && strcmp(model, "rmat") != 0 && strcmp(model, "sbm") != 0) {
        return halo_errorf(HALO_EUSAGE, "gen: unknown model '%s' (rmat or sbm)", model);
    }
    if (model == NULL && f->preset == NULL) {
        return halo_errorf(HALO_EUSAGE, "gen: give a model (rmat, sbm) or --preset NAME (see "
                           "halo gen --help)");
    }
    if (f->out == NULL) {
        return halo_errorf(HALO_EUSAGE, "gen: -o DIR is required");
    }
    if (f->scale != NULL && f->nodes != NULL) {
        return halo_errorf(HALO_EUSAGE, "gen: give --scale or --nodes, not both");
    }
    double scale = 1.0;
    HALO_CHECK(set_f64(f->scale, "--scale", &scale));
    if (f->preset != NULL) {
        if (model != NULL && strcmp(model, "sbm") != 0) {
            return halo_errorf(HALO_EUSAGE, "--preset: presets are sbm graphs, not %s", model);
        }
        HALO_CHECK(halo_gen_preset(f->preset, scale, p));
    } else if (strcmp(model, "rmat") == 0) {
        halo_gen_defaults(HALO_GEN_RMAT, p);
        if (f->scale != NULL) {
            if (scale != floor(scale) || scale < 1 || scale > 31) {
                return halo_errorf(HALO_EUSAGE, "--scale: %s is not an integer in [1, 31] "
                                   "(rmat: 2^scale nodes)", f->scale);
            }
            p->nodes = 1LL << (int)scale;
        }
    } else {
        halo_gen_defaults(HALO_GEN_SBM, p);
        if (f->scale != NULL) {
            return halo_errorf(HALO_EUSAGE, "--scale: sbm takes --nodes (--scale is for rmat "
                               "and presets)");
        }
    }
    HALO_CHECK(set_i64(f->nodes, "--nodes", &p->nodes));
    if (p->model == HALO_GEN_RMAT) {
        if (f->din != NULL || f->dout != NULL || f->skew != NULL || f->hsd != NULL ||
            f->affinity != NULL) {
            return halo_errorf(HALO_EUSAGE, "--degree-in/--degree-out/--skew/--homophily-sd/"
                               "--affinity are sbm flags");
        }
        HALO_CHECK(set_f64(f->edge_factor, "--edge-factor", &p->degree));
        HALO_CHECK(set_f64(f->a, "--a", &p->a));
        HALO_CHECK(set_f64(f->b, "--b", &p->b));
        HALO_CHECK(set_f64(f->c, "--c", &p->c));
    } else {
        if (f->edge_factor != NULL || f->a != NULL || f->b != NULL || f->c != NULL) {
            return halo_errorf(HALO_EUSAGE, "--edge-factor/--a/--b/--c are rmat flags");
        }
        HALO_CHECK(set_f64(f->din, "--degree-in", &p->degree_in));
        HALO_CHECK(set_f64(f->dout, "--degree-out", &p->degree_out));
        HALO_CHECK(set_f64(f->skew, "--skew", &p->skew));
        HALO_CHECK(set_f64(f->hsd, "--homophily-sd", &p->homophily_sd));
        HALO_CHECK(set_f64(f->affinity, "--affinity", &p->affinity));
        p->degree = p->degree_in + p->degree_out;
    }
    HALO_CHECK(set_int(f->classes, "--classes", &p->classes));
    HALO_CHECK(set_int(f->feat_dim, "--feat-dim", &p->feat_dim));
    HALO_CHECK(set_f64(f->noise, "--noise", &p->noise));
    HALO_CHECK(set_f64(f->label_noise, "--label-noise", &p->label_noise));
    HALO_CHECK(set_f64(f->twin_corr, "--twin-corr", &p->twin_corr));
    HALO_CHECK(set_f64(f->train, "--train", &p->train));
    HALO_CHECK(set_f64(f->valid, "--valid", &p->valid));
    HALO_CHECK(set_f64(f->test, "--test", &p->test));
    int64_t seed = (int64_t)p->seed;
    HALO_CHECK(set_i64(f->seed, "--seed", &seed));
    p->seed = (uint64_t)seed;
    p->directed = f->directed;
    p->topology_only = f->no_features;
    if (f->name != NULL) {
        snprintf(p->name, sizeof p->name, "%s", f->name);
    }
    return halo_gen_check(p);
}

/* halo gen --preset mag|mag240m: only the flags a heterogeneous preset takes. */
static int gen_hetero_from_flags(const gen_flags *f, const char *model,
                                 halo_gen_hetero_params *p)
{
    if (model != NULL) {
        return halo_errorf(HALO_EUSAGE, "--preset: %s is a heterogeneous preset, not an %s "
                           "graph", f->preset, model);
    }
    if (f->out == NULL) {
        return halo_errorf(HALO_EUSAGE, "gen: -o DIR is required");
    }
    if (f->nodes != NULL || f->edge_factor != NULL || f->a != NULL || f->b != NULL ||
        f->c != NULL || f->din != NULL || f->dout != NULL || f->skew != NULL ||
        f->hsd != NULL || f->affinity != NULL || f->twin_corr != NULL || f->train != NULL ||
        f->valid != NULL || f->test != NULL || f->directed) {
        return halo_errorf(HALO_EUSAGE, "--preset %s: takes --scale, --classes, --feat-dim, "
                           "--noise, --label-noise, --no-features, --seed and --name only",
                           f->preset);
    }
    double scale = 1.0;
    HALO_CHECK(set_f64(f->scale, "--scale", &scale));
    HALO_CHECK(halo_gen_hetero_defaults(f->preset, scale, p));
    HALO_CHECK(set_int(f->classes, "--classes", &p->classes));
    HALO_CHECK(set_int(f->feat_dim, "--feat-dim", &p->feat_dim));
    HALO_CHECK(set_f64(f->noise, "--noise", &p->noise));
    HALO_CHECK(set_f64(f->label_noise, "--label-noise", &p->label_noise));
    int64_t seed = (int64_t)p->seed;
    HALO_CHECK(set_i64(f->seed, "--seed", &seed));
    p->seed = (uint64_t)seed;
    p->topology_only = f->no_features;
    if (f->name != NULL) {
        snprintf(p->name, sizeof p->name, "%s", f->name);
    }
    return 0;
}

int halo_cmd_gen(int argc, char **argv)
{
    gen_flags f;
    memset(&f, 0, sizeof f);
    const halo_opt opts[] = {
        {"output", 'o', HALO_OPT_STRING, &f.out, "DIR", "output graph directory (required)"},
        {"preset", 0, HALO_OPT_STRING, &f.preset, "NAME",
         "shape of an OGB dataset: arxiv, products, papers100M (an sbm); mag, mag240m "
         "(heterogeneous, docs/hetero.md)"},
        {"scale", 0, HALO_OPT_STRING, &f.scale, "S",
         "rmat: 2^S nodes (16); preset: fraction of the real node count (1)"},
        {"nodes", 'n', HALO_OPT_STRING, &f.nodes, "N",
         "node count instead of --scale (sbm 10000)"},
        {"edge-factor", 0, HALO_OPT_STRING, &f.edge_factor, "F",
         "rmat: edges drawn per node before symmetrising (16)"},
        {"a", 0, HALO_OPT_STRING, &f.a, "P", "rmat: probability of quadrant a (0.57)"},
        {"b", 0, HALO_OPT_STRING, &f.b, "P", "rmat: probability of quadrant b (0.19)"},
        {"c", 0, HALO_OPT_STRING, &f.c, "P", "rmat: probability of quadrant c (0.19)"},
        {"degree-in", 0, HALO_OPT_STRING, &f.din, "D",
         "sbm: mean in-degree from the node's own class (10)"},
        {"degree-out", 0, HALO_OPT_STRING, &f.dout, "D",
         "sbm: mean in-degree from other classes (5)"},
        {"skew", 0, HALO_OPT_STRING, &f.skew, "S",
         "sbm: degree spread, 0 uniform, 1 hubs (0; presets 1)"},
        {"homophily-sd", 0, HALO_OPT_STRING, &f.hsd, "S",
         "sbm: std. dev. of per-node homophily (Beta around degree-in/degree) (0; presets 0.3)"},
        {"affinity", 0, HALO_OPT_STRING, &f.affinity, "P",
         "sbm: share of other-class edges from the twin class c xor 1 (0; presets 0.8)"},
        {"classes", 'C', HALO_OPT_STRING, &f.classes, "C", "label classes (rmat 16, sbm 8)"},
        {"feat-dim", 'F', HALO_OPT_STRING, &f.feat_dim, "F", "feature width (32)"},
        {"noise", 0, HALO_OPT_STRING, &f.noise, "X",
         "feature noise around the class mean (rmat 2.5, sbm 3, presets 1-1.6)"},
        {"twin-corr", 0, HALO_OPT_STRING, &f.twin_corr, "T",
         "correlation of the feature means of twin classes c, c xor 1 (0; presets 0.9)"},
        {"label-noise", 0, HALO_OPT_STRING, &f.label_noise, "P",
         "fraction of nodes given a uniform random label (0; presets 0.12-0.14)"},
        {"train", 0, HALO_OPT_STRING, &f.train, "FRAC", "fraction of nodes in train (0.6)"},
        {"valid", 0, HALO_OPT_STRING, &f.valid, "FRAC", "fraction of nodes in valid (0.2)"},
        {"test", 0, HALO_OPT_STRING, &f.test, "FRAC", "fraction of nodes in test (0.2)"},
        {"directed", 0, HALO_OPT_FLAG, &f.directed, NULL,
         "keep edges one way (default: store both directions)"},
        {"no-features", 0, HALO_OPT_FLAG, &f.no_features, NULL,
         "topology-only: no feat.f32 (meta.json keeps the declared --feat-dim; for the "
         "simulator, not for halo train)"},
        {"seed", 's', HALO_OPT_STRING, &f.seed, "S", "random seed (1)"},
        {"name", 0, HALO_OPT_STRING, &f.name, "NAME", "graph name in meta.json"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo gen rmat|sbm [flags] -o DIR   |   halo gen --preset NAME [--scale S] -o DIR",
        "Generates a synthetic graph directory. rmat: Graph500-style power-law graph, labels from\n"
        "the high-order bits of the unpermuted node id. sbm: planted-partition graph with C\n"
        "classes. Presets are sbm graphs with the nodes, mean degree, feature width, classes and\n"
        "split proportions of ogbn-arxiv, ogbn-products, ogbn-papers100M at any --scale, and\n"
        "per-node homophily, twin classes and label noise calibrated so that GraphSAGE and\n"
        "features alone score about as on OGB (docs/graph.md). --preset mag and mag240m make\n"
        "heterogeneous graphs shaped like ogbn-mag and MAG240M (node types contiguous in id order,\n"
        "relations and their reverses, a year-based split; docs/hetero.md). Features are Gaussian around a\n"
        "per-class mean, so accuracy means something. Node ids\n"
        "are randomly permuted; self-loops and duplicate edges are removed. The same flags give\n"
        "byte-identical files. Defaults in parentheses.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos > 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "gen: one model expected, got '%s' too",
                                         pos[1]));
    }
    double t0 = halo_now();
    if (f.preset != NULL && halo_gen_hetero_preset(f.preset)) {
        halo_gen_hetero_params hp;
        rc = gen_hetero_from_flags(&f, npos == 1 ? pos[0] : NULL, &hp);
        if (rc == 0) {
            rc = halo_gen_hetero_write(&hp, f.out);
        }
    } else {
        halo_gen_params p;
        rc = gen_params_from_flags(&f, npos == 1 ? pos[0] : NULL, &p);
        if (rc == 0) {
            rc = halo_gen_write(&p, f.out);
        }
    }
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_graph *g;
    rc = halo_graph_load(f.out, &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("%s: %s, %lld nodes, %lld edges, %d features%s, %d classes", f.out, g->name,
           (long long)g->nodes, (long long)g->edges, g->feat_dim,
           g->topology_only ? " (topology-only: none written)" : "", g->classes);
    if (halo_graph_typed(g)) {
        printf(", %d node types, %d relations", g->ntypes, g->nrels);
    }
    printf(" (%.1f s)\n", halo_now() - t0);
    halo_graph_free(g);
    return 0;
}
