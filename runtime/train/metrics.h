/* Metrics of docs/design.md §5: JSON Lines records ("epoch", "eval", "summary"), the same schema for the
 * runtime and the simulator. Formatting only: gathering across ranks is the caller's (train/). */
#ifndef HALO_METRICS_H
#define HALO_METRICS_H

#include "core/json.h"
#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What every metrics file (halo train and halo sim --metrics) starts with: its first record's
 * first key. halo_output_file_check replaces only such a file. */
#define HALO_METRICS_SIG "{\"type\":"

/* One rank's work and time in one epoch. Times are seconds of wall clock on that rank. */
typedef struct halo_epoch_stats {
    int epoch;             /* 0-based epoch */
    int rank;              /* MPI rank (or simulated rank) */
    int ranks;             /* ranks in the run */
    double time_s;         /* whole epoch */
    double sample_s;       /* neighbour sampling, local and remote */
    double fetch_s;        /* feature lookup and pulls */
    double copy_s;         /* host-to-device copies */
    double compute_s;      /* forward, loss, backward, optimiser */
    double allreduce_s;    /* gradient allreduce */
    double wait_s;         /* waiting on the pipeline or peers */
    /* CPU seconds of the stages on the thread that ran them, polling for messages excluded
     * (core/timer.h): the work the cost model prices, apart from how it was scheduled; in the
     * simulator, the core-seconds its cost model gave the stage's CPU steps */
    double sample_cpu_s;   /* sampling (the sampler thread's) */
    double fetch_cpu_s;    /* lookups, gathers, serving peers' rows (the fetch thread's) */
    double compute_cpu_s;  /* forward/backward and optimiser (the trainer thread's) */
    double poll_cpu_s;     /* CPU seconds the rank's threads spent polling for messages in its
                              stages (a waiting thread's spin: 0 in the simulator) */
    int64_t batches;       /* mini-batches */
    int64_t sampled_edges; /* edges in all blocks */
    int64_t input_nodes;   /* input nodes summed over batches */
    int64_t remote_nodes;  /* input nodes owned by other ranks */
    int64_t cache_hits;    /* remote input nodes found in the cache */
    int64_t cache_misses;  /* remote input nodes pulled */
    int64_t cache_evicted; /* cache slots freed by the policy's decisions (replaced nodes) */
    int64_t bytes_remote;  /* feature and adjacency bytes received from peers */
    int64_t bytes_sent;    /* feature and adjacency bytes sent to peers (requests, replies) */
    int64_t messages;      /* point-to-point messages sent to peers by sampling and pulls */
    double loss;           /* mean training loss over the epoch's batches */
    double train_acc;      /* training accuracy over the epoch's seeds */
    /* typed graphs (docs/hetero.md): the counts above split by node type and relation */
    int64_t input_nodes_type[HALO_MAX_NTYPES];  /* input nodes of each node type */
    int64_t remote_nodes_type[HALO_MAX_NTYPES]; /* ... of them owned by other ranks */
    int64_t sampled_edges_rel[HALO_MAX_RELS];   /* sampled edges of each relation */
} halo_epoch_stats;

/* Names of a typed graph's node types and relations, for the per-type fields of an epoch
 * record. */
typedef struct halo_metrics_types {
    int ntypes;                                   /* node types */
    const char *ntype[HALO_MAX_NTYPES];           /* their names */
    int nrels;                                    /* relations */
    const char *rel[HALO_MAX_RELS];               /* their names */
} halo_metrics_types;

struct halo_partinfo;
/* The names of a partition's node types and relations (pointers into pi). */
void halo_metrics_types_of(const struct halo_partinfo *pi, halo_metrics_types *ty);

/* Begins a "summary" record in w (initialised here): {"type":"summary","mode":MODE, the
 * caller's keys follow. */
void halo_metrics_summary_begin(halo_jw *w, const char *mode);

/* Appends one compact JSON object (no newline) for an epoch record. */
void halo_metrics_epoch_json(halo_sb *out, const char *mode, const char *policy,
                             const halo_epoch_stats *s);
/* The same with the per-type fields of a typed graph ("input_nodes_per_type",
 * "remote_nodes_per_type": {TYPE: count}, "sampled_edges_per_relation": {REL: count}); ty NULL:
 * exactly halo_metrics_epoch_json. */
void halo_metrics_epoch_typed_json(halo_sb *out, const char *mode, const char *policy,
                                   const halo_epoch_stats *s, const halo_metrics_types *ty);
/* Appends an eval record. */
void halo_metrics_eval_json(halo_sb *out, int epoch, double val_acc, double test_acc);

/* A metrics file written under a temporary name and renamed into place on close, so a crash
 * never leaves a half-written file under the final name. */
typedef struct halo_metrics halo_metrics;
int halo_metrics_open(const char *path, halo_metrics **out);
/* Writes one line (a JSON object without newline) and flushes it. */
int halo_metrics_line(halo_metrics *m, const char *json);
/* Flushes, fsyncs and renames into place. */
int halo_metrics_close(halo_metrics *m);
/* Removes the temporary file (on an error path). */
void halo_metrics_abort(halo_metrics *m);

/* Rank 0's per-epoch table row (times: mean over the ranks of all[ranks], epoch time: the
 * longest rank's), with the column header first when header; val_acc < 0 prints "-". */
void halo_metrics_table_row(FILE *f, int epoch, const halo_epoch_stats *all, int ranks,
                            double loss, double train_acc, double val_acc, bool header);

/* What the summary record of a training run holds besides its options and result. */
typedef struct halo_metrics_run {
    const char *policy;   /* policy name */
    const char *batching; /* "local" or "global" */
    const char *eval;     /* "sampled", "full" or "none" */
    const char *model;    /* "sage", "rgcn" or "gat" */
    int heads, out_heads; /* GAT's heads (hidden, output layer); 0: not GAT */
    int ranks;            /* ranks of the run */
    int layers;           /* model layers */
    const int *fanouts;   /* [layers] training fanouts, input layer first */
    int threads;          /* CPU threads per rank */
    int64_t train_seeds;  /* training seeds over all ranks */
} halo_metrics_run;

struct halo_train_opts;
struct halo_train_result;
/* Appends the "summary" record of a training run (docs/design.md §5): enough of the command line
 * to replay it in the simulator. */
void halo_metrics_summary_json(halo_sb *out, const struct halo_train_opts *o,
                               const struct halo_train_result *res, const halo_metrics_run *run);

#endif
