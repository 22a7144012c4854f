/* halo calibrate's MPI-free measurements of this machine (sampler, copies, lookups, hooks, GEMM,
 * aggregation, optimiser), each on one core, for the cluster profile of `halo calibrate`. */
#include "sim/calibrate.h"
#include "sim/calibrate_int.h"

#include "cache/cache.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "part/part.h"
#include "policy/policy.h"
#include "graph/gen.h"
#include "sample/sample.h"
#include "store/store.h"

#include <pthread.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- sampler ---- */

/* Rows a training step gathers between two samplings of a rank (a mini-batch's input
 * features, at random from the part's table): what evicts the sampler's working set in
 * training, used instead of a write of `bytes` by the measurements on the user's partition. */
typedef struct evict_rows {
    const float *feat; /* the part's own feature table (rows x dim) */
    int64_t rows;
    int64_t dim;
    float *out;     /* [CALIB_GATHER_ROWS x dim] */
    uint64_t state; /* the rows drawn, advanced per repetition */
} evict_rows;

static int cold_run(calib_fn fn, void *arg, double seconds, size_t bytes, bool median,
                    double *t);
static int cold_run_ev(calib_fn fn, void *arg, double seconds, size_t bytes, evict_rows *ev,
                       bool median, double *t);

/* Frontier nodes of a sampling measurement: a mini-batch layer's order of size. */
#define CALIB_FRONTIER 4096

/* Bytes written before each repetition of a cold measurement: more than a last-level cache. */
#define CALIB_EVICT_BYTES ((size_t)128 << 20)

/* Bytes a training step's fetch and compute write between two samplings of a rank, for the
 * sampler's measurements on the random graphs (each repetition's median counts: a training
 * step's sampling is one run between two steps, not the luckiest of fifty). Those graphs are
 * larger than a last-level cache, so their rows come from memory anyway; a 128 MiB eviction
 * made the sampler there 1.6x slower than it runs in training, none 1.5x faster. On the user's
 * partition (--graph), which can fit the cache, CALIB_EVICT_BYTES is written instead. */
#define CALIB_STEP_BYTES ((size_t)8 << 20)

/* The sampler's measurements on the user's partition (--graph) are made as training runs it
 * (docs/sim-model.md, "Thirteenth pass"): frontiers of CALIB_GRAPH_FRONTIER nodes (a
 * mini-batch layer: training's calls sample 40-2500 nodes), a fresh one for each repetition
 * out of CALIB_GRAPH_CHUNKS, after CALIB_GATHER_ROWS of the part's own feature rows gathered
 * at random. On a products-like part (4.4 MiB of CSR) the same frontier of 4096 nodes after
 * 128 MiB written cost 140-147 ns a node at fanout 10, the runtime's own sampler in training
 * 221-258 at every call size from 38 to 2428 nodes: the written buffer leaves the part in the
 * last-level cache and a frontier used again finds its rows there, a gather of random rows
 * takes the TLB and the caches as training's fetch does. */
#define CALIB_GRAPH_FRONTIER 512
#define CALIB_GRAPH_CHUNKS 50
#define CALIB_GATHER_ROWS 8192

/* One sampling pass over a frontier: offsets and draws (the per-node and per-edge work). */
typedef struct sample_job {
    const int64_t *indptr;  /* CSR of the graph (or of a part's owned nodes) */
    const int32_t *indices; /* in-neighbours (global ids) */
    const int64_t *keys;    /* [n] the frontier's global ids (RNG keys) */
    halo_sampler *s;     /* scratch */
    const int64_t *rows; /* [n] frontier rows of the CSR */
    const int32_t *dst;  /* [n] the same as int32 (distinct), for block_build */
    int64_t n;           /* frontier nodes */
    int fanout;          /* fanout */
    int64_t *off;        /* [n+1] */
    int32_t *nbrs;       /* [n * 10] draws */
    int64_t edges;       /* edges drawn by the last pass */
    int64_t batch;       /* batch number, advanced per pass (fresh draws) */
    int64_t src;         /* source nodes of the last block */
    size_t evict;        /* bytes written before each repetition (0: CALIB_STEP_BYTES) */
    evict_rows *ev;      /* rows gathered before each repetition instead (NULL: evict) */
    const int64_t *pool_rows, *pool_keys; /* [chunks x n]: a fresh frontier per pass */
    const int32_t *pool_dst;
    int64_t chunks; /* frontiers in the pool (0: rows, keys, dst are the frontier) */
} sample_job;

static int run_sample(void *arg)
{
    sample_job *j = arg;
    if (j->chunks > 0) { /* the next frontier of the pool; block_rates builds the last one */
        int64_t c = j->batch % j->chunks;
        j->rows = j->pool_rows + c * j->n;
        j->keys = j->pool_keys + c * j->n;
        j->dst = j->pool_dst + c * j->n;
    }
    halo_sample_key k = {1, 0, j->batch++};
    j->edges = halo_sample_rows_offsets(j->indptr, j->rows, j->n, j->fanout, j->off);
    halo_sample_rows(j->s, j->indptr, j->indices, j->rows, j->keys, j->n, j->fanout, &k, 0,
                     j->off, j->nbrs);
    return 0;
}

static int run_block(void *arg)
{
    sample_job *j = arg;
    halo_block b;
    memset(&b, 0, sizeof b);
    HALO_CHECK(halo_sample_block_build(j->s, j->dst, (int32_t)j->n, j->off, j->nbrs, &b));
    j->src = b.num_src;
    halo_sample_block_free(&b);
    return 0;
}

