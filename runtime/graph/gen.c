/* Generators: a deterministic edge stream (R-MAT or SBM) is walked twice, once to count in-degrees
 * and once to fill the in-edge CSR in place; rows are then sorted and deduplicated. Labels, split
 * and features are pure functions of (seed, node), so features stream straight to disk. */
#include "graph/gen.h"

#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GEN_CHUNK 4096 /* edge draws per RNG stream; the stream of chunk i is keyed by i */
#define GEN_ROWS 4096  /* feature rows staged per write */
#define GEN_HBITS 10   /* per-node homophily takes one of 2^GEN_HBITS Beta quantiles */
#define GEN_TRIES 64   /* sbm: source candidates tried before the last one is taken anyway */
#define GEN_MEM_DEFAULT (4ull << 30) /* CSR bytes built in memory by halo_gen_write before it
                                      * spills (HALO_GEN_MAX_BYTES overrides) */
#define GEN_BUCKET_ENTRIES (16 << 20) /* spilled: target (row, source) entries per bucket */
#define GEN_BUCKET_STAGE 32768        /* spilled: entries staged per bucket before a write */
#define GEN_BUCKETS_MAX 4096          /* spilled: most bucket files (one descriptor each) */

/* A preset: the shape of an OGB node-property dataset. */
typedef struct gen_preset {
    const char *name;     /* as typed after --preset */
    const char *alias;    /* second accepted name or NULL */
    int64_t nodes;        /* real node count */
    double degree;        /* mean in-degree of the symmetrised graph */
    double homophily;     /* mean fraction of in-edges from the node's own class */
    double homophily_sd;  /* its spread over nodes (see halo_gen_params.homophily_sd) */
    double affinity;      /* share of other-class edges from the twin class (c xor 1) */
    double label_noise;   /* fraction of nodes with a uniform random label */
    double twin_corr;     /* correlation of twin classes' feature means */
    double skew;          /* degree spread (see halo_gen_params.skew) */
    int feat_dim;         /* feature width */
    int classes;          /* label classes */
    double noise;         /* feature noise */
    int64_t train, valid, test; /* real split sizes */
    bool label_split_only; /* unlabelled outside the splits */
} gen_preset;

/* Sizes from docs/distdgl.md and the OGB dataset pages. The noise, homophily
 * spread, twin affinity, twin correlation and label noise are calibrated (docs/graph.md, "Accuracy") so that the
 * 2-layer GraphSAGE of `halo train` and the same model on features alone (--fanouts 0,0) land
 * near the OGB leaderboard figures of GraphSAGE and MLP: arxiv 0.71 / 0.55, products
 * 0.79 / 0.61, papers100M 0.66 / 0.47. */
static const gen_preset presets[] = {
    {.name = "arxiv", .alias = "ogbn-arxiv", .nodes = 169343, .degree = 2.0 * 1166243 / 169343,
     .homophily = 0.65, .homophily_sd = 0.3, .affinity = 0.8, .twin_corr = 0.9,
     .label_noise = 0.12, .skew = 1.0, .feat_dim = 128, .classes = 40, .noise = 1.6,
     .train = 90941, .valid = 29799, .test = 48603, .label_split_only = false},
    {.name = "products", .alias = "ogbn-products", .nodes = 2449029,
     .degree = 2.0 * 61859140 / 2449029, .homophily = 0.80, .homophily_sd = 0.3,
     .affinity = 0.8, .twin_corr = 0.9, .label_noise = 0.14, .skew = 1.0, .feat_dim = 100,
     .classes = 47, .noise = 1.0, .train = 196615, .valid = 39323, .test = 2213091,
     .label_split_only = false},
    {.name = "papers100M", .alias = "papers", .nodes = 111059956,
     .degree = 2.0 * 1615685872 / 111059956, .homophily = 0.60, .homophily_sd = 0.3,
     .affinity = 0.8, .twin_corr = 0.9, .label_noise = 0.12, .skew = 1.0, .feat_dim = 128,
     .classes = 172, .noise = 1.15, .train = 1207179, .valid = 125265, .test = 214338,
     .label_split_only = true},
};

const char *halo_gen_preset_names(void)
{
    return "arxiv, products, papers100M";
}

void halo_gen_split_sizes(const halo_gen_params *p, int64_t *train, int64_t *valid,
                          int64_t *test)
{
    double n = (double)p->nodes;
    int64_t t = (int64_t)llround(p->train * n), v = (int64_t)llround(p->valid * n);
    int64_t e = (int64_t)llround(p->test * n);
    t = t < p->nodes ? t : p->nodes;
    v = t + v < p->nodes ? v : p->nodes - t;
    e = t + v + e < p->nodes ? e : p->nodes - t - v;
    *train = t;
    *valid = v;
    *test = e;
}

void halo_gen_defaults(int model, halo_gen_params *p)
{
    memset(p, 0, sizeof *p);
    p->model = model;
    p->seed = 1;
    p->a = 0.57;
    p->b = 0.19;
    p->c = 0.19;
    p->directed = false;
    if (model == HALO_GEN_RMAT) {
        snprintf(p->name, sizeof p->name, "rmat");
        p->nodes = 1 << 16;
        p->degree = 16;
        p->classes = 16;
        p->feat_dim = 32;
        p->noise = 2.5;
    } else {
        snprintf(p->name, sizeof p->name, "sbm");
        p->nodes = 10000;
        p->degree_in = 10;
        p->degree_out = 5;
        p->degree = 15;
        p->classes = 8;
        p->feat_dim = 32;
        p->noise = 3.0;
    }
    p->train = 0.6;
    p->valid = 0.2;
    p->test = 0.2;
}

int halo_gen_preset(const char *preset, double scale, halo_gen_params *p)
{
    const gen_preset *ps = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(preset, presets[i].name) == 0 ||
            (presets[i].alias != NULL && strcmp(preset, presets[i].alias) == 0)) {
            ps = &presets[i];
        }
    }
    if (ps == NULL) {
        return halo_errorf(HALO_EUSAGE, "--preset: unknown preset '%s' (known: %s)", preset,
                           halo_gen_preset_names());
    }
    if (!(scale > 0) || scale > 16) {
        return halo_errorf(HALO_EUSAGE, "--scale: %g is not in (0, 16] for a preset", scale);
    }
    halo_gen_defaults(HALO_GEN_SBM, p);
    snprintf(p->preset, sizeof p->preset, "%s", ps->name);
    if (scale == 1.0) {
        snprintf(p->name, sizeof p->name, "%s-like", ps->name);
    } else {
        snprintf(p->name, sizeof p->name, "%s-like-x%g", ps->name, scale);
    }
    p->nodes = (int64_t)llround((double)ps->nodes * scale);
    if (p->nodes < 2 * ps->classes) {
        p->nodes = 2 * ps->classes;
    }
    p->degree = ps->degree;
    p->degree_in = ps->degree * ps->homophily;
    p->degree_out = ps->degree * (1 - ps->homophily);
    p->skew = ps->skew;
    p->homophily_sd = ps->homophily_sd;
    p->affinity = ps->affinity;
    p->label_noise = ps->label_noise;
    p->twin_corr = ps->twin_corr;
    p->feat_dim = ps->feat_dim;
    p->classes = ps->classes;
    p->noise = ps->noise;
    p->label_split_only = ps->label_split_only;
    double n = (double)ps->nodes;
    p->train = (double)ps->train / n;
    p->valid = (double)ps->valid / n;
    p->test = (double)ps->test / n;
    return 0;
}

