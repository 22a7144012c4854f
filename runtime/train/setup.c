/* The set-up of a training run on every rank: store, policy and its context, fanouts, device
 * and model, the checkpoint to resume, the cache (halo_plan_cache_open) and the --trace file,
 * the epoch order's buffers; and freeing it all. */
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/timer.h"
#include "order/order.h"
#include "train/checkpoint.h"
#include "train/train_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything that changes the weights a run produces, hashed into checkpoints. Not included:
 * epochs (a resumed run may go further), device and threads (same function; on GPU only float
 * rounding differs), evaluation and output settings. */
static uint64_t config_hash(const train_ctx *t, const char *policy_name, char *config, size_t size)
{
    const halo_train_opts *o = t->o;
    halo_sb sb;
    halo_sb_init(&sb);
    halo_sb_printf(&sb,
                   "graph=%08x nodes=%lld parts=%d batch=%lld batching=%s hidden=%d "
                   "lr=%.9g dropout=%.9g wd=%.9g seed=%llu layers=%d fanouts=%s policy=%s(%s)",
                   halo_store_info(t->st)->graph_checksum, (long long)halo_store_info(t->st)->nodes,
                   t->ranks, (long long)o->batch, halo_train_batching_name(o->batching), o->hidden,
                   o->lr, o->dropout, o->weight_decay, (unsigned long long)o->seed, t->layers,
                   o->fanouts != NULL ? o->fanouts : "policy", policy_name,
                   o->policy != NULL ? o->policy : "");
    for (int i = 0; i < o->nsets; i++) {
        halo_sb_printf(&sb, " set=%s", o->sets[i]);
    }
    if (o->model == HALO_MODEL_RGCN) {
        halo_sb_printf(&sb, " model=%s relations=%d bases=%d", halo_model_kind_name(o->model),
                       o->relations, o->bases);
    } else if (o->model == HALO_MODEL_GAT) {
        halo_sb_printf(&sb, " model=%s heads=%d out_heads=%d", halo_model_kind_name(o->model),
                       o->heads, o->out_heads);
    }
    if (t->emb != NULL) {
        halo_sb_printf(&sb, " embed=%s embed_lr=%.9g", halo_embed_optim_name(o->embed_optim),
                       o->embed_lr);
    }
    char *text = NULL;
    size_t len = 0;
    if (o->policy != NULL && halo_file_read_all(o->policy, &text, &len) == 0) {
        /* the policy's text, not its name: an edited policy is another configuration */
        halo_sb_printf(&sb, " policy_text=%016llx", (unsigned long long)halo_config_hash(text));
        halo_free(text);
    }
    uint64_t h = halo_config_hash(sb.buf);
    snprintf(config, size, "%s", sb.buf);
    halo_sb_free(&sb);
    return h;
}

/* Reads the checkpoint on rank 0 and broadcasts it; every rank returns the same code. */
static int resume_from(train_ctx *t, uint64_t hash, const char *config, int *epoch, int64_t *step)
{
    size_t count;
    float *params = halo_model_params(t->m, &count);
    halo_checkpoint ck = {.config_hash = hash,
                          .config = config,
                          .nparams = (int64_t)count,
                          .params = params,
                          .adam_m = halo_model_adam_m(t->m),
                          .adam_v = halo_model_adam_v(t->m)};
    int rc = 0;
    if (t->rank == 0) {
        rc = halo_checkpoint_read(t->o->checkpoint, &ck);
        if (rc < 0) {
            rc = halo_error_prefix(rc, "--resume");
        } else if (ck.seed != t->o->seed) {
            rc = halo_errorf(HALO_EINPUT, "%s: checkpoint of seed %llu, this run %llu",
                             t->o->checkpoint, (unsigned long long)ck.seed,
                             (unsigned long long)t->o->seed);
        }
    }
    int64_t hdr[2] = {ck.epoch, ck.step};
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", halo_errmsg());
    int64_t code = rc;
    HALO_CHECK(halo_comm_bcast(t->c, &code, sizeof code, 0));
    if (code < 0) {
        HALO_CHECK(halo_comm_bcast(t->c, msg, sizeof msg, 0));
        return halo_errorf((int)code, "%s", msg);
    }
    HALO_CHECK(halo_comm_bcast(t->c, hdr, sizeof hdr, 0));
    HALO_CHECK(halo_comm_bcast(t->c, params, (int64_t)(count * sizeof(float)), 0));
    HALO_CHECK(halo_comm_bcast(t->c, ck.adam_m, (int64_t)(count * sizeof(float)), 0));
    HALO_CHECK(halo_comm_bcast(t->c, ck.adam_v, (int64_t)(count * sizeof(float)), 0));
    halo_model_set_adam_t(t->m, hdr[1]);
    HALO_CHECK(halo_model_push_state(t->m));
    if (t->emb != NULL) {
        /* every rank its own rows (embed-rRANK.bin) */
        int erc = halo_embed_load(t->emb, t->o->checkpoint);
        HALO_CHECK(halo_comm_agree(t->c, erc < 0 ? halo_error_prefix(erc, "--resume") : 0));
    }
    *epoch = (int)hdr[0];
    *step = hdr[1];
    return 0;
}

