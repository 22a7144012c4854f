/* halo info PDIR on a partition directory: the summary of partition.json as a table. */
#include "cli/cli.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "part/part.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Number at index k of array member key of j, or -1 when absent. */
static double json_at(const halo_json *j, const char *key, int k)
{
    const halo_json *a = halo_json_get(j, key);
    if (a == NULL || a->type != HALO_JSON_ARRAY || (size_t)k >= a->len ||
        a->items[k]->type != HALO_JSON_NUMBER) {
        return -1;
    }
    return a->items[k]->number;
}

/* Number member key of j, or -1. */
static double json_num(const halo_json *j, const char *key)
{
    const halo_json *v = halo_json_get(j, key);
    return v != NULL && v->type == HALO_JSON_NUMBER ? v->number : -1;
}

/* String member key of j, or "-". */
static const char *json_str(const halo_json *j, const char *key)
{
    const halo_json *v = halo_json_get(j, key);
    return v != NULL && v->type == HALO_JSON_STRING ? v->string : "-";
}

/* A typed partition: each type's balance (max over mean of its nodes per part) and the nodes of
 * each type per part, with their id ranges. */
static void print_types(const halo_partinfo *pi)
{
    const halo_json *bal = halo_json_get(pi->json, "balance_per_type");
    int T1 = pi->ntypes + 1;
    printf("\n%-20s %8s  nodes per part [id range]  (target %s, %d relations)\n", "node type",
           "balance", pi->ntype_name[pi->target_type], pi->nrels);
    for (int t = 0; t < pi->ntypes; t++) {
        printf("%-20s %8.3f ", pi->ntype_name[t], json_num(bal, pi->ntype_name[t]));
        for (int k = 0; k < pi->parts; k++) {
            const int64_t *ts = pi->type_start + (size_t)k * T1;
            printf(" %lld [%lld,%lld)", (long long)(ts[t + 1] - ts[t]), (long long)ts[t],
                   (long long)ts[t + 1]);
        }
        printf("\n");
    }
}

/* What halo info reads besides partition.json is checked before it is printed: every part
 * directory is loaded (its meta.json names its part and id range, its files' sizes match: a
 * swapped or copied part-K is refused) and orig_id.i64 holds one int64 per node. */
static int check_parts(const char *pdir, const halo_partinfo *pi)
{
    for (int k = 0; k < pi->parts; k++) {
        halo_part *p = NULL;
        HALO_CHECK(halo_part_load(pdir, k, &p));
        halo_part_free(p);
    }
    char path[4200];
    HALO_CHECK(halo_path_join(path, sizeof path, pdir, "orig_id.i64"));
    struct stat st;
    if (stat(path, &st) < 0) {
        return halo_errorf(HALO_EINPUT, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != (uint64_t)pi->nodes * 8) {
        return halo_errorf(HALO_EINPUT, "%s: %lld bytes, expected %lld (an int64 per node): "
                           "truncated or not this partition's",
                           path, (long long)st.st_size, (long long)pi->nodes * 8);
    }
    return 0;
}

int halo_cmd_info_partition(int argc, char **argv)
{
    const halo_opt opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
    const halo_cmd_help help = {"halo info PDIR",
                                "Prints the summary of a partition directory as a table."};
    char *pos[argc > 0 ? argc : 1];
    int npos = 0;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "info: expected one partition directory"));
    }
    halo_partinfo *pi = NULL;
    rc = halo_partinfo_load(pos[0], &pi);
    if (rc == 0 && (rc = check_parts(pos[0], pi)) < 0) {
        halo_partinfo_free(pi);
    }
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    const halo_json *j = pi->json;
    const halo_json *g = halo_json_get(j, "graph");
    const halo_json *par = halo_json_get(j, "parameters");
    const halo_json *bal = halo_json_get(j, "balance");
    const halo_json *pol = halo_json_get(j, "policy");
    printf("partition      %s\n", pos[0]);
    printf("graph          %s (%lld nodes, %lld edges, %d features%s, %d classes, checksum "
           "%s)\n", json_str(g, "name"), (long long)pi->nodes, (long long)pi->edges, pi->feat_dim,
           pi->topology_only ? " declared, topology-only" : "", pi->classes,
           json_str(g, "checksum"));
    printf("method         %s (policy %s)\n", json_str(j, "method"),
           pol != NULL && pol->type == HALO_JSON_STRING ? pol->string : "none");
    if (par != NULL) {
        const halo_json *c = halo_json_get(par, "constraints");
        printf("parameters     constraints ");
        for (size_t i = 0; c != NULL && c->type == HALO_JSON_ARRAY && i < c->len; i++) {
            printf("%s%s", i > 0 ? "," : "",
                   c->items[i]->type == HALO_JSON_STRING ? c->items[i]->string : "?");
        }
        printf(", imbalance %g, objective %s, seed %.0f\n", json_num(par, "imbalance"),
               json_str(par, "objective"), json_num(par, "seed"));
    }
    printf("parts          %d (%d machine%s x %d trainer%s)\n", pi->parts, pi->machines,
           halo_plural(pi->machines), pi->trainers_per_machine,
           halo_plural(pi->trainers_per_machine));
    printf("edge cut       %.0f (%.2f%% of edges)\n", json_num(j, "edge_cut"),
           100.0 * json_num(j, "edge_cut_fraction"));
    printf("balance        nodes %.3f, train %.3f, edges %.3f (max over mean)\n",
           json_num(bal, "nodes"), json_num(bal, "train"), json_num(bal, "edges"));
    printf("replication    %.3f ((owned + halo) / nodes)\n", json_num(j, "replication_factor"));
    printf("train seeds    %lld per part (%.0f in all, %.0f borrowed, %.0f dropped)\n",
           (long long)pi->train_per_part, json_num(j, "train_total"),
           json_num(j, "train_borrowed"), json_num(j, "train_dropped"));
    const halo_json *ts = halo_json_get(j, "time_s");
    printf("made in        %.2f s (assign %.2f, write %.2f), peak RSS %.1f MiB\n\n",
           json_num(ts, "assign") + json_num(ts, "write"), json_num(ts, "assign"),
           json_num(ts, "write"), json_num(j, "peak_rss_bytes") / 1048576.0);
    printf("%5s %7s %12s %12s %12s %12s %10s %6s %9s %9s\n", "part", "machine", "start", "nodes",
           "edges", "halo", "repl", "train", "own", "borrowed");
    for (int k = 0; k < pi->parts; k++) {
        printf("%5d %7d %12lld %12lld %12.0f %12.0f %10.3f %6lld %9.0f %9.0f\n", k,
               pi->part_machine[k], (long long)pi->start[k],
               (long long)(pi->start[k + 1] - pi->start[k]), json_at(j, "edges_per_part", k),
               json_at(j, "halo_per_part", k), json_at(j, "replication_per_part", k),
               (long long)pi->train_per_part, json_at(j, "train_owned_per_part", k),
               json_at(j, "train_borrowed_per_part", k));
    }
    if (pi->nrels > 0) {
        print_types(pi);
    }
    halo_partinfo_free(pi);
    return 0;
}
