/* The crowding probe (sweep/crowd.h): the runtime's own training with a rank per core and
 * with 2 x cores ranks, against halo sim on the profile without penalties. */
#include "sweep/crowd.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/sort.h"
#include "core/timer.h"
#include "pipe/timeline.h"
#include "sim/calibrate.h"
#include "sim/validate.h"
#include "sweep/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds one command may take before it is stopped. */
#define CROWD_TIMEOUT 300.0

/* The configuration's flags, the same for train and sim (pipeline depth 2, or 0 for the
 * jitter's run). */
static void add_flags(halo_sweep_cmd *c, int epochs, bool depth0)
{
    char e[16];
    snprintf(e, sizeof e, "%d", epochs);
    const char *a[] = {"--epochs", e, "--batch", "128", "--fanouts", "10,10", "--hidden", "128",
                       "--depth", depth0 ? "0" : "2", "--sampler-threads", "1", "--seed", "1",
                       NULL};
    for (int i = 0; a[i] != NULL; i++) {
        halo_sweep_cmd_add(c, a[i]);
    }
}

/* Runs c with its output in dir/log, and frees it. */
static int spawn(halo_sweep_cmd *c, const char *dir, const char *log)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, log);
    int rc = halo_sweep_spawn(c, path, CROWD_TIMEOUT);
    halo_sweep_cmd_free(c);
    if (rc < 0) {
        halo_error_prefix(rc, "calibrate: crowding probe (log %s)", path);
    }
    return rc;
}

/* A command of argv (NULL-terminated), then the run's flags and --metrics out when epochs > 0;
 * with tl, at depth 0 and --timeline tl. */
static void command(halo_sweep_cmd *c, const char *const *argv, int epochs, const char *out,
                    const char *tl)
{
    halo_sweep_cmd_init(c);
    for (int i = 0; argv[i] != NULL; i++) {
        halo_sweep_cmd_add(c, argv[i]);
    }
    if (epochs > 0) {
        add_flags(c, epochs, tl != NULL);
        halo_sweep_cmd_add(c, "--metrics");
        halo_sweep_cmd_add(c, out);
    }
    if (tl != NULL) {
        halo_sweep_cmd_add(c, "--timeline");
        halo_sweep_cmd_add(c, tl);
    }
}

/* Runs argv (NULL-terminated) with its output in dir/log. */
static int run(const char *const *argv, const char *dir, const char *log)
{
    halo_sweep_cmd c;
    command(&c, argv, 0, NULL, NULL);
    return spawn(&c, dir, log);
}

/* One training of pdir on np ranks, its metrics into out (and with tl, at depth 0, its
 * timeline into tl). */
static int train(const char *exe, const char *pdir, int np, int epochs, const char *dir,
                 const char *out, const char *tl, const char *log)
{
    char n[16], tmo[32];
    snprintf(n, sizeof n, "%d", np);
    snprintf(tmo, sizeof tmo, "%.0f", CROWD_TIMEOUT - 10);
    const char *a[] = {"mpirun", "--oversubscribe", "--bind-to", "none", "--timeout", tmo, "-np",
                       n, exe, "train", pdir, "--no-table", "--eval", "none", NULL};
    halo_sweep_cmd c;
    command(&c, a, epochs, out, tl);
    c.mpi = true;
    return spawn(&c, dir, log);
}

/* halo sim of the same training on profile prof, np trainers on one machine (tl: as train). */
static int simulate(const char *exe, const char *pdir, int np, int epochs, const char *prof,
                    const char *dir, const char *out, const char *tl, const char *log)
{
    char n[16];
    snprintf(n, sizeof n, "%d", np);
    const char *a[] = {exe, "sim", pdir, "-q", "--cluster", prof, "--machines", "1",
                       "--trainers", n, NULL};
    halo_sweep_cmd c;
    command(&c, a, epochs, out, tl);
    return spawn(&c, dir, log);
}

/* measured / simulated CPU of each stage (0 where either is 0). */
static int ratios(const char *run, const char *sim, double r[HALO_CROWD_N])
{
    halo_sim_comparison cmp;
    HALO_CHECK(halo_sim_compare_files(run, sim, &cmp));
    if (cmp.mismatches > 0) {
        return halo_errorf(HALO_EIO, "calibrate: crowding probe: the simulation's counts differ "
                           "from the run's (%s)", cmp.first_mismatch);
    }
    const int k[HALO_CROWD_N] = {HALO_SIM_T_SAMPLE_CPU, HALO_SIM_T_FETCH_CPU,
                                 HALO_SIM_T_COMPUTE_CPU};
    for (int s = 0; s < HALO_CROWD_N; s++) {
        double m = cmp.measured[k[s]], v = cmp.simulated[k[s]];
        r[s] = m > 0 && v > 0 ? m / v : 0;
    }
    return 0;
}

/* The jitter's runs (halo_crowd_result.jitter): pdir trained at depth 0 on np ranks, each run
 * with its timeline, against halo sim of the same on prof; the median over the runs. */
