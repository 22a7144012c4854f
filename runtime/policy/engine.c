/* Policy engine: Lua states with a sandbox, an instruction budget and a memory limit, the
 * read-only context objects, and the budgeted, error-reporting hook call. */
#include "policy/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"

#include <lualib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif
#ifndef HALO_VERSION
#define HALO_VERSION "dev"
#endif

static const char *const hook_names[HALO_POLICY_NHOOKS] = {
    "partition", "fanout", "pipeline", "cache_init", "cache_batch", "epoch_end",
};

const char *halo_policy_hook_name(int hook)
{
    return hook >= 0 && hook < HALO_POLICY_NHOOKS ? hook_names[hook] : NULL;
}

/* ---- memory limit and instruction budget ---- */

/* lua_Alloc that counts the state's bytes and refuses growth beyond the limit (Lua then raises
 * "not enough memory" after an emergency collection). Lua's own allocator, not halo_malloc: a
 * refused request must return NULL, not abort. */
static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    halo_policy *p = ud;
    size_t old = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        p->mem_used -= old;
        return NULL;
    }
    if (nsize > old && p->mem_used + (nsize - old) > p->mem_limit) {
        if (!p->mem_refused && p->in_call) {
            /* Remember the policy line that asked (read-only walk of the call stack). */
            lua_Debug ar;
            p->mem_where[0] = '\0';
            for (int level = 0; lua_getstack(p->L, level, &ar); level++) {
                if (lua_getinfo(p->L, "Sl", &ar) && ar.currentline > 0) {
                    snprintf(p->mem_where, sizeof p->mem_where, "%s:%d", ar.short_src,
                             ar.currentline);
                    break;
                }
            }
        }
        p->mem_refused = true;
        return NULL;
    }
    void *q = realloc(ptr, nsize);
    if (q == NULL) {
        return NULL;
    }
    p->mem_used = p->mem_used - old + nsize;
    return q;
}

/* Count hook, armed only during budgeted calls: every `step` instructions it charges the call,
 * and once the budget is spent it fires on every instruction so pcall cannot swallow it. */
void halo_policy_count_hook(lua_State *L, lua_Debug *ar)
{
    halo_policy *p = halo_policy_of(L);
    p->used += p->over ? 1 : p->step;
    if (p->used >= p->budget || p->over) {
        p->over = true;
        lua_sethook(L, halo_policy_count_hook, LUA_MASKCOUNT, 1);
        lua_getinfo(L, "Sl", ar);
        lua_pushfstring(L, "%s:%d: instruction budget of %I exceeded (an endless loop?)",
                        ar->short_src, ar->currentline, (lua_Integer)p->budget);
        lua_error(L);
    }
}

/* ---- error reporting ---- */

/* Message handler: adds a traceback. */
static int msgh(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* " (hook cache_batch, rank 3, epoch 2, batch 17)" for the current call. */
static void moment(const halo_policy *p, char *buf, size_t size, bool with_hook)
{
    bool load = strcmp(p->cur_hook, "load") == 0;
    int n = snprintf(buf, size, " (%s%s", load || !with_hook ? "" : "hook ",
                     load        ? "loading the policy"
                     : with_hook ? p->cur_hook
                                 : "");
    const char *sep = load || with_hook ? ", " : "";
    if (p->cur_rank >= 0 && n < (int)size) {
        n += snprintf(buf + n, size - (size_t)n, "%srank %d", sep, p->cur_rank);
        sep = ", ";
    }
    if (p->cur_epoch >= 0 && n < (int)size) {
        n += snprintf(buf + n, size - (size_t)n, "%sepoch %d", sep, p->cur_epoch);
        sep = ", ";
    }
    if (p->cur_batch >= 0 && n < (int)size) {
        n += snprintf(buf + n, size - (size_t)n, "%sbatch %lld", sep, (long long)p->cur_batch);
        sep = ", ";
    }
    if (n < (int)size) {
        snprintf(buf + n, size - (size_t)n, "%s", sep[0] ? ")" : "");
    }
    if (!sep[0]) {
        buf[0] = '\0';
    }
}

/* Sets the halo error from the Lua error at the top of the stack: the first line with the
 * moment appended, then the traceback indented by four spaces. */
static int report(halo_policy *p, int status)
{
    lua_State *L = p->L;
    const char *msg = lua_tostring(L, -1);
    char head[600], tail[400] = "", when[160];
    moment(p, when, sizeof when, true);
    if (status == LUA_ERRMEM || (p->mem_refused && (msg == NULL || status == LUA_ERRERR ||
                                                    strstr(msg, "not enough memory")))) {
        snprintf(head, sizeof head, "%.400s: memory limit of %zu MiB exceeded",
                 p->mem_where[0] ? p->mem_where
                 : p->path[0]    ? p->path
                                 : "policy",
                 p->mem_limit >> 20);
        msg = NULL;
    } else if (msg == NULL) {
        snprintf(head, sizeof head, "%.400s: error object is not a string",
                 p->path[0] ? p->path : "policy");
    } else {
        const char *tb = strstr(msg, "\nstack traceback:");
        size_t hl = tb ? (size_t)(tb - msg) : strlen(msg);
        if (hl >= sizeof head) {
            hl = sizeof head - 1;
        }
        memcpy(head, msg, hl);
        head[hl] = '\0';
        if (tb != NULL) {
            /* Re-indent the traceback; drop the [C] frames of the engine itself. */
            size_t t = 0;
            for (const char *s = tb + 1; *s && t + 8 < sizeof tail;) {
                const char *e = strchr(s, '\n');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                while (len > 0 && *s == '\t') {
                    s++;
                    len--;
                }
                if (len > 0 && !(len == 9 && strncmp(s, "[C]: in ?", 9) == 0)) {
                    int w = snprintf(tail + t, sizeof tail - t, "\n    %.*s", (int)len, s);
                    t = w > 0 && (size_t)w < sizeof tail - t ? t + (size_t)w : sizeof tail - 1;
                }
                if (e == NULL) {
                    break;
                }
                s = e + 1;
            }
        }
    }
    lua_pop(L, 1);
    return halo_errorf(HALO_ELUA, "%s%s%s", head, when, tail);
}

/* Calls the function below nargs arguments with the budget armed and a traceback handler.
 * Leaves nres results on success; on failure sets the error and pops everything. */
static int budgeted_call(halo_policy *p, int nargs, int nres)
{
    lua_State *L = p->L;
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, msgh);
    lua_insert(L, base);
    p->used = 0;
    p->over = false;
    p->mem_refused = false;
    p->mem_where[0] = '\0';
    p->in_call = true;
    p->step = p->budget < 100000 ? (int)(p->budget > 0 ? p->budget : 1) : 100000;
    lua_sethook(L, halo_policy_count_hook, LUA_MASKCOUNT, p->step);
    int status = lua_pcall(L, nargs, nres, base);
    lua_sethook(L, NULL, 0, 0);
    p->in_call = false;
    lua_remove(L, base);
    if (status != LUA_OK) {
        return report(p, status);
    }
    return 0;
}

