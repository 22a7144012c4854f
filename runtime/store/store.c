/* Distributed graph store: opening a part, owner lookup, distributed sampling and feature pulls. */
#include "store/store.h"
#include "store/store_impl.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/timer.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>




/* Bytes of the header of a sampling request to one peer. */
#define REQ_HDR 32

/* Exchange buffers and per-step arrays of one store, reused between calls. */
struct store_scratch {
    halo_xchg xreq;   /* request exchange */
    halo_xchg xrep;   /* reply exchange */
    halo_rows_xchg xrows; /* replies of a pull: feature rows from owner to destination */
    int64_t *row_off; /* [ranks+1] rows per peer, as offsets into dest / sdisp */
    int64_t *send_off;/* [ranks+1] request byte offsets */
    int64_t *rep_off; /* [ranks+1] reply byte offsets */
    int64_t *cnt;     /* [ranks] items per peer */
    int64_t *cur;     /* [ranks] cursors per peer */
    int64_t *cur2;    /* [ranks] second cursors per peer */
    halo_buf send;         /* request bytes */
    halo_buf rep;          /* reply bytes */
    halo_buf owner;        /* int32 owner per frontier node / fetched id */
    halo_buf lrow, lkey, loff, lnbrs; /* local sampling: rows, keys, offsets, neighbours */
    halo_buf srow, skey, soff;        /* serving a peer: rows, keys, offsets */
    halo_buf moff, mnbrs;             /* merged offsets and neighbours of a layer */
    halo_buf letype, metype;          /* typed sampling: relations of lnbrs and of mnbrs */
    halo_buf dest;         /* int64 byte displacement of each fetched row's destination */
    halo_buf sdisp;        /* int64 byte displacement in feat of each row served */
    halo_buf tstage;       /* typed part: the rows served, padded to feat_dim (row_source) */
};

static store_scratch *scratch_new(int ranks)
{
    store_scratch *s = HALO_NEW(store_scratch, 1);
    s->send_off = HALO_NEW(int64_t, ranks + 1);
    s->rep_off = HALO_NEW(int64_t, ranks + 1);
    s->row_off = HALO_NEW(int64_t, ranks + 1);
    s->cnt = HALO_NEW(int64_t, ranks);
    s->cur = HALO_NEW(int64_t, ranks);
    s->cur2 = HALO_NEW(int64_t, ranks);
    return s;
}

halo_store *halo_store_clone(halo_store *parent, halo_comm *c)
{
    halo_store *st = HALO_NEW(halo_store, 1);
    *st = *parent;
    memset(&st->stats, 0, sizeof st->stats);
    memset(&st->orig_map, 0, sizeof st->orig_map);
    st->comm = c;
    st->parent = parent;
    st->scr = scratch_new(st->ranks);
    st->peer_feat = NULL;
    st->direct = 0;
    if (parent->direct) {
        halo_store_set_direct(st, 1); /* maps exist already: cannot fail */
    }
    return st;
}

int halo_store_open(halo_comm *c, const char *pdir, halo_store **out)
{
    int rc = 0;
    halo_store *st = HALO_NEW(halo_store, 1);
    st->comm = c;
    st->rank = halo_comm_rank(c);
    st->ranks = halo_comm_size(c);
    HALO_TRY(halo_partinfo_load(pdir, &st->info));
    if (st->info->topology_only) {
        /* before any other check, so that every rank says the same one line */
        rc = halo_errorf(HALO_EINPUT, "%s: topology-only partition (made with --no-features): "
                         "halo train needs features", pdir);
        goto fail;
    }
    if (st->info->parts != st->ranks) {
        rc = halo_errorf(HALO_EUSAGE, "%s: %d parts but %d ranks (run mpirun -np %d)", pdir,
                         st->info->parts, st->ranks, st->info->parts);
        goto fail;
    }
    HALO_TRY(halo_part_load(pdir, st->rank, &st->part));
    if (st->part->topology_only) {
        rc = halo_errorf(HALO_EINPUT, "%s: topology-only partition (made with --no-features): "
                         "halo train needs features", pdir);
        goto fail;
    }
    st->start = st->part->start;
    st->end = st->part->end;
    st->feat_dim = st->part->feat_dim;
    if (st->start != st->info->start[st->rank] || st->end != st->info->start[st->rank + 1]) {
        rc = halo_errorf(HALO_EINPUT, "%s/part-%d: range [%lld,%lld) disagrees with "
                         "partition.json", pdir, st->rank, (long long)st->start,
                         (long long)st->end);
        goto fail;
    }
    char path[4200];
    HALO_TRY(halo_path_join(path, sizeof path, pdir, "orig_id.i64"));
    HALO_TRY(halo_map_file(path, (size_t)st->info->nodes * sizeof(int64_t), &st->orig_map));
    st->orig = (const int64_t *)st->orig_map.data + st->start;
    st->scr = scratch_new(st->ranks);
    *out = st;
    return 0;
fail:
    halo_store_close(st);
    return rc;
}

