/* MPI behind halo_comm: start-up, abort-together, batched exchanges, collectives and netem. */
#include "comm/comm.h"
#include "comm/watch.h"
#include "comm/comm_mpi.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"

#include <mpi.h>

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A channel. */
struct halo_comm {
    MPI_Comm comm;         /* private communicator (a dup of world or of another channel) */
    int rank;              /* this rank in comm */
    int size;              /* ranks in comm */
    halo_netem netem;      /* emulated network (zero: off) */
    halo_comm_stats stats; /* counters */
    int64_t *counts_out;   /* [size] scratch for the count exchange */
    int64_t *counts_in;    /* [size] scratch for the count exchange */
    uint64_t *host;        /* [size] hash of each rank's host name */
};

static int thread_level = -1;
static char host_name[256];
/* The last message halo_comm_agree made for a rank that did not fail itself (an echo). */
static _Thread_local char echo_msg[1024];

/* Converts an MPI status code into HALO_EMPI with a message naming the call. */
static int mpi_err(int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) {
        snprintf(s, sizeof s, "code %d", code);
    }
    return halo_errorf(HALO_EMPI, "%s: %s", what, s);
}

#define MPI_CHECK(call)                                                                            \
    do {                                                                                           \
        int mpi_rc_ = (call);                                                                      \
        if (mpi_rc_ != MPI_SUCCESS) {                                                              \
            return mpi_err(mpi_rc_, #call);                                                        \
        }                                                                                          \
    } while (0)

static halo_comm *comm_wrap(MPI_Comm mc)
{
    halo_comm *c = HALO_NEW(halo_comm, 1);
    c->comm = mc;
    MPI_Comm_set_errhandler(mc, MPI_ERRORS_RETURN);
    MPI_Comm_rank(mc, &c->rank);
    MPI_Comm_size(mc, &c->size);
    c->counts_out = HALO_NEW(int64_t, c->size);
    c->counts_in = HALO_NEW(int64_t, c->size);
    c->host = HALO_NEW(uint64_t, c->size);
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the host name */
    for (const char *p = host_name; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
    if (MPI_Allgather(&h, 1, MPI_UINT64_T, c->host, 1, MPI_UINT64_T, mc) != MPI_SUCCESS) {
        memset(c->host, 0, (size_t)c->size * sizeof *c->host); /* unknown: never shared */
        c->host[c->rank] = 1;
    }
    return c;
}

int halo_comm_watching(void)
{
    return halo_watch_running();
}

int halo_comm_same_host(const halo_comm *c, int peer)
{
    return peer >= 0 && peer < c->size && c->host[peer] == c->host[c->rank];
}

/* Ends the job from the failure watch's thread (it has printed its report). MPI_Abort from a
 * second thread needs MPI_THREAD_MULTIPLE; otherwise the process ends and mpirun, seeing a rank
 * gone without finalising, ends the rest. */
static void watch_abort(int code)
{
    if (thread_level == 3) {
        MPI_Abort(MPI_COMM_WORLD, halo_exit_code(code));
    }
    _exit(halo_exit_code(code));
}

/* Starts the failure watch (collective): every rank's listening card goes round in one
 * MPI_Allgather, each rank connects to its ring neighbours, and the watch runs only when every
 * rank connected (else it is off everywhere, with a warning from the ranks that could not).
 * HALO_WATCH=0 turns it off; one rank not started by mpirun has nothing to watch. */
static int watch_start(MPI_Comm mc, int rank, int size)
{
    const char *env = getenv("HALO_WATCH");
    int want = !(env != NULL && strcmp(env, "0") == 0);
    if (size == 1 && getenv("OMPI_COMM_WORLD_SIZE") == NULL) {
        want = 0;
    }
    int all_want = 0;
    MPI_CHECK(MPI_Allreduce(&want, &all_want, 1, MPI_INT, MPI_MIN, mc));
    if (!all_want) {
        return 0;
    }
    halo_watch_card mine;
    int rc = halo_watch_listen(&mine);
    halo_watch_card *cards = HALO_NEW(halo_watch_card, size);
    int mrc = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, cards, (int)sizeof mine, MPI_BYTE,
                            mc);
    if (mrc != MPI_SUCCESS) {
        halo_free(cards);
        halo_watch_stop();
        return mpi_err(mrc, "MPI_Allgather(failure watch)");
    }
    if (rc == 0) {
        rc = halo_watch_connect(rank, size, cards);
    }
    halo_free(cards);
    int ok = rc == 0, all_ok = 0;
    MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, mc));
    if (!all_ok) {
        if (!ok) {
            halo_warn("%s; failures of other ranks will not be named", halo_errmsg());
        }
        halo_watch_stop();
        return 0;
    }
    rc = halo_watch_run(watch_abort);
    if (rc < 0) {
        halo_warn("%s; failures of other ranks will not be named", halo_errmsg());
    }
    return 0;
}

