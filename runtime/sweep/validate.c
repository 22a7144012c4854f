/* The driver of `halo sim validate`: graphs and partitions cached by content, each drawn
 * configuration run with mpirun halo train and with halo sim, and the load checks. */
#include "sweep/validate.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/host.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sim/calibrate.h"
#include "sim/profile.h"
#include "sweep/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The namespace cluster of scripts/cluster.sh the measured runs use. */
typedef struct vcluster {
    char dir[1024];    /* its directory (env, hostfile, mpirun) */
    int hosts;         /* NHOSTS */
    double rate_bps;   /* bytes/s of its shaped links (0: unshaped) */
} vcluster;

/* Everything a run of the validation shares. */
typedef struct vrun {
    const halo_validate_opts *o; /* options */
    const halo_vspace *sp;       /* the space */
    const vcluster *cl;          /* the cluster (hosts 0: this host) */
    const char *profile;         /* the profile halo sim uses */
    halo_vsummary *sum;          /* the load figures go here */
    bool *checked;               /* the load was checked before the first measured run */
} vrun;

/* ---- load ---- */

/* Busy and total jiffies of all CPUs (the "cpu" line of /proc/stat). */
static int cpu_jiffies(double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7])
              : 0;
    if (f) {
        fclose(f);
    }
    if (n < 5) {
        return -1;
    }
    *total = 0;
    for (int i = 0; i < 8; i++) {
        *total += (double)v[i];
    }
    *busy = *total - (double)v[3] - (double)v[4];
    return 0;
}

/* Cores that other work keeps busy over `secs` while this process sleeps (-1: unknown). */
static double busy_cores(double secs, int cores)
{
    double b0, t0, b1, t1;
    if (cpu_jiffies(&b0, &t0) < 0) {
        return -1;
    }
    halo_sleep_s(secs);
    if (cpu_jiffies(&b1, &t1) < 0 || t1 <= t0) {
        return -1;
    }
    return (b1 - b0) / (t1 - t0) * cores;
}

/* The 1-minute load average (-1: unknown). */
static double loadavg1(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double l = -1;
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) {
            l = -1;
        }
        fclose(f);
    }
    return l;
}

/* ---- caches ---- */

/* 16 hex digits of the hash of argv[from..] but any argument equal to skip (NULL: none), and
 * extra. */
static void key_skip(const halo_sweep_cmd *c, int from, const char *skip, const char *extra,
                     char *out)
{
    uint64_t h = HALO_SWEEP_HASH0;
    for (int i = from; i < c->argc; i++) {
        if (skip == NULL || strcmp(c->argv[i], skip) != 0) {
            h = halo_sweep_hash(h, c->argv[i]);
        }
    }
    h = halo_sweep_hash(h, extra ? extra : "");
    halo_sweep_hex(h, out);
}

/* 16 hex digits of the hash of argv[from..] and extra. */
static void key_of(const halo_sweep_cmd *c, int from, const char *extra, char *out)
{
    key_skip(c, from, NULL, extra, out);
}

/* Runs c (its last argument the output directory tmp) and renames tmp to final. */
static int build_dir(const vrun *v, halo_sweep_cmd *c, const char *tmp, const char *final,
                     const char *log)
{
    int rc = halo_sweep_spawn(c, log, v->o->timeout);
    if (rc == 0 && rename(tmp, final) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", final, strerror(errno));
    }
    if (rc < 0) {
        halo_error_prefix(rc, "sim validate: (log %s)", log);
    }
    return rc;
}

/* Writes random features, labels (8 classes) and a 60/20/20 split for the nodes of the plain
 * import in dir (keyed by their original ids) as the text files halo import reads. */
static int synth_node_files(const char *dir, int feat_dim, char files[3][4200])
{
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/orig_id.i64", dir);
    char *ids = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &ids, &len));
    const char *names[3] = {"feat.txt", "labels.txt", "split.txt"};
    FILE *f[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        snprintf(files[k], sizeof files[k], "%.4000s.%s", dir, names[k]);
        f[k] = fopen(files[k], "w");
        if (f[k] == NULL) {
            rc = halo_errorf(HALO_EIO, "%s: %s", files[k], strerror(errno));
        }
    }
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_GEN_FEAT, 0x65646765, 0, 0);
    for (size_t i = 0; rc == 0 && i + 8 <= len; i += 8) {
        long long id;
        memcpy(&id, ids + i, 8);
        int label = (int)halo_rng_below(&r, 8);
        fprintf(f[0], "%lld", id);
        for (int d = 0; d < feat_dim; d++) {
            fprintf(f[0], " %.3f", halo_rng_uniform(&r) + (d % 8 == label ? 1.0 : 0.0));
        }
        double u = halo_rng_uniform(&r);
        fprintf(f[1], "\n%lld %d", id, label);
        fprintf(f[2], "%lld %s\n", id, u < 0.6 ? "train" : u < 0.8 ? "valid" : "test");
        fputc('\n', f[0]);
    }
    for (int k = 0; k < 3; k++) {
        if (f[k] != NULL && fclose(f[k]) != 0 && rc == 0) {
            rc = halo_errorf(HALO_EIO, "%s: %s", files[k], strerror(errno));
        }
    }
    halo_free(ids);
    return rc;
}

/* The graph of an edge-list entry: imported once plain (for its node ids), then again with
 * synthetic features, labels and a split (the edge list has none; times do not depend on
 * their values). */
