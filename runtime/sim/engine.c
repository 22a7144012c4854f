/* The simulator's discrete-event engine: cores served in arrival order, NICs shared by the trainers of a
 * machine, collective exchanges, a (hierarchical) ring allreduce and the runtime's pipeline rules;
 * the stage works it runs come from the cost model (sim/cost.c). docs/sim-model.md says it in words. */
#include "sim/cost_internal.h"

#include "core/err.h"
#include "core/mem.h"

#include <math.h>
#include <string.h>

/* Stages' names: the runtime's timeline names. */
static const char *const stage_name[NSTAGES] = {"sample", "fetch", "copy", "compute",
                                                "allreduce"};

/* ---------------------------------------------------------------- batch records */

/* The record of batch b (one not yet given back). */
static brec *rec_of(const halo_sim_cost *c, int64_t b)
{
    return c->ring[b % c->ring_cap];
}

/* A record for batch b (from the pool, or new), placed in the ring (grown when full). */
static brec *rec_take(halo_sim_cost *c, int64_t b)
{
    if (b - c->freed >= c->ring_cap) {
        int64_t cap = 2 * c->ring_cap;
        brec **ring = HALO_NEW(brec *, cap);
        for (int64_t k = c->freed; k < b; k++) {
            ring[k % cap] = c->ring[k % c->ring_cap];
        }
        halo_free(c->ring);
        c->ring = ring;
        c->ring_cap = cap;
    }
    brec *r;
    if (c->npool > 0) {
        r = c->pool[--c->npool];
    } else {
        r = HALO_NEW(brec, 1);
        r->xr = HALO_NEW(xrank, (size_t)MAX_XCHG * c->P);
        r->rw = HALO_NEW(rwork, c->P);
        r->sampled = HALO_NEW(unsigned char, c->P);
    }
    r->batch = b;
    r->released = 0;
    memset(r->x, 0, sizeof r->x);
    memset(r->sampled, 0, (size_t)c->P);
    c->ring[b % c->ring_cap] = r;
    return r;
}

/* Gives the records every rank has finished back to the pool, oldest first. */
static void rec_release(halo_sim_cost *c)
{
    while (c->freed < c->added && rec_of(c, c->freed)->released == c->P) {
        if (c->npool == c->pool_cap) {
            c->pool_cap = c->pool_cap > 0 ? 2 * c->pool_cap : 16;
            c->pool = halo_realloc(c->pool, (size_t)c->pool_cap * sizeof *c->pool);
        }
        c->pool[c->npool++] = rec_of(c, c->freed);
        c->freed++;
    }
}

static void rec_free(brec *r)
{
    halo_free(r->xr);
    halo_free(r->rw);
    halo_free(r->sampled);
    halo_free(r);
}

/* ---------------------------------------------------------------- NICs */

/* Brings the NIC resource's virtual bytes up to now. */
static void nic_advance(halo_sim_cost *c, sim_nic *n)
{
    if (n->n > 0) {
        n->v += (c->now - n->t) * n->cap / n->n;
    }
    n->t = c->now;
}

/* Sets the time of the NIC resource's next transfer end. */
static void nic_resched(halo_sim_cost *c, int ni)
{
    sim_nic *n = &c->nic[ni];
    if (n->n == 0) {
        halo_sim_res_set(c, c->M + ni, INFINITY);
        return;
    }
    double fmin = n->f[0].fin;
    for (int i = 1; i < n->n; i++) {
        fmin = n->f[i].fin < fmin ? n->f[i].fin : fmin;
    }
    double dt = (fmin - n->v) * n->n / n->cap;
    halo_sim_res_set(c, c->M + ni, c->now + (dt > 0 ? dt : 0));
}

/* Starts a transfer of `bytes` through NIC resource ni for exchange xi of batch b. */
static void nic_start(halo_sim_cost *c, int ni, double bytes, int64_t b, int xi)
{
    sim_nic *n = &c->nic[ni];
    nic_advance(c, n);
    if (n->n == n->ncap) {
        n->ncap = n->ncap > 0 ? 2 * n->ncap : 16;
        n->f = halo_realloc(n->f, (size_t)n->ncap * sizeof *n->f);
    }
    n->f[n->n++] = (flow){n->v + bytes, b, xi};
    nic_resched(c, ni);
}