int halo_comm_init(int *argc, char ***argv, halo_comm **out)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = MPI_THREAD_SINGLE;
        MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
        thread_level = provided == MPI_THREAD_MULTIPLE     ? 3
                       : provided == MPI_THREAD_SERIALIZED ? 2
                       : provided == MPI_THREAD_FUNNELED   ? 1
                                                           : 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (gethostname(host_name, sizeof host_name - 1) != 0) {
        snprintf(host_name, sizeof host_name, "unknown");
    }
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    halo_comm *c = comm_wrap(dup);
    halo_log_set_rank(c->rank, c->size);
    static int watching = 0;
    if (!watching) {
        watching = 1;
        int rc = watch_start(c->comm, c->rank, c->size);
        if (rc < 0) {
            halo_comm_free(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

void halo_comm_free(halo_comm *c)
{
    if (c == NULL) {
        return;
    }
    MPI_Comm_free(&c->comm);
    halo_free(c->counts_out);
    halo_free(c->counts_in);
    halo_free(c->host);
    halo_free(c);
}

void halo_comm_finalize(halo_comm *c)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && halo_watch_running()) {
        /* a clean end for the failure watch: goodbyes out, everyone has sent theirs, then stop */
        halo_watch_bye();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    halo_watch_stop();
    halo_comm_free(c);
    if (!fin) {
        MPI_Finalize();
    }
}

void halo_comm_meet_before_exit(double timeout_s)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (fin || (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)) {
        return;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request req;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        return;
    }
    double end = halo_now() + timeout_s;
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
           halo_now() < end) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (done) {
        MPI_Finalize(); /* not after a timeout: it would wait for the rank that never came */
    }
}

int halo_comm_dup(halo_comm *c, halo_comm **out)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(c->comm, &dup));
    halo_comm *d = comm_wrap(dup);
    d->netem = c->netem;
    *out = d;
    return 0;
}

MPI_Comm halo_comm_mpi(const halo_comm *c)
{
    return c->comm;
}

int halo_comm_rank(const halo_comm *c)
{
    return c->rank;
}

int halo_comm_size(const halo_comm *c)
{
    return c->size;
}

int halo_comm_thread_level(void)
{
    return thread_level;
}

const char *halo_comm_host(void)
{
    return host_name;
}

void halo_comm_fail(halo_comm *c, int rc)
{
    const char *msg = halo_errmsg();
    halo_error_print(msg[0] ? msg : halo_strerror(rc));
    fflush(stdout);
    (void)c;
    halo_watch_aborting(); /* the neighbours pass it on instead of reporting this rank */
    MPI_Abort(MPI_COMM_WORLD, halo_exit_code(rc < 0 ? rc : HALO_ESTATE));
    _exit(halo_exit_code(rc < 0 ? rc : HALO_ESTATE)); /* MPI_Abort does not return */
}

