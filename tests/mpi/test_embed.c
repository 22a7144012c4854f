/* MPI tests of embed/: gathered rows equal their owners' rows; sparse Adam and Adagrad updates
 * with global batching (four shares of every global batch, spread over however many ranks run)
 * equal a single-process reference bit for bit, so 4 ranks equal 1 rank; checkpoints resume bit
 * for bit; bad ids and damaged checkpoints fail on every rank. */
// halo-mpi: -np 4
// halo-mpi: -np 1
// halo-mpi: -np 2
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "embed/embed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODES 900    /* global ids [0, NODES) */
#define DIM 6        /* row width */
#define SHARES 4     /* shares of every global batch, whatever the rank count */
#define PER_SHARE 70 /* contributions per share (with repeats) */
#define STEPS 6      /* global batches */

static int64_t range[65]; /* owner ranges of this run */

/* Uneven ranges: rank p owns about (p+1)/sum of the nodes. */
static void make_ranges(int P, int64_t *r)
{
    int64_t w = (int64_t)P * (P + 1) / 2, acc = 0;
    r[0] = 0;
    for (int p = 0; p < P; p++) {
        acc += p + 1;
        r[p + 1] = NODES * acc / w;
    }
}

/* Featureless nodes (the ones with a row): all but every third. */
static int has_row_of(int64_t v)
{
    return v % 3 != 0;
}

/* The input-graph id standing for node v (keys the init). */
static int64_t key_of(int64_t v)
{
    return 7 * v + 3;
}

static halo_embed *make_table(int optim)
{
    halo_embed_config cfg;
    halo_embed_config_default(&cfg);
    cfg.dim = DIM;
    cfg.optim = optim;
    cfg.lr = 0.05f;
    cfg.seed = 11;
    int64_t own = range[rank + 1] - range[rank];
    uint8_t *has = HALO_ALLOC(uint8_t, own + 1);
    int64_t *key = HALO_ALLOC(int64_t, own + 1);
    for (int64_t i = 0; i < own; i++) {
        has[i] = (uint8_t)has_row_of(range[rank] + i);
        key[i] = key_of(range[rank] + i);
    }
    halo_embed *e = NULL;
    MUST(halo_embed_create(comm, &cfg, range, has, key, &e));
    halo_free(has);
    halo_free(key);
    return e;
}

/* Share s of global batch b: PER_SHARE contributions to featureless nodes (drawn, so some
 * repeat within the share and across shares), gradients in [-1, 1). */
static void share(int b, int s, int32_t *gid, float *grad)
{
    halo_rng r;
    halo_rng_init(&r, 5, HALO_RNG_TEST, (uint64_t)b, (uint64_t)s, 0);
    for (int i = 0; i < PER_SHARE; i++) {
        int32_t v;
        do {
            v = (int32_t)halo_rng_below(&r, NODES / 4); /* a quarter of the ids: many repeats */
            v = v * 4 % NODES + (int32_t)(v % 4);
        } while (!has_row_of(v));
        gid[i] = v;
        for (int j = 0; j < DIM; j++) {
            grad[i * DIM + j] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
        }
    }
}

/* One global batch on this rank: the shares s with s % ranks == rank, concatenated, keyed by s. */
static void step_distributed(halo_embed *e, int b, float scale)
{
    int32_t gid[SHARES * PER_SHARE];
    float grad[SHARES * PER_SHARE * DIM];
    uint64_t key[SHARES * PER_SHARE];
    int64_t n = 0;
    for (int s = 0; s < SHARES; s++) {
        if (s % ranks != rank) {
            continue;
        }
        share(b, s, gid + n, grad + n * DIM);
        for (int i = 0; i < PER_SHARE; i++) {
            key[n + i] = (uint64_t)s;
        }
        n += PER_SHARE;
    }
    MUST(halo_embed_update(e, n, gid, grad, key, scale));
}

/* ---------------------------------------------------------------- the reference */

/* The whole table in one process, written from the specification: every row U(-1, 1) from
 * stream (seed, INIT, TAG, key, 0); per global batch, each row's contributions summed share by
 * share and in list order, scaled, then one Adam or Adagrad step. Float arithmetic in the same
 * order (bit-exact expectation) and a double shadow (for the formula). */
typedef struct ref_table {
    float w[NODES * DIM], s1[NODES * DIM], s2[NODES * DIM];
    double wd[NODES * DIM], s1d[NODES * DIM], s2d[NODES * DIM];
    int64_t t[NODES];
} ref_table;

