/* Whether a figure is older than the code it depends on: the source paths a figure depends on
 * (its mode's modules, the policies, cluster profiles and experiment file it used), recorded in
 * meta.json by halo sweep, and the git query halo report makes of them. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The modules every figure's graph and partition are built by. */
static const char *const deps_all[] = {"runtime/graph", "runtime/part", NULL};
/* What reads a sweep's numbers and draws its figure (not the scripts' figures). */
static const char *const deps_sweep[] = {"runtime/sweep/measure.c", "runtime/sweep/plot.c", NULL};
/* The modules behind each mode's measured command. */
static const char *const deps_sim[] = {"runtime/sim",
                                       "runtime/plan",
                                       "runtime/sample",
                                       "runtime/order",
                                       "runtime/cache",
                                       "runtime/policy",
                                       NULL};
static const char *const deps_run[] = {"runtime/train",
                                       "runtime/model",
                                       "runtime/store",
                                       "runtime/comm",
                                       "runtime/pipe",
                                       "runtime/plan",
                                       "runtime/sample",
                                       "runtime/order",
                                       "runtime/cache",
                                       "runtime/policy",
                                       NULL};
static const char *const deps_trace[] = {"runtime/cache",
                                         "runtime/plan",
                                         "runtime/sample",
                                         "runtime/order",
                                         "runtime/policy",
                                         "runtime/train",
                                         NULL};
static const char *const deps_partition[] = {"runtime/sim", "runtime/plan", "runtime/sample", NULL};

bool halo_sweep_repo_path_ok(const char *p)
{
    if (p[0] == '\0' || p[0] == '/' || p[0] == '-' || strlen(p) > 512) {
        return false;
    }
    for (const char *s = p; *s; s++) {
        bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                  (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.' || *s == '/';
        if (!ok) {
            return false;
        }
    }
    /* no ".." component */
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2) {
        bool starts = s == p || s[-1] == '/';
        bool ends = s[2] == '\0' || s[2] == '/';
        if (starts && ends) {
            return false;
        }
    }
    return true;
}

/* Adds a path to the list unless it is there already. */
static void deps_add(halo_sweep_deps *d, const char *p)
{
    for (int i = 0; i < d->n; i++) {
        if (strcmp(d->paths[i], p) == 0) {
            return;
        }
    }
    d->paths = halo_realloc(d->paths, (size_t)(d->n + 1) * sizeof *d->paths);
    d->paths[d->n++] = halo_strdup(p);
}

static void deps_add_list(halo_sweep_deps *d, const char *const *list)
{
    for (int i = 0; list[i] != NULL; i++) {
        deps_add(d, list[i]);
    }
}

void halo_sweep_mode_deps(const char *mode, halo_sweep_deps *d)
{
    deps_add_list(d, deps_all);
    /* "run+sim": a figure of several commands depends on each one's modules */
    char buf[64];
    snprintf(buf, sizeof buf, "%s", mode);
    for (char *save = NULL, *m = strtok_r(buf, "+", &save); m; m = strtok_r(NULL, "+", &save)) {
        if (strcmp(m, "sim") == 0) {
            deps_add_list(d, deps_sim);
        } else if (strcmp(m, "run") == 0) {
            deps_add_list(d, deps_run);
        } else if (strcmp(m, "trace") == 0) {
            deps_add_list(d, deps_trace);
        } else if (strcmp(m, "partition") == 0) {
            deps_add_list(d, deps_partition);
        }
    }
}

void halo_sweep_deps_free(halo_sweep_deps *d)
{
    for (int i = 0; i < d->n; i++) {
        halo_free(d->paths[i]);
    }
    halo_free(d->paths);
    d->paths = NULL;
    d->n = 0;
}

/* Runs git with argv (no shell), stdout into out (when not NULL), stderr discarded; returns
 * its exit status, 127 when git cannot be run. */
