/* The only door to MPI: start-up, failing together, batched exchanges, collectives, netem. */
#ifndef HALO_COMM_H
#define HALO_COMM_H

#include "core/netem.h"

#include <stddef.h>
#include <stdint.h>

/* A communication channel (an MPI communicator plus netem and counters). Not thread-safe: one
 * channel per thread; make more with halo_comm_dup (all ranks, same order). */
typedef struct halo_comm halo_comm;


/* Counters of one channel (since creation or the last halo_comm_stats_reset). */
typedef struct halo_comm_stats {
    int64_t exchanges;  /* batched exchanges (halo_comm_xchg_start calls) */
    int64_t messages;   /* point-to-point messages sent to other ranks */
    int64_t bytes_sent; /* payload bytes sent to other ranks */
    int64_t bytes_recv; /* payload bytes received from other ranks */
    double netem_wait_s;/* time spent sleeping for the emulated network */
} halo_comm_stats;

/* One batched exchange in flight: each rank sends send_off[p+1]-send_off[p] bytes to each peer p
 * (one message per peer, none when empty) and receives what each peer sends it. */
typedef struct halo_xchg {
    char *recv;         /* received bytes, peer p's at recv + recv_off[p] (valid after wait) */
    int64_t *recv_off;  /* [ranks+1] byte offsets into recv */
    int64_t recv_cap;   /* allocated bytes of recv */
    void *req;          /* internal: the MPI requests */
    int nreq;           /* internal: requests posted */
    int64_t bytes_out;  /* bytes sent to other ranks by this exchange */
    int64_t bytes_in;   /* bytes received from other ranks by this exchange */
    double t0;          /* when the exchange started (for netem) */
    int ranks;          /* size of the channel it was started on */
} halo_xchg;

/* Starts MPI with MPI_THREAD_MULTIPLE requested (the level provided is kept, see
 * halo_comm_thread_level), sets the log rank, and returns a channel over all ranks (collective;
 * call once per process). */
int halo_comm_init(int *argc, char ***argv, halo_comm **out);
/* Frees the world channel and finalises MPI (collective). */
void halo_comm_finalize(halo_comm *c);
/* For an error found before halo_comm_init on a process mpirun launched: starts MPI and waits
 * (at most timeout_s) until every rank has come here too, then finalises. mpirun ends the job at
 * the first non-zero exit, so without this meeting a rank that exits first can end rank 0
 * before rank 0 has said the error. Call it only for an error every rank finds (a bad flag):
 * a rank that never comes costs the others the timeout. */
void halo_comm_meet_before_exit(double timeout_s);
/* A new channel over the same ranks (collective): for a second thread. */
int halo_comm_dup(halo_comm *c, halo_comm **out);
void halo_comm_free(halo_comm *c);

int halo_comm_rank(const halo_comm *c);
int halo_comm_size(const halo_comm *c);
/* Thread level MPI provided (0 single, 1 funneled, 2 serialized, 3 multiple). */
int halo_comm_thread_level(void);
/* Host name of this rank (for messages). */
const char *halo_comm_host(void);
/* Whether rank peer of c runs on the same host as this rank (shared memory reaches it). */
int halo_comm_same_host(const halo_comm *c, int peer);

/* Whether the failure watch runs on this rank (docs/cluster.md): a TCP side channel to the ring
 * neighbours with heartbeats, started by halo_comm_init on every rank or on none, that names a
 * rank which ended without finalising, a host that stopped answering, or a lost launcher, and
 * then ends the job. HALO_WATCH=0 turns it off; HALO_WATCH_TIMEOUT (s, default 3) and
 * HALO_WATCH_INTERVAL (s, default 0.5) tune it; HALO_FAILURE_LOG=FILE also appends the report
 * there (for when the launcher that forwards stderr is itself gone). */
int halo_comm_watching(void);
/* Invariant 5, local side: prints "halo: error: rank R: <message of rc>" and aborts every rank of
 * the job (MPI_Abort with the exit status of rc). Never returns. */
