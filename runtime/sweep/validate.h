/* `halo sim validate`: configurations drawn with a seed from a declared space (graph family and
 * size, ranks, layers, fanouts, hidden width, batch, policy and its parameters, pipeline depth,
 * sampler threads, netem), each run with `mpirun halo train` and with `halo sim`, compared
 * count by count and stage by stage (sim/validate.h), with a check that the machine was quiet
 * enough to measure (docs/sim.md, "halo sim validate"). */
#ifndef HALO_SWEEP_VALIDATE_H
#define HALO_SWEEP_VALIDATE_H

#include "sim/validate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Most choices of one axis of the space. */
#define HALO_VSPACE_MAX 32

/* The choices of one numeric axis. */
typedef struct halo_vchoice {
    int n;                       /* choices */
    double v[HALO_VSPACE_MAX];   /* values */
} halo_vchoice;

/* Kinds of graph in the space. */
enum { HALO_VGRAPH_SBM, HALO_VGRAPH_RMAT, HALO_VGRAPH_PRESET, HALO_VGRAPH_EDGES };

/* One graph family of the space. */
typedef struct halo_vgraph {
    int kind;             /* HALO_VGRAPH_* */
    char preset[32];      /* preset name (PRESET) */
    halo_vchoice size;    /* sbm: nodes; rmat: scale (2^S nodes); preset: scale fraction */
    char path[1024];      /* edge-list file (EDGES) */
} halo_vgraph;

/* Most policy parameters drawn for one policy. */
#define HALO_VPARAM_MAX 8

/* One policy of the space and the values its parameters are drawn from. */
typedef struct halo_vpolicy {
    char file[1024];                  /* policy file */
    char name[64];                    /* base name without .lua */
    int nparams;                      /* parameters drawn */
    char param[HALO_VPARAM_MAX][32];  /* their names (--set NAME=) */
    halo_vchoice val[HALO_VPARAM_MAX]; /* their values */
} halo_vpolicy;

/* The declared space of configurations. */
typedef struct halo_vspace {
    int epochs;                          /* epochs per run (the first is not timed) */
    int ngraphs;                         /* graph families */
    halo_vgraph graphs[HALO_VSPACE_MAX]; /* them */
    halo_vchoice feat_dim;               /* feature width of generated sbm and rmat graphs */
    halo_vchoice ranks;                  /* ranks (MPI processes) */
    halo_vchoice layers;                 /* GNN layers */
    halo_vchoice fanout;                 /* fanout of each layer (drawn per layer) */
    halo_vchoice hidden;                 /* hidden width */
    halo_vchoice batch;                  /* seeds per mini-batch per rank */
    halo_vchoice depth;                  /* pipeline depth */
    halo_vchoice sampler_threads;        /* sampling threads */
    int nnetem;                          /* netem choices */
    char netem[HALO_VSPACE_MAX][64];     /* "off" or a --netem SPEC */
    int npolicies;                       /* policies */
    halo_vpolicy policies[HALO_VSPACE_MAX]; /* them */
} halo_vspace;

/* One drawn configuration. */
typedef struct halo_vconfig {
    int index;           /* 1-based position in the draw */
    int graph;           /* index into space.graphs */
    double size;         /* the graph's drawn size */
    int feat_dim;        /* feature width (sbm, rmat) */
    int ranks;           /* ranks */
    int layers;          /* layers */
    int fanout[4];       /* fanouts, input layer first */
    int hidden;          /* hidden width */
    int batch;           /* batch */
    int policy;          /* index into space.policies */
    double pval[HALO_VPARAM_MAX]; /* the policy's drawn parameter values */
    int depth;           /* pipeline depth */
    int sampler_threads; /* sampling threads */
    int netem;           /* index into space.netem */
} halo_vconfig;

/* The default space for a machine of `cores` cores (docs/sim.md), its policies the *.lua files
 * of policy_dir with the parameters listed there. */
int halo_vspace_default(halo_vspace *s, int cores, const char *policy_dir);
/* Reads a space file (a Lua table, sandboxed like profiles) over s: each key it gives replaces
 * the default's. Errors are one line naming the file and the key, HALO_EINPUT. */
int halo_vspace_load(const char *path, halo_vspace *s);
/* Adds an edge-list file to the graphs of s (halo sim validate --edges). */
int halo_vspace_add_edges(halo_vspace *s, const char *path);
/* Draws configuration i (1-based) of the space with the seed; the same (seed, i, space) always
 * gives the same configuration. */
