/* halo calibrate's compute measurements of this machine: GEMM (one layer's, and the rate by
 * shape), aggregation, element-wise passes, a model step and the optimiser, and a check of the
 * compute model against a real step. */
#include "sim/calibrate.h"
#include "sim/calibrate_int.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "model/model.h"
#include "model/ops.h"
#include "sample/sample.h"
#include "sim/cost.h"
#include "store/store.h"

#include <cblas.h>
#include <math.h>
#include <string.h>
#include <time.h>
/* ---- GEMM and aggregation ---- */

/* A GraphSAGE-layer-sized SGEMM: C[m x n] = A[m x k] B[k x n]. */
typedef struct gemm_job {
    int m, n, k;        /* sizes */
    const float *a, *b; /* inputs */
    float *c;           /* output */
} gemm_job;

static int run_gemm(void *arg)
{
    gemm_job *j = arg;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->m, j->n, j->k, 1.0f, j->a, j->k, j->b,
                j->n, 0.0f, j->c, j->n);
    return 0;
}

/* Mean aggregation of sampled neighbour rows over a block's CSR, by the model's own CPU
 * kernel (model/ops.h agg_mean, one thread). */
typedef struct agg_job {
    int64_t ndst;           /* destinations */
    const int64_t *indptr;  /* [ndst+1] */
    const int32_t *indices; /* sources */
    const float *h;         /* [nsrc * dim] */
    float *out;             /* [ndst * dim] */
    int dim;                /* row width */
    halo_ops_ctx *ctx;      /* one-thread CPU kernels */
} agg_job;

static int run_agg(void *arg)
{
    agg_job *j = arg;
    return halo_ops_cpu.agg_mean(j->ctx, (int32_t)j->ndst, j->indptr, j->indices, j->dim, j->h,
                                 j->dim, j->out, j->dim, 0);
}

int halo_sim_calib_compute(const halo_sim_calib_opts *o, double *gemm_flops, double *agg_bw,
                           double *agg_edge_s)
{
    openblas_set_num_threads(1);
    gemm_job g = {2000, 256, 256, NULL, NULL, NULL};
    float *a = HALO_ALLOC(float, (int64_t)g.m *g.k);
    float *b = HALO_ALLOC(float, (int64_t)g.k *g.n);
    float *c = HALO_ALLOC(float, (int64_t)g.m *g.n);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0xca3, 0, 0);
    for (int64_t i = 0; i < (int64_t)g.m * g.k; i++) {
        a[i] = (float)halo_rng_uniform(&r) - 0.5f;
    }
    for (int64_t i = 0; i < (int64_t)g.k * g.n; i++) {
        b[i] = (float)halo_rng_uniform(&r) - 0.5f;
    }
    g.a = a;
    g.b = b;
    g.c = c;
    /* aggregation: 4096 destinations x 10 sampled neighbours over the rows of a block's
       sources, fan + 1 per destination as a sampled block has at most (the layer's input,
       gathered for the batch: not a table of the whole graph) */
    const int dim = 128, fan = 10;
    int64_t ndst = 4096, nsrc = ndst * (fan + 1);
    float *h = HALO_ALLOC(float, nsrc *dim);
    for (int64_t i = 0; i < nsrc * dim; i++) {
        h[i] = (float)(i & 255) * 0.01f;
    }
    int64_t *indptr = HALO_ALLOC(int64_t, ndst + 1);
    int32_t *indices = HALO_ALLOC(int32_t, ndst * fan);
    for (int64_t i = 0; i <= ndst; i++) {
        indptr[i] = i * fan;
    }
    for (int64_t e = 0; e < ndst * fan; e++) {
        indices[e] = (int32_t)halo_rng_below(&r, (uint64_t)nsrc);
    }
    float *out = HALO_ALLOC(float, ndst *dim);
    halo_ops_config oc = {.threads = 1, .gpu = -1};
    agg_job aj = {ndst, indptr, indices, h, out, dim, NULL};
    double tg = 0, ta = 0, ta16 = 0;
    int rc = 0;
    HALO_TRY(halo_ops_cpu.open(&oc, &aj.ctx));
    HALO_TRY(halo_sim_calib_best(run_gemm, &g, o->seconds / 3, &tg));
    *gemm_flops = halo_sim_calib_sig4(2.0 * g.m * g.n * g.k / tg);
    if (agg_bw == NULL) {
        goto fail; /* the GEMM only (halo_sim_calib_speed) */
    }
    HALO_TRY(halo_sim_calib_best(run_agg, &aj, o->seconds / 3, &ta));
    aj.dim = 16; /* the same edges over 16-float rows: the per-edge part */
    HALO_TRY(halo_sim_calib_best(run_agg, &aj, o->seconds / 3, &ta16));
    double per = 0, bw = 0;
    halo_sim_calib_split_rate(ta16, ta, (double)(ndst * fan), 64, (double)dim * sizeof(float), &per,
                              &bw);
    *agg_bw = halo_sim_calib_sig4(bw);
    *agg_edge_s = halo_sim_calib_sig4(per);
