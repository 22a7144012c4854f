/* Unit tests of runtime/sim/cost: stage times of a 2-rank run against formulas written out here,
 * the pipeline regimes, the slowest rank bounding every step, NIC sharing, the netem floor, CPU
 * contention, the timeline's intervals, the flop count against the model's, speed and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "comm/comm.h"
#include "core/err.h"
#include "core/mem.h"
#include "model/model.h"
#include "sim/cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

/* Every rate so fast and every cost so small that it does not count; tests set what matters. */
static halo_sim_profile fast_profile(int machines, int trainers, int cores)
{
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "test");
    p.machines = machines;
    p.trainers = trainers;
    p.cores = cores;
    p.nics = 1;
    double fast = 1e18;
    p.gather_bw = p.memcpy_bw = p.shm_bw = p.nic_bw = fast;
    p.pcie_bw_pinned = p.pcie_bw_pageable = fast;
    p.gemm_flops = p.agg_bw = p.adam_bw = fast;
    p.device = HALO_SIM_DEVICE_GPU;
    return p;
}

/* Work of P ranks for one batch, with its per-peer arrays. */
typedef struct twork {
    int P;             /* ranks */
    int L;             /* layers */
    halo_sim_work *w;  /* [P] */
    int64_t *req;      /* [P * L * P] sample request bytes, rank-major */
    int64_t *rep;      /* [P * L * P] sample reply bytes */
    int64_t *pull;     /* [P * P] rows pulled */
} twork;

static void tw_init(twork *t, int P, int L)
{
    t->P = P;
    t->L = L;
    t->w = HALO_NEW(halo_sim_work, P);
    t->req = HALO_NEW(int64_t, (size_t)P * L * P);
    t->rep = HALO_NEW(int64_t, (size_t)P * L * P);
    t->pull = HALO_NEW(int64_t, (size_t)P * P);
    for (int r = 0; r < P; r++) {
        t->w[r].layers = L;
        t->w[r].sample_req = t->req + (size_t)r * L * P;
        t->w[r].sample_rep = t->rep + (size_t)r * L * P;
        t->w[r].pull_rows = t->pull + (size_t)r * P;
    }
}

/* Clears the counts (keeps layers and the arrays). */
static void tw_clear(twork *t)
{
    int P = t->P, L = t->L;
    memset(t->req, 0, (size_t)P * L * P * sizeof *t->req);
    memset(t->rep, 0, (size_t)P * L * P * sizeof *t->rep);
    memset(t->pull, 0, (size_t)P * P * sizeof *t->pull);
    for (int r = 0; r < P; r++) {
        halo_sim_work *w = &t->w[r];
        const int64_t *a = w->sample_req, *b = w->sample_rep, *c = w->pull_rows;
        memset(w, 0, sizeof *w);
        w->layers = L;
        w->sample_req = a;
        w->sample_rep = b;
        w->pull_rows = c;
    }
}

static void tw_free(twork *t)
{
    halo_free(t->w);
    halo_free(t->req);
    halo_free(t->rep);
    halo_free(t->pull);
}

/* Sets peer p's pull of n rows by rank r (and the owner's served count). */
static void tw_pull(twork *t, int r, int p, int64_t n)
{
    t->pull[(size_t)r * t->P + p] += n;
    t->w[p].served_rows += n;
}

static halo_sim_cost_opts base_opts(const halo_sim_profile *p, int depth, int threads)
{
    halo_sim_cost_opts o;
    memset(&o, 0, sizeof o);
    o.profile = p;
    o.ranks = p->machines * p->trainers;
    o.depth = depth;
    o.sampler_threads = threads;
    o.in_dim = 100;
    o.hidden = 16;
    o.classes = 4;
    o.grad_floats = 1000;
    return o;
}

/* Runs one epoch of nb identical batches of t; out[P]. */
static void run_epoch(const halo_sim_cost_opts *o, twork *t, int64_t nb, halo_epoch_stats *out)
{
    halo_sim_cost *c = NULL;
    assert_int_equal(halo_sim_cost_new(o, &c), 0);
    halo_sim_cost_epoch_begin(c, 0);
    for (int64_t b = 0; b < nb; b++) {
        assert_int_equal(halo_sim_cost_batch(c, b, t->w), 0);
    }
    memset(out, 0, (size_t)t->P * sizeof *out);
    halo_sim_cost_epoch_end(c, out);
    halo_sim_cost_free(c);
}

static void assert_close(double got, double want, double rel)
{
    double tol = rel * fmax(fabs(want), 1e-12);
    if (fabs(got - want) > tol) {
        fail_msg("got %.12g, expected %.12g (relative tolerance %g)", got, want, rel);
    }
}

static double stage_sum(const halo_epoch_stats *s)
{
    return s->sample_s + s->fetch_s + s->copy_s + s->compute_s + s->allreduce_s;
}

/* ---------------------------------------------------------------- the 2-rank formulas */

/* Profile numbers of the formula test: every field that the model uses is distinct. */
static halo_sim_profile formula_profile(void)
{
    halo_sim_profile p = fast_profile(2, 1, 8);
    p.sample_edge_s = 2e-8;
    p.sample_node_s = 5e-8;
    p.block_node_s = 3e-8;
    p.block_edge_s = 7e-9;
    p.gather_bw = 5e9;
    p.memcpy_bw = 1e10;
    p.lookup_node_s = 4e-8;
    p.hook_s = 2e-5;
    p.net_lat_s = 3e-6;
    p.nics = 2;
    p.nic_bw = 1.25e9;
    p.msg_overhead_s = 1e-6;
    p.pcie_bw_pinned = 1.2e10;
    p.pcie_bw_pageable = 6e9;
    p.pcie_lat_s = 1e-5;
    p.pinned = false;
    p.gemm_flops = 1e13;
    p.agg_bw = 5e11;
    p.step_overhead_s = 1e-3;
    p.adam_bw = 2e11;
    p.allreduce_lat_s = 2e-6;
    return p;
}

/* Batch b of the formula test: two layers, rank-dependent sizes, traffic both ways. Block 1
 * has nd1 seeds, 8 nd1 sources, 10 nd1 edges; block 0 the same ratios on nd0 = 8 nd1. */
static void formula_work(twork *t, int64_t b)
{
    tw_clear(t);
    for (int r = 0; r < 2; r++) {
        halo_sim_work *w = &t->w[r];
        int p = 1 - r;
        int64_t nd1 = 100 + 20 * r + b;
        int64_t nd[2] = {8 * nd1, nd1};
        for (int l = 0; l < 2; l++) {
            w->num_dst[l] = nd[l];
            w->num_src[l] = 8 * nd[l];
            w->num_edges[l] = 10 * nd[l];
            w->local_nodes[l] = nd[l] * 7 / 10;
            w->local_edges[l] = 10 * w->local_nodes[l];
            w->served_nodes[l] = nd[l] / (4 + r);
            w->served_edges[l] = 9 * w->served_nodes[l];
            int64_t remote = nd[l] - w->local_nodes[l];
            t->req[(size_t)r * 4 + (size_t)l * 2 + p] = 32 + 4 * remote;
            t->rep[(size_t)r * 4 + (size_t)l * 2 + p] = 4 * remote + 4 * 10 * remote;
        }
        w->seeds = (int32_t)nd1;
        w->input_nodes = w->num_src[0];
        w->row_bytes = 400;
        w->lookups = w->input_nodes / 3;
        w->hits = w->lookups / 2 + r;
        w->hook_calls = 1;
        w->local_rows = w->input_nodes - w->lookups;
    }
    tw_pull(t, 0, 1, t->w[0].lookups - t->w[0].hits);
    tw_pull(t, 1, 0, t->w[1].lookups - t->w[1].hits);
}

/* GEMM flops and gathered floats of formula_work's blocks for in 100, hidden 16, classes 4:
 * layer 0 (100 -> 16, no input gradient) goes agg-first, layer 1 (16 -> 4) lin-first, by the
 * model's cost rule (agg 44800 nd vs lin 67840 nd; agg 11008 nd vs lin 6016 nd). */
static void formula_compute(const halo_sim_work *w, double *flops, double *floats)
{
    double nd0 = (double)w->num_dst[0], e0 = (double)w->num_edges[0];
    double nd1 = (double)w->num_dst[1], ns1 = (double)w->num_src[1], e1 = (double)w->num_edges[1];
    double f0 = 2 * nd0 * (2 * 100) * 16 /* forward */ + 2 * (2 * 100) * 16 * nd0 /* dW */;
    double f1 = 2 * ns1 * 16 * 4 + 2 * nd1 * 16 * 4     /* forward: neighbours and self */
                + 2 * 16 * 4 * nd1 + 2 * 16 * 4 * ns1   /* dW self, dW neighbours */
                + 2 * ns1 * 16 * 4 + 2 * nd1 * 16 * 4;  /* dX */
    *flops = f0 + f1;
    *floats = e0 * 100 /* forward mean */ + e1 * 4 * 2 /* forward and backward mean */;
}

/* One collective exchange of the formula test (every rank on its own machine and NIC): starts
 * when both arrived plus the count latency; each direction of a rank moves its bytes alone at
 * the NIC's rate and adds a latency; the critical CPU work counts for everyone. */
static void formula_xchg(const halo_sim_profile *p, double t[2], const double out[2],
                         const double in[2], double counts, const double crit[2],
                         const double own[2])
{
    double cap = p->nic_bw * p->nics;
    double S = fmax(t[0], t[1]) + counts;
    double tend = S;
    for (int r = 0; r < 2; r++) {
        if (out[r] > 0) {
            tend = fmax(tend, S + out[r] / cap + p->net_lat_s);
        }
        if (in[r] > 0) {
            tend = fmax(tend, S + in[r] / cap + p->net_lat_s);
        }
        tend = fmax(tend, S + crit[r]);
    }
    for (int r = 0; r < 2; r++) {
        t[r] = fmax(tend, S + crit[r] + own[r]);
    }
}

