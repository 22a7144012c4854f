/* halo train's options: their defaults, the names of their enumerations, and the check of a
 * whole set before any work (the forms that need the partition are checked at set-up). */
#include "train/train.h"

#include "core/err.h"
#include "embed/embed.h"
#include "model/model.h"
#include "pipe/pipe.h"
#include "plan/plan.h"

#include <string.h>

void halo_train_opts_default(halo_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 3;
    o->batching = HALO_TRAIN_BATCH_LOCAL;
    halo_model_run_defaults(HALO_MODEL_SAGE, &o->hidden, &o->lr, &o->batch);
    o->dropout = 0.5;
    o->seed = 1;
    o->device = HALO_DEVICE_AUTO;
    o->eval = HALO_TRAIN_EVAL_SAMPLED;
    o->eval_every = 1;
    o->eval_batch = 2000;
    o->checkpoint_every = 1;
    o->table = true;
    o->depth = -1;
    o->embed_optim = HALO_EMBED_ADAM;
    o->embed_lr = 0.01;
    o->heads = 4;
    o->out_heads = 1;
}

void halo_train_opts_for_model(halo_train_opts *o)
{
    halo_model_run_defaults(o->model, &o->hidden, &o->lr, &o->batch);
}

const char *halo_train_batching_name(int b)
{
    return b == HALO_TRAIN_BATCH_GLOBAL ? "global" : "local";
}

int halo_train_parse_batching(const char *s, int *out)
{
    if (strcmp(s, "local") == 0) {
        *out = HALO_TRAIN_BATCH_LOCAL;
    } else if (strcmp(s, "global") == 0) {
        *out = HALO_TRAIN_BATCH_GLOBAL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--batching: '%s' is not local or global", s);
    }
    return 0;
}

const char *halo_train_eval_name(int e)
{
    return e == HALO_TRAIN_EVAL_FULL ? "full" : e == HALO_TRAIN_EVAL_SAMPLED ? "sampled" : "none";
}

int halo_train_parse_eval(const char *s, int *out)
{
    if (strcmp(s, "sampled") == 0) {
        *out = HALO_TRAIN_EVAL_SAMPLED;
    } else if (strcmp(s, "full") == 0) {
        *out = HALO_TRAIN_EVAL_FULL;
    } else if (strcmp(s, "none") == 0) {
        *out = HALO_TRAIN_EVAL_NONE;
    } else {
        return halo_errorf(HALO_EUSAGE, "--eval: '%s' is not sampled, full or none", s);
    }
    return 0;
}

int halo_train_opts_check(const halo_train_opts *o)
{
    if (o->pdir == NULL) {
        return halo_errorf(HALO_EUSAGE, "train: a partition directory is required");
    }
    if (o->epochs < 0) {
        return halo_errorf(HALO_EUSAGE, "--epochs: must be >= 0, got %d", o->epochs);
    }
    if (o->batch < 1) {
        return halo_errorf(HALO_EUSAGE, "--batch: must be >= 1, got %lld", (long long)o->batch);
    }
    if (o->eval_batch < 1) {
        return halo_errorf(HALO_EUSAGE, "--eval-batch: must be >= 1, got %lld",
                           (long long)o->eval_batch);
    }
    if (o->hidden < 1) {
        return halo_errorf(HALO_EUSAGE, "--hidden: must be >= 1, got %d", o->hidden);
    }
    if (!(o->lr > 0)) {
        return halo_errorf(HALO_EUSAGE, "--lr: must be > 0, got %g", o->lr);
    }
    if (!(o->embed_lr > 0)) {
        return halo_errorf(HALO_EUSAGE, "--embed-lr: must be > 0, got %g", o->embed_lr);
    }
    if (!(o->dropout >= 0 && o->dropout < 1)) {
        return halo_errorf(HALO_EUSAGE, "--dropout: must be in [0, 1), got %g", o->dropout);
    }
    if (o->eval_every < 1 || o->checkpoint_every < 1) {
        return halo_errorf(HALO_EUSAGE, "--eval-every and --checkpoint-every must be >= 1");
    }
    if (o->resume && o->checkpoint == NULL) {
        return halo_errorf(HALO_EUSAGE, "--resume needs --checkpoint DIR");
    }
    if (o->depth < -1 || o->depth > HALO_PIPE_MAX_DEPTH) {
        return halo_errorf(HALO_EUSAGE, "--depth: must be in 0..%d, got %d", HALO_PIPE_MAX_DEPTH,
                           o->depth);
    }
    if (o->sampler_threads < 0 || o->sampler_threads > HALO_PIPE_MAX_THREADS) {
        return halo_errorf(HALO_EUSAGE,
                           "--sampler-threads: must be in 0..%d (0: the policy's), got %d",
                           HALO_PIPE_MAX_THREADS, o->sampler_threads);
    }
    if (o->threads < 0) {
        return halo_errorf(HALO_EUSAGE, "--threads: must be >= 0, got %d", o->threads);
    }
    if (o->heads < 1 || o->heads > 256) {
        return halo_errorf(HALO_EUSAGE, "--heads: must be in 1..256, got %d", o->heads);
    }
    if (o->out_heads < 1 || o->out_heads > 256) {
        return halo_errorf(HALO_EUSAGE, "--out-heads: must be in 1..256, got %d", o->out_heads);
    }
    /* the per-relation form ("cites=10;*=5") needs the partition's relation names: checked in
     * the set-up */
    halo_plan_fanouts f;
    if (o->fanouts != NULL && strpbrk(o->fanouts, "=;*") == NULL) {
        HALO_CHECK(halo_plan_fanouts_parse(o->fanouts, "--fanouts", NULL, &f));
    }
    if (o->eval_fanouts != NULL && strpbrk(o->eval_fanouts, "=;*") == NULL) {
        HALO_CHECK(halo_plan_fanouts_parse(o->eval_fanouts, "--eval-fanouts", NULL, &f));
    }
    return 0;
}
