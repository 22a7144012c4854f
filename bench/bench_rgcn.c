/* Benchmark of one RGCN training step (forward, backward, Adam) on a typed sampled-shape block:
 * without and with basis decomposition, against the GraphSAGE step on the same edges, and against
 * PyG's RGCNConv (bench/rgcn_pyg.py) on the same block when torch-geometric is importable; all
 * measured in the same run. */
#include "common/bench_util.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "model/model.h"
#include "model/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Command-line settings. */
typedef struct bench_opts {
    int seeds;                   /* output-layer destinations */
    int layers;                  /* number of fanouts */
    int fanout[HALO_MAX_LAYERS]; /* edges drawn per destination, input layer first */
    int relations, bases;        /* RGCN relations and bases of the second run */
    int in_dim, hidden, classes; /* model widths */
    int64_t nodes;               /* size of the graph the block is drawn from */
    int threads;                 /* CPU threads */
    int steps, warmup;           /* timed and untimed steps */
    int pyg;                     /* run the PyG reference */
} bench_opts;

/* The typed mini-batch and the arrays behind it. */
typedef struct bench_batch {
    halo_minibatch mb;                 /* blocks point into the arrays below */
    int64_t *indptr[HALO_MAX_LAYERS];  /* per block */
    int32_t *indices[HALO_MAX_LAYERS]; /* per block */
    uint8_t *etype[HALO_MAX_LAYERS];   /* per block */
    int32_t *gid;                      /* input nodes' ids (prefixes per block) */
} bench_batch;

/* Samples blocks shaped as DGL's sampler makes them (seeds first, new sources appended in order
 * of appearance, hub-heavy draws); relation of an edge: a function of its endpoints, as in a
 * typed graph. */
static void batch_sample(bench_batch *b, const bench_opts *o)
{
    memset(b, 0, sizeof *b);
    int64_t cap_nodes = o->seeds;
    for (int l = o->layers - 1; l >= 0; l--) {
        cap_nodes += cap_nodes * o->fanout[l];
    }
    uint64_t cap = 1;
    while (cap < 2 * (uint64_t)cap_nodes) {
        cap <<= 1;
    }
    int32_t *key = HALO_ALLOC(int32_t, cap), *val = HALO_ALLOC(int32_t, cap);
    memset(key, 0xff, cap * sizeof(int32_t));
    int32_t *gid = HALO_ALLOC(int32_t, cap_nodes);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 78, 0, 0);
    int32_t n = 0;
    for (int l = o->layers; l >= 0; l--) {
        int32_t nd = n;
        if (l < o->layers) {
            halo_block *blk = &b->mb.blocks[l];
            int64_t ne = (int64_t)nd * o->fanout[l];
            b->indptr[l] = HALO_ALLOC(int64_t, nd + 1);
            b->indices[l] = HALO_ALLOC(int32_t, ne + 1);
            b->etype[l] = HALO_ALLOC(uint8_t, ne + 1);
            int64_t e = 0;
            for (int32_t i = 0; i < nd; i++) {
                b->indptr[l][i] = e;
                for (int k = 0; k < o->fanout[l]; k++) {
                    double u = halo_rng_uniform(&r);
                    int32_t v = (int32_t)((double)o->nodes * u * u);
                    uint64_t h = halo_mix64((uint64_t)v) & (cap - 1);
                    while (key[h] != -1 && key[h] != v) {
                        h = (h + 1) & (cap - 1);
                    }
                    if (key[h] == -1) {
                        key[h] = v;
                        val[h] = n;
                        gid[n++] = v;
                    }
                    b->indices[l][e] = val[h];
                    b->etype[l][e++] = (uint8_t)(halo_mix64((uint64_t)v ^ (uint64_t)gid[i] << 32) %
                                                 (uint64_t)o->relations);
                }
            }
            b->indptr[l][nd] = e;
            *blk = (halo_block){.num_dst = nd,
                                .num_src = n,
                                .num_edges = e,
                                .indptr = b->indptr[l],
                                .indices = b->indices[l],
                                .src_gid = gid,
                                .etype = b->etype[l]};
            continue;
        }
        while (n < o->seeds) {
            int32_t v = (int32_t)halo_rng_below(&r, (uint64_t)o->nodes);
            uint64_t h = halo_mix64((uint64_t)v) & (cap - 1);
            while (key[h] != -1 && key[h] != v) {
                h = (h + 1) & (cap - 1);
            }
            if (key[h] == -1) {
                key[h] = v;
                val[h] = n;
                gid[n++] = v;
            }
        }
    }
    b->gid = gid;
    b->mb.layers = o->layers;
    b->mb.num_seeds = o->seeds;
    b->mb.seeds = gid;
    b->mb.num_input = n;
    b->mb.input = gid;
    halo_free(key);
    halo_free(val);
}

