/* The GPU data path's logic on the CPU back end (runtime/model, docs/model.md): per-slot staging
 * through a pipeline of every depth (slots reused for batch b + depth + 1 only, a slot given the
 * wrong batch refused), the copy stage's bytes and times reported, the training results of the
 * staged path bit-identical to the direct one with real copies (cfg.copy_stage) and without, and
 * the loss read after the Adam step equal to the loss read at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../common/batch.h"
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "model/model.h"
#include "pipe/pipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NB 7      /* batches per run */
#define IN 16     /* input width */
#define CLASSES 5 /* output width */
#define RELS 3    /* RGCN relations */

/* 0..maxdeg in-neighbours, none for every 11th destination. */
static int batch_deg(halo_rng *r, int32_t i, int maxdeg)
{
    return i % 11 == 3 ? 0 : (int)halo_rng_below(r, (uint64_t)maxdeg + 1);
}

/* NB random mini-batches of different sizes, their input rows, labels and edge types. */
typedef struct batches {
    test_batch t[NB];
    float *feat[NB];
    int32_t *labels[NB];
    uint8_t *etype[NB][2];
} batches;

static batches *batches_new(void)
{
    batches *B = HALO_NEW(batches, 1);
    for (int b = 0; b < NB; b++) {
        int32_t nodes[3] = {400 + 37 * b, 120 + 11 * b, 30 + 5 * b};
        halo_rng r;
        halo_rng_init(&r, 5, HALO_RNG_TEST, (uint64_t)b, 0, 0);
        test_batch *t = &B->t[b];
        memset(t, 0, sizeof *t);
        t->gid = HALO_ALLOC(int32_t, nodes[0]);
        for (int32_t i = 0; i < nodes[0]; i++) {
            t->gid[i] = 7 * i + b;
        }
        test_batch_blocks(t, 2, nodes, 9, &r, batch_deg);
        B->feat[b] = HALO_ALLOC(float, (size_t)nodes[0] * IN);
        for (size_t i = 0; i < (size_t)nodes[0] * IN; i++) {
            B->feat[b][i] = (float)(2.0 * halo_rng_uniform(&r) - 1.0);
        }
        B->labels[b] = HALO_ALLOC(int32_t, nodes[2]);
        for (int32_t i = 0; i < nodes[2]; i++) {
            B->labels[b][i] = (int32_t)halo_rng_below(&r, CLASSES);
        }
        for (int l = 0; l < 2; l++) {
            int64_t e = t->mb.blocks[l].num_edges;
            B->etype[b][l] = HALO_ALLOC(uint8_t, e > 0 ? e : 1);
            for (int64_t k = 0; k < e; k++) {
                B->etype[b][l][k] = (uint8_t)halo_rng_below(&r, RELS);
            }
        }
    }
    return B;
}

static void batches_free(batches *B)
{
    for (int b = 0; b < NB; b++) {
        test_batch_free(&B->t[b]);
        halo_free(B->feat[b]);
        halo_free(B->labels[b]);
        halo_free(B->etype[b][0]);
        halo_free(B->etype[b][1]);
    }
    halo_free(B);
}

/* Batch b as a model of `kind` takes it (RGCN: typed edges). */
static halo_minibatch batch_mb(const batches *B, int b, int kind)
{
    halo_minibatch mb = B->t[b].mb;
    for (int l = 0; l < 2; l++) {
        mb.blocks[l].etype = kind == HALO_MODEL_RGCN ? B->etype[b][l] : NULL;
    }
    return mb;
}

static halo_model *make_model(int kind, int copy_stage)
{
    halo_model_config cfg;
    halo_model_config_default(&cfg);
    cfg.in_dim = IN;
    cfg.hidden = 24;
    cfg.classes = CLASSES;
    cfg.dropout = 0.5f;
    cfg.threads = 2;
    cfg.kind = kind;
    cfg.relations = kind == HALO_MODEL_RGCN ? RELS : 1;
    cfg.bases = kind == HALO_MODEL_RGCN ? 2 : 0;
    cfg.heads = 3;     /* GAT */
    cfg.out_heads = 2; /* GAT: the heads' mean's CSR goes to the device too */
    cfg.copy_stage = copy_stage;
    halo_model *m = NULL;
    int rc = halo_model_create(&cfg, &m);
    if (rc < 0) {
        fprintf(stderr, "# %s\n", halo_errmsg());
    }
    assert_int_equal(rc, 0);
    return m;
}

