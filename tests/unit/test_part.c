/* Unit tests of runtime/part: partition invariants for every method and part count, METIS
 * balance and cut against a random baseline, the force-even split, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/rng.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "part/part.h"
#include "part/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmproot[1024];

/* A fresh directory name under the test's scratch root. */
static void scratch(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmproot, name);
    halo_rmtree(out);
}

/* Builds a graph from an edge list (src -> dst) by counting sort on the destination, with
 * features, labels and a split that are simple functions of the node id (so a wrong row shows). */
static halo_graph *graph_from_edges(int64_t n, int64_t m, const int32_t *src, const int32_t *dst,
                                    const char *name, uint64_t seed)
{
    halo_graph *g = halo_graph_alloc(n, m, 3, 5, 1);
    snprintf(g->name, sizeof g->name, "%s", name);
    for (int64_t e = 0; e < m; e++) {
        g->indptr[dst[e] + 1]++;
    }
    for (int64_t v = 0; v < n; v++) {
        g->indptr[v + 1] += g->indptr[v];
    }
    int64_t *cur = HALO_ALLOC(int64_t, n);
    memcpy(cur, g->indptr, (size_t)n * sizeof *cur);
    for (int64_t e = 0; e < m; e++) {
        g->indices[cur[dst[e]]++] = src[e];
    }
    halo_free(cur);
    for (int64_t v = 0; v < n; v++) {
        for (int j = 0; j < 3; j++) {
            g->feat[v * 3 + j] = (float)v + 0.25f * (float)j;
        }
        g->label[v] = (int32_t)(v % 5) - (v % 17 == 0);
        uint64_t h = halo_hash5(seed, HALO_RNG_TEST, (uint64_t)v, 7, 0) % 10;
        g->split[v] = h < 3 ? HALO_SPLIT_TRAIN : h == 3 ? HALO_SPLIT_VALID
                                              : h == 4 ? HALO_SPLIT_TEST : HALO_SPLIT_NONE;
    }
    return g;
}

/* Planted partition: nodes in `blocks` hidden blocks (by hash, not by id range); each node gets
 * `deg` in-edges, 90% from its own block; a few self loops and duplicate edges. */
static halo_graph *make_sbm(int64_t n, int blocks, int deg, uint64_t seed)
{
    int64_t m = n * deg;
    int32_t *src = HALO_ALLOC(int32_t, m), *dst = HALO_ALLOC(int32_t, m);
    int32_t *block = HALO_ALLOC(int32_t, n);
    int64_t **members = HALO_NEW(int64_t *, blocks);
    int64_t *cnt = HALO_NEW(int64_t, blocks);
    for (int64_t v = 0; v < n; v++) {
        block[v] = (int32_t)(halo_hash5(seed, HALO_RNG_TEST, (uint64_t)v, 1, 0) % blocks);
        cnt[block[v]]++;
    }
    for (int b = 0; b < blocks; b++) {
        members[b] = HALO_ALLOC(int64_t, cnt[b] + 1);
        cnt[b] = 0;
    }
    for (int64_t v = 0; v < n; v++) {
        members[block[v]][cnt[block[v]]++] = v;
    }
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 2, 0, 0);
    int64_t e = 0;
    for (int64_t v = 0; v < n; v++) {
        for (int d = 0; d < deg; d++) {
            int64_t u;
            if (d == 0 && v % 50 == 0) {
                u = v; /* self loop */
            } else if (d == 1 && e > 0 && v % 40 == 0) {
                u = src[e - 1]; /* duplicate */
            } else if (halo_rng_uniform(&r) < 0.9) {
                int b = block[v];
                u = members[b][halo_rng_below(&r, (uint64_t)cnt[b])];
            } else {
                u = (int64_t)halo_rng_below(&r, (uint64_t)n);
            }
            src[e] = (int32_t)u;
            dst[e] = (int32_t)v;
            e++;
        }
    }
    halo_graph *g = graph_from_edges(n, m, src, dst, "sbm", seed);
    for (int b = 0; b < blocks; b++) {
        halo_free(members[b]);
    }
    halo_free(members);
    halo_free(cnt);
    halo_free(block);
    halo_free(src);
    halo_free(dst);
    return g;
}

