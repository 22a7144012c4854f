/* Unit tests of runtime/pipe: the ordered bounded queue, the pipeline with fake stages (order,
 * depth, queue length 1, random delays, errors, Lua errors on a worker thread, shutdown) and the
 * timeline file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "pipe/pipe.h"
#include "pipe/timeline.h"
#include "policy/policy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* A random delay of 0..max us keyed by (a, b). */
static void random_delay(uint64_t a, uint64_t b, long max)
{
    sleep_us((long)(halo_hash5(7, HALO_RNG_TEST, a, b, 0) % (uint64_t)(max + 1)));
}

/* ---------------------------------------------------------------- queue */

typedef struct producer {
    halo_pipe_queue *q; /* queue */
    int thread;         /* index */
    int threads;        /* producers */
    int n;              /* items in all */
    int64_t *values;    /* [n] item of each seq */
    int failed;         /* a push failed (no cmocka asserts off the main thread) */
} producer;

static void *produce(void *arg)
{
    producer *pr = arg;
    for (int s = pr->thread; s < pr->n; s += pr->threads) {
        random_delay((uint64_t)s, 1, 50);
        if (halo_pipe_queue_push(pr->q, s, &pr->values[s]) != 0) {
            pr->failed = 1;
        }
    }
    return NULL;
}

static void queue_of_one_delivers_items_in_order_from_many_producers(void **state)
{
    (void)state;
    enum { N = 3000, T = 4 };
    halo_pipe_queue *q = halo_pipe_queue_new(1);
    int64_t *values = HALO_ALLOC(int64_t, N);
    for (int i = 0; i < N; i++) {
        values[i] = 1000 + i;
    }
    producer pr[T];
    pthread_t tid[T];
    for (int t = 0; t < T; t++) {
        pr[t] = (producer){q, t, T, N, values, 0};
        pthread_create(&tid[t], NULL, produce, &pr[t]);
    }
    for (int s = 0; s < N; s++) {
        void *v = NULL;
        assert_int_equal(halo_pipe_queue_pop(q, s, &v), 0);
        assert_int_equal(*(int64_t *)v, 1000 + s);
    }
    for (int t = 0; t < T; t++) {
        pthread_join(tid[t], NULL);
        assert_false(pr[t].failed);
    }
    assert_int_equal(halo_pipe_queue_peak(q), 1);
    assert_int_equal(halo_pipe_queue_len(q), 0);
    halo_pipe_queue_free(q);
    halo_free(values);
}

typedef struct popper {
    halo_pipe_queue *q; /* queue */
    int64_t seq;        /* item to take */
    int rc;             /* what pop returned */
} popper;

static void *pop_one(void *arg)
{
    popper *pp = arg;
    void *v;
    pp->rc = halo_pipe_queue_pop(pp->q, pp->seq, &v);
    return NULL;
}

static void queue_close_ends_waiting_pops_and_refuses_pushes(void **state)
{
    (void)state;
    halo_pipe_queue *q = halo_pipe_queue_new(2);
    int x = 5;
    assert_int_equal(halo_pipe_queue_push(q, 0, &x), 0);
    popper a = {q, 1, 99}, b = {q, 2, 99};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, pop_one, &a);
    pthread_create(&tb, NULL, pop_one, &b);
    sleep_us(20000);
    assert_int_equal(a.rc, 99); /* still waiting: item 0 is at the head, item 1 never came */
    void *v = NULL;
    assert_int_equal(halo_pipe_queue_pop(q, 0, &v), 0);
    assert_ptr_equal(v, &x);
    halo_pipe_queue_close(q);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.rc, 1);
    assert_int_equal(b.rc, 1);
    assert_int_equal(halo_pipe_queue_push(q, 1, &x), HALO_ESTATE);
    halo_pipe_queue_free(q);
}

/* ---------------------------------------------------------------- fake stages */

enum { MAXB = 2500 };