/* The reference: every batch through halo_model_train_forward_backward with its stats read at
 * once, then Adam. */
typedef struct reference {
    halo_model_stats stats[NB];
    uint64_t checksum;
} reference;

static void run_direct(const batches *B, int kind, reference *ref)
{
    halo_model *m = make_model(kind, 0);
    for (int b = 0; b < NB; b++) {
        halo_minibatch mb = batch_mb(B, b, kind);
        assert_int_equal(halo_model_train_forward_backward(m, &mb, B->feat[b], B->labels[b],
                                                           100 + (uint64_t)b, &ref->stats[b]),
                         0);
        assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
    }
    ref->checksum = halo_model_param_checksum(m);
    halo_model_free(m);
}

/* One pipeline slot as the trainer keeps it: a pinned rows buffer and a stage. */
typedef struct slot {
    halo_minibatch mb;       /* the batch it holds */
    float *rows;             /* pinned host rows (halo_model_host_alloc) */
    size_t rows_cap;         /* bytes */
    halo_model_stage *stage; /* the model's staging */
    int64_t holds;           /* batch the fill stage put in it, -1 none */
    int64_t bytes;           /* bytes its last upload queued */
} slot;

typedef struct run_ctx {
    const batches *B;
    halo_model *m;
    int kind;
    int64_t filled_over_live; /* fills into a slot whose batch was not yet trained */
} run_ctx;

/* Stage 1, the fetch's stand-in: batch b's rows into the slot's pinned buffer. */
static int fill_fn(void *arg, halo_pipe_item *it)
{
    run_ctx *rc = arg;
    slot *s = it->data;
    int b = (int)it->batch;
    if (s->holds >= 0) {
        rc->filled_over_live++; /* the slot was given back before its batch was trained? */
    }
    s->mb = batch_mb(rc->B, b, rc->kind);
    size_t bytes = (size_t)s->mb.num_input * IN * sizeof(float);
    if (bytes > s->rows_cap) {
        halo_model_host_free(rc->m, s->rows);
        void *p = NULL;
        HALO_CHECK(halo_model_host_alloc(rc->m, bytes, &p));
        s->rows = p;
        s->rows_cap = bytes;
    }
    memcpy(s->rows, rc->B->feat[b], bytes);
    s->holds = it->batch;
    return 0;
}

/* Stage 2, the copy stage. */
static int copy_fn(void *arg, halo_pipe_item *it)
{
    run_ctx *rc = arg;
    slot *s = it->data;
    if (s->stage == NULL) {
        HALO_CHECK(halo_model_stage_new(rc->m, &s->stage));
    }
    HALO_CHECK(halo_model_stage_upload(rc->m, s->stage, &s->mb, s->rows, rc->B->labels[it->batch],
                                       it->batch));
    s->bytes = halo_model_stage_bytes(s->stage);
    return 0;
}

/* The batches through a pipeline of `depth` with a fill and a copy stage (random delays), each
 * trained by halo_model_train_staged with the loss read after Adam; compared with ref. */
