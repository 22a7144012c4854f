/* The generated graph's node data and its output: class means and features, labels, the split,
 * meta.json; the whole graph in memory (halo_gen_graph) or streamed to a directory
 * (halo_gen_write, with the CSR in memory or spilled). */
#include "graph/gen_int.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_ROWS 4096 /* feature rows staged per write */

/* Class means: row c of a classes x feat_dim matrix, entries N(0, 1). With twin_corr t > 0,
 * twin classes (c, c xor 1) share part of their mean: sqrt(1 - t) z_c + sqrt(t) z_pair, still
 * N(0, 1) per entry, with correlation t between the twins (a class without twin keeps z_c). */
static float *gen_means(const halo_gen_params *p)
{
    size_t f = (size_t)p->feat_dim;
    float *mu = HALO_ALLOC(float, (size_t)p->classes * f + 1);
    double t = p->twin_corr, own = sqrt(1 - t), shared = sqrt(t);
    for (int c = 0; c < p->classes; c++) {
        halo_rng r, rp;
        halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)c, 1, 0);
        halo_rng_init(&rp, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)(c / 2), 2, 0);
        bool twin = t > 0 && (c ^ 1) < p->classes;
        for (size_t j = 0; j < f; j++) {
            double z = halo_rng_normal(&r);
            mu[(size_t)c * f + j] = twin ? (float)(own * z + shared * halo_rng_normal(&rp))
                                         : (float)z;
        }
    }
    return mu;
}

/* Feature row of node v of class cls: its class mean plus Gaussian noise (Box-Muller pairs). */
static void gen_feat_row(const halo_gen_params *p, const float *mu, int32_t cls, int64_t v,
                         float *row)
{
    halo_rng r;
    halo_rng_init(&r, p->seed, HALO_RNG_GEN_FEAT, (uint64_t)v, 0, 0);
    int f = p->feat_dim;
    const float *m = mu + (size_t)cls * (size_t)f;
    for (int j = 0; j < f; j += 2) {
        double u1 = halo_rng_uniform(&r), u2 = halo_rng_uniform(&r);
        double rad = sqrt(-2.0 * log(u1 > 1e-300 ? u1 : 1e-300)) * p->noise;
        double ang = 6.283185307179586 * u2;
        row[j] = m[j] + (float)(rad * cos(ang));
        if (j + 1 < f) {
            row[j + 1] = m[j + 1] + (float)(rad * sin(ang));
        }
    }
}

/* Observed label of node v of latent class cls: with probability label_noise a class drawn
 * uniformly (it may be cls again), from a stream keyed by (seed, v) alone, so independent of
 * the node's edges and features; else cls. */
static int32_t gen_label(const halo_gen_params *p, int64_t v, int32_t cls)
{
    if (!(p->label_noise > 0)) {
        return cls;
    }
    halo_rng r;
    halo_rng_init(&r, p->seed, HALO_RNG_GEN_LABEL, 2, (uint64_t)v, 0);
    if (halo_rng_uniform(&r) < p->label_noise) {
        return (int32_t)halo_rng_below(&r, (uint64_t)p->classes);
    }
    return cls;
}

/* Split of every node: the first `train` nodes of a random order are train, then valid, test. */
static uint8_t *gen_split(const halo_gen_params *p)
{
    int32_t *order = halo_gen_permutation(p->seed, HALO_RNG_SPLIT, p->nodes);
    uint8_t *split = HALO_NEW(uint8_t, p->nodes);
    int64_t tr, va, te;
    halo_gen_split_sizes(p, &tr, &va, &te);
    int64_t t1 = tr, t2 = t1 + va, t3 = t2 + te;
    for (int64_t i = 0; i < t3; i++) {
        split[order[i]] = i < t1 ? HALO_SPLIT_TRAIN : i < t2 ? HALO_SPLIT_VALID : HALO_SPLIT_TEST;
    }
    halo_free(order);
    return split;
}

static void gen_fill_meta(const halo_gen_params *p, int64_t edges, halo_graph *g)
{
    snprintf(g->name, sizeof g->name, "%s", p->name);
    g->nodes = p->nodes;
    g->edges = edges;
    g->feat_dim = p->feat_dim;
    g->classes = p->classes;
    g->directed = p->directed;
    g->topology_only = p->topology_only;
    g->ntypes = 1;
}

int halo_gen_graph(const halo_gen_params *p, halo_graph **out)
{
    gen_ctx g;
    *out = NULL;
    HALO_CHECK(halo_gen_ctx_init(p, &g));
    int64_t *indptr;
    int32_t *indices;
    int64_t edges;
    halo_gen_csr(&g, &indptr, &indices, &edges);
    halo_gen_ctx_free(&g);
    halo_graph *gr = halo_graph_alloc(p->nodes, 0, p->topology_only ? 0 : p->feat_dim,
                                      p->classes, 1);
    gen_fill_meta(p, edges, gr);
    if (p->topology_only) {
        halo_graph_drop_features(gr);
    }
    halo_free(gr->indptr);
    halo_free(gr->indices);
    gr->indptr = indptr;
    gr->indices = indices;
    halo_free(gr->label);
    gr->label = halo_gen_classes(&g);
    halo_free(gr->split);
    gr->split = gen_split(p);
    float *mu = p->topology_only ? NULL : gen_means(p);
    for (int64_t v = 0; v < p->nodes; v++) {
        if (!p->topology_only) {
            gen_feat_row(p, mu, gr->label[v], v, gr->feat + (size_t)v * (size_t)p->feat_dim);
        }
        gr->label[v] = gen_label(p, v, gr->label[v]);
        if (p->label_split_only && gr->split[v] == HALO_SPLIT_NONE) {
            gr->label[v] = -1;
        }
    }
    halo_free(mu);
    *out = gr;
    return 0;
}