/* R-MAT (a, b, c) = (0.57, 0.19, 0.19) on 2^scale nodes with m edges: a power-law graph with
 * hubs, isolated nodes and a skewed in-degree. */
static halo_graph *make_rmat(int scale, int64_t m, uint64_t seed)
{
    int64_t n = 1LL << scale;
    int32_t *src = HALO_ALLOC(int32_t, m), *dst = HALO_ALLOC(int32_t, m);
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 3, 0, 0);
    for (int64_t e = 0; e < m; e++) {
        int64_t u = 0, v = 0;
        for (int s = 0; s < scale; s++) {
            double x = halo_rng_uniform(&r);
            int bu = x >= 0.57 + 0.19, bv = (x >= 0.57 && x < 0.76) || x >= 0.95;
            u = u * 2 + bu;
            v = v * 2 + bv;
        }
        src[e] = (int32_t)u;
        dst[e] = (int32_t)v;
    }
    halo_graph *g = graph_from_edges(n, m, src, dst, "rmat", seed);
    halo_free(src);
    halo_free(dst);
    return g;
}

static int cmp32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Checks every invariant of the partition in pdir against g with slow, obvious references:
 * ranges tile the ids; orig_id is a bijection; each part's rows equal the original rows (edges
 * through orig_id in the input order, or as a multiset when rows_sorted; features, labels,
 * split); each halo set equals the sorted sources owned elsewhere; owner lookup agrees with a
 * linear scan; equal training seeds per part, all training nodes, none twice, own ones first;
 * with trainers > 1 (multilevel) every seed owned by the part's machine. */
