/* Unit tests of runtime/cache: the mechanism (capacity, byte-identical rows), the policies in
 * policies/ against slow references written here from their specifications (MassiveGNN from
 * docs/massivegnn.md; LRU, FIFO, LFU from docs/cache.md), Belady's bound, the
 * trace format and the inclusion probabilities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache/cache.h"
#include "cache/trace.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "graph/graph.h"
#include "policy/policy.h"
#include "sample/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXB 400 /* batches per test trace at most */

/* A rank's access trace as the references see it: the halo set and, per batch, the remote ids
 * (distinct; some are not halo nodes). */
typedef struct ttrace {
    int64_t nh;         /* halo nodes */
    int32_t *hids;      /* [nh] sorted */
    int32_t *hdeg;      /* [nh] */
    int nb;             /* batches */
    int64_t n[MAXB];    /* remote ids per batch */
    int32_t *ids[MAXB]; /* [n[b]] */
} ttrace;

static void ttrace_free(ttrace *t)
{
    free(t->hids);
    free(t->hdeg);
    for (int b = 0; b < t->nb; b++) {
        free(t->ids[b]);
    }
    memset(t, 0, sizeof *t);
}

/* Position of id in the halo set, -1 when absent (linear: the slow, obvious way). */
static int64_t ref_pos(const ttrace *t, int32_t id)
{
    for (int64_t h = 0; h < t->nh; h++) {
        if (t->hids[h] == id) {
            return h;
        }
    }
    return -1;
}

/* A random trace: nh halo ids (every third id), skewed accesses, plus non-halo remote ids. */
static void random_trace(ttrace *t, int64_t nh, int nb, int per_batch, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->nh = nh;
    t->hids = malloc((size_t)nh * sizeof(int32_t));
    t->hdeg = malloc((size_t)nh * sizeof(int32_t));
    halo_rng r;
    halo_rng_init(&r, seed, HALO_RNG_TEST, 1, 0, 0);
    for (int64_t h = 0; h < nh; h++) {
        t->hids[h] = (int32_t)(3 * h + 1);
        t->hdeg[h] = (int32_t)(1 + halo_rng_below(&r, 50));
    }
    uint8_t *seen = calloc((size_t)(3 * nh + 10), 1);
    t->nb = nb;
    for (int b = 0; b < nb; b++) {
        t->ids[b] = malloc((size_t)(per_batch + 8) * sizeof(int32_t));
        memset(seen, 0, (size_t)(3 * nh + 10));
        int64_t m = 0;
        for (int k = 0; k < per_batch; k++) {
            /* skew: squares of uniforms favour low positions */
            double u = halo_rng_uniform(&r);
            int64_t h = (int64_t)(u * u * (double)nh);
            int32_t id = halo_rng_below(&r, 10) == 0 ? (int32_t)(3 * h + 2) : t->hids[h];
            if (!seen[id]) {
                seen[id] = 1;
                t->ids[b][m++] = id;
            }
        }
        t->n[b] = m;
    }
    free(seen);
}

/* Feature row of a node: bits that depend on id and column. */
#define DIM 5
static void src_row(int32_t id, float *row)
{
    for (int j = 0; j < DIM; j++) {
        row[j] = (float)(halo_mix64((uint64_t)id * 16 + (uint64_t)j) >> 40) / 1024.0f;
    }
}

static void policy_path(const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/policies/%s.lua", HALO_ROOT, name);
}

/* Runs a trace through the real mechanism and a policy, keeping rows; checks at every batch that
 * the cache holds at most capacity distinct nodes, that every served and every cached row is
 * byte-identical to its source, and records per-batch hits and the prefetch count. */
