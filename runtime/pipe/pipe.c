/* The pipeline: worker threads per stage, slots that circulate through bounded queues, errors
 * carried on the items, and a shutdown that every rank carries out alike. */
#include "pipe/pipe.h"
#include "pipe/timeline.h"

#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One worker thread. */
typedef struct pipe_worker {
    struct halo_pipe *p; /* its pipeline */
    int stage;           /* stage it serves */
    int thread;          /* its index among the stage's threads */
    pthread_t tid;       /* the thread */
    int started;         /* pthread_create succeeded (must be joined) */
} pipe_worker;

/* Queues: q[0] holds free slots (item seq = the batch the slot will carry), q[s] for s >= 1
 * the items stage s-1 finished, q[nstages] the items ready for the caller. */
struct halo_pipe {
    halo_pipe_opts o;                     /* options as given (names and args are the caller's) */
    int depth;                            /* batches ahead of the caller */
    int nslots;                           /* depth + 1 */
    int threads[HALO_PIPE_MAX_STAGES];    /* threads per stage actually used */
    halo_pipe_item *items;                /* [nslots] */
    halo_pipe_queue *q[HALO_PIPE_MAX_STAGES + 1]; /* see above */
    pipe_worker *workers;                 /* [nworkers] */
    int nworkers;                         /* threads of all stages */
    pthread_mutex_t mu;                   /* guards live */
    int live[HALO_PIPE_MAX_STAGES];       /* running threads per stage; the last one to finish
                                             closes the stage's output queue */
    int64_t next;                         /* next batch the caller gets */
    int64_t next_release;                 /* next batch the caller gives back */
    int primed;                           /* the slots were put into q[0] (first next) */
    int jitter_us;                        /* test delays, 0 = off */
    double wait_s;                        /* caller's time waiting in halo_pipe_next */
};

int halo_pipe_slots(int depth)
{
    return (depth > 0 ? depth : 0) + 1;
}

void halo_pipe_jitter(const halo_pipe *p, int64_t batch, int key)
{
    if (p == NULL || p->jitter_us <= 0) {
        return;
    }
    uint64_t h = halo_hash5(p->o.jitter_seed, HALO_RNG_TEST, (uint64_t)batch, (uint64_t)key,
                            0x6a17);
    halo_sleep_s(1e-6 * (double)(h % (uint64_t)(p->jitter_us + 1)));
}

/* Clears an item for batch b. */
static void item_reset(halo_pipe_item *it, int64_t b)
{
    it->batch = b;
    it->rc = 0;
    it->failed_stage = -1;
    it->msg[0] = '\0';
    for (int s = 0; s < HALO_PIPE_MAX_STAGES; s++) {
        it->start[s] = it->end[s] = it->cpu[s] = it->poll[s] = 0;
        it->thread[s] = 0;
    }
    it->ready = 0;
}

/* Runs stage s of one item on this thread, timing it and keeping its first error with the
 * message of this thread (messages are per thread). */
static void run_stage(halo_pipe *p, int s, int thread, halo_pipe_item *it)
{
    const halo_pipe_stage *st = &p->o.stages[s];
    halo_pipe_jitter(p, it->batch, s);
    it->thread[s] = thread;
    halo_error_clear();
    double c0 = halo_thread_cpu(), w0 = halo_thread_wait_cpu();
    it->start[s] = halo_now();
    int rc = st->run(st->args[thread], it);
    it->end[s] = halo_now();
    it->poll[s] = halo_thread_wait_cpu() - w0;
    it->cpu[s] = (halo_thread_cpu() - c0) - it->poll[s];
    if (rc < 0 && it->rc == 0) {
        const char *m = halo_errmsg();
        it->rc = rc;
        it->failed_stage = s;
        snprintf(it->msg, sizeof it->msg, "%s stage, batch %lld: %s", st->name,
                 (long long)it->batch, m[0] ? m : halo_strerror(rc));
    }
}

/* A worker: batches thread, thread + T, ... of its stage, each taken from the stage's input
 * queue and passed on in batch order. Ends when its batches are done or its input is closed
 * and drained; the stage's last thread closes the output queue, so the end ripples down. */
