/* halo import ogb|edgelist: OGB's raw layout or a text edge list into a graph directory. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "graph/import.h"

#include <string.h>

int halo_cmd_import(int argc, char **argv)
{
    const char *out = NULL, *split = NULL, *labels = NULL, *feat = NULL, *name = NULL;
    bool directed = false;
    const halo_opt opts[] = {
        {"output", 'o', HALO_OPT_STRING, &out, "DIR", "graph directory to write (required)"},
        {"split", 0, HALO_OPT_STRING, &split, "NAME|FILE",
         "ogb: split/NAME to use; edgelist: 'id train|valid|test' file"},
        {"labels", 0, HALO_OPT_STRING, &labels, "FILE", "edgelist: 'id label' lines"},
        {"feat", 0, HALO_OPT_STRING, &feat, "FILE", "edgelist: 'id f1 f2 ...' lines"},
        {"directed", 0, HALO_OPT_FLAG, &directed, NULL,
         "keep edges as given (default: symmetrise, no duplicates or self loops)"},
        {"name", 0, HALO_OPT_STRING, &name, "NAME", "graph name in meta.json (default: from SRC)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo import ogb SRC -o DIR [flags]\n       halo import edgelist FILE -o DIR [flags]",
        "Imports a graph into a graph directory (meta.json plus raw arrays; an in-edge CSR).\n"
        "  ogb       SRC is an OGB node-property dataset as downloaded: raw/edge.csv.gz,\n"
        "            raw/node-feat.csv.gz, raw/node-label.csv.gz, raw/num-node-list.csv.gz,\n"
        "            split/NAME/{train,valid,test}.csv.gz (node-feat may be absent: no features);\n"
        "            or OGB's binary layout (ogbn-papers100M): raw/data.npz, raw/node-label.npz\n"
        "            and the same split files.\n"
        "  edgelist  FILE holds 'src dst' lines ('#' or '%' comments); ids are any non-negative\n"
        "            64-bit integers, renumbered 0..n-1 in order of first appearance;\n"
        "            DIR/orig_id.i64 keeps the original ids. --labels, --feat and --split name\n"
        "            files keyed by the original ids.\n"
        "Inputs may be plain or gzip text. Edges are made undirected unless --directed. Bad input\n"
        "fails with FILE:LINE and leaves no output directory.",
    };
    char *pos[256];
    int npos = 0;
    if (argc > 256) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "import: too many arguments"));
    }
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 2) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "import: expected 'ogb SRC' or 'edgelist "
                                                      "FILE' (see halo import --help)"));
    }
    if (out == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "import: -o DIR is required"));
    }
    /* before reading anything: the output must never be an input or another kind of file */
    rc = halo_output_check(out, "indptr.i64", "graph");
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_import_opts o = {.name = name, .directed = directed};
    if (strcmp(pos[0], "ogb") == 0) {
        if (labels != NULL || feat != NULL) {
            return halo_cli_fail(halo_errorf(HALO_EUSAGE, "import ogb: --labels and --feat are "
                                                          "for edgelist; OGB's come from SRC/raw"));
        }
        o.split = split;
        rc = halo_import_ogb(pos[1], out, &o);
    } else if (strcmp(pos[0], "edgelist") == 0) {
        o.labels = labels;
        o.feat = feat;
        o.split_file = split;
        rc = halo_import_edgelist(pos[1], out, &o);
    } else {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                         "import: unknown format '%s' (ogb or "
                                         "edgelist)",
                                         pos[0]));
    }
    return rc < 0 ? halo_cli_fail(rc) : 0;
}
