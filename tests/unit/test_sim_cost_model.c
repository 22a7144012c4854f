/* Unit tests of the simulator's per-stage cost functions (sim/cost.c) and of the profile fields
 * behind them (sim/profile.c): every expected value is worked out by hand here from the
 * formulas of docs/sim-model.md, never by calling the code under test; old profiles load with
 * the documented defaults; a bad GEMM table or fit factor gives one line naming the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "sim/calibrate.h"
#include "sim/cost.h"
#include "sim/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* |got - want| within 1e-9 of want (the formulas are a handful of double operations). */
#define assert_close(got, want)                                                              \
    do {                                                                                     \
        double g_ = (got), w_ = (want);                                                      \
        if (!(fabs(g_ - w_) <= 1e-9 * fabs(w_))) {                                           \
            print_message("# %s = %.12g, expected %.12g\n", #got, g_, w_);                  \
            fail();                                                                          \
        }                                                                                    \
    } while (0)

/* A profile with round constants, no GEMM table, fit factors 1. */
static halo_sim_profile round_profile(void)
{
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "t");
    p.machines = p.trainers = p.cores = p.nics = 1;
    p.sample_node_s = 100e-9;
    p.sample_edge_s = 10e-9;
    p.block_node_s = 20e-9;
    p.memcpy_bw = 4e9;
    p.gather_bw = 2e9;
    p.gather_row_s = 50e-9;
    p.lookup_node_s = 30e-9;
    p.hook_s = 1e-6;
    p.gemm_flops = 1e9;
    p.agg_bw = 1e9;
    p.adam_bw = p.shm_bw = p.nic_bw = 1e9;
    halo_sim_profile_defaults(&p);
    return p;
}

/* ---- CPU stages ---- */

static void sampling_is_per_node_and_per_edge(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    /* 1000 nodes x 100 ns + 5000 edges x 10 ns = 100 us + 50 us */
    assert_close(halo_sim_cost_sample_s(&p, 1000, 5000, 0, 0), 150e-6);
    /* without their own constants, lists taken whole and long lists cost sample_edge_s */
    assert_close(halo_sim_cost_sample_s(&p, 1000, 5000, 1000, 2000), 150e-6);
    /* with them: 1000 copied x 2 ns + 2000 long x 40 ns + 2000 short x 10 ns + the nodes'
       100 us = 2 + 80 + 20 + 100 us */
    p.sample_copy_s = 2e-9;
    p.sample_long_s = 40e-9;
    assert_close(halo_sim_cost_sample_s(&p, 1000, 5000, 1000, 2000), 202e-6);
    p.sample_copy_s = p.sample_long_s = 0;
    p.fit_sample = 1.5;
    assert_close(halo_sim_cost_sample_s(&p, 1000, 5000, 0, 0), 225e-6);
    /* a block: 2000 sources x 20 ns + 8000 edges x 4 bytes at 4 GB/s = 40 us + 8 us, x 1.5 */
    assert_close(halo_sim_cost_build_s(&p, 1000, 2000, 8000), 1.5 * 48e-6);
    /* measured per hash operation: 2000 sources x 20 ns + (1000 destinations + 8000 edges) x
       6 ns = 40 + 54 us, x 1.5; the index bytes are in the 6 ns */
    p.block_edge_s = 6e-9;
    assert_close(halo_sim_cost_build_s(&p, 1000, 2000, 8000), 1.5 * 94e-6);
    p.block_edge_s = 0;
}