static int git_run(char *const argv[], halo_sb *out)
{
    int pfd[2];
    if (pipe(pfd) < 0) {
        return 127;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return 127;
    }
    if (pid == 0) {
        close(pfd[0]);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 2);
        }
        dup2(pfd[1], 1);
        execvp("git", argv);
        _exit(127);
    }
    close(pfd[1]);
    char buf[4096];
    for (;;) {
        ssize_t n = read(pfd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        if (out != NULL) {
            halo_sb_printf(out, "%.*s", (int)n, buf);
        }
    }
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

/* The repository root above dir ("" when git is absent or dir is not in a checkout). */
static void repo_root(const char *dir, char *root, size_t size)
{
    halo_sb out;
    halo_sb_init(&out);
    char *argv[] = {"git", "-C", (char *)dir, "rev-parse", "--show-toplevel", NULL};
    root[0] = '\0';
    if (git_run(argv, &out) == 0 && out.buf != NULL) {
        snprintf(root, size, "%s", out.buf);
        root[strcspn(root, "\r\n")] = '\0';
    }
    halo_sb_free(&out);
}

int halo_sweep_fresh_open(const char *dir, halo_sweep_fresh *f)
{
    memset(f, 0, sizeof *f);
    char *argv[] = {"git", "--version", NULL};
    if (git_run(argv, NULL) != 0) {
        snprintf(f->unknown, sizeof f->unknown, "git is not installed");
        return 0;
    }
    repo_root(dir, f->root, sizeof f->root);
    if (f->root[0] == '\0') {
        snprintf(f->unknown, sizeof f->unknown, "%s is not in a git checkout", dir);
        return 0;
    }
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    return 0;
}

/* Whether s is an abbreviated or full commit hash. */
static bool is_hash(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return n >= 4 && n <= 40 && s[n] == '\0';
}

/* Fills v from `git log --name-only COMMIT..HEAD -- DEPS`: the commits since the figure that
 * touch a dependency, the newest of them and which dependencies they touch (in d's order). */
static void parse_log(const char *log, const halo_sweep_deps *d, halo_sweep_verdict *v)
{
    bool *touched = HALO_NEW(bool, (size_t)d->n + 1);
    for (const char *line = log; line != NULL && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        size_t n = strcspn(line, "\n");
        if (n > 7 && strncmp(line, "commit ", 7) == 0) {
            if (v->commits++ == 0) {
                snprintf(v->newest, sizeof v->newest, "%.*s", (int)(n - 7), line + 7);
            }
            continue;
        }
        for (int i = 0; n > 0 && i < d->n; i++) {
            size_t dl = strlen(d->paths[i]);
            touched[i] = touched[i] || (n >= dl && strncmp(line, d->paths[i], dl) == 0 &&
                                        (n == dl || line[dl] == '/'));
        }
    }
    size_t len = 0;
    for (int i = 0; i < d->n; i++) {
        if (touched[i] && len + strlen(d->paths[i]) + 3 < sizeof v->changed) {
            len += (size_t)snprintf(v->changed + len, sizeof v->changed - len, "%s%s",
                                    len ? ", " : "", d->paths[i]);
        }
    }
    halo_free(touched);
}

void halo_sweep_fresh_check(const halo_sweep_fresh *f, const char *commit, const halo_sweep_deps *d,
                            halo_sweep_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (f->unknown[0]) {
        v->state = HALO_SWEEP_FRESH_UNKNOWN;
        return;
    }
    if (!is_hash(commit)) {
        v->state = HALO_SWEEP_FRESH_UNKNOWN;
        snprintf(v->why, sizeof v->why, "%s",
                 commit[0] ? "its commit is not a hash" : "no commit recorded");
        return;
    }
    char range[64];
    snprintf(range, sizeof range, "%s..HEAD", commit);
    char **argv = HALO_NEW(char *, (size_t)d->n + 10);
    int a = 0;
    const char *fixed[] = {"git",         "-C",  f->dir, "log", "--format=commit %h",
                           "--name-only", range, "--"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        argv[a++] = (char *)fixed[i];
    }
    char **specs = HALO_NEW(char *, (size_t)d->n + 1);
    for (int i = 0; i < d->n; i++) {
        specs[i] = halo_malloc(strlen(d->paths[i]) + 8);
        sprintf(specs[i], ":(top)%s", d->paths[i]);
        argv[a++] = specs[i];
    }
    argv[a] = NULL;
    halo_sb out;
    halo_sb_init(&out);
    int st = git_run(argv, &out);
    if (st != 0) {
        v->state = HALO_SWEEP_FRESH_UNKNOWN;
        snprintf(v->why, sizeof v->why, "commit %s is not in this repository", commit);
    } else {
        parse_log(out.buf ? out.buf : "", d, v);
        v->state = v->commits > 0 ? HALO_SWEEP_FRESH_STALE : HALO_SWEEP_FRESH_OK;
    }
    halo_sb_free(&out);
    for (int i = 0; i < d->n; i++) {
        halo_free(specs[i]);
    }
    halo_free(specs);
    halo_free(argv);
}

/* A file the figure used (a policy, a cluster profile, the experiment) as a path relative to
 * the repository root; false when it lies outside the repository or does not exist. */
static bool repo_relative(const char *root, const char *path, char *out, size_t size)
{
    char real[PATH_MAX];
    size_t rl = strlen(root);
    if (root[0] == '\0' || realpath(path, real) == NULL || strncmp(real, root, rl) != 0 ||
        real[rl] != '/') {
        return false;
    }
    snprintf(out, size, "%s", real + rl + 1);
    return halo_sweep_repo_path_ok(out);
}

void halo_sweep_exp_deps(const halo_sweep_exp *e, halo_sweep_deps *d)
{
    halo_sweep_mode_deps(halo_sweep_mode_name(e->mode), d);
    deps_add_list(d, deps_sweep);
    char root[PATH_MAX], rel[PATH_MAX];
    repo_root(".", root, sizeof root);
    static const char *const files[] = {"run.policy", "partition.policy", "trace.policy", NULL};
    for (int i = 0; i < e->npts; i++) {
        const halo_sweep_point *p = &e->pts[i];
        for (int k = 0; files[k] != NULL; k++) {
            const char *v = halo_sweep_get(p, files[k]);
            char byname[600];
            if (v != NULL && strchr(v, '/') == NULL && strstr(v, ".lua") == NULL) {
                snprintf(byname, sizeof byname, "policies/%s.lua", v);
                v = byname;
            }
            if (v != NULL && repo_relative(root, v, rel, sizeof rel)) {
                deps_add(d, rel);
            }
        }
        if (p->cluster[0] && repo_relative(root, p->cluster, rel, sizeof rel)) {
            deps_add(d, rel);
        }
    }
    if (repo_relative(root, e->path, rel, sizeof rel)) {
        deps_add(d, rel);
    }
    for (int i = 0; i < e->ndepends; i++) {
        deps_add(d, e->depends[i]);
    }
}
