/* Tools for policy authors: `halo policy check` (every hook on a synthetic rank with a small
 * cache mechanism) and `halo policy doc` (the reference, printed from the registration tables). */
#include "policy/internal.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

#include <stdlib.h>
#include <string.h>

#ifndef HALO_VERSION
#define HALO_VERSION "dev"
#endif

void halo_policy_doc(FILE *out)
{
    fprintf(out, "halo policy API %s (Lua 5.4; arrays are 0-based; see lua/README.md)\n\n",
            HALO_VERSION);
    fprintf(out, "module functions\n");
    for (const halo_policy_reg *r = halo_policy_module_funcs; r->name != NULL; r++) {
        fprintf(out, "  %-40s %s\n", r->sig, r->doc);
    }
    fprintf(out, "  %-40s %s\n", "halo.log(...)", "prints a line to halo's log (as print does)");
    fprintf(out, "  %-40s %s\n", "halo.version", "halo's version string");
    fprintf(out, "\narray methods (a: an array, m: a bool mask, idx: an int32/int64 array)\n");
    for (const halo_policy_reg *const *t = halo_policy_array_tables; *t != NULL; t++) {
        for (const halo_policy_reg *r = *t; r->name != NULL; r++) {
            fprintf(out, "  %-40s %s\n", r->sig, r->doc);
        }
    }
    fprintf(out, "  %-40s %s\n", "#a, tostring(a)", "length; a short printable form");
    fprintf(out, "\n");
    halo_policy_doc_hooks(out);
    fprintf(out,
            "\nsandbox: base (no dofile/loadfile; load takes text only), string (no dump), "
            "table, math, utf8;\n  require finds modules next to the policy and in halo's "
            "lua/;\n  per call: %lld instructions (C functions pay for their work too) and %g s "
            "of wall clock\n  ($HALO_POLICY_SECONDS); memory %zu MiB per state; text a policy "
            "prints is escaped;\n  --unsafe opens the full standard library\n",
            (long long)HALO_POLICY_DEFAULT_BUDGET, HALO_POLICY_DEFAULT_SECONDS,
            HALO_POLICY_DEFAULT_MEM >> 20);
}

/* ---- the synthetic rank of `halo policy check` ---- */

enum {
    CK_NODES = 10000,
    CK_PARTS = 4,
    CK_HALO = 2000,
    CK_EPOCHS = 2,
    CK_BATCHES = 40,
    CK_INPUT = 300
};

/* A synthetic rank: part 0 of a 10000-node graph, its halo set, and a small cache mechanism
 * that applies the policy's decisions the way the real one will. */
