/* The simulator's cost model: what each stage of a batch costs on a cluster profile, from the
 * counted work of every rank (flops by GEMM shape, aggregation, sampling, gathers, messages,
 * the allreduce); sim/engine.c runs the stages on its timeline. docs/sim-model.md says it in words. */
#include "sim/cost_internal.h"

#include "comm/comm.h" /* halo_comm_piece_rows only (inline; no MPI) */
#include "core/err.h"
#include "core/log.h"
#include "model/model.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* ---------------------------------------------------------------- flops */

/* Whether block l of w goes lin-first: the model's own AUTO rule on the block's shape, the input
 * gradient needed above layer 0. */
static bool lin_first(const halo_sim_work *w, int l, double in, double out)
{
    return halo_model_lin_first((double)w->num_edges[l], (double)w->num_dst[l],
                                (double)w->num_src[l], in, out, l > 0);
}

/* Width of the input of layer l (and l + 1 for its output). */
static double layer_dim(int l, int layers, int in_dim, int hidden, int classes)
{
    return l == 0 ? in_dim : l == layers ? classes : hidden;
}

/* The shape of block l's work, as model.c runs it: agg-first multiplies [h_dst | mean]
 * (nd x 2in) by W (2in x out) forward, for dW and for dX; lin-first multiplies all ns + nd rows
 * by one half of W each way. */
typedef struct layer_shape {
    double flops;  /* GEMM flops (2 per multiply-add), forward + backward */
    double rows;   /* rows of its GEMMs (nd agg-first, ns + nd lin-first) */
    double in;     /* inner width of its GEMMs (2 in agg-first) */
    double out;    /* output width */
    double passes; /* edges aggregated, passes counted (forward, and dX above layer 0) */
    double width;  /* floats per aggregated edge */
} layer_shape;

static layer_shape shape_of(const halo_sim_work *w, int l, int in_dim, int hidden, int classes)
{
    double in = layer_dim(l, w->layers, in_dim, hidden, classes);
    double out = layer_dim(l + 1, w->layers, in_dim, hidden, classes);
    double e = (double)w->num_edges[l], nd = (double)w->num_dst[l], ns = (double)w->num_src[l];
    double dx = l > 0 ? 1.0 : 0.0;
    if (lin_first(w, l, in, out)) {
        return (layer_shape){2.0 * (ns + nd) * in * out * (2.0 + dx), ns + nd, in, out, 2.0 * e,
                             out};
    }
    return (layer_shape){4.0 * nd * in * out * (2.0 + dx), nd, 2.0 * in, out, e * (1.0 + dx), in};
}

/* RGCN's GEMM flops of block l (in -> out floats): the self loop and the R stacked relation
 * matrices, forward, dW and (above layer 0, or wherever embeddings need it) dX, plus composing
 * and differentiating the bases. */
static double rgcn_layer_flops(const halo_sim_work *w, int l, double in, double out,
                               int relations, int bases)
{
    double dx = l > 0 || w->embed_rows != NULL ? 1.0 : 0.0, R = relations;
    double flops = 2.0 * (double)w->num_dst[l] * in * out * (1.0 + R) * (2.0 + dx);
    if (bases > 0) {
        flops += 4.0 * R * bases * in * out;
    }
    return flops;
}

double halo_sim_cost_flops_rgcn(const halo_sim_work *w, int in_dim, int hidden, int classes,
                                int relations, int bases)
{
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        sum += rgcn_layer_flops(w, l, layer_dim(l, w->layers, in_dim, hidden, classes),
                                layer_dim(l + 1, w->layers, in_dim, hidden, classes), relations,
                                bases);
    }
    return sum;
}

double halo_sim_cost_flops(const halo_sim_work *w, int in_dim, int hidden, int classes)
{
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        sum += shape_of(w, l, in_dim, hidden, classes).flops;
    }
    return sum;
}

/* A fit factor (0, in a profile built in code, is 1: not fitted). */
static double fitf(double f)
{
    return f > 0 ? f : 1.0;
}

double halo_sim_cost_agg_s(const halo_sim_profile *p, double passes, double width)
{
    return passes * (p->agg_edge_s + 4.0 * width / p->agg_bw);
}

/* RGCN's seconds of block l: the self loop and the R relation matrices at the GEMM rate of
 * (nd, in, out), the bases' composition at the same rate, and the per-relation means (each
 * sampled edge once forward, once more where dX is computed). */