/* What the fake stages share with the test. */
typedef struct fake {
    int64_t batches;          /* batches of the run */
    int depth;                /* depth of the run */
    long delay_us;            /* random delay bound in each stage */
    int fail_stage;           /* stage that fails (-1 none) */
    int64_t fail_batch;       /* at this batch */
    atomic_long released;     /* batches the consumer released */
    atomic_long max_ahead;    /* most batch - released seen when stage 0 began a batch */
    atomic_long calls[3];     /* calls of each stage */
    atomic_long saw_failed;   /* stage 2 calls that saw it->rc < 0 */
    int64_t next_in_order[3]; /* single-thread stages: the batch they expect next */
    int order_ok;             /* single-thread stages saw batches in order */
    int owner_ok;             /* stage 0 thread t only ran batches b % T == t */
    int threads0;             /* threads of stage 0 */
} fake;

/* The per-thread argument of a fake stage. */
typedef struct fake_arg {
    fake *f;    /* shared */
    int stage;  /* 0, 1, 2 */
    int thread; /* index */
} fake_arg;

/* A slot: the value each stage transforms. */
typedef struct fake_slot {
    int64_t v; /* running value */
} fake_slot;

/* Reference: what the three stages make of batch b, computed in one place. */
static int64_t expected_value(int64_t b)
{
    return ((b * 7 + 3) ^ 0x55) * 5 - b;
}

static int fake_stage(void *arg, halo_pipe_item *it)
{
    fake_arg *a = arg;
    fake *f = a->f;
    fake_slot *s = it->data;
    int64_t b = it->batch;
    atomic_fetch_add(&f->calls[a->stage], 1);
    random_delay((uint64_t)b, (uint64_t)a->stage + 10, f->delay_us);
    if (a->stage == 0) {
        long ahead = (long)b - atomic_load(&f->released);
        long m = atomic_load(&f->max_ahead);
        while (ahead > m && !atomic_compare_exchange_weak(&f->max_ahead, &m, ahead)) {
        }
        if (b % f->threads0 != a->thread) {
            f->owner_ok = 0;
        }
        s->v = b * 7 + 3;
    } else {
        if (f->next_in_order[a->stage] != b) {
            f->order_ok = 0;
        }
        f->next_in_order[a->stage] = b + 1;
        if (a->stage == 1) {
            s->v ^= 0x55;
        } else {
            if (it->rc < 0) {
                atomic_fetch_add(&f->saw_failed, 1);
            }
            s->v = s->v * 5 - b;
        }
    }
    if (a->stage == f->fail_stage && b == f->fail_batch) {
        return halo_errorf(HALO_EINPUT, "boom at batch %lld", (long long)b);
    }
    return 0;
}

/* Set-up of a 3-stage fake pipeline. */
typedef struct fake_run {
    fake f;                           /* shared state */
    fake_arg args[3][HALO_PIPE_MAX_THREADS]; /* per thread */
    void *argp[3][HALO_PIPE_MAX_THREADS];    /* pointers to them */
    fake_slot slot[HALO_PIPE_MAX_DEPTH + 1]; /* slots */
    void *slotp[HALO_PIPE_MAX_DEPTH + 1];    /* pointers to them */
    halo_pipe_opts o;                 /* options */
} fake_run;

static void fake_setup(fake_run *r, int depth, int qlen, int threads0, int64_t batches,
                       long delay_us)
{
    memset(r, 0, sizeof *r);
    r->f.batches = batches;
    r->f.depth = depth;
    r->f.delay_us = delay_us;
    r->f.fail_stage = -1;
    r->f.order_ok = 1;
    r->f.owner_ok = 1;
    /* the pipeline caps a stage's threads at the depth; depth 0 runs on the caller's thread */
    r->f.threads0 = depth == 0 ? 1 : threads0 > depth ? depth : threads0;
    for (int s = 0; s < 3; s++) {
        for (int t = 0; t < HALO_PIPE_MAX_THREADS; t++) {
            r->args[s][t] = (fake_arg){&r->f, s, t};
            r->argp[s][t] = &r->args[s][t];
        }
    }
    for (int i = 0; i <= HALO_PIPE_MAX_DEPTH; i++) {
        r->slotp[i] = &r->slot[i];
    }
    static const char *const names[3] = {"sample", "fetch", "copy"};
    r->o.depth = depth;
    r->o.queue_len = qlen;
    r->o.batches = batches;
    r->o.nstages = 3;
    r->o.slots = r->slotp;
    for (int s = 0; s < 3; s++) {
        r->o.stages[s] = (halo_pipe_stage){names[s], fake_stage, s == 0 ? threads0 : 1,
                                           r->argp[s]};
    }
}

