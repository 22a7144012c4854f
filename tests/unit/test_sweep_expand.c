/* Unit tests of an experiment's expansion into points (sweep/expand.c, through halo_sweep_load):
 * the product's order, trace's lists, explicit points after the product, repetitions, the
 * parts a cluster profile implies, the cache keys, an experiment extending another, and the
 * one-line errors. The expected points are written out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "sweep/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Scratch directory of this run. */
static char scratch[512];

/* Writes an experiment file NAME.lua into the scratch directory and loads it (not quick). */
static int load_text(const char *name, const char *text, halo_sweep_exp **e)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.lua", scratch, name);
    assert_int_equal(halo_file_write_all(path, text, strlen(text)), 0);
    return halo_sweep_load(path, false, e);
}

/* The value of key in point i, "" when unset. */
static const char *val(const halo_sweep_exp *e, int i, const char *key)
{
    for (int j = 0; j < e->pts[i].nkv; j++) {
        if (strcmp(e->pts[i].kv[j].key, key) == 0) {
            return e->pts[i].kv[j].val;
        }
    }
    return "";
}

/* The kind (HALO_SWEEP_STR/NUM/BOOL) of key in point i, -1 when unset. */
static int kind(const halo_sweep_exp *e, int i, const char *key)
{
    for (int j = 0; j < e->pts[i].nkv; j++) {
        if (strcmp(e->pts[i].kv[j].key, key) == 0) {
            return e->pts[i].kv[j].type;
        }
    }
    return -1;
}

/* sweep = {b = {..}, a = {..}}: axes sorted by name, the first one outermost. */
static void product_first_axis_outermost(void **state)
{
    (void)state;
    halo_sweep_exp *e = NULL;
    int rc = load_text("product",
                       "return { mode = 'partition', graph = { gen = 'sbm', nodes = 100 },\n"
                       "  partition = { parts = 2 }, measures = { 'edge_cut' },\n"
                       "  sweep = { ['run.depth'] = { 0, 4 }, ['run.batch'] = { 100, 300 } } }\n",
                       &e);
    assert_int_equal(rc, 0);
    assert_int_equal(e->npts, 4);
    assert_int_equal(e->nconfigs, 4);
    assert_int_equal(e->naxes, 2);
    assert_string_equal(e->axes[0], "run.batch");
    assert_string_equal(e->axes[1], "run.depth");
    static const char *const want[4][2] = {{"100", "0"}, {"100", "4"}, {"300", "0"}, {"300", "4"}};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(val(e, i, "run.batch"), want[i][0]);
        assert_string_equal(val(e, i, "run.depth"), want[i][1]);
        assert_int_equal(kind(e, i, "run.batch"), HALO_SWEEP_NUM);
        assert_string_equal(val(e, i, "graph.gen"), "sbm");
        assert_string_equal(val(e, i, "graph.nodes"), "100");
        assert_string_equal(val(e, i, "partition.parts"), "2");
        assert_int_equal(e->pts[i].parts, 2);
        assert_int_equal(e->pts[i].index, i);
        assert_int_equal(e->pts[i].rep, 0);
    }
    /* one graph and one partition for all four: the keys follow the graph and partition
     * settings only; the points' own keys differ */
    assert_string_equal(e->pts[0].gkey, e->pts[3].gkey);
    assert_string_equal(e->pts[0].pkey, e->pts[3].pkey);
    assert_string_not_equal(e->pts[0].key, e->pts[1].key);
    halo_sweep_free(e);
}

/* trace = { capacities = "0.5,1e-1,,2", policies = "all" }: two listed axes, the text split at
 * commas (empty pieces skipped, numbers in their shortest form), "all" the seven policies. */