static double rgcn_layer_s(const halo_sim_profile *p, const halo_sim_work *w, int l,
                           const int dims[3], int relations, int bases, double *gemm)
{
    double in = layer_dim(l, w->layers, dims[0], dims[1], dims[2]);
    double out = layer_dim(l + 1, w->layers, dims[0], dims[1], dims[2]);
    double dx = l > 0 || w->embed_rows != NULL ? 1.0 : 0.0;
    double nd = (double)w->num_dst[l];
    double flops = rgcn_layer_flops(w, l, in, out, relations, bases);
    double rate = halo_sim_profile_gemm_rate(p, nd, in, out);
    *gemm += flops / rate;
    return flops / rate + halo_sim_cost_agg_s(p, (double)w->num_edges[l] * (1.0 + dx), in) +
           p->elem_s * nd * (2.0 * out + in * (1.0 + dx));
}

double halo_sim_cost_elems(const halo_sim_work *w, int l, int in_dim, int hidden, int classes)
{
    double in = layer_dim(l, w->layers, in_dim, hidden, classes);
    double out = layer_dim(l + 1, w->layers, in_dim, hidden, classes);
    double dx = l > 0 ? 1.0 : 0.0;
    return (double)w->num_dst[l] * (2.0 * out + in * (1.0 + dx));
}

/* The forward/backward seconds of w's blocks (fit factor included); *gemm gets their GEMMs'
 * part (it prices the oversubscription apart: sim/engine_cpu.c). */
static double fb_split(const halo_sim_profile *p, const halo_sim_work *w, int in_dim, int hidden,
                       int classes, int relations, int bases, double *gemm)
{
    const int dims[3] = {in_dim, hidden, classes};
    double sum = 0, g = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        if (relations > 0) {
            sum += rgcn_layer_s(p, w, l, dims, relations, bases, &g);
            continue;
        }
        layer_shape s = shape_of(w, l, in_dim, hidden, classes);
        double t = s.flops / halo_sim_profile_gemm_rate(p, s.rows, s.in, s.out);
        g += t;
        sum += t + halo_sim_cost_agg_s(p, s.passes, s.width) +
               p->elem_s * halo_sim_cost_elems(w, l, in_dim, hidden, classes);
    }
    *gemm = fitf(p->fit_compute) * g;
    return fitf(p->fit_compute) * sum;
}

double halo_sim_cost_fb_s(const halo_sim_profile *p, const halo_sim_work *w, int in_dim,
                          int hidden, int classes, int relations, int bases)
{
    double gemm;
    return fb_split(p, w, in_dim, hidden, classes, relations, bases, &gemm);
}

/* GAT's GEMM flops of block l, heads H of F floats out of `in`: z = h W over the ns sources
 * forward, for dW and (above layer 0, or wherever embeddings need it) for dX. */
static double gat_layer_flops(const halo_sim_work *w, int l, double in, double hf)
{
    double dx = l > 0 || w->embed_rows != NULL ? 1.0 : 0.0;
    return 2.0 * (double)w->num_src[l] * in * hf * (2.0 + dx);
}

/* Layer l's (in, H, F): hidden layers heads x hidden wide, the output layer out_heads of
 * classes (dims[3]). */
static void gat_dims(const halo_sim_work *w, int l, const int dims[4], int heads, double *in,
                     double *h, double *f)
{
    *in = l == 0 ? dims[0] : (double)dims[1] * heads;
    bool last = l == w->layers - 1;
    *h = last ? dims[3] : heads;
    *f = last ? dims[2] : dims[1];
}

double halo_sim_cost_flops_gat(const halo_sim_work *w, int in_dim, int hidden, int classes,
                               int heads, int out_heads)
{
    const int dims[4] = {in_dim, hidden, classes, out_heads};
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        double in, h, f;
        gat_dims(w, l, dims, heads, &in, &h, &f);
        sum += gat_layer_flops(w, l, in, h * f);
    }
    return sum;
}

/* GAT's seconds of block l (halo_sim_cost_fb_s_gat, without the fit factor). */
static double gat_layer_time(const halo_sim_profile *p, const halo_sim_work *w, int l,
                             const int dims[4], int heads, double *gemm_sum)
{
    double in, h, f;
    gat_dims(w, l, dims, heads, &in, &h, &f);
    double nd = (double)w->num_dst[l], ns = (double)w->num_src[l], e = (double)w->num_edges[l];
    double gemm = gat_layer_flops(w, l, in, h * f) / halo_sim_profile_gemm_rate(p, ns, in, h * f);
    *gemm_sum += gemm;
    double attention = halo_sim_cost_agg_s(p, 3.0 * e * h, f);
    return gemm + attention + p->elem_s * h * f * (3.0 * (ns + nd) + 2.0 * nd);
}

