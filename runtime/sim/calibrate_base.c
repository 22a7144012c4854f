/* The timing loop and the small helpers that halo calibrate's measurements (calibrate.c,
 * calibrate_compute.c) share. */
#include "sim/calibrate_int.h"

#include "core/err.h"
#include "core/timer.h"
#include "graph/gen.h"

#include <stdio.h>
#include <stdlib.h>

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
