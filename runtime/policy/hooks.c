/* Policy engine, hooks: calling each hook with its context and validating what it returns. */
#include "policy/internal.h"

#include "core/err.h"
#include "core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hook calls ---- */

/* Pushes t[name] of the table at idx without metamethods (validation runs no policy code). */
static int rawfield(lua_State *L, int idx, const char *name)
{
    idx = lua_absindex(L, idx);
    lua_pushstring(L, name);
    return lua_rawget(L, idx);
}

/* A printable form of the value at idx that runs no metamethod (pushed on the stack). */
static const char *show(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: return lua_pushfstring(L, "\"%s\"", lua_tostring(L, idx));
    case LUA_TNUMBER:
        return lua_isinteger(L, idx) ? lua_pushfstring(L, "%I", lua_tointeger(L, idx))
                                     : lua_pushfstring(L, "%f", lua_tonumber(L, idx));
    case LUA_TBOOLEAN: return lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
    default: return lua_pushfstring(L, "a %s", luaL_typename(L, idx));
    }
}

/* Pushes hook h's function (caller checked it exists) and records the moment. */
static void begin(halo_policy *p, int h, int rank, int epoch, int64_t batch)
{
    p->cur_hook = halo_policy_hook_name(h);
    p->cur_rank = rank >= 0 ? rank : p->rank;
    p->cur_epoch = epoch;
    p->cur_batch = batch;
    lua_rawgeti(p->L, LUA_REGISTRYINDEX, p->hook_ref[h]);
}

/* Ends a call: views and context objects made during it go stale. */
static void end(halo_policy *p)
{
    lua_settop(p->L, 0);
    p->gen++;
}

/* Integer in [lo, hi] at idx (a number with an integral value), or a Lua error naming what. */
static int64_t want_int(lua_State *L, int idx, const char *what, int64_t lo, int64_t hi)
{
    int ok = 0;
    lua_Integer v = 0;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        v = lua_tointegerx(L, idx, &ok);
    }
    if (!ok) {
        if (lua_type(L, idx) == LUA_TSTRING) {
            luaL_error(L, "%s is a string (\"%s\"), expected an integer in [%I, %I]", what,
                       lua_tostring(L, idx), (lua_Integer)lo, (lua_Integer)hi);
        }
        luaL_error(L, "%s is %s, expected an integer in [%I, %I]", what,
                   lua_type(L, idx) == LUA_TNUMBER ? "not an integer" : luaL_typename(L, idx),
                   (lua_Integer)lo, (lua_Integer)hi);
    }
    if (v < lo || v > hi) {
        luaL_error(L, "%s is %I, expected an integer in [%I, %I]", what, v, (lua_Integer)lo,
                   (lua_Integer)hi);
    }
    return v;
}

/* Refuses a table at idx whose keys are not exactly 1..n (a list mixed with named or sparse
 * entries: the extra entries would be ignored without a word). */
static void want_sequence(lua_State *L, int idx, const char *what, int64_t n)
{
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        int ok = 0;
        lua_Integer k = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || k < 1 || k > n) {
            luaL_error(L, "%s has a key %s besides its %I list entries, expected a plain list",
                       what, show(L, -1), (lua_Integer)n);
        }
    }
}

/* Reads the list at idx (a Lua sequence of integers or an int32/int64 halo array) into an owned
 * int32 array pushed on the stack, checking each value against [lo, hi]. */
static halo_policy_array *want_list(lua_State *L, int idx, const char *what, int64_t maxlen,
                                    int64_t lo, int64_t hi)
{
    idx = lua_absindex(L, idx);
    halo_policy_array *a = halo_policy_to_array(L, idx);
    int64_t n;
    if (a != NULL) {
        if (a->type != HALO_PA_I32 && a->type != HALO_PA_I64) {
            luaL_error(L, "%s is a %s array, expected int32 or int64", what,
                       halo_policy_type_name(a->type));
        }
        n = a->n;
    } else if (lua_istable(L, idx)) {
        n = (int64_t)lua_rawlen(L, idx);
        want_sequence(L, idx, what, n);
    } else {
        luaL_error(L, "%s is %s, expected a list of integers or an int32 array", what,
                   luaL_typename(L, idx));
        return NULL;
    }
    if (n > maxlen) {
        luaL_error(L, "%s has %I entries, at most %I allowed", what, (lua_Integer)n,
                   (lua_Integer)maxlen);
    }
    halo_policy_array *o = halo_policy_new_array(L, HALO_PA_I32, n);
    int32_t *q = o->data;
    char w[160];
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (a != NULL) {
            v = a->type == HALO_PA_I32 ? ((const int32_t *)a->data)[i]
                                       : ((const int64_t *)a->data)[i];
            if (v < lo || v > hi) {
                luaL_error(L, "%s[%I] is %I, expected an integer in [%I, %I]", what, (lua_Integer)i,
                           (lua_Integer)v, (lua_Integer)lo, (lua_Integer)hi);
            }
        } else {
            lua_rawgeti(L, idx, (lua_Integer)i + 1);
            snprintf(w, sizeof w, "%s[%lld]", what, (long long)i + 1);
            v = want_int(L, -1, w, lo, hi);
            lua_pop(L, 1);
        }
        q[i] = (int32_t)v;
    }
    return o;
}

