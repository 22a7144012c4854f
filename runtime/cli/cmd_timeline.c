/* halo timeline: draws a --timeline file (stage intervals per rank and batch) as a Gantt chart
 * with gnuplot, one lane per rank and stage, boxes coloured by batch, and prints how much of
 * each stage the compute hid. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "pipe/pipe.h"
#include "pipe/timeline.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One lane of the chart: a (rank, stage, thread) triple. */
typedef struct lane {
    int32_t rank;   /* rank */
    int order;      /* stage's place (known stages first, others as they appear) */
    char stage[12]; /* stage name */
    int32_t thread; /* thread */
} lane;

/* Stages of the main thread: what the preparation overlaps with. */
static int is_main_stage(const char *s)
{
    return strcmp(s, "compute") == 0 || strcmp(s, "allreduce") == 0;
}

static int stage_order(const char *s)
{
    static const char *const known[] = {"sample", "fetch", "copy", "compute", "allreduce", NULL};
    for (int i = 0; known[i] != NULL; i++) {
        if (strcmp(known[i], s) == 0) {
            return i;
        }
    }
    return 100;
}

static int cmp_lane(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->rank != y->rank) {
        return x->rank < y->rank ? -1 : 1;
    }
    if (x->order != y->order) {
        return x->order < y->order ? -1 : 1;
    }
    int c = strcmp(x->stage, y->stage);
    if (c != 0) {
        return c;
    }
    return (x->thread > y->thread) - (x->thread < y->thread);
}

static int find_lane(const lane *lanes, int n, const halo_timeline_event *e)
{
    for (int i = 0; i < n; i++) {
        if (lanes[i].rank == e->rank && lanes[i].thread == e->thread &&
            strcmp(lanes[i].stage, e->stage) == 0) {
            return i;
        }
    }
    return -1;
}

/* Length of [s, t) covered by the main-thread intervals of the same rank (they do not overlap
 * one another: one thread). O(events) per call; timelines are thousands of events. */
static double covered(const halo_timeline_event *ev, int64_t n, int32_t rank, double s, double t)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ev[i].rank == rank && is_main_stage(ev[i].stage)) {
            double a = ev[i].start > s ? ev[i].start : s;
            double b = ev[i].end < t ? ev[i].end : t;
            if (b > a) {
                sum += b - a;
            }
        }
    }
    return sum;
}

/* The first line of every script make_script writes (what --script replaces). */
#define TIMELINE_SCRIPT_SIG "# halo timeline chart"

/* Writes the gnuplot script (data inline) for the selected events into sb. */
static void make_script(halo_sb *sb, const halo_timeline_event *ev, int64_t n, const lane *lanes,
                        int nl, double t0, const char *out, const char *title, int width,
                        int height)
{
    halo_sb_printf(sb, TIMELINE_SCRIPT_SIG "\n"
                       "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                       "    set terminal pngcairo size %d,%d font ',9'\n"
                       "} else {\n"
                       "    set terminal png size %d,%d\n"
                       "}\n",
                   width, height, width, height);
    halo_sb_printf(sb, "set output '%s'\n", out);
    char t[256];
    snprintf(t, sizeof t, "%s", title);
    for (char *c = t; *c; c++) {
        *c = *c == '"' || *c == '\\' || *c == '\n' ? '\'' : *c;
    }
    halo_sb_printf(sb, "set title \"%s\" noenhanced\n", t);
    halo_sb_puts(sb, "set xlabel 'time (s)'\nunset key\nset grid xtics\n"
                     "set style fill solid 0.85 border lc rgb '#404040'\n");
    halo_sb_printf(sb, "set yrange [%g:%g]\n", nl - 0.3, -0.7); /* lane 0 on top */
    halo_sb_puts(sb, "set ytics (");
    for (int i = 0; i < nl; i++) {
        if (lanes[i].thread > 0 || (i + 1 < nl && lanes[i + 1].rank == lanes[i].rank &&
                                    strcmp(lanes[i + 1].stage, lanes[i].stage) == 0)) {
            halo_sb_printf(sb, "%s\"r%d %s/%d\" %d", i ? ", " : "", lanes[i].rank,
                           lanes[i].stage, lanes[i].thread, i);
        } else {
            halo_sb_printf(sb, "%s\"r%d %s\" %d", i ? ", " : "", lanes[i].rank, lanes[i].stage,
                           i);
        }
    }
    halo_sb_puts(sb, ") noenhanced\n");
    static const char *const colors[8] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                          "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    for (int c = 0; c < 8; c++) {
        halo_sb_printf(sb, "set linetype %d lc rgb '%s'\n", c + 1, colors[c]);
    }
    halo_sb_puts(sb, "$D << EOD\n");
    for (int64_t i = 0; i < n; i++) {
        int l = find_lane(lanes, nl, &ev[i]);
        double a = ev[i].start - t0, b = ev[i].end - t0;
        halo_sb_printf(sb, "%.6f %d %.6f %lld\n", (a + b) / 2, l, (b - a) / 2,
                       (long long)(ev[i].batch % 8) + 1);
    }
    halo_sb_puts(sb, "EOD\n");
    halo_sb_puts(sb, "plot $D using 1:2:3:(0.38):4 with boxxyerror lc variable\n");
}