int halo_gen_check(const halo_gen_params *p)
{
    if (p->model != HALO_GEN_RMAT && p->model != HALO_GEN_SBM) {
        return halo_errorf(HALO_EUSAGE, "gen: unknown model %d", p->model);
    }
    if (p->nodes < 2 || p->nodes > 2147483647LL) {
        return halo_errorf(HALO_EUSAGE, "--nodes: %lld is not in [2, 2^31-1]",
                           (long long)p->nodes);
    }
    if (p->classes < 1 || p->classes > (1 << 20) || p->classes > p->nodes) {
        return halo_errorf(HALO_EUSAGE, "--classes: %d is not in [1, min(2^20, nodes)]",
                           p->classes);
    }
    if (p->feat_dim < 0 || p->feat_dim > 65536) {
        return halo_errorf(HALO_EUSAGE, "--feat-dim: %d is not in [0, 65536]", p->feat_dim);
    }
    if (!(p->noise >= 0) || p->noise > 1e6) {
        return halo_errorf(HALO_EUSAGE, "--noise: %g is not in [0, 1e6]", p->noise);
    }
    if (!(p->twin_corr >= 0 && p->twin_corr <= 1)) {
        return halo_errorf(HALO_EUSAGE, "--twin-corr: %g is not in [0, 1]", p->twin_corr);
    }
    if (!(p->label_noise >= 0 && p->label_noise <= 1)) {
        return halo_errorf(HALO_EUSAGE, "--label-noise: %g is not in [0, 1]", p->label_noise);
    }
    if (!(p->train >= 0 && p->valid >= 0 && p->test >= 0 &&
          p->train + p->valid + p->test <= 1 + 1e-9)) {
        return halo_errorf(HALO_EUSAGE, "--train/--valid/--test: fractions %g, %g, %g must be "
                           ">= 0 and sum to at most 1", p->train, p->valid, p->test);
    }
    if (p->model == HALO_GEN_RMAT) {
        if (!(p->a > 0 && p->b >= 0 && p->c >= 0 && p->a + p->b + p->c <= 1.0 + 1e-12)) {
            return halo_errorf(HALO_EUSAGE, "--a/--b/--c: need a > 0, b, c >= 0, a+b+c <= 1 "
                               "(got %g, %g, %g)", p->a, p->b, p->c);
        }
        if (!(p->degree > 0) || p->degree > 1e5) {
            return halo_errorf(HALO_EUSAGE, "--edge-factor: %g is not in (0, 1e5]", p->degree);
        }
    } else {
        if (!(p->degree_in >= 0) || !(p->degree_out >= 0) || p->degree_in + p->degree_out <= 0 ||
            p->degree_in + p->degree_out > 1e5) {
            return halo_errorf(HALO_EUSAGE, "--degree-in/--degree-out: %g, %g: need both >= 0 "
                               "and 0 < sum <= 1e5", p->degree_in, p->degree_out);
        }
        if (p->classes == 1 && p->degree_in <= 0) {
            return halo_errorf(HALO_EUSAGE, "--degree-in: must be > 0 with one class");
        }
        if (!(p->skew >= 0) || p->skew > 10) {
            return halo_errorf(HALO_EUSAGE, "--skew: %g is not in [0, 10]", p->skew);
        }
        if (!(p->affinity >= 0 && p->affinity <= 1)) {
            return halo_errorf(HALO_EUSAGE, "--affinity: %g is not in [0, 1]", p->affinity);
        }
        double m = p->degree_in / (p->degree_in + p->degree_out);
        if (!(p->homophily_sd >= 0) ||
            (p->homophily_sd > 0 && !(p->homophily_sd * p->homophily_sd < m * (1 - m)))) {
            return halo_errorf(HALO_EUSAGE, "--homophily-sd: %g must be >= 0 and below "
                               "sqrt(h(1-h)) = %.4g for mean homophily h = %.4g",
                               p->homophily_sd, sqrt(m * (1 - m)), m);
        }
    }
    double draws = (double)p->nodes *
                   (p->model == HALO_GEN_RMAT ? p->degree : p->degree_in + p->degree_out);
    if (p->model == HALO_GEN_SBM && !p->directed) {
        draws /= 2;
    }
    if (draws * (p->directed ? 1 : 2) > 1e11) {
        return halo_errorf(HALO_EUSAGE, "gen: %.3g edges is too many", draws);
    }
    return 0;
}

char *halo_gen_source_json(const halo_gen_params *p)
{
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "generator");
    halo_jw_str(&w, p->model == HALO_GEN_RMAT ? "rmat" : "sbm");
    if (p->preset[0]) {
        halo_jw_key(&w, "preset");
        halo_jw_str(&w, p->preset);
    }
    halo_jw_key(&w, "seed");
    halo_jw_i64(&w, (int64_t)p->seed);
    halo_jw_key(&w, "nodes");
    halo_jw_i64(&w, p->nodes);
    if (p->model == HALO_GEN_RMAT) {
        halo_jw_key(&w, "edge_factor");
        halo_jw_f64(&w, p->degree);
        halo_jw_key(&w, "a");
        halo_jw_f64(&w, p->a);
        halo_jw_key(&w, "b");
        halo_jw_f64(&w, p->b);
        halo_jw_key(&w, "c");
        halo_jw_f64(&w, p->c);
    } else {
        halo_jw_key(&w, "degree_in");
        halo_jw_f64(&w, p->degree_in);
        halo_jw_key(&w, "degree_out");
        halo_jw_f64(&w, p->degree_out);
        halo_jw_key(&w, "skew");
        halo_jw_f64(&w, p->skew);
        halo_jw_key(&w, "homophily_sd");
        halo_jw_f64(&w, p->homophily_sd);
        halo_jw_key(&w, "affinity");
        halo_jw_f64(&w, p->affinity);
    }
    halo_jw_key(&w, "classes");
    halo_jw_i64(&w, p->classes);
    halo_jw_key(&w, "feat_dim");
    halo_jw_i64(&w, p->feat_dim);
    if (p->topology_only) {
        halo_jw_key(&w, "features");
        halo_jw_bool(&w, false);
    }
    halo_jw_key(&w, "noise");
    halo_jw_f64(&w, p->noise);
    halo_jw_key(&w, "twin_corr");
    halo_jw_f64(&w, p->twin_corr);
    halo_jw_key(&w, "label_noise");
    halo_jw_f64(&w, p->label_noise);
    int64_t tr, va, te;
    halo_gen_split_sizes(p, &tr, &va, &te);
    halo_jw_key(&w, "train");
    halo_jw_i64(&w, tr);
    halo_jw_key(&w, "valid");
    halo_jw_i64(&w, va);
    halo_jw_key(&w, "test");
    halo_jw_i64(&w, te);
    halo_jw_key(&w, "label_split_only");
    halo_jw_bool(&w, p->label_split_only);
    halo_jw_key(&w, "symmetrised");
    halo_jw_bool(&w, !p->directed);
    halo_jw_obj_end(&w);
    return w.sb.buf;
}

/* Five R-MAT levels at once: an alias table over the 1024 outcomes of 5 levels, so one lookup
 * (10 + 16 random bits) replaces five quadrant choices. Each entry packs everything a draw needs
 * into one 64-bit word (one load, no dependent second lookup), laid out so that the chosen
 * outcome's source and destination bits land in place with one shift and one mask:
 *   bits  0..4  destination bits of the outcome    bits 32..36 its source bits
 *   bits  8..12 destination bits of its alias      bits 40..44 the alias's source bits
 *   bits 16..31 keep threshold (keep the outcome when 16 random bits are below it)
 * Accumulating (acc << 5) | (entry & RMAT_PICK) then builds the destination id in the low and
 * the source id in the high 32 bits of one word. */
#define RMAT_LEVELS 5                   /* levels per alias lookup */
#define RMAT_TABLE 1024                 /* 4^RMAT_LEVELS entries per table */
#define RMAT_PICK 0x0000001f0000001fULL /* the outcome's fields of an entry */
#define RMAT_GROUPS 7                   /* tables for up to 35 levels (k <= 31) */