static void batch_free(bench_batch *b)
{
    for (int l = 0; l < b->mb.layers; l++) {
        halo_free(b->indptr[l]);
        halo_free(b->indices[l]);
        halo_free(b->etype[l]);
    }
    halo_free(b->gid);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of a training step (forward, backward, Adam) of a model of the given kind. */
static int time_steps(const bench_opts *o, const bench_batch *b, const float *feat,
                      const int32_t *labels, int kind, int bases, halo_model **keep, double *median,
                      double *flops)
{
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.layers = o->layers;
    cfg.in_dim = o->in_dim;
    cfg.hidden = o->hidden;
    cfg.classes = o->classes;
    cfg.threads = o->threads;
    cfg.kind = kind;
    cfg.relations = kind == HALO_MODEL_RGCN ? o->relations : 1;
    cfg.bases = bases;
    halo_model *m = NULL;
    HALO_CHECK(halo_model_create(&cfg, &m));
    double *t = HALO_ALLOC(double, o->steps);
    int rc = 0;
    for (int s = 0; s < o->warmup + o->steps && rc == 0; s++) {
        double t0 = halo_now();
        rc = halo_model_train_forward_backward(m, &b->mb, feat, labels, (uint64_t)s, NULL);
        if (rc == 0) {
            rc = halo_model_adam_step(m, 1.0f);
        }
        if (s >= o->warmup) {
            t[s - o->warmup] = halo_now() - t0;
        }
    }
    qsort(t, (size_t)o->steps, sizeof *t, cmp_double);
    *median = t[o->steps / 2];
    *flops = halo_model_step_flops(m, &b->mb);
    halo_free(t);
    if (keep != NULL && rc == 0) {
        *keep = m;
    } else {
        halo_model_free(m);
    }
    return rc;
}

/* The block file of rgcn_pyg.py (format in its docstring): the block, labels, features and the
 * initial parameters of m (re-created with the same seed, so before any step). */
static int write_block_file(const char *path, const bench_opts *o, const bench_batch *b,
                            const float *feat, const int32_t *labels, halo_model *m)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return halo_errorf(HALO_EIO, "bench_rgcn: cannot write %s", path);
    }
    const halo_model_config *c = halo_model_config_of(m);
    int32_t hdr[10] = {o->layers, o->in_dim,  o->hidden, o->classes, c->relations,
                       c->bases,  o->threads, o->steps,  o->warmup,  0};
    float hp[2] = {c->dropout, c->lr};
    fwrite("HALORG1", 1, 8, f);
    fwrite(hdr, 4, 10, f);
    fwrite(hp, 4, 2, f);
    for (int l = 0; l < o->layers; l++) {
        const halo_block *blk = &b->mb.blocks[l];
        int32_t sz[2] = {blk->num_dst, blk->num_src};
        fwrite(sz, 4, 2, f);
        fwrite(&blk->num_edges, 8, 1, f);
        fwrite(blk->indptr, 8, (size_t)blk->num_dst + 1, f);
        fwrite(blk->indices, 4, (size_t)blk->num_edges, f);
        fwrite(blk->etype, 1, (size_t)blk->num_edges, f);
    }
    fwrite(labels, 4, (size_t)o->seeds, f);
    fwrite(feat, 4, (size_t)b->mb.num_input * o->in_dim, f);
    bench_write_params(f, m, o->layers);
    if (fclose(f) != 0) {
        return halo_errorf(HALO_EIO, "bench_rgcn: cannot write %s", path);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_rgcn [--seeds N] [--fanouts 10,10] [--relations R] [--bases B] "
                    "[--in N]\n                  [--hidden N] [--classes N] [--nodes N] "
                    "[--threads N] [--steps N] [--no-pyg]\n");
}