/* ---------------------------------------------------------------- exchanges */

static void thread_run(halo_sim_cost *c, int tid);
static void xchg_transfer_done(halo_sim_cost *c, brec *r, int xi);

/* Number of the allreduce among a batch's exchanges. */
static int ar_index(const brec *r)
{
    return 2 * r->layers + 2;
}

static void spin(halo_sim_cost *c, int tid, int on);

/* Continues thread tid after its current step at time t (>= now). */
static void resume_at(halo_sim_cost *c, int tid, double t)
{
    c->th[tid].pc++;
    halo_sim_ev_push(c, t > c->now ? t : c->now, EV_THREAD, tid, 0);
}

/* Continues thread tid after its exchange whose rank part is xr: at t, the end of the transfer
 * and of its own work, or later at its netem floor, which it sleeps to (the runtime's
 * clock_nanosleep; it polls no more from here: the runtime polls until the exchange's messages
 * are in); a thread that slept pays the sleep's CPU (wake_s) before its next step.
 * Returns when it continues. */
static double xchg_resume(halo_sim_cost *c, const xrank *xr, double t)
{
    double floor_t = xr->arrive + xr->netem;
    if (xr->netem > 0 && floor_t > t) {
        t = floor_t;
        c->th[xr->thread].wake = c->wake_s > 0;
        spin(c, xr->thread, 0);
    }
    resume_at(c, xr->thread, t);
    return t;
}

/* The transfer of exchange xi started at now: flows, shm flows, and every rank's CPU work. */
static void xchg_start(halo_sim_cost *c, brec *r, int xi)
{
    xchg *x = &r->x[xi];
    x->tend = c->now;
    x->outstanding = 0;
    for (int q = 0; q < c->P; q++) {
        xrank *xr = &r->xr[(size_t)xi * c->P + q];
        if (xr->intra > 0 && c->now + xr->intra > x->tend) {
            x->tend = c->now + xr->intra;
        }
        if (xr->out > 0) {
            nic_start(c, c->rk[q].nic, xr->out, r->batch, xi);
            x->outstanding++;
        }
        if (xr->in > 0) {
            nic_start(c, c->rk[q].nic + 1, xr->in, r->batch, xi);
            x->outstanding++;
        }
        sim_thread *t = &c->th[xr->thread];
        xr->own_end = -1;
        if (xr->crit > 0) {
            t->phase = 0;
            halo_sim_cpu_start(c, xr->thread, xr->crit, 1, -1.0);
            x->outstanding++;
        } else if (xr->own > 0) {
            t->phase = 1;
            halo_sim_cpu_start(c, xr->thread, xr->own, 1, -1.0);
        } else {
            xr->own_end = c->now;
        }
    }
    if (x->outstanding == 0) {
        xchg_transfer_done(c, r, xi);
    }
}

/* The allreduce of batch r: every rank has arrived (now). Inside each machine a reduce-scatter,
 * across machines a ring over the NICs (as transfers that share them with the pipeline's), then
 * an all-gather inside; one machine: a plain ring at shm rates. */
static void ar_begin(halo_sim_cost *c, brec *r)
{
    xchg *x = &r->x[ar_index(r)];
    x->outstanding = 0;
    if (c->M > 1) {
        halo_sim_ev_push(c, c->now + c->ar_d1, EV_ARMID, 0, r->batch);
        return;
    }
    x->tend = c->now + 2.0 * c->ar_d1;
    xchg_transfer_done(c, r, ar_index(r));
}

/* The ring across machines starts: each rank moves its share through its NIC group. */
static void ar_mid(halo_sim_cost *c, brec *r)
{
    int xi = ar_index(r);
    xchg *x = &r->x[xi];
    x->tend = c->now;
    if (c->ar_bytes > 0) {
        for (int q = 0; q < c->P; q++) {
            nic_start(c, c->rk[q].nic, c->ar_bytes, r->batch, xi);
            nic_start(c, c->rk[q].nic + 1, c->ar_bytes, r->batch, xi);
            x->outstanding += 2;
        }
    }
    if (x->outstanding == 0) {
        x->tend = c->now + c->ar_lat + c->ar_d1;
        xchg_transfer_done(c, r, xi);
    }
}