static void two_ranks_take_the_times_of_the_formulas(void **state)
{
    (void)state;
    halo_sim_profile p = formula_profile();
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    o.grad_floats = 3601;
    twork tw;
    tw_init(&tw, 2, 2);
    halo_sim_cost *c = NULL;
    assert_int_equal(halo_sim_cost_new(&o, &c), 0);
    halo_sim_cost_epoch_begin(c, 0);
    double t[2] = {0, 0};
    halo_epoch_stats want[2];
    memset(want, 0, sizeof want);
    const int64_t nb = 3;
    double zero[2] = {0, 0};
    for (int64_t b = 0; b < nb; b++) {
        formula_work(&tw, b);
        assert_int_equal(halo_sim_cost_batch(c, b, tw.w), 0);
        const halo_sim_work *w = tw.w;
        /* sample: layers 1 then 0; request exchange (local sampling meanwhile), serving,
           reply exchange, block build */
        double t0[2] = {t[0], t[1]};
        for (int l = 1; l >= 0; l--) {
            double out[2], in[2], own[2];
            for (int r = 0; r < 2; r++) {
                out[r] = (double)tw.req[(size_t)r * 4 + (size_t)l * 2 + (1 - r)];
                in[r] = (double)tw.req[(size_t)(1 - r) * 4 + (size_t)l * 2 + r];
                own[r] = (double)w[r].local_nodes[l] * p.sample_node_s +
                         (double)w[r].local_edges[l] * p.sample_edge_s + 2 * p.msg_overhead_s;
            }
            formula_xchg(&p, t, out, in, p.net_lat_s, zero, own);
            for (int r = 0; r < 2; r++) {
                t[r] += (double)w[r].served_nodes[l] * p.sample_node_s +
                        (double)w[r].served_edges[l] * p.sample_edge_s;
                in[r] = (double)tw.rep[(size_t)r * 4 + (size_t)l * 2 + (1 - r)];
                out[r] = (double)tw.rep[(size_t)(1 - r) * 4 + (size_t)l * 2 + r];
                own[r] = 2 * p.msg_overhead_s;
            }
            formula_xchg(&p, t, out, in, p.net_lat_s, zero, own);
            for (int r = 0; r < 2; r++) {
                t[r] += (double)w[r].num_src[l] * p.block_node_s +
                        (double)(w[r].num_dst[l] + w[r].num_edges[l]) * p.block_edge_s;
            }
        }
        for (int r = 0; r < 2; r++) {
            want[r].sample_s += t[r] - t0[r];
            t0[r] = t[r];
        }
        /* fetch: lookups, hook, hits; ids exchange; rows exchange (owner gathers, no count
           all-to-all), local rows and the scatter of the replies while they travel */
        double out[2], in[2], own[2], crit[2];
        for (int r = 0; r < 2; r++) {
            t[r] += (double)w[r].lookups * p.lookup_node_s + p.hook_s +
                    (double)w[r].hits * 400 / p.gather_bw;
            out[r] = 4.0 * (double)w[r].pull_rows[1 - r];
            in[r] = 4.0 * (double)w[1 - r].pull_rows[r];
            own[r] = 2 * p.msg_overhead_s;
        }
        formula_xchg(&p, t, out, in, p.net_lat_s, zero, own);
        for (int r = 0; r < 2; r++) {
            int64_t n_in = w[r].pull_rows[1 - r], n_out = w[1 - r].pull_rows[r];
            in[r] = 400.0 * (double)n_in;
            out[r] = 400.0 * (double)n_out;
            crit[r] = (double)w[r].served_rows * 400 / p.gather_bw +
                      (double)halo_comm_rows_pieces(n_out, 400) * p.msg_overhead_s;
            own[r] = ((double)w[r].local_rows * 400 + in[r]) / p.gather_bw +
                     (double)halo_comm_rows_pieces(n_in, 400) * p.msg_overhead_s;
        }
        formula_xchg(&p, t, out, in, 0, crit, own);
        double arrive[2];
        for (int r = 0; r < 2; r++) {
            want[r].fetch_s += t[r] - t0[r];
            /* copy: features + block CSR, pageable, 1 + 2L copies */
            double bytes = (double)w[r].input_nodes * 400;
            for (int l = 0; l < 2; l++) {
                bytes += (double)(w[r].num_dst[l] + 1) * 8 + (double)w[r].num_edges[l] * 4;
            }
            double copy = 5 * p.pcie_lat_s + bytes / p.pcie_bw_pageable;
            want[r].copy_s += copy;
            double flops, floats;
            formula_compute(&w[r], &flops, &floats);
            assert_close(halo_sim_cost_flops(&w[r], 100, 16, 4), flops, 1e-12);
            double fb = flops / p.gemm_flops + 4 * floats / p.agg_bw + p.step_overhead_s;
            want[r].compute_s += fb;
            arrive[r] = t[r] + copy + fb;
        }
        /* allreduce: one trainer per machine, a ring over the 2 machines' NICs: 2(M-1)/M of
           the bytes each way, 2(M-1) latencies; then Adam with its two PCIe copies */
        double B = 3601.0 * 4;
        double ar_end = fmax(arrive[0], arrive[1]) + B / (p.nic_bw * p.nics) +
                        2 * (p.net_lat_s + p.allreduce_lat_s);
        double adam = 3601.0 * 4 / p.adam_bw + 2 * (p.pcie_lat_s + 3601.0 * 4 / p.pcie_bw_pinned);
        for (int r = 0; r < 2; r++) {
            want[r].allreduce_s += ar_end - arrive[r];
            want[r].compute_s += adam;
            t[r] = ar_end + adam;
        }
    }
    halo_epoch_stats got[2];
    memset(got, 0, sizeof got);
    halo_sim_cost_epoch_end(c, got);
    for (int r = 0; r < 2; r++) {
        assert_close(got[r].sample_s, want[r].sample_s, 1e-9);
        assert_close(got[r].fetch_s, want[r].fetch_s, 1e-9);
        assert_close(got[r].copy_s, want[r].copy_s, 1e-9);
        assert_close(got[r].compute_s, want[r].compute_s, 1e-9);
        assert_close(got[r].allreduce_s, want[r].allreduce_s, 1e-9);
        assert_close(got[r].time_s, t[r], 1e-9);
        assert_true(got[r].wait_s == 0);
    }
    halo_sim_cost_free(c);
    tw_free(&tw);
}

/* ---------------------------------------------------------------- pipeline regimes */

/* A batch of one layer whose stages cost: sample `s` seconds of CPU, fetch `f`, compute `k`
 * (GPU), with a little traffic between the two ranks. */
static void stage_work(twork *t, halo_sim_profile *p, double s, double f, double k)
{
    tw_clear(t);
    p->sample_node_s = 1e-6;
    p->lookup_node_s = 1e-6;
    p->step_overhead_s = k;
    for (int r = 0; r < t->P; r++) {
        halo_sim_work *w = &t->w[r];
        w->num_dst[0] = 10;
        w->num_src[0] = 50;
        w->num_edges[0] = 100;
        w->local_nodes[0] = (int64_t)llround(s / 1e-6);
        w->lookups = (int64_t)llround(f / 1e-6);
        w->row_bytes = 64;
        w->input_nodes = 50;
        t->req[(size_t)r * t->P + (r + 1) % t->P] = 64;
        t->rep[(size_t)r * t->P + (r + 1) % t->P] = 128;
    }
    for (int r = 0; r < t->P; r++) {
        tw_pull(t, r, (r + 1) % t->P, 10);
    }
}

static void depth_zero_epoch_is_the_sum_of_its_stages(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(2, 2, 3);
    p.device = HALO_SIM_DEVICE_CPU;
    p.net_lat_s = 5e-6;
    p.shm_lat_s = 1e-6;
    p.nic_bw = 1e9;
    p.shm_bw = 5e9;
    p.gemm_flops = 1e10;
    p.agg_bw = 1e10;
    p.sample_edge_s = 1e-8;
    p.sample_node_s = 5e-8;
    p.gather_bw = 2e9;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 4, 2);
    halo_sim_cost *c = NULL;
    assert_int_equal(halo_sim_cost_new(&o, &c), 0);
    halo_sim_cost_epoch_begin(c, 0);
    for (int64_t b = 0; b < 20; b++) {
        tw_clear(&tw);
        for (int r = 0; r < 4; r++) {
            halo_sim_work *w = &tw.w[r];
            for (int l = 0; l < 2; l++) {
                w->num_dst[l] = 50 + 10 * r + b + 100 * (1 - l);
                w->num_src[l] = 4 * w->num_dst[l];
                w->num_edges[l] = 8 * w->num_dst[l];
                w->local_nodes[l] = w->num_dst[l] / 2;
                w->local_edges[l] = 8 * w->local_nodes[l];
                w->served_nodes[l] = w->num_dst[l] / 3;
                w->served_edges[l] = 8 * w->served_nodes[l];
                for (int q = 0; q < 4; q++) {
                    if (q != r) {
                        tw.req[(size_t)r * 8 + (size_t)l * 4 + q] = 32 + 40 * (q + r + b % 3);
                        tw.rep[(size_t)r * 8 + (size_t)l * 4 + q] = 400 * (q + 1);
                    }
                }
            }
            w->input_nodes = w->num_src[0];
            w->local_rows = w->input_nodes / 2;
            w->row_bytes = 256;
        }
        for (int r = 0; r < 4; r++) {
            for (int q = 0; q < 4; q++) {
                if (q != r) {
                    tw_pull(&tw, r, q, 30 * (q + 1) + b);
                }
            }
        }
        assert_int_equal(halo_sim_cost_batch(c, b, tw.w), 0);
    }
    halo_epoch_stats s[4];
    memset(s, 0, sizeof s);
    halo_sim_cost_epoch_end(c, s);
    for (int r = 0; r < 4; r++) {
        assert_true(s[r].time_s > 0);
        assert_close(s[r].time_s, stage_sum(&s[r]), 1e-9);
        assert_true(s[r].wait_s == 0);
        assert_true(s[r].copy_s == 0); /* CPU device: no copy stage */
        /* the stages' CPU work: positive, and at most their wall time (one thread each) */
        assert_true(s[r].sample_cpu_s > 0 && s[r].sample_cpu_s <= s[r].sample_s * (1 + 1e-9));
        assert_true(s[r].fetch_cpu_s > 0 && s[r].fetch_cpu_s <= s[r].fetch_s * (1 + 1e-9));
        assert_true(s[r].compute_cpu_s > 0 &&
                    s[r].compute_cpu_s <= (s[r].compute_s + s[r].allreduce_s) * (1 + 1e-9));
    }
    halo_sim_cost_free(c);
    tw_free(&tw);
}

