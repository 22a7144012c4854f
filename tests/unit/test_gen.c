/* Unit tests of runtime/graph generators, integrity checks and statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "graph/gen.h"
#include "graph/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[64];

static int setup(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/halo-gen-XXXXXX");
    return mkdtemp(scratch) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    halo_rmtree(scratch);
    return 0;
}

static halo_graph *make(const halo_gen_params *p)
{
    halo_graph *g = NULL;
    assert_int_equal(halo_gen_graph(p, &g), 0);
    assert_non_null(g);
    return g;
}

static bool graphs_equal(const halo_graph *x, const halo_graph *y)
{
    if (x->nodes != y->nodes || x->edges != y->edges || x->feat_dim != y->feat_dim) {
        return false;
    }
    for (int a = 0; a < HALO_GA_NTYPE; a++) {
        const void *px = a == 0 ? (const void *)x->indptr : a == 1 ? (const void *)x->indices
                         : a == 2 ? (const void *)x->feat : a == 3 ? (const void *)x->label
                                                              : (const void *)x->split;
        const void *py = a == 0 ? (const void *)y->indptr : a == 1 ? (const void *)y->indices
                         : a == 2 ? (const void *)y->feat : a == 3 ? (const void *)y->label
                                                              : (const void *)y->split;
        size_t n = (size_t)halo_graph_array_bytes(x, a);
        if (n > 0 && memcmp(px, py, n) != 0) {
            return false;
        }
    }
    return true;
}

/* Whether u is in row v (slow linear scan, independent of the rows being sorted). */
static bool has_edge(const halo_graph *g, int64_t u, int64_t v)
{
    for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
        if (g->indices[i] == u) {
            return true;
        }
    }
    return false;
}

static void gen_same_params_give_identical_graphs(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 3000;
    halo_graph *a = make(&p), *b = make(&p);
    assert_true(graphs_equal(a, b));
    p.seed = 2;
    halo_graph *c = make(&p);
    assert_false(graphs_equal(a, c));
    halo_graph_free(a);
    halo_graph_free(b);
    halo_graph_free(c);
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.nodes = 3000; /* not a power of two: exercises the rejection and cycle walking */
    a = make(&p);
    b = make(&p);
    assert_true(graphs_equal(a, b));
    halo_graph_free(a);
    halo_graph_free(b);
}

static void gen_write_matches_in_memory_graph_and_verifies(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.nodes = 1 << 12;
    p.feat_dim = 7;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/rmat", scratch);
    assert_int_equal(halo_gen_write(&p, dir), 0);
    assert_int_equal(halo_graph_verify(dir), 0);
    halo_graph *disk, *mem = make(&p);
    assert_int_equal(halo_graph_load(dir, &disk), 0);
    assert_true(graphs_equal(disk, mem));
    assert_false(disk->directed);
    halo_graph_free(disk);
    halo_graph_free(mem);
}

static void rmat_rows_are_sorted_unique_loop_free_and_symmetric(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.nodes = 1000;
    p.degree = 8;
    halo_graph *g = make(&p);
    assert_int_equal(halo_graph_check(g, NULL), 0);
    assert_true(g->edges > 1000 * 8); /* both directions of most of the 8000 draws */
    assert_true(g->edges <= 2 * 1000 * 8);
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            assert_true(g->indices[i] != v);
            if (i > g->indptr[v]) {
                assert_true(g->indices[i - 1] < g->indices[i]);
            }
            assert_true(has_edge(g, v, g->indices[i]));
        }
    }
    halo_graph_free(g);
    p.directed = true;
    g = make(&p);
    int64_t one_way = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            one_way += !has_edge(g, v, g->indices[i]);
        }
    }
    assert_true(one_way > g->edges / 2);
    assert_true(g->edges <= 8000);
    halo_graph_free(g);
}

/* Every R-MAT level picks quadrant (src bit, dst bit) = (0,0), (0,1), (1,0), (1,1) with
 * probabilities a, b, c, d, independently of the other levels. With c = 0 the per-level noise is
 * off (its amplitude is capped by c), so the frequencies must match a, b, c, d themselves. With
 * classes = nodes / 2^s the label is the unpermuted id without its s low bits, which exposes
 * every level but the last s. Scales 15, 16 and 21 cover three, four and five alias lookups per
 * edge and dropped surplus levels (5 * lookups > scale); 2^16 draws are few enough that
 * duplicates (removed, which would thin out the likeliest quadrants) stay under 2%. */
