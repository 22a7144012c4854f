/* Unit tests of the policy engine's limits and of untrusted text:
 *  - the sandbox's pattern functions (policy/pattern.c) give exactly what Lua's own give, on a
 *    corpus of cases run in a stock Lua state and in a policy state side by side (results and
 *    error messages);
 *  - the wall-clock limit stops a call that the instruction budget would not, with a line
 *    naming the hook and the limit, through the count hook and through the allocator;
 *    HALO_POLICY_SECONDS is read and checked;
 *  - text a policy produces is cleaned (halo_policy_clean_text) in errors, names and params. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "policy/internal.h"

#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The cases: each line of the result is "case N: ok|<values>" or "case N: error|<message>". The
 * serializer itself uses no pattern function, so both states format alike. */
static const char *const cases_src =
    "local F, M, G, S = string.find, string.match, string.gmatch, string.gsub\n"
    "local out = {}\n"
    "local function ser(t, n)\n"
    "  local r = {}\n"
    "  for i = 1, n do\n"
    "    local v = t[i]\n"
    "    r[#r + 1] = type(v) == 'string' and string.format('%q', v) or tostring(v)\n"
    "  end\n"
    "  return table.concat(r, ',')\n"
    "end\n"
    "local function case(f, ...)\n"
    "  local r = table.pack(pcall(f, ...))\n"
    "  local line\n"
    "  if r[1] then\n"
    "    line = 'ok|' .. ser({table.unpack(r, 2, r.n)}, r.n - 1)\n"
    "  else\n"
    "    line = 'error|' .. tostring(r[2])\n"
    "  end\n"
    "  out[#out + 1] = 'case ' .. #out + 1 .. ': ' .. line\n"
    "end\n"
    "local function all(s, p, init)\n"
    "  return function()\n"
    "    local t, n = {}, 0\n"
    "    for a, b, c in G(s, p, init) do\n"
    "      n = n + 1; t[n] = ser({a, b, c}, 3)\n"
    "      if n > 50 then break end\n"
    "    end\n"
    "    return table.concat(t, ';')\n"
    "  end\n"
    "end\n"
    "local subjects = {'', 'hello world', 'aaab', 'THE (quick) fox', 'f(a(b)c)d', 'x=1, y=2',\n"
    "  '  trim me  ', 'a.b-c', 'a\\0b', 'h\\195\\169llo', 'key = value', ']', '^x$', 'abcabc'}\n"
    "local patterns = {'', 'o', 'l+', '^h', '^e', 'd$', 'o w', '.', '%.', '%a+', '%A+', '%d+',\n"
    "  '%s*()', '(%w+)=(%w+)', '%((%a+)%)', '%b()', '%f[%a]%a+', '%f[%A]', '(l)(l)', 'a-b',\n"
    "  'a*', 'a?b', '.-b', '[]]', '[^]]', '[a%-z]+', '[a-c]+', '[^%a]+', '[%w_]+', "
    "'^%s*(.-)%s*$',\n"
    "  '^(%w+)%s*=%s*(%w+)$', '()', '()(.)()', '(abc)%1', '(a*(.)%w(%s*))', '%z', '\\0', "
    "'[\\128-\\255]+',\n"
    "  'x$$', '^^x', 'a$b', '[b-]', '%u%l*', '%p', '%c', '%x+', '%g+', '%S+', '%W', '%D', '%bxy',\n"
    "  '[', '[a', '%', '(()', ')', '%1', '(a)%2', '%b', '%f', '%fx', '(', 'a**', '[%', '[a-%%]'}\n"
    "for _, s in ipairs(subjects) do\n"
    "  for _, p in ipairs(patterns) do\n"
    "    case(F, s, p)\n"
    "    case(M, s, p)\n"
    "    case(all(s, p))\n"
    "    case(S, s, p, '<%0>')\n"
    "  end\n"
    "  for _, init in ipairs({-100, -3, -1, 0, 1, 2, 5, 100}) do\n"
    "    case(F, s, 'l', init)\n"
    "    case(F, s, '', init)\n"
    "    case(F, s, 'o w', init, true)\n"
    "    case(M, s, '(.)', init)\n"
    "    case(all(s, '.', init))\n"
    "  end\n"
    "end\n"
    "case(F, 'a.b', '.', 1, true)\n"
    "case(F, 'a+b', '+', 1, true)\n"
    "case(F, 'abc', 'abcd', 1, true)\n"
    "case(F, 'abc', '', 10)\n"
    "case(F, 'abc', '', 4)\n"
    "case(F, 12345, 34)\n"
    "case(F, nil, 'x')\n"
    "case(F, 'x', {})\n"
    "case(M, string.rep('a', 300), string.rep('a?', 300))\n"
    "case(M, 'x', string.rep('()', 33))\n"
    "case(M, 'x', string.rep('()', 32))\n"
    "case(S, 'hello world', 'o', '0')\n"
    "case(S, 'hello', '', '-')\n"
    "case(S, 'hello world', '(%w+)', '<%1>')\n"
    "case(S, 'hello world', '%w+', '%0 %0', 1)\n"
    "case(S, 'abc', '%w', '%%')\n"
    "case(S, 'abc', '%w', '%2')\n"
    "case(S, 'abc', '%w', '%')\n"
    "case(S, 'abc', '%w', '%x')\n"
    "case(S, 'abc', '%w', {a = '1', b = true})\n"
    "case(S, 'abc', '%w', {a = '1', c = false})\n"
    "case(S, 'abc', '%w', {a = 7})\n"
    "case(S, 'abc', '%w', function(c) return c:upper() end)\n"
    "case(S, 'abc', '(%w)(%w)', function(a, b) return b .. a end)\n"
    "case(S, 'abc', '%w', function() return nil end)\n"
    "case(S, 'abc', '%w', function() return {} end)\n"
    "case(S, 'abc', '(%w)', 5)\n"
    "case(S, 'hello world', '^h', 'H')\n"
    "case(S, 'abc', '()', '%1')\n"
    "case(S, 'abc', 'b*', '-')\n"
    "case(S, 'abc', '.', '%0%0', 0)\n"
    "case(S, 'abc', '.', 'x', -1)\n"
    "case(S, 'abc', '.', 'x', 2.0)\n"
    "case(S, 'abc', '.', 'x', 2.5)\n"
    "case(S, 'abc', '.', true)\n"
    "case(S, 'abc', '')\n"
    "case(S, 'a,b,,c', ',', ';')\n"
    "case(S, 'abc', '(b)', '%1%1', 1)\n"
    "local seed = 12345\n"
    "local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 "
    "end\n"
    "local pal, sal = 'ab.%()[]^$*+-?fz1', 'aab(b)]-^$.%'\n"
    "for _ = 1, 3000 do\n"
    "  local p, s = {}, {}\n"
    "  for i = 1, rnd(7) do local k = rnd(#pal); p[i] = pal:sub(k, k) end\n"
    "  for i = 1, rnd(9) - 1 do local k = rnd(#sal); s[i] = sal:sub(k, k) end\n"
    "  p, s = table.concat(p), table.concat(s)\n"
    "  case(F, s, p); case(M, s, p); case(all(s, p)); case(S, s, p, '%0|')\n"
    "end\n"
    "local it = G('a1b2', '%a(%d)')\n"
    "case(it); case(it); case(it); case(it)\n"
    "case(function() return ('hello'):find('l') end)\n"
    "case(function() return ('x y z'):gsub('%s', '') end)\n"
    "return table.concat(out, '\\n'), #out\n";

