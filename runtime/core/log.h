/* Logging to stderr with the "halo:" prefix, the rank on distributed runs, and verbosity. */
#ifndef HALO_LOG_H
#define HALO_LOG_H

enum { HALO_LOG_QUIET = 0, HALO_LOG_NORMAL = 1, HALO_LOG_VERBOSE = 2 };

/* Sets the verbosity (default HALO_LOG_NORMAL) and the rank shown in messages (-1: none). */
void halo_log_set_level(int level);
int halo_log_level(void);
void halo_log_set_rank(int rank, int ranks);
int halo_log_rank(void);
/* This process's rank as its launcher (mpirun, a PMI/PMIx launcher) set it in the environment,
 * known before MPI starts; -1 when not launched so. */
int halo_log_launch_rank(void);

/* Informational line, shown at NORMAL and above (only rank 0 prints on distributed runs). */
void halo_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Detail shown at VERBOSE. */
void halo_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One-line notice on every rank that calls it ("halo: notice: ..."), shown unless QUIET. */
void halo_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warning, always shown. */
void halo_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "halo: error: <msg>" (with the rank when distributed). */
void halo_error_print(const char *msg);

#endif
