/* The trainer's side of an epoch's batches: the pipeline started over the stages, and each
 * batch's step (forward/backward, the gradient allreduce that also carries failures, Adam). */
#include "core/err.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/timer.h"
#include "train/train_internal.h"

#include <stdlib.h>
#include <string.h>

/* The featureless input rows of the slot's batch from their owners (collective: every rank,
 * none when rc < 0 or the batch has no seeds here), and the buffer of the model's input
 * gradient grown to the batch. On the trainer's thread, after the previous step's update, so
 * every depth trains on the same rows (no copy stage runs ahead with embeddings: the rows are
 * only known here). Returns rc, or the gather's error; *dinput NULL without seeds. */
static int embed_rows(train_ctx *t, batch_slot *s, int rc, float **dinput)
{
    int32_t n = s->n;
    int erc = halo_train_embed_gather(t, rc == 0 && n > 0 ? s->mb.num_input : 0, s->mb.input,
                                      s->rows);
    rc = rc < 0 ? rc : erc;
    int64_t need = (int64_t)s->mb.num_input * halo_store_feat_dim(t->st);
    if (rc == 0 && n > 0 && need > t->dcap) {
        halo_free(t->dinput);
        t->dcap = need + need / 2 + 16;
        t->dinput = HALO_ALLOC(float, t->dcap);
    }
    *dinput = n > 0 ? t->dinput : NULL;
    return rc;
}

/* Forward and backward of the slot's batch (local; nothing when rc < 0 or no seeds here). With
 * embeddings the pass also returns the input gradient into dinput (for the owners' update). */
static int pass(train_ctx *t, batch_slot *s, int64_t batch, uint64_t step, bool plan_copies,
                float *dinput)
{
    if (s->n == 0) {
        return 0;
    }
    if (t->emb != NULL) {
        halo_train_keyed_minibatch(t, &s->mb, s->keybuf, s->keycap, &s->keyed);
        return halo_model_train_forward_backward_dx(t->m, &s->keyed, s->rows, s->labels, step,
                                                    NULL, dinput);
    }
    if (!plan_copies) {
        /* no copy stage: staged here (CPU: no copies) */
        HALO_CHECK(halo_train_slot_upload(t, s, batch));
    }
    /* the loss is read after the Adam step (halo_model_last_stats), off the step's path */
    return halo_model_train_staged(t->m, s->stage, batch, step, NULL);
}

/* The gradient allreduce: this rank's gradients times its n seeds (the sum over its seeds, so
 * the allreduce sums per-seed gradients), and one more float, 1 when this rank's batch failed
 * (rc < 0). When some rank failed, every rank agrees on the message and returns it. */
static int allreduce(train_ctx *t, pipe_res *pr, int64_t batch, int rc, int32_t n)
{
    /* after the pass, which waited for its gradients: no wait here (GPU: before it, this would
     * wait for the last step's Adam upload) */
    size_t count;
    float *grad = halo_model_grads(t->m, &count);
    if (rc == 0 && n > 0) {
        float w = (float)n;
        for (size_t i = 0; i < count; i++) {
            pr->gbuf[i] = grad[i] * w;
        }
    } else {
        memset(pr->gbuf, 0, count * sizeof *pr->gbuf);
    }
    pr->gbuf[count] = rc < 0 ? 1.0f : 0.0f;
    int arc = halo_comm_allreduce_sum_f32(t->c, pr->gbuf, (int64_t)count + 1);
    if (arc < 0) {
        halo_comm_fail(t->c, arc);
    }
    if (pr->gbuf[count] != 0.0f) {
        int arc2 = halo_comm_agree(t->c, rc); /* some rank failed: all return its message */
        return arc2 < 0 ? arc2
                        : halo_errorf(HALO_ESTATE, "train: a rank flagged batch %lld as failed "
                                      "but reported no error", (long long)batch);
    }
    memcpy(grad, pr->gbuf, count * sizeof *grad);
    return 0;
}

/* The batch's counts and stage times into the epoch's record. */
static void count_batch(const train_ctx *t, const halo_pipe_item *it, bool plan_copies,
                        const halo_model_stats *ms, epoch_acc *acc)
{
    const batch_slot *s = it->data;
    acc->s.sample_s += it->end[0] - it->start[0];
    acc->s.fetch_s += it->end[1] - it->start[1];
    acc->s.sample_cpu_s += it->cpu[0];
    acc->s.fetch_cpu_s += it->cpu[1];
    acc->s.poll_cpu_s += it->poll[0] + it->poll[1];
    acc->s.copy_s += plan_copies ? it->end[2] - it->start[2] : 0.0;
    acc->s.batches++;
    acc->s.sampled_edges += halo_sample_edges(&s->mb);
    if (t->nrels > 0) {
        halo_plan_count_types(halo_store_info(t->st), t->rank, &s->mb, &acc->s);
    }
    acc->s.input_nodes += s->mb.num_input;
    acc->s.remote_nodes += s->pull.num_remote;
    acc->s.cache_hits += s->hits;
    acc->s.cache_misses += s->misses;
    acc->s.cache_evicted += s->evicted;
    acc->s.bytes_remote += s->bytes;
    acc->s.bytes_sent += s->sent;
    acc->s.messages += s->messages;
    acc->loss_sum += (double)ms->loss * s->n;
    acc->seeds += s->n;
    acc->correct += ms->correct;
}

/* The trainer's part of one batch: forward/backward, the gradient allreduce (which carries the
 * ranks' failures to the batch boundary without another collective), the embeddings' update,
 * Adam. global_n is the step's seed count over all ranks. Collective; every rank returns the
 * same code. */
