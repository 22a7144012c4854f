/* The failure watch: heartbeats over TCP to the ring neighbours, so a dead rank, an unreachable
 * host or a lost launcher is named by a surviving rank and the job ends within seconds.
 *
 * Open MPI 4.1 has no fault tolerance: a rank whose peer vanished waits in MPI forever, and only
 * mpirun (when it can still see the daemon) says which process died. Each rank therefore keeps
 * one TCP connection to each ring neighbour (rank+1 connects, rank-1 is accepted), and a thread
 * that sends a heartbeat byte every interval and reads what arrives:
 *   EOF or reset without a goodbye  -> "rank R on host H ended unexpectedly"
 *   nothing for `timeout` seconds   -> "rank R on host H unreachable"
 *   the parent process changed      -> the launcher (mpirun or its daemon) is gone
 * and then ends the job (the abort callback, MPI_Abort), or, when the abort cannot get through
 * within ABORT_GRACE_S, the process itself (_exit). A rank that ends the job deliberately
 * (halo_comm_fail) sends ABORT first, and a clean finish sends BYE, so neither is reported.
 * The thread never touches MPI or the training data; it wakes a few times a second. */
#define _GNU_SOURCE
#include "comm/watch.h"

#include "core/err.h"
#include "core/log.h"
#include "core/timer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Bytes on the wire (one per event). */
enum { MSG_HEARTBEAT = 'H', MSG_BYE = 'B', MSG_ABORT = 'A', MSG_ACK = 'K' };

/* Seconds allowed for start-up steps, and after an abort before the process ends itself. */
#define CONNECT_TIMEOUT_S 3.0
#define ACCEPT_TIMEOUT_S 15.0
#define ABORT_GRACE_S 2.0
#define QUIET_GRACE_S 2.0
#define BYE_WAIT_S 2.0

/* Hello a rank sends on the connection to its right neighbour. */
typedef struct hello {
    uint64_t token; /* the job's token */
    int32_t rank;   /* the sender */
    int32_t pad;    /* zero */
} hello;

/* One neighbour connection. */
typedef struct watch_peer {
    int fd;         /* the socket (-1: none) */
    int rank;       /* the neighbour */
    char host[62];  /* its host name */
    double last_rx; /* when something last arrived */
    int bye;        /* it said goodbye: no more heartbeats expected, EOF is fine */
    int closed;     /* EOF seen after the goodbye */
} watch_peer;

/* The process's watch (one per process). */
static struct {
    int listen_fd;                /* listening socket until connected (-1: none) */
    int rank;                     /* this rank */
    char host[62];                /* this host */
    uint64_t token;               /* this job's token */
    watch_peer peer[2];           /* [0] right (connected to), [1] left (accepted) */
    int npeer;                    /* connections in use (0 on one rank) */
    int wake[2];                  /* pipe that wakes the thread */
    pthread_t thread;             /* the watch thread */
    int running;                  /* the thread was started */
    pid_t ppid;                   /* parent at start (the launcher) */
    double interval;              /* seconds between heartbeats */
    double timeout;               /* seconds of silence that make a neighbour unreachable */
    halo_watch_abort_fn abort_fn; /* ends the job */
    atomic_int req_bye;           /* main thread asks for BYE */
    atomic_int req_abort;         /* main thread asks for ABORT */
    atomic_int req_stop;          /* main thread asks the thread to end */
    atomic_int sent_bye;          /* BYE went out */
    atomic_int sent_abort;        /* ABORT went out */
    int quiet;          /* the job is ending for a reason already reported: report nothing */
    double quiet_until; /* when quiet because a neighbour said ABORT: end the process then */
} W = {.listen_fd = -1, .peer = {{.fd = -1}, {.fd = -1}}, .wake = {-1, -1}};

static double env_seconds(const char *name, double dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0') {
        return dflt;
    }
    char *end;
    double v = strtod(s, &end);
    return *end == '\0' && v > 0 ? v : dflt;
}

