/* Neighbour sampler: per-node draws without replacement (Floyd) and DGL's to_block numbering. */
#include "sample/sample.h"

#include "core/args.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above this fanout (and degree > 64) Floyd's membership test uses a hash set, below it a sorted
 * array. */
#define SMALL_FANOUT 32

/* A slot of the numbering map: one cache access per probe. */
typedef struct map_slot {
    uint32_t gen; /* the slot is live iff gen == the sampler's current generation */
    int32_t key;  /* global id */
    int32_t val;  /* local number */
} map_slot;

/* Nodes (and neighbours) to look ahead when prefetching rows and map slots. */
#define AHEAD 16

struct halo_sampler {
    int64_t *pos;       /* [pos_cap] positions drawn for one node */
    int64_t pos_cap;    /* capacity of pos */
    int64_t *pset;      /* [pset_cap] open-addressing set of positions (large fanouts), -1 empty */
    int64_t pset_cap;   /* capacity of pset (power of two) */
    map_slot *map;      /* [map_cap] numbering map: global id -> local number in the block */
    int64_t map_cap;    /* capacity of the map (power of two) */
    uint32_t gen;       /* current generation of the map */
    int64_t *beg;       /* [beg_cap] row start of each node being sampled */
    int64_t *deg;       /* [beg_cap] in-degree of each node being sampled */
    int64_t beg_cap;    /* capacity of beg/deg */
    int64_t *row;       /* [buf_cap] rows of a frontier (single-process sampler) */
    int64_t *key;       /* [buf_cap] RNG keys of a frontier */
    int64_t *off;       /* [buf_cap+1] neighbour offsets of a frontier */
    int64_t buf_cap;    /* capacity of row/key/off */
    int32_t *nbrs;      /* [nbrs_cap] sampled neighbours of a frontier */
    uint8_t *netype;    /* [nbrs_cap] their relations (typed sampler) */
    int64_t nbrs_cap;   /* capacity of nbrs and netype */
};

halo_sampler *halo_sampler_new(void)
{
    return HALO_NEW(halo_sampler, 1);
}

void halo_sampler_free(halo_sampler *s)
{
    if (s == NULL) {
        return;
    }
    halo_free(s->pos);
    halo_free(s->pset);
    halo_free(s->map);
    halo_free(s->beg);
    halo_free(s->deg);
    halo_free(s->row);
    halo_free(s->key);
    halo_free(s->off);
    halo_free(s->nbrs);
    halo_free(s->netype);
    halo_free(s);
}

/* Draws k distinct positions of [0, d) (0 < k < d) into s->pos in ascending order with Floyd's
 * algorithm: for j = d-k .. d-1 take t uniform in [0, j], or j itself when t is already taken.
 * Every k-subset is equally likely, and the subset depends only on the RNG stream, d and k (the
 * three membership tests below give the same subset for the same draws). */
static void draw_positions(halo_sampler *s, halo_rng *r, int64_t d, int64_t k)
{
    if (k > s->pos_cap) {
        halo_free(s->pos);
        s->pos_cap = k * 2;
        s->pos = HALO_ALLOC(int64_t, s->pos_cap);
    }
    int64_t *pos = s->pos;
    if (d <= 64) { /* membership in a bit mask; the set bits come out in ascending order */
        uint64_t mask = 0;
        for (int64_t j = d - k; j < d; j++) {
            uint64_t t = halo_rng_below(r, (uint64_t)j + 1);
            uint64_t bit = (mask >> t) & 1 ? 1ULL << j : 1ULL << t;
            mask |= bit;
        }
        for (int64_t n = 0; mask != 0; n++) {
            pos[n] = __builtin_ctzll(mask);
            mask &= mask - 1;
        }
        return;
    }
    if (k <= SMALL_FANOUT) { /* a sorted array: membership test and insertion in one scan */
        for (int64_t j = d - k, n = 0; j < d; j++, n++) {
            int64_t t = (int64_t)halo_rng_below(r, (uint64_t)j + 1);
            int64_t m = n;
            while (m > 0 && pos[m - 1] > t) {
                m--;
            }
            if (m > 0 && pos[m - 1] == t) {
                pos[n] = j; /* j exceeds every earlier draw: it goes last */
                continue;
            }
            memmove(pos + m + 1, pos + m, (size_t)(n - m) * sizeof *pos);
            pos[m] = t;
        }
        return;
    }
    int64_t cap = 64;
    while (cap < 2 * k) {
        cap *= 2;
    }
    if (cap > s->pset_cap) {
        halo_free(s->pset);
        s->pset_cap = cap;
        s->pset = HALO_ALLOC(int64_t, cap);
    }
    int64_t *set = s->pset;
    memset(set, 0xff, (size_t)cap * sizeof *set);
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t j = d - k, n = 0; j < d; j++, n++) {
        int64_t t = (int64_t)halo_rng_below(r, (uint64_t)j + 1);
        for (int pass = 0; pass < 2; pass++) {
            uint64_t h = (uint64_t)halo_mix64((uint64_t)t) & mask;
            while (set[h] >= 0 && set[h] != t) {
                h = (h + 1) & mask;
            }
            if (set[h] < 0) {
                set[h] = t;
                pos[n] = t;
                break;
            }
            t = j; /* t was taken: j is new (never drawn before, all earlier draws are < j) */
        }
    }
    halo_sort_i64(pos, k);
}

