/* The trainer's side of heterogeneous graphs: the learnable embeddings of featureless node
 * types (runtime/embed), gathered from their owners for every batch and updated there from the
 * model's input gradient (docs/hetero.md). */
#include "core/err.h"
#include "core/mem.h"
#include "plan/plan.h"
#include "train/train_internal.h"

#include <string.h>

int halo_train_embed_setup(train_ctx *t)
{
    const halo_partinfo *pi = halo_store_info(t->st);
    const halo_part *pt = halo_store_part(t->st);
    int dim = halo_store_feat_dim(t->st);
    if (!halo_plan_featless(pi, t->featless)) {
        return 0;
    }
    uint8_t *has = HALO_ALLOC(uint8_t, pt->nodes > 0 ? pt->nodes : 1);
    int64_t *key = HALO_ALLOC(int64_t, pt->nodes > 0 ? pt->nodes : 1);
    const int64_t *orig = halo_store_orig_ids(t->st);
    for (int64_t i = 0; i < pt->nodes; i++) {
        has[i] = t->featless[pt->ntype[i]];
        key[i] = orig[pt->start + i];
    }
    halo_embed_config ec;
    halo_embed_config_default(&ec);
    ec.dim = dim;
    ec.optim = t->o->embed_optim;
    ec.lr = (float)t->o->embed_lr;
    ec.seed = t->o->seed;
    int rc = halo_embed_create(t->c, &ec, pi->start, has, key, &t->emb);
    halo_free(key);
    halo_free(has);
    return rc;
}

int halo_train_embed_gather(train_ctx *t, int64_t n, const int32_t *gid, float *rows)
{
    if (t->emb == NULL) {
        return 0;
    }
    const halo_partinfo *pi = halo_store_info(t->st);
    int dim = halo_store_feat_dim(t->st);
    int64_t ne = 0;
    for (int64_t i = 0; i < n; i++) {
        ne += t->featless[halo_partinfo_node_type(pi, gid[i])];
    }
    if (ne > t->ecap) {
        halo_free(t->egid);
        halo_free(t->epos);
        halo_free(t->ebuf);
        t->ecap = ne + ne / 2 + 16;
        t->egid = HALO_ALLOC(int32_t, t->ecap);
        t->epos = HALO_ALLOC(int64_t, t->ecap);
        t->ebuf = HALO_ALLOC(float, t->ecap * dim);
    }
    t->ne = 0;
    for (int64_t i = 0; i < n; i++) {
        if (t->featless[halo_partinfo_node_type(pi, gid[i])]) {
            t->egid[t->ne] = gid[i];
            t->epos[t->ne++] = i;
        }
    }
    int rc = halo_embed_gather(t->emb, t->ne, t->egid, t->ebuf);
    if (rc < 0) {
        t->ne = 0;
        return rc;
    }
    for (int64_t i = 0; i < t->ne; i++) {
        memcpy(rows + t->epos[i] * dim, t->ebuf + i * dim, (size_t)dim * sizeof(float));
    }
    return 0;
}

int halo_train_embed_update(train_ctx *t, const float *d_input, float w, float grad_scale)
{
    if (t->emb == NULL) {
        return 0;
    }
    int dim = halo_store_feat_dim(t->st);
    int64_t ne = d_input != NULL ? t->ne : 0;
    for (int64_t i = 0; i < ne; i++) {
        const float *g = d_input + t->epos[i] * dim;
        float *o = t->ebuf + i * dim;
        for (int j = 0; j < dim; j++) {
            o[j] = g[j] * w; /* the rank's mean -> its sum over seeds, as the dense gradient */
        }
    }
    int rc = halo_embed_update(t->emb, ne, t->egid, t->ebuf, NULL, grad_scale);
    t->ne = 0;
    return rc;
}
