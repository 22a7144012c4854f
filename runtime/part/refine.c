/* halo's balance refinement of a whole assignment: moves nodes out of parts that exceed the
 * tolerance in a constraint the engine did not balance, adding as little in-edge cut as it can. */
#include "part/dist.h"
#include "part/partition.h"

#include "core/err.h"
#include "core/mem.h"

#include <stdbool.h>
#include <stdint.h>

/* Most sweeps at one cut level (each is one pass over the graph). */
#define HALO_REFINE_SWEEPS 64

/* State of the refinement: loads per part and constraint, and their limits. */
typedef struct refine {
    const halo_graph *g;  /* the graph (in-edge CSR, split) */
    int parts;            /* P */
    bool use[3];          /* constraint columns balanced (nodes, train, edges) */
    double limit[3];      /* imbalance x mean load of each column */
    int64_t *load;        /* [parts*3] load of each part in each column */
    int64_t *count;       /* [parts] nodes of each part (a part is never emptied) */
    int64_t *conn;        /* [parts] scratch: in-neighbours of a node in each part */
} refine;

/* Weight of node v in column c. */
static int64_t weight_of(const halo_graph *g, int64_t v, int c)
{
    return c == 0 ? 1 : c == 1 ? g->split[v] == HALO_SPLIT_TRAIN
                               : g->indptr[v + 1] - g->indptr[v];
}

/* Whether moving v out of part a relieves a column in which a is over its limit. */
static bool relieves(const refine *r, int a, int64_t v)
{
    for (int c = 0; c < 3; c++) {
        if (r->use[c] && (double)r->load[a * 3 + c] > r->limit[c] && weight_of(r->g, v, c) > 0) {
            return true;
        }
    }
    return false;
}

/* Whether part b takes v with every balanced column v weighs in within its limit. */
static bool fits(const refine *r, int b, int64_t v)
{
    for (int c = 0; c < 3; c++) {
        int64_t w = weight_of(r->g, v, c); /* a column v does not weigh in stays as it is */
        if (r->use[c] && w > 0 && (double)(r->load[b * 3 + c] + w) > r->limit[c]) {
            return false;
        }
    }
    return true;
}

/* Change, halved, of the spread of the loads (the sum over parts and balanced columns of
 * (load / limit)^2) when v moves from part a to part b: negative when the move evens them. */
static double spread_change(const refine *r, int a, int b, int64_t v)
{
    double d = 0.0;
    for (int c = 0; c < 3; c++) {
        double w = (double)weight_of(r->g, v, c), mean = r->limit[c];
        if (r->use[c] && w > 0) {
            d += w * ((double)(r->load[b * 3 + c] - r->load[a * 3 + c]) + w) / (mean * mean);
        }
    }
    return d;
}

/* The best part for v (fits; with even set, the move must also even the loads; most
 * in-neighbours there; ties to the lighter part in nodes) and the in-edge cut the move saves in
 * *gain (negative: adds); -1 when none qualifies. */
static int best_target(refine *r, const int32_t *a, int64_t v, bool even, int64_t *gain)
{
    const halo_graph *g = r->g;
    for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
        if (g->indices[e] != v) {
            r->conn[a[g->indices[e]]]++;
        }
    }
    int from = a[v], best = -1;
    for (int b = 0; b < r->parts; b++) {
        if (b == from || !fits(r, b, v) || (even && spread_change(r, from, b, v) >= -1e-12)) {
            continue;
        }
        if (best < 0 || r->conn[b] > r->conn[best] ||
            (r->conn[b] == r->conn[best] && r->load[b * 3] < r->load[best * 3])) {
            best = b;
        }
    }
    *gain = best >= 0 ? r->conn[best] - r->conn[from] : 0;
    for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
        r->conn[a[g->indices[e]]] = 0;
    }
    return best;
}

/* Whether any part exceeds a limit. */
static bool any_over(const refine *r)
{
    for (int k = 0; k < r->parts; k++) {
        for (int c = 0; c < 3; c++) {
            if (r->use[c] && (double)r->load[k * 3 + c] > r->limit[c]) {
                return true;
            }
        }
    }
    return false;
}

/* One sweep over the nodes: moves each node that relieves an overfull part (with even set: any
 * node whose move evens the loads, making room where a full part blocks the relief) to its best
 * target when the move adds at most max_loss cut edges. Returns the moves made. */
static int64_t sweep(refine *r, int32_t *a, int64_t max_loss, bool even)
{
    int64_t moves = 0;
    for (int64_t v = 0; v < r->g->nodes && any_over(r); v++) {
        int from = a[v];
        if (r->count[from] <= 1 || (!even && !relieves(r, from, v))) {
            continue;
        }
        int64_t gain;
        int to = best_target(r, a, v, even, &gain);
        if (to < 0 || -gain > max_loss) {
            continue;
        }
        for (int c = 0; c < 3; c++) {
            int64_t w = weight_of(r->g, v, c);
            r->load[from * 3 + c] -= w;
            r->load[to * 3 + c] += w;
        }
        r->count[from]--;
        r->count[to]++;
        a[v] = to;
        moves++;
    }
    return moves;
}

int halo_partition_refine(const halo_graph *g, int parts, unsigned constraints, double imbalance,
                          int32_t *assignment, int64_t *moved)
{
    refine r = {0};
    r.g = g;
    r.parts = parts;
    r.load = HALO_NEW(int64_t, (int64_t)parts * 3);
    r.count = HALO_NEW(int64_t, parts);
    r.conn = HALO_NEW(int64_t, parts);
    int64_t total[3] = {0};
    for (int64_t v = 0; v < g->nodes; v++) {
        int k = assignment[v];
        r.count[k]++;
        for (int c = 0; c < 3; c++) {
            int64_t w = weight_of(g, v, c);
            r.load[k * 3 + c] += w;
            total[c] += w;
        }
    }
    for (int c = 0; c < 3; c++) {
        r.use[c] = (constraints & (1u << c)) != 0 && total[c] > 0;
        r.limit[c] = imbalance * (double)total[c] / parts;
    }
    /* cheapest moves first: free ones, then ones adding 1, 2, 4, ... cut edges, then any; each
     * level sweeps again while it moves something (a move makes the next node a boundary one) */
    *moved = 0;
    for (int level = 0; level < 12 && any_over(&r); level++) {
        int64_t max_loss = level == 0 ? 0 : level < 11 ? (int64_t)1 << (level - 1) : INT64_MAX;
        int64_t m = 1;
        for (int s = 0; s < HALO_REFINE_SWEEPS && m > 0 && any_over(&r); s++) {
            m = sweep(&r, assignment, max_loss, false);
            if (m == 0) { /* stuck: even the loads so that a full part makes room */
                m = sweep(&r, assignment, max_loss, true);
            }
            *moved += m;
        }
    }
    halo_free(r.load);
    halo_free(r.count);
    halo_free(r.conn);
    return 0;
}
