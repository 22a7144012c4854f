/* halo arrays, element-wise operations: arithmetic in place, comparisons into masks, mask
 * logic, and the indexed forms (gather, scatter with add/scale/div/set, where, filter). */
#include "policy/array_impl.h"

#include <math.h>
#include <string.h>

/* ---- methods: elementwise arithmetic (in place) ---- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };

/* self op= x where x is a halo_policy_scalar or an array of the same type and length. Integer
 * arrays wrap around on overflow and refuse div (convert to float first). */
static int arith(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    if (a->type == HALO_PA_BOOL) {
        return luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    if (op == OP_DIV && IS_INT(a->type)) {
        return luaL_error(L, "%s: needs a float array, got %s (use :astype)", what,
                          halo_policy_type_name(a->type));
    }
    int64_t n = a->n;
    halo_policy_array *b = halo_policy_to_array(L, 2);
    const void *q = NULL;
    halo_policy_scalar s = {0, 0};
    if (b != NULL) {
        halo_policy_same_type(L, a, b, what);
        halo_policy_same_len(L, a->n, b->n, what);
        q = b->data;
    } else {
        s = halo_policy_check_scalar(L, 2, a->type, what);
    }
    halo_policy_charge(L, n);
#define ARITH_LOOP(T, EXPR)                                                                        \
    do {                                                                                           \
        T *p = a->data;                                                                            \
        if (q != NULL) {                                                                           \
            const T *qq = q;                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T y = qq[i];                                                                       \
                p[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            T y = IS_FLT(a->type) ? (T)s.f : (T)s.i;                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                p[i] = (EXPR);                                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#define ARITH_TYPE(T)                                                                              \
    if (IS_INT(a->type)) {                                                                         \
        switch (op) {                                                                              \
        case OP_ADD: ARITH_LOOP(T, (T)((uint64_t)p[i] + (uint64_t)y)); break;                      \
        case OP_SUB: ARITH_LOOP(T, (T)((uint64_t)p[i] - (uint64_t)y)); break;                      \
        case OP_MAX: ARITH_LOOP(T, y > p[i] ? y : p[i]); break;                                    \
        case OP_MIN: ARITH_LOOP(T, y < p[i] ? y : p[i]); break;                                    \
        default: ARITH_LOOP(T, (T)((uint64_t)p[i] * (uint64_t)y)); break;                          \
        }                                                                                          \
    } else {                                                                                       \
        switch (op) {                                                                              \
        case OP_ADD: ARITH_LOOP(T, p[i] + y); break;                                               \
        case OP_SUB: ARITH_LOOP(T, p[i] - y); break;                                               \
        case OP_MUL: ARITH_LOOP(T, p[i] * y); break;                                               \
        case OP_MAX: ARITH_LOOP(T, y > p[i] ? y : p[i]); break;                                    \
        case OP_MIN: ARITH_LOOP(T, y < p[i] ? y : p[i]); break;                                    \
        default: ARITH_LOOP(T, p[i] / y); break;                                                   \
        }                                                                                          \
    }
    switch (a->type) {
    case HALO_PA_I32: ARITH_TYPE(int32_t) break;
    case HALO_PA_I64: ARITH_TYPE(int64_t) break;
    case HALO_PA_F32: ARITH_TYPE(float) break;
    default: ARITH_TYPE(double) break;
    }
#undef ARITH_TYPE
#undef ARITH_LOOP
    lua_settop(L, 1);
    return 1;
}

static int m_add(lua_State *L)
{
    return arith(L, OP_ADD, "add");
}
static int m_sub(lua_State *L)
{
    return arith(L, OP_SUB, "sub");
}
static int m_mul(lua_State *L)
{
    return arith(L, OP_MUL, "mul");
}
static int m_div(lua_State *L)
{
    return arith(L, OP_DIV, "div");
}
static int m_maximum(lua_State *L)
{
    return arith(L, OP_MAX, "maximum");
}
static int m_minimum(lua_State *L)
{
    return arith(L, OP_MIN, "minimum");
}
static int m_scale(lua_State *L)
{
    if (halo_policy_to_array(L, 2) != NULL) {
        return luaL_error(L, "scale: expected a number (use :mul for an array)");
    }
    return arith(L, OP_MUL, "scale");
}

/* round_f32(): every element of a float64 array rounded to the nearest float32, in place (a
 * float32 array is left as it is). Rounding after each operation gives float32 arithmetic on
 * float64 storage exactly: the double result of +, -, *, / on two float32 values rounds to the
 * correctly rounded float32 result (53 >= 2 * 24 + 2 bits), as numpy's float32 arrays compute. */
static int m_round_f32(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    if (!IS_FLT(a->type)) {
        return luaL_error(L, "round_f32: float arrays only, got %s",
                          halo_policy_type_name(a->type));
    }
    halo_policy_charge(L, a->n);
    if (a->type == HALO_PA_F64) {
        double *x = a->data;
        for (int64_t i = 0; i < a->n; i++) {
            x[i] = (double)(float)x[i];
        }
    }
    lua_settop(L, 1);
    return 1;
}

/* ---- methods: comparisons ---- */

enum { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };

/* Elementwise comparison against a halo_policy_scalar or an array of the same type and length ->
 * bool mask. Integer arrays against an integer compare exactly, otherwise as doubles (IEEE: NaN is
 * unequal to everything). */
static int compare(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *b = halo_policy_to_array(L, 2);
    int64_t n = a->n;
    if (b != NULL) {
        halo_policy_same_type(L, a, b, what);
        halo_policy_same_len(L, a->n, b->n, what);
    }
    bool int_scalar = false;
    int64_t si = 0;
    double sf = 0;
    if (b == NULL) {
        if (a->type == HALO_PA_BOOL) {
            if (!lua_isboolean(L, 2) || (op != CMP_EQ && op != CMP_NE)) {
                return luaL_error(L, "%s: a bool array compares (eq, ne) with a boolean", what);
            }
            si = lua_toboolean(L, 2);
            int_scalar = true;
        } else if (lua_type(L, 2) != LUA_TNUMBER) {
            return luaL_error(L, "%s: expected a number or an array, got %s", what,
                              luaL_typename(L, 2));
        } else if (lua_isinteger(L, 2) && IS_INT(a->type)) {
            int_scalar = true;
            si = lua_tointeger(L, 2);
        } else {
            sf = lua_tonumber(L, 2);
        }
    }
    halo_policy_charge(L, n);
    halo_policy_array *m = halo_policy_new_raw(L, HALO_PA_BOOL, n);
    uint8_t *o = m->data;
#define CMP_LOOP(X, Y)                                                                             \
    switch (op) {                                                                                  \
    case CMP_LT:                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) < (Y);                                                                      \
        }                                                                                          \
        break;                                                                                     \
    case CMP_LE:                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) <= (Y);                                                                     \
        }                                                                                          \
        break;                                                                                     \
    case CMP_GT:                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) > (Y);                                                                      \
        }                                                                                          \
        break;                                                                                     \
    case CMP_GE:                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) >= (Y);                                                                     \
        }                                                                                          \
        break;                                                                                     \
    case CMP_EQ:                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) == (Y);                                                                     \
        }                                                                                          \
        break;                                                                                     \
    default:                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                          \
            o[i] = (X) != (Y);                                                                     \
        }                                                                                          \
        break;                                                                                     \
    }
    TYPED(
        a->type, const T *p = a->data; if (b != NULL) {
            const T *q = b->data;
            CMP_LOOP(p[i], q[i])
        } else if (int_scalar) { CMP_LOOP((int64_t)p[i], si) } else {CMP_LOOP((double)p[i], sf)})
