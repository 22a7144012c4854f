/* Unit tests of the hooks: each hook's validation with good and bad returns, the defaults of
 * missing hooks, the context objects, parameters, error messages, limits and worker states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mem.h"
#include "policy/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small rank: 6 halo nodes, a cache of 4 slots holding 8 and 23. */
static int32_t halo_ids[6] = {3, 8, 15, 16, 23, 42};
static int32_t halo_deg[6] = {4, 9, 1, 7, 2, 5};
static int32_t halo_owner[6] = {1, 1, 2, 2, 3, 3};
static int64_t halo_misses[6];
static double halo_score[6];
static int32_t slot_id[4];
static int64_t slot_hits[4], slot_last[4], slot_ins[4];
static double slot_score[4];
static int32_t hit_slots[1] = {1};
static int32_t miss_halo[2] = {0, 5};
static int32_t input[5] = {0, 1, 23, 3, 42};
static int64_t indptr[7] = {0, 1, 2, 4, 4, 5, 6};
static int32_t indices[6] = {1, 2, 0, 3, 5, 4};

static char path[512];

static void fill(halo_policy_ctx *c)
{
    memset(c, 0, sizeof *c);
    slot_id[0] = 8;
    slot_id[1] = 23;
    slot_id[2] = -1;
    slot_id[3] = -1;
    c->rank = 3;
    c->ranks = 4;
    c->epoch = 2;
    c->batch = 17;
    c->step = 57;
    c->graph.nodes = 6;
    c->part.parts = 4;
    c->halo = (halo_policy_halo_view){.n = 6,
                                      .ids = halo_ids,
                                      .deg = halo_deg,
                                      .owner = halo_owner,
                                      .misses = halo_misses,
                                      .score = halo_score};
    c->cache = (halo_policy_cache_view){.capacity = 4,
                                        .used = 2,
                                        .id = slot_id,
                                        .hits = slot_hits,
                                        .last_hit = slot_last,
                                        .inserted = slot_ins,
                                        .score = slot_score};
    c->last_batch.cache_hits = 11;
    c->last_epoch.loss = 0.5;
}

static const halo_policy_batch batch = {2, 17, 57, 5, input, 1, hit_slots, 2, miss_halo};
static const halo_policy_graph_info ginfo = {"tiny", 6, 6, 4, 3, 2, 2, indptr, indices};