static void rmat_levels_pick_quadrants_with_probabilities_a_b_c_d(void **state)
{
    (void)state;
    const double a = 0.5, b = 0.3, c = 0.0, d = 0.2;
    const int scales[] = {15, 16, 21};
    for (int si = 0; si < 3; si++) {
        int k = scales[si];
        int hidden = k > 20 ? k - 20 : 0; /* classes are at most 2^20 */
        int levels = k - hidden;
        halo_gen_params p;
        halo_gen_defaults(HALO_GEN_RMAT, &p);
        p.nodes = 1LL << k;
        p.classes = 1 << levels;
        p.degree = 65536.0 / (double)p.nodes; /* 2^16 draws */
        p.feat_dim = 0;
        p.directed = true;
        p.a = a;
        p.b = b;
        p.c = c;
        halo_graph *g = make(&p);
        assert_true(g->edges > 64000);
        int64_t quad[21][4];
        memset(quad, 0, sizeof quad);
        for (int64_t v = 0; v < g->nodes; v++) {
            uint32_t dx = (uint32_t)g->label[v]; /* row v is the destination */
            for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
                uint32_t sx = (uint32_t)g->label[g->indices[i]];
                for (int l = 0; l < levels; l++) {
                    int sh = levels - 1 - l;
                    quad[l][((sx >> sh) & 1) * 2 + ((dx >> sh) & 1)]++;
                }
            }
        }
        const double want[4] = {a, b, c, d};
        double worst = 0;
        for (int l = 0; l < levels; l++) {
            for (int q = 0; q < 4; q++) {
                double got = (double)quad[l][q] / (double)g->edges;
                worst = fabs(got - want[q]) > worst ? fabs(got - want[q]) : worst;
                /* binomial sd ~0.002; self-loop removal shifts a few 0.1% towards b */
                if (fabs(got - want[q]) > 0.015) {
                    fail_msg("scale %d level %d quadrant %d: frequency %.4f, want %.2f", k, l, q,
                             got, want[q]);
                }
            }
        }
        print_message("scale %d: %lld edges, largest deviation %.4f\n", k, (long long)g->edges,
                      worst);
        halo_graph_free(g);
    }
}

static void rmat_labels_follow_high_bits_so_low_classes_have_hubs(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.nodes = 1 << 14;
    p.classes = 4;
    halo_graph *g = make(&p);
    int64_t count[4] = {0}, edges[4] = {0};
    for (int64_t v = 0; v < g->nodes; v++) {
        count[g->label[v]]++;
        edges[g->label[v]] += g->indptr[v + 1] - g->indptr[v];
    }
    /* Classes are quarters of the unpermuted id space: exactly n/4 nodes each. */
    for (int c = 0; c < 4; c++) {
        assert_int_equal(count[c], g->nodes / 4);
    }
    /* The top two bits of an endpoint are 00 with probability about (a+b)^2 = 0.58 and 11 with
     * about (c+d)^2 = 0.06 (per side), so class 0 collects far more edge ends than class 3. */
    assert_true(edges[0] > 5 * edges[3]);
    /* Ids are permuted: class 0 is not the first quarter of node ids. */
    int64_t first_quarter_class0 = 0;
    for (int64_t v = 0; v < g->nodes / 4; v++) {
        first_quarter_class0 += g->label[v] == 0;
    }
    assert_true(first_quarter_class0 < g->nodes / 4 * 2 / 5);
    halo_graph_free(g);
}

static void sbm_homophily_and_degree_match_parameters(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 20000;
    p.degree_in = 12;
    p.degree_out = 4;
    halo_graph *g = make(&p);
    int64_t same = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            same += g->label[g->indices[i]] == g->label[v];
        }
    }
    double h = (double)same / (double)g->edges;
    assert_true(fabs(h - 0.75) < 0.02);
    double mean = (double)g->edges / (double)g->nodes;
    assert_true(mean > 15.0 && mean <= 16.0);
    halo_graph_free(g);
}