/* Refuses fields of the returned table that are not in allowed (catches typos). */
static void only_fields(lua_State *L, int idx, const char *const *allowed)
{
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        bool ok = false;
        if (lua_type(L, -1) == LUA_TSTRING) {
            for (int i = 0; allowed[i] != NULL && !ok; i++) {
                ok = strcmp(allowed[i], lua_tostring(L, -1)) == 0;
            }
        }
        if (!ok) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (int i = 0; allowed[i] != NULL; i++) {
                luaL_addstring(&b, i ? ", " : "");
                luaL_addstring(&b, allowed[i]);
            }
            luaL_pushresult(&b);
            const char *known = lua_tostring(L, -1);
            const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : show(L, -2);
            luaL_error(L, "returned a table with an unknown field '%s' (known: %s)", key, known);
        }
    }
}

static void want_table(lua_State *L, int idx, const char *example)
{
    if (!lua_istable(L, idx) || halo_policy_to_array(L, idx) != NULL) {
        luaL_error(L, "returned %s, expected a table like %s", luaL_typename(L, idx), example);
    }
}

/* -- partition -- */

static const char *const method_names[] = {"metis",  "multilevel", "random",
                                           "stream", "custom",     NULL};
static const char *const constraint_names[] = {"nodes", "train", "edges", NULL};

const char *halo_policy_method_name(int method)
{
    return method >= 0 && method <= HALO_POLICY_CUSTOM ? method_names[method] : "?";
}

const char *halo_policy_constraint_name(int c)
{
    return c == HALO_POLICY_BAL_NODES   ? "nodes"
           : c == HALO_POLICY_BAL_TRAIN ? "train"
           : c == HALO_POLICY_BAL_EDGES ? "edges"
                                        : "?";
}

static void partition_defaults(const halo_policy_graph_info *g, halo_policy_partition_choice *c)
{
    memset(c, 0, sizeof *c);
    c->method = HALO_POLICY_METIS;
    c->parts = g->parts;
    c->nconstraints = 2;
    c->constraints[0] = HALO_POLICY_BAL_NODES;
    c->constraints[1] = HALO_POLICY_BAL_TRAIN;
    c->imbalance = 1.05;
    c->objective = HALO_POLICY_CUT;
}

/* Index of s in names, or a Lua error listing them. */
static int want_name(lua_State *L, int idx, const char *what, const char *const *names)
{
    if (lua_type(L, idx) != LUA_TSTRING) {
        luaL_error(L, "%s is %s, expected a string", what, luaL_typename(L, idx));
    }
    const char *s = lua_tostring(L, idx);
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], s) == 0) {
            return i;
        }
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; names[i] != NULL; i++) {
        luaL_addstring(&b, i ? ", " : "");
        luaL_addstring(&b, names[i]);
    }
    luaL_pushresult(&b);
    return luaL_error(L, "%s is \"%s\", expected one of %s", what, s, lua_tostring(L, -1));
}

/* Validates partition's result (1) into the choice (2, light userdata) for g (3). Pushes the
 * assignment array (custom) or nil. */
