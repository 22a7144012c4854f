/* JSON Lines metrics records and their atomically renamed file. */
#include "train/metrics.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "part/part.h"
#include "train/train.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

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
    halo_metrics_epoch_typed_json(out, mode, policy, s, NULL);
}

/* {name: count, ...} */
static void count_map(halo_jw *w, const char *key, int n, const char *const *names,
                      const int64_t *v)
{
    halo_jw_key(w, key);
    halo_jw_obj_begin(w);
    for (int i = 0; i < n; i++) {
        halo_jw_key(w, names[i]);
        halo_jw_i64(w, v[i]);
    }
    halo_jw_obj_end(w);
}

void halo_metrics_epoch_typed_json(halo_sb *out, const char *mode, const char *policy,
                                   const halo_epoch_stats *s, const halo_metrics_types *ty)
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
        {"wait_s", s->wait_s},       {"sample_cpu_s", s->sample_cpu_s},
        {"fetch_cpu_s", s->fetch_cpu_s}, {"compute_cpu_s", s->compute_cpu_s},
        {"poll_cpu_s", s->poll_cpu_s},
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
        {"cache_evicted", s->cache_evicted},
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
    if (ty != NULL) {
        count_map(&w, "input_nodes_per_type", ty->ntypes, ty->ntype, s->input_nodes_type);
        count_map(&w, "remote_nodes_per_type", ty->ntypes, ty->ntype, s->remote_nodes_type);
        count_map(&w, "sampled_edges_per_relation", ty->nrels, ty->rel, s->sampled_edges_rel);
    }
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
    HALO_CHECK(halo_output_file_check(path, "metrics file", HALO_METRICS_SIG, false));
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

void halo_metrics_table_row(FILE *f, int epoch, const halo_epoch_stats *all, int ranks,
                            double loss, double train_acc, double val_acc, bool header)
{
    if (header) {
        fprintf(f, "%5s %8s %9s %8s %8s | %8s %8s %8s %9s %9s %8s  (s, mean over ranks)\n",
                "epoch", "loss", "train_acc", "val_acc", "time_s", "sample", "fetch", "copy",
                "compute", "allreduce", "wait");
    }
    double m[6] = {0}, tmax = 0;
    for (int r = 0; r < ranks; r++) {
        const halo_epoch_stats *s = &all[r];
        m[0] += s->sample_s;
        m[1] += s->fetch_s;
        m[2] += s->copy_s;
        m[3] += s->compute_s;
        m[4] += s->allreduce_s;
        m[5] += s->wait_s;
        tmax = s->time_s > tmax ? s->time_s : tmax;
    }
    char val[16];
    if (val_acc >= 0) {
        snprintf(val, sizeof val, "%.4f", val_acc);
    } else {
        snprintf(val, sizeof val, "-");
    }
    fprintf(f, "%5d %8.4f %9.4f %8s %8.3f | %8.3f %8.3f %8.3f %9.3f %9.3f %8.3f\n", epoch, loss,
            train_acc, val, tmax, m[0] / ranks, m[1] / ranks, m[2] / ranks, m[3] / ranks,
            m[4] / ranks, m[5] / ranks);
    fflush(f);
}

void halo_metrics_types_of(const halo_partinfo *pi, halo_metrics_types *ty)
{
    memset(ty, 0, sizeof *ty);
    ty->ntypes = pi->ntypes;
    ty->nrels = pi->nrels;
    for (int i = 0; i < pi->ntypes; i++) {
        ty->ntype[i] = pi->ntype_name[i];
    }
    for (int i = 0; i < pi->nrels; i++) {
        ty->rel[i] = pi->rel[i].name;
    }
}

void halo_metrics_summary_begin(halo_jw *w, const char *mode)
{
    halo_jw_init(w, false);
    halo_jw_obj_begin(w);
    halo_jw_key(w, "type");
    halo_jw_str(w, "summary");
    halo_jw_key(w, "mode");
    halo_jw_str(w, mode);
}

