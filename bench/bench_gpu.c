/* GPU calibration for the simulator (docs/profiles.md): measures through the CUDA back end's ops
 * table GEMM by shape, the mean aggregation by width, host-to-device copies from pinned and from
 * pageable memory, one launch and a tiny training step, Adam; writes the figures as JSON and, with
 * --base, a cluster profile of device "gpu" (the base's CPU and network figures, these for pcie
 * and device). Without a GPU it prints one SKIP line and exits 0 (1 with --require). */
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "model/model.h"
#include "model/ops.h"
#include "sim/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The back end and what the figures are written to. */
typedef struct gb {
    const halo_ops *o; /* the CUDA back end */
    halo_ops_ctx *c;   /* its context on GPU 0 */
    FILE *json;        /* the figures */
} gb;

/* Seconds per call of fn (n calls after one warm-up, one sync at the end). */
#define TIME_CALLS(g, n, call, out)                                                               \
    do {                                                                                          \
        HALO_CHECK(call);                                                                         \
        HALO_CHECK((g)->o->sync((g)->c));                                                         \
        double t0_ = halo_now();                                                                  \
        for (int i_ = 0; i_ < (n); i_++) {                                                        \
            HALO_CHECK(call);                                                                     \
        }                                                                                         \
        HALO_CHECK((g)->o->sync((g)->c));                                                         \
        (out) = (halo_now() - t0_) / (n);                                                         \
    } while (0)

static void *dev(gb *g, size_t bytes)
{
    void *p = NULL;
    if (g->o->dev_alloc(g->c, bytes, &p) < 0) {
        fprintf(stderr, "halo: error: bench_gpu: %s\n", halo_errmsg());
        exit(1);
    }
    return p;
}

/* GEMM rates by shape (the layers' shapes: rows x width x width); the best is the profile's. */
static int bench_gemm(gb *g, double *best)
{
    const int shapes[][3] = {{1000, 16, 100},   {10000, 256, 100}, {100000, 256, 256},
                             {100000, 47, 256}, {8192, 8192, 8192}, {200000, 16, 16}};
    *best = 0;
    fprintf(g->json, "  \"gemm\": [");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = dev(g, (size_t)m * k * 4), *b = dev(g, (size_t)k * n * 4);
        float *c = dev(g, (size_t)m * n * 4);
        double t;
        TIME_CALLS(g, 20, g->o->gemm(g->c, 0, 0, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n), t);
        double rate = 2.0 * m * n * k / t;
        *best = rate > *best ? rate : *best;
        fprintf(g->json, "%s\n    {\"m\": %d, \"n\": %d, \"k\": %d, \"s\": %.6g, \"TFLOPs\": %.4g}",
                s ? "," : "", m, n, k, t, rate / 1e12);
        g->o->dev_free(g->c, a);
        g->o->dev_free(g->c, b);
        g->o->dev_free(g->c, c);
    }
    fprintf(g->json, "\n  ],\n");
    return 0;
}

/* Mean aggregation over random neighbours (degree 10) by width: bytes of rows read per second;
 * the profile takes width 256's. */
