/* Unit tests of the policy sandbox: every policy of the escape corpus (tests/policy/escape_*.lua,
 * each names the error it expects on its first line) is refused or stopped with a clear error,
 * quickly, and the host keeps working; --unsafe opens the standard library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/timer.h"
#include "policy/internal.h"

#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

static int32_t ids[4] = {10, 20, 30, 40};
static int32_t deg[4] = {5, 1, 7, 2};

static void fill_ctx(halo_policy_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->rank = 1;
    c->ranks = 2;
    c->epoch = 0;
    c->batch = -1;
    c->halo.n = 4;
    c->halo.ids = ids;
    c->halo.deg = deg;
}

/* The host is alive: a fresh state loads the default policy and answers a hook. */
static void host_alive(void)
{
    halo_policy *p;
    halo_policy_opts o = {.path = HALO_ROOT "/policies/distdgl.lua", .rank = -1};
    assert_int_equal(halo_policy_open(&o, &p), 0);
    halo_policy_ctx c;
    fill_ctx(&c);
    int f[HALO_POLICY_MAX_LAYERS], layers = 0;
    assert_int_equal(halo_policy_fanout(p, &c, f, HALO_POLICY_MAX_LAYERS, &layers), 0);
    assert_int_equal(layers, 2);
    assert_int_equal(f[0], 10);
    halo_policy_close(p);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void escape_corpus_is_refused_and_host_survives(void **state)
{
    (void)state;
    struct dirent **ents;
    int n = scandir(HALO_ROOT "/tests/policy", &ents, NULL, by_name);
    assert_true(n > 0);
    int cases = 0;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        if (strncmp(name, "escape_", 7) != 0 || strstr(name, ".lua") == NULL) {
            free(ents[i]);
            continue;
        }
        char path[1024], line[512] = "";
        snprintf(path, sizeof path, "%s/tests/policy/%s", HALO_ROOT, name);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(line, sizeof line, f));
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
        assert_true(strncmp(line, "-- expect: ", 11) == 0);
        regex_t re;
        assert_int_equal(regcomp(&re, line + 11, REG_EXTENDED | REG_NOSUB), 0);
        double t0 = halo_now();
        halo_policy *p = NULL;
        /* a fifth of the default budget, so that a slow build (ASan) still meets it well
         * within the clock */
        halo_policy_opts o = {.path = path,
                              .rank = 3,
                              .mem_limit = (size_t)64 << 20,
                              .budget = HALO_POLICY_DEFAULT_BUDGET / 5};
        int rc = halo_policy_open(&o, &p);
        if (rc == 0) {
            halo_policy_ctx c;
            fill_ctx(&c);
            int fo[HALO_POLICY_MAX_LAYERS], layers = 0;
            rc = halo_policy_fanout(p, &c, fo, HALO_POLICY_MAX_LAYERS, &layers);
            halo_policy_close(p);
        }
        double dt = halo_now() - t0;
        const char *msg = halo_errmsg();
        print_message("# %s (%.2f s): %.*s\n", name, dt, (int)strcspn(msg, "\n"), msg);
        if (rc != HALO_ELUA || regexec(&re, msg, 0, NULL, 0) != 0) {
            fail_msg("%s: want HALO_ELUA and a message matching '%s', got %d: %s", name, line + 11,
                     rc, msg);
        }
        assert_non_null(strstr(msg, name));     /* names the file */
        assert_non_null(strstr(msg, "rank 1")); /* and the moment (ctx.rank) */
        /* no bound on dt: tests never assert a time (a hang is caught by the harness's
         * timeout, and the message above says which limit stopped the policy) */
        regfree(&re);
        host_alive();
        cases++;
        free(ents[i]);
    }
    free(ents);
    assert_true(cases >= 20);
}