static int build_edges(const vrun *v, const char *path, int feat_dim, const char *tmp,
                       const char *final, const char *log)
{
    char plain[4300];
    snprintf(plain, sizeof plain, "%s.plain", tmp);
    halo_sweep_cmd c;
    halo_sweep_cmd_init(&c);
    const char *a[] = {v->o->exe, "import", "edgelist", path, "-o", plain};
    for (int i = 0; i < 6; i++) {
        halo_sweep_cmd_add(&c, a[i]);
    }
    int rc = halo_sweep_spawn(&c, log, v->o->timeout);
    halo_sweep_cmd_free(&c);
    char files[3][4200];
    rc = rc < 0 ? rc : synth_node_files(plain, feat_dim, files);
    if (rc == 0) {
        const char *b[] = {v->o->exe, "import", "edgelist", path, "--feat", files[0],
                           "--labels", files[1], "--split", files[2], "-o", tmp};
        for (int i = 0; i < 12; i++) {
            halo_sweep_cmd_add(&c, b[i]);
        }
        rc = build_dir(v, &c, tmp, final, log);
        halo_sweep_cmd_free(&c);
    }
    return rc < 0 ? halo_error_prefix(rc, "sim validate: edge list %s", path) : rc;
}

/* FNV-1a of a file's bytes as 16 hex digits (the cache key of an edge list). */
static int file_key(const char *path, char *out)
{
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    uint64_t h = HALO_SWEEP_HASH0;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    }
    halo_free(text);
    halo_sweep_hex(h, out);
    return 0;
}

/* The graph of configuration c in WORK/graphs/g-KEY (built when absent); gkey gets KEY. */
static int cached_graph(const vrun *v, const halo_vconfig *c, char *gdir, size_t size,
                        char *gkey)
{
    const halo_vgraph *g = &v->sp->graphs[c->graph];
    char num[64], feat[32];
    halo_sweep_fmt_num(c->size, num, sizeof num);
    snprintf(feat, sizeof feat, "%d", c->feat_dim);
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    halo_sweep_cmd_add(&cmd, v->o->exe);
    halo_sweep_cmd_add(&cmd, "gen");
    if (g->kind == HALO_VGRAPH_PRESET) {
        const char *a[] = {"--preset", g->preset, "--scale", num};
        for (int i = 0; i < 4; i++) {
            halo_sweep_cmd_add(&cmd, a[i]);
        }
    } else if (g->kind != HALO_VGRAPH_EDGES) {
        const char *a[] = {g->kind == HALO_VGRAPH_SBM ? "sbm" : "rmat",
                           g->kind == HALO_VGRAPH_SBM ? "--nodes" : "--scale", num,
                           "--feat-dim", feat};
        for (int i = 0; i < 5; i++) {
            halo_sweep_cmd_add(&cmd, a[i]);
        }
    }
    halo_sweep_cmd_add(&cmd, "--seed");
    halo_sweep_cmd_add(&cmd, "1");
    char extra[64] = "";
    int rc = 0;
    if (g->kind == HALO_VGRAPH_EDGES) {
        char fk[17];
        rc = file_key(g->path, fk);
        snprintf(extra, sizeof extra, "edges:%s:f%d", fk, c->feat_dim);
    }
    key_of(&cmd, 1, extra, gkey);
    char tmp[4200], log[4200];
    snprintf(gdir, size, "%s/graphs/g-%s", v->o->work_dir, gkey);
    snprintf(tmp, sizeof tmp, "%.4000s.tmp-%d", gdir, (int)getpid());
    snprintf(log, sizeof log, "%.4000s.log", gdir);
    if (rc == 0 && !halo_is_dir(gdir) && !v->o->dry_run) {
        if (g->kind == HALO_VGRAPH_EDGES) {
            rc = build_edges(v, g->path, c->feat_dim, tmp, gdir, log);
        } else {
            halo_sweep_cmd_add(&cmd, "-o");
            halo_sweep_cmd_add(&cmd, tmp);
            rc = build_dir(v, &cmd, tmp, gdir, log);
        }
    }
    halo_sweep_cmd_free(&cmd);
    return rc;
}

/* The partition of graph gkey into `parts` parts in WORK/parts/p-KEY (built when absent). */
static int cached_part(const vrun *v, const char *gdir, const char *gkey, int parts, char *pdir,
                       size_t size)
{
    char np[16], key[17], tmp[4200], log[4200];
    snprintf(np, sizeof np, "%d", parts);
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    const char *a[] = {v->o->exe, "partition", gdir, "--parts", np};
    for (int i = 0; i < 5; i++) {
        halo_sweep_cmd_add(&cmd, a[i]);
    }
    char extra[64];
    snprintf(extra, sizeof extra, "%s:%d", gkey, parts);
    key_of(&cmd, 3, extra, key);
    snprintf(pdir, size, "%s/parts/p-%s", v->o->work_dir, key);
    snprintf(tmp, sizeof tmp, "%.4000s.tmp-%d", pdir, (int)getpid());
    snprintf(log, sizeof log, "%.4000s.log", pdir);
    int rc = 0;
    if (!halo_is_dir(pdir) && !v->o->dry_run) {
        halo_sweep_cmd_add(&cmd, "-o");
        halo_sweep_cmd_add(&cmd, tmp);
        rc = build_dir(v, &cmd, tmp, pdir, log);
    }
    halo_sweep_cmd_free(&cmd);
    return rc;
}

