/* The remote-feature cache mechanism: id map, slots, statistics, decisions applied, row copies. */
#include "cache/cache.h"

#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A look-ahead under construction: the remote ids of each future step (raw, unresolved). */
struct halo_cache_future {
    int64_t steps;   /* steps appended */
    int64_t *ptr;    /* [steps+1] offsets into ids */
    int32_t *ids;    /* the ids of all steps */
    int64_t cap;     /* capacity of ids */
    int64_t ptr_cap; /* capacity of ptr */
};

struct halo_cache {
    halo_policy *pol; /* policy (not owned), NULL = no cache */
    int hint;         /* HALO_CACHE_HINT_* the policy asked for */
    /* halo set */
    int64_t nh;      /* halo nodes */
    int32_t *hids;   /* [nh] sorted global ids */
    int32_t *hdeg;   /* [nh] in-degree (or NULL) */
    int32_t *howner; /* [nh] owner (or NULL) */
    int32_t *hntype; /* [nh] node type (or NULL: homogeneous) */
    int64_t *hmiss;  /* [nh] misses so far */
    double *hscore;  /* [nh] policy-owned score */
    double *vip;     /* [nh] inclusion probabilities (or NULL) */
    /* id -> halo position, open addressing with linear probing */
    int32_t *map_key;  /* [map_mask+1] ids, -1 = empty */
    int32_t *map_val;  /* [map_mask+1] halo positions */
    uint64_t map_mask; /* table size - 1 (a power of two at least 2 * nh) */
    int32_t *slot_of;  /* [nh] slot of each halo node, -1 = not cached */
    /* slots */
    int64_t cap;    /* slots */
    int64_t used;   /* occupied slots */
    int32_t *sid;   /* [cap] global id, -1 empty */
    int32_t *spos;  /* [cap] halo position of the node in each slot, -1 empty */
    int64_t *shits; /* [cap] hits since the node entered */
    int64_t *slast; /* [cap] step of the last hit, -1 none */
    int64_t *sins;  /* [cap] step at which the node entered */
    double *sscore; /* [cap] policy-owned score */
    float *rows;    /* [cap * dim] rows (NULL when dim == 0) */
    int dim;        /* floats per row */
    /* the current batch */
    int64_t t;                /* lookups so far (the next lookup is look-ahead step t) */
    int64_t *stamp;           /* [nh] t+1 of the lookup that last saw each halo node */
    int64_t *bidx;            /* [nh] index of the node in that lookup's id list */
    int32_t *hit_slots;       /* [nh] slots hit in the current batch */
    int32_t *miss_halo;       /* [nh] halo positions missed in the current batch */
    int64_t n_hit, n_miss;    /* entries of the two lists */
    const int64_t *b_row_pos; /* the current lookup's row positions (caller's, until admit) */
    int64_t b_n;              /* the current lookup's id count */
    bool in_batch;            /* lookup done, decide not yet */
    halo_cache_batch cur;     /* the current batch */
    /* decisions */
    int32_t *evict_buf; /* [cap] */
    int32_t *admit_buf; /* [cap] */
    int64_t n_pend;     /* admitted slots waiting for their rows */
    int32_t *pend_slot; /* [cap] their slots */
    int64_t *pend_src;  /* [cap] >= 0: index in the batch's ids; < 0: -(extra index + 1) */
    int32_t *extra;     /* [cap] admitted ids to fetch as extras */
    int64_t n_extra;    /* entries of extra */
    /* initial fill */
    int32_t *init_ids; /* [n_init] */
    int64_t n_init;    /* initial contents */
    bool init_pending; /* init_fill not yet called */
    /* look-ahead (next-use hints) */
    int64_t fsteps;    /* steps of the look-ahead */
    int64_t *fptr;     /* [fsteps+1] */
    int32_t *fpos;     /* halo positions accessed at each step */
    int64_t *fnext;    /* step of the next access of the same node, HALO_CACHE_NEVER none */
    int64_t *next_use; /* [nh] next access step of each halo node from the current step */
    /* the hooks' views */
    halo_policy_ctx ctx; /* context of every hook call */
    halo_cache_stats st; /* counters */
};