/* The fixed state of one generation run, shared by both passes over the edge stream. */
typedef struct gen_ctx {
    const halo_gen_params *p; /* parameters */
    int64_t n;                /* nodes */
    int64_t draws;            /* edge draws in the stream */
    int k;                    /* ids live in [0, 2^k), 2^k >= n */
    uint32_t mask;            /* 2^k - 1 */
    int groups;               /* rmat: ceil(k / 5) alias lookups per edge */
    int drop;                 /* rmat: 5 * groups - k surplus low levels, dropped */
    uint64_t *tab;            /* rmat: groups alias tables of RMAT_TABLE entries (halo_free) */
    int psh;                  /* xor-shift of the permutation rounds: (k + 1) / 2 */
    uint64_t pin;             /* sbm: P(intra-class edge) in 1/2^32 */
    double expo;              /* sbm: 1 + skew */
    bool het;                 /* sbm: per-node homophily or twin affinity in use (sbm_draw_het) */
    uint64_t ptwin;           /* sbm: P(other-class source from the twin class) in 1/2^32 */
    uint64_t hkey;            /* sbm: hash key of the per-node homophily draws */
    uint64_t *htab;           /* sbm: 2^GEN_HBITS Beta quantiles, as thresholds in 1/2^32
                               * (halo_free), or NULL when every node has the same homophily */
    uint32_t pkey[3];         /* keys of the node-id permutation rounds */
    uint32_t pmul[3];         /* odd multipliers of the permutation rounds */
} gen_ctx;

/* Node id of unpermuted id x: a keyed bijection of [0, 2^k) (xor, odd multiply, xor-shift per
 * round) walked until it lands below n, which makes it a bijection of [0, n). Computed, not
 * looked up, so the edge stream touches no permutation table (no cache misses). */
static inline uint32_t gen_perm(const gen_ctx *g, uint32_t x)
{
    int sh = g->psh;
    do {
        /* three rounds, written out (a counted loop is not unrolled at -O2) */
        x = ((x ^ g->pkey[0]) * g->pmul[0]) & g->mask;
        x ^= x >> sh;
        x = ((x ^ g->pkey[1]) * g->pmul[1]) & g->mask;
        x ^= x >> sh;
        x = ((x ^ g->pkey[2]) * g->pmul[2]) & g->mask;
        x ^= x >> sh;
    } while (x >= (uint32_t)g->n);
    return x;
}

/* First unpermuted id of SBM class c (classes are contiguous blocks before permutation). */
static inline int64_t sbm_lo(const gen_ctx *g, int64_t c)
{
    return c * g->n / g->p->classes;
}

/* Class of unpermuted id x: the planted block for SBM; for R-MAT the high-order bits (x * C / n,
 * exactly the top log2(C) bits when n and C are powers of two). */
static inline int32_t gen_class(const gen_ctx *g, int64_t x)
{
    if (g->p->model == HALO_GEN_SBM) {
        return (int32_t)(((x + 1) * g->p->classes - 1) / g->n);
    }
    return (int32_t)((uint64_t)x * (uint64_t)g->p->classes / (uint64_t)g->n);
}

/* One alias lookup: five more levels appended to both ids in acc (see RMAT_PICK). */
static inline uint64_t rmat_step(uint64_t acc, const uint64_t *tab, uint64_t bits)
{
    uint64_t e = tab[bits & (RMAT_TABLE - 1)];
    uint32_t y = (uint32_t)(bits >> 10) & 0xffff;
    /* branch-free select: the coin is random, a branch would mispredict */
    uint64_t pick = y < (uint32_t)(e >> 16 & 0xffff) ? e : e >> 8;
    return acc << RMAT_LEVELS | (pick & RMAT_PICK);
}

/* One R-MAT edge: the quadrants (a, b, c, d) of 5 * groups levels are drawn five per alias
 * lookup, two lookups per 64-bit draw (26 of each 32 bits); the source bit of a level is 1 in
 * quadrants c and d, the destination bit in b and d. The surplus lowest levels are dropped
 * (levels are independent, so the kept top k levels have exactly their distribution). The
 * last four lookups go to one word (20 bits per id fit in 32), earlier ones (k > 20) to another. */
static inline void rmat_draw(const gen_ctx *g, halo_rng *r, uint32_t *src, uint32_t *dst)
{
    uint64_t hi = 0, lo = 0, b = 0;
    const uint64_t *t = g->tab;
    /* lookup j uses the low (j even) or high (j odd) half of draw j / 2; splitmix64 over the
     * chunk's key: one mix per 64 bits (halo_rng_next mixes twice), still a pure function of
     * (seed, chunk, draw). Written out per group count: a loop here costs a third more
     * instructions. */
#define RMAT_G(acc, j)                                                                         \
    do {                                                                                       \
        if ((j) % 2 == 0) {                                                                    \
            b = halo_mix64(r->key + 0x9e3779b97f4a7c15ULL * ++r->ctr);                       \
        }                                                                                      \
        acc = rmat_step(acc, t + (j) * RMAT_TABLE, (j) % 2 == 0 ? b : b >> 32);                \
    } while (0)
    switch (g->groups) {
    case 1:
        RMAT_G(lo, 0);
        break;
    case 2:
        RMAT_G(lo, 0);
        RMAT_G(lo, 1);
        break;
    case 3:
        RMAT_G(lo, 0);
        RMAT_G(lo, 1);
        RMAT_G(lo, 2);
        break;
    case 4:
        RMAT_G(lo, 0);
        RMAT_G(lo, 1);
        RMAT_G(lo, 2);
        RMAT_G(lo, 3);
        break;
    case 5:
        RMAT_G(hi, 0);
        RMAT_G(lo, 1);
        RMAT_G(lo, 2);
        RMAT_G(lo, 3);
        RMAT_G(lo, 4);
        break;
    case 6:
        RMAT_G(hi, 0);
        RMAT_G(hi, 1);
        RMAT_G(lo, 2);
        RMAT_G(lo, 3);
        RMAT_G(lo, 4);
        RMAT_G(lo, 5);
        break;
    default:
        RMAT_G(hi, 0);
        RMAT_G(hi, 1);
        RMAT_G(hi, 2);
        RMAT_G(lo, 3);
        RMAT_G(lo, 4);
        RMAT_G(lo, 5);
        RMAT_G(lo, 6);
        break;
    }
#undef RMAT_G
    /* lo holds the last min(groups, 4) lookups (at most 20 bits per id), hi the others */
    uint64_t u = (hi >> 32) << 20 | (lo >> 32);
    uint64_t v = (hi & 0xffffffffu) << 20 | (lo & 0xffffffffu);
    *src = (uint32_t)(u >> g->drop);
    *dst = (uint32_t)(v >> g->drop);
}

/* Builds the alias table of 5 levels whose quadrant probabilities are q[0..5)[4] (Vose). */
static void rmat_table_init(uint64_t *tab, double q[][4])
{
    double w[RMAT_TABLE];
    int small[RMAT_TABLE], large[RMAT_TABLE], ns = 0, nl = 0;
    uint32_t prob[RMAT_TABLE], code[RMAT_TABLE];
    int alias[RMAT_TABLE];
    for (int o = 0; o < RMAT_TABLE; o++) {
        double pr = 1;
        uint32_t ub = 0, vb = 0;
        for (int j = 0; j < RMAT_LEVELS; j++) {
            int quad = (o >> (2 * (RMAT_LEVELS - 1 - j))) & 3;
            pr *= q[j][quad];
            ub = (ub << 1) | (uint32_t)(quad >> 1);
            vb = (vb << 1) | (uint32_t)(quad & 1);
        }
        code[o] = ub << 16 | vb; /* shifted into place below */
        w[o] = pr * RMAT_TABLE;
        alias[o] = o;
        prob[o] = 65536;
    }
    for (int o = 0; o < RMAT_TABLE; o++) {
        if (w[o] < 1.0) {
            small[ns++] = o;
        } else {
            large[nl++] = o;
        }
    }
    while (ns > 0 && nl > 0) {
        int s = small[--ns], l = large[--nl];
        prob[s] = (uint32_t)llround(w[s] * 65536);
        alias[s] = l;
        w[l] = w[l] + w[s] - 1.0;
        if (w[l] < 1.0) {
            small[ns++] = l;
        } else {
            large[nl++] = l;
        }
    }
    for (int o = 0; o < RMAT_TABLE; o++) {
        uint32_t pk = prob[o];
        int al = alias[o];
        if (pk >= 65536) {
            /* always kept: a 16-bit threshold cannot say 65536, so let the alias be itself */
            pk = 65535;
            al = o;
        }
        uint64_t keep = (uint64_t)(code[o] >> 16) << 32 | (code[o] & 0x1f);
        uint64_t alt = (uint64_t)(code[al] >> 16) << 32 | (code[al] & 0x1f);
        tab[o] = keep | alt << 8 | (uint64_t)pk << 16;
    }
}

