/* Bounded FIFO between pipeline stages: a ring of pointers under a mutex and two condition
 * variables, with numbered items so that several producers or consumers keep batch order. */
#include "pipe/pipe.h"

#include "core/err.h"
#include "core/mem.h"

#include <pthread.h>

struct halo_pipe_queue {
    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t changed; /* signalled on every push, pop and close */
    void **ring;            /* [cap] items; item seq lives at ring[seq % cap] */
    int cap;                /* capacity (>= 1) */
    int64_t next_push;      /* number of the next item to enter */
    int64_t next_pop;       /* number of the next item to leave (items next_pop..next_push-1
                               are in the ring) */
    int peak;               /* most items held at once */
    int closed;             /* no more pushes */
};

halo_pipe_queue *halo_pipe_queue_new(int capacity)
{
    halo_pipe_queue *q = HALO_NEW(halo_pipe_queue, 1);
    q->cap = capacity > 0 ? capacity : 1;
    q->ring = HALO_NEW(void *, q->cap);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->changed, NULL);
    return q;
}

void halo_pipe_queue_free(halo_pipe_queue *q)
{
    if (q == NULL) {
        return;
    }
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->mu);
    halo_free(q->ring);
    halo_free(q);
}

/* One condition variable for both ends: waiters re-check their own condition after every change
 * (few threads per queue, so the broadcast costs nothing that matters). */
int halo_pipe_queue_push(halo_pipe_queue *q, int64_t seq, void *item)
{
    pthread_mutex_lock(&q->mu);
    while (!q->closed && (q->next_push != seq || q->next_push - q->next_pop >= q->cap)) {
        pthread_cond_wait(&q->changed, &q->mu);
    }
    if (q->closed) {
        pthread_mutex_unlock(&q->mu);
        return halo_errorf(HALO_ESTATE, "pipe: push of item %lld into a closed queue",
                           (long long)seq);
    }
    q->ring[seq % q->cap] = item;
    q->next_push++;
    int len = (int)(q->next_push - q->next_pop);
    if (len > q->peak) {
        q->peak = len;
    }
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int halo_pipe_queue_pop(halo_pipe_queue *q, int64_t seq, void **item)
{
    pthread_mutex_lock(&q->mu);
    /* item seq is in the ring when next_pop <= seq < next_push; it is our turn when
     * next_pop == seq; once closed, an item not pushed yet never will be (an item already
     * taken, seq < next_pop, is a caller's mistake and ends the wait too) */
    while (!(q->next_pop == seq && q->next_push > seq) && !(q->closed && seq >= q->next_push) &&
           seq >= q->next_pop) {
        pthread_cond_wait(&q->changed, &q->mu);
    }
    if (q->next_pop != seq || q->next_push <= seq) {
        pthread_mutex_unlock(&q->mu);
        return 1;
    }
    *item = q->ring[seq % q->cap];
    q->next_pop++;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

void halo_pipe_queue_close(halo_pipe_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);
}

int halo_pipe_queue_len(halo_pipe_queue *q)
{
    pthread_mutex_lock(&q->mu);
    int len = (int)(q->next_push - q->next_pop);
    pthread_mutex_unlock(&q->mu);
    return len;
}

int halo_pipe_queue_peak(halo_pipe_queue *q)
{
    pthread_mutex_lock(&q->mu);
    int peak = q->peak;
    pthread_mutex_unlock(&q->mu);
    return peak;
}
