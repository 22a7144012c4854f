/* Entry point of the halo command: dispatches to a subcommand. */
#include "cli/cli.h"
#include "core/err.h"
#include "core/log.h"
#include "model/ops.h"

#include <stdio.h>
#include <string.h>

#ifndef HALO_VERSION
#define HALO_VERSION "dev"
#endif

/* One subcommand. */
typedef struct cli_command {
    const char *name;                 /* as typed */
    int (*run)(int argc, char **argv); /* returns the exit status */
    const char *summary;              /* one line for `halo --help` */
} cli_command;

static const cli_command commands[] = {
    {"gen", halo_cmd_gen, "generate a synthetic graph (rmat, sbm, presets)"},
    {"import", halo_cmd_import, "import an OGB dataset or an edge list"},
    {"info", halo_cmd_info, "statistics of a graph or partition directory"},
    {"verify", halo_cmd_verify, "check every file and invariant of a graph directory"},
    {"partition", halo_cmd_partition, "partition a graph (metis, multilevel, random, stream)"},
    {"sample", halo_cmd_sample, "distributed sampling and feature pulls under mpirun (counts)"},
    {"train", halo_cmd_train, "train GraphSAGE on a partition under mpirun (one rank per part)"},
    {"sim", halo_cmd_sim, "simulate a training run on a cluster profile (any size, one process)"},
    {"calibrate", halo_cmd_calibrate, "measure this machine and write a cluster profile"},
    {"timeline", halo_cmd_timeline, "draw a --timeline file as a Gantt chart (gnuplot PNG)"},
    {"trace", halo_cmd_trace, "record an access trace; replay it through cache policies"},
    {"policy", halo_cmd_policy, "check a policy file or print the policy API"},
    {"sweep", halo_cmd_sweep, "run an experiment file's points and draw its figure"},
    {"report", halo_cmd_report, "write reports/index.md from the figures' meta.json"},
    {"lab", halo_cmd_lab, "course labs: list, public checks, grade a student policy"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: halo <command> [flags]   (halo <command> --help for its flags)\n\n"
               "halo: distributed hybrid CPU/GPU GNN training testbed\n\n"
               "commands:\n");
    for (const cli_command *c = commands; c->name != NULL; c++) {
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    }
    fprintf(f, "\noptions: --version, --help, -v/--verbose, -q/--quiet before the command\n");
}

/* An unknown flag before the command: one line naming it, the closest of halo's own flags and
 * whether it is a subcommand's flag put too early. */
static int unknown_global(const char *a)
{
    static const char *const flags[] = {"--version", "--help", "--verbose", "--quiet"};
    const char *hint = a[1] == '-' ? halo_did_you_mean(a + 2, (const char *const[]){"version",
                                                       "help", "verbose", "quiet"}, 4)
                                   : NULL;
    char msg[640];
    if (hint != NULL) {
        snprintf(msg, sizeof msg, "unknown option '%.200s' before the command (did you mean --%s?)",
                 a, hint);
    } else {
        snprintf(msg, sizeof msg,
                 "unknown option '%.200s' before the command: halo's own flags are %s, %s, -v/%s, "
                 "-q/%s; a command's flags go after it (halo CMD %.100s)",
                 a, flags[0], flags[1], flags[2], flags[3], a);
    }
    halo_error_print(msg);
    return 2;
}

int main(int argc, char **argv)
{
    halo_blas_pick_kernels(argv); /* may re-execute the program with faster BLAS kernels */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("halo %s\n", HALO_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            halo_log_set_level(HALO_LOG_VERBOSE);
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            halo_log_set_level(HALO_LOG_QUIET);
        } else {
            return unknown_global(argv[i]);
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (const cli_command *c = commands; c->name != NULL; c++) {
        if (strcmp(c->name, argv[i]) == 0) {
            return c->run(argc - i, argv + i);
        }
    }
    const char *names[sizeof commands / sizeof commands[0]];
    int n = 0;
    for (const cli_command *c = commands; c->name != NULL; c++) {
        names[n++] = c->name;
    }
    const char *hint = halo_did_you_mean(argv[i], names, n);
    char msg[320];
    if (hint != NULL) {
        snprintf(msg, sizeof msg, "unknown command '%.200s' (did you mean '%s'? see halo --help)",
                 argv[i], hint);
    } else {
        snprintf(msg, sizeof msg, "unknown command '%.200s' (see halo --help)", argv[i]);
    }
    halo_error_print(msg);
    return 2;
}