/* A node of SBM class c: uniform, or skewed towards the start of the block. */
static inline uint32_t sbm_pick(const gen_ctx *g, halo_rng *r, int64_t c)
{
    int64_t lo = sbm_lo(g, c), size = sbm_lo(g, c + 1) - lo;
    if (g->expo == 1.0) {
        return (uint32_t)(lo + (int64_t)halo_rng_below(r, (uint64_t)size));
    }
    double x = halo_rng_uniform(r);
    double y = g->expo == 2.0 ? x * x : pow(x, g->expo);
    int64_t pos = (int64_t)(y * (double)size);
    return (uint32_t)(lo + (pos < size ? pos : size - 1));
}

/* One SBM edge: destination class uniform, source from the same class with probability
 * degree_in / (degree_in + degree_out), else from another class. */
static inline void sbm_draw(const gen_ctx *g, halo_rng *r, uint32_t *src, uint32_t *dst)
{
    int64_t classes = g->p->classes;
    int64_t c = (int64_t)halo_rng_below(r, (uint64_t)classes);
    *dst = sbm_pick(g, r, c);
    uint64_t coin = halo_rng_next(r) >> 32;
    if (classes > 1 && coin >= g->pin) {
        int64_t o = (int64_t)halo_rng_below(r, (uint64_t)(classes - 1));
        c = o >= c ? o + 1 : o;
    }
    *src = sbm_pick(g, r, c);
}

/* Next 64 bits of the stream with one splitmix64 mix (halo_rng_next mixes twice; as rmat_draw
 * does, still a pure function of (seed, chunk, draw)): the heterogeneous sbm draws several
 * candidates per edge. */
static inline uint64_t sbm_next(halo_rng *r)
{
    return halo_mix64(r->key + 0x9e3779b97f4a7c15ULL * ++r->ctr);
}

/* Uniform integer in [0, n) from 64 random bits (Lemire's multiply-shift). */
static inline uint64_t sbm_below(uint64_t bits, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)bits * n) >> 64);
}

/* sbm_pick from given random bits. */
static inline uint32_t sbm_pick_bits(const gen_ctx *g, uint64_t bits, int64_t c)
{
    int64_t lo = sbm_lo(g, c), size = sbm_lo(g, c + 1) - lo;
    if (g->expo == 1.0) {
        return (uint32_t)(lo + (int64_t)sbm_below(bits, (uint64_t)size));
    }
    double x = (double)(bits >> 11) * (1.0 / 9007199254740992.0);
    double y = g->expo == 2.0 ? x * x : pow(x, g->expo);
    int64_t pos = (int64_t)(y * (double)size);
    return (uint32_t)(lo + (pos < size ? pos : size - 1));
}

/* Homophily threshold (in 1/2^32) of unpermuted node x: one of the Beta quantiles, chosen by a
 * hash of (seed, x), so a pure function of the node that costs one mix and one small-table load
 * (no per-node array). */
static inline uint64_t sbm_hthr(const gen_ctx *g, uint32_t x)
{
    return g->htab[halo_mix64(g->hkey ^ x) >> (64 - GEN_HBITS)];
}

/* One SBM edge with per-node homophily and twin affinity. The destination v is drawn as in
 * sbm_draw; the edge is intra-class with probability h_v (v's own homophily). The source class
 * is v's, or for an other-class edge with probability `affinity` v's twin class c xor 1 (when
 * it exists: not for the last class of an odd count), else uniform over the other classes. Within that class a candidate u is accepted with
 * probability h_u (intra) or 1 - h_u (other-class), else redrawn: then u's expected share of
 * intra edges as a source is h_u too, so in the symmetrised graph every node's expected
 * same-class share is its own h and its expected degree is unchanged (Σ over u of w_u h_u /
 * Σ w h = w_u h_u / (W mean h) per intra draw, see docs/graph.md). The GEN_TRIES-th candidate
 * is kept whatever its draw (only reached when h_u is near 0 or 1 for many tries in a row). */
static inline void sbm_draw_het(const gen_ctx *g, halo_rng *r, uint32_t *src, uint32_t *dst)
{
    int64_t classes = g->p->classes;
    int64_t c = (int64_t)sbm_below(sbm_next(r), (uint64_t)classes);
    uint32_t v = sbm_pick_bits(g, sbm_next(r), c);
    *dst = v;
    uint64_t coin = sbm_next(r) >> 32;
    bool intra = classes == 1 || coin < (g->htab != NULL ? sbm_hthr(g, v) : g->pin);
    if (!intra) {
        if ((sbm_next(r) >> 32) < g->ptwin && (c ^ 1) < classes) {
            c ^= 1;
        } else {
            int64_t o = (int64_t)sbm_below(sbm_next(r), (uint64_t)(classes - 1));
            c = o >= c ? o + 1 : o;
        }
    }
    uint32_t u = sbm_pick_bits(g, sbm_next(r), c);
    if (g->htab != NULL) {
        for (int t = 1; t < GEN_TRIES; t++) {
            uint64_t hu = sbm_hthr(g, u), y = sbm_next(r) >> 32;
            if (intra ? y < hu : y >= hu) {
                break;
            }
            u = sbm_pick_bits(g, sbm_next(r), c);
        }
    }
    *src = u;
}

/* Edges of chunk `chunk` of the stream, permuted, without self-loops; returns their count. */
static int gen_chunk(const gen_ctx *gin, int64_t chunk, int32_t *src, int32_t *dst)
{
    /* A private copy of the context: the stores to src/dst may alias *gin (the build uses
     * -fno-strict-aliasing), which made every draw reload the keys and tables from memory. */
    const gen_ctx gl = *gin;
    const gen_ctx *g = &gl;
    int64_t start = chunk * GEN_CHUNK;
    int64_t cnt = g->draws - start < GEN_CHUNK ? g->draws - start : GEN_CHUNK;
    halo_rng r;
    halo_rng_init(&r, g->p->seed, HALO_RNG_GEN_EDGES, (uint64_t)chunk, 0, 0);
    uint32_t n = (uint32_t)g->n;
    int out = 0;
    if (g->p->model == HALO_GEN_RMAT) {
        for (int64_t i = 0; i < cnt; i++) {
            uint32_t u, v;
            do {
                rmat_draw(g, &r, &u, &v);
            } while (u >= n || v >= n);
            if (u == v) {
                continue;
            }
            src[out] = (int32_t)gen_perm(g, u);
            dst[out] = (int32_t)gen_perm(g, v);
            out++;
        }
        return out;
    }
    for (int64_t i = 0; i < cnt; i++) {
        uint32_t u, v;
        if (g->het) {
            sbm_draw_het(g, &r, &u, &v);
        } else {
            sbm_draw(g, &r, &u, &v);
        }
        if (u == v) {
            continue;
        }
        src[out] = (int32_t)gen_perm(g, u);
        dst[out] = (int32_t)gen_perm(g, v);
        out++;
    }
    return out;
}

