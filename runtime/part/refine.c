/* halo's balance refinement of a whole assignment: moves nodes out of parts that exceed the
 * tolerance in a constraint the engine did not balance, adding as little in-edge cut as it can. */
#include "part/dist.h"
#include "part/partition.h"

#include "core/err.h"
#include "core/mem.h"

#include <stdbool.h>
#include <stdint.h>

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

/* Whether part b takes v with every balanced column within its limit. */
static bool fits(const refine *r, int b, int64_t v)
{
    for (int c = 0; c < 3; c++) {
        if (r->use[c] && (double)(r->load[b * 3 + c] + weight_of(r->g, v, c)) > r->limit[c]) {
            return false;
        }
    }
    return true;
}

/* The best part for v (fits, most in-neighbours there; ties to the lighter part in nodes) and
 * the in-edge cut the move saves in *gain (negative: adds); -1 when none fits. */
static int best_target(refine *r, const int32_t *a, int64_t v, int64_t *gain)
{
    const halo_graph *g = r->g;
    for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
        if (g->indices[e] != v) {
            r->conn[a[g->indices[e]]]++;
        }
    }
    int from = a[v], best = -1;
    for (int b = 0; b < r->parts; b++) {
        if (b == from || !fits(r, b, v)) {
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

/* One sweep over the nodes: moves each node that relieves an overfull part to its best target
 * when the move adds at most max_loss cut edges. Returns the moves made. */
static int64_t sweep(refine *r, int32_t *a, int64_t max_loss)
{
    int64_t moves = 0;
    for (int64_t v = 0; v < r->g->nodes; v++) {
        int from = a[v];
        if (r->count[from] <= 1 || !relieves(r, from, v)) {
            continue;
        }
        int64_t gain;
        int to = best_target(r, a, v, &gain);
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
    /* cheapest moves first: free ones, then ones adding 1, 2, 4, ... cut edges, then any */
    *moved = 0;
    for (int pass = 0; pass < 12 && any_over(&r); pass++) {
        int64_t max_loss = pass == 0 ? 0 : pass < 11 ? (int64_t)1 << (pass - 1) : INT64_MAX;
        *moved += sweep(&r, assignment, max_loss);
    }
    halo_free(r.load);
    halo_free(r.count);
    halo_free(r.conn);
    return 0;
}
