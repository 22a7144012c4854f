/* The timing loop and the small helpers that halo calibrate's measurements (calibrate.c,
 * calibrate_compute.c) share. */
#include "sim/calibrate_int.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs fn once to warm up, then repeatedly for about `seconds` (at least 3, at most
 * CALIB_MAX_REPS times); *t gets the seconds of the fastest repetition: the machine's rate
 * when nothing else runs on it (another process on the core only ever makes a run slower). */
int halo_sim_calib_best(calib_fn fn, void *arg, double seconds, double *t)
{
    HALO_CHECK(fn(arg));
    int n = 0;
    double best = 1e30, start = halo_now();
    while (n < CALIB_MAX_REPS && (n < 3 || halo_now() - start < seconds)) {
        double t0 = halo_now();
        HALO_CHECK(fn(arg));
        double d = halo_now() - t0;
        best = d < best ? d : best;
        n++;
    }
    *t = best > 0 ? best : 1e-9; /* below the clock's resolution */
    return 0;
}

/* x rounded to 4 significant digits (the figures are not more precise than that). */
double halo_sim_calib_sig4(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", x);
    return strtod(buf, NULL);
}

/* i-th element of a scattered permutation of [0, n), n a power of two (an odd multiplier). */
int64_t halo_sim_calib_scatter(int64_t i, int64_t n)
{
    return (int64_t)(((uint64_t)i * 2654435761ULL) & (uint64_t)(n - 1));
}

/* The measurements' graph in memory: n nodes (a power of two), in-degree uniform in [1, 63]
 * (mean 32), uniform sources. */
halo_graph *halo_sim_calib_random_graph(int64_t n)
{
    return halo_gen_random(n, 1, 63, 0xca1, 2);
}

/* Splits the times t1, t2 of `count` items of b1 < b2 bytes into seconds per item and bytes/s
 * (t = count * (per + bytes / bw)); noise that makes the wider one no slower gives per = 0. */
void halo_sim_calib_split_rate(double t1, double t2, double count, double b1, double b2,
                               double *per, double *bw)
{
    if (t2 > t1) {
        *bw = (b2 - b1) * count / (t2 - t1);
        double p = t1 / count - b1 / *bw;
        *per = p > 0 ? p : 0;
    } else {
        *bw = b2 * count / t2;
        *per = 0;
    }
}

/* ---- jitter ---- */

double halo_sim_calib_normal_max(int P)
{
    /* the integral of x P phi(x) Phi(x)^(P-1) by the midpoint rule over [-8, 8] */
    const int steps = 4000;
    double h = 16.0 / steps, e = 0;
    for (int i = 0; i < steps; i++) {
        double x = -8.0 + (i + 0.5) * h;
        double phi = exp(-0.5 * x * x) / sqrt(2.0 * M_PI), Phi = 0.5 * erfc(-x / sqrt(2.0));
        e += x * P * phi * pow(Phi, P - 1) * h;
    }
    return e;
}

/* Durations of `stage` in ev by (epoch, batch, rank) into d[E * B * P] (0: none). */
static void stage_grid(const halo_timeline_event *ev, int64_t n, const char *stage, int E,
                       int64_t B, int P, double *d)
{
    for (int64_t i = 0; i < n; i++) {
        const halo_timeline_event *e = &ev[i];
        if (strcmp(e->stage, stage) == 0 && e->epoch >= 0 && e->epoch < E && e->batch >= 0 &&
            e->batch < B && e->rank >= 0 && e->rank < P) {
            d[((size_t)e->epoch * (size_t)B + (size_t)e->batch) * (size_t)P + (size_t)e->rank] =
                e->end - e->start;
        }
    }
}

double halo_sim_calib_jitter(const halo_timeline_event *run, int64_t nrun,
                             const halo_timeline_event *sim, int64_t nsim, int P)
{
    int E = 0;
    int64_t B = 0;
    for (int64_t i = 0; i < nrun; i++) {
        E = run[i].epoch + 1 > E ? run[i].epoch + 1 : E;
        B = run[i].batch + 1 > B ? run[i].batch + 1 : B;
    }
    if (P < 2 || P > HALO_SIM_MAX_JITTER_RANKS || E < 2 || B < 1 ||
        (double)E * (double)B * P > 1e7) {
        return 0;
    }
    size_t cells = (size_t)E * (size_t)B * (size_t)P;
    double *m = HALO_NEW(double, cells), *s = HALO_NEW(double, cells);
    stage_grid(run, nrun, "compute", E, B, P, m);
    stage_grid(sim, nsim, "compute", E, B, P, s);
    double top = 0;
    int64_t used = 0;
    for (size_t k = (size_t)B * (size_t)P; k < cells; k += (size_t)P) { /* epochs 1 on */
        double v[HALO_SIM_MAX_JITTER_RANKS], mean = 0, hi = 0;
        int r = 0;
        for (; r < P && m[k + (size_t)r] > 0 && s[k + (size_t)r] > 0; r++) {
            v[r] = m[k + (size_t)r] / s[k + (size_t)r];
            mean += v[r] / P;
        }
        if (r < P) {
            continue; /* a batch some rank did not compute */
        }
        for (r = 0; r < P; r++) {
            hi = v[r] > hi ? v[r] : hi;
        }
        top += hi / mean;
        used++;
    }
    halo_free(m);
    halo_free(s);
    double x = used > 0 ? top / (double)used - 1 : 0;
    return x > 0 ? x / halo_sim_calib_normal_max(P) : 0;
}
