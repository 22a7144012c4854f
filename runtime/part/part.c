/* Partition directories: loading the range table (partition.json) and mapping one part. */
#include "part/part.h"

#include "core/err.h"
#include "core/mem.h"
#include "graph/graph.h"
#include "graph/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Array files of part-K/, in the order of halo_part's maps[]. */
static const char *const part_files[11] = {
    "indptr.i64", "indices.i32", "feat.f32", "label.i32", "split.u8", "halo.i32",
    "halo_deg.i32", "train.i32", "ntype.u8", "etype.u8", "halo_ntype.u8",
};

/* Reads the optional boolean member "features" of v into *topology_only (absent: features). */
static int get_topology_only(const halo_json *v, const char *where, bool *topology_only)
{
    const halo_json *f = halo_json_get(v, "features");
    if (f != NULL && f->type != HALO_JSON_BOOL) {
        return halo_errorf(HALO_EINPUT, "%s: \"features\" must be true or false", where);
    }
    *topology_only = f != NULL && !f->boolean;
    return 0;
}

/* Reads member key of v as an int64 in [lo, hi]. */
static int get_range(const halo_json *v, const char *key, const char *where, int64_t lo,
                     int64_t hi, int64_t *out)
{
    HALO_CHECK(halo_json_get_i64(v, key, where, out));
    if (*out < lo || *out > hi) {
        return halo_errorf(HALO_EINPUT, "%s: %s = %lld is out of range [%lld, %lld]", where, key,
                           (long long)*out, (long long)lo, (long long)hi);
    }
    return 0;
}

/* The typed part of partition.json (a copy of the graph's node types and relations, and
 * "type_ranges": per part, per type, its [start, end) of global ids). Absent: homogeneous. */
static int load_types(halo_partinfo *pi, const char *path)
{
    pi->ntypes = 1;
    pi->ntype_feat_dim[0] = pi->feat_dim;
    const halo_json *rl = halo_json_get(pi->json, "relations");
    if (rl == NULL) {
        return 0;
    }
    const halo_json *nt = halo_json_get(pi->json, "node_types");
    const halo_json *tr = halo_json_get(pi->json, "type_ranges");
    const char *target;
    if (nt == NULL || nt->type != HALO_JSON_ARRAY || nt->len < 1 || nt->len > HALO_MAX_NTYPES ||
        rl->type != HALO_JSON_ARRAY || rl->len < 1 || rl->len > HALO_MAX_RELS || tr == NULL ||
        tr->type != HALO_JSON_ARRAY || tr->len != (size_t)pi->parts) {
        return halo_errorf(HALO_EINPUT, "%s: \"node_types\", \"relations\" and \"type_ranges\" "
                           "of a typed partition are malformed", path);
    }
    pi->ntypes = (int)nt->len;
    pi->nrels = (int)rl->len;
    for (int t = 0; t < pi->ntypes; t++) {
        const char *name;
        HALO_CHECK(halo_json_get_str(nt->items[t], "name", path, &name));
        snprintf(pi->ntype_name[t], HALO_TYPE_NAME, "%s", name);
        int64_t w = pi->feat_dim;
        if (halo_json_get(nt->items[t], "feat_dim") != NULL) {
            HALO_CHECK(get_range(nt->items[t], "feat_dim", path, 0, pi->feat_dim, &w));
        }
        pi->ntype_feat_dim[t] = (int)w;
    }
    for (int r = 0; r < pi->nrels; r++) {
        const char *name;
        int64_t v;
        HALO_CHECK(halo_json_get_str(rl->items[r], "name", path, &name));
        snprintf(pi->rel[r].name, HALO_TYPE_NAME, "%s", name);
        HALO_CHECK(get_range(rl->items[r], "src_type", path, 0, pi->ntypes - 1, &v));
        pi->rel[r].src = (int)v;
        HALO_CHECK(get_range(rl->items[r], "dst_type", path, 0, pi->ntypes - 1, &v));
        pi->rel[r].dst = (int)v;
    }
    HALO_CHECK(halo_json_get_str(pi->json, "target_type", path, &target));
    pi->target_type = 0;
    for (int t = 0; t < pi->ntypes; t++) {
        if (strcmp(pi->ntype_name[t], target) == 0) {
            pi->target_type = t;
        }
    }
    int T1 = pi->ntypes + 1;
    pi->type_start = HALO_NEW(int64_t, (size_t)pi->parts * T1);
    for (int k = 0; k < pi->parts; k++) {
        const halo_json *e = tr->items[k];
        if (e->type != HALO_JSON_ARRAY || e->len != (size_t)pi->ntypes) {
            return halo_errorf(HALO_EINPUT, "%s: type_ranges[%d] is not %d [start, end] pairs",
                               path, k, pi->ntypes);
        }
        int64_t at = pi->start[k];
        for (int t = 0; t < pi->ntypes; t++) {
            const halo_json *q = e->items[t];
            if (q->type != HALO_JSON_ARRAY || q->len != 2 ||
                q->items[0]->type != HALO_JSON_NUMBER || q->items[1]->type != HALO_JSON_NUMBER ||
                (int64_t)q->items[0]->number != at || q->items[1]->number < at ||
                q->items[1]->number > (double)pi->start[k + 1]) {
                return halo_errorf(HALO_EINPUT, "%s: type_ranges[%d][%d] does not continue at "
                                   "%lld inside part %d's range", path, k, t, (long long)at, k);
            }
            pi->type_start[(size_t)k * T1 + t] = at;
            at = (int64_t)q->items[1]->number;
        }
        if (at != pi->start[k + 1]) {
            return halo_errorf(HALO_EINPUT, "%s: type_ranges[%d] end at %lld, the part at %lld",
                               path, k, (long long)at, (long long)pi->start[k + 1]);
        }
        pi->type_start[(size_t)k * T1 + pi->ntypes] = at;
    }
    return 0;
}

