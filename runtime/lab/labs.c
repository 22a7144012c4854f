/* The four labs: each makes its graphs from the seed, computes its baselines with the library
 * and the shipped policies, then scores the student's policy, every run of student code in a
 * child process (isolate.c). Sizes are small enough that one grade takes seconds to a minute
 * on two cores. */
#define _GNU_SOURCE
#include "lab/internal.h"

#include "cache/trace.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "part/part.h"
#include "part/partition.h"
#include "policy/policy.h"
#include "sim/profile.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parts of every partitioned lab graph (lab 1 asks the student for this many). */
#define LAB_PARTS 4
/* Lab 1: the balance every constraint must meet. */
#define LAB1_MAX_BALANCE 1.05
/* Lab 2: the accuracy to reach is the baseline's minus this; full marks for the edges at this
 * fraction of the baseline's edges. */
#define LAB2_TOLERANCE 0.02
#define LAB2_FULL_EDGES 0.25
/* Lab 3: the cache capacity, a fraction of each rank's halo set. */
#define LAB3_CAPACITY 0.1
/* Wall clock of the grader's own child runs (baselines, trace recording): generous, they run
 * trusted code. */
#define LAB_TRUSTED_LIMIT_S 900.0
/* Lab 4: the most slots a cache may take, a fraction of each rank's halo set (MassiveGNN's). */
#define LAB4_CAPACITY 0.25

static void crit_init(halo_lab_criterion *c, const char *name, const char *unit, double max)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->max = max;
    c->value = NAN;
}

/* The training nodes of g. */
static int64_t train_nodes(const halo_graph *g)
{
    int64_t t = 0;
    for (int64_t v = 0; v < g->nodes; v++) {
        t += g->split[v] == HALO_SPLIT_TRAIN;
    }
    return t;
}

/* Generates a graph of the lab: "sbm" (planted classes), "rmat" (power law) or "products" (the
 * ogbn-products-shaped preset), about `nodes` nodes, from seed. */
static int lab_graph(const char *kind, int64_t nodes, uint64_t seed, bool features,
                     halo_graph **out)
{
    halo_gen_params p;
    if (strcmp(kind, "products") == 0) {
        HALO_CHECK(halo_gen_preset("products", 1.0, &p));
        p.nodes = nodes;
    } else if (strcmp(kind, "rmat") == 0) {
        halo_gen_defaults(HALO_GEN_RMAT, &p);
        int scale = 1;
        while ((1LL << scale) < nodes) {
            scale++;
        }
        p.nodes = 1LL << scale;
        p.degree = 8;
    } else {
        halo_gen_defaults(HALO_GEN_SBM, &p);
        p.nodes = nodes;
        p.noise = 4;
    }
    snprintf(p.name, sizeof p.name, "lab-%s", kind);
    p.seed = seed;
    p.topology_only = !features;
    HALO_CHECK(halo_gen_check(&p));
    return halo_gen_graph(&p, out);
}

/* Partitions g with METIS into LAB_PARTS parts (or `parts`) and writes pdir. */
static int lab_partition_dir(const halo_graph *g, int parts, uint64_t seed, const char *pdir)
{
    halo_partition_opts po;
    halo_partition_opts_init(&po);
    po.parts = parts;
    po.seed = seed;
    po.choice.method = parts > 1 ? HALO_PARTITION_METIS : HALO_PARTITION_RANDOM;
    return halo_partition_run(g, &po, pdir, NULL);
}

/* ================= lab 1: partition(g) ================= */

typedef struct part_arg {
    const halo_lab_env *env; /* student's policy options */
    const halo_graph *g;     /* the graph */
    int64_t train;           /* its training nodes */
} part_arg;

