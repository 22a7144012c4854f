/* halo policy: `check FILE` loads a policy in the sandbox and validates every hook on a synthetic
 * rank; `doc` prints the policy API reference. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "graph/graph.h"
#include "part/part.h"
#include "policy/policy.h"
#include "sample/sample.h"

#include <stdio.h>
#include <string.h>

/* The names of a typed graph or partition for `policy check --graph`. */
typedef struct typed_names {
    halo_policy_check_graph g;
    const char *ntype[HALO_MAX_NTYPES];
    const char *rel[HALO_MAX_RELS];
    int64_t count[HALO_MAX_NTYPES];
    halo_relation rels[HALO_MAX_RELS];
    char ntype_name[HALO_MAX_NTYPES][HALO_TYPE_NAME];
} typed_names;

/* check_spec of halo_policy_check_graph: the trainer's parse of a fanout spec. */
static int names_check_spec(void *arg, const char *spec)
{
    typed_names *t = arg;
    halo_rel_fanouts fan;
    return halo_sample_parse_rel_fanouts(spec, t->rels, t->g.nrels, fan, HALO_MAX_LAYERS);
}

/* Reads the node types and relations of DIR, a graph directory or a partition directory
 * (partition.json); a homogeneous one is an error (nothing to check against). */
static int names_load(const char *dir, typed_names *t)
{
    memset(t, 0, sizeof *t);
    char path[4200];
    HALO_CHECK(halo_path_join(path, sizeof path, dir, "partition.json"));
    int ntypes, nrels, target;
    if (halo_path_exists(path)) {
        halo_partinfo *pi = NULL;
        HALO_CHECK(halo_partinfo_load(dir, &pi));
        ntypes = pi->nrels > 0 ? pi->ntypes : 0;
        nrels = pi->nrels;
        target = pi->target_type;
        for (int ty = 0; ty < ntypes; ty++) {
            memcpy(t->ntype_name[ty], pi->ntype_name[ty], HALO_TYPE_NAME);
            for (int k = 0; k < pi->parts; k++) {
                const int64_t *ts = pi->type_start + (size_t)k * (size_t)(pi->ntypes + 1);
                t->count[ty] += ts[ty + 1] - ts[ty];
            }
        }
        memcpy(t->rels, pi->rel, sizeof t->rels);
        halo_partinfo_free(pi);
    } else {
        halo_graph *g = NULL;
        HALO_CHECK(halo_graph_load(dir, &g));
        ntypes = g->nrels > 0 ? g->ntypes : 0;
        nrels = g->nrels;
        target = g->target_type;
        for (int ty = 0; ty < ntypes; ty++) {
            memcpy(t->ntype_name[ty], g->ntype_name[ty], HALO_TYPE_NAME);
            t->count[ty] = halo_graph_type_start(g, ty + 1) - halo_graph_type_start(g, ty);
        }
        memcpy(t->rels, g->rel, sizeof t->rels);
        halo_graph_free(g);
    }
    if (nrels == 0) {
        return halo_errorf(HALO_EUSAGE, "--graph: %s is homogeneous (no relations to check the "
                           "fanout hook against)", dir);
    }
    for (int ty = 0; ty < ntypes; ty++) {
        t->ntype[ty] = t->ntype_name[ty];
    }
    for (int r = 0; r < nrels; r++) {
        t->rel[r] = t->rels[r].name;
    }
    t->g = (halo_policy_check_graph){.source = dir,
                                     .ntypes = ntypes,
                                     .node_types = t->ntype,
                                     .type_nodes = t->count,
                                     .nrels = nrels,
                                     .relations = t->rel,
                                     .target_type = t->ntype[target],
                                     .check_spec = names_check_spec,
                                     .arg = t};
    return 0;
}

