/* The simulator's cores: CPU tasks served in arrival order, each keeping its cores to its end
 * or (cpu.slice_us) to the end of its time slice while others wait, at a speed that more
 * processes than cores, polling threads and shared caches lower (docs/sim-model.md,
 * "Contention for cores"). sim/engine.c runs the rest of the timeline. */
#include "sim/cost_internal.h"

#include "core/mem.h"

#include <math.h>
#include <string.h>

/* Whether task k is a pipelined trainer's compute (or copy), which the pollers leave alone. */
static bool spared(const halo_sim_cost *c, const cpu_task *k)
{
    const sim_thread *t = &c->th[k->thread];
    return c->depth > 0 && t->idx == TH_TRAINER &&
           (t->stage == STAGE_COMPUTE || t->stage == STAGE_COPY);
}

/* Speeds of the running tasks: rate[1] of a pipelined trainer's compute (spared), rate[0] of
 * every other. While tasks queue for the cores, the running ones other than that compute get
 * share_eff of their speed (what halo calibrate measured for more busy threads than cores; 0:
 * not measured, full speed). More trainer processes with work than cores make each task's work
 * itself larger (halo_sim_cpu_crowded). */
static void cpu_rates(const halo_sim_cost *c, const sim_machine *m, double rate[2])
{
    int queued = 0;
    for (int i = 0; i < m->n && !queued; i++) {
        queued = m->task[i].held == 0;
    }
    double eff = queued && c->pf.share_eff > 0 ? c->pf.share_eff : 1.0;
    /* ... a pipelined trainer's compute at full speed: the runtime's trainer computes a batch
       at the pace of its CPU clock while its samplers and fetch thread share what is left
       (docs/sim-model.md; until the sixteenth pass it lost share_eff too, and the compute's
       time of the pipelined runs of held-out seeds 76-78 was 24-48 % long in the signed
       median of each group, its CPU within 7 %) */
    rate[0] = eff;
    rate[1] = 1.0;
    /* threads waiting in exchanges poll (a spin that yields, then short sleeps): with more
       busy threads than cores and every core taken, each takes poll_frac of a core from the
       running tasks (what halo calibrate measures per second a rank waits), at most a fair
       share of the cores between pollers and tasks. In the runtime's pipelined runs of 3-4
       ranks on 2 cores ten threads of sixteen wait at a time and poll a quarter of the
       machine; until the tenth pass (docs/sim-model.md) the pollers took at most poll_frac of
       each core in all, a third of that. */
    if (c->oversub_threads && m->spinning > 0 && (queued || m->held >= c->pf.cores)) {
        double s = m->spinning, fair = s / (s + m->n);
        double lost = s * c->pf.poll_frac / c->pf.cores;
        lost = lost < fair ? lost : fair;
        /* ... from the running tasks other than a pipelined trainer's compute, the same cores
           in all (while only such computes run, from them). Measured, the runtime's trainer
           computes a batch at the pace of its CPU clock (compute_s / compute_cpu_s 1.00-1.03
           in the pipelined runs of 2-4 ranks on 2 cores of seeds 40-41 without emulated
           delays, 1.01-1.24 with them) while its fetch thread and samplers take longer than
           the model's; until the eleventh pass every running task lost the pollers' share
           (the compute's time 26-69 % long there) */
        int held = 0, other = 0;
        for (int i = 0; i < m->n; i++) {
            if (m->task[i].held > 0) {
                held += m->task[i].held;
                other += spared(c, &m->task[i]) ? 0 : m->task[i].held;
            }
        }
        double lost_other = other > 0 ? lost * held / other : lost;
        lost_other = other > 0 && lost_other > 0.9 ? 0.9 : lost_other;
        rate[0] = eff * (1.0 - lost_other);
        rate[1] = 1.0 - (other > 0 ? 0 : lost);
    }
}

/* Whether the machine is crowded: 1 while its trainer processes with CPU work now (a task
 * running or queued) outnumber its cores, else 0. Its tasks then pay their penalties
 * (cpu.oversub_*): a switch between address spaces refills caches and TLBs, which halo
 * calibrate measures with twice as many busy single-threaded processes as cores. A task
 * refills them once per turn on a core however many others ran there since, and with one
 * process more than the cores every core already alternates between processes (the scheduler
 * moves threads between cores), so the penalty is whole from there on: more processes make a
 * task wait longer, which the queue models, not slower. (Until the tenth pass it grew linearly
 * from the cores to twice as many: the sampling and fetch CPU of pipelined 3-rank runs on 2
 * cores were then 30 and 12 % over the model in the median, those of 4-rank runs 17 and 13 %.)
 * A process whose threads all wait in an exchange or for its pipeline has no task and no
 * working set being reloaded, so a short step between exchanges slows less than a long one.
 * Threads of one process share its address space and are not counted. */
