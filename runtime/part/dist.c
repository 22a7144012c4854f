/* Slices, symmetrised rows and vertex weights of the distributed partitioner, on plain arrays:
 * each rank touches only its own rows of the mapped CSR (docs/partition.md). */
#include "part/dist.h"
#include "part/partition.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void halo_partition_dist_ranges(const halo_graph *g, int ranks, int64_t *range)
{
    int64_t n = g->nodes, e = g->edges;
    range[0] = 0;
    for (int r = 1; r < ranks; r++) {
        /* first row whose in-edges start at or after r/ranks of all edges */
        int64_t want = (int64_t)((double)e * r / ranks), lo = 0, hi = n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (g->indptr[mid] < want) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int64_t v = lo < n - ranks + r ? lo : n - ranks + r; /* leave a row to each rank after */
        range[r] = v > range[r - 1] ? v : range[r - 1] + 1;  /* and one to this rank */
    }
    range[ranks] = n;
}

/* Rank owning vertex v: the last r with range[r] <= v. */
static int owner_of(const int64_t *range, int ranks, int64_t v)
{
    int lo = 0, hi = ranks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (range[mid] <= v) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

int halo_partition_dist_pairs(const halo_graph *g, int64_t v0, int64_t v1, const int64_t *range,
                              int ranks, int32_t **pairs, int64_t *off)
{
    int me = owner_of(range, ranks, v0);
    int64_t *cnt = HALO_NEW(int64_t, ranks + 1);
    for (int64_t v = v0; v < v1; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            int32_t u = g->indices[e];
            if (u != v) {
                cnt[me]++;
                cnt[owner_of(range, ranks, u)]++;
            }
        }
    }
    off[0] = 0;
    for (int p = 0; p < ranks; p++) {
        off[p + 1] = off[p] + cnt[p] * 2 * (int64_t)sizeof(int32_t);
        cnt[p] = off[p] / (int64_t)sizeof(int32_t); /* next free slot of peer p */
    }
    int32_t *buf = HALO_ALLOC(int32_t, off[ranks] > 0 ? off[ranks] / 4 : 1);
    for (int64_t v = v0; v < v1; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            int32_t u = g->indices[e];
            if (u != v) {
                int32_t *a = buf + cnt[me];
                a[0] = (int32_t)v;
                a[1] = u;
                cnt[me] += 2;
                int o = owner_of(range, ranks, u);
                int32_t *b = buf + cnt[o];
                b[0] = u;
                b[1] = (int32_t)v;
                cnt[o] += 2;
            }
        }
    }
    halo_free(cnt);
    *pairs = buf;
    return 0;
}

int halo_partition_dist_build(const int32_t *pairs, int64_t npairs, int64_t v0, int64_t v1,
                              int64_t **xadj_out, int64_t **adj_out)
{
    int64_t n = v1 - v0;
    int64_t *xadj = HALO_NEW(int64_t, n + 1);
    for (int64_t i = 0; i < npairs; i++) {
        int64_t v = pairs[2 * i];
        if (v < v0 || v >= v1) {
            halo_free(xadj);
            return halo_errorf(HALO_ESTATE, "ptscotch: an edge of vertex %lld reached the rank "
                                            "holding [%lld, %lld)",
                               (long long)v, (long long)v0, (long long)v1);
        }
        xadj[v - v0 + 1]++;
    }
    for (int64_t i = 0; i < n; i++) {
        xadj[i + 1] += xadj[i];
    }
    int64_t *adj = HALO_ALLOC(int64_t, npairs > 0 ? npairs : 1);
    int64_t *next = HALO_ALLOC(int64_t, n > 0 ? n : 1);
    memcpy(next, xadj, (size_t)n * sizeof *next);
    for (int64_t i = 0; i < npairs; i++) {
        adj[next[pairs[2 * i] - v0]++] = pairs[2 * i + 1];
    }
    halo_free(next);
    /* sort each row, drop duplicates (an edge stored both ways arrives twice), compact */
    int64_t out = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = xadj[i], e = xadj[i + 1];
        halo_sort_i64(adj + b, e - b);
        xadj[i] = out;
        for (int64_t k = b; k < e; k++) {
            if (k == b || adj[k] != adj[k - 1]) {
                adj[out++] = adj[k];
            }
        }
    }
    xadj[n] = out;
    *xadj_out = xadj;
    *adj_out = halo_realloc(adj, (size_t)(out > 0 ? out : 1) * sizeof *adj);
    return 0;
}

/* Mean weight of a vertex given to the engine: integers fine enough that a normalised column
 * is not rounded away. */
#define HALO_DIST_WEIGHT_SCALE 16.0

void halo_partition_dist_weights(const halo_graph *g, int64_t v0, int64_t v1,
                                 unsigned constraints, const int64_t *totals, int64_t *w)
{
    bool use[3];
    int ncols = 0;
    for (int c = 0; c < 3; c++) {
        use[c] = (constraints & (1u << c)) != 0 && totals[c] > 0;
        ncols += use[c];
    }
    double n = (double)totals[0];
    for (int64_t v = v0; v < v1; v++) {
        if (ncols == 0) {
            w[v - v0] = 1;
            continue;
        }
        double s = use[0] ? 1.0 : 0.0;
        if (use[1] && g->split[v] == HALO_SPLIT_TRAIN) {
            s += n / (double)totals[1];
        }
        if (use[2]) {
            s += (double)(g->indptr[v + 1] - g->indptr[v]) * n / (double)totals[2];
        }
        int64_t x = llround(HALO_DIST_WEIGHT_SCALE * s / ncols);
        w[v - v0] = x > 0 ? x : 1;
    }
}

int64_t halo_partition_dist_weight_bound(int64_t nodes)
{
    /* each of the ncols columns sums to nodes, so the unrounded weights sum to SCALE x nodes;
     * rounding, or the floor of 1, adds at most 1 per node */
    return (int64_t)(HALO_DIST_WEIGHT_SCALE + 1.0) * nodes;
}