/* The student's partition(g) hook, the choice applied, cut and balance measured (child). */
static int part_student(void *argp, halo_lab_criterion *c)
{
    const part_arg *a = argp;
    const halo_graph *g = a->g;
    halo_policy *pol = NULL;
    HALO_CHECK(halo_policy_open(&a->env->student, &pol));
    if (!(halo_policy_hooks(pol) & (1u << HALO_POLICY_PARTITION))) {
        halo_policy_close(pol);
        return halo_errorf(HALO_EINPUT, "the policy has no partition(g) hook");
    }
    halo_policy_graph_info gi = {0};
    gi.name = g->name;
    gi.nodes = g->nodes;
    gi.edges = g->edges;
    gi.feat_dim = g->feat_dim;
    gi.classes = g->classes;
    gi.train_nodes = a->train;
    gi.parts = LAB_PARTS;
    gi.indptr = g->indptr;
    gi.indices = g->indices;
    halo_policy_partition_choice ch;
    int rc = halo_policy_partition(pol, &gi, &ch);
    halo_policy_close(pol);
    HALO_CHECK(rc);
    if (ch.parts != LAB_PARTS) {
        halo_free(ch.assign);
        return halo_errorf(HALO_EINPUT,
                           "partition(g) chose %d parts, the lab asks for g.parts = %d", ch.parts,
                           LAB_PARTS);
    }
    static const int methods[] = {
        [HALO_POLICY_METIS] = HALO_PARTITION_METIS,
        [HALO_POLICY_MULTILEVEL] = HALO_PARTITION_MULTILEVEL,
        [HALO_POLICY_RANDOM] = HALO_PARTITION_RANDOM,
        [HALO_POLICY_STREAM] = HALO_PARTITION_STREAM,
        [HALO_POLICY_CUSTOM] = HALO_PARTITION_CUSTOM,
    };
    halo_partition_opts po;
    halo_partition_opts_init(&po);
    po.choice.method = methods[ch.method];
    po.parts = ch.parts;
    if (ch.method == HALO_POLICY_MULTILEVEL && ch.machines > 0) {
        po.machines = ch.machines;
        po.trainers_per_machine = ch.parts / ch.machines;
    }
    po.choice.constraints = 0;
    for (int i = 0; i < ch.nconstraints; i++) {
        po.choice.constraints |= ch.constraints[i] == HALO_POLICY_BAL_NODES   ? HALO_PCON_NODES
                                 : ch.constraints[i] == HALO_POLICY_BAL_TRAIN ? HALO_PCON_TRAIN
                                                                              : HALO_PCON_EDGES;
    }
    po.choice.imbalance = ch.imbalance;
    po.choice.objective = ch.objective == HALO_POLICY_VOL ? HALO_POBJ_VOL : HALO_POBJ_CUT;
    po.seed = ch.seed != 0 ? (uint64_t)ch.seed : a->env->seed;
    if (ch.method == HALO_POLICY_CUSTOM) {
        po.choice.assignment = ch.assign;
        po.choice.assignment_len = g->nodes;
    }
    int32_t *asg = HALO_ALLOC(int32_t, g->nodes);
    rc = halo_partition_assign(g, &po, asg);
    halo_free(ch.assign);
    if (rc < 0) {
        halo_free(asg);
        return rc;
    }
    double cut = (double)halo_partition_edge_cut(g, asg) / (double)g->edges;
    double bn = halo_partition_balance(g, asg, LAB_PARTS, 0);
    double bt = halo_partition_balance(g, asg, LAB_PARTS, 1);
    halo_free(asg);
    c->value = cut;
    if (!(bn <= LAB1_MAX_BALANCE + 1e-9) || !(bt <= LAB1_MAX_BALANCE + 1e-9)) {
        c->score = 0;
        snprintf(c->msg, sizeof c->msg,
                 "%s: balance nodes %.3f, train %.3f: over %.2f, so the cut %.4f is not scored",
                 halo_policy_method_name(ch.method), bn, bt, LAB1_MAX_BALANCE, cut);
        return 0;
    }
    halo_lab_interpolate(c);
    snprintf(c->msg, sizeof c->msg,
             "%s: edge cut %.4f (random %.4f, METIS %.4f), balance nodes %.3f, train %.3f",
             halo_policy_method_name(ch.method), cut, c->zero, c->full, bn, bt);
    return 0;
}