void halo_store_close(halo_store *st)
{
    if (st == NULL) {
        return;
    }
    store_scratch *s = st->scr;
    if (s != NULL) {
        halo_xchg_free(&s->xreq);
        halo_xchg_free(&s->xrep);
        halo_rows_xchg_free(&s->xrows);
        halo_free(s->send_off);
        halo_free(s->rep_off);
        halo_free(s->row_off);
        halo_free(s->cnt);
        halo_free(s->cur);
        halo_free(s->cur2);
        halo_buf *bufs[] = {&s->send, &s->rep,  &s->owner, &s->lrow,  &s->lkey, &s->loff,
                       &s->lnbrs, &s->srow, &s->skey, &s->soff, &s->moff, &s->mnbrs, &s->dest,
                       &s->sdisp, &s->letype, &s->metype, &s->tstage};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
            halo_buf_free(bufs[i]);
        }
        halo_free(s);
    }
    if (st->parent == NULL) {
        if (st->peer_maps != NULL) {
            for (int k = 0; k < st->ranks; k++) {
                halo_unmap(&st->peer_maps[k]);
            }
        }
        halo_free(st->peer_maps);
        halo_unmap(&st->orig_map);
        halo_part_free(st->part);
        halo_partinfo_free(st->info);
    }
    halo_free(st->peer_feat);
    halo_free(st);
}

int halo_store_set_direct(halo_store *st, int on)
{
    st->direct = 0;
    if (!on) {
        return 0;
    }
    if (st->parent != NULL && st->parent->peer_maps == NULL) {
        HALO_CHECK(halo_store_set_direct(st->parent, 1));
        st->parent->direct = 0;
    }
    halo_store *owner = st->parent != NULL ? st->parent : st;
    if (owner->peer_maps == NULL) {
        owner->peer_maps = HALO_NEW(halo_map, st->ranks);
        for (int k = 0; k < st->ranks; k++) {
            if (k == st->rank || !halo_comm_same_host(st->comm, k) || st->feat_dim == 0 ||
                st->part->ntypes > 0) { /* typed peers' rows go by message */
                continue;
            }
            char path[4300];
            snprintf(path, sizeof path, "%s/part-%d/feat.f32", st->info->dir, k);
            size_t bytes = (size_t)(st->info->start[k + 1] - st->info->start[k]) *
                           (size_t)st->feat_dim * sizeof(float);
            int rc = halo_map_file(path, bytes, &owner->peer_maps[k]);
            if (rc < 0) {
                return rc;
            }
            halo_mem_hugepages(owner->peer_maps[k].data, owner->peer_maps[k].size);
        }
    }
    if (st->peer_feat == NULL) {
        st->peer_feat = HALO_NEW(const float *, st->ranks);
    }
    for (int k = 0; k < st->ranks; k++) {
        st->peer_feat[k] = owner->peer_maps[k].data;
    }
    st->direct = 1;
    return 0;
}