void halo_vspace_draw(const halo_vspace *s, uint64_t seed, int i, halo_vconfig *c);
/* A short label of c's graph ("sbm-4000/f64", "rmat-11/f32", "arxiv-0.01", "edges:NAME"). */
void halo_vconfig_graph_label(const halo_vspace *s, const halo_vconfig *c, char *buf,
                              size_t size);
/* c's policy with its --set values ("massivegnn delta=2 f=0.1"). */
void halo_vconfig_policy_label(const halo_vspace *s, const halo_vconfig *c, char *buf,
                               size_t size);

/* Exit statuses of `halo sim validate` besides 0 (valid), 1 (an error) and 2 (usage). */
enum {
    HALO_VALIDATE_COUNTS = 3, /* some count differs between the runtime and the simulator */
    HALO_VALIDATE_UNFIT = 4,  /* the machine was too loaded to measure (without --force) */
    HALO_VALIDATE_BOUND = 5,  /* an error is beyond a --max-* bound */
};

/* How `halo sim validate` runs. */
typedef struct halo_validate_opts {
    uint64_t seed;             /* the draw's seed */
    int configs;               /* configurations drawn */
    const char *space;         /* space file (NULL: the default space) */
    const char *edges;         /* an edge list added to the space's graphs (NULL: none) */
    const char *policy_dir;    /* where the default space finds policies */
    const char *profile;       /* cluster profile the simulator uses */
    const char *cluster_hosts; /* directory of a scripts/cluster.sh cluster (NULL: this host) */
    const char *out_dir;       /* CSV, figure, meta.json */
    const char *work_dir;      /* cached graphs, partitions, runs and logs */
    const char *exe;           /* the halo binary */
    const char *command;       /* the command line (for meta.json) */
    bool force;                /* report a loaded machine's measurements anyway */
    bool remeasure;            /* ignore measured runs cached in the work directory */
    int repeats;               /* measured runs of each configuration (1..9; 0: 1), in passes
                                  over all configurations; the one with the median epoch is the
                                  reference */
    bool per_graph;            /* simulate each configuration with the profile's graph
                                  constants measured on its partition (halo calibrate --graph
                                  --base, cached in WORK/profiles/) */
    bool dry_run;              /* print the configurations and commands, run nothing */
    bool markdown;             /* print the table as markdown */
    bool record;               /* write the result into the profile's validation entry */
    double max_median;         /* bound on the epoch's median |error| in % (<= 0: none) */
    double max_worst;          /* bound on the epoch's worst |error| in % (<= 0: none) */
    double max_stage;          /* bound on each work stage's median |error| in % (<= 0:
                                  none) */
    double max_load;           /* a load average above this share of the cores at the start:
                                  unfit */
    unsigned stage_mask;       /* the stages --max-stage bounds: bits 1 << HALO_SIM_T_* (0:
                                  the work stages) */
    bool realtime;             /* measured runs under SCHED_RR priority 1 (chrt -r 1) */
    double max_busy;           /* other work above this share of the cores: unfit */
    double max_spread;         /* timed epochs spread above this share of their median: unfit */
    double max_repeat_spread;  /* with --repeats, the median spread between a configuration's
                                  runs above this share (for three runs; halo_vrepeat_limit
                                  scales it to --repeats): unfit (0: not judged) */
    double timeout;            /* seconds per command */
    int priority;              /* nice value of the measured runs (0: as this process) */
} halo_validate_opts;

/* The outcome of one configuration. */
typedef struct halo_vresult {
    halo_vconfig c;          /* the configuration */
    halo_sim_comparison cmp; /* measured vs simulated (sim/validate.h) */
    double busy;             /* cores other work used just before a measured run (the most of
                                the repeats) */
    bool cached;             /* the measured run came from the work directory */
    char key[17];            /* the measured run's key (its files in WORK/runs) */
    int repeats;             /* measured runs of the configuration (--repeats) */
    int ref;                 /* the one compared (0-based; the median epoch time) */
    double noise;            /* (slowest - fastest) / median of the repeats' measured epoch
                                times: the measurement's own reproducibility (0: one run) */
} halo_vresult;

