/* The figure: a standalone gnuplot script over NAME.data.csv (line, bars, stacked, heatmap and
 * scatter panels, several in a multiplot), and running gnuplot on it into temporary names. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A gnuplot double-quoted string literal of s. */
static void gp_str(halo_sb *sb, const char *s)
{
    halo_sb_putc(sb, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            halo_sb_putc(sb, '\\');
        }
        halo_sb_putc(sb, *s == '\n' ? ' ' : *s);
    }
    halo_sb_putc(sb, '"');
}

/* The literal of a data cell as gnuplot reads it from NAME.data.csv (commas replaced). */
static void gp_cell(halo_sb *sb, const char *s)
{
    halo_sb plain;
    halo_sb_init(&plain);
    halo_sweep_plain(&plain, s);
    gp_str(sb, plain.buf ? plain.buf : "");
    halo_sb_free(&plain);
}

/* A legend or tic label of a value. */
static void gp_label(halo_sb *sb, const char *s)
{
    char buf[512];
    halo_sweep_label(s, buf, sizeof buf);
    gp_str(sb, buf);
}

/* Words for the columns a legend title, a stacked bar or a colour bar names: axes and measures
 * (an experiment's xlabel/ylabel still wins for the axes' own labels). */
static const char *const col_words[][2] = {
    {"run.policy", "system"},
    {"run.depth", "pipeline depth"},
    {"run.machines", "machines"},
    {"run.trainers", "GPUs per machine"},
    {"run.batch", "batch size"},
    {"run.fanouts", "fanouts"},
    {"run.hidden", "hidden units"},
    {"run.cluster", "cluster"},
    {"run.netem", "emulated network"},
    {"run.sampler_threads", "sampler threads"},
    {"run.set.f", "prefetch fraction f"},
    {"run.set.alpha", "score decay alpha"},
    {"run.set.delta", "eviction period delta"},
    {"graph.preset", "graph"},
    {"graph.scale", "graph scale"},
    {"graph.nodes", "nodes"},
    {"partition.method", "partitioner"},
    {"partition.parts", "parts"},
    {"partition.machines", "machines"},
    {"partition.trainers_per_part", "trainers per part"},
    {"trace.policy", "cache policy"},
    {"trace.capacity", "cache capacity"},
    {"reps", "runs"},
    {"epoch_s", "epoch time (s)"},
    {"time_s", "time per rank (s)"},
    {"sample_s", "sample"},
    {"fetch_s", "fetch"},
    {"copy_s", "copy to device"},
    {"compute_s", "compute"},
    {"allreduce_s", "allreduce"},
    {"wait_s", "wait for the pipeline"},
    {"hit_rate", "hit rate"},
    {"remote_mb", "remote MB"},
    {"sent_mb", "sent MB"},
    {"edge_cut", "edge cut (fraction)"},
    {"replication", "replication factor"},
    {"test_acc", "test accuracy"},
    {"val_acc", "validation accuracy"},
    {"train_acc", "training accuracy"},
    {"improvement", "improvement (%)"},
    {"speedup", "speedup"},
    {"of_belady", "fraction of Belady's hit rate"},
};

/* The words for a column: the table's, else its last dotted part with '_' as spaces
 * ("run.set.beta" is "beta", "rel_epoch" is "rel epoch"). */
static void col_label(const char *col, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof col_words / sizeof col_words[0]; i++) {
        if (strcmp(col_words[i][0], col) == 0) {
            snprintf(buf, size, "%s", col_words[i][1]);
            return;
        }
    }
    const char *dot = strrchr(col, '.');
    snprintf(buf, size, "%s", dot ? dot + 1 : col);
    for (char *c = buf; *c; c++) {
        *c = *c == '_' ? ' ' : *c;
    }
}

/* A column's words as a gnuplot string. */
static void gp_col(halo_sb *sb, const char *col)
{
    char buf[256];
    col_label(col, buf, sizeof buf);
    gp_str(sb, buf);
}

/* Distinct values of a column, in data order, or numeric order when all are numbers. */
typedef struct cats {
    const char **v; /* values (point into the table) */
    int n;          /* count */
    bool numeric;   /* every value is a number */
} cats;

static int cmp_num_text(const void *a, const void *b)
{
    double x = strtod(*(const char *const *)a, NULL), y = strtod(*(const char *const *)b, NULL);
    return (x > y) - (x < y);
}

