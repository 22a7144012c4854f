/* Progress bar / log lines. Cheap to call often: it only looks at the clock. */
#include "core/progress.h"

#include "core/log.h"
#include "core/timer.h"

#include <stdio.h>
#include <unistd.h>

void halo_progress_begin(halo_progress *p, const char *label, uint64_t total)
{
    p->label = label;
    p->total = total;
    p->start = halo_now();
    p->last = p->start;
    p->last_decile = 0;
    p->tty = isatty(2) && halo_log_rank() <= 0;
    p->drawn = false;
}

void halo_progress_update(halo_progress *p, uint64_t done)
{
    if (halo_log_level() < HALO_LOG_NORMAL || halo_log_rank() > 0) {
        return;
    }
    double now = halo_now();
    if (now - p->start < 1.0 || now - p->last < 0.1) {
        return;
    }
    double frac = p->total ? (double)done / (double)p->total : 0.0;
    if (frac > 1.0) {
        frac = 1.0;
    }
    if (p->tty) {
        char bar[31];
        int fill = (int)(frac * 30);
        for (int i = 0; i < 30; i++) {
            bar[i] = i < fill ? '#' : '.';
        }
        bar[30] = '\0';
        double eta = frac > 0 ? (now - p->start) * (1.0 - frac) / frac : 0;
        fprintf(stderr, "\rhalo: %-20s [%s] %5.1f%%  %.0fs left ", p->label, bar, 100 * frac, eta);
        p->drawn = true;
        p->last = now;
    } else {
        int decile = (int)(frac * 10);
        if (decile > p->last_decile) {
            p->last_decile = decile;
            p->last = now;
            fprintf(stderr, "halo: %s: %d%% (%.1fs)\n", p->label, decile * 10, now - p->start);
        }
    }
}

void halo_progress_end(halo_progress *p)
{
    if (p->drawn) {
        fprintf(stderr, "\r%*s\r", 79, "");
    }
    p->drawn = false;
}
