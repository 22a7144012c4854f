/* The sweep driver: resume from the CSV, build graphs, partitions and traces once per content
 * in the cache, run each point with a timeout, append its row, then draw and describe. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/timer.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cache entry that failed to build in this sweep (not tried again for later points). */
typedef struct bad_entry {
    char key[24];   /* cache entry name */
    char msg[1024]; /* its error */
} bad_entry;

/* State of one sweep. */
typedef struct run_state {
    const halo_sweep_exp *e; /* the experiment */
    const char *exe;         /* halo binary */
    const char *cache;       /* cache directory */
    double timeout;          /* seconds per command */
    bad_entry *bad;          /* entries that failed */
    int nbad;                /* count */
} run_state;

/* Removes cache entries left under a temporary name by a sweep that died (PID not running). */
static void clean_stale(const char *cache)
{
    DIR *dp = opendir(cache);
    if (dp == NULL) {
        return;
    }
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        const char *t = strstr(de->d_name, ".tmp-");
        if (t == NULL) {
            continue;
        }
        long pid = strtol(t + 5, NULL, 10);
        if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", cache, de->d_name);
            halo_rmtree(path);
        }
    }
    closedir(dp);
}

static const char *find_bad(const run_state *s, const char *key)
{
    for (int i = 0; i < s->nbad; i++) {
        if (strcmp(s->bad[i].key, key) == 0) {
            return s->bad[i].msg;
        }
    }
    return NULL;
}

static void add_bad(run_state *s, const char *key, const char *msg)
{
    s->bad = halo_realloc(s->bad, (size_t)(s->nbad + 1) * sizeof *s->bad);
    snprintf(s->bad[s->nbad].key, sizeof s->bad[s->nbad].key, "%s", key);
    snprintf(s->bad[s->nbad].msg, sizeof s->bad[s->nbad].msg, "%s", msg);
    s->nbad++;
}

/* Makes a cache entry (a graph or partition directory, a trace file) unless it exists: runs
 * cmd into tmp, then renames tmp to final. A concurrent sweep that got there first wins. */
static int build_entry(run_state *s, const char *key, const char *what, const halo_sweep_cmd *cmd,
                       const char *tmp, const char *final)
{
    if (halo_path_exists(final)) {
        return 0;
    }
    const char *bad = find_bad(s, key);
    if (bad != NULL) {
        return halo_errorf(HALO_EIO, "%s", bad);
    }
    char log[4200];
    snprintf(log, sizeof log, "%s/%s.log", s->cache, key);
    unlink(log);
    halo_rmtree(tmp);
    int rc = halo_sweep_spawn(cmd, log, s->timeout);
    if (rc == 0 && rename(tmp, final) < 0) {
        if (halo_path_exists(final)) {
            halo_rmtree(tmp); /* built meanwhile by another sweep */
        } else {
            rc = halo_errorf(HALO_EIO, "%s: %s", final, strerror(errno));
        }
    }
    if (rc < 0) {
        halo_rmtree(tmp);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s %s failed: %s", what, key, halo_errmsg());
        add_bad(s, key, msg);
        return halo_errorf(HALO_EIO, "%s", msg);
    }
    return 0;
}

/* Runs one point: its cache entries, its command, its measures. */
static int run_point(run_state *s, const halo_sweep_plan *pl, const halo_sweep_point *p,
                     double *vals)
{
    const halo_sweep_exp *e = s->e;
    if (pl->build_graph) {
        HALO_CHECK(build_entry(s, p->gkey, "graph", &pl->graph, pl->gtmp, pl->gdir));
    }
    HALO_CHECK(build_entry(s, p->pkey, "partition", &pl->part, pl->ptmp, pl->pdir));
    if (e->mode == HALO_SWEEP_TRACE) {
        HALO_CHECK(build_entry(s, p->tkey, "trace", &pl->record, pl->ttmp, pl->trc));
    }
    unlink(pl->log);
    unlink(pl->metrics);
    if (pl->main.argc > 0) {
        HALO_CHECK(halo_sweep_spawn(&pl->main, pl->log, s->timeout));
    }
    return halo_sweep_measure(e, pl, vals);
}