static void check_partition(const halo_graph *g, const char *pdir, int parts, int trainers)
{
    halo_partinfo *pi = NULL;
    assert_int_equal(halo_partinfo_load(pdir, &pi), 0);
    assert_int_equal(pi->parts, parts);
    assert_int_equal(pi->trainers_per_machine, trainers);
    assert_int_equal(pi->nodes, g->nodes);
    assert_int_equal(pi->edges, g->edges);
    assert_int_equal(pi->start[0], 0);
    assert_int_equal(pi->start[parts], g->nodes);
    int64_t n = g->nodes;
    const halo_json *rs = halo_json_get(pi->json, "rows_sorted");
    assert_non_null(rs);
    bool sorted = rs->type == HALO_JSON_BOOL && rs->boolean;

    char path[4096];
    halo_map om;
    snprintf(path, sizeof path, "%s/orig_id.i64", pdir);
    assert_int_equal(halo_map_file(path, (size_t)n * 8, &om), 0);
    const int64_t *orig = om.data;
    uint8_t *seen = HALO_NEW(uint8_t, n);
    for (int64_t i = 0; i < n; i++) {
        assert_true(orig[i] >= 0 && orig[i] < n);
        assert_int_equal(seen[orig[i]], 0);
        seen[orig[i]] = 1;
    }
    int32_t *newid = HALO_ALLOC(int32_t, n);
    for (int64_t i = 0; i < n; i++) {
        newid[orig[i]] = (int32_t)i;
    }
    /* Owner by linear scan. */
    int32_t *owner = HALO_ALLOC(int32_t, n);
    for (int k = 0; k < parts; k++) {
        assert_true(pi->start[k] <= pi->start[k + 1]);
        for (int64_t i = pi->start[k]; i < pi->start[k + 1]; i++) {
            owner[i] = k;
            if (i > pi->start[k]) {
                assert_true(orig[i] > orig[i - 1]); /* ascending original order in a part */
            }
        }
    }
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(halo_partinfo_owner(pi, (int32_t)i), owner[i]);
    }
    assert_int_equal(halo_partinfo_owner(pi, (int32_t)n), -1);

    int64_t total_edges = 0, total_train = 0;
    for (int64_t v = 0; v < n; v++) {
        total_train += g->split[v] == HALO_SPLIT_TRAIN;
    }
    int64_t T = total_train / parts;
    assert_int_equal(pi->train_per_part, T);
    memset(seen, 0, (size_t)n);
    int32_t *buf = HALO_ALLOC(int32_t, g->edges + 1);
    int32_t *ref = HALO_ALLOC(int32_t, g->edges + 1);
    for (int k = 0; k < parts; k++) {
        halo_part *p = NULL;
        assert_int_equal(halo_part_load(pdir, k, &p), 0);
        assert_int_equal(p->start, pi->start[k]);
        assert_int_equal(p->end, pi->start[k + 1]);
        int64_t nh = 0;
        for (int64_t i = 0; i < p->nodes; i++) {
            int64_t o = orig[p->start + i];
            for (int j = 0; j < 3; j++) {
                assert_true(p->feat[i * 3 + j] == g->feat[o * 3 + j]);
            }
            assert_int_equal(p->label[i], g->label[o]);
            assert_int_equal(p->split[i], g->split[o]);
            int64_t d = g->indptr[o + 1] - g->indptr[o];
            assert_int_equal(p->indptr[i + 1] - p->indptr[i], d);
            for (int64_t e = 0; e < d; e++) {
                int32_t gid = p->indices[p->indptr[i] + e];
                if (sorted && e > 0) {
                    assert_true(gid >= p->indices[p->indptr[i] + e - 1]);
                }
                buf[e] = (int32_t)orig[gid];
                ref[e] = g->indices[g->indptr[o] + e];
            }
            if (sorted) {
                qsort(buf, (size_t)d, 4, cmp32);
                qsort(ref, (size_t)d, 4, cmp32);
            }
            assert_memory_equal(buf, ref, (size_t)d * 4);
        }
        total_edges += p->edges;
        /* Halo reference: sources of the part's edges owned elsewhere, sorted, unique. */
        int64_t m = 0;
        for (int64_t e = 0; e < p->edges; e++) {
            if (owner[p->indices[e]] != k) {
                buf[m++] = p->indices[e];
            }
        }
        qsort(buf, (size_t)m, 4, cmp32);
        for (int64_t e = 0; e < m; e++) {
            if (nh == 0 || buf[nh - 1] != buf[e]) {
                buf[nh++] = buf[e];
            }
        }
        assert_int_equal(p->num_halo, nh);
        assert_memory_equal(p->halo, buf, (size_t)nh * 4);
        for (int64_t h = 0; h < nh; h++) {
            int64_t o = orig[p->halo[h]];
            assert_int_equal(p->halo_deg[h], g->indptr[o + 1] - g->indptr[o]);
        }
        /* Training seeds. */
        assert_int_equal(p->num_train, T);
        int64_t own = 0;
        for (int64_t i = p->start; i < p->end; i++) {
            own += g->split[orig[i]] == HALO_SPLIT_TRAIN;
        }
        int64_t keep = own < T ? own : T;
        for (int64_t t = 0; t < p->num_train; t++) {
            int32_t s = p->train[t];
            assert_true(s >= 0 && s < n);
            assert_int_equal(g->split[orig[s]], HALO_SPLIT_TRAIN);
            assert_int_equal(seen[orig[s]], 0);
            seen[orig[s]] = 1;
            assert_int_equal(owner[s] == k, t < keep);
            if (trainers > 1) {
                assert_int_equal(owner[s] / trainers, k / trainers);
            }
        }
        halo_part_free(p);
    }
    assert_int_equal(total_edges, g->edges);
    halo_free(buf);
    halo_free(ref);
    halo_free(owner);
    halo_free(newid);
    halo_free(seen);
    halo_unmap(&om);
    halo_partinfo_free(pi);
}

