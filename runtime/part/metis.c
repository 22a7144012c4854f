/* METIS partitioners: multi-constraint k-way on the symmetrised graph, and DistDGLv2's two
 * levels (machines, then each machine's trainers). The only file that includes <metis.h>. */
#include "part/partition.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"

#include <math.h>
#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(idx_t) == sizeof(int32_t), "halo expects METIS built with 32-bit idx_t");

/* Converts a METIS status to a HALO_EMETIS error naming where. */
static int metis_status(int status, const char *where)
{
    switch (status) {
    case METIS_OK: return 0;
    case METIS_ERROR_INPUT:
        return halo_errorf(HALO_EMETIS, "%s: METIS rejected its input (METIS_ERROR_INPUT)", where);
    case METIS_ERROR_MEMORY:
        return halo_errorf(HALO_EMETIS, "%s: METIS ran out of memory (METIS_ERROR_MEMORY)", where);
    default:
        return halo_errorf(HALO_EMETIS, "%s: METIS failed (status %d)", where, status);
    }
}

/* Calls METIS and converts its status (the one place METIS codes become halo codes). */
#define HALO_METIS_CHECK(call, where)                                                              \
    do {                                                                                           \
        int metis_st_ = (call);                                                                    \
        if (metis_st_ != METIS_OK) {                                                               \
            return metis_status(metis_st_, where);                                                 \
        }                                                                                          \
    } while (0)

/* Most weight columns passed to METIS (train, edges and up to 30 node types). */
#define HALO_METIS_MAXCON 32

/* A symmetric adjacency in METIS' CSR form (no self loops, no duplicates) with vertex weights. */
typedef struct sym_graph {
    idx_t n;        /* vertices */
    idx_t *xadj;    /* [n+1] */
    idx_t *adjncy;  /* [xadj[n]] neighbours, ascending per row */
    idx_t ncon;     /* weight columns */
    idx_t *vwgt;    /* [n*ncon] row-major */
    int cols[HALO_METIS_MAXCON]; /* what each weight column counts: 0 nodes, 1 train, 2 edges
                                  * (in-degree), 3 + t nodes of type t */
} sym_graph;

static void sym_free(sym_graph *s)
{
    halo_free(s->xadj);
    halo_free(s->adjncy);
    halo_free(s->vwgt);
    memset(s, 0, sizeof *s);
}

static int cmp_idx(const void *a, const void *b)
{
    idx_t x = *(const idx_t *)a, y = *(const idx_t *)b;
    return (x > y) - (x < y);
}

/* Sorts row a[0..n) ascending and drops duplicates; returns the new length. */
static idx_t sort_unique(idx_t *a, idx_t n)
{
    if (n > 32) {
        qsort(a, (size_t)n, sizeof *a, cmp_idx);
    } else {
        for (idx_t i = 1; i < n; i++) {
            idx_t x = a[i], j = i;
            while (j > 0 && a[j - 1] > x) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
    }
    idx_t m = 0;
    for (idx_t i = 0; i < n; i++) {
        if (m == 0 || a[m - 1] != a[i]) {
            a[m++] = a[i];
        }
    }
    return m;
}

/* METIS' peak memory per entry of the symmetrised adjacency before deduplication (2 per stored
 * edge), our copy included: measured 21-37 bytes between 19 M and 197 M entries (products-like
 * graphs, three constraints, P = 4; docs/partition.md), rounded up. */
#define HALO_METIS_BYTES_PER_ENTRY 40.0

/* Bytes of memory METIS may use: HALO_METIS_MAX_BYTES when set (a machine with swap, or a
 * test), else MemAvailable of /proc/meminfo; 0 when neither is known (no check). */
static double metis_memory_limit(void)
{
    const char *env = getenv("HALO_METIS_MAX_BYTES");
    if (env != NULL && env[0] != '\0') {
        return strtod(env, NULL);
    }
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kib = 0.0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "MemAvailable:", 13) == 0) {
            kib = strtod(line + 13, NULL);
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kib * 1024.0;
}

/* Builds the undirected graph of g (u ~ v when u -> v or v -> u, u != v): every edge is put
 * in both rows, each row is sorted and deduplicated in place, rows are compacted and the
 * adjacency shrunk to its deduplicated size. Fails when 2E does not fit METIS' 32-bit offsets,
 * and when METIS' estimated memory exceeds what the machine has available (a graph of a billion
 * edges asked for more than 24 GB and was killed by the kernel), before allocating it. */
