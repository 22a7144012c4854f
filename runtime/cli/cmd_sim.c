/* halo sim: replays a training run of every rank of a partition in one process and models its
 * time on a cluster profile. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/netem.h"
#include "model/model.h"
#include "pipe/timeline.h"
#include "sim/sim.h"
#include "sim/validate.h"
#include "sweep/validate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The directory of policies beside the halo binary (bin/halo -> policies), else "policies". */
static void policy_dir_default(char *buf, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(buf, size, "policies");
    if (n > 0 && !halo_is_dir("policies")) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(buf, size, "%s/../policies", exe);
        }
    }
}

/* Appends the profile's last validation to the metrics file as a "validation" record, so that
 * a figure made from the file can name the profile and its measured error. */
static int append_validation(const char *metrics, const char *profile,
                             const halo_sim_validation *v)
{
    FILE *f = fopen(metrics, "a");
    if (f == NULL) {
        return halo_errorf(HALO_EIO, "%s: cannot append: %s", metrics, strerror(errno));
    }
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "type");
    halo_jw_str(&w, "validation");
    halo_jw_key(&w, "mode");
    halo_jw_str(&w, "sim");
    halo_jw_key(&w, "profile");
    halo_jw_str(&w, profile);
    halo_jw_key(&w, "validated");
    halo_jw_bool(&w, v->present);
    if (v->present) {
        halo_jw_key(&w, "seed");
        halo_jw_i64(&w, v->seed);
        halo_jw_key(&w, "configs");
        halo_jw_i64(&w, v->configs);
        halo_jw_key(&w, "median_pct");
        halo_jw_f64(&w, v->median_pct);
        halo_jw_key(&w, "worst_pct");
        halo_jw_f64(&w, v->worst_pct);
        halo_jw_key(&w, "stage_median_pct");
        halo_jw_f64(&w, v->stage_median_pct);
        halo_jw_key(&w, "fit");
        halo_jw_bool(&w, v->fit);
        halo_jw_key(&w, "date");
        halo_jw_str(&w, v->date);
    }
    halo_jw_obj_end(&w);
    int ok = fprintf(f, "%s\n", w.sb.buf) > 0;
    halo_jw_free(&w);
    if (fclose(f) != 0 || !ok) {
        return halo_errorf(HALO_EIO, "%s: cannot append: %s", metrics, strerror(errno));
    }
    return 0;
}

/* The bits of the stages named in list ("sample,fetch"). */
static int stage_mask(const char *list, unsigned *mask)
{
    *mask = 0;
    const char *s = list;
    while (*s != '\0') {
        size_t n = strcspn(s, ",");
        int k = 1;
        while (k < HALO_SIM_T_WALL && (strlen(halo_sim_time_name(k)) != n ||
                                       strncmp(halo_sim_time_name(k), s, n) != 0)) {
            k++;
        }
        if (k == HALO_SIM_T_WALL) {
            return halo_errorf(HALO_EUSAGE, "--stages: \"%.*s\" is not a stage (sample, fetch, "
                               "copy, compute, allreduce, wait)", (int)n, s);
        }
        *mask |= 1u << k;
        s += n + (s[n] == ',');
    }
    return *mask ? 0 : halo_errorf(HALO_EUSAGE, "--stages: no stage given");
}

/* This binary's path (for the runs it starts) and the command line, for meta.json. */
static int self_and_command(int argc, char **argv, char *exe, size_t esize, char *cmd,
                            size_t csize)
{
    ssize_t n = readlink("/proc/self/exe", exe, esize - 1);
    if (n <= 0) {
        return halo_errorf(HALO_EIO, "sim validate: cannot find the halo binary "
                                     "(/proc/self/exe)");
    }
    exe[n] = '\0';
    size_t len = (size_t)snprintf(cmd, csize, "halo sim");
    for (int i = 0; i < argc && len < csize; i++) {
        len += (size_t)snprintf(cmd + len, csize - len, " %s", argv[i]);
    }
    return 0;
}

/* What validate_opts_ok wants, as its error says it. */
static const char validate_ranges[] =
    "sim validate: no positional arguments; --configs 1..10000, --seed >= 0, --priority "
    "-20..19, --repeats 1..9, --timeout, --max-load >= 0, --max-busy and --max-spread > 0, "
    "--max-repeat-spread 0..10";

