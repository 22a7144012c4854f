/* halo calibrate: measures this machine (sim/calibrate.c) and the MPI links between two local
 * ranks (a ping-pong through comm/, run under mpirun as child processes), writes a profile. */
#include "cli/cli.h"
#include "cli/calibrate_fetch.h"
#include "cli/calibrate_probe.h"

#include "comm/comm.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/host.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/sort.h"
#include "core/timer.h"
#include "sim/calibrate.h"
#include "sim/fit.h"
#include "sim/profile.h"
#include "sweep/crowd.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Pairs of probes (a core per rank, then 2 x cores ranks) whose median is the
 * oversubscription penalty. */
#define PEN_ROUNDS 7

/* ---- the parent side ---- */

/* Full path of an executable found on $PATH into out; false when there is none. */
static bool find_on_path(const char *name, char *out, size_t size)
{
    const char *path = getenv("PATH");
    for (const char *s = path ? path : ""; *s;) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n > 0 && (size_t)snprintf(out, size, "%.*s/%s", (int)n, s, name) < size &&
            access(out, X_OK) == 0) {
            return true;
        }
        s = e ? e + 1 : s + n;
    }
    return false;
}

/* The last line of a file with words in it (for a child's failure; mpirun frames its messages
 * with lines of dashes), into out. */
static void last_line(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        size_t l = strlen(line);
        if (l > 0 && strspn(line, "- \t") < l) {
            l = l < size ? l : size - 1;
            memcpy(out, line, l);
            out[l] = '\0';
        }
    }
    if (f != NULL) {
        fclose(f);
    }
}

/* What a 2-rank probe measures besides the links: nothing, the units of step work (the
 * oversubscription's base), or the units and the fetch probe. */
enum { PROBE_LINKS, PROBE_UNITS, PROBE_FETCH };

/* Runs the probe under `mpirun -np np` (TCP only when tcp) and reads its figures: the link
 * figures into f with 2 ranks (and what `probe` adds), the seconds per exchange into *xchg
 * with more. */
static int run_probe(const char *mpirun, const char *exe, const char *dir, bool tcp, bool quick,
                     int probe, int np, mpi_figs *f, double *xchg, double *unit, double *poll,
                     double *ratio)
{
    char file[600], log[600], nps[16];
    const char *name = tcp ? "tcp" : np > 2 ? "oversub" : "shm";
    snprintf(file, sizeof file, "%s/%s.txt", dir, name);
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    snprintf(nps, sizeof nps, "%d", np);
    const char *what = tcp ? "TCP (--mca btl tcp,self)"
                       : np > 2 ? "shared memory with 2 x cores ranks"
                                : "shared memory";
    char *args[24];
    int n = 0;
    const char *fixed[] = {"mpirun", "--timeout", "60", "--oversubscribe", "--bind-to", "none",
                           "-np",    nps,         NULL};
    for (int i = 0; fixed[i] != NULL; i++) {
        args[n++] = (char *)fixed[i];
    }
    if (tcp) {
        const char *t[] = {"--mca", "pml", "ob1", "--mca", "btl", "tcp,self", NULL};
        for (int i = 0; t[i] != NULL; i++) {
            args[n++] = (char *)t[i];
        }
    }
    args[n++] = (char *)exe;
    args[n++] = (char *)"calibrate";
    args[n++] = (char *)"--probe-mpi";
    args[n++] = file;
    if (quick) {
        args[n++] = (char *)"--quick";
    }
    if (probe != PROBE_LINKS) {
        args[n++] = (char *)(probe == PROBE_FETCH ? "--probe-fetch" : "--probe-units");
    }
    args[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int e = posix_spawn(&pid, mpirun, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        return halo_errorf(HALO_EIO, "calibrate: cannot start %s: %s", mpirun, strerror(e));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char line[300];
        last_line(log, line, sizeof line);
        return halo_errorf(HALO_EMPI,
                           "calibrate: the MPI probe over %s failed (mpirun %s %d)%s%s (or give "
                           "--no-mpi)",
                           what, WIFEXITED(status) ? "exit" : "signal",
                           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                           line[0] ? ": " : "", line);
    }
    FILE *in = fopen(file, "r");
    int got = 0;
    char key[32];
    double v;
    while (in != NULL && fscanf(in, "%31s %lf", key, &v) == 2) {
        static const char *const fk[HALO_CALIB_FETCH_FIGS] = {"cpu_s", "inputs", "rows", "msgs",
                                                              "table_bytes"};
        double *dst = strcmp(key, "lat_s") == 0         ? &f->lat_s
                      : strcmp(key, "bw_Bps") == 0      ? &f->bw
                      : strcmp(key, "overhead_s") == 0  ? &f->overhead_s
                      : strcmp(key, "allreduce_s") == 0 ? &f->allreduce_s
                      : strcmp(key, "allreduce_big_s") == 0 ? &f->allreduce_big_s
                      : strcmp(key, "xchg_s") == 0      ? xchg
                      : strcmp(key, "poll_frac") == 0   ? poll
                                                        : NULL;
        for (int k = 0; k < HALO_UNIT_PARTS && dst == NULL; k++) {
            dst = strcmp(key, halo_calib_unit_keys[k]) == 0 ? (f != NULL ? &f->unit[k] : &unit[k])
                                                             : NULL;
        }
        for (int k = 0; k < HALO_UNIT_PARTS && dst == NULL && ratio != NULL; k++) {
            dst = strcmp(key, halo_calib_ratio_keys[k]) == 0 ? &ratio[k] : NULL;
        }
        for (int i = 0; i < HALO_CALIB_FETCH_RUNS * HALO_CALIB_FETCH_FIGS && f != NULL &&
                        dst == NULL;
             i++) {
            char k[48];
            snprintf(k, sizeof k, "%s_%s", halo_calib_fetch_runs[i / HALO_CALIB_FETCH_FIGS],
                     fk[i % HALO_CALIB_FETCH_FIGS]);
            dst = strcmp(key, k) == 0 ? &f->fetch[i / HALO_CALIB_FETCH_FIGS]
                                                 [i % HALO_CALIB_FETCH_FIGS]
                                      : NULL;
        }
        if (dst != NULL && v > 0) {
            *dst = v;
            got++;
        }
    }
    if (in != NULL) {
        fclose(in);
    }
    /* poll_frac: 0 when nobody waited */
    int want = 4 + (probe != PROBE_LINKS ? HALO_UNIT_PARTS : 0) +
               (probe == PROBE_FETCH ? HALO_CALIB_FETCH_RUNS * HALO_CALIB_FETCH_FIGS : 0);
    if (got < (np == 2 ? want : 1 + HALO_UNIT_PARTS * (ratio != NULL ? 2 : 1))) {
        return halo_errorf(HALO_EMPI, "calibrate: the MPI probe over %s wrote no figures", what);
    }
    return 0;
}

/* Refuses an output path that cannot be written before minutes of measuring. */
static int check_out(const char *path)
{
    if (halo_is_dir(path)) {
        return halo_errorf(HALO_EIO, "calibrate: -o %s is a directory, expected a file name", path);
    }
    const char *slash = strrchr(path, '/');
    if (slash != NULL && slash != path) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (!halo_is_dir(dir)) {
            return halo_errorf(HALO_EIO, "calibrate: -o %s: no directory %s", path, dir);
        }
        if (access(dir, W_OK) != 0) {
            return halo_errorf(HALO_EIO, "calibrate: -o %s: directory %s is not writable", path,
                               dir);
        }
    }
    return halo_error_prefix(halo_output_file_check(path, "profile", HALO_PROFILE_SIG, true),
                             "calibrate -o");
}