int halo_lab_partition(halo_lab_env *env, halo_lab_result *res)
{
    bool small = env->o->check;
    static const char *const kinds[] = {"sbm", "rmat"};
    const int64_t sizes[] = {small ? 3000 : 12000, small ? 2048 : 8192};
    res->ncriteria = 2;
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        halo_lab_criterion *c = &res->criteria[k];
        char name[40];
        snprintf(name, sizeof name, "cut_%s", kinds[k]);
        crit_init(c, name, "edge cut fraction", 50);
        halo_graph *g = NULL;
        HALO_CHECK(lab_graph(kinds[k], sizes[k], env->seed + (uint64_t)k, false, &g));
        int32_t *asg = HALO_ALLOC(int32_t, g->nodes);
        rc = halo_partition_random(g, LAB_PARTS, env->seed, asg);
        if (rc == 0) {
            c->zero = (double)halo_partition_edge_cut(g, asg) / (double)g->edges;
            rc = halo_partition_metis(g, LAB_PARTS, HALO_PCON_NODES | HALO_PCON_TRAIN,
                                      LAB1_MAX_BALANCE, HALO_POBJ_CUT, env->seed, asg);
        }
        if (rc == 0) {
            c->full = (double)halo_partition_edge_cut(g, asg) / (double)g->edges;
            part_arg a = {env, g, train_nodes(g)};
            rc = halo_lab_isolate(part_student, &a, env->o->time_limit_s, c);
        }
        halo_free(asg);
        halo_graph_free(g);
        HALO_CHECK(rc);
    }
    return 0;
}

/* ================= lab 2: fanout(ctx) ================= */

/* Epochs and batch of lab 2's training runs. */
#define LAB2_EPOCHS 10
#define LAB2_BATCH "200"

/* Sampled edges of all epochs and the last validation accuracy of a metrics file. */
static int read_metrics(const char *path, int64_t *edges, double *acc)
{
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    *edges = 0;
    *acc = NAN;
    int rc = 0;
    for (char *line = text; line != NULL && *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        halo_json *j = NULL;
        rc = halo_json_parse(line, strlen(line), path, &j);
        if (rc < 0) {
            break;
        }
        const char *type = NULL;
        if (halo_json_get_str(j, "type", path, &type) == 0 && strcmp(type, "epoch") == 0) {
            int64_t e = 0;
            rc = halo_json_get_i64(j, "sampled_edges", path, &e);
            *edges += e;
        } else if (type != NULL && strcmp(type, "eval") == 0) {
            rc = halo_json_get_f64(j, "val_acc", path, acc);
        }
        halo_error_clear();
        halo_json_free(j);
        if (rc < 0) {
            break;
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    halo_free(text);
    HALO_CHECK(rc);
    if (!isfinite(*acc) || *edges <= 0) {
        return halo_errorf(HALO_EINPUT, "%s: no evaluation or no sampled edges", path);
    }
    return 0;
}

/* One training run of lab 2 (a child `halo train`): with the student's policy, or with
 * fanouts (the baseline) when policy is NULL. */
static int lab2_train(const halo_lab_env *env, const char *pdir, const char *policy,
                      const char *tag, int64_t *edges, double *acc)
{
    double limit = policy != NULL ? env->o->time_limit_s : LAB_TRUSTED_LIMIT_S;
    char metrics[4200], log[4200], seed[32], every[16], epochs[16];
    snprintf(metrics, sizeof metrics, "%s/%s.jsonl", env->dir, tag);
    snprintf(log, sizeof log, "%s/%s.log", env->dir, tag);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)env->seed);
    snprintf(epochs, sizeof epochs, "%d", LAB2_EPOCHS);
    snprintf(every, sizeof every, "%d", LAB2_EPOCHS);
    const char *argv[40];
    int n = 0;
    argv[n++] = env->exe;
    argv[n++] = "train";
    argv[n++] = pdir;
    argv[n++] = "--epochs";
    argv[n++] = epochs;
    argv[n++] = "--batch";
    argv[n++] = LAB2_BATCH;
    argv[n++] = "--lr";
    argv[n++] = "0.01";
    argv[n++] = "--device";
    argv[n++] = "cpu";
    argv[n++] = "--threads";
    argv[n++] = "1";
    argv[n++] = "--eval";
    argv[n++] = "full";
    argv[n++] = "--eval-every";
    argv[n++] = every;
    argv[n++] = "--depth";
    argv[n++] = "0";
    argv[n++] = "--no-table";
    argv[n++] = "--seed";
    argv[n++] = seed;
    argv[n++] = "--metrics";
    argv[n++] = metrics;
    if (policy != NULL) {
        argv[n++] = "--policy";
        argv[n++] = policy;
    } else {
        argv[n++] = "--fanouts";
        argv[n++] = "10,25";
    }
    argv[n] = NULL;
    HALO_CHECK(halo_lab_spawn(argv, log, limit));
    return read_metrics(metrics, edges, acc);
}

