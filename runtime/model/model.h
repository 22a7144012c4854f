/* GraphSAGE (mean aggregator, as DGL's SAGEConv), RGCN (per-relation means, as DGL's
 * RelGraphConv) or GAT (multi-head attention, as DGL's GATConv) over sampled blocks: forward,
 * softmax cross-entropy, backward, Adam; one model on a CPU (OpenBLAS) or GPU (CUDA + cuBLAS) back
 * end. */
#ifndef HALO_MODEL_H
#define HALO_MODEL_H

#include "sample/block.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a model computes. AUTO is only a request; halo_model_device_resolve turns it into one of
 * the other two. */
enum { HALO_DEVICE_AUTO = 0, HALO_DEVICE_CPU = 1, HALO_DEVICE_GPU = 2 };

/* How a layer combines aggregation and its linear map; both compute the same function and differ
 * only in float rounding and cost. AUTO picks the cheaper one from the block's shape. */
enum {
    HALO_MODEL_PATH_AUTO = 0,      /* cost model: pure function of the shapes */
    HALO_MODEL_PATH_AGG_FIRST = 1, /* mean of inputs, then [h_dst | mean] x [W_self; W_neigh] */
    HALO_MODEL_PATH_LIN_FIRST = 2, /* h_src x W_neigh, then mean; plus h_dst x W_self */
};

/* Which layer the model stacks. */
enum {
    HALO_MODEL_SAGE = 0, /* GraphSAGE, mean aggregator */
    HALO_MODEL_RGCN = 1, /* RGCN: a weight per relation (or a basis mix), mean per relation */
    HALO_MODEL_GAT = 2,  /* GAT: multi-head attention over the sampled in-edges (model/gat.h) */
};

/* Everything that defines a model and its optimiser. halo_model_config_default fills in the
 * defaults of the MassiveGNN / DistDGL GraphSAGE examples. */
typedef struct halo_model_config {
    int layers;          /* L >= 1 (default 2) */
    int in_dim;          /* input feature width (required) */
    int hidden;          /* width of every hidden layer (default 16); GAT: per head, so a
                            hidden layer is heads x hidden wide */
    int classes;         /* output width (required) */
    float dropout;       /* drop probability between layers, in [0, 1) (default 0.5) */
    float lr;            /* Adam learning rate (default 0.003) */
    float beta1;         /* Adam first-moment decay (default 0.9) */
    float beta2;         /* Adam second-moment decay (default 0.999) */
    float eps;           /* Adam epsilon (default 1e-8) */
    float weight_decay;  /* L2 coefficient added to the gradient as torch.optim.Adam (default 0) */
    uint64_t seed;       /* keys weight init and dropout masks (default 1) */
    int device;          /* HALO_DEVICE_CPU or HALO_DEVICE_GPU (resolve AUTO first) */
    int gpu;             /* CUDA device ordinal when device is GPU */
    int threads;         /* CPU threads of the kernels and GEMMs; 0: all online cores */
    int path;            /* HALO_MODEL_PATH_* for every layer (default AUTO; SAGE only) */
    int kind;            /* HALO_MODEL_SAGE or HALO_MODEL_RGCN (default SAGE) */
    int relations;       /* RGCN: number of relations R >= 1 (edge types; default 1) */
    int bases;           /* RGCN: basis matrices B in [1, R] shared by the relations, 0: one
                            weight per relation (default 0) */
    int heads;           /* GAT: attention heads of each hidden layer (default 4) */
    int out_heads;       /* GAT: heads of the output layer, averaged (default 1) */
    int copy_stage;      /* CPU: 1 = halo_model_stage_upload really copies (into buffers of its
                            own, as on a GPU), to test the GPU data path's logic; 0 (default):
                            the CPU reads the host arrays, nothing is copied. GPU: always copies */
} halo_model_config;

/* Result of one forward pass with labels. */
typedef struct halo_model_stats {
    float loss;      /* mean softmax cross-entropy over the seeds */
    int32_t correct; /* seeds whose arg-max class equals the label */
    int32_t seeds;   /* number of seeds */
} halo_model_stats;

/* A model and its back end; used by one thread at a time. */
typedef struct halo_model halo_model;