/* GAT's fb_split. */
static double fb_split_gat(const halo_sim_profile *p, const halo_sim_work *w, int in_dim,
                           int hidden, int classes, int heads, int out_heads, double *gemm)
{
    const int dims[4] = {in_dim, hidden, classes, out_heads};
    double sum = 0, g = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        sum += gat_layer_time(p, w, l, dims, heads, &g);
    }
    *gemm = fitf(p->fit_compute) * g;
    return fitf(p->fit_compute) * sum;
}

double halo_sim_cost_fb_s_gat(const halo_sim_profile *p, const halo_sim_work *w, int in_dim,
                              int hidden, int classes, int heads, int out_heads)
{
    double gemm;
    return fb_split_gat(p, w, in_dim, hidden, classes, heads, out_heads, &gemm);
}

double halo_sim_cost_sample_s(const halo_sim_profile *p, double nodes, double edges,
                              double copied, double lng)
{
    double copy_s = p->sample_copy_s > 0 ? p->sample_copy_s : p->sample_edge_s;
    double long_s = p->sample_long_s > 0 ? p->sample_long_s : p->sample_edge_s;
    return fitf(p->fit_sample) * (nodes * p->sample_node_s + copied * copy_s + lng * long_s +
                                  (edges - copied - lng) * p->sample_edge_s);
}

double halo_sim_cost_build_s(const halo_sim_profile *p, double dst, double src, double edges)
{
    if (p->block_edge_s > 0) { /* a hash operation per destination and per edge */
        return fitf(p->fit_sample) * (src * p->block_node_s + (dst + edges) * p->block_edge_s);
    }
    return fitf(p->fit_sample) * (src * p->block_node_s + edges * INDEX_BYTES / p->memcpy_bw);
}

const double halo_sim_wake_gap[HALO_SIM_WAKE_GAPS] = {250e-6, 1e-3, 4e-3, 16e-3};

double halo_sim_cost_wake_pen(const double pen[HALO_SIM_WAKE_GAPS], double gap)
{
    const double *g = halo_sim_wake_gap;
    const int n = HALO_SIM_WAKE_GAPS;
    if (!(gap > 0)) {
        return 0.0;
    }
    if (gap <= g[0]) {
        return pen[0] * gap / g[0];
    }
    if (gap >= g[n - 1]) {
        return pen[n - 1];
    }
    int i = 0;
    while (i + 2 < n && g[i + 1] <= gap) {
        i++;
    }
    double f = log(gap / g[i]) / log(g[i + 1] / g[i]);
    return pen[i] + f * (pen[i + 1] - pen[i]);
}

double halo_sim_cost_wake_compute(const halo_sim_profile *p, double work, double gap)
{
    double big = halo_sim_cost_wake_pen(p->wake_compute, gap);
    double lo = p->wake_small_s, hi = p->wake_step_s;
    if (!(lo > 0) || !(hi > lo) || !(work < hi)) {
        return big;
    }
    double small = halo_sim_cost_wake_pen(p->wake_small, gap);
    if (!(work > lo)) {
        return small;
    }
    double f = log(work / lo) / log(hi / lo);
    return small + f * (big - small);
}

/* `rows` rows of row_bytes copied at `bw` bytes/s, each with its fixed part (fit.fetch). */
static double rows_at(const halo_sim_profile *p, double rows, double row_bytes, double bw)
{
    return fitf(p->fit_fetch) * rows * (p->gather_row_s + row_bytes / bw);
}

double halo_sim_cost_gather_s(const halo_sim_profile *p, double rows, double row_bytes)
{
    return rows_at(p, rows, row_bytes, p->gather_bw);
}

double halo_sim_cost_warm_share(const halo_sim_profile *p, double table_bytes)
{
    double lo = p->fetch_warm_bytes, hi = p->fetch_cold_bytes;
    if (!(p->fetch_warm_bw > 0) || !(lo > 0) || !(hi > lo) || !(table_bytes > 0) ||
        table_bytes >= hi) {
        return 0.0;
    }
    return table_bytes <= lo ? 1.0 : log(hi / table_bytes) / log(hi / lo);
}

double halo_sim_cost_fetch_bw(const halo_sim_profile *p, double table_bytes)
{
    double cold = p->fetch_bw > 0 ? p->fetch_bw : p->gather_bw;
    double x = halo_sim_cost_warm_share(p, table_bytes);
    /* seconds per byte, interpolated in the logarithm of the table's size */
    return x > 0 ? 1.0 / ((1.0 - x) / cold + x / p->fetch_warm_bw) : cold;
}