int halo_store_owner(const halo_store *st, int32_t gid)
{
    if (gid >= st->start && gid < st->end) {
        return st->rank;
    }
    const int64_t *s = st->info->start;
    if (gid < 0 || gid >= s[st->ranks]) {
        return -1;
    }
    int lo = 0, hi = st->ranks; /* s[lo] <= gid < s[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s[mid] <= gid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

halo_store_memory halo_store_mem(const halo_store *st)
{
    halo_store_memory m = {0, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        m.mapped_bytes += (int64_t)st->part->maps[i].size;
    }
    m.mapped_bytes += (st->end - st->start) * (int64_t)sizeof(int64_t);
    const store_scratch *s = st->scr;
    m.heap_bytes = s->xreq.recv_cap + s->xrep.recv_cap + s->send.cap + s->rep.cap + s->owner.cap +
                   s->lrow.cap + s->lkey.cap + s->loff.cap + s->lnbrs.cap + s->srow.cap +
                   s->skey.cap + s->soff.cap + s->moff.cap + s->mnbrs.cap + s->dest.cap +
                   s->letype.cap + s->metype.cap +
                   s->sdisp.cap + s->xrows.rstage_cap + s->xrows.sstage_cap;
    m.process_heap = (int64_t)halo_mem_current();
    m.rss_peak = (int64_t)halo_mem_rss_peak();
    return m;
}

void halo_store_stats_reset(halo_store *st)
{
    memset(&st->stats, 0, sizeof st->stats);
}

/* ---- distributed sampling ---- */

/* The header of a sampling request: the requester's keys, so the owner draws exactly what the
 * requester would. */
typedef struct req_hdr {
    uint64_t seed;  /* halo_sample_key.seed */
    int64_t epoch;  /* halo_sample_key.epoch */
    int64_t batch;  /* halo_sample_key.batch */
    int32_t layer;  /* layer number */
    int32_t fanout; /* fanout of that layer; REQ_TYPED: nrels int32 fanouts follow the header */
} req_hdr;

/* req_hdr.fanout of a typed request (per-relation fanouts after the header; the reply carries
 * the relation of each neighbour, one byte each, after the neighbours). */
#define REQ_TYPED INT32_MIN

_Static_assert(sizeof(req_hdr) == REQ_HDR, "request header is 32 bytes");

/* Bytes of a typed reply's relation array of `ne` neighbours (padded to 4). */
static inline int64_t etype_bytes(int64_t ne)
{
    return (ne + 3) / 4 * 4;
}

/* Samples the requests that arrived in x for this rank's nodes and builds the replies into
 * s->rep / s->rep_off: per peer, one int32 count per node, then the neighbours, then (typed
 * requests) their relations. */
static int serve_samples(halo_store *st, halo_sampler *smp, const halo_xchg *x)
{
    store_scratch *s = st->scr;
    int P = st->ranks;
    const int64_t *indptr = st->part->indptr;
    /* pass 1: reply sizes */
    s->rep_off[0] = 0;
    for (int p = 0; p < P; p++) {
        int64_t bytes = x->recv_off[p + 1] - x->recv_off[p];
        int64_t sz = 0;
        if (bytes > 0) {
            req_hdr h;
            memcpy(&h, x->recv + x->recv_off[p], sizeof h);
            int64_t fb = h.fanout == REQ_TYPED ? 4 * (int64_t)st->part->nrels : 0;
            int64_t n = (bytes - REQ_HDR - fb) / 4;
            const int32_t *ids = (const int32_t *)(x->recv + x->recv_off[p] + REQ_HDR + fb);
            const int *fan = (const int *)(x->recv + x->recv_off[p] + REQ_HDR);
            if (bytes < REQ_HDR + fb || (bytes - REQ_HDR) % 4 != 0 ||
                (fb > 0 && st->part->etype == NULL)) {
                return halo_errorf(HALO_ESTATE, "sample: malformed request from rank %d", p);
            }
            sz = 4 * n;
            int64_t ne = 0;
            for (int64_t i = 0; i < n; i++) {
                if (ids[i] < st->start || ids[i] >= st->end) {
                    return halo_errorf(HALO_ESTATE, "sample: rank %d asked for node %d, owned "
                                       "elsewhere", p, ids[i]);
                }
                int64_t r = ids[i] - st->start;
                if (fb == 0) {
                    ne += halo_sample_count(indptr[r + 1] - indptr[r], h.fanout);
                } else {
                    int64_t one[2];
                    ne += halo_sample_rows_typed_offsets(indptr, st->part->etype,
                                                         st->part->nrels, &r, 1, fan, one);
                }
            }
            sz += 4 * ne + (fb > 0 ? etype_bytes(ne) : 0);
        }
        s->rep_off[p + 1] = s->rep_off[p] + sz;
    }
    char *rep = halo_buf_get(&s->rep, s->rep_off[P]);
    /* pass 2: sample each peer's nodes with its keys */
    for (int p = 0; p < P; p++) {
        int64_t bytes = x->recv_off[p + 1] - x->recv_off[p];
        if (bytes <= 0) {
            continue;
        }
        req_hdr h;
        memcpy(&h, x->recv + x->recv_off[p], sizeof h);
        int64_t fb = h.fanout == REQ_TYPED ? 4 * (int64_t)st->part->nrels : 0;
        int64_t n = (bytes - REQ_HDR - fb) / 4;
        const int32_t *ids = (const int32_t *)(x->recv + x->recv_off[p] + REQ_HDR + fb);
        const int *fan = (const int *)(x->recv + x->recv_off[p] + REQ_HDR);
        int64_t *row = halo_buf_get(&s->srow, n * 8);
        int64_t *key = halo_buf_get(&s->skey, n * 8);
        int64_t *off = halo_buf_get(&s->soff, (n + 1) * 8);
        for (int64_t i = 0; i < n; i++) {
            row[i] = ids[i] - st->start;
            key[i] = st->orig[row[i]];
        }
        int64_t ne = fb == 0 ? halo_sample_rows_offsets(indptr, row, n, h.fanout, off)
                             : halo_sample_rows_typed_offsets(indptr, st->part->etype,
                                                              st->part->nrels, row, n, fan, off);
        int32_t *counts = (int32_t *)(rep + s->rep_off[p]);
        for (int64_t i = 0; i < n; i++) {
            counts[i] = (int32_t)(off[i + 1] - off[i]);
        }
        halo_sample_key k = {h.seed, h.epoch, h.batch};
        if (fb == 0) {
            halo_sample_rows(smp, indptr, st->part->indices, row, key, n, h.fanout, &k, h.layer,
                             off, counts + n);
        } else {
            halo_sample_rows_typed(smp, indptr, st->part->indices, st->part->etype,
                                   st->part->nrels, row, key, n, fan, &k, h.layer, off,
                                   counts + n, (uint8_t *)(counts + n + ne));
        }
        st->stats.sample_served_nodes += n;
    }
    return 0;
}

/* The requests of one layer: the owner of every frontier node, a request (header [+ the
 * fanouts of every relation] + ids) to each peer that owns part of the frontier, and this
 * rank's own nodes as rows and keys in s->lrow / s->lkey. Returns the own nodes' count (or a
 * negative code). */
static int64_t layer_requests(halo_store *st, const halo_sample_key *k, int layer, int fanout,
                              const int *fan, const int32_t *dst, int32_t num_dst)
{
    int64_t fb = fan != NULL ? 4 * (int64_t)st->part->nrels : 0;
    store_scratch *s = st->scr;
    int P = st->ranks, me = st->rank;
    int32_t *owner = halo_buf_get(&s->owner, (int64_t)num_dst * 4 + 4);
    memset(s->cnt, 0, (size_t)P * sizeof *s->cnt);
    for (int32_t i = 0; i < num_dst; i++) {
        int o = halo_store_owner(st, dst[i]);
        if (o < 0) {
            return halo_errorf(HALO_EUSAGE, "sample: node %d is not in the graph (%lld nodes)",
                               dst[i], (long long)st->info->nodes);
        }
        owner[i] = o;
        s->cnt[o]++;
    }
    int64_t nl = s->cnt[me];
    s->send_off[0] = 0;
    for (int p = 0; p < P; p++) {
        int64_t sz = (p != me && s->cnt[p] > 0) ? REQ_HDR + fb + 4 * s->cnt[p] : 0;
        s->send_off[p + 1] = s->send_off[p] + sz;
    }
    char *send = halo_buf_get(&s->send, s->send_off[P] + 8);
    req_hdr h = {k->seed, k->epoch, k->batch, layer, fan != NULL ? REQ_TYPED : fanout};
    for (int p = 0; p < P; p++) {
        if (s->send_off[p + 1] > s->send_off[p]) {
            memcpy(send + s->send_off[p], &h, sizeof h);
            if (fb > 0) { /* fan is NULL on a homogeneous request (memcpy of NULL is UB) */
                memcpy(send + s->send_off[p] + REQ_HDR, fan, (size_t)fb);
            }
        }
        s->cur[p] = s->send_off[p] + REQ_HDR + fb;
    }
    int64_t *lrow = halo_buf_get(&s->lrow, nl * 8 + 8);
    int64_t *lkey = halo_buf_get(&s->lkey, nl * 8 + 8);
    int64_t j = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        int o = owner[i];
        if (o == me) {
            lrow[j] = dst[i] - st->start;
            lkey[j] = st->orig[lrow[j]];
            j++;
        } else {
            memcpy(send + s->cur[o], &dst[i], 4);
            s->cur[o] += 4;
        }
    }
    return nl;
}

