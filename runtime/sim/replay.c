/* The simulator's run: P ranks of a training run in one process, set up and driven epoch by
 * epoch through the planning module's decisions (runtime/plan), the runtime's epoch order and
 * policy hooks, each batch replayed by replay_batch.c; the metrics records. */
#include "sim/replay.h"

#include "cache/cache.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "order/order.h"
#include "part/part.h"
#include "pipe/pipe.h"
#include "pipe/timeline.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "sample/sample.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void halo_sim_opts_default(halo_sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 3;
    o->batch = 2000;
    o->hidden = 16;
    o->seed = 1;
    o->depth = -1;
}

/* ---------------------------------------------------------------- set-up */

/* Every rank's epoch order. */
static void sim_order(sim *S, int epoch)
{
    if (S->o->global_batching) {
        halo_order_global(S->o->seed, epoch, S->P, S->nt, S->all_gid, S->all_orig, S->o->batch,
                          0, S->P, S->keys, S->order, S->boff);
        return;
    }
    for (int r = 0; r < S->P; r++) {
        halo_order_local(S->o->seed, epoch, S->nt, S->r[r].part->train, S->r[r].train_orig,
                         S->o->batch, S->keys, S->order + (int64_t)r * S->nt,
                         S->boff + (int64_t)r * (S->nb + 1));
    }
}

/* What the look-ahead of rank r samples. */
typedef struct sim_ahead {
    sim *S; /* the simulation */
    int r;  /* the rank */
} sim_ahead;

/* Batch b of epoch ep for rank r's look-ahead: every rank's epoch order made at its first
 * batch, the work buffers used (and reset after by the batches). */
static int sim_ahead_sample(void *arg, int ep, int64_t b, const halo_minibatch **mb)
{
    sim_ahead *a = arg;
    sim *S = a->S;
    if (b == 0) {
        sim_order(S, ep);
    }
    const int64_t *bo = S->boff + (int64_t)a->r * (S->nb + 1);
    const int32_t *ord = S->order + (int64_t)a->r * S->nt;
    halo_sim_work_reset(S);
    halo_sample_key k = {S->o->seed, ep, b};
    *mb = &S->r[a->r].mb;
    return halo_sim_sample(S, a->r, &k, ord + bo[b], (int32_t)(bo[b + 1] - bo[b]));
}

/* Rank r's cache (halo_plan_cache_open, with the look-ahead when asked for), its initial
 * contents in place (counts only: no rows). */
static int sim_cache(sim *S, int r)
{
    sim_rank *R = &S->r[r];
    halo_cache_future *fut = NULL;
    if (halo_plan_cache_lookahead(R->pol)) {
        fut = halo_cache_future_new();
        sim_ahead a = {S, r};
        halo_plan_batches src = {sim_ahead_sample, &a, 0, S->o->epochs, S->nb,
                                 S->info->start[r], S->info->start[r + 1]};
        int rc = halo_plan_lookahead(&src, fut);
        if (rc < 0) {
            halo_cache_future_free(fut);
            return rc;
        }
    }
    halo_plan_run run = {S->P, S->o->epochs, S->o->batch, S->nb};
    halo_plan_cache_opts co = {R->pol, S->info, R->part, r, S->P, 0, S->row_bytes, &run,
                               &R->fan, &R->pctx};
    halo_plan_halo h;
    int rc = halo_plan_cache_open(&co, fut, &h, &R->cache);
    if (rc == 0 && R->cache != NULL) {
        const int32_t *ids = NULL;
        if (halo_cache_init_ids(R->cache, &ids) > 0) {
            rc = halo_cache_init_fill(R->cache, NULL);
        }
    }
    halo_plan_halo_free(&h);
    return rc;
}

/* Rank r's part (its range and relations checked against partition.json), its work record's
 * per-peer arrays and its own policy state, as each runtime rank has. */
