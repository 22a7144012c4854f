/* The lab registry, the grading driver (scratch directory, the student's sandbox options, the
 * dispatch to a lab) and the two reports (table, JSON). */
#include "lab/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/timer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* One lab. */
typedef struct lab_def {
    const char *name;                                    /* folder under experiments/labs/ */
    const char *title;                                   /* one line */
    const char *hooks;                                   /* hooks the student writes */
    int (*run)(halo_lab_env *env, halo_lab_result *res); /* builds, baselines, grades */
} lab_def;

static const lab_def lab_defs[HALO_LAB_COUNT] = {
    {"lab1-partition", "edge cut between random (0) and METIS (full), balance <= 1.05", "partition",
     halo_lab_partition},
    {"lab2-fanout", "reach the 10,25 baseline's accuracy with fewer sampled edges", "fanout",
     halo_lab_fanout},
    {"lab3-cache", "hit rate at 10% capacity between LRU (0) and Belady (full)",
     "cache_init, cache_batch", halo_lab_cache},
    {"lab4-adaptive", "simulated epoch time on two clusters between distdgl.lua (0) and the best of massivegnn.lua, distdglv2.lua and both (full)",
     "cache_init, cache_batch, epoch_end, pipeline", halo_lab_adaptive},
};

void halo_lab_opts_default(halo_lab_opts *o)
{
    memset(o, 0, sizeof *o);
    o->lab = 1;
    o->seed = 1;
    o->time_limit_s = 60;
}

const char *halo_lab_name(int n)
{
    return n >= 1 && n <= HALO_LAB_COUNT ? lab_defs[n - 1].name : NULL;
}

const char *halo_lab_title(int n)
{
    return n >= 1 && n <= HALO_LAB_COUNT ? lab_defs[n - 1].title : NULL;
}

const char *halo_lab_hooks(int n)
{
    return n >= 1 && n <= HALO_LAB_COUNT ? lab_defs[n - 1].hooks : NULL;
}

/* The tree with policies/ and experiments/clusters/: the caller's, else the source tree halo
 * was built from, else PREFIX/share/halo beside an installed PREFIX/bin/halo. */
static void find_root(const halo_lab_opts *o, const char *exe, char *out, size_t size)
{
    if (o->root != NULL) {
        snprintf(out, size, "%s", o->root);
        return;
    }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/policies/lru.lua", HALO_ROOT);
    if (halo_path_exists(probe)) {
        snprintf(out, size, "%s", HALO_ROOT);
        return;
    }
    char dir[2048];
    size_t n = strlen(exe);
    char *slash = NULL;
    if (n < sizeof dir) {
        memcpy(dir, exe, n + 1);
        slash = strrchr(dir, '/');
    }
    if (slash != NULL) {
        *slash = '\0';
        snprintf(probe, sizeof probe, "%s/../share/halo/policies/lru.lua", dir);
        if (halo_path_exists(probe)) {
            snprintf(probe, sizeof probe, "%s/../share/halo", dir);
            snprintf(out, size, "%s", probe);
            return;
        }
    }
    snprintf(out, size, "%s", HALO_ROOT);
}

/* The public check's seed: fixed, printed in the lab READMEs. */
#define LAB_PUBLIC_SEED 2024

int halo_lab_grade(const halo_lab_opts *o, halo_lab_result *res)
{
    memset(res, 0, sizeof *res);
    if (o->lab < 1 || o->lab > HALO_LAB_COUNT) {
        return halo_errorf(HALO_EUSAGE,
                           "lab: no lab %d (there are labs 1 to %d, see halo lab list)", o->lab,
                           HALO_LAB_COUNT);
    }
    if (o->student == NULL || !halo_path_exists(o->student) || halo_is_dir(o->student)) {
        return halo_errorf(HALO_EIO, "lab: %s: no such policy file",
                           o->student != NULL ? o->student : "(none)");
    }
    if (!(o->time_limit_s > 0)) {
        return halo_errorf(HALO_EUSAGE, "lab: the time limit must be > 0 seconds");
    }
    const lab_def *d = &lab_defs[o->lab - 1];
    halo_lab_env env;
    memset(&env, 0, sizeof env);
    env.o = o;
    env.seed = o->check ? LAB_PUBLIC_SEED : o->seed;
    if (o->exe != NULL) {
        snprintf(env.exe, sizeof env.exe, "%s", o->exe);
    } else {
        ssize_t n = readlink("/proc/self/exe", env.exe, sizeof env.exe - 1);
        if (n <= 0) {
            return halo_errorf(HALO_EIO, "lab: cannot find the halo binary (/proc/self/exe): %s",
                               strerror(errno));
        }
        env.exe[n] = '\0';
    }
    find_root(o, env.exe, env.root, sizeof env.root);
    const char *tmp = o->tmp != NULL ? o->tmp : getenv("TMPDIR");
    snprintf(env.dir, sizeof env.dir, "%s/halo-lab.XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(env.dir) == NULL) {
        return halo_errorf(HALO_EIO, "lab: cannot create a scratch directory %s: %s", env.dir,
                           strerror(errno));
    }
    env.student.path = o->student;
    env.student.rank = -1;
    env.student.budget = o->budget;
    env.student.mem_limit = o->mem_limit;

    res->lab = o->lab;
    snprintf(res->name, sizeof res->name, "%s", d->name);
    res->check = o->check;
    res->seed = env.seed;
    snprintf(res->student, sizeof res->student, "%s", o->student);
    halo_lab_clean(res->student);
    double t0 = halo_now();
    int rc = d->run(&env, res);
    halo_rmtree(env.dir);
    HALO_CHECK(rc);
    for (int i = 0; i < res->ncriteria; i++) {
        res->score += res->criteria[i].score;
        res->max += res->criteria[i].max;
    }
    res->seconds = halo_now() - t0;
    return 0;
}