static void run_staged(const batches *B, int kind, int copy_stage, int depth, const reference *ref)
{
    halo_model *m = make_model(kind, copy_stage);
    run_ctx rc = {.B = B, .m = m, .kind = kind};
    int nslots = halo_pipe_slots(depth);
    assert_int_equal(nslots, depth + 1);
    slot *slots = HALO_NEW(slot, nslots);
    void **slotp = HALO_ALLOC(void *, nslots);
    for (int i = 0; i < nslots; i++) {
        slots[i].holds = -1;
        slotp[i] = &slots[i];
    }
    void *args[1] = {&rc};
    halo_pipe_opts o = {.depth = depth,
                        .batches = NB,
                        .nstages = 2,
                        .slots = slotp,
                        .jitter_us = 300,
                        .jitter_seed = (uint64_t)depth};
    o.stages[0] = (halo_pipe_stage){"fill", fill_fn, 1, args};
    o.stages[1] = (halo_pipe_stage){"copy", copy_fn, 1, args};
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&o, &p), 0);
    double copy_s = 0;
    for (int b = 0; b < NB; b++) {
        halo_pipe_item *it;
        int r = halo_pipe_next(p, &it);
        if (r != 0) {
            fprintf(stderr, "# depth %d batch %d: %s\n", depth, b, halo_errmsg());
        }
        assert_int_equal(r, 0);
        assert_int_equal(it->batch, b);
        slot *s = it->data;
        /* slot b % (depth + 1), holding batch b, staged for batch b */
        assert_ptr_equal(s, &slots[b % nslots]);
        assert_int_equal(s->holds, b);
        assert_int_equal(halo_model_stage_batch(s->stage), b);
        /* bytes queued for the device: the rows and the packed blocks, or nothing on the CPU */
        int64_t rows = (int64_t)s->mb.num_input * IN * (int64_t)sizeof(float);
        if (copy_stage) {
            assert_true(s->bytes > rows);
        } else {
            assert_int_equal(s->bytes, 0);
        }
        assert_true(it->end[1] >= it->start[1]);
        copy_s += it->end[1] - it->start[1];
        assert_int_equal(halo_model_train_staged(m, s->stage, b, 100 + (uint64_t)b, NULL), 0);
        assert_int_equal(halo_model_stage_batch(s->stage), -1); /* consumed */
        assert_int_equal(halo_model_adam_step(m, 1.0f), 0);
        halo_model_stats later;
        assert_int_equal(halo_model_last_stats(m, &later), 0);
        assert_memory_equal(&later, &ref->stats[b], sizeof later);
        s->holds = -1;
        halo_pipe_release(p, it);
    }
    assert_int_equal(halo_pipe_close(p), 0);
    assert_true(copy_s >= 0);
    assert_int_equal(rc.filled_over_live, 0);
    uint64_t got = halo_model_param_checksum(m);
    fprintf(stderr,
            "# %s copy_stage %d depth %d: checksum %016llx (direct %016llx), copy stage "
            "%.6f s\n",
            halo_model_kind_name(kind), copy_stage, depth, (unsigned long long)got,
            (unsigned long long)ref->checksum, copy_s);
    assert_true(got == ref->checksum);
    for (int i = 0; i < nslots; i++) {
        halo_model_stage_free(m, slots[i].stage);
        halo_model_host_free(m, slots[i].rows);
    }
    halo_free(slots);
    halo_free(slotp);
    halo_model_free(m);
}

static void staged_equals_direct(int kind)
{
    batches *B = batches_new();
    reference ref;
    run_direct(B, kind, &ref);
    int depths[] = {0, 1, 2, 4};
    for (int copy = 0; copy <= 1; copy++) {
        for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
            run_staged(B, kind, copy, depths[d], &ref);
        }
    }
    batches_free(B);
}

/* SAGE and RGCN (the relation CSR built in the copy stage), at depths 0, 1, 2, 4, with and
 * without real copies: the same losses and weights, bit for bit. */
static void staged_sage_equals_direct(void **state)
{
    (void)state;
    staged_equals_direct(HALO_MODEL_SAGE);
}

static void staged_rgcn_equals_direct(void **state)
{
    (void)state;
    staged_equals_direct(HALO_MODEL_RGCN);
}

static void staged_gat_equals_direct(void **state)
{
    (void)state;
    staged_equals_direct(HALO_MODEL_GAT);
}

/* A stage trained for another batch than it holds, or twice, is refused with one message. */
static void wrong_batch_is_refused(void **state)
{
    (void)state;
    batches *B = batches_new();
    halo_model *m = make_model(HALO_MODEL_SAGE, 1);
    halo_model_stage *sg;
    assert_int_equal(halo_model_stage_new(m, &sg), 0);
    assert_int_equal(halo_model_stage_batch(sg), -1);
    assert_int_equal(halo_model_train_staged(m, sg, 0, 1, NULL), HALO_ESTATE);
    halo_minibatch mb = batch_mb(B, 3, HALO_MODEL_SAGE);
    assert_int_equal(halo_model_stage_upload(m, sg, &mb, B->feat[3], B->labels[3], 3), 0);
    assert_int_equal(halo_model_train_staged(m, sg, 4, 1, NULL), HALO_ESTATE);
    assert_non_null(strstr(halo_errmsg(), "holds batch 3"));
    assert_int_equal(halo_model_train_staged(m, sg, 3, 1, NULL), 0);
    assert_int_equal(halo_model_train_staged(m, sg, 3, 1, NULL), HALO_ESTATE);
    /* a bad mini-batch is refused by the upload, and the stage then holds nothing */
    halo_minibatch bad = mb;
    bad.layers = 1;
    assert_int_equal(halo_model_stage_upload(m, sg, &bad, B->feat[3], B->labels[3], 5),
                     HALO_EINPUT);
    assert_int_equal(halo_model_stage_batch(sg), -1);
    halo_model_stage_free(m, sg);
    halo_model_free(m);
    batches_free(B);
}