static void run_policy(const ttrace *t, const char *name, const char *const *sets, int nsets,
                       int64_t *hits, int64_t *total_hits, int64_t *prefetched)
{
    char path[4096];
    policy_path(name, path, sizeof path);
    halo_policy_opts po = {.path = path, .params = sets, .nparams = nsets, .rank = 0};
    halo_policy *pol = NULL;
    int rc = halo_policy_open(&po, &pol);
    if (rc != 0) {
        fail_msg("open %s: %s", path, halo_errmsg());
    }
    halo_cache_future *f = halo_cache_future_new();
    for (int b = 0; b < t->nb; b++) {
        halo_cache_future_add(f, t->ids[b], t->n[b]);
    }
    double *vip = malloc((size_t)t->nh * sizeof(double));
    for (int64_t h = 0; h < t->nh; h++) {
        vip[h] = 1.0 / (1.0 + (double)h); /* a static preference for low positions */
    }
    halo_cache_opts co = {.policy = pol,
                          .ranks = 1,
                          .num_halo = t->nh,
                          .halo_ids = t->hids,
                          .halo_deg = t->hdeg,
                          .vip = vip,
                          .feat_dim = DIM,
                          .batches = t->nb,
                          .epochs = 1};
    halo_cache *c = NULL;
    rc = halo_cache_open(&co, f, &c);
    if (rc != 0) {
        fail_msg("cache open %s: %s", name, halo_errmsg());
    }
    const int32_t *init;
    int64_t ni = halo_cache_init_ids(c, &init);
    float *irows = malloc((size_t)(ni + 1) * DIM * sizeof(float));
    for (int64_t i = 0; i < ni; i++) {
        src_row(init[i], irows + i * DIM);
    }
    assert_int_equal(halo_cache_init_fill(c, irows), 0);
    free(irows);
    int64_t cap = halo_cache_capacity(c);
    float want[DIM];
    for (int b = 0; b < t->nb; b++) {
        int64_t m = t->n[b];
        float *rows = malloc((size_t)(m + 1) * DIM * sizeof(float));
        int64_t *rpos = malloc((size_t)(m + 1) * sizeof(int64_t));
        uint8_t *served = malloc((size_t)m + 1);
        for (int64_t i = 0; i < m; i++) {
            rpos[i] = i;
            memset(rows + i * DIM, 0xee, DIM * sizeof(float));
        }
        int64_t h0 = halo_cache_stats_get(c)->hits;
        halo_cache_batch cb = {0, b, b, 0, NULL};
        assert_int_equal(halo_cache_lookup(c, &cb, m, t->ids[b], rpos, rows, served), 0);
        for (int64_t i = 0; i < m; i++) {
            src_row(t->ids[b][i], want);
            if (served[i]) {
                assert_memory_equal(rows + i * DIM, want, sizeof want);
            } else {
                memcpy(rows + i * DIM, want, sizeof want); /* the pull */
            }
        }
        hits[b] = halo_cache_stats_get(c)->hits - h0;
        const int32_t *extra;
        int64_t ne;
        rc = halo_cache_decide(c, &extra, &ne);
        if (rc != 0) {
            fail_msg("decide %s batch %d: %s", name, b, halo_errmsg());
        }
        float *er = malloc((size_t)(ne + 1) * DIM * sizeof(float));
        for (int64_t i = 0; i < ne; i++) {
            src_row(extra[i], er + i * DIM);
        }
        assert_int_equal(halo_cache_admit(c, rows, er), 0);
        free(er);
        /* capacity and rows */
        assert_true(halo_cache_used(c) <= cap);
        int64_t used = 0;
        for (int64_t s = 0; s < cap; s++) {
            int32_t id = halo_cache_slot_id(c, s);
            if (id < 0) {
                continue;
            }
            used++;
            assert_int_equal(halo_cache_find(c, id), s); /* one slot per id */
            src_row(id, want);
            assert_memory_equal(halo_cache_slot_row(c, s), want, sizeof want);
        }
        assert_int_equal(used, halo_cache_used(c));
        free(rows);
        free(rpos);
        free(served);
    }
    *total_hits = halo_cache_stats_get(c)->hits;
    *prefetched = halo_cache_stats_get(c)->prefetched;
    halo_cache_close(c);
    halo_policy_close(pol);
    free(vip);
}

/* ---- references, written from the specifications ---- */

/* MassiveGNN (massivegnn.md), one batch at a time, scores in float32; c = batches since the
 * start. */
