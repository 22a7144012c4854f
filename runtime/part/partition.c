/* Partition writer: relabels a graph by an assignment, splits the training nodes evenly, finds
 * every part's halo and writes the partition directory; also options, dispatch and summaries. */
#include "part/partition.h"

#include "core/args.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/sort.h"
#include "core/timer.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[] = {"metis", "multilevel", "random", "stream", "custom"};
static const char *const constraint_names[3] = {"nodes", "train", "edges"};

void halo_partition_opts_init(halo_partition_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->choice.method = HALO_PARTITION_METIS;
    opts->choice.constraints = HALO_PCON_ALL;
    opts->choice.imbalance = 1.05;
    opts->choice.objective = HALO_POBJ_CUT;
    opts->choice.stream = HALO_STREAM_LDG;
    opts->seed = 1;
}

const char *halo_partition_method_name(int method)
{
    if (method < 0 || method > HALO_PARTITION_CUSTOM) {
        return "?";
    }
    return method_names[method];
}

int halo_partition_parse_method(const char *s, int *method)
{
    for (int m = 0; m <= HALO_PARTITION_CUSTOM; m++) {
        if (strcmp(s, method_names[m]) == 0) {
            *method = m;
            return 0;
        }
    }
    return halo_errorf(HALO_EUSAGE,
                       "--method: '%s' is not one of metis, multilevel, random, stream, custom", s);
}

/* Parses a comma-separated subset of nodes,train,edges ("none" is not allowed: METIS needs a
 * column, so an empty list means nodes). */
int halo_partition_parse_constraints(const char *s, unsigned *constraints)
{
    char buf[256], *v[16];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) {
        return halo_errorf(HALO_EUSAGE, "--constraints: list is too long");
    }
    int n = halo_split_list(buf, "--constraints", v, 16);
    if (n < 0) {
        return n;
    }
    unsigned c = 0;
    for (int k = 0; k < n; k++) {
        bool found = false;
        for (int i = 0; i < 3; i++) {
            if (strcmp(v[k], constraint_names[i]) == 0) {
                c |= 1u << i;
                found = true;
            }
        }
        if (!found) {
            return halo_errorf(HALO_EUSAGE, "--constraints: '%s' is not one of nodes, train, edges",
                               v[k]);
        }
    }
    *constraints = c;
    return 0;
}

int halo_partition_parse_objective(const char *s, int *objective)
{
    if (strcmp(s, "cut") == 0) {
        *objective = HALO_POBJ_CUT;
    } else if (strcmp(s, "vol") == 0) {
        *objective = HALO_POBJ_VOL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--objective: '%s' is not cut or vol", s);
    }
    return 0;
}

int halo_partition_parse_stream(const char *s, int *stream)
{
    if (strcmp(s, "ldg") == 0) {
        *stream = HALO_STREAM_LDG;
    } else if (strcmp(s, "fennel") == 0) {
        *stream = HALO_STREAM_FENNEL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--stream: '%s' is not ldg or fennel", s);
    }
    return 0;
}

/* P, machines and trainers per machine from opts: P = machines * trainers, with whichever of
 * parts / machines is missing derived from the other. */
int halo_partition_resolve(const halo_graph *g, const halo_partition_opts *opts, int *parts,
                           int *machines, int *trainers)
{
    int t = opts->trainers_per_machine > 0 ? opts->trainers_per_machine : 1;
    int p = opts->parts, m = opts->machines;
    if (p < 0 || m < 0 || opts->trainers_per_machine < 0) {
        return halo_errorf(HALO_EUSAGE, "partition: parts, machines and trainers must be >= 1");
    }
    if (p == 0 && m == 0) {
        return halo_errorf(HALO_EUSAGE, "partition: --parts must be >= 1 (got 0)");
    }
    if (m == 0) {
        if (p % t != 0) {
            return halo_errorf(HALO_EUSAGE,
                               "partition: --parts %d is not a multiple of --trainers %d",
                               p, t);
        }
        m = p / t;
    }
    if ((int64_t)m * t > (1 << 20)) {
        return halo_errorf(HALO_EUSAGE, "partition: %d machines x %d trainers is too many", m, t);
    }
    if (p == 0) {
        p = m * t;
    }
    if (p != m * t) {
        return halo_errorf(HALO_EUSAGE,
                           "partition: --parts %d != --machines %d x --trainers %d", p,
                           m, t);
    }
    if (p > g->nodes) {
        return halo_errorf(HALO_EUSAGE, "partition: %d parts for a graph of %lld nodes", p,
                           (long long)g->nodes);
    }
    *parts = p;
    *machines = m;
    *trainers = t;
    return 0;
}

/* Checks that every entry of assignment lies in [0, parts) and that no part is left empty (a
 * part without nodes has no rank's work and breaks the contiguous id ranges' meaning). */
static int check_assignment(const int32_t *a, int64_t n, int parts, const char *where)
{
    int64_t *count = HALO_NEW(int64_t, (size_t)parts);
    int rc = 0;
    for (int64_t v = 0; v < n && rc == 0; v++) {
        if (a[v] < 0 || a[v] >= parts) {
            rc = halo_errorf(HALO_EINPUT, "%s: node %lld is assigned to part %d, not in [0, %d)",
                             where, (long long)v, a[v], parts);
        } else {
            count[a[v]]++;
        }
    }
    for (int k = 0; k < parts && rc == 0; k++) {
        if (count[k] == 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: part %d of %d has no node", where, k, parts);
        }
    }
    halo_free(count);
    return rc;
}