/* Runs the C function fn with nargs arguments (already pushed after it) in protected mode; a
 * Lua error becomes "FILE:LINE: hook NAME: <message> (moment)". Leaves nres results. */
static int protected_check(halo_policy *p, int hook, int nargs, int nres)
{
    lua_State *L = p->L;
    p->mem_refused = false;
    int status = lua_pcall(L, nargs, nres, 0);
    if (status == LUA_OK) {
        return 0;
    }
    if (status == LUA_ERRMEM) {
        return report(p, status);
    }
    char when[160];
    moment(p, when, sizeof when, false);
    const char *msg = lua_tostring(L, -1);
    int rc;
    if (hook < 0) {
        rc = halo_errorf(HALO_ELUA, "%s: %s", p->path[0] ? p->path : "policy", msg ? msg : "error");
    } else {
        rc = halo_errorf(HALO_ELUA, "%s:%d: hook %s: %s%s", p->path, p->hook_line[hook],
                         hook_names[hook], msg ? msg : "error", when);
    }
    lua_pop(L, 1);
    return rc;
}

/* ---- sandbox ---- */

static int l_print(lua_State *L)
{
    halo_policy *p = halo_policy_of(L);
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        luaL_tolstring(L, i, NULL);
        if (i > 1) {
            luaL_addchar(&b, '\t');
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    halo_info("%s: %s", p->name[0] ? p->name : "policy", lua_tostring(L, -1));
    return 0;
}

/* load() for text chunks only: load(string [, chunkname [, mode [, env]]]). */
static int l_safe_load(lua_State *L)
{
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (s == NULL) {
        return luaL_error(L, "load: only string chunks are allowed in the sandbox");
    }
    const char *mode = luaL_optstring(L, 3, "t");
    if (strcmp(mode, "t") != 0) {
        return luaL_error(L, "load: binary chunks are not allowed in the sandbox (mode '%s')",
                          mode);
    }
    const char *name = luaL_optstring(L, 2, "=(load)");
    int env = !lua_isnone(L, 4) ? 4 : 0;
    int status = luaL_loadbufferx(L, s, len, name, "t");
    if (status != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    if (env != 0) {
        lua_pushvalue(L, env);
        if (lua_setupvalue(L, -2, 1) == NULL) {
            lua_pop(L, 1);
        }
    }
    return 1;
}

/* collectgarbage limited to options that cannot switch the collector off. */
static int l_safe_gc(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "count") == 0) {
        lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT) +
                              (lua_Number)lua_gc(L, LUA_GCCOUNTB) / 1024.0);
        return 1;
    }
    if (strcmp(opt, "collect") == 0 || strcmp(opt, "step") == 0) {
        lua_gc(L, strcmp(opt, "collect") == 0 ? LUA_GCCOLLECT : LUA_GCSTEP, 0);
        lua_pushinteger(L, 0);
        return 1;
    }
    if (strcmp(opt, "isrunning") == 0) {
        lua_pushboolean(L, lua_gc(L, LUA_GCISRUNNING));
        return 1;
    }
    return luaL_error(L, "collectgarbage('%s') is not allowed in the sandbox", opt);
}

/* rawset that refuses the locked library tables. */
static int l_safe_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_getfield(L, LUA_REGISTRYINDEX, "halo.locked");
    lua_pushvalue(L, 1);
    if (lua_rawget(L, -2) != LUA_TNIL) {
        return luaL_error(L, "rawset: this table is read-only in the sandbox");
    }
    lua_pop(L, 2);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

/* setmetatable without finalizers: a __gc metamethod could run Lua code outside any hook call,
 * where no budget is armed (for example while the state closes). */
static int l_safe_setmetatable(lua_State *L)
{
    if (lua_istable(L, 2) && (lua_pushliteral(L, "__gc"), lua_rawget(L, 2)) != LUA_TNIL) {
        return luaL_error(L, "setmetatable: __gc metamethods are not allowed in the sandbox");
    }
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
}

static int l_locked_newindex(lua_State *L)
{
    return luaL_error(L, "attempt to modify the read-only table '%s' (field '%s')",
                      lua_tostring(L, lua_upvalueindex(1)), luaL_tolstring(L, 2, NULL));
}

static int l_locked_pairs(lua_State *L)
{
    lua_getglobal(L, "next");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushnil(L);
    return 3;
}

/* Replaces global `name` by a read-only proxy of it. */
static void lock_global(lua_State *L, const char *name)
{
    lua_getglobal(L, name);
    int real = lua_gettop(L);
    lua_newtable(L); /* proxy */
    lua_newtable(L); /* its metatable */
    lua_pushvalue(L, real);
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, name);
    lua_pushcclosure(L, l_locked_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, real);
    lua_pushcclosure(L, l_locked_pairs, 1);
    lua_setfield(L, -2, "__pairs");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, "halo.locked");
    lua_pushvalue(L, -2);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_setglobal(L, name);
    lua_pop(L, 1);
}

