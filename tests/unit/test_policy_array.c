/* Unit tests of halo arrays: every vector method against a plain C reference on random inputs
 * (all element types, empty arrays included), and errors (never crashes) on bad indices,
 * lengths and types. */
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
           "NEG = halo.from_table('int64', {-1}); S = halo.array('int32', 3)");
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
        {"A.nosuch()", "attempt to call a nil value"},
        {"getmetatable(A).__index = nil", "attempt to index a boolean value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = run("%s", cases[i][0]);
        if (st == LUA_OK || strstr(errbuf, cases[i][1]) == NULL) {
            fail_msg("%s: want an error containing '%s', got status %d: %s", cases[i][0],
                     cases[i][1], st, errbuf);
        }
        run_ok("assert(A:sum() == 45)"); /* still alive and unchanged */
    }
    /* empty arrays */
    run_ok("assert(E:sum() == 0 and E:mean() == nil and E:min() == nil and E:max() == nil)");
    run_ok("local v, i = E:topk(3); assert(#v == 0 and #i == 0)");
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
        cmocka_unit_test(basics_and_conversions_round_trip),
        cmocka_unit_test(bad_calls_raise_errors_not_crashes),
        cmocka_unit_test(views_are_zero_copy_read_only_and_expire),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
