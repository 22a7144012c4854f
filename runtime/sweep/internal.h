/* What the files of runtime/sweep share: settings lookup, hashing, value text, commands and
 * subprocesses, measures, the CSV and data tables, the gnuplot script and meta.json. */
#ifndef HALO_SWEEP_INTERNAL_H
#define HALO_SWEEP_INTERNAL_H

#include "core/json.h"
#include "sweep/sweep.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bit of a mode in a mask. */
#define HALO_SWEEP_M(mode) (1u << (mode))

/* A key of the run section: the flag it becomes and the modes whose commands take it. */
typedef struct halo_sweep_runkey {
    const char *name; /* key in the file ("sampler_threads") */
    const char *flag; /* flag ("--sampler-threads"; NULL: handled by the driver) */
    unsigned modes;   /* HALO_SWEEP_M bits of the modes that pass it */
} halo_sweep_runkey;

/* The run section's keys (NULL-terminated). */
extern const halo_sweep_runkey halo_sweep_runkeys[];
/* The trace section's keys (NULL-terminated). */
extern const char *const halo_sweep_tracekeys[];
/* The policies of trace = { policies = "all" } (NULL-terminated). */
extern const char *const halo_sweep_all_policies[];

/* Name of a mode ("sim", "run", "trace", "partition"). */
const char *halo_sweep_mode_name(int mode);
/* A setting's value, NULL when the point has none. */
const char *halo_sweep_get(const halo_sweep_point *p, const char *key);
/* FNV-1a over s and its NUL, continuing from h (start with HALO_SWEEP_HASH0). */
#define HALO_SWEEP_HASH0 0xcbf29ce484222325ull
uint64_t halo_sweep_hash(uint64_t h, const char *s);
/* 16 hex digits of a mixed hash into out[17]. */
void halo_sweep_hex(uint64_t h, char *out);
/* The first line a shell command prints, without its line end ("" when the command fails or
 * prints nothing; sweep/report.c). */
void halo_sweep_first_line(const char *cmd, char *out, size_t size);
/* Shortest decimal text that reads back to v (integers without a point). */
void halo_sweep_fmt_num(double v, char *buf, size_t size);
/* A label for a value: a policy or profile path "dir/name.lua" shows as "name", an unset
 * value as "(default)". */
void halo_sweep_label(const char *val, char *buf, size_t size);
/* True when s is a whole decimal number (the CSV's numeric columns). */
bool halo_sweep_is_num(const char *s, double *out);

/* ---- commands and subprocesses (exec.c) ---- */

/* One command line. */
typedef struct halo_sweep_cmd {
    char **argv; /* NULL-terminated, owned */
    int argc;    /* arguments */
    int cap;     /* room in argv */
    bool mpi;    /* runs under mpirun (environment for root) */
} halo_sweep_cmd;

void halo_sweep_cmd_init(halo_sweep_cmd *c);
void halo_sweep_cmd_add(halo_sweep_cmd *c, const char *arg);
void halo_sweep_cmd_free(halo_sweep_cmd *c);
/* The command as a shell line (arguments quoted where needed) appended to sb. */
void halo_sweep_cmd_text(const halo_sweep_cmd *c, halo_sb *sb);

/* The commands of one point. Paths are those the driver would use. */
typedef struct halo_sweep_plan {
    char gdir[4096];       /* graph directory (cache entry, or graph.dir) */
    char pdir[4096];       /* partition directory (cache entry) */
    char trc[4096];        /* trace file (trace mode) */
    char metrics[4096];    /* metrics file of the point's run */
    char log[4096];        /* the point's log */
    bool build_graph;      /* gen/import is needed (no graph.dir) */
    halo_sweep_cmd graph;  /* gen or import, output to gtmp */
    char gtmp[4200];       /* temporary graph directory */
    halo_sweep_cmd part;   /* partition, output to ptmp */
    char ptmp[4200];       /* temporary partition directory */
    halo_sweep_cmd record; /* trace record, output to ttmp (trace mode) */
    char ttmp[4200];       /* temporary trace file */
    halo_sweep_cmd main;   /* the measured command (argc 0: none, partition mode) */
} halo_sweep_plan;

/* Builds the commands of point p (exe: the halo binary; cache: the cache directory). Outputs
 * of cache entries go to temporary names (renamed when whole), or straight to the final names
 * when final_names is set (what --dry-run shows). */
int halo_sweep_plan_make(const halo_sweep_exp *e, const halo_sweep_point *p, const char *exe,
                         const char *cache, double timeout, bool final_names, halo_sweep_plan *pl);
