/* Access traces: the binary writer and reader (format in trace.h) and the policy replay. */
#include "cache/trace.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char trace_magic[8] = {'H', 'A', 'L', 'O', 'T', 'R', 'C', '1'};
_Static_assert(sizeof HALO_TRACE_SIG - 1 == sizeof trace_magic, "HALO_TRACE_SIG is the magic");

/* The 32-byte file header. */
typedef struct trace_head {
    char magic[8];     /* "HALOTRC1" */
    uint32_t version;  /* HALO_TRACE_VERSION */
    uint32_t ranks;    /* ranks */
    uint32_t feat_dim; /* row width */
    uint32_t reserved; /* 0 */
    int64_t nodes;     /* graph nodes */
} trace_head;

/* The 32-byte record head. */
typedef struct trace_rec {
    uint32_t kind; /* HALO_TRACE_HALO or HALO_TRACE_BATCH */
    uint32_t rank; /* rank */
    int64_t a;     /* HALO: vip present; BATCH: epoch */
    int64_t b;     /* BATCH: batch within the epoch */
    int64_t n;     /* entries */
} trace_rec;

_Static_assert(sizeof(trace_head) == 32, "trace header is 32 bytes");
_Static_assert(sizeof(trace_rec) == 32, "trace record head is 32 bytes");

struct halo_trace_writer {
    halo_writer *w;    /* the temporary file */
    char path[4096];   /* final name */
    char tmp[4200];    /* temporary name */
    int ranks;         /* ranks of the header */
    uint8_t *flags;    /* scratch for put_pull */
    int64_t flags_cap; /* its size */
};

static int64_t pad8(int64_t n)
{
    return (n + 7) & ~(int64_t)7;
}

int halo_trace_create(const char *path, int ranks, int feat_dim, int64_t nodes,
                      halo_trace_writer **out)
{
    *out = NULL;
    HALO_CHECK(halo_output_file_check(path, "trace", HALO_TRACE_SIG, false));
    halo_trace_writer *w = HALO_NEW(halo_trace_writer, 1);
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp-%d", path, (int)getpid());
    w->ranks = ranks;
    int rc = halo_writer_open(w->tmp, &w->w);
    if (rc != 0) {
        halo_free(w);
        return rc;
    }
    trace_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, trace_magic, 8);
    h.version = HALO_TRACE_VERSION;
    h.ranks = (uint32_t)ranks;
    h.feat_dim = (uint32_t)feat_dim;
    h.nodes = nodes;
    rc = halo_writer_put(w->w, &h, sizeof h);
    if (rc != 0) {
        halo_trace_discard(w);
        return rc;
    }
    *out = w;
    return 0;
}

static int put_padded(halo_trace_writer *w, const void *p, int64_t bytes)
{
    static const char zero[8] = {0};
    if (bytes > 0) {
        HALO_CHECK(halo_writer_put(w->w, p, (size_t)bytes));
    }
    if (pad8(bytes) > bytes) {
        HALO_CHECK(halo_writer_put(w->w, zero, (size_t)(pad8(bytes) - bytes)));
    }
    return 0;
}

int halo_trace_put_halo(halo_trace_writer *w, int rank, int64_t n, const int32_t *ids,
                        const int32_t *deg, const int32_t *owner, const double *vip)
{
    trace_rec r = {HALO_TRACE_HALO, (uint32_t)rank, vip != NULL, 0, n};
    HALO_CHECK(halo_writer_put(w->w, &r, sizeof r));
    int32_t *zeros = NULL;
    if (deg == NULL || owner == NULL) {
        zeros = HALO_NEW(int32_t, n + 1);
    }
    int rc = halo_writer_put(w->w, ids, (size_t)n * 4);
    if (rc == 0) {
        rc = halo_writer_put(w->w, deg ? deg : zeros, (size_t)n * 4);
    }
    if (rc == 0) {
        rc = put_padded(w, owner ? owner : zeros, n * 4);
    }
    if (rc == 0 && vip != NULL) {
        rc = put_padded(w, vip, n * 8);
    }
    halo_free(zeros);
    return rc;
}