static void gathers_are_per_row_and_per_byte(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    /* 1000 rows x (50 ns + 512 B / 2 GB/s = 256 ns) = 306 us */
    assert_close(halo_sim_cost_gather_s(&p, 1000, 512), 306e-6);
    /* narrow rows are dominated by the per-row part: 1000 x (50 + 32) ns */
    assert_close(halo_sim_cost_gather_s(&p, 1000, 64), 82e-6);
    /* an old profile (no per-row figure): bytes only */
    p.gather_row_s = 0;
    assert_close(halo_sim_cost_gather_s(&p, 1000, 512), 256e-6);
    p.gather_row_s = 50e-9;
    p.fit_fetch = 2;
    assert_close(halo_sim_cost_gather_s(&p, 1000, 512), 612e-6);
    /* fetch besides the exchanges: 100 lookups x 30 ns + 1 hook x 1 us + 10 hits x 306 ns,
       all x 2; no per-input figure (an old profile) */
    assert_close(halo_sim_cost_fetch_pre_s(&p, 4000, 100, 1, 5000, 10, 512),
                 2 * (3e-6 + 1e-6 + 3.06e-6));
    /* the fetch's rows: at gather_bw without a fetch rate, at fetch_bw with one (x 2) */
    assert_close(halo_sim_cost_fetch_rows_s(&p, 1000, 512, 0), 612e-6);
    p.fetch_bw = 1e9;
    assert_close(halo_sim_cost_fetch_rows_s(&p, 1000, 512, 0), 2 * 1000 * (50e-9 + 512e-9));
    /* by the table's size: fetch_bw (1 GB/s) measured on 64 MiB per rank, 4 GB/s on 1 MiB;
       a table of 8 MiB lies half-way in log2 (6 and 0 around 3): 0.5 / 1e9 + 0.5 / 4e9 s per
       byte, i.e. 1.6 GB/s */
    p.fetch_cold_bytes = 64.0 * 1048576;
    p.fetch_warm_bytes = 1048576;
    p.fetch_warm_bw = 4e9;
    assert_close(halo_sim_cost_fetch_bw(&p, 8.0 * 1048576), 1.6e9);
    assert_close(halo_sim_cost_fetch_bw(&p, 64.0 * 1048576), 1e9);  /* the cold size */
    assert_close(halo_sim_cost_fetch_bw(&p, 512.0 * 1048576), 1e9); /* beyond it */
    assert_close(halo_sim_cost_fetch_bw(&p, 1048576), 4e9);         /* the warm size */
    assert_close(halo_sim_cost_fetch_bw(&p, 1024), 4e9);            /* below it */
    assert_close(halo_sim_cost_fetch_bw(&p, 0), 1e9);               /* not known: cold */
    assert_close(halo_sim_cost_fetch_rows_s(&p, 1000, 512, 8.0 * 1048576),
                 2 * 1000 * (50e-9 + 512 / 1.6e9));
    /* kept batch after batch (a process on its own core): 4 GB/s at 1 MiB, 2 GB/s measured on
       the 64 MiB table kept; 8 MiB half-way in log2: 0.5 / 2e9 + 0.5 / 4e9 s per byte, i.e.
       2.667 GB/s; larger tables than measured, or no kept rate: as evicted */
    assert_close(halo_sim_cost_kept_bw(&p, 8.0 * 1048576), 1.6e9); /* not measured */
    p.fetch_kept_bw = 2e9;
    assert_close(halo_sim_cost_kept_bw(&p, 8.0 * 1048576), 1.0 / (0.5 / 2e9 + 0.5 / 4e9));
    assert_close(halo_sim_cost_kept_bw(&p, 64.0 * 1048576), 2e9);
    assert_close(halo_sim_cost_kept_bw(&p, 512.0 * 1048576), 1e9);
    assert_close(halo_sim_cost_kept_bw(&p, 1024), 4e9);
    assert_close(halo_sim_cost_kept_bw(&p, 0), 1e9);
    p.fetch_kept_bw = 0;
    p.fetch_warm_bw = 0; /* no warm rate: cold at every size */
    assert_close(halo_sim_cost_fetch_bw(&p, 1048576), 1e9);
    p.fetch_cold_bytes = p.fetch_warm_bytes = 0;
    p.fetch_bw = 0;
    /* ... and 4000 input nodes x 25 ns more with one */
    p.fetch_node_s = 25e-9;
    assert_close(halo_sim_cost_fetch_pre_s(&p, 4000, 100, 1, 5000, 10, 512),
                 2 * (100e-6 + 3e-6 + 1e-6 + 3.06e-6));
    /* ... and the hooks' charged work: 5000 units x 8 ns more with a unit price (x 2) */
    p.hook_unit_s = 8e-9;
    assert_close(halo_sim_cost_fetch_pre_s(&p, 4000, 100, 1, 5000, 10, 512),
                 2 * (100e-6 + 3e-6 + 1e-6 + 40e-6 + 3.06e-6));
}