/* "axis=value ..." of a point, values shown as labels. */
static void point_text(const halo_sweep_exp *e, const halo_sweep_point *p, halo_sb *sb)
{
    for (int a = 0; a < e->naxes; a++) {
        const char *v = halo_sweep_get(p, e->axes[a]);
        char lb[512];
        halo_sweep_label(v ? v : "", lb, sizeof lb);
        halo_sb_printf(sb, "%s%s=%s", a ? " " : "", e->axes[a], lb);
    }
    if (e->repeat > 1) {
        halo_sb_printf(sb, "%srep=%d", e->naxes ? " " : "", p->rep);
    }
    if (e->naxes == 0 && e->repeat == 1) {
        halo_sb_puts(sb, "(defaults)");
    }
}

/* The CSV line of a finished point. */
static void csv_line(const halo_sweep_exp *e, const halo_sweep_point *p, const double *vals,
                     bool ok, const char *err, double secs, halo_sb *sb)
{
    halo_sb_puts(sb, p->key);
    for (int a = 0; a < e->naxes; a++) {
        const char *v = halo_sweep_get(p, e->axes[a]);
        halo_sb_putc(sb, ',');
        halo_sweep_csv_field(sb, v ? v : "");
    }
    halo_sb_printf(sb, ",%d", p->rep);
    for (int m = 0; m < e->nmeasures; m++) {
        halo_sb_putc(sb, ',');
        if (ok && !isnan(vals[m])) {
            halo_sb_printf(sb, "%.9g", vals[m]);
        }
    }
    halo_sb_puts(sb, ok ? ",ok," : ",failed,");
    halo_sweep_csv_field(sb, err);
    halo_sb_printf(sb, ",%.3f\n", secs);
}

/* Whether the latest row of each point is ok, from the CSV (done[i]). */
static void done_points(const halo_sweep_exp *e, const halo_sweep_table *csv, bool *done)
{
    int ck = halo_sweep_table_col(csv, "key"), cs = halo_sweep_table_col(csv, "status");
    for (int i = 0; i < e->npts; i++) {
        done[i] = false;
        for (int r = csv->nrows - 1; ck >= 0 && cs >= 0 && r >= 0; r--) {
            if (strcmp(csv->rows[r][ck], e->pts[i].key) == 0) {
                done[i] = strcmp(csv->rows[r][cs], "ok") == 0;
                break;
            }
        }
    }
}

/* Prints the points and their commands (--dry-run). */
static int dry_run(const run_state *s, const bool *done, const char *out)
{
    const halo_sweep_exp *e = s->e;
    int todo = 0;
    for (int i = 0; i < e->npts; i++) {
        todo += !done[i];
    }
    printf("halo sweep %s: %d points (mode %s%s), %d done, %d to run; outputs in %s, cache %s\n",
           e->name, e->npts, halo_sweep_mode_name(e->mode), e->quick ? ", quick" : "",
           e->npts - todo, todo, out, s->cache);
    for (int i = 0; i < e->npts; i++) {
        const halo_sweep_point *p = &e->pts[i];
        halo_sb sb;
        halo_sb_init(&sb);
        point_text(e, p, &sb);
        printf("point %d/%d %s %s%s\n", i + 1, e->npts, p->key, sb.buf ? sb.buf : "",
               done[i] ? " [done]" : "");
        halo_sb_free(&sb);
        halo_sweep_plan pl;
        HALO_CHECK(halo_sweep_plan_make(e, p, s->exe, s->cache, s->timeout, true, &pl));
        const halo_sweep_cmd *cmds[4] = {pl.build_graph ? &pl.graph : NULL, &pl.part,
                                         e->mode == HALO_SWEEP_TRACE ? &pl.record : NULL,
                                         pl.main.argc > 0 ? &pl.main : NULL};
        const char *finals[4] = {pl.gdir, pl.pdir, pl.trc, NULL};
        for (int k = 0; k < 4; k++) {
            if (cmds[k] == NULL) {
                continue;
            }
            halo_sb_init(&sb);
            halo_sweep_cmd_text(cmds[k], &sb);
            printf("  %s%s\n", sb.buf,
                   finals[k] && halo_path_exists(finals[k]) ? "   [cached]" : "");
            halo_sb_free(&sb);
        }
        halo_sweep_plan_free(&pl);
    }
    return 0;
}