#undef CMP_LOOP
    return 1;
}

static int m_lt(lua_State *L)
{
    return compare(L, CMP_LT, "lt");
}
static int m_le(lua_State *L)
{
    return compare(L, CMP_LE, "le");
}
static int m_gt(lua_State *L)
{
    return compare(L, CMP_GT, "gt");
}
static int m_ge(lua_State *L)
{
    return compare(L, CMP_GE, "ge");
}
static int m_eq(lua_State *L)
{
    return compare(L, CMP_EQ, "eq");
}
static int m_ne(lua_State *L)
{
    return compare(L, CMP_NE, "ne");
}

/* Mask logic: land/lor combine two masks of equal length, lnot negates. */
static int mask_logic(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = halo_policy_check_bool(L, 1, what);
    halo_policy_array *b = op == 2 ? NULL : halo_policy_check_bool(L, 2, what);
    if (b != NULL) {
        halo_policy_same_len(L, a->n, b->n, what);
    }
    halo_policy_charge(L, a->n);
    halo_policy_array *m = halo_policy_new_raw(L, HALO_PA_BOOL, a->n);
    const uint8_t *p = a->data;
    uint8_t *o = m->data;
    for (int64_t i = 0; i < a->n; i++) {
        if (op == 0) {
            o[i] = p[i] & ((const uint8_t *)b->data)[i];
        } else if (op == 1) {
            o[i] = p[i] | ((const uint8_t *)b->data)[i];
        } else {
            o[i] = !p[i];
        }
    }
    return 1;
}