static void write_file(const char *src)
{
    const char *dir = getenv("HALO_TEST_TMP");
    snprintf(path, sizeof path, "%s/hooks_%d.lua", dir ? dir : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(src, f);
    fclose(f);
}

static int open_src(const char *src, halo_policy **p)
{
    write_file(src);
    halo_policy_opts o = {.path = path, .rank = -1};
    return halo_policy_open(&o, p);
}

/* Outputs of every hook for one policy. */
typedef struct outs {
    halo_policy_partition_choice part;
    int fan[HALO_POLICY_MAX_LAYERS], layers;
    int depth, threads;
    int32_t init_ids[6];
    halo_policy_cache_plan plan;
    int32_t evict[4], admit[4];
    halo_policy_cache_decision dec;
} outs;

/* Calls hook h of a policy whose source is `return { <name> = function(ctx, b) <body> end }`. */
static int call_body(int h, const char *body, outs *o)
{
    char src[4096];
    snprintf(src, sizeof src, "return {\n    %s = function(%s)\n        %s\n    end,\n}\n",
             halo_policy_hook_name(h), h == HALO_POLICY_PARTITION ? "g" : "ctx, b", body);
    halo_policy *p;
    int rc = open_src(src, &p);
    if (rc < 0) {
        return rc;
    }
    halo_policy_ctx c;
    fill(&c);
    memset(o, 0, sizeof *o);
    o->plan.ids = o->init_ids;
    o->dec.evict = o->evict;
    o->dec.admit = o->admit;
    switch (h) {
    case HALO_POLICY_PARTITION: rc = halo_policy_partition(p, &ginfo, &o->part); break;
    case HALO_POLICY_FANOUT:
        rc = halo_policy_fanout(p, &c, o->fan, HALO_POLICY_MAX_LAYERS, &o->layers);
        break;
    case HALO_POLICY_PIPELINE: rc = halo_policy_pipeline(p, &c, &o->depth, &o->threads); break;
    case HALO_POLICY_CACHE_INIT: rc = halo_policy_cache_init(p, &c, &o->plan); break;
    case HALO_POLICY_CACHE_BATCH: rc = halo_policy_cache_batch(p, &c, &batch, &o->dec); break;
    default: rc = halo_policy_epoch_end(p, &c); break;
    }
    halo_policy_close(p);
    return rc;
}

/* A bad return: HALO_ELUA with a message naming the file, line 2 (where the hook is defined),
 * the hook, and containing want. */
static void expect_bad(int h, const char *body, const char *want)
{
    outs o;
    int rc = call_body(h, body, &o);
    char head[700];
    snprintf(head, sizeof head, "%s:2: hook %s: ", path, halo_policy_hook_name(h));
    const char *msg = halo_errmsg();
    if (rc != HALO_ELUA || strncmp(msg, head, strlen(head)) != 0 || strstr(msg, want) == NULL) {
        fail_msg("%s returning `%s`: want an error starting '%s' containing '%s', got %d: %s",
                 halo_policy_hook_name(h), body, head, want, rc, msg);
    }
    if (h != HALO_POLICY_PARTITION && strstr(msg, "rank 3, epoch 2") == NULL) {
        fail_msg("no moment in: %s", msg);
    }
    if (h == HALO_POLICY_CACHE_BATCH && strstr(msg, "batch 17") == NULL) {
        fail_msg("no batch in: %s", msg);
    }
}

static void expect_good(int h, const char *body, outs *o)
{
    int rc = call_body(h, body, o);
    if (rc != 0) {
        fail_msg("%s returning `%s` failed: %s", halo_policy_hook_name(h), body, halo_errmsg());
    }
}

static void partition_validates_its_choice(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_PARTITION,
                "return {method = 'multilevel', parts = 8, machines = 2, constraints = "
                "{'edges', 'nodes'}, imbalance = 1.1, objective = 'vol', seed = 5}",
                &o);
    assert_int_equal(o.part.method, HALO_POLICY_MULTILEVEL);
    assert_int_equal(o.part.parts, 8);
    assert_int_equal(o.part.machines, 2);
    assert_int_equal(o.part.nconstraints, 2);
    assert_int_equal(o.part.constraints[0], HALO_POLICY_BAL_EDGES);
    assert_int_equal(o.part.constraints[1], HALO_POLICY_BAL_NODES);
    assert_true(o.part.imbalance == 1.1);
    assert_int_equal(o.part.objective, HALO_POLICY_VOL);
    assert_int_equal(o.part.seed, 5);
    expect_good(HALO_POLICY_PARTITION, "return {}", &o); /* defaults, parts from g.parts */
    assert_int_equal(o.part.method, HALO_POLICY_METIS);
    assert_int_equal(o.part.parts, 2);
    assert_int_equal(o.part.nconstraints, 2);
    /* custom: node v goes to (v + in-degree) % parts, computed with vector methods */
    expect_good(HALO_POLICY_PARTITION,
                "local deg = g.indptr:slice(1):sub(g.indptr:slice(0, g.nodes))\n"
                "local t = deg:add(halo.range(g.nodes, 'int64')):to_table()\n"
                "for i = 1, #t do t[i] = t[i] % g.parts end\n"
                "return {method = 'custom', assign = t}",
                &o);
    assert_int_equal(o.part.method, HALO_POLICY_CUSTOM);
    assert_non_null(o.part.assign);
    for (int v = 0; v < 6; v++) {
        assert_int_equal(o.part.assign[v], (v + (indptr[v + 1] - indptr[v])) % 2);
    }
    halo_free(o.part.assign);
    expect_bad(HALO_POLICY_PARTITION,
               "return {method = 'custom', parts = 2, assign = halo.array('int32', g.nodes)}",
               "assign leaves part 1 of 2 without a node");
    expect_bad(HALO_POLICY_PARTITION,
               "return {method = 'custom', parts = 3, assign = {0, 0, 2, 2, 0, 2}}",
               "assign leaves part 1 of 3 without a node");
    expect_good(HALO_POLICY_PARTITION,
                "return {method = 'custom', parts = 3, assign = {0, 1, 2, 2, 0, 2}}", &o);
    halo_free(o.part.assign);
    expect_bad(HALO_POLICY_PARTITION, "return {method = 'kmeans'}",
               "method is \"kmeans\", expected one of metis, multilevel, random, stream, custom");
    expect_bad(HALO_POLICY_PARTITION, "return {constraints = {'nodes', 'nodes'}}", "twice");
    expect_bad(HALO_POLICY_PARTITION, "return {constraints = {'weight'}}",
               "constraints[1] is \"weight\"");
    expect_bad(HALO_POLICY_PARTITION, "return {constraints = 'nodes'}", "expected a list");
    expect_bad(HALO_POLICY_PARTITION, "return {imbalance = 0.5}", "imbalance is 0.5");
    expect_bad(HALO_POLICY_PARTITION, "return {objective = 'edges'}", "objective is \"edges\"");
    expect_bad(HALO_POLICY_PARTITION, "return {parts = 0}", "parts is 0");
    expect_bad(HALO_POLICY_PARTITION, "return {parts = 6, machines = 4}", "does not divide");
    expect_bad(HALO_POLICY_PARTITION, "return {method = 'custom'}", "assign is missing");
    expect_bad(HALO_POLICY_PARTITION, "return {method = 'custom', assign = {0, 1}}",
               "assign has 2 entries, expected one per node (6)");
    expect_bad(HALO_POLICY_PARTITION, "return {method = 'custom', assign = {0, 1, 2, 0, 1, 0}}",
               "assign[3] is 2, expected an integer in [0, 1]");
    expect_bad(HALO_POLICY_PARTITION, "return {assign = {0, 0, 0, 0, 0, 0}}", "use method");
    expect_bad(HALO_POLICY_PARTITION, "return {metod = 'metis'}", "unknown field 'metod'");
    expect_bad(HALO_POLICY_PARTITION, "return 'metis'", "returned string, expected a table");
}

