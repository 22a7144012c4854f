/* halo trace: `record` samples a partition's epochs in one process (no training, no MPI) and
 * writes the access trace; `replay` runs a trace through cache policies and prints hit rates and
 * remote bytes (a sweep over policies and capacities in one call). */
#include "cli/cli.h"

#include "cache/cache.h"
#include "cache/trace.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "order/order.h"
#include "part/part.h"
#include "policy/policy.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- record ---- */

/* The input graph rebuilt from a partition's parts, in input-graph (orig) numbering, so that
 * halo_sample_graph draws with the same keys as the distributed sampler. */
typedef struct orig_graph {
    halo_partinfo *pi;   /* range table */
    halo_part **parts;   /* [P] */
    halo_map orig_map;   /* orig_id.i64 */
    const int64_t *orig; /* [nodes] new id -> orig id */
    int32_t *new_of;     /* [nodes] orig id -> new id */
    halo_graph g;        /* CSR over orig ids (indptr, indices owned) */
} orig_graph;

static void orig_graph_free(orig_graph *og)
{
    for (int k = 0; og->pi != NULL && og->parts != NULL && k < og->pi->parts; k++) {
        halo_part_free(og->parts[k]);
    }
    halo_free(og->parts);
    halo_unmap(&og->orig_map);
    halo_free(og->new_of);
    halo_free(og->g.indptr);
    halo_free(og->g.indices);
    halo_partinfo_free(og->pi);
    memset(og, 0, sizeof *og);
}

static int orig_graph_load(const char *pdir, orig_graph *og)
{
    memset(og, 0, sizeof *og);
    int rc = 0;
    HALO_TRY(halo_partinfo_load(pdir, &og->pi));
    int64_t n = og->pi->nodes;
    og->parts = HALO_NEW(halo_part *, og->pi->parts);
    for (int k = 0; k < og->pi->parts; k++) {
        HALO_TRY(halo_part_load(pdir, k, &og->parts[k]));
    }
    char path[4200];
    HALO_TRY(halo_path_join(path, sizeof path, pdir, "orig_id.i64"));
    HALO_TRY(halo_map_file(path, (size_t)n * sizeof(int64_t), &og->orig_map));
    og->orig = og->orig_map.data;
    og->new_of = HALO_ALLOC(int32_t, n + 1);
    for (int64_t v = 0; v < n; v++) {
        if (og->orig[v] < 0 || og->orig[v] >= n) {
            rc = halo_errorf(HALO_EINPUT, "%s: orig id %lld of node %lld out of range", path,
                             (long long)og->orig[v], (long long)v);
            goto fail;
        }
        og->new_of[og->orig[v]] = (int32_t)v;
    }
    og->g.nodes = n;
    og->g.edges = og->pi->edges;
    og->g.feat_dim = 0;
    og->g.indptr = HALO_NEW(int64_t, n + 1);
    int64_t e = 0;
    for (int k = 0; k < og->pi->parts; k++) {
        e += og->parts[k]->edges;
    }
    og->g.edges = e;
    og->g.indices = HALO_ALLOC(int32_t, e + 1);
    for (int k = 0; k < og->pi->parts; k++) {
        const halo_part *p = og->parts[k];
        for (int64_t i = 0; i < p->nodes; i++) {
            og->g.indptr[og->orig[p->start + i] + 1] = p->indptr[i + 1] - p->indptr[i];
        }
    }
    for (int64_t o = 0; o < n; o++) {
        og->g.indptr[o + 1] += og->g.indptr[o];
    }
    for (int k = 0; k < og->pi->parts; k++) {
        const halo_part *p = og->parts[k];
        for (int64_t i = 0; i < p->nodes; i++) {
            int64_t dst = og->g.indptr[og->orig[p->start + i]];
            for (int64_t j = p->indptr[i]; j < p->indptr[i + 1]; j++) {
                og->g.indices[dst++] = (int32_t)og->orig[p->indices[j]];
            }
        }
    }
    return 0;
fail:
    orig_graph_free(og);
    return rc;
}