int halo_partition_assign(const halo_graph *g, const halo_partition_opts *opts,
                          int32_t *assignment)
{
    int p, m, t;
    HALO_CHECK(halo_partition_resolve(g, opts, &p, &m, &t));
    const halo_partition_choice *c = &opts->choice;
    unsigned con = c->constraints != 0 ? c->constraints : HALO_PCON_NODES;
    if (c->imbalance < 1.0) {
        return halo_errorf(HALO_EUSAGE, "partition: imbalance %g is below 1", c->imbalance);
    }
    switch (c->method) {
    case HALO_PARTITION_METIS:
        return halo_partition_metis(g, p, con, c->imbalance, c->objective, opts->seed, assignment);
    case HALO_PARTITION_MULTILEVEL:
        return halo_partition_multilevel(g, m, t, con, c->imbalance, c->objective, opts->seed,
                                         assignment);
    case HALO_PARTITION_RANDOM: return halo_partition_random(g, p, opts->seed, assignment);
    case HALO_PARTITION_STREAM:
        return halo_partition_stream(g, p, con, c->imbalance, c->stream, opts->seed, assignment);
    case HALO_PARTITION_CUSTOM:
        if (c->assignment == NULL) {
            return halo_errorf(HALO_EUSAGE, "partition: custom method without an assignment");
        }
        if (c->assignment_len != g->nodes) {
            return halo_errorf(HALO_EINPUT,
                               "custom assignment: %lld entries for a graph of %lld nodes",
                               (long long)c->assignment_len, (long long)g->nodes);
        }
        HALO_CHECK(check_assignment(c->assignment, g->nodes, p, "custom assignment"));
        memcpy(assignment, c->assignment, (size_t)g->nodes * sizeof *assignment);
        return 0;
    default: return halo_errorf(HALO_EUSAGE, "partition: unknown method %d", c->method);
    }
}

int64_t halo_partition_edge_cut(const halo_graph *g, const int32_t *assignment)
{
    int64_t cut = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            cut += assignment[g->indices[e]] != assignment[v];
        }
    }
    return cut;
}

/* Weight of node v in constraint column c (0 nodes, 1 train, 2 in-degree). */
static int64_t column_weight(const halo_graph *g, int64_t v, int c)
{
    switch (c) {
    case 0: return 1;
    case 1: return g->split[v] == HALO_SPLIT_TRAIN;
    default: return g->indptr[v + 1] - g->indptr[v];
    }
}

double halo_partition_balance(const halo_graph *g, const int32_t *assignment, int parts, int c)
{
    int64_t *w = HALO_NEW(int64_t, parts);
    int64_t total = 0, max = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        int64_t x = column_weight(g, v, c);
        w[assignment[v]] += x;
        total += x;
    }
    for (int k = 0; k < parts; k++) {
        max = w[k] > max ? w[k] : max;
    }
    halo_free(w);
    return total > 0 ? (double)max * parts / (double)total : 1.0;
}

uint32_t halo_partition_graph_checksum(const halo_graph *g)
{
    char path[4096];
    uint32_t crc = 0;
    if (g->dir[0] != '\0' && halo_path_join(path, sizeof path, g->dir, "meta.json") == 0 &&
        halo_file_crc32(path, &crc) == 0) {
        return crc;
    }
    halo_error_clear();
    crc = halo_crc32(0, &g->nodes, sizeof g->nodes);
    crc = halo_crc32(crc, &g->feat_dim, sizeof g->feat_dim);
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        const void *p = halo_graph_array(g, a);
        uint64_t n = halo_graph_array_bytes(g, a);
        if (p != NULL && n > 0) {
            crc = halo_crc32(crc, p, (size_t)n);
        }
    }
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        if (g->tfeat[t] != NULL) {
            crc = halo_crc32(crc, g->tfeat[t], (size_t)halo_graph_type_feat_bytes(g, t));
        }
    }
    return crc;
}

/* Refuses an output directory that holds something other than a partition of this graph:
 * anything that is not a previous partition (halo_output_check; never overridden), or a
 * partition of another graph (checksum differs; --force overrides this one). */
static int check_outdir(const char *pdir, uint32_t checksum, bool force)
{
    char path[4096];
    HALO_CHECK(halo_output_check(pdir, "partition.json", "partition"));
    HALO_CHECK(halo_path_join(path, sizeof path, pdir, "partition.json"));
    if (force || !halo_path_exists(path)) {
        return 0;
    }
    halo_json *j = NULL;
    const char *hex = NULL;
    const char *name = "?";
    int rc = halo_json_load(path, &j);
    const halo_json *gj = rc == 0 ? halo_json_get(j, "graph") : NULL;
    if (gj != NULL && halo_json_get_str(gj, "checksum", path, &hex) == 0) {
        const halo_json *nm = halo_json_get(gj, "name");
        name = nm != NULL && nm->type == HALO_JSON_STRING ? nm->string : "?";
        if ((uint32_t)strtoul(hex, NULL, 16) == checksum) {
            halo_json_free(j);
            halo_error_clear();
            return 0;
        }
    }
    rc = halo_errorf(HALO_EINPUT,
                     "%s: holds a partition of another graph ('%s', checksum %s); use --force "
                     "to replace it",
                     pdir, name, hex != NULL ? hex : "unreadable");
    halo_json_free(j);
    return rc;
}

/* The relabelling and the force-even training split, shared by the write passes. */
typedef struct relabel {
    int parts;             /* P */
    int trainers;          /* trainers per machine: part k is on machine k / trainers */
    bool sort_rows;        /* sort each in-edge row by new id (else keep the input order) */
    int64_t *start;        /* [P+1] first new id of each part */
    int32_t *newid;        /* [nodes] original -> new id */
    int64_t *orig;         /* [nodes] new -> original id */
    int32_t *train;        /* [train_total] training nodes by new id, ascending (so by part) */
    int64_t *own_off;      /* [P+1] part k's own training nodes are train[own_off[k]..[k+1]) */
    int64_t train_total;   /* training nodes in the graph */
    int64_t per_part;      /* T = floor(train_total / P) */
    int64_t *kept;         /* [P] own training nodes each part keeps (min(own, T)) */
    int64_t *taken;        /* [P] surplus nodes of part k already handed out */
    int64_t *lent;         /* [P] nodes part k lent to others */
    int64_t *borrowed;     /* [P] nodes part k took from others */
    int64_t *borrowed_xm;  /* [P] of those, nodes from another machine */
    int32_t *seeds;        /* [P*T] the split: part k's seeds at seeds[k*T ..] */
} relabel;