/* Partitions g with method into P parts (multilevel: machines x trainers) and checks it. */
static void partition_and_check(const halo_graph *g, int method, int stream, int P)
{
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.choice.method = method;
    o.choice.stream = stream;
    o.parts = P;
    int trainers = 1;
    if (method == HALO_PARTITION_MULTILEVEL && P % 2 == 0 && P > 2) {
        trainers = 2;
    }
    o.trainers_per_machine = trainers;
    int32_t *custom = NULL;
    if (method == HALO_PARTITION_CUSTOM) {
        custom = HALO_ALLOC(int32_t, g->nodes);
        for (int64_t v = 0; v < g->nodes; v++) {
            custom[v] = (int32_t)((v * 7) % P);
        }
        o.choice.assignment = custom;
        o.choice.assignment_len = g->nodes;
    }
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/p-%s-%d-%d", tmproot, g->name, method, P);
    halo_partition_stats st;
    int rc = halo_partition_run(g, &o, pdir, &st);
    if (rc != 0) {
        print_error("partition %s method %d P %d: %s\n", g->name, method, P, halo_errmsg());
    }
    assert_int_equal(rc, 0);
    check_partition(g, pdir, P, trainers);
    halo_free(custom);
    halo_rmtree(pdir);
}

static halo_graph *sbm_small, *rmat_small;

static void invariants_hold(int method, int stream)
{
    static const int ps[] = {1, 2, 3, 4, 8};
    for (int i = 0; i < 5; i++) {
        partition_and_check(sbm_small, method, stream, ps[i]);
        partition_and_check(rmat_small, method, stream, ps[i]);
    }
}

static void metis_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_METIS, 0);
}

static void multilevel_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_MULTILEVEL, 0);
}

static void random_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_RANDOM, 0);
}

static void ldg_stream_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_STREAM, HALO_STREAM_LDG);
}

static void fennel_stream_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_STREAM, HALO_STREAM_FENNEL);
}

static void custom_partition_satisfies_invariants(void **state)
{
    (void)state;
    invariants_hold(HALO_PARTITION_CUSTOM, 0);
}

/* With sort_rows each in-edge row is ascending in new ids (and still the same multiset). */
static void sorted_rows_option_sorts_each_row(void **state)
{
    (void)state;
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.parts = 3;
    o.sort_rows = true;
    char pdir[2048];
    scratch(pdir, sizeof pdir, "sorted");
    assert_int_equal(halo_partition_run(rmat_small, &o, pdir, NULL), 0);
    check_partition(rmat_small, pdir, 3, 1);
    halo_rmtree(pdir);
}

/* Slow reference: per-part weight of a column, max over mean. */
static double ref_balance(const halo_graph *g, const int32_t *a, int P, int c)
{
    double w[64] = {0}, total = 0, max = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        double x = c == 0 ? 1.0
                   : c == 1 ? (g->split[v] == HALO_SPLIT_TRAIN)
                            : (double)(g->indptr[v + 1] - g->indptr[v]);
        w[a[v]] += x;
        total += x;
    }
    for (int k = 0; k < P; k++) {
        max = w[k] > max ? w[k] : max;
    }
    return max * P / total;
}

/* Slow reference: edges whose endpoints are in different parts. */
static int64_t ref_cut(const halo_graph *g, const int32_t *a)
{
    int64_t cut = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            if (a[g->indices[e]] != a[v]) {
                cut++;
            }
        }
    }
    return cut;
}

/* METIS with node, train and edge constraints keeps each within its tolerance (1.05, plus 0.01
 * for the rounding METIS allows itself on graphs of a few thousand nodes) and cuts fewer edges
 * than a random assignment drawn by the test: far fewer on planted blocks, and down to the
 * structural floor on R-MAT. */
