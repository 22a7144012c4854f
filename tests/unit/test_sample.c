/* Unit tests of runtime/sample: fanout limits, edges exist, to_block numbering, determinism,
 * uniformity of the draws (chi-square), against slow obvious references. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "graph/graph.h"
#include "sample/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A random graph without duplicate edges: node v has in-degree drawn from [0, maxdeg], except
 * node 0 whose in-degree is `hub` (every node u < hub+1, u != 0). */
static halo_graph *random_graph(int64_t n, int maxdeg, int hub, uint64_t seed)
{
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 1, 0, 0);
    int64_t *deg = HALO_NEW(int64_t, n);
    int64_t m = 0;
    for (int64_t v = 0; v < n; v++) {
        deg[v] = v == 0 ? hub : (int64_t)halo_rng_below(&r, (uint64_t)maxdeg + 1);
        m += deg[v];
    }
    halo_graph *g = halo_graph_alloc(n, m, 4, 2, 0);
    uint8_t *mark = HALO_NEW(uint8_t, n);
    g->indptr[0] = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t e = g->indptr[v];
        if (v == 0) {
            for (int64_t u = 1; u <= hub; u++) {
                g->indices[e++] = (int32_t)u;
            }
        } else {
            int64_t k = 0;
            while (k < deg[v]) {
                int32_t u = (int32_t)halo_rng_below(&r, (uint64_t)n);
                if (!mark[u]) {
                    mark[u] = 1;
                    g->indices[e + k++] = u;
                }
            }
            for (int64_t j = 0; j < k; j++) {
                mark[g->indices[e + j]] = 0;
            }
            e += k;
        }
        g->indptr[v + 1] = e;
    }
    for (int64_t i = 0; i < n * 4; i++) {
        g->feat[i] = (float)i;
    }
    halo_free(mark);
    halo_free(deg);
    return g;
}

/* Whether u -> v is an edge (linear scan of v's row). */
static int has_edge(const halo_graph *g, int32_t u, int32_t v)
{
    for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
        if (g->indices[e] == u) {
            return 1;
        }
    }
    return 0;
}

/* Checks every invariant of one block against the graph with slow obvious code: destinations
 * first, sources distinct, each edge exists, counts equal min(deg, fanout), neighbours distinct,
 * and the sources are exactly the destinations then the neighbours in first-appearance order. */
static void check_block(const halo_graph *g, const halo_block *b, int fanout)
{
    assert_true(b->num_src >= b->num_dst);
    assert_int_equal(b->indptr[0], 0);
    assert_int_equal(b->indptr[b->num_dst], b->num_edges);
    /* reference numbering: linear search */
    int32_t *ref = HALO_ALLOC(int32_t, b->num_dst + b->num_edges + 1);
    int32_t nref = 0;
    for (int32_t i = 0; i < b->num_dst; i++) {
        ref[nref++] = b->src_gid[i];
    }
    for (int32_t i = 0; i < b->num_dst; i++) {
        int32_t v = b->src_gid[i];
        int64_t deg = g->indptr[v + 1] - g->indptr[v];
        int64_t cnt = b->indptr[i + 1] - b->indptr[i];
        int64_t want = (fanout < 0 || deg <= fanout) ? deg : fanout;
        assert_int_equal(cnt, want);
        for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
            assert_true(b->indices[e] >= 0 && b->indices[e] < b->num_src);
            int32_t u = b->src_gid[b->indices[e]];
            assert_true(has_edge(g, u, v));
            for (int64_t f = b->indptr[i]; f < e; f++) {
                assert_true(b->indices[f] != b->indices[e]); /* without replacement */
            }
            int32_t l = -1;
            for (int32_t j = 0; j < nref; j++) {
                if (ref[j] == u) {
                    l = j;
                    break;
                }
            }
            if (l < 0) {
                l = nref;
                ref[nref++] = u;
            }
            assert_int_equal(b->indices[e], l);
        }
    }
    assert_int_equal(nref, b->num_src);
    for (int32_t j = 0; j < nref; j++) {
        assert_int_equal(ref[j], b->src_gid[j]);
    }
    halo_free(ref);
}

static void sampler_blocks_respect_fanout_and_edges(void **state)
{
    (void)state;
    halo_graph *g = random_graph(2000, 40, 300, 7);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int fanouts[3] = {5, 10, 25};
    int32_t seeds[64];
    for (int i = 0; i < 64; i++) {
        seeds[i] = i * 31; /* includes the hub 0 */
    }
    for (int batch = 0; batch < 5; batch++) {
        halo_sample_key k = {11, 0, batch};
        assert_int_equal(halo_sample_graph(s, g, fanouts, 3, &k, seeds, 64, &mb), 0);
        assert_int_equal(mb.layers, 3);
        assert_int_equal(mb.num_seeds, 64);
        assert_memory_equal(mb.seeds, seeds, sizeof seeds);
        assert_ptr_equal(mb.input, mb.blocks[0].src_gid);
        for (int l = 0; l < 3; l++) {
            check_block(g, &mb.blocks[l], fanouts[l]);
            if (l > 0) { /* a layer's sources are the next layer's destinations... reversed */
                assert_int_equal(mb.blocks[l - 1].num_dst, mb.blocks[l].num_src);
                assert_memory_equal(mb.blocks[l - 1].src_gid, mb.blocks[l].src_gid,
                                    (size_t)mb.blocks[l].num_src * 4);
            }
        }
    }
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
}