static void aggregation_is_per_edge_and_per_float(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    p.agg_edge_s = 5e-9;
    p.agg_bw = 4e9;
    /* 1000 edges x (5 ns + 64 floats x 4 B / 4 GB/s = 64 ns) = 69 us */
    assert_close(halo_sim_cost_agg_s(&p, 1000, 64), 69e-6);
    p.agg_edge_s = 0;
    assert_close(halo_sim_cost_agg_s(&p, 1000, 64), 64e-6);
}

/* ---- GEMM by shape ---- */

/* A 2 x 2 x 2 table: rows {100, 10000}, in {10, 1000}, out {10, 1000}; every rate 1e10 but
 * the largest corner, 4e10. */
static void small_table(halo_sim_profile *p)
{
    p->gemm_nr = p->gemm_ni = p->gemm_no = 2;
    double r[2] = {100, 10000}, w[2] = {10, 1000};
    memcpy(p->gemm_rows, r, sizeof r);
    memcpy(p->gemm_in, w, sizeof w);
    memcpy(p->gemm_out, w, sizeof w);
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++) {
            for (int c = 0; c < 2; c++) {
                p->gemm_rate[a][b][c] = 1e10;
            }
        }
    }
    p->gemm_rate[1][1][1] = 4e10;
}

static void gemm_rate_interpolates_seconds_per_flop_in_log_space(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    /* no table: gemm_flops everywhere */
    assert_close(halo_sim_profile_gemm_rate(&p, 1000, 100, 100), 1e9);
    small_table(&p);
    /* the grid's points */
    assert_close(halo_sim_profile_gemm_rate(&p, 100, 10, 10), 1e10);
    assert_close(halo_sim_profile_gemm_rate(&p, 10000, 1000, 1000), 4e10);
    /* the geometric middle of every axis: weight 1/8 per corner on seconds per flop,
       7/8 x 1e-10 + 1/8 x 0.25e-10 = 0.90625e-10 */
    assert_close(halo_sim_profile_gemm_rate(&p, 1000, 100, 100), 1.0 / 0.90625e-10);
    /* a quarter of the way along rows only (log 10^2.5 between 10^2 and 10^4), largest in and
       out: 3/4 x 1e-10 + 1/4 x 0.25e-10 */
    assert_close(halo_sim_profile_gemm_rate(&p, pow(10, 2.5), 1000, 1000),
                 1.0 / (0.75e-10 + 0.25 * 0.25e-10));
    /* clamped outside the grid */
    assert_close(halo_sim_profile_gemm_rate(&p, 1e7, 1e5, 1e5), 4e10);
    assert_close(halo_sim_profile_gemm_rate(&p, 1, 1, 1), 1e10);
    /* an axis of one point */
    p.gemm_nr = 1;
    assert_close(halo_sim_profile_gemm_rate(&p, 5000, 1000, 1000), 1e10);
}

/* One layer's work: nd destinations, ns sources, e edges. */
static halo_sim_work one_layer(int64_t nd, int64_t ns, int64_t e)
{
    halo_sim_work w;
    memset(&w, 0, sizeof w);
    w.layers = 1;
    w.num_dst[0] = nd;
    w.num_src[0] = ns;
    w.num_edges[0] = e;
    return w;
}