/* Opens the student's policy and checks that it has a fanout hook (child). */
static int fanout_hooks(void *argp, halo_lab_criterion *c)
{
    const halo_lab_env *env = argp;
    halo_policy *pol = NULL;
    HALO_CHECK(halo_policy_open(&env->student, &pol));
    unsigned hooks = halo_policy_hooks(pol);
    halo_policy_close(pol);
    if (!(hooks & (1u << HALO_POLICY_FANOUT))) {
        return halo_errorf(HALO_EINPUT, "the policy has no fanout(ctx) hook");
    }
    c->score = c->max;
    return 0;
}

int halo_lab_fanout(halo_lab_env *env, halo_lab_result *res)
{
    res->ncriteria = 2;
    halo_lab_criterion *ca = &res->criteria[0], *ce = &res->criteria[1];
    crit_init(ca, "accuracy", "validation accuracy", 30);
    crit_init(ce, "edges", "sampled edges, all epochs", 70);
    halo_graph *g = NULL;
    HALO_CHECK(lab_graph("sbm", env->o->check ? 3000 : 6000, env->seed, true, &g));
    char pdir[4200];
    snprintf(pdir, sizeof pdir, "%s/p", env->dir);
    int rc = lab_partition_dir(g, 1, env->seed, pdir);
    halo_graph_free(g);
    HALO_CHECK(rc);
    int64_t base_edges = 0;
    double base_acc = 0;
    rc = lab2_train(env, pdir, NULL, "baseline", &base_edges, &base_acc);
    if (rc < 0) {
        return halo_error_prefix(rc, "lab 2 baseline (fanouts 10,25)");
    }
    double target = base_acc - LAB2_TOLERANCE;
    ca->zero = target - 0.1;
    ca->full = target;
    ce->zero = (double)base_edges;
    ce->full = LAB2_FULL_EDGES * (double)base_edges;
    double t0 = halo_now();
    int64_t edges = 0;
    double acc = NAN;
    halo_lab_criterion hk;
    crit_init(&hk, "hooks", "", 1);
    HALO_CHECK(halo_lab_isolate(fanout_hooks, env, env->o->time_limit_s, &hk));
    if (hk.score < hk.max) {
        rc = halo_errorf(HALO_ELUA, "%s", hk.msg);
    } else {
        rc = lab2_train(env, pdir, env->o->student, "student", &edges, &acc);
    }
    ca->seconds = ce->seconds = halo_now() - t0;
    if (rc < 0) {
        snprintf(ca->msg, sizeof ca->msg, "%s", halo_errmsg());
        halo_lab_clean(ca->msg);
        snprintf(ce->msg, sizeof ce->msg, "no run (see accuracy)");
        halo_error_clear();
        return 0;
    }
    ca->value = acc;
    ce->value = (double)edges;
    halo_lab_interpolate(ca);
    snprintf(ca->msg, sizeof ca->msg, "accuracy %.4f, target %.4f (the 10,25 baseline %.4f - %.2f)",
             acc, target, base_acc, LAB2_TOLERANCE);
    if (acc + 1e-12 < target) {
        ce->score = 0;
        snprintf(ce->msg, sizeof ce->msg,
                 "%lld edges not scored: the accuracy %.4f is below the target %.4f",
                 (long long)edges, acc, target);
    } else {
        halo_lab_interpolate(ce);
        snprintf(ce->msg, sizeof ce->msg,
                 "%lld sampled edges, %.2f of the baseline's %lld (full marks at %.2f)",
                 (long long)edges, (double)edges / (double)base_edges, (long long)base_edges,
                 LAB2_FULL_EDGES);
    }
    return 0;
}