double halo_sim_cost_kept_bw(const halo_sim_profile *p, double table_bytes)
{
    double lo = p->fetch_warm_bytes, hi = p->fetch_cold_bytes;
    if (!(p->fetch_kept_bw > 0) || !(p->fetch_warm_bw > 0) || !(lo > 0) || !(hi > lo) ||
        !(table_bytes > 0) || table_bytes > hi) {
        return halo_sim_cost_fetch_bw(p, table_bytes);
    }
    /* the same place between the two sizes as the evicted curve's, toward the kept rate */
    double x = halo_sim_cost_warm_share(p, table_bytes);
    return 1.0 / ((1.0 - x) / p->fetch_kept_bw + x / p->fetch_warm_bw);
}

double halo_sim_cost_fetch_rows_s(const halo_sim_profile *p, double rows, double row_bytes,
                                  double table_bytes)
{
    return rows_at(p, rows, row_bytes, halo_sim_cost_fetch_bw(p, table_bytes));
}

double halo_sim_cost_fetch_pre_s(const halo_sim_profile *p, double inputs, double lookups,
                                 double hooks, double hook_work, double hits, double row_bytes)
{
    return fitf(p->fit_fetch) * (inputs * p->fetch_node_s + lookups * p->lookup_node_s +
                                 hooks * p->hook_s + hook_work * p->hook_unit_s) +
           halo_sim_cost_gather_s(p, hits, row_bytes);
}

/* ---------------------------------------------------------------- building a batch */

/* Rows in the pieces of a list of n rows (comm.h's halo_comm_rows_pieces, from a table). */
static int64_t pieces(halo_sim_cost *c, int64_t n, int64_t rb)
{
    if (n <= 0 || rb <= 0) {
        return 0;
    }
    if (rb != c->piece_rb) {
        c->piece_rb = rb;
        int64_t cum = 0;
        int k = 0;
        while (k < 20 && ((int64_t)HALO_ROWS_PIECE_MIN << k) < HALO_ROWS_PIECE_MAX) {
            cum += halo_comm_piece_rows(k, rb);
            c->piece_cum[k++] = cum;
        }
        c->piece_k = k;
        c->piece_last = halo_comm_piece_rows(k, rb);
    }
    for (int k = 0; k < c->piece_k; k++) {
        if (c->piece_cum[k] >= n) {
            return k + 1;
        }
    }
    int64_t done = c->piece_k > 0 ? c->piece_cum[c->piece_k - 1] : 0;
    return c->piece_k + (n - done + c->piece_last - 1) / c->piece_last;
}

/* Clears the per-rank sums of one exchange. */
static void xsum_reset(halo_sim_cost *c)
{
    size_t n = (size_t)c->P * sizeof(double);
    memset(c->s_out, 0, n);
    memset(c->s_in, 0, n);
    memset(c->s_intra, 0, n);
    memset(c->s_tot_out, 0, n);
    memset(c->s_tot_in, 0, n);
    memset(c->s_msg_out, 0, n);
    memset(c->s_msg_in, 0, n);
}

/* One flow of an exchange: `bytes` from rank `from` to rank `to` in `msgs` messages. */
static void xsum_add(halo_sim_cost *c, int from, int to, double bytes, double msgs)
{
    if (bytes <= 0 || from == to) {
        return;
    }
    c->s_tot_out[from] += bytes;
    c->s_tot_in[to] += bytes;
    c->s_msg_out[from] += msgs;
    c->s_msg_in[to] += msgs;
    if (c->rk[from].machine == c->rk[to].machine) {
        c->s_intra[from] = bytes > c->s_intra[from] ? bytes : c->s_intra[from];
        c->s_intra[to] = bytes > c->s_intra[to] ? bytes : c->s_intra[to];
    } else {
        c->s_out[from] += bytes;
        c->s_in[to] += bytes;
    }
}

/* The netem floor of an exchange moving `bytes` (the larger of out and in) on one rank. */
static double netem_floor(const halo_sim_cost *c, double bytes)
{
    if (!c->netem || bytes <= 0) {
        return 0;
    }
    return c->pf.netem_lat_s + (c->pf.netem_bw > 0 ? bytes / c->pf.netem_bw : 0) +
           c->pf.netem_over_s;
}