typedef struct world {
    halo_policy_ctx ctx;      /* what hooks see */
    int64_t *indptr;          /* [CK_NODES+1] synthetic CSR */
    int32_t *indices;         /* its sources */
    int32_t ids[CK_HALO];     /* halo ids, sorted */
    int32_t deg[CK_HALO];     /* their in-degrees */
    int32_t owner[CK_HALO];   /* their owners */
    int32_t hntype[CK_HALO];  /* typed: their node types (ctx.halo.ntype) */
    const halo_policy_check_graph *tg; /* the typed graph checked against, NULL: homogeneous */
    int64_t misses[CK_HALO];  /* misses per halo node */
    double hscore[CK_HALO];   /* ctx.halo.score */
    int32_t hot[CK_HALO];     /* halo positions by degree, highest first */
    int32_t slot_of[CK_HALO]; /* slot holding each halo node, -1 */
    int32_t *slot_id;         /* [capacity] */
    int64_t *slot_hits;       /* [capacity] */
    int64_t *slot_last;       /* [capacity] */
    int64_t *slot_ins;        /* [capacity] */
    double *slot_score;       /* [capacity] */
} world;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void world_init(world *w, const halo_policy_check_graph *tg)
{
    memset(w, 0, sizeof *w);
    w->tg = tg;
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_POLICY, 0, 0, 0);
    /* halo set: 2000 distinct ids among the 7500 nodes other parts own */
    int32_t *cand = HALO_ALLOC(int32_t, CK_NODES);
    int nc = 0;
    for (int v = CK_NODES / CK_PARTS; v < CK_NODES; v++) {
        cand[nc++] = v;
    }
    for (int i = 0; i < CK_HALO; i++) {
        int j = i + (int)halo_rng_below(&r, (uint64_t)(nc - i));
        int32_t t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
    }
    memcpy(w->ids, cand, sizeof w->ids);
    halo_free(cand);
    qsort(w->ids, CK_HALO, sizeof(int32_t), cmp_i32);
    for (int i = 0; i < CK_HALO; i++) {
        w->deg[i] = 1 + (int32_t)(400 / (1 + halo_rng_below(&r, 100)));
        w->owner[i] = w->ids[i] / (CK_NODES / CK_PARTS);
        w->hot[i] = i;
        w->slot_of[i] = -1;
    }
    /* halo positions by degree, highest first, ties by position (insertion sort: 2000 items) */
    for (int i = 1; i < CK_HALO; i++) {
        int32_t v = w->hot[i];
        int j = i;
        while (j > 0 && w->deg[w->hot[j - 1]] < w->deg[v]) {
            w->hot[j] = w->hot[j - 1];
            j--;
        }
        w->hot[j] = v;
    }
    /* a CSR of about 10 in-edges per node */
    w->indptr = HALO_ALLOC(int64_t, CK_NODES + 1);
    w->indptr[0] = 0;
    for (int v = 0; v < CK_NODES; v++) {
        w->indptr[v + 1] = w->indptr[v] + 1 + (int64_t)halo_rng_below(&r, 19);
    }
    w->indices = HALO_ALLOC(int32_t, w->indptr[CK_NODES]);
    for (int64_t e = 0; e < w->indptr[CK_NODES]; e++) {
        w->indices[e] = (int32_t)halo_rng_below(&r, CK_NODES);
    }
    halo_policy_ctx *c = &w->ctx;
    c->rank = 0;
    c->ranks = CK_PARTS;
    c->epoch = -1;
    c->epochs = CK_EPOCHS;
    c->batch = -1;
    c->batches = CK_BATCHES;
    c->batch_size = 64;
    c->graph = (halo_policy_graph_summary){
        .nodes = CK_NODES, .edges = w->indptr[CK_NODES], .feat_dim = 16, .classes = 8,
        .train_nodes = CK_NODES / 2};
    c->part = (halo_policy_part_summary){CK_PARTS, 0, CK_NODES / CK_PARTS,
                                         w->indptr[CK_NODES / CK_PARTS], CK_NODES / CK_PARTS / 2};
    c->halo = (halo_policy_halo_view){.n = CK_HALO,
                                      .ids = w->ids,
                                      .deg = w->deg,
                                      .owner = w->owner,
                                      .misses = w->misses,
                                      .score = w->hscore};
    if (tg != NULL) {
        /* the graph's names; the synthetic nodes typed in id ranges in proportion to the
           graph's type counts (types are contiguous in id order, as in a typed graph) */
        c->graph.ntypes = tg->ntypes;
        c->graph.node_types = tg->node_types;
        c->graph.nrels = tg->nrels;
        c->graph.relations = tg->relations;
        c->graph.target_type = tg->target_type;
        int64_t total = 0;
        for (int t = 0; t < tg->ntypes; t++) {
            total += tg->type_nodes[t];
        }
        for (int i = 0; i < CK_HALO; i++) {
            int64_t acc = 0;
            int t = 0;
            while (t < tg->ntypes - 1 &&
                   (int64_t)w->ids[i] * (total > 0 ? total : 1) >=
                       (acc + tg->type_nodes[t]) * CK_NODES) {
                acc += tg->type_nodes[t];
                t++;
            }
            w->hntype[i] = t;
        }
        c->halo.ntype = w->hntype;
    }
}

/* The fanout hook of epoch e: the homogeneous form, or on a typed graph the per-relation spec
 * checked against its relations (an unknown relation gets the trainer's line). Without a typed
 * graph, a hook that returns tables keyed by relation is still checked in that form, its
 * relation names unchecked. Prints what it returned (out NULL: nothing); the spec (or the plain
 * list) goes to spec. */