int halo_trace_put_batch(halo_trace_writer *w, int rank, int epoch, int64_t batch, int64_t n,
                         const int32_t *ids, const uint8_t *flags)
{
    trace_rec r = {HALO_TRACE_BATCH, (uint32_t)rank, epoch, batch, n};
    HALO_CHECK(halo_writer_put(w->w, &r, sizeof r));
    HALO_CHECK(put_padded(w, ids, n * 4));
    return put_padded(w, flags, n);
}

int halo_trace_put_block(halo_trace_writer *w, int rank, int epoch, int64_t batch, int layer,
                         int32_t num_dst, const int32_t *dst, const int32_t *count, int64_t n,
                         const int32_t *src)
{
    trace_rec r = {HALO_TRACE_BLOCK, (uint32_t)rank, epoch, batch, n};
    int32_t ld[2] = {layer, num_dst};
    HALO_CHECK(halo_writer_put(w->w, &r, sizeof r));
    HALO_CHECK(halo_writer_put(w->w, ld, sizeof ld));
    HALO_CHECK(put_padded(w, dst, 4 * (int64_t)num_dst));
    HALO_CHECK(put_padded(w, count, 4 * (int64_t)num_dst));
    return put_padded(w, src, 4 * n);
}

int halo_trace_put_lookup(halo_trace_writer *w, int rank, int epoch, int64_t batch, int64_t n,
                          const int32_t *ids, int64_t nr, const int32_t *remote_id,
                          const int64_t *remote_pos, const uint8_t *served, const halo_cache *c)
{
    if (n > w->flags_cap) {
        halo_free(w->flags);
        w->flags_cap = n + n / 2 + 64;
        w->flags = HALO_ALLOC(uint8_t, w->flags_cap);
    }
    memset(w->flags, 0, (size_t)n);
    for (int64_t k = 0; k < nr; k++) {
        uint8_t f = HALO_TRACE_F_REMOTE;
        if (c != NULL && halo_cache_halo_pos(c, remote_id[k]) >= 0) {
            f |= HALO_TRACE_F_HALO;
        }
        if (served != NULL && served[k]) {
            f |= HALO_TRACE_F_HIT;
        }
        w->flags[remote_pos[k]] = f;
    }
    return halo_trace_put_batch(w, rank, epoch, batch, n, ids, w->flags);
}

int halo_trace_close(halo_trace_writer *w)
{
    int rc = halo_writer_close(w->w, NULL, NULL);
    w->w = NULL;
    if (rc == 0 && rename(w->tmp, w->path) != 0) {
        rc = halo_errorf(HALO_EIO, "%s: cannot rename the trace into place", w->path);
    }
    if (rc != 0) {
        unlink(w->tmp);
    }
    halo_free(w->flags);
    halo_free(w);
    return rc;
}

void halo_trace_discard(halo_trace_writer *w)
{
    if (w == NULL) {
        return;
    }
    if (w->w != NULL) {
        halo_writer_discard(w->w);
    }
    unlink(w->tmp);
    halo_free(w->flags);
    halo_free(w);
}

/* ---- reading ---- */

/* Checks one file's header; the first file's sets t's ranks, nodes and feature width (and the
 * rank table and *cap), the others must agree with it. */
static int index_head(halo_trace *t, const char *path, const char *data, int64_t len,
                      int64_t **cap)
{
    if (len < (int64_t)sizeof(trace_head)) {
        return halo_errorf(HALO_EINPUT, "%s: too short for a trace header (%lld bytes)", path,
                           (long long)len);
    }
    const trace_head *h = (const trace_head *)data;
    if (memcmp(h->magic, trace_magic, 8) != 0) {
        return halo_errorf(HALO_EINPUT, "%s: not a halo trace (bad magic)", path);
    }
    if (h->version != HALO_TRACE_VERSION) {
        return halo_errorf(HALO_EINPUT, "%s: trace version %u, this halo reads %d", path,
                           h->version, HALO_TRACE_VERSION);
    }
    if (h->ranks < 1 || h->ranks > 65536 || h->nodes < 0 || h->nodes > INT32_MAX ||
        h->feat_dim > 1000000) {
        return halo_errorf(HALO_EINPUT, "%s: bad header (ranks %u, nodes %lld, feat_dim %u)",
                           path, h->ranks, (long long)h->nodes, h->feat_dim);
    }
    if (t->rank == NULL) {
        t->ranks = (int)h->ranks;
        t->feat_dim = (int)h->feat_dim;
        t->nodes = h->nodes;
        t->rank = HALO_NEW(halo_trace_rank, t->ranks);
        *cap = HALO_NEW(int64_t, t->ranks);
    } else if ((int)h->ranks != t->ranks || h->nodes != t->nodes) {
        return halo_errorf(HALO_EINPUT, "%s: header differs from the other files of the trace",
                           path);
    }
    return 0;
}

