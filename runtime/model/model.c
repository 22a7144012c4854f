/* GraphSAGE and RGCN (rgcn.c) layers, loss and optimiser written once over the table of
 * operations (ops.h); the back end (CPU or CUDA) is chosen when the model is created. */
#include "model/model.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/ops.h"
#include "model/rgcn.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Parameter blocks start at multiples of this many floats (64 bytes). */
#define MODEL_ALIGN 16
/* Cost of one gathered float of the aggregation in GEMM FLOP (measured order of magnitude). */
#define MODEL_GATHER_COST 32.0
/* Alignment in bytes of the arrays packed into a stage's buffers. */
#define STAGE_ALIGN 256

_Static_assert(HALO_OPS_RNG_DROPOUT == HALO_RNG_DROPOUT,
               "model/ops.h: HALO_OPS_RNG_DROPOUT differs from core/rng.h's HALO_RNG_DROPOUT");

struct halo_model {
    halo_model_config cfg;         /* as created (device resolved, threads filled in) */
    const halo_ops *ops;           /* back end */
    halo_ops_ctx *ctx;             /* its state */
    bool host_is_dev;              /* CPU: device buffers are the host buffers */
    int dims[HALO_MAX_LAYERS + 1]; /* in_dim, hidden..., classes */
    size_t off[HALO_MAX_LAYERS + 1]; /* parameter offset of each layer; off[L] = count */
    size_t count;                  /* floats in each of param, grad, m, v */
    float *h_param, *h_grad;       /* host parameters and gradients */
    float *h_m, *h_v;              /* host copies of Adam's moments */
    float *d_param, *d_grad;       /* device parameters and gradients (== host on CPU) */
    float *d_m, *d_v;              /* device moments (== host on CPU) */
    int64_t t;                     /* Adam steps taken */
    float *in_buf;                 /* halo_model_input_buffer (pinned on GPU) */
    int64_t in_rows;               /* its capacity in rows */
    bool in_pageable;              /* in_buf is plain memory (pinned memory ran out) */
    float *h_rowloss;              /* host staging: per-seed loss */
    int32_t *h_pred;               /* host staging: per-seed prediction */
    bool rows_pageable;            /* h_rowloss and h_pred are plain memory */
    int32_t *h_lab;                /* host copy of the labels of the last pass */
    int32_t stage_rows;            /* capacity of the three above */
    bool pageable_noticed;         /* the notice of a pinned-memory fall-back was printed */
    int32_t pend_n;                /* seeds of the last pass's loss in the staging */
    bool pend_labels;              /* ... which had labels */
    bool have_last;                /* last holds a training pass's stats */
    halo_model_stats last;         /* stats of the last training pass (halo_model_last_stats) */
    bool host_stale;               /* GPU: h_param is behind d_param (Adam ran since) */
    bool grad_inflight;            /* GPU: Adam's upload of h_grad may still be reading it */
    int64_t *vptr[HALO_MAX_LAYERS];  /* RGCN: host relation CSR of each layer's block */
    int32_t *vidx[HALO_MAX_LAYERS];  /* its sources */
    int64_t vptr_cap[HALO_MAX_LAYERS], vidx_cap[HALO_MAX_LAYERS]; /* their capacities */
    int64_t *rcnt;                 /* RGCN: [relations] scratch of the relation CSR */
};

/* What the forward pass keeps of a layer for the backward pass (device pointers). */
typedef struct layer_state {
    int path;               /* HALO_MODEL_PATH_AGG_FIRST or _LIN_FIRST */
    const float *h;         /* input rows [num_src x in] */
    float *xcat;            /* agg-first: [num_dst x 2in] = [h_dst | mean] */
    float *y;               /* output after bias and activation [num_dst x out] */
    const int64_t *indptr;  /* block CSR on the device */
    const int32_t *indices; /* block sources on the device */
    halo_rgcn_state rgcn;   /* RGCN layers: what the backward pass needs */
} layer_state;

/* A mini-batch already on the device (a stage's copies): what model_forward and model_loss
 * would otherwise copy themselves. */
typedef struct dev_batch {
    const float *feat;                       /* [num_input x in_dim] input rows */
    const int64_t *indptr[HALO_MAX_LAYERS];  /* layer l's CSR (RGCN: by relation) */
    const int32_t *indices[HALO_MAX_LAYERS]; /* its sources */
    const int32_t *gid[HALO_MAX_LAYERS];     /* dropout keys of its destinations, or NULL */
    const int32_t *labels;                   /* [num_seeds] labels */
} dev_batch;

/* One pipeline slot's staging (halo_model_stage_upload): a pinned host buffer the blocks, dropout
 * keys and labels are packed into, its device mirror, the device input rows, and two events. */
struct halo_model_stage {
    halo_ops_event *copied; /* copy queue: this stage's last copies are done */
    halo_ops_event *used;   /* compute queue: the last pass over its device buffers is done */
    char *h_pack;           /* pinned host: the packed arrays */
    bool pack_pageable;     /* h_pack is plain memory (pinned memory ran out) */
    char *d_pack;           /* device mirror of h_pack */
    size_t pack_cap;        /* bytes of each */
    float *d_feat;          /* device input rows */
    size_t feat_cap;        /* its bytes */
    int64_t *rcnt;          /* RGCN: [relations] scratch of the relation CSR */
    int64_t batch;          /* batch staged (-1: none, or consumed by a training pass) */
    bool copies;            /* the batch was copied (GPU, or cfg.copy_stage on CPU) */
    halo_minibatch mb;      /* the staged mini-batch (the caller's host arrays) */
    const float *feat;      /* its host input rows */
    const int32_t *labels;  /* its host labels */
    dev_batch db;           /* device pointers of the copied batch */
    int64_t bytes;          /* bytes the last upload queued for the device */
    int64_t uploads;        /* uploads made */
};