/* Runs the cases in L; returns a copy of the results (one line per case) and their count. */
static char *run_cases(lua_State *L, int *n)
{
    assert_int_equal(luaL_loadstring(L, cases_src), LUA_OK);
    int st = lua_pcall(L, 0, 2, 0);
    if (st != LUA_OK) {
        fail_msg("cases: %s", lua_tostring(L, -1));
    }
    *n = (int)lua_tointeger(L, -1);
    char *r = strdup(lua_tostring(L, -2));
    lua_pop(L, 2);
    return r;
}

static void patterns_match_lua(void **state)
{
    (void)state;
    lua_State *S = luaL_newstate();
    luaL_openlibs(S);
    int ns = 0, np = 0;
    char *want = run_cases(S, &ns);
    lua_close(S);

    halo_policy *p;
    halo_policy_opts o = {.rank = -1};
    assert_int_equal(halo_policy_open(&o, &p), 0);
    halo_policy_arm(p); /* the matcher pays as in a hook call */
    char *got = run_cases(p->L, &np);
    halo_policy_disarm(p);
    halo_policy_close(p);

    print_message("# %d pattern cases\n", ns);
    assert_true(ns > 15000);
    assert_int_equal(ns, np);
    char *ws = want, *gs = got;
    for (int i = 0; i < ns; i++) {
        char *we = strchr(ws, '\n'), *ge = strchr(gs, '\n');
        if (we) {
            *we = '\0';
        }
        if (ge) {
            *ge = '\0';
        }
        if (strcmp(ws, gs) != 0) {
            fail_msg("Lua: %s\nhalo: %s", ws, gs);
        }
        ws = we ? we + 1 : ws + strlen(ws);
        gs = ge ? ge + 1 : gs + strlen(gs);
    }
    free(want);
    free(got);
}