/* The halo binary the points run: o->exe, else this process's own (/proc/self/exe). */
static int find_exe(const halo_sweep_opts *o, char *exe, size_t size)
{
    if (o->exe != NULL) {
        snprintf(exe, size, "%s", o->exe);
        return 0;
    }
    ssize_t n = readlink("/proc/self/exe", exe, size - 1);
    if (n <= 0) {
        return halo_errorf(HALO_EIO,
                           "sweep: cannot find the halo binary (/proc/self/exe): "
                           "%s",
                           strerror(errno));
    }
    exe[n] = '\0';
    return 0;
}

/* One line per finished point on stderr: the progress bar on a terminal (and a warning when it
 * failed), else "[ran/todo] point I ok|FAILED ..." with the time left. */
static void report_point(const halo_sweep_exp *e, halo_progress *prog, int i, int ran, int todo,
                         bool ok, const char *what, const char *err, double secs, double t0)
{
    if (prog->tty) {
        halo_progress_update(prog, (uint64_t)ran);
        if (!ok) {
            halo_progress_end(prog);
            halo_warn("sweep %s: point %d/%d failed (%s): %s", e->name, i + 1, e->npts, what, err);
        }
    } else if (halo_log_level() >= HALO_LOG_NORMAL) {
        double el = halo_now() - t0;
        fprintf(stderr,
                "halo: sweep %s: [%d/%d] point %d %s %.1f s %s%s%s (about %.0f s "
                "left)\n",
                e->name, ran, todo, i + 1, ok ? "ok" : "FAILED", secs, what, ok ? "" : ": ", err,
                ran < todo ? el / ran * (todo - ran) : 0.0);
    }
}

/* Runs every point not done yet, appending its CSV row to csvp as it finishes. */
static int run_points(run_state *s, const bool *done, const char *csvp, double t0)
{
    const halo_sweep_exp *e = s->e;
    int todo = 0, ran = 0, rc = 0;
    for (int i = 0; i < e->npts; i++) {
        todo += !done[i];
    }
    halo_info("sweep %s: %d points (mode %s%s), %d done before, %d to run", e->name, e->npts,
              halo_sweep_mode_name(e->mode), e->quick ? ", quick" : "", e->npts - todo, todo);
    double *vals = HALO_NEW(double, e->nmeasures + 1);
    halo_sb sb;
    halo_sb_init(&sb);
    halo_progress prog;
    halo_progress_begin(&prog, e->name, (uint64_t)todo);
    for (int i = 0; i < e->npts; i++) {
        if (done[i]) {
            continue;
        }
        const halo_sweep_point *p = &e->pts[i];
        double ts = halo_now();
        halo_sweep_plan pl;
        rc = halo_sweep_plan_make(e, p, s->exe, s->cache, s->timeout, false, &pl);
        if (rc == 0) {
            rc = run_point(s, &pl, p, vals);
        }
        halo_sweep_plan_free(&pl);
        bool ok = rc == 0;
        char err[1200];
        snprintf(err, sizeof err, "%s", ok ? "" : halo_errmsg());
        halo_error_clear();
        double secs = halo_now() - ts;
        sb.len = 0;
        csv_line(e, p, vals, ok, err, secs, &sb);
        HALO_TRY(halo_sweep_csv_append(csvp, sb.buf));
        ran++;
        sb.len = 0;
        point_text(e, p, &sb);
        report_point(e, &prog, i, ran, todo, ok, sb.buf, err, secs, t0);
    }
    rc = 0;
fail:
    halo_progress_end(&prog);
    halo_free(vals);
    halo_sb_free(&sb);
    return rc;
}

/* From every row of csvp (earlier runs included): NAME.data.csv, NAME.gp and the figure (unless
 * no plot or no point finished), NAME.meta.json; *failed gets the failed points. The figure's
 * failure is an error after everything else is written. */