/* Bytes/s of the wide rows of a fetch probe run s (sums: CPU, inputs, rows, messages), its
 * messages, rows' fixed part and part per input node left out; 0 when it did not run. */
static double kept_rate(const double *s, const mpi_figs *f, const halo_sim_profile *p)
{
    double y = s[0] - s[3] * f->overhead_s - s[2] * p->gather_row_s - s[1] * p->fetch_node_s;
    return s[2] > 0 && y > 0 ? s[2] * HALO_CALIB_FETCH_WIDE * (double)sizeof(float) / y : 0;
}

/* cpu.fetch_node_ns and cpu.fetch_GBps from the fetch probe's sums at its two row widths on
 * the large table, then cpu.fetch_warm_GBps from its run on a small one (below):
 * its CPU, less the messages and the rows' fixed cost (gather_row_ns), is a part per input node
 * and a part per byte of the rows gathered, received or served; two widths give both. */
static void fetch_constants(const mpi_figs *f, halo_sim_profile *p)
{
    const int dim[2] = {HALO_CALIB_FETCH_NARROW, HALO_CALIB_FETCH_WIDE};
    double y[2], in[2], by[2];
    for (int w = 0; w < 2; w++) {
        const double *s = f->fetch[w];
        if (!(s[1] > 0) || !(s[2] > 0)) {
            return; /* not measured */
        }
        y[w] = s[0] - s[3] * f->overhead_s - s[2] * p->gather_row_s;
        in[w] = s[1];
        by[w] = s[2] * dim[w] * (double)sizeof(float);
    }
    double det = in[0] * by[1] - in[1] * by[0];
    double a = det != 0 ? (y[0] * by[1] - y[1] * by[0]) / det : 0;
    double b = det != 0 ? (in[0] * y[1] - in[1] * y[0]) / det : 0;
    if (a < 0 || !(b > 0)) { /* noise: all of it per byte of the wide rows */
        a = 0;
        b = y[1] / by[1];
    }
    if (!(b > 0)) {
        return;
    }
    p->fetch_node_s = halo_sim_calib_sig4(a);
    p->fetch_bw = halo_sim_calib_sig4(1.0 / b);
    p->fetch_cold_bytes = f->fetch[1][4];
    halo_info("calibrate: the runtime's fetch on 2 ranks: %.4g ns CPU per input node with "
              "%d-byte rows, %.4g ns with %d-byte rows: %.4g ns per input node + rows at "
              "%.4g GB/s (gathers alone: %.4g GB/s), %.3g MiB of rows per rank",
              1e9 * f->fetch[0][0] / in[0], dim[0] * 4, 1e9 * f->fetch[1][0] / in[1], dim[1] * 4,
              p->fetch_node_s * 1e9, p->fetch_bw / 1e9, p->gather_bw / 1e9,
              p->fetch_cold_bytes / 1048576);
    /* the wide rows on a table that stays in the caches: the same part per input node, the
       rest per byte */
    double bw = kept_rate(f->fetch[2], f, p);
    const double *w = f->fetch[2];
    if (!(bw > 0) || !(w[4] > 0) || !(w[4] < p->fetch_cold_bytes)) {
        return; /* not measured */
    }
    /* not faster than the large table (noise): the large table's rate at every size */
    p->fetch_warm_bw = halo_sim_calib_sig4(bw > p->fetch_bw ? bw : p->fetch_bw);
    p->fetch_warm_bytes = w[4];
    halo_info("calibrate: the same fetch from %.3g MiB of rows per rank kept in the caches: "
              "%.4g ns CPU per input node, rows at %.4g GB/s",
              w[4] / 1048576, 1e9 * w[0] / w[1], bw / 1e9);
    /* the large table, batches back to back: between the evicted rate and the small table's */
    double kb = kept_rate(f->fetch[3], f, p);
    if (!(kb > 0) || f->fetch[3][4] != p->fetch_cold_bytes) {
        return; /* not measured */
    }
    kb = kb < p->fetch_bw ? p->fetch_bw : kb > p->fetch_warm_bw ? p->fetch_warm_bw : kb;
    p->fetch_kept_bw = halo_sim_calib_sig4(kb);
    halo_info("calibrate: the fetch from %.3g MiB of rows per rank, batches back to back: "
              "%.4g ns CPU per input node, rows at %.4g GB/s (%.0f%% of the way from the "
              "evicted rate to the small table's)",
              f->fetch[3][4] / 1048576, 1e9 * f->fetch[3][0] / f->fetch[3][1], kb / 1e9,
              p->fetch_warm_bw > p->fetch_bw
                  ? 100.0 * (1 / p->fetch_bw - 1 / kb) / (1 / p->fetch_bw - 1 / p->fetch_warm_bw)
                  : 100.0);
}