static void *host_buf_alloc(halo_model *m, size_t bytes, bool *pageable);
static void host_buf_free(halo_model *m, void *p, bool pageable);

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
}

int halo_model_kind_parse(const char *name, int *kind)
{
    if (name != NULL && strcmp(name, "sage") == 0) {
        *kind = HALO_MODEL_SAGE;
    } else if (name != NULL && strcmp(name, "rgcn") == 0) {
        *kind = HALO_MODEL_RGCN;
    } else {
        return halo_errorf(HALO_EUSAGE, "--model: expected sage or rgcn, got '%s'",
                           name != NULL ? name : "");
    }
    return 0;
}

const char *halo_model_kind_name(int kind)
{
    return kind == HALO_MODEL_SAGE ? "sage" : kind == HALO_MODEL_RGCN ? "rgcn" : "?";
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
    if (c->kind != HALO_MODEL_SAGE && c->kind != HALO_MODEL_RGCN) {
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
    /* Parameters, gradients and both Adam moments (4 float arrays), estimated in double before
     * any allocation so a huge --hidden is refused here, naming it, instead of aborting inside
     * the allocator. GraphSAGE: W_self, W_neigh and a bias per layer; RGCN: a self-loop weight
     * and one weight per relation (or per basis, plus the coefficients). */
    double count = 0;
    for (int l = 0; l < c->layers; l++) {
        double din = l == 0 ? c->in_dim : c->hidden;
        double dout = l == c->layers - 1 ? c->classes : c->hidden;
        double mats = 2;
        if (c->kind == HALO_MODEL_RGCN) {
            mats = 1 + (c->bases > 0 ? c->bases : c->relations);
            count += c->bases > 0 ? (double)c->relations * c->bases : 0;
        }
        count += mats * din * dout + dout;
    }
    return halo_mem_fits(count * 4 * sizeof(float),
                         "--hidden %d (model of %d layers, %d input features, %d classes)",
                         c->hidden, c->layers, c->in_dim, c->classes);
}

/* Shape of RGCN layer l. */
static halo_rgcn_shape rgcn_shape(const halo_model *m, int l)
{
    halo_rgcn_shape s = {.in = m->dims[l], .out = m->dims[l + 1], .R = m->cfg.relations,
                         .B = m->cfg.bases};
    return s;
}

/* Xavier/Glorot uniform with the ReLU gain, as DGL's SAGEConv.reset_parameters: each of W_self
 * and W_neigh ~ U(-a, a), a = sqrt(2) * sqrt(6 / (in + out)); draw number e of (layer, matrix)
 * is element e of the row-major in x out matrix. Biases are zero. */
static void init_params(halo_model *m)
{
    for (int l = 0; l < m->cfg.layers; l++) {
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = rgcn_shape(m, l);
            halo_rgcn_init(&s, m->cfg.seed, l, m->h_param + m->off[l]);
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
        m->dims[l] = cfg->hidden;
    }
    m->dims[L] = cfg->classes;
    size_t off = 0;
    for (int l = 0; l < L; l++) {
        m->off[l] = off;
        if (cfg->kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = rgcn_shape(m, l);
            off += halo_rgcn_floats(&s);
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
    HALO_TRY(ops->host_alloc(m->ctx, bytes, &p));
    m->h_param = p;
    HALO_TRY(ops->host_alloc(m->ctx, bytes, &p));
    m->h_grad = p;
    HALO_TRY(ops->host_alloc(m->ctx, bytes, &p));
    m->h_m = p;
    HALO_TRY(ops->host_alloc(m->ctx, bytes, &p));
    m->h_v = p;
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
        m->ops->host_free(m->ctx, m->h_param);
        m->ops->host_free(m->ctx, m->h_grad);
        m->ops->host_free(m->ctx, m->h_m);
        m->ops->host_free(m->ctx, m->h_v);
        host_buf_free(m, m->in_buf, m->in_pageable);
        host_buf_free(m, m->h_rowloss, m->rows_pageable); /* and h_pred, in its block */
        m->ops->close(m->ctx);
        halo_free(m->h_lab);
    }
    for (int l = 0; l < HALO_MAX_LAYERS; l++) {
        halo_free(m->vptr[l]);
        halo_free(m->vidx[l]);
    }
    halo_free(m->rcnt);
    halo_free(m);
}

/* ---------------------------------------------------------------- state accessors */

/* The back end's sync; afterwards nothing queued reads a host buffer any more. */
static int model_sync(halo_model *m)
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
    HALO_CHECK(model_sync(m));
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
    if (m->grad_inflight && model_sync(m) < 0) {
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
        halo_rgcn_shape s = rgcn_shape(m, layer);
        return m->off[layer] + halo_rgcn_bias_at(&s);
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
    HALO_CHECK(model_sync(m));
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
    HALO_CHECK(model_sync(m));
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
 * model. *pageable says which, for host_buf_free. */
static void *host_buf_alloc(halo_model *m, size_t bytes, bool *pageable)
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

/* Frees what host_buf_alloc returned. */
static void host_buf_free(halo_model *m, void *p, bool pageable)
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
        host_buf_free(m, m->in_buf, m->in_pageable);
        m->in_buf = host_buf_alloc(m, (size_t)rows * m->cfg.in_dim * sizeof(float),
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
static int check_minibatch(const halo_model *m, const halo_minibatch *mb)
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
static int choose_path(const halo_model *m, const halo_block *b, int in, int out, bool need_dx)
{
    if (m->cfg.path != HALO_MODEL_PATH_AUTO) {
        return m->cfg.path;
    }
    double e = (double)b->num_edges, nd = b->num_dst, ns = b->num_src;
    double g = MODEL_GATHER_COST, mm = 2.0 * (double)in * out;
    double agg_first = g * e * in + 2.0 * nd * mm + 2.0 * nd * mm;
    double lin_first = g * e * out + (ns + nd) * mm + g * e * out + (ns + nd) * mm;
    if (need_dx) {
        agg_first += 2.0 * nd * mm + g * e * in;
        lin_first += (ns + nd) * mm;
    }
    return lin_first < agg_first ? HALO_MODEL_PATH_LIN_FIRST : HALO_MODEL_PATH_AGG_FIRST;
}

double halo_model_step_flops(const halo_model *m, const halo_minibatch *mb)
{
    double flops = 0;
    for (int l = 0; l < m->cfg.layers; l++) {
        const halo_block *b = &mb->blocks[l];
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            halo_rgcn_shape s = rgcn_shape(m, l);
            flops += halo_rgcn_flops(&s, b, l > 0);
            continue;
        }
        double in = m->dims[l], out = m->dims[l + 1], e = (double)b->num_edges;
        double nd = b->num_dst, ns = b->num_src;
        bool dx = l > 0;
        if (choose_path(m, b, (int)in, (int)out, dx) == HALO_MODEL_PATH_AGG_FIRST) {
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

/* ---------------------------------------------------------------- forward / backward */

/* Applies layer l to block b with input rows h (device): fills st (the output in st->y, after
 * bias and, unless last, ReLU and the dropout drop). gid_dev: destination global ids for dropout
 * (may be NULL when drop is NULL). */
static int layer_forward(halo_model *m, int l, const halo_block *b, const float *h,
                         const int64_t *indptr, const int32_t *indices,
                         const halo_ops_dropout *drop, layer_state *st)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int in = m->dims[l], out = m->dims[l + 1];
    bool last = l == m->cfg.layers - 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        halo_rgcn_shape s = rgcn_shape(m, l);
        HALO_CHECK(halo_rgcn_forward(ops, ctx, &s, m->d_param + m->off[l], b, h, indptr, indices,
                                     !last, drop, &st->rgcn));
        st->y = st->rgcn.y;
        return 0;
    }
    const float *w = m->d_param + m->off[l];
    const float *bias = w + 2 * (size_t)in * out;
    int32_t nd = b->num_dst, ns = b->num_src;
    void *p;
    st->path = choose_path(m, b, in, out, l > 0);
    st->h = h;
    st->indptr = indptr;
    st->indices = indices;
    st->xcat = NULL;
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * out * sizeof(float), &p));
    st->y = p;
    if (st->path == HALO_MODEL_PATH_AGG_FIRST) {
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * 2 * in * sizeof(float), &p));
        st->xcat = p;
        HALO_CHECK(ops->copy_rows(ctx, st->xcat, 2 * in, h, in, nd, in));
        HALO_CHECK(ops->agg_mean(ctx, nd, indptr, indices, in, h, in, st->xcat + in, 2 * in, 0));
        return ops->gemm_bias_act(ctx, nd, out, 2 * in, st->xcat, 2 * in, w, out, 0.0f, st->y,
                                  out, bias, !last, drop);
    } else {
        float *z;
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * out * sizeof(float), &p));
        z = p;
        HALO_CHECK(ops->gemm(ctx, 0, 0, ns, out, in, 1.0f, h, in, w + (size_t)in * out, out,
                             0.0f, z, out));
        HALO_CHECK(ops->gemm(ctx, 0, 0, nd, out, in, 1.0f, h, in, w, out, 0.0f, st->y, out));
        HALO_CHECK(ops->agg_mean(ctx, nd, indptr, indices, out, z, out, st->y, out, 1));
    }
    return ops->bias_act(ctx, st->y, nd, out, out, bias, !last, drop);
}