/* v, or share of the mean t / n where v is below it: a cost solved from two timings that noise
 * drove to or below 0 keeps a small positive share of the whole. */
static double floor_share(double v, double share, double t, double n)
{
    double f = share * t / (n > 0 ? n : 1);
    return v > f ? v : f;
}

/* Block building (halo_sample_block_build): t = (dst + edges) * x + src * s, a hash operation
 * per destination node and per edge (an insert or a probe) and the source list's entry per
 * distinct source. Measured on j's frontier with its fanout-10 draws' count of edges, twice,
 * with ids of our own: every edge a new source, then the edges folded onto 4n ids (about a
 * third new, as on a small partition); each from caches that hold none of the hash
 * (CALIB_EVICT_BYTES written before each repetition). Own ids keep the two apart on any graph
 * (a small partition's own draws repeat as much as the folded ones: solved on those, one read
 * 447 ns per source). Why so: training's block building ran at 9.8 ns per edge on a 2-rank
 * arxiv-like run (perf), where src was half the edges; the model's earlier price per source
 * node, measured with 8 MiB written, was 3.6 ns, and a frontier of 4096 at fanout 10 cost the
 * same with 15K distinct sources as with 44K. A solution below 0 (noise) leaves s a small
 * share. */
static int block_rates(const halo_sim_calib_opts *o, sample_job *j, double *node_s,
                       double *edge_s)
{
    int64_t n = j->n, ne = j->off[n];
    double ta = 0, tb = 0;
    int32_t *drawn = j->nbrs, *ids = HALO_ALLOC(int32_t, ne > 0 ? ne : 1);
    for (int64_t e = 0; e < ne; e++) { /* above every node id: none is a destination */
        ids[e] = (int32_t)(((uint32_t)1 << 30) + (uint32_t)e);
    }
    j->nbrs = ids;
    int rc = cold_run_ev(run_block, j, o->seconds / 6, CALIB_EVICT_BYTES, j->ev, true, &ta);
    int64_t src_a = j->src;
    for (int64_t e = 0; e < ne && rc == 0; e++) {
        ids[e] = (int32_t)(((uint32_t)e * 2654435761u) % (uint32_t)(4 * n));
    }
    rc = rc < 0 ? rc
                : cold_run_ev(run_block, j, o->seconds / 6, CALIB_EVICT_BYTES, j->ev, true, &tb);
    int64_t src_b = j->src;
    j->nbrs = drawn;
    halo_free(ids);
    HALO_CHECK(rc);
    double ops = (double)(n + ne);
    double s = src_a > src_b ? (ta - tb) / (double)(src_a - src_b) : 0;
    s = floor_share(s, 0.05, ta, (double)src_a);
    double x = floor_share((ta - s * (double)src_a) / ops, 0.05, ta, ops);
    *node_s = halo_sim_calib_sig4(s);
    *edge_s = halo_sim_calib_sig4(x);
    return 0;
}

/* Sampling rates on a CSR and a frontier of n distinct rows (keys = global ids, dst the same
 * as int32): halo_sample_rows at fanouts 1 and 10, solved for the cost per frontier node and
 * per drawn edge, and halo_sample_block_build of the fanout-10 draws (block_rates; block_node_s
 * NULL: not measured). */
static int sample_rates(const halo_sim_calib_opts *o, sample_job *j, double *edge_s,
                        double *node_s, double *block_node_s, double *block_edge_s)
{
    int64_t n = j->n;
    j->off = HALO_ALLOC(int64_t, n + 1);
    j->nbrs = HALO_ALLOC(int32_t, n * 10);
    double t1 = 0, t10 = 0;
    int64_t e1 = 0, e10 = 0;
    int rc = 0;
    j->fanout = 1;
    size_t ev = j->evict > 0 ? j->evict : CALIB_STEP_BYTES;
    HALO_TRY(cold_run_ev(run_sample, j, o->seconds / 3, ev, j->ev, true, &t1));
    e1 = j->edges;
    j->fanout = 10;
    HALO_TRY(cold_run_ev(run_sample, j, o->seconds / 3, ev, j->ev, true, &t10));
    e10 = j->edges;
    if (block_node_s != NULL) {
        HALO_TRY(block_rates(o, j, block_node_s, block_edge_s));
    }
    /* t = n * node + edges * edge at two fanouts; clamp noise to a small positive share */
    double e = e10 > e1 ? (t10 - t1) / (double)(e10 - e1) : t10 / (double)(e10 > 0 ? e10 : 1);
    e = floor_share(e, 0.05, t10, (double)e10);
    double nd = floor_share((t1 - (double)e1 * e) / (double)n, 0.05, t1, (double)n);
    *edge_s = halo_sim_calib_sig4(e);
    *node_s = halo_sim_calib_sig4(nd);
fail:
    halo_free(j->nbrs);
    halo_free(j->off);
    j->nbrs = NULL;
    j->off = NULL;
    return rc;
}

/* A frontier of n distinct scattered rows of a graph of `nodes` (a power of two) into j. */
static void scattered_job(sample_job *j, const halo_graph *g, int64_t n)
{
    int64_t *rows = HALO_ALLOC(int64_t, n);
    int32_t *dst = HALO_ALLOC(int32_t, n);
    for (int64_t i = 0; i < n; i++) {
        rows[i] = halo_sim_calib_scatter(i, g->nodes);
        dst[i] = (int32_t)rows[i];
    }
    *j = (sample_job){.indptr = g->indptr, .indices = g->indices, .s = halo_sampler_new(),
                      .rows = rows, .keys = rows, .dst = dst, .n = n};
}