static void ref_run(ref_table *R, int optim, int steps, float scale)
{
    memset(R, 0, sizeof *R);
    float lr = 0.05f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    for (int64_t v = 0; v < NODES; v++) {
        halo_rng r;
        halo_rng_init(&r, 11, HALO_RNG_INIT, HALO_EMBED_INIT_TAG, (uint64_t)key_of(v), 0);
        for (int j = 0; j < DIM; j++) {
            R->w[v * DIM + j] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
            R->wd[v * DIM + j] = R->w[v * DIM + j];
        }
    }
    static float sum[NODES * DIM];
    static double sumd[NODES * DIM];
    static int touched[NODES];
    int32_t gid[PER_SHARE];
    float grad[PER_SHARE * DIM];
    for (int b = 0; b < steps; b++) {
        memset(touched, 0, sizeof touched);
        for (int s = 0; s < SHARES; s++) {
            share(b, s, gid, grad);
            for (int i = 0; i < PER_SHARE; i++) {
                int32_t v = gid[i];
                for (int j = 0; j < DIM; j++) {
                    float g = grad[i * DIM + j];
                    sum[v * DIM + j] = touched[v] ? sum[v * DIM + j] + g : g;
                    sumd[v * DIM + j] = touched[v] ? sumd[v * DIM + j] + g : g;
                }
                touched[v] = 1;
            }
        }
        for (int v = 0; v < NODES; v++) {
            if (!touched[v]) {
                continue;
            }
            int64_t t = ++R->t[v];
            float c1 = (float)(1.0 - pow(0.9f, (double)t)),
                  c2 = (float)(1.0 - pow(0.999f, (double)t));
            double c1d = 1.0 - pow(0.9f, (double)t), c2d = 1.0 - pow(0.999f, (double)t);
            for (int j = 0; j < DIM; j++) {
                int k = v * DIM + j;
                float g = sum[k] * scale;
                double gd = sumd[k] * scale;
                if (optim == HALO_EMBED_ADAGRAD) {
                    R->s1[k] += g * g;
                    R->w[k] -= lr * g / (sqrtf(R->s1[k]) + eps);
                    R->s1d[k] += gd * gd;
                    R->wd[k] -= lr * gd / (sqrt(R->s1d[k]) + eps);
                } else {
                    R->s1[k] = b1 * R->s1[k] + (1.0f - b1) * g;
                    R->s2[k] = b2 * R->s2[k] + (1.0f - b2) * g * g;
                    R->w[k] -= lr * (R->s1[k] / c1) / (sqrtf(R->s2[k] / c2) + eps);
                    R->s1d[k] = b1 * R->s1d[k] + (1.0 - b1) * gd;
                    R->s2d[k] = b2 * R->s2d[k] + (1.0 - b2) * gd * gd;
                    R->wd[k] -= lr * (R->s1d[k] / c1d) / (sqrt(R->s2d[k] / c2d) + eps);
                }
            }
        }
    }
}

/* This rank's rows against the reference: bitwise equal to its float table, close to its double
 * shadow; returns the rows compared. */
static int64_t expect_rows_equal_reference(halo_embed *e, const ref_table *R, int *bitwise)
{
    const float *w = halo_embed_table(e);
    int64_t row = 0;
    *bitwise = 1;
    for (int64_t v = range[rank]; v < range[rank + 1]; v++) {
        if (!has_row_of(v)) {
            continue;
        }
        for (int j = 0; j < DIM; j++) {
            float got = w[row * DIM + j];
            if (memcmp(&got, &R->w[v * DIM + j], 4) != 0) {
                *bitwise = 0;
            }
            EXPECT(fabs((double)got - R->wd[v * DIM + j]) < 1e-4);
        }
        row++;
    }
    EXPECT(row == halo_embed_rows(e));
    return row;
}

/* ---------------------------------------------------------------- tests */

