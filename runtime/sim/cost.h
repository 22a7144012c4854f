/* The simulator's time model: turns the counted work of every simulated rank and batch (what
 * the runtime's sampler, cache and pulls would do, counted by sim/replay) into stage times on a
 * discrete-event timeline, for a cluster profile (sim/profile.h). Plain C: no MPI, no Lua.
 *
 * The runtime's schedule that it models (runtime/train, runtime/pipe):
 *   per batch b, on every rank:  sample(b) -> fetch(b) -> [copy(b), GPU only] -> compute(b)
 *                                -> allreduce(b)
 *   sample(b): layers from the output layer down (l = L-1 .. 0); each layer is two batched
 *     exchanges (requests to the owners of remote frontier nodes, then replies), each starting
 *     with an all-to-all of counts, so all ranks take part in every exchange of every batch;
 *     local frontier nodes are sampled while the requests travel, the owner samples the nodes
 *     asked of it when they arrive.
 *   fetch(b): cache lookup of the remote input ids, the policy's cache_batch hook, then one
 *     request exchange (4-byte ids per row asked) and one rows exchange (row_bytes per row);
 *     local rows are copied while the replies travel; the owner gathers the rows it serves.
 *   compute(b): forward + backward of GraphSAGE (or RGCN) on the blocks, Adam after the
 *     allreduce. With learnable embeddings (typed partitions with featureless types) the
 *     compute starts with the gather of their rows from the owners (an ids exchange and a rows
 *     exchange; the owner copies the rows it serves) and the allreduce stage ends with the
 *     gradients' exchange to the owners and their sparse Adam step before the dense one.
 *   allreduce(b): one ring allreduce of the gradients (+1 float); it ends with the slowest
 *     rank, so every step ends with the slowest rank.
 *   depth k = 0: the stages run one after the other on the trainer's thread. depth k >= 1:
 *     sample runs on `sampler_threads` threads (batch b on thread b % T), fetch on one thread,
 *     both up to k batches ahead of the compute (k + 1 batch slots in flight); a batch's stage
 *     starts when its predecessor stage of that batch is done, its thread is free, and a slot
 *     is free. The stages of one batch are collective: a batch's exchange completes on all
 *     ranks together.
 *   CPU contention: the threads of the trainers of one machine share its `cores`.
 *   Links: ranks of one machine talk at shm rates; between machines flows share the NICs
 *     (max-min fair); with netem set every exchange lasts at least its netem delay.
 */
#ifndef HALO_SIM_COST_H
#define HALO_SIM_COST_H

#include "pipe/timeline.h"
#include "sample/block.h"
#include "sim/profile.h"
#include "train/metrics.h"

#include <stdint.h>

/* The work of one rank in one batch, as counted by the replay (exact, not modelled). Arrays of
 * P = ranks entries are indexed by peer rank; the entry of the rank itself is 0. */
typedef struct halo_sim_work {
    int32_t seeds;                         /* this rank's seeds in the batch */
    int layers;                            /* L */
    /* blocks, input layer first (the model's sizes) */
    int64_t num_dst[HALO_MAX_LAYERS];      /* destinations of block l */
    int64_t num_src[HALO_MAX_LAYERS];      /* sources of block l */
    int64_t num_edges[HALO_MAX_LAYERS];    /* sampled edges of block l */
    /* sampling of layer l (the frontier of layer l = destinations of block l) */
    int64_t local_nodes[HALO_MAX_LAYERS];  /* frontier nodes this rank sampled in place */
    int64_t local_edges[HALO_MAX_LAYERS];  /* edges drawn for them */
    int64_t served_nodes[HALO_MAX_LAYERS]; /* nodes this rank sampled for peers' requests */
    int64_t served_edges[HALO_MAX_LAYERS]; /* edges drawn for them */
    /* of local_edges and served_edges: the edges of lists taken whole (in-degree <= fanout)
       and those drawn from long lists (in-degree > HALO_SIM_LONG_LIST); the rest are drawn
       from short lists (untyped graphs; 0 on typed ones) */
    int64_t local_copied[HALO_MAX_LAYERS], local_long[HALO_MAX_LAYERS];
    int64_t served_copied[HALO_MAX_LAYERS], served_long[HALO_MAX_LAYERS];
    const int64_t *sample_req;  /* [L * P] request bytes this rank sends to peer p in layer l
                                   (at [l * P + p]); the owner receives them */
    const int64_t *sample_rep;  /* [L * P] reply bytes peer p sends to this rank in layer l */
    /* feature fetch */
    int64_t input_nodes;        /* input nodes (sources of block 0) */
    int64_t local_rows;         /* rows copied from this rank's own part */
    int64_t lookups;            /* remote ids looked up in the cache (0 without a cache) */
    int64_t hits;               /* rows copied from the cache */
    int64_t admits;             /* rows copied into the cache's slots after the pull (its
                                   policy's admissions) */
    int64_t hook_calls;         /* cache_batch calls (0 or 1) */
    int64_t hook_work;          /* work the policy's budget charged in the cache's hooks
                                   (halo_policy_work) */
    const int64_t *pull_rows;   /* [P] rows fetched from peer p (misses + prefetched rows);
                                   request bytes are 4 per row, reply bytes row_bytes per row */
    int64_t served_rows;        /* rows this rank gathered and sent to peers */
    int64_t row_bytes;          /* bytes of one feature row */
    /* learnable embeddings of featureless types (typed partitions; NULL / 0 otherwise): rows
       of row_bytes gathered from their owners before the step, gradients sent back after the
       allreduce (runtime/embed) */
    const int64_t *embed_rows;  /* [P] featureless input rows gathered from peer p (own entry:
                                   the rows this rank holds itself) */
    int64_t embed_served;       /* rows this rank gathered for peers (and whose gradients it
                                   receives and applies) */
} halo_sim_work;