double halo_sim_cpu_crowded(const halo_sim_cost *c, const sim_machine *m)
{
    int ranks = 0;
    for (int i = 0; i < m->n; i++) {
        int r = c->th[m->task[i].thread].rank, seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = c->th[m->task[j].thread].rank == r;
        }
        ranks += !seen;
    }
    return ranks > c->pf.cores ? 1.0 : 0.0;
}

/* Brings the running tasks' remaining seconds up to now, and their threads' CPU clocks. */
void halo_sim_cpu_advance(halo_sim_cost *c, sim_machine *m)
{
    double dt = c->now - m->t, rate[2];
    double b = dt > 0 ? halo_sim_cpu_crowded(c, m) : 0.0;
    if (dt > 0) {
        cpu_rates(c, m, rate);
    }
    for (int i = 0; i < m->n && dt > 0; i++) {
        cpu_task *k = &m->task[i];
        if (k->held == 0) {
            continue;
        }
        double done = dt * rate[spared(c, k)];
        double slow = halo_sim_task_slow(k, b), did = done / slow;
        if (k->stage >= 0) { /* the thread's clock: what it did, at the slow-down it had */
            c->rk[c->th[k->thread].rank].cpu_s[k->stage] += (did < k->rem ? did : k->rem) * slow;
        }
        k->rem -= did;
    }
    m->t = c->now;
}

/* Gives the free cores to the queued tasks in arrival order (the first that does not fit
 * waits, and the ones behind it). A thread whose task gets its cores now after queueing at
 * the start of its stage starts that stage now (the runtime's stage timers start when the
 * thread runs; the trainer's wait for a core is pipeline wait); Adam after the allreduce
 * likewise ends the allreduce when it gets its core (the thread waited in the collective). */
void halo_sim_cpu_assign(halo_sim_cost *c, sim_machine *m)
{
    for (int i = 0; i < m->n; i++) {
        cpu_task *k = &m->task[i];
        if (k->held > 0) {
            continue;
        }
        if (m->held + k->threads > c->pf.cores) {
            return;
        }
        k->held = k->threads;
        m->held += k->threads;
        k->got = c->now;
        sim_thread *t = &c->th[k->thread];
        if (k->resumed || k->since >= c->now || t->wake == 2 ||
            t->steps[t->pc].kind != STEP_CPU) {
            continue; /* did not queue, or CPU work of an exchange (its stage's time, a wake-up
                         after an emulated delay included) */
        }
        if (t->pc == 0) {
            if (t->idx == TH_TRAINER && (t->stage == STAGE_COMPUTE || t->stage == STAGE_COPY)) {
                c->rk[t->rank].wait_s += c->now - t->start;
            }
            t->start = c->now;
            t->ar_end = c->now;
        } else if (t->stage == STAGE_ALLREDUCE) {
            t->ar_end = c->now;
        }
    }
}

/* Whether a task of m waits for cores. */
static bool any_queued(const sim_machine *m)
{
    for (int i = 0; i < m->n; i++) {
        if (m->task[i].held == 0) {
            return true;
        }
    }
    return false;
}

/* Sets the time of the machine's next event: a task's end, or (cpu.slice_us, while tasks
 * queue) the end of a running task's time slice. */
void halo_sim_cpu_resched(halo_sim_cost *c, int mi)
{
    sim_machine *m = &c->mc[mi];
    double fmin = INFINITY, qmin = INFINITY, b = halo_sim_cpu_crowded(c, m), rate[2];
    cpu_rates(c, m, rate);
    bool slicing = c->pf.slice_s > 0 && any_queued(m);
    for (int i = 0; i < m->n; i++) {
        const cpu_task *k = &m->task[i];
        if (k->held > 0) {
            double left = k->rem * halo_sim_task_slow(k, b) / rate[spared(c, k)];
            fmin = left < fmin ? left : fmin;
            if (slicing && k->got + c->pf.slice_s < qmin) {
                qmin = k->got + c->pf.slice_s;
            }
        }
    }
    if (fmin == INFINITY) {
        halo_sim_res_set(c, mi, INFINITY);
        return;
    }
    double dt = fmin; /* each task at its own rate */
    double t = c->now + (dt > 0 ? dt : 0);
    halo_sim_res_set(c, mi, qmin < t ? (qmin > c->now ? qmin : c->now) : t);
}

/* The end of time slices (now): running tasks that had their slice while others queue give
 * their cores up and queue behind them (Linux shares a core between runnable threads in
 * slices of a few milliseconds; a task does not keep it to its end). */
void halo_sim_cpu_preempt(halo_sim_cost *c, sim_machine *m)
{
    if (!(c->pf.slice_s > 0) || !any_queued(m)) {
        return;
    }
    int n = m->n, kept = 0, np = 0;
    if (c->npreempted_cap < n) {
        c->npreempted_cap = 2 * n;
        c->preempted = halo_realloc(c->preempted, (size_t)c->npreempted_cap * sizeof(cpu_task));
    }
    cpu_task *moved = c->preempted;
    for (int i = 0; i < n; i++) {
        cpu_task *k = &m->task[i];
        if (k->held > 0 && c->now - k->got >= c->pf.slice_s - 1e-12) {
            m->held -= k->held;
            k->held = 0;
            k->resumed = 1;
            moved[np++] = *k;
        } else {
            m->task[kept++] = *k;
        }
    }
    for (int i = 0; i < np; i++) {
        m->task[kept++] = moved[i];
    }
}

