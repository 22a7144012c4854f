/* halo partition: flags or a policy's `partition` hook fill the partition choice, then the
 * library partitions, relabels and writes the partition directory. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "part/partition.h"
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

/* Asks the policy's partition(g) hook for the choice and puts it into po (its custom assignment,
 * if any, is returned in *assign for the caller to free). */
static int choice_from_policy(const halo_graph *g, const char *path, const halo_strlist *sets,
                              bool unsafe, halo_partition_opts *po, int32_t **assign,
                              const char **method)
{
    halo_policy_opts o = {0};
    o.path = path;
    o.params = sets->v;
    o.nparams = sets->n;
    o.unsafe = unsafe;
    o.rank = -1;
    halo_policy *pol = NULL;
    HALO_CHECK(halo_policy_open(&o, &pol));
    halo_policy_graph_info gi = {0};
    gi.name = g->name;
    gi.nodes = g->nodes;
    gi.edges = g->edges;
    gi.feat_dim = g->feat_dim;
    gi.classes = g->classes;
    for (int64_t v = 0; v < g->nodes; v++) {
        gi.train_nodes += g->split[v] == HALO_SPLIT_TRAIN;
    }
    gi.parts = po->parts;
    gi.indptr = g->indptr;
    gi.indices = g->indices;
    halo_policy_partition_choice c;
    int rc = halo_policy_partition(pol, &gi, &c);
    halo_policy_close(pol);
    HALO_CHECK(rc);
    static const int methods[] = {
        [HALO_POLICY_METIS] = HALO_PARTITION_METIS,
        [HALO_POLICY_MULTILEVEL] = HALO_PARTITION_MULTILEVEL,
        [HALO_POLICY_RANDOM] = HALO_PARTITION_RANDOM,
        [HALO_POLICY_STREAM] = HALO_PARTITION_STREAM,
        [HALO_POLICY_CUSTOM] = HALO_PARTITION_CUSTOM,
    };
    po->choice.method = methods[c.method];
    *method = halo_policy_method_name(c.method);
    po->parts = c.parts;
    if (c.method == HALO_POLICY_MULTILEVEL) {
        po->machines = c.machines;
        po->trainers_per_machine = c.machines > 0 ? c.parts / c.machines : 1;
    } else {
        po->machines = 0;
        po->trainers_per_machine = 1;
    }
    po->choice.constraints = 0;
    for (int i = 0; i < c.nconstraints; i++) {
        po->choice.constraints |= c.constraints[i] == HALO_POLICY_BAL_NODES   ? HALO_PCON_NODES
                                  : c.constraints[i] == HALO_POLICY_BAL_TRAIN ? HALO_PCON_TRAIN
                                                                              : HALO_PCON_EDGES;
    }
    po->choice.imbalance = c.imbalance;
    po->choice.objective = c.objective == HALO_POLICY_VOL ? HALO_POBJ_VOL : HALO_POBJ_CUT;
    if (c.seed != 0) {
        po->seed = (uint64_t)c.seed;
    }
    if (c.method == HALO_POLICY_CUSTOM) {
        po->choice.assignment = c.assign;
        po->choice.assignment_len = g->nodes;
        *assign = c.assign;
    }
    po->policy = path;
    return 0;
}

/* The flags of `halo partition`. */
typedef struct part_cli {
    int parts;               /* --parts */
    int machines;            /* --machines */
    int trainers;            /* --trainers */
    int64_t seed;            /* --seed */
    double imbalance;        /* --imbalance */
    const char *out;         /* --output */
    const char *method;      /* --method (after a policy or --assign: what chose) */
    const char *constraints; /* --constraints */
    const char *objective;   /* --objective */
    const char *stream;      /* --stream */
    bool force;              /* --force */
    bool sort_rows;          /* --sort-rows */
    bool unsafe;             /* --unsafe */
    const char *policy;      /* --policy */
    const char *assign_path; /* --assign */
    halo_strlist sets;       /* --set */
} part_cli;

enum { PART_NOPTS = 20 }; /* room for part_flags' table */

