/* Unit tests of heterogeneous graphs: the mag preset's shape, the typed invariants of
 * halo_graph_check, meta.json round trip, the per-relation fanout parser and the typed sampler
 * against a slow obvious reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "graph/stats.h"
#include "part/part.h"
#include "part/partition.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fanout parser over g's relations. */
#define PARSE(spec, gr, fan, max) halo_sample_parse_rel_fanouts(spec, (gr)->rel, (gr)->nrels, fan, max)

/* A mag-shaped graph at `scale` with 20 classes and 8 features. */
static halo_graph *mag_at(double scale)
{
    halo_gen_hetero_params p;
    assert_int_equal(halo_gen_hetero_defaults("mag", scale, &p), 0);
    p.classes = 20;
    p.feat_dim = 8;
    halo_graph *g;
    assert_int_equal(halo_gen_hetero_graph(&p, &g), 0);
    return g;
}

/* A small mag-shaped graph (about 3,900 nodes). */
static halo_graph *small_mag(void)
{
    return mag_at(0.002);
}

/* Index of the first in-edge of v from u with relation r, or -1 (a linear scan). */
static int64_t find_edge(const halo_graph *g, int64_t v, int32_t u, int r)
{
    for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
        if (g->indices[e] == u && g->etype[e] == r) {
            return e;
        }
    }
    return -1;
}

static void mag_preset_has_the_shape_of_ogbn_mag(void **state)
{
    (void)state;
    halo_graph *g = small_mag();
    assert_int_equal(halo_graph_check(g, NULL), 0);
    assert_int_equal(g->ntypes, 4);
    assert_int_equal(g->nrels, 8);
    assert_string_equal(g->ntype_name[g->target_type], "paper");
    /* type sizes follow the real counts (736,389 papers, 1,134,649 authors, ...) */
    int64_t paper = halo_graph_type_start(g, 1) - halo_graph_type_start(g, 0);
    int64_t author = halo_graph_type_start(g, 2) - halo_graph_type_start(g, 1);
    assert_true(llabs(paper - 1473) <= 1);
    assert_true(llabs(author - 2269) <= 1);
    /* every relation's endpoints are of the types its name says, and it has its reverse */
    const char *want[][3] = {{"writes", "author", "paper"}, {"rev_writes", "paper", "author"},
                             {"cites", "paper", "paper"}, {"has_topic", "paper", "field_of_study"},
                             {"affiliated_with", "author", "institution"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int r = halo_graph_relation(g, want[i][0]);
        assert_true(r >= 0);
        int st = halo_graph_ntype_id(g, want[i][1]), dt = halo_graph_ntype_id(g, want[i][2]);
        int64_t edges = 0;
        for (int64_t v = 0; v < g->nodes; v++) {
            for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
                if (g->etype[e] == r) {
                    assert_int_equal(g->ntype[v], dt);
                    assert_int_equal(g->ntype[g->indices[e]], st);
                    edges++;
                }
            }
        }
        assert_true(edges > 0);
    }
    int wr = halo_graph_relation(g, "writes"), rw = halo_graph_relation(g, "rev_writes");
    for (int64_t v = 0; v < g->nodes; v++) {
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            if (g->etype[e] == wr) {
                assert_true(find_edge(g, g->indices[e], (int32_t)v, rw) >= 0);
            }
        }
    }
    /* labels and split on papers only; only papers have a feature array, the others none */
    assert_null(g->feat);
    assert_non_null(g->tfeat[0]);
    for (int t = 1; t < g->ntypes; t++) {
        assert_null(g->tfeat[t]);
    }
    int64_t labelled = 0, train = 0;
    float row[8];
    for (int64_t v = 0; v < g->nodes; v++) {
        if (g->ntype[v] != 0) {
            assert_int_equal(g->label[v], -1);
            memset(row, 0xff, sizeof row);
            halo_graph_feat_row(g, v, row); /* a featureless node reads as a zero row */
            for (int j = 0; j < g->feat_dim; j++) {
                assert_true(row[j] == 0.0f);
            }
        }
        labelled += g->label[v] >= 0;
        train += g->split[v] == HALO_SPLIT_TRAIN;
    }
    assert_int_equal(labelled, paper);
    assert_true(train > paper * 8 / 10 && train < paper * 9 / 10); /* 629,571 / 736,389 */
    halo_graph_free(g);
}

/* halo_graph_check on g must fail with a message containing `want`. */
static void expect_check_fails(const halo_graph *g, const char *want)
{
    assert_int_equal(halo_graph_check(g, "d"), HALO_EINPUT);
    const char *msg = halo_errmsg();
    if (strstr(msg, want) == NULL) {
        fail_msg("message '%s' lacks '%s'", msg, want);
    }
}

