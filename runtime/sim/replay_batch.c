/* The simulator's replay of one batch on every rank: the store's distributed sampling drawn
 * from the owners' CSRs with the requesters' keys, the feature pull through each rank's cache
 * and policy, the per-type and embedding counts, every rank's traffic in the runtime's wire
 * formats (runtime/store, runtime/comm); the time model charged with the work. */
#include "comm/comm.h" /* halo_comm_rows_pieces only (inline; no MPI) */
#include "core/err.h"
#include "core/mem.h"
#include "sim/replay.h"

#include <string.h>

/* ---------------------------------------------------------------- sampling */

/* Of the n rows' draws (offsets off): the edges of lists taken whole (a row of in-degree at
 * most its count) into *copied, those drawn from lists longer than HALO_SIM_LONG_LIST into
 * *lng (the cost model prices the three kinds apart). */
static void edge_classes(const int64_t *indptr, const int64_t *rows, int64_t n,
                         const int64_t *off, int64_t *copied, int64_t *lng)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t deg = indptr[rows[i] + 1] - indptr[rows[i]], cnt = off[i + 1] - off[i];
        if (cnt >= deg) {
            *copied += cnt;
        } else if (deg > HALO_SIM_LONG_LIST) {
            *lng += cnt;
        }
    }
}

/* One layer's draw of rank r's distributed sampling: frontier nodes grouped by owner, each
 * group drawn from its owner's CSR with the requester's keys, merged back in frontier order
 * into *out (the block is the frontier loop's). Counts the requests and replies per peer in
 * the store's wire format, and the owners' work. On a typed partition (fan != NULL: the
 * layer's per-relation fanouts) the draws are the typed sampler's, a request carries the
 * fanouts after its header and a reply the relation of each neighbour after the neighbours. */