void halo_sweep_plan_free(halo_sweep_plan *pl);

/* Runs c with stdout and stderr into log (appended), stdin from /dev/null, in its own process
 * group; after timeout seconds the group is sent SIGTERM, then SIGKILL. Returns 0 when it ran
 * and exited 0, else HALO_EIO with a one-line message (the log's last error line, or the
 * timeout). */
int halo_sweep_spawn(const halo_sweep_cmd *c, const char *log, double timeout);
/* Kills the running child's group and re-raises on SIGINT, SIGTERM and SIGHUP (install once). */
void halo_sweep_signals(void);

/* ---- measures (measure.c) ---- */

/* Whether a measure name exists, and for the mode: 1 known and valid, 0 unknown, -1 known but
 * not measured in this mode (modes then gets the mask of modes that measure it). */
int halo_sweep_measure_known(const char *name, int mode, unsigned *modes);
/* True when the measure comes from a metrics file (so partition mode runs a counts-only sim). */
bool halo_sweep_measure_from_metrics(const char *name, int mode);
/* Fills vals[i] for e->measures[i] from the point's outputs (NAN where a value is absent):
 * metrics (run, sim, partition with metric measures), pdir/partition.json, the replay's
 * output in the log (trace). Fails with a one-line message when a file cannot be parsed. */
int halo_sweep_measure(const halo_sweep_exp *e, const halo_sweep_plan *pl, double *vals);

/* ---- the CSV and the data table (csv.c) ---- */

/* A table of text cells by column name. */
typedef struct halo_sweep_table {
    char **cols;  /* column names */
    int ncols;    /* columns */
    char ***rows; /* rows[r][c], owned */
    int nrows;    /* rows */
} halo_sweep_table;

void halo_sweep_table_free(halo_sweep_table *t);
/* Column index by name, -1 when absent. */
int halo_sweep_table_col(const halo_sweep_table *t, const char *name);
/* Reads a CSV file (RFC 4180 quoting; rows with another field count and a last line without
 * a newline are skipped). A missing file is an empty table (0 columns) and not an error. */
int halo_sweep_csv_read(const char *path, halo_sweep_table *t);
/* Appends one CSV field (quoted when it holds a comma, a quote or a line break). */
void halo_sweep_csv_field(halo_sb *sb, const char *s);
/* The columns of NAME.csv for e: key, axes, rep, measures, status, error, seconds. */
void halo_sweep_csv_header(const halo_sweep_exp *e, halo_sb *sb);
/* Makes path hold the header of e: created when missing; rewritten atomically, with the old
 * rows' cells moved by column name, when its header differs. */
int halo_sweep_csv_prepare(const halo_sweep_exp *e, const char *path);
/* Appends one line with a single write (O_APPEND), then fsync. */
int halo_sweep_csv_append(const char *path, const char *line);

/* The figure's data: one row per configuration with an ok row (means over repetitions),
 * columns axes, measures, derived columns, reps; sorted as the points. Also the errors of the
 * failed points, for meta.json. */
typedef struct halo_sweep_data {
    halo_sweep_table t; /* the rows */
    int ok;             /* points whose latest row is ok */
    int failed;         /* points whose latest row failed */
    int missing;        /* points with no row */
    double seconds;     /* sum of the seconds of the points' latest rows */
    char **fail_key;    /* [failed] point keys */
    char **fail_axes;   /* [failed] "axis=value ..." */
    char **fail_error;  /* [failed] one-line errors */
} halo_sweep_data;

/* Builds the data of e from the rows of NAME.csv (csv), the latest row of each point. */
int halo_sweep_data_make(const halo_sweep_exp *e, const halo_sweep_table *csv, halo_sweep_data *d);
void halo_sweep_data_free(halo_sweep_data *d);
/* A cell for gnuplot's CSV reader, which does not honour quotes: commas become ';', quotes
 * '\'', line breaks spaces. */
void halo_sweep_plain(halo_sb *sb, const char *s);
/* NAME.data.csv: the data with commas and quotes in values replaced (gnuplot reads it). */
void halo_sweep_data_csv(const halo_sweep_data *d, halo_sb *sb);

/* ---- the figure (plot.c) ---- */

/* The standalone gnuplot script of the figure (reads NAME.data.csv, writes NAME.png/.svg). */
void halo_sweep_plot_script(const halo_sweep_exp *e, const halo_sweep_data *d, halo_sb *sb);

/* ---- the paper's ranges on a panel (plot_band.c) ---- */