/* ---- the two runs ---- */

/* The flags train and sim share: epochs, batch, fanouts, hidden, policy and its values,
 * depth, sampler threads, netem, seed. */
static void add_shared(const vrun *v, const halo_vconfig *c, halo_sweep_cmd *cmd)
{
    const halo_vpolicy *p = &v->sp->policies[c->policy];
    char buf[1200];
    snprintf(buf, sizeof buf, "%d", v->sp->epochs);
    halo_sweep_cmd_add(cmd, "--epochs");
    halo_sweep_cmd_add(cmd, buf);
    snprintf(buf, sizeof buf, "%d", c->batch);
    halo_sweep_cmd_add(cmd, "--batch");
    halo_sweep_cmd_add(cmd, buf);
    size_t n = 0;
    for (int l = 0; l < c->layers; l++) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d", l ? "," : "", c->fanout[l]);
    }
    halo_sweep_cmd_add(cmd, "--fanouts");
    halo_sweep_cmd_add(cmd, buf);
    snprintf(buf, sizeof buf, "%d", c->hidden);
    halo_sweep_cmd_add(cmd, "--hidden");
    halo_sweep_cmd_add(cmd, buf);
    halo_sweep_cmd_add(cmd, "--policy");
    halo_sweep_cmd_add(cmd, p->file);
    for (int k = 0; k < p->nparams; k++) {
        char num[64];
        halo_sweep_fmt_num(c->pval[k], num, sizeof num);
        snprintf(buf, sizeof buf, "%s=%s", p->param[k], num);
        halo_sweep_cmd_add(cmd, "--set");
        halo_sweep_cmd_add(cmd, buf);
    }
    snprintf(buf, sizeof buf, "%d", c->depth);
    halo_sweep_cmd_add(cmd, "--depth");
    halo_sweep_cmd_add(cmd, buf);
    snprintf(buf, sizeof buf, "%d", c->sampler_threads);
    halo_sweep_cmd_add(cmd, "--sampler-threads");
    halo_sweep_cmd_add(cmd, buf);
    if (strcmp(v->sp->netem[c->netem], "off") != 0) {
        halo_sweep_cmd_add(cmd, "--netem");
        halo_sweep_cmd_add(cmd, v->sp->netem[c->netem]);
    }
    halo_sweep_cmd_add(cmd, "--seed");
    halo_sweep_cmd_add(cmd, "1");
}

/* The measured run: mpirun (this host's, or the cluster's wrapper) halo train. */
static void train_cmd(const vrun *v, const halo_vconfig *c, const char *pdir, halo_sweep_cmd *cmd)
{
    char np[16], tmo[32], ppr[48];
    snprintf(np, sizeof np, "%d", c->ranks);
    snprintf(tmo, sizeof tmo, "%.0f", v->o->timeout);
    char mpirun[1100], nice[16];
    if (v->o->realtime) {
        /* ahead of every ordinary process; the kernel keeps 5% of the CPU for them */
        halo_sweep_cmd_add(cmd, "chrt");
        halo_sweep_cmd_add(cmd, "-r");
        halo_sweep_cmd_add(cmd, "1");
    }
    if (v->o->priority != 0) {
        /* ahead of (or behind) other work on a shared machine; ranks inherit it */
        snprintf(nice, sizeof nice, "%d", v->o->priority);
        halo_sweep_cmd_add(cmd, "nice");
        halo_sweep_cmd_add(cmd, "-n");
        halo_sweep_cmd_add(cmd, nice);
    }
    snprintf(mpirun, sizeof mpirun, "%s/mpirun", v->cl->dir);
    halo_sweep_cmd_add(cmd, v->cl->hosts > 0 ? mpirun : "mpirun");
    cmd->mpi = true;
    const char *a[] = {"--oversubscribe", "--bind-to", "none", "--timeout", tmo, "-np", np};
    for (int i = 0; i < 7; i++) {
        halo_sweep_cmd_add(cmd, a[i]);
    }
    if (v->cl->hosts > 0) {
        /* block placement, as halo sim puts ranks on machines */
        snprintf(ppr, sizeof ppr, "ppr:%d:node", c->ranks / v->cl->hosts);
        halo_sweep_cmd_add(cmd, "--map-by");
        halo_sweep_cmd_add(cmd, ppr);
    }
    const char *b[] = {v->o->exe, "train", pdir, "--no-table", "--eval", "none"};
    for (int i = 0; i < 6; i++) {
        halo_sweep_cmd_add(cmd, b[i]);
    }
    add_shared(v, c, cmd);
}

/* The load check before the first measured run (none when every run is in the work
 * directory): the 1-minute load average against the cores (it also counts work that has just
 * ended), and the cores other work keeps busy over one second. */
static bool quiet_at_start(const halo_validate_opts *o, int cores, halo_vsummary *s)
{
    s->checked = true;
    s->load_start = loadavg1();
    s->busy_start = busy_cores(1.0, cores);
    /* real-time runs go ahead of other work: only the spread of their epochs judges them */
    if (!o->realtime && ((o->max_load > 0 && s->load_start > o->max_load * cores) ||
                         s->busy_start > o->max_busy * cores)) {
        char load[96] = "";
        if (o->max_load > 0) {
            snprintf(load, sizeof load, "load average %.2f on %d cores (limit %.2f), ",
                     s->load_start, cores, o->max_load * cores);
        }
        snprintf(s->why, sizeof s->why, "machine too loaded to measure: %sother work using %.2f "
                 "cores (limit %.2f)", load, s->busy_start, o->max_busy * cores);
        return false;
    }
    return true;
}