/* Agreement on failure: MINLOC over (rc, rank) finds the lowest failing code and its rank. */
int halo_comm_agree(halo_comm *c, int rc)
{
    struct {
        int rc;   /* this rank's code */
        int rank; /* this rank */
    } in = {rc < 0 ? rc : 0, c->rank}, res;
    int mrc = MPI_Allreduce(&in, &res, 1, MPI_2INT, MPI_MINLOC, c->comm);
    if (mrc != MPI_SUCCESS) {
        return mpi_err(mrc, "MPI_Allreduce(error flag)");
    }
    if (res.rc == 0) {
        return 0;
    }
    if (in.rc < 0) {
        return in.rc; /* this rank keeps its own message */
    }
    halo_errorf(res.rc, "rank %d failed: %s (see its message)", res.rank, halo_strerror(res.rc));
    snprintf(echo_msg, sizeof echo_msg, "%s", halo_errmsg());
    return res.rc;
}

int halo_comm_report(halo_comm *c, int rc)
{
    rc = halo_comm_agree(c, rc);
    if (rc == 0) {
        return 0;
    }
    char own[1024];
    snprintf(own, sizeof own, "%s", halo_errmsg()[0] ? halo_errmsg() : halo_strerror(rc));
    /* an echo of another rank's failure is not this rank's error */
    bool echo = echo_msg[0] != '\0' && strstr(own, echo_msg) != NULL;
    struct {
        int echo; /* 0: this rank has an error of its own */
        int rank; /* this rank */
    } in = {echo, c->rank}, first;
    char msg[sizeof own];
    int same = 0, nsame = 0;
    if (MPI_Allreduce(&in, &first, 1, MPI_2INT, MPI_MINLOC, c->comm) != MPI_SUCCESS) {
        goto print; /* no agreement on who speaks: every failing rank says its own */
    }
    memcpy(msg, own, sizeof msg);
    if (MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first.rank, c->comm) != MPI_SUCCESS) {
        goto print;
    }
    same = !echo && strcmp(msg, own) == 0;
    if (MPI_Allreduce(&same, &nsame, 1, MPI_INT, MPI_SUM, c->comm) != MPI_SUCCESS) {
        goto print;
    }
    if (echo || (same && c->rank != first.rank)) {
        return halo_exit_code(rc); /* the first rank says it */
    }
    if (nsame == c->size) {
        fprintf(stderr, "halo: error: %s\n", own); /* every rank's: no rank to name */
        fflush(stderr);
        return halo_exit_code(rc);
    }
print:
    halo_error_print(own);
    return halo_exit_code(rc);
}

/* ---- netem ---- */

void halo_comm_set_netem(halo_comm *c, const halo_netem *ne)
{
    c->netem = *ne;
}

halo_netem halo_comm_netem(const halo_comm *c)
{
    return c->netem;
}