static void fanout_validates_layers(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_FANOUT, "return {10, 25}", &o);
    assert_int_equal(o.layers, 2);
    assert_int_equal(o.fan[0], 10);
    assert_int_equal(o.fan[1], 25);
    expect_good(HALO_POLICY_FANOUT, "return halo.from_table('int64', {-1, 5, 3.0})", &o);
    assert_int_equal(o.layers, 3);
    assert_int_equal(o.fan[0], -1);
    assert_int_equal(o.fan[2], 3);
    expect_bad(HALO_POLICY_FANOUT, "return {'ten', 25}", "fanouts[1] is a string (\"ten\")");
    expect_bad(HALO_POLICY_FANOUT, "return {10, -2}",
               "fanouts[2] is -2, expected an integer in [-1,");
    expect_bad(HALO_POLICY_FANOUT, "return {10, 2.5}", "fanouts[2] is not an integer");
    expect_bad(HALO_POLICY_FANOUT, "return {}", "empty list");
    expect_bad(HALO_POLICY_FANOUT, "return nil", "returned nil");
    expect_bad(HALO_POLICY_FANOUT, "return '10,25'", "fanouts is string");
    expect_bad(HALO_POLICY_FANOUT, "return {1, 1, 1, 1, 1, 1, 1, 1, 1}", "9 entries, at most 8");
    expect_bad(HALO_POLICY_FANOUT, "return halo.array('float32', 2)", "float32 array");
    expect_bad(HALO_POLICY_FANOUT, "return {10, 25, x = 5}",
               "fanouts has a key \"x\" besides its 2 list entries");
    expect_bad(HALO_POLICY_FANOUT, "return {[1] = 10, ['2'] = 25}",
               "fanouts has a key \"2\" besides its 1 list entries");
    expect_bad(HALO_POLICY_FANOUT, "return {10, [4] = 25}", "fanouts has a key 4 besides");
}

static void pipeline_validates_depth_and_threads(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_PIPELINE, "return {depth = 2, sampler_threads = 4}", &o);
    assert_int_equal(o.depth, 2);
    assert_int_equal(o.threads, 4);
    expect_good(HALO_POLICY_PIPELINE, "return {sampler_threads = 3}", &o);
    assert_int_equal(o.depth, 0);
    assert_int_equal(o.threads, 3);
    expect_good(HALO_POLICY_PIPELINE, "return 1", &o);
    assert_int_equal(o.depth, 1);
    assert_int_equal(o.threads, 1);
    expect_bad(HALO_POLICY_PIPELINE, "return {depth = -1}", "depth is -1");
    expect_bad(HALO_POLICY_PIPELINE, "return {depth = '1'}", "depth is a string");
    expect_bad(HALO_POLICY_PIPELINE, "return {depth = 1, threads = 2}", "unknown field 'threads'");
    expect_bad(HALO_POLICY_PIPELINE, "return {sampler_threads = 0}", "sampler_threads is 0");
    expect_bad(HALO_POLICY_PIPELINE, "return true", "returned boolean");
}

static void cache_init_validates_capacity_and_ids(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_CACHE_INIT,
                "local _, top = ctx.halo.deg:topk(3)\n"
                "ctx.halo.score:fill(0):set_at(top, -1)\n"
                "return {capacity = 4, ids = ctx.halo.ids:gather(top), score = 1.5}",
                &o);
    assert_int_equal(o.plan.capacity, 4);
    assert_int_equal(o.plan.n_ids, 3);
    assert_int_equal(o.plan.ids[0], 8);  /* degree 9 */
    assert_int_equal(o.plan.ids[1], 16); /* degree 7 */
    assert_int_equal(o.plan.ids[2], 42); /* degree 5 */
    assert_true(o.plan.score == 1.5);
    assert_true(halo_score[1] == -1 && halo_score[3] == -1 && halo_score[5] == -1);
    assert_true(halo_score[0] == 0 && halo_score[2] == 0 && halo_score[4] == 0);
    expect_good(HALO_POLICY_CACHE_INIT, "return {capacity = 0}", &o);
    assert_int_equal(o.plan.capacity, 0);
    expect_bad(HALO_POLICY_CACHE_INIT, "return {capacity = 7}", "capacity is 7");
    expect_bad(HALO_POLICY_CACHE_INIT, "return {ids = {3}}", "no capacity");
    expect_bad(HALO_POLICY_CACHE_INIT, "return {capacity = 2, ids = {3, 9}}",
               "ids lists 9, which is not a halo node of this rank");
    expect_bad(HALO_POLICY_CACHE_INIT, "return {capacity = 3, ids = {3, 8, 3}}",
               "ids lists node 3 twice");
    expect_bad(HALO_POLICY_CACHE_INIT, "return {capacity = 1, ids = {3, 8}}",
               "ids has 2 entries, at most 1");
    expect_bad(HALO_POLICY_CACHE_INIT, "return {capacity = 1, score = 'high'}", "score is string");
}

