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
        "the command that regenerates it, its failed points and where and when it was made.\n"
        "Each figure is checked with git against the code it depends on (the modules of its\n"
        "mode, the policies, profiles and experiment file it used): one made at a commit older\n"
        "than a change to them is marked STALE in index.md and counted here.",
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
    halo_sweep_report_out out;
    rc = halo_sweep_report(dir, &out);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    printf("halo report: %s/index.md (%d figure%s", dir, out.figures, out.figures == 1 ? "" : "s");
    if (out.unknown_why[0]) {
        printf("; freshness unknown: %s)\n", out.unknown_why);
    } else {
        printf("; %d stale%s)\n", out.stale, out.unknown > 0 ? ", some of unknown freshness" : "");
    }
    return 0;
}
