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

int halo_cmd_partition(int argc, char **argv)
{
    int parts = 0, machines = 0, trainers = 1;
    int64_t seed = 1;
    double imbalance = 1.05;
    const char *out = NULL, *method = "metis", *constraints = "nodes,train,edges";
    const char *objective = "cut", *stream = "ldg";
    bool force = false, sort_rows = false, unsafe = false;
    const char *policy = NULL, *assign_path = NULL;
    halo_strlist sets = {0};
    const halo_opt opts[] = {
        {"policy", 0, HALO_OPT_STRING, &policy, "FILE",
         "a policy whose partition(g) hook makes the choice (overrides the flags below)"},
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "a policy parameter (repeatable)"},
        {"unsafe", 0, HALO_OPT_FLAG, &unsafe, NULL, "run the policy without the sandbox"},
        {"assign", 0, HALO_OPT_STRING, &assign_path, "FILE",
         "take the part of each node from FILE (raw int32 or .npy int32/int64, one per node)"},
        {"parts", 'p', HALO_OPT_INT, &parts, "P", "number of parts (multilevel: M x G)"},
        {"output", 'o', HALO_OPT_STRING, &out, "PDIR", "partition directory to write"},
        {"method", 0, HALO_OPT_STRING, &method, "NAME",
         "metis | multilevel | random | stream | ptscotch (under mpirun; custom comes from a "
         "policy)"},
        {"constraints", 0, HALO_OPT_STRING, &constraints, "LIST",
         "balance constraints, any of nodes,train,edges"},
        {"imbalance", 0, HALO_OPT_DOUBLE, &imbalance, "X", "tolerance per constraint (max/mean)"},
        {"objective", 0, HALO_OPT_STRING, &objective, "cut|vol", "METIS objective"},
        {"machines", 0, HALO_OPT_INT, &machines, "M", "machines (default: P machines)"},
        {"trainers", 0, HALO_OPT_INT, &trainers, "G",
         "trainers per machine, one part each (multilevel): P = M x G"},
        {"stream", 0, HALO_OPT_STRING, &stream, "ldg|fennel", "streaming heuristic"},
        {"seed", 0, HALO_OPT_I64, &seed, "S", "seed of METIS and every random choice"},
        {"sort-rows", 0, HALO_OPT_FLAG, &sort_rows, NULL,
         "sort each in-edge row by new id (default: keep the input graph's order)"},
        {"force", 0, HALO_OPT_FLAG, &force, NULL,
         "replace an output directory holding another graph's partition"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
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
        "constraints on rank 0, which writes PDIR (docs/partition.md).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos = 0;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: expected one graph directory "
                                                      "(got %d arguments)", npos));
    }
    if (out == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: -o PDIR is required"));
    }
    halo_partition_opts po;
    halo_partition_opts_init(&po);
    po.parts = parts;
    po.machines = machines;
    po.trainers_per_machine = trainers;
    po.seed = (uint64_t)seed;
    po.force = force;
    po.sort_rows = sort_rows;
    po.choice.imbalance = imbalance;
    if ((rc = halo_partition_parse_method(method, &po.choice.method)) < 0 ||
        (rc = halo_partition_parse_constraints(constraints, &po.choice.constraints)) < 0 ||
        (rc = halo_partition_parse_objective(objective, &po.choice.objective)) < 0 ||
        (rc = halo_partition_parse_stream(stream, &po.choice.stream)) < 0) {
        return halo_cli_fail(rc);
    }
    if (assign_path != NULL && policy != NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --assign and --policy both "
                                                      "choose the parts; give one"));
    }
    if (sets.n > 0 && policy == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --set needs --policy"));
    }
    if (po.choice.method == HALO_PARTITION_CUSTOM && policy == NULL && assign_path == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --method custom needs a policy "
                                                      "that returns an assignment"));
    }
    if (parts < 0 || machines < 0 || trainers < 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                         "partition: --parts, --machines and "
                                         "--trainers must be >= 1"));
    }
    if (parts == 0 && machines == 0 && policy == NULL && assign_path == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --parts must be >= 1 (got 0 "
                                                      "or none)"));
    }
    if (imbalance < 1.0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --imbalance %g is below 1",
                                         imbalance));
    }
    if (po.choice.method == HALO_PARTITION_PTSCOTCH) { /* under mpirun: cmd_partition_dist.c */
        return policy != NULL || assign_path != NULL
                   ? halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --method ptscotch "
                                                            "takes no --policy or --assign"))
                   : halo_cli_partition_ptscotch(pos[0], out, &po);
    }
    halo_graph *g = NULL;
    rc = halo_graph_load(pos[0], &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    int32_t *assign = NULL;
    if (policy != NULL) {
        char policy_buf[4096];
        const char *ppath = halo_cli_policy_path(policy, policy_buf, sizeof policy_buf);
        rc = choice_from_policy(g, ppath, &sets, unsafe, &po, &assign, &method);
        if (rc < 0) {
            halo_graph_free(g);
            return halo_cli_fail(rc);
        }
        imbalance = po.choice.imbalance;
    } else if (assign_path != NULL) {
        int p = 0;
        rc = halo_partition_load_assign(assign_path, g->nodes, parts, &assign, &p);
        if (rc < 0) {
            halo_graph_free(g);
            return halo_cli_fail(halo_error_prefix(rc, "--assign"));
        }
        po.parts = p;
        po.machines = 0;
        po.trainers_per_machine = 1;
        po.choice.method = HALO_PARTITION_CUSTOM;
        po.choice.assignment = assign;
        po.choice.assignment_len = g->nodes;
        method = "custom (--assign)";
    }
    halo_partition_stats st;
    double t0 = halo_now();
    rc = halo_partition_run(g, &po, out, &st);
    halo_free(assign);
    if (rc == 0) {
        halo_info("partitioned %s (%lld nodes, %lld edges) with %s into %s in %.2f s: edge cut "
                  "%.2f%%, balance nodes %.3f train %.3f edges %.3f, replication %.3f, %lld "
                  "seeds per part, peak RSS %.1f MiB",
                  pos[0], (long long)g->nodes, (long long)g->edges, method, out, halo_now() - t0,
                  100.0 * st.edge_cut_fraction, st.balance[0], st.balance[1], st.balance[2],
                  st.replication, (long long)st.train_per_part, (double)st.rss_peak / 1048576.0);
        static const char *const names[3] = {"nodes", "train", "edges"};
        for (int c = 0; c < 3; c++) {
            bool constrained = (po.choice.constraints & (1u << c)) != 0;
            if (constrained && po.choice.method != HALO_PARTITION_RANDOM &&
                st.balance[c] > imbalance + 1e-3) {
                halo_warn("partition: %s balance %.3f exceeds the tolerance %.3f (METIS allows "
                          "itself some slack on small graphs or many constraints; stream puts "
                          "a node that fits nowhere on the part it overfills least)",
                          names[c], st.balance[c], imbalance);
            }
        }
    }
    halo_graph_free(g);
    return rc < 0 ? halo_cli_fail(rc) : 0;
}
