/* The asynchronous mini-batch pipeline (DistDGLv2): stages that prepare batches b+1..b+k on
 * worker threads while the caller computes batch b, bounded queues between them, clean shutdown,
 * errors carried to the caller's thread; the per-batch timeline of every stage is pipe/timeline.h.
 *
 * Use (one epoch; see docs/pipeline.md):
 *   halo_pipe_opts o = {.depth = k, .batches = nb, .nstages = 2, .slots = slots};
 *   o.stages[0] = (halo_pipe_stage){"sample", sample_fn, threads, sample_args};
 *   o.stages[1] = (halo_pipe_stage){"fetch", fetch_fn, 1, fetch_args};
 *   halo_pipe *p;
 *   HALO_CHECK(halo_pipe_start(&o, &p));
 *   halo_pipe_item *it;
 *   while ((rc = halo_pipe_next(p, &it)) == 0) {   // batch it->batch, data in it->data
 *       ... compute ...
 *       halo_pipe_release(p, it);                  // its slot may now take batch + k + 1
 *   }
 *   halo_pipe_close(p);                            // always; joins every thread
 *
 * Ordering: batch b of a stage with T threads runs on thread b % T, so every rank issues the
 * same sequence of calls on each thread's channel (collectives stay matched); a stage with one
 * thread runs batches strictly in order (the cache's lookups and admissions). Items leave every
 * queue in batch order, whatever the threads' timing.
 *
 * Errors: a stage that fails returns its code; the item carries the first error (code, stage
 * and message, copied from the worker's thread) and later stages still run on it, so a stage
 * that talks to other ranks must make the same collective calls when it fails or when
 * it->rc < 0 (e.g. with no data). halo_pipe_next re-raises the error on the caller's thread;
 * on a distributed run the caller agrees on it at the batch boundary and calls halo_pipe_close,
 * which lets the workers finish exactly the batches whose slots were released (the same on
 * every rank), drains them and joins the threads: no thread, request or collective is left
 * behind.
 *
 * Depth 0 starts no thread: halo_pipe_next runs the stages on the caller's thread with args[0].
 * Threads, queues, the timeline and the helpers use no MPI (the stages bring their channels). */
#ifndef HALO_PIPE_H
#define HALO_PIPE_H

#include <stdint.h>
#include <stdio.h>

/* Most stages of a pipeline. */
#define HALO_PIPE_MAX_STAGES 4
/* Most threads of one stage. */
#define HALO_PIPE_MAX_THREADS 16
/* Deepest pipeline (as the policy API allows). */
#define HALO_PIPE_MAX_DEPTH 64

/* ---- bounded queue ---- */

/* A bounded FIFO of pointers (a ring under one mutex and two condition variables) whose items
 * are numbered 0, 1, 2, ... in the order they enter: a producer puts item `seq` only when every
 * earlier item is in, and a consumer takes item `seq` only when it is at the head, so several
 * threads can share either end and items still leave in order. Capacity >= 1. */
typedef struct halo_pipe_queue halo_pipe_queue;

halo_pipe_queue *halo_pipe_queue_new(int capacity);
/* Frees a queue no thread waits on. */
void halo_pipe_queue_free(halo_pipe_queue *q);
/* Puts item number seq; waits for its turn and for room. 0, or HALO_ESTATE when the queue is
 * closed (the item is not taken). */
int halo_pipe_queue_push(halo_pipe_queue *q, int64_t seq, void *item);
/* Takes item number seq; waits until it is at the head. 0 with *item set, or 1 when the queue
 * is closed and item seq will never come. */
int halo_pipe_queue_pop(halo_pipe_queue *q, int64_t seq, void **item);
/* No more pushes: waiting pops past the last item return 1, waiting pushes HALO_ESTATE. */
void halo_pipe_queue_close(halo_pipe_queue *q);
/* Items in the queue now, and the most it ever held (tests). */
int halo_pipe_queue_len(halo_pipe_queue *q);
int halo_pipe_queue_peak(halo_pipe_queue *q);

/* ---- pipeline ---- */

/* One batch on its way through the stages. The pipeline owns it; stages and the caller read
 * and write data, and read the rest. */
