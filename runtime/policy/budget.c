/* Policy engine, limits: the counting allocator (memory limit), the count hook (instruction
 * budget and wall clock), the charge that C functions pay for their work, and the budgeted
 * call that arms them.
 *
 * Lua's count hook fires only between VM instructions, so work done inside one C function
 * (a library function, a halo array method) is invisible to it. Every such function either
 * has a cost bounded by a small multiple of its arguments' or result's size and pays it with
 * halo_policy_spend() (sandbox.c, array.c), or (the pattern functions, pattern.c) counts its
 * own steps and pays as it goes. Every byte allocated during a call costs a sixteenth of an
 * instruction too (someone writes it: a concatenation is one instruction that copies a whole
 * string). Each payment also reads the wall clock, and so does every large allocation: a call
 * that runs past its time limit fails at the next instruction, payment or allocation. */
#include "policy/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Instructions between two runs of the count hook (and so between two looks at the clock). */
#define COUNT_STEP 1000
/* Allocations at least this large look at the clock (a copy of a big string is one instruction). */
#define CLOCK_ALLOC_BYTES 65536

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Remembers "file:line" of the innermost policy line on p's stack (read-only walk). */
static void locate(halo_policy *p)
{
    lua_Debug ar;
    p->mem_where[0] = '\0';
    for (int level = 0; lua_getstack(p->L, level, &ar); level++) {
        if (lua_getinfo(p->L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(p->mem_where, sizeof p->mem_where, "%s:%d", ar.short_src, ar.currentline);
            break;
        }
    }
}

/* Whether the current call has run past its wall-clock limit; the first time it has, marks the
 * call over so that the count hook fires on every instruction and pcall cannot swallow it. */
static bool late(halo_policy *p)
{
    if (p->timed_out) {
        return true;
    }
    if (now_s() <= p->deadline) {
        return false;
    }
    p->timed_out = true;
    p->over = true;
    lua_sethook(p->L, halo_policy_count_hook, LUA_MASKCOUNT, 1);
    return true;
}

void halo_policy_arm(halo_policy *p)
{
    p->used = 0;
    p->over = false;
    p->timed_out = false;
    p->mem_refused = false;
    p->mem_where[0] = '\0';
    p->in_call = true;
    p->deadline = now_s() + p->time_limit;
    p->step = p->budget < COUNT_STEP ? (int)(p->budget > 0 ? p->budget : 1) : COUNT_STEP;
    lua_sethook(p->L, halo_policy_count_hook, LUA_MASKCOUNT, p->step);
}

void halo_policy_disarm(halo_policy *p)
{
    lua_sethook(p->L, NULL, 0, 0);
    p->work = p->used < INT64_MAX - p->work ? p->work + p->used : INT64_MAX;
    p->in_call = false;
}

void halo_policy_spend(lua_State *L, int64_t units)
{
    halo_policy *p = halo_policy_of(L);
    if (!p->in_call) {
        return;
    }
    /* never negative (a bad length cannot buy budget), saturating (nor can a huge one) */
    units = units > 0 ? units : 0;
    p->used = units < INT64_MAX - p->used ? p->used + units : INT64_MAX;
    if (late(p)) {
        char t[96];
        luaL_error(L, "%s", halo_policy_time_text(p, t, sizeof t));
    }
    if (p->used >= p->budget) {
        p->over = true;
        lua_sethook(L, halo_policy_count_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "instruction budget of %I exceeded", (lua_Integer)p->budget);
    }
}

void halo_policy_charge(lua_State *L, int64_t n)
{
    halo_policy_spend(L, 1 + (n > 0 ? n >> 4 : 0));
}

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
    if (nsize > old && p->in_call && nsize - old >= CLOCK_ALLOC_BYTES && !p->timed_out && late(p)) {
        locate(p); /* refused: Lua raises a memory error, which the report names as the time */
        return NULL;
    }
    if (nsize > old && p->in_call) {
        /* the bytes are written by whoever asked (a copy, a fill): a sixteenth per byte */
        p->used += (int64_t)((nsize - old) / 16);
        if (p->used >= p->budget && !p->over) {
            p->over = true; /* the next instruction raises the budget error */
            lua_sethook(p->L, halo_policy_count_hook, LUA_MASKCOUNT, 1);
        }
    }
    if (nsize > old && p->mem_used + (nsize - old) > p->mem_limit) {
        if (!p->mem_refused && p->in_call && !p->timed_out) {
            locate(p); /* the policy line that asked */
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

/* Count hook, armed only during budgeted calls: every `step` instructions it charges the call
 * and looks at the clock; once the budget or the time is spent it fires on every instruction
 * so pcall cannot swallow it. */
void halo_policy_count_hook(lua_State *L, lua_Debug *ar)
{
    halo_policy *p = halo_policy_of(L);
    p->used += p->over ? 1 : p->step;
    if (late(p)) {
        char t[96];
        lua_getinfo(L, "Sl", ar);
        lua_pushfstring(L, "%s:%d: %s", ar->short_src, ar->currentline,
                        halo_policy_time_text(p, t, sizeof t));
        lua_error(L);
    }
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
    halo_policy_arm(p);
    int status = lua_pcall(L, nargs, nres, base);
    halo_policy_disarm(p);
    lua_remove(L, base);
    if (status != LUA_OK) {
        return halo_policy_report(p, status);
    }
    return 0;
}