static double unit_sum(const double cpu[HALO_UNIT_PARTS])
{
    double s = 0;
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        s += cpu[k];
    }
    return s;
}

/* The probes that give the oversubscription penalties. */
typedef struct pen_probe {
    const char *mpirun, *exe, *dir;
    bool quick;
    int over;                           /* ranks of the oversubscribed probe */
    double alone[HALO_UNIT_PARTS];      /* the unit's parts on this process alone */
} pen_probe;

/* The oversubscription penalties of the unit's parts (pen[k]): the median over PEN_ROUNDS
 * oversubscribed jobs of each job's own paired ratio (paired(): half the ranks against all of
 * them, in one job) less 1; and the co-run factors (corun[k]): 2 ranks (a core each) against
 * the unit alone, from a 2-rank job run before each (the first round's jobs are base/over and
 * its ratio, already run). */
static int penalties(const pen_probe *pp, const double base[HALO_UNIT_PARTS],
                     const double ratio[HALO_UNIT_PARTS], double pen[HALO_UNIT_PARTS],
                     double corun[HALO_UNIT_PARTS])
{
    static const char *const what[HALO_UNIT_PARTS] = {"sampling", "gathers", "GEMMs",
                                                      "gathers from a table kept in the caches"};
    double pens[HALO_UNIT_PARTS][PEN_ROUNDS], runs[HALO_UNIT_PARTS][PEN_ROUNDS];
    int npen = 0;
    for (int r = 0; r < PEN_ROUNDS; r++) {
        mpi_figs s2;
        memset(&s2, 0, sizeof s2);
        double x2 = 0, u2[HALO_UNIT_PARTS] = {0}, p2 = 0, q2[HALO_UNIT_PARTS] = {0};
        if (r == 0) {
            memcpy(s2.unit, base, sizeof s2.unit);
            memcpy(q2, ratio, sizeof q2);
        } else {
            HALO_CHECK(run_probe(pp->mpirun, pp->exe, pp->dir, false, pp->quick, PROBE_UNITS, 2,
                                 &s2, NULL, NULL, NULL, NULL));
            HALO_CHECK(run_probe(pp->mpirun, pp->exe, pp->dir, false, pp->quick, PROBE_LINKS,
                                 pp->over, NULL, &x2, u2, &p2, q2));
        }
        const double *b = unit_sum(s2.unit) > 0 ? s2.unit : pp->alone;
        bool ok = true;
        for (int k = 0; k < HALO_UNIT_PARTS; k++) {
            ok = ok && b[k] > 0 && q2[k] > 0;
        }
        for (int k = 0; k < HALO_UNIT_PARTS && ok; k++) {
            pens[k][npen] = q2[k] - 1;
            runs[k][npen] = pp->alone[k] > 0 ? b[k] / pp->alone[k] - 1 : 0;
        }
        npen += ok;
    }
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        char each[128] = "";
        for (int j = 0, at = 0; j < npen && at < (int)sizeof each; j++) {
            at += snprintf(each + at, sizeof each - (size_t)at, "%s%.3g", j ? ", " : "",
                           pens[k][j]);
        }
        pen[k] = npen > 0 ? halo_median_f64(pens[k], npen) : 0;
        pen[k] = pen[k] > 0 ? halo_sim_calib_sig4(pen[k]) : 0;
        halo_info("calibrate: oversubscription penalty of %s %.3g, the median of %d jobs' "
                  "paired probes (%s)", what[k], pen[k], npen, each);
        corun[k] = npen > 0 ? halo_median_f64(runs[k], npen) : 0;
        corun[k] = corun[k] > 0 ? halo_sim_calib_sig4(corun[k]) : 0;
    }
    halo_info("calibrate: sampling with every core busy (2 ranks) runs %.3g slower than alone, "
              "the median of %d probes", corun[HALO_UNIT_SAMPLE], npen);
    return 0;
}