static int sim_open_rank(sim *S, int r)
{
    const halo_sim_opts *o = S->o;
    int P = S->P;
    sim_rank *R = &S->r[r];
    HALO_CHECK(halo_part_load(o->pdir, r, &R->part));
    if (R->part->start != S->info->start[r] || R->part->end != S->info->start[r + 1]) {
        return halo_errorf(HALO_EINPUT, "%s/part-%d: range [%lld,%lld) disagrees with "
                           "partition.json", o->pdir, r, (long long)R->part->start,
                           (long long)R->part->end);
    }
    if (S->nrels > 0 && (R->part->nrels != S->nrels || R->part->etype == NULL)) {
        return halo_errorf(HALO_EINPUT, "%s/part-%d: %d relations, partition.json %d", o->pdir,
                           r, R->part->nrels, S->nrels);
    }
    R->sample_req = HALO_NEW(int64_t, (int64_t)HALO_MAX_LAYERS * P);
    R->sample_rep = HALO_NEW(int64_t, (int64_t)HALO_MAX_LAYERS * P);
    R->pull_rows = HALO_NEW(int64_t, P);
    R->embed_rows = HALO_NEW(int64_t, P);
    halo_policy_opts po = {.path = o->policy, .params = o->sets, .nparams = o->nsets, .rank = r};
    return halo_policy_open(&po, &R->pol);
}

/* The epoch order's sizes and buffers: equal training seeds on every part (else the runtime's
 * line), each seed's input-graph id, every rank's seeds side by side for global batching. */
static int sim_open_order(sim *S)
{
    const halo_sim_opts *o = S->o;
    int P = S->P;
    int64_t lo = S->r[0].part->num_train, hi = lo;
    for (int r = 1; r < P; r++) {
        int64_t n = S->r[r].part->num_train;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    if (lo != hi) {
        return halo_errorf(HALO_EINPUT,
                           "%s: parts hold different numbers of training seeds (%lld to %lld); "
                           "every rank must run the same number of batches",
                           o->pdir, (long long)lo, (long long)hi);
    }
    if (hi == 0) {
        return halo_errorf(HALO_EINPUT, "%s: no training seeds", o->pdir);
    }
    S->nt = hi;
    S->total = o->global_batching ? S->nt * P : S->nt;
    S->nb = halo_order_batches(S->total, o->batch);
    S->keys = HALO_ALLOC(halo_order_key, S->total);
    S->order = HALO_ALLOC(int32_t, S->nt * P);
    S->boff = HALO_ALLOC(int64_t, (S->nb + 1) * P);
    for (int r = 0; r < P; r++) {
        sim_rank *R = &S->r[r];
        R->train_orig = HALO_ALLOC(int64_t, S->nt);
        for (int64_t i = 0; i < S->nt; i++) {
            R->train_orig[i] = S->orig[R->part->train[i]];
        }
    }
    if (o->global_batching) {
        S->all_gid = HALO_ALLOC(int32_t, S->nt * P);
        S->all_orig = HALO_ALLOC(int64_t, S->nt * P);
        for (int r = 0; r < P; r++) {
            memcpy(S->all_gid + (int64_t)r * S->nt, S->r[r].part->train,
                   (size_t)S->nt * sizeof(int32_t));
            memcpy(S->all_orig + (int64_t)r * S->nt, S->r[r].train_orig,
                   (size_t)S->nt * sizeof(int64_t));
        }
    }
    return 0;
}

/* Loads the partition, every rank's part and policy, the epoch order's buffers; every rank's
 * context, first fanouts and cache (runtime/plan). */
static int sim_open(sim *S)
{
    const halo_sim_opts *o = S->o;
    HALO_CHECK(halo_partinfo_load(o->pdir, &S->info));
    S->P = S->info->parts;
    int P = S->P;
    char path[4200];
    HALO_CHECK(halo_path_join(path, sizeof path, o->pdir, "orig_id.i64"));
    HALO_CHECK(halo_map_file(path, (size_t)S->info->nodes * sizeof(int64_t), &S->orig_map));
    S->orig = (const int64_t *)S->orig_map.data;
    S->r = HALO_NEW(sim_rank, P);
    S->works = HALO_NEW(halo_sim_work, P);
    S->cnt = HALO_NEW(int64_t, P);
    S->gstart = HALO_NEW(int64_t, P + 1);
    S->gcur = HALO_NEW(int64_t, P);
    S->nbase = HALO_NEW(int64_t, P);
    S->smp = halo_sampler_new();
    S->row_bytes = 4 * (int64_t)S->info->feat_dim;
    const halo_partinfo *pi = S->info;
    if (pi->nrels > 0 && pi->type_start == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: partition.json has relations but no typed ranges",
                           o->pdir);
    }
    S->nrels = pi->nrels;
    S->embed = halo_plan_featless(pi, S->featless);
    if (o->rgcn) {
        S->relations = halo_plan_relations(o->relations, S->nrels);
    }
    if (o->fanouts != NULL) {
        HALO_CHECK(halo_plan_fanouts_parse(o->fanouts, "--fanouts", pi, &S->given));
    }
    for (int r = 0; r < P; r++) {
        HALO_CHECK(sim_open_rank(S, r));
    }
    HALO_CHECK(sim_open_order(S));
    halo_plan_run run = {P, o->epochs, o->batch, S->nb};
    for (int r = 0; r < P; r++) {
        sim_rank *R = &S->r[r];
        halo_plan_policy_ctx(S->info, R->part, &run, &S->names, &R->pctx);
        HALO_CHECK(halo_plan_epoch_fanouts(&S->given, pi, R->pol, &R->pctx, 0, &R->fan));
    }
    for (int r = 0; r < P; r++) {
        HALO_CHECK(sim_cache(S, r));
    }
    return 0;
}

