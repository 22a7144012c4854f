/* halo calibrate's MPI probe, the side that runs under mpirun (cli/calibrate_probe.h): a
 * ping-pong, a stream and allreduces between two local ranks through comm/, and with 2 x cores
 * ranks the exchanges, the polling, and units of step work alone and paired. */
#include "cli/calibrate_probe.h"
#include "cli/calibrate_fetch.h"
#include "cli/cli.h"

#include "comm/comm.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/sort.h"
#include "core/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the probe (runs under mpirun, two ranks) ---- */

/* Blocks of a probe measurement: each figure is the best block, so that a moment when the
 * other rank's core was busy (a loaded machine) does not count as the link's latency. */
#define PROBE_BLOCKS 10

/* Ping-pong of n-byte messages in PROBE_BLOCKS blocks of iters round trips; *rt gets the
 * seconds per round trip of the best block (rank 0's clock). */
static int pingpong(halo_comm *c, char *buf, int64_t n, int iters, double *rt)
{
    int me = halo_comm_rank(c);
    *rt = 1e30;
    for (int b = 0; b < PROBE_BLOCKS; b++) {
        HALO_CHECK(halo_comm_barrier(c));
        double t0 = halo_now();
        for (int i = 0; i < iters; i++) {
            if (me == 0) {
                HALO_CHECK(halo_comm_send(c, buf, n, 1, 1));
                HALO_CHECK(halo_comm_recv(c, buf, n, 1, 2));
            } else {
                HALO_CHECK(halo_comm_recv(c, buf, n, 0, 1));
                HALO_CHECK(halo_comm_send(c, buf, n, 0, 2));
            }
        }
        double t = (halo_now() - t0) / iters;
        *rt = t < *rt ? t : *rt;
    }
    return 0;
}

/* A stream of iters 8-byte messages from rank 0 to rank 1 and one acknowledgement, in
 * PROBE_BLOCKS blocks; *per gets the best block's seconds per message. */
static int stream(halo_comm *c, char *buf, int iters, double *per)
{
    int me = halo_comm_rank(c);
    *per = 1e30;
    for (int b = 0; b < PROBE_BLOCKS; b++) {
        HALO_CHECK(halo_comm_barrier(c));
        double t0 = halo_now();
        for (int i = 0; i < iters; i++) {
            HALO_CHECK(me == 0 ? halo_comm_send(c, buf, 8, 1, 3) : halo_comm_recv(c, buf, 8, 0, 3));
        }
        HALO_CHECK(me == 0 ? halo_comm_recv(c, buf, 8, 1, 4) : halo_comm_send(c, buf, 8, 0, 4));
        double t = (halo_now() - t0) / iters;
        *per = t < *per ? t : *per;
    }
    return 0;
}

/* Allreduces of n floats (the runtime's, in place) in PROBE_BLOCKS blocks of iters; *per: the
 * best block's seconds per allreduce, or with median set the median block's (the large
 * allreduce's: its time varies with where the buffers lie and what the caches hold, as the
 * training's does, and the median is what a run of many of them sees). */
static int allreduces(halo_comm *c, int64_t n, int iters, bool median, double *per)
{
    float *x = HALO_NEW(float, n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = 1.0f / (float)(1 + i % 7);
    }
    double blk[PROBE_BLOCKS];
    int rc = 0;
    for (int b = 0; b < PROBE_BLOCKS; b++) {
        HALO_TRY(halo_comm_barrier(c));
        double t0 = halo_now();
        for (int i = 0; i < iters; i++) {
            HALO_TRY(halo_comm_allreduce_sum_f32(c, x, n));
        }
        blk[b] = (halo_now() - t0) / iters;
    }
    double best = blk[0];
    for (int b = 1; b < PROBE_BLOCKS; b++) {
        best = blk[b] < best ? blk[b] : best;
    }
    *per = median ? halo_median_f64(blk, PROBE_BLOCKS) : best;
fail:
    halo_free(x);
    return rc;
}

