/* NAME.meta.json (what a figure shows, how it was made and where) and index.md, the page that
 * gathers every figure of a reports directory with its caption and the paper's number. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/host.h"
#include "core/json.h"
#include "core/mem.h"
#include "sim/profile.h"
#include "sim/validate.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void halo_sweep_first_line(const char *cmd, char *out, size_t size)
{
    out[0] = '\0';
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return;
    }
    if (fgets(out, (int)size, p) == NULL) {
        out[0] = '\0';
    }
    out[strcspn(out, "\r\n")] = '\0';
    if (pclose(p) != 0) {
        out[0] = '\0';
    }
}

/* Whether row r of the data is a baseline row of derived column dv (its value is trivial). */
static bool is_baseline(const halo_sweep_table *t, int r, const halo_sweep_derive *dv)
{
    for (int b = 0; b < dv->nbase; b++) {
        int c = halo_sweep_table_col(t, dv->base[b].key);
        if (c < 0 || strcmp(t->rows[r][c], dv->base[b].val) != 0) {
            return false;
        }
    }
    return true;
}

/* Min and max of a numeric column of the data (n = 0 when it has no number); for a derived
 * column (dv not NULL) the baseline's own rows are left out. */
static void col_range(const halo_sweep_table *t, int c, const halo_sweep_derive *dv, double *lo,
                      double *hi, int *n)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    *n = 0;
    for (int r = 0; c >= 0 && r < t->nrows; r++) {
        double v;
        if (halo_sweep_is_num(t->rows[r][c], &v) && (dv == NULL || !is_baseline(t, r, dv))) {
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
            (*n)++;
        }
    }
}

/* The experiment's caption and, for a simulated figure, each cluster profile it used with its
 * last validation against measured runs (halo sim validate --record), so that the figure says
 * how far its times can be trusted. */
static void caption_with_profiles(const halo_sweep_exp *e, halo_sb *sb)
{
    halo_sb_puts(sb, e->caption);
    for (int i = 0; e->mode == HALO_SWEEP_SIM && i < e->npts; i++) {
        const char *path = e->pts[i].cluster;
        bool seen = path[0] == '\0';
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(e->pts[j].cluster, path) == 0;
        }
        halo_sim_profile p;
        halo_sim_validation v;
        if (seen || halo_sim_profile_load(path, &p) < 0 ||
            halo_sim_validation_load(path, &v) < 0) {
            continue;
        }
        char text[400];
        halo_sim_validation_text(&v, text, sizeof text);
        halo_sb_printf(sb, "%sProfile %s: %s.", sb->len > 0 ? " " : "", p.name, text);
    }
}

/* meta.json's "files": the names of the CSV, the data, the script and the figure (empty when
 * not written). */
static void meta_files(halo_jw *w, const halo_sweep_exp *e, const halo_sweep_meta_in *in)
{
    char f[600];
    halo_jw_key(w, "files");
    halo_jw_obj_begin(w);
    snprintf(f, sizeof f, "%s.csv", e->name);
    halo_jw_key(w, "csv");
    halo_jw_str(w, f);
    snprintf(f, sizeof f, "%s.data.csv", e->name);
    halo_jw_key(w, "data");
    halo_jw_str(w, f);
    snprintf(f, sizeof f, "%s.gp", e->name);
    halo_jw_key(w, "script");
    halo_jw_str(w, e->nplots > 0 ? f : "");
    snprintf(f, sizeof f, "%s.png", e->name);
    halo_jw_key(w, "png");
    halo_jw_str(w, in->figure ? f : "");
    snprintf(f, sizeof f, "%s.svg", e->name);
    halo_jw_key(w, "svg");
    halo_jw_str(w, in->figure ? f : "");
    halo_jw_obj_end(w);
}

/* meta.json's "points": the counts and each failure's key, axes and error. */
static void meta_points(halo_jw *w, const halo_sweep_exp *e, const halo_sweep_data *d)
{
    halo_jw_key(w, "points");
    halo_jw_obj_begin(w);
    halo_jw_key(w, "total");
    halo_jw_i64(w, e->npts);
    halo_jw_key(w, "ok");
    halo_jw_i64(w, d->ok);
    halo_jw_key(w, "failed");
    halo_jw_i64(w, d->failed);
    halo_jw_key(w, "not_run");
    halo_jw_i64(w, d->missing);
    halo_jw_key(w, "failures");
    halo_jw_arr_begin(w);
    for (int i = 0; i < d->failed; i++) {
        halo_jw_obj_begin(w);
        halo_jw_key(w, "key");
        halo_jw_str(w, d->fail_key[i]);
        halo_jw_key(w, "point");
        halo_jw_str(w, d->fail_axes[i]);
        halo_jw_key(w, "error");
        halo_jw_str(w, d->fail_error[i]);
        halo_jw_obj_end(w);
    }
    halo_jw_arr_end(w);
    halo_jw_obj_end(w);
}