static void deep_pipeline_runs_at_the_pace_of_its_slowest_stage(void **state)
{
    (void)state;
    const int64_t nb = 200;
    twork tw;
    tw_init(&tw, 2, 1);
    halo_epoch_stats s[2];
    /* fetch is the slowest stage: 3 ms per batch */
    halo_sim_profile p = fast_profile(2, 1, 8);
    stage_work(&tw, &p, 1e-3, 3e-3, 2e-3);
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    run_epoch(&o, &tw, nb, s);
    assert_close(s[0].time_s, (double)nb * 6e-3, 1e-3); /* depth 0: the sum of the stages */
    o = base_opts(&p, 4, 1);
    run_epoch(&o, &tw, nb, s);
    for (int r = 0; r < 2; r++) {
        assert_true(s[r].time_s >= (double)nb * 3e-3);
        assert_close(s[r].time_s, (double)nb * 3e-3, 0.02);
        assert_close(s[r].fetch_s, (double)nb * 3e-3, 1e-3);
        assert_true(s[r].wait_s > (double)nb * 0.9e-3); /* the compute waits 1 ms a batch */
    }
    /* sampling is the slowest, 8 ms, on 2 threads: 4 ms per batch */
    stage_work(&tw, &p, 8e-3, 3e-3, 2e-3);
    o = base_opts(&p, 4, 2);
    run_epoch(&o, &tw, nb, s);
    assert_close(s[0].time_s, (double)nb * 4e-3, 0.02);
    /* the same on 1 thread: 8 ms per batch */
    o = base_opts(&p, 4, 1);
    run_epoch(&o, &tw, nb, s);
    assert_close(s[0].time_s, (double)nb * 8e-3, 0.02);
    /* depth 1, stages of 2 ms each: bound by its 2 slots, each going through sample, fetch and
       compute (6 ms) in turn: 3 ms a batch; depth 4 (5 slots): the stages' 2 ms */
    stage_work(&tw, &p, 2e-3, 2e-3, 2e-3);
    o = base_opts(&p, 1, 1);
    run_epoch(&o, &tw, nb, s);
    assert_close(s[0].time_s, (double)nb * 3e-3, 0.02);
    o = base_opts(&p, 4, 1);
    run_epoch(&o, &tw, nb, s);
    assert_close(s[0].time_s, (double)nb * 2e-3, 0.02);
    tw_free(&tw);
}

/* ---------------------------------------------------------------- the slowest rank */

static void slowest_rank_bounds_every_step(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(2, 2, 8);
    p.gemm_flops = 1e11;
    p.net_lat_s = 1e-5;
    p.nic_bw = 1e9;
    p.sample_node_s = 1e-7;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 4, 2);
    const int slow = 2;
    for (int r = 0; r < 4; r++) {
        halo_sim_work *w = &tw.w[r];
        int64_t k = r == slow ? 3 : 1;
        for (int l = 0; l < 2; l++) {
            w->num_dst[l] = k * (1000 + 9000 * (1 - l));
            w->num_src[l] = k * (10000 + 40000 * (1 - l));
            w->num_edges[l] = 10 * w->num_dst[l];
            w->local_nodes[l] = 1000;
        }
        w->row_bytes = 400;
        for (int q = 0; q < 4; q++) {
            tw.req[(size_t)r * 8 + q] = q != r ? 400 : 0;
            tw.rep[(size_t)r * 8 + q] = q != r ? 4000 : 0;
        }
    }
    halo_epoch_stats s[4];
    run_epoch(&o, &tw, 50, s);
    for (int r = 0; r < 4; r++) {
        assert_close(s[r].time_s, s[slow].time_s, 1e-9);
        assert_close(s[r].time_s, stage_sum(&s[r]), 1e-9);
        if (r != slow) {
            /* the compute is 3x on the slow rank (same paths: the sizes scale together) */
            assert_close(s[slow].compute_s, 3 * s[r].compute_s, 0.01);
            /* what the fast rank did not compute it waits in the allreduce */
            assert_close(s[r].allreduce_s - s[slow].allreduce_s,
                         s[slow].compute_s - s[r].compute_s, 1e-6);
            assert_true(s[r].allreduce_s > 1.5 * s[r].compute_s);
        }
    }
    tw_free(&tw);
}

/* ---------------------------------------------------------------- NIC sharing */

/* fetch_s of rank 0 when ranks 0 and (if both) 1 of machine 0 each pull n rows of 1000 bytes,
 * rank 0 from rank 2, rank 1 from rank 3 (machine 1). */
static double pull_time(int nics, int both)
{
    halo_sim_profile p = fast_profile(2, 2, 8);
    p.nics = nics;
    p.nic_bw = 1e8;
    p.net_lat_s = 1e-6;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 4, 1);
    for (int r = 0; r < 4; r++) {
        tw.w[r].row_bytes = 1000;
        tw.w[r].num_dst[0] = 1;
        tw.w[r].num_src[0] = 1;
    }
    tw_pull(&tw, 0, 2, 10000);
    if (both) {
        tw_pull(&tw, 1, 3, 10000);
    }
    halo_epoch_stats s[4];
    run_epoch(&o, &tw, 5, s);
    tw_free(&tw);
    return s[0].fetch_s / 5;
}

static void trainers_of_a_machine_share_its_nics(void **state)
{
    (void)state;
    /* 10 MB at 100 MB/s: 0.1 s alone */
    double one = pull_time(1, 0);
    assert_close(one, 0.1, 0.01);
    /* one NIC for both trainers: each gets half */
    assert_close(pull_time(1, 1), 2 * one, 0.01);
    /* a NIC each: no slower than alone */
    double own = pull_time(2, 1);
    assert_close(own, pull_time(2, 0), 0.01);
    assert_close(own, one, 0.01);
}

/* ---------------------------------------------------------------- netem */

static void netem_sets_a_floor_on_every_exchange(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(1, 2, 8);
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 2, 1);
    for (int r = 0; r < 2; r++) {
        tw.w[r].row_bytes = 400;
        tw.w[r].num_dst[0] = 1;
        tw.w[r].num_src[0] = 1;
    }
    tw_pull(&tw, 0, 1, 1000);
    halo_epoch_stats s[2];
    run_epoch(&o, &tw, 4, s);
    assert_true(s[0].fetch_s < 1e-6); /* shm at 1e18 B/s: nothing */
    p.netem_lat_s = 1e-3;
    p.netem_bw = 1e7;
    run_epoch(&o, &tw, 4, s);
    /* ids: 4000 bytes, rows: 400000 bytes; each exchange at least lat + bytes / bw; the
       sampling exchanges move nothing and pay nothing */
    double fetch = (1e-3 + 4000 / 1e7) + (1e-3 + 400000 / 1e7);
    /* the allreduce: 2(P-1) latencies and 2(P-1)/P of its 4000 bytes */
    double ar = 2 * 1e-3 + 4000.0 * 2 / 2 / 1e7;
    for (int r = 0; r < 2; r++) {
        assert_close(s[r].fetch_s, 4 * fetch, 1e-6);
        assert_true(s[r].sample_s < 1e-6);
        assert_close(s[r].allreduce_s, 4 * ar, 1e-6);
    }
    /* the sleep's lateness (netem.over_us) once more per delay: 2 fetch exchanges and the
       allreduce a batch */
    p.netem_over_s = 50e-6;
    run_epoch(&o, &tw, 4, s);
    for (int r = 0; r < 2; r++) {
        assert_close(s[r].fetch_s, 4 * (fetch + 2 * 50e-6), 1e-6);
        assert_close(s[r].allreduce_s, 4 * (ar + 50e-6), 1e-6);
    }
    /* the sleep's CPU (netem.sleep_cpu_us) after each delay slept: the fetch's two on its CPU
       clock and in its time, the allreduce's in its time and on no clock (the runtime's
       compute clock stops for the allreduce); the sampling's exchanges move nothing, sleep
       nothing */
    halo_epoch_stats w[2];
    p.netem_sleep_cpu_s = 30e-6;
    run_epoch(&o, &tw, 4, w);
    for (int r = 0; r < 2; r++) {
        assert_close(w[r].fetch_cpu_s, s[r].fetch_cpu_s + 4 * 2 * 30e-6, 1e-6);
        assert_close(w[r].fetch_s, s[r].fetch_s + 4 * 2 * 30e-6, 1e-6);
        assert_close(w[r].allreduce_s, s[r].allreduce_s + 4 * 30e-6, 1e-6);
        assert_close(w[r].compute_cpu_s, s[r].compute_cpu_s, 1e-9);
        assert_close(w[r].sample_cpu_s, s[r].sample_cpu_s, 1e-9);
    }
    tw_free(&tw);
}


/* Rank 0's fetch CPU per batch: `ranks` ranks on 2 cores, each pulling 1000 rows of 512 bytes
 * from the next, tables of 8 MiB per rank, the fetch's rates of the model test (evicted 1 GB/s
 * at 64 MiB, 4 GB/s kept at 1 MiB) and, when kept > 0, kept at 64 MiB. */
static double fetch_cpu_per_batch(int ranks, double kept, double netem_lat)
{
    halo_sim_profile p = fast_profile(1, ranks, 2);
    p.fetch_bw = 1e9;
    p.fetch_cold_bytes = 64.0 * 1048576;
    p.fetch_warm_bw = 4e9;
    p.fetch_warm_bytes = 1048576;
    p.fetch_kept_bw = kept;
    p.netem_lat_s = netem_lat;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    o.table_bytes = 8.0 * 1048576;
    twork tw;
    tw_init(&tw, ranks, 1);
    for (int r = 0; r < ranks; r++) {
        tw.w[r].row_bytes = 512;
        tw.w[r].num_dst[0] = 1;
        tw.w[r].num_src[0] = 1;
        tw_pull(&tw, r, (r + 1) % ranks, 1000);
    }
    halo_epoch_stats s[4];
    run_epoch(&o, &tw, 4, s);
    tw_free(&tw);
    return s[0].fetch_cpu_s / 4;
}