/* The transfer of exchange xi has ended on every rank (now; x->tend may be later): ranks whose
 * own CPU work is done continue at the latest of the transfer's end, that work's end and their
 * netem floor; the others continue when their work ends. */
static void xchg_transfer_done(halo_sim_cost *c, brec *r, int xi)
{
    xchg *x = &r->x[xi];
    x->done = 1;
    if (x->tend < c->now) {
        x->tend = c->now;
    }
    int ar = xi == ar_index(r);
    for (int q = 0; q < c->P; q++) {
        xrank *xr = &r->xr[(size_t)xi * c->P + q];
        if (!ar && xr->own_end < 0) {
            continue;
        }
        double t = x->tend;
        if (!ar && xr->own_end > t) {
            t = xr->own_end;
        }
        t = xchg_resume(c, xr, t);
        if (ar) {
            c->th[xr->thread].ar_end = t;
        }
    }
}

/* A transfer of exchange xi of batch b ended (now). */
static void flow_done(halo_sim_cost *c, int64_t b, int xi)
{
    brec *r = rec_of(c, b);
    xchg *x = &r->x[xi];
    int ar = xi == ar_index(r);
    double t = c->now + (ar ? 0 : c->pf.net_lat_s);
    if (t > x->tend) {
        x->tend = t;
    }
    if (--x->outstanding == 0) {
        if (ar) {
            x->tend = c->now + c->ar_lat + c->ar_d1;
        }
        xchg_transfer_done(c, r, xi);
    }
}

/* Thread tid starts (on = 1) or stops polling in an exchange: its machine's running tasks are
 * brought up to now at the old rate and rescheduled at the new one. */
static void spin(halo_sim_cost *c, int tid, int on)
{
    sim_thread *t = &c->th[tid];
    if (t->spinning == on || c->pf.poll_frac <= 0) {
        return;
    }
    int mi = c->rk[t->rank].machine;
    sim_machine *m = &c->mc[mi];
    halo_sim_cpu_advance(c, m);
    t->spinning = on;
    m->spinning += on ? 1 : -1;
    halo_sim_cpu_resched(c, mi);
}

/* Thread tid reaches exchange xi of its batch (now). */
static void xchg_arrive(halo_sim_cost *c, int tid, int xi)
{
    sim_thread *t = &c->th[tid];
    spin(c, tid, 1);
    brec *r = rec_of(c, t->batch);
    xchg *x = &r->x[xi];
    xrank *xr = &r->xr[(size_t)xi * c->P + t->rank];
    xr->arrive = c->now;
    xr->thread = tid;
    xr->own_end = -1;
    x->amax = c->now;
    if (++x->arrived < c->P) {
        return;
    }
    if (xi == ar_index(r)) {
        ar_begin(c, r);
    } else if (!x->rows && c->t_counts > 0) {
        halo_sim_ev_push(c, c->now + c->t_counts, EV_XSTART, xi, r->batch);
    } else {
        xchg_start(c, r, xi);
    }
}

/* Thread tid's CPU task ended (now). */
static void cpu_done(halo_sim_cost *c, int tid)
{
    sim_thread *t = &c->th[tid];
    if (t->wake == 2) { /* the wake-up after an emulated delay: its next step now */
        t->wake = 0;
        if (t->stage == STAGE_ALLREDUCE) {
            t->ar_end = c->now; /* the runtime's allreduce ends after the sleep */
        }
        thread_run(c, tid);
        return;
    }
    t->cpu_end = c->now;
    int kind = halo_sim_wake_kind(t->stage);
    if (kind >= 0) {
        t->idle_mark[kind] = t->idle;
    }
    const step *s = &t->steps[t->pc];
    if (s->kind != STEP_XCHG) {
        t->pc++;
        thread_run(c, tid);
        return;
    }
    brec *r = rec_of(c, t->batch);
    xchg *x = &r->x[s->xi];
    xrank *xr = &r->xr[(size_t)s->xi * c->P + t->rank];
    if (t->phase == 0) {
        if (xr->own > 0) {
            t->phase = 1;
            halo_sim_cpu_start(c, tid, xr->own, 1, -1.0);
        } else {
            xr->own_end = c->now;
        }
        if (--x->outstanding == 0) {
            xchg_transfer_done(c, r, s->xi);
        }
        return;
    }
    xr->own_end = c->now;
    if (x->done) {
        xchg_resume(c, xr, x->tend > c->now ? x->tend : c->now);
    }
}