/* One BLOCK record per layer of mb (trace.h), ids turned into the partition's numbering. */
static int put_blocks(halo_trace_writer *w, const orig_graph *og, int rank, int epoch, int64_t b,
                      const halo_minibatch *mb)
{
    int rc = 0;
    for (int l = 0; rc == 0 && l < mb->layers; l++) {
        const halo_block *bl = &mb->blocks[l];
        int32_t *dst = HALO_ALLOC(int32_t, bl->num_dst + 1);
        int32_t *cnt = HALO_ALLOC(int32_t, bl->num_dst + 1);
        int32_t *src = HALO_ALLOC(int32_t, bl->num_edges + 1);
        for (int32_t i = 0; i < bl->num_dst; i++) {
            dst[i] = og->new_of[bl->src_gid[i]];
            cnt[i] = (int32_t)(bl->indptr[i + 1] - bl->indptr[i]);
        }
        for (int64_t e = 0; e < bl->num_edges; e++) {
            src[e] = og->new_of[bl->src_gid[bl->indices[e]]];
        }
        rc = halo_trace_put_block(w, rank, epoch, b, l, bl->num_dst, dst, cnt, bl->num_edges, src);
        halo_free(src);
        halo_free(cnt);
        halo_free(dst);
    }
    return rc;
}

/* Each part's halo nodes into the trace w, with their owners and their weights of
 * halo_cache_vip over the part's training seeds. */
static int put_halos(orig_graph *og, halo_trace_writer *w, const int *fanouts, int layers,
                     int64_t batch)
{
    int64_t n = og->g.nodes;
    int rc = 0;
    double *p = HALO_ALLOC(double, n + 1);
    int32_t *oseeds = NULL, *owner = NULL;
    double *vip = NULL;
    for (int r = 0; r < og->pi->parts; r++) {
        const halo_part *pt = og->parts[r];
        halo_free(oseeds);
        halo_free(vip);
        oseeds = HALO_ALLOC(int32_t, pt->num_train + 1);
        for (int64_t i = 0; i < pt->num_train; i++) {
            oseeds[i] = (int32_t)og->orig[pt->train[i]];
        }
        halo_cache_vip(n, 0, n, og->g.indptr, og->g.indices, oseeds, pt->num_train, (int)batch,
                       fanouts, layers, p);
        vip = HALO_ALLOC(double, pt->num_halo + 1);
        for (int64_t h = 0; h < pt->num_halo; h++) {
            vip[h] = p[og->orig[pt->halo[h]]];
        }
        halo_free(owner);
        owner = HALO_ALLOC(int32_t, pt->num_halo + 1);
        for (int64_t h = 0; h < pt->num_halo; h++) {
            owner[h] = halo_partinfo_owner(og->pi, pt->halo[h]);
        }
        HALO_TRY(halo_trace_put_halo(w, r, pt->num_halo, pt->halo, pt->halo_deg, owner, vip));
    }
fail:
    halo_free(p);
    halo_free(oseeds);
    halo_free(vip);
    halo_free(owner);
    return rc;
}

/* Whether the node v (new id) is one of the part's halo nodes (pt->halo is sorted). */
static bool is_halo(const halo_part *pt, int32_t v)
{
    int64_t lo = 0, hi = pt->num_halo;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pt->halo[mid] < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < pt->num_halo && pt->halo[lo] == v;
}

/* The input nodes of the batch mb as part pt sees them: new ids into ids, and flags remote
 * (owned by another part) and halo (a remote one among pt's halo nodes), counted. */
static void flag_inputs(const orig_graph *og, const halo_part *pt, const halo_minibatch *mb,
                        int32_t *ids, uint8_t *flags, int64_t *n_remote, int64_t *n_halo)
{
    for (int32_t i = 0; i < mb->num_input; i++) {
        int32_t v = og->new_of[mb->input[i]];
        ids[i] = v;
        flags[i] = 0;
        if (v < pt->start || v >= pt->end) {
            flags[i] = HALO_TRACE_F_REMOTE;
            (*n_remote)++;
            if (is_halo(pt, v)) {
                flags[i] |= HALO_TRACE_F_HALO;
                (*n_halo)++;
            }
        }
    }
}