static void cats_make(const halo_sweep_table *t, int col, cats *c)
{
    c->v = HALO_NEW(const char *, t->nrows + 1);
    c->n = 0;
    c->numeric = true;
    for (int r = 0; r < t->nrows; r++) {
        const char *s = t->rows[r][col];
        bool seen = false;
        for (int i = 0; i < c->n && !seen; i++) {
            seen = strcmp(c->v[i], s) == 0;
        }
        if (!seen) {
            c->v[c->n++] = s;
            c->numeric = c->numeric && halo_sweep_is_num(s, NULL);
        }
    }
    if (c->numeric) {
        qsort(c->v, (size_t)c->n, sizeof *c->v, cmp_num_text);
    }
}

/* Writes the category function NAME(s) = index of s, NaN for others. */
static void cat_func(halo_sb *sb, const char *name, const cats *c)
{
    halo_sb_printf(sb, "%s(s) = ", name);
    for (int i = 0; i < c->n; i++) {
        halo_sb_puts(sb, "(s eq ");
        gp_cell(sb, c->v[i]);
        halo_sb_printf(sb, ") ? %d : ", i);
    }
    halo_sb_puts(sb, "NaN\n");
}

/* Writes "set Xtics (label 0, label 1, ...)". */
static void cat_tics(halo_sb *sb, const char *axis, const cats *c)
{
    halo_sb_printf(sb, "    set %stics (", axis);
    for (int i = 0; i < c->n; i++) {
        gp_label(sb, c->v[i]);
        halo_sb_printf(sb, " %d%s", i, i + 1 < c->n ? ", " : "");
    }
    halo_sb_puts(sb, ")\n");
}

/* What the script knows about one panel. */
typedef struct panel {
    const halo_sweep_plot *pl; /* the plot table */
    cats x;                    /* x values */
    cats y;                    /* y values (heatmap) */
    cats s;                    /* series values (n = 0: no series) */
    bool xcat;                 /* x is categorical (index positions) */
    halo_sweep_band band[8];   /* the paper's ranges this panel draws */
    int nband;                 /* ranges drawn */
} panel;

/* Band colours of the paper's ranges, in order. */
static const char *const band_rgb[] = {"#7f7f7f", "#4a90d9", "#d9a441"};

/* The legend text of a band: "paper: 2-3x (DistDGLv2)", or "paper: 2-3x over distdgl
 * (DistDGLv2)" when drawn on the measure a derived column is computed from. */
static void band_title(halo_sb *sb, const char *lead, const halo_sweep_band *b)
{
    const halo_sweep_prange *r = b->r;
    char lo[40], hi[40], num[100], t[400];
    halo_sweep_fmt_num(r->lo, lo, sizeof lo);
    halo_sweep_fmt_num(r->hi, hi, sizeof hi);
    if (r->lo == r->hi) {
        snprintf(num, sizeof num, "%s%s", lo, r->unit);
    } else {
        snprintf(num, sizeof num, "%s-%s%s", lo, hi, r->unit);
    }
    snprintf(t, sizeof t, "%s%s%s%s (%s)", lead, num, b->over[0] ? " over " : "", b->over,
             r->source);
    gp_str(sb, t);
}

/* The datablocks $pIbandR of a panel's bands: two rows (x from, lo, hi) and (x to, lo, hi) that
 * span the panel's x values, so that the band also widens the y range to the paper's (none for
 * a heatmap). */
static void band_tables(halo_sb *sb, int i, const panel *p)
{
    if (p->pl->kind == HALO_SWEEP_HEATMAP) {
        return; /* a heatmap outlines its cells instead */
    }
    double from, to;
    if (p->xcat) {
        from = -0.6;
        to = p->x.n - 0.4;
    } else {
        from = strtod(p->x.v[0], NULL);
        to = strtod(p->x.v[p->x.n - 1], NULL);
        if (from == to) {
            from = from > 0 ? from * 0.9 : from - 0.5;
            to = to > 0 ? to * 1.1 : to + 0.5;
        }
    }
    for (int r = 0; r < p->nband; r++) {
        halo_sb_printf(sb, "$p%dband%d << EOD\n%.15g %.15g %.15g\n%.15g %.15g %.15g\nEOD\n", i, r,
                       from, p->band[r].lo, p->band[r].hi, to, p->band[r].lo, p->band[r].hi);
    }
}