/* What the model needs besides the profile. */
typedef struct halo_sim_cost_opts {
    const halo_sim_profile *profile; /* the cluster (not owned); machines x trainers == ranks */
    int ranks;                       /* simulated ranks; rank r runs on machine r / trainers */
    int depth;                       /* pipeline depth (0 = synchronous) */
    int sampler_threads;             /* sampling threads when depth > 0 (>= 1) */
    int in_dim;                      /* feature width */
    double table_bytes;              /* feature bytes each rank owns (0: not known) */
    int hidden;                      /* hidden width */
    int classes;                     /* output width */
    int64_t grad_floats;             /* floats in the gradient allreduce */
    int relations;                   /* RGCN's relations (0: the model is GraphSAGE) */
    int bases;                       /* RGCN's basis matrices (0: one weight per relation) */
    int heads;                       /* GAT's heads of a hidden layer (0: the model is not GAT;
                                        hidden is then per head) */
    int out_heads;                   /* GAT's heads of the output layer */
    halo_timeline *timeline;         /* if not NULL, every stage interval is appended */
    double t_start;                  /* seconds from the run's start at which the first epoch
                                        begins (0; a model made mid-run, e.g. for a new depth,
                                        continues the timeline: pass the sum of the slowest
                                        rank's time_s of the epochs before) */
} halo_sim_cost_opts;

typedef struct halo_sim_cost halo_sim_cost;

int halo_sim_cost_new(const halo_sim_cost_opts *o, halo_sim_cost **out);
void halo_sim_cost_free(halo_sim_cost *c);

/* Starts an epoch (the pipeline is empty at an epoch's start, as in the runtime). */
void halo_sim_cost_epoch_begin(halo_sim_cost *c, int epoch);
/* Adds batch b of the epoch: w[P], every rank's work in that batch (batches in order, 0..). */
int halo_sim_cost_batch(halo_sim_cost *c, int64_t batch, const halo_sim_work *w);
/* Ends the epoch: out[P] gets each rank's times (time_s, sample_s, fetch_s, copy_s, compute_s,
 * allreduce_s, wait_s, with the runtime's meaning: stage sums, wait = time the trainer waited
 * for the pipeline, allreduce includes waiting for the slowest rank). Counts are not touched. */
void halo_sim_cost_epoch_end(halo_sim_cost *c, halo_epoch_stats *out);

/* GraphSAGE flops of one training step (forward + backward) on blocks of these sizes. */
double halo_sim_cost_flops(const halo_sim_work *w, int in_dim, int hidden, int classes);
/* RGCN flops of one step: per layer, the self loop and the R stacked relation matrices
 * (2 nd in out (1 + R) per pass; forward, dW, and dX above layer 0 or with embeddings), plus
 * composing the bases (2 R B in out, twice). */
double halo_sim_cost_flops_rgcn(const halo_sim_work *w, int in_dim, int hidden, int classes,
                                int relations, int bases);

/* The per-stage cost functions of the model (one core or one device, the profile's fit factor
 * of the stage included; the engine spreads CPU work over threads and shares the cores). */
/* In-degree beyond which a list is long: the sampler's draws from it each touch a cache line of
 * their own (sample/sample.c draws from at most 64 entries through a bit mask). */
#define HALO_SIM_LONG_LIST 64

/* Sampling `nodes` frontier nodes drawing `edges` edges, of which `copied` from lists taken
 * whole and `lng` from long lists: nodes * sample_node_s + copied * sample_copy_s + lng *
 * sample_long_s + the rest * sample_edge_s (a class whose constant is 0: sample_edge_s). */
double halo_sim_cost_sample_s(const halo_sim_profile *p, double nodes, double edges,
                              double copied, double lng);
/* Building a block of `dst` destination nodes, `src` source nodes and `edges` edges: src *
 * block_node_s + (dst + edges) * block_edge_s (a hash operation per destination and per edge),
 * or, with block_edge_s 0 (older profiles), src * block_node_s + the edges' 4-byte sources at
 * memcpy_bw. */
double halo_sim_cost_build_s(const halo_sim_profile *p, double dst, double src, double edges);
/* Gathering `rows` feature rows of row_bytes each: rows * (gather_row_s + row_bytes /
 * gather_bw). */
