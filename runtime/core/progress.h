/* Progress reporting: a bar on a terminal for work longer than a second, plain log lines
 * (every 10%) otherwise, nothing at QUIET. */
#ifndef HALO_PROGRESS_H
#define HALO_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct halo_progress {
    const char *label; /* what is being done */
    uint64_t total;    /* units of work, 0 if unknown */
    double start;      /* halo_now() at begin */
    double last;       /* last time something was printed */
    int last_decile;   /* last 10% step logged (non-terminal) */
    bool tty;          /* stderr is a terminal */
    bool drawn;        /* a bar is on screen */
} halo_progress;

void halo_progress_begin(halo_progress *p, const char *label, uint64_t total);
void halo_progress_update(halo_progress *p, uint64_t done);
void halo_progress_end(halo_progress *p);

#endif
