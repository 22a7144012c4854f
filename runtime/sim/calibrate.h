/* halo calibrate's measurements of this machine that need no MPI: sampler, gathers, copies,
 * cache lookups, policy hooks, GEMM, aggregation, optimiser, each on one core. The MPI probes
 * (latency and bandwidth between two ranks) live in cli/cmd_calibrate.c and go through comm/;
 * sim/ never calls MPI. Every function repeats its operation for about o->seconds and reports
 * the fastest repetition (the machine's rate when nothing else runs on the core). */
#ifndef HALO_SIM_CALIBRATE_H
#define HALO_SIM_CALIBRATE_H

#include "pipe/timeline.h"
#include "sim/profile.h"

#include <stdbool.h>
#include <stdint.h>

/* x rounded to 4 significant digits (the figures are not more precise than that). */
double halo_sim_calib_sig4(double x);

/* E[max of P standard normals] (0.5642 for 2, 0.8463 for 3, 1.0294 for 4). */
double halo_sim_calib_normal_max(int P);

/* Most ranks halo_sim_calib_jitter reads. */
#define HALO_SIM_MAX_JITTER_RANKS 64

/* The jitter of a CPU step (the profile's cpu.jitter) from the timeline of a training at
 * depth 0 on P ranks and halo sim's timeline of the same run: in each batch of the epochs
 * after the first that every rank computed, each rank's measured compute time over its
 * simulated one, over the mean of those ratios; the mean over the batches of the largest, less
 * 1, is what waiting for the slowest rank costs beyond the modelled work (the model's own
 * differences between the ranks divided out); a lognormal of sigma costs that
 * sigma E[max of P standard normals], so sigma is that figure over it. 0 with no such batch
 * (or P < 2, or more than HALO_SIM_MAX_JITTER_RANKS ranks). */
double halo_sim_calib_jitter(const halo_timeline_event *run, int64_t nrun,
                             const halo_timeline_event *sim, int64_t nsim, int P);

/* How long and how loud. */
typedef struct halo_sim_calib_opts {
    double seconds; /* time spent on each measurement (about; at least 3 repetitions) */
    bool quick;     /* smaller inputs (the sampler graph, the model) for --quick */
    bool progress;  /* one line per measurement on stderr (halo_info) */
} halo_sim_calib_opts;

/* Sampler, on frontiers of a mini-batch layer's size (4096 nodes) from cold caches (as a
 * training step finds them after its fetch and compute): on a random CSR of in-degrees 20..44
 * (uniform sources) the seconds per frontier node and per edge drawn from a short list
 * (halo_sample_rows_offsets + halo_sample_rows at fanouts 1 and 10, solved for the two costs)
 * and per source node of halo_sample_block_build; at fanout 10 on in-degrees 2..8 the seconds
 * per edge of a list taken whole, and on in-degrees 500..1500 per edge drawn from a long list
 * (its draws each a cache line of their own). Into p's sample_* and block_node_s. */
int halo_sim_calib_sample(const halo_sim_calib_opts *o, halo_sim_profile *p);
/* The machine's speed now on two of these probes, for a check against a profile (halo sim
 * validate, before its first measured run and after its last): out[0] the sampler's seconds
 * per edge (halo_sim_calib_sample's first measurement alone), out[1] a one-thread GEMM's flop/s
 * (halo_sim_calib_compute's GEMM alone), each measured for about `seconds`; 0 where a probe failed. A machine slower or faster than
 * its profile moves every error of a validation (on a 2-core VM a one-thread GEMM ran 15 %
 * slower 74 minutes after the calibration it was compared with). */
void halo_sim_calib_speed(double seconds, double out[2]);
/* How k = 2 x cores threads (at most 16) share the cores: each samples its own frontier of a
 * random graph; eff = (the time of one alone x k / cores) / (the time of all k at once), in
 * 0.1..1 (1: a fair split of the cores, nothing lost to switches and shared caches). */
int halo_sim_calib_share(const halo_sim_calib_opts *o, int cores, double *eff, int *threads);
/* halo_store_gather of random 64-byte and 512-byte rows from a 128 MiB table, split into
 * seconds per row and bytes/s; and bytes/s of memcpy. */
int halo_sim_calib_copy(const halo_sim_calib_opts *o, double *gather_bw, double *gather_row_s,
                        double *memcpy_bw);
/* Seconds per remote id of halo_cache_lookup (half of the ids in the halo set). */
int halo_sim_calib_lookup(const halo_sim_calib_opts *o, double *lookup_s);
/* Seconds per hook call of a trivial policy (halo_policy_fanout), and seconds per unit of work
 * the budget charges a hook that works through a table (beyond the call). */
int halo_sim_calib_hook(const halo_sim_calib_opts *o, double *hook_s, double *unit_s);
/* Flop/s of a 2000x256x256 cblas_sgemm on one thread, and a mean aggregation of sampled
 * neighbour rows (CSR, rows of 16 and of 128 floats) split into seconds per edge and bytes/s of
 * rows read (agg_bw NULL: the GEMM only). */
