/* The experiment driver behind `halo sweep` and `halo report`: an experiment file (a Lua data
 * table) expanded into points, each run as a subprocess of the halo binary on cached graphs and
 * partitions, measured into an append-only CSV, drawn by a standalone gnuplot script, summarised
 * in NAME.meta.json and, over all figures, in index.md (docs/experiments.md). */
#ifndef HALO_SWEEP_H
#define HALO_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What a point runs. */
enum {
    HALO_SWEEP_SIM = 0,       /* halo sim on a cluster profile */
    HALO_SWEEP_RUN = 1,       /* mpirun halo train */
    HALO_SWEEP_TRACE = 2,     /* halo trace record + halo trace replay */
    HALO_SWEEP_PARTITION = 3, /* the partition itself (and a counts-only halo sim when asked) */
};

/* Value kinds of a setting. */
enum { HALO_SWEEP_STR = 0, HALO_SWEEP_NUM = 1, HALO_SWEEP_BOOL = 2 };

/* One setting of a point: a dotted name and its value as canonical text. */
typedef struct halo_sweep_kv {
    char *key; /* "graph.nodes", "run.policy", "run.set.delta" */
    char *val; /* numbers in their shortest exact digits, lists comma-joined, true/false */
    int type;  /* HALO_SWEEP_STR / NUM / BOOL */
} halo_sweep_kv;

/* One point of the experiment: its full settings and what is derived from them. */
typedef struct halo_sweep_point {
    int index;         /* 0-based configuration index (repetitions share it) */
    int rep;           /* repetition, 0-based */
    halo_sweep_kv *kv; /* effective settings, sorted by key (owned) */
    int nkv;           /* settings */
    char key[17];      /* point key: hash of mode, settings and repetition (16 hex digits) */
    char gkey[19];     /* graph cache entry ("g-" + hash of the graph settings) */
    char pkey[19];     /* partition cache entry ("p-" + hash of gkey and partition settings) */
    char tkey[19];     /* trace cache entry ("t-" + hash of pkey and record settings), trace mode */
    char cluster[1024]; /* cluster profile path (sim mode, "" when none) */
    int parts;          /* parts of the partition (ranks) */
    int machines;       /* sim: --machines */
    int trainers;       /* sim: --trainers */
} halo_sweep_point;

/* A derived column, computed from the rows when the figure is drawn. */
typedef struct halo_sweep_derive {
    char *name;          /* column name */
    char *of;            /* measure it is computed from */
    char *op;            /* "baseline/value", "value/baseline", "improvement", "difference" */
    halo_sweep_kv *base; /* the baseline's axis values */
    int nbase;           /* baseline settings */
    char **by;           /* axes that must match the row's (default: every other axis) */
    int nby;             /* axes in by */
} halo_sweep_derive;

/* Kinds of figure panel. */
enum {
    HALO_SWEEP_LINE,
    HALO_SWEEP_BARS,
    HALO_SWEEP_STACKED,
    HALO_SWEEP_HEATMAP,
    HALO_SWEEP_SCATTER
};

/* One panel of the figure. Column names are axes, measures or derived columns. */
typedef struct halo_sweep_plot {
    int kind;      /* HALO_SWEEP_LINE ... */
    char *x;       /* x column */
    char **y;      /* y columns (several: stacked parts, or one curve each in a line plot) */
    int ny;        /* y columns */
    char *z;       /* heatmap value column (NULL otherwise) */
    char *series;  /* column whose values make one curve / bar group each (NULL: none) */
    char *title;   /* panel title (NULL: none) */
    char *xlabel;  /* x axis label (NULL: the x column) */
    char *ylabel;  /* y axis label (NULL: the y column) */
    bool logx;     /* logarithmic x axis */
    bool logy;     /* logarithmic y axis */
    bool diagonal; /* scatter: draw y = x */
} halo_sweep_plot;