static void scattered_free(sample_job *j)
{
    halo_free((void *)j->rows);
    halo_free((void *)j->dst);
    halo_sampler_free(j->s);
}

/* Seconds per edge beyond the frontier nodes' node_s of a cold sampling at fanout 10 of the
 * random graph of `nodes` nodes with in-degrees lo..hi (a positive floor against noise). */
static int class_edge_s(const halo_sim_calib_opts *o, int64_t nodes, int lo, int hi,
                        double node_s, double *edge_s)
{
    halo_graph *g = halo_gen_random(nodes, lo, hi, 0xca2, 2);
    sample_job j;
    scattered_job(&j, g, CALIB_FRONTIER < nodes ? CALIB_FRONTIER : nodes);
    j.off = HALO_ALLOC(int64_t, j.n + 1);
    j.nbrs = HALO_ALLOC(int32_t, j.n * 10);
    j.fanout = 10;
    double t = 0;
    int rc = cold_run(run_sample, &j, o->seconds / 3, CALIB_STEP_BYTES, true, &t);
    if (rc == 0) {
        double e = (double)(j.edges > 0 ? j.edges : 1);
        double per = (t - (double)j.n * node_s) / e;
        *edge_s = halo_sim_calib_sig4(floor_share(per, 0.1, t, e));
    }
    halo_free(j.nbrs);
    halo_free(j.off);
    scattered_free(&j);
    halo_graph_free(g);
    return rc;
}

/* Nodes of the random graph the generic sampler is measured on (in-degrees 20..44). */
static int64_t generic_nodes(const halo_sim_calib_opts *o)
{
    return o->quick ? (int64_t)1 << 18 : (int64_t)1 << 20;
}

/* sample_rates on a scattered frontier of that random graph (block_node_s NULL: no block). */
static int generic_rates(const halo_sim_calib_opts *o, double *edge_s, double *node_s,
                         double *block_node_s, double *block_edge_s)
{
    halo_graph *g = halo_gen_random(generic_nodes(o), 20, 44, 0xca1, 2);
    sample_job j;
    scattered_job(&j, g, CALIB_FRONTIER);
    int rc = sample_rates(o, &j, edge_s, node_s, block_node_s, block_edge_s);
    scattered_free(&j);
    halo_graph_free(g);
    return rc;
}

int halo_sim_calib_sample(const halo_sim_calib_opts *o, halo_sim_profile *p)
{
    HALO_CHECK(generic_rates(o, &p->sample_edge_s, &p->sample_node_s, &p->block_node_s,
                             &p->block_edge_s));
    HALO_CHECK(class_edge_s(o, generic_nodes(o), 2, 8, p->sample_node_s, &p->sample_copy_s));
    return class_edge_s(o, o->quick ? 4096 : 16384, 500, 1500, p->sample_node_s,
                        &p->sample_long_s);
}

void halo_sim_calib_speed(double seconds, double out[2])
{
    halo_sim_calib_opts co = {.seconds = seconds, .quick = false, .progress = false};
    /* halo_sim_calib_sample's first measurement (no block, no classes of lists) and
       halo_sim_calib_compute's GEMM (no aggregation): the two figures compared */
    double node_s = 0;
    if (generic_rates(&co, &out[0], &node_s, NULL, NULL) < 0) {
        out[0] = 0;
    }
    if (halo_sim_calib_compute(&co, &out[1], NULL, NULL) < 0) {
        out[1] = 0;
    }
}

/* ---- threads sharing the cores ---- */

/* One thread of the sharing measurement: `passes` sampling passes on its own frontier. */
typedef struct share_arg {
    sample_job j; /* its job (own sampler and buffers) */
    int passes;   /* passes */
    int rc;       /* result */
} share_arg;

static void *share_thread(void *arg)
{
    share_arg *a = arg;
    for (int i = 0; i < a->passes && a->rc == 0; i++) {
        a->rc = run_sample(&a->j);
    }
    return NULL;
}

/* Wall seconds of k threads running their passes at once (the best of 3 tries). */
static double share_time(share_arg *a, int k)
{
    double best = 1e30;
    for (int t = 0; t < 3; t++) {
        pthread_t th[16];
        double t0 = halo_now();
        int started = 0;
        for (int i = 0; i < k; i++) {
            started += pthread_create(&th[i], NULL, share_thread, &a[i]) == 0;
        }
        for (int i = 0; i < started; i++) {
            pthread_join(th[i], NULL);
        }
        double d = halo_now() - t0;
        best = started == k && d < best ? d : best;
    }
    return best;
}

