/* Benchmark of one GraphSAGE training step (forward, backward, Adam) on a sampled-shape block:
 * halo's model vs the same step in PyTorch (bench/model_torch.py) on the same block and thread
 * count, and the step's GFLOP/s vs OpenBLAS sgemm, all measured in the same run. */
#include "common/bench_util.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "model/model.h"
#include "model/ops.h"

#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Command-line settings. */
typedef struct bench_opts {
    int seeds;                     /* output-layer destinations */
    int layers;                    /* number of fanouts */
    int fanout[HALO_MAX_LAYERS];   /* input layer first, as DGL */
    int in_dim, hidden, classes;   /* model widths */
    int64_t nodes;                 /* size of the graph the block is drawn from */
    int threads;                   /* CPU threads for halo and PyTorch */
    int steps, warmup;             /* timed and untimed steps */
    int device;                    /* HALO_DEVICE_CPU or _GPU */
    int torch;                     /* run the PyTorch reference */
    int sgemm;                     /* measure the sgemm reference */
    const char *keep;              /* write the block file here and keep it (NULL: temporary) */
} bench_opts;

/* The mini-batch and the arrays behind it. */
typedef struct bench_batch {
    halo_minibatch mb;                 /* blocks point into the arrays below */
    int64_t *indptr[HALO_MAX_LAYERS];  /* per block */
    int32_t *indices[HALO_MAX_LAYERS]; /* per block */
    int32_t *gid;                      /* global ids of the input nodes (prefixes per block) */
} bench_batch;

/* Open-addressing map from global id to local number. */
typedef struct gid_map {
    int32_t *key; /* gid or -1 */
    int32_t *val; /* local number */
    uint64_t mask; /* capacity - 1 */
} gid_map;

static int32_t map_find_or_add(gid_map *m, int32_t gid, int32_t next)
{
    uint64_t h = halo_mix64((uint64_t)gid) & m->mask;
    while (m->key[h] != -1) {
        if (m->key[h] == gid) {
            return m->val[h];
        }
        h = (h + 1) & m->mask;
    }
    m->key[h] = gid;
    m->val[h] = next;
    return next;
}

/* Draws a node of a skewed (hub-heavy) distribution over [0, n): n * u^2. */
static int32_t draw_node(halo_rng *r, int64_t n)
{
    double u = halo_rng_uniform(r);
    return (int32_t)((double)n * u * u);
}

/* Samples blocks as DGL's neighbour sampler shapes them: seeds at the top, each destination draws
 * fanout[l] neighbours, new sources appended after the destinations in order of appearance. */
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
    gid_map map = {HALO_ALLOC(int32_t, cap), HALO_ALLOC(int32_t, cap), cap - 1};
    memset(map.key, 0xff, cap * sizeof(int32_t));
    int32_t *gid = HALO_ALLOC(int32_t, cap_nodes);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 77, 0, 0);
    int32_t n = 0;
    while (n < o->seeds) {
        int32_t v = (int32_t)halo_rng_below(&r, (uint64_t)o->nodes);
        if (map_find_or_add(&map, v, n) == n) {
            gid[n++] = v;
        }
    }
    b->mb.layers = o->layers;
    for (int l = o->layers - 1; l >= 0; l--) {
        halo_block *blk = &b->mb.blocks[l];
        int32_t nd = n;
        int64_t ne = (int64_t)nd * o->fanout[l];
        b->indptr[l] = HALO_ALLOC(int64_t, nd + 1);
        b->indices[l] = HALO_ALLOC(int32_t, ne > 0 ? ne : 1);
        int64_t e = 0;
        for (int32_t i = 0; i < nd; i++) {
            b->indptr[l][i] = e;
            for (int k = 0; k < o->fanout[l]; k++) {
                int32_t v = draw_node(&r, o->nodes);
                int32_t loc = map_find_or_add(&map, v, n);
                if (loc == n) {
                    gid[n++] = v;
                }
                b->indices[l][e++] = loc;
            }
        }
        b->indptr[l][nd] = e;
        blk->num_dst = nd;
        blk->num_src = n;
        blk->num_edges = e;
        blk->indptr = b->indptr[l];
        blk->indices = b->indices[l];
        blk->src_gid = gid;
    }
    b->gid = gid;
    b->mb.num_seeds = o->seeds;
    b->mb.seeds = gid;
    b->mb.num_input = n;
    b->mb.input = gid;
    halo_free(map.key);
    halo_free(map.val);
}