/* Loads partition.json: checks the format, the graph figures and that the ranges tile
 * [0, nodes) in order. */
int halo_partinfo_load(const char *pdir, halo_partinfo **out)
{
    char path[4096];
    int rc = 0;
    int64_t v;
    *out = NULL;
    HALO_CHECK(halo_path_join(path, sizeof path, pdir, "partition.json"));
    halo_partinfo *pi = HALO_NEW(halo_partinfo, 1);
    snprintf(pi->dir, sizeof pi->dir, "%s", pdir);
    HALO_TRY(halo_json_load(path, &pi->json));
    HALO_TRY(halo_json_get_i64(pi->json, "format", path, &v));
    if (v != HALO_PART_FORMAT) {
        rc = halo_errorf(HALO_EINPUT, "%s: format %lld is not %d", path, (long long)v,
                         HALO_PART_FORMAT);
        goto fail;
    }
    HALO_TRY(get_range(pi->json, "parts", path, 1, 1 << 20, &v));
    pi->parts = (int)v;
    HALO_TRY(get_range(pi->json, "machines", path, 1, pi->parts, &v));
    pi->machines = (int)v;
    HALO_TRY(get_range(pi->json, "trainers_per_machine", path, 1, pi->parts, &v));
    pi->trainers_per_machine = (int)v;
    if ((int64_t)pi->machines * pi->trainers_per_machine != pi->parts) {
        rc = halo_errorf(HALO_EINPUT, "%s: machines %d x trainers_per_machine %d != parts %d",
                         path, pi->machines, pi->trainers_per_machine, pi->parts);
        goto fail;
    }
    const halo_json *g = halo_json_get(pi->json, "graph");
    if (g == NULL || g->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT, "%s: missing object \"graph\"", path);
        goto fail;
    }
    HALO_TRY(get_range(g, "nodes", path, 0, 2147483647LL, &pi->nodes));
    HALO_TRY(get_range(g, "edges", path, 0, INT64_MAX, &pi->edges));
    HALO_TRY(get_range(g, "feat_dim", path, 0, 1000000, &v));
    pi->feat_dim = (int)v;
    HALO_TRY(get_topology_only(g, path, &pi->topology_only));
    HALO_TRY(get_range(g, "classes", path, 0, 1000000, &v));
    pi->classes = (int)v;
    const char *hex;
    HALO_TRY(halo_json_get_str(g, "checksum", path, &hex));
    pi->graph_checksum = (uint32_t)strtoul(hex, NULL, 16);
    HALO_TRY(get_range(pi->json, "train_per_part", path, 0, pi->nodes, &pi->train_per_part));

    const halo_json *r = halo_json_get(pi->json, "ranges");
    if (r == NULL || r->type != HALO_JSON_ARRAY || r->len != (size_t)pi->parts) {
        rc = halo_errorf(HALO_EINPUT, "%s: \"ranges\" must be an array of %d [start, end] pairs",
                         path, pi->parts);
        goto fail;
    }
    pi->start = HALO_NEW(int64_t, pi->parts + 1);
    for (int k = 0; k < pi->parts; k++) {
        const halo_json *e = r->items[k];
        if (e->type != HALO_JSON_ARRAY || e->len != 2 || e->items[0]->type != HALO_JSON_NUMBER ||
            e->items[1]->type != HALO_JSON_NUMBER) {
            rc = halo_errorf(HALO_EINPUT, "%s: ranges[%d] is not a [start, end] pair", path, k);
            goto fail;
        }
        int64_t s = (int64_t)e->items[0]->number, t = (int64_t)e->items[1]->number;
        if (s != pi->start[k] || t < s || t > pi->nodes) {
            rc = halo_errorf(HALO_EINPUT, "%s: ranges[%d] = [%lld, %lld] does not continue at %lld",
                             path, k, (long long)s, (long long)t, (long long)pi->start[k]);
            goto fail;
        }
        pi->start[k + 1] = t;
    }
    if (pi->start[pi->parts] != pi->nodes) {
        rc = halo_errorf(HALO_EINPUT, "%s: ranges end at %lld, graph has %lld nodes", path,
                         (long long)pi->start[pi->parts], (long long)pi->nodes);
        goto fail;
    }
    HALO_TRY(load_types(pi, path));
    pi->part_machine = HALO_NEW(int, pi->parts);
    const halo_json *pm = halo_json_get(pi->json, "part_machine");
    for (int k = 0; k < pi->parts; k++) {
        pi->part_machine[k] = k / pi->trainers_per_machine;
        if (pm != NULL && pm->type == HALO_JSON_ARRAY && pm->len == (size_t)pi->parts &&
            pm->items[k]->type == HALO_JSON_NUMBER) {
            int m = (int)pm->items[k]->number;
            if (m < 0 || m >= pi->machines) {
                rc = halo_errorf(HALO_EINPUT, "%s: part_machine[%d] = %d out of range", path, k, m);
                goto fail;
            }
            pi->part_machine[k] = m;
        }
    }
    *out = pi;
    return 0;
