/* The run's decisions both the trainer and the simulator take (plan.h): fanouts per epoch,
 * pipeline depth, the policy's context and node-type counts, the cache's set-up. */
#include "plan/plan.h"

#include "core/err.h"
#include "core/mem.h"
#include "pipe/pipe.h"

#include <string.h>

/* ---------------------------------------------------------------- fanouts */

/* Each layer's largest fanout over the relations (what a typed spec's plain summary holds). */
static void rel_max(halo_plan_fanouts *f, int nrels)
{
    for (int i = 0; i < f->layers; i++) {
        f->fanouts[i] = halo_sample_rel_fanout_max(f->rfan[i], nrels);
    }
}

int halo_plan_fanouts_parse(const char *text, const char *flag, const halo_partinfo *pi,
                            halo_plan_fanouts *out)
{
    memset(out, 0, sizeof *out);
    int nrels = pi != NULL ? pi->nrels : 0;
    int l;
    if (nrels > 0) {
        l = halo_sample_parse_rel_fanouts(text, pi->rel, nrels, out->rfan, HALO_MAX_LAYERS);
        if (l < 0) {
            /* the sampler's messages name --fanouts */
            return strcmp(flag, "--fanouts") == 0 ? l : halo_error_prefix(l, flag);
        }
        out->layers = l;
        rel_max(out, nrels);
        return 0;
    }
    l = halo_sample_parse_fanouts(text, out->fanouts, HALO_MAX_LAYERS);
    if (l < 0) {
        return halo_error_prefix(l, flag);
    }
    out->layers = l;
    return 0;
}

/* The policy's fanouts of a typed graph: each layer a number or a table keyed by relation
 * name, read as a spec and checked against the graph's relations. */
static int policy_fanouts_typed(const halo_partinfo *pi, halo_policy *pol,
                                const halo_policy_ctx *ctx, halo_plan_fanouts *out)
{
    char spec[4096];
    int l = 0;
    HALO_CHECK(halo_policy_fanout_spec(pol, ctx, spec, sizeof spec, HALO_MAX_LAYERS, &l));
    l = halo_sample_parse_rel_fanouts(spec, pi->rel, pi->nrels, out->rfan, HALO_MAX_LAYERS);
    if (l < 0) {
        return halo_policy_fanout_spec_refused(pol, ctx->epoch, spec);
    }
    out->layers = l;
    rel_max(out, pi->nrels);
    return 0;
}

int halo_plan_epoch_fanouts(const halo_plan_fanouts *given, const halo_partinfo *pi,
                            halo_policy *pol, const halo_policy_ctx *ctx, int want,
                            halo_plan_fanouts *out)
{
    if (given != NULL && given->layers > 0) {
        *out = *given;
        return 0;
    }
    if (pi->nrels > 0) {
        HALO_CHECK(policy_fanouts_typed(pi, pol, ctx, out));
    } else {
        HALO_CHECK(halo_policy_fanout(pol, ctx, out->fanouts, HALO_MAX_LAYERS, &out->layers));
    }
    if (want > 0 && out->layers != want) {
        return halo_errorf(HALO_ELUA,
                           "policy %s: fanout returned %d layers at epoch %d, the model has %d",
                           halo_policy_name(pol), out->layers, ctx->epoch, want);
    }
    return 0;
}

/* ---------------------------------------------------------------- pipeline */

int halo_plan_pipeline_ask(halo_policy *pol, const halo_policy_ctx *ctx, int opt_depth,
                           int opt_threads, int *depth, int *threads)
{
    int d = 0, th = 1;
    int rc = halo_policy_pipeline(pol, ctx, &d, &th);
    *depth = opt_depth >= 0 ? opt_depth : d;
    *threads = opt_threads > 0 ? opt_threads : th;
    return rc;
}

void halo_plan_pipeline_settle(int64_t depth, int64_t threads, int *out_depth, int *out_threads)
{
    int d = (int)(depth < HALO_PIPE_MAX_DEPTH ? depth : HALO_PIPE_MAX_DEPTH);
    int th = (int)(threads < HALO_PIPE_MAX_THREADS ? threads : HALO_PIPE_MAX_THREADS);
    *out_depth = d;
    *out_threads = d == 0 ? 1 : th > d ? d : th;
}