/* Frees everything of a train_ctx. */
static void ctx_free(train_ctx *t)
{
    halo_trace_discard(t->trace); /* an unfinished trace (error path) is removed */
    if (t->cache != NULL) {
        halo_cache_close(t->cache);
    }
    halo_store_pull_free(&t->pull);
    halo_sample_free(&t->mb);
    if (t->smp != NULL) {
        halo_sampler_free(t->smp);
    }
    halo_embed_free(t->emb);
    halo_free(t->egid);
    halo_free(t->epos);
    halo_free(t->ebuf);
    halo_free(t->dinput);
    halo_free(t->labels);
    halo_free(t->borrow_id);
    halo_free(t->borrow_label);
    if (t->m != NULL) {
        halo_model_free(t->m);
    }
    if (t->st != NULL) {
        halo_store_close(t->st);
    }
}

/* The policy's context and the run's fanouts: --fanouts parsed once (every epoch takes this
 * spec), the first epoch's fanouts (which fix the model's layers), --eval-fanouts. Collective
 * (agreed on). nt: training seeds per rank. */
static int setup_plan(train_ctx *t, halo_policy *pol, halo_policy_ctx *pctx, int64_t nt)
{
    const halo_train_opts *o = t->o;
    const halo_partinfo *pi = halo_store_info(t->st);
    int64_t total = o->batching == HALO_TRAIN_BATCH_GLOBAL ? nt * t->ranks : nt;
    halo_plan_run run = {t->ranks, o->epochs, o->batch, halo_order_batches(total, o->batch)};
    halo_plan_policy_ctx(pi, halo_store_part(t->st), &run, &t->names, pctx);
    t->nrels = pi->nrels;
    int rc = 0;
    if (o->fanouts != NULL) {
        rc = halo_plan_fanouts_parse(o->fanouts, "--fanouts", pi, &t->given);
        HALO_CHECK(halo_comm_agree(t->c, rc));
    }
    rc = halo_plan_epoch_fanouts(&t->given, pi, pol, pctx, 0, &t->fan);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    t->layers = t->fan.layers;
    if (o->eval_fanouts == NULL) {
        t->eval_fan = t->fan;
        return 0;
    }
    HALO_CHECK(halo_plan_fanouts_parse(o->eval_fanouts, "--eval-fanouts", pi, &t->eval_fan));
    if (t->eval_fan.layers != t->layers) {
        return halo_errorf(HALO_EUSAGE, "--eval-fanouts: %d layers, the model has %d",
                           t->eval_fan.layers, t->layers);
    }
    return 0;
}

/* The device (--device auto without a GPU: the CPU, *gpu_notice set so that rank 0 says it
 * once) and the model. Collective (agreed on). */
