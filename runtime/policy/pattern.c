/* The sandbox's string.find, string.match, string.gmatch and string.gsub: Lua 5.4's pattern
 * language (the same results), matched by a backtracking matcher that counts its steps and pays
 * for them as it goes (halo_policy_spend), so a pattern that backtracks for ever on a long
 * subject, or a loop of plain finds over a big string, ends with the instruction budget or the
 * wall-clock limit instead of hanging the process. Lua's own functions run to completion inside
 * one C call, which the count hook never interrupts.
 *
 * The matcher: match(s, p) tries pattern p at subject position s and returns the end of the
 * match or NULL; single items, captures, anchors, %b, %f and back-references are handled in a
 * loop, and the quantified items (*, +, -, ?) recurse on the rest of the pattern. Recursion is
 * bounded (MATCH_DEPTH, "pattern too complex"), as in Lua. */
#include "policy/internal.h"

#include <ctype.h>
#include <string.h>

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
/* Captures per pattern (Lua's LUA_MAXCAPTURES). */
#define MAX_CAPTURES 32
/* Deepest recursion of the matcher (Lua's MAXCCALLS). */
#define MATCH_DEPTH 200
/* Steps between two payments (each step costs one instruction). */
#define PAY_EVERY 4096

enum { CAP_UNFINISHED = -1, CAP_POSITION = -2 };

typedef struct matcher {
    lua_State *L;
    const char *src;     /* subject */
    const char *src_end; /* its end */
    const char *pat_end; /* pattern end */
    int depth;           /* recursion left */
    int level;           /* captures open or closed so far */
    int64_t steps;       /* steps not yet paid */
    struct {
        const char *init;
        ptrdiff_t len; /* length, or CAP_UNFINISHED / CAP_POSITION */
    } cap[MAX_CAPTURES];
} matcher;

/* Counts one step of work; pays every PAY_EVERY steps (a Lua error when the call is spent). */
static inline void step(matcher *m, int64_t n)
{
    m->steps += n;
    if (m->steps >= PAY_EVERY) {
        int64_t s = m->steps;
        m->steps = 0;
        halo_policy_spend(m->L, s);
    }
}

/* Pays what is left at the end of a call (at least one instruction per call). */
static void settle(matcher *m)
{
    int64_t s = m->steps;
    m->steps = 0;
    halo_policy_spend(m->L, s + 1);
}

static const char *match(matcher *m, const char *s, const char *p);