/* ---------------------------------------------------------------- context and node types */

void halo_plan_policy_ctx(const halo_partinfo *pi, const halo_part *pt, const halo_plan_run *run,
                          halo_plan_names *names, halo_policy_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->rank = pt->id;
    ctx->ranks = run->ranks;
    ctx->epochs = run->epochs;
    ctx->batch = -1;
    ctx->batches = run->batches;
    ctx->batch_size = (int)run->batch;
    ctx->graph.nodes = pi->nodes;
    ctx->graph.edges = pi->edges;
    ctx->graph.feat_dim = pi->feat_dim;
    ctx->graph.classes = pi->classes;
    ctx->graph.train_nodes = pt->num_train * run->ranks;
    if (pi->nrels > 0) {
        for (int i = 0; i < pi->ntypes; i++) {
            names->ntype[i] = pi->ntype_name[i];
        }
        for (int i = 0; i < pi->nrels; i++) {
            names->rel[i] = pi->rel[i].name;
        }
        ctx->graph.ntypes = pi->ntypes;
        ctx->graph.node_types = names->ntype;
        ctx->graph.nrels = pi->nrels;
        ctx->graph.relations = names->rel;
        ctx->graph.target_type = pi->ntype_name[pi->target_type];
    }
    ctx->part.parts = run->ranks;
    ctx->part.id = pt->id;
    ctx->part.nodes = pt->nodes;
    ctx->part.edges = pt->edges;
    ctx->part.train_nodes = pt->num_train;
}

void halo_plan_count_types(const halo_partinfo *pi, int me, const halo_minibatch *mb,
                           halo_epoch_stats *s)
{
    for (int32_t i = 0; i < mb->num_input; i++) {
        int32_t id = mb->input[i];
        int ty = halo_partinfo_node_type(pi, id);
        s->input_nodes_type[ty]++;
        s->remote_nodes_type[ty] += halo_partinfo_owner(pi, id) != me;
    }
    for (int l = 0; l < mb->layers; l++) {
        const halo_block *b = &mb->blocks[l];
        for (int64_t e = 0; b->etype != NULL && e < b->num_edges; e++) {
            s->sampled_edges_rel[b->etype[e]]++;
        }
    }
}

void halo_plan_last_epoch(const halo_epoch_stats *s, int64_t seeds, double loss,
                          halo_policy_stats *le)
{
    memset(le, 0, sizeof *le);
    le->epoch = s->epoch;
    le->batches = s->batches;
    le->seeds = seeds;
    le->input_nodes = s->input_nodes;
    le->sampled_edges = s->sampled_edges;
    le->remote_nodes = s->remote_nodes;
    le->cache_hits = s->cache_hits;
    le->cache_misses = s->cache_misses;
    le->bytes_remote = s->bytes_remote;
    le->loss = loss;
    le->time_s = s->time_s;
    le->sample_s = s->sample_s;
    le->fetch_s = s->fetch_s;
    le->compute_s = s->compute_s;
    le->wait_s = s->wait_s;
}

int halo_plan_relations(int opt_relations, int nrels)
{
    return opt_relations > 0 ? opt_relations : nrels > 0 ? nrels : 1;
}

bool halo_plan_featless(const halo_partinfo *pi, uint8_t featless[HALO_MAX_NTYPES])
{
    bool any = false;
    memset(featless, 0, HALO_MAX_NTYPES);
    for (int ty = 0; pi->nrels > 0 && ty < pi->ntypes; ty++) {
        featless[ty] = pi->ntype_feat_dim[ty] == 0;
        any |= featless[ty] != 0;
    }
    return any && pi->feat_dim >= 1;
}

/* ---------------------------------------------------------------- the cache */

bool halo_plan_cache_lookahead(halo_policy *pol)
{
    return (halo_policy_hooks(pol) & (1u << HALO_POLICY_CACHE_INIT)) &&
           halo_cache_policy_hint(pol) == HALO_CACHE_HINT_NEXT_USE;
}

