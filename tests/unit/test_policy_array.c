/* Unit tests of halo arrays: every vector method against a plain C reference on random inputs
 * (all element types, empty arrays included, NaN/inf/-0 where they matter), errors (never
 * crashes) on bad indices, lengths and types, and ctx.cache.pos as a hook sees it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "policy/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static halo_policy *pol;
static lua_State *L;
static char errbuf[1024];

static const char *const tn[] = {"int32", "int64", "float32", "float64", "bool"};
static const int64_t sizes[] = {0, 1, 17, 1000};
#define NSIZES 4

static int setup(void **state)
{
    (void)state;
    halo_policy_opts o = {.path = NULL, .rank = -1};
    if (halo_policy_open(&o, &pol) < 0) {
        return -1;
    }
    L = pol->L;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    halo_policy_close(pol);
    return 0;
}

/* Runs a Lua snippet in the policy's state; returns the status, the message in errbuf. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char code[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(code, sizeof code, fmt, ap);
    va_end(ap);
    int st = luaL_loadstring(L, code);
    if (st == LUA_OK) {
        st = lua_pcall(L, 0, 0, 0);
    }
    errbuf[0] = '\0';
    if (st != LUA_OK) {
        snprintf(errbuf, sizeof errbuf, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return st;
}

static void run_ok(const char *code)
{
    if (run("%s", code) != LUA_OK) {
        fail_msg("lua failed: %s\n  code: %s", errbuf, code);
    }
}

/* Random values that every numeric type holds exactly: integers in [-1000, 1000], or quarters
 * in [-500, 500] for floats (so sums and products are exact too); 0/1 for bool. */
static void rand_vals(halo_rng *r, int type, int64_t n, double *v)
{
    for (int64_t i = 0; i < n; i++) {
        if (type == HALO_PA_BOOL) {
            v[i] = (double)halo_rng_below(r, 2);
        } else if (type == HALO_PA_F32 || type == HALO_PA_F64) {
            v[i] = ((double)halo_rng_below(r, 4001) - 2000.0) / 4.0;
        } else {
            v[i] = (double)halo_rng_below(r, 2001) - 1000.0;
        }
    }
}

/* Rounds x to what an element of type holds. */
static double as_type(int type, double x)
{
    switch (type) {
    case HALO_PA_I32: return (double)(int32_t)x;
    case HALO_PA_I64: return (double)(int64_t)x;
    case HALO_PA_F32: return (double)(float)x;
    case HALO_PA_F64: return x;
    default: return x != 0;
    }
}

/* Sets global name to a new array of type holding v[0..n). */
static void set_arr(const char *name, int type, const double *v, int64_t n)
{
    halo_policy_array *a = halo_policy_new_array(L, type, n);
    for (int64_t i = 0; i < n; i++) {
        switch (type) {
        case HALO_PA_I32: ((int32_t *)a->data)[i] = (int32_t)v[i]; break;
        case HALO_PA_I64: ((int64_t *)a->data)[i] = (int64_t)v[i]; break;
        case HALO_PA_F32: ((float *)a->data)[i] = (float)v[i]; break;
        case HALO_PA_F64: ((double *)a->data)[i] = v[i]; break;
        default: ((uint8_t *)a->data)[i] = v[i] != 0; break;
        }
    }
    lua_setglobal(L, name);
}

/* Reads global name (an array of type) into a new buffer; returns its length. */
static int64_t get_arr(const char *name, int type, double **out)
{
    lua_getglobal(L, name);
    halo_policy_array *a = halo_policy_to_array(L, -1);
    assert_non_null(a);
    assert_string_equal(tn[a->type], tn[type]);
    double *v = HALO_ALLOC(double, a->n + 1);
    for (int64_t i = 0; i < a->n; i++) {
        switch (a->type) {
        case HALO_PA_I32: v[i] = ((int32_t *)a->data)[i]; break;
        case HALO_PA_I64: v[i] = (double)((int64_t *)a->data)[i]; break;
        case HALO_PA_F32: v[i] = ((float *)a->data)[i]; break;
        case HALO_PA_F64: v[i] = ((double *)a->data)[i]; break;
        default: v[i] = ((uint8_t *)a->data)[i]; break;
        }
    }
    int64_t n = a->n;
    lua_pop(L, 1);
    *out = v;
    return n;
}

static double get_num(const char *name)
{
    lua_getglobal(L, name);
    double v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static void expect_arr(const char *name, int type, const double *want, int64_t n, const char *what)
{
    double *got;
    int64_t m = get_arr(name, type, &got);
    if (m != n) {
        fail_msg("%s: length %lld, want %lld", what, (long long)m, (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        if (!(got[i] == want[i])) {
            fail_msg("%s: element %lld is %.17g, want %.17g", what, (long long)i, got[i], want[i]);
        }
    }
    halo_free(got);
}

static bool is_float(int t)
{
    return t == HALO_PA_F32 || t == HALO_PA_F64;
}

static void elementwise_arithmetic_matches_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 1, 0, 0);
    const char *ops[] = {"add", "sub", "mul", "div", "scale"};
    for (int t = 0; t < 4; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1), *b = HALO_ALLOC(double, n + 1);
            double *w = HALO_ALLOC(double, n + 1);
            for (int op = 0; op < 5; op++) {
                if (op == 3 && !is_float(t)) {
                    continue;
                }
                for (int with_arr = 0; with_arr < 2; with_arr++) {
                    if (op == 4 && with_arr) {
                        continue;
                    }
                    rand_vals(&r, t, n, a);
                    rand_vals(&r, t, n, b);
                    double sc = is_float(t) ? -2.25 : 3;
                    for (int64_t i = 0; i < n; i++) {
                        double y = with_arr ? b[i] : sc;
                        if (op == 3 && y == 0) {
                            y = b[i] = 1;
                        }
                        double x;
                        switch (op) {
                        case 0: x = a[i] + y; break;
                        case 1: x = a[i] - y; break;
                        case 3:
                            x = t == HALO_PA_F32 ? (double)((float)a[i] / (float)y) : a[i] / y;
                            break;
                        default: x = a[i] * y; break;
                        }
                        w[i] = as_type(t, x);
                    }
                    set_arr("A", t, a, n);
                    set_arr("B", t, b, n);
                    if (with_arr) {
                        run_ok(lua_pushfstring(L, "R = A:%s(B)", ops[op]));
                    } else {
                        run_ok(lua_pushfstring(L, "R = A:%s(%s)", ops[op],
                                               is_float(t) ? "-2.25" : "3"));
                    }
                    lua_pop(L, 1);
                    char what[64];
                    snprintf(what, sizeof what, "%s %s n=%lld arr=%d", ops[op], tn[t], (long long)n,
                             with_arr);
                    expect_arr("A", t, w, n, what);
                    run_ok("assert(rawequal(R, A), 'in-place methods return self')");
                }
            }
            halo_free(a);
            halo_free(b);
            halo_free(w);
        }
    }
}