/* Backward of layer l: dy (device, [num_dst x out], gradient w.r.t. the layer's output after its
 * activation; overwritten) gives the layer's parameter gradients and, when dh is not NULL, the
 * gradient w.r.t. its input rows in *dh (workspace, [num_src x in]). act_done: dy is the gradient
 * before the activation already, and the bias gradient is there (the layer above fused them).
 * below (may be NULL): the activation of the layer below (its output is this layer's input);
 * *fused is set when its backward (and its bias gradient) went into the pass writing *dh. */
static int layer_backward(halo_model *m, int l, const halo_block *b, const layer_state *st,
                          float *dy, float drop_p, float **dh, bool act_done,
                          const halo_ops_act_grad *below, bool *fused)
{
    *fused = false;
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int in = m->dims[l], out = m->dims[l + 1];
    bool last = l == m->cfg.layers - 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        halo_rgcn_shape s = rgcn_shape(m, l);
        return halo_rgcn_backward(ops, ctx, &s, m->d_param + m->off[l], m->d_grad + m->off[l], b,
                                  &st->rgcn, dy, !last, drop_p, dh);
    }
    const float *w = m->d_param + m->off[l];
    float *gw = m->d_grad + m->off[l];
    float *gb = gw + 2 * (size_t)in * out;
    int32_t nd = b->num_dst, ns = b->num_src;
    void *p;
    if (last) {
        HALO_CHECK(ops->col_sum(ctx, dy, nd, out, out, gb));
    } else if (!act_done) {
        HALO_CHECK(ops->act_backward(ctx, dy, st->y, nd, out, out, drop_p, gb));
    }
    float *dx = NULL;
    if (dh != NULL) {
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * in * sizeof(float), &p));
        dx = p;
    }
    if (st->path == HALO_MODEL_PATH_AGG_FIRST) {
        /* y = [h_dst | mean] W: dW = xcat^T dy; dxcat = dy W^T */
        HALO_CHECK(ops->gemm(ctx, 1, 0, 2 * in, out, nd, 1.0f, st->xcat, 2 * in, dy, out, 0.0f,
                             gw, out));
        if (dx != NULL) {
            float *dxcat;
            HALO_CHECK(ops->ws_alloc(ctx, (size_t)nd * 2 * in * sizeof(float), &p));
            dxcat = p;
            HALO_CHECK(ops->gemm(ctx, 0, 1, nd, 2 * in, out, 1.0f, dy, out, w, out, 0.0f, dxcat,
                                 2 * in));
            /* self part into the destinations' rows, then the neighbours' part added to them
             * and written into the other sources' rows, then (below) the activation's backward
             * of the layer below, in the same pass */
            HALO_CHECK(ops->copy_rows(ctx, dx, in, dxcat, 2 * in, nd, in));
            HALO_CHECK(ops->agg_mean_backward(ctx, nd, ns, b->num_edges, st->indptr, st->indices,
                                              in, dxcat + in, 2 * in, dx, in, nd, below));
            *fused = below != NULL;
        }
    } else {
        /* y = h_dst W_self + mean(h W_neigh) */
        const float *ws = w, *wn = w + (size_t)in * out;
        float *dz;
        HALO_CHECK(ops->gemm(ctx, 1, 0, in, out, nd, 1.0f, st->h, in, dy, out, 0.0f, gw, out));
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)ns * out * sizeof(float), &p));
        dz = p;
        HALO_CHECK(ops->agg_mean_backward(ctx, nd, ns, b->num_edges, st->indptr, st->indices, out,
                                          dy, out, dz, out, 0, NULL));
        HALO_CHECK(ops->gemm(ctx, 1, 0, in, out, ns, 1.0f, st->h, in, dz, out, 0.0f,
                             gw + (size_t)in * out, out));
        if (dx != NULL) {
            HALO_CHECK(ops->gemm(ctx, 0, 1, ns, in, out, 1.0f, dz, out, wn, out, 0.0f, dx, in));
            HALO_CHECK(ops->gemm(ctx, 0, 1, nd, in, out, 1.0f, dy, out, ws, out, 1.0f, dx, in));
        }
    }
    if (dh != NULL) {
        *dh = dx;
    }
    return 0;
}