/* Stores the summed flows into exchange xi's per-rank parts; message costs go to own CPU. */
static void xsum_store(halo_sim_cost *c, brec *r, int xi)
{
    const halo_sim_profile *p = &c->pf;
    for (int q = 0; q < c->P; q++) {
        xrank *xr = &r->xr[(size_t)xi * c->P + q];
        xr->out = c->s_out[q];
        xr->in = c->s_in[q];
        xr->intra = c->s_intra[q] > 0 ? c->lat_local + c->s_intra[q] / p->shm_bw : 0;
        double big = c->s_tot_out[q] > c->s_tot_in[q] ? c->s_tot_out[q] : c->s_tot_in[q];
        xr->netem = netem_floor(c, big);
        xr->crit = 0;
        xr->own = (c->s_msg_out[q] + c->s_msg_in[q]) * p->msg_overhead_s;
    }
}

/* Entry [i] of a per-peer array that may be NULL (no traffic). */
static double at(const int64_t *a, size_t i)
{
    return a != NULL ? (double)a[i] : 0.0;
}

/* Rank q's stage works of the batch outside the exchanges (sampling served, blocks, fetch
 * lookups, copies, forward/backward, optimiser). */
static void build_rank(halo_sim_cost *c, rwork *rw, const halo_sim_work *a, int q, int L)
{
    const halo_sim_profile *p = &c->pf;
    double rb = (double)a->row_bytes;
    for (int l = 0; l < L; l++) {
        rw->serve[l] = halo_sim_cost_sample_s(p, (double)a->served_nodes[l],
                                              (double)a->served_edges[l],
                                              (double)a->served_copied[l],
                                              (double)a->served_long[l]);
        rw->build[l] = halo_sim_cost_build_s(p, (double)a->num_dst[l], (double)a->num_src[l],
                                             (double)a->num_edges[l]);
    }
    rw->fetch_pre = halo_sim_cost_fetch_pre_s(p, (double)a->input_nodes, (double)a->lookups,
                                              (double)a->hook_calls, (double)a->hook_work,
                                              (double)(a->hits + a->admits), rb);
    double params = (double)c->o.grad_floats, fc = fitf(p->fit_compute);
    if (c->gpu) {
        double bytes = (double)a->input_nodes * rb;
        for (int l = 0; l < L; l++) {
            bytes += ((double)a->num_dst[l] + 1) * INDPTR_BYTES +
                     (double)a->num_edges[l] * INDEX_BYTES;
        }
        double bw = p->pinned ? p->pcie_bw_pinned : p->pcie_bw_pageable;
        rw->copy = (1 + 2 * L) * p->pcie_lat_s + bytes / bw;
        rw->adam = fc * params * ADAM_BYTES / p->adam_bw +
                   2 * (p->pcie_lat_s + params * sizeof(float) / p->pcie_bw_pinned);
    } else {
        rw->copy = 0;
        rw->adam = fc * params * ADAM_BYTES / p->adam_bw;
        /* two passes over the gradients' bytes: the scaling into the buffer, the copy back */
        rw->ar_pack = fc * 2.0 * params * sizeof(float) / p->memcpy_bw;
    }
    double gemm = 0;
    rw->fb = c->o.heads > 0 ? fb_split_gat(p, a, c->o.in_dim, c->o.hidden, c->o.classes,
                                           c->o.heads, c->o.out_heads, &gemm)
                            : fb_split(p, a, c->o.in_dim, c->o.hidden, c->o.classes,
                                       c->o.relations, c->o.bases, &gemm);
    /* the oversubscription slows its GEMMs and the rest apart (sim/engine_cpu.c) */
    rw->fb_pen = rw->fb > 0 ? (gemm * c->pen_gemm + (rw->fb - gemm) * c->pen_gather) / rw->fb
                            : 0.0;
    /* sparse Adam over the rows it owns that the step touched (its own and the ones it
       served): it reads row, gradient and two moments and writes three, on the host */
    double own_rows = a->embed_rows != NULL ? at(a->embed_rows, (size_t)q) : 0;
    rw->embed_apply = (own_rows + (double)a->embed_served) * rb * 7.0 / p->memcpy_bw;
    rw->overhead = fc * p->step_overhead_s;
}

/* The sampling exchanges: layer l = L-1-i, requests (the local frontier is sampled while they
 * travel) then replies. */