/* A range a paper publishes for one of the figure's columns: drawn as a band on the panels that
 * plot the column (cells outlined on a heatmap) and listed in meta.json and index.md. */
typedef struct halo_sweep_prange {
    char *metric; /* the column: a measure or a derived column */
    double lo;    /* the paper's lowest value */
    double hi;    /* the paper's highest value (>= lo) */
    char *unit;   /* written after the numbers in the legend: "x", "%" or "" */
    char *source; /* who publishes it, for the legend ("DistDGLv2") */
} halo_sweep_prange;

/* A loaded and checked experiment. */
typedef struct halo_sweep_exp {
    char *path;                 /* the experiment file */
    char *name;                 /* output base name */
    char *title;                /* figure title */
    char *caption;              /* caption for index.md ("" when none) */
    char *paper;                /* the paper's claim in words ("" when none) */
    halo_sweep_prange *pranges; /* the paper's ranges (paper.ranges) */
    int npranges;               /* ranges */
    char **depends;             /* source paths the figure depends on beyond its mode's */
    int ndepends;               /* declared paths */
    int mode;                   /* HALO_SWEEP_* */
    bool quick;                 /* the quick table was merged in */
    int repeat;                 /* repetitions of every point */
    double timeout;             /* seconds per point from the file (0: not given) */
    char **measures;            /* measure names, in the file's order */
    int nmeasures;              /* measures */
    char **axes;                /* axis names, sorted */
    int naxes;                  /* axes */
    halo_sweep_point *pts;      /* points in run order (configurations x repetitions) */
    int npts;                   /* points */
    int nconfigs;               /* configurations (points / repeat) */
    halo_sweep_derive *derives; /* derived columns, sorted by name */
    int nderives;               /* derived columns */
    halo_sweep_plot *plots;     /* figure panels (none: no figure) */
    int nplots;                 /* panels */
} halo_sweep_exp;

/* Loads, merges (quick) and checks an experiment file and expands its points. Every mistake is
 * one HALO_EINPUT line "FILE:LINE: field KEY: what" (FILE: when the line is not found); Lua
 * errors keep the loader's FILE:LINE; a missing cluster profile or policy file is named. */
int halo_sweep_load(const char *path, bool quick, halo_sweep_exp **out);
void halo_sweep_free(halo_sweep_exp *e);

/* How a sweep runs. */
typedef struct halo_sweep_opts {
    const char *out_dir;   /* outputs (default "reports") */
    const char *cache_dir; /* graphs, partitions, traces, point logs (default OUT/.cache) */
    double timeout;        /* seconds per point (<= 0: the file's, else 600) */
    bool dry_run;          /* print the points and commands, run nothing */
    const char *exe;       /* the halo binary (NULL: /proc/self/exe) */
    const char *command;   /* the command line that regenerates the figure (for meta.json) */
} halo_sweep_opts;

/* Runs every point not already finished (status ok in OUT/NAME.csv), appending one CSV row per
 * point, then writes NAME.data.csv, NAME.gp (and runs gnuplot: NAME.png, NAME.svg) and
 * NAME.meta.json. Points that fail are recorded and counted in *failed; the return value is
 * negative only when the sweep itself cannot go on (outputs unwritable, no halo binary). */
int halo_sweep_run(const halo_sweep_exp *e, const halo_sweep_opts *o, int *failed);

/* What halo report found. */
typedef struct halo_sweep_report_out {
    int figures;            /* figures listed */
    int stale;              /* made before a commit that touches what they depend on */
    int unknown;            /* figures whose freshness git cannot tell */
    char unknown_why[4200]; /* why no figure's freshness is known ("" when git answers) */
} halo_sweep_report_out;

/* Writes DIR/index.md from every DIR/ *.meta.json (sorted by name), each figure checked with git
 * against the code it depends on (meta.json's depends, else its mode's modules). */
int halo_sweep_report(const char *dir, halo_sweep_report_out *out);

#endif