/* meta.json's "ranges": value ranges of the measures and derived columns, over the figure's
 * rows. */
static void meta_ranges(halo_jw *w, const halo_sweep_exp *e, const halo_sweep_data *d)
{
    halo_jw_key(w, "ranges");
    halo_jw_obj_begin(w);
    for (int c = e->naxes; c < d->t.ncols - 1; c++) {
        double lo, hi;
        int n;
        int k = c - e->naxes - e->nmeasures;
        col_range(&d->t, c, k >= 0 ? &e->derives[k] : NULL, &lo, &hi, &n);
        halo_jw_key(w, d->t.cols[c]);
        halo_jw_obj_begin(w);
        halo_jw_key(w, "n");
        halo_jw_i64(w, n);
        if (n > 0) {
            halo_jw_key(w, "min");
            halo_jw_f64(w, lo);
            halo_jw_key(w, "max");
            halo_jw_f64(w, hi);
        }
        halo_jw_obj_end(w);
    }
    halo_jw_obj_end(w);
}

/* meta.json's "paper_ranges" (the paper's published ranges, each a band on the figure) and
 * "depends" (the source paths whose later change makes the figure stale, for halo report). */
static void meta_paper_depends(halo_jw *w, const halo_sweep_exp *e, const halo_sweep_data *d)
{
    halo_jw_key(w, "paper_ranges");
    halo_jw_arr_begin(w);
    for (int i = 0; i < e->npranges; i++) {
        const halo_sweep_prange *r = &e->pranges[i];
        halo_jw_obj_begin(w);
        halo_jw_key(w, "metric");
        halo_jw_str(w, r->metric);
        halo_jw_key(w, "lo");
        halo_jw_f64(w, r->lo);
        halo_jw_key(w, "hi");
        halo_jw_f64(w, r->hi);
        halo_jw_key(w, "unit");
        halo_jw_str(w, r->unit);
        halo_jw_key(w, "source");
        halo_jw_str(w, r->source);
        halo_jw_key(w, "drawn");
        halo_jw_bool(w, halo_sweep_plot_draws_range(e, d, r));
        halo_jw_obj_end(w);
    }
    halo_jw_arr_end(w);
    halo_sweep_deps deps = {NULL, 0};
    halo_sweep_exp_deps(e, &deps);
    halo_jw_key(w, "depends");
    halo_jw_arr_begin(w);
    for (int i = 0; i < deps.n; i++) {
        halo_jw_str(w, deps.paths[i]);
    }
    halo_jw_arr_end(w);
    halo_sweep_deps_free(&deps);
}

/* The commit the figure's points were run at: this one when the sweep ran every point; else,
 * since rows of an earlier sweep were kept, the previous meta.json's (its points_commit, or its
 * commit when it has none), "" when there is none to read: a redrawn figure is as old as its
 * oldest point. */
static void points_commit(const char *dir, const char *name, const char *commit, int reused,
                          char *out, size_t size)
{
    snprintf(out, size, "%s", reused == 0 ? commit : "");
    char path[4200];
    halo_json *prev = NULL;
    snprintf(path, sizeof path, "%s/%s.meta.json", dir, name);
    if (reused == 0 || !halo_path_exists(path) || halo_json_load(path, &prev) < 0) {
        halo_error_clear();
        return;
    }
    const halo_json *pv = halo_json_get(prev, "provenance");
    const halo_json *pc = pv ? halo_json_get(pv, "points_commit") : NULL;
    if (pc == NULL && pv != NULL) {
        pc = halo_json_get(pv, "commit");
    }
    if (pc != NULL && pc->type == HALO_JSON_STRING) {
        snprintf(out, size, "%s", pc->string);
    }
    halo_json_free(prev);
}

