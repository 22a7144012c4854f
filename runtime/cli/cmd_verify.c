/* halo verify: sizes, every invariant and every checksum of a graph directory. */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "graph/graph.h"

#include <stdio.h>

int halo_cmd_verify(int argc, char **argv)
{
    const halo_opt opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
    const halo_cmd_help help = {
        "halo verify DIR",
        "Checks a graph directory: every array's size against meta.json; indptr starts at 0,\n"
        "never decreases and ends at the edge count; indices are node ids; labels are in\n"
        "[-1, classes); split values are 0..3; features are finite (no NaN or infinity);\n"
        "then every file's CRC-32. Exit 0 when whole, 1 with one line naming the first file\n"
        "at fault.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "verify: one graph directory expected"));
    }
    rc = halo_graph_verify(pos[0]);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_graph *g;
    rc = halo_graph_load(pos[0], &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    int files = 0;
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        files += halo_graph_has_array(g, a);
    }
    for (int t = 0; t < g->ntypes && halo_graph_typed(g); t++) {
        files += halo_graph_has_type_feat(g, t); /* feat.TYPE.f32 */
    }
    printf("%s: ok (%lld nodes, %lld edges%s; sizes, invariants and checksums of %d files)\n",
           pos[0], (long long)g->nodes, (long long)g->edges,
           g->topology_only ? ", topology-only" : "", files);
    halo_graph_free(g);
    return 0;
}