static void comparisons_make_masks_like_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 2, 0, 0);
    const char *ops[] = {"lt", "le", "gt", "ge", "eq", "ne"};
    for (int t = 0; t < 4; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1), *b = HALO_ALLOC(double, n + 1);
            double *w = HALO_ALLOC(double, n + 1);
            rand_vals(&r, t, n, a);
            rand_vals(&r, t, n, b);
            for (int64_t i = 0; i < n; i += 3) {
                b[i] = a[i]; /* some equal pairs */
            }
            set_arr("A", t, a, n);
            set_arr("B", t, b, n);
            for (int op = 0; op < 6; op++) {
                for (int with_arr = 0; with_arr < 2; with_arr++) {
                    double sc = n > 0 ? a[0] : 0.5;
                    for (int64_t i = 0; i < n; i++) {
                        double x = a[i], y = with_arr ? b[i] : sc;
                        bool v = op == 0   ? x < y
                                 : op == 1 ? x <= y
                                 : op == 2 ? x > y
                                 : op == 3 ? x >= y
                                 : op == 4 ? x == y
                                           : x != y;
                        w[i] = v;
                    }
                    if (with_arr) {
                        run_ok(lua_pushfstring(L, "M = A:%s(B)", ops[op]));
                    } else {
                        run_ok(lua_pushfstring(L, "M = A:%s(%f)", ops[op], sc));
                    }
                    lua_pop(L, 1);
                    expect_arr("M", HALO_PA_BOOL, w, n, ops[op]);
                }
            }
            /* mask logic */
            run_ok("X = A:lt(B):land(A:ne(B)); Y = A:lt(B):lor(A:gt(B)); Z = A:eq(B):lnot()");
            for (int64_t i = 0; i < n; i++) {
                w[i] = a[i] < b[i] && a[i] != b[i];
            }
            expect_arr("X", HALO_PA_BOOL, w, n, "land");
            for (int64_t i = 0; i < n; i++) {
                w[i] = a[i] < b[i] || a[i] > b[i];
            }
            expect_arr("Y", HALO_PA_BOOL, w, n, "lor");
            expect_arr("Z", HALO_PA_BOOL, w, n, "lnot");
            halo_free(a);
            halo_free(b);
            halo_free(w);
        }
    }
}

static void scatter_and_gather_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 3, 0, 0);
    const char *ops[] = {"add_at", "scale_at", "set_at"};
    for (int t = 0; t < 4; t++) {
        for (int s = 1; s < NSIZES; s++) {
            int64_t n = sizes[s], m = 2 * n + 1;
            double *a = HALO_ALLOC(double, n), *v = HALO_ALLOC(double, m);
            double *ix = HALO_ALLOC(double, m), *w = HALO_ALLOC(double, m);
            for (int op = 0; op < 3; op++) {
                for (int with_arr = 0; with_arr < 2; with_arr++) {
                    for (int it = 0; it < 2; it++) { /* int32 and int64 indices */
                        rand_vals(&r, t, n, a);
                        rand_vals(&r, t, m, v);
                        for (int64_t k = 0; k < m; k++) {
                            ix[k] = (double)halo_rng_below(&r, (uint64_t)n); /* repeats */
                            if (op == 1) {
                                v[k] = is_float(t) ? 0.5 : (double)halo_rng_below(&r, 3) - 1;
                            }
                        }
                        double sc = op == 1 ? (is_float(t) ? 0.5 : -1) : 2;
                        memcpy(w, a, (size_t)n * sizeof(double));
                        for (int64_t k = 0; k < m; k++) {
                            int64_t i = (int64_t)ix[k];
                            double y = with_arr ? v[k] : sc;
                            w[i] = as_type(t, op == 0 ? w[i] + y : op == 1 ? w[i] * y : y);
                        }
                        set_arr("A", t, a, n);
                        set_arr("V", t, v, m);
                        set_arr("I", it ? HALO_PA_I64 : HALO_PA_I32, ix, m);
                        if (with_arr) {
                            run_ok(lua_pushfstring(L, "A:%s(I, V)", ops[op]));
                        } else {
                            run_ok(lua_pushfstring(L, "A:%s(I, %s)", ops[op],
                                                   op == 1 ? (is_float(t) ? "0.5" : "-1") : "2"));
                        }
                        lua_pop(L, 1);
                        expect_arr("A", t, w, n, ops[op]);
                        /* gather of the same indices */
                        run_ok("G = A:gather(I)");
                        for (int64_t k = 0; k < m; k++) {
                            v[k] = w[(int64_t)ix[k]];
                        }
                        expect_arr("G", t, v, m, "gather");
                    }
                }
            }
            halo_free(a);
            halo_free(v);
            halo_free(ix);
            halo_free(w);
        }
    }
}

static void where_filter_count_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 4, 0, 0);
    for (int t = 0; t < 5; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1), *mk = HALO_ALLOC(double, n + 1);
            double *w = HALO_ALLOC(double, n + 1);
            rand_vals(&r, t, n, a);
            rand_vals(&r, HALO_PA_BOOL, n, mk);
            for (int64_t i = 0; i < n; i += 4) {
                a[i] = 0;
            }
            set_arr("A", t, a, n);
            set_arr("M", HALO_PA_BOOL, mk, n);
            run_ok("W = A:where(); F = A:filter(M); C = A:count()");
            int64_t c = 0;
            for (int64_t i = 0; i < n; i++) {
                if (a[i] != 0) {
                    w[c++] = (double)i;
                }
            }
            expect_arr("W", HALO_PA_I32, w, c, "where");
            assert_int_equal((int64_t)get_num("C"), c);
            c = 0;
            for (int64_t i = 0; i < n; i++) {
                if (mk[i] != 0) {
                    w[c++] = a[i];
                }
            }
            expect_arr("F", t, w, c, "filter");
            halo_free(a);
            halo_free(mk);
            halo_free(w);
        }
    }
}