/* End of the single-character class starting at p. */
static const char *class_end(matcher *m, const char *p)
{
    if (*p++ == ESC) {
        if (p >= m->pat_end) {
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        }
        return p + 1;
    }
    if (p[-1] == '[') {
        if (*p == '^') {
            p++;
        }
        do { /* the first character is part of the set even when it is ']' */
            if (p >= m->pat_end) {
                luaL_error(m->L, "malformed pattern (missing ']')");
            }
            step(m, 1);
            if (*(p++) == ESC && p < m->pat_end) {
                p++;
            }
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Whether c belongs to class %cl (an upper-case letter is the complement). */
static bool in_class(int c, int cl)
{
    bool r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    case 'z': r = c == 0; break; /* deprecated in Lua, still accepted */
    default: return cl == c;
    }
    return isupper(cl) ? !r : r;
}

/* Whether c is in the set [...] from p (at '[') to ec (at ']'). */
static bool in_set(matcher *m, int c, const char *p, const char *ec)
{
    bool yes = true;
    if (p[1] == '^') {
        yes = false;
        p++;
    }
    while (++p < ec) {
        step(m, 1);
        if (*p == ESC) {
            p++;
            if (in_class(c, (unsigned char)*p)) {
                return yes;
            }
        } else if (p[1] == '-' && p + 2 < ec) {
            p += 2;
            if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p) {
                return yes;
            }
        } else if ((unsigned char)*p == c) {
            return yes;
        }
    }
    return !yes;
}

/* Whether the subject character at s matches the single item p..ep. */
static bool single(matcher *m, const char *s, const char *p, const char *ep)
{
    step(m, 1);
    if (s >= m->src_end) {
        return false;
    }
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return true;
    case ESC: return in_class(c, (unsigned char)p[1]);
    case '[': return in_set(m, c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* %bxy at s: the end of the balanced run, or NULL. */
static const char *balance(matcher *m, const char *s, const char *p)
{
    if (p >= m->pat_end - 1) {
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    }
    if (s >= m->src_end || *s != *p) {
        return NULL;
    }
    char open = p[0], close = p[1];
    int depth = 1;
    while (++s < m->src_end) {
        step(m, 1);
        if (*s == close) {
            if (--depth == 0) {
                return s + 1;
            }
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

/* The longest run of item p..ep from s, then backs off until the rest matches. */
static const char *greedy(matcher *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (single(m, s + i, p, ep)) {
        i++;
    }
    for (; i >= 0; i--) {
        const char *r = match(m, s + i, ep + 1);
        if (r != NULL) {
            return r;
        }
    }
    return NULL;
}

/* The shortest run of item p..ep from s after which the rest matches. */
static const char *lazy(matcher *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = match(m, s, ep + 1);
        if (r != NULL) {
            return r;
        }
        if (!single(m, s, p, ep)) {
            return NULL;
        }
        s++;
    }
}

static const char *open_capture(matcher *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->level >= MAX_CAPTURES) {
        luaL_error(m->L, "too many captures");
    }
    m->cap[m->level].init = s;
    m->cap[m->level].len = what;
    m->level++;
    const char *r = match(m, s, p);
    if (r == NULL) {
        m->level--;
    }
    return r;
}

static const char *close_capture(matcher *m, const char *s, const char *p)
{
    int l = m->level - 1;
    while (l >= 0 && m->cap[l].len != CAP_UNFINISHED) {
        l--;
    }
    if (l < 0) {
        luaL_error(m->L, "invalid pattern capture");
    }
    m->cap[l].len = s - m->cap[l].init;
    const char *r = match(m, s, p);
    if (r == NULL) {
        m->cap[l].len = CAP_UNFINISHED;
    }
    return r;
}

/* %1..%9 at s: the end of a copy of that capture, or NULL. */
static const char *back_reference(matcher *m, const char *s, int digit)
{
    int l = digit - '1';
    if (l < 0 || l >= m->level || m->cap[l].len == CAP_UNFINISHED) {
        luaL_error(m->L, "invalid capture index %%%d", l + 1);
    }
    ptrdiff_t len = m->cap[l].len;
    if (len < 0) {
        return NULL; /* a position capture matches nothing */
    }
    step(m, 1 + len / 16);
    if (m->src_end - s >= len && memcmp(m->cap[l].init, s, (size_t)len) == 0) {
        return s + len;
    }
    return NULL;
}

static const char *match(matcher *m, const char *s, const char *p)
{
    if (m->depth-- == 0) {
        luaL_error(m->L, "pattern too complex");
    }
    for (;;) {
        step(m, 1);
        if (p == m->pat_end) {
            break;
        }
        if (*p == '(') {
            s = p[1] == ')' ? open_capture(m, s, p + 2, CAP_POSITION)
                            : open_capture(m, s, p + 1, CAP_UNFINISHED);
            break;
        }
        if (*p == ')') {
            s = close_capture(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->pat_end) {
            s = s == m->src_end ? s : NULL;
            break;
        }
        if (*p == ESC && p[1] == 'b') {
            s = balance(m, s, p + 2);
            if (s != NULL) {
                p += 4;
                continue;
            }
            break;
        }
        if (*p == ESC && p[1] == 'f') {
            p += 2;
            if (*p != '[') {
                luaL_error(m->L, "missing '[' after '%%f' in pattern");
            }
            const char *ep = class_end(m, p);
            int prev = s == m->src ? '\0' : (unsigned char)s[-1];
            int cur = s < m->src_end ? (unsigned char)*s : '\0';
            if (!in_set(m, prev, p, ep - 1) && in_set(m, cur, p, ep - 1)) {
                p = ep;
                continue;
            }
            s = NULL;
            break;
        }
        if (*p == ESC && isdigit((unsigned char)p[1])) {
            s = back_reference(m, s, (unsigned char)p[1]);
            if (s != NULL) {
                p += 2;
                continue;
            }
            break;
        }
        /* a single item, maybe quantified */
        const char *ep = class_end(m, p);
        if (!single(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') { /* zero repetitions are fine */
                p = ep + 1;
                continue;
            }
            s = NULL;
            break;
        }
        if (*ep == '?') {
            const char *r = match(m, s + 1, ep + 1);
            if (r != NULL) {
                s = r;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (*ep == '+') {
            s = greedy(m, s + 1, p, ep);
            break;
        }
        if (*ep == '*') {
            s = greedy(m, s, p, ep);
            break;
        }
        if (*ep == '-') {
            s = lazy(m, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    m->depth++;
    return s;
}

/* ---- captures ---- */

/* Pushes capture i (the whole match s..e when the pattern has none and i is 0). */
static void push_capture(matcher *m, int i, const char *s, const char *e)
{
    if (i >= m->level) {
        if (i != 0) {
            luaL_error(m->L, "invalid capture index %%%d", i + 1);
        }
        lua_pushlstring(m->L, s, (size_t)(e - s));
        return;
    }
    ptrdiff_t l = m->cap[i].len;
    if (l == CAP_UNFINISHED) {
        luaL_error(m->L, "unfinished capture");
    }
    if (l == CAP_POSITION) {
        lua_pushinteger(m->L, (m->cap[i].init - m->src) + 1);
    } else {
        lua_pushlstring(m->L, m->cap[i].init, (size_t)l);
    }
}

/* Pushes every capture (or the whole match when s is not NULL and there are none). */
static int push_captures(matcher *m, const char *s, const char *e)
{
    int n = m->level == 0 && s != NULL ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) {
        push_capture(m, i, s, e);
    }
    return n;
}

static void init_matcher(matcher *m, lua_State *L, const char *s, size_t ls, const char *p,
                         size_t lp)
{
    m->L = L;
    m->src = s;
    m->src_end = s + ls;
    m->pat_end = p + lp;
    m->depth = MATCH_DEPTH;
    m->level = 0;
    m->steps = 0;
}

/* Before each attempt at a new subject position. */
static void restart(matcher *m)
{
    m->level = 0;
    m->depth = MATCH_DEPTH;
}

/* Lua's 1-based start position (negative from the end) into [1, len + 1]-ish. */
static size_t start_pos(lua_Integer pos, size_t len)
{
    if (pos > 0) {
        return (size_t)pos;
    }
    if (pos == 0) {
        return 1;
    }
    if (pos < -(lua_Integer)len) {
        return 1;
    }
    return len + (size_t)pos + 1;
}

/* Whether the pattern has no special characters (find may then search plainly). */
static bool plain_pattern(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++) {
        if (p[i] != '\0' && strchr(SPECIALS, p[i]) != NULL) {
            return false;
        }
    }
    return true;
}

/* Plain search of needle in hay, paying for the bytes it looks at. */
static const char *find_plain(matcher *m, const char *hay, size_t lh, const char *needle, size_t ln)
{
    if (ln == 0) {
        return hay;
    }
    if (ln > lh) {
        return NULL;
    }
    const char *end = hay + (lh - ln) + 1; /* last start + 1 */
    const char *s = hay;
    while (s < end) {
        const char *c = memchr(s, needle[0], (size_t)(end - s));
        if (c == NULL) {
            step(m, 1 + (end - s) / 16);
            return NULL;
        }
        step(m, 1 + (c - s) / 16 + (ptrdiff_t)(ln / 16));
        if (memcmp(c + 1, needle + 1, ln - 1) == 0) {
            return c;
        }
        s = c + 1;
    }
    return NULL;
}

/* ---- the library functions ---- */

static int find_or_match(lua_State *L, bool find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_pos(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    matcher m;
    init_matcher(&m, L, s, ls, p, lp);
    if (find && (lua_toboolean(L, 4) || plain_pattern(p, lp))) {
        const char *r = find_plain(&m, s + init, ls - init, p, lp);
        settle(&m);
        if (r == NULL) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (r - s) + 1);
        lua_pushinteger(L, (lua_Integer)((size_t)(r - s) + lp));
        return 2;
    }
    bool anchor = lp > 0 && *p == '^';
    if (anchor) {
        p++;
        lp--;
        m.pat_end = p + lp;
    }
    const char *s1 = s + init;
    do {
        restart(&m);
        const char *e = match(&m, s1, p);
        if (e != NULL) {
            settle(&m);
            if (find) {
                lua_pushinteger(L, (s1 - s) + 1);
                lua_pushinteger(L, e - s);
                return push_captures(&m, NULL, NULL) + 2;
            }
            return push_captures(&m, s1, e);
        }
    } while (s1++ < m.src_end && !anchor);
    settle(&m);
    luaL_pushfail(L);
    return 1;
}

static int l_find(lua_State *L)
{
    return find_or_match(L, true);
}

static int l_match(lua_State *L)
{
    return find_or_match(L, false);
}

/* The state of one gmatch iterator (upvalue 3; the subject and pattern are upvalues 1, 2). */
typedef struct gmatch_state {
    const char *at;   /* next position to try */
    const char *last; /* end of the last match (an empty match there is skipped) */
    matcher m;
} gmatch_state;

static int gmatch_next(lua_State *L)
{
    gmatch_state *g = lua_touserdata(L, lua_upvalueindex(3));
    const char *p = lua_tostring(L, lua_upvalueindex(2));
    g->m.L = L; /* the iterator may run in another coroutine than the one that made it */
    for (const char *s = g->at; s <= g->m.src_end; s++) {
        restart(&g->m);
        const char *e = match(&g->m, s, p);
        if (e != NULL && e != g->last) {
            g->at = g->last = e;
            settle(&g->m);
            return push_captures(&g->m, s, e);
        }
    }
    g->at = g->m.src_end + 1; /* exhausted: later calls return nothing at once */
    settle(&g->m);
    return 0;
}

static int l_gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_pos(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        init = ls + 1;
    }
    lua_settop(L, 2);
    gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    init_matcher(&g->m, L, s, ls, p, lp);
    g->at = s + init;
    g->last = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* Appends the replacement string (argument 3) for the match s..e, expanding %0..%9 and %%. */
static void add_string(matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    size_t l;
    const char *r = lua_tolstring(L, 3, &l);
    const char *end = r + l;
    step(m, 1 + (ptrdiff_t)(l / 16));
    const char *pct;
    while ((pct = memchr(r, ESC, (size_t)(end - r))) != NULL) {
        luaL_addlstring(b, r, (size_t)(pct - r));
        pct++;
        if (pct >= end) {
            luaL_error(L, "invalid use of '%c' in replacement string", ESC);
        }
        if (*pct == ESC) {
            luaL_addchar(b, *pct);
        } else if (*pct == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
            step(m, (e - s) / 16);
        } else if (isdigit((unsigned char)*pct)) {
            push_capture(m, *pct - '1', s, e);
            luaL_tolstring(L, -1, NULL);
            lua_remove(L, -2);
            step(m, (ptrdiff_t)(lua_rawlen(L, -1) / 16));
            luaL_addvalue(b);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESC);
        }
        r = pct + 1;
    }
    luaL_addlstring(b, r, (size_t)(end - r));
}

/* Appends the replacement of the match s..e; false when the original text was kept. */
static bool add_value(matcher *m, luaL_Buffer *b, const char *s, const char *e, int tr)
{
    lua_State *L = m->L;
    if (tr == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (tr == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_string(m, b, s, e);
        return true;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return false;
    }
    if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    step(m, (ptrdiff_t)(lua_rawlen(L, -1) / 16));
    luaL_addvalue(b);
    return true;
}

static int l_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *last = NULL;
    int tr = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(
        L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
        "string/function/table");
    bool anchor = lp > 0 && *p == '^';
    if (anchor) {
        p++;
        lp--;
    }
    matcher m;
    init_matcher(&m, L, src, ls, p, lp);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_Integer n = 0;
    bool changed = false;
    while (n < max) {
        restart(&m);
        const char *e = match(&m, src, p);
        if (e != NULL && e != last) {
            n++;
            changed = add_value(&m, &b, src, e, tr) || changed;
            src = last = e;
        } else if (src < m.src_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor) {
            break;
        }
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.src_end - src));
        step(&m, (m.src_end - src) / 16);
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    settle(&m);
    return 2;
}

void halo_policy_open_patterns(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"find", l_find}, {"match", l_match}, {"gmatch", l_gmatch}, {"gsub", l_gsub}, {NULL, NULL},
    };
    luaL_setfuncs(L, fns, 0);
}