/* Fisher-Yates permutation of [0, n) from one stream keyed by (seed, purpose). */
static int32_t *gen_permutation(uint64_t seed, int purpose, int64_t n)
{
    int32_t *perm = HALO_ALLOC(int32_t, n);
    for (int64_t i = 0; i < n; i++) {
        perm[i] = (int32_t)i;
    }
    halo_rng r;
    halo_rng_init(&r, seed, (uint64_t)purpose, 0, 0, 0);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)halo_rng_below(&r, (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    return perm;
}

/* Continued fraction of the regularised incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-13) {
            break;
        }
    }
    return h;
}

/* CDF of Beta(a, b) at x (the regularised incomplete beta function I_x(a, b)). */
static double beta_cdf(double a, double b, double x)
{
    if (x <= 0) {
        return 0;
    }
    if (x >= 1) {
        return 1;
    }
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) {
        return front * beta_cf(a, b, x) / a;
    }
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* The 2^GEN_HBITS quantiles at (i + 1/2) / 2^GEN_HBITS of the Beta distribution with mean m and
 * standard deviation sd (a = m k, b = (1 - m) k, k = m(1-m)/sd^2 - 1), by bisection, as
 * thresholds in 1/2^32. Picking one at random is a draw from the Beta, quantised. */
static uint64_t *beta_table(double m, double sd)
{
    int n = 1 << GEN_HBITS;
    double k = m * (1 - m) / (sd * sd) - 1;
    double a = m * k, b = (1 - m) * k;
    uint64_t *t = HALO_ALLOC(uint64_t, n);
    for (int i = 0; i < n; i++) {
        double q = (i + 0.5) / n, lo = 0, hi = 1;
        for (int it = 0; it < 64; it++) {
            double mid = (lo + hi) / 2;
            if (beta_cdf(a, b, mid) < q) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        t[i] = (uint64_t)llround((lo + hi) / 2 * 4294967296.0);
    }
    return t;
}

static void gen_ctx_free(gen_ctx *g)
{
    halo_free(g->tab);
    halo_free(g->htab);
    g->tab = NULL;
    g->htab = NULL;
}

static int gen_ctx_init(const halo_gen_params *p, gen_ctx *g)
{
    HALO_CHECK(halo_gen_check(p));
    memset(g, 0, sizeof *g);
    g->p = p;
    g->n = p->nodes;
    while ((1LL << g->k) < g->n) {
        g->k++;
    }
    g->mask = (uint32_t)((1ULL << g->k) - 1);
    g->psh = (g->k + 1) / 2;
    halo_rng r;
    halo_rng_init(&r, p->seed, HALO_RNG_PERMUTE, 1, 0, 0);
    for (int i = 0; i < 3; i++) {
        uint64_t x = halo_rng_next(&r);
        g->pkey[i] = (uint32_t)x & g->mask;
        g->pmul[i] = (uint32_t)(x >> 32) | 1u;
    }
    if (p->model == HALO_GEN_RMAT) {
        g->draws = (int64_t)llround(p->degree * (double)g->n);
        /* Noisy SKG (Seshadhri, Pinar, Kolda 2013): each level shifts b and c by mu and a, d
         * against them, which removes the oscillating degree distribution of plain R-MAT. */
        double d = 1 - p->a - p->b - p->c;
        double lim = 0.1;
        lim = p->b < lim ? p->b : lim;
        lim = p->c < lim ? p->c : lim;
        lim = (p->a + d) / 2 < lim ? (p->a + d) / 2 : lim;
        halo_rng_init(&r, p->seed, HALO_RNG_GEN_EDGES, UINT64_MAX, 0, 0);
        g->groups = (g->k + RMAT_LEVELS - 1) / RMAT_LEVELS;
        g->drop = RMAT_LEVELS * g->groups - g->k;
        double q[RMAT_GROUPS * RMAT_LEVELS][4];
        for (int l = 0; l < RMAT_LEVELS * g->groups; l++) {
            double mu = lim * (2 * halo_rng_uniform(&r) - 1);
            q[l][0] = p->a - 2 * mu * p->a / (p->a + d);
            q[l][1] = p->b + mu;
            q[l][2] = p->c + mu;
            q[l][3] = 1 - q[l][0] - q[l][1] - q[l][2];
            q[l][3] = q[l][3] > 0 ? q[l][3] : 0;
        }
        g->tab = HALO_ALLOC(uint64_t, (size_t)g->groups * RMAT_TABLE);
        for (int i = 0; i < g->groups; i++) {
            rmat_table_init(g->tab + (size_t)i * RMAT_TABLE, &q[RMAT_LEVELS * i]);
        }
    } else {
        double deg = p->degree_in + p->degree_out;
        g->draws = (int64_t)llround(deg * (double)g->n / (p->directed ? 1 : 2));
        g->pin = (uint64_t)llround(p->degree_in / deg * 4294967296.0);
        g->expo = 1.0 + p->skew;
        g->het = p->homophily_sd > 0 || p->affinity > 0;
        g->ptwin = (uint64_t)llround(p->affinity * 4294967296.0);
        g->hkey = halo_hash5(p->seed, HALO_RNG_GEN_LABEL, 1, 0, 0);
        if (p->homophily_sd > 0 && p->classes > 1) {
            g->htab = beta_table(p->degree_in / deg, p->homophily_sd);
        }
    }
    return 0;
}

/* Asks for transparent huge pages on the whole 2 MiB pages inside [p, p + bytes), before they
 * are first touched. The count and fill passes hit the offsets and indices at random; with 4 KiB
 * pages nearly every such access also misses the TLB. Only a hint: errors are ignored. */
static void gen_hugepages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo) {
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)bytes;
#endif
}

/* Builds the in-edge CSR: pass 1 counts in-degrees, pass 2 fills each row from its end
 * (so the offsets array doubles as the fill cursor), then every row is sorted and duplicates
 * removed in place. (Staging the fill in per-row-range buckets was tried and measured no
 * faster at scales 20 and 22.) Peak memory: 8(n+1) + 4 * raw edges. */
static void gen_csr(const gen_ctx *g, int64_t **indptr_out, int32_t **indices_out,
                    int64_t *edges_out)
{
    int64_t n = g->n;
    bool sym = !g->p->directed;
    int64_t *off = HALO_NEW(int64_t, n + 1);
    gen_hugepages(off, (size_t)(n + 1) * sizeof *off);
    int32_t *src = HALO_ALLOC(int32_t, GEN_CHUNK), *dst = HALO_ALLOC(int32_t, GEN_CHUNK);
    int64_t chunks = (g->draws + GEN_CHUNK - 1) / GEN_CHUNK;
    halo_progress pr;
    halo_progress_begin(&pr, "gen: edges", (uint64_t)chunks * 2);
    for (int64_t ch = 0; ch < chunks; ch++) {
        int m = gen_chunk(g, ch, src, dst);
        for (int i = 0; i < m; i++) {
            off[dst[i] + 1]++;
        }
        if (sym) {
            for (int i = 0; i < m; i++) {
                off[src[i] + 1]++;
            }
        }
        if ((ch & 255) == 0) {
            halo_progress_update(&pr, (uint64_t)ch);
        }
    }
    for (int64_t v = 0; v < n; v++) {
        off[v + 1] += off[v];
    }
    int64_t raw = off[n];
    int32_t *ind = HALO_ALLOC(int32_t, raw > 0 ? raw : 1);
    gen_hugepages(ind, (size_t)raw * sizeof *ind);
    for (int64_t ch = 0; ch < chunks; ch++) {
        int m = gen_chunk(g, ch, src, dst);
        for (int i = 0; i < m; i++) {
            ind[--off[dst[i] + 1]] = src[i];
            if (sym) {
                ind[--off[src[i] + 1]] = dst[i];
            }
        }
        if ((ch & 255) == 0) {
            halo_progress_update(&pr, (uint64_t)(chunks + ch));
        }
    }
    halo_progress_end(&pr);
    halo_free(src);
    halo_free(dst);
    /* off[v+1] is now the start of row v; shift so that off[v] is. */
    memmove(off, off + 1, (size_t)n * sizeof *off);
    off[n] = raw;
    int64_t w = 0, a = 0, longest = 0;
    for (int64_t v = 0; v < n; v++) {
        longest = off[v + 1] - off[v] > longest ? off[v + 1] - off[v] : longest;
    }
    int32_t *tmp = HALO_ALLOC(int32_t, longest > 0 ? longest : 1);
    for (int64_t v = 0; v < n; v++) {
        int64_t b = off[v + 1];
        if (b - a >= 256) {
            halo_sort_i32_radix(ind + a, b - a, g->k, tmp);
        } else {
            halo_sort_i32(ind + a, b - a);
        }
        off[v] = w;
        for (int64_t i = a; i < b; i++) {
            if (i == a || ind[i] != ind[w - 1]) {
                ind[w++] = ind[i];
            }
        }
        a = b;
    }
    off[n] = w;
    halo_free(tmp);
    if (w < raw) {
        ind = halo_realloc(ind, (size_t)(w > 0 ? w : 1) * sizeof *ind);
    }
    halo_debug("gen: %lld edges drawn, %lld after removing duplicates", (long long)raw,
               (long long)w);
    *indptr_out = off;
    *indices_out = ind;
    *edges_out = w;
}