/* *body = the payload bytes of record k (at byte off) by its kind, checked to fit in the file. */
static int rec_body(const char *path, const char *data, int64_t len, int64_t off, int64_t k,
                    const trace_rec *r, int64_t *body)
{
    int64_t left = len - off - (int64_t)sizeof(trace_rec);
    if (r->kind == HALO_TRACE_HALO) {
        *body = 8 * r->n + pad8(4 * r->n) + (r->a ? 8 * r->n : 0);
    } else if (r->kind == HALO_TRACE_BATCH) {
        *body = pad8(4 * r->n) + pad8(r->n);
    } else if (r->kind == HALO_TRACE_BLOCK) {
        if (left < 8) {
            return halo_errorf(HALO_EINPUT, "%s: record %lld at byte %lld is truncated", path,
                               (long long)k, (long long)off);
        }
        const int32_t *ld = (const int32_t *)(data + off + sizeof(trace_rec));
        if (ld[0] < 0 || ld[0] >= 64 || ld[1] < 0) { /* 64: far above any model depth */
            return halo_errorf(HALO_EINPUT,
                               "%s: record %lld: bad block layer %d or %d "
                               "destinations",
                               path, (long long)k, ld[0], ld[1]);
        }
        *body = 8 + 2 * pad8(4 * (int64_t)ld[1]) + pad8(4 * r->n);
    } else {
        return halo_errorf(HALO_EINPUT, "%s: record %lld at byte %lld: unknown kind %u", path,
                           (long long)k, (long long)off, r->kind);
    }
    if (*body > left) {
        return halo_errorf(HALO_EINPUT, "%s: record %lld at byte %lld is truncated", path,
                           (long long)k, (long long)off);
    }
    return 0;
}

/* A block record (payload p): checked, counted, not replayed: destinations and sources are
 * graph ids, the counts add up to the edges. */
static int index_block(halo_trace *t, const char *path, int64_t k, const trace_rec *r,
                       const char *p)
{
    int32_t nd = ((const int32_t *)p)[1];
    const int32_t *dst = (const int32_t *)(p + 8);
    const int32_t *cnt = (const int32_t *)(p + 8 + pad8(4 * (int64_t)nd));
    const int32_t *src = (const int32_t *)(p + 8 + 2 * pad8(4 * (int64_t)nd));
    int64_t sum = 0;
    for (int32_t i = 0; i < nd; i++) {
        if (dst[i] < 0 || dst[i] >= t->nodes || cnt[i] < 0) {
            return halo_errorf(HALO_EINPUT,
                               "%s: record %lld: destination %d: bad id %d "
                               "or count %d",
                               path, (long long)k, i, dst[i], cnt[i]);
        }
        sum += cnt[i];
    }
    if (sum != r->n) {
        return halo_errorf(HALO_EINPUT,
                           "%s: record %lld: counts add up to %lld, the "
                           "block has %lld edges",
                           path, (long long)k, (long long)sum, (long long)r->n);
    }
    for (int64_t e = 0; e < r->n; e++) {
        if (src[e] < 0 || src[e] >= t->nodes) {
            return halo_errorf(HALO_EINPUT, "%s: record %lld: edge %lld: bad source %d", path,
                               (long long)k, (long long)e, src[e]);
        }
    }
    t->rank[r->rank].blocks++;
    return 0;
}

