/* Internal to comm/: the failure watch, a TCP side channel to each rank's ring neighbours with
 * heartbeats, so that a rank that dies or a host that drops off is named by a surviving rank. */
#ifndef HALO_COMM_WATCH_H
#define HALO_COMM_WATCH_H

#include <stdint.h>

/* IPv4 addresses a rank advertises (its interfaces, loopback last). */
#define HALO_WATCH_ADDRS 8

/* What each rank tells every other rank at start-up (one MPI_Allgather of these, as bytes). */
typedef struct halo_watch_card {
    uint64_t token;                /* job token: rank 0's card decides it for the job */
    uint32_t ip[HALO_WATCH_ADDRS]; /* listening addresses, network byte order */
    int32_t nip;                   /* entries of ip in use */
    int32_t pid;                   /* process id (for messages) */
    uint16_t port;                 /* listening port, network byte order */
    char host[62];                 /* host name, NUL-terminated */
} halo_watch_card;

/* Called by the watch thread once it has reported a failure: ends the job (MPI_Abort) and does
 * not return. code is a HALO_E* code. */
typedef void (*halo_watch_abort_fn)(int code);

/* Opens the listening socket and fills this rank's card (local). Returns 0 or HALO_EIO. */
int halo_watch_listen(halo_watch_card *mine);
/* Connects to the right neighbour (rank+1) and accepts the left one (rank-1) of the ring given
 * every rank's card (local, but every rank must call it, since each waits for its left
 * neighbour). Returns 0 or HALO_EIO with a message; on failure nothing is left open. */
int halo_watch_connect(int rank, int size, const halo_watch_card *cards);
/* Starts the watch thread over the connections made (local). abort_fn ends the job. */
int halo_watch_run(halo_watch_abort_fn abort_fn);
/* Clean end, first step: tells both neighbours this rank is finishing (no more heartbeats).
 * Call on every rank, then a barrier, then halo_watch_stop. */
void halo_watch_bye(void);
/* Clean end, second step: waits (briefly) for the neighbours' goodbyes, stops the thread and
 * closes everything. Safe to call when the watch never started. */
void halo_watch_stop(void);
/* Whether the watch thread runs. */
int halo_watch_running(void);
/* This rank is ending the job deliberately with its own message (halo_comm_fail): tells the
 * neighbours, which pass it on and stay quiet instead of reporting this rank as failed. */
void halo_watch_aborting(void);

#endif
