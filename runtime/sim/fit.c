/* Fitting a profile's stage constants to a measured run. */
#include "sim/fit.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/netem.h"
#include "sim/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The last "summary" record of a metrics file, parsed. */
static int last_summary(const char *path, halo_json **out)
{
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    int rc = 0;
    *out = NULL;
    size_t at = 0;
    int line = 0;
    while (at < len && rc == 0) {
        size_t end = at;
        while (end < len && text[end] != '\n') {
            end++;
        }
        line++;
        if (end > at) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%d", path, line);
            halo_json *v = NULL;
            rc = halo_json_parse(text + at, end - at, where, &v);
            const halo_json *ty = rc == 0 ? halo_json_get(v, "type") : NULL;
            if (ty != NULL && ty->type == HALO_JSON_STRING && strcmp(ty->string, "summary") == 0) {
                halo_json_free(*out);
                *out = v;
            } else {
                halo_json_free(v);
            }
        }
        at = end + 1;
    }
    halo_free(text);
    if (rc == 0 && *out == NULL) {
        rc = halo_errorf(HALO_EINPUT, "%s: no summary record (not a finished halo train run?)",
                         path);
    }
    if (rc < 0) {
        halo_json_free(*out);
        *out = NULL;
    }
    return rc;
}

/* A string member, NULL when absent or null. */
static const char *opt_str(const halo_json *v, const char *key)
{
    const halo_json *m = halo_json_get(v, key);
    return m != NULL && m->type == HALO_JSON_STRING ? m->string : NULL;
}

int halo_sim_recorded_load(const char *metrics, halo_sim_recorded *out)
{
    memset(out, 0, sizeof *out);
    HALO_CHECK(last_summary(metrics, &out->tree));
    const halo_json *s = out->tree, *pa = halo_json_get(s, "params");
    halo_sim_opts *o = &out->o;
    halo_sim_opts_default(o);
    int64_t epochs = 0, ranks = 0, batch = 0, hidden = 0, seed = 0, depth = -1, th = 0;
    const char *where = metrics;
    int rc = halo_json_get_i64(s, "epochs", where, &epochs);
    rc = rc < 0 ? rc : halo_json_get_i64(s, "ranks", where, &ranks);
    rc = rc < 0 ? rc : halo_json_get_i64(pa, "batch", where, &batch);
    rc = rc < 0 ? rc : halo_json_get_i64(pa, "hidden", where, &hidden);
    rc = rc < 0 ? rc : halo_json_get_i64(pa, "seed", where, &seed);
    rc = rc < 0 ? rc : halo_json_get_i64(pa, "depth", where, &depth);
    rc = rc < 0 ? rc : halo_json_get_i64(pa, "sampler_threads", where, &th);
    const char *pdir = NULL, *batching = NULL;
    rc = rc < 0 ? rc : halo_json_get_str(pa, "pdir", where, &pdir);
    rc = rc < 0 ? rc : halo_json_get_str(pa, "batching", where, &batching);
    if (rc == 0 && (epochs < 1 || ranks < 1 || batch < 1 || hidden < 1 || depth < -1 || th < 0)) {
        rc = halo_errorf(HALO_EINPUT, "%s: summary record out of range", metrics);
    }
    const halo_json *sets = halo_json_get(pa, "sets");
    if (rc == 0 && sets != NULL && sets->type == HALO_JSON_ARRAY) {
        for (size_t i = 0; i < sets->len && i < 64; i++) {
            if (sets->items[i]->type == HALO_JSON_STRING) {
                out->sets[out->o.nsets++] = sets->items[i]->string;
            }
        }
    }
    if (rc == 0) {
        halo_netem ne;
        rc = halo_netem_parse(opt_str(pa, "netem"), &ne);
        out->netem_lat_s = ne.lat_s;
        out->netem_bw = ne.bw_bits / 8.0;
    }
    if (rc < 0) {
        halo_sim_recorded_free(out);
        return rc;
    }
    o->pdir = pdir;
    o->policy = opt_str(pa, "policy_file");
    o->sets = out->sets;
    o->epochs = (int)epochs;
    o->batch = batch;
    o->global_batching = strcmp(batching, "global") == 0;
    o->fanouts = opt_str(pa, "fanouts_flag");
    o->hidden = (int)hidden;
    o->seed = (uint64_t)seed;
    o->depth = (int)depth;
    o->sampler_threads = (int)th;
    out->ranks = (int)ranks;
    return 0;
}

