/* Unit tests of cluster profiles (sim/profile.c) and the Lua data loader under them
 * (policy/data.c): shipped profiles load, write -> load is exact, bad files give one line
 * naming the file and the field, the sandbox holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "policy/policy.h"
#include "sim/profile.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* Scratch directory of this run. */
static char scratch[512];

/* A valid CPU profile, one field per line, so that a test can replace one line. */
static const char base_profile[] = "-- a test profile\n"
                                   "return {\n"
                                   "  name = \"t\",\n"
                                   "  machines = 2, trainers = 3, cores = 8,\n"
                                   "  cpu = {\n"
                                   "    sample_edge_ns = 12,\n"
                                   "    sample_node_ns = 40,\n"
                                   "    block_node_ns = 25,\n"
                                   "    gather_GBps = 8,\n"
                                   "    memcpy_GBps = 12,\n"
                                   "    lookup_node_ns = 15,\n"
                                   "    hook_us = 20,\n"
                                   "  },\n"
                                   "  network = {\n"
                                   "    shm_lat_us = 1,\n"
                                   "    shm_GBps = 20,\n"
                                   "    net_lat_us = 2,\n"
                                   "    nics = 4,\n"
                                   "    nic_GBps = 25,\n"
                                   "    msg_overhead_us = 1,\n"
                                   "    allreduce_lat_us = 5,\n"
                                   "  },\n"
                                   "  device = {\n"
                                   "    kind = \"cpu\",\n"
                                   "    gemm_TFLOPs = 0.05,\n"
                                   "    agg_GBps = 5,\n"
                                   "    step_overhead_us = 300,\n"
                                   "    adam_GBps = 1,\n"
                                   "  },\n"
                                   "}\n";

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Writes the base profile with the first `find` replaced by `repl` to scratch/name; returns the
 * path (static buffer). */
static const char *variant(const char *name, const char *find, const char *repl)
{
    static char path[700];
    char text[4096];
    const char *at = find ? strstr(base_profile, find) : NULL;
    if (find != NULL) {
        assert_non_null(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base_profile), base_profile, repl,
                 at + strlen(find));
    } else {
        snprintf(text, sizeof text, "%s", base_profile);
    }
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    write_text(path, text);
    return path;
}

/* Loading path fails with HALO_EINPUT (or EIO) and a one-line message holding every needle. */
static void expect_fail(const char *path, const char *n1, const char *n2)
{
    halo_sim_profile p;
    memset(&p, 0x5a, sizeof p);
    halo_sim_profile before = p;
    int rc = halo_sim_profile_load(path, &p);
    const char *msg = halo_errmsg();
    if (rc == 0 || strstr(msg, path) == NULL || (n1 && !strstr(msg, n1)) ||
        (n2 && !strstr(msg, n2)) || strchr(msg, '\n') != NULL) {
        print_message("# %s: rc %d, message: %s (wanted '%s', '%s')\n", path, rc, msg, n1 ? n1 : "",
                      n2 ? n2 : "");
        fail();
    }
    assert_true(rc == HALO_EINPUT || rc == HALO_EIO);
    assert_memory_equal(&p, &before, sizeof p); /* untouched on failure */
}

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/sim_profile.XXXXXX", dir && dir[0] ? dir : "/tmp");
    return mkdtemp(scratch) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    halo_rmtree(scratch);
    return 0;
}

/* ---- loading ---- */