int halo_sim_calib_share(const halo_sim_calib_opts *o, int cores, double *eff, int *threads)
{
    int k = 2 * cores < 16 ? 2 * cores : 16;
    int64_t nodes = (int64_t)1 << 16, n = 4096;
    halo_graph *g = halo_sim_calib_random_graph(nodes);
    share_arg a[16];
    memset(a, 0, sizeof a);
    int64_t *rows = HALO_ALLOC(int64_t, n * k);
    int32_t *dst = HALO_ALLOC(int32_t, n * k);
    for (int i = 0; i < k; i++) {
        for (int64_t r = 0; r < n; r++) {
            rows[i * n + r] = halo_sim_calib_scatter(r + i * n, nodes);
            dst[i * n + r] = (int32_t)rows[i * n + r];
        }
        a[i].j = (sample_job){.indptr = g->indptr, .indices = g->indices, .s = halo_sampler_new(),
                              .rows = rows + i * n, .keys = rows + i * n, .dst = dst + i * n,
                              .n = n, .fanout = 10};
        a[i].j.off = HALO_ALLOC(int64_t, n + 1);
        a[i].j.nbrs = HALO_ALLOC(int32_t, n * 10);
        a[i].passes = o->quick ? 20 : 60;
    }
    double t1 = share_time(a, 1), tk = share_time(a, k);
    int rc = 0;
    for (int i = 0; i < k; i++) {
        rc = rc < 0 ? rc : a[i].rc;
        halo_sampler_free(a[i].j.s);
        halo_free(a[i].j.off);
        halo_free(a[i].j.nbrs);
    }
    /* fair sharing would take k / cores times one thread's time */
    double e = t1 * k / (cores < k ? cores : k) / tk;
    *eff = halo_sim_calib_sig4(e > 1 ? 1 : e < 0.1 ? 0.1 : e);
    *threads = k;
    halo_free(dst);
    halo_free(rows);
    halo_graph_free(g);
    return rc;
}

/* ---- time slices ---- */

/* Most runs a slice thread records. */
#define SLICE_RUNS 4096

/* A thread that reads the clock for `seconds` and records how long it ran between two
 * descheduled gaps (a gap: two readings more than 50 us apart). */
typedef struct slice_arg {
    double seconds;          /* how long it spins */
    double run[SLICE_RUNS];  /* its runs, in seconds */
    int n;                   /* runs recorded */
} slice_arg;

static void *slice_thread(void *p)
{
    slice_arg *a = p;
    double t0 = halo_now(), last = t0, start = t0;
    while (last - t0 < a->seconds) {
        double t = halo_now();
        if (t - last > 50e-6) {
            if (a->n < SLICE_RUNS && start > t0) { /* the first run began before the clock */
                a->run[a->n++] = last - start;
            }
            start = t;
        }
        last = t;
    }
    return NULL;
}