fail:
    if (aj.ctx != NULL) {
        halo_ops_cpu.close(aj.ctx);
    }
    halo_free(out);
    halo_free(indices);
    halo_free(indptr);
    halo_free(h);
    halo_free(c);
    halo_free(b);
    halo_free(a);
    return rc;
}

/* ---- elementwise passes ---- */

/* bias + ReLU + dropout over a rows x cols matrix, the model's own CPU kernel. */
typedef struct elem_job {
    halo_ops_ctx *ctx;  /* one-thread CPU kernels */
    float *x;           /* [rows * cols] */
    const float *b;     /* [cols] */
    int64_t rows;       /* rows */
    int cols;           /* columns */
    int32_t *gid;       /* [rows] ids for the dropout */
    uint64_t step;      /* step counter */
} elem_job;

static int run_elem(void *arg)
{
    elem_job *j = arg;
    halo_ops_dropout d = {.p = 0.5f, .seed = 1, .step = j->step++, .layer = 0, .gid = j->gid};
    return halo_ops_cpu.bias_act(j->ctx, j->x, j->rows, j->cols, j->cols, j->b, 1, &d);
}

int halo_sim_calib_elem(const halo_sim_calib_opts *o, double *elem_s)
{
    halo_ops_config oc = {.threads = 1, .gpu = -1};
    elem_job j = {NULL, NULL, NULL, 4096, 64, NULL, 0};
    HALO_CHECK(halo_ops_cpu.open(&oc, &j.ctx));
    j.x = HALO_NEW(float, j.rows * j.cols);
    float *b = HALO_NEW(float, j.cols);
    j.b = b;
    j.gid = HALO_NEW(int32_t, j.rows);
    for (int64_t i = 0; i < j.rows; i++) {
        j.gid[i] = (int32_t)i;
    }
    double t = 0;
    int rc = halo_sim_calib_best(run_elem, &j, o->seconds / 2, &t);
    if (rc == 0) {
        *elem_s = halo_sim_calib_sig4(t / (double)(j.rows * j.cols));
    }
    halo_ops_cpu.close(j.ctx);
    halo_free(j.x);
    halo_free(b);
    halo_free(j.gid);
    return rc;
}

/* ---- GEMM rate by shape ---- */

/* The grid of the table: rows, in and out of a layer's GEMMs (hidden 16..256, feature widths
 * up to 1024 (2 x 512 agg-first), outputs from a few classes to 256; rows from a top-layer
 * batch to a 3-layer fanout-10 batch's bottom layer (11-48K rows). Past 4096 rows the operands
 * leave a core's cache: on a 2-core VM with 4 MiB of L2 per core, the rate at 32768 rows was
 * 0.8 x 4096's at (in 256, out 128), 0.4 x at (256, 4) and (1024, 16); 16384's within 10 % of
 * 32768's for most shapes, so one more point, not two (docs/sim-model.md, "Fifteenth pass"). */
static const double grid_rows[] = {64, 512, 4096, 32768};
static const double grid_in[] = {16, 64, 256, 1024};
static const double grid_out[] = {4, 16, 64, 256};

