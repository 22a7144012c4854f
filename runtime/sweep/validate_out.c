/* What `halo sim validate` prints and writes: the per-configuration table (plain or
 * markdown), the summary, the CSV, the gnuplot figure and its meta.json. */
#include "sweep/validate.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/host.h"
#include "core/json.h"
#include "core/mem.h"
#include "sweep/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Stages of the table (the epoch first). */
static const int stages[] = {HALO_SIM_T_EPOCH, HALO_SIM_T_SAMPLE, HALO_SIM_T_FETCH,
                             HALO_SIM_T_COPY, HALO_SIM_T_COMPUTE, HALO_SIM_T_ALLREDUCE,
                             HALO_SIM_T_WAIT};
#define NSTAGE ((int)(sizeof stages / sizeof stages[0]))

bool halo_vresult_err(const halo_vresult *r, int k, double *pct)
{
    double m = r->cmp.measured[k], s = r->cmp.simulated[k];
    if (!(m > 0) || (k != HALO_SIM_T_EPOCH && m < 0.05 * r->cmp.measured[HALO_SIM_T_EPOCH])) {
        return false;
    }
    *pct = 100.0 * (s - m) / m;
    return true;
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

static int cmp_signed(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..m) (0 when m is 0), of |v| when by_abs; sorts v by that. */
static double median_of(double *v, int m, bool by_abs)
{
    qsort(v, (size_t)m, sizeof *v, by_abs ? cmp_abs : cmp_signed);
    if (m == 0) {
        return 0;
    }
    double a = m % 2 ? v[m / 2] : v[m / 2 - 1], b = v[m / 2];
    return by_abs ? (fabs(a) + fabs(b)) / 2 : (a + b) / 2;
}

double halo_vspeed_dev(const halo_vsummary *s)
{
    if (!s->speed) {
        return -1;
    }
    double dev = -1;
    for (int t = 0; t < 2; t++) {
        for (int k = 0; k < 2; k++) {
            double x = s->speed_run[t][k], ref = s->speed_prof[k];
            if (!(x > 0) || !(ref > 0)) {
                continue;
            }
            double ratio = k == 0 ? x / ref : ref / x; /* seconds per unit of work */
            double d = 100 * fabs(ratio - 1);
            dev = d > dev ? d : dev;
        }
    }
    return dev;
}

void halo_vsummary_make(const halo_vresult *r, int n, halo_vsummary *s)
{
    s->n = n;
    s->counts_equal = 0;
    s->stage_median_max = 0;
    double *v = HALO_NEW(double, (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        s->counts_equal += r[i].cmp.mismatches == 0;
    }
    for (int k = 0; k < HALO_SIM_T_N; k++) {
        int m = 0;
        s->worst[k] = 0;
        s->worst_at[k] = 0;
        for (int i = 0; i < n; i++) {
            double e;
            if (halo_vresult_err(&r[i], k, &e)) {
                v[m++] = e;
                if (fabs(e) >= s->worst[k]) {
                    s->worst[k] = fabs(e);
                    s->worst_at[k] = r[i].c.index;
                }
            }
        }
        s->nstage[k] = m;
        s->median[k] = median_of(v, m, true);
        /* the work stages; wait is what is left of the epoch when they are done */
        if (k != HALO_SIM_T_EPOCH && k != HALO_SIM_T_WAIT && k < HALO_SIM_T_WALL && m > 0 &&
            s->median[k] > s->stage_median_max) {
            s->stage_median_max = s->median[k];
        }
    }
    /* the repeats' spread: how far two measurements of one configuration fall apart */
    int m = 0;
    s->noise_worst = 0;
    s->noise_at = 0;
    s->beyond_noise = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].repeats > 1) {
            double e;
            s->beyond_noise += halo_vresult_err(&r[i], HALO_SIM_T_EPOCH, &e) &&
                               fabs(e) > 100 * r[i].noise;
            v[m++] = 100 * r[i].noise;
            if (100 * r[i].noise >= s->noise_worst) {
                s->noise_worst = 100 * r[i].noise;
                s->noise_at = r[i].c.index;
            }
        }
    }
    s->nnoise = m;
    s->noise_median = median_of(v, m, true);
    halo_free(v);
}

double halo_vrepeat_limit(double limit_of_three, int n)
{
    /* mean range of n standard normal draws, n = 0 .. 9 */
    static const double d2[10] = {0, 0, 1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970};
    if (n < 2) {
        return 0;
    }
    n = n > 9 ? 9 : n;
    return limit_of_three * d2[n] / d2[3];
}

