/* Learnable node embeddings for featureless node types (DistDGL's DistEmbedding with its sparse
 * Adam and Adagrad): each row lives on the rank that owns the node; a mini-batch gathers the rows
 * of its input nodes (local and remote), and the input gradient of those rows goes back to the
 * owners, which sum the contributions in a fixed order and apply the optimiser there. Plain
 * arrays and the comm API; checkpointed bit for bit. */
#ifndef HALO_EMBED_H
#define HALO_EMBED_H

#include "comm/comm.h"

#include <stdint.h>

/* Sparse optimisers (only rows with a gradient in a step are touched). */
enum {
    HALO_EMBED_ADAM = 0,    /* per-element moments, per-row step count (DGL's SparseAdam) */
    HALO_EMBED_ADAGRAD = 1, /* per-element sum of squared gradients (DGL's SparseAdagrad) */
};

/* What defines a table and its optimiser; halo_embed_config_default fills the defaults of
 * DGL's distributed RGCN example (lr 0.01, rows U(-1, 1)). */
typedef struct halo_embed_config {
    int dim;          /* row width (required, >= 1) */
    int optim;        /* HALO_EMBED_ADAM (default) or HALO_EMBED_ADAGRAD */
    float lr;         /* learning rate (default 0.01) */
    float beta1;      /* Adam first-moment decay (default 0.9) */
    float beta2;      /* Adam second-moment decay (default 0.999) */
    float eps;        /* added to the root in the denominator (default 1e-8; DGL's Adagrad
                         uses 1e-10) */
    float init_bound; /* rows start U(-init_bound, init_bound) (default 1) */
    uint64_t seed;    /* keys the init (default 1) */
} halo_embed_config;

/* A rank's share of a distributed table; used by one thread at a time. */
typedef struct halo_embed halo_embed;

void halo_embed_config_default(halo_embed_config *cfg);
/* Parses "adam" or "adagrad" into HALO_EMBED_*; HALO_EUSAGE otherwise. */
int halo_embed_optim_parse(const char *name, int *optim);
const char *halo_embed_optim_name(int optim);

/* Creates this rank's share (local; every rank of c calls it with the same cfg and range).
 * range[ranks+1]: rank p owns global ids [range[p], range[p+1]) (the partition's ranges).
 * has_row[range[me+1]-range[me]] marks the owned nodes that have an embedding row (the
 * featureless types); NULL: all of them. key[same count] is what keys each owned node's init
 * (its input-graph id, so the table does not depend on the partitioning); NULL: its global id.
 * Row j of node v is draw j+1 of stream (seed, HALO_RNG_INIT, HALO_EMBED_INIT_TAG, key[v], 0)
 * mapped to U(-init_bound, init_bound). Optimiser state starts at zero. */
int halo_embed_create(halo_comm *c, const halo_embed_config *cfg, const int64_t *range,
                      const uint8_t *has_row, const int64_t *key, halo_embed **out);
void halo_embed_free(halo_embed *e);

/* Part of the init key that keeps embedding draws apart from the model's (which use the layer
 * number there). */
#define HALO_EMBED_INIT_TAG 0x656d62ULL

/* Rows this rank holds, and the table itself (rows in ascending global id, dim floats each). */
int64_t halo_embed_rows(const halo_embed *e);
float *halo_embed_table(halo_embed *e);
const halo_embed_config *halo_embed_config_of(const halo_embed *e);

/* Gathers the rows of gid[n] into out[n x dim] (collective: every rank calls it, each with its
 * own list; one request and one reply per peer). A node without a row on its owner, or outside
 * the ranges, fails on every rank (HALO_EINPUT naming it on the rank that asked). */
int halo_embed_gather(halo_embed *e, int64_t n, const int32_t *gid, float *out);

/* One optimiser step from gradient contributions (collective): row i of grad[n x dim] is a
 * contribution to node gid[i] with order key key[i] (NULL: all 0). Each owner sums the
 * contributions to a row in ascending (key, sending rank, position in the sender's list) order,
 * multiplies the sum by grad_scale and updates the row once. With keys that name the share of
 * the global batch a contribution comes from, the result does not depend on how the shares are
 * spread over ranks (4 ranks equal 1 rank given the same shares). */
int halo_embed_update(halo_embed *e, int64_t n, const int32_t *gid, const float *grad,
                      const uint64_t *key, float grad_scale);

/* Checkpoint: writes this rank's rows and optimiser state to dir/embed-rRANK.bin (atomically;
 * dir must exist), or reads them back. Reading checks the file against the table (dim,
 * optimiser, rows, rank count) and fails with HALO_EINPUT naming the file otherwise. Local. */
int halo_embed_save(const halo_embed *e, const char *dir);
int halo_embed_load(halo_embed *e, const char *dir);

/* 64-bit hash of this rank's rows and optimiser state (equal iff bit-identical). */
uint64_t halo_embed_checksum(const halo_embed *e);

#endif