/* Grows the host staging buffers for per-seed loss and predictions. */
static int stage_rows(halo_model *m, int32_t rows)
{
    if (rows <= m->stage_rows) {
        return 0;
    }
    host_buf_free(m, m->h_rowloss, m->rows_pageable); /* h_pred lies in the same block */
    halo_free(m->h_lab);
    m->h_lab = NULL;
    /* one allocation for both: they are pinned or plain together */
    size_t loss_bytes = ((size_t)rows * sizeof(float) + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
    char *p = host_buf_alloc(m, loss_bytes + (size_t)rows * sizeof(int32_t), &m->rows_pageable);
    m->h_rowloss = (float *)(void *)p;
    m->h_pred = (int32_t *)(void *)(p + loss_bytes);
    m->h_lab = HALO_ALLOC(int32_t, rows);
    m->stage_rows = rows;
    return 0;
}

/* The CSR layer l computes over, on the device: the block's own (SAGE) or its edges regrouped by
 * relation (RGCN, built on the host into the layer's buffers, which stay untouched until the next
 * pass, after the back end's sync). */
static int block_to_dev(halo_model *m, int l, const halo_block *b, const int64_t **indptr,
                        const int32_t **indices)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    const void *p;
    const int64_t *ptr = b->indptr;
    const int32_t *idx = b->indices;
    int64_t nptr = (int64_t)b->num_dst + 1;
    if (m->cfg.kind == HALO_MODEL_RGCN) {
        int R = m->cfg.relations;
        nptr = (int64_t)b->num_dst * R + 1;
        if (nptr > m->vptr_cap[l]) {
            halo_free(m->vptr[l]);
            m->vptr_cap[l] = nptr + nptr / 2;
            m->vptr[l] = HALO_ALLOC(int64_t, m->vptr_cap[l]);
        }
        if (b->num_edges + 1 > m->vidx_cap[l]) {
            halo_free(m->vidx[l]);
            m->vidx_cap[l] = b->num_edges + 1 + b->num_edges / 2;
            m->vidx[l] = HALO_ALLOC(int32_t, m->vidx_cap[l]);
        }
        if (m->rcnt == NULL) {
            m->rcnt = HALO_ALLOC(int64_t, R);
        }
        halo_rgcn_relation_csr(b, R, m->vptr[l], m->vidx[l], m->rcnt);
        ptr = m->vptr[l];
        idx = m->vidx[l];
    }
    HALO_CHECK(ops->to_dev(ctx, ptr, (size_t)nptr * sizeof(int64_t), &p));
    *indptr = p;
    HALO_CHECK(ops->to_dev(ctx, idx, (size_t)b->num_edges * sizeof(int32_t), &p));
    *indices = p;
    return 0;
}

