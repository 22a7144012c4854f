/* Error codes and messages: every fallible halo function returns 0 or a negative HALO_E code. */
#ifndef HALO_ERR_H
#define HALO_ERR_H

#include <stdarg.h>

/* Error codes. Bad input (files, data) maps to exit 1, bad usage to exit 2. */
enum {
    HALO_OK = 0,
    HALO_EUSAGE = -1,  /* bad command line or API misuse (exit 2) */
    HALO_EINPUT = -2,  /* malformed or inconsistent input data (exit 1) */
    HALO_EIO = -3,     /* operating-system I/O failure */
    HALO_ENOMEM = -4,  /* allocation failed where the caller can recover */
    HALO_EMPI = -5,    /* an MPI call failed or a peer failed */
    HALO_ECUDA = -6,   /* CUDA / cuBLAS failure, or no GPU where one was required */
    HALO_ELUA = -7,    /* a policy failed (syntax, runtime, budget, validation) */
    HALO_EMETIS = -8,  /* METIS returned an error */
    HALO_ESTATE = -9,  /* internal invariant violated */
};

/* Records a formatted message ("where: what") for the current thread and returns code. */
int halo_errorf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int halo_verrorf(int code, const char *fmt, va_list ap);
/* Prefixes the current message with "prefix: " (adds context on the way up), unless it already
 * starts with that prefix (no "--fanouts: --fanouts: ..."). */
int halo_error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message of the last error on this thread ("" when none). */
const char *halo_errmsg(void);
/* Clears the last error of this thread. */
void halo_error_clear(void);
/* Short name of a code ("bad input", "I/O error", ...). */
const char *halo_strerror(int code);
/* Process exit status for a code: 0 ok, 2 usage, 1 otherwise. */
int halo_exit_code(int code);

/* Propagates a negative return code to the caller. */
#define HALO_CHECK(call)                                                                           \
    do {                                                                                           \
        int halo_rc_ = (call);                                                                     \
        if (halo_rc_ < 0) {                                                                        \
            return halo_rc_;                                                                       \
        }                                                                                          \
    } while (0)

/* Sets rc and jumps to the function's single cleanup label `fail` on error. */
#define HALO_TRY(call)                                                                             \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (rc < 0) {                                                                              \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#endif
