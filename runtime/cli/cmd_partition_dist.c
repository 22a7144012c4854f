/* halo partition --method ptscotch: under mpirun every rank maps the graph, builds its own slice
 * of the symmetrised graph from its rows of the CSR, PT-Scotch partitions it across the ranks
 * (flat, or mapped onto machines x trainers with --machines/--trainers),
 * rank 0 gathers the assignment, balances the constraints PT-Scotch did not (halo's refinement)
 * and writes the partition as any method does (docs/partition.md). */
#include "cli/cli.h"
#include "comm/comm.h"
#include "comm/ptscotch.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "part/dist.h"
#include "part/partition.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* What the ranks did, for rank 0's closing line. */
typedef struct dist_result {
    int64_t moved;          /* nodes moved by halo's refinement */
    double engine_bal[3];   /* balance of PT-Scotch's assignment (nodes, train, edges) */
    int64_t rss_max;        /* peak RSS of the largest rank before writing (bytes) */
    halo_partition_stats st; /* the written partition */
} dist_result;

/* Checks, on every rank, what the method refuses (a typed graph, more ranks than nodes) and
 * resolves parts, machines and trainers as every method does (P = M x G, P <= nodes). */
static int dist_check(const halo_graph *g, halo_partition_opts *po, int ranks)
{
    if (g->ntypes > 1 || g->nrels > 0) {
        return halo_errorf(HALO_EUSAGE, "partition: --method ptscotch balances one weight and "
                                        "does not yet split node types; use --method metis on "
                                        "a typed graph");
    }
    if (ranks > g->nodes) {
        return halo_errorf(HALO_EUSAGE, "partition: %d ranks for a graph of %lld nodes (each "
                                        "rank needs a node)", ranks, (long long)g->nodes);
    }
    int p, m, t;
    HALO_CHECK(halo_partition_resolve(g, po, &p, &m, &t));
    po->parts = p;
    po->machines = m;
    po->trainers_per_machine = t;
    return 0;
}

/* This rank's slice: symmetrised rows (exchanged with the other ranks) and weights, then
 * PT-Scotch; part[range[r+1]-range[r]] receives the parts of the slice's rows. */
static int dist_engine(halo_comm *c, const halo_graph *g, const halo_partition_opts *po,
                       const int64_t *range, int32_t *part)
{
    int R = halo_comm_size(c), r = halo_comm_rank(c);
    int64_t v0 = range[r], v1 = range[r + 1], n = v1 - v0;
    int64_t *pairs = NULL, *off = HALO_NEW(int64_t, R + 1);
    int rc = halo_partition_dist_pairs(g, v0, v1, range, R, &pairs, off);
    for (int p = 0; rc == 0 && p < R; p++) {
        if (off[p + 1] - off[p] > INT_MAX) { /* one message per peer: refused on every rank */
            rc = halo_errorf(HALO_ENOMEM, "ptscotch: rank %d's edges for rank %d exceed one "
                                          "message (2 GiB); run more ranks", r, p);
        }
    }
    rc = halo_comm_agree(c, rc);
    halo_xchg x = {0};
    if (rc == 0) {
        rc = halo_comm_xchg_start(c, &x, pairs, off);
    }
    rc = halo_comm_agree(c, rc == 0 ? halo_comm_xchg_wait(c, &x) : rc);
    halo_free(pairs);
    halo_free(off);
    int64_t *xadj = NULL, *adj = NULL;
    if (rc == 0) {
        rc = halo_partition_dist_build((const int64_t *)x.recv,
                                       x.recv_off[R] / (2 * (int64_t)sizeof(int64_t)), v0, v1,
                                       &xadj, &adj);
    }
    halo_xchg_free(&x);
    int64_t totals[3] = {n, 0, g->indptr[v1] - g->indptr[v0]};
    for (int64_t v = v0; v < v1; v++) {
        totals[1] += g->split[v] == HALO_SPLIT_TRAIN;
    }
    rc = halo_comm_agree(c, rc);
    if (rc == 0) {
        rc = halo_comm_allreduce_sum_i64(c, totals, 3);
    }
    int64_t *w = HALO_ALLOC(int64_t, n);
    if (rc == 0) {
        halo_partition_dist_weights(g, v0, v1, po->choice.constraints, totals, w);
        rc = halo_comm_ptscotch_part(c, n, xadj, adj, w, po->machines, po->trainers_per_machine,
                                     po->choice.imbalance, po->seed, part);
    }
    halo_free(w);
    halo_free(xadj);
    halo_free(adj);
    return rc;
}