/* ---------------------------------------------------------------- stages and the pipeline */

static void stage_start(halo_sim_cost *c, int tid, int stage, int64_t b);
static void try_rank(halo_sim_cost *c, int rank);

static void add_step(sim_thread *t, int kind, double work, int threads, int xi)
{
    t->steps[t->nsteps++] = (step){kind, threads, xi, work, -1.0};
}

/* Builds the program of a stage from the batch's work. */
static void stage_program(halo_sim_cost *c, sim_thread *t, const brec *r)
{
    const rwork *w = &r->rw[t->rank];
    int L = r->layers;
    int cpu = !c->gpu;
    t->nsteps = 0;
    t->pc = 0;
    switch (t->stage) {
    case STAGE_SAMPLE:
        for (int i = 0; i < L; i++) {
            int l = L - 1 - i;
            add_step(t, STEP_XCHG, 0, 1, 2 * i);
            add_step(t, STEP_CPU, w->serve[l], 1, 0);
            add_step(t, STEP_XCHG, 0, 1, 2 * i + 1);
            add_step(t, STEP_CPU, w->build[l], 1, 0);
        }
        break;
    case STAGE_FETCH:
        add_step(t, STEP_CPU, w->fetch_pre, 1, 0);
        add_step(t, STEP_XCHG, 0, 1, 2 * L);
        add_step(t, STEP_XCHG, 0, 1, 2 * L + 1);
        break;
    case STAGE_COPY:
        add_step(t, STEP_DELAY, w->copy, 1, 0);
        break;
    case STAGE_COMPUTE:
        if (r->embed) { /* the embedding rows from their owners, on the trainer's thread */
            add_step(t, STEP_XCHG, 0, 1, ar_index(r) + 1);
            add_step(t, STEP_XCHG, 0, 1, ar_index(r) + 2);
        }
        if (cpu) {
            add_step(t, STEP_CPU, w->fb, c->kthreads, 0);
            t->steps[t->nsteps - 1].pen = w->fb_pen;
            add_step(t, STEP_CPU, w->overhead, 1, 0);
        } else {
            add_step(t, STEP_DELAY, w->fb + w->overhead, 1, 0);
        }
        break;
    default: /* STAGE_ALLREDUCE */
        if (cpu) { /* the buffer's passes; the copy back is taken with the scaling, before */
            add_step(t, STEP_CPU, w->ar_pack, 1, STEP_NO_CLOCK);
        }
        add_step(t, STEP_XCHG, 0, 1, ar_index(r));
        if (r->embed) { /* the gradients to the owners, applied there before the dense Adam */
            add_step(t, STEP_XCHG, 0, 1, ar_index(r) + 3);
            add_step(t, STEP_CPU, w->embed_apply, 1, 0);
        }
        add_step(t, cpu ? STEP_CPU : STEP_DELAY, w->adam, cpu ? c->kthreads : 1, 0);
        break;
    }
}

/* Thread tid starts stage `stage` of batch b now. */
static void stage_start(halo_sim_cost *c, int tid, int stage, int64_t b)
{
    sim_thread *t = &c->th[tid];
    t->busy = 1;
    t->stage = stage;
    t->batch = b;
    t->start = c->now;
    t->ar_end = c->now;
    stage_program(c, t, rec_of(c, b));
    thread_run(c, tid);
}