/* Reads the busy figure cached beside a measured run (-1 when absent). */
static double read_busy(const char *path)
{
    FILE *f = fopen(path, "r");
    double b = -1;
    if (f) {
        if (fscanf(f, "%lf", &b) != 1) {
            b = -1;
        }
        fclose(f);
    }
    return b;
}

/* Measures configuration c (or takes its cached run): r->key, r->busy, r->cached; the metrics
 * in WORK/runs/KEY.run.jsonl. */
static int measure(const vrun *v, const char *pdir, int rep, halo_vresult *r, char *metrics,
                   size_t size)
{
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    train_cmd(v, &r->c, pdir, &cmd);
    /* the key leaves out the binary (a build elsewhere takes the same runs; before December
       2026 its path, after mpirun's options, was in the key) and how the run was scheduled
       (chrt, nice); a repeat beyond the first is its own run (the first keeps the key of a
       single measurement) */
    int from = 1 + (v->o->realtime ? 3 : 0) + (v->o->priority != 0 ? 3 : 0);
    char extra[4200];
    const char *dir = v->cl->hosts > 0 ? v->cl->dir : "";
    if (rep > 0) {
        snprintf(extra, sizeof extra, "%.4000s#repeat=%d", dir, rep);
    } else {
        snprintf(extra, sizeof extra, "%.4000s", dir);
    }
    key_skip(&cmd, from, v->o->exe, extra, r->key);
    char base[4200], busyf[4300], log[4300], tmp[4300];
    snprintf(base, sizeof base, "%s/runs/%s", v->o->work_dir, r->key);
    snprintf(metrics, size, "%s.run.jsonl", base);
    snprintf(busyf, sizeof busyf, "%.4000s.busy", base);
    snprintf(log, sizeof log, "%.4000s.log", base);
    snprintf(tmp, sizeof tmp, "%.4100s.tmp-%d", metrics, (int)getpid());
    int rc = 0;
    r->busy = read_busy(busyf);
    r->cached = !v->o->remeasure && halo_path_exists(metrics) && r->busy >= 0;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (!r->cached && !*v->checked) {
        *v->checked = true;
        if (!quiet_at_start(v->o, cores, v->sum) && !v->o->force) {
            halo_sweep_cmd_free(&cmd);
            return 1; /* stop: nothing more is measured */
        }
        halo_sim_calib_speed(1.5, v->sum->speed_run[0]); /* the machine's speed now */
    }
    if (!r->cached) {
        r->busy = busy_cores(0.5, cores);
        halo_sweep_cmd_add(&cmd, "--metrics");
        halo_sweep_cmd_add(&cmd, tmp);
        unlink(log);
        rc = halo_sweep_spawn(&cmd, log, v->o->timeout);
        if (rc == 0 && rename(tmp, metrics) < 0) {
            rc = halo_errorf(HALO_EIO, "%s: %s", metrics, strerror(errno));
        }
        char b[64];
        int n = snprintf(b, sizeof b, "%.4f\n", r->busy);
        rc = rc < 0 ? rc : halo_file_write_atomic(busyf, b, (size_t)n);
        if (rc < 0) {
            unlink(tmp);
            halo_error_prefix(rc, "sim validate: configuration %d (log %s)", r->c.index, log);
        }
    }
    halo_sweep_cmd_free(&cmd);
    return rc;
}

/* --per-graph: the profile with the graph constants measured on partition pdir (halo
 * calibrate --graph pdir --base PROFILE --quick) into WORK/profiles/KEY.lua, measured once. */
static int graph_profile(const vrun *v, const char *pdir, char *out, size_t size)
{
    /* the key has the base profile's text: a profile calibrated again is measured again */
    char key[17], dir[4200], log[4400], tmp[4400], base[17];
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(v->profile, &text, &len));
    halo_sweep_hex(halo_sweep_hash(HALO_SWEEP_HASH0, text), base);
    halo_free(text);
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    const char *a[] = {v->o->exe, "calibrate", "--quick", "--graph", pdir, "--base", v->profile,
                       "-o"};
    for (int i = 0; i < 8; i++) {
        halo_sweep_cmd_add(&cmd, a[i]);
    }
    key_of(&cmd, 1, base, key);
    snprintf(dir, sizeof dir, "%s/profiles", v->o->work_dir);
    snprintf(out, size, "%s/%s.lua", dir, key);
    int rc = 0;
    if (!halo_path_exists(out)) {
        snprintf(log, sizeof log, "%s/%s.log", dir, key);
        snprintf(tmp, sizeof tmp, "%s/%s.tmp-%d.lua", dir, key, (int)getpid());
        halo_sweep_cmd_add(&cmd, tmp);
        rc = halo_mkdir_p(dir);
        rc = rc < 0 ? rc : build_dir(v, &cmd, tmp, out, log);
        if (rc < 0) {
            unlink(tmp);
        }
    }
    halo_sweep_cmd_free(&cmd);
    return rc;
}