/* meta.json's "provenance": commit, the commit of the points, host, CPU, cores, date and
 * durations. */
static void meta_provenance(halo_jw *w, const halo_sweep_meta_in *in, const halo_sweep_data *d,
                            const char *dir, const char *name)
{
    char commit[128], host[256] = "", cpu[256], date[64];
    halo_sweep_first_line("git rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
    gethostname(host, sizeof host - 1);
    halo_host_cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    halo_jw_key(w, "provenance");
    halo_jw_obj_begin(w);
    halo_jw_key(w, "commit");
    halo_jw_str(w, commit);
    char pcommit[128];
    points_commit(dir, name, commit, in->reused, pcommit, sizeof pcommit);
    halo_jw_key(w, "points_commit");
    halo_jw_str(w, pcommit);
    halo_jw_key(w, "host");
    halo_jw_str(w, host);
    halo_jw_key(w, "cpu");
    halo_jw_str(w, cpu);
    halo_jw_key(w, "cores");
    halo_jw_i64(w, sysconf(_SC_NPROCESSORS_ONLN));
    halo_jw_key(w, "date");
    halo_jw_str(w, date);
    halo_jw_key(w, "duration_s");
    halo_jw_f64(w, round(in->duration_s * 1000) / 1000);
    halo_jw_key(w, "points_s");
    halo_jw_f64(w, round(d->seconds * 1000) / 1000);
    halo_jw_obj_end(w);
}

int halo_sweep_meta_write(const halo_sweep_exp *e, const halo_sweep_data *d,
                          const halo_sweep_meta_in *in, const char *dir)
{
    halo_jw w;
    halo_jw_init(&w, true);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "format");
    halo_jw_i64(&w, 1);
    halo_jw_key(&w, "name");
    halo_jw_str(&w, e->name);
    halo_jw_key(&w, "title");
    halo_jw_str(&w, e->title);
    halo_jw_key(&w, "caption");
    halo_sb cap;
    halo_sb_init(&cap);
    caption_with_profiles(e, &cap);
    halo_jw_str(&w, cap.buf);
    halo_sb_free(&cap);
    halo_jw_key(&w, "paper");
    halo_jw_str(&w, e->paper);
    meta_paper_depends(&w, e, d);
    halo_jw_key(&w, "experiment");
    halo_jw_str(&w, e->path);
    halo_jw_key(&w, "mode");
    halo_jw_str(&w, halo_sweep_mode_name(e->mode));
    halo_jw_key(&w, "quick");
    halo_jw_bool(&w, e->quick);
    halo_jw_key(&w, "command");
    halo_jw_str(&w, in->command);
    char replot[600];
    snprintf(replot, sizeof replot, "gnuplot %s.gp", e->name);
    halo_jw_key(&w, "replot");
    halo_jw_str(&w, replot);
    meta_files(&w, e, in);
    halo_jw_key(&w, "figure_error");
    halo_jw_str(&w, in->figure_error ? in->figure_error : "");
    halo_jw_key(&w, "axes");
    halo_jw_arr_begin(&w);
    for (int i = 0; i < e->naxes; i++) {
        halo_jw_str(&w, e->axes[i]);
    }
    halo_jw_arr_end(&w);
    meta_points(&w, e, d);
    meta_ranges(&w, e, d);
    /* the columns that stand for the figure's result: derived ones, else the plotted y */
    halo_jw_key(&w, "headline");
    halo_jw_arr_begin(&w);
    if (e->nderives > 0) {
        for (int i = 0; i < e->nderives; i++) {
            halo_jw_str(&w, e->derives[i].name);
        }
    } else if (e->nplots > 0) {
        const halo_sweep_plot *p = &e->plots[0];
        halo_jw_str(&w, p->kind == HALO_SWEEP_HEATMAP ? p->z : p->y[0]);
    }
    halo_jw_arr_end(&w);
    meta_provenance(&w, in, d, dir, e->name);
    halo_jw_obj_end(&w);
    halo_sb_putc(&w.sb, '\n');
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.meta.json", dir, e->name);
    int rc = halo_file_write_atomic(path, w.sb.buf, w.sb.len);
    halo_jw_free(&w);
    return rc;
}

/* ---- index.md ---- */

static const char *jstr(const halo_json *v, const char *key)
{
    const halo_json *f = halo_json_get(v, key);
    return f != NULL && f->type == HALO_JSON_STRING ? f->string : "";
}

