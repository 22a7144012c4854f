/* Cluster profiles of the simulator: machines, trainers per machine, cores, links and device
 * rates, read from a Lua file (experiments/clusters/NAME.lua) or written by `halo calibrate`.
 * Every rate is in base SI units here (seconds, bytes per second, flop per second); the file
 * may use the units documented in docs/profiles.md. No MPI, no Lua (the file is evaluated by
 * policy/'s sandboxed data loader). */
#ifndef HALO_SIM_PROFILE_H
#define HALO_SIM_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

/* The line every profile written by halo_sim_profile_write holds, after the user's comment
 * lines: what halo calibrate -o looks for before it replaces a file. */
#define HALO_PROFILE_SIG "-- halo cluster profile (docs/profiles.md)\n"

/* Most points per axis of the GEMM rate table (rows, in, out). */
#define HALO_SIM_GEMM_AXIS 4

/* The gaps (seconds off the CPU) a profile's wake_* penalties are measured after. */
#define HALO_SIM_WAKE_GAPS 4
extern const double halo_sim_wake_gap[HALO_SIM_WAKE_GAPS];

/* Where a trainer computes. */
enum { HALO_SIM_DEVICE_CPU = 0, HALO_SIM_DEVICE_GPU = 1 };

/* One machine kind and how many of them; every field > 0 unless said otherwise (latencies and
 * fixed overheads may be 0; the pcie fields are 0 on a cpu profile that leaves them out). */
