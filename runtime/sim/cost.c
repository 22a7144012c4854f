/* The simulator's time model: the counted work of every rank and batch becomes stage times on a
 * discrete-event timeline with processor-shared cores, NICs shared by the trainers of a machine,
 * collective exchanges and a (hierarchical) ring allreduce. docs/sim-model.md says it in words. */
#include "sim/cost.h"

#include "comm/comm.h" /* halo_comm_piece_rows only (inline; no MPI) */
#include "core/err.h"
#include "core/mem.h"

#include <math.h>
#include <string.h>

/* Bytes the optimiser touches per parameter: it reads p, g, m, v and writes p, m, v. */
#define ADAM_BYTES 28.0
/* Bytes of one id in a row request (int32). */
#define ID_BYTES 4
/* Bytes of an embedding gradient record's header (runtime/embed: key, id, position). */
#define EMBED_REC_HDR 16.0
/* Bytes of one CSR offset and of one edge's source number in a block (int64, int32). */
#define INDPTR_BYTES 8
#define INDEX_BYTES 4
/* Cost of one gathered float in GEMM flops when the model picks a layer's path (model.c). */
#define GATHER_COST 32.0
/* Most exchanges of one batch: request + reply per layer, ids + rows, the allreduce, then the
 * embeddings' ids, rows and gradients. */
#define MAX_XCHG (2 * HALO_MAX_LAYERS + 6)
/* Most steps of one stage's program (sampling: 4 per layer). */
#define MAX_STEPS (4 * HALO_MAX_LAYERS + 4)

/* Stages, in the order of a batch; their names are the runtime's timeline names. */
enum { STAGE_SAMPLE, STAGE_FETCH, STAGE_COPY, STAGE_COMPUTE, STAGE_ALLREDUCE, NSTAGES };
static const char *const stage_name[NSTAGES] = {"sample", "fetch", "copy", "compute",
                                                "allreduce"};

/* Threads of a rank: the trainer, the fetch thread, then the sampling threads. */
enum { TH_TRAINER = 0, TH_FETCH = 1, TH_SAMPLER = 2 };

/* Kinds of a stage program's steps. */
enum { STEP_CPU, STEP_DELAY, STEP_XCHG };

/* Events of the timeline (the ends of CPU tasks and transfers are kept apart, one key per
 * machine and NIC resource). */
enum { EV_THREAD, EV_XSTART, EV_ARMID };

/* One step of a stage program. */
typedef struct step {
    int kind;    /* STEP_* */
    int threads; /* STEP_CPU: threads the work is spread over */
    int xi;      /* STEP_XCHG: exchange number within the batch */
    double work; /* STEP_CPU: core-seconds; STEP_DELAY: seconds */
} step;

/* One rank's part in one exchange (or the allreduce) of one batch. */
typedef struct xrank {
    double out;     /* bytes it sends through its NIC group (peers on other machines) */
    double in;      /* bytes it receives through its NIC group */
    double intra;   /* seconds of its slowest flow inside the machine (shm), 0 when none */
    double netem;   /* emulated-network floor from its arrival, seconds (0: none) */
    double crit;    /* CPU work the exchange waits for everywhere (the owner's gather) */
    double own;     /* CPU work only this rank waits for (local sampling, copies, messages) */
    double arrive;  /* when it reached the exchange */
    double own_end; /* when its CPU work ended (-1 while running) */
    int thread;     /* global number of the thread that is in the exchange */
} xrank;

/* An exchange (or the allreduce) of one batch, collective over all ranks. */
typedef struct xchg {
    int arrived;     /* ranks that reached it */
    int outstanding; /* flows and critical CPU tasks not finished */
    int done;        /* the transfer has ended on every rank */
    int rows;        /* the rows exchange (no count all-to-all) */
    double amax;     /* latest arrival */
    double tend;     /* end of the transfer (flows + latency, shm flows, critical CPU) */
} xchg;

