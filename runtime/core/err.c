/* Thread-local error message store behind halo_errorf(). */
#include "core/err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char halo_msg[1024];

int halo_verrorf(int code, const char *fmt, va_list ap)
{
    vsnprintf(halo_msg, sizeof halo_msg, fmt, ap);
    return code;
}

int halo_errorf(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    halo_verrorf(code, fmt, ap);
    va_end(ap);
    return code;
}

int halo_error_prefix(int code, const char *fmt, ...)
{
    if (code >= 0) {
        return code; /* nothing failed: no message to prefix */
    }
    char prefix[512];
    char old[sizeof halo_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t n = strlen(prefix);
    /* A message that already starts with this prefix ("--fanouts: bad list") keeps one copy. */
    if (n > 0 && strncmp(halo_msg, prefix, n) == 0 && halo_msg[n] == ':' &&
        halo_msg[n + 1] == ' ') {
        return code;
    }
    memcpy(old, halo_msg, sizeof old);
    /* prefix + ": " + old, truncated to the buffer. */
    memcpy(halo_msg, prefix, n);
    if (n + 2 < sizeof halo_msg) {
        halo_msg[n++] = ':';
        halo_msg[n++] = ' ';
    }
    size_t rest = strlen(old);
    if (rest > sizeof halo_msg - 1 - n) {
        rest = sizeof halo_msg - 1 - n;
    }
    memcpy(halo_msg + n, old, rest);
    halo_msg[n + rest] = '\0';
    return code;
}

const char *halo_errmsg(void)
{
    return halo_msg;
}

void halo_error_clear(void)
{
    halo_msg[0] = '\0';
}

const char *halo_strerror(int code)
{
    switch (code) {
    case HALO_OK: return "ok";
    case HALO_EUSAGE: return "bad usage";
    case HALO_EINPUT: return "bad input";
    case HALO_EIO: return "I/O error";
    case HALO_ENOMEM: return "out of memory";
    case HALO_EMPI: return "MPI error";
    case HALO_ECUDA: return "CUDA error";
    case HALO_ELUA: return "policy error";
    case HALO_EMETIS: return "METIS error";
    case HALO_ESTATE: return "internal error";
    default: return "unknown error";
    }
}

int halo_exit_code(int code)
{
    if (code == HALO_OK) {
        return 0;
    }
    return code == HALO_EUSAGE ? 2 : 1;
}
