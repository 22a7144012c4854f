/* Distributed learnable embeddings: owner-held rows, batched gathers and gradient pushes over
 * halo_comm exchanges, sparse Adam / Adagrad applied by the owners in a fixed order. */
#include "embed/embed.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct halo_embed {
    halo_comm *c;          /* channel the collectives run on */
    halo_embed_config cfg; /* as created */
    int P, me;             /* ranks, this rank */
    int64_t *range;        /* [P+1] owned global id ranges */
    int64_t own;           /* nodes this rank owns (range[me+1] - range[me]) */
    int32_t *row_of;       /* [own] row of each owned node, -1: none */
    int64_t rows;          /* rows held */
    float *w;              /* [rows x dim] the rows */
    float *s1;             /* [rows x dim] Adam first moment, or Adagrad's sum of squares */
    float *s2;             /* [rows x dim] Adam second moment (NULL for Adagrad) */
    int64_t *step;         /* [rows] Adam steps taken by each row (NULL for Adagrad) */
    halo_xchg xreq, xrep;  /* the two exchanges of a call */
    int64_t *off;          /* [P+1] scratch: byte offsets per peer */
    int64_t *cnt;          /* [P] scratch: entries per peer */
    halo_buf send, perm, rep, ent, sum; /* scratch */
};

/* One gradient contribution as an owner sorts them. */
typedef struct embed_entry {
    int64_t row;      /* local row */
    uint64_t key;     /* order key given by the sender */
    int32_t src, pos; /* sending rank, position in its list */
    const float *g;   /* the contribution (inside the received bytes) */
} embed_entry;

/* Record of a contribution on the wire: key, gid, position, then dim floats. */
#define REC_HDR 16

void halo_embed_config_default(halo_embed_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->optim = HALO_EMBED_ADAM;
    cfg->lr = 0.01f;
    cfg->beta1 = 0.9f;
    cfg->beta2 = 0.999f;
    cfg->eps = 1e-8f;
    cfg->init_bound = 1.0f;
    cfg->seed = 1;
}

int halo_embed_optim_parse(const char *name, int *optim)
{
    if (name != NULL && strcmp(name, "adam") == 0) {
        *optim = HALO_EMBED_ADAM;
    } else if (name != NULL && strcmp(name, "adagrad") == 0) {
        *optim = HALO_EMBED_ADAGRAD;
    } else {
        return halo_errorf(HALO_EUSAGE, "embed: optimiser must be adam or adagrad, got '%s'",
                           name != NULL ? name : "");
    }
    return 0;
}

const char *halo_embed_optim_name(int optim)
{
    return optim == HALO_EMBED_ADAM ? "adam" : optim == HALO_EMBED_ADAGRAD ? "adagrad" : "?";
}

static int check_config(const halo_embed_config *c)
{
    if (c->dim < 1) {
        return halo_errorf(HALO_EUSAGE, "embed: dim must be positive, got %d", c->dim);
    }
    if (c->optim != HALO_EMBED_ADAM && c->optim != HALO_EMBED_ADAGRAD) {
        return halo_errorf(HALO_EUSAGE, "embed: unknown optimiser %d", c->optim);
    }
    if (!(c->lr > 0.0f) || !(c->beta1 >= 0.0f && c->beta1 < 1.0f) ||
        !(c->beta2 >= 0.0f && c->beta2 < 1.0f) || !(c->eps >= 0.0f) || !(c->init_bound >= 0.0f)) {
        return halo_errorf(HALO_EUSAGE,
                           "embed: bad settings (lr %g, betas %g %g, eps %g, init bound %g)",
                           (double)c->lr, (double)c->beta1, (double)c->beta2, (double)c->eps,
                           (double)c->init_bound);
    }
    return 0;
}