/* Records every rank's batches of `epochs` epochs into w (seed order as the trainer shuffles). */
static int record_trace(orig_graph *og, halo_trace_writer *w, const int *fanouts, int layers,
                        int64_t batch, int epochs, int64_t max_batches, uint64_t seed, bool blocks,
                        int64_t *n_batches, int64_t *n_input, int64_t *n_remote, int64_t *n_halo)
{
    int P = og->pi->parts;
    int rc = 0;
    halo_sampler *smp = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int32_t *seeds = NULL, *order = NULL, *ids = NULL;
    uint8_t *flags = NULL;
    halo_order_key *keys = NULL;
    int64_t *torig = NULL, *boff = NULL;
    int64_t cap = 0;
    HALO_TRY(put_halos(og, w, fanouts, layers, batch));
    for (int ep = 0; ep < epochs; ep++) {
        for (int r = 0; r < P; r++) {
            const halo_part *pt = og->parts[r];
            int64_t nt = pt->num_train;
            int64_t nb = halo_order_batches(nt, batch);
            /* the trainer's epoch order (local batching), from the module it uses */
            halo_free(order);
            halo_free(keys);
            halo_free(torig);
            halo_free(boff);
            order = HALO_ALLOC(int32_t, nt + 1);
            keys = HALO_ALLOC(halo_order_key, nt + 1);
            torig = HALO_ALLOC(int64_t, nt + 1);
            boff = HALO_ALLOC(int64_t, nb + 1);
            for (int64_t i = 0; i < nt; i++) {
                torig[i] = og->orig[pt->train[i]];
            }
            halo_order_local(seed, ep, nt, pt->train, torig, batch, keys, order, boff);
            if (max_batches > 0 && nb > max_batches) {
                nb = max_batches;
            }
            halo_free(seeds);
            seeds = HALO_ALLOC(int32_t, batch + 1);
            for (int64_t b = 0; b < nb; b++) {
                int64_t s0 = boff[b], s1 = boff[b + 1];
                for (int64_t i = s0; i < s1; i++) {
                    seeds[i - s0] = (int32_t)og->orig[order[i]];
                }
                halo_sample_key k = {seed, ep, b};
                HALO_TRY(halo_sample_graph(smp, &og->g, fanouts, layers, &k, seeds,
                                           (int32_t)(s1 - s0), &mb));
                if (mb.num_input > cap) {
                    cap = mb.num_input + mb.num_input / 2 + 64;
                    halo_free(ids);
                    halo_free(flags);
                    ids = HALO_ALLOC(int32_t, cap);
                    flags = HALO_ALLOC(uint8_t, cap);
                }
                flag_inputs(og, pt, &mb, ids, flags, n_remote, n_halo);
                HALO_TRY(halo_trace_put_batch(w, r, ep, b, mb.num_input, ids, flags));
                if (blocks) {
                    HALO_TRY(put_blocks(w, og, r, ep, b, &mb));
                }
                (*n_batches)++;
                *n_input += mb.num_input;
            }
        }
    }
fail:
    halo_sample_free(&mb);
    halo_sampler_free(smp);
    halo_free(seeds);
    halo_free(order);
    halo_free(keys);
    halo_free(torig);
    halo_free(boff);
    halo_free(ids);
    halo_free(flags);
    return rc;
}

