/* Policy engine, errors: the traceback handler and the one place that turns a Lua error into
 * halo's message (with the moment of the call). */
#include "policy/internal.h"

#include "core/err.h"

#include <string.h>

/* ---- error reporting ---- */

/* Message handler: adds a traceback. */
int halo_policy_msgh(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* " (hook cache_batch, rank 3, epoch 2, batch 17)" for the current call. */
void halo_policy_moment(const halo_policy *p, char *buf, size_t size, bool with_hook)
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
int halo_policy_report(halo_policy *p, int status)
{
    lua_State *L = p->L;
    const char *msg = lua_tostring(L, -1);
    char head[600], tail[400] = "", when[160];
    halo_policy_moment(p, when, sizeof when, true);
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

/* Runs the C function fn with nargs arguments (already pushed after it) in protected mode; a
 * Lua error becomes "FILE:LINE: hook NAME: <message> (moment)". Leaves nres results. */
int halo_policy_protected_check(halo_policy *p, int hook, int nargs, int nres)
{
    lua_State *L = p->L;
    p->mem_refused = false;
    int status = lua_pcall(L, nargs, nres, 0);
    if (status == LUA_OK) {
        return 0;
    }
    if (status == LUA_ERRMEM) {
        return halo_policy_report(p, status);
    }
    char when[160];
    halo_policy_moment(p, when, sizeof when, false);
    const char *msg = lua_tostring(L, -1);
    int rc;
    if (hook < 0) {
        rc = halo_errorf(HALO_ELUA, "%s: %s", p->path[0] ? p->path : "policy", msg ? msg : "error");
    } else {
        rc = halo_errorf(HALO_ELUA, "%s:%d: hook %s: %s%s", p->path, p->hook_line[hook],
                         halo_policy_hook_name(hook), msg ? msg : "error", when);
    }
    lua_pop(L, 1);
    return rc;
}