double halo_sim_calib_slice(const halo_sim_calib_opts *o, int cores)
{
    int k = 2 * cores < 16 ? 2 * cores : 16;
    slice_arg *a = HALO_NEW(slice_arg, (size_t)k);
    pthread_t th[16];
    int started = 0;
    for (int i = 0; i < k; i++) {
        a[i].seconds = o->quick ? 0.3 : 1.0;
        started += pthread_create(&th[i], NULL, slice_thread, &a[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
    }
    int n = 0;
    for (int i = 0; i < started; i++) {
        n += a[i].n;
    }
    double *all = HALO_ALLOC(double, n > 0 ? n : 1), s = 0;
    n = 0;
    for (int i = 0; i < started; i++) {
        memcpy(all + n, a[i].run, (size_t)a[i].n * sizeof(double));
        n += a[i].n;
    }
    if (n > 0) {
        s = halo_median_f64(all, n);
    }
    halo_free(all);
    halo_free(a);
    return halo_sim_calib_sig4(s);
}

/* ---- gathers and copies ---- */

/* A gather or a copy. */
typedef struct copy_job {
    const float *table; /* [rows * dim] */
    const int32_t *ids; /* [n] random rows */
    int64_t n;          /* rows gathered */
    int dim;            /* floats per row */
    float *out;         /* [n * dim] */
    size_t bytes;       /* memcpy size */
} copy_job;

static int run_gather(void *arg)
{
    copy_job *j = arg;
    halo_store_gather(j->table, 0, j->dim, j->ids, j->n, j->out);
    return 0;
}

static int run_memcpy(void *arg)
{
    copy_job *j = arg;
    memcpy(j->out, j->table, j->bytes);
    return 0;
}

/* Gathers n random rows of dim floats from a table of `bytes` bytes: the best time. */
static int gather_time(const halo_sim_calib_opts *o, copy_job *j, int64_t bytes, int dim,
                       double *t)
{
    int64_t rows = bytes / ((int64_t)dim * 4);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0xca2, 0, (uint64_t)dim);
    int32_t *ids = (int32_t *)j->ids;
    for (int64_t i = 0; i < j->n; i++) {
        ids[i] = (int32_t)halo_rng_below(&r, (uint64_t)rows);
    }
    j->dim = dim;
    return halo_sim_calib_best(run_gather, j, o->seconds / 3, t);
}

int halo_sim_calib_copy(const halo_sim_calib_opts *o, double *gather_bw, double *gather_row_s,
                        double *memcpy_bw)
{
    const int64_t bytes = (int64_t)128 << 20; /* a table far larger than the caches */
    int64_t n = o->quick ? 65536 : 131072;
    float *table = HALO_ALLOC(float, bytes / 4);
    for (int64_t i = 0; i < bytes / 4; i++) {
        table[i] = (float)(i & 1023);
    }
    int32_t *ids = HALO_ALLOC(int32_t, n);
    float *out = HALO_ALLOC(float, n * 128);
    memset(out, 0, (size_t)n * 512);
    copy_job j = {table, ids, n, 128, out, (size_t)n * 512};
    double t16 = 0, t128 = 0, tm = 0;
    int rc = 0;
    HALO_TRY(gather_time(o, &j, bytes, 16, &t16));
    HALO_TRY(gather_time(o, &j, bytes, 128, &t128));
    HALO_TRY(halo_sim_calib_best(run_memcpy, &j, o->seconds / 3, &tm));
    double per = 0, bw = 0;
    halo_sim_calib_split_rate(t16, t128, (double)n, 64, 512, &per, &bw);
    *gather_bw = halo_sim_calib_sig4(bw);
    *gather_row_s = halo_sim_calib_sig4(per);
    *memcpy_bw = halo_sim_calib_sig4((double)j.bytes / tm);
fail:
    halo_free(out);
    halo_free(ids);
    halo_free(table);
    return rc;
}

/* ---- cache lookups ---- */

/* One lookup of a batch of remote ids. */
typedef struct lookup_job {
    halo_cache *c;      /* cache without rows */
    const int32_t *ids; /* [n] distinct ids, half of them halo nodes */
    const int64_t *pos; /* [n] row positions (unused without rows) */
    uint8_t *served;    /* [n] */
    int64_t n;          /* ids */
    int64_t step;       /* batch counter */
} lookup_job;

static int run_lookup(void *arg)
{
    lookup_job *j = arg;
    halo_cache_batch b = {.epoch = 0, .batch = j->step, .step = j->step};
    j->step++;
    return halo_cache_lookup(j->c, &b, j->n, j->ids, j->pos, NULL, j->served);
}

/* Lookup time includes the (empty) decision of the mechanism, which a batch always runs. */
static int run_lookup_decide(void *arg)
{
    lookup_job *j = arg;
    HALO_CHECK(run_lookup(j));
    const int32_t *extra;
    int64_t n_extra;
    HALO_CHECK(halo_cache_decide(j->c, &extra, &n_extra));
    return halo_cache_admit(j->c, NULL, NULL);
}

int halo_sim_calib_lookup(const halo_sim_calib_opts *o, double *lookup_s)
{
    int64_t nh = o->quick ? (int64_t)1 << 18 : (int64_t)1 << 20;
    int64_t n = o->quick ? 65536 : 262144;
    int32_t *halo = HALO_ALLOC(int32_t, nh);
    for (int64_t i = 0; i < nh; i++) {
        halo[i] = (int32_t)(2 * i); /* even ids are halo nodes */
    }
    int32_t *ids = HALO_ALLOC(int32_t, n);
    int64_t *pos = HALO_ALLOC(int64_t, n);
    uint8_t *served = HALO_ALLOC(uint8_t, n);
    for (int64_t i = 0; i < n; i++) {
        ids[i] = (int32_t)(2 * halo_sim_calib_scatter(i, nh) + (i & 1));
        pos[i] = i;
    }
    halo_cache_opts co = {
        .rank = 0,
        .ranks = 2,
        .num_halo = nh,
        .halo_ids = halo,
        .row_bytes = 512,
    };
    halo_cache *c = NULL;
    double t = 0;
    int rc = halo_cache_open(&co, NULL, &c);
    if (rc == 0) {
        lookup_job j = {c, ids, pos, served, n, 0};
        rc = halo_sim_calib_best(run_lookup_decide, &j, o->seconds, &t);
    }
    if (rc == 0) {
        *lookup_s = halo_sim_calib_sig4(t / (double)n);
    }
    halo_cache_close(c);
    halo_free(served);
    halo_free(pos);
    halo_free(ids);
    halo_free(halo);
    return rc;
}

/* ---- policy hooks ---- */

/* A batch of hook calls. */
typedef struct hook_job {
    halo_policy *pol;     /* the policy */
    halo_policy_ctx *ctx; /* context */
    int calls;            /* calls per repetition */
    int64_t made;         /* calls made over every repetition */
} hook_job;

static int run_hooks(void *arg)
{
    hook_job *j = arg;
    int f[HALO_POLICY_MAX_LAYERS], layers;
    for (int i = 0; i < j->calls; i++) {
        j->ctx->batch = i;
        HALO_CHECK(halo_policy_fanout(j->pol, j->ctx, f, HALO_POLICY_MAX_LAYERS, &layers));
    }
    j->made += j->calls;
    return 0;
}

/* Opens a policy of the given source (written to a temporary file, removed at once). */
static int open_text_policy(const char *src, halo_policy **pol)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/halo-calib.XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        return halo_errorf(HALO_EIO, "calibrate: cannot create a temporary directory in %s",
                           tmp != NULL && tmp[0] ? tmp : "/tmp");
    }
    snprintf(path, sizeof path, "%s/probe.lua", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        rmdir(dir);
        return halo_errorf(HALO_EIO, "calibrate: cannot write %s", path);
    }
    fputs(src, f);
    fclose(f);
    halo_policy_opts po = {.path = path, .rank = -1};
    int rc = halo_policy_open(&po, pol);
    remove(path);
    rmdir(dir);
    return rc;
}

/* Seconds per call of pol's fanout hook (1000 calls, the best of the repetitions), and the
 * budget's charged work per call over every repetition. */
static int time_hook(const halo_sim_calib_opts *o, halo_policy *pol, double *secs, double *work)
{
    halo_policy_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ranks = 1;
    ctx.epochs = 1;
    hook_job j = {pol, &ctx, 1000, 0};
    double t = 0;
    int64_t before = halo_policy_work(pol);
    HALO_CHECK(halo_sim_calib_best(run_hooks, &j, o->seconds, &t));
    *secs = t / j.calls;
    *work = j.made > 0 ? (double)(halo_policy_work(pol) - before) / (double)j.made : 0;
    return 0;
}