static int setup_model(train_ctx *t, bool *gpu_notice)
{
    const halo_train_opts *o = t->o;
    int device, gpu, rc = 0;
    const char *lr_env = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int local_rank = lr_env != NULL ? atoi(lr_env) : t->rank;
    if (o->device == HALO_DEVICE_AUTO && halo_model_gpu_count() == 0) {
        *gpu_notice = true; /* resolve prints its notice on every rank; say it once instead */
        device = HALO_DEVICE_CPU;
        gpu = -1;
    } else {
        rc = halo_model_device_resolve(o->device, local_rank, &device, &gpu);
    }
    HALO_CHECK(halo_comm_agree(t->c, rc));
    halo_model_config mc;
    halo_model_config_default(&mc);
    mc.layers = t->layers;
    mc.in_dim = halo_store_feat_dim(t->st);
    mc.hidden = o->hidden;
    mc.kind = o->model;
    /* GraphSAGE ignores the blocks' relations */
    mc.relations = halo_plan_relations(o->relations, t->nrels);
    mc.bases = o->bases;
    mc.heads = o->heads;
    mc.out_heads = o->out_heads;
    mc.classes = halo_store_info(t->st)->classes;
    mc.dropout = (float)o->dropout;
    mc.lr = (float)o->lr;
    mc.weight_decay = (float)o->weight_decay;
    mc.seed = o->seed;
    mc.device = device;
    mc.gpu = gpu;
    mc.threads = o->threads;
    /* tests: HALO_COPY_STAGE=1 runs the GPU's copy stage on the CPU too, with real copies */
    const char *cs = getenv("HALO_COPY_STAGE");
    mc.copy_stage = cs != NULL && atoi(cs) > 0;
    if (mc.threads == 0) {
        /* the cores of this machine shared among the ranks on it (mpirun sets the local size) */
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int local = ls != NULL && atoi(ls) > 0 ? atoi(ls) : 1;
        mc.threads = cores > local ? (int)(cores / local) : 1;
    }
    rc = halo_model_create(&mc, &t->m);
    return halo_comm_agree(t->c, rc);
}

/* Set-up shared by every rank: store, policy, fanouts, device, model, labels of borrowed seeds.
 * Each step is agreed on, so a failure on one rank makes every rank return. */
static int setup(train_ctx *t, halo_policy **pol, halo_policy_ctx *pctx, bool *gpu_notice)
{
    const halo_train_opts *o = t->o;
    int rc = halo_store_open(t->c, o->pdir, &t->st);
    HALO_CHECK(halo_comm_agree(t->c, rc));
    halo_policy_opts po = {
        .path = o->policy, .params = o->sets, .nparams = o->nsets, .rank = t->rank};
    rc = halo_policy_open(&po, pol);
    HALO_CHECK(halo_comm_agree(t->c, rc));

    const halo_part *pt = halo_store_part(t->st);
    int64_t nt[2] = {pt->num_train, -pt->num_train};
    HALO_CHECK(halo_comm_allreduce_max_i64(t->c, nt, 2));
    if (nt[0] != -nt[1]) {
        return halo_errorf(HALO_EINPUT,
                           "%s: parts hold different numbers of training seeds "
                           "(%lld to %lld); every rank must run the same number of batches",
                           o->pdir, (long long)-nt[1], (long long)nt[0]);
    }
    if (nt[0] == 0) {
        return halo_errorf(HALO_EINPUT, "%s: no training seeds", o->pdir);
    }
    HALO_CHECK(setup_plan(t, *pol, pctx, nt[0]));
    HALO_CHECK(setup_model(t, gpu_notice));
    HALO_CHECK(halo_comm_agree(t->c, halo_train_embed_setup(t)));
    t->smp = halo_sampler_new();
    rc = halo_train_borrow_labels(t);
    return halo_comm_agree(t->c, rc);
}

/* Opens the --trace file of this rank and writes its halo record. */
static int open_trace(train_ctx *t, const halo_plan_halo *h)
{
    const halo_part *pt = halo_store_part(t->st);
    char path[4200];
    if (t->ranks > 1) {
        snprintf(path, sizeof path, "%s.r%d", t->o->trace, t->rank);
    } else {
        snprintf(path, sizeof path, "%s", t->o->trace);
    }
    HALO_CHECK(halo_trace_create(path, t->ranks, halo_store_feat_dim(t->st),
                                 halo_store_info(t->st)->nodes, &t->trace));
    return halo_trace_put_halo(t->trace, t->rank, pt->num_halo, pt->halo, pt->halo_deg, h->owner,
                               h->vip);
}

/* Batch b of epoch ep for the look-ahead: the epoch order at its first batch, then the batch
 * sampled with the first epoch's fanouts (collective: every rank samples every batch). */