/* The plot items of a panel's bands, drawn first (behind the data), each followed by a comma. */
static void plot_bands(halo_sb *sb, int i, const panel *p)
{
    for (int r = 0; r < p->nband; r++) {
        halo_sb_printf(sb,
                       "$p%dband%d using 1:2:3 with filledcurves fs transparent solid 0.22 "
                       "noborder fc rgb \"%s\" title ",
                       i, r, band_rgb[r % 3]);
        band_title(sb, "paper: ", &p->band[r]);
        halo_sb_puts(sb, ", \\\n        ");
    }
}

/* A heatmap's cells whose value lies in a paper's range, outlined, after the cells; the legend
 * entry is a keyentry so that it shows even when no cell is in the range. */
static void plot_heat_bands(halo_sb *sb, int i, const panel *p)
{
    for (int r = 0; r < p->nband; r++) {
        const char *rgb = r == 0 ? "black" : band_rgb[r % 3];
        halo_sb_printf(sb,
                       ", \\\n        $p%ds0 using (($3 >= %.15g && $3 <= %.15g) ? $1 : NaN):2:"
                       "(0.47):(0.47) with boxxyerror fs empty lc rgb \"%s\" lw 2.5 notitle"
                       ", \\\n        keyentry with boxes fs empty lc rgb \"%s\" lw 2.5 title ",
                       i, p->band[r].lo, p->band[r].hi, rgb, rgb);
        band_title(sb, "paper's range: ", &p->band[r]);
    }
}

/* The x expression of a panel's table. */
static void x_expr(halo_sb *sb, int i, const panel *p)
{
    if (p->xcat) {
        halo_sb_printf(sb, "(p%dx(strcol(", i);
        gp_str(sb, p->pl->x);
        halo_sb_puts(sb, ")))");
    } else {
        halo_sb_puts(sb, "(column(");
        gp_str(sb, p->pl->x);
        halo_sb_puts(sb, "))");
    }
}

static void col_expr(halo_sb *sb, const char *col)
{
    halo_sb_puts(sb, "(column(");
    gp_str(sb, col);
    halo_sb_puts(sb, "))");
}

/* The datablock $pI (or $pIsJ for series J) holding the panel's numbers. */
static void panel_tables(halo_sb *sb, int i, const panel *p)
{
    int ns = p->s.n > 0 ? p->s.n : 1;
    for (int j = 0; j < ns; j++) {
        halo_sb_printf(sb, "set table $p%ds%d\n", i, j);
        halo_sb_puts(sb, "plot data using ");
        x_expr(sb, i, p);
        if (p->pl->kind == HALO_SWEEP_HEATMAP) {
            halo_sb_printf(sb, ":(p%dy(strcol(", i);
            gp_str(sb, p->pl->y[0]);
            halo_sb_puts(sb, "))):");
            col_expr(sb, p->pl->z);
        } else {
            for (int k = 0; k < p->pl->ny; k++) {
                halo_sb_putc(sb, ':');
                col_expr(sb, p->pl->y[k]);
            }
        }
        halo_sb_puts(sb, " with table");
        if (p->s.n > 0) {
            halo_sb_puts(sb, " if (strcol(");
            gp_str(sb, p->pl->series);
            halo_sb_puts(sb, ") eq ");
            gp_cell(sb, p->s.v[j]);
            halo_sb_puts(sb, ")");
        }
        halo_sb_puts(sb, "\nunset table\n");
    }
}

/* The plot items of a line or scatter panel: one per series and y column (after the y = x
 * diagonal when asked for). */
static void plot_lines(halo_sb *sb, int i, const panel *p, int ns)
{
    const halo_sweep_plot *pl = p->pl;
    const char *style = pl->kind == HALO_SWEEP_LINE ? "smooth unique with linespoints lw 2 pt 7"
                                                    : "with points pt 7 ps 1.3";
    if (pl->diagonal) {
        halo_sb_puts(sb, "x with lines dt 2 lc rgb \"gray50\" title \"y = x\", ");
    }
    int n = 0;
    for (int j = 0; j < ns; j++) {
        for (int k = 0; k < pl->ny; k++) {
            halo_sb_printf(sb, "%s$p%ds%d using 1:%d %s title ", n++ ? ", \\\n        " : "", i, j,
                           k + 2, style);
            if (p->s.n > 0) {
                gp_label(sb, p->s.v[j]);
            } else if (pl->ny > 1) {
                gp_col(sb, pl->y[k]);
            } else {
                halo_sb_puts(sb, "\"\"");
            }
        }
    }
}

/* The plot items of a bars or stacked panel: boxes side by side per series (stacked: the y
 * columns summed, drawn from the tallest down). */