/* A layer's three GEMMs at (rows, in, out), as model.c runs them: forward Y = X W (rows x in
 * by in x out), dW = X^T dY (in x rows by rows x out), dX = dY W^T (rows x out by out x in). */
typedef struct layer_gemm_job {
    int rows, in, out;         /* the shape */
    float *x, *w, *dy, *y, *t; /* [rows*in], [in*out], [rows*out], [rows*out], [rows*in] */
} layer_gemm_job;

static int run_layer_gemm(void *arg)
{
    layer_gemm_job *j = arg;
    int m = j->rows, k = j->in, n = j->out;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, j->x, k, j->w, n, 0.0f,
                j->y, n);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, m, 1.0f, j->x, k, j->dy, n, 0.0f,
                j->w, n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, j->dy, n, j->w, n, 0.0f,
                j->t, k);
    return 0;
}

int halo_sim_calib_gemm_table(const halo_sim_calib_opts *o, halo_sim_profile *p)
{
    openblas_set_num_threads(1);
    const int nr = 4, ni = 4, no = 4;
    const size_t maxr = 32768, big = maxr * 1024, outs = maxr * 256;
    layer_gemm_job j = {0,
                        0,
                        0,
                        HALO_ALLOC(float, big),
                        HALO_ALLOC(float, 1024 * 256),
                        HALO_ALLOC(float, outs),
                        HALO_ALLOC(float, outs),
                        HALO_ALLOC(float, big)};
    for (size_t i = 0; i < big; i++) {
        j.x[i] = (float)(i % 97) * 0.01f - 0.4f;
    }
    for (size_t i = 0; i < outs; i++) {
        j.dy[i] = (float)(i % 89) * 0.01f - 0.4f;
    }
    memset(j.w, 0, 1024 * 256 * sizeof(float));
    int rc = 0;
    p->gemm_nr = nr;
    p->gemm_ni = ni;
    p->gemm_no = no;
    for (int a = 0; a < nr && rc == 0; a++) {
        for (int b = 0; b < ni && rc == 0; b++) {
            for (int c = 0; c < no && rc == 0; c++) {
                j.rows = (int)grid_rows[a];
                j.in = (int)grid_in[b];
                j.out = (int)grid_out[c];
                double t = 0;
                rc = halo_sim_calib_best(run_layer_gemm, &j, 4 * o->seconds / (nr * ni * no), &t);
                p->gemm_rate[a][b][c] = halo_sim_calib_sig4(6.0 * j.rows * j.in * j.out / t);
            }
        }
    }
    memcpy(p->gemm_rows, grid_rows, sizeof grid_rows);
    memcpy(p->gemm_in, grid_in, sizeof grid_in);
    memcpy(p->gemm_out, grid_out, sizeof grid_out);
    halo_free(j.x);
    halo_free(j.w);
    halo_free(j.dy);
    halo_free(j.y);
    halo_free(j.t);
    return rc;
}

/* ---- model step and optimiser ---- */

/* One training step (forward, backward, Adam) or one Adam pass. */
typedef struct model_job {
    halo_model *m;            /* model */
    const halo_minibatch *mb; /* batch (NULL: Adam only) */
    const float *feat;        /* input rows */
    const int32_t *labels;    /* seed labels */
    uint64_t step;            /* step counter */
} model_job;

static int run_step(void *arg)
{
    model_job *j = arg;
    if (j->mb != NULL) {
        HALO_CHECK(
            halo_model_train_forward_backward(j->m, j->mb, j->feat, j->labels, j->step++, NULL));
    }
    return halo_model_adam_step(j->m, 1.0f);
}

/* A one-thread CPU model of the given widths. */
static int cpu_model(int in_dim, int hidden, int classes, halo_model **out)
{
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = in_dim;
    cfg.hidden = hidden;
    cfg.classes = classes;
    cfg.device = HALO_DEVICE_CPU;
    cfg.gpu = -1;
    cfg.threads = 1;
    return halo_model_create(&cfg, out);
}

