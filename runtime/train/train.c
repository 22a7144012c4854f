/* The distributed training loop: halo_train_run = set-up (setup.c), epochs, finish. Each epoch
 * takes its fanouts and pipeline from the planning module, orders its seeds (runtime/order),
 * runs its batches (step.c), evaluates, records, checkpoints and calls the epoch_end hook. */
#include "train/train.h"

#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/timer.h"
#include "order/order.h"
#include "train/checkpoint.h"
#include "train/eval.h"
#include "train/train_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Depth and sampling threads of an epoch: --depth, else the policy's pipeline hook; the same on
 * every rank (the largest asked for), since the channels a batch's collectives use depend on
 * them. Depth 0 when MPI cannot take calls from several threads. */
static int epoch_pipeline(train_ctx *t, halo_policy *pol, const halo_policy_ctx *pctx,
                          int *depth, int *threads, bool *notice)
{
    int d, th;
    int rc = halo_plan_pipeline_ask(pol, pctx, t->o->depth, t->o->sampler_threads, &d, &th);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    int64_t v[2] = {d, th};
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, v, 2));
    halo_plan_pipeline_settle(v[0], v[1], depth, threads);
    if (*depth > 0 && halo_comm_thread_level() < 3) {
        if (!*notice && t->rank == 0) {
            halo_notice("pipeline: MPI does not provide MPI_THREAD_MULTIPLE; depth 0");
        }
        *notice = true;
        *depth = 0;
        *threads = 1;
    }
    return 0;
}

/* Writes the checkpoint on rank 0; every rank returns the same code. */
static int write_checkpoint(train_ctx *t, uint64_t hash, const char *config, int epochs_done,
                            int64_t step)
{
    int rc = 0;
    if (t->rank == 0) {
        rc = halo_model_pull_state(t->m);
        if (rc == 0) {
            size_t count;
            halo_checkpoint ck = {
                .epoch = epochs_done, .step = step, .seed = t->o->seed, .config_hash = hash,
                .config = config};
            ck.params = halo_model_params(t->m, &count);
            ck.nparams = (int64_t)count;
            ck.adam_m = halo_model_adam_m(t->m);
            ck.adam_v = halo_model_adam_v(t->m);
            rc = halo_checkpoint_write(t->o->checkpoint, &ck);
        }
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    if (t->emb != NULL) {
        /* into the directory rank 0 just committed: each rank its rows and optimiser state */
        rc = halo_embed_save(t->emb, t->o->checkpoint);
    }
    return halo_comm_agree(t->c, rc);
}

/* --check: every rank's parameter checksum must be the same. */
static int check_params(train_ctx *t, int epoch)
{
    uint64_t mine = halo_model_param_checksum(t->m);
    uint64_t *all = HALO_ALLOC(uint64_t, t->ranks);
    int rc = halo_comm_allgather(t->c, &mine, sizeof mine, all);
    for (int r = 1; rc == 0 && r < t->ranks; r++) {
        if (all[r] != all[0]) {
            rc = halo_errorf(HALO_ESTATE,
                             "--check: epoch %d: parameters differ between rank 0 (%016" PRIx64
                             ") and rank %d (%016" PRIx64 ")",
                             epoch, all[0], r, all[r]);
        }
    }
    halo_free(all);
    return rc;
}

/* Gathers every rank's --timeline events; rank 0 writes them (JSON Lines, docs/pipeline.md).
 * Collective; every rank returns the same code. */
static int write_timeline(train_ctx *t, pipe_res *pr)
{
    int64_t n = pr->tl.n;
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, &n, 1));
    halo_timeline_event *mine = HALO_NEW(halo_timeline_event, n > 0 ? n : 1);
    halo_timeline_event *all = HALO_NEW(halo_timeline_event, n > 0 ? n * t->ranks : 1);
    if (pr->tl.n > 0) {
        memcpy(mine, pr->tl.ev, (size_t)pr->tl.n * sizeof *mine);
    }
    for (int64_t i = pr->tl.n; i < n; i++) {
        mine[i].rank = -1; /* padding up to the longest rank's count */
    }
    int rc = halo_comm_allgather(t->c, mine, n * (int64_t)sizeof *mine, all);
    if (rc == 0 && t->rank == 0) {
        int64_t m = 0;
        for (int64_t i = 0; i < n * t->ranks; i++) {
            if (all[i].rank >= 0) {
                all[m++] = all[i];
            }
        }
        rc = halo_timeline_write(t->o->timeline, all, m);
    }
    halo_free(all);
    halo_free(mine);
    return halo_comm_agree(t->c, rc);
}

/* Empties a string builder for the next metrics line. */
static void sb_reset(halo_sb *sb)
{
    sb->len = 0;
    if (sb->buf != NULL) {
        sb->buf[0] = 0;
    }
}

/* Rank 0's records of an epoch: every rank's epoch record and the eval record in the metrics
 * file, the table row. */
