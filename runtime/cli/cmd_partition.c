/* halo partition: flags fill the partition choice (until a policy's `partition` hook does),
 * then the library partitions, relabels and writes the partition directory. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "core/log.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "part/partition.h"

#include <stdio.h>

int halo_cmd_partition(int argc, char **argv)
{
    int parts = 0, machines = 0, trainers = 1;
    int64_t seed = 1;
    double imbalance = 1.05;
    const char *out = NULL, *method = "metis", *constraints = "nodes,train,edges";
    const char *objective = "cut", *stream = "ldg";
    bool force = false, sort_rows = false;
    const halo_opt opts[] = {
        {"parts", 'p', HALO_OPT_INT, &parts, "P", "number of parts (multilevel: M x G)"},
        {"output", 'o', HALO_OPT_STRING, &out, "PDIR", "partition directory to write"},
        {"method", 0, HALO_OPT_STRING, &method, "NAME",
         "metis | multilevel | random | stream (custom comes from a policy)"},
        {"constraints", 0, HALO_OPT_STRING, &constraints, "LIST",
         "balance constraints, any of nodes,train,edges"},
        {"imbalance", 0, HALO_OPT_DOUBLE, &imbalance, "X", "tolerance per constraint (max/mean)"},
        {"objective", 0, HALO_OPT_STRING, &objective, "cut|vol", "METIS objective"},
        {"machines", 0, HALO_OPT_INT, &machines, "M", "machines (default: P machines)"},
        {"trainers-per-part", 0, HALO_OPT_INT, &trainers, "G",
         "trainers per machine; P = M x G"},
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
        "equal number of training seeds (DistDGL's force-even split). multilevel partitions\n"
        "across --machines M first, then each machine across its --trainers-per-part G.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos = 0;
    int rc = halo_args_parse(&help, opts, argc, argv, pos, &npos);
    if (rc != 0) {
        return rc > 0 ? 0 : halo_cli_fail(rc);
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
    if (po.choice.method == HALO_PARTITION_CUSTOM) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --method custom needs a policy "
                                                      "that returns an assignment"));
    }
    if (parts < 0 || machines < 0 || trainers < 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                         "partition: --parts, --machines and "
                                         "--trainers-per-part must be >= 1"));
    }
    if (parts == 0 && machines == 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --parts must be >= 1 (got 0 "
                                                      "or none)"));
    }
    if (imbalance < 1.0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "partition: --imbalance %g is below 1",
                                         imbalance));
    }
    halo_graph *g = NULL;
    rc = halo_graph_load(pos[0], &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_partition_stats st;
    double t0 = halo_now();
    rc = halo_partition_run(g, &po, out, &st);
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