static int bench_agg(gb *g, double *bw256)
{
    const int widths[] = {16, 33, 100, 256};
    int32_t nd = 200000, ns = 1000000, deg = 10;
    int64_t *ptr = HALO_ALLOC(int64_t, nd + 1);
    int32_t *idx = HALO_ALLOC(int32_t, (size_t)nd * deg);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0, 0, 0);
    for (int32_t i = 0; i <= nd; i++) {
        ptr[i] = (int64_t)i * deg;
    }
    for (int64_t e = 0; e < (int64_t)nd * deg; e++) {
        idx[e] = (int32_t)halo_rng_below(&r, (uint64_t)ns);
    }
    int64_t *dptr = dev(g, (size_t)(nd + 1) * 8);
    int32_t *didx = dev(g, (size_t)nd * deg * 4);
    HALO_CHECK(g->o->h2d(g->c, dptr, ptr, (size_t)(nd + 1) * 8));
    HALO_CHECK(g->o->h2d(g->c, didx, idx, (size_t)nd * deg * 4));
    fprintf(g->json, "  \"aggregation\": [");
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        int d = widths[w];
        float *src = dev(g, (size_t)ns * d * 4), *out = dev(g, (size_t)nd * d * 4);
        double t;
        TIME_CALLS(g, 10, g->o->agg_mean(g->c, nd, dptr, didx, d, src, d, out, d, 0), t);
        double bw = (double)nd * deg * d * 4 / t;
        if (d == 256) {
            *bw256 = bw;
        }
        fprintf(g->json, "%s\n    {\"width\": %d, \"s\": %.6g, \"GBps\": %.4g}", w ? "," : "", d,
                t, bw / 1e9);
        g->o->dev_free(g->c, src);
        g->o->dev_free(g->c, out);
    }
    fprintf(g->json, "\n  ],\n");
    g->o->dev_free(g->c, dptr);
    g->o->dev_free(g->c, didx);
    halo_free(ptr);
    halo_free(idx);
    return 0;
}

/* Host-to-device copies of 256 MiB from pinned and pageable memory, and of 4 bytes (latency). */
static int bench_pcie(gb *g, halo_sim_profile *p)
{
    size_t n = (size_t)256 << 20;
    void *pinned = NULL;
    HALO_CHECK(g->o->host_alloc(g->c, n, &pinned));
    char *pageable = halo_calloc(n, 1);
    void *d = dev(g, n);
    double tp, tq, tl;
    TIME_CALLS(g, 5, g->o->h2d(g->c, d, pinned, n), tp);
    TIME_CALLS(g, 5, g->o->h2d(g->c, d, pageable, n), tq);
    /* latency: one small copy waited for */
    double t0 = halo_now();
    for (int i = 0; i < 200; i++) {
        HALO_CHECK(g->o->h2d(g->c, d, pinned, 4));
        HALO_CHECK(g->o->sync(g->c));
    }
    tl = (halo_now() - t0) / 200;
    p->pcie_bw_pinned = (double)n / tp;
    p->pcie_bw_pageable = (double)n / tq;
    p->pcie_lat_s = tl;
    p->pinned = 1;
    fprintf(g->json, "  \"pcie\": {\"pinned_GBps\": %.4g, \"pageable_GBps\": %.4g, "
                     "\"lat_us\": %.4g},\n",
            p->pcie_bw_pinned / 1e9, p->pcie_bw_pageable / 1e9, tl * 1e6);
    g->o->dev_free(g->c, d);
    g->o->host_free(g->c, pinned);
    halo_free(pageable);
    return 0;
}

/* One launch (a 1 x 1 bias/activation, not waited for) and Adam over 10 M parameters. */
static int bench_launch_adam(gb *g, halo_sim_profile *p, double *launch)
{
    float *x = dev(g, 4096);
    TIME_CALLS(g, 2000, g->o->bias_act(g->c, x, 1, 1, 1, NULL, 1, NULL), *launch);
    size_t n = (size_t)10 << 20;
    float *w = dev(g, n * 4), *gr = dev(g, n * 4), *m = dev(g, n * 4), *v = dev(g, n * 4);
    halo_ops_adam hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .grad_scale = 1.0f, .t = 1};
    double t;
    TIME_CALLS(g, 20, g->o->adam(g->c, w, gr, m, v, n, &hp), t);
    p->adam_bw = (double)n * 4 / t;
    fprintf(g->json, "  \"launch_us\": %.4g,\n  \"adam_GBps\": %.4g,\n", *launch * 1e6,
            p->adam_bw / 1e9);
    g->o->dev_free(g->c, x);
    g->o->dev_free(g->c, w);
    g->o->dev_free(g->c, gr);
    g->o->dev_free(g->c, m);
    g->o->dev_free(g->c, v);
    return 0;
}

