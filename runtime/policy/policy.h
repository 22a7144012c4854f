/* Policies: sandboxed Lua 5.4 scripts that make halo's decisions (partition, fanout, pipeline,
 * cache). The only public header of runtime/policy; no other module sees Lua.
 *
 * Use:
 *   halo_policy_opts o = {.path = "policies/massivegnn.lua", .params = sets, .nparams = n,
 *                         .rank = rank};
 *   halo_policy *pol;
 *   HALO_CHECK(halo_policy_open(&o, &pol));         // loads and runs the file in a new state
 *   halo_policy_ctx ctx = {...};                     // the caller fills what it knows
 *   HALO_CHECK(halo_policy_fanout(pol, &ctx, fanouts, HALO_POLICY_MAX_LAYERS, &layers));
 *   halo_policy_close(pol);
 *
 * Threads: a halo_policy is one Lua state and must be used by one thread at a time. A worker
 * thread that calls hooks opens its own state of the same policy with halo_policy_open_worker().
 * States share nothing but the caller's arrays seen through the contexts.
 *
 * Limits: each hook call (and the loading of the file) has an instruction budget, a memory
 * limit for the state and a wall-clock limit; work done inside C functions (string patterns,
 * library functions, array methods) is charged to the same budget, so no call can run past
 * its limits. Text a policy produces is untrusted: every message and log line made from it has
 * its control characters escaped (halo_policy_clean_text).
 *
 * Errors: every call returns 0 or HALO_ELUA (HALO_EUSAGE for a bad --set, HALO_EIO for an
 * unreadable file) with a message set by halo_errorf, e.g.
 *   policies/x.lua:12: attempt to index a nil value (hook cache_batch, rank 3, epoch 2, batch 17)
 *       stack traceback: ...
 * Output parameters are written only when the call succeeds.
 *
 * Arrays in contexts are zero-copy: the policy sees them as read-only `halo.array` views while
 * the hook runs (the score arrays are writable, the policy owns their contents). A view used
 * after its hook call returned raises an error, so the caller may free or move the memory
 * between calls. A NULL pointer shows up as nil in Lua. */
#ifndef HALO_POLICY_H
#define HALO_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Most layers a fanout hook may return. */
#define HALO_POLICY_MAX_LAYERS 8
/* Default instruction budget of one hook call (about 0.3-1 s of Lua). */
#define HALO_POLICY_DEFAULT_BUDGET 100000000LL
/* Default memory limit of one Lua state. */
#define HALO_POLICY_DEFAULT_MEM ((size_t)256 << 20)
/* Default wall-clock limit of one hook call, in seconds (the environment variable
 * HALO_POLICY_SECONDS overrides it where opts.time_limit is 0). */
#define HALO_POLICY_DEFAULT_SECONDS 5.0

/* The hooks, in the order `halo policy check` lists them. */
enum {
    HALO_POLICY_PARTITION = 0, /* partition(g) */
    HALO_POLICY_FANOUT,        /* fanout(ctx) */
    HALO_POLICY_PIPELINE,      /* pipeline(ctx) */
    HALO_POLICY_CACHE_INIT,    /* cache_init(ctx) */
    HALO_POLICY_CACHE_BATCH,   /* cache_batch(ctx, b) */
    HALO_POLICY_EPOCH_END,     /* epoch_end(ctx) */
    HALO_POLICY_NHOOKS
};

/* A loaded policy: one Lua state (opaque). */
typedef struct halo_policy halo_policy;

/* How to open a policy. Zero-initialise and set what you need. */
typedef struct halo_policy_opts {
    const char *path;          /* policy file; NULL or "" = the built-in defaults only */
    const char *const *params; /* "name=value" strings (from --set), typed on the way in */
    int nparams;               /* entries in params */
    bool unsafe;               /* open the full standard library (trusted local scripts only) */
    int rank;                  /* rank named in error messages; -1 = not distributed */
    int64_t budget;            /* instructions per hook call; 0 = HALO_POLICY_DEFAULT_BUDGET */
    size_t mem_limit;          /* bytes per Lua state; 0 = HALO_POLICY_DEFAULT_MEM */
    double time_limit;         /* wall-clock seconds per hook call (> 0); 0 = $HALO_POLICY_SECONDS,
                                  else HALO_POLICY_DEFAULT_SECONDS */
} halo_policy_opts;

