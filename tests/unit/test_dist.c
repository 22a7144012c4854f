/* Unit tests of part/dist.c and part/refine.c, the plain-array half of --method ptscotch: the
 * ranks' slices, the symmetrised rows the ranks build between them, the engine's weights and
 * halo's balance refinement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/mem.h"
#include "graph/graph.h"
#include "part/dist.h"
#include "part/partition.h"

#include <stdlib.h>
#include <string.h>

/* A graph from an edge list (src -> dst), in-edge CSR by counting sort; no split set. */
static halo_graph *from_edges(int64_t n, int64_t m, const int32_t *src, const int32_t *dst)
{
    halo_graph *g = halo_graph_alloc(n, m, 1, 2, 1);
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
    return g;
}

/* A random directed graph with a hub (node 0 receives from everyone), self loops and an edge
 * stored both ways. */
static halo_graph *messy_graph(int64_t n, int64_t m)
{
    int32_t *src = HALO_ALLOC(int32_t, m + n), *dst = HALO_ALLOC(int32_t, m + n);
    srand(7);
    for (int64_t e = 0; e < m; e++) {
        src[e] = rand() % (int32_t)n;
        dst[e] = e % 5 == 0 ? src[e] : rand() % (int32_t)n;
    }
    for (int64_t v = 0; v < n; v++) {
        src[m + v] = (int32_t)v;
        dst[m + v] = 0;
    }
    halo_graph *g = from_edges(n, m + n, src, dst);
    halo_free(src);
    halo_free(dst);
    return g;
}

static void slices_cover_the_graph_in_order_none_empty(void **state)
{
    (void)state;
    halo_graph *g = messy_graph(50, 400);
    for (int R = 1; R <= 50; R += 7) {
        int64_t range[64];
        halo_partition_dist_ranges(g, R, range);
        assert_int_equal(range[0], 0);
        assert_int_equal(range[R], 50);
        for (int r = 0; r < R; r++) {
            assert_true(range[r + 1] > range[r]);
        }
    }
    halo_graph_free(g);
}

/* The rows the ranks build between them (pairs routed as the exchange would) are the
 * undirected graph: u ~ v iff u -> v or v -> u, u != v, each once, ascending. */
static void ranks_build_the_symmetrised_graph(void **state)
{
    (void)state;
    int64_t n = 60;
    halo_graph *g = messy_graph(n, 500);
    uint8_t *want = HALO_NEW(uint8_t, n * n);
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            int64_t u = g->indices[e];
            if (u != v) {
                want[u * n + v] = want[v * n + u] = 1;
            }
        }
    }
    enum { R = 4 };
    int64_t range[R + 1], off[R][R + 1];
    int32_t *pairs[R];
    halo_partition_dist_ranges(g, R, range);
    for (int r = 0; r < R; r++) {
        assert_int_equal(halo_partition_dist_pairs(g, range[r], range[r + 1], range, R,
                                                   &pairs[r], off[r]), 0);
    }
    for (int d = 0; d < R; d++) { /* rank d receives every rank's pairs for it */
        int64_t bytes = 0;
        for (int r = 0; r < R; r++) {
            bytes += off[r][d + 1] - off[r][d];
        }
        int32_t *recv = halo_malloc((size_t)bytes + 8);
        int64_t at = 0;
        for (int r = 0; r < R; r++) {
            memcpy((char *)recv + at, (char *)pairs[r] + off[r][d], (size_t)(off[r][d + 1] -
                                                                               off[r][d]));
            at += off[r][d + 1] - off[r][d];
        }
        int64_t *xadj, *adj;
        assert_int_equal(halo_partition_dist_build(recv, bytes / 8, range[d], range[d + 1],
                                                   &xadj, &adj), 0);
        for (int64_t v = range[d]; v < range[d + 1]; v++) {
            int64_t i = v - range[d], deg = 0;
            for (int64_t u = 0; u < n; u++) {
                deg += want[v * n + u];
            }
            assert_int_equal(xadj[i + 1] - xadj[i], deg);
            for (int64_t k = xadj[i]; k < xadj[i + 1]; k++) {
                assert_true(want[v * n + adj[k]]);
                assert_true(k == xadj[i] || adj[k] > adj[k - 1]);
            }
        }
        halo_free(recv);
        halo_free(xadj);
        halo_free(adj);
    }
    for (int r = 0; r < R; r++) {
        halo_free(pairs[r]);
    }
    halo_free(want);
    halo_graph_free(g);
}

/* Each requested column counts alike in the engine's single weight: a training node weighs
 * more than another, a node of high in-degree more than one of low. */
