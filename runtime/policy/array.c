/* halo arrays: Lua userdata over C memory with vector methods written in C, so a policy touches
 * whole arrays per call and never runs Lua per element. Indices are 0-based, like C and numpy. */
#include "policy/internal.h"

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

void halo_policy_charge(lua_State *L, int64_t n)
{
    halo_policy *p = halo_policy_of(L);
    if (!p->in_call) {
        return;
    }
    p->used += 1 + (n > 0 ? n >> 4 : 0); /* never negative: a bad length cannot buy budget */
    if (p->used >= p->budget) {
        p->over = true;
        luaL_error(L, "instruction budget of %I exceeded", (lua_Integer)p->budget);
    }
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

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV };

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
        default: ARITH_LOOP(T, (T)((uint64_t)p[i] * (uint64_t)y)); break;                          \
        }                                                                                          \
    } else {                                                                                       \
        switch (op) {                                                                              \
        case OP_ADD: ARITH_LOOP(T, p[i] + y); break;                                               \
        case OP_SUB: ARITH_LOOP(T, p[i] - y); break;                                               \
        case OP_MUL: ARITH_LOOP(T, p[i] * y); break;                                               \
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

enum { AT_ADD, AT_MUL, AT_SET };

/* self[idx[k]] op= x (or x[k]) for every k, in order (repeated indices accumulate). */
static int scatter(lua_State *L, int op, const char *what)
{
    halo_policy_array *a = check_warr(L, 1);
    halo_policy_array *ix = check_index_arr(L, 2, what);
    if (op != AT_SET && a->type == HALO_PA_BOOL) {
        return luaL_error(L, "%s: needs a numeric array, got bool", what);
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
    TYPED(
        a->type, const T *p = a->data; for (int64_t i = 0; i < n; i++) {
            if (p[i] != 0) {
                q[k++] = (int32_t)i;
            }
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
    TYPED(
        a->type, const T *p = a->data; T *q = o->data; for (int64_t i = 0; i < n; i++) {
            if (m[i]) {
                q[k++] = p[i];
            }
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

/* topk(k [, smallest]) -> values, positions: the k largest (smallest) elements, best first,
 * ties by lower position; k is clipped to the length. A min-heap makes it O(n log k). */
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
    halo_policy_array *vals = halo_policy_new_array(L, a->type, k);
    halo_policy_array *pos = halo_policy_new_array(L, HALO_PA_I32, k);
    int32_t *h = pos->data;
    if (k == 0) {
        return 2;
    }
    switch (a->type) {
    case HALO_PA_I32: topk_i32(a->data, a->n, h, k, sm); break;
    case HALO_PA_I64: topk_i64(a->data, a->n, h, k, sm); break;
    case HALO_PA_F32: topk_f32(a->data, a->n, h, k, sm); break;
    case HALO_PA_F64: topk_f64(a->data, a->n, h, k, sm); break;
    default: topk_u8(a->data, a->n, h, k, sm); break;
    }
    /* (the heap sort moved each worst entry to the end, so h is best first) */
    TYPED(
        a->type, const T *p = a->data; T *q = vals->data;
        for (int64_t i = 0; i < k; i++) { q[i] = p[h[i]]; })
    return 2;
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
    {"add_at", m_add_at, "a:add_at(idx, x) -> a",
     "scatter-add: a[idx[k]] += x (or x[k]); repeated indices accumulate"},
    {"scale_at", m_scale_at, "a:scale_at(idx, x) -> a", "a[idx[k]] *= x (or x[k])"},
    {"set_at", m_set_at, "a:set_at(idx, x) -> a", "a[idx[k]] = x (or x[k]); the last one wins"},
    {"gather", m_gather, "a:gather(idx) -> array", "a new array: a[idx[0]], a[idx[1]], ..."},
    {"where", m_where, "m:where() -> int32 array", "positions of the true (nonzero) elements"},
    {"filter", m_filter, "a:filter(mask) -> array",
     "a new array of the elements where mask is true"},
    {"topk", m_topk, "a:topk(k [, smallest]) -> values, positions",
     "the k largest (smallest) elements, best first, ties by lower position"},
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