int64_t halo_sample_rows_offsets(const int64_t *indptr, const int64_t *row, int64_t n, int fanout,
                                 int64_t *off)
{
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t deg = indptr[row[i] + 1] - indptr[row[i]];
        off[i + 1] = off[i] + halo_sample_count(deg, fanout);
    }
    return off[n];
}

/* Draws the neighbours in two passes: the first reads every node's row bounds (independent loads
 * the memory system overlaps), the second prefetches rows AHEAD nodes ahead and draws. */
void halo_sample_rows(halo_sampler *s, const int64_t *indptr, const int32_t *indices,
                      const int64_t *row, const int64_t *key, int64_t n, int fanout,
                      const halo_sample_key *k, int layer, const int64_t *off, int32_t *nbrs)
{
    if (n > s->beg_cap) {
        halo_free(s->beg);
        halo_free(s->deg);
        s->beg_cap = n + n / 2 + 16;
        s->beg = HALO_ALLOC(int64_t, s->beg_cap);
        s->deg = HALO_ALLOC(int64_t, s->beg_cap);
    }
    int64_t *beg = s->beg, *degs = s->deg;
    for (int64_t i = 0; i < n; i++) {
        beg[i] = indptr[row[i]];
        degs[i] = indptr[row[i] + 1] - beg[i];
    }
    uint64_t bl = ((uint64_t)k->batch << 8) | (uint64_t)(layer & 0xff);
    for (int64_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            __builtin_prefetch(&indices[beg[i + AHEAD]]);
        }
        int64_t deg = degs[i];
        int64_t cnt = off[i + 1] - off[i];
        const int32_t *src = indices + beg[i];
        int32_t *dst = nbrs + off[i];
        if (cnt >= deg) {
            memcpy(dst, src, (size_t)deg * sizeof *dst);
            continue;
        }
        if (cnt == 0) {
            continue;
        }
        halo_rng r;
        halo_rng_init(&r, k->seed, HALO_RNG_SAMPLE, (uint64_t)k->epoch, bl, (uint64_t)key[i]);
        draw_positions(s, &r, deg, cnt);
        for (int64_t j = 0; j < cnt; j++) {
            dst[j] = src[s->pos[j]];
        }
    }
}

/* Makes sure the numbering map holds at least `need` entries at load <= 1/2, and starts a new
 * generation (emptying it in O(1)). */
static void map_reset(halo_sampler *s, int64_t need)
{
    int64_t cap = 1024;
    while (cap < 2 * need) {
        cap *= 2;
    }
    if (cap > s->map_cap) {
        halo_free(s->map);
        s->map_cap = cap;
        s->map = HALO_NEW(map_slot, cap);
        s->gen = 0;
    }
    s->gen++;
    if (s->gen == 0) { /* wrapped: clear the stamps */
        memset(s->map, 0, (size_t)s->map_cap * sizeof *s->map);
        s->gen = 1;
    }
}

/* Local number of gid; inserts it as `next` when absent. Returns the number and sets *added. */
static inline uint64_t map_hash(const halo_sampler *s, int32_t gid)
{
    return (((uint64_t)(uint32_t)gid * 0x9E3779B97F4A7C15ULL) >> 17) & ((uint64_t)s->map_cap - 1);
}

static inline int32_t map_get_or_add(halo_sampler *s, int32_t gid, int32_t next, int *added)
{
    uint64_t mask = (uint64_t)s->map_cap - 1;
    uint64_t h = map_hash(s, gid);
    map_slot *m = s->map;
    while (m[h].gen == s->gen) {
        if (m[h].key == gid) {
            *added = 0;
            return m[h].val;
        }
        h = (h + 1) & mask;
    }
    m[h].gen = s->gen;
    m[h].key = gid;
    m[h].val = next;
    *added = 1;
    return next;
}

