/* Unit tests of train/metrics and train/checkpoint: schema fields, atomic files, resume checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "train/checkpoint.h"
#include "train/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[256];

static int make_scratch(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/halo-trainio-XXXXXX");
    return mkdtemp(scratch) == NULL ? -1 : 0;
}

static int remove_scratch(void **state)
{
    (void)state;
    halo_rmtree(scratch);
    return 0;
}

static void epoch_record_has_every_schema_field(void **state)
{
    (void)state;
    halo_epoch_stats s = {0};
    s.epoch = 2;
    s.rank = 1;
    s.ranks = 4;
    s.cache_hits = 3;
    s.cache_misses = 1;
    s.loss = 0.25;
    halo_sb sb;
    halo_sb_init(&sb);
    halo_metrics_epoch_json(&sb, "run", "policies/x.lua", &s);
    halo_json *v;
    assert_int_equal(halo_json_parse(sb.buf, sb.len, "line", &v), 0);
    const char *fields[] = {"type", "mode", "epoch", "rank", "ranks", "policy", "time_s",
                            "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s",
                            "wait_s", "batches", "sampled_edges", "input_nodes",
                            "remote_nodes", "cache_hits", "cache_misses", "bytes_remote",
                            "loss", "sample_cpu_s", "fetch_cpu_s", "compute_cpu_s"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        assert_non_null(halo_json_get(v, fields[i]));
    }
    double hr;
    assert_int_equal(halo_json_get_f64(v, "hit_rate", "line", &hr), 0);
    assert_true(hr == 0.75);
    halo_json_free(v);
    halo_sb_free(&sb);
}

static void metrics_file_appears_only_on_close(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/m.jsonl", scratch);
    halo_metrics *m;
    assert_int_equal(halo_metrics_open(path, &m), 0);
    assert_int_equal(halo_metrics_line(m, "{\"type\":\"summary\"}"), 0);
    assert_false(halo_path_exists(path));
    assert_int_equal(halo_metrics_close(m), 0);
    char *text;
    size_t len;
    assert_int_equal(halo_file_read_all(path, &text, &len), 0);
    assert_string_equal(text, "{\"type\":\"summary\"}\n");
    halo_free(text);
}

static void checkpoint_round_trips_and_refuses_other_config(void **state)
{
    (void)state;
    enum { N = 1000 };
    char dir[512];
    snprintf(dir, sizeof dir, "%s/ck", scratch);
    float p[N], m[N], v[N];
    for (int i = 0; i < N; i++) {
        p[i] = (float)i * 0.5f;
        m[i] = (float)-i;
        v[i] = (float)(i * i);
    }
    halo_checkpoint ck = {3, 120, 42, halo_config_hash("lr=0.003 batch=2000"), N, p, m, v,
                          "lr=0.003 batch=2000"};
    assert_int_equal(halo_checkpoint_write(dir, &ck), 0);
    float p2[N], m2[N], v2[N];
    halo_checkpoint in = {0, 0, 0, ck.config_hash, N, p2, m2, v2, NULL};
    assert_int_equal(halo_checkpoint_read(dir, &in), 0);
    assert_int_equal(in.epoch, 3);
    assert_int_equal(in.step, 120);
    assert_int_equal(in.seed, 42);
    assert_memory_equal(p, p2, sizeof p);
    assert_memory_equal(m, m2, sizeof m);
    assert_memory_equal(v, v2, sizeof v);
    in.config_hash = halo_config_hash("lr=0.01 batch=2000");
    assert_int_equal(halo_checkpoint_read(dir, &in), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "another configuration"));
    /* with the run's text, the refusal names the setting that differs, not two hashes */
    in.config = "lr=0.003 batch=200";
    in.config_hash = halo_config_hash(in.config);
    assert_int_equal(halo_checkpoint_read(dir, &in), HALO_EINPUT);
    if (strstr(halo_errmsg(), "batch=2000 in the checkpoint, batch=200 in this run") == NULL) {
        fail_msg("%s", halo_errmsg());
    }
    in.config = NULL;
    /* A flipped byte is caught by the checksum and named. */
    char path[600];
    snprintf(path, sizeof path, "%s/adam_v.f32", dir);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 17, SEEK_SET);
    fputc(0x7f, f);
    fclose(f);
    in.config_hash = ck.config_hash;
    assert_int_equal(halo_checkpoint_read(dir, &in), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "adam_v.f32"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(epoch_record_has_every_schema_field),
        cmocka_unit_test(metrics_file_appears_only_on_close),
        cmocka_unit_test(checkpoint_round_trips_and_refuses_other_config),
    };
    return cmocka_run_group_tests_name("train_io", tests, make_scratch, remove_scratch);
}