/* What one rank computes in one batch outside the exchanges, in seconds or core-seconds. */
typedef struct rwork {
    double serve[HALO_MAX_LAYERS]; /* sampling the nodes peers asked for, layer l */
    double build[HALO_MAX_LAYERS]; /* merging the neighbours and building block l */
    double fetch_pre;              /* cache lookups, the policy hook, copying hits */
    double copy;                   /* host-to-device copy (GPU) */
    double fb;                     /* forward + backward: GEMMs and aggregation */
    double overhead;               /* fixed per step */
    double adam;                   /* optimiser (GPU: with its two PCIe copies) */
    double embed_apply;            /* sparse Adam of the embedding rows it owns (host) */
} rwork;

/* Everything the model keeps of one batch while some rank still works on it. */
typedef struct brec {
    int64_t batch;      /* batch number */
    int layers;         /* L */
    int released;       /* ranks that finished the batch */
    xchg x[MAX_XCHG];   /* exchanges: 2i request / 2i+1 reply of layer L-1-i, 2L ids, 2L+1
                           rows, 2L+2 the allreduce, 2L+3 embedding ids, 2L+4 their rows,
                           2L+5 their gradients */
    int embed;          /* the batch gathers and updates embeddings */
    xrank *xr;          /* [MAX_XCHG * P] ranks' parts, exchange-major */
    rwork *rw;          /* [P] */
    unsigned char *sampled; /* [P] the rank's sampling of this batch ended */
} brec;

/* A simulated thread. */
typedef struct sim_thread {
    int rank;              /* its rank */
    int idx;               /* TH_TRAINER, TH_FETCH, TH_SAMPLER + j */
    int busy;              /* running a stage */
    int stage;             /* STAGE_* it runs */
    int64_t batch;         /* batch of that stage */
    int pc;                /* next step */
    int nsteps;            /* steps of the program */
    step steps[MAX_STEPS]; /* the stage's program */
    double start;          /* when the stage began */
    double ar_end;         /* allreduce stage: when the allreduce ended (Adam follows) */
    int phase;             /* in an exchange: 0 critical CPU, 1 own CPU */
    int64_t next;          /* next batch it takes */
    int push_wait;         /* sampler: its batch is sampled, waiting for its turn to pass on */
} sim_thread;

/* A simulated rank: its pipeline's counters and its epoch's times. */
typedef struct sim_rank {
    int machine;       /* machine it runs on */
    int nic;           /* index of its NIC group's egress resource (ingress = nic + 1) */
    int stalled;       /* a thread wants a batch not added yet */
    int64_t pushed;    /* batches sampled and handed to the fetch stage, in order */
    int64_t fetched;   /* batches fetched */
    int64_t released;  /* batches computed (their slots are free again) */
    double free_at;    /* when the trainer last became free */
    double sample_s;   /* stage sums of the epoch */
    double fetch_s;    /* ... */
    double copy_s;     /* ... */
    double compute_s;  /* forward/backward + Adam */
    double allreduce_s;/* the allreduce, waiting for the slowest rank included */
    double wait_s;     /* trainer waiting for the pipeline (depth > 0) */
} sim_rank;

/* A CPU-bound task on a machine. */
typedef struct cpu_task {
    double fin;  /* virtual time at which it ends */
    int threads; /* threads it runs on */
    int thread;  /* global number of the simulated thread that waits for it */
} cpu_task;

/* A machine's cores, processor-shared: with n threads running each advances at min(1,
 * cores / n); virtual time v counts the work one of them has done. */
typedef struct sim_machine {
    double v;       /* virtual time (core-seconds per thread) */
    double t;       /* real time v was computed at */
    int running;    /* threads of all its tasks */
    int n;          /* tasks */
    int cap;        /* capacity of task */
    cpu_task *task; /* [cap] */
} sim_machine;

/* One direction of a NIC group, processor-shared among its transfers. */
typedef struct flow {
    double fin;    /* virtual bytes at which it ends */
    int64_t batch; /* batch of its exchange */
    int xi;        /* the exchange */
} flow;

typedef struct sim_nic {
    double cap;  /* bytes/s */
    double v;    /* virtual bytes moved by each active transfer */
    double t;    /* real time v was computed at */
    int n;       /* transfers */
    int ncap;    /* capacity of f */
    flow *f;     /* [ncap] */
} sim_nic;