/* Nearest-class-mean accuracy on valid+test nodes of vectors x[n][d], means from train. */
static double centroid_accuracy(const halo_graph *g, const double *x, int d)
{
    int c = g->classes;
    double *mean = calloc((size_t)c * (size_t)d, sizeof *mean);
    int64_t *cnt = calloc((size_t)c, sizeof *cnt);
    for (int64_t v = 0; v < g->nodes; v++) {
        if (g->split[v] == HALO_SPLIT_TRAIN) {
            cnt[g->label[v]]++;
            for (int j = 0; j < d; j++) {
                mean[(size_t)g->label[v] * (size_t)d + (size_t)j] += x[(size_t)v * (size_t)d + (size_t)j];
            }
        }
    }
    for (int k = 0; k < c; k++) {
        for (int j = 0; j < d; j++) {
            mean[(size_t)k * (size_t)d + (size_t)j] /= cnt[k] > 0 ? (double)cnt[k] : 1.0;
        }
    }
    int64_t right = 0, total = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        if (g->split[v] == HALO_SPLIT_TRAIN || g->split[v] == HALO_SPLIT_NONE) {
            continue;
        }
        int best = 0;
        double best_d = INFINITY;
        for (int k = 0; k < c; k++) {
            double s = 0;
            for (int j = 0; j < d; j++) {
                double e = x[(size_t)v * (size_t)d + (size_t)j] - mean[(size_t)k * (size_t)d + (size_t)j];
                s += e * e;
            }
            if (s < best_d) {
                best_d = s;
                best = k;
            }
        }
        right += best == g->label[v];
        total++;
    }
    free(mean);
    free(cnt);
    return (double)right / (double)total;
}

/* x' = [x, mean of in-neighbours' x]: one GraphSAGE-style aggregation step without weights. */
static double *aggregate(const halo_graph *g, const double *x, int d)
{
    double *y = calloc((size_t)g->nodes * 2 * (size_t)d, sizeof *y);
    for (int64_t v = 0; v < g->nodes; v++) {
        int64_t deg = g->indptr[v + 1] - g->indptr[v];
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
                s += x[(size_t)g->indices[i] * (size_t)d + (size_t)j];
            }
            y[(size_t)v * 2 * (size_t)d + (size_t)j] = x[(size_t)v * (size_t)d + (size_t)j];
            y[(size_t)v * 2 * (size_t)d + (size_t)d + (size_t)j] = deg > 0 ? s / (double)deg : 0;
        }
    }
    return y;
}

static void sbm_neighbours_make_classes_learnable_but_not_trivially(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 8000;
    halo_graph *g = make(&p);
    int d = g->feat_dim;
    double *x = malloc((size_t)g->nodes * (size_t)d * sizeof *x);
    for (int64_t i = 0; i < g->nodes * d; i++) {
        x[i] = g->feat[i];
    }
    double *x1 = aggregate(g, x, d);
    double *x2 = aggregate(g, x1, 2 * d);
    double acc0 = centroid_accuracy(g, x, d);
    double acc2 = centroid_accuracy(g, x2, 4 * d);
    print_message("# features alone %.3f, two aggregation hops %.3f\n", acc0, acc2);
    assert_true(acc0 > 1.5 / g->classes); /* features carry signal */
    assert_true(acc0 < 0.8);              /* but not enough alone */
    assert_true(acc2 > acc0 + 0.15);      /* neighbours help clearly */
    assert_true(acc2 < 0.995);            /* and it is not perfect */
    free(x);
    free(x1);
    free(x2);
    halo_graph_free(g);
}

/* Per-node homophily (homophily_sd > 0): in a directed graph a node's in-edges follow its h as a
 * destination and its out-edges follow the same h through the source acceptance, so the
 * covariance over nodes of the in-share and out-share of same-class edges is Var(h) = sd^2 (the
 * binomial noise of the two sides is independent given h); the variance of the in-share is
 * sd^2 + E[h(1-h)] E[1/deg] with E[h(1-h)] = m(1-m) - sd^2; out-degrees do not depend on h. */