static int jitter(const char *exe, const char *dir, bool quick, const char *prof,
                  const char *pdir, int np, halo_crowd_result *out)
{
    int epochs = quick ? 4 : 8, runs = quick ? 1 : HALO_CROWD_JITTER_RUNS;
    char run_m[4300], sim_m[4300], run_t[4300], sim_t[4300];
    snprintf(run_m, sizeof run_m, "%s/jitter-run.jsonl", dir);
    snprintf(sim_m, sizeof sim_m, "%s/jitter-sim.jsonl", dir);
    snprintf(run_t, sizeof run_t, "%s/jitter-run.tl", dir);
    snprintf(sim_t, sizeof sim_t, "%s/jitter-sim.tl", dir);
    HALO_CHECK(simulate(exe, pdir, np, epochs, prof, dir, sim_m, sim_t, "sim.log"));
    halo_timeline_event *sim_ev = NULL;
    int64_t nsim = 0;
    HALO_CHECK(halo_timeline_read(sim_t, &sim_ev, &nsim));
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        halo_timeline_event *run_ev = NULL;
        int64_t nrun = 0;
        rc = train(exe, pdir, np, epochs, dir, run_m, run_t, "train.log");
        if (rc == 0) {
            rc = halo_timeline_read(run_t, &run_ev, &nrun);
        }
        if (rc == 0) {
            out->jitter_runs[i] = halo_sim_calib_jitter(run_ev, nrun, sim_ev, nsim, np);
            out->njitter = i + 1;
        }
        halo_free(run_ev);
    }
    halo_free(sim_ev);
    if (rc == 0) { /* the median sorts its array: jitter_runs keeps the runs' order */
        double fig[HALO_CROWD_JITTER_RUNS];
        memcpy(fig, out->jitter_runs, (size_t)runs * sizeof fig[0]);
        out->jitter = halo_sim_calib_sig4(halo_median_f64(fig, runs));
    }
    return rc;
}

static int probe(const char *exe, const char *dir, bool quick, const halo_sim_profile *p,
                 halo_crowd_result *out)
{
    int epochs = quick ? 4 : 8, turns = quick ? 1 : 3;
    int cores = p->cores > 0 ? p->cores : 1;
    out->ranks[0] = cores;
    out->ranks[1] = 2 * cores;
    /* the profile without penalties: what the crowded run pays beyond the model's sharing */
    halo_sim_profile z = *p;
    z.oversub_penalty = z.oversub_warm = z.oversub_gemm = z.oversub_sample = 0;
    z.crowd_sample = z.crowd_fetch = z.crowd_compute = z.crowd_ranks = 0;
    z.jitter = 0; /* the model's own work, without draws, for the jitter's run */
    if (z.name[0] == '\0') { /* a profile being measured is named when it is written */
        snprintf(z.name, sizeof z.name, "calibrating");
    }
    char prof[4200], graph[4200], pdir[2][4200], run_m[4300], sim_m[2][4300];
    snprintf(prof, sizeof prof, "%s/zero.lua", dir);
    snprintf(graph, sizeof graph, "%s/g", dir);
    HALO_CHECK(halo_sim_profile_write(prof, &z, "the profile being calibrated, every "
                                      "oversubscription penalty at 0 (crowding probe)"));
    const char *gen[] = {exe, "gen", "--preset", "products", "--scale", "0.02", "-o", graph,
                         NULL};
    HALO_CHECK(run(gen, dir, "gen.log"));
    for (int i = 0; i < 2; i++) {
        char np[16];
        snprintf(np, sizeof np, "%d", out->ranks[i]);
        snprintf(pdir[i], sizeof pdir[i], "%s/p%d", dir, out->ranks[i]);
        const char *part[] = {exe, "partition", graph, "-p", np, "-o", pdir[i], NULL};
        HALO_CHECK(run(part, dir, "partition.log"));
        snprintf(sim_m[i], sizeof sim_m[i], "%s/sim%d.jsonl", dir, out->ranks[i]);
        HALO_CHECK(simulate(exe, pdir[i], out->ranks[i], epochs, prof, dir, sim_m[i], NULL,
                            "sim.log"));
    }
    double pens[HALO_CROWD_N][HALO_CROWD_MAX_TURNS];
    for (int t = 0; t < turns; t++) {
        for (int i = 0; i < 2; i++) {
            snprintf(run_m, sizeof run_m, "%s/run%d-%d.jsonl", dir, out->ranks[i], t);
            HALO_CHECK(train(exe, pdir[i], out->ranks[i], epochs, dir, run_m, NULL,
                             "train.log"));
            HALO_CHECK(ratios(run_m, sim_m[i], out->ratio[t][i]));
        }
        for (int s = 0; s < HALO_CROWD_N; s++) {
            double lo = out->ratio[t][0][s], hi = out->ratio[t][1][s];
            pens[s][t] = lo > 0 && hi > 0 ? hi / lo - 1 : 0;
        }
        out->turns = t + 1;
    }
    for (int s = 0; s < HALO_CROWD_N; s++) {
        double m = halo_median_f64(pens[s], turns);
        out->pen[s] = m > 0 ? halo_sim_calib_sig4(m) : 0;
    }
    return cores > 1 ? jitter(exe, dir, quick, prof, pdir[0], cores, out) : 0;
}

int halo_crowd_measure(const char *exe, const char *tmpdir, bool quick,
                       const halo_sim_profile *p, halo_crowd_result *out)
{
    memset(out, 0, sizeof *out);
    double t0 = halo_now();
    char dir[1100];
    if ((size_t)snprintf(dir, sizeof dir, "%s/halo-crowd.XXXXXX", tmpdir) >= sizeof dir) {
        return halo_errorf(HALO_EUSAGE, "calibrate: TMPDIR too long: %s", tmpdir);
    }
    if (mkdtemp(dir) == NULL) {
        return halo_errorf(HALO_EIO, "calibrate: cannot create a directory under %s: %s", tmpdir,
                           strerror(errno));
    }
    int rc = probe(exe, dir, quick, p, out);
    if (rc == 0) {
        halo_rmtree(dir);
    } else { /* the error names a log in it */
        halo_info("calibrate: the crowding probe's files are left in %s", dir);
    }
    out->seconds = halo_now() - t0;
    return rc;
}