static int epoch_report(train_ctx *t, train_run *r, int ep, double loss, double train_acc,
                        bool do_eval, double va, double ta)
{
    int rc = 0;
    const halo_partinfo *pi = halo_store_info(t->st);
    halo_metrics_types ty;
    halo_metrics_types_of(pi, &ty);
    for (int k = 0; r->mf != NULL && rc == 0 && k < t->ranks; k++) {
        sb_reset(&r->sb);
        halo_metrics_epoch_typed_json(&r->sb, "run", r->policy_name, &r->all_stats[k],
                                      t->nrels > 0 ? &ty : NULL);
        rc = halo_metrics_line(r->mf, r->sb.buf);
    }
    if (r->mf != NULL && rc == 0 && do_eval) {
        sb_reset(&r->sb);
        halo_metrics_eval_json(&r->sb, ep, va, ta);
        rc = halo_metrics_line(r->mf, r->sb.buf);
    }
    if (t->o->table) {
        halo_metrics_table_row(stderr, ep, r->all_stats, t->ranks, loss, train_acc, va,
                               ep == r->start_epoch);
    }
    return rc;
}

/* The epoch's plan on every rank: its fanouts (halo_plan_epoch_fanouts), its pipeline depth
 * and sampling threads (with the channels they need, announced when they change), its seed
 * order. Collective; every rank returns the same code. */
static int epoch_begin(train_ctx *t, train_run *r, int ep, int *depth, int *threads)
{
    r->pctx.epoch = ep;
    r->pctx.step = r->step;
    int rc = halo_plan_epoch_fanouts(&t->given, halo_store_info(t->st), r->pol, &r->pctx,
                                     t->layers, &t->fan);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    HALO_CHECK(epoch_pipeline(t, r->pol, &r->pctx, depth, threads, &r->mt_notice));
    if (*depth > 0) {
        HALO_CHECK(halo_train_pipe_channels(t, r->pr, *threads));
    }
    if (*depth != r->last_depth || *threads != r->last_threads) {
        halo_info("train: pipeline depth %d%s, %d sampling thread%s (from epoch %d)", *depth,
                  *depth == 0 ? " (synchronous)" : "", *threads, *threads == 1 ? "" : "s", ep);
        r->last_depth = *depth;
        r->last_threads = *threads;
    }
    halo_train_epoch_order(t, ep, r->all_orig, r->keys, r->order, r->boff);
    return 0;
}

/* The epoch's batches (halo_train_epoch_batches) under rank 0's progress bar, into acc.
 * Collective; every rank returns the same code. */
static int epoch_train(train_ctx *t, train_run *r, int ep, int depth, int threads,
                       epoch_acc *acc)
{
    halo_progress prog;
    bool bar = t->rank == 0 && t->o->table && isatty(2);
    if (bar) {
        char label[32];
        snprintf(label, sizeof label, "epoch %d", ep);
        halo_progress_begin(&prog, label, (uint64_t)r->nb);
    }
    memset(acc, 0, sizeof *acc);
    double te0 = halo_now();
    /* the copy stage only where there is something to copy: the CPU reads the rows in place;
     * and not with embeddings, whose rows are gathered on the trainer's thread just before the
     * pass (the copy stage runs ahead of the trainer) */
    const halo_model_config *mcfg = halo_model_config_of(t->m);
    bool copies = (mcfg->device == HALO_DEVICE_GPU || mcfg->copy_stage) && t->emb == NULL;
    epoch_plan plan = {t, ep, (uint64_t)r->step, r->order, r->boff, depth, copies};
    uint64_t ustep = (uint64_t)r->step;
    int rc = halo_train_epoch_batches(t, r->pr, &plan, threads, r->nb, r->total, &ustep, acc,
                                      bar ? &prog : NULL);
    r->step = (int64_t)ustep;
    acc->s.time_s = halo_now() - te0;
    if (bar) {
        halo_progress_end(&prog);
    }
    HALO_CHECK(rc);
    r->train_time += acc->s.time_s;
    r->trained++;
    acc->s.epoch = ep;
    acc->s.rank = t->rank;
    acc->s.ranks = t->ranks;
    acc->s.loss = acc->seeds > 0 ? acc->loss_sum / (double)acc->seeds : 0;
    acc->s.train_acc = acc->seeds > 0 ? (double)acc->correct / (double)acc->seeds : 0;
    return 0;
}

/* The end of an epoch on every rank: the checkpoint, --check, and the epoch_end hook (through
 * the cache when there is one: its context carries the cache and halo views the hook may
 * read) with the epoch's counts. Collective; every rank returns the same code. */
static int epoch_end(train_ctx *t, train_run *r, int ep, const epoch_acc *acc, double loss)
{
    const halo_train_opts *o = t->o;
    if (o->checkpoint != NULL && ((ep + 1) % o->checkpoint_every == 0 || ep + 1 == o->epochs)) {
        HALO_CHECK(write_checkpoint(t, r->hash, r->config, ep + 1, r->step));
    }
    if (o->check) {
        HALO_CHECK(check_params(t, ep));
    }
    halo_plan_last_epoch(&acc->s, acc->seeds, loss, &r->pctx.last_epoch);
    r->pctx.step = r->step;
    int rc;
    if (t->cache != NULL) {
        halo_cache_ctx(t->cache)->last_epoch = r->pctx.last_epoch;
        rc = halo_cache_epoch_end(t->cache, ep);
    } else {
        rc = halo_policy_epoch_end(r->pol, &r->pctx);
    }
    return halo_comm_agree(t->c, rc);
}