static void sim_close(sim *S)
{
    if (S->r != NULL) {
        for (int r = 0; r < S->P; r++) {
            sim_rank *R = &S->r[r];
            if (R->cache != NULL) {
                halo_cache_close(R->cache);
            }
            if (R->pol != NULL) {
                halo_policy_close(R->pol);
            }
            halo_sample_free(&R->mb);
            halo_free(R->sample_req);
            halo_free(R->sample_rep);
            halo_free(R->pull_rows);
            halo_free(R->embed_rows);
            halo_free(R->train_orig);
            halo_part_free(R->part);
        }
    }
    if (S->cost != NULL) {
        halo_sim_cost_free(S->cost);
    }
    halo_timeline_free(&S->tl);
    halo_buf *bufs[] = {&S->grow, &S->gkey, &S->goff, &S->gnbr,   &S->moff,  &S->mnbr,
                        &S->rpos, &S->rid,  &S->served, &S->getype, &S->metype};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        halo_buf_free(bufs[i]);
    }
    if (S->smp != NULL) {
        halo_sampler_free(S->smp);
    }
    halo_free(S->r);
    halo_free(S->works);
    halo_free(S->cnt);
    halo_free(S->gstart);
    halo_free(S->gcur);
    halo_free(S->nbase);
    halo_free(S->owner);
    halo_free(S->keys);
    halo_free(S->order);
    halo_free(S->boff);
    halo_free(S->all_gid);
    halo_free(S->all_orig);
    halo_unmap(&S->orig_map);
    if (S->info != NULL) {
        halo_partinfo_free(S->info);
    }
}

/* ---------------------------------------------------------------- the run */

/* Depth and sampling threads of an epoch: the largest any rank's ask (halo_plan_pipeline_ask)
 * settled as the ranks of a run settle it. */
static int sim_pipeline(sim *S, int *depth, int *threads)
{
    int64_t d = 0, th = 1;
    for (int r = 0; r < S->P; r++) {
        int dr, tr;
        HALO_CHECK(halo_plan_pipeline_ask(S->r[r].pol, &S->r[r].pctx, S->o->depth,
                                          S->o->sampler_threads, &dr, &tr));
        d = dr > d ? dr : d;
        th = tr > th ? tr : th;
    }
    halo_plan_pipeline_settle(d, th, depth, threads);
    return 0;
}

/* Floats of the gradient allreduce, plus the failure flag the trainer appends. GraphSAGE:
 * W = [W_self; W_neigh] and b per layer. RGCN (relations R > 0, bases B): the self-loop matrix,
 * R relation matrices (or B bases and R x B coefficients) and b per layer (model/rgcn.c). GAT
 * (heads > 0): W, a_l, a_r and b per layer, hidden layers heads x hidden wide. */
static int64_t sim_grad_floats(int layers, int in_dim, int hidden, int classes, int relations,
                               int bases, int heads, int out_heads)
{
    int64_t n = 1;
    int64_t width = heads > 0 ? (int64_t)hidden * heads : hidden;
    for (int l = 0; l < layers; l++) {
        int64_t in = l == 0 ? in_dim : width, out = l == layers - 1 ? classes : width;
        if (heads > 0) {
            out *= l == layers - 1 ? out_heads : 1; /* the output layer's heads, averaged */
            n += in * out + 3 * out;                /* GAT: W, a_l, a_r, b (model/gat.h) */
        } else if (relations > 0) {
            int64_t mats = 1 + (bases > 0 ? bases : relations);
            n += mats * in * out + (bases > 0 ? (int64_t)relations * bases : 0) + out;
        } else {
            n += 2 * in * out + out;
        }
    }
    return n;
}

