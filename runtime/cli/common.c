/* The subcommands' shared option helpers: parsing a subcommand's flags and saying its error. */
#include "cli/cli.h"
#include "core/err.h"
#include "core/log.h"

int halo_cli_fail(int rc)
{
    if (rc == HALO_EUSAGE && halo_log_rank() < 0 && halo_log_launch_rank() > 0) {
        /* a usage error is every rank's: the launcher's rank 0 says it */
        return halo_exit_code(rc);
    }
    const char *msg = halo_errmsg();
    halo_error_print(msg[0] ? msg : halo_strerror(rc));
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