static void shipped_profiles_load(void **state)
{
    (void)state;
    struct dirent **ents;
    int n = scandir(HALO_ROOT "/experiments/clusters", &ents, NULL, alphasort);
    assert_true(n > 0);
    int loaded = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(ents[i]->d_name);
        if (l > 4 && strcmp(ents[i]->d_name + l - 4, ".lua") == 0) {
            char path[1024];
            snprintf(path, sizeof path, "%s/experiments/clusters/%s", HALO_ROOT, ents[i]->d_name);
            halo_sim_profile p;
            int rc = halo_sim_profile_load(path, &p);
            if (rc != 0) {
                print_message("# %s\n", halo_errmsg());
            }
            assert_int_equal(rc, 0);
            assert_int_equal(halo_sim_profile_check(&p, path), 0);
            loaded++;
        }
        free(ents[i]);
    }
    free(ents);
    assert_true(loaded >= 3); /* perlmutter, aws-p3dn, this-machine */
    halo_sim_profile p;
    assert_int_equal(halo_sim_profile_load(HALO_ROOT "/experiments/clusters/perlmutter.lua", &p),
                     0);
    assert_string_equal(p.name, "perlmutter");
    assert_int_equal(p.trainers, 4);
    assert_int_equal(p.cores, 64);
    assert_int_equal(p.nics, 4);
    assert_int_equal(p.device, HALO_SIM_DEVICE_GPU);
    assert_true(p.nic_bw == 25e9);
    assert_true(p.pcie_bw_pinned == 25e9);
    assert_true(p.pinned);
    assert_true(p.net_lat_s == 2e-6);
    assert_true(p.gemm_flops == 12e12);
    assert_true(p.netem_lat_s == 0 && p.netem_bw == 0);
}

static void units_convert_to_si(void **state)
{
    (void)state;
    halo_sim_profile p;
    assert_int_equal(halo_sim_profile_load(variant("units.lua", NULL, NULL), &p), 0);
    assert_string_equal(p.name, "t");
    assert_int_equal(p.machines, 2);
    assert_int_equal(p.trainers, 3);
    assert_true(p.sample_edge_s == 12e-9);
    assert_true(p.hook_s == 20e-6);
    assert_true(p.gather_bw == 8e9);
    assert_true(p.gemm_flops == 0.05e12);
    assert_int_equal(p.device, HALO_SIM_DEVICE_CPU);
    assert_true(p.pcie_bw_pinned == 0); /* cpu: pcie may be left out */
    assert_string_equal(p.source, variant("units.lua", NULL, NULL));
    /* the SI name of a field, netem in Gbit/s, no name: the base name */
    const char *v =
        variant("si-names.lua", "    sample_edge_ns = 12,\n", "    sample_edge_s = 1.5e-8,\n");
    char text[4096];
    char *t;
    size_t len;
    assert_int_equal(halo_file_read_all(v, &t, &len), 0);
    snprintf(text, sizeof text, "%s", t);
    halo_free(t);
    const char *name_line = "  name = \"t\",\n";
    char *nm = strstr(text, name_line);
    assert_non_null(nm);
    memmove(nm, nm + strlen(name_line), strlen(nm + strlen(name_line)) + 1);
    char *close = strrchr(text, '}');
    snprintf(close, sizeof text - (size_t)(close - text), "netem = { lat_us = 50, Gbit = 10 } }\n");
    write_text(v, text);
    assert_int_equal(halo_sim_profile_load(v, &p), 0);
    assert_true(p.sample_edge_s == 1.5e-8);
    assert_true(p.netem_lat_s == 50e-6);
    assert_true(p.netem_bw == 1.25e9);
    assert_string_equal(p.name, "si-names");
}

/* ---- write -> load ---- */

