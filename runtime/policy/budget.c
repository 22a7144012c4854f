/* Policy engine, limits: the counting allocator (memory limit), the count hook (instruction
 * budget) and the budgeted call that arms them. */
#include "policy/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- memory limit and instruction budget ---- */

/* lua_Alloc that counts the state's bytes and refuses growth beyond the limit (Lua then raises
 * "not enough memory" after an emergency collection). Lua's own allocator, not halo_malloc: a
 * refused request must return NULL, not abort. */
void *halo_policy_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
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

/* Calls the function below nargs arguments with the budget armed and a traceback handler.
 * Leaves nres results on success; on failure sets the error and pops everything. */
int halo_policy_budgeted_call(halo_policy *p, int nargs, int nres)
{
    lua_State *L = p->L;
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, halo_policy_msgh);
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
        return halo_policy_report(p, status);
    }
    return 0;
}