/* A process with a core to itself and no emulated delays reads its table at the rate measured
 * batch after batch (halo_sim_cost_kept_bw: 8 MiB half-way in log2 between 4 GB/s at 1 MiB
 * and 2 GB/s at 64 MiB), any other at the rate between a kept 1 MiB table and an evicted one
 * (1.6 GB/s at 8 MiB) or, with emulated delays, evicted (1 GB/s): rank 0 gathers 1000 rows it
 * serves and scatters 1000 it receives. */
static void a_process_on_its_own_core_keeps_its_table(void **state)
{
    (void)state;
    double bytes = 2 * 1000 * 512.0, kept = 1.0 / (0.5 / 2e9 + 0.5 / 4e9);
    assert_close(fetch_cpu_per_batch(2, 2e9, 0), bytes / kept, 1e-9);
    assert_close(fetch_cpu_per_batch(2, 0, 0), bytes / 1.6e9, 1e-9); /* not measured */
    assert_close(fetch_cpu_per_batch(3, 2e9, 0), bytes / 1.6e9, 1e-9);
    assert_close(fetch_cpu_per_batch(4, 2e9, 0), bytes / 1.6e9, 1e-9);
    assert_close(fetch_cpu_per_batch(2, 2e9, 1e-3), bytes / 1e9, 1e-9);
}

/* ---------------------------------------------------------------- allreduce */

/* allreduce_s of rank 0 for a batch with no other work. */
static double allreduce_time(const halo_sim_profile *p, int64_t floats)
{
    halo_sim_cost_opts o = base_opts(p, 0, 1);
    o.grad_floats = floats;
    twork tw;
    tw_init(&tw, o.ranks, 1);
    halo_epoch_stats s[4];
    run_epoch(&o, &tw, 3, s);
    tw_free(&tw);
    for (int r = 1; r < o.ranks; r++) {
        assert_close(s[r].allreduce_s, s[0].allreduce_s, 1e-12);
    }
    return s[0].allreduce_s / 3;
}

static void allreduce_is_a_ring_hierarchical_across_machines(void **state)
{
    (void)state;
    double B = 4e6, lat_shm = 2e-6, lat_net = 1e-5, lat_ar = 3e-6, shm = 2e10, nic = 1e9;
    halo_sim_profile p = fast_profile(2, 2, 8);
    p.shm_lat_s = lat_shm;
    p.shm_bw = shm;
    p.net_lat_s = lat_net;
    p.nic_bw = nic;
    p.allreduce_lat_s = lat_ar;
    /* 2 machines x 2 trainers, one NIC: reduce-scatter inside (1 step of B/2), a ring across
       the machines on each half (2(M-1)/M of B/2 each way, both halves through one NIC),
       all-gather inside */
    double inside = (lat_shm + lat_ar) + B / 2 / shm;
    double across = 2 * (B / 2) / nic + 2 * (lat_net + lat_ar);
    assert_close(allreduce_time(&p, 1000000), 2 * inside + across, 1e-9);
    /* a NIC per trainer: each half has its own */
    p.nics = 2;
    across = (B / 2) / nic + 2 * (lat_net + lat_ar);
    assert_close(allreduce_time(&p, 1000000), 2 * inside + across, 1e-9);
    /* one machine of 4: a plain ring at shm rates, 2(P-1) steps of B/P */
    halo_sim_profile q = p;
    q.machines = 1;
    q.trainers = 4;
    assert_close(allreduce_time(&q, 1000000), 6 * (lat_shm + lat_ar) + 1.5 * B / shm, 1e-9);
    /* the latency with more ranks than cores: not used while the 4 ranks have 8 cores, used
       in place of the shm latency on 2 cores, and the shm latency when it is absent (0) */
    double lat_over = 7e-6;
    q.oversub_lat_s = lat_over;
    assert_close(allreduce_time(&q, 1000000), 6 * (lat_shm + lat_ar) + 1.5 * B / shm, 1e-9);
    q.cores = 2;
    assert_close(allreduce_time(&q, 1000000), 6 * (lat_over + lat_ar) + 1.5 * B / shm, 1e-9);
    q.oversub_lat_s = 0;
    assert_close(allreduce_time(&q, 1000000), 6 * (lat_shm + lat_ar) + 1.5 * B / shm, 1e-9);
}

/* A profile with the runtime's own allreduce measured (halo calibrate's probe): one machine's
 * allreduce is MPI's in-place binomial reduce and broadcast, 2 ceil(log2 T) rounds of the
 * whole buffer, each a latency and B / (2 allreduce_bw); on a CPU the trainer's two passes
 * over the gradients (scaled into the buffer, copied back) are in the allreduce's time and
 * on no stage's CPU clock. */
static void allreduce_of_one_machine_is_the_runtimes_binomial(void **state)
{
    (void)state;
    double B = 4e6, lat = 2e-6, lat_ar = 3e-6, arbw = 2e9;
    halo_sim_profile p = fast_profile(1, 2, 8);
    p.shm_lat_s = lat;
    p.allreduce_lat_s = lat_ar;
    p.allreduce_bw = arbw;
    /* 2 ranks: one round each way, the buffer at allreduce_bw */
    assert_close(allreduce_time(&p, 1000000), 2 * (lat + lat_ar) + B / arbw, 1e-9);
    /* 3 and 4 ranks: two rounds each way */
    for (int T = 3; T <= 4; T++) {
        p.trainers = T;
        assert_close(allreduce_time(&p, 1000000), 4 * (lat + lat_ar) + 2 * B / arbw, 1e-9);
    }
    /* two machines keep the hierarchical ring (the clusters' profiles) */
    halo_sim_profile m = p;
    m.machines = 2;
    m.trainers = 1;
    m.net_lat_s = 1e-5;
    m.nic_bw = 1e9;
    assert_close(allreduce_time(&m, 1000000), (B / 1e9) + 2 * (1e-5 + lat_ar), 1e-9);
    /* the buffer's two passes at memcpy_bw: in the allreduce's time, on no CPU clock (a CPU
       trainer's) */
    p.trainers = 2;
    p.device = HALO_SIM_DEVICE_CPU;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    o.grad_floats = 1000000;
    twork tw;
    tw_init(&tw, 2, 1);
    halo_epoch_stats s[2], w[2];
    run_epoch(&o, &tw, 3, s);
    p.memcpy_bw = 1e10;
    run_epoch(&o, &tw, 3, w);
    tw_free(&tw);
    for (int r = 0; r < 2; r++) {
        assert_close(w[r].allreduce_s, s[r].allreduce_s + 3 * 2 * B / 1e10, 1e-6);
        assert_close(w[r].compute_cpu_s, s[r].compute_cpu_s, 1e-12);
        assert_close(w[r].compute_s, s[r].compute_s, 1e-12);
    }
}

/* Rank 0's epoch time of `trainers` CPU trainers on a machine of 8 cores, depth 0, 4000
 * batches of the same compute, with cpu.jitter sigma. */
static double jitter_epoch(int trainers, double sigma)
{
    halo_sim_profile p = fast_profile(1, trainers, 8);
    p.device = HALO_SIM_DEVICE_CPU;
    p.gemm_flops = 1e9;
    p.jitter = sigma;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, trainers, 1);
    for (int r = 0; r < trainers; r++) {
        tw.w[r].num_dst[0] = 100;
        tw.w[r].num_src[0] = 800;
        tw.w[r].num_edges[0] = 1000;
    }
    halo_epoch_stats s[2];
    run_epoch(&o, &tw, 4000, s);
    tw_free(&tw);
    return s[0].time_s;
}

/* cpu.jitter: each CPU step takes its mean time times a lognormal draw of mean 1 (sigma of its
 * log: jitter), drawn from a hash of the thread and its step count, so a run gives the same
 * time every time; a rank alone keeps its mean time, and two ranks that meet in an exchange at
 * every step wait for the slower draw: E[max of 2] = 2 Phi(sigma / sqrt 2) of the mean. */
static void jittered_ranks_wait_for_the_slower_draw(void **state)
{
    (void)state;
    double sigma = 0.3;
    double one = jitter_epoch(1, 0), one_j = jitter_epoch(1, sigma);
    assert_true(one > 0);
    assert_true(one_j != one);                       /* drawn */
    assert_close(jitter_epoch(1, sigma), one_j, 0);  /* the same draws every run */
    assert_close(one_j, one, 0.02);                  /* the mean kept (4000 draws: 0.5 %) */
    double two = jitter_epoch(2, 0), two_j = jitter_epoch(2, sigma);
    double emax = 2 * 0.5 * erfc(-sigma / sqrt(2.0) / sqrt(2.0));
    assert_close(two_j / two, emax, 0.02); /* 1.168; without the wait 1 */
}

/* ---------------------------------------------------------------- CPU contention */

/* Oversubscription penalties by kind of work (gathers, GEMMs, sampling), -1: as penalty. */
static double pen_kind[3] = {-1, -1, -1};
/* Latency of a message between the ranks (0: none, exchanges take no time). */
static double lat_between = 0;
/* The profile's share_eff (0: not measured, full speed). */
static double share_between = 0;
/* The emulated delay of every exchange that moves bytes (netem_lat_s; 0: none). */
static double delay_between = 0;
/* The crowding probe's penalties (sampling, fetch, compute) and its ranks (0: none). */
static double crowd[4] = {0, 0, 0, 0};

/* Every rank's stats (s[trainers]) when `trainers` trainers (CPU device) share one machine of
 * `cores` at pipeline depth `depth`, rank 0 sampling `big` times the others' frontier. */
