/* Fitting a profile's stage constants to a measured run. */
#include "sim/fit.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
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

/* The stages the fit scales, with their HALO_SIM_T_* and their names. */
enum { FIT_SAMPLE, FIT_FETCH, FIT_COMPUTE, FIT_ALLREDUCE, FIT_N };
static const int fit_stage[FIT_N] = {HALO_SIM_T_SAMPLE, HALO_SIM_T_FETCH, HALO_SIM_T_COMPUTE,
                                     HALO_SIM_T_ALLREDUCE};
static const char *const fit_name[FIT_N] = {"sample", "fetch", "compute", "allreduce"};
/* ... and the CPU work of the stage where the measured run records it (the thread's CPU,
 * polling left out): the factors then correct the cost of the work, and the schedule (cores,
 * exchanges, the pipeline) stays the engine's; -1: the allreduce is fitted on its time. */
static const int fit_cpu[FIT_N] = {HALO_SIM_T_SAMPLE_CPU, HALO_SIM_T_FETCH_CPU,
                                   HALO_SIM_T_COMPUTE_CPU, -1};

/* A stage is identified by the runs when it is at least this share of every run's measured
 * epoch and the runs' measured / simulated ratios agree within FIT_AGREE (max / min). */
#define FIT_MIN_SHARE 0.05
#define FIT_AGREE 1.5
/* Bounds of a fit factor: the measured constants are trusted to within 2x. */
#define FIT_MIN 0.5
#define FIT_MAX 2.0

/* The profile's fit factor of stage k. */
static double *fit_factor(halo_sim_profile *p, int k)
{
    switch (k) {
    case FIT_SAMPLE: return &p->fit_sample;
    case FIT_FETCH: return &p->fit_fetch;
    case FIT_COMPUTE: return &p->fit_compute;
    default: return &p->fit_allreduce;
    }
}

/* One round's measured / simulated ratio per stage for the run in `metrics` (recorded in rec):
 * ratio[k] = 1 where a stage is 0 on either side; share[k] = the stage's measured seconds over
 * the measured epoch. */
static int fit_ratios(const halo_sim_recorded *rec, const char *metrics, halo_sim_profile *p,
                      double *ratio, double *share, double *meas, double *simd)
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
    int lvl = halo_log_level();
    halo_log_set_level(HALO_LOG_QUIET); /* the replay's notices, once per run and round: noise */
    int rc = halo_sim_run(&o, &res);
    halo_log_set_level(lvl);
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
    double ep = c.measured[HALO_SIM_T_EPOCH];
    for (int k = 0; k < HALO_SIM_T_N; k++) {
        ratio[k] = c.simulated[k] > 0 && c.measured[k] > 0 ? c.measured[k] / c.simulated[k] : 1.0;
        share[k] = ep > 0 ? c.measured[k] / ep : 0;
    }
    *meas = ep;
    *simd = c.simulated[HALO_SIM_T_EPOCH];
    return 0;
}

/* What one round saw over the fitted runs, per stage. */
typedef struct fit_round {
    int n;                 /* runs */
    double lr[FIT_N];      /* sum of log ratios */
    double lo[FIT_N];      /* smallest ratio */
    double hi[FIT_N];      /* largest ratio */
    double share[FIT_N];   /* smallest share of the epoch */
    double err;            /* worst |epoch error| */
    int on_cpu;            /* stages fitted on their CPU work (the runs record it) */
} fit_round;

/* Simulates every run with over[i] == want and gathers their per-stage ratios into fr. */
static int fit_observe(halo_sim_recorded *rec, const char **files, const int *over, int nrun,
                       int want, halo_sim_profile *p, fit_round *fr)
{
    memset(fr, 0, sizeof *fr);
    for (int k = 0; k < FIT_N; k++) {
        fr->lo[k] = INFINITY;
        fr->share[k] = INFINITY;
    }
    for (int i = 0; i < nrun; i++) {
        if (over[i] != want) {
            continue;
        }
        double ratio[HALO_SIM_T_N], share[HALO_SIM_T_N], m = 0, sd = 0;
        HALO_CHECK(fit_ratios(&rec[i], files[i], p, ratio, share, &m, &sd));
        for (int k = 0; k < FIT_N; k++) {
            int t = fit_cpu[k] >= 0 && share[fit_cpu[k]] > 0 ? fit_cpu[k] : fit_stage[k];
            fr->on_cpu += t != fit_stage[k] && fr->n == 0;
            double r = ratio[t];
            fr->lr[k] += log(r);
            fr->lo[k] = r < fr->lo[k] ? r : fr->lo[k];
            fr->hi[k] = r > fr->hi[k] ? r : fr->hi[k];
            double sh = share[t];
            fr->share[k] = sh < fr->share[k] ? sh : fr->share[k];
        }
        double e = m > 0 ? fabs(sd - m) / m : 0;
        fr->err = e > fr->err ? e : fr->err;
        fr->n++;
    }
    return 0;
}

/* Moves each identified stage's factor by the geometric mean of its ratios, within the bounds;
 * logs the round, and the stages it refuses to move. */