/* This very binary's path (the probes run it as child processes). */
static int self_exe(char *exe, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", exe, size - 1);
    if (n <= 0) {
        return halo_errorf(HALO_EIO, "calibrate: cannot find this binary (/proc/self/exe)");
    }
    exe[n] = '\0';
    return 0;
}

/* Where the probes make their temporary directories: $TMPDIR, else /tmp. */
static const char *tmp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp != NULL && tmp[0] ? tmp : "/tmp";
}

/* Measures the links with two probes (shared memory, TCP) into p. */
static int measure_links(const char *mpirun, bool quick, halo_sim_profile *p)
{
    char exe[1024];
    HALO_CHECK(self_exe(exe, sizeof exe));
    const char *tmp = tmp_dir();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/halo-calib.XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        return halo_errorf(HALO_EIO, "calibrate: cannot create a temporary directory: %s",
                           strerror(errno));
    }
    double t0 = halo_now();
    mpi_figs shm, tcp;
    memset(&shm, 0, sizeof shm);
    memset(&tcp, 0, sizeof tcp);
    pen_probe pp = {mpirun, exe, dir, quick, 2 * p->cores > 2 ? 2 * p->cores : 4, {0}};
    halo_calib_unit_alone(quick ? 16 : 48, pp.alone);
    double xchg = 0, unit_over[HALO_UNIT_PARTS] = {0}, poll = 0, pen[HALO_UNIT_PARTS] = {0};
    double corun[HALO_UNIT_PARTS] = {0}, ratio[HALO_UNIT_PARTS] = {0};
    int over = pp.over;
    int rc = run_probe(mpirun, exe, dir, false, quick, PROBE_FETCH, 2, &shm, NULL, NULL, NULL,
                       NULL);
    if (rc == 0) {
        halo_info("calibrate: MPI over shared memory: latency %.3g us, %.4g GB/s, %.3g us per "
                  "message, allreduce %.3g us, of %d KiB %.3g us (%.1f s)",
                  shm.lat_s * 1e6, shm.bw / 1e9, shm.overhead_s * 1e6, shm.allreduce_s * 1e6,
                  (int)(HALO_CALIB_AR_FLOATS * sizeof(float) / 1024), shm.allreduce_big_s * 1e6,
                  halo_now() - t0);
        rc = run_probe(mpirun, exe, dir, true, quick, PROBE_LINKS, 2, &tcp, NULL, NULL, NULL, NULL);
    }
    if (rc == 0) {
        halo_info("calibrate: MPI over TCP: latency %.3g us, %.4g GB/s (%.1f s)", tcp.lat_s * 1e6,
                  tcp.bw / 1e9, halo_now() - t0);
        rc = run_probe(mpirun, exe, dir, false, quick, PROBE_LINKS, over, NULL, &xchg, unit_over,
                       &poll, ratio);
    }
    if (rc == 0) {
        halo_info("calibrate: MPI with %d ranks on %d cores: %.3g us per exchange; a unit of "
                  "step work %.4g ms of CPU against %.4g ms with 2 ranks and %.4g ms alone; a rank "
                  "waiting for the others polls %.3g of a core (%.1f s)", over, p->cores,
                  xchg * 1e6, unit_sum(unit_over) * 1e3, unit_sum(shm.unit) * 1e3,
                  unit_sum(pp.alone) * 1e3, poll, halo_now() - t0);
        rc = penalties(&pp, shm.unit, ratio, pen, corun);
    }
    halo_rmtree(dir);
    HALO_CHECK(rc);
    p->shm_lat_s = halo_sim_calib_sig4(shm.lat_s);
    p->shm_bw = halo_sim_calib_sig4(shm.bw);
    p->net_lat_s = halo_sim_calib_sig4(tcp.lat_s);
    p->nic_bw = halo_sim_calib_sig4(tcp.bw);
    p->nics = 1;
    p->msg_overhead_s = halo_sim_calib_sig4(shm.overhead_s);
    /* two ranks: the allreduce is one exchange; what it adds beyond the latency, per step */
    double ar = shm.allreduce_s / 2 - shm.lat_s;
    p->allreduce_lat_s = halo_sim_calib_sig4(ar > 0 ? ar : 0);
    /* the large allreduce against the one of a float: the seconds its bytes add */
    double ar_bytes_s = shm.allreduce_big_s - shm.allreduce_s;
    p->allreduce_bw = ar_bytes_s > 0 ? halo_sim_calib_sig4((double)HALO_CALIB_AR_FLOATS *
                                                           sizeof(float) / ar_bytes_s)
                                     : 0;
    /* the model charges an exchange of P local ranks ceil(log2 P) + 1 latencies (the count
     * all-to-all's rounds, then the payloads): the latency that reproduces the measured one */
    p->oversub_lat_s = halo_sim_calib_sig4(xchg / (ceil(log2((double)over)) + 1));
    fetch_constants(&shm, p);
    /* 2 x cores ranks against a core per rank (2 ranks: on this probe's 2-core machines, the
       cores; elsewhere the nearest it runs): what the processes beyond the cores cost the
       work itself, apart from what sharing the memory with a busy neighbour costs; one
       process beyond the cores per core is cpu_rate's excess 1 */
    p->oversub_penalty = pen[HALO_UNIT_GATHER];
    p->oversub_warm = pen[HALO_UNIT_GATHER_WARM];
    p->oversub_gemm = pen[HALO_UNIT_GEMM];
    p->oversub_sample = pen[HALO_UNIT_SAMPLE];
    p->corun_sample = corun[HALO_UNIT_SAMPLE];
    p->poll_frac = halo_sim_calib_sig4(poll);
    return 0;
}