int halo_sim_calib_model(const halo_sim_calib_opts *o, double *step_overhead_s, double *adam_bw)
{
    halo_graph *g = halo_sim_calib_random_graph(4096);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    halo_model *small = NULL, *big = NULL;
    float *feat = NULL;
    int32_t seed = 7, label = 1;
    int fanouts[2] = {2, 2};
    halo_sample_key k = {1, 0, 0};
    double ts = 0, ta = 0;
    int rc = 0;
    /* the fixed part: a one-seed batch on a tiny model (its arithmetic is negligible) */
    HALO_TRY(halo_sample_graph(s, g, fanouts, 2, &k, &seed, 1, &mb));
    feat = HALO_NEW(float, (int64_t)mb.num_input * 8);
    HALO_TRY(cpu_model(8, 8, 2, &small));
    model_job js = {small, &mb, feat, &label, 0};
    HALO_TRY(halo_sim_calib_best(run_step, &js, o->seconds / 2, &ts));
    /* Adam over a large parameter buffer */
    int w = o->quick ? 512 : 1024;
    HALO_TRY(cpu_model(w, w, 16, &big));
    size_t count = 0;
    halo_model_params(big, &count);
    model_job ja = {big, NULL, NULL, NULL, 0};
    HALO_TRY(halo_sim_calib_best(run_step, &ja, o->seconds / 2, &ta));
    *step_overhead_s = halo_sim_calib_sig4(ts);
    *adam_bw = halo_sim_calib_sig4((double)count * sizeof(float) / ta);
fail:
    halo_model_free(big);
    halo_model_free(small);
    halo_free(feat);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
    return rc;
}

/* ---- a check of the compute model against a real step ---- */

int halo_sim_calib_check_compute(const halo_sim_calib_opts *o, const halo_sim_profile *p,
                                 int hidden, double *measured_s, double *model_s)
{
    int64_t nodes = o->quick ? (int64_t)1 << 15 : (int64_t)1 << 17;
    halo_graph *g = halo_sim_calib_random_graph(nodes);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    halo_model *m = NULL;
    float *feat = NULL;
    int32_t seeds[256], labels[256];
    for (int i = 0; i < 256; i++) {
        seeds[i] = (int32_t)halo_sim_calib_scatter(i, nodes);
        labels[i] = i % 16;
    }
    int fanouts[2] = {10, 25};
    halo_sample_key k = {1, 0, 0};
    double t = 0;
    int rc = 0;
    HALO_TRY(halo_sample_graph(s, g, fanouts, 2, &k, seeds, 256, &mb));
    feat = HALO_NEW(float, (int64_t)mb.num_input * 128);
    HALO_TRY(cpu_model(128, hidden, 16, &m));
    model_job j = {m, &mb, feat, labels, 0};
    HALO_TRY(halo_sim_calib_best(run_step, &j, o->seconds, &t));
    halo_sim_work w;
    memset(&w, 0, sizeof w);
    w.layers = mb.layers;
    for (int l = 0; l < mb.layers; l++) {
        w.num_dst[l] = mb.blocks[l].num_dst;
        w.num_src[l] = mb.blocks[l].num_src;
        w.num_edges[l] = mb.blocks[l].num_edges;
    }
    size_t params = 0;
    halo_model_params(m, &params);
    *measured_s = t;
    *model_s = halo_sim_cost_fb_s(p, &w, 128, hidden, 16, 0, 0) / p->fit_compute +
               p->step_overhead_s + (double)params * sizeof(float) / p->adam_bw;
fail:
    halo_model_free(m);
    halo_free(feat);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
    return rc;
}


/* ---- a unit of a training step's work, for the oversubscription probe ---- */

/* Rows of the unit's gather and their floats (8192 rows of 512 bytes: 4 MiB per unit). */
#define UNIT_ROWS 8192
#define UNIT_DIM 128
/* Rows of its table: 64 MiB, more than a last-level cache. */
#define UNIT_TABLE (1 << 17)
/* Nodes of its graph, and the frontier it samples at fanout UNIT_FANOUT. */
#define UNIT_NODES (1 << 18)
#define UNIT_FRONTIER 4096
#define UNIT_FANOUT 10