/* ---- contexts (filled by the caller; zero / NULL = unknown) ---- */

/* Counters of one mini-batch or one epoch (ctx.last_batch / ctx.last_epoch; zero before the
 * first one). */
typedef struct halo_policy_stats {
    int epoch;             /* epoch it belongs to */
    int64_t batch;         /* batch index within the epoch (last_batch) */
    int64_t batches;       /* batches counted (1 for last_batch) */
    int64_t seeds;         /* seed (output) nodes */
    int64_t input_nodes;   /* input nodes of the first block */
    int64_t sampled_edges; /* edges of all blocks */
    int64_t remote_nodes;  /* input nodes owned by other ranks */
    int64_t cache_hits;    /* halo input nodes found in the cache */
    int64_t cache_misses;  /* halo input nodes not found in the cache */
    int64_t bytes_remote;  /* feature bytes pulled from other ranks */
    double loss;           /* mean training loss */
    double time_s;         /* wall time */
    double sample_s;       /* sampling */
    double fetch_s;        /* feature pull (local copy + remote) */
    double compute_s;      /* forward + backward */
    double wait_s;         /* waiting on the pipeline or the allreduce */
} halo_policy_stats;

/* The whole graph (ctx.graph). */
typedef struct halo_policy_graph_summary {
    int64_t nodes;       /* nodes */
    int64_t edges;       /* edges */
    int feat_dim;        /* features per node */
    int classes;         /* label classes */
    int64_t train_nodes; /* training nodes */
    /* typed graphs (docs/hetero.md); 0 and NULL on a homogeneous one (Lua sees nil) */
    int64_t ntypes;                 /* node types */
    const char *const *node_types;  /* [ntypes] their names, by type id */
    int64_t nrels;                  /* relations */
    const char *const *relations;   /* [nrels] their names, by relation id */
    const char *target_type;        /* the labelled type's name, NULL = homogeneous */
} halo_policy_graph_summary;

/* This rank's part (ctx.part). */
typedef struct halo_policy_part_summary {
    int parts;           /* parts in the partition */
    int id;              /* this part */
    int64_t nodes;       /* nodes it owns */
    int64_t edges;       /* in-edges of the nodes it owns */
    int64_t train_nodes; /* its training seeds */
} halo_policy_part_summary;

/* This rank's halo set (ctx.halo): nodes of other parts that are sources of its in-edges. */
typedef struct halo_policy_halo_view {
    int64_t n;             /* halo nodes */
    const int32_t *ids;    /* [n] global ids, sorted ascending */
    const int32_t *deg;    /* [n] in-degree in the whole graph */
    const int32_t *owner;  /* [n] part that owns each */
    const int64_t *misses; /* [n] cache misses so far */
    const int32_t *ntype;  /* [n] node type id of each (typed graphs; NULL: homogeneous) */
    double *score;         /* [n] policy-owned score (writable in Lua; e.g. MassiveGNN's S_N) */
} halo_policy_halo_view;

/* The remote-feature cache (ctx.cache); slots are 0-based. */
typedef struct halo_policy_cache_view {
    int64_t capacity;        /* slots */
    int64_t used;            /* occupied slots */
    const int32_t *id;       /* [capacity] global id in each slot, -1 = empty */
    const int64_t *hits;     /* [capacity] hits since the node entered */
    const int64_t *last_hit; /* [capacity] step of the last hit, -1 = none */
    const int64_t *inserted; /* [capacity] step at which the node entered */
    double *score;           /* [capacity] policy-owned score (writable; MassiveGNN's S_E) */
    /* Optional, spares policies a search of the halo ids for the nodes of given slots; Lua sees
     * nil when NULL. */
    const int32_t *pos; /* [capacity] halo position of each slot, -1 = empty, or NULL */
} halo_policy_cache_view;