/* Gathers every rank's slice of parts into rank 0's assignment[nodes] (NULL elsewhere). */
static int dist_gather(halo_comm *c, const int32_t *part, int64_t n, int32_t *assignment)
{
    int R = halo_comm_size(c);
    int64_t *off = HALO_NEW(int64_t, R + 1);
    for (int p = 1; p <= R; p++) {
        off[p] = n * (int64_t)sizeof(int32_t); /* everything to rank 0 */
    }
    halo_xchg x = {0};
    int rc = halo_comm_xchg_start(c, &x, part, off);
    rc = halo_comm_agree(c, rc == 0 ? halo_comm_xchg_wait(c, &x) : rc);
    if (rc == 0 && assignment != NULL) {
        /* slices lie in rank order, so the received bytes are the assignment in id order */
        memcpy(assignment, x.recv, (size_t)x.recv_off[R]);
    }
    halo_xchg_free(&x);
    halo_free(off);
    return rc;
}

/* Rank 0: refines and writes the partition; the others return 0. */
static int dist_write(halo_comm *c, const halo_graph *g, halo_partition_opts *po,
                      int32_t *assignment, const char *out, dist_result *res)
{
    if (halo_comm_rank(c) != 0) {
        return 0;
    }
    int rc = halo_partition_check_assignment(assignment, g->nodes, po->parts, "ptscotch");
    for (int k = 0; rc == 0 && k < 3; k++) {
        res->engine_bal[k] = halo_partition_balance(g, assignment, po->parts, k);
    }
    if (rc == 0) {
        rc = halo_partition_refine(g, po->parts, po->choice.constraints, po->choice.imbalance,
                                   assignment, &res->moved);
    }
    if (rc == 0) {
        po->choice.assignment = assignment;
        po->choice.assignment_len = g->nodes;
        rc = halo_partition_run(g, po, out, &res->st);
    }
    return rc;
}

/* Every step on every rank, failures agreed so that all ranks leave together. */
static int dist_run(halo_comm *c, const char *gdir, const char *out, halo_partition_opts *po,
                    dist_result *res)
{
    halo_graph *g = NULL;
    int rc = halo_graph_load(gdir, &g);
    if (rc == 0) {
        rc = dist_check(g, po, halo_comm_size(c));
    }
    rc = halo_comm_agree(c, rc);
    if (rc < 0) {
        halo_graph_free(g);
        return rc;
    }
    int R = halo_comm_size(c), r = halo_comm_rank(c);
    int64_t *range = HALO_NEW(int64_t, R + 1);
    halo_partition_dist_ranges(g, R, range);
    int64_t n = range[r + 1] - range[r];
    int32_t *part = HALO_ALLOC(int32_t, n > 0 ? n : 1);
    int32_t *assignment = r == 0 ? HALO_ALLOC(int32_t, g->nodes) : NULL;
    rc = dist_engine(c, g, po, range, part);
    if (rc == 0) {
        rc = dist_gather(c, part, n, assignment);
    }
    halo_free(part);
    halo_free(range);
    if (rc == 0) {
        res->rss_max = (int64_t)halo_mem_rss_peak();
        rc = halo_comm_allreduce_max_i64(c, &res->rss_max, 1);
    }
    if (rc == 0) {
        rc = dist_write(c, g, po, assignment, out, res);
    }
    halo_free(assignment);
    halo_graph_free(g);
    return rc;
}

int halo_cli_partition_ptscotch(const char *gdir, const char *out, halo_partition_opts *po)
{
    halo_comm *c;
    int rc = halo_comm_init(NULL, NULL, &c);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    dist_result res = {0};
    double t0 = halo_now();
    rc = dist_run(c, gdir, out, po, &res);
    int code = halo_comm_report(c, rc);
    if (code == 0 && halo_comm_rank(c) == 0) {
        const halo_partition_stats *st = &res.st;
        halo_info("partitioned %s with ptscotch on %d rank%s into %s in %.2f s: edge cut %.2f%%, "
                  "balance nodes %.3f train %.3f edges %.3f (PT-Scotch's: %.3f %.3f %.3f, "
                  "refinement moved %lld nodes), replication %.3f, %lld seeds per part, peak RSS "
                  "%.1f MiB per rank before writing, %.1f MiB on rank 0 after",
                  gdir, halo_comm_size(c), halo_plural(halo_comm_size(c)), out, halo_now() - t0, 100.0 * st->edge_cut_fraction,
                  st->balance[0], st->balance[1], st->balance[2], res.engine_bal[0],
                  res.engine_bal[1], res.engine_bal[2], (long long)res.moved, st->replication,
                  (long long)st->train_per_part, (double)res.rss_max / 1048576.0,
                  (double)st->rss_peak / 1048576.0);
        for (int k = 0; k < 3; k++) {
            if ((po->choice.constraints & (1u << k)) &&
                st->balance[k] > po->choice.imbalance + 1e-3) {
                halo_warn("partition: %s balance %.3f exceeds the tolerance %.3f (no move left "
                          "that keeps the other constraints within it)",
                          halo_partition_constraint_name(k), st->balance[k],
                          po->choice.imbalance);
            }
        }
    }
    halo_comm_finalize(c);
    return code;
}