/* Sorts row[0..len) ascending and removes duplicates in place (radix sort through tmp for long
 * rows); returns the new length. */
static int64_t gen_row_dedup(int32_t *row, int64_t len, int bits, int32_t *tmp)
{
    if (len >= 256) {
        halo_sort_i32_radix(row, len, bits, tmp);
    } else {
        halo_sort_i32(row, len);
    }
    int64_t w = 0;
    for (int64_t i = 0; i < len; i++) {
        if (i == 0 || row[i] != row[w - 1]) {
            row[w++] = row[i];
        }
    }
    return w;
}

/* The CSR bytes halo_gen_write may build in memory: HALO_GEN_MAX_BYTES when set (a number,
 * "1e9" allowed), else GEN_MEM_DEFAULT. */
static uint64_t gen_mem_budget(void)
{
    const char *env = getenv("HALO_GEN_MAX_BYTES");
    if (env != NULL && env[0] != '\0') {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v >= 0) {
            return (uint64_t)v;
        }
        halo_warn("HALO_GEN_MAX_BYTES=%s is not a byte count; using %llu", env,
                  (unsigned long long)GEN_MEM_DEFAULT);
    }
    return GEN_MEM_DEFAULT;
}

/* Bytes gen_csr would hold at its peak for g: offsets plus every drawn edge (both directions). */
static uint64_t gen_csr_bytes(const gen_ctx *g)
{
    uint64_t raw = (uint64_t)g->draws * (g->p->directed ? 1u : 2u);
    return 8 * ((uint64_t)g->n + 1) + 4 * raw;
}

/* One bucket of the spilled generator: an unlinked temporary file of (row << 32 | source)
 * entries for the rows [b << shift, (b + 1) << shift), and its staging buffer. */
typedef struct gen_bucket {
    int fd;          /* the file (already unlinked: the data goes when it is closed) */
    int64_t entries; /* entries written to the file so far */
    int staged;      /* entries in stage not written yet */
    uint64_t *stage; /* [GEN_BUCKET_STAGE] staging buffer */
} gen_bucket;

/* Writes all n bytes of buf to fd (a bucket file; what names it in messages). */
static int gen_write_fd(int fd, const void *buf, size_t n, const char *what)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return halo_errorf(HALO_EIO, "%s: write: %s", what, w < 0 ? strerror(errno) :
                               "no progress");
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Appends entry e to bucket b, writing its staging buffer out when full. */
static inline int gen_bucket_put(gen_bucket *b, uint64_t e, const char *what)
{
    b->stage[b->staged++] = e;
    if (b->staged == GEN_BUCKET_STAGE) {
        b->staged = 0;
        b->entries += GEN_BUCKET_STAGE;
        return gen_write_fd(b->fd, b->stage, GEN_BUCKET_STAGE * sizeof(uint64_t), what);
    }
    return 0;
}

/* Builds the in-edge CSR straight into tmp/indptr.i64 and tmp/indices.i32 for a graph too big to
 * hold in memory (gen_csr_bytes over the budget). One pass over the edge stream (gen_csr walks it
 * twice) sorts every entry (row, source) -- both directions of a symmetrised edge -- into bucket
 * files by row range, 2^shift rows each (about GEN_BUCKET_ENTRIES entries); then each bucket in
 * turn is read back, made into its rows' CSR, every row sorted and deduplicated, and appended to
 * the two files. The rows are the same sets as gen_csr's, so the output is byte-identical. Peak
 * memory: the staging buffers (256 KiB per bucket) and one bucket (16 bytes per entry, buckets
 * made smaller when budget is); disk: 8 bytes per entry in the bucket files (freed bucket by
 * bucket) next to the graph itself. */
