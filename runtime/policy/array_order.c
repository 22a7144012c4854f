/* halo arrays, ordering: stable sorts and argsort, unique, search in a sorted array, and
 * top-k (a heap for a few of many, else radix selection over order-preserving keys). */
#include "policy/array_impl.h"

#include "core/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- methods: ordering ---- */

/* Total order used by every sort: ascending, NaN after every number, ties by position. */
#define KEY_LESS(x, y) ((x) < (y) || ((y) != (y) && (x) == (x)))

/* Stable merge sort of the positions idx[0..n) by the values v (ascending, or descending when
 * desc: the larger value first, ties still by position). */
#define DEFINE_MSORT(NAME, T)                                                                      \
    static void NAME(const T *v, int32_t *idx, int32_t *tmp, int64_t n, bool desc)                 \
    {                                                                                              \
        for (int64_t w = 1; w < n; w *= 2) {                                                       \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                                            \
                int64_t mid = lo + w < n ? lo + w : n;                                             \
                int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                                      \
                int64_t i = lo, j = mid, k = lo;                                                   \
                if (mid >= hi || !(desc ? KEY_LESS(v[idx[mid - 1]], v[idx[mid]])                   \
                                        : KEY_LESS(v[idx[mid]], v[idx[mid - 1]]))) {               \
                    memcpy(tmp + lo, idx + lo, (size_t)(hi - lo) * sizeof *idx);                   \
                    continue;                                                                      \
                }                                                                                  \
                while (i < mid && j < hi) {                                                        \
                    T a = v[idx[i]], b = v[idx[j]];                                                \
                    bool take_j = desc ? KEY_LESS(a, b) : KEY_LESS(b, a);                          \
                    tmp[k++] = take_j ? idx[j++] : idx[i++];                                       \
                }                                                                                  \
                while (i < mid) {                                                                  \
                    tmp[k++] = idx[i++];                                                           \
                }                                                                                  \
                while (j < hi) {                                                                   \
                    tmp[k++] = idx[j++];                                                           \
                }                                                                                  \
            }                                                                                      \
            memcpy(idx, tmp, (size_t)n * sizeof *idx);                                             \
        }                                                                                          \
    }
DEFINE_MSORT(msort_i32, int32_t)
DEFINE_MSORT(msort_i64, int64_t)
DEFINE_MSORT(msort_f32, float)
DEFINE_MSORT(msort_f64, double)
DEFINE_MSORT(msort_u8, uint8_t)

/* Fills idx with the stable (desc) order of a's elements; tmp is scratch of n entries. */
static void order(const halo_policy_array *a, int32_t *idx, int32_t *tmp, bool desc)
{
    int64_t n = a->n;
    for (int64_t i = 0; i < n; i++) {
        idx[i] = (int32_t)i;
    }
    switch (a->type) {
    case HALO_PA_I32: msort_i32(a->data, idx, tmp, n, desc); break;
    case HALO_PA_I64: msort_i64(a->data, idx, tmp, n, desc); break;
    case HALO_PA_F32: msort_f32(a->data, idx, tmp, n, desc); break;
    case HALO_PA_F64: msort_f64(a->data, idx, tmp, n, desc); break;
    default: msort_u8(a->data, idx, tmp, n, desc); break;
    }
}

