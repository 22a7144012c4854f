/* The model's life and state: configuration, devices, creation, parameters and Adam's moments,
 * host buffers, mini-batch checks, Adam's step. Its passes are in model_pass.c, the copy stage
 * in model_stage.c, all written once over the table of operations (ops.h); the back end (CPU or
 * CUDA) is chosen when the model is created. */
#include "model/model.h"
#include "model/internal.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/ops.h"
#include "model/gat.h"
#include "model/rgcn.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Parameter blocks start at multiples of this many floats (64 bytes). */
#define MODEL_ALIGN 16

/* The dropout purpose of ops.h (the device code's copy) is core/rng.h's. */
_Static_assert(HALO_OPS_RNG_DROPOUT == HALO_RNG_DROPOUT,
               "model/ops.h: HALO_OPS_RNG_DROPOUT differs from core/rng.h's HALO_RNG_DROPOUT");


void halo_model_config_default(halo_model_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->layers = 2;
    cfg->hidden = 16;
    cfg->dropout = 0.5f;
    cfg->lr = 0.003f;
    cfg->beta1 = 0.9f;
    cfg->beta2 = 0.999f;
    cfg->eps = 1e-8f;
    cfg->weight_decay = 0.0f;
    cfg->seed = 1;
    cfg->device = HALO_DEVICE_CPU;
    cfg->gpu = -1;
    cfg->threads = 0;
    cfg->path = HALO_MODEL_PATH_AUTO;
    cfg->kind = HALO_MODEL_SAGE;
    cfg->relations = 1;
    cfg->bases = 0;
    cfg->heads = 4;
    cfg->out_heads = 1;
}

int halo_model_kind_parse(const char *name, int *kind)
{
    if (name != NULL && strcmp(name, "sage") == 0) {
        *kind = HALO_MODEL_SAGE;
    } else if (name != NULL && strcmp(name, "rgcn") == 0) {
        *kind = HALO_MODEL_RGCN;
    } else if (name != NULL && strcmp(name, "gat") == 0) {
        *kind = HALO_MODEL_GAT;
    } else {
        return halo_errorf(HALO_EUSAGE, "--model: expected sage, rgcn or gat, got '%s'",
                           name != NULL ? name : "");
    }
    return 0;
}

void halo_model_run_defaults(int kind, int *hidden, double *lr, int64_t *batch)
{
    bool rgcn = kind == HALO_MODEL_RGCN, gat = kind == HALO_MODEL_GAT;
    if (hidden != NULL) {
        *hidden = rgcn ? 64 : gat ? 8 : 16;
    }
    if (lr != NULL) {
        *lr = rgcn ? 0.01 : gat ? 0.005 : 0.003;
    }
    if (batch != NULL) {
        *batch = rgcn ? 500 : 2000;
    }
}

const char *halo_model_kind_name(int kind)
{
    return kind == HALO_MODEL_SAGE   ? "sage"
           : kind == HALO_MODEL_RGCN ? "rgcn"
           : kind == HALO_MODEL_GAT  ? "gat"
                                     : "?";
}

/* ---------------------------------------------------------------- devices */

int halo_model_device_parse(const char *name, int *device)
{
    if (name != NULL && strcmp(name, "auto") == 0) {
        *device = HALO_DEVICE_AUTO;
    } else if (name != NULL && strcmp(name, "cpu") == 0) {
        *device = HALO_DEVICE_CPU;
    } else if (name != NULL && strcmp(name, "gpu") == 0) {
        *device = HALO_DEVICE_GPU;
    } else {
        return halo_errorf(HALO_EUSAGE, "--device: expected auto, cpu or gpu, got '%s'",
                           name != NULL ? name : "");
    }
    return 0;
}

const char *halo_model_device_name(int device)
{
    switch (device) {
    case HALO_DEVICE_AUTO:
        return "auto";
    case HALO_DEVICE_CPU:
        return "cpu";
    case HALO_DEVICE_GPU:
        return "gpu";
    default:
        return "?";
    }
}

