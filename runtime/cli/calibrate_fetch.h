/* halo calibrate's fetch probe (run by `halo calibrate --probe-mpi FILE --probe-fetch` under
 * mpirun): the runtime's fetch on a random graph split between the ranks. */
#ifndef HALO_CLI_CALIBRATE_FETCH_H
#define HALO_CLI_CALIBRATE_FETCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct halo_comm halo_comm;

/* The probe's two row widths, in floats (64- and 512-byte rows): the fetch's work per input
 * node and per byte are told apart by them. */
#define HALO_CALIB_FETCH_NARROW 16
#define HALO_CALIB_FETCH_WIDE 128

/* At each width, writes a random graph's partition into a directory under dir (rank 0; removed
 * at the end), fetches sampled mini-batches (each after 64 MiB written untimed: the caches hold
 * other data, as after a training step's compute) through halo_store_pull_plan/pull_exec on every
 * rank, and appends the sums over all ranks to text (at *len, advanced): "fetchD_cpu_s" (CPU
 * seconds, polling excluded), "fetchD_inputs" (input nodes), "fetchD_rows" (rows gathered,
 * received or served), "fetchD_msgs" (messages sent and received), D the width. Collective. */
int halo_calib_fetch_probe(halo_comm *c, const char *dir, bool quick, char *text, size_t size,
                           int *len);

#endif