/* Draws this rank's own nl frontier nodes (s->lrow, s->lkey) into s->loff / s->lnbrs (and
 * their relations into s->letype when typed). */
static void layer_local(halo_store *st, halo_sampler *smp, const halo_sample_key *k, int layer,
                        int fanout, const int *fan, int64_t nl)
{
    store_scratch *s = st->scr;
    const int64_t *lrow = s->lrow.p, *lkey = s->lkey.p;
    int64_t *loff = halo_buf_get(&s->loff, (nl + 1) * 8);
    int64_t lne = fan == NULL ? halo_sample_rows_offsets(st->part->indptr, lrow, nl, fanout, loff)
                              : halo_sample_rows_typed_offsets(st->part->indptr, st->part->etype,
                                                               st->part->nrels, lrow, nl, fan,
                                                               loff);
    int32_t *lnbrs = halo_buf_get(&s->lnbrs, lne * 4 + 4);
    if (fan == NULL) {
        halo_sample_rows(smp, st->part->indptr, st->part->indices, lrow, lkey, nl, fanout, k,
                         layer, loff, lnbrs);
    } else {
        uint8_t *letype = halo_buf_get(&s->letype, lne + 4);
        halo_sample_rows_typed(smp, st->part->indptr, st->part->indices, st->part->etype,
                               st->part->nrels, lrow, lkey, nl, fan, k, layer, loff, lnbrs,
                               letype);
    }
}

/* The merged offsets s->moff of the frontier from the own draw and the replies' counts (each
 * peer's counts at its recv_off, its neighbours after them: cursors s->cur, s->cur2). */
static int merge_counts(halo_store *st, int32_t num_dst)
{
    store_scratch *s = st->scr;
    const halo_xchg *x = &s->xrep;
    int P = st->ranks, me = st->rank;
    for (int p = 0; p < P; p++) {
        int64_t want = p == me ? 0 : 4 * s->cnt[p];
        if (x->recv_off[p + 1] - x->recv_off[p] < want) {
            return halo_errorf(HALO_ESTATE, "sample: short reply from rank %d", p);
        }
        s->cur[p] = 0;                      /* node cursor */
        s->cur2[p] = x->recv_off[p] + want; /* neighbour byte cursor */
    }
    const int32_t *owner = s->owner.p;
    const int64_t *loff = s->loff.p;
    int64_t *moff = halo_buf_get(&s->moff, ((int64_t)num_dst + 1) * 8);
    moff[0] = 0;
    int64_t j = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        int o = owner[i];
        int64_t c;
        if (o == me) {
            c = loff[j + 1] - loff[j];
            j++;
        } else {
            int32_t c32;
            memcpy(&c32, x->recv + x->recv_off[o] + 4 * s->cur[o], 4);
            s->cur[o]++;
            c = c32;
        }
        moff[i + 1] = moff[i] + c;
    }
    return 0;
}

/* Typed replies: each peer's size checked against its counts, and the byte cursor of its
 * relations (after its neighbours) into ecur[p]. */