struct halo_sim_calib_unit {
    float *table; /* [UNIT_TABLE x UNIT_DIM] rows gathered from */
    int32_t *ids; /* [UNIT_ROWS] random rows of it */
    int32_t *ids_warm; /* [UNIT_ROWS] random rows of its first HALO_SIM_CALIB_WARM_BYTES */
    float *rows;  /* [UNIT_ROWS x UNIT_DIM] the gathered rows, then the GEMM's input */
    float *w;     /* [UNIT_DIM x UNIT_DIM] weights */
    float *out;   /* [UNIT_ROWS / 4 x UNIT_DIM] the GEMM's output */
    halo_graph *g;     /* the sampled graph */
    halo_sampler *smp; /* its sampler */
    int64_t *frow;     /* [UNIT_FRONTIER] frontier rows (and keys) */
    int32_t *fdst;     /* [UNIT_FRONTIER] the same as int32 */
    int64_t *off;      /* [UNIT_FRONTIER + 1] */
    int32_t *nbrs;     /* [UNIT_FRONTIER x UNIT_FANOUT] */
    int64_t batch;     /* draws' batch key, advanced per run */
};

halo_sim_calib_unit *halo_sim_calib_unit_new(uint64_t key)
{
    openblas_set_num_threads(1); /* its CPU is read on the calling thread's clock */
    halo_sim_calib_unit *u = HALO_NEW(halo_sim_calib_unit, 1);
    u->table = HALO_ALLOC(float, (int64_t)UNIT_TABLE * UNIT_DIM);
    u->ids = HALO_ALLOC(int32_t, UNIT_ROWS);
    u->ids_warm = HALO_ALLOC(int32_t, UNIT_ROWS);
    u->rows = HALO_ALLOC(float, (int64_t)UNIT_ROWS * UNIT_DIM);
    u->w = HALO_ALLOC(float, UNIT_DIM * UNIT_DIM);
    u->out = HALO_ALLOC(float, (int64_t)UNIT_ROWS / 4 * UNIT_DIM);
    halo_rng r;
    halo_rng_init(&r, 3, HALO_RNG_TEST, 0x0e5b, key, 0);
    for (int64_t i = 0; i < (int64_t)UNIT_TABLE * UNIT_DIM; i++) {
        u->table[i] = (float)(i % 13) * 0.25f;
    }
    for (int i = 0; i < UNIT_ROWS; i++) {
        u->ids[i] = (int32_t)halo_rng_below(&r, UNIT_TABLE);
    }
    for (int i = 0; i < UNIT_ROWS; i++) {
        u->ids_warm[i] = (int32_t)halo_rng_below(
            &r, (uint64_t)(HALO_SIM_CALIB_WARM_BYTES / (UNIT_DIM * (int64_t)sizeof(float))));
    }
    for (int i = 0; i < UNIT_DIM * UNIT_DIM; i++) {
        u->w[i] = (float)(i % 7) * 0.125f;
    }
    u->g = halo_sim_calib_random_graph(UNIT_NODES);
    u->smp = halo_sampler_new();
    u->frow = HALO_ALLOC(int64_t, UNIT_FRONTIER);
    u->fdst = HALO_ALLOC(int32_t, UNIT_FRONTIER);
    u->off = HALO_ALLOC(int64_t, UNIT_FRONTIER + 1);
    u->nbrs = HALO_ALLOC(int32_t, (int64_t)UNIT_FRONTIER * UNIT_FANOUT);
    for (int i = 0; i < UNIT_FRONTIER; i++) { /* distinct: a permutation's first entries */
        u->frow[i] = halo_sim_calib_scatter(i + (int64_t)key * UNIT_FRONTIER, UNIT_NODES);
        u->fdst[i] = (int32_t)u->frow[i];
    }
    u->batch = (int64_t)key << 32;
    return u;
}