static void batch_free(bench_batch *b)
{
    for (int l = 0; l < b->mb.layers; l++) {
        halo_free(b->indptr[l]);
        halo_free(b->indices[l]);
    }
    halo_free(b->gid);
}

/* One thread's share of a streaming read: sums floats [i0, i1) (16 lanes, so it runs at the
 * memory's rate, not an addition's latency). */
typedef struct read_part {
    const float *x;  /* the array */
    size_t i0, i1;   /* range */
    float sum;       /* keeps the reads */
} read_part;

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static void *read_part_run(void *arg)
{
    read_part *p = arg;
    float acc[16] = {0};
    size_t i = p->i0;
    for (; i + 16 <= p->i1; i += 16) {
        for (int j = 0; j < 16; j++) {
            acc[j] += p->x[i + j];
        }
    }
    for (; i < p->i1; i++) {
        acc[0] += p->x[i];
    }
    float s = 0;
    for (int j = 0; j < 16; j++) {
        s += acc[j];
    }
    p->sum = s;
    return NULL;
}

/* Seconds to read n floats once on `threads` threads (best of `reps`): the least time any step
 * needs to read its input features, the largest array it touches besides the GEMMs' operands. */
static double stream_read_s(const float *x, size_t n, int threads, int reps)
{
    pthread_t tid[64];
    read_part part[64];
    if (threads > 64) {
        threads = 64;
    }
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = halo_now();
        for (int t = 0; t < threads; t++) {
            part[t] = (read_part){x, n * t / threads, n * (t + 1) / threads, 0.0f};
            if (t > 0 && pthread_create(&tid[t], NULL, read_part_run, &part[t]) != 0) {
                read_part_run(&part[t]);
                tid[t] = 0;
            }
        }
        read_part_run(&part[0]);
        for (int t = 1; t < threads; t++) {
            if (tid[t] != 0) {
                pthread_join(tid[t], NULL);
            }
        }
        double el = halo_now() - t0;
        best = el < best ? el : best;
    }
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sgemm reference: n x n x n with OpenBLAS's own threading at `threads`. */
typedef struct sgemm_ref {
    int n;            /* size */
    float *a, *b, *c; /* operands */
    double best;      /* fastest call (seconds) */
} sgemm_ref;

static void sgemm_init(sgemm_ref *g, int n)
{
    g->n = n;
    g->a = HALO_ALLOC(float, (size_t)n * n);
    g->b = HALO_ALLOC(float, (size_t)n * n);
    g->c = HALO_ALLOC(float, (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        g->a[i] = (float)(i % 7) * 0.1f;
        g->b[i] = (float)(i % 5) * 0.1f;
    }
    g->best = 1e30;
}

/* One sgemm call on `threads` threads (the model's GEMMs go back to one OpenBLAS thread each);
 * timed: its time counts for the best. */
static void sgemm_call(sgemm_ref *g, int threads, int timed)
{
    int n = g->n;
    openblas_set_num_threads(threads);
    double t0 = halo_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, g->a, n, g->b, n, 0.0f,
                g->c, n);
    double t = halo_now() - t0;
    openblas_set_num_threads(1);
    if (timed && t < g->best) {
        g->best = t;
    }
}

static double sgemm_gflops(const sgemm_ref *g)
{
    return 2.0 * g->n * (double)g->n * g->n / g->best / 1e9;
}

static void sgemm_free(sgemm_ref *g)
{
    halo_free(g->a);
    halo_free(g->b);
    halo_free(g->c);
}

/* FNV-1a over the parameters' bytes: equal checksums, bit-identical weights. */
static uint64_t params_checksum(halo_model *m)
{
    size_t n;
    const unsigned char *p = (const unsigned char *)halo_model_params(m, &n);
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n * sizeof(float); i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h;
}

/* One timed training step (forward, backward, Adam): a function of its own, so that
 * `valgrind --tool=callgrind --toggle-collect=bench_step` counts the step alone. */
__attribute__((noinline)) static int bench_step(halo_model *m, const halo_minibatch *mb,
                                                const float *feat, const int32_t *labels,
                                                uint64_t step, halo_model_stats *st)
{
    if (halo_model_train_forward_backward(m, mb, feat, labels, step, st) < 0 ||
        halo_model_adam_step(m, 1.0f) < 0) {
        return -1;
    }
    return 0;
}

/* Writes everything the PyTorch script needs: shapes, blocks, labels, features, initial
 * weights (halo's layout), settings. Little-endian, see bench/model_torch.py. */