/* A halo record (payload p): the rank's one halo set, its ids sorted. */
static int index_halo(halo_trace_rank *tr, const char *path, int64_t k, const trace_rec *r,
                      const char *p)
{
    if (tr->halo_ids != NULL) {
        return halo_errorf(HALO_EINPUT, "%s: record %lld: second halo set of rank %u", path,
                           (long long)k, r->rank);
    }
    tr->num_halo = r->n;
    tr->halo_ids = (const int32_t *)p;
    tr->halo_deg = (const int32_t *)(p + 4 * r->n);
    tr->halo_owner = (const int32_t *)(p + 8 * r->n);
    /* the payload is 8-byte aligned (file buffers are malloc'd, records padded) */
    // cppcheck-suppress invalidPointerCast
    tr->vip = r->a ? (const double *)(p + 8 * r->n + pad8(4 * r->n)) : NULL;
    for (int64_t i = 1; i < r->n; i++) {
        if (tr->halo_ids[i - 1] >= tr->halo_ids[i]) {
            return halo_errorf(HALO_EINPUT,
                               "%s: record %lld: halo ids of rank %u not "
                               "sorted at %lld",
                               path, (long long)k, r->rank, (long long)i);
        }
    }
    return 0;
}

/* A batch record (payload p) of a file of len bytes: checked, then appended to its rank's
 * records (*cap: their capacity), extending the rank's epochs and batches. */
static int index_batch(halo_trace *t, const char *path, int64_t len, int64_t k,
                       const trace_rec *r, const char *p, int64_t *cap)
{
    /* every batch has its own record, so an epoch or batch index can never reach the
     * number of records the file could hold */
    int64_t most = len / (int64_t)sizeof(trace_rec);
    if (r->a < 0 || r->a >= most || r->b < 0 || r->b >= most) {
        return halo_errorf(HALO_EINPUT, "%s: record %lld: bad epoch %lld / batch %lld", path,
                           (long long)k, (long long)r->a, (long long)r->b);
    }
    const uint8_t *fl = (const uint8_t *)(p + pad8(4 * r->n));
    const int32_t *ids = (const int32_t *)p;
    for (int64_t i = 0; i < r->n; i++) {
        if (fl[i] > 7 || ids[i] < 0 || ids[i] >= t->nodes) {
            return halo_errorf(HALO_EINPUT,
                               "%s: record %lld: input %lld: bad id %d or "
                               "flags %u",
                               path, (long long)k, (long long)i, ids[i], fl[i]);
        }
    }
    halo_trace_rank *tr = &t->rank[r->rank];
    if (tr->batches == *cap) {
        *cap = 2 * *cap + 64;
        tr->rec = halo_realloc(tr->rec, (size_t)*cap * sizeof *tr->rec);
    }
    tr->rec[tr->batches++] = (const char *)r;
    if (r->a + 1 > tr->epochs) {
        tr->epochs = (int)r->a + 1;
    }
    if (r->b + 1 > tr->max_batch) {
        tr->max_batch = r->b + 1;
    }
    return 0;
}

/* Checks one file's header and records and indexes them into t. */
static int index_file(halo_trace *t, const char *path, const char *data, int64_t len, int64_t **cap)
{
    HALO_CHECK(index_head(t, path, data, len, cap));
    int64_t off = sizeof(trace_head), k = 0;
    while (off < len) {
        if (len - off < (int64_t)sizeof(trace_rec)) {
            return halo_errorf(HALO_EINPUT, "%s: record %lld at byte %lld is truncated", path,
                               (long long)k, (long long)off);
        }
        const trace_rec *r = (const trace_rec *)(data + off);
        if (r->rank >= (uint32_t)t->ranks || r->n < 0 || r->n > INT32_MAX) {
            return halo_errorf(HALO_EINPUT,
                               "%s: record %lld at byte %lld: bad rank %u or size "
                               "%lld",
                               path, (long long)k, (long long)off, r->rank, (long long)r->n);
        }
        int64_t body = 0;
        HALO_CHECK(rec_body(path, data, len, off, k, r, &body));
        const char *p = data + off + sizeof(trace_rec);
        if (r->kind == HALO_TRACE_BLOCK) {
            HALO_CHECK(index_block(t, path, k, r, p));
        } else if (r->kind == HALO_TRACE_HALO) {
            HALO_CHECK(index_halo(&t->rank[r->rank], path, k, r, p));
        } else {
            HALO_CHECK(index_batch(t, path, len, k, r, p, &(*cap)[r->rank]));
        }
        off += (int64_t)sizeof(trace_rec) + body;
        k++;
    }
    return 0;
}

