/* halo arrays: Lua userdata over C memory with vector methods written in C, so a policy touches
 * whole arrays per call and never runs Lua per element. Indices are 0-based, like C and numpy. */
#include "policy/internal.h"

#include "core/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t elem_size[HALO_PA_NTYPES] = {4, 8, 4, 8, 1};
static const char *const type_names[HALO_PA_NTYPES] = {"int32", "int64", "float32", "float64",
                                                       "bool"};
#define MAX_ELEMS 2147483647LL
/* Bytes reserved for the header in an owned array (keeps elements 16-byte aligned). */
#define HDR_SIZE ((sizeof(halo_policy_array) + 15) & ~(size_t)15)

/* Expands the statement list once per element type with T bound to the C element type. */
#define TYPED(t, ...)                                                                              \
    switch (t) {                                                                                   \
    case HALO_PA_I32: {                                                                            \
        typedef int32_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_I64: {                                                                            \
        typedef int64_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_F32: {                                                                            \
        typedef float T;                                                                           \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_F64: {                                                                            \
        typedef double T;                                                                          \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    default: {                                                                                     \
        typedef uint8_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    }

/* Numeric types only (bool arrays are refused before). */
#define IS_INT(t) ((t) == HALO_PA_I32 || (t) == HALO_PA_I64)
#define IS_FLT(t) ((t) == HALO_PA_F32 || (t) == HALO_PA_F64)

const char *halo_policy_type_name(int type)
{
    return type >= 0 && type < HALO_PA_NTYPES ? type_names[type] : "?";
}

/* ---- access helpers ---- */

static int parse_type(lua_State *L, int idx)
{
    const char *s = luaL_checkstring(L, idx);
    for (int t = 0; t < HALO_PA_NTYPES; t++) {
        if (strcmp(s, type_names[t]) == 0) {
            return t;
        }
    }
    return luaL_error(L, "unknown array type '%s' (int32, int64, float32, float64, bool)", s);
}

halo_policy_array *halo_policy_to_array(lua_State *L, int idx)
{
    halo_policy_array *a = luaL_testudata(L, idx, HALO_PA_MT);
    if (a != NULL && a->borrowed && a->gen != halo_policy_of(L)->gen) {
        luaL_error(L, "%s was used after its hook call returned (keep a :copy() instead)",
                   a->name ? a->name : "an array view");
    }
    return a;
}

/* The array argument at idx (a Lua error naming the argument when it is not one). */
static halo_policy_array *check_arr(lua_State *L, int idx)
{
    halo_policy_array *a = halo_policy_to_array(L, idx);
    if (a == NULL) {
        luaL_typeerror(L, idx, "halo.array");
    }
    return a;
}

/* The array at idx, which the caller is about to modify. */
static halo_policy_array *check_warr(lua_State *L, int idx)
{
    halo_policy_array *a = check_arr(L, idx);
    if (a->readonly) {
        luaL_error(L, "%s is read-only", a->name ? a->name : "this array");
    }
    return a;
}

static halo_policy_array *check_num(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = check_arr(L, idx);
    if (a->type == HALO_PA_BOOL) {
        luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    return a;
}

static halo_policy_array *check_bool(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = check_arr(L, idx);
    if (a->type != HALO_PA_BOOL) {
        luaL_error(L, "%s: needs a bool mask, got %s", what, type_names[a->type]);
    }
    return a;
}

static halo_policy_array *check_index_arr(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = check_arr(L, idx);
    if (!IS_INT(a->type)) {
        luaL_error(L, "%s: indices must be an int32 or int64 array, got %s", what,
                   type_names[a->type]);
    }
    return a;
}

static void same_type(lua_State *L, const halo_policy_array *a, const halo_policy_array *b,
                      const char *what)
{
    if (a->type != b->type) {
        luaL_error(L, "%s: types differ (%s and %s); convert with :astype()", what,
                   type_names[a->type], type_names[b->type]);
    }
}

static void same_len(lua_State *L, int64_t a, int64_t b, const char *what)
{
    if (a != b) {
        luaL_error(L, "%s: lengths differ (%I and %I)", what, (lua_Integer)a, (lua_Integer)b);
    }
}

/* Pushes a new owned array whose elements the caller overwrites (not zeroed). */
static halo_policy_array *new_raw(lua_State *L, int type, int64_t n)
{
    if (n < 0 || n > MAX_ELEMS) {
        luaL_error(L, "array length %I out of range [0, 2^31)", (lua_Integer)n);
    }
    size_t bytes = HDR_SIZE + (size_t)n * elem_size[type];
    halo_policy_array *a = lua_newuserdatauv(L, bytes, 0);
    memset(a, 0, HDR_SIZE);
    a->data = (char *)a + HDR_SIZE;
    a->n = n;
    a->type = (uint8_t)type;
    luaL_setmetatable(L, HALO_PA_MT);
    return a;
}

halo_policy_array *halo_policy_new_array(lua_State *L, int type, int64_t n)
{
    halo_policy_array *a = new_raw(L, type, n);
    memset(a->data, 0, (size_t)n * elem_size[type]);
    return a;
}

void halo_policy_push_view(lua_State *L, void *data, int64_t n, int type, bool writable,
                           const char *name)
{
    halo_policy_array *a = lua_newuserdatauv(L, sizeof *a, 0);
    a->data = data;
    a->n = n;
    a->type = (uint8_t)type;
    a->readonly = !writable;
    a->borrowed = 1;
    a->pad = 0;
    a->gen = halo_policy_of(L)->gen;
    a->name = name;
    luaL_setmetatable(L, HALO_PA_MT);
}

/* Pushes element i of a as a Lua value. */
static void push_elem(lua_State *L, const halo_policy_array *a, int64_t i)
{
    switch (a->type) {
    case HALO_PA_I32: lua_pushinteger(L, ((const int32_t *)a->data)[i]); break;
    case HALO_PA_I64: lua_pushinteger(L, ((const int64_t *)a->data)[i]); break;
    case HALO_PA_F32: lua_pushnumber(L, ((const float *)a->data)[i]); break;
    case HALO_PA_F64: lua_pushnumber(L, ((const double *)a->data)[i]); break;
    default: lua_pushboolean(L, ((const uint8_t *)a->data)[i] != 0); break;
    }
}

/* A scalar argument converted for an array of the given type: integers for integer arrays
 * (an integral float is accepted), numbers for float arrays, booleans for bool arrays. */
typedef struct scalar {
    int64_t i; /* integer arrays and bool */
    double f;  /* float arrays */
} scalar;

static scalar check_scalar(lua_State *L, int idx, int type, const char *what)
{
    scalar s = {0, 0};
    if (type == HALO_PA_BOOL) {
        if (!lua_isboolean(L, idx)) {
            luaL_error(L, "%s: expected a boolean for a bool array, got %s", what,
                       luaL_typename(L, idx));
        }
        s.i = lua_toboolean(L, idx);
        return s;
    }
    if (lua_type(L, idx) != LUA_TNUMBER) {
        luaL_error(L, "%s: expected a number, got %s", what, luaL_typename(L, idx));
    }
    if (IS_INT(type)) {
        int ok;
        s.i = lua_tointegerx(L, idx, &ok);
        if (!ok) {
            luaL_error(L, "%s: expected an integer for a %s array, got %s", what, type_names[type],
                       lua_tostring(L, idx));
        }
        if (type == HALO_PA_I32 && (s.i < INT32_MIN || s.i > INT32_MAX)) {
            luaL_error(L, "%s: %I does not fit int32", what, (lua_Integer)s.i);
        }
    } else {
        s.f = lua_tonumber(L, idx);
    }
    return s;
}

/* Stores a Lua value into element i (converted and checked as check_scalar does). */
static void store_elem(lua_State *L, halo_policy_array *a, int64_t i, int idx, const char *what)
{
    scalar s = check_scalar(L, idx, a->type, what);
    switch (a->type) {
    case HALO_PA_I32: ((int32_t *)a->data)[i] = (int32_t)s.i; break;
    case HALO_PA_I64: ((int64_t *)a->data)[i] = s.i; break;
    case HALO_PA_F32: ((float *)a->data)[i] = (float)s.f; break;
    case HALO_PA_F64: ((double *)a->data)[i] = s.f; break;
    default: ((uint8_t *)a->data)[i] = (uint8_t)s.i; break;
    }
}

/* Index i of a (0-based), a Lua error when out of range. */
static int64_t check_pos(lua_State *L, int idx, int64_t n, const char *what)
{
    lua_Integer i = luaL_checkinteger(L, idx);
    if (i < 0 || i >= n) {
        luaL_error(L, "%s: index %I out of range [0, %I)", what, i, (lua_Integer)n);
    }
    return i;
}

/* Reads index k of an int32/int64 index array and checks it against n. */
static inline int64_t idx_at(const halo_policy_array *ix, int64_t k)
{
    return ix->type == HALO_PA_I32 ? ((const int32_t *)ix->data)[k]
                                   : ((const int64_t *)ix->data)[k];
}

/* First index of ix outside [0, n), or -1 when all are in range. */
static int64_t first_bad_index(const halo_policy_array *ix, int64_t n)
{
    if (ix->type == HALO_PA_I32) {
        const int32_t *q = ix->data;
        uint64_t bad = 0;
        for (int64_t k = 0; k < ix->n; k++) {
            bad |= (uint64_t)((uint32_t)q[k] >= (uint64_t)n);
        }
        if (!bad) {
            return -1;
        }
    }
    for (int64_t k = 0; k < ix->n; k++) {
        int64_t v = idx_at(ix, k);
        if (v < 0 || v >= n) {
            return k;
        }
    }
    return -1;
}

static void check_indices(lua_State *L, const halo_policy_array *ix, int64_t n, const char *what)
{
    int64_t k = first_bad_index(ix, n);
    if (k >= 0) {
        luaL_error(L, "%s: index %I (at position %I) out of range [0, %I)", what,
                   (lua_Integer)idx_at(ix, k), (lua_Integer)k, (lua_Integer)n);
    }
}

/* ---- module functions ---- */

static int f_array(lua_State *L)
{
    int type = parse_type(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    bool has_value = !lua_isnoneornil(L, 3);
    halo_policy_charge(L, n);
    halo_policy_array *a = halo_policy_new_array(L, type, n);
    if (has_value) {
        scalar s = check_scalar(L, 3, type, "halo.array");
        TYPED(
            type, T *p = a->data; T v = IS_INT(type) || type == HALO_PA_BOOL ? (T)s.i : (T)s.f;
            for (int64_t i = 0; i < n; i++) { p[i] = v; })
    }
    return 1;
}

static int f_from_table(lua_State *L)
{
    int type = parse_type(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 2);
    if (n < 0 || n > MAX_ELEMS) {
        return luaL_error(L, "halo.from_table: length %I out of range", n);
    }
    halo_policy_charge(L, n * 16);
    halo_policy_array *a = halo_policy_new_array(L, type, n);
    for (lua_Integer i = 0; i < n; i++) {
        lua_geti(L, 2, i + 1);
        store_elem(L, a, i, -1, "halo.from_table");
        lua_pop(L, 1);
    }
    return 1;
}

static int f_range(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    int type = lua_isnoneornil(L, 2) ? HALO_PA_I32 : parse_type(L, 2);
    if (type == HALO_PA_BOOL) {
        return luaL_error(L, "halo.range: needs a numeric type");
    }
    halo_policy_charge(L, n);
    halo_policy_array *a = halo_policy_new_array(L, type, n);
    TYPED(
        type, T *p = a->data; for (int64_t i = 0; i < n; i++) { p[i] = (T)i; })
    return 1;
}

static int f_is_array(lua_State *L)
{
    lua_pushboolean(L, luaL_testudata(L, 1, HALO_PA_MT) != NULL);
    return 1;
}

const halo_policy_reg halo_policy_module_funcs[] = {
    {"array", f_array, "halo.array(type, n [, value]) -> array",
     "new array of n elements of type int32|int64|float32|float64|bool, all 0/false or value"},
    {"from_table", f_from_table, "halo.from_table(type, t) -> array",
     "new array holding the values of the Lua sequence t"},
    {"range", f_range, "halo.range(n [, type]) -> array",
     "new array 0, 1, ..., n-1 (int32 unless type is given)"},
    {"is_array", f_is_array, "halo.is_array(x) -> boolean", "whether x is a halo array"},
    {NULL, NULL, NULL, NULL},
};

/* ---- methods: basics ---- */

static int m_len(lua_State *L)
{
    lua_pushinteger(L, check_arr(L, 1)->n);
    return 1;
}

static int m_type(lua_State *L)
{
    lua_pushstring(L, type_names[check_arr(L, 1)->type]);
    return 1;
}

static int m_get(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    push_elem(L, a, check_pos(L, 2, a->n, "get"));
    return 1;
}

static int m_set(lua_State *L)
{
    halo_policy_array *a = check_warr(L, 1);
    store_elem(L, a, check_pos(L, 2, a->n, "set"), 3, "set");
    lua_settop(L, 1);
    return 1;
}

static int m_fill(lua_State *L)
{
    halo_policy_array *a = check_warr(L, 1);
    scalar s = check_scalar(L, 2, a->type, "fill");
    halo_policy_charge(L, a->n);
    int64_t n = a->n;
    TYPED(
        a->type, T *p = a->data; T v = IS_FLT(a->type) ? (T)s.f : (T)s.i;
        for (int64_t i = 0; i < n; i++) { p[i] = v; })
    lua_settop(L, 1);
    return 1;
}

/* copy() returns a new array; copy(src) copies src's elements into self. */
static int m_copy(lua_State *L)
{
    if (lua_isnoneornil(L, 2)) {
        halo_policy_array *a = check_arr(L, 1);
        halo_policy_charge(L, a->n);
        halo_policy_array *b = new_raw(L, a->type, a->n);
        memcpy(b->data, a->data, (size_t)a->n * elem_size[a->type]);
        return 1;
    }
    halo_policy_array *a = check_warr(L, 1);
    halo_policy_array *src = check_arr(L, 2);
    same_type(L, a, src, "copy");
    same_len(L, a->n, src->n, "copy");
    halo_policy_charge(L, a->n);
    memmove(a->data, src->data, (size_t)a->n * elem_size[a->type]);
    lua_settop(L, 1);
    return 1;
}

/* Range [i, j) of a, defaults 0 and n; negative values are errors (not Python's wrap). */
static void check_range(lua_State *L, int64_t n, int ii, int ij, int64_t *i, int64_t *j,
                        const char *what)
{
    *i = luaL_optinteger(L, ii, 0);
    *j = luaL_optinteger(L, ij, n);
    if (*i < 0 || *j > n || *i > *j) {
        luaL_error(L, "%s: range [%I, %I) is not within [0, %I]", what, (lua_Integer)*i,
                   (lua_Integer)*j, (lua_Integer)n);
    }
}

static int m_slice(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int64_t i, j;
    check_range(L, a->n, 2, 3, &i, &j, "slice");
    halo_policy_charge(L, j - i);
    halo_policy_array *b = new_raw(L, a->type, j - i);
    memcpy(b->data, (char *)a->data + (size_t)i * elem_size[a->type],
           (size_t)(j - i) * elem_size[a->type]);
    return 1;
}

static int m_concat(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *b = check_arr(L, 2);
    same_type(L, a, b, "concat");
    halo_policy_charge(L, a->n + b->n);
    size_t es = elem_size[a->type];
    halo_policy_array *c = new_raw(L, a->type, a->n + b->n);
    memcpy(c->data, a->data, (size_t)a->n * es);
    memcpy((char *)c->data + (size_t)a->n * es, b->data, (size_t)b->n * es);
    return 1;
}

/* Converts element v (of source type) to destination type U, failing when it does not fit. */
static int m_astype(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int type = parse_type(L, 2);
    halo_policy_charge(L, a->n);
    halo_policy_array *b = halo_policy_new_array(L, type, a->n);
    int64_t n = a->n;
    int64_t bad = -1;
    TYPED(
        a->type, const T *p = a->data; switch (type) {
            case HALO_PA_I32: {
                int32_t *q = b->data;
                for (int64_t i = 0; i < n; i++) {
                    double v = (double)p[i];
                    if (!(v >= -2147483648.0 && v < 2147483648.0)) {
                        bad = i;
                        break;
                    }
                    q[i] = (int32_t)p[i];
                }
            } break;
            case HALO_PA_I64: {
                int64_t *q = b->data;
                for (int64_t i = 0; i < n; i++) {
                    double v = (double)p[i];
                    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
                        bad = i;
                        break;
                    }
                    q[i] = (int64_t)p[i];
                }
            } break;
            case HALO_PA_F32: {
                float *q = b->data;
                for (int64_t i = 0; i < n; i++) {
                    q[i] = (float)p[i];
                }
            } break;
            case HALO_PA_F64: {
                double *q = b->data;
                for (int64_t i = 0; i < n; i++) {
                    q[i] = (double)p[i];
                }
            } break;
            default: {
                uint8_t *q = b->data;
                for (int64_t i = 0; i < n; i++) {
                    q[i] = p[i] != 0;
                }
            } break;
        })
    if (bad >= 0) {
        push_elem(L, a, bad);
        return luaL_error(L, "astype: element %I (%s) does not fit %s", (lua_Integer)bad,
                          lua_tostring(L, -1), type_names[type]);
    }
    return 1;
}

static int m_to_table(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int64_t i, j;
    check_range(L, a->n, 2, 3, &i, &j, "to_table");
    halo_policy_charge(L, (j - i) * 16);
    lua_createtable(L, (int)(j - i), 0);
    for (int64_t k = i; k < j; k++) {
        push_elem(L, a, k);
        lua_rawseti(L, -2, k - i + 1);
    }
    return 1;
}

static int m_tostring(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "halo.array(%s, %I){", type_names[a->type], (lua_Integer)a->n);
    luaL_addvalue(&b);
    for (int64_t i = 0; i < a->n && i < 8; i++) {
        push_elem(L, a, i);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        if (i > 0) {
            luaL_addstring(&b, ", ");
        }
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, a->n > 8 ? ", ...}" : "}");
    luaL_pushresult(&b);
    return 1;
}

/* ---- methods: elementwise arithmetic (in place) ---- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };

/* self op= x where x is a scalar or an array of the same type and length. Integer arrays wrap
 * around on overflow and refuse div (convert to float first). */
static int arith(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = check_warr(L, 1);
    if (a->type == HALO_PA_BOOL) {
        return luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    if (op == OP_DIV && IS_INT(a->type)) {
        return luaL_error(L, "%s: needs a float array, got %s (use :astype)", what,
                          type_names[a->type]);
    }
    int64_t n = a->n;
    halo_policy_array *b = halo_policy_to_array(L, 2);
    const void *q = NULL;
    scalar s = {0, 0};
    if (b != NULL) {
        same_type(L, a, b, what);
        same_len(L, a->n, b->n, what);
        q = b->data;
    } else {
        s = check_scalar(L, 2, a->type, what);
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

/* ---- methods: comparisons ---- */

enum { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };

/* Elementwise comparison against a scalar or an array of the same type and length -> bool
 * mask. Integer arrays against an integer compare exactly, otherwise as doubles (IEEE: NaN is
 * unequal to everything). */
static int compare(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *b = halo_policy_to_array(L, 2);
    int64_t n = a->n;
    if (b != NULL) {
        same_type(L, a, b, what);
        same_len(L, a->n, b->n, what);
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
    halo_policy_array *m = new_raw(L, HALO_PA_BOOL, n);
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
    halo_policy_array *a = check_bool(L, 1, what);
    halo_policy_array *b = op == 2 ? NULL : check_bool(L, 2, what);
    if (b != NULL) {
        same_len(L, a->n, b->n, what);
    }
    halo_policy_charge(L, a->n);
    halo_policy_array *m = new_raw(L, HALO_PA_BOOL, a->n);
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
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *ix = check_index_arr(L, 2, "gather");
    check_indices(L, ix, a->n, "gather");
    halo_policy_charge(L, ix->n);
    halo_policy_array *o = new_raw(L, a->type, ix->n);
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
    halo_policy_array *a = check_warr(L, 1);
    halo_policy_array *ix = check_index_arr(L, 2, what);
    if (op != AT_SET && a->type == HALO_PA_BOOL) {
        return luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    if (op == AT_DIV && IS_INT(a->type)) {
        return luaL_error(L, "%s: needs a float array, got %s (use :astype)", what,
                          type_names[a->type]);
    }
    halo_policy_array *b = halo_policy_to_array(L, 3);
    scalar s = {0, 0};
    if (b != NULL) {
        same_type(L, a, b, what);
        same_len(L, ix->n, b->n, what);
    } else {
        s = check_scalar(L, 3, a->type, what);
    }
    check_indices(L, ix, a->n, what);
    halo_policy_charge(L, ix->n);
    int64_t m = ix->n;
    /* One tight loop per (element type, index type, operation, scalar or array). */
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
    halo_policy_array *a = check_arr(L, 1);
    int64_t n = a->n, c = 0;
    halo_policy_charge(L, 2 * n);
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) { c += p[i] != 0; })
    halo_policy_array *o = new_raw(L, HALO_PA_I32, c);
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
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *mk = check_bool(L, 2, "filter");
    same_len(L, a->n, mk->n, "filter");
    int64_t n = a->n, c = 0;
    const uint8_t *m = mk->data;
    halo_policy_charge(L, 2 * n);
    for (int64_t i = 0; i < n; i++) {
        c += m[i] != 0;
    }
    halo_policy_array *o = new_raw(L, a->type, c);
    int64_t k = 0;
    /* branch-free: write every element, advance on true; stops after the c-th true */
    TYPED(
        a->type, const T *p = a->data; T *q = o->data; for (int64_t i = 0; k < c; i++) {
            q[k] = p[i];
            k += m[i] != 0;
        })
    return 1;
}

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
    halo_policy_array *o = new_raw(L, HALO_PA_I32, a->n);
    halo_policy_array *t = new_raw(L, HALO_PA_I32, a->n);
    order(a, o->data, t->data, desc);
    lua_pop(L, 1);
    return o;
}

static int m_argsort(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    push_order(L, a, lua_toboolean(L, 2));
    return 1;
}

static int m_sort(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *o = push_order(L, a, lua_toboolean(L, 2));
    halo_policy_array *v = new_raw(L, a->type, a->n);
    const int32_t *k = o->data;
    int64_t n = a->n;
    TYPED(
        a->type, const T *p = a->data; T *q = v->data;
        for (int64_t i = 0; i < n; i++) { q[i] = p[k[i]]; })
    return 1;
}

static int m_unique(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
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
    halo_policy_array *a = check_arr(L, 1);
    lua_Integer k = luaL_checkinteger(L, 2);
    bool sm = lua_toboolean(L, 3);
    if (k < 0) {
        return luaL_error(L, "topk: k must be >= 0, got %I", k);
    }
    if (k > a->n) {
        k = a->n;
    }
    halo_policy_charge(L, a->n * (1 + log2_ceil(k) / 4));
    halo_policy_array *vals = new_raw(L, a->type, k);
    halo_policy_array *pos = new_raw(L, HALO_PA_I32, k);
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
    halo_policy_array *a = check_arr(L, 1);
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
    halo_policy_array *a = check_arr(L, 1);
    halo_policy_array *v = check_arr(L, 2);
    same_type(L, a, v, "search");
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

/* ---- methods: reductions ---- */

static int m_sum(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int64_t n = a->n;
    halo_policy_charge(L, n);
    if (IS_FLT(a->type)) {
        double s = 0;
        TYPED(
            a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) { s += p[i]; })
        lua_pushnumber(L, s);
    } else {
        uint64_t s = 0;
        TYPED(
            a->type, const T *p = a->data;
            for (int64_t i = 0; i < n; i++) { s += (uint64_t)(int64_t)p[i]; })
        lua_pushinteger(L, (lua_Integer)s);
    }
    return 1;
}

static int m_mean(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int64_t n = a->n;
    if (n == 0) {
        lua_pushnil(L);
        return 1;
    }
    halo_policy_charge(L, n);
    double s = 0;
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) { s += (double)p[i]; })
    lua_pushnumber(L, s / (double)n);
    return 1;
}

/* min / max: nil for an empty array; NaN values are skipped unless all are NaN. */
static int minmax(lua_State *L, bool want_max)
{
    halo_policy_array *a = check_num(L, 1, want_max ? "max" : "min");
    int64_t n = a->n;
    if (n == 0) {
        lua_pushnil(L);
        return 1;
    }
    halo_policy_charge(L, n);
    int64_t best = 0;
    TYPED(
        a->type, const T *p = a->data; T m = p[0]; for (int64_t i = 1; i < n; i++) {
            T x = p[i];
            if ((want_max ? x > m : x < m) || (m != m && x == x)) {
                m = x;
                best = i;
            }
        })
    push_elem(L, a, best);
    lua_pushinteger(L, best);
    return 2;
}

static int m_min(lua_State *L)
{
    return minmax(L, false);
}
static int m_max(lua_State *L)
{
    return minmax(L, true);
}

static int m_count(lua_State *L)
{
    halo_policy_array *a = check_arr(L, 1);
    int64_t n = a->n, c = 0;
    halo_policy_charge(L, n);
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) { c += p[i] != 0; })
    lua_pushinteger(L, c);
    return 1;
}

const halo_policy_reg halo_policy_array_methods[] = {
    {"len", m_len, "a:len() -> integer", "number of elements (also #a)"},
    {"type", m_type, "a:type() -> string", "element type: int32, int64, float32, float64, bool"},
    {"get", m_get, "a:get(i) -> value", "element i (0-based); for small use, not in loops"},
    {"set", m_set, "a:set(i, v) -> a", "sets element i (0-based)"},
    {"fill", m_fill, "a:fill(v) -> a", "sets every element to v"},
    {"copy", m_copy, "a:copy([src]) -> array",
     "a new copy of a; with src, copies src (same type and length) into a and returns a"},
    {"slice", m_slice, "a:slice(i [, j]) -> array", "a new array of the elements [i, j)"},
    {"concat", m_concat, "a:concat(b) -> array", "a new array: a's elements then b's"},
    {"astype", m_astype, "a:astype(type) -> array",
     "a converted copy (floats truncate toward zero; an element that does not fit is an error)"},
    {"to_table", m_to_table, "a:to_table([i, j]) -> table",
     "the elements [i, j) as a Lua sequence (t[1] is a[i])"},
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
    {"sum", m_sum, "a:sum() -> number", "sum (integer arrays: integer; bool: count of true)"},
    {"mean", m_mean, "a:mean() -> number|nil", "arithmetic mean, nil when empty"},
    {"min", m_min, "a:min() -> value, position",
     "smallest element and its position (nil if empty)"},
    {"max", m_max, "a:max() -> value, position", "largest element and its position (nil if empty)"},
    {"count", m_count, "a:count() -> integer", "number of true (nonzero) elements"},
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

void halo_policy_open_arrays(lua_State *L)
{
    /* module table is on top */
    for (const halo_policy_reg *r = halo_policy_module_funcs; r->name != NULL; r++) {
        lua_pushcfunction(L, r->fn);
        lua_setfield(L, -2, r->name);
    }
    luaL_newmetatable(L, HALO_PA_MT);
    lua_newtable(L);
    for (const halo_policy_reg *r = halo_policy_array_methods; r->name != NULL; r++) {
        lua_pushcfunction(L, r->fn);
        lua_setfield(L, -2, r->name);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, m_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, m_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, "halo.array");
    lua_setfield(L, -2, "__name");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}