/* The flag table of `halo partition`, pointing into c. */
static void part_flags(part_cli *c, halo_opt opts[PART_NOPTS])
{
    const halo_opt t[] = {
        {"policy", 0, HALO_OPT_STRING, &c->policy, "FILE",
         "a policy whose partition(g) hook makes the choice (overrides the flags below)"},
        {"set", 0, HALO_OPT_LIST, &c->sets, "NAME=VALUE", "a policy parameter (repeatable)"},
        {"unsafe", 0, HALO_OPT_FLAG, &c->unsafe, NULL, "run the policy without the sandbox"},
        {"assign", 0, HALO_OPT_STRING, &c->assign_path, "FILE",
         "take the part of each node from FILE (raw int32 or .npy int32/int64, one per node)"},
        {"parts", 'p', HALO_OPT_INT, &c->parts, "P", "number of parts (multilevel: M x G)"},
        {"output", 'o', HALO_OPT_STRING, &c->out, "PDIR", "partition directory to write"},
        {"method", 0, HALO_OPT_STRING, &c->method, "NAME",
         "metis | multilevel | random | stream | ptscotch (under mpirun; custom comes from a "
         "policy)"},
        {"constraints", 0, HALO_OPT_STRING, &c->constraints, "LIST",
         "balance constraints, any of nodes,train,edges"},
        {"imbalance", 0, HALO_OPT_DOUBLE, &c->imbalance, "X",
         "tolerance per constraint (max/mean)"},
        {"objective", 0, HALO_OPT_STRING, &c->objective, "cut|vol", "METIS objective"},
        {"machines", 0, HALO_OPT_INT, &c->machines, "M", "machines (default: P machines)"},
        {"trainers", 0, HALO_OPT_INT, &c->trainers, "G",
         "trainers per machine, one part each (multilevel): P = M x G"},
        {"stream", 0, HALO_OPT_STRING, &c->stream, "ldg|fennel", "streaming heuristic"},
        {"seed", 0, HALO_OPT_I64, &c->seed, "S", "seed of METIS and every random choice"},
        {"sort-rows", 0, HALO_OPT_FLAG, &c->sort_rows, NULL,
         "sort each in-edge row by new id (default: keep the input graph's order)"},
        {"force", 0, HALO_OPT_FLAG, &c->force, NULL,
         "replace an output directory holding another graph's partition"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    _Static_assert(sizeof t / sizeof t[0] <= PART_NOPTS, "PART_NOPTS too small");
    memcpy(opts, t, sizeof t);
}

/* The partition options of the flags, and their checks that need no file. */
static int part_options(part_cli *c, int npos, halo_partition_opts *po)
{
    if (npos != 1) {
        return halo_errorf(HALO_EUSAGE, "partition: expected one graph directory (got %d "
                           "arguments)", npos);
    }
    if (c->out == NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: -o PDIR is required");
    }
    halo_partition_opts_init(po);
    po->parts = c->parts;
    po->machines = c->machines;
    po->trainers_per_machine = c->trainers;
    po->seed = (uint64_t)c->seed;
    po->force = c->force;
    po->sort_rows = c->sort_rows;
    po->choice.imbalance = c->imbalance;
    int rc;
    if ((rc = halo_partition_parse_method(c->method, &po->choice.method)) < 0 ||
        (rc = halo_partition_parse_constraints(c->constraints, &po->choice.constraints)) < 0 ||
        (rc = halo_partition_parse_objective(c->objective, &po->choice.objective)) < 0 ||
        (rc = halo_partition_parse_stream(c->stream, &po->choice.stream)) < 0) {
        return rc;
    }
    if (c->assign_path != NULL && c->policy != NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: --assign and --policy both choose the "
                           "parts; give one");
    }
    if (c->sets.n > 0 && c->policy == NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: --set needs --policy");
    }
    if (po->choice.method == HALO_PARTITION_CUSTOM && c->policy == NULL && c->assign_path == NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: --method custom needs a policy that returns "
                           "an assignment");
    }
    if (c->parts < 0 || c->machines < 0 || c->trainers < 1) {
        return halo_errorf(HALO_EUSAGE, "partition: --parts, --machines and --trainers must be "
                           ">= 1");
    }
    if (c->parts == 0 && c->machines == 0 && c->policy == NULL && c->assign_path == NULL) {
        return halo_errorf(HALO_EUSAGE, "partition: --parts must be >= 1 (got 0 or none)");
    }
    if (c->imbalance < 1.0) {
        return halo_errorf(HALO_EUSAGE, "partition: --imbalance %g is below 1", c->imbalance);
    }
    return 0;
}

/* The choice of a policy's hook or of --assign, over the flags' (*assign: the array to free). */
static int part_choice(part_cli *c, const halo_graph *g, halo_partition_opts *po,
                       int32_t **assign)
{
    if (c->policy != NULL) {
        char policy_buf[4096];
        const char *ppath = halo_cli_policy_path(c->policy, policy_buf, sizeof policy_buf);
        int rc = choice_from_policy(g, ppath, &c->sets, c->unsafe, po, assign, &c->method);
        c->imbalance = po->choice.imbalance;
        return rc;
    }
    if (c->assign_path != NULL) {
        int p = 0;
        int rc = halo_partition_load_assign(c->assign_path, g->nodes, c->parts, assign, &p);
        if (rc < 0) {
            return halo_error_prefix(rc, "--assign");
        }
        po->parts = p;
        po->machines = 0;
        po->trainers_per_machine = 1;
        po->choice.method = HALO_PARTITION_CUSTOM;
        po->choice.assignment = *assign;
        po->choice.assignment_len = g->nodes;
        c->method = "custom (--assign)";
    }
    return 0;
}