static void cache_batch_validates_slots_and_ids(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_CACHE_BATCH, "return nil", &o);
    assert_int_equal(o.dec.n_evict, 0);
    assert_int_equal(o.dec.n_admit, 0);
    /* slot 0 holds 8: evict it, admit 3 there and 42 into a free slot */
    expect_good(HALO_POLICY_CACHE_BATCH, "return {evict = {0}, admit = {3, 42}}", &o);
    assert_int_equal(o.dec.n_evict, 1);
    assert_int_equal(o.dec.evict[0], 0);
    assert_int_equal(o.dec.n_admit, 2);
    assert_int_equal(o.dec.admit[0], 3);
    assert_int_equal(o.dec.admit[1], 42);
    /* re-admitting the evicted node is allowed; arrays work like tables */
    expect_good(HALO_POLICY_CACHE_BATCH,
                "return {evict = halo.from_table('int32', {0}), admit = ctx.halo.ids:gather("
                "b.miss_halo)}",
                &o);
    assert_int_equal(o.dec.n_admit, 2);
    assert_int_equal(o.dec.admit[1], 42);
    expect_good(HALO_POLICY_CACHE_BATCH, "return {evict = {0}, admit = {8}}", &o);
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {evict = {4}}",
               "evict[1] is 4, expected an integer in [0, 3]");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {evict = {0, 0}}", "evict lists slot 0 twice");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {evict = {2}}",
               "evict lists slot 2, which is empty");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {admit = {9}}",
               "admit lists 9, which is not a halo node");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {admit = {23}}",
               "admit lists 23, which is already in the cache");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {admit = {3, 15, 16}}",
               "admit has 3 ids but only 2 slots are free after evicting 0");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {admit = {3, 3}}", "lists node 3 twice");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return {evict = {0}, admt = {3}}", "unknown field 'admt'");
    expect_bad(HALO_POLICY_CACHE_BATCH, "return 5", "returned number, expected a table");
}

static void epoch_end_returns_nothing(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_EPOCH_END, "assert(ctx.last_epoch.loss == 0.5)", &o);
    expect_bad(HALO_POLICY_EPOCH_END, "return 1", "returned a number, it should return nothing");
}

static void missing_hooks_take_the_defaults(void **state)
{
    (void)state;
    halo_policy *p;
    assert_int_equal(open_src("return {}", &p), 0);
    assert_int_equal(halo_policy_hooks(p), 0u);
    halo_policy_ctx c;
    fill(&c);
    outs o;
    memset(&o, 0, sizeof o);
    assert_int_equal(halo_policy_fanout(p, &c, o.fan, HALO_POLICY_MAX_LAYERS, &o.layers), 0);
    assert_int_equal(o.layers, 2);
    assert_int_equal(o.fan[0], 10);
    assert_int_equal(o.fan[1], 25);
    assert_int_equal(halo_policy_pipeline(p, &c, &o.depth, &o.threads), 0);
    assert_int_equal(o.depth, 0);
    assert_int_equal(o.threads, 1);
    o.plan.ids = o.init_ids;
    assert_int_equal(halo_policy_cache_init(p, &c, &o.plan), 0);
    assert_int_equal(o.plan.capacity, 0);
    o.dec.n_evict = 9;
    assert_int_equal(halo_policy_cache_batch(p, &c, &batch, &o.dec), 0);
    assert_int_equal(o.dec.n_evict, 0);
    assert_int_equal(halo_policy_epoch_end(p, &c), 0);
    assert_int_equal(halo_policy_partition(p, &ginfo, &o.part), 0);
    assert_int_equal(o.part.method, HALO_POLICY_METIS);
    assert_int_equal(o.part.parts, 2);
    assert_true(o.part.imbalance == 1.05);
    halo_policy_close(p);
    /* the built-in defaults (no file) too */
    halo_policy_opts opts = {.path = NULL, .rank = -1};
    assert_int_equal(halo_policy_open(&opts, &p), 0);
    assert_string_equal(halo_policy_name(p), "default");
    assert_int_equal(halo_policy_fanout(p, &c, o.fan, HALO_POLICY_MAX_LAYERS, &o.layers), 0);
    assert_int_equal(o.fan[1], 25);
    halo_policy_close(p);
}

/* The context objects show the caller's values and arrays, zero-copy, and refuse writes. */
/* The fanout hook on a typed graph: numbers and relation tables become a spec (keys in byte
 * order, numbers as "*=N"); the typed context fields show the caller's names. */