static void check_rejects_every_typed_violation(void **state)
{
    (void)state;
    halo_graph *g = small_mag();
    int64_t p0 = halo_graph_type_start(g, 0), a0 = halo_graph_type_start(g, 1);
    /* an edge whose relation does not fit its endpoints: a paper row's first edge */
    int64_t v = p0;
    while (g->indptr[v + 1] == g->indptr[v]) {
        v++;
    }
    int64_t e = g->indptr[v];
    uint8_t keep = g->etype[e];
    g->etype[e] = (uint8_t)halo_graph_relation(g, "affiliated_with");
    expect_check_fails(g, "etype.u8: entry");
    g->etype[e] = (uint8_t)g->nrels;
    expect_check_fails(g, "not a relation in [0, 8)");
    g->etype[e] = keep;
    /* the right destination type but the wrong source type: a citation called "writes" */
    int cites = halo_graph_relation(g, "cites");
    int64_t c = p0;
    while (g->indptr[c + 1] == g->indptr[c] || g->etype[g->indptr[c]] != cites) {
        c++;
    }
    g->etype[g->indptr[c]] = (uint8_t)halo_graph_relation(g, "writes");
    expect_check_fails(g, "is relation 'writes' (author -> paper) on an edge paper");
    g->etype[g->indptr[c]] = (uint8_t)cites;
    /* a row not grouped by relation */
    int64_t w = p0;
    while (w < a0 && !(g->indptr[w + 1] - g->indptr[w] >= 2 &&
                       g->etype[g->indptr[w]] != g->etype[g->indptr[w + 1] - 1])) {
        w++;
    }
    assert_true(w < a0);
    int64_t b = g->indptr[w], l = g->indptr[w + 1] - 1;
    int32_t ti = g->indices[b];
    uint8_t te = g->etype[b];
    g->indices[b] = g->indices[l];
    g->etype[b] = g->etype[l];
    g->indices[l] = ti;
    g->etype[l] = te;
    expect_check_fails(g, "not grouped by relation");
    g->indices[l] = g->indices[b];
    g->etype[l] = g->etype[b];
    g->indices[b] = ti;
    g->etype[b] = te;
    assert_int_equal(halo_graph_check(g, NULL), 0);
    /* a label or a split on an author */
    g->label[a0] = 3;
    expect_check_fails(g, "only the target type paper is labelled");
    g->label[a0] = -1;
    g->split[a0] = HALO_SPLIT_TRAIN;
    expect_check_fails(g, "only the target type paper is split");
    g->split[a0] = HALO_SPLIT_NONE;
    /* types not contiguous */
    g->ntype[a0 - 1] = 1;
    g->ntype[a0] = 0;
    assert_int_equal(halo_graph_check(g, "d"), HALO_EINPUT);
    g->ntype[a0 - 1] = 0;
    g->ntype[a0] = 1;
    assert_int_equal(halo_graph_check(g, NULL), 0);
    halo_graph_free(g);
}

/* Whether file `name` exists in dir; its size in *bytes. */
static bool file_in(const char *dir, const char *name, long *bytes)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    fseek(f, 0, SEEK_END);
    *bytes = ftell(f);
    fclose(f);
    return true;
}

/* Runs shell command fmt on dir (one %s). */
static void sh(const char *fmt, const char *dir)
{
    char cmd[13000];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
}

/* A typed graph keeps its features as one file per featured type (feat.paper.f32, papers x 8
 * floats), none for featureless types and no feat.f32; the rows read back equal the written
 * ones; verify names a truncated per-type file, a file for a featureless type and a padded
 * feat.f32 of an older halo. */
