/* Benchmark of runtime/cache on a products-like graph in 4 parts: hit rate and remote bytes of
 * every policy at 5, 10, 25, 50% of the halo set as a fraction of Belady's; the cost of a lookup
 * per input node against the pull it saves; a per-batch Lua policy against a training step. */
#include "cache/cache.h"
#include "cache/trace.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "model/model.h"
#include "model/ops.h"
#include "policy/policy.h"
#include "sample/sample.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sh(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "bench_cache: failed: %s\n", cmd);
    }
    return rc;
}

/* Replays one policy at one capacity; prints a table row; returns the hit rate. The replay runs
 * REPLAYS times (the results are identical, sampling being deterministic) and the policy cost is
 * the quietest of them: the machine is shared, and a cost per batch is a minimum to compare. */
enum { REPLAYS = 3 };
static double row(const halo_trace *t, const char *name, const char *extra, double cap,
                  double belady, double *policy_us)
{
    char path[4096], capset[64];
    snprintf(path, sizeof path, "%s/policies/%s.lua", HALO_ROOT, name);
    snprintf(capset, sizeof capset, "f=%.17g", cap);
    const char *sets[2] = {capset, extra};
    halo_policy_opts po = {.path = path, .params = sets, .nparams = extra ? 2 : 1};
    halo_trace_result r;
    double us = 1e300;
    for (int rep = 0; rep < REPLAYS; rep++) {
        if (halo_trace_replay(t, &po, 0, &r) != 0) {
            fprintf(stderr, "bench_cache: %s: %s\n", name, halo_errmsg());
            exit(1);
        }
        double u = r.batches > 0 ? 1e6 * r.policy_s / (double)r.batches : 0;
        us = u < us ? u : us;
    }
    double rate = halo_cache_hit_rate(&r.stats);
    char label[64];
    snprintf(label, sizeof label, "%s%s%s", name, extra ? " " : "", extra ? extra : "");
    printf("  %4.0f%%  %-24s %8.4f %9.3f %10.1f %8.3f %9lld %9.1f\n", cap * 100, label, rate,
           belady > 0 ? rate / belady : 1.0, (double)r.stats.bytes_pulled / 1e6,
           (double)r.stats.bytes_pulled / (double)r.bytes_nocache, (long long)r.stats.prefetched,
           us);
    if (policy_us != NULL) {
        *policy_us = us;
    }
    return rate;
}

/* Lookup cost: rank 0's batches through a pagraph cache of 25% holding real 400-byte rows, the
 * fastest of 5 passes; returns ns per remote input node and the hit rate. */
static void lookup_cost(const halo_trace *t, bool copy, double *ns, double *rate)
{
    const halo_trace_rank *tr = &t->rank[0];
    char path[4096];
    snprintf(path, sizeof path, "%s/policies/pagraph.lua", HALO_ROOT);
    const char *sets[] = {"f=0.25"};
    halo_policy_opts po = {.path = path, .params = sets, .nparams = 1};
    halo_policy *pol;
    halo_cache *c;
    if (halo_policy_open(&po, &pol) != 0) {
        fprintf(stderr, "bench_cache: %s\n", halo_errmsg());
        exit(1);
    }
    int dim = t->feat_dim;
    halo_cache_opts co = {.policy = pol,
                          .num_halo = tr->num_halo,
                          .halo_ids = tr->halo_ids,
                          .halo_deg = tr->halo_deg,
                          .feat_dim = dim};
    if (halo_cache_open(&co, NULL, &c) != 0) {
        fprintf(stderr, "bench_cache: %s\n", halo_errmsg());
        exit(1);
    }
    const int32_t *ids;
    int64_t n = halo_cache_init_ids(c, &ids);
    float *init = HALO_NEW(float, (n + 1) * dim);
    halo_cache_init_fill(c, init);
    halo_free(init);
    int64_t cap = 0, total = 0;
    int32_t *rid = NULL;
    int64_t *rpos = NULL;
    uint8_t *served = NULL;
    float *rows = NULL;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double spent = 0;
        total = 0;
        for (int64_t k = 0; k < tr->batches; k++) {
            halo_trace_batch b;
            halo_trace_get_batch(t, 0, k, &b);
            if (b.n > cap) {
                cap = b.n;
                halo_free(rid);
                halo_free(rpos);
                halo_free(served);
                halo_free(rows);
                rid = HALO_ALLOC(int32_t, cap);
                rpos = HALO_ALLOC(int64_t, cap);
                served = HALO_ALLOC(uint8_t, cap);
                rows = HALO_NEW(float, cap *dim);
            }
            int64_t m = 0;
            for (int64_t i = 0; i < b.n; i++) {
                if (b.flags[i] & HALO_TRACE_F_REMOTE) {
                    rpos[m] = i;
                    rid[m++] = b.ids[i];
                }
            }
            halo_cache_batch cb = {b.epoch, b.batch, k, b.n, b.ids};
            double t0 = halo_now();
            halo_cache_lookup(c, &cb, m, rid, rpos, copy ? rows : NULL, served);
            spent += halo_now() - t0;
            const int32_t *ex;
            int64_t ne;
            halo_cache_decide(c, &ex, &ne);
            halo_cache_admit(c, rows, NULL);
            total += m;
        }
        best = spent < best ? spent : best; /* the quietest pass (the machine is shared) */
    }
    *ns = 1e9 * best / (double)total;
    *rate = halo_cache_hit_rate(halo_cache_stats_get(c));
    halo_free(rid);
    halo_free(rpos);
    halo_free(served);
    halo_free(rows);
    halo_cache_close(c);
    halo_policy_close(pol);
}