static int m_land(lua_State *L)
{
    return mask_logic(L, 0, "land");
}
static int m_lor(lua_State *L)
{
    return mask_logic(L, 1, "lor");
}
static int m_lnot(lua_State *L)
{
    return mask_logic(L, 2, "lnot");
}

/* ---- methods: indexing ---- */

static int m_gather(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *ix = halo_policy_check_index(L, 2, "gather");
    halo_policy_check_indices(L, ix, a->n, "gather");
    halo_policy_charge(L, ix->n);
    halo_policy_array *o = halo_policy_new_raw(L, a->type, ix->n);
    int64_t m = ix->n;
    TYPED(
        a->type, const T *p = a->data; T *q = o->data; if (ix->type == HALO_PA_I32) {
            const int32_t *k = ix->data;
            for (int64_t i = 0; i < m; i++) {
                q[i] = p[k[i]];
            }
        } else {
            const int64_t *k = ix->data;
            for (int64_t i = 0; i < m; i++) {
                q[i] = p[k[i]];
            }
        })
    return 1;
}

enum { AT_ADD, AT_MUL, AT_SET, AT_DIV };

/* self[idx[k]] op= x (or x[k]) for every k, in order (repeated indices accumulate). */
static int scatter(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    halo_policy_array *ix = halo_policy_check_index(L, 2, what);
    if (op != AT_SET && a->type == HALO_PA_BOOL) {
        return luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    if (op == AT_DIV && IS_INT(a->type)) {
        return luaL_error(L, "%s: needs a float array, got %s (use :astype)", what,
                          halo_policy_type_name(a->type));
    }
    halo_policy_array *b = halo_policy_to_array(L, 3);
    halo_policy_scalar s = {0, 0};
    if (b != NULL) {
        halo_policy_same_type(L, a, b, what);
        halo_policy_same_len(L, ix->n, b->n, what);
    } else {
        s = halo_policy_check_scalar(L, 3, a->type, what);
    }
    halo_policy_check_indices(L, ix, a->n, what);
    halo_policy_charge(L, ix->n);
    int64_t m = ix->n;
    /* One tight loop per (element type, index type, operation, halo_policy_scalar or array). */
#define SCATTER_IX(T, IT, EXPR)                                                                    \
    do {                                                                                           \
        T *p = a->data;                                                                            \
        const IT *k_ = ix->data;                                                                   \
        if (b != NULL) {                                                                           \
            const T *q = b->data;                                                                  \
            for (int64_t k = 0; k < m; k++) {                                                      \
                T y = q[k];                                                                        \
                T *d = p + k_[k];                                                                  \
                *d = (EXPR);                                                                       \
            }                                                                                      \
        } else {                                                                                   \
            T y = IS_FLT(a->type) ? (T)s.f : (T)s.i;                                               \
            for (int64_t k = 0; k < m; k++) {                                                      \
                T *d = p + k_[k];                                                                  \
                *d = (EXPR);                                                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#define SCATTER_OP(T, EXPR)                                                                        \
    do {                                                                                           \
        if (ix->type == HALO_PA_I32) {                                                             \
            SCATTER_IX(T, int32_t, EXPR);                                                          \
        } else {                                                                                   \
            SCATTER_IX(T, int64_t, EXPR);                                                          \
        }                                                                                          \
    } while (0)
#define SCATTER_TYPE(T)                                                                            \
    do {                                                                                           \
        if (op == AT_SET) {                                                                        \
            SCATTER_OP(T, y);                                                                      \
        } else if (IS_INT(a->type)) {                                                              \
            if (op == AT_ADD) {                                                                    \
                SCATTER_OP(T, (T)((uint64_t)*d + (uint64_t)y));                                    \
            } else {                                                                               \
                SCATTER_OP(T, (T)((uint64_t)*d * (uint64_t)y));                                    \
            }                                                                                      \
        } else if (op == AT_ADD) {                                                                 \
            SCATTER_OP(T, (T)(*d + y));                                                            \
        } else if (op == AT_DIV) {                                                                 \
            SCATTER_OP(T, (T)(*d / y));                                                            \
        } else {                                                                                   \
            SCATTER_OP(T, (T)(*d * y));                                                            \
        }                                                                                          \
    } while (0)
    switch (a->type) {
    case HALO_PA_I32: SCATTER_TYPE(int32_t); break;
    case HALO_PA_I64: SCATTER_TYPE(int64_t); break;
    case HALO_PA_F32: SCATTER_TYPE(float); break;
    case HALO_PA_F64: SCATTER_TYPE(double); break;
    default: SCATTER_TYPE(uint8_t); break;
    }
#undef SCATTER_TYPE
#undef SCATTER_OP
#undef SCATTER_IX
    lua_settop(L, 1);
    return 1;
}

static int m_add_at(lua_State *L)
{
    return scatter(L, AT_ADD, "add_at");
}
static int m_scale_at(lua_State *L)
{
    return scatter(L, AT_MUL, "scale_at");
}
static int m_div_at(lua_State *L)
{
    return scatter(L, AT_DIV, "div_at");
}
static int m_set_at(lua_State *L)
{
    return scatter(L, AT_SET, "set_at");
}

static int m_where(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    int64_t n = a->n, c = 0;
    halo_policy_charge(L, 2 * n);
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) { c += p[i] != 0; })
    halo_policy_array *o = halo_policy_new_raw(L, HALO_PA_I32, c);
    int32_t *q = o->data;
    int64_t k = 0;
    /* branch-free: write every position, advance on true; stops after the c-th true */
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; k < c; i++) {
            q[k] = (int32_t)i;
            k += p[i] != 0;
        })
    return 1;
}