static int check_partition(lua_State *L)
{
    halo_policy_partition_choice *c = lua_touserdata(L, 2);
    const halo_policy_graph_info *g = lua_touserdata(L, 3);
    want_table(L, 1, "{method = \"metis\", constraints = {\"nodes\", \"train\"}}");
    static const char *const fields[] = {"method",      "parts",     "machines",
                                         "constraints", "imbalance", "objective",
                                         "seed",        "assign",    NULL};
    only_fields(L, 1, fields);
    if (rawfield(L, 1, "method") != LUA_TNIL) {
        c->method = want_name(L, -1, "method", method_names);
    }
    if (rawfield(L, 1, "parts") != LUA_TNIL) {
        c->parts = (int)want_int(L, -1, "parts", 1, 1 << 20);
    }
    if (c->parts < 1) {
        luaL_error(L, "gave no parts and none were asked for on the command line");
    }
    if (rawfield(L, 1, "machines") != LUA_TNIL) {
        c->machines = (int)want_int(L, -1, "machines", 1, c->parts);
        if (c->parts % c->machines != 0) {
            luaL_error(L, "machines (%d) does not divide parts (%d)", c->machines, c->parts);
        }
    }
    if (rawfield(L, 1, "constraints") != LUA_TNIL) {
        if (!lua_istable(L, -1)) {
            luaL_error(L, "constraints is %s, expected a list like {\"nodes\", \"train\"}",
                       luaL_typename(L, -1));
        }
        int n = (int)lua_rawlen(L, -1);
        if (n > 3) {
            luaL_error(L, "constraints has %d entries, at most 3 (nodes, train, edges)", n);
        }
        c->nconstraints = n;
        int seen = 0;
        for (int i = 0; i < n; i++) {
            lua_rawgeti(L, -1, i + 1);
            char w[32];
            snprintf(w, sizeof w, "constraints[%d]", i + 1);
            int k = 1 << want_name(L, -1, w, constraint_names);
            if (seen & k) {
                luaL_error(L, "constraints lists \"%s\" twice", constraint_names[i]);
            }
            seen |= k;
            c->constraints[i] = k;
            lua_pop(L, 1);
        }
    }
    if (rawfield(L, 1, "imbalance") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 1.0) ||
            !(lua_tonumber(L, -1) <= 10.0)) {
            luaL_error(L, "imbalance is %s, expected a number in [1, 10] (e.g. 1.05)", show(L, -1));
        }
        c->imbalance = lua_tonumber(L, -1);
    }
    if (rawfield(L, 1, "objective") != LUA_TNIL) {
        static const char *const objs[] = {"cut", "vol", NULL};
        c->objective = want_name(L, -1, "objective", objs);
    }
    if (rawfield(L, 1, "seed") != LUA_TNIL) {
        c->seed = want_int(L, -1, "seed", 0, INT64_MAX);
    }
    int at = rawfield(L, 1, "assign");
    if (c->method == HALO_POLICY_CUSTOM) {
        if (at == LUA_TNIL) {
            luaL_error(L, "method is \"custom\" but assign is missing");
        }
        halo_policy_array *a = want_list(L, -1, "assign", g->nodes, 0, c->parts - 1);
        if (a->n != g->nodes) {
            luaL_error(L, "assign has %I entries, expected one per node (%I)", (lua_Integer)a->n,
                       (lua_Integer)g->nodes);
        }
        /* every part gets a node: an empty part would leave a rank without work */
        uint8_t *seen = halo_policy_scratch(L, (size_t)c->parts);
        memset(seen, 0, (size_t)c->parts);
        int64_t parts_seen = 0;
        for (int64_t v = 0; v < a->n && parts_seen < c->parts; v++) {
            int32_t k = ((const int32_t *)a->data)[v];
            parts_seen += !seen[k];
            seen[k] = 1;
        }
        for (int k = 0; k < c->parts && parts_seen < c->parts; k++) {
            if (!seen[k]) {
                luaL_error(L, "assign leaves part %d of %d without a node", k, c->parts);
            }
        }
        return 1;
    }
    if (at != LUA_TNIL) {
        luaL_error(L, "assign is given but method is \"%s\" (use method = \"custom\")",
                   method_names[c->method]);
    }
    lua_pushnil(L);
    return 1;
}