void halo_sim_recorded_free(halo_sim_recorded *r)
{
    halo_json_free(r->tree);
    memset(r, 0, sizeof *r);
}

/* Multiplies a time constant by r, divides a rate by it. */
static void slower(double *time_s, double r)
{
    *time_s *= r;
}

static void slower_rate(double *rate, double r)
{
    *rate /= r;
}

/* One round's measured / simulated ratio per stage for the run in `metrics` (recorded in rec):
 * ratio[k] = 1 where a stage is 0 on either side. */
static int fit_ratios(const halo_sim_recorded *rec, const char *metrics, halo_sim_profile *p,
                      double *ratio, double *meas, double *simd)
{
    p->machines = 1;
    p->trainers = rec->ranks;
    p->netem_lat_s = rec->netem_lat_s;
    p->netem_bw = rec->netem_bw;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.fit-%d.jsonl", metrics, (int)getpid());
    halo_sim_opts o = rec->o;
    o.profile = p;
    o.metrics = tmp;
    halo_sim_result res;
    int rc = halo_sim_run(&o, &res);
    halo_sim_comparison c;
    if (rc == 0) {
        rc = halo_sim_compare_files(metrics, tmp, &c);
    }
    unlink(tmp);
    HALO_CHECK(rc);
    if (c.mismatches > 0) {
        return halo_errorf(HALO_EINPUT, "%s: the replay's counts differ from the run's (%s): not "
                           "the same partition or policy?", metrics, c.first_mismatch);
    }
    for (int k = 0; k < HALO_SIM_T_N; k++) {
        ratio[k] = c.simulated[k] > 0 && c.measured[k] > 0 ? c.measured[k] / c.simulated[k] : 1.0;
    }
    *meas = c.measured[HALO_SIM_T_EPOCH];
    *simd = c.simulated[HALO_SIM_T_EPOCH];
    return 0;
}

/* Scales the stage constants of p by the per-stage ratios (measured / simulated). */
static void fit_scale(halo_sim_profile *p, const double *ratio)
{
    double r = ratio[HALO_SIM_T_SAMPLE];
    slower(&p->sample_edge_s, r);
    slower(&p->sample_node_s, r);
    slower(&p->block_node_s, r);
    r = ratio[HALO_SIM_T_FETCH];
    slower_rate(&p->gather_bw, r);
    slower_rate(&p->memcpy_bw, r);
    slower(&p->lookup_node_s, r);
    slower(&p->hook_s, r);
    slower(&p->shm_lat_s, r);
    slower_rate(&p->shm_bw, r);
    slower(&p->msg_overhead_s, r);
    r = ratio[HALO_SIM_T_COMPUTE];
    slower_rate(&p->gemm_flops, r);
    slower_rate(&p->agg_bw, r);
    slower(&p->step_overhead_s, r);
    slower_rate(&p->adam_bw, r);
    slower(&p->allreduce_lat_s, ratio[HALO_SIM_T_ALLREDUCE]);
}

/* Mean log of measured / simulated epoch time over the runs with over[i] == want. */
static int fit_epoch_lr(halo_sim_recorded *rec, const char **files, const int *over, int nrun,
                        int want, halo_sim_profile *p, double *lr)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < nrun; i++) {
        if (over[i] != want) {
            continue;
        }
        double ratio[HALO_SIM_T_N], m = 0, sd = 0;
        HALO_CHECK(fit_ratios(&rec[i], files[i], p, ratio, &m, &sd));
        sum += log(ratio[HALO_SIM_T_EPOCH]);
        n++;
    }
    *lr = n > 0 ? sum / n : 0;
    return 0;
}