static void typed_fanout_spec_and_context(void **state)
{
    (void)state;
    static const char *const types[] = {"paper", "author"};
    static const char *const rels[] = {"cites", "writes", "rev_writes"};
    static const int32_t ntype[6] = {0, 1, 1, 0, 0, 1};
    halo_policy_ctx c;
    fill(&c);
    c.graph.ntypes = 2;
    c.graph.node_types = types;
    c.graph.nrels = 3;
    c.graph.relations = rels;
    c.graph.target_type = "paper";
    c.halo.ntype = ntype;
    struct {
        const char *body, *spec; /* spec NULL: the hook fails with body's error in `err` */
        const char *err;
    } cases[] = {
        {"return { { writes = 3, cites = 5, ['*'] = -1 }, 7 }", "*=-1,cites=5,writes=3;*=7", NULL},
        {"return { 10, 25 }", "*=10;*=25", NULL},
        {"assert(#ctx.graph.relations == 3 and ctx.graph.relations[2] == 'writes')\n"
         "assert(ctx.graph.node_types[1] == 'paper' and ctx.graph.target_type == 'paper')\n"
         "assert(ctx.graph.nrels == 3 and ctx.graph.ntypes == 2)\n"
         "assert(ctx.halo.ntype:get(1) == 1 and ctx.halo.ntype:sum() == 3)\n"
         "return { { [ctx.graph.relations[3]] = 2 } }",
         "rev_writes=2", NULL},
        {"return { { ['cites=1;x'] = 5 } }", NULL, "fanouts[1]: 'cites=1;x' is not a relation name"},
        {"return { { [3] = 5 } }", NULL, "fanouts[1] has a number key"},
        {"return { 5, { cites = 'ten' } }", NULL, "fanouts[2].cites is a string"},
        {"return { {} }", NULL, "fanouts[1] is an empty table"},
        {"return { 1, 2, 3, 4, 5, 6, 7, 8, 9 }", NULL, "at most 8 allowed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[2048];
        snprintf(src, sizeof src, "return {\n    fanout = function(ctx)\n        %s\n    end,\n}\n",
                 cases[i].body);
        halo_policy *p;
        assert_int_equal(open_src(src, &p), 0);
        char spec[256];
        int layers = 0;
        int rc = halo_policy_fanout_spec(p, &c, spec, sizeof spec, HALO_POLICY_MAX_LAYERS, &layers);
        if (cases[i].spec != NULL) {
            if (rc != 0) {
                fail_msg("case %zu: %s", i, halo_errmsg());
            }
            assert_string_equal(spec, cases[i].spec);
            int want = 1;
            for (const char *q = cases[i].spec; *q; q++) {
                want += *q == ';';
            }
            assert_int_equal(layers, want);
        } else {
            assert_int_equal(rc, HALO_ELUA);
            if (strstr(halo_errmsg(), cases[i].err) == NULL) {
                fail_msg("case %zu: '%s' does not say '%s'", i, halo_errmsg(), cases[i].err);
            }
        }
        halo_policy_close(p);
    }
    /* a homogeneous context: the typed fields are nil and the counts 0 */
    fill(&c);
    halo_policy *p;
    assert_int_equal(open_src("return { fanout = function(ctx)\n"
                              "    assert(ctx.graph.relations == nil and ctx.graph.node_types == nil)\n"
                              "    assert(ctx.halo.ntype == nil and ctx.graph.nrels == 0)\n"
                              "    assert(ctx.graph.target_type == nil)\n"
                              "    return { 4, 5 } end }\n",
                              &p),
                     0);
    int fan[HALO_POLICY_MAX_LAYERS], layers = 0;
    if (halo_policy_fanout(p, &c, fan, HALO_POLICY_MAX_LAYERS, &layers) != 0) {
        fail_msg("%s", halo_errmsg());
    }
    assert_int_equal(layers, 2);
    halo_policy_close(p);
}

static void context_objects_show_the_callers_values(void **state)
{
    (void)state;
    outs o;
    expect_good(HALO_POLICY_FANOUT,
                "assert(ctx.rank == 3 and ctx.ranks == 4 and ctx.epoch == 2 and ctx.batch == 17)\n"
                "assert(ctx.step == 57 and ctx.graph.nodes == 6 and ctx.part.parts == 4)\n"
                "assert(ctx.halo.n == 6 and ctx.halo.ids:get(5) == 42 and #ctx.halo.deg == 6)\n"
                "assert(ctx.halo.owner:sum() == 12 and ctx.cache.capacity == 4)\n"
                "assert(ctx.cache.id:get(1) == 23 and ctx.last_batch.cache_hits == 11)\n"
                "assert(ctx.cache.id:type() == 'int32' and ctx.cache.hits:type() == 'int64')\n"
                "assert(ctx.cache.score:type() == 'float64' and tostring(ctx.halo) == 'ctx.halo')\n"
                "assert(not pcall(function() return ctx.nosuch end))\n"
                "assert(not pcall(function() ctx.halo.ids:set(0, 1) end))\n"
                "ctx.cache.score:fill(0.25)\n"
                "return {ctx.halo.ids:get(0), #ctx.cache.id}",
                &o);
    assert_int_equal(o.fan[0], 3);
    assert_int_equal(o.fan[1], 4);
    assert_true(slot_score[3] == 0.25);
    assert_int_equal(call_body(HALO_POLICY_CACHE_BATCH, "return ctx.halo.idz", &o), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua:3: ctx.halo has no field 'idz' (fields: n, ids, "
                                          "deg, owner, misses, ntype, score) (hook cache_batch"));
    expect_good(HALO_POLICY_CACHE_BATCH,
                "assert(b.n_input == 5 and b.input:get(4) == 42 and b.hit_slots:get(0) == 1)\n"
                "assert(b.miss_halo:sum() == 5 and b.epoch == 2 and b.step == 57)",
                &o);
    expect_good(HALO_POLICY_PARTITION,
                "assert(g.name == 'tiny' and g.nodes == 6 and #g.indptr == 7 and "
                "g.indices:get(5) == 4 and g.params ~= nil)\n"
                "return {}",
                &o);
}

/* A runtime error names file:line, the hook and the moment, with an indented traceback; a view
 * kept past its call raises an error. */
static void runtime_errors_name_place_and_moment(void **state)
{
    (void)state;
    halo_policy *p;
    const char *src =
        "local kept\n"
        "local function helper(t)\n"
        "    return t.missing.field\n"
        "end\n"
        "return {\n"
        "    cache_batch = function(ctx, b) return helper({}) end,\n"
        "    cache_init = function(ctx) kept = ctx.halo.ids; return {capacity = 1} end,\n"
        "    fanout = function(ctx) return {kept:len()} end,\n"
        "}\n";
    assert_int_equal(open_src(src, &p), 0);
    halo_policy_ctx c;
    fill(&c);
    outs o;
    memset(&o, 0, sizeof o);
    o.dec.evict = o.evict;
    o.dec.admit = o.admit;
    assert_int_equal(halo_policy_cache_batch(p, &c, &batch, &o.dec), HALO_ELUA);
    char want[1400];
    snprintf(want, sizeof want,
             "%s:3: attempt to index a nil value (field 'missing') (hook cache_batch, rank 3, "
             "epoch 2, batch 17)",
             path);
    if (strcmp(halo_errmsg(), want) != 0) {
        fail_msg("got:\n%s\nwant:\n%s", halo_errmsg(), want);
    }
    o.plan.ids = o.init_ids;
    assert_int_equal(halo_policy_cache_init(p, &c, &o.plan), 0);
    assert_int_equal(halo_policy_fanout(p, &c, o.fan, 8, &o.layers), HALO_ELUA);
    assert_non_null(
        strstr(halo_errmsg(), ":8: ctx.halo.ids was used after its hook call returned"));
    halo_policy_close(p);
}

/* Odd error values and runaway metamethods: exactly one line, starting with the policy file and
 * the line of the error (the policy's own error function is never run). */
static void odd_errors_are_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *body; /* fanout hook's body, line 3 of the file */
        const char *want; /* after "FILE:3: " */
    } cases[] = {
        {"error(nil)", "error object is a nil value, not a string"},
        {"error({})", "error object is a table value, not a string"},
        {"error(setmetatable({}, {__tostring = function(o) while true do end end}))",
         "error object is a table value, not a string"},
        {"local mt = {}; mt.__tostring = function(o) return tostring(o) end; "
         "error(setmetatable({}, mt))",
         "error object is a table value, not a string"},
        {"error('one\\ntwo\\nthree')", "one\\ntwo\\nthree"},
        {"local x <close> = setmetatable({}, {__close = function() error({}) end}); error('first')",
         "error object is a table value, not a string"},
        {"local x <close> = setmetatable({}, {__close = function() error(nil) end}); error(nil)",
         "error object is a nil value, not a string"},
        {"local t = setmetatable({}, {}); getmetatable(t).__index = function(s, k) return s[k] end; "
         "return {t.x}",
         "C stack overflow"},
        {"local t = setmetatable({}, {}); getmetatable(t).__concat = function(a, b) return a .. b "
         "end; return {t .. 'x'}",
         "C stack overflow"},
        {"error('no place', 0)", "no place"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        outs o;
        int rc = call_body(HALO_POLICY_FANOUT, cases[i].body, &o);
        char want[800];
        snprintf(want, sizeof want, "%s:3: %s (hook fanout, rank 3, epoch 2, batch 17)", path,
                 cases[i].want);
        if (rc != HALO_ELUA || strcmp(halo_errmsg(), want) != 0) {
            fail_msg("`%s`: rc %d, got:\n%s\nwant:\n%s", cases[i].body, rc, halo_errmsg(), want);
        }
    }
}