static void contended_ranks(int cores, int trainers, int depth, double big, double penalty,
                            double slice, double poll, halo_epoch_stats *s)
{
    halo_sim_profile p = fast_profile(1, trainers, cores);
    p.oversub_penalty = pen_kind[0] >= 0 ? pen_kind[0] : penalty;
    p.oversub_gemm = pen_kind[1] >= 0 ? pen_kind[1] : penalty;
    p.oversub_sample = pen_kind[2] >= 0 ? pen_kind[2] : penalty;
    p.crowd_sample = crowd[0];
    p.crowd_fetch = crowd[1];
    p.crowd_compute = crowd[2];
    p.crowd_ranks = crowd[3];
    p.slice_s = slice;
    p.poll_frac = poll;
    p.share_eff = share_between;
    p.netem_lat_s = delay_between;
    p.shm_lat_s = lat_between;
    p.device = HALO_SIM_DEVICE_CPU;
    p.sample_node_s = 1e-6;
    p.sample_edge_s = 1e-7;
    p.lookup_node_s = 1e-6;
    p.gather_bw = 1e9;
    p.gemm_flops = 1e9;
    p.adam_bw = 1e9;
    halo_sim_cost_opts o = base_opts(&p, depth, 1);
    twork tw;
    tw_init(&tw, trainers, 1);
    for (int r = 0; r < trainers; r++) {
        halo_sim_work *w = &tw.w[r];
        w->num_dst[0] = 100;
        w->num_src[0] = 800;
        w->num_edges[0] = 1000;
        w->local_nodes[0] = r == 0 ? (int64_t)(1000 * big) : 1000;
        w->local_edges[0] = r == 0 ? (int64_t)(10000 * big) : 10000;
        w->lookups = 2000;
        w->local_rows = 1000;
        w->row_bytes = 400;
    }
    for (int r = 0; r < trainers && delay_between > 0; r++) {
        tw_pull(&tw, r, (r + 1) % trainers, 100); /* bytes to delay */
    }
    run_epoch(&o, &tw, 10, s);
    tw_free(&tw);
}

/* Stats of rank 0 when `trainers` symmetric trainers share one machine of `cores`. */
static halo_epoch_stats contended_with(int cores, int trainers, double penalty, double slice,
                                       double poll)
{
    halo_epoch_stats s[8]; /* up to 8 trainers */
    contended_ranks(cores, trainers, 0, 1, penalty, slice, poll, s);
    return s[0];
}

static halo_epoch_stats contended_full(int cores, int trainers, double penalty, double slice)
{
    return contended_with(cores, trainers, penalty, slice, 0);
}

static halo_epoch_stats contended_poll(int cores, int trainers, double poll)
{
    return contended_with(cores, trainers, 0, 0, poll);
}

static halo_epoch_stats contended_pen(int cores, int trainers, double penalty)
{
    return contended_full(cores, trainers, penalty, 0);
}

static halo_epoch_stats contended(int cores, int trainers)
{
    return contended_pen(cores, trainers, 0);
}

/* Time slices: 4 trainers on 2 cores whose tasks give their core up after 10 us while others
 * wait. A compute no longer runs to its end on the core it got: the queued ranks' work runs
 * inside it, so each compute takes longer (up to twice: two tasks per core) while the cores do
 * the same work (the epoch within the order of one slice per step); with every task shorter
 * than the slice, or the cores enough for everyone, nothing changes. */
static void tasks_give_their_core_up_at_the_end_of_a_slice(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_full(2, 4, 0, 0), b = contended_full(2, 4, 0, 10e-6);
    assert_true(b.compute_s > 1.3 * a.compute_s && b.compute_s < 2.01 * a.compute_s);
    assert_close(b.time_s, a.time_s, 0.05);
    assert_close(b.compute_cpu_s, a.compute_cpu_s, 1e-9); /* the same work */
    halo_epoch_stats c = contended_full(2, 4, 0, 1.0);
    assert_close(c.compute_s, a.compute_s, 1e-12);
    assert_close(c.time_s, a.time_s, 1e-12);
    halo_epoch_stats d = contended_full(4, 4, 0, 0), e = contended_full(4, 4, 0, 10e-6);
    assert_close(e.time_s, d.time_s, 1e-12);
    assert_close(e.compute_s, d.compute_s, 1e-12);
}

/* Pollers: with more busy threads than cores and every core taken, each thread waiting in an
 * exchange takes poll_frac of a core from the running tasks; with a core per thread, nothing. */
static void waiting_threads_poll_on_an_oversubscribed_machine(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_full(2, 4, 0, 0);
    halo_epoch_stats b = contended_poll(2, 4, 0.2), c = contended_poll(4, 4, 0.2),
                     d = contended_full(4, 4, 0, 0);
    assert_true(b.time_s > 1.05 * a.time_s);
    assert_true(b.compute_s > a.compute_s);
    assert_close(b.compute_cpu_s, a.compute_cpu_s, 1e-9); /* the same work, slower */
    assert_close(c.time_s, d.time_s, 1e-12);
}

/* Every waiting thread polls: 8 trainers on 2 cores, most of them waiting at a time, each take
 * poll_frac (0.2) of a core, so the tasks lose more than poll_frac of each core (the cap until
 * the tenth pass: at most 1 / (1 - 0.2) = 1.25 times the epoch without polling), and at most
 * what 7 pollers take, 0.7 of the cores (3.3 times). */
static void every_waiting_thread_polls_up_to_a_fair_share(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_full(2, 8, 0, 0), b = contended_poll(2, 8, 0.2);
    assert_true(b.time_s > 1.5 * a.time_s);
    assert_true(b.time_s < 3.34 * a.time_s);
    assert_close(b.compute_cpu_s, a.compute_cpu_s, 1e-9); /* the same work, slower */
}

/* A pipelined trainer computes at the pace of its CPU clock: 2 trainers on 2 cores at depth 1
 * (6 busy threads), rank 0 sampling 4 times the other's frontier (the ranks' stages do not run
 * in step), exchanges of 200 us, pollers at 0.2 of a core each. While a trainer computes
 * beside another rank's fetch or sampling, the pollers take their CPU from that task, not from
 * the compute (measured, the runtime's compute_s equals its compute_cpu_s there): the
 * compute's time is its CPU within 1 % (it loses its share only while the computes of both
 * ranks hold the cores; 22 % longer when every task loses it), while the epoch is longer
 * than without pollers by what they take. */
static void pollers_spare_a_pipelined_trainers_compute(void **state)
{
    (void)state;
    halo_epoch_stats a[2], b[2];
    lat_between = 200e-6;
    contended_ranks(2, 2, 1, 4, 0, 0, 0, a);
    contended_ranks(2, 2, 1, 4, 0, 0, 0.2, b);
    lat_between = 0;
    assert_true(b[0].compute_cpu_s > 0);
    assert_close(b[0].compute_cpu_s, a[0].compute_cpu_s, 1e-9); /* the same work */
    assert_close(b[0].compute_s, b[0].compute_cpu_s, 0.01);
    assert_true(b[0].time_s > 1.1 * a[0].time_s);
}

/* ... nor does the sharing's efficiency: 2 trainers on 2 cores at depth 1, share_eff 0.5.
 * While tasks queue the samplers and fetch threads run at half speed, so the epoch and the
 * sampling take longer; a pipelined trainer's compute keeps its pace (its time is its CPU,
 * as measured; until the sixteenth pass it lost the share too, and the compute of the
 * pipelined runs of seeds 76-78 was 24-48 % long). At depth 0 the compute loses it. */
static void sharing_spares_a_pipelined_trainers_compute(void **state)
{
    (void)state;
    halo_epoch_stats a[2], b[2];
    lat_between = 200e-6;
    contended_ranks(2, 2, 1, 4, 0, 0, 0, a);
    share_between = 0.5;
    contended_ranks(2, 2, 1, 4, 0, 0, 0, b);
    share_between = 0;
    lat_between = 0;
    assert_true(b[0].compute_cpu_s > 0);
    assert_close(b[0].compute_s, b[0].compute_cpu_s, 0.01);
    assert_close(b[0].compute_s, a[0].compute_s, 0.01);
    assert_true(b[0].sample_s > 1.1 * a[0].sample_s && b[0].time_s > a[0].time_s);
    halo_epoch_stats c = contended(2, 4);
    share_between = 0.5;
    halo_epoch_stats d = contended(2, 4);
    share_between = 0;
    assert_true(d.compute_s > 1.2 * c.compute_s);
}

/* A thread that sleeps to its emulated delay's deadline does not poll (the runtime polls
 * until the exchange's messages are in, then sleeps): 2 symmetric trainers on 2 cores at depth
 * 1, pulling rows from each other, every exchange that moves bytes 5 ms long. The threads
 * wait in those sleeps far longer than for each other, so pollers at 0.2 of a core each leave
 * the epoch as it was (0.4 % shorter; until the sixteenth pass a sleeping thread counted as a
 * poller: 2.7 % longer). */
static void threads_asleep_to_a_delay_do_not_poll(void **state)
{
    (void)state;
    halo_epoch_stats a[2], b[2];
    delay_between = 5e-3;
    contended_ranks(2, 2, 1, 1, 0, 0, 0, a);
    contended_ranks(2, 2, 1, 1, 0, 0, 0.2, b);
    delay_between = 0;
    assert_true(a[0].time_s > 0.02);
    assert_true(b[0].time_s < 1.015 * a[0].time_s);
}

/* The oversubscription penalty: 4 processes on 2 cores with penalty 0.5 run their CPU work
 * 1 + 0.5 = 1.5 times slower while more than two of them have work; 2 on 2 cores pay
 * nothing. */