static int gen_csr_spilled(const gen_ctx *g, const char *tmp, uint64_t budget, uint32_t *crc,
                           uint64_t *bytes, int64_t *edges_out)
{
    int64_t n = g->n;
    bool sym = !g->p->directed;
    uint64_t raw_est = (uint64_t)g->draws * (sym ? 2u : 1u);
    /* entries per bucket: GEN_BUCKET_ENTRIES, or fewer when the budget is smaller than one
     * bucket's 16 bytes per entry (entry, row data, sort buffer) */
    uint64_t target = budget / 16 < GEN_BUCKET_ENTRIES ? budget / 16 : GEN_BUCKET_ENTRIES;
    target = target > 0 ? target : 1;
    int shift = 0;
    while (shift < 31 && ((uint64_t)2 << shift) * raw_est <= (uint64_t)n * target) {
        shift++; /* 2^(shift+1) rows would still hold at most `target` entries on average */
    }
    while ((((uint64_t)n + ((1ull << shift) - 1)) >> shift) > GEN_BUCKETS_MAX) {
        shift++;
    }
    int nb = (int)(((uint64_t)n + ((1ull << shift) - 1)) >> shift);
    char path[4096], what[4200];
    int rc = 0;
    halo_writer *wp = NULL, *wi = NULL;
    gen_bucket *bk = HALO_NEW(gen_bucket, nb);
    for (int b = 0; b < nb; b++) {
        bk[b].fd = -1;
    }
    int32_t *src = HALO_ALLOC(int32_t, GEN_CHUNK), *dst = HALO_ALLOC(int32_t, GEN_CHUNK);
    uint64_t *ent = NULL;
    int64_t *off = NULL, *pos = NULL;
    int32_t *ind = NULL, *sorttmp = NULL;
    snprintf(what, sizeof what, "%s/bucket files", tmp);
    for (int b = 0; b < nb; b++) {
        char name[64];
        snprintf(name, sizeof name, ".bucket-%d", b);
        HALO_TRY(halo_path_join(path, sizeof path, tmp, name));
        bk[b].fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (bk[b].fd < 0) {
            rc = halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
            goto fail;
        }
        unlink(path);
        bk[b].stage = HALO_ALLOC(uint64_t, GEN_BUCKET_STAGE);
    }
    halo_debug("gen: spilling %llu edge entries into %d buckets of %lld rows",
               (unsigned long long)raw_est, nb, 1LL << shift);

    /* The one pass over the edge stream. */
    int64_t chunks = (g->draws + GEN_CHUNK - 1) / GEN_CHUNK;
    halo_progress pr;
    halo_progress_begin(&pr, "gen: edges", (uint64_t)chunks);
    for (int64_t ch = 0; ch < chunks && rc == 0; ch++) {
        int m = gen_chunk(g, ch, src, dst);
        for (int i = 0; i < m && rc == 0; i++) {
            uint32_t u = (uint32_t)src[i], v = (uint32_t)dst[i];
            rc = gen_bucket_put(&bk[v >> shift], (uint64_t)v << 32 | u, what);
            if (sym && rc == 0) {
                rc = gen_bucket_put(&bk[u >> shift], (uint64_t)u << 32 | v, what);
            }
        }
        if ((ch & 255) == 0) {
            halo_progress_update(&pr, (uint64_t)ch);
        }
    }
    halo_progress_end(&pr);
    HALO_TRY(rc);
    int64_t most = 0;
    for (int b = 0; b < nb; b++) {
        gen_bucket *k = &bk[b];
        HALO_TRY(gen_write_fd(k->fd, k->stage, (size_t)k->staged * sizeof(uint64_t), what));
        k->entries += k->staged;
        k->staged = 0;
        halo_free(k->stage);
        k->stage = NULL;
        most = k->entries > most ? k->entries : most;
    }
    halo_free(src);
    halo_free(dst);
    src = dst = NULL;

    /* Bucket by bucket: its rows' CSR, sorted and deduplicated rows, appended to the files. */
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_INDPTR]));
    HALO_TRY(halo_writer_open(path, &wp));
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_INDICES]));
    HALO_TRY(halo_writer_open(path, &wi));
    int64_t rows_max = 1LL << shift;
    ent = HALO_ALLOC(uint64_t, most > 0 ? most : 1);
    ind = HALO_ALLOC(int32_t, most > 0 ? most : 1);
    sorttmp = HALO_ALLOC(int32_t, most > 0 ? most : 1);
    off = HALO_ALLOC(int64_t, rows_max + 1);
    pos = HALO_ALLOC(int64_t, rows_max + 1);
    int64_t w = 0, raw = 0;
    halo_progress_begin(&pr, "gen: rows", (uint64_t)nb);
    for (int b = 0; b < nb; b++) {
        gen_bucket *k = &bk[b];
        int64_t m = k->entries, lo = (int64_t)b << shift;
        int64_t rows = n - lo < rows_max ? n - lo : rows_max;
        size_t want = (size_t)m * sizeof *ent, got = 0;
        while (got < want) {
            ssize_t r = pread(k->fd, (char *)ent + got, want - got, (off_t)got);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0) {
                rc = halo_errorf(HALO_EIO, "%s: read of bucket %d: %s", what, b,
                                 r < 0 ? strerror(errno) : "file too short");
                goto fail;
            }
            got += (size_t)r;
        }
        close(k->fd);
        k->fd = -1;
        memset(off, 0, (size_t)(rows + 1) * sizeof *off);
        for (int64_t i = 0; i < m; i++) {
            off[(int64_t)(ent[i] >> 32) - lo + 1]++;
        }
        for (int64_t r = 0; r < rows; r++) {
            off[r + 1] += off[r];
        }
        memcpy(pos, off, (size_t)rows * sizeof *pos);
        for (int64_t i = 0; i < m; i++) {
            ind[pos[(int64_t)(ent[i] >> 32) - lo]++] = (int32_t)(uint32_t)ent[i];
        }
        int64_t wl = 0;
        for (int64_t r = 0; r < rows; r++) {
            int64_t a = off[r], len = off[r + 1] - a;
            pos[r] = w + wl; /* indptr entry of row lo + r */
            int64_t kept = gen_row_dedup(ind + a, len, g->k, sorttmp);
            memmove(ind + wl, ind + a, (size_t)kept * sizeof *ind);
            wl += kept;
        }
        HALO_TRY(halo_writer_put(wp, pos, (size_t)rows * sizeof *pos));
        HALO_TRY(halo_writer_put(wi, ind, (size_t)wl * sizeof *ind));
        w += wl;
        raw += m;
        halo_progress_update(&pr, (uint64_t)b + 1);
    }
    halo_progress_end(&pr);
    HALO_TRY(halo_writer_put(wp, &w, sizeof w));
    rc = halo_writer_close(wp, &crc[HALO_GA_INDPTR], &bytes[HALO_GA_INDPTR]);
    wp = NULL;
    HALO_TRY(rc);
    rc = halo_writer_close(wi, &crc[HALO_GA_INDICES], &bytes[HALO_GA_INDICES]);
    wi = NULL;
    HALO_TRY(rc);
    halo_debug("gen: %lld edges drawn, %lld after removing duplicates", (long long)raw,
               (long long)w);
    *edges_out = w;
fail:
    for (int b = 0; b < nb; b++) {
        if (bk[b].fd >= 0) {
            close(bk[b].fd);
        }
        halo_free(bk[b].stage);
    }
    halo_free(bk);
    halo_writer_discard(wp);
    halo_writer_discard(wi);
    halo_free(src);
    halo_free(dst);
    halo_free(ent);
    halo_free(ind);
    halo_free(sorttmp);
    halo_free(off);
    halo_free(pos);
    return rc;
}

/* Class means: row c of a classes x feat_dim matrix, entries N(0, 1). With twin_corr t > 0,
 * twin classes (c, c xor 1) share part of their mean: sqrt(1 - t) z_c + sqrt(t) z_pair, still
 * N(0, 1) per entry, with correlation t between the twins (a class without twin keeps z_c). */
static float *gen_means(const halo_gen_params *p)
{
    size_t f = (size_t)p->feat_dim;
    float *mu = HALO_ALLOC(float, (size_t)p->classes * f + 1);
    double t = p->twin_corr, own = sqrt(1 - t), shared = sqrt(t);
    for (int c = 0; c < p->classes; c++) {
        halo_rng r, rp;
        halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)c, 1, 0);
        halo_rng_init(&rp, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)(c / 2), 2, 0);
        bool twin = t > 0 && (c ^ 1) < p->classes;
        for (size_t j = 0; j < f; j++) {
            double z = halo_rng_normal(&r);
            mu[(size_t)c * f + j] = twin ? (float)(own * z + shared * halo_rng_normal(&rp))
                                         : (float)z;
        }
    }
    return mu;
}

/* Feature row of node v of class cls: its class mean plus Gaussian noise (Box-Muller pairs). */
static void gen_feat_row(const halo_gen_params *p, const float *mu, int32_t cls, int64_t v,
                         float *row)
{
    halo_rng r;
    halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)v, 0, 0);
    int f = p->feat_dim;
    const float *m = mu + (size_t)cls * (size_t)f;
    for (int j = 0; j < f; j += 2) {
        double u1 = halo_rng_uniform(&r), u2 = halo_rng_uniform(&r);
        double rad = sqrt(-2.0 * log(u1 > 1e-300 ? u1 : 1e-300)) * p->noise;
        double ang = 6.283185307179586 * u2;
        row[j] = m[j] + (float)(rad * cos(ang));
        if (j + 1 < f) {
            row[j + 1] = m[j + 1] + (float)(rad * sin(ang));
        }
    }
}

/* Latent class of every node, in node id order. */
static int32_t *gen_classes(const gen_ctx *g)
{
    int32_t *cls = HALO_ALLOC(int32_t, g->n);
    for (int64_t x = 0; x < g->n; x++) {
        cls[gen_perm(g, (uint32_t)x)] = gen_class(g, x);
    }
    return cls;
}

/* Observed label of node v of latent class cls: with probability label_noise a class drawn
 * uniformly (it may be cls again), from a stream keyed by (seed, v) alone, so independent of
 * the node's edges and features; else cls. */
static int32_t gen_label(const halo_gen_params *p, int64_t v, int32_t cls)
{
    if (!(p->label_noise > 0)) {
        return cls;
    }
    halo_rng r;
    halo_rng_init(&r, p->seed, HALO_RNG_GEN_LABEL, 2, (uint64_t)v, 0);
    if (halo_rng_uniform(&r) < p->label_noise) {
        return (int32_t)halo_rng_below(&r, (uint64_t)p->classes);
    }
    return cls;
}