static void compute_uses_the_layer_shape(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    /* in 32, out 8, nd 100, ns 400, e 1000: agg-first would cost (gather cost 32 per float)
       32*1000*32 + 4*100*512 = 1228800, lin-first 2*32*1000*8 + 2*500*512 = 1024000: lin-first.
       GEMMs 2 x 500 x 32 x 8 x 2 passes = 512000 flop at 1 GFLOP/s = 512 us; aggregation
       2 x 1000 edges x 8 floats x 4 B at 1 GB/s = 64 us */
    halo_sim_work w = one_layer(100, 400, 1000);
    assert_close(halo_sim_cost_fb_s(&p, &w, 32, 16, 8, 0, 0), 576e-6);
    p.fit_compute = 2;
    assert_close(halo_sim_cost_fb_s(&p, &w, 32, 16, 8, 0, 0), 1152e-6);
    p.fit_compute = 1;
    /* in 8, out 32: agg-first (32*1000*8 + 4*100*512 = 460800 < 2560000). GEMMs of 100 rows
       (not 500): 4 x 100 x 8 x 32 x 2 = 204800 flop; a table whose rate depends on rows only
       (1 GFLOP/s at 100 rows, 2 at 1000) gives 204.8 us; aggregation 1000 x 8 x 4 B = 32 us */
    w = one_layer(100, 400, 1000);
    p.gemm_nr = 2;
    p.gemm_ni = p.gemm_no = 1;
    p.gemm_rows[0] = 100;
    p.gemm_rows[1] = 1000;
    p.gemm_in[0] = p.gemm_out[0] = 16;
    p.gemm_rate[0][0][0] = 1e9;
    p.gemm_rate[1][0][0] = 2e9;
    assert_close(halo_sim_cost_fb_s(&p, &w, 8, 16, 32, 0, 0), 204.8e-6 + 32e-6);
}

static void elementwise_passes_are_per_element(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    halo_sim_work w = one_layer(100, 400, 1000);
    /* layer 0 of in 32, out 8: bias/ReLU/dropout and backward 2 x 100 x 8, the input copy
       100 x 32 (no dX at layer 0): 4800 elements */
    assert_close(halo_sim_cost_elems(&w, 0, 32, 16, 8), 4800);
    p.elem_s = 2e-9;
    assert_close(halo_sim_cost_fb_s(&p, &w, 32, 16, 8, 0, 0), 576e-6 + 9.6e-6);
    /* above layer 0 the input gradient is copied back too: two layers, layer 1 of in 16 (the
       hidden width), out 8, 50 destinations: 50 x (2 x 8 + 16 x 2) = 2400 */
    w.layers = 2;
    w.num_dst[1] = 50;
    assert_close(halo_sim_cost_elems(&w, 1, 32, 16, 8), 2400);
}

static void rgcn_uses_the_same_table(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
    /* 2 relations, no bases, in 8, out 4, nd 100, e 1000, layer 0 without embeddings (no dX):
       2 x 100 x 8 x 4 x (1 + 2) x 2 = 38400 flop at 1 GFLOP/s; means 1000 x 8 x 4 B at 1 GB/s */
    halo_sim_work w = one_layer(100, 400, 1000);
    assert_close(halo_sim_cost_fb_s(&p, &w, 8, 16, 4, 2, 0), 38.4e-6 + 32e-6);
    /* 3 bases add 4 x 2 x 3 x 8 x 4 = 768 flop */
    assert_close(halo_sim_cost_fb_s(&p, &w, 8, 16, 4, 2, 3), 39.168e-6 + 32e-6);
}

/* ---- cores shared by more threads than cores ---- */

/* Two ranks on one core, each computing 80000 flop at 1 MFLOP/s (0.08 core-seconds; one
 * layer of 100 destinations, no edges, 10 -> 10): rank `r`'s stats of the epoch. */
