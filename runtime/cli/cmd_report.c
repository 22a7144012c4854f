/* halo report: writes DIR/index.md from the figures' DIR/NAME.meta.json files. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "sweep/sweep.h"

#include <stdio.h>

int halo_cmd_report(int argc, char **argv)
{
    const halo_opt opts[] = {
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo report [DIR]",
        "Writes DIR/index.md (default reports/) from every DIR/NAME.meta.json that halo sweep\n"
        "wrote: per figure its title, the PNG, the caption, the paper's number beside halo's,\n"
        "the command that regenerates it, its failed points and where and when it was made.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos > 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "report: at most one directory"));
    }
    const char *dir = npos == 1 ? pos[0] : "reports";
    int figures = 0;
    rc = halo_sweep_report(dir, &figures);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("halo report: %s/index.md (%d figure%s)\n", dir, figures, figures == 1 ? "" : "s");
    return 0;
}