/* One epoch: its plan, its batches, the global loss, evaluation, records and its end.
 * Collective; every rank returns the same code. */
static int run_epoch(train_ctx *t, train_run *r, int ep, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    halo_comm *c = t->c;
    int depth, threads;
    HALO_CHECK(epoch_begin(t, r, ep, &depth, &threads));
    epoch_acc acc;
    HALO_CHECK(epoch_train(t, r, ep, depth, threads, &acc));
    double g[3] = {acc.loss_sum, (double)acc.seeds, (double)acc.correct};
    HALO_CHECK(halo_comm_allreduce_sum_f64(c, g, 3));
    double loss = g[0] / g[1], train_acc = g[2] / g[1];
    if (ep < 1024) {
        res->loss[ep] = loss;
    }
    res->epochs = ep + 1;
    res->steps = r->step;

    bool do_eval = o->eval != HALO_TRAIN_EVAL_NONE &&
                   ((ep + 1) % o->eval_every == 0 || ep + 1 == o->epochs);
    double va = -1, ta = -1;
    int rc = 0;
    if (do_eval) {
        rc = o->eval == HALO_TRAIN_EVAL_FULL ? halo_train_eval_full(t, &va, &ta)
                                             : halo_train_eval_sampled(t, ep, &va, &ta);
        if (rc < 0) {
            halo_comm_fail(c, rc); /* peers may wait in an evaluation collective */
        }
        res->val_acc = va;
        res->test_acc = ta;
    }
    HALO_CHECK(halo_comm_allgather(c, &acc.s, sizeof acc.s, r->all_stats));
    if (t->rank == 0) {
        rc = epoch_report(t, r, ep, loss, train_acc, do_eval, va, ta);
    }
    HALO_CHECK(halo_comm_agree(c, rc));
    return epoch_end(t, r, ep, &acc, loss);
}

/* Finish: the trace closed, the timeline written, the result's totals and the summary record;
 * the metrics file renamed into place. Collective; every rank returns the same code. */
static int run_finish(train_ctx *t, train_run *r, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    int rc = 0;
    if (t->trace != NULL) {
        rc = halo_trace_close(t->trace);
        t->trace = NULL;
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    if (o->timeline != NULL) {
        HALO_CHECK(write_timeline(t, r->pr));
    }
    res->mean_epoch_s = r->trained > 0 ? r->train_time / r->trained : 0;
    res->param_checksum = halo_model_param_checksum(t->m);
    if (t->emb != NULL) {
        uint64_t mine = halo_embed_checksum(t->emb);
        uint64_t *all = HALO_ALLOC(uint64_t, t->ranks);
        rc = halo_comm_allgather(t->c, &mine, sizeof mine, all);
        uint64_t h = 1469598103934665603ULL;
        for (int k = 0; k < t->ranks; k++) {
            h = (h ^ all[k]) * 1099511628211ULL;
        }
        res->embed_checksum = h;
        halo_free(all);
        HALO_CHECK(rc);
    }
    if (t->rank == 0 && r->mf != NULL) {
        sb_reset(&r->sb);
        halo_metrics_run run = {
            .policy = r->policy_name,
            .batching = halo_train_batching_name(o->batching),
            .eval = halo_train_eval_name(o->eval),
            .model = halo_model_kind_name(o->model),
            .heads = o->model == HALO_MODEL_GAT ? o->heads : 0,
            .out_heads = o->model == HALO_MODEL_GAT ? o->out_heads : 0,
            .ranks = t->ranks,
            .layers = t->layers,
            .fanouts = t->fan.fanouts,
            .threads = halo_model_config_of(t->m)->threads,
            .train_seeds = r->nt * t->ranks,
        };
        halo_metrics_summary_json(&r->sb, o, res, &run);
        rc = halo_metrics_line(r->mf, r->sb.buf);
        if (rc == 0) {
            rc = halo_metrics_close(r->mf);
        } else {
            halo_metrics_abort(r->mf);
        }
        r->mf = NULL;
    }
    return halo_comm_agree(t->c, rc);
}

int halo_train_run(halo_comm *c, const halo_train_opts *o, halo_train_result *res)
{
    train_ctx t;
    memset(&t, 0, sizeof t);
    memset(res, 0, sizeof *res);
    res->val_acc = res->test_acc = -1;
    t.c = c;
    t.o = o;
    t.rank = halo_comm_rank(c);
    t.ranks = halo_comm_size(c);
    train_run r;
    memset(&r, 0, sizeof r);
    halo_sb_init(&r.sb);
    r.last_depth = r.last_threads = -1;
    r.t = &t;
    int rc = halo_train_setup(&t, &r, res);
    for (int ep = r.start_epoch; rc == 0 && ep < o->epochs; ep++) {
        rc = run_epoch(&t, &r, ep, res);
    }
    if (rc == 0) {
        rc = run_finish(&t, &r, res);
    }
    halo_train_free(&t, &r);
    return rc;
}
