/* Unit tests of runtime/core: errors, allocator accounting, RNG, JSON, args, atomic output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/host.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static void errorf_formats_message_and_returns_code(void **state)
{
    (void)state;
    int rc = halo_errorf(HALO_EINPUT, "%s:%d: bad", "f.txt", 7);
    assert_int_equal(rc, HALO_EINPUT);
    assert_string_equal(halo_errmsg(), "f.txt:7: bad");
    halo_error_prefix(rc, "rank %d", 3);
    assert_string_equal(halo_errmsg(), "rank 3: f.txt:7: bad");
    assert_int_equal(halo_exit_code(HALO_EUSAGE), 2);
    assert_int_equal(halo_exit_code(HALO_EINPUT), 1);
}

static void allocator_counts_live_bytes(void **state)
{
    (void)state;
    size_t before = halo_mem_current();
    char *p = halo_malloc(1000);
    assert_int_equal(halo_mem_current(), before + 1000);
    p = halo_realloc(p, 5000);
    assert_int_equal(halo_mem_current(), before + 5000);
    halo_free(p);
    assert_int_equal(halo_mem_current(), before);
    assert_true(halo_mem_peak() >= before + 5000);
}

static void rng_is_a_pure_function_of_its_keys(void **state)
{
    (void)state;
    halo_rng a, b, c;
    halo_rng_init(&a, 42, HALO_RNG_SAMPLE, 1, 2, 3);
    halo_rng_init(&b, 42, HALO_RNG_SAMPLE, 1, 2, 3);
    halo_rng_init(&c, 42, HALO_RNG_SAMPLE, 1, 2, 4);
    int same_c = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = halo_rng_next(&a);
        assert_true(x == halo_rng_next(&b));
        same_c += x == halo_rng_next(&c);
    }
    assert_int_equal(same_c, 0);
}

static void rng_below_is_uniform(void **state)
{
    (void)state;
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0, 0, 0);
    enum { K = 10, N = 100000 };
    int count[K] = {0};
    for (int i = 0; i < N; i++) {
        uint64_t v = halo_rng_below(&r, K);
        assert_true(v < K);
        count[v]++;
    }
    double chi = 0;
    for (int k = 0; k < K; k++) {
        double e = (double)N / K;
        chi += (count[k] - e) * (count[k] - e) / e;
    }
    assert_true(chi < 27.88); /* chi-square 9 dof, p = 0.001 */
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++) {
        double z = halo_rng_normal(&r);
        sum += z;
        sq += z * z;
    }
    assert_true(fabs(sum / N) < 0.02);
    assert_true(fabs(sq / N - 1.0) < 0.03);
}

static void json_round_trips_and_reports_line(void **state)
{
    (void)state;
    halo_jw w;
    halo_jw_init(&w, true);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "name");
    halo_jw_str(&w, "a \"q\"\n");
    halo_jw_key(&w, "n");
    halo_jw_i64(&w, -12345678901LL);
    halo_jw_key(&w, "list");
    halo_jw_arr_begin(&w);
    halo_jw_f64(&w, 0.5);
    halo_jw_bool(&w, true);
    halo_jw_null(&w);
    halo_jw_arr_end(&w);
    halo_jw_key(&w, "empty");
    halo_jw_obj_begin(&w);
    halo_jw_obj_end(&w);
    halo_jw_obj_end(&w);
    halo_json *v;
    assert_int_equal(halo_json_parse(w.sb.buf, w.sb.len, "mem", &v), 0);
    const char *s;
    int64_t n;
    assert_int_equal(halo_json_get_str(v, "name", "mem", &s), 0);
    assert_string_equal(s, "a \"q\"\n");
    assert_int_equal(halo_json_get_i64(v, "n", "mem", &n), 0);
    assert_true(n == -12345678901LL);
    const halo_json *l = halo_json_get(v, "list");
    assert_non_null(l);
    assert_int_equal(l->len, 3);
    assert_true(l->items[0]->number == 0.5);
    assert_int_equal(l->items[1]->type, HALO_JSON_BOOL);
    assert_int_equal(l->items[2]->type, HALO_JSON_NULL);
    assert_int_equal(halo_json_get_str(v, "missing", "mem", &s), HALO_EINPUT);
    halo_json_free(v);
    halo_jw_free(&w);

    const char *bad = "{\n  \"a\": 1,\n  \"b\": tru\n}";
    assert_int_equal(halo_json_parse(bad, strlen(bad), "x.json", &v), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "x.json:3:"));
}