static int merge_etype_cursors(halo_store *st, int64_t *ecur)
{
    store_scratch *s = st->scr;
    const halo_xchg *x = &s->xrep;
    for (int p = 0; p < st->ranks; p++) {
        if (p == st->rank || s->cnt[p] == 0) {
            continue;
        }
        int64_t ne = 0; /* the peer's neighbours: the sum of its counts */
        for (int64_t i = 0; i < s->cnt[p]; i++) {
            int32_t c32;
            memcpy(&c32, x->recv + x->recv_off[p] + 4 * i, 4);
            ne += c32;
        }
        if (x->recv_off[p + 1] - s->cur2[p] != 4 * ne + etype_bytes(ne)) {
            return halo_errorf(HALO_ESTATE, "sample: reply from rank %d has the wrong size", p);
        }
        ecur[p] = s->cur2[p] + 4 * ne;
    }
    return 0;
}

/* Merges the own draw and the replies in frontier order into s->moff / s->mnbrs (and the
 * relations into s->metype when typed). */
static int layer_merge(halo_store *st, bool typed, int32_t num_dst)
{
    store_scratch *s = st->scr;
    const halo_xchg *x = &s->xrep;
    HALO_CHECK(merge_counts(st, num_dst));
    const int64_t *moff = s->moff.p, *loff = s->loff.p;
    const int32_t *owner = s->owner.p, *lnbrs = s->lnbrs.p;
    const uint8_t *letype = s->letype.p;
    int32_t *mnbrs = halo_buf_get(&s->mnbrs, moff[num_dst] * 4 + 4);
    uint8_t *metype = typed ? halo_buf_get(&s->metype, moff[num_dst] + 4) : NULL;
    int64_t *ecur = s->row_off; /* typed: byte cursor of each peer's relations */
    if (typed) {
        HALO_CHECK(merge_etype_cursors(st, ecur));
    }
    int64_t j = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        int o = owner[i];
        int64_t c = moff[i + 1] - moff[i];
        if (o == st->rank) {
            memcpy(mnbrs + moff[i], lnbrs + loff[j], (size_t)c * 4);
            if (metype != NULL) {
                memcpy(metype + moff[i], letype + loff[j], (size_t)c);
            }
            j++;
        } else {
            memcpy(mnbrs + moff[i], x->recv + s->cur2[o], (size_t)c * 4);
            s->cur2[o] += 4 * c;
            if (metype != NULL) {
                memcpy(metype + moff[i], x->recv + ecur[o], (size_t)c);
                ecur[o] += c;
            }
        }
    }
    return 0;
}

/* One layer: samples the frontier dst[num_dst] with fanout (or, typed, the per-relation
 * fanouts fan[nrels]), locally and through the owners (the own nodes drawn while the requests
 * travel), and merges the neighbours in frontier order into s->moff / s->mnbrs (and their
 * relations into s->metype). Collective. */
static int sample_layer(halo_store *st, halo_sampler *smp, const halo_sample_key *k, int layer,
                        int fanout, const int *fan, const int32_t *dst, int32_t num_dst)
{
    store_scratch *s = st->scr;
    int64_t nl = layer_requests(st, k, layer, fanout, fan, dst, num_dst);
    if (nl < 0) {
        return (int)nl;
    }
    HALO_CHECK(halo_comm_xchg_start(st->comm, &s->xreq, s->send.p, s->send_off));
    layer_local(st, smp, k, layer, fanout, fan, nl);
    HALO_CHECK(halo_comm_xchg_wait(st->comm, &s->xreq));
    HALO_CHECK(serve_samples(st, smp, &s->xreq));
    HALO_CHECK(halo_comm_xchg_start(st->comm, &s->xrep, s->rep.p, s->rep_off));
    HALO_CHECK(halo_comm_xchg_wait(st->comm, &s->xrep));
    HALO_CHECK(layer_merge(st, fan != NULL, num_dst));
    st->stats.sample_remote_nodes += num_dst - nl;
    return 0;
}

/* The store's draw for the frontier loop: a layer of sample_layer, plain fanouts or (fan !=
 * NULL) per-relation ones. */
typedef struct store_draw {
    halo_store *st;                  /* the store (its scratch holds the merged neighbours) */
    halo_sampler *smp;               /* the sampler of this thread */
    const int *fanouts;              /* plain: per layer */
    const int (*fan)[HALO_MAX_RELS]; /* typed: per layer and relation, else NULL */
    const halo_sample_key *k;        /* the batch's keys */
} store_draw;

static int draw_store(void *arg, int l, const int32_t *dst, int32_t num_dst,
                      halo_sample_drawn *out)
{
    store_draw *a = arg;
    store_scratch *s = a->st->scr;
    HALO_CHECK(sample_layer(a->st, a->smp, a->k, l, a->fanouts != NULL ? a->fanouts[l] : 0,
                            a->fan != NULL ? a->fan[l] : NULL, dst, num_dst));
    out->off = s->moff.p;
    out->nbrs = s->mnbrs.p;
    out->etype = a->fan != NULL ? s->metype.p : NULL;
    return 0;
}

/* halo_store_sample and halo_store_sample_typed: the frontier loop over the store's draw. */
static int store_sample(halo_store *st, halo_sampler *smp, const int *fanouts,
                        const halo_rel_fanouts fan, int layers, const halo_sample_key *k,
                        const int32_t *seeds, int32_t num_seeds, halo_minibatch *out)
{
    store_draw a = {st, smp, fanouts, fan, k};
    HALO_CHECK(halo_sample_frontier(smp, layers, draw_store, &a, seeds, num_seeds, out));
    st->stats.sample_calls++;
    st->stats.sampled_edges += halo_sample_edges(out);
    return 0;
}