static void relabel_free(relabel *r)
{
    halo_free(r->start);
    halo_free(r->newid);
    halo_free(r->orig);
    halo_free(r->train);
    halo_free(r->own_off);
    halo_free(r->kept);
    halo_free(r->taken);
    halo_free(r->lent);
    halo_free(r->borrowed);
    halo_free(r->borrowed_xm);
    halo_free(r->seeds);
}

/* Appends up to `need` surplus training nodes of part j to part k's seeds. */
static int64_t borrow_from(relabel *r, int k, int j, int64_t need, int64_t *fill)
{
    int64_t own = r->own_off[j + 1] - r->own_off[j];
    int64_t avail = own - r->kept[j] - r->taken[j];
    int64_t take = avail < need ? avail : need;
    const int32_t *src = r->train + r->own_off[j] + r->kept[j] + r->taken[j];
    memcpy(r->seeds + (int64_t)k * r->per_part + *fill, src, (size_t)take * sizeof *src);
    r->taken[j] += take;
    r->lent[j] += take;
    r->borrowed[k] += take;
    if (j / r->trainers != k / r->trainers) {
        r->borrowed_xm[k] += take;
    }
    *fill += take;
    return take;
}

/* Relabels (new ids contiguous per part, ascending original order inside a part) and splits the
 * training nodes DistDGL's force-even way: T = floor(total / P) seeds per part; each part keeps
 * its first min(own, T) own training nodes (ascending new id); a part with fewer takes the
 * surplus of other parts, those on its own machine first, then any, in part order. The
 * total % P nodes left over are not used for training (at most P-1). */
static void relabel_build(const halo_graph *g, const int32_t *a, int parts, int trainers,
                          relabel *r)
{
    int64_t n = g->nodes;
    memset(r, 0, sizeof *r);
    r->parts = parts;
    r->trainers = trainers;
    r->start = HALO_NEW(int64_t, parts + 1);
    r->newid = HALO_ALLOC(int32_t, n);
    r->orig = HALO_ALLOC(int64_t, n);
    for (int64_t v = 0; v < n; v++) {
        r->start[a[v] + 1]++;
        r->train_total += g->split[v] == HALO_SPLIT_TRAIN;
    }
    for (int k = 0; k < parts; k++) {
        r->start[k + 1] += r->start[k];
    }
    int64_t *cur = HALO_ALLOC(int64_t, parts);
    memcpy(cur, r->start, (size_t)parts * sizeof *cur);
    for (int64_t v = 0; v < n; v++) {
        int64_t id = cur[a[v]]++;
        r->newid[v] = (int32_t)id;
        r->orig[id] = v;
    }
    halo_free(cur);

    r->train = HALO_ALLOC(int32_t, r->train_total > 0 ? r->train_total : 1);
    r->own_off = HALO_NEW(int64_t, parts + 1);
    int64_t t = 0;
    for (int k = 0; k < parts; k++) {
        r->own_off[k] = t;
        for (int64_t id = r->start[k]; id < r->start[k + 1]; id++) {
            if (g->split[r->orig[id]] == HALO_SPLIT_TRAIN) {
                r->train[t++] = (int32_t)id;
            }
        }
    }
    r->own_off[parts] = t;
    r->per_part = r->train_total / parts;
    r->kept = HALO_NEW(int64_t, parts);
    r->taken = HALO_NEW(int64_t, parts);
    r->lent = HALO_NEW(int64_t, parts);
    r->borrowed = HALO_NEW(int64_t, parts);
    r->borrowed_xm = HALO_NEW(int64_t, parts);
    r->seeds = HALO_ALLOC(int32_t, r->per_part * parts + 1);
    for (int k = 0; k < parts; k++) {
        int64_t own = r->own_off[k + 1] - r->own_off[k];
        r->kept[k] = own < r->per_part ? own : r->per_part;
        memcpy(r->seeds + (int64_t)k * r->per_part, r->train + r->own_off[k],
               (size_t)r->kept[k] * sizeof(int32_t));
    }
    for (int k = 0; k < parts; k++) {
        int64_t fill = r->kept[k];
        int m0 = k / trainers * trainers;
        for (int j = m0; j < m0 + trainers && fill < r->per_part; j++) {
            borrow_from(r, k, j, r->per_part - fill, &fill);
        }
        for (int j = 0; j < parts && fill < r->per_part; j++) {
            if (j / trainers != k / trainers) {
                borrow_from(r, k, j, r->per_part - fill, &fill);
            }
        }
    }
}

/* Per-part figures gathered while writing. */
typedef struct part_fig {
    int64_t cut;        /* in-edges of owned nodes that come from another part */
    int64_t halo;       /* halo nodes */
    int64_t weight[3];  /* constraint columns: nodes, training nodes and in-edges owned */
    int64_t tcount[HALO_MAX_NTYPES]; /* owned nodes per node type (typed graphs) */
} part_fig;

/* The array files of a part that the pass over the input graph streams, in this order. */
enum { W_INDPTR, W_INDICES, W_FEAT, W_LABEL, W_SPLIT, W_COUNT };
static const char *const w_names[W_COUNT] = {"indptr.i64", "indices.i32", "feat.f32", "label.i32",
                                             "split.u8"};
/* Every file of a part in part.c's order: the streamed ones, the tail written at the end, and
 * the typed ones (ntype.u8 and etype.u8 streamed, halo_ntype.u8 at the end). */
enum { F_HALO = W_COUNT, F_HALO_DEG, F_TRAIN, F_NTYPE, F_ETYPE, F_HALO_NTYPE, F_COUNT };
static const char *const f_names[F_COUNT] = {"indptr.i64", "indices.i32", "feat.f32",
                                             "label.i32", "split.u8", "halo.i32", "halo_deg.i32",
                                             "train.i32", "ntype.u8", "etype.u8",
                                             "halo_ntype.u8"};

/* The staging buffer of one halo_writer (core/fs.c), counted against PART_GROUP_BYTES. */
#define PART_WRITER_BYTES (4u << 20)
/* Bytes of input rows the write pass reads before it hands their mapped pages back. */
#define PART_WINDOW_BYTES (256ll << 20)
/* Memory the parts of one write group may hold together (their bitmaps and writer buffers);
 * HALO_PART_WRITE_BYTES overrides it (a number of bytes, "1e9" allowed). */