static void sbm_per_node_homophily_has_the_beta_mean_and_spread(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 20000;
    p.classes = 10;
    p.degree_in = 24;
    p.degree_out = 8;
    p.homophily_sd = 0.2;
    p.directed = true;
    p.feat_dim = 0;
    halo_graph *g = make(&p);
    int64_t n = g->nodes;
    int64_t *osame = calloc((size_t)n, sizeof *osame), *odeg = calloc((size_t)n, sizeof *odeg);
    double *a = calloc((size_t)n, sizeof *a);
    double sa = 0, sinv = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t same = 0, deg = g->indptr[v + 1] - g->indptr[v];
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            int32_t u = g->indices[i];
            same += g->label[u] == g->label[v];
            osame[u] += g->label[u] == g->label[v];
            odeg[u]++;
        }
        assert_true(deg > 0);
        a[v] = (double)same / (double)deg;
        sa += a[v];
        sinv += 1.0 / (double)deg;
    }
    double ma = sa / (double)n, minv = sinv / (double)n, sb = 0, sd = 0;
    for (int64_t v = 0; v < n; v++) {
        assert_true(odeg[v] > 0);
        sb += (double)osame[v] / (double)odeg[v];
        sd += (double)odeg[v];
    }
    double mb = sb / (double)n, mdeg = sd / (double)n;
    double var_a = 0, cov = 0, cov_dh = 0, var_d = 0;
    for (int64_t v = 0; v < n; v++) {
        double b = (double)osame[v] / (double)odeg[v];
        var_a += (a[v] - ma) * (a[v] - ma);
        cov += (a[v] - ma) * (b - mb);
        cov_dh += ((double)odeg[v] - mdeg) * (a[v] - ma);
        var_d += ((double)odeg[v] - mdeg) * ((double)odeg[v] - mdeg);
    }
    var_a /= (double)n;
    cov /= (double)n;
    double corr_dh = cov_dh / (double)n / sqrt(var_d / (double)n * var_a);
    double m = 0.75, s2 = 0.2 * 0.2;
    double want_var = s2 + (m * (1 - m) - s2) * minv;
    print_message("# in-share mean %.4f out-share mean %.4f (want %.2f); cov %.5f (want %.5f); "
                  "in-share var %.5f (want %.5f); corr(out-degree, h) %.4f\n",
                  ma, mb, m, cov, s2, var_a, want_var, corr_dh);
    assert_true(fabs(ma - m) < 0.01);
    assert_true(fabs(mb - m) < 0.01);
    assert_true(fabs(cov - s2) < 0.15 * s2);
    assert_true(fabs(var_a - want_var) < 0.15 * want_var);
    assert_true(fabs(corr_dh) < 0.05);
    assert_true(fabs(mdeg - 32) < 0.5);
    free(osame);
    free(odeg);
    free(a);
    halo_graph_free(g);
    /* Same parameters, same graph. */
    halo_graph *g1 = make(&p), *g2 = make(&p);
    assert_true(graphs_equal(g1, g2));
    halo_graph_free(g1);
    halo_graph_free(g2);
}

/* With affinity r and an even class count C, an other-class edge joins twin classes
 * (c' = c xor 1) with probability r + (1 - r) / (C - 1); the overall same-class share stays
 * degree_in / (degree_in + degree_out). */
static void sbm_affinity_sends_other_class_edges_to_the_twin_class(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 20000;
    p.classes = 10;
    p.degree_in = 12;
    p.degree_out = 12;
    p.affinity = 0.6;
    p.feat_dim = 0;
    halo_graph *g = make(&p);
    int64_t same = 0, other = 0, twin = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            int32_t cu = g->label[g->indices[i]], cv = g->label[v];
            same += cu == cv;
            other += cu != cv;
            twin += cu / 2 == cv / 2 && cu != cv;
        }
    }
    double want = 0.6 + 0.4 / 9.0, got = (double)twin / (double)other;
    double h = (double)same / (double)(same + other);
    print_message("# twin share of other-class edges %.4f (want %.4f), homophily %.4f\n", got,
                  want, h);
    assert_true(fabs(got - want) < 0.01);
    assert_true(fabs(h - 0.5) < 0.01);
    halo_graph_free(g);
}

/* Correlation over feature dimensions of the estimated means of classes a and b. */
static double class_mean_corr(const halo_graph *g, int32_t a, int32_t b)
{
    int d = g->feat_dim;
    double *ma = calloc((size_t)d, sizeof *ma), *mb = calloc((size_t)d, sizeof *mb);
    int64_t na = 0, nb = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        double *m = g->label[v] == a ? ma : g->label[v] == b ? mb : NULL;
        if (m == NULL) {
            continue;
        }
        *(g->label[v] == a ? &na : &nb) += 1;
        for (int j = 0; j < d; j++) {
            m[j] += g->feat[(size_t)v * (size_t)d + (size_t)j];
        }
    }
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (int j = 0; j < d; j++) {
        double x = ma[j] / (double)na, y = mb[j] / (double)nb;
        sa += x;
        sb += y;
        saa += x * x;
        sbb += y * y;
        sab += x * y;
    }
    free(ma);
    free(mb);
    double cab = sab / d - sa / d * sb / d;
    return cab / sqrt((saa / d - sa / d * sa / d) * (sbb / d - sb / d * sb / d));
}