/* The slow-down per trainer process beyond the cores of a CPU task of `stage` (switches
 * between address spaces, caches and TLBs refilled): measured apart for the sampler's work,
 * the GEMMs and the gathers, and the fetch's by the size of its table (halo calibrate's
 * oversubscription probe, by part of its unit). */
static double stage_pen(const halo_sim_cost *c, int stage)
{
    return stage == STAGE_SAMPLE  ? c->pen_sample
           : stage == STAGE_FETCH ? c->pen_fetch
                                  : c->pen_gather;
}

int halo_sim_wake_kind(int stage)
{
    return stage == STAGE_SAMPLE                                ? 0
           : stage == STAGE_COMPUTE || stage == STAGE_ALLREDUCE ? 1
                                                                 : -1;
}

/* A CPU step's factor on its mean time: exp(sigma z - sigma^2 / 2) (mean 1), z the next
 * standard normal of the thread's own counter-based stream, so a run is the same every time. */
static double jitter(double sigma, halo_rng *r)
{
    return sigma > 0 ? exp(sigma * halo_rng_normal(r) - 0.5 * sigma * sigma) : 1.0;
}

/* Starts `work` core-seconds on `threads` threads for simulated thread tid; pen: its
 * slow-down per trainer process beyond the cores (< 0: its stage's). */
void halo_sim_cpu_start(halo_sim_cost *c, int tid, double work, int threads, double pen)
{
    int mi = c->rk[c->th[tid].rank].machine;
    sim_machine *m = &c->mc[mi];
    halo_sim_cpu_advance(c, m);
    if (m->n == m->cap) {
        m->cap = m->cap > 0 ? 2 * m->cap : 16;
        m->task = halo_realloc(m->task, (size_t)m->cap * sizeof *m->task);
    }
    int k = threads < c->pf.cores ? threads : c->pf.cores;
    int st = c->th[tid].stage;
    work *= st == STAGE_SAMPLE ? c->corun_slow : 1.0;
    /* a thread back on a core after waits finds what its last step of the kind left in the
       caches gone (a wake-up's own CPU is part of the wait): a sampling step, a compute's or
       Adam's pays the measured slow-down for the seconds its thread was off the CPU since its
       last step of that kind ended, a compute's by its size (docs/sim-model.md, "Back from a
       wait") */
    sim_thread *th = &c->th[tid];
    if (th->wake != 2) {
        work *= jitter(c->pf.jitter, &th->jit);
        th->idle += c->now - th->cpu_end;
        th->cpu_end = c->now;
        int kind = halo_sim_wake_kind(st);
        if (kind == 0) {
            work *= 1.0 + halo_sim_cost_wake_pen(c->pf.wake_sample, th->idle - th->idle_mark[0]);
        } else if (kind == 1) {
            work *= 1.0 + halo_sim_cost_wake_compute(&c->pf, work, th->idle - th->idle_mark[1]);
        }
    }
    /* the work goes on the thread's own clock as it is done (a compute on k threads: its
       share; more trainer processes than cores: the penalty's caches refilled too), by stage
       as the runtime's CPU clocks count it: Adam after the allreduce is the trainer's compute */
    int clock = st == STAGE_COPY ? -1 : st == STAGE_SAMPLE ? 0 : st == STAGE_FETCH ? 1 : 2;
    if (c->th[tid].wake == 2 && st == STAGE_ALLREDUCE) {
        clock = -1; /* the allreduce's sleep is on no stage's CPU clock in the runtime */
    } else if (th->wake != 2 && th->pc < th->nsteps && th->steps[th->pc].kind == STEP_CPU &&
               th->steps[th->pc].xi == STEP_NO_CLOCK) {
        clock = -1; /* nor are its buffer's passes */
    }
    cpu_task nt = {.rem = work / threads, .threads = k, .since = c->now, .thread = tid,
                   .got = c->now, .pen = pen >= 0 ? pen : stage_pen(c, st), .stage = clock};
    if (c->th[tid].keep) { /* it goes on from its last CPU step on the core it had */
        c->th[tid].keep = 0;
        if (m->held + k <= c->pf.cores) {
            nt.held = k;
            m->held += k;
        }
        memmove(m->task + 1, m->task, (size_t)m->n * sizeof *m->task);
        m->task[0] = nt;
        m->n++;
    } else {
        m->task[m->n++] = nt;
    }
    if (!m->handoff) {
        halo_sim_cpu_assign(c, m);
    }
    halo_sim_cpu_resched(c, mi);
}
