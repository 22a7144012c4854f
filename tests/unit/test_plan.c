/* Unit tests of runtime/plan, the decisions the trainer and the simulator share: fanouts parsed
 * once and taken per epoch, the pipeline's ask and settlement, node types and their counts,
 * ctx.last_epoch, the cache's look-ahead; and sample/'s frontier loop that every sampler runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mem.h"
#include "pipe/pipe.h"
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[512];

/* Opens a policy from Lua source (written to a scratch file). */
static int open_src(const char *src, halo_policy **p)
{
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(path, sizeof path, "%s/plan_%d.lua", dir ? dir : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(src, f);
    fclose(f);
    halo_policy_opts o = {.path = path, .rank = -1};
    int rc = halo_policy_open(&o, p);
    unlink(path);
    return rc;
}

static const char *const pol_src =
    "return { name = 't',\n"
    "  fanout = function(ctx) if ctx.epoch == 1 then return {7, 8, 9} end return {3, 4} end,\n"
    "  pipeline = function(ctx) return { depth = 2, sampler_threads = 3 } end }\n";

/* A typed range table: 2 parts of 10 nodes, node types a (the first 6 of each part) and b,
 * relations cites and writes. */
static void typed_info(halo_partinfo *pi, int64_t *start, int64_t *ts)
{
    memset(pi, 0, sizeof *pi);
    pi->parts = 2;
    pi->nodes = 20;
    pi->feat_dim = 4;
    pi->ntypes = 2;
    pi->nrels = 2;
    snprintf(pi->ntype_name[0], sizeof pi->ntype_name[0], "a");
    snprintf(pi->ntype_name[1], sizeof pi->ntype_name[1], "b");
    pi->ntype_feat_dim[0] = 4;
    pi->ntype_feat_dim[1] = 0;
    snprintf(pi->rel[0].name, sizeof pi->rel[0].name, "cites");
    snprintf(pi->rel[1].name, sizeof pi->rel[1].name, "writes");
    start[0] = 0, start[1] = 10, start[2] = 20;
    pi->start = start;
    int64_t t[6] = {0, 6, 10, 10, 16, 20};
    memcpy(ts, t, sizeof t);
    pi->type_start = ts;
}

static void fanouts_are_parsed_once_into_a_spec(void **state)
{
    (void)state;
    halo_plan_fanouts f;
    assert_int_equal(halo_plan_fanouts_parse("5,4", "--fanouts", NULL, &f), 0);
    assert_int_equal(f.layers, 2);
    assert_int_equal(f.fanouts[0], 5);
    assert_int_equal(f.fanouts[1], 4);
    assert_true(halo_plan_fanouts_parse("5,x", "--eval-fanouts", NULL, &f) < 0);
    assert_non_null(strstr(halo_errmsg(), "--eval-fanouts"));

    halo_partinfo pi;
    int64_t start[3], ts[6];
    typed_info(&pi, start, ts);
    assert_int_equal(halo_plan_fanouts_parse("cites=4,*=2;*=3", "--fanouts", &pi, &f), 0);
    assert_int_equal(f.layers, 2);
    assert_int_equal(f.rfan[0][0], 4);
    assert_int_equal(f.rfan[0][1], 2);
    assert_int_equal(f.rfan[1][0], 3);
    assert_int_equal(f.rfan[1][1], 3);
    assert_int_equal(f.fanouts[0], 4); /* the layer's largest */
    assert_int_equal(f.fanouts[1], 3);
    assert_true(halo_plan_fanouts_parse("nope=4", "--fanouts", &pi, &f) < 0);
    assert_true(halo_plan_fanouts_parse("nope=4", "--eval-fanouts", &pi, &f) < 0);
    assert_non_null(strstr(halo_errmsg(), "--eval-fanouts"));
}

static void epoch_fanouts_take_the_option_else_the_hook(void **state)
{
    (void)state;
    halo_policy *pol = NULL;
    assert_int_equal(open_src(pol_src, &pol), 0);
    halo_partinfo pi;
    memset(&pi, 0, sizeof pi);
    halo_policy_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    halo_plan_fanouts given, out;
    assert_int_equal(halo_plan_fanouts_parse("6,5", "--fanouts", NULL, &given), 0);
    assert_int_equal(halo_plan_epoch_fanouts(&given, &pi, pol, &ctx, 2, &out), 0);
    assert_int_equal(out.fanouts[0], 6);
    assert_int_equal(out.fanouts[1], 5);
    memset(&given, 0, sizeof given); /* not given: the hook */
    assert_int_equal(halo_plan_epoch_fanouts(&given, &pi, pol, &ctx, 0, &out), 0);
    assert_int_equal(out.layers, 2);
    assert_int_equal(out.fanouts[0], 3);
    assert_int_equal(out.fanouts[1], 4);
    ctx.epoch = 1; /* three layers where the model has two: the policy's error */
    assert_true(halo_plan_epoch_fanouts(NULL, &pi, pol, &ctx, 2, &out) < 0);
    assert_non_null(strstr(halo_errmsg(), "fanout returned 3 layers at epoch 1"));
    halo_policy_close(pol);
}

static void pipeline_asks_and_settles(void **state)
{
    (void)state;
    halo_policy *pol = NULL;
    assert_int_equal(open_src(pol_src, &pol), 0);
    halo_policy_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    int d, th;
    assert_int_equal(halo_plan_pipeline_ask(pol, &ctx, -1, 0, &d, &th), 0);
    assert_int_equal(d, 2);
    assert_int_equal(th, 3);
    assert_int_equal(halo_plan_pipeline_ask(pol, &ctx, 5, 1, &d, &th), 0); /* --depth, -threads */
    assert_int_equal(d, 5);
    assert_int_equal(th, 1);
    halo_policy_close(pol);

    halo_plan_pipeline_settle(2, 3, &d, &th); /* threads at most the depth */
    assert_int_equal(d, 2);
    assert_int_equal(th, 2);
    halo_plan_pipeline_settle(0, 4, &d, &th); /* depth 0: one thread */
    assert_int_equal(d, 0);
    assert_int_equal(th, 1);
    halo_plan_pipeline_settle(1000, 1000, &d, &th);
    assert_int_equal(d, HALO_PIPE_MAX_DEPTH);
    assert_true(th <= HALO_PIPE_MAX_THREADS && th <= d);
}

static void node_types_and_their_counts(void **state)
{
    (void)state;
    halo_partinfo pi;
    int64_t start[3], ts[6];
    typed_info(&pi, start, ts);
    assert_int_equal(halo_partinfo_node_type(&pi, 0), 0);
    assert_int_equal(halo_partinfo_node_type(&pi, 5), 0);
    assert_int_equal(halo_partinfo_node_type(&pi, 6), 1);
    assert_int_equal(halo_partinfo_node_type(&pi, 15), 0);
    assert_int_equal(halo_partinfo_node_type(&pi, 16), 1);
    assert_int_equal(halo_partinfo_node_type(&pi, 19), 1);

    int32_t input[5] = {1, 7, 12, 17, 19};
    uint8_t et[3] = {0, 1, 1};
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    mb.layers = 1;
    mb.num_input = 5;
    mb.input = input;
    mb.blocks[0].num_edges = 3;
    mb.blocks[0].etype = et;
    halo_epoch_stats s;
    memset(&s, 0, sizeof s);
    halo_plan_count_types(&pi, 0, &mb, &s); /* rank 0 owns 0..9 */
    assert_int_equal(s.input_nodes_type[0], 2);  /* 1, 12 */
    assert_int_equal(s.input_nodes_type[1], 3);  /* 7, 17, 19 */
    assert_int_equal(s.remote_nodes_type[0], 1); /* 12 */
    assert_int_equal(s.remote_nodes_type[1], 2); /* 17, 19 */
    assert_int_equal(s.sampled_edges_rel[0], 1);
    assert_int_equal(s.sampled_edges_rel[1], 2);

    uint8_t fl[HALO_MAX_NTYPES];
    assert_true(halo_plan_featless(&pi, fl));
    assert_int_equal(fl[0], 0);
    assert_int_equal(fl[1], 1);
    pi.feat_dim = 0; /* no input column: no embeddings */
    assert_false(halo_plan_featless(&pi, fl));
    assert_int_equal(halo_plan_relations(0, 2), 2);
    assert_int_equal(halo_plan_relations(0, 0), 1);
    assert_int_equal(halo_plan_relations(5, 2), 5);
}

static void last_epoch_carries_the_counts(void **state)
{
    (void)state;
    halo_epoch_stats s;
    memset(&s, 0, sizeof s);
    s.epoch = 3, s.batches = 7, s.input_nodes = 11, s.sampled_edges = 13, s.remote_nodes = 17;
    s.cache_hits = 19, s.cache_misses = 23, s.bytes_remote = 29, s.time_s = 1.5;
    halo_policy_stats le;
    memset(&le, 0xff, sizeof le);
    halo_plan_last_epoch(&s, 31, 0.25, &le);
    assert_int_equal(le.epoch, 3);
    assert_int_equal(le.batch, 0);
    assert_int_equal(le.batches, 7);
    assert_int_equal(le.seeds, 31);
    assert_int_equal(le.input_nodes, 11);
    assert_int_equal(le.sampled_edges, 13);
    assert_int_equal(le.remote_nodes, 17);
    assert_int_equal(le.cache_hits, 19);
    assert_int_equal(le.cache_misses, 23);
    assert_int_equal(le.bytes_remote, 29);
    assert_true(le.loss == 0.25 && le.time_s == 1.5);
}

/* A look-ahead source: batch b of epoch e has inputs {100 e + b, 5, 100 e + b + 50}. */
typedef struct fake_src {
    halo_minibatch mb; /* the batch handed out */
    int32_t in[3];     /* its inputs */
    int calls;         /* batches asked for */
} fake_src;

static int fake_sample(void *arg, int epoch, int64_t b, const halo_minibatch **mb)
{
    fake_src *f = arg;
    f->in[0] = (int32_t)(100 * epoch + b);
    f->in[1] = 5;
    f->in[2] = (int32_t)(100 * epoch + b + 50);
    f->mb.num_input = 3;
    f->mb.input = f->in;
    f->calls++;
    *mb = &f->mb;
    return 0;
}

static void lookahead_keeps_the_remote_inputs_of_every_batch(void **state)
{
    (void)state;
    fake_src f;
    memset(&f, 0, sizeof f);
    /* epochs 1..2 of 3 batches; own ids [0, 10): id 5 is local, the rest remote */
    halo_plan_batches src = {fake_sample, &f, 1, 3, 3, 0, 10};
    halo_cache_future *fut = halo_cache_future_new();
    assert_int_equal(halo_plan_lookahead(&src, fut), 0);
    assert_int_equal(f.calls, 6);
    assert_int_equal(halo_cache_future_steps(fut), 6);
    halo_cache_future_free(fut);
}

/* A draw over a chain graph v -> v + 1 (mod 50): each frontier node's neighbour is the next
 * id, relation = its parity; layers recorded in the order they are asked. */
typedef struct chain {
    int64_t off[64];    /* offsets of the last draw */
    int32_t nbrs[64];   /* neighbours */
    uint8_t et[64];     /* relations */
    int order[8], n;    /* layers asked, in order */
} chain;

static int chain_draw(void *arg, int layer, const int32_t *dst, int32_t num_dst,
                      halo_sample_drawn *out)
{
    chain *c = arg;
    c->order[c->n++] = layer;
    c->off[0] = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        c->nbrs[i] = (dst[i] + 1) % 50;
        c->et[i] = (uint8_t)(c->nbrs[i] % 2);
        c->off[i + 1] = i + 1;
    }
    out->off = c->off;
    out->nbrs = c->nbrs;
    out->etype = c->et;
    return 0;
}

