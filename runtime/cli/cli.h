/* The halo command's subcommands: each is int halo_cmd_NAME(argc, argv) in cmd_NAME.c, where
 * argv[0] is the subcommand's name; the return value is the process exit status. */
#ifndef HALO_CLI_H
#define HALO_CLI_H

#include "core/args.h"

#include <stddef.h>

int halo_cmd_gen(int argc, char **argv);
int halo_cmd_import(int argc, char **argv);
int halo_cmd_info(int argc, char **argv);
int halo_cmd_verify(int argc, char **argv);
int halo_cmd_policy(int argc, char **argv);
int halo_cmd_partition(int argc, char **argv);
int halo_cmd_sample(int argc, char **argv);
int halo_cmd_trace(int argc, char **argv);
int halo_cmd_train(int argc, char **argv);
int halo_cmd_timeline(int argc, char **argv);
int halo_cmd_sim(int argc, char **argv);
int halo_cmd_calibrate(int argc, char **argv);
int halo_cmd_sweep(int argc, char **argv);
int halo_cmd_report(int argc, char **argv);
int halo_cmd_lab(int argc, char **argv);
/* `halo info PDIR` on a partition directory (called by halo_cmd_info). */
int halo_cmd_info_partition(int argc, char **argv);
/* halo partition --method ptscotch after its flags are read (cmd_partition_dist.c): starts MPI,
 * partitions across the ranks and writes the partition from rank 0; returns the exit status. */
struct halo_partition_opts;
int halo_cli_partition_ptscotch(const char *gdir, const char *out, struct halo_partition_opts *po);

/* The file of a --policy argument: a path as given, else policies/NAME.lua in the working
 * directory, in PREFIX/share/halo beside an installed halo, in the source tree halo was built
 * from, or in /usr/local/share/halo, the first that exists (written into buf); else arg. */
const char *halo_cli_policy_path(const char *arg, char *buf, size_t size);

/* How long a rank mpirun launched waits, after a usage error, for the others to come to theirs. */
#define HALO_CLI_MEET_S 30.0

/* Prints "halo: error: <last message>" and returns the exit status for rc. Before MPI start-up
 * on a rank mpirun launched, a usage error (the same flags, so every rank's) is said by rank 0
 * alone, and the ranks meet before any exits (halo_comm_meet_before_exit). */
int halo_cli_fail(int rc);

/* halo_args_parse for a subcommand: -1 to go on, else the exit status to return at once (0 after
 * --help was printed, halo_cli_fail's for a bad flag). */
int halo_cli_parse(const halo_cmd_help *help, const halo_opt *opts, int argc, char **argv,
                   char **pos, int *npos);

#endif