/* Reference order: stable insertion sort of positions by value (descending: larger first). */
static void ref_order(const double *v, int64_t n, bool desc, int64_t *idx)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0 && (desc ? v[idx[j - 1]] < v[i] : v[idx[j - 1]] > v[i])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
}

static void ordering_methods_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 5, 0, 0);
    for (int t = 0; t < 5; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1), *w = HALO_ALLOC(double, n + 1);
            double *w2 = HALO_ALLOC(double, n + 1);
            int64_t *idx = HALO_ALLOC(int64_t, n + 1);
            rand_vals(&r, t, n, a);
            for (int64_t i = 1; i < n; i += 5) {
                a[i] = a[i - 1]; /* ties */
            }
            set_arr("A", t, a, n);
            for (int desc = 0; desc < 2; desc++) {
                ref_order(a, n, desc, idx);
                run_ok(desc ? "O = A:argsort(true); S = A:sort(true)"
                            : "O = A:argsort(); S = A:sort()");
                for (int64_t i = 0; i < n; i++) {
                    w[i] = (double)idx[i];
                    w2[i] = a[idx[i]];
                }
                expect_arr("O", HALO_PA_I32, w, n, "argsort");
                expect_arr("S", t, w2, n, "sort");
                int64_t ks[] = {0, 1, n / 2, n, n + 3};
                for (int ki = 0; ki < 5; ki++) {
                    int64_t k = ks[ki], kk = k < n ? k : n;
                    run_ok(lua_pushfstring(L, "TV, TI = A:topk(%d, %s)", (int)k,
                                           desc ? "false" : "true"));
                    lua_pop(L, 1);
                    /* topk largest == first k of the descending order; smallest: ascending */
                    ref_order(a, n, desc, idx);
                    for (int64_t i = 0; i < kk; i++) {
                        w[i] = (double)idx[i];
                        w2[i] = a[idx[i]];
                    }
                    char what[96];
                    snprintf(what, sizeof what, "topk %s n=%lld k=%lld smallest=%d", tn[t],
                             (long long)n, (long long)k, !desc);
                    expect_arr("TV", t, w2, kk, what);
                    expect_arr("TI", HALO_PA_I32, w, kk, what);
                }
            }
            /* unique */
            ref_order(a, n, false, idx);
            int64_t u = 0;
            for (int64_t i = 0; i < n; i++) {
                if (i == 0 || a[idx[i]] != a[idx[i - 1]]) {
                    w[u++] = a[idx[i]];
                }
            }
            run_ok("U = A:unique()");
            expect_arr("U", t, w, u, "unique");
            /* search in the unique values: present ones and absent ones */
            if (t != HALO_PA_BOOL) {
                set_arr("Q", t, a, n);
                run_ok("P = U:search(Q); P2 = U:search(Q:copy():add(U:type():find('int') and 5000 "
                       "or 5000.5))");
                for (int64_t i = 0; i < n; i++) {
                    int64_t pos = -1;
                    for (int64_t j = 0; j < u; j++) {
                        if (w[j] == a[i]) {
                            pos = j;
                        }
                    }
                    w2[i] = (double)pos;
                }
                expect_arr("P", HALO_PA_I32, w2, n, "search");
                for (int64_t i = 0; i < n; i++) {
                    w2[i] = -1;
                }
                expect_arr("P2", HALO_PA_I32, w2, n, "search absent");
            }
            halo_free(a);
            halo_free(w);
            halo_free(w2);
            halo_free(idx);
        }
    }
}

static void reductions_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 6, 0, 0);
    for (int t = 0; t < 4; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1);
            rand_vals(&r, t, n, a);
            set_arr("A", t, a, n);
            run_ok("S = A:sum(); MEAN = A:mean(); MN, MNI = A:min(); MX, MXI = A:max()");
            double sum = 0, mn = n ? a[0] : 0, mx = n ? a[0] : 0;
            int64_t mni = 0, mxi = 0;
            for (int64_t i = 0; i < n; i++) {
                sum += a[i];
                if (a[i] < mn) {
                    mn = a[i];
                    mni = i;
                }
                if (a[i] > mx) {
                    mx = a[i];
                    mxi = i;
                }
            }
            assert_true(get_num("S") == sum);
            if (n == 0) {
                run_ok("assert(MEAN == nil and MN == nil and MX == nil and S == 0)");
            } else {
                assert_true(fabs(get_num("MEAN") - sum / (double)n) < 1e-9);
                assert_true(get_num("MN") == mn && get_num("MNI") == (double)mni);
                assert_true(get_num("MX") == mx && get_num("MXI") == (double)mxi);
            }
            halo_free(a);
        }
    }
}

/* Whether got is want: NaN matches NaN; with zsign, -0 and +0 differ too. */
static bool same_val(double got, double want, bool zsign)
{
    if (want != want) {
        return got != got;
    }
    if (!(got == want)) {
        return false;
    }
    return !zsign || !signbit(got) == !signbit(want);
}