static double jnum(const halo_json *v, const char *key)
{
    const halo_json *f = halo_json_get(v, key);
    return f != NULL && f->type == HALO_JSON_NUMBER ? f->number : NAN;
}

/* The commit a figure's numbers were made at: provenance.points_commit when meta.json has it
 * (a sweep that kept earlier rows), else provenance.commit. */
static const char *made_at(const halo_json *m)
{
    const halo_json *pv = halo_json_get(m, "provenance");
    if (pv != NULL && halo_json_get(pv, "points_commit") != NULL) {
        return jstr(pv, "points_commit");
    }
    return pv ? jstr(pv, "commit") : "";
}

/* Markdown text with the characters that would start markup inside a table cell escaped. */
static void md_text(halo_sb *sb, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') {
            halo_sb_puts(sb, "\\|");
        } else if (*s == '\n') {
            halo_sb_putc(sb, ' ');
        } else {
            halo_sb_putc(sb, *s);
        }
    }
}

/* Inline code, with backticks in s replaced. */
static void md_code(halo_sb *sb, const char *s)
{
    halo_sb_putc(sb, '`');
    for (; *s; s++) {
        halo_sb_putc(sb, *s == '`' ? '\'' : *s == '|' ? '/' : *s);
    }
    halo_sb_putc(sb, '`');
}

/* Adds a data file's link unless it is empty or linked already. */
static void md_link(halo_sb *sb, const char *f, int *n, const char **seen, int max)
{
    if (f[0] == '\0' || *n >= max) {
        return;
    }
    for (int i = 0; i < *n; i++) {
        if (strcmp(seen[i], f) == 0) {
            return;
        }
    }
    seen[(*n)++] = f;
    halo_sb_printf(sb, "%s[", *n > 1 ? ", " : "");
    md_text(sb, f);
    halo_sb_puts(sb, "](");
    md_text(sb, f);
    halo_sb_putc(sb, ')');
}

/* The data row: each distinct file the figure is drawn from (files.csv, and files.data: one
 * name or a list), or says that none was kept. */
static void md_data(halo_sb *sb, const halo_json *files)
{
    if (files == NULL) {
        return;
    }
    const char *seen[64];
    int n = 0;
    halo_sb row;
    halo_sb_init(&row);
    md_link(&row, jstr(files, "csv"), &n, seen, 64);
    const halo_json *d = halo_json_get(files, "data");
    if (d != NULL && d->type == HALO_JSON_ARRAY) {
        for (size_t i = 0; i < d->len; i++) {
            if (d->items[i]->type == HALO_JSON_STRING) {
                md_link(&row, d->items[i]->string, &n, seen, 64);
            }
        }
    } else {
        md_link(&row, jstr(files, "data"), &n, seen, 64);
    }
    halo_sb_printf(sb, "| data | %s |\n", n > 0 ? row.buf : "none kept beside the figure");
    halo_sb_free(&row);
}

/* A number of a paper's range as the legend writes it. */
static void md_num(halo_sb *sb, double v)
{
    char b[40];
    halo_sweep_fmt_num(v, b, sizeof b);
    halo_sb_puts(sb, b);
}

/* One row per range the paper publishes ("paper's range"). */
static void md_ranges(halo_sb *sb, const halo_json *m)
{
    const halo_json *rs = halo_json_get(m, "paper_ranges");
    for (size_t i = 0; rs != NULL && rs->type == HALO_JSON_ARRAY && i < rs->len; i++) {
        const halo_json *r = rs->items[i];
        halo_sb_puts(sb, "| paper's range | ");
        md_code(sb, jstr(r, "metric"));
        halo_sb_putc(sb, ' ');
        md_num(sb, jnum(r, "lo"));
        halo_sb_putc(sb, '-');
        md_num(sb, jnum(r, "hi"));
        md_text(sb, jstr(r, "unit"));
        halo_sb_puts(sb, " (");
        md_text(sb, jstr(r, "source"));
        const halo_json *drawn = halo_json_get(r, "drawn");
        if (drawn != NULL && drawn->type == HALO_JSON_BOOL && drawn->boolean) {
            halo_sb_puts(sb, "), drawn on the figure |\n");
        } else {
            halo_sb_puts(sb, "), not drawn: no panel plots this column |\n");
        }
    }
}