int halo_policy_partition(halo_policy *pol, const halo_policy_graph_info *g,
                          halo_policy_partition_choice *out)
{
    halo_policy_partition_choice c;
    partition_defaults(g, &c);
    int h = HALO_POLICY_PARTITION;
    if (pol->hook_ref[h] == LUA_NOREF) {
        if (c.parts < 1) {
            return halo_errorf(HALO_EUSAGE, "partition: no parts given (--parts)");
        }
        *out = c;
        return 0;
    }
    lua_State *L = pol->L;
    begin(pol, h, -1, -1, -1);
    halo_policy_push_context(L, g, HALO_POBJ_G);
    int rc = halo_policy_budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check_partition);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, &c);
        lua_pushlightuserdata(L, (void *)g);
        rc = halo_policy_protected_check(pol, h, 3, 1);
    }
    if (rc == 0 && c.method == HALO_POLICY_CUSTOM) {
        halo_policy_array *a = lua_touserdata(L, -1);
        c.assign = HALO_ALLOC(int32_t, a->n > 0 ? a->n : 1);
        memcpy(c.assign, a->data, (size_t)a->n * sizeof(int32_t));
    }
    end(pol);
    if (rc == 0) {
        *out = c;
    }
    return rc;
}

/* Calls hook h with ctx (its rank, epoch and batch name the call in errors) and, once it has
 * returned, runs check(result, a[, b]) protected, a and b light userdata (b left out when NULL),
 * keeping nres of check's results on the stack. The caller ends the call (end(pol)) either
 * way. */
static int call_checked(halo_policy *pol, int h, const halo_policy_ctx *ctx, lua_CFunction check,
                        void *a, void *b, int nres)
{
    lua_State *L = pol->L;
    begin(pol, h, ctx->rank, ctx->epoch, ctx->batch);
    halo_policy_push_context(L, ctx, HALO_POBJ_CTX);
    int rc = halo_policy_budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, a);
        if (b != NULL) {
            lua_pushlightuserdata(L, b);
        }
        rc = halo_policy_protected_check(pol, h, b != NULL ? 3 : 2, nres);
    }
    return rc;
}

/* -- fanout -- */

static int check_fanout(lua_State *L)
{
    int max = *(const int *)lua_touserdata(L, 2);
    if (lua_isnil(L, 1)) {
        luaL_error(L, "returned nil, expected a list of fanouts like {10, 25}");
    }
    halo_policy_array *a = want_list(L, 1, "fanouts", max, -1, INT32_MAX);
    if (a->n == 0) {
        luaL_error(L, "returned an empty list, expected at least one layer");
    }
    return 1;
}

/* Calls the fanout hook with ctx and runs check(result, max_layers) protected: on 0 the checked
 * value is at the top of the stack. The caller ends the call (end(pol)) either way. */
static int call_fanout(halo_policy *pol, const halo_policy_ctx *ctx, lua_CFunction check,
                       int max_layers)
{
    return call_checked(pol, HALO_POLICY_FANOUT, ctx, check, &max_layers, NULL, 1);
}

int halo_policy_fanout(halo_policy *pol, const halo_policy_ctx *ctx, int *fanouts, int max_layers,
                       int *layers)
{
    int h = HALO_POLICY_FANOUT;
    if (pol->hook_ref[h] == LUA_NOREF) {
        if (max_layers < 2) {
            return halo_errorf(HALO_EUSAGE, "fanout: room for %d layers, the default has 2",
                               max_layers);
        }
        fanouts[0] = 10;
        fanouts[1] = 25;
        *layers = 2;
        return 0;
    }
    lua_State *L = pol->L;
    int rc = call_fanout(pol, ctx, check_fanout, max_layers);
    if (rc == 0) {
        halo_policy_array *a = lua_touserdata(L, -1);
        for (int64_t i = 0; i < a->n; i++) {
            fanouts[i] = ((const int32_t *)a->data)[i];
        }
        *layers = (int)a->n;
    }
    end(pol);
    return rc;
}

/* One layer of a typed fanout: the key and value at the top of the stack checked and kept. */
typedef struct fan_entry {
    const char *key; /* relation name or "*" (a string on the Lua stack below) */
    lua_Integer v;   /* fanout */
} fan_entry;

static int cmp_fan_entry(const void *a, const void *b)
{
    return strcmp(((const fan_entry *)a)->key, ((const fan_entry *)b)->key);
}