/* expect_arr for values that may be NaN (or signed zeros, checked when zsign). */
static void expect_ieee(const char *name, int type, const double *want, int64_t n, const char *what,
                        bool zsign)
{
    double *got;
    int64_t m = get_arr(name, type, &got);
    if (m != n) {
        fail_msg("%s: length %lld, want %lld", what, (long long)m, (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        if (!same_val(got[i], want[i], zsign)) {
            fail_msg("%s: element %lld is %.17g, want %.17g", what, (long long)i, got[i], want[i]);
        }
    }
    halo_free(got);
}

/* Replaces about one value in four by NaN (of either sign bit), +-inf, -0 or +0 (for float
 * arrays). */
static void add_specials(halo_rng *r, double *v, int64_t n)
{
    const double sp[] = {NAN, copysign(NAN, -1.0), INFINITY, -INFINITY, -0.0, 0.0};
    for (int64_t i = 0; i < n; i++) {
        if (halo_rng_below(r, 4) == 0) {
            v[i] = sp[halo_rng_below(r, 6)];
        }
    }
}

static void maximum_minimum_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 8, 0, 0);
    const char *ops[] = {"maximum", "minimum"};
    /* scalar arguments: Lua source and value, for integer and for float arrays */
    static const char *const isrc[] = {"3", "-1000", "2147483647", "-2147483648", "7.0"};
    static const double ival[] = {3, -1000, 2147483647.0, -2147483648.0, 7};
    static const char *const fsrc[] = {"-2.25", "0.1", "0/0", "1/0", "-1/0", "-0.0"};
    static const double fval[] = {-2.25, 0.1, NAN, INFINITY, -INFINITY, -0.0};
    for (int t = 0; t < 4; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, n + 1), *b = HALO_ALLOC(double, n + 1);
            double *w = HALO_ALLOC(double, n + 1);
            int nsc = is_float(t) ? 6 : 5;
            for (int op = 0; op < 2; op++) {
                for (int v = -1; v < nsc; v++) { /* -1: an array argument */
                    rand_vals(&r, t, n, a);
                    rand_vals(&r, t, n, b);
                    for (int64_t i = 0; i < n; i += 3) {
                        b[i] = a[i]; /* ties */
                    }
                    if (is_float(t)) {
                        add_specials(&r, a, n);
                        add_specials(&r, b, n);
                    } else if (t == HALO_PA_I32) {
                        for (int64_t i = 5; i < n; i += 7) {
                            a[i] = i % 2 ? 2147483647.0 : -2147483648.0;
                        }
                    }
                    for (int64_t i = 0; i < n; i++) {
                        double x = as_type(t, a[i]);
                        double y = v < 0 ? b[i] : as_type(t, is_float(t) ? fval[v] : ival[v]);
                        /* documented (maximum): a NaN in a stays, one in x is ignored; minimum is
                         * held to the same rule. fmax/fmin ignore a NaN argument. */
                        w[i] = isnan(x) ? x : op == 0 ? fmax(x, y) : fmin(x, y);
                    }
                    set_arr("A", t, a, n);
                    set_arr("B", t, b, n);
                    if (run("R = A:%s(%s)", ops[op],
                            v < 0         ? "B"
                            : is_float(t) ? fsrc[v]
                                          : isrc[v]) != LUA_OK) {
                        fail_msg("%s failed: %s", ops[op], errbuf);
                    }
                    char what[96];
                    snprintf(what, sizeof what, "%s %s n=%lld x=%s", ops[op], tn[t], (long long)n,
                             v < 0         ? "array"
                             : is_float(t) ? fsrc[v]
                                           : isrc[v]);
                    expect_ieee("A", t, w, n, what, false);
                    expect_ieee("B", t, b, n, "the argument array stays", true);
                    run_ok("assert(rawequal(R, A), 'in-place methods return self')");
                    /* with itself: unchanged */
                    if (run("A:%s(A)", ops[op]) != LUA_OK) {
                        fail_msg("%s(self) failed: %s", ops[op], errbuf);
                    }
                    expect_ieee("A", t, w, n, "with itself", true);
                }
            }
            halo_free(a);
            halo_free(b);
            halo_free(w);
        }
    }
}

/* Sets global name to a new int64 array holding v[0..n) exactly. */
static void set_i64(const char *name, const int64_t *v, int64_t n)
{
    halo_policy_array *a = halo_policy_new_array(L, HALO_PA_I64, n);
    memcpy(a->data, v, (size_t)n * sizeof *v);
    lua_setglobal(L, name);
}

static void expect_i64(const char *name, const int64_t *want, int64_t n, const char *what)
{
    lua_getglobal(L, name);
    halo_policy_array *a = halo_policy_to_array(L, -1);
    assert_non_null(a);
    assert_int_equal(a->type, HALO_PA_I64);
    assert_int_equal(a->n, n);
    for (int64_t i = 0; i < n; i++) {
        int64_t got = ((const int64_t *)a->data)[i];
        if (got != want[i]) {
            fail_msg("%s: element %lld is %lld, want %lld", what, (long long)i, (long long)got,
                     (long long)want[i]);
        }
    }
    lua_pop(L, 1);
}

/* int64 values that doubles cannot tell apart are compared exactly. */
static void maximum_minimum_are_exact_for_int64(void **state)
{
    (void)state;
    const int64_t p62 = (int64_t)1 << 62;
    const int64_t a[6] = {p62 + 1, -p62 - 1, INT64_MAX, INT64_MIN, 5, p62};
    const int64_t b[6] = {p62, -p62, INT64_MAX - 1, INT64_MIN + 1, 5, p62 + 1};
    int64_t w[6];
    for (int op = 0; op < 2; op++) {
        for (int sc = 0; sc < 2; sc++) { /* array, or the scalar 2^62 */
            for (int i = 0; i < 6; i++) {
                int64_t y = sc ? p62 : b[i];
                w[i] = op == 0 ? (a[i] > y ? a[i] : y) : (a[i] < y ? a[i] : y);
            }
            set_i64("A", a, 6);
            set_i64("B", b, 6);
            const char *m = op == 0 ? "maximum" : "minimum";
            if (run("A:%s(%s)", m, sc ? "4611686018427387904" : "B") != LUA_OK) {
                fail_msg("%s failed: %s", m, errbuf);
            }
            expect_i64("A", w, 6, m);
        }
    }
}