static int64_t log2_ceil(int64_t n)
{
    int64_t l = 1;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

/* Pushes the (desc) order of a as a new int32 array. */
static halo_policy_array *push_order(lua_State *L, halo_policy_array *a, bool desc)
{
    halo_policy_charge(L, a->n * log2_ceil(a->n));
    halo_policy_array *o = halo_policy_new_raw(L, HALO_PA_I32, a->n);
    halo_policy_array *t = halo_policy_new_raw(L, HALO_PA_I32, a->n);
    order(a, o->data, t->data, desc);
    lua_pop(L, 1);
    return o;
}

static int m_argsort(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    push_order(L, a, lua_toboolean(L, 2));
    return 1;
}

static int m_sort(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *o = push_order(L, a, lua_toboolean(L, 2));
    halo_policy_array *v = halo_policy_new_raw(L, a->type, a->n);
    const int32_t *k = o->data;
    int64_t n = a->n;
    TYPED(
        a->type, const T *p = a->data; T *q = v->data;
        for (int64_t i = 0; i < n; i++) { q[i] = p[k[i]]; })
    return 1;
}

static int m_unique(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *o = push_order(L, a, false);
    const int32_t *k = o->data;
    int64_t n = a->n, c = 0;
    /* Count distinct values (NaN values are all kept, each unequal to the others). */
    TYPED(
        a->type, const T *p = a->data;
        for (int64_t i = 0; i < n; i++) { c += i == 0 || !(p[k[i]] == p[k[i - 1]]); })
    halo_policy_array *v = halo_policy_new_array(L, a->type, c);
    int64_t m = 0;
    TYPED(
        a->type, const T *p = a->data; T *q = v->data; for (int64_t i = 0; i < n; i++) {
            if (i == 0 || !(p[k[i]] == p[k[i - 1]])) {
                q[m++] = p[k[i]];
            }
        })
    return 1;
}

void *halo_policy_scratch(lua_State *L, size_t bytes)
{
    halo_policy *p = halo_policy_of(L);
    if (bytes > p->scratch_bytes) {
        halo_free(p->scratch);
        p->scratch = halo_malloc(bytes);
        p->scratch_bytes = bytes;
    }
    return p->scratch;
}

/* ---- topk: radix selection ----
 * Every element has an unsigned 64-bit key that orders like topk's "better" (a smaller key is
 * better): the value's order-preserving bit pattern (NaN as the largest value, all NaNs equal,
 * -0 equal to 0), complemented when the largest values are wanted. Keys are recomputed from the
 * values in each pass (cheaper than storing 8 bytes per element). Only the bits in which the
 * keys differ matter, and real scores (counts, steps) differ in few bits, so one histogram of the
 * top 11 differing bits usually isolates the k-th best key; further passes go over the survivors
 * only. The k best are collected in position order, and topk puts them best first with a stable
 * LSD radix sort over the bits in which those k keys differ. Ties stay in position order
 * throughout, so the result is exactly that of a comparison sort by (value, position), in
 * O(n + k) per 11 differing bits instead of O(n log k). */

#define DIGIT_BITS 11
#define DIGITS (1 << DIGIT_BITS)

/* Order-preserving key of a double: NaN above +inf (all NaNs equal), -0 equal to +0. */
static inline uint64_t fkey(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    uint64_t neg = 0 - (u >> 63); /* all ones for a negative sign */
    u ^= neg | (1ULL << 63);
    u = x == 0 ? (1ULL << 63) : u;  /* -0 and +0: the key of +0 */
    return x != x ? UINT64_MAX : u; /* branch-free selects */
}

static inline uint64_t key_i32(const void *p, int64_t i)
{
    return (uint64_t)(int64_t)((const int32_t *)p)[i] ^ (1ULL << 63);
}
static inline uint64_t key_i64(const void *p, int64_t i)
{
    return (uint64_t)((const int64_t *)p)[i] ^ (1ULL << 63);
}
static inline uint64_t key_f32(const void *p, int64_t i)
{
    return fkey((double)((const float *)p)[i]);
}
static inline uint64_t key_f64(const void *p, int64_t i)
{
    return fkey(((const double *)p)[i]);
}
static inline uint64_t key_u8(const void *p, int64_t i)
{
    return ((const uint8_t *)p)[i];
}

/* Index of the highest set bit of x (x != 0). */
static inline int high_bit(uint64_t x)
{
    return 63 - __builtin_clzll(x);
}

/* NAME_select(p, n, k, flip, sel, cand): the k best of the n values (1 <= k <= n); writes their
 * positions, ascending, to sel[0..k); cand is scratch of n entries.
 * NAME_sort(p, flip, sel, k, kk, kt, tmp): sorts sel[0..k) (positions, ascending) best first,
 * stably; kk, kt (keys) and tmp (positions) are scratch of k entries. */
#define DEFINE_SELECT(NAME, KEY)                                                                   \
    static void NAME##_select(const void *p, int64_t n, int64_t k, uint64_t flip, int32_t *sel,    \
                              int32_t *cand)                                                       \
    {                                                                                              \
        uint64_t o = 0, d = UINT64_MAX;                                                            \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint64_t key = KEY(p, i);                                                              \
            o |= key;                                                                              \
            d &= key;                                                                              \
        }                                                                                          \
        if (k >= n || o == d) { /* everything, or all equal: the first k positions */              \
            for (int64_t i = 0; i < k; i++) {                                                      \
                sel[i] = (int32_t)i;                                                               \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int sh = high_bit(o ^ d) - (DIGIT_BITS - 1);                                               \
        sh = sh < 0 ? 0 : sh;                                                                      \
        int64_t below = 0, nc = n, need = k;                                                       \
        bool all = false;        /* every survivor of the final bucket is selected */              \
        uint64_t pre = 0;        /* key >> sh of the final bucket */                               \
        const int32_t *c = NULL; /* survivors (NULL = all n) */                                    \
        int32_t hist[DIGITS], h4[4][DIGITS];                                                       \
        for (;;) {                                                                                 \
            /* four histograms, so that runs of equal keys do not wait on one counter */           \
            memset(h4, 0, sizeof h4);                                                              \
            int64_t j = 0;                                                                         \
            for (; j + 4 <= nc; j += 4) {                                                          \
                for (int u = 0; u < 4; u++) {                                                      \
                    int64_t i = c == NULL ? j + u : c[j + u];                                      \
                    h4[u][((KEY(p, i) ^ flip) >> sh) & (DIGITS - 1)]++;                            \
                }                                                                                  \
            }                                                                                      \
            for (; j < nc; j++) {                                                                  \
                h4[0][((KEY(p, c == NULL ? j : c[j]) ^ flip) >> sh) & (DIGITS - 1)]++;             \
            }                                                                                      \
            for (int b = 0; b < DIGITS; b++) {                                                     \
                hist[b] = h4[0][b] + h4[1][b] + h4[2][b] + h4[3][b];                               \
            }                                                                                      \
            int b = 0;                                                                             \
            int64_t cum = 0;                                                                       \
            while (below + cum + hist[b] < k) {                                                    \
                cum += hist[b++];                                                                  \
            }                                                                                      \
            below += cum;                                                                          \
            need = k - below;                                                                      \
            uint64_t any = KEY(p, c == NULL ? 0 : c[0]) ^ flip;                                    \
            pre = ((any >> sh) & ~(uint64_t)(DIGITS - 1)) | (uint64_t)b;                           \
            if (need == hist[b] || sh == 0) {                                                      \
                all = need == hist[b];                                                             \
                break;                                                                             \
            }                                                                                      \
            /* keep the survivors of bucket b, in position order */                                \
            int64_t m = 0;                                                                         \
            uint64_t so = 0, sd = UINT64_MAX;                                                      \
            for (int64_t jj = 0; jj < nc; jj++) { /* branch-free */                                \
                int32_t i = c == NULL ? (int32_t)jj : c[jj];                                       \
                uint64_t key = KEY(p, i) ^ flip;                                                   \
                uint64_t in = (uint64_t)0 - (uint64_t)((key >> sh) == pre);                        \
                cand[m] = i;                                                                       \
                m += in & 1;                                                                       \
                so |= key & in;                                                                    \
                sd &= key | ~in;                                                                   \
            }                                                                                      \
            c = cand;                                                                              \
            nc = m;                                                                                \
            uint64_t diff = (so ^ sd) & ((1ULL << sh) - 1); /* bits below this digit */            \
            if (diff == 0) { /* all equal: the first `need` survivors by position */               \
                sh = 0;                                                                            \
                pre = KEY(p, c[0]) ^ flip;                                                         \
                all = false;                                                                       \
                break;                                                                             \
            }                                                                                      \
            sh = high_bit(diff) - (DIGIT_BITS - 1);                                                \
            sh = sh < 0 ? 0 : sh;                                                                  \
        }                                                                                          \
        /* collect in position order: keys below the bucket, then the bucket (all, or its first    \
         * `need`); branch-free, stops at the k-th */                                              \
        int64_t m = 0, ties = 0;                                                                   \
        for (int64_t i = 0; m < k; i++) {                                                          \
            uint64_t h = (KEY(p, i) ^ flip) >> sh;                                                 \
            int64_t eq = h == pre;                                                                 \
            int64_t take = (h < pre) | (eq & (all | (ties < need)));                               \
            sel[m] = (int32_t)i;                                                                   \
            m += take;                                                                             \
            ties += eq & take;                                                                     \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_sort(const void *p, uint64_t flip, int32_t *sel, int64_t k, uint64_t *kk,   \
                            uint64_t *kt, int32_t *tmp)                                            \
    {                                                                                              \
        /* one pass: the keys and the histograms of all six digits (bits 0-10, 11-21, ...) */      \
        enum { ND = (64 + DIGIT_BITS - 1) / DIGIT_BITS };                                          \
        int32_t cnt[ND][DIGITS];                                                                   \
        memset(cnt, 0, sizeof cnt);                                                                \
        uint64_t o = 0, d = UINT64_MAX;                                                            \
        for (int64_t i = 0; i < k; i++) {                                                          \
            uint64_t key = KEY(p, sel[i]) ^ flip;                                                  \
            kk[i] = key;                                                                           \
            o |= key;                                                                              \
            d &= key;                                                                              \
            for (int g = 0; g < ND; g++) {                                                         \
                cnt[g][(key >> (g * DIGIT_BITS)) & (DIGITS - 1)]++;                                \
            }                                                                                      \
        }                                                                                          \
        uint64_t diff = o ^ d;                                                                     \
        uint64_t *ks = kk, *kd = kt;                                                               \
        int32_t *ss = sel, *sd = tmp;                                                              \
        for (int g = 0; g < ND; g++) {                                                             \
            int sh = g * DIGIT_BITS;                                                               \
            if (((diff >> sh) & (DIGITS - 1)) == 0) {                                              \
                continue; /* every key has the same bits here */                                   \
            }                                                                                      \
            int32_t sum = 0, *c = cnt[g];                                                          \
            for (int b = 0; b < DIGITS; b++) {                                                     \
                int32_t x = c[b];                                                                  \
                c[b] = sum;                                                                        \
                sum += x;                                                                          \
            }                                                                                      \
            for (int64_t i = 0; i < k; i++) { /* stable scatter into the other buffers */          \
                int32_t at = c[(ks[i] >> sh) & (DIGITS - 1)]++;                                    \
                kd[at] = ks[i];                                                                    \
                sd[at] = ss[i];                                                                    \
            }                                                                                      \
            uint64_t *kx = ks;                                                                     \
            ks = kd;                                                                               \
            kd = kx;                                                                               \
            int32_t *sx = ss;                                                                      \
            ss = sd;                                                                               \
            sd = sx;                                                                               \
        }                                                                                          \
        if (ss != sel) {                                                                           \
            memcpy(sel, ss, (size_t)k * sizeof *sel);                                              \
        }                                                                                          \
    }
DEFINE_SELECT(sel_i32, key_i32)
DEFINE_SELECT(sel_i64, key_i64)
DEFINE_SELECT(sel_f32, key_f32)
DEFINE_SELECT(sel_f64, key_f64)
DEFINE_SELECT(sel_u8, key_u8)

/* The dense path: values that are small integers (counts, steps; floats may also be +-inf), as
 * most per-batch scores are. Each value maps to a bucket that orders like "better": value - lo
 * + 1, -inf 0, +inf top (lo, hi: the extremes of the finite values, top = hi - lo + 2), taken
 * from the top when the largest are wanted. With at most DIGITS buckets, one histogram finds the
 * k-th best exactly, a second pass collects, and one counting pass puts the k in order. */
typedef struct dense_map {
    int64_t lo;   /* smallest finite value */
    int64_t top;  /* the largest bucket */
    bool largest; /* larger values are better: bucket = top - (value bucket) */
} dense_map;

#define DEFINE_DENSE(NAME, T, FLOAT)                                                               \
    static bool NAME##_dense(const void *vp, int64_t n, bool largest, dense_map *m)                \
    {                                                                                              \
        const T *p = vp;                                                                           \
        if (FLOAT) {                                                                               \
            /* branch-free, four independent min/max chains (their latency bounds the loop) */     \
            double l4[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};                               \
            double h4[4] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL, -HUGE_VAL};                           \
            bool ok = true;                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                      \
                double v = (double)p[i], av = fabs(v);                                             \
                bool fin = av < 9.0e15; /* (and so exactly convertible) */                         \
                double t = fin ? v : 0.0;                                                          \
                int u = (int)(i & 3);                                                              \
                l4[u] = fin && t < l4[u] ? t : l4[u];                                              \
                h4[u] = fin && t > h4[u] ? t : h4[u];                                              \
                /* an integer, or +-inf; NaN and fractions are not dense */                        \
                ok &= fin ? (double)(int64_t)t == t : av == HUGE_VAL;                              \
            }                                                                                      \
            double lo = fmin(fmin(l4[0], l4[1]), fmin(l4[2], l4[3]));                              \
            double hi = fmax(fmax(h4[0], h4[1]), fmax(h4[2], h4[3]));                              \
            if (lo > hi) {                                                                         \
                lo = hi = 0;                                                                       \
            }                                                                                      \
            if (!ok || hi - lo > DIGITS - 3) {                                                     \
                return false;                                                                      \
            }                                                                                      \
            m->lo = (int64_t)lo;                                                                   \
            m->top = (int64_t)(hi - lo) + 2;                                                       \
        } else {                                                                                   \
            int64_t lo = INT64_MAX, hi = INT64_MIN;                                                \
            for (int64_t i = 0; i < n; i++) {                                                      \
                int64_t v = (int64_t)p[i];                                                         \
                lo = v < lo ? v : lo;                                                              \
                hi = v > hi ? v : hi;                                                              \
            }                                                                                      \
            if ((uint64_t)hi - (uint64_t)lo > DIGITS - 3) {                                        \
                return false;                                                                      \
            }                                                                                      \
            m->lo = lo;                                                                            \
            m->top = hi - lo + 2;                                                                  \
        }                                                                                          \
        m->largest = largest;                                                                      \
        return true;                                                                               \
    }                                                                                              \
    static inline int64_t NAME##_bucket(const void *vp, int64_t i, const dense_map *m)             \
    {                                                                                              \
        double v = (double)((const T *)vp)[i];                                                     \
        int64_t b;                                                                                 \
        if (FLOAT) {                                                                               \
            b = v - v == 0 ? (int64_t)v - m->lo + 1 : (v > 0 ? m->top : 0);                        \
        } else {                                                                                   \
            b = (int64_t)((const T *)vp)[i] - m->lo + 1;                                           \
        }                                                                                          \
        return m->largest ? m->top - b : b;                                                        \
    }                                                                                              \
    static void NAME##_dselect(const void *p, int64_t n, int64_t k, const dense_map *m,            \
                               int32_t *sel, uint16_t *bks)                                        \
    {                                                                                              \
        int32_t h4[4][DIGITS];                                                                     \
        int64_t nb = m->top + 1, j = 0;                                                            \
        for (int u = 0; u < 4; u++) {                                                              \
            memset(h4[u], 0, (size_t)nb * sizeof(int32_t));                                        \
        }                                                                                          \
        for (int64_t i = 0; i < n; i++) { /* the buckets, once */                                  \
            bks[i] = (uint16_t)NAME##_bucket(p, i, m);                                             \
        }                                                                                          \
        for (; j + 4 <= n; j += 4) { /* four histograms: equal runs do not serialise */            \
            h4[0][bks[j]]++;                                                                       \
            h4[1][bks[j + 1]]++;                                                                   \
            h4[2][bks[j + 2]]++;                                                                   \
            h4[3][bks[j + 3]]++;                                                                   \
        }                                                                                          \
        for (; j < n; j++) {                                                                       \
            h4[0][bks[j]]++;                                                                       \
        }                                                                                          \
        int64_t b = 0, below = 0;                                                                  \
        for (;; b++) {                                                                             \
            int64_t c = (int64_t)h4[0][b] + h4[1][b] + h4[2][b] + h4[3][b];                        \
            if (below + c >= k) {                                                                  \
                break;                                                                             \
            }                                                                                      \
            below += c;                                                                            \
        }                                                                                          \
        /* of bucket b, the first `need` by position: those up to position cut */                  \
        int64_t need = k - below, cut = n, seen = 0;                                               \
        if (need < (int64_t)h4[0][b] + h4[1][b] + h4[2][b] + h4[3][b]) {                           \
            for (cut = 0;; cut++) {                                                                \
                seen += bks[cut] == b;                                                             \
                if (seen == need) {                                                                \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        int64_t mm = 0;                                                                            \
        for (int64_t i = 0; mm < k; i++) { /* branch-free, stops at the k-th */                    \
            int64_t bk = bks[i];                                                                   \
            sel[mm] = (int32_t)i;                                                                  \
            mm += (bk < b) | ((bk == b) & (i <= cut));                                             \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_dsort(const void *p, const dense_map *m, int32_t *sel, int64_t k,           \
                             int32_t *bk, int32_t *tmp)                                            \
    {                                                                                              \
        int32_t cnt[DIGITS];                                                                       \
        int64_t nb = m->top + 1;                                                                   \
        memset(cnt, 0, (size_t)nb * sizeof(int32_t));                                              \
        for (int64_t i = 0; i < k; i++) {                                                          \
            bk[i] = (int32_t)NAME##_bucket(p, sel[i], m);                                          \
            cnt[bk[i]]++;                                                                          \
        }                                                                                          \
        int32_t sum = 0;                                                                           \
        for (int64_t b = 0; b < nb; b++) {                                                         \
            int32_t x = cnt[b];                                                                    \
            cnt[b] = sum;                                                                          \
            sum += x;                                                                              \
        }                                                                                          \
        for (int64_t i = 0; i < k; i++) {                                                          \
            tmp[cnt[bk[i]]++] = sel[i];                                                            \
        }                                                                                          \
        memcpy(sel, tmp, (size_t)k * sizeof *sel);                                                 \
    }
DEFINE_DENSE(dn_i32, int32_t, false)
DEFINE_DENSE(dn_i64, int64_t, false)
DEFINE_DENSE(dn_f32, float, true)
DEFINE_DENSE(dn_f64, double, true)
DEFINE_DENSE(dn_u8, uint8_t, false)

/* Heap of (value, position) for topk: the root is the worst kept entry. "Better" means larger
 * (or smaller when smallest), ties by lower position, NaN counted as the largest value. */
#define DEFINE_TOPK(NAME, T)                                                                       \
    static bool NAME##_better(T a, int32_t ia, T b, int32_t ib, bool smallest)                     \
    {                                                                                              \
        if (smallest ? KEY_LESS(a, b) : KEY_LESS(b, a)) {                                          \
            return true;                                                                           \
        }                                                                                          \
        if (smallest ? KEY_LESS(b, a) : KEY_LESS(a, b)) {                                          \
            return false;                                                                          \
        }                                                                                          \
        return ia < ib;                                                                            \
    }                                                                                              \
    static void NAME##_sift(const T *v, int32_t *h, int64_t k, int64_t i, bool sm)                 \
    {                                                                                              \
        for (;;) {                                                                                 \
            int64_t l = 2 * i + 1, r = l + 1, w = i;                                               \
            if (l < k && NAME##_better(v[h[w]], h[w], v[h[l]], h[l], sm)) {                        \
                w = l;                                                                             \
            }                                                                                      \
            if (r < k && NAME##_better(v[h[w]], h[w], v[h[r]], h[r], sm)) {                        \
                w = r;                                                                             \
            }                                                                                      \
            if (w == i) {                                                                          \
                return;                                                                            \
            }                                                                                      \
            int32_t t = h[i];                                                                      \
            h[i] = h[w];                                                                           \
            h[w] = t;                                                                              \
            i = w;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void NAME(const T *v, int64_t n, int32_t *h, int64_t k, bool sm)                        \
    {                                                                                              \
        for (int64_t i = 0; i < k; i++) {                                                          \
            h[i] = (int32_t)i;                                                                     \
        }                                                                                          \
        for (int64_t i = k / 2 - 1; i >= 0; i--) {                                                 \
            NAME##_sift(v, h, k, i, sm);                                                           \
        }                                                                                          \
        for (int64_t i = k; i < n; i++) {                                                          \
            if (NAME##_better(v[i], (int32_t)i, v[h[0]], h[0], sm)) {                              \
                h[0] = (int32_t)i;                                                                 \
                NAME##_sift(v, h, k, 0, sm);                                                       \
            }                                                                                      \
        }                                                                                          \
        for (int64_t e = k - 1; e > 0; e--) {                                                      \
            int32_t t = h[0];                                                                      \
            h[0] = h[e];                                                                           \
            h[e] = t;                                                                              \
            NAME##_sift(v, h, e, 0, sm);                                                           \
        }                                                                                          \
    }
DEFINE_TOPK(topk_i32, int32_t)
DEFINE_TOPK(topk_i64, int64_t)
DEFINE_TOPK(topk_f32, float)
DEFINE_TOPK(topk_f64, double)
DEFINE_TOPK(topk_u8, uint8_t)

/* Below this ratio n / k a heap is used: for a few of many it costs one comparison per element,
 * less than the radix passes. */
#define HEAP_RATIO 32

/* The k best elements of a (1 <= k <= a->n) into sel[0..k): best first when kk is not NULL,
 * else in any order (position order from the radix paths). Scratch: cand[n], kk[2k]. */
static void select_best(const halo_policy_array *a, int64_t k, bool smallest, int32_t *sel,
                        int32_t *cand, uint64_t *kk)
{
    uint64_t flip = smallest ? 0 : UINT64_MAX;
    bool sorted = kk != NULL;
    int64_t n = a->n;
    if (k * HEAP_RATIO <= n) {
        /* few of many: a heap of k, one comparison with its root per element (sorted output,
         * which is also a valid answer when the order is not needed) */
        switch (a->type) {
        case HALO_PA_I32: topk_i32(a->data, n, sel, k, smallest); break;
        case HALO_PA_I64: topk_i64(a->data, n, sel, k, smallest); break;
        case HALO_PA_F32: topk_f32(a->data, n, sel, k, smallest); break;
        case HALO_PA_F64: topk_f64(a->data, n, sel, k, smallest); break;
        default: topk_u8(a->data, n, sel, k, smallest); break;
        }
        return;
    }
    dense_map dm;
#define SELECT_CASE(NAME, DN)                                                                      \
    if (k < n && DN##_dense(a->data, n, !smallest, &dm)) {                                         \
        DN##_dselect(a->data, n, k, &dm, sel, (uint16_t *)cand);                                   \
        if (sorted) {                                                                              \
            DN##_dsort(a->data, &dm, sel, k, (int32_t *)kk, cand);                                 \
        }                                                                                          \
    } else {                                                                                       \
        NAME##_select(a->data, n, k, flip, sel, cand);                                             \
        if (sorted) {                                                                              \
            NAME##_sort(a->data, flip, sel, k, kk, kk + k, cand);                                  \
        }                                                                                          \
    }
    switch (a->type) {
    case HALO_PA_I32: SELECT_CASE(sel_i32, dn_i32) break;
    case HALO_PA_I64: SELECT_CASE(sel_i64, dn_i64) break;
    case HALO_PA_F32: SELECT_CASE(sel_f32, dn_f32) break;
    case HALO_PA_F64: SELECT_CASE(sel_f64, dn_f64) break;
    default: SELECT_CASE(sel_u8, dn_u8) break;
    }
#undef SELECT_CASE
}

/* topk(k [, smallest]) -> values, positions: the k largest (smallest) elements, best first,
 * ties by lower position; k is clipped to the length. */
static int m_topk(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    lua_Integer k = luaL_checkinteger(L, 2);
    bool sm = lua_toboolean(L, 3);
    if (k < 0) {
        return luaL_error(L, "topk: k must be >= 0, got %I", k);
    }
    if (k > a->n) {
        k = a->n;
    }
    halo_policy_charge(L, a->n * (1 + log2_ceil(k) / 4));
    halo_policy_array *vals = halo_policy_new_raw(L, a->type, k);
    halo_policy_array *pos = halo_policy_new_raw(L, HALO_PA_I32, k);
    int32_t *h = pos->data;
    if (k == 0) {
        return 2;
    }
    int64_t n = a->n;
    uint64_t *kk = halo_policy_scratch(L, (size_t)k * 16 + (size_t)n * 4);
    select_best(a, k, sm, h, (int32_t *)(kk + 2 * k), kk);
    TYPED(
        a->type, const T *p = a->data; T *q = vals->data;
        for (int64_t i = 0; i < k; i++) { q[i] = p[h[i]]; })
    return 2;
}

/* topk_mask(k [, smallest]) -> mask: true at the positions topk(k, smallest) returns, without
 * ordering them (for a policy that needs the set, not the order). */
static int m_topk_mask(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    lua_Integer k = luaL_checkinteger(L, 2);
    bool sm = lua_toboolean(L, 3);
    if (k < 0) {
        return luaL_error(L, "topk_mask: k must be >= 0, got %I", k);
    }
    if (k > a->n) {
        k = a->n;
    }
    halo_policy_charge(L, 2 * a->n);
    int64_t n = a->n;
    halo_policy_array *m = halo_policy_new_array(L, HALO_PA_BOOL, n);
    if (k == 0) {
        return 1;
    }
    int32_t *sel = halo_policy_scratch(L, (size_t)(n + k) * 4);
    select_best(a, k, sm, sel, sel + k, NULL);
    uint8_t *o = m->data;
    for (int64_t i = 0; i < k; i++) {
        o[sel[i]] = 1;
    }
    return 1;
}

/* search(values) -> positions: where each value sits in self (sorted ascending), -1 if absent. */
static int m_search(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *v = halo_policy_check_arr(L, 2);
    halo_policy_same_type(L, a, v, "search");
    halo_policy_charge(L, v->n * log2_ceil(a->n));
    halo_policy_array *o = halo_policy_new_array(L, HALO_PA_I32, v->n);
    int32_t *q = o->data;
    int64_t n = a->n, m = v->n;
    TYPED(
        a->type, const T *p = a->data; const T *x = v->data; for (int64_t i = 0; i < m; i++) {
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (p[mid] < x[i]) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            q[i] = lo < n && p[lo] == x[i] ? (int32_t)lo : -1;
        })
    return 1;
}

const halo_policy_reg halo_policy_array_order_methods[] = {
    {"topk", m_topk, "a:topk(k [, smallest]) -> values, positions",
     "the k largest (smallest) elements, best first, ties by lower position; k beyond the "
     "length gives all of them (so topk(E:len()) needs no min)"},
    {"topk_mask", m_topk_mask, "a:topk_mask(k [, smallest]) -> mask",
     "true at the k positions topk(k, smallest) returns (the set only, no ordering: cheaper)"},
    {"argsort", m_argsort, "a:argsort([descending]) -> int32 array",
     "positions in ascending (descending) order of value; stable"},
    {"sort", m_sort, "a:sort([descending]) -> array", "a sorted copy (stable, NaN last)"},
    {"unique", m_unique, "a:unique() -> array", "the distinct values, ascending"},
    {"search", m_search, "a:search(values) -> int32 array",
     "position of each value in a (sorted ascending, e.g. ctx.halo.ids), -1 if absent"},
    {NULL, NULL, NULL, NULL},
};