int halo_model_gpu_count(void)
{
    return halo_ops_cuda_device_count(NULL);
}

int halo_model_device_resolve(int requested, int local_rank, int *device, int *gpu)
{
    *device = HALO_DEVICE_CPU;
    *gpu = -1;
    if (requested == HALO_DEVICE_CPU) {
        return 0;
    }
    if (requested != HALO_DEVICE_AUTO && requested != HALO_DEVICE_GPU) {
        return halo_errorf(HALO_EUSAGE, "--device: unknown device %d", requested);
    }
    const char *why = NULL;
    int count = halo_ops_cuda_device_count(&why);
    if (count <= 0) {
        if (requested == HALO_DEVICE_GPU) {
            if (halo_ops_cuda_table() == NULL) {
                return halo_errorf(HALO_ECUDA, "--device gpu: no GPU found (%s)",
                                   why != NULL ? why : "GPU support was not compiled in");
            }
            return halo_errorf(HALO_ECUDA, "--device gpu: no GPU found");
        }
        halo_notice("--device auto: no GPU (%s), computing on the CPU",
                    why != NULL ? why : "none found");
        return 0;
    }
    *device = HALO_DEVICE_GPU;
    *gpu = (local_rank > 0 ? local_rank : 0) % count;
    return 0;
}

/* ---------------------------------------------------------------- creation */

const halo_model_config *halo_model_config_of(const halo_model *m)
{
    return &m->cfg;
}

int halo_model_layer_in(const halo_model *m, int layer)
{
    return m->dims[layer];
}

int halo_model_layer_out(const halo_model *m, int layer)
{
    return m->dims[layer + 1];
}

static int check_config(const halo_model_config *c)
{
    if (c->layers < 1 || c->layers > HALO_MAX_LAYERS) {
        return halo_errorf(HALO_EUSAGE, "model: layers must be in [1, %d], got %d",
                           HALO_MAX_LAYERS, c->layers);
    }
    if (c->in_dim < 1 || c->classes < 1 || (c->layers > 1 && c->hidden < 1)) {
        return halo_errorf(HALO_EUSAGE,
                           "model: in_dim, hidden and classes must be positive (got %d, %d, %d)",
                           c->in_dim, c->hidden, c->classes);
    }
    if (!(c->dropout >= 0.0f && c->dropout < 1.0f)) {
        return halo_errorf(HALO_EUSAGE, "model: dropout must be in [0, 1), got %g",
                           (double)c->dropout);
    }
    if (!(c->lr > 0.0f) || !(c->beta1 >= 0.0f && c->beta1 < 1.0f) ||
        !(c->beta2 >= 0.0f && c->beta2 < 1.0f) || !(c->eps >= 0.0f) ||
        !(c->weight_decay >= 0.0f)) {
        return halo_errorf(HALO_EUSAGE, "model: bad Adam settings (lr %g, betas %g %g, eps %g, "
                                        "weight decay %g)",
                           (double)c->lr, (double)c->beta1, (double)c->beta2, (double)c->eps,
                           (double)c->weight_decay);
    }
    if (c->device != HALO_DEVICE_CPU && c->device != HALO_DEVICE_GPU) {
        return halo_errorf(HALO_EUSAGE, "model: device must be resolved to cpu or gpu");
    }
    if (c->path < HALO_MODEL_PATH_AUTO || c->path > HALO_MODEL_PATH_LIN_FIRST) {
        return halo_errorf(HALO_EUSAGE, "model: unknown layer path %d", c->path);
    }
    if (c->kind != HALO_MODEL_SAGE && c->kind != HALO_MODEL_RGCN && c->kind != HALO_MODEL_GAT) {
        return halo_errorf(HALO_EUSAGE, "model: unknown model kind %d", c->kind);
    }
    if (c->kind == HALO_MODEL_RGCN) {
        /* etype is one byte per edge */
        if (c->relations < 1 || c->relations > 256) {
            return halo_errorf(HALO_EUSAGE, "model: rgcn relations must be in [1, 256], got %d",
                               c->relations);
        }
        if (c->bases < 0 || c->bases > c->relations) {
            return halo_errorf(HALO_EUSAGE,
                               "model: rgcn bases must be in [0, relations = %d], got %d",
                               c->relations, c->bases);
        }
    }
    if (c->kind == HALO_MODEL_GAT && (c->heads < 1 || c->heads > 256)) {
        return halo_errorf(HALO_EUSAGE, "model: gat heads must be in [1, 256], got %d", c->heads);
    }
    if (c->kind == HALO_MODEL_GAT && (c->out_heads < 1 || c->out_heads > 256)) {
        return halo_errorf(HALO_EUSAGE, "model: gat output heads must be in [1, 256], got %d",
                           c->out_heads);
    }
    /* Parameters, gradients and both Adam moments (4 float arrays), estimated in double before
     * any allocation so a huge --hidden is refused here, naming it, instead of aborting inside
     * the allocator. GraphSAGE: W_self, W_neigh and a bias per layer; RGCN: a self-loop weight
     * and one weight per relation (or per basis, plus the coefficients); GAT: W, a_l, a_r and
     * a bias, hidden layers heads x hidden wide. */
    double count = 0;
    double width = c->kind == HALO_MODEL_GAT ? (double)c->hidden * c->heads : c->hidden;
    if (c->kind == HALO_MODEL_GAT && c->layers > 1 && width > INT32_MAX / 4) {
        return halo_errorf(HALO_EUSAGE, "model: gat hidden width %d x %d heads is too large",
                           c->hidden, c->heads);
    }
    for (int l = 0; l < c->layers; l++) {
        double din = l == 0 ? c->in_dim : width;
        double dout = l == c->layers - 1 ? c->classes : width;
        double mats = 2;
        if (c->kind == HALO_MODEL_RGCN) {
            mats = 1 + (c->bases > 0 ? c->bases : c->relations);
            count += c->bases > 0 ? (double)c->relations * c->bases : 0;
        }
        if (c->kind == HALO_MODEL_GAT) {
            mats = 1;
            dout *= l == c->layers - 1 ? c->out_heads : 1; /* before the heads' mean */
            count += 2 * dout;                             /* a_l and a_r */
        }
        count += mats * din * dout + dout;
    }
    return halo_mem_fits(count * 4 * sizeof(float),
                         "--hidden %d (model of %d layers, %d input features, %d classes)",
                         c->hidden, c->layers, c->in_dim, c->classes);
}