/* The sampler's part: the frontier drawn at UNIT_FANOUT, then its block. */
static void unit_sample(halo_sim_calib_unit *u)
{
    halo_sample_key k = {1, 0, u->batch++};
    halo_sample_rows_offsets(u->g->indptr, u->frow, UNIT_FRONTIER, UNIT_FANOUT, u->off);
    halo_sample_rows(u->smp, u->g->indptr, u->g->indices, u->frow, u->frow, UNIT_FRONTIER,
                     UNIT_FANOUT, &k, 0, u->off, u->nbrs);
    halo_block b;
    memset(&b, 0, sizeof b);
    if (halo_sample_block_build(u->smp, u->fdst, UNIT_FRONTIER, u->off, u->nbrs, &b) == 0) {
        halo_sample_block_free(&b);
    }
}

void halo_sim_calib_unit_run(halo_sim_calib_unit *u, double cpu[HALO_UNIT_PARTS])
{
    double t0 = halo_thread_cpu();
    unit_sample(u);
    double t1 = halo_thread_cpu();
    halo_store_gather(u->table, 0, UNIT_DIM, u->ids, UNIT_ROWS, u->rows);
    double t2 = halo_thread_cpu();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, UNIT_ROWS / 4, UNIT_DIM, UNIT_DIM,
                1.0f, u->rows, UNIT_DIM, u->w, UNIT_DIM, 0.0f, u->out, UNIT_DIM);
    double t3 = halo_thread_cpu();
    halo_store_gather(u->table, 0, UNIT_DIM, u->ids_warm, UNIT_ROWS, u->rows);
    double t4 = halo_thread_cpu();
    cpu[HALO_UNIT_SAMPLE] = t1 - t0;
    cpu[HALO_UNIT_GATHER] = t2 - t1;
    cpu[HALO_UNIT_GEMM] = t3 - t2;
    cpu[HALO_UNIT_GATHER_WARM] = t4 - t3;
}

void halo_sim_calib_unit_free(halo_sim_calib_unit *u)
{
    if (u != NULL) {
        halo_free(u->table);
        halo_free(u->ids);
        halo_free(u->ids_warm);
        halo_free(u->rows);
        halo_free(u->w);
        halo_free(u->out);
        halo_graph_free(u->g);
        halo_sampler_free(u->smp);
        halo_free(u->frow);
        halo_free(u->fdst);
        halo_free(u->off);
        halo_free(u->nbrs);
        halo_free(u);
    }
}

/* ---- back from a wait ---- */

#define WAKE_REPS 21

/* One size of the wake probe: a batch of `seeds` seeds of g at fanouts fan,fan and a training
 * step on it (128 -> hidden -> 16), each timed right after a sleep of each of
 * halo_sim_wake_gap's gaps and with none, in turns (round after round, so that the machine's
 * drift falls on every gap alike). pen_s / pen_c get each gap's median time over the median
 * without a gap, less 1 (at least 0); *t_c the step's median time without a gap. */