/* ================= lab 3: cache_init / cache_batch ================= */

/* Epochs and batch of lab 3's traces. */
#define LAB3_EPOCHS "3"
#define LAB3_BATCH "100"

typedef struct cache_arg {
    const halo_lab_env *env; /* student's policy options */
    const halo_trace *t;     /* the trace */
    int64_t slots;           /* most slots allowed, all ranks together */
} cache_arg;

/* The policy's parameters as "\nname=value\n" lines (for the hint and f checks). */
static int policy_params(const halo_policy_opts *po, char **out)
{
    halo_policy *pol = NULL;
    HALO_CHECK(halo_policy_open(po, &pol));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        halo_policy_close(pol);
        return halo_errorf(HALO_EIO, "lab: open_memstream failed");
    }
    fputc('\n', f);
    halo_policy_print_params(pol, f, "");
    fclose(f);
    halo_policy_close(pol);
    *out = buf;
    return 0;
}

static double hit_rate(const halo_trace_result *r)
{
    int64_t n = r->stats.hits + r->stats.misses;
    return n > 0 ? (double)r->stats.hits / (double)n : 0;
}

/* Replays the trace through a policy at LAB3_CAPACITY when it declares the parameter f. */
static int replay_at(const halo_policy_opts *base, const halo_trace *t, halo_trace_result *r)
{
    char *params = NULL;
    HALO_CHECK(policy_params(base, &params));
    bool has_f = strstr(params, "\nf=") != NULL;
    free(params);
    halo_policy_opts po = *base;
    char fset[32];
    snprintf(fset, sizeof fset, "f=%g", LAB3_CAPACITY);
    const char *sets[1] = {fset};
    if (has_f) {
        po.params = sets;
        po.nparams = 1;
    }
    return halo_trace_replay(t, &po, 0, r);
}

static int cache_student(void *argp, halo_lab_criterion *c)
{
    const cache_arg *a = argp;
    char *params = NULL;
    HALO_CHECK(policy_params(&a->env->student, &params));
    bool ahead = strstr(params, "\nhint=next_use\n") != NULL;
    free(params);
    if (ahead) {
        return halo_errorf(HALO_EINPUT,
                           "hint=next_use (Belady's look at the future) is not allowed here");
    }
    halo_trace_result r;
    HALO_CHECK(replay_at(&a->env->student, a->t, &r));
    if (r.capacity > a->slots) {
        return halo_errorf(HALO_EINPUT, "capacity %lld slots is over the 10%% budget (%lld)",
                           (long long)r.capacity, (long long)a->slots);
    }
    c->value = hit_rate(&r);
    halo_lab_interpolate(c);
    snprintf(c->msg, sizeof c->msg,
             "hit rate %.4f with %lld slots (LRU %.4f, Belady %.4f), %lld prefetched rows",
             c->value, (long long)r.capacity, c->zero, c->full, (long long)r.stats.prefetched);
    return 0;
}