static void build_sample_xchg(halo_sim_cost *c, brec *r, const halo_sim_work *w)
{
    int P = c->P, L = r->layers;
    for (int i = 0; i < L; i++) {
        int l = L - 1 - i;
        xsum_reset(c);
        for (int q = 0; q < P; q++) {
            const int64_t *req = w[q].sample_req;
            for (int k = 0; req != NULL && k < P; k++) {
                xsum_add(c, q, k, at(req, (size_t)l * P + k), 1);
            }
        }
        xsum_store(c, r, 2 * i);
        for (int q = 0; q < P; q++) {
            r->xr[(size_t)(2 * i) * P + q].own += halo_sim_cost_sample_s(
                &c->pf, (double)w[q].local_nodes[l], (double)w[q].local_edges[l],
                (double)w[q].local_copied[l], (double)w[q].local_long[l]);
        }
        xsum_reset(c);
        for (int q = 0; q < P; q++) {
            const int64_t *rep = w[q].sample_rep;
            for (int k = 0; rep != NULL && k < P; k++) {
                xsum_add(c, k, q, at(rep, (size_t)l * P + k), 1);
            }
        }
        xsum_store(c, r, 2 * i + 1);
    }
}

/* The fetch's exchanges: ids to the owners, then their rows back. */
static void build_fetch_xchg(halo_sim_cost *c, brec *r, const halo_sim_work *w)
{
    const halo_sim_profile *p = &c->pf;
    int P = c->P, L = r->layers;
    xsum_reset(c);
    for (int q = 0; q < P; q++) {
        for (int k = 0; w[q].pull_rows != NULL && k < P; k++) {
            xsum_add(c, q, k, ID_BYTES * at(w[q].pull_rows, (size_t)k), 1);
        }
    }
    xsum_store(c, r, 2 * L);
    xsum_reset(c);
    for (int q = 0; q < P; q++) {
        for (int k = 0; w[q].pull_rows != NULL && k < P; k++) {
            int64_t n = w[q].pull_rows[k];
            if (n > 0 && k != q) {
                xsum_add(c, k, q, (double)n * (double)w[q].row_bytes,
                         (double)pieces(c, n, w[q].row_bytes));
            }
        }
    }
    xsum_store(c, r, 2 * L + 1);
    r->x[2 * L + 1].rows = 1;
    for (int q = 0; q < P; q++) {
        xrank *xr = &r->xr[(size_t)(2 * L + 1) * P + q];
        double rb = (double)w[q].row_bytes;
        double got = rb > 0 ? c->s_tot_in[q] / rb : 0;
        /* the owner gathers the rows it serves piece by piece as they go (the receivers wait
           for it); the local rows and the scatter of staged replies are this rank's own */
        xr->crit = rows_at(p, (double)w[q].served_rows, rb, c->fetch_rate) +
                   c->s_msg_out[q] * p->msg_overhead_s;
        xr->own = rows_at(p, (double)w[q].local_rows + got, rb, c->fetch_rate) +
                  c->s_msg_in[q] * p->msg_overhead_s;
    }
}

/* The embeddings' exchanges (runtime/embed): ids to the owners, rows back (the owner copies
 * each row it serves; the asker scatters what it received and copies its own rows), then one
 * record of 16 bytes + a row per gradient to the owners. Batched exchanges: each starts with
 * the count all-to-all. */
static void build_embed_xchg(halo_sim_cost *c, brec *r, const halo_sim_work *w, int ar)
{
    int P = c->P;
    xsum_reset(c);
    for (int q = 0; q < P; q++) {
        for (int k = 0; w[q].embed_rows != NULL && k < P; k++) {
            xsum_add(c, q, k, ID_BYTES * at(w[q].embed_rows, (size_t)k), 1);
        }
    }
    xsum_store(c, r, ar + 1);
    xsum_reset(c);
    for (int q = 0; q < P; q++) {
        for (int k = 0; w[q].embed_rows != NULL && k < P; k++) {
            xsum_add(c, k, q, at(w[q].embed_rows, (size_t)k) * (double)w[q].row_bytes, 1);
        }
    }
    xsum_store(c, r, ar + 2);
    for (int q = 0; q < P; q++) {
        xrank *xr = &r->xr[(size_t)(ar + 2) * P + q];
        double rb = (double)w[q].row_bytes;
        double own_rows = w[q].embed_rows != NULL ? at(w[q].embed_rows, (size_t)q) : 0;
        double got = rb > 0 ? c->s_tot_in[q] / rb : 0;
        xr->crit = halo_sim_cost_gather_s(&c->pf, (double)w[q].embed_served, rb);
        xr->own += halo_sim_cost_gather_s(&c->pf, own_rows + got, rb);
    }
    xsum_reset(c);
    for (int q = 0; q < P; q++) {
        for (int k = 0; w[q].embed_rows != NULL && k < P; k++) {
            double rec = EMBED_REC_HDR + (double)w[q].row_bytes;
            xsum_add(c, q, k, at(w[q].embed_rows, (size_t)k) * rec, 1);
        }
    }
    xsum_store(c, r, ar + 3);
}