/* halo calibrate --from-metrics M --base B -o OUT: B fitted to the run M (sim/fit.h). */
static int fit_main(const char *from, const char *basef, int rounds, const char *out)
{
    if (from == NULL || basef == NULL || rounds < 1 || rounds > 20) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "calibrate: --from-metrics and --base go "
                                         "together, --rounds in 1..20"));
    }
    int rc = check_out(out);
    halo_sim_profile p;
    rc = rc < 0 ? rc : halo_sim_profile_load(basef, &p);
    rc = rc < 0 ? rc : halo_sim_fit(from, rounds, &p, stderr);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    char comment[9000];
    snprintf(comment, sizeof comment,
             "%s fitted by `halo calibrate --from-metrics %s --base %s --rounds %d`: the\n"
             "per-stage fit factors (section fit, bounded to 0.5..2) were set so that halo sim\n"
             "reproduces those measured runs; the measured constants are unchanged; one\n"
             "machine of %d trainers as it ran (override with halo sim --machines/--trainers).",
             p.name, from, basef, rounds, p.trainers);
    size_t nl = strlen(p.name);
    if (nl + 7 < sizeof p.name && (nl < 7 || strcmp(p.name + nl - 7, "-fitted") != 0)) {
        strcat(p.name, "-fitted");
    }
    rc = halo_sim_profile_write(out, &p, comment);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("%s: profile %s fitted to %s\n", out, p.name, from);
    return 0;
}

/* halo calibrate --graph PDIR --base B -o OUT: B with its graph-dependent constants measured
 * on the partition PDIR (sampling and gathers of its rows; the block's stay B's). */
static int graph_main(const char *graph, const char *basef, bool quick, const char *out)
{
    halo_sim_profile p;
    int rc = halo_sim_profile_load(basef, &p);
    halo_sim_calib_opts co = {.seconds = quick ? 0.5 : 5.0, .quick = quick, .progress = true};
    double t0 = halo_now();
    rc = rc < 0 ? rc : halo_sim_calib_graph(&co, graph, &p);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_info("calibrate: on %s: sampler %.4g ns per edge, %.4g ns per node, gather %.4g GB/s "
              "(%.1f s; the block's constants are the base profile's)", graph,
              p.sample_edge_s * 1e9, p.sample_node_s * 1e9, p.gather_bw / 1e9, halo_now() - t0);
    char comment[9000];
    snprintf(comment, sizeof comment,
             "%s with its sampling and gather constants measured on the partition\n"
             "%s by `halo calibrate --graph %s --base %s%s`.",
             p.name, graph, graph, basef, quick ? " --quick" : "");
    rc = halo_sim_profile_write(out, &p, comment);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("%s: profile %s measured on %s\n", out, p.name, graph);
    return 0;
}

/* Appends x (or x/y when y is given) to the comma-separated list of figures in buf, as room
 * allows. */
static void add_figure(char *buf, size_t size, double x, const double *y)
{
    size_t at = strlen(buf);
    if (at + 1 >= size) {
        return;
    }
    const char *sep = at > 0 ? ", " : "";
    if (y != NULL) {
        snprintf(buf + at, size - at, "%s%.3g/%.3g", sep, x, *y);
    } else {
        snprintf(buf + at, size - at, "%s%.3g", sep, x);
    }
}

