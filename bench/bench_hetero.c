/* Benchmark of typed sampling: sampled edges per second of the per-relation sampler on a
 * mag-shaped graph against the homogeneous sampler over the same CSR (the same edges, relations
 * ignored), both measured in this run on one core (best of 5 interleaved rounds), with seeds
 * drawn from the papers.
 * Size: HALO_BENCH_HETERO_SCALE (fraction of ogbn-mag, default 0.05). */
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double env_num(const char *name, double def)
{
    const char *s = getenv(name);
    return s != NULL && s[0] != '\0' ? atof(s) : def;
}

/* Samples batches of `batch` distinct paper seeds for at least `secs` seconds, typed (fan) or
 * homogeneous (fanouts); returns sampled edges per second. */
static double rate(const halo_graph *g, const halo_rel_fanouts fan, const int *fanouts,
                   int layers, int batch, double secs, double *edges_per_batch)
{
    int64_t papers = halo_graph_type_start(g, 1);
    int32_t *seeds = HALO_ALLOC(int32_t, batch);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int64_t edges = 0, batches = 0;
    double t0 = halo_now(), t = 0;
    while (t < secs || batches < 3) {
        for (int i = 0; i < batch; i++) { /* a stride walk: distinct seeds */
            seeds[i] = (int32_t)((batches * batch + (int64_t)i * 7919) % papers);
        }
        halo_sample_key k = {1, 0, batches};
        int rc = fan != NULL ? halo_sample_graph_typed(s, g, fan, layers, &k, seeds, batch, &mb)
                             : halo_sample_graph(s, g, fanouts, layers, &k, seeds, batch, &mb);
        if (rc < 0) {
            fprintf(stderr, "bench_hetero: %s\n", halo_errmsg());
            exit(1);
        }
        edges += halo_sample_edges(&mb);
        batches++;
        t = halo_now() - t0;
    }
    *edges_per_batch = (double)edges / (double)batches;
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_free(seeds);
    return (double)edges / t;
}

int main(void)
{
    halo_gen_hetero_params p;
    double scale = env_num("HALO_BENCH_HETERO_SCALE", 0.05);
    if (halo_gen_hetero_defaults("mag", scale, &p) < 0) {
        fprintf(stderr, "bench_hetero: %s\n", halo_errmsg());
        return 1;
    }
    p.topology_only = true;
    halo_graph *g;
    if (halo_gen_hetero_graph(&p, &g) < 0) {
        fprintf(stderr, "bench_hetero: %s\n", halo_errmsg());
        return 1;
    }
    int batch = 1000 < halo_graph_type_start(g, 1) / 8 ? 1000 : (int)(halo_graph_type_start(g, 1) / 8);
    printf("bench_hetero: mag at scale %g: %lld nodes, %lld edges, %d relations; batch %d\n",
           scale, (long long)g->nodes, (long long)g->edges, g->nrels, batch);
    const char *specs[][2] = {{"5,10", "5,10"}, {"cites=10,writes=5,rev_has_topic=5,*=2;cites=15,*=5", "25,40"}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        halo_rel_fanouts fan;
        int fanouts[HALO_MAX_LAYERS];
        int lt = halo_sample_parse_rel_fanouts(specs[i][0], g->rel, g->nrels, fan, HALO_MAX_LAYERS);
        int lh = halo_sample_parse_fanouts(specs[i][1], fanouts, HALO_MAX_LAYERS);
        if (lt < 0 || lh < 0) {
            fprintf(stderr, "bench_hetero: %s\n", halo_errmsg());
            return 1;
        }
        /* interleaved rounds, best of each: on a shared machine the other load then hits
         * both samplers alike */
        double et = 0, eh = 0, rt = 0, rh = 0;
        for (int round = 0; round < 5; round++) {
            double x = rate(g, fan, NULL, lt, batch, 0.3, &et);
            double y = rate(g, NULL, fanouts, lh, batch, 0.3, &eh);
            rt = x > rt ? x : rt;
            rh = y > rh ? y : rh;
        }
        printf("  typed %-50s %10.3g edges/s (%8.0f per batch)\n", specs[i][0], rt, et);
        printf("  homogeneous %-44s %10.3g edges/s (%8.0f per batch)\n", specs[i][1], rh, eh);
        printf("  typed / homogeneous rate: %.2f\n", rt / rh);
    }
    halo_graph_free(g);
    return 0;
}