void halo_comm_fail(halo_comm *c, int rc) __attribute__((noreturn));
/* Invariant 5, collective side: every rank passes its own rc; returns 0 when all are 0, else the
 * lowest rank's failing code, with a message naming that rank on the ranks that did not fail (the
 * failing rank keeps its own message). */
int halo_comm_agree(halo_comm *c, int rc);

/* Invariant 5 without MPI_Abort, for an error every rank reaches together: collective (every
 * rank passes its own rc, 0 when it did not fail); agrees as halo_comm_agree, then prints one
 * line per distinct error: the first failing rank's message once ("halo: error: MSG" when every
 * rank has it, else naming the rank), another rank's only when it differs, nothing on a rank
 * that did not fail itself. Returns the exit status (0 when no rank failed). Exiting with it,
 * rather than aborting, lets `mpirun -q` end the job without Open MPI's banners. */
int halo_comm_report(halo_comm *c, int rc);

/* Netem (core/netem.h) on a channel. */
void halo_comm_set_netem(halo_comm *c, const halo_netem *ne);
halo_netem halo_comm_netem(const halo_comm *c);
/* Sleeps until t0 + delay (halo_now() clock) and counts it in the channel's netem_wait_s: for
 * data moved without messages (the shared-memory pull path) so that netem applies the same. */
void halo_comm_netem_wait(halo_comm *c, double t0, double delay);

/* Batched exchange (collective): counts go with one MPI_Alltoall, payloads with one Isend/Irecv
 * per non-empty peer; the part for this rank itself is copied. send must stay valid until wait.
 * Between start and wait the caller can do local work (it overlaps the transfer and netem). */
int halo_comm_xchg_start(halo_comm *c, halo_xchg *x, const void *send, const int64_t *send_off);
/* Completes the exchange and waits out the netem delay. */
int halo_comm_xchg_wait(halo_comm *c, halo_xchg *x);
void halo_xchg_free(halo_xchg *x);

/* Rows exchange: rows listed by place on both sides, for replies whose size both sides know
 * already (the rows asked for in a request), so there is no count exchange. A list: peer p's
 * rows are disp[off[p] .. off[p+1]), row i at base + disp[i] (disp may be negative), row_bytes
 * each; the entries for this rank itself are ignored (callers copy their own rows); rows of 0
 * bytes move nothing. Receive and send lists of one exchange must agree pairwise.
 * How it moves: each peer's rows go in pieces, one message each, growing from
 * HALO_ROWS_PIECE_MIN bytes (doubling) to HALO_ROWS_PIECE_MAX, so that the sender gathers piece
 * k+1 while piece k travels and the receiver scatters piece k while piece k+1 arrives; a piece
 * whose rows are adjacent in memory is sent or received in place (no copy on that side). The receiver posts its receives first (before its requests go
 * out), the owner its sends when the request has arrived. MPI derived datatypes would avoid the
 * copies too, but Open MPI 4.1 moved hindexed rows 5-8x slower than plain bytes here. */
#define HALO_ROWS_PIECE_MIN (64 * 1024)
#define HALO_ROWS_PIECE_MAX (1024 * 1024)

/* Rows in piece k of a peer's list, rows of rb bytes: pieces grow from HALO_ROWS_PIECE_MIN
 * bytes, doubling, to HALO_ROWS_PIECE_MAX (at least one row), so that the first piece starts
 * moving soon and a large reply takes few messages. Both sides cut the same pieces (and the
 * simulator counts the same messages). */
static inline int64_t halo_comm_piece_rows(int k, int64_t rb)
{
    int64_t bytes = k < 20 ? (int64_t)HALO_ROWS_PIECE_MIN << k : HALO_ROWS_PIECE_MAX;
    bytes = bytes < HALO_ROWS_PIECE_MAX ? bytes : HALO_ROWS_PIECE_MAX;
    int64_t n = bytes / rb;
    return n > 0 ? n : 1;
}

/* Pieces (messages) of a list of n rows of rb bytes. */
static inline int64_t halo_comm_rows_pieces(int64_t n, int64_t rb)
{
    int64_t k = 0;
    for (int64_t done = 0; done < n; k++) {
        done += halo_comm_piece_rows((int)k, rb);
    }
    return k;
}