/* The figure's freshness line: STALE with the commit it was made at, the dependencies changed
 * since and the newest commit that changed them; or why freshness is unknown for it alone. */
static void md_fresh(halo_sb *sb, const halo_json *m, const halo_sweep_verdict *v)
{
    const char *commit = made_at(m);
    if (v->state == HALO_SWEEP_FRESH_STALE) {
        halo_sb_puts(sb, "**STALE: made at ");
        md_code(sb, commit);
        halo_sb_puts(sb, "; ");
        md_text(sb, v->changed);
        halo_sb_puts(sb, " changed since (");
        md_code(sb, v->newest);
        halo_sb_printf(sb, ")**: %d commit%s since %s what it depends on", v->commits,
                       v->commits == 1 ? "" : "s", v->commits == 1 ? "touches" : "touch");
        if (jstr(m, "command")[0]) {
            halo_sb_puts(sb, "; regenerate it with ");
            md_code(sb, jstr(m, "command"));
        }
        halo_sb_puts(sb, ".\n\n");
    } else if (v->state == HALO_SWEEP_FRESH_UNKNOWN && v->why[0]) {
        halo_sb_puts(sb, "*Freshness unknown: ");
        md_text(sb, v->why);
        halo_sb_puts(sb, ".*\n\n");
    }
}

/* The "made" row: date, host, CPU, cores, commit and durations. */
static void md_made(halo_sb *sb, const halo_json *m)
{
    const halo_json *pv = halo_json_get(m, "provenance");
    if (pv != NULL) {
        halo_sb_puts(sb, "| made | ");
        md_text(sb, jstr(pv, "date"));
        halo_sb_puts(sb, " on ");
        md_text(sb, jstr(pv, "host"));
        halo_sb_puts(sb, " (");
        md_text(sb, jstr(pv, "cpu")[0] ? jstr(pv, "cpu") : "CPU unknown");
        halo_sb_printf(sb, ", %.0f cores), ", jnum(pv, "cores"));
        const char *commit = jstr(pv, "commit"), *points = made_at(m);
        if (commit[0]) {
            halo_sb_puts(sb, "commit ");
            md_code(sb, commit);
        } else {
            halo_sb_puts(sb, "no git commit");
        }
        if (strcmp(points, commit) != 0) {
            /* redrawn over points of an earlier sweep */
            halo_sb_puts(sb, points[0] ? ", points run at " : ", points run at an unknown commit");
            if (points[0]) {
                md_code(sb, points);
            }
        }
        halo_sb_printf(sb, ", points %.1f s (this sweep %.1f s) |\n", jnum(pv, "points_s"),
                       jnum(pv, "duration_s"));
    }
}