static int trace_record(int argc, char **argv)
{
    const char *out = NULL, *fanout_s = "10,25";
    int64_t batch = HALO_DEFAULT_BATCH, max_batches = 0, seed = 1;
    int epochs = HALO_DEFAULT_EPOCHS;
    bool blocks = false;
    const halo_opt opts[] = {
        {"output", 'o', HALO_OPT_STRING, &out, "TRACE", "trace file to write (required)"},
        {"fanouts", 'f', HALO_OPT_STRING, &fanout_s, "LIST",
         "per-layer fanouts, input layer first"},
        {"batch", 'b', HALO_OPT_I64, &batch, "B", "seeds per mini-batch"},
        {"epochs", 'e', HALO_OPT_INT, &epochs, "E", "epochs to record"},
        {"max-batches", 0, HALO_OPT_I64, &max_batches, "N", "batches per epoch at most (0: all)"},
        {"seed", 's', HALO_OPT_I64, &seed, "S", "run seed (shuffle and sampling keys)"},
        {"blocks", 0, HALO_OPT_FLAG, &blocks, NULL,
         "also record each batch's sampled edges, layer by layer (BLOCK records, docs/cache.md)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo trace record PDIR -o TRACE [--fanouts 10,25] [--batch B] [--epochs E] [--blocks]",
        "Samples every part's mini-batches in one process, exactly as `halo train` draws them\n"
        "(local batching: same epoch order, same sampling keys), and writes the access trace:\n"
        "per rank its halo set (with in-degrees and SALIENT++ inclusion probabilities) and per\n"
        "batch the input ids with remote/halo flags; with --blocks also each batch's sampled\n"
        "edges (destination ids, counts, source ids per layer), so the sampler can be checked\n"
        "from outside. No training, no MPI. Replay it with\n"
        "`halo trace replay TRACE --policies all`.",
    };
    char *pos[64];
    int npos = 0;
    if (argc > 64) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace record: too many arguments"));
    }
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1 || out == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace record: usage: halo trace record "
                                                      "PDIR -o TRACE"));
    }
    if (batch < 1 || epochs < 1 || epochs > 100000) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace record: --batch and --epochs must "
                                                      "be positive"));
    }
    int fanouts[HALO_MAX_LAYERS];
    int layers = halo_sample_parse_fanouts(fanout_s, fanouts, HALO_MAX_LAYERS);
    if (layers < 0) {
        return halo_cli_fail(layers);
    }
    double t0 = halo_now();
    orig_graph og;
    rc = orig_graph_load(pos[0], &og);
    if (rc != 0) {
        return halo_cli_fail(rc);
    }
    halo_trace_writer *w = NULL;
    rc = halo_trace_create(out, og.pi->parts, og.pi->feat_dim, og.pi->nodes, &w);
    int64_t nb = 0, ni = 0, nr = 0, nh = 0;
    if (rc == 0) {
        rc = record_trace(&og, w, fanouts, layers, batch, epochs, max_batches, (uint64_t)seed,
                          blocks, &nb, &ni, &nr, &nh);
    }
    if (rc == 0) {
        rc = halo_trace_close(w);
    } else {
        halo_trace_discard(w);
    }
    int parts = og.pi->parts;
    orig_graph_free(&og);
    if (rc != 0) {
        return halo_cli_fail(rc);
    }
    printf("halo: recorded %s: %d rank%s, %d epoch%s, %lld batches, %lld input nodes, %lld remote "
           "(%lld halo), %.2f s\n",
           out, parts, halo_plural(parts), epochs, halo_plural(epochs), (long long)nb,
           (long long)ni, (long long)nr, (long long)nh,
           halo_now() - t0);
    return 0;
}

/* ---- replay ---- */

/* The policies of `--policies all`, Belady first (the others are reported against it). */
static const char *const all_policies[] = {"belady", "pagraph", "vip",        "fifo",
                                           "lru",    "lfu",     "massivegnn", NULL};

/* A policy argument: a file path as given, or policies/NAME.lua (see halo_cli_policy_path). */
static void policy_path(const char *name, char *out, size_t size)
{
    const char *p = halo_cli_policy_path(name, out, size);
    if (p != out) {
        snprintf(out, size, "%s", p);
    }
}

/* The policies and capacities of `halo trace replay`. */
typedef struct replay_lists {
    char *pol_v[64];     /* policy files or names */
    int npol;            /* their number */
    double capv[64];     /* capacities, fractions of the halo set */
    int ncap;            /* their number (0: the policies' own) */
    char listbuf[2048];  /* the --policies text pol_v points into */
    char capbuf[1024];   /* the --capacities text */
} replay_lists;

/* --policy F or --policies all|LIST, and --capacities LIST, into l. */
static int replay_parse_lists(const char *policy, const char *policies, const char *caps,
                              replay_lists *l)
{
    l->npol = 0;
    l->ncap = 0;
    if (policy != NULL) {
        l->pol_v[l->npol++] = (char *)policy;
    } else if (strcmp(policies, "all") == 0) {
        for (int i = 0; all_policies[i] != NULL; i++) {
            l->pol_v[l->npol++] = (char *)all_policies[i];
        }
    } else {
        snprintf(l->listbuf, sizeof l->listbuf, "%s", policies);
        l->npol = halo_split_list(l->listbuf, "--policies", l->pol_v, 64);
        if (l->npol < 0) {
            return l->npol;
        }
    }
    if (caps != NULL) {
        snprintf(l->capbuf, sizeof l->capbuf, "%s", caps);
        char *cv[64];
        int n = halo_split_list(l->capbuf, "--capacities", cv, 64);
        if (n < 0) {
            return n;
        }
        for (int i = 0; i < n; i++) {
            int rc = halo_parse_f64(cv[i], "--capacities", &l->capv[l->ncap]);
            if (rc != 0) {
                return rc;
            }
            if (l->capv[l->ncap] < 0 || l->capv[l->ncap] > 1) {
                return halo_errorf(HALO_EUSAGE, "trace replay: capacity %s is not a fraction in "
                                   "[0, 1]", cv[i]);
            }
            l->ncap++;
        }
    }
    if (l->npol == 0) {
        return halo_errorf(HALO_EUSAGE, "trace replay: no policy given");
    }
    return 0;
}