static int write_outputs(const halo_sweep_exp *e, const halo_sweep_opts *o, const char *out,
                         const char *csvp, double t0, int reused, int *failed)
{
    halo_sweep_table csv;
    memset(&csv, 0, sizeof csv);
    halo_sweep_data d;
    memset(&d, 0, sizeof d);
    halo_sb sb;
    halo_sb_init(&sb);
    char path[4200];
    int rc = 0;
    HALO_TRY(halo_sweep_csv_read(csvp, &csv));
    HALO_TRY(halo_sweep_data_make(e, &csv, &d));
    halo_sweep_data_csv(&d, &sb);
    snprintf(path, sizeof path, "%s/%s.data.csv", out, e->name);
    HALO_TRY(halo_file_write_atomic(path, sb.buf, sb.len));
    halo_sweep_meta_in mi = {o->command ? o->command : "", t0, 0, false, "", reused};
    char ferr[1200] = "";
    int draw_rc = 0;
    if (e->nplots == 0) {
        snprintf(ferr, sizeof ferr, "the experiment has no plot");
    } else {
        sb.len = 0;
        halo_sweep_plot_script(e, &d, &sb);
        snprintf(path, sizeof path, "%s/%s.gp", out, e->name);
        HALO_TRY(halo_file_write_atomic(path, sb.buf, sb.len));
        if (d.t.nrows == 0) {
            snprintf(ferr, sizeof ferr, "no point finished");
        } else {
            draw_rc = halo_sweep_plot_draw(out, e->name);
            if (draw_rc < 0) {
                snprintf(ferr, sizeof ferr, "%s", halo_errmsg());
            } else {
                mi.figure = true;
            }
        }
    }
    mi.figure_error = ferr;
    mi.duration_s = halo_now() - t0;
    HALO_TRY(halo_sweep_meta_write(e, &d, &mi, out));
    *failed = d.failed;
    halo_info("sweep %s: %d points ok, %d failed, %d not run; %s/%s.csv%s%s (%.1f s)", e->name,
              d.ok, d.failed, d.missing, out, e->name, mi.figure ? ", figure " : "",
              mi.figure ? e->name : "", mi.duration_s);
    if (draw_rc < 0) {
        rc = halo_errorf(HALO_EIO, "%s", ferr);
    }
fail:
    halo_sweep_data_free(&d);
    halo_sweep_table_free(&csv);
    halo_sb_free(&sb);
    return rc;
}

int halo_sweep_run(const halo_sweep_exp *e, const halo_sweep_opts *o, int *failed)
{
    *failed = 0;
    double t0 = halo_now();
    const char *out = o->out_dir ? o->out_dir : "reports";
    char cache[4096], exe[4096], csvp[4200];
    if (o->cache_dir != NULL) {
        snprintf(cache, sizeof cache, "%s", o->cache_dir);
    } else {
        snprintf(cache, sizeof cache, "%s/.cache", out);
    }
    HALO_CHECK(find_exe(o, exe, sizeof exe));
    run_state s = {e, exe, cache, 0, NULL, 0};
    s.timeout = o->timeout > 0 ? o->timeout : e->timeout > 0 ? e->timeout : 600;
    snprintf(csvp, sizeof csvp, "%s/%s.csv", out, e->name);
    halo_sweep_table csv;
    memset(&csv, 0, sizeof csv);
    bool *done = HALO_NEW(bool, e->npts + 1);
    int rc = halo_sweep_csv_read(csvp, &csv);
    if (rc < 0) {
        goto fail;
    }
    done_points(e, &csv, done);
    if (o->dry_run) {
        rc = dry_run(&s, done, out);
        goto fail;
    }
    char points_dir[4200];
    snprintf(points_dir, sizeof points_dir, "%s/points", cache);
    HALO_TRY(halo_mkdir_p(out));
    HALO_TRY(halo_mkdir_p(points_dir));
    clean_stale(cache);
    HALO_TRY(halo_sweep_csv_prepare(e, csvp));
    halo_sweep_signals();
    HALO_TRY(run_points(&s, done, csvp, t0));
    int reused = 0;
    for (int i = 0; i < e->npts; i++) {
        reused += done[i];
    }
    rc = write_outputs(e, o, out, csvp, t0, reused, failed);
fail:
    halo_sweep_table_free(&csv);
    halo_free(done);
    halo_free(s.bad);
    return rc;
}