/* Whether the numbers of `halo sim validate` are within their ranges. */
static bool validate_opts_ok(const halo_validate_opts *o)
{
    return o->configs >= 1 && o->configs <= 10000 && o->timeout > 0 && o->priority >= -20 &&
           o->priority <= 19 && o->repeats >= 1 && o->repeats <= 9 && o->max_load >= 0 &&
           o->max_busy > 0 && o->max_spread > 0 && o->max_repeat_spread >= 0 &&
           o->max_repeat_spread <= 10;
}

/* `halo sim validate`: configurations drawn from a space, measured and simulated. */
static int cmd_sim_validate(int argc, char **argv)
{
    halo_validate_opts o = {.seed = 1, .configs = 20, .max_busy = 0.25, .max_spread = 0.25,
                            .max_repeat_spread = 0.10, .timeout = 300, .repeats = 1};
    int64_t seed = 1;
    const char *work = NULL, *policies = NULL, *stages = NULL;
    o.profile = "experiments/clusters/this-machine.lua";
    o.out_dir = "reports";
    const halo_opt opts[] = {
        {"seed", 's', HALO_OPT_I64, &seed, "S", "seed of the draw"},
        {"configs", 'n', HALO_OPT_INT, &o.configs, "N", "configurations drawn"},
        {"space", 0, HALO_OPT_STRING, &o.space, "FILE",
         "space file (Lua) over the default space (docs/sim.md)"},
        {"edges", 0, HALO_OPT_STRING, &o.edges, "FILE",
         "an edge list ('src dst' lines, halo import edgelist) added to the graphs drawn"},
        {"profile", 'p', HALO_OPT_STRING, &o.profile, "FILE", "cluster profile of halo sim"},
        {"cluster-hosts", 0, HALO_OPT_STRING, &o.cluster_hosts, "DIR",
         "measure on the namespace cluster of scripts/cluster.sh up (its directory)"},
        {"out", 'o', HALO_OPT_STRING, &o.out_dir, "DIR",
         "sim_vs_measured.{csv,gp,png,svg,meta.json}"},
        {"work", 0, HALO_OPT_STRING, &work, "DIR",
         "graphs, partitions, measured runs and logs (default OUT/.cache/validate)"},
        {"policies", 0, HALO_OPT_STRING, &policies, "DIR",
         "where the default space finds the shipped policies (default policies)"},
        {"force", 0, HALO_OPT_FLAG, &o.force, NULL,
         "measure and report on a loaded machine (the result says UNFIT)"},
        {"remeasure", 0, HALO_OPT_FLAG, &o.remeasure, NULL,
         "measure again even where the work directory holds the run"},
        {"repeats", 0, HALO_OPT_INT, &o.repeats, "N",
         "measure each configuration N times (1..9), in N passes over the draw; the run of "
         "the median epoch is compared, and the repeats' spread is printed beside it"},
        {"per-graph", 0, HALO_OPT_FLAG, &o.per_graph, NULL, "simulate each configuration on "
         "its own partition's graph constants (halo calibrate --graph PDIR --base --quick)"},
        {"markdown", 0, HALO_OPT_FLAG, &o.markdown, NULL, "print the tables as markdown"},
        {"dry-run", 0, HALO_OPT_FLAG, &o.dry_run, NULL,
         "print the configurations drawn and their commands; run nothing"},
        {"record", 0, HALO_OPT_FLAG, &o.record, NULL,
         "write the result into the profile's validation entry"},
        {"max-median", 0, HALO_OPT_DOUBLE, &o.max_median, "PCT",
         "exit 5 when the epoch's median |error| is above PCT (0: no bound)"},
        {"max-worst", 0, HALO_OPT_DOUBLE, &o.max_worst, "PCT",
         "exit 5 when the epoch's worst |error| is above PCT (0: no bound)"},
        {"max-stage", 0, HALO_OPT_DOUBLE, &o.max_stage, "PCT",
         "exit 5 when a work stage's median |error| is above PCT (0: no bound)"},
        {"stages", 0, HALO_OPT_STRING, &stages, "LIST",
         "the stages --max-stage bounds, e.g. sample,fetch (default: sample, fetch, copy, "
         "compute, allreduce)"},
        {"realtime", 0, HALO_OPT_FLAG, &o.realtime, NULL,
         "run the measured runs under SCHED_RR priority 1 (chrt -r 1; root): ahead of other "
         "work on a shared machine, which keeps 5% of the CPU"},
        {"max-load", 0, HALO_OPT_DOUBLE, &o.max_load, "X",
         "unfit when the load average before the first measured run is above X times the "
         "cores (0: not checked: it counts the validator's own runs of the last minutes)"},
        {"max-busy", 0, HALO_OPT_DOUBLE, &o.max_busy, "X",
         "unfit when other work uses more than X of the cores"},
        {"max-spread", 0, HALO_OPT_DOUBLE, &o.max_spread, "X",
         "unfit when a run's timed epochs spread more than X of their median (runs with "
         "no more busy threads than cores; beyond, the spread is the run's own)"},
        {"max-repeat-spread", 0, HALO_OPT_DOUBLE, &o.max_repeat_spread, "X",
         "with --repeats, unfit when a configuration's runs spread more than X of their median "
         "in the median over the draw (the goal's own bound; X for 3 runs, scaled to N by "
         "the mean range of N normal draws: x0.67 for 2, x1.37 for 5; 0: not judged)"},
        {"timeout", 0, HALO_OPT_DOUBLE, &o.timeout, "SEC", "seconds per command"},
        {"priority", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &o.priority, "N",
         "run the measured runs under nice -n N (-20..19; below 0 needs root: ahead of other "
         "work on a shared machine)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo sim validate [--seed S] [--configs N] [--space FILE] [--profile FILE] "
        "[--cluster-hosts DIR] [--out DIR] [--work DIR] [--force] [--markdown] [--record] "
        "[--per-graph] [--repeats N] "
        "[--dry-run] [--max-median PCT] [--max-worst PCT] [--max-stage PCT]",
        "Draws N configurations from a space (graph family and size, ranks, layers, fanouts,\n"
        "hidden width, batch, every shipped policy with its parameters, pipeline depth,\n"
        "sampler threads, netem) with the seed, runs each with mpirun halo train and with\n"
        "halo sim, and prints per configuration the epoch and per-stage errors and whether\n"
        "the counts are equal, then the median and worst |error| of each. A machine too\n"
        "loaded to measure is said so and the result marked UNFIT; a profile calibrated on\n"
        "another CPU or more than two hours ago gets a notice (calibrate just before you\n"
        "measure: halo calibrate -o P.lua); the machine's speed (the sampler and a one-thread\n"
        "GEMM) is probed before the first measured run and after the last and printed beside\n"
        "the profile's. Exit: 0 valid, 1 error,\n"
        "2 usage, 3 counts differ, 4 unfit (without --force), 5 beyond a --max-* bound\n"
        "(docs/sim.md, \"halo sim validate\").",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 0 || seed < 0 || !validate_opts_ok(&o)) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "%s", validate_ranges));
    }
    o.seed = (uint64_t)seed;
    rc = stages != NULL ? stage_mask(stages, &o.stage_mask) : 0;
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    char wbuf[4200], pbuf[4200], exe[4096], cmd[4096];
    if (work == NULL) {
        snprintf(wbuf, sizeof wbuf, "%s/.cache/validate", o.out_dir);
        work = wbuf;
    }
    o.work_dir = work;
    if (policies == NULL) {
        policy_dir_default(pbuf, sizeof pbuf);
        policies = pbuf;
    }
    o.policy_dir = policies;
    rc = self_and_command(argc, argv, exe, sizeof exe, cmd, sizeof cmd);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    o.exe = exe;
    o.command = cmd;
    rc = halo_validate_run(&o);
    return rc < 0 ? halo_cli_fail(rc) : rc;
}