/* Split of every node: the first `train` nodes of a random order are train, then valid, test. */
static uint8_t *gen_split(const halo_gen_params *p)
{
    int32_t *order = gen_permutation(p->seed, HALO_RNG_SPLIT, p->nodes);
    uint8_t *split = HALO_NEW(uint8_t, p->nodes);
    int64_t tr, va, te;
    halo_gen_split_sizes(p, &tr, &va, &te);
    int64_t t1 = tr, t2 = t1 + va, t3 = t2 + te;
    for (int64_t i = 0; i < t3; i++) {
        split[order[i]] = i < t1 ? HALO_SPLIT_TRAIN : i < t2 ? HALO_SPLIT_VALID : HALO_SPLIT_TEST;
    }
    halo_free(order);
    return split;
}

static void gen_fill_meta(const halo_gen_params *p, int64_t edges, halo_graph *g)
{
    snprintf(g->name, sizeof g->name, "%s", p->name);
    g->nodes = p->nodes;
    g->edges = edges;
    g->feat_dim = p->feat_dim;
    g->classes = p->classes;
    g->directed = p->directed;
    g->topology_only = p->topology_only;
    g->ntypes = 1;
}

int halo_gen_graph(const halo_gen_params *p, halo_graph **out)
{
    gen_ctx g;
    *out = NULL;
    HALO_CHECK(gen_ctx_init(p, &g));
    int64_t *indptr;
    int32_t *indices;
    int64_t edges;
    gen_csr(&g, &indptr, &indices, &edges);
    gen_ctx_free(&g);
    halo_graph *gr = halo_graph_alloc(p->nodes, 0, p->topology_only ? 0 : p->feat_dim,
                                      p->classes, 1);
    gen_fill_meta(p, edges, gr);
    if (p->topology_only) {
        halo_graph_drop_features(gr);
    }
    halo_free(gr->indptr);
    halo_free(gr->indices);
    gr->indptr = indptr;
    gr->indices = indices;
    halo_free(gr->label);
    gr->label = gen_classes(&g);
    halo_free(gr->split);
    gr->split = gen_split(p);
    float *mu = p->topology_only ? NULL : gen_means(p);
    for (int64_t v = 0; v < p->nodes; v++) {
        if (!p->topology_only) {
            gen_feat_row(p, mu, gr->label[v], v, gr->feat + (size_t)v * (size_t)p->feat_dim);
        }
        gr->label[v] = gen_label(p, v, gr->label[v]);
        if (p->label_split_only && gr->split[v] == HALO_SPLIT_NONE) {
            gr->label[v] = -1;
        }
    }
    halo_free(mu);
    *out = gr;
    return 0;
}

/* Writes n bytes to tmp/name, recording its CRC and size in slot `which`. */
static int gen_put_file(const char *tmp, int which, const void *data, uint64_t n, uint32_t *crc,
                        uint64_t *bytes)
{
    char path[4096];
    HALO_CHECK(halo_path_join(path, sizeof path, tmp, halo_graph_files[which]));
    HALO_CHECK(halo_file_write_all(path, data, (size_t)n));
    crc[which] = halo_crc32(0, data, (size_t)n);
    bytes[which] = n;
    return 0;
}

/* Streams label.i32 (masked) and feat.f32 (none when topology-only) row block by row block. */
static int gen_write_nodes(const halo_gen_params *p, const char *tmp, const int32_t *cls,
                           const uint8_t *split, uint32_t *crc, uint64_t *bytes)
{
    char path[4096];
    halo_writer *lw = NULL, *fw = NULL;
    int rc = 0;
    bool feat = !p->topology_only;
    size_t f = feat ? (size_t)p->feat_dim : 0;
    float *rows = HALO_ALLOC(float, GEN_ROWS * f + 1);
    int32_t *labels = HALO_ALLOC(int32_t, GEN_ROWS);
    float *mu = feat ? gen_means(p) : NULL;
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_LABEL]));
    HALO_TRY(halo_writer_open(path, &lw));
    if (feat) {
        HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_FEAT]));
        HALO_TRY(halo_writer_open(path, &fw));
    }
    halo_progress pr;
    halo_progress_begin(&pr, feat ? "gen: features" : "gen: labels", (uint64_t)p->nodes);
    for (int64_t v0 = 0; v0 < p->nodes; v0 += GEN_ROWS) {
        int64_t cnt = p->nodes - v0 < GEN_ROWS ? p->nodes - v0 : GEN_ROWS;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t v = v0 + i;
            if (feat) {
                gen_feat_row(p, mu, cls[v], v, rows + (size_t)i * f);
            }
            labels[i] = p->label_split_only && split[v] == HALO_SPLIT_NONE ? -1
                                                                           : gen_label(p, v, cls[v]);
        }
        HALO_TRY(halo_writer_put(lw, labels, (size_t)cnt * sizeof *labels));
        if (feat) {
            HALO_TRY(halo_writer_put(fw, rows, (size_t)cnt * f * sizeof *rows));
        }
        halo_progress_update(&pr, (uint64_t)(v0 + cnt));
    }
    halo_progress_end(&pr);
    rc = halo_writer_close(lw, &crc[HALO_GA_LABEL], &bytes[HALO_GA_LABEL]);
    lw = NULL;
    if (rc == 0 && fw != NULL) {
        rc = halo_writer_close(fw, &crc[HALO_GA_FEAT], &bytes[HALO_GA_FEAT]);
    } else {
        halo_writer_discard(fw);
    }
    fw = NULL;
fail:
    halo_writer_discard(lw);
    halo_writer_discard(fw);
    halo_free(rows);
    halo_free(labels);
    halo_free(mu);
    return rc;
}

int halo_gen_write(const halo_gen_params *p, const char *dir)
{
    gen_ctx g;
    char tmp[4096];
    uint32_t crc[HALO_GA_COUNT] = {0};
    uint64_t bytes[HALO_GA_COUNT] = {0};
    int32_t *cls = NULL;
    uint8_t *split = NULL;
    char *source = NULL;
    int rc = 0;
    HALO_CHECK(gen_ctx_init(p, &g));
    rc = halo_outdir_begin(dir, "indptr.i64", "graph", tmp, sizeof tmp);
    if (rc < 0) {
        gen_ctx_free(&g);
        return rc;
    }
    int64_t edges = 0;
    uint64_t budget = gen_mem_budget();
    if (gen_csr_bytes(&g) <= budget) {
        int64_t *indptr;
        int32_t *indices;
        gen_csr(&g, &indptr, &indices, &edges);
        rc = gen_put_file(tmp, HALO_GA_INDPTR, indptr, (uint64_t)(p->nodes + 1) * 8, crc, bytes);
        if (rc == 0) {
            rc = gen_put_file(tmp, HALO_GA_INDICES, indices, (uint64_t)edges * 4, crc, bytes);
        }
        halo_free(indptr);
        halo_free(indices);
    } else {
        rc = gen_csr_spilled(&g, tmp, budget, crc, bytes, &edges);
    }
    gen_ctx_free(&g);
    if (rc < 0) {
        goto fail;
    }
    cls = gen_classes(&g);
    split = gen_split(p);
    HALO_TRY(gen_put_file(tmp, HALO_GA_SPLIT, split, (uint64_t)p->nodes, crc, bytes));
    HALO_TRY(gen_write_nodes(p, tmp, cls, split, crc, bytes));
    halo_graph meta;
    memset(&meta, 0, sizeof meta);
    gen_fill_meta(p, edges, &meta);
    source = halo_gen_source_json(p);
    HALO_TRY(halo_graph_write_meta(&meta, tmp, crc, bytes, source));
    HALO_TRY(halo_outdir_commit(tmp, dir));
    halo_free(cls);
    halo_free(split);
    halo_free(source);
    return 0;
fail:
    halo_outdir_abort(tmp);
    halo_free(cls);
    halo_free(split);
    halo_free(source);
    return rc;
}
