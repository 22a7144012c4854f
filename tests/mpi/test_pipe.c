/* MPI tests of runtime/pipe: stages that make collective calls on their own channels stay matched
 * across ranks at every depth, with several threads, queues of one and random delays; an error on
 * one rank's worker is agreed on at the batch boundary, the shutdown runs the same batches on
 * every rank, and the channels are still in step for the next pipeline. */
// halo-mpi: -np 4
// halo-mpi: -np 4 --mca btl tcp,self
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/mem.h"
#include "pipe/pipe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXT = 3 };

/* Channels of the stage threads: [0] the second stage, [1..MAXT] the first stage's threads. */
static halo_comm *chan[MAXT + 1];

/* What a batch carries. */
typedef struct slot {
    int64_t sum;   /* first stage: allreduce over ranks of batch * ranks + rank */
    int64_t peers; /* second stage: ranks whose exchange payload named this batch */
} slot;

/* Shared state of a run. */
typedef struct run {
    int fail_rank;        /* rank whose second stage fails (-1 none) */
    int64_t fail_batch;   /* at this batch */
    atomic_long calls[2]; /* stage calls on this rank */
} run;

/* A stage thread's argument. */
typedef struct arg {
    run *r;          /* the run */
    halo_comm *c;    /* its channel */
} arg;

/* First stage: one allreduce on the thread's channel. */
static int stage_reduce(void *p, halo_pipe_item *it)
{
    arg *a = p;
    slot *s = it->data;
    atomic_fetch_add(&a->r->calls[0], 1);
    s->sum = it->batch * ranks + rank;
    return halo_comm_allreduce_sum_i64(a->c, &s->sum, 1);
}

/* Second stage: a batched exchange in which every rank sends the batch number to every peer; a
 * failing rank still makes the exchange (as the trainer's fetch stage does), then fails. */
static int stage_xchg(void *p, halo_pipe_item *it)
{
    arg *a = p;
    slot *s = it->data;
    atomic_fetch_add(&a->r->calls[1], 1);
    int64_t *send = HALO_ALLOC(int64_t, ranks);
    int64_t *off = HALO_ALLOC(int64_t, ranks + 1);
    for (int q = 0; q < ranks; q++) {
        send[q] = it->batch;
        off[q] = q * (int64_t)sizeof(int64_t);
    }
    off[ranks] = ranks * (int64_t)sizeof(int64_t);
    halo_xchg x;
    memset(&x, 0, sizeof x);
    int rc = halo_comm_xchg_start(a->c, &x, send, off);
    if (rc == 0) {
        rc = halo_comm_xchg_wait(a->c, &x);
    }
    s->peers = 0;
    for (int q = 0; rc == 0 && q < ranks; q++) {
        s->peers += *(const int64_t *)(x.recv + x.recv_off[q]) == it->batch;
    }
    halo_xchg_free(&x);
    halo_free(off);
    halo_free(send);
    if (rc < 0) {
        halo_comm_fail(a->c, rc); /* inside a collective: end the job */
    }
    if (rank == a->r->fail_rank && it->batch == a->r->fail_batch) {
        return halo_errorf(HALO_ELUA, "injected failure at batch %lld", (long long)it->batch);
    }
    return 0;
}

/* Runs one pipeline of nb batches like the trainer: the world allreduce of each batch carries a
 * failure flag; on a failure every rank agrees and closes. Returns the agreed code and the
 * batches computed. */