/* A training step's compute on one rank: sample 500 seeds (10,25), forward, backward, Adam.
 * Median of 5, in ms. */
static double step_ms(const char *gdir)
{
    halo_graph *g;
    if (halo_graph_load(gdir, &g) != 0) {
        fprintf(stderr, "bench_cache: %s\n", halo_errmsg());
        exit(1);
    }
    halo_model_config mc;
    halo_model_config_default(&mc);
    mc.in_dim = g->feat_dim;
    mc.classes = g->classes;
    mc.device = HALO_DEVICE_CPU;
    mc.threads = 1;
    halo_model *m;
    if (halo_model_create(&mc, &m) != 0) {
        fprintf(stderr, "bench_cache: %s\n", halo_errmsg());
        exit(1);
    }
    int32_t *seeds = HALO_ALLOC(int32_t, 500);
    int32_t *labels = HALO_ALLOC(int32_t, 500);
    int64_t ns = 0;
    for (int64_t v = 0; v < g->nodes && ns < 500; v++) {
        if (g->split[v] == HALO_SPLIT_TRAIN) {
            labels[ns] = g->label[v];
            seeds[ns++] = (int32_t)v;
        }
    }
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int fan[2] = {10, 25};
    double times[5];
    for (int rep = 0; rep < 5; rep++) {
        double t0 = halo_now();
        halo_sample_key k = {1, 0, rep};
        halo_sample_graph(s, g, fan, 2, &k, seeds, (int32_t)ns, &mb);
        float *feat = halo_model_input_buffer(m, mb.num_input);
        for (int32_t i = 0; i < mb.num_input; i++) {
            halo_graph_feat_row(g, mb.input[i], feat + (int64_t)i * g->feat_dim);
        }
        halo_model_train_forward_backward(m, &mb, feat, labels, (uint64_t)rep, NULL);
        halo_model_adam_step(m, 1.0f);
        times[rep] = 1e3 * (halo_now() - t0);
    }
    for (int i = 1; i < 5; i++) {
        for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
            double x = times[j];
            times[j] = times[j - 1];
            times[j - 1] = x;
        }
    }
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_free(seeds);
    halo_free(labels);
    halo_model_free(m);
    halo_graph_free(g);
    return times[2];
}