static void ref_massivegnn(const ttrace *t, double f, double alpha, int delta, bool random_init,
                           int64_t *hits)
{
    int64_t nh = t->nh, k = (int64_t)floor(f * (double)nh);
    int32_t *buf = malloc((size_t)(k + 1) * sizeof(int32_t)); /* slot -> halo position */
    float *SE = malloc((size_t)(k + 1) * sizeof(float)); /* float32, as the authors' arrays */
    float *SN = calloc((size_t)nh, sizeof(float));
    uint8_t *taken = calloc((size_t)nh, 1);
    /* initial fill: the k highest in-degrees (or random keys of rank 0, seed 1), ties to the
     * lower position (selection) */
    double *key = malloc((size_t)(nh + 1) * sizeof(double));
    for (int64_t h = 0; h < nh; h++) {
        uint64_t z = halo_mix64(halo_mix64(1) ^ ((uint64_t)0 << 32) ^ (uint64_t)h) >> 11;
        key[h] = random_init ? (double)z : (double)t->hdeg[h];
    }
    for (int64_t s = 0; s < k; s++) {
        int64_t best = -1;
        for (int64_t h = 0; h < nh; h++) {
            if (!taken[h] && (best < 0 || key[h] > key[best])) {
                best = h;
            }
        }
        if (best < 0) {
            break;
        }
        taken[best] = 1;
        buf[s] = (int32_t)best;
        SE[s] = 1.0;
        SN[best] = -1;
    }
    float d = (float)(1 - alpha);
    char txt[32]; /* Python's round(x, 3): from the exact value of the double 1 - alpha */
    snprintf(txt, sizeof txt, "%.3f", pow(1 - alpha, delta));
    float T = (float)strtod(txt, NULL); /* compared in float32 */
    bool statik = alpha == 0 && delta == 0;
    int32_t *missed = malloc((size_t)nh * sizeof(int32_t));
    int64_t *E = malloc((size_t)(k + 1) * sizeof(int64_t));
    int64_t *R = malloc((size_t)(k + 1) * sizeof(int64_t));
    for (int c = 0; c < t->nb; c++) {
        for (int64_t s = 0; s < k; s++) {
            SE[s] *= d;
        }
        int64_t nm = 0;
        hits[c] = 0;
        for (int64_t i = 0; i < t->n[c]; i++) {
            int64_t h = ref_pos(t, t->ids[c][i]);
            if (h < 0) {
                continue;
            }
            int64_t slot = -1;
            for (int64_t s = 0; s < k; s++) {
                if (buf[s] == h) {
                    slot = s;
                }
            }
            if (slot >= 0) {
                hits[c]++;
                SE[slot] /= d;
            } else {
                missed[nm++] = (int32_t)h;
            }
        }
        if (statik) {
            continue;
        }
        int64_t ne = 0; /* candidates in ascending node id (= halo position) */
        for (int64_t h = 0; h < nh; h++) {
            for (int64_t s = 0; s < k; s++) {
                if (buf[s] == h && SE[s] < T) {
                    E[ne++] = s;
                }
            }
        }
        if (delta > 0 && (c + 1) % delta == 0 && ne > 0) { /* batches counted from 1 */
            /* replacements R: S_N > 0, highest first, ties to the lower position, chosen
             * before any slot changes; then the first n slots of E take the top n of R */
            int64_t nr = 0;
            uint8_t *inR = calloc((size_t)nh, 1);
            for (int64_t i = 0; i < ne; i++) {
                int64_t best = -1;
                for (int64_t h = 0; h < nh; h++) {
                    if (!inR[h] && SN[h] > 0 && (best < 0 || SN[h] > SN[best])) {
                        best = h;
                    }
                }
                if (best < 0) {
                    break;
                }
                inR[best] = 1;
                R[nr++] = best;
            }
            for (int64_t i = 0; i < nr; i++) {
                int64_t s = E[i];
                SN[buf[s]] = SE[s];
                SE[s] = SN[R[i]];
                SN[R[i]] = -1;
                buf[s] = (int32_t)R[i];
            }
            free(inR);
        } else {
            for (int64_t i = 0; i < nm; i++) {
                SN[missed[i]] += 1;
            }
        }
    }
    free(key);
    free(buf);
    free(SE);
    free(SN);
    free(taken);
    free(missed);
    free(E);
    free(R);
}

/* Demand LRU / FIFO (docs/cache.md): admit this batch's misses (the first C, input order), evict
 * occupied slots of lowest key (LRU: max(last hit, insertion); FIFO: insertion), ties to the lower
 * slot, the k-th evicted slot taking the k-th miss, then empty slots in order. */
static void ref_recency(const ttrace *t, double f, bool lru, int64_t *hits)
{
    int64_t C = (int64_t)floor(f * (double)t->nh);
    int32_t *id = malloc((size_t)(C + 1) * sizeof(int32_t));
    int64_t *last = malloc((size_t)(C + 1) * sizeof(int64_t));
    int64_t *ins = malloc((size_t)(C + 1) * sizeof(int64_t));
    uint8_t *gone = malloc((size_t)C + 1);
    int32_t *miss = malloc(4096 * sizeof(int32_t));
    for (int64_t s = 0; s < C; s++) {
        id[s] = -1;
    }
    for (int b = 0; b < t->nb; b++) {
        int64_t nm = 0;
        hits[b] = 0;
        for (int64_t i = 0; i < t->n[b]; i++) {
            int32_t v = t->ids[b][i];
            if (ref_pos(t, v) < 0) {
                continue;
            }
            int64_t slot = -1;
            for (int64_t s = 0; s < C; s++) {
                if (id[s] == v) {
                    slot = s;
                }
            }
            if (slot >= 0) {
                hits[b]++;
                last[slot] = b;
            } else {
                miss[nm++] = v;
            }
        }
        int64_t n = nm < C ? nm : C, used = 0;
        for (int64_t s = 0; s < C; s++) {
            used += id[s] >= 0;
        }
        int64_t need = n - (C - used);
        int64_t next = 0;
        memset(gone, 0, (size_t)C + 1);
        /* victims first (in order of selection), then empty slots */
        int64_t *target = malloc((size_t)(n + 1) * sizeof(int64_t));
        for (int64_t k = 0; k < need; k++) {
            int64_t best = -1, bestkey = 0;
            for (int64_t s = 0; s < C; s++) {
                if (id[s] < 0 || gone[s]) {
                    continue;
                }
                int64_t key = lru ? (last[s] > ins[s] ? last[s] : ins[s]) : ins[s];
                if (best < 0 || key < bestkey) {
                    best = s;
                    bestkey = key;
                }
            }
            if (best < 0) {
                break;
            }
            gone[best] = 1;
            target[next++] = best;
        }
        for (int64_t s = 0; s < C && next < n; s++) {
            if (id[s] < 0) {
                target[next++] = s;
            }
        }
        for (int64_t k = 0; k < n; k++) {
            id[target[k]] = miss[k];
            last[target[k]] = -1;
            ins[target[k]] = b;
        }
        free(target);
    }
    free(id);
    free(last);
    free(ins);
    free(gone);
    free(miss);
}