static void typed_graph_keeps_one_feature_file_per_featured_type(void **state)
{
    (void)state;
    char dir[] = "/tmp/halo_test_hetero_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[4200];
    snprintf(out, sizeof out, "%s/g", dir);
    halo_graph *g = small_mag();
    assert_int_equal(halo_graph_write(g, out, NULL), 0);
    int64_t papers = halo_graph_type_start(g, 1);
    long bytes = -1;
    assert_true(file_in(out, "feat.paper.f32", &bytes));
    assert_int_equal(bytes, papers * 8 * 4);
    assert_false(file_in(out, "feat.f32", &bytes));
    assert_false(file_in(out, "feat.author.f32", &bytes));
    assert_false(file_in(out, "feat.institution.f32", &bytes));
    assert_false(file_in(out, "feat.field_of_study.f32", &bytes));
    halo_graph *h;
    assert_int_equal(halo_graph_load(out, &h), 0);
    assert_null(h->feat);
    float a[8], b[8];
    for (int64_t v = 0; v < g->nodes; v += 7) {
        halo_graph_feat_row(g, v, a);
        halo_graph_feat_row(h, v, b);
        assert_memory_equal(a, b, sizeof a);
    }
    halo_graph_free(h);
    assert_int_equal(halo_graph_verify(out), 0);
    /* a cut per-type file */
    sh("cp %s/feat.paper.f32 %s/keep && truncate -s -4 %s/feat.paper.f32", out);
    assert_int_equal(halo_graph_verify(out), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.paper.f32"));
    sh("mv %s/keep %s/feat.paper.f32 # %s", out);
    assert_int_equal(halo_graph_verify(out), 0);
    /* a file for a featureless type */
    sh("touch %s/feat.author.f32 # %s %s", out);
    assert_int_equal(halo_graph_verify(out), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.author.f32"));
    sh("rm %s/feat.author.f32 # %s %s", out);
    /* a padded feat.f32 of an older halo: one line saying so, from load and verify */
    sh("touch %s/feat.f32 # %s %s", out);
    assert_int_equal(halo_graph_load(out, &h), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.f32: a typed graph from an older halo"));
    assert_int_equal(halo_graph_verify(out), HALO_EINPUT);
    sh("rm %s/feat.f32 # %s %s", out);
    /* a missing per-type file */
    sh("mv %s/feat.paper.f32 %s/keep # %s", out);
    assert_int_equal(halo_graph_verify(out), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "feat.paper.f32: missing"));
    sh("mv %s/keep %s/feat.paper.f32 # %s", out);
    assert_int_equal(halo_graph_verify(out), 0);
    halo_graph_free(g);
    snprintf(out, sizeof out, "rm -rf '%s'", dir);
    assert_int_equal(system(out), 0);
}

static void typed_graph_round_trips_through_a_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/halo_test_hetero_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[4200];
    snprintf(out, sizeof out, "%s/g", dir);
    halo_graph *g = small_mag();
    assert_int_equal(halo_graph_write(g, out, NULL), 0);
    halo_graph *h;
    assert_int_equal(halo_graph_load(out, &h), 0);
    assert_int_equal(halo_graph_verify(out), 0);
    assert_int_equal(h->nrels, g->nrels);
    assert_int_equal(h->target_type, 0);
    for (int r = 0; r < g->nrels; r++) {
        assert_string_equal(h->rel[r].name, g->rel[r].name);
        assert_int_equal(h->rel[r].src, g->rel[r].src);
        assert_int_equal(h->rel[r].dst, g->rel[r].dst);
    }
    for (int t = 0; t < g->ntypes; t++) {
        assert_string_equal(h->ntype_name[t], g->ntype_name[t]);
        assert_int_equal(h->ntype_feat_dim[t], g->ntype_feat_dim[t]);
    }
    assert_memory_equal(h->etype, g->etype, (size_t)g->edges);
    halo_graph_free(h);
    /* a changed etype.u8 is caught by its checksum */
    char path[4300];
    snprintf(path, sizeof path, "%s/etype.u8", out);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_SET);
    unsigned char c = (unsigned char)(g->etype[0] ^ 1);
    assert_int_equal(fwrite(&c, 1, 1, f), 1);
    fclose(f);
    assert_int_equal(halo_graph_verify(out), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "etype.u8"));
    halo_graph_free(g);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

static void rel_fanouts_parse_both_forms(void **state)
{
    (void)state;
    halo_graph *g = small_mag();
    halo_rel_fanouts fan;
    int cites = halo_graph_relation(g, "cites"), writes = halo_graph_relation(g, "writes");
    assert_int_equal(PARSE("10,25", g, fan, HALO_MAX_LAYERS), 2);
    for (int r = 0; r < g->nrels; r++) {
        assert_int_equal(fan[0][r], 10);
        assert_int_equal(fan[1][r], 25);
    }
    assert_int_equal(PARSE("cites=10,writes=5;cites=15,*=-1", g, fan,
                                                   HALO_MAX_LAYERS), 2);
    assert_int_equal(fan[0][cites], 10);
    assert_int_equal(fan[0][writes], 5);
    assert_int_equal(fan[0][halo_graph_relation(g, "has_topic")], 0);
    assert_int_equal(fan[1][cites], 15);
    assert_int_equal(fan[1][writes], -1);
    const char *bad[][2] = {{"cites=10,wrote=5", "no relation 'wrote' (the graph's relations: cites, rev_cites"},
                            {"cites=x", "'x' in"},
                            {"cites=10;", "empty layer 1"},
                            {"cites=1,cites=2", "relation 'cites' twice"},
                            {"cites", "bad list 'cites'"}, {"cites=1,writes", "is not REL=N"},
                            {"cites=3,", "trailing ','"},
                            {"*=1,*=2", "'*' twice"},
                            {"cites=-2", "not a fanout"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(PARSE(bad[i][0], g, fan, HALO_MAX_LAYERS),
                         HALO_EUSAGE);
        if (strstr(halo_errmsg(), bad[i][1]) == NULL) {
            fail_msg("'%s': message '%s' lacks '%s'", bad[i][0], halo_errmsg(), bad[i][1]);
        }
    }
    halo_graph_free(g);
    halo_graph *h = halo_graph_alloc(4, 0, 1, 2, 0);
    assert_int_equal(PARSE("a=1", h, fan, HALO_MAX_LAYERS), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "the graph has none"));
    halo_graph_free(h);
}