#define PART_GROUP_BYTES (4ull << 30)

/* One part while the pass over the input graph fills it. */
typedef struct part_out {
    char dir[4096];          /* its directory inside the temporary partition directory */
    halo_writer *w[W_COUNT]; /* the streamed arrays (W_FEAT NULL for a topology-only graph) */
    halo_writer *wt[2];      /* typed graphs: ntype.u8 and etype.u8, else NULL */
    halo_writer *wf[HALO_MAX_NTYPES]; /* typed graphs: feat.TYPE.f32 of each featured type */
    uint32_t fcrc[HALO_MAX_NTYPES];   /* their CRC-32 */
    uint64_t fbytes[HALO_MAX_NTYPES]; /* their bytes */
    uint32_t crc[F_COUNT];   /* CRC-32 of each file of f_names order (part.c's) */
    uint64_t bytes[F_COUNT]; /* bytes of each file */
    int64_t off;             /* in-edges written so far (the running indptr value) */
    uint64_t *mark;          /* [nodes / 64 + 1] bitmap over new ids: sources owned elsewhere */
} part_out;

/* Creates part k's directory and opens its streamed files. */
static int part_open(const halo_graph *g, const char *tmp, int k, part_out *po)
{
    char name[64], path[4200];
    snprintf(name, sizeof name, "part-%d", k);
    HALO_CHECK(halo_path_join(po->dir, sizeof po->dir, tmp, name));
    HALO_CHECK(halo_mkdir_p(po->dir));
    for (int i = 0; i < W_COUNT; i++) {
        if (i == W_FEAT && !halo_graph_has_array(g, HALO_GA_FEAT)) {
            continue; /* topology-only, or typed: one file per featured type below */
        }
        HALO_CHECK(halo_path_join(path, sizeof path, po->dir, w_names[i]));
        HALO_CHECK(halo_writer_open(path, &po->w[i]));
    }
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        if (halo_graph_has_type_feat(g, t)) {
            halo_graph_type_feat_name(g, t, name, sizeof name);
            HALO_CHECK(halo_path_join(path, sizeof path, po->dir, name));
            HALO_CHECK(halo_writer_open(path, &po->wf[t]));
        }
    }
    for (int i = 0; i < 2 && halo_graph_typed(g); i++) {
        HALO_CHECK(halo_path_join(path, sizeof path, po->dir, f_names[F_NTYPE + i]));
        HALO_CHECK(halo_writer_open(path, &po->wt[i]));
    }
    po->off = 0;
    return halo_writer_put(po->w[W_INDPTR], &po->off, sizeof po->off);
}

/* Closes part po's writers without checks (error path). */
static void part_discard(part_out *po)
{
    for (int i = 0; i < W_COUNT; i++) {
        halo_writer_discard(po->w[i]);
        po->w[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        halo_writer_discard(po->wt[i]);
        po->wt[i] = NULL;
    }
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        halo_writer_discard(po->wf[t]);
        po->wf[t] = NULL;
    }
}

/* One pass over the input graph in ascending original id -- which is ascending new id inside
 * every part -- appending each row of a node of parts [k0, k1) to its part's files: sources
 * mapped to new ids (sorted with sort_rows), features, label, split. Sources owned elsewhere
 * are counted as cut and marked in the part's halo bitmap. row has room for the longest row. */
static int write_pass(const halo_graph *g, const int32_t *a, const relabel *r, int k0, int k1,
                      part_out *po, part_fig *fig, int32_t *row, halo_progress *pg,
                      int64_t *written)
{
    int64_t n = g->nodes, released = 0;
    size_t frow = (size_t)g->feat_dim * sizeof(float);
    for (int64_t o = 0; o < n; o++) {
        if ((o & 0xffff) == 0 && o > released &&
            (g->indptr[o] - g->indptr[released]) * 4 + (o - released) * (int64_t)frow >
                PART_WINDOW_BYTES) {
            /* what the pass has read stays in the page cache, not in this process */
            halo_graph_release_rows(g, released, o);
            released = o;
        }
        int k = a[o];
        if (k < k0 || k >= k1) {
            continue;
        }
        part_out *p = &po[k - k0];
        part_fig *f = &fig[k];
        int64_t s = r->start[k], e = r->start[k + 1];
        int64_t d = g->indptr[o + 1] - g->indptr[o];
        const int32_t *src = g->indices + g->indptr[o];
        for (int64_t j = 0; j < d; j++) {
            int32_t u = r->newid[src[j]];
            row[j] = u;
            if (u < s || u >= e) {
                f->cut++;
                p->mark[u >> 6] |= 1ull << (u & 63);
            }
        }
        const uint8_t *et = g->etype != NULL ? g->etype + g->indptr[o] : NULL;
        if (r->sort_rows && et == NULL) {
            halo_sort_i32(row, d);
        } else if (r->sort_rows) { /* sorted within each relation: rows stay grouped */
            for (int64_t j0 = 0, j1; j0 < d; j0 = j1) {
                for (j1 = j0 + 1; j1 < d && et[j1] == et[j0]; j1++) {
                }
                halo_sort_i32(row + j0, j1 - j0);
            }
        }
        if (et != NULL) {
            HALO_CHECK(halo_writer_put(p->wt[1], et, (size_t)d));
            uint8_t nt = (uint8_t)halo_graph_node_type(g, o); /* 0 when ntype.u8 is absent */
            HALO_CHECK(halo_writer_put(p->wt[0], &nt, 1));
            f->tcount[nt]++;
            int w; /* the type's own row, into its own file (types contiguous in the part) */
            const float *x = halo_graph_feat_ptr(g, o, &w);
            if (p->wf[nt] != NULL && w > 0) {
                HALO_CHECK(halo_writer_put(p->wf[nt], x, (size_t)w * sizeof(float)));
            }
        }
        p->off += d;
        HALO_CHECK(halo_writer_put(p->w[W_INDPTR], &p->off, sizeof p->off));
        HALO_CHECK(halo_writer_put(p->w[W_INDICES], row, (size_t)d * sizeof *row));
        if (p->w[W_FEAT] != NULL && frow > 0) {
            HALO_CHECK(halo_writer_put(p->w[W_FEAT], g->feat + o * g->feat_dim, frow));
        }
        HALO_CHECK(halo_writer_put(p->w[W_LABEL], &g->label[o], sizeof(int32_t)));
        HALO_CHECK(halo_writer_put(p->w[W_SPLIT], &g->split[o], 1));
        f->weight[0]++;
        f->weight[1] += g->split[o] == HALO_SPLIT_TRAIN;
        f->weight[2] += d;
        *written += d;
        if ((o & 0xfffff) == 0) {
            halo_progress_update(pg, (uint64_t)*written);
        }
    }
    halo_graph_release_rows(g, released, n);
    return 0;
}