void halo_sample_block_free(halo_block *b)
{
    halo_free(b->indptr);
    halo_free(b->indices);
    halo_free(b->src_gid);
    halo_free(b->etype);
    memset(b, 0, sizeof *b);
}

int halo_sample_block_build(halo_sampler *s, const int32_t *dst, int32_t num_dst,
                            const int64_t *off, const int32_t *nbrs, halo_block *b)
{
    int64_t ne = off[num_dst];
    if ((int64_t)num_dst + ne > INT32_MAX) {
        return halo_errorf(HALO_EUSAGE, "sample: block of %lld nodes is too large",
                           (long long)(num_dst + ne));
    }
    map_reset(s, num_dst + ne);
    memset(b, 0, sizeof *b);
    b->num_dst = num_dst;
    b->num_edges = ne;
    b->indptr = HALO_ALLOC(int64_t, (int64_t)num_dst + 1);
    b->indices = HALO_ALLOC(int32_t, ne > 0 ? ne : 1);
    int32_t *src = HALO_ALLOC(int32_t, (int64_t)num_dst + ne + 1);
    int32_t n = 0;
    int added;
    for (int32_t i = 0; i < num_dst; i++) {
        map_get_or_add(s, dst[i], n, &added);
        if (!added) {
            halo_free(src);
            halo_sample_block_free(b);
            return halo_errorf(HALO_EUSAGE, "sample: node %d appears twice among the seeds",
                               dst[i]);
        }
        src[n++] = dst[i];
    }
    memcpy(b->indptr, off, ((size_t)num_dst + 1) * sizeof *off);
    for (int64_t e = 0; e < ne; e++) {
        if (e + AHEAD < ne) {
            __builtin_prefetch(&s->map[map_hash(s, nbrs[e + AHEAD])]);
        }
        int32_t l = map_get_or_add(s, nbrs[e], n, &added);
        if (added) {
            src[n++] = nbrs[e];
        }
        b->indices[e] = l;
    }
    b->num_src = n;
    b->src_gid = halo_realloc(src, ((size_t)n + 1) * sizeof *src);
    return 0;
}

void halo_sample_minibatch_finish(halo_minibatch *mb)
{
    if (mb->layers <= 0) {
        mb->num_seeds = 0;
        mb->seeds = NULL;
        mb->num_input = 0;
        mb->input = NULL;
        return;
    }
    mb->num_seeds = mb->blocks[mb->layers - 1].num_dst;
    mb->seeds = mb->blocks[mb->layers - 1].src_gid;
    mb->num_input = mb->blocks[0].num_src;
    mb->input = mb->blocks[0].src_gid;
}

void halo_sample_free(halo_minibatch *mb)
{
    for (int l = 0; l < HALO_MAX_LAYERS; l++) {
        halo_sample_block_free(&mb->blocks[l]);
    }
    memset(mb, 0, sizeof *mb);
}

int64_t halo_sample_edges(const halo_minibatch *mb)
{
    int64_t e = 0;
    for (int l = 0; l < mb->layers; l++) {
        e += mb->blocks[l].num_edges;
    }
    return e;
}

/* Grows the frontier buffers of s to hold n nodes and ne neighbours. */
static void frontier_reserve(halo_sampler *s, int64_t n, int64_t ne)
{
    if (n > s->buf_cap) {
        halo_free(s->row);
        halo_free(s->key);
        halo_free(s->off);
        s->buf_cap = n + n / 2 + 16;
        s->row = HALO_ALLOC(int64_t, s->buf_cap);
        s->key = HALO_ALLOC(int64_t, s->buf_cap);
        s->off = HALO_ALLOC(int64_t, s->buf_cap + 1);
    }
    if (ne > s->nbrs_cap) {
        halo_free(s->nbrs);
        halo_free(s->netype);
        s->nbrs_cap = ne + ne / 2 + 16;
        s->nbrs = HALO_ALLOC(int32_t, s->nbrs_cap);
        s->netype = HALO_ALLOC(uint8_t, s->nbrs_cap);
    }
}

/* The layer count every sampler accepts. */
static int check_layers(int layers)
{
    if (layers < 1 || layers > HALO_MAX_LAYERS) {
        return halo_errorf(HALO_EUSAGE, "sample: %d layers (want 1..%d)", layers,
                           HALO_MAX_LAYERS);
    }
    return 0;
}