/* Whether a module name is plain (letters, digits, _, and dots between parts). */
static bool module_name_ok(const char *s)
{
    if (!*s || *s == '.') {
        return false;
    }
    for (const char *c = s; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' ||
                  (*c == '.' && c[1] != '.' && c[1] != '\0');
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* require in the sandbox: "halo", then NAME.lua next to the policy, then in halo's lua/. */
static int l_safe_require(lua_State *L)
{
    halo_policy *p = halo_policy_of(L);
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "halo.loaded");
    if (lua_getfield(L, -1, name) != LUA_TNIL) {
        if (lua_type(L, -1) == LUA_TLIGHTUSERDATA) {
            return luaL_error(L, "require '%s': circular require", name);
        }
        return 1;
    }
    lua_pop(L, 1);
    char rel[256], path[2400];
    if (!module_name_ok(name) || strlen(name) > 200) {
        return luaL_error(L,
                          "module '%s' not found (the sandbox loads only halo's modules in "
                          "lua/ and modules next to the policy)",
                          name);
    }
    snprintf(rel, sizeof rel, "%s", name);
    for (char *c = rel; *c; c++) {
        if (*c == '.') {
            *c = '/';
        }
    }
    const char *dirs[2] = {p->dir, p->luadir};
    bool found = false;
    for (int i = 0; i < 2 && !found; i++) {
        if (dirs[i][0] == '\0') {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s.lua", dirs[i], rel);
        found = file_exists(path);
    }
    if (!found) {
        return luaL_error(L,
                          "module '%s' not found (the sandbox loads only halo's modules in "
                          "lua/ and modules next to the policy)",
                          name);
    }
    if (halo_input_check(path) < 0) {
        return luaL_error(L, "%s", halo_errmsg());
    }
    if (luaL_loadfilex(L, path, "t") != LUA_OK) {
        return lua_error(L);
    }
    lua_pushlightuserdata(L, p); /* loading sentinel */
    lua_setfield(L, -3, name);
    lua_pushstring(L, name);
    lua_pushstring(L, path);
    lua_call(L, 2, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

/* Opens the libraries and the halo module (protected: runs under lua_pcall). */
static int setup_state(lua_State *L)
{
    halo_policy *p = halo_policy_of(L);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "halo.loaded");
    lua_newtable(L); /* weak-keyed set of locked tables */
    lua_newtable(L);
    lua_pushstring(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "halo.locked");
    if (p->unsafe) {
        luaL_openlibs(L);
    } else {
        luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
        luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
        luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
        luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
        luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
        lua_pop(L, 5);
    }
    /* the halo module */
    lua_newtable(L);
    halo_policy_open_arrays(L);
    lua_pushstring(L, HALO_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushcfunction(L, l_print);
    lua_setfield(L, -2, "log");
    lua_pushvalue(L, -1);
    lua_setglobal(L, "halo");
    lua_getfield(L, LUA_REGISTRYINDEX, "halo.loaded");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "halo");
    lua_pop(L, 2);
    /* deterministic math.random per rank */
    lua_getglobal(L, "math");
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(
        L, (lua_Integer)(halo_hash5(0, HALO_RNG_POLICY, (uint64_t)(p->rank + 1), 0, 0) >> 1));
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_print);
    lua_setglobal(L, "print");
    if (p->unsafe) {
        /* require finds halo's modules and the policy's neighbours too. */
        lua_getglobal(L, "package");
        lua_pushfstring(L, "%s/?.lua;%s/?.lua;", p->dir[0] ? p->dir : ".", p->luadir);
        lua_getfield(L, -2, "path");
        lua_concat(L, 2);
        lua_setfield(L, -2, "path");
        lua_getfield(L, -1, "loaded");
        lua_getglobal(L, "halo");
        lua_setfield(L, -2, "halo");
        lua_pop(L, 2);
        return 0;
    }
    const char *removed[] = {"dofile", "loadfile", NULL};
    for (int i = 0; removed[i] != NULL; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    lua_pushcfunction(L, l_safe_load);
    lua_setglobal(L, "load");
    lua_pushcfunction(L, l_safe_gc);
    lua_setglobal(L, "collectgarbage");
    lua_pushcfunction(L, l_safe_rawset);
    lua_setglobal(L, "rawset");
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, l_safe_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    lua_pushcfunction(L, l_safe_require);
    lua_setglobal(L, "require");
    lua_getglobal(L, "string");
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    /* The string metatable cannot be reached (getmetatable("") is false). */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
    const char *locked[] = {"string", "table", "math", "utf8", "halo", NULL};
    for (int i = 0; locked[i] != NULL; i++) {
        lock_global(L, locked[i]);
    }
    /* require "halo" returns the locked proxy */
    lua_getfield(L, LUA_REGISTRYINDEX, "halo.loaded");
    lua_getglobal(L, "halo");
    lua_setfield(L, -2, "halo");
    lua_pop(L, 1);
    return 0;
}

/* ---- context objects ---- */

enum { FK_INT, FK_I64, FK_F64, FK_STR, FK_ARR, FK_SUB, FK_PARAMS };

struct pdesc;
/* One field of a context object. */
typedef struct pfield {
    const char *name;        /* Lua name (== C field name) */
    uint8_t kind;            /* FK_* */
    uint8_t elem;            /* arrays: HALO_PA_* */
    uint8_t writable;        /* arrays: writable view */
    int8_t len_add;          /* arrays: length = *(int64 *)(base + len_off) + len_add */
    size_t off;              /* offset of the value (or of the array pointer) */
    size_t len_off;          /* arrays: offset of the int64 length */
    const struct pdesc *sub; /* FK_SUB: the nested object */
    const char *full;        /* "ctx.halo.ids" (for messages and docs) */
    const char *doc;         /* one line */
} pfield;

/* A context object type. */
typedef struct pdesc {
    const char *name;     /* "ctx.halo" */
    const pfield *fields; /* ends with a NULL name */
} pdesc;

#define F_INT(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_INT, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_I64(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_I64, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_F64(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_F64, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_STR(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_STR, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_ARR(S, P, f, t, w, n, a, d)                                                              \
    {                                                                                              \
#f, FK_ARR, t, w, a, offsetof(S, f), offsetof(S, n), NULL, P "." #f, d                     \
    }
#define F_SUB(S, P, f, D, d)                                                                       \
    {                                                                                              \
#f, FK_SUB, 0, 0, 0, offsetof(S, f), 0, &D, P "." #f, d                                    \
    }
#define F_PARAMS(P)                                                                                \
    {                                                                                              \
        "params", FK_PARAMS, 0, 0, 0, 0, 0, NULL, P ".params",                                     \
            "the policy's parameters: its `params` defaults overridden by --set"                   \
    }
#define F_END                                                                                      \
    {                                                                                              \
        NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL                                                   \
    }

#define STATS_FIELDS(P)                                                                            \
    F_INT(halo_policy_stats, P, epoch, "epoch"),                                                   \
        F_I64(halo_policy_stats, P, batch, "batch within the epoch"),                              \
        F_I64(halo_policy_stats, P, batches, "batches counted"),                                   \
        F_I64(halo_policy_stats, P, seeds, "seed nodes"),                                          \
        F_I64(halo_policy_stats, P, input_nodes, "input nodes of the first block"),                \
        F_I64(halo_policy_stats, P, sampled_edges, "sampled edges"),                               \
        F_I64(halo_policy_stats, P, remote_nodes, "input nodes owned by other ranks"),             \
        F_I64(halo_policy_stats, P, cache_hits, "halo input nodes found in the cache"),            \
        F_I64(halo_policy_stats, P, cache_misses, "halo input nodes not in the cache"),            \
        F_I64(halo_policy_stats, P, bytes_remote, "feature bytes pulled from other ranks"),        \
        F_F64(halo_policy_stats, P, loss, "mean training loss"),                                   \
        F_F64(halo_policy_stats, P, time_s, "wall time (s)"),                                      \
        F_F64(halo_policy_stats, P, sample_s, "sampling time (s)"),                                \
        F_F64(halo_policy_stats, P, fetch_s, "feature pull time (s)"),                             \
        F_F64(halo_policy_stats, P, compute_s, "forward + backward time (s)"),                     \
        F_F64(halo_policy_stats, P, wait_s, "time spent waiting (s)"), F_END

static const pfield last_batch_fields[] = {STATS_FIELDS("ctx.last_batch")};
static const pfield last_epoch_fields[] = {STATS_FIELDS("ctx.last_epoch")};
static const pdesc last_batch_desc = {"ctx.last_batch", last_batch_fields};
static const pdesc last_epoch_desc = {"ctx.last_epoch", last_epoch_fields};

static const pfield graph_fields[] = {
    F_I64(halo_policy_graph_summary, "ctx.graph", nodes, "nodes of the whole graph"),
    F_I64(halo_policy_graph_summary, "ctx.graph", edges, "edges of the whole graph"),
    F_INT(halo_policy_graph_summary, "ctx.graph", feat_dim, "features per node"),
    F_INT(halo_policy_graph_summary, "ctx.graph", classes, "label classes"),
    F_I64(halo_policy_graph_summary, "ctx.graph", train_nodes, "training nodes"),
    F_END,
};
static const pdesc graph_desc = {"ctx.graph", graph_fields};

static const pfield part_fields[] = {
    F_INT(halo_policy_part_summary, "ctx.part", parts, "parts in the partition"),
    F_INT(halo_policy_part_summary, "ctx.part", id, "this rank's part"),
    F_I64(halo_policy_part_summary, "ctx.part", nodes, "nodes this part owns"),
    F_I64(halo_policy_part_summary, "ctx.part", edges, "in-edges of the nodes it owns"),
    F_I64(halo_policy_part_summary, "ctx.part", train_nodes, "its training seeds"),
    F_END,
};
static const pdesc part_desc = {"ctx.part", part_fields};

static const pfield halo_fields[] = {
    F_I64(halo_policy_halo_view, "ctx.halo", n, "halo nodes of this rank"),
    F_ARR(halo_policy_halo_view, "ctx.halo", ids, HALO_PA_I32, 0, n, 0,
          "int32[n] global ids, sorted ascending (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", deg, HALO_PA_I32, 0, n, 0,
          "int32[n] in-degree in the whole graph (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", owner, HALO_PA_I32, 0, n, 0,
          "int32[n] part that owns each (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", misses, HALO_PA_I64, 0, n, 0,
          "int64[n] cache misses so far (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", score, HALO_PA_F64, 1, n, 0,
          "float64[n] policy-owned score, writable, kept between calls"),
    F_END,
};
static const pdesc halo_desc = {"ctx.halo", halo_fields};

static const pfield cache_fields[] = {
    F_I64(halo_policy_cache_view, "ctx.cache", capacity, "slots"),
    F_I64(halo_policy_cache_view, "ctx.cache", used, "occupied slots"),
    F_ARR(halo_policy_cache_view, "ctx.cache", id, HALO_PA_I32, 0, capacity, 0,
          "int32[capacity] global id in each slot, -1 = empty (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", hits, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] hits since the node entered (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", last_hit, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] step of the last hit, -1 = none (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", inserted, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] step at which the node entered (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", score, HALO_PA_F64, 1, capacity, 0,
          "float64[capacity] policy-owned slot score, writable, kept between calls"),
    F_ARR(halo_policy_cache_view, "ctx.cache", pos, HALO_PA_I32, 0, capacity, 0,
          "int32[capacity] halo position of the node in each slot, -1 = empty (read-only; nil when "
          "the caller does not provide it)"),
    F_END,
};
static const pdesc cache_desc = {"ctx.cache", cache_fields};

static const pfield ctx_fields[] = {
    F_INT(halo_policy_ctx, "ctx", rank, "this rank"),
    F_INT(halo_policy_ctx, "ctx", ranks, "ranks of the run"),
    F_INT(halo_policy_ctx, "ctx", epoch, "current epoch, 0-based (-1 before training)"),
    F_INT(halo_policy_ctx, "ctx", epochs, "planned epochs (0 = unknown)"),
    F_I64(halo_policy_ctx, "ctx", batch, "batch within the epoch (-1 outside a batch)"),
    F_I64(halo_policy_ctx, "ctx", batches, "batches per epoch (0 = unknown)"),
    F_I64(halo_policy_ctx, "ctx", step, "batches since training started, 0-based"),
    F_INT(halo_policy_ctx, "ctx", batch_size, "seeds per batch"),
    F_PARAMS("ctx"),
    F_SUB(halo_policy_ctx, "ctx", graph, graph_desc, "summary of the whole graph"),
    F_SUB(halo_policy_ctx, "ctx", part, part_desc, "summary of this rank's part"),
    F_SUB(halo_policy_ctx, "ctx", halo, halo_desc, "this rank's halo set"),
    F_SUB(halo_policy_ctx, "ctx", cache, cache_desc, "the remote-feature cache"),
    F_SUB(halo_policy_ctx, "ctx", last_batch, last_batch_desc, "counters of the last batch"),
    F_SUB(halo_policy_ctx, "ctx", last_epoch, last_epoch_desc, "counters of the last epoch"),
    F_END,
};
static const pdesc ctx_desc = {"ctx", ctx_fields};

static const pfield g_fields[] = {
    F_STR(halo_policy_graph_info, "g", name, "graph name"),
    F_I64(halo_policy_graph_info, "g", nodes, "nodes"),
    F_I64(halo_policy_graph_info, "g", edges, "edges"),
    F_INT(halo_policy_graph_info, "g", feat_dim, "features per node"),
    F_INT(halo_policy_graph_info, "g", classes, "label classes"),
    F_I64(halo_policy_graph_info, "g", train_nodes, "training nodes"),
    F_INT(halo_policy_graph_info, "g", parts, "parts asked for on the command line (0 = none)"),
    F_ARR(halo_policy_graph_info, "g", indptr, HALO_PA_I64, 0, nodes, 1,
          "int64[nodes+1] in-edge CSR offsets (read-only; nil when not loaded)"),
    F_ARR(halo_policy_graph_info, "g", indices, HALO_PA_I32, 0, edges, 0,
          "int32[edges] sources of the in-edges (read-only; nil when not loaded)"),
    F_PARAMS("g"),
    F_END,
};
static const pdesc g_desc = {"g", g_fields};

static const pfield batch_fields[] = {
    F_INT(halo_policy_batch, "b", epoch, "epoch"),
    F_I64(halo_policy_batch, "b", batch, "batch within the epoch"),
    F_I64(halo_policy_batch, "b", step, "batches since training started"),
    F_I64(halo_policy_batch, "b", n_input, "input nodes"),
    F_ARR(halo_policy_batch, "b", input, HALO_PA_I32, 0, n_input, 0,
          "int32[n_input] global ids of the input nodes (read-only)"),
    F_I64(halo_policy_batch, "b", n_hit, "halo input nodes found in the cache"),
    F_ARR(halo_policy_batch, "b", hit_slots, HALO_PA_I32, 0, n_hit, 0,
          "int32[n_hit] their slots, distinct (read-only)"),
    F_I64(halo_policy_batch, "b", n_miss, "halo input nodes not in the cache"),
    F_ARR(halo_policy_batch, "b", miss_halo, HALO_PA_I32, 0, n_miss, 0,
          "int32[n_miss] their positions in ctx.halo.ids, distinct (read-only)"),
    F_END,
};
static const pdesc batch_desc = {"b", batch_fields};

/* A context object in Lua: a pointer to the caller's struct, valid during one call. */
typedef struct pobj {
    const void *base;  /* the C struct */
    const pdesc *desc; /* its fields */
    uint32_t gen;      /* call generation */
} pobj;

static void push_obj(lua_State *L, const void *base, const pdesc *desc)
{
    halo_policy *p = halo_policy_of(L);
    pobj *o = lua_newuserdatauv(L, sizeof *o, 0);
    o->base = base;
    o->desc = desc;
    o->gen = p->gen;
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ctx_mt_ref);
    lua_setmetatable(L, -2);
}

static pobj *check_obj(lua_State *L)
{
    pobj *o = lua_touserdata(L, 1);
    if (o->gen != halo_policy_of(L)->gen) {
        luaL_error(L, "%s was used after its hook call returned", o->desc->name);
    }
    return o;
}

static int obj_index(lua_State *L)
{
    pobj *o = check_obj(L);
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    const pfield *f = o->desc->fields;
    for (; k != NULL && f->name != NULL; f++) {
        if (strcmp(f->name, k) == 0) {
            break;
        }
    }
    if (k == NULL || f->name == NULL) {
        const char *key = luaL_tolstring(L, 2, NULL);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (const pfield *g = o->desc->fields; g->name != NULL; g++) {
            luaL_addstring(&b, g == o->desc->fields ? "" : ", ");
            luaL_addstring(&b, g->name);
        }
        luaL_pushresult(&b);
        return luaL_error(L, "%s has no field '%s' (fields: %s)", o->desc->name, key,
                          lua_tostring(L, -1));
    }
    const char *base = o->base;
    switch (f->kind) {
    case FK_INT: lua_pushinteger(L, *(const int *)(base + f->off)); break;
    case FK_I64: lua_pushinteger(L, *(const int64_t *)(base + f->off)); break;
    case FK_F64: lua_pushnumber(L, *(const double *)(base + f->off)); break;
    case FK_STR: lua_pushstring(L, *(const char *const *)(base + f->off)); break;
    case FK_SUB: push_obj(L, base + f->off, f->sub); break;
    case FK_PARAMS: lua_rawgeti(L, LUA_REGISTRYINDEX, halo_policy_of(L)->params_ref); break;
    default: {
        void *data = *(void *const *)(base + f->off);
        int64_t n = *(const int64_t *)(base + f->len_off) + f->len_add;
        if (data == NULL || n < 0) {
            lua_pushnil(L);
        } else {
            halo_policy_push_view(L, data, n, f->elem, f->writable, f->full);
        }
    } break;
    }
    return 1;
}

static int obj_newindex(lua_State *L)
{
    pobj *o = check_obj(L);
    return luaL_error(L, "%s is read-only (assigning field '%s')", o->desc->name,
                      luaL_tolstring(L, 2, NULL));
}

static int obj_tostring(lua_State *L)
{
    pobj *o = lua_touserdata(L, 1);
    lua_pushstring(L, o->desc->name);
    return 1;
}

static void create_obj_metatable(lua_State *L, halo_policy *p)
{
    lua_newtable(L);
    lua_pushcfunction(L, obj_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, obj_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, obj_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    p->ctx_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Prints one context object's fields and its nested objects. */
static void doc_obj(FILE *out, const pdesc *d)
{
    fprintf(out, "\n%s\n", d->name);
    for (const pfield *f = d->fields; f->name != NULL; f++) {
        fprintf(out, "  %-28s %s\n", f->full, f->doc);
    }
    for (const pfield *f = d->fields; f->name != NULL; f++) {
        if (f->kind == FK_SUB && f->sub != &last_epoch_desc) {
            doc_obj(out, f->sub);
        }
    }
}

/* Hook documentation: name, signature, when it runs, what it returns, default. */
static const char *const hook_docs[HALO_POLICY_NHOOKS][3] = {
    {"partition(g) -> {method=, parts=, constraints=, imbalance=, objective=, seed=, assign=}",
     "once, by `halo partition`: method metis|multilevel|random|stream|custom, constraints among "
     "\"nodes\",\"train\",\"edges\", objective \"cut\"|\"vol\", assign = int32[nodes] (custom)",
     "metis, g.parts parts, {\"nodes\",\"train\"}, imbalance 1.05, cut"},
    {"fanout(ctx) -> {f1, f2, ...}", "each epoch: per-layer fanouts, input layer first, -1 = all",
     "{10, 25}"},
    {"pipeline(ctx) -> {depth=, sampler_threads=}",
     "each epoch: batches prepared ahead (0 = synchronous) and sampler threads",
     "depth 0, 1 thread"},
    {"cache_init(ctx) -> {capacity=, ids=, score=}",
     "once per rank: slots, initial halo ids (slot i gets ids[i]), initial slot score",
     "capacity 0 (no cache)"},
    {"cache_batch(ctx, b) -> {evict=, admit=} | nil",
     "after each batch's lookup: slots to free, halo ids to admit (pulled with the misses; "
     "admit[i] goes into evict[i], the rest into free slots)",
     "nothing"},
    {"epoch_end(ctx) -> nil", "after each epoch: read ctx.last_epoch, adapt parameters", "nothing"},
};

void halo_policy_doc_hooks(FILE *out)
{
    fprintf(out, "hooks (a policy returns a table of them; a missing hook takes the default)\n");
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        fprintf(out, "  %s\n      %s\n      default: %s\n", hook_docs[h][0], hook_docs[h][1],
                hook_docs[h][2]);
    }
    fprintf(out,
            "\ncontext objects (read-only; arrays are zero-copy views valid during the call)\n");
    doc_obj(out, &ctx_desc);
    fprintf(out, "\nctx.last_epoch\n  same fields as ctx.last_batch, summed over the last epoch\n");
    doc_obj(out, &batch_desc);
    doc_obj(out, &g_desc);
}

/* ---- opening ---- */

/* Types a --set value: true/false, a number, or else a string. */
static void push_param_value(lua_State *L, const char *v)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        lua_pushboolean(L, v[0] == 't');
    } else if (*v == '\0' || lua_stringtonumber(L, v) == 0) {
        lua_pushstring(L, v);
    }
}

/* After the chunk ran (its result at index 1): checks the returned table, keeps the hook
 * references, merges the parameters. Protected; errors are plain messages. */
static int finish_load(lua_State *L)
{
    halo_policy *p = halo_policy_of(L);
    if (!lua_istable(L, 1)) {
        return luaL_error(L, "the policy must return a table of hooks, it returned %s",
                          luaL_typename(L, 1));
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            return luaL_error(L, "the returned table has a non-string key (a %s)",
                              luaL_typename(L, -2));
        }
        const char *k = lua_tostring(L, -2);
        int h = 0;
        while (h < HALO_POLICY_NHOOKS && strcmp(hook_names[h], k) != 0) {
            h++;
        }
        if (h < HALO_POLICY_NHOOKS) {
            if (!lua_isfunction(L, -1)) {
                return luaL_error(L, "hook '%s' is a %s, not a function", k, luaL_typename(L, -1));
            }
            lua_Debug ar;
            lua_pushvalue(L, -1);
            lua_getinfo(L, ">S", &ar);
            p->hook_line[h] = ar.linedefined;
            lua_pushvalue(L, -1);
            p->hook_ref[h] = luaL_ref(L, LUA_REGISTRYINDEX);
        } else if (strcmp(k, "params") == 0) {
            if (!lua_istable(L, -1)) {
                return luaL_error(L, "'params' is a %s, not a table of defaults",
                                  luaL_typename(L, -1));
            }
        } else if (strcmp(k, "name") == 0 || strcmp(k, "description") == 0) {
            if (lua_type(L, -1) != LUA_TSTRING) {
                return luaL_error(L, "'%s' must be a string", k);
            }
            if (k[0] == 'n') {
                snprintf(p->name, sizeof p->name, "%s", lua_tostring(L, -1));
            }
        } else {
            return luaL_error(L,
                              "unknown field '%s' in the returned table (hooks: partition, "
                              "fanout, pipeline, cache_init, cache_batch, epoch_end; also "
                              "name, description, params)",
                              k);
        }
        lua_pop(L, 1);
    }
    lua_pushliteral(L, "params");
    if (lua_rawget(L, 1) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    int params = lua_gettop(L);
    for (int i = 0; i < p->nparams; i++) {
        const char *kv = p->params[i];
        const char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv) {
            return luaL_error(L, "--set %s: expected name=value", kv);
        }
        lua_pushlstring(L, kv, (size_t)(eq - kv));
        int key = lua_gettop(L);
        lua_pushvalue(L, key);
        int dt = lua_rawget(L, params);
        if (dt == LUA_TNIL) {
            char names[300] = "";
            size_t used = 0;
            lua_pushnil(L);
            while (lua_next(L, params) != 0) {
                lua_pop(L, 1);
                if (lua_type(L, -1) == LUA_TSTRING && used + 2 < sizeof names) {
                    int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     lua_tostring(L, -1));
                    used = w > 0 ? used + (size_t)w : used;
                    used = used < sizeof names ? used : sizeof names - 1;
                }
            }
            return luaL_error(L,
                              "--set %s: the policy does not declare a parameter '%s' "
                              "(declared: %s)",
                              kv, lua_tostring(L, key), used ? names : "none");
        }
        bool was_int = lua_isinteger(L, -1);
        lua_pop(L, 1);
        lua_pushvalue(L, key);
        push_param_value(L, eq + 1);
        int vt = lua_type(L, -1);
        if (vt != dt) {
            return luaL_error(L, "--set %s: parameter '%s' takes a %s (its default), not a %s", kv,
                              lua_tostring(L, key), lua_typename(L, dt), lua_typename(L, vt));
        }
        if (was_int && !lua_isinteger(L, -1)) {
            return luaL_error(L, "--set %s: parameter '%s' takes an integer", kv,
                              lua_tostring(L, key));
        }
        lua_rawset(L, params);
        lua_pop(L, 1);
    }
    p->params_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    create_obj_metatable(L, p);
    return 0;
}