/* The metrics record lines of one epoch (every rank), and the eval-free summary at the end.
 * A typed partition's records carry the runtime's per-type fields with the same keys, and with
 * embeddings the simulator's own counts of their traffic ("embed_*", which the runtime's
 * records do not have: its epoch bytes are the sampling and pull exchanges'). */
static int sim_write_epoch(halo_metrics *mf, const char *policy, const sim *S)
{
    halo_sb sb;
    halo_sb_init(&sb);
    int rc = 0;
    halo_metrics_types ty;
    halo_metrics_types_of(S->info, &ty);
    for (int r = 0; rc == 0 && r < S->P; r++) {
        sb.len = 0;
        if (sb.buf != NULL) {
            sb.buf[0] = 0;
        }
        halo_metrics_epoch_typed_json(&sb, "sim", policy, &S->r[r].acc,
                                      S->nrels > 0 ? &ty : NULL);
        if (S->embed && sb.len > 0 && sb.buf[sb.len - 1] == '}') {
            const halo_sim_embed_stats *e = &S->r[r].emb;
            sb.buf[--sb.len] = 0;
            halo_sb_printf(&sb, ",\"embed_rows\":%lld,\"embed_remote_rows\":%lld,"
                           "\"embed_bytes_sent\":%lld,\"embed_bytes_recv\":%lld,"
                           "\"embed_messages\":%lld}",
                           (long long)e->rows, (long long)e->remote_rows,
                           (long long)e->bytes_sent, (long long)e->bytes_recv,
                           (long long)e->messages);
        }
        rc = halo_metrics_line(mf, sb.buf);
    }
    halo_sb_free(&sb);
    return rc;
}

static int sim_write_summary(halo_metrics *mf, const sim *S, const halo_sim_result *res)
{
    halo_jw w;
    halo_metrics_summary_begin(&w, "sim");
    halo_jw_key(&w, "policy");
    halo_jw_str(&w, res->policy);
    halo_jw_key(&w, "profile");
    halo_jw_str(&w, S->o->profile != NULL ? S->o->profile->name : "none");
    halo_jw_key(&w, "ranks");
    halo_jw_i64(&w, res->ranks);
    halo_jw_key(&w, "epochs");
    halo_jw_i64(&w, res->epochs);
    halo_jw_key(&w, "batches_per_epoch");
    halo_jw_i64(&w, res->batches);
    halo_jw_key(&w, "depth");
    halo_jw_i64(&w, res->depth);
    halo_jw_key(&w, "mean_epoch_s");
    halo_jw_f64(&w, res->mean_epoch_s);
    halo_jw_key(&w, "sampled_edges");
    halo_jw_i64(&w, res->total.sampled_edges);
    halo_jw_key(&w, "bytes_remote");
    halo_jw_i64(&w, res->total.bytes_remote);
    halo_jw_key(&w, "cache_hits");
    halo_jw_i64(&w, res->total.cache_hits);
    halo_jw_key(&w, "cache_misses");
    halo_jw_i64(&w, res->total.cache_misses);
    halo_jw_key(&w, "peak_rss_bytes");
    halo_jw_i64(&w, res->peak_rss);
    halo_jw_obj_end(&w);
    int rc = halo_metrics_line(mf, w.sb.buf);
    halo_jw_free(&w);
    return rc;
}

/* Adds one epoch's records into the run's totals. */
static void sim_total_add(halo_epoch_stats *t, const halo_epoch_stats *s)
{
    t->sample_s += s->sample_s;
    t->fetch_s += s->fetch_s;
    t->copy_s += s->copy_s;
    t->compute_s += s->compute_s;
    t->allreduce_s += s->allreduce_s;
    t->wait_s += s->wait_s;
    t->sample_cpu_s += s->sample_cpu_s;
    t->fetch_cpu_s += s->fetch_cpu_s;
    t->compute_cpu_s += s->compute_cpu_s;
    t->batches += s->batches;
    t->sampled_edges += s->sampled_edges;
    t->input_nodes += s->input_nodes;
    t->remote_nodes += s->remote_nodes;
    t->cache_hits += s->cache_hits;
    t->cache_misses += s->cache_misses;
    t->bytes_remote += s->bytes_remote;
    t->bytes_sent += s->bytes_sent;
    t->messages += s->messages;
}