int main(int argc, char **argv)
{
    halo_blas_pick_kernels(argv); /* the kernels halo itself runs with (see ops.h) */
    /* shaped like ogbn-mag in DGL's RGCN example: 8 relations (with reverses), 128-dim
     * inputs, 349 classes */
    bench_opts o = {.seeds = 512,
                    .layers = 2,
                    .fanout = {10, 10},
                    .relations = 8,
                    .bases = 2,
                    .in_dim = 128,
                    .hidden = 64,
                    .classes = 349,
                    .nodes = 2000000,
                    .threads = 0,
                    .steps = 5,
                    .warmup = 1,
                    .pyg = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--no-pyg") == 0) {
            o.pyg = 0;
            continue;
        }
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--seeds") == 0) {
            o.seeds = atoi(v);
        } else if (strcmp(a, "--fanouts") == 0) {
            if (bench_parse_fanouts(v, 1, o.fanout, &o.layers) < 0) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--relations") == 0) {
            o.relations = atoi(v);
        } else if (strcmp(a, "--bases") == 0) {
            o.bases = atoi(v);
        } else if (strcmp(a, "--in") == 0) {
            o.in_dim = atoi(v);
        } else if (strcmp(a, "--hidden") == 0) {
            o.hidden = atoi(v);
        } else if (strcmp(a, "--classes") == 0) {
            o.classes = atoi(v);
        } else if (strcmp(a, "--nodes") == 0) {
            o.nodes = atoll(v);
        } else if (strcmp(a, "--threads") == 0) {
            o.threads = atoi(v);
        } else if (strcmp(a, "--steps") == 0) {
            o.steps = atoi(v);
        } else {
            usage();
            return 2;
        }
    }
    if (o.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = n > 0 ? (int)n : 1;
    }
    if (o.seeds < 1 || o.relations < 1 || o.relations > 256 || o.bases < 0 ||
        o.bases > o.relations || o.in_dim < 1 || o.hidden < 1 || o.classes < 1 ||
        o.nodes < o.seeds || o.steps < 1) {
        usage();
        return 2;
    }
    bench_batch b;
    batch_sample(&b, &o);
    printf("bench_rgcn: block: %d seeds, fanouts", o.seeds);
    for (int l = 0; l < o.layers; l++) {
        printf("%s%d", l ? "," : " ", o.fanout[l]);
    }
    printf(", %d relations, dims %d-%d-%d, %d threads\n", o.relations, o.in_dim, o.hidden,
           o.classes, o.threads);
    float *feat = HALO_ALLOC(float, (size_t)b.mb.num_input *o.in_dim);
    halo_rng r;
    halo_rng_init(&r, 2, HALO_RNG_TEST, 0, 0, 0);
    for (size_t i = 0; i < (size_t)b.mb.num_input * o.in_dim; i++) {
        feat[i] = (float)(halo_rng_uniform(&r) - 0.5);
    }
    int32_t *labels = HALO_ALLOC(int32_t, o.seeds);
    for (int i = 0; i < o.seeds; i++) {
        labels[i] = (int32_t)halo_rng_below(&r, (uint64_t)o.classes);
    }
    double sage_s, sage_f, full_s, full_f, basis_s, basis_f;
    halo_model *m = NULL;
    if (time_steps(&o, &b, feat, labels, HALO_MODEL_SAGE, 0, NULL, &sage_s, &sage_f) < 0 ||
        time_steps(&o, &b, feat, labels, HALO_MODEL_RGCN, 0, NULL, &full_s, &full_f) < 0 ||
        time_steps(&o, &b, feat, labels, HALO_MODEL_RGCN, o.bases, NULL, &basis_s, &basis_f) < 0) {
        fprintf(stderr, "halo: error: %s\n", halo_errmsg());
        return 1;
    }
    printf("bench_rgcn: sage step %.2f ms (%.1f GFLOP/s)\n", sage_s * 1e3, sage_f / sage_s / 1e9);
    printf("bench_rgcn: rgcn step, %d relations: %.2f ms (%.1f GFLOP/s), %.2fx the sage step on "
           "the same edges\n",
           o.relations, full_s * 1e3, full_f / full_s / 1e9, full_s / sage_s);
    printf("bench_rgcn: rgcn step, %d bases: %.2f ms (%.1f GFLOP/s), %.2fx the sage step\n",
           o.bases, basis_s * 1e3, basis_f / basis_s / 1e9, basis_s / sage_s);

    int rc = 0;
    if (!o.pyg) {
        printf("bench_rgcn: PyG comparison skipped (--no-pyg)\n");
    } else if (system("python3 -c 'import torch, torch_geometric' >/dev/null 2>&1") != 0) {
        printf("bench_rgcn: PyG comparison skipped: python3 cannot import torch_geometric "
               "(pip install torch torch-geometric)\n");
    } else {
        halo_model_config cfg;
        halo_model_config_default(&cfg);
        cfg.layers = o.layers;
        cfg.in_dim = o.in_dim;
        cfg.hidden = o.hidden;
        cfg.classes = o.classes;
        cfg.threads = o.threads;
        cfg.kind = HALO_MODEL_RGCN;
        cfg.relations = o.relations;
        cfg.bases = o.bases;
        halo_model_stats ev;
        char path[] = "/tmp/halo-bench-rgcn-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0 || halo_model_create(&cfg, &m) < 0 ||
            halo_model_infer(m, &b.mb, feat, labels, NULL, NULL, &ev) < 0 ||
            write_block_file(path, &o, &b, feat, labels, m) < 0) {
            fprintf(stderr, "halo: error: %s\n", fd < 0 ? "no temporary file" : halo_errmsg());
            return 1;
        }
        close(fd);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "python3 %s/bench/rgcn_pyg.py %s", HALO_ROOT, path);
        FILE *p = popen(cmd, "r");
        double pyg_s = -1, pyg_loss = -1;
        char line[1024];
        while (p != NULL && fgets(line, sizeof line, p) != NULL) {
            sscanf(line, "pyg_step_s %lf", &pyg_s);
            sscanf(line, "pyg_eval_loss %lf", &pyg_loss);
            if (strncmp(line, "pyg_", 4) != 0) {
                fputs(line, stdout);
            }
        }
        int prc = p != NULL ? pclose(p) : -1;
        unlink(path);
        if (prc != 0 || pyg_s <= 0) {
            printf("bench_rgcn: PyG run failed (status %d)\n", prc);
            rc = 1;
        } else {
            printf("bench_rgcn: PyG RGCNConv step (%d bases) %.2f ms; halo/PyG %.2fx; initial "
                   "loss halo %.5f PyG %.5f\n",
                   o.bases, pyg_s * 1e3, basis_s / pyg_s, (double)ev.loss, pyg_loss);
        }
        halo_model_free(m);
    }
    halo_free(feat);
    halo_free(labels);
    batch_free(&b);
    return rc;
}
