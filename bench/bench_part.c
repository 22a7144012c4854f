/* Benchmark of the partitioners: time, peak memory per edge, edge cut and balance of metis,
 * stream (LDG, Fennel) and random side by side on a products-like graph of about 10M edges.
 * Sizes: HALO_BENCH_PART_EDGES (default 1e7; 1e8 for the 100M case of docs/partition.md, about
 * 3 minutes and 8 GB for METIS), HALO_BENCH_PART_PARTS (default 4). */
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/gen.h"
#include "part/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double env_num(const char *name, double def)
{
    const char *s = getenv(name);
    return s != NULL && s[0] != '\0' ? atof(s) : def;
}

int main(void)
{
    double target = env_num("HALO_BENCH_PART_EDGES", 1e7);
    int P = (int)env_num("HALO_BENCH_PART_PARTS", 4);
    halo_log_set_level(HALO_LOG_QUIET); /* no progress lines between the table rows */
    halo_gen_params gp;
    /* products-like: about 48.8 stored edges per node. */
    if (halo_gen_preset("products", target / (2449029.0 * 48.8), &gp) < 0) {
        fprintf(stderr, "bench_part: %s\n", halo_errmsg());
        return 1;
    }
    gp.feat_dim = 8;
    halo_graph *g = NULL;
    double t0 = halo_now();
    if (halo_gen_graph(&gp, &g) < 0) {
        fprintf(stderr, "bench_part: %s\n", halo_errmsg());
        return 1;
    }
    printf("bench_part: %s, %lld nodes, %lld edges, %d parts (generated in %.1f s)\n", g->name,
           (long long)g->nodes, (long long)g->edges, P, halo_now() - t0);
    struct {
        const char *name;
        int method, stream;
    } runs[] = {
        {"random", HALO_PARTITION_RANDOM, 0},
        {"stream-ldg", HALO_PARTITION_STREAM, HALO_STREAM_LDG},
        {"stream-fennel", HALO_PARTITION_STREAM, HALO_STREAM_FENNEL},
        {"metis", HALO_PARTITION_METIS, 0},
    };
    int32_t *a = HALO_ALLOC(int32_t, g->nodes);
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/halo-bench-part.%d", (int)getpid());
    double random_cut = 0, random_time = 0;
    printf("%-14s %9s %9s %9s %9s %10s %8s %8s %8s %9s\n", "method", "assign_s", "write_s",
           "assign_B/e", "write_B/e", "cut", "bal_n", "bal_t", "bal_e", "cut/rand");
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        halo_partition_opts o;
        halo_partition_opts_init(&o);
        o.choice.method = runs[i].method;
        o.choice.stream = runs[i].stream;
        o.parts = P;
        o.force = true;
        size_t base = halo_mem_rss_now();
        bool peak_ok = halo_mem_rss_peak_reset();
        double ta = halo_now();
        if (halo_partition_assign(g, &o, a) < 0) {
            fprintf(stderr, "bench_part: %s: %s\n", runs[i].name, halo_errmsg());
            return 1;
        }
        double assign_s = halo_now() - ta;
        size_t peak = peak_ok ? halo_mem_rss_peak() : 0;
        halo_partition_stats st;
        memset(&st, 0, sizeof st);
        size_t wbase = halo_mem_rss_now();
        bool wpeak_ok = halo_mem_rss_peak_reset();
        double tw = halo_now();
        if (halo_partition_write(g, a, &o, dir, &st) < 0) {
            fprintf(stderr, "bench_part: %s: %s\n", runs[i].name, halo_errmsg());
            return 1;
        }
        double write_s = halo_now() - tw;
        size_t wpeak = wpeak_ok ? halo_mem_rss_peak() : 0;
        if (runs[i].method == HALO_PARTITION_RANDOM) {
            random_cut = (double)st.edge_cut;
            random_time = assign_s;
        }
        char extra[32] = "n/a", wextra[32] = "n/a";
        if (peak_ok && peak >= base) {
            snprintf(extra, sizeof extra, "%.1f", (double)(peak - base) / (double)g->edges);
        }
        if (wpeak_ok && wpeak >= wbase) {
            snprintf(wextra, sizeof wextra, "%.1f", (double)(wpeak - wbase) / (double)g->edges);
        }
        printf("%-14s %9.2f %9.2f %10s %9s %9.2f%% %8.3f %8.3f %8.3f %9.3f\n", runs[i].name,
               assign_s, write_s, extra, wextra, 100.0 * st.edge_cut_fraction, st.balance[0],
               st.balance[1], st.balance[2],
               random_cut > 0 ? (double)st.edge_cut / random_cut : 1.0);
        if (runs[i].method == HALO_PARTITION_METIS) {
            printf("bench_part: metis/random: cut %.3f, time %.1fx\n",
                   random_cut > 0 ? (double)st.edge_cut / random_cut : 0.0,
                   random_time > 0 ? assign_s / random_time : 0.0);
        }
    }
    printf("bench_part: assign_B/e, write_B/e = peak RSS of the assignment, of the writer, above "
           "the RSS before it (graph and assignment array already resident), per edge\n");
    halo_rmtree(dir);
    halo_free(a);
    halo_graph_free(g);
    return 0;
}