static void metis_three_constraints_balanced_and_cut_below_random(void **state)
{
    (void)state;
    halo_graph *gs[2] = {make_sbm(20000, 8, 12, 5), make_rmat(14, 65000, 6)};
    for (int i = 0; i < 2; i++) {
        halo_graph *g = gs[i];
        int P = 4;
        int32_t *a = HALO_ALLOC(int32_t, g->nodes), *r = HALO_ALLOC(int32_t, g->nodes);
        assert_int_equal(halo_partition_metis(g, P, HALO_PCON_ALL, 1.05, HALO_POBJ_CUT, 1, a), 0);
        for (int c = 0; c < 3; c++) {
            double b = ref_balance(g, a, P, c);
            print_message("# %s metis balance[%d] = %.4f\n", g->name, c, b);
            assert_true(b <= 1.06);
            assert_true(halo_partition_balance(g, a, P, c) == b);
        }
        halo_rng rng;
        halo_rng_init(&rng, 99, HALO_RNG_TEST, 4, 0, 0);
        for (int64_t v = 0; v < g->nodes; v++) {
            r[v] = (int32_t)halo_rng_below(&rng, (uint64_t)P);
        }
        int64_t mc = ref_cut(g, a), rcut = ref_cut(g, r);
        print_message("# %s metis cut %lld, random cut %lld\n", g->name, (long long)mc,
                      (long long)rcut);
        assert_int_equal(halo_partition_edge_cut(g, a), mc);
        if (i == 0) {
            assert_true(mc < rcut * 3 / 10); /* planted blocks: far below */
        } else {
            /* R-MAT (0.57, 0.19, 0.19, 0.05) sends 38% of its edges across the top-level split
             * by construction, so 4 parts cannot cut below about 1 - 0.62^2 = 62% of the edges
             * (random: 75%); METIS should find that structure. */
            assert_true(mc < rcut * 85 / 100);
            assert_true(mc < g->edges * 66 / 100);
        }
        /* The library's random partitioner is balanced-ish and cuts about (P-1)/P. */
        assert_int_equal(halo_partition_random(g, P, 3, r), 0);
        assert_true(ref_cut(g, r) > g->edges / 2);
        halo_free(a);
        halo_free(r);
        halo_graph_free(g);
    }
}

/* On a graph with node types the node-count constraint becomes one column per type, so each
 * type is balanced on its own: here type 1 is exactly one planted block, which a cut-minimising
 * partition would otherwise keep in one part. */
static void metis_balances_each_node_type(void **state)
{
    (void)state;
    halo_graph *u = make_sbm(16000, 8, 12, 21);
    halo_graph *g = halo_graph_alloc(u->nodes, u->edges, 3, 5, 2);
    memcpy(g->indptr, u->indptr, (size_t)(u->nodes + 1) * 8);
    memcpy(g->indices, u->indices, (size_t)u->edges * 4);
    memcpy(g->split, u->split, (size_t)u->nodes);
    int64_t n1 = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        g->ntype[v] = halo_hash5(21, HALO_RNG_TEST, (uint64_t)v, 1, 0) % 8 == 0;
        n1 += g->ntype[v];
    }
    int P = 4;
    int32_t *a = HALO_ALLOC(int32_t, g->nodes);
    double bal[2];
    for (int typed = 0; typed < 2; typed++) {
        halo_graph *h = typed ? g : u;
        assert_int_equal(halo_partition_metis(h, P, HALO_PCON_ALL, 1.05, HALO_POBJ_CUT, 1, a), 0);
        int64_t per[4] = {0}, max = 0;
        for (int64_t v = 0; v < g->nodes; v++) {
            per[a[v]] += g->ntype[v];
        }
        for (int k = 0; k < P; k++) {
            max = per[k] > max ? per[k] : max;
        }
        bal[typed] = (double)max * P / (double)n1;
        /* Four columns on 16000 nodes: METIS allows itself a little more slack. */
        assert_true(ref_balance(h, a, P, 0) <= 1.07);
    }
    print_message("# type-1 balance: untyped %.3f, typed %.3f\n", bal[0], bal[1]);
    assert_true(bal[1] <= 1.07);
    assert_true(bal[0] > 1.5); /* without the type columns the block stays together */
    halo_free(a);
    halo_graph_free(g);
    halo_graph_free(u);
}