/* Whether layer l of a training pass drops units (and so needs its destinations' keys). */
static bool layer_drops(const halo_model *m, int l)
{
    return l < m->cfg.layers - 1 && m->cfg.dropout > 0.0f;
}

/* Forward over all layers of mb. train: dropout on (keyed by step). Layer states into st.
 * db: the batch is on the device already (a stage's copies), else it is copied here. */
static int model_forward(halo_model *m, const halo_minibatch *mb, const float *feat, bool train,
                         uint64_t step, const dev_batch *db, layer_state *st)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    const void *p;
    if (db != NULL) {
        p = db->feat;
    } else {
        HALO_CHECK(ops->to_dev(ctx, feat, (size_t)mb->num_input * m->cfg.in_dim * sizeof(float),
                               &p));
    }
    const float *h = p;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        const int64_t *indptr;
        const int32_t *indices;
        if (db != NULL) {
            indptr = db->indptr[l];
            indices = db->indices[l];
        } else {
            HALO_CHECK(block_to_dev(m, l, b, &indptr, &indices));
        }
        halo_ops_dropout drop = {0};
        const halo_ops_dropout *dp = NULL;
        if (train && layer_drops(m, l)) {
            if (db != NULL) {
                p = db->gid[l];
            } else {
                HALO_CHECK(
                    ops->to_dev(ctx, b->src_gid, (size_t)b->num_dst * sizeof(int32_t), &p));
            }
            drop.p = m->cfg.dropout;
            drop.seed = m->cfg.seed;
            drop.step = step;
            drop.layer = (uint64_t)l;
            drop.gid = p;
            dp = &drop;
        }
        HALO_CHECK(layer_forward(m, l, b, h, indptr, indices, dp, &st[l]));
        h = st[l].y;
    }
    return 0;
}

/* Loss, predictions and (dlogits != NULL) the loss gradient for the seeds, queued: the per-seed
 * losses and predictions are copied into the host staging in queue order and read by
 * loss_finish after the pass's one wait (no wait here, between forward and backward). dev_labels:
 * the labels on the device already (a stage's), else they are copied here. */
static int model_loss(halo_model *m, const halo_minibatch *mb, const float *logits,
                      const int32_t *labels, const int32_t *dev_labels, float **dlogits)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    int32_t n = mb->num_seeds;
    int c = m->cfg.classes;
    void *p;
    const void *cp;
    float *row_loss = NULL, *dx = NULL;
    int32_t *pred;
    const int32_t *lab = NULL;
    if (labels != NULL) {
        for (int32_t r = 0; r < n; r++) {
            if (labels[r] < 0 || labels[r] >= c) {
                return halo_errorf(HALO_EINPUT, "model: label %d of seed %d is outside [0, %d)",
                                   labels[r], r, c);
            }
        }
        if (dev_labels != NULL) {
            cp = dev_labels;
        } else {
            HALO_CHECK(ops->to_dev(ctx, labels, (size_t)n * sizeof(int32_t), &cp));
        }
        lab = cp;
        HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * sizeof(float), &p));
        row_loss = p;
        if (dlogits != NULL) {
            HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * c * sizeof(float), &p));
            dx = p;
        }
    }
    HALO_CHECK(ops->ws_alloc(ctx, (size_t)n * sizeof(int32_t), &p));
    pred = p;
    float scale = n > 0 ? 1.0f / (float)n : 0.0f;
    HALO_CHECK(ops->softmax_xent(ctx, logits, n, c, lab, scale, dx, row_loss, pred));
    HALO_CHECK(stage_rows(m, n > 0 ? n : 1));
    HALO_CHECK(ops->d2h(ctx, m->h_pred, pred, (size_t)n * sizeof(int32_t)));
    if (row_loss != NULL) {
        HALO_CHECK(ops->d2h(ctx, m->h_rowloss, row_loss, (size_t)n * sizeof(float)));
    }
    if (dlogits != NULL) {
        *dlogits = dx;
    }
    if (labels != NULL) {
        memcpy(m->h_lab, labels, (size_t)n * sizeof(int32_t));
    }
    m->pend_n = n;
    m->pend_labels = labels != NULL;
    return 0;
}

/* After the pass's wait: the predictions into pred_out and the stats (loss summed in seed order
 * on the host, so it does not depend on the back end's threads) into *out. */
static void loss_finish(halo_model *m, int32_t *pred_out, halo_model_stats *out)
{
    int32_t n = m->pend_n;
    if (pred_out != NULL) {
        memcpy(pred_out, m->h_pred, (size_t)n * sizeof(int32_t));
    }
    double sum = 0;
    int32_t correct = 0;
    for (int32_t r = 0; r < n; r++) {
        if (m->pend_labels) {
            sum += m->h_rowloss[r];
            correct += m->h_pred[r] == m->h_lab[r];
        }
    }
    out->loss = n > 0 ? (float)(sum / n) : 0.0f;
    out->correct = correct;
    out->seeds = n;
}

