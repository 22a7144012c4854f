/* halo partition --method ptscotch: under mpirun every rank maps the graph, builds its own slice
 * of the symmetrised graph from its rows of the CSR, PT-Scotch partitions it across the ranks
 * (flat, or mapped onto machines x trainers with --machines/--trainers),
 * rank 0 gathers the assignment, balances the constraints PT-Scotch did not (halo's refinement)
 * and writes the partition as any method does (docs/partition.md). Before MPI starts, a graph
 * that fits PT-Scotch's 32-bit integers re-runs the command in bin/halo-ptscotch32. */
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

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The 32-bit PT-Scotch build of this program: the executable's path with this suffix. */
#define PTS32_SUFFIX "-ptscotch32"

/* Adjacency entries and vertex-weight sum up to which the 32-bit build is chosen: half of
 * SCOTCH_Num's range, as headroom for Scotch's own sums (comm/ptscotch.c refuses past the range). */
#define PTS32_LIMIT ((int64_t)1 << 30)

/* What the ranks did, for rank 0's closing line. */
typedef struct dist_result {
    int64_t moved;          /* nodes moved by halo's refinement */
    double engine_bal[3];   /* balance of PT-Scotch's assignment (nodes, train, edges) */
    int64_t rss_max;        /* peak RSS of the largest rank before writing (bytes) */
    int64_t rss_xchg;       /* peak RSS of the largest rank before PT-Scotch's call (bytes) */
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
 * PT-Scotch; part[range[r+1]-range[r]] receives the parts of the slice's rows, *rss_xchg this
 * rank's peak RSS before PT-Scotch starts (the exchange's). */
static int dist_engine(halo_comm *c, const halo_graph *g, const halo_partition_opts *po,
                       const int64_t *range, int32_t *part, int64_t *rss_xchg)
{
    int R = halo_comm_size(c), r = halo_comm_rank(c);
    int64_t v0 = range[r], v1 = range[r + 1], n = v1 - v0;
    int32_t *pairs = NULL; /* (vertex, neighbour) node ids, 8 bytes a pair */
    int64_t *off = HALO_NEW(int64_t, R + 1);
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
        rc = halo_partition_dist_build((const int32_t *)x.recv,
                                       x.recv_off[R] / (2 * (int64_t)sizeof(int32_t)), v0, v1,
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
    if (rc < 0) {
        halo_free(xadj);
        halo_free(adj);
        return rc;
    }
    int64_t *w = HALO_ALLOC(int64_t, n);
    halo_partition_dist_weights(g, v0, v1, po->choice.constraints, totals, w);
    halo_graph_release_rows(g, v0, v1); /* the slice is in xadj, adj and w now */
    *rss_xchg = (int64_t)halo_mem_rss_peak();
    /* takes xadj, adj and w (narrowed in place for a 32-bit SCOTCH_Num) and frees them */
    return halo_comm_ptscotch_part(c, n, xadj, adj, w, po->machines, po->trainers_per_machine,
                                   po->choice.imbalance, po->seed, part);
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
    int64_t rss[2] = {0, 0}; /* peak before writing, and before PT-Scotch */
    rc = dist_engine(c, g, po, range, part, &rss[1]);
    if (rc == 0) {
        rc = dist_gather(c, part, n, assignment);
    }
    halo_free(part);
    halo_free(range);
    if (rc == 0) {
        rss[0] = (int64_t)halo_mem_rss_peak();
        rc = halo_comm_allreduce_max_i64(c, rss, 2);
        res->rss_max = rss[0];
        res->rss_xchg = rss[1];
    }
    if (rc == 0) {
        rc = dist_write(c, g, po, assignment, out, res);
    }
    halo_free(assignment);
    halo_graph_free(g);
    return rc;
}

/* The SCOTCH_Num width, 32 or 64, to partition the graph in gdir with: $HALO_PTSCOTCH_INT when
 * set, else 32 when the symmetrised adjacency (E entries for an undirected graph, at most 2E) and
 * the vertex weights stay within PTS32_LIMIT. A graph that does not load gives this program's own
 * width (the run then reports why). HALO_EUSAGE for another value of the variable. */
static int pick_bits(const char *gdir, int *bits)
{
    const char *env = getenv("HALO_PTSCOTCH_INT");
    if (env != NULL && env[0] != '\0') {
        if (strcmp(env, "32") != 0 && strcmp(env, "64") != 0) {
            return halo_errorf(HALO_EUSAGE, "partition: HALO_PTSCOTCH_INT=%s: expected 32 or 64",
                               env);
        }
        *bits = atoi(env);
        return 0;
    }
    halo_graph *g = NULL;
    *bits = halo_comm_ptscotch_bits();
    if (halo_graph_load(gdir, &g) == 0) {
        int64_t entries = g->directed ? 2 * g->edges : g->edges;
        bool fits = entries <= PTS32_LIMIT &&
                    halo_partition_dist_weight_bound(g->nodes) <= PTS32_LIMIT;
        *bits = fits ? 32 : 64;
    }
    halo_graph_free(g);
    halo_error_clear();
    return 0;
}

/* This process's argv, read back from /proc/self/cmdline: a NULL-terminated array whose strings
 * lie in the same halo_malloc'd block after it, or NULL. */
static char **self_argv(void)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *text = HALO_ALLOC(char, cap);
    for (size_t got; (got = fread(text + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            text = halo_realloc(text, cap *= 2);
        }
    }
    fclose(f);
    size_t argc = 0;
    for (size_t i = 0; i < len; i++) {
        argc += text[i] == '\0';
    }
    char **argv = halo_malloc((argc + 1) * sizeof *argv + len);
    char *strings = memcpy((char *)(argv + argc + 1), text, len);
    halo_free(text);
    for (size_t i = 0, a = 0; a < argc; a++) {
        argv[a] = strings + i;
        i += strlen(strings + i) + 1;
    }
    argv[argc] = NULL;
    return argc > 0 ? argv : (halo_free(argv), NULL);
}

/* Before MPI starts: runs this command again in bin/halo-ptscotch32 (execv, the same argv) when
 * pick_bits asks for 32 bits and this program is the 64-bit build; every rank decides alike from
 * meta.json, so all ranks run the same build. Returns only when this program does the work: 0
 * (with *missing set when the 32-bit build was wanted but is not beside this program), or an
 * error that the run reports on every rank once MPI is up. */
static int run_width(const char *gdir, bool *missing)
{
    int bits = 0, own = halo_comm_ptscotch_bits();
    HALO_CHECK(pick_bits(gdir, &bits));
    if (bits == own) {
        return 0;
    }
    if (own == 32) {
        return halo_errorf(HALO_EUSAGE, "partition: this is halo's 32-bit PT-Scotch build and "
                                        "the graph needs 64 bits: run bin/halo");
    }
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - sizeof PTS32_SUFFIX);
    if (n <= 0) {
        return halo_errorf(HALO_EIO, "partition: /proc/self/exe: %s", strerror(errno));
    }
    memcpy(path + n, PTS32_SUFFIX, sizeof PTS32_SUFFIX);
    if (access(path, X_OK) != 0) {
        const char *env = getenv("HALO_PTSCOTCH_INT");
        if (env != NULL && env[0] != '\0') { /* asked for, not chosen */
            return halo_errorf(HALO_EUSAGE, "partition: HALO_PTSCOTCH_INT=32: %s: %s", path,
                               strerror(errno));
        }
        *missing = true; /* the 64-bit build does the work, with twice the memory */
        return 0;
    }
    char **argv = self_argv();
    if (argv == NULL) {
        return halo_errorf(HALO_EIO, "partition: cannot read /proc/self/cmdline");
    }
    fflush(NULL);
    execv(path, argv);
    int e = errno;
    halo_free(argv);
    return halo_errorf(HALO_EIO, "partition: cannot run %s: %s", path, strerror(e));
}