void halo_sim_cost_build_batch(halo_sim_cost *c, brec *r, const halo_sim_work *w)
{
    int P = c->P, L = r->layers;
    for (int q = 0; q < P; q++) {
        build_rank(c, &r->rw[q], &w[q], q, L);
    }
    build_sample_xchg(c, r, w);
    build_fetch_xchg(c, r, w);
    int ar = 2 * L + 2;
    for (int q = 0; q < P; q++) {
        xrank *xr = &r->xr[(size_t)ar * P + q];
        memset(xr, 0, sizeof *xr);
        xr->netem = c->ar_netem;
    }
    r->embed = 0;
    for (int q = 0; q < P; q++) {
        r->embed |= w[q].embed_rows != NULL;
    }
    if (r->embed) {
        build_embed_xchg(c, r, w, ar);
    }
}

/* ---------------------------------------------------------------- setup */

int halo_sim_cost_check_opts(const halo_sim_cost_opts *o)
{
    const halo_sim_profile *p = o->profile;
    if (p == NULL) {
        return halo_errorf(HALO_EUSAGE, "sim cost: no cluster profile");
    }
    if (p->machines < 1 || p->trainers < 1 || p->cores < 1 || p->nics < 1) {
        return halo_errorf(HALO_EUSAGE, "sim cost: profile %s: machines, trainers, cores and "
                           "nics must be >= 1", p->name);
    }
    if ((int64_t)p->machines * p->trainers != o->ranks) {
        return halo_errorf(HALO_EUSAGE, "sim cost: profile %s has %d machines x %d trainers, the "
                           "run %d ranks", p->name, p->machines, p->trainers, o->ranks);
    }
    if (o->depth < 0 || o->depth > HALO_PIPE_MAX_DEPTH) {
        return halo_errorf(HALO_EUSAGE, "sim cost: depth %d outside 0..%d", o->depth,
                           HALO_PIPE_MAX_DEPTH);
    }
    if (o->depth > 0 && (o->sampler_threads < 1 || o->sampler_threads > HALO_PIPE_MAX_THREADS)) {
        return halo_errorf(HALO_EUSAGE, "sim cost: %d sampling threads, expected 1..%d",
                           o->sampler_threads, HALO_PIPE_MAX_THREADS);
    }
    if (o->in_dim < 1 || o->hidden < 1 || o->classes < 1 || o->grad_floats < 0) {
        return halo_errorf(HALO_EUSAGE, "sim cost: bad model sizes (in %d, hidden %d, classes %d, "
                           "%lld gradient floats)", o->in_dim, o->hidden, o->classes,
                           (long long)o->grad_floats);
    }
    int gpu = p->device == HALO_SIM_DEVICE_GPU;
    double rates[] = {p->gather_bw, p->memcpy_bw, p->shm_bw, p->nic_bw, p->gemm_flops,
                      p->agg_bw, p->adam_bw, gpu ? p->pcie_bw_pinned : 1,
                      gpu ? p->pcie_bw_pageable : 1};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        if (!(rates[i] > 0)) {
            return halo_errorf(HALO_EUSAGE, "sim cost: profile %s has a zero or negative rate "
                               "(bandwidths, gemm_flops and, on GPU, pcie_bw_* must be > 0)",
                               p->name);
        }
    }
    return 0;
}

/* The model's domain for threads and cores: calibrate measures each constant on one thread
 * with a core to itself, and the sharing of the cores (share_eff) with share_threads threads;
 * beyond that the engine's sharing is an extrapolation: say so in one line. */
static void threads_notice(const halo_sim_cost *c)
{
    const halo_sim_profile *p = &c->pf;
    long threads = c->busy_threads, per_rank = threads / p->trainers;
    if (c->oversub_threads && threads > p->share_threads) {
        halo_notice("sim: %ld busy threads per machine (%d trainer%s x %d) on %d cores: outside "
                    "what halo calibrate measured (%s); the times are an estimate", threads,
                    p->trainers, p->trainers == 1 ? "" : "s", (int)per_rank, p->cores,
                    p->share_threads > 0 ? "sharing up to cpu.share_threads threads"
                                         : "a core per thread");
    }
}