/* Writes n bytes to tmp/name, recording its CRC and size in slot `which`. */
static int gen_put_file(const char *tmp, int which, const void *data, uint64_t n, uint32_t *crc,
                        uint64_t *bytes)
{
    char path[4096];
    HALO_CHECK(halo_path_join(path, sizeof path, tmp, halo_graph_files[which]));
    HALO_CHECK(halo_file_write_all(path, data, (size_t)n));
    crc[which] = halo_crc32(0, data, (size_t)n);
    bytes[which] = n;
    return 0;
}

/* Streams label.i32 (masked) and feat.f32 (none when topology-only) row block by row block. */
static int gen_write_nodes(const halo_gen_params *p, const char *tmp, const int32_t *cls,
                           const uint8_t *split, uint32_t *crc, uint64_t *bytes)
{
    char path[4096];
    halo_writer *lw = NULL, *fw = NULL;
    int rc = 0;
    bool feat = !p->topology_only;
    size_t f = feat ? (size_t)p->feat_dim : 0;
    float *rows = HALO_ALLOC(float, GEN_ROWS * f + 1);
    int32_t *labels = HALO_ALLOC(int32_t, GEN_ROWS);
    float *mu = feat ? gen_means(p) : NULL;
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_LABEL]));
    HALO_TRY(halo_writer_open(path, &lw));
    if (feat) {
        HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_FEAT]));
        HALO_TRY(halo_writer_open(path, &fw));
    }
    halo_progress pr;
    halo_progress_begin(&pr, feat ? "gen: features" : "gen: labels", (uint64_t)p->nodes);
    for (int64_t v0 = 0; v0 < p->nodes; v0 += GEN_ROWS) {
        int64_t cnt = p->nodes - v0 < GEN_ROWS ? p->nodes - v0 : GEN_ROWS;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t v = v0 + i;
            if (feat) {
                gen_feat_row(p, mu, cls[v], v, rows + (size_t)i * f);
            }
            labels[i] = p->label_split_only && split[v] == HALO_SPLIT_NONE ? -1
                                                                           : gen_label(p, v, cls[v]);
        }
        HALO_TRY(halo_writer_put(lw, labels, (size_t)cnt * sizeof *labels));
        if (feat) {
            HALO_TRY(halo_writer_put(fw, rows, (size_t)cnt * f * sizeof *rows));
        }
        halo_progress_update(&pr, (uint64_t)(v0 + cnt));
    }
    halo_progress_end(&pr);
    rc = halo_writer_close(lw, &crc[HALO_GA_LABEL], &bytes[HALO_GA_LABEL]);
    lw = NULL;
    if (rc == 0 && fw != NULL) {
        rc = halo_writer_close(fw, &crc[HALO_GA_FEAT], &bytes[HALO_GA_FEAT]);
    } else {
        halo_writer_discard(fw);
    }
    fw = NULL;
fail:
    halo_writer_discard(lw);
    halo_writer_discard(fw);
    halo_free(rows);
    halo_free(labels);
    halo_free(mu);
    return rc;
}

int halo_gen_write(const halo_gen_params *p, const char *dir)
{
    gen_ctx g;
    char tmp[4096];
    uint32_t crc[HALO_GA_COUNT] = {0};
    uint64_t bytes[HALO_GA_COUNT] = {0};
    int32_t *cls = NULL;
    uint8_t *split = NULL;
    char *source = NULL;
    int rc = 0;
    HALO_CHECK(halo_gen_ctx_init(p, &g));
    rc = halo_outdir_begin(dir, "indptr.i64", "graph", tmp, sizeof tmp);
    if (rc < 0) {
        halo_gen_ctx_free(&g);
        return rc;
    }
    int64_t edges = 0;
    uint64_t budget = halo_gen_mem_budget();
    if (halo_gen_csr_bytes(&g) <= budget) {
        int64_t *indptr;
        int32_t *indices;
        halo_gen_csr(&g, &indptr, &indices, &edges);
        rc = gen_put_file(tmp, HALO_GA_INDPTR, indptr, (uint64_t)(p->nodes + 1) * 8, crc, bytes);
        if (rc == 0) {
            rc = gen_put_file(tmp, HALO_GA_INDICES, indices, (uint64_t)edges * 4, crc, bytes);
        }
        halo_free(indptr);
        halo_free(indices);
    } else {
        rc = halo_gen_csr_spilled(&g, tmp, budget, crc, bytes, &edges);
    }
    halo_gen_ctx_free(&g);
    if (rc < 0) {
        goto fail;
    }
    cls = halo_gen_classes(&g);
    split = gen_split(p);
    HALO_TRY(gen_put_file(tmp, HALO_GA_SPLIT, split, (uint64_t)p->nodes, crc, bytes));
    HALO_TRY(gen_write_nodes(p, tmp, cls, split, crc, bytes));
    halo_graph meta;
    memset(&meta, 0, sizeof meta);
    gen_fill_meta(p, edges, &meta);
    source = halo_gen_source_json(p);
    HALO_TRY(halo_graph_write_meta(&meta, tmp, crc, bytes, source));
    HALO_TRY(halo_outdir_commit(tmp, dir));
    halo_free(cls);
    halo_free(split);
    halo_free(source);
    return 0;
fail:
    halo_outdir_abort(tmp);
    halo_free(cls);
    halo_free(split);
    halo_free(source);
    return rc;
}