static int write_block_file(const char *path, const bench_opts *o, const bench_batch *b,
                            const float *feat, const int32_t *labels, halo_model *m)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return halo_errorf(HALO_EIO, "bench_model: cannot write %s", path);
    }
    const halo_model_config *cfg = halo_model_config_of(m);
    int32_t hdr[8] = {o->layers, o->in_dim, o->hidden, o->classes,
                      o->threads, o->steps, o->warmup, 0};
    float fh[2] = {cfg->dropout, cfg->lr};
    fwrite("HALOMB1", 1, 8, f);
    fwrite(hdr, sizeof hdr, 1, f);
    fwrite(fh, sizeof fh, 1, f);
    for (int l = 0; l < o->layers; l++) {
        const halo_block *blk = &b->mb.blocks[l];
        int32_t dims[2] = {blk->num_dst, blk->num_src};
        fwrite(dims, sizeof dims, 1, f);
        fwrite(&blk->num_edges, sizeof(int64_t), 1, f);
        fwrite(blk->indptr, sizeof(int64_t), (size_t)blk->num_dst + 1, f);
        fwrite(blk->indices, sizeof(int32_t), (size_t)blk->num_edges, f);
    }
    fwrite(labels, sizeof(int32_t), (size_t)b->mb.num_seeds, f);
    fwrite(feat, sizeof(float), (size_t)b->mb.num_input * o->in_dim, f);
    bench_write_params(f, m, o->layers);
    if (fclose(f) != 0) {
        return halo_errorf(HALO_EIO, "bench_model: cannot write %s", path);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_model [--seeds N] [--fanouts 10,25] [--in N] [--hidden N] "
            "[--classes N]\n"
            "                   [--nodes N] [--threads N] [--steps N] [--warmup N] "
            "[--device cpu|gpu]\n"
            "                   [--no-torch] [--no-sgemm] [--keep FILE]\n");
}