static void oversubscribed_machines_pay_the_penalty(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_pen(2, 4, 0), b = contended_pen(2, 4, 0.5);
    assert_true(a.sample_s > 0 && a.compute_s > 0);
    /* the four always have work (symmetric, queued for the cores): each task is slowed the
       whole time, its CPU clock counts it */
    assert_close(b.sample_cpu_s, 1.5 * a.sample_cpu_s, 1e-9);
    assert_close(b.fetch_cpu_s, 1.5 * a.fetch_cpu_s, 1e-9);
    assert_close(b.compute_cpu_s, 1.5 * a.compute_cpu_s, 1e-9);
    assert_close(b.compute_s, 1.5 * a.compute_s, 1e-9);
    assert_true(b.sample_s > 1.2 * a.sample_s && b.time_s > 1.2 * a.time_s);
    /* 8 on 2 cores: 3 beyond per core, the same penalty (a task refills its caches once per
       turn on its core, however many others took it meanwhile); 3 on 2 cores too (every core
       already alternates between processes; a penalty growing from 2 to 4 made it 1.25) */
    assert_close(contended_pen(2, 8, 0.5).compute_cpu_s,
                 1.5 * contended_pen(2, 8, 0).compute_cpu_s, 1e-9);
    assert_close(contended_pen(2, 3, 0.5).compute_cpu_s,
                 1.5 * contended_pen(2, 3, 0).compute_cpu_s, 1e-9);
    halo_epoch_stats c = contended_pen(2, 2, 0), d = contended_pen(2, 2, 0.5);
    assert_close(d.sample_s, c.sample_s, 1e-12);
    assert_close(d.time_s, c.time_s, 1e-12);
}

/* Stats of every rank when `trainers` trainers share 2 cores at pipeline depth `depth` and
 * rank 0 samples `big` times the others' frontier (`penalty` for every kind of work). */
static void uneven_pen(int trainers, int depth, double big, double penalty, halo_epoch_stats *s)
{
    contended_ranks(2, trainers, depth, big, penalty, 0, 0, s);
}

/* The penalty is paid while more processes than cores have work: 4 trainers on 2 cores of
 * which rank 0 samples 20 times the others' frontier. The others' sampling runs beside it
 * (4 processes with work) and pays the whole x 1.5; most of rank 0's runs after theirs has
 * ended and they wait for it in the exchange, with no work, so it pays far less (a penalty
 * fixed by the number of trainers made it 1.5 too). */
static void only_processes_with_work_count_beyond_the_cores(void **state)
{
    (void)state;
    halo_epoch_stats a[4], b[4];
    uneven_pen(4, 0, 20, 0, a);
    uneven_pen(4, 0, 20, 0.5, b);
    assert_true(a[0].sample_cpu_s > 10 * a[1].sample_cpu_s);
    assert_true(b[0].sample_cpu_s > 1.0 * a[0].sample_cpu_s);
    assert_true(b[0].sample_cpu_s < 1.15 * a[0].sample_cpu_s);
    assert_close(b[1].sample_cpu_s, 1.5 * a[1].sample_cpu_s, 1e-9);
    /* the compute, which all four run together, pays the whole penalty */
    assert_close(b[0].compute_cpu_s, 1.5 * a[0].compute_cpu_s, 1e-9);
}

/* Threads of one process are not counted: 2 trainers on 2 cores pay nothing at depth 0 (a
 * thread each) nor at depth 1 (trainer, fetch and sampler threads: 6 on 2 cores), and 3
 * trainers at depth 1 pay it while the third has work. */
static void pipeline_threads_do_not_count_beyond_the_cores(void **state)
{
    (void)state;
    halo_epoch_stats a[3], b[3];
    uneven_pen(2, 0, 1, 0, a);
    uneven_pen(2, 0, 1, 0.5, b);
    assert_close(b[0].sample_cpu_s, a[0].sample_cpu_s, 1e-12);
    assert_close(b[0].time_s, a[0].time_s, 1e-12);
    uneven_pen(2, 1, 1, 0, a);
    uneven_pen(2, 1, 1, 0.5, b);
    assert_close(b[0].sample_cpu_s, a[0].sample_cpu_s, 1e-12);
    assert_close(b[0].compute_cpu_s, a[0].compute_cpu_s, 1e-12);
    assert_close(b[0].time_s, a[0].time_s, 1e-12);
    uneven_pen(3, 1, 1, 0, a);
    uneven_pen(3, 1, 1, 0.5, b);
    assert_true(b[0].sample_cpu_s > 1.05 * a[0].sample_cpu_s);
    assert_true(b[0].time_s > a[0].time_s);
}

/* Each kind of work pays its own penalty: the sampler's alone slows the sampling stage and
 * nothing else; the GEMMs' alone slows the compute by less than the whole penalty (its
 * aggregation is a gather's work); the gathers' alone slows the fetch and not the sampling. */
static void each_kind_of_work_pays_its_own_penalty(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_pen(2, 4, 0);
    pen_kind[0] = 0, pen_kind[1] = 0, pen_kind[2] = 0.5;
    halo_epoch_stats s = contended_pen(2, 4, 0);
    pen_kind[0] = 0, pen_kind[1] = 0.5, pen_kind[2] = 0;
    halo_epoch_stats g = contended_pen(2, 4, 0);
    pen_kind[0] = 0.5, pen_kind[1] = 0, pen_kind[2] = 0;
    halo_epoch_stats r = contended_pen(2, 4, 0);
    pen_kind[0] = pen_kind[1] = pen_kind[2] = -1;
    assert_close(s.sample_cpu_s, 1.5 * a.sample_cpu_s, 1e-9);
    assert_close(s.fetch_cpu_s, a.fetch_cpu_s, 1e-9);
    assert_close(s.compute_cpu_s, a.compute_cpu_s, 1e-9);
    assert_close(g.sample_cpu_s, a.sample_cpu_s, 1e-9);
    assert_close(g.fetch_cpu_s, a.fetch_cpu_s, 1e-9);
    assert_true(g.compute_cpu_s > 1.05 * a.compute_cpu_s);
    assert_true(g.compute_cpu_s < 1.5 * a.compute_cpu_s);
    assert_close(r.sample_cpu_s, a.sample_cpu_s, 1e-9);
    assert_close(r.fetch_cpu_s, 1.5 * a.fetch_cpu_s, 1e-9);
    assert_true(r.compute_cpu_s > a.compute_cpu_s);
}

/* Penalties measured on training (crowd_*, with crowd_ranks > 0) replace the unit probe's by
 * kind of work: each stage's CPU work, the compute's whole (GEMMs, aggregation, Adam), runs
 * 1 + its crowding penalty times slower with 4 trainers on 2 cores (one process beyond the
 * cores per core), whatever oversub_* say; not with a core per trainer; and without
 * crowd_ranks the crowd_* fields are not used. */
static void penalties_measured_on_training_replace_the_units(void **state)
{
    (void)state;
    halo_epoch_stats a = contended_pen(2, 4, 0), u = contended_pen(2, 4, 0.9);
    crowd[0] = 0.2, crowd[1] = 0.4, crowd[2] = 0.1, crowd[3] = 4;
    halo_epoch_stats c = contended_pen(2, 4, 0.9), d = contended_pen(4, 4, 0.9);
    crowd[3] = 0;
    halo_epoch_stats n = contended_pen(2, 4, 0.9);
    crowd[0] = crowd[1] = crowd[2] = 0;
    halo_epoch_stats e = contended_pen(4, 4, 0);
    assert_true(u.sample_cpu_s > 1.5 * a.sample_cpu_s); /* the units' 0.9 */
    assert_close(c.sample_cpu_s, 1.2 * a.sample_cpu_s, 1e-9);
    assert_close(c.fetch_cpu_s, 1.4 * a.fetch_cpu_s, 1e-9);
    assert_close(c.compute_cpu_s, 1.1 * a.compute_cpu_s, 1e-9);
    assert_close(d.sample_cpu_s, e.sample_cpu_s, 1e-12);
    assert_close(d.fetch_cpu_s, e.fetch_cpu_s, 1e-12);
    assert_close(d.compute_cpu_s, e.compute_cpu_s, 1e-12);
    assert_close(n.sample_cpu_s, u.sample_cpu_s, 1e-12);
    assert_close(n.compute_cpu_s, u.compute_cpu_s, 1e-12);
}

/* Rank 0's stats, 2 CPU trainers on 4 cores at depth 0, each pulling 10 rows from the other,
 * each exchange that moves bytes a delay of `lat` (0: none), the wake_* points set to `pen`
 * (sampling) and 2 x pen (compute). */
static halo_epoch_stats after_waits(double lat, const double pen[HALO_SIM_WAKE_GAPS])
{
    halo_sim_profile p = fast_profile(1, 2, 4);
    p.device = HALO_SIM_DEVICE_CPU;
    p.sample_node_s = 1e-6;
    p.lookup_node_s = 1e-6;
    p.gemm_flops = 1e9;
    p.netem_lat_s = lat;
    for (int i = 0; i < HALO_SIM_WAKE_GAPS; i++) {
        p.wake_sample[i] = pen[i];
        p.wake_compute[i] = 2 * pen[i];
    }
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 2, 1);
    for (int r = 0; r < 2; r++) {
        tw.w[r].num_dst[0] = 100;
        tw.w[r].num_src[0] = 800;
        tw.w[r].num_edges[0] = 1000;
        tw.w[r].local_nodes[0] = 1000;
        tw.w[r].lookups = 100;
        tw.w[r].row_bytes = 64;
        tw_pull(&tw, r, 1 - r, 10);
    }
    halo_epoch_stats s[2];
    run_epoch(&o, &tw, 4, s);
    tw_free(&tw);
    return s[0];
}

/* Back from a wait (cpu.wake_*): a step whose thread was off the CPU g seconds since its last
 * step of the kind (sampling; compute or Adam) costs 1 + the penalty at g (between the
 * measured gaps in log g, linear from 0 below the first, the last beyond). At depth 0 with
 * 3 ms delays the fetch's two exchanges and the allreduce's two wait (the sampling's move
 * nothing): every compute comes 6 ms off the CPU after the last Adam (which has next to no
 * work here), every sampling but the first 12 ms after the last. Without delays nothing waits
 * and nothing changes; without penalties nothing changes. */