/* The crowding probe (sweep/crowd.h) into p's crowd_* fields. */
static int measure_crowd(bool quick, halo_sim_profile *p)
{
    char exe[1024];
    HALO_CHECK(self_exe(exe, sizeof exe));
    const char *tmp = tmp_dir();
    halo_info("calibrate: crowding probe: training with %d and %d ranks on %d cores, turn by "
              "turn, against halo sim without penalties", p->cores, 2 * p->cores, p->cores);
    halo_crowd_result r;
    HALO_CHECK(halo_crowd_measure(exe, tmp, quick, p, &r));
    static const char *const what[HALO_CROWD_N] = {"sampling", "fetch", "compute"};
    for (int s = 0; s < HALO_CROWD_N; s++) {
        char each[160] = "";
        for (int t = 0; t < r.turns; t++) {
            add_figure(each, sizeof each, r.ratio[t][0][s], &r.ratio[t][1][s]);
        }
        halo_info("calibrate: crowding penalty of the %s %.3g (measured / modelled CPU with %d "
                  "and %d ranks: %s)", what[s], r.pen[s], r.ranks[0], r.ranks[1], each);
    }
    char each[160] = "";
    for (int i = 0; i < r.njitter; i++) {
        add_figure(each, sizeof each, r.jitter_runs[i], NULL);
    }
    halo_info("calibrate: jitter of a CPU step %.3g, the median of %d runs at depth 0 on %d "
              "ranks that wait for the slowest beyond the modelled work (%s)", r.jitter,
              r.njitter, r.ranks[0], each);
    halo_info("calibrate: crowding probe done (%.1f s)", r.seconds);
    p->jitter = r.jitter;
    p->crowd_sample = r.pen[HALO_CROWD_SAMPLE];
    p->crowd_fetch = r.pen[HALO_CROWD_FETCH];
    p->crowd_compute = r.pen[HALO_CROWD_COMPUTE];
    p->crowd_ranks = r.ranks[1];
    return 0;
}

/* halo calibrate --crowd --base B -o OUT: B with its crowding penalties measured now. */
static int crowd_main(const char *basef, bool quick, const char *out)
{
    halo_sim_profile p;
    int rc = halo_sim_profile_load(basef, &p);
    rc = rc < 0 ? rc : measure_crowd(quick, &p);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    char comment[9000];
    snprintf(comment, sizeof comment,
             "%s with its crowding penalties (cpu.crowd_*) measured by\n"
             "`halo calibrate --crowd --base %s%s`.", p.name, basef, quick ? " --quick" : "");
    rc = halo_sim_profile_write(out, &p, comment);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("%s: profile %s with crowding penalties measured now\n", out, p.name);
    return 0;
}

/* Not measured (--no-mpi): round figures of a small Ethernet cluster, said so in the file. */
static void default_links(halo_sim_profile *p)
{
    p->shm_lat_s = 1e-6;
    p->shm_bw = 10e9;
    p->net_lat_s = 20e-6;
    p->nics = 1;
    p->nic_bw = 1.25e9;
    p->msg_overhead_s = 1e-6;
    p->allreduce_lat_s = 2e-6;
}

/* Names the measured profile p (--name, else the file's base name) and writes it to `out` with
 * a comment that says where, when and how it was measured. */
static int write_profile(const char *out, const char *name, bool quick, int repeat,
                         const char *graph, bool no_mpi, halo_sim_profile *p)
{
    /* the profile's name: --name, else the file's base name */
    const char *slash = strrchr(out, '/');
    const char *base = name != NULL ? name : slash ? slash + 1 : out;
    size_t bl = strlen(base);
    if (name == NULL && bl > 4 && strcmp(base + bl - 4, ".lua") == 0) {
        bl -= 4;
    }
    snprintf(p->name, sizeof p->name, "%.*s",
             (int)(bl < sizeof p->name ? bl : sizeof p->name - 1), base);
    char origin[700], comment[1400], passes[64] = "";
    if (repeat > 1) {
        snprintf(passes, sizeof passes, "; each figure the median of %d passes", repeat);
    }
    halo_host_origin(origin, sizeof origin, quick ? " --quick" : "", p->cores, time(NULL));
    snprintf(comment, sizeof comment,
             "%s%s.\n"
             "CPU and device figures: one core (one thread), device cpu; halo sim scales\n"
             "machines and trainers. network.shm_*: 2 local ranks over MPI shared memory;\n"
             "network.oversub_lat_us: exchanges of 2 x cores local ranks (oversubscribed);\n"
             "network.net_lat_us / nic_GBps: 2 local ranks over MPI TCP (--mca btl tcp,self),\n"
             "a stand-in for a NIC on a one-machine profile.%s%s",
             origin, passes,
             graph != NULL ? "\nSampling and gather constants: measured on part 0 of the "
                             "partition named in `graph` (the block's: ids of its own)."
                           : "\nSampling, block and gather constants: a random uniform graph "
                             "(generic; --graph PDIR measures them on yours).",
             no_mpi ? "\nNOT MEASURED (--no-mpi): every network field is a default "
                      "(1 us / 10 GB/s shm, 20 us / 1.25 GB/s net)."
                    : "");
    return halo_sim_profile_write(out, p, comment);
}

