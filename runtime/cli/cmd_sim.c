/* halo sim: replays a training run of every rank of a partition in one process and models its
 * time on a cluster profile. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/netem.h"
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
        while (k < HALO_SIM_T_N && (strlen(halo_sim_time_name(k)) != n ||
                                    strncmp(halo_sim_time_name(k), s, n) != 0)) {
            k++;
        }
        if (k == HALO_SIM_T_N) {
            return halo_errorf(HALO_EUSAGE, "--stages: \"%.*s\" is not a stage (sample, fetch, "
                               "copy, compute, allreduce, wait)", (int)n, s);
        }
        *mask |= 1u << k;
        s += n + (s[n] == ',');
    }
    return *mask ? 0 : halo_errorf(HALO_EUSAGE, "--stages: no stage given");
}

/* `halo sim validate`: configurations drawn from a space, measured and simulated. */
static int cmd_sim_validate(int argc, char **argv)
{
    halo_validate_opts o = {.seed = 1, .configs = 20, .max_load = 1,
                            .max_busy = 0.25, .max_spread = 0.25,
                            .timeout = 300};
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
        {"profile", 'p', HALO_OPT_STRING, &o.profile, "FILE",
         "cluster profile of halo sim"},
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
         "cores"},
        {"max-busy", 0, HALO_OPT_DOUBLE, &o.max_busy, "X",
         "unfit when other work uses more than X of the cores"},
        {"max-spread", 0, HALO_OPT_DOUBLE, &o.max_spread, "X",
         "unfit when a run's timed epochs spread more than X of their median"},
        {"timeout", 0, HALO_OPT_DOUBLE, &o.timeout, "SEC", "seconds per command"},
        {"priority", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &o.priority, "N",
         "run the measured runs under nice -n N (-20..19; below 0 needs root: ahead of other "
         "work on a shared machine)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo sim validate [--seed S] [--configs N] [--space FILE] [--profile FILE] "
        "[--cluster-hosts DIR] [--out DIR] [--work DIR] [--force] [--markdown] [--record] "
        "[--dry-run] [--max-median PCT] [--max-worst PCT] [--max-stage PCT]",
        "Draws N configurations from a space (graph family and size, ranks, layers, fanouts,\n"
        "hidden width, batch, every shipped policy with its parameters, pipeline depth,\n"
        "sampler threads, netem) with the seed, runs each with mpirun halo train and with\n"
        "halo sim, and prints per configuration the epoch and per-stage errors and whether\n"
        "the counts are equal, then the median and worst |error| of each. A machine too\n"
        "loaded to measure is said so and the result marked UNFIT. Exit: 0 valid, 1 error,\n"
        "2 usage, 3 counts differ, 4 unfit (without --force), 5 beyond a --max-* bound\n"
        "(docs/sim.md, \"halo sim validate\").",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 0 || o.configs < 1 || o.configs > 10000 || seed < 0 || o.timeout <= 0 ||
        o.priority < -20 || o.priority > 19 ||
        !(o.max_load > 0) || !(o.max_busy > 0) || !(o.max_spread > 0)) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sim validate: no positional arguments; "
                                         "--configs 1..10000, --seed >= 0, --priority -20..19, "
                                         "--timeout, "
                                         "--max-load, --max-busy and --max-spread > 0"));
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
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        return halo_cli_fail(halo_errorf(HALO_EIO, "sim validate: cannot find the halo binary "
                                         "(/proc/self/exe)"));
    }
    exe[n] = '\0';
    o.exe = exe;
    size_t len = (size_t)snprintf(cmd, sizeof cmd, "halo sim");
    for (int i = 0; i < argc && len < sizeof cmd; i++) {
        len += (size_t)snprintf(cmd + len, sizeof cmd - len, " %s", argv[i]);
    }
    o.command = cmd;
    rc = halo_validate_run(&o);
    return rc < 0 ? halo_cli_fail(rc) : rc;
}

