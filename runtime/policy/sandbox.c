/* Policy engine, sandbox: the restricted environment (safe base functions, locked library
 * tables, require limited to halo's and the policy's modules) and the halo module. */
#include "policy/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/rng.h"

#include <lualib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef HALO_VERSION
#define HALO_VERSION "dev"
#endif

/* ---- sandbox ---- */

/* Longest line a policy logs (longer ones are cut and end with " ..."). */
#define LOG_LINE_MAX 2048

/* print and halo.log: one line on halo's log, its text cleaned (untrusted). */
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
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    halo_policy_spend(L, 1 + (int64_t)(len / 4)); /* output is slow: a quarter per byte */
    char line[LOG_LINE_MAX];
    halo_policy_clean_text(line, sizeof line, text, len);
    halo_info("%s: %s%s", p->name[0] ? p->name : "policy", line,
              strlen(line) + 1 < len ? " ..." : "");
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
    halo_policy_spend(L, 1 + 2 * (int64_t)len); /* compiling: about two per byte */
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
        /* a full collection walks the whole heap */
        halo_policy_spend(L, 1 + (opt[0] == 'c' ? (int64_t)(halo_policy_of(L)->mem_used / 8) : 0));
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

bool halo_policy_file_exists(const char *path)
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
        found = halo_policy_file_exists(path);
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

/* ---- library functions that pay for their work ----
 *
 * Lua's library functions run inside one C call, out of the count hook's sight. Each one whose
 * work is not O(1) pays before it runs for what its arguments let it do (a loop count that no
 * allocation bounds: string.rep's count, table.move's range, table.sort's n log n, shifts of
 * table.insert/remove) or for the bytes it scans; the bytes it produces are paid by the
 * allocator (budget.c). The original C function is called directly, in the same frame, so its
 * errors read as before. */

enum {
    PAY_RESULT = 1,   /* its results' count, one each (the bytes of new strings: the allocator) */
    PAY_ARGS = 2,     /* the string arguments, one per byte (work linear in the input) */
    PAY_REP = 4,      /* string.rep of an empty string: the repetition count */
    PAY_SORT = 8,     /* table.sort: n log n */
    PAY_INSERT = 16,  /* table.insert with a position: the elements shifted */
    PAY_REMOVE = 32,  /* table.remove with a position: the elements shifted */
    PAY_MOVE = 64,    /* table.move: the range */
    PAY_CONCAT = 128, /* table.concat: the range */
    PAY_UTF8 = 256    /* utf8.len (with PAY_ARGS) / utf8.offset: the bytes it may scan */
};

static int64_t arg_int(lua_State *L, int idx, int64_t dflt)
{
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, idx, &ok);
    return ok ? (int64_t)v : dflt;
}