/* Streaming with constraints respects its hard capacities on nodes and training nodes. */
static void stream_respects_capacity(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(20000, 8, 12, 8);
    int32_t *a = HALO_ALLOC(int32_t, g->nodes);
    for (int h = 0; h < 2; h++) {
        assert_int_equal(halo_partition_stream(g, 4, HALO_PCON_NODES | HALO_PCON_TRAIN, 1.05, h,
                                               1, a), 0);
        assert_true(ref_balance(g, a, 4, 0) <= 1.0501);
        assert_true(ref_balance(g, a, 4, 1) <= 1.0501);
        int32_t *r = HALO_ALLOC(int32_t, g->nodes);
        halo_partition_random(g, 4, 1, r);
        assert_true(ref_cut(g, a) < ref_cut(g, r));
        halo_free(r);
    }
    halo_free(a);
    halo_graph_free(g);
}

/* Multilevel 2 machines x 2 trainers: equal seeds per trainer, all owned by its machine, and
 * partition.json records each part's machine. */
static void multilevel_2x2_seeds_equal_and_on_own_machine(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(6000, 4, 10, 11);
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.choice.method = HALO_PARTITION_MULTILEVEL;
    o.machines = 2;
    o.trainers_per_machine = 2;
    char pdir[4096];
    scratch(pdir, sizeof pdir, "ml22");
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), 0);
    check_partition(g, pdir, 4, 2);
    halo_partinfo *pi;
    assert_int_equal(halo_partinfo_load(pdir, &pi), 0);
    assert_int_equal(pi->machines, 2);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(pi->part_machine[k], k / 2);
        halo_part *p;
        assert_int_equal(halo_part_load(pdir, k, &p), 0);
        assert_true(p->num_train > 0);
        for (int64_t t = 0; t < p->num_train; t++) {
            assert_int_equal(halo_partinfo_owner(pi, p->train[t]) / 2, k / 2);
        }
        halo_part_free(p);
    }
    halo_partinfo_free(pi);
    halo_rmtree(pdir);
    halo_graph_free(g);
}

/* The even split: T = floor(total / P), a part short of training nodes borrows. */
static void force_even_split_borrows_for_short_parts(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(400, 2, 4, 12);
    int32_t *a = HALO_ALLOC(int32_t, g->nodes);
    int64_t total = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        /* Part 0 gets every training node but the first few; part 2 gets none. */
        a[v] = g->split[v] == HALO_SPLIT_TRAIN ? (total++ < 5 ? 1 : 0) : (int32_t)(v % 3);
    }
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.parts = 3;
    char pdir[4096];
    scratch(pdir, sizeof pdir, "even");
    halo_partition_stats st;
    assert_int_equal(halo_partition_write(g, a, &o, pdir, &st), 0);
    assert_int_equal(st.train_per_part, total / 3);
    assert_int_equal(st.train_dropped, total % 3);
    assert_int_equal(st.train_borrowed, (total / 3 - 5) + total / 3);
    check_partition(g, pdir, 3, 1);
    halo_free(a);
    halo_rmtree(pdir);
    halo_graph_free(g);
}

static void bad_part_counts_are_refused(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(50, 2, 3, 13);
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    char pdir[4096];
    scratch(pdir, sizeof pdir, "bad");
    o.parts = 0;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EUSAGE);
    o.parts = -2;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EUSAGE);
    o.parts = 51;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "51 parts"));
    o.parts = 4;
    o.trainers_per_machine = 3;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EUSAGE);
    assert_false(halo_path_exists(pdir));
    halo_graph_free(g);
}

/* A METIS status is converted to HALO_EMETIS with a message, never a crash: a tolerance below 1
 * is METIS_ERROR_INPUT. */
static void metis_errors_become_halo_emetis(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(500, 2, 4, 19);
    int32_t *a = HALO_ALLOC(int32_t, g->nodes);
    assert_int_equal(halo_partition_metis(g, 4, HALO_PCON_ALL, 0.5, HALO_POBJ_CUT, 1, a),
                     HALO_EMETIS);
    assert_non_null(strstr(halo_errmsg(), "METIS_ERROR_INPUT"));
    assert_int_equal(halo_partition_metis(g, 501, HALO_PCON_ALL, 1.05, HALO_POBJ_CUT, 1, a),
                     HALO_EUSAGE);
    halo_free(a);
    halo_graph_free(g);
}

