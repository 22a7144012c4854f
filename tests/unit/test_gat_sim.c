/* Unit tests of the simulator's GAT compute model (sim/cost.c, halo_sim_cost_fb_s_gat and
 * halo_sim_cost_flops_gat): every expected value is worked out by hand here from the formulas of
 * docs/sim-model.md ("GAT"), never by calling the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/cost.h"
#include "sim/profile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* |got - want| within 1e-9 of want. */
#define assert_close(got, want)                                                                    \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ - w_) <= 1e-9 * fabs(w_))) {                                                 \
            print_message("# %s = %.12g, expected %.12g\n", #got, g_, w_);                         \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* A profile with round constants: 1 GFLOP/s for every GEMM shape, 1 GB/s aggregation, no
 * per-edge constant, no element cost, fit factors 1. */
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
    p.agg_edge_s = 0;
    p.elem_s = 0;
    return p;
}

/* The output layer alone: its heads (averaged) set the GEMM's width and the attention's work. */
static void gat_output_layer_costs_by_hand(void **state)
{
    (void)state;
    halo_sim_profile p = round_profile();
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
    halo_sim_profile p = round_profile();
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gat_output_layer_costs_by_hand),
        cmocka_unit_test(gat_two_layers_cost_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