static void gather_returns_the_owners_rows(void)
{
    halo_embed *e = make_table(HALO_EMBED_ADAM);
    ref_table *R = HALO_NEW(ref_table, 1);
    ref_run(R, HALO_EMBED_ADAM, 0, 1.0f);
    /* each rank asks for a different list: remote and local rows, repeats, in any order */
    halo_rng r;
    halo_rng_init(&r, 8, HALO_RNG_TEST, (uint64_t)rank, 0, 0);
    int n = 150 + 13 * rank;
    int32_t *gid = HALO_ALLOC(int32_t, n);
    float *out = HALO_ALLOC(float, (size_t)n *DIM);
    for (int i = 0; i < n; i++) {
        do {
            gid[i] = (int32_t)halo_rng_below(&r, NODES);
        } while (!has_row_of(gid[i]));
    }
    MUST(halo_embed_gather(e, n, gid, out));
    for (int i = 0; i < n; i++) {
        EXPECT(memcmp(out + (size_t)i * DIM, R->w + (size_t)gid[i] * DIM, DIM * 4) == 0);
    }
    /* the init is not constant: rows differ and fill (-1, 1) */
    EXPECT(memcmp(R->w + DIM, R->w + 2 * DIM, DIM * 4) != 0);
    /* an empty list is fine on some ranks */
    MUST(halo_embed_gather(e, rank == 0 ? 0 : 3, gid, out));
    halo_free(gid);
    halo_free(out);
    halo_free(R);
    halo_embed_free(e);
    report("gather_returns_the_owners_rows");
}

static void updates_equal_the_single_process_reference(int optim, const char *name)
{
    halo_embed *e = make_table(optim);
    float scale = 0.25f;
    for (int b = 0; b < STEPS; b++) {
        step_distributed(e, b, scale);
    }
    ref_table *R = HALO_NEW(ref_table, 1);
    ref_run(R, optim, STEPS, scale);
    int bitwise;
    expect_rows_equal_reference(e, R, &bitwise);
    EXPECT(bitwise);
    /* the steps moved the rows (the comparison is not of two inits) */
    ref_table *R0 = HALO_NEW(ref_table, 1);
    ref_run(R0, optim, 0, scale);
    int moved = 0;
    for (int k = 0; k < NODES * DIM; k++) {
        moved += R->w[k] != R0->w[k];
    }
    EXPECT(moved > 100 * DIM); /* of the ~150 rows the shares draw from */
    /* one line that a 1-rank and a 4-rank run print alike: the hash of the distributed table,
     * every row gathered from its owner */
    int32_t *all = HALO_ALLOC(int32_t, NODES);
    float *rows = HALO_ALLOC(float, (size_t)NODES *DIM);
    int32_t na = 0;
    for (int32_t v = 0; v < NODES; v++) {
        if (has_row_of(v)) {
            all[na++] = v;
        }
    }
    MUST(halo_embed_gather(e, na, all, rows));
    if (rank == 0) {
        uint64_t h = 0;
        for (size_t k = 0; k < (size_t)na * DIM; k++) {
            uint32_t u;
            memcpy(&u, &rows[k], 4);
            h = halo_mix64(h ^ u);
        }
        printf("# %s: %d ranks, gathered table hash %016llx\n", name, ranks, (unsigned long long)h);
    }
    halo_free(all);
    halo_free(rows);
    halo_free(R);
    halo_free(R0);
    halo_embed_free(e);
    report(name);
}

static void updates_with_adam_equal_the_single_process_reference(void)
{
    updates_equal_the_single_process_reference(HALO_EMBED_ADAM,
                                               "updates_with_adam_equal_the_single_process_"
                                               "reference");
}

static void updates_with_adagrad_equal_the_single_process_reference(void)
{
    updates_equal_the_single_process_reference(HALO_EMBED_ADAGRAD,
                                               "updates_with_adagrad_equal_the_single_process_"
                                               "reference");
}

/* A fresh temporary directory, the same path on every rank. */
static void temp_dir(char *dir, size_t size)
{
    if (rank == 0) {
        const char *tmp = getenv("HALO_TEST_TMP");
        snprintf(dir, size, "%s/embed-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            halo_comm_fail(comm, halo_errorf(HALO_EIO, "mkdtemp %s failed", dir));
        }
    }
    MUST(halo_comm_bcast(comm, dir, (int64_t)size, 0));
}

