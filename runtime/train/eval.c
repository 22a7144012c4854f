/* Validation and test accuracy, distributed: each rank evaluates the nodes it owns, the counts are
 * summed over ranks. Sampled inference, or layer-wise full-neighbour inference. */
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "graph/graph.h"
#include "train/eval.h"
#include "train/train_internal.h"

#include <string.h>

/* Owned nodes of split valid or test, ascending. */
static int32_t *eval_nodes(const halo_store *st, int64_t *n)
{
    const halo_part *pt = halo_store_part(st);
    int64_t k = 0;
    for (int64_t i = 0; i < pt->nodes; i++) {
        k += pt->split[i] == HALO_SPLIT_VALID || pt->split[i] == HALO_SPLIT_TEST;
    }
    int32_t *ids = HALO_ALLOC(int32_t, k > 0 ? k : 1);
    k = 0;
    for (int64_t i = 0; i < pt->nodes; i++) {
        if (pt->split[i] == HALO_SPLIT_VALID || pt->split[i] == HALO_SPLIT_TEST) {
            ids[k++] = (int32_t)(halo_store_start(st) + i);
        }
    }
    *n = k;
    return ids;
}

/* Sums [val correct, val total, test correct, test total] over ranks into accuracies. */
static int finish(halo_comm *c, int64_t *cnt, double *val_acc, double *test_acc)
{
    HALO_CHECK(halo_comm_allreduce_sum_i64(c, cnt, 4));
    *val_acc = cnt[1] > 0 ? (double)cnt[0] / (double)cnt[1] : 0;
    *test_acc = cnt[3] > 0 ? (double)cnt[2] / (double)cnt[3] : 0;
    return 0;
}

/* Counts a prediction of an owned node into cnt. */
static void count(const halo_store *st, int32_t gid, int32_t pred, int64_t *cnt)
{
    int64_t row = gid - halo_store_start(st);
    int s = halo_store_part(st)->split[row];
    int base = s == HALO_SPLIT_VALID ? 0 : 2;
    cnt[base] += pred == halo_store_part(st)->label[row];
    cnt[base + 1]++;
}

/* Sampled inference: batches of eval_batch owned nodes, the same number of (possibly empty)
 * collective sampling and pull calls on every rank. Draws keyed by a seed of their own, so
 * evaluation never shares draws with training. */
int halo_train_eval_sampled(train_ctx *t, int epoch, double *val_acc, double *test_acc)
{
    halo_store *st = t->st;
    int64_t n;
    int32_t *ids = eval_nodes(st, &n);
    int64_t B = t->o->eval_batch;
    int64_t nb = (n + B - 1) / B;
    int32_t *pred = HALO_ALLOC(int32_t, B);
    int64_t cnt[4] = {0};
    int rc = 0;
    HALO_TRY(halo_comm_allreduce_max_i64(t->c, &nb, 1));
    uint64_t seed = halo_mix64(t->o->seed ^ 0x6576616c75617465ULL); /* "evaluate" */
    for (int64_t b = 0; b < nb; b++) {
        int64_t s0 = b * B < n ? b * B : n;
        int64_t s1 = s0 + B < n ? s0 + B : n;
        halo_sample_key k = {seed, epoch, b};
        HALO_TRY(halo_train_sample(t, st, t->smp, &t->eval_fan, &k, ids + s0,
                                   (int32_t)(s1 - s0), &t->mb));
        float *rows = halo_model_input_buffer(t->m, t->mb.num_input > 0 ? t->mb.num_input : 1);
        HALO_TRY(halo_store_pull_rows(st, t->mb.input, t->mb.num_input, rows, &t->pull));
        HALO_TRY(halo_train_embed_gather(t, t->mb.num_input, t->mb.input, rows));
        if (t->mb.num_seeds > 0) {
            HALO_TRY(halo_model_infer(t->m, &t->mb, rows, NULL, NULL, pred, NULL));
            for (int32_t i = 0; i < t->mb.num_seeds; i++) {
                count(st, t->mb.seeds[i], pred[i], cnt);
            }
        }
    }
    HALO_TRY(finish(t->c, cnt, val_acc, test_acc));
fail:
    halo_free(pred);
    halo_free(ids);
    return rc;
}