static void expect_round_trip(const halo_sim_profile *p, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    assert_int_equal(halo_sim_profile_write(path, p, "a comment\nover two lines"), 0);
    halo_sim_profile q;
    int rc = halo_sim_profile_load(path, &q);
    if (rc != 0) {
        print_message("# %s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    halo_sim_profile a = *p, b = q;
    memset(a.source, 0, sizeof a.source);
    memset(b.source, 0, sizeof b.source);
    assert_memory_equal(&a, &b, sizeof a);
}

static void write_then_load_is_exact(void **state)
{
    (void)state;
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    assert_int_equal(halo_sim_profile_load(HALO_ROOT "/experiments/clusters/perlmutter.lua", &p),
                     0);
    halo_sim_profile z;
    memset(&z, 0, sizeof z); /* padding zero for the byte comparison */
    z = p;
    expect_round_trip(&z, "perlmutter-rt.lua");
    /* awkward values: thirds, tiny and huge, a name that needs escapes, netem on */
    halo_sim_profile w;
    memset(&w, 0, sizeof w);
    w = p;
    snprintf(w.name, sizeof w.name, "a \"quoted\"\\name\nx");
    w.sample_edge_s = 1.0 / 3.0 * 1e-8;
    w.sample_node_s = 0.1 + 0.2;
    w.gather_bw = 1e16;
    w.memcpy_bw = 123456789.123456789;
    w.nic_bw = nextafter(25e9, 0);
    w.hook_s = 0;
    w.netem_lat_s = 50e-6;
    w.netem_bw = 10e9 / 8 / 3;
    w.gemm_flops = 1e300;
    w.machines = 1000;
    w.pinned = false;
    expect_round_trip(&w, "awkward.lua");
    /* a cpu profile without pcie figures */
    halo_sim_profile c;
    memset(&c, 0, sizeof c);
    assert_int_equal(halo_sim_profile_load(variant("cpu.lua", NULL, NULL), &c), 0);
    expect_round_trip(&c, "cpu-rt.lua");
}

static void write_refuses_bad_directory_and_bad_values(void **state)
{
    (void)state;
    halo_sim_profile p;
    memset(&p, 0, sizeof p);
    assert_int_equal(halo_sim_profile_load(variant("ok.lua", NULL, NULL), &p), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/no/such/dir/x.lua", scratch);
    assert_int_not_equal(halo_sim_profile_write(path, &p, NULL), 0);
    assert_non_null(strstr(halo_errmsg(), "no/such/dir"));
    assert_false(halo_path_exists(path));
    snprintf(path, sizeof path, "%s/bad.lua", scratch);
    p.nic_bw = -1;
    assert_int_equal(halo_sim_profile_write(path, &p, NULL), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "network.nic_GBps"));
    assert_false(halo_path_exists(path));
    p.nic_bw = 1e9;
    p.trainers = 0;
    assert_int_equal(halo_sim_profile_check(&p, "here"), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "here: field trainers"));
    p.trainers = 1 << 20;
    p.machines = 1 << 20;
    assert_int_equal(halo_sim_profile_check(&p, "here"), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "machines x trainers"));
}

/* ---- bad profiles ---- */

static void bad_profiles_name_the_field(void **state)
{
    (void)state;
    expect_fail(variant("unknown.lua", "    hook_us = 20,\n", "    hook_us = 20, colour = 3,\n"),
                "field cpu.colour: unknown field", "hook_us");
    expect_fail(variant("unknown-top.lua", "  name = \"t\",\n", "  name = \"t\", gpus = 4,\n"),
                "field gpus: unknown field", NULL);
    expect_fail(variant("zero.lua", "nic_GBps = 25,", "nic_GBps = 0,"), "field network.nic_GBps: 0",
                "> 0");
    expect_fail(variant("negative.lua", "gather_GBps = 8,", "gather_GBps = -3,"),
                "field cpu.gather_GBps: -3", "> 0");
    expect_fail(variant("neg-lat.lua", "net_lat_us = 2,", "net_lat_us = -2,"),
                "field network.net_lat_us: -2", ">= 0");
    expect_fail(variant("string.lua", "gemm_TFLOPs = 0.05,", "gemm_TFLOPs = \"fast\","),
                "field device.gemm_TFLOPs: a string, expected a number", NULL);
    expect_fail(variant("function.lua", "hook_us = 20,", "hook_us = function() return 1 end,"),
                "field cpu.hook_us: a function", NULL);
    expect_fail(variant("missing.lua", "    net_lat_us = 2,\n", ""),
                "field network.net_lat_us: missing", NULL);
    expect_fail(variant("fraction.lua", "machines = 2,", "machines = 2.5,"), "field machines: 2.5",
                "whole number");
    expect_fail(variant("nan.lua", "sample_edge_ns = 12,", "sample_edge_ns = 0/0,"),
                "field cpu.sample_edge_ns: nan", "finite");
    expect_fail(variant("inf.lua", "sample_edge_ns = 12,", "sample_edge_ns = 1/0,"),
                "field cpu.sample_edge_ns: inf", "finite");
    expect_fail(
        variant("twice.lua", "sample_edge_ns = 12,", "sample_edge_ns = 12, sample_edge_s = 1,"),
        "field cpu.sample_edge_ns: given twice", NULL);
    expect_fail(variant("kind.lua", "kind = \"cpu\",", "kind = \"tpu\","), "field device.kind",
                "\"tpu\"");
    expect_fail(variant("gpu-no-pcie.lua", "kind = \"cpu\",", "kind = \"gpu\","),
                "field pcie.pinned_GBps: missing", NULL);
    expect_fail(variant("section.lua", "  network = {\n", "  network = 3, netem = {\n"),
                "field network: a number", NULL);
    expect_fail(variant("list.lua", "  device = {\n", "  device = { 1, 2 }, pcie = {\n"),
                "field device: a list", NULL);
    /* Lua-level failures: file:line */
    expect_fail(variant("syntax.lua", "    block_node_ns = 25,\n", "    block_node_ns = ,\n"),
                "syntax.lua:8:", NULL);
    expect_fail(variant("runtime.lua", "    memcpy_GBps = 12,\n", "    memcpy_GBps = nil + 1,\n"),
                "runtime.lua:10:", "arithmetic");
    expect_fail(variant("returns.lua", "return {", "local x = {"), "must return a table", NULL);
    char path[700];
    snprintf(path, sizeof path, "%s/absent.lua", scratch);
    expect_fail(path, "cannot read", NULL);
}