/* Checks block b against g: each destination's sampled edges per relation number
 * min(degree in r, fan[r]), each is an edge of g with that relation, none twice. */
static void check_typed_block(const halo_graph *g, const halo_block *b, const int *fan)
{
    assert_non_null(b->etype);
    for (int32_t i = 0; i < b->num_dst; i++) {
        int64_t v = b->src_gid[i];
        int64_t per[HALO_MAX_RELS] = {0};
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
            per[g->etype[e]]++;
        }
        int64_t got[HALO_MAX_RELS] = {0};
        for (int64_t j = b->indptr[i]; j < b->indptr[i + 1]; j++) {
            int r = b->etype[j];
            int32_t u = b->src_gid[b->indices[j]];
            assert_true(find_edge(g, v, u, r) >= 0);
            for (int64_t k = b->indptr[i]; k < j; k++) {
                assert_false(b->indices[k] == b->indices[j] && b->etype[k] == b->etype[j]);
            }
            got[r]++;
        }
        for (int r = 0; r < g->nrels; r++) {
            int64_t want = fan[r] < 0 || per[r] <= fan[r] ? per[r] : fan[r];
            assert_int_equal(got[r], want);
        }
    }
}

static void typed_sampler_respects_per_relation_fanouts(void **state)
{
    (void)state;
    halo_graph *g = small_mag();
    halo_rel_fanouts fan;
    assert_int_equal(PARSE("cites=3,writes=2,rev_has_topic=-1,*=1;"
                                                   "cites=4,writes=0,*=2", g, fan,
                                                   HALO_MAX_LAYERS), 2);
    int32_t seeds[64];
    for (int i = 0; i < 64; i++) {
        seeds[i] = i * 17;
    }
    halo_sampler *s = halo_sampler_new();
    halo_minibatch a = {0}, b = {0};
    halo_sample_key k = {7, 1, 2};
    assert_int_equal(halo_sample_graph_typed(s, g, fan, 2, &k, seeds, 64, &a), 0);
    check_typed_block(g, &a.blocks[1], fan[1]);
    check_typed_block(g, &a.blocks[0], fan[0]);
    assert_int_equal(a.num_seeds, 64);
    /* same keys, same blocks; another batch, other draws */
    assert_int_equal(halo_sample_graph_typed(s, g, fan, 2, &k, seeds, 64, &b), 0);
    assert_int_equal(a.blocks[0].num_edges, b.blocks[0].num_edges);
    assert_memory_equal(a.blocks[0].indices, b.blocks[0].indices,
                        (size_t)a.blocks[0].num_edges * sizeof(int32_t));
    assert_memory_equal(a.blocks[0].etype, b.blocks[0].etype, (size_t)a.blocks[0].num_edges);
    halo_sample_key k2 = {7, 1, 3};
    assert_int_equal(halo_sample_graph_typed(s, g, fan, 2, &k2, seeds, 64, &b), 0);
    bool differs = b.blocks[1].num_src != a.blocks[1].num_src ||
                   memcmp(a.blocks[1].src_gid, b.blocks[1].src_gid,
                          (size_t)a.blocks[1].num_src * sizeof(int32_t)) != 0;
    assert_true(differs);
    /* a plain fanout equals the per-relation form giving every relation that number */
    halo_rel_fanouts plain, named;
    char spec[2048] = "";
    for (int r = 0; r < g->nrels; r++) {
        char one[64];
        snprintf(one, sizeof one, "%s%s=3", r ? "," : "", g->rel[r].name);
        strcat(spec, one);
    }
    assert_int_equal(PARSE("3", g, plain, HALO_MAX_LAYERS), 1);
    assert_int_equal(PARSE(spec, g, named, HALO_MAX_LAYERS), 1);
    assert_int_equal(halo_sample_graph_typed(s, g, plain, 1, &k, seeds, 64, &a), 0);
    assert_int_equal(halo_sample_graph_typed(s, g, named, 1, &k, seeds, 64, &b), 0);
    assert_int_equal(a.blocks[0].num_edges, b.blocks[0].num_edges);
    assert_memory_equal(a.blocks[0].indices, b.blocks[0].indices,
                        (size_t)a.blocks[0].num_edges * sizeof(int32_t));
    check_typed_block(g, &a.blocks[0], plain[0]);
    halo_sample_free(&a);
    halo_sample_free(&b);
    halo_sampler_free(s);
    halo_graph_free(g);
}