static halo_epoch_stats shared_compute_ov(double share_eff, double overhead_s, int r)
{
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "share");
    p.machines = 1;
    p.trainers = 2;
    p.cores = 1;
    p.nics = 1;
    p.gather_bw = p.memcpy_bw = p.shm_bw = p.nic_bw = p.agg_bw = p.adam_bw = 1e18;
    p.gemm_flops = 1e6;
    p.share_eff = share_eff;
    p.step_overhead_s = overhead_s;
    halo_sim_work w[2];
    for (int q = 0; q < 2; q++) {
        w[q] = one_layer(100, 100, 0);
    }
    halo_sim_cost_opts o = {.profile = &p, .ranks = 2, .depth = 0, .sampler_threads = 1,
                            .in_dim = 10, .hidden = 10, .classes = 10};
    halo_sim_cost *c = NULL;
    assert_int_equal(halo_sim_cost_new(&o, &c), 0);
    halo_sim_cost_epoch_begin(c, 0);
    assert_int_equal(halo_sim_cost_batch(c, 0, w), 0);
    halo_epoch_stats st[2];
    memset(st, 0, sizeof st);
    halo_sim_cost_epoch_end(c, st);
    halo_sim_cost_free(c);
    return st[r];
}

static halo_epoch_stats shared_compute(double share_eff, int r)
{
    return shared_compute_ov(share_eff, 0, r);
}

static void threads_beyond_the_cores_get_the_measured_share(void **state)
{
    (void)state;
    /* agg-first (no edges: 400 x 2 x 10 x 10 both ways, not cheaper lin-first): 4 x 100 x 10
       x 10 x 2 = 80000 flop = 0.08 s alone. Two on one core: the first runs 0 .. 0.08, the
       second queues and computes 0.08 .. 0.16; the first waits for it in the allreduce */
    for (int r = 0; r < 2; r++) {
        assert_close(shared_compute(0, r).compute_s, 0.08);
        assert_close(shared_compute(1, r).compute_s, 0.08);
        assert_close(shared_compute(0, r).time_s, 0.16);
    }
    assert_close(shared_compute(0, 0).allreduce_s, 0.08);
    /* measured: with a task queued the running one gets half its speed (0.16 s), then the
       second runs alone at full speed (0.08 s) */
    assert_close(shared_compute(0.5, 0).compute_s, 0.16);
    assert_close(shared_compute(0.5, 1).compute_s, 0.08);
    assert_close(shared_compute(0.5, 0).time_s, 0.24);
    /* a thread going on from one CPU step to the next keeps its core: the first rank's forward/
       backward (0.08 s) then its step overhead (0.01 s) run back to back, the second rank
       queues until 0.09 (not the first rank's overhead behind the second rank's compute) */
    assert_close(shared_compute_ov(0, 0.01, 0).compute_s, 0.09);
    assert_close(shared_compute_ov(0, 0.01, 1).compute_s, 0.09);
    assert_close(shared_compute_ov(0, 0.01, 0).time_s, 0.18);
}

/* ---- profile files ---- */

static char scratch[512];

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/sim_cost_model.XXXXXX", dir && dir[0] ? dir : "/tmp");
    return mkdtemp(scratch) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    halo_rmtree(scratch);
    return 0;
}

/* The shipped this-machine profile with `extra` inserted into its device section (and `top`
 * at the top level), written to scratch/name. */
static const char *variant(const char *name, const char *top, const char *extra)
{
    static char path[700];
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(
        halo_file_read_all(HALO_ROOT "/experiments/clusters/this-machine.lua", &text, &len), 0);
    const char *dev = strstr(text, "device = {");
    const char *ret = strstr(text, "return {");
    assert_non_null(dev);
    assert_non_null(ret);
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    size_t at_ret = (size_t)(ret - text) + strlen("return {");
    size_t at_dev = (size_t)(dev - text) + strlen("device = {");
    fwrite(text, 1, at_ret, f);
    fprintf(f, "\n%s\n", top ? top : "");
    fwrite(text + at_ret, 1, at_dev - at_ret, f);
    fprintf(f, "\n%s\n", extra ? extra : "");
    fputs(text + at_dev, f);
    fclose(f);
    halo_free(text);
    return path;
}