static int ahead_sample(void *arg, int ep, int64_t b, const halo_minibatch **mb)
{
    train_run *r = arg;
    train_ctx *t = r->t;
    if (b == 0) {
        halo_train_epoch_order(t, ep, r->all_orig, r->keys, r->order, r->boff);
    }
    halo_sample_key k = {t->o->seed, ep, b};
    *mb = &t->mb;
    return halo_train_sample(t, t->st, t->smp, &t->fan, &k, r->order + r->boff[b],
                             (int32_t)(r->boff[b + 1] - r->boff[b]), &t->mb);
}

/* Opens the remote-feature cache (halo_plan_cache_open; with the run's look-ahead when the
 * policy asks for next-use hints), pulls its initial contents and opens the --trace file
 * (collective: every rank pulls, possibly nothing). */
static int setup_cache(train_ctx *t, train_run *r)
{
    const halo_store *st = t->st;
    const halo_part *pt = halo_store_part(st);
    halo_cache_future *fut = NULL;
    halo_plan_halo h = {0};
    int rc = 0;
    if (halo_plan_cache_lookahead(r->pol)) {
        fut = halo_cache_future_new();
        halo_plan_batches src = {.sample = ahead_sample,
                                 .arg = r,
                                 .first_epoch = r->start_epoch,
                                 .epochs = t->o->epochs,
                                 .batches = r->nb,
                                 .lo = halo_store_start(st),
                                 .hi = halo_store_end(st)};
        rc = halo_comm_agree(t->c, halo_plan_lookahead(&src, fut));
    }
    if (rc == 0) {
        halo_plan_run run = {t->ranks, t->o->epochs, t->o->batch, r->nb};
        halo_plan_cache_opts co = {.pol = r->pol,
                                   .pi = halo_store_info(st),
                                   .pt = pt,
                                   .rank = t->rank,
                                   .ranks = t->ranks,
                                   .feat_dim = halo_store_feat_dim(st),
                                   .run = &run,
                                   .fan = &t->fan,
                                   .ctx = &r->pctx};
        rc = halo_plan_cache_open(&co, fut, &h, &t->cache);
    } else {
        halo_cache_future_free(fut);
    }
    rc = halo_comm_agree(t->c, rc);
    if (rc == 0) {
        const int32_t *ids = NULL;
        int64_t n = t->cache != NULL ? halo_cache_init_ids(t->cache, &ids) : 0;
        int64_t nf = n * halo_store_feat_dim(st);
        float *rows = HALO_ALLOC(float, nf > 0 ? nf : 1);
        rc = halo_store_pull_rows(t->st, ids, n, rows, &t->pull);
        if (rc == 0 && n > 0) {
            rc = halo_cache_init_fill(t->cache, rows);
        }
        halo_free(rows);
        if (rc == 0 && t->o->trace != NULL) {
            rc = open_trace(t, &h);
        }
        rc = halo_comm_agree(t->c, rc);
    }
    halo_plan_halo_free(&h);
    return rc;
}

/* The epoch order's sizes and buffers; with global batching every rank's seeds' input-graph
 * ids, gathered once. Collective. */
static int setup_order(train_ctx *t, train_run *r)
{
    const halo_part *pt = halo_store_part(t->st);
    bool global = t->o->batching == HALO_TRAIN_BATCH_GLOBAL;
    r->nt = pt->num_train;
    r->total = global ? r->nt * t->ranks : r->nt;
    r->nb = halo_order_batches(r->total, t->o->batch);
    if (global) {
        const int64_t *orig = halo_store_orig_ids(t->st);
        int64_t *mine = HALO_ALLOC(int64_t, r->nt);
        for (int64_t i = 0; i < r->nt; i++) {
            mine[i] = orig[pt->train[i]];
        }
        r->all_orig = HALO_ALLOC(int64_t, r->total);
        int rc = halo_comm_allgather(t->c, mine, r->nt * (int64_t)sizeof(int64_t), r->all_orig);
        halo_free(mine);
        HALO_CHECK(rc);
    }
    r->keys = HALO_ALLOC(halo_order_key, r->total);
    r->order = HALO_ALLOC(int32_t, r->nt);
    r->boff = HALO_ALLOC(int64_t, r->nb + 1);
    r->all_stats = HALO_ALLOC(halo_epoch_stats, t->ranks);
    return 0;
}