static void load_errors_are_reported(void **state)
{
    (void)state;
    halo_policy *p;
    assert_int_equal(open_src("return {\n  fanout = function(ctx) return {1} end end\n}\n", &p),
                     HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua:2: '}' expected"));
    assert_non_null(strstr(halo_errmsg(), "(loading the policy)"));
    assert_int_equal(open_src("return 5", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), "must return a table of hooks, it returned number"));
    assert_int_equal(open_src("return {fanouts = function() end}", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), "unknown field 'fanouts'"));
    assert_int_equal(open_src("return {fanout = 5}", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), "hook 'fanout' is a number, not a function"));
    assert_int_equal(open_src("error('boom')", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua:1: boom (loading the policy)"));
    halo_policy_opts o = {.path = "/nonexistent/x.lua", .rank = -1};
    assert_int_equal(halo_policy_open(&o, &p), HALO_EIO);
    assert_non_null(strstr(halo_errmsg(), "/nonexistent/x.lua: cannot read"));
    assert_int_equal(open_src("error(nil)", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua:1: error object is a nil value, not a string "
                                          "(loading the policy)"));
    assert_int_equal(open_src("local t = {fanout = function() return {1} end}\n"
                              "return setmetatable(t, {__index = t})", &p),
                     HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua: the returned table has a metatable"));
    assert_int_equal(open_src("return {params = {f = function() end}}", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua: params.f is a function, expected a number"));
    assert_int_equal(open_src("return {params = setmetatable({}, {})}", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua: 'params' has a metatable"));
    assert_int_equal(open_src("return {params = function() end}", &p), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ".lua: 'params' is a function, not a table"));
}

static void params_are_typed_and_declared(void **state)
{
    (void)state;
    write_file("return { params = {alpha = 0.05, delta = 25, name = 'x', on = false},\n"
               "  fanout = function(ctx) local p = ctx.params\n"
               "    assert(math.type(p.delta) == 'integer' and p.on == true and p.name == 'lru')\n"
               "    return {p.delta, math.floor(p.alpha * 100)} end }\n");
    const char *sets[] = {"delta=32", "on=true", "name=lru", "alpha=0.5"};
    halo_policy_opts o = {.path = path, .params = sets, .nparams = 4, .rank = -1};
    halo_policy *p;
    assert_int_equal(halo_policy_open(&o, &p), 0);
    halo_policy_ctx c;
    fill(&c);
    int f[8], layers;
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), 0);
    assert_int_equal(f[0], 32);
    assert_int_equal(f[1], 50);
    /* a worker state of the same policy gets the same parameters */
    halo_policy *w;
    assert_int_equal(halo_policy_open_worker(p, &w), 0);
    assert_int_equal(halo_policy_fanout(w, &c, f, 8, &layers), 0);
    assert_int_equal(f[0], 32);
    halo_policy_close(w);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    halo_policy_print_params(p, m, "");
    fclose(m);
    assert_string_equal(buf, "alpha=0.5\ndelta=32\nname=lru\non=true\n");
    free(buf);
    halo_policy_close(p);
    const char *bad[][2] = {
        {"deltq=1", "does not declare a parameter 'deltq' (did you mean delta? declared: alpha, "
                    "delta, name, on)"},
        {"delta=abc", "parameter 'delta' takes a number (its default), not a string"},
        {"delta=2.5", "parameter 'delta' takes an integer"},
        {"on=1", "takes a boolean"},
        {"novalue", "expected name=value"},
    };
    for (int i = 0; i < 5; i++) {
        o.params = &bad[i][0];
        o.nparams = 1;
        int rc = halo_policy_open(&o, &p);
        if (rc != HALO_EUSAGE || strstr(halo_errmsg(), bad[i][1]) == NULL) {
            fail_msg("--set %s: got %s", bad[i][0], halo_errmsg());
        }
    }
    /* a name far from every declared one is another policy's parameter: ignored (a warning) */
    const char *other = "gamma=1";
    o.params = &other;
    assert_int_equal(halo_policy_open(&o, &p), 0);
    m = open_memstream(&buf, &len);
    halo_policy_print_params(p, m, "");
    fclose(m);
    assert_string_equal(buf, "alpha=0.05\ndelta=25\nname=x\non=false\n");
    free(buf);
    halo_policy_close(p);
}

static void budget_and_memory_limits_are_settable(void **state)
{
    (void)state;
    halo_policy *p;
    assert_int_equal(open_src("return { fanout = function(ctx) local n = 0\n"
                              "  for i = 1, ctx.step do n = n + i end\n"
                              "  local a = halo.array('float64', ctx.batch)\n"
                              "  return {1} end }\n",
                              &p),
                     0);
    halo_policy_ctx c;
    fill(&c);
    c.step = 100000;
    c.batch = 10;
    int f[8], layers;
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), 0);
    halo_policy_set_limits(p, 10000, 0);
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ":2: instruction budget of 10000 exceeded"));
    c.step = 10;
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), 0);
    /* vector work is charged too: 16 elements per instruction */
    c.batch = 1000000;
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ":3: instruction budget of 10000 exceeded"));
    halo_policy_set_limits(p, 100000000, (size_t)1 << 20);
    c.batch = 1 << 20; /* 8 MiB */
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), HALO_ELUA);
    assert_non_null(strstr(halo_errmsg(), ":3: memory limit of 1 MiB exceeded"));
    c.batch = 10;
    assert_int_equal(halo_policy_fanout(p, &c, f, 8, &layers), 0);
    assert_true(halo_policy_mem_used(p) < ((size_t)1 << 20));
    halo_policy_close(p);
}