/* The fanouts as "5/10/3". */
static void fanouts_text(const halo_vconfig *c, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int l = 0; l < c->layers && n < size; l++) {
        n += (size_t)snprintf(buf + n, size - n, "%s%d", l ? "/" : "", c->fanout[l]);
    }
}

void halo_vresult_header(FILE *out, bool markdown)
{
    if (markdown) {
        fprintf(out, "| # | graph | ranks | layers | fanouts | hidden | batch | policy | depth | "
                     "sampler threads | netem | measured s | simulated s | epoch | sample | "
                     "fetch | copy | compute | allreduce | wait | repeats spread | counts |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                     "---|---|---|---|\n");
        return;
    }
    fprintf(out, "%3s %-18s %2s %1s %-9s %4s %5s %-26s %1s %1s %-16s %8s %8s %7s %7s %7s %7s "
            "%7s %7s %7s %7s  %s\n", "#", "graph", "R", "L", "fanouts", "hid", "batch", "policy",
            "d", "t", "netem", "meas_s", "sim_s", "epoch", "sample", "fetch", "copy", "compute",
            "allred", "wait", "repeats", "counts");
}

void halo_vresult_row(const halo_vspace *sp, const halo_vresult *r, FILE *out, bool markdown)
{
    char graph[96], pol[128], fan[32], err[NSTAGE][16];
    halo_vconfig_graph_label(sp, &r->c, graph, sizeof graph);
    halo_vconfig_policy_label(sp, &r->c, pol, sizeof pol);
    fanouts_text(&r->c, fan, sizeof fan);
    for (int k = 0; k < NSTAGE; k++) {
        double e;
        if (halo_vresult_err(r, stages[k], &e)) {
            snprintf(err[k], sizeof err[k], "%+.1f%%", e);
        } else {
            snprintf(err[k], sizeof err[k], "-");
        }
    }
    char rep[16] = "-";
    if (r->repeats > 1) {
        snprintf(rep, sizeof rep, "%.1f%%", 100 * r->noise);
    }
    const char *counts = r->cmp.mismatches == 0 ? "equal" : "DIFFER";
    const halo_vconfig *c = &r->c;
    const double *m = r->cmp.measured, *s = r->cmp.simulated;
    if (markdown) {
        fprintf(out, "| %d | %s | %d | %d | %s | %d | %d | %s | %d | %d | %s | %.4f | %.4f |",
                c->index, graph, c->ranks, c->layers, fan, c->hidden, c->batch, pol, c->depth,
                c->sampler_threads, sp->netem[c->netem], m[0], s[0]);
        for (int k = 0; k < NSTAGE; k++) {
            fprintf(out, " %s |", err[k]);
        }
        fprintf(out, " %s | %s |\n", rep, counts);
        return;
    }
    fprintf(out, "%3d %-18s %2d %1d %-9s %4d %5d %-26s %1d %1d %-16s %8.4f %8.4f", c->index,
            graph, c->ranks, c->layers, fan, c->hidden, c->batch, pol, c->depth,
            c->sampler_threads, sp->netem[c->netem], m[0], s[0]);
    for (int k = 0; k < NSTAGE; k++) {
        fprintf(out, " %7s", err[k]);
    }
    fprintf(out, " %7s  %s%s%s\n", rep, counts, r->cmp.mismatches ? ": " : "",
            r->cmp.mismatches ? r->cmp.first_mismatch : "");
}

void halo_vsummary_print(const halo_vsummary *s, FILE *out, bool markdown)
{
    fprintf(out, markdown ? "\n| stage | configurations | median \\|error\\| | worst \\|error\\| |\n"
                            "|---|---|---|---|\n"
                          : "\n%-10s %14s %15s %14s\n",
            "stage", "configurations", "median |error|", "worst |error|");
    for (int k = 0; k < NSTAGE; k++) {
        int t = stages[k];
        const char *name = halo_sim_time_name(t);
        if (s->nstage[t] == 0) {
            fprintf(out, markdown ? "| %s | 0 | - | - |\n" : "%-10s %14d %15s %14s\n", name, 0,
                    "-", "-");
            continue;
        }
        fprintf(out, markdown ? "| %s | %d | %.1f%% | %.1f%% (#%d) |\n"
                              : "%-10s %14d %14.1f%% %13.1f%%  (configuration %d)\n",
                name, s->nstage[t], s->median[t], s->worst[t], s->worst_at[t]);
    }
    /* the stages' CPU work on their threads (measured runs that record it): the cost model
       apart from the scheduling */
    for (int t = HALO_SIM_T_WALL; t < HALO_SIM_T_N; t++) {
        if (s->nstage[t] > 0) {
            fprintf(out, markdown ? "| %s | %d | %.1f%% | %.1f%% (#%d) |\n"
                                  : "%-11s %13d %14.1f%% %13.1f%%  (configuration %d)\n",
                    halo_sim_time_name(t), s->nstage[t], s->median[t], s->worst[t],
                    s->worst_at[t]);
        }
    }
    fprintf(out, "%scounts: equal in %d of %d configurations\n", markdown ? "\n" : "",
            s->counts_equal, s->n);
    if (s->nnoise > 0) {
        fprintf(out, "repeats: %d configurations measured more than once; the measured epoch "
                "of one configuration spread %.1f%% median, %.1f%% worst (configuration %d) "
                "between its runs; the epoch's |error| exceeds that spread in %d of them\n",
                s->nnoise, s->noise_median, s->noise_worst, s->noise_at, s->beyond_noise);
    }
    double dev = halo_vspeed_dev(s);
    if (dev >= 0) {
        char gemm[48] = "not a CPU profile's";
        if (s->speed_prof[1] > 0) {
            snprintf(gemm, sizeof gemm, "profile %.1f", s->speed_prof[1] / 1e9);
        }
        fprintf(out, "machine speed: sampler %.2f ns per edge before the runs, %.2f after "
                "(profile %.2f); GEMM %.1f GFLOP/s before, %.1f after (%s): %s %.0f%% "
                "of the profile%s\n", s->speed_run[0][0] * 1e9, s->speed_run[1][0] * 1e9,
                s->speed_prof[0] * 1e9, s->speed_run[0][1] / 1e9, s->speed_run[1][1] / 1e9,
                gemm, dev > HALO_VSPEED_DEV ? "up to" : "within", dev,
                dev > HALO_VSPEED_DEV ? ": the errors above include the machine's own change; "
                "calibrate just before measuring" : "");
    }
    if (s->fit && s->checked) {
        fprintf(out, "machine: quiet enough to measure (load average %.2f before the first "
                "run, other work at most %.2f cores before a run, epoch spread at most %.0f%%)\n",
                s->load_start, s->busy_max > s->busy_start ? s->busy_max : s->busy_start,
                100 * s->spread_max);
    } else if (s->fit) {
        fprintf(out, "machine: quiet enough to measure (every run from the work directory: "
                "other work at most %.2f cores before a run, epoch spread at most %.0f%%)\n",
                s->busy_max, 100 * s->spread_max);
    } else {
        fprintf(out, "UNFIT: %s: the errors above are not a validation\n", s->why);
    }
}

/* The groups of the bias table: whether a host's trainer processes outnumber its cores, the
 * pipeline, the emulated network. */
static int group_of(const halo_vspace *sp, const halo_vconfig *c, int cores, int hosts)
{
    int per_host = (c->ranks + hosts - 1) / hosts;
    return (per_host > cores ? 4 : 0) + (c->depth > 0 ? 2 : 0) +
           (strcmp(sp->netem[c->netem], "off") != 0 ? 1 : 0);
}

void halo_vgroups_print(const halo_vspace *sp, const halo_vresult *r, int n, int cores,
                        int hosts, FILE *out, bool markdown)
{
    static const int cols[] = {HALO_SIM_T_EPOCH,       HALO_SIM_T_SAMPLE,
                               HALO_SIM_T_FETCH,       HALO_SIM_T_COMPUTE,
                               HALO_SIM_T_SAMPLE_CPU,  HALO_SIM_T_FETCH_CPU,
                               HALO_SIM_T_COMPUTE_CPU};
    enum { NCOL = (int)(sizeof cols / sizeof cols[0]) };
    hosts = hosts > 0 ? hosts : 1;
    int per_host_cores = cores / hosts > 0 ? cores / hosts : 1;
    double *v = HALO_NEW(double, (size_t)(n > 0 ? n : 1));
    int *grp = HALO_NEW(int, (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        grp[i] = group_of(sp, &r[i].c, per_host_cores, hosts);
    }
    fprintf(out, markdown ? "\nbias by group (signed median error %%, simulated / measured - 1; "
                            "(m): only m of the group's configurations have that error):\n\n"
                            "| where | configurations | epoch | sample | "
                            "fetch | compute | sample cpu | fetch cpu | compute cpu |\n"
                            "|---|---|---|---|---|---|---|---|---|\n"
                          : "\nbias by group (signed median error %%, simulated / measured - 1):"
                            "\n%-36s %4s %7s %7s %7s %7s %11s %9s %11s\n",
            "where", "n", "epoch", "sample", "fetch", "compute", "sample cpu", "fetch cpu",
            "compute cpu");
    for (int g = 0; g < 8; g++) {
        int members = 0;
        for (int i = 0; i < n; i++) {
            members += grp[i] == g;
        }
        if (members == 0) {
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "ranks %s cores, %s, %s", g & 4 ? ">" : "<=",
                 g & 2 ? "pipelined" : "depth 0", g & 1 ? "netem" : "no netem");
        fprintf(out, markdown ? "| %s | %d |" : "%-36s %4d", name, members);
        for (int k = 0; k < NCOL; k++) {
            int m = 0;
            for (int i = 0; i < n; i++) {
                double e;
                if (grp[i] == g && halo_vresult_err(&r[i], cols[k], &e)) {
                    v[m++] = e;
                }
            }
            int w = k < 4 ? 7 : k == 5 ? 9 : 11;
            char cell[32];
            if (m == 0) {
                snprintf(cell, sizeof cell, "-");
            } else {
                snprintf(cell, sizeof cell, "%+.1f%s", median_of(v, m, false), markdown ? "" : "%");
                if (m < members) {
                    size_t l = strlen(cell);
                    snprintf(cell + l, sizeof cell - l, markdown ? " (%d)" : "/%d", m);
                }
            }
            if (markdown) {
                fprintf(out, " %s |", cell);
            } else {
                fprintf(out, " %*s", w, cell);
            }
        }
        fputc('\n', out);
    }
    halo_free(grp);
    halo_free(v);
}

/* The CSV: one row per configuration, errors in % (empty where not counted). */
static void csv_text(const halo_vspace *sp, const halo_vresult *r, int n, halo_sb *sb)
{
    halo_sb_puts(sb, "config,graph,ranks,layers,fanouts,hidden,batch,policy,depth,"
                     "sampler_threads,netem,measured_s,simulated_s");
    for (int k = 0; k < NSTAGE; k++) {
        halo_sb_printf(sb, ",%s_err", halo_sim_time_name(stages[k]));
    }
    halo_sb_puts(sb, ",sample_cpu_err,fetch_cpu_err,compute_cpu_err");
    halo_sb_puts(sb, ",counts,busy_cores,epoch_spread,repeats,repeat_spread,key\n");
    for (int i = 0; i < n; i++) {
        char graph[96], pol[128], fan[32];
        const halo_vconfig *c = &r[i].c;
        halo_vconfig_graph_label(sp, c, graph, sizeof graph);
        halo_vconfig_policy_label(sp, c, pol, sizeof pol);
        fanouts_text(c, fan, sizeof fan);
        halo_sb_printf(sb, "%d,%s,%d,%d,%s,%d,%d,", c->index, graph, c->ranks, c->layers, fan,
                       c->hidden, c->batch);
        halo_sweep_plain(sb, pol);
        halo_sb_printf(sb, ",%d,%d,", c->depth, c->sampler_threads);
        halo_sweep_plain(sb, sp->netem[c->netem]);
        halo_sb_printf(sb, ",%.6f,%.6f", r[i].cmp.measured[0], r[i].cmp.simulated[0]);
        for (int k = 0; k < NSTAGE; k++) {
            double e;
            if (halo_vresult_err(&r[i], stages[k], &e)) {
                halo_sb_printf(sb, ",%.2f", e);
            } else {
                halo_sb_puts(sb, ",");
            }
        }
        for (int t = HALO_SIM_T_WALL; t < HALO_SIM_T_N; t++) {
            double e;
            if (halo_vresult_err(&r[i], t, &e)) {
                halo_sb_printf(sb, ",%.2f", e);
            } else {
                halo_sb_puts(sb, ",");
            }
        }
        halo_sb_printf(sb, ",%s,%.3f,%.4f,%d,%.4f,%s\n", r[i].cmp.mismatches ? "differ" : "equal",
                       r[i].busy, r[i].cmp.measured_spread, r[i].repeats, r[i].noise, r[i].key);
    }
}

/* The gnuplot script: simulated against measured epoch time, y = x and +-10%, +-25%. */
static void gp_text(const halo_vsummary *s, const char *profile, bool fit, halo_sb *sb)
{
    halo_sb_printf(sb,
        "# simulated vs measured epoch time (halo sim validate); rerun: gnuplot "
        "sim_vs_measured.gp\n"
        "if (!exists(\"out\")) out = \"sim_vs_measured\"\n"
        "set datafile separator \",\"\n"
        "set key top left\n"
        "set logscale xy\n"
        "set xlabel \"measured epoch (s)\"\n"
        "set ylabel \"simulated epoch (s)\"\n"
        "set title \"halo sim (profile %s) vs mpirun halo train, %d configurations\\n"
        "epoch median |error| %.1f%%, worst %.1f%%%s\"\n"
        "set grid\n"
        "set size ratio -1\n"
        "stats \"sim_vs_measured.csv\" every ::1 using 12:13 nooutput\n"
        "lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.5\n"
        "hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.5\n"
        "set xrange [lo:hi]\n"
        "set yrange [lo:hi]\n"
        "do for [fmt in \"png svg\"] {\n"
        "    if (fmt eq \"png\") { set terminal pngcairo size 900,800 font \",10\" } "
        "else { set terminal svg size 900,800 dynamic font \",10\" }\n"
        "    set output out . \".\" . fmt\n"
        "    plot x with lines lc rgb \"#555555\" dt 2 title \"y = x\", \\\n"
        "         x * 1.1 with lines lc rgb \"#bbbbbb\" dt 3 title \"+-10%%\", "
        "x / 1.1 with lines lc rgb \"#bbbbbb\" dt 3 notitle, \\\n"
        "         x * 1.25 with lines lc rgb \"#dddddd\" dt 3 title \"+-25%%\", "
        "x / 1.25 with lines lc rgb \"#dddddd\" dt 3 notitle, \\\n"
        "         \"sim_vs_measured.csv\" every ::1 using (strcol(11) eq \"off\" ? $12 : NaN):13 "
        "with points pt 7 ps 1.3 lc rgb \"#1f77b4\" title \"no netem\", \\\n"
        "         \"\" every ::1 using (strcol(11) ne \"off\" ? $12 : NaN):13 with points pt 5 "
        "ps 1.3 lc rgb \"#d62728\" title \"netem\", \\\n"
        "         \"\" every ::1 using 12:13:1 with labels font \",7\" offset char 0.8,0 left "
        "notitle\n"
        "    unset output\n"
        "}\n",
        profile, s->n, s->median[HALO_SIM_T_EPOCH], s->worst[HALO_SIM_T_EPOCH],
        fit ? "" : " (UNFIT: load or unsteady epochs)");
}

/* sim_vs_measured.meta.json: what the figure shows, for halo report's index.md. */
static void meta_text(const halo_validate_opts *o, const halo_vsummary *s, const char *profile,
                      bool figure, halo_sb *out)
{
    halo_jw w;
    halo_jw_init(&w, true);
    char buf[2048];
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "format");
    halo_jw_i64(&w, 1);
    halo_jw_key(&w, "name");
    halo_jw_str(&w, "sim_vs_measured");
    halo_jw_key(&w, "title");
    halo_jw_str(&w, "Simulated vs measured epoch time (halo sim validate)");
    snprintf(buf, sizeof buf, "%d configurations drawn with seed %llu from %s, each run with "
             "mpirun halo train and simulated with halo sim on profile %s: epoch median |error| "
             "%.1f%%, worst %.1f%%, largest per-stage median %.1f%%; counts equal in %d of %d. "
             "Epoch time = median over epochs 1.. of the slowest rank. %s",
             s->n, (unsigned long long)o->seed, o->space ? o->space : "the default space",
             profile, s->median[0], s->worst[0], s->stage_median_max, s->counts_equal, s->n,
             s->fit ? "Measured on a quiet machine."
                    : "UNFIT: measured under load or with unsteady epochs (see the run's verdict "
                      "line).");
    halo_jw_key(&w, "caption");
    halo_jw_str(&w, buf);
    halo_jw_key(&w, "paper");
    halo_jw_str(&w, "no published simulator to compare with; goal median |error| <= 10%, "
                    "worst <= 25%");
    halo_jw_key(&w, "mode");
    halo_jw_str(&w, "run+sim");
    halo_jw_key(&w, "command");
    halo_jw_str(&w, o->command ? o->command : "halo sim validate");
    halo_jw_key(&w, "replot");
    halo_jw_str(&w, "gnuplot sim_vs_measured.gp");
    halo_jw_key(&w, "files");
    halo_jw_obj_begin(&w);
    const char *keys[] = {"csv", "data", "script", "png", "svg"};
    const char *vals[] = {"sim_vs_measured.csv", "sim_vs_measured.csv", "sim_vs_measured.gp",
                          figure ? "sim_vs_measured.png" : "", figure ? "sim_vs_measured.svg" : ""};
    for (int i = 0; i < 5; i++) {
        halo_jw_key(&w, keys[i]);
        halo_jw_str(&w, vals[i]);
    }
    halo_jw_obj_end(&w);
    halo_jw_key(&w, "headline");
    halo_jw_raw(&w, "[\"median_abs_error_pct\",\"worst_abs_error_pct\"]");
    snprintf(buf, sizeof buf, "{\"median_abs_error_pct\":{\"n\":%d,\"min\":%.2f,\"max\":%.2f},"
             "\"worst_abs_error_pct\":{\"n\":%d,\"min\":%.2f,\"max\":%.2f}}", s->nstage[0],
             s->median[0], s->median[0], s->nstage[0], s->worst[0], s->worst[0]);
    halo_jw_key(&w, "ranges");
    halo_jw_raw(&w, buf);
    snprintf(buf, sizeof buf, "{\"total\":%d,\"ok\":%d,\"failed\":0,\"not_run\":0,"
             "\"failures\":[]}", s->n, s->n);
    halo_jw_key(&w, "points");
    halo_jw_raw(&w, buf);
    halo_jw_key(&w, "fit");
    halo_jw_bool(&w, s->fit);
    char commit[128], date[64], host[256] = "", cpu[256];
    halo_host_cpu_model(cpu, sizeof cpu);
    halo_sweep_first_line("git rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(buf, sizeof buf, "{\"commit\":\"%s\",\"host\":\"%s\",\"cpu\":\"%s\",\"cores\":%ld,"
             "\"date\":\"%s\",\"duration_s\":%.1f,\"points_s\":%.1f}", commit, host, cpu,
             sysconf(_SC_NPROCESSORS_ONLN), date, s->seconds, s->seconds);
    halo_jw_key(&w, "provenance");
    halo_jw_raw(&w, buf);
    halo_jw_obj_end(&w);
    halo_sb_puts(out, w.sb.buf);
    halo_sb_putc(out, '\n');
    halo_jw_free(&w);
}

/* Writes OUT/NAME atomically. */
static int put(const char *dir, const char *name, const halo_sb *sb)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return halo_file_write_atomic(path, sb->buf, sb->len);
}

int halo_validate_outputs(const halo_validate_opts *o, const halo_vspace *sp,
                          const halo_vresult *r, int n, const halo_vsummary *s,
                          const char *profile_name)
{
    halo_sb sb;
    halo_sb_init(&sb);
    csv_text(sp, r, n, &sb);
    int rc = put(o->out_dir, "sim_vs_measured.csv", &sb);
    sb.len = 0;
    sb.buf[0] = '\0';
    gp_text(s, profile_name, s->fit, &sb);
    rc = rc < 0 ? rc : put(o->out_dir, "sim_vs_measured.gp", &sb);
    bool figure = false;
    if (rc == 0) {
        int g = halo_sweep_plot_draw(o->out_dir, "sim_vs_measured");
        figure = g == 0;
        if (g < 0) {
            fprintf(stderr, "halo: note: no figure: %s\n", halo_errmsg());
        }
    }
    sb.len = 0;
    sb.buf[0] = '\0';
    meta_text(o, s, profile_name, figure, &sb);
    rc = rc < 0 ? rc : put(o->out_dir, "sim_vs_measured.meta.json", &sb);
    halo_sb_free(&sb);
    if (rc == 0) {
        printf("files: %s/sim_vs_measured.{csv,gp%s,meta.json}\n", o->out_dir,
               figure ? ",png,svg" : "");
    }
    return rc;
}