/* Prints the trace's totals and the table's header; returns the bytes per row (row_bytes, or
 * 4 x the feature width when 0). */
static int64_t replay_summary(const char *file, const halo_trace *t, int64_t row_bytes)
{
    int64_t nb = 0, ni = 0, nr = 0, nh = 0, halo = 0;
    for (int r = 0; r < t->ranks; r++) {
        halo += t->rank[r].num_halo;
        for (int64_t k = 0; k < t->rank[r].batches; k++) {
            halo_trace_batch b;
            halo_trace_get_batch(t, r, k, &b);
            nb++;
            ni += b.n;
            for (int64_t i = 0; i < b.n; i++) {
                nr += (b.flags[i] & HALO_TRACE_F_REMOTE) != 0;
                nh += (b.flags[i] & HALO_TRACE_F_HALO) != 0;
            }
        }
    }
    int64_t rb = row_bytes > 0 ? row_bytes : 4 * (int64_t)t->feat_dim;
    printf("trace %s: %d rank%s, %lld batches, %lld input nodes, %lld remote (%lld halo), "
           "%lld halo nodes, %lld bytes per row; no cache pulls %.2f MB\n",
           file, t->ranks, halo_plural(t->ranks), (long long)nb, (long long)ni, (long long)nr,
           (long long)nh,
           (long long)halo, (long long)rb, (double)(nr * rb) / 1e6);
    printf("%-8s %-12s %9s %8s %9s %10s %7s %9s %8s %9s %10s %10s %10s\n", "capacity", "policy",
           "slots", "hit_rate", "of_belady", "remote_MB", "vs_none", "prefetch", "init_MB",
           "us/batch", "hits", "misses", "evicted");
    return rb;
}

/* Replays the trace through the policy pol at the capacity *cap (NULL: the policy's own) and
 * prints its row; *belady_rate is the rate of belady at this capacity once it has run. */
static int replay_row(const halo_trace *t, const char *pol, const double *cap,
                      const halo_strlist *sets, bool unsafe, int64_t rb, double *belady_rate)
{
    char path[4096], capset[64];
    policy_path(pol, path, sizeof path);
    const char *setv[70];
    int nset = 0;
    if (cap != NULL) {
        snprintf(capset, sizeof capset, "f=%.17g", *cap);
        setv[nset++] = capset;
    }
    for (int i = 0; i < sets->n && nset < 70; i++) {
        setv[nset++] = sets->v[i];
    }
    halo_policy_opts po = {
        .path = path, .params = setv, .nparams = nset, .unsafe = unsafe, .rank = 0};
    halo_trace_result res;
    int rc = halo_trace_replay(t, &po, rb, &res);
    if (rc != 0) {
        return rc;
    }
    double rate = halo_cache_hit_rate(&res.stats);
    if (strstr(path, "belady") != NULL) {
        *belady_rate = rate;
    }
    char capcol[32], ofb[32];
    if (cap != NULL) {
        snprintf(capcol, sizeof capcol, "%.3g", *cap);
    } else {
        snprintf(capcol, sizeof capcol, "-");
    }
    if (*belady_rate > 0) {
        snprintf(ofb, sizeof ofb, "%.3f", rate / *belady_rate);
    } else {
        snprintf(ofb, sizeof ofb, "-");
    }
    double mb = (double)res.stats.bytes_pulled / 1e6;
    double none = res.bytes_nocache > 0
                      ? (double)res.stats.bytes_pulled / (double)res.bytes_nocache
                      : 0;
    const char *nm = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(nm) > 4 ? strlen(nm) - 4 : strlen(nm)), nm);
    printf("%-8s %-12s %9lld %8.4f %9s %10.2f %7.3f %9lld %8.2f %9.1f %10lld %10lld "
           "%10lld\n",
           capcol, name, (long long)res.capacity, rate, ofb, mb, none,
           (long long)res.stats.prefetched, (double)res.stats.bytes_init / 1e6,
           res.batches > 0 ? 1e6 * res.policy_s / (double)res.batches : 0.0,
           (long long)res.stats.hits, (long long)res.stats.misses,
           (long long)res.stats.evicted);
    fflush(stdout);
    return 0;
}