int halo_embed_create(halo_comm *c, const halo_embed_config *cfg, const int64_t *range,
                      const uint8_t *has_row, const int64_t *key, halo_embed **out)
{
    *out = NULL;
    HALO_CHECK(check_config(cfg));
    int P = halo_comm_size(c), me = halo_comm_rank(c);
    for (int p = 0; p < P; p++) {
        if (range[p + 1] < range[p] || range[0] != 0 || range[P] > INT32_MAX) {
            return halo_errorf(HALO_EUSAGE,
                               "embed: owner ranges must rise from 0 (rank %d: "
                               "[%lld, %lld))",
                               p, (long long)range[p], (long long)range[p + 1]);
        }
    }
    halo_embed *e = HALO_NEW(halo_embed, 1);
    e->c = c;
    e->cfg = *cfg;
    e->P = P;
    e->me = me;
    e->range = HALO_ALLOC(int64_t, P + 1);
    memcpy(e->range, range, (size_t)(P + 1) * sizeof *range);
    e->own = range[me + 1] - range[me];
    e->row_of = HALO_ALLOC(int32_t, e->own + 1);
    for (int64_t v = 0; v < e->own; v++) {
        e->row_of[v] = has_row == NULL || has_row[v] ? (int32_t)e->rows++ : -1;
    }
    size_t n = (size_t)e->rows * cfg->dim;
    e->w = HALO_ALLOC(float, n + 1);
    e->s1 = HALO_NEW(float, n + 1);
    if (cfg->optim == HALO_EMBED_ADAM) {
        e->s2 = HALO_NEW(float, n + 1);
        e->step = HALO_NEW(int64_t, e->rows + 1);
    }
    e->off = HALO_ALLOC(int64_t, P + 1);
    e->cnt = HALO_ALLOC(int64_t, P);
    double a = cfg->init_bound;
    for (int64_t v = 0; v < e->own; v++) {
        if (e->row_of[v] < 0) {
            continue;
        }
        halo_rng r;
        uint64_t k = key != NULL ? (uint64_t)key[v] : (uint64_t)(range[me] + v);
        halo_rng_init(&r, cfg->seed, HALO_RNG_INIT, HALO_EMBED_INIT_TAG, k, 0);
        float *row = e->w + (size_t)e->row_of[v] * cfg->dim;
        for (int j = 0; j < cfg->dim; j++) {
            row[j] = (float)((2.0 * halo_rng_uniform(&r) - 1.0) * a);
        }
    }
    *out = e;
    return 0;
}

void halo_embed_free(halo_embed *e)
{
    if (e == NULL) {
        return;
    }
    halo_free(e->range);
    halo_free(e->row_of);
    halo_free(e->w);
    halo_free(e->s1);
    halo_free(e->s2);
    halo_free(e->step);
    halo_free(e->off);
    halo_free(e->cnt);
    halo_xchg_free(&e->xreq);
    halo_xchg_free(&e->xrep);
    halo_buf_free(&e->send);
    halo_buf_free(&e->perm);
    halo_buf_free(&e->rep);
    halo_buf_free(&e->ent);
    halo_buf_free(&e->sum);
    halo_free(e);
}

int64_t halo_embed_rows(const halo_embed *e)
{
    return e->rows;
}

float *halo_embed_table(halo_embed *e)
{
    return e->w;
}

const halo_embed_config *halo_embed_config_of(const halo_embed *e)
{
    return &e->cfg;
}

/* ---------------------------------------------------------------- ownership */