/* Perfect LFU (docs/cache.md): counts of all accesses per node; keep the C highest-count nodes
 * among cached and missed; drop the lowest counts, candidates listed misses then occupied slots,
 * ties dropping the earlier candidate; admitted misses take the dropped slots in slot order, then
 * empty slots in order. */
static void ref_lfu(const ttrace *t, double f, int64_t *hits)
{
    int64_t C = (int64_t)floor(f * (double)t->nh);
    int32_t *id = malloc((size_t)(C + 1) * sizeof(int32_t));
    int64_t *cnt = calloc((size_t)1 << 16, sizeof(int64_t)); /* by id (ids < 2^16 here) */
    int32_t *miss = malloc(4096 * sizeof(int32_t));
    int64_t *cv = malloc((4096 + (size_t)C) * sizeof(int64_t));
    int32_t *cs = malloc((4096 + (size_t)C) * sizeof(int32_t)); /* -1-miss index or slot */
    uint8_t *drop = malloc(4096 + (size_t)C);
    for (int64_t s = 0; s < C; s++) {
        id[s] = -1;
    }
    for (int b = 0; b < t->nb; b++) {
        int64_t nm = 0;
        hits[b] = 0;
        for (int64_t i = 0; i < t->n[b]; i++) {
            int32_t v = t->ids[b][i];
            if (ref_pos(t, v) < 0) {
                continue;
            }
            cnt[v]++;
            int64_t slot = -1;
            for (int64_t s = 0; s < C; s++) {
                if (id[s] == v) {
                    slot = s;
                }
            }
            if (slot >= 0) {
                hits[b]++;
            } else {
                miss[nm++] = v;
            }
        }
        if (nm == 0 || C == 0) {
            continue;
        }
        int64_t n = 0;
        for (int64_t k = 0; k < nm; k++) {
            cv[n] = cnt[miss[k]];
            cs[n++] = (int32_t)(-1 - k);
        }
        for (int64_t s = 0; s < C; s++) {
            if (id[s] >= 0) {
                cv[n] = cnt[id[s]];
                cs[n++] = (int32_t)s;
            }
        }
        int64_t excess = n - C;
        memset(drop, 0, (size_t)n);
        for (int64_t k = 0; k < excess; k++) {
            int64_t best = -1;
            for (int64_t j = 0; j < n; j++) {
                if (!drop[j] && (best < 0 || cv[j] < cv[best])) {
                    best = j;
                }
            }
            if (best < 0) {
                break;
            }
            drop[best] = 1;
        }
        /* free the dropped slots, then fill evicted slots (slot order) and empty ones */
        uint8_t *was_evicted = calloc((size_t)C + 1, 1);
        for (int64_t j = 0; j < n; j++) {
            if (drop[j] && cs[j] >= 0) {
                was_evicted[cs[j]] = 1;
            }
        }
        int64_t *target = malloc((size_t)(C + 1) * sizeof(int64_t));
        int64_t nt = 0;
        for (int64_t s = 0; s < C; s++) {
            if (was_evicted[s]) {
                target[nt++] = s;
            }
        }
        for (int64_t s = 0; s < C; s++) {
            if (id[s] < 0) {
                target[nt++] = s;
            }
        }
        int64_t k2 = 0;
        for (int64_t j = 0; j < nm; j++) {
            if (!drop[j]) {
                id[target[k2++]] = miss[-1 - cs[j]];
            }
        }
        free(was_evicted);
        free(target);
    }
    free(id);
    free(cnt);
    free(miss);
    free(cv);
    free(cs);
    free(drop);
}