static void a_step_back_from_a_wait_runs_slower(void **state)
{
    (void)state;
    const double g[HALO_SIM_WAKE_GAPS] = {250e-6, 1e-3, 4e-3, 16e-3};
    for (int i = 0; i < HALO_SIM_WAKE_GAPS; i++) {
        assert_close(halo_sim_wake_gap[i], g[i], 1e-12);
    }
    const double pen[HALO_SIM_WAKE_GAPS] = {0.05, 0.1, 0.2, 0.4}, none[4] = {0};
    assert_true(halo_sim_cost_wake_pen(pen, 0) == 0);
    assert_close(halo_sim_cost_wake_pen(pen, 125e-6), 0.025, 1e-12);
    assert_close(halo_sim_cost_wake_pen(pen, 2e-3), 0.15, 1e-12);
    assert_close(halo_sim_cost_wake_pen(pen, 8e-3), 0.3, 1e-12);
    assert_close(halo_sim_cost_wake_pen(pen, 1.0), 0.4, 1e-12);
    halo_epoch_stats a = after_waits(3e-3, none), b = after_waits(3e-3, pen);
    double p6 = halo_sim_cost_wake_pen(pen, 6e-3), p12 = halo_sim_cost_wake_pen(pen, 12e-3);
    assert_close(p6, 0.2 + 0.2 * log(1.5) / log(4.0), 1e-12);
    assert_close(p12, 0.2 + 0.2 * log(3.0) / log(4.0), 1e-12);
    assert_close(b.compute_cpu_s, a.compute_cpu_s * (1 + 2 * p6), 1e-6);
    /* each batch's sampling the same work; the first's at no penalty */
    assert_close(b.sample_cpu_s, a.sample_cpu_s / 4 * (1 + 3 * (1 + p12)), 1e-6);
    assert_true(b.time_s > a.time_s);
    halo_epoch_stats c = after_waits(0, none), d = after_waits(0, pen);
    assert_close(d.compute_cpu_s, c.compute_cpu_s, 1e-9);
    assert_close(d.sample_cpu_s, c.sample_cpu_s, 1e-9);
}

/* A compute step's slow-down by its size: the large probe step's figures at wake_step_s or
 * more, the small one's at wake_small_s or less, between in log(work); without a small step
 * measured, the large one's at every size. */
static void a_short_step_pays_the_small_probes_slow_down(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(1, 1, 1);
    const double big[HALO_SIM_WAKE_GAPS] = {0, 0.05, 0.1, 0.2},
                 small[HALO_SIM_WAKE_GAPS] = {0.1, 0.3, 0.5, 0.9};
    memcpy(p.wake_compute, big, sizeof big);
    memcpy(p.wake_small, small, sizeof small);
    p.wake_step_s = 4e-3;
    assert_close(halo_sim_cost_wake_compute(&p, 1e-4, 16e-3), 0.2, 1e-12); /* no small step */
    p.wake_small_s = 4e-4;
    assert_close(halo_sim_cost_wake_compute(&p, 1e-2, 16e-3), 0.2, 1e-12);
    assert_close(halo_sim_cost_wake_compute(&p, 4e-3, 4e-3), 0.1, 1e-12);
    assert_close(halo_sim_cost_wake_compute(&p, 1e-4, 16e-3), 0.9, 1e-12);
    assert_close(halo_sim_cost_wake_compute(&p, 4e-4, 1e-3), 0.3, 1e-12);
    /* half-way in log between the sizes, at 2 ms off the CPU (half-way between 1 and 4 ms) */
    double w = sqrt(4e-4 * 4e-3);
    assert_close(halo_sim_cost_wake_compute(&p, w, 2e-3), 0.5 * (0.4 + 0.075), 1e-12);
    assert_true(halo_sim_cost_wake_compute(&p, w, 0) == 0);
}

/* Cores are served in arrival order: a task runs at full speed on the core it gets, the
 * others queue. 4 symmetric trainers on 2 cores take twice the time of 4 cores per step (the
 * same work, half the cores); each one's compute is no slower (the trainer that queues for a
 * core starts its compute when it gets one, like the runtime's timer), and the wait for the
 * queued ranks lands in the allreduce of the others. */
static void trainers_of_a_machine_share_its_cores(void **state)
{
    (void)state;
    halo_epoch_stats four = contended(4, 4), two = contended(2, 4);
    assert_true(four.sample_s > 0 && four.fetch_s > 0 && four.compute_s > 0);
    /* twice, to within the order the queued ranks' exchange work takes (1e-3) */
    assert_close(two.time_s, 2 * four.time_s, 1e-3);
    assert_close(two.compute_s, four.compute_s, 1e-9);
    assert_true(two.allreduce_s > four.allreduce_s + 0.5 * four.compute_s);
    /* one trainer on 4 cores computes on all of them (threads = cores / trainers); its
       single-threaded stages are no faster than on one core */
    halo_epoch_stats alone4 = contended(4, 1), alone1 = contended(1, 1);
    assert_close(alone1.compute_s, 4 * alone4.compute_s, 1e-9);
    assert_close(alone1.sample_s, alone4.sample_s, 1e-9);
    assert_close(alone4.sample_s, four.sample_s, 1e-9);
}

/* ---------------------------------------------------------------- timeline */

static void timeline_holds_every_stage_on_its_thread(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(2, 1, 8);
    twork tw;
    tw_init(&tw, 2, 1);
    stage_work(&tw, &p, 2e-3, 1e-3, 1e-3);
    p.pcie_lat_s = 1e-4;
    halo_timeline tl;
    halo_timeline_init(&tl, 0);
    halo_sim_cost_opts o = base_opts(&p, 2, 2);
    o.timeline = &tl;
    halo_sim_cost *c = NULL;
    assert_int_equal(halo_sim_cost_new(&o, &c), 0);
    const int64_t nb = 6;
    halo_epoch_stats s[2][2];
    memset(s, 0, sizeof s);
    for (int ep = 0; ep < 2; ep++) {
        halo_sim_cost_epoch_begin(c, ep);
        for (int64_t b = 0; b < nb; b++) {
            assert_int_equal(halo_sim_cost_batch(c, b, tw.w), 0);
        }
        halo_sim_cost_epoch_end(c, s[ep]);
    }
    halo_sim_cost_free(c);
    assert_int_equal(tl.n, 2 * 2 * nb * 5);
    static const char *const names[5] = {"sample", "fetch", "copy", "compute", "allreduce"};
    double epoch0_end = fmax(s[0][0].time_s, s[0][1].time_s);
    for (int ep = 0; ep < 2; ep++) {
        for (int r = 0; r < 2; r++) {
            double sum[5] = {0};
            double st[5][6], en[5][6];
            for (int64_t i = 0; i < tl.n; i++) {
                const halo_timeline_event *e = &tl.ev[i];
                if (e->rank != r || e->epoch != ep) {
                    continue;
                }
                int k = 0;
                while (k < 5 && strcmp(e->stage, names[k]) != 0) {
                    k++;
                }
                assert_true(k < 5);
                assert_true(e->end >= e->start);
                assert_int_equal(e->thread, k == 0 ? (int)(e->batch % 2) : 0);
                if (ep == 1) {
                    assert_true(e->start >= epoch0_end - 1e-12);
                }
                sum[k] += e->end - e->start;
                st[k][e->batch] = e->start;
                en[k][e->batch] = e->end;
            }
            assert_close(sum[0], s[ep][r].sample_s, 1e-9);
            assert_close(sum[1], s[ep][r].fetch_s, 1e-9);
            assert_close(sum[2], s[ep][r].copy_s, 1e-9);
            /* compute_s = compute intervals + Adam (inside the allreduce interval) */
            assert_close(sum[3] + sum[4], s[ep][r].compute_s + s[ep][r].allreduce_s, 1e-9);
            for (int64_t b = 0; b < nb; b++) {
                for (int k = 1; k < 5; k++) {
                    assert_true(st[k][b] >= en[k - 1][b] - 1e-12); /* stage order */
                }
                if (b > 0) {
                    assert_true(st[1][b] >= en[1][b - 1] - 1e-12); /* one fetch thread */
                    assert_true(st[2][b] >= en[4][b - 1] - 1e-12); /* one trainer */
                }
                if (b >= 3) {
                    assert_true(st[0][b] >= en[4][b - 3] - 1e-12); /* 3 slots at depth 2 */
                }
            }
        }
    }
    halo_timeline_free(&tl);
    tw_free(&tw);
}

/* ---------------------------------------------------------------- flops */

/* halo_sim_cost_flops against the model's own count (halo_model_step_flops, forced to the path
 * the shapes make cheaper) less its gathered floats. */
static void flops_are_the_models_gemms(void **state)
{
    (void)state;
    /* agg-first everywhere: equal widths and many edges; lin-first everywhere: widths that
       shrink and few sources (the model's cost rule, worked out by hand) */
    struct {
        int path;    /* the path the shapes make cheaper */
        int layers;  /* L */
        int dim[4];  /* in_dim, hidden, classes */
        int64_t ns;  /* sources per destination */
        int64_t e;   /* edges per destination */
    } cases[2] = {{HALO_MODEL_PATH_AGG_FIRST, 3, {32, 32, 32}, 2, 30},
                  {HALO_MODEL_PATH_LIN_FIRST, 2, {256, 16, 2}, 2, 30}};
    for (int k = 0; k < 2; k++) {
        int L = cases[k].layers;
        halo_model_config cfg;
        halo_model_config_default(&cfg);
        cfg.layers = L;
        cfg.in_dim = cases[k].dim[0];
        cfg.hidden = cases[k].dim[1];
        cfg.classes = cases[k].dim[2];
        cfg.threads = 1;
        cfg.path = cases[k].path;
        halo_model *m = NULL;
        assert_int_equal(halo_model_create(&cfg, &m), 0);
        halo_minibatch mb;
        memset(&mb, 0, sizeof mb);
        mb.layers = L;
        halo_sim_work w;
        memset(&w, 0, sizeof w);
        w.layers = L;
        double gathered = 0;
        int64_t nd = 100;
        for (int l = L - 1; l >= 0; l--) {
            w.num_dst[l] = nd;
            w.num_src[l] = cases[k].ns * nd;
            w.num_edges[l] = cases[k].e * nd;
            mb.blocks[l].num_dst = (int32_t)w.num_dst[l];
            mb.blocks[l].num_src = (int32_t)w.num_src[l];
            mb.blocks[l].num_edges = w.num_edges[l];
            double in = halo_model_layer_in(m, l), out = halo_model_layer_out(m, l);
            /* the gathers halo_model_step_flops adds to the GEMMs */
            double per_edge = k == 0 ? (l > 0 ? 2 * in : in) : 2 * out;
            gathered += per_edge * (double)w.num_edges[l];
            nd = w.num_src[l];
        }
        double want = halo_model_step_flops(m, &mb) - gathered;
        assert_close(halo_sim_cost_flops(&w, cfg.in_dim, cfg.hidden, cfg.classes), want, 1e-12);
        halo_model_free(m);
    }
}