int halo_trace_load(const char *path, halo_trace **out)
{
    *out = NULL;
    halo_trace *t = HALO_NEW(halo_trace, 1);
    int64_t *cap = NULL;
    int rc = 0;
    char name[4200];
    bool split = !halo_path_exists(path);
    int nfiles = 1;
    if (split) {
        snprintf(name, sizeof name, "%s.r0", path);
        if (!halo_path_exists(name)) {
            halo_free(t);
            return halo_errorf(HALO_EIO, "%s: no such trace (nor %s)", path, name);
        }
    }
    for (int f = 0; f < nfiles; f++) {
        if (split) {
            snprintf(name, sizeof name, "%s.r%d", path, f);
        } else {
            snprintf(name, sizeof name, "%s", path);
        }
        char *data = NULL;
        size_t len = 0;
        HALO_TRY(halo_file_read_all(name, &data, &len));
        t->data = halo_realloc(t->data, (size_t)(t->ndata + 1) * sizeof *t->data);
        t->data_len = halo_realloc(t->data_len, (size_t)(t->ndata + 1) * sizeof *t->data_len);
        t->data[t->ndata] = data;
        t->data_len[t->ndata] = (int64_t)len;
        t->ndata++;
        HALO_TRY(index_file(t, name, data, (int64_t)len, &cap));
        if (split && f == 0) {
            nfiles = t->ranks;
        }
    }
    for (int r = 0; r < t->ranks; r++) {
        if (t->rank[r].halo_ids == NULL && t->rank[r].batches > 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: rank %d has batches but no halo set", path, r);
            goto fail;
        }
    }
    halo_free(cap);
    *out = t;
    return 0;
fail:
    halo_free(cap);
    halo_trace_free(t);
    return rc;
}

void halo_trace_free(halo_trace *t)
{
    if (t == NULL) {
        return;
    }
    for (int r = 0; t->rank != NULL && r < t->ranks; r++) {
        halo_free(t->rank[r].rec);
    }
    for (int i = 0; i < t->ndata; i++) {
        halo_free(t->data[i]);
    }
    halo_free(t->data);
    halo_free(t->data_len);
    halo_free(t->rank);
    halo_free(t);
}

void halo_trace_get_batch(const halo_trace *t, int r, int64_t k, halo_trace_batch *b)
{
    const trace_rec *rec = (const trace_rec *)t->rank[r].rec[k];
    const char *p = (const char *)(rec + 1);
    b->epoch = (int)rec->a;
    b->batch = rec->b;
    b->n = rec->n;
    b->ids = (const int32_t *)p;
    b->flags = (const uint8_t *)(p + pad8(4 * rec->n));
}

/* ---- replay ---- */

static void add_stats(halo_cache_stats *a, const halo_cache_stats *b)
{
    a->batches += b->batches;
    a->remote += b->remote;
    a->hits += b->hits;
    a->misses += b->misses;
    a->other_remote += b->other_remote;
    a->admitted += b->admitted;
    a->prefetched += b->prefetched;
    a->evicted += b->evicted;
    a->init_rows += b->init_rows;
    a->row_bytes = b->row_bytes;
    a->bytes_saved += b->bytes_saved;
    a->bytes_pulled += b->bytes_pulled;
    a->bytes_init += b->bytes_init;
    a->policy_s += b->policy_s;
    a->lookup_s += b->lookup_s;
}

