/* Private to sim/engine.c and sim/cost.c: the simulator's state (batch records, threads, cores,
 * NICs, events) shared by the discrete-event engine and the cost model that fills each batch's
 * record with stage works and exchanges. Not an interface: nothing outside sim/ includes it. */
#ifndef HALO_SIM_COST_INTERNAL_H
#define HALO_SIM_COST_INTERNAL_H

#include "core/rng.h"
#include "sim/cost.h"

/* Bytes per parameter in the optimiser's rate: profile.adam_bw counts bytes of parameters (4
 * per parameter; halo calibrate and bench_gpu time params * 4 bytes), not the 28 bytes Adam
 * moves per parameter (it reads p, g, m, v and writes p, m, v: hence the shipped estimates of
 * memory bandwidth / 7). */
#define ADAM_BYTES 4.0
/* Bytes of one id in a row request (int32). */
#define ID_BYTES 4
/* Bytes of an embedding gradient record's header (runtime/embed: key, id, position). */
#define EMBED_REC_HDR 16.0
/* Bytes of one CSR offset and of one edge's source number in a block (int64, int32). */
#define INDPTR_BYTES 8
#define INDEX_BYTES 4
/* Most exchanges of one batch: request + reply per layer, ids + rows, the allreduce, then the
 * embeddings' ids, rows and gradients. */
#define MAX_XCHG (2 * HALO_MAX_LAYERS + 6)
/* Most steps of one stage's program (sampling: 4 per layer). */
#define MAX_STEPS (4 * HALO_MAX_LAYERS + 4)

/* Stages, in the order of a batch; their names are the runtime's timeline names. */
enum { STAGE_SAMPLE, STAGE_FETCH, STAGE_COPY, STAGE_COMPUTE, STAGE_ALLREDUCE, NSTAGES };

/* Threads of a rank: the trainer, the fetch thread, then the sampling threads. */
enum { TH_TRAINER = 0, TH_FETCH = 1, TH_SAMPLER = 2 };

/* Kinds of a stage program's steps. */
enum { STEP_CPU, STEP_DELAY, STEP_XCHG };
#define STEP_NO_CLOCK (-1)

/* Events of the timeline (the ends of CPU tasks and transfers are kept apart, one key per
 * machine and NIC resource). */
enum { EV_THREAD, EV_XSTART, EV_ARMID };

/* One step of a stage program. */
typedef struct step {
    int kind;    /* STEP_* */
    int threads; /* STEP_CPU: threads the work is spread over */
    int xi;      /* STEP_XCHG: exchange number within the batch; STEP_CPU: STEP_NO_CLOCK keeps
                    its CPU off every stage's CPU clock (as the runtime's clocks leave it) */
    double work; /* STEP_CPU: core-seconds; STEP_DELAY: seconds */
    double pen;  /* STEP_CPU: its slow-down per trainer process beyond the cores (< 0: its
                    stage's; sim/engine_cpu.c) */
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
    double fb_pen;                 /* fb's slow-down per trainer process beyond the cores: its
                                      GEMMs' and the rest's measured ones, weighted by their
                                      seconds */
    double overhead;               /* fixed per step */
    double adam;                   /* optimiser (GPU: with its two PCIe copies) */
    double ar_pack;                /* CPU: the gradients scaled into the allreduce's buffer and
                                      copied back after it (the allreduce stage's own passes) */
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
    int keep;              /* its CPU task just ended: a CPU step it starts now keeps the core */
    int spinning;          /* waiting in an exchange (polling for its messages) */
    int wake;              /* 1: it slept an emulated delay, whose wake-up's CPU (wake_s) runs
                              before its next step; 2: that CPU runs */
    double cpu_end;        /* when its last CPU task ended (a wake-up's CPU not counted) */
    double idle;           /* its seconds off the CPU from the epoch's start to cpu_end's gap */
    double idle_mark[2];   /* `idle` when its last sampling (0) and compute or Adam (1) step
                              ended: a step of that kind starting now has been off the CPU
                              idle + (now - cpu_end) - idle_mark since, what its wake_*
                              penalty is priced on */
    halo_rng jit;          /* its stream of cpu.jitter's draws (keyed by the thread) */
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
    double cpu_s[3];   /* core-seconds per thread of its CPU steps: sampling, fetch, trainer
                          (compute, Adam), as the runtime's *_cpu_s fields measure them */
} sim_rank;

/* A CPU-bound task on a machine. */
typedef struct cpu_task {
    double rem;  /* seconds it still needs at full speed on its cores */
    int threads; /* cores it runs on (its threads, at most the machine's cores) */
    int held;    /* cores it holds now (0: queued for them) */
    double since;/* when it was started (queued from then until it holds its cores) */
    int thread;  /* global number of the simulated thread that waits for it */
    double got;  /* when it got its cores (its time slice runs from then) */
    double pen;  /* its slow-down per trainer process beyond the cores (sim/engine_cpu.c) */
    int stage;   /* the stage whose CPU clock it runs on (-1: none) */
    int resumed; /* it was preempted at the end of a time slice: getting its cores back goes
                    on with its step (no stage starts) */
} cpu_task;

/* A machine's cores, served in arrival order: a task that gets its cores keeps them to its
 * end at full speed (the scheduler's time slices are long against a step, and threads that
 * wait in an exchange yield their core); the tasks behind it queue. */