static void args_parse_types_and_reject_unknown(void **state)
{
    (void)state;
    int n = 1;
    double x = 0;
    bool f = false;
    const char *s = NULL;
    halo_strlist l = {0};
    const halo_opt opts[] = {
        {"n", 'n', HALO_OPT_INT, &n, "N", "count"},
        {"x", 0, HALO_OPT_DOUBLE, &x, "X", "value"},
        {"flag", 0, HALO_OPT_FLAG, &f, NULL, "flag"},
        {"out", 'o', HALO_OPT_STRING, &s, "DIR", "output"},
        {"set", 0, HALO_OPT_LIST, &l, "K=V", "param"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {"test", "test"};
    char *argv[] = {"cmd", "pos1", "-n", "5", "--x=2.5", "--flag", "-o", "d", "--set", "a=1",
                    "--set", "b=2", "-3"};
    char *pos[16];
    int npos;
    assert_int_equal(halo_args_parse(&help, opts, 13, argv, pos, &npos), 0);
    assert_int_equal(n, 5);
    assert_true(x == 2.5);
    assert_true(f);
    assert_string_equal(s, "d");
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[1], "b=2");
    assert_int_equal(npos, 2);
    assert_string_equal(pos[1], "-3");
    char *bad[] = {"cmd", "--nope"};
    assert_int_equal(halo_args_parse(&help, opts, 2, bad, pos, &npos), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "--nope"));
    char *badn[] = {"cmd", "-n", "ten"};
    assert_int_equal(halo_args_parse(&help, opts, 3, badn, pos, &npos), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "ten"));
}

static void outdir_commit_replaces_whole_directory(void **state)
{
    (void)state;
    char base[] = "/tmp/halo-core-XXXXXX";
    assert_non_null(mkdtemp(base));
    char final[1024], tmp[2048], path[4096];
    snprintf(final, sizeof final, "%s/out", base);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(halo_outdir_begin(final, "f.bin", "test", tmp, sizeof tmp), 0);
        snprintf(path, sizeof path, "%s/f.bin", tmp);
        char data[3] = {'a', 'b', (char)('0' + round)};
        assert_int_equal(halo_file_write_all(path, data, 3), 0);
        assert_int_equal(halo_outdir_commit(tmp, final), 0);
        assert_false(halo_path_exists(tmp));
        snprintf(path, sizeof path, "%s/f.bin", final);
        halo_map m;
        assert_int_equal(halo_map_file(path, 3, &m), 0);
        assert_int_equal(((char *)m.data)[2], '0' + round);
        assert_int_equal(halo_crc32(0, m.data, 3), halo_crc32(halo_crc32(0, "ab", 2), data + 2, 1));
        halo_unmap(&m);
        assert_int_equal(halo_map_file(path, 4, &m), HALO_EINPUT);
        assert_non_null(strstr(halo_errmsg(), "f.bin"));
    }
    halo_rmtree(base);
    assert_false(halo_path_exists(base));
}