/* ---- id map ---- */

static inline uint64_t map_hash(int32_t id)
{
    return halo_mix64((uint64_t)(uint32_t)id);
}

static void map_build(halo_cache *c)
{
    uint64_t size = 16;
    while (size < (uint64_t)c->nh * 2) {
        size <<= 1;
    }
    c->map_mask = size - 1;
    c->map_key = HALO_ALLOC(int32_t, size);
    c->map_val = HALO_ALLOC(int32_t, size);
    memset(c->map_key, 0xff, size * sizeof(int32_t));
    for (int64_t h = 0; h < c->nh; h++) {
        uint64_t i = map_hash(c->hids[h]) & c->map_mask;
        while (c->map_key[i] >= 0) {
            i = (i + 1) & c->map_mask;
        }
        c->map_key[i] = c->hids[h];
        c->map_val[i] = (int32_t)h;
    }
}

/* Halo position of id, -1 when id is not a halo node of this rank. */
static inline int64_t map_get(const halo_cache *c, int32_t id)
{
    if (id < 0) {
        return -1;
    }
    uint64_t i = map_hash(id) & c->map_mask;
    for (;;) {
        int32_t k = c->map_key[i];
        if (k == id) {
            return c->map_val[i];
        }
        if (k < 0) {
            return -1;
        }
        i = (i + 1) & c->map_mask;
    }
}

/* ---- look-ahead ---- */

halo_cache_future *halo_cache_future_new(void)
{
    halo_cache_future *f = HALO_NEW(halo_cache_future, 1);
    f->ptr_cap = 64;
    f->ptr = HALO_NEW(int64_t, f->ptr_cap);
    return f;
}

void halo_cache_future_add(halo_cache_future *f, const int32_t *ids, int64_t n)
{
    if (f->steps + 2 > f->ptr_cap) {
        f->ptr_cap *= 2;
        f->ptr = halo_realloc(f->ptr, (size_t)f->ptr_cap * sizeof *f->ptr);
    }
    int64_t need = f->ptr[f->steps] + n;
    if (need > f->cap) {
        f->cap = need + need / 2 + 1024;
        f->ids = halo_realloc(f->ids, (size_t)f->cap * sizeof *f->ids);
    }
    if (n > 0) {
        memcpy(f->ids + f->ptr[f->steps], ids, (size_t)n * sizeof *ids);
    }
    f->steps++;
    f->ptr[f->steps] = need;
}

int64_t halo_cache_future_steps(const halo_cache_future *f)
{
    return f ? f->steps : 0;
}

void halo_cache_future_free(halo_cache_future *f)
{
    if (f == NULL) {
        return;
    }
    halo_free(f->ptr);
    halo_free(f->ids);
    halo_free(f);
}

/* Resolves the look-ahead to halo positions (each node once per step) and links each access to
 * the next access of the same node, with one backward pass; next_use starts at first accesses. */
static void future_resolve(halo_cache *c, const halo_cache_future *f)
{
    c->fsteps = f->steps;
    c->fptr = HALO_NEW(int64_t, f->steps + 1);
    c->fpos = HALO_ALLOC(int32_t, f->ptr[f->steps] + 1);
    int64_t *seen = HALO_NEW(int64_t, c->nh + 1);
    int64_t m = 0;
    for (int64_t s = 0; s < f->steps; s++) {
        for (int64_t k = f->ptr[s]; k < f->ptr[s + 1]; k++) {
            int64_t h = map_get(c, f->ids[k]);
            if (h >= 0 && seen[h] != s + 1) {
                seen[h] = s + 1;
                c->fpos[m++] = (int32_t)h;
            }
        }
        c->fptr[s + 1] = m;
    }
    c->fnext = HALO_ALLOC(int64_t, m + 1);
    for (int64_t h = 0; h < c->nh; h++) {
        c->next_use[h] = HALO_CACHE_NEVER;
    }
    for (int64_t s = f->steps - 1; s >= 0; s--) {
        for (int64_t k = c->fptr[s]; k < c->fptr[s + 1]; k++) {
            c->fnext[k] = c->next_use[c->fpos[k]];
            c->next_use[c->fpos[k]] = s;
        }
    }
    halo_free(seen);
}