/* `halo policy doc` lists every function the module registers and every array method: the
 * names are read from the live Lua tables, not from the registration arrays. */
static void doc_lists_every_registered_function(void **state)
{
    (void)state;
    char *doc = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&doc, &len);
    halo_policy_doc(m);
    fclose(m);
    halo_policy *p;
    halo_policy_opts o = {.path = NULL, .rank = -1};
    assert_int_equal(halo_policy_open(&o, &p), 0);
    lua_State *L = p->L;
    int names = 0;
    /* the halo module (through the loaded table; the global is a read-only proxy) */
    lua_getglobal(L, "halo");
    assert_true(lua_getmetatable(L, -1));
    lua_getfield(L, -1, "__index");
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        char want[128];
        snprintf(want, sizeof want, "halo.%s", lua_tostring(L, -2));
        if (strstr(doc, want) == NULL) {
            fail_msg("halo policy doc does not mention %s", want);
        }
        names++;
        lua_pop(L, 1);
    }
    lua_settop(L, 0);
    luaL_getmetatable(L, HALO_PA_MT);
    lua_getfield(L, -1, "__index");
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        char want1[128], want2[128];
        snprintf(want1, sizeof want1, "a:%s(", lua_tostring(L, -2));
        snprintf(want2, sizeof want2, "m:%s(", lua_tostring(L, -2));
        if (strstr(doc, want1) == NULL && strstr(doc, want2) == NULL) {
            fail_msg("halo policy doc does not mention method %s", lua_tostring(L, -2));
        }
        names++;
        lua_pop(L, 1);
    }
    lua_settop(L, 0);
    assert_true(names > 40);
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        char want[64];
        snprintf(want, sizeof want, "  %s(", halo_policy_hook_name(h));
        assert_non_null(strstr(doc, want));
    }
    halo_policy_close(p);
    free(doc);
}