static int sim_sample_layer(sim *S, int r, const halo_sample_key *k, int layer, int fanout,
                            const int *fan, const int32_t *dst, int32_t num_dst,
                            halo_sample_drawn *out)
{
    int nrels = fan != NULL ? S->nrels : 0;
    int P = S->P;
    sim_rank *R = &S->r[r];
    const int64_t *start = S->info->start;
    S->owner = halo_realloc(S->owner, ((size_t)num_dst + 1) * sizeof *S->owner);
    memset(S->cnt, 0, (size_t)P * sizeof *S->cnt);
    for (int32_t i = 0; i < num_dst; i++) {
        int o = halo_partinfo_owner(S->info, dst[i]);
        if (o < 0) {
            return halo_errorf(HALO_EUSAGE, "sim: node %d is not in the graph (%lld nodes)",
                               dst[i], (long long)S->info->nodes);
        }
        S->owner[i] = o;
        S->cnt[o]++;
    }
    S->gstart[0] = 0;
    for (int p = 0; p < P; p++) {
        S->gstart[p + 1] = S->gstart[p] + S->cnt[p];
        S->gcur[p] = S->gstart[p];
    }
    int64_t *grow = halo_buf_get(&S->grow, (int64_t)num_dst * 8 + 8);
    int64_t *gkey = halo_buf_get(&S->gkey, (int64_t)num_dst * 8 + 8);
    for (int32_t i = 0; i < num_dst; i++) {
        int o = S->owner[i];
        int64_t j = S->gcur[o]++;
        grow[j] = dst[i] - start[o];
        gkey[j] = S->orig[dst[i]];
    }
    /* offsets of group p at goff + gstart[p] + p (cnt[p] + 1 entries) */
    int64_t *goff = halo_buf_get(&S->goff, ((int64_t)num_dst + P + 1) * 8);
    int64_t edges = 0;
    for (int p = 0; p < P; p++) {
        S->nbase[p] = edges;
        const halo_part *pt = S->r[p].part;
        if (fan != NULL) {
            edges += halo_sample_rows_typed_offsets(pt->indptr, pt->etype, nrels,
                                                    grow + S->gstart[p], S->cnt[p], fan,
                                                    goff + S->gstart[p] + p);
        } else {
            edges += halo_sample_rows_offsets(pt->indptr, grow + S->gstart[p], S->cnt[p],
                                              fanout, goff + S->gstart[p] + p);
        }
    }
    int32_t *gnbr = halo_buf_get(&S->gnbr, edges * 4 + 4);
    uint8_t *getype = fan != NULL ? halo_buf_get(&S->getype, edges + 4) : NULL;
    for (int p = 0; p < P; p++) {
        if (S->cnt[p] == 0) {
            continue;
        }
        const halo_part *pt = S->r[p].part;
        int64_t *off = goff + S->gstart[p] + p;
        if (fan != NULL) {
            halo_sample_rows_typed(S->smp, pt->indptr, pt->indices, pt->etype, nrels,
                                   grow + S->gstart[p], gkey + S->gstart[p], S->cnt[p], fan, k,
                                   layer, off, gnbr + S->nbase[p], getype + S->nbase[p]);
        } else {
            halo_sample_rows(S->smp, pt->indptr, pt->indices, grow + S->gstart[p],
                             gkey + S->gstart[p], S->cnt[p], fanout, k, layer, off,
                             gnbr + S->nbase[p]);
        }
        int64_t e = off[S->cnt[p]], copied = 0, lng = 0;
        if (fan == NULL) {
            edge_classes(pt->indptr, grow + S->gstart[p], S->cnt[p], off, &copied, &lng);
        }
        if (p == r) {
            R->w.local_nodes[layer] += S->cnt[p];
            R->w.local_edges[layer] += e;
            R->w.local_copied[layer] += copied;
            R->w.local_long[layer] += lng;
        } else {
            S->r[p].w.served_nodes[layer] += S->cnt[p];
            S->r[p].w.served_edges[layer] += e;
            S->r[p].w.served_copied[layer] += copied;
            S->r[p].w.served_long[layer] += lng;
            /* header [+ the fanouts of every relation] + ids; counts + neighbours [+ relations] */
            R->sample_req[layer * P + p] = SIM_REQ_HDR + 4 * (int64_t)nrels + 4 * S->cnt[p];
            R->sample_rep[layer * P + p] =
                4 * S->cnt[p] + 4 * e + (fan != NULL ? sim_etype_bytes(e) : 0);
        }
    }
    /* merge in frontier order */
    int64_t *moff = halo_buf_get(&S->moff, ((int64_t)num_dst + 1) * 8);
    int32_t *mnbr = halo_buf_get(&S->mnbr, edges * 4 + 4);
    uint8_t *metype = fan != NULL ? halo_buf_get(&S->metype, edges + 4) : NULL;
    for (int p = 0; p < P; p++) {
        S->gcur[p] = 0;
    }
    moff[0] = 0;
    for (int32_t i = 0; i < num_dst; i++) {
        int o = S->owner[i];
        const int64_t *off = goff + S->gstart[o] + o;
        int64_t j = S->gcur[o]++;
        int64_t c = off[j + 1] - off[j];
        memcpy(mnbr + moff[i], gnbr + S->nbase[o] + off[j], (size_t)c * 4);
        if (metype != NULL) {
            memcpy(metype + moff[i], getype + S->nbase[o] + off[j], (size_t)c);
        }
        moff[i + 1] = moff[i] + c;
    }
    out->off = moff;
    out->nbrs = mnbr;
    out->etype = metype;
    return 0;
}

/* Rank r's draw for the frontier loop: a layer of sim_sample_layer with the rank's fanouts. */
typedef struct sim_draw {
    sim *S;                   /* the simulation */
    int r;                    /* the rank */
    const halo_sample_key *k; /* the batch's keys */
} sim_draw;

static int sim_draw_layer(void *arg, int l, const int32_t *dst, int32_t num_dst,
                          halo_sample_drawn *out)
{
    sim_draw *a = arg;
    const halo_plan_fanouts *f = &a->S->r[a->r].fan;
    return sim_sample_layer(a->S, a->r, a->k, l, f->fanouts[l],
                            a->S->nrels > 0 ? f->rfan[l] : NULL, dst, num_dst, out);
}

int halo_sim_sample(sim *S, int r, const halo_sample_key *k, const int32_t *seeds, int32_t n)
{
    sim_draw a = {S, r, k};
    return halo_sample_frontier(S->smp, S->r[r].fan.layers, sim_draw_layer, &a, seeds, n,
                                &S->r[r].mb);
}

/* ---------------------------------------------------------------- fetch */

/* Rank r's feature pull of the batch (the trainer's stage_fetch and store.c's pull): remote ids
 * in input order, the cache lookup and decision, rows counted per owner. */