/* halo's lua/ directory: $HALO_LUA_DIR, the source tree's lua/, share/halo/lua beside the
 * installed binary (PREFIX/bin/halo -> PREFIX/share/halo/lua), or /usr/local/share/halo/lua. */
static void find_luadir(char *out, size_t size)
{
    const char *env = getenv("HALO_LUA_DIR");
    if (env != NULL && env[0]) {
        snprintf(out, size, "%s", env);
        return;
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/lua/halo.lua", HALO_ROOT);
    if (file_exists(probe)) {
        snprintf(out, size, "%s/lua", HALO_ROOT);
        return;
    }
    char exe[960]; /* fits luadir[1024] with "/../share/halo/lua" */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0'; /* PREFIX/bin */
            snprintf(probe, sizeof probe, "%s/../share/halo/lua/halo.lua", exe);
            if (file_exists(probe)) {
                snprintf(out, size, "%s/../share/halo/lua", exe);
                return;
            }
        }
    }
    snprintf(out, size, "/usr/local/share/halo/lua");
}

int halo_policy_open(const halo_policy_opts *opts, halo_policy **out)
{
    *out = NULL;
    halo_policy *p = HALO_NEW(halo_policy, 1);
    const char *path = opts->path != NULL ? opts->path : "";
    snprintf(p->path, sizeof p->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash != NULL) {
        snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);
    } else if (path[0]) {
        snprintf(p->dir, sizeof p->dir, ".");
    }
    find_luadir(p->luadir, sizeof p->luadir);
    const char *base = slash ? slash + 1 : path;
    size_t bl = strlen(base);
    if (bl > 4 && strcmp(base + bl - 4, ".lua") == 0) {
        bl -= 4;
    }
    if (bl > 0) {
        snprintf(p->name, sizeof p->name, "%.*s", (int)bl, base);
    } else {
        snprintf(p->name, sizeof p->name, "default");
    }
    p->unsafe = opts->unsafe;
    p->rank = opts->rank;
    p->budget = opts->budget > 0 ? opts->budget : HALO_POLICY_DEFAULT_BUDGET;
    p->mem_limit = opts->mem_limit > 0 ? opts->mem_limit : HALO_POLICY_DEFAULT_MEM;
    p->nparams = opts->nparams;
    p->params = HALO_NEW(char *, opts->nparams > 0 ? opts->nparams : 1);
    for (int i = 0; i < opts->nparams; i++) {
        p->params[i] = halo_strdup(opts->params[i]);
    }
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        p->hook_ref[h] = LUA_NOREF;
    }
    p->params_ref = LUA_NOREF;
    p->cur_hook = "load";
    p->cur_rank = p->rank;
    p->cur_epoch = -1;
    p->cur_batch = -1;
    int rc = 0;
    p->L = lua_newstate(limited_alloc, p);
    if (p->L == NULL) {
        halo_policy_close(p);
        return halo_errorf(HALO_ENOMEM, "policy: cannot create a Lua state");
    }
    lua_State *L = p->L;
    *(halo_policy **)lua_getextraspace(L) = p;
    lua_pushcfunction(L, setup_state);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        rc = report(p, LUA_ERRRUN);
        goto fail;
    }
    if (p->path[0]) {
        if (halo_path_exists(p->path) && (rc = halo_input_check(p->path)) < 0) {
            goto fail; /* a FIFO or device would block or never end */
        }
        int st = luaL_loadfilex(L, p->path, "t");
        if (st == LUA_ERRFILE) {
            lua_pop(L, 1);
            rc = halo_errorf(HALO_EIO, "%s: cannot read the policy file", p->path);
            goto fail;
        }
        if (st != LUA_OK) {
            rc = report(p, st);
            goto fail;
        }
        HALO_TRY(budgeted_call(p, 0, 1));
    } else {
        lua_newtable(L);
    }
    lua_pushcfunction(L, finish_load);
    lua_insert(L, -2);
    p->mem_refused = false;
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        const char *m = lua_tostring(L, -1);
        bool usage = m != NULL && strncmp(m, "--set", 5) == 0;
        rc = halo_errorf(usage ? HALO_EUSAGE : HALO_ELUA, "%s: %s", p->path[0] ? p->path : "policy",
                         m ? m : "error");
        goto fail;
    }
    p->gen++;
    *out = p;
    return 0;