int halo_model_train_forward_backward(halo_model *m, const halo_minibatch *mb, const float *feat,
                                      const int32_t *labels, uint64_t step,
                                      halo_model_stats *stats)
{
    return halo_model_train_forward_backward_dx(m, mb, feat, labels, step, stats, NULL);
}

/* A pass failed midway with rc: kernels it queued may still read the workspace and a stage's
 * buffers. Records the stage's `used` event after them and waits for the compute queue, so that
 * the next ws_reset or upload cannot overwrite what a queued kernel reads; keeps rc's message. */
static int pass_abort(halo_model *m, halo_model_stage *sg, int rc)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", halo_errmsg());
    if (sg != NULL) {
        (void)m->ops->record(m->ctx, sg->used, 0);
    }
    (void)model_sync(m);
    return halo_errorf(rc, "%s", msg);
}

/* The queued part of a training pass: forward, loss, backward, the gradients' copy back; `used`
 * recorded on the compute queue after the last read of db. */
static int train_queue(halo_model *m, const halo_minibatch *mb, const float *feat,
                       const int32_t *labels, uint64_t step, float *d_input, const dev_batch *db,
                       halo_model_stage *sg)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    layer_state st[HALO_MAX_LAYERS];
    if (sg != NULL) {
        HALO_CHECK(ops->wait(ctx, sg->copied, 0));
    }
    HALO_CHECK(model_forward(m, mb, feat, true, step, db, st));
    float *dy;
    int L = mb->layers;
    HALO_CHECK(model_loss(m, mb, st[L - 1].y, labels, db != NULL ? db->labels : NULL, &dy));
    float p = m->cfg.dropout;
    bool act_done = false;
    for (int l = L - 1; l >= 0; l--) {
        float *dh = NULL;
        halo_ops_act_grad below = {0};
        const halo_ops_act_grad *bp = NULL;
        if (l > 0 && m->cfg.kind == HALO_MODEL_SAGE) {
            /* layer l-1's ReLU/dropout and bias gradient, fused into layer l's input gradient */
            below.y = st[l - 1].y;
            below.p = p;
            below.db = m->d_grad + m->off[l - 1] + 2 * (size_t)m->dims[l - 1] * m->dims[l];
            bp = &below;
        }
        HALO_CHECK(layer_backward(m, l, &mb->blocks[l], &st[l], dy, l < L - 1 ? p : 0.0f,
                                  l > 0 || d_input != NULL ? &dh : NULL, act_done, bp,
                                  &act_done));
        dy = dh;
    }
    if (sg != NULL) {
        HALO_CHECK(ops->record(ctx, sg->used, 0));
    }
    if (d_input != NULL) {
        HALO_CHECK(ops->d2h(ctx, d_input, dy,
                            (size_t)mb->num_input * m->cfg.in_dim * sizeof(float)));
    }
    if (!m->host_is_dev) {
        HALO_CHECK(ops->d2h(ctx, m->h_grad, m->d_grad, m->count * sizeof(float)));
    }
    return 0;
}

/* One training pass: db (a stage's device copies, waited for by the compute queue through
 * copied) or the host arrays copied here. One host wait, for the gradients (the trainer's
 * allreduce needs them); the loss rows come with it. A failure midway waits too (pass_abort). */
static int train_pass(halo_model *m, const halo_minibatch *mb, const float *feat,
                      const int32_t *labels, uint64_t step, halo_model_stats *stats,
                      float *d_input, const dev_batch *db, halo_model_stage *sg)
{
    if (labels == NULL) {
        return halo_errorf(HALO_EUSAGE, "model: training needs the seeds' labels");
    }
    m->have_last = false;
    m->ops->ws_reset(m->ctx);
    int rc = train_queue(m, mb, feat, labels, step, d_input, db, sg);
    if (rc < 0) {
        return pass_abort(m, sg, rc);
    }
    HALO_CHECK(model_sync(m));
    loss_finish(m, NULL, &m->last);
    m->have_last = true;
    if (stats != NULL) {
        *stats = m->last;
    }
    return 0;
}

int halo_model_train_forward_backward_dx(halo_model *m, const halo_minibatch *mb,
                                         const float *feat, const int32_t *labels, uint64_t step,
                                         halo_model_stats *stats, float *d_input)
{
    HALO_CHECK(check_minibatch(m, mb));
    return train_pass(m, mb, feat, labels, step, stats, d_input, NULL, NULL);
}

