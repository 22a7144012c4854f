/* The distributed training loop (docs/design.md §3): per-epoch seed order, sample, pull, forward/backward,
 * one gradient allreduce, Adam; evaluation, metrics, checkpoints. Every rank calls halo_train_run
 * on the same options (collective). */
#ifndef HALO_TRAIN_H
#define HALO_TRAIN_H

#include "comm/comm.h"

#include <stdbool.h>
#include <stdint.h>

/* How an epoch's training seeds become mini-batches. */
enum {
    /* DistDGL's default: each rank shuffles its own seeds and cuts batches of `batch` seeds, so
     * a global step trains on ranks x batch seeds. */
    HALO_TRAIN_BATCH_LOCAL = 0,
    /* One global order of all training seeds (a pure function of seed, epoch and input-graph id);
     * global batch b is positions [b*batch, (b+1)*batch) of it, whatever the rank count; each
     * rank trains on the seeds of batch b that it holds. 1 rank and P ranks take the same steps. */
    HALO_TRAIN_BATCH_GLOBAL = 1,
};

/* Evaluation method. */
enum {
    HALO_TRAIN_EVAL_NONE = 0,    /* no evaluation */
    HALO_TRAIN_EVAL_SAMPLED = 1, /* sampled inference with eval_fanouts */
    HALO_TRAIN_EVAL_FULL = 2,    /* layer-wise full-neighbour inference */
};

/* Everything a training run needs (the same on every rank). Zero-initialise, then call
 * halo_train_opts_default. */
typedef struct halo_train_opts {
    const char *pdir;         /* partition directory (parts == ranks) */
    const char *policy;       /* policy file, NULL = built-in defaults */
    const char *const *sets;  /* policy "name=value" parameters */
    int nsets;                /* entries in sets */
    int epochs;               /* epochs to reach (a resumed run continues up to it) */
    int64_t batch;            /* seeds per batch (per rank: local; global: whole step) */
    int batching;             /* HALO_TRAIN_BATCH_* */
    const char *fanouts;      /* "10,25" overriding the policy, NULL = the policy's */
    int hidden;               /* hidden width */
    int model;                /* HALO_MODEL_SAGE (default), _RGCN or _GAT (model/model.h) */
    int heads;                /* GAT: attention heads of each hidden layer (default 4) */
    int out_heads;            /* GAT: heads of the output layer, averaged (default 1) */
    int relations;            /* RGCN relations, 0 = the graph's (1 on a homogeneous graph) */
    int bases;                /* RGCN basis matrices, 0 = one weight per relation */
    int embed_optim;          /* HALO_EMBED_* of the featureless types' embeddings (embed/) */
    double embed_lr;          /* their learning rate */
    double lr;                /* Adam learning rate */
    double dropout;           /* dropout probability */
    double weight_decay;      /* Adam L2 coefficient */
    uint64_t seed;            /* seed of every random choice */
    int device;               /* HALO_DEVICE_* requested */
    int threads;              /* CPU threads per rank (0 = cores / ranks on the machine) */
    int eval;                 /* HALO_TRAIN_EVAL_* */
    const char *eval_fanouts; /* fanouts of sampled evaluation, NULL = training fanouts */
    int eval_every;           /* evaluate every N epochs (and after the last) */
    int64_t eval_batch;       /* seeds per evaluation batch per rank */
    const char *metrics;      /* JSON Lines file written by rank 0, NULL = none */
    const char *trace;        /* access trace (cache/trace.h): FILE on 1 rank, FILE.rR on more */
    const char *checkpoint;   /* checkpoint directory, NULL = none */
    int checkpoint_every;     /* write it every N epochs (and after the last) */
    bool resume;              /* continue from the checkpoint */
    bool check;               /* compare parameter checksums across ranks every epoch */
    const char *netem;        /* emulated network spec, NULL = off */
    bool table;               /* rank 0 prints a row per epoch on stderr */
    int depth;                /* pipeline depth, -1 = the policy's pipeline hook */
    int sampler_threads;      /* sampling threads of the pipeline, 0 = the policy's */
    const char *timeline;     /* JSON Lines of every stage's start and end per rank and batch,
                                 written by rank 0 (docs/pipeline.md), NULL = none */
} halo_train_opts;

/* What a run produced (the same on every rank). */
typedef struct halo_train_result {
    int epochs;              /* epochs completed (including those of a resumed checkpoint) */
    int start_epoch;         /* first epoch trained by this run */
    double mean_epoch_s;     /* mean wall time of the epochs this run trained */
    double val_acc;          /* last evaluation's validation accuracy (-1 when none) */
    double test_acc;         /* last evaluation's test accuracy (-1 when none) */
    double loss[1024];       /* global mean training loss of each epoch (first 1024) */
    uint64_t param_checksum; /* halo_model_param_checksum of the final weights */
    uint64_t embed_checksum; /* hash of every rank's embedding rows and their optimiser state
                              * (halo_embed_checksum, rank order); 0 = no embeddings */
    int64_t steps;           /* Adam steps taken in total */
    char device[8];          /* "cpu" or "gpu" */
} halo_train_result;

/* Defaults of the MassiveGNN / DistDGL GraphSAGE examples: 3 epochs, batch 2000 (local),
 * hidden 16, lr 0.003, dropout 0.5, seed 1, device auto, sampled evaluation every epoch, batch
 * 2000 for evaluation, checkpoints every epoch. */
void halo_train_opts_default(halo_train_opts *o);
/* The defaults that depend on o->model (halo_model_run_defaults: hidden, lr, batch), after
 * halo_train_opts_default and before the user's values: RGCN trains with hidden 64, lr 0.01,
 * batch 500 (the GraphSAGE ones leave it at 0.05 test accuracy on a mag-like graph). */
void halo_train_opts_for_model(halo_train_opts *o);

/* Validates the options that do not need the partition (before MPI work starts); HALO_EUSAGE
 * naming the flag. */
int halo_train_opts_check(const halo_train_opts *o);

/* Trains (collective). Errors that every rank sees alike (bad checkpoint, no GPU, wrong rank
 * count) return the same code on every rank with a message; an error of one rank alone is agreed
 * on, so every rank returns and none hangs. */
int halo_train_run(halo_comm *c, const halo_train_opts *o, halo_train_result *res);

/* Name of a HALO_TRAIN_BATCH_* / HALO_TRAIN_EVAL_* value; parsers return HALO_EUSAGE. */
const char *halo_train_batching_name(int b);
int halo_train_parse_batching(const char *s, int *out);
const char *halo_train_eval_name(int e);
int halo_train_parse_eval(const char *s, int *out);

#endif