static void old_profiles_load_with_defaults(void **state)
{
    (void)state;
    halo_sim_profile p;
    assert_int_equal(halo_sim_profile_load(variant("old.lua", NULL, NULL), &p), 0);
    assert_true(p.fit_sample == 1 && p.fit_fetch == 1 && p.fit_compute == 1 &&
                p.fit_allreduce == 1);
    assert_int_equal(p.gemm_nr, 0);
    assert_true(p.gather_row_s == 0 && p.agg_edge_s == 0);
    assert_string_equal(p.graph, "");
    assert_true(halo_sim_profile_gemm_rate(&p, 512, 64, 16) == p.gemm_flops);
}

static void gemm_table_loads_and_round_trips(void **state)
{
    (void)state;
    halo_sim_profile p;
    const char *t = "gemm_table = { {64, 16, 4, 10}, {64, 16, 8, 20}, {512, 16, 4, 30}, "
                    "{512, 16, 8, 40} },";
    assert_int_equal(halo_sim_profile_load(variant("table.lua", "graph = \"/some/pdir\",", t), &p),
                     0);
    assert_int_equal(p.gemm_nr, 2);
    assert_int_equal(p.gemm_ni, 1);
    assert_int_equal(p.gemm_no, 2);
    assert_true(p.gemm_rate[1][0][1] == 40e9 && p.gemm_rate[0][0][1] == 20e9);
    assert_string_equal(p.graph, "/some/pdir");
    char out[700];
    snprintf(out, sizeof out, "%s/rt.lua", scratch);
    p.fit_compute = 1.25;
    assert_int_equal(halo_sim_profile_write(out, &p, NULL), 0);
    halo_sim_profile q;
    assert_int_equal(halo_sim_profile_load(out, &q), 0);
    memset(p.source, 0, sizeof p.source);
    memset(q.source, 0, sizeof q.source);
    assert_memory_equal(&p, &q, sizeof p);
}

/* Loading fails with one line naming the field. */
static void expect_fail(const char *path, const char *needle)
{
    halo_sim_profile p;
    int rc = halo_sim_profile_load(path, &p);
    const char *msg = halo_errmsg();
    if (rc != HALO_EINPUT || strstr(msg, needle) == NULL || strchr(msg, '\n') != NULL) {
        print_message("# rc %d: %s (wanted %s)\n", rc, msg, needle);
        fail();
    }
}

static void bad_tables_and_factors_are_refused(void **state)
{
    (void)state;
    expect_fail(variant("holes.lua", NULL, "gemm_table = { {64, 16, 4, 10}, {512, 16, 8, 40} },"),
                "device.gemm_table: 2 points, not the full grid");
    expect_fail(variant("zero.lua", NULL, "gemm_table = { {64, 16, 4, 0} },"),
                "device.gemm_table[1]: entry 4");
    expect_fail(variant("frac.lua", NULL, "gemm_table = { {64.5, 16, 4, 1} },"),
                "device.gemm_table[1]: entry 1");
    expect_fail(variant("twice.lua", NULL, "gemm_table = { {64, 16, 4, 1}, {64, 16, 4, 2} },"),
                "given twice");
    expect_fail(variant("fit.lua", "fit = { compute = 3 },", NULL), "fit.compute: 3");
    expect_fail(variant("graph.lua", "graph = 7,", NULL), "field graph");
}

/* ---------------------------------------------------------------- GAT */

/* round_profile without the per-edge and per-element figures of the defaults: GAT's GEMM at
 * 1 GFLOP/s and its attention at 1 GB/s alone. */