fail:
    halo_policy_close(p);
    return rc;
}

int halo_policy_open_worker(const halo_policy *pol, halo_policy **out)
{
    halo_policy_opts o = {
        .path = pol->path,
        .params = (const char *const *)pol->params,
        .nparams = pol->nparams,
        .unsafe = pol->unsafe,
        .rank = pol->rank,
        .budget = pol->budget,
        .mem_limit = pol->mem_limit,
    };
    return halo_policy_open(&o, out);
}

void halo_policy_close(halo_policy *pol)
{
    if (pol == NULL) {
        return;
    }
    if (pol->L != NULL) {
        lua_close(pol->L);
    }
    for (int i = 0; i < pol->nparams; i++) {
        halo_free(pol->params[i]);
    }
    halo_free(pol->params);
    halo_free(pol->vstamp);
    halo_free(pol->sstamp);
    halo_free(pol->scratch);
    halo_free(pol);
}

unsigned halo_policy_hooks(const halo_policy *pol)
{
    unsigned m = 0;
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        if (pol->hook_ref[h] != LUA_NOREF) {
            m |= 1u << h;
        }
    }
    return m;
}

const char *halo_policy_name(const halo_policy *pol)
{
    return pol->name;
}

const char *halo_policy_path(const halo_policy *pol)
{
    return pol->path;
}