static void custom_assignment_of_wrong_length_or_range_is_refused(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(50, 2, 3, 14);
    int32_t a[50];
    for (int v = 0; v < 50; v++) {
        a[v] = v % 2;
    }
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.parts = 2;
    o.choice.method = HALO_PARTITION_CUSTOM;
    o.choice.assignment = a;
    o.choice.assignment_len = 49;
    char pdir[4096];
    scratch(pdir, sizeof pdir, "custom");
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "49 entries"));
    o.choice.assignment_len = 50;
    a[17] = 2;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "node 17"));
    a[17] = -1;
    assert_int_equal(halo_partition_write(g, a, &o, pdir, NULL), HALO_EINPUT);
    assert_false(halo_path_exists(pdir));
    a[17] = 1;
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), 0);
    check_partition(g, pdir, 2, 1);
    halo_rmtree(pdir);
    halo_graph_free(g);
}

/* An output directory holding another graph's partition is refused (and left whole) unless
 * forced; the same graph may be repartitioned in place. */
static void output_dir_of_another_graph_is_refused(void **state)
{
    (void)state;
    halo_graph *g1 = make_sbm(300, 2, 4, 15), *g2 = make_sbm(300, 2, 4, 16);
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.parts = 2;
    char pdir[4096];
    scratch(pdir, sizeof pdir, "other");
    assert_int_equal(halo_partition_run(g1, &o, pdir, NULL), 0);
    assert_int_equal(halo_partition_run(g1, &o, pdir, NULL), 0);
    assert_int_equal(halo_partition_run(g2, &o, pdir, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "another graph"));
    check_partition(g1, pdir, 2, 1);
    o.force = true;
    assert_int_equal(halo_partition_run(g2, &o, pdir, NULL), 0);
    check_partition(g2, pdir, 2, 1);
    /* A non-empty directory that is not a partition is refused too. */
    char other[2048], f[4096];
    scratch(other, sizeof other, "notapart");
    assert_int_equal(halo_mkdir_p(other), 0);
    snprintf(f, sizeof f, "%s/keep.txt", other);
    assert_int_equal(halo_file_write_all(f, "x", 1), 0);
    o.force = false;
    assert_int_equal(halo_partition_run(g1, &o, other, NULL), HALO_EUSAGE);
    assert_true(halo_path_exists(f));
    halo_rmtree(pdir);
    halo_rmtree(other);
    halo_graph_free(g1);
    halo_graph_free(g2);
}

/* A truncated part array or partition.json with broken ranges fails naming the file. */
static void corrupt_partition_files_are_reported(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(300, 2, 4, 17);
    halo_partition_opts o;
    halo_partition_opts_init(&o);
    o.parts = 2;
    char pdir[2048], f[4096];
    scratch(pdir, sizeof pdir, "corrupt");
    assert_int_equal(halo_partition_run(g, &o, pdir, NULL), 0);
    snprintf(f, sizeof f, "%s/part-1/indices.i32", pdir);
    assert_int_equal(truncate(f, 8), 0);
    halo_part *p = NULL;
    assert_int_equal(halo_part_load(pdir, 0, &p), 0);
    halo_part_free(p);
    assert_int_equal(halo_part_load(pdir, 1, &p), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "part-1/indices.i32"));
    assert_int_equal(halo_part_load(pdir, 2, &p), HALO_EINPUT);
    snprintf(f, sizeof f, "%s/partition.json", pdir);
    assert_int_equal(halo_file_write_all(f, "{\"format\": 1, \"parts\": 2}", 25), 0);
    halo_partinfo *pi = NULL;
    assert_int_equal(halo_partinfo_load(pdir, &pi), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "partition.json"));
    halo_rmtree(pdir);
    halo_graph_free(g);
}