int halo_cli_partition_ptscotch(const char *gdir, const char *out, halo_partition_opts *po)
{
    bool missing = false;
    int pre = run_width(gdir, &missing);
    halo_comm *c;
    int rc = halo_comm_init(NULL, NULL, &c);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    if (missing && halo_comm_rank(c) == 0) {
        halo_warn("partition: no %s beside this program: PT-Scotch runs with 64-bit integers "
                  "(about twice the memory of the 32-bit build)", "halo" PTS32_SUFFIX);
    }
    dist_result res = {0};
    double t0 = halo_now();
    rc = pre < 0 ? pre : dist_run(c, gdir, out, po, &res);
    int code = halo_comm_report(c, rc);
    if (code == 0 && halo_comm_rank(c) == 0) {
        const halo_partition_stats *st = &res.st;
        halo_info("partitioned %s with ptscotch (%d-bit) on %d rank%s into %s in %.2f s: edge "
                  "cut %.2f%%, balance nodes %.3f train %.3f edges %.3f (PT-Scotch's: %.3f %.3f "
                  "%.3f, refinement moved %lld nodes), replication %.3f, %lld seeds per part, "
                  "peak RSS %.1f MiB per rank before writing (%.1f MiB before PT-Scotch), %.1f "
                  "MiB on rank 0 after",
                  gdir, halo_comm_ptscotch_bits(), halo_comm_size(c),
                  halo_plural(halo_comm_size(c)), out, halo_now() - t0,
                  100.0 * st->edge_cut_fraction, st->balance[0], st->balance[1], st->balance[2],
                  res.engine_bal[0], res.engine_bal[1], res.engine_bal[2], (long long)res.moved,
                  st->replication, (long long)st->train_per_part,
                  (double)res.rss_max / 1048576.0, (double)res.rss_xchg / 1048576.0,
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