int halo_sim_calib_hook(const halo_sim_calib_opts *o, double *hook_s, double *unit_s)
{
    /* a trivial hook: the fixed cost of a call */
    halo_policy *pol = NULL;
    HALO_CHECK(open_text_policy("-- a trivial policy: the cost of one hook call\n"
                                "return { fanout = function(ctx) return {10, 25} end }\n",
                                &pol));
    double t0 = 0, w0 = 0;
    int rc = time_hook(o, pol, &t0, &w0);
    halo_policy_close(pol);
    HALO_CHECK(rc);
    *hook_s = halo_sim_calib_sig4(t0);
    /* a hook that works through a table as the cache policies do (reads, writes, arithmetic,
       a call per key): the seconds per unit of work its budget is charged, beyond a call */
    HALO_CHECK(open_text_policy(
        "-- a working hook: the cost of a unit of charged work\n"
        "local t, seen = {}, 0\n"
        "local function bump(k) local v = (t[k] or 0) + 1; t[k] = v; return v end\n"
        "return { fanout = function(ctx)\n"
        "    for i = 1, 2000 do seen = seen + bump(i % 1543 + 1) end\n"
        "    return {10, 25}\n"
        "end }\n",
        &pol));
    double t1 = 0, w1 = 0;
    rc = time_hook(o, pol, &t1, &w1);
    halo_policy_close(pol);
    HALO_CHECK(rc);
    *unit_s = w1 > w0 && t1 > t0 ? halo_sim_calib_sig4((t1 - t0) / (w1 - w0)) : 0;
    return 0;
}

/* ---- emulated delays ---- */

void halo_sim_calib_sleep(const halo_sim_calib_opts *o, double *over_s, double *cpu_s)
{
    int n = o->quick ? 40 : 200;
    double *late = HALO_ALLOC(double, 2 * (size_t)n), *cpu = late + n;
    for (int i = 0; i < n; i++) {
        double c0 = halo_thread_cpu(), until = halo_now() + 1e-3;
        struct timespec ts = {(time_t)until, (long)((until - floor(until)) * 1e9)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        late[i] = halo_now() - until;
        cpu[i] = halo_thread_cpu() - c0;
    }
    double m = halo_median_f64(late, n), u = halo_median_f64(cpu, n);
    halo_free(late);
    *over_s = halo_sim_calib_sig4(m > 0 ? m : 0);
    *cpu_s = halo_sim_calib_sig4(u > 0 ? u : 0);
}

/* ---- the user's graph ---- */

/* A frontier of up to `want` distinct owned nodes of part pt: training nodes and the local
 * ends of random edges, alternately (the seeds of a batch, then the neighbours the next layer
 * samples: on a skewed graph those are the long adjacency lists). Returns its size. */
static int64_t part_frontier(const halo_part *pt, int64_t want, uint64_t key, int64_t *rows,
                             int64_t *keys, int32_t *dst)
{
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0xca5, key, 0);
    uint8_t *mark = HALO_NEW(uint8_t, pt->nodes > 0 ? pt->nodes : 1);
    int64_t n = 0;
    for (int64_t tries = 0; n < want && tries < 8 * want && pt->nodes > 0; tries++) {
        int64_t gid = -1;
        if ((tries & 1) == 0 && pt->num_train > 0) {
            gid = pt->train[halo_rng_below(&r, (uint64_t)pt->num_train)];
        } else if (pt->edges > 0) {
            gid = pt->indices[halo_rng_below(&r, (uint64_t)pt->edges)];
        }
        if (gid < pt->start || gid >= pt->end || mark[gid - pt->start]) {
            continue;
        }
        mark[gid - pt->start] = 1;
        rows[n] = gid - pt->start;
        keys[n] = gid;
        dst[n] = (int32_t)gid;
        n++;
    }
    halo_free(mark);
    return n;
}


/* As halo_sim_calib_best, but every repetition starts with the caches holding other data (a
 * 128 MiB buffer written first, untimed): a training step gathers its rows after the sampler,
 * the previous step's compute and the other ranks have used the caches, so a part's table
 * that fits in them is not found there as it would be by back-to-back repetitions. */
static int cold_run(calib_fn fn, void *arg, double seconds, size_t bytes, bool median,
                    double *t)
{
    return cold_run_ev(fn, arg, seconds, bytes, NULL, median, t);
}

/* CALIB_GATHER_ROWS random rows of the part's table into ev->out (untimed). */
static void evict_gather(evict_rows *ev)
{
    for (int64_t i = 0; i < CALIB_GATHER_ROWS; i++) {
        ev->state = ev->state * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t r = (int64_t)((ev->state >> 17) % (uint64_t)ev->rows);
        memcpy(ev->out + i * ev->dim, ev->feat + r * ev->dim, (size_t)ev->dim * sizeof(float));
    }
}

/* cold_run, with ev's rows gathered before each repetition instead of `bytes` written (ev
 * NULL: written). */
static int cold_run_ev(calib_fn fn, void *arg, double seconds, size_t bytes, evict_rows *ev,
                       bool median, double *t)
{
    char *evict = ev == NULL ? HALO_ALLOC(char, bytes) : NULL;
    double ts[50];
    int n = 0, rc = 0;
    double best = 1e30, start = halo_now();
    while (n < 50 && (n < 3 || halo_now() - start < seconds)) {
        if (ev != NULL) {
            evict_gather(ev);
        } else {
            memset(evict, n & 0xff, bytes);
        }
        double t0 = halo_now();
        HALO_TRY(fn(arg));
        double d = halo_now() - t0;
        best = d < best ? d : best;
        ts[n++] = d;
    }
    *t = median ? halo_median_f64(ts, n) : best;
    *t = *t > 0 ? *t : 1e-9;
fail:
    halo_free(evict);
    return rc;
}

static int cold_best(calib_fn fn, void *arg, double seconds, double *t)
{
    return cold_run(fn, arg, seconds, CALIB_EVICT_BYTES, false, t);
}