static void plot_bars(halo_sb *sb, int i, const panel *p, int ns)
{
    const halo_sweep_plot *pl = p->pl;
    double w = 0.8 / ns;
    int n = 0;
    for (int j = 0; j < ns; j++) {
        double off = (j - (ns - 1) / 2.0) * w;
        int parts = pl->kind == HALO_SWEEP_STACKED ? pl->ny : 1;
        for (int k = parts; k >= 1; k--) {
            halo_sb_printf(sb, "%s$p%ds%d using ($1%+.4f):(", n++ ? ", \\\n        " : "", i, j,
                           off);
            for (int q = 1; q <= k; q++) {
                halo_sb_printf(sb, "%s$%d", q > 1 ? "+" : "", q + 1);
            }
            halo_sb_printf(sb, "):(%.4f) with boxes fs solid 0.85 border lc \"black\"", w * 0.95);
            if (pl->kind == HALO_SWEEP_STACKED) {
                halo_sb_printf(sb, " lc %d title ", k);
                if (j == 0) {
                    gp_col(sb, pl->y[k - 1]);
                } else {
                    halo_sb_puts(sb, "\"\"");
                }
            } else {
                halo_sb_printf(sb, " lc %d title ", j + 1);
                if (p->s.n > 0) {
                    gp_label(sb, p->s.v[j]);
                } else {
                    halo_sb_puts(sb, "\"\"");
                }
            }
        }
    }
}

/* The plot command of one panel (inside the terminal loop). */
static void panel_plot(halo_sb *sb, int i, const panel *p, const char *title)
{
    const halo_sweep_plot *pl = p->pl;
    halo_sb_puts(sb, "    set autoscale\n    unset logscale\n    unset title\n"
                     "    set xtics autofreq norotate\n    set ytics autofreq\n"
                     "    set key default\n    set key noenhanced\n    set grid\n"
                     "    unset rmargin\n    unset bmargin\n");
    if (title != NULL) {
        halo_sb_puts(sb, "    set title ");
        gp_str(sb, title);
        halo_sb_putc(sb, '\n');
    }
    halo_sb_puts(sb, "    set xlabel ");
    if (pl->xlabel) {
        gp_str(sb, pl->xlabel);
    } else {
        gp_col(sb, pl->x);
    }
    halo_sb_puts(sb, "\n    set ylabel ");
    if (pl->ylabel || pl->kind == HALO_SWEEP_STACKED) {
        gp_str(sb, pl->ylabel ? pl->ylabel : "");
    } else {
        gp_col(sb, pl->y[0]);
    }
    halo_sb_putc(sb, '\n');
    if (pl->logx && !p->xcat) {
        halo_sb_puts(sb, "    set logscale x\n");
    }
    if (pl->logy && pl->kind != HALO_SWEEP_HEATMAP) {
        halo_sb_puts(sb, "    set logscale y\n");
    }
    if (p->s.n > 0) {
        halo_sb_puts(sb, "    set key title ");
        gp_col(sb, pl->series);
        halo_sb_putc(sb, '\n');
    }
    if (p->xcat) {
        cat_tics(sb, "x", &p->x);
        halo_sb_printf(sb, "    set xrange [-0.6:%d.6]\n", p->x.n - 1);
        size_t longest = 0;
        for (int k = 0; k < p->x.n; k++) {
            char lb[512];
            halo_sweep_label(p->x.v[k], lb, sizeof lb);
            longest = strlen(lb) > longest ? strlen(lb) : longest;
        }
        if (longest * (size_t)p->x.n > 60) {
            halo_sb_puts(sb, "    set xtics rotate by -30\n");
        }
    }
    int ns = p->s.n > 0 ? p->s.n : 1;
    bool one = p->s.n == 0 && (pl->ny == 1 || pl->kind == HALO_SWEEP_HEATMAP) && !pl->diagonal &&
               p->nband == 0;
    if (pl->kind == HALO_SWEEP_HEATMAP && p->nband > 0) {
        /* the outlines' legend under the panel, from its left edge */
        halo_sb_puts(sb, "    set key below left reverse Left samplen 2\n    set bmargin 5.5\n");
    }
    if (one) {
        halo_sb_puts(sb, "    unset key\n    set offsets 0, 0, 0, 0\n");
    } else if (pl->kind != HALO_SWEEP_HEATMAP) {
        /* room above the data for the key: its title and entries (a band's is one more) */
        int entries = (p->s.n > 0 ? p->s.n + 1 : pl->ny) + p->nband + pl->diagonal;
        double room = 0.07 * entries > 0.25 ? 0.07 * entries : 0.25;
        halo_sb_printf(sb, "    set offsets 0, 0, graph %.2f, 0\n", room);
    }
    if ((pl->kind == HALO_SWEEP_BARS || pl->kind == HALO_SWEEP_STACKED) && !pl->logy) {
        halo_sb_puts(sb, "    set yrange [0:*]\n");
    }
    if (pl->kind == HALO_SWEEP_HEATMAP) {
        cat_tics(sb, "y", &p->y);
        halo_sb_printf(sb, "    set yrange [-0.5:%d.5]\n    unset grid\n    set cblabel ",
                       p->y.n - 1);
        gp_col(sb, pl->z);
        /* room right of the colour bar's tics for its label */
        halo_sb_puts(sb, " offset char 2,0\n    set rmargin 12\n");
    }
    halo_sb_puts(sb, "    plot ");
    if (pl->kind != HALO_SWEEP_HEATMAP) {
        plot_bands(sb, i, p);
    }
    switch (pl->kind) {
    case HALO_SWEEP_LINE:
    case HALO_SWEEP_SCATTER: plot_lines(sb, i, p, ns); break;
    case HALO_SWEEP_BARS:
    case HALO_SWEEP_STACKED: plot_bars(sb, i, p, ns); break;
    case HALO_SWEEP_HEATMAP:
        halo_sb_printf(sb,
                       "$p%ds0 using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder "
                       "lc palette notitle, \\\n        $p%ds0 using 1:2:(sprintf(\"%%.3g\", $3)) "
                       "with labels notitle",
                       i, i);
        plot_heat_bands(sb, i, p);
        break;
    default: break;
    }
    halo_sb_putc(sb, '\n');
}