/* The measurements of one probe (collective over the two ranks); figures valid on rank 0. */
static int probe_measure(halo_comm *c, bool quick, mpi_figs *f)
{
    const int64_t big = 4 << 20;
    char *buf = HALO_NEW(char, big);
    int small = quick ? 200 : 2000, large = quick ? 2 : 6, msgs = quick ? 500 : 5000;
    double rt = 0;
    int rc = 0;
    HALO_TRY(pingpong(c, buf, 8, small, &rt));
    f->lat_s = rt / 2;
    HALO_TRY(pingpong(c, buf, big, large, &rt));
    f->bw = 2.0 * (double)big / rt;
    HALO_TRY(stream(c, buf, msgs, &f->overhead_s));
    HALO_TRY(allreduces(c, 1, small, false, &f->allreduce_s));
    HALO_TRY(allreduces(c, HALO_CALIB_AR_FLOATS, quick ? 10 : 60, true, &f->allreduce_big_s));
fail:
    halo_free(buf);
    return rc;
}

/* Blocks of the oversubscribed probe: its figure is the median block, not the best, because
 * the descheduled ranks it measures are the normal case there, not a disturbance. */
#define OVERSUB_BLOCKS 9

/* 8 bytes to every peer, the payload of the probes' exchanges. */
typedef struct ping {
    int64_t *off; /* [P + 1] byte offsets of each peer's 8 bytes */
    char *buf;    /* [P * 8] */
} ping;

static ping ping_new(halo_comm *c)
{
    int P = halo_comm_size(c);
    ping p = {HALO_NEW(int64_t, (size_t)P + 1), HALO_NEW(char, (size_t)P * 8)};
    for (int q = 0; q <= P; q++) {
        p.off[q] = (int64_t)q * 8;
    }
    return p;
}

static void ping_free(ping *p)
{
    halo_free(p->off);
    halo_free(p->buf);
}

/* One batched exchange of p with every peer (the runtime's halo_comm_xchg, as a fetch's ids
 * go). Collective. */
static int ping_once(halo_comm *c, const ping *p)
{
    halo_xchg x = {0};
    int rc = halo_comm_xchg_start(c, &x, p->buf, p->off);
    rc = rc < 0 ? rc : halo_comm_xchg_wait(c, &x);
    halo_xchg_free(&x);
    return rc;
}

/* Batched exchanges of 8 bytes to every peer (the runtime's halo_comm_xchg, as a fetch does)
 * in OVERSUB_BLOCKS blocks of iters; *per gets the median block's seconds per exchange. */
static int exchanges(halo_comm *c, int iters, double *per)
{
    ping pg = ping_new(c);
    double t[OVERSUB_BLOCKS];
    int rc = 0;
    for (int b = 0; b < OVERSUB_BLOCKS; b++) {
        HALO_TRY(halo_comm_barrier(c));
        double t0 = halo_now();
        for (int i = 0; i < iters; i++) {
            HALO_TRY(ping_once(c, &pg));
        }
        t[b] = (halo_now() - t0) / iters;
    }
    *per = halo_median_f64(t, OVERSUB_BLOCKS);
fail:
    ping_free(&pg);
    return rc;
}

/* The first `active` ranks' loop of units of a training step's work (halo_sim_calib_unit):
 * `warm` units, then n timed ones, each followed by an exchange (with every peer when every rank
 * runs, as a step's are; else a ring among the active ranks by point-to-point messages; none
 * when c is NULL: this process alone). med[k] gets the median CPU seconds of the unit's part k
 * on the rank's clock; *waited and *polled (when not NULL) add the timed units' wall and
 * polling CPU seconds in the exchanges. */