/* Fills cfg with the defaults (2 layers, hidden 16, dropout 0.5, Adam lr 0.003, betas 0.9/0.999,
 * eps 1e-8, no weight decay, seed 1, CPU, all cores); in_dim and classes are left 0. */
void halo_model_config_default(halo_model_config *cfg);

/* Parses "sage", "rgcn" or "gat" into HALO_MODEL_*; HALO_EUSAGE otherwise. */
int halo_model_kind_parse(const char *name, int *kind);
/* Name of a HALO_MODEL_* kind ("sage", "rgcn", "gat"). */
const char *halo_model_kind_name(int kind);
/* The defaults of a run that depend on the model KIND (HALO_MODEL_*): hidden width, Adam learning
 * rate and seeds per batch. GraphSAGE: 16, 0.003, 2000 (the MassiveGNN / DistDGL examples); RGCN:
 * 64, 0.01, 500 (DGL's RGCN examples' width and rate; RGCN needs more steps); GAT: 8 per head,
 * 0.005, 2000 (DGL's GAT example's width per head and rate). halo train and
 * halo sim both take them, so that a default simulated run replays a default trained one; a
 * value given on the command line wins in both. Any pointer may be NULL. */
void halo_model_run_defaults(int kind, int *hidden, double *lr, int64_t *batch);

/* Parses "auto", "cpu" or "gpu" into HALO_DEVICE_*; HALO_EUSAGE otherwise. */
int halo_model_device_parse(const char *name, int *device);
/* Name of a HALO_DEVICE_* value ("auto", "cpu", "gpu"). */
const char *halo_model_device_name(int device);
/* Number of usable CUDA devices (0 when none, when no driver, or when built without CUDA). */
int halo_model_gpu_count(void);
/* Resolves a requested device for a rank: AUTO -> GPU when a GPU exists, else CPU with a one-line
 * notice; GPU with no GPU -> HALO_ECUDA "--device gpu: no GPU found". On GPU the rank takes
 * device local_rank % count (the caller reads OMPI_COMM_WORLD_LOCAL_RANK). gpu is -1 on CPU. */
int halo_model_device_resolve(int requested, int local_rank, int *device, int *gpu);

/* Creates a model: validates cfg, opens the back end, and initialises the weights (Xavier/Glorot
 * uniform with the ReLU gain as DGL's SAGEConv, keyed by (seed, layer, matrix, element); biases
 * zero; RGCN: per relation or basis matrix likewise, docs/rgcn.md) and Adam's state (zero
 * moments, step 0). */
int halo_model_create(const halo_model_config *cfg, halo_model **out);
void halo_model_free(halo_model *m);
/* The configuration the model was created with. */
const halo_model_config *halo_model_config_of(const halo_model *m);

/* Width of the input and output of layer l (in_dim, hidden, ..., classes). */
int halo_model_layer_in(const halo_model *m, int layer);
int halo_model_layer_out(const halo_model *m, int layer);

/* Parameters: all weights in one contiguous host buffer. Per layer l, at offset
 * halo_model_param_offset(m, l):
 * SAGE: W = [W_self; W_neigh] as a row-major (2*in x out) matrix (so y = h_dst W_self +
 * mean(h_src) W_neigh + b), then b (out).
 * RGCN: W_self (in x out), then without bases W_1..W_R (R matrices in x out, relation r's at
 * (1+r)*in*out), or with B bases V_1..V_B (B matrices in x out) followed by the coefficients
 * (R x B row-major, W_r = sum_b a[r][b] V_b), then b (out); halo_model_bias_offset says where.
 * So y = h_dst W_self + sum_r mean_{u in N_r(dst)} h_u W_r + b (a relation without sampled edges
 * of a destination adds nothing).
 * GAT (H heads of F floats; H = cfg.heads and F = hidden on hidden layers, H = cfg.out_heads and
 * F = classes on the output layer, whose heads are averaged): W (in x H*F), a_l (H*F), a_r (H*F),
 * then b (H*F) (model/gat.h). Offsets are multiples of 16
 * floats; the padding between layers is zero and stays zero. On GPU, Adam steps leave the
 * parameters on the device: this call (and halo_model_param_checksum, halo_model_pull_state)
 * first copies them back when a step ran since, so the buffer returned is current until the next
 * Adam step; after writing it, call halo_model_push_state. */
