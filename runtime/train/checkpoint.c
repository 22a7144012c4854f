/* Checkpoint files: three float arrays plus meta.json with sizes, CRC-32s and the config hash. */
#include "train/checkpoint.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const ck_files[3] = {"params.f32", "adam_m.f32", "adam_v.f32"};

uint64_t halo_config_hash(const char *config)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

int halo_checkpoint_write(const char *dir, const halo_checkpoint *ck)
{
    char tmp[4096], path[4200];
    int rc = 0;
    const float *arrays[3] = {ck->params, ck->adam_m, ck->adam_v};
    size_t bytes = (size_t)ck->nparams * sizeof(float);
    HALO_CHECK(halo_outdir_begin(dir, "params.f32", "checkpoint", tmp, sizeof tmp));
    halo_jw w;
    halo_jw_init(&w, true);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "format");
    halo_jw_i64(&w, 1);
    halo_jw_key(&w, "epoch");
    halo_jw_i64(&w, ck->epoch);
    halo_jw_key(&w, "step");
    halo_jw_i64(&w, ck->step);
    char hex[32];
    snprintf(hex, sizeof hex, "%016" PRIx64, ck->seed);
    halo_jw_key(&w, "seed");
    halo_jw_str(&w, hex);
    snprintf(hex, sizeof hex, "%016" PRIx64, ck->config_hash);
    halo_jw_key(&w, "config_hash");
    halo_jw_str(&w, hex);
    if (ck->config != NULL) {
        halo_jw_key(&w, "config");
        halo_jw_str(&w, ck->config);
    }
    halo_jw_key(&w, "nparams");
    halo_jw_i64(&w, ck->nparams);
    for (int i = 0; i < 3; i++) {
        HALO_TRY(halo_path_join(path, sizeof path, tmp, ck_files[i]));
        HALO_TRY(halo_file_write_all(path, arrays[i], bytes));
        snprintf(hex, sizeof hex, "%08x", halo_crc32(0, arrays[i], bytes));
        halo_jw_key(&w, ck_files[i]);
        halo_jw_str(&w, hex);
    }
    halo_jw_obj_end(&w);
    halo_sb_putc(&w.sb, '\n');
    HALO_TRY(halo_path_join(path, sizeof path, tmp, "meta.json"));
    HALO_TRY(halo_file_write_all(path, w.sb.buf, w.sb.len));
    HALO_TRY(halo_outdir_commit(tmp, dir));
    halo_jw_free(&w);
    return 0;
fail:
    halo_jw_free(&w);
    halo_outdir_abort(tmp);
    return rc;
}

static int parse_hex64(const halo_json *meta, const char *key, const char *where, uint64_t *out)
{
    const char *s;
    HALO_CHECK(halo_json_get_str(meta, key, where, &s));
    if (sscanf(s, "%" SCNx64, out) != 1) {
        return halo_errorf(HALO_EINPUT, "%s: \"%s\" is not a hex number", where, key);
    }
    return 0;
}

/* The value of key in a "key=value key=value" text (len bytes into *len), or NULL. */
static const char *config_value(const char *text, const char *key, size_t klen, size_t *len)
{
    for (const char *p = text; p != NULL && *p;) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            *len = n - klen - 1;
            return p + klen + 1;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

/* "batch=100 in the checkpoint, batch=200 in this run" for the first setting of now whose value
 * differs from was's (a key either lacks counts as differing). */
static void config_diff(const char *was, const char *now, char *out, size_t size)
{
    for (const char *p = now; *p;) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t klen = eq ? (size_t)(eq - p) : n, vlen = 0;
        const char *v = config_value(was, p, klen, &vlen);
        size_t mylen = eq ? n - klen - 1 : 0;
        if (v == NULL || vlen != mylen || strncmp(v, eq ? eq + 1 : "", vlen) != 0) {
            snprintf(out, size, "%.*s=%.*s in the checkpoint, %.*s in this run (resume with "
                     "the checkpoint's setting, or train into another --checkpoint)",
                     (int)klen, p, v ? (int)vlen : 6, v ? v : "(none)", (int)n, p);
            return;
        }
        p = end ? end + 1 : p + n;
    }
    snprintf(out, size, "a setting this run does not have (checkpoint: %.300s)", was);
}