/* Rank owning global id g, or -1 outside the ranges. */
static int owner_of(const halo_embed *e, int64_t g)
{
    if (g < 0 || g >= e->range[e->P]) {
        return -1;
    }
    int lo = 0, hi = e->P - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (e->range[mid] <= g) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/* Local row of a node this rank owns, or a negative code naming it. */
static int local_row(const halo_embed *e, int32_t g, int from, int64_t *row)
{
    int64_t v = (int64_t)g - e->range[e->me];
    if (v < 0 || v >= e->own || e->row_of[v] < 0) {
        return halo_errorf(HALO_EINPUT,
                           "embed: node %d (asked by rank %d) has no embedding row "
                           "on rank %d",
                           g, from, e->me);
    }
    *row = e->row_of[v];
    return 0;
}

/* Groups gid[n] by owner, stable: perm[j] = index of the j-th entry in owner order, e->cnt the
 * entries per owner. Fails (locally) on an id outside the ranges. */
static int group_by_owner(halo_embed *e, int64_t n, const int32_t *gid, int64_t *perm)
{
    memset(e->cnt, 0, (size_t)e->P * sizeof *e->cnt);
    int32_t *own = halo_buf_get(&e->rep, n * 4 + 4);
    for (int64_t i = 0; i < n; i++) {
        int o = owner_of(e, gid[i]);
        if (o < 0) {
            return halo_errorf(HALO_EINPUT, "embed: node %d is outside the graph's %lld nodes",
                               gid[i], (long long)e->range[e->P]);
        }
        own[i] = o;
        e->cnt[o]++;
    }
    int64_t *cur = e->off;
    cur[0] = 0;
    for (int p = 0; p < e->P; p++) {
        cur[p + 1] = cur[p] + e->cnt[p];
    }
    for (int64_t i = 0; i < n; i++) {
        perm[cur[own[i]]++] = i;
    }
    return 0;
}

/* ---------------------------------------------------------------- gather */

int halo_embed_gather(halo_embed *e, int64_t n, const int32_t *gid, float *out)
{
    int P = e->P, dim = e->cfg.dim;
    size_t rb = (size_t)dim * sizeof(float);
    int64_t *perm = halo_buf_get(&e->perm, n * 8 + 8);
    int rc = group_by_owner(e, n, gid, perm);
    HALO_CHECK(halo_comm_agree(e->c, rc));
    /* requests: the ids per owner, in the order of perm */
    int32_t *send = halo_buf_get(&e->send, n * 4 + 4);
    for (int64_t j = 0; j < n; j++) {
        send[j] = gid[perm[j]];
    }
    e->off[0] = 0;
    for (int p = 0; p < P; p++) {
        e->off[p + 1] = e->off[p] + 4 * e->cnt[p];
    }
    HALO_CHECK(halo_comm_xchg_start(e->c, &e->xreq, send, e->off));
    HALO_CHECK(halo_comm_xchg_wait(e->c, &e->xreq));
    /* replies: the rows asked for, in the order asked */
    const halo_xchg *x = &e->xreq;
    int64_t asked = x->recv_off[P] / 4;
    float *rep = halo_buf_get(&e->rep, asked * (int64_t)rb + 4);
    const int32_t *req = (const int32_t *)x->recv;
    rc = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        for (int64_t k = x->recv_off[p] / 4; k < x->recv_off[p + 1] / 4; k++) {
            int64_t row;
            rc = local_row(e, req[k], p, &row);
            if (rc < 0) {
                break;
            }
            memcpy(rep + k * dim, e->w + row * dim, rb);
        }
    }
    HALO_CHECK(halo_comm_agree(e->c, rc));
    int64_t *roff = e->off;
    roff[0] = 0;
    for (int p = 0; p < P; p++) {
        roff[p + 1] = x->recv_off[p + 1] / 4 * (int64_t)rb;
    }
    HALO_CHECK(halo_comm_xchg_start(e->c, &e->xrep, rep, roff));
    HALO_CHECK(halo_comm_xchg_wait(e->c, &e->xrep));
    /* the replies come back per owner in the order of perm */
    const float *got = (const float *)e->xrep.recv;
    for (int64_t j = 0; j < n; j++) {
        memcpy(out + perm[j] * dim, got + j * dim, rb);
    }
    return 0;
}

/* ---------------------------------------------------------------- update */

