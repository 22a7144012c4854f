/* halo sample: runs the distributed data path (sampling + feature pulls) over a partition under
 * mpirun and prints the counts (sampled edges, input nodes, remote nodes, bytes) and times. */
#include "cli/cli.h"

#include "comm/comm.h"
#include "core/args.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sample/sample.h"
#include "store/store.h"

#include <stdio.h>
#include <string.h>

/* Per-rank figures gathered on rank 0 (all doubles so one allgather carries them). */
enum {
    F_BATCHES,
    F_EDGES,
    F_INPUT,
    F_REMOTE,
    F_BYTES,
    F_SAMPLE_S,
    F_PULL_S,
    F_NETEM_S,
    F_MAPPED,
    F_RSS,
    F_COUNT
};

/* Epochs of sampling and pulling on this rank; fills fig[F_COUNT]. Collective. */
static int run_epochs(halo_store *st, const int *fanouts, const halo_rel_fanouts *fan,
                      int layers, int64_t batch, int epochs, int64_t max_batches, uint64_t seed,
                      double *fig)
{
    int64_t nt = halo_store_part(st)->num_train;
    int64_t nb = (nt + batch - 1) / batch;
    if (max_batches > 0 && nb > max_batches) {
        nb = max_batches;
    }
    int32_t *order = HALO_ALLOC(int32_t, nt > 0 ? nt : 1);
    float *rows = NULL;
    int64_t rows_cap = 0;
    halo_sampler *smp = halo_sampler_new();
    halo_minibatch mb;
    halo_store_pull pull;
    memset(&mb, 0, sizeof mb);
    memset(&pull, 0, sizeof pull);
    int rc = 0;
    for (int ep = 0; ep < epochs; ep++) {
        /* per-epoch shuffle of this part's seeds (Fisher-Yates, keyed by seed, epoch, part) */
        memcpy(order, halo_store_part(st)->train, (size_t)nt * sizeof *order);
        halo_rng r;
        halo_rng_init(&r, seed, HALO_RNG_SHUFFLE, (uint64_t)ep, (uint64_t)halo_store_rank(st), 0);
        for (int64_t i = nt - 1; i > 0; i--) {
            int64_t j = (int64_t)halo_rng_below(&r, (uint64_t)i + 1);
            int32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int64_t b = 0; b < nb; b++) {
            int64_t s0 = b * batch, s1 = s0 + batch < nt ? s0 + batch : nt;
            halo_sample_key k = {seed, ep, b};
            double t0 = halo_now();
            if (fan != NULL) {
                HALO_TRY(halo_store_sample_typed(st, smp, *fan, layers, &k, order + s0,
                                                 (int32_t)(s1 - s0), &mb));
            } else {
                HALO_TRY(halo_store_sample(st, smp, fanouts, layers, &k, order + s0,
                                           (int32_t)(s1 - s0), &mb));
            }
            double t1 = halo_now();
            int64_t need = (int64_t)mb.num_input * halo_store_feat_dim(st);
            if (need > rows_cap) {
                halo_free(rows);
                rows_cap = need + need / 2 + 16;
                rows = HALO_ALLOC(float, rows_cap);
            }
            HALO_TRY(halo_store_pull_rows(st, mb.input, mb.num_input, rows, &pull));
            double t2 = halo_now();
            fig[F_BATCHES] += 1;
            fig[F_EDGES] += (double)halo_sample_edges(&mb);
            fig[F_INPUT] += mb.num_input;
            fig[F_REMOTE] += (double)pull.fetched;
            fig[F_BYTES] += (double)pull.bytes;
            fig[F_SAMPLE_S] += t1 - t0;
            fig[F_PULL_S] += t2 - t1;
        }
    }
fail:
    halo_store_pull_free(&pull);
    halo_sample_free(&mb);
    halo_sampler_free(smp);
    halo_free(rows);
    halo_free(order);
    return rc;
}

/* The --fanouts of the partition PDIR: per relation into fan on a typed partition (*typed),
 * else per layer into fanouts. Returns the layers, or the error. Its relation names are read
 * before MPI starts, so that a bad spec is one usage line on every rank (a bad partition.json
 * is reported by the store, naming the rank). */
static int sample_fanouts(const char *pdir, const char *fanout_s, int *fanouts,
                          halo_rel_fanouts fan, bool *typed)
{
    int rc;
    halo_partinfo *pi = NULL;
    if (halo_partinfo_load(pdir, &pi) == 0 && pi->nrels > 0) {
        *typed = true;
        rc = halo_sample_parse_rel_fanouts(fanout_s, pi->rel, pi->nrels, fan, HALO_MAX_LAYERS);
    } else {
        halo_error_clear();
        rc = halo_sample_parse_fanouts(fanout_s, fanouts, HALO_MAX_LAYERS);
    }
    halo_partinfo_free(pi);
    return rc;
}

/* Rank 0's table: the run's line, a row of figures per rank (all: ranks x F_COUNT) and the
 * total, and the wall time. */
