/* The crowding probe of `halo calibrate`: what more trainer processes than cores cost each
 * stage's CPU work, measured on the runtime's own training rather than on a unit of work.
 * A fixed small training (a products-like graph of 2 % of the size, fanouts 10,10, hidden
 * 128, batch 128, pipeline depth 2, one sampler thread) runs with a rank per core and with
 * twice as many ranks, turn by turn; each run's per-stage CPU seconds are set against what
 * halo sim gives for the same configuration on the profile with every oversubscription
 * penalty at 0; a stage's penalty is the crowded run's ratio over the uncrowded one's, less
 * 1 (docs/sim-model.md, "Fourteenth pass"). Then the same training at depth 0 with a rank
 * per core, and halo sim of it, both with --timeline: the ranks' compute times against the
 * model's, batch by batch, give the profile's cpu.jitter (halo_sim_calib_jitter). */
#ifndef HALO_SWEEP_CROWD_H
#define HALO_SWEEP_CROWD_H

#include "sim/profile.h"

#include <stdbool.h>

/* Stages the probe prices. */
enum { HALO_CROWD_SAMPLE, HALO_CROWD_FETCH, HALO_CROWD_COMPUTE, HALO_CROWD_N };

/* Most turns of the probe. */
#define HALO_CROWD_MAX_TURNS 9

/* Runs of the jitter's training: the figure moves by 3x from one run to the next on a quiet
 * 2-core VM (0.029-0.105 over three runs of 20 epochs), so the median of several. */
#define HALO_CROWD_JITTER_RUNS 5

typedef struct halo_crowd_result {
    int ranks[2];                               /* ranks of the two runs: cores, 2 x cores */
    int turns;                                  /* pairs of runs */
    double ratio[HALO_CROWD_MAX_TURNS][2][HALO_CROWD_N]; /* measured / modelled CPU per turn,
                                                    run (0: a rank per core) and stage */
    double pen[HALO_CROWD_N];                   /* the median over the turns of
                                                   ratio[t][1][s] / ratio[t][0][s] - 1, >= 0 */
    double jitter;                              /* cpu.jitter from the training at depth 0
                                                   with a rank per core: the median of the
                                                   runs' figures (0: no figure) */
    double jitter_runs[HALO_CROWD_JITTER_RUNS]; /* each run's figure */
    int njitter;                                /* runs */
    double seconds;                             /* wall time of the probe */
} halo_crowd_result;

/* Runs the probe with the halo binary exe in a new directory under tmpdir (removed after, kept
 * when a command fails, for its log), p the profile it simulates (its penalties are set to 0
 * for it; p is not changed): quick, one turn of 4 epochs; else 3 turns of 8. Errors: a command
 * that fails (HALO_EIO naming it and its log's last line). */
int halo_crowd_measure(const char *exe, const char *tmpdir, bool quick,
                       const halo_sim_profile *p, halo_crowd_result *out);

#endif
