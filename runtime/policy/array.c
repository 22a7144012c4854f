/* halo arrays, the core: Lua userdata over C memory (owned arrays and views), the argument
 * checks, halo.array and friends, the basic methods (access, copies, conversion) and the
 * reductions. Element-wise operations are in array_elem.c, ordering in array_order.c; every
 * method is C over the whole array, so a policy never runs Lua per element. 0-based. */
#include "policy/array_impl.h"

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
halo_policy_array *halo_policy_check_arr(lua_State *L, int idx)
{
    halo_policy_array *a = halo_policy_to_array(L, idx);
    if (a == NULL) {
        luaL_typeerror(L, idx, "halo.array");
    }
    return a;
}

/* The array at idx, which the caller is about to modify. */
halo_policy_array *halo_policy_check_warr(lua_State *L, int idx)
{
    halo_policy_array *a = halo_policy_check_arr(L, idx);
    if (a->readonly) {
        luaL_error(L, "%s is read-only", a->name ? a->name : "this array");
    }
    return a;
}

static halo_policy_array *check_num(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = halo_policy_check_arr(L, idx);
    if (a->type == HALO_PA_BOOL) {
        luaL_error(L, "%s: needs a numeric array, got bool", what);
    }
    return a;
}

halo_policy_array *halo_policy_check_bool(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = halo_policy_check_arr(L, idx);
    if (a->type != HALO_PA_BOOL) {
        luaL_error(L, "%s: needs a bool mask, got %s", what, type_names[a->type]);
    }
    return a;
}

halo_policy_array *halo_policy_check_index(lua_State *L, int idx, const char *what)
{
    halo_policy_array *a = halo_policy_check_arr(L, idx);
    if (!IS_INT(a->type)) {
        luaL_error(L, "%s: indices must be an int32 or int64 array, got %s", what,
                   type_names[a->type]);
    }
    return a;
}

void halo_policy_same_type(lua_State *L, const halo_policy_array *a, const halo_policy_array *b,
                           const char *what)
{
    if (a->type != b->type) {
        luaL_error(L, "%s: types differ (%s and %s); convert with :astype()", what,
                   type_names[a->type], type_names[b->type]);
    }
}

void halo_policy_same_len(lua_State *L, int64_t a, int64_t b, const char *what)
{
    if (a != b) {
        luaL_error(L, "%s: lengths differ (%I and %I)", what, (lua_Integer)a, (lua_Integer)b);
    }
}

/* Pushes a new owned array whose elements the caller overwrites (not zeroed). */
halo_policy_array *halo_policy_new_raw(lua_State *L, int type, int64_t n)
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
    halo_policy_array *a = halo_policy_new_raw(L, type, n);
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

halo_policy_scalar halo_policy_check_scalar(lua_State *L, int idx, int type, const char *what)
{
    halo_policy_scalar s = {0, 0};
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

/* Stores a Lua value into element i (converted and checked as halo_policy_check_scalar does). */
static void store_elem(lua_State *L, halo_policy_array *a, int64_t i, int idx, const char *what)
{
    halo_policy_scalar s = halo_policy_check_scalar(L, idx, a->type, what);
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

void halo_policy_check_indices(lua_State *L, const halo_policy_array *ix, int64_t n,
                               const char *what)
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
        halo_policy_scalar s = halo_policy_check_scalar(L, 3, type, "halo.array");
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

/* halo.f32(x): x rounded to the nearest float32 (as a Lua float), the scalar side of
 * a:round_f32(); a threshold compared with float32 scores is rounded the same way. */
static int f_f32(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)(float)luaL_checknumber(L, 1));
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
    {"f32", f_f32, "halo.f32(x) -> number", "x rounded to the nearest float32"},
    {NULL, NULL, NULL, NULL},
};

/* ---- methods: basics ---- */

static int m_len(lua_State *L)
{
    lua_pushinteger(L, halo_policy_check_arr(L, 1)->n);
    return 1;
}

static int m_type(lua_State *L)
{
    lua_pushstring(L, type_names[halo_policy_check_arr(L, 1)->type]);
    return 1;
}

static int m_get(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    push_elem(L, a, check_pos(L, 2, a->n, "get"));
    return 1;
}

static int m_set(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    store_elem(L, a, check_pos(L, 2, a->n, "set"), 3, "set");
    lua_settop(L, 1);
    return 1;
}

static int m_fill(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    halo_policy_scalar s = halo_policy_check_scalar(L, 2, a->type, "fill");
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
        halo_policy_array *a = halo_policy_check_arr(L, 1);
        halo_policy_charge(L, a->n);
        halo_policy_array *b = halo_policy_new_raw(L, a->type, a->n);
        memcpy(b->data, a->data, (size_t)a->n * elem_size[a->type]);
        return 1;
    }
    halo_policy_array *a = halo_policy_check_warr(L, 1);
    halo_policy_array *src = halo_policy_check_arr(L, 2);
    halo_policy_same_type(L, a, src, "copy");
    halo_policy_same_len(L, a->n, src->n, "copy");
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
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    int64_t i, j;
    check_range(L, a->n, 2, 3, &i, &j, "slice");
    halo_policy_charge(L, j - i);
    halo_policy_array *b = halo_policy_new_raw(L, a->type, j - i);
    memcpy(b->data, (char *)a->data + (size_t)i * elem_size[a->type],
           (size_t)(j - i) * elem_size[a->type]);
    return 1;
}

static int m_concat(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
    halo_policy_array *b = halo_policy_check_arr(L, 2);
    halo_policy_same_type(L, a, b, "concat");
    halo_policy_charge(L, a->n + b->n);
    size_t es = elem_size[a->type];
    halo_policy_array *c = halo_policy_new_raw(L, a->type, a->n + b->n);
    memcpy(c->data, a->data, (size_t)a->n * es);
    memcpy((char *)c->data + (size_t)a->n * es, b->data, (size_t)b->n * es);
    return 1;
}

/* Converts element v (of source type) to destination type U, failing when it does not fit. */
static int m_astype(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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

/* ---- methods: reductions ---- */

static int m_sum(lua_State *L)
{
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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
    halo_policy_array *a = halo_policy_check_arr(L, 1);
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
    {"sum", m_sum, "a:sum() -> number", "sum (integer arrays: integer; bool: count of true)"},
    {"mean", m_mean, "a:mean() -> number|nil", "arithmetic mean, nil when empty"},
    {"min", m_min, "a:min() -> value, position",
     "smallest element and its position (nil if empty)"},
    {"max", m_max, "a:max() -> value, position", "largest element and its position (nil if empty)"},
    {"count", m_count, "a:count() -> integer", "number of true (nonzero) elements"},
    {NULL, NULL, NULL, NULL},
};

void halo_policy_open_arrays(lua_State *L, const halo_policy_reg *const *tables)
{
    /* module table is on top */
    for (const halo_policy_reg *r = halo_policy_module_funcs; r->name != NULL; r++) {
        lua_pushcfunction(L, r->fn);
        lua_setfield(L, -2, r->name);
    }
    luaL_newmetatable(L, HALO_PA_MT);
    lua_newtable(L);
    for (const halo_policy_reg *const *t = tables; *t != NULL; t++) {
        for (const halo_policy_reg *r = *t; r->name != NULL; r++) {
            lua_pushcfunction(L, r->fn);
            lua_setfield(L, -2, r->name);
        }
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