/* A timeline event. */
typedef struct sim_event {
    double t;      /* when */
    uint64_t seq;  /* order among equal times */
    int kind;      /* EV_* */
    int id;        /* thread or exchange number */
    int64_t batch; /* EV_XSTART / EV_ARMID */
} sim_event;

struct halo_sim_cost {
    halo_sim_cost_opts o;    /* options (profile copied below) */
    halo_sim_profile pf;     /* the cluster */
    int P;                   /* ranks */
    int M;                   /* machines */
    int T;                   /* trainers per machine */
    int G;                   /* NIC groups per machine: min(nics, T) */
    int depth;               /* pipeline depth */
    int S;                   /* sampling threads (depth > 0), capped at the depth */
    int NT;                  /* threads per rank */
    int gpu;                 /* the profile's trainers compute on GPUs */
    int kthreads;            /* CPU compute threads of a trainer: cores / trainers */
    int netem;               /* emulated network on */
    double t_counts;         /* the count all-to-all of an exchange */
    double ar_d1;            /* allreduce: reduce-scatter (and all-gather) inside a machine */
    double ar_bytes;         /* allreduce: bytes each rank sends (and receives) across machines */
    double ar_lat;           /* allreduce: latency of the ring across machines */
    double ar_netem;         /* allreduce: the runtime's netem charge */
    int64_t piece_rb;        /* row bytes the piece table is for */
    int piece_k;             /* pieces before they reach HALO_ROWS_PIECE_MAX */
    int64_t piece_cum[24];   /* rows in the first k + 1 pieces */
    int64_t piece_last;      /* rows of a full-size piece */
    sim_rank *rk;            /* [P] */
    sim_thread *th;          /* [P * NT] */
    sim_machine *mc;         /* [M] */
    sim_nic *nic;            /* [M * G * 2]: (machine, group) egress, then ingress */
    brec **ring;             /* [ring_cap] batch b at b % ring_cap */
    int64_t ring_cap;        /* its capacity */
    brec **pool;             /* free batch records */
    int npool;               /* in pool */
    int pool_cap;            /* capacity of pool */
    int64_t added;           /* batches of the epoch added */
    int64_t freed;           /* batches of the epoch every rank finished */
    int ending;              /* epoch_end: no more batches */
    int epoch;               /* current epoch */
    double t0;               /* the epoch's start */
    double tnext;            /* when the next epoch starts (end of the slowest rank) */
    sim_event *heap;         /* event heap */
    int64_t nheap;           /* events in it */
    int64_t heap_cap;        /* capacity */
    uint64_t seq;            /* events scheduled so far */
    int nres;                /* resources: machines, then NIC resources */
    double *rkey;            /* [nres] when each resource's next task or transfer ends (inf) */
    int *rheap;              /* [nres] min-heap of resources by rkey */
    int *rpos;               /* [nres] position of each resource in rheap */
    double now;              /* current time */
    int stalled;             /* a thread waits for a batch not added: stop at stall_t */
    double stall_t;          /* time of the stall */
    int *done;               /* [P * NT] scratch: threads whose CPU task ended */
    double *s_out, *s_in;    /* [P] scratch: inter-machine bytes out / in of an exchange */
    double *s_intra;         /* [P] its largest shm flow */
    double *s_tot_out;       /* [P] all bytes out */
    double *s_tot_in;        /* [P] all bytes in */
    double *s_msg_out;       /* [P] messages sent */
    double *s_msg_in;        /* [P] messages received */
};

/* ---------------------------------------------------------------- flops */

/* Whether block l of w goes lin-first (model.c's choose_path on the AUTO path: the cheaper of
 * the two orders, counting forward and backward, the input gradient only above layer 0). */
static int lin_first(const halo_sim_work *w, int l, double in, double out)
{
    double e = (double)w->num_edges[l], nd = (double)w->num_dst[l], ns = (double)w->num_src[l];
    double g = GATHER_COST, mm = 2.0 * in * out;
    double agg = g * e * in + 2.0 * nd * mm + 2.0 * nd * mm;
    double lin = g * e * out + (ns + nd) * mm + g * e * out + (ns + nd) * mm;
    if (l > 0) {
        agg += 2.0 * nd * mm + g * e * in;
        lin += (ns + nd) * mm;
    }
    return lin < agg;
}