static int entry_cmp(const void *pa, const void *pb)
{
    const embed_entry *a = pa, *b = pb;
    if (a->row != b->row) {
        return a->row < b->row ? -1 : 1;
    }
    if (a->key != b->key) {
        return a->key < b->key ? -1 : 1;
    }
    if (a->src != b->src) {
        return a->src < b->src ? -1 : 1;
    }
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The optimiser step of one row from its summed gradient g (already scaled). */
static void apply_row(halo_embed *e, int64_t row, const float *g)
{
    const halo_embed_config *c = &e->cfg;
    int dim = c->dim;
    float *w = e->w + row * dim, *s1 = e->s1 + row * dim;
    if (c->optim == HALO_EMBED_ADAGRAD) {
        for (int j = 0; j < dim; j++) {
            s1[j] += g[j] * g[j];
            w[j] -= c->lr * g[j] / (sqrtf(s1[j]) + c->eps);
        }
        return;
    }
    float *s2 = e->s2 + row * dim;
    int64_t t = ++e->step[row];
    float c1 = (float)(1.0 - pow((double)c->beta1, (double)t));
    float c2 = (float)(1.0 - pow((double)c->beta2, (double)t));
    for (int j = 0; j < dim; j++) {
        s1[j] = c->beta1 * s1[j] + (1.0f - c->beta1) * g[j];
        s2[j] = c->beta2 * s2[j] + (1.0f - c->beta2) * g[j] * g[j];
        w[j] -= c->lr * (s1[j] / c1) / (sqrtf(s2[j] / c2) + c->eps);
    }
}

int halo_embed_update(halo_embed *e, int64_t n, const int32_t *gid, const float *grad,
                      const uint64_t *key, float grad_scale)
{
    int P = e->P, dim = e->cfg.dim;
    size_t rb = (size_t)dim * sizeof(float), rec = REC_HDR + rb;
    int64_t *perm = halo_buf_get(&e->perm, n * 8 + 8);
    int rc = group_by_owner(e, n, gid, perm);
    HALO_CHECK(halo_comm_agree(e->c, rc));
    char *send = halo_buf_get(&e->send, n * (int64_t)rec + 8);
    for (int64_t j = 0; j < n; j++) {
        int64_t i = perm[j];
        char *r = send + j * rec;
        uint64_t k = key != NULL ? key[i] : 0;
        int32_t g = gid[i], pos = (int32_t)i;
        memcpy(r, &k, 8);
        memcpy(r + 8, &g, 4);
        memcpy(r + 12, &pos, 4);
        memcpy(r + REC_HDR, grad + i * dim, rb);
    }
    e->off[0] = 0;
    for (int p = 0; p < P; p++) {
        e->off[p + 1] = e->off[p] + e->cnt[p] * (int64_t)rec;
    }
    HALO_CHECK(halo_comm_xchg_start(e->c, &e->xreq, send, e->off));
    HALO_CHECK(halo_comm_xchg_wait(e->c, &e->xreq));
    const halo_xchg *x = &e->xreq;
    int64_t got = x->recv_off[P] / (int64_t)rec;
    embed_entry *ent = halo_buf_get(&e->ent, (got + 1) * (int64_t)sizeof *ent);
    rc = 0;
    int64_t k = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        for (int64_t off = x->recv_off[p]; off < x->recv_off[p + 1]; off += (int64_t)rec, k++) {
            const char *r = x->recv + off;
            int32_t g;
            memcpy(&ent[k].key, r, 8);
            memcpy(&g, r + 8, 4);
            memcpy(&ent[k].pos, r + 12, 4);
            ent[k].src = p;
            ent[k].g = (const float *)(r + REC_HDR);
            rc = local_row(e, g, p, &ent[k].row);
            if (rc < 0) {
                break;
            }
        }
    }
    HALO_CHECK(halo_comm_agree(e->c, rc));
    qsort(ent, (size_t)got, sizeof *ent, entry_cmp);
    float *sum = halo_buf_get(&e->sum, (int64_t)rb + 4);
    for (int64_t a = 0; a < got;) {
        int64_t b = a + 1;
        memcpy(sum, ent[a].g, rb);
        for (; b < got && ent[b].row == ent[a].row; b++) {
            for (int j = 0; j < dim; j++) {
                sum[j] += ent[b].g[j];
            }
        }
        for (int j = 0; j < dim; j++) {
            sum[j] *= grad_scale;
        }
        apply_row(e, ent[a].row, sum);
        a = b;
    }
    return 0;
}

/* ---------------------------------------------------------------- checkpoints */

/* Header of a checkpoint file; the body is the rows, then the optimiser state, then a CRC-32 of
 * everything before it. */
typedef struct embed_file_hdr {
    char magic[8];   /* "HALOEMB1" */
    int32_t dim;     /* row width */
    int32_t optim;   /* HALO_EMBED_* */
    int32_t ranks;   /* rank count of the run */
    int32_t rank;    /* rank that wrote it */
    int64_t rows;    /* rows held */
    uint64_t ranges; /* hash of the owner ranges */
} embed_file_hdr;

static uint64_t ranges_hash(const halo_embed *e)
{
    uint64_t h = halo_mix64((uint64_t)e->P);
    for (int p = 0; p <= e->P; p++) {
        h = halo_mix64(h ^ (uint64_t)e->range[p]);
    }
    return h;
}

/* Sizes of the body's parts in bytes. */
static size_t body_bytes(const halo_embed *e)
{
    size_t n = (size_t)e->rows * e->cfg.dim * sizeof(float);
    return e->cfg.optim == HALO_EMBED_ADAM ? 3 * n + (size_t)e->rows * sizeof(int64_t) : 2 * n;
}