/* Protected: (result, &max_layers) -> the spec string. */
static int check_fanout_spec(lua_State *L)
{
    int max = *(const int *)lua_touserdata(L, 2);
    if (!lua_istable(L, 1)) {
        luaL_error(L, "returned %s, expected a list of layers like {10, {cites=10, [\"*\"]=5}}",
                   luaL_typename(L, 1));
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n == 0) {
        luaL_error(L, "returned an empty list, expected at least one layer");
    }
    if (n > max) {
        luaL_error(L, "fanouts has %I entries, at most %I allowed", n, (lua_Integer)max);
    }
    want_sequence(L, 1, "fanouts", n);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    char what[64];
    for (lua_Integer l = 1; l <= n; l++) {
        if (l > 1) {
            luaL_addchar(&b, ';');
        }
        lua_rawgeti(L, 1, l);
        int layer = lua_gettop(L);
        snprintf(what, sizeof what, "fanouts[%lld]", (long long)l);
        if (!lua_istable(L, layer)) {
            lua_Integer v = want_int(L, layer, what, -1, INT32_MAX);
            lua_pushfstring(L, "*=%I", v);
            luaL_addvalue(&b);
            lua_pop(L, 1);
            continue;
        }
        enum { MAX_KEYS = 128 };
        fan_entry e[MAX_KEYS];
        int ne = 0;
        lua_pushnil(L);
        while (lua_next(L, layer) != 0) {
            if (lua_type(L, -2) != LUA_TSTRING) {
                luaL_error(L, "%s has a %s key, expected relation names or \"*\"", what,
                           luaL_typename(L, -2));
            }
            const char *k = lua_tostring(L, -2);
            if (k[0] == 0 || strpbrk(k, ",;=: \t\n\r") != NULL || strlen(k) > 31) {
                luaL_error(L, "%s: '%s' is not a relation name", what, k);
            }
            if (ne == MAX_KEYS) {
                luaL_error(L, "%s has more than %d entries", what, MAX_KEYS);
            }
            char vw[112];
            snprintf(vw, sizeof vw, "%s.%s", what, k);
            e[ne].key = k; /* the key stays on the stack inside the table */
            e[ne].v = want_int(L, -1, vw, -1, INT32_MAX);
            ne++;
            lua_pop(L, 1);
        }
        if (ne == 0) {
            luaL_error(L, "%s is an empty table, expected relation names or \"*\"", what);
        }
        qsort(e, (size_t)ne, sizeof e[0], cmp_fan_entry);
        for (int i = 0; i < ne; i++) {
            lua_pushfstring(L, "%s%s=%I", i ? "," : "", e[i].key, e[i].v);
            luaL_addvalue(&b);
        }
        lua_pop(L, 1);
    }
    luaL_pushresult(&b);
    return 1;
}