int halo_store_sample(halo_store *st, halo_sampler *smp, const int *fanouts, int layers,
                      const halo_sample_key *k, const int32_t *seeds, int32_t num_seeds,
                      halo_minibatch *out)
{
    return store_sample(st, smp, fanouts, NULL, layers, k, seeds, num_seeds, out);
}

int halo_store_sample_typed(halo_store *st, halo_sampler *smp, const halo_rel_fanouts fan,
                            int layers, const halo_sample_key *k, const int32_t *seeds,
                            int32_t num_seeds, halo_minibatch *out)
{
    if (st->part->nrels == 0 || st->part->etype == NULL) {
        halo_sample_free(out);
        return halo_errorf(HALO_EUSAGE, "sample: per-relation fanouts need a typed partition "
                           "(%s has no relations)", st->info->dir);
    }
    return store_sample(st, smp, NULL, fan, layers, k, seeds, num_seeds, out);
}

/* ---- feature pulls ---- */

int halo_store_pull_plan(halo_store *st, const int32_t *ids, int64_t n, halo_store_pull *p)
{
    int64_t nr = 0;
    for (int64_t i = 0; i < n; i++) {
        nr += !halo_store_is_local(st, ids[i]);
    }
    if (nr > p->cap) {
        halo_free(p->remote_pos);
        halo_free(p->remote_id);
        halo_free(p->remote_owner);
        halo_free(p->skip);
        p->cap = nr + nr / 2 + 16;
        p->remote_pos = HALO_ALLOC(int64_t, p->cap);
        p->remote_id = HALO_ALLOC(int32_t, p->cap);
        p->remote_owner = HALO_ALLOC(int32_t, p->cap);
        p->skip = HALO_ALLOC(uint8_t, p->cap);
    }
    p->n = n;
    p->ids = ids;
    p->num_remote = 0;
    p->num_extra = 0;
    p->fetched = 0;
    p->bytes = 0;
    for (int64_t i = 0; i < n; i++) {
        if (halo_store_is_local(st, ids[i])) {
            continue;
        }
        int o = halo_store_owner(st, ids[i]);
        if (o < 0) {
            return halo_errorf(HALO_EUSAGE, "pull: node %d is not in the graph (%lld nodes)",
                               ids[i], (long long)st->info->nodes);
        }
        int64_t r = p->num_remote++;
        p->remote_pos[r] = i;
        p->remote_id[r] = ids[i];
        p->remote_owner[r] = o;
        p->skip[r] = 0;
    }
    p->num_local = n - p->num_remote;
    return 0;
}

int halo_store_pull_add_extra(halo_store_pull *p, const halo_store *st, const int32_t *ids,
                              int64_t m)
{
    for (int64_t i = 0; i < m; i++) {
        if (halo_store_owner(st, ids[i]) < 0) {
            return halo_errorf(HALO_EUSAGE, "pull: prefetch id %d is not in the graph", ids[i]);
        }
    }
    int64_t need = p->num_extra + m;
    if (need > p->extra_cap) {
        int64_t cap = need + need / 2 + 16;
        p->extra_id = halo_realloc(p->extra_id, (size_t)cap * sizeof *p->extra_id);
        halo_free(p->extra_rows);
        p->extra_rows = HALO_ALLOC(float, cap * (st->feat_dim > 0 ? st->feat_dim : 1));
        p->extra_cap = cap;
    }
    memcpy(p->extra_id + p->num_extra, ids, (size_t)m * sizeof *ids);
    p->num_extra = need;
    return 0;
}

void halo_store_pull_free(halo_store_pull *p)
{
    halo_free(p->remote_pos);
    halo_free(p->remote_id);
    halo_free(p->remote_owner);
    halo_free(p->skip);
    halo_free(p->extra_id);
    halo_free(p->extra_rows);
    memset(p, 0, sizeof *p);
}

/* The row source: owned node id's feature row, feat_dim floats, into dst. A typed part's row
 * comes from its type's file, zero-padded past the type's width (docs/hetero.md). */
static inline void row_source(const halo_store *st, int32_t id, float *dst)
{
    const halo_part *pt = st->part;
    if (pt->ntypes == 0) {
        memcpy(dst, pt->feat + (id - st->start) * (int64_t)st->feat_dim,
               (size_t)st->feat_dim * sizeof(float));
    } else {
        halo_part_feat_row(pt, id, dst);
    }
}

/* Serves the row requests that arrived in x: for each peer a reply with the rows in the order
 * asked, read from the mapped feature array by the rows exchange (gathered piece by piece while
 * the previous piece travels; rows adjacent in feat go without a copy). */