int halo_lab_cache(halo_lab_env *env, halo_lab_result *res)
{
    bool small = env->o->check;
    static const char *const kinds[] = {"products", "rmat"};
    const int64_t sizes[] = {small ? 6000 : 20000, small ? 4096 : 16384};
    res->ncriteria = 2;
    char lru[4200], belady[4200];
    HALO_CHECK(halo_lab_rootpath(env, "policies/lru.lua", lru, sizeof lru));
    HALO_CHECK(halo_lab_rootpath(env, "policies/belady.lua", belady, sizeof belady));
    for (int k = 0; k < 2; k++) {
        halo_lab_criterion *c = &res->criteria[k];
        char name[40], pdir[4200], trc[4200], log[4200], seed[32];
        snprintf(name, sizeof name, "hits_%s", kinds[k]);
        crit_init(c, name, "hit rate at 10% capacity", 50);
        snprintf(pdir, sizeof pdir, "%s/p%d", env->dir, k);
        snprintf(trc, sizeof trc, "%s/t%d.trc", env->dir, k);
        snprintf(log, sizeof log, "%s/record%d.log", env->dir, k);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)env->seed);
        halo_graph *g = NULL;
        HALO_CHECK(lab_graph(kinds[k], sizes[k], env->seed + (uint64_t)k, false, &g));
        int rc = lab_partition_dir(g, LAB_PARTS, env->seed, pdir);
        halo_graph_free(g);
        HALO_CHECK(rc);
        const char *argv[] = {env->exe,    "trace",   "record",   pdir,     "-o", trc, "--epochs",
                              LAB3_EPOCHS, "--batch", LAB3_BATCH, "--seed", seed, NULL};
        rc = halo_lab_spawn(argv, log, LAB_TRUSTED_LIMIT_S);
        if (rc < 0) {
            return halo_error_prefix(rc, "lab 3: recording the trace");
        }
        halo_trace *t = NULL;
        HALO_CHECK(halo_trace_load(trc, &t));
        halo_policy_opts po = {0};
        po.rank = -1;
        halo_trace_result r;
        po.path = lru;
        rc = replay_at(&po, t, &r);
        c->zero = hit_rate(&r);
        if (rc == 0) {
            po.path = belady;
            rc = replay_at(&po, t, &r);
            c->full = hit_rate(&r);
        }
        cache_arg a = {env, t, 0};
        for (int rk = 0; rk < t->ranks; rk++) {
            a.slots += (int64_t)floor(LAB3_CAPACITY * (double)t->rank[rk].num_halo);
        }
        if (rc == 0) {
            rc = halo_lab_isolate(cache_student, &a, env->o->time_limit_s, c);
        }
        halo_trace_free(t);
        HALO_CHECK(rc);
    }
    return 0;
}

/* ================= lab 4: adaptive caching on a simulated cluster ================= */

#define LAB4_EPOCHS 3
#define LAB4_BATCH 100
#define LAB4_REF_DEPTH 4 /* distdglv2.lua's depth */
#define LAB4_REF_DEPTH_S "4"
#define LAB4_SLOW_NET_BPS (1e9 / 8) /* bytes/s: 1 Gbit/s per link on the second cluster */

typedef struct adapt_arg {
    const halo_lab_env *env;      /* student's policy options */
    const char *pdir;             /* the partition */
    const halo_sim_profile *prof; /* the cluster */
    const char *full_by;          /* the reference that sets full marks */
} adapt_arg;

/* Checks that the policy's cache_init keeps to LAB4_CAPACITY of every part's halo set, by
 * calling it with each part's real halo set. */