static halo_sim_profile gat_profile(void)
{
    halo_sim_profile p = round_profile();
    p.agg_edge_s = 0;
    p.elem_s = 0;
    return p;
}

/* The output layer alone: its heads (averaged) set the GEMM's width and the attention's work. */
static void gat_output_layer_costs_by_hand(void **state)
{
    (void)state;
    halo_sim_profile p = gat_profile();
    halo_sim_work w;
    memset(&w, 0, sizeof w);
    w.layers = 1;
    w.num_dst[0] = 100;
    w.num_src[0] = 400;
    w.num_edges[0] = 1000;
    /* in 8, 2 output heads of 4 classes (HF 8), layer 0 without embeddings (no dX):
       GEMM 2 x 400 x 8 x 8 x 2 passes = 102400 flop = 102.4 us at 1 GFLOP/s; attention
       3 passes x 1000 edges x 2 heads of 4 floats x 4 B = 96000 B = 96 us at 1 GB/s */
    assert_close(halo_sim_cost_flops_gat(&w, 8, 16, 4, 4, 2), 102400);
    assert_close(halo_sim_cost_fb_s_gat(&p, &w, 8, 16, 4, 4, 2), 102.4e-6 + 96e-6);
    /* elements: HF (3 (ns + nd) + 2 nd) = 8 x (1500 + 200) = 13600, at 2 ns */
    p.elem_s = 2e-9;
    assert_close(halo_sim_cost_fb_s_gat(&p, &w, 8, 16, 4, 4, 2), 102.4e-6 + 96e-6 + 27.2e-6);
    /* the fit factor scales the whole */
    p.fit_compute = 2;
    assert_close(halo_sim_cost_fb_s_gat(&p, &w, 8, 16, 4, 4, 2), 2 * (102.4e-6 + 96e-6 + 27.2e-6));
}

/* Two layers: the hidden layer is heads x hidden wide and the layer above computes dX. */
static void gat_two_layers_cost_by_hand(void **state)
{
    (void)state;
    halo_sim_profile p = gat_profile();
    halo_sim_work w;
    memset(&w, 0, sizeof w);
    w.layers = 2;
    w.num_src[0] = 400;
    w.num_dst[0] = 100;
    w.num_edges[0] = 1000;
    w.num_src[1] = 100;
    w.num_dst[1] = 20;
    w.num_edges[1] = 150;
    /* in 8, hidden 3 per head x 4 heads (HF 12), 5 classes, 1 output head:
       layer 0: 2 x 400 x 8 x 12 x 2 = 153600 flop; attention 3 x 1000 x 4 x 3 x 4 B = 144000 B
       layer 1: in 12, HF 5, with dX: 2 x 100 x 12 x 5 x 3 = 36000 flop; attention
       3 x 150 x 1 x 5 x 4 B = 9000 B */
    assert_close(halo_sim_cost_flops_gat(&w, 8, 3, 5, 4, 1), 153600 + 36000);
    assert_close(halo_sim_cost_fb_s_gat(&p, &w, 8, 3, 5, 4, 1),
                 (153600 + 36000) / 1e9 + (144000 + 9000) / 1e9);
}

/* ---- the jitter from a run's timeline and the simulated one (halo calibrate) */

/* Compute events of 2 ranks, E epochs of B batches: the simulated time of rank r is
 * (1 + r) ms (the model's own difference between the ranks), the measured one that times a
 * lognormal draw of mean 1 and sigma (0: none), and rank 0 ten times slower in epoch 0 (a
 * warm-up). */