/* Writes src to a temporary policy file and opens it with the given limits. */
static int open_src(const char *src, int64_t budget, double seconds, halo_policy **p)
{
    const char *dir = getenv("HALO_TEST_TMP");
    static char path[512];
    snprintf(path, sizeof path, "%s/limits_%d.lua", dir ? dir : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(src, f);
    fclose(f);
    halo_policy_opts o = {.path = path, .rank = 2, .budget = budget, .time_limit = seconds};
    return halo_policy_open(&o, p);
}

static int call_fanout(halo_policy *p)
{
    halo_policy_ctx c;
    memset(&c, 0, sizeof c);
    c.rank = 2;
    c.ranks = 4;
    c.epoch = 1;
    c.batch = -1;
    int f[HALO_POLICY_MAX_LAYERS], layers = 0;
    return halo_policy_fanout(p, &c, f, HALO_POLICY_MAX_LAYERS, &layers);
}

/* halo_policy_work adds up the work the budget charged over the calls (what the simulator
 * prices): a hook that loops 20,000 times is charged in proportion, twice as much for twice
 * the calls, and far more than a hook that returns at once. */
static void work_is_counted_over_calls(void **state)
{
    (void)state;
    halo_policy *p, *q;
    assert_int_equal(open_src("local n = 0\n"
                              "return { fanout = function(ctx)\n"
                              "  for i = 1, 20000 do n = n + i % 7 end return {5, 5} end }\n",
                              0, 0, &p), 0);
    int64_t loaded = halo_policy_work(p); /* the file's own chunk ran budgeted too */
    assert_int_equal(call_fanout(p), 0);
    int64_t one = halo_policy_work(p) - loaded;
    print_message("# one call of the loop: %lld units\n", (long long)one);
    assert_true(one >= 60000 && one <= 400000); /* 20,000 iterations of a few instructions */
    assert_int_equal(call_fanout(p), 0);
    assert_int_equal(halo_policy_work(p) - loaded, 2 * one);
    assert_int_equal(open_src("return { fanout = function(ctx) return {5, 5} end }\n", 0, 0, &q),
                     0);
    int64_t q0 = halo_policy_work(q);
    assert_int_equal(call_fanout(q), 0);
    assert_true(halo_policy_work(q) - q0 < one / 50);
    halo_policy_close(q);
    halo_policy_close(p);
}

/* A loop the budget would let run for hours is stopped by the clock: in the count hook (plain
 * Lua), through the allocator (one instruction copying a big string), and through a payment
 * (a C function called in a loop). pcall cannot swallow it. */
static void wall_clock_limit_stops_a_call(void **state)
{
    (void)state;
    const char *const srcs[] = {
        "return { fanout = function(ctx) while true do end end }\n",
        "return { fanout = function(ctx) local s = string.rep('x', 1 << 24)\n"
        "  while true do pcall(function() local t = s .. 'y' end) end end }\n",
        "return { fanout = function(ctx) local s = string.rep('a', 1 << 20)\n"
        "  while true do pcall(string.find, s, 'b', 1, true) end end }\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        halo_policy *p;
        assert_int_equal(open_src(srcs[i], INT64_MAX / 2, 0.3, &p), 0);
        assert_true(halo_policy_time_limit(p) == 0.3);
        assert_int_equal(call_fanout(p), HALO_ELUA);
        const char *msg = halo_errmsg();
        print_message("# %zu: %.*s\n", i, (int)strcspn(msg, "\n"), msg);
        assert_non_null(strstr(msg, "wall-clock limit of 0.3 s per call exceeded"));
        assert_non_null(strstr(msg, "(hook fanout, rank 2, epoch 1)"));
        assert_non_null(strstr(msg, "limits_"));
        /* the state still answers, with a fresh deadline per call */
        halo_policy_set_time_limit(p, 30);
        halo_policy_set_limits(p, 1000, 0);
        assert_int_equal(call_fanout(p), HALO_ELUA);
        assert_non_null(strstr(halo_errmsg(), "instruction budget of 1000 exceeded"));
        halo_policy_close(p);
    }
}

static void time_limit_from_the_environment(void **state)
{
    (void)state;
    const char *src = "return { fanout = function(ctx) return { 3 } end }\n";
    halo_policy *p;
    setenv("HALO_POLICY_SECONDS", "2.5", 1);
    assert_int_equal(open_src(src, 0, 0, &p), 0);
    assert_true(halo_policy_time_limit(p) == 2.5);
    halo_policy_close(p);
    assert_int_equal(open_src(src, 0, 7, &p), 0); /* the option wins */
    assert_true(halo_policy_time_limit(p) == 7);
    halo_policy_close(p);
    const char *const bad[] = {"abc", "0", "-1", "1e9", "5s", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("HALO_POLICY_SECONDS", bad[i], 1);
        assert_int_equal(open_src(src, 0, 0, &p), HALO_EUSAGE);
        assert_non_null(strstr(halo_errmsg(), "HALO_POLICY_SECONDS"));
    }
    unsetenv("HALO_POLICY_SECONDS");
    assert_int_equal(open_src(src, 0, 0, &p), 0);
    assert_true(halo_policy_time_limit(p) == HALO_POLICY_DEFAULT_SECONDS);
    halo_policy_close(p);
}

static void clean_text_escapes_controls(void **state)
{
    (void)state;
    char out[128];
    const char *forged = "\nhalo: error: rank 3: fake\x1b[2J";
    halo_policy_clean_text(out, sizeof out, forged, strlen(forged));
    assert_string_equal(out, "\\nhalo: error: rank 3: fake\\x1b[2J");
    const char *mixed = "t\tr\r\x7f\xc3\xa9\xc2\x9b\xff\xe2\x82\xac\xed\xa0\x80";
    halo_policy_clean_text(out, sizeof out, mixed, strlen(mixed));
    assert_string_equal(out, "t\\tr\\r\\x7f\xc3\xa9\\xc2\\x9b\\xff\xe2\x82\xac\\xed\\xa0\\x80");
    halo_policy_clean_text(out, sizeof out, "a\0b", 3); /* embedded NUL */
    assert_string_equal(out, "a\\x00b");
    assert_int_equal(halo_policy_clean_text(out, 5, "ab\ncd", 5), 4);
    assert_string_equal(out, "ab\\n");
    assert_int_equal(halo_policy_clean_text(out, 4, "ab\ncd", 5), 2); /* whole escapes only */
    assert_string_equal(out, "ab");
    assert_int_equal(halo_policy_clean_text(out, 1, "abc", 3), 0);
    assert_string_equal(out, "");
}

/* What a policy says reaches halo's messages cleaned: error messages (runtime, at load, in a
 * validation), its name and its parameters. */
static void policy_text_is_cleaned(void **state)
{
    (void)state;
    halo_policy *p;
    const char *src =
        "return { fanout = function(ctx) error('\\nhalo: error: rank 3: fake\\27[2J') "
        "end }\n";
    assert_int_equal(open_src(src, 0, 0, &p), 0);
    assert_int_equal(call_fanout(p), HALO_ELUA);
    const char *msg = halo_errmsg();
    assert_non_null(strstr(msg, ": \\nhalo: error: rank 3: fake\\x1b[2J (hook fanout"));
    assert_null(strchr(msg, '\x1b'));
    assert_null(strstr(msg, "\nhalo:"));
    halo_policy_close(p);

    src = "error('x\\27[2J\\nhalo: error: rank 3: y')\n";
    assert_int_equal(open_src(src, 0, 0, &p), HALO_ELUA);
    assert_null(strchr(halo_errmsg(), '\x1b'));
    assert_null(strstr(halo_errmsg(), "\nhalo:"));

    src = "return { fanout = function(ctx) return { '\\n\\27[2J' } end }\n";
    assert_int_equal(open_src(src, 0, 0, &p), 0);
    assert_int_equal(call_fanout(p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), "fanouts[1] is a string (\"\\n\\x1b[2J\")"));
    halo_policy_close(p);

    src = "return { ['\\nhalo: error: x'] = 1 }\n";
    assert_int_equal(open_src(src, 0, 0, &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), "unknown field '\\nhalo: error: x'"));

    src = "return { name = 'evil\\n\\27[2J', params = { ['k\\n'] = 'v\\27' } }\n";
    assert_int_equal(open_src(src, 0, 0, &p), 0);
    assert_string_equal(halo_policy_name(p), "evil\\n\\x1b[2J");
    char buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    halo_policy_print_params(p, f, "");
    fclose(f);
    assert_string_equal(buf, "k\\n=v\\x1b\n");
    halo_policy_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(patterns_match_lua),
        cmocka_unit_test(wall_clock_limit_stops_a_call),
        cmocka_unit_test(work_is_counted_over_calls),
        cmocka_unit_test(time_limit_from_the_environment),
        cmocka_unit_test(clean_text_escapes_controls),
        cmocka_unit_test(policy_text_is_cleaned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