static int unit_loop(halo_comm *c, halo_sim_calib_unit *u, const ping *pg, int active, int n,
                     int warm, double med[HALO_UNIT_PARTS], double *waited, double *polled)
{
    int r = c != NULL ? halo_comm_rank(c) : 0, P = c != NULL ? halo_comm_size(c) : 1;
    double t[HALO_UNIT_PARTS][HALO_CALIB_MAX_UNITS];
    n = n < HALO_CALIB_MAX_UNITS ? n : HALO_CALIB_MAX_UNITS;
    for (int i = 0; i < n + warm; i++) {
        double part[HALO_UNIT_PARTS];
        halo_sim_calib_unit_run(u, part);
        double w0 = halo_now(), p0 = halo_thread_wait_cpu();
        if (c != NULL && active == P) {
            HALO_CHECK(ping_once(c, pg));
        } else if (c != NULL) {
            int64_t v = i;
            HALO_CHECK(halo_comm_send(c, &v, 8, (r + 1) % active, 77));
            HALO_CHECK(halo_comm_recv(c, &v, 8, (r + active - 1) % active, 77));
        }
        if (i >= warm) {
            for (int k = 0; k < HALO_UNIT_PARTS; k++) {
                t[k][i - warm] = part[k];
            }
            if (waited != NULL) {
                *waited += halo_now() - w0;
                *polled += halo_thread_wait_cpu() - p0;
            }
        }
    }
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        med[k] = halo_median_f64(t[k], n);
    }
    return 0;
}

void halo_calib_unit_alone(int n, double cpu[HALO_UNIT_PARTS])
{
    halo_sim_calib_unit *u = halo_sim_calib_unit_new(1);
    (void)unit_loop(NULL, u, NULL, 1, n, 2, cpu, NULL, NULL); /* no exchange: it cannot fail */
    halo_sim_calib_unit_free(u);
}

/* Every rank runs n units of u after two warm-up ones (unit_loop); cpu[k] gets the mean over
 * the ranks of the median CPU seconds of the unit's part k on the rank's clock (what the
 * oversubscription costs the work itself: switches, caches and TLBs refilled; the waiting is
 * not in it), *poll the polling CPU per second waited in the exchanges. */
static int units(halo_comm *c, halo_sim_calib_unit *u, const ping *pg, int n,
                 double cpu[HALO_UNIT_PARTS], double *poll)
{
    double waited = 0, polled = 0;
    double m[HALO_UNIT_PARTS + 2] = {0};
    HALO_CHECK(halo_comm_barrier(c));
    HALO_CHECK(unit_loop(c, u, pg, halo_comm_size(c), n, 2, m, &waited, &polled));
    m[HALO_UNIT_PARTS] = waited;
    m[HALO_UNIT_PARTS + 1] = polled;
    HALO_CHECK(halo_comm_allreduce_sum_f64(c, m, HALO_UNIT_PARTS + 2));
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        cpu[k] = m[k] / halo_comm_size(c);
    }
    *poll = m[HALO_UNIT_PARTS] > 0 ? m[HALO_UNIT_PARTS + 1] / m[HALO_UNIT_PARTS] : 0;
    return 0;
}

/* The unit's parts as "unit_PART_cpu_s" lines. */
const char *const halo_calib_unit_keys[HALO_UNIT_PARTS] = {
    "unit_sample_cpu_s", "unit_gather_cpu_s", "unit_gemm_cpu_s", "unit_gather_warm_cpu_s"};

/* One "key value" line per part of the unit (keys: halo_calib_unit_keys or _ratio_keys) appended
 * to text at len; returns the new length. */
static int parts_text(const char *const keys[HALO_UNIT_PARTS], const double v[HALO_UNIT_PARTS],
                      char *text, size_t size, int len)
{
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        len += snprintf(text + len, size - (size_t)len, "%s %.9g\n", keys[k], v[k]);
    }
    return len;
}

/* Rounds of the oversubscribed probe's paired measurement, and units per phase. */
#define PAIR_ROUNDS 5
#define PAIR_UNITS 12

