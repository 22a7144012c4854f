/* halo info: size, degree statistics, features, classes, split and bytes on disk of a graph
 * directory (a partition directory is handed to halo_cmd_info_partition). */
#include "cli/cli.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "graph/stats.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Human-readable byte count. */
static const char *human(char *buf, size_t size, double b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
    return buf;
}

/* Sum of the sizes of the regular files in dir. */
static uint64_t dir_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            total += (uint64_t)st.st_size;
        }
    }
    closedir(d);
    return total;
}

static void print_degrees(const char *what, const halo_degree_stats *s)
{
    printf("%-11s min %lld, median %lld, max %lld, mean %.2f\n", what, (long long)s->min,
           (long long)s->median, (long long)s->max, s->mean);
    int64_t top = 1;
    for (int b = 0; b < s->bins; b++) {
        top = s->hist[b] > top ? s->hist[b] : top;
    }
    int first = 0;
    while (first < s->bins && s->hist[first] == 0) {
        first++;
    }
    for (int b = first; b < s->bins; b++) {
        char range[48];
        if (b == 0) {
            snprintf(range, sizeof range, "0");
        } else if (b == 1) {
            snprintf(range, sizeof range, "1");
        } else {
            snprintf(range, sizeof range, "%lld-%lld", 1LL << (b - 1), (1LL << b) - 1);
        }
        int width = (int)((40 * s->hist[b] + top - 1) / top);
        char bar[41];
        memset(bar, '#', (size_t)width);
        bar[width] = '\0';
        printf("  %15s %12lld %s\n", range, (long long)s->hist[b], bar);
    }
}

/* Node types (count, id range, width, labelled) and relations (edges, degrees) of a typed graph. */
static void print_types(const halo_graph *g)
{
    printf("%-11s %d (target %s)\n", "node types", g->ntypes, g->ntype_name[g->target_type]);
    for (int t = 0; t < g->ntypes; t++) {
        int64_t a = halo_graph_type_start(g, t), b = halo_graph_type_start(g, t + 1);
        char file[80] = "no feature file";
        if (halo_graph_has_type_feat(g, t)) {
            char name[64], h[32];
            halo_graph_type_feat_name(g, t, name, sizeof name);
            snprintf(file, sizeof file, "%s, %s", name,
                     human(h, sizeof h, (double)halo_graph_type_feat_bytes(g, t)));
        }
        printf("  %-20s %12lld nodes, ids [%lld, %lld), %d features (%s)\n", g->ntype_name[t],
               (long long)(b - a), (long long)a, (long long)b, g->ntype_feat_dim[t], file);
    }
    printf("%-11s %d\n", "relations", g->nrels);
    for (int r = 0; r < g->nrels; r++) {
        int64_t e;
        halo_degree_stats in, out;
        halo_graph_relation_stats(g, r, &e, &in, &out);
        char full[3 * HALO_TYPE_NAME + 8];
        snprintf(full, sizeof full, "%s %s %s", g->ntype_name[g->rel[r].src], g->rel[r].name,
                 g->ntype_name[g->rel[r].dst]);
        printf("  %-44s %12lld edges; in-degree mean %.2f max %lld; out-degree mean %.2f max "
               "%lld\n", full, (long long)e, in.mean, (long long)in.max, out.mean,
               (long long)out.max);
    }
}

int halo_cmd_info(int argc, char **argv)
{
    const halo_opt opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
    const halo_cmd_help help = {
        "halo info DIR",
        "Describes a graph directory: nodes, edges, degree statistics (min, median, max and a\n"
        "log2-binned histogram), feature width, classes, split sizes, how it was made and its\n"
        "bytes on disk. The arrays' sizes and invariants are checked on the way (not checksums:\n"
        "see halo verify). On a partition directory it describes the partition.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "info: one directory expected"));
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/partition.json", pos[0]);
    if (halo_path_exists(path)) {
        return halo_cmd_info_partition(argc, argv);
    }
    halo_graph *g;
    rc = halo_graph_load(pos[0], &g);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    rc = halo_graph_check(g, pos[0]);
    if (rc < 0) {
        halo_graph_free(g);
        return halo_cli_fail(rc);
    }
    halo_graph_stats s;
    halo_graph_stats_compute(g, &s);
    char h[64];
    printf("%-11s %s\n", "graph", g->name);
    printf("%-11s %lld\n", "nodes", (long long)g->nodes);
    printf("%-11s %lld (%s)%s\n", "edges", (long long)g->edges,
           g->directed ? "directed" : "undirected: each edge stored both ways",
           s.self_loops > 0 ? "" : ", no self-loops");
    if (s.self_loops > 0) {
        printf("%-11s %lld\n", "self-loops", (long long)s.self_loops);
    }
    if (g->topology_only) {
        printf("%-11s topology-only: none stored (declared width %d, float32)\n", "features",
               g->feat_dim);
    } else {
        printf("%-11s %d (float32)\n", "features", g->feat_dim);
    }
    printf("%-11s %d (%lld nodes labelled)\n", "classes", g->classes, (long long)s.labelled);
    printf("%-11s train %lld, valid %lld, test %lld, none %lld\n", "split",
           (long long)s.split[HALO_SPLIT_TRAIN], (long long)s.split[HALO_SPLIT_VALID],
           (long long)s.split[HALO_SPLIT_TEST], (long long)s.split[HALO_SPLIT_NONE]);
    print_degrees("in-degree", &s.in);
    if (g->directed) {
        print_degrees("out-degree", &s.out);
    }
    if (halo_graph_typed(g)) {
        print_types(g);
    }
    const halo_json *src = halo_json_get(g->meta, "source");
    if (src != NULL && src->type == HALO_JSON_OBJECT) {
        printf("%-11s", "made by");
        for (size_t i = 0; i < src->len; i++) {
            const halo_json *v = src->items[i];
            if (v->type == HALO_JSON_STRING) {
                printf(" %s=%s", src->keys[i], v->string);
            } else if (v->type == HALO_JSON_NUMBER) {
                printf(" %s=%.10g", src->keys[i], v->number);
            } else if (v->type == HALO_JSON_BOOL) {
                printf(" %s=%s", src->keys[i], v->boolean ? "true" : "false");
            }
        }
        printf("\n");
    }
    printf("%-11s %s (", "on disk", human(h, sizeof h, (double)dir_bytes(pos[0])));
    for (int a = 0; a < HALO_GA_COUNT; a++) {
        if (!halo_graph_has_array(g, a)) {
            continue;
        }
        printf("%s%s %s", a ? ", " : "", halo_graph_files[a],
               human(h, sizeof h, (double)g->maps[a].size));
    }
    printf(")\n");
    halo_graph_free(g);
    return 0;
}
