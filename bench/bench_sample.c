/* Benchmark of the local data path, each figure a ratio against a limit measured in the same run:
 * sampling (sampled edges/s on one core vs independent random 4-byte reads over an array the size
 * of the CSR; goal >= 0.5) and the feature gather (bytes/s vs memcpy; goal >= 0.7).
 * The gather is also compared with random reads of the same rows (nothing written), the limit of
 * its access pattern. Sizes: HALO_BENCH_SAMPLE_NODES (default 1e6), HALO_BENCH_SAMPLE_DEGREE
 * (default 24), HALO_BENCH_GATHER_ROWS (262144 rows of 512 B); HALO_BENCH_GATHER_HUGE=0 keeps
 * the feature table on 4 KiB pages (no MADV_HUGEPAGE), to see what huge pages bring. */
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "sample/sample.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double env_num(const char *name, double def)
{
    const char *s = getenv(name);
    return s != NULL && s[0] != '\0' ? atof(s) : def;
}

/* Independent random 4-byte reads over words[n]: addresses come from a register RNG, so loads do
 * not depend on each other (the memory system may overlap them). Returns reads per second. */
static double random_reads(const uint32_t *words, int64_t n, int64_t reads, uint32_t *sink)
{
    uint64_t x = 88172645463325252ULL, acc = 0;
    double t0 = halo_now();
    for (int64_t i = 0; i < reads; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += words[(uint64_t)(((unsigned __int128)x * (uint64_t)n) >> 64)];
    }
    double t = halo_now() - t0;
    *sink += (uint32_t)acc;
    return (double)reads / t;
}

/* The limit of the gather's access pattern: the rows ids[0..n) of feat read (every 8-byte word
 * summed) with the same prefetch distance as halo_store_gather, nothing written. Returns the
 * seconds it took. */
static double row_reads(const float *feat, int dim, const int32_t *ids, int64_t n, uint32_t *sink)
{
    size_t words = (size_t)dim / 2;
    uint64_t acc = 0;
    double t0 = halo_now();
    for (int64_t i = 0; i < n; i++) {
        if (i + 8 < n) {
            const char *q = (const char *)(feat + (int64_t)ids[i + 8] * dim);
            for (size_t b = 0; b < (size_t)dim * 4; b += 64) {
                __builtin_prefetch(q + b);
            }
        }
        const uint64_t *w = (const uint64_t *)(const void *)(feat + (int64_t)ids[i] * dim);
        for (size_t k = 0; k < words; k++) {
            acc += w[k];
        }
    }
    double t = halo_now() - t0;
    *sink += (uint32_t)acc;
    return t;
}

