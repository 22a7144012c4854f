/* Data files: a Lua file run in the policy sandbox whose returned table becomes a JSON tree. */
#include "policy/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deepest nesting of tables (the returned table is depth 1). */
#define DATA_MAX_DEPTH 32
/* Largest integer a double holds exactly. */
#define DATA_MAX_EXACT 9007199254740992.0

/* State of one conversion. */
typedef struct conv {
    lua_State *L;                        /* the state holding the returned table */
    const char *path;                    /* file, for messages */
    const void *anc[DATA_MAX_DEPTH + 1]; /* tables from the root to the current one (cycles) */
    char key[512];                       /* key path of the current value ("network.nic_GBps") */
    size_t klen;                         /* bytes used in key */
    halo_json *root;                     /* the tree so far (freed by the caller on failure) */
    int rc;                              /* result of the protected conversion */
} conv;

/* ---- running the file ---- */

/* Sets a HALO_ELUA error from the Lua message at the top of the stack (popped). Lua shortens
 * long chunk names to "...tail"; the full path is put back so the message names the file, and
 * a message without a position gets "path: " in front. */
static int lua_failure(halo_policy *p, const char *path, int status)
{
    lua_State *L = p->L;
    if (p->timed_out &&
        (lua_tostring(L, -1) == NULL || strstr(lua_tostring(L, -1), "wall-clock limit") == NULL)) {
        char t[96];
        lua_pop(L, 1);
        return halo_errorf(HALO_ELUA, "%s: %s", p->mem_where[0] ? p->mem_where : path,
                           halo_policy_time_text(p, t, sizeof t));
    }
    if (status == LUA_ERRMEM || p->mem_refused) {
        lua_pop(L, 1);
        return halo_errorf(HALO_ELUA, "%s: memory limit of %zu MiB exceeded",
                           p->mem_where[0] ? p->mem_where : path, p->mem_limit >> 20);
    }
    size_t ml = 0;
    const char *raw = lua_tolstring(L, -1, &ml);
    char clean[600];
    const char *msg = raw ? clean : NULL;
    if (raw != NULL) {
        halo_policy_clean_text(clean, sizeof clean, raw, ml);
    }
    int rc;
    if (msg == NULL) {
        rc = halo_errorf(HALO_ELUA, "%s: error object is a %s value", path, luaL_typename(L, -1));
    } else {
        size_t pl = strlen(path);
        const char *colon = strchr(msg, ':');
        size_t sl = colon ? (size_t)(colon - msg) : 0;
        if (sl == pl && strncmp(msg, path, pl) == 0) {
            rc = halo_errorf(HALO_ELUA, "%s", msg);
        } else if (sl > 3 && strncmp(msg, "...", 3) == 0 && sl - 3 <= pl &&
                   strncmp(path + pl - (sl - 3), msg + 3, sl - 3) == 0) {
            rc = halo_errorf(HALO_ELUA, "%s%s", path, colon);
        } else {
            rc = halo_errorf(HALO_ELUA, "%s: %s", path, msg);
        }
    }
    lua_pop(L, 1);
    return rc;
}

/* Loads the file and runs it with the budget armed; leaves its first result on the stack. */
static int run_file(halo_policy *p, const char *path)
{
    lua_State *L = p->L;
    if (halo_path_exists(path)) {
        HALO_CHECK(halo_input_check(path)); /* a FIFO or device would block or never end */
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return halo_errorf(HALO_EIO, "%s: cannot read the file: %s", path, strerror(errno));
    }
    fclose(f);
    int st = luaL_loadfilex(L, path, "t");
    if (st != LUA_OK) {
        if (st == LUA_ERRFILE) {
            lua_pop(L, 1);
            return halo_errorf(HALO_EIO, "%s: cannot read the file", path);
        }
        return lua_failure(p, path, st);
    }
    halo_policy_arm(p); /* the engine's limits */
    st = lua_pcall(L, 0, 1, 0);
    halo_policy_disarm(p);
    return st == LUA_OK ? 0 : lua_failure(p, path, st);
}

/* ---- conversion ---- */