int halo_model_last_stats(const halo_model *m, halo_model_stats *out)
{
    if (!m->have_last) {
        return halo_errorf(HALO_ESTATE, "model: no training pass to read the loss of");
    }
    *out = m->last;
    return 0;
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

/* ---------------------------------------------------------------- the copy stage */

int halo_model_host_alloc(halo_model *m, size_t bytes, void **out)
{
    return m->ops->host_alloc(m->ctx, bytes, out);
}

void halo_model_host_free(halo_model *m, void *p)
{
    if (p != NULL) {
        m->ops->host_free(m->ctx, p);
    }
}

int halo_model_host_pinned(halo_model *m, const void *p)
{
    return m->ops->host_pinned(m->ctx, p);
}

int halo_model_stage_new(halo_model *m, halo_model_stage **out)
{
    halo_model_stage *sg = HALO_NEW(halo_model_stage, 1);
    sg->batch = -1;
    int rc = m->ops->event_new(m->ctx, &sg->copied);
    if (rc == 0) {
        rc = m->ops->event_new(m->ctx, &sg->used);
    }
    if (rc < 0) {
        halo_model_stage_free(m, sg);
        sg = NULL;
    }
    *out = sg;
    return rc;
}

void halo_model_stage_free(halo_model *m, halo_model_stage *sg)
{
    if (sg == NULL) {
        return;
    }
    const halo_ops *ops = m->ops;
    /* nothing may still read the buffers: the copies and the last pass over them */
    if (sg->copied != NULL) {
        (void)ops->event_sync(m->ctx, sg->copied);
    }
    if (sg->used != NULL) {
        (void)ops->event_sync(m->ctx, sg->used);
    }
    host_buf_free(m, sg->h_pack, sg->pack_pageable);
    if (sg->d_pack != NULL) {
        ops->dev_free(m->ctx, sg->d_pack);
    }
    if (sg->d_feat != NULL) {
        ops->dev_free(m->ctx, sg->d_feat);
    }
    if (sg->copied != NULL) {
        ops->event_free(m->ctx, sg->copied);
    }
    if (sg->used != NULL) {
        ops->event_free(m->ctx, sg->used);
    }
    halo_free(sg->rcnt);
    halo_free(sg);
}

int64_t halo_model_stage_bytes(const halo_model_stage *sg)
{
    return sg->bytes;
}

int64_t halo_model_stage_batch(const halo_model_stage *sg)
{
    return sg->batch;
}

/* Rounds a byte offset up to STAGE_ALIGN. */
static size_t stage_align(size_t at)
{
    return (at + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
}

/* Where each array of mb lies in a stage's packed buffers (byte offsets); returns the total. */
typedef struct stage_layout {
    size_t indptr[HALO_MAX_LAYERS], indices[HALO_MAX_LAYERS], gid[HALO_MAX_LAYERS];
    int64_t nptr[HALO_MAX_LAYERS]; /* indptr entries of layer l */
    size_t labels;                 /* offset of the labels */
    size_t total;                  /* bytes */
} stage_layout;

static void stage_plan(const halo_model *m, const halo_minibatch *mb, stage_layout *lo)
{
    size_t at = 0;
    int R = m->cfg.kind == HALO_MODEL_RGCN ? m->cfg.relations : 1;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        lo->nptr[l] = (int64_t)b->num_dst * R + 1;
        lo->indptr[l] = at;
        at = stage_align(at + (size_t)lo->nptr[l] * sizeof(int64_t));
        lo->indices[l] = at;
        at = stage_align(at + (size_t)b->num_edges * sizeof(int32_t));
        lo->gid[l] = at;
        if (layer_drops(m, l)) {
            at = stage_align(at + (size_t)b->num_dst * sizeof(int32_t));
        }
    }
    lo->labels = at;
    at = stage_align(at + (size_t)mb->num_seeds * sizeof(int32_t));
    lo->total = at;
}

/* Grows a stage's buffers to pack bytes and feat bytes. Old buffers are freed only once nothing
 * reads them any more (host waits for both events: growth is rare). */
static int stage_grow(halo_model *m, halo_model_stage *sg, size_t pack, size_t feat)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    void *p;
    if (pack > sg->pack_cap || feat > sg->feat_cap) {
        HALO_CHECK(ops->event_sync(ctx, sg->copied));
        HALO_CHECK(ops->event_sync(ctx, sg->used));
    }
    if (pack > sg->pack_cap) {
        size_t cap = stage_align(pack + pack / 2);
        host_buf_free(m, sg->h_pack, sg->pack_pageable);
        if (sg->d_pack != NULL) {
            ops->dev_free(ctx, sg->d_pack);
        }
        sg->h_pack = sg->d_pack = NULL;
        sg->pack_cap = 0;
        sg->h_pack = host_buf_alloc(m, cap, &sg->pack_pageable);
        HALO_CHECK(ops->dev_alloc(ctx, cap, &p));
        sg->d_pack = p;
        sg->pack_cap = cap;
    }
    if (feat > sg->feat_cap) {
        size_t cap = stage_align(feat + feat / 2);
        if (sg->d_feat != NULL) {
            ops->dev_free(ctx, sg->d_feat);
        }
        sg->d_feat = NULL;
        sg->feat_cap = 0;
        HALO_CHECK(ops->dev_alloc(ctx, cap, &p));
        sg->d_feat = p;
        sg->feat_cap = cap;
    }
    return 0;
}