static void sampler_large_fanout_and_all_neighbours(void **state)
{
    (void)state;
    halo_graph *g = random_graph(3000, 200, 2000, 3);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int32_t seeds[40];
    for (int i = 0; i < 40; i++) {
        seeds[i] = i * 70;
    }
    halo_sample_key k = {5, 2, 9};
    int fan_big[2] = {-1, 100}; /* 100 > 32: the hash-set path */
    assert_int_equal(halo_sample_graph(s, g, fan_big, 2, &k, seeds, 40, &mb), 0);
    check_block(g, &mb.blocks[0], -1);
    check_block(g, &mb.blocks[1], 100);
    /* fanout -1 takes each row whole, in row order */
    const halo_block *b = &mb.blocks[0];
    for (int32_t i = 0; i < b->num_dst; i++) {
        int32_t v = b->src_gid[i];
        for (int64_t e = b->indptr[i], j = g->indptr[v]; e < b->indptr[i + 1]; e++, j++) {
            assert_int_equal(b->src_gid[b->indices[e]], g->indices[j]);
        }
    }
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
}

/* The draws of a node are a function of (seed, epoch, batch, layer, node) only: the same node
 * sampled alone or among others, in any position, gets the same neighbours. */
static void sampler_draws_depend_only_on_keys_and_node(void **state)
{
    (void)state;
    halo_graph *g = random_graph(1000, 60, 500, 9);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    int fan[1] = {7};
    int32_t many[5] = {3, 0, 17, 400, 999};
    int32_t one[1] = {0};
    halo_sample_key k = {1, 4, 2};
    assert_int_equal(halo_sample_graph(s, g, fan, 1, &k, many, 5, &a), 0);
    assert_int_equal(halo_sample_graph(s, g, fan, 1, &k, one, 1, &b), 0);
    int64_t na = a.blocks[0].indptr[2] - a.blocks[0].indptr[1];
    assert_int_equal(na, 7);
    for (int j = 0; j < 7; j++) {
        assert_int_equal(a.blocks[0].src_gid[a.blocks[0].indices[a.blocks[0].indptr[1] + j]],
                         b.blocks[0].src_gid[b.blocks[0].indices[j]]);
    }
    /* another batch draws differently */
    halo_sample_key k2 = {1, 4, 3};
    assert_int_equal(halo_sample_graph(s, g, fan, 1, &k2, one, 1, &c), 0);
    assert_true(memcmp(b.blocks[0].src_gid, c.blocks[0].src_gid, 8 * 4) != 0);
    halo_sample_free(&a);
    halo_sample_free(&b);
    halo_sample_free(&c);
    halo_sampler_free(s);
    halo_graph_free(g);
}

/* The chi-square survival function P(X > x) for dof degrees of freedom: the regularised upper
 * incomplete gamma Q(dof/2, x/2), by its series when x/2 < dof/2 + 1 and by its continued
 * fraction (modified Lentz) otherwise; relative error ~1e-12 for the sizes used here. */
static double chi2_sf(double x, double dof)
{
    double a = dof / 2, y = x / 2;
    if (y <= 0) {
        return 1;
    }
    double lpre = a * log(y) - y - lgamma(a);
    if (y < a + 1) {
        double term = 1 / a, sum = term; /* P(a, y) = e^lpre * sum y^n / (a (a+1) ... (a+n)) */
        for (int n = 1; n < 10000 && fabs(term) > fabs(sum) * 1e-15; n++) {
            term *= y / (a + n);
            sum += term;
        }
        return 1 - exp(lpre) * sum;
    }
    double tiny = 1e-300, b = y + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 10000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15) {
            break;
        }
    }
    return exp(lpre) * h;
}

/* chi2_sf against values it must take: exp(-x/2) for 2 dof, the textbook 5% points, and
 * values of Q(dof/2, x/2) from mpmath.gammainc (30 digits) for the dof the uniformity test uses. */