static int check_fanout(halo_policy *pol, world *w, FILE *out, char *spec, size_t cap)
{
    halo_policy_ctx *c = &w->ctx;
    int layers = 0;
    spec[0] = 0;
    if (w->tg == NULL) {
        int fan[HALO_POLICY_MAX_LAYERS];
        int rc = halo_policy_fanout(pol, c, fan, HALO_POLICY_MAX_LAYERS, &layers);
        if (rc == 0) {
            for (int i = 0; i < layers; i++) {
                snprintf(spec + strlen(spec), cap - strlen(spec), "%s%d", i ? "," : "", fan[i]);
            }
            if (out != NULL) {
                fprintf(out, "  %-12s -> %s (epoch %d)\n", "fanout", spec, c->epoch);
            }
            return 0;
        }
        /* tables keyed by relation? */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", halo_errmsg());
        if (halo_policy_fanout_spec(pol, c, spec, cap, HALO_POLICY_MAX_LAYERS, &layers) < 0) {
            return halo_errorf(rc, "%s", msg);
        }
        if (out != NULL) {
            fprintf(out, "  %-12s -> %s (epoch %d; per relation, a typed graph's form: relation "
                         "names are checked with --graph)\n", "fanout", spec, c->epoch);
        }
        return 0;
    }
    HALO_CHECK(halo_policy_fanout_spec(pol, c, spec, cap, HALO_POLICY_MAX_LAYERS, &layers));
    int l = w->tg->check_spec(w->tg->arg, spec);
    if (l < 0) {
        return halo_policy_fanout_spec_refused(pol, c->epoch, spec); /* the trainer's line */
    }
    if (out != NULL) {
        fprintf(out, "  %-12s -> %s (epoch %d, %d layers, relations of %s)\n", "fanout", spec,
                c->epoch, l, w->tg->source);
    }
    return 0;
}

static void world_free(world *w)
{
    halo_free(w->indptr);
    halo_free(w->indices);
    halo_free(w->slot_id);
    halo_free(w->slot_hits);
    halo_free(w->slot_last);
    halo_free(w->slot_ins);
    halo_free(w->slot_score);
}

static int64_t halo_index(const world *w, int32_t id)
{
    const int32_t *p = bsearch(&id, w->ids, CK_HALO, sizeof(int32_t), cmp_i32);
    return p ? p - w->ids : -1;
}

/* Puts halo node `pos` into slot s at step. */
static void place(world *w, int64_t s, int64_t pos, int64_t step)
{
    w->slot_id[s] = w->ids[pos];
    w->slot_of[pos] = (int32_t)s;
    w->slot_hits[s] = 0;
    w->slot_last[s] = -1;
    w->slot_ins[s] = step;
    w->ctx.cache.used++;
}

/* The partition hook on a synthetic graph of CK_NODES nodes: its choice printed. */
static int check_partition_hook(halo_policy *pol, world *w, FILE *out)
{
    halo_policy_graph_info g = {"synthetic",  CK_NODES, w->indptr[CK_NODES], 16,        8,
                                CK_NODES / 2, CK_PARTS, w->indptr,           w->indices};
    halo_policy_partition_choice pc;
    HALO_CHECK(halo_policy_partition(pol, &g, &pc));
    fprintf(out, "  %-12s -> %s, %d parts", "partition", halo_policy_method_name(pc.method),
            pc.parts);
    if (pc.machines > 0) {
        fprintf(out, " on %d machines", pc.machines);
    }
    if (pc.method == HALO_POLICY_CUSTOM) {
        int64_t count[8] = {0};
        for (int64_t v = 0; v < CK_NODES; v++) {
            count[pc.assign[v] < 8 ? pc.assign[v] : 7]++;
        }
        fprintf(out, ", custom assignment (part 0: %lld nodes)\n", (long long)count[0]);
        halo_free(pc.assign);
    } else {
        fprintf(out, ", constraints ");
        for (int i = 0; i < pc.nconstraints; i++) {
            fprintf(out, "%s%s", i ? "," : "", halo_policy_constraint_name(pc.constraints[i]));
        }
        fprintf(out, "%s, imbalance %g, objective %s\n", pc.nconstraints ? "" : "none",
                pc.imbalance, pc.objective == HALO_POLICY_CUT ? "cut" : "vol");
    }
    return 0;
}

/* The cache_init hook: the slot arrays of w sized by its capacity and filled from its plan. */
static int check_cache_init_hook(halo_policy *pol, world *w, FILE *out)
{
    halo_policy_ctx *c = &w->ctx;
    halo_policy_cache_plan plan = {.ids = HALO_ALLOC(int32_t, CK_HALO)};
    c->epoch = 0;
    int rc = halo_policy_cache_init(pol, c, &plan);
    if (rc < 0) {
        halo_free(plan.ids);
        return rc;
    }
    int64_t cap = plan.capacity;
    w->slot_id = HALO_ALLOC(int32_t, cap + 1);
    w->slot_hits = HALO_NEW(int64_t, cap + 1);
    w->slot_last = HALO_NEW(int64_t, cap + 1);
    w->slot_ins = HALO_NEW(int64_t, cap + 1);
    w->slot_score = HALO_NEW(double, cap + 1);
    c->cache = (halo_policy_cache_view){.capacity = cap,
                                        .used = 0,
                                        .id = w->slot_id,
                                        .hits = w->slot_hits,
                                        .last_hit = w->slot_last,
                                        .inserted = w->slot_ins,
                                        .score = w->slot_score};
    for (int64_t s = 0; s < cap; s++) {
        w->slot_id[s] = -1;
        w->slot_score[s] = plan.score;
    }
    for (int64_t i = 0; i < plan.n_ids; i++) {
        place(w, i, halo_index(w, plan.ids[i]), -1);
    }
    fprintf(out, "  %-12s -> capacity %lld of %d halo nodes, %lld filled\n", "cache_init",
            (long long)cap, CK_HALO, (long long)plan.n_ids);
    halo_free(plan.ids);
    return 0;
}