/* Static top in-degree (PaGraph): hits = cached halo accesses. */
static void ref_static_degree(const ttrace *t, double f, int64_t *hits)
{
    int64_t k = (int64_t)floor(f * (double)t->nh);
    uint8_t *in = calloc((size_t)t->nh, 1);
    for (int64_t s = 0; s < k; s++) {
        int64_t best = -1;
        for (int64_t h = 0; h < t->nh; h++) {
            if (!in[h] && (best < 0 || t->hdeg[h] > t->hdeg[best])) {
                best = h;
            }
        }
        if (best < 0) {
            break;
        }
        in[best] = 1;
    }
    for (int b = 0; b < t->nb; b++) {
        hits[b] = 0;
        for (int64_t i = 0; i < t->n[b]; i++) {
            int64_t h = ref_pos(t, t->ids[b][i]);
            hits[b] += h >= 0 && in[h];
        }
    }
    free(in);
}

/* ---- a recorded trace: sampled over a small graph, written and read back ---- */

/* A random graph of n nodes (in-edge CSR, skewed sources), owned in P contiguous ranges; the
 * trace of rank `rank` (batches of its own nodes as seeds, fanouts 3,5) goes through the trace
 * writer and reader, then into t. */
static void recorded_trace(ttrace *t, int rank, int epochs, const char *path)
{
    const int64_t n = 3000, P = 3, per = n / P;
    halo_graph *g = halo_graph_alloc(n, n * 8, 0, 2, 0);
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 2, 0, 0);
    int64_t e = 0;
    for (int64_t v = 0; v < n; v++) {
        g->indptr[v] = e;
        int64_t deg = 2 + (int64_t)halo_rng_below(&r, 13);
        for (int64_t k = 0; k < deg && e < n * 8; k++) {
            double u = halo_rng_uniform(&r);
            int32_t s = (int32_t)(u * u * (double)n);
            if (s != v) {
                g->indices[e++] = s;
            }
        }
    }
    g->indptr[n] = e;
    g->edges = e;
    /* halo set of the rank: sources of its nodes' in-edges owned elsewhere; in-degrees */
    int64_t lo = rank * per, hi = lo + per;
    uint8_t *is_halo = calloc((size_t)n, 1);
    for (int64_t v = lo; v < hi; v++) {
        for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
            int32_t s = g->indices[j];
            if (s < lo || s >= hi) {
                is_halo[s] = 1;
            }
        }
    }
    int64_t nh = 0;
    for (int64_t v = 0; v < n; v++) {
        nh += is_halo[v];
    }
    int32_t *hids = malloc((size_t)nh * sizeof(int32_t)), *hdeg = malloc((size_t)nh * 4);
    nh = 0;
    for (int64_t v = 0; v < n; v++) {
        if (is_halo[v]) {
            hdeg[nh] = (int32_t)(g->indptr[v + 1] - g->indptr[v]);
            hids[nh++] = (int32_t)v;
        }
    }
    halo_trace_writer *w = NULL;
    assert_int_equal(halo_trace_create(path, (int)P, DIM, n, &w), 0);
    assert_int_equal(halo_trace_put_halo(w, rank, nh, hids, hdeg, NULL, NULL), 0);
    halo_sampler *smp = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int fan[2] = {3, 5};
    int32_t seeds[100];
    for (int ep = 0; ep < epochs; ep++) {
        for (int64_t b = 0; b < per / 100; b++) {
            for (int i = 0; i < 100; i++) {
                seeds[i] = (int32_t)(lo + (b * 100 + i * 7 + ep * 31) % per);
            }
            /* distinct seeds: i*7 mod per is a bijection on 0..99 for per = 1000 */
            halo_sample_key k = {1, ep, b};
            assert_int_equal(halo_sample_graph(smp, g, fan, 2, &k, seeds, 100, &mb), 0);
            uint8_t *fl = malloc((size_t)mb.num_input);
            for (int32_t i = 0; i < mb.num_input; i++) {
                int32_t v = mb.input[i];
                fl[i] = (v < lo || v >= hi) ? HALO_TRACE_F_REMOTE : 0;
                if (v >= 0 && is_halo[v]) {
                    fl[i] |= HALO_TRACE_F_HALO;
                }
            }
            assert_int_equal(halo_trace_put_batch(w, rank, ep, b, mb.num_input, mb.input, fl), 0);
            free(fl);
        }
    }
    assert_int_equal(halo_trace_close(w), 0);
    halo_sample_free(&mb);
    halo_sampler_free(smp);
    halo_graph_free(g);
    free(is_halo);

    halo_trace *tr = NULL;
    assert_int_equal(halo_trace_load(path, &tr), 0);
    assert_int_equal(tr->ranks, P);
    const halo_trace_rank *rk = &tr->rank[rank];
    assert_int_equal(rk->num_halo, nh);
    assert_memory_equal(rk->halo_ids, hids, (size_t)nh * 4);
    memset(t, 0, sizeof *t);
    t->nh = nh;
    t->hids = hids;
    t->hdeg = hdeg;
    t->nb = (int)rk->batches;
    assert_true(t->nb <= MAXB);
    for (int b = 0; b < t->nb; b++) {
        halo_trace_batch bb;
        halo_trace_get_batch(tr, rank, b, &bb);
        t->ids[b] = malloc((size_t)(bb.n + 1) * sizeof(int32_t));
        int64_t m = 0;
        for (int64_t i = 0; i < bb.n; i++) {
            if (bb.flags[i] & HALO_TRACE_F_REMOTE) {
                t->ids[b][m++] = bb.ids[i];
            }
        }
        t->n[b] = m;
    }
    halo_trace_free(tr);
}