/* The gather of part pt's own feature rows (random owned rows, its row bytes and working set),
 * from cold caches (cold_best): gather_bw such that rows cost gather_row_s + row_bytes / gather_bw each, as measured. */
static int part_gather(const halo_sim_calib_opts *o, const halo_part *pt, halo_sim_profile *p)
{
    int64_t n = o->quick ? 32768 : 131072;
    int32_t *ids = HALO_ALLOC(int32_t, n);
    float *out = HALO_ALLOC(float, n * pt->feat_dim);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0xca6, 0, 0);
    for (int64_t i = 0; i < n; i++) {
        ids[i] = (int32_t)(pt->start + (int64_t)halo_rng_below(&r, (uint64_t)pt->nodes));
    }
    copy_job j = {pt->feat - pt->start * (int64_t)pt->feat_dim, ids, n, pt->feat_dim, out, 0};
    double t = 0;
    int rc = cold_best(run_gather, &j, o->seconds / 3, &t);
    if (rc == 0) {
        double rb = (double)pt->feat_dim * sizeof(float), per = t / (double)n;
        double bytes_s = per - p->gather_row_s > 0.2 * per ? per - p->gather_row_s : 0.2 * per;
        p->gather_bw = halo_sim_calib_sig4(rb / bytes_s);
    }
    halo_free(out);
    halo_free(ids);
    return rc;
}

int halo_sim_calib_graph(const halo_sim_calib_opts *o, const char *pdir, halo_sim_profile *p)
{
    halo_part *pt = NULL;
    HALO_CHECK(halo_part_load(pdir, 0, &pt));
    int64_t want = CALIB_GRAPH_FRONTIER, cap = want * CALIB_GRAPH_CHUNKS;
    int64_t *rows = HALO_ALLOC(int64_t, cap);
    int64_t *keys = HALO_ALLOC(int64_t, cap);
    int32_t *dst = HALO_ALLOC(int32_t, cap);
    int64_t n = part_frontier(pt, want, 0, rows, keys, dst);
    for (int64_t c = 1; c < CALIB_GRAPH_CHUNKS; c++) { /* the next frontiers, as long */
        int64_t got = part_frontier(pt, n, (uint64_t)c, rows + c * n, keys + c * n, dst + c * n);
        if (got < n) { /* a small part: the first frontier again */
            memcpy(rows + c * n, rows, (size_t)n * sizeof *rows);
            memcpy(keys + c * n, keys, (size_t)n * sizeof *keys);
            memcpy(dst + c * n, dst, (size_t)n * sizeof *dst);
        }
    }
    int rc = 0;
    if (n < 64) {
        rc = halo_errorf(HALO_EINPUT, "calibrate --graph %s: part 0 has %lld nodes to sample "
                         "from, too few to measure (64 at least)", pdir, (long long)n);
    }
    bool own = pt->feat != NULL && pt->ntypes == 0 && pt->feat_dim > 0 && pt->nodes > 0;
    evict_rows ev = {.feat = pt->feat, .rows = pt->nodes, .dim = pt->feat_dim, .state = 1};
    if (rc == 0) {
        /* as training runs it (CALIB_GRAPH_FRONTIER): a fresh frontier each repetition, after
           the part's own rows gathered (a part without a feature table of its own: 128 MiB
           written instead) */
        ev.out = own ? HALO_ALLOC(float, (int64_t)CALIB_GATHER_ROWS * pt->feat_dim) : NULL;
        sample_job j = {.indptr = pt->indptr, .indices = pt->indices, .s = halo_sampler_new(),
                        .rows = rows, .keys = keys, .dst = dst, .n = n,
                        .evict = CALIB_EVICT_BYTES, .ev = own ? &ev : NULL, .pool_rows = rows,
                        .pool_keys = keys, .pool_dst = dst, .chunks = CALIB_GRAPH_CHUNKS};
        /* the block's constants stay the base profile's: block_rates builds it from ids of
           its own, the same on any graph, and a block of this frontier's size fits the caches
           (2 ns a hash operation where training's blocks of thousands of nodes take 5-10) */
        rc = sample_rates(o, &j, &p->sample_edge_s, &p->sample_node_s, NULL, NULL);
        halo_free(ev.out);
        halo_sampler_free(j.s);
        /* the partition's own mix of lists taken whole, short and long: one rate for all */
        p->sample_copy_s = 0;
        p->sample_long_s = 0;
    }
    if (rc == 0 && own) {
        rc = part_gather(o, pt, p);
    } else if (rc == 0) {
        halo_notice("calibrate --graph %s: part 0 has no feature table of its own (typed or "
                    "topology-only): the gather keeps the generic constants", pdir);
    }
    char abs[PATH_MAX];
    const char *rec = realpath(pdir, abs) != NULL ? abs : pdir; /* halo sim compares it */
    if (rc == 0 && strlen(rec) >= sizeof p->graph) {
        rc = halo_errorf(HALO_EUSAGE, "calibrate --graph %s: the path is longer than %zu bytes, "
                         "too long to record in the profile", pdir, sizeof p->graph - 1);
    }
    if (rc == 0) {
        memcpy(p->graph, rec, strlen(rec) + 1);
    }
    halo_free(dst);
    halo_free(keys);
    halo_free(rows);
    halo_part_free(pt);
    return rc;
}

/* ---- everything ---- */

/* The 1-minute load average (-1 when unknown). */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double l = -1;
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1) {
            l = -1;
        }
        fclose(f);
    }
    return l;
}