/* ---------------------------------------------------------------- speed, errors */

static void sixty_four_ranks_simulate_quickly(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(8, 8, 32);
    p.net_lat_s = 5e-6;
    p.shm_lat_s = 1e-6;
    p.nic_bw = 1.25e10;
    p.shm_bw = 1e10;
    p.sample_node_s = 1e-7;
    p.sample_edge_s = 2e-8;
    p.gather_bw = 5e9;
    p.gemm_flops = 1e13;
    p.agg_bw = 1e12;
    p.msg_overhead_s = 1e-6;
    p.step_overhead_s = 1e-3;
    halo_sim_cost_opts o = base_opts(&p, 4, 2);
    const int P = 64, L = 2;
    const int64_t nb = 300;
    twork tw;
    tw_init(&tw, P, L);
    for (int r = 0; r < P; r++) {
        halo_sim_work *w = &tw.w[r];
        for (int l = 0; l < L; l++) {
            w->num_dst[l] = 1000 * (l == 0 ? 10 : 1);
            w->num_src[l] = 10 * w->num_dst[l];
            w->num_edges[l] = 10 * w->num_dst[l];
            w->local_nodes[l] = w->num_dst[l] / 2;
            w->local_edges[l] = 10 * w->local_nodes[l];
            w->served_nodes[l] = w->num_dst[l] / 2;
            w->served_edges[l] = 10 * w->served_nodes[l];
            for (int q = 0; q < P; q++) {
                if (q != r) {
                    tw.req[(size_t)r * L * P + (size_t)l * P + q] = 32 + 4 * (8 + (q * 7 + r) % 9);
                    tw.rep[(size_t)r * L * P + (size_t)l * P + q] = 44 * (8 + (q * 5 + r) % 9);
                }
            }
        }
        w->row_bytes = 400;
        w->input_nodes = w->num_src[0];
    }
    for (int r = 0; r < P; r++) {
        for (int q = 0; q < P; q++) {
            if (q != r) {
                tw_pull(&tw, r, q, 20 + (q + 3 * r) % 17);
            }
        }
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    halo_epoch_stats *s = HALO_NEW(halo_epoch_stats, P);
    run_epoch(&o, &tw, nb, s);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double el = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("# 64 ranks x %lld batches at depth 4: %.3f s of host time, %.3f s simulated\n",
           (long long)nb, el, s[0].time_s);
    for (int r = 0; r < P; r++) {
        assert_true(s[r].time_s > (double)nb * 1e-3);
        assert_close(s[r].time_s, s[0].time_s, 1e-9); /* every step ends with the slowest */
    }
    halo_free(s);
    tw_free(&tw);
}

static void bad_options_and_batches_are_refused(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(2, 2, 4);
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    halo_sim_cost *c = NULL;
    o.ranks = 3;
    assert_int_equal(halo_sim_cost_new(&o, &c), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "2 machines x 2 trainers"));
    o = base_opts(&p, 2, 0);
    assert_int_equal(halo_sim_cost_new(&o, &c), HALO_EUSAGE);
    p.nic_bw = 0;
    o = base_opts(&p, 0, 1);
    assert_int_equal(halo_sim_cost_new(&o, &c), HALO_EUSAGE);
    p.nic_bw = 1e9;
    assert_int_equal(halo_sim_cost_new(&o, &c), 0);
    twork tw;
    tw_init(&tw, 4, 1);
    halo_sim_cost_epoch_begin(c, 0);
    assert_int_equal(halo_sim_cost_batch(c, 1, tw.w), HALO_EUSAGE); /* out of order */
    tw.w[3].layers = 2;
    assert_int_equal(halo_sim_cost_batch(c, 0, tw.w), HALO_EUSAGE); /* layers disagree */
    tw.w[3].layers = 1;
    assert_int_equal(halo_sim_cost_batch(c, 0, tw.w), 0);
    halo_epoch_stats s[4];
    memset(s, 0, sizeof s);
    halo_sim_cost_epoch_end(c, s);
    assert_true(s[0].time_s >= 0);
    halo_sim_cost_free(c);
    tw_free(&tw);
}

/* Embeddings (typed partitions): rank 0 gathers 10000 rows of 1000 bytes held by rank 1 on the
 * other machine; the ids (4 bytes each) and the rows cross the NIC before the step, the gradient
 * records (16 + 1000 bytes each) after the allreduce, and the owner applies sparse Adam to the
 * rows (7 row-sized passes each at memcpy_bw), all inside compute_s as in the runtime. */
static void embedding_exchanges_are_charged_to_the_compute(void **state)
{
    (void)state;
    halo_sim_profile p = fast_profile(2, 1, 4);
    p.nic_bw = 1e8;
    p.memcpy_bw = 1e9;
    halo_sim_cost_opts o = base_opts(&p, 0, 1);
    twork tw;
    tw_init(&tw, 2, 1);
    int64_t emb[2][2] = {{0, 10000}, {0, 0}};
    for (int with = 0; with < 2; with++) {
        tw_clear(&tw);
        for (int r = 0; r < 2; r++) {
            tw.w[r].row_bytes = 1000;
            tw.w[r].num_dst[0] = 1;
            tw.w[r].num_src[0] = 1;
            tw.w[r].embed_rows = with ? emb[r] : NULL;
        }
        tw.w[1].embed_served = with ? 10000 : 0;
        halo_epoch_stats s[2];
        run_epoch(&o, &tw, 1, s);
        if (!with) {
            assert_true(s[0].compute_s < 1e-6 && s[1].compute_s < 1e-6);
            continue;
        }
        double gather = 10000 * 4 / 1e8 + 10000 * 1000 / 1e8;
        double update = 10000 * 1016 / 1e8;
        double apply = 10000 * 1000 * 7 / 1e9;
        assert_close(s[0].compute_s, gather + update, 0.01);
        assert_close(s[1].compute_s, gather + update + apply, 0.01);
        assert_true(s[0].allreduce_s < 1e-3);
    }
    tw_free(&tw);
}

/* RGCN's flops: per layer 2 nd in out (1 + R) per pass, three passes above layer 0 or with
 * embeddings (dX), two at layer 0 without; bases add 4 R B in out. */
static void rgcn_flops_are_its_gemms(void **state)
{
    (void)state;
    halo_sim_work w;
    memset(&w, 0, sizeof w);
    w.layers = 2;
    w.num_dst[0] = 100;
    w.num_dst[1] = 10;
    double l0 = 2.0 * 100 * 100 * 16 * 4, l1 = 2.0 * 10 * 16 * 4 * 4;
    assert_close(halo_sim_cost_flops_rgcn(&w, 100, 16, 4, 3, 0), 2 * l0 + 3 * l1, 1e-12);
    assert_close(halo_sim_cost_flops_rgcn(&w, 100, 16, 4, 3, 2),
                 2 * l0 + 3 * l1 + 4.0 * 3 * 2 * (100 * 16 + 16 * 4), 1e-12);
    int64_t rows[1] = {5};
    w.embed_rows = rows;
    assert_close(halo_sim_cost_flops_rgcn(&w, 100, 16, 4, 3, 0), 3 * l0 + 3 * l1, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_ranks_take_the_times_of_the_formulas),
        cmocka_unit_test(depth_zero_epoch_is_the_sum_of_its_stages),
        cmocka_unit_test(deep_pipeline_runs_at_the_pace_of_its_slowest_stage),
        cmocka_unit_test(slowest_rank_bounds_every_step),
        cmocka_unit_test(trainers_of_a_machine_share_its_nics),
        cmocka_unit_test(netem_sets_a_floor_on_every_exchange),
        cmocka_unit_test(a_process_on_its_own_core_keeps_its_table),
        cmocka_unit_test(allreduce_is_a_ring_hierarchical_across_machines),
        cmocka_unit_test(allreduce_of_one_machine_is_the_runtimes_binomial),
        cmocka_unit_test(jittered_ranks_wait_for_the_slower_draw),
        cmocka_unit_test(trainers_of_a_machine_share_its_cores),
        cmocka_unit_test(oversubscribed_machines_pay_the_penalty),
        cmocka_unit_test(only_processes_with_work_count_beyond_the_cores),
        cmocka_unit_test(pipeline_threads_do_not_count_beyond_the_cores),
        cmocka_unit_test(each_kind_of_work_pays_its_own_penalty),
        cmocka_unit_test(penalties_measured_on_training_replace_the_units),
        cmocka_unit_test(a_step_back_from_a_wait_runs_slower),
        cmocka_unit_test(a_short_step_pays_the_small_probes_slow_down),
        cmocka_unit_test(tasks_give_their_core_up_at_the_end_of_a_slice),
        cmocka_unit_test(waiting_threads_poll_on_an_oversubscribed_machine),
        cmocka_unit_test(every_waiting_thread_polls_up_to_a_fair_share),
        cmocka_unit_test(pollers_spare_a_pipelined_trainers_compute),
        cmocka_unit_test(sharing_spares_a_pipelined_trainers_compute),
        cmocka_unit_test(threads_asleep_to_a_delay_do_not_poll),
        cmocka_unit_test(timeline_holds_every_stage_on_its_thread),
        cmocka_unit_test(flops_are_the_models_gemms),
        cmocka_unit_test(embedding_exchanges_are_charged_to_the_compute),
        cmocka_unit_test(rgcn_flops_are_its_gemms),
        cmocka_unit_test(sixty_four_ranks_simulate_quickly),
        cmocka_unit_test(bad_options_and_batches_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
