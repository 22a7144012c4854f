/* Policy engine, loading: opening a state, running the policy file, checking the returned
 * table, merging --set parameters, closing; accessors. */
#include "policy/internal.h"

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

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

/* The params table at idx: a plain table (no metatable) of name = default, each default a
 * number, a string or a boolean (what --set can give); anything else is a Lua error. */
static void check_params(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) {
        luaL_error(L, "'params' is a %s, not a table of defaults", luaL_typename(L, idx));
    }
    if (lua_getmetatable(L, idx)) {
        luaL_error(L, "'params' has a metatable; give the defaults in a plain table");
    }
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            luaL_error(L, "'params' has a %s key, expected parameter names",
                       luaL_typename(L, -2));
        }
        int t = lua_type(L, -1);
        if (t != LUA_TNUMBER && t != LUA_TSTRING && t != LUA_TBOOLEAN) {
            luaL_error(L, "params.%s is a %s, expected a number, a string or a boolean",
                       lua_tostring(L, -2), luaL_typename(L, -1));
        }
        lua_pop(L, 1);
    }
}

/* The string keys of the table at idx, sorted (at most cap; the rest are left out), into keys;
 * returns their count. The strings are anchored by the table. */
static int sorted_keys(lua_State *L, int idx, const char **keys, int cap)
{
    int n = 0;
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING && n < cap) {
            keys[n++] = lua_tostring(L, -1);
        }
    }
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    }
    return n;
}

/* A --set NAME=VALUE whose NAME the policy does not declare (params at index params): a
 * warning, printed once per process (rank 0 only under mpirun), and the setting is ignored, so
 * one setting can be given to every policy of a loop; refused (error message pushed, returns
 * -1) when NAME is a typo of a declared name. The declared names are listed sorted. */
