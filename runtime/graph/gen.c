/* Generators' edge stream: a deterministic stream of R-MAT or SBM edges in keyed chunks, walked
 * twice to build the in-edge CSR in memory (in-degrees, then the rows in place, sorted and
 * deduplicated). The parameters: gen_params.c; a CSR too big for memory: gen_spill.c; node
 * data and output: gen_write.c. */
#include "graph/gen_int.h"

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

#define GEN_TRIES 64   /* sbm: source candidates tried before the last one is taken anyway */

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
int halo_gen_chunk(const gen_ctx *gin, int64_t chunk, int32_t *src, int32_t *dst)
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
int32_t *halo_gen_permutation(uint64_t seed, int purpose, int64_t n)
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

void halo_gen_ctx_free(gen_ctx *g)
{
    halo_free(g->tab);
    halo_free(g->htab);
    g->tab = NULL;
    g->htab = NULL;
}

int halo_gen_ctx_init(const halo_gen_params *p, gen_ctx *g)
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
void halo_gen_csr(const gen_ctx *g, int64_t **indptr_out, int32_t **indices_out,
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
        int m = halo_gen_chunk(g, ch, src, dst);
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
        int m = halo_gen_chunk(g, ch, src, dst);
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
int64_t halo_gen_row_dedup(int32_t *row, int64_t len, int bits, int32_t *tmp)
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

/* Latent class of every node, in node id order. */
int32_t *halo_gen_classes(const gen_ctx *g)
{
    int32_t *cls = HALO_ALLOC(int32_t, g->n);
    for (int64_t x = 0; x < g->n; x++) {
        cls[gen_perm(g, (uint32_t)x)] = gen_class(g, x);
    }
    return cls;
}

halo_graph *halo_gen_random(int64_t n, int deg_lo, int deg_hi, uint64_t key, int classes)
{
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, key, 0, 0);
    int64_t *deg = HALO_ALLOC(int64_t, n);
    int64_t m = 0;
    for (int64_t v = 0; v < n; v++) {
        deg[v] = deg_lo + (int64_t)halo_rng_below(&r, (uint64_t)(deg_hi - deg_lo) + 1);
        m += deg[v];
    }
    halo_graph *g = halo_graph_alloc(n, m, 0, classes, 0);
    g->indptr[0] = 0;
    for (int64_t v = 0; v < n; v++) {
        g->indptr[v + 1] = g->indptr[v] + deg[v];
    }
    for (int64_t e = 0; e < m; e++) {
        g->indices[e] = (int32_t)halo_rng_below(&r, (uint64_t)n);
    }
    halo_free(deg);
    return g;
}