int main(int argc, char **argv)
{
    (void)argc;
    halo_blas_pick_kernels(argv); /* the step is timed with the kernels halo runs with */
    const char *bin = getenv("HALO_BIN") ? getenv("HALO_BIN") : "bin/halo";
    char dir[] = "/tmp/halo-bench-cache-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        return 1;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "%s gen --preset products --scale 0.05 -o %s/g >/dev/null && "
             "%s partition %s/g --parts 4 -o %s/p >/dev/null && "
             "%s trace record %s/p -o %s/t.trc --fanouts 10,25 --batch 500 --epochs 3",
             bin, dir, bin, dir, dir, bin, dir, dir);
    if (sh(cmd) != 0) {
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/t.trc", dir);
    halo_trace *t;
    if (halo_trace_load(path, &t) != 0) {
        fprintf(stderr, "bench_cache: %s\n", halo_errmsg());
        return 1;
    }
    printf("hit rate (halo nodes, MassiveGNN's definition) and remote bytes per policy and capacity"
           "\n(products-like x0.05, 4 parts, fanouts 10,25, batch 500, 3 epochs; remote_MB counts "
           "batch pulls incl. prefetch; vs_none = remote_MB / no cache)\n");
    printf("  %5s  %-24s %8s %9s %10s %8s %9s %9s\n", "cap", "policy", "hit_rate", "of_belady",
           "remote_MB", "vs_none", "prefetch", "us/batch");
    printf(
        "  (us/batch: the policy's cache_batch hook per rank and batch, validation included; the "
        "quietest of %d replays)\n",
        REPLAYS);
    const double caps[] = {0.05, 0.1, 0.25, 0.5};
    const char *names[] = {"pagraph", "vip", "fifo", "lru", "lfu", "massivegnn"};
    /* worst cost per batch over the capacities of each per-batch policy (belady, names[2..5],
     * massivegnn delta=2) */
    const char *worst_name[] = {"belady", "fifo", "lru", "lfu", "massivegnn", "massivegnn delta=2"};
    double worst_us[6] = {0};
    for (int ci = 0; ci < 4; ci++) {
        double us;
        double b = row(t, "belady", NULL, caps[ci], 0, &us);
        worst_us[0] = us > worst_us[0] ? us : worst_us[0];
        for (int p = 0; p < 6; p++) {
            row(t, names[p], NULL, caps[ci], b, &us);
            if (p >= 2) {
                worst_us[p - 1] = us > worst_us[p - 1] ? us : worst_us[p - 1];
            }
        }
        /* MassiveGNN with evictions inside these short epochs (5 batches each) */
        row(t, "massivegnn", "delta=2", caps[ci], b, &us);
        worst_us[5] = us > worst_us[5] ? us : worst_us[5];
    }

    double ns, ns_probe, rate;
    lookup_cost(t, true, &ns, &rate);
    lookup_cost(t, false, &ns_probe, &rate);
    double row_bytes = 4.0 * t->feat_dim;
    printf(
        "\nlookup: %.1f ns per remote input node with the row copies of the hits, %.1f ns for the "
        "probe alone (hit rate %.3f, rows of %.0f bytes)\n",
        ns, ns_probe, rate, row_bytes);
    printf("  (a hit's copy replaces the owner's gather of the same row, so the probe is the "
           "cache's own cost)\n");
    const double gbits[] = {10, 25, 100};
    for (int i = 0; i < 3; i++) {
        double wire = row_bytes * 8 / (gbits[i] * 1e9) * 1e9; /* ns per row on the wire */
        printf(
            "  vs the wire time it saves at %3.0f Gbit/s: %5.1f ns per node (hit rate x %3.0f ns "
            "per row): probe/saved = %.3f, lookup/saved = %.3f\n",
            gbits[i], rate * wire, wire, ns_probe / (rate * wire), ns / (rate * wire));
    }
    double ms = step_ms((snprintf(path, sizeof path, "%s/g", dir), path));
    printf("\npolicy cost per batch vs a training step of %.1f ms (1 rank, 1 thread, batch 500: "
           "sample + gather + forward/backward + Adam):\n",
           ms);
    double worst = 0;
    for (int p = 0; p < 6; p++) {
        printf("  %-20s worst capacity: %7.1f us = %.2f%% of a step\n", worst_name[p], worst_us[p],
               100 * worst_us[p] / (1e3 * ms));
        worst = worst_us[p] > worst ? worst_us[p] : worst;
    }
    printf("  every per-batch policy at every capacity: <= %.2f%% of a step (target 2%%)\n",
           100 * worst / (1e3 * ms));
    halo_trace_free(t);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    return 0;
}