static int sim_fetch(sim *S, int r, int epoch, int64_t b, int64_t step)
{
    sim_rank *R = &S->r[r];
    int P = S->P;
    const halo_minibatch *mb = &R->mb;
    int64_t lo = S->info->start[r], hi = S->info->start[r + 1];
    int64_t n = mb->num_input;
    int64_t *rpos = halo_buf_get(&S->rpos, n * 8 + 8);
    int32_t *rid = halo_buf_get(&S->rid, n * 4 + 4);
    uint8_t *served = halo_buf_get(&S->served, n + 1);
    int64_t nr = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t id = mb->input[i];
        if (id < lo || id >= hi) {
            rpos[nr] = i;
            rid[nr] = id;
            served[nr] = 0;
            nr++;
        }
    }
    R->remote = nr;
    R->hits = 0;
    R->misses = nr;
    R->w.input_nodes = n;
    R->w.local_rows = n - nr;
    const int32_t *extra = NULL;
    int64_t n_extra = 0;
    if (R->cache != NULL) {
        halo_cache_stats h0 = *halo_cache_stats_get(R->cache);
        int64_t work0 = halo_policy_work(R->pol);
        halo_cache_batch cb = {epoch, b, step, n, mb->input};
        HALO_CHECK(halo_cache_lookup(R->cache, &cb, nr, rid, rpos, NULL, served));
        HALO_CHECK(halo_cache_decide(R->cache, &extra, &n_extra));
        for (int64_t e = 0; e < n_extra; e++) {
            int o = halo_partinfo_owner(S->info, extra[e]);
            if (o < 0) {
                return halo_errorf(HALO_EUSAGE, "pull: prefetch id %d is not in the graph",
                                   extra[e]);
            }
            if (o != r) {
                R->pull_rows[o]++;
            }
        }
        HALO_CHECK(halo_cache_admit(R->cache, NULL, NULL));
        const halo_cache_stats *h1 = halo_cache_stats_get(R->cache);
        R->hits = h1->hits - h0.hits;
        R->misses = h1->misses - h0.misses;
        R->acc.cache_evicted += h1->evicted - h0.evicted;
        R->w.lookups = nr;
        R->w.hook_calls = halo_policy_hooks(R->pol) & (1u << HALO_POLICY_CACHE_BATCH) ? 1 : 0;
        R->w.hook_work = halo_policy_work(R->pol) - work0;
        R->w.admits = h1->admitted - h0.admitted;
    }
    for (int64_t i = 0; i < nr; i++) {
        if (!served[i]) {
            R->pull_rows[halo_partinfo_owner(S->info, rid[i])]++;
        }
        R->w.hits += served[i];
    }
    for (int p = 0; p < P; p++) {
        S->r[p].w.served_rows += R->pull_rows[p];
    }
    return 0;
}

/* ---------------------------------------------------------------- typed graphs */

/* The per-type counts of rank r's batch (halo_plan_count_types), and the featureless input
 * rows the trainer gathers from their owners for its embeddings (none for a batch without seeds
 * on this rank). */
static void sim_count_types(sim *S, int r)
{
    sim_rank *R = &S->r[r];
    const halo_minibatch *mb = &R->mb;
    halo_plan_count_types(S->info, r, mb, &R->acc);
    for (int32_t i = 0; S->embed && R->w.seeds > 0 && i < mb->num_input; i++) {
        int32_t id = mb->input[i];
        if (S->featless[halo_partinfo_node_type(S->info, id)]) {
            R->embed_rows[halo_partinfo_owner(S->info, id)]++;
        }
    }
}

void halo_sim_embed_traffic(int P, int me, const int64_t *asked, const int64_t *served,
                            int64_t row_bytes, halo_sim_embed_stats *out)
{
    memset(out, 0, sizeof *out);
    int64_t rec = SIM_EMBED_REC_HDR + row_bytes;
    for (int p = 0; p < P; p++) {
        out->rows += asked[p];
        if (p == me) {
            continue;
        }
        out->remote_rows += asked[p];
        /* gather: ids to the owner, rows back; update: one record per row to the owner */
        out->bytes_sent += 4 * asked[p] + row_bytes * served[p] + rec * asked[p];
        out->bytes_recv += row_bytes * asked[p] + 4 * served[p] + rec * served[p];
        out->messages += 2 * (asked[p] > 0) + (served[p] > 0);
    }
}

/* ---------------------------------------------------------------- one batch */

/* Traffic of rank r in the batch, from every rank's per-peer requests (the runtime's channel
 * counters: payload bytes to and from other ranks, point-to-point messages sent). */
