/* Policy engine, errors: the traceback handler, the one place that turns a Lua error into
 * halo's message (with the moment of the call), and the cleaning of untrusted text: everything
 * a policy produces (error messages, log lines, names, parameter values) goes through
 * halo_policy_clean_text before halo prints it, so a policy cannot forge a line of halo's own
 * ("\nhalo: error: rank 3: ...") or send escape sequences to the terminal. */
#include "policy/internal.h"

#include "core/err.h"

#include <stdio.h>
#include <string.h>

/* ---- untrusted text ---- */

/* Length of the valid UTF-8 sequence at s (at most n bytes) that is not a C1 control
 * (U+0080..U+009F), or 0. */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (len == 0 || len > n || s[0] > 0xF4 || s[0] == 0xC0 || s[0] == 0xC1) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
    }
    if ((s[0] == 0xC2 && s[1] < 0xA0) ||  /* C1 controls */
        (s[0] == 0xE0 && s[1] < 0xA0) ||  /* overlong */
        (s[0] == 0xF0 && s[1] < 0x90) ||  /* overlong */
        (s[0] == 0xF4 && s[1] >= 0x90) || /* beyond U+10FFFF */
        (s[0] == 0xED && s[1] >= 0xA0)) { /* surrogates */
        return 0;
    }
    return len;
}

size_t halo_policy_clean_text(char *dst, size_t size, const char *src, size_t n)
{
    if (size == 0) {
        return 0;
    }
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)src;
    for (size_t i = 0; i < n;) {
        char esc[8];
        const char *add;
        size_t len;
        unsigned c = s[i];
        size_t u = c >= 0x80 ? utf8_ok(s + i, n - i) : 0;
        if (c >= 0x20 && c < 0x7F) {
            add = (const char *)s + i;
            len = 1;
        } else if (u > 0) {
            add = (const char *)s + i;
            len = u;
        } else {
            len = (size_t)snprintf(esc, sizeof esc,
                                   c == '\n'   ? "\\n"
                                   : c == '\t' ? "\\t"
                                   : c == '\r' ? "\\r"
                                               : "\\x%02x",
                                   c);
            add = esc;
        }
        if (o + len >= size) {
            break; /* truncated on a whole character or escape */
        }
        memcpy(dst + o, add, len);
        o += len;
        i += u > 0 ? u : 1;
    }
    dst[o] = '\0';
    return o;
}

/* ---- error reporting ---- */

/* Whether msg starts with a place, "FILE:LINE: " (Lua's own prefix, for any chunk name). */
static bool names_a_place(const char *msg)
{
    const char *c = msg;
    while (*c && *c != ' ' && *c != '\n') {
        if (c > msg && c[0] == ':' && c[1] >= '0' && c[1] <= '9') {
            const char *d = c + 1;
            while (*d >= '0' && *d <= '9') {
                d++;
            }
            if (d[0] == ':' && d[1] == ' ') {
                return true;
            }
        }
        c++;
    }
    return false;
}

/* Message handler: the error as one string that names its place. A string or number is taken
 * as it is; any other value (nil, a table, an object whose __tostring might loop or recurse) is
 * named by its type and never converted, so the handler cannot fail or run policy code. When
 * the text names no place, the innermost frame of a Lua file (the error call's line) is put in
 * front, so every message names the policy file, or the module's, and the line. */
int halo_policy_msgh(lua_State *L)
{
    int t = lua_type(L, 1);
    const char *msg = t == LUA_TSTRING || t == LUA_TNUMBER
                          ? lua_tostring(L, 1)
                          : lua_pushfstring(L, "error object is a %s value, not a string",
                                            luaL_typename(L, 1));
    if (names_a_place(msg)) {
        lua_pushstring(L, msg);
        return 1;
    }
    lua_Debug ar;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 && ar.source[0] == '@') {
            lua_pushfstring(L, "%s:%d: %s", ar.source + 1, ar.currentline, msg);
            return 1;
        }
    }
    lua_pushstring(L, msg);
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

/* Sets the halo error from the Lua error at the top of the stack: one line, its place (the
 * policy file when the text names none), the text cleaned, and the moment. */
int halo_policy_report(halo_policy *p, int status)
{
    lua_State *L = p->L;
    size_t ml = 0;
    const char *msg = lua_tolstring(L, -1, &ml);
    char head[1000], when[160];
    halo_policy_moment(p, when, sizeof when, true);
    if (p->timed_out && (msg == NULL || strstr(msg, "wall-clock limit") == NULL)) {
        /* refused by the allocator (or swallowed and replaced): name the line and the limit */
        char t[96];
        snprintf(head, sizeof head, "%.400s: %s",
                 p->mem_where[0] ? p->mem_where
                 : p->path[0]    ? p->path
                                 : "policy",
                 halo_policy_time_text(p, t, sizeof t));
        msg = NULL;
    } else if (status == LUA_ERRMEM || (p->mem_refused && (msg == NULL || status == LUA_ERRERR ||
                                                           strstr(msg, "not enough memory")))) {
        snprintf(head, sizeof head, "%.400s: memory limit of %zu MiB exceeded",
                 p->mem_where[0] ? p->mem_where
                 : p->path[0]    ? p->path
                                 : "policy",
                 p->mem_limit >> 20);
        msg = NULL;
    } else {
        /* one line: a multi-line message keeps its breaks as \n; text that names no place
         * (an error in the handler itself, LUA_ERRERR) gets the policy file in front */
        const char *where = msg != NULL && names_a_place(msg) ? ""
                            : p->path[0]                     ? p->path
                                                             : "policy";
        static const char not_text[] = "error object is not a string";
        char text[560];
        halo_policy_clean_text(text, sizeof text, msg != NULL ? msg : not_text,
                               msg != NULL ? ml : sizeof not_text - 1);
        snprintf(head, sizeof head, "%.400s%s%s", where, where[0] ? ": " : "", text);
    }
    lua_pop(L, 1);
    return halo_errorf(HALO_ELUA, "%s%s", head, when);
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
    size_t ml = 0;
    const char *raw = lua_tolstring(L, -1, &ml);
    char msg[600];
    halo_policy_clean_text(msg, sizeof msg, raw ? raw : "error", raw ? ml : 5);
    int rc;
    if (hook < 0) {
        rc = halo_errorf(HALO_ELUA, "%s: %s", p->path[0] ? p->path : "policy", msg);
    } else {
        rc = halo_errorf(HALO_ELUA, "%s:%d: hook %s: %s%s", p->path, p->hook_line[hook],
                         halo_policy_hook_name(hook), msg, when);
    }
    lua_pop(L, 1);
    return rc;
}