static int adapt_capacity(const halo_lab_env *env, const char *pdir)
{
    halo_partinfo *pi = NULL;
    HALO_CHECK(halo_partinfo_load(pdir, &pi));
    halo_policy *pol = NULL;
    int rc = halo_policy_open(&env->student, &pol);
    for (int k = 0; rc == 0 && k < pi->parts; k++) {
        halo_part *p = NULL;
        rc = halo_part_load(pdir, k, &p);
        if (rc < 0) {
            break;
        }
        int64_t n = p->num_halo;
        int32_t *owner = HALO_ALLOC(int32_t, n + 1);
        int64_t *misses = HALO_NEW(int64_t, n + 1);
        double *score = HALO_NEW(double, n + 1);
        int32_t *ids = HALO_ALLOC(int32_t, n + 1);
        for (int64_t i = 0; i < n; i++) {
            owner[i] = halo_partinfo_owner(pi, p->halo[i]);
        }
        halo_policy_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.rank = k;
        ctx.ranks = pi->parts;
        ctx.epoch = -1;
        ctx.epochs = LAB4_EPOCHS;
        ctx.batch = -1;
        ctx.batch_size = LAB4_BATCH;
        ctx.graph.nodes = pi->nodes;
        ctx.graph.edges = pi->edges;
        ctx.graph.feat_dim = pi->feat_dim;
        ctx.graph.classes = pi->classes;
        ctx.graph.train_nodes = pi->train_per_part * pi->parts;
        ctx.part.parts = pi->parts;
        ctx.part.id = k;
        ctx.part.nodes = p->nodes;
        ctx.part.edges = p->edges;
        ctx.part.train_nodes = p->num_train;
        ctx.halo.n = n;
        ctx.halo.ids = p->halo;
        ctx.halo.deg = p->halo_deg;
        ctx.halo.owner = owner;
        ctx.halo.misses = misses;
        ctx.halo.score = score;
        halo_policy_cache_plan plan;
        memset(&plan, 0, sizeof plan);
        plan.ids = ids;
        rc = halo_policy_cache_init(pol, &ctx, &plan);
        int64_t most = (int64_t)floor(LAB4_CAPACITY * (double)n);
        if (rc == 0 && plan.capacity > most) {
            rc = halo_errorf(HALO_EINPUT,
                             "cache_init on rank %d: capacity %lld slots is over the 25%% budget "
                             "(%lld of %lld halo nodes)",
                             k, (long long)plan.capacity, (long long)most, (long long)n);
        }
        halo_free(owner);
        halo_free(misses);
        halo_free(score);
        halo_free(ids);
        halo_part_free(p);
    }
    halo_policy_close(pol);
    halo_partinfo_free(pi);
    return rc;
}

/* Simulated mean epoch time of a policy (fanouts fixed at 10,25) at pipeline depth `depth`
 * (-1: the policy's own pipeline hook). */
static int adapt_sim(const halo_lab_env *env, const char *pdir, const halo_sim_profile *prof,
                     const char *policy, int depth, double *epoch_s, halo_sim_result *r)
{
    halo_sim_opts so;
    halo_sim_opts_default(&so);
    so.pdir = pdir;
    so.policy = policy;
    so.epochs = LAB4_EPOCHS;
    so.batch = LAB4_BATCH;
    so.fanouts = "10,25";
    so.seed = env->seed;
    so.profile = prof;
    so.depth = depth;
    so.progress = false;
    HALO_CHECK(halo_sim_run(&so, r));
    *epoch_s = r->mean_epoch_s;
    return 0;
}

static int adapt_student(void *argp, halo_lab_criterion *c)
{
    const adapt_arg *a = argp;
    HALO_CHECK(adapt_capacity(a->env, a->pdir));
    halo_sim_result r;
    double t = 0;
    HALO_CHECK(adapt_sim(a->env, a->pdir, a->prof, a->env->o->student, -1, &t, &r));
    c->value = t;
    halo_lab_interpolate(c);
    double hits = (double)(r.total.cache_hits + r.total.cache_misses);
    snprintf(c->msg, sizeof c->msg,
             "epoch %.5f s (distdgl %.5f, full marks %.5f: %s), depth %d, hit rate %.4f", t,
             c->zero, c->full, a->full_by, r.depth,
             hits > 0 ? (double)r.total.cache_hits / hits : 0);
    return 0;
}