/* Simulates configuration c on the profile into WORK/runs/KEY.sim.jsonl. */
static int simulate(const vrun *v, const char *pdir, const halo_vresult *r, char *metrics,
                    size_t size)
{
    char gprof[4300];
    const char *profile = v->profile;
    if (v->o->per_graph) {
        HALO_CHECK(graph_profile(v, pdir, gprof, sizeof gprof));
        profile = gprof;
    }
    char m[16], t[16], log[4300], tmp[4300];
    int hosts = v->cl->hosts > 0 ? v->cl->hosts : 1;
    snprintf(m, sizeof m, "%d", hosts);
    snprintf(t, sizeof t, "%d", r->c.ranks / hosts);
    snprintf(metrics, size, "%s/runs/%s%s.sim.jsonl", v->o->work_dir, r->key,
             v->o->per_graph ? ".graph" : "");
    snprintf(tmp, sizeof tmp, "%.4100s.tmp-%d", metrics, (int)getpid());
    snprintf(log, sizeof log, "%s/runs/%s%s.sim.log", v->o->work_dir, r->key,
             v->o->per_graph ? ".graph" : "");
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    const char *a[] = {v->o->exe, "sim", pdir, "-q", "--cluster", profile, "--machines", m,
                       "--trainers", t};
    for (int i = 0; i < 10; i++) {
        halo_sweep_cmd_add(&cmd, a[i]);
    }
    add_shared(v, &r->c, &cmd);
    halo_sweep_cmd_add(&cmd, "--metrics");
    halo_sweep_cmd_add(&cmd, tmp);
    unlink(log);
    int rc = halo_sweep_spawn(&cmd, log, v->o->timeout);
    if (rc == 0 && rename(tmp, metrics) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", metrics, strerror(errno));
    }
    if (rc < 0) {
        unlink(tmp);
        halo_error_prefix(rc, "sim validate: configuration %d (log %s)", r->c.index, log);
    }
    halo_sweep_cmd_free(&cmd);
    return rc;
}

/* --dry-run: the configuration and the command that would measure it. */
static void dry_print(const vrun *v, halo_vresult *r, const char *pdir)
{
    char graph[96], pol[128];
    halo_vconfig_graph_label(v->sp, &r->c, graph, sizeof graph);
    halo_vconfig_policy_label(v->sp, &r->c, pol, sizeof pol);
    halo_sweep_cmd cmd;
    halo_sweep_cmd_init(&cmd);
    train_cmd(v, &r->c, pdir, &cmd);
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sweep_cmd_text(&cmd, &sb);
    printf("%3d %s, %d ranks, policy %s\n    %s\n", r->c.index, graph, r->c.ranks, pol,
           sb.buf);
    halo_sb_free(&sb);
    halo_sweep_cmd_free(&cmd);
}

/* Draws, builds, measures, simulates and compares configuration i; its partition and
 * simulated metrics in pdir and sim (4400 bytes each), for the repeats. */
static int one_config(const vrun *v, int i, halo_vresult *r, char *pdir, char *sim)
{
    memset(r, 0, sizeof *r);
    halo_vspace_draw(v->sp, v->o->seed, i, &r->c);
    if (v->cl->hosts > 0) {
        /* ranks a multiple of the hosts, at least one per host */
        int h = v->cl->hosts;
        r->c.ranks = r->c.ranks < h ? h : (r->c.ranks + h - 1) / h * h;
    }
    char gdir[4200], gkey[17], run[4400];
    HALO_CHECK(cached_graph(v, &r->c, gdir, sizeof gdir, gkey));
    HALO_CHECK(cached_part(v, gdir, gkey, r->c.ranks, pdir, 4400));
    if (v->o->dry_run) {
        dry_print(v, r, pdir);
        return 0;
    }
    int m = measure(v, pdir, 0, r, run, sizeof run);
    if (m != 0) {
        return m;
    }
    r->repeats = 1;
    HALO_CHECK(simulate(v, pdir, r, sim, 4400));
    int rc = halo_sim_compare_files(run, sim, &r->cmp);
    return rc < 0 ? halo_error_prefix(rc, "sim validate: configuration %d", i) : 0;
}

/* Run rep (1 .. N-1: the second measurement on) of configuration r, measured (or taken from
 * the work directory) and compared with its simulation into *cmp, its key into key; r->busy
 * keeps the most of the repeats. */
static int repeat_one(const vrun *v, int rep, halo_vresult *r, const char *pdir,
                      const char *sim, halo_sim_comparison *cmp, char *key)
{
    halo_vresult t = *r;
    char run[4400];
    int m = measure(v, pdir, rep, &t, run, sizeof run);
    if (m != 0) {
        return m;
    }
    memcpy(key, t.key, sizeof t.key);
    r->busy = t.busy > r->busy ? t.busy : r->busy;
    r->cached = r->cached && t.cached;
    int rc = halo_sim_compare_files(run, sim, cmp);
    return rc < 0 ? halo_error_prefix(rc, "sim validate: configuration %d, repeat %d",
                                      r->c.index, rep + 1)
                  : 0;
}

/* The reference of each configuration among its n_rep comparisons (cmp[rep * n + i], the
 * runs' keys alike): the run whose measured epoch is the median (the lower of the two middle
 * ones), and the repeats' spread. */