/* twin_corr t makes the feature means of twin classes (c, c xor 1) correlate by t and leaves
 * other pairs uncorrelated; a class without a twin (the last of an odd count) too. */
static void twin_classes_have_correlated_feature_means(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 9000;
    p.classes = 9;
    p.feat_dim = 512;
    p.noise = 1;
    p.twin_corr = 0.8;
    halo_graph *g = make(&p);
    double twin01 = class_mean_corr(g, 0, 1), twin67 = class_mean_corr(g, 6, 7);
    double other02 = class_mean_corr(g, 0, 2), last = class_mean_corr(g, 8, 7);
    print_message("# mean correlation: twins %.3f %.3f, others %.3f %.3f (want 0.8, 0)\n",
                  twin01, twin67, other02, last);
    assert_true(fabs(twin01 - 0.8) < 0.06 && fabs(twin67 - 0.8) < 0.06);
    assert_true(fabs(other02) < 0.15 && fabs(last) < 0.15);
    halo_graph_free(g);
}

/* label_noise e relabels each node with probability e to a uniform class, so a fraction
 * e (C - 1) / C of labels change, to every class about equally often; edges and features do not
 * change. */
static void label_noise_relabels_the_given_fraction_uniformly(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.nodes = 40000;
    p.classes = 8;
    p.feat_dim = 4;
    halo_graph *clean = make(&p);
    p.label_noise = 0.3;
    halo_graph *noisy = make(&p);
    assert_int_equal(clean->edges, noisy->edges);
    assert_memory_equal(clean->indices, noisy->indices, (size_t)clean->edges * 4);
    assert_memory_equal(clean->feat, noisy->feat, (size_t)clean->nodes * 4 * sizeof(float));
    int64_t changed = 0, to[8] = {0};
    for (int64_t v = 0; v < clean->nodes; v++) {
        if (clean->label[v] != noisy->label[v]) {
            changed++;
            to[noisy->label[v]]++;
        }
    }
    double frac = (double)changed / (double)clean->nodes, want = 0.3 * 7.0 / 8.0;
    print_message("# changed labels %.4f (want %.4f)\n", frac, want);
    assert_true(fabs(frac - want) < 0.01);
    for (int c = 0; c < 8; c++) {
        assert_true(fabs((double)to[c] - (double)changed / 8) < 0.1 * (double)changed / 8);
    }
    halo_graph_free(clean);
    halo_graph_free(noisy);
}

static void presets_have_the_shape_of_ogb_datasets(void **state)
{
    (void)state;
    halo_gen_params p;
    assert_int_equal(halo_gen_preset("products", 0.001, &p), 0);
    assert_int_equal(p.nodes, 2449);
    assert_int_equal(p.feat_dim, 100);
    assert_int_equal(p.classes, 47);
    int64_t tr, va, te;
    halo_gen_split_sizes(&p, &tr, &va, &te);
    assert_int_equal(tr, 197); /* 196615 / 2449029 * 2449 = 196.6 */
    assert_int_equal(va, 39);  /* 39323 / 2449029 * 2449 = 39.3 */
    assert_int_equal(te, 2213); /* 2213091 / 2449029 * 2449 = 2213.0 */
    halo_graph *g = make(&p);
    int64_t split[4] = {0};
    for (int64_t v = 0; v < g->nodes; v++) {
        split[g->split[v]]++;
    }
    assert_int_equal(split[HALO_SPLIT_TRAIN], 197);
    assert_int_equal(split[HALO_SPLIT_VALID], 39);
    assert_int_equal(split[HALO_SPLIT_TEST], 2213);
    halo_graph_free(g);
    /* Mean degree of ogbn-arxiv (symmetrised) is 2 * 1166243 / 169343 = 13.77; removing
     * duplicate edges takes a little of it. */
    assert_int_equal(halo_gen_preset("arxiv", 0.05, &p), 0);
    assert_int_equal(p.nodes, 8467);
    g = make(&p);
    double mean = (double)g->edges / (double)g->nodes;
    assert_true(mean > 12.4 && mean <= 13.78);
    halo_graph_free(g);
    assert_int_equal(halo_gen_preset("papers100M", 0.0001, &p), 0);
    assert_int_equal(p.nodes, 11106);
    assert_int_equal(p.classes, 172);
    g = make(&p);
    for (int64_t v = 0; v < g->nodes; v++) {
        assert_true((g->label[v] == -1) == (g->split[v] == HALO_SPLIT_NONE));
    }
    halo_graph_free(g);
    assert_int_equal(halo_gen_preset("cora", 1, &p), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "cora"));
}