/* Sets the HALO_EINPUT error "path: field KEY: what" (or "path: what" at the root). */
static int conv_fail(conv *c, const char *what)
{
    if (c->klen == 0) {
        return halo_errorf(HALO_EINPUT, "%s: %s", c->path, what);
    }
    return halo_errorf(HALO_EINPUT, "%s: field %s: %s", c->path, c->key, what);
}

/* Appends ".name" (or "name" at the root) or "[i]" to the key path; returns the old length. */
static size_t key_push(conv *c, const char *name, int64_t index)
{
    size_t old = c->klen, room = sizeof c->key - c->klen;
    int w = name != NULL ? snprintf(c->key + c->klen, room, "%s%s", old ? "." : "", name)
                         : snprintf(c->key + c->klen, room, "[%lld]", (long long)index);
    c->klen = w < 0 ? old : (size_t)w < room ? c->klen + (size_t)w : sizeof c->key - 1;
    return old;
}

static void key_pop(conv *c, size_t old)
{
    c->klen = old;
    c->key[old] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int to_json(conv *c, int idx, int depth, halo_json *v);

/* Converts the table at idx into v: an array when its keys are exactly 1..n, else an object
 * (string keys only, sorted). Children are attached to v before they are filled, so the tree
 * stays freeable from the root whatever fails. */
static int table_to_json(conv *c, int idx, int depth, halo_json *v)
{
    lua_State *L = c->L;
    if (depth > DATA_MAX_DEPTH) {
        return conv_fail(c, "tables nested deeper than 32 levels");
    }
    const void *self = lua_topointer(L, idx);
    for (int d = 0; d < depth - 1; d++) {
        if (c->anc[d] == self) {
            return conv_fail(c, "a table that contains itself (a cycle)");
        }
    }
    c->anc[depth - 1] = self;
    luaL_checkstack(L, 6, "data file: nesting");
    int64_t n = 0, nstr = 0, nint = 0, maxint = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        n++;
        if (lua_type(L, -1) == LUA_TSTRING) {
            nstr++;
        } else if (lua_isinteger(L, -1)) {
            lua_Integer k = lua_tointeger(L, -1);
            nint++;
            maxint = k > maxint ? (int64_t)k : maxint;
            if (k < 1) {
                lua_pop(L, 1);
                return conv_fail(c, "a list with an index below 1 (lists are 1..n)");
            }
        } else {
            char what[96];
            snprintf(what, sizeof what,
                     "a table with a %s key (keys are names, or 1..n for a list)",
                     luaL_typename(L, -1));
            lua_pop(L, 1);
            return conv_fail(c, what);
        }
    }
    if (nstr > 0 && nint > 0) {
        return conv_fail(c, "a table with both named and numbered entries");
    }
    if (nint > 0 && maxint != nint) {
        char what[128];
        snprintf(what, sizeof what, "a list with holes (%lld entries, largest index %lld)",
                 (long long)nint, (long long)maxint);
        return conv_fail(c, what);
    }
    v->items = HALO_NEW(halo_json *, n > 0 ? n : 1);
    if (nstr == 0) {
        v->type = HALO_JSON_ARRAY;
        for (int64_t i = 0; i < n; i++) {
            v->items[i] = HALO_NEW(halo_json, 1);
            v->len = (size_t)i + 1;
            size_t old = key_push(c, NULL, i + 1);
            lua_rawgeti(L, idx, (lua_Integer)(i + 1));
            int rc = to_json(c, lua_gettop(L), depth, v->items[i]);
            lua_pop(L, 1);
            if (rc < 0) {
                return rc;
            }
            key_pop(c, old);
        }
        return 0;
    }
    v->type = HALO_JSON_OBJECT;
    v->keys = HALO_NEW(char *, n);
    /* the sorted names live in a userdata: a Lua error below cannot leak them */
    const char **names = lua_newuserdatauv(L, (size_t)n * sizeof *names, 0);
    int64_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        names[k++] = lua_tostring(L, -1); /* anchored by the table */
    }
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        v->keys[i] = halo_strdup(names[i]);
        v->items[i] = HALO_NEW(halo_json, 1);
        v->len = (size_t)i + 1;
        size_t old = key_push(c, names[i], 0);
        lua_pushstring(L, names[i]);
        lua_rawget(L, idx);
        rc = to_json(c, lua_gettop(L), depth, v->items[i]);
        lua_pop(L, 1);
        if (rc == 0) {
            key_pop(c, old);
        }
    }
    lua_pop(L, 1); /* names */
    return rc;
}