/* The flags of `halo sim` and what the run made of them. */
typedef struct sim_cli {
    halo_sim_opts o;           /* the run */
    const char *policy;        /* --policy as given */
    const char *fanouts;       /* --fanouts */
    const char *metrics;       /* --metrics */
    const char *timeline;      /* --timeline */
    const char *cluster;       /* --cluster profile file */
    const char *netem;         /* --netem */
    const char *batching;      /* --batching local|global */
    const char *against;       /* --against measured metrics */
    const char *model;         /* --model sage|rgcn|gat */
    int heads;                 /* --heads (GAT) */
    int out_heads;             /* --out-heads (GAT) */
    const char *batch;         /* --batch, NULL: the model's default */
    const char *hidden;        /* --hidden, NULL: the model's default */
    int64_t seed;              /* --seed */
    int machines;              /* --machines (0: the profile's) */
    int trainers;              /* --trainers (0: the profile's) */
    bool quiet;                /* --quiet */
    halo_strlist sets;         /* --set NAME=VALUE */
    halo_sim_profile prof;     /* the loaded --cluster profile */
    halo_sim_validation val;   /* its last validation */
    char policy_buf[4096];     /* the resolved --policy path */
} sim_cli;

enum { SIM_NOPTS = 24 }; /* room for sim_flags' table */