/* Consumes every batch, checking values and order; consumer_us: work per batch. */
static void consume_all(fake_run *r, long consumer_us)
{
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&r->o, &p), 0);
    halo_pipe_item *it;
    int64_t b = 0;
    int rc;
    while ((rc = halo_pipe_next(p, &it)) == 0) {
        assert_int_equal(it->batch, b);
        assert_int_equal(((fake_slot *)it->data)->v, expected_value(b));
        assert_true(it->start[0] <= it->end[0] && it->end[0] <= it->start[1]);
        assert_true(it->end[1] <= it->start[2] && it->end[2] <= it->ready);
        random_delay((uint64_t)b, 99, consumer_us);
        atomic_fetch_add(&r->f.released, 1);
        halo_pipe_release(p, it);
        b++;
    }
    assert_int_equal(rc, 1);
    assert_int_equal(b, r->f.batches);
    assert_int_equal(halo_pipe_close(p), 0);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(atomic_load(&r->f.calls[s]), r->f.batches);
    }
    assert_true(r->f.order_ok);
    assert_true(r->f.owner_ok);
    assert_true(atomic_load(&r->f.max_ahead) <= r->f.depth);
}

static void pipeline_gives_every_batch_once_in_order_at_every_depth(void **state)
{
    (void)state;
    static const int depths[] = {0, 1, 2, 4, 8};
    static const int qlens[] = {1, 0};
    static const int threads[] = {1, 3};
    fake_run *r = HALO_NEW(fake_run, 1);
    for (size_t d = 0; d < 5; d++) {
        for (size_t q = 0; q < 2; q++) {
            for (size_t t = 0; t < 2; t++) {
                fake_setup(r, depths[d], qlens[q], threads[t], 600, 20);
                consume_all(r, 20);
            }
        }
    }
    halo_free(r);
}

static void pipeline_runs_ahead_by_exactly_its_depth(void **state)
{
    (void)state;
    fake_run *r = HALO_NEW(fake_run, 1);
    static const int depths[] = {1, 2, 4};
    for (size_t d = 0; d < 3; d++) {
        /* a slow consumer: the workers fill every slot they are allowed */
        fake_setup(r, depths[d], 1, 2, 60, 0);
        consume_all(r, 0);
        fake_setup(r, depths[d], 1, 2, 40, 0);
        halo_pipe *p;
        assert_int_equal(halo_pipe_start(&r->o, &p), 0);
        halo_pipe_item *it;
        while (halo_pipe_next(p, &it) == 0) {
            sleep_us(3000);
            atomic_fetch_add(&r->f.released, 1);
            halo_pipe_release(p, it);
        }
        assert_int_equal(halo_pipe_close(p), 0);
        assert_int_equal(atomic_load(&r->f.max_ahead), depths[d]);
    }
    halo_free(r);
}

static void pipeline_of_tiny_batches_survives_random_delays_everywhere(void **state)
{
    (void)state;
    fake_run *r = HALO_NEW(fake_run, 1);
    for (int rep = 0; rep < 4; rep++) {
        fake_setup(r, 1 + rep * 2, 1, 1 + rep, MAXB, 8);
        r->o.jitter_us = 10; /* the pipeline's own delays too */
        r->o.jitter_seed = (uint64_t)rep;
        consume_all(r, 8);
    }
    halo_free(r);
}

/* Runs with a failing stage; the caller stops at the failing batch as a trainer would. */
static void run_failing(fake_run *r, int depth, int stage, int64_t fail_batch)
{
    fake_setup(r, depth, 1, 2, 200, 5);
    r->f.fail_stage = stage;
    r->f.fail_batch = fail_batch;
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&r->o, &p), 0);
    halo_pipe_item *it;
    int64_t b = 0;
    int rc;
    while ((rc = halo_pipe_next(p, &it)) == 0) {
        atomic_fetch_add(&r->f.released, 1);
        halo_pipe_release(p, it);
        b++;
    }
    assert_int_equal(rc, HALO_EINPUT);
    assert_int_equal(b, fail_batch);
    assert_int_equal(it->batch, fail_batch);
    assert_int_equal(it->failed_stage, stage);
    assert_non_null(strstr(halo_errmsg(), "boom at batch"));
    static const char *const names[3] = {"sample", "fetch", "copy"};
    assert_non_null(strstr(halo_errmsg(), names[stage]));
    assert_int_equal(halo_pipe_close(p), 0);
    /* every stage ran exactly the batches whose slots were given: up to fail_batch + depth,
     * the same on every rank, so collectives inside the stages stay matched */
    long want = depth == 0 ? fail_batch + 1 : fail_batch + depth + 1;
    for (int s = 0; s < 3; s++) {
        assert_int_equal(atomic_load(&r->f.calls[s]), want);
    }
    /* later stages still ran on the failed batch (with it->rc set) */
    assert_int_equal(atomic_load(&r->f.saw_failed), stage < 2 ? 1 : 0);
    /* nothing runs after close: every thread is gone */
    long before = atomic_load(&r->f.calls[0]);
    sleep_us(10000);
    assert_int_equal(atomic_load(&r->f.calls[0]), before);
}

