/* halo calibrate's fetch probe: the runtime's own fetch (halo_store_pull_plan, then
 * halo_store_pull_exec) on a random graph split between the probe's ranks, timed on the thread's
 * CPU clock with the polling for messages left out, as halo train's fetch_cpu_s is. What the
 * cost model does not price by its gathers and messages is the fetch's work per input node
 * (cpu.fetch_node_ns, docs/sim-model.md). */
#include "cli/calibrate_fetch.h"

#include "comm/comm.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "part/partition.h"
#include "sample/sample.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A random graph of n nodes (halo_gen_random: in-degrees uniform in 5..25 from uniform
 * sources) given dim features, 4 label classes and a third of the nodes as training seeds. */
static halo_graph *probe_graph(int64_t n, int dim)
{
    halo_graph *g = halo_gen_random(n, 5, 25, 0xfe7c, 4);
    g->feat_dim = dim;
    *halo_graph_slot(g, HALO_GA_FEAT) = halo_calloc(1, halo_graph_array_bytes(g, HALO_GA_FEAT));
    for (int64_t v = 0; v < n; v++) {
        g->label[v] = (int32_t)(v % 4);
        g->split[v] = v % 3 == 0 ? HALO_SPLIT_TRAIN : HALO_SPLIT_TEST;
        for (int c = 0; c < dim; c++) {
            g->feat[v * dim + c] = (float)((v + c) % 17);
        }
    }
    return g;
}

/* Rank 0 writes the probe's partition of a graph of n nodes (a random assignment: every part
 * holds rows the others ask for) into a new directory under dir; every rank gets its path in
 * pdir. */
static int probe_partition(halo_comm *c, const char *dir, int64_t n, int dim, char *pdir,
                           size_t size)
{
    int rc = 0;
    memset(pdir, 0, size);
    if (halo_comm_rank(c) == 0) {
        halo_graph *g = probe_graph(n, dim);
        int P = halo_comm_size(c);
        int32_t *assign = HALO_ALLOC(int32_t, g->nodes);
        halo_rng r;
        halo_rng_init(&r, 7, HALO_RNG_TEST, 0xfe7d, 0, 0);
        for (int64_t v = 0; v < g->nodes; v++) {
            assign[v] = (int32_t)halo_rng_below(&r, (uint64_t)P);
        }
        halo_partition_opts opts;
        halo_partition_opts_init(&opts);
        opts.choice.method = HALO_PARTITION_CUSTOM;
        opts.choice.assignment = assign;
        opts.choice.assignment_len = g->nodes;
        opts.parts = P;
        snprintf(pdir, size, "%s/fetch-probe-%d-%lld", dir, dim, (long long)n);
        rc = halo_partition_write(g, assign, &opts, pdir, NULL);
        halo_free(assign);
        halo_graph_free(g);
    }
    int64_t all = rc;
    HALO_CHECK(halo_comm_allreduce_min_i64(c, &all, 1));
    if (all < 0) {
        return rc < 0 ? rc : halo_errorf(HALO_EIO, "calibrate: rank 0 could not write the fetch "
                                         "probe's partition");
    }
    return halo_comm_bcast(c, pdir, (int64_t)size, 0);
}

/* Sums over the timed batches of one rank. */
typedef struct fetch_sums {
    double cpu;     /* CPU seconds of the fetches, polling excluded */
    double inputs;  /* input nodes */
    double rows;    /* rows gathered: own, received from peers and served to them */
    double msgs;    /* messages sent and received */
} fetch_sums;

/* Bytes written before each batch, untimed: more than a last-level cache. In training, the
 * previous step's fetch and compute (and the other ranks) have used the caches when a batch
 * is sampled and fetched; batches back to back would find the graph's rows, the sampler's
 * tables and the feature rows warm. */
#define PROBE_EVICT_BYTES ((size_t)64 << 20)

/* Samples batch b's 256 seeds at fanouts fan into mb, after writing evict (PROBE_EVICT_BYTES;
 * NULL: nothing, the caches keep what the last batch left). Collective. */
static int sample_batch(halo_store *st, halo_sampler *smp, const int fan[2], int b, char *evict,
                        halo_minibatch *mb)
{
    const halo_part *pt = halo_store_part(st);
    if (evict != NULL) {
        memset(evict, b & 0xff, PROBE_EVICT_BYTES);
    }
    int32_t seeds[256];
    int32_t n = pt->num_train < 256 ? (int32_t)pt->num_train : 256;
    for (int32_t i = 0; i < n; i++) {
        seeds[i] = pt->train[((int64_t)b * 7919 + (int64_t)i * 31) % pt->num_train];
    }
    halo_sample_key k = {1, 0, b};
    return halo_store_sample(st, smp, fan, 2, &k, seeds, n, mb);
}

/* Samples and fetches `batches` mini-batches of 256 seeds with fanouts 10,5 (the first two
 * untimed), adding the timed fetches to s. Collective. */