/* The flag table of `halo sim`, pointing into c. */
static void sim_flags(sim_cli *c, halo_opt opts[SIM_NOPTS])
{
    const halo_opt t[] = {
        {"cluster", 'c', HALO_OPT_STRING, &c->cluster, "FILE",
         "cluster profile (experiments/clusters/NAME.lua); without one only counts are made"},
        {"machines", 0, HALO_OPT_INT, &c->machines, "M", "machines (overrides the profile's)"},
        {"trainers", 0, HALO_OPT_INT, &c->trainers, "T",
         "trainers per machine (overrides the profile's)"},
        {"policy", 0, HALO_OPT_STRING, &c->policy, "FILE|NAME",
         "policy file, or NAME of policies/NAME.lua (default: built-in defaults)"},
        {"set", 0, HALO_OPT_LIST, &c->sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"epochs", 'e', HALO_OPT_INT, &c->o.epochs, "E", "epochs to simulate"},
        {"batch", 'b', HALO_OPT_STRING, &c->batch, "B",
         "seeds per mini-batch (per rank with --batching local; default 2000, 500 with --model "
         "rgcn, as halo train)"},
        {"batching", 0, HALO_OPT_STRING, &c->batching, "local|global", "as for halo train"},
        {"fanouts", 'f', HALO_OPT_STRING, &c->fanouts, "LIST",
         "fanouts, input layer first (overrides the policy's fanout hook)"},
        {"hidden", 0, HALO_OPT_STRING, &c->hidden, "H",
         "hidden width (compute model; default 16, 64 with --model rgcn, 8 per head with --model "
         "gat)"},
        {"model", 0, HALO_OPT_STRING, &c->model, "sage|rgcn|gat",
         "the model of the compute model and of the defaults of --batch and --hidden"},
        {"heads", 0, HALO_OPT_INT, &c->heads, "H",
         "GAT: attention heads of each hidden layer (as halo train)"},
        {"out-heads", 0, HALO_OPT_INT, &c->out_heads, "H",
         "GAT: attention heads of the output layer (as halo train)"},
        {"bases", 0, HALO_OPT_INT, &c->o.bases, "B", "RGCN basis matrices (0: one per relation)"},
        {"seed", 's', HALO_OPT_I64, &c->seed, "S", "seed of every random choice"},
        {"depth", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &c->o.depth, "N",
         "pipeline depth: batches prepared ahead of the compute (-1: the policy's)"},
        {"sampler-threads", 0, HALO_OPT_INT, &c->o.sampler_threads, "N",
         "sampling threads of the pipeline (0: the policy's)"},
        {"netem", 0, HALO_OPT_STRING, &c->netem, "SPEC",
         "the emulated network of halo train --netem, as link parameters"},
        {"metrics", 'm', HALO_OPT_STRING, &c->metrics, "FILE",
         "JSON Lines metrics, the schema of halo train with \"mode\":\"sim\""},
        {"timeline", 0, HALO_OPT_STRING, &c->timeline, "FILE",
         "every stage's simulated start and end per rank and batch (see halo timeline)"},
        {"against", 0, HALO_OPT_STRING, &c->against, "FILE.jsonl",
         "a measured run's metrics: counts compared (and times, with --cluster)"},
        {"quiet", 'q', HALO_OPT_FLAG, &c->quiet, NULL, "no progress lines"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    _Static_assert(sizeof t / sizeof t[0] <= SIM_NOPTS, "SIM_NOPTS too small");
    memcpy(opts, t, sizeof t);
}

/* The model and its defaults of --batch and --hidden (halo train's), then the values given. */
static int sim_model(sim_cli *c)
{
    int kind;
    if (halo_model_kind_parse(c->model, &kind) < 0) {
        return halo_errorf(HALO_EUSAGE, "--model: \"%s\" (want sage, rgcn or gat)", c->model);
    }
    c->o.rgcn = kind == HALO_MODEL_RGCN;
    if (c->heads < 1 || c->heads > 256) {
        return halo_errorf(HALO_EUSAGE, "--heads: must be in 1..256, got %d", c->heads);
    }
    if (c->out_heads < 1 || c->out_heads > 256) {
        return halo_errorf(HALO_EUSAGE, "--out-heads: must be in 1..256, got %d", c->out_heads);
    }
    c->o.heads = kind == HALO_MODEL_GAT ? c->heads : 0;
    c->o.out_heads = c->out_heads;
    halo_model_run_defaults(kind, &c->o.hidden, NULL, &c->o.batch);
    int64_t hidden = c->o.hidden;
    if ((c->batch != NULL && halo_parse_i64(c->batch, "--batch", &c->o.batch) < 0) ||
        (c->hidden != NULL && halo_parse_i64(c->hidden, "--hidden", &hidden) < 0)) {
        return HALO_EUSAGE;
    }
    c->o.hidden = hidden >= 1 && hidden <= INT32_MAX ? (int)hidden : 0; /* 0: refused below */
    return 0;
}

/* The checks of the flags that need no file. */
static int sim_check(sim_cli *c, int npos)
{
    if (npos != 1) {
        return halo_errorf(HALO_EUSAGE, "sim: one partition directory expected");
    }
    if (strcmp(c->batching, "local") != 0 && strcmp(c->batching, "global") != 0) {
        return halo_errorf(HALO_EUSAGE, "--batching: \"%s\" (want local or global)",
                           c->batching);
    }
    int rc = sim_model(c);
    if (rc < 0) {
        return rc;
    }
    const halo_sim_opts *o = &c->o;
    if (o->epochs < 1 || o->batch < 1 || o->hidden < 1 || o->depth < -1 ||
        o->sampler_threads < 0 || c->machines < 0 || c->trainers < 0) {
        return halo_errorf(HALO_EUSAGE, "sim: --epochs, --batch, --hidden must be >= 1, --depth "
                           ">= -1, --machines, --trainers and --sampler-threads >= 0");
    }
    if (c->against != NULL && c->metrics == NULL) {
        return halo_errorf(HALO_EUSAGE, "--against needs --metrics (the simulated side of the "
                           "comparison)");
    }
    if (c->sets.n > 0 && c->policy == NULL) {
        return halo_errorf(HALO_EUSAGE, "--set needs --policy");
    }
    if (c->against != NULL && halo_same_file(c->against, c->metrics)) {
        return halo_errorf(HALO_EUSAGE, "--metrics %s is the --against file; refusing to replace "
                           "the measured run", c->metrics);
    }
    if (c->timeline != NULL) {
        rc = halo_output_file_check(c->timeline, "timeline file", HALO_TIMELINE_SIG, false);
        if (rc < 0) {
            return halo_error_prefix(rc, "--timeline");
        }
    }
    return 0;
}

/* Loads the --cluster profile with its overrides (--machines, --trainers, --netem) into c->prof;
 * without one, refuses the flags that need it. */
static int sim_profile(sim_cli *c, const char *pdir)
{
    if (c->cluster == NULL) {
        if (c->netem != NULL || c->machines > 0 || c->trainers > 0 || c->timeline != NULL) {
            return halo_errorf(HALO_EUSAGE, "sim: --netem, --machines, --trainers and "
                               "--timeline need --cluster");
        }
        return 0;
    }
    int rc = halo_sim_profile_load(c->cluster, &c->prof);
    rc = rc < 0 ? rc : halo_sim_validation_load(c->cluster, &c->val);
    if (rc < 0) {
        return rc;
    }
    if (c->machines > 0) {
        c->prof.machines = c->machines;
    }
    if (c->trainers > 0) {
        c->prof.trainers = c->trainers;
    }
    if (c->netem != NULL) {
        halo_netem ne;
        rc = halo_netem_parse(c->netem, &ne);
        if (rc < 0) {
            return halo_error_prefix(rc, "--netem");
        }
        c->prof.netem_lat_s = ne.lat_s;
        c->prof.netem_bw = ne.bw_bits / 8.0;
    }
    c->o.profile = &c->prof;
    halo_sim_profile_graph_notice(&c->prof, pdir); /* generic or another graph's constants */
    return 0;
}

/* Prints the counts of a finished run, its time on the profile (appending the profile's
 * validation to the metrics), and its peak memory. */
static int sim_print(sim_cli *c, const halo_sim_result *res)
{
    const halo_epoch_stats *t = &res->total;
    int64_t looked = t->cache_hits + t->cache_misses;
    printf("halo sim: %d rank%s, policy %s, depth %d, %d epoch%s x %lld batch%s: sampled edges "
           "%lld, input nodes %lld, remote nodes %lld, hit rate %.4f, received %.1f MB, "
           "messages %lld (all ranks, all epochs)\n",
           res->ranks, halo_plural(res->ranks), res->policy, res->depth, res->epochs,
           halo_plural(res->epochs), (long long)res->batches, res->batches == 1 ? "" : "es",
           (long long)t->sampled_edges, (long long)t->input_nodes, (long long)t->remote_nodes,
           looked > 0 ? (double)t->cache_hits / (double)looked : 0.0,
           (double)t->bytes_remote / 1e6, (long long)t->messages);
    if (c->o.profile != NULL) {
        const halo_sim_profile *prof = &c->prof;
        char vtext[400];
        halo_sim_validation_text(&c->val, vtext, sizeof vtext);
        int rc = c->metrics != NULL ? append_validation(c->metrics, prof->name, &c->val) : 0;
        if (rc < 0) {
            return rc;
        }
        double n = (double)res->ranks * res->epochs;
        printf("halo sim: profile %s (%d machine%s x %d trainer%s): mean epoch %.4f s; per rank "
               "and epoch: sample %.4f, fetch %.4f, copy %.4f, compute %.4f, allreduce %.4f, "
               "wait %.4f s\n",
               prof->name, prof->machines, halo_plural(prof->machines), prof->trainers,
               halo_plural(prof->trainers), res->mean_epoch_s, t->sample_s / n,
               t->fetch_s / n, t->copy_s / n, t->compute_s / n, t->allreduce_s / n,
               t->wait_s / n);
        printf("halo sim: profile %s %s\n", prof->name, vtext);
    }
    printf("halo sim: peak RSS %.1f MiB\n", (double)res->peak_rss / 1048576.0);
    return 0;
}

int halo_cmd_sim(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "validate") == 0) {
        return cmd_sim_validate(argc - 1, argv + 1);
    }
    sim_cli c;
    memset(&c, 0, sizeof c);
    halo_sim_opts_default(&c.o);
    c.batching = "local";
    c.model = "sage";
    c.heads = 4;
    c.out_heads = 1;
    c.seed = (int64_t)c.o.seed;
    halo_opt opts[SIM_NOPTS];
    sim_flags(&c, opts);
    const halo_cmd_help help = {
        "halo sim PDIR [--cluster F] [--machines M] [--policy F] [--set k=v] [--epochs E] "
        "[--batch B] [--fanouts L] [--model sage|rgcn|gat] [--depth K] [--netem SPEC] "
        "[--metrics FILE.jsonl] [--timeline FILE] [--against measured.jsonl]",
        "Simulates `mpirun -np P halo train PDIR` (P = parts) in one process: every rank runs\n"
        "through the runtime's own epoch order, sampler, cache and policy hooks, so the counts\n"
        "(sampled edges, input, remote and cached nodes, bytes and messages) equal the\n"
        "runtime's field by field; the cluster profile turns the counted work into time\n"
        "(sampling, fetch, copy, compute, allreduce) on a discrete-event timeline that overlaps\n"
        "the stages as the pipeline depth allows. The profile must have machines x trainers =\n"
        "P. Prints the mean epoch time of the slowest rank and its stage breakdown. On a typed\n"
        "partition it replays the typed sampler with per-relation fanouts and counts the\n"
        "embedding traffic of featureless types (docs/sim.md, \"Typed graphs\"). Prints the\n"
        "profile's last validated error beside its time. `halo sim validate` compares\n"
        "measured and simulated runs over configurations drawn at random (halo sim validate\n"
        "--help).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    rc = sim_check(&c, npos);
    rc = rc < 0 ? rc : sim_profile(&c, pos[0]);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    c.o.pdir = pos[0];
    c.o.policy = halo_cli_policy_path(c.policy, c.policy_buf, sizeof c.policy_buf);
    c.o.sets = c.sets.v;
    c.o.nsets = c.sets.n;
    c.o.fanouts = c.fanouts;
    c.o.metrics = c.metrics;
    c.o.timeline = c.timeline;
    c.o.seed = (uint64_t)c.seed;
    c.o.global_batching = strcmp(c.batching, "global") == 0;
    c.o.progress = !c.quiet;
    halo_sim_result res;
    rc = halo_sim_run(&c.o, &res);
    rc = rc < 0 ? rc : sim_print(&c, &res);
    rc = rc < 0 || c.against == NULL ? rc : halo_sim_compare(c.against, c.metrics, stdout);
    return rc < 0 ? halo_cli_fail(rc) : 0;
}