/* One pass of the measurements into p: the host's, the graph's (--graph), the links'. */
static int calibrate_pass(bool quick, const char *graph, bool no_mpi, const char *mpirun,
                          halo_sim_profile *p)
{
    memset(p, 0, sizeof *p);
    halo_sim_profile_defaults(p);
    halo_sim_calib_opts co = {.seconds = quick ? 0.5 : 5.0, .quick = quick, .progress = true};
    halo_info("calibrate: measuring this machine%s (one core at a time)",
              quick ? " (--quick)" : "");
    HALO_CHECK(halo_sim_calibrate_host(&co, p));
    if (graph != NULL) {
        HALO_CHECK(halo_sim_calib_graph(&co, graph, p));
        halo_info("calibrate: on %s: sampler %.4g ns per edge, %.4g ns per node, gather %.4g GB/s",
                  graph, p->sample_edge_s * 1e9, p->sample_node_s * 1e9, p->gather_bw / 1e9);
    }
    if (!no_mpi) {
        return measure_links(mpirun, quick, p);
    }
    default_links(p);
    return 0;
}

/* halo calibrate -o OUT: `repeat` passes of the measurements, their median, then the crowding
 * probe on it (it simulates the training it runs), written to out. */
static int measure_main(bool quick, int repeat, const char *graph, bool no_mpi,
                        const char *mpirun, const char *name, const char *out)
{
    double t0 = halo_now();
    halo_sim_profile ps[9], p;
    int rc = 0;
    for (int i = 0; i < repeat && rc == 0; i++) {
        if (repeat > 1) {
            halo_info("calibrate: pass %d of %d (each figure is the median of the passes)", i + 1,
                      repeat);
        }
        rc = calibrate_pass(quick, graph, no_mpi, mpirun, &ps[i]);
    }
    if (rc == 0) {
        halo_sim_profile_median(ps, repeat, &p);
        rc = no_mpi ? 0 : measure_crowd(quick, &p);
    }
    rc = rc < 0 ? rc : write_profile(out, name, quick, repeat, graph, no_mpi, &p);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("%s: profile %s written (%.1f s)\n", out, p.name, halo_now() - t0);
    return 0;
}