/* ---- tests ---- */

static void assert_hits_equal(const int64_t *got, const int64_t *want, int nb, const char *what)
{
    for (int b = 0; b < nb; b++) {
        if (got[b] != want[b]) {
            fail_msg("%s: batch %d: %lld hits, reference %lld", what, b, (long long)got[b],
                     (long long)want[b]);
        }
    }
}

static void massivegnn_case_init(const ttrace *t, double f, double alpha, int delta,
                                 bool random_init)
{
    char sf[64], sa[64], sd[64], what[128];
    snprintf(sf, sizeof sf, "f=%.17g", f);
    snprintf(sa, sizeof sa, "alpha=%.17g", alpha);
    snprintf(sd, sizeof sd, "delta=%d", delta);
    const char *sets[] = {sf, sa, sd, "init=random"};
    int64_t got[MAXB], want[MAXB], tot, pf;
    run_policy(t, "massivegnn", sets, random_init ? 4 : 3, got, &tot, &pf);
    ref_massivegnn(t, f, alpha, delta, random_init, want);
    snprintf(what, sizeof what, "massivegnn f=%g alpha=%g delta=%d init=%s", f, alpha, delta,
             random_init ? "random" : "degree");
    assert_hits_equal(got, want, t->nb, what);
}

static void massivegnn_case(const ttrace *t, double f, double alpha, int delta)
{
    massivegnn_case_init(t, f, alpha, delta, false);
}

static void massivegnn_matches_reference_batch_by_batch(void **state)
{
    (void)state;
    ttrace t;
    random_trace(&t, 300, 60, 120, 11);
    massivegnn_case(&t, 0.25, 0.05, 25);
    massivegnn_case(&t, 0.25, 0.05, 3);
    massivegnn_case(&t, 0.1, 0.2, 2);
    massivegnn_case(&t, 0.5, 0.005, 4);
    massivegnn_case(&t, 0.25, 0, 0);
    massivegnn_case_init(&t, 0.25, 0.05, 3, true); /* random initial fill */
    massivegnn_case_init(&t, 0.1, 0, 0, true);
    ttrace_free(&t);
    char path[] = "/tmp/halo-test-cache-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    recorded_trace(&t, 1, 3, path);
    massivegnn_case(&t, 0.25, 0.05, 25);
    massivegnn_case(&t, 0.25, 0.1, 2);
    massivegnn_case(&t, 0.5, 0.02, 5);
    massivegnn_case(&t, 0.1, 0.3, 1);
    massivegnn_case_init(&t, 0.25, 0.1, 2, true);
    ttrace_free(&t);
    unlink(path);
}

static void classic_policies_match_slow_references(void **state)
{
    (void)state;
    char path[] = "/tmp/halo-test-cache-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (int which = 0; which < 2; which++) {
        ttrace t;
        if (which == 0) {
            random_trace(&t, 240, 50, 90, 5);
        } else {
            recorded_trace(&t, 0, 2, path);
        }
        const double fr[] = {0.05, 0.25, 0.5};
        for (int i = 0; i < 3; i++) {
            char sf[64], what[128];
            snprintf(sf, sizeof sf, "f=%.17g", fr[i]);
            const char *sets[] = {sf};
            int64_t got[MAXB], want[MAXB], tot, pf;
            run_policy(&t, "lru", sets, 1, got, &tot, &pf);
            ref_recency(&t, fr[i], true, want);
            snprintf(what, sizeof what, "lru f=%g trace %d", fr[i], which);
            assert_hits_equal(got, want, t.nb, what);
            run_policy(&t, "fifo", sets, 1, got, &tot, &pf);
            ref_recency(&t, fr[i], false, want);
            snprintf(what, sizeof what, "fifo f=%g trace %d", fr[i], which);
            assert_hits_equal(got, want, t.nb, what);
            run_policy(&t, "lfu", sets, 1, got, &tot, &pf);
            ref_lfu(&t, fr[i], want);
            snprintf(what, sizeof what, "lfu f=%g trace %d", fr[i], which);
            assert_hits_equal(got, want, t.nb, what);
            run_policy(&t, "pagraph", sets, 1, got, &tot, &pf);
            ref_static_degree(&t, fr[i], want);
            snprintf(what, sizeof what, "pagraph f=%g trace %d", fr[i], which);
            assert_hits_equal(got, want, t.nb, what);
        }
        ttrace_free(&t);
    }
    unlink(path);
}