int halo_lab_adaptive(halo_lab_env *env, halo_lab_result *res)
{
    /* Two clusters where different ideas pay: Perlmutter's fast network, where fetches are
     * short and a deep pipeline hides them (depth wins), and AWS p3dn with every link held to
     * LAB4_SLOW_NET_BPS (a congested cloud network), where fetches outlast the compute and only
     * fewer bytes help (the buffer wins). */
    static const char *const clusters[] = {"perlmutter", "aws-p3dn"};
    static const char *const names[] = {"time_perlmutter", "time_aws_1gbit"};
    static const int machines[] = {4, 2};
    static const double link_bps[] = {0, LAB4_SLOW_NET_BPS};
    res->ncriteria = 2;
    char distdgl[4200], massive[4200], v2[4200], pdir[4200];
    HALO_CHECK(halo_lab_rootpath(env, "policies/distdgl.lua", distdgl, sizeof distdgl));
    HALO_CHECK(halo_lab_rootpath(env, "policies/massivegnn.lua", massive, sizeof massive));
    HALO_CHECK(halo_lab_rootpath(env, "policies/distdglv2.lua", v2, sizeof v2));
    halo_graph *g = NULL;
    HALO_CHECK(lab_graph("products", env->o->check ? 8000 : 20000, env->seed, false, &g));
    snprintf(pdir, sizeof pdir, "%s/p", env->dir);
    int rc = lab_partition_dir(g, LAB_PARTS, env->seed, pdir);
    halo_graph_free(g);
    HALO_CHECK(rc);
    for (int k = 0; k < 2; k++) {
        halo_lab_criterion *c = &res->criteria[k];
        char rel[256], path[4200], name[40];
        snprintf(name, sizeof name, "%s", names[k]);
        crit_init(c, name, "simulated epoch seconds", 50);
        snprintf(rel, sizeof rel, "experiments/clusters/%s.lua", clusters[k]);
        HALO_CHECK(halo_lab_rootpath(env, rel, path, sizeof path));
        halo_sim_profile prof;
        HALO_CHECK(halo_sim_profile_load(path, &prof));
        prof.machines = machines[k];
        prof.trainers = LAB_PARTS / machines[k];
        prof.netem_bw = link_bps[k];
        halo_sim_result r;
        HALO_CHECK(adapt_sim(env, pdir, &prof, distdgl, -1, &c->zero, &r));
        /* Full marks: the best of the two papers' fixed choices and of both together (the
         * MassiveGNN buffer at DistDGLv2's depth), so that neither idea alone earns them. */
        const struct {
            const char *policy;
            int depth;
            const char *what;
        } refs[] = {{massive, -1, "massivegnn.lua"},
                    {v2, -1, "distdglv2.lua"},
                    {massive, LAB4_REF_DEPTH, "massivegnn.lua at depth " LAB4_REF_DEPTH_S}};
        adapt_arg a = {env, pdir, &prof, NULL};
        c->full = 0;
        for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
            double t;
            HALO_CHECK(adapt_sim(env, pdir, &prof, refs[i].policy, refs[i].depth, &t, &r));
            if (a.full_by == NULL || t < c->full) {
                c->full = t;
                a.full_by = refs[i].what;
            }
        }
        if (!(c->full < c->zero)) {
            return halo_errorf(HALO_ESTATE,
                               "lab 4: %s (%.5f s) is not faster than distdgl.lua (%.5f s) on "
                               "%s: no scale to grade on",
                               a.full_by, c->full, c->zero, clusters[k]);
        }
        HALO_CHECK(halo_lab_isolate(adapt_student, &a, env->o->time_limit_s, c));
    }
    return 0;
}