static int file_path(const halo_embed *e, const char *dir, char *path, size_t size)
{
    char name[64];
    snprintf(name, sizeof name, "embed-r%d.bin", e->me);
    return halo_path_join(path, size, dir, name);
}

int halo_embed_save(const halo_embed *e, const char *dir)
{
    char path[4096];
    HALO_CHECK(file_path(e, dir, path, sizeof path));
    size_t n = (size_t)e->rows * e->cfg.dim * sizeof(float);
    size_t total = sizeof(embed_file_hdr) + body_bytes(e) + 4;
    char *buf = halo_malloc(total);
    embed_file_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "HALOEMB1", 8);
    h.dim = e->cfg.dim;
    h.optim = e->cfg.optim;
    h.ranks = e->P;
    h.rank = e->me;
    h.rows = e->rows;
    h.ranges = ranges_hash(e);
    char *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memcpy(p, e->w, n);
    p += n;
    memcpy(p, e->s1, n);
    p += n;
    if (e->cfg.optim == HALO_EMBED_ADAM) {
        memcpy(p, e->s2, n);
        p += n;
        memcpy(p, e->step, (size_t)e->rows * sizeof(int64_t));
        p += (size_t)e->rows * sizeof(int64_t);
    }
    uint32_t crc = halo_crc32(0, buf, (size_t)(p - buf));
    memcpy(p, &crc, 4);
    int rc = halo_file_write_atomic(path, buf, total);
    halo_free(buf);
    return rc;
}

int halo_embed_load(halo_embed *e, const char *dir)
{
    char path[4096];
    HALO_CHECK(file_path(e, dir, path, sizeof path));
    char *buf = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &buf, &len));
    int rc = 0;
    size_t n = (size_t)e->rows * e->cfg.dim * sizeof(float);
    size_t want = sizeof(embed_file_hdr) + body_bytes(e) + 4;
    embed_file_hdr h;
    if (len != want) {
        rc = halo_errorf(HALO_EINPUT, "embed: %s: %zu bytes, expected %zu for %lld rows of %d",
                         path, len, want, (long long)e->rows, e->cfg.dim);
        goto fail;
    }
    memcpy(&h, buf, sizeof h);
    uint32_t crc;
    memcpy(&crc, buf + len - 4, 4);
    if (memcmp(h.magic, "HALOEMB1", 8) != 0 || crc != halo_crc32(0, buf, len - 4)) {
        rc = halo_errorf(HALO_EINPUT,
                         "embed: %s: not an embedding checkpoint or damaged "
                         "(bad magic or CRC)",
                         path);
        goto fail;
    }
    if (h.dim != e->cfg.dim || h.optim != e->cfg.optim || h.ranks != e->P || h.rank != e->me ||
        h.rows != e->rows || h.ranges != ranges_hash(e)) {
        rc = halo_errorf(HALO_EINPUT,
                         "embed: %s: written for dim %d, %s, rank %d of %d, %lld rows; this "
                         "table has dim %d, %s, rank %d of %d, %lld rows (or other ranges)",
                         path, h.dim, halo_embed_optim_name(h.optim), h.rank, h.ranks,
                         (long long)h.rows, e->cfg.dim, halo_embed_optim_name(e->cfg.optim), e->me,
                         e->P, (long long)e->rows);
        goto fail;
    }
    const char *p = buf + sizeof h;
    memcpy(e->w, p, n);
    p += n;
    memcpy(e->s1, p, n);
    p += n;
    if (e->cfg.optim == HALO_EMBED_ADAM) {
        memcpy(e->s2, p, n);
        p += n;
        memcpy(e->step, p, (size_t)e->rows * sizeof(int64_t));
    }
fail:
    halo_free(buf);
    return rc;
}

uint64_t halo_embed_checksum(const halo_embed *e)
{
    size_t n = (size_t)e->rows * e->cfg.dim;
    uint64_t h = halo_mix64((uint64_t)e->rows);
    const float *parts[3] = {e->w, e->s1, e->s2};
    for (int k = 0; k < 3; k++) {
        if (parts[k] == NULL) {
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &parts[k][i], 4);
            h = halo_mix64(h ^ u);
        }
    }
    for (int64_t r = 0; e->step != NULL && r < e->rows; r++) {
        h = halo_mix64(h ^ (uint64_t)e->step[r]);
    }
    return h;
}