static int serve_rows(halo_store *st, const halo_xchg *x)
{
    store_scratch *s = st->scr;
    int P = st->ranks;
    int64_t rb = (int64_t)st->feat_dim * (int64_t)sizeof(float);
    s->rep_off[0] = 0;
    for (int p = 0; p < P; p++) {
        s->rep_off[p + 1] = s->rep_off[p] + (x->recv_off[p + 1] - x->recv_off[p]) / 4;
    }
    int64_t *sdisp = halo_buf_get(&s->sdisp, s->rep_off[P] * 8 + 8);
    for (int p = 0; p < P; p++) {
        int64_t n = s->rep_off[p + 1] - s->rep_off[p];
        const int32_t *ids = (const int32_t *)(x->recv + x->recv_off[p]);
        int64_t *d = sdisp + s->rep_off[p];
        for (int64_t i = 0; i < n; i++) {
            if (ids[i] < st->start || ids[i] >= st->end) {
                return halo_errorf(HALO_ESTATE, "pull: rank %d asked for node %d, owned "
                                   "elsewhere", p, ids[i]);
            }
            d[i] = (ids[i] - st->start) * rb;
        }
        st->stats.served_rows += n;
    }
    const void *src = st->part->feat;
    if (st->part->ntypes > 0) { /* typed: the rows gathered (padded) into a stage, sent from it */
        float *stage = halo_buf_get(&s->tstage, s->rep_off[P] * rb + 8);
        for (int p = 0; p < P; p++) {
            const int32_t *ids = (const int32_t *)(x->recv + x->recv_off[p]);
            for (int64_t i = 0; i < s->rep_off[p + 1] - s->rep_off[p]; i++) {
                int64_t j = s->rep_off[p] + i;
                row_source(st, ids[i], stage + j * st->feat_dim);
                sdisp[j] = j * rb;
            }
        }
        src = stage;
    }
    return halo_comm_rows_send(st->comm, &s->xrows, src, sdisp, s->rep_off, rb);
}

/* Own rows copied between two polls of the replies in flight: 64 KiB, as the owner's gather
 * polls its sends. While a rank copies without entering MPI, Open MPI's shared memory does not
 * copy the pieces that have arrived and TCP does not read them, so the replies would wait for
 * the end of the copies. */
#define PULL_POLL_BYTES (64 * 1024)

static inline int poll_replies(halo_store *st, int64_t *since, int64_t every)
{
    if (++*since < every) {
        return 0;
    }
    *since = 0;
    return halo_comm_rows_test(st->comm, &st->scr->xrows);
}

/* The pull's own rows into rows (polling the replies in flight every `every` rows); an untyped
 * part's rows are fetched GATHER_AHEAD input nodes ahead, as halo_store_gather does (the rows
 * are where the sampler's ids lead, scattered over the part). */
static int own_rows(halo_store *st, const halo_store_pull *p, float *rows, int64_t every,
                    int64_t *since)
{
    int dim = st->feat_dim;
    size_t rb = (size_t)dim * sizeof(float);
    const char *feat = st->part->ntypes == 0 ? (const char *)st->part->feat : NULL;
    for (int64_t i = 0; i < p->n; i++) {
        int32_t id = p->ids[i];
        if (feat != NULL && i + GATHER_AHEAD < p->n) {
            int32_t ahead = p->ids[i + GATHER_AHEAD];
            if (ahead >= st->start && ahead < st->end) {
                const char *q = feat + (size_t)(ahead - st->start) * rb;
                for (size_t b = 0; b < rb; b += 64) {
                    __builtin_prefetch(q + b);
                }
            }
        }
        if (id >= st->start && id < st->end) {
            row_source(st, id, rows + i * dim);
            HALO_CHECK(poll_replies(st, since, every));
        }
    }
    return 0;
}

/* Collective pull. The requester lists, per owner, the ids it wants and where each row goes,
 * posts the receives for the replies (into rows / extra_rows: a piece whose rows land back to
 * back is received in place, the others are scattered as they arrive; no count exchange, the
 * sizes are known), then sends the requests (one per peer); each owner answers with the rows of
 * its feature array. Local and shared-memory rows are copied while the replies travel. */