static int undeclared(lua_State *L, const halo_policy *p, int params, const char *kv,
                      const char *name)
{
    const char *keys[64];
    int n = sorted_keys(L, params, keys, 64);
    char names[300] = "";
    size_t used = 0;
    for (int i = 0; i < n && used + 2 < sizeof names; i++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", keys[i]);
        used = w > 0 && used + (size_t)w < sizeof names ? used + (size_t)w : sizeof names - 1;
    }
    const char *hint = strlen(name) >= 3 ? halo_did_you_mean(name, keys, n) : NULL;
    if (hint != NULL) {
        lua_pushfstring(L, "--set %s: the policy does not declare a parameter '%s' (did you "
                        "mean %s? declared: %s)", kv, name, hint, names);
        return -1;
    }
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char last[600];
    char msg[600];
    snprintf(msg, sizeof msg,
             "%.200s: --set %.100s: the policy does not declare '%.60s' (declared: %s); ignored", p->path[0] ? p->path : "policy", kv, name, used ? names : "none");
    pthread_mutex_lock(&mu);
    bool fresh = strcmp(last, msg) != 0;
    snprintf(last, sizeof last, "%s", msg);
    pthread_mutex_unlock(&mu);
    if (fresh && halo_log_rank() <= 0) {
        halo_warn("%s", msg);
    }
    return 0;
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
    if (lua_getmetatable(L, 1)) {
        /* hooks are read from the table itself (raw): a metatable's __index would be ignored
         * and its loops or errors would surface far from here */
        return luaL_error(L, "the returned table has a metatable; put the hooks, name and "
                             "params in the table itself");
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            return luaL_error(L, "the returned table has a non-string key (a %s)",
                              luaL_typename(L, -2));
        }
        const char *k = lua_tostring(L, -2);
        int h = 0;
        while (h < HALO_POLICY_NHOOKS && strcmp(halo_policy_hook_name(h), k) != 0) {
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
            check_params(L, lua_gettop(L));
        } else if (strcmp(k, "name") == 0 || strcmp(k, "description") == 0) {
            if (lua_type(L, -1) != LUA_TSTRING) {
                return luaL_error(L, "'%s' must be a string", k);
            }
            if (k[0] == 'n') { /* printed by others: cleaned once here */
                size_t nl;
                const char *nm = lua_tolstring(L, -1, &nl);
                halo_policy_clean_text(p->name, sizeof p->name, nm, nl);
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
            if (undeclared(L, p, params, kv, lua_tostring(L, key)) == 0) {
                lua_pop(L, 2); /* another policy's parameter: ignored (warned once) */
                continue;
            }
            return lua_error(L);
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
    halo_policy_create_obj_metatable(L, p);
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
    if (halo_policy_file_exists(probe)) {
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
            if (halo_policy_file_exists(probe)) {
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
    p->time_limit = opts->time_limit > 0 ? opts->time_limit : HALO_POLICY_DEFAULT_SECONDS;
    const char *secs = getenv("HALO_POLICY_SECONDS");
    if (!(opts->time_limit > 0) && secs != NULL && secs[0]) {
        char *end;
        double v = strtod(secs, &end);
        if (*end != '\0' || !(v > 0) || v > 1e6) {
            halo_policy_close(p);
            return halo_errorf(HALO_EUSAGE,
                               "HALO_POLICY_SECONDS: expected seconds in (0, 1e6], got '%.40s'",
                               secs);
        }
        p->time_limit = v;
    }
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
    p->L = lua_newstate(halo_policy_alloc, p);
    if (p->L == NULL) {
        halo_policy_close(p);
        return halo_errorf(HALO_ENOMEM, "policy: cannot create a Lua state");
    }
    lua_State *L = p->L;
    *(halo_policy **)lua_getextraspace(L) = p;
    lua_pushcfunction(L, halo_policy_setup_state);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        rc = halo_policy_report(p, LUA_ERRRUN);
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
            rc = halo_policy_report(p, st);
            goto fail;
        }
        HALO_TRY(halo_policy_budgeted_call(p, 0, 1));
    } else {
        lua_newtable(L);
    }
    lua_pushcfunction(L, finish_load);
    lua_insert(L, -2);
    p->mem_refused = false;
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        size_t ml = 0;
        const char *raw = lua_tolstring(L, -1, &ml);
        char m[600];
        halo_policy_clean_text(m, sizeof m, raw ? raw : "error", raw ? ml : 5);
        bool usage = strncmp(m, "--set", 5) == 0;
        rc = halo_errorf(usage ? HALO_EUSAGE : HALO_ELUA, "%s: %s", p->path[0] ? p->path : "policy",
                         m);
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
        .time_limit = pol->time_limit,
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

int64_t halo_policy_work(const halo_policy *pol)
{
    return pol != NULL ? pol->work : 0;
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

void halo_policy_set_time_limit(halo_policy *pol, double seconds)
{
    if (seconds > 0) {
        pol->time_limit = seconds;
    }
}

double halo_policy_time_limit(const halo_policy *pol)
{
    return pol->time_limit;
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
    int n = sorted_keys(L, -1, keys, 256);
    for (int i = 0; i < n; i++) {
        char key[256], val[512];
        lua_pushstring(L, keys[i]);
        lua_rawget(L, -2);
        int t = lua_type(L, -1);
        halo_policy_clean_text(key, sizeof key, keys[i], strlen(keys[i]));
        if (t == LUA_TBOOLEAN) {
            fprintf(f, "%s%s=%s\n", prefix, key, lua_toboolean(L, -1) ? "true" : "false");
        } else if (t == LUA_TNUMBER && lua_isinteger(L, -1)) {
            fprintf(f, "%s%s=%lld\n", prefix, key, (long long)lua_tointeger(L, -1));
        } else if (t == LUA_TNUMBER) {
            fprintf(f, "%s%s=%.14g\n", prefix, key, lua_tonumber(L, -1));
        } else if (t == LUA_TSTRING) {
            size_t vl;
            const char *v = lua_tolstring(L, -1, &vl);
            halo_policy_clean_text(val, sizeof val, v, vl);
            fprintf(f, "%s%s=%s\n", prefix, key, val);
        } else {
            fprintf(f, "%s%s=(%s)\n", prefix, key, lua_typename(L, t));
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}
