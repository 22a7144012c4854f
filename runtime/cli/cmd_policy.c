/* halo policy: `check FILE` loads a policy in the sandbox and validates every hook on a synthetic
 * rank; `doc` prints the policy API reference. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

static int policy_check(int argc, char **argv)
{
    halo_strlist sets = {.n = 0};
    bool unsafe = false;
    int64_t budget = HALO_POLICY_DEFAULT_BUDGET;
    int64_t mem_mib = (int64_t)(HALO_POLICY_DEFAULT_MEM >> 20);
    double seconds = 0; /* 0: $HALO_POLICY_SECONDS, else the default */
    const halo_opt opts[] = {
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"unsafe", 0, HALO_OPT_FLAG, &unsafe, NULL, "open the full standard library (trusted)"},
        {"budget", 0, HALO_OPT_I64, &budget, "N", "instruction budget per hook call"},
        {"mem", 0, HALO_OPT_I64, &mem_mib, "MIB", "memory limit of the Lua state"},
        {"time", 0, HALO_OPT_DOUBLE, &seconds, "S",
         "wall-clock seconds per hook call (0: $HALO_POLICY_SECONDS, else 5)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo policy check FILE [--set NAME=VALUE ...] [--unsafe]",
        "Loads a policy in the sandbox, lists its hooks and parameters, calls every hook on a\n"
        "synthetic rank (10000 nodes, 4 parts, 2000 halo nodes, 2 epochs of 40 batches with a\n"
        "small cache) and validates what each returns. Exit 0 when all is well, 1 otherwise.",
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
    halo_policy_opts o = {
        .path = pos[0],
        .params = sets.v,
        .nparams = sets.n,
        .unsafe = unsafe,
        .rank = -1,
        .budget = budget,
        .mem_limit = (size_t)mem_mib << 20,
        .time_limit = seconds,
    };
    rc = halo_policy_check(&o, stdout);
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
        fprintf(f, "usage: halo policy check FILE [--set NAME=VALUE ...] [--unsafe]\n"
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
