/* Degree statistics and split/label counts for halo info. */
#include "graph/stats.h"

#include "core/mem.h"
#include "core/progress.h"

#include <string.h>

/* k-th smallest of a[0..n) (a is reordered); Hoare selection, expected O(n). */
static int64_t select_kth(int64_t *a, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t pivot = a[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) {
                i++;
            }
            while (a[j] > pivot) {
                j--;
            }
            if (i <= j) {
                int64_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) {
            hi = j;
        } else if (k >= i) {
            lo = i;
        } else {
            return a[k];
        }
    }
    return a[k];
}

static int deg_bin(int64_t d)
{
    int b = 0;
    while (d > 0 && b < HALO_DEG_BINS - 1) {
        d >>= 1;
        b++;
    }
    return b;
}

void halo_degree_stats_compute(const int64_t *deg, int64_t n, halo_degree_stats *s)
{
    memset(s, 0, sizeof *s);
    if (n <= 0) {
        return;
    }
    int64_t sum = 0;
    s->min = deg[0];
    s->max = deg[0];
    for (int64_t v = 0; v < n; v++) {
        int64_t d = deg[v];
        s->min = d < s->min ? d : s->min;
        s->max = d > s->max ? d : s->max;
        sum += d;
        s->hist[deg_bin(d)]++;
    }
    s->mean = (double)sum / (double)n;
    for (int b = 0; b < HALO_DEG_BINS; b++) {
        if (s->hist[b] > 0) {
            s->bins = b + 1;
        }
    }
    int64_t *copy = HALO_ALLOC(int64_t, n);
    memcpy(copy, deg, (size_t)n * sizeof *copy);
    s->median = select_kth(copy, n, (n - 1) / 2);
    halo_free(copy);
}

void halo_graph_stats_compute(const halo_graph *g, halo_graph_stats *s)
{
    memset(s, 0, sizeof *s);
    int64_t n = g->nodes;
    int64_t *deg = HALO_NEW(int64_t, n > 0 ? n : 1);
    halo_progress pr;
    halo_progress_begin(&pr, "info: degrees", 2 * (uint64_t)g->edges);
    for (int64_t v = 0; v < n; v++) {
        if ((v & 0xffff) == 0) {
            halo_progress_update(&pr, (uint64_t)g->indptr[v]);
        }
        deg[v] = g->indptr[v + 1] - g->indptr[v];
        for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++) {
            s->self_loops += g->indices[i] == v;
        }
    }
    halo_degree_stats_compute(deg, n, &s->in);
    memset(deg, 0, (size_t)n * sizeof *deg);
    for (int64_t i = 0; i < g->edges; i++) {
        if ((i & ((1 << 24) - 1)) == 0) {
            halo_progress_update(&pr, (uint64_t)(g->edges + i));
        }
        deg[g->indices[i]]++;
    }
    halo_progress_end(&pr);
    halo_degree_stats_compute(deg, n, &s->out);
    halo_free(deg);
    for (int64_t v = 0; v < n; v++) {
        if (g->split != NULL) {
            s->split[g->split[v] & 3]++;
        }
        if (g->label != NULL && g->label[v] >= 0) {
            s->labelled++;
        }
    }
}

void halo_graph_relation_stats(const halo_graph *g, int r, int64_t *edges, halo_degree_stats *in,
                               halo_degree_stats *out)
{
    int ts = g->rel[r].src, td = g->rel[r].dst;
    int64_t s0 = halo_graph_type_start(g, ts), s1 = halo_graph_type_start(g, ts + 1);
    int64_t d0 = halo_graph_type_start(g, td), d1 = halo_graph_type_start(g, td + 1);
    int64_t ns = s1 - s0, nd = d1 - d0;
    int64_t *deg = HALO_NEW(int64_t, (ns > nd ? ns : nd) + 1);
    int64_t *outdeg = HALO_NEW(int64_t, ns + 1);
    *edges = 0;
    for (int64_t v = d0; v < d1; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            if (g->etype[e] == r) {
                deg[v - d0]++;
                outdeg[g->indices[e] - s0]++;
                (*edges)++;
            }
        }
    }
    halo_degree_stats_compute(deg, nd, in);
    halo_degree_stats_compute(outdeg, ns, out);
    halo_free(deg);
    halo_free(outdeg);
}