static inline double use_score(int64_t step)
{
    return step == HALO_CACHE_NEVER ? HUGE_VAL : (double)step;
}

/* ---- open / close ---- */

/* The value of the policy's parameter `hint` ("next_use", "vip"), read through the params
 * listing so that no Lua is needed here. */
int halo_cache_policy_hint(halo_policy *pol)
{
    if (pol == NULL) {
        return HALO_CACHE_HINT_NONE;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        return HALO_CACHE_HINT_NONE;
    }
    halo_policy_print_params(pol, f, "\n");
    fclose(f);
    int hint = HALO_CACHE_HINT_NONE;
    if (buf != NULL && strstr(buf, "\nhint=next_use\n") != NULL) {
        hint = HALO_CACHE_HINT_NEXT_USE;
    } else if (buf != NULL && strstr(buf, "\nhint=vip\n") != NULL) {
        hint = HALO_CACHE_HINT_VIP;
    }
    free(buf);
    return hint;
}

/* ctx->halo_find: the id map, so that the engine validates a decision in O(1) per id; the map
 * probes are prefetched ahead as in lookup (the ids are in no particular order). */
static void find_cb(const void *arg, const int32_t *ids, int64_t n, int32_t *pos)
{
    const halo_cache *c = arg;
    for (int64_t i = 0; i < n; i++) {
        if (i + 8 < n && ids[i + 8] >= 0) {
            __builtin_prefetch(&c->map_key[map_hash(ids[i + 8]) & c->map_mask]);
        }
        pos[i] = (int32_t)map_get(c, ids[i]);
    }
}

static void set_views(halo_cache *c)
{
    halo_policy_ctx *x = &c->ctx;
    x->halo.n = c->nh;
    x->halo.ids = c->hids;
    x->halo.deg = c->hdeg;
    x->halo.owner = c->howner;
    x->halo.ntype = c->hntype;
    x->halo.misses = c->hmiss;
    x->halo.score = c->hscore;
    x->halo_find = find_cb;
    x->halo_find_arg = c;
    x->cache_slot_of = c->slot_of;
    x->cache.capacity = c->cap;
    x->cache.used = c->used;
    x->cache.id = c->sid;
    x->cache.hits = c->shits;
    x->cache.last_hit = c->slast;
    x->cache.inserted = c->sins;
    x->cache.score = c->sscore;
    x->cache.pos = c->spos;
}

static int32_t *copy_i32(const int32_t *a, int64_t n)
{
    if (a == NULL) {
        return NULL;
    }
    int32_t *b = HALO_ALLOC(int32_t, n + 1);
    memcpy(b, a, (size_t)n * sizeof *a);
    return b;
}

/* Whether the options describe a cache: counts in range, halo ids sorted and distinct. */
static int check_opts(const halo_cache_opts *o)
{
    if (o->num_halo < 0 || o->num_halo > INT32_MAX || (o->num_halo > 0 && o->halo_ids == NULL) ||
        o->feat_dim < 0) {
        return halo_errorf(HALO_EUSAGE, "cache: bad options (num_halo %lld, feat_dim %d)",
                           (long long)o->num_halo, o->feat_dim);
    }
    for (int64_t h = 1; h < o->num_halo; h++) {
        if (o->halo_ids[h - 1] >= o->halo_ids[h]) {
            return halo_errorf(HALO_EINPUT, "cache: halo ids are not sorted and distinct at %lld",
                               (long long)h);
        }
    }
    return 0;
}

/* The arrays indexed by halo node (copies of the options' ones, counters, slot map, next uses,
 * the id map) and the policy's view of the run. */