typedef struct halo_sim_profile {
    char name[64];             /* profile name (file's `name`, else its base name) */
    char source[256];          /* file it came from ("" when built in code) */
    char graph[256];           /* partition the graph-dependent constants (sampling, gather)
                                  were measured on (halo calibrate --graph); "" = generic */
    /* the cluster */
    int machines;              /* machines */
    int trainers;              /* trainers (ranks, GPUs when device is GPU) per machine */
    int cores;                 /* CPU cores per machine, shared by its trainers' threads */
    /* CPU work, per core (one thread runs at this rate when it has a core to itself) */
    double sample_edge_s;      /* seconds per sampled edge (draw + write) */
    double sample_node_s;      /* seconds per frontier node sampled (row lookup, offsets) */
    double sample_copy_s;      /* seconds per edge of a list taken whole (in-degree <= fanout;
                                  0: sample_edge_s) */
    double sample_long_s;      /* seconds per edge drawn from a long list (in-degree > 64: each
                                  draw a cache line of its own; 0: sample_edge_s) */
    double block_node_s;       /* seconds per source node when building a block (dedup hash) */
    double block_edge_s;       /* seconds per hash operation of a block being built (each
                                  destination and each edge; 0: not measured, the edges' indices
                                  at memcpy_bw instead) */
    double gather_bw;          /* bytes/s of a gather of random feature rows (local copy) */
    double gather_row_s;       /* seconds per gathered row besides its bytes (0 in profiles
                                  written before it was measured: bytes / gather_bw only) */
    double memcpy_bw;          /* bytes/s of a sequential copy */
    double lookup_node_s;      /* seconds per remote id looked up in the cache */
    double fetch_node_s;       /* seconds per input node of a batch in the fetch besides its
                                  gathers and messages: the pull's plan, the loop over the
                                  input nodes, the polls of the replies (0 in profiles written
                                  before it was measured) */
    double fetch_bw;           /* bytes/s of the fetch's rows (the owner's gather, the copy
                                  between the ranks, the requester's scatter and own rows), each
                                  row counted where it is gathered, received and served; 0: as
                                  gather_bw (profiles written before it was measured) */
    double fetch_cold_bytes;   /* feature bytes per rank fetch_bw was measured on (the probe
                                  empties the caches before each batch) */
    double fetch_warm_bw;      /* bytes/s of the fetch's rows from a table small enough to stay
                                  in the caches between batches (0: fetch_bw at every size) */
    double fetch_kept_bw;      /* bytes/s of the fetch's rows from a table of fetch_cold_bytes
                                  fetched batch after batch with nothing between them (0: not
                                  measured); see halo_sim_cost_kept_bw */
    double fetch_warm_bytes;   /* feature bytes per rank fetch_warm_bw was measured on; tables
                                  between the two sizes: the seconds per byte interpolated in
                                  the logarithm of the size (halo_sim_cost_fetch_rows_s) */
    double hook_s;             /* seconds per policy hook call (cache_batch), fixed part */
    double hook_unit_s;        /* seconds per unit of work a hook's budget is charged (a Lua
                                  instruction; 0: not measured) */
    double oversub_warm;       /* oversub_penalty of gathers from a table of fetch_warm_bytes,
                                  used with fetch_warm_bw only; the fetch's work between the two
                                  sizes: interpolated as its rate (halo_sim_cost_warm_share) */
    double oversub_penalty;    /* with t trainers (processes) on c < t cores, CPU work runs
                                  1 + oversub_penalty * (t - c) / c times slower than its share
                                  (switches between processes, caches refilled); 0 = none.
                                  Measured on gathers: it prices the fetch, the compute's
                                  aggregation and element passes, Adam */
    double oversub_gemm;       /* the same for the compute's GEMMs (0 = none) */
    double oversub_sample;     /* the same for the sampling stage's work (0 = none) */
    double crowd_sample;       /* measured on the runtime's own training (halo calibrate's
                                  crowding probe: 2 x cores ranks against a core each, each
                                  stage's CPU over what the model gives without penalties):
                                  with t trainers on c < t cores, the sampling stage's work
                                  runs 1 + crowd_sample * (t - c) / c times slower; used in
                                  place of the oversub_* fields when crowd_ranks > 0 */
    double crowd_fetch;        /* the same for the fetch's work */
    double crowd_compute;      /* the same for the compute (GEMMs, aggregation, Adam) */
    double crowd_ranks;        /* trainer processes the crowding probe ran (0: not measured;
                                  the oversub_* fields apply) */
    double wake_sample[HALO_SIM_WAKE_GAPS];  /* a sampling step whose thread has been off the
                                  CPU halo_sim_wake_gap[i] seconds since its last sampling
                                  step runs 1 + wake_sample[i] times slower (its caches emptied
                                  meanwhile; interpolated in the gap's logarithm, linear from 0
                                  below the first gap, the last beyond it); all 0: none */
    double wake_compute[HALO_SIM_WAKE_GAPS]; /* the same for a compute or Adam step of
                                  wake_step_s seconds (the probe's large step) */
    double wake_step_s;        /* seconds of the probe's large step (0: wake_compute at every
                                  size) */
    double wake_small[HALO_SIM_WAKE_GAPS]; /* the same for a step of wake_small_s; between the
                                  two sizes interpolated in the logarithm of the step's
                                  seconds, each size's own beyond it */
    double wake_small_s;       /* seconds of the probe's small step (0: none measured) */
    double corun_sample;       /* with as many busy threads as cores or more, the sampling
                                  stage's work runs 1 + corun_sample times slower than alone on
                                  the machine (cores that share caches and memory); its
                                  constants are measured alone, the fetch's on 2 busy ranks
                                  already; 0 = none */
    double slice_s;            /* the kernel's time slice of a busy core: a task that ran this
                                  long while others wait for a core gives it up and queues
                                  again (0: a task keeps its core to its end) */
    double poll_frac;          /* with more busy threads than cores, the share of a core each
                                  thread waiting in an exchange takes from the running tasks
                                  by polling (comm/'s spin and short sleeps); 0 = none */
    double share_eff;          /* with more busy threads than cores, each advances at cores /
                                  threads x share_eff of a core (switches, shared caches):
                                  measured with share_threads threads; 0 = not measured (1) */
    double share_threads;      /* threads per machine share_eff was measured with (0: none) */
    double jitter;             /* sigma of a CPU step's log time from one run of it to the next
                                  (mean kept): ranks meeting in an exchange wait for the
                                  slowest draw; 0 = every step takes its mean */
    /* links */
    double shm_lat_s;          /* one message between ranks of one machine, latency */
    double oversub_lat_s;      /* the same when the machine's ranks outnumber its cores (0: shm_lat_s) */
    double shm_bw;             /* bytes/s between ranks of one machine (per flow) */
    double net_lat_s;          /* one message between machines, latency */
    int nics;                  /* NICs per machine (trainers share them evenly) */
    double nic_bw;             /* bytes/s of one NIC, each direction */
    double msg_overhead_s;     /* CPU seconds per message sent or received (software cost) */
    /* emulated network (halo train --netem): every exchange between ranks lasts at least
       lat + max(bytes sent, bytes received) / bw from its start, as the runtime enforces */
    double netem_lat_s;        /* 0: off */
    double netem_bw;           /* bytes/s, 0: infinite */
    double netem_over_s;       /* how late the runtime's sleep for an emulated delay wakes up
                                  (timer slack, wake-up), added to each delay; 0: not measured */
    double netem_sleep_cpu_s;  /* the sleeping thread's CPU time for one such sleep (arming the
                                  timer, the wake-up; on a virtual machine its exits), charged to
                                  its stage after each delay it slept; 0: not measured */
    /* host-to-device copies (device GPU only) */
    double pcie_bw_pinned;     /* bytes/s from pinned host memory */
    double pcie_bw_pageable;   /* bytes/s from pageable host memory */
    double pcie_lat_s;         /* per copy */
    bool pinned;               /* the data path stages rows in pinned memory */
    /* compute */
    int device;                /* HALO_SIM_DEVICE_* */
    double gemm_flops;         /* flop/s of the trainer's GEMMs (GPU: one GPU; CPU: one core) */
    double agg_bw;             /* bytes/s of the sparse aggregation (GPU: one GPU; CPU: core) */
    double agg_edge_s;         /* seconds per aggregated edge besides its row's bytes (0 in
                                  older profiles: bytes / agg_bw only) */
    double elem_s;             /* seconds per element of a layer's elementwise passes (bias,
                                  ReLU, dropout, their backward, row copies; 0 in older
                                  profiles: part of step_overhead_s only) */
    /* GEMM rate by shape: flop/s of a layer's three GEMMs (forward, dW, dX) at `rows` rows,
       `in` inputs and `out` outputs, on a grid, interpolated in log space and clamped at its
       edges; gemm_nr == 0 (older profiles, datasheet GPUs): gemm_flops at every shape */
    int gemm_nr, gemm_ni, gemm_no;          /* points on each axis (0: no table) */
    double gemm_rows[HALO_SIM_GEMM_AXIS];   /* rows axis, increasing */
    double gemm_in[HALO_SIM_GEMM_AXIS];     /* in axis, increasing */
    double gemm_out[HALO_SIM_GEMM_AXIS];    /* out axis, increasing */
    double gemm_rate[HALO_SIM_GEMM_AXIS][HALO_SIM_GEMM_AXIS][HALO_SIM_GEMM_AXIS]; /* flop/s at
                                               [rows][in][out] */
    double step_overhead_s;    /* fixed seconds per training step (launches, optimiser, loss) */
    double adam_bw;            /* bytes/s of the optimiser's pass over parameters */
    /* collectives */
    double allreduce_lat_s;    /* per ring step, added to the link latency */
    double allreduce_bw;       /* bytes/s of the runtime's allreduce between two ranks of one
                                  machine beyond its latency; T ranks take ceil(log2 T) times
                                  as long (its in-place binomial reduce, then broadcast); 0: a
                                  ring at shm_bw */
    /* per-stage scale factors of halo calibrate --from-metrics (1 when absent: not fitted);
       each multiplies the modelled CPU/device time of its stage, bounded to [1/2, 2] */
    double fit_sample;         /* sampling and block building */
    double fit_fetch;          /* lookups, hooks, gathers and message costs of the fetch */
    double fit_compute;        /* forward, backward, step overhead and optimiser */
    double fit_allreduce;      /* allreduce latency per ring step */
} halo_sim_profile;