typedef struct halo_pipe_item {
    int64_t batch;                         /* batch number, 0-based */
    void *data;                            /* the caller's slot buffer for this batch */
    int slot;                              /* which slot (index into halo_pipe_opts.slots) */
    int rc;                                /* first error of a stage on this batch, 0 = none */
    int failed_stage;                      /* stage that set rc (-1 none) */
    char msg[1024];                        /* its message, copied from the worker's thread */
    double start[HALO_PIPE_MAX_STAGES];    /* halo_now() when each stage began this batch */
    double end[HALO_PIPE_MAX_STAGES];      /* ... and when it ended */
    int thread[HALO_PIPE_MAX_STAGES];      /* thread of the stage that ran it */
    double cpu[HALO_PIPE_MAX_STAGES];      /* CPU seconds of the stage on its thread, polling
                                              for messages excluded (core/timer.h) */
    double poll[HALO_PIPE_MAX_STAGES];     /* ... and its CPU seconds polling for messages */
    double ready;                          /* when the last stage handed it over */
} halo_pipe_item;

/* A stage function: works on one batch (it->batch, it->data). Returns 0 or a negative HALO_E
 * code with a message (halo_errorf). it->rc < 0 means an earlier stage failed on this batch:
 * a stage with collectives must still make them (with no data). */
typedef int (*halo_pipe_fn)(void *arg, halo_pipe_item *it);

/* One stage. */
typedef struct halo_pipe_stage {
    const char *name;        /* short name for the timeline ("sample", "fetch", "copy") */
    halo_pipe_fn run;        /* called once per batch */
    int threads;             /* worker threads (>= 1; batch b runs on thread b % threads) */
    void *const *args;       /* [threads] argument of each thread's calls (depth 0: args[0]) */
} halo_pipe_stage;

/* How to run a pipeline. Zero-initialise and set what you need. */
typedef struct halo_pipe_opts {
    int depth;               /* batches prepared ahead of the caller: 0 = inline (no thread) */
    int queue_len;           /* capacity of each queue between stages; 0 = depth + 1 */
    int64_t batches;         /* batches to run, 0, 1, ..., batches - 1 */
    int nstages;             /* stages used, 1..HALO_PIPE_MAX_STAGES */
    halo_pipe_stage stages[HALO_PIPE_MAX_STAGES]; /* in order */
    void *const *slots;      /* [halo_pipe_slots(depth)] the caller's per-batch buffers */
    int jitter_us;           /* tests: sleep a random 0..jitter_us us before each stage and in
                                halo_pipe_jitter; 0 = the HALO_PIPE_JITTER_US environment
                                variable, if set */
    uint64_t jitter_seed;    /* keys the random delays (e.g. the rank) */
} halo_pipe_opts;

typedef struct halo_pipe halo_pipe;

/* Slot buffers a pipeline of this depth needs: depth + 1 (one being computed). */
int halo_pipe_slots(int depth);
/* Starts the worker threads (none at depth 0). Local; the threads wait for the first
 * halo_pipe_next before they touch a batch, so a caller can agree on the result with the other
 * ranks first and close the pipeline if any failed. HALO_EUSAGE on bad options, HALO_ESTATE
 * when a thread cannot be started. */
int halo_pipe_start(const halo_pipe_opts *o, halo_pipe **out);
/* The next batch in order: 0 with *it, 1 after the last batch, or the batch's error (negative,
 * message set on this thread, *it still set). */
int halo_pipe_next(halo_pipe *p, halo_pipe_item **it);
/* Gives the item's slot back for batch it->batch + depth + 1. Call it in batch order. */
void halo_pipe_release(halo_pipe *p, halo_pipe_item *it);
/* Stops the pipeline and frees it: the workers finish the batches whose slots were released
 * (so every rank that released the same batches makes the same calls), their items are drained
 * unused, every thread is joined. Returns the code of the first worker error of a drained batch
 * (0 when none) and leaves this thread's message alone (the caller has its answer already).
 * NULL is a no-op. */
int halo_pipe_close(halo_pipe *p);
/* Depth and threads actually used (threads of a stage are capped at the depth). */
int halo_pipe_depth(const halo_pipe *p);
int halo_pipe_threads(const halo_pipe *p, int stage);
/* Sleeps the test delay for (batch, key) when jitter is on (the caller's own stages). */
void halo_pipe_jitter(const halo_pipe *p, int64_t batch, int key);
/* Seconds the caller waited in halo_pipe_next (the part of the preparation not hidden). */
double halo_pipe_wait_s(const halo_pipe *p);

#endif
