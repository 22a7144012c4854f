/* Fitting a profile's stage constants to a measured run (halo calibrate --from-metrics): the run
 * is replayed from its metrics file (the summary record carries its configuration), simulated
 * with the profile, and each stage's constants are scaled by measured / simulated time, a few
 * rounds, so that the model reproduces that run; other configurations then test the model. */
#ifndef HALO_SIM_FIT_H
#define HALO_SIM_FIT_H

#include "sim/profile.h"
#include "sim/sim.h"

#include <stdio.h>

/* The simulator options of the run recorded in a metrics file of halo train (its summary
 * record: partition, policy, --set, epochs, batch, batching, fanouts, hidden, seed, depth,
 * sampler threads, netem). Strings point into *tree (free it with halo_json_free after use);
 * sets into sets[] (up to 64). ranks gets the run's rank count, netem_* its emulated network
 * in SI units (0 when none). */
typedef struct halo_sim_recorded {
    halo_sim_opts o;          /* the replayable options (profile NULL) */
    const char *sets[64];     /* --set values of the run */
    int ranks;                /* ranks of the run */
    double netem_lat_s;       /* --netem latency, 0 = none */
    double netem_bw;          /* --netem bandwidth in bytes/s, 0 = infinite */
    struct halo_json *tree;   /* the parsed summary record (owns the strings) */
} halo_sim_recorded;

int halo_sim_recorded_load(const char *metrics, halo_sim_recorded *out);
void halo_sim_recorded_free(halo_sim_recorded *r);

/* Fits p (in place) to the measured runs in `metrics` (one file, or a comma-separated list
 * fitted together). First, from the runs with a core per trainer process (all runs when there
 * are none), `rounds` rounds of simulate, compare, scale: each stage's fit factor (p->fit_sample,
 * fit_fetch, fit_compute, fit_allreduce) moves by the geometric mean over the runs of that
 * stage's measured / simulated time, bounded to 0.5..2; a stage under 5% of some run's epoch,
 * or whose ratios differ by more than 1.5x between the runs, is not identified and keeps its
 * factor. The measured constants themselves are never changed. Then, from the runs with more
 * trainers than cores, oversub_penalty by bisection so that their epoch times match on
 * average (a profile with penalties measured on training, crowd_ranks > 0: the three crowd_*
 * scaled together in their measured proportions). p's machines, trainers and netem are set to
 * each run's in turn (one machine). Prints a line per round to out (may be NULL). */
int halo_sim_fit(const char *metrics, int rounds, halo_sim_profile *p, FILE *log);

#endif