static void engine_weights_sum_the_normalised_constraints(void **state)
{
    (void)state;
    halo_graph *g = messy_graph(40, 300);
    g->split[3] = HALO_SPLIT_TRAIN;
    int64_t totals[3] = {40, 1, g->edges}, w[40];
    halo_partition_dist_weights(g, 0, 40, HALO_PCON_NODES, totals, w);
    for (int v = 0; v < 40; v++) {
        assert_int_equal(w[v], w[0]);
    }
    halo_partition_dist_weights(g, 0, 40, HALO_PCON_NODES | HALO_PCON_TRAIN, totals, w);
    assert_true(w[3] > w[4] * 10);
    halo_partition_dist_weights(g, 0, 40, HALO_PCON_EDGES, totals, w);
    assert_true(w[0] > w[1]); /* node 0 is the hub */
    halo_graph_free(g);
}

/* The bound that chooses PT-Scotch's integer width holds for every set of constraints, also when
 * most nodes weigh the floor of 1 (a star whose leaves have no in-edge: one node carries the
 * whole edge column). */
static void engine_weights_stay_within_their_bound(void **state)
{
    (void)state;
    enum { N = 64 };
    int32_t src[N], dst[N];
    for (int v = 0; v < N; v++) {
        src[v] = v;
        dst[v] = 0;
    }
    halo_graph *gs[2] = {messy_graph(N, 500), from_edges(N, N, src, dst)};
    for (int k = 0; k < 2; k++) {
        halo_graph *g = gs[k];
        for (int v = 0; v < N; v += 5) {
            g->split[v] = HALO_SPLIT_TRAIN;
        }
        int64_t totals[3] = {N, (N + 4) / 5, g->edges}, w[N];
        for (unsigned con = 0; con < 8; con++) {
            halo_partition_dist_weights(g, 0, N, con, totals, w);
            int64_t sum = 0;
            for (int v = 0; v < N; v++) {
                sum += w[v];
            }
            assert_true(sum <= halo_partition_dist_weight_bound(N));
        }
        halo_graph_free(g);
    }
}

/* A path 0 - 1 - ... - 99 cut 70/30: the refinement moves the boundary, so the parts stay
 * contiguous (cut 1 edge each way) and within the tolerance. */
static void refine_moves_the_boundary_of_an_overfull_part(void **state)
{
    (void)state;
    enum { N = 100 };
    int32_t src[2 * (N - 1)], dst[2 * (N - 1)], a[N];
    for (int i = 0; i + 1 < N; i++) {
        src[2 * i] = i, dst[2 * i] = i + 1;
        src[2 * i + 1] = i + 1, dst[2 * i + 1] = i;
    }
    halo_graph *g = from_edges(N, 2 * (N - 1), src, dst);
    for (int v = 0; v < N; v++) {
        a[v] = v < 70 ? 0 : 1;
    }
    int64_t moved = 0;
    assert_int_equal(halo_partition_refine(g, 2, HALO_PCON_NODES, 1.05, a, &moved), 0);
    assert_true(halo_partition_balance(g, a, 2, 0) <= 1.05);
    assert_int_equal(moved, 18); /* 70 -> 52 = floor(1.05 x 50) */
    assert_int_equal(halo_partition_edge_cut(g, a), 2);
    halo_graph_free(g);
}

/* Training nodes all in one part: moved out until train is balanced, the node count kept
 * within its own limit, no part emptied. */
static void refine_balances_train_without_breaking_nodes(void **state)
{
    (void)state;
    halo_graph *g = messy_graph(200, 1500);
    int32_t a[200];
    for (int v = 0; v < 200; v++) {
        a[v] = v % 4;
        g->split[v] = v % 4 == 0 && v < 160 ? HALO_SPLIT_TRAIN : HALO_SPLIT_NONE;
    }
    g->split[1] = HALO_SPLIT_TRAIN;
    assert_true(halo_partition_balance(g, a, 4, 1) > 3.5);
    int64_t moved = 0;
    assert_int_equal(halo_partition_refine(g, 4, HALO_PCON_NODES | HALO_PCON_TRAIN, 1.10, a,
                                           &moved), 0);
    assert_true(moved > 0);
    assert_true(halo_partition_balance(g, a, 4, 0) <= 1.10);
    assert_true(halo_partition_balance(g, a, 4, 1) <= 1.10);
    assert_int_equal(halo_partition_check_assignment(a, 200, 4, "refined"), 0);
    halo_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slices_cover_the_graph_in_order_none_empty),
        cmocka_unit_test(ranks_build_the_symmetrised_graph),
        cmocka_unit_test(engine_weights_sum_the_normalised_constraints),
        cmocka_unit_test(engine_weights_stay_within_their_bound),
        cmocka_unit_test(refine_moves_the_boundary_of_an_overfull_part),
        cmocka_unit_test(refine_balances_train_without_breaking_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