static void error_in_any_stage_reaches_the_caller_and_shutdown_is_clean(void **state)
{
    (void)state;
    fake_run *r = HALO_NEW(fake_run, 1);
    static const int depths[] = {0, 1, 4};
    for (size_t d = 0; d < 3; d++) {
        for (int s = 0; s < 3; s++) {
            run_failing(r, depths[d], s, 17);
            run_failing(r, depths[d], s, 0);
        }
    }
    halo_free(r);
}

static void close_before_the_first_batch_runs_no_stage(void **state)
{
    (void)state;
    fake_run *r = HALO_NEW(fake_run, 1);
    fake_setup(r, 4, 1, 2, 100, 0);
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&r->o, &p), 0);
    sleep_us(5000);
    assert_int_equal(halo_pipe_close(p), 0);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(atomic_load(&r->f.calls[s]), 0);
    }
    /* closing midway: the workers finish exactly the released batches + depth + 1 */
    fake_setup(r, 3, 2, 2, 100, 3);
    assert_int_equal(halo_pipe_start(&r->o, &p), 0);
    halo_pipe_item *it;
    for (int b = 0; b < 10; b++) {
        assert_int_equal(halo_pipe_next(p, &it), 0);
        halo_pipe_release(p, it);
    }
    assert_int_equal(halo_pipe_close(p), 0);
    assert_int_equal(atomic_load(&r->f.calls[2]), 10 + 3 + 1);
    halo_free(r);
}

static void bad_options_are_refused(void **state)
{
    (void)state;
    fake_run *r = HALO_NEW(fake_run, 1);
    halo_pipe *p = (halo_pipe *)r;
    fake_setup(r, 65, 1, 1, 10, 0);
    assert_int_equal(halo_pipe_start(&r->o, &p), HALO_EUSAGE);
    assert_null(p);
    fake_setup(r, 2, 1, 1, 10, 0);
    r->o.stages[1].threads = 0;
    assert_int_equal(halo_pipe_start(&r->o, &p), HALO_EUSAGE);
    fake_setup(r, 2, 1, 1, 10, 0);
    r->o.nstages = 0;
    assert_int_equal(halo_pipe_start(&r->o, &p), HALO_EUSAGE);
    assert_int_equal(halo_pipe_close(NULL), 0);
    halo_free(r);
}

/* ---------------------------------------------------------------- Lua on a worker thread */

/* A stage that calls the pipeline hook of its own state of a policy. */
typedef struct lua_arg {
    halo_policy *pol; /* this thread's state */
} lua_arg;

static int lua_stage(void *arg, halo_pipe_item *it)
{
    lua_arg *a = arg;
    halo_policy_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.rank = 0;
    ctx.ranks = 1;
    ctx.batch = it->batch;
    int depth, threads;
    int rc = halo_policy_pipeline(a->pol, &ctx, &depth, &threads);
    if (rc == 0) {
        ((fake_slot *)it->data)->v = depth;
    }
    return rc;
}