int halo_sim_calibrate_host(const halo_sim_calib_opts *o, halo_sim_profile *p)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->cores = cores > 0 ? (int)cores : 1;
    double load = load_average();
    if (load > p->cores) { /* the fastest repetitions still share caches and memory */
        halo_notice("calibrate: load average %.1f on %d cores: other work shares this machine, "
                    "the figures will be slower and noisier than the machine alone", load,
                    p->cores);
    }
    p->machines = 1;
    p->trainers = 1;
    p->device = HALO_SIM_DEVICE_CPU;
    double t0 = halo_now();
    HALO_CHECK(halo_sim_calib_sample(o, p));
    if (o->progress) {
        halo_info("calibrate: sampler: %.4g ns per edge, %.4g ns per node, block %.4g ns per "
                  "source node and %.4g per hash operation (a destination or an edge); %.4g ns per "
                  "edge of a list taken whole, %.4g ns per edge drawn from a long one (%.1f s)",
                  p->sample_edge_s * 1e9, p->sample_node_s * 1e9, p->block_node_s * 1e9,
                  p->block_edge_s * 1e9, p->sample_copy_s * 1e9, p->sample_long_s * 1e9,
                  halo_now() - t0);
    }
    int sk = 0;
    HALO_CHECK(halo_sim_calib_share(o, p->cores, &p->share_eff, &sk));
    p->share_threads = sk;
    if (o->progress) {
        halo_info("calibrate: %d sampling threads on %d cores run at %.3g of a fair share each "
                  "(%.1f s)", sk, p->cores, p->share_eff, halo_now() - t0);
    }
    HALO_CHECK(halo_sim_calib_copy(o, &p->gather_bw, &p->gather_row_s, &p->memcpy_bw));
    if (o->progress) {
        halo_info("calibrate: gather of random rows %.4g ns per row + %.4g GB/s, memcpy %.4g "
                  "GB/s (%.1f s)",
                  p->gather_row_s * 1e9, p->gather_bw / 1e9, p->memcpy_bw / 1e9,
                  halo_now() - t0);
    }
    HALO_CHECK(halo_sim_calib_lookup(o, &p->lookup_node_s));
    if (o->progress) {
        halo_info("calibrate: cache lookup %.4g ns per id (%.1f s)", p->lookup_node_s * 1e9,
                  halo_now() - t0);
    }
    HALO_CHECK(halo_sim_calib_hook(o, &p->hook_s, &p->hook_unit_s));
    if (o->progress) {
        halo_info("calibrate: policy hook %.4g us per call, %.4g ns per unit of charged work "
                  "(%.1f s)", p->hook_s * 1e6, p->hook_unit_s * 1e9, halo_now() - t0);
    }
    p->slice_s = halo_sim_calib_slice(o, p->cores);
    if (o->progress) {
        halo_info("calibrate: with 2 x cores busy threads a thread runs %.4g ms at a time",
                  p->slice_s * 1e3);
    }
    halo_sim_calib_sleep(o, &p->netem_over_s, &p->netem_sleep_cpu_s);
    if (o->progress) {
        halo_info("calibrate: a 1 ms sleep to a deadline (an emulated delay) wakes %.3g us late "
                  "and costs its thread %.3g us of CPU",
                  p->netem_over_s * 1e6, p->netem_sleep_cpu_s * 1e6);
    }
    HALO_CHECK(halo_sim_calib_compute(o, &p->gemm_flops, &p->agg_bw, &p->agg_edge_s));
    if (o->progress) {
        halo_info("calibrate: sgemm 2000x256x256 %.4g GFLOP/s, mean aggregation %.4g ns per edge "
                  "+ %.4g GB/s (%.1f s)",
                  p->gemm_flops / 1e9, p->agg_edge_s * 1e9, p->agg_bw / 1e9, halo_now() - t0);
    }
    HALO_CHECK(halo_sim_calib_elem(o, &p->elem_s));
    HALO_CHECK(halo_sim_calib_gemm_table(o, p));
    if (o->progress) {
        halo_info("calibrate: elementwise %.4g ns per element; GEMM table %dx%dx%d shapes, %.4g "
                  "to %.4g GFLOP/s (%.1f s)",
                  p->elem_s * 1e9, p->gemm_nr, p->gemm_ni, p->gemm_no, p->gemm_rate[0][0][0] / 1e9,
                  p->gemm_rate[p->gemm_nr - 1][p->gemm_ni - 1][p->gemm_no - 1] / 1e9,
                  halo_now() - t0);
    }
    HALO_CHECK(halo_sim_calib_wake(o, p));
    HALO_CHECK(halo_sim_calib_model(o, &p->step_overhead_s, &p->adam_bw));
    if (o->progress) {
        halo_info("calibrate: training step overhead %.4g us, Adam %.4g GB/s (%.1f s)",
                  p->step_overhead_s * 1e6, p->adam_bw / 1e9, halo_now() - t0);
    }
    for (int i = 0; i < 2 && o->progress; i++) {
        int hidden = i == 0 ? 16 : 256;
        double meas = 0, model = 0;
        HALO_CHECK(halo_sim_calib_check_compute(o, p, hidden, &meas, &model));
        halo_info("calibrate: check: a GraphSAGE step (256 seeds, fanouts 10,25, 128 -> %d -> "
                  "16) took %.4g ms, the model says %.4g ms (%+.1f%%)", hidden, meas * 1e3,
                  model * 1e3, 100.0 * (model - meas) / meas);
    }
    return 0;
}