typedef struct halo_rows_xchg {
    void *req;          /* internal: [msg_cap] MPI requests, one per message */
    void *msg;          /* internal: [msg_cap] what each message carries */
    int *done;          /* internal: [msg_cap] indices returned by MPI_Testsome */
    void *status;       /* internal: [msg_cap] their statuses */
    int nmsg;           /* internal: messages posted since the last wait */
    int msg_cap;        /* internal: capacity of the message arrays */
    char *rstage;       /* internal: receive staging for pieces that are scattered */
    int64_t rstage_cap; /* internal: bytes of rstage */
    char *sstage;       /* internal: send staging for pieces that are gathered */
    int64_t sstage_cap; /* internal: bytes of sstage */
    char *rbase;        /* internal: the receive list (kept for the scatter) */
    const int64_t *rdisp; /* internal: its displacements */
    int64_t rrow;       /* internal: its row bytes */
    int64_t bytes_out;  /* bytes sent to other ranks by this exchange */
    int64_t bytes_in;   /* bytes received from other ranks by this exchange */
    double t0;          /* when the sends were posted (netem counts from there) */
} halo_rows_xchg;

/* Posts the receives of a rows exchange (local; call before the requests that cause the replies
 * go out). The destinations and the list must stay untouched until halo_comm_rows_wait. */
int halo_comm_rows_recv(halo_comm *c, halo_rows_xchg *x, void *base, const int64_t *disp,
                        const int64_t *off, int64_t row_bytes);
/* Gathers and posts the sends of a rows exchange (local; every rank of the exchange calls it,
 * with empty lists where it sends nothing, after its receives and when the requests have
 * arrived). Counts one exchange; netem counts from this call. */
int halo_comm_rows_send(halo_comm *c, halo_rows_xchg *x, const void *base, const int64_t *disp,
                        const int64_t *off, int64_t row_bytes);
/* Completes, without waiting, the pieces of x that are done (scatters the staged ones that have
 * arrived, checks their bytes) and lets the transport move the others: call it every few dozen
 * KiB of local work between the posts and halo_comm_rows_wait (a receive over Open MPI's shared
 * memory is copied, and a send over TCP written, only while the rank is inside MPI). */
int halo_comm_rows_test(halo_comm *c, halo_rows_xchg *x);
/* Completes the receives (scattering staged pieces as they arrive) and the sends, checks that
 * each piece brought the bytes expected, and waits out the netem delay. */
int halo_comm_rows_wait(halo_comm *c, halo_rows_xchg *x);
void halo_rows_xchg_free(halo_rows_xchg *x);

/* Collectives (netem charges a ring allreduce: 2(P-1) latencies and 2(P-1)/P of the bytes). */
int halo_comm_barrier(halo_comm *c);
int halo_comm_allreduce_sum_f32(halo_comm *c, float *buf, int64_t n);
int halo_comm_allreduce_sum_f64(halo_comm *c, double *buf, int64_t n);
int halo_comm_allreduce_sum_i64(halo_comm *c, int64_t *buf, int64_t n);
int halo_comm_allreduce_max_i64(halo_comm *c, int64_t *buf, int64_t n);
int halo_comm_allreduce_min_i64(halo_comm *c, int64_t *buf, int64_t n);
int halo_comm_allreduce_max_f64(halo_comm *c, double *buf, int64_t n);
/* Root's n bytes to every rank. */
int halo_comm_bcast(halo_comm *c, void *buf, int64_t n, int root);
/* Every rank's n bytes into out[ranks*n] in rank order. */
int halo_comm_allgather(halo_comm *c, const void *in, int64_t n, void *out);

/* Point-to-point, for benchmarks (blocking, netem applied on receive). */
int halo_comm_send(halo_comm *c, const void *buf, int64_t n, int peer, int tag);
int halo_comm_recv(halo_comm *c, void *buf, int64_t n, int peer, int tag);

halo_comm_stats halo_comm_get_stats(const halo_comm *c);
void halo_comm_stats_reset(halo_comm *c);

#endif