static void lua_error_on_a_worker_thread_reaches_the_caller(void **state)
{
    (void)state;
    char dir[] = "/tmp/halo-pipe-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/bad.lua", dir);
    const char *src = "return {\n"
                      "  pipeline = function(ctx)\n"
                      "    if ctx.batch == 5 then error(\"no depth for batch five\") end\n"
                      "    return { depth = 2 }\n"
                      "  end,\n"
                      "}\n";
    assert_int_equal(halo_file_write_all(path, src, strlen(src)), 0);
    halo_policy_opts po = {.path = path, .rank = 0};
    halo_policy *pol, *worker;
    assert_int_equal(halo_policy_open(&po, &pol), 0);
    assert_int_equal(halo_policy_open_worker(pol, &worker), 0);
    lua_arg la = {worker};
    void *args[1] = {&la};
    fake_slot slots[3];
    void *slotp[3] = {&slots[0], &slots[1], &slots[2]};
    halo_pipe_opts o = {.depth = 2, .queue_len = 1, .batches = 20, .nstages = 1, .slots = slotp};
    o.stages[0] = (halo_pipe_stage){"fetch", lua_stage, 1, args};
    halo_pipe *p;
    assert_int_equal(halo_pipe_start(&o, &p), 0);
    halo_pipe_item *it;
    int rc, n = 0;
    while ((rc = halo_pipe_next(p, &it)) == 0) {
        assert_int_equal(((fake_slot *)it->data)->v, 2);
        halo_pipe_release(p, it);
        n++;
    }
    assert_int_equal(rc, HALO_ELUA);
    assert_int_equal(n, 5);
    /* the policy's message, with file and line, made it across threads */
    assert_non_null(strstr(halo_errmsg(), "bad.lua:3"));
    assert_non_null(strstr(halo_errmsg(), "no depth for batch five"));
    assert_int_equal(halo_pipe_close(p), 0);
    halo_policy_close(worker);
    halo_policy_close(pol);
    unlink(path);
    rmdir(dir);
}

/* ---------------------------------------------------------------- timeline */

static void timeline_round_trips_through_its_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/halo-pipe-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/tl.jsonl", dir);
    halo_timeline tl;
    halo_timeline_init(&tl, 100.0);
    for (int b = 0; b < 3000; b++) {
        halo_timeline_add(&tl, b % 4, 1, b, b % 2 ? "fetch" : "compute", b % 3, 100.0 + b,
                          100.5 + b);
    }
    assert_int_equal(halo_timeline_write(path, tl.ev, tl.n), 0);
    halo_timeline_event *ev;
    int64_t n;
    assert_int_equal(halo_timeline_read(path, &ev, &n), 0);
    assert_int_equal(n, 3000);
    for (int b = 0; b < 3000; b++) {
        assert_int_equal(ev[b].rank, b % 4);
        assert_int_equal(ev[b].epoch, 1);
        assert_int_equal(ev[b].batch, b);
        assert_int_equal(ev[b].thread, b % 3);
        assert_string_equal(ev[b].stage, b % 2 ? "fetch" : "compute");
        assert_true(ev[b].start == (double)b && ev[b].end == b + 0.5);
    }
    halo_free(ev);
    halo_timeline_free(&tl);

    const char *bad = "{\"rank\":0,\"batch\":1,\"stage\":\"x\",\"start\":1,\"end\":2}\n"
                      "\n"
                      "{\"rank\":0,\"batch\":2,\"stage\":\"x\",\"start\":3,\"end\":2}\n";
    assert_int_equal(halo_file_write_all(path, bad, strlen(bad)), 0);
    assert_int_equal(halo_timeline_read(path, &ev, &n), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "tl.jsonl:3"));
    const char *bad2 = "{\"rank\":0,\"batch\":1,\"stage\":\"x\",\"start\":1}\n";
    assert_int_equal(halo_file_write_all(path, bad2, strlen(bad2)), 0);
    assert_int_equal(halo_timeline_read(path, &ev, &n), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "tl.jsonl:1"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_of_one_delivers_items_in_order_from_many_producers),
        cmocka_unit_test(queue_close_ends_waiting_pops_and_refuses_pushes),
        cmocka_unit_test(pipeline_gives_every_batch_once_in_order_at_every_depth),
        cmocka_unit_test(pipeline_runs_ahead_by_exactly_its_depth),
        cmocka_unit_test(pipeline_of_tiny_batches_survives_random_delays_everywhere),
        cmocka_unit_test(error_in_any_stage_reaches_the_caller_and_shutdown_is_clean),
        cmocka_unit_test(close_before_the_first_batch_runs_no_stage),
        cmocka_unit_test(bad_options_are_refused),
        cmocka_unit_test(lua_error_on_a_worker_thread_reaches_the_caller),
        cmocka_unit_test(timeline_round_trips_through_its_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
