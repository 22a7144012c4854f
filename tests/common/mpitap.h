/* The harness of the MPI tests: expectations counted per rank, combined over ranks at the end of
 * each test, one TAP line ("ok N - name" / "not ok N - name") printed by rank 0. Include it once,
 * from the test's only translation unit; set comm, rank and ranks after halo_comm_init. */
#ifndef HALO_TEST_MPITAP_H
#define HALO_TEST_MPITAP_H

#include "comm/comm.h"
#include "core/err.h"

#include <stdint.h>
#include <stdio.h>

static halo_comm *comm;      /* the world channel */
static int rank, ranks;      /* this rank and the rank count */
static int failures;         /* failed expectations on this rank in the current test */
static char first_fail[512]; /* where the first of them was */
static int test_no;          /* TAP number of the last test reported */
static int total_failed;     /* tests that failed on some rank */

/* Counts a failed expectation on this rank (the test goes on). */
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (failures++ == 0) {                                                                 \
                snprintf(first_fail, sizeof first_fail, "%s:%d: %s", __FILE__, __LINE__, #cond);   \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* A library call that must succeed on every rank; on failure the job ends (invariant 5). */
#define MUST(call)                                                                                 \
    do {                                                                                           \
        int must_rc_ = (call);                                                                     \
        if (must_rc_ < 0) {                                                                        \
            halo_error_prefix(must_rc_, "%s:%d: %s", __FILE__, __LINE__, #call);                   \
            halo_comm_fail(comm, must_rc_);                                                        \
        }                                                                                          \
    } while (0)

/* Combines the ranks' failures and prints one TAP line on rank 0. */
static void report(const char *name)
{
    if (failures > 0) {
        printf("# rank %d: %d failed, first: %s\n", rank, failures, first_fail);
        fflush(stdout);
    }
    int64_t f = failures;
    MUST(halo_comm_allreduce_sum_i64(comm, &f, 1));
    test_no++;
    if (rank == 0) {
        printf("%s %d - %s\n", f == 0 ? "ok" : "not ok", test_no, name);
        fflush(stdout);
    }
    total_failed += f > 0;
    failures = 0;
    first_fail[0] = '\0';
}

#endif
