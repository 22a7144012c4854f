/* The commands of a point (gen or import, partition, train / sim / trace) built from its
 * settings, and running one as a subprocess with a log and a timeout. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- command lines ---- */

void halo_sweep_cmd_init(halo_sweep_cmd *c)
{
    memset(c, 0, sizeof *c);
}

void halo_sweep_cmd_add(halo_sweep_cmd *c, const char *arg)
{
    if (c->argc + 2 > c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->argv = halo_realloc(c->argv, (size_t)c->cap * sizeof *c->argv);
    }
    c->argv[c->argc++] = halo_strdup(arg);
    c->argv[c->argc] = NULL;
}

void halo_sweep_cmd_free(halo_sweep_cmd *c)
{
    for (int i = 0; i < c->argc; i++) {
        halo_free(c->argv[i]);
    }
    halo_free(c->argv);
    memset(c, 0, sizeof *c);
}

void halo_sweep_cmd_text(const halo_sweep_cmd *c, halo_sb *sb)
{
    if (c->mpi) {
        halo_sb_puts(sb, "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ");
    }
    for (int i = 0; i < c->argc; i++) {
        const char *a = c->argv[i];
        bool plain = a[0] != '\0';
        for (const char *s = a; *s && plain; s++) {
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "-_./=,:+@%",
                           *s) != NULL;
        }
        if (i > 0) {
            halo_sb_putc(sb, ' ');
        }
        if (plain) {
            halo_sb_puts(sb, a);
            continue;
        }
        halo_sb_putc(sb, '\'');
        for (const char *s = a; *s; s++) {
            if (*s == '\'') {
                halo_sb_puts(sb, "'\\''");
            } else {
                halo_sb_putc(sb, *s);
            }
        }
        halo_sb_putc(sb, '\'');
    }
}

/* "--name-with-dashes" of a settings key. */
static void flag_of(const char *key, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "--%s", key);
    for (size_t i = 2; i < n && i < size; i++) {
        if (buf[i] == '_') {
            buf[i] = '-';
        }
    }
}

/* Adds one setting as flags: true -> --flag, false -> nothing, else --flag value. */
static void add_flag(halo_sweep_cmd *c, const char *flag, const halo_sweep_kv *kv)
{
    if (kv->type == HALO_SWEEP_BOOL) {
        if (strcmp(kv->val, "true") == 0) {
            halo_sweep_cmd_add(c, flag);
        }
        return;
    }
    halo_sweep_cmd_add(c, flag);
    halo_sweep_cmd_add(c, kv->val);
}

/* Adds every "SEC.KEY" setting of p as --key flags (skipping the names in skip) and every
 * "SEC.set.K" as --set K=V. */
static void add_section(halo_sweep_cmd *c, const halo_sweep_point *p, const char *sec,
                        const char *const *skip)
{
    size_t sl = strlen(sec);
    for (int i = 0; i < p->nkv; i++) {
        const halo_sweep_kv *kv = &p->kv[i];
        if (strncmp(kv->key, sec, sl) != 0 || kv->key[sl] != '.') {
            continue;
        }
        const char *k = kv->key + sl + 1;
        if (strncmp(k, "set.", 4) == 0) {
            char set[2048];
            snprintf(set, sizeof set, "%s=%s", k + 4, kv->val);
            halo_sweep_cmd_add(c, "--set");
            halo_sweep_cmd_add(c, set);
            continue;
        }
        bool skipped = false;
        for (int j = 0; skip != NULL && skip[j] != NULL; j++) {
            skipped = skipped || strcmp(skip[j], k) == 0;
        }
        if (!skipped) {
            char flag[256];
            flag_of(k, flag, sizeof flag);
            add_flag(c, flag, kv);
        }
    }
}

/* Adds the run section's settings that the mode's command takes. */
static void add_run(halo_sweep_cmd *c, const halo_sweep_point *p, int mode)
{
    for (int i = 0; i < p->nkv; i++) {
        const halo_sweep_kv *kv = &p->kv[i];
        if (strncmp(kv->key, "run.", 4) != 0) {
            continue;
        }
        const char *k = kv->key + 4;
        if (strncmp(k, "set.", 4) == 0) {
            if (mode != HALO_SWEEP_TRACE) {
                char set[2048];
                snprintf(set, sizeof set, "%s=%s", k + 4, kv->val);
                halo_sweep_cmd_add(c, "--set");
                halo_sweep_cmd_add(c, set);
            }
            continue;
        }
        for (const halo_sweep_runkey *r = halo_sweep_runkeys; r->name != NULL; r++) {
            if (strcmp(r->name, k) == 0 && r->flag != NULL && (r->modes & HALO_SWEEP_M(mode))) {
                add_flag(c, r->flag, kv);
            }
        }
    }
}