static void json_refuses_duplicate_and_mistyped_keys(void **state)
{
    (void)state;
    halo_json *j = NULL;
    const char *dup = "{\"a\": 1,\n \"b\": {\"c\": 2, \"c\": 3}}";
    assert_int_equal(halo_json_parse(dup, strlen(dup), "d.json", &j), HALO_EINPUT);
    assert_null(j);
    assert_non_null(strstr(halo_errmsg(), "d.json:2:"));
    assert_non_null(strstr(halo_errmsg(), "key \"c\" appears twice"));
    const char *ok = "{\"directed\": \"no\", \"n\": 7, \"t\": true}";
    assert_int_equal(halo_json_parse(ok, strlen(ok), "m.json", &j), 0);
    bool b = true;
    assert_int_equal(halo_json_opt_bool(j, "directed", "m.json", true, &b), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "\"directed\" must be true or false"));
    assert_int_equal(halo_json_opt_bool(j, "t", "m.json", false, &b), 0);
    assert_true(b);
    assert_int_equal(halo_json_opt_bool(j, "absent", "m.json", false, &b), 0);
    assert_false(b);
    int64_t v = 0;
    assert_int_equal(halo_json_opt_i64(j, "n", "m.json", 1, 1, 5, &v), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "\"n\" is 7, not in [1, 5]"));
    assert_int_equal(halo_json_opt_i64(j, "n", "m.json", 1, 1, 9, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(halo_json_opt_i64(j, "absent", "m.json", 4, 1, 9, &v), 0);
    assert_int_equal(v, 4);
    halo_json_free(j);
}

static void split_list_refuses_empty_elements(void **state)
{
    (void)state;
    char *v[4];
    char a[] = "10,25";
    assert_int_equal(halo_split_list(a, "--f", v, 4), 2);
    assert_string_equal(v[0], "10");
    assert_string_equal(v[1], "25");
    const char *bad[] = {"", "10,,25", "10,25,", ",10", "1,2,3,4,5"};
    const char *why[] = {"empty list", "element 2", "element 3", "element 1", "more than 4"};
    for (int i = 0; i < 5; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%s", bad[i]);
        assert_int_equal(halo_split_list(buf, "--f", v, 4), HALO_EUSAGE);
        assert_non_null(strstr(halo_errmsg(), why[i]));
        assert_non_null(strstr(halo_errmsg(), "--f"));
    }
}

static void args_refuse_negative_counts_unless_signed(void **state)
{
    (void)state;
    int n = 0, depth = 0;
    int64_t b = 0;
    double x = 0;
    const halo_opt opts[] = {
        {"n", 0, HALO_OPT_INT, &n, "N", "count"},
        {"b", 0, HALO_OPT_I64, &b, "N", "bytes"},
        {"x", 0, HALO_OPT_DOUBLE, &x, "X", "rate"},
        {"depth", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &depth, "N", "-1: default"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {"test", "test"};
    char *pos[8];
    int npos;
    const char *flags[] = {"--n", "--b", "--x"};
    for (int i = 0; i < 3; i++) {
        char *argv[] = {"cmd", (char *)flags[i], "-4"};
        assert_int_equal(halo_args_parse(&help, opts, 3, argv, pos, &npos), HALO_EUSAGE);
        assert_non_null(strstr(halo_errmsg(), flags[i]));
        assert_non_null(strstr(halo_errmsg(), "-4 is negative"));
    }
    char *ok[] = {"cmd", "--depth", "-1", "--n", "0", "--b", "7", "--x", "0.5"};
    assert_int_equal(halo_args_parse(&help, opts, 9, ok, pos, &npos), 0);
    assert_int_equal(depth, -1);
    assert_int_equal(n, 0);
    assert_int_equal(b, 7);
    assert_true(x == 0.5);
}

static void inputs_must_be_regular_files(void **state)
{
    (void)state;
    char base[] = "/tmp/halo-core-XXXXXX";
    assert_non_null(mkdtemp(base));
    char fifo[1024], file[1024];
    snprintf(fifo, sizeof fifo, "%s/fifo", base);
    snprintf(file, sizeof file, "%s/f.txt", base);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(halo_file_write_all(file, "{}", 2), 0);
    char *text = NULL;
    size_t len = 0;
    /* a FIFO without a writer would block a plain open(); it must be refused at once */
    assert_int_equal(halo_file_read_all(fifo, &text, &len), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "is a FIFO, not a regular file"));
    halo_map m;
    assert_int_equal(halo_map_file("/dev/zero", SIZE_MAX, &m), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "/dev/zero: is a character device"));
    assert_int_equal(halo_input_check(base), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "is a directory"));
    assert_int_equal(halo_file_read_all(file, &text, &len), 0);
    assert_int_equal(len, 2);
    halo_free(text);
    unlink(fifo);
    unlink(file);
    rmdir(base);
}

static void outputs_replace_only_previous_outputs_of_their_kind(void **state)
{
    (void)state;
    char base[] = "/tmp/halo-core-XXXXXX";
    assert_non_null(mkdtemp(base));
    char file[1024], other[1024], prev[1024], path[2048], tmp[2048];
    snprintf(file, sizeof file, "%s/input.txt", base);
    snprintf(other, sizeof other, "%s/other", base);
    snprintf(prev, sizeof prev, "%s/prev", base);
    assert_int_equal(halo_file_write_all(file, "keep", 4), 0);
    assert_int_equal(halo_mkdir_p(other), 0);
    snprintf(path, sizeof path, "%s/x.bin", other);
    assert_int_equal(halo_file_write_all(path, "x", 1), 0);
    assert_int_equal(halo_mkdir_p(prev), 0);
    snprintf(path, sizeof path, "%s/mark", prev);
    assert_int_equal(halo_file_write_all(path, "m", 1), 0);
    assert_int_equal(halo_outdir_begin(file, "mark", "thing", tmp, sizeof tmp), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "input.txt: exists and is a file, not a previous thing"));
    assert_int_equal(halo_outdir_begin(other, "mark", "thing", tmp, sizeof tmp), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "other: exists and is not a previous thing directory"));
    uint64_t size = 0;
    assert_int_equal(halo_file_size(file, &size), 0);
    assert_int_equal(size, 4);
    assert_true(halo_path_exists(path));
    assert_int_equal(halo_output_check(prev, "mark", "thing"), 0);
    snprintf(path, sizeof path, "%s/absent", base);
    assert_int_equal(halo_output_check(path, "mark", "thing"), 0);
    halo_rmtree(base);
}

