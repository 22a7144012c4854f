/* halo sim: simulates a training run for a cluster profile (placeholder until built). */
#include "cli/cli.h"

#include "core/err.h"

int halo_cmd_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sim: not built yet"));
}