/* Context of fanout, pipeline, cache_init, cache_batch and epoch_end (Lua: ctx). */
typedef struct halo_policy_ctx {
    int rank;                        /* this rank */
    int ranks;                       /* ranks of the run */
    int epoch;                       /* current epoch, 0-based; -1 before training */
    int epochs;                      /* planned epochs (0 = unknown) */
    int64_t batch;                   /* batch within the epoch; -1 outside a batch */
    int64_t batches;                 /* batches per epoch (0 = unknown) */
    int64_t step;                    /* batches since training started, 0-based */
    int batch_size;                  /* seeds per batch */
    halo_policy_graph_summary graph; /* ctx.graph */
    halo_policy_part_summary part;   /* ctx.part */
    halo_policy_halo_view halo;      /* ctx.halo */
    halo_policy_cache_view cache;    /* ctx.cache */
    halo_policy_stats last_batch;    /* ctx.last_batch */
    halo_policy_stats last_epoch;    /* ctx.last_epoch */
    /* Optional maps of the cache mechanism, C only (Lua does not see them): with them the engine
     * validates a cache_batch decision in O(1) per listed id instead of searching the halo ids
     * and every occupied slot. NULL = not provided. */
    /* halo positions of n global ids into pos (-1 = not a halo node): the mechanism's id map */
    void (*halo_find)(const void *arg, const int32_t *ids, int64_t n, int32_t *pos);
    const void *halo_find_arg;    /* first argument of halo_find */
    const int32_t *cache_slot_of; /* [halo.n] slot of each halo node, -1 = not cached */
} halo_policy_ctx;

/* What partition(g) sees. */
typedef struct halo_policy_graph_info {
    const char *name;       /* graph name */
    int64_t nodes;          /* nodes */
    int64_t edges;          /* edges */
    int feat_dim;           /* features per node */
    int classes;            /* label classes */
    int64_t train_nodes;    /* training nodes */
    int parts;              /* parts asked for on the command line (0 = not given) */
    const int64_t *indptr;  /* [nodes+1] in-edge CSR offsets, or NULL */
    const int32_t *indices; /* [edges] sources, or NULL */
} halo_policy_graph_info;

/* One mini-batch as cache_batch(ctx, b) sees it, after the cache lookup. */
typedef struct halo_policy_batch {
    int epoch;                /* epoch */
    int64_t batch;            /* batch within the epoch */
    int64_t step;             /* batches since training started */
    int64_t n_input;          /* input nodes */
    const int32_t *input;     /* [n_input] their global ids (may be NULL) */
    int64_t n_hit;            /* halo input nodes found in the cache */
    const int32_t *hit_slots; /* [n_hit] their slots (distinct) */
    int64_t n_miss;           /* halo input nodes not in the cache */
    const int32_t *miss_halo; /* [n_miss] their positions in ctx.halo.ids (distinct) */
} halo_policy_batch;

/* ---- hook results ---- */

enum {
    HALO_POLICY_METIS,
    HALO_POLICY_MULTILEVEL,
    HALO_POLICY_RANDOM,
    HALO_POLICY_STREAM,
    HALO_POLICY_CUSTOM
};
enum { HALO_POLICY_BAL_NODES = 1, HALO_POLICY_BAL_TRAIN = 2, HALO_POLICY_BAL_EDGES = 4 };
enum { HALO_POLICY_CUT, HALO_POLICY_VOL };

/* What partition(g) decided. Defaults (no hook, or fields left out): metis, g->parts parts,
 * constraints {"nodes", "train"}, imbalance 1.05, objective "cut", seed 0. */
typedef struct halo_policy_partition_choice {
    int method;         /* HALO_POLICY_METIS, ..., HALO_POLICY_CUSTOM */
    int parts;          /* parts (>= 1) */
    int machines;       /* multilevel: machines (divides parts); else 0 */
    int nconstraints;   /* entries of constraints[] used (0..3) */
    int constraints[3]; /* HALO_POLICY_BAL_* in the order listed by the policy */
    double imbalance;   /* allowed imbalance per constraint, >= 1.0 */
    int objective;      /* HALO_POLICY_CUT or HALO_POLICY_VOL */
    int64_t seed;       /* partitioner seed */
    int32_t *assign;    /* custom only: [g->nodes] part of each node, halo_malloc'd (halo_free) */
} halo_policy_partition_choice;

/* What cache_init(ctx) decided. Default: capacity 0 (no cache). */
typedef struct halo_policy_cache_plan {
    int64_t capacity; /* slots, 0 <= capacity <= ctx->halo.n */
    int32_t *ids;     /* caller's buffer of ctx->halo.n entries: initial contents, halo ids */
    int64_t n_ids;    /* entries written to ids (<= capacity), slot i gets ids[i] */
    double score;     /* initial value of every slot score the mechanism fills (default 0) */
} halo_policy_cache_plan;