/* The fixed time of a training step: a 2-layer model's step (pass + Adam) on 4 seeds. */
static int bench_step(gb *g, halo_sim_profile *p)
{
    int64_t ptr0[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, ptr1[5] = {0, 1, 2, 3, 4};
    int32_t idx0[8] = {1, 2, 3, 4, 5, 6, 7, 0}, idx1[4] = {1, 2, 3, 0};
    int32_t gid[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, lab[4] = {0, 1, 0, 1};
    halo_minibatch mb = {.layers = 2, .num_seeds = 4, .num_input = 16, .seeds = gid, .input = gid};
    mb.blocks[0] = (halo_block){.num_dst = 8, .num_src = 16, .num_edges = 8, .indptr = ptr0,
                                .indices = idx0, .src_gid = gid};
    mb.blocks[1] = (halo_block){.num_dst = 4, .num_src = 8, .num_edges = 4, .indptr = ptr1,
                                .indices = idx1, .src_gid = gid};
    float feat[16 * 8];
    for (int i = 0; i < 16 * 8; i++) {
        feat[i] = (float)(i % 7) * 0.1f;
    }
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = 8;
    cfg.hidden = 8;
    cfg.classes = 2;
    cfg.device = HALO_DEVICE_GPU;
    cfg.gpu = 0;
    halo_model *m;
    HALO_CHECK(halo_model_create(&cfg, &m));
    double t0 = 0;
    for (int s = 0; s < 220; s++) {
        if (s == 20) {
            t0 = halo_now();
        }
        HALO_CHECK(halo_model_train_forward_backward(m, &mb, feat, lab, (uint64_t)s, NULL));
        HALO_CHECK(halo_model_adam_step(m, 1.0f));
    }
    (void)halo_model_grads(m, NULL);
    p->step_overhead_s = (halo_now() - t0) / 200;
    fprintf(g->json, "  \"step_overhead_us\": %.4g\n", p->step_overhead_s * 1e6);
    halo_model_free(m);
    return 0;
}

static int run(gb *g, halo_sim_profile *p)
{
    double gemm = 0, agg = 0, launch = 0;
    fprintf(g->json, "{\n");
    HALO_CHECK(bench_gemm(g, &gemm));
    HALO_CHECK(bench_agg(g, &agg));
    HALO_CHECK(bench_pcie(g, p));
    HALO_CHECK(bench_launch_adam(g, p, &launch));
    HALO_CHECK(bench_step(g, p));
    fprintf(g->json, "}\n");
    p->device = HALO_SIM_DEVICE_GPU;
    p->gemm_flops = gemm;
    p->agg_bw = agg;
    return 0;
}

int main(int argc, char **argv)
{
    const char *json = NULL, *base = NULL, *out = NULL;
    int require = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--base") == 0 && i + 1 < argc) {
            base = argv[++i];
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--require") == 0) {
            require = 1;
        } else {
            fprintf(stderr, "usage: bench_gpu [--json FIGURES.json] [--base CPU.lua -o GPU.lua] "
                            "[--require]\n");
            return 2;
        }
    }
    const char *why = NULL;
    if (halo_ops_cuda_device_count(&why) <= 0) {
        printf("bench_gpu: SKIP: no GPU (%s)\n", why != NULL ? why : "none");
        return require;
    }
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    if (base != NULL && halo_sim_profile_load(base, &p) < 0) {
        fprintf(stderr, "halo: error: bench_gpu: %s\n", halo_errmsg());
        return 1;
    }
    gb g = {.o = halo_ops_cuda_table(), .json = json != NULL ? fopen(json, "w") : stdout};
    halo_ops_config oc = {.threads = 1, .gpu = 0};
    if (g.json == NULL || g.o->open(&oc, &g.c) < 0 || run(&g, &p) < 0) {
        fprintf(stderr, "halo: error: bench_gpu: %s\n", halo_errmsg());
        return 1;
    }
    g.o->close(g.c);
    if (json != NULL) {
        fclose(g.json);
    }
    if (base != NULL && out != NULL &&
        halo_sim_profile_write(out, &p, "GPU profile: bench_gpu on the base's CPU figures") < 0) {
        fprintf(stderr, "halo: error: bench_gpu: %s\n", halo_errmsg());
        return 1;
    }
    return 0;
}