int halo_watch_listen(halo_watch_card *mine)
{
    memset(mine, 0, sizeof *mine);
    if (gethostname(mine->host, sizeof mine->host - 1) != 0) {
        snprintf(mine->host, sizeof mine->host, "unknown");
    }
    mine->pid = (int32_t)getpid();
    uint64_t t = (uint64_t)getpid() << 32 ^ (uint64_t)(halo_now() * 1e9);
    FILE *r = fopen("/dev/urandom", "rb");
    if (r != NULL) {
        if (fread(&t, sizeof t, 1, r) != 1) {
            t ^= (uint64_t)time(NULL);
        }
        fclose(r);
    }
    mine->token = t;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "failure watch: socket: %s", strerror(errno));
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "failure watch: listen: %s", strerror(e));
    }
    mine->port = a.sin_port;
    /* addresses of the interfaces that are up, loopback last */
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (int pass = 0; pass < 2; pass++) {
            for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
                if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
                    !(i->ifa_flags & IFF_UP) || (pass == 0) == !!(i->ifa_flags & IFF_LOOPBACK) ||
                    mine->nip >= HALO_WATCH_ADDRS) {
                    continue;
                }
                mine->ip[mine->nip++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
            }
        }
        freeifaddrs(ifs);
    }
    if (mine->nip == 0) {
        mine->ip[mine->nip++] = htonl(INADDR_LOOPBACK);
    }
    W.listen_fd = fd;
    return 0;
}

/* Waits until fd is ready for events or the deadline passes: 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        double left = deadline - halo_now();
        if (left <= 0) {
            return 0;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n > 0) {
            return 1;
        }
        if (n < 0 && errno != EINTR) {
            return 0;
        }
    }
}

/* Reads exactly n bytes before the deadline: 0 or -1. */
static int read_full(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        if (!wait_fd(fd, POLLIN, deadline)) {
            return -1;
        }
        ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
            return -1;
        }
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        }
    }
    return 0;
}