static void sim_traffic(sim *S, int r, int64_t *recv, int64_t *sent, int64_t *msgs)
{
    int P = S->P;
    sim_rank *R = &S->r[r];
    int64_t in = 0, out = 0, m = 0;
    for (int l = 0; l < R->fan.layers; l++) {
        for (int p = 0; p < P; p++) {
            int64_t q = R->sample_req[l * P + p];
            in += R->sample_rep[l * P + p];
            out += q;
            m += q > 0;
        }
    }
    for (int p = 0; p < P; p++) {
        in += S->row_bytes * R->pull_rows[p];
        out += 4 * R->pull_rows[p];
        m += R->pull_rows[p] > 0;
    }
    for (int q = 0; q < P; q++) {
        if (q == r) {
            continue;
        }
        const sim_rank *Q = &S->r[q];
        for (int l = 0; l < Q->fan.layers; l++) {
            int64_t req = Q->sample_req[l * P + r];
            in += req;
            out += Q->sample_rep[l * P + r];
            m += Q->sample_rep[l * P + r] > 0;
        }
        int64_t rows = Q->pull_rows[r];
        in += 4 * rows;
        out += S->row_bytes * rows;
        m += rows > 0 && S->row_bytes > 0 ? halo_comm_rows_pieces(rows, S->row_bytes) : 0;
    }
    *recv = in;
    *sent = out;
    *msgs = m;
}

void halo_sim_work_reset(sim *S)
{
    int P = S->P;
    for (int r = 0; r < P; r++) {
        sim_rank *R = &S->r[r];
        memset(R->sample_req, 0, (size_t)HALO_MAX_LAYERS * (size_t)P * sizeof(int64_t));
        memset(R->sample_rep, 0, (size_t)HALO_MAX_LAYERS * (size_t)P * sizeof(int64_t));
        memset(R->pull_rows, 0, (size_t)P * sizeof(int64_t));
        memset(R->embed_rows, 0, (size_t)P * sizeof(int64_t));
        memset(&R->w, 0, sizeof R->w);
        R->w.layers = R->fan.layers;
        R->w.sample_req = R->sample_req;
        R->w.sample_rep = R->sample_rep;
        R->w.pull_rows = R->pull_rows;
        R->w.embed_rows = S->embed ? R->embed_rows : NULL;
        R->w.row_bytes = S->row_bytes;
    }
}

int halo_sim_batch(sim *S, int epoch, int64_t b, int64_t step)
{
    int P = S->P;
    halo_sim_work_reset(S);
    for (int r = 0; r < P; r++) {
        sim_rank *R = &S->r[r];
        const int64_t *bo = S->boff + (int64_t)r * (S->nb + 1);
        const int32_t *ord = S->order + (int64_t)r * S->nt;
        halo_sample_key k = {S->o->seed, epoch, b};
        int32_t n = (int32_t)(bo[b + 1] - bo[b]);
        HALO_CHECK(halo_sim_sample(S, r, &k, ord + bo[b], n));
        R->w.seeds = n;
    }
    for (int r = 0; r < P; r++) {
        HALO_CHECK(sim_fetch(S, r, epoch, b, step));
        if (S->nrels > 0) {
            sim_count_types(S, r);
        }
    }
    int64_t *served = S->embed ? HALO_NEW(int64_t, P) : NULL;
    for (int r = 0; S->embed && r < P; r++) {
        sim_rank *R = &S->r[r];
        for (int p = 0; p < P; p++) {
            served[p] = p != r ? S->r[p].embed_rows[r] : 0;
            R->w.embed_served += served[p];
        }
        halo_sim_embed_stats e;
        halo_sim_embed_traffic(P, r, R->embed_rows, served, S->row_bytes, &e);
        R->emb.rows += e.rows;
        R->emb.remote_rows += e.remote_rows;
        R->emb.bytes_sent += e.bytes_sent;
        R->emb.bytes_recv += e.bytes_recv;
        R->emb.messages += e.messages;
    }
    halo_free(served);
    for (int r = 0; r < P; r++) {
        sim_rank *R = &S->r[r];
        const halo_minibatch *mb = &R->mb;
        for (int l = 0; l < mb->layers; l++) {
            R->w.num_dst[l] = mb->blocks[l].num_dst;
            R->w.num_src[l] = mb->blocks[l].num_src;
            R->w.num_edges[l] = mb->blocks[l].num_edges;
        }
        int64_t in, out, msgs;
        sim_traffic(S, r, &in, &out, &msgs);
        R->acc.batches++;
        R->acc.sampled_edges += halo_sample_edges(mb);
        R->acc.input_nodes += mb->num_input;
        R->acc.remote_nodes += R->remote;
        R->acc.cache_hits += R->hits;
        R->acc.cache_misses += R->misses;
        R->acc.bytes_remote += in;
        R->acc.bytes_sent += out;
        R->acc.messages += msgs;
        S->works[r] = R->w;
    }
    if (S->cost != NULL) {
        HALO_CHECK(halo_sim_cost_batch(S->cost, b, S->works));
    }
    return 0;
}