/* The line of a written partition, and a warning per constraint over its tolerance. */
static void part_report(const part_cli *c, const char *dir, const halo_graph *g,
                        const halo_partition_opts *po, const halo_partition_stats *st, double t0)
{
    halo_info("partitioned %s (%lld nodes, %lld edges) with %s into %s in %.2f s: edge cut "
              "%.2f%%, balance nodes %.3f train %.3f edges %.3f, replication %.3f, %lld "
              "seeds per part, peak RSS %.1f MiB",
              dir, (long long)g->nodes, (long long)g->edges, c->method, c->out, halo_now() - t0,
              100.0 * st->edge_cut_fraction, st->balance[0], st->balance[1], st->balance[2],
              st->replication, (long long)st->train_per_part, (double)st->rss_peak / 1048576.0);
    static const char *const names[3] = {"nodes", "train", "edges"};
    for (int k = 0; k < 3; k++) {
        bool constrained = (po->choice.constraints & (1u << k)) != 0;
        if (constrained && po->choice.method != HALO_PARTITION_RANDOM &&
            st->balance[k] > c->imbalance + 1e-3) {
            halo_warn("partition: %s balance %.3f exceeds the tolerance %.3f (METIS allows "
                      "itself some slack on small graphs or many constraints; stream puts "
                      "a node that fits nowhere on the part it overfills least)",
                      names[k], st->balance[k], c->imbalance);
        }
    }
}

int halo_cmd_partition(int argc, char **argv)
{
    part_cli c = {.trainers = 1, .seed = 1, .imbalance = 1.05, .method = "metis",
                  .constraints = "nodes,train,edges", .objective = "cut", .stream = "ldg"};
    halo_opt opts[PART_NOPTS];
    part_flags(&c, opts);
    const halo_cmd_help help = {
        "halo partition DIR --parts P -o PDIR [flags]",
        "Partitions the graph directory DIR into P parts and writes the partition directory\n"
        "PDIR (partition.json, orig_id.i64, part-K/): nodes relabelled so each part owns a\n"
        "contiguous id range, each part's in-edges, features, labels, split, halo nodes and an\n"
        "equal number of training seeds (DistDGL's force-even split); a topology-only graph\n"
        "(halo gen --no-features) gives parts without feat.f32, for the simulator (halo train\n"
        "refuses them). multilevel partitions across --machines M first, then each machine\n"
        "across its --trainers G (DGL: num_trainers per machine).\n"
        "With --policy, the policy's partition(g) hook chooses the method, parts, constraints,\n"
        "imbalance and objective (or returns an assignment); g.parts is --parts.\n"
        "With --assign FILE, another tool's node -> part array (e.g. DGL's METIS call saved by\n"
        "numpy.save) is used as it is: one entry per node of DIR, part ids in [0, --parts) (or\n"
        "0..largest without --parts), no part empty; nodes are relabelled and written as for\n"
        "any method.\n"
        "With --method ptscotch, run under mpirun -np R: each rank reads its own slice of the\n"
        "CSR, PT-Scotch partitions across the R ranks, and halo's refinement balances the\n"
        "constraints on rank 0, which writes PDIR (docs/partition.md). A graph that fits\n"
        "PT-Scotch's 32-bit integers runs in halo-ptscotch32 beside this program (half the\n"
        "memory); HALO_PTSCOTCH_INT=32|64 forces the width (mpirun -x HALO_PTSCOTCH_INT).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos = 0;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    halo_partition_opts po;
    rc = part_options(&c, npos, &po);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    if (po.choice.method == HALO_PARTITION_PTSCOTCH) { /* under mpirun: cmd_partition_dist.c */
        return c.policy != NULL || c.assign_path != NULL
                   ? halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --method ptscotch "
                                                            "takes no --policy or --assign"))
                   : halo_cli_partition_ptscotch(pos[0], c.out, &po);
    }
    halo_graph *g = NULL;
    rc = halo_graph_load(pos[0], &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    int32_t *assign = NULL;
    rc = part_choice(&c, g, &po, &assign);
    if (rc < 0) {
        halo_free(assign);
        halo_graph_free(g);
        return halo_cli_fail(rc);
    }
    halo_partition_stats st;
    double t0 = halo_now();
    rc = halo_partition_run(g, &po, c.out, &st);
    halo_free(assign);
    if (rc == 0) {
        part_report(&c, pos[0], g, &po, &st, t0);
    }
    halo_graph_free(g);
    return rc < 0 ? halo_cli_fail(rc) : 0;
}