static int sym_build(const halo_graph *g, sym_graph *s)
{
    int64_t n = g->nodes;
    memset(s, 0, sizeof *s);
    int64_t *deg = HALO_NEW(int64_t, n + 1);
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            int32_t u = g->indices[e];
            if (u != v) {
                deg[u]++;
                deg[v]++;
            }
        }
    }
    int64_t total = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t d = deg[v];
        deg[v] = total;
        total += d;
    }
    deg[n] = total;
    if (total > INT32_MAX) {
        halo_free(deg);
        return halo_errorf(HALO_EMETIS,
                           "metis: the symmetrised graph has %lld adjacency entries, more than "
                           "METIS' 32-bit idx_t holds (use --method stream)",
                           (long long)total);
    }
    double need = HALO_METIS_BYTES_PER_ENTRY * (double)total, limit = metis_memory_limit();
    if (limit > 0.0 && need > limit) {
        halo_free(deg);
        return halo_errorf(HALO_ENOMEM,
                           "metis: the symmetrised graph has %lld adjacency entries; METIS would "
                           "need about %.3g GiB (%.0f bytes per entry), more than the %.3g GiB "
                           "available (use --method stream)",
                           (long long)total, need / 1073741824.0, HALO_METIS_BYTES_PER_ENTRY,
                           limit / 1073741824.0);
    }
    s->n = (idx_t)n;
    s->xadj = HALO_ALLOC(idx_t, n + 1);
    s->adjncy = HALO_ALLOC(idx_t, total > 0 ? total : 1);
    for (int64_t v = 0; v <= n; v++) {
        s->xadj[v] = (idx_t)deg[v];
    }
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            int32_t u = g->indices[e];
            if (u != v) {
                s->adjncy[deg[u]++] = (idx_t)v;
                s->adjncy[deg[v]++] = (idx_t)u;
            }
        }
    }
    halo_free(deg);
    idx_t out = 0;
    for (int64_t v = 0; v < n; v++) {
        idx_t b = s->xadj[v], e = s->xadj[v + 1];
        idx_t m = sort_unique(s->adjncy + b, e - b);
        memmove(s->adjncy + out, s->adjncy + b, (size_t)m * sizeof(idx_t));
        s->xadj[v] = out;
        out += m;
    }
    s->xadj[n] = out;
    /* A graph stored both ways put every pair in each row twice: give the half back to METIS. */
    s->adjncy = halo_realloc(s->adjncy, (size_t)(out > 0 ? out : 1) * sizeof(idx_t));
    return 0;
}

/* Vertex weights: one column per requested constraint whose total is positive (a column of
 * zeros, e.g. train on a graph without training nodes, would make METIS divide by zero). On a
 * graph with node types the node-count column becomes one column per (non-empty) type, as
 * DistDGL balances each type separately. */
static void sym_weights(const halo_graph *g, unsigned constraints, sym_graph *s)
{
    int64_t n = g->nodes;
    int64_t trains = 0;
    int64_t per_type[256] = {0};
    bool typed = g->ntypes > 1 && g->ntype != NULL;
    for (int64_t v = 0; v < n; v++) {
        trains += g->split[v] == HALO_SPLIT_TRAIN;
        if (typed) {
            per_type[g->ntype[v]]++;
        }
    }
    s->ncon = 0;
    for (int c = 0; c < 3; c++) {
        bool empty = (c == 1 && trains == 0) || (c == 2 && g->edges == 0);
        if ((constraints & (1u << c)) == 0) {
            continue;
        }
        if (c == 0 && typed) {
            for (int t = 0; t < 256; t++) {
                if (per_type[t] > 0 && s->ncon < HALO_METIS_MAXCON) {
                    s->cols[s->ncon++] = 3 + t;
                }
            }
        } else if (!empty) {
            s->cols[s->ncon++] = c;
        } else {
            halo_debug("metis: constraint %d has zero total weight; dropped", c);
        }
    }
    if (s->ncon == 0) {
        s->cols[s->ncon++] = 0;
    }
    s->vwgt = HALO_ALLOC(idx_t, n * s->ncon + 1);
    for (int64_t v = 0; v < n; v++) {
        for (int i = 0; i < s->ncon; i++) {
            int c = s->cols[i];
            int64_t w = c == 0   ? 1
                        : c == 1 ? g->split[v] == HALO_SPLIT_TRAIN
                        : c == 2 ? g->indptr[v + 1] - g->indptr[v]
                                 : g->ntype[v] == c - 3;
            s->vwgt[v * s->ncon + i] = (idx_t)(w > INT32_MAX ? INT32_MAX : w);
        }
    }
}