/* The epoch_end hooks of every rank with the epoch's counts (and simulated times). */
static int sim_epoch_end(sim *S, int ep, int64_t step)
{
    for (int r = 0; r < S->P; r++) {
        sim_rank *R = &S->r[r];
        halo_policy_stats *le = &R->pctx.last_epoch;
        halo_plan_last_epoch(&R->acc, S->nt, 0, le);
        R->pctx.step = step;
        if (R->cache != NULL) {
            halo_cache_ctx(R->cache)->last_epoch = *le;
            HALO_CHECK(halo_cache_epoch_end(R->cache, ep));
        } else {
            HALO_CHECK(halo_policy_epoch_end(R->pol, &R->pctx));
        }
    }
    return 0;
}

/* The set-up's checks of a run: the profile's ranks are the partition's, every rank's policy
 * gives the same layers. */
static int sim_check(const sim *S)
{
    const halo_sim_opts *o = S->o;
    int P = S->P;
    if (o->profile != NULL && o->profile->machines * o->profile->trainers != P) {
        return halo_errorf(HALO_EUSAGE,
                           "%s: %d machines x %d trainers = %d ranks, but %s has %d parts "
                           "(set machines in the profile or --machines)",
                           o->profile->source[0] ? o->profile->source : o->profile->name,
                           o->profile->machines, o->profile->trainers,
                           o->profile->machines * o->profile->trainers, o->pdir, P);
    }
    for (int r = 1; r < P; r++) {
        if (S->r[r].fan.layers != S->r[0].fan.layers) {
            return halo_errorf(HALO_ELUA, "policy: rank %d has %d layers, rank 0 %d", r,
                               S->r[r].fan.layers, S->r[0].fan.layers);
        }
    }
    return 0;
}

/* The plan of epoch ep on every rank: its fanouts (halo_plan_epoch_fanouts), fresh records,
 * the epoch's pipeline, and the time model remade when depth or threads change. */
static int sim_epoch_begin(sim *S, int ep, int64_t step, halo_sim_result *res, int *cur_depth,
                           int *cur_threads)
{
    const halo_sim_opts *o = S->o;
    for (int r = 0; r < S->P; r++) {
        sim_rank *R = &S->r[r];
        R->pctx.epoch = ep;
        R->pctx.step = step;
        HALO_CHECK(halo_plan_epoch_fanouts(&S->given, S->info, R->pol, &R->pctx, R->fan.layers,
                                           &R->fan));
        memset(&R->acc, 0, sizeof R->acc);
        memset(&R->emb, 0, sizeof R->emb);
        R->acc.epoch = ep;
        R->acc.rank = r;
        R->acc.ranks = S->P;
    }
    int depth, threads;
    HALO_CHECK(sim_pipeline(S, &depth, &threads));
    res->depth = depth;
    if (o->profile != NULL && (depth != *cur_depth || threads != *cur_threads)) {
        if (S->cost != NULL) {
            halo_sim_cost_free(S->cost);
            S->cost = NULL;
        }
        halo_sim_cost_opts co = {
            .profile = o->profile,
            .ranks = S->P,
            .depth = depth,
            .sampler_threads = threads,
            .in_dim = S->info->feat_dim,
            .table_bytes = (double)S->info->nodes * S->info->feat_dim * sizeof(float) / S->P,
            .hidden = o->hidden,
            .classes = S->info->classes,
            .grad_floats =
                sim_grad_floats(S->r[0].fan.layers, S->info->feat_dim, o->hidden, S->info->classes,
                                S->relations, o->bases, o->heads, o->out_heads),
            .relations = S->relations,
            .bases = o->bases,
            .heads = o->heads,
            .out_heads = o->out_heads,
            .timeline = o->timeline != NULL ? &S->tl : NULL,
            .t_start = res->total.time_s,
        };
        HALO_CHECK(halo_sim_cost_new(&co, &S->cost));
    }
    *cur_depth = depth;
    *cur_threads = threads;
    sim_order(S, ep);
    if (S->cost != NULL) {
        halo_sim_cost_epoch_begin(S->cost, ep);
    }
    return 0;
}

/* The batches of epoch ep, under a progress bar on a terminal (a line per 100 batches
 * otherwise, with --progress). */