static void pick_reference(halo_vresult *r, int n, int n_rep, const halo_sim_comparison *cmp,
                           char (*keys)[17])
{
    for (int i = 0; i < n; i++) {
        int order[9];
        for (int k = 0; k < n_rep; k++) {
            order[k] = k;
        }
        for (int a = 1; a < n_rep; a++) { /* insertion sort by measured epoch */
            for (int b = a; b > 0 && cmp[order[b] * n + i].measured[HALO_SIM_T_EPOCH] <
                                         cmp[order[b - 1] * n + i].measured[HALO_SIM_T_EPOCH];
                 b--) {
                int x = order[b];
                order[b] = order[b - 1];
                order[b - 1] = x;
            }
        }
        int ref = order[(n_rep - 1) / 2];
        double lo = cmp[order[0] * n + i].measured[HALO_SIM_T_EPOCH];
        double hi = cmp[order[n_rep - 1] * n + i].measured[HALO_SIM_T_EPOCH];
        double med = cmp[ref * n + i].measured[HALO_SIM_T_EPOCH];
        r[i].cmp = cmp[ref * n + i];
        memcpy(r[i].key, keys[ref * n + i], sizeof r[i].key);
        r[i].ref = ref;
        r[i].repeats = n_rep;
        r[i].noise = med > 0 ? (hi - lo) / med : 0;
    }
}

/* --repeats: passes 2..N over all the configurations (a drift of the machine spreads over
 * every configuration rather than falling on a few), then each one's reference run. */
static int repeat_passes(const vrun *v, halo_vresult *r, int n, char (*pdir)[4400],
                         char (*sim)[4400])
{
    int n_rep = v->o->repeats;
    halo_sim_comparison *cmp = HALO_NEW(halo_sim_comparison, (size_t)n * (size_t)n_rep);
    char(*keys)[17] = halo_calloc((size_t)n * (size_t)n_rep, sizeof *keys);
    for (int i = 0; i < n; i++) {
        cmp[i] = r[i].cmp;
        memcpy(keys[i], r[i].key, sizeof r[i].key);
    }
    int rc = 0;
    for (int rep = 1; rep < n_rep && rc == 0; rep++) {
        for (int i = 0; i < n && rc == 0; i++) {
            size_t at = (size_t)rep * (size_t)n + (size_t)i;
            rc = repeat_one(v, rep, &r[i], pdir[i], sim[i], &cmp[at], keys[at]);
        }
    }
    if (rc == 0) {
        pick_reference(r, n, n_rep, cmp, keys);
    }
    halo_free(keys);
    halo_free(cmp);
    return rc;
}

/* ---- the cluster ---- */

/* A tc rate ("1gbit", "500mbit", "10mbps") in bytes/s; 0 when empty or not understood. */
static double tc_rate(const char *s)
{
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || x <= 0) {
        return 0;
    }
    double mul = 1;
    switch (*end) {
    case 'k': mul = 1e3, end++; break;
    case 'm': mul = 1e6, end++; break;
    case 'g': mul = 1e9, end++; break;
    case 't': mul = 1e12, end++; break;
    default: break;
    }
    if (strcmp(end, "bit") == 0) {
        return x * mul / 8;
    }
    return strcmp(end, "bps") == 0 ? x * mul : 0;
}

/* Reads DIR/env of a scripts/cluster.sh cluster. */
static int cluster_read(const char *dir, vcluster *cl)
{
    char path[1200], line[512];
    snprintf(path, sizeof path, "%s/env", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return halo_errorf(HALO_EINPUT, "--cluster-hosts %s: no env file (make the cluster with "
                           "scripts/cluster.sh up N)", dir);
    }
    memset(cl, 0, sizeof *cl);
    snprintf(cl->dir, sizeof cl->dir, "%s", dir);
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "NHOSTS=", 7) == 0) {
            cl->hosts = atoi(line + 7);
        } else if (strncmp(line, "RATE=", 5) == 0) {
            cl->rate_bps = tc_rate(line + 5);
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/mpirun", dir);
    if (cl->hosts < 1 || access(path, X_OK) != 0) {
        return halo_errorf(HALO_EINPUT, "--cluster-hosts %s: no NHOSTS in env or no mpirun "
                           "wrapper: not a scripts/cluster.sh cluster", dir);
    }
    return 0;
}

/* The profile of the cluster: the given one with one machine per host, the links at the
 * cluster's tbf rate and the machine's cores shared by the hosts (they run on one machine),
 * written to WORK/cluster-profile.lua. */
static int cluster_profile(const halo_validate_opts *o, const vcluster *cl, char *out,
                           size_t size)
{
    halo_sim_profile p;
    HALO_CHECK(halo_sim_profile_load(o->profile, &p));
    p.machines = cl->hosts;
    p.cores = p.cores / cl->hosts > 0 ? p.cores / cl->hosts : 1;
    if (cl->rate_bps > 0) {
        p.nics = 1;
        p.nic_bw = cl->rate_bps;
    }
    snprintf(out, size, "%s/cluster-profile.lua", o->work_dir);
    char comment[1400];
    snprintf(comment, sizeof comment, "%s for the namespace cluster %s (%d hosts on one "
             "machine; written by halo sim validate)", o->profile, cl->dir, cl->hosts);
    return halo_sim_profile_write(out, &p, comment);
}

/* ---- the run ---- */