static int64_t jitter_events(halo_timeline_event *ev, bool measured, double sigma, int E, int B)
{
    int64_t n = 0;
    halo_rng rng;
    halo_rng_init(&rng, 1, HALO_RNG_TEST, 0, 0, 0);
    for (int e = 0; e < E; e++) {
        for (int b = 0; b < B; b++) {
            for (int r = 0; r < 2; r++) {
                double d = (1 + r) * 1e-3, f = 1;
                if (measured && sigma > 0) {
                    f = exp(sigma * halo_rng_normal(&rng) - sigma * sigma / 2);
                }
                if (measured && e == 0 && r == 0) {
                    f *= 10;
                }
                halo_timeline_event *x = &ev[n++];
                memset(x, 0, sizeof *x);
                x->rank = r;
                x->epoch = e;
                x->batch = b;
                snprintf(x->stage, sizeof x->stage, "compute");
                x->start = 0.01 * b;
                x->end = x->start + d * f;
            }
        }
    }
    return n;
}

/* The wait for the slower of 2 ranks beyond the model, per batch max / mean - 1 of the ranks'
 * measured over modelled times, read back as sigma E[max of 2 normals] (sigma / sqrt(pi)):
 * for lognormal draws the mean of max / mean - 1 is (by Monte Carlo, 2e5 pairs) 0.1974 /
 * sqrt(pi) at sigma 0.2 and 0.3807 / sqrt(pi) at 0.4, which the model's draws of sigma then
 * cost again to first order; none without draws however different the ranks' modelled times;
 * the first epoch left out (ten times slower here); a batch without every rank left out. */
static void jitter_is_the_wait_for_the_slowest_beyond_the_model(void **state)
{
    (void)state;
    enum { E = 5, B = 4000 };
    halo_timeline_event *sim = HALO_NEW(halo_timeline_event, 2 * E * B);
    halo_timeline_event *run = HALO_NEW(halo_timeline_event, 2 * E * B);
    int64_t ns = jitter_events(sim, false, 0, E, B);
    assert_true(fabs(halo_sim_calib_normal_max(2) - 1 / sqrt(M_PI)) < 1e-6);
    assert_true(fabs(halo_sim_calib_normal_max(4) - 1.029375) < 1e-5);
    int64_t nr = jitter_events(run, true, 0, E, B);
    assert_true(halo_sim_calib_jitter(run, nr, sim, ns, 2) == 0);
    for (int i = 0; i < 2; i++) {
        double sigma = i == 0 ? 0.2 : 0.4, want = i == 0 ? 0.1974 : 0.3807;
        nr = jitter_events(run, true, sigma, E, B);
        double got = halo_sim_calib_jitter(run, nr, sim, ns, 2);
        if (fabs(got - want) > 0.02 * want) {
            fail_msg("sigma %g: got %g, expected %g", sigma, got, want);
        }
    }
    /* rank 1 missing from every batch: nothing to pair */
    int64_t m = 0;
    for (int64_t j = 0; j < nr; j++) {
        if (run[j].rank == 0) {
            run[m++] = run[j];
        }
    }
    assert_true(halo_sim_calib_jitter(run, m, sim, ns, 2) == 0);
    assert_true(halo_sim_calib_jitter(run, m, sim, ns, 1) == 0);
    halo_free(sim);
    halo_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampling_is_per_node_and_per_edge),
        cmocka_unit_test(gathers_are_per_row_and_per_byte),
        cmocka_unit_test(aggregation_is_per_edge_and_per_float),
        cmocka_unit_test(gemm_rate_interpolates_seconds_per_flop_in_log_space),
        cmocka_unit_test(compute_uses_the_layer_shape),
        cmocka_unit_test(elementwise_passes_are_per_element),
        cmocka_unit_test(rgcn_uses_the_same_table),
        cmocka_unit_test(threads_beyond_the_cores_get_the_measured_share),
        cmocka_unit_test(old_profiles_load_with_defaults),
        cmocka_unit_test(gemm_table_loads_and_round_trips),
        cmocka_unit_test(bad_tables_and_factors_are_refused),
        cmocka_unit_test(gat_output_layer_costs_by_hand),
        cmocka_unit_test(gat_two_layers_cost_by_hand),
        cmocka_unit_test(jitter_is_the_wait_for_the_slowest_beyond_the_model),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