static void the_sandbox_holds(void **state)
{
    (void)state;
    char witness[700];
    snprintf(witness, sizeof witness, "%s/escaped", scratch);
    char line[1200];
    snprintf(line, sizeof line, "  name = os.execute(\"touch %s\"),\n", witness);
    expect_fail(variant("os.lua", "  name = \"t\",\n", line), "os.lua:3:", "os");
    snprintf(line, sizeof line, "  name = io.open(\"%s\", \"w\"),\n", witness);
    expect_fail(variant("io.lua", "  name = \"t\",\n", line), "io.lua:3:", "io");
    expect_fail(variant("require.lua", "  name = \"t\",\n", "  name = require(\"socket\"),\n"),
                "require.lua:3:", "not found");
    expect_fail(variant("dofile.lua", "  name = \"t\",\n", "  name = dofile(\"/etc/passwd\"),\n"),
                "dofile.lua:3:", NULL);
    assert_false(halo_path_exists(witness));
    /* an endless loop stops at the instruction budget, a huge string at the memory limit */
    expect_fail(variant("loop.lua", "return {", "while true do end return {"),
                "loop.lua:2:", "instruction budget");
    expect_fail(variant("mem.lua", "return {", "local s = string.rep('x', 400 * 2^20) return {"),
                "memory limit", NULL);
}

/* ---- the data loader itself ---- */

/* halo calibrate --repeat: each number of the written profile is the median of its passes,
 * the GEMM table's rates cell by cell; the rest (names, whole numbers) is the first pass's. */
static void the_median_of_passes_is_taken_field_by_field(void **state)
{
    (void)state;
    halo_sim_profile ps[3];
    for (int i = 0; i < 3; i++) {
        memset(&ps[i], 0, sizeof ps[i]);
        halo_sim_profile_defaults(&ps[i]);
        snprintf(ps[i].name, sizeof ps[i].name, "pass%d", i);
        ps[i].cores = 2 + i;
        ps[i].gemm_nr = ps[i].gemm_ni = ps[i].gemm_no = 2;
    }
    ps[0].sample_edge_s = 9e-9, ps[1].sample_edge_s = 3e-9, ps[2].sample_edge_s = 5e-9;
    ps[0].oversub_gemm = 0.5, ps[1].oversub_gemm = 0, ps[2].oversub_gemm = 0.1;
    ps[0].gemm_rate[1][0][1] = 10, ps[1].gemm_rate[1][0][1] = 30, ps[2].gemm_rate[1][0][1] = 20;
    halo_sim_profile m;
    halo_sim_profile_median(ps, 3, &m);
    assert_true(fabs(m.sample_edge_s - 5e-9) < 1e-21);
    assert_true(fabs(m.oversub_gemm - 0.1) < 1e-15);
    assert_true(fabs(m.gemm_rate[1][0][1] - 20) < 1e-12);
    assert_string_equal(m.name, "pass0");
    assert_int_equal(m.cores, 2);
    /* two passes: the mean of the two */
    halo_sim_profile_median(ps, 2, &m);
    assert_true(fabs(m.sample_edge_s - 6e-9) < 1e-21);
}