/* Finishes part k after the pass: closes its streamed files, writes the halo (the bitmap's ids,
 * ascending, with each node's in-degree in the whole graph; the bitmap is left zeroed), the
 * training seeds and part-K/meta.json. */
static int part_finish(const halo_graph *g, const relabel *r, int k, part_out *po,
                       part_fig *fig)
{
    static const char *const tailnames[3] = {"halo.i32", "halo_deg.i32", "train.i32"};
    char path[4200];
    int rc = 0;
    for (int i = 0; i < W_COUNT; i++) {
        if (po->w[i] == NULL) {
            continue; /* feat.f32 of a topology-only graph */
        }
        rc = halo_writer_close(po->w[i], &po->crc[i], &po->bytes[i]);
        po->w[i] = NULL;
        HALO_CHECK(rc);
    }
    for (int i = 0; i < 2; i++) {
        if (po->wt[i] != NULL) {
            rc = halo_writer_close(po->wt[i], &po->crc[F_NTYPE + i], &po->bytes[F_NTYPE + i]);
            po->wt[i] = NULL;
            HALO_CHECK(rc);
        }
    }
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        if (po->wf[t] != NULL) {
            rc = halo_writer_close(po->wf[t], &po->fcrc[t], &po->fbytes[t]);
            po->wf[t] = NULL;
            HALO_CHECK(rc);
        }
    }
    int64_t words = (g->nodes + 63) / 64 + 1, nhalo = 0;
    for (int64_t i = 0; i < words; i++) {
        nhalo += __builtin_popcountll(po->mark[i]);
    }
    int32_t *halo = HALO_ALLOC(int32_t, nhalo > 0 ? nhalo : 1);
    int32_t *hdeg = HALO_ALLOC(int32_t, nhalo > 0 ? nhalo : 1);
    uint8_t *htype = HALO_ALLOC(uint8_t, nhalo > 0 ? nhalo : 1);
    int64_t h = 0;
    for (int64_t i = 0; i < words; i++) {
        uint64_t m = po->mark[i];
        po->mark[i] = 0;
        while (m != 0) {
            int32_t u = (int32_t)(i * 64 + __builtin_ctzll(m));
            m &= m - 1;
            int64_t o = r->orig[u];
            int64_t d = g->indptr[o + 1] - g->indptr[o];
            halo[h] = u;
            htype[h] = (uint8_t)halo_graph_node_type(g, o);
            hdeg[h++] = d > INT32_MAX ? INT32_MAX : (int32_t)d;
        }
    }
    fig->halo = nhalo;
    const void *tail[3] = {halo, hdeg, r->seeds + (int64_t)k * r->per_part};
    const size_t tailn[3] = {(size_t)nhalo * 4, (size_t)nhalo * 4, (size_t)r->per_part * 4};
    for (int i = 0; i < 3; i++) {
        HALO_TRY(halo_path_join(path, sizeof path, po->dir, tailnames[i]));
        HALO_TRY(halo_file_write_all(path, tail[i], tailn[i]));
        po->crc[W_COUNT + i] = halo_crc32(0, tail[i], tailn[i]);
        po->bytes[W_COUNT + i] = tailn[i];
    }
    if (halo_graph_typed(g)) {
        HALO_TRY(halo_path_join(path, sizeof path, po->dir, f_names[F_HALO_NTYPE]));
        HALO_TRY(halo_file_write_all(path, htype, (size_t)nhalo));
        po->crc[F_HALO_NTYPE] = halo_crc32(0, htype, (size_t)nhalo);
        po->bytes[F_HALO_NTYPE] = (uint64_t)nhalo;
    }

    int64_t s = r->start[k], e = r->start[k + 1];
    halo_jw j;
    halo_jw_init(&j, true);
    halo_jw_obj_begin(&j);
    halo_jw_key(&j, "format");
    halo_jw_i64(&j, HALO_PART_FORMAT);
    halo_jw_key(&j, "part");
    halo_jw_i64(&j, k);
    halo_jw_key(&j, "machine");
    halo_jw_i64(&j, k / r->trainers);
    halo_jw_key(&j, "start");
    halo_jw_i64(&j, s);
    halo_jw_key(&j, "end");
    halo_jw_i64(&j, e);
    halo_jw_key(&j, "nodes");
    halo_jw_i64(&j, e - s);
    halo_jw_key(&j, "edges");
    halo_jw_i64(&j, po->off);
    halo_jw_key(&j, "feat_dim");
    halo_jw_i64(&j, g->feat_dim);
    if (g->topology_only) {
        halo_jw_key(&j, "features");
        halo_jw_bool(&j, false);
    }
    halo_jw_key(&j, "num_halo");
    halo_jw_i64(&j, nhalo);
    halo_jw_key(&j, "num_train");
    halo_jw_i64(&j, r->per_part);
    if (halo_graph_typed(g)) {
        halo_jw_key(&j, "ntypes");
        halo_jw_i64(&j, g->ntypes);
        halo_jw_key(&j, "nrels");
        halo_jw_i64(&j, g->nrels);
    }
    halo_jw_key(&j, "files");
    halo_jw_obj_begin(&j);
    for (int i = 0; i < (halo_graph_typed(g) ? F_COUNT : F_TRAIN + 1); i++) {
        char hex[16];
        if (i == W_FEAT && !halo_graph_has_array(g, HALO_GA_FEAT)) {
            continue;
        }
        snprintf(hex, sizeof hex, "%08x", po->crc[i]);
        halo_jw_key(&j, f_names[i]);
        halo_jw_obj_begin(&j);
        halo_jw_key(&j, "bytes");
        halo_jw_i64(&j, (int64_t)po->bytes[i]);
        halo_jw_key(&j, "crc32");
        halo_jw_str(&j, hex);
        halo_jw_obj_end(&j);
    }
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        if (!halo_graph_has_type_feat(g, t)) {
            continue;
        }
        char hex[16], name[64];
        snprintf(hex, sizeof hex, "%08x", po->fcrc[t]);
        halo_graph_type_feat_name(g, t, name, sizeof name);
        halo_jw_key(&j, name);
        halo_jw_obj_begin(&j);
        halo_jw_key(&j, "bytes");
        halo_jw_i64(&j, (int64_t)po->fbytes[t]);
        halo_jw_key(&j, "crc32");
        halo_jw_str(&j, hex);
        halo_jw_obj_end(&j);
    }
    halo_jw_obj_end(&j);
    halo_jw_obj_end(&j);
    halo_sb_putc(&j.sb, '\n');
    rc = halo_path_join(path, sizeof path, po->dir, "meta.json");
    if (rc == 0) {
        rc = halo_file_write_all(path, j.sb.buf, j.sb.len);
    }
    halo_jw_free(&j);