/* Runs METIS_PartGraphKway on s into part[s->n]; nparts 1 (or a graph without vertices) needs
 * no METIS; fewer vertices than parts is rejected by the caller. */
static int sym_partition(sym_graph *s, int parts, double imbalance, int objective, uint64_t seed,
                         idx_t *part, const char *where)
{
    if (parts <= 1 || s->n == 0) {
        for (idx_t v = 0; v < s->n; v++) {
            part[v] = 0;
        }
        return 0;
    }
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)(seed & 0x7fffffff);
    options[METIS_OPTION_OBJTYPE] = objective == HALO_POBJ_VOL ? METIS_OBJTYPE_VOL
                                                               : METIS_OBJTYPE_CUT;
    options[METIS_OPTION_NUMBERING] = 0;
    real_t ubvec[HALO_METIS_MAXCON];
    for (int i = 0; i < s->ncon; i++) {
        ubvec[i] = (real_t)imbalance;
    }
    idx_t nvtxs = s->n, ncon = s->ncon, nparts = parts, objval = 0;
    HALO_METIS_CHECK(METIS_PartGraphKway(&nvtxs, &ncon, s->xadj, s->adjncy, s->vwgt, NULL, NULL,
                                         &nparts, NULL, ubvec, options, &objval, part),
                     where);
    halo_debug("%s: METIS k-way into %d parts, objective %d", where, parts, (int)objval);
    return 0;
}

int halo_partition_metis(const halo_graph *g, int parts, unsigned constraints, double imbalance,
                         int objective, uint64_t seed, int32_t *assignment)
{
    if (parts < 1 || parts > g->nodes) {
        return halo_errorf(HALO_EUSAGE, "metis: %d parts for a graph of %lld nodes", parts,
                           (long long)g->nodes);
    }
    if (parts == 1) {
        memset(assignment, 0, (size_t)g->nodes * sizeof *assignment);
        return 0;
    }
    sym_graph s;
    HALO_CHECK(sym_build(g, &s));
    sym_weights(g, constraints, &s);
    int rc = sym_partition(&s, parts, imbalance, objective, seed, assignment, "metis");
    sym_free(&s);
    return rc;
}

/* Moves training nodes between machines until every machine owns at least trainers * T of them
 * (T = floor(train / (machines * trainers))), so that the force-even split never hands a trainer
 * seeds owned by another machine. Candidates come from machines with a surplus, first those with
 * a neighbour on the receiving machine, then any, in id order. Returns the nodes moved. */
static int64_t fix_machine_train(const halo_graph *g, const sym_graph *s, int machines,
                                 int trainers, idx_t *mach)
{
    int64_t n = g->nodes, total = 0, moved = 0;
    int64_t *have = HALO_NEW(int64_t, machines);
    for (int64_t v = 0; v < n; v++) {
        if (g->split[v] == HALO_SPLIT_TRAIN) {
            have[mach[v]]++;
            total++;
        }
    }
    int64_t need = total / ((int64_t)machines * trainers) * trainers;
    for (int d = 0; d < machines; d++) {
        for (int pass = 0; pass < 2 && have[d] < need; pass++) {
            for (int64_t v = 0; v < n && have[d] < need; v++) {
                int m = mach[v];
                if (m == d || g->split[v] != HALO_SPLIT_TRAIN || have[m] <= need) {
                    continue;
                }
                bool near = pass == 1;
                for (idx_t e = s->xadj[v]; e < s->xadj[v + 1] && !near; e++) {
                    near = mach[s->adjncy[e]] == d;
                }
                if (near) {
                    mach[v] = d;
                    have[m]--;
                    have[d]++;
                    moved++;
                }
            }
        }
    }
    halo_free(have);
    return moved;
}