static void div_at_matches_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 9, 0, 0);
    static const char *const src[] = {"3", "-0.0", "0", "1/0", "0/0", "0.1", "-2.5"};
    static const double val[] = {3, -0.0, 0, INFINITY, NAN, 0.1, -2.5};
    for (int t = HALO_PA_F32; t <= HALO_PA_F64; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s], m = n > 0 ? 2 * n + 1 : 0;
            double *a = HALO_ALLOC(double, n + 1), *x = HALO_ALLOC(double, m + 1);
            double *ix = HALO_ALLOC(double, m + 1), *w = HALO_ALLOC(double, n + 1);
            for (int v = -1; v < 7; v++) {       /* -1: an array of divisors */
                for (int it = 0; it < 2; it++) { /* int32 and int64 indices */
                    rand_vals(&r, t, n, a);
                    rand_vals(&r, t, m, x);
                    add_specials(&r, a, n);
                    add_specials(&r, x, m);
                    for (int64_t k = 0; k < m; k++) {
                        ix[k] = (double)halo_rng_below(&r, (uint64_t)n); /* repeats */
                    }
                    for (int64_t i = 0; i < n; i++) {
                        w[i] = as_type(t, a[i]);
                    }
                    for (int64_t k = 0; k < m; k++) { /* in order: a repeated index divides again */
                        int64_t i = (int64_t)ix[k];
                        double y = v < 0 ? x[k] : val[v];
                        if (t == HALO_PA_F32) {
                            float q = (float)w[i] / (float)y;
                            w[i] = q;
                        } else {
                            w[i] = w[i] / y;
                        }
                    }
                    set_arr("A", t, a, n);
                    set_arr("X", t, x, m);
                    set_arr("I", it ? HALO_PA_I64 : HALO_PA_I32, ix, m);
                    if (run("R = A:div_at(I, %s)", v < 0 ? "X" : src[v]) != LUA_OK) {
                        fail_msg("div_at failed: %s", errbuf);
                    }
                    char what[96];
                    snprintf(what, sizeof what, "div_at %s n=%lld x=%s idx=%s", tn[t], (long long)n,
                             v < 0 ? "array" : src[v], it ? "int64" : "int32");
                    expect_ieee("A", t, w, n, what, true);
                    run_ok("assert(rawequal(R, A), 'in-place methods return self')");
                }
            }
            halo_free(a);
            halo_free(x);
            halo_free(ix);
            halo_free(w);
        }
    }
}

/* Reference order of topk: better first; largest (desc) or smallest; NaN counts as the largest
 * value (all NaNs equal), -0 equals +0; ties by lower position. */
static const double *ord_v;
static bool ord_desc;

static int ord_cmp(const void *x, const void *y)
{
    int64_t i = *(const int64_t *)x, j = *(const int64_t *)y;
    double a = ord_v[i], b = ord_v[j];
    int c;
    if (isnan(a) || isnan(b)) {
        c = isnan(a) && isnan(b) ? 0 : isnan(a) ? 1 : -1;
    } else {
        c = a < b ? -1 : a > b ? 1 : 0;
    }
    if (ord_desc) {
        c = -c;
    }
    return c != 0 ? c : i < j ? -1 : 1;
}

/* Values of one of several shapes, to reach each of topk's selection paths (heap, radix passes,
 * dense buckets): 0 random small numbers, 1 wide-ranging (with NaN/inf/-0 for floats), 2 few
 * distinct values (+-0, +-inf for floats), 3 NaN-heavy (extremes for integers), 4 -0/+0
 * alternating (7 for integers), 5 all NaN (integers: all the type's minimum), 6 a 2048-wide
 * range (floats: 1 plus up to 63 ulps). Every fifth value repeats the one before (ties). */
static void topk_vals(halo_rng *r, int type, int shape, int64_t n, double *v)
{
    static const double fewf[] = {-0.0, 0.0, 1, -1, INFINITY, -INFINITY};
    const double i64_lo = -9223372036854775808.0, p62 = 4611686018427387904.0;
    bool fl = is_float(type);
    rand_vals(r, type, n, v);
    for (int64_t i = 0; i < n; i++) {
        switch (shape) {
        case 1:
            if (type == HALO_PA_I32) {
                v[i] = (double)halo_rng_below(r, 1ULL << 32) - 2147483648.0;
            } else if (type == HALO_PA_I64) {
                v[i] = (double)halo_rng_below(r, 1ULL << 53) - 4503599627370496.0;
                v[i] = i % 11 == 3 ? i64_lo : i % 11 == 7 ? p62 : i % 11 == 9 ? -p62 : v[i];
            } else if (fl) {
                v[i] = as_type(type,
                               ldexp(2 * halo_rng_uniform(r) - 1, (int)halo_rng_below(r, 81) - 40));
            }
            break;
        case 2: v[i] = fl ? fewf[halo_rng_below(r, 6)] : (double)halo_rng_below(r, 3) - 1; break;
        case 3:
            if (fl) {
                v[i] = halo_rng_below(r, 2) ? copysign(NAN, i % 3 ? 1.0 : -1.0) : v[i];
            } else if (type != HALO_PA_BOOL) {
                bool lo = halo_rng_below(r, 2);
                v[i] =
                    type == HALO_PA_I32 ? (lo ? -2147483648.0 : 2147483647.0) : (lo ? i64_lo : p62);
            } else {
                v[i] = halo_rng_below(r, 10) == 0;
            }
            break;
        case 4: v[i] = fl ? (i % 2 ? 0.0 : -0.0) : (type == HALO_PA_BOOL ? 1 : 7); break;
        case 5:
            v[i] = fl                    ? copysign(NAN, i % 2 ? 1.0 : -1.0)
                   : type == HALO_PA_I32 ? -2147483648.0
                   : type == HALO_PA_I64 ? i64_lo
                                         : 0;
            break;
        case 6: /* keys that differ in the low 11 bits only (not small integers for floats) */
            if (fl) {
                v[i] = 1 + ldexp((double)halo_rng_below(r, 64), type == HALO_PA_F32 ? -23 : -52);
            } else if (type != HALO_PA_BOOL) {
                v[i] = i == 2 ? 2047 : (double)halo_rng_below(r, 2048);
            }
            break;
        default: break;
        }
    }
    if (shape == 1 && fl) {
        add_specials(r, v, n);
    }
    for (int64_t i = 1; i < n; i += 5) {
        v[i] = v[i - 1];
    }
}