static void halo_arrays(halo_cache *c, const halo_cache_opts *o)
{
    c->hids = copy_i32(o->halo_ids, c->nh);
    if (c->hids == NULL) {
        c->hids = HALO_NEW(int32_t, 1);
    }
    c->hdeg = copy_i32(o->halo_deg, c->nh);
    c->howner = copy_i32(o->halo_owner, c->nh);
    c->hntype = copy_i32(o->halo_ntype, c->nh);
    c->hmiss = HALO_NEW(int64_t, c->nh + 1);
    c->hscore = HALO_NEW(double, c->nh + 1);
    c->slot_of = HALO_ALLOC(int32_t, c->nh + 1);
    memset(c->slot_of, 0xff, (size_t)(c->nh + 1) * sizeof(int32_t));
    c->stamp = HALO_NEW(int64_t, c->nh + 1);
    c->bidx = HALO_NEW(int64_t, c->nh + 1);
    c->hit_slots = HALO_ALLOC(int32_t, c->nh + 1);
    c->miss_halo = HALO_ALLOC(int32_t, c->nh + 1);
    c->next_use = HALO_ALLOC(int64_t, c->nh + 1);
    for (int64_t h = 0; h < c->nh; h++) {
        c->next_use[h] = HALO_CACHE_NEVER;
    }
    if (o->vip != NULL) {
        c->vip = HALO_ALLOC(double, c->nh + 1);
        memcpy(c->vip, o->vip, (size_t)c->nh * sizeof(double));
    }
    map_build(c);
    c->hint = halo_cache_policy_hint(c->pol);
}

/* The policy's context at open (before the first epoch). */
static void ctx_init(halo_cache *c, const halo_cache_opts *o)
{
    halo_policy_ctx *x = &c->ctx;
    x->rank = o->rank;
    x->ranks = o->ranks;
    x->epoch = -1;
    x->epochs = o->epochs;
    x->batch = -1;
    x->batches = o->batches;
    x->step = 0;
    x->batch_size = o->batch_size;
    x->graph = o->graph;
    x->part = o->part;
    set_views(c);
}

/* cache_init: the halo scores of the policy's hint, then the policy's capacity, score and
 * initial ids in *plan (plan->ids allocated here, freed by the caller on an error). */
static int plan_init(halo_cache *c, const halo_cache_opts *o, halo_policy_cache_plan *plan)
{
    plan->ids = HALO_ALLOC(int32_t, c->nh + 1);
    if (c->pol == NULL) {
        return 0;
    }
    if (c->hint == HALO_CACHE_HINT_NEXT_USE) {
        for (int64_t h = 0; h < c->nh; h++) {
            c->hscore[h] = use_score(c->next_use[h]);
        }
    } else if (c->hint == HALO_CACHE_HINT_VIP) {
        if (c->vip == NULL) {
            return halo_errorf(HALO_EUSAGE,
                               "cache: policy %s asks for hint=vip but the "
                               "caller computed no inclusion probabilities",
                               halo_policy_name(o->policy));
        }
        memcpy(c->hscore, c->vip, (size_t)c->nh * sizeof(double));
    }
    return halo_policy_cache_init(c->pol, &c->ctx, plan);
}

/* The arrays indexed by slot (capacity + 1 of them) and the rows. */
static void slot_arrays(halo_cache *c, double score)
{
    int64_t cap1 = c->cap + 1;
    c->sid = HALO_ALLOC(int32_t, cap1);
    memset(c->sid, 0xff, (size_t)cap1 * sizeof(int32_t));
    c->spos = HALO_ALLOC(int32_t, cap1);
    memset(c->spos, 0xff, (size_t)cap1 * sizeof(int32_t));
    c->shits = HALO_NEW(int64_t, cap1);
    c->slast = HALO_ALLOC(int64_t, cap1);
    c->sins = HALO_NEW(int64_t, cap1);
    c->sscore = HALO_ALLOC(double, cap1);
    for (int64_t s = 0; s < cap1; s++) {
        c->slast[s] = -1;
        c->sscore[s] = score;
    }
    if (c->dim > 0) {
        c->rows = HALO_NEW(float, cap1 * c->dim);
    }
    c->evict_buf = HALO_ALLOC(int32_t, cap1);
    c->admit_buf = HALO_ALLOC(int32_t, cap1);
    c->pend_slot = HALO_ALLOC(int32_t, cap1);
    c->pend_src = HALO_ALLOC(int64_t, cap1);
    c->extra = HALO_ALLOC(int32_t, cap1);
}