/* Xavier/Glorot uniform with the ReLU gain, as DGL's SAGEConv.reset_parameters: each of W_self
 * and W_neigh ~ U(-a, a), a = sqrt(2) * sqrt(6 / (in + out)); draw number e of (layer, matrix)
 * is element e of the row-major in x out matrix. Biases are zero. */
static void init_params(halo_model *m)
{
    for (int l = 0; l < m->cfg.layers; l++) {
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = halo_model_rgcn_shape(m, l);
            halo_rgcn_init(&s, m->cfg.seed, l, m->h_param + m->off[l]);
            continue;
        }
        if (m->cfg.kind == HALO_MODEL_GAT) {
            halo_gat_shape s = halo_model_gat_shape(m, l);
            halo_gat_init(&s, m->cfg.seed, l, m->h_param + m->off[l]);
            continue;
        }
        int in = m->dims[l], out = m->dims[l + 1];
        double bound = sqrt(2.0) * sqrt(6.0 / (double)(in + out));
        for (int which = 0; which < 2; which++) {
            halo_rng r;
            halo_rng_init(&r, m->cfg.seed, HALO_RNG_INIT, (uint64_t)l, (uint64_t)which, 0);
            float *w = m->h_param + m->off[l] + (size_t)which * in * out;
            for (size_t e = 0; e < (size_t)in * out; e++) {
                w[e] = (float)((2.0 * halo_rng_uniform(&r) - 1.0) * bound);
            }
        }
    }
}