void halo_sim_cost_setup(halo_sim_cost *c)
{
    c->busy_threads = (long)c->pf.trainers * (c->depth > 0 ? 2 + c->S : 1);
    c->oversub_threads = c->busy_threads > c->pf.cores;
    /* more trainer processes with work than cores: each kind of work its own measured
       penalty (per process beyond the cores, sim/engine_cpu.c) */
    c->pen_gather = c->pf.oversub_penalty;
    c->pen_gemm = c->pf.oversub_gemm;
    /* when processes outnumber the cores, a table is read between the rate of one kept in the
       caches and that of one evicted, by its size; with the run's exchanges sleeping (--netem's
       emulated delays: the thread gives its core up for a millisecond or more, and what ran
       meanwhile takes the caches; measured, each stage's CPU is higher with them than
       without) at the evicted rate */
    c->warm_table = c->netem ? 0.0 : c->o.table_bytes;
    /* a trainer process that keeps a core to itself (no more of them than cores) and whose
       exchanges do not sleep finds what the caches held of its table at the next batch: the
       rate measured batch after batch (halo_sim_cost_kept_bw); when processes outnumber the
       cores, the others' work between two batches takes part of the caches (until the
       eleventh pass every table was priced so: the fetch CPU of 2 ranks on 2 cores without
       emulated delays read 36-59 % over the model at seeds 40-41) */
    bool kept = !c->netem && c->pf.trainers <= c->pf.cores;
    c->fetch_rate = kept ? halo_sim_cost_kept_bw(&c->pf, c->o.table_bytes)
                         : halo_sim_cost_fetch_bw(&c->pf, c->warm_table);
    c->wake_s = c->netem ? c->pf.netem_sleep_cpu_s : 0.0;
    double x = halo_sim_cost_warm_share(&c->pf, c->warm_table);
    c->pen_fetch = (1.0 - x) * c->pf.oversub_penalty + x * c->pf.oversub_warm;
    c->pen_sample = c->pf.oversub_sample;
    if (c->pf.crowd_ranks > 0) {
        /* measured on the runtime's own crowded training, stage by stage (halo calibrate's
           crowding probe): in place of the unit probe's penalties by kind of work */
        c->pen_sample = c->pf.crowd_sample;
        c->pen_fetch = c->pf.crowd_fetch;
        c->pen_gather = c->pen_gemm = c->pf.crowd_compute;
    }
    /* every core busy (as many busy threads as cores or more): the sampler, whose constants
       are measured alone, runs its measured slow-down against alone (caches and memory shared) */
    c->corun_slow = 1.0 + (c->busy_threads >= c->pf.cores ? c->pf.corun_sample : 0.0);
    threads_notice(c);
    const halo_sim_cost_opts *o = &c->o;
    const halo_sim_profile *p = &c->pf;
    int P = c->P, M = c->M, T = c->T;
    /* ranks that outnumber the cores: a descheduled rank delays every exchange (measured by
     * halo calibrate's probe with 2 x cores ranks) */
    c->lat_local = p->trainers > p->cores && p->oversub_lat_s > 0 ? p->oversub_lat_s
                                                                   : p->shm_lat_s;
    /* the count all-to-all: log2(P) rounds of one latency */
    c->t_counts = P > 1 ? ceil(log2((double)P)) * (M > 1 ? p->net_lat_s : c->lat_local) : 0;
    double B = (double)o->grad_floats * sizeof(float);
    double arl = fitf(p->fit_allreduce) * p->allreduce_lat_s;
    if (T < 2) {
        c->ar_d1 = 0;
    } else if (M == 1 && p->allreduce_bw > 0) {
        /* one machine, the runtime's own allreduce measured (halo calibrate): MPI's in-place
           non-blocking allreduce reduces up a binomial tree and broadcasts down it, each of
           its 2 ceil(log2 T) rounds the whole buffer; ar_d1 is half of it */
        double rounds = ceil(log2((double)T));
        c->ar_d1 = rounds * (c->lat_local + arl + B / (2.0 * p->allreduce_bw));
    } else { /* a ring's reduce-scatter at shm_bw */
        c->ar_d1 = (T - 1) * (c->lat_local + arl) + (double)(T - 1) / T * B / p->shm_bw;
    }
    c->ar_bytes = M > 1 ? 2.0 * (M - 1) / M * B / T : 0;
    c->ar_lat = M > 1 ? 2.0 * (M - 1) * (p->net_lat_s + arl) : 0;
    if (c->netem && P > 1) {
        double steps = 2.0 * (P - 1);
        c->ar_netem = steps * p->netem_lat_s +
                      (p->netem_bw > 0 ? B * steps / P / p->netem_bw : 0) + p->netem_over_s;
    }
}
