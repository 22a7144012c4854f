/* MPI tests of train/: on an sbm graph GraphSAGE trained by halo_train_run beats a features-only
 * model (a softmax regression written here) by a wide margin; every rank ends with the same
 * weights; full-neighbour evaluation equals a double-precision reference on the input graph. */
// halo-mpi: -np 1
// halo-mpi: -np 2
// halo-mpi: -np 4
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/mem.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "part/partition.h"
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char gdir[4096], pdir[4096];

/* Rank 0 generates an sbm graph (8 classes, noisy features) and partitions it with METIS. */
static void setup(void)
{
    if (rank == 0) {
        const char *tmp = getenv("HALO_TEST_TMP");
        char base[4000];
        snprintf(base, sizeof base, "%s/train-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (mkdtemp(base) == NULL) {
            halo_comm_fail(comm, halo_errorf(HALO_EIO, "mkdtemp %s failed", base));
        }
        snprintf(gdir, sizeof gdir, "%s/g", base);
        snprintf(pdir, sizeof pdir, "%s/p", base);
        halo_gen_params gp;
        halo_gen_defaults(HALO_GEN_SBM, &gp);
        gp.nodes = 3000;
        gp.feat_dim = 16;
        gp.classes = 8;
        gp.seed = 11;
        MUST(halo_gen_write(&gp, gdir));
        halo_graph *g;
        MUST(halo_graph_load(gdir, &g));
        halo_partition_opts po;
        halo_partition_opts_init(&po);
        po.parts = ranks;
        MUST(halo_partition_run(g, &po, pdir, NULL));
        halo_graph_free(g);
    }
    MUST(halo_comm_bcast(comm, gdir, sizeof gdir, 0));
    MUST(halo_comm_bcast(comm, pdir, sizeof pdir, 0));
}

/* The features-only reference: multinomial logistic regression on standardised features, full
 * batch gradient descent in double precision on the training split; returns test accuracy. */
static double softmax_regression_test_acc(const halo_graph *g)
{
    int F = g->feat_dim, C = g->classes;
    int64_t n = g->nodes;
    double *mu = calloc((size_t)F, sizeof(double)), *sd = calloc((size_t)F, sizeof(double));
    double *W = calloc((size_t)(F + 1) * C, sizeof(double));
    double *G = calloc((size_t)(F + 1) * C, sizeof(double));
    double *x = calloc((size_t)F + 1, sizeof(double)), *p = calloc((size_t)C, sizeof(double));
    int64_t ntr = 0;
    for (int64_t v = 0; v < n; v++) {
        if (g->split[v] == HALO_SPLIT_TRAIN) {
            ntr++;
            for (int j = 0; j < F; j++) {
                mu[j] += g->feat[v * F + j];
                sd[j] += (double)g->feat[v * F + j] * g->feat[v * F + j];
            }
        }
    }
    for (int j = 0; j < F; j++) {
        mu[j] /= (double)ntr;
        sd[j] = sqrt(sd[j] / (double)ntr - mu[j] * mu[j]) + 1e-9;
    }
    for (int it = 0; it < 300; it++) {
        memset(G, 0, (size_t)(F + 1) * C * sizeof(double));
        for (int64_t v = 0; v < n; v++) {
            if (g->split[v] != HALO_SPLIT_TRAIN) {
                continue;
            }
            for (int j = 0; j < F; j++) {
                x[j] = (g->feat[v * F + j] - mu[j]) / sd[j];
            }
            x[F] = 1;
            double mx = -1e300, z = 0;
            for (int c = 0; c < C; c++) {
                p[c] = 0;
                for (int j = 0; j <= F; j++) {
                    p[c] += x[j] * W[j * C + c];
                }
                mx = p[c] > mx ? p[c] : mx;
            }
            for (int c = 0; c < C; c++) {
                p[c] = exp(p[c] - mx);
                z += p[c];
            }
            for (int c = 0; c < C; c++) {
                double d = p[c] / z - (c == g->label[v]);
                for (int j = 0; j <= F; j++) {
                    G[j * C + c] += d * x[j];
                }
            }
        }
        for (int k = 0; k < (F + 1) * C; k++) {
            W[k] -= 0.5 * G[k] / (double)ntr;
        }
    }
    int64_t right = 0, total = 0;
    for (int64_t v = 0; v < n; v++) {
        if (g->split[v] != HALO_SPLIT_TEST) {
            continue;
        }
        for (int j = 0; j < F; j++) {
            x[j] = (g->feat[v * F + j] - mu[j]) / sd[j];
        }
        x[F] = 1;
        int best = 0;
        double bestv = -1e300;
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int j = 0; j <= F; j++) {
                s += x[j] * W[j * C + c];
            }
            if (s > bestv) {
                bestv = s;
                best = c;
            }
        }
        right += best == g->label[v];
        total++;
    }
    free(mu);
    free(sd);
    free(W);
    free(G);
    free(x);
    free(p);
    return total > 0 ? (double)right / (double)total : 0;
}

static halo_train_result gnn; /* the GraphSAGE run of the first test */

static void train_opts(halo_train_opts *o)
{
    halo_train_opts_default(o);
    o->pdir = pdir;
    o->epochs = 12;
    o->batch = 100;
    o->batching = HALO_TRAIN_BATCH_GLOBAL; /* the same steps whatever the rank count */
    o->lr = 0.01;
    o->fanouts = "5,10";
    o->device = 1; /* HALO_DEVICE_CPU */
    o->threads = 1;
    o->table = false;
    o->check = true;
}