static void gen_check_rejects_bad_parameters(void **state)
{
    (void)state;
    halo_gen_params p;
    halo_graph *g;
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.nodes = 1;
    assert_int_equal(halo_gen_graph(&p, &g), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "--nodes"));
    halo_gen_defaults(HALO_GEN_RMAT, &p);
    p.a = 0.6;
    p.b = 0.3;
    p.c = 0.3;
    assert_int_equal(halo_gen_graph(&p, &g), HALO_EUSAGE);
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.classes = 0;
    assert_int_equal(halo_gen_graph(&p, &g), HALO_EUSAGE);
    halo_gen_defaults(HALO_GEN_SBM, &p);
    p.train = 0.9;
    assert_int_equal(halo_gen_graph(&p, &g), HALO_EUSAGE);
    assert_null(g);
}

/* A hand-built graph: 4 nodes, edges 1->0, 2->0, 0->1, 3->2. */
static halo_graph *tiny(void)
{
    halo_graph *g = halo_graph_alloc(4, 4, 2, 3, 1);
    int64_t indptr[] = {0, 2, 3, 4, 4};
    int32_t indices[] = {1, 2, 0, 3};
    memcpy(g->indptr, indptr, sizeof indptr);
    memcpy(g->indices, indices, sizeof indices);
    int32_t label[] = {0, 2, -1, 1};
    memcpy(g->label, label, sizeof label);
    uint8_t split[] = {1, 2, 3, 0};
    memcpy(g->split, split, sizeof split);
    snprintf(g->name, sizeof g->name, "tiny");
    return g;
}