void halo_sweep_plot_script(const halo_sweep_exp *e, const halo_sweep_data *d, halo_sb *sb)
{
    const halo_sweep_table *t = &d->t;
    panel *ps = HALO_NEW(panel, e->nplots + 1);
    halo_sb_printf(sb, "# %s.gp: the figure of %s, written by `halo sweep`.\n", e->name, e->path);
    halo_sb_printf(sb,
                   "# Edit and rerun from this directory: `gnuplot %s.gp` reads %s.data.csv "
                   "(one row per\n# finished configuration, columns by name; failed points "
                   "are not in it) and writes\n# %s.png (pngcairo) and %s.svg.\n",
                   e->name, e->name, e->name, e->name);
    halo_sb_printf(sb, "if (!exists(\"data\")) data = \"%s.data.csv\"\n", e->name);
    halo_sb_printf(sb, "if (!exists(\"out\")) out = \"%s\"\n", e->name);
    halo_sb_puts(sb, "set datafile separator comma\nset datafile columnheaders\n"
                     "set datafile missing \"NaN\"\n\n");
    for (int i = 0; i < e->nplots; i++) {
        panel *p = &ps[i];
        p->pl = &e->plots[i];
        int xc = halo_sweep_table_col(t, p->pl->x);
        cats_make(t, xc, &p->x);
        p->xcat = p->pl->kind == HALO_SWEEP_BARS || p->pl->kind == HALO_SWEEP_STACKED ||
                  p->pl->kind == HALO_SWEEP_HEATMAP || !p->x.numeric;
        if (p->pl->kind == HALO_SWEEP_HEATMAP) {
            cats_make(t, halo_sweep_table_col(t, p->pl->y[0]), &p->y);
        }
        if (p->pl->series != NULL) {
            cats_make(t, halo_sweep_table_col(t, p->pl->series), &p->s);
        }
        halo_sb_printf(
            sb, "# panel %d: %s of %s", i + 1,
            (const char *[]){"line", "bars", "stacked", "heatmap", "scatter"}[p->pl->kind],
            p->pl->x);
        for (int k = 0; k < p->pl->ny; k++) {
            halo_sb_printf(sb, "%s%s", k ? ", " : " vs ", p->pl->y[k]);
        }
        halo_sb_putc(sb, '\n');
        if (p->xcat) {
            char fn[32];
            snprintf(fn, sizeof fn, "p%dx", i);
            cat_func(sb, fn, &p->x);
        }
        if (p->pl->kind == HALO_SWEEP_HEATMAP) {
            char fn[32];
            snprintf(fn, sizeof fn, "p%dy", i);
            cat_func(sb, fn, &p->y);
        }
        panel_tables(sb, i, p);
        p->nband = p->x.n > 0 ? halo_sweep_plot_bands(e, d, p->pl, p->band, 8) : 0;
        band_tables(sb, i, p);
        halo_sb_putc(sb, '\n');
    }
    halo_sb_puts(sb, "set datafile separator whitespace\nset datafile nocolumnheaders\n"
                     "set palette defined (0 \"#fff5eb\", 1 \"#d94801\")\n");
    int cols = e->nplots < 3 ? e->nplots : e->nplots == 4 ? 2 : 3;
    int rows = (e->nplots + cols - 1) / cols;
    int W = e->nplots == 1 ? 800 : 560 * cols, H = e->nplots == 1 ? 500 : 420 * rows;
    halo_sb_puts(sb, "\ndo for [fmt in \"png svg\"] {\n");
    halo_sb_printf(sb,
                   "    if (fmt eq \"png\") {\n        set terminal pngcairo noenhanced size "
                   "%d,%d font \"sans,10\"\n    } else {\n        set terminal svg "
                   "noenhanced size %d,%d font \"sans,10\" dynamic\n    }\n",
                   W, H, W, H);
    halo_sb_puts(sb, "    set output out.\".\".fmt\n");
    if (e->nplots > 1) {
        halo_sb_printf(sb, "    set multiplot layout %d,%d title ", rows, cols);
        gp_str(sb, e->title);
        halo_sb_putc(sb, '\n');
    }
    for (int i = 0; i < e->nplots; i++) {
        const char *title =
            e->nplots > 1 ? ps[i].pl->title : (ps[i].pl->title ? ps[i].pl->title : e->title);
        halo_sb_printf(sb, "    # panel %d\n", i + 1);
        panel_plot(sb, i, &ps[i], title);
    }
    if (e->nplots > 1) {
        halo_sb_puts(sb, "    unset multiplot\n");
    }
    halo_sb_puts(sb, "    unset output\n}\n");
    for (int i = 0; i < e->nplots; i++) {
        halo_free(ps[i].x.v);
        halo_free(ps[i].y.v);
        halo_free(ps[i].s.v);
    }
    halo_free(ps);
}

