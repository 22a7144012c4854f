/* Monotonic wall-clock time. */
#ifndef HALO_TIMER_H
#define HALO_TIMER_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double halo_now(void);

#endif