static void check_names_file_and_entry_of_each_broken_invariant(void **state)
{
    (void)state;
    halo_graph *g = tiny();
    assert_int_equal(halo_graph_check(g, "d"), 0);
    struct {
        int which;       /* array to break */
        int64_t at;      /* entry */
        int64_t value;   /* bad value */
        const char *msg; /* expected in the message */
    } cases[] = {
        {HALO_GA_INDPTR, 0, 1, "d/indptr.i64: entry 0 is 1"},
        {HALO_GA_INDPTR, 2, 1, "d/indptr.i64: entry 2 is 1, less than entry 1"},
        {HALO_GA_INDPTR, 4, 5, "d/indptr.i64: last entry is 5"},
        {HALO_GA_INDICES, 3, 4, "d/indices.i32: entry 3 (row 2) is 4"},
        {HALO_GA_INDICES, 0, -1, "d/indices.i32: entry 0 (row 0) is -1"},
        {HALO_GA_LABEL, 2, 3, "d/label.i32: entry 2 is 3"},
        {HALO_GA_LABEL, 1, -2, "d/label.i32: entry 1 is -2"},
        {HALO_GA_SPLIT, 3, 4, "d/split.u8: entry 3 is 4"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        halo_graph *b = tiny();
        switch (cases[k].which) {
        case HALO_GA_INDPTR: b->indptr[cases[k].at] = cases[k].value; break;
        case HALO_GA_INDICES: b->indices[cases[k].at] = (int32_t)cases[k].value; break;
        case HALO_GA_LABEL: b->label[cases[k].at] = (int32_t)cases[k].value; break;
        default: b->split[cases[k].at] = (uint8_t)cases[k].value; break;
        }
        assert_int_equal(halo_graph_check(b, "d"), HALO_EINPUT);
        if (strstr(halo_errmsg(), cases[k].msg) == NULL) {
            fail_msg("case %zu: '%s' lacks '%s'", k, halo_errmsg(), cases[k].msg);
        }
        halo_graph_free(b);
    }
    halo_graph_free(g);
}

static void verify_catches_changed_and_truncated_files(void **state)
{
    (void)state;
    char dir[128], path[256];
    snprintf(dir, sizeof dir, "%s/tiny", scratch);
    halo_graph *g = tiny();
    assert_int_equal(halo_graph_write(g, dir, NULL), 0);
    assert_int_equal(halo_graph_verify(dir), 0);
    /* A changed feature byte breaks no invariant: only the checksum sees it. */
    snprintf(path, sizeof path, "%s/feat.f32", dir);
    g->feat[3] = 1.5f;
    assert_int_equal(halo_file_write_all(path, g->feat, 4 * 2 * sizeof(float)), 0);
    assert_int_equal(halo_graph_verify(dir), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.f32: checksum"));
    assert_int_equal(halo_file_write_all(path, g->feat, 7 * sizeof(float)), 0);
    assert_int_equal(halo_graph_verify(dir), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.f32: size is 28 bytes"));
    /* An out-of-range source is reported as such, before its checksum. */
    assert_int_equal(halo_graph_write(g, dir, NULL), 0);
    snprintf(path, sizeof path, "%s/indices.i32", dir);
    g->indices[1] = 77;
    assert_int_equal(halo_file_write_all(path, g->indices, 4 * sizeof(int32_t)), 0);
    assert_int_equal(halo_graph_verify(dir), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "indices.i32: entry 1 (row 0) is 77"));
    halo_graph_free(g);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void degree_stats_match_a_sorted_reference(void **state)
{
    (void)state;
    enum { N = 10001 };
    int64_t *deg = malloc(N * sizeof *deg), *sorted = malloc(N * sizeof *sorted);
    halo_rng r;
    halo_rng_init(&r, 5, HALO_RNG_TEST, 0, 0, 0);
    for (int i = 0; i < N; i++) {
        deg[i] = (int64_t)(halo_rng_below(&r, 4) == 0 ? 0 : halo_rng_below(&r, 1000));
    }
    memcpy(sorted, deg, N * sizeof *deg);
    qsort(sorted, N, sizeof *sorted, cmp_i64);
    halo_degree_stats s;
    halo_degree_stats_compute(deg, N, &s);
    assert_int_equal(s.min, sorted[0]);
    assert_int_equal(s.max, sorted[N - 1]);
    assert_int_equal(s.median, sorted[(N - 1) / 2]);
    int64_t in_bin[HALO_DEG_BINS] = {0};
    for (int i = 0; i < N; i++) {
        int b = 0;
        while (b < HALO_DEG_BINS - 1 && !(deg[i] < (1LL << b))) {
            b++;
        }
        in_bin[b]++; /* bin b holds degrees in [2^(b-1), 2^b), bin 0 holds 0 */
    }
    assert_memory_equal(in_bin, s.hist, sizeof in_bin);
    assert_int_equal(s.bins, 11); /* 999 < 2^10 */
    free(deg);
    free(sorted);
    halo_graph *g = tiny();
    halo_graph_stats gs;
    halo_graph_stats_compute(g, &gs);
    assert_int_equal(gs.in.max, 2);
    assert_int_equal(gs.in.min, 0);
    assert_int_equal(gs.out.max, 1);
    assert_int_equal(gs.labelled, 3);
    assert_int_equal(gs.split[HALO_SPLIT_NONE], 1);
    halo_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gen_same_params_give_identical_graphs),
        cmocka_unit_test(gen_write_matches_in_memory_graph_and_verifies),
        cmocka_unit_test(rmat_rows_are_sorted_unique_loop_free_and_symmetric),
        cmocka_unit_test(rmat_levels_pick_quadrants_with_probabilities_a_b_c_d),
        cmocka_unit_test(rmat_labels_follow_high_bits_so_low_classes_have_hubs),
        cmocka_unit_test(sbm_homophily_and_degree_match_parameters),
        cmocka_unit_test(sbm_neighbours_make_classes_learnable_but_not_trivially),
        cmocka_unit_test(sbm_per_node_homophily_has_the_beta_mean_and_spread),
        cmocka_unit_test(sbm_affinity_sends_other_class_edges_to_the_twin_class),
        cmocka_unit_test(label_noise_relabels_the_given_fraction_uniformly),
        cmocka_unit_test(twin_classes_have_correlated_feature_means),
        cmocka_unit_test(presets_have_the_shape_of_ogb_datasets),
        cmocka_unit_test(gen_check_rejects_bad_parameters),
        cmocka_unit_test(check_names_file_and_entry_of_each_broken_invariant),
        cmocka_unit_test(verify_catches_changed_and_truncated_files),
        cmocka_unit_test(degree_stats_match_a_sorted_reference),
    };
    return cmocka_run_group_tests_name("gen", tests, setup, teardown);
}
