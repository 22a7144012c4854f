/* Measured vs simulated: reads the metrics of a real run (halo train --metrics) and of a
 * simulation of the same configuration (halo sim --metrics), checks that every count is equal
 * per rank and epoch (invariant 3), and sets the times side by side. No MPI. */
#ifndef HALO_SIM_VALIDATE_H
#define HALO_SIM_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Stages compared, in this order: the epoch time (slowest rank), the per-rank stage sums of
 * wall time (HALO_SIM_T_WALL of them with the epoch), then the per-rank CPU seconds of the
 * stages' work (the *_cpu_s fields: 0 when a measured file predates them, and then not
 * compared). */
enum { HALO_SIM_T_EPOCH, HALO_SIM_T_SAMPLE, HALO_SIM_T_FETCH, HALO_SIM_T_COPY,
       HALO_SIM_T_COMPUTE, HALO_SIM_T_ALLREDUCE, HALO_SIM_T_WAIT, HALO_SIM_T_WALL,
       HALO_SIM_T_SAMPLE_CPU = HALO_SIM_T_WALL, HALO_SIM_T_FETCH_CPU, HALO_SIM_T_COMPUTE_CPU,
       HALO_SIM_T_N };

/* Name of a HALO_SIM_T_* ("epoch", "sample", ...). */
const char *halo_sim_time_name(int t);

typedef struct halo_sim_comparison {
    int epochs;                     /* epochs present in both files */
    int ranks;                      /* ranks of both */
    int first_epoch;                /* first epoch timed (epoch 0 is warm-up when epochs > 1) */
    int64_t records;                /* (epoch, rank) records compared */
    int fields;                     /* count fields compared per record: the 9 counts, plus
                                       each per-type count of a typed run's measured records */
    int64_t mismatches;             /* count fields that differ */
    char first_mismatch[256];       /* the first of them, in words ("" when none) */
    double measured[HALO_SIM_T_N];  /* seconds: epoch = median over timed epochs of the
                                       slowest rank's time; stages = median over timed epochs
                                       of the mean per rank */
    double simulated[HALO_SIM_T_N]; /* the same for the simulation */
    double measured_spread;         /* (slowest - fastest) / median of the measured epoch
                                       times over the timed epochs: how steady the machine was
                                       (0 with one timed epoch) */
} halo_sim_comparison;

/* Compares two metrics files. Errors: a file that cannot be read or parsed (file:line), files
 * of different rank or epoch counts (HALO_EINPUT). Count mismatches are not errors: they are
 * reported in out->mismatches. */
int halo_sim_compare_files(const char *measured, const char *simulated, halo_sim_comparison *out);

/* Prints the comparison: counts equal or the first mismatch, then per stage measured,
 * simulated and the relative error (or "times: not compared" when the simulation has none). */
void halo_sim_comparison_print(const halo_sim_comparison *c, FILE *out);

/* compare_files + print; returns HALO_EINPUT after printing when counts differ. */
int halo_sim_compare(const char *measured, const char *simulated, FILE *out);

/* A profile's last validation (`halo sim validate --record`): the `validation` entry of the
 * profile file, one line that halo calibrate drops when it rewrites the constants. */
typedef struct halo_sim_validation {
    bool present;            /* the profile has one */
    int64_t seed;            /* the draw's seed */
    int configs;             /* configurations compared */
    double median_pct;       /* median |error| of the epoch time, % */
    double worst_pct;        /* worst |error| of the epoch time, % */
    double stage_median_pct; /* the largest per-stage median |error|, % */
    bool fit;                /* the machine was quiet enough to measure (else recorded with
                                --force: the figures are a loaded machine's) */
    char date[32];           /* when, "YYYY-MM-DD HH:MM UTC" */
} halo_sim_validation;

/* Reads the validation entry of a profile file (present = false when it has none). Errors: the
 * file cannot be evaluated, or the entry is malformed (HALO_EINPUT naming the field). */
int halo_sim_validation_load(const char *profile, halo_sim_validation *out);

/* Replaces (or adds) the validation entry of a profile file, atomically: the rest of the file is
 * kept byte for byte, the result is loaded back (profile and entry) before it replaces the
 * file. */
int halo_sim_validation_record(const char *profile, const halo_sim_validation *v);

/* One line: "validated: median |error| 8.1%, worst 21.0% (seed 1, 20 configurations,
 * 2026-12-01 23:10 UTC)" or "not validated (halo sim validate --record)". */
void halo_sim_validation_text(const halo_sim_validation *v, char *buf, size_t size);

#endif