fail:
    halo_partinfo_free(pi);
    return rc;
}

void halo_partinfo_free(halo_partinfo *pi)
{
    if (pi == NULL) {
        return;
    }
    halo_free(pi->start);
    halo_free(pi->part_machine);
    halo_free(pi->type_start);
    halo_json_free(pi->json);
    halo_free(pi);
}

/* Binary search for the part k with start[k] <= gid < start[k+1] (empty parts are skipped);
 * -1 for an id outside [0, nodes). */
int halo_partinfo_owner(const halo_partinfo *pi, int32_t gid)
{
    if (gid < 0 || (int64_t)gid >= pi->nodes) {
        return -1;
    }
    int lo = 0, hi = pi->parts - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pi->start[mid + 1] <= gid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int halo_partinfo_node_type(const halo_partinfo *pi, int32_t gid)
{
    if (pi->nrels == 0 || pi->type_start == NULL) {
        return 0;
    }
    int k = halo_partinfo_owner(pi, gid);
    if (k < 0) {
        return 0;
    }
    const int64_t *ts = pi->type_start + (size_t)k * (size_t)(pi->ntypes + 1);
    for (int ty = 0; ty < pi->ntypes; ty++) {
        if (gid < ts[ty + 1]) {
            return ty;
        }
    }
    return pi->ntypes - 1;
}

/* Maps array a of part p from dir, after checking that meta.json records `bytes` for it. */
static int map_array(halo_part *p, const char *dir, const halo_json *files, int a, uint64_t bytes,
                     const char *metapath)
{
    char path[4096];
    int64_t recorded;
    HALO_CHECK(halo_path_join(path, sizeof path, dir, part_files[a]));
    const halo_json *f = halo_json_get(files, part_files[a]);
    if (f == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: no entry for %s", metapath, part_files[a]);
    }
    HALO_CHECK(halo_json_get_i64(f, "bytes", metapath, &recorded));
    if ((uint64_t)recorded != bytes) {
        return halo_errorf(HALO_EINPUT, "%s: %s has %lld bytes, its counts need %llu", metapath,
                           part_files[a], (long long)recorded, (unsigned long long)bytes);
    }
    HALO_CHECK(halo_map_file(path, (size_t)bytes, &p->maps[a]));
    if (strcmp(part_files[a], "feat.f32") == 0) { /* read at random rows by the gather */
        halo_mem_hugepages(p->maps[a].data, p->maps[a].size);
    }
    return 0;
}

/* Whether sorted a[0..n) holds x. */
static bool sorted_has(const int32_t *a, int64_t n, int32_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n && a[lo] == x;
}

/* Everything the trainer, the store and the simulator rely on in a mapped part, checked against
 * partition.json in O(edges log halo + nodes x feat_dim): the range and widths agree; indptr never
 * decreases; every source is a node id, and every source owned elsewhere is in the halo list;
 * the halo list is ascending, of ids owned by other parts, with degrees >= 0; labels in
 * [-1, classes); split values 0..3; training seeds are node ids; features are finite. A part
 * whose arrays were swapped or cut (its checksums can still match) fails here, naming the file. */
static int part_check(const halo_part *p, const halo_partinfo *pi, const char *dir)
{
    const int64_t N = pi->nodes, s = p->start, e = p->end;
    if (p->id >= pi->parts || s != pi->start[p->id] || e != pi->start[p->id + 1]) {
        return halo_errorf(HALO_EINPUT, "%s/meta.json: range [%lld, %lld) is not part %d's in "
                           "partition.json", dir, (long long)s, (long long)e, p->id);
    }
    if (p->feat_dim != pi->feat_dim || p->topology_only != pi->topology_only) {
        return halo_errorf(HALO_EINPUT, "%s/meta.json: feat_dim %d%s disagrees with "
                           "partition.json (%d%s)", dir, p->feat_dim,
                           p->topology_only ? ", no features" : "", pi->feat_dim,
                           pi->topology_only ? ", no features" : "");
    }
    if (p->num_train != pi->train_per_part) {
        return halo_errorf(HALO_EINPUT, "%s/meta.json: num_train %lld, partition.json says "
                           "train_per_part %lld", dir, (long long)p->num_train,
                           (long long)pi->train_per_part);
    }
    for (int64_t v = 0; v < p->nodes; v++) {
        if (p->indptr[v + 1] < p->indptr[v]) {
            return halo_errorf(HALO_EINPUT, "%s/indptr.i64: entry %lld is %lld, less than entry "
                               "%lld (%lld)", dir, (long long)v + 1, (long long)p->indptr[v + 1],
                               (long long)v, (long long)p->indptr[v]);
        }
    }
    for (int64_t h = 0; h < p->num_halo; h++) {
        int32_t x = p->halo[h];
        if (x < 0 || x >= N || (x >= s && x < e) || (h > 0 && x <= p->halo[h - 1])) {
            return halo_errorf(HALO_EINPUT, "%s/halo.i32: entry %lld is %d, not an ascending id "
                               "in [0, %lld) outside the part's own [%lld, %lld)", dir,
                               (long long)h, x, (long long)N, (long long)s, (long long)e);
        }
        if (p->halo_deg[h] < 0) {
            return halo_errorf(HALO_EINPUT, "%s/halo_deg.i32: entry %lld is %d, not a degree",
                               dir, (long long)h, p->halo_deg[h]);
        }
    }
    for (int64_t i = 0; i < p->edges; i++) {
        int32_t x = p->indices[i];
        if (x < 0 || x >= N) {
            return halo_errorf(HALO_EINPUT, "%s/indices.i32: entry %lld is %d, not a node id in "
                               "[0, %lld)", dir, (long long)i, x, (long long)N);
        }
        if ((x < s || x >= e) && !sorted_has(p->halo, p->num_halo, x)) {
            return halo_errorf(HALO_EINPUT, "%s/indices.i32: entry %lld is %d, owned by another "
                               "part but missing from halo.i32", dir, (long long)i, x);
        }
    }
    for (int64_t v = 0; v < p->nodes; v++) {
        if (p->label[v] < -1 || p->label[v] >= pi->classes) {
            return halo_errorf(HALO_EINPUT, "%s/label.i32: entry %lld is %d, not in [-1, %d)",
                               dir, (long long)v, p->label[v], pi->classes);
        }
        if (p->split[v] > HALO_SPLIT_TEST) {
            return halo_errorf(HALO_EINPUT, "%s/split.u8: entry %lld is %u, not in 0..3", dir,
                               (long long)v, (unsigned)p->split[v]);
        }
    }
    for (int64_t i = 0; i < p->num_train; i++) {
        if (p->train[i] < 0 || p->train[i] >= N) {
            return halo_errorf(HALO_EINPUT, "%s/train.i32: entry %lld is %d, not a node id in "
                               "[0, %lld)", dir, (long long)i, p->train[i], (long long)N);
        }
    }
    char f[4200];
    for (int t = 0; t < p->ntypes; t++) {
        snprintf(f, sizeof f, "%s/feat.%s.f32", dir, pi->ntype_name[t]);
        HALO_CHECK(halo_check_features(p->tfeat[t], p->tstart[t + 1] - p->tstart[t], p->tdim[t],
                                       0, f));
    }
    snprintf(f, sizeof f, "%s/feat.f32", dir);
    return halo_check_features(p->feat, p->nodes, p->feat_dim, s, f);
}

void halo_part_feat_row(const halo_part *p, int64_t gid, float *dst)
{
    int w;
    const float *src = halo_part_feat_ptr(p, gid, &w);
    halo_feat_row_pad(dst, src, w, p->feat_dim);
}

/* Maps the per-type feature files of typed part p (k of pi) from dir: feat.TYPE.f32 of each
 * type with w_t > 0 over the part's typed range, its size checked against part-K/meta.json and
 * the file; no file for a featureless type, and no padded feat.f32 (an older halo's). */
static int map_type_feat(halo_part *p, const halo_partinfo *pi, const char *dir,
                         const halo_json *files, const char *metapath)
{
    char path[4300], name[64];
    snprintf(path, sizeof path, "%s/feat.f32", dir);
    if (halo_path_exists(path)) {
        return halo_errorf(HALO_EINPUT, "%s: a typed partition from an older halo (one padded "
                           "feature file); re-partition the graph", path);
    }
    if (pi->nrels == 0 || pi->type_start == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: a typed part (\"nrels\") of a partition.json "
                           "without node types", metapath);
    }
    int T1 = pi->ntypes + 1;
    p->ntypes = pi->ntypes;
    for (int t = 0; t <= pi->ntypes; t++) {
        p->tstart[t] = pi->type_start[(size_t)p->id * T1 + t];
    }
    for (int t = 0; t < pi->ntypes; t++) {
        int w = pi->ntype_feat_dim[t];
        snprintf(name, sizeof name, "feat.%s.f32", pi->ntype_name[t]);
        HALO_CHECK(halo_path_join(path, sizeof path, dir, name));
        if (p->topology_only || w == 0) {
            if (halo_path_exists(path) || halo_json_get(files, name) != NULL) {
                return halo_errorf(HALO_EINPUT, "%s: node type %s has no features, so it has no "
                                   "feature file", path, pi->ntype_name[t]);
            }
            continue;
        }
        uint64_t bytes = (uint64_t)(p->tstart[t + 1] - p->tstart[t]) * (uint64_t)w * 4;
        const halo_json *f = halo_json_get(files, name);
        int64_t recorded;
        if (f == NULL || !halo_path_exists(path)) {
            return halo_errorf(HALO_EINPUT, "%s: missing: node type %s has %d features", path,
                               pi->ntype_name[t], w);
        }
        HALO_CHECK(halo_json_get_i64(f, "bytes", metapath, &recorded));
        if ((uint64_t)recorded != bytes) {
            return halo_errorf(HALO_EINPUT, "%s: %s has %lld bytes, its type range needs %llu",
                               metapath, name, (long long)recorded, (unsigned long long)bytes);
        }
        HALO_CHECK(halo_map_file(path, (size_t)bytes, &p->tmaps[t]));
        halo_mem_hugepages(p->tmaps[t].data, p->tmaps[t].size);
        p->tdim[t] = w;
        p->tfeat[t] = p->tmaps[t].data;
    }
    return 0;
}

/* Loads part k: reads part-K/meta.json for the counts, derives every array's size from them,
 * checks it against both meta.json and the file, maps the arrays, and checks the CSR ends. */
int halo_part_load(const char *pdir, int k, halo_part **out)
{
    char dir[4096], name[64], metapath[4096];
    int rc = 0;
    int64_t v;
    halo_json *meta = NULL;
    halo_partinfo *pi = NULL;
    *out = NULL;
    if (k < 0) {
        return halo_errorf(HALO_EUSAGE, "%s: part %d does not exist", pdir, k);
    }
    snprintf(name, sizeof name, "part-%d", k);
    HALO_CHECK(halo_path_join(dir, sizeof dir, pdir, name));
    HALO_CHECK(halo_path_join(metapath, sizeof metapath, dir, "meta.json"));
    halo_part *p = HALO_NEW(halo_part, 1);
    p->id = k;
    HALO_TRY(halo_json_load(metapath, &meta));
    HALO_TRY(halo_json_get_i64(meta, "format", metapath, &v));
    if (v != HALO_PART_FORMAT) {
        rc = halo_errorf(HALO_EINPUT, "%s: format %lld is not %d", metapath, (long long)v,
                         HALO_PART_FORMAT);
        goto fail;
    }
    HALO_TRY(get_range(meta, "part", metapath, k, k, &v));
    HALO_TRY(get_range(meta, "start", metapath, 0, 2147483647LL, &p->start));
    HALO_TRY(get_range(meta, "end", metapath, p->start, 2147483647LL, &p->end));
    p->nodes = p->end - p->start;
    HALO_TRY(get_range(meta, "edges", metapath, 0, INT64_MAX / 8, &p->edges));
    HALO_TRY(get_range(meta, "feat_dim", metapath, 0, 1000000, &v));
    p->feat_dim = (int)v;
    HALO_TRY(get_topology_only(meta, metapath, &p->topology_only));
    HALO_TRY(get_range(meta, "num_halo", metapath, 0, 2147483647LL, &p->num_halo));
    HALO_TRY(get_range(meta, "num_train", metapath, 0, 2147483647LL, &p->num_train));
    if (halo_json_get(meta, "nrels") != NULL) {
        HALO_TRY(get_range(meta, "nrels", metapath, 1, HALO_MAX_RELS, &v));
        p->nrels = (int)v;
    }
    const halo_json *files = halo_json_get(meta, "files");
    if (files == NULL || files->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT, "%s: missing object \"files\"", metapath);
        goto fail;
    }
    uint64_t n = (uint64_t)p->nodes;
    const uint64_t bytes[11] = {
        (n + 1) * 8, (uint64_t)p->edges * 4, n * (uint64_t)p->feat_dim * 4, n * 4, n,
        (uint64_t)p->num_halo * 4, (uint64_t)p->num_halo * 4, (uint64_t)p->num_train * 4,
        n, (uint64_t)p->edges, (uint64_t)p->num_halo,
    };
    HALO_TRY(halo_partinfo_load(pdir, &pi));
    if (p->nrels > 0) { /* typed: features in one file per featured type */
        HALO_TRY(map_type_feat(p, pi, dir, files, metapath));
    }
    for (int a = 0; a < (p->nrels > 0 ? 11 : 8); a++) {
        if (a == 2 && (p->topology_only || p->nrels > 0)) {
            continue; /* no feat.f32: feat stays NULL */
        }
        if (a == 2) {
            char fpath[4200];
            snprintf(fpath, sizeof fpath, "%s/%s", dir, part_files[a]);
            if (halo_json_get(files, part_files[a]) == NULL || !halo_path_exists(fpath)) {
                rc = halo_errorf(HALO_EINPUT, "%s: missing, and %s does not say the part is "
                                 "topology-only (\"features\": false)", fpath, metapath);
                goto fail;
            }
        }
        HALO_TRY(map_array(p, dir, files, a, bytes[a], metapath));
    }
    p->indptr = p->maps[0].data;
    p->indices = p->maps[1].data;
    p->feat = p->maps[2].data;
    p->label = p->maps[3].data;
    p->split = p->maps[4].data;
    p->halo = p->maps[5].data;
    p->halo_deg = p->maps[6].data;
    p->train = p->maps[7].data;
    p->ntype = p->maps[8].data;
    p->etype = p->maps[9].data;
    p->halo_ntype = p->maps[10].data;
    if (p->indptr[0] != 0 || p->indptr[p->nodes] != p->edges) {
        rc = halo_errorf(HALO_EINPUT, "%s/indptr.i64: runs from %lld to %lld, expected 0 to %lld",
                         dir, (long long)p->indptr[0], (long long)p->indptr[p->nodes],
                         (long long)p->edges);
        goto fail;
    }
    HALO_TRY(part_check(p, pi, dir));
    halo_partinfo_free(pi);
    halo_json_free(meta);
    *out = p;
    return 0;
fail:
    halo_partinfo_free(pi);
    halo_json_free(meta);
    halo_part_free(p);
    return rc;
}

void halo_part_free(halo_part *p)
{
    if (p == NULL) {
        return;
    }
    for (int t = 0; t < HALO_MAX_NTYPES; t++) {
        halo_unmap(&p->tmaps[t]);
    }
    for (int a = 0; a < 11; a++) {
        halo_unmap(&p->maps[a]);
    }
    halo_free(p);
}