void halo_policy_set_limits(halo_policy *pol, int64_t budget, size_t mem_limit)
{
    if (budget > 0) {
        pol->budget = budget;
    }
    if (mem_limit > 0) {
        pol->mem_limit = mem_limit;
    }
}

size_t halo_policy_mem_used(const halo_policy *pol)
{
    return pol->mem_used;
}

void halo_policy_print_params(const halo_policy *pol, FILE *f, const char *prefix)
{
    lua_State *L = pol->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, pol->params_ref);
    /* Sorted output: collect the string keys first. */
    const char *keys[256];
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2) != 0 && n < 256) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            keys[n++] = lua_tostring(L, -1); /* anchored by the params table */
        }
    }
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    }
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, keys[i]);
        lua_rawget(L, -2);
        int t = lua_type(L, -1);
        if (t == LUA_TBOOLEAN) {
            fprintf(f, "%s%s=%s\n", prefix, keys[i], lua_toboolean(L, -1) ? "true" : "false");
        } else if (t == LUA_TNUMBER && lua_isinteger(L, -1)) {
            fprintf(f, "%s%s=%lld\n", prefix, keys[i], (long long)lua_tointeger(L, -1));
        } else if (t == LUA_TNUMBER) {
            fprintf(f, "%s%s=%.14g\n", prefix, keys[i], lua_tonumber(L, -1));
        } else if (t == LUA_TSTRING) {
            fprintf(f, "%s%s=%s\n", prefix, keys[i], lua_tostring(L, -1));
        } else {
            fprintf(f, "%s%s=(%s)\n", prefix, keys[i], lua_typename(L, t));
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

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
    p->cur_hook = hook_names[h];
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
    push_obj(L, g, &g_desc);
    int rc = budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check_partition);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, &c);
        lua_pushlightuserdata(L, (void *)g);
        rc = protected_check(pol, h, 3, 1);
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