/* METIS on a typed graph: every node type balanced within the tolerance, counted here from the
 * written orig_id.i64 and the input's node types; the type ranges hold exactly each type. */
static void typed_metis_partition_balances_every_type(void **state)
{
    (void)state;
    halo_graph *g = mag_at(0.005); /* about 9,700 nodes: METIS balances 6 columns on it */
    char dir[] = "/tmp/halo_test_hetero_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pdir[4200], path[4300];
    snprintf(pdir, sizeof pdir, "%s/p", dir);
    halo_partition_opts opts;
    halo_partition_opts_init(&opts);
    opts.parts = 4;
    opts.choice.imbalance = 1.05;
    assert_int_equal(halo_partition_run(g, &opts, pdir, NULL), 0);
    halo_partinfo *pi;
    assert_int_equal(halo_partinfo_load(pdir, &pi), 0);
    assert_int_equal(pi->nrels, g->nrels);
    assert_int_equal(pi->ntypes, g->ntypes);
    snprintf(path, sizeof path, "%s/orig_id.i64", pdir);
    char *data;
    size_t len;
    assert_int_equal(halo_file_read_all(path, &data, &len), 0);
    const int64_t *orig = (const int64_t *)data;
    int T1 = g->ntypes + 1;
    for (int t = 0; t < g->ntypes; t++) {
        int64_t per[4] = {0}, total = 0, max = 0;
        for (int k = 0; k < 4; k++) {
            for (int64_t id = pi->start[k]; id < pi->start[k + 1]; id++) {
                per[k] += g->ntype[orig[id]] == t;
            }
            const int64_t *ts = pi->type_start + (size_t)k * T1;
            assert_int_equal(ts[t + 1] - ts[t], per[k]);
            for (int64_t id = ts[t]; id < ts[t + 1]; id++) {
                assert_int_equal(g->ntype[orig[id]], t);
            }
            total += per[k];
            max = per[k] > max ? per[k] : max;
        }
        double bal = (double)max * 4 / (double)total;
        print_message("# %s: balance %.3f\n", g->ntype_name[t], bal);
        assert_true(bal <= 1.10); /* METIS keeps small graphs a little above 1.05 */
    }
    /* each part keeps feat.paper.f32 over its paper range, equal to the graph's rows of the
     * nodes it owns; no feat.f32 and no file for the featureless types */
    float want[8], got[8];
    for (int k = 0; k < 4; k++) {
        halo_part *p;
        assert_int_equal(halo_part_load(pdir, k, &p), 0);
        assert_null(p->feat);
        assert_int_equal(p->ntypes, g->ntypes);
        char kdir[4300];
        long bytes = -1;
        snprintf(kdir, sizeof kdir, "%s/part-%d", pdir, k);
        const int64_t *ts = pi->type_start + (size_t)k * T1;
        assert_true(file_in(kdir, "feat.paper.f32", &bytes));
        assert_int_equal(bytes, (ts[1] - ts[0]) * 8 * 4);
        assert_false(file_in(kdir, "feat.f32", &bytes));
        assert_false(file_in(kdir, "feat.author.f32", &bytes));
        for (int64_t id = p->start; id < p->end; id++) {
            halo_graph_feat_row(g, orig[id], want);
            halo_part_feat_row(p, id, got);
            assert_memory_equal(want, got, sizeof want);
        }
        halo_part_free(p);
    }
    halo_free(data);
    halo_partinfo_free(pi);
    halo_graph_free(g);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mag_preset_has_the_shape_of_ogbn_mag),
        cmocka_unit_test(check_rejects_every_typed_violation),
        cmocka_unit_test(typed_graph_round_trips_through_a_directory),
        cmocka_unit_test(typed_graph_keeps_one_feature_file_per_featured_type),
        cmocka_unit_test(rel_fanouts_parse_both_forms),
        cmocka_unit_test(typed_sampler_respects_per_relation_fanouts),
        cmocka_unit_test(typed_metis_partition_balances_every_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