/* Every seed is a node of g. */
static int check_seeds(const halo_graph *g, const int32_t *seeds, int32_t num_seeds)
{
    for (int32_t i = 0; i < num_seeds; i++) {
        if (seeds[i] < 0 || seeds[i] >= g->nodes) {
            return halo_errorf(HALO_EUSAGE, "sample: seed %d is not a node (graph has %lld)",
                               seeds[i], (long long)g->nodes);
        }
    }
    return 0;
}

int halo_sample_frontier(halo_sampler *s, int layers, halo_sample_draw_fn draw, void *arg,
                         const int32_t *seeds, int32_t num_seeds, halo_minibatch *out)
{
    halo_sample_free(out);
    HALO_CHECK(check_layers(layers));
    out->layers = layers;
    const int32_t *dst = seeds;
    int32_t num_dst = num_seeds;
    for (int l = layers - 1; l >= 0; l--) {
        halo_sample_drawn d = {0};
        int rc = draw(arg, l, dst, num_dst, &d);
        if (rc == 0) {
            rc = halo_sample_block_build(s, dst, num_dst, d.off, d.nbrs, &out->blocks[l]);
        }
        if (rc == 0 && d.etype != NULL) {
            int64_t ne = out->blocks[l].num_edges;
            out->blocks[l].etype = HALO_ALLOC(uint8_t, ne > 0 ? ne : 1);
            memcpy(out->blocks[l].etype, d.etype, (size_t)ne);
        }
        if (rc < 0) {
            halo_sample_free(out);
            return rc;
        }
        dst = out->blocks[l].src_gid;
        num_dst = out->blocks[l].num_src;
    }
    halo_sample_minibatch_finish(out);
    return 0;
}

/* A whole graph's draw: plain fanouts, or (fan != NULL) per-relation ones of a typed graph;
 * node keys are the graph's own ids. */
typedef struct graph_draw {
    halo_sampler *s;           /* the sampler (its frontier buffers) */
    const halo_graph *g;       /* the graph */
    const int *fanouts;        /* plain: per layer */
    const int (*fan)[HALO_MAX_RELS]; /* typed: per layer and relation, else NULL */
    const halo_sample_key *k;  /* the batch's keys */
} graph_draw;

static int draw_graph(void *arg, int l, const int32_t *dst, int32_t num_dst,
                      halo_sample_drawn *out)
{
    graph_draw *a = arg;
    halo_sampler *s = a->s;
    const halo_graph *g = a->g;
    frontier_reserve(s, num_dst, 0);
    for (int32_t i = 0; i < num_dst; i++) {
        s->row[i] = dst[i];
        s->key[i] = dst[i];
    }
    int64_t ne;
    if (a->fan == NULL) {
        ne = halo_sample_rows_offsets(g->indptr, s->row, num_dst, a->fanouts[l], s->off);
        frontier_reserve(s, num_dst, ne);
        halo_sample_rows(s, g->indptr, g->indices, s->row, s->key, num_dst, a->fanouts[l], a->k,
                         l, s->off, s->nbrs);
    } else {
        ne = halo_sample_rows_typed_offsets(g->indptr, g->etype, g->nrels, s->row, num_dst,
                                            a->fan[l], s->off);
        frontier_reserve(s, num_dst, ne);
        halo_sample_rows_typed(s, g->indptr, g->indices, g->etype, g->nrels, s->row, s->key,
                               num_dst, a->fan[l], a->k, l, s->off, s->nbrs, s->netype);
    }
    out->off = s->off;
    out->nbrs = s->nbrs;
    out->etype = a->fan != NULL ? s->netype : NULL;
    return 0;
}

int halo_sample_graph(halo_sampler *s, const halo_graph *g, const int *fanouts, int layers,
                      const halo_sample_key *k, const int32_t *seeds, int32_t num_seeds,
                      halo_minibatch *out)
{
    halo_sample_free(out);
    HALO_CHECK(check_layers(layers));
    HALO_CHECK(check_seeds(g, seeds, num_seeds));
    graph_draw a = {s, g, fanouts, NULL, k};
    return halo_sample_frontier(s, layers, draw_graph, &a, seeds, num_seeds, out);
}

