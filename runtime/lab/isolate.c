/* Student code runs in a forked child with a wall-clock limit: whatever it does (errors,
 * endless loops in Lua or inside a Lua C function, memory exhaustion, a crash), the grader gets
 * a criterion back with a score and a one-line message, never a hang. Also the small helpers
 * every lab uses (paths under the source tree, one-line text, scores). */
#define _GNU_SOURCE
#include "lab/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void halo_lab_clean(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p != '\0'; p++) {
        if (*p == '\n') {
            *p = '\0';
            break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            *p = '?';
        }
    }
}

int halo_lab_rootpath(const halo_lab_env *env, const char *rel, char *out, size_t size)
{
    HALO_CHECK(halo_path_join(out, size, env->root, rel));
    if (!halo_path_exists(out)) {
        return halo_errorf(HALO_EIO, "lab: %s not found (the source tree is %s)", out, env->root);
    }
    return 0;
}

void halo_lab_interpolate(halo_lab_criterion *c)
{
    double span = c->full - c->zero;
    double t = span != 0 && isfinite(c->value) ? (c->value - c->zero) / span : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    c->score = c->max * t;
}

/* Waits for pid until deadline (halo_now() seconds); on timeout kills its process group.
 * Returns 1 when it timed out, 0 when it ended (status in *status). */
static int wait_deadline(pid_t pid, double deadline, int *status)
{
    const struct timespec nap = {0, 5 * 1000 * 1000};
    int timed_out = 0;
    for (;;) {
        /* WNOWAIT: the ended child stays a zombie, so its process group id cannot be reused
         * before the kill below reaches what it left behind */
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if ((r == 0 && info.si_pid == pid) || (r < 0 && errno != EINTR)) {
            break;
        }
        if (halo_now() > deadline) {
            timed_out = 1;
            break;
        }
        nanosleep(&nap, NULL);
    }
    kill(-pid, SIGKILL); /* the group: the child on a timeout, grandchildren in any case */
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
    return timed_out;
}

/* In a child: its own process group, no terminal output, a cap on the size of files it writes
 * and on its address space (not under the sanitizers, which reserve far more than they use). */
static void child_setup(const char *log)
{
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int out =
        log != NULL ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
    if (in >= 0) {
        dup2(in, 0);
        close(in);
    }
    if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
        close(out);
    }
    /* a policy that prints without end must not fill the disk through the log */
    struct rlimit fl = {(rlim_t)256 << 20, (rlim_t)256 << 20};
    setrlimit(RLIMIT_FSIZE, &fl);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    struct rlimit rl = {(rlim_t)16 << 30, (rlim_t)16 << 30};
    setrlimit(RLIMIT_AS, &rl);
#endif
}

static void died_msg(halo_lab_criterion *c, int timed_out, int status, double limit_s)
{
    c->score = 0;
    c->value = NAN;
    if (timed_out) {
        snprintf(c->msg, sizeof c->msg, "killed after the %.0f s wall-clock limit", limit_s);
    } else if (WIFSIGNALED(status)) {
        snprintf(c->msg, sizeof c->msg, "the policy's process died (signal %d: %s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        snprintf(c->msg, sizeof c->msg, "the policy's process ended without a result (exit %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

int halo_lab_isolate(halo_lab_child_fn fn, void *arg, double limit_s, halo_lab_criterion *c)
{
    int fds[2];
    if (pipe(fds) != 0) {
        return halo_errorf(HALO_EIO, "lab: pipe: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = halo_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return halo_errorf(HALO_EIO, "lab: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child_setup(NULL);
        halo_lab_criterion r = *c;
        halo_error_clear();
        int rc = fn(arg, &r);
        if (rc < 0) {
            r.score = 0;
            r.value = NAN;
            snprintf(r.msg, sizeof r.msg, "%s",
                     halo_errmsg()[0] ? halo_errmsg() : halo_strerror(rc));
        }
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 3);
    }
    close(fds[1]);
    setpgid(pid, pid);
    int status = 0;
    int timed_out = wait_deadline(pid, t0 + limit_s, &status);
    halo_lab_criterion r;
    ssize_t got = timed_out ? 0 : read(fds[0], &r, sizeof r);
    close(fds[0]);
    if (got == (ssize_t)sizeof r && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        r.name[sizeof r.name - 1] = '\0';
        r.unit[sizeof r.unit - 1] = '\0';
        r.msg[sizeof r.msg - 1] = '\0';
        /* the child computed the figures; the names and the marks available stay the
         * grader's */
        snprintf(r.name, sizeof r.name, "%s", c->name);
        snprintf(r.unit, sizeof r.unit, "%s", c->unit);
        r.max = c->max;
        r.score = isfinite(r.score) ? (r.score < 0 ? 0 : r.score > r.max ? r.max : r.score) : 0;
        *c = r;
    } else {
        died_msg(c, timed_out, status, limit_s);
    }
    halo_lab_clean(c->msg);
    c->seconds = halo_now() - t0;
    return 0;
}

/* The last "halo...: error: " line of a log, without that prefix, into out. */
static void last_error(const char *log, char *out, size_t size)
{
    out[0] = '\0';
    char *text = NULL;
    size_t len = 0;
    if (halo_file_read_all(log, &text, &len) < 0) {
        halo_error_clear();
        return;
    }
    const char *best = NULL;
    for (char *line = text; line != NULL && *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        const char *e = strstr(line, ": error: ");
        if (strncmp(line, "halo", 4) == 0 && e != NULL) {
            best = e + strlen(": error: ");
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    if (best != NULL) {
        snprintf(out, size, "%s", best);
    }
    halo_free(text);
}

int halo_lab_spawn(const char *const *argv, const char *log, double limit_s)
{
    fflush(stdout);
    fflush(stderr);
    double t0 = halo_now();
    pid_t pid = fork();
    if (pid < 0) {
        return halo_errorf(HALO_EIO, "lab: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        child_setup(log);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    int status = 0;
    int timed_out = wait_deadline(pid, t0 + limit_s, &status);
    if (timed_out) {
        return halo_errorf(HALO_ELUA, "killed after the %.0f s wall-clock limit", limit_s);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return 0;
    }
    char why[1024];
    last_error(log, why, sizeof why);
    halo_lab_clean(why);
    if (why[0] != '\0') {
        return halo_errorf(HALO_ELUA, "%s", why);
    }
    if (WIFSIGNALED(status)) {
        return halo_errorf(HALO_ELUA, "%s died (signal %d: %s)", argv[0], WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    }
    return halo_errorf(HALO_ELUA, "%s %s failed (exit %d, log %s)", argv[0],
                       argv[1] != NULL ? argv[1] : "", WEXITSTATUS(status), log);
}