static void sample_print(const double *all, int ranks, const char *fanout_s, int64_t batch,
                         int epochs, const char *netem_s, double wall)
{
    printf("halo sample: %d rank%s, fanouts %s, batch %lld, epochs %d, netem %s, MPI thread "
           "level %d\n", ranks, halo_plural(ranks), fanout_s, (long long)batch, epochs, netem_s,
           halo_comm_thread_level());
    printf("%-6s %8s %14s %12s %12s %14s %9s %9s %9s %10s %10s\n", "rank", "batches",
           "sampled_edges", "input_nodes", "remote_nodes", "bytes_remote", "sample_s",
           "pull_s", "netem_s", "part_MiB", "rss_MiB");
    double tot[F_COUNT] = {0};
    for (int r = 0; r <= ranks; r++) {
        const double *f = r < ranks ? all + (int64_t)r * F_COUNT : tot;
        if (r < ranks) {
            for (int i = 0; i < F_COUNT; i++) {
                tot[i] += f[i];
            }
        }
        char name[16];
        snprintf(name, sizeof name, r < ranks ? "%d" : "total", r);
        printf("%-6s %8.0f %14.0f %12.0f %12.0f %14.0f %9.3f %9.3f %9.3f %10.1f %10.1f\n", name,
               f[F_BATCHES], f[F_EDGES], f[F_INPUT], f[F_REMOTE], f[F_BYTES], f[F_SAMPLE_S],
               f[F_PULL_S], f[F_NETEM_S], f[F_MAPPED] / 1048576.0, f[F_RSS] / 1048576.0);
    }
    printf("wall %.3f s\n", wall);
    fflush(stdout);
}

/* Adds this rank's netem wait and memory to fig and gathers every rank's figures (ranks x
 * F_COUNT, to free); a failure ends the job. */
static double *gather_figures(halo_comm *comm, halo_store *st, double fig[F_COUNT], int ranks)
{
    halo_store_memory mem = halo_store_mem(st);
    fig[F_NETEM_S] = halo_comm_get_stats(comm).netem_wait_s;
    fig[F_MAPPED] = (double)mem.mapped_bytes;
    fig[F_RSS] = (double)mem.rss_peak;
    double *all = HALO_ALLOC(double, (int64_t)ranks * F_COUNT);
    int rc = halo_comm_allgather(comm, fig, F_COUNT * sizeof(double), all);
    if (rc < 0) {
        halo_comm_fail(comm, rc);
    }
    return all;
}

int halo_cmd_sample(int argc, char **argv)
{
    const char *fanout_s = "10,25";
    const char *netem_s = "off";
    int64_t batch = HALO_DEFAULT_BATCH, max_batches = 0, seed = 1;
    int epochs = HALO_DEFAULT_EPOCHS;
    const halo_opt opts[] = {
        {"fanouts", 'f', HALO_OPT_STRING, &fanout_s, "LIST",
         "fanout per layer, input layer first as in DGL; -1 = all neighbours; on a typed "
         "partition per relation: 10,25 or cites=10,*=5;cites=15,*=10 (docs/hetero.md)"},
        {"batch", 'b', HALO_OPT_I64, &batch, "B", "seeds per mini-batch"},
        {"epochs", 'e', HALO_OPT_INT, &epochs, "E", "epochs over this part's training seeds"},
        {"batches", 0, HALO_OPT_I64, &max_batches, "N", "stop each epoch after N batches (0: all)"},
        {"seed", 's', HALO_OPT_I64, &seed, "S", "seed of the shuffle and the neighbour draws"},
        {"netem", 0, HALO_OPT_STRING, &netem_s, "SPEC",
         "emulated network for remote requests, e.g. lat=50us,bw=10Gbit"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "mpirun -np P halo sample PDIR [--fanouts 10,25] [--batch B] [--epochs E] [--netem SPEC]",
        "Runs the distributed data path of training without the model: every rank samples\n"
        "mini-batches from its part's training seeds (frontier nodes owned elsewhere are\n"
        "sampled by their owners) and pulls the features of the input nodes. Prints per rank\n"
        "and in total: batches, sampled edges, input nodes, remote nodes, remote bytes, the\n"
        "time spent sampling and pulling, and memory. P must equal the number of parts.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    int fanouts[HALO_MAX_LAYERS];
    halo_rel_fanouts fan;
    bool typed = false;
    halo_netem ne;
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sample: one partition directory expected"));
    }
    int layers = sample_fanouts(pos[0], fanout_s, fanouts, fan, &typed);
    if (layers < 0) {
        return halo_cli_fail(layers);
    }
    if (batch < 1 || epochs < 0) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "sample: --batch must be >= 1, --epochs "
                                         ">= 0"));
    }
    rc = halo_netem_parse(netem_s, &ne);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_comm *comm;
    rc = halo_comm_init(&argc, &argv, &comm);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    int rank = halo_comm_rank(comm), ranks = halo_comm_size(comm);
    halo_comm_set_netem(comm, &ne);
    halo_store *st = NULL;
    rc = halo_store_open(comm, pos[0], &st);
    if (rc < 0) {
        halo_comm_fail(comm, rc); /* invariant 5: the whole job ends with this rank's message */
    }
    double fig[F_COUNT] = {0};
    double t0 = halo_now();
    rc = run_epochs(st, fanouts, typed ? &fan : NULL, layers, batch, epochs, max_batches,
                    (uint64_t)seed, fig);
    if (rc < 0) {
        halo_comm_fail(comm, rc);
    }
    double wall = halo_now() - t0;
    double *all = gather_figures(comm, st, fig, ranks);
    if (rank == 0) {
        sample_print(all, ranks, fanout_s, batch, epochs, netem_s, wall);
    }
    halo_free(all);
    halo_store_close(st);
    halo_comm_finalize(comm);
    return 0;
}