static int compute_step(train_ctx *t, pipe_res *pr, const halo_pipe_item *it, int rc,
                        uint64_t step, int64_t global_n, epoch_acc *acc, int epoch,
                        bool plan_copies)
{
    batch_slot *s = it->data;
    int32_t n = s->n;
    double t0 = halo_now(), c0 = halo_thread_cpu() - halo_thread_wait_cpu();
    double p0 = halo_thread_wait_cpu();
    halo_model_stats ms = {0};
    float *dinput = NULL;
    if (t->emb != NULL) {
        rc = embed_rows(t, s, rc, &dinput);
    }
    if (rc == 0) {
        rc = pass(t, s, it->batch, step, plan_copies, dinput);
    }
    double t1 = halo_now(), c1 = halo_thread_cpu() - halo_thread_wait_cpu();
    HALO_CHECK(allreduce(t, pr, it->batch, rc, n));
    double t2 = halo_now(), c2 = halo_thread_cpu() - halo_thread_wait_cpu();
    /* the embeddings' gradients go to their owners (collective; a failure is every rank's) */
    HALO_CHECK(halo_train_embed_update(t, dinput, (float)n, 1.0f / (float)global_n));
    rc = halo_model_adam_step(t->m, 1.0f / (float)global_n);
    if (rc == 0 && n > 0) {
        rc = halo_model_last_stats(t->m, &ms);
    }
    if (rc < 0) {
        halo_comm_fail(t->c, rc); /* local, after the last collective of the step */
    }
    double t3 = halo_now(), c3 = halo_thread_cpu() - halo_thread_wait_cpu();
    acc->s.compute_s += (t1 - t0) + (t3 - t2);
    acc->s.compute_cpu_s += (c1 - c0) + (c3 - c2);
    acc->s.poll_cpu_s += halo_thread_wait_cpu() - p0;
    acc->s.allreduce_s += t2 - t1;
    count_batch(t, it, plan_copies, &ms, acc);
    if (t->o->timeline != NULL) {
        halo_timeline_add(&pr->tl, t->rank, epoch, it->batch, "compute", 0, t0, t1);
        halo_timeline_add(&pr->tl, t->rank, epoch, it->batch, "allreduce", 0, t1, t3);
    }
    return 0;
}

int halo_train_epoch_batches(train_ctx *t, pipe_res *pr, epoch_plan *pl, int threads,
                             int64_t nb, int64_t total, uint64_t *step, epoch_acc *acc,
                             halo_progress *prog)
{
    const halo_train_opts *o = t->o;
    bool global = o->batching == HALO_TRAIN_BATCH_GLOBAL;
    int64_t B = o->batch;
    stage_arg sarg[HALO_PIPE_MAX_THREADS], farg;
    void *sargp[HALO_PIPE_MAX_THREADS], *fargp[1] = {&farg};
    for (int i = 0; i < threads; i++) {
        sarg[i] = (stage_arg){pl, pl->depth > 0 ? pr->st[1 + i] : t->st,
                              pl->depth > 0 ? pr->smp[1 + i] : t->smp};
        sargp[i] = &sarg[i];
    }
    farg = (stage_arg){pl, pl->depth > 0 ? pr->st[0] : t->st, NULL};
    halo_pipe_opts po = {.depth = pl->depth, .batches = nb, .nstages = 2, .slots = pr->slotp,
                         .jitter_seed = (uint64_t)t->rank};
    po.stages[0] = (halo_pipe_stage){"sample", halo_train_stage_sample, threads, sargp};
    po.stages[1] = (halo_pipe_stage){"fetch", halo_train_stage_fetch, 1, fargp};
    if (pl->copy_stage) {
        po.stages[2] = (halo_pipe_stage){"copy", halo_train_stage_copy, 1, fargp};
        po.nstages = 3;
    }
    const char *ql = getenv("HALO_PIPE_QUEUE_LEN"); /* tests: queues of one */
    po.queue_len = ql != NULL ? atoi(ql) : 0;
    halo_pipe *p = NULL;
    int rc = halo_pipe_start(&po, &p);
    rc = halo_comm_agree(t->c, rc); /* before any stage ran: a rank without threads stops all */
    for (int64_t b = 0; rc == 0 && b < nb; b++) {
        halo_pipe_item *it = NULL;
        int prc = halo_pipe_next(p, &it);
        if (prc == 1 || it == NULL) {
            halo_comm_fail(t->c, halo_errorf(HALO_ESTATE, "train: the pipeline ended at batch "
                                             "%lld of %lld", (long long)b, (long long)nb));
        }
        int64_t left = total - b * B;
        int64_t gn = left < B ? left : B;
        if (!global) {
            gn *= t->ranks; /* equal seed counts on every rank */
        }
        halo_pipe_jitter(p, b, 99); /* tests: a random delay before the compute too */
        if (o->timeline != NULL) {
            halo_timeline_add_item(&pr->tl, p, t->rank, pl->epoch, it);
        }
        rc = compute_step(t, pr, it, prc, *step, gn, acc, pl->epoch, pl->copy_stage);
        if (rc < 0) {
            break;
        }
        halo_pipe_release(p, it);
        (*step)++;
        if (prog != NULL) {
            halo_progress_update(prog, (uint64_t)b + 1);
        }
    }
    acc->s.wait_s += p != NULL ? halo_pipe_wait_s(p) : 0;
    halo_pipe_close(p); /* the same batches on every rank: the released ones + depth */
    return rc;
}