typedef struct sim_machine {
    double t;       /* real time the tasks' rem was brought up to */
    int held;       /* cores held by running tasks */
    int handoff;    /* its ended tasks' threads are going on: the queue waits for them */
    int spinning;   /* its threads waiting in an exchange: they poll, taking CPU from the
                       running tasks when its threads outnumber its cores (cpu.poll_frac) */
    int n;          /* tasks, in arrival order */
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
    long busy_threads;       /* busy threads per machine: its trainers x (trainer, fetch thread
                                and samplers at depth >= 1; the trainer alone at depth 0) */
    int oversub_threads;     /* busy_threads outnumber the machine's cores */
    double pen_gather;       /* oversub_penalty: the slow-down per trainer process beyond the
                                cores of the compute's non-GEMM and the optimiser's work, while
                                those processes have work (sim/engine_cpu.c) */
    double pen_gemm;         /* the same with oversub_gemm: the compute's GEMMs */
    double warm_table;       /* the rank's feature bytes for the fetch's warm rate
                                (halo_sim_cost_fetch_bw; 0 with --netem: cold) */
    double fetch_rate;       /* bytes/s of the fetch's rows in this run: halo_sim_cost_kept_bw
                                when each trainer process keeps a core and no emulated delay
                                sleeps, else halo_sim_cost_fetch_bw(warm_table) */
    double pen_fetch;        /* the same for the fetch's work: oversub_penalty, or with a warm
                                rate in the profile, between it and oversub_warm by the size of
                                the rank's table (halo_sim_cost_warm_share) */
    double pen_sample;       /* the same with oversub_sample: the sampling */
    double corun_slow;       /* 1 + corun_sample when the busy threads are as many as the cores
                                or more, else 1: the sampling's slow-down against alone */
    int netem;               /* emulated network on */
    double wake_s;           /* CPU of a thread that slept an emulated delay (netem.sleep_cpu_s;
                                0 without --netem) */
    double lat_local;        /* latency between ranks of one machine: shm_lat_s, or
                              * oversub_lat_s when its ranks outnumber its cores */
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
    cpu_task *preempted;     /* [npreempted_cap] scratch: tasks at the end of their slice */
    int npreempted_cap;      /* its capacity */
    double *s_out, *s_in;    /* [P] scratch: inter-machine bytes out / in of an exchange */
    double *s_intra;         /* [P] its largest shm flow */
    double *s_tot_out;       /* [P] all bytes out */
    double *s_tot_in;        /* [P] all bytes in */
    double *s_msg_out;       /* [P] messages sent */
    double *s_msg_in;        /* [P] messages received */
};

/* ---- the cost model (sim/cost.c), called by the engine ---- */

/* Checks the options against the profile (one-line errors, HALO_EUSAGE). */
int halo_sim_cost_check_opts(const halo_sim_cost_opts *o);
/* Fills the model's per-run constants of c (count all-to-all, allreduce parts, netem). */
void halo_sim_cost_setup(halo_sim_cost *c);
/* Turns every rank's counted work of one batch into the record's stage works and exchanges. */
void halo_sim_cost_build_batch(halo_sim_cost *c, brec *r, const halo_sim_work *w);

/* engine_heap.c: schedules an event at time t (a binary heap ordered by time, then by when it was
 * scheduled, so the order is deterministic) */
void halo_sim_ev_push(halo_sim_cost *c, double t, int kind, int id, int64_t batch);
/* engine_heap.c: takes the earliest event */
sim_event halo_sim_ev_pop(halo_sim_cost *c);
/* engine_heap.c: sets resource i's next end to t (INFINITY: none) and restores its heap */
void halo_sim_res_set(halo_sim_cost *c, int i, double t);

/* ---- engine_cpu.c: the cores of the timeline (docs/sim-model.md "Contention for cores") */

/* Brings m's running tasks' remaining seconds up to now. */
void halo_sim_cpu_advance(halo_sim_cost *c, sim_machine *m);
/* Gives m's free cores to its queued tasks in arrival order. */
void halo_sim_cpu_assign(halo_sim_cost *c, sim_machine *m);
/* Sets the time of machine mi's next event (a task's end, or a time slice's). */
void halo_sim_cpu_resched(halo_sim_cost *c, int mi);
/* At the end of time slices: running tasks that had theirs while others queue queue again. */
void halo_sim_cpu_preempt(halo_sim_cost *c, sim_machine *m);
/* Which wake_* curve a CPU step of `stage` pays: 0 the sampling's, 1 the compute's (Adam's
 * too), -1 none (the fetch's rates are measured on emptied caches already). */
int halo_sim_wake_kind(int stage);
/* Starts `work` core-seconds on `threads` threads for simulated thread tid, with `pen` its
 * slow-down while the machine is crowded (< 0: its stage's kind of work's); a sampling or
 * compute step's work first grows by its wake_* slow-down (docs/sim-model.md, Back from a
 * wait). */
void halo_sim_cpu_start(halo_sim_cost *c, int tid, double work, int threads, double pen);
/* 1 while the machine's trainer processes with CPU work outnumber its cores, else 0. */
double halo_sim_cpu_crowded(const halo_sim_cost *c, const sim_machine *m);

/* How many times slower task k runs than alone: its penalty paid while crowded (0 or 1). */
static inline double halo_sim_task_slow(const cpu_task *k, double crowded)
{
    return 1.0 + k->pen * crowded;
}

#endif