static void trace_lists_become_axes(void **state)
{
    (void)state;
    halo_sweep_exp *e = NULL;
    int rc = load_text("trace",
                       "return { mode = 'trace', graph = { gen = 'sbm', nodes = 100 },\n"
                       "  partition = { parts = 2 }, measures = { 'hit_rate' },\n"
                       "  trace = { capacities = '0.5,1e-1,,2', policies = 'all' } }\n",
                       &e);
    assert_int_equal(rc, 0);
    static const char *const caps[] = {"0.5", "0.1", "2"};
    static const char *const pols[] = {"belady", "pagraph", "vip",       "fifo",
                                       "lru",    "lfu",     "massivegnn"};
    assert_int_equal(e->naxes, 2);
    assert_string_equal(e->axes[0], "trace.capacity");
    assert_string_equal(e->axes[1], "trace.policy");
    assert_int_equal(e->npts, 3 * 7);
    for (int i = 0; i < e->npts; i++) {
        assert_string_equal(val(e, i, "trace.capacity"), caps[i / 7]);
        assert_int_equal(kind(e, i, "trace.capacity"), HALO_SWEEP_NUM);
        assert_string_equal(val(e, i, "trace.policy"), pols[i % 7]);
        assert_int_equal(kind(e, i, "trace.policy"), HALO_SWEEP_STR);
        /* the lists are axes now, not settings */
        assert_int_equal(kind(e, i, "trace.capacities"), -1);
        assert_int_equal(kind(e, i, "trace.policies"), -1);
    }
    halo_sweep_free(e);
    /* a list of names, and a sweep over trace.capacity winning over trace.capacities */
    rc = load_text("trace2",
                   "return { mode = 'trace', graph = { gen = 'sbm', nodes = 100 },\n"
                   "  partition = { parts = 2 }, measures = { 'hit_rate' },\n"
                   "  sweep = { ['trace.capacity'] = 0.25 },\n"
                   "  trace = { capacities = { 0.5, 0.75 }, policies = { 'lru', 'fifo' } } }\n",
                   &e);
    assert_int_equal(rc, 0);
    assert_int_equal(e->npts, 2);
    assert_string_equal(val(e, 0, "trace.capacity"), "0.25");
    assert_string_equal(val(e, 0, "trace.policy"), "lru");
    assert_string_equal(val(e, 1, "trace.policy"), "fifo");
    halo_sweep_free(e);
}

/* points after the product; a key only points set is a column; each configuration repeated. */
static void points_follow_the_product(void **state)
{
    (void)state;
    halo_sweep_exp *e = NULL;
    int rc = load_text("points",
                       "return { mode = 'partition', graph = { gen = 'sbm', nodes = 100 },\n"
                       "  partition = { parts = 2 }, run = { batch = 50 }, repeats = 2,\n"
                       "  measures = { 'edge_cut' }, sweep = { ['run.batch'] = { 100 } },\n"
                       "  points = { { ['partition.parts'] = 3, ['run.fanouts'] = { 5, 10 } } } }\n",
                       &e);
    assert_int_equal(rc, 0);
    assert_int_equal(e->naxes, 3);
    assert_string_equal(e->axes[0], "partition.parts");
    assert_string_equal(e->axes[1], "run.batch");
    assert_string_equal(e->axes[2], "run.fanouts");
    assert_int_equal(e->nconfigs, 2);
    assert_int_equal(e->npts, 4);
    static const struct {
        const char *batch, *parts, *fanouts;
        int index, rep;
    } want[] = {{"100", "2", "", 0, 0}, {"100", "2", "", 0, 1}, {"50", "3", "5,10", 1, 0},
                {"50", "3", "5,10", 1, 1}};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(val(e, i, "run.batch"), want[i].batch);
        assert_string_equal(val(e, i, "partition.parts"), want[i].parts);
        assert_string_equal(val(e, i, "run.fanouts"), want[i].fanouts);
        assert_int_equal(e->pts[i].index, want[i].index);
        assert_int_equal(e->pts[i].rep, want[i].rep);
    }
    /* repetitions differ in their key only; another part count is another partition */
    assert_string_not_equal(e->pts[0].key, e->pts[1].key);
    assert_string_equal(e->pts[0].pkey, e->pts[1].pkey);
    assert_string_equal(e->pts[0].gkey, e->pts[2].gkey);
    assert_string_not_equal(e->pts[0].pkey, e->pts[2].pkey);
    halo_sweep_free(e);
}

/* sim mode with a cluster profile: parts and trainers give the machines. */
static void cluster_gives_the_machines(void **state)
{
    (void)state;
    halo_sweep_exp *e = NULL;
    int rc = load_text("cluster",
                       "return { mode = 'sim', graph = { gen = 'sbm', nodes = 100 },\n"
                       "  partition = { parts = 6 }, run = { cluster = 'this-machine', trainers = 2 },\n"
                       "  measures = { 'epoch_s' } }\n",
                       &e);
    assert_int_equal(rc, 0);
    assert_int_equal(e->npts, 1);
    assert_int_equal(e->pts[0].parts, 6);
    assert_int_equal(e->pts[0].trainers, 2);
    assert_int_equal(e->pts[0].machines, 3);
    assert_non_null(strstr(e->pts[0].cluster, "experiments/clusters/this-machine.lua"));
    halo_sweep_free(e);
    rc = load_text("cluster2",
                   "return { mode = 'sim', graph = { gen = 'sbm', nodes = 100 },\n"
                   "  partition = { parts = 5 }, run = { cluster = 'this-machine', trainers = 2 },\n"
                   "  measures = { 'epoch_s' } }\n",
                   &e);
    assert_int_equal(rc, HALO_EINPUT);
    assert_null(e);
    assert_non_null(strstr(halo_errmsg(), "cluster2.lua:2: field partition.parts: 5 parts are not "
                                          "a whole number of machines of 2 trainers"));
}