/* Belady keeps at least as many hits as every demand policy, and no policy gets more than
 * Belady's hits without paying for them in prefetched rows (hits - prefetched <= Belady's). */
static void belady_bounds_every_policy(void **state)
{
    (void)state;
    char path[] = "/tmp/halo-test-cache-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    const char *names[] = {"pagraph", "vip", "fifo", "lru", "lfu", "massivegnn"};
    for (int which = 0; which < 2; which++) {
        ttrace t;
        if (which == 0) {
            random_trace(&t, 300, 60, 120, 21);
        } else {
            recorded_trace(&t, 2, 3, path);
        }
        const double fr[] = {0.05, 0.1, 0.25, 0.5};
        for (int i = 0; i < 4; i++) {
            char sf[64];
            snprintf(sf, sizeof sf, "f=%.17g", fr[i]);
            const char *sets[] = {sf, "delta=2", "alpha=0.2"};
            int64_t per[MAXB], bel, pf, other, opf;
            run_policy(&t, "belady", sets, 1, per, &bel, &pf);
            assert_int_equal(pf, 0);
            for (int p = 0; p < 6; p++) {
                int ns = strcmp(names[p], "massivegnn") == 0 ? 3 : 1;
                run_policy(&t, names[p], sets, ns, per, &other, &opf);
                if (other - opf > bel) {
                    fail_msg("trace %d f=%g: %s has %lld hits (%lld prefetched), Belady %lld",
                             which, fr[i], names[p], (long long)other, (long long)opf,
                             (long long)bel);
                }
            }
        }
        ttrace_free(&t);
    }
    unlink(path);
}

/* Belady equals the exhaustive optimum on tiny traces: every reachable cache content per batch
 * (subsets of cached + missed of size <= C), free initial fill, admissions from misses only. */
static int64_t memo[8][256];

static int64_t brute_best(const int32_t *seq, const int *len, int nb, int b, uint32_t cache, int C)
{
    if (b == nb) {
        return 0;
    }
    if (memo[b][cache] >= 0) {
        return memo[b][cache];
    }
    uint32_t acc = 0;
    for (int i = 0; i < len[b]; i++) {
        acc |= 1u << seq[b * 8 + i];
    }
    int64_t h = __builtin_popcount(acc & cache);
    uint32_t cand = cache | acc;
    int64_t bestv = -1;
    /* every subset of cand with at most C members */
    for (uint32_t s = cand;; s = (s - 1) & cand) {
        if (__builtin_popcount(s) <= C) {
            int64_t v = brute_best(seq, len, nb, b + 1, s, C);
            bestv = v > bestv ? v : bestv;
        }
        if (s == 0) {
            break;
        }
    }
    memo[b][cache] = h + bestv;
    return h + bestv;
}

static void belady_equals_exhaustive_optimum_on_tiny_traces(void **state)
{
    (void)state;
    for (int trial = 0; trial < 6; trial++) {
        ttrace t;
        memset(&t, 0, sizeof t);
        t.nh = 8;
        t.hids = malloc(8 * sizeof(int32_t));
        t.hdeg = malloc(8 * sizeof(int32_t));
        for (int h = 0; h < 8; h++) {
            t.hids[h] = h;
            t.hdeg[h] = 1;
        }
        halo_rng r;
        halo_rng_init(&r, 3, HALO_RNG_TEST, 3, (uint64_t)trial, 0);
        t.nb = 7;
        int32_t seq[7 * 8];
        int len[7];
        for (int b = 0; b < t.nb; b++) {
            uint32_t m = (uint32_t)halo_rng_below(&r, 255) + 1;
            t.ids[b] = malloc(8 * sizeof(int32_t));
            t.n[b] = 0;
            for (int h = 0; h < 8; h++) {
                if ((m >> h) & 1 && halo_rng_below(&r, 2)) {
                    t.ids[b][t.n[b]] = h;
                    seq[b * 8 + t.n[b]] = h;
                    t.n[b]++;
                }
            }
            len[b] = (int)t.n[b];
        }
        /* fraction 3/8 -> 3 slots; the free initial fill is any subset of size <= 3 */
        int64_t opt = -1;
        memset(memo, 0xff, sizeof memo);
        for (uint32_t s = 0; s < 256; s++) {
            if (__builtin_popcount(s) <= 3) {
                int64_t v = brute_best(seq, len, t.nb, 0, s, 3);
                opt = v > opt ? v : opt;
            }
        }
        const char *sets[] = {"f=0.375"};
        int64_t per[MAXB], bel, pf;
        run_policy(&t, "belady", sets, 1, per, &bel, &pf);
        assert_int_equal(bel, opt);
        ttrace_free(&t);
    }
}