int halo_checkpoint_read(const char *dir, halo_checkpoint *ck)
{
    char path[4200];
    halo_json *meta = NULL;
    int rc = 0;
    HALO_CHECK(halo_path_join(path, sizeof path, dir, "meta.json"));
    if (!halo_path_exists(dir)) {
        return halo_errorf(HALO_EINPUT, "%s: no checkpoint there (nothing to resume from)", dir);
    }
    if (!halo_is_dir(dir) || !halo_path_exists(path)) {
        return halo_errorf(HALO_EINPUT, "%s: not a checkpoint directory (no meta.json)", dir);
    }
    HALO_CHECK(halo_json_load(path, &meta));
    int64_t v, nparams;
    uint64_t hash;
    HALO_TRY(parse_hex64(meta, "config_hash", path, &hash));
    HALO_TRY(halo_json_get_i64(meta, "nparams", path, &nparams));
    const char *was = NULL;
    if (hash != ck->config_hash && ck->config != NULL &&
        halo_json_get_str(meta, "config", path, &was) == 0) {
        char what[512];
        config_diff(was, ck->config, what, sizeof what);
        rc = halo_errorf(HALO_EINPUT, "%s: checkpoint of another configuration: %s", dir, what);
        goto fail;
    }
    if (hash != ck->config_hash) {
        rc = halo_errorf(HALO_EINPUT,
                         "%s: checkpoint of another configuration (hash %016" PRIx64
                         ", this run %016" PRIx64 ")",
                         dir, hash, ck->config_hash);
        goto fail;
    }
    if (nparams != ck->nparams) {
        rc = halo_errorf(HALO_EINPUT, "%s: %lld parameters, the model has %lld", dir,
                         (long long)nparams, (long long)ck->nparams);
        goto fail;
    }
    HALO_TRY(halo_json_get_i64(meta, "epoch", path, &v));
    if (v < 0 || v > 2147483647LL) {
        rc = halo_errorf(HALO_EINPUT, "%s: \"epoch\" is %lld, not a count of epochs", path,
                         (long long)v);
        goto fail;
    }
    ck->epoch = (int)v;
    HALO_TRY(halo_json_get_i64(meta, "step", path, &ck->step));
    if (ck->step < 0) {
        rc = halo_errorf(HALO_EINPUT, "%s: \"step\" is %lld, not a count of steps", path,
                         (long long)ck->step);
        goto fail;
    }
    HALO_TRY(parse_hex64(meta, "seed", path, &ck->seed));
    float *arrays[3] = {ck->params, ck->adam_m, ck->adam_v};
    size_t bytes = (size_t)nparams * sizeof(float);
    for (int i = 0; i < 3; i++) {
        halo_map m;
        const char *crc_hex;
        HALO_TRY(halo_path_join(path, sizeof path, dir, ck_files[i]));
        HALO_TRY(halo_map_file(path, bytes, &m));
        HALO_TRY(halo_json_get_str(meta, ck_files[i], dir, &crc_hex));
        char got[16];
        snprintf(got, sizeof got, "%08x", halo_crc32(0, m.data, bytes));
        if (strcmp(got, crc_hex) != 0) {
            halo_unmap(&m);
            rc = halo_errorf(HALO_EINPUT, "%s: checksum %s, meta.json says %s", path, got,
                             crc_hex);
            goto fail;
        }
        if (bytes > 0) {
            memcpy(arrays[i], m.data, bytes);
        }
        halo_unmap(&m);
    }
fail:
    halo_json_free(meta);
    return rc;
}