static void graphsage_beats_features_only_model(void)
{
    halo_train_opts o;
    train_opts(&o);
    MUST(halo_train_run(comm, &o, &gnn));
    halo_graph *g;
    MUST(halo_graph_load(gdir, &g));
    double base = softmax_regression_test_acc(g);
    halo_graph_free(g);
    if (rank == 0) {
        printf("# GraphSAGE test accuracy %.4f (val %.4f, %d epochs, mean epoch %.3f s); "
               "features-only softmax regression %.4f\n",
               gnn.test_acc, gnn.val_acc, gnn.epochs, gnn.mean_epoch_s, base);
    }
    EXPECT(gnn.epochs == 12);
    EXPECT(gnn.test_acc > base + 0.2);
    EXPECT(gnn.test_acc > 0.8);
    EXPECT(gnn.loss[11] < gnn.loss[0]);
    report("graphsage_beats_features_only_model");
}

static void every_rank_ends_with_the_same_weights(void)
{
    uint64_t *all = HALO_ALLOC(uint64_t, ranks);
    MUST(halo_comm_allgather(comm, &gnn.param_checksum, sizeof gnn.param_checksum, all));
    for (int r = 0; r < ranks; r++) {
        EXPECT(all[r] == all[0]);
    }
    halo_free(all);
    report("every_rank_ends_with_the_same_weights");
}

/* Full-neighbour GraphSAGE on the input graph in double precision from the weights of a
 * checkpoint (layout of model.h: per layer [W_self; W_neigh] (2 in x out, row-major), then b,
 * each layer starting at a multiple of 16 floats); returns [val acc, test acc]. */
static void reference_full_acc(const halo_graph *g, const float *w, int hidden, int layers,
                               double *acc)
{
    int64_t n = g->nodes;
    int dims[9];
    dims[0] = g->feat_dim;
    for (int l = 1; l < layers; l++) {
        dims[l] = hidden;
    }
    dims[layers] = g->classes;
    double *h = calloc((size_t)(n * dims[0]), sizeof(double));
    for (int64_t k = 0; k < n * dims[0]; k++) {
        h[k] = g->feat[k];
    }
    size_t off = 0;
    for (int l = 0; l < layers; l++) {
        int in = dims[l], out = dims[l + 1];
        const float *W = w + off, *b = w + off + (size_t)2 * in * out;
        double *y = calloc((size_t)(n * out), sizeof(double));
        double *mean = calloc((size_t)in, sizeof(double));
        for (int64_t v = 0; v < n; v++) {
            memset(mean, 0, (size_t)in * sizeof(double));
            int64_t deg = g->indptr[v + 1] - g->indptr[v];
            for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
                for (int j = 0; j < in; j++) {
                    mean[j] += h[(int64_t)g->indices[e] * in + j];
                }
            }
            for (int o = 0; o < out; o++) {
                double s = b[o];
                for (int j = 0; j < in; j++) {
                    s += h[v * in + j] * W[(size_t)j * out + o];
                    if (deg > 0) {
                        s += mean[j] / (double)deg * W[(size_t)(in + j) * out + o];
                    }
                }
                y[v * out + o] = (l + 1 < layers && s < 0) ? 0 : s;
            }
        }
        free(mean);
        free(h);
        h = y;
        off += ((size_t)2 * in * out + out + 15) / 16 * 16;
    }
    int C = g->classes;
    int64_t cnt[4] = {0};
    for (int64_t v = 0; v < n; v++) {
        int s = g->split[v];
        if (s != HALO_SPLIT_VALID && s != HALO_SPLIT_TEST) {
            continue;
        }
        int best = 0;
        for (int c = 1; c < C; c++) {
            if (h[v * C + c] > h[v * C + best]) {
                best = c;
            }
        }
        int k = s == HALO_SPLIT_VALID ? 0 : 2;
        cnt[k] += best == g->label[v];
        cnt[k + 1]++;
    }
    free(h);
    acc[0] = (double)cnt[0] / (double)cnt[1];
    acc[1] = (double)cnt[2] / (double)cnt[3];
}

static void full_neighbour_eval_matches_a_reference(void)
{
    halo_train_opts o;
    train_opts(&o);
    o.eval = HALO_TRAIN_EVAL_FULL;
    char ck[4200];
    snprintf(ck, sizeof ck, "%s.ck", pdir);
    o.checkpoint = ck;
    halo_train_result full;
    MUST(halo_train_run(comm, &o, &full));
    EXPECT(full.param_checksum == gnn.param_checksum); /* evaluation never changes training */
    halo_graph *g;
    MUST(halo_graph_load(gdir, &g));
    char path[4300];
    snprintf(path, sizeof path, "%s/params.f32", ck);
    FILE *f = fopen(path, "rb");
    EXPECT(f != NULL);
    float *w = calloc(1 << 16, sizeof(float));
    size_t got = f != NULL ? fread(w, sizeof(float), 1 << 16, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    EXPECT(got == 800); /* (2*16*16+16) + (2*16*8+8) rounded up to 16 floats per layer */
    double ref[2];
    reference_full_acc(g, w, 16, 2, ref);
    free(w);
    halo_graph_free(g);
    if (rank == 0) {
        printf("# full-neighbour accuracy: val %.4f test %.4f; reference (double, input graph) "
               "val %.4f test %.4f; sampled test %.4f\n",
               full.val_acc, full.test_acc, ref[0], ref[1], gnn.test_acc);
    }
    EXPECT(fabs(full.test_acc - ref[1]) <= 0.004); /* a near tie may round the other way */
    EXPECT(fabs(full.val_acc - ref[0]) <= 0.004);
    report("full_neighbour_eval_matches_a_reference");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    setup();
    graphsage_beats_features_only_model();
    every_rank_ends_with_the_same_weights();
    full_neighbour_eval_matches_a_reference();
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_comm_finalize(comm);
    return total_failed > 0;
}
