/* What calibrate.c and calibrate_compute.c share: the timing loop and the helpers of the
 * measurements (calibrate_base.c). Not a public header. */
#ifndef HALO_SIM_CALIBRATE_INT_H
#define HALO_SIM_CALIBRATE_INT_H

#include "graph/graph.h"
#include "sim/calibrate.h"

#include <stdint.h>

/* Most repetitions of one measurement. */
#define CALIB_MAX_REPS 64

/* One repetition of a measured operation; returns 0 or a negative HALO_E*. */
typedef int (*calib_fn)(void *arg);

/* Runs fn once to warm up, then repeatedly for about `seconds` (at least 3, at most
 * CALIB_MAX_REPS times); *t gets the seconds of the fastest repetition: the machine's rate
 * when nothing else runs on it (another process on the core only ever makes a run slower). */
int halo_sim_calib_best(calib_fn fn, void *arg, double seconds, double *t);
/* i-th element of a scattered permutation of [0, n), n a power of two (an odd multiplier). */
int64_t halo_sim_calib_scatter(int64_t i, int64_t n);
/* The measurements' graph in memory: n nodes (a power of two), in-degree uniform in [1, 63]
 * (mean 32), uniform sources. */
halo_graph *halo_sim_calib_random_graph(int64_t n);
/* Splits the times t1, t2 of `count` items of b1 < b2 bytes into seconds per item and bytes/s
 * (t = count * (per + bytes / bw)); noise that makes the wider one no slower gives per = 0. */
void halo_sim_calib_split_rate(double t1, double t2, double count, double b1, double b2,
                               double *per, double *bw);

#endif
