/* CPU back end, the thread pool: a fixed set of workers that run the tasks of one parallel loop
 * at a time (the caller runs tasks too), the fixed row partitions of the kernels, and the
 * context's scratch buffer. */
#include "model/ops_cpu_impl.h"

#include "core/err.h"
#include "core/mem.h"

#include <string.h>

/* ---------------------------------------------------------------- thread pool */

static void pool_drain(cpu_pool *p)
{
    for (;;) {
        long long t = atomic_fetch_add(&p->next, 1);
        if (t >= p->ntasks) {
            return;
        }
        p->fn(p->arg, t);
    }
}

static void *pool_worker(void *arg)
{
    cpu_pool *p = arg;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->stop) {
            pthread_cond_wait(&p->cv_start, &p->mu);
        }
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0) {
            pthread_cond_signal(&p->cv_done);
        }
        pthread_mutex_unlock(&p->mu);
    }
}

int halo_ops_cpu_pool_start(cpu_pool *p, int threads)
{
    memset(p, 0, sizeof *p);
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_start, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    atomic_init(&p->next, 0);
    p->tid = HALO_NEW(pthread_t, threads > 1 ? threads - 1 : 1);
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&p->tid[i], NULL, pool_worker, p) != 0) {
            p->threads = i + 1;
            return halo_errorf(HALO_ESTATE, "model cpu: cannot start thread %d", i + 1);
        }
    }
    return 0;
}

void halo_ops_cpu_pool_stop(cpu_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv_start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->threads - 1; i++) {
        pthread_join(p->tid[i], NULL);
    }
    halo_free(p->tid);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_start);
    pthread_cond_destroy(&p->cv_done);
}

/* Runs fn(arg, 0..ntasks-1) on the pool and returns when all tasks are done. */
void halo_ops_cpu_pool_run(cpu_pool *p, int64_t ntasks, cpu_task_fn fn, void *arg)
{
    if (ntasks <= 0) {
        return;
    }
    if (p->threads <= 1 || ntasks == 1) {
        for (int64_t t = 0; t < ntasks; t++) {
            fn(arg, t);
        }
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->ntasks = ntasks;
    atomic_store(&p->next, 0);
    p->active = p->threads - 1;
    p->gen++;
    pthread_cond_broadcast(&p->cv_start);
    pthread_mutex_unlock(&p->mu);
    pool_drain(p);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) {
        pthread_cond_wait(&p->cv_done, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

/* Rows per task so that a task touches about 16K floats (at least one row). */
int64_t halo_ops_cpu_rows_per_task(int cols)
{
    int64_t r = 16384 / (cols > 0 ? cols : 1);
    return r > 0 ? r : 1;
}

int64_t halo_ops_cpu_ntasks(int64_t rows, int64_t per)
{
    return (rows + per - 1) / per;
}

void *halo_ops_cpu_scratch(halo_ops_ctx *ctx, size_t bytes)
{
    if (bytes > ctx->scratch_cap) {
        halo_free(ctx->scratch);
        ctx->scratch_cap = bytes + bytes / 4;
        ctx->scratch = halo_malloc(ctx->scratch_cap);
    }
    return ctx->scratch;
}
