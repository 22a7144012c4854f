/* MPI test of the simulator's embedding traffic (sim.h's halo_sim_embed_traffic): the bytes and
 * messages it counts for a step's gather of embedding rows and the gradients sent back equal what
 * runtime/embed's halo_embed_gather and halo_embed_update move over the channel (its counters),
 * on every rank, for lists with repeats, own rows, and peers asked for nothing. */
// halo-mpi: -np 4
// halo-mpi: -np 3
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "embed/embed.h"
#include "sim/sim.h"

#include <stdio.h>
#include <string.h>

#define NODES 600 /* global ids [0, NODES), every one with a row */
#define DIM 5     /* row width */

static int64_t range[65];

/* Step s of this rank: n ids drawn from the owners this rank talks to in that step (rank r skips
 * owner (r + s) % P, and in step 2 rank 1 asks for nothing at all). */
static int64_t draw(int s, int32_t *gid, int64_t cap)
{
    if (s == 2 && rank == 1) {
        return 0;
    }
    halo_rng r;
    halo_rng_init(&r, 9, HALO_RNG_TEST, (uint64_t)s, (uint64_t)rank, 0);
    int64_t n = 0;
    int skip = (rank + s) % ranks;
    while (n < cap) {
        int32_t v = (int32_t)halo_rng_below(&r, NODES);
        int o = 0;
        while (v >= range[o + 1]) {
            o++;
        }
        if (o != skip || ranks == 1) {
            gid[n++] = v;
        }
        if (halo_rng_below(&r, 4) == 0 && n > 0 && n < cap) {
            gid[n] = gid[n - 1]; /* a repeat */
            n++;
        }
    }
    return n;
}

static void counted_traffic_equals_the_channel(void)
{
    halo_embed_config cfg;
    halo_embed_config_default(&cfg);
    cfg.dim = DIM;
    halo_embed *e = NULL;
    MUST(halo_embed_create(comm, &cfg, range, NULL, NULL, &e));
    int32_t gid[256];
    float rows[256 * DIM], grad[256 * DIM];
    int64_t asked[64], all[64 * 64], served[64];
    for (int s = 0; s < 3; s++) {
        int64_t n = draw(s, gid, 150 + 20 * rank);
        for (int64_t i = 0; i < n * DIM; i++) {
            grad[i] = 0.01f * (float)(i % 7);
        }
        memset(asked, 0, sizeof asked);
        for (int64_t i = 0; i < n; i++) {
            int o = 0;
            while (gid[i] >= range[o + 1]) {
                o++;
            }
            asked[o]++;
        }
        MUST(halo_comm_allgather(comm, asked, (int64_t)ranks * 8, all));
        for (int p = 0; p < ranks; p++) {
            served[p] = all[p * ranks + rank]; /* what peer p asks of this rank */
        }
        halo_comm_stats c0 = halo_comm_get_stats(comm);
        MUST(halo_embed_gather(e, n, gid, rows));
        MUST(halo_embed_update(e, n, gid, grad, NULL, 1.0f));
        halo_comm_stats c1 = halo_comm_get_stats(comm);
        halo_sim_embed_stats st;
        halo_sim_embed_traffic(ranks, rank, asked, served, DIM * 4, &st);
        EXPECT(st.bytes_sent == c1.bytes_sent - c0.bytes_sent);
        EXPECT(st.bytes_recv == c1.bytes_recv - c0.bytes_recv);
        EXPECT(st.messages == c1.messages - c0.messages);
        EXPECT(st.rows == n);
        EXPECT(st.remote_rows == n - asked[rank]);
        if (s == 0 && rank == 0) {
            printf("# step 0 rank 0: %lld rows, sent %lld bytes (%lld counted), %lld messages\n",
                   (long long)n, (long long)(c1.bytes_sent - c0.bytes_sent),
                   (long long)st.bytes_sent, (long long)(c1.messages - c0.messages));
        }
    }
    halo_embed_free(e);
    report("the simulator's embedding bytes and messages equal runtime/embed's");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    if (ranks > 64) {
        halo_comm_fail(comm, halo_errorf(HALO_EUSAGE, "test_sim_embed: at most 64 ranks"));
    }
    for (int p = 0; p <= ranks; p++) {
        range[p] = (int64_t)NODES * p / ranks;
    }
    counted_traffic_equals_the_channel();
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_comm_finalize(comm);
    return total_failed > 0;
}