/* What cache_batch(ctx, b) decided. Default: nothing. The mechanism frees the evicted slots, then
 * puts admit[i] into evict[i] for i < n_evict and the rest into free slots in slot order; the
 * admitted nodes are pulled with this batch's misses. */
typedef struct halo_policy_cache_decision {
    int32_t *evict;  /* caller's buffer of ctx->cache.capacity entries: slots to free */
    int64_t n_evict; /* entries written to evict */
    int32_t *admit;  /* caller's buffer of ctx->cache.capacity entries: halo ids to admit */
    int64_t n_admit; /* entries written to admit */
} halo_policy_cache_decision;

/* ---- life cycle ---- */

/* Opens a new Lua state, runs the policy file (sandboxed unless opts->unsafe), checks its
 * hooks and applies the --set parameters (an undeclared name or a wrong type is an error). */
int halo_policy_open(const halo_policy_opts *opts, halo_policy **out);
/* Opens another state of the same policy (same file, params, limits) for a worker thread. */
int halo_policy_open_worker(const halo_policy *pol, halo_policy **out);
void halo_policy_close(halo_policy *pol);

/* Bit (1 << HALO_POLICY_*) set for each hook the policy defines. */
unsigned halo_policy_hooks(const halo_policy *pol);
/* The work the budget charged over every hook call so far: Lua instructions (counted in steps
 * of up to 1,000) and what C functions paid for theirs. A call's work is the difference of two
 * readings; the simulator prices it (cpu.hook_unit_ns). */
int64_t halo_policy_work(const halo_policy *pol);
/* "partition", "fanout", ... for HALO_POLICY_*; NULL when out of range. */
const char *halo_policy_hook_name(int hook);
/* The policy's name: its `name` field, else the file name without ".lua" ("default" when none). */
const char *halo_policy_name(const halo_policy *pol);
/* The file it was loaded from ("" for the built-in defaults). */
const char *halo_policy_path(const halo_policy *pol);
/* Changes the instruction budget per hook call and the state's memory limit (0 = keep). */
void halo_policy_set_limits(halo_policy *pol, int64_t budget, size_t mem_limit);
/* Changes the wall-clock limit of each hook call, in seconds (<= 0 = keep). */
void halo_policy_set_time_limit(halo_policy *pol, double seconds);
/* The wall-clock limit of each hook call, in seconds. */
double halo_policy_time_limit(const halo_policy *pol);
/* Copies untrusted text (anything a policy produced) of n bytes into dst (size bytes, always
 * terminated, truncated on a whole character): newlines, tabs and carriage returns become the
 * two characters \n, \t, \r; other control characters, C1 controls and bytes that are not
 * valid UTF-8 become \xHH. Returns the length written. */
size_t halo_policy_clean_text(char *dst, size_t size, const char *src, size_t n);
/* Bytes the state holds now. */
size_t halo_policy_mem_used(const halo_policy *pol);
/* Writes the effective parameters as "<prefix>name=value" lines, sorted (for logs, metrics). */
void halo_policy_print_params(const halo_policy *pol, FILE *f, const char *prefix);

/* ---- hooks; each validates what the policy returned and names the hook on error ---- */

/* partition(g): how to partition. On success the caller owns out->assign (custom). */
int halo_policy_partition(halo_policy *pol, const halo_policy_graph_info *g,
                          halo_policy_partition_choice *out);
/* fanout(ctx): per-layer fanouts, input layer first (DGL order), -1 = all neighbours.
 * fanouts has room for max_layers entries. Default: {10, 25}. */
int halo_policy_fanout(halo_policy *pol, const halo_policy_ctx *ctx, int *fanouts, int max_layers,
                       int *layers);
/* fanout(ctx) on a typed graph: each layer may be an integer (every relation) or a table keyed
 * by relation name, "*" for the relations not named ({ {cites=10, ["*"]=5}, 15 }). Writes the
 * result as a fanout spec in the per-relation form of `--fanouts` ("*=10;cites=10,*=5", keys in
 * byte order) into spec[cap], for the caller to check against the graph's relations; layers
 * gets the layer count. A key that cannot be a relation name (empty, or holding ",;=:" or
 * spaces) is the hook's error. Default: "*=10;*=25". */