float *halo_model_params(halo_model *m, size_t *count);
/* Gradients, same layout and count as the parameters, written (not accumulated) by
 * halo_model_train_forward_backward. The trainer may sum them over ranks in place (one
 * MPI_Allreduce) before halo_model_adam_step. On GPU this call first waits for the last Adam
 * step's upload of the buffer (so it may be written). */
float *halo_model_grads(halo_model *m, size_t *count);
/* Offset of layer l's W in the parameter/gradient buffers; its b is at offset + 2*in*out (SAGE),
 * halo_model_bias_offset in general. */
size_t halo_model_param_offset(const halo_model *m, int layer);
/* Offset of layer l's bias in the parameter/gradient buffers. */
size_t halo_model_bias_offset(const halo_model *m, int layer);
/* Adam's moments (same layout as the parameters) and step count, for checkpoints. On GPU call
 * halo_model_pull_state first to refresh them from the device. */
float *halo_model_adam_m(halo_model *m);
float *halo_model_adam_v(halo_model *m);
int64_t halo_model_adam_t(const halo_model *m);
void halo_model_set_adam_t(halo_model *m, int64_t t);
/* GPU: copies the parameters and Adam moments from the device into the host buffers. CPU: nothing
 * to do. */
int halo_model_pull_state(halo_model *m);
/* GPU: copies host parameters and Adam moments to the device (after a checkpoint is loaded or the
 * parameters are changed by hand). CPU: nothing to do. */
int halo_model_push_state(halo_model *m);
/* 64-bit hash of the parameter bytes: equal on two ranks iff the weights are bit-identical. */
uint64_t halo_model_param_checksum(halo_model *m);

/* A host buffer for the input features of a mini-batch of up to `rows` input nodes (pinned memory
 * on GPU, so the copy to the device is asynchronous and fast). Gathering features straight into it
 * saves a copy; it stays valid until the next call that asks for more rows or halo_model_free.
 * Never NULL: when pinned memory runs out it is plain memory (one notice; copies from it are
 * synchronous). */
float *halo_model_input_buffer(halo_model *m, int64_t rows);

/* One training pass on a mini-batch: forward with dropout keyed by (seed, step, layer, global id
 * of the node, feature), softmax cross-entropy averaged over the seeds, backward. feat holds
 * mb->num_input rows of in_dim floats in the order of blocks[0].src_gid; labels holds one class per
 * seed. Writes the gradients into halo_model_grads and, if stats is not NULL, the loss and number
 * of correct seeds. step is the trainer's global mini-batch number (distinct per step). */
int halo_model_train_forward_backward(halo_model *m, const halo_minibatch *mb, const float *feat,
                                      const int32_t *labels, uint64_t step,
                                      halo_model_stats *stats);
/* The same, and when d_input is not NULL also the gradient of the loss with respect to the input
 * rows (host, mb->num_input rows of in_dim floats, order of blocks[0].src_gid): what learnable
 * input embeddings (embed/embed.h) are trained with. */
int halo_model_train_forward_backward_dx(halo_model *m, const halo_minibatch *mb,
                                         const float *feat, const int32_t *labels, uint64_t step,
                                         halo_model_stats *stats, float *d_input);
/* The stats of the last training pass (any of the calls above or halo_model_train_staged), for a
 * caller that passed stats NULL and reads the loss later (e.g. after the allreduce and the Adam
 * step): equal to what that pass would have written. HALO_ESTATE when none ran. */
int halo_model_last_stats(const halo_model *m, halo_model_stats *out);
/* One Adam step (torch.optim.Adam semantics, L2 weight decay added to the gradient) from the host
 * gradient buffer scaled by grad_scale (e.g. 1/ranks after a summing allreduce). Advances t.
 * GPU: queued, the host does not wait; the parameters stay on the device (halo_model_params). */
int halo_model_adam_step(halo_model *m, float grad_scale);