/* The slow-down (0 = none) of CPU work that starts `gap` seconds after its thread last ran, from
 * a profile's wake_* points `pen` (measured after halo_sim_wake_gap[i]): interpolated in the
 * gap's logarithm between points, linear from 0 below the first, the last beyond it. */
double halo_sim_cost_wake_pen(const double pen[HALO_SIM_WAKE_GAPS], double gap);
/* The slow-down of a compute or Adam step of `work` seconds (one core) `gap` seconds off the CPU
 * since its last: wake_compute's at wake_step_s or more (or without a small step measured),
 * wake_small's at wake_small_s or less, between the two interpolated in log(work). */
double halo_sim_cost_wake_compute(const halo_sim_profile *p, double work, double gap);
double halo_sim_cost_gather_s(const halo_sim_profile *p, double rows, double row_bytes);
/* Where a table of table_bytes per rank lies between the two the profile's fetch was measured
 * on: 0 at fetch_cold_bytes or more (or without a warm rate, or table_bytes 0: not known), 1
 * at fetch_warm_bytes or less, linear in log(table_bytes) between. */
double halo_sim_cost_warm_share(const halo_sim_profile *p, double table_bytes);
/* The rate of the fetch's row bytes when each rank owns table_bytes of features: fetch_bw
 * (gather_bw when 0) at fetch_cold_bytes or more (or when the profile has no warm rate, or
 * table_bytes is 0: not known), fetch_warm_bw at fetch_warm_bytes or less, and between the two
 * sizes the seconds per byte interpolated linearly in log(table_bytes): a table that stays in
 * the caches from batch to batch is read faster than one the probe read from memory. */
double halo_sim_cost_fetch_bw(const halo_sim_profile *p, double table_bytes);
/* The rate of the fetch's row bytes when each rank owns table_bytes of features and nothing
 * but its own work runs on its core between two batches (each trainer process keeps a core,
 * no emulated delays: measured, both take what the caches held): fetch_warm_bw at
 * fetch_warm_bytes or less, fetch_kept_bw (the large table fetched batch after batch) at
 * fetch_cold_bytes, the seconds per byte interpolated linearly in log(table_bytes) between;
 * halo_sim_cost_fetch_bw at larger tables (not measured) or when the profile has no
 * fetch_kept_bw. */
double halo_sim_cost_kept_bw(const halo_sim_profile *p, double table_bytes);
/* The fetch's rows (served, own, received), each rows * (gather_row_s + row_bytes /
 * halo_sim_cost_fetch_bw(table_bytes)). */
double halo_sim_cost_fetch_rows_s(const halo_sim_profile *p, double rows, double row_bytes,
                                  double table_bytes);
/* The fetch's CPU work besides its exchanges: inputs * fetch_node_s (the pull's plan and its
 * loop over the batch's input nodes) + cache lookups + policy hook calls + the hooks' charged
 * work at hook_unit_s + `hits` rows copied (the cache's hits, and the rows it admits). */
double halo_sim_cost_fetch_pre_s(const halo_sim_profile *p, double inputs, double lookups,
                                 double hooks, double hook_work, double hits, double row_bytes);
/* Aggregating `passes` edge rows of `width` floats: passes * (agg_edge_s + 4 width / agg_bw)
 * (no fit factor: a part of the compute). */
double halo_sim_cost_agg_s(const halo_sim_profile *p, double passes, double width);
/* Elements of layer l's elementwise passes (model.c): bias + ReLU + dropout of its nd x out
 * output and their backward (2 nd out), the copy of its nd x in input rows into [h_dst | mean]
 * and, above layer 0, of their gradient back (nd in (1 + dx)). */
double halo_sim_cost_elems(const halo_sim_work *w, int l, int in_dim, int hidden, int classes);
/* Forward + backward of one step: per layer its GEMMs' flops at the table's rate for the
 * layer's (rows, in, out) shape, plus its aggregation and elem_s per element of its
 * elementwise passes; RGCN (relations > 0) likewise. */
double halo_sim_cost_fb_s(const halo_sim_profile *p, const halo_sim_work *w, int in_dim,
                          int hidden, int classes, int relations, int bases);
/* GAT's forward + backward of one step (hidden per head, `heads` heads on hidden layers,
 * out_heads on the output layer, averaged): per layer z = h W over all ns sources (forward, dW, and
 * dX above layer 0 or with embeddings) at the table's rate for (ns, in, heads x F), the attention
 * as aggregation work of 3 passes (the weighted sum, the gradient's dot products, the scattered
 * sum) over every edge and head of F floats, and elem_s per element of its per-row passes (scores
 * forward and backward and their terms in dz over the ns + nd rows, bias and activation and their
 * backward over the nd output rows). */
double halo_sim_cost_fb_s_gat(const halo_sim_profile *p, const halo_sim_work *w, int in_dim,
                              int hidden, int classes, int heads, int out_heads);
/* GAT's GEMM flops of one step (z = h W forward, dW, dX where computed). */
double halo_sim_cost_flops_gat(const halo_sim_work *w, int in_dim, int hidden, int classes,
                               int heads, int out_heads);

#endif