/* Puts the plan's initial ids in slots 0.. (their rows are fetched with the first batch). */
static int place_initial(halo_cache *c, const halo_policy_cache_plan *plan)
{
    for (int64_t i = 0; i < plan->n_ids; i++) {
        int64_t h = map_get(c, plan->ids[i]);
        if (h < 0 || c->slot_of[h] >= 0) {
            return halo_errorf(HALO_ESTATE, "cache: initial id %d is not a free halo node",
                               plan->ids[i]);
        }
        c->sid[i] = plan->ids[i];
        c->spos[i] = (int32_t)h;
        c->slot_of[h] = (int32_t)i;
    }
    c->used = plan->n_ids;
    c->init_pending = c->dim > 0 && c->n_init > 0;
    c->st.init_rows = c->n_init;
    c->st.bytes_init = c->n_init * c->st.row_bytes;
    return 0;
}

int halo_cache_open(const halo_cache_opts *o, halo_cache_future *future, halo_cache **out)
{
    *out = NULL;
    int rc = check_opts(o);
    if (rc < 0) {
        halo_cache_future_free(future);
        return rc;
    }
    halo_cache *c = HALO_NEW(halo_cache, 1);
    c->pol = o->policy;
    c->nh = o->num_halo;
    c->dim = o->feat_dim;
    halo_arrays(c, o);
    if (future != NULL) {
        future_resolve(c, future);
        halo_cache_future_free(future);
    }
    c->st.row_bytes = o->row_bytes > 0 ? o->row_bytes : 4 * (int64_t)o->feat_dim;
    ctx_init(c, o);
    halo_policy_cache_plan plan = {0};
    rc = plan_init(c, o, &plan);
    if (rc != 0) {
        halo_free(plan.ids);
        halo_cache_close(c);
        return rc;
    }
    c->cap = plan.capacity;
    slot_arrays(c, plan.score);
    c->init_ids = plan.ids;
    c->n_init = plan.n_ids;
    rc = place_initial(c, &plan);
    if (rc < 0) {
        halo_cache_close(c);
        return rc;
    }
    set_views(c);
    *out = c;
    return 0;
}

void halo_cache_close(halo_cache *c)
{
    if (c == NULL) {
        return;
    }
    void *arrays[] = {c->hids,      c->hdeg,      c->howner,    c->hmiss,     c->hscore,
                      c->vip,       c->map_key,   c->map_val,   c->slot_of,   c->sid,
                      c->spos,      c->shits,     c->slast,     c->sins,      c->sscore,
                      c->rows,      c->stamp,     c->bidx,      c->hit_slots, c->miss_halo,
                      c->evict_buf, c->admit_buf, c->pend_slot, c->pend_src,  c->extra,
                      c->init_ids,  c->fptr,      c->fpos,      c->fnext,     c->next_use,
                      c->hntype};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        halo_free(arrays[i]);
    }
    halo_free(c);
}

int64_t halo_cache_init_ids(const halo_cache *c, const int32_t **ids)
{
    *ids = c->init_ids;
    return c->n_init;
}

int halo_cache_init_fill(halo_cache *c, const float *rows)
{
    if (c->dim > 0 && c->n_init > 0) {
        if (rows == NULL) {
            return halo_errorf(HALO_EUSAGE, "cache: init_fill needs the %lld initial rows",
                               (long long)c->n_init);
        }
        memcpy(c->rows, rows, (size_t)c->n_init * (size_t)c->dim * sizeof(float));
    }
    c->init_pending = false;
    return 0;
}

/* ---- per batch ---- */

