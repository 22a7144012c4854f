/* NAME.meta.json (what a figure shows, how it was made and where) and index.md, the page that
 * gathers every figure of a reports directory with its caption and the paper's number. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
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

/* The first line a shell command prints (empty when it fails). */
static void first_line(const char *cmd, char *out, size_t size)
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

/* The CPU model from /proc/cpuinfo ("" when unknown). */
static void cpu_model(char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c != NULL) {
                c++;
                while (*c == ' ' || *c == '\t') {
                    c++;
                }
                snprintf(out, size, "%s", c);
                out[strcspn(out, "\r\n")] = '\0';
            }
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
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

/* meta.json's "provenance": commit, host, CPU, cores, date and durations. */
static void meta_provenance(halo_jw *w, const halo_sweep_meta_in *in, const halo_sweep_data *d)
{
    char commit[128], host[256] = "", cpu[256], date[64];
    first_line("git rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
    gethostname(host, sizeof host - 1);
    cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    halo_jw_key(w, "provenance");
    halo_jw_obj_begin(w);
    halo_jw_key(w, "commit");
    halo_jw_str(w, commit);
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
    meta_provenance(&w, in, d);
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

/* One figure's section of index.md. */
static void md_figure(halo_sb *sb, const halo_json *m, const char *file)
{
    const char *name = jstr(m, "name"), *title = jstr(m, "title");
    halo_sb_puts(sb, "## ");
    md_text(sb, title[0] ? title : name);
    halo_sb_puts(sb, "\n\n");
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
    if (files != NULL) {
        halo_sb_printf(sb, "| data | [%s](%s), [%s](%s) |\n", jstr(files, "csv"),
                       jstr(files, "csv"), jstr(files, "data"), jstr(files, "data"));
    }
    const halo_json *pv = halo_json_get(m, "provenance");
    if (pv != NULL) {
        halo_sb_puts(sb, "| made | ");
        md_text(sb, jstr(pv, "date"));
        halo_sb_puts(sb, " on ");
        md_text(sb, jstr(pv, "host"));
        halo_sb_puts(sb, " (");
        md_text(sb, jstr(pv, "cpu")[0] ? jstr(pv, "cpu") : "CPU unknown");
        halo_sb_printf(sb, ", %.0f cores), ", jnum(pv, "cores"));
        const char *commit = jstr(pv, "commit");
        if (commit[0]) {
            halo_sb_puts(sb, "commit ");
            md_code(sb, commit);
        } else {
            halo_sb_puts(sb, "no git commit");
        }
        halo_sb_printf(sb, ", points %.1f s (this sweep %.1f s) |\n", jnum(pv, "points_s"),
                       jnum(pv, "duration_s"));
    }
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

int halo_sweep_report(const char *dir, int *figures)
{
    *figures = 0;
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        return halo_errorf(HALO_EINPUT, "report: %s: no such directory", dir);
    }
    char **names = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 10 && strcmp(de->d_name + l - 10, ".meta.json") == 0 && de->d_name[0] != '.') {
            names = halo_realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = halo_strdup(de->d_name);
        }
    }
    closedir(dp);
    if (n > 1) {
        qsort(names, (size_t)n, sizeof *names, cmp_name);
    }
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sb_puts(&sb, "# halo experiments\n\n"
                      "Figures made by `halo sweep` from the experiment files in `experiments/` "
                      "(docs/experiments.md).\nRegenerate all of them with `make experiments` "
                      "(`QUICK=1` for the quick variants) and this page with `make report`.\n\n");
    int rc = 0;
    halo_json **metas = HALO_NEW(halo_json *, n + 1);
    for (int i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = halo_json_load(path, &metas[i]);
        if (rc < 0) {
            rc = halo_error_prefix(rc, "report");
            break;
        }
    }
    if (rc == 0 && n == 0) {
        halo_sb_puts(&sb, "No figures yet.\n");
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        /* a table of contents with GitHub's heading anchors */
        const char *t = jstr(metas[i], "title");
        halo_sb_puts(&sb, "- [");
        md_text(&sb, t);
        halo_sb_puts(&sb, "](#");
        for (const char *c = t; *c; c++) {
            unsigned char ch = (unsigned char)*c;
            if (isalnum(ch) || ch == '-' || ch == '_' || ch >= 0x80) {
                halo_sb_putc(&sb, (char)tolower(ch));
            } else if (ch == ' ') {
                halo_sb_putc(&sb, '-');
            }
        }
        halo_sb_puts(&sb, ")\n");
    }
    halo_sb_putc(&sb, '\n');
    for (int i = 0; rc == 0 && i < n; i++) {
        md_figure(&sb, metas[i], names[i]);
        (*figures)++;
    }
    for (int i = 0; i < n; i++) {
        halo_json_free(metas[i]);
    }
    halo_free(metas);
    if (rc == 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/index.md", dir);
        rc = halo_file_write_atomic(path, sb.buf, sb.len);
    }
    halo_sb_free(&sb);
    for (int i = 0; i < n; i++) {
        halo_free(names[i]);
    }
    halo_free(names);
    return rc;
}