static void fit_apply(const fit_round *fr, int round, bool last, halo_sim_profile *p, FILE *out)
{
    if (out != NULL) {
        fprintf(out, "fit round %d over %d run%s: worst epoch error %.1f%%; ratios%s", round, fr->n,
                fr->n == 1 ? "" : "s", 100.0 * fr->err,
                fr->on_cpu > 0 ? " (sample, fetch, compute: of their CPU work)" : "");
        for (int k = 0; k < FIT_N; k++) {
            fprintf(out, " %s %.3f", fit_name[k], exp(fr->lr[k] / (fr->n > 0 ? fr->n : 1)));
        }
        fputc('\n', out);
    }
    for (int k = 0; k < FIT_N && !last && fr->n > 0; k++) {
        double *f = fit_factor(p, k);
        bool shared = fr->share[k] >= FIT_MIN_SHARE;
        bool agree = fr->hi[k] <= FIT_AGREE * fr->lo[k];
        if (!shared || !agree) {
            if (out != NULL && round == 0) {
                fprintf(out, "fit: %s not identified by these runs (%s): its factor stays %.3f\n",
                        fit_name[k], !shared ? "under 5% of an epoch" : "the runs disagree",
                        *f);
            }
            continue;
        }
        double nf = *f * exp(fr->lr[k] / fr->n);
        if ((nf < FIT_MIN || nf > FIT_MAX) && out != NULL) {
            fprintf(out, "fit: %s wants a factor of %.3g, held at %g: the runs and the "
                    "micro-benchmarks disagree by more than 2x (a loaded machine, or work the "
                    "model misses)\n", fit_name[k], nf, nf < FIT_MIN ? FIT_MIN : FIT_MAX);
        }
        nf = nf < FIT_MIN ? FIT_MIN : nf > FIT_MAX ? FIT_MAX : nf;
        char buf[32];
        snprintf(buf, sizeof buf, "%.4g", nf); /* no more digits than the figures hold */
        *f = strtod(buf, NULL);
    }
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
        double ratio[HALO_SIM_T_N], share[HALO_SIM_T_N], m = 0, sd = 0;
        HALO_CHECK(fit_ratios(&rec[i], files[i], p, ratio, share, &m, &sd));
        sum += log(ratio[HALO_SIM_T_EPOCH]);
        n++;
    }
    *lr = n > 0 ? sum / n : 0;
    return 0;
}

/* Sets the penalty the fit bisects to x: oversub_penalty, or on a profile with penalties
 * measured on training (crowd_ranks > 0) the three crowd_* in the proportions c0 they were
 * measured in, the largest x (all x when none was above 0). Returns p. */
static halo_sim_profile *set_penalty(halo_sim_profile *p, const double c0[3], double x)
{
    if (!(p->crowd_ranks > 0)) {
        p->oversub_penalty = x;
        return p;
    }
    double m = fmax(c0[0], fmax(c0[1], c0[2]));
    double *c[3] = {&p->crowd_sample, &p->crowd_fetch, &p->crowd_compute};
    for (int k = 0; k < 3; k++) {
        *c[k] = m > 0 ? x * c0[k] / m : x;
    }
    return p;
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
    /* 1. the stage factors, from the runs that have a core per process (all runs if none) */
    int base = nover < nrun ? 0 : 1;
    for (int round = 0; round <= rounds && rc == 0; round++) {
        fit_round fr;
        rc = fit_observe(rec, files, over, nrun, base, p, &fr);
        if (rc == 0) {
            fit_apply(&fr, round, round == rounds, p, out);
        }
    }
    /* 2. the oversubscription penalty, from the runs with more processes than cores: the
       simulated epoch grows with it, so bisect for measured == simulated on average (a
       profile with penalties measured on training: the three scaled together, the largest
       bisected) */
    if (rc == 0 && nover > 0 && base == 0) {
        double lo = 0, hi = 8, lr = 0, x = 0;
        const double c0[3] = {p->crowd_sample, p->crowd_fetch, p->crowd_compute};
        rc = fit_epoch_lr(rec, files, over, nrun, 1, set_penalty(p, c0, 0), &lr);
        if (rc == 0 && lr > 0) {
            for (int it = 0; it < 14 && rc == 0; it++) {
                x = (lo + hi) / 2;
                rc = fit_epoch_lr(rec, files, over, nrun, 1, set_penalty(p, c0, x), &lr);
                if (lr > 0) {
                    lo = x;
                } else {
                    hi = x;
                }
            }
        }
        if (rc == 0 && out != NULL && p->crowd_ranks > 0) {
            fprintf(out, "fit: crowding penalties %.4f (sampling), %.4f (fetch), %.4f (compute) "
                    "over %d run%s (epoch error %+.1f%%)\n", p->crowd_sample, p->crowd_fetch,
                    p->crowd_compute, nover, nover == 1 ? "" : "s", 100.0 * (exp(-lr) - 1));
        } else if (rc == 0 && out != NULL) {
            fprintf(out, "fit: oversubscription penalty %.4f over %d run%s (epoch error %+.1f%%)\n",
                    p->oversub_penalty, nover, nover == 1 ? "" : "s", 100.0 * (exp(-lr) - 1));
        }
    }
    for (int i = 0; i < nrun; i++) {
        halo_sim_recorded_free(&rec[i]);
    }
    return rc;
}