/* One phase of the paired measurement: the first `active` ranks run PAIR_UNITS units after one
 * warm-up (unit_loop) while the others sleep `idle_s`. The active ranks' median CPU per part
 * goes to med[k] (0 elsewhere); *wall gets the phase's wall seconds on this rank. */
static int pair_phase(halo_comm *c, halo_sim_calib_unit *u, const ping *pg, int active,
                      double idle_s, double med[HALO_UNIT_PARTS], double *wall)
{
    double t0 = halo_now();
    memset(med, 0, HALO_UNIT_PARTS * sizeof *med);
    HALO_CHECK(halo_comm_barrier(c));
    if (halo_comm_rank(c) < active) {
        HALO_CHECK(unit_loop(c, u, pg, active, PAIR_UNITS, 1, med, NULL, NULL));
    } else {
        halo_sleep_s(idle_s); /* a rank left out of a phase: it takes no core */
    }
    *wall = halo_now() - t0;
    return 0;
}

/* The oversubscription's cost to the work itself, paired inside one job: rounds of a phase in
 * which half the ranks (a core each) run units while the others sleep, then one in which every
 * rank runs them; ratio[k] is the median over the rounds of the second's CPU per part over
 * the first's. Two separate jobs (2 ranks, then 2 x cores ranks) put the gathers' ratio less 1
 * anywhere from 0.06 to 1.5 on a quiet 2-core VM from one pair to the next, with each job's own
 * figures moving by a third: where the processes and their memory landed differed between the
 * jobs. Paired in one job, six jobs read 0.21-0.34.
 * Collective. */
static int paired(halo_comm *c, halo_sim_calib_unit *u, const ping *pg,
                  double ratio[HALO_UNIT_PARTS])
{
    int P = halo_comm_size(c), half = P / 2 > 1 ? P / 2 : 1;
    double rs[HALO_UNIT_PARTS][PAIR_ROUNDS], idle = 0.2;
    for (int round = 0; round < PAIR_ROUNDS; round++) {
        double base[HALO_UNIT_PARTS], over[HALO_UNIT_PARTS], wall = 0;
        HALO_CHECK(pair_phase(c, u, pg, half, idle, base, &wall));
        /* the sleepers' next nap: the active ranks' phase and a half */
        double w[1] = {halo_comm_rank(c) < half ? wall : 0};
        HALO_CHECK(halo_comm_allreduce_max_f64(c, w, 1));
        idle = 1.5 * w[0] + 0.005;
        HALO_CHECK(pair_phase(c, u, pg, P, 0, over, &wall));
        double m[2 * HALO_UNIT_PARTS];
        memcpy(m, base, sizeof base);
        memcpy(m + HALO_UNIT_PARTS, over, sizeof over);
        HALO_CHECK(halo_comm_allreduce_sum_f64(c, m, 2 * HALO_UNIT_PARTS));
        for (int k = 0; k < HALO_UNIT_PARTS; k++) { /* means over the ranks that ran */
            double b = m[k] / half, o = m[HALO_UNIT_PARTS + k] / P;
            rs[k][round] = b > 0 ? o / b : 1;
        }
    }
    for (int k = 0; k < HALO_UNIT_PARTS; k++) {
        ratio[k] = halo_median_f64(rs[k], PAIR_ROUNDS);
    }
    return 0;
}

const char *const halo_calib_ratio_keys[HALO_UNIT_PARTS] = {"ratio_sample", "ratio_gather",
                                                            "ratio_gemm", "ratio_gather_warm"};

/* The units of step work of a probe job (units()) and, when ratio is not NULL, their paired
 * measurement (paired()), on one unit and one ping per rank: a unit fills a 64 MiB table and
 * builds a 2^18-node graph, once per job. */
