/* JSON Lines metrics records and their atomically renamed file. */
#include "train/metrics.h"

#include "core/err.h"
#include "core/mem.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

struct halo_metrics {
    FILE *f;          /* temporary file */
    char path[4096];  /* final name */
    char tmp[4200];   /* temporary name */
};

void halo_metrics_epoch_json(halo_sb *out, const char *mode, const char *policy,
                             const halo_epoch_stats *s)
{
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "type");
    halo_jw_str(&w, "epoch");
    halo_jw_key(&w, "mode");
    halo_jw_str(&w, mode);
    halo_jw_key(&w, "epoch");
    halo_jw_i64(&w, s->epoch);
    halo_jw_key(&w, "rank");
    halo_jw_i64(&w, s->rank);
    halo_jw_key(&w, "ranks");
    halo_jw_i64(&w, s->ranks);
    halo_jw_key(&w, "policy");
    halo_jw_str(&w, policy != NULL ? policy : "default");
    const struct {
        const char *k;
        double v;
    } times[] = {
        {"time_s", s->time_s},       {"sample_s", s->sample_s},
        {"fetch_s", s->fetch_s},     {"copy_s", s->copy_s},
        {"compute_s", s->compute_s}, {"allreduce_s", s->allreduce_s},
        {"wait_s", s->wait_s},
    };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        halo_jw_key(&w, times[i].k);
        halo_jw_f64(&w, times[i].v);
    }
    const struct {
        const char *k;
        int64_t v;
    } counts[] = {
        {"batches", s->batches},           {"sampled_edges", s->sampled_edges},
        {"input_nodes", s->input_nodes},   {"remote_nodes", s->remote_nodes},
        {"cache_hits", s->cache_hits},     {"cache_misses", s->cache_misses},
        {"bytes_remote", s->bytes_remote}, {"bytes_sent", s->bytes_sent},
        {"messages", s->messages},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        halo_jw_key(&w, counts[i].k);
        halo_jw_i64(&w, counts[i].v);
    }
    halo_jw_key(&w, "hit_rate");
    int64_t looked = s->cache_hits + s->cache_misses;
    halo_jw_f64(&w, looked > 0 ? (double)s->cache_hits / (double)looked : 0.0);
    halo_jw_key(&w, "loss");
    halo_jw_f64(&w, s->loss);
    halo_jw_key(&w, "train_acc");
    halo_jw_f64(&w, s->train_acc);
    halo_jw_obj_end(&w);
    halo_sb_puts(out, w.sb.buf);
    halo_jw_free(&w);
}

void halo_metrics_eval_json(halo_sb *out, int epoch, double val_acc, double test_acc)
{
    halo_sb_printf(out, "{\"type\":\"eval\",\"epoch\":%d,\"val_acc\":%.6f,\"test_acc\":%.6f}",
                   epoch, val_acc, test_acc);
}

int halo_metrics_open(const char *path, halo_metrics **out)
{
    halo_metrics *m = HALO_NEW(halo_metrics, 1);
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->tmp, sizeof m->tmp, "%s.tmp-%d", path, (int)getpid());
    m->f = fopen(m->tmp, "w");
    if (m->f == NULL) {
        int e = errno;
        halo_free(m);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    *out = m;
    return 0;
}

int halo_metrics_line(halo_metrics *m, const char *json)
{
    if (fputs(json, m->f) == EOF || fputc('\n', m->f) == EOF || fflush(m->f) == EOF) {
        return halo_errorf(HALO_EIO, "%s: %s", m->path, strerror(errno));
    }
    return 0;
}

int halo_metrics_close(halo_metrics *m)
{
    int rc = 0;
    if (fflush(m->f) == EOF || fsync(fileno(m->f)) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", m->path, strerror(errno));
    }
    if (fclose(m->f) == EOF && rc == 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", m->path, strerror(errno));
    }
    if (rc == 0 && rename(m->tmp, m->path) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", m->path, strerror(errno));
    }
    if (rc < 0) {
        unlink(m->tmp);
    }
    halo_free(m);
    return rc;
}

void halo_metrics_abort(halo_metrics *m)
{
    if (m == NULL) {
        return;
    }
    fclose(m->f);
    unlink(m->tmp);
    halo_free(m);
}