/* Replays rank r; adds its figures to res. */
static int replay_rank(const halo_trace *t, int r, const halo_policy_opts *popts, int64_t row_bytes,
                       halo_trace_result *res)
{
    const halo_trace_rank *tr = &t->rank[r];
    halo_policy_opts po = *popts;
    po.rank = r;
    halo_policy *pol = NULL;
    halo_cache *c = NULL;
    int32_t *rid = NULL;
    int64_t *rpos = NULL;
    uint8_t *served = NULL;
    int64_t cap = 0;
    int rc = 0;
    HALO_TRY(halo_policy_open(&po, &pol));
    halo_cache_future *fut = halo_cache_future_new();
    for (int64_t k = 0; k < tr->batches; k++) {
        halo_trace_batch b;
        halo_trace_get_batch(t, r, k, &b);
        if (b.n > cap) {
            cap = b.n + b.n / 2 + 64;
            halo_free(rid);
            halo_free(rpos);
            halo_free(served);
            rid = HALO_ALLOC(int32_t, cap);
            rpos = HALO_ALLOC(int64_t, cap);
            served = HALO_ALLOC(uint8_t, cap);
        }
        int64_t m = 0;
        for (int64_t i = 0; i < b.n; i++) {
            if (b.flags[i] & HALO_TRACE_F_REMOTE) {
                rid[m++] = b.ids[i];
            }
        }
        halo_cache_future_add(fut, rid, m);
    }
    halo_cache_opts co = {
        .policy = pol,
        .rank = r,
        .ranks = t->ranks,
        .num_halo = tr->num_halo,
        .halo_ids = tr->halo_ids,
        .halo_deg = tr->halo_deg,
        .halo_owner = tr->halo_owner,
        .vip = tr->vip,
        .feat_dim = 0,
        .row_bytes = row_bytes > 0 ? row_bytes : 4 * (int64_t)t->feat_dim,
        .epochs = tr->epochs,
        .batches = tr->max_batch,
        .graph = {.nodes = t->nodes, .feat_dim = t->feat_dim},
        .part = {.parts = t->ranks, .id = r},
    };
    HALO_TRY(halo_cache_open(&co, fut, &c));
    int epoch = -1;
    for (int64_t k = 0; k < tr->batches; k++) {
        halo_trace_batch b;
        halo_trace_get_batch(t, r, k, &b);
        if (epoch >= 0 && b.epoch != epoch) {
            HALO_TRY(halo_cache_epoch_end(c, epoch));
        }
        epoch = b.epoch;
        int64_t m = 0;
        for (int64_t i = 0; i < b.n; i++) {
            if (b.flags[i] & HALO_TRACE_F_REMOTE) {
                rpos[m] = i;
                rid[m++] = b.ids[i];
            }
        }
        halo_cache_batch cb = {b.epoch, b.batch, k, b.n, b.ids};
        HALO_TRY(halo_cache_lookup(c, &cb, m, rid, rpos, NULL, served));
        const int32_t *extra;
        int64_t n_extra;
        HALO_TRY(halo_cache_decide(c, &extra, &n_extra));
        HALO_TRY(halo_cache_admit(c, NULL, NULL));
        res->input_nodes += b.n;
        res->remote_nodes += m;
    }
    if (epoch >= 0) {
        HALO_TRY(halo_cache_epoch_end(c, epoch));
    }
    const halo_cache_stats *s = halo_cache_stats_get(c);
    add_stats(&res->stats, s);
    res->capacity += halo_cache_capacity(c);
    res->halo += tr->num_halo;
    res->batches += tr->batches;
    res->policy_s += s->policy_s;
fail:
    halo_cache_close(c);
    halo_policy_close(pol);
    halo_free(rid);
    halo_free(rpos);
    halo_free(served);
    return rc;
}

int halo_trace_replay(const halo_trace *t, const halo_policy_opts *popts, int64_t row_bytes,
                      halo_trace_result *res)
{
    memset(res, 0, sizeof *res);
    double t0 = halo_now();
    for (int r = 0; r < t->ranks; r++) {
        HALO_CHECK(replay_rank(t, r, popts, row_bytes, res));
    }
    res->bytes_nocache = res->remote_nodes * res->stats.row_bytes;
    res->replay_s = halo_now() - t0;
    return 0;
}