void halo_sweep_plan_free(halo_sweep_plan *pl)
{
    halo_sweep_cmd_free(&pl->graph);
    halo_sweep_cmd_free(&pl->part);
    halo_sweep_cmd_free(&pl->record);
    halo_sweep_cmd_free(&pl->main);
}

/* The command that builds the point's graph (gen or import) into pl->gtmp, unless graph.dir
 * names one. */
static void plan_graph(const halo_sweep_point *p, const char *exe, const char *cache, int pid,
                       bool final_names, halo_sweep_plan *pl)
{
    const char *gdir = halo_sweep_get(p, "graph.dir");
    if (gdir != NULL) {
        snprintf(pl->gdir, sizeof pl->gdir, "%s", gdir);
        return;
    }
    pl->build_graph = true;
    snprintf(pl->gdir, sizeof pl->gdir, "%s/%s", cache, p->gkey);
    snprintf(pl->gtmp, sizeof pl->gtmp, "%s.tmp-%d", pl->gdir, pid);
    if (final_names) {
        snprintf(pl->gtmp, sizeof pl->gtmp, "%s", pl->gdir);
    }
    halo_sweep_cmd *c = &pl->graph;
    halo_sweep_cmd_add(c, exe);
    const char *imp = halo_sweep_get(p, "graph.import");
    static const char *const skip[] = {"gen", "import", "src", NULL};
    if (imp != NULL) {
        halo_sweep_cmd_add(c, "import");
        halo_sweep_cmd_add(c, imp);
        halo_sweep_cmd_add(c, halo_sweep_get(p, "graph.src"));
    } else {
        halo_sweep_cmd_add(c, "gen");
        const char *kind = halo_sweep_get(p, "graph.gen");
        if (kind != NULL) {
            halo_sweep_cmd_add(c, kind);
        }
    }
    add_section(c, p, "graph", skip);
    halo_sweep_cmd_add(c, "-o");
    halo_sweep_cmd_add(c, pl->gtmp);
}

/* run mode: mpirun (with the point's timeout) of halo train on the partition. */
static void plan_run(const halo_sweep_point *p, const char *exe, double timeout,
                     halo_sweep_plan *pl)
{
    halo_sweep_cmd *c = &pl->main;
    char num[64];
    c->mpi = true;
    halo_sweep_cmd_add(c, "mpirun");
    halo_sweep_cmd_add(c, "--timeout");
    snprintf(num, sizeof num, "%.0f", timeout > 1 ? timeout : 1);
    halo_sweep_cmd_add(c, num);
    halo_sweep_cmd_add(c, "--oversubscribe");
    halo_sweep_cmd_add(c, "--bind-to");
    halo_sweep_cmd_add(c, "none");
    halo_sweep_cmd_add(c, "-np");
    snprintf(num, sizeof num, "%d", p->parts);
    halo_sweep_cmd_add(c, num);
    halo_sweep_cmd_add(c, exe);
    halo_sweep_cmd_add(c, "train");
    halo_sweep_cmd_add(c, pl->pdir);
    add_run(c, p, HALO_SWEEP_RUN);
    halo_sweep_cmd_add(c, "--metrics");
    halo_sweep_cmd_add(c, pl->metrics);
    halo_sweep_cmd_add(c, "--no-table");
    if (halo_sweep_get(p, "run.eval") == NULL) {
        halo_sweep_cmd_add(c, "--eval");
        halo_sweep_cmd_add(c, "sampled");
    }
}

/* sim mode (and partition mode's counts): halo sim on the partition, with the cluster profile's
 * machines and trainers when the point has one. */
static void plan_sim(const halo_sweep_point *p, int mode, const char *exe, halo_sweep_plan *pl)
{
    halo_sweep_cmd *c = &pl->main;
    char num[64];
    halo_sweep_cmd_add(c, exe);
    halo_sweep_cmd_add(c, "sim");
    halo_sweep_cmd_add(c, pl->pdir);
    if (p->cluster[0]) {
        halo_sweep_cmd_add(c, "--cluster");
        halo_sweep_cmd_add(c, p->cluster);
        halo_sweep_cmd_add(c, "--machines");
        snprintf(num, sizeof num, "%d", p->machines);
        halo_sweep_cmd_add(c, num);
        halo_sweep_cmd_add(c, "--trainers");
        snprintf(num, sizeof num, "%d", p->trainers);
        halo_sweep_cmd_add(c, num);
    }
    add_run(c, p, mode);
    halo_sweep_cmd_add(c, "--metrics");
    halo_sweep_cmd_add(c, pl->metrics);
    halo_sweep_cmd_add(c, "-q");
}