static int probe_units(halo_comm *c, bool quick, double cpu[HALO_UNIT_PARTS], double *poll,
                       double ratio[HALO_UNIT_PARTS])
{
    halo_sim_calib_unit *u = halo_sim_calib_unit_new((uint64_t)halo_comm_rank(c) + 1);
    ping pg = ping_new(c);
    int rc = units(c, u, &pg, quick ? 16 : 48, cpu, poll);
    if (rc == 0 && ratio != NULL) {
        rc = paired(c, u, &pg, ratio);
    }
    ping_free(&pg);
    halo_sim_calib_unit_free(u);
    return rc;
}

/* The figures of a probe on c into text (rank 0's): the link figures with 2 ranks, the
 * seconds per exchange with more (the oversubscribed probe). */
static int probe_text(halo_comm *c, bool quick, bool with_units, const char *fetch_dir,
                      char *text, size_t size, int *len)
{
    if (halo_comm_size(c) == 2) {
        mpi_figs f;
        memset(&f, 0, sizeof f);
        double poll = 0;
        HALO_CHECK(probe_measure(c, quick, &f));
        if (with_units) { /* the units with a core per rank: the oversubscription's base */
            HALO_CHECK(probe_units(c, quick, f.unit, &poll, NULL));
        }
        *len = snprintf(text, size,
                        "lat_s %.9g\nbw_Bps %.9g\noverhead_s %.9g\nallreduce_s %.9g\n"
                        "allreduce_big_s %.9g\n",
                        f.lat_s, f.bw, f.overhead_s, f.allreduce_s, f.allreduce_big_s);
        if (with_units) {
            *len = parts_text(halo_calib_unit_keys, f.unit, text, size, *len);
        }
        return fetch_dir != NULL ? halo_calib_fetch_probe(c, fetch_dir, quick, text, size, len)
                                 : 0;
    }
    double x = 0, unit[HALO_UNIT_PARTS] = {0}, poll = 0, ratio[HALO_UNIT_PARTS] = {0};
    HALO_CHECK(exchanges(c, quick ? 50 : 400, &x));
    HALO_CHECK(probe_units(c, quick, unit, &poll, ratio));
    *len = snprintf(text, size, "xchg_s %.9g\npoll_frac %.9g\nranks %d\n", x, poll,
                    halo_comm_size(c));
    *len = parts_text(halo_calib_unit_keys, unit, text, size, *len);
    *len = parts_text(halo_calib_ratio_keys, ratio, text, size, *len);
    return 0;
}

/* `halo calibrate --probe-mpi FILE`: rank 0 writes "key value" lines to FILE. */
int halo_calib_probe_main(int argc, char **argv, const char *file, bool quick, bool units,
                          bool fetch)
{
    halo_comm *c;
    int rc = halo_comm_init(&argc, &argv, &c);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    if (halo_comm_size(c) < 2) {
        halo_comm_fail(c, halo_errorf(HALO_EUSAGE,
                                      "calibrate --probe-mpi: run it with 2 ranks or more, "
                                      "not %d",
                                      halo_comm_size(c)));
    }
    char text[4096], dir[1024]; /* the figures: about 800 bytes with the fetch probe */
    int n = 0;
    /* the fetch probe's partition goes beside FILE (calibrate's temporary directory) */
    const char *slash = strrchr(file, '/');
    snprintf(dir, sizeof dir, "%.*s", slash != NULL ? (int)(slash - file) : 1,
             slash != NULL ? file : ".");
    rc = probe_text(c, quick, units || fetch, fetch ? dir : NULL, text, sizeof text, &n);
    if (rc == 0 && halo_comm_rank(c) == 0) {
        rc = halo_output_file_check(file, "probe file",
                                    halo_comm_size(c) == 2 ? "lat_s " : "xchg_s ",
                                    false);
        if (rc == 0) {
            rc = halo_file_write_atomic(file, text, (size_t)n);
        }
    }
    if (rc < 0) {
        halo_comm_fail(c, rc);
    }
    halo_comm_finalize(c);
    return 0;
}