/* Draws batch (e, b)'s CK_INPUT distinct halo inputs (60% from the hot set) into input and
 * sorts them into slot hits and halo misses, counting them in w; returns the hit count. */
static int64_t draw_batch(world *w, int e, int64_t b, int32_t *input, int32_t *hit,
                          int32_t *miss, uint8_t *chosen, int64_t *nmiss)
{
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_POLICY, (uint64_t)e, (uint64_t)b, 1);
    memset(chosen, 0, CK_HALO);
    int64_t nh = 0, nm = 0;
    for (int i = 0; i < CK_INPUT; i++) {
        int32_t pos;
        do {
            pos = halo_rng_below(&r, 10) < 6 ? w->hot[halo_rng_below(&r, 400)]
                                             : (int32_t)halo_rng_below(&r, CK_HALO);
        } while (chosen[pos]);
        chosen[pos] = 1;
        input[i] = w->ids[pos];
        if (w->slot_of[pos] >= 0) {
            int32_t s = w->slot_of[pos];
            hit[nh++] = s;
            w->slot_hits[s]++;
            w->slot_last[s] = w->ctx.step;
        } else {
            miss[nm++] = pos;
            w->misses[pos]++;
        }
    }
    *nmiss = nm;
    return nh;
}

/* Every hook on the synthetic world: partition, cache_init, then CK_EPOCHS epochs of fanout,
 * pipeline, CK_BATCHES cache_batch calls (their decisions applied) and epoch_end. */
static int check_hooks(halo_policy *pol, world *w, FILE *out)
{
    halo_policy_ctx *c = &w->ctx;
    HALO_CHECK(check_partition_hook(pol, w, out));
    int rc = check_cache_init_hook(pol, w, out);
    if (rc < 0) {
        return rc;
    }
    int64_t cap = c->cache.capacity;
    /* the epochs */
    int32_t *input = HALO_ALLOC(int32_t, CK_INPUT);
    int32_t *hit = HALO_ALLOC(int32_t, CK_INPUT);
    int32_t *miss = HALO_ALLOC(int32_t, CK_INPUT);
    int32_t *evict = HALO_ALLOC(int32_t, cap + 1);
    int32_t *admit = HALO_ALLOC(int32_t, cap + 1);
    uint8_t *chosen = HALO_NEW(uint8_t, CK_HALO);
    int64_t hits = 0, misses = 0, evicted = 0, admitted = 0, calls = 0;
    double cb_s = 0;
    for (int e = 0; e < CK_EPOCHS && rc == 0; e++) {
        c->epoch = e;
        c->batch = -1;
        int depth, threads;
        char spec[4096];
        HALO_TRY(check_fanout(pol, w, out, spec, sizeof spec));
        HALO_TRY(halo_policy_pipeline(pol, c, &depth, &threads));
        fprintf(out, "  %-12s -> depth %d, %d sampler thread%s (epoch %d)\n", "pipeline", depth,
                threads, threads == 1 ? "" : "s", e);
        halo_policy_stats ep = {.epoch = e};
        for (int64_t b = 0; b < CK_BATCHES; b++) {
            c->batch = b;
            int64_t nm;
            int64_t nh = draw_batch(w, e, b, input, hit, miss, chosen, &nm);
            halo_policy_batch bv = {e, b, c->step, CK_INPUT, input, nh, hit, nm, miss};
            halo_policy_cache_decision d = {evict, 0, admit, 0};
            double t0 = halo_now();
            HALO_TRY(halo_policy_cache_batch(pol, c, &bv, &d));
            cb_s += halo_now() - t0;
            calls++;
            for (int64_t i = 0; i < d.n_evict; i++) {
                int64_t pos = halo_index(w, w->slot_id[evict[i]]);
                w->slot_of[pos] = -1;
                w->slot_id[evict[i]] = -1;
                c->cache.used--;
            }
            int64_t next_free = 0;
            for (int64_t i = 0; i < d.n_admit; i++) {
                int64_t s;
                if (i < d.n_evict) {
                    s = evict[i];
                } else {
                    while (w->slot_id[next_free] >= 0) {
                        next_free++;
                    }
                    s = next_free;
                }
                place(w, s, halo_index(w, admit[i]), c->step);
            }
            hits += nh;
            misses += nm;
            evicted += d.n_evict;
            admitted += d.n_admit;
            c->last_batch = (halo_policy_stats){.epoch = e,
                                                .batch = b,
                                                .batches = 1,
                                                .seeds = 64,
                                                .input_nodes = CK_INPUT,
                                                .remote_nodes = CK_INPUT,
                                                .cache_hits = nh,
                                                .cache_misses = nm};
            ep.batches++;
            ep.cache_hits += nh;
            ep.cache_misses += nm;
            ep.input_nodes += CK_INPUT;
            c->step++;
        }
        c->batch = -1;
        c->last_epoch = ep;
        HALO_TRY(halo_policy_epoch_end(pol, c));
    }
    fprintf(out,
            "  %-12s -> %lld calls, %lld evicted, %lld admitted, halo hit rate %.1f%%, "
            "%.1f us per call\n",
            "cache_batch", (long long)calls, (long long)evicted, (long long)admitted,
            hits + misses ? 100.0 * (double)hits / (double)(hits + misses) : 0.0,
            calls ? cb_s * 1e6 / (double)calls : 0.0);
    fprintf(out, "  %-12s -> %d calls\n", "epoch_end", CK_EPOCHS);
fail:
    halo_free(input);
    halo_free(hit);
    halo_free(miss);
    halo_free(evict);
    halo_free(admit);
    halo_free(chosen);
    return rc;
}