/* Width of the input of layer l (and l + 1 for its output). */
static double layer_dim(int l, int layers, int in_dim, int hidden, int classes)
{
    return l == 0 ? in_dim : l == layers ? classes : hidden;
}

/* GEMM flops (2 per multiply-add) and gathered floats of the aggregation of block l, forward
 * and backward, as model.c computes them: agg-first multiplies [h_dst | mean] (nd x 2in) by W
 * (2in x out) forward, for dW and for dX; lin-first multiplies all ns + nd rows by one half of
 * W each way. */
static void layer_cost(const halo_sim_work *w, int l, int in_dim, int hidden, int classes,
                       double *flops, double *floats)
{
    double in = layer_dim(l, w->layers, in_dim, hidden, classes);
    double out = layer_dim(l + 1, w->layers, in_dim, hidden, classes);
    double e = (double)w->num_edges[l], nd = (double)w->num_dst[l], ns = (double)w->num_src[l];
    double dx = l > 0 ? 1.0 : 0.0;
    if (lin_first(w, l, in, out)) {
        *flops = 2.0 * (ns + nd) * in * out * (2.0 + dx);
        *floats = 2.0 * e * out;
    } else {
        *flops = 4.0 * nd * in * out * (2.0 + dx);
        *floats = e * in * (1.0 + dx);
    }
}

double halo_sim_cost_flops_rgcn(const halo_sim_work *w, int in_dim, int hidden, int classes,
                                int relations, int bases)
{
    double sum = 0, R = relations;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        double in = layer_dim(l, w->layers, in_dim, hidden, classes);
        double out = layer_dim(l + 1, w->layers, in_dim, hidden, classes);
        double dx = l > 0 || w->embed_rows != NULL ? 1.0 : 0.0;
        sum += 2.0 * (double)w->num_dst[l] * in * out * (1.0 + R) * (2.0 + dx);
        if (bases > 0) {
            sum += 4.0 * R * bases * in * out;
        }
    }
    return sum;
}

/* Bytes RGCN's per-relation means gather (4 per float, forward, and backward where dX is
 * computed). */
static double agg_bytes_rgcn(const halo_sim_work *w, int in_dim, int hidden, int classes)
{
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        double in = layer_dim(l, w->layers, in_dim, hidden, classes);
        double dx = l > 0 || w->embed_rows != NULL ? 1.0 : 0.0;
        sum += 4.0 * (double)w->num_edges[l] * in * (1.0 + dx);
    }
    return sum;
}

double halo_sim_cost_flops(const halo_sim_work *w, int in_dim, int hidden, int classes)
{
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        double f, g;
        layer_cost(w, l, in_dim, hidden, classes, &f, &g);
        sum += f;
    }
    return sum;
}

/* Bytes the aggregation gathers in one step (4 per gathered float). */
static double agg_bytes(const halo_sim_work *w, int in_dim, int hidden, int classes)
{
    double sum = 0;
    for (int l = 0; l < w->layers && l < HALO_MAX_LAYERS; l++) {
        double f, g;
        layer_cost(w, l, in_dim, hidden, classes, &f, &g);
        sum += 4.0 * g;
    }
    return sum;
}

/* ---------------------------------------------------------------- events */

