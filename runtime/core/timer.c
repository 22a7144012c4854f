/* Monotonic clock and per-thread CPU time. */
#include "core/timer.h"

#include <errno.h>
#include <time.h>

double halo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void halo_sleep_s(double s)
{
    if (!(s > 0)) {
        return;
    }
    time_t whole = (time_t)s;
    struct timespec ts = {whole, (long)((s - (double)whole) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

double halo_thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
        return 0;
    }
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The calling thread's polling CPU seconds (halo_thread_wait_cpu_add). */
static _Thread_local double wait_cpu;

double halo_thread_wait_cpu(void)
{
    return wait_cpu;
}

void halo_thread_wait_cpu_add(double s)
{
    wait_cpu += s;
}
