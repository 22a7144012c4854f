/* halo import: placeholder until its issue lands (replaced by the owner of this command). */
#include "cli/cli.h"
#include "core/err.h"

int halo_cmd_import(int argc, char **argv)
{
    (void)argc;
    return halo_cli_fail(halo_errorf(HALO_EUSAGE, "%s: not built yet", argv[0]));
}