/* Runs thread tid's program from its current step until it must wait. */
static void thread_run(halo_sim_cost *c, int tid)
{
    sim_thread *t = &c->th[tid];
    if (t->wake == 1) {
        t->wake = 2;
        halo_sim_cpu_start(c, tid, c->wake_s, 1, -1.0);
        return;
    }
    while (t->pc < t->nsteps) {
        const step *s = &t->steps[t->pc];
        if (s->kind == STEP_XCHG) {
            xchg_arrive(c, tid, s->xi);
            return;
        }
        if (s->work > 0) {
            if (s->kind == STEP_CPU) {
                halo_sim_cpu_start(c, tid, s->work, s->threads, s->pen);
            } else {
                resume_at(c, tid, c->now + s->work);
            }
            return;
        }
        t->pc++;
    }
    /* the stage ended: its time, its interval, then what the pipeline does next */
    sim_rank *R = &c->rk[t->rank];
    brec *r = rec_of(c, t->batch);
    double d = c->now - t->start;
    switch (t->stage) {
    case STAGE_SAMPLE:
        R->sample_s += d;
        break;
    case STAGE_FETCH:
        R->fetch_s += d;
        break;
    case STAGE_COPY:
        R->copy_s += d;
        break;
    case STAGE_COMPUTE:
        R->compute_s += d;
        break;
    default:
        R->allreduce_s += t->ar_end - t->start;
        R->compute_s += c->now - t->ar_end;
        break;
    }
    if (c->o.timeline != NULL) {
        int thread = t->idx >= TH_SAMPLER ? t->idx - TH_SAMPLER : 0;
        halo_timeline_add(c->o.timeline, t->rank, c->epoch, t->batch, stage_name[t->stage],
                          thread, t->start, c->now);
    }
    t->busy = 0;
    int64_t b = t->batch;
    int stage = t->stage;
    if (stage == STAGE_SAMPLE && c->depth > 0) {
        r->sampled[t->rank] = 1;
        t->push_wait = 1;
        while (R->pushed < c->added && rec_of(c, R->pushed)->sampled[t->rank]) {
            R->pushed++;
        }
        for (int j = 0; j < c->S; j++) {
            sim_thread *s = &c->th[t->rank * c->NT + TH_SAMPLER + j];
            if (s->push_wait && s->next < R->pushed) {
                s->push_wait = 0;
                s->next += c->S;
            }
        }
        try_rank(c, t->rank);
        return;
    }
    if (stage == STAGE_FETCH && c->depth > 0) {
        R->fetched++;
        t->next++;
        try_rank(c, t->rank);
        return;
    }
    if (stage == STAGE_ALLREDUCE) {
        R->released++;
        R->free_at = c->now;
        t->next++;
        r->released++;
        rec_release(c);
        try_rank(c, t->rank);
        return;
    }
    /* the trainer's next stage of the same batch */
    int nexts = stage + 1;
    if (nexts == STAGE_COPY && !c->gpu) {
        nexts = STAGE_COMPUTE;
    }
    stage_start(c, t->rank * c->NT + TH_TRAINER, nexts, b);
}

/* A thread of rank `rank` needs batch b, not added yet: the timeline stops here until it is. */
static void stall(halo_sim_cost *c, int rank)
{
    c->rk[rank].stalled = 1;
    if (!c->stalled) {
        c->stalled = 1;
        c->stall_t = c->now;
    }
}

/* Starts whatever the rank's idle threads may start now (the runtime's pipeline rules). */
static void try_rank(halo_sim_cost *c, int rank)
{
    sim_rank *R = &c->rk[rank];
    sim_thread *tr = &c->th[rank * c->NT + TH_TRAINER];
    if (c->depth == 0) {
        if (!tr->busy) {
            if (tr->next < c->added) {
                stage_start(c, rank * c->NT + TH_TRAINER, STAGE_SAMPLE, tr->next);
            } else if (!c->ending) {
                stall(c, rank);
            }
        }
        return;
    }
    for (int j = 0; j < c->S; j++) {
        int tid = rank * c->NT + TH_SAMPLER + j;
        sim_thread *s = &c->th[tid];
        if (s->busy || s->push_wait || s->next >= R->released + c->depth + 1) {
            continue; /* running, waiting to pass its batch on, or no free slot */
        }
        if (s->next < c->added) {
            stage_start(c, tid, STAGE_SAMPLE, s->next);
        } else if (!c->ending) {
            stall(c, rank);
        }
    }
    sim_thread *f = &c->th[rank * c->NT + TH_FETCH];
    if (!f->busy && f->next < R->pushed) {
        stage_start(c, rank * c->NT + TH_FETCH, STAGE_FETCH, f->next);
    }
    if (!tr->busy && tr->next < R->fetched) {
        R->wait_s += c->now - R->free_at;
        stage_start(c, rank * c->NT + TH_TRAINER, c->gpu ? STAGE_COPY : STAGE_COMPUTE, tr->next);
    }
}