/* Local source number of a global id in the block [owned nodes | halo nodes]. */
static int64_t src_index(const halo_store *st, int32_t gid)
{
    if (halo_store_is_local(st, gid)) {
        return gid - halo_store_start(st);
    }
    const int32_t *h = halo_store_part(st)->halo;
    int64_t lo = 0, hi = halo_store_part(st)->num_halo;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (h[mid] < gid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < halo_store_part(st)->num_halo && h[lo] == gid ? halo_store_part(st)->nodes + lo
                                                              : -1;
}

/* Full-neighbour layer-wise inference. Each rank computes every layer for all the nodes it owns
 * over one block [owned | halo] x all in-edges of the part; between layers the halo nodes' rows
 * of the previous layer come from their owners (one exchange of requests, one of rows). Cost per
 * rank: layers x (its in-edges + its nodes) of work, (owned + halo) x max(feat_dim, hidden)
 * floats of memory, and one pull of halo rows per layer. */
int halo_train_eval_full(train_ctx *t, double *val_acc, double *test_acc)
{
    halo_store *st = t->st;
    const halo_part *pt = halo_store_part(st);
    int64_t n = pt->nodes, H = pt->num_halo, S = n + H;
    int64_t cnt[4] = {0};
    halo_block blk;
    memset(&blk, 0, sizeof blk);
    blk.num_dst = (int32_t)n;
    blk.num_src = (int32_t)S;
    blk.num_edges = pt->edges;
    blk.indptr = HALO_ALLOC(int64_t, n + 1);
    blk.indices = HALO_ALLOC(int32_t, pt->edges > 0 ? pt->edges : 1);
    blk.src_gid = HALO_ALLOC(int32_t, S > 0 ? S : 1);
    float *hs = NULL, *hd = NULL;
    int rc = 0;
    for (int64_t i = 0; i <= n; i++) {
        blk.indptr[i] = pt->indptr[i] - pt->indptr[0];
    }
    blk.etype = pt->etype != NULL ? pt->etype + pt->indptr[0] : NULL; /* RGCN's relations */
    for (int64_t e = 0; e < pt->edges; e++) {
        int64_t s = src_index(st, pt->indices[pt->indptr[0] + e]);
        if (s < 0) {
            rc = halo_errorf(HALO_EINPUT,
                             "%s/part-%d: source %d of an edge is neither owned nor "
                             "in halo.i32",
                             t->o->pdir, t->rank, pt->indices[pt->indptr[0] + e]);
            break;
        }
        blk.indices[e] = (int32_t)s;
    }
    HALO_TRY(halo_comm_agree(t->c, rc));
    for (int64_t i = 0; i < n; i++) {
        blk.src_gid[i] = (int32_t)(halo_store_start(st) + i);
    }
    if (H > 0) {
        memcpy(blk.src_gid + n, pt->halo, (size_t)H * sizeof(int32_t));
    }
    hs = HALO_ALLOC(float, S * halo_store_feat_dim(st) > 0 ? S * halo_store_feat_dim(st) : 1);
    HALO_TRY(halo_store_pull_rows(st, blk.src_gid, S, hs, &t->pull));
    HALO_TRY(halo_train_embed_gather(t, S, blk.src_gid, hs));
    for (int l = 0; l < t->layers; l++) {
        int out = halo_model_layer_out(t->m, l);
        bool last = l + 1 == t->layers;
        /* the next layer's sources: owned rows computed here, halo rows fetched after */
        hd = HALO_ALLOC(float, (last ? n : S) * out > 0 ? (last ? n : S) * out : 1);
        if (n > 0) {
            HALO_TRY(halo_model_layer_forward(t->m, l, &blk, hs, hd));
        }
        if (!last) {
            HALO_TRY(halo_train_fetch_rows(t->c, st, pt->halo, H, hd, (size_t)out * sizeof(float),
                                           hd + n * out));
        }
        halo_free(hs);
        hs = hd;
        hd = NULL;
    }
    int C = halo_model_layer_out(t->m, t->layers - 1);
    for (int64_t i = 0; i < n; i++) {
        int s = pt->split[i];
        if (s != HALO_SPLIT_VALID && s != HALO_SPLIT_TEST) {
            continue;
        }
        const float *y = hs + i * C;
        int32_t best = 0;
        for (int k = 1; k < C; k++) {
            if (y[k] > y[best]) {
                best = k;
            }
        }
        count(st, (int32_t)(halo_store_start(st) + i), best, cnt);
    }
    HALO_TRY(finish(t->c, cnt, val_acc, test_acc));
fail:
    halo_free(hs);
    halo_free(hd);
    halo_free(blk.indptr);
    halo_free(blk.indices);
    halo_free(blk.src_gid);
    return rc;
}