fail:
    halo_free(halo);
    halo_free(hdeg);
    halo_free(htype);
    return rc;
}

/* PART_GROUP_BYTES, or HALO_PART_WRITE_BYTES when set. */
static uint64_t group_budget(void)
{
    const char *env = getenv("HALO_PART_WRITE_BYTES");
    if (env != NULL && env[0] != '\0') {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v >= 0) {
            return (uint64_t)v;
        }
        halo_warn("HALO_PART_WRITE_BYTES=%s is not a byte count; using %llu", env,
                  (unsigned long long)PART_GROUP_BYTES);
    }
    return PART_GROUP_BYTES;
}

/* Writes every part into tmp: parts in groups small enough that their bitmaps and writer
 * buffers fit group_budget() (all parts at once for most graphs), one sequential pass over the
 * input graph per group. */
static int write_parts(const halo_graph *g, const int32_t *a, const relabel *r, const char *tmp,
                       part_fig *fig)
{
    int P = r->parts, rc = 0;
    int64_t words = (g->nodes + 63) / 64 + 1;
    int writers = W_COUNT; /* the streamed arrays and each featured type's file */
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        writers += halo_graph_has_type_feat(g, t);
    }
    uint64_t per_part = (uint64_t)words * 8 + (uint64_t)writers * PART_WRITER_BYTES;
    uint64_t budget = group_budget();
    int group = budget / per_part < (uint64_t)P ? (int)(budget / per_part) : P;
    group = group < 1 ? 1 : group > P ? P : group;
    part_out *po = HALO_NEW(part_out, group);
    for (int i = 0; i < group; i++) {
        po[i].mark = HALO_NEW(uint64_t, words);
    }
    int64_t maxdeg = 1;
    for (int64_t v = 0; v < g->nodes; v++) {
        int64_t d = g->indptr[v + 1] - g->indptr[v];
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    int32_t *row = HALO_ALLOC(int32_t, maxdeg);
    /* the assignment's pass over the graph is done: drop its pages, the write pass streams */
    halo_graph_release_rows(g, 0, g->nodes);
    halo_debug("partition: writing %d parts in groups of %d (%d passes over the graph)", P, group,
               (P + group - 1) / group);
    halo_progress pg;
    int64_t written = 0;
    halo_progress_begin(&pg, "writing parts", (uint64_t)g->edges);
    for (int k0 = 0; k0 < P && rc == 0; k0 += group) {
        int k1 = k0 + group < P ? k0 + group : P;
        for (int k = k0; k < k1 && rc == 0; k++) {
            rc = part_open(g, tmp, k, &po[k - k0]);
        }
        if (rc == 0) {
            rc = write_pass(g, a, r, k0, k1, po, fig, row, &pg, &written);
        }
        for (int k = k0; k < k1 && rc == 0; k++) {
            rc = part_finish(g, r, k, &po[k - k0], &fig[k]);
        }
        for (int i = 0; i < group; i++) {
            part_discard(&po[i]);
        }
    }
    halo_progress_end(&pg);
    for (int i = 0; i < group; i++) {
        halo_free(po[i].mark);
    }
    halo_free(po);
    halo_free(row);
    return rc;
}

/* Writes a "name": [v0, v1, ...] array of int64. */
static void jw_i64_array(halo_jw *j, const char *key, const int64_t *v, int n)
{
    halo_jw_key(j, key);
    halo_jw_arr_begin(j);
    for (int i = 0; i < n; i++) {
        halo_jw_i64(j, v[i]);
    }
    halo_jw_arr_end(j);
}

/* The typed part of partition.json: node types, relations (names and type ids), target type,
 * each part's id range per type (types stay contiguous inside a part, since a part keeps the
 * input order and the input's types are contiguous) and the balance of each type. */