int halo_sim_calib_compute(const halo_sim_calib_opts *o, double *gemm_flops, double *agg_bw,
                           double *agg_edge_s);
/* Seconds per element of the model's bias + ReLU + dropout kernel (model/ops.h bias_act) over a
 * 4096 x 64 matrix, one thread: the elementwise passes of a layer. */
int halo_sim_calib_elem(const halo_sim_calib_opts *o, double *elem_s);
/* The GEMM rate table of p (one thread): a layer's forward, dW and dX GEMMs at every (rows,
 * in, out) of a 4 x 4 x 4 grid (rows 64..32768, in 16..1024, out 4..256). */
int halo_sim_calib_gemm_table(const halo_sim_calib_opts *o, halo_sim_profile *p);
/* p's wake_* figures: how much slower a batch's sampling and a training step of two sizes
 * (wake_step_s, wake_small_s) run right after their thread slept each of halo_sim_wake_gap's
 * gaps (one thread; about 3 s). */
int halo_sim_calib_wake(const halo_sim_calib_opts *o, halo_sim_profile *p);
/* The graph-dependent constants on part 0 of the partition pdir (halo calibrate --graph):
 * sampling per frontier node and per edge on a frontier of its training nodes and of the
 * local ends of random edges (neighbours, as the next layer's frontier is: skewed graphs give
 * long adjacency lists), block building, and the gather of its own feature rows (its row
 * bytes and working set); sets p->graph to pdir. */
int halo_sim_calib_graph(const halo_sim_calib_opts *o, const char *pdir, halo_sim_profile *p);
/* The kernel's time slice: 2 x cores threads (at most 16) spin on the clock for a second; the
 * median length of their uninterrupted runs (cpu.slice_us). */
double halo_sim_calib_slice(const halo_sim_calib_opts *o, int cores);

/* A sleep to a deadline 1 ms ahead (clock_nanosleep TIMER_ABSTIME, as comm/'s netem delay):
 * *over_s the seconds it wakes up late, *cpu_s the sleeping thread's CPU seconds for it (the
 * timer armed, the wake-up; on a virtual machine each costs exits), the medians of 200 (40
 * with quick). */
void halo_sim_calib_sleep(const halo_sim_calib_opts *o, double *over_s, double *cpu_s);

/* A table small enough to stay in the caches from one batch to the next: feature bytes per rank
 * of the fetch probe's warm run and of the unit's warm gather (1 MiB). */
#define HALO_SIM_CALIB_WARM_BYTES ((int64_t)1 << 20)

/* A unit of a training step's work for the oversubscription probe (halo calibrate runs it
 * alone and in 2 x cores ranks at once, and compares their CPU time), in four parts timed
 * apart, since more processes than cores cost each kind of work its own: the sampler's (4096
 * frontier nodes of a random graph of 2^18 nodes drawn at fanout 10 and their block built),
 * a gather of 8192 random 512-byte rows from a 64 MiB table, a 2048 x 128 x 128 sgemm on
 * them, and a gather of 8192 random rows from a table of HALO_SIM_CALIB_WARM_BYTES (warm: what
 * a small graph's fetch pays); a few milliseconds on one core. key varies the draws and the
 * rows. */
enum { HALO_UNIT_SAMPLE, HALO_UNIT_GATHER, HALO_UNIT_GEMM, HALO_UNIT_GATHER_WARM, HALO_UNIT_PARTS };
typedef struct halo_sim_calib_unit halo_sim_calib_unit;
halo_sim_calib_unit *halo_sim_calib_unit_new(uint64_t key);
/* Runs the unit; cpu[k] gets part k's seconds on the calling thread's CPU clock. */
void halo_sim_calib_unit_run(halo_sim_calib_unit *u, double cpu[HALO_UNIT_PARTS]);
void halo_sim_calib_unit_free(halo_sim_calib_unit *u);

/* GraphSAGE on one thread (model/): the fixed seconds of a training step (forward, backward
 * and Adam on a one-seed batch) and bytes/s of Adam over a large parameter buffer. */
int halo_sim_calib_model(const halo_sim_calib_opts *o, double *step_overhead_s, double *adam_bw);

/* A check of the compute model, each side measured now: the best time of a real one-thread
 * GraphSAGE step (forward, backward, Adam; 128 inputs, `hidden`, 16 classes) on a batch of 256
 * seeds sampled at fanouts 10,25 from a random graph, and what p's cost functions say for the
 * same blocks (fit factor left out). */
int halo_sim_calib_check_compute(const halo_sim_calib_opts *o, const halo_sim_profile *p,
                                 int hidden, double *measured_s, double *model_s);

/* All of the above into p (cpu and device fields, hook_s), with cores from
 * sysconf(_SC_NPROCESSORS_ONLN), device cpu, one machine, one trainer. Link fields untouched. */
int halo_sim_calibrate_host(const halo_sim_calib_opts *o, halo_sim_profile *p);

#endif