int halo_sim_fit(const char *metrics, int rounds, halo_sim_profile *p, FILE *out)
{
    /* the measured runs: a comma-separated list, fitted together */
    enum { MAX_RUNS = 16 };
    char list[8192];
    snprintf(list, sizeof list, "%s", metrics);
    const char *files[MAX_RUNS];
    halo_sim_recorded rec[MAX_RUNS];
    int over[MAX_RUNS];
    int nrun = 0, nover = 0, rc = 0;
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f != NULL && rc == 0;
         f = strtok_r(NULL, ",", &save)) {
        if (nrun == MAX_RUNS) {
            rc = halo_errorf(HALO_EUSAGE, "--from-metrics: at most %d runs", MAX_RUNS);
            break;
        }
        files[nrun] = f;
        rc = halo_sim_recorded_load(f, &rec[nrun]);
        if (rc == 0) {
            /* more trainer processes on the machine than cores: these runs fit the penalty */
            over[nrun] = rec[nrun].ranks > p->cores;
            nover += over[nrun];
            nrun++;
        }
    }
    if (rc == 0 && nrun == 0) {
        rc = halo_errorf(HALO_EUSAGE, "--from-metrics: no file given");
    }
    /* 1. the stage constants, from the runs that have a core per process (all runs if none) */
    int base = nover < nrun ? 0 : 1;
    for (int round = 0; round <= rounds && rc == 0; round++) {
        double lr[HALO_SIM_T_N] = {0}, err = 0;
        int n = 0;
        for (int i = 0; i < nrun && rc == 0; i++) {
            if (over[i] != base) {
                continue;
            }
            double ratio[HALO_SIM_T_N], m = 0, sd = 0;
            rc = fit_ratios(&rec[i], files[i], p, ratio, &m, &sd);
            for (int k = 0; rc == 0 && k < HALO_SIM_T_N; k++) {
                lr[k] += log(ratio[k]);
            }
            err = rc == 0 && fabs(sd - m) / m > err ? fabs(sd - m) / m : err;
            n++;
        }
        if (rc < 0) {
            break;
        }
        double ratio[HALO_SIM_T_N];
        for (int k = 0; k < HALO_SIM_T_N; k++) {
            ratio[k] = exp(lr[k] / (n > 0 ? n : 1));
        }
        if (out != NULL) {
            fprintf(out, "fit round %d over %d run%s: worst epoch error %.1f%%; ratios sample %.3f "
                    "fetch %.3f compute %.3f allreduce %.3f\n", round, n, n == 1 ? "" : "s",
                    100.0 * err, ratio[HALO_SIM_T_SAMPLE], ratio[HALO_SIM_T_FETCH],
                    ratio[HALO_SIM_T_COMPUTE], ratio[HALO_SIM_T_ALLREDUCE]);
        }
        if (round < rounds) {
            fit_scale(p, ratio);
        }
    }
    /* 2. the oversubscription penalty, from the runs with more processes than cores: the
       simulated epoch grows with it, so bisect for measured == simulated on average */
    if (rc == 0 && nover > 0 && base == 0) {
        double lo = 0, hi = 8, lr = 0;
        p->oversub_penalty = 0;
        rc = fit_epoch_lr(rec, files, over, nrun, 1, p, &lr);
        if (rc == 0 && lr > 0) {
            for (int it = 0; it < 14 && rc == 0; it++) {
                p->oversub_penalty = (lo + hi) / 2;
                rc = fit_epoch_lr(rec, files, over, nrun, 1, p, &lr);
                if (lr > 0) {
                    lo = p->oversub_penalty;
                } else {
                    hi = p->oversub_penalty;
                }
            }
        }
        if (rc == 0 && out != NULL) {
            fprintf(out, "fit: oversubscription penalty %.4f over %d run%s (epoch error %+.1f%%)\n",
                    p->oversub_penalty, nover, nover == 1 ? "" : "s", 100.0 * (exp(-lr) - 1));
        }
    }
    for (int i = 0; i < nrun; i++) {
        halo_sim_recorded_free(&rec[i]);
    }
    return rc;
}