/* The machine's earliest tasks ended (now): they leave and free their cores for the queued
 * ones, then their threads go on. */
static void cpu_event(halo_sim_cost *c, int mi)
{
    sim_machine *m = &c->mc[mi];
    halo_sim_cpu_advance(c, m);
    /* the seconds each running task still needs at its slow-down now */
    double fmin = INFINITY, b = halo_sim_cpu_crowded(c, m);
    for (int i = 0; i < m->n; i++) {
        double left = m->task[i].rem * halo_sim_task_slow(&m->task[i], b);
        fmin = m->task[i].held > 0 && left < fmin ? left : fmin;
    }
    /* a task ended, or (time slices) none did: then nothing leaves */
    double lim = c->pf.slice_s > 0 && fmin > 1e-9 ? -1.0 : fmin + 1e-12;
    int nd = 0, kept = 0;
    for (int i = 0; i < m->n; i++) { /* removes in place, keeping the arrival order */
        if (m->task[i].held > 0 && m->task[i].rem * halo_sim_task_slow(&m->task[i], b) <= lim) {
            c->done[nd++] = m->task[i].thread;
            m->held -= m->task[i].held;
        } else {
            m->task[kept++] = m->task[i];
        }
    }
    m->n = kept;
    /* the threads go on first: one that starts another CPU step keeps the core it had (it
       did not yield it); then the cores left go to the queue */
    for (int i = 0; i < nd; i++) {
        c->th[c->done[i]].keep = 1;
    }
    m->handoff = 1;
    for (int i = 0; i < nd; i++) {
        cpu_done(c, c->done[i]);
        c->th[c->done[i]].keep = 0;
    }
    m->handoff = 0;
    halo_sim_cpu_advance(c, m);
    halo_sim_cpu_preempt(c, m);
    halo_sim_cpu_assign(c, m);
    halo_sim_cpu_resched(c, mi);
}

/* The NIC resource's earliest transfers ended (now): they leave, then their exchanges are told
 * (which may start new transfers here). */
static void nic_event(halo_sim_cost *c, int ni)
{
    sim_nic *n = &c->nic[ni];
    double fmin = n->f[0].fin;
    for (int i = 1; i < n->n; i++) {
        fmin = n->f[i].fin < fmin ? n->f[i].fin : fmin;
    }
    n->v = fmin;
    n->t = c->now;
    double lim = fmin + 1e-13 * fabs(fmin);
    int nd = 0;
    flow ended[64];
    for (int i = 0; i < n->n;) {
        if (n->f[i].fin <= lim && nd < 64) {
            ended[nd++] = n->f[i];
            n->f[i] = n->f[--n->n];
        } else {
            i++;
        }
    }
    nic_resched(c, ni);
    for (int i = 0; i < nd; i++) {
        flow_done(c, ended[i].batch, ended[i].xi);
    }
}

/* Processes events in time order until none is left or one lies past a stall; at equal times
 * the ends of CPU tasks and transfers come first. */
static void run_events(halo_sim_cost *c)
{
    for (;;) {
        int res = c->rheap[0];
        double tr = c->rkey[res];
        double te = c->nheap > 0 ? c->heap[0].t : INFINITY;
        double t = tr <= te ? tr : te;
        if (t == INFINITY || (c->stalled && t > c->stall_t)) {
            return;
        }
        c->now = t;
        if (tr <= te) {
            if (res < c->M) {
                cpu_event(c, res);
            } else {
                nic_event(c, res - c->M);
            }
            continue;
        }
        sim_event e = halo_sim_ev_pop(c);
        switch (e.kind) {
        case EV_THREAD:
            spin(c, e.id, 0);
            thread_run(c, e.id);
            break;
        case EV_XSTART:
            xchg_start(c, rec_of(c, e.batch), e.id);
            break;
        default: /* EV_ARMID */
            ar_mid(c, rec_of(c, e.batch));
            break;
        }
    }
}

/* ---------------------------------------------------------------- API */