/* Runs gnuplot on the script; the PNG is written to tmp and renamed to out when whole. */
static int run_gnuplot(const char *script, const char *tmp, const char *out)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        return halo_errorf(HALO_EIO, "timeline: gnuplot not found (install gnuplot-nox, or write "
                           "the script with --script FILE)");
    }
    FILE *g = popen("gnuplot", "w");
    if (g == NULL) {
        return halo_errorf(HALO_EIO, "timeline: cannot run gnuplot");
    }
    fputs(script, g);
    int st = pclose(g);
    if (st != 0 || !halo_path_exists(tmp)) {
        unlink(tmp);
        return halo_errorf(HALO_EIO, "timeline: gnuplot failed (status %d) drawing %s", st, out);
    }
    if (rename(tmp, out) != 0) {
        unlink(tmp);
        return halo_errorf(HALO_EIO, "timeline: cannot rename %s to %s", tmp, out);
    }
    return 0;
}

/* The checks of the flags before reading: one FILE, an output, outputs that replace only a
 * previous chart or script, a quote-free -o path (it goes into the script) and the size. */
static int timeline_check(int npos, const char *out, const char *script, int width, int height)
{
    if (npos != 1) {
        return halo_errorf(HALO_EUSAGE, "timeline: expected one FILE (got %d)", npos);
    }
    if (out == NULL && script == NULL) {
        return halo_errorf(HALO_EUSAGE, "timeline: -o OUT.png is required");
    }
    int rc = 0;
    if (out != NULL) {
        rc = halo_output_file_check(out, "PNG chart", "\x89PNG", false);
    }
    if (rc == 0 && script != NULL) {
        rc = halo_output_file_check(script, "gnuplot script", TIMELINE_SCRIPT_SIG, false);
    }
    if (rc < 0) {
        return rc;
    }
    if ((out != NULL && strpbrk(out, "'\n") != NULL) || width < 200 || width > 20000 ||
        height < 0 || height > 20000) {
        return halo_errorf(HALO_EUSAGE, "timeline: bad -o path (no quotes) or size (width "
                           "200..20000)");
    }
    return 0;
}

/* The time span, batch and rank counts of one epoch's events. */
typedef struct span {
    double t0, t1;   /* first start and last end, s */
    int64_t batches; /* largest batch + 1 */
    int ranks;       /* largest rank + 1 */
} span;

/* The lanes of the events ev[0..m) (one per rank, stage and thread; at most 400) into lanes
 * (room for m), in rank, stage, thread order, and their span. */
static int timeline_lanes(const char *file, const halo_timeline_event *ev, int64_t m, lane *lanes,
                          int *nlanes, span *sp)
{
    int nl = 0;
    *sp = (span){.t0 = ev[0].start, .t1 = ev[0].end};
    for (int64_t i = 0; i < m; i++) {
        sp->t0 = ev[i].start < sp->t0 ? ev[i].start : sp->t0;
        sp->t1 = ev[i].end > sp->t1 ? ev[i].end : sp->t1;
        sp->batches = ev[i].batch + 1 > sp->batches ? ev[i].batch + 1 : sp->batches;
        sp->ranks = ev[i].rank + 1 > sp->ranks ? ev[i].rank + 1 : sp->ranks;
        if (find_lane(lanes, nl, &ev[i]) < 0) {
            if (nl >= 400) {
                return halo_errorf(HALO_EINPUT, "%s: more than 400 lanes (rank x stage x thread)",
                                   file);
            }
            lane *l = &lanes[nl++];
            l->rank = ev[i].rank;
            l->thread = ev[i].thread;
            l->order = stage_order(ev[i].stage);
            memcpy(l->stage, ev[i].stage, sizeof l->stage);
        }
    }
    qsort(lanes, (size_t)nl, sizeof *lanes, cmp_lane);
    *nlanes = nl;
    return 0;
}

/* Prints the span of the epoch and each stage's busy time per rank (all ranks) with the part of
 * it that overlapped the same rank's compute/allreduce (hidden). */