/* Marks s unfit when a run was disturbed (other work before it, or epochs that spread). */
static void check_runs(const halo_validate_opts *o, const halo_vresult *r, int n, int cores,
                       int v_hosts, halo_vsummary *s)
{
    for (int i = 0; i < n; i++) {
        if (r[i].busy > s->busy_max) {
            s->busy_max = r[i].busy, s->busy_at = r[i].c.index;
        }
        /* with more busy threads than cores, descheduled ranks make the epochs spread by
           themselves: the spread judges the machine only where the threads fit its cores */
        const halo_vconfig *c = &r[i].c;
        int hosts = v_hosts > 0 ? v_hosts : 1;
        int threads = (c->ranks + hosts - 1) / hosts * (c->depth > 0 ? 2 + c->sampler_threads : 1);
        if (threads <= cores && r[i].cmp.measured_spread > s->spread_max) {
            s->spread_max = r[i].cmp.measured_spread, s->spread_at = r[i].c.index;
        }
    }
    bool busy = !o->realtime && s->busy_max > o->max_busy * cores;
    bool spread = s->spread_max > o->max_spread;
    /* a configuration measured again lands that far from itself in the median: no model of
       the machine can be judged closer than that (three configurations or more) */
    double limit = halo_vrepeat_limit(o->max_repeat_spread, o->repeats);
    bool noisy = o->max_repeat_spread > 0 && s->nnoise >= 3 && s->noise_median > 100 * limit;
    if (s->why[0] == '\0' && (busy || spread || noisy)) {
        char b[160] = "", e[160] = "", q[160] = "";
        if (busy) {
            snprintf(b, sizeof b, "%.2f of %d cores used by other work before configuration %d "
                     "(limit %.2f), ", s->busy_max, cores, s->busy_at, o->max_busy * cores);
        }
        if (spread) {
            snprintf(e, sizeof e, "epoch times spread %.0f%% in configuration %d (limit %.0f%%), ",
                     100 * s->spread_max, s->spread_at, 100 * o->max_spread);
        }
        if (noisy) {
            snprintf(q, sizeof q, "a configuration's %d repeated runs spread %.1f%% in the "
                     "median (limit %.3g%%), ", o->repeats, s->noise_median, 100 * limit);
        }
        snprintf(s->why, sizeof s->why, "machine too loaded to measure: %s%s%s", b, e, q);
        s->why[strlen(s->why) - 2] = '\0'; /* the last ", " */
    }
    s->fit = s->why[0] == '\0';
}

/* The verdict: counts, then load, then the bounds. */
static int verdict(const halo_validate_opts *o, const halo_vsummary *s)
{
    if (s->counts_equal < s->n) {
        return HALO_VALIDATE_COUNTS;
    }
    if (!s->fit && !o->force) {
        return HALO_VALIDATE_UNFIT;
    }
    bool over = (o->max_median > 0 && s->median[HALO_SIM_T_EPOCH] > o->max_median) ||
                (o->max_worst > 0 && s->worst[HALO_SIM_T_EPOCH] > o->max_worst);
    for (int k = 1; k < HALO_SIM_T_WALL && o->max_stage > 0; k++) {
        bool bounded = o->stage_mask ? (o->stage_mask >> k) & 1u : k != HALO_SIM_T_WAIT;
        over = over || (bounded && s->nstage[k] > 0 && s->median[k] > o->max_stage);
    }
    return over ? HALO_VALIDATE_BOUND : 0;
}

/* Writes the profile's validation entry (--record). */
static int record(const halo_validate_opts *o, const halo_vsummary *s)
{
    halo_sim_validation val = {.present = true, .seed = (int64_t)o->seed, .configs = s->n,
                               .median_pct = s->median[HALO_SIM_T_EPOCH],
                               .worst_pct = s->worst[HALO_SIM_T_EPOCH],
                               .stage_median_pct = s->stage_median_max, .fit = s->fit};
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(val.date, sizeof val.date, "%Y-%m-%d %H:%M UTC", &tm);
    HALO_CHECK(halo_sim_validation_record(o->profile, &val));
    fprintf(stderr, "halo: sim validate: recorded in %s\n", o->profile);
    return 0;
}

/* The CPU and the time a profile was measured on, from its first line (core/host.h's origin,
 * as halo calibrate writes it); false when it has none (written by hand, or by halo sim
 * validate for a cluster). */
static bool profile_origin(const char *path, char *cpu, size_t size, time_t *when)
{
    char line[1024] = "";
    FILE *f = fopen(path, "r");
    bool got = f != NULL && fgets(line, sizeof line, f) != NULL;
    if (f != NULL) {
        fclose(f);
    }
    return got && halo_host_origin_parse(line, cpu, size, when);
}

/* Notices when the profile was measured on another CPU or hours ago: its constants are then
 * not this machine's as it is now, and the errors measure that as much as the model. */
static void profile_notices(const char *path)
{
    char cpu[512], here[512];
    time_t when = 0;
    if (!profile_origin(path, cpu, sizeof cpu, &when)) {
        return;
    }
    halo_host_cpu_model(here, sizeof here);
    if (here[0] != '\0' && strcmp(cpu, here) != 0) {
        halo_notice("sim validate: profile %s was measured on %s, this host is %s: its constants "
                    "are another machine's (halo calibrate -o FILE measures this one)",
                    path, cpu, here);
    }
    double hours = when > 0 ? difftime(time(NULL), when) / 3600.0 : 0;
    if (hours > 2) {
        bool days = hours >= 48;
        halo_notice("sim validate: profile %s was calibrated %.0f %s ago; a machine's state "
                    "moves its constants (two calibrations of one quiet VM 30 minutes apart moved "
                    "the worst epoch error by 10-20 points, docs/sim-model.md): calibrate just "
                    "before measuring", path, days ? hours / 24 : hours, days ? "days" : "hours");
    }
}