void halo_metrics_summary_json(halo_sb *out, const halo_train_opts *o,
                               const halo_train_result *res, const halo_metrics_run *run)
{
    halo_jw w;
    halo_metrics_summary_begin(&w, "run");
    halo_jw_key(&w, "epochs");
    halo_jw_i64(&w, res->epochs);
    halo_jw_key(&w, "start_epoch");
    halo_jw_i64(&w, res->start_epoch);
    halo_jw_key(&w, "steps");
    halo_jw_i64(&w, res->steps);
    halo_jw_key(&w, "ranks");
    halo_jw_i64(&w, run->ranks);
    halo_jw_key(&w, "device");
    halo_jw_str(&w, res->device);
    halo_jw_key(&w, "policy");
    halo_jw_str(&w, run->policy);
    halo_jw_key(&w, "mean_epoch_s");
    halo_jw_f64(&w, res->mean_epoch_s);
    halo_jw_key(&w, "val_acc");
    if (res->val_acc >= 0) {
        halo_jw_f64(&w, res->val_acc);
    } else {
        halo_jw_null(&w);
    }
    halo_jw_key(&w, "test_acc");
    if (res->test_acc >= 0) {
        halo_jw_f64(&w, res->test_acc);
    } else {
        halo_jw_null(&w);
    }
    halo_jw_key(&w, "epoch_loss");
    halo_jw_arr_begin(&w);
    for (int e = res->start_epoch; e < res->epochs && e < 1024; e++) {
        halo_jw_f64(&w, res->loss[e]);
    }
    halo_jw_arr_end(&w);
    char hex[24];
    snprintf(hex, sizeof hex, "%016" PRIx64, res->param_checksum);
    halo_jw_key(&w, "param_checksum");
    halo_jw_str(&w, hex);
    halo_jw_key(&w, "params");
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "batch");
    halo_jw_i64(&w, o->batch);
    halo_jw_key(&w, "batching");
    halo_jw_str(&w, run->batching);
    halo_jw_key(&w, "fanouts");
    halo_jw_arr_begin(&w);
    for (int l = 0; l < run->layers; l++) {
        halo_jw_i64(&w, run->fanouts[l]);
    }
    halo_jw_arr_end(&w);
    halo_jw_key(&w, "model");
    halo_jw_str(&w, run->model != NULL ? run->model : "sage");
    if (run->heads > 0) {
        halo_jw_key(&w, "heads");
        halo_jw_i64(&w, run->heads);
        halo_jw_key(&w, "out_heads");
        halo_jw_i64(&w, run->out_heads);
    }
    halo_jw_key(&w, "hidden");
    halo_jw_i64(&w, o->hidden);
    halo_jw_key(&w, "lr");
    halo_jw_f64(&w, o->lr);
    halo_jw_key(&w, "dropout");
    halo_jw_f64(&w, o->dropout);
    halo_jw_key(&w, "seed");
    halo_jw_i64(&w, (int64_t)o->seed);
    halo_jw_key(&w, "eval");
    halo_jw_str(&w, run->eval);
    halo_jw_key(&w, "train_seeds");
    halo_jw_i64(&w, run->train_seeds);
    /* enough of the command line to replay this run in the simulator (halo calibrate
       --from-metrics) */
    char abs[PATH_MAX];
    halo_jw_key(&w, "pdir"); /* absolute, so the replay works from any directory */
    halo_jw_str(&w, realpath(o->pdir, abs) != NULL ? abs : o->pdir);
    halo_jw_key(&w, "policy_file");
    if (o->policy != NULL) {
        halo_jw_str(&w, realpath(o->policy, abs) != NULL ? abs : o->policy);
    } else {
        halo_jw_null(&w);
    }
    halo_jw_key(&w, "sets");
    halo_jw_arr_begin(&w);
    for (int i = 0; i < o->nsets; i++) {
        halo_jw_str(&w, o->sets[i]);
    }
    halo_jw_arr_end(&w);
    halo_jw_key(&w, "fanouts_flag");
    if (o->fanouts != NULL) {
        halo_jw_str(&w, o->fanouts);
    } else {
        halo_jw_null(&w);
    }
    halo_jw_key(&w, "depth");
    halo_jw_i64(&w, o->depth);
    halo_jw_key(&w, "sampler_threads");
    halo_jw_i64(&w, o->sampler_threads);
    halo_jw_key(&w, "netem");
    if (o->netem != NULL) {
        halo_jw_str(&w, o->netem);
    } else {
        halo_jw_null(&w);
    }
    halo_jw_key(&w, "threads");
    halo_jw_i64(&w, run->threads);
    halo_jw_obj_end(&w);
    halo_jw_obj_end(&w);
    halo_sb_puts(out, w.sb.buf);
    halo_jw_free(&w);
}