static void chi2_sf_matches_known_values(void **state)
{
    (void)state;
    for (double x = 0.5; x < 40; x *= 1.7) {
        assert_true(fabs(chi2_sf(x, 2) - exp(-x / 2)) < 1e-12);
    }
    assert_true(fabs(chi2_sf(3.841458820694124, 1) - 0.05) < 1e-9);
    assert_true(fabs(chi2_sf(18.307038053275146, 10) - 0.05) < 1e-9);
    assert_true(fabs(chi2_sf(10, 10) - 0.44049328506521241) < 1e-9);   /* series branch edge */
    assert_true(fabs(chi2_sf(59, 59) - 0.47551199729533011) < 1e-9);   /* 60-node hub */
    assert_true(fabs(chi2_sf(100, 59) - 0.00068697311085321802) < 1e-9);  /* continued fraction */
    assert_true(fabs(chi2_sf(30, 59) - 0.99939753271171760) < 1e-9);
    assert_true(chi2_sf(0, 5) == 1);
}

/* Over many epochs, each of a hub's d neighbours is drawn k/d of the time (chi-square). */
static void chi_square_uniform(int hub, int fanout, int epochs)
{
    halo_graph *g = random_graph(hub + 1, 3, hub, 1);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int64_t *count = HALO_NEW(int64_t, hub + 1);
    int32_t seed0[1] = {0};
    for (int ep = 0; ep < epochs; ep++) {
        halo_sample_key k = {42, ep, 0};
        assert_int_equal(halo_sample_graph(s, g, &fanout, 1, &k, seed0, 1, &mb), 0);
        const halo_block *b = &mb.blocks[0];
        assert_int_equal(b->num_edges, fanout);
        for (int64_t e = 0; e < b->num_edges; e++) {
            count[b->src_gid[b->indices[e]]]++;
        }
    }
    /* each count is Binomial(epochs, k/d): scale by its variance epochs*p*(1-p), and the fixed
     * total (k per epoch) takes one degree of freedom */
    double pr = (double)fanout / hub, expect = epochs * pr, chi = 0;
    for (int u = 1; u <= hub; u++) {
        chi += (count[u] - expect) * (count[u] - expect) / (expect * (1 - pr));
    }
    /* two-sided: a biased sampler makes chi large (p near 0); one that cycles through the
     * neighbours, or repeats itself, makes the counts too even (p near 1) */
    double p = chi2_sf(chi, hub - 1);
    printf("# chi-square hub=%d fanout=%d epochs=%d: %.1f on %d dof, p = %.4f\n", hub, fanout,
           epochs, chi, hub - 1, p);
    assert_true(p > 1e-3);
    assert_true(p < 1 - 1e-3);
    halo_free(count);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
}

static void sampler_draws_hub_neighbours_uniformly(void **state)
{
    (void)state;
    chi_square_uniform(60, 10, 3000);  /* Floyd, bit-mask membership (degree <= 64) */
    chi_square_uniform(100, 10, 4000); /* Floyd, sorted-array membership */
    chi_square_uniform(300, 64, 1500); /* Floyd, hash set */
    chi_square_uniform(40, 39, 2000);  /* k close to d */
}

static void sampler_rejects_duplicate_and_bad_seeds(void **state)
{
    (void)state;
    halo_graph *g = random_graph(100, 5, 10, 2);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int fan[1] = {3};
    halo_sample_key k = {1, 0, 0};
    int32_t dup[3] = {4, 5, 4};
    assert_int_equal(halo_sample_graph(s, g, fan, 1, &k, dup, 3, &mb), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "twice"));
    int32_t bad[1] = {100};
    assert_int_equal(halo_sample_graph(s, g, fan, 1, &k, bad, 1, &mb), HALO_EUSAGE);
    assert_int_equal(halo_sample_graph(s, g, fan, 0, &k, bad, 1, &mb), HALO_EUSAGE);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
}

static void parse_fanouts_reads_lists(void **state)
{
    (void)state;
    int f[HALO_MAX_LAYERS];
    assert_int_equal(halo_sample_parse_fanouts("10,25", f, HALO_MAX_LAYERS), 2);
    assert_int_equal(f[0], 10);
    assert_int_equal(f[1], 25);
    assert_int_equal(halo_sample_parse_fanouts("-1", f, HALO_MAX_LAYERS), 1);
    assert_int_equal(f[0], -1);
    assert_int_equal(halo_sample_parse_fanouts("10,,2", f, HALO_MAX_LAYERS), HALO_EUSAGE);
    assert_int_equal(halo_sample_parse_fanouts("-2", f, HALO_MAX_LAYERS), HALO_EUSAGE);
    assert_int_equal(halo_sample_parse_fanouts("1,2,3", f, 2), HALO_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampler_blocks_respect_fanout_and_edges),
        cmocka_unit_test(sampler_large_fanout_and_all_neighbours),
        cmocka_unit_test(sampler_draws_depend_only_on_keys_and_node),
        cmocka_unit_test(chi2_sf_matches_known_values),
        cmocka_unit_test(sampler_draws_hub_neighbours_uniformly),
        cmocka_unit_test(sampler_rejects_duplicate_and_bad_seeds),
        cmocka_unit_test(parse_fanouts_reads_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
