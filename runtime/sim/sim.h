/* The simulator (`halo sim`): replays a training run of P ranks in one process through the
 * runtime's own deciding code — the epoch order (order/), the sampler (sample/), the cache
 * mechanism and the policy hooks (cache/, policy/) — and counts what every rank would compute,
 * send and receive, per peer, batch by batch (invariant 3: the counts equal the runtime's field
 * by field). With a cluster profile the counted work is turned into time by the time model
 * (sim/cost.h). Never includes or links MPI. */
#ifndef HALO_SIM_H
#define HALO_SIM_H

#include "sim/cost.h"
#include "sim/profile.h"
#include "train/metrics.h"

#include <stdbool.h>
#include <stdint.h>

/* What to simulate: the flags of `halo train` that mean the same, plus the cluster. */
typedef struct halo_sim_opts {
    const char *pdir;          /* partition directory (every part is loaded) */
    const char *policy;        /* policy file, NULL = built-in defaults */
    const char *const *sets;   /* policy "name=value" parameters */
    int nsets;                 /* entries in sets */
    int epochs;                /* epochs */
    int64_t batch;             /* seeds per batch (per rank: local; global: whole step) */
    bool global_batching;      /* --batching global */
    const char *fanouts;       /* "10,25" overriding the policy, NULL = the policy's */
    int hidden;                /* hidden width (compute model) */
    bool rgcn;                 /* --model rgcn (compute model and gradient size; the counts do
                                  not depend on the model) */
    int relations;             /* RGCN relations, 0 = the partition's (1 on a homogeneous one) */
    int bases;                 /* RGCN basis matrices, 0 = one weight per relation */
    int heads;                 /* --model gat: attention heads of a hidden layer (0: not GAT;
                                  compute model and gradient size) */
    int out_heads;             /* --model gat: heads of the output layer */
    uint64_t seed;             /* seed of every random choice */
    int depth;                 /* pipeline depth, -1 = the policy's pipeline hook */
    int sampler_threads;       /* sampling threads, 0 = the policy's */
    const halo_sim_profile *profile; /* cluster (not owned); NULL = count only, no times */
    const char *metrics;       /* JSON Lines file (docs/design.md §5 schema, mode "sim"), NULL = none */
    const char *timeline;      /* the format `halo timeline` draws, NULL = none */
    bool progress;             /* progress bar over batches on a terminal, log lines otherwise */
} halo_sim_opts;

/* Defaults equal to halo_train_opts_default's: 3 epochs, batch 2000 local, hidden 16 (GraphSAGE's;
 * another model's come from halo_model_run_defaults, as `halo sim` applies them), seed 1, depth
 * from the policy. */
void halo_sim_opts_default(halo_sim_opts *o);

/* What a simulation produced. */
typedef struct halo_sim_result {
    int ranks;               /* simulated ranks */
    int epochs;              /* epochs simulated */
    int64_t batches;         /* batches per epoch */
    int depth;               /* pipeline depth of the last epoch */
    double mean_epoch_s;     /* mean simulated epoch time (slowest rank), 0 without profile */
    halo_epoch_stats total;  /* counts and times summed over ranks and epochs (time_s: the sum
                                of the epochs' times, i.e. the run's simulated training time) */
    int64_t peak_rss;        /* peak resident set of the process, bytes */
    char policy[64];         /* the policy's name */
} halo_sim_result;

/* The traffic of learnable embeddings (docs/hetero.md) of one rank in one batch or summed over
 * an epoch: the gather of the featureless input rows from their owners, and their gradients
 * sent back to the owners (runtime/embed's wire format). */
typedef struct halo_sim_embed_stats {
    int64_t rows;        /* featureless input rows gathered (its own included) */
    int64_t remote_rows; /* ... of them held by other ranks */
    int64_t bytes_sent;  /* payload bytes sent to peers: ids asked, rows served, gradients */
    int64_t bytes_recv;  /* payload bytes received from peers */
    int64_t messages;    /* point-to-point messages sent to peers */
} halo_sim_embed_stats;

/* One rank's embedding traffic of a step, from the rows it gathers from each owner,
 * asked[P] (asked[me]: those it holds), and the rows each peer gathers from it, served[P]
 * (served[me] ignored): per peer, halo_embed_gather's request (4 bytes per id) and reply
 * (row_bytes per row) and halo_embed_update's records (16 + row_bytes bytes per row), one
 * message per non-empty direction of each exchange. */
void halo_sim_embed_traffic(int P, int me, const int64_t *asked, const int64_t *served,
                            int64_t row_bytes, halo_sim_embed_stats *out);

/* Runs the simulation. Errors (bad partition, policy error, profile that does not match the
 * partition) return a negative HALO_E* with a message. */
int halo_sim_run(const halo_sim_opts *o, halo_sim_result *res);

#endif