/* One figure's section of index.md. */
static void md_figure(halo_sb *sb, const halo_json *m, const char *file,
                      const halo_sweep_verdict *v)
{
    const char *name = jstr(m, "name"), *title = jstr(m, "title");
    halo_sb_puts(sb, "## ");
    md_text(sb, title[0] ? title : name);
    halo_sb_puts(sb, "\n\n");
    md_fresh(sb, m, v);
    const halo_json *files = halo_json_get(m, "files");
    const char *png = files ? jstr(files, "png") : "";
    if (png[0]) {
        halo_sb_puts(sb, "![");
        md_text(sb, title);
        halo_sb_printf(sb, "](%s)\n\n", png);
    } else {
        halo_sb_puts(sb, "*(no figure");
        const char *why = jstr(m, "figure_error");
        if (why[0]) {
            halo_sb_puts(sb, ": ");
            md_text(sb, why);
        }
        halo_sb_puts(sb, ")*\n\n");
    }
    const char *caption = jstr(m, "caption");
    if (caption[0]) {
        md_text(sb, caption);
        halo_sb_puts(sb, "\n\n");
    }
    halo_sb_puts(sb, "| | |\n|---|---|\n");
    const char *paper = jstr(m, "paper");
    if (paper[0]) {
        halo_sb_puts(sb, "| paper | ");
        md_text(sb, paper);
        halo_sb_puts(sb, " |\n");
    }
    md_ranges(sb, m);
    const halo_json *head = halo_json_get(m, "headline");
    const halo_json *ranges = halo_json_get(m, "ranges");
    for (size_t i = 0; head != NULL && head->type == HALO_JSON_ARRAY && i < head->len; i++) {
        if (head->items[i]->type != HALO_JSON_STRING) {
            continue;
        }
        const char *col = head->items[i]->string;
        const halo_json *r = ranges ? halo_json_get(ranges, col) : NULL;
        double n = r ? jnum(r, "n") : 0;
        halo_sb_puts(sb, "| halo | ");
        md_code(sb, col);
        if (!(n > 0)) {
            halo_sb_puts(sb, " no value yet |\n");
            continue;
        }
        double lo = jnum(r, "min"), hi = jnum(r, "max");
        if (lo == hi) {
            halo_sb_printf(sb, " %.3g", lo);
        } else {
            halo_sb_printf(sb, " %.3g to %.3g", lo, hi);
        }
        halo_sb_printf(sb, " over %.0f configuration%s |\n", n, n == 1 ? "" : "s");
    }
    halo_sb_puts(sb, "| regenerate | ");
    md_code(sb, jstr(m, "command"));
    halo_sb_puts(sb, "; redraw: ");
    md_code(sb, jstr(m, "replot"));
    halo_sb_puts(sb, " in this directory |\n");
    const halo_json *pts = halo_json_get(m, "points");
    if (pts != NULL) {
        halo_sb_printf(sb, "| points | %.0f ok, %.0f failed", jnum(pts, "ok"), jnum(pts, "failed"));
        double nr = jnum(pts, "not_run");
        if (nr > 0) {
            halo_sb_printf(sb, ", %.0f not run", nr);
        }
        halo_sb_printf(sb, " (mode %s%s) |\n", jstr(m, "mode"),
                       halo_json_get(m, "quick") && halo_json_get(m, "quick")->boolean ? ", quick"
                                                                                       : "");
    }
    md_data(sb, files);
    md_made(sb, m);
    const halo_json *fl = pts ? halo_json_get(pts, "failures") : NULL;
    if (fl != NULL && fl->type == HALO_JSON_ARRAY && fl->len > 0) {
        halo_sb_puts(sb, "\nFailed points:\n\n");
        for (size_t i = 0; i < fl->len && i < 20; i++) {
            halo_sb_puts(sb, "- ");
            const char *pt = jstr(fl->items[i], "point");
            md_code(sb, pt[0] ? pt : jstr(fl->items[i], "key"));
            halo_sb_puts(sb, ": ");
            md_text(sb, jstr(fl->items[i], "error"));
            halo_sb_putc(sb, '\n');
        }
        if (fl->len > 20) {
            halo_sb_printf(sb, "- ... and %zu more (%s)\n", fl->len - 20, file);
        }
    }
    halo_sb_putc(sb, '\n');
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The paths a figure depends on: meta.json's "depends" (paths that may reach git), else those
 * of its mode and its experiment file (figures written by other tools). */
static void figure_deps(const halo_json *m, halo_sweep_deps *d)
{
    const halo_json *dep = halo_json_get(m, "depends");
    if (dep != NULL && dep->type == HALO_JSON_ARRAY && dep->len > 0) {
        for (size_t i = 0; i < dep->len; i++) {
            if (dep->items[i]->type == HALO_JSON_STRING &&
                halo_sweep_repo_path_ok(dep->items[i]->string)) {
                d->paths = halo_realloc(d->paths, (size_t)(d->n + 1) * sizeof *d->paths);
                d->paths[d->n++] = halo_strdup(dep->items[i]->string);
            }
        }
        return;
    }
    halo_sweep_mode_deps(jstr(m, "mode"), d);
    const char *x = jstr(m, "experiment");
    if (halo_sweep_repo_path_ok(x)) {
        d->paths = halo_realloc(d->paths, (size_t)(d->n + 1) * sizeof *d->paths);
        d->paths[d->n++] = halo_strdup(x);
    }
}

/* The NAME.meta.json files of dir, sorted by name. */
static int meta_names(const char *dir, char ***names, int *n)
{
    *names = NULL;
    *n = 0;
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        return halo_errorf(HALO_EINPUT, "report: %s: no such directory", dir);
    }
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 10 && strcmp(de->d_name + l - 10, ".meta.json") == 0 && de->d_name[0] != '.') {
            *names = halo_realloc(*names, (size_t)(*n + 1) * sizeof **names);
            (*names)[(*n)++] = halo_strdup(de->d_name);
        }
    }
    closedir(dp);
    if (*n > 1) {
        qsort(*names, (size_t)*n, sizeof **names, cmp_name);
    }
    return 0;
}