static int l_paying(lua_State *L)
{
    lua_CFunction fn = lua_tocfunction(L, lua_upvalueindex(1));
    int how = (int)lua_tointeger(L, lua_upvalueindex(2));
    int top = lua_gettop(L);
    int64_t pay = 1;
    int64_t len = lua_type(L, 1) == LUA_TTABLE ? (int64_t)lua_rawlen(L, 1) : 0;
    if ((how & PAY_REP) && lua_type(L, 1) == LUA_TSTRING &&
        lua_rawlen(L, 1) + (lua_type(L, 3) == LUA_TSTRING ? lua_rawlen(L, 3) : 0) == 0) {
        /* an empty result loops n times with nothing to allocate (a non-empty one is paid
         * and bounded by its allocation) */
        int64_t n = arg_int(L, 2, 0);
        pay += n > 0 ? n / 4 : 0;
    }
    if ((how & PAY_SORT) && len > 1) {
        int64_t lg = 1;
        for (int64_t v = len; v > 1; v >>= 1) {
            lg++;
        }
        pay += 4 * len * lg; /* a comparison reads two elements through the API */
    }
    if (((how & PAY_INSERT) && top >= 3) || ((how & PAY_REMOVE) && top >= 2)) {
        int64_t pos = arg_int(L, 2, len);
        pay += len >= pos && pos > 0 ? 2 * (len - pos) : 0; /* a read and a write each */
    }
    if (how & PAY_MOVE) {
        int64_t f = arg_int(L, 2, 1), e = arg_int(L, 3, 0);
        uint64_t r = e >= f ? (uint64_t)e - (uint64_t)f + 1 : 0;
        pay += r < (uint64_t)INT64_MAX / 4 ? (int64_t)(2 * r) : INT64_MAX / 2;
    }
    if (how & PAY_CONCAT) {
        int64_t i = arg_int(L, 3, 1), j = arg_int(L, 4, len);
        uint64_t r = j >= i ? (uint64_t)j - (uint64_t)i + 1 : 0;
        pay += r < (uint64_t)INT64_MAX / 4 ? (int64_t)r : INT64_MAX / 2;
    }
    if ((how & PAY_UTF8) && lua_type(L, 1) == LUA_TSTRING) {
        /* utf8.len(s, i, j) scans i..j; utf8.offset(s, n, i) moves over at most 4|n| bytes */
        int64_t ls = (int64_t)lua_rawlen(L, 1), scan = ls;
        if (how & PAY_ARGS) { /* len */
            int64_t i = arg_int(L, 2, 1), j = arg_int(L, 3, -1);
            i = i < 0 ? ls + i + 1 : i;
            j = j < 0 ? ls + j + 1 : j;
            scan = j >= i ? j - i + 1 : 0;
        } else { /* offset */
            int64_t k = arg_int(L, 2, 0);
            k = k < 0 ? (k == INT64_MIN ? INT64_MAX : -k) : k;
            scan = k < ls / 4 ? 4 * k : ls;
        }
        pay += scan < 0 ? 0 : scan > ls ? ls : scan;
        how &= ~PAY_ARGS;
    }
    if (how & PAY_ARGS) {
        for (int i = 1; i <= top; i++) {
            pay += lua_type(L, i) == LUA_TSTRING ? (int64_t)lua_rawlen(L, i) : 0;
        }
    }
    halo_policy_spend(L, pay);
    int n = fn(L);
    if (how & PAY_RESULT) {
        halo_policy_spend(L, n); /* table.unpack, string.byte, utf8.codepoint: up to 10^6 */
    }
    return n;
}

/* Replaces field name of the table on top by a paying wrapper of it. */
static void pay_for(lua_State *L, const char *name, int how)
{
    if (lua_getfield(L, -1, name) != LUA_TFUNCTION || lua_tocfunction(L, -1) == NULL) {
        lua_pop(L, 1);
        return;
    }
    lua_pushinteger(L, how);
    lua_pushcclosure(L, l_paying, 2);
    lua_setfield(L, -2, name);
}

/* Makes every library function of the state unable to run unbounded: the pattern functions
 * are replaced by the counting matcher (pattern.c), the others pay for their work. */
static void bound_libraries(lua_State *L)
{
    lua_getglobal(L, "string");
    halo_policy_open_patterns(L);
    pay_for(L, "rep", PAY_REP | PAY_RESULT);
    static const char *const by_result[] = {"format",  "sub",  "upper", "lower",
                                            "reverse", "char", "byte",  NULL};
    for (int i = 0; by_result[i] != NULL; i++) {
        pay_for(L, by_result[i], PAY_RESULT);
    }
    pay_for(L, "pack", PAY_RESULT);
    pay_for(L, "unpack", PAY_RESULT);
    lua_pop(L, 1);
    lua_getglobal(L, "table");
    pay_for(L, "sort", PAY_SORT);
    pay_for(L, "insert", PAY_INSERT);
    pay_for(L, "remove", PAY_REMOVE);
    pay_for(L, "move", PAY_MOVE);
    pay_for(L, "concat", PAY_CONCAT | PAY_RESULT);
    pay_for(L, "unpack", PAY_RESULT);
    lua_pop(L, 1);
    lua_getglobal(L, "utf8");
    pay_for(L, "len", PAY_UTF8 | PAY_ARGS);
    pay_for(L, "offset", PAY_UTF8);
    pay_for(L, "codepoint", PAY_RESULT);
    pay_for(L, "char", PAY_RESULT);
    lua_pop(L, 1);
    lua_pushglobaltable(L);
    pay_for(L, "tonumber", PAY_ARGS);
    pay_for(L, "tostring", PAY_RESULT);
    lua_pop(L, 1);
}

const halo_policy_reg *const halo_policy_array_tables[] = {
    halo_policy_array_methods, halo_policy_array_elem_methods, halo_policy_array_order_methods, NULL};

/* Opens the libraries and the halo module (protected: runs under lua_pcall). */
int halo_policy_setup_state(lua_State *L)
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
    bound_libraries(L);
    /* the halo module */
    lua_newtable(L);
    halo_policy_open_arrays(L, halo_policy_array_tables);
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