/* Space, cluster and directories; prints the first line. */
static int prepare(const halo_validate_opts *o, halo_vspace *sp, vcluster *cl, char *prof,
                   size_t size, halo_sim_profile *p)
{
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    HALO_CHECK(halo_vspace_default(sp, cores, o->policy_dir));
    if (o->space != NULL) {
        HALO_CHECK(halo_vspace_load(o->space, sp));
    }
    if (o->edges != NULL) {
        HALO_CHECK(halo_vspace_add_edges(sp, o->edges));
    }
    HALO_CHECK(halo_sim_profile_load(o->profile, p));
    profile_notices(o->profile);
    char dir[4200];
    const char *sub[] = {"graphs", "parts", "runs"};
    for (int k = 0; k < 3 && !o->dry_run; k++) {
        snprintf(dir, sizeof dir, "%s/%s", o->work_dir, sub[k]);
        HALO_CHECK(halo_mkdir_p(dir));
    }
    if (!o->dry_run) {
        HALO_CHECK(halo_mkdir_p(o->out_dir));
    }
    memset(cl, 0, sizeof *cl);
    snprintf(prof, size, "%s", o->profile);
    if (o->cluster_hosts != NULL) {
        HALO_CHECK(cluster_read(o->cluster_hosts, cl));
        if (!o->dry_run) {
            HALO_CHECK(cluster_profile(o, cl, prof, size));
        }
    }
    return 0;
}

int halo_validate_run(const halo_validate_opts *o)
{
    halo_vspace *sp = HALO_NEW(halo_vspace, 1);
    vcluster cl;
    char prof[4200];
    halo_sim_profile p;
    int rc = prepare(o, sp, &cl, prof, sizeof prof, &p);
    if (rc < 0) {
        halo_free(sp);
        return rc;
    }
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double t0 = halo_now();
    halo_vsummary s;
    memset(&s, 0, sizeof s);
    printf("halo sim validate: seed %llu, %d configurations from %s, profile %s (%s), %d epochs "
           "each (epoch 0 not timed), measured %s\n", (unsigned long long)o->seed, o->configs,
           o->space ? o->space : "the default space", p.name, o->profile, sp->epochs,
           cl.hosts > 0 ? "on the namespace cluster" : "on this host");
    halo_sweep_signals();
    halo_vresult *r = HALO_NEW(halo_vresult, (size_t)o->configs);
    char(*pdir)[4400] = halo_calloc((size_t)o->configs, sizeof *pdir);
    char(*sim)[4400] = halo_calloc((size_t)o->configs, sizeof *sim);
    bool checked = false, rows_now = o->repeats <= 1;
    vrun v = {.o = o, .sp = sp, .cl = &cl, .profile = prof, .sum = &s, .checked = &checked};
    if (!o->dry_run) {
        halo_vresult_header(stdout, o->markdown);
    }
    for (int i = 0; i < o->configs && rc == 0; i++) {
        rc = one_config(&v, i + 1, &r[i], pdir[i], sim[i]);
        if (rc == 0 && !o->dry_run && rows_now) {
            halo_vresult_row(sp, &r[i], stdout, o->markdown);
            fflush(stdout);
        }
    }
    if (rc == 0 && !o->dry_run && !rows_now) {
        rc = repeat_passes(&v, r, o->configs, pdir, sim);
        for (int i = 0; i < o->configs && rc == 0; i++) {
            halo_vresult_row(sp, &r[i], stdout, o->markdown);
        }
    }
    halo_free(pdir);
    halo_free(sim);
    if (rc == 0 && !o->dry_run && s.checked) {
        halo_sim_calib_speed(1.5, s.speed_run[1]);
        s.speed = true;
        s.speed_prof[0] = p.sample_edge_s;
        /* a GPU profile's GEMM rate is a GPU's: not this probe's */
        s.speed_prof[1] = p.device == HALO_SIM_DEVICE_CPU ? p.gemm_flops : 0;
    }
    if (rc == 1) {
        printf("halo sim validate: %s; nothing more measured (--force measures anyway)\n",
               s.why);
        halo_free(r);
        halo_free(sp);
        return HALO_VALIDATE_UNFIT;
    }
    if (rc == 0 && o->dry_run) {
        halo_free(r);
        halo_free(sp);
        return 0;
    }
    if (rc == 0) {
        halo_vsummary_make(r, o->configs, &s);
        check_runs(o, r, o->configs, cores, cl.hosts, &s);
        s.seconds = halo_now() - t0;
        halo_vsummary_print(&s, stdout, o->markdown);
        halo_vgroups_print(sp, r, o->configs, cores, cl.hosts, stdout, o->markdown);
        rc = halo_validate_outputs(o, sp, r, o->configs, &s, p.name);
    }
    int vd = rc < 0 ? rc : verdict(o, &s);
    if (rc == 0 && o->record && (vd == HALO_VALIDATE_COUNTS || vd == HALO_VALIDATE_UNFIT)) {
        fprintf(stderr, "halo: sim validate: --record: not recorded (%s)\n",
                vd == HALO_VALIDATE_COUNTS ? "counts differ" : "unfit measurements; --force "
                "records them, marked as measured under load");
    } else if (rc == 0 && o->record) {
        rc = record(o, &s);
    }
    rc = rc < 0 ? rc : vd;
    halo_free(r);
    halo_free(sp);
    return rc;
}