/* Sleeps (never spins) until t0 + delay on the monotonic clock; adds the slept time to stats. */
void halo_comm_netem_wait(halo_comm *c, double t0, double delay)
{
    if (delay <= 0) {
        return;
    }
    double now = halo_now();
    double until = t0 + delay;
    if (now >= until) {
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    c->stats.netem_wait_s += halo_now() - now;
}

/* Polls requests for POLL_SPIN_S, yielding the core between tests (a rank that waits for a peer
 * on an oversubscribed machine hands its core to the peer doing the work instead of spinning:
 * 2 ranks with one core taken elsewhere ran 2.4x faster than with a plain spin), then tests
 * every POLL_SLEEP_NS, so that a rank waiting for a slow (or netem-delayed) peer leaves its core
 * to others. */
#define POLL_SPIN_S 1e-3
#define POLL_SLEEP_NS 20000

static int comm_wait(int n, MPI_Request *req)
{
    double t0 = halo_now(), c0 = halo_thread_cpu();
    for (;;) {
        int done = 0;
        int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || done) {
            halo_thread_wait_cpu_add(halo_thread_cpu() - c0); /* all of it polling */
        }
        if (rc != MPI_SUCCESS) {
            return mpi_err(rc, "MPI_Testall");
        }
        if (done) {
            return 0;
        }
        if (halo_now() - t0 > POLL_SPIN_S) {
            struct timespec ts = {0, POLL_SLEEP_NS};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

/* ---- batched exchange ---- */

int halo_comm_xchg_start(halo_comm *c, halo_xchg *x, const void *send, const int64_t *send_off)
{
    int P = c->size;
    if (x->recv_off == NULL || x->ranks != P) {
        halo_free(x->recv_off);
        halo_free(x->req);
        x->recv_off = HALO_NEW(int64_t, P + 1);
        x->req = HALO_NEW(MPI_Request, 2 * P);
        x->ranks = P;
    }
    x->t0 = halo_now();
    x->nreq = 0;
    for (int p = 0; p < P; p++) {
        c->counts_out[p] = send_off[p + 1] - send_off[p];
        if (c->counts_out[p] > INT_MAX) {
            return halo_errorf(HALO_EMPI, "exchange: %lld bytes for rank %d exceed one message",
                               (long long)c->counts_out[p], p);
        }
    }
    MPI_Request creq;
    MPI_CHECK(MPI_Ialltoall(c->counts_out, 1, MPI_INT64_T, c->counts_in, 1, MPI_INT64_T, c->comm,
                            &creq));
    HALO_CHECK(comm_wait(1, &creq));
    x->recv_off[0] = 0;
    for (int p = 0; p < P; p++) {
        x->recv_off[p + 1] = x->recv_off[p] + c->counts_in[p];
    }
    if (x->recv_off[P] > x->recv_cap) {
        halo_free(x->recv);
        x->recv_cap = x->recv_off[P] + x->recv_off[P] / 4 + 64;
        x->recv = halo_malloc((size_t)x->recv_cap);
    }
    MPI_Request *req = x->req;
    x->bytes_in = 0;
    x->bytes_out = 0;
    for (int p = 0; p < P; p++) {
        int64_t n = c->counts_in[p];
        if (n > 0 && p != c->rank) {
            int rc = MPI_Irecv(x->recv + x->recv_off[p], (int)n, MPI_BYTE, p, 7, c->comm,
                               &req[x->nreq++]);
            if (rc != MPI_SUCCESS) {
                return mpi_err(rc, "MPI_Irecv");
            }
            x->bytes_in += n;
        }
    }
    /* Sends in rank order starting after this rank, so peers are not all hit by rank 0 first. */
    for (int i = 1; i < P; i++) {
        int p = (c->rank + i) % P;
        int64_t n = c->counts_out[p];
        if (n > 0) {
            int rc = MPI_Isend((const char *)send + send_off[p], (int)n, MPI_BYTE, p, 7, c->comm,
                               &req[x->nreq++]);
            if (rc != MPI_SUCCESS) {
                return mpi_err(rc, "MPI_Isend");
            }
            x->bytes_out += n;
            c->stats.messages++;
        }
    }
    if (c->counts_out[c->rank] > 0) {
        memcpy(x->recv + x->recv_off[c->rank], (const char *)send + send_off[c->rank],
               (size_t)c->counts_out[c->rank]);
    }
    c->stats.exchanges++;
    c->stats.bytes_sent += x->bytes_out;
    c->stats.bytes_recv += x->bytes_in;
    return 0;
}

int halo_comm_xchg_wait(halo_comm *c, halo_xchg *x)
{
    if (x->nreq > 0) {
        HALO_CHECK(comm_wait(x->nreq, (MPI_Request *)x->req));
        x->nreq = 0;
    }
    int64_t bytes = x->bytes_out > x->bytes_in ? x->bytes_out : x->bytes_in;
    halo_comm_netem_wait(c, x->t0, halo_netem_delay(&c->netem, bytes));
    return 0;
}

void halo_xchg_free(halo_xchg *x)
{
    halo_free(x->recv);
    halo_free(x->recv_off);
    halo_free(x->req);
    memset(x, 0, sizeof *x);
}

/* ---- rows exchange ---- */

/* Tag of rows messages (batched exchanges use 7). */
#define TAG_ROWS 8

/* What one message of a rows exchange carries. */
typedef struct rows_msg {
    int64_t a, b;  /* list entries [a, b) */
    int64_t bytes; /* bytes it carries */
    int kind;      /* ROWS_SEND, ROWS_RECV (in place) or ROWS_RECV_STAGED (scatter on arrival) */
    int peer;      /* the other rank */
} rows_msg;

enum { ROWS_SEND, ROWS_RECV, ROWS_RECV_STAGED };

/* Whether list entries [a, b) lie back to back in memory. */
static int rows_adjacent(const int64_t *disp, int64_t a, int64_t b, int64_t rb)
{
    for (int64_t i = a + 1; i < b; i++) {
        if (disp[i] != disp[i - 1] + rb) {
            return 0;
        }
    }
    return 1;
}

/* Room for n more messages; on the first post since the last wait, clears the counters. */
static void rows_reserve(halo_rows_xchg *x, int64_t n)
{
    if (x->nmsg == 0) {
        x->bytes_in = 0;
        x->bytes_out = 0;
        x->t0 = halo_now();
    }
    if (x->nmsg + n > x->msg_cap) {
        int cap = (int)(x->nmsg + n + 16);
        x->req = halo_realloc(x->req, (size_t)cap * sizeof(MPI_Request));
        x->msg = halo_realloc(x->msg, (size_t)cap * sizeof(rows_msg));
        halo_free(x->done);
        halo_free(x->status);
        x->done = HALO_NEW(int, cap);
        x->status = HALO_NEW(MPI_Status, cap);
        x->msg_cap = cap;
    }
}

/* Rows to look ahead when prefetching a gather or scatter. */
#define ROWS_AHEAD 8

/* Copies rows disp[a..b) at base to `to`, back to back (prefetching rows ahead). */
/* Bytes gathered between two polls of the messages already posted: a send over TCP (or any
 * transport the sender drives) moves only while the sender is inside MPI, so the pieces in flight
 * are pushed on while the next one is gathered and the link does not idle. */
#define ROWS_POLL_BYTES (64 * 1024)

static int rows_progress(halo_rows_xchg *x, int all);

static int rows_gather(halo_rows_xchg *x, char *to, const char *base, const int64_t *disp,
                       int64_t a, int64_t b, int64_t rb)
{
    int64_t every = ROWS_POLL_BYTES / rb > 0 ? ROWS_POLL_BYTES / rb : 1;
    for (int64_t i = a; i < b; i++, to += rb) {
        if (i + ROWS_AHEAD < b) {
            const char *q = base + disp[i + ROWS_AHEAD];
            for (int64_t o = 0; o < rb; o += 64) {
                __builtin_prefetch(q + o);
            }
        }
        memcpy(to, base + disp[i], (size_t)rb);
        if (x->nmsg > 0 && (i - a) % every == every - 1) {
            HALO_CHECK(rows_progress(x, 0));
        }
    }
    return 0;
}

/* Scatters a staged piece that arrived (prefetching destinations ahead). */
static void rows_scatter(const halo_rows_xchg *x, const rows_msg *m)
{
    int64_t rb = x->rrow;
    const char *src = x->rstage + m->a * rb;
    for (int64_t i = m->a; i < m->b; i++, src += rb) {
        if (i + ROWS_AHEAD < m->b) {
            char *q = x->rbase + x->rdisp[i + ROWS_AHEAD];
            for (int64_t o = 0; o < rb; o += 64) {
                __builtin_prefetch(q + o, 1);
            }
        }
        memcpy(x->rbase + x->rdisp[i], src, (size_t)rb);
    }
}

/* Completes the messages that are done (all of them when `all`, polling as comm_wait does):
 * scatters staged pieces, checks the bytes each receive brought. */
static int rows_progress(halo_rows_xchg *x, int all)
{
    MPI_Request *req = x->req;
    MPI_Status *status = x->status;
    rows_msg *msg = x->msg;
    double t0 = halo_now();
    for (;;) {
        double c0 = all ? halo_thread_cpu() : 0;
        int nd = 0;
        int rc = MPI_Testsome(x->nmsg, req, &nd, x->done, status);
        if (rc != MPI_SUCCESS) {
            return mpi_err(rc, "MPI_Testsome(rows)");
        }
        if (nd == MPI_UNDEFINED) {
            return 0; /* nothing left */
        }
        for (int k = 0; k < nd; k++) {
            const rows_msg *m = &msg[x->done[k]];
            if (m->kind == ROWS_SEND) {
                continue;
            }
            int got = -1;
            if (MPI_Get_count(&status[k], MPI_BYTE, &got) != MPI_SUCCESS || got != m->bytes) {
                return halo_errorf(HALO_ESTATE, "rows exchange: rank %d sent %d bytes, %lld "
                                   "expected", m->peer, got, (long long)m->bytes);
            }
            if (m->kind == ROWS_RECV_STAGED) {
                rows_scatter(x, m);
            }
        }
        if (!all) {
            return 0;
        }
        if (nd > 0) {
            t0 = halo_now(); /* pieces are flowing: keep polling at full speed */
            continue;        /* their scatter is the exchange's work, not polling */
        }
        if (halo_now() - t0 > POLL_SPIN_S) {
            struct timespec ts = {0, POLL_SLEEP_NS};
            nanosleep(&ts, NULL);
        }
        halo_thread_wait_cpu_add(halo_thread_cpu() - c0);
    }
}

/* Posts one message. */
static int rows_post(halo_comm *c, halo_rows_xchg *x, int kind, void *buf, int peer, int64_t a,
                     int64_t b, int64_t bytes)
{
    MPI_Request *req = x->req;
    rows_msg *m = (rows_msg *)x->msg + x->nmsg;
    m->a = a;
    m->b = b;
    m->bytes = bytes;
    m->kind = kind;
    m->peer = peer;
    int rc = kind == ROWS_SEND
                 ? MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, TAG_ROWS, c->comm, &req[x->nmsg])
                 : MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, TAG_ROWS, c->comm, &req[x->nmsg]);
    if (rc != MPI_SUCCESS) {
        return mpi_err(rc, kind == ROWS_SEND ? "MPI_Isend(rows)" : "MPI_Irecv(rows)");
    }
    x->nmsg++;
    return 0;
}

int halo_comm_rows_recv(halo_comm *c, halo_rows_xchg *x, void *base, const int64_t *disp,
                        const int64_t *off, int64_t row_bytes)
{
    int P = c->size;
    int64_t rb = row_bytes, n = 0;
    for (int p = 0; p < P; p++) {
        n += p != c->rank && rb > 0 ? halo_comm_rows_pieces(off[p + 1] - off[p], rb) : 0;
    }
    rows_reserve(x, n);
    x->rbase = base;
    x->rdisp = disp;
    x->rrow = rb;
    if (rb > INT_MAX) {
        return halo_errorf(HALO_EMPI, "rows exchange: rows of %lld bytes", (long long)rb);
    }
    for (int p = 0; p < P; p++) {
        if (p == c->rank) {
            continue;
        }
        int k = 0;
        for (int64_t a = off[p], b; a < off[p + 1]; a = b, k++) {
            int64_t per = halo_comm_piece_rows(k, rb);
            b = a + per < off[p + 1] ? a + per : off[p + 1];
            if (rows_adjacent(disp, a, b, rb)) {
                HALO_CHECK(rows_post(c, x, ROWS_RECV, (char *)base + disp[a], p, a, b,
                                     (b - a) * rb));
            } else {
                if (off[P] * rb > x->rstage_cap) { /* by list entry; first scattered piece */
                    halo_free(x->rstage);
                    x->rstage_cap = off[P] * rb;
                    x->rstage = halo_malloc((size_t)x->rstage_cap);
                }
                HALO_CHECK(rows_post(c, x, ROWS_RECV_STAGED, x->rstage + a * rb, p, a, b,
                                     (b - a) * rb));
            }
            x->bytes_in += (b - a) * rb;
        }
    }
    return 0;
}

int halo_comm_rows_send(halo_comm *c, halo_rows_xchg *x, const void *base, const int64_t *disp,
                        const int64_t *off, int64_t row_bytes)
{
    int P = c->size;
    int64_t rb = row_bytes, n = 0;
    int64_t pmax = 0; /* most pieces of one peer */
    for (int p = 0; p < P; p++) {
        int64_t k = p != c->rank && rb > 0 ? halo_comm_rows_pieces(off[p + 1] - off[p], rb) : 0;
        n += k;
        pmax = k > pmax ? k : pmax;
    }
    if (rb > INT_MAX) {
        return halo_errorf(HALO_EMPI, "rows exchange: rows of %lld bytes", (long long)rb);
    }
    rows_reserve(x, n);
    x->t0 = halo_now();
    const char *src = base;
    /* piece k of every peer (peers in rank order starting after this rank), then piece k+1:
     * each Isend starts moving its piece while the next one is gathered */
    int64_t *cur = HALO_NEW(int64_t, P); /* next entry of each peer */
    memcpy(cur, off, (size_t)P * sizeof *cur);
    for (int k = 0; k < pmax; k++) {
        int64_t per = halo_comm_piece_rows(k, rb);
        for (int i = 1; i < P; i++) {
            int p = (c->rank + i) % P;
            int64_t a = cur[p];
            if (a >= off[p + 1]) {
                continue;
            }
            int64_t b = a + per < off[p + 1] ? a + per : off[p + 1];
            cur[p] = b;
            void *buf;
            if (rows_adjacent(disp, a, b, rb)) {
                buf = (void *)(uintptr_t)(src + disp[a]); /* MPI only reads it */
            } else {
                if (off[P] * rb > x->sstage_cap) { /* by list entry; first gathered piece */
                    halo_free(x->sstage);
                    x->sstage_cap = off[P] * rb;
                    x->sstage = halo_malloc((size_t)x->sstage_cap);
                }
                buf = x->sstage + a * rb;
                int rg = rows_gather(x, buf, src, disp, a, b, rb);
                if (rg < 0) {
                    halo_free(cur);
                    return rg;
                }
            }
            int rc = rows_post(c, x, ROWS_SEND, buf, p, a, b, (b - a) * rb);
            rc = rc < 0 ? rc : rows_progress(x, 0);
            if (rc < 0) {
                halo_free(cur);
                return rc;
            }
            x->bytes_out += (b - a) * rb;
            c->stats.messages++;
        }
    }
    halo_free(cur);
    c->stats.exchanges++;
    c->stats.bytes_sent += x->bytes_out;
    c->stats.bytes_recv += x->bytes_in;
    return 0;
}

int halo_comm_rows_test(halo_comm *c, halo_rows_xchg *x)
{
    (void)c;
    return x->nmsg > 0 ? rows_progress(x, 0) : 0;
}

int halo_comm_rows_wait(halo_comm *c, halo_rows_xchg *x)
{
    int rc = x->nmsg > 0 ? rows_progress(x, 1) : 0;
    x->nmsg = 0;
    HALO_CHECK(rc);
    int64_t bytes = x->bytes_out > x->bytes_in ? x->bytes_out : x->bytes_in;
    halo_comm_netem_wait(c, x->t0, halo_netem_delay(&c->netem, bytes));
    return 0;
}

void halo_rows_xchg_free(halo_rows_xchg *x)
{
    halo_free(x->req);
    halo_free(x->msg);
    halo_free(x->done);
    halo_free(x->status);
    halo_free(x->rstage);
    halo_free(x->sstage);
    memset(x, 0, sizeof *x);
}

/* ---- collectives ---- */

/* Netem for a ring allreduce of `bytes` bytes. */
static void netem_allreduce(halo_comm *c, double t0, int64_t bytes)
{
    if (c->size < 2 || (c->netem.lat_s <= 0 && c->netem.bw_bits <= 0)) {
        return;
    }
    int steps = 2 * (c->size - 1);
    double d = steps * c->netem.lat_s;
    if (c->netem.bw_bits > 0) {
        d += (double)bytes * steps / c->size * 8.0 / c->netem.bw_bits;
    }
    halo_comm_netem_wait(c, t0, d);
}

int halo_comm_barrier(halo_comm *c)
{
    MPI_Request req;
    MPI_CHECK(MPI_Ibarrier(c->comm, &req));
    return comm_wait(1, &req);
}

/* In-place allreduce in pieces of at most INT_MAX elements. */
static int allreduce(halo_comm *c, void *buf, int64_t n, MPI_Datatype t, size_t esize, MPI_Op op)
{
    double t0 = halo_now();
    char *p = buf;
    for (int64_t done = 0; done < n;) {
        int64_t k = n - done < INT_MAX / 2 ? n - done : INT_MAX / 2;
        MPI_Request req;
        MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, p + done * esize, (int)k, t, op, c->comm, &req));
        HALO_CHECK(comm_wait(1, &req));
        done += k;
    }
    netem_allreduce(c, t0, n * (int64_t)esize);
    return 0;
}