int halo_policy_fanout_spec(halo_policy *pol, const halo_policy_ctx *ctx, char *spec, size_t cap,
                            int max_layers, int *layers);
/* The one line for a spec from halo_policy_fanout_spec that the graph's relations refuse: the
 * current message (the parse's, "--fanouts: " dropped) as "policy NAME: hook fanout (epoch E)
 * returned SPEC: WHAT". Returns HALO_ELUA. The trainer, the simulator and `policy check` say it. */
int halo_policy_fanout_spec_refused(const halo_policy *pol, int epoch, const char *spec);
/* pipeline(ctx): pipeline depth (0 = synchronous) and sampler threads. Default: 0 and 1. */
int halo_policy_pipeline(halo_policy *pol, const halo_policy_ctx *ctx, int *depth,
                         int *sampler_threads);
/* cache_init(ctx): capacity and initial contents; out->ids must be set by the caller. */
int halo_policy_cache_init(halo_policy *pol, const halo_policy_ctx *ctx,
                           halo_policy_cache_plan *out);
/* cache_batch(ctx, b): slots to evict, halo ids to admit; out->evict / out->admit set by the
 * caller. */
int halo_policy_cache_batch(halo_policy *pol, const halo_policy_ctx *ctx,
                            const halo_policy_batch *b, halo_policy_cache_decision *out);
/* epoch_end(ctx): adaptive policies read the statistics and change their parameters. */
int halo_policy_epoch_end(halo_policy *pol, const halo_policy_ctx *ctx);

/* ---- tools ---- */

/* `halo policy check`: loads the policy, calls every hook with a synthetic context (a graph of
 * 10000 nodes in 4 parts, a halo set of 2000 nodes, two epochs of 40 batches with a simple cache
 * mechanism), validates every result and prints a report to out. */
int halo_policy_check(const halo_policy_opts *opts, FILE *out);
/* A typed graph's names for `halo policy check --graph` (the caller reads them; policy/ knows
 * no graph format). */
typedef struct halo_policy_check_graph {
    const char *source;              /* the directory they come from (messages) */
    int ntypes;                      /* node types */
    const char *const *node_types;   /* [ntypes] names */
    const int64_t *type_nodes;       /* [ntypes] node counts (the synthetic halo's types) */
    int nrels;                       /* relations */
    const char *const *relations;    /* [nrels] names */
    const char *target_type;         /* the labelled type */
    /* checks a fanout spec against the relations as the trainer does: the layer count, or a
       negative code with the message of --fanouts ("--fanouts: no relation 'x' (...)") */
    int (*check_spec)(void *arg, const char *spec);
    void *arg;                       /* passed to check_spec */
} halo_policy_check_graph;
/* halo_policy_check with the context of a typed graph (tg NULL: halo_policy_check): ctx.graph
 * has its node types and relations, ctx.halo.ntype types for the synthetic halo, and the fanout
 * hook is checked in the per-relation form (halo_policy_fanout_spec) against its relations; an
 * unknown relation is the trainer's one line. */
int halo_policy_check_typed(const halo_policy_opts *opts, const halo_policy_check_graph *tg,
                            FILE *out);
/* `halo policy doc`: the API reference, generated from the registration tables. */
void halo_policy_doc(FILE *out);
/* Names of HALO_POLICY_METIS.. and HALO_POLICY_BAL_* (for logs). */
const char *halo_policy_method_name(int method);
const char *halo_policy_constraint_name(int constraint);

/* ---- data files ---- */

struct halo_json;
/* Evaluates a Lua data file (cluster profiles, experiment files) in the policy sandbox, with the
 * default instruction budget and memory limit, and converts the table it returns into a JSON
 * tree (core/json.h; halo_json_free it): a table whose keys are exactly 1..n becomes an array
 * (an empty table an empty array), one with string keys an object with its keys sorted,
 * numbers, strings and booleans stay as they are. Anything else (functions, mixed keys,
 * non-finite numbers, integers beyond 2^53, cycles, nesting deeper than 32) is HALO_EINPUT
 * naming the file and the key path ("x.lua: field network.nic_GBps: a function, ..."); syntax
 * and runtime errors are HALO_ELUA with file:line; an unreadable file is HALO_EIO. */
int halo_policy_load_data(const char *path, struct halo_json **out);

#endif