int halo_sim_cost_new(const halo_sim_cost_opts *o, halo_sim_cost **out)
{
    *out = NULL;
    HALO_CHECK(halo_sim_cost_check_opts(o));
    const halo_sim_profile *p = o->profile;
    int gpu = p->device == HALO_SIM_DEVICE_GPU;
    halo_sim_cost *c = HALO_NEW(halo_sim_cost, 1);
    c->o = *o;
    c->pf = *p;
    c->o.profile = &c->pf;
    c->P = o->ranks;
    c->M = p->machines;
    c->T = p->trainers;
    c->G = p->nics < p->trainers ? p->nics : p->trainers;
    c->depth = o->depth;
    int S = o->sampler_threads < 1 ? 1 : o->sampler_threads;
    c->S = o->depth > 0 ? (S > o->depth ? o->depth : S) : 1;
    c->NT = TH_SAMPLER + c->S;
    c->gpu = gpu;
    c->kthreads = p->cores / p->trainers > 1 ? p->cores / p->trainers : 1;
    c->netem = p->netem_lat_s > 0 || p->netem_bw > 0;
    int P = c->P, M = c->M, T = c->T;
    halo_sim_cost_setup(c);
    c->rk = HALO_NEW(sim_rank, P);
    c->th = HALO_NEW(sim_thread, (size_t)P * c->NT);
    c->mc = HALO_NEW(sim_machine, M);
    c->nic = HALO_NEW(sim_nic, (size_t)M * c->G * 2);
    for (int r = 0; r < P; r++) {
        c->rk[r].machine = r / T;
        c->rk[r].nic = ((r / T) * c->G + (r % T) % c->G) * 2;
        for (int i = 0; i < c->NT; i++) {
            c->th[r * c->NT + i].rank = r;
            c->th[r * c->NT + i].idx = i;
            halo_rng_init(&c->th[r * c->NT + i].jit, 0, HALO_RNG_SIM_JITTER,
                          (uint64_t)(r * c->NT + i), 0, 0);
        }
    }
    for (int i = 0; i < M * c->G * 2; i++) {
        c->nic[i].cap = p->nic_bw * p->nics / c->G;
    }
    c->nres = M + M * c->G * 2;
    c->rkey = HALO_NEW(double, c->nres);
    c->rheap = HALO_NEW(int, c->nres);
    c->rpos = HALO_NEW(int, c->nres);
    for (int i = 0; i < c->nres; i++) {
        c->rkey[i] = INFINITY;
        c->rheap[i] = c->rpos[i] = i;
    }
    c->ring_cap = 16;
    c->ring = HALO_NEW(brec *, c->ring_cap);
    c->done = HALO_NEW(int, (size_t)P * c->NT);
    c->s_out = HALO_NEW(double, P);
    c->s_in = HALO_NEW(double, P);
    c->s_intra = HALO_NEW(double, P);
    c->s_tot_out = HALO_NEW(double, P);
    c->s_tot_in = HALO_NEW(double, P);
    c->s_msg_out = HALO_NEW(double, P);
    c->s_msg_in = HALO_NEW(double, P);
    c->tnext = o->t_start;
    c->piece_rb = -1;
    *out = c;
    return 0;
}

void halo_sim_cost_free(halo_sim_cost *c)
{
    if (c == NULL) {
        return;
    }
    for (int64_t b = c->freed; b < c->added; b++) {
        rec_free(rec_of(c, b));
    }
    for (int i = 0; i < c->npool; i++) {
        rec_free(c->pool[i]);
    }
    for (int m = 0; m < c->M; m++) {
        halo_free(c->mc[m].task);
    }
    for (int i = 0; i < c->M * c->G * 2; i++) {
        halo_free(c->nic[i].f);
    }
    halo_free(c->pool);
    halo_free(c->ring);
    halo_free(c->heap);
    halo_free(c->rk);
    halo_free(c->th);
    halo_free(c->mc);
    halo_free(c->nic);
    halo_free(c->done);
    halo_free(c->preempted);
    halo_free(c->rkey);
    halo_free(c->rheap);
    halo_free(c->rpos);
    halo_free(c->s_out);
    halo_free(c->s_in);
    halo_free(c->s_intra);
    halo_free(c->s_tot_out);
    halo_free(c->s_tot_in);
    halo_free(c->s_msg_out);
    halo_free(c->s_msg_in);
    halo_free(c);
}