static int policy_check(int argc, char **argv)
{
    halo_strlist sets = {.n = 0};
    bool unsafe = false;
    int64_t budget = HALO_POLICY_DEFAULT_BUDGET;
    int64_t mem_mib = (int64_t)(HALO_POLICY_DEFAULT_MEM >> 20);
    double seconds = 0; /* 0: $HALO_POLICY_SECONDS, else the default */
    const char *graph = NULL;
    const halo_opt opts[] = {
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"unsafe", 0, HALO_OPT_FLAG, &unsafe, NULL, "open the full standard library (trusted)"},
        {"graph", 0, HALO_OPT_STRING, &graph, "DIR",
         "a typed graph or partition: its node types and relations in the context, the fanout "
         "hook checked per relation against them"},
        {"budget", 0, HALO_OPT_I64, &budget, "N", "instruction budget per hook call"},
        {"mem", 0, HALO_OPT_I64, &mem_mib, "MIB", "memory limit of the Lua state"},
        {"time", 0, HALO_OPT_DOUBLE, &seconds, "S",
         "wall-clock seconds per hook call (0: $HALO_POLICY_SECONDS, else 5)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo policy check FILE|NAME [--set NAME=VALUE ...] [--unsafe] [--graph DIR]",
        "Loads a policy in the sandbox, lists its hooks and parameters, calls every hook on a\n"
        "synthetic rank (10000 nodes, 4 parts, 2000 halo nodes, 2 epochs of 40 batches with a\n"
        "small cache) and validates what each returns. With --graph (a typed graph or\n"
        "partition) the context has its node types and relations and the fanout hook's\n"
        "per-relation form is checked against them, as halo train does. Exit 0 when all is\n"
        "well, 1 otherwise.",
    };
    char *pos[64];
    int npos = 0;
    if (argc > 64) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "policy check: too many arguments"));
    }
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(
            halo_errorf(HALO_EUSAGE, "policy check: expected one FILE, got %d", npos));
    }
    if (!(seconds >= 0 && seconds <= 1e6)) {
        return halo_cli_fail(
            halo_errorf(HALO_EUSAGE, "policy check: --time must be in [0, 1e6] seconds"));
    }
    if (budget < 1 || mem_mib < 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "policy check: --budget and --mem must "
                                                      "be positive"));
    }
    char policy_buf[4096];
    halo_policy_opts o = {
        .path = halo_cli_policy_path(pos[0], policy_buf, sizeof policy_buf),
        .params = sets.v,
        .nparams = sets.n,
        .unsafe = unsafe,
        .rank = -1,
        .budget = budget,
        .mem_limit = (size_t)mem_mib << 20,
        .time_limit = seconds,
    };
    typed_names *tn = NULL;
    if (graph != NULL) {
        tn = HALO_NEW(typed_names, 1);
        rc = names_load(graph, tn);
        if (rc < 0) {
            halo_free(tn);
            return halo_cli_fail(rc);
        }
    }
    rc = halo_policy_check_typed(&o, tn != NULL ? &tn->g : NULL, stdout);
    halo_free(tn);
    if (rc < 0) {
        fflush(stdout);
        return halo_cli_fail(rc);
    }
    printf("ok: %s passes\n", pos[0]);
    return 0;
}

int halo_cmd_policy(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: halo policy check FILE|NAME [--set NAME=VALUE ...] [--unsafe] "
                   "[--graph DIR]\n"
                   "       halo policy doc\n\n"
                   "check: load a policy in the sandbox and validate every hook\n"
                   "doc:   print the policy API reference\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "check") == 0) {
        return policy_check(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "doc") == 0) {
        if (argc > 2 && strcmp(argv[2], "--help") != 0 && strcmp(argv[2], "-h") != 0) {
            return halo_cli_fail(halo_errorf(HALO_EUSAGE, "policy doc: takes no arguments"));
        }
        halo_policy_doc(stdout);
        return 0;
    }
    return halo_cli_fail(
        halo_errorf(HALO_EUSAGE, "policy: unknown subcommand '%s' (check, doc)", argv[1]));
}