static void topk_mask_and_topk_match_c(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 10, 0, 0);
    static const int64_t tsizes[] = {0, 1, 17, 1000, 4099};
    for (int t = 0; t < 5; t++) {
        for (int shape = 0; shape < 7; shape++) {
            for (int s = 0; s < 5; s++) {
                int64_t n = tsizes[s];
                double *a = HALO_ALLOC(double, n + 1), *w = HALO_ALLOC(double, n + 1);
                double *wv = HALO_ALLOC(double, n + 1), *wi = HALO_ALLOC(double, n + 1);
                int64_t *idx = HALO_ALLOC(int64_t, n + 1);
                topk_vals(&r, t, shape, n, a);
                for (int64_t i = 0; i < n; i++) {
                    a[i] = as_type(t, a[i]);
                }
                set_arr("A", t, a, n);
                for (int sm = 0; sm < 2; sm++) {
                    for (int64_t i = 0; i < n; i++) {
                        idx[i] = i;
                    }
                    ord_v = a;
                    ord_desc = !sm;
                    qsort(idx, (size_t)n, sizeof *idx, ord_cmp);
                    /* heap (k * 32 <= n), radix and dense paths, k = n and k clipped */
                    int64_t ks[] = {0, 1, 2, 3, n / 64, n / 32 + 1, n / 2, n - 1, n, n + 3};
                    for (int ki = 0; ki < 10; ki++) {
                        int64_t k = ks[ki] < 0 ? 0 : ks[ki], kk = k < n ? k : n;
                        if (run("TM = A:topk_mask(%lld, %s); TV, TI = A:topk(%lld, %s)",
                                (long long)k, sm ? "true" : "false", (long long)k,
                                sm ? "true" : "false") != LUA_OK) {
                            fail_msg("topk_mask failed: %s", errbuf);
                        }
                        for (int64_t i = 0; i < n; i++) {
                            w[i] = 0;
                        }
                        for (int64_t j = 0; j < kk; j++) {
                            w[idx[j]] = 1;
                            wi[j] = (double)idx[j];
                            wv[j] = a[idx[j]];
                        }
                        char what[128];
                        snprintf(what, sizeof what, "%s shape %d n=%lld k=%lld smallest=%d", tn[t],
                                 shape, (long long)n, (long long)k, sm);
                        expect_ieee("TM", HALO_PA_BOOL, w, n, what, false);
                        expect_ieee("TI", HALO_PA_I32, wi, kk, what, false);
                        expect_ieee("TV", t, wv, kk, what, true);
                    }
                }
                expect_ieee("A", t, a, n, "topk leaves the array alone", true);
                halo_free(a);
                halo_free(w);
                halo_free(wv);
                halo_free(wi);
                halo_free(idx);
            }
        }
    }
}

/* Small cases worked out by hand: ties by lower position, NaN counted as the largest value,
 * -0 equal to +0; topk_mask works on a read-only view. */
static void topk_mask_tie_order_by_hand(void **state)
{
    (void)state;
    run_ok("local A = halo.from_table('int32', {5, 1, 5, 3, 1})\n"
           "local function s(m) local t = {} for i, v in ipairs(m:to_table()) do\n"
           "  t[i] = v and '1' or '0' end return table.concat(t) end\n"
           "assert(s(A:topk_mask(1)) == '10000' and s(A:topk_mask(2)) == '10100')\n"
           "assert(s(A:topk_mask(3)) == '10110' and s(A:topk_mask(1, true)) == '01000')\n"
           "assert(s(A:topk_mask(2, true)) == '01001' and s(A:topk_mask(9)) == '11111')\n"
           "local F = halo.from_table('float64', {1, 0/0, -0.0, 1/0, 0.0, 0/0, -1/0})\n"
           "assert(s(F:topk_mask(1)) == '0100000' and s(F:topk_mask(2)) == '0100010')\n"
           "assert(s(F:topk_mask(3)) == '0101010' and s(F:topk_mask(1, true)) == '0000001')\n"
           "assert(s(F:topk_mask(2, true)) == '0010001' and s(F:topk_mask(3, true)) == '0010101')\n"
           "assert(s(F:topk_mask(6, true)) == '1111101' and s(F:topk_mask(0)) == '0000000')\n"
           "local G = F:astype('float32')\n"
           "assert(s(G:topk_mask(3, true)) == '0010101' and s(G:topk_mask(3)) == '0101010')\n"
           "local B = halo.from_table('bool', {false, true, false, true})\n"
           "assert(s(B:topk_mask(1)) == '0100' and s(B:topk_mask(3, true)) == '1110')\n"
           "assert(A:topk_mask(0):type() == 'bool' and #A:topk_mask(0) == 5)");
    int32_t buf[4] = {2, 9, 2, -4};
    halo_policy_push_view(L, buf, 4, HALO_PA_I32, false, "ctx.cache.id");
    lua_setglobal(L, "V");
    run_ok("local m = V:topk_mask(2); assert(m:get(0) and m:get(1) and not m:get(2) and "
           "not m:get(3)); m = V:topk_mask(2, true); assert(m:get(0) and m:get(3) and m:count() "
           "== 2)");
    assert_int_equal(buf[0], 2);
    assert_int_equal(buf[1], 9);
}

/* ctx.cache.pos, seen from a hook: a read-only int32 view of the caller's slot -> halo position
 * map, capacity long, that gathers the slots' ids from ctx.halo.ids; nil without a map. */