static void checkpoint_resumes_bit_for_bit(void)
{
    char dir[1024];
    temp_dir(dir, sizeof dir);
    for (int optim = 0; optim <= 1; optim++) {
        halo_embed *a = make_table(optim);
        for (int b = 0; b < 3; b++) {
            step_distributed(a, b, 1.0f);
        }
        MUST(halo_embed_save(a, dir));
        for (int b = 3; b < STEPS; b++) {
            step_distributed(a, b, 1.0f);
        }
        halo_embed *c = make_table(optim);
        MUST(halo_embed_load(c, dir));
        for (int b = 3; b < STEPS; b++) {
            step_distributed(c, b, 1.0f);
        }
        EXPECT(halo_embed_checksum(a) == halo_embed_checksum(c));
        EXPECT(memcmp(halo_embed_table(a), halo_embed_table(c),
                      (size_t)halo_embed_rows(a) * DIM * 4) == 0);
        /* and the resumed run is the uninterrupted reference */
        ref_table *R = HALO_NEW(ref_table, 1);
        ref_run(R, optim, STEPS, 1.0f);
        int bitwise;
        expect_rows_equal_reference(c, R, &bitwise);
        EXPECT(bitwise);
        halo_free(R);
        /* a fresh table that skipped the optimiser state would differ (Adam's step counts,
         * Adagrad's sums): the checkpoint carries them */
        halo_embed *d = make_table(optim);
        memcpy(halo_embed_table(d), halo_embed_table(c), (size_t)halo_embed_rows(c) * DIM * 4);
        EXPECT(halo_embed_checksum(d) != halo_embed_checksum(c));
        halo_embed_free(a);
        halo_embed_free(c);
        halo_embed_free(d);
        MUST(halo_comm_barrier(comm));
    }
    /* the last file written is Adagrad's: an Adam table refuses it, naming the file */
    halo_embed *wrong = make_table(HALO_EMBED_ADAM);
    int rc = halo_embed_load(wrong, dir);
    EXPECT(rc == HALO_EINPUT);
    EXPECT(strstr(halo_errmsg(), "embed-r") != NULL);
    halo_embed_free(wrong);
    /* a damaged file (one byte flipped) is refused */
    MUST(halo_comm_barrier(comm));
    char path[1100];
    snprintf(path, sizeof path, "%s/embed-r%d.bin", dir, rank);
    char *buf;
    size_t len;
    MUST(halo_file_read_all(path, &buf, &len));
    buf[len / 2] ^= 0x10;
    MUST(halo_file_write_all(path, buf, len));
    halo_free(buf);
    halo_embed *dmg = make_table(HALO_EMBED_ADAGRAD);
    rc = halo_embed_load(dmg, dir);
    EXPECT(rc == HALO_EINPUT);
    EXPECT(strstr(halo_errmsg(), "CRC") != NULL);
    halo_embed_free(dmg);
    MUST(halo_comm_barrier(comm));
    if (rank == 0) {
        halo_rmtree(dir);
    }
    report("checkpoint_resumes_bit_for_bit");
}

static void bad_ids_fail_on_every_rank(void)
{
    halo_embed *e = make_table(HALO_EMBED_ADAM);
    int32_t gid[2] = {1, 2};
    float out[2 * DIM], grad[2 * DIM] = {0};
    /* rank 0 asks for a node with features (no row), owned by the last rank */
    if (rank == 0) {
        gid[1] = (int32_t)(range[ranks] - 3);
    }
    int rc = halo_embed_gather(e, 2, gid, out);
    EXPECT(rc == HALO_EINPUT);
    if (rank == ranks - 1 || ranks == 1) {
        EXPECT(strstr(halo_errmsg(), "has no embedding row") != NULL);
    }
    /* an id outside the graph, in an update */
    gid[1] = rank == 0 ? NODES + 5 : 2;
    rc = halo_embed_update(e, 2, gid, grad, NULL, 1.0f);
    EXPECT(rc == HALO_EINPUT);
    if (rank == 0) {
        EXPECT(strstr(halo_errmsg(), "outside the graph") != NULL);
    }
    /* the table still works afterwards, on every rank */
    gid[1] = 2;
    MUST(halo_embed_gather(e, 2, gid, out));
    halo_embed_free(e);
    /* bad settings */
    halo_embed_config cfg;
    halo_embed_config_default(&cfg);
    halo_embed *bad = NULL;
    EXPECT(halo_embed_create(comm, &cfg, range, NULL, NULL, &bad) == HALO_EUSAGE); /* dim 0 */
    int optim;
    EXPECT(halo_embed_optim_parse("sgd", &optim) == HALO_EUSAGE);
    EXPECT(halo_embed_optim_parse("adagrad", &optim) == 0 && optim == HALO_EMBED_ADAGRAD);
    EXPECT(bad == NULL);
    report("bad_ids_fail_on_every_rank");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    if (ranks > 64) {
        halo_comm_fail(comm, halo_errorf(HALO_EUSAGE, "test_embed: at most 64 ranks"));
    }
    make_ranges(ranks, range);
    if (rank == 0) {
        printf("# %d ranks\n", ranks);
    }
    gather_returns_the_owners_rows();
    updates_with_adam_equal_the_single_process_reference();
    updates_with_adagrad_equal_the_single_process_reference();
    checkpoint_resumes_bit_for_bit();
    bad_ids_fail_on_every_rank();
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_comm_finalize(comm);
    return total_failed > 0;
}
