/* halo calibrate's fetch probe (run by `halo calibrate --probe-mpi FILE --probe-fetch` under
 * mpirun): the runtime's fetch on a random graph split between the ranks. */
#ifndef HALO_CLI_CALIBRATE_FETCH_H
#define HALO_CLI_CALIBRATE_FETCH_H

#include "sim/calibrate.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct halo_comm halo_comm;

/* The probe's two row widths, in floats (64- and 512-byte rows): the fetch's work per input
 * node and per byte are told apart by them. */
#define HALO_CALIB_FETCH_NARROW 16
#define HALO_CALIB_FETCH_WIDE 128
/* The runs, each with its lines' prefix: the two widths on a large table (the caches emptied
 * before each batch), then the wide rows on the small table, caches kept, then the wide rows
 * on the large table, caches kept (batches back to back: what the caches hold of a table
 * of that size when nothing else runs between two batches). */
#define HALO_CALIB_FETCH_RUNS 4
extern const char *const halo_calib_fetch_runs[HALO_CALIB_FETCH_RUNS];
/* The figures of a run, each a line "PREFIX_KEY value". */
#define HALO_CALIB_FETCH_FIGS 5

/* For each run, writes a random graph's partition into a directory under dir (rank 0; removed
 * at the end), fetches sampled mini-batches (on the large table each after 64 MiB written
 * untimed: the caches hold other data, as after a training step's compute on a large graph;
 * then on the small table and again on the large one back to back) through
 * halo_store_pull_plan/pull_exec on every rank, and appends the sums over all ranks to text
 * (at *len, advanced): "R_cpu_s" (CPU seconds, polling excluded), "R_inputs" (input nodes),
 * "R_rows" (rows gathered, received or served), "R_msgs" (messages sent and received), and
 * "R_table_bytes" (feature bytes per rank), R the run's prefix. Collective. */
int halo_calib_fetch_probe(halo_comm *c, const char *dir, bool quick, char *text, size_t size,
                           int *len);

#endif