static void cache_pos_is_a_read_only_view_of_the_callers_map(void **state)
{
    (void)state;
    char path[512];
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(path, sizeof path, "%s/array_pos_%d.lua", dir ? dir : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("return { epoch_end = function(ctx)\n"
          "    local p = ctx.cache.pos\n"
          "    if ctx.rank == 1 then assert(p == nil) return end\n"
          "    assert(p:type() == 'int32' and #p == ctx.cache.capacity and #p == 4)\n"
          "    assert(p:get(0) == 1 and p:get(1) == 4 and p:get(2) == -1 and p:get(3) == -1)\n"
          "    assert(not pcall(function() p:set(0, 2) end))\n"
          "    local ids = ctx.halo.ids:gather(p:filter(p:ge(0)))\n"
          "    assert(ids:get(0) == ctx.cache.id:get(0) and ids:get(1) == ctx.cache.id:get(1))\n"
          "end }\n",
          f);
    fclose(f);
    halo_policy_opts o = {.path = path, .rank = -1};
    halo_policy *p;
    assert_int_equal(halo_policy_open(&o, &p), 0);
    int32_t ids[6] = {3, 8, 15, 16, 23, 42}, deg[6] = {0}, owner[6] = {0};
    int64_t misses[6] = {0}, hits[4] = {0}, last[4] = {0}, ins[4] = {0};
    double hscore[6] = {0}, sscore[4] = {0};
    int32_t slot_id[4] = {8, 23, -1, -1}, pos[4] = {1, 4, -1, -1};
    halo_policy_ctx c;
    memset(&c, 0, sizeof c);
    c.ranks = 2;
    c.halo = (halo_policy_halo_view){
        .n = 6, .ids = ids, .deg = deg, .owner = owner, .misses = misses, .score = hscore};
    c.cache = (halo_policy_cache_view){.capacity = 4,
                                       .used = 2,
                                       .id = slot_id,
                                       .hits = hits,
                                       .last_hit = last,
                                       .inserted = ins,
                                       .score = sscore,
                                       .pos = pos};
    if (halo_policy_epoch_end(p, &c) != 0) {
        fail_msg("epoch_end with ctx.cache.pos: %s", halo_errmsg());
    }
    assert_int_equal(pos[0], 1); /* the write was refused */
    pos[1] = 3;                  /* the view shows C memory: the hook's check now fails */
    assert_int_equal(halo_policy_epoch_end(p, &c), HALO_ELUA);
    c.rank = 1;
    c.cache.pos = NULL;
    if (halo_policy_epoch_end(p, &c) != 0) {
        fail_msg("epoch_end without ctx.cache.pos: %s", halo_errmsg());
    }
    halo_policy_close(p);
    remove(path);
}

static void basics_and_conversions_round_trip(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, 7, 0, 0);
    for (int t = 0; t < 5; t++) {
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = sizes[s];
            double *a = HALO_ALLOC(double, 2 * n + 1), *w = HALO_ALLOC(double, 2 * n + 1);
            rand_vals(&r, t, n, a);
            set_arr("A", t, a, n);
            /* to_table / from_table / len / copy / concat / slice / fill / get / set */
            run_ok(lua_pushfstring(L,
                                   "T = A:to_table(); B = halo.from_table('%s', T); "
                                   "assert(#T == A:len() and #A == B:len()); C = A:copy(); "
                                   "D = A:concat(B); E = A:slice(%d, %d)",
                                   tn[t], (int)(n / 3), (int)(n - n / 3)));
            lua_pop(L, 1);
            expect_arr("B", t, a, n, "from_table(to_table)");
            expect_arr("C", t, a, n, "copy");
            memcpy(w, a, (size_t)n * sizeof(double));
            memcpy(w + n, a, (size_t)n * sizeof(double));
            expect_arr("D", t, w, 2 * n, "concat");
            expect_arr("E", t, a + n / 3, n - 2 * (n / 3), "slice");
            for (int u = 0; u < 5; u++) {
                run_ok(lua_pushfstring(L, "X = A:astype('%s')", tn[u]));
                lua_pop(L, 1);
                for (int64_t i = 0; i < n; i++) {
                    w[i] = as_type(u, a[i]);
                    if (u != HALO_PA_BOOL && !is_float(u)) {
                        w[i] = trunc(a[i]);
                    }
                }
                expect_arr("X", u, w, n, "astype");
            }
            if (n > 0) {
                const char *v = t == HALO_PA_BOOL ? "true" : "7";
                run_ok(lua_pushfstring(L, "C:fill(%s); C:set(%d, %s); G = C:get(%d)", v,
                                       (int)(n - 1), t == HALO_PA_BOOL ? "false" : "-3",
                                       (int)(n - 1)));
                lua_pop(L, 1);
                for (int64_t i = 0; i < n; i++) {
                    w[i] = t == HALO_PA_BOOL ? 1 : 7;
                }
                w[n - 1] = t == HALO_PA_BOOL ? 0 : -3;
                expect_arr("C", t, w, n, "fill/set");
                run_ok(t == HALO_PA_BOOL ? "assert(G == false)" : "assert(G == -3)");
                run_ok("C:copy(A)");
                expect_arr("C", t, a, n, "copy(src)");
            }
            halo_free(a);
            halo_free(w);
        }
    }
    run_ok("R = halo.range(5, 'int64')");
    double want[5] = {0, 1, 2, 3, 4};
    expect_arr("R", HALO_PA_I64, want, 5, "range");
    run_ok("Z = halo.array('float32', 3, 1.5)");
    double z[3] = {1.5, 1.5, 1.5};
    expect_arr("Z", HALO_PA_F32, z, 3, "array with value");
    run_ok("assert(tostring(Z):find('float32', 1, true) and halo.is_array(Z) and "
           "not halo.is_array({}))");
}

/* Each snippet must raise an error whose message contains the given text; the state must stay
 * usable afterwards. */