static int run_pipe(run *r, int depth, int threads, int queue_len, int jitter, int64_t nb,
                    int64_t *computed)
{
    arg a0[MAXT], a1 = {r, chan[0]};
    void *p0[MAXT], *p1[1] = {&a1};
    for (int t = 0; t < MAXT; t++) {
        a0[t] = (arg){r, depth > 0 ? chan[1 + t] : comm};
        p0[t] = &a0[t];
    }
    if (depth == 0) {
        a1.c = comm;
    }
    slot slots[HALO_PIPE_MAX_DEPTH + 1];
    void *sp[HALO_PIPE_MAX_DEPTH + 1];
    for (int i = 0; i <= HALO_PIPE_MAX_DEPTH; i++) {
        sp[i] = &slots[i];
    }
    halo_pipe_opts o = {.depth = depth, .queue_len = queue_len, .batches = nb, .nstages = 2,
                        .slots = sp, .jitter_us = jitter, .jitter_seed = (uint64_t)rank};
    o.stages[0] = (halo_pipe_stage){"sample", stage_reduce, threads, p0};
    o.stages[1] = (halo_pipe_stage){"fetch", stage_xchg, 1, p1};
    halo_pipe *p = NULL;
    int rc = halo_pipe_start(&o, &p);
    rc = halo_comm_agree(comm, rc);
    *computed = 0;
    for (int64_t b = 0; rc == 0 && b < nb; b++) {
        halo_pipe_item *it;
        int lrc = halo_pipe_next(p, &it);
        EXPECT(lrc <= 0);
        slot *s = it->data;
        double v[2] = {0, lrc < 0 ? 1.0 : 0.0};
        if (lrc == 0) {
            EXPECT(it->batch == b);
            EXPECT(s->sum == b * ranks * ranks + (int64_t)ranks * (ranks - 1) / 2);
            EXPECT(s->peers == ranks);
            v[0] = (double)b;
        }
        halo_pipe_jitter(p, b, 99);
        MUST(halo_comm_allreduce_sum_f64(comm, v, 2));
        if (v[1] != 0) {
            rc = halo_comm_agree(comm, lrc);
            break;
        }
        EXPECT(v[0] == (double)(b * ranks));
        (*computed)++;
        halo_pipe_release(p, it);
    }
    halo_pipe_close(p);
    return rc;
}

static void collectives_in_stages_stay_matched_at_every_depth(void)
{
    static const int depths[] = {0, 1, 2, 4, 8};
    for (int d = 0; d < 5; d++) {
        for (int t = 1; t <= MAXT; t += 2) {
            run r = {.fail_rank = -1};
            int64_t computed;
            int rc = run_pipe(&r, depths[d], t, 1, 150, 120, &computed);
            EXPECT(rc == 0);
            EXPECT(computed == 120);
            EXPECT(atomic_load(&r.calls[0]) == 120 && atomic_load(&r.calls[1]) == 120);
        }
    }
    report("collectives_in_stages_stay_matched_at_every_depth");
}

static void a_worker_error_on_one_rank_ends_every_rank_at_the_same_batch(void)
{
    static const int depths[] = {0, 1, 3, 8};
    for (int d = 0; d < 4; d++) {
        run r = {.fail_rank = ranks - 1, .fail_batch = 37};
        int64_t computed;
        int rc = run_pipe(&r, depths[d], 2, 1, 100, 200, &computed);
        EXPECT(rc == HALO_ELUA);
        EXPECT(computed == 37);
        if (rank != ranks - 1) {
            EXPECT(strstr(halo_errmsg(), "failed") != NULL);
        } else {
            EXPECT(strstr(halo_errmsg(), "fetch stage, batch 37: injected failure") != NULL);
        }
        /* the shutdown ran the same batches on every rank: released + depth + 1 */
        int64_t c[4] = {atomic_load(&r.calls[0]), -atomic_load(&r.calls[0]),
                        atomic_load(&r.calls[1]), -atomic_load(&r.calls[1])};
        MUST(halo_comm_allreduce_max_i64(comm, c, 4));
        EXPECT(c[0] == -c[1] && c[2] == -c[3]);
        EXPECT(c[0] == 37 + depths[d] + 1);
        /* and the channels are still in step: a clean run on the same channels */
        run ok = {.fail_rank = -1};
        EXPECT(run_pipe(&ok, depths[d], 2, 0, 0, 50, &computed) == 0 && computed == 50);
    }
    report("a_worker_error_on_one_rank_ends_every_rank_at_the_same_batch");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    if (rank == 0) {
        printf("# %d ranks, MPI thread level %d\n", ranks, halo_comm_thread_level());
    }
    if (halo_comm_thread_level() < 3) {
        if (rank == 0) {
            printf("ok 1 - # SKIP MPI_THREAD_MULTIPLE not provided\n1..1\n");
        }
        halo_comm_finalize(comm);
        return 0;
    }
    for (int i = 0; i <= MAXT; i++) {
        MUST(halo_comm_dup(comm, &chan[i]));
    }
    collectives_in_stages_stay_matched_at_every_depth();
    a_worker_error_on_one_rank_ends_every_rank_at_the_same_batch();
    for (int i = 0; i <= MAXT; i++) {
        halo_comm_free(chan[i]);
    }
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_comm_finalize(comm);
    return total_failed > 0;
}