static void timeline_busy(const char *file, int epoch, const halo_timeline_event *ev, int64_t m,
                          const lane *lanes, int nl, const span *sp)
{
    printf("timeline: %s, epoch %d, %d rank%s, %lld batches, span %.3f s\n", file, epoch,
           sp->ranks, sp->ranks == 1 ? "" : "s", (long long)sp->batches, sp->t1 - sp->t0);
    printf("  %-10s %12s %10s\n", "stage", "busy s/rank", "hidden");
    for (int i = 0; i < nl; i++) {
        bool first = true;
        for (int j = 0; j < i; j++) {
            first = first && strcmp(lanes[j].stage, lanes[i].stage) != 0;
        }
        if (!first) {
            continue;
        }
        double busy = 0, hid = 0;
        for (int64_t k = 0; k < m; k++) {
            if (strcmp(ev[k].stage, lanes[i].stage) == 0) {
                busy += ev[k].end - ev[k].start;
                if (!is_main_stage(ev[k].stage)) {
                    hid += covered(ev, m, ev[k].rank, ev[k].start, ev[k].end);
                }
            }
        }
        if (is_main_stage(lanes[i].stage)) {
            printf("  %-10s %12.4f %10s\n", lanes[i].stage, busy / sp->ranks, "-");
        } else {
            printf("  %-10s %12.4f %9.1f%%\n", lanes[i].stage, busy / sp->ranks,
                   busy > 0 ? 100.0 * hid / busy : 0.0);
        }
    }
}

/* Keeps the events of the epoch *epoch (below 0: the first in the file, written back) at the
 * front of ev[0..n); returns their number. */
static int64_t keep_epoch(halo_timeline_event *ev, int64_t n, int *epoch)
{
    if (*epoch < 0) {
        *epoch = ev[0].epoch;
        for (int64_t i = 1; i < n; i++) {
            *epoch = ev[i].epoch < *epoch ? ev[i].epoch : *epoch;
        }
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ev[i].epoch == *epoch) {
            ev[m++] = ev[i];
        }
    }
    return m;
}

int halo_cmd_timeline(int argc, char **argv)
{
    const char *out = NULL, *script = NULL, *title = NULL;
    int epoch = -1, width = 1400, height = 0;
    const halo_opt opts[] = {
        {"output", 'o', HALO_OPT_STRING, &out, "OUT.png", "the chart (PNG)"},
        {"epoch", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &epoch, "E",
         "epoch to draw (-1: the first in the file)"},
        {"title", 0, HALO_OPT_STRING, &title, "TEXT", "chart title"},
        {"width", 0, HALO_OPT_INT, &width, "PX", "image width"},
        {"height", 0, HALO_OPT_INT, &height, "PX", "image height (0: 22 px per lane)"},
        {"script", 0, HALO_OPT_STRING, &script, "FILE",
         "also write the gnuplot script (data inline) to FILE"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo timeline FILE -o OUT.png [--epoch E] [--title TEXT] [--script FILE]",
        "Draws a timeline written by `halo train --timeline FILE` as a Gantt chart: one lane per\n"
        "rank and stage (sample and fetch on the pipeline's threads, compute and allreduce on\n"
        "the trainer's), one box per batch, coloured by batch number (mod 8), so the batches in\n"
        "flight at once show as a staircase. Prints each stage's busy time and the share of it\n"
        "that ran while the same rank computed (hidden). Needs gnuplot (pngcairo or png).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos = 0;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    rc = timeline_check(npos, out, script, width, height);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_timeline_event *ev = NULL;
    int64_t n = 0;
    rc = halo_timeline_read(pos[0], &ev, &n);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    int64_t m = keep_epoch(ev, n, &epoch);
    lane *lanes = NULL;
    int nl = 0;
    halo_sb sb;
    halo_sb_init(&sb);
    char tmp[4200] = "";
    if (m == 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: no events of epoch %d", pos[0], epoch);
        goto fail;
    }
    lanes = HALO_ALLOC(lane, m);
    span sp;
    rc = timeline_lanes(pos[0], ev, m, lanes, &nl, &sp);
    if (rc < 0) {
        goto fail;
    }
    double t0 = sp.t0;
    timeline_busy(pos[0], epoch, ev, m, lanes, nl, &sp);

    char deftitle[256];
    snprintf(deftitle, sizeof deftitle, "%s, epoch %d", pos[0], epoch);
    if (out != NULL) {
        snprintf(tmp, sizeof tmp, "%s.tmp-%d", out, (int)getpid());
    }
    make_script(&sb, ev, m, lanes, nl, t0, out != NULL ? tmp : "/dev/null",
                title != NULL ? title : deftitle, width, height > 0 ? height : 120 + 22 * nl);
    if (script != NULL) {
        rc = halo_file_write_atomic(script, sb.buf, sb.len);
        if (rc < 0) {
            goto fail;
        }
    }
    if (out != NULL) {
        rc = run_gnuplot(sb.buf, tmp, out);
        if (rc < 0) {
            goto fail;
        }
        printf("wrote %s (%d lanes)\n", out, nl);
    }
fail:
    halo_sb_free(&sb);
    halo_free(lanes);
    halo_free(ev);
    return rc < 0 ? halo_cli_fail(rc) : 0;
}