/* trace mode: halo trace record into the cache (once per trace key), then halo trace replay
 * of the point's policy, capacity, row size and parameters. */
static void plan_trace(const halo_sweep_point *p, const char *exe, const char *cache, int pid,
                       bool final_names, halo_sweep_plan *pl)
{
    snprintf(pl->trc, sizeof pl->trc, "%s/%s.trc", cache, p->tkey);
    snprintf(pl->ttmp, sizeof pl->ttmp, "%s/%s.tmp-%d.trc", cache, p->tkey, pid);
    if (final_names) {
        snprintf(pl->ttmp, sizeof pl->ttmp, "%s", pl->trc);
    }
    halo_sweep_cmd *r = &pl->record;
    halo_sweep_cmd_add(r, exe);
    halo_sweep_cmd_add(r, "trace");
    halo_sweep_cmd_add(r, "record");
    halo_sweep_cmd_add(r, pl->pdir);
    halo_sweep_cmd_add(r, "-o");
    halo_sweep_cmd_add(r, pl->ttmp);
    add_run(r, p, HALO_SWEEP_TRACE);
    const char *mb = halo_sweep_get(p, "trace.max_batches");
    if (mb != NULL) {
        halo_sweep_cmd_add(r, "--max-batches");
        halo_sweep_cmd_add(r, mb);
    }
    halo_sweep_cmd *c = &pl->main;
    halo_sweep_cmd_add(c, exe);
    halo_sweep_cmd_add(c, "trace");
    halo_sweep_cmd_add(c, "replay");
    halo_sweep_cmd_add(c, pl->trc);
    halo_sweep_cmd_add(c, "--policy");
    halo_sweep_cmd_add(c, halo_sweep_get(p, "trace.policy"));
    const char *cap = halo_sweep_get(p, "trace.capacity");
    if (cap != NULL) {
        halo_sweep_cmd_add(c, "--capacities");
        halo_sweep_cmd_add(c, cap);
    }
    const char *rb = halo_sweep_get(p, "trace.row_bytes");
    if (rb != NULL) {
        halo_sweep_cmd_add(c, "--row-bytes");
        halo_sweep_cmd_add(c, rb);
    }
    for (int i = 0; i < p->nkv; i++) {
        if (strncmp(p->kv[i].key, "trace.set.", 10) == 0) {
            char set[2048];
            snprintf(set, sizeof set, "%s=%s", p->kv[i].key + 10, p->kv[i].val);
            halo_sweep_cmd_add(c, "--set");
            halo_sweep_cmd_add(c, set);
        }
    }
}

int halo_sweep_plan_make(const halo_sweep_exp *e, const halo_sweep_point *p, const char *exe,
                         const char *cache, double timeout, bool final_names, halo_sweep_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    int pid = (int)getpid();
    plan_graph(p, exe, cache, pid, final_names, pl);
    /* the partition */
    snprintf(pl->pdir, sizeof pl->pdir, "%s/%s", cache, p->pkey);
    snprintf(pl->ptmp, sizeof pl->ptmp, "%s.tmp-%d", pl->pdir, pid);
    if (final_names) {
        snprintf(pl->ptmp, sizeof pl->ptmp, "%s", pl->pdir);
    }
    halo_sweep_cmd *c = &pl->part;
    halo_sweep_cmd_add(c, exe);
    halo_sweep_cmd_add(c, "partition");
    halo_sweep_cmd_add(c, pl->gdir);
    add_section(c, p, "partition", NULL);
    halo_sweep_cmd_add(c, "-o");
    halo_sweep_cmd_add(c, pl->ptmp);
    /* the point's own files */
    snprintf(pl->metrics, sizeof pl->metrics, "%s/points/%s-%s.jsonl", cache, e->name, p->key);
    snprintf(pl->log, sizeof pl->log, "%s/points/%s-%s.log", cache, e->name, p->key);
    bool counts = false;
    switch (e->mode) {
    case HALO_SWEEP_RUN: plan_run(p, exe, timeout, pl); break;
    case HALO_SWEEP_SIM: plan_sim(p, e->mode, exe, pl); break;
    case HALO_SWEEP_TRACE: plan_trace(p, exe, cache, pid, final_names, pl); break;
    case HALO_SWEEP_PARTITION:
        /* a counts-only simulation when a measure comes from a metrics file */
        for (int i = 0; i < e->nmeasures; i++) {
            counts = counts || halo_sweep_measure_from_metrics(e->measures[i], e->mode);
        }
        if (counts) {
            plan_sim(p, e->mode, exe, pl);
        }
        break;
    default: return halo_errorf(HALO_ESTATE, "sweep: unknown mode %d", e->mode);
    }
    return 0;
}