int halo_model_create(const halo_model_config *cfg, halo_model **out)
{
    *out = NULL;
    HALO_CHECK(check_config(cfg));
    const halo_ops *ops = &halo_ops_cpu;
    if (cfg->device == HALO_DEVICE_GPU) {
        ops = halo_ops_cuda_table();
        if (ops == NULL) {
            return halo_errorf(HALO_ECUDA, "model: GPU support was not compiled in");
        }
    }
    if (cfg->kind == HALO_MODEL_GAT && ops->gat_aggregate == NULL) {
        return halo_errorf(HALO_EUSAGE, "--model gat: the %s back end has no GAT kernels",
                           ops->name);
    }
    halo_model *m = HALO_NEW(halo_model, 1);
    m->cfg = *cfg;
    if (m->cfg.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        m->cfg.threads = n > 0 ? (int)n : 1;
    }
    m->ops = ops;
    m->host_is_dev = ops == &halo_ops_cpu;
    int L = cfg->layers;
    m->dims[0] = cfg->in_dim;
    for (int l = 1; l < L; l++) {
        m->dims[l] = cfg->kind == HALO_MODEL_GAT ? cfg->hidden * cfg->heads : cfg->hidden;
    }
    m->dims[L] = cfg->classes;
    size_t off = 0;
    for (int l = 0; l < L; l++) {
        m->off[l] = off;
        if (cfg->kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = halo_model_rgcn_shape(m, l);
            off += halo_rgcn_floats(&s);
        } else if (cfg->kind == HALO_MODEL_GAT) {
            halo_gat_shape s = halo_model_gat_shape(m, l);
            off += halo_gat_floats(&s);
        } else {
            off += 2 * (size_t)m->dims[l] * m->dims[l + 1] + (size_t)m->dims[l + 1];
        }
        off = (off + MODEL_ALIGN - 1) / MODEL_ALIGN * MODEL_ALIGN;
    }
    m->off[L] = off;
    m->count = off;

    halo_ops_config oc = {.threads = m->cfg.threads, .gpu = cfg->gpu};
    int rc = ops->open(&oc, &m->ctx);
    if (rc < 0) {
        halo_free(m);
        return rc;
    }
    size_t bytes = m->count * sizeof(float);
    void *p;
    /* one block for the four (count is a multiple of MODEL_ALIGN floats) */
    m->h_param = halo_model_host_buf_alloc(m, 4 * bytes, &m->params_pageable);
    m->h_grad = m->h_param + m->count;
    m->h_m = m->h_grad + m->count;
    m->h_v = m->h_m + m->count;
    if (m->host_is_dev) {
        m->d_param = m->h_param;
        m->d_grad = m->h_grad;
        m->d_m = m->h_m;
        m->d_v = m->h_v;
    } else {
        HALO_TRY(ops->dev_alloc(m->ctx, bytes, &p));
        m->d_param = p;
        HALO_TRY(ops->dev_alloc(m->ctx, bytes, &p));
        m->d_grad = p;
        HALO_TRY(ops->dev_alloc(m->ctx, bytes, &p));
        m->d_m = p;
        HALO_TRY(ops->dev_alloc(m->ctx, bytes, &p));
        m->d_v = p;
    }
    init_params(m);
    HALO_TRY(halo_model_push_state(m));
    *out = m;
    return 0;
fail:
    halo_model_free(m);
    return rc;
}

void halo_model_free(halo_model *m)
{
    if (m == NULL) {
        return;
    }
    if (m->ctx != NULL) {
        if (!m->host_is_dev) {
            m->ops->dev_free(m->ctx, m->d_param);
            m->ops->dev_free(m->ctx, m->d_grad);
            m->ops->dev_free(m->ctx, m->d_m);
            m->ops->dev_free(m->ctx, m->d_v);
        }
        /* h_grad, h_m and h_v lie in h_param's block */
        halo_model_host_buf_free(m, m->h_param, m->params_pageable);
        halo_model_host_buf_free(m, m->in_buf, m->in_pageable);
        halo_model_host_buf_free(m, m->h_rowloss, m->rows_pageable); /* and h_pred, in its block */
        m->ops->close(m->ctx);
        halo_free(m->h_lab);
    }
    for (int l = 0; l < HALO_MAX_LAYERS; l++) {
        halo_free(m->vptr[l]);
        halo_free(m->vidx[l]);
    }
    halo_free(m->rcnt);
    halo_free(m->hmean_ptr);
    halo_free(m->hmean_idx);
    halo_free(m);
}