/* Writes src to a temporary policy file and opens it. */
static int open_src(const char *src, bool unsafe, halo_policy **p)
{
    const char *dir = getenv("HALO_TEST_TMP");
    static char path[512];
    snprintf(path, sizeof path, "%s/sandbox_%d.lua", dir ? dir : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(src, f);
    fclose(f);
    halo_policy_opts o = {.path = path, .rank = -1, .unsafe = unsafe};
    return halo_policy_open(&o, p);
}

static void unsafe_opens_the_standard_library(void **state)
{
    (void)state;
    const char *src = "local home = os.getenv('PATH')\n"
                      "return { fanout = function(ctx) return { home and 3 or 4, "
                      "io and debug and package and 5 or 6 } end }\n";
    halo_policy *p;
    assert_int_equal(open_src(src, true, &p), 0);
    halo_policy_ctx c;
    fill_ctx(&c);
    int f[HALO_POLICY_MAX_LAYERS], layers;
    assert_int_equal(halo_policy_fanout(p, &c, f, HALO_POLICY_MAX_LAYERS, &layers), 0);
    assert_int_equal(f[0], 3);
    assert_int_equal(f[1], 5);
    halo_policy_close(p);
    /* the same file without --unsafe fails at load, naming line 1 */
    assert_int_equal(open_src(src, false, &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua:1: attempt to index a nil value (global 'os')"));
}

/* One policy's attempts at the shared libraries do not reach another state, and failed
 * attempts leave its own libraries intact. */
static void policies_cannot_reach_each_other(void **state)
{
    (void)state;
    const char *evil = "pcall(function() string.upper = nil end)\n"
                       "pcall(rawset, string, 'lower', nil)\n"
                       "pcall(function() getmetatable('').__index.rep = nil end)\n"
                       "pcall(function() halo.array = nil end)\n"
                       "EVIL = true\n"
                       "return { fanout = function(ctx) return { #('abc'):upper(), "
                       "halo.array('int32', 2):len() } end }\n";
    const char *good = "return { fanout = function(ctx) return { ('x'):rep(3):len(), "
                       "EVIL == nil and halo.range(4):sum() or 0, string.upper('a') == 'A' "
                       "and 1 or 0 } end }\n";
    halo_policy *a, *b;
    assert_int_equal(open_src(evil, false, &a), 0);
    assert_int_equal(open_src(good, false, &b), 0);
    halo_policy_ctx c;
    fill_ctx(&c);
    int f[HALO_POLICY_MAX_LAYERS], layers;
    assert_int_equal(halo_policy_fanout(a, &c, f, HALO_POLICY_MAX_LAYERS, &layers), 0);
    assert_int_equal(f[0], 3);
    assert_int_equal(f[1], 2);
    assert_int_equal(halo_policy_fanout(b, &c, f, HALO_POLICY_MAX_LAYERS, &layers), 0);
    assert_int_equal(layers, 3);
    assert_int_equal(f[0], 3);
    assert_int_equal(f[1], 6);
    assert_int_equal(f[2], 1);
    halo_policy_close(a);
    halo_policy_close(b);
}

/* The count hook is armed only during calls; math.random is deterministic per rank. */
static void budget_hook_only_during_calls_and_random_is_deterministic(void **state)
{
    (void)state;
    const char *src = "return { fanout = function(ctx) return { math.random(1, 1000000), "
                      "math.random(1, 1000000) } end }\n";
    halo_policy *a, *b;
    assert_int_equal(open_src(src, false, &a), 0);
    assert_int_equal(open_src(src, false, &b), 0);
    assert_null(lua_gethook(a->L));
    halo_policy_ctx c;
    fill_ctx(&c);
    int f[HALO_POLICY_MAX_LAYERS], g[HALO_POLICY_MAX_LAYERS], la, lb;
    assert_int_equal(halo_policy_fanout(a, &c, f, HALO_POLICY_MAX_LAYERS, &la), 0);
    assert_null(lua_gethook(a->L));
    assert_int_equal(halo_policy_fanout(b, &c, g, HALO_POLICY_MAX_LAYERS, &lb), 0);
    assert_int_equal(f[0], g[0]);
    assert_int_equal(f[1], g[1]);
    halo_policy_close(a);
    halo_policy_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escape_corpus_is_refused_and_host_survives),
        cmocka_unit_test(unsafe_opens_the_standard_library),
        cmocka_unit_test(policies_cannot_reach_each_other),
        cmocka_unit_test(budget_hook_only_during_calls_and_random_is_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