int halo_cache_lookup(halo_cache *c, const halo_cache_batch *b, int64_t n, const int32_t *ids,
                      const int64_t *row_pos, float *rows, uint8_t *served)
{
    if (c->init_pending) {
        return halo_errorf(HALO_ESTATE, "cache: lookup before halo_cache_init_fill");
    }
    if (c->n_pend > 0) {
        return halo_errorf(HALO_ESTATE, "cache: lookup before the previous batch's admit");
    }
    double t0 = halo_now();
    c->cur = *b;
    c->n_hit = 0;
    c->n_miss = 0;
    c->n_extra = 0;
    c->b_row_pos = row_pos;
    c->b_n = n;
    int64_t mark = c->t + 1, other = 0;
    const size_t rb = (size_t)c->dim * sizeof(float);
    for (int64_t i = 0; i < n; i++) {
        if (i + 8 < n && ids[i + 8] >= 0) { /* the map probe of a later id, ahead of time */
            __builtin_prefetch(&c->map_key[map_hash(ids[i + 8]) & c->map_mask]);
        }
        int64_t h = map_get(c, ids[i]);
        served[i] = 0;
        if (h < 0 || c->stamp[h] == mark) {
            other++; /* not a halo node (or listed twice): pulled, not counted as a miss */
            continue;
        }
        c->stamp[h] = mark;
        c->bidx[h] = i;
        int32_t s = c->slot_of[h];
        if (s >= 0) {
            if (rows != NULL && c->rows != NULL) {
                memcpy(rows + row_pos[i] * c->dim, c->rows + (size_t)s * (size_t)c->dim, rb);
            }
            served[i] = 1;
            c->shits[s]++;
            c->slast[s] = b->step;
            c->hit_slots[c->n_hit++] = s;
        } else {
            c->hmiss[h]++;
            c->miss_halo[c->n_miss++] = (int32_t)h;
        }
    }
    /* the look-ahead moves past this step: each node accessed now points at its next access */
    if (c->t < c->fsteps) {
        for (int64_t k = c->fptr[c->t]; k < c->fptr[c->t + 1]; k++) {
            c->next_use[c->fpos[k]] = c->fnext[k];
        }
    } else if (c->fsteps > 0) {
        for (int64_t k = 0; k < c->n_miss; k++) {
            c->next_use[c->miss_halo[k]] = HALO_CACHE_NEVER;
        }
        for (int64_t k = 0; k < c->n_hit; k++) {
            c->next_use[c->spos[c->hit_slots[k]]] = HALO_CACHE_NEVER;
        }
    }
    c->st.batches++;
    c->st.remote += n;
    c->st.hits += c->n_hit;
    c->st.misses += c->n_miss;
    c->st.other_remote += other;
    c->st.bytes_saved += c->n_hit * c->st.row_bytes;
    c->st.bytes_pulled += (c->n_miss + other) * c->st.row_bytes;
    c->in_batch = true;
    c->t++;
    c->st.lookup_s += halo_now() - t0;
    return 0;
}

/* Writes the next-use hints into the score arrays (Belady reads them in cache_batch). */
static void refresh_next_use(halo_cache *c, int64_t t)
{
    if (t < c->fsteps) {
        for (int64_t k = c->fptr[t]; k < c->fptr[t + 1]; k++) {
            c->hscore[c->fpos[k]] = use_score(c->next_use[c->fpos[k]]);
        }
    } else {
        for (int64_t h = 0; h < c->nh; h++) {
            c->hscore[h] = use_score(c->next_use[h]);
        }
    }
    for (int64_t s = 0; s < c->cap; s++) {
        c->sscore[s] = c->sid[s] >= 0 ? use_score(c->next_use[c->spos[s]]) : HUGE_VAL;
    }
}

