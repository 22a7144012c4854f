/* halo calibrate's MPI probe (run by `halo calibrate --probe-mpi FILE` under mpirun): the
 * links between two local ranks, and with 2 x cores ranks the exchanges, the polling and what
 * the oversubscription costs a unit of step work. cli/cmd_calibrate.c runs it and reads FILE. */
#ifndef HALO_CLI_CALIBRATE_PROBE_H
#define HALO_CLI_CALIBRATE_PROBE_H

#include "sim/calibrate.h"

#include <stdbool.h>

/* Most units of step work a probe runs. */
#define HALO_CALIB_MAX_UNITS 64

/* Floats of the large allreduce the probe times (512 KiB: the gradients of a GraphSAGE of
 * hidden width 128 to 256 on features of 100 or so) */
#define HALO_CALIB_AR_FLOATS (128 << 10)

/* What one MPI probe measured between two ranks. */
typedef struct mpi_figs {
    double lat_s;       /* half the round trip of an 8-byte ping-pong */
    double bw;          /* bytes/s of a 4 MiB ping-pong (both directions counted) */
    double overhead_s;  /* seconds per 8-byte message streamed one way */
    double allreduce_s; /* seconds per allreduce of one float */
    double allreduce_big_s; /* seconds per allreduce of HALO_CALIB_AR_FLOATS floats, the median
                               block */
    double unit[HALO_UNIT_PARTS]; /* CPU seconds of a unit of step work's parts with a core
                                     per rank (units) */
    double fetch[4][5]; /* the fetch probe's runs (calibrate_fetch.h: narrow rows, wide rows,
                           wide rows on a table of HALO_SIM_CALIB_WARM_BYTES kept in the
                           caches, wide rows on the large table kept): CPU seconds, input
                           nodes, rows, messages, feature bytes per rank; 0 when it did not
                           run */
} mpi_figs;

/* The keys of FILE's lines: the unit's parts' CPU seconds ("unit_PART_cpu_s"), and the paired
 * measurement's ratio of all ranks to half of them ("ratio_PART"), per part. */
extern const char *const halo_calib_unit_keys[HALO_UNIT_PARTS];
extern const char *const halo_calib_ratio_keys[HALO_UNIT_PARTS];

/* The median CPU seconds of a unit of step work's parts on this process alone, no MPI: n units
 * after two warm-up ones, as the probe's ranks run them (the oversubscription's base). */
void halo_calib_unit_alone(int n, double cpu[HALO_UNIT_PARTS]);

/* `halo calibrate --probe-mpi FILE [--quick] [--probe-units] [--probe-fetch]` under mpirun: rank
 * 0 writes "key value" lines to FILE (with 2 ranks the links, the units with --probe-units or
 * --probe-fetch, the fetch probe with --probe-fetch; with more the exchanges, polling, units
 * and their paired ratios). Returns 0 (an error ends every rank through halo_comm_fail). */
int halo_calib_probe_main(int argc, char **argv, const char *file, bool quick, bool units,
                          bool fetch);

#endif