static void frontier_loop_runs_layers_down_to_the_input(void **state)
{
    (void)state;
    halo_sampler *s = halo_sampler_new();
    chain c;
    memset(&c, 0, sizeof c);
    int32_t seeds[2] = {3, 10};
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    assert_int_equal(halo_sample_frontier(s, 3, chain_draw, &c, seeds, 2, &mb), 0);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.order[0], 2);
    assert_int_equal(c.order[2], 0);
    assert_int_equal(mb.num_seeds, 2);
    /* each layer adds the next ids: 2 seeds, then 4, then 6, then 8 inputs */
    assert_int_equal(mb.blocks[2].num_src, 4);
    assert_int_equal(mb.blocks[1].num_src, 6);
    assert_int_equal(mb.num_input, 8);
    assert_int_equal(mb.blocks[0].num_dst, 6);
    assert_non_null(mb.blocks[0].etype);
    for (int64_t e = 0; e < mb.blocks[2].num_edges; e++) {
        /* the relation of an edge is its source's parity */
        assert_int_equal(mb.blocks[2].etype[e],
                         mb.blocks[2].src_gid[mb.blocks[2].indices[e]] % 2);
    }
    assert_true(halo_sample_frontier(s, 0, chain_draw, &c, seeds, 2, &mb) < 0);
    halo_sample_free(&mb);
    halo_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fanouts_are_parsed_once_into_a_spec),
        cmocka_unit_test(epoch_fanouts_take_the_option_else_the_hook),
        cmocka_unit_test(pipeline_asks_and_settles),
        cmocka_unit_test(node_types_and_their_counts),
        cmocka_unit_test(last_epoch_carries_the_counts),
        cmocka_unit_test(lookahead_keeps_the_remote_inputs_of_every_batch),
        cmocka_unit_test(frontier_loop_runs_layers_down_to_the_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
