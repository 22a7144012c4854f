/* What model.c, model_pass.c and model_stage.c share: the model's and a stage's state, the
 * device form of a batch, and the functions each of them uses of another. Not a public header. */
#ifndef HALO_MODEL_INTERNAL_H
#define HALO_MODEL_INTERNAL_H

#include "model/model.h"
#include "model/ops.h"
#include "model/gat.h"
#include "model/rgcn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Alignment in bytes of the arrays packed into a stage's buffers. */
#define STAGE_ALIGN 256

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
    bool params_pageable;          /* the four above are plain memory (pinned memory ran out) */
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
    int64_t *hmean_ptr;            /* GAT: CSR of the output heads' mean, row i = i*H (grows) */
    int32_t *hmean_idx;            /* its sources 0, 1, ... */
    int64_t hmean_cap;             /* rows (destinations x heads) the two cover */
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
    halo_gat_state gat;     /* GAT layers: what the backward pass needs */
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

/* Shape of RGCN layer l. */
static inline halo_rgcn_shape halo_model_rgcn_shape(const halo_model *m, int l)
{
    halo_rgcn_shape s = {.in = m->dims[l], .out = m->dims[l + 1], .R = m->cfg.relations,
                         .B = m->cfg.bases};
    return s;
}

/* Shape of GAT layer l: cfg.heads heads of hidden floats on a hidden layer, cfg.out_heads of
 * classes (averaged) on the output layer. */
static inline halo_gat_shape halo_model_gat_shape(const halo_model *m, int l)
{
    bool last = l == m->cfg.layers - 1;
    int heads = last ? m->cfg.out_heads : m->cfg.heads;
    halo_gat_shape s = {
        .in = m->dims[l], .heads = heads, .fdim = last ? m->dims[l + 1] : m->dims[l + 1] / heads};
    return s;
}

/* Whether layer l of a training pass drops units (and so needs its destinations' keys). */
static inline bool halo_model_layer_drops(const halo_model *m, int l)
{
    return l < m->cfg.layers - 1 && m->cfg.dropout > 0.0f;
}

/* The back end's sync; afterwards nothing queued reads a host buffer any more (model.c). */
int halo_model_queue_sync(halo_model *m);
/* Host memory for copies: pinned, or plain memory when pinned memory runs out (one notice per
 * model); *pageable says which, for halo_model_host_buf_free (model.c). */
void *halo_model_host_buf_alloc(halo_model *m, size_t bytes, bool *pageable);
void halo_model_host_buf_free(halo_model *m, void *p, bool pageable);
/* Checks one mini-batch against the model (model.c). */
int halo_model_check_minibatch(const halo_model *m, const halo_minibatch *mb);
/* The layer path of a block (AUTO resolved; model.c). */
int halo_model_choose_path(const halo_model *m, const halo_block *b, int in, int out, bool need_dx);
/* One training pass: the host arrays, or db (a stage's device copies, sg its stage); see
 * model_pass.c. */
int halo_model_train_pass(halo_model *m, const halo_minibatch *mb, const float *feat,
                          const int32_t *labels, uint64_t step, halo_model_stats *stats,
                          float *d_input, const dev_batch *db, halo_model_stage *sg);

#endif