static void *worker_main(void *arg)
{
    pipe_worker *w = arg;
    halo_pipe *p = w->p;
    int s = w->stage, T = p->threads[s];
    for (int64_t b = w->thread; b < p->o.batches; b += T) {
        void *v = NULL;
        if (halo_pipe_queue_pop(p->q[s], b, &v) != 0) {
            break;
        }
        halo_pipe_item *it = v;
        if (s == 0) {
            item_reset(it, b);
        }
        run_stage(p, s, w->thread, it);
        if (s == p->o.nstages - 1) {
            it->ready = halo_now();
        }
        if (halo_pipe_queue_push(p->q[s + 1], b, it) != 0) {
            break; /* closed under us: only when the start failed */
        }
    }
    pthread_mutex_lock(&p->mu);
    if (--p->live[s] == 0) {
        halo_pipe_queue_close(p->q[s + 1]);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int check_opts(const halo_pipe_opts *o)
{
    if (o->depth < 0 || o->depth > HALO_PIPE_MAX_DEPTH) {
        return halo_errorf(HALO_EUSAGE, "pipe: depth %d is outside 0..%d", o->depth,
                           HALO_PIPE_MAX_DEPTH);
    }
    if (o->nstages < 1 || o->nstages > HALO_PIPE_MAX_STAGES) {
        return halo_errorf(HALO_EUSAGE, "pipe: %d stages, expected 1..%d", o->nstages,
                           HALO_PIPE_MAX_STAGES);
    }
    if (o->batches < 0 || o->queue_len < 0 || o->slots == NULL) {
        return halo_errorf(HALO_EUSAGE, "pipe: negative batches or queue length, or no slots");
    }
    for (int s = 0; s < o->nstages; s++) {
        const halo_pipe_stage *st = &o->stages[s];
        if (st->run == NULL || st->args == NULL || st->name == NULL) {
            return halo_errorf(HALO_EUSAGE, "pipe: stage %d has no function, name or args", s);
        }
        if (st->threads < 1 || st->threads > HALO_PIPE_MAX_THREADS) {
            return halo_errorf(HALO_EUSAGE, "pipe: stage %s has %d threads, expected 1..%d",
                               st->name, st->threads, HALO_PIPE_MAX_THREADS);
        }
    }
    return 0;
}

/* Frees a pipeline whose threads are all joined. */
static void pipe_free(halo_pipe *p)
{
    for (int s = 0; s <= HALO_PIPE_MAX_STAGES; s++) {
        halo_pipe_queue_free(p->q[s]);
    }
    pthread_mutex_destroy(&p->mu);
    halo_free(p->workers);
    halo_free(p->items);
    halo_free(p);
}

int halo_pipe_start(const halo_pipe_opts *o, halo_pipe **out)
{
    *out = NULL;
    HALO_CHECK(check_opts(o));
    halo_pipe *p = HALO_NEW(halo_pipe, 1);
    p->o = *o;
    p->depth = o->depth;
    p->nslots = halo_pipe_slots(o->depth);
    p->jitter_us = o->jitter_us;
    if (p->jitter_us <= 0) {
        const char *env = getenv("HALO_PIPE_JITTER_US");
        p->jitter_us = env != NULL ? atoi(env) : 0;
    }
    pthread_mutex_init(&p->mu, NULL);
    p->items = HALO_NEW(halo_pipe_item, p->nslots);
    for (int i = 0; i < p->nslots; i++) {
        p->items[i].data = o->slots[i];
        p->items[i].slot = i;
        item_reset(&p->items[i], -1);
    }
    for (int s = 0; s < o->nstages; s++) {
        int t = o->stages[s].threads;
        p->threads[s] = p->depth > 0 && t > p->depth ? p->depth : t;
    }
    if (p->depth == 0) {
        *out = p;
        return 0;
    }
    int qlen = o->queue_len > 0 ? o->queue_len : p->nslots;
    p->q[0] = halo_pipe_queue_new(p->nslots);
    for (int s = 1; s <= o->nstages; s++) {
        p->q[s] = halo_pipe_queue_new(qlen);
    }
    for (int s = 0; s < o->nstages; s++) {
        p->nworkers += p->threads[s];
    }
    p->workers = HALO_NEW(pipe_worker, p->nworkers);
    int k = 0, rc = 0;
    /* live counts are set before any thread runs: a fast stage must not close its output while
     * its siblings are still being created */
    for (int s = 0; s < o->nstages; s++) {
        p->live[s] = p->threads[s];
    }
    for (int s = 0; s < o->nstages && rc == 0; s++) {
        for (int t = 0; t < p->threads[s] && rc == 0; t++, k++) {
            pipe_worker *w = &p->workers[k];
            w->p = p;
            w->stage = s;
            w->thread = t;
            int e = pthread_create(&w->tid, NULL, worker_main, w);
            if (e != 0) {
                rc = halo_errorf(HALO_ESTATE, "pipe: cannot start a %s thread: %s",
                                 o->stages[s].name, strerror(e));
            } else {
                w->started = 1;
            }
        }
    }
    if (rc < 0) {
        /* threads that never started never close their output: close every queue, so the
         * others see the end, then join them. No slot was handed out, no stage ran. */
        pthread_mutex_lock(&p->mu);
        for (int s = 0; s <= o->nstages; s++) {
            halo_pipe_queue_close(p->q[s]);
        }
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->nworkers; i++) {
            if (p->workers[i].started) {
                pthread_join(p->workers[i].tid, NULL);
            }
        }
        pipe_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int halo_pipe_next(halo_pipe *p, halo_pipe_item **out)
{
    if (p->next >= p->o.batches) {
        return 1;
    }
    halo_pipe_item *it;
    if (p->depth == 0) {
        it = &p->items[0];
        item_reset(it, p->next);
        for (int s = 0; s < p->o.nstages; s++) {
            run_stage(p, s, 0, it);
        }
        it->ready = halo_now();
    } else {
        if (!p->primed) {
            /* the workers start here: a caller can agree on the start before any stage runs */
            p->primed = 1;
            for (int i = 0; i < p->nslots; i++) {
                HALO_CHECK(halo_pipe_queue_push(p->q[0], i, &p->items[i]));
            }
        }
        void *v = NULL;
        double t0 = halo_now();
        int rc = halo_pipe_queue_pop(p->q[p->o.nstages], p->next, &v);
        p->wait_s += halo_now() - t0;
        if (rc != 0) {
            return halo_errorf(HALO_ESTATE, "pipe: batch %lld never came out of the pipeline",
                               (long long)p->next);
        }
        it = v;
    }
    p->next++;
    *out = it;
    if (it->rc < 0) {
        return halo_errorf(it->rc, "%s", it->msg);
    }
    return 0;
}

void halo_pipe_release(halo_pipe *p, halo_pipe_item *it)
{
    if (it->batch != p->next_release) {
        /* a release out of order would wait for its turn forever */
        halo_warn("pipe: batch %lld released out of order (expected %lld); ignored",
                  (long long)it->batch, (long long)p->next_release);
        return;
    }
    p->next_release++;
    if (p->depth > 0) {
        /* cannot fail: q[0] is closed only by halo_pipe_close */
        (void)halo_pipe_queue_push(p->q[0], it->batch + p->nslots, it);
    }
}

int halo_pipe_close(halo_pipe *p)
{
    if (p == NULL) {
        return 0;
    }
    int rc = 0;
    if (p->depth > 0) {
        /* no more slots: the workers finish the batches whose slots they have (the same
         * batches on every rank that released the same ones), and stop */
        halo_pipe_queue_close(p->q[0]);
        for (;;) {
            void *v = NULL;
            if (halo_pipe_queue_pop(p->q[p->o.nstages], p->next, &v) != 0) {
                break;
            }
            p->next++;
            halo_pipe_item *it = v;
            if (it->rc < 0 && rc == 0) {
                rc = it->rc; /* the caller's message (its agreed answer) is kept */
            }
        }
        for (int i = 0; i < p->nworkers; i++) {
            if (p->workers[i].started) {
                pthread_join(p->workers[i].tid, NULL);
            }
        }
    }
    pipe_free(p);
    return rc;
}

int halo_pipe_depth(const halo_pipe *p)
{
    return p->depth;
}

int halo_pipe_threads(const halo_pipe *p, int stage)
{
    return stage >= 0 && stage < p->o.nstages ? p->threads[stage] : 0;
}

double halo_pipe_wait_s(const halo_pipe *p)
{
    return p->wait_s;
}

/* Name of stage s (for the timeline). */
static const char *stage_name(const halo_pipe *p, int s)
{
    return p->o.stages[s].name;
}

void halo_timeline_add_item(halo_timeline *tl, const halo_pipe *p, int rank, int epoch,
                            const halo_pipe_item *it)
{
    for (int s = 0; s < p->o.nstages; s++) {
        halo_timeline_add(tl, rank, epoch, it->batch, stage_name(p, s), it->thread[s],
                          it->start[s], it->end[s]);
    }
}