static int wake_size(int reps, const halo_graph *g, int nseeds, int fan, int hidden,
                     double pen_s[HALO_SIM_WAKE_GAPS], double pen_c[HALO_SIM_WAKE_GAPS],
                     double *t_s, double *t_c)
{
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb, mt;
    memset(&mb, 0, sizeof mb);
    memset(&mt, 0, sizeof mt);
    halo_model *m = NULL;
    float *feat = NULL;
    int32_t seeds[128], labels[128];
    int fanouts[2] = {fan, fan};
    double ts[HALO_SIM_WAKE_GAPS + 1][WAKE_REPS], tc[HALO_SIM_WAKE_GAPS + 1][WAKE_REPS];
    int rc = 0;
    halo_sample_key k = {1, 0, 0};
    for (int i = 0; i < nseeds; i++) {
        seeds[i] = (int32_t)halo_sim_calib_scatter(i, g->nodes);
        labels[i] = i % 16;
    }
    HALO_TRY(halo_sample_graph(s, g, fanouts, 2, &k, seeds, nseeds, &mb));
    feat = HALO_NEW(float, (int64_t)mb.num_input * 128);
    HALO_TRY(cpu_model(128, hidden, 16, &m));
    model_job j = {m, &mb, feat, labels, 0};
    HALO_TRY(run_step(&j)); /* its buffers allocated */
    for (int r = 0; r < reps; r++) {
        for (int gi = 0; gi <= HALO_SIM_WAKE_GAPS; gi++) {
            for (int part = 0; part < 2; part++) {
                if (gi > 0) {
                    struct timespec z = {0, (long)(halo_sim_wake_gap[gi - 1] * 1e9)};
                    nanosleep(&z, NULL);
                }
                double t0 = halo_now();
                if (part == 0) {
                    k.batch++;
                    HALO_TRY(halo_sample_graph(s, g, fanouts, 2, &k, seeds, nseeds, &mt));
                    ts[gi][r] = halo_now() - t0;
                } else {
                    HALO_TRY(run_step(&j));
                    tc[gi][r] = halo_now() - t0;
                }
            }
        }
    }
    *t_s = halo_median_f64(ts[0], reps);
    *t_c = halo_median_f64(tc[0], reps);
    for (int gi = 0; gi < HALO_SIM_WAKE_GAPS; gi++) {
        double ps = halo_median_f64(ts[gi + 1], reps) / *t_s - 1.0;
        double pc = halo_median_f64(tc[gi + 1], reps) / *t_c - 1.0;
        pen_s[gi] = halo_sim_calib_sig4(ps > 0 ? ps : 0.0);
        pen_c[gi] = halo_sim_calib_sig4(pc > 0 ? pc : 0.0);
    }
fail:
    halo_model_free(m);
    halo_free(feat);
    halo_sample_free(&mt);
    halo_sample_free(&mb);
    halo_sampler_free(s);
    return rc;
}

/* Two sizes: 128 seeds at fanouts 10,10 and hidden 128 (the sampling's figures and the large
 * step's, about 2.3 ms here), 64 seeds at fanouts 5,5 and hidden 32 (the small step's, about
 * 0.35 ms: a refill weighs more on a short step; a 0.1 ms step read 0.5-0.7 already after
 * 0.25 ms, which training's short waits, mostly polls, do not show). The small size's
 * sampling is timed too, so that its steps follow a sampling as the large one's do; its
 * figures are not kept. */
int halo_sim_calib_wake(const halo_sim_calib_opts *o, halo_sim_profile *p)
{
    int64_t nodes = o->quick ? (int64_t)1 << 15 : (int64_t)1 << 17;
    int reps = o->quick ? 9 : WAKE_REPS;
    halo_graph *g = halo_sim_calib_random_graph(nodes);
    double ss[HALO_SIM_WAKE_GAPS], tsb = 0, tss = 0;
    int rc = 0;
    HALO_TRY(wake_size(reps, g, 128, 10, 128, p->wake_sample, p->wake_compute, &tsb,
                       &p->wake_step_s));
    HALO_TRY(wake_size(reps, g, 64, 5, 32, ss, p->wake_small, &tss, &p->wake_small_s));
    p->wake_step_s = halo_sim_calib_sig4(p->wake_step_s);
    p->wake_small_s = halo_sim_calib_sig4(p->wake_small_s);
    if (o->progress) {
        halo_info("calibrate: back from a wait of 0.25/1/4/16 ms: sampling %.3g/%.3g/%.3g/%.3g, "
                  "a training step of %.3g ms %.3g/%.3g/%.3g/%.3g slower, one of %.3g ms "
                  "%.3g/%.3g/%.3g/%.3g",
                  p->wake_sample[0], p->wake_sample[1], p->wake_sample[2], p->wake_sample[3],
                  p->wake_step_s * 1e3, p->wake_compute[0], p->wake_compute[1],
                  p->wake_compute[2], p->wake_compute[3], p->wake_small_s * 1e3,
                  p->wake_small[0], p->wake_small[1], p->wake_small[2], p->wake_small[3]);
    }
fail:
    halo_graph_free(g);
    return rc;
}