/* A graph directory whose arrays are cut short cannot be loaded, so it is never partitioned. */
static void corrupt_graph_is_refused(void **state)
{
    (void)state;
    halo_graph *g = make_sbm(300, 2, 4, 18);
    char gdir[2048], f[4096];
    scratch(gdir, sizeof gdir, "graph");
    assert_int_equal(halo_graph_write(g, gdir, NULL), 0);
    halo_graph *h = NULL;
    assert_int_equal(halo_graph_load(gdir, &h), 0);
    assert_int_equal(halo_partition_graph_checksum(h) == halo_partition_graph_checksum(g), 0);
    halo_graph_free(h);
    snprintf(f, sizeof f, "%s/indices.i32", gdir);
    assert_int_equal(truncate(f, 100), 0);
    assert_true(halo_graph_load(gdir, &h) < 0);
    halo_rmtree(gdir);
    halo_graph_free(g);
}

/* Streaming with all three constraints keeps every one within its tolerance on R-MAT graphs,
 * whose hubs fill some parts' edge capacity long before their node capacity: a generated one
 * (ids permuted, both directions stored) within 1.05 plus rounding, and the directed one of this
 * file (hubs first, few nodes per hub) within 1.07: the overshoot of the hubs that fit nowhere at
 * the end of the pass. Without the running allowance both ended at 1.08-1.16. */
static void stream_keeps_all_constraints_on_rmat(void **state)
{
    (void)state;
    halo_gen_params gp;
    halo_gen_defaults(HALO_GEN_RMAT, &gp);
    gp.nodes = 1 << 14;
    gp.feat_dim = 0;
    halo_graph *gs[2] = {NULL, make_rmat(14, 200000, 9)};
    assert_int_equal(halo_gen_graph(&gp, &gs[0]), 0);
    for (int i = 0; i < 2; i++) {
        halo_graph *g = gs[i];
        int32_t *a = HALO_ALLOC(int32_t, g->nodes);
        for (int h = 0; h < 2; h++) {
            assert_int_equal(halo_partition_stream(g, 4, HALO_PCON_ALL, 1.05, h, 1, a), 0);
            for (int c = 0; c < 3; c++) {
                double b = ref_balance(g, a, 4, c);
                print_message("# stream rmat %d heuristic %d column %d balance %.4f\n", i, h, c, b);
                assert_true(b <= (i == 0 ? 1.051 : 1.07));
            }
        }
        halo_free(a);
        halo_graph_free(g);
    }
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("HALO_TEST_TMP");
    snprintf(tmproot, sizeof tmproot, "%s/test_part.%d", base ? base : "/tmp", (int)getpid());
    halo_mkdir_p(tmproot);
    sbm_small = make_sbm(2000, 6, 8, 1);
    rmat_small = make_rmat(11, 16000, 2);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    halo_graph_free(sbm_small);
    halo_graph_free(rmat_small);
    halo_rmtree(tmproot);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metis_partition_satisfies_invariants),
        cmocka_unit_test(multilevel_partition_satisfies_invariants),
        cmocka_unit_test(random_partition_satisfies_invariants),
        cmocka_unit_test(ldg_stream_partition_satisfies_invariants),
        cmocka_unit_test(fennel_stream_partition_satisfies_invariants),
        cmocka_unit_test(custom_partition_satisfies_invariants),
        cmocka_unit_test(sorted_rows_option_sorts_each_row),
        cmocka_unit_test(metis_three_constraints_balanced_and_cut_below_random),
        cmocka_unit_test(metis_balances_each_node_type),
        cmocka_unit_test(stream_respects_capacity),
        cmocka_unit_test(stream_keeps_all_constraints_on_rmat),
        cmocka_unit_test(multilevel_2x2_seeds_equal_and_on_own_machine),
        cmocka_unit_test(force_even_split_borrows_for_short_parts),
        cmocka_unit_test(bad_part_counts_are_refused),
        cmocka_unit_test(metis_errors_become_halo_emetis),
        cmocka_unit_test(custom_assignment_of_wrong_length_or_range_is_refused),
        cmocka_unit_test(output_dir_of_another_graph_is_refused),
        cmocka_unit_test(corrupt_partition_files_are_reported),
        cmocka_unit_test(corrupt_graph_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