/* Bad lists give one line naming the file, the line and the field. */
static void bad_lists_name_the_field(void **state)
{
    (void)state;
    static const struct {
        const char *trace_sweep; /* line 3 of the file */
        const char *msg;         /* what the message holds after the file name */
    } cases[] = {
        {"trace = { capacities = '1,x', policies = 'lru' }",
         ":3: field trace.capacities: \"x\" is not a number"},
        {"trace = { capacities = ',', policies = 'lru' }",
         ":3: field trace.capacities: an empty list of values"},
        {"trace = { capacities = 0.5, policies = { 'lru', 3 } }",
         ":3: field trace.policies: entry 2 is a number, expected a policy name"},
        {"trace = { capacities = 0.5, policies = true }",
         ":3: field trace.policies: a boolean, expected \"all\", \"a,b\" or a list of names"},
        {"trace = { policy = 'lru' }, sweep = { ['run.batch'] = {} }",
         ":3: field sweep[\"run.batch\"]: an empty list of values"},
        {"trace = { policy = 'lru' }, sweep = { ['run.nope'] = 1 }",
         ":3: field sweep[\"run.nope\"]: \"run.nope\": unknown run key"},
        {"trace = { policy = 'lru' }, points = { { ['run.batch'] = 1 }, 7 }",
         ":3: field points[2]: a number, expected a table of settings"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "return { mode = 'trace', graph = { gen = 'sbm', nodes = 100 },\n"
                 "  partition = { parts = 2 }, measures = { 'hit_rate' },\n"
                 "  %s }\n",
                 cases[i].trace_sweep);
        halo_sweep_exp *e = NULL;
        int rc = load_text("bad", text, &e);
        const char *msg = halo_errmsg();
        const char *at = strstr(msg, "bad.lua");
        if (rc != HALO_EINPUT || at == NULL ||
            strncmp(at + 7, cases[i].msg, strlen(cases[i].msg)) != 0) {
            print_message("# case %zu: rc %d, message: %s (wanted ...bad.lua%s)\n", i, rc, msg,
                          cases[i].msg);
            fail();
        }
        assert_null(e);
    }
}

/* extends = "base.lua": the base's fields with this file's merged over them (tables key by key),
 * the name from this file; a base that extends another is refused. */
static void extends_merges_over_the_base(void **state)
{
    (void)state;
    halo_sweep_exp *e = NULL;
    int rc = load_text("base",
                       "return { mode = 'partition', graph = { gen = 'sbm', nodes = 100 },\n"
                       "  partition = { parts = 2, method = 'random' }, title = 'base',\n"
                       "  measures = { 'edge_cut' }, sweep = { ['run.batch'] = { 100, 300 } } }\n",
                       &e);
    assert_int_equal(rc, 0);
    halo_sweep_free(e);
    rc = load_text("child",
                   "return { extends = 'base.lua', partition = { parts = 4 },\n"
                   "  sweep = { ['run.batch'] = { 50 } } }\n",
                   &e);
    assert_int_equal(rc, 0);
    assert_string_equal(e->name, "child");
    assert_string_equal(e->title, "base");
    assert_int_equal(e->npts, 1);
    assert_string_equal(val(e, 0, "run.batch"), "50");
    assert_string_equal(val(e, 0, "partition.parts"), "4");
    assert_string_equal(val(e, 0, "partition.method"), "random");
    assert_string_equal(val(e, 0, "graph.nodes"), "100");
    assert_int_equal(kind(e, 0, "extends"), -1);
    halo_sweep_free(e);
    rc = load_text("grandchild", "return { extends = 'child.lua' }\n", &e);
    assert_int_equal(rc, HALO_EINPUT);
    assert_null(e);
    assert_non_null(strstr(halo_errmsg(), "grandchild.lua:1: field extends: "));
    assert_non_null(strstr(halo_errmsg(), "extends no other"));
    /* a missing base is named with the line that names it */
    rc = load_text("orphan", "return {\n  extends = 'nope.lua' }\n", &e);
    assert_int_equal(rc, HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "orphan.lua:2: field extends: "));
    assert_non_null(strstr(halo_errmsg(), "nope.lua"));
}

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/sweep_expand.XXXXXX", dir && dir[0] ? dir : "/tmp");
    return mkdtemp(scratch) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(product_first_axis_outermost),
        cmocka_unit_test(trace_lists_become_axes),
        cmocka_unit_test(points_follow_the_product),
        cmocka_unit_test(cluster_gives_the_machines),
        cmocka_unit_test(bad_lists_name_the_field),
        cmocka_unit_test(extends_merges_over_the_base),
    };
    return cmocka_run_group_tests_name("sweep_expand", tests, setup, teardown);
}