static void write_types(halo_jw *j, const halo_graph *g, const relabel *r, const part_fig *fig)
{
    int P = r->parts;
    halo_jw_key(j, "node_types");
    halo_jw_arr_begin(j);
    for (int t = 0; t < g->ntypes; t++) {
        halo_jw_obj_begin(j);
        halo_jw_key(j, "name");
        halo_jw_str(j, g->ntype_name[t]);
        halo_jw_key(j, "feat_dim");
        halo_jw_i64(j, g->ntype_feat_dim[t]);
        halo_jw_obj_end(j);
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "relations");
    halo_jw_arr_begin(j);
    for (int q = 0; q < g->nrels; q++) {
        halo_jw_obj_begin(j);
        halo_jw_key(j, "name");
        halo_jw_str(j, g->rel[q].name);
        halo_jw_key(j, "src_type");
        halo_jw_i64(j, g->rel[q].src);
        halo_jw_key(j, "dst_type");
        halo_jw_i64(j, g->rel[q].dst);
        halo_jw_obj_end(j);
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "target_type");
    halo_jw_str(j, g->ntype_name[g->target_type]);
    halo_jw_key(j, "type_ranges");
    halo_jw_arr_begin(j);
    for (int k = 0; k < P; k++) {
        int64_t at = r->start[k];
        halo_jw_arr_begin(j);
        for (int t = 0; t < g->ntypes; t++) {
            halo_jw_arr_begin(j);
            halo_jw_i64(j, at);
            at += fig[k].tcount[t];
            halo_jw_i64(j, at);
            halo_jw_arr_end(j);
        }
        halo_jw_arr_end(j);
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "balance_per_type");
    halo_jw_obj_begin(j);
    for (int t = 0; t < g->ntypes; t++) {
        int64_t total = 0, max = 0;
        for (int k = 0; k < P; k++) {
            total += fig[k].tcount[t];
            max = fig[k].tcount[t] > max ? fig[k].tcount[t] : max;
        }
        halo_jw_key(j, g->ntype_name[t]);
        halo_jw_f64(j, total > 0 ? (double)max * P / (double)total : 1.0);
    }
    halo_jw_obj_end(j);
}

/* Builds partition.json from the relabelling and the per-part figures. */
static void write_summary(halo_jw *j, const halo_graph *g, const halo_partition_opts *opts,
                          const relabel *r, const part_fig *fig, int machines, uint32_t checksum,
                          halo_partition_stats *st)
{
    int P = r->parts;
    char hex[16];
    snprintf(hex, sizeof hex, "%08x", checksum);
    halo_jw_obj_begin(j);
    halo_jw_key(j, "format");
    halo_jw_i64(j, HALO_PART_FORMAT);
    halo_jw_key(j, "parts");
    halo_jw_i64(j, P);
    halo_jw_key(j, "method");
    halo_jw_str(j, halo_partition_method_name(opts->choice.method));
    halo_jw_key(j, "policy");
    if (opts->policy != NULL) {
        halo_jw_str(j, opts->policy);
    } else {
        halo_jw_null(j);
    }
    halo_jw_key(j, "parameters");
    halo_jw_obj_begin(j);
    halo_jw_key(j, "constraints");
    halo_jw_arr_begin(j);
    unsigned con = opts->choice.constraints != 0 ? opts->choice.constraints : HALO_PCON_NODES;
    for (int c = 0; c < 3; c++) {
        if (con & (1u << c)) {
            halo_jw_str(j, constraint_names[c]);
        }
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "imbalance");
    halo_jw_f64(j, opts->choice.imbalance);
    halo_jw_key(j, "objective");
    halo_jw_str(j, opts->choice.objective == HALO_POBJ_VOL ? "vol" : "cut");
    halo_jw_key(j, "stream");
    halo_jw_str(j, opts->choice.stream == HALO_STREAM_FENNEL ? "fennel" : "ldg");
    halo_jw_key(j, "seed");
    halo_jw_i64(j, (int64_t)opts->seed);
    halo_jw_obj_end(j);
    halo_jw_key(j, "graph");
    halo_jw_obj_begin(j);
    halo_jw_key(j, "name");
    halo_jw_str(j, g->name);
    halo_jw_key(j, "dir");
    halo_jw_str(j, g->dir);
    halo_jw_key(j, "nodes");
    halo_jw_i64(j, g->nodes);
    halo_jw_key(j, "edges");
    halo_jw_i64(j, g->edges);
    halo_jw_key(j, "feat_dim");
    halo_jw_i64(j, g->feat_dim);
    if (g->topology_only) {
        halo_jw_key(j, "features");
        halo_jw_bool(j, false);
    }
    halo_jw_key(j, "classes");
    halo_jw_i64(j, g->classes);
    halo_jw_key(j, "checksum");
    halo_jw_str(j, hex);
    halo_jw_obj_end(j);
    halo_jw_key(j, "rows_sorted");
    halo_jw_bool(j, r->sort_rows);
    if (halo_graph_typed(g)) {
        write_types(j, g, r, fig);
    }
    halo_jw_key(j, "ranges");
    halo_jw_arr_begin(j);
    for (int k = 0; k < P; k++) {
        halo_jw_arr_begin(j);
        halo_jw_i64(j, r->start[k]);
        halo_jw_i64(j, r->start[k + 1]);
        halo_jw_arr_end(j);
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "machines");
    halo_jw_i64(j, machines);
    halo_jw_key(j, "trainers_per_machine");
    halo_jw_i64(j, r->trainers);
    halo_jw_key(j, "part_machine");
    halo_jw_arr_begin(j);
    for (int k = 0; k < P; k++) {
        halo_jw_i64(j, k / r->trainers);
    }
    halo_jw_arr_end(j);
    halo_jw_key(j, "edge_cut");
    halo_jw_i64(j, st->edge_cut);
    halo_jw_key(j, "edge_cut_fraction");
    halo_jw_f64(j, st->edge_cut_fraction);
    halo_jw_key(j, "balance");
    halo_jw_obj_begin(j);
    for (int c = 0; c < 3; c++) {
        halo_jw_key(j, constraint_names[c]);
        halo_jw_f64(j, st->balance[c]);
    }
    halo_jw_obj_end(j);
    halo_jw_key(j, "replication_factor");
    halo_jw_f64(j, st->replication);
    halo_jw_key(j, "train_total");
    halo_jw_i64(j, r->train_total);
    halo_jw_key(j, "train_per_part");
    halo_jw_i64(j, r->per_part);
    halo_jw_key(j, "train_dropped");
    halo_jw_i64(j, st->train_dropped);
    halo_jw_key(j, "train_borrowed");
    halo_jw_i64(j, st->train_borrowed);
    int64_t *tmp = HALO_ALLOC(int64_t, P);
    for (int k = 0; k < P; k++) {
        tmp[k] = fig[k].halo;
    }
    jw_i64_array(j, "halo_per_part", tmp, P);
    halo_jw_key(j, "replication_per_part");
    halo_jw_arr_begin(j);
    for (int k = 0; k < P; k++) {
        int64_t own = r->start[k + 1] - r->start[k];
        halo_jw_f64(j, own > 0 ? (double)(own + fig[k].halo) / (double)own : 0.0);
    }
    halo_jw_arr_end(j);
    for (int k = 0; k < P; k++) {
        tmp[k] = fig[k].weight[2];
    }
    jw_i64_array(j, "edges_per_part", tmp, P);
    for (int k = 0; k < P; k++) {
        tmp[k] = fig[k].weight[1];
    }
    jw_i64_array(j, "train_owned_per_part", tmp, P);
    jw_i64_array(j, "train_borrowed_per_part", r->borrowed, P);
    jw_i64_array(j, "train_borrowed_other_machine", r->borrowed_xm, P);
    jw_i64_array(j, "train_lent_per_part", r->lent, P);
    halo_free(tmp);
    halo_jw_key(j, "peak_rss_bytes");
    halo_jw_i64(j, (int64_t)st->rss_peak);
    halo_jw_key(j, "time_s");
    halo_jw_obj_begin(j);
    halo_jw_key(j, "assign");
    halo_jw_f64(j, st->assign_s);
    halo_jw_key(j, "write");
    halo_jw_f64(j, st->write_s);
    halo_jw_obj_end(j);
    halo_jw_obj_end(j);
    halo_sb_putc(&j->sb, '\n');
}

