/* halo calibrate: measures this machine and writes a cluster profile (placeholder until built). */
#include "cli/cli.h"

#include "core/err.h"

int halo_cmd_calibrate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return halo_cli_fail(halo_errorf(HALO_EUSAGE, "calibrate: not built yet"));
}