/* `halo trace replay`: a trace through each policy at each capacity, a row each. */
static int trace_replay(int argc, char **argv)
{
    const char *policy = NULL, *policies = NULL, *caps = NULL;
    halo_strlist sets = {.n = 0};
    bool unsafe = false;
    int64_t row_bytes = 0;
    const halo_opt opts[] = {
        {"policy", 0, HALO_OPT_STRING, &policy, "F", "policy file (or name in policies/)"},
        {"policies", 0, HALO_OPT_STRING, &policies, "LIST",
         "comma list of policies, or all (belady,pagraph,vip,fifo,lru,lfu,massivegnn)"},
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"capacities", 0, HALO_OPT_STRING, &caps, "LIST",
         "capacities as fractions of the halo set (sets f=X), e.g. 0.05,0.1,0.25,0.5"},
        {"row-bytes", 0, HALO_OPT_I64, &row_bytes, "N", "bytes per feature row (0: 4 x feat_dim)"},
        {"unsafe", 0, HALO_OPT_FLAG, &unsafe, NULL, "open the full Lua library (trusted)"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "halo trace replay TRACE (--policy F | --policies all|LIST) [--capacities LIST] "
        "[--set NAME=VALUE ...]",
        "Replays an access trace through cache policies without training: for each policy and\n"
        "capacity, the hit rate over halo nodes (MassiveGNN's definition; the hits, misses and\n"
        "evicted slots it comes from are the last three columns), its fraction of\n"
        "Belady's (the offline optimum) at the same capacity, the remote megabytes pulled per\n"
        "batch (misses, non-halo remote nodes, prefetched rows) against no cache, and the\n"
        "policy's cost per batch. TRACE may be FILE or the per-rank FILE.r0.. of a run.",
    };
    char *pos[64];
    int npos = 0;
    if (argc > 64) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace replay: too many arguments"));
    }
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (sets.n > 0 && policy == NULL && policies == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace replay: --set needs --policy or "
                                                      "--policies"));
    }
    if (npos != 1 || (policy == NULL) == (policies == NULL)) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "trace replay: usage: halo trace replay "
                                                      "TRACE (--policy F | --policies LIST)"));
    }
    replay_lists l;
    rc = replay_parse_lists(policy, policies, caps, &l);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_trace *t = NULL;
    rc = halo_trace_load(pos[0], &t);
    if (rc != 0) {
        return halo_cli_fail(rc);
    }
    int64_t rb = replay_summary(pos[0], t, row_bytes);
    int nc = l.ncap > 0 ? l.ncap : 1;
    for (int ci = 0; ci < nc && rc == 0; ci++) {
        double belady_rate = -1;
        for (int pi = 0; pi < l.npol && rc == 0; pi++) {
            rc = replay_row(t, l.pol_v[pi], l.ncap > 0 ? &l.capv[ci] : NULL, &sets, unsafe, rb,
                            &belady_rate);
        }
    }
    halo_trace_free(t);
    if (rc != 0) {
        return halo_cli_fail(rc);
    }
    return 0;
}

int halo_cmd_trace(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: halo trace record PDIR -o TRACE [flags]\n"
                   "       halo trace replay TRACE (--policy F | --policies all|LIST) [flags]\n"
                   "(halo trace record --help, halo trace replay --help for the flags)\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "record") == 0) {
        return trace_record(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "replay") == 0) {
        return trace_replay(argc - 1, argv + 1);
    }
    return halo_cli_fail(halo_errorf(HALO_EUSAGE,
                                     "trace: unknown subcommand '%s' (record, "
                                     "replay)",
                                     argv[1]));
}
