/* Monotonic wall-clock time, and the calling thread's CPU time with its waits set apart. */
#ifndef HALO_TIMER_H
#define HALO_TIMER_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double halo_now(void);

/* Sleeps s seconds (none when s <= 0), the whole of them: a signal's interruption sleeps the
 * rest. */
void halo_sleep_s(double s);

/* CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID). */
double halo_thread_cpu(void);

/* CPU seconds the calling thread has spent polling for messages (comm/'s wait loops add to it):
 * a stage's work is its halo_thread_cpu() difference less this one's, the same measure as the
 * simulator's core-seconds of that stage (docs/sim-model.md). */
double halo_thread_wait_cpu(void);

/* Adds s seconds to the calling thread's polling CPU time. */
void halo_thread_wait_cpu_add(double s);

#endif