/* DistDGLv2's two levels: METIS splits the graph across machines; training nodes are moved so
 * every machine owns enough for its trainers; then each machine's induced subgraph is split by
 * METIS across its trainers with the same constraints. Part k = machine * trainers + trainer.
 * Imbalances multiply across the levels, so each level gets sqrt(imbalance) when both exist. */
int halo_partition_multilevel(const halo_graph *g, int machines, int trainers,
                              unsigned constraints, double imbalance, int objective,
                              uint64_t seed, int32_t *assignment)
{
    int64_t n = g->nodes;
    if (machines < 1 || trainers < 1 || (int64_t)machines * trainers > n) {
        return halo_errorf(HALO_EUSAGE, "multilevel: %d machines x %d trainers for %lld nodes",
                           machines, trainers, (long long)n);
    }
    if (machines > 1 && trainers > 1) {
        imbalance = sqrt(imbalance);
    }
    sym_graph s, sub;
    memset(&sub, 0, sizeof sub);
    HALO_CHECK(sym_build(g, &s));
    sym_weights(g, constraints, &s);
    idx_t *mach = HALO_NEW(idx_t, n + 1);
    idx_t *loc = HALO_ALLOC(idx_t, n + 1);
    idx_t *subpart = NULL;
    int rc = sym_partition(&s, machines, imbalance, objective, seed, mach, "multilevel: machines");
    if (rc < 0) {
        goto fail;
    }
    int64_t moved = fix_machine_train(g, &s, machines, trainers, mach);
    if (moved > 0) {
        halo_debug("multilevel: moved %lld training nodes between machines", (long long)moved);
    }
    subpart = HALO_ALLOC(idx_t, n + 1);
    for (int m = 0; m < machines; m++) {
        /* Induced subgraph of machine m, in local ids. */
        idx_t nm = 0;
        int64_t adj = 0;
        for (int64_t v = 0; v < n; v++) {
            if (mach[v] == m) {
                loc[v] = nm++;
                adj += s.xadj[v + 1] - s.xadj[v];
            }
        }
        sub.n = nm;
        sub.ncon = s.ncon;
        memcpy(sub.cols, s.cols, sizeof sub.cols);
        sub.xadj = HALO_ALLOC(idx_t, nm + 1);
        sub.adjncy = HALO_ALLOC(idx_t, adj + 1);
        sub.vwgt = HALO_ALLOC(idx_t, (int64_t)nm * s.ncon + 1);
        idx_t i = 0, out = 0;
        for (int64_t v = 0; v < n; v++) {
            if (mach[v] != m) {
                continue;
            }
            sub.xadj[i] = out;
            for (idx_t e = s.xadj[v]; e < s.xadj[v + 1]; e++) {
                if (mach[s.adjncy[e]] == m) {
                    sub.adjncy[out++] = loc[s.adjncy[e]];
                }
            }
            memcpy(sub.vwgt + (int64_t)i * s.ncon, s.vwgt + v * s.ncon,
                   (size_t)s.ncon * sizeof(idx_t));
            i++;
        }
        sub.xadj[nm] = out;
        if (nm < trainers) {
            /* Fewer nodes than trainers: one node each, some trainers empty. */
            for (idx_t k = 0; k < nm; k++) {
                subpart[k] = k;
            }
        } else {
            /* Columns whose total on this machine is zero would divide by zero in METIS. */
            for (int c = 0; c < sub.ncon; c++) {
                int64_t tot = 0;
                for (idx_t k = 0; k < nm; k++) {
                    tot += sub.vwgt[(int64_t)k * sub.ncon + c];
                }
                if (tot == 0) {
                    for (idx_t k = 0; k < nm; k++) {
                        sub.vwgt[(int64_t)k * sub.ncon + c] = 1;
                    }
                }
            }
            rc = sym_partition(&sub, trainers, imbalance, objective, seed + (uint64_t)m + 1,
                               subpart, "multilevel: trainers");
        }
        if (rc == 0) {
            for (int64_t v = 0; v < n; v++) {
                if (mach[v] == m) {
                    assignment[v] = m * trainers + subpart[loc[v]];
                }
            }
        }
        sym_free(&sub);
        if (rc < 0) {
            goto fail;
        }
    }
fail:
    sym_free(&s);
    halo_free(mach);
    halo_free(loc);
    halo_free(subpart);
    return rc;
}