static int sim_epoch_batches(sim *S, int ep, int64_t step)
{
    const halo_sim_opts *o = S->o;
    bool tty = o->progress && isatty(2);
    halo_progress prog;
    if (tty) {
        char label[32];
        snprintf(label, sizeof label, "sim epoch %d", ep);
        halo_progress_begin(&prog, label, (uint64_t)S->nb);
    }
    int rc = 0;
    for (int64_t b = 0; rc == 0 && b < S->nb; b++) {
        rc = halo_sim_batch(S, ep, b, step + b);
        if (rc < 0) {
            break;
        }
        if (tty) {
            halo_progress_update(&prog, (uint64_t)b + 1);
        } else if (o->progress && (b + 1) % 100 == 0) {
            halo_info("sim: epoch %d, batch %lld of %lld", ep, (long long)b + 1,
                      (long long)S->nb);
        }
    }
    if (tty) {
        halo_progress_end(&prog);
    }
    return rc;
}

/* The time model's stage times of the epoch into every rank's record; the run's time grows by
 * the slowest rank's. */
static void sim_epoch_times(sim *S, halo_sim_result *res)
{
    int P = S->P;
    halo_epoch_stats *times = HALO_NEW(halo_epoch_stats, P);
    halo_sim_cost_epoch_end(S->cost, times);
    double slowest = 0;
    for (int r = 0; r < P; r++) {
        halo_epoch_stats *a = &S->r[r].acc;
        a->time_s = times[r].time_s;
        a->sample_s = times[r].sample_s;
        a->fetch_s = times[r].fetch_s;
        a->copy_s = times[r].copy_s;
        a->compute_s = times[r].compute_s;
        a->allreduce_s = times[r].allreduce_s;
        a->wait_s = times[r].wait_s;
        a->sample_cpu_s = times[r].sample_cpu_s;
        a->fetch_cpu_s = times[r].fetch_cpu_s;
        a->compute_cpu_s = times[r].compute_cpu_s;
        slowest = a->time_s > slowest ? a->time_s : slowest;
    }
    halo_free(times);
    res->total.time_s += slowest;
}

/* The end of a run: its means, the timeline, the summary record and the metrics file renamed
 * into place (*mf NULL after). */
static int sim_finish(sim *S, halo_metrics **mf, halo_sim_result *res)
{
    res->mean_epoch_s = res->epochs > 0 ? res->total.time_s / res->epochs : 0;
    res->peak_rss = (int64_t)halo_mem_rss_peak();
    if (S->o->timeline != NULL) {
        HALO_CHECK(halo_timeline_write(S->o->timeline, S->tl.ev, S->tl.n));
    }
    if (*mf != NULL) {
        HALO_CHECK(sim_write_summary(*mf, S, res));
        int rc = halo_metrics_close(*mf);
        *mf = NULL;
        return rc;
    }
    return 0;
}

int halo_sim_run(const halo_sim_opts *o, halo_sim_result *res)
{
    sim S;
    memset(&S, 0, sizeof S);
    memset(res, 0, sizeof *res);
    S.o = o;
    halo_metrics *mf = NULL;
    int rc = 0;
    if (o->batch < 1 || o->epochs < 1) {
        return halo_errorf(HALO_EUSAGE, "sim: --batch and --epochs must be at least 1");
    }
    HALO_TRY(sim_open(&S));
    HALO_TRY(sim_check(&S));
    snprintf(res->policy, sizeof res->policy, "%s", halo_policy_name(S.r[0].pol));
    res->ranks = S.P;
    res->batches = S.nb;
    if (o->metrics != NULL) {
        HALO_TRY(halo_metrics_open(o->metrics, &mf));
    }
    halo_timeline_init(&S.tl, 0);
    int64_t step = 0;
    int cur_depth = -1, cur_threads = -1;
    for (int ep = 0; ep < o->epochs; ep++) {
        HALO_TRY(sim_epoch_begin(&S, ep, step, res, &cur_depth, &cur_threads));
        HALO_TRY(sim_epoch_batches(&S, ep, step));
        step += S.nb;
        if (S.cost != NULL) {
            sim_epoch_times(&S, res);
        }
        for (int r = 0; r < S.P; r++) {
            sim_total_add(&res->total, &S.r[r].acc);
        }
        res->epochs = ep + 1;
        if (mf != NULL) {
            HALO_TRY(sim_write_epoch(mf, res->policy, &S));
        }
        HALO_TRY(sim_epoch_end(&S, ep, step));
    }
    rc = sim_finish(&S, &mf, res);
fail:
    if (mf != NULL) {
        halo_metrics_abort(mf);
    }
    sim_close(&S);
    return rc;
}