int halo_cache_decide(halo_cache *c, const int32_t **extra, int64_t *n_extra)
{
    *extra = c->extra;
    *n_extra = 0;
    if (!c->in_batch) {
        return halo_errorf(HALO_ESTATE, "cache: decide without a lookup");
    }
    c->in_batch = false;
    if (c->pol == NULL || c->cap == 0) {
        return 0;
    }
    int64_t t = c->t - 1, mark = c->t;
    halo_policy_ctx *x = &c->ctx;
    x->epoch = c->cur.epoch;
    x->batch = c->cur.batch;
    x->step = c->cur.step;
    set_views(c);
    if (c->hint == HALO_CACHE_HINT_NEXT_USE) {
        refresh_next_use(c, t);
    }
    halo_policy_batch pb = {
        .epoch = c->cur.epoch,
        .batch = c->cur.batch,
        .step = c->cur.step,
        .n_input = c->cur.input ? c->cur.n_input : 0,
        .input = c->cur.input,
        .n_hit = c->n_hit,
        .hit_slots = c->hit_slots,
        .n_miss = c->n_miss,
        .miss_halo = c->miss_halo,
    };
    halo_policy_cache_decision d = {.evict = c->evict_buf, .admit = c->admit_buf};
    double t0 = halo_now();
    int rc = halo_policy_cache_batch(c->pol, x, &pb, &d);
    c->st.policy_s += halo_now() - t0;
    if (rc != 0) {
        return rc;
    }
    if (d.n_evict > c->cap || d.n_admit > c->cap) {
        return halo_errorf(HALO_ESTATE, "cache: decision larger than the cache");
    }
    for (int64_t i = 0; i < d.n_evict; i++) {
        int32_t s = d.evict[i];
        if (s < 0 || s >= c->cap || c->sid[s] < 0) {
            return halo_errorf(HALO_ESTATE, "cache: evict of empty or bad slot %d", s);
        }
        c->slot_of[c->spos[s]] = -1;
        c->sid[s] = -1;
        c->spos[s] = -1;
        c->used--;
    }
    c->st.evicted += d.n_evict;
    int64_t next_free = 0;
    for (int64_t i = 0; i < d.n_admit; i++) {
        int32_t id = d.admit[i];
        int64_t h = map_get(c, id);
        if (h < 0 || c->slot_of[h] >= 0) {
            return halo_errorf(HALO_ESTATE, "cache: admit of %d, not a free halo node", id);
        }
        int64_t s;
        if (i < d.n_evict) {
            s = d.evict[i];
        } else {
            /* every evicted slot is refilled by now (i >= n_evict): take empty ones in order */
            while (next_free < c->cap && c->sid[next_free] >= 0) {
                next_free++;
            }
            if (next_free >= c->cap) {
                return halo_errorf(HALO_ESTATE, "cache: no free slot for admitted id %d", id);
            }
            s = next_free++;
        }
        c->sid[s] = id;
        c->spos[s] = (int32_t)h;
        c->slot_of[h] = (int32_t)s;
        c->shits[s] = 0;
        c->slast[s] = -1;
        c->sins[s] = c->cur.step;
        c->used++;
        c->pend_slot[c->n_pend] = (int32_t)s;
        if (c->stamp[h] == mark) {
            c->pend_src[c->n_pend] = c->bidx[h];
        } else {
            c->pend_src[c->n_pend] = -(c->n_extra + 1);
            c->extra[c->n_extra++] = id;
        }
        c->n_pend++;
    }
    if (c->dim == 0) {
        c->n_pend = 0; /* no rows to wait for */
    }
    c->st.admitted += d.n_admit;
    c->st.prefetched += c->n_extra;
    c->st.bytes_pulled += c->n_extra * c->st.row_bytes;
    set_views(c);
    *n_extra = c->n_extra;
    return 0;
}

int halo_cache_admit(halo_cache *c, const float *rows, const float *extra_rows)
{
    if (c->n_pend == 0) {
        return 0;
    }
    if (rows == NULL || (c->n_extra > 0 && extra_rows == NULL)) {
        return halo_errorf(HALO_EUSAGE, "cache: admit needs the batch rows and the extra rows");
    }
    const size_t rb = (size_t)c->dim * sizeof(float);
    for (int64_t k = 0; k < c->n_pend; k++) {
        float *dst = c->rows + (size_t)c->pend_slot[k] * (size_t)c->dim;
        int64_t src = c->pend_src[k];
        if (src >= 0) {
            memcpy(dst, rows + c->b_row_pos[src] * c->dim, rb);
        } else {
            memcpy(dst, extra_rows + (-src - 1) * c->dim, rb);
        }
    }
    c->n_pend = 0;
    return 0;
}