/* A paper's range as one panel draws it. */
typedef struct halo_sweep_band {
    const halo_sweep_prange *r; /* the range */
    double lo;                  /* the band's bottom on the panel's y axis */
    double hi;                  /* its top */
    char over[128];             /* "" when the panel plots the range's column; else the label of
                                 * the baseline it is drawn against ("distdgl"): the panel plots
                                 * the measure the range's derived column is computed from */
} halo_sweep_band;

/* The bands panel pl draws (at most max) of e's ranges, over the figure's data d: a range of a
 * column pl plots on y (line, bars, scatter) or colours cells by (heatmap); or a range of a
 * derived column whose measure pl plots on y, through the derivation's inverse at the value of
 * its one baseline row. Never on a stacked panel, nor from 0 or below on a log axis. */
int halo_sweep_plot_bands(const halo_sweep_exp *e, const halo_sweep_data *d,
                          const halo_sweep_plot *pl, halo_sweep_band *out, int max);
/* Whether some panel of e draws the paper's range r. */
bool halo_sweep_plot_draws_range(const halo_sweep_exp *e, const halo_sweep_data *d,
                                 const halo_sweep_prange *r);
/* Runs gnuplot on DIR/NAME.gp from DIR, into temporary names renamed when whole. */
int halo_sweep_plot_draw(const char *dir, const char *name);

/* ---- meta.json (report.c) ---- */

/* Provenance and outcome of a sweep, for meta.json. */
typedef struct halo_sweep_meta_in {
    const char *command;      /* regenerating command */
    double started;           /* halo_now() at the start */
    double duration_s;        /* seconds the sweep ran */
    bool figure;              /* the PNG and SVG were drawn */
    const char *figure_error; /* why not ("" when drawn) */
    int reused;               /* points finished by an earlier sweep (their rows were kept) */
} halo_sweep_meta_in;

/* Writes DIR/NAME.meta.json atomically. */
int halo_sweep_meta_write(const halo_sweep_exp *e, const halo_sweep_data *d,
                          const halo_sweep_meta_in *in, const char *dir);

/* ---- freshness: the sources a figure depends on (report_fresh.c) ---- */

/* Source paths relative to the repository root. */
typedef struct halo_sweep_deps {
    char **paths; /* distinct paths, owned */
    int n;        /* count */
} halo_sweep_deps;

/* Whether p is a path relative to the repository root that may reach git as an argument:
 * letters, digits, _ - . /, no ".." component, no leading / or -. */
bool halo_sweep_repo_path_ok(const char *p);
/* Adds the modules a mode's commands run ("sim", "run", "trace", "partition", or several
 * joined by '+') and those every figure's graph and partition are built by. */
void halo_sweep_mode_deps(const char *mode, halo_sweep_deps *d);
/* The paths of e: its mode's, the sweep's measuring and drawing code, each policy file and
 * cluster profile its points use and the experiment file (those inside the repository of the
 * working directory), and its depends. */
void halo_sweep_exp_deps(const halo_sweep_exp *e, halo_sweep_deps *d);
void halo_sweep_deps_free(halo_sweep_deps *d);

/* The repository a reports directory lies in, or why freshness cannot be known. */
typedef struct halo_sweep_fresh {
    char dir[4096];     /* the reports directory (git -C) */
    char root[4096];    /* the repository root ("" when unknown) */
    char unknown[4200]; /* why freshness is unknown for every figure ("" when git answers) */
} halo_sweep_fresh;

/* Finds the repository of dir; never fails (f->unknown says why git cannot tell). */
int halo_sweep_fresh_open(const char *dir, halo_sweep_fresh *f);

enum {
    HALO_SWEEP_FRESH_OK = 0,      /* no commit since the figure's touches its sources */
    HALO_SWEEP_FRESH_STALE = 1,   /* some commit since touches them */
    HALO_SWEEP_FRESH_UNKNOWN = 2, /* git cannot tell (why says why, or f->unknown) */
};

/* One figure's freshness. */
typedef struct halo_sweep_verdict {
    int state;          /* HALO_SWEEP_FRESH_* */
    int commits;        /* commits since the figure's that touch its sources */
    char newest[48];    /* the newest of them */
    char changed[1024]; /* the dependencies they touch, comma-separated */
    char why[200];      /* why unknown, for this figure */
} halo_sweep_verdict;

/* Asks git which commits after commit (the figure's) up to HEAD touch the paths of d. */
void halo_sweep_fresh_check(const halo_sweep_fresh *f, const char *commit, const halo_sweep_deps *d,
                            halo_sweep_verdict *v);

#endif