int main(void)
{
    int64_t n = (int64_t)env_num("HALO_BENCH_SAMPLE_NODES", 1e6);
    int degree = (int)env_num("HALO_BENCH_SAMPLE_DEGREE", 24);
    halo_graph *g = halo_gen_random(n, 0, 2 * degree, 0, 1);
    printf("bench_sample: graph of %lld nodes, %lld edges (CSR %.0f MiB)\n", (long long)n,
           (long long)g->edges,
           ((double)(n + 1) * 8 + (double)g->edges * 4) / 1048576.0);

    /* --- sampling vs random reads --- */
    int fanouts[2] = {10, 25};
    int batch = 1000;
    int32_t *seeds = HALO_ALLOC(int32_t, batch);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int64_t words = (int64_t)((n + 1) * 2 + g->edges); /* CSR bytes / 4 */
    uint32_t *arr = HALO_ALLOC(uint32_t, words);
    for (int64_t i = 0; i < words; i++) {
        arr[i] = (uint32_t)i;
    }
    uint32_t sink = 0;
    random_reads(arr, words, 1000000, &sink); /* warm-up */
    /* rounds alternate the two measurements and keep the best of each, so that a busy machine
     * disturbs both alike */
    double sample_rate = 0, read_rate = 0, ts = 0;
    int64_t edges = 0;
    for (int round = 0, b = 0; round < 7; round++) {
        int64_t e0 = 0;
        double t0 = 0;
        for (; t0 < 0.3; b++) {
            halo_rng r;
            halo_rng_init(&r, 2, HALO_RNG_TEST, (uint64_t)b, 0, 0);
            for (int i = 0; i < batch; i++) {
                seeds[i] = (int32_t)((i * (n / batch) +
                                      (int64_t)halo_rng_below(&r, (uint64_t)(n / batch))) % n);
            }
            halo_sample_key k = {1, 0, b};
            double t1 = halo_now();
            if (halo_sample_graph(s, g, fanouts, 2, &k, seeds, batch, &mb) < 0) {
                fprintf(stderr, "bench_sample: %s\n", halo_errmsg());
                return 1;
            }
            t0 += halo_now() - t1;
            e0 += halo_sample_edges(&mb);
        }
        if ((double)e0 / t0 > sample_rate) {
            sample_rate = (double)e0 / t0;
            edges = e0;
            ts = t0;
        }
        double rr = random_reads(arr, words, 10000000, &sink);
        read_rate = rr > read_rate ? rr : read_rate;
    }
    halo_free(arr);
    printf("sampling: %.3g sampled edges/s on one core (fanouts 10,25, batch %d, best round: %lld "
           "edges in %.2f s); random 4-byte reads over %.0f MiB: %.3g reads/s\n",
           sample_rate, batch, (long long)edges, ts, (double)words * 4 / 1048576.0, read_rate);
    printf("RATIO sample_vs_random_reads %.2f (goal >= 0.5)\n", sample_rate / read_rate);

    /* --- gather vs memcpy --- */
    int dim = 128; /* 512-byte rows */
    int64_t rows = (int64_t)env_num("HALO_BENCH_GATHER_ROWS", 262144);
    /* rows aligned to cache lines, as in a mapped part file (feat.f32 is page-aligned) */
    char *feat_mem = halo_malloc((size_t)rows * dim * sizeof(float) + 64);
    float *feat = (float *)(void *)(feat_mem + (64 - (uintptr_t)feat_mem % 64) % 64);
    if (env_num("HALO_BENCH_GATHER_HUGE", 1) != 0) { /* as the part loader does; 0: 4 KiB pages */
        halo_mem_hugepages(feat, (size_t)rows * dim * sizeof(float));
    }
    for (int64_t i = 0; i < rows * dim; i++) {
        feat[i] = (float)i;
    }
    int64_t ng = rows / 2;
    int32_t *ids = HALO_ALLOC(int32_t, ng);
    halo_rng r;
    halo_rng_init(&r, 3, HALO_RNG_TEST, 0, 0, 0);
    for (int64_t i = 0; i < ng; i++) {
        ids[i] = (int32_t)halo_rng_below(&r, (uint64_t)rows);
    }
    char *out_mem = halo_malloc((size_t)ng * dim * sizeof(float) + 64);
    float *out = (float *)(void *)(out_mem + (64 - (uintptr_t)out_mem % 64) % 64);
    size_t bytes = (size_t)ng * dim * sizeof(float);
    memset(out, 0, bytes);
    /* each timed run starts with cold caches: a pass over 3 x L3-sized scratch evicts both */
    size_t evict_words = (size_t)96 << 18;
    uint32_t *evict = HALO_NEW(uint32_t, evict_words);
    double best_g = 1e30, best_m = 1e30, best_r = 1e30;
    for (int rep = 0; rep < 15; rep++) {
        for (size_t i = 0; i < evict_words; i += 16) {
            sink += evict[i]++;
        }
        double tr = row_reads(feat, dim, ids, ng, &sink);
        best_r = tr < best_r ? tr : best_r;
        for (size_t i = 0; i < evict_words; i += 16) {
            sink += evict[i]++;
        }
        double t0 = halo_now();
        halo_store_gather(feat, 0, dim, ids, ng, out);
        double tg = halo_now() - t0;
        for (size_t i = 0; i < evict_words; i += 16) {
            sink += evict[i]++;
        }
        t0 = halo_now();
        memcpy(out, feat + (rep & 1) * ng * dim, bytes);
        double tm = halo_now() - t0;
        best_g = tg < best_g ? tg : best_g;
        best_m = tm < best_m ? tm : best_m;
    }
    sink += (uint32_t)out[ng * dim - 1];
    printf("gather: %lld random rows of %d bytes from %.0f MiB: %.2f GB/s; memcpy of %.0f MiB: "
           "%.2f GB/s\n", (long long)ng, dim * 4, (double)rows * dim * 4 / 1048576.0,
           (double)bytes / best_g / 1e9, (double)bytes / 1048576.0, (double)bytes / best_m / 1e9);
    printf("random row reads (the same rows, read and summed, nothing written): %.2f GB/s\n",
           (double)bytes / best_r / 1e9);
    printf("RATIO gather_vs_memcpy %.2f (goal >= 0.7)\n", best_m / best_g);
    printf("RATIO gather_vs_random_row_reads %.2f\n", best_r / best_g);
    printf("# sink %u\n", sink);
    halo_free(evict);
    halo_free(out_mem);
    halo_free(ids);
    halo_free(feat_mem);
    halo_free(seeds);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
    return 0;
}