/* The pipeline's slots and gradient buffer, and the timeline's origin: the earliest clock of
 * all ranks, one time axis. Collective. */
static int setup_pipe(train_ctx *t, train_run *r)
{
    pipe_res *pr = r->pr = HALO_NEW(pipe_res, 1);
    for (int i = 0; i <= HALO_PIPE_MAX_DEPTH; i++) {
        pr->slotp[i] = &pr->slot[i];
    }
    size_t nparams;
    halo_model_grads(t->m, &nparams);
    pr->gbuf = HALO_ALLOC(float, nparams + 1);
    double origin = -halo_now();
    HALO_CHECK(halo_comm_allreduce_max_f64(t->c, &origin, 1));
    halo_timeline_init(&pr->tl, -origin);
    return 0;
}

/* Rank 0's start-up line (and the CPU notice of --device auto). */
static void announce(const train_ctx *t, const train_run *r, const halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    if (r->gpu_notice) {
        halo_notice("--device auto: no GPU found, training on the CPU");
    }
    char fo[256] = "";
    bool named = o->fanouts != NULL && t->nrels > 0;
    if (named) {
        snprintf(fo, sizeof fo, "%s", o->fanouts);
    }
    for (int l = 0; !named && l < t->layers; l++) {
        size_t len = strlen(fo);
        snprintf(fo + len, sizeof fo - len, "%s%d", l ? "," : "", t->fan.fanouts[l]);
    }
    halo_info("train: %d rank%s, device %s, policy %s, fanouts %s, batch %lld (%s), model %s, "
              "hidden %d, %lld training seeds per rank, %lld batches per epoch, epochs %d..%d",
              t->ranks, t->ranks == 1 ? "" : "s", res->device, r->policy_name, fo, (long long)o->batch,
              halo_train_batching_name(o->batching),
              halo_model_kind_name(halo_model_config_of(t->m)->kind), o->hidden,
              (long long)r->nt, (long long)r->nb, r->start_epoch, o->epochs - 1);
}

int halo_train_setup(train_ctx *t, train_run *r, halo_train_result *res)
{
    const halo_train_opts *o = t->o;
    halo_comm *c = t->c;
    int rc = 0;
    HALO_CHECK(setup(t, &r->pol, &r->pctx, &r->gpu_notice));
    r->policy_name = halo_policy_name(r->pol);
    snprintf(res->device, sizeof res->device, "%s",
             halo_model_device_name(halo_model_config_of(t->m)->device));
    r->hash = config_hash(t, r->policy_name, r->config, sizeof r->config);
    if (o->resume) {
        HALO_CHECK(resume_from(t, r->hash, r->config, &r->start_epoch, &r->step));
    }
    res->start_epoch = r->start_epoch;
    res->epochs = r->start_epoch;
    res->steps = r->step;
    if (t->rank == 0 && o->metrics != NULL) {
        rc = halo_metrics_open(o->metrics, &r->mf);
    }
    HALO_CHECK(halo_comm_agree(c, rc));
    if (o->netem != NULL) {
        halo_netem ne;
        HALO_CHECK(halo_netem_parse(o->netem, &ne));
        halo_comm_set_netem(c, &ne);
    }

    HALO_CHECK(setup_order(t, r));
    HALO_CHECK(setup_cache(t, r));
    HALO_CHECK(setup_pipe(t, r));
    if (t->rank == 0) {
        announce(t, r, res);
    }
    return 0;
}

void halo_train_free(train_ctx *t, train_run *r)
{
    if (r->mf != NULL) {
        halo_metrics_abort(r->mf);
    }
    halo_sb_free(&r->sb);
    halo_free(r->all_stats);
    halo_free(r->boff);
    halo_free(r->order);
    halo_free(r->keys);
    halo_free(r->all_orig);
    if (r->pr != NULL) {
        /* store clones before the store, stages before the model */
        halo_train_pipe_free(r->pr, t->m);
        halo_free(r->pr);
    }
    ctx_free(t); /* before the policy: the cache calls its hooks */
    if (r->pol != NULL) {
        halo_policy_close(r->pol);
    }
}