/* ---------------------------------------------------------------- state accessors */

/* The back end's sync; afterwards nothing queued reads a host buffer any more. */
int halo_model_queue_sync(halo_model *m)
{
    HALO_CHECK(m->ops->sync(m->ctx));
    m->grad_inflight = false;
    return 0;
}

/* GPU: brings the host parameters up to date after Adam steps (which leave them on the device:
 * the host copy is only needed for checksums, checkpoints and by hand). */
static int refresh_params(halo_model *m)
{
    if (!m->host_stale) {
        return 0;
    }
    HALO_CHECK(m->ops->d2h(m->ctx, m->h_param, m->d_param, m->count * sizeof(float)));
    HALO_CHECK(halo_model_queue_sync(m));
    m->host_stale = false;
    return 0;
}

float *halo_model_params(halo_model *m, size_t *count)
{
    if (count != NULL) {
        *count = m->count;
    }
    if (refresh_params(m) < 0) {
        /* a device fault: the next operation reports it again (the error is sticky) */
        halo_warn("model: parameters not refreshed from the device: %s", halo_errmsg());
    }
    return m->h_param;
}

float *halo_model_grads(halo_model *m, size_t *count)
{
    if (count != NULL) {
        *count = m->count;
    }
    if (m->grad_inflight && halo_model_queue_sync(m) < 0) {
        halo_warn("model: waiting for the gradient upload: %s", halo_errmsg());
    }
    return m->h_grad;
}

size_t halo_model_param_offset(const halo_model *m, int layer)
{
    return m->off[layer];
}

size_t halo_model_bias_offset(const halo_model *m, int layer)
{
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        halo_rgcn_shape s = halo_model_rgcn_shape(m, layer);
        return m->off[layer] + halo_rgcn_bias_at(&s);
    }
    if (m->cfg.kind == HALO_MODEL_GAT) {
        halo_gat_shape s = halo_model_gat_shape(m, layer);
        return m->off[layer] + halo_gat_bias_at(&s);
    }
    return m->off[layer] + 2 * (size_t)m->dims[layer] * m->dims[layer + 1];
}

float *halo_model_adam_m(halo_model *m)
{
    return m->h_m;
}

float *halo_model_adam_v(halo_model *m)
{
    return m->h_v;
}

int64_t halo_model_adam_t(const halo_model *m)
{
    return m->t;
}

void halo_model_set_adam_t(halo_model *m, int64_t t)
{
    m->t = t;
}

int halo_model_pull_state(halo_model *m)
{
    if (m->host_is_dev) {
        return 0;
    }
    size_t bytes = m->count * sizeof(float);
    HALO_CHECK(m->ops->d2h(m->ctx, m->h_param, m->d_param, bytes));
    HALO_CHECK(m->ops->d2h(m->ctx, m->h_m, m->d_m, bytes));
    HALO_CHECK(m->ops->d2h(m->ctx, m->h_v, m->d_v, bytes));
    HALO_CHECK(halo_model_queue_sync(m));
    m->host_stale = false;
    return 0;
}

int halo_model_push_state(halo_model *m)
{
    if (m->host_is_dev) {
        return 0;
    }
    size_t bytes = m->count * sizeof(float);
    HALO_CHECK(m->ops->h2d(m->ctx, m->d_param, m->h_param, bytes));
    HALO_CHECK(m->ops->h2d(m->ctx, m->d_m, m->h_m, bytes));
    HALO_CHECK(m->ops->h2d(m->ctx, m->d_v, m->h_v, bytes));
    HALO_CHECK(halo_model_queue_sync(m));
    m->host_stale = false; /* the host was authoritative */
    return 0;
}

