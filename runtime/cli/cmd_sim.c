/* halo sim: replays a training run of every rank of a partition in one process and models its
 * time on a cluster profile. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/netem.h"
#include "pipe/timeline.h"
#include "sim/sim.h"
#include "sim/validate.h"

#include <stdio.h>
#include <string.h>

int halo_cmd_sim(int argc, char **argv)
{
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
        "embedding traffic of featureless types (docs/sim.md, \"Typed graphs\").",
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
    if (cluster != NULL) {
        rc = halo_sim_profile_load(cluster, &prof);
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
        double n = (double)res.ranks * res.epochs;
        printf("halo sim: profile %s (%d machine%s x %d trainer%s): mean epoch %.4f s; per rank "
               "and epoch: sample %.4f, fetch %.4f, copy %.4f, compute %.4f, allreduce %.4f, "
               "wait %.4f s\n",
               prof.name, prof.machines, halo_plural(prof.machines), prof.trainers,
               halo_plural(prof.trainers), res.mean_epoch_s, t->sample_s / n,
               t->fetch_s / n, t->copy_s / n, t->compute_s / n, t->allreduce_s / n,
               t->wait_s / n);
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