/* Event order: by time, then by when they were scheduled (deterministic). */
static int ev_before(const sim_event *a, const sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Schedules an event (a binary heap). */
static void ev_push(halo_sim_cost *c, double t, int kind, int id, int64_t batch)
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
static sim_event ev_pop(halo_sim_cost *c)
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
static void res_set(halo_sim_cost *c, int i, double t)
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

/* ---------------------------------------------------------------- cores */

/* Cores per running thread, at most one. More trainer processes than cores cost more than
 * their share (switches between address spaces, caches refilled): the profile's
 * oversub_penalty per process beyond the cores, relative to the cores; threads of one process
 * share its caches and are not counted. */
static double cpu_rate(const halo_sim_cost *c, const sim_machine *m)
{
    double excess = c->pf.trainers > c->pf.cores
                        ? (double)(c->pf.trainers - c->pf.cores) / c->pf.cores
                        : 0.0;
    double share = m->running > c->pf.cores ? (double)c->pf.cores / m->running : 1.0;
    return share / (1.0 + c->pf.oversub_penalty * excess);
}

/* Brings the machine's virtual time up to now. */
static void cpu_advance(halo_sim_cost *c, sim_machine *m)
{
    if (m->running > 0) {
        m->v += (c->now - m->t) * cpu_rate(c, m);
    }
    m->t = c->now;
}

/* Sets the time of the machine's next task end. */
static void cpu_resched(halo_sim_cost *c, int mi)
{
    sim_machine *m = &c->mc[mi];
    if (m->n == 0) {
        res_set(c, mi, INFINITY);
        return;
    }
    double fmin = m->task[0].fin;
    for (int i = 1; i < m->n; i++) {
        fmin = m->task[i].fin < fmin ? m->task[i].fin : fmin;
    }
    double dt = (fmin - m->v) / cpu_rate(c, m);
    res_set(c, mi, c->now + (dt > 0 ? dt : 0));
}

/* Starts `work` core-seconds on `threads` threads for simulated thread tid. */
static void cpu_start(halo_sim_cost *c, int tid, double work, int threads)
{
    int mi = c->rk[c->th[tid].rank].machine;
    sim_machine *m = &c->mc[mi];
    cpu_advance(c, m);
    if (m->n == m->cap) {
        m->cap = m->cap > 0 ? 2 * m->cap : 16;
        m->task = halo_realloc(m->task, (size_t)m->cap * sizeof *m->task);
    }
    m->task[m->n++] = (cpu_task){m->v + work / threads, threads, tid};
    m->running += threads;
    cpu_resched(c, mi);
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
        res_set(c, c->M + ni, INFINITY);
        return;
    }
    double fmin = n->f[0].fin;
    for (int i = 1; i < n->n; i++) {
        fmin = n->f[i].fin < fmin ? n->f[i].fin : fmin;
    }
    double dt = (fmin - n->v) * n->n / n->cap;
    res_set(c, c->M + ni, c->now + (dt > 0 ? dt : 0));
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

/* Continues thread tid after its current step at time t (>= now). */
static void resume_at(halo_sim_cost *c, int tid, double t)
{
    c->th[tid].pc++;
    ev_push(c, t > c->now ? t : c->now, EV_THREAD, tid, 0);
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
            cpu_start(c, xr->thread, xr->crit, 1);
            x->outstanding++;
        } else if (xr->own > 0) {
            t->phase = 1;
            cpu_start(c, xr->thread, xr->own, 1);
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
        ev_push(c, c->now + c->ar_d1, EV_ARMID, 0, r->batch);
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
        if (xr->arrive + xr->netem > t) {
            t = xr->arrive + xr->netem;
        }
        if (ar) {
            c->th[xr->thread].ar_end = t;
        }
        resume_at(c, xr->thread, t);
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

/* Thread tid reaches exchange xi of its batch (now). */
static void xchg_arrive(halo_sim_cost *c, int tid, int xi)
{
    sim_thread *t = &c->th[tid];
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
        ev_push(c, c->now + c->t_counts, EV_XSTART, xi, r->batch);
    } else {
        xchg_start(c, r, xi);
    }
}

/* Thread tid's CPU task ended (now). */
static void cpu_done(halo_sim_cost *c, int tid)
{
    sim_thread *t = &c->th[tid];
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
            cpu_start(c, tid, xr->own, 1);
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
        double e = x->tend > c->now ? x->tend : c->now;
        if (xr->arrive + xr->netem > e) {
            e = xr->arrive + xr->netem;
        }
        resume_at(c, tid, e);
    }
}

/* ---------------------------------------------------------------- stages and the pipeline */

static void stage_start(halo_sim_cost *c, int tid, int stage, int64_t b);
static void try_rank(halo_sim_cost *c, int rank);