int halo_policy_fanout_spec_refused(const halo_policy *pol, int epoch, const char *spec)
{
    const char *m = halo_errmsg();
    const char *tag = "--fanouts: ";
    if (strncmp(m, tag, strlen(tag)) == 0) {
        m += strlen(tag);
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", m);
    return halo_errorf(HALO_ELUA, "policy %s: hook fanout (epoch %d) returned %s: %s",
                       halo_policy_name(pol), epoch, spec, msg);
}

int halo_policy_fanout_spec(halo_policy *pol, const halo_policy_ctx *ctx, char *spec, size_t cap,
                            int max_layers, int *layers)
{
    int h = HALO_POLICY_FANOUT;
    if (pol->hook_ref[h] == LUA_NOREF) {
        snprintf(spec, cap, "*=10;*=25");
        *layers = 2;
        return 0;
    }
    lua_State *L = pol->L;
    int rc = call_fanout(pol, ctx, check_fanout_spec, max_layers);
    if (rc == 0) {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (len + 1 > cap) {
            rc = halo_errorf(HALO_ELUA, "%s: hook fanout: a fanout spec of %zu bytes, room for %zu",
                             pol->path, len, cap);
        } else {
            memcpy(spec, s, len + 1);
            int nl = 1;
            for (size_t i = 0; i < len; i++) {
                nl += s[i] == ';';
            }
            *layers = nl;
        }
    }
    end(pol);
    return rc;
}

/* -- pipeline -- */

static int check_pipeline(lua_State *L)
{
    int *v = lua_touserdata(L, 2);
    if (lua_type(L, 1) == LUA_TNUMBER) {
        /* documented shorthand: a bare number is the depth (one sampler thread) */
        v[0] = (int)want_int(L, 1, "depth", 0, 64);
        return 0;
    }
    want_table(L, 1, "{depth = 1, sampler_threads = 2}");
    static const char *const fields[] = {"depth", "sampler_threads", NULL};
    only_fields(L, 1, fields);
    if (rawfield(L, 1, "depth") != LUA_TNIL) {
        v[0] = (int)want_int(L, -1, "depth", 0, 64);
    }
    if (rawfield(L, 1, "sampler_threads") != LUA_TNIL) {
        v[1] = (int)want_int(L, -1, "sampler_threads", 1, 1024);
    }
    return 0;
}

int halo_policy_pipeline(halo_policy *pol, const halo_policy_ctx *ctx, int *depth,
                         int *sampler_threads)
{
    int v[2] = {0, 1};
    int h = HALO_POLICY_PIPELINE;
    if (pol->hook_ref[h] == LUA_NOREF) {
        *depth = v[0];
        *sampler_threads = v[1];
        return 0;
    }
    int rc = call_checked(pol, h, ctx, check_pipeline, v, NULL, 0);
    end(pol);
    if (rc == 0) {
        *depth = v[0];
        *sampler_threads = v[1];
    }
    return rc;
}

/* -- cache_init / cache_batch -- */

/* Position of id in the sorted halo ids, -1 if absent. */
static int64_t halo_pos(const halo_policy_halo_view *hv, int32_t id)
{
    int64_t lo = 0, hi = hv->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (hv->ids[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < hv->n && hv->ids[lo] == id ? lo : -1;
}

/* Checks that every id of list a is a halo node, none twice, and (when cached is not NULL)
 * none already cached; mark is scratch of halo.n bytes, zero on entry. */
static void check_halo_ids(lua_State *L, const halo_policy_halo_view *hv,
                           const halo_policy_array *a, const char *what, uint8_t *mark)
{
    const int32_t *q = a->data;
    for (int64_t i = 0; i < a->n; i++) {
        int64_t pos = hv->ids ? halo_pos(hv, q[i]) : -1;
        if (pos < 0) {
            luaL_error(L, "%s lists %d, which is not a halo node of this rank", what, q[i]);
        }
        if (mark[pos] == 1) {
            luaL_error(L, "%s lists node %d twice", what, q[i]);
        }
        if (mark[pos] == 2) {
            luaL_error(L, "%s lists %d, which is already in the cache", what, q[i]);
        }
        mark[pos] = 1;
    }
}

static int check_cache_init(lua_State *L)
{
    halo_policy_cache_plan *o = lua_touserdata(L, 2);
    const halo_policy_ctx *ctx = lua_touserdata(L, 3);
    want_table(L, 1, "{capacity = 1000, ids = ctx.halo.ids:gather(positions)}");
    static const char *const fields[] = {"capacity", "ids", "score", NULL};
    only_fields(L, 1, fields);
    if (rawfield(L, 1, "capacity") == LUA_TNIL) {
        luaL_error(L, "returned no capacity");
    }
    o->capacity = want_int(L, -1, "capacity", 0, ctx->halo.n);
    if (rawfield(L, 1, "score") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER) {
            luaL_error(L, "score is %s, expected a number", luaL_typename(L, -1));
        }
        o->score = lua_tonumber(L, -1);
    }
    if (rawfield(L, 1, "ids") != LUA_TNIL) {
        halo_policy_array *a = want_list(L, -1, "ids", o->capacity, INT32_MIN, INT32_MAX);
        uint8_t *mark = halo_policy_new_array(L, HALO_PA_BOOL, ctx->halo.n)->data;
        check_halo_ids(L, &ctx->halo, a, "ids", mark);
        lua_pop(L, 1);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

int halo_policy_cache_init(halo_policy *pol, const halo_policy_ctx *ctx,
                           halo_policy_cache_plan *out)
{
    halo_policy_cache_plan o = {.capacity = 0, .ids = out->ids, .n_ids = 0, .score = 0};
    int h = HALO_POLICY_CACHE_INIT;
    if (pol->hook_ref[h] == LUA_NOREF) {
        *out = o;
        return 0;
    }
    lua_State *L = pol->L;
    int rc = call_checked(pol, h, ctx, check_cache_init, &o, (void *)ctx, 1);
    if (rc == 0 && !lua_isnil(L, -1)) {
        halo_policy_array *a = lua_touserdata(L, -1);
        if (a->n > 0 && o.ids == NULL) {
            rc = halo_errorf(HALO_EUSAGE, "cache_init: the caller gave no ids buffer");
        } else {
            memcpy(o.ids, a->data, (size_t)a->n * sizeof(int32_t));
            o.n_ids = a->n;
        }
    }
    end(pol);
    if (rc == 0) {
        *out = o;
    }
    return rc;
}

/* Halo positions of n ids into pos (-1: not a halo node): through the mechanism's id map when
 * the context gives one (O(1) per id), else binary searches of the sorted ids. */
static void halo_find(const halo_policy_ctx *ctx, const int32_t *ids, int64_t n, int32_t *pos)
{
    const halo_policy_halo_view *hv = &ctx->halo;
    if (ctx->halo_find != NULL) {
        ctx->halo_find(ctx->halo_find_arg, ids, n, pos);
        for (int64_t i = 0; i < n; i++) {
            pos[i] = pos[i] >= 0 && pos[i] < hv->n ? pos[i] : -1;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        pos[i] = hv->ids ? (int32_t)halo_pos(hv, ids[i]) : -1;
    }
}

/* Grows a stamp array to n entries; new entries are 0, which no validation uses as a stamp. */
static uint32_t *grow_stamps(uint32_t *a, int64_t *have, int64_t n)
{
    if (n <= *have) {
        return a;
    }
    a = halo_realloc(a, (size_t)n * sizeof *a);
    memset(a + *have, 0, (size_t)(n - *have) * sizeof *a);
    *have = n;
    return a;
}

/* Starts the validation of one decision: scratch for nh halo positions and cap slots, kept in
 * the policy between calls, and a fresh pair of stamps g (cached / evicted) and g + 1
 * (admitted). Stamps replace clearing, so a validation costs O(decision), not O(halo set). */
static uint32_t validation_begin(halo_policy *p, int64_t nh, int64_t cap)
{
    p->vstamp = grow_stamps(p->vstamp, &p->vstamp_n, nh + 1);
    p->sstamp = grow_stamps(p->sstamp, &p->sstamp_n, cap + 1);
    if (p->vgen >= UINT32_MAX - 4) { /* the stamps wrapped around: start from clean scratch */
        memset(p->vstamp, 0, (size_t)p->vstamp_n * sizeof *p->vstamp);
        memset(p->sstamp, 0, (size_t)p->sstamp_n * sizeof *p->sstamp);
        p->vgen = 0;
    }
    p->vgen += 2;
    return p->vgen;
}

/* Validates cache_batch's result (1): pushes the evict and admit lists (owned int32 arrays).
 * Costs O(evict + admit) when the context carries the mechanism's maps (ctx->halo_find,
 * ctx->cache_slot_of); without them, one search per occupied slot finds the cached nodes. */
static int check_cache_batch(lua_State *L)
{
    const halo_policy_ctx *ctx = lua_touserdata(L, 2);
    const halo_policy_cache_view *cv = &ctx->cache;
    halo_policy *p = halo_policy_of(L);
    if (lua_isnil(L, 1)) {
        lua_pushnil(L);
        lua_pushnil(L);
        return 2;
    }
    want_table(L, 1, "{evict = slots, admit = ids}");
    static const char *const fields[] = {"evict", "admit", NULL};
    only_fields(L, 1, fields);
    rawfield(L, 1, "evict");
    rawfield(L, 1, "admit");
    int ie = lua_absindex(L, -2), ia = lua_absindex(L, -1);
    uint32_t g = validation_begin(p, ctx->halo.n, cv->capacity);
    uint32_t *sst = p->sstamp, *vst = p->vstamp;
    halo_policy_array *ev = NULL, *ad = NULL;
    if (!lua_isnil(L, ie)) {
        ev = want_list(L, ie, "evict", cv->capacity, 0, cv->capacity - 1);
        const int32_t *q = ev->data;
        for (int64_t i = 0; i < ev->n; i++) {
            if (sst[q[i]] == g) {
                luaL_error(L, "evict lists slot %d twice", q[i]);
            }
            if (cv->id != NULL && cv->id[q[i]] < 0) {
                luaL_error(L, "evict lists slot %d, which is empty", q[i]);
            }
            sst[q[i]] = g;
        }
        lua_replace(L, ie);
    }
    if (!lua_isnil(L, ia)) {
        ad = want_list(L, ia, "admit", cv->capacity, INT32_MIN, INT32_MAX);
        int64_t nev = ev ? ev->n : 0;
        int64_t free_slots = cv->capacity - cv->used;
        if (ad->n > nev + free_slots) {
            luaL_error(L, "admit has %I ids but only %I slots are free after evicting %I",
                       (lua_Integer)ad->n, (lua_Integer)(nev + free_slots), (lua_Integer)nev);
        }
        /* nodes that stay cached (in slots not evicted) cannot be admitted again */
        bool known = cv->id != NULL && ctx->halo.ids != NULL;
        const int32_t *slot_of = known ? ctx->cache_slot_of : NULL;
        if (known && slot_of == NULL && ad->n > 0) {
            for (int64_t s = 0; s < cv->capacity; s++) {
                if (cv->id[s] >= 0 && sst[s] != g) {
                    int32_t pos;
                    halo_find(ctx, &cv->id[s], 1, &pos);
                    if (pos >= 0) {
                        vst[pos] = g;
                    }
                }
            }
        }
        const int32_t *q = ad->data;
        int32_t *ps = halo_policy_new_array(L, HALO_PA_I32, ad->n)->data;
        halo_find(ctx, q, ad->n, ps);
        for (int64_t i = 0; i < ad->n; i++) {
            if (i + 8 < ad->n && ps[i + 8] >= 0) { /* the stamps of a later id, ahead of time */
                __builtin_prefetch(&vst[ps[i + 8]]);
                if (slot_of != NULL) {
                    __builtin_prefetch(&slot_of[ps[i + 8]]);
                }
            }
            int64_t pos = ps[i];
            if (pos < 0) {
                luaL_error(L, "admit lists %d, which is not a halo node of this rank", q[i]);
            }
            if (vst[pos] == g + 1) {
                luaL_error(L, "admit lists node %d twice", q[i]);
            }
            bool cached = slot_of != NULL ? slot_of[pos] >= 0 && sst[slot_of[pos]] != g
                                          : known && vst[pos] == g;
            if (cached) {
                luaL_error(L, "admit lists %d, which is already in the cache", q[i]);
            }
            vst[pos] = g + 1;
        }
        lua_pop(L, 1);
        lua_replace(L, ia);
    }
    return 2;
}

int halo_policy_cache_batch(halo_policy *pol, const halo_policy_ctx *ctx,
                            const halo_policy_batch *b, halo_policy_cache_decision *out)
{
    int h = HALO_POLICY_CACHE_BATCH;
    if (pol->hook_ref[h] == LUA_NOREF) {
        out->n_evict = 0;
        out->n_admit = 0;
        return 0;
    }
    lua_State *L = pol->L;
    begin(pol, h, ctx->rank, b->epoch, b->batch);
    halo_policy_push_context(L, ctx, HALO_POBJ_CTX);
    halo_policy_push_context(L, b, HALO_POBJ_BATCH);
    int rc = halo_policy_budgeted_call(pol, 2, 1);
    if (rc == 0) {
        if (lua_isnil(L, -1)) {
            end(pol);
            out->n_evict = 0;
            out->n_admit = 0;
            return 0;
        }
        lua_pushcfunction(L, check_cache_batch);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, (void *)ctx);
        rc = halo_policy_protected_check(pol, h, 2, 2);
    }
    if (rc == 0) {
        halo_policy_array *ev = lua_touserdata(L, -2), *ad = lua_touserdata(L, -1);
        if ((ev && ev->n > 0 && out->evict == NULL) || (ad && ad->n > 0 && out->admit == NULL)) {
            rc = halo_errorf(HALO_EUSAGE, "cache_batch: the caller gave no output buffers");
        } else {
            out->n_evict = ev ? ev->n : 0;
            out->n_admit = ad ? ad->n : 0;
            if (ev) {
                memcpy(out->evict, ev->data, (size_t)ev->n * sizeof(int32_t));
            }
            if (ad) {
                memcpy(out->admit, ad->data, (size_t)ad->n * sizeof(int32_t));
            }
        }
    }
    end(pol);
    return rc;
}

/* -- epoch_end -- */

int halo_policy_epoch_end(halo_policy *pol, const halo_policy_ctx *ctx)
{
    int h = HALO_POLICY_EPOCH_END;
    if (pol->hook_ref[h] == LUA_NOREF) {
        return 0;
    }
    lua_State *L = pol->L;
    begin(pol, h, ctx->rank, ctx->epoch, -1);
    halo_policy_push_context(L, ctx, HALO_POBJ_CTX);
    int rc = halo_policy_budgeted_call(pol, 1, 1);
    if (rc == 0 && !lua_isnil(L, -1)) {
        char when[160];
        halo_policy_moment(pol, when, sizeof when, false);
        rc = halo_errorf(HALO_ELUA,
                         "%s:%d: hook epoch_end: returned a %s, it should return "
                         "nothing%s",
                         pol->path, pol->hook_line[h], luaL_typename(L, -1), when);
    }
    end(pol);
    return rc;
}
