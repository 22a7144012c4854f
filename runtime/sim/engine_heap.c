/* The simulator engine's two heaps: its events in time order and its resources (cores, NICs)
 * by their next end. Plain arrays in halo_sim_cost, no allocation beyond the event heap's growth. */
#include "sim/cost_internal.h"

#include "core/mem.h"

/* Event order: by time, then by when they were scheduled (deterministic). */
static int ev_before(const sim_event *a, const sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Schedules an event (a binary heap). */
void halo_sim_ev_push(halo_sim_cost *c, double t, int kind, int id, int64_t batch)
{
    if (c->nheap == c->heap_cap) {
        c->heap_cap = c->heap_cap > 0 ? 2 * c->heap_cap : 256;
        c->heap = halo_realloc(c->heap, (size_t)c->heap_cap * sizeof *c->heap);
    }
    sim_event e = {t, c->seq++, kind, id, batch};
    int64_t i = c->nheap++;
    while (i > 0) {
        int64_t up = (i - 1) / 2;
        if (!ev_before(&e, &c->heap[up])) {
            break;
        }
        c->heap[i] = c->heap[up];
        i = up;
    }
    c->heap[i] = e;
}

/* Takes the earliest event. */
sim_event halo_sim_ev_pop(halo_sim_cost *c)
{
    sim_event top = c->heap[0];
    sim_event last = c->heap[--c->nheap];
    int64_t i = 0, n = c->nheap;
    for (;;) {
        int64_t k = 2 * i + 1;
        if (k >= n) {
            break;
        }
        if (k + 1 < n && ev_before(&c->heap[k + 1], &c->heap[k])) {
            k++;
        }
        if (!ev_before(&c->heap[k], &last)) {
            break;
        }
        c->heap[i] = c->heap[k];
        i = k;
    }
    if (n > 0) {
        c->heap[i] = last;
    }
    return top;
}

/* Sets resource i's next end to t (INFINITY: none) and restores the heap. */
void halo_sim_res_set(halo_sim_cost *c, int i, double t)
{
    double *key = c->rkey;
    int *h = c->rheap, *pos = c->rpos;
    key[i] = t;
    int k = pos[i];
    while (k > 0 && key[h[(k - 1) / 2]] > t) {
        int up = (k - 1) / 2;
        h[k] = h[up];
        pos[h[k]] = k;
        k = up;
    }
    for (;;) {
        int ch = 2 * k + 1;
        if (ch >= c->nres) {
            break;
        }
        if (ch + 1 < c->nres && key[h[ch + 1]] < key[h[ch]]) {
            ch++;
        }
        if (!(key[h[ch]] < t)) {
            break;
        }
        h[k] = h[ch];
        pos[h[k]] = k;
        k = ch;
    }
    h[k] = i;
    pos[i] = k;
}