/* What the configurations add up to. */
typedef struct halo_vsummary {
    int n;                        /* configurations */
    int counts_equal;             /* configurations whose counts were all equal */
    int nstage[HALO_SIM_T_N];     /* configurations with an error of the stage (see
                                     halo_vresult_err) */
    double median[HALO_SIM_T_N];  /* median |error| per stage, % */
    double worst[HALO_SIM_T_N];   /* worst |error| per stage, % */
    int worst_at[HALO_SIM_T_N];   /* the configuration (1-based) of the worst */
    double stage_median_max;      /* the largest median of a work stage (sample, fetch, copy,
                                     compute, allreduce; not the epoch, not wait) */
    bool checked;                 /* the load was checked before the first measured run
                                     (false: every run came from the work directory) */
    double load_start;            /* 1-minute load average then */
    double busy_start;            /* cores other work used then */
    double busy_max;              /* the most cores other work used before a measured run */
    int busy_at;                  /* the configuration of busy_max */
    double spread_max;            /* the largest epoch spread of a measured run */
    int spread_at;                /* the configuration of spread_max */
    int nnoise;                   /* configurations measured more than once */
    double noise_median;          /* median of their repeat spreads (halo_vresult.noise), % */
    double noise_worst;           /* the largest, % */
    int noise_at;                 /* its configuration */
    int beyond_noise;             /* of those, the ones whose |epoch error| exceeds their
                                     repeats' spread (the model, not the measurement, is off) */
    double seconds;               /* wall time of the validation so far */
    bool speed;                   /* the machine's speed was probed before the first measured run
                                     and after the last (halo calibrate's sampler and GEMM) */
    double speed_prof[2];         /* the profile's sampler seconds per edge, GEMM flop/s */
    double speed_run[2][2];       /* the same measured [0] before, [1] after (0: failed) */
    bool fit;                     /* the machine was quiet enough throughout */
    char why[512];                /* why not ("" when fit) */
} halo_vsummary;

/* The signed error of stage k of r in %, when it counts: the measured time is > 0 and, for a
 * stage, at least 5% of the measured epoch (smaller stages are noise at this scale). */
bool halo_vresult_err(const halo_vresult *r, int k, double *pct);
/* Beyond this many % between the speed probes and the profile, the summary says to calibrate
 * just before measuring (the sampler's probe alone read 8.70 and 9.57 ns per edge a minute
 * apart on a quiet 2-core VM: 10 % is its own noise). */
#define HALO_VSPEED_DEV 15.0

/* How far the machine's speed probes of s were from its profile: the largest |measured /
 * profile - 1| in %, over the two probes and the two times, each taken as seconds per unit of
 * work (the GEMM's flop/s inverted); -1 when not probed. */
double halo_vspeed_dev(const halo_vsummary *s);
/* The --max-repeat-spread limit (a fraction, set for three runs per configuration) for n runs:
 * the range of n draws widens with n (for normal noise its mean is d2(n) standard deviations:
 * 1.128, 1.693, 2.059, 2.326 ... for n = 2, 3, 4, 5), so the limit is scaled by d2(n) / d2(3)
 * to judge the same noise alike at any n (1..9; 0 for n < 2). */
double halo_vrepeat_limit(double limit_of_three, int n);
/* Fills s from the n results (load fields are the caller's). */
void halo_vsummary_make(const halo_vresult *r, int n, halo_vsummary *s);
/* The table header, one row per result, the summary: plain text or markdown. */
void halo_vresult_header(FILE *out, bool markdown);
void halo_vresult_row(const halo_vspace *sp, const halo_vresult *r, FILE *out, bool markdown);
void halo_vsummary_print(const halo_vsummary *s, FILE *out, bool markdown);
/* The signed median error of the epoch and of the sample, fetch and compute stages (time and
 * CPU) by group of configurations: whether a host's trainer processes outnumber its cores (of
 * `cores`, shared by `hosts` hosts; 0: one), pipelined or not, with an emulated network or
 * not. A median's count follows it when only some of the group's configurations have that
 * stage's error ("/m", markdown " (m)"). Where the model leans one way, not how far it is off. */
void halo_vgroups_print(const halo_vspace *sp, const halo_vresult *r, int n, int cores,
                        int hosts, FILE *out, bool markdown);
/* OUT/sim_vs_measured.{csv,gp,png,svg,meta.json}; the figure is skipped with a note on stderr
 * when gnuplot fails. */
int halo_validate_outputs(const halo_validate_opts *o, const halo_vspace *sp,
                          const halo_vresult *r, int n, const halo_vsummary *s,
                          const char *profile_name);

/* Runs the validation; returns a negative error code when it cannot go on (bad space, a run
 * that failed), else the exit status: 0 or one of HALO_VALIDATE_*. */
int halo_validate_run(const halo_validate_opts *o);

#endif
