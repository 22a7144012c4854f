/* Rows of a table owned by other ranks (one batched request and reply per peer) and the labels
 * of training seeds this rank holds but does not own. Shared by the epoch loop (train.c) and the
 * evaluation (eval.c), which otherwise do not call each other's code. */
#include "core/err.h"
#include "core/mem.h"
#include "core/sort.h"
#include "train/train_internal.h"

#include <string.h>

int halo_train_fetch_rows(halo_comm *c, const halo_store *st, const int32_t *ids, int64_t n,
                          const void *table, size_t row_bytes, void *out)
{
    int P = halo_store_ranks(st);
    int64_t *off = HALO_NEW(int64_t, P + 1);
    int64_t *rep_off = HALO_NEW(int64_t, P + 1);
    halo_xchg req, rep;
    memset(&req, 0, sizeof req);
    memset(&rep, 0, sizeof rep);
    char *reply = NULL;
    int rc = 0;
    /* ids are sorted, owners own contiguous ranges: the requests to peer p are one run */
    for (int64_t i = 0; i < n; i++) {
        int p = halo_store_owner(st, ids[i]);
        if (p < 0) {
            rc = halo_errorf(HALO_ESTATE, "train: node %d has no owner", ids[i]);
            goto fail;
        }
        off[p + 1] += (int64_t)sizeof(int32_t);
    }
    for (int p = 0; p < P; p++) {
        off[p + 1] += off[p];
    }
    HALO_TRY(halo_comm_xchg_start(c, &req, ids, off));
    HALO_TRY(halo_comm_xchg_wait(c, &req));
    /* answer each peer's ids with rows of our table, in the order asked */
    int64_t nin = req.recv_off[P] / (int64_t)sizeof(int32_t);
    reply = HALO_ALLOC(char, nin > 0 ? (size_t)nin * row_bytes : 1);
    const int32_t *asked = (const int32_t *)req.recv;
    for (int64_t i = 0; i < nin; i++) {
        int64_t row = (int64_t)asked[i] - halo_store_start(st);
        if (row < 0 || row >= halo_store_end(st) - halo_store_start(st)) {
            rc = halo_errorf(HALO_ESTATE, "train: asked for node %d, not owned here", asked[i]);
            goto fail;
        }
        memcpy(reply + (size_t)i * row_bytes, (const char *)table + (size_t)row * row_bytes,
               row_bytes);
    }
    for (int p = 0; p <= P; p++) {
        rep_off[p] = req.recv_off[p] / (int64_t)sizeof(int32_t) * (int64_t)row_bytes;
    }
    HALO_TRY(halo_comm_xchg_start(c, &rep, reply, rep_off));
    HALO_TRY(halo_comm_xchg_wait(c, &rep));
    if (rep.recv_off[P] != n * (int64_t)row_bytes) {
        rc = halo_errorf(HALO_ESTATE, "train: got %lld bytes of rows, expected %lld",
                         (long long)rep.recv_off[P], (long long)(n * (int64_t)row_bytes));
        goto fail;
    }
    if (n > 0) {
        memcpy(out, rep.recv, (size_t)n * row_bytes);
    }
fail:
    halo_xchg_free(&req);
    halo_xchg_free(&rep);
    halo_free(reply);
    halo_free(rep_off);
    halo_free(off);
    return rc;
}

/* Labels of the training seeds this rank holds but does not own (DistDGL's force-even split
 * lends a few): pulled from their owners once, kept sorted for lookup. Collective. */
int halo_train_borrow_labels(train_ctx *t)
{
    const halo_part *pt = halo_store_part(t->st);
    int64_t nb = 0;
    for (int64_t i = 0; i < pt->num_train; i++) {
        nb += !halo_store_is_local(t->st, pt->train[i]);
    }
    t->nborrow = nb;
    t->borrow_id = HALO_ALLOC(int32_t, nb > 0 ? nb : 1);
    t->borrow_label = HALO_ALLOC(int32_t, nb > 0 ? nb : 1);
    nb = 0;
    for (int64_t i = 0; i < pt->num_train; i++) {
        if (!halo_store_is_local(t->st, pt->train[i])) {
            t->borrow_id[nb++] = pt->train[i];
        }
    }
    halo_sort_i32(t->borrow_id, nb);
    return halo_train_fetch_rows(t->c, t->st, t->borrow_id, nb, pt->label, sizeof(int32_t),
                                 t->borrow_label);
}

int32_t halo_train_seed_label(const train_ctx *t, int32_t gid)
{
    if (halo_store_is_local(t->st, gid)) {
        return halo_store_part(t->st)->label[gid - halo_store_start(t->st)];
    }
    int64_t lo = 0, hi = t->nborrow;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (t->borrow_id[mid] < gid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < t->nborrow && t->borrow_id[lo] == gid ? t->borrow_label[lo] : -1;
}