/* The loss read later (after Adam and an inference in between) equals the loss read at once;
 * before any pass there is none to read. */
static void loss_read_later_equals_at_once(void **state)
{
    (void)state;
    batches *B = batches_new();
    halo_model *a = make_model(HALO_MODEL_SAGE, 0), *b = make_model(HALO_MODEL_SAGE, 0);
    halo_model_stats sa, sb;
    assert_int_equal(halo_model_last_stats(b, &sb), HALO_ESTATE);
    for (int k = 0; k < 3; k++) {
        halo_minibatch mb = batch_mb(B, k, HALO_MODEL_SAGE);
        assert_int_equal(halo_model_train_forward_backward(a, &mb, B->feat[k], B->labels[k],
                                                           7 + (uint64_t)k, &sa),
                         0);
        assert_int_equal(halo_model_train_forward_backward(b, &mb, B->feat[k], B->labels[k],
                                                           7 + (uint64_t)k, NULL),
                         0);
        assert_int_equal(halo_model_adam_step(a, 1.0f), 0);
        assert_int_equal(halo_model_adam_step(b, 1.0f), 0);
        halo_minibatch other = batch_mb(B, 5, HALO_MODEL_SAGE);
        halo_model_stats si;
        assert_int_equal(halo_model_infer(b, &other, B->feat[5], B->labels[5], NULL, NULL, &si), 0);
        assert_int_equal(halo_model_last_stats(b, &sb), 0);
        assert_int_equal(sb.seeds, mb.num_seeds);
        assert_true(sa.loss > 0);
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    assert_true(halo_model_param_checksum(a) == halo_model_param_checksum(b));
    halo_model_free(a);
    halo_model_free(b);
    batches_free(B);
}

/* Rows of NaN logits (a NaN bias of the last layer: every class, or the first only) still
 * predict a class in [0, classes). */
static void nan_row_predicts_a_class(void **state)
{
    (void)state;
    batches *B = batches_new();
    halo_model *m = make_model(HALO_MODEL_SAGE, 0);
    halo_minibatch mb = batch_mb(B, 0, HALO_MODEL_SAGE);
    int32_t *pred = HALO_ALLOC(int32_t, mb.num_seeds);
    float *logits = HALO_ALLOC(float, (size_t)mb.num_seeds *CLASSES);
    for (int all = 1; all >= 0; all--) {
        float *bias = halo_model_params(m, NULL) + halo_model_bias_offset(m, 1);
        for (int c = 0; c < CLASSES; c++) {
            bias[c] = all || c == 0 ? NAN : 0.0f;
        }
        assert_int_equal(halo_model_push_state(m), 0);
        assert_int_equal(halo_model_infer(m, &mb, B->feat[0], NULL, logits, pred, NULL), 0);
        for (int32_t r = 0; r < mb.num_seeds; r++) {
            assert_true(isnan(logits[(size_t)r * CLASSES]));
            assert_true(pred[r] >= 0 && pred[r] < CLASSES);
        }
    }
    halo_free(pred);
    halo_free(logits);
    halo_model_free(m);
    batches_free(B);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(staged_sage_equals_direct),
        cmocka_unit_test(staged_rgcn_equals_direct),
        cmocka_unit_test(staged_gat_equals_direct),
        cmocka_unit_test(wrong_batch_is_refused),
        cmocka_unit_test(loss_read_later_equals_at_once),
        cmocka_unit_test(nan_row_predicts_a_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
