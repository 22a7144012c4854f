/* MPI tests of the failure watch (comm/watch.c): it runs on every rank, a rank busy away from
 * MPI for longer than the silence timeout is not reported (the heartbeats come from the watch's
 * own thread), and ranks that finish at different times are not reported (the goodbye precedes
 * the closed connection). A false report would end the job with MPI_Abort, failing the run. */
// halo-mpi: -np 3 -x HALO_WATCH_TIMEOUT=1
// halo-mpi: -np 2 --mca btl tcp,self -x HALO_WATCH_TIMEOUT=1
#include "../common/mpitap.h"
#include "comm/comm.h"

#include <stdio.h>
#include <time.h>

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void the_watch_runs_on_every_rank(void)
{
    int64_t on = halo_comm_watching();
    MUST(halo_comm_allreduce_min_i64(comm, &on, 1));
    EXPECT(on == 1);
    report("the_watch_runs_on_every_rank");
}

/* Rank 1 computes (sleeps) for 2.5 timeouts without any MPI call; nobody reports it. */
static void a_rank_busy_longer_than_the_timeout_is_not_reported(void)
{
    if (rank == 1) {
        sleep_s(2.5);
    }
    MUST(halo_comm_barrier(comm));
    report("a_rank_busy_longer_than_the_timeout_is_not_reported");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    the_watch_runs_on_every_rank();
    a_rank_busy_longer_than_the_timeout_is_not_reported();
    if (rank == 0) {
        /* checked by the exit status: rank 0 reaches its finish 1.5 timeouts after the others
         * closed their connections; a report would abort the job */
        printf("ok %d - ranks_finishing_at_different_times_are_not_reported\n", ++test_no);
        printf("1..%d\n", test_no);
        fflush(stdout);
        sleep_s(1.5);
    }
    halo_comm_finalize(comm);
    return total_failed > 0;
}
