/* Logging implementation: one fprintf per line so ranks do not interleave mid-line. */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int log_level = HALO_LOG_NORMAL;
static int log_rank = -1;
static int log_ranks = 0;

void halo_log_set_level(int level)
{
    log_level = level;
}

int halo_log_level(void)
{
    return log_level;
}

void halo_log_set_rank(int rank, int ranks)
{
    log_rank = rank;
    log_ranks = ranks;
}

int halo_log_rank(void)
{
    return log_rank;
}

int halo_log_launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && v[0] != '\0') {
            return atoi(v);
        }
    }
    return -1;
}

static void log_v(const char *kind, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_rank >= 0 && log_ranks > 1) {
        fprintf(stderr, "halo[%d]: %s%s\n", log_rank, kind, msg);
    } else {
        fprintf(stderr, "halo: %s%s\n", kind, msg);
    }
}

void halo_info(const char *fmt, ...)
{
    if (log_level < HALO_LOG_NORMAL || log_rank > 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    log_v("", fmt, ap);
    va_end(ap);
}

void halo_debug(const char *fmt, ...)
{
    if (log_level < HALO_LOG_VERBOSE) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    log_v("", fmt, ap);
    va_end(ap);
}

void halo_notice(const char *fmt, ...)
{
    if (log_level < HALO_LOG_NORMAL) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    log_v("notice: ", fmt, ap);
    va_end(ap);
}

void halo_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v("warning: ", fmt, ap);
    va_end(ap);
}

void halo_error_print(const char *msg)
{
    if (log_rank >= 0 && log_ranks > 1) {
        fprintf(stderr, "halo: error: rank %d: %s\n", log_rank, msg);
    } else {
        fprintf(stderr, "halo: error: %s\n", msg);
    }
    fflush(stderr);
}