int halo_policy_check(const halo_policy_opts *opts, FILE *out)
{
    return halo_policy_check_typed(opts, NULL, out);
}

int halo_policy_check_typed(const halo_policy_opts *opts, const halo_policy_check_graph *tg,
                            FILE *out)
{
    halo_policy *pol = NULL, *worker = NULL;
    HALO_CHECK(halo_policy_open(opts, &pol));
    int rc = 0;
    const char *path = halo_policy_path(pol);
    fprintf(out, "policy %s (%s)\n", halo_policy_name(pol), path[0] ? path : "built-in");
    fprintf(out, "params:\n");
    halo_policy_print_params(pol, out, "  ");
    fprintf(out, "hooks:\n");
    unsigned hooks = halo_policy_hooks(pol);
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        if (hooks & (1u << h)) {
            fprintf(out, "  %-12s %s:%d\n", halo_policy_hook_name(h), path, pol->hook_line[h]);
        } else {
            fprintf(out, "  %-12s (default)\n", halo_policy_hook_name(h));
        }
    }
    fprintf(out,
            "synthetic rank: %d nodes in %d parts, rank 0 with %d halo nodes, %d epochs of "
            "%d batches of %d input nodes\n",
            CK_NODES, CK_PARTS, CK_HALO, CK_EPOCHS, CK_BATCHES, CK_INPUT);
    if (tg != NULL) {
        fprintf(out, "typed graph: %s: %d node types (target %s), %d relations\n", tg->source,
                tg->ntypes, tg->target_type != NULL ? tg->target_type : "none", tg->nrels);
    }
    world *w = HALO_NEW(world, 1);
    world_init(w, tg);
    HALO_TRY(check_hooks(pol, w, out));
    /* a worker thread's state of the same policy decides the same */
    HALO_TRY(halo_policy_open_worker(pol, &worker));
    char s1[4096], s2[4096];
    w->ctx.epoch = 0;
    HALO_TRY(check_fanout(pol, w, NULL, s1, sizeof s1));
    HALO_TRY(check_fanout(worker, w, NULL, s2, sizeof s2));
    if (strcmp(s1, s2) != 0) {
        rc = halo_errorf(HALO_ELUA, "%s: a worker state's fanout differs from the first state's",
                         path);
        goto fail;
    }
    fprintf(out, "  %-12s -> same fanout from a second state\n", "worker");
    fprintf(out, "memory: %.0f KiB in the Lua state\n", (double)halo_policy_mem_used(pol) / 1024);
fail:
    world_free(w);
    halo_free(w);
    halo_policy_close(worker);
    halo_policy_close(pol);
    return rc;
}