int halo_cmd_calibrate(int argc, char **argv)
{
    const char *out = NULL, *name = NULL, *probe = NULL, *from = NULL, *basef = NULL;
    const char *graph = NULL;
    int rounds = 4, repeat = 0;
    bool quick = false, no_mpi = false, probe_fetch = false, probe_units = false;
    bool crowd = false;
    const halo_opt opts[] = {
        {"output", 'o', HALO_OPT_STRING, &out, "PROFILE.lua", "profile file to write (required)"},
        {"quick", 0, HALO_OPT_FLAG, &quick, NULL, "measure for about 30 s instead of 1-3 min"},
        {"no-mpi", 0, HALO_OPT_FLAG, &no_mpi, NULL,
         "skip the MPI probes (links get defaults, marked as not measured in the file)"},
        {"name", 0, HALO_OPT_STRING, &name, "NAME", "profile name (default: the file's base name)"},
        {"from-metrics", 0, HALO_OPT_STRING, &from, "M.jsonl[,M2.jsonl...]",
         "fit the stage constants of --base to measured runs (halo train --metrics), together"},
        {"base", 0, HALO_OPT_STRING, &basef, "PROFILE.lua",
         "with --from-metrics: the profile to start from (e.g. written by halo calibrate)"},
        {"rounds", 0, HALO_OPT_INT, &rounds, "N", "with --from-metrics: fitting rounds (4)"},
        {"repeat", 0, HALO_OPT_INT, &repeat, "N",
         "measure everything N times (1..9) and write the median of each figure (default 3, "
         "1 with --quick)"},
        {"graph", 0, HALO_OPT_STRING, &graph, "PDIR",
         "measure sampling and row gathers on part 0 of this partition (the graph-dependent\n"
         "constants), as training runs them; with --base, only those, on that profile"},
        {"crowd", 0, HALO_OPT_FLAG, &crowd, NULL,
         "with --base: measure only the crowding penalties (training with 2 x cores ranks\n"
         "against a rank per core), on that profile"},
        {"probe-mpi", 0, HALO_OPT_STRING, &probe, "FILE",
         "internal: the probe run under mpirun (2 ranks: ping-pong; more: exchanges); "
         "writes its figures to FILE"},
        {"probe-fetch", 0, HALO_OPT_FLAG, &probe_fetch, NULL,
         "internal: with --probe-mpi and 2 ranks, also the units of step work and the fetch "
         "probe"},
        {"probe-units", 0, HALO_OPT_FLAG, &probe_units, NULL,
         "internal: with --probe-mpi and 2 ranks, also the units of step work"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo calibrate -o PROFILE.lua [--quick] [--no-mpi] [--graph PDIR] [--repeat N]\n"
        "       halo calibrate --graph PDIR --base PROFILE.lua -o PROFILE2.lua [--quick]\n"
        "       halo calibrate --crowd --base PROFILE.lua -o PROFILE2.lua [--quick]\n"
        "       halo calibrate --from-metrics M.jsonl --base PROFILE.lua -o FITTED.lua",
        "Measures this machine on one core (sampler, row gathers, copies, cache lookups, policy\n"
        "hooks, sgemm, aggregation, training-step overhead, Adam) and the MPI links between two\n"
        "local ranks (mpirun -np 2 over shared memory, then over TCP), and writes a cluster\n"
        "profile for halo sim: one machine, one trainer, device cpu (docs/profiles.md). It also\n"
        "times the kernel's time slice, how late a netem delay's sleep wakes and the CPU it\n"
        "costs its thread (netem.over_us, sleep_cpu_us), runs the runtime's own fetch on 2\n"
        "ranks at two row widths on a large table (cpu.fetch_node_ns, fetch_GBps), on 1 MiB\n"
        "per rank kept in the caches (fetch_warm_GBps) and on the large table batch after\n"
        "batch (fetch_kept_GBps), and with 2 x cores ranks the polling\n"
        "of waiting ranks and the CPU a unit of step work costs beyond a core per rank\n"
        "(cpu.poll_frac, oversub_penalty, oversub_warm). Last, the crowding probe: a small\n"
        "training (products-like x0.02, fanouts 10,10, hidden 128, depth 2) with a rank per\n"
        "core and with 2 x cores ranks, turn by turn, each stage's CPU against halo sim's\n"
        "without penalties; the crowded run's excess is cpu.crowd_sample, crowd_fetch and\n"
        "crowd_compute, used in place of oversub_*; the same training at depth 0, a rank per\n"
        "core, each rank's compute against halo sim's: the wait for the slowest, cpu.jitter\n"
        "(--crowd --base measures only these, on an existing profile). Needs mpirun on PATH\n"
        "unless --no-mpi is given.\n"
        "Progress goes to stderr.\n"
        "Compute is measured as a table of GEMM rates over the (rows, in, out) shapes of a\n"
        "layer. --graph PDIR measures the graph-dependent constants (sampling per edge and per\n"
        "node on frontiers of 512 nodes after the part's own rows gathered, as training runs\n"
        "it; gathers of the partition's own rows) on part 0 of PDIR; without it they come from\n"
        "a random uniform graph and halo sim says so. The block's constants are never the\n"
        "graph's (measured on ids of their own). Example: halo calibrate --graph PDIR --base\n"
        "experiments/clusters/this-machine.lua -o mine.lua\n"
        "With --from-metrics, replays the measured runs in the simulator (their summary records\n"
        "name the partition and flags) and sets the profile's per-stage fit factors (sample,\n"
        "fetch, compute, allreduce; bounded to 0.5..2) from each stage's measured / simulated\n"
        "CPU work where the runs record it (else its time), --rounds times; a stage the runs do\n"
        "not identify (under 5% of their epoch, or\n"
        "runs that disagree) keeps its factor.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos > 0) {
        return halo_cli_fail(
            halo_errorf(HALO_EUSAGE, "calibrate: unexpected argument '%s'", pos[0]));
    }
    if (probe != NULL) {
        return halo_calib_probe_main(argc, argv, probe, quick, probe_units, probe_fetch);
    }
    if (out == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "calibrate: -o PROFILE.lua is required"));
    }
    rc = check_out(out);
    if (rc == 0 && graph != NULL && basef != NULL && from == NULL) {
        return graph_main(graph, basef, quick, out);
    }
    if (rc == 0 && crowd && (basef == NULL || from != NULL || graph != NULL || no_mpi)) {
        rc = halo_errorf(HALO_EUSAGE, "calibrate: --crowd goes with --base PROFILE.lua only "
                                      "(not with --from-metrics, --graph or --no-mpi)");
    }
    if (rc == 0 && crowd) {
        return crowd_main(basef, quick, out);
    }
    if (rc == 0 && (from != NULL || basef != NULL)) {
        return fit_main(from, basef, rounds, out);
    }
    char mpirun[1024] = "";
    if (rc == 0 && !no_mpi && !find_on_path("mpirun", mpirun, sizeof mpirun)) {
        rc = halo_errorf(HALO_EIO, "calibrate: mpirun not found on PATH (install Open MPI, or "
                                   "give --no-mpi to skip the link measurements)");
    }
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    repeat = repeat != 0 ? repeat : quick ? 1 : 3;
    if (repeat < 1 || repeat > 9) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "calibrate: --repeat %d (want 1..9)",
                                         repeat));
    }
    return measure_main(quick, repeat, graph, no_mpi, mpirun, name, out);
}