uint64_t halo_model_param_checksum(halo_model *m)
{
    const float *p = halo_model_params(m, NULL);
    uint64_t h = halo_mix64(m->count);
    for (size_t i = 0; i < m->count; i++) {
        uint32_t w;
        memcpy(&w, &p[i], sizeof w);
        h = halo_mix64(h ^ w);
    }
    return h;
}

/* Host memory for copies: pinned from the back end or, when that fails (a GPU's pinned memory
 * is limited), plain memory, which copies still work from (synchronously); one notice per
 * model. *pageable says which, for halo_model_host_buf_free. */
void *halo_model_host_buf_alloc(halo_model *m, size_t bytes, bool *pageable)
{
    void *p = NULL;
    *pageable = false;
    if (m->ops->host_alloc(m->ctx, bytes, &p) == 0) {
        return p;
    }
    if (!m->pageable_noticed) {
        halo_notice("model: pinned host memory unavailable (%s); copying from plain memory",
                    halo_errmsg());
        m->pageable_noticed = true;
    }
    halo_error_clear();
    *pageable = true;
    return halo_calloc(bytes > 0 ? bytes : 1, 1);
}

/* Frees what halo_model_host_buf_alloc returned. */
void halo_model_host_buf_free(halo_model *m, void *p, bool pageable)
{
    if (p == NULL) {
        return;
    }
    if (pageable) {
        halo_free(p);
    } else {
        m->ops->host_free(m->ctx, p);
    }
}

float *halo_model_input_buffer(halo_model *m, int64_t rows)
{
    if (rows > m->in_rows) {
        halo_model_host_buf_free(m, m->in_buf, m->in_pageable);
        m->in_buf = halo_model_host_buf_alloc(m, (size_t)rows * m->cfg.in_dim * sizeof(float),
                                              &m->in_pageable);
        m->in_rows = rows;
    }
    return m->in_buf;
}

/* ---------------------------------------------------------------- blocks */

/* RGCN: every edge of block l names a relation of the model; untyped blocks only for R = 1. */
static int check_etypes(const halo_model *m, int l, const halo_block *b)
{
    int R = m->cfg.relations;
    if (b->etype == NULL) {
        if (R > 1 && b->num_edges > 0) {
            return halo_errorf(HALO_EINPUT,
                               "model: rgcn with %d relations needs typed blocks, block %d has "
                               "no edge types (a homogeneous graph?)",
                               R, l);
        }
        return 0;
    }
    for (int64_t e = 0; e < b->num_edges; e++) {
        if (b->etype[e] >= R) {
            return halo_errorf(HALO_EINPUT,
                               "model: block %d: edge %lld has relation %d, the model has %d", l,
                               (long long)e, b->etype[e], R);
        }
    }
    return 0;
}

/* Checks one mini-batch against the model: layer count, chained sizes, CSR offsets and source
 * numbers. A sequential pass over the edges, small next to the layers' work. */
int halo_model_check_minibatch(const halo_model *m, const halo_minibatch *mb)
{
    if (mb->layers != m->cfg.layers) {
        return halo_errorf(HALO_EINPUT, "model: mini-batch has %d layers, the model %d",
                           mb->layers, m->cfg.layers);
    }
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        if (b->num_dst < 0 || b->num_src < b->num_dst) {
            return halo_errorf(HALO_EINPUT, "model: block %d has %d destinations and %d sources",
                               l, b->num_dst, b->num_src);
        }
        if (l + 1 < mb->layers && mb->blocks[l + 1].num_src != b->num_dst) {
            return halo_errorf(HALO_EINPUT,
                               "model: block %d has %d destinations but block %d %d sources", l,
                               b->num_dst, l + 1, mb->blocks[l + 1].num_src);
        }
        if (b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges) {
            return halo_errorf(HALO_EINPUT, "model: block %d: indptr does not span its %lld edges",
                               l, (long long)b->num_edges);
        }
        for (int32_t i = 0; i < b->num_dst; i++) {
            if (b->indptr[i + 1] < b->indptr[i]) {
                return halo_errorf(HALO_EINPUT, "model: block %d: indptr decreases at %d", l, i);
            }
        }
        for (int64_t e = 0; e < b->num_edges; e++) {
            if ((uint32_t)b->indices[e] >= (uint32_t)b->num_src) {
                return halo_errorf(HALO_EINPUT,
                                   "model: block %d: edge %lld has source %d outside [0, %d)", l,
                                   (long long)e, b->indices[e], b->num_src);
            }
        }
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            HALO_CHECK(check_etypes(m, l, b));
        }
    }
    int L = mb->layers;
    if (mb->blocks[L - 1].num_dst != mb->num_seeds || mb->blocks[0].num_src != mb->num_input) {
        return halo_errorf(HALO_EINPUT, "model: mini-batch seed or input count disagrees with "
                                        "its blocks");
    }
    return 0;
}