/* -- fanout -- */

static int check_fanout(lua_State *L)
{
    int max = (int)lua_tointeger(L, 2);
    if (lua_isnil(L, 1)) {
        luaL_error(L, "returned nil, expected a list of fanouts like {10, 25}");
    }
    halo_policy_array *a = want_list(L, 1, "fanouts", max, -1, INT32_MAX);
    if (a->n == 0) {
        luaL_error(L, "returned an empty list, expected at least one layer");
    }
    return 1;
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
    begin(pol, h, ctx->rank, ctx->epoch, ctx->batch);
    push_obj(L, ctx, &ctx_desc);
    int rc = budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check_fanout);
        lua_insert(L, -2);
        lua_pushinteger(L, max_layers);
        rc = protected_check(pol, h, 2, 1);
    }
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

/* -- pipeline -- */

static int check_pipeline(lua_State *L)
{
    int *v = lua_touserdata(L, 2);
    if (lua_type(L, 1) == LUA_TNUMBER) {
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
    lua_State *L = pol->L;
    begin(pol, h, ctx->rank, ctx->epoch, ctx->batch);
    push_obj(L, ctx, &ctx_desc);
    int rc = budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check_pipeline);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, v);
        rc = protected_check(pol, h, 2, 0);
    }
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
    begin(pol, h, ctx->rank, ctx->epoch, ctx->batch);
    push_obj(L, ctx, &ctx_desc);
    int rc = budgeted_call(pol, 1, 1);
    if (rc == 0) {
        lua_pushcfunction(L, check_cache_init);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, &o);
        lua_pushlightuserdata(L, (void *)ctx);
        rc = protected_check(pol, h, 3, 1);
    }
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
    push_obj(L, ctx, &ctx_desc);
    push_obj(L, b, &batch_desc);
    int rc = budgeted_call(pol, 2, 1);
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
        rc = protected_check(pol, h, 2, 2);
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
    push_obj(L, ctx, &ctx_desc);
    int rc = budgeted_call(pol, 1, 1);
    if (rc == 0 && !lua_isnil(L, -1)) {
        char when[160];
        moment(pol, when, sizeof when, false);
        rc = halo_errorf(HALO_ELUA,
                         "%s:%d: hook epoch_end: returned a %s, it should return "
                         "nothing%s",
                         pol->path, pol->hook_line[h], luaL_typename(L, -1), when);
    }
    end(pol);
    return rc;
}