static int fetch_batches(halo_comm *c, halo_store *st, int batches, int dim, fetch_sums *s,
                         char *evict)
{
    halo_sampler *smp = halo_sampler_new();
    halo_store_pull pull;
    memset(&pull, 0, sizeof pull);
    float *rows = NULL;
    int64_t cap = 0;
    const int fan[2] = {10, 5};
    halo_minibatch mb; /* its blocks reused from batch to batch (halo_sample_free at the end) */
    memset(&mb, 0, sizeof mb);
    int rc = 0;
    for (int b = 0; b < batches && rc == 0; b++) {
        HALO_TRY(sample_batch(st, smp, fan, b, evict, &mb));
        if (mb.num_input > cap) {
            halo_free(rows);
            cap = mb.num_input;
            rows = HALO_ALLOC(float, cap * dim);
        }
        halo_store_stats st0 = *halo_store_stats_get(st);
        halo_comm_stats c0 = halo_comm_get_stats(c);
        double t0 = halo_thread_cpu() - halo_thread_wait_cpu();
        HALO_TRY(halo_store_pull_plan(st, mb.input, mb.num_input, &pull));
        HALO_TRY(halo_store_pull_exec(st, &pull, rows));
        double t1 = halo_thread_cpu() - halo_thread_wait_cpu();
        if (b >= 2) {
            halo_comm_stats c1 = halo_comm_get_stats(c);
            s->cpu += t1 - t0;
            s->inputs += (double)mb.num_input;
            s->rows += (double)mb.num_input +
                       (double)(halo_store_stats_get(st)->served_rows - st0.served_rows);
            s->msgs += 2.0 * (double)(c1.messages - c0.messages);
        }
    }
fail:
    halo_sample_free(&mb);
    halo_free(rows);
    halo_store_pull_free(&pull);
    halo_sampler_free(smp);
    return rc;
}

/* One run of the probe: a graph of n nodes with rows of dim floats, the caches emptied before
 * each batch or not (warm); its sums over all ranks appended to text as NAME_* lines, with the
 * feature bytes per rank (NAME_table_bytes). */
static int probe_run(halo_comm *c, const char *dir, bool quick, int64_t n, int dim, bool warm,
                     const char *name, char *text, size_t size, int *len)
{
    char pdir[1024];
    HALO_CHECK(probe_partition(c, dir, n, dim, pdir, sizeof pdir));
    halo_store *st = NULL;
    HALO_CHECK(halo_store_open(c, pdir, &st));
    fetch_sums s = {0, 0, 0, 0};
    char *evict = warm ? NULL : HALO_ALLOC(char, PROBE_EVICT_BYTES);
    int rc = fetch_batches(c, st, quick ? 12 : 42, dim, &s, evict);
    halo_free(evict);
    halo_store_close(st);
    HALO_CHECK(rc);
    double sum[4] = {s.cpu, s.inputs, s.rows, s.msgs};
    HALO_CHECK(halo_comm_allreduce_sum_f64(c, sum, 4));
    HALO_CHECK(halo_comm_barrier(c));
    if (halo_comm_rank(c) == 0) {
        halo_rmtree(pdir);
    }
    double table = (double)n * dim * sizeof(float) / halo_comm_size(c);
    *len += snprintf(text + *len, size - (size_t)*len,
                     "%s_cpu_s %.9g\n%s_inputs %.9g\n%s_rows %.9g\n%s_msgs %.9g\n"
                     "%s_table_bytes %.9g\n",
                     name, sum[0], name, sum[1], name, sum[2], name, sum[3], name, table);
    return 0;
}

const char *const halo_calib_fetch_runs[HALO_CALIB_FETCH_RUNS] = {"fetch16", "fetch128",
                                                                 "fetch128warm",
                                                                 "fetch128kept"};

int halo_calib_fetch_probe(halo_comm *c, const char *dir, bool quick, char *text, size_t size,
                           int *len)
{
    int64_t n = quick ? 40000 : 160000;
    HALO_CHECK(probe_run(c, dir, quick, n, HALO_CALIB_FETCH_NARROW, false,
                         halo_calib_fetch_runs[0], text, size, len));
    HALO_CHECK(probe_run(c, dir, quick, n, HALO_CALIB_FETCH_WIDE, false,
                         halo_calib_fetch_runs[1], text, size, len));
    /* a table of HALO_SIM_CALIB_WARM_BYTES per rank that stays in the caches */
    int64_t warm = HALO_SIM_CALIB_WARM_BYTES * halo_comm_size(c) /
                   (HALO_CALIB_FETCH_WIDE * (int64_t)sizeof(float));
    HALO_CHECK(probe_run(c, dir, quick, warm, HALO_CALIB_FETCH_WIDE, true,
                         halo_calib_fetch_runs[2], text, size, len));
    /* the large table again, back to back: kept in the caches or not, as this machine's
       caches hold it */
    return probe_run(c, dir, quick, n, HALO_CALIB_FETCH_WIDE, true, halo_calib_fetch_runs[3],
                     text, size, len);
}