int halo_sample_parse_fanouts(const char *str, int *fanouts, int max_layers)
{
    char buf[256], *v[HALO_MAX_LAYERS + 1];
    if (snprintf(buf, sizeof buf, "%s", str) >= (int)sizeof buf) {
        return halo_errorf(HALO_EUSAGE, "--fanouts: list '%.40s...' is too long", str);
    }
    int max = max_layers < HALO_MAX_LAYERS ? max_layers : HALO_MAX_LAYERS;
    int n = halo_split_list(buf, "--fanouts", v, max);
    if (n < 0) {
        return n;
    }
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        errno = 0;
        long f = strtol(v[i], &end, 10);
        if (errno != 0 || end == v[i] || *end != '\0' || f < -1 || f > INT32_MAX) {
            return halo_errorf(HALO_EUSAGE, "--fanouts: bad list '%s' (want e.g. 10,25; -1 = all)",
                               str);
        }
        fanouts[i] = (int)f;
    }
    return n;
}

/* First position in [b, e) whose relation is >= r (the row's relations ascend). */
static inline int64_t rel_lower(const uint8_t *etype, int64_t b, int64_t e, int r)
{
    while (b < e) {
        int64_t m = b + (e - b) / 2;
        if (etype[m] < r) {
            b = m + 1;
        } else {
            e = m;
        }
    }
    return b;
}

int64_t halo_sample_rows_typed_offsets(const int64_t *indptr, const uint8_t *etype, int nrels,
                                       const int64_t *row, int64_t n, const int *fan,
                                       int64_t *off)
{
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = indptr[row[i]], e = indptr[row[i] + 1], c = 0;
        while (b < e) { /* one run of in-edges per relation present in the row */
            int r = etype[b];
            int64_t m = r + 1 < nrels ? rel_lower(etype, b, e, r + 1) : e;
            c += halo_sample_count(m - b, fan[r]);
            b = m;
        }
        off[i + 1] = off[i] + c;
    }
    return off[n];
}

void halo_sample_rows_typed(halo_sampler *s, const int64_t *indptr, const int32_t *indices,
                            const uint8_t *etype, int nrels, const int64_t *row,
                            const int64_t *key, int64_t n, const int *fan,
                            const halo_sample_key *k, int layer, const int64_t *off,
                            int32_t *nbrs, uint8_t *nbr_etype)
{
    uint64_t bl = ((uint64_t)k->batch << 8) | (uint64_t)(layer & 0xff);
    for (int64_t i = 0; i < n; i++) {
        if (i + 1 < n) {
            __builtin_prefetch(&indices[indptr[row[i + 1]]]);
        }
        int64_t b = indptr[row[i]], e = indptr[row[i] + 1], o = off[i];
        while (b < e) {
            int r = etype[b];
            int64_t m = r + 1 < nrels ? rel_lower(etype, b, e, r + 1) : e, deg = m - b;
            int64_t cnt = halo_sample_count(deg, fan[r]);
            const int32_t *src = indices + b;
            if (cnt >= deg) {
                memcpy(nbrs + o, src, (size_t)deg * sizeof *nbrs);
            } else if (cnt > 0) {
                halo_rng rg;
                halo_rng_init(&rg, k->seed, HALO_RNG_SAMPLE, (uint64_t)k->epoch, bl,
                              ((uint64_t)key[i] << 8) | (uint64_t)r);
                draw_positions(s, &rg, deg, cnt);
                for (int64_t j = 0; j < cnt; j++) {
                    nbrs[o + j] = src[s->pos[j]];
                }
            }
            memset(nbr_etype + o, r, (size_t)cnt);
            o += cnt;
            b = m;
        }
    }
}

int halo_sample_graph_typed(halo_sampler *s, const halo_graph *g, const halo_rel_fanouts fan,
                            int layers, const halo_sample_key *k, const int32_t *seeds,
                            int32_t num_seeds, halo_minibatch *out)
{
    halo_sample_free(out);
    if (!halo_graph_typed(g)) {
        return halo_errorf(HALO_EUSAGE, "sample: per-relation fanouts need a typed graph");
    }
    HALO_CHECK(check_layers(layers));
    HALO_CHECK(check_seeds(g, seeds, num_seeds));
    graph_draw a = {s, g, NULL, fan, k};
    return halo_sample_frontier(s, layers, draw_graph, &a, seeds, num_seeds, out);
}

/* One fanout number of a spec: an integer >= -1. */
static int parse_fanout_value(const char *p, const char *stop, const char *spec, int *out)
{
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || end != stop || v < -1 || v > INT32_MAX) {
        return halo_errorf(HALO_EUSAGE, "--fanouts: '%.*s' in '%s' is not a fanout (an integer "
                           ">= -1; -1 = all)", (int)(stop - p), p, spec);
    }
    *out = (int)v;
    return 0;
}