int halo_model_stage_upload(halo_model *m, halo_model_stage *sg, const halo_minibatch *mb,
                            const float *feat, const int32_t *labels, int64_t batch)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    sg->batch = -1;
    sg->bytes = 0;
    HALO_CHECK(check_minibatch(m, mb));
    if (labels == NULL) {
        return halo_errorf(HALO_EUSAGE, "model: training needs the seeds' labels");
    }
    sg->mb = *mb;
    sg->feat = feat;
    sg->labels = labels;
    sg->copies = !m->host_is_dev || m->cfg.copy_stage;
    sg->uploads++;
    if (!sg->copies) {
        /* CPU: the device reads host memory; nothing to copy */
        sg->batch = batch;
        return 0;
    }
    stage_layout lo;
    stage_plan(m, mb, &lo);
    size_t fbytes = (size_t)mb->num_input * m->cfg.in_dim * sizeof(float);
    HALO_CHECK(stage_grow(m, sg, lo.total, fbytes));
    /* the packed host buffer is rewritten: the last copies out of it must be done (they are by
     * now: the pass that read them has waited for them) */
    HALO_CHECK(ops->event_sync(ctx, sg->copied));
    char *h = sg->h_pack;
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        int64_t *ptr = (int64_t *)(void *)(h + lo.indptr[l]);
        int32_t *idx = (int32_t *)(void *)(h + lo.indices[l]);
        if (m->cfg.kind == HALO_MODEL_RGCN) {
            if (sg->rcnt == NULL) {
                sg->rcnt = HALO_ALLOC(int64_t, m->cfg.relations);
            }
            halo_rgcn_relation_csr(b, m->cfg.relations, ptr, idx, sg->rcnt);
        } else {
            memcpy(ptr, b->indptr, (size_t)lo.nptr[l] * sizeof(int64_t));
            memcpy(idx, b->indices, (size_t)b->num_edges * sizeof(int32_t));
        }
        if (layer_drops(m, l)) {
            memcpy(h + lo.gid[l], b->src_gid, (size_t)b->num_dst * sizeof(int32_t));
        }
        sg->db.indptr[l] = (const int64_t *)(const void *)(sg->d_pack + lo.indptr[l]);
        sg->db.indices[l] = (const int32_t *)(const void *)(sg->d_pack + lo.indices[l]);
        sg->db.gid[l] =
            layer_drops(m, l) ? (const int32_t *)(const void *)(sg->d_pack + lo.gid[l]) : NULL;
    }
    memcpy(h + lo.labels, labels, (size_t)mb->num_seeds * sizeof(int32_t));
    sg->db.labels = (const int32_t *)(const void *)(sg->d_pack + lo.labels);
    sg->db.feat = sg->d_feat;
    /* the device buffers may still be read by the slot's last pass: the copies wait for it */
    HALO_CHECK(ops->wait(ctx, sg->used, 1));
    HALO_CHECK(ops->copy_h2d(ctx, sg->d_pack, sg->h_pack, lo.total));
    HALO_CHECK(ops->copy_h2d(ctx, sg->d_feat, feat, fbytes));
    HALO_CHECK(ops->record(ctx, sg->copied, 1));
    sg->bytes = (int64_t)(lo.total + fbytes);
    sg->batch = batch;
    return 0;
}

int halo_model_train_staged(halo_model *m, halo_model_stage *sg, int64_t batch, uint64_t step,
                            halo_model_stats *stats)
{
    if (sg->batch < 0 || sg->batch != batch) {
        return halo_errorf(HALO_ESTATE,
                           "model: the stage holds batch %lld (-1: none), the pass asks for %lld",
                           (long long)sg->batch, (long long)batch);
    }
    sg->batch = -1; /* consumed: the slot takes a later batch next */
    if (!sg->copies) {
        return train_pass(m, &sg->mb, sg->feat, sg->labels, step, stats, NULL, NULL, NULL);
    }
    return train_pass(m, &sg->mb, sg->feat, sg->labels, step, stats, NULL, &sg->db, sg);
}

int halo_model_infer(halo_model *m, const halo_minibatch *mb, const float *feat,
                     const int32_t *labels, float *logits, int32_t *pred, halo_model_stats *stats)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    layer_state st[HALO_MAX_LAYERS];
    HALO_CHECK(check_minibatch(m, mb));
    ops->ws_reset(ctx);
    int rc = model_forward(m, mb, feat, false, 0, NULL, st);
    const float *y = rc == 0 ? st[mb->layers - 1].y : NULL;
    if (rc == 0 && logits != NULL) {
        rc = ops->d2h(ctx, logits, y, (size_t)mb->num_seeds * m->cfg.classes * sizeof(float));
    }
    bool loss = pred != NULL || stats != NULL;
    if (rc == 0 && loss) {
        rc = model_loss(m, mb, y, stats != NULL ? labels : NULL, NULL, NULL);
    }
    if (rc < 0) {
        return pass_abort(m, NULL, rc);
    }
    HALO_CHECK(model_sync(m));
    if (loss) {
        halo_model_stats ms;
        loss_finish(m, pred, &ms);
        if (stats != NULL) {
            *stats = ms;
        }
    }
    return 0;
}

int halo_model_layer_forward(halo_model *m, int layer, const halo_block *blk, const float *h_src,
                             float *h_dst)
{
    const halo_ops *ops = m->ops;
    halo_ops_ctx *ctx = m->ctx;
    if (layer < 0 || layer >= m->cfg.layers) {
        return halo_errorf(HALO_EUSAGE, "model: layer %d outside [0, %d)", layer, m->cfg.layers);
    }
    halo_minibatch one = {.layers = 1, .blocks = {*blk}, .num_seeds = blk->num_dst,
                          .num_input = blk->num_src};
    halo_model tmp = *m;
    tmp.cfg.layers = 1;
    HALO_CHECK(check_minibatch(&tmp, &one));
    int in = m->dims[layer], out = m->dims[layer + 1];
    const void *p;
    ops->ws_reset(ctx);
    HALO_CHECK(ops->to_dev(ctx, h_src, (size_t)blk->num_src * in * sizeof(float), &p));
    const float *h = p;
    const int64_t *indptr;
    const int32_t *indices;
    HALO_CHECK(block_to_dev(m, layer, blk, &indptr, &indices));
    layer_state st;
    int rc = layer_forward(m, layer, blk, h, indptr, indices, NULL, &st);
    if (rc == 0) {
        rc = ops->d2h(ctx, h_dst, st.y, (size_t)blk->num_dst * out * sizeof(float));
    }
    return rc < 0 ? pass_abort(m, NULL, rc) : model_sync(m);
}