int halo_store_pull_exec(halo_store *st, halo_store_pull *p, float *rows)
{
    store_scratch *s = st->scr;
    int P = st->ranks, me = st->rank;
    int dim = st->feat_dim;
    size_t rb = (size_t)dim * sizeof(float);
    double t0 = halo_now();
    memset(s->cnt, 0, (size_t)P * sizeof *s->cnt);
    int64_t nf = 0, nd = 0; /* rows fetched by message / read directly */
    const float *const *pf = st->direct ? st->peer_feat : NULL;
    const int64_t *pstart = st->info->start;
    for (int64_t r = 0; r < p->num_remote; r++) {
        if (p->skip[r]) {
            continue;
        }
        int o = p->remote_owner[r];
        if (pf != NULL && pf[o] != NULL) {
            nd++; /* copied below, while the replies travel */
        } else {
            s->cnt[o]++;
            nf++;
        }
    }
    int32_t *xowner = halo_buf_get(&s->owner, p->num_extra * 4 + 4);
    for (int64_t e = 0; e < p->num_extra; e++) {
        int o = halo_store_owner(st, p->extra_id[e]);
        xowner[e] = o;
        if (o != me && pf != NULL && pf[o] != NULL) {
            xowner[e] = -1 - o; /* read directly from owner o */
            nd++;
        } else if (o != me) {
            s->cnt[o]++;
            nf++;
        }
    }
    s->send_off[0] = 0;
    s->row_off[0] = 0;
    for (int q = 0; q < P; q++) {
        s->send_off[q + 1] = s->send_off[q] + 4 * s->cnt[q];
        s->row_off[q + 1] = s->row_off[q] + s->cnt[q];
        s->cur[q] = s->row_off[q]; /* slot cursor */
    }
    int32_t *send = halo_buf_get(&s->send, s->send_off[P] + 4);
    /* destinations as byte displacements from rows (extras from p->extra_rows, a separate block:
     * its displacement is taken as a difference of addresses, as MPI_Get_address would) */
    char *base = rows != NULL ? (char *)rows : (char *)p->extra_rows;
    int64_t xbase = (int64_t)((intptr_t)(void *)p->extra_rows - (intptr_t)(void *)base);
    int64_t *dest = halo_buf_get(&s->dest, nf * 8 + 8);
    for (int64_t r = 0; r < p->num_remote; r++) {
        if (!p->skip[r] && (pf == NULL || pf[p->remote_owner[r]] == NULL)) {
            int64_t slot = s->cur[p->remote_owner[r]]++;
            send[slot] = p->remote_id[r];
            dest[slot] = p->remote_pos[r] * (int64_t)rb;
        }
    }
    for (int64_t e = 0; e < p->num_extra; e++) {
        if (xowner[e] != me && xowner[e] >= 0) {
            int64_t slot = s->cur[xowner[e]]++;
            send[slot] = p->extra_id[e];
            dest[slot] = xbase + e * (int64_t)rb;
        }
    }
    /* the replies' receives are posted before any request goes out */
    HALO_CHECK(halo_comm_rows_recv(st->comm, &s->xrows, base, dest, s->row_off, (int64_t)rb));
    HALO_CHECK(halo_comm_xchg_start(st->comm, &s->xreq, send, s->send_off));
    HALO_CHECK(halo_comm_xchg_wait(st->comm, &s->xreq));
    HALO_CHECK(serve_rows(st, &s->xreq));
    /* own rows while the replies travel (polling them every PULL_POLL_BYTES) */
    int64_t every = rb > 0 && PULL_POLL_BYTES / (int64_t)rb > 0 ? PULL_POLL_BYTES / (int64_t)rb : 1;
    int64_t since = 0;
    HALO_CHECK(own_rows(st, p, rows, every, &since));
    for (int64_t e = 0; e < p->num_extra; e++) {
        if (xowner[e] == me) {
            row_source(st, p->extra_id[e], p->extra_rows + e * dim);
            HALO_CHECK(poll_replies(st, &since, every));
        } else if (xowner[e] < 0) {
            int o = -1 - xowner[e];
            memcpy(p->extra_rows + e * dim, pf[o] + (p->extra_id[e] - pstart[o]) * dim, rb);
            HALO_CHECK(poll_replies(st, &since, every));
        }
    }
    for (int64_t r = 0; nd > 0 && r < p->num_remote; r++) {
        int o = p->remote_owner[r];
        if (!p->skip[r] && pf[o] != NULL) {
            memcpy(rows + p->remote_pos[r] * dim, pf[o] + (p->remote_id[r] - pstart[o]) * dim, rb);
            HALO_CHECK(poll_replies(st, &since, every));
        }
    }
    HALO_CHECK(halo_comm_rows_wait(st->comm, &s->xrows));
    if (nd > 0) { /* the direct rows pay a round trip on the emulated network */
        halo_netem ne = halo_comm_netem(st->comm);
        double d = halo_netem_delay(&ne, nd * (int64_t)rb);
        halo_comm_netem_wait(st->comm, t0, d > 0 ? d + ne.lat_s : 0);
    }
    int64_t skipped = 0;
    for (int64_t r = 0; r < p->num_remote; r++) {
        skipped += p->skip[r];
    }
    nf += nd;
    p->fetched = nf;
    p->bytes = nf * (int64_t)rb;
    st->stats.pull_calls++;
    st->stats.input_nodes += p->n;
    st->stats.local_nodes += p->num_local;
    st->stats.remote_nodes += nf;
    st->stats.skipped_nodes += skipped;
    st->stats.bytes_remote += p->bytes;
    return 0;
}

int halo_store_pull_rows(halo_store *st, const int32_t *ids, int64_t n, float *rows,
                         halo_store_pull *p)
{
    HALO_CHECK(halo_store_pull_plan(st, ids, n, p));
    return halo_store_pull_exec(st, p, rows);
}

/* ---------------------------------------------------------------- accessors */

halo_comm *halo_store_comm(const halo_store *st)
{
    return st->comm;
}

int halo_store_rank(const halo_store *st)
{
    return st->rank;
}

int halo_store_ranks(const halo_store *st)
{
    return st->ranks;
}

const halo_partinfo *halo_store_info(const halo_store *st)
{
    return st->info;
}

const halo_part *halo_store_part(const halo_store *st)
{
    return st->part;
}

int64_t halo_store_start(const halo_store *st)
{
    return st->start;
}

int64_t halo_store_end(const halo_store *st)
{
    return st->end;
}

int halo_store_feat_dim(const halo_store *st)
{
    return st->feat_dim;
}

const int64_t *halo_store_orig_ids(const halo_store *st)
{
    return (const int64_t *)st->orig_map.data;
}

const halo_store_stats *halo_store_stats_get(const halo_store *st)
{
    return &st->stats;
}

int halo_store_is_local(const halo_store *st, int32_t gid)
{
    return gid >= st->start && gid < st->end;
}