static void bad_calls_raise_errors_not_crashes(void **state)
{
    (void)state;
    run_ok("A = halo.range(10); F = halo.array('float64', 10); M = halo.array('bool', 10); "
           "E = halo.array('int32', 0); BAD = halo.from_table('int32', {0, 10}); "
           "NEG = halo.from_table('int64', {-1}); S = halo.array('int32', 3); "
           "FD = halo.array('float64', 10, 1.0); BIG = halo.from_table('int64', {4294967296})");
    static const char *const cases[][2] = {
        {"A:get(10)", "index 10 out of range [0, 10)"},
        {"A:get(-1)", "index -1 out of range"},
        {"A:set(10, 1)", "out of range"},
        {"E:get(0)", "index 0 out of range [0, 0)"},
        {"A:gather(BAD)", "index 10 (at position 1) out of range [0, 10)"},
        {"A:gather(NEG)", "index -1 (at position 0) out of range"},
        {"E:gather(BAD)", "out of range [0, 0)"},
        {"A:add_at(BAD, 1)", "add_at: index 10"},
        {"F:scale_at(NEG, 2)", "scale_at: index -1"},
        {"A:set_at(BAD, 0)", "set_at: index 10"},
        {"A:add_at(S, A)", "add_at: lengths differ (3 and 10)"},
        {"A:add(S)", "add: lengths differ (10 and 3)"},
        {"A:add(F)", "add: types differ (int32 and float64)"},
        {"A:lt(S)", "lt: lengths differ"},
        {"A:filter(M:slice(0, 5))", "filter: lengths differ"},
        {"A:filter(A)", "needs a bool mask"},
        {"A:gather(F)", "indices must be an int32 or int64 array"},
        {"A:slice(5, 2)", "range [5, 2) is not within [0, 10]"},
        {"A:slice(0, 11)", "is not within"},
        {"A:to_table(-1)", "is not within"},
        {"halo.array('int32', -1)", "out of range"},
        {"halo.array('int8', 3)", "unknown array type 'int8'"},
        {"A:div(2)", "needs a float array"},
        {"A:scale(0.5)", "expected an integer for a int32 array"},
        {"A:scale('x')", "expected a number, got string"},
        {"A:scale(F)", "expected a number"},
        {"A:add(2^40)", "does not fit int32"},
        {"M:add(1)", "needs a numeric array, got bool"},
        {"M:lt(1)", "compares (eq, ne) with a boolean"},
        {"A:topk(-1)", "k must be >= 0"},
        {"A:concat(F)", "types differ"},
        {"F:fill(0/0):astype('int32')", "does not fit int32"},
        {"A:search(F)", "types differ"},
        {"halo.from_table('int32', {1, 'x'})", "expected a number, got string"},
        {"A:maximum(S)", "maximum: lengths differ (10 and 3)"},
        {"A:minimum(F)", "minimum: types differ (int32 and float64)"},
        {"M:maximum(M)", "maximum: needs a numeric array, got bool"},
        {"M:minimum(true)", "minimum: needs a numeric array, got bool"},
        {"A:maximum(0.5)", "maximum: expected an integer for a int32 array"},
        {"A:minimum(2^31)", "minimum: 2147483648 does not fit int32"},
        {"A:maximum('x')", "maximum: expected a number, got string"},
        {"A:minimum()", "minimum: expected a number, got no value"},
        {"FD:maximum(true)", "maximum: expected a number, got boolean"},
        {"A:div_at(S, 2)", "div_at: needs a float array, got int32"},
        {"M:div_at(S, 1)", "div_at: needs a numeric array, got bool"},
        {"FD:div_at(BAD, 0)", "div_at: index 10 (at position 1) out of range [0, 10)"},
        {"FD:div_at(NEG, 0)", "div_at: index -1 (at position 0) out of range"},
        {"FD:div_at(BIG, 0)", "div_at: index 4294967296 (at position 0) out of range [0, 10)"},
        {"FD:div_at(S, FD)", "div_at: lengths differ (3 and 10)"},
        {"FD:div_at(S, S)", "div_at: types differ (float64 and int32)"},
        {"FD:div_at(FD, 2)", "div_at: indices must be an int32 or int64 array, got float64"},
        {"FD:div_at(S, 'x')", "div_at: expected a number, got string"},
        {"FD:div_at(S)", "div_at: expected a number, got no value"},
        {"halo.array('float32', 0):div_at(S, 2)",
         "div_at: index 0 (at position 0) out of range [0, 0)"},
        {"A:topk_mask(-1)", "topk_mask: k must be >= 0, got -1"},
        {"A:topk_mask(1.5)", "number has no integer representation"},
        {"A:topk_mask()", "number expected, got no value"},
        {"A.topk_mask({}, 1)", "halo.array expected, got table"},
        {"A.nosuch()", "attempt to call a nil value"},
        {"getmetatable(A).__index = nil", "attempt to index a boolean value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = run("%s", cases[i][0]);
        if (st == LUA_OK || strstr(errbuf, cases[i][1]) == NULL) {
            fail_msg("%s: want an error containing '%s', got status %d: %s", cases[i][0],
                     cases[i][1], st, errbuf);
        }
        run_ok("assert(A:sum() == 45 and FD:sum() == 10)"); /* still alive and unchanged */
    }
    /* empty arrays */
    run_ok("assert(E:sum() == 0 and E:mean() == nil and E:min() == nil and E:max() == nil)");
    run_ok("local v, i = E:topk(3); assert(#v == 0 and #i == 0)");
    run_ok("assert(rawequal(E:maximum(E), E) and #E:minimum(3) == 0 and #E:topk_mask(3) == 0 and "
           "#halo.array('float64', 0):div_at(E, 2) == 0 and #FD:div_at(E, 0) == 10 and "
           "FD:sum() == 10)");
    run_ok("assert(#E:argsort() == 0 and #E:unique() == 0 and #E:where() == 0 and "
           "#E:sort() == 0 and E:count() == 0 and #E:slice(0, 0) == 0)");
    run_ok(
        "assert(#E:concat(E) == 0 and #E:to_table() == 0 and #halo.from_table('int32', {}) == 0)");
}

/* Views of C memory: writes refused when read-only, use after the call refused. */
static void views_are_zero_copy_read_only_and_expire(void **state)
{
    (void)state;
    int32_t buf[4] = {1, 2, 3, 4};
    double sc[4] = {0, 0, 0, 0};
    halo_policy_push_view(L, buf, 4, HALO_PA_I32, false, "ctx.halo.ids");
    lua_setglobal(L, "V");
    halo_policy_push_view(L, sc, 4, HALO_PA_F64, true, "ctx.halo.score");
    lua_setglobal(L, "W");
    run_ok("assert(V:sum() == 10); W:add(V:astype('float64')):scale(2)");
    assert_true(sc[3] == 8.0); /* the writes reached C memory */
    buf[0] = 100;
    run_ok("assert(V:get(0) == 100)"); /* and reads see C memory */
    assert_int_equal(run("V:set(0, 5)"), LUA_ERRRUN);
    assert_non_null(strstr(errbuf, "ctx.halo.ids is read-only"));
    assert_int_equal(run("V:fill(0)"), LUA_ERRRUN);
    assert_int_equal(run("V:add_at(halo.range(1), 1)"), LUA_ERRRUN);
    assert_int_equal(buf[1], 2);
    pol->gen++; /* the hook call that made them returned */
    assert_int_equal(run("return V:sum()"), LUA_ERRRUN);
    assert_non_null(strstr(errbuf, "ctx.halo.ids was used after its hook call returned"));
    assert_int_equal(run("W:fill(1)"), LUA_ERRRUN);
    run_ok("local c = halo.range(3):copy(); assert(c:sum() == 3)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elementwise_arithmetic_matches_c),
        cmocka_unit_test(comparisons_make_masks_like_c),
        cmocka_unit_test(scatter_and_gather_match_c),
        cmocka_unit_test(where_filter_count_match_c),
        cmocka_unit_test(ordering_methods_match_c),
        cmocka_unit_test(reductions_match_c),
        cmocka_unit_test(maximum_minimum_match_c),
        cmocka_unit_test(maximum_minimum_are_exact_for_int64),
        cmocka_unit_test(div_at_matches_c),
        cmocka_unit_test(topk_mask_and_topk_match_c),
        cmocka_unit_test(topk_mask_tie_order_by_hand),
        cmocka_unit_test(cache_pos_is_a_read_only_view_of_the_callers_map),
        cmocka_unit_test(basics_and_conversions_round_trip),
        cmocka_unit_test(bad_calls_raise_errors_not_crashes),
        cmocka_unit_test(views_are_zero_copy_read_only_and_expire),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
