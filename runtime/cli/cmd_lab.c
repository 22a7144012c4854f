/* halo lab: `list` the course labs, `check N FILE` runs a lab's public checks on its small fixed
 * graphs, `grade N FILE` grades on graphs made from the instructor's seed (table or --json). */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "lab/lab.h"
#include "policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lab_list(void)
{
    printf("%-4s %-32s %s\n", "lab", "folder", "hooks to write: graded on");
    for (int n = 1; n <= HALO_LAB_COUNT; n++) {
        printf("%-4d experiments/labs/%-15s %s: %s\n", n, halo_lab_name(n), halo_lab_hooks(n),
               halo_lab_title(n));
    }
    printf("\nhalo lab check N student.lua   public checks (seconds)\n"
           "halo lab grade N student.lua --seed S [--json]   grading on unseen graphs\n");
    return 0;
}

/* Parses "1".."4" (or a folder name such as lab3-cache) into *lab. */
static int parse_lab(const char *s, int *lab)
{
    for (int n = 1; n <= HALO_LAB_COUNT; n++) {
        char num[8];
        snprintf(num, sizeof num, "%d", n);
        if (strcmp(s, num) == 0 || strcmp(s, halo_lab_name(n)) == 0) {
            *lab = n;
            return 0;
        }
    }
    return halo_errorf(HALO_EUSAGE, "lab: no lab '%s' (labs 1 to %d, see halo lab list)", s,
                       HALO_LAB_COUNT);
}

static int lab_run(int argc, char **argv, bool check)
{
    int64_t seed = 1;
    double limit = 60;
    int64_t budget = HALO_POLICY_DEFAULT_BUDGET;
    int64_t mem_mib = (int64_t)(HALO_POLICY_DEFAULT_MEM >> 20);
    bool json = false;
    const halo_opt grade_opts[] = {
        {"seed", 's', HALO_OPT_I64, &seed, "S", "instructor's seed of the graphs and traces"},
        {"json", 0, HALO_OPT_FLAG, &json, NULL, "one JSON object (score, criteria) on stdout"},
        {"time-limit", 0, HALO_OPT_DOUBLE, &limit, "SEC",
         "wall clock per criterion that runs the policy"},
        {"budget", 0, HALO_OPT_I64, &budget, "N", "instruction budget per hook call"},
        {"mem", 0, HALO_OPT_I64, &mem_mib, "MIB", "memory limit of each Lua state"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_opt *opts = check ? grade_opts + 1 : grade_opts;
    const halo_cmd_help grade_help = {
        "halo lab grade N FILE [--seed S] [--json] [--time-limit SEC]",
        "Grades the policy FILE for lab N (1-4, see halo lab list) on graphs, partitions and\n"
        "traces made from the seed; the baselines are computed now, on the same graphs. Every\n"
        "criterion that runs the policy runs it in a child process under the sandbox, its\n"
        "instruction budget, memory limit and a wall-clock limit: a policy that errors, loops,\n"
        "exhausts memory or returns the wrong thing scores 0 there, with a one-line reason.\n"
        "Prints a table per criterion, or with --json one object (\"score\" is the total).\n"
        "Exit 0 when a grade was computed, 1 when the grader itself could not run.",
    };
    const halo_cmd_help check_help = {
        "halo lab check N FILE [--json]",
        "The public checks of lab N: the grading of `halo lab grade` on the lab's small fixed\n"
        "graphs (the same seed for everyone), in seconds. Use it while writing the policy.",
    };
    char *pos[8];
    int npos = 0;
    if (argc > 64) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "lab: too many arguments"));
    }
    char **args = argv;
    int rc = halo_cli_parse(check ? &check_help : &grade_help, opts, argc, args, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    const char *verb = check ? "check" : "grade";
    if (npos != 2) {
        return halo_cli_fail(
            halo_errorf(HALO_EUSAGE, "lab %s: expected N FILE, got %d arguments", verb, npos));
    }
    halo_lab_opts o;
    halo_lab_opts_default(&o);
    rc = parse_lab(pos[0], &o.lab);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    if (seed < 0 || !(limit > 0) || budget < 1 || mem_mib < 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                         "lab %s: --seed must be >= 0, "
                                         "--time-limit, --budget and --mem > 0",
                                         verb));
    }
    o.student = pos[1];
    o.seed = (uint64_t)seed;
    o.check = check;
    o.time_limit_s = limit;
    o.budget = budget;
    o.mem_limit = (size_t)mem_mib << 20;
    halo_lab_result res;
    rc = halo_lab_grade(&o, &res);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    if (json) {
        halo_lab_print_json(&res, stdout);
    } else {
        halo_lab_print_table(&res, stdout);
    }
    return 0;
}

int halo_cmd_lab(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: halo lab list\n"
                   "       halo lab check N FILE [--json]\n"
                   "       halo lab grade N FILE [--seed S] [--json] [--time-limit SEC]\n\n"
                   "list:  the course labs (experiments/labs/)\n"
                   "check: a lab's public checks on its small fixed graphs\n"
                   "grade: grade a policy on graphs made from the instructor's seed\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "list") == 0) {
        if (argc > 2) {
            return halo_cli_fail(halo_errorf(HALO_EUSAGE, "lab list: takes no arguments"));
        }
        return lab_list();
    }
    if (strcmp(argv[1], "check") == 0 || strcmp(argv[1], "grade") == 0) {
        return lab_run(argc - 1, argv + 1, strcmp(argv[1], "check") == 0);
    }
    return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                     "lab: unknown subcommand '%s' (list, check, "
                                     "grade)",
                                     argv[1]));
}