/* Converts the value at idx (depth: of the table holding it) into v. */
static int to_json(conv *c, int idx, int depth, halo_json *v)
{
    lua_State *L = c->L;
    char what[160];
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
        v->type = HALO_JSON_BOOL;
        v->boolean = lua_toboolean(L, idx);
        return 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            lua_Integer i = lua_tointeger(L, idx);
            if ((double)i > DATA_MAX_EXACT || (double)i < -DATA_MAX_EXACT) {
                snprintf(what, sizeof what, "the integer %lld is beyond 2^53 (not held exactly)",
                         (long long)i);
                return conv_fail(c, what);
            }
            v->number = (double)i;
        } else {
            v->number = lua_tonumber(L, idx);
            if (!isfinite(v->number)) {
                snprintf(what, sizeof what, "%s, expected a finite number",
                         isnan(v->number) ? "nan"
                         : v->number > 0  ? "inf"
                                          : "-inf");
                return conv_fail(c, what);
            }
        }
        v->type = HALO_JSON_NUMBER;
        return 0;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        if (memchr(s, '\0', len) != NULL) {
            return conv_fail(c, "a string with a NUL byte");
        }
        v->type = HALO_JSON_STRING;
        v->string = halo_strdup(s);
        return 0;
    }
    case LUA_TTABLE: return table_to_json(c, idx, depth + 1, v);
    default:
        snprintf(what, sizeof what, "a %s, expected a number, a string, a boolean or a table",
                 luaL_typename(L, idx));
        return conv_fail(c, what);
    }
}

/* The conversion, run under lua_pcall so that a Lua memory error cannot escape. */
static int convert_protected(lua_State *L)
{
    conv *c = lua_touserdata(L, 1);
    c->rc = table_to_json(c, 2, 1, c->root);
    return 0;
}

int halo_policy_load_data(const char *path, halo_json **out)
{
    *out = NULL;
    halo_policy_opts o = {.path = NULL, .rank = -1};
    halo_policy *p;
    HALO_CHECK(halo_policy_open(&o, &p));
    /* messages, print() and require() next to the file */
    snprintf(p->path, sizeof p->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash != NULL) {
        snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);
    } else {
        snprintf(p->dir, sizeof p->dir, ".");
    }
    const char *base = slash ? slash + 1 : path;
    size_t bl = strlen(base);
    bl = bl > 4 && strcmp(base + bl - 4, ".lua") == 0 ? bl - 4 : bl;
    snprintf(p->name, sizeof p->name, "%.*s", (int)bl, base);
    lua_State *L = p->L;
    int rc = run_file(p, path);
    if (rc < 0) {
        halo_policy_close(p);
        return rc;
    }
    if (!lua_istable(L, -1)) {
        rc = halo_errorf(HALO_EINPUT, "%s: the file must return a table, it returned %s", path,
                         lua_isnil(L, -1) ? "nothing (nil)" : luaL_typename(L, -1));
        halo_policy_close(p);
        return rc;
    }
    conv c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.path = path;
    c.root = HALO_NEW(halo_json, 1);
    c.rc = HALO_ESTATE;
    lua_pushcfunction(L, convert_protected);
    lua_insert(L, -2);
    lua_pushlightuserdata(L, &c);
    lua_insert(L, -2);
    p->mem_refused = false;
    int st = lua_pcall(L, 2, 0, 0);
    if (st != LUA_OK) {
        rc = lua_failure(p, path, st);
    } else {
        rc = c.rc;
    }
    halo_policy_close(p);
    if (rc < 0) {
        halo_json_free(c.root);
        return rc;
    }
    *out = c.root;
    return 0;
}