static int m_filter(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *mk = halo_policy_check_bool(L, 2, "filter");
    halo_policy_same_len(L, a->n, mk->n, "filter");
    int64_t n = a->n, c = 0;
    const uint8_t *m = mk->data;
    halo_policy_charge(L, 2 * n);
    for (int64_t i = 0; i < n; i++) {
        c += m[i] != 0;
    }
    halo_policy_array *o = halo_policy_new_raw(L, a->type, c);
    int64_t k = 0;
    /* branch-free: write every element, advance on true; stops after the c-th true */
    TYPED(
        a->type, const T *p = a->data; T *q = o->data; for (int64_t i = 0; k < c; i++) {
            q[k] = p[i];
            k += m[i] != 0;
        })
    return 1;
}

const halo_policy_reg halo_policy_array_elem_methods[] = {
    {"round_f32", m_round_f32, "a:round_f32() -> a",
     "every element rounded to the nearest float32 (float32 arithmetic on a float64 array)"},
    {"scale", m_scale, "a:scale(s) -> a", "a[i] = a[i] * s for every i"},
    {"add", m_add, "a:add(x) -> a", "a[i] = a[i] + x (x a number or an array of a's type/length)"},
    {"sub", m_sub, "a:sub(x) -> a", "a[i] = a[i] - x (number or array)"},
    {"mul", m_mul, "a:mul(x) -> a", "a[i] = a[i] * x (number or array)"},
    {"div", m_div, "a:div(x) -> a", "a[i] = a[i] / x (float arrays only)"},
    {"maximum", m_maximum, "a:maximum(x) -> a",
     "a[i] = max(a[i], x) (number or array; a NaN in a stays, one in x is ignored)"},
    {"minimum", m_minimum, "a:minimum(x) -> a",
     "a[i] = min(a[i], x) (number or array; a NaN in a stays, one in x is ignored)"},
    {"add_at", m_add_at, "a:add_at(idx, x) -> a",
     "scatter-add: a[idx[k]] += x (or x[k]); repeated indices accumulate"},
    {"scale_at", m_scale_at, "a:scale_at(idx, x) -> a", "a[idx[k]] *= x (or x[k])"},
    {"div_at", m_div_at, "a:div_at(idx, x) -> a", "a[idx[k]] /= x (or x[k]); float arrays only"},
    {"set_at", m_set_at, "a:set_at(idx, x) -> a", "a[idx[k]] = x (or x[k]); the last one wins"},
    {"gather", m_gather, "a:gather(idx) -> array", "a new array: a[idx[0]], a[idx[1]], ..."},
    {"where", m_where, "m:where() -> int32 array", "positions of the true (nonzero) elements"},
    {"filter", m_filter, "a:filter(mask) -> array",
     "a new array of the elements where mask is true"},
    {"lt", m_lt, "a:lt(x) -> mask", "a[i] < x (x a number or an array of a's type/length)"},
    {"le", m_le, "a:le(x) -> mask", "a[i] <= x"},
    {"gt", m_gt, "a:gt(x) -> mask", "a[i] > x"},
    {"ge", m_ge, "a:ge(x) -> mask", "a[i] >= x"},
    {"eq", m_eq, "a:eq(x) -> mask", "a[i] == x"},
    {"ne", m_ne, "a:ne(x) -> mask", "a[i] ~= x"},
    {"land", m_land, "m:land(m2) -> mask", "elementwise and of two masks"},
    {"lor", m_lor, "m:lor(m2) -> mask", "elementwise or of two masks"},
    {"lnot", m_lnot, "m:lnot() -> mask", "elementwise not of a mask"},
    {NULL, NULL, NULL, NULL},
};