int halo_plan_lookahead(const halo_plan_batches *src, halo_cache_future *f)
{
    int32_t *rid = NULL;
    int64_t cap = 0;
    int rc = 0;
    for (int ep = src->first_epoch; rc == 0 && ep < src->epochs; ep++) {
        for (int64_t b = 0; rc == 0 && b < src->batches; b++) {
            const halo_minibatch *mb = NULL;
            rc = src->sample(src->arg, ep, b, &mb);
            if (rc < 0) {
                break;
            }
            if (mb->num_input > cap) {
                cap = mb->num_input + mb->num_input / 2 + 64;
                halo_free(rid);
                rid = HALO_ALLOC(int32_t, cap);
            }
            int64_t m = 0;
            for (int32_t i = 0; i < mb->num_input; i++) {
                if (mb->input[i] < src->lo || mb->input[i] >= src->hi) {
                    rid[m++] = mb->input[i];
                }
            }
            halo_cache_future_add(f, rid, m);
        }
    }
    halo_free(rid);
    return rc;
}

/* The halo nodes' owners and node types. */
static void halo_views(const halo_plan_cache_opts *o, halo_plan_halo *h)
{
    const halo_part *pt = o->pt;
    int64_t n = pt->num_halo > 0 ? pt->num_halo : 1;
    h->owner = HALO_ALLOC(int32_t, n);
    for (int64_t i = 0; i < pt->num_halo; i++) {
        h->owner[i] = halo_partinfo_owner(o->pi, pt->halo[i]);
    }
    if (pt->halo_ntype != NULL) {
        h->ntype = HALO_ALLOC(int32_t, n);
        for (int64_t i = 0; i < pt->num_halo; i++) {
            h->ntype[i] = pt->halo_ntype[i];
        }
    }
}

/* The halo nodes' inclusion probabilities over this part's CSR (propagation stops at other
 * parts) with the first epoch's fanouts. */
static void halo_vip(const halo_plan_cache_opts *o, halo_plan_halo *h)
{
    const halo_part *pt = o->pt;
    double *p = HALO_ALLOC(double, o->pi->nodes + 1);
    halo_cache_vip(o->pi->nodes, pt->start, pt->end, pt->indptr, pt->indices, pt->train,
                   pt->num_train, (int)o->run->batch, o->fan->fanouts, o->fan->layers, p);
    h->vip = HALO_ALLOC(double, pt->num_halo > 0 ? pt->num_halo : 1);
    for (int64_t i = 0; i < pt->num_halo; i++) {
        h->vip[i] = p[pt->halo[i]];
    }
    halo_free(p);
}

int halo_plan_cache_open(const halo_plan_cache_opts *o, halo_cache_future *future,
                         halo_plan_halo *h, halo_cache **out)
{
    memset(h, 0, sizeof *h);
    *out = NULL;
    halo_views(o, h);
    if (!(halo_policy_hooks(o->pol) & (1u << HALO_POLICY_CACHE_INIT))) {
        halo_cache_future_free(future);
        return 0;
    }
    if (halo_cache_policy_hint(o->pol) == HALO_CACHE_HINT_VIP) {
        halo_vip(o, h);
    }
    const halo_part *pt = o->pt;
    halo_cache_opts co = {
        .policy = o->pol,
        .rank = o->rank,
        .ranks = o->ranks,
        .num_halo = pt->num_halo,
        .halo_ids = pt->halo,
        .halo_deg = pt->halo_deg,
        .halo_owner = h->owner,
        .halo_ntype = h->ntype,
        .vip = h->vip,
        .feat_dim = o->feat_dim,
        .row_bytes = o->row_bytes,
        .epochs = o->run->epochs,
        .batches = o->run->batches,
        .batch_size = (int)o->run->batch,
        .graph = o->ctx->graph,
        .part = o->ctx->part,
    };
    return halo_cache_open(&co, future, out);
}

void halo_plan_halo_free(halo_plan_halo *h)
{
    halo_free(h->owner);
    halo_free(h->ntype);
    halo_free(h->vip);
    memset(h, 0, sizeof *h);
}