/* halo_partition_write, with the seconds the assignment took (recorded in partition.json) and
 * the graph's checksum (halo_partition_graph_checksum, which may read every array). */
static int partition_write(const halo_graph *g, const int32_t *assignment,
                           const halo_partition_opts *opts, const char *pdir, double assign_s,
                           uint32_t checksum, halo_partition_stats *stats)
{
    int P, M, G, rc = 0;
    char tmp[4096] = "", path[4096];
    halo_partition_stats local = {0};
    halo_partition_stats *st = stats != NULL ? stats : &local;
    memset(st, 0, sizeof *st);
    st->assign_s = assign_s;
    double t0 = halo_now();
    HALO_CHECK(halo_partition_resolve(g, opts, &P, &M, &G));
    if (assignment == NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: no assignment");
    }
    HALO_CHECK(check_assignment(assignment, g->nodes, P, "assignment"));
    HALO_CHECK(check_outdir(pdir, checksum, opts->force));

    relabel r;
    relabel_build(g, assignment, P, G, &r);
    r.sort_rows = opts->sort_rows;
    part_fig *fig = HALO_NEW(part_fig, P);
    halo_jw j;
    halo_jw_init(&j, true);
    HALO_TRY(halo_outdir_begin(pdir, "partition.json", "partition", tmp, sizeof tmp));
    HALO_TRY(halo_path_join(path, sizeof path, tmp, "orig_id.i64"));
    HALO_TRY(halo_file_write_all(path, r.orig, (size_t)g->nodes * sizeof(int64_t)));
    HALO_TRY(write_parts(g, assignment, &r, tmp, fig));

    int64_t owned_plus_halo = 0;
    for (int k = 0; k < P; k++) {
        st->edge_cut += fig[k].cut;
        owned_plus_halo += fig[k].weight[0] + fig[k].halo;
        st->train_borrowed += r.borrowed[k];
    }
    for (int c = 0; c < 3; c++) {
        int64_t total = 0, max = 0;
        for (int k = 0; k < P; k++) {
            total += fig[k].weight[c];
            max = fig[k].weight[c] > max ? fig[k].weight[c] : max;
        }
        st->balance[c] = total > 0 ? (double)max * P / (double)total : 1.0;
    }
    st->edge_cut_fraction = g->edges > 0 ? (double)st->edge_cut / (double)g->edges : 0.0;
    st->replication = g->nodes > 0 ? (double)owned_plus_halo / (double)g->nodes : 0.0;
    st->train_per_part = r.per_part;
    st->train_dropped = r.train_total - r.per_part * P;
    st->write_s = halo_now() - t0;
    st->rss_peak = halo_mem_rss_peak();
    write_summary(&j, g, opts, &r, fig, M, checksum, st);
    HALO_TRY(halo_path_join(path, sizeof path, tmp, "partition.json"));
    HALO_TRY(halo_file_write_all(path, j.sb.buf, j.sb.len));
    HALO_TRY(halo_outdir_commit(tmp, pdir));
    tmp[0] = '\0';
fail:
    if (tmp[0] != '\0') {
        halo_outdir_abort(tmp);
    }
    halo_jw_free(&j);
    halo_free(fig);
    relabel_free(&r);
    return rc;
}

int halo_partition_write(const halo_graph *g, const int32_t *assignment,
                         const halo_partition_opts *opts, const char *pdir,
                         halo_partition_stats *stats)
{
    return partition_write(g, assignment, opts, pdir, 0.0, halo_partition_graph_checksum(g),
                           stats);
}

int halo_partition_run(const halo_graph *g, const halo_partition_opts *opts, const char *pdir,
                       halo_partition_stats *stats)
{
    int P, M, G;
    HALO_CHECK(halo_partition_resolve(g, opts, &P, &M, &G));
    /* Refuse a foreign output directory before spending time on the assignment. */
    uint32_t checksum = halo_partition_graph_checksum(g);
    HALO_CHECK(check_outdir(pdir, checksum, opts->force));
    int32_t *a = HALO_ALLOC(int32_t, g->nodes > 0 ? g->nodes : 1);
    double t0 = halo_now();
    int rc = halo_partition_assign(g, opts, a);
    if (rc == 0) {
        double assign_s = halo_now() - t0;
        halo_debug("partition: %s assignment of %lld nodes into %d parts in %.2f s",
                   halo_partition_method_name(opts->choice.method), (long long)g->nodes, P,
                   assign_s);
        rc = partition_write(g, a, opts, pdir, assign_s, checksum, stats);
    }
    halo_free(a);
    return rc;
}
