/* The subcommands' shared option helpers: parsing a subcommand's flags and saying its error. */
#include "cli/cli.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/log.h"

int halo_cli_fail(int rc)
{
    int launched = halo_log_rank() < 0 ? halo_log_launch_rank() : -1;
    if (rc != HALO_EUSAGE || launched <= 0) {
        const char *msg = halo_errmsg();
        halo_error_print(msg[0] ? msg : halo_strerror(rc));
    } /* else a usage error is every rank's (the same flags): the launcher's rank 0 says it */
    if (rc == HALO_EUSAGE && launched >= 0) {
        /* and no rank exits before rank 0 has said it */
        halo_comm_meet_before_exit(HALO_CLI_MEET_S);
    }
    return halo_exit_code(rc);
}

int halo_cli_parse(const halo_cmd_help *help, const halo_opt *opts, int argc, char **argv,
                   char **pos, int *npos)
{
    int rc = halo_args_parse(help, opts, argc, argv, pos, npos);
    if (rc == 1) {
        return 0;
    }
    return rc < 0 ? halo_cli_fail(rc) : -1;
}