/* Connects to one address with a timeout: the socket or -1. */
static int connect_one(uint32_t ip, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = port, .sin_addr.s_addr = ip};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (!wait_fd(fd, POLLOUT, halo_now() + CONNECT_TIMEOUT_S) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void close_all(void)
{
    for (int i = 0; i < 2; i++) {
        if (W.peer[i].fd >= 0) {
            close(W.peer[i].fd);
            W.peer[i].fd = -1;
        }
    }
    if (W.listen_fd >= 0) {
        close(W.listen_fd);
        W.listen_fd = -1;
    }
    W.npeer = 0;
}

int halo_watch_connect(int rank, int size, const halo_watch_card *cards)
{
    W.rank = rank;
    memcpy(W.host, cards[rank].host, sizeof W.host);
    W.host[sizeof W.host - 1] = '\0';
    W.token = cards[0].token;
    if (size < 2) {
        close_all();
        return 0;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const halo_watch_card *rc = &cards[right];
    int same = strncmp(rc->host, cards[rank].host, sizeof rc->host) == 0;
    /* 1. connect to the right neighbour: its loopback only when it is on this host */
    int out = -1;
    for (int pass = 0; pass < 2 && out < 0; pass++) {
        for (int i = 0; i < rc->nip && out < 0; i++) {
            int lo = (ntohl(rc->ip[i]) >> 24) == 127;
            if ((pass == 0) != (same && lo) || (lo && !same)) {
                continue;
            }
            out = connect_one(rc->ip[i], rc->port);
        }
    }
    if (out < 0) {
        close_all();
        return halo_errorf(HALO_EIO, "failure watch: cannot connect to rank %d on host %s", right,
                           rc->host);
    }
    W.peer[0] = (watch_peer){.fd = out, .rank = right};
    memcpy(W.peer[0].host, rc->host, sizeof W.peer[0].host);
    hello h = {.token = W.token, .rank = rank};
    if (send(out, &h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) {
        close_all();
        return halo_errorf(HALO_EIO, "failure watch: hello to rank %d: %s", right, strerror(errno));
    }
    /* 2. accept the left neighbour (ignoring anything that does not bring this job's hello) */
    double deadline = halo_now() + ACCEPT_TIMEOUT_S;
    int in = -1;
    while (in < 0) {
        if (!wait_fd(W.listen_fd, POLLIN, deadline)) {
            close_all();
            return halo_errorf(HALO_EIO, "failure watch: rank %d on host %s did not connect", left,
                               cards[left].host);
        }
        int fd = accept4(W.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        hello g;
        char ack = MSG_ACK;
        if (read_full(fd, &g, sizeof g, halo_now() + CONNECT_TIMEOUT_S) == 0 &&
            g.token == W.token && g.rank == left && send(fd, &ack, 1, MSG_NOSIGNAL) == 1) {
            in = fd;
        } else {
            close(fd);
        }
    }
    W.peer[1] = (watch_peer){.fd = in, .rank = left};
    memcpy(W.peer[1].host, cards[left].host, sizeof W.peer[1].host);
    W.npeer = 2;
    /* 3. the right neighbour's acknowledgement */
    char ack = 0;
    if (read_full(out, &ack, 1, halo_now() + ACCEPT_TIMEOUT_S) != 0 || ack != MSG_ACK) {
        close_all();
        return halo_errorf(HALO_EIO, "failure watch: rank %d on host %s did not answer", right,
                           rc->host);
    }
    close(W.listen_fd);
    W.listen_fd = -1;
    for (int i = 0; i < 2; i++) {
        int one = 1;
        setsockopt(W.peer[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(W.peer[i].fd, F_SETFL, fcntl(W.peer[i].fd, F_GETFL) | O_NONBLOCK);
    }
    return 0;
}

/* Sends one event byte to every open connection except `skip` (-1: none). */
static void send_all(char m, int skip)
{
    for (int i = 0; i < W.npeer; i++) {
        if (i != skip && W.peer[i].fd >= 0 && !W.peer[i].closed) {
            (void)!send(W.peer[i].fd, &m, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }
}

/* Ends the process if the abort has not done so in time. */
static void *grace_main(void *arg)
{
    halo_sleep_s(*(const double *)arg);
    _exit(halo_exit_code(HALO_EMPI));
    return NULL;
}

/* Writes the report line to HALO_FAILURE_LOG when set (first: stderr may lead to a launcher that
 * is gone), then to stderr. */
static void report(const char *msg)
{
    const char *path = getenv("HALO_FAILURE_LOG");
    if (path != NULL && *path != '\0') {
        char line[512];
        int n = snprintf(line, sizeof line, "halo: error: rank %d: %s\n", W.rank, msg);
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            (void)!write(fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
            close(fd);
        }
    }
    halo_error_print(msg);
}

enum { FAIL_ENDED, FAIL_UNREACHABLE, FAIL_LAUNCHER };

/* Reports a failure once, tells the neighbours, and ends the job; never returns. */
static void fail(int kind, const watch_peer *p, double silent)
{
    char msg[400];
    if (kind == FAIL_ENDED) {
        snprintf(msg, sizeof msg,
                 "rank %d on host %s ended unexpectedly (its connection closed "
                 "without a clean finish); ending the job",
                 p->rank, p->host);
    } else if (kind == FAIL_UNREACHABLE) {
        snprintf(msg, sizeof msg,
                 "rank %d on host %s unreachable (nothing heard for %.1f s); "
                 "ending the job",
                 p->rank, p->host, silent);
    } else {
        snprintf(msg, sizeof msg,
                 "the launcher of rank %d on host %s ended (parent pid %d "
                 "gone); ending this rank",
                 W.rank, W.host, (int)W.ppid);
    }
    W.quiet = 1;
    report(msg);
    send_all(MSG_ABORT, -1);
    if (kind == FAIL_LAUNCHER || W.abort_fn == NULL) {
        _exit(halo_exit_code(HALO_EMPI));
    }
    static double grace = ABORT_GRACE_S;
    pthread_t t;
    if (pthread_create(&t, NULL, grace_main, &grace) != 0) {
        _exit(halo_exit_code(HALO_EMPI));
    }
    W.abort_fn(HALO_EMPI);
    _exit(halo_exit_code(HALO_EMPI));
}

/* Reads what a neighbour sent; reports it when its connection ended without a goodbye. */
static void drain(int i, double now)
{
    watch_peer *p = &W.peer[i];
    char buf[256];
    for (;;) {
        ssize_t n = recv(p->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            p->last_rx = now;
            for (ssize_t k = 0; k < n; k++) {
                if (buf[k] == MSG_BYE) {
                    p->bye = 1;
                } else if (buf[k] == MSG_ABORT && !W.quiet) {
                    /* the job is ending for a reason another rank reported: pass it on */
                    W.quiet = 1;
                    W.quiet_until = now + QUIET_GRACE_S;
                    send_all(MSG_ABORT, i);
                }
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            return;
        }
        int reset = n == 0 || errno == ECONNRESET || errno == EPIPE;
        if (p->bye || W.quiet || atomic_load(&W.req_stop)) {
            p->closed = 1;
            return;
        }
        fail(reset ? FAIL_ENDED : FAIL_UNREACHABLE, p, now - p->last_rx);
    }
}

static void *watch_main(void *arg)
{
    (void)arg;
    double now = halo_now();
    double next_hb = now;
    double stop_until = 0;
    for (int i = 0; i < W.npeer; i++) {
        W.peer[i].last_rx = now;
    }
    for (;;) {
        now = halo_now();
        if (atomic_load(&W.req_abort) && !atomic_load(&W.sent_abort)) {
            W.quiet = 1;
            send_all(MSG_ABORT, -1);
            atomic_store(&W.sent_abort, 1);
        }
        if (atomic_load(&W.req_bye) && !atomic_load(&W.sent_bye)) {
            send_all(MSG_BYE, -1);
            atomic_store(&W.sent_bye, 1);
        }
        if (atomic_load(&W.req_stop)) {
            /* a clean end: wait (briefly) until every neighbour said goodbye, so that nothing
             * unread is left when the sockets close (which would reset them) */
            if (stop_until == 0) {
                stop_until = now + BYE_WAIT_S;
            }
            int all = 1;
            for (int i = 0; i < W.npeer; i++) {
                all = all && (W.peer[i].bye || W.peer[i].closed);
            }
            if (all || now > stop_until) {
                return NULL;
            }
        } else {
            if (!atomic_load(&W.sent_bye) && now >= next_hb) {
                send_all(MSG_HEARTBEAT, -1);
                next_hb = now + W.interval;
            }
            if (W.quiet_until > 0 && now > W.quiet_until) {
                _exit(halo_exit_code(HALO_EMPI));
            }
            if (!W.quiet && getppid() != W.ppid) {
                fail(FAIL_LAUNCHER, NULL, 0);
            }
            for (int i = 0; i < W.npeer && !W.quiet; i++) {
                const watch_peer *p = &W.peer[i];
                if (!p->bye && !p->closed && now - p->last_rx > W.timeout) {
                    fail(FAIL_UNREACHABLE, p, now - p->last_rx);
                }
            }
        }
        struct pollfd pf[3];
        int idx[3];
        int n = 0;
        pf[n] = (struct pollfd){.fd = W.wake[0], .events = POLLIN};
        idx[n++] = -1;
        for (int i = 0; i < W.npeer; i++) {
            if (W.peer[i].fd >= 0 && !W.peer[i].closed) {
                pf[n] = (struct pollfd){.fd = W.peer[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        }
        int ms = (int)(W.interval * 500); /* twice per interval: heartbeats and the parent */
        if (poll(pf, (nfds_t)n, ms > 0 ? ms : 1) < 0 && errno != EINTR) {
            struct timespec ts = {0, 50000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        now = halo_now();
        if (pf[0].revents & POLLIN) {
            char b[16];
            (void)!read(W.wake[0], b, sizeof b);
        }
        for (int k = 1; k < n; k++) {
            if (pf[k].revents != 0) {
                drain(idx[k], now);
            }
        }
    }
}

int halo_watch_run(halo_watch_abort_fn abort_fn)
{
    W.abort_fn = abort_fn;
    W.ppid = getppid();
    W.interval = env_seconds("HALO_WATCH_INTERVAL", 0.5);
    W.timeout = env_seconds("HALO_WATCH_TIMEOUT", 3.0);
    if (W.timeout < 2 * W.interval) {
        W.timeout = 2 * W.interval;
    }
    if (pipe2(W.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        close_all();
        return halo_errorf(HALO_EIO, "failure watch: pipe: %s", strerror(errno));
    }
    int rc = pthread_create(&W.thread, NULL, watch_main, NULL);
    if (rc != 0) {
        close_all();
        return halo_errorf(HALO_EIO, "failure watch: thread: %s", strerror(rc));
    }
    pthread_setname_np(W.thread, "halo-watch"); /* for ps -L and top -H */
    W.running = 1;
    return 0;
}

/* Wakes the thread and waits up to `s` seconds until flag is set. */
static void wake_and_wait(atomic_int *flag, double s)
{
    char b = 1;
    (void)!write(W.wake[1], &b, 1);
    double until = halo_now() + s;
    while (!atomic_load(flag) && halo_now() < until) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}

void halo_watch_bye(void)
{
    if (!W.running) {
        return;
    }
    atomic_store(&W.req_bye, 1);
    wake_and_wait(&W.sent_bye, 1.0);
}

void halo_watch_stop(void)
{
    if (W.running) {
        atomic_store(&W.req_bye, 1);
        atomic_store(&W.req_stop, 1);
        char b = 1;
        (void)!write(W.wake[1], &b, 1);
        pthread_join(W.thread, NULL);
        W.running = 0;
        close(W.wake[0]);
        close(W.wake[1]);
        W.wake[0] = W.wake[1] = -1;
    }
    close_all();
}

int halo_watch_running(void)
{
    return W.running;
}

void halo_watch_aborting(void)
{
    if (!W.running) {
        return;
    }
    atomic_store(&W.req_abort, 1);
    wake_and_wait(&W.sent_abort, 0.2);
}