/* ---- the copy stage (docs/model.md, "The GPU data path") ----
 * A pipeline with k batches in flight keeps k + 1 stages, one per slot. The copy stage of batch b
 * calls halo_model_stage_upload on its slot's stage (it may run on another thread than the
 * compute, one stage at a time per thread); the trainer then calls halo_model_train_staged. On a
 * GPU the upload packs the blocks' CSR, the dropout keys and the labels into the stage's pinned
 * buffer and queues two host-to-device copies (that buffer, and the input rows) on the copy
 * stream, then records an event; the pass makes the compute stream wait for that event (the host
 * does not wait) and records another when it has read the stage's device buffers, which the next
 * upload into the same stage waits for. On the CPU nothing is copied (unless cfg.copy_stage). */
typedef struct halo_model_stage halo_model_stage;

/* Host memory the device copies from asynchronously: pinned on GPU (limited: ask for what is
 * needed), plain on CPU; zero-filled. Free with halo_model_host_free. */
int halo_model_host_alloc(halo_model *m, size_t bytes, void **out);
void halo_model_host_free(halo_model *m, void *p);
/* 1 when p lies in pinned host memory (GPU), 0 otherwise (always 0 on CPU). */
int halo_model_host_pinned(halo_model *m, const void *p);

int halo_model_stage_new(halo_model *m, halo_model_stage **out);
/* Waits for what still reads the stage's buffers, then frees it. NULL is a no-op. */
void halo_model_stage_free(halo_model *m, halo_model_stage *sg);
/* Stages batch number `batch` (mb as for halo_model_train_forward_backward, feat its input rows,
 * best from halo_model_host_alloc so the copy is asynchronous; labels one per seed). mb's arrays,
 * feat and labels must stay unchanged until halo_model_train_staged of that batch returns. Checks
 * mb against the model (HALO_EINPUT). */
int halo_model_stage_upload(halo_model *m, halo_model_stage *sg, const halo_minibatch *mb,
                            const float *feat, const int32_t *labels, int64_t batch);
/* Bytes the last upload queued for the device (0 when nothing is copied, as on the CPU). */
int64_t halo_model_stage_bytes(const halo_model_stage *sg);
/* The batch the stage holds, -1 when none (never staged, or consumed by a training pass). */
int64_t halo_model_stage_batch(const halo_model_stage *sg);
/* The training pass of halo_model_train_forward_backward over the staged batch, which must be
 * `batch` (else HALO_ESTATE: a slot given the wrong batch); consumes the stage. Results are those
 * of halo_model_train_forward_backward on the same arrays, bit for bit on the CPU. */
int halo_model_train_staged(halo_model *m, halo_model_stage *sg, int64_t batch, uint64_t step,
                            halo_model_stats *stats);

/* Inference on a sampled mini-batch (no dropout). Any output may be NULL: logits
 * [num_seeds x classes], pred [num_seeds] arg-max classes, and, when labels is not NULL, stats. */
int halo_model_infer(halo_model *m, const halo_minibatch *mb, const float *feat,
                     const int32_t *labels, float *logits, int32_t *pred, halo_model_stats *stats);

/* Layer-wise full-neighbour inference: applies layer l (ReLU unless it is the last layer; no
 * dropout) to a block that lists all in-neighbours of its destinations. h_src holds
 * blk->num_src rows of layer_in(l) floats (destinations first), h_dst receives blk->num_dst rows
 * of layer_out(l) floats. Host buffers on both back ends. */
int halo_model_layer_forward(halo_model *m, int layer, const halo_block *blk, const float *h_src,
                             float *h_dst);

/* Whether the AUTO rule computes a layer lin-first (multiply, then mean) rather than agg-first
 * on a block of num_edges edges, num_dst destinations and num_src sources, in -> out floats,
 * need_dx when the layer's input needs a gradient: the cheaper of the two orders, forward and
 * backward counted. A pure function of the shape: the trainer (halo_model_choose_path) and the
 * simulator's compute model both call it. */
bool halo_model_lin_first(double num_edges, double num_dst, double num_src, double in, double out,
                          bool need_dx);

/* Multiply-add operations (x2 = FLOP) of one forward + backward pass on mb, as computed by the
 * chosen paths; for benchmarks. */
double halo_model_step_flops(const halo_model *m, const halo_minibatch *mb);

#endif