static void add_step(sim_thread *t, int kind, double work, int threads, int xi)
{
    t->steps[t->nsteps++] = (step){kind, threads, xi, work};
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
            add_step(t, STEP_CPU, w->overhead, 1, 0);
        } else {
            add_step(t, STEP_DELAY, w->fb + w->overhead, 1, 0);
        }
        break;
    default: /* STAGE_ALLREDUCE */
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
    while (t->pc < t->nsteps) {
        const step *s = &t->steps[t->pc];
        if (s->kind == STEP_XCHG) {
            xchg_arrive(c, tid, s->xi);
            return;
        }
        if (s->work > 0) {
            if (s->kind == STEP_CPU) {
                cpu_start(c, tid, s->work, s->threads);
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

/* The machine's earliest tasks ended (now): they leave, then their threads go on. */
static void cpu_event(halo_sim_cost *c, int mi)
{
    sim_machine *m = &c->mc[mi];
    double fmin = m->task[0].fin;
    for (int i = 1; i < m->n; i++) {
        fmin = m->task[i].fin < fmin ? m->task[i].fin : fmin;
    }
    m->v = fmin; /* exact: nothing changed since this end was computed */
    m->t = c->now;
    double lim = fmin + 1e-13 * fabs(fmin);
    int nd = 0;
    for (int i = 0; i < m->n;) {
        if (m->task[i].fin <= lim) {
            c->done[nd++] = m->task[i].thread;
            m->running -= m->task[i].threads;
            m->task[i] = m->task[--m->n];
        } else {
            i++;
        }
    }
    cpu_resched(c, mi);
    for (int i = 0; i < nd; i++) {
        cpu_done(c, c->done[i]);
    }
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
        sim_event e = ev_pop(c);
        switch (e.kind) {
        case EV_THREAD:
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
    return c->pf.netem_lat_s + (c->pf.netem_bw > 0 ? bytes / c->pf.netem_bw : 0);
}

/* Stores the summed flows into exchange xi's per-rank parts; message costs go to own CPU. */
static void xsum_store(halo_sim_cost *c, brec *r, int xi)
{
    const halo_sim_profile *p = &c->pf;
    for (int q = 0; q < c->P; q++) {
        xrank *xr = &r->xr[(size_t)xi * c->P + q];
        xr->out = c->s_out[q];
        xr->in = c->s_in[q];
        xr->intra = c->s_intra[q] > 0 ? p->shm_lat_s + c->s_intra[q] / p->shm_bw : 0;
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

/* Turns every rank's counted work of one batch into the record's stage works and exchanges. */
static void build_batch(halo_sim_cost *c, brec *r, const halo_sim_work *w)
{
    const halo_sim_profile *p = &c->pf;
    int P = c->P, L = r->layers;
    for (int q = 0; q < P; q++) {
        const halo_sim_work *a = &w[q];
        rwork *rw = &r->rw[q];
        double rb = (double)a->row_bytes;
        for (int l = 0; l < L; l++) {
            rw->serve[l] = (double)a->served_nodes[l] * p->sample_node_s +
                           (double)a->served_edges[l] * p->sample_edge_s;
            rw->build[l] = (double)a->num_src[l] * p->block_node_s +
                           (double)a->num_edges[l] * INDEX_BYTES / p->memcpy_bw;
        }
        rw->fetch_pre = (double)a->lookups * p->lookup_node_s + (double)a->hook_calls * p->hook_s +
                        (double)a->hits * rb / p->gather_bw;
        double params = (double)c->o.grad_floats;
        if (c->gpu) {
            double bytes = (double)a->input_nodes * rb;
            for (int l = 0; l < L; l++) {
                bytes += ((double)a->num_dst[l] + 1) * INDPTR_BYTES +
                         (double)a->num_edges[l] * INDEX_BYTES;
            }
            double bw = p->pinned ? p->pcie_bw_pinned : p->pcie_bw_pageable;
            rw->copy = (1 + 2 * L) * p->pcie_lat_s + bytes / bw;
            rw->adam = params * ADAM_BYTES / p->adam_bw +
                       2 * (p->pcie_lat_s + params * sizeof(float) / p->pcie_bw_pinned);
        } else {
            rw->copy = 0;
            rw->adam = params * ADAM_BYTES / p->adam_bw;
        }
        if (c->o.relations > 0) {
            rw->fb = halo_sim_cost_flops_rgcn(a, c->o.in_dim, c->o.hidden, c->o.classes,
                                              c->o.relations, c->o.bases) / p->gemm_flops +
                     agg_bytes_rgcn(a, c->o.in_dim, c->o.hidden, c->o.classes) / p->agg_bw;
        } else {
            rw->fb = halo_sim_cost_flops(a, c->o.in_dim, c->o.hidden, c->o.classes) /
                         p->gemm_flops +
                     agg_bytes(a, c->o.in_dim, c->o.hidden, c->o.classes) / p->agg_bw;
        }
        /* sparse Adam over the rows it owns that the step touched (its own and the ones it
           served): it reads row, gradient and two moments and writes three, on the host */
        double own_rows = a->embed_rows != NULL ? at(a->embed_rows, (size_t)q) : 0;
        rw->embed_apply = (own_rows + (double)a->embed_served) * rb * 7.0 / p->memcpy_bw;
        rw->overhead = p->step_overhead_s;
    }
    /* sampling: layer l = L-1-i, requests then replies */
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
            r->xr[(size_t)(2 * i) * P + q].own += (double)w[q].local_nodes[l] * p->sample_node_s +
                                                 (double)w[q].local_edges[l] * p->sample_edge_s;
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
    /* fetch: ids to the owners, then their rows back */
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
        /* the owner gathers the rows it serves piece by piece as they go (the receivers wait
           for it); the local rows and the scatter of staged replies are this rank's own */
        xr->crit = (double)w[q].served_rows * rb / p->gather_bw +
                   c->s_msg_out[q] * p->msg_overhead_s;
        xr->own = ((double)w[q].local_rows * rb + c->s_tot_in[q]) / p->gather_bw +
                  c->s_msg_in[q] * p->msg_overhead_s;
    }
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
    if (!r->embed) {
        return;
    }
    /* embeddings (runtime/embed): ids to the owners, rows back (the owner copies each row it
       serves; the asker scatters what it received and copies its own rows), then one record
       of 16 bytes + a row per gradient to the owners. Batched exchanges: each starts with the
       count all-to-all. */
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
        xr->crit = (double)w[q].embed_served * rb / p->gather_bw;
        xr->own += (own_rows * rb + c->s_tot_in[q]) / p->gather_bw;
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

/* ---------------------------------------------------------------- API */

int halo_sim_cost_new(const halo_sim_cost_opts *o, halo_sim_cost **out)
{
    *out = NULL;
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
    /* the count all-to-all: log2(P) rounds of one latency */
    c->t_counts = P > 1 ? ceil(log2((double)P)) * (M > 1 ? p->net_lat_s : p->shm_lat_s) : 0;
    double B = (double)o->grad_floats * sizeof(float);
    c->ar_d1 = T > 1 ? (T - 1) * (p->shm_lat_s + p->allreduce_lat_s) +
                           (double)(T - 1) / T * B / p->shm_bw
                     : 0;
    c->ar_bytes = M > 1 ? 2.0 * (M - 1) / M * B / T : 0;
    c->ar_lat = M > 1 ? 2.0 * (M - 1) * (p->net_lat_s + p->allreduce_lat_s) : 0;
    if (c->netem && P > 1) {
        double steps = 2.0 * (P - 1);
        c->ar_netem = steps * p->netem_lat_s +
                      (p->netem_bw > 0 ? B * steps / P / p->netem_bw : 0);
    }
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
        c->mc[m].n = c->mc[m].running = 0;
        c->mc[m].v = 0;
        c->mc[m].t = c->now;
    }
    for (int i = 0; i < c->M * c->G * 2; i++) {
        c->nic[i].n = 0;
        c->nic[i].v = 0;
        c->nic[i].t = c->now;
    }
    for (int i = 0; i < c->nres; i++) {
        res_set(c, i, INFINITY);
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
    build_batch(c, r, w);
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
        last = end > last ? end : last;
    }
    c->tnext = last;
}