static void trace_rejects_bad_files(void **state)
{
    (void)state;
    char path[] = "/tmp/halo-test-trace-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    halo_trace_writer *w = NULL;
    int32_t ids[3] = {1, 5, 9}, deg[3] = {2, 2, 2};
    uint8_t fl[3] = {3, 0, 1};
    assert_int_equal(halo_trace_create(path, 1, 4, 10, &w), 0);
    assert_int_equal(halo_trace_put_halo(w, 0, 3, ids, deg, NULL, NULL), 0);
    assert_int_equal(halo_trace_put_batch(w, 0, 0, 0, 3, ids, fl), 0);
    assert_int_equal(halo_trace_close(w), 0);
    halo_trace *t = NULL;
    assert_int_equal(halo_trace_load(path, &t), 0);
    /* the documented layout: header 32, halo record 32 + 12 + 12 + 16 (owner padded) */
    assert_int_equal(t->data_len[0], 32 + 32 + 40 + 32 + 16 + 8);
    halo_trace_batch b;
    halo_trace_get_batch(t, 0, 0, &b);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.ids[1], 5);
    assert_int_equal(b.flags[0], 3);
    halo_trace_free(t);
    /* truncated */
    assert_int_equal(truncate(path, 32 + 32 + 40 + 20), 0);
    assert_int_equal(halo_trace_load(path, &t), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "truncated"));
    /* bad magic */
    FILE *f = fopen(path, "r+b");
    fwrite("XX", 1, 2, f);
    fclose(f);
    assert_int_equal(halo_trace_load(path, &t), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "magic"));
    unlink(path);
    assert_int_equal(halo_trace_load("/nonexistent/trace", &t), HALO_EIO);
}

/* Inclusion probabilities: exact on a small tree, and close to the sampler's frequencies. */
static void vip_matches_exact_and_sampled_frequencies(void **state)
{
    (void)state;
    /* node 0 has in-neighbours 1..4; node 1 has in-neighbour 5; fanouts (input first) 2, 2 */
    halo_graph *g = halo_graph_alloc(6, 5, 0, 2, 0);
    int64_t ip[7] = {0, 4, 5, 5, 5, 5, 5};
    int32_t ix[5] = {1, 2, 3, 4, 5};
    memcpy(g->indptr, ip, sizeof ip);
    memcpy(g->indices, ix, sizeof ix);
    int fan[2] = {2, 2};
    int32_t seeds[1] = {0};
    double p[6];
    halo_cache_vip(6, 0, 6, g->indptr, g->indices, seeds, 1, 1, fan, 2, p);
    assert_true(fabs(p[0] - 1.0) < 1e-12);
    /* 1..4: drawn by the seed at the output layer (2/4) or again at the input layer (2/4) */
    assert_true(fabs(p[1] - 0.75) < 1e-12);
    assert_true(fabs(p[4] - 0.75) < 1e-12);
    assert_true(fabs(p[5] - 0.5) < 1e-12); /* 5 is drawn whenever 1 is (deg 1 <= fanout) */
    /* sampled: frequency of each node among the input nodes over many keys */
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int cnt[6] = {0};
    const int trials = 4000;
    for (int k = 0; k < trials; k++) {
        halo_sample_key key = {9, 0, k};
        assert_int_equal(halo_sample_graph(s, g, fan, 2, &key, seeds, 1, &mb), 0);
        for (int32_t i = 0; i < mb.num_input; i++) {
            cnt[mb.input[i]]++;
        }
    }
    for (int v = 0; v < 6; v++) {
        assert_true(fabs((double)cnt[v] / trials - p[v]) < 0.03);
    }
    halo_sample_free(&mb);
    halo_sampler_free(s);
    halo_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(massivegnn_matches_reference_batch_by_batch),
        cmocka_unit_test(classic_policies_match_slow_references),
        cmocka_unit_test(belady_bounds_every_policy),
        cmocka_unit_test(belady_equals_exhaustive_optimum_on_tiny_traces),
        cmocka_unit_test(trace_rejects_bad_files),
        cmocka_unit_test(vip_matches_exact_and_sampled_frequencies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