/* Sets the fields that are optional with a default other than 0 (the fit factors, 1). */
void halo_sim_profile_defaults(halo_sim_profile *p);
/* Into out: ps[0] with every number of the file (each K_NUM field, each GEMM table rate) the
 * median of its n values in ps[0..n-1] (n >= 1; the tables' axes those of ps[0], which the
 * others share when one calibration wrote them all). */
void halo_sim_profile_median(const halo_sim_profile *ps, int n, halo_sim_profile *out);

/* Flop/s of a layer's GEMMs at (rows, in, out): the table, trilinear in the logarithms of the
 * three sizes (clamped to the grid), of the seconds per flop; gemm_flops without a table. */
double halo_sim_profile_gemm_rate(const halo_sim_profile *p, double rows, double in, double out);

/* One notice line (halo_notice) when the profile's graph-dependent constants were not measured
 * on the partition pdir (generic constants, or another partition's). */
void halo_sim_profile_graph_notice(const halo_sim_profile *p, const char *pdir);

/* Loads a profile file: a Lua table (sandboxed). Errors are one line naming the file, the field
 * and what is wrong (unknown field, wrong type, a zero or negative rate), HALO_EINPUT. */
int halo_sim_profile_load(const char *path, halo_sim_profile *out);

/* Checks every field (the same checks as load; `where` names the source in messages). */
int halo_sim_profile_check(const halo_sim_profile *p, const char *where);

/* Writes p as a profile file (Lua), atomically; `comment` goes at the top (may be NULL).
 * halo_sim_profile_load reads it back to the same values. */
int halo_sim_profile_write(const char *path, const halo_sim_profile *p, const char *comment);

#endif