/* A figure for the table: "-" when missing, else 4 significant digits. */
static void fig(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "-");
    } else {
        snprintf(buf, size, "%.4g", v);
    }
}

void halo_lab_print_table(const halo_lab_result *res, FILE *out)
{
    fprintf(out, "lab %d %s (%s), seed %llu, policy %s\n", res->lab, res->name,
            res->check ? "public check" : "grade", (unsigned long long)res->seed, res->student);
    fprintf(out, "%-16s %-26s %12s %12s %12s %13s\n", "criterion", "measures", "student",
            "0 marks at", "full at", "score");
    for (int i = 0; i < res->ncriteria; i++) {
        const halo_lab_criterion *c = &res->criteria[i];
        char v[32], z[32], f[32];
        fig(v, sizeof v, c->value);
        fig(z, sizeof z, c->zero);
        fig(f, sizeof f, c->full);
        fprintf(out, "%-16s %-26s %12s %12s %12s %6.1f / %4.0f\n", c->name, c->unit, v, z, f,
                c->score, c->max);
    }
    fprintf(out, "%-16s %-26s %12s %12s %12s %6.1f / %4.0f\n", "total", "", "", "", "", res->score,
            res->max);
    for (int i = 0; i < res->ncriteria; i++) {
        fprintf(out, "  %s: %s (%.1f s)\n", res->criteria[i].name, res->criteria[i].msg,
                res->criteria[i].seconds);
    }
    fprintf(out, "graded in %.1f s\n", res->seconds);
}

static void jw_num(halo_jw *w, const char *key, double v)
{
    halo_jw_key(w, key);
    if (isfinite(v)) {
        halo_jw_f64(w, v);
    } else {
        halo_jw_null(w);
    }
}

void halo_lab_print_json(const halo_lab_result *res, FILE *out)
{
    halo_jw w;
    halo_jw_init(&w, false);
    halo_jw_obj_begin(&w);
    halo_jw_key(&w, "lab");
    halo_jw_i64(&w, res->lab);
    halo_jw_key(&w, "name");
    halo_jw_str(&w, res->name);
    halo_jw_key(&w, "mode");
    halo_jw_str(&w, res->check ? "check" : "grade");
    halo_jw_key(&w, "seed");
    halo_jw_i64(&w, (int64_t)res->seed);
    halo_jw_key(&w, "student");
    halo_jw_str(&w, res->student);
    jw_num(&w, "score", res->score);
    jw_num(&w, "max", res->max);
    jw_num(&w, "seconds", res->seconds);
    halo_jw_key(&w, "criteria");
    halo_jw_arr_begin(&w);
    for (int i = 0; i < res->ncriteria; i++) {
        const halo_lab_criterion *c = &res->criteria[i];
        halo_jw_obj_begin(&w);
        halo_jw_key(&w, "name");
        halo_jw_str(&w, c->name);
        halo_jw_key(&w, "measures");
        halo_jw_str(&w, c->unit);
        jw_num(&w, "value", c->value);
        jw_num(&w, "zero", c->zero);
        jw_num(&w, "full", c->full);
        jw_num(&w, "score", c->score);
        jw_num(&w, "max", c->max);
        jw_num(&w, "seconds", c->seconds);
        halo_jw_key(&w, "message");
        halo_jw_str(&w, c->msg);
        halo_jw_obj_end(&w);
    }
    halo_jw_arr_end(&w);
    halo_jw_obj_end(&w);
    fprintf(out, "%s\n", w.sb.buf);
    halo_jw_free(&w);
}