/* One worker thread: its own state of the policy, many calls, a deliberate error on the way. */
typedef struct worker_arg {
    const halo_policy *pol; /* the policy to clone */
    int bad;                /* calls that failed unexpectedly */
    int errors_seen;        /* deliberate errors reported with this thread's message */
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    halo_policy *p;
    if (halo_policy_open_worker(w->pol, &p) < 0) {
        w->bad++;
        return NULL;
    }
    halo_policy_ctx c;
    memset(&c, 0, sizeof c);
    c.ranks = 1;
    c.batch = -1;
    for (int i = 0; i < 2000; i++) {
        int f[8], layers = 0;
        c.epoch = i;
        int rc = halo_policy_fanout(p, &c, f, 8, &layers);
        if (i % 100 == 99) {
            /* the policy fails on these epochs: the message is this thread's own */
            char want[64];
            snprintf(want, sizeof want, "epoch %d)", i);
            w->errors_seen += rc == HALO_ELUA && strstr(halo_errmsg(), want) != NULL;
        } else if (rc != 0 || layers != 2 || f[0] != i % 7 || f[1] != 25) {
            w->bad++;
        }
    }
    halo_policy_close(p);
    return NULL;
}

static void worker_states_run_in_parallel_threads(void **state)
{
    (void)state;
    halo_policy *p;
    assert_int_equal(open_src("local calls = 0\n"
                              "return { fanout = function(ctx)\n"
                              "  calls = calls + 1\n"
                              "  if ctx.epoch % 100 == 99 then error('planned') end\n"
                              "  return { ctx.epoch % 7, 25 } end }\n",
                              &p),
                     0);
    pthread_t t[3];
    worker_arg w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (worker_arg){p, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].bad, 0);
        assert_int_equal(w[i].errors_seen, 20);
    }
    halo_policy_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(partition_validates_its_choice),
        cmocka_unit_test(fanout_validates_layers),
        cmocka_unit_test(pipeline_validates_depth_and_threads),
        cmocka_unit_test(cache_init_validates_capacity_and_ids),
        cmocka_unit_test(cache_batch_validates_slots_and_ids),
        cmocka_unit_test(epoch_end_returns_nothing),
        cmocka_unit_test(missing_hooks_take_the_defaults),
        cmocka_unit_test(context_objects_show_the_callers_values),
        cmocka_unit_test(typed_fanout_spec_and_context),
        cmocka_unit_test(runtime_errors_name_place_and_moment),
        cmocka_unit_test(odd_errors_are_one_line),
        cmocka_unit_test(load_errors_are_reported),
        cmocka_unit_test(params_are_typed_and_declared),
        cmocka_unit_test(budget_and_memory_limits_are_settable),
        cmocka_unit_test(doc_lists_every_registered_function),
        cmocka_unit_test(worker_states_run_in_parallel_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