int halo_sweep_plot_draw(const char *dir, const char *name)
{
    char out[512], setv[700], script[600];
    snprintf(out, sizeof out, "%s.tmp-%d", name, (int)getpid());
    snprintf(setv, sizeof setv, "out=\"%s\"", out);
    snprintf(script, sizeof script, "%s.gp", name);
    int pfd[2];
    if (pipe(pfd) < 0) {
        return halo_errorf(HALO_EIO, "sweep: pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return halo_errorf(HALO_EIO, "sweep: cannot start gnuplot: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pfd[0]);
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) {
            dup2(in, 0);
        }
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        if (chdir(dir) < 0) {
            dprintf(2, "cannot enter %s: %s\n", dir, strerror(errno));
            _exit(126);
        }
        execlp("gnuplot", "gnuplot", "-e", setv, script, (char *)NULL);
        dprintf(2, "gnuplot not found (install gnuplot-nox): %s\n", strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    char msg[4096];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(pfd[0], msg + got, sizeof msg - 1 - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
        if (got >= sizeof msg - 1) {
            /* keep the tail: the error is at the end */
            memmove(msg, msg + sizeof msg / 2, got - sizeof msg / 2);
            got -= sizeof msg / 2;
        }
    }
    close(pfd[0]);
    msg[got] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char png[1100], svg[1100], tpng[1100], tsvg[1100];
    snprintf(tpng, sizeof tpng, "%s/%s.png", dir, out);
    snprintf(tsvg, sizeof tsvg, "%s/%s.svg", dir, out);
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    snprintf(svg, sizeof svg, "%s/%s.svg", dir, name);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !halo_path_exists(tpng) ||
        !halo_path_exists(tsvg)) {
        unlink(tpng);
        unlink(tsvg);
        /* the last non-empty line of gnuplot's complaint */
        char *last = NULL;
        for (char *s = strtok(msg, "\n"); s != NULL; s = strtok(NULL, "\n")) {
            if (strspn(s, " \t^") < strlen(s)) {
                last = s;
            }
        }
        return halo_errorf(HALO_EIO, "%s/%s.gp: gnuplot failed%s%s", dir, name, last ? ": " : "",
                           last ? last : "");
    }
    if (rename(tpng, png) < 0 || rename(tsvg, svg) < 0) {
        int e = errno;
        unlink(tpng);
        unlink(tsvg);
        return halo_errorf(HALO_EIO, "%s: %s", png, strerror(e));
    }
    return 0;
}