/* ---- context, statistics, accessors ---- */

halo_policy_ctx *halo_cache_ctx(halo_cache *c)
{
    return &c->ctx;
}

int halo_cache_epoch_end(halo_cache *c, int epoch)
{
    if (c->pol == NULL) {
        return 0;
    }
    c->ctx.epoch = epoch;
    c->ctx.batch = -1;
    set_views(c);
    return halo_policy_epoch_end(c->pol, &c->ctx);
}

const halo_cache_stats *halo_cache_stats_get(const halo_cache *c)
{
    return &c->st;
}

void halo_cache_stats_reset(halo_cache *c)
{
    int64_t rb = c->st.row_bytes;
    memset(&c->st, 0, sizeof c->st);
    c->st.row_bytes = rb;
}

double halo_cache_hit_rate(const halo_cache_stats *s)
{
    int64_t n = s->hits + s->misses;
    return n > 0 ? (double)s->hits / (double)n : 0.0;
}

int64_t halo_cache_capacity(const halo_cache *c)
{
    return c->cap;
}

int64_t halo_cache_used(const halo_cache *c)
{
    return c->used;
}

int32_t halo_cache_slot_id(const halo_cache *c, int64_t s)
{
    return s >= 0 && s < c->cap ? c->sid[s] : -1;
}

const float *halo_cache_slot_row(const halo_cache *c, int64_t s)
{
    if (c->rows == NULL || s < 0 || s >= c->cap || c->sid[s] < 0) {
        return NULL;
    }
    return c->rows + (size_t)s * (size_t)c->dim;
}

int64_t halo_cache_find(const halo_cache *c, int32_t id)
{
    int64_t h = map_get(c, id);
    return h >= 0 ? c->slot_of[h] : -1;
}

int64_t halo_cache_halo_pos(const halo_cache *c, int32_t id)
{
    return map_get(c, id);
}

int halo_cache_hint(const halo_cache *c)
{
    return c->hint;
}

/* ---- vertex inclusion probabilities ---- */

void halo_cache_vip(int64_t nodes, int64_t row_lo, int64_t row_hi, const int64_t *indptr,
                    const int32_t *indices, const int32_t *seeds, int64_t num_seeds, int batch_size,
                    const int *fanouts, int layers, double *p)
{
    double *logs = HALO_ALLOC(double, nodes + 1);
    for (int64_t v = 0; v < nodes; v++) {
        p[v] = 0.0;
    }
    double ps = num_seeds > 0 ? (double)batch_size / (double)num_seeds : 0.0;
    ps = ps > 1.0 ? 1.0 : ps;
    for (int64_t i = 0; i < num_seeds; i++) {
        if (seeds[i] >= 0 && seeds[i] < nodes) {
            p[seeds[i]] = ps;
        }
    }
    /* layer l's destinations are the sources of layer l+1; the seeds' layer comes last */
    for (int l = layers - 1; l >= 0; l--) {
        for (int64_t v = 0; v < nodes; v++) {
            logs[v] = 0.0;
        }
        for (int64_t v = row_lo; v < row_hi; v++) {
            double q = p[v];
            if (q <= 0.0) {
                continue;
            }
            int64_t e0 = indptr[v - row_lo], e1 = indptr[v - row_lo + 1], deg = e1 - e0;
            if (deg == 0) {
                continue;
            }
            double r =
                (fanouts[l] < 0 || deg <= fanouts[l]) ? 1.0 : (double)fanouts[l] / (double)deg;
            double lx = log1p(-q * r);
            for (int64_t e = e0; e < e1; e++) {
                logs[indices[e]] += lx;
            }
        }
        for (int64_t v = 0; v < nodes; v++) {
            double drawn = 1.0 - exp(logs[v]);
            p[v] = 1.0 - (1.0 - p[v]) * (1.0 - drawn);
        }
    }
    halo_free(logs);
}