int main(int argc, char **argv)
{
    halo_blas_pick_kernels(argv); /* the kernels halo itself runs with (see ops.h) */
    bench_opts o = {.seeds = 2000, .layers = 2, .fanout = {10, 25}, .in_dim = 100,
                    .hidden = 256, .classes = 47, .nodes = 2449029, .threads = 0, .steps = 5,
                    .warmup = 2, .device = HALO_DEVICE_CPU, .torch = 1, .sgemm = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (strcmp(a, "--no-torch") == 0) {
            o.torch = 0;
            continue;
        }
        if (strcmp(a, "--no-sgemm") == 0) {
            o.sgemm = 0;
            continue;
        }
        if (v == NULL) {
            usage();
            return 2;
        }
        i++;
        if (strcmp(a, "--seeds") == 0) {
            o.seeds = atoi(v);
        } else if (strcmp(a, "--fanouts") == 0) {
            ok = bench_parse_fanouts(v, 0, o.fanout, &o.layers) == 0;
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
        } else if (strcmp(a, "--warmup") == 0) {
            o.warmup = atoi(v);
        } else if (strcmp(a, "--keep") == 0) {
            o.keep = v;
        } else if (strcmp(a, "--device") == 0) {
            ok = halo_model_device_parse(v, &o.device) == 0;
        } else {
            ok = 0;
        }
        if (!ok) {
            usage();
            return 2;
        }
    }
    if (o.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = n > 0 ? (int)n : 1;
    }
    if (o.seeds < 1 || o.in_dim < 1 || o.hidden < 1 || o.classes < 1 || o.nodes < o.seeds ||
        o.steps < 1 || o.warmup < 0) {
        usage();
        return 2;
    }
    int gpu = -1;
    if (halo_model_device_resolve(o.device, 0, &o.device, &gpu) < 0) {
        fprintf(stderr, "halo: error: %s\n", halo_errmsg());
        return 1;
    }

    bench_batch b;
    batch_sample(&b, &o);
    printf("bench_model: block: %d seeds, fanouts", o.seeds);
    for (int l = 0; l < o.layers; l++) {
        printf("%s%d", l ? "," : " ", o.fanout[l]);
    }
    printf(", dims %d-%d-%d, %d threads, device %s, OpenBLAS kernels %s\n", o.in_dim, o.hidden,
           o.classes, o.threads, halo_model_device_name(o.device), halo_blas_kernels());
    for (int l = 0; l < o.layers; l++) {
        const halo_block *blk = &b.mb.blocks[l];
        printf("bench_model:   layer %d: %d dst, %d src, %lld edges\n", l, blk->num_dst,
               blk->num_src, (long long)blk->num_edges);
    }
    float *feat = HALO_ALLOC(float, (size_t)b.mb.num_input * o.in_dim);
    halo_rng r;
    halo_rng_init(&r, 2, HALO_RNG_TEST, 0, 0, 0);
    for (size_t i = 0; i < (size_t)b.mb.num_input * o.in_dim; i++) {
        feat[i] = (float)(halo_rng_uniform(&r) - 0.5);
    }
    int32_t *labels = HALO_ALLOC(int32_t, o.seeds);
    for (int i = 0; i < o.seeds; i++) {
        labels[i] = (int32_t)halo_rng_below(&r, (uint64_t)o.classes);
    }

    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.layers = o.layers;
    cfg.in_dim = o.in_dim;
    cfg.hidden = o.hidden;
    cfg.classes = o.classes;
    cfg.threads = o.threads;
    cfg.device = o.device;
    cfg.gpu = gpu;
    halo_model *m = NULL;
    if (halo_model_create(&cfg, &m) < 0) {
        fprintf(stderr, "halo: error: %s\n", halo_errmsg());
        return 1;
    }
    /* the loss of the initial weights without dropout, for the cross-check with PyTorch */
    halo_model_stats ev;
    if (halo_model_infer(m, &b.mb, feat, labels, NULL, NULL, &ev) < 0) {
        fprintf(stderr, "halo: error: %s\n", halo_errmsg());
        return 1;
    }
    char path[4096] = "/tmp/halo-bench-model-XXXXXX";
    int fd = -1;
    if (o.keep != NULL) {
        snprintf(path, sizeof path, "%s", o.keep);
    } else {
        fd = mkstemp(path);
    }
    int have_file = o.keep != NULL || (o.torch && fd >= 0);
    if (fd >= 0) {
        close(fd);
        if (!have_file) {
            unlink(path);
        }
    }
    if (have_file) {
        if (write_block_file(path, &o, &b, feat, labels, m) < 0) {
            fprintf(stderr, "halo: error: %s\n", halo_errmsg());
            have_file = 0;
        }
    }

    double *times = HALO_ALLOC(double, o.steps);
    double best_step = 1e30, best_gemm_s = 0, gemm_flops = 0;
    halo_model_stats st = {0};
    /* sgemm calls alternate with the steps (one after each, the warm-up ones untimed), so that
     * both see the same load on a shared machine; best against best */
    int ref = o.device == HALO_DEVICE_CPU && o.sgemm;
    sgemm_ref sg;
    if (ref) {
        sgemm_init(&sg, 2048);
    }
    for (int s = 0; s < o.warmup + o.steps; s++) {
        double g0, f0, g1, f1;
        halo_ops_cpu_gemm_totals(&g0, &f0);
        double t0 = halo_now();
        if (bench_step(m, &b.mb, feat, labels, (uint64_t)s, &st) < 0) {
            fprintf(stderr, "halo: error: %s\n", halo_errmsg());
            return 1;
        }
        double t = halo_now() - t0;
        halo_ops_cpu_gemm_totals(&g1, &f1);
        if (s >= o.warmup) {
            times[s - o.warmup] = t;
            if (t < best_step) {
                best_step = t;
                best_gemm_s = (g1 - g0) / o.threads;
                gemm_flops = f1 - f0;
            }
        }
        if (ref) {
            sgemm_call(&sg, o.threads, s >= o.warmup);
        }
    }
    printf("bench_model: parameters after %d steps: checksum %016llx\n", o.warmup + o.steps,
           (unsigned long long)params_checksum(m));
    qsort(times, (size_t)o.steps, sizeof(double), cmp_double);
    double halo_s = times[o.steps / 2];
    double flops = halo_model_step_flops(m, &b.mb);
    printf("bench_model: halo step: %.2f ms (median of %d; min %.2f ms), loss %.4f\n",
           halo_s * 1e3, o.steps, times[0] * 1e3, (double)st.loss);

    if (ref) {
        double gemm = sgemm_gflops(&sg);
        sgemm_free(&sg);
        double step_rate = flops / times[0] / 1e9;
        printf("bench_model: halo step %.1f GFLOP/s at its best (%.2f GFLOP, %.1f at the "
               "median); OpenBLAS sgemm 2048^3 %.1f GFLOP/s at its best on %d threads (a call "
               "after each step)\n",
               step_rate, flops / 1e9, flops / halo_s / 1e9, gemm, o.threads);
        if (gemm_flops > 0 && best_gemm_s > 0) {
            double grate = gemm_flops / best_gemm_s / 1e9;
            printf("bench_model: the best step's GEMMs: %.2f ms of %.2f ms (%.0f%%; thread time in "
                   "OpenBLAS / threads), %.2f GFLOP at %.1f GFLOP/s = %.2f of sgemm; the rest "
                   "%.2f ms\n",
                   best_gemm_s * 1e3, times[0] * 1e3, 100.0 * best_gemm_s / times[0],
                   gemm_flops / 1e9, grate, grate / gemm, (times[0] - best_gemm_s) * 1e3);
            /* a floor for the rest: the input features must be read once */
            size_t nf = (size_t)b.mb.num_input * o.in_dim;
            double rd = stream_read_s(feat, nf, o.threads, 3);
            printf("bench_model: reading the input features once (%.0f MB, %d threads): %.2f ms "
                   "(%.1f GB/s); GEMMs + that = %.2f ms, a ratio of at most %.2f\n",
                   (double)nf * 4 / 1e6, o.threads, rd * 1e3, (double)nf * 4 / rd / 1e9,
                   (best_gemm_s + rd) * 1e3, flops / (best_gemm_s + rd) / 1e9 / gemm);
        }
        printf("RATIO step_vs_sgemm %.2f (goal >= 0.6; median step %.2f)\n", step_rate / gemm,
               flops / halo_s / 1e9 / gemm);
    } else if (o.device == HALO_DEVICE_CPU) {
        printf("bench_model: halo step %.1f GFLOP/s at its best (%.2f GFLOP); sgemm skipped "
               "(--no-sgemm)\n",
               flops / times[0] / 1e9, flops / 1e9);
    } else {
        printf("bench_model: halo step %.1f GFLOP/s (%.2f GFLOP)\n", flops / halo_s / 1e9,
               flops / 1e9);
    }

    int rc = 0;
    const char *tdev = o.device == HALO_DEVICE_GPU ? "cuda" : "cpu";
    char probe[256];
    snprintf(probe, sizeof probe,
             "python3 -c 'import torch; assert \"%s\" == \"cpu\" or torch.cuda.is_available()' "
             ">/dev/null 2>&1",
             tdev);
    if (!o.torch) {
        printf("bench_model: PyTorch comparison skipped (--no-torch)\n");
    } else if (system(probe) != 0) {
        printf("bench_model: PyTorch comparison skipped: python3 cannot import torch%s "
               "(pip install torch, or apt-get install python3-torch)\n",
               o.device == HALO_DEVICE_GPU ? " with CUDA" : "");
    } else if (!have_file) {
        printf("bench_model: PyTorch comparison skipped: no temporary file\n");
    } else {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "python3 %s/bench/model_torch.py %s %s", HALO_ROOT, path, tdev);
        FILE *p = popen(cmd, "r");
        double torch_s = -1, torch_min = -1, torch_loss = -1;
        char line[1024];
        while (p != NULL && fgets(line, sizeof line, p) != NULL) {
            sscanf(line, "torch_step_s %lf", &torch_s);
            sscanf(line, "torch_step_min_s %lf", &torch_min);
            sscanf(line, "torch_eval_loss %lf", &torch_loss);
            if (strncmp(line, "torch_", 6) != 0) {
                fputs(line, stdout);
            }
        }
        int prc = p != NULL ? pclose(p) : -1;
        if (prc != 0 || torch_s <= 0) {
            printf("bench_model: PyTorch run failed (status %d)\n", prc);
            rc = 1;
        } else {
            printf("bench_model: torch step: %.2f ms (median of %d; min %.2f ms), %s, %d threads\n",
                   torch_s * 1e3, o.steps, torch_min * 1e3, tdev, o.threads);
            printf("bench_model: eval loss of the initial weights: halo %.6f, torch %.6f\n",
                   (double)ev.loss, torch_loss);
            printf("bench_model: ratio halo/torch %.3f (medians; minima %.3f) (goal <= 0.6)\n",
                   halo_s / torch_s, times[0] / torch_min);
        }
    }
    if (have_file && o.keep == NULL) {
        unlink(path);
    }
    halo_free(times);
    halo_free(feat);
    halo_free(labels);
    halo_model_free(m);
    batch_free(&b);
    return rc;
}