void halo_sim_cost_epoch_begin(halo_sim_cost *c, int epoch)
{
    /* a previous epoch never ended: drop what is left of it */
    for (int64_t b = c->freed; b < c->added; b++) {
        if (c->npool == c->pool_cap) {
            c->pool_cap = c->pool_cap > 0 ? 2 * c->pool_cap : 16;
            c->pool = halo_realloc(c->pool, (size_t)c->pool_cap * sizeof *c->pool);
        }
        c->pool[c->npool++] = rec_of(c, b);
    }
    c->epoch = epoch;
    c->t0 = c->tnext;
    c->now = c->t0;
    c->added = c->freed = 0;
    c->ending = 0;
    c->stalled = 0;
    c->nheap = 0;
    for (int m = 0; m < c->M; m++) {
        c->mc[m].n = c->mc[m].held = c->mc[m].handoff = c->mc[m].spinning = 0;
        c->mc[m].t = c->now;
    }
    for (int i = 0; i < c->M * c->G * 2; i++) {
        c->nic[i].n = 0;
        c->nic[i].v = 0;
        c->nic[i].t = c->now;
    }
    for (int i = 0; i < c->nres; i++) {
        halo_sim_res_set(c, i, INFINITY);
    }
    for (int r = 0; r < c->P; r++) {
        sim_rank *R = &c->rk[r];
        int machine = R->machine, nic = R->nic;
        memset(R, 0, sizeof *R);
        R->machine = machine;
        R->nic = nic;
        R->free_at = c->now;
        for (int i = 0; i < c->NT; i++) {
            sim_thread *t = &c->th[r * c->NT + i];
            t->busy = 0;
            t->push_wait = 0;
            t->spinning = 0;
            t->wake = 0;
            t->cpu_end = c->now; /* an epoch starts every thread off its barrier */
            t->idle = t->idle_mark[0] = t->idle_mark[1] = 0;
            t->next = i >= TH_SAMPLER ? i - TH_SAMPLER : 0;
        }
        try_rank(c, r);
    }
}

int halo_sim_cost_batch(halo_sim_cost *c, int64_t batch, const halo_sim_work *w)
{
    if (c->ending) {
        return halo_errorf(HALO_EUSAGE, "sim cost: batch %lld after the epoch ended",
                           (long long)batch);
    }
    if (batch != c->added) {
        return halo_errorf(HALO_EUSAGE, "sim cost: batch %lld given, batch %lld expected",
                           (long long)batch, (long long)c->added);
    }
    int L = w[0].layers;
    for (int q = 0; q < c->P; q++) {
        if (w[q].layers != L || L < 1 || L > HALO_MAX_LAYERS) {
            return halo_errorf(HALO_EUSAGE, "sim cost: batch %lld: rank %d has %d layers, rank 0 "
                               "%d (want 1..%d, equal)", (long long)batch, q, w[q].layers, L,
                               HALO_MAX_LAYERS);
        }
    }
    brec *r = rec_take(c, batch);
    r->layers = L;
    halo_sim_cost_build_batch(c, r, w);
    c->added++;
    c->stalled = 0;
    for (int q = 0; q < c->P; q++) {
        if (c->rk[q].stalled) {
            c->rk[q].stalled = 0;
            try_rank(c, q);
        }
    }
    run_events(c);
    return 0;
}

void halo_sim_cost_epoch_end(halo_sim_cost *c, halo_epoch_stats *out)
{
    c->ending = 1;
    c->stalled = 0;
    for (int q = 0; q < c->P; q++) {
        if (c->rk[q].stalled) {
            c->rk[q].stalled = 0;
            try_rank(c, q);
        }
    }
    run_events(c);
    double last = c->t0;
    for (int q = 0; q < c->P; q++) {
        const sim_rank *R = &c->rk[q];
        double end = R->released > 0 ? R->free_at : c->t0;
        out[q].time_s = end - c->t0;
        out[q].sample_s = R->sample_s;
        out[q].fetch_s = R->fetch_s;
        out[q].copy_s = R->copy_s;
        out[q].compute_s = R->compute_s;
        out[q].allreduce_s = R->allreduce_s;
        out[q].wait_s = R->wait_s;
        out[q].sample_cpu_s = R->cpu_s[0];
        out[q].fetch_cpu_s = R->cpu_s[1];
        out[q].compute_cpu_s = R->cpu_s[2];
        last = end > last ? end : last;
    }
    c->tnext = last;
}