/* A table of contents with GitHub's heading anchors; stale figures are marked. */
static void md_contents(halo_sb *sb, halo_json **metas, const halo_sweep_verdict *v, int n)
{
    for (int i = 0; i < n; i++) {
        const char *t = jstr(metas[i], "title");
        halo_sb_puts(sb, "- [");
        md_text(sb, t);
        halo_sb_puts(sb, "](#");
        for (const char *c = t; *c; c++) {
            unsigned char ch = (unsigned char)*c;
            if (isalnum(ch) || ch == '-' || ch == '_' || ch >= 0x80) {
                halo_sb_putc(sb, (char)tolower(ch));
            } else if (ch == ' ') {
                halo_sb_putc(sb, '-');
            }
        }
        halo_sb_printf(sb, ")%s\n", v[i].state == HALO_SWEEP_FRESH_STALE ? " (STALE)" : "");
    }
    halo_sb_putc(sb, '\n');
}

/* The page's freshness paragraph: how many figures are stale, or why no figure's freshness is
 * known. */
static void md_fresh_summary(halo_sb *sb, const halo_sweep_fresh *f,
                             const halo_sweep_report_out *out)
{
    if (f->unknown[0]) {
        halo_sb_puts(sb, "Freshness unknown: ");
        md_text(sb, f->unknown);
        halo_sb_puts(sb, ", so no figure is checked against the code it depends on.\n\n");
    } else if (out->stale > 0) {
        halo_sb_printf(sb,
                       "**%d of %d figures are STALE**: made at a commit older than a change to "
                       "the code they depend on (marked below).\n\n",
                       out->stale, out->figures);
    } else if (out->figures > 0) {
        halo_sb_printf(sb,
                       "No figure is older than the code it depends on (%d checked with git%s)."
                       "\n\n",
                       out->figures - out->unknown,
                       out->unknown > 0 ? "; the others' commits are unknown" : "");
    }
}

int halo_sweep_report(const char *dir, halo_sweep_report_out *out)
{
    memset(out, 0, sizeof *out);
    char **names = NULL;
    int n = 0;
    HALO_CHECK(meta_names(dir, &names, &n));
    int rc = 0;
    halo_json **metas = HALO_NEW(halo_json *, n + 1);
    halo_sweep_verdict *v = HALO_NEW(halo_sweep_verdict, n + 1);
    halo_sweep_fresh *f = HALO_NEW(halo_sweep_fresh, 1);
    halo_sweep_fresh_open(dir, f);
    snprintf(out->unknown_why, sizeof out->unknown_why, "%s", f->unknown);
    for (int i = 0; i < n && rc == 0; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = halo_json_load(path, &metas[i]);
        if (rc < 0) {
            rc = halo_error_prefix(rc, "report");
            break;
        }
        halo_sweep_deps d = {NULL, 0};
        figure_deps(metas[i], &d);
        halo_sweep_fresh_check(f, made_at(metas[i]), &d, &v[i]);
        halo_sweep_deps_free(&d);
        out->figures++;
        out->stale += v[i].state == HALO_SWEEP_FRESH_STALE;
        out->unknown += v[i].state == HALO_SWEEP_FRESH_UNKNOWN;
    }
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sb_puts(&sb, "# halo experiments\n\n"
                      "Figures made by `halo sweep` from the experiment files in `experiments/` "
                      "(docs/experiments.md).\nRegenerate all of them with `make experiments` "
                      "(`QUICK=1` for the quick variants) and this page with `make report`.\n\n");
    if (rc == 0 && n == 0) {
        halo_sb_puts(&sb, "No figures yet.\n");
    }
    if (rc == 0 && n > 0) {
        md_fresh_summary(&sb, f, out);
        md_contents(&sb, metas, v, n);
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        md_figure(&sb, metas[i], names[i], &v[i]);
    }
    if (rc == 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/index.md", dir);
        rc = halo_file_write_atomic(path, sb.buf, sb.len);
    }
    halo_sb_free(&sb);
    for (int i = 0; i < n; i++) {
        halo_json_free(metas[i]);
        halo_free(names[i]);
    }
    halo_free(metas);
    halo_free(names);
    halo_free(v);
    halo_free(f);
    return rc;
}
