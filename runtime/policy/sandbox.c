/* Policy engine, sandbox: the restricted environment (safe base functions, locked library
 * tables, require limited to halo's and the policy's modules) and the halo module. */
#include "policy/internal.h"

#include "core/log.h"
#include "core/rng.h"

#include <lualib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef HALO_VERSION
#define HALO_VERSION "dev"
#endif

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