static void data_loader_converts_and_refuses(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof path, "%s/data.lua", scratch);
    write_text(path, "return { z = 1, a = { 3, 2.5, 'x', true }, m = { b = false, a = {} },\n"
                     "  big = 2^53, int = 9007199254740992 }\n");
    halo_json *j = NULL;
    assert_int_equal(halo_policy_load_data(path, &j), 0);
    assert_int_equal(j->type, HALO_JSON_OBJECT);
    assert_int_equal(j->len, 5);
    assert_string_equal(j->keys[0], "a"); /* sorted */
    assert_string_equal(j->keys[1], "big");
    assert_string_equal(j->keys[4], "z");
    const halo_json *a = halo_json_get(j, "a");
    assert_int_equal(a->type, HALO_JSON_ARRAY);
    assert_int_equal(a->len, 4);
    assert_true(a->items[1]->number == 2.5);
    assert_string_equal(a->items[2]->string, "x");
    assert_true(a->items[3]->boolean);
    const halo_json *m = halo_json_get(j, "m");
    assert_int_equal(halo_json_get(m, "a")->type, HALO_JSON_ARRAY); /* empty table: a list */
    assert_int_equal(halo_json_get(m, "b")->type, HALO_JSON_BOOL);
    assert_true(halo_json_get(j, "int")->number == 9007199254740992.0);
    halo_json_free(j);
    static const char *const bad[][2] = {
        {"local t = {} t.self = t return { x = { t } }", "field x[1].self: a table that contains"},
        {"return { x = { 1, 2, a = 3 } }", "field x: a table with both"},
        {"return { x = { [1] = 1, [3] = 3 } }", "field x: a list with holes"},
        {"return { x = { [0] = 1 } }", "field x: a list with an index below 1"},
        {"return { x = { [true] = 1 } }", "field x: a table with a boolean key"},
        {"return { a = { b = print } }", "field a.b: a function"},
        {"return { a = math.maxinteger }", "field a: the integer"},
        {"return { a = 1e308 * 10 }", "field a: inf"},
        {"return { a = 'x\\0y' }", "field a: a string with a NUL byte"},
        {"local t = {} local r = t for i = 1, 40 do t.n = {} t = t.n end return r",
         "nested deeper than 32"},
        {"return 42", "must return a table, it returned number"},
        {"error({})", "error object is a table value"},
        {"error('plain', 0)", "data.lua: plain"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i][0]);
        j = NULL;
        int rc = halo_policy_load_data(path, &j);
        const char *msg = halo_errmsg();
        if (rc == 0 || strstr(msg, path) == NULL || strstr(msg, bad[i][1]) == NULL) {
            print_message("# case %zu: rc %d, message: %s (wanted '%s')\n", i, rc, msg, bad[i][1]);
            fail();
        }
        assert_null(j);
    }
    /* a long path is named in full, not shortened by Lua ("...tail") */
    char deep[700];
    snprintf(deep, sizeof deep, "%s/a-directory-with-a-rather-long-name-for-this-test", scratch);
    assert_int_equal(halo_mkdir_p(deep), 0);
    char lp[800];
    snprintf(lp, sizeof lp, "%s/and-a-long-file-name-too.lua", deep);
    write_text(lp, "return {\n  x = nil .. 1 }\n");
    assert_int_not_equal(halo_policy_load_data(lp, &j), 0);
    char want[820];
    snprintf(want, sizeof want, "%s:2:", lp);
    if (strncmp(halo_errmsg(), want, strlen(want)) != 0) {
        print_message("# %s (wanted it to start with %s)\n", halo_errmsg(), want);
        fail();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_profiles_load),
        cmocka_unit_test(units_convert_to_si),
        cmocka_unit_test(write_then_load_is_exact),
        cmocka_unit_test(write_refuses_bad_directory_and_bad_values),
        cmocka_unit_test(bad_profiles_name_the_field),
        cmocka_unit_test(the_sandbox_holds),
        cmocka_unit_test(data_loader_converts_and_refuses),
        cmocka_unit_test(the_median_of_passes_is_taken_field_by_field),
    };
    return cmocka_run_group_tests_name("sim_profile", tests, setup, teardown);
}