int halo_cmd_sim(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "validate") == 0) {
        return cmd_sim_validate(argc - 1, argv + 1);
    }
    halo_sim_opts o;
    halo_sim_opts_default(&o);
    const char *policy = NULL, *fanouts = NULL, *metrics = NULL, *timeline = NULL;
    const char *cluster = NULL, *netem = NULL, *batching = "local", *against = NULL;
    const char *model = "sage";
    int64_t seed = (int64_t)o.seed;
    int machines = 0, trainers = 0;
    bool quiet = false;
    halo_strlist sets = {.n = 0};
    const halo_opt opts[] = {
        {"cluster", 'c', HALO_OPT_STRING, &cluster, "FILE",
         "cluster profile (experiments/clusters/NAME.lua); without one only counts are made"},
        {"machines", 0, HALO_OPT_INT, &machines, "M", "machines (overrides the profile's)"},
        {"trainers", 0, HALO_OPT_INT, &trainers, "T",
         "trainers per machine (overrides the profile's)"},
        {"policy", 0, HALO_OPT_STRING, &policy, "FILE|NAME",
         "policy file, or NAME of policies/NAME.lua (default: built-in defaults)"},
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"epochs", 'e', HALO_OPT_INT, &o.epochs, "E", "epochs to simulate"},
        {"batch", 'b', HALO_OPT_I64, &o.batch, "B",
         "seeds per mini-batch (per rank with --batching local)"},
        {"batching", 0, HALO_OPT_STRING, &batching, "local|global", "as for halo train"},
        {"fanouts", 'f', HALO_OPT_STRING, &fanouts, "LIST",
         "fanouts, input layer first (overrides the policy's fanout hook)"},
        {"hidden", 0, HALO_OPT_INT, &o.hidden, "H", "hidden width (compute model)"},
        {"model", 0, HALO_OPT_STRING, &model, "sage|rgcn",
         "the model of the compute model (the counts do not depend on it)"},
        {"bases", 0, HALO_OPT_INT, &o.bases, "B", "RGCN basis matrices (0: one per relation)"},
        {"seed", 's', HALO_OPT_I64, &seed, "S", "seed of every random choice"},
        {"depth", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &o.depth, "N",
         "pipeline depth: batches prepared ahead of the compute (-1: the policy's)"},
        {"sampler-threads", 0, HALO_OPT_INT, &o.sampler_threads, "N",
         "sampling threads of the pipeline (0: the policy's)"},
        {"netem", 0, HALO_OPT_STRING, &netem, "SPEC",
         "the emulated network of halo train --netem, as link parameters"},
        {"metrics", 'm', HALO_OPT_STRING, &metrics, "FILE",
         "JSON Lines metrics, the schema of halo train with \"mode\":\"sim\""},
        {"timeline", 0, HALO_OPT_STRING, &timeline, "FILE",
         "every stage's simulated start and end per rank and batch (see halo timeline)"},
        {"against", 0, HALO_OPT_STRING, &against, "FILE.jsonl",
         "a measured run's metrics: counts compared (and times, with --cluster)"},
        {"quiet", 'q', HALO_OPT_FLAG, &quiet, NULL, "no progress lines"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo sim PDIR [--cluster F] [--machines M] [--policy F] [--set k=v] [--epochs E] "
        "[--batch B] [--fanouts L] [--model sage|rgcn] [--depth K] [--netem SPEC] "
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
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sim: one partition directory expected"));
    }
    if (strcmp(batching, "local") != 0 && strcmp(batching, "global") != 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--batching: \"%s\" (want local or global)",
                                         batching));
    }
    if (strcmp(model, "sage") != 0 && strcmp(model, "rgcn") != 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--model: \"%s\" (want sage or rgcn)",
                                         model));
    }
    o.rgcn = strcmp(model, "rgcn") == 0;
    if (o.epochs < 1 || o.batch < 1 || o.hidden < 1 || o.depth < -1 || o.sampler_threads < 0 ||
        machines < 0 || trainers < 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sim: --epochs, --batch, --hidden must be "
                                         ">= 1, --depth >= -1, --machines, --trainers and "
                                         "--sampler-threads >= 0"));
    }
    if (against != NULL && metrics == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--against needs --metrics (the simulated "
                                         "side of the comparison)"));
    }
    if (sets.n > 0 && policy == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--set needs --policy"));
    }
    if (against != NULL && halo_same_file(against, metrics)) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--metrics %s is the --against file; "
                                         "refusing to replace the measured run", metrics));
    }
    if (timeline != NULL) {
        rc = halo_output_file_check(timeline, "timeline file", HALO_TIMELINE_SIG, false);
        if (rc < 0) {
            return halo_cli_fail(halo_error_prefix(rc, "--timeline"));
        }
    }
    halo_sim_profile prof;
    halo_sim_validation val;
    if (cluster != NULL) {
        rc = halo_sim_profile_load(cluster, &prof);
        rc = rc < 0 ? rc : halo_sim_validation_load(cluster, &val);
        if (rc < 0) {
            return halo_cli_fail(rc);
        }
        if (machines > 0) {
            prof.machines = machines;
        }
        if (trainers > 0) {
            prof.trainers = trainers;
        }
        if (netem != NULL) {
            halo_netem ne;
            rc = halo_netem_parse(netem, &ne);
            if (rc < 0) {
                return halo_cli_fail(halo_error_prefix(rc, "--netem"));
            }
            prof.netem_lat_s = ne.lat_s;
            prof.netem_bw = ne.bw_bits / 8.0;
        }
        o.profile = &prof;
        halo_sim_profile_graph_notice(&prof, pos[0]); /* generic or another graph's constants */
    } else if (netem != NULL || machines > 0 || trainers > 0 || timeline != NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sim: --netem, --machines, --trainers "
                                         "and --timeline need --cluster"));
    }
    o.pdir = pos[0];
    char policy_buf[4096];
    o.policy = halo_cli_policy_path(policy, policy_buf, sizeof policy_buf);
    o.sets = sets.v;
    o.nsets = sets.n;
    o.fanouts = fanouts;
    o.metrics = metrics;
    o.timeline = timeline;
    o.seed = (uint64_t)seed;
    o.global_batching = strcmp(batching, "global") == 0;
    o.progress = !quiet;
    halo_sim_result res;
    rc = halo_sim_run(&o, &res);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    const halo_epoch_stats *t = &res.total;
    int64_t looked = t->cache_hits + t->cache_misses;
    printf("halo sim: %d rank%s, policy %s, depth %d, %d epoch%s x %lld batch%s: sampled edges "
           "%lld, input nodes %lld, remote nodes %lld, hit rate %.4f, received %.1f MB, "
           "messages %lld (all ranks, all epochs)\n",
           res.ranks, halo_plural(res.ranks), res.policy, res.depth, res.epochs,
           halo_plural(res.epochs), (long long)res.batches, res.batches == 1 ? "" : "es",
           (long long)t->sampled_edges, (long long)t->input_nodes, (long long)t->remote_nodes,
           looked > 0 ? (double)t->cache_hits / (double)looked : 0.0,
           (double)t->bytes_remote / 1e6, (long long)t->messages);
    if (o.profile != NULL) {
        char vtext[400];
        halo_sim_validation_text(&val, vtext, sizeof vtext);
        rc = metrics != NULL ? append_validation(metrics, prof.name, &val) : 0;
        if (rc < 0) {
            return halo_cli_fail(rc);
        }
        double n = (double)res.ranks * res.epochs;
        printf("halo sim: profile %s (%d machine%s x %d trainer%s): mean epoch %.4f s; per rank "
               "and epoch: sample %.4f, fetch %.4f, copy %.4f, compute %.4f, allreduce %.4f, "
               "wait %.4f s\n",
               prof.name, prof.machines, halo_plural(prof.machines), prof.trainers,
               halo_plural(prof.trainers), res.mean_epoch_s, t->sample_s / n,
               t->fetch_s / n, t->copy_s / n, t->compute_s / n, t->allreduce_s / n,
               t->wait_s / n);
        printf("halo sim: profile %s %s\n", prof.name, vtext);
    }
    printf("halo sim: peak RSS %.1f MiB\n", (double)res.peak_rss / 1048576.0);
    if (against != NULL) {
        rc = halo_sim_compare(against, metrics, stdout);
        if (rc < 0) {
            return halo_cli_fail(rc);
        }
    }
    return 0;
}