/* The cheaper way to compute a layer on a block (AUTO), a pure function of its shape and of
 * whether the layer's input needs a gradient (every layer but the first), counting the forward
 * and the backward pass. Agg-first gathers `in` floats per edge and multiplies num_dst x 2in by
 * 2in x out; lin-first multiplies all num_src + num_dst rows by in x out and gathers `out` floats
 * per edge (twice: forward and the transposed backward). */
int halo_model_choose_path(const halo_model *m, const halo_block *b, int in, int out, bool need_dx)
{
    if (m->cfg.path != HALO_MODEL_PATH_AUTO) {
        return m->cfg.path;
    }
    return halo_model_lin_first((double)b->num_edges, b->num_dst, b->num_src, in, out, need_dx)
               ? HALO_MODEL_PATH_LIN_FIRST
               : HALO_MODEL_PATH_AGG_FIRST;
}


double halo_model_step_flops(const halo_model *m, const halo_minibatch *mb)
{
    double flops = 0;
    for (int l = 0; l < m->cfg.layers; l++) {
        const halo_block *b = &mb->blocks[l];
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = halo_model_rgcn_shape(m, l);
            flops += halo_rgcn_flops(&s, b, l > 0);
            continue;
        }
        if (m->cfg.kind == HALO_MODEL_GAT) {
            halo_gat_shape s = halo_model_gat_shape(m, l);
            flops += halo_gat_flops(&s, (double)b->num_edges, b->num_dst, b->num_src, l > 0);
            continue;
        }
        double in = m->dims[l], out = m->dims[l + 1], e = (double)b->num_edges;
        double nd = b->num_dst, ns = b->num_src;
        bool dx = l > 0;
        if (halo_model_choose_path(m, b, (int)in, (int)out, dx) == HALO_MODEL_PATH_AGG_FIRST) {
            flops += 2 * nd * 2 * in * out + e * in;            /* forward */
            flops += 2 * nd * 2 * in * out;                     /* dW */
            flops += dx ? 2 * nd * 2 * in * out + e * in : 0.0; /* dX */
        } else {
            flops += 2 * (ns + nd) * in * out + e * out;
            flops += 2 * (ns + nd) * in * out + e * out;
            flops += dx ? 2 * (ns + nd) * in * out : 0.0;
        }
    }
    return flops;
}

int halo_model_adam_step(halo_model *m, float grad_scale)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    size_t bytes = m->count * sizeof(float);
    halo_ops_adam hp = {.lr = m->cfg.lr, .beta1 = m->cfg.beta1, .beta2 = m->cfg.beta2,
                        .eps = m->cfg.eps, .weight_decay = m->cfg.weight_decay,
                        .grad_scale = grad_scale, .t = m->t + 1};
    HALO_CHECK(ops->h2d(ctx, m->d_grad, m->h_grad, bytes));
    HALO_CHECK(ops->adam(ctx, m->d_param, m->d_grad, m->d_m, m->d_v, m->count, &hp));
    if (!m->host_is_dev) {
        /* queued: the next pass runs after it in queue order; the host parameters are refreshed
         * only when read (halo_model_params, _param_checksum, _pull_state) */
        m->host_stale = true;
        m->grad_inflight = true;
    }
    m->t++;
    return 0;
}