/* A profile's origin line reads back as written: the CPU as /proc/cpuinfo names it and the time
 * to the minute, with or without the Lua comment's "-- "; lines that are not one are refused,
 * and one whose date does not parse keeps its CPU with time 0. */
static void origin_line_round_trips(void **state)
{
    (void)state;
    char line[1024], cpu[512], want[512];
    time_t t = 1796216000; /* 2026-12-02 12:53:20 UTC */
    halo_host_origin(line, sizeof line, " --quick", 2, t);
    assert_non_null(strstr(line, "Measured by `halo calibrate --quick` on "));
    assert_non_null(strstr(line, ", 2 cores online) on 2026-12-02 12:53 UTC"));
    halo_host_cpu_model(want, sizeof want);
    if (want[0] == '\0') {
        snprintf(want, sizeof want, "unknown CPU");
    }
    time_t when = 0;
    assert_true(halo_host_origin_parse(line, cpu, sizeof cpu, &when));
    assert_string_equal(cpu, want);
    assert_int_equal((long long)when, (long long)(t - t % 60));
    char lua[1100];
    snprintf(lua, sizeof lua, "-- %s; each figure the median of 3 passes.\n", line);
    assert_true(halo_host_origin_parse(lua, cpu, sizeof cpu, &when));
    assert_string_equal(cpu, want);
    assert_int_equal((long long)when, (long long)(t - t % 60));
    assert_false(halo_host_origin_parse("-- A cluster profile written by hand", cpu, sizeof cpu,
                                        &when));
    assert_false(halo_host_origin_parse("x -- Measured by `halo calibrate` on h (c, 2 cores "
                                        "online) on 2026-12-02 12:53 UTC", cpu, sizeof cpu,
                                        &when));
    assert_true(halo_host_origin_parse("Measured by `halo calibrate` on h (Some CPU, 4 cores "
                                       "online) on yesterday", cpu, sizeof cpu, &when));
    assert_string_equal(cpu, "Some CPU");
    assert_int_equal((long long)when, 0);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* A signal in the middle of halo_sleep_s does not cut the sleep short (nanosleep alone returns
 * at the signal). */
static void sleep_sleeps_the_whole_time_through_a_signal(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: the signal interrupts nanosleep */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval it = {{0, 0}, {0, 5000}}; /* once, 5 ms in */
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    double t0 = halo_now();
    halo_sleep_s(0.05);
    double slept = halo_now() - t0;
    sigaction(SIGALRM, &old, NULL);
    assert_true(slept >= 0.05);
    t0 = halo_now();
    halo_sleep_s(-1);
    halo_sleep_s(0);
    assert_true(halo_now() - t0 < 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errorf_formats_message_and_returns_code),
        cmocka_unit_test(origin_line_round_trips),
        cmocka_unit_test(allocator_counts_live_bytes),
        cmocka_unit_test(rng_is_a_pure_function_of_its_keys),
        cmocka_unit_test(rng_below_is_uniform),
        cmocka_unit_test(json_round_trips_and_reports_line),
        cmocka_unit_test(args_parse_types_and_reject_unknown),
        cmocka_unit_test(outdir_commit_replaces_whole_directory),
        cmocka_unit_test(json_refuses_duplicate_and_mistyped_keys),
        cmocka_unit_test(split_list_refuses_empty_elements),
        cmocka_unit_test(args_refuse_negative_counts_unless_signed),
        cmocka_unit_test(inputs_must_be_regular_files),
        cmocka_unit_test(outputs_replace_only_previous_outputs_of_their_kind),
        cmocka_unit_test(sleep_sleeps_the_whole_time_through_a_signal),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