/* ---- subprocesses ---- */

/* The running child's process group (0: none), for the signal handler. */
static volatile sig_atomic_t child_pgid = 0;

/* On SIGINT/SIGTERM/SIGHUP: stop the child's group and wait for the child (an mpirun stops
 * its ranks before it exits; SIGKILL after 10 s), then die of the same signal. Only
 * async-signal-safe calls. */
static void on_signal(int sig)
{
    pid_t g = (pid_t)child_pgid;
    if (g > 0) {
        kill(-g, SIGTERM);
        for (int i = 0; i < 400 && waitpid(g, NULL, WNOHANG) == 0; i++) {
            struct timespec ts = {0, 25000000};
            nanosleep(&ts, NULL);
            if (i == 399) {
                kill(-g, SIGKILL);
                waitpid(g, NULL, 0);
            }
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void halo_sweep_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The last line of a log that says "error", else its last non-empty line, into out. */
static void log_reason(const char *log, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (f == NULL) {
        return;
    }
    char line[1024], last[1024] = "", err[1024] = "";
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0') {
            continue;
        }
        snprintf(last, sizeof last, "%s", line);
        if (strstr(line, "error") != NULL && strncmp(line, "----", 4) != 0) {
            snprintf(err, sizeof err, "%s", line);
        }
    }
    fclose(f);
    snprintf(out, size, "%s", err[0] ? err : last);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int halo_sweep_spawn(const halo_sweep_cmd *c, const char *log, double timeout)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "sweep: cannot write %s: %s", log, strerror(errno));
    }
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sb_puts(&sb, "$ ");
    halo_sweep_cmd_text(c, &sb);
    halo_sb_putc(&sb, '\n');
    ssize_t w = write(fd, sb.buf, sb.len);
    (void)w;
    halo_sb_free(&sb);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "sweep: cannot start %s: %s", c->argv[0], strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) {
            dup2(in, 0);
        }
        dup2(fd, 1);
        dup2(fd, 2);
        if (c->mpi) {
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execvp(c->argv[0], c->argv);
        dprintf(2, "halo: error: cannot run %s: %s\n", c->argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    setpgid(pid, pid); /* also here: no race with the child's own call */
    child_pgid = pid;
    double t0 = now_s(), nap = 0.001;
    int status = 0;
    bool timed_out = false, killed = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        if (r < 0 && errno != EINTR) {
            status = -1;
            break;
        }
        double el = now_s() - t0;
        if (!timed_out && el > timeout) {
            timed_out = true;
            kill(-pid, SIGTERM);
        } else if (timed_out && !killed && el > timeout + 5) {
            killed = true;
            kill(-pid, SIGKILL);
        }
        halo_sleep_s(nap);
        nap = nap < 0.02 ? nap * 2 : 0.02;
    }
    child_pgid = 0;
    char why[900];
    log_reason(log, why, sizeof why);
    const char *prog = strrchr(c->argv[0], '/') ? strrchr(c->argv[0], '/') + 1 : c->argv[0];
    const char *sub = c->argc > 1 ? c->argv[1] : "";
    if (strcmp(prog, "mpirun") == 0) {
        prog = "mpirun";
        sub = "train";
    }
    if (timed_out) {
        return halo_errorf(HALO_EIO, "%s %s: timed out after %.0f s", prog, sub, timeout);
    }
    if (status == -1) {
        return halo_errorf(HALO_EIO, "%s %s: lost the child process", prog, sub);
    }
    if (WIFSIGNALED(status)) {
        return halo_errorf(HALO_EIO, "%s %s: killed by signal %d%s%s", prog, sub, WTERMSIG(status),
                           why[0] ? ": " : "", why);
    }
    if (WEXITSTATUS(status) != 0) {
        return halo_errorf(HALO_EIO, "%s %s: exit %d%s%s", prog, sub, WEXITSTATUS(status),
                           why[0] ? ": " : "", why);
    }
    return 0;
}