int halo_comm_allreduce_sum_f32(halo_comm *c, float *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_FLOAT, sizeof *buf, MPI_SUM);
}

int halo_comm_allreduce_sum_f64(halo_comm *c, double *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_DOUBLE, sizeof *buf, MPI_SUM);
}

int halo_comm_allreduce_sum_i64(halo_comm *c, int64_t *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_INT64_T, sizeof *buf, MPI_SUM);
}

int halo_comm_allreduce_max_i64(halo_comm *c, int64_t *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_INT64_T, sizeof *buf, MPI_MAX);
}

int halo_comm_allreduce_min_i64(halo_comm *c, int64_t *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_INT64_T, sizeof *buf, MPI_MIN);
}

int halo_comm_allreduce_max_f64(halo_comm *c, double *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_DOUBLE, sizeof *buf, MPI_MAX);
}

int halo_comm_bcast(halo_comm *c, void *buf, int64_t n, int root)
{
    if (n > INT_MAX) {
        return halo_errorf(HALO_EMPI, "bcast: %lld bytes exceed one message", (long long)n);
    }
    MPI_CHECK(MPI_Bcast(buf, (int)n, MPI_BYTE, root, c->comm));
    return 0;
}

int halo_comm_allgather(halo_comm *c, const void *in, int64_t n, void *out)
{
    if (n > INT_MAX) {
        return halo_errorf(HALO_EMPI, "allgather: %lld bytes exceed one message", (long long)n);
    }
    MPI_CHECK(MPI_Allgather(in, (int)n, MPI_BYTE, out, (int)n, MPI_BYTE, c->comm));
    return 0;
}

int halo_comm_send(halo_comm *c, const void *buf, int64_t n, int peer, int tag)
{
    if (n > INT_MAX) {
        return halo_errorf(HALO_EMPI, "send: %lld bytes exceed one message", (long long)n);
    }
    MPI_CHECK(MPI_Send(buf, (int)n, MPI_BYTE, peer, tag, c->comm));
    c->stats.messages++;
    c->stats.bytes_sent += n;
    return 0;
}

int halo_comm_recv(halo_comm *c, void *buf, int64_t n, int peer, int tag)
{
    if (n > INT_MAX) {
        return halo_errorf(HALO_EMPI, "recv: %lld bytes exceed one message", (long long)n);
    }
    double t0 = halo_now();
    MPI_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, tag, c->comm, MPI_STATUS_IGNORE));
    c->stats.bytes_recv += n;
    halo_comm_netem_wait(c, t0, halo_netem_delay(&c->netem, n));
    return 0;
}

halo_comm_stats halo_comm_get_stats(const halo_comm *c)
{
    return c->stats;
}

void halo_comm_stats_reset(halo_comm *c)
{
    memset(&c->stats, 0, sizeof c->stats);
}