/* Relation id named by the first len bytes of name in rels[nrels], or -1. */
static int rel_lookup(const halo_relation *rels, int nrels, const char *name, size_t len)
{
    for (int r = 0; r < nrels; r++) {
        if (strlen(rels[r].name) == len && memcmp(rels[r].name, name, len) == 0) {
            return r;
        }
    }
    return -1;
}

int halo_sample_rel_fanout_max(const int *fan, int nrels)
{
    int m = 0;
    for (int r = 0; r < nrels; r++) {
        if (fan[r] < 0) {
            return -1;
        }
        m = fan[r] > m ? fan[r] : m;
    }
    return m;
}

int halo_sample_parse_rel_fanouts(const char *str, const halo_relation *rels, int nrels_in,
                                  halo_rel_fanouts fan, int max_layers)
{
    int nrels = nrels_in > 0 ? nrels_in : 1;
    if (strchr(str, '=') == NULL) {
        int plain[HALO_MAX_LAYERS];
        int layers = halo_sample_parse_fanouts(str, plain, max_layers);
        if (layers < 0) {
            return layers;
        }
        for (int l = 0; l < layers; l++) {
            for (int r = 0; r < HALO_MAX_RELS; r++) {
                fan[l][r] = r < nrels ? plain[l] : 0;
            }
        }
        return layers;
    }
    if (nrels_in <= 0) {
        return halo_errorf(HALO_EUSAGE, "--fanouts: '%s' names relations, but the graph has "
                           "none (a homogeneous graph takes a plain list such as 10,25)", str);
    }
    int layers = 0;
    const char *p = str;
    for (;;) {
        const char *semi = strchr(p, ';');
        const char *lend = semi != NULL ? semi : p + strlen(p);
        if (layers == max_layers) {
            return halo_errorf(HALO_EUSAGE, "--fanouts: more than %d layers in '%s'", max_layers,
                               str);
        }
        if (lend == p) {
            return halo_errorf(HALO_EUSAGE, "--fanouts: empty layer %d in '%s' (want e.g. "
                               "cites=10,writes=5;cites=15,*=10)", layers, str);
        }
        bool named[HALO_MAX_RELS] = {false};
        int rest = 0;
        bool star = false;
        for (int r = 0; r < HALO_MAX_RELS; r++) {
            fan[layers][r] = 0;
        }
        const char *q = p;
        while (q < lend) {
            const char *comma = memchr(q, ',', (size_t)(lend - q));
            const char *eend = comma != NULL ? comma : lend;
            const char *eq = memchr(q, '=', (size_t)(eend - q));
            if (eq == NULL || eq == q) {
                return halo_errorf(HALO_EUSAGE, "--fanouts: '%.*s' in '%s' is not REL=N (layers "
                                   "are separated by ';', entries by ',')", (int)(eend - q), q,
                                   str);
            }
            int v = 0;
            HALO_CHECK(parse_fanout_value(eq + 1, eend, str, &v));
            size_t len = (size_t)(eq - q);
            if (len == 1 && q[0] == '*') {
                if (star) {
                    return halo_errorf(HALO_EUSAGE, "--fanouts: '*' twice in layer %d of '%s'",
                                       layers, str);
                }
                star = true;
                rest = v;
            } else {
                int r = rel_lookup(rels, nrels, q, len);
                if (r < 0) {
                    char known[HALO_MAX_RELS * (HALO_TYPE_NAME + 2)] = "";
                    for (int i = 0; i < nrels; i++) {
                        strcat(known, i ? ", " : "");
                        strcat(known, rels[i].name);
                    }
                    return halo_errorf(HALO_EUSAGE, "--fanouts: no relation '%.*s' (the graph's "
                                       "relations: %s)", (int)len, q, known);
                }
                if (named[r]) {
                    return halo_errorf(HALO_EUSAGE, "--fanouts: relation '%s' twice in layer %d "
                                       "of '%s'", rels[r].name, layers, str);
                }
                named[r] = true;
                fan[layers][r] = v;
            }
            q = comma != NULL ? comma + 1 : lend;
            if (comma != NULL && q == lend) {
                return halo_errorf(HALO_EUSAGE, "--fanouts: trailing ',' in '%s'", str);
            }
        }
        for (int r = 0; r < nrels; r++) {
            if (!named[r]) {
                fan[layers][r] = star ? rest : 0;
            }
        }
        layers++;
        if (semi == NULL) {
            break;
        }
        p = semi + 1;
    }
    return layers;
}
