/* halo sweep: runs an experiment file's points (docs/experiments.md) and draws its figure. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/json.h"
#include "sweep/sweep.h"

#include <stdio.h>
#include <string.h>

int halo_cmd_sweep(int argc, char **argv)
{
    bool quick = false, dry = false;
    const char *out = "reports", *cache = NULL;
    double timeout = 0;
    const halo_opt opts[] = {
        {"quick", 0, HALO_OPT_FLAG, &quick, NULL, "merge the file's quick table (a smaller run)"},
        {"dry-run", 'n', HALO_OPT_FLAG, &dry, NULL,
         "print every point and the commands it would run; run nothing"},
        {"output", 'o', HALO_OPT_STRING, &out, "DIR", "output directory"},
        {"cache", 0, HALO_OPT_STRING, &cache, "DIR",
         "graphs, partitions, traces and point logs (default: OUT/.cache)"},
        {"timeout", 0, HALO_OPT_DOUBLE, &timeout, "S",
         "seconds per command of a point (0: the file's timeout, else 600)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo sweep experiments/NAME.lua [--quick] [--dry-run] [-o DIR] [--cache DIR] "
        "[--timeout S]",
        "Expands the experiment's points (the cartesian product of its sweep axes, then its\n"
        "explicit points, each repeated), builds every graph and partition once per content in\n"
        "the cache, runs each point as a subprocess of this binary (mpirun halo train, halo sim,\n"
        "halo trace, or the partition itself) with a timeout, and appends one CSV row per point\n"
        "to OUT/NAME.csv. A rerun skips the points already there with status ok. Then writes\n"
        "OUT/NAME.data.csv, OUT/NAME.gp (gnuplot; NAME.png and NAME.svg) and OUT/NAME.meta.json.\n"
        "The figure draws the paper's ranges (the file's paper.ranges) as bands; meta.json\n"
        "lists the sources the figure depends on, which halo report checks for staleness.\n"
        "Exits 1 when a point failed (after writing everything).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sweep: one experiment file expected"));
    }
    if (timeout < 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--timeout: seconds >= 0"));
    }
    halo_sweep_exp *e = NULL;
    rc = halo_sweep_load(pos[0], quick, &e);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_sb cmd;
    halo_sb_init(&cmd);
    halo_sb_printf(&cmd, "halo sweep %s%s", pos[0], quick ? " --quick" : "");
    if (strcmp(out, "reports") != 0) {
        halo_sb_printf(&cmd, " -o %s", out);
    }
    halo_sweep_opts o = {out, cache, timeout, dry, NULL, cmd.buf};
    int failed = 0;
    rc = halo_sweep_run(e, &o, &failed);
    int status = 0;
    if (rc < 0) {
        status = halo_cli_fail(rc);
    } else if (failed > 0) {
        status = halo_cli_fail(halo_errorf(HALO_EINPUT,
                                           "sweep %s: %d of %d points failed (see "
                                           "%s/%s.csv and %s/%s.meta.json)",
                                           e->name, failed, e->npts, out, e->name, out, e->name));
    }
    halo_sb_free(&cmd);
    halo_sweep_free(e);
    return status;
}
